"""message.timestamp.type=LogAppendTime: the leader stamps appended batches with its clock.

Mirrors kafka.api.BaseProducerSendTest#sendAndVerifyTimestamp (testSendNonCompressedMessageWithCreateTime
and testSendNonCompressedMessageWithLogAppendTime) and LogValidatorTest's LogAppendTime rule for
uncompressed v2 batches (LogValidator#assignOffsetsNonCompressed): each batch's max timestamp becomes
the leader's clock with the timestamp-type bit set, the produce response carries that time, every
record reads it back, and followers copy the stamped batch byte for byte.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.common.records import TimestampType
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

BASE_TIMESTAMP = 123456


async def _send_and_read(cluster: Cluster, timestamp_type: str) -> tuple[int, list, list]:
    await cluster.create_topic("ts", partitions=1, replication_factor=2,
                               config={"message.timestamp.type": timestamp_type})
    start = cluster.now_ms()
    async with cluster.producer(acks=-1) as producer:
        sent = []
        for i in range(1, 6):
            sent.append(await producer.send("ts", f"value{i}".encode(), key=f"key{i}".encode(), partition=0,
                                            timestamp=BASE_TIMESTAMP + i))
            await anyio.sleep(0.25)
    consumer = cluster.consumer(group_id=None, auto_offset_reset="earliest")
    consumer.assign([TopicPartition("ts", 0)])
    records: list = []
    while len(records) < 5:
        records.extend(await consumer.poll(1000))
    return start, sent, records


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_send_with_log_append_time(mode):
    """The producer's RecordMetadata and the consumer's records carry the leader's append time
    (not the producer's timestamps), type LogAppendTime; followers hold the same batches."""
    async with Cluster(brokers=2, metadata_mode=mode) as cluster:
        start, sent, records = await _send_and_read(cluster, "LogAppendTime")
        end = cluster.now_ms()
        assert [m.offset for m in sent] == [0, 1, 2, 3, 4]
        stamps = [m.timestamp for m in sent]
        assert all(start <= t <= end for t in stamps)
        assert stamps == sorted(stamps) and len(set(stamps)) == 5   # each send 250 ms after the last
        assert [(r.offset, r.timestamp, r.timestamp_type) for r in records] == [
            (i, stamps[i], TimestampType.LOG_APPEND_TIME) for i in range(5)]
        # Every replica holds the stamped batches (the follower copies them as they are).
        await cluster.wait_until(lambda: all(
            cluster.replica_state(b, "ts", 0).log_end_offset == 5 for b in (0, 1)))
        for b in (0, 1):
            log = cluster.broker(b).replica_manager.get_partition(TopicPartition("ts", 0)).log
            assert [(batch.base_offset, batch.max_timestamp, batch.timestamp_type) for batch in log.local_log.batches] == [
                (i, stamps[i], TimestampType.LOG_APPEND_TIME) for i in range(5)]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_send_with_create_time(mode):
    """CreateTime (the default): the producer's timestamps come back in RecordMetadata and on every record."""
    async with Cluster(brokers=2, metadata_mode=mode) as cluster:
        _, sent, records = await _send_and_read(cluster, "CreateTime")
        assert [m.timestamp for m in sent] == [BASE_TIMESTAMP + i for i in range(1, 6)]
        assert [(r.offset, r.timestamp, r.timestamp_type) for r in records] == [
            (i, BASE_TIMESTAMP + 1 + i, TimestampType.CREATE_TIME) for i in range(5)]
