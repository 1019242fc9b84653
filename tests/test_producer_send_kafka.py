"""kafka_ref's producer end to end: offsets, partitions, timestamps, closing, flushing, batch
sizes, timestamp bounds, metadata waits and the largest record a request can carry.

Ports of Kafka 3.8.0's ``BaseProducerSendTest`` and ``PlaintextProducerSendTest`` (and
``ProducerSendWhileDeletionTest``) in ZooKeeper and KRaft mode, against kafka_ref's in-process
``Cluster``: two brokers with ``num.partitions`` 4, a producer with Kafka's test defaults
(acks=all, linger 0, batch.size 16,384, delivery.timeout.ms 120 s, max.block.ms 60 s) and a
consumer that is assigned its partitions. Kafka reads the wall clock (``System.currentTimeMillis``)
for timestamps and bounds; here the brokers' clock is ``cluster.now_ms()``, which runs on the
event loop's virtual time, so the LogAppendTime and timestamp-bound assertions are exact. Where
Kafka asserts an ExecutionException, the exception is the one its cause would be (a Python
future raises the cause itself). ``Int.MaxValue`` linger and delivery timeouts are kept as
such.

Not ported:
- BaseProducerSendTest#testCloseWithZeroTimeoutFromSenderThread: the callback closes the
  producer from the Sender's own thread; kafka_ref's ``close`` is a coroutine that a
  (synchronous) callback cannot call.
- PlaintextProducerSendTest#testWrongSerializer: kafka_ref's producer sends bytes and has no
  serializers to get wrong.
- The buffer-exhaustion half of PlaintextProducerSendTest#testNonBlockingProducer:
  ``buffer.memory`` (the BufferPool and BufferExhaustedException) is not modelled; the
  metadata half is ported.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.clients.admin_types import NewPartitions
from kafka_ref.common.errors import (
    InvalidTimestampException,
    KafkaException,
    RecordTooLargeException,
    TimeoutException,
)
from kafka_ref.common.records import TimestampType
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

TOPIC = "topic"
NUM_RECORDS = 100
NUM_SERVERS = 2
INT_MAX = 2**31 - 1
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])


def _cluster(mode: str, **config) -> Cluster:
    return Cluster(brokers=NUM_SERVERS, metadata_mode=mode, config={"num.partitions": 4, **config})


def _producer(cluster: Cluster, *, linger_ms: int = 0, delivery_timeout_ms: int = 120000, batch_size: int = 16384,
              compression_type: str = "none", max_block_ms: int = 60000, **overrides):
    """BaseProducerSendTest#createProducer (TestUtils.createProducer: acks=all)."""
    return cluster.producer(acks=-1, linger_ms=linger_ms, delivery_timeout_ms=delivery_timeout_ms, batch_size=batch_size,
                            compression_type=compression_type, max_block_ms=max_block_ms, **overrides)


async def _consume_records(consumer, count: int, timeout_ms: int = 15000) -> list:
    """TestUtils.consumeRecords: poll until exactly ``count`` records arrived."""
    records: list = []
    with anyio.fail_after(timeout_ms / 1000):
        while len(records) < count:
            records.extend(await consumer.poll(100))
    assert len(records) == count
    return records


