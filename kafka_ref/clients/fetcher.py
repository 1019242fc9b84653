"""Fetching records and looking up offsets for the consumer.

Mirrors org.apache.kafka.clients.consumer.internals.Fetcher (with AbstractFetch and
FetchCollector), CompletedFetch and OffsetFetcher (Kafka 3.x). The Fetcher keeps at most one
FetchRequest in flight per leader and buffers each partition's answer as a CompletedFetch;
``collect_fetch`` hands records out from the fetch position on and moves the position. A
NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH answer that names the partition's new leader and
epoch (KIP-951's ``current_leader`` and ``node_endpoints``) updates the metadata's leader at once
(Metadata#updatePartitionLeadership) and moves the partition's position to it; the full metadata
refresh is still requested, as Kafka does. The OffsetFetcher sends ListOffsets to partition leaders for offset resets and for the consumer's
offset lookups. See consumer.py for how ``poll`` drives them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from kafka_ref.clients.client_metadata import LeaderAndEpoch
from kafka_ref.clients.subscription_state import FetchPosition
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.errors import (
    Errors,
    KafkaException,
    NetworkException,
    OffsetOutOfRangeException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.node import Node
from kafka_ref.common.records import Record, RecordBatch, TimestampType
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.requests.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse
from kafka_ref.common.requests.offsets_for_leader_epoch import OffsetForLeaderEpochRequest, OffsetForLeaderPartition
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.network.network import Envelope

if TYPE_CHECKING:
    from kafka_ref.clients.consumer import KafkaConsumer


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """Mirrors org.apache.kafka.clients.consumer.ConsumerRecord.

    ``leader_epoch`` is the epoch of the leader that appended the record's batch (None when
    the batch carries none).
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int
    leader_epoch: int | None
    # CreateTime, or LogAppendTime when the topic's broker stamped the batch (the batch's bit).
    timestamp_type: TimestampType = TimestampType.CREATE_TIME

    @property
    def serialized_key_size(self) -> int:
        """Mirrors org.apache.kafka.clients.consumer.ConsumerRecord#serializedKeySize: the key's size
        in the record (the consumer hands out the bytes as they are), -1 (NULL_SIZE) for no key."""
        return -1 if self.key is None else len(self.key)

    @property
    def serialized_value_size(self) -> int:
        """Mirrors org.apache.kafka.clients.consumer.ConsumerRecord#serializedValueSize (-1 for no value)."""
        return -1 if self.value is None else len(self.value)


@dataclass(frozen=True, slots=True)
class ListOffsetData:
    """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcherUtils.ListOffsetData."""

    offset: int
    timestamp: int | None
    leader_epoch: int | None




class CompletedFetch:
    """Mirrors org.apache.kafka.clients.consumer.internals.CompletedFetch.

    The records of one partition from one fetch response, handed out as ConsumerRecords from
    ``next_fetch_offset`` on (earlier records of the first batch are skipped; control batches
    are never returned). When every batch is used up, the next fetch offset moves to the end
    of the last batch, even if compaction removed its last records.
    """

    def __init__(self, tp: TopicPartition, data: PartitionData, fetch_offset: int) -> None:
        self.topic_partition = tp
        self.data = data
        self.next_fetch_offset = fetch_offset
        self.last_epoch: int | None = None
        self.initialized = False
        self.is_consumed = False
        self._batches = iter(FetchResponse.records_or_fail(data).batches)
        self._batch: RecordBatch | None = None
        self._records: Any = None

    def _next_fetched_record(self) -> Record | None:
        """Mirrors org.apache.kafka.clients.consumer.internals.CompletedFetch#nextFetchedRecord."""
        while True:
            # 1. Current batch used up: move to the next one (or finish).
            if self._records is None:
                batch = next(self._batches, None)
                if batch is None:
                    if self._batch is not None:
                        self.next_fetch_offset = self._batch.next_offset
                    self.is_consumed = True
                    return None
                self._batch = batch
                self.last_epoch = batch.partition_leader_epoch if batch.partition_leader_epoch >= 0 else None
                batch.ensure_valid()
                self._records = iter(batch)
                continue
            record = next(self._records, None)
            if record is None:
                self._records = None
                continue
            # 2. Skip records before the position; control records are consumed silently.
            if record.offset >= self.next_fetch_offset:
                if not self._batch.is_control_batch:
                    return record
                self.next_fetch_offset = record.offset + 1

    def fetch_records(self, max_records: int) -> list[ConsumerRecord]:
        """Mirrors org.apache.kafka.clients.consumer.internals.CompletedFetch#fetchRecords."""
        out: list[ConsumerRecord] = []
        tp = self.topic_partition
        while len(out) < max_records:
            record = self._next_fetched_record()
            if record is None:
                break
            out.append(ConsumerRecord(tp.topic, tp.partition, record.offset, record.key, record.value,
                                      record.headers, record.timestamp, self.last_epoch, self._batch.timestamp_type))
            self.next_fetch_offset = record.offset + 1
        return out


