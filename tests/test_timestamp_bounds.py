"""message.timestamp.before.max.ms / after.max.ms (KIP-937) and the deprecated difference bound.

Mirrors LogValidatorTest#testRecordWithPastTimestampIsRejected and #testRecordWithFutureTimestampIsRejected
(24 h before, 1 h after; a record 5 minutes past either bound is INVALID_TIMESTAMP), the
LogConfig rule that message.timestamp.difference.max.ms stands in for an unset bound, and the
LogAppendTime rule that a producer may not send a batch already typed LogAppendTime; then the same
through a running cluster's producer.
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster
from kafka_ref.common.config import LogConfig
from kafka_ref.common.errors import InvalidTimestampException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import Disk
from kafka_ref.log.log_manager import LogManager

TP = TopicPartition("topic", 0)
HOUR = 60 * 60 * 1000
FIVE_MINUTES = 5 * 60 * 1000


def _log(**topic_config: object):
    time = MockTime()
    log = LogManager(Disk(0), time, default_config=LogConfig(topic_config)).get_or_create_log(TP)
    return time, log


def _records(*timestamps: int, **kwargs: object) -> MemoryRecords:
    return MemoryRecords.with_records([SimpleRecord(b"k", b"v", timestamp=t) for t in timestamps], **kwargs)


@pytest.mark.parametrize("offset_ms", [-24 * HOUR - FIVE_MINUTES, HOUR + FIVE_MINUTES])
def test_record_outside_the_bounds_is_rejected(offset_ms):
    time, log = _log(**{"message.timestamp.before.max.ms": 24 * HOUR, "message.timestamp.after.max.ms": HOUR})
    now = time.milliseconds()
    with pytest.raises(InvalidTimestampException, match="is out of range"):
        log.append_as_leader(_records(now, now + offset_ms, now), 0)
    assert log.log_end_offset == 0
    # Inside the bounds (at them exactly) the batch goes in.
    log.append_as_leader(_records(now - 24 * HOUR, now + HOUR), 0)
    assert log.log_end_offset == 2


def test_difference_bound_stands_in_for_unset_bounds():
    time, log = _log(**{"message.timestamp.difference.max.ms": 1000})
    now = time.milliseconds()
    assert (log.timestamp_before_max_ms, log.timestamp_after_max_ms) == (1000, 1000)
    for bad in (now - 1001, now + 1001):
        with pytest.raises(InvalidTimestampException):
            log.append_as_leader(_records(bad), 0)
    log.append_as_leader(_records(now - 1000, now + 1000), 0)
    # An explicit bound wins over the difference.
    _, other = _log(**{"message.timestamp.difference.max.ms": 1000, "message.timestamp.after.max.ms": 5})
    assert (other.timestamp_before_max_ms, other.timestamp_after_max_ms) == (1000, 5)


def test_unbounded_by_default_and_records_without_timestamp_pass():
    time, log = _log()
    log.append_as_leader(_records(0, 2**40), 0)
    _, bounded = _log(**{"message.timestamp.before.max.ms": 1})
    bounded.append_as_leader(MemoryRecords.with_records([SimpleRecord(b"k", b"v")]), 0)   # NO_TIMESTAMP
    assert (log.log_end_offset, bounded.log_end_offset) == (2, 1)


def test_producer_may_not_send_log_append_time_batches_to_a_log_append_time_topic():
    time, log = _log(**{"message.timestamp.type": "LogAppendTime"})
    batch = _records(5, timestamp_type="log_append", log_append_time=time.milliseconds())
    with pytest.raises(InvalidTimestampException, match="should not set timestamp type to LogAppendTime"):
        log.append_as_leader(batch, 0)
    log.append_as_leader(_records(5), 0)   # a CreateTime batch is stamped by the leader
    assert log.log_end_offset == 1


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_producer_gets_invalid_timestamp(mode):
    async with Cluster(brokers=1, metadata_mode=mode) as cluster:
        await cluster.create_topic("bounded", partitions=1, replication_factor=1,
                                   config={"message.timestamp.after.max.ms": str(HOUR)})
        async with cluster.producer(retries=0) as producer:
            with pytest.raises(InvalidTimestampException):
                await producer.send("bounded", b"late", partition=0, timestamp=cluster.now_ms() + HOUR + FIVE_MINUTES)
            metadata = await producer.send("bounded", b"ok", partition=0, timestamp=cluster.now_ms())
        assert metadata.offset == 0
