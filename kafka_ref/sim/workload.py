"""The simulated clients: producers with acks=all / acks=1 and a consumer, all seeded.

Producers send raw ProduceRequests (one record per request, each value unique, no retries: a
failed or timed-out send is simply recorded as not acknowledged). Which partition, which acks,
which broker to hit and when all come from the workload's random stream: mostly the leader
named by a random live broker's metadata cache (possibly stale, as a real client's would be),
sometimes the controller's leader (ZooKeeper or KRaft), sometimes a random broker (which answers NOT_LEADER_OR_FOLLOWER).
The consumer fetches each partition from its leader with FetchRequest (replica id -1, so the
leader serves only below its high watermark), now and then from a random broker without an
epoch (a follower serves a consumer up to its own high watermark from Fetch v11, KIP-392; an
older era's broker answers NOT_LEADER_OR_FOLLOWER), and reports every record to the checker. It
commits its positions to the group coordinator now and then (a "simple" group: OffsetCommit
with generation -1), finding the coordinator with FindCoordinator as a client does; after
healing, OffsetFetch must return at least every acknowledged commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest
from kafka_ref.common.requests.find_coordinator import CoordinatorType, FindCoordinatorRequest
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL
from kafka_ref.sim.history import SOURCE_CLIENT
from kafka_ref.sim.invariants import AckedWrite, ConsumedRecord, record_at

if TYPE_CHECKING:
    from kafka_ref.sim.simulate import SimContext

PRODUCE_TIMEOUT_MS = 5000
REQUEST_TIMEOUT_MS = 8000
RETRY_BACKOFF_S = 0.1  # retry.backoff.ms after a failed or refused send
GROUP_ID = "sim-group"


class Workload:
    """Producers and a consumer driven by one seeded random stream."""

    def __init__(self, ctx: "SimContext") -> None:
        self.ctx = ctx
        self.rng = ctx.sub_rng("workload")
        self.scenario = ctx.scenario
        self.acked: list[AckedWrite] = []
        self.consumed: list[ConsumedRecord] = []
        self.produced = 0
        self.acked_all = 0
        self.acked_one = 0
        self.positions: dict[TopicPartition, int] = {tp: 0 for tp in ctx.partitions}
        self._sequence = 0
        self.producing = True
        # Per partition: the offset of the last acknowledged commit, and the offsets of commits
        # sent since then whose fate is unknown (a timed-out commit may still have been applied).
        self.committed: dict[TopicPartition, int] = {}
        self.commits_in_doubt: dict[TopicPartition, set[int]] = {}
        self.commits_acked = 0

    # -- helpers ---------------------------------------------------------------------------

    def choose_broker(self, tp: TopicPartition) -> int | None:
        """Which broker a client sends to: metadata (maybe stale), the controller's view, or any."""
        return self.choose_leader(tp)[0]

    def choose_leader(self, tp: TopicPartition) -> tuple[int | None, int]:
        """(broker, leader epoch the client believes in): from a random live broker's metadata
        cache (maybe stale), from the controller's record, or a random broker with no epoch."""
        ctx = self.ctx
        live = ctx.live_brokers()
        if not live:
            return None, -1
        roll = self.rng.random()
        if roll < 0.05:
            return self.rng.choice(sorted(ctx.cluster.brokers)), -1
        if roll < 0.2:
            state = ctx.partition_state(tp)
            if state is None or state["leader"] < 0:
                return None, -1
            return state["leader"], state["leader_epoch"]
        informant = ctx.cluster.brokers[self.rng.choice(live)]
        info = informant.metadata_cache.get_partition_info(tp)
        if info is None or info.leader < 0:
            return None, -1
        return info.leader, info.leader_epoch

    # -- producing ----------------------------------------------------------------------------

    async def run_producer(self, producer_id: int) -> None:
        scenario = self.scenario
        while self.producing:
            await anyio.sleep(self.rng.uniform(*scenario.produce_interval_ms) / 1000)
            if not self.producing:
                return
            tp = self.rng.choice(self.ctx.partitions)
            acks = -1 if self.rng.random() < scenario.acks_all_ratio else 1
            broker = self.choose_broker(tp)
            if not await self.produce_once(producer_id, tp, acks, broker):
                await anyio.sleep(RETRY_BACKOFF_S)

    async def produce_once(self, producer_id: int, tp: TopicPartition, acks: int, broker: int | None) -> bool:
        """Send one record; True if it was acknowledged."""
        ctx = self.ctx
        self._sequence += 1
        n = self._sequence
        value = b"p%d-%d" % (producer_id, n)
        if broker is None:
            ctx.history.append(SOURCE_CLIENT, "produce_skipped", producer=producer_id, n=n, topic_partition=str(tp),
                               reason="no leader known")
            return False
        self.produced += 1
        request = ProduceRequest.build(acks=acks, timeout_ms=PRODUCE_TIMEOUT_MS,
                                       records={tp: MemoryRecords.with_records([SimpleRecord(None, value)])})
        ctx.history.append(SOURCE_CLIENT, "produce", producer=producer_id, n=n, topic_partition=str(tp), acks=acks,
                           broker=broker)
        try:
            response = await ctx.cluster.network.send(f"producer-{producer_id}", broker, request, REQUEST_TIMEOUT_MS,
                                                      principal=ANONYMOUS_PRINCIPAL)
        except RUN_ENDING:
            raise
        except Exception as exc:  # the network said no: not acknowledged
            ctx.history.append(SOURCE_CLIENT, "produce_failed", producer=producer_id, n=n, error=type(exc).__name__)
            return False
        result = response.responses[0].partition_responses[0]
        error = Errors.for_code(result.error_code)
        if error is not Errors.NONE:
            ctx.history.append(SOURCE_CLIENT, "produce_error", producer=producer_id, n=n, error=error.name)
            return False
        epoch = self._epoch_of(broker, tp, result.base_offset)
        event = ctx.history.append(SOURCE_CLIENT, "produce_ack", producer=producer_id, n=n, topic_partition=str(tp),
                                   acks=acks, broker=broker, offset=result.base_offset, epoch=epoch)
        self.acked.append(AckedWrite(tp, result.base_offset, value, acks, broker, epoch, event.index))
        if acks == -1:
            self.acked_all += 1
        else:
            self.acked_one += 1
        return True

    def _epoch_of(self, broker_id: int, tp: TopicPartition, offset: int) -> int:
        """The leader epoch of the batch the leader holds at ``offset`` now (-1 if it is gone)."""
        broker = self.ctx.cluster.brokers.get(broker_id)
        partition = broker.replica_manager.online_partition(tp) if broker is not None and broker.is_running else None
        if partition is None or partition.log is None:
            return -1
        found = record_at(list(partition.log.local_log.batches), offset)
        return found[0] if found is not None else -1

    # -- consuming ----------------------------------------------------------------------------

    async def run_consumer(self) -> None:
        scenario = self.scenario
        while True:
            await anyio.sleep(self.rng.uniform(*scenario.consume_interval_ms) / 1000)
            tp = self.rng.choice(self.ctx.partitions)
            broker, epoch = self.choose_leader(tp)
            if await self.consume_once(tp, broker, epoch) < 0:
                await anyio.sleep(RETRY_BACKOFF_S)

    async def consume_once(self, tp: TopicPartition, broker: int | None, leader_epoch: int = -1) -> int:
        """One fetch of ``tp`` from ``broker`` at the consumer's position; records read, -1 on error.

        ``leader_epoch`` is the epoch the consumer's metadata names (KIP-320): a broker on an
        older epoch answers UNKNOWN_LEADER_EPOCH, one on a newer epoch FENCED_LEADER_EPOCH.
        """
        ctx = self.ctx
        if broker is None:
            return -1
        position = self.positions[tp]
        request = FetchRequest.for_consumer(
            max_wait_ms=int(self.rng.uniform(0, 200)), min_bytes=1,
            fetch_data={tp: FetchPartition(partition=tp.partition, current_leader_epoch=leader_epoch,
                                           fetch_offset=position, partition_max_bytes=1 << 16)},
        )
        try:
            response = await ctx.cluster.network.send("consumer", broker, request, REQUEST_TIMEOUT_MS,
                                                      principal=ANONYMOUS_PRINCIPAL)
        except RUN_ENDING:
            raise
        except Exception:
            return -1
        data = response.partition_data(tp.topic, tp.partition)
        if data is None:
            return -1
        error = Errors.for_code(data.error_code)
        if error is Errors.OFFSET_OUT_OF_RANGE:
            # Only the leader of the current epoch (per the controller) is believed; a deposed leader
            # that has not heard of its successor may be behind the consumer.
            state = ctx.partition_state(tp)
            if state is not None and state["leader"] == broker and leader_epoch == state["leader_epoch"]:
                self._reset(tp, broker, position)
            else:
                ctx.history.append(SOURCE_CLIENT, "consumer_out_of_range_ignored", topic_partition=str(tp),
                                   broker=broker, position=position)
            return -1
        if error is not Errors.NONE:
            return -1
        read = 0
        for batch in data.records:
            for record in batch:
                if record.offset < self.positions[tp]:
                    continue
                event = ctx.history.append(SOURCE_CLIENT, "consume", topic_partition=str(tp), broker=broker,
                                           offset=record.offset, value=record.value, high_watermark=data.high_watermark)
                consumed = ConsumedRecord(tp, record.offset, record.value or b"", broker, data.high_watermark, event.index)
                self.consumed.append(consumed)
                ctx.checker.on_consumed(consumed)
                self.positions[tp] = record.offset + 1
                read += 1
        return read

    def _reset(self, tp: TopicPartition, broker: int, position: int) -> None:
        """Out of range: restart from the serving leader's high watermark (auto.offset.reset=latest)."""
        b = self.ctx.cluster.brokers.get(broker)
        partition = b.replica_manager.online_partition(tp) if b is not None and b.is_running else None
        new = partition.log.high_watermark if partition is not None and partition.log is not None else position
        self.ctx.history.append(SOURCE_CLIENT, "consumer_reset", topic_partition=str(tp), broker=broker, old=position, new=new)
        self.ctx.checker.on_consumer_reset(tp, position, new, broker)
        self.positions[tp] = new

    # -- committing -----------------------------------------------------------------------------

    async def find_coordinator(self) -> int | None:
        """FindCoordinator for the group, asked of a random live broker (None while unavailable)."""
        live = self.ctx.live_brokers()
        if not live:
            return None
        request = FindCoordinatorRequest(key_type=CoordinatorType.GROUP, coordinator_keys=(GROUP_ID,))
        try:
            response = await self.ctx.cluster.network.send("consumer", self.rng.choice(live), request,
                                                           REQUEST_TIMEOUT_MS, principal=ANONYMOUS_PRINCIPAL)
        except RUN_ENDING:
            raise
        except Exception:
            return None
        coordinator = response.coordinator(GROUP_ID)
        if coordinator is None or coordinator.error_code != Errors.NONE.code:
            return None
        return coordinator.node_id

    async def run_committer(self) -> None:
        """Commit the consumer's positions every one to three seconds."""
        while True:
            await anyio.sleep(self.rng.uniform(1.0, 3.0))
            await self.commit_once()

    async def commit_once(self) -> bool:
        ctx = self.ctx
        coordinator = await self.find_coordinator()
        if coordinator is None:
            return False
        offsets = dict(self.positions)
        request = OffsetCommitRequest.build(GROUP_ID, {tp: (offset, -1, "") for tp, offset in offsets.items()})
        ctx.history.append(SOURCE_CLIENT, "offset_commit", coordinator=coordinator,
                           offsets={str(tp): o for tp, o in offsets.items()})
        try:
            response = await ctx.cluster.network.send("consumer", coordinator, request, REQUEST_TIMEOUT_MS,
                                                      principal=ANONYMOUS_PRINCIPAL)
        except RUN_ENDING:
            raise
        except Exception as exc:
            ctx.history.append(SOURCE_CLIENT, "offset_commit_failed", error=type(exc).__name__)
            for tp, offset in offsets.items():
                if tp in self.committed:
                    self.commits_in_doubt.setdefault(tp, set()).add(offset)
            return False
        errors = {tp: Errors.for_code(code) for tp, code in response.partition_errors().items()}
        acked = {tp: offsets[tp] for tp, error in errors.items() if error is Errors.NONE and tp in offsets}
        ctx.history.append(SOURCE_CLIENT, "offset_commit_result", coordinator=coordinator,
                           errors={str(tp): e.name for tp, e in errors.items()})
        # The last acknowledged commit is what the group must return (positions go back after an
        # unclean election truncates below them, so it is not always the largest); an
        # unacknowledged one may or may not have been written.
        for tp, offset in offsets.items():
            if tp in acked:
                self.committed[tp] = offset
                self.commits_in_doubt[tp] = set()
            elif tp in self.committed:
                self.commits_in_doubt.setdefault(tp, set()).add(offset)
        self.commits_acked += bool(acked)
        return bool(acked)

    async def fetch_committed(self, timeout_s: float = 30.0) -> dict[TopicPartition, int] | None:
        """After healing: the group's committed offsets, from its coordinator (None if unreachable)."""
        with anyio.move_on_after(timeout_s):
            while True:
                coordinator = await self.find_coordinator()
                if coordinator is not None:
                    request = OffsetFetchRequest.for_group(GROUP_ID, list(self.ctx.partitions))
                    try:
                        response = await self.ctx.cluster.network.send("consumer", coordinator, request,
                                                                       REQUEST_TIMEOUT_MS, principal=ANONYMOUS_PRINCIPAL)
                    except RUN_ENDING:
                        raise
                    except Exception:
                        response = None
                    group = response.group(GROUP_ID) if response is not None else None
                    if group is not None and group.error_code == Errors.NONE.code:
                        data = group.partition_data()
                        if all(d.error_code == Errors.NONE.code for d in data.values()):
                            return {tp: d.committed_offset for tp, d in data.items()}
                await anyio.sleep(0.2)
        return None

    async def drain(self, timeout_s: float = 30.0) -> None:
        """After healing: read every partition up to its leader's HW."""
        with anyio.move_on_after(timeout_s):
            for tp in self.ctx.partitions:
                while True:
                    leader = self.ctx.leader_of(tp)
                    if leader < 0:
                        break
                    partition = self.ctx.cluster.brokers[leader].replica_manager.online_partition(tp)
                    if partition is None or partition.log is None or self.positions[tp] >= partition.log.high_watermark:
                        break
                    state = self.ctx.partition_state(tp) or {}
                    if await self.consume_once(tp, leader, state.get("leader_epoch", -1)) <= 0:
                        await anyio.sleep(0.05)

    def details(self) -> dict[str, Any]:
        return {"produced": self.produced, "acked_all": self.acked_all, "acked_one": self.acked_one,
                "consumed": len(self.consumed), "commits": self.commits_acked}
