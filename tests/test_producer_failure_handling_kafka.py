"""How kafka_ref's producer reports failures: too-large records, missing topics and partitions,
unreachable brokers, a closed producer, internal topics, and too few in-sync replicas.

Ports of Kafka 3.8.0's ``ProducerFailureHandlingTest`` in ZooKeeper and KRaft mode: two brokers
with automatic topic creation off, ``message.max.bytes`` 15,000 and ``replica.fetch.max.bytes``
15,200 (Kafka's test also meant to set the fetch response maximum, but passes the setting's doc
string as the key, so that one stays at its default here too), one partition of
``__consumer_offsets``, controlled shutdown off; producers with retries 0, a 30 s request timeout
and a 10 s ``max.block.ms``. Where Kafka asserts an ExecutionException, the exception is the
one its cause would be (a Python future raises the cause itself).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster
from kafka_ref.common.errors import (
    IllegalStateException,
    InvalidTopicException,
    NotEnoughReplicasAfterAppendException,
    NotEnoughReplicasException,
    RecordTooLargeException,
    TimeoutException,
)
from kafka_ref.common.records import RECORD_BATCH_OVERHEAD

pytestmark = pytest.mark.anyio

PRODUCER_BUFFER_SIZE = 30000
SERVER_MESSAGE_MAX_BYTES = PRODUCER_BUFFER_SIZE // 2
REPLICA_FETCH_MAX_PARTITION_BYTES = SERVER_MESSAGE_MAX_BYTES + 200
REPLICA_FETCH_MAX_RESPONSE_BYTES = REPLICA_FETCH_MAX_PARTITION_BYTES + 200
MAX_RECORD_OVERHEAD = 21   # DefaultRecord.MAX_RECORD_OVERHEAD
NUM_SERVERS = 2
TOPIC1 = "topic-1"
CONFIG = {"auto.create.topics.enable": False, "message.max.bytes": SERVER_MESSAGE_MAX_BYTES,
          "replica.fetch.max.bytes": REPLICA_FETCH_MAX_PARTITION_BYTES, "offsets.topic.num.partitions": 1,
          "offsets.topic.replication.factor": NUM_SERVERS, "controlled.shutdown.enable": False}
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])


def _cluster(mode: str) -> Cluster:
    return Cluster(brokers=NUM_SERVERS, metadata_mode=mode, seed=41, config=CONFIG)


def _producer(cluster: Cluster, acks: int, **overrides):
    """ProducerFailureHandlingTest's producer1 (acks 0), producer2 (acks 1) and producer3 (acks -1)."""
    return cluster.producer(acks=acks, **{"retries": 0, "request_timeout_ms": 30000, "max_block_ms": 10000, **overrides})


@BOTH
async def test_too_large_record_with_ack_zero(mode: str):
    """Mirrors ProducerFailureHandlingTest#testTooLargeRecordWithAckZero: no error, offset -1."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC1, replication_factor=NUM_SERVERS)
        async with _producer(cluster, 0) as producer:
            metadata = await producer.send(TOPIC1, bytes(SERVER_MESSAGE_MAX_BYTES + 1), key=b"key")
        assert (metadata.topic, metadata.offset) == (TOPIC1, -1)


@BOTH
async def test_too_large_record_with_ack_one(mode: str):
    """Mirrors ProducerFailureHandlingTest#testTooLargeRecordWithAckOne: the broker's MESSAGE_TOO_LARGE."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC1, replication_factor=NUM_SERVERS)
        async with _producer(cluster, 1) as producer:
            with pytest.raises(RecordTooLargeException):
                await producer.send(TOPIC1, bytes(SERVER_MESSAGE_MAX_BYTES + 1), key=b"key")


async def _check_too_large_record_for_replication_with_ack_all(cluster: Cluster, max_fetch_size: int) -> None:
    """#checkTooLargeRecordForReplicationWithAckAll: a record the topic accepts but larger than the
    followers' fetch size is still replicated (KIP-74: a fetch returns at least one batch)."""
    max_message_size = max_fetch_size + 100
    await cluster.create_topic("topic10", partitions=NUM_SERVERS, replication_factor=NUM_SERVERS,
                               config={"min.insync.replicas": str(NUM_SERVERS), "max.message.bytes": str(max_message_size)})
    value = bytes(max_message_size - RECORD_BATCH_OVERHEAD - MAX_RECORD_OVERHEAD)
    async with _producer(cluster, -1) as producer:
        metadata = await producer.send("topic10", value)
    assert (metadata.topic, metadata.offset) == ("topic10", 0)


