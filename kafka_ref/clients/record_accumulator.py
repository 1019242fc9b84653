"""Where produced records wait: batches per partition, and the futures of their records.

Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator, ProducerBatch,
ProduceRequestResult and FutureRecordMetadata, and org.apache.kafka.clients.producer.RecordMetadata
(Kafka 3.x). The accumulator keeps one deque of batches per partition; a record goes into the
last batch of its partition while that batch has room (``batch_size``), otherwise into a new
one. ``ready`` tells the Sender which leaders have a batch worth sending (full, lingered
``linger_ms``, retry backoff over, or a flush / close in progress) and ``drain`` takes at most
one batch per partition for each of them. An idempotent producer's retried batches go back in
sequence order, and its drain holds a partition back while the sequences forbid sending its
first batch (see ``should_stop_drain_batches_for_partition``). A retried batch skips what is left
of its retry backoff when its partition has a newer leader epoch than the one its last attempt
went to (KIP-951: ``ProducerBatch.maybe_update_leader_epoch`` and ``should_backoff``; the epoch
comes from the metadata, which a produce response's leader hint may have updated). The retry
backoff itself is the constant ``retry.backoff.ms`` (Kafka 3.7+ grows it towards
``retry.backoff.max.ms`` with jitter, KIP-580; not modelled here). See producer.py for the
overall flow.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable, Iterable

import anyio

from kafka_ref.clients.client_metadata import MetadataSnapshot
from kafka_ref.common.errors import IllegalStateException, KafkaException
from kafka_ref.common.records import RECORD_BATCH_OVERHEAD, MemoryRecords, SimpleRecord
from kafka_ref.common.records.constants import CompressionType
from kafka_ref.common.records.record import size_in_bytes
from kafka_ref.common.topic_partition import TopicPartition

Callback = Callable[["RecordMetadata | None", "BaseException | None"], None]

# --------------------------------------------------------------------------------------------
# Results handed to the caller
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Mirrors org.apache.kafka.clients.producer.RecordMetadata.

    Where an acknowledged record went. ``offset`` is -1 with acks=0 (no response to read it
    from); ``timestamp`` is the broker's append time for LogAppendTime topics, else the
    record's create time.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    # RecordMetadata#serializedKeySize / #serializedValueSize: the key's and value's bytes, -1 for null.
    serialized_key_size: int = -1
    serialized_value_size: int = -1


class ProduceRequestResult:
    """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult.

    The outcome of one batch, shared by the futures of its records: base offset, log append
    time, or the error (the batch's, or one per record when the leader named the records it
    refused); ``wait()`` returns once it is set.
    """

    def __init__(self, topic_partition: TopicPartition) -> None:
        self.topic_partition = topic_partition
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self.record_exceptions: Callable[[int], BaseException] | None = None
        self._done = anyio.Event()

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None,
            record_exceptions: Callable[[int], BaseException] | None = None) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#set."""
        self.base_offset, self.log_append_time, self.error = base_offset, log_append_time, error
        self.record_exceptions = record_exceptions

    def error_for(self, batch_index: int) -> BaseException | None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#error(int)."""
        if self.record_exceptions is not None:
            return self.record_exceptions(batch_index)
        return self.error

    def done(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#done: wake the waiters."""
        self._done.set()

    @property
    def completed(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#completed."""
        return self._done.is_set()

    async def wait(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#await."""
        await self._done.wait()


class FutureRecordMetadata:
    """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata.

    The handle ``send_nowait`` returns: ``await`` it for the RecordMetadata (or the Kafka
    exception). ``done()``, ``value()`` and ``exception()`` read it without waiting. A future
    may be *chained* to the one that replaced it (a record that waited for metadata), as
    Kafka chains futures of split batches.
    """

    def __init__(self, result: ProduceRequestResult, batch_index: int, create_timestamp: int,
                 serialized_key_size: int = -1, serialized_value_size: int = -1) -> None:
        self.result = result
        self.batch_index = batch_index
        self.create_timestamp = create_timestamp
        self.serialized_key_size = serialized_key_size
        self.serialized_value_size = serialized_value_size
        self.next: FutureRecordMetadata | None = None

    def chain(self, future: FutureRecordMetadata) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata#chain."""
        self.next = future

    def done(self) -> bool:
        """Mirrors java.util.concurrent.Future#isDone."""
        if self.next is not None:
            return self.next.done()
        return self.result.completed

    def exception(self) -> BaseException | None:
        """Mirrors java.util.concurrent.CompletableFuture#exceptionNow: the error, or None while pending or after success."""
        if self.next is not None:
            return self.next.exception()
        return self.result.error_for(self.batch_index) if self.result.completed else None

    def value(self) -> RecordMetadata:
        """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata#valueOrError."""
        if self.next is not None:
            return self.next.value()
        if not self.result.completed:
            raise KafkaException("the record has not been acknowledged yet; await the future")
        error = self.result.error_for(self.batch_index)
        if error is not None:
            raise error
        base = self.result.base_offset
        offset = -1 if base == -1 else base + self.batch_index
        timestamp = self.create_timestamp if self.result.log_append_time == -1 else self.result.log_append_time
        tp = self.result.topic_partition
        return RecordMetadata(tp.topic, tp.partition, offset, timestamp, self.serialized_key_size, self.serialized_value_size)

    async def get(self) -> RecordMetadata:
        """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata#get."""
        await self.result.wait()
        if self.next is not None:
            return await self.next.get()
        return self.value()

    def __await__(self):
        return self.get().__await__()


# --------------------------------------------------------------------------------------------
# Batches and the accumulator
# --------------------------------------------------------------------------------------------


class ProducerBatch:
    """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch.

    Records for one partition, appended until the estimated batch size reaches the write
    limit (``batch_size``, or the first record's size when that is larger). The v2 batch is
    built, in the producer's compression.type, when the batch is first drained and the same
    bytes are resent on retries. The room check counts records uncompressed (Kafka starts from
    an estimated compression ratio of 1.0 and learns it per topic; kafka_ref keeps 1.0, so a
    compressed batch may close before Kafka's would).
    """

    def __init__(self, tp: TopicPartition, write_limit: int, now_ms: int,
                 compression: CompressionType = CompressionType.NONE) -> None:
        self.topic_partition = tp
        self.write_limit = write_limit
        self.compression = compression
        # The idempotent producer's stamp (ProducerBatch#setProducerState), set when first drained.
        self.producer_id = -1
        self.producer_epoch = -1
        self.base_sequence = -1
        self.reopened = False
        self.created_ms = now_ms
        self.last_attempt_ms = now_ms
        self.last_append_time = now_ms
        self.drained_ms = now_ms
        self.attempts = 0
        self.retry = False
        # KIP-951: the leader epoch this batch's current attempt goes to, and the attempt at which
        # it was first seen (ProducerBatch#currentLeaderEpoch / #attemptsWhenLeaderLastChanged).
        self.current_leader_epoch: int | None = None
        self.attempts_when_leader_last_changed = 0
        self.records: list[SimpleRecord] = []
        self.thunks: list[tuple[FutureRecordMetadata, Callback | None]] = []
        self.estimated_size = RECORD_BATCH_OVERHEAD
        self.closed_for_appends = False
        self.produce_future = ProduceRequestResult(tp)
        self.final_state: str | None = None
        self._built: MemoryRecords | None = None

    def try_append(self, record: SimpleRecord, callback: Callback | None, now_ms: int) -> FutureRecordMetadata | None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#tryAppend.

        None when the batch has no room (MemoryRecordsBuilder#hasRoomFor); the first record
        always fits.
        """
        # 1. Room check with the record's exact v2 size at its offset and timestamp delta.
        base_timestamp = self.records[0].timestamp if self.records else record.timestamp
        size = size_in_bytes(len(self.records), record.timestamp - base_timestamp, record.key, record.value, record.headers)
        if self.closed_for_appends or (self.records and self.estimated_size + size > self.write_limit):
            return None
        # 2. Append and hand out the record's future.
        future = FutureRecordMetadata(self.produce_future, len(self.records), record.timestamp,
                                      -1 if record.key is None else len(record.key),
                                      -1 if record.value is None else len(record.value))
        self.records.append(record)
        self.thunks.append((future, callback))
        self.estimated_size += size
        self.last_append_time = now_ms
        return future

    def is_full(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#isFull."""
        return self.closed_for_appends or (bool(self.records) and self.estimated_size >= self.write_limit)

    def close_for_record_appends(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#closeForRecordAppends."""
        self.closed_for_appends = True

    def records_for_request(self) -> MemoryRecords:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#records (built once)."""
        if self._built is None:
            self.closed_for_appends = True
            self._built = MemoryRecords.with_records(self.records, compression=self.compression,
                                                     producer_id=self.producer_id, producer_epoch=self.producer_epoch,
                                                     base_sequence=self.base_sequence)
        return self._built

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#setProducerState (idempotence)."""
        self.producer_id, self.producer_epoch, self.base_sequence = producer_id, producer_epoch, base_sequence

    def reset_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#resetProducerState.

        A renumbered batch (epoch bump, or a failed batch ahead of it): the new stamp, and the
        v2 batch is written again with it when next drained.
        """
        self.reopened = True
        self.set_producer_state(producer_id, producer_epoch, base_sequence)
        self._built = None

    def sequence_has_been_reset(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#sequenceHasBeenReset.

        True from a renumbering until the batch is next drained (``close`` clears it).
        """
        return self.reopened

    def close(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#close.

        1. The v2 batch is built (again, after a renumbering). 2. It is no longer reopened.
        """
        self.records_for_request()
        self.reopened = False

    def last_sequence(self) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#lastSequence."""
        return self.base_sequence + self.record_count - 1

    def in_retry(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#inRetry."""
        return self.retry

    def has_sequence(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#hasSequence."""
        return self.base_sequence != -1

    @property
    def record_count(self) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#recordCount."""
        return len(self.records)

    def has_reached_delivery_timeout(self, delivery_timeout_ms: int, now_ms: int) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#hasReachedDeliveryTimeout."""
        return delivery_timeout_ms <= now_ms - self.created_ms

    def reenqueued(self, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#reenqueued."""
        self.attempts += 1
        self.last_attempt_ms = max(self.last_append_time, now_ms)
        self.last_append_time = max(self.last_append_time, now_ms)
        self.retry = True

    def waited_time_ms(self, now_ms: int) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#waitedTimeMs."""
        return max(0, now_ms - self.last_attempt_ms)

    def maybe_update_leader_epoch(self, latest_leader_epoch: int | None) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#maybeUpdateLeaderEpoch (KIP-951).

        1. A known epoch newer than the one on record (or the first one) becomes the batch's,
        2. and the current attempt count is remembered as the attempt the leader changed at.
        """
        # 1. Only a newer epoch counts.
        if latest_leader_epoch is not None and (self.current_leader_epoch is None
                                                or self.current_leader_epoch < latest_leader_epoch):
            # 2. Remember at which attempt it was first seen.
            self.attempts_when_leader_last_changed = self.attempts
            self.current_leader_epoch = latest_leader_epoch

    def has_leader_changed_for_the_ongoing_retry(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#hasLeaderChangedForTheOngoingRetry.

        True for a retry (one attempt or more) whose leader epoch moved on since the last attempt.
        """
        # 1. A first attempt is no retry.
        if self.attempts < 1:
            return False
        # 2. The epoch changed at this very attempt.
        return self.attempts == self.attempts_when_leader_last_changed

    def drained(self, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#drained."""
        self.drained_ms = max(self.drained_ms, now_ms)

    def is_done(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#isDone."""
        return self.final_state is not None

    def done(self, base_offset: int, log_append_time: int, error: BaseException | None,
             record_exceptions: Callable[[int], BaseException] | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#done (and #completeExceptionally).

        Completes every record's future and fires the callbacks, once; a second completion
        (a late response for a batch that already expired) is ignored and returns False. A
        failed batch may give each record its own exception (``record_exceptions(index)``).
        """
        # 1. Only the first completion counts.
        if self.final_state is not None:
            return False
        self.final_state = "FAILED" if error is not None else "SUCCEEDED"
        if error is not None and record_exceptions is None:
            record_exceptions = lambda _index: error  # noqa: E731
        # 2. Set the shared result, then run the callbacks in record order.
        self.produce_future.set(base_offset, log_append_time, error, record_exceptions)
        self.produce_future.done()
        for i, (future, callback) in enumerate(self.thunks):
            if callback is None:
                continue
            if record_exceptions is not None:
                callback(None, record_exceptions(i))
            else:
                callback(future.value(), None)
        return True

    def __repr__(self) -> str:
        return f"ProducerBatch({self.topic_partition}, records={len(self.records)}, attempts={self.attempts})"


@dataclass(slots=True)
class RecordAppendResult:
    """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator.RecordAppendResult."""

    future: FutureRecordMetadata
    batch_is_full: bool
    new_batch_created: bool
    appended_bytes: int


@dataclass(slots=True)
class ReadyCheckResult:
    """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator.ReadyCheckResult."""

    ready_nodes: set[int]
    next_ready_check_delay_ms: float
    unknown_leader_topics: set[str]


class RecordAccumulator:
    """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator.

    One deque of batches per partition. Calls are synchronous: with one event loop each is
    atomic, which is what Kafka's per-deque locks give it.
    """

    def __init__(self, batch_size: int, linger_ms: int, retry_backoff_ms: int, delivery_timeout_ms: int,
                 compression: CompressionType = CompressionType.NONE) -> None:
        self.batch_size = batch_size
        self.compression = compression
        # The idempotent producer's TransactionManager (None: idempotence off).
        self.transaction_manager = None
        self.linger_ms = linger_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        self.batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        self.incomplete: set[ProducerBatch] = set()
        self.muted: set[TopicPartition] = set()
        self.flushes_in_progress = 0
        self.closed = False
        self.drain_index: dict[int, int] = {}
        self.next_batch_expiry_time_ms = float("inf")

    def append(self, tp: TopicPartition, record: SimpleRecord, callback: Callback | None, now_ms: int) -> RecordAppendResult:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#append."""
        dq = self.batches.setdefault(tp, deque())
        # 1. Try the last batch of the partition.
        if dq:
            last = dq[-1]
            before = last.estimated_size
            future = last.try_append(record, callback, now_ms)
            if future is not None:
                return RecordAppendResult(future, len(dq) > 1 or last.is_full(), False, last.estimated_size - before)
            last.close_for_record_appends()
        # 2. No room: a new batch sized for at least this record.
        record_size = RECORD_BATCH_OVERHEAD + size_in_bytes(0, 0, record.key, record.value, record.headers)
        batch = ProducerBatch(tp, max(self.batch_size, record_size), now_ms, self.compression)
        future = batch.try_append(record, callback, now_ms)
        assert future is not None, "the first record always fits a new batch"
        dq.append(batch)
        self.incomplete.add(batch)
        return RecordAppendResult(future, len(dq) > 1 or batch.is_full(), True, batch.estimated_size)

    def ready(self, cluster: MetadataSnapshot, now_ms: int) -> ReadyCheckResult:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#ready (and #partitionReady, #batchReady).

        A leader is ready when one of its partitions has a sendable first batch: full, older
        than linger.ms, or a flush or close is on, and not backing off after a retry (a retry
        whose partition has a newer leader epoch does not back off).
        """
        ready_nodes: set[int] = set()
        next_delay = float("inf")
        unknown_leader_topics: set[str] = set()
        exhausted = self.flushes_in_progress > 0 or self.closed
        for tp, dq in self.batches.items():
            if not dq:
                continue
            # 1. The head batch: how long it waited, and whether it backs off (it first learns
            #    the partition's leader epoch from the metadata).
            leader = cluster.leader_for(tp)
            batch = dq[0]
            waited = batch.waited_time_ms(now_ms)
            batch.maybe_update_leader_epoch(cluster.leader_epoch_for(tp))
            backing_off = self.should_backoff(batch.has_leader_changed_for_the_ongoing_retry(), batch, waited)
            full = len(dq) > 1 or batch.is_full()
            # 2. Partitions without a known leader make the caller refresh metadata.
            if leader is None:
                unknown_leader_topics.add(tp.topic)
                continue
            if leader in ready_nodes or tp in self.muted:
                continue
            # 3. Is the head batch sendable now, and if not, when (#batchReady)?
            time_to_wait = self.retry_backoff_ms if backing_off else self.linger_ms
            expired = waited >= time_to_wait
            if (full or expired or exhausted) and not backing_off:
                ready_nodes.add(leader)
            else:
                next_delay = min(next_delay, max(time_to_wait - waited, 0))
        return ReadyCheckResult(ready_nodes, next_delay, unknown_leader_topics)

    def should_backoff(self, has_leader_changed: bool, batch: ProducerBatch, waited_time_ms: int) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#shouldBackoff.

        1. A retried batch waits out the retry backoff since its last attempt, 2. unless its
        partition's leader changed for this retry (KIP-951: the new leader is tried at once).
        """
        # 1. Still within the retry backoff?
        should_wait_more = batch.attempts > 0 and waited_time_ms < self.retry_backoff_ms
        # 2. Not when the leader changed.
        return not has_leader_changed and should_wait_more

    def drain(self, cluster: MetadataSnapshot, nodes: Iterable[int], max_size: int, now_ms: int) -> dict[int, list[ProducerBatch]]:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#drain (and #drainBatchesForOneNode).

        For each ready leader, at most one batch per partition up to ``max_size`` bytes per
        request (the first batch always goes), starting where the last drain of that node
        stopped so no partition starves.
        """
        drained: dict[int, list[ProducerBatch]] = {}
        for node in nodes:
            # 1. The node's partitions in the metadata's order (Cluster#partitionsForNode); the
            #    walk starts at the partition where the node's last drain stopped, and the index
            #    kept is that of the last partition looked at (drainBatchesForOneNode).
            parts = [tp for tp in cluster.partitions if cluster.leader_for(tp) == node]
            ready: list[ProducerBatch] = []
            size = 0
            start = self.drain_index.get(node, 0) % max(len(parts), 1)
            for i in range(len(parts)):
                tp = parts[(start + i) % len(parts)]
                self.drain_index[node] = (start + i) % len(parts)
                dq = self.batches.get(tp)
                # 2. Skip muted partitions, empty queues and batches still backing off (a retry
                #    whose partition has a newer leader epoch does not back off).
                if tp in self.muted or not dq:
                    continue
                first = dq[0]
                first.maybe_update_leader_epoch(cluster.leader_epoch_for(tp))
                if self.should_backoff(first.has_leader_changed_for_the_ongoing_retry(), first, first.waited_time_ms(now_ms)):
                    continue
                # 3. Stop before the request grows past max_size (but send at least one batch),
                #    or when the idempotent producer's sequences forbid this batch now (Kafka
                #    stops the node's drain there, not only the partition's).
                if size + first.estimated_size > max_size and ready:
                    break
                if self.should_stop_drain_batches_for_partition(first, tp):
                    break
                # 4. An idempotent producer stamps a batch with its id, epoch and the partition's
                #    next sequence when it first leaves (a retried batch keeps its stamp; a
                #    partition left on an older id or epoch starts again at 0), and tracks it as
                #    in flight until it completes.
                tm = self.transaction_manager
                if tm is not None and not first.has_sequence():
                    tm.maybe_update_producer_id_and_epoch(tp)
                    first.set_producer_state(tm.producer_id, tm.producer_epoch, tm.sequence_number(tp))
                    tm.increment_sequence_number(tp, first.record_count)
                    tm.add_in_flight_batch(first)
                dq.popleft()
                first.close()
                size += first.estimated_size
                first.drained(now_ms)
                ready.append(first)
            drained[node] = ready
        return drained

    def should_stop_drain_batches_for_partition(self, first: ProducerBatch, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#shouldStopDrainBatchesForPartition.

        0. Not while the producer is in its fatal state (TransactionManager#isSendToPartitionAllowed).
        1. No producer id yet: nothing can be stamped. 2. A new batch waits while the partition
        still has batches in flight under an older id or epoch (sequence 0 of the new epoch
        must not overtake them), 3. and while the partition has an unresolved sequence (a batch
        that expired after being sent). 4. A retried batch (it has a sequence) waits until it is
        the first in flight of its partition: retries go one at a time, in sequence order.
        """
        tm = self.transaction_manager
        if tm is None:
            return False
        # 0.-1. Allowed to send, with a producer id.
        if tm.has_fatal_error() or not tm.has_producer_id():
            return True
        # 2.-3. A batch not yet stamped.
        if not first.has_sequence():
            if tm.has_inflight_batches(tp) and tm.has_stale_producer_id_and_epoch(tp):
                return True
            if tm.has_unresolved_sequence(tp):
                return True
        # 4. A retried batch.
        first_in_flight = tm.first_in_flight_sequence(tp)
        return first_in_flight != -1 and first.has_sequence() and first.base_sequence != first_in_flight

    def reenqueue(self, batch: ProducerBatch, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#reenqueue.

        Back to the head of its partition queue, or, for an idempotent producer, to its place
        by sequence among the other retried batches.
        """
        batch.reenqueued(now_ms)
        dq = self.batches.setdefault(batch.topic_partition, deque())
        if self.transaction_manager is not None:
            self.insert_in_sequence_order(dq, batch)
        else:
            dq.appendleft(batch)

    def insert_in_sequence_order(self, dq: deque[ProducerBatch], batch: ProducerBatch) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#insertInSequenceOrder.

        Several batches of a partition were in flight and come back for a retry one at a time,
        in any order; the queue must stay in sequence order. 1. The batch must have a sequence
        and be tracked in flight. 2. The retried batches with a lower sequence at the head of
        the queue stay ahead of it; it goes right after them (before any batch never sent, or
        with a higher sequence).
        """
        # 1. Only a stamped, tracked batch comes back.
        if not batch.has_sequence():
            raise IllegalStateException("Trying to re-enqueue a batch which doesn't have a sequence even though "
                                        "idempotency is enabled.")
        if not self.transaction_manager.has_inflight_batches(batch.topic_partition):
            raise IllegalStateException("We are re-enqueueing a batch which is not tracked as part of the in flight "
                                        f"requests. batch.topicPartition: {batch.topic_partition}; batch.baseSequence: "
                                        f"{batch.base_sequence}")
        # 2. Skip the lower sequences at the head, insert, put them back in front.
        ahead: list[ProducerBatch] = []
        while dq and dq[0].has_sequence() and dq[0].base_sequence < batch.base_sequence:
            ahead.append(dq.popleft())
        dq.appendleft(batch)
        for earlier in reversed(ahead):
            dq.appendleft(earlier)

    def expired_batches(self, now_ms: int) -> list[ProducerBatch]:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#expiredBatches."""
        expired: list[ProducerBatch] = []
        for dq in self.batches.values():
            while dq:
                batch = dq[0]
                if not batch.has_reached_delivery_timeout(self.delivery_timeout_ms, now_ms):
                    self.next_batch_expiry_time_ms = min(self.next_batch_expiry_time_ms, batch.created_ms + self.delivery_timeout_ms)
                    break
                dq.popleft()
                batch.close_for_record_appends()
                expired.append(batch)
        return expired

    def deallocate(self, batch: ProducerBatch) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#deallocate."""
        self.incomplete.discard(batch)

    def get_deque(self, tp: TopicPartition) -> deque[ProducerBatch] | None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#getDeque."""
        return self.batches.get(tp)

    def mute_partition(self, tp: TopicPartition) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#mutePartition."""
        self.muted.add(tp)

    def unmute_partition(self, tp: TopicPartition) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#unmutePartition."""
        self.muted.discard(tp)

    def has_incomplete(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#hasIncomplete."""
        return bool(self.incomplete)

    def flush_in_progress(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#flushInProgress."""
        return self.flushes_in_progress > 0

    def has_undrained(self) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#hasUndrained."""
        return any(self.batches.values())

    def begin_flush(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#beginFlush."""
        self.flushes_in_progress += 1

    async def await_flush_completion(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#awaitFlushCompletion.

        Waits for every batch that was incomplete when the flush began; errors are left in
        the futures.
        """
        try:
            for batch in list(self.incomplete):
                await batch.produce_future.wait()
        finally:
            self.flushes_in_progress -= 1

    def abort_incomplete_batches(self, error: BaseException) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#abortIncompleteBatches."""
        for batch in list(self.incomplete):
            dq = self.batches.get(batch.topic_partition)
            if dq is not None and batch in dq:
                dq.remove(batch)
            batch.done(-1, -1, error)
            self.deallocate(batch)
