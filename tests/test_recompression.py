"""A topic's compression.type makes the leader store its own codec (LogValidator's recompression).

Mirrors kafka.log.LogValidatorTest#testRecompressionV2 (checkRecompression: a gzip batch written to
an uncompressed log keeps its producer id, epoch, base sequence, transactional flag, leader epoch
and every record's timestamp) and BrokerCompressionType ("producer" keeps the producer's codec,
"uncompressed" means none), then through a running cluster: the producer's codec is replaced on
the leader and the followers copy the leader's batches.
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster
from kafka_ref.common.config import LogConfig
from kafka_ref.common.records import CompressionType, MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import Disk
from kafka_ref.log.log_manager import LogManager
from kafka_ref.log.log_validator import target_compression

TP = TopicPartition("topic", 0)


def test_target_compression():
    assert target_compression("producer") is None
    assert target_compression("uncompressed") is CompressionType.NONE
    assert [target_compression(c) for c in ("gzip", "snappy", "lz4", "zstd")] == [
        CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]


@pytest.mark.parametrize(("topic_codec", "stored"), [("uncompressed", "none"), ("lz4", "lz4"), ("producer", "gzip")])
def test_recompression_keeps_producer_fields_and_timestamps(topic_codec, stored):
    time = MockTime()
    log = LogManager(Disk(0), time, default_config=LogConfig({"compression.type": topic_codec})).get_or_create_log(TP)
    now = time.milliseconds()
    timestamps = [now - 1, now + 1, now]
    batch = RecordBatch.build([SimpleRecord(None, v, (), t) for v, t in zip((b"hello", b"there", b"beautiful"), timestamps)],
                              compression="gzip", producer_id=1324, producer_epoch=10, base_sequence=984,
                              is_transactional=True)
    info = log.append_as_leader(MemoryRecords((batch,)), 40)
    [written] = list(log.local_log.batches)
    assert written.compression_type == stored
    assert (written.producer_id, written.producer_epoch, written.base_sequence, written.is_transactional,
            written.partition_leader_epoch) == (1324, 10, 984, True, 40)
    assert [(r.offset, r.timestamp, r.value) for r in written] == [
        (0, now - 1, b"hello"), (1, now + 1, b"there"), (2, now, b"beautiful")]
    assert written.max_timestamp == now + 1
    assert (info.max_timestamp, info.shallow_offset_of_max_timestamp) == (now + 1, 2)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_topic_codec_replaces_the_producers(mode):
    async with Cluster(brokers=2, metadata_mode=mode) as cluster:
        await cluster.create_topic("zstd-topic", partitions=1, replication_factor=2, config={"compression.type": "zstd"})
        async with cluster.producer(acks=-1) as producer:
            for i in range(3):
                await producer.send("zstd-topic", f"v{i}".encode() * 100, partition=0)
        await cluster.wait_until(lambda: all(cluster.replica_state(b, "zstd-topic", 0).log_end_offset == 3 for b in (0, 1)))
        for b in (0, 1):
            log = cluster.broker(b).replica_manager.get_partition(TopicPartition("zstd-topic", 0)).log
            assert {str(batch.compression_type) for batch in log.local_log.batches} == {"zstd"}
        consumer = cluster.consumer(auto_offset_reset="earliest")
        consumer.assign([TopicPartition("zstd-topic", 0)])
        records = []
        while len(records) < 3:
            records.extend(await consumer.poll(1000))
        assert [r.value for r in records] == [f"v{i}".encode() * 100 for i in range(3)]