# --------------------------------------------------------------------------------------------
# BaseProducerSendTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_send_offset(mode: str):
    """Mirrors BaseProducerSendTest#testSendOffset: null key, value or partition are accepted and
    each acknowledgement (future and callback) carries the next offset of partition 0."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2)
        seen: list[tuple[str, int, int]] = []
        sizes: list[tuple[int, int]] = []
        failures: list[BaseException] = []

        def callback(metadata, exception):
            if exception is not None:
                failures.append(exception)
            else:
                seen.append((metadata.topic, metadata.partition, metadata.offset))
                sizes.append((metadata.serialized_key_size, metadata.serialized_value_size))

        async with _producer(cluster) as producer:
            assert (await producer.send_nowait(TOPIC, b"value", key=b"key", partition=0, callback=callback)).offset == 0
            assert (await producer.send_nowait(TOPIC, None, key=b"key", partition=0, callback=callback)).offset == 1
            assert (await producer.send_nowait(TOPIC, b"value", key=None, partition=0, callback=callback)).offset == 2
            assert (await producer.send_nowait(TOPIC, b"value", key=b"key", partition=None, callback=callback)).offset == 3
            for _ in range(NUM_RECORDS):
                producer.send_nowait(TOPIC, b"value", key=b"key", partition=0, callback=callback)
            last = await producer.send_nowait(TOPIC, b"value", key=b"key", partition=0, callback=callback)
            assert last.offset == NUM_RECORDS + 4
        assert failures == []
        assert seen == [(TOPIC, 0, offset) for offset in range(NUM_RECORDS + 5)]
        # Kafka checks key + value of the first, the key of the second, the value of the third and a
        # positive value size after that; a null key or value counts -1.
        assert sizes[:4] == [(3, 5), (3, -1), (-1, 5), (3, 5)]
        assert sizes[0][0] + sizes[0][1] == len(b"key") + len(b"value")
        assert all(value_size == 5 for _, value_size in sizes[4:])


async def _send_and_verify(cluster: Cluster, producer, num_records: int = NUM_RECORDS, timeout_ms: int = 20000) -> None:
    """BaseProducerSendTest#sendAndVerify: records to partition 0, close with a timeout, offsets 0.. in order."""
    await cluster.create_topic(TOPIC, partitions=1, replication_factor=2)
    async with producer:
        futures = [producer.send_nowait(TOPIC, f"value{i}".encode(), key=f"key{i}".encode(), partition=0)
                   for i in range(1, num_records + 1)]
        await producer.close(timeout_ms=timeout_ms)
    metadata = [future.value() for future in futures]
    assert [(m.topic, m.partition, m.offset) for m in metadata] == [(TOPIC, 0, i) for i in range(num_records)]


async def _send_and_verify_timestamp(cluster: Cluster, producer, timestamp_type: TimestampType) -> None:
    """BaseProducerSendTest#sendAndVerifyTimestamp: 100 records with timestamps 123457.. to
    partition 0 of a topic with the given message.timestamp.type; closing sends them in one go.
    CreateTime keeps each record's timestamp; LogAppendTime gives every record the leader's
    append time, between the start of the test and its end."""
    base_timestamp = 123456
    start_time = cluster.now_ms()
    config = {"message.timestamp.type": "LogAppendTime" if timestamp_type is TimestampType.LOG_APPEND_TIME else "CreateTime"}
    await cluster.create_topic(TOPIC, partitions=1, replication_factor=2, config=config)
    acknowledged: list[tuple[int, str, int, int]] = []

    def callback(metadata, exception):
        assert exception is None
        acknowledged.append((metadata.offset, metadata.topic, metadata.partition, metadata.timestamp))

    async with producer:
        futures = [producer.send_nowait(TOPIC, f"value{i}".encode(), key=f"key{i}".encode(), partition=0,
                                        timestamp=base_timestamp + i, callback=callback)
                   for i in range(1, NUM_RECORDS + 1)]
        await producer.close(timeout_ms=20000)
    end_time = cluster.now_ms()
    stamps = [future.value().timestamp for future in futures]
    if timestamp_type is TimestampType.CREATE_TIME:
        assert stamps == [base_timestamp + i for i in range(1, NUM_RECORDS + 1)]
    else:
        # One batch (linger Int.MaxValue, sent by close): one append time for every record.
        assert len(set(stamps)) == 1 and start_time <= stamps[0] <= end_time
    assert acknowledged == [(i, TOPIC, 0, stamps[i]) for i in range(NUM_RECORDS)]
    # The consumer reads the same timestamps, with the topic's timestamp type.
    async with cluster.consumer() as consumer:
        consumer.assign([TopicPartition(TOPIC, 0)])
        records = await _consume_records(consumer, NUM_RECORDS)
    assert [(r.offset, r.timestamp, r.timestamp_type) for r in records] == [
        (i, stamps[i], timestamp_type) for i in range(NUM_RECORDS)]


@BOTH
async def test_send_compressed_message_with_create_time(mode: str):
    """Mirrors BaseProducerSendTest#testSendCompressedMessageWithCreateTime (gzip)."""
    async with _cluster(mode) as cluster:
        producer = _producer(cluster, compression_type="gzip", linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX)
        await _send_and_verify_timestamp(cluster, producer, TimestampType.CREATE_TIME)


