"""ListOffsets through the admin client: EARLIEST, LATEST and MAX_TIMESTAMP on the leader's append
path, on the follower's (after a reassignment makes the other broker the leader) and after every
broker restarted.

Ports of Kafka 3.8.0's ``ListOffsetsIntegrationTest`` (two brokers, topics of one partition and
one replica, three 10-byte records with timestamps 100, 999 and 200, in one batch or in three),
in ZooKeeper and KRaft mode. With CreateTime the largest timestamp is the second record
(offset 1); with LogAppendTime every record of a batch carries the batch's append time, so one
batch answers its first offset (0) and three batches appended 100 ms apart answer the last (2).
The returned leader epoch is the epoch the batch was written in (0), whoever leads now.

Kafka's case 2 deletes the offset index files before restarting; kafka_ref keeps no index
(lookups walk the batches), so the restart alone is the recovery path here.

Not ported: testListVersion0, testThreeRecordsInOneBatchWithMessageConversion and
testThreeRecordsInSeparateBatchWithMessageConversion (message formats v0/v1: kafka_ref's logs
hold v2 batches only).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.clients.admin_types import OffsetSpec

pytestmark = pytest.mark.anyio

TOPIC = "foo"
CUSTOM = "foo2"
TIMESTAMPS = (100, 999, 200)
CONFIG = {"offsets.topic.replication.factor": 2, "log.retention.ms": -1}


async def _offsets(cluster: Cluster, topic: str, spec: OffsetSpec):
    """ListOffsetsIntegrationTest#runFetchOffsets: one partition's answer from a fresh admin client."""
    tp = TopicPartition(topic, 0)
    async with cluster.admin() as admin:
        return (await admin.list_offsets({tp: spec}))[tp]


async def _produce_in_one_batch(cluster: Cluster, topic: str, compression: str) -> None:
    """#produceMessagesInOneBatch: a linger long enough that the three records leave together on flush."""
    async with cluster.producer(acks=-1, linger_ms=10**8, delivery_timeout_ms=2**31 - 1,
                                compression_type=compression) as producer:
        futures = [producer.send_nowait(topic, bytes(10), partition=0, timestamp=ts) for ts in TIMESTAMPS]
        await producer.flush()
        for future in futures:
            await future


async def _produce_in_separate_batches(cluster: Cluster, topic: str, compression: str) -> None:
    """#produceMessagesInSeparateBatch: one acknowledged record at a time, the brokers' clock 100 ms
    further on before each of the next two."""
    async with cluster.producer(acks=-1, compression_type=compression) as producer:
        for i, ts in enumerate(TIMESTAMPS):
            if i:
                await anyio.sleep(0.1)
            await producer.send(topic, bytes(10), partition=0, timestamp=ts)


def _codecs(cluster: Cluster, topic: str) -> list[str]:
    """The codec of every batch in the leader's log, in order."""
    log = cluster.broker(cluster.leader_for(topic, 0)).log_manager.get_log(TopicPartition(topic, 0))
    return [str(b.compression_type) for b in log.batches]


async def _leader(cluster: Cluster, topic: str) -> int | None:
    async with cluster.admin() as admin:
        return (await admin.describe_topics([topic]))[topic].partitions[0].leader


async def _verify_list_offsets(cluster: Cluster, topic: str = TOPIC, expected_max_timestamp_offset: int = 1) -> None:
    """#verifyListOffsets: the three answers on the leader's append path, again after a
    reassignment moved the only replica to the other broker, again after both brokers restarted."""
    async def check() -> None:
        assert (await _offsets(cluster, topic, OffsetSpec.earliest())).offset == 0
        assert (await _offsets(cluster, topic, OffsetSpec.latest())).offset == 3
        answer = await _offsets(cluster, topic, OffsetSpec.max_timestamp())
        assert (answer.offset, answer.leader_epoch) == (expected_max_timestamp_offset, 0)

    # Case 0: the leader's append path.
    await check()
    # Case 1: the follower's append path: the other broker fetches the log and takes over.
    previous = await _leader(cluster, topic)
    new_leader = next(b for b in (0, 1) if b != previous)
    async with cluster.admin() as admin:
        await admin.alter_partition_reassignments({TopicPartition(topic, 0): [new_leader]})
        with anyio.fail_after(60):
            while await admin.list_partition_reassignments():
                await anyio.sleep(0.1)
    await cluster.wait_until(lambda: cluster.leader_for(topic, 0) == new_leader, message="the new leader")
    assert await _leader(cluster, topic) == new_leader
    await check()
    # Case 2: both brokers crash and come back: the logs are read again from their disks.
    for broker_id in (0, 1):
        cluster.kill_broker(broker_id)
    for broker_id in (0, 1):
        await cluster.restart_broker(broker_id)
    # (Kafka's restart returns once the brokers serve requests; here, once both know the leader.)
    await cluster.wait_until(lambda: all(getattr(cluster.broker(b).metadata_cache.get_partition_info(
        TopicPartition(topic, 0)), "leader", None) == new_leader for b in (0, 1)), timeout_ms=60000,
        message="both brokers' metadata naming the leader")
    await check()


