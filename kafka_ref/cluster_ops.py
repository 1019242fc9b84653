"""Awaitable operations on a running Cluster that return values: produce, fetch, groups, shutdown.

``Cluster`` mixes in :class:`ClusterOps`. Each helper does what a test otherwise wires by hand
(a request built, sent, waited for, and its answer picked apart) and returns a frozen value
with ``Errors`` members rather than raw codes.

Produce and fetch go through the broker's request handling (``KafkaApis``: authorization, the
metadata-cache check, fetch sessions aside) by default; ``via="replica_manager"`` calls
``ReplicaManager.append_records`` / ``fetch_messages`` directly, skipping KafkaApis, for manual
tests that want the replica path alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.network.network import Network
    from kafka_ref.server.kafka_broker import KafkaBroker

CLIENT_PRINCIPAL = "User:ANONYMOUS"
OFFSETS_TOPIC = "__consumer_offsets"
# Errors that mean "ask again (maybe elsewhere)" for FindCoordinator / OffsetCommit / OffsetFetch.
_COORDINATOR_RETRY = frozenset({Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                                Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.REQUEST_TIMED_OUT})


@dataclass(frozen=True, slots=True)
class ProduceResult:
    """One partition's answer to a produce: the error, where the batch landed, the log start."""

    error: Errors
    base_offset: int
    log_append_time_ms: int
    log_start_offset: int
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class FetchedRecord:
    """One record a fetch returned, with the leader epoch of the batch that holds it."""

    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One partition's answer to a fetch.

    ``diverging_epoch`` is ``(epoch, end_offset)`` when the leader told a follower its log
    diverges (KIP-320/595 truncation on fetch), else None. ``records`` are every record of the
    returned batches (a fetch from the middle of a batch returns the whole batch).
    ``preferred_read_replica`` is the broker a leader with a replica selector sends a consumer
    to (KIP-392), else None.
    """

    error: Errors
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    diverging_epoch: tuple[int, int] | None
    records: tuple[FetchedRecord, ...]
    preferred_read_replica: int | None = None

    @property
    def values(self) -> list[bytes | None]:
        """The records' values, in offset order."""
        return [r.value for r in self.records]

    @property
    def offsets(self) -> list[int]:
        """The records' offsets."""
        return [r.offset for r in self.records]


@dataclass(frozen=True, slots=True)
class ControlledShutdownResult:
    """What ``await cluster.shutdown_broker(id)`` reports about the controlled shutdown before the stop.

    ``succeeded``: the controller confirmed nothing is left to move (False also when
    ``controlled.shutdown.enable`` is false). ``remaining_partitions``: ZooKeeper mode, the
    partitions the controller's last answer still listed (empty on success); KRaft mode, the
    partitions the controller still had the broker lead when the wait ended. ``attempts``:
    ControlledShutdown requests sent (ZooKeeper mode, at most ``controlled.shutdown.max.retries``);
    KRaft mode asks through its heartbeats and reports 1.
    """

    broker_id: int
    succeeded: bool
    remaining_partitions: frozenset[TopicPartition]
    attempts: int


def _records_of(memory_records: Any) -> tuple[FetchedRecord, ...]:
    return tuple(
        FetchedRecord(offset=r.offset, key=r.key, value=r.value, timestamp=r.timestamp, leader_epoch=batch.partition_leader_epoch)
        for batch in memory_records for r in batch
    )


def _as_simple_records(values: Iterable[bytes | tuple[bytes | None, bytes | None]], key: bytes | None) -> list[Any]:
    from kafka_ref.common.records import SimpleRecord

    out = []
    for v in values:
        out.append(SimpleRecord(v[0], v[1]) if isinstance(v, tuple) else SimpleRecord(key, v))
    return out