@BOTH
async def test_send_non_compressed_message_with_create_time(mode: str):
    """Mirrors BaseProducerSendTest#testSendNonCompressedMessageWithCreateTime."""
    async with _cluster(mode) as cluster:
        producer = _producer(cluster, linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX)
        await _send_and_verify_timestamp(cluster, producer, TimestampType.CREATE_TIME)


@BOTH
async def test_close(mode: str):
    """Mirrors BaseProducerSendTest#testClose: close() sends everything first; the last record
    is acknowledged by the time it returns, at offset 100 (one key: one partition)."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2)
        async with _producer(cluster) as producer:
            for _ in range(NUM_RECORDS):
                producer.send_nowait(TOPIC, b"value", key=b"key")
            response0 = producer.send_nowait(TOPIC, b"value", key=b"key")
            await producer.close()
            assert response0.done()
            assert response0.value().offset == NUM_RECORDS


@BOTH
async def test_send_to_partition(mode: str):
    """Mirrors BaseProducerSendTest#testSendToPartition: every record of partition 1 in order,
    read back with its null key, value and timestamp."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=2)
        partition = 1
        now = cluster.now_ms()
        async with _producer(cluster) as producer:
            futures = [producer.send_nowait(TOPIC, f"value{i}".encode(), partition=partition, timestamp=now)
                       for i in range(1, NUM_RECORDS + 1)]
            with anyio.fail_after(30):
                metadata = [await future for future in futures]
        assert [(m.offset, m.topic, m.partition) for m in metadata] == [(i, TOPIC, partition) for i in range(NUM_RECORDS)]
        async with cluster.consumer() as consumer:
            consumer.assign([TopicPartition(TOPIC, partition)])
            records = await _consume_records(consumer, NUM_RECORDS)
        assert [(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp) for r in records] == [
            (TOPIC, partition, i, None, f"value{i + 1}".encode(), now) for i in range(NUM_RECORDS)]


@BOTH
async def test_send_to_partition_with_follower_shutdown_should_not_timeout(mode: str):
    """Mirrors BaseProducerSendTest#testSendToPartitionWithFollowerShutdownShouldNotTimeout: the
    follower shuts down (controlled, as KafkaServerTestHarness#killBroker does) while acks=all
    records are in flight; they are acknowledged in order without timing out."""
    async with _cluster(mode) as cluster:
        follower = 1
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, follower]})
        partition = 0
        now = cluster.now_ms()
        async with _producer(cluster) as producer:
            futures = [producer.send_nowait(TOPIC, f"value{i}".encode(), partition=partition, timestamp=now)
                       for i in range(1, NUM_RECORDS + 1)]
            shutdown = await cluster.shutdown_broker(follower)
            assert shutdown.succeeded
            start = cluster.now_ms()
            with anyio.fail_after(30):
                metadata = [await future for future in futures]
            # Not one request timed out and was retried (request.timeout.ms is 30 s).
            assert cluster.now_ms() - start < 30000
        assert [(m.offset, m.topic, m.partition) for m in metadata] == [(i, TOPIC, partition) for i in range(NUM_RECORDS)]
        async with cluster.consumer() as consumer:
            consumer.assign([TopicPartition(TOPIC, partition)])
            records = await _consume_records(consumer, NUM_RECORDS)
        assert [(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp) for r in records] == [
            (TOPIC, partition, i, None, f"value{i + 1}".encode(), now) for i in range(NUM_RECORDS)]