@BOTH
async def test_partition_too_large_for_replication_with_ack_all(mode: str):
    """Mirrors ProducerFailureHandlingTest#testPartitionTooLargeForReplicationWithAckAll."""
    async with _cluster(mode) as cluster:
        await _check_too_large_record_for_replication_with_ack_all(cluster, REPLICA_FETCH_MAX_PARTITION_BYTES)


@BOTH
async def test_response_too_large_for_replication_with_ack_all(mode: str):
    """Mirrors ProducerFailureHandlingTest#testResponseTooLargeForReplicationWithAckAll."""
    async with _cluster(mode) as cluster:
        await _check_too_large_record_for_replication_with_ack_all(cluster, REPLICA_FETCH_MAX_RESPONSE_BYTES)


@BOTH
async def test_non_existent_topic(mode: str):
    """Mirrors ProducerFailureHandlingTest#testNonExistentTopic: no metadata within max.block.ms."""
    async with _cluster(mode) as cluster:
        async with _producer(cluster, 0) as producer:
            with pytest.raises(TimeoutException):
                await producer.send("topic-2", b"value", key=b"key")


@BOTH
async def test_wrong_broker_list(mode: str):
    """Mirrors ProducerFailureHandlingTest#testWrongBrokerList: bootstrap nodes that do not exist."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC1, replication_factor=NUM_SERVERS)
        from kafka_ref.clients import Producer

        async with Producer(cluster.network, [8686, 4242], acks=1, max_block_ms=10000) as producer:
            with pytest.raises(TimeoutException):
                await producer.send(TOPIC1, b"value", key=b"key")


@BOTH
async def test_invalid_partition(mode: str):
    """Mirrors ProducerFailureHandlingTest#testInvalidPartition: partition 1 of a one-partition topic."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC1, replication_factor=NUM_SERVERS)
        async with _producer(cluster, 0) as producer:
            with pytest.raises(TimeoutException):
                await producer.send(TOPIC1, b"value", key=b"key", partition=1)


@BOTH
async def test_send_after_closed(mode: str):
    """Mirrors ProducerFailureHandlingTest#testSendAfterClosed: IllegalStateException once closed."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC1, replication_factor=NUM_SERVERS)
        producers = [_producer(cluster, acks) for acks in (0, 1, -1)]
        for producer in producers:
            async with producer:
                await producer.send(TOPIC1, b"value", key=b"key")
        for producer in producers:
            with pytest.raises(IllegalStateException):
                producer.send_nowait(TOPIC1, b"value", key=b"key")


@BOTH
async def test_cannot_send_to_internal_topic(mode: str):
    """Mirrors ProducerFailureHandlingTest#testCannotSendToInternalTopic: INVALID_TOPIC_EXCEPTION."""
    async with _cluster(mode) as cluster:
        await cluster.commit_offsets("g", {})   # creates __consumer_offsets (createOffsetsTopic)
        await cluster.wait_until(lambda: cluster.partition_state("__consumer_offsets", 0) is not None,
                                 message="the offsets topic")
        async with _producer(cluster, 1) as producer:
            with pytest.raises(InvalidTopicException):
                await producer.send("__consumer_offsets", b"test", key=b"test")


@BOTH
async def test_not_enough_replicas_after_broker_shutdown(mode: str):
    """Mirrors ProducerFailureHandlingTest#testNotEnoughReplicasAfterBrokerShutdown: with
    min.insync.replicas 2 and one of two brokers stopped, acks=all fails."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic("minisrtest2", replication_factor=NUM_SERVERS, config={"min.insync.replicas": "2"})
        async with _producer(cluster, -1) as producer:
            await producer.send("minisrtest2", b"value", key=b"key")
            cluster.shutdown_broker_uncontrolled(0)
            await cluster.wait_broker_gone(0)
            with pytest.raises((NotEnoughReplicasException, NotEnoughReplicasAfterAppendException, TimeoutException)):
                await producer.send("minisrtest2", b"value", key=b"key")
