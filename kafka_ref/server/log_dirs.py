"""What a broker's log directory holds, for DescribeLogDirs.

Mirrors kafka.server.ReplicaManager#describeLogDirs and #getLogEndOffsetLag (Kafka 3.8), kept
out of kafka_ref/replica/ as functions of a ReplicaManager. A broker here has one log directory,
its Disk (``Disk.log_dir``, where every log of the broker lives); an in-memory disk has no volume,
so total and usable bytes are reported unknown (-1), as a v3 response leaves them.
"""

from __future__ import annotations

from typing import Any, Iterable

from kafka_ref.common.errors import Errors, KafkaStorageException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.describe_log_dirs import (
    INVALID_OFFSET_LAG,
    UNKNOWN_VOLUME_BYTES,
    DescribeLogDirsPartition,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition


def get_log_end_offset_lag(replica_manager: Any, tp: TopicPartition, log_end_offset: int, is_future: bool) -> int:
    """Mirrors kafka.server.ReplicaManager#getLogEndOffsetLag.

    1. No online partition with a log here: INVALID_OFFSET_LAG (-1). 2. A future log: how far it
    is behind the current log's end. 3. The current log: how far its end is below the high
    watermark, never negative (0 on a leader, whose high watermark never passes its end).
    """
    partition = replica_manager.online_partition(tp)
    log = partition.log if partition is not None else None
    # 1. Not hosted online.
    if log is None:
        return INVALID_OFFSET_LAG
    # 2. Future log; 3. current log.
    if is_future:
        return log.log_end_offset - log_end_offset
    return max(log.high_watermark - log_end_offset, 0)


def describe_log_dirs(replica_manager: Any, partitions: Iterable[TopicPartition]) -> list[DescribeLogDirsResult]:
    """Mirrors kafka.server.ReplicaManager#describeLogDirs.

    For the broker's log directory: 1. offline: KAFKA_STORAGE_ERROR and nothing else; 2. its logs
    grouped by topic (first seen first), each topic listing only the asked-for partitions, each
    partition with its size in bytes, its offset lag and whether it is a future log; 3. a topic
    with a log here but none of its partitions asked for is dropped (Kafka 3.8.0+, KAFKA-16807;
    before, it appeared with no partitions); a directory without logs has no topics; 4. total and
    usable bytes unknown (-1).
    """
    log_manager = replica_manager.log_manager
    log_dir = log_manager.disk.log_dir
    wanted = set(partitions)
    try:
        # 1. The directory must be online.
        if log_dir not in log_manager.live_log_dirs:
            raise KafkaStorageException(f"Log directory {log_dir} is offline")
        # 2. Its logs, by topic.
        by_topic: dict[str, list[Any]] = {}
        for log in log_manager.all_logs():
            if log.parent_dir == log_dir:
                by_topic.setdefault(log.topic_partition.topic, []).append(log)
        topics = tuple(
            DescribeLogDirsTopic(name=topic, partitions=tuple(
                DescribeLogDirsPartition(
                    partition_index=log.topic_partition.partition, partition_size=log.size,
                    offset_lag=get_log_end_offset_lag(replica_manager, log.topic_partition, log.log_end_offset,
                                                      log.is_future),
                    is_future_key=log.is_future)
                for log in logs if log.topic_partition in wanted))
            for topic, logs in by_topic.items())
        # 3. Since Kafka 3.8.0 (KAFKA-16807) a topic none of whose partitions were asked for is
        #    left out; older brokers list it with no partitions.
        if replica_manager.config.broker_version.is_at_least("3.8"):
            topics = tuple(topic for topic in topics if topic.partitions)
        # 4. No volume to measure.
        return [DescribeLogDirsResult(error_code=Errors.NONE.code, log_dir=log_dir, topics=topics,
                                      total_bytes=UNKNOWN_VOLUME_BYTES, usable_bytes=UNKNOWN_VOLUME_BYTES)]
    except KafkaStorageException as exc:
        state_change_logger(broker_id=replica_manager.local_broker_id).warning(
            "describe_log_dirs_failed", log_dir=log_dir, error=repr(exc))
        return [DescribeLogDirsResult(error_code=Errors.KAFKA_STORAGE_ERROR.code, log_dir=log_dir)]
    except RUN_ENDING:
        raise
    except Exception as exc:  # noqa: BLE001 - Kafka answers any other failure with its error code
        state_change_logger(broker_id=replica_manager.local_broker_id).error(
            "describe_log_dirs_error", log_dir=log_dir, error=repr(exc))
        return [DescribeLogDirsResult(error_code=Errors.for_exception(exc).code, log_dir=log_dir)]