@BOTH
async def test_send_before_and_after_partition_expansion(mode: str):
    """Mirrors BaseProducerSendTest#testSendBeforeAndAfterPartitionExpansion: partition 1 of a
    one-partition topic times out after max.block.ms; once CreatePartitions added it, records
    go there from offset 0 and partition 0 continues where it was."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2)
        async with _producer(cluster, max_block_ms=5000) as producer, cluster.admin() as admin:

            async def send_all(partition: int) -> list:
                futures = [producer.send_nowait(TOPIC, f"value{i}".encode(), partition=partition)
                           for i in range(1, NUM_RECORDS + 1)]
                with anyio.fail_after(30):
                    return [await future for future in futures]

            metadata0 = await send_all(0)
            assert [(m.offset, m.topic, m.partition) for m in metadata0] == [(i, TOPIC, 0) for i in range(NUM_RECORDS)]
            start = cluster.now_ms()
            with pytest.raises(TimeoutException):
                await producer.send(TOPIC, b"value", partition=1)
            assert cluster.now_ms() - start == 5000
            await admin.create_partitions({TOPIC: NewPartitions.increase_to(2)})
            await cluster.wait_until(lambda: all(
                cluster.broker(b).metadata_cache.contains(TopicPartition(TOPIC, p)) for b in (0, 1) for p in (0, 1)))
            metadata1 = await send_all(1)
            assert [(m.offset, m.topic, m.partition) for m in metadata1] == [(i, TOPIC, 1) for i in range(NUM_RECORDS)]
            metadata0 = await send_all(0)
            assert [(m.offset, m.topic, m.partition) for m in metadata0] == [
                (i, TOPIC, 0) for i in range(NUM_RECORDS, 2 * NUM_RECORDS)]


@BOTH
async def test_flush(mode: str):
    """Mirrors BaseProducerSendTest#testFlush: with linger Int.MaxValue nothing completes until
    flush(), and everything has completed when it returns (50 rounds of 100 records)."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=2)
        async with _producer(cluster, linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX) as producer:
            for _ in range(50):
                responses = [producer.send_nowait(TOPIC, b"value") for _ in range(NUM_RECORDS)]
                await anyio.sleep(0.1)
                assert not any(r.done() for r in responses)
                await producer.flush()
                assert all(r.done() for r in responses)
                assert all(r.exception() is None for r in responses)


@BOTH
async def test_close_with_zero_timeout_from_caller_thread(mode: str):
    """Mirrors BaseProducerSendTest#testCloseWithZeroTimeoutFromCallerThread: close(0) fails every
    buffered record with KafkaException and nothing reaches the log (50 producers)."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=2)
        partition = 0
        async with cluster.consumer() as consumer:
            consumer.assign([TopicPartition(TOPIC, partition)])
            for _ in range(50):
                async with _producer(cluster, linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX) as producer:
                    responses = [producer.send_nowait(TOPIC, b"value", partition=partition) for _ in range(NUM_RECORDS)]
                    assert not any(r.done() for r in responses)
                    await producer.close(timeout_ms=0)
                for response in responses:
                    assert response.done()
                    assert type(response.exception()) is KafkaException
                assert await consumer.poll(50) == []
            assert await consumer.position(TopicPartition(TOPIC, partition)) == 0


# --------------------------------------------------------------------------------------------
# PlaintextProducerSendTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_batch_size_zero(mode: str):
    """Mirrors PlaintextProducerSendTest#testBatchSizeZero: batch.size 0 (one record a batch)."""
    async with _cluster(mode) as cluster:
        producer = _producer(cluster, linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX, batch_size=0)
        await _send_and_verify(cluster, producer)


@BOTH
async def test_batch_size_zero_no_partition_no_record_key(mode: str):
    """Mirrors PlaintextProducerSendTest#testBatchSizeZeroNoPartitionNoRecordKey: unkeyed records
    without a partition and batch.size 0 are all sent by flush()."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=1)
        num_records = 10
        async with _producer(cluster, batch_size=0) as producer:
            futures = [producer.send_nowait(TOPIC, f"value{i}".encode()) for i in range(1, num_records + 1)]
            with anyio.fail_after(15):
                await producer.flush()
            assert [future.value().topic for future in futures] == [TOPIC] * num_records


@BOTH
async def test_send_compressed_message_with_log_append_time(mode: str):
    """Mirrors PlaintextProducerSendTest#testSendCompressedMessageWithLogAppendTime (gzip)."""
    async with _cluster(mode) as cluster:
        producer = _producer(cluster, compression_type="gzip", linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX)
        await _send_and_verify_timestamp(cluster, producer, TimestampType.LOG_APPEND_TIME)