class ClusterOps:
    """Awaitable helpers every ``Cluster`` offers (mixed into ``kafka_ref.cluster.Cluster``)."""

    # Provided by Cluster.
    metadata_mode: str
    network: "Network"
    brokers: dict[int, "KafkaBroker"]
    kraft: Any
    base_config: dict[str, Any]
    live_broker_ids: Callable[[], list[int]]

    # ------------------------------------------------------------------ produce and fetch

    async def produce(
        self,
        broker_id: int,
        topic: str,
        partition: int,
        values: Iterable[bytes | tuple[bytes | None, bytes | None]],
        *,
        key: bytes | None = None,
        acks: int = -1,
        timeout_ms: int = 30000,
        via: Literal["apis", "replica_manager"] = "apis",
    ) -> ProduceResult:
        """Append one batch of ``values`` (bytes, or ``(key, value)`` pairs) to ``broker_id`` and await the answer.

        Goes through KafkaApis as a client would (``via="apis"``), or straight to the replica
        manager (``via="replica_manager"``). With acks=-1 the answer comes once the high
        watermark passed the batch (or ``timeout_ms`` of loop time, with REQUEST_TIMED_OUT).
        """
        from kafka_ref.common.records import MemoryRecords

        tp = TopicPartition(topic, partition)
        records = MemoryRecords.with_records(_as_simple_records(values, key))
        if via == "apis":
            from kafka_ref.common.requests.produce import ProduceRequest

            request = ProduceRequest.build(acks=acks, timeout_ms=timeout_ms, records={tp: records})
            response = await self.network.send("client", broker_id, request, timeout_ms + 1000, principal=CLIENT_PRINCIPAL)
            p = response.responses_by_partition()[tp]
            return ProduceResult(Errors.for_code(p.error_code), p.base_offset, p.log_append_time_ms,
                                 p.log_start_offset, p.error_message)
        if via != "replica_manager":
            raise ValueError(f"via={via!r}: use 'apis' or 'replica_manager'")
        done = anyio.Event()
        answer: dict[TopicPartition, Any] = {}

        def callback(statuses: dict[TopicPartition, Any]) -> None:
            answer.update(statuses)
            done.set()

        self.brokers[broker_id].replica_manager.append_records(
            timeout_ms=timeout_ms, required_acks=acks, internal_topics_allowed=False, origin="client",
            entries_per_partition={tp: records}, response_callback=callback,
        )
        with anyio.fail_after((timeout_ms + 1000) / 1000):
            await done.wait()
        s = answer[tp]
        return ProduceResult(s.error, s.base_offset, s.log_append_time_ms, s.log_start_offset, s.error_message)

    async def fetch(
        self,
        broker_id: int,
        topic: str,
        partition: int,
        offset: int,
        *,
        replica_id: int = -1,
        replica_epoch: int = -1,
        current_leader_epoch: int = -1,
        last_fetched_epoch: int = -1,
        log_start_offset: int = -1,
        max_wait_ms: int = 0,
        min_bytes: int = 1,
        max_bytes: int = 1 << 20,
        rack_id: str = "",
        version: int | None = None,
        via: Literal["apis", "replica_manager"] = "apis",
    ) -> FetchResult:
        """Fetch ``topic``-``partition`` from ``offset`` at ``broker_id`` and await the answer.

        ``replica_id=-1`` fetches as a consumer (up to the high watermark); a broker id makes
        it a follower fetch (up to the log end, updating the leader's view of that follower,
        which can expand the ISR and move the high watermark). ``last_fetched_epoch`` lets the
        leader answer a ``diverging_epoch``. ``max_wait_ms > 0`` may park in the fetch purgatory.
        ``version`` is the Fetch version (None: the newest the broker speaks); from v11 the
        request carries ``rack_id`` and a follower serves a consumer too (KIP-392).
        """
        from kafka_ref.common.requests.fetch import FetchPartition

        tp = TopicPartition(topic, partition)
        data = FetchPartition(partition=partition, current_leader_epoch=current_leader_epoch, fetch_offset=offset,
                              last_fetched_epoch=last_fetched_epoch, log_start_offset=log_start_offset,
                              partition_max_bytes=max_bytes)
        if via == "apis":
            from kafka_ref.common.requests.fetch import FetchRequest
            from kafka_ref.network.network import INTER_BROKER_PRINCIPAL

            request = FetchRequest.build(fetch_data={tp: data}, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                                         replica_id=replica_id, replica_epoch=replica_epoch, max_bytes=max_bytes,
                                         rack_id=rack_id, version=version)
            principal = INTER_BROKER_PRINCIPAL if replica_id >= 0 else CLIENT_PRINCIPAL
            # Sent from the test's own node, so network faults between brokers do not apply to it.
            response = await self.network.send("client", broker_id, request, max_wait_ms + 30000, principal=principal)
            if response.error_code != Errors.NONE.code:
                return FetchResult(Errors.for_code(response.error_code), -1, -1, -1, None, ())
            p = response.partition_data(topic, partition)
            assert p is not None, f"the fetch response does not answer {tp}: {response}"
            diverging = (p.diverging_epoch.epoch, p.diverging_epoch.end_offset) if p.diverging_epoch.epoch >= 0 else None
            return FetchResult(Errors.for_code(p.error_code), p.high_watermark, p.last_stable_offset,
                               p.log_start_offset, diverging, _records_of(p.records or ()),
                               p.preferred_read_replica if p.preferred_read_replica >= 0 else None)
        if via != "replica_manager":
            raise ValueError(f"via={via!r}: use 'apis' or 'replica_manager'")
        from kafka_ref.log.fetch_data import FetchIsolation
        from kafka_ref.replica.fetch_params import FetchParams

        from kafka_ref.common.replica_selector import ClientMetadata

        # The client metadata KafkaApis would build for this version (v11+).
        newest = self.brokers[broker_id].config.broker_version.fetch_request_version()
        client_metadata = (ClientMetadata(rack_id, "client", "", CLIENT_PRINCIPAL, "PLAINTEXT")
                           if min(newest, version if version is not None else newest) >= 11 else None)
        params = FetchParams(replica_id=replica_id, replica_epoch=replica_epoch, max_wait_ms=max_wait_ms,
                             min_bytes=min_bytes, max_bytes=max_bytes, isolation=FetchIsolation.of(replica_id, 0),
                             client_metadata=client_metadata)
        done = anyio.Event()
        answer: dict[TopicPartition, Any] = {}

        def callback(results: list[tuple[TopicPartition, Any]]) -> None:
            answer.update(results)
            done.set()

        self.brokers[broker_id].replica_manager.fetch_messages(params, [(tp, data)], callback)
        with anyio.fail_after((max_wait_ms + 30000) / 1000):
            await done.wait()
        r = answer[tp]
        diverging = (r.diverging_epoch.leader_epoch, r.diverging_epoch.end_offset) if r.diverging_epoch is not None else None
        records = _records_of(r.info.records) if r.info is not None else ()
        return FetchResult(r.error, r.high_watermark, r.last_stable_offset, r.leader_log_start_offset, diverging, records,
                           r.preferred_read_replica)

    # ------------------------------------------------------------------ brokers leaving

    async def shutdown_broker(self, broker_id: int) -> ControlledShutdownResult:
        """Kafka's clean shutdown of a broker: controlled shutdown (leadership moved away), then the clean stop.

        Returns the controlled shutdown's outcome (see :class:`ControlledShutdownResult`).
        In manual mode there is no controller to ask: the broker stops cleanly and the result
        says ``succeeded=False`` with no attempts.
        """
        broker = self.brokers[broker_id]
        if self.metadata_mode == "manual":
            broker.shutdown()
            return ControlledShutdownResult(broker_id, False, frozenset(), 0)
        broker.last_controlled_shutdown = None  # type: ignore[attr-defined]
        succeeded = await broker.controlled_shutdown()
        if self.kraft is not None:
            remaining = frozenset() if succeeded else frozenset(self.partitions_led_by(broker_id))  # type: ignore[attr-defined]
            attempts = 1 if broker.config.get("controlled.shutdown.enable") else 0
        else:
            outcome = getattr(broker, "last_controlled_shutdown", None)
            remaining = frozenset(outcome.remaining_partitions) if outcome is not None else frozenset()
            attempts = outcome.attempts if outcome is not None else 0
        broker.shutdown()
        return ControlledShutdownResult(broker_id, bool(succeeded), remaining, attempts)

    async def wait_broker_gone(self, broker_id: int, timeout_ms: float = 60000) -> None:
        """Wait (in loop time) until the cluster noticed broker ``broker_id`` is gone.

        Every live broker's metadata no longer lists it and the controller acted on its loss
        (see ``Cluster.broker_gone``). Use it after ``kill_broker``: in ZooKeeper mode the
        broker's session must expire first (``zookeeper.session.timeout.ms``), in KRaft mode
        its heartbeats must stop for ``broker.session.timeout.ms``.
        """
        await self.wait_until(lambda: self.broker_gone(broker_id), timeout_ms,  # type: ignore[attr-defined]
                              message=f"the cluster to notice broker {broker_id} is gone")

    # ------------------------------------------------------------------ consumer groups

    def coordinator_for(self, group_id: str) -> int | None:
        """The broker coordinating ``group_id``: the leader of its ``__consumer_offsets`` partition.

        The partition is ``abs(java_hash(group_id)) % offsets.topic.num.partitions``. None when
        the offsets topic does not exist yet (it is created on the first FindCoordinator) or
        the partition has no leader.
        """
        from kafka_ref.coordinator.group.group_metadata_manager import partition_for

        if self.metadata_mode == "manual":
            count = self.brokers[self.live_broker_ids()[0]].config.get("offsets.topic.num.partitions")
            p = partition_for(group_id, count)
            for b in self.live_broker_ids():
                state = self.replica_state(b, OFFSETS_TOPIC, p)  # type: ignore[attr-defined]
                if state is not None and state.is_leader:
                    return b
            return None
        assignment = self.topic_assignment(OFFSETS_TOPIC)  # type: ignore[attr-defined]
        if not assignment:
            return None
        leader = self.leader_for(OFFSETS_TOPIC, partition_for(group_id, len(assignment)))  # type: ignore[attr-defined]
        return leader if leader >= 0 else None

    async def _coordinator_request(self, group_id: str, build: Callable[[], Any], timeout_ms: float) -> Any:
        """FindCoordinator, then the request to the coordinator; retried while the coordinator moves or loads."""
        from kafka_ref.common.requests.find_coordinator import CoordinatorType, FindCoordinatorRequest
        from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

        deadline = anyio.current_time() + timeout_ms / 1000
        attempt = 0
        last: Any = None
        while True:
            attempt += 1
            live = self.live_broker_ids()
            try:
                found = await self.network.send("client", live[attempt % len(live)], FindCoordinatorRequest(
                    key_type=CoordinatorType.GROUP, coordinator_keys=(group_id,)), 30000, principal=CLIENT_PRINCIPAL)
                coordinator = found.coordinator(group_id)
                error = Errors.for_code(coordinator.error_code)
                if error is Errors.NONE:
                    last = await self.network.send("client", coordinator.node_id, build(), 30000, principal=CLIENT_PRINCIPAL)
                    if not self._needs_retry(last):
                        return last
                elif error not in _COORDINATOR_RETRY:
                    error.maybe_raise(f"FindCoordinator for group {group_id!r}")
            except (DisconnectException, NetworkTimeoutException):
                pass
            if anyio.current_time() >= deadline:
                if last is not None:
                    return last
                raise TimeoutError(f"no coordinator answered for group {group_id!r} within {timeout_ms} ms of loop time")
            await anyio.sleep(0.1)

    @staticmethod
    def _needs_retry(response: Any) -> bool:
        from kafka_ref.common.requests.offset_commit import OffsetCommitResponse

        if isinstance(response, OffsetCommitResponse):
            codes = set(response.partition_errors().values())
        else:
            codes = {g.error_code for g in response.groups}
            codes |= {p.error_code for g in response.groups for t in g.topics for p in t.partitions}
        return any(Errors.for_code(c) in _COORDINATOR_RETRY for c in codes)

    async def commit_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int], *,
                             timeout_ms: float = 30000) -> dict[TopicPartition, Errors]:
        """Commit ``{tp: offset}`` for ``group_id`` as a simple (non-member) consumer; each partition's error.

        Finds the coordinator and retries while it is unavailable, moving or loading (up to
        ``timeout_ms`` of loop time); other errors come back per partition rather than raised.
        """
        from kafka_ref.common.requests.offset_commit import OffsetCommitRequest

        def build() -> Any:
            return OffsetCommitRequest.build(group_id, {tp: (o, -1, "") for tp, o in offsets.items()})

        response = await self._coordinator_request(group_id, build, timeout_ms)
        return {tp: Errors.for_code(code) for tp, code in response.partition_errors().items()}

    async def committed_offsets(self, group_id: str, partitions: Iterable[TopicPartition], *,
                                timeout_ms: float = 30000) -> dict[TopicPartition, int]:
        """The committed offset of each partition for ``group_id``; -1 where nothing was committed.

        Retries like ``commit_offsets``; a group or partition error that is not about the
        coordinator is raised as its Kafka exception.
        """
        from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest

        partitions = list(partitions)
        response = await self._coordinator_request(
            group_id, lambda: OffsetFetchRequest.for_group(group_id, partitions), timeout_ms)
        group = response.group(group_id)
        Errors.for_code(group.error_code).maybe_raise(f"OffsetFetch for group {group_id!r}")
        data = group.partition_data()
        out: dict[TopicPartition, int] = {}
        for tp in partitions:
            p = data.get(tp)
            if p is None:
                out[tp] = -1
                continue
            Errors.for_code(p.error_code).maybe_raise(f"OffsetFetch for {tp} in group {group_id!r}")
            out[tp] = p.committed_offset
        return out
