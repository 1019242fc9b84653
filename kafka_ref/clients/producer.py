"""The producer: records are batched per partition and sent to partition leaders.

Mirrors org.apache.kafka.clients.producer.KafkaProducer and its internals RecordAccumulator,
ProducerBatch, Sender, ProduceRequestResult and FutureRecordMetadata (Kafka 3.x), without
idempotence or transactions (as with ``enable.idempotence=false``: no producer id, no sequence
numbers, so a retry after a lost response can duplicate a batch, as in Kafka).

Flow: ``send_nowait`` finds the topic's partitions in the client metadata, picks a partition
(``partitioner.py``), and appends the record to the last open batch of that partition in the
``RecordAccumulator``. The ``Sender`` task drains batches that are full, have lingered
``linger_ms``, or are flushed, into one ProduceRequest per leader, and completes each record's
``FutureRecordMetadata`` from the response. Retriable errors (NOT_LEADER_OR_FOLLOWER,
LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, lost
connections and timeouts) put the batch back at the head of its partition queue after
``retry_backoff_ms``; those meaning stale metadata also request a metadata refresh. A batch
older than ``delivery_timeout_ms`` fails with TimeoutException; other errors fail it with the
Kafka exception for the code.

Differences from Kafka kept on purpose: the producer runs as an ``async with`` block (its
Sender is a task); a record sent before its topic's metadata is known waits inside the
producer (in order, up to ``max_block_ms``) instead of blocking the caller; the retry backoff
is constant (no KIP-580 exponential backoff); a batch rejected with MESSAGE_TOO_LARGE fails
instead of being split; ``buffer.memory`` is not modelled.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import anyio

from kafka_ref.clients.client_metadata import Metadata, MetadataSnapshot, NetworkClient, client_logger
from kafka_ref.clients.partitioner import BuiltInPartitioner, DefaultPartitioner
from kafka_ref.common.errors import (
    ApiException,
    ConfigException,
    Errors,
    InvalidMetadataException,
    KafkaException,
    NetworkException,
    RecordTooLargeException,
    RetriableException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.records import RECORD_BATCH_OVERHEAD, MemoryRecords, SimpleRecord
from kafka_ref.common.records.record import size_in_bytes
from kafka_ref.common.requests.produce import ProduceRequest, ProduceResponse
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Network, NetworkTimeoutException

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


class ProduceRequestResult:
    """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult.

    The outcome of one batch, shared by the futures of its records: base offset, log append
    time, or the error; ``wait()`` returns once it is set.
    """

    def __init__(self, topic_partition: TopicPartition) -> None:
        self.topic_partition = topic_partition
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self._done = anyio.Event()

    def set(self, base_offset: int, log_append_time: int, error: BaseException | None) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#set."""
        self.base_offset, self.log_append_time, self.error = base_offset, log_append_time, error

    def done(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProduceRequestResult#done: wake the waiters."""
        self._done.set()

    @property
    def completed(self) -> bool:
        return self._done.is_set()

    async def wait(self) -> None:
        await self._done.wait()


class FutureRecordMetadata:
    """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata.

    The handle ``send_nowait`` returns: ``await`` it for the RecordMetadata (or the Kafka
    exception). ``done()``, ``value()`` and ``exception()`` read it without waiting. A future
    may be *chained* to the one that replaced it (a record that waited for metadata), as
    Kafka chains futures of split batches.
    """

    def __init__(self, result: ProduceRequestResult, batch_index: int, create_timestamp: int) -> None:
        self.result = result
        self.batch_index = batch_index
        self.create_timestamp = create_timestamp
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
        """The error the record failed with (None while pending or after success)."""
        if self.next is not None:
            return self.next.exception()
        return self.result.error if self.result.completed else None

    def value(self) -> RecordMetadata:
        """Mirrors org.apache.kafka.clients.producer.internals.FutureRecordMetadata#valueOrError."""
        if self.next is not None:
            return self.next.value()
        if not self.result.completed:
            raise KafkaException("the record has not been acknowledged yet; await the future")
        if self.result.error is not None:
            raise self.result.error
        base = self.result.base_offset
        offset = -1 if base == -1 else base + self.batch_index
        timestamp = self.create_timestamp if self.result.log_append_time == -1 else self.result.log_append_time
        tp = self.result.topic_partition
        return RecordMetadata(tp.topic, tp.partition, offset, timestamp)

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
    built when the batch is first drained and the same bytes are resent on retries.
    """

    def __init__(self, tp: TopicPartition, write_limit: int, now_ms: int) -> None:
        self.topic_partition = tp
        self.write_limit = write_limit
        self.created_ms = now_ms
        self.last_attempt_ms = now_ms
        self.last_append_time = now_ms
        self.drained_ms = now_ms
        self.attempts = 0
        self.retry = False
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
        future = FutureRecordMetadata(self.produce_future, len(self.records), record.timestamp)
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
            self._built = MemoryRecords.with_records(self.records)
        return self._built

    @property
    def record_count(self) -> int:
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

    def drained(self, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#drained."""
        self.drained_ms = max(self.drained_ms, now_ms)

    def is_done(self) -> bool:
        return self.final_state is not None

    def done(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.ProducerBatch#done.

        Completes every record's future and fires the callbacks, once; a second completion
        (a late response for a batch that already expired) is ignored and returns False.
        """
        # 1. Only the first completion counts.
        if self.final_state is not None:
            return False
        self.final_state = "FAILED" if error is not None else "SUCCEEDED"
        # 2. Set the shared result, then run the callbacks in record order.
        self.produce_future.set(base_offset, log_append_time, error)
        self.produce_future.done()
        for future, callback in self.thunks:
            if callback is None:
                continue
            if error is not None:
                callback(None, error)
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

    def __init__(self, batch_size: int, linger_ms: int, retry_backoff_ms: int, delivery_timeout_ms: int) -> None:
        self.batch_size = batch_size
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
        batch = ProducerBatch(tp, max(self.batch_size, record_size), now_ms)
        future = batch.try_append(record, callback, now_ms)
        assert future is not None, "the first record always fits a new batch"
        dq.append(batch)
        self.incomplete.add(batch)
        return RecordAppendResult(future, len(dq) > 1 or batch.is_full(), True, batch.estimated_size)

    def ready(self, cluster: MetadataSnapshot, now_ms: int) -> ReadyCheckResult:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#ready (and #partitionReady).

        A leader is ready when one of its partitions has a sendable first batch: full, older
        than linger.ms (or than the retry backoff after a retry), or a flush or close is on.
        """
        ready_nodes: set[int] = set()
        next_delay = float("inf")
        unknown_leader_topics: set[str] = set()
        exhausted = self.flushes_in_progress > 0 or self.closed
        for tp, dq in self.batches.items():
            if not dq:
                continue
            # 1. Partitions without a known leader make the caller refresh metadata.
            leader = cluster.leader_for(tp)
            if leader is None:
                unknown_leader_topics.add(tp.topic)
                continue
            if leader in ready_nodes or tp in self.muted:
                continue
            # 2. Is the head batch sendable now, and if not, when?
            batch = dq[0]
            waited = now_ms - batch.last_attempt_ms
            backing_off = batch.attempts > 0 and waited < self.retry_backoff_ms
            time_to_wait = self.retry_backoff_ms if backing_off else self.linger_ms
            full = len(dq) > 1 or batch.is_full()
            expired = waited >= time_to_wait
            if (full or expired or exhausted) and not backing_off:
                ready_nodes.add(leader)
            else:
                next_delay = min(next_delay, max(time_to_wait - waited, 0))
        return ReadyCheckResult(ready_nodes, next_delay, unknown_leader_topics)

    def drain(self, cluster: MetadataSnapshot, nodes: Iterable[int], max_size: int, now_ms: int) -> dict[int, list[ProducerBatch]]:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#drain (and #drainBatchesForOneNode).

        For each ready leader, at most one batch per partition up to ``max_size`` bytes per
        request (the first batch always goes), starting where the last drain of that node
        stopped so no partition starves.
        """
        drained: dict[int, list[ProducerBatch]] = {}
        for node in nodes:
            parts = [tp for tp in self.batches if cluster.leader_for(tp) == node]
            ready: list[ProducerBatch] = []
            size = 0
            start = self.drain_index.get(node, 0) % max(len(parts), 1)
            for i in range(len(parts)):
                tp = parts[(start + i) % len(parts)]
                self.drain_index[node] = (start + i + 1) % len(parts)
                dq = self.batches[tp]
                # 1. Skip muted partitions, empty queues and batches still backing off.
                if tp in self.muted or not dq:
                    continue
                first = dq[0]
                if first.attempts > 0 and now_ms - first.last_attempt_ms < self.retry_backoff_ms:
                    continue
                # 2. Stop before the request grows past max_size (but send at least one batch).
                if size + first.estimated_size > max_size and ready:
                    break
                dq.popleft()
                first.records_for_request()
                size += first.estimated_size
                first.drained(now_ms)
                ready.append(first)
            drained[node] = ready
        return drained

    def reenqueue(self, batch: ProducerBatch, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.RecordAccumulator#reenqueue: back to the head."""
        batch.reenqueued(now_ms)
        self.batches.setdefault(batch.topic_partition, deque()).appendleft(batch)

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


# --------------------------------------------------------------------------------------------
# The sender task
# --------------------------------------------------------------------------------------------


class Sender:
    """Mirrors org.apache.kafka.clients.producer.internals.Sender (the producer's I/O task).

    Each round: find ready leaders, drain their batches, fail expired ones, send one
    ProduceRequest per leader (a task each; at most ``max_in_flight`` per leader), refresh
    metadata when due, then sleep until woken or until the next batch can become ready.
    """

    def __init__(self, producer: KafkaProducer) -> None:
        self.producer = producer
        self.client = producer.client
        self.metadata = producer.metadata
        self.accumulator = producer.accumulator
        self.time = producer.time
        self.guarantee_message_order = producer.max_in_flight == 1
        self.running = True
        self.forced_close = False
        self.in_flight_requests: dict[int, int] = {}
        self.in_flight_batches: dict[TopicPartition, list[ProducerBatch]] = {}
        self.finished = anyio.Event()
        self._wakeup_flag = False
        self._wakeup_event = anyio.Event()
        self.client.metadata_listeners.append(self.wakeup)
        self._log = client_logger(client_id=producer.client_id)

    def wakeup(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#wakeup."""
        self._wakeup_flag = True
        self._wakeup_event.set()

    def initiate_close(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#initiateClose: send what is left, then stop."""
        self.accumulator.closed = True
        self.running = False
        self.wakeup()

    def force_close(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#forceClose: stop now."""
        self.forced_close = True
        self.initiate_close()

    async def run(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#run."""
        try:
            # 1. The main loop.
            while self.running:
                await self.run_once(task_group)
            # 2. Closing: keep sending until nothing is left (unless forced).
            while not self.forced_close and (self.accumulator.has_undrained() or sum(self.in_flight_requests.values()) > 0):
                await self.run_once(task_group)
            # 3. Forced: whatever is left fails.
            if self.forced_close:
                self.accumulator.abort_incomplete_batches(KafkaException("Producer is closed forcefully."))
        finally:
            self.finished.set()

    async def run_once(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#runOnce (with NetworkClient#poll's metadata step)."""
        now = self.time.milliseconds()
        # 1. Send what is ready.
        poll_timeout = self.send_producer_data(now, task_group)
        # 2. Metadata: refresh when due (in its own task; it wakes us when done).
        if not self.client.metadata_fetch_in_progress:
            due_in = self.metadata.time_to_next_update(now)
            if due_in == 0:
                task_group.start_soon(self._update_metadata)
            else:
                poll_timeout = min(poll_timeout, due_in)
        # 3. Sleep until woken (append, response, metadata) or the next deadline.
        await self._poll(poll_timeout)

    def send_producer_data(self, now: int, task_group: anyio.abc.TaskGroup) -> float:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#sendProducerData; returns the poll timeout."""
        cluster = self.metadata.fetch()
        # 1. Which leaders have sendable data?
        result = self.accumulator.ready(cluster, now)
        if result.unknown_leader_topics:
            self.metadata.add_topics(result.unknown_leader_topics)
            self.metadata.request_update()
        # 2. Leaders with a full in-flight window wait for a response first.
        ready_nodes = {n for n in result.ready_nodes if self.in_flight_requests.get(n, 0) < self.producer.max_in_flight}
        # 3. Drain; keep partitions muted while a batch is in flight if ordering must hold.
        batches = self.accumulator.drain(cluster, sorted(ready_nodes), self.producer.max_request_size, now)
        for node_batches in batches.values():
            for batch in node_batches:
                self.in_flight_batches.setdefault(batch.topic_partition, []).append(batch)
                if self.guarantee_message_order:
                    self.accumulator.muted.add(batch.topic_partition)
        # 4. Expire batches past the delivery timeout, queued or in flight.
        self.accumulator.next_batch_expiry_time_ms = float("inf")
        expired = self.accumulator.expired_batches(now) + self.get_expired_inflight_batches(now)
        for batch in expired:
            self.fail_batch(batch, TimeoutException(
                f"Expiring {batch.record_count} record(s) for {batch.topic_partition}:{now - batch.created_ms} ms "
                f"has passed since batch creation"))
        # 5. Send one request per leader.
        for node, node_batches in batches.items():
            if node_batches:
                self.send_produce_request(node, node_batches, task_group)
        poll_timeout = min(result.next_ready_check_delay_ms, self.accumulator.next_batch_expiry_time_ms - now)
        if any(batches.values()):
            poll_timeout = 0
        return max(poll_timeout, 0)

    def get_expired_inflight_batches(self, now: int) -> list[ProducerBatch]:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#getExpiredInflightBatches."""
        expired: list[ProducerBatch] = []
        for tp, batches in self.in_flight_batches.items():
            for batch in list(batches):
                if batch.has_reached_delivery_timeout(self.accumulator.delivery_timeout_ms, now):
                    batches.remove(batch)
                    expired.append(batch)
                else:
                    self.accumulator.next_batch_expiry_time_ms = min(
                        self.accumulator.next_batch_expiry_time_ms, batch.created_ms + self.accumulator.delivery_timeout_ms)
        return expired

    def send_produce_request(self, node: int, batches: list[ProducerBatch], task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#sendProduceRequest."""
        producer = self.producer
        # 1. One request for all the node's batches.
        request = ProduceRequest.build(
            acks=producer.acks, timeout_ms=producer.request_timeout_ms,
            records={b.topic_partition: b.records_for_request() for b in batches},
        )
        envelope = self.client.post(node, request)
        # 2. acks=0: nothing comes back; the batches are done once the request is out.
        if producer.acks == 0:
            now = self.time.milliseconds()
            for batch in batches:
                if envelope.error is not None:
                    self.complete_batch(batch, Errors.NETWORK_EXCEPTION, -1, -1, f"Disconnected from node {node}", now)
                else:
                    self.complete_batch(batch, Errors.NONE, -1, -1, None, now)
            return
        # 3. Otherwise a task waits for the response (or the disconnect / timeout).
        self.in_flight_requests[node] = self.in_flight_requests.get(node, 0) + 1
        task_group.start_soon(self._await_produce_response, node, envelope, batches)

    async def _await_produce_response(self, node: int, envelope: Any, batches: list[ProducerBatch]) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#handleProduceResponse."""
        try:
            try:
                response: ProduceResponse = await self.client.wait(envelope)
            except (NetworkException, TimeoutException) as exc:
                # 1. Lost connection or request timeout: every batch gets NETWORK_EXCEPTION.
                suffix = " due to timeout" if isinstance(exc, NetworkTimeoutException) else ""
                now = self.time.milliseconds()
                for batch in batches:
                    self.complete_batch(batch, Errors.NETWORK_EXCEPTION, -1, -1, f"Disconnected from node {node}{suffix}", now)
                return
            # 2. One partition result per batch.
            now = self.time.milliseconds()
            results = response.responses_by_partition()
            for batch in batches:
                r = results.get(batch.topic_partition)
                if r is None:
                    self.complete_batch(batch, Errors.UNKNOWN_SERVER_ERROR, -1, -1, "no result for the partition in the response", now)
                else:
                    self.complete_batch(batch, Errors.for_code(r.error_code), r.base_offset, r.log_append_time_ms, r.error_message, now)
        finally:
            self.in_flight_requests[node] -= 1
            self.wakeup()

    def complete_batch(self, batch: ProducerBatch, error: Errors, base_offset: int, log_append_time: int,
                       error_message: str | None, now: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#completeBatch."""
        tp = batch.topic_partition
        if error is not Errors.NONE:
            exc = error.exception(error_message)
            # 1. Retriable and within budget: back to the head of the queue.
            if self.can_retry(batch, exc, now):
                self._log.warning("produce_retry", topic_partition=str(tp), error=error.name,
                                  attempts_left=self.producer.retries - batch.attempts - 1)
                self._remove_in_flight(batch)
                self.accumulator.reenqueue(batch, now)
            else:
                # 2. Otherwise the records fail with the Kafka exception for the code.
                if error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    exc = TopicAuthorizationException(f"Not authorized to access topics: [{tp.topic}]")
                self.fail_batch(batch, exc)
            # 3. Stale metadata behind the error: refresh it.
            if isinstance(exc, InvalidMetadataException):
                self.metadata.request_update()
        else:
            # 4. Success.
            self._remove_in_flight(batch)
            if batch.done(base_offset, log_append_time, None):
                self.accumulator.deallocate(batch)
        # 5. The partition may send its next batch.
        if self.guarantee_message_order:
            self.accumulator.muted.discard(tp)

    def can_retry(self, batch: ProducerBatch, exc: BaseException | None, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#canRetry."""
        return (not batch.has_reached_delivery_timeout(self.accumulator.delivery_timeout_ms, now)
                and batch.attempts < self.producer.retries
                and not batch.is_done()
                and isinstance(exc, RetriableException))

    def fail_batch(self, batch: ProducerBatch, exc: BaseException) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#failBatch."""
        self._remove_in_flight(batch)
        if batch.done(-1, -1, exc):
            self.accumulator.deallocate(batch)

    def _remove_in_flight(self, batch: ProducerBatch) -> None:
        batches = self.in_flight_batches.get(batch.topic_partition)
        if batches is not None and batch in batches:
            batches.remove(batch)

    async def _update_metadata(self) -> None:
        await self.client.maybe_update_metadata()

    async def _poll(self, timeout_ms: float) -> None:
        if self._wakeup_flag:
            self._wakeup_flag = False
            await anyio.lowlevel.checkpoint()
            return
        self._wakeup_event = anyio.Event()
        with anyio.move_on_after(None if timeout_ms == float("inf") else timeout_ms / 1000.0):
            await self._wakeup_event.wait()
        self._wakeup_flag = False


# --------------------------------------------------------------------------------------------
# The producer
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _AwaitingRecord:
    """A record sent before its topic's metadata arrived (see KafkaProducer#waitOnMetadata)."""

    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple
    timestamp: int | None
    callback: Callback | None
    deadline_ms: int
    placeholder: FutureRecordMetadata


class KafkaProducer:
    """Mirrors org.apache.kafka.clients.producer.KafkaProducer.

    Use as ``async with Producer(network, [0, 1, 2]) as producer:``; the Sender runs as a
    task of the block and ``close()`` (called on exit) sends what is buffered first.
    ``acks`` is -1 ("all"), 1 or 0. ``partitioner`` is ``"round_robin"`` (default: keyed
    records hash, unkeyed ones go round robin over partitions with a leader — Kafka's
    DefaultPartitioner up to 2.3) or ``"sticky"`` (Kafka 3.3+'s BuiltInPartitioner); see
    partitioner.py.
    """

    def __init__(
        self,
        network: Network,
        bootstrap_brokers: Iterable[int],
        *,
        client_id: str = "producer-1",
        acks: int | str = -1,
        linger_ms: int = 0,
        batch_size: int = 16384,
        request_timeout_ms: int = 30000,
        retries: int = 2**31 - 1,
        retry_backoff_ms: int = 100,
        delivery_timeout_ms: int = 120000,
        max_in_flight: int = 1,
        max_block_ms: int = 60000,
        max_request_size: int = 1048576,
        metadata_max_age_ms: int = 300000,
        partitioner: str = "round_robin",
        rng: random.Random | None = None,
        time: Time | None = None,
    ) -> None:
        # 1. Validate the configuration the way ProducerConfig does (ConfigException names the key).
        acks = -1 if acks == "all" else acks
        if acks not in (-1, 0, 1):
            raise ConfigException("acks", acks, "String must be one of: all, -1, 0, 1")
        for name, value, minimum in (("linger.ms", linger_ms, 0), ("batch.size", batch_size, 0),
                                     ("request.timeout.ms", request_timeout_ms, 0), ("retries", retries, 0),
                                     ("retry.backoff.ms", retry_backoff_ms, 0), ("max.block.ms", max_block_ms, 0),
                                     ("max.in.flight.requests.per.connection", max_in_flight, 1),
                                     ("max.request.size", max_request_size, 0)):
            if value < minimum:
                raise ConfigException(name, value, f"Value must be at least {minimum}")
        if delivery_timeout_ms < linger_ms + request_timeout_ms:
            raise ConfigException("delivery.timeout.ms", delivery_timeout_ms,
                                  "should be equal to or larger than linger.ms + request.timeout.ms")
        if partitioner not in ("round_robin", "sticky"):
            raise ConfigException("partitioner.class", partitioner, "use 'round_robin' or 'sticky'")
        self.client_id = client_id
        self.acks = acks
        self.linger_ms = linger_ms
        self.batch_size = batch_size
        self.request_timeout_ms = request_timeout_ms
        self.retries = retries
        self.retry_backoff_ms = retry_backoff_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        self.max_in_flight = max_in_flight
        self.max_block_ms = max_block_ms
        self.max_request_size = max_request_size
        self.time = time or Time()
        # 2. Components: metadata, network client, partitioner, accumulator, sender.
        self.metadata = Metadata(retry_backoff_ms, metadata_max_age_ms, topics=())
        self.client = NetworkClient(network, client_id, bootstrap_brokers, self.metadata, time=self.time,
                                    request_timeout_ms=request_timeout_ms)
        self.partitioner: DefaultPartitioner | BuiltInPartitioner = (
            DefaultPartitioner() if partitioner == "round_robin" else BuiltInPartitioner(max(batch_size, 1), rng))
        self.accumulator = RecordAccumulator(batch_size, linger_ms, retry_backoff_ms, delivery_timeout_ms)
        self.sender = Sender(self)
        self._awaiting_metadata: dict[str, deque[_AwaitingRecord]] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False
        self._log = client_logger(client_id=client_id)

    # -- life cycle ------------------------------------------------------------------------

    async def __aenter__(self) -> KafkaProducer:
        self._task_group = await anyio.create_task_group().__aenter__()
        self._task_group.start_soon(self.sender.run, self._task_group, name=f"{self.client_id}-sender")
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        assert self._task_group is not None
        try:
            # 1. A clean exit sends what is buffered; an exception aborts it.
            await self.close(timeout_ms=0 if exc_info[0] is not None else None)
        except BaseException as exc:
            self._task_group.cancel_scope.cancel()
            await self._task_group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        # 2. Stop the remaining tasks (metadata refreshes) and leave the task group.
        self._task_group.cancel_scope.cancel()
        return await self._task_group.__aexit__(*exc_info)

    async def close(self, timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#close(Duration).

        Sends what is buffered (waiting at most ``timeout_ms``, forever when None), then
        stops the Sender; what is still unsent after the timeout fails with KafkaException.
        """
        if self._closed:
            return
        self._closed = True
        if self._task_group is None:
            return
        # 1. Let records waiting for metadata be appended (or fail) first.
        with anyio.move_on_after(None if timeout_ms is None else timeout_ms / 1000.0):
            await self._await_metadata_waiters()
        # 2. Ask the Sender to drain and stop; force it if that takes too long.
        self.sender.initiate_close()
        with anyio.move_on_after(None if timeout_ms is None else timeout_ms / 1000.0):
            await self.sender.finished.wait()
        if not self.sender.finished.is_set():
            self.sender.force_close()
            await self.sender.finished.wait()

    # -- sending ---------------------------------------------------------------------------

    async def send(self, topic: str, value: bytes | None, key: bytes | None = None, partition: int | None = None,
                   headers: Iterable[tuple[str, bytes | None]] = (), timestamp: int | None = None) -> RecordMetadata:
        """Mirrors KafkaProducer#send(record).get(): send one record and wait for its acknowledgement."""
        return await self.send_nowait(topic, value, key, partition, headers, timestamp)

    def send_nowait(self, topic: str, value: bytes | None, key: bytes | None = None, partition: int | None = None,
                    headers: Iterable[tuple[str, bytes | None]] = (), timestamp: int | None = None,
                    callback: Callback | None = None) -> FutureRecordMetadata:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#send / #doSend.

        Buffers the record and returns its future at once. Errors Kafka reports through the
        future (metadata timeout, record too large, produce errors) come through the future
        and ``callback(metadata, exception)``; invalid arguments raise here.
        """
        # 1. Closed producers and malformed records are refused at once.
        if self._closed:
            raise KafkaException("Cannot perform operation after producer has been closed")
        if self._task_group is None:
            raise KafkaException("The producer is not running: use `async with Producer(...) as producer`")
        headers = tuple(headers)
        _validate_record(topic, value, key, partition, headers, timestamp)
        now = self.time.milliseconds()
        placeholder = FutureRecordMetadata(ProduceRequestResult(TopicPartition(topic, -1 if partition is None else partition)), 0, -1)
        record = _AwaitingRecord(topic, partition, key, value, headers, timestamp, callback, now + self.max_block_ms, placeholder)
        # 2. Too large for any request (KafkaProducer#ensureValidRecordSize; reported through the future).
        size = RECORD_BATCH_OVERHEAD + size_in_bytes(0, 0, key, value, headers)
        if size > self.max_request_size:
            return self._fail_record(record, RecordTooLargeException(
                f"The message is {size} bytes when serialized which is larger than {self.max_request_size}, "
                f"which is the value of the max.request.size configuration."))
        # 3. Metadata known and nothing of this topic queued before us: append now.
        if topic not in self._awaiting_metadata and self._metadata_ready(topic, partition):
            return self._do_send(record, now)
        # 4. Otherwise wait for metadata behind earlier records of the topic (KafkaProducer#waitOnMetadata).
        queue = self._awaiting_metadata.get(topic)
        if queue is None:
            queue = self._awaiting_metadata[topic] = deque()
            self._task_group.start_soon(self._wait_on_metadata, topic)
        queue.append(record)
        self.metadata.add_topics([topic])
        self.sender.wakeup()
        return placeholder

    async def flush(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#flush.

        Makes every buffered record sendable at once and waits until each has been
        acknowledged or has failed (failures stay in the futures).
        """
        await self._await_metadata_waiters()
        self.accumulator.begin_flush()
        self.sender.wakeup()
        await self.accumulator.await_flush_completion()

    async def partitions_for(self, topic: str) -> list[Any]:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#partitionsFor (waits for metadata)."""
        deadline = self.time.milliseconds() + self.max_block_ms
        self.metadata.add_topics([topic])
        while not self._metadata_ready(topic, None):
            self.metadata.maybe_throw_exception_for_topic(topic)
            if self.time.milliseconds() >= deadline:
                raise TimeoutException(f"Topic {topic} not present in metadata after {self.max_block_ms} ms.")
            await self.client.await_metadata_update(deadline)
        return self.metadata.fetch().partitions_for_topic(topic)

    # -- internals -------------------------------------------------------------------------

    def _metadata_ready(self, topic: str, partition: int | None) -> bool:
        count = self.metadata.fetch().partition_count(topic)
        return count is not None and (partition is None or partition < count)

    def _do_send(self, record: _AwaitingRecord, now: int) -> FutureRecordMetadata:
        """Mirrors the part of KafkaProducer#doSend after metadata is known."""
        cluster = self.metadata.fetch()
        # 1. Timestamp and partition.
        timestamp = now if record.timestamp is None else record.timestamp
        if record.partition is not None:
            partition = record.partition
        else:
            partition = self.partitioner.partition(record.topic, record.key, cluster)
        # 2. Append; wake the Sender when a batch filled up or a new one started.
        simple = SimpleRecord(record.key, record.value, record.headers, timestamp)
        result = self.accumulator.append(TopicPartition(record.topic, partition), simple, record.callback, now)
        if record.key is None and record.partition is None:
            self.partitioner.on_append(record.topic, partition, result.appended_bytes, cluster)
        if result.batch_is_full or result.new_batch_created:
            self.sender.wakeup()
        return result.future

    def _fail_record(self, record: _AwaitingRecord, error: ApiException | KafkaException) -> FutureRecordMetadata:
        """Mirrors KafkaProducer's FutureFailure path: the error goes to the future and the callback."""
        record.placeholder.result.set(-1, -1, error)
        record.placeholder.result.done()
        if record.callback is not None:
            record.callback(None, error)
        return record.placeholder

    async def _wait_on_metadata(self, topic: str) -> None:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#waitOnMetadata for queued records.

        Refreshes until the topic (and each record's partition) is known, appending queued
        records in order; each record gives up at its own ``max_block_ms`` deadline.
        """
        queue = self._awaiting_metadata[topic]
        try:
            while queue:
                record = queue[0]
                now = self.time.milliseconds()
                # 1. Metadata is there: append and move to the next record.
                if self._metadata_ready(topic, record.partition):
                    queue.popleft()
                    record.placeholder.chain(self._do_send(record, now))
                    record.placeholder.result.done()
                    continue
                # 2. Fatal topic errors and the deadline fail the record.
                try:
                    self.metadata.maybe_throw_exception_for_topic(topic)
                except ApiException as exc:
                    queue.popleft()
                    self._fail_record(record, exc)
                    continue
                if now >= record.deadline_ms:
                    queue.popleft()
                    count = self.metadata.fetch().partition_count(topic)
                    if count is None:
                        message = f"Topic {topic} not present in metadata after {self.max_block_ms} ms."
                    else:
                        message = (f"Partition {record.partition} of topic {topic} with partition count {count} "
                                   f"is not present in metadata after {self.max_block_ms} ms.")
                    self._fail_record(record, TimeoutException(message))
                    continue
                # 3. Otherwise refresh (after the backoff) and look again.
                await self.client.await_metadata_update(record.deadline_ms)
        finally:
            del self._awaiting_metadata[topic]

    async def _await_metadata_waiters(self) -> None:
        for queue in list(self._awaiting_metadata.values()):
            for record in list(queue):
                await record.placeholder.result.wait()


Producer = KafkaProducer


def _validate_record(topic: str, value: Any, key: Any, partition: int | None, headers: tuple, timestamp: int | None) -> None:
    """Mirrors org.apache.kafka.clients.producer.ProducerRecord's constructor checks (plus byte serialization)."""
    if not isinstance(topic, str) or not topic:
        raise KafkaException(f"Topic must be a non-empty string, got {topic!r}")
    for what, data in (("key", key), ("value", value)):
        if data is not None and not isinstance(data, (bytes, bytearray)):
            raise KafkaException(f"The record {what} must be bytes or None (the producer does not serialize), got {type(data).__name__}")
    if partition is not None and partition < 0:
        raise KafkaException(f"Invalid partition: {partition}. Partition number should always be non-negative or null.")
    if timestamp is not None and timestamp < 0:
        raise KafkaException(f"Invalid timestamp: {timestamp}. Timestamp should always be non-negative or null.")
    for header in headers:
        if len(header) != 2 or not isinstance(header[0], str) or not (header[1] is None or isinstance(header[1], bytes)):
            raise KafkaException(f"A header must be a (str, bytes | None) pair, got {header!r}")