@BOTH
async def test_send_non_compressed_message_with_log_append_time(mode: str):
    """Mirrors PlaintextProducerSendTest#testSendNonCompressedMessageWithLogAppendTime."""
    async with _cluster(mode) as cluster:
        producer = _producer(cluster, linger_ms=INT_MAX, delivery_timeout_ms=INT_MAX)
        await _send_and_verify_timestamp(cluster, producer, TimestampType.LOG_APPEND_TIME)


@BOTH
async def test_auto_create_topic(mode: str):
    """Mirrors PlaintextProducerSendTest#testAutoCreateTopic: the first send creates the topic
    (num.partitions 4), the record lands at offset 0 and partition 0 has a leader."""
    async with _cluster(mode) as cluster:
        async with _producer(cluster) as producer:
            metadata = await producer.send(TOPIC, b"value", key=b"key")
        assert metadata.offset == 0
        await cluster.wait_until(lambda: cluster.leader_for(TOPIC, 0) >= 0)
        assert len(cluster.topic_assignment(TOPIC)) == 4


FIVE_HOURS_MS = 5 * 60 * 60 * 1000   # Kafka's "fiveMinutesInMs" is five hours
TIMESTAMP_CASES = [("message.timestamp.difference.max.ms", -FIVE_HOURS_MS),
                   ("message.timestamp.before.max.ms", -FIVE_HOURS_MS),
                   ("message.timestamp.after.max.ms", FIVE_HOURS_MS)]
QUORUM_AND_TIMESTAMP_CONFIG = pytest.mark.parametrize(
    "mode,config_name,offset_ms", [(mode, name, offset) for mode in ("zk", "kraft") for name, offset in TIMESTAMP_CASES])


@QUORUM_AND_TIMESTAMP_CONFIG
async def test_send_with_invalid_before_and_after_timestamp(mode: str, config_name: str, offset_ms: int):
    """Mirrors PlaintextProducerSendTest#testSendWithInvalidBeforeAndAfterTimestamp: a record five
    hours away from the broker's clock, with a one-hour bound ("oneMinuteInMs" in Kafka), fails with
    INVALID_TIMESTAMP, uncompressed and gzip."""
    async with _cluster(mode) as cluster:
        record_timestamp = cluster.now_ms() + offset_ms
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2, config={config_name: str(60 * 60 * 1000)})
        for compression in ("none", "gzip"):
            async with _producer(cluster, compression_type=compression) as producer:
                with pytest.raises(InvalidTimestampException):
                    await producer.send(TOPIC, b"value", key=b"key", partition=0, timestamp=record_timestamp)


@QUORUM_AND_TIMESTAMP_CONFIG
async def test_valid_before_and_after_timestamps_at_threshold(mode: str, config_name: str, offset_ms: int):
    """Mirrors PlaintextProducerSendTest#testValidBeforeAndAfterTimestampsAtThreshold: the bound set
    to the record's timestamp itself (an epoch-sized bound) lets it in, uncompressed and gzip."""
    async with _cluster(mode) as cluster:
        record_timestamp = cluster.now_ms() + offset_ms
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2, config={config_name: str(record_timestamp)})
        offsets = []
        for compression in ("none", "gzip"):
            async with _producer(cluster, compression_type=compression) as producer:
                offsets.append((await producer.send(TOPIC, b"value", key=b"key", partition=0, timestamp=record_timestamp)).offset)
        assert offsets == [0, 1]


@QUORUM_AND_TIMESTAMP_CONFIG
async def test_valid_before_and_after_timestamps_within_threshold(mode: str, config_name: str, offset_ms: int):
    """Mirrors PlaintextProducerSendTest#testValidBeforeAndAfterTimestampsWithinThreshold: five hours
    away with a ten-hour bound ("tenMinutesInMs") is accepted, uncompressed and gzip."""
    async with _cluster(mode) as cluster:
        record_timestamp = cluster.now_ms() + offset_ms
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=2, config={config_name: str(10 * 60 * 60 * 1000)})
        offsets = []
        for compression in ("none", "gzip"):
            async with _producer(cluster, compression_type=compression) as producer:
                offsets.append((await producer.send(TOPIC, b"value", key=b"key", partition=0, timestamp=record_timestamp)).offset)
        assert offsets == [0, 1]


