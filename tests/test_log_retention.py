"""Time- and size-based retention, the cleanup policy, and the periodic retention task.

Mirrors kafka.log.UnifiedLogTest's retention cases (shouldDeleteTimeBasedSegmentsReadyToBeDeleted,
shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted, shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete,
shouldDeleteSegmentsReadyToBeDeletedWhenCleanupPolicyIsCompactAndDelete,
shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete) with each batch in the part of a
segment, KafkaConfigTest#testLogRetentionTime* for the broker's retention precedence, and LogManager's
kafka-log-retention task on a running cluster.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import Disk, UnifiedLog
from kafka_ref.log.log_manager import LogManager

TP = TopicPartition("topic", 0)


def single(timestamp: int) -> MemoryRecords:
    """TestUtils.singletonRecords: one keyed record with the given timestamp."""
    return MemoryRecords.with_records([SimpleRecord(b"test", b"test", timestamp=timestamp)])


def log_with(timestamp: int, count: int = 15, **topic_config: object) -> UnifiedLog:
    time = MockTime()
    manager = LogManager(Disk(0), time, default_config=LogConfig(topic_config))
    log = manager.get_or_create_log(TP)
    for _ in range(count):
        log.append_as_leader(single(timestamp(time) if callable(timestamp) else timestamp), 0)
    log.update_high_watermark(log.log_end_offset)
    return log


def test_delete_time_based_segments_ready_to_be_deleted():
    """Mirrors UnifiedLogTest#shouldDeleteTimeBasedSegmentsReadyToBeDeleted: every batch's newest
    timestamp (10) is more than retention.ms old, so all of them go and the log starts at its end."""
    log = log_with(10, **{"retention.ms": 10000})
    assert log.delete_old_segments() == 15
    assert (len(log.batches), log.log_start_offset, log.log_end_offset) == (0, 15, 15)


def test_no_time_based_segments_ready_to_be_deleted():
    """Mirrors UnifiedLogTest#shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted."""
    log = log_with(lambda time: time.milliseconds(), **{"retention.ms": 10000000})
    assert log.delete_old_segments() == 0
    assert (len(log.batches), log.log_start_offset) == (15, 0)


def test_policy_without_delete_keeps_old_segments():
    """Mirrors UnifiedLogTest#shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete: a compacted
    topic ignores retention.ms and retention.bytes."""
    log = log_with(10, **{"retention.ms": 10000, "retention.bytes": 0, "cleanup.policy": "compact"})
    assert log.delete_old_segments() == 0
    assert len(log.batches) == 15


def test_compact_and_delete_policy_deletes_old_segments():
    """Mirrors UnifiedLogTest#shouldDeleteSegmentsReadyToBeDeletedWhenCleanupPolicyIsCompactAndDelete."""
    log = log_with(10, **{"retention.ms": 10000, "cleanup.policy": "compact,delete"})
    assert log.delete_old_segments() == 15


def test_start_offset_breach_deleted_whatever_the_policy():
    """Mirrors UnifiedLogTest#shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete:
    batches below the log start offset go even on a compacted topic."""
    log = log_with(10, **{"retention.ms": 10000, "cleanup.policy": "compact"})
    log.maybe_increment_log_start_offset(5)
    assert log.delete_old_segments() == 5
    assert (len(log.batches), log.log_start_offset) == (10, 5)


def test_time_retention_stops_at_the_high_watermark_and_the_first_young_batch():
    """#deletableSegments: never past the HW; the deletable batches are a prefix (a young batch
    keeps every batch after it)."""
    time = MockTime()
    log = UnifiedLog.create(TP, Disk(0), time=time)
    log.retention_ms = 10000
    now = time.milliseconds()
    for timestamp in (now - 50000, now - 40000, now, now - 30000):
        log.append_as_leader(single(timestamp), 0)
    log.update_high_watermark(1)
    assert log.delete_old_segments() == 1          # the second batch lies at the HW
    log.update_high_watermark(4)
    assert log.delete_old_segments() == 1          # then the young third batch stops the walk
    assert (log.log_start_offset, [b.base_offset for b in log.batches]) == (2, [2, 3])
    time.advance(20000)
    assert log.delete_old_segments() == 2


@pytest.mark.parametrize(("props", "expected"), [
    ({}, 168 * 3_600_000),
    ({"log.retention.hours": 1}, 3_600_000),
    ({"log.retention.hours": 1, "log.retention.minutes": 30}, 1_800_000),
    ({"log.retention.hours": 1, "log.retention.minutes": 30, "log.retention.ms": 1000}, 1000),
    ({"log.retention.ms": -1}, -1),
])
def test_log_retention_time_precedence(props, expected):
    """Mirrors KafkaConfigTest#testLogRetentionTimeHoursProvided, #testLogRetentionTimeMinutesProvided,
    #testLogRetentionTimeMsProvided, #testLogRetentionTimeNoConfigProvided and
    #testLogRetentionUnlimited: ms wins over minutes over hours, and topics inherit it."""
    config = KafkaConfig({"broker.id": 0, **props})
    assert config.get("log.retention.ms") == expected
    assert LogConfig.from_broker(config).get("retention.ms") == expected


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_retention_task_deletes_expired_records_on_every_replica(mode):
    """LogManager's kafka-log-retention task (first after 30 s, then every
    log.retention.check.interval.ms) deletes records older than the topic's retention.ms on the
    leader and the followers; the earliest offset moves to the log end."""
    async with Cluster(brokers=2, metadata_mode=mode, config={"log.retention.check.interval.ms": 10000}) as cluster:
        await cluster.create_topic("short", partitions=1, replication_factor=2, config={"retention.ms": "20000"})
        async with cluster.producer(acks=-1) as producer:
            for i in range(3):
                await producer.send("short", f"v{i}".encode(), partition=0)
        # Retention checks run at 30 s and 40 s after each broker started: too young until then.
        await anyio.sleep(15)
        assert [cluster.replica_state(b, "short", 0).log_start_offset for b in (0, 1)] == [0, 0]
        await anyio.sleep(30)
        assert [(cluster.replica_state(b, "short", 0).log_start_offset, cluster.replica_state(b, "short", 0).log_end_offset)
                for b in (0, 1)] == [(3, 3), (3, 3)]
        for b in (0, 1):
            log = cluster.broker(b).replica_manager.get_partition(TopicPartition("short", 0)).log
            assert list(log.local_log.batches) == []
