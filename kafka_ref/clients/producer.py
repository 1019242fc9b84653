"""The producer: records are batched per partition and sent to partition leaders.

Mirrors org.apache.kafka.clients.producer.KafkaProducer (Kafka 3.x); its internals live in
record_accumulator.py (RecordAccumulator, ProducerBatch, the futures), sender.py (Sender) and
transaction_manager.py (the idempotent producer's id and sequences). Idempotent by default, as
Kafka 3.x is; with ``enable_idempotence=False`` there is no producer id and no sequence numbers,
so a retry after a lost response can duplicate a batch, as in Kafka. No transactions.

Flow: ``send_nowait`` finds the topic's partitions in the client metadata, picks a partition
(``partitioner.py``), and appends the record to the last open batch of that partition in the
``RecordAccumulator``. The ``Sender`` task drains batches that are full, have lingered
``linger_ms``, or are flushed, into one ProduceRequest per leader, and completes each record's
``FutureRecordMetadata`` from the response. Retriable errors (NOT_LEADER_OR_FOLLOWER,
LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, lost
connections and timeouts) put the batch back at the head of its partition queue after
``retry_backoff_ms``; those meaning stale metadata also request a metadata refresh. A
NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH answer that names the new leader and its epoch
(KIP-951) updates that partition's leader in the metadata at once, and a retried batch whose
partition's leader epoch moved on since its last attempt skips the backoff. A batch
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
from typing import Any, Iterable

import anyio

from kafka_ref.clients.client_metadata import Metadata, PartitionMetadata, client_logger
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.clients.partitioner import BuiltInPartitioner, DefaultPartitioner
from kafka_ref.clients.record_accumulator import (
    Callback,
    FutureRecordMetadata,
    ProduceRequestResult,
    RecordAccumulator,
    RecordMetadata,
)
from kafka_ref.clients.sender import Sender
from kafka_ref.clients.transaction_manager import TransactionManager
from kafka_ref.common.errors import (
    ApiException,
    ConfigException,
    IllegalStateException,
    KafkaException,
    RecordTooLargeException,
    TimeoutException,
)
from kafka_ref.common.records import RECORD_BATCH_OVERHEAD, SimpleRecord
from kafka_ref.common.records.constants import CompressionType
from kafka_ref.common.records.record import record_size_upper_bound
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Network

# --------------------------------------------------------------------------------------------
# The producer
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _AwaitingRecord:
    """A record sent before its topic's metadata arrived (see KafkaProducer#waitOnMetadata).

    ``handle`` is the future the caller already holds; it is chained to the record's real
    future once the record is appended, or failed if the metadata never comes.
    """

    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple
    timestamp: int | None
    callback: Callback | None
    deadline_ms: int
    handle: FutureRecordMetadata


class KafkaProducer:
    """Mirrors org.apache.kafka.clients.producer.KafkaProducer.

    Use as ``async with Producer(network, [0, 1, 2]) as producer:``; the Sender runs as a
    task of the block and ``close()`` (called on exit) sends what is buffered first.
    ``acks`` is -1 ("all", the default), 1 or 0; ``max_in_flight`` (5 by default, as in Kafka)
    bounds the requests in flight per broker. ``partitioner`` is ``"round_robin"`` (default: keyed
    records hash, unkeyed ones go round robin over partitions with a leader — Kafka's
    DefaultPartitioner up to 2.3) or ``"sticky"`` (Kafka 3.3+'s BuiltInPartitioner); see
    partitioner.py. ``enable_idempotence`` is enable.idempotence: on unless set False or unset
    beside acks other than all, retries 0 or more than 5 in flight (Kafka's rule); an idempotent
    producer gets a producer id first and numbers its batches, so a retried batch is never
    written twice, and keeps several batches of a partition in flight in sequence order
    (transaction_manager.py); only ``max_in_flight=1`` holds a partition to one batch in flight. ``compression_type`` is the producer's compression.type (none, gzip,
    snappy, lz4, zstd): each batch is written in that codec, and a topic whose own
    compression.type is "producer" (the default) keeps it.
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
        max_in_flight: int = 5,
        max_block_ms: int = 60000,
        max_request_size: int = 1048576,
        metadata_max_age_ms: int = 300000,
        partitioner: str = "round_robin",
        compression_type: str = "none",
        enable_idempotence: bool | None = None,
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
        # (KafkaProducer#configureDeliveryTimeout: the sum is an int capped at Integer.MAX_VALUE, so
        #  linger.ms and delivery.timeout.ms both Integer.MAX_VALUE is a valid pair.)
        if delivery_timeout_ms < min(linger_ms + request_timeout_ms, 2**31 - 1):
            raise ConfigException("delivery.timeout.ms", delivery_timeout_ms,
                                  "should be equal to or larger than linger.ms + request.timeout.ms")
        if partitioner not in ("round_robin", "sticky"):
            raise ConfigException("partitioner.class", partitioner, "use 'round_robin' or 'sticky'")
        if compression_type not in tuple(CompressionType):
            raise ConfigException("compression.type", compression_type,
                                  "String must be one of: " + ", ".join(CompressionType))
        self.compression_type = CompressionType(compression_type)
        # Idempotence (ProducerConfig#postProcessAndValidateIdempotenceConfigs, Kafka 3.2+): on
        # unless turned off; left unset, a setting it cannot work with turns it off; asked for,
        # such a setting is a ConfigException.
        conflicts = []
        if max_in_flight > 5:
            conflicts.append(("max.in.flight.requests.per.connection", max_in_flight,
                              "Must set max.in.flight.requests.per.connection to at most 5 when using the idempotent producer."))
        if retries == 0:
            conflicts.append(("retries", retries, "Must set retries to non-zero when using the idempotent producer."))
        if acks != -1:
            conflicts.append(("acks", acks, "Must set acks to all in order to use the idempotent producer. "
                                            "Otherwise we cannot guarantee idempotence."))
        if enable_idempotence and conflicts:
            raise ConfigException(*conflicts[0])
        self.enable_idempotence = not conflicts if enable_idempotence is None else bool(enable_idempotence)
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
        self.accumulator = RecordAccumulator(batch_size, linger_ms, retry_backoff_ms, delivery_timeout_ms,
                                             self.compression_type)
        self.transaction_manager = TransactionManager(client_id) if self.enable_idempotence else None
        self.accumulator.transaction_manager = self.transaction_manager
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
        # 2. Stop the remaining tasks (metadata refreshes) and leave the task group. An error
        #    raised by the block itself comes out as itself, not wrapped in the task group's
        #    ExceptionGroup: ``send`` raising TimeoutException inside ``async with`` raises it.
        self._task_group.cancel_scope.cancel()
        try:
            return await self._task_group.__aexit__(*exc_info)
        except BaseExceptionGroup as group:
            if exc_info[1] is not None and all(inner is exc_info[1] for inner in group.exceptions):
                return False
            raise

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
        with anyio.move_on_after(None if timeout_ms is None else timeout_ms / 1000.0):
            # 1. Let records waiting for metadata be appended (or fail) first.
            await self._await_metadata_waiters()
            # 2. Ask the Sender to send what is left and stop.
            self.sender.initiate_close()
            await self.sender.finished.wait()
        # 3. Out of time: whatever is still buffered fails.
        if not self.sender.finished.is_set():
            error = KafkaException("Producer is closed forcefully.")
            for queue in self._awaiting_metadata.values():
                while queue:
                    self._fail_record(queue.popleft(), error)
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
            # (KafkaProducer#throwIfProducerClosed: Java's IllegalStateException.)
            raise IllegalStateException("Cannot perform operation after producer has been closed")
        if self._task_group is None:
            raise KafkaException("The producer is not running: use `async with Producer(...) as producer`")
        headers = tuple(headers)
        _validate_record(topic, value, key, partition, headers, timestamp)
        now = self.time.milliseconds()
        handle = FutureRecordMetadata(ProduceRequestResult(TopicPartition(topic, -1 if partition is None else partition)), 0, -1)
        record = _AwaitingRecord(topic, partition, key, value, headers, timestamp, callback, now + self.max_block_ms, handle)
        # 2. Too large for any request (KafkaProducer#ensureValidRecordSize, on the size upper bound
        #    AbstractRecords#estimateSizeInBytesUpperBound gives; reported through the future).
        size = RECORD_BATCH_OVERHEAD + record_size_upper_bound(key, value, headers)
        if size > self.max_request_size:
            return self._fail_record(record, RecordTooLargeException(
                f"The message is {size} bytes when serialized which is larger than {self.max_request_size}, "
                f"which is the value of the max.request.size configuration."))
        # 3. Metadata known and nothing of this topic queued before us: append now.
        if topic not in self._awaiting_metadata and self._metadata_ready(topic, partition):
            return self._do_send(record, now)
        # 4. Otherwise wait for metadata behind earlier records of the topic (KafkaProducer#waitOnMetadata).
        queue = self._awaiting_metadata.get(topic)
        if queue is None and self.max_block_ms <= 0:
            # (waitOnMetadata with nothing left to wait: ask for the topic, wake the Sender to fetch
            #  it, and fail at once; a later send finds the metadata, testNonBlockingProducer.)
            self.metadata.add_topics([topic])
            self.metadata.request_update()
            self.sender.wakeup()
            return self._fail_record(record, self._metadata_timeout(topic, partition))
        if queue is None:
            queue = self._awaiting_metadata[topic] = deque()
            self._task_group.start_soon(self._wait_on_metadata, topic)
        queue.append(record)
        self.metadata.add_topics([topic])
        self.sender.wakeup()
        return handle

    async def flush(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#flush.

        Makes every buffered record sendable at once and waits until each has been
        acknowledged or has failed (failures stay in the futures).
        """
        await self._await_metadata_waiters()
        self.accumulator.begin_flush()
        self.sender.wakeup()
        await self.accumulator.await_flush_completion()

    async def partitions_for(self, topic: str) -> list[PartitionMetadata]:
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer#partitionsFor.

        The topic's partitions (leader, replicas, ISR) from the client metadata, refreshing it
        until the topic is known; TimeoutException after ``max_block_ms``.
        """
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
        """Mirrors org.apache.kafka.clients.producer.KafkaProducer.FutureFailure: the error goes to the future and the callback."""
        record.handle.result.set(-1, -1, error)
        record.handle.result.done()
        if record.callback is not None:
            record.callback(None, error)
        return record.handle

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
                    record.handle.chain(self._do_send(record, now))
                    record.handle.result.done()
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
                    self._fail_record(record, self._metadata_timeout(topic, record.partition))
                    continue
                # 3. Otherwise refresh (after the backoff) and look again.
                await self.client.await_metadata_update(record.deadline_ms)
        finally:
            del self._awaiting_metadata[topic]

    def _metadata_timeout(self, topic: str, partition: int | None) -> TimeoutException:
        """The TimeoutException KafkaProducer#waitOnMetadata raises when max.block.ms ran out."""
        count = self.metadata.fetch().partition_count(topic)
        if count is None:
            return TimeoutException(f"Topic {topic} not present in metadata after {self.max_block_ms} ms.")
        return TimeoutException(f"Partition {partition} of topic {topic} with partition count {count} "
                                f"is not present in metadata after {self.max_block_ms} ms.")

    async def _await_metadata_waiters(self) -> None:
        for queue in list(self._awaiting_metadata.values()):
            for record in list(queue):
                await record.handle.result.wait()


Producer = KafkaProducer


def _validate_record(topic: str, value: Any, key: Any, partition: int | None, headers: tuple, timestamp: int | None) -> None:
    """Mirrors org.apache.kafka.clients.producer.ProducerRecord's constructor checks (plus byte serialization)."""
    if not isinstance(topic, str) or not topic:
        raise KafkaException(f"Topic must be a non-empty string, got {topic!r}")
    for what, data in (("key", key), ("value", value)):
        if data is not None and not isinstance(data, bytes):
            raise KafkaException(f"The record {what} must be bytes or None (the producer does not serialize), got {type(data).__name__}")
    if partition is not None and partition < 0:
        raise KafkaException(f"Invalid partition: {partition}. Partition number should always be non-negative or null.")
    if timestamp is not None and timestamp < 0:
        raise KafkaException(f"Invalid timestamp: {timestamp}. Timestamp should always be non-negative or null.")
    for header in headers:
        if len(header) != 2 or not isinstance(header[0], str) or not (header[1] is None or isinstance(header[1], bytes)):
            raise KafkaException(f"A header must be a (str, bytes | None) pair, got {header!r}")


__all__ = ["FutureRecordMetadata", "KafkaProducer", "Producer", "RecordMetadata"]