@dataclass(slots=True)
class _PendingFetch:
    envelope: Envelope
    fetch_offsets: dict[TopicPartition, int]
    sent_ms: int
    done: bool = False


class Fetcher:
    """Mirrors org.apache.kafka.clients.consumer.internals.Fetcher (AbstractFetch and FetchCollector).

    At most one fetch in flight per leader; responses are buffered as CompletedFetches and
    handed out by ``collect_fetch``.
    """

    def __init__(self, consumer: KafkaConsumer) -> None:
        self.consumer = consumer
        self.client = consumer.client
        self.metadata = consumer.metadata
        self.subscriptions = consumer.subscriptions
        self.time = consumer.time
        self.pending: dict[int, _PendingFetch] = {}
        self.completed_fetches: deque[CompletedFetch] = deque()
        self._log = consumer._log

    def buffered_partitions(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.FetchBuffer#bufferedPartitions."""
        return {cf.topic_partition for cf in self.completed_fetches}

    def has_completed_fetches(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.AbstractFetch#hasCompletedFetches."""
        return bool(self.completed_fetches)

    def has_available_fetches(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.Fetcher#hasAvailableFetches: a buffered
        answer for a partition that is fetchable (assigned, valid position, not paused)."""
        return any(self.subscriptions.is_fetchable(cf.topic_partition) for cf in self.completed_fetches)

    def clear_buffered_data_for_unassigned_partitions(self, assigned: set[TopicPartition]) -> None:
        """Mirrors AbstractFetch#clearBufferedDataForUnassignedPartitions: drop answers of partitions
        not in ``assigned``."""
        self.completed_fetches = deque(cf for cf in self.completed_fetches if cf.topic_partition in assigned)

    def prepare_fetch_requests(self, now: int) -> dict[int, dict[TopicPartition, FetchPartition]]:
        """Mirrors org.apache.kafka.clients.consumer.internals.AbstractFetch#prepareFetchRequests."""
        c = self.consumer
        requests: dict[int, dict[TopicPartition, FetchPartition]] = {}
        buffered = self.buffered_partitions()
        in_flight = {tp for p in self.pending.values() for tp in p.fetch_offsets}
        for tp in self.subscriptions.fetchable_partitions(now):
            if tp in buffered or tp in in_flight:
                continue
            position = self.subscriptions.position(tp)
            assert position is not None
            # 1. No leader known: refresh metadata, fetch later; else the leader or the replica it
            #    sent us to (KIP-392).
            leader = position.current_leader.leader
            if leader is None:
                self.metadata.request_update()
                continue
            node = self.select_read_replica(tp, leader, now)
            if node is None:
                continue
            # 2. A leader in reconnect backoff or with a fetch in flight is skipped.
            if self.client.is_unavailable(node, now) or node in self.pending:
                continue
            requests.setdefault(node, {})[tp] = FetchPartition(
                partition=tp.partition,
                current_leader_epoch=-1 if position.current_leader.epoch is None else position.current_leader.epoch,
                fetch_offset=position.offset,
                last_fetched_epoch=-1,
                log_start_offset=-1,
                partition_max_bytes=c.max_partition_fetch_bytes,
            )
        return requests

    def select_read_replica(self, tp: TopicPartition, leader: int, now: int) -> int | None:
        """Mirrors AbstractFetch#selectReadReplica: the preferred read replica while it is set and
        a live broker in the metadata, else the leader (the preference dropped, metadata refreshed).

        One difference, for the in-process network's zero-time answers: when the preference is
        dropped the partition waits ``retry_backoff_ms`` (None: not this round) before it asks the
        leader again. A leader whose metadata still lists the replica as alive names it again at
        once, and without the wait consumer and leader would trade the same answer forever at one
        instant of virtual time (over a real network each round costs a round trip).
        """
        replica = self.subscriptions.preferred_read_replica(tp, now)
        if replica is None:
            return leader
        if replica in self.metadata.fetch().nodes:
            return replica
        self._log.debug("preferred_read_replica_offline", topic_partition=str(tp), replica=replica, leader=leader)
        self.subscriptions.clear_preferred_read_replica(tp)
        self.metadata.request_update()
        self.subscriptions.request_failed([tp], now + self.consumer.retry_backoff_ms)
        return None

    def send_fetches(self) -> int:
        """Mirrors org.apache.kafka.clients.consumer.internals.Fetcher#sendFetches: post, do not wait."""
        c = self.consumer
        now = self.time.milliseconds()
        requests = self.prepare_fetch_requests(now)
        topic_ids = self.metadata.fetch().topic_ids
        for node, partitions in requests.items():
            fetch_data = {(TopicIdPartition(topic_ids[tp.topic], tp) if tp.topic in topic_ids else tp): data
                          for tp, data in partitions.items()}
            request = FetchRequest.build(
                fetch_data=fetch_data, max_wait_ms=c.fetch_max_wait_ms, min_bytes=c.fetch_min_bytes,
                max_bytes=c.fetch_max_bytes, isolation_level=c.isolation_level,
                session_id=FetchRequest.INVALID_SESSION_ID, session_epoch=FetchRequest.FINAL_EPOCH,
                rack_id=c.client_rack,
            )
            self.pending[node] = _PendingFetch(self.client.post(node, request),
                                               {tp: d.fetch_offset for tp, d in partitions.items()}, now)
        return len(requests)

    async def wait_for_fetches(self, timeout_ms: float) -> None:
        """Wait until one fetch in flight completes (or fails), or ``timeout_ms`` passes (NetworkClient#poll)."""
        if not self.pending:
            await self.time.sleep(timeout_ms)
            return
        first_done = anyio.Event()
        async with anyio.create_task_group() as tg:
            for node, pending in list(self.pending.items()):
                tg.start_soon(self._await_fetch, node, pending, first_done)
            with anyio.move_on_after(timeout_ms / 1000.0):
                await first_done.wait()
            tg.cancel_scope.cancel()

    async def _await_fetch(self, node: int, pending: _PendingFetch, first_done: anyio.Event) -> None:
        """Wait for one fetch; if the wait is cancelled the fetch stays in flight for the next poll."""
        remaining = max(self.consumer.request_timeout_ms - (self.time.milliseconds() - pending.sent_ms), 0)
        try:
            response = await self.client.wait(pending.envelope, remaining)
        except (NetworkException, TimeoutException) as exc:
            # 1. Lost connection or timeout (AbstractFetch#handleFetchFailure): the partitions of the
            #    request forget their preferred read replica (back to the leader); refresh metadata, refetch.
            self._log.debug("fetch_failed", node=node, error=repr(exc))
            del self.pending[node]
            self.handle_fetch_failure(pending)
        else:
            # 2. An answer: buffer it (AbstractFetch#handleFetchSuccess).
            del self.pending[node]
            self.handle_fetch_success(response, pending)
        first_done.set()

    def handle_fetch_failure(self, pending: _PendingFetch) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.AbstractFetch#handleFetchFailure.

        1. Every partition of the failed request that is still assigned forgets its preferred read
        replica (Kafka clears the session's partitions; here a request's partitions are its session);
        2. metadata is refreshed (Kafka's NetworkClient asks for it on the disconnection).
        """
        for tp in pending.fetch_offsets:
            self.subscriptions.clear_preferred_read_replica(tp)
        self.metadata.request_update()

    def handle_fetch_success(self, response: FetchResponse, pending: _PendingFetch) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.AbstractFetch#handleFetchSuccess."""
        # 1. A top-level error (fetch sessions only) fails the whole request; only an unknown topic
        #    id in the session calls for fresh metadata (FetchSessionHandler#handleResponse).
        if response.error_code != Errors.NONE.code:
            error = Errors.for_code(response.error_code)
            self._log.info("fetch_error", error=error.name)
            if error is Errors.FETCH_SESSION_TOPIC_ID_ERROR:
                self.metadata.request_update()
            return
        # 2. Buffer each partition's answer for the collector; a NOT_LEADER_OR_FOLLOWER or
        #    FENCED_LEADER_EPOCH answer naming a leader and its epoch is noted (KIP-951).
        names = {tid: name for name, tid in self.metadata.fetch().topic_ids.items()}
        partitions_with_updated_leader_info: dict[TopicPartition, LeaderAndEpoch] = {}
        for tp, data in response.response_data(names).items():
            fetch_offset = pending.fetch_offsets.get(tp)
            if fetch_offset is not None:
                if (data.error_code in (Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.FENCED_LEADER_EPOCH.code)
                        and data.current_leader.leader_id != -1 and data.current_leader.leader_epoch != -1):
                    partitions_with_updated_leader_info[tp] = LeaderAndEpoch(data.current_leader.leader_id,
                                                                             data.current_leader.leader_epoch)
                self.completed_fetches.append(CompletedFetch(tp, data, fetch_offset))
        # 3. The new leaders go into the metadata at once (with the response's node endpoints,
        #    Node#noNode dropped), and each partition whose leader changed takes it for its
        #    position (validated against it when the position knows its epoch).
        if partitions_with_updated_leader_info:
            no_node = Node.no_node()
            leader_nodes = [node for node in (Node(e.node_id, e.host, e.port, e.rack) for e in response.node_endpoints)
                            if node != no_node]
            updated = self.metadata.update_partition_leadership(partitions_with_updated_leader_info, leader_nodes)
            for tp in updated:
                self.subscriptions.maybe_validate_position_for_current_leader(tp, self.metadata.current_leader(tp))

    def collect_fetch(self, max_records: int) -> list[ConsumerRecord]:
        """Mirrors org.apache.kafka.clients.consumer.internals.FetchCollector#collectFetch."""
        records: list[ConsumerRecord] = []
        paused: list[CompletedFetch] = []
        try:
            while self.completed_fetches and len(records) < max_records:
                completed = self.completed_fetches[0]
                # 1. First look at a partition's answer: handle its error, drop it if stale. An
                #    answer whose error raises stays buffered (and raises again next time) unless it
                #    carries no records and nothing was collected before it.
                if not completed.initialized:
                    try:
                        usable = self.initialize_completed_fetch(completed)
                    except RUN_ENDING:
                        raise
                    except Exception:
                        if not records and FetchResponse.records_size(completed.data) == 0:
                            self.completed_fetches.popleft()
                        raise
                    if not usable:
                        self.completed_fetches.popleft()
                        continue
                    completed.initialized = True
                # 2. A paused partition's records are kept back, not handed out (they come out on a
                #    later poll if it is resumed by then).
                if self.subscriptions.is_paused(completed.topic_partition):
                    paused.append(self.completed_fetches.popleft())
                    continue
                # 3. Hand out records from the position on, and move the position.
                records.extend(self.fetch_records(completed, max_records - len(records)))
                if completed.is_consumed:
                    self.completed_fetches.popleft()
        except KafkaException:
            # 4. Records already collected are returned (their positions moved); the error comes
            #    out on the next call.
            if not records:
                raise
        finally:
            # 5. The paused partitions' fetches go back in the buffer for the next poll.
            self.completed_fetches.extend(paused)
        return records

    def fetch_records(self, completed: CompletedFetch, max_records: int) -> list[ConsumerRecord]:
        """Mirrors org.apache.kafka.clients.consumer.internals.FetchCollector#fetchRecords."""
        tp = completed.topic_partition
        state = self.subscriptions.assignment.get(tp)
        # 1. Not fetchable any more, or the position moved (a seek): drop the data.
        if state is None or not state.has_valid_position() or state.position.offset != completed.next_fetch_offset:
            completed.is_consumed = True
            return []
        # 2. Records, then the new position after the last one.
        records = completed.fetch_records(max_records)
        if completed.next_fetch_offset > state.position.offset:
            state.position = FetchPosition(completed.next_fetch_offset, completed.last_epoch, state.position.current_leader)
        return records

    def initialize_completed_fetch(self, completed: CompletedFetch) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.FetchCollector#initialize and #handleInitializeErrors.

        True when the fetch has records to hand out; errors are handled here.
        """
        tp = completed.topic_partition
        data = completed.data
        error = Errors.for_code(data.error_code)
        state = self.subscriptions.assignment.get(tp)
        fetch_offset = completed.next_fetch_offset
        # 1. Stale: unassigned, or no valid position any more (a rebalance or reset meanwhile); for
        #    data also a position moved since the request (errors are handled regardless).
        if state is None or not state.has_valid_position():
            return False
        if error is Errors.NONE and state.position.offset != fetch_offset:
            return False
        now = self.time.milliseconds()
        if error is Errors.NONE:
            # 2. Success: remember the partition's offsets, and the replica the leader sends us to
            #    (KIP-392) until the metadata would expire.
            state.high_watermark = data.high_watermark if data.high_watermark >= 0 else state.high_watermark
            state.log_start_offset = data.log_start_offset if data.log_start_offset >= 0 else state.log_start_offset
            state.last_stable_offset = data.last_stable_offset if data.last_stable_offset >= 0 else state.last_stable_offset
            if data.preferred_read_replica >= 0:
                self.subscriptions.update_preferred_read_replica(tp, data.preferred_read_replica,
                                                                 now + self.metadata.metadata_expire_ms)
            return True
        # 3. Errors: stale metadata, out of range, fatal.
        backoff_until = now + self.consumer.retry_backoff_ms
        if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.REPLICA_NOT_AVAILABLE, Errors.KAFKA_STORAGE_ERROR,
                     Errors.FENCED_LEADER_EPOCH, Errors.OFFSET_NOT_AVAILABLE, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                     Errors.UNKNOWN_TOPIC_ID, Errors.INCONSISTENT_TOPIC_ID, Errors.LEADER_NOT_AVAILABLE):
            self._log.debug("fetch_partition_error", topic_partition=str(tp), error=error.name)
            # (AbstractFetch#requestMetadataUpdate: the preferred read replica goes too.)
            self.metadata.request_update()
            self.subscriptions.clear_preferred_read_replica(tp)
        elif error is Errors.UNKNOWN_LEADER_EPOCH:
            # The broker has not caught up with the epoch we know: just retry.
            self._log.debug("fetch_unknown_leader_epoch", topic_partition=str(tp))
        elif error is Errors.OFFSET_OUT_OF_RANGE and self.subscriptions.clear_preferred_read_replica(tp) is not None:
            # Out of range on a follower (it may lag the leader): back to the leader, no reset.
            self._log.debug("preferred_read_replica_cleared", topic_partition=str(tp), error=error.name)
        elif error is Errors.OFFSET_OUT_OF_RANGE and state.position.offset != fetch_offset:
            # Out of range for an offset we have moved away from since (a seek): ignore it.
            self._log.debug("stale_offset_out_of_range", topic_partition=str(tp), fetch_offset=fetch_offset)
            return False
        elif error is Errors.OFFSET_OUT_OF_RANGE:
            if self.subscriptions.default_reset_strategy == "none":
                exc = OffsetOutOfRangeException(
                    f"Fetch position {state.position.offset} is out of range for partition {tp}")
                # (org.apache.kafka.clients.consumer.OffsetOutOfRangeException#offsetOutOfRangePartitions)
                exc.offset_out_of_range_partitions = {tp: state.position.offset}
                raise exc
            self._log.info("fetch_offset_out_of_range", topic_partition=str(tp), offset=state.position.offset)
            self.subscriptions.request_offset_reset_if_partition_assigned(tp)
            backoff_until = 0
        elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
            raise TopicAuthorizationException(f"Not authorized to access topics: [{tp.topic}]")
        elif error is Errors.UNKNOWN_SERVER_ERROR:
            self._log.warning("fetch_unknown_server_error", topic_partition=str(tp))
        elif error is Errors.CORRUPT_MESSAGE:
            raise KafkaException(f"Encountered corrupt message when fetching offset {fetch_offset} "
                                 f"for topic-partition {tp}")
        else:
            raise KafkaException(f"Unexpected error code {error.code} ({error.name}) while fetching at offset "
                                 f"{completed.next_fetch_offset} from topic-partition {tp}")
        self.subscriptions.request_failed([tp], backoff_until)
        return False


class LogTruncationException(OffsetOutOfRangeException):
    """Mirrors org.apache.kafka.clients.consumer.LogTruncationException: the log was truncated below
    the consumer's position and ``auto_offset_reset`` is "none". ``divergent_offsets`` maps each
    partition to the first offset known to diverge (None when the leader has no end for the
    position's epoch)."""

    def __init__(self, message: str, divergent_offsets: dict[TopicPartition, int | None]) -> None:
        super().__init__(message)
        self.divergent_offsets = divergent_offsets


class OffsetFetcher:
    """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcher (ListOffsets for resets and
    lookups, OffsetsForLeaderEpoch for position validation)."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        self.consumer = consumer
        self.client = consumer.client
        self.metadata = consumer.metadata
        self.subscriptions = consumer.subscriptions
        self.time = consumer.time
        self._log = consumer._log

    def validate_positions_on_metadata_change(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcher#validatePositionsOnMetadataChange.

        Every assigned position takes the leader the metadata names now; a new leader or epoch
        puts a position that knows its record's epoch into validation (KIP-320).
        """
        for tp in self.subscriptions.assignment:
            self.subscriptions.maybe_validate_position_for_current_leader(tp, self.metadata.current_leader(tp))

    async def reset_positions_if_needed(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcher#resetPositionsIfNeeded.

        Looks up the earliest or latest offset of every partition awaiting a reset and seeks
        there; failures back the partitions off for ``retry_backoff_ms``.
        """
        now = self.time.milliseconds()
        partitions = self.subscriptions.partitions_needing_reset(now)
        if not partitions:
            return
        # 1. One timestamp per partition: EARLIEST or LATEST.
        strategies = {tp: self.subscriptions.assignment[tp].reset_strategy for tp in partitions}
        timestamps = {tp: ListOffsetsRequest.EARLIEST_TIMESTAMP if s == "earliest" else ListOffsetsRequest.LATEST_TIMESTAMP
                      for tp, s in strategies.items()}
        # 2. Ask the leaders; seek where they answered.
        fetched, to_retry = await self.send_list_offsets_requests(timestamps)
        for tp, data in fetched.items():
            position = FetchPosition(data.offset, None, self.metadata.current_leader(tp))
            if data.leader_epoch is not None:
                self.metadata.update_last_seen_epoch_if_newer(tp, data.leader_epoch)
            self.subscriptions.maybe_seek_unvalidated(tp, position, strategies[tp])
        # 3. The rest waits a backoff and refreshed metadata.
        if to_retry:
            self.subscriptions.request_failed(to_retry, self.time.milliseconds() + self.consumer.retry_backoff_ms)
            self.metadata.request_update()

    async def validate_positions_if_needed(self) -> None:
        """Mirrors OffsetFetcher#validatePositionsIfNeeded and #validatePositionsAsync (KIP-320).

        1. The partitions awaiting validation, grouped by their current leader; 2. one
        OffsetsForLeaderEpoch per leader asking where each position's epoch ends; 3. each answer
        completes the validation (SubscriptionState#maybeCompleteValidation: valid, or truncated
        and moved back, or reset); errors that mean stale metadata refresh it and back off;
        4. with ``auto_offset_reset="none"`` a detected truncation raises LogTruncationException.
        """
        now = self.time.milliseconds()
        # 1. What to validate, by leader.
        by_node: dict[int, dict[TopicPartition, FetchPosition]] = {}
        for tp in self.subscriptions.partitions_needing_validation(now):
            position = self.subscriptions.position(tp)
            assert position is not None
            leader = position.current_leader.leader
            if leader is None:
                self.metadata.request_update()
                continue
            by_node.setdefault(leader, {})[tp] = position
        truncations: dict[TopicPartition, int | None] = {}
        for node, positions in by_node.items():
            # 2. The request (OffsetsForLeaderEpochClient).
            request = OffsetForLeaderEpochRequest.for_consumer({
                tp: OffsetForLeaderPartition(partition=tp.partition, current_leader_epoch=p.current_leader.epoch,
                                             leader_epoch=p.offset_epoch)
                for tp, p in positions.items()})
            backoff_until = self.time.milliseconds() + self.consumer.retry_backoff_ms
            try:
                response = await self.client.send(node, request)
            except (NetworkException, TimeoutException):
                self.metadata.request_update()
                self.subscriptions.request_failed(positions, backoff_until)
                continue
            answers = response.epoch_end_offsets()
            # 3. Per partition.
            for tp, position in positions.items():
                answer = answers.get(tp)
                error = Errors.for_code(answer.error_code) if answer is not None else Errors.UNKNOWN_SERVER_ERROR
                if error is Errors.NONE:
                    truncation = self.subscriptions.maybe_complete_validation(tp, position, answer.end_offset,
                                                                              answer.leader_epoch)
                    if truncation is not None:
                        truncations[tp] = truncation[1]
                elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    raise TopicAuthorizationException(f"Not authorized to access topics: [{tp.topic}]")
                else:
                    self._log.debug("offset_validation_retry", topic_partition=str(tp), error=error.name)
                    self.metadata.request_update()
                    self.subscriptions.request_failed([tp], backoff_until)
        # 4. Truncation with no reset policy.
        if truncations:
            raise LogTruncationException(
                "Detected truncated partitions: " + ", ".join(f"{tp} (divergent offset {o})" for tp, o in truncations.items()),
                truncations)

    async def fetch_offsets_by_times(
        self, timestamps: dict[TopicPartition, int], timeout_ms: float
    ) -> dict[TopicPartition, ListOffsetData | None]:
        """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcher#fetchOffsetsByTimes.

        Retries (after metadata refreshes) until every partition is answered or
        ``timeout_ms`` passes; None for a partition with no such offset.
        """
        deadline = self.time.milliseconds() + timeout_ms
        result: dict[TopicPartition, ListOffsetData | None] = {}
        remaining = dict(timestamps)
        self.metadata.add_topics({tp.topic for tp in timestamps})
        while True:
            # 1. Metadata first when it is due (new topics are fetched at once).
            await self.client.poll_metadata()
            fetched, to_retry = await self.send_list_offsets_requests(remaining)
            for tp in remaining:
                if tp not in to_retry:
                    result[tp] = fetched.get(tp)
            remaining = {tp: ts for tp, ts in remaining.items() if tp in to_retry}
            if not remaining:
                return result
            # 2. Retry after a metadata refresh, within the deadline.
            if self.time.milliseconds() >= deadline:
                raise TimeoutException(f"Failed to get offsets by times in {int(timeout_ms)}ms")
            await self.client.await_metadata_update(deadline)

    async def send_list_offsets_requests(
        self, timestamps: dict[TopicPartition, int]
    ) -> tuple[dict[TopicPartition, ListOffsetData], set[TopicPartition]]:
        """Mirrors org.apache.kafka.clients.consumer.internals.OffsetFetcher#sendListOffsetsRequests.

        With the per-partition handling of OffsetFetcherUtils#handleListOffsetResponse.

        Returns what was found and the partitions to retry (unknown leader, retriable
        errors). Authorization failures raise.
        """
        fetched: dict[TopicPartition, ListOffsetData] = {}
        to_retry: set[TopicPartition] = set()
        # 1. Group by leader; partitions without one are retried after a metadata refresh.
        by_node: dict[int, dict[TopicPartition, ListOffsetsPartition]] = {}
        for tp, ts in timestamps.items():
            leader = self.metadata.current_leader(tp)
            if leader.leader is None:
                self.metadata.request_update()
                to_retry.add(tp)
                continue
            by_node.setdefault(leader.leader, {})[tp] = ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=-1 if leader.epoch is None else leader.epoch, timestamp=ts)
        # 2. One request per leader.
        for node, partitions in by_node.items():
            request = ListOffsetsRequest(replica_id=ListOffsetsRequest.CONSUMER_REPLICA_ID,
                                         isolation_level=self.consumer.isolation_level,
                                         topics=ListOffsetsRequest.to_list_offsets_topics(partitions))
            try:
                response: ListOffsetsResponse = await self.client.send(node, request)
            except (NetworkException, TimeoutException):
                self.metadata.request_update()
                to_retry.update(partitions)
                continue
            # 3. Per partition (OffsetFetcherUtils#handleListOffsetResponse).
            answers = response.responses_by_partition()
            for tp in partitions:
                r = answers.get(tp)
                error = Errors.for_code(r.error_code) if r is not None else Errors.UNKNOWN_SERVER_ERROR
                if error is Errors.NONE:
                    if r.offset != ListOffsetsResponse.UNKNOWN_OFFSET:
                        fetched[tp] = ListOffsetData(r.offset, None if r.timestamp == -1 else r.timestamp,
                                                     None if r.leader_epoch == -1 else r.leader_epoch)
                elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    raise TopicAuthorizationException(f"Not authorized to access topics: [{tp.topic}]")
                else:
                    to_retry.add(tp)
        return fetched, to_retry