@BOTH
async def test_non_blocking_producer(mode: str):
    """Mirrors PlaintextProducerSendTest#testNonBlockingProducer (the metadata half): with
    max.block.ms 0 a send whose topic has no metadata yet fails at once with TimeoutException;
    sends succeed once the metadata (which the failed send asked for) has arrived."""
    async with _cluster(mode) as cluster:
        async with _producer(cluster, max_block_ms=0) as producer:
            # 1. No metadata for the topic: the future is already failed.
            future = producer.send_nowait(TOPIC, bytes(1000), key=b"key", partition=0)
            assert future.done()
            assert type(future.exception()) is TimeoutException
            # 2. Send until one is queued (the metadata request created the topic meanwhile).
            attempts = 1
            while True:
                future = producer.send_nowait(TOPIC, bytes(1000), key=b"key", partition=0)
                attempts += 1
                if not future.done() or future.exception() is None:
                    break
                await anyio.sleep(0.01)
            with anyio.fail_after(30):
                metadata = await future
            assert (metadata.topic, metadata.partition, metadata.offset) == (TOPIC, 0, 0)
            assert attempts > 2


@BOTH
async def test_send_record_batch_with_max_request_size_and_higher(mode: str):
    """Mirrors PlaintextProducerSendTest#testSendRecordBatchWithMaxRequestSizeAndHigher: the
    largest value whose record's size upper bound (batch header + DefaultRecord.MAX_RECORD_OVERHEAD
    + length varints) fits max.request.size (1,048,576) is sent; one byte more fails in the
    producer with RecordTooLargeException."""
    async with _cluster(mode) as cluster:
        key_length_size, header_length_size, value_length_size = 1, 1, 3
        overhead = 12 + 61 + 21 + key_length_size + header_length_size + value_length_size
        value_size = 1048588 - overhead   # LogConfig.DEFAULT_MAX_MESSAGE_BYTES
        async with cluster.producer() as producer:
            metadata = await producer.send(TOPIC, bytes(value_size), key=b"")
            assert (metadata.topic, metadata.offset, metadata.serialized_value_size) == (TOPIC, 0, value_size)
            with pytest.raises(RecordTooLargeException):
                await producer.send(TOPIC, bytes(value_size + 1), key=b"")


# --------------------------------------------------------------------------------------------
# ProducerSendWhileDeletionTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_send_with_topic_deletion_mid_way(mode: str):
    """Mirrors ProducerSendWhileDeletionTest#testSendWithTopicDeletionMidWay: after a reassignment
    of both partitions and the topic's deletion, the same
    producer's next send re-creates it (automatic creation) and succeeds."""
    async with Cluster(brokers=2, metadata_mode=mode,
                       config={"num.partitions": 2, "default.replication.factor": 2,
                               "auto.leader.rebalance.enable": False}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1], 1: [0, 1]})
        async with cluster.admin() as admin:
            await admin.alter_partition_reassignments({TopicPartition(TOPIC, 0): [1, 0], TopicPartition(TOPIC, 1): [1, 0]})
        await cluster.wait_until(lambda: all(cluster.partition_state(TOPIC, p)["replicas"] == [1, 0] for p in (0, 1)))
        # Neither controller moves leadership for a reordered replica set (Kafka's comment says it
        # does): ZooKeeper's bumps the epoch (KafkaController#moveReassignedPartitionLeaderIfRequired),
        # KRaft's keeps it since no replica left (PartitionChangeBuilder#triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).
        epoch = 1 if mode == "zk" else 0
        assert [(cluster.partition_state(TOPIC, p)["leader"], cluster.partition_state(TOPIC, p)["leader_epoch"])
                for p in (0, 1)] == [(0, epoch), (0, epoch)]
        async with cluster.producer(max_block_ms=5000, request_timeout_ms=10000, delivery_timeout_ms=10000) as producer:
            for i in range(1, 11):
                assert (await producer.send(TOPIC, f"value{i}".encode())).topic == TOPIC
            await cluster.delete_topic(TOPIC)
            await cluster.wait_until(lambda: all(
                cluster.replica_state(b, TOPIC, p) is None for b in (0, 1) for p in (0, 1)), message="deletion")
            metadata = await producer.send(TOPIC, b"value")
            assert metadata.topic == TOPIC
            assert metadata.offset == 0