async def _log_append_time_topic(cluster: Cluster) -> None:
    """#setUpForLogAppendTimeCase."""
    await cluster.create_topic(CUSTOM, partitions=1, replication_factor=1,
                               config={"message.timestamp.type": "LogAppendTime"})


def _cluster(mode: str) -> Cluster:
    return Cluster(brokers=2, metadata_mode=mode, seed=5, config=CONFIG)


async def _setup(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC, partitions=1, replication_factor=1)


MODES = pytest.mark.parametrize("mode", ["zk", "kraft"])


@MODES
async def test_list_max_timestamp_with_empty_log(mode: str):
    """Mirrors ListOffsetsIntegrationTest#testListMaxTimestampWithEmptyLog."""
    async with _cluster(mode) as cluster:
        await _setup(cluster)
        answer = await _offsets(cluster, TOPIC, OffsetSpec.max_timestamp())
        assert (answer.offset, answer.timestamp) == (-1, -1)


# (Kafka's four tests below differ only in codec and batching: one parametrised body, each case named.)
@MODES
@pytest.mark.parametrize("kafka_test, codec, one_batch, log_append_time_offset", [
    ("testThreeCompressedRecordsInOneBatch", "gzip", True, 0),
    ("testThreeNonCompressedRecordsInOneBatch", "none", True, 0),
    ("testThreeNonCompressedRecordsInSeparateBatch", "none", False, 2),
    ("testThreeCompressedRecordsInSeparateBatch", "gzip", False, 2),
], ids=lambda v: v if isinstance(v, str) and v.startswith("test") else None)
async def test_three_records(mode: str, kafka_test: str, codec: str, one_batch: bool, log_append_time_offset: int):
    """Mirrors ListOffsetsIntegrationTest#testThreeCompressedRecordsInOneBatch,
    #testThreeNonCompressedRecordsInOneBatch, #testThreeNonCompressedRecordsInSeparateBatch and
    #testThreeCompressedRecordsInSeparateBatch: CreateTime answers offset 1 (timestamp 999); a
    LogAppendTime topic answers the first offset of one batch, the last of three batches appended
    100 ms apart."""
    produce = _produce_in_one_batch if one_batch else _produce_in_separate_batches
    async with _cluster(mode) as cluster:
        await _setup(cluster)
        await produce(cluster, TOPIC, codec)
        assert _codecs(cluster, TOPIC) == [codec] * (1 if one_batch else 3)   # the producer's codec, kept by the topic
        await _verify_list_offsets(cluster)
        await _log_append_time_topic(cluster)
        await produce(cluster, CUSTOM, codec)
        await _verify_list_offsets(cluster, CUSTOM, log_append_time_offset)


@MODES
async def test_three_records_in_one_batch_having_different_compression_type_with_server(mode: str):
    """Mirrors ListOffsetsIntegrationTest#testThreeRecordsInOneBatchHavingDifferentCompressionTypeWithServer
    (the topic recompresses to lz4)."""
    async with _cluster(mode) as cluster:
        await _setup(cluster)
        await cluster.create_topic(CUSTOM, partitions=1, replication_factor=1, config={"compression.type": "lz4"})
        await _produce_in_one_batch(cluster, CUSTOM, "none")
        assert _codecs(cluster, CUSTOM) == ["lz4"]
        await _verify_list_offsets(cluster, CUSTOM)


@MODES
async def test_three_records_in_separate_batch_having_different_compression_type_with_server(mode: str):
    """Mirrors ListOffsetsIntegrationTest#testThreeRecordsInSeparateBatchHavingDifferentCompressionTypeWithServer."""
    async with _cluster(mode) as cluster:
        await _setup(cluster)
        await cluster.create_topic(CUSTOM, partitions=1, replication_factor=1, config={"compression.type": "lz4"})
        await _produce_in_separate_batches(cluster, CUSTOM, "none")
        await _verify_list_offsets(cluster, CUSTOM)


def test_producer_compression_type_is_validated():
    """ProducerConfig's compression.type validator: an unknown codec is a ConfigException naming the key."""
    from kafka_ref.clients import Producer
    from kafka_ref.common.errors import ConfigException
    from kafka_ref.network import Network

    with pytest.raises(ConfigException, match="compression.type"):
        Producer(Network(), [0], compression_type="brotli")
