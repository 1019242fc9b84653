"""Tests for LogManager and Disk: creation, deletion, checkpoints, crash and clean restart.

Where a test mirrors one of kafka.log.LogManagerTest or OffsetCheckpointFileTest it says which.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.config import LogConfig
from kafka_ref.common.errors import InconsistentTopicIdException, KafkaStorageException, RecordTooLargeException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log import Disk, EpochEntry, FetchIsolation, LogManager, OffsetCheckpointFile

T0 = TopicPartition("orders", 0)
T1 = TopicPartition("orders", 1)


def recs(n: int, size: int = 10) -> MemoryRecords:
    return MemoryRecords.with_records([SimpleRecord(b"k", bytes(size), timestamp=1000 + i) for i in range(n)])


def started(disk: Disk, **kwargs) -> LogManager:
    manager = LogManager(disk, MockTime(), **kwargs)
    manager.startup()
    return manager


@pytest.fixture
def disk() -> Disk:
    return Disk(1)


# -- creation and lookup ------------------------------------------------------------------------


def test_create_log(disk):
    """Mirrors LogManagerTest#testCreateLog and #testGetNonExistentLog."""
    manager = started(disk)
    log = manager.get_or_create_log(T0, is_new=True)
    assert manager.get_log(T0) is log
    assert manager.get_or_create_log(T0) is log
    assert log.dir == "/kafka-logs-1/orders-0"
    assert disk.logs[T0] is log.local_log
    assert manager.get_log(T1) is None
    assert manager.all_logs() == [log]


def test_get_or_create_log_topic_ids(disk):
    """LogManager#getOrCreateLog assigns a missing topic id and refuses a different one."""
    manager = started(disk)
    first, second = Uuid(7, 7), Uuid(8, 8)
    log = manager.get_or_create_log(T0)
    assert log.topic_id is None
    manager.get_or_create_log(T0, topic_id=first)
    assert log.topic_id == first
    with pytest.raises(InconsistentTopicIdException):
        manager.get_or_create_log(T0, topic_id=second)


def test_log_config_limits(disk):
    """Per-topic overrides apply at creation and through update_topic_config."""
    manager = started(disk, default_config=LogConfig({"max.message.bytes": 1000}), topic_configs={"small": LogConfig({"max.message.bytes": 50})})
    assert manager.get_or_create_log(T0).max_message_bytes == 1000
    small = manager.get_or_create_log(TopicPartition("small", 0))
    with pytest.raises(RecordTooLargeException):
        small.append_as_leader(recs(1), 0)
    manager.update_topic_config("small", LogConfig({"max.message.bytes": 500, "retention.bytes": 1000}))
    assert (small.max_message_bytes, small.retention_bytes) == (500, 1000)


# -- deletion ---------------------------------------------------------------------------------


def test_async_delete_removes_log_and_checkpoints(disk):
    """Mirrors LogManagerTest#testFileReferencesAfterAsyncDelete's core: the log is gone from manager and disk."""
    manager = started(disk)
    manager.get_or_create_log(T0).append_as_leader(recs(2), 0)
    manager.get_or_create_log(T1)
    manager.checkpoint_recovery_offsets()
    removed = manager.async_delete(T0)
    assert removed is not None and removed.topic_partition == T0
    assert manager.get_log(T0) is None and T0 not in disk.logs
    assert disk.recovery_point_checkpoint.read() == {T1: 0}
    assert manager.async_delete(T0) is None
    assert manager.delete_log(T0) is None
    # A new log of the same partition starts empty.
    assert manager.get_or_create_log(T0).log_end_offset == 0


# -- checkpoint file format ---------------------------------------------------------------------


def test_offset_checkpoint_file_text_and_round_trip():
    """Mirrors OffsetCheckpointFileTest#shouldPersistAndOverwriteAndReloadFile."""
    checkpoint = OffsetCheckpointFile("/kafka-logs-1/replication-offset-checkpoint")
    assert checkpoint.read() == {}
    checkpoint.write({T1: 3, T0: 5, TopicPartition("a-b", 12): 0})
    assert checkpoint.content == "0\n3\na-b 12 0\norders 0 5\norders 1 3\n"
    assert checkpoint.read() == {T0: 5, T1: 3, TopicPartition("a-b", 12): 0}
    checkpoint.write({})
    assert (checkpoint.content, checkpoint.read()) == ("0\n0\n", {})


def test_malformed_offset_checkpoint_fails_the_directory(disk):
    """Mirrors OffsetCheckpointFileTest#shouldThrowIfVersionIsNotRecognised (the failure handler fails the dir)."""
    disk.recovery_point_checkpoint.content = "1\n0\n"
    with pytest.raises(KafkaStorageException, match="Unrecognised version:1"):
        disk.recovery_point_checkpoint.read()
    assert disk.offline
    with pytest.raises(KafkaStorageException, match="offline"):
        disk.recovery_point_checkpoint.write({})


# -- crash and restart --------------------------------------------------------------------------


def test_crash_keeps_logs_and_restores_hw_from_checkpoint(disk):
    """A crash keeps the batches on the disk; the HW comes back from replication-offset-checkpoint."""
    manager = started(disk)
    log0 = manager.get_or_create_log(T0)
    log0.append_as_leader(recs(3), 0)
    log0.append_as_leader(recs(2), 2)
    log1 = manager.get_or_create_log(T1)
    log1.append_as_leader(recs(4), 1)
    log0.update_high_watermark(3)
    log1.update_high_watermark(4)
    manager.checkpoint_high_watermarks()
    assert disk.replication_offset_checkpoint.content == "0\n2\norders 0 3\norders 1 4\n"
    # HW moves on but is not checkpointed before the crash.
    log0.update_high_watermark(5)
    batches_before = list(log0.batches)
    del manager  # the broker task dies; the disk stays

    restarted = started(disk)
    assert restarted.had_clean_shutdown is False
    r0, r1 = restarted.get_log(T0), restarted.get_log(T1)
    assert list(r0.batches) == batches_before and r0.batches[0] is batches_before[0]
    assert (r0.log_end_offset, r0.high_watermark, r0.log_start_offset) == (5, 3, 0)
    assert (r1.log_end_offset, r1.high_watermark) == (4, 4)
    assert r0.leader_epoch_cache.epoch_entries == [EpochEntry(0, 0), EpochEntry(2, 3)]
    assert [b.base_offset for b in r0.read(0, 10_000, FetchIsolation.HIGH_WATERMARK, True).records] == [0]


def test_checkpointed_high_watermark_is_clamped_to_log_end(disk):
    """Partition#createLog applies the checkpointed HW through updateHighWatermark, which clamps it."""
    manager = started(disk)
    manager.get_or_create_log(T0).append_as_leader(recs(2), 0)
    disk.replication_offset_checkpoint.write({T0: 10})
    assert started(disk).get_log(T0).high_watermark == 2


def test_log_start_offset_survives_only_when_checkpointed(disk):
    """A log start offset not yet checkpointed is lost in a crash, as in Kafka."""
    manager = started(disk)
    log = manager.get_or_create_log(T0)
    for _ in range(3):
        log.append_as_leader(recs(2), 0)
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(3)
    manager.checkpoint_high_watermarks()
    # Crash before the log start offset is checkpointed: it falls back to the data.
    assert started(disk).get_log(T0).log_start_offset == 0
    manager.checkpoint_log_start_offsets()
    assert disk.log_start_offset_checkpoint.read() == {T0: 3}
    restarted = started(disk).get_log(T0)
    assert (restarted.log_start_offset, restarted.high_watermark) == (3, 6)
    assert restarted.leader_epoch_cache.epoch_entries == [EpochEntry(0, 3)]


def test_checkpoint_log_start_offsets_skips_logs_starting_at_their_data(disk):
    """LogManager#checkpointLogStartOffsetsInDir writes only logs whose start is past their data."""
    manager = started(disk)
    log = manager.get_or_create_log(T0)
    log.retention_ms = -1  # these records are stamped in 1970: no time retention in this test
    log.append_as_leader(recs(2), 0)
    log.append_as_leader(recs(2), 0)
    log.update_high_watermark(4)
    log.maybe_increment_log_start_offset(2)
    log.delete_old_segments()
    manager.get_or_create_log(T1)
    manager.checkpoint_log_start_offsets()
    assert disk.log_start_offset_checkpoint.read() == {}
    assert started(disk).get_log(T0).log_start_offset == 2


def test_log_ending_before_checkpointed_start_starts_over(disk):
    """LogLoader: a log ending before its checkpointed log start offset starts over there.

    The situation of UnifiedLogTest#testLogEndLessThanStartAfterReopen, reached here by a
    checkpoint rather than a corrupt segment.
    """
    manager = started(disk)
    manager.get_or_create_log(T0).append_as_leader(recs(3), 4)
    disk.log_start_offset_checkpoint.write({T0: 10})
    log = started(disk).get_log(T0)
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset, len(log.batches)) == (10, 10, 10, 0)
    assert log.leader_epoch_cache.epoch_entries == []
    assert disk.files()["/kafka-logs-1/orders-0/leader-epoch-checkpoint"] == "0\n0\n"


def test_clean_shutdown_writes_recovery_points_and_marker(disk):
    """Mirrors LogManagerTest#testCheckpointRecoveryPoints and the clean-shutdown file of #testHandlingExceptionsDuringShutdown."""
    manager = started(disk)
    log = manager.get_or_create_log(T0)
    log.append_as_leader(recs(3), 0)
    manager.shutdown()
    assert disk.clean_shutdown is True and "/kafka-logs-1/.kafka_cleanshutdown" in disk.files()
    assert disk.recovery_point_checkpoint.read() == {T0: 3}
    restarted = started(disk)
    assert restarted.had_clean_shutdown is True and disk.clean_shutdown is False
    assert restarted.get_log(T0).recovery_point == 3


def test_unclean_restart_uses_checkpointed_recovery_point(disk):
    """LogLoader#recoverLog: after a crash the recovery point is the checkpointed one."""
    manager = started(disk)
    log = manager.get_or_create_log(T0)
    log.append_as_leader(recs(3), 0)
    log.flush(2)
    manager.checkpoint_recovery_offsets()
    log.append_as_leader(recs(3), 0)
    restarted = started(disk).get_log(T0)
    assert (restarted.recovery_point, restarted.log_end_offset) == (2, 6)


def test_truncate_to_through_manager_checkpoints_recovery_points(disk):
    """LogManager#truncateTo pulls recovery points back and checkpoints them."""
    manager = started(disk)
    log = manager.get_or_create_log(T0)
    log.append_as_leader(recs(2), 0)
    log.append_as_leader(recs(2), 0)
    log.flush()
    assert manager.truncate_to({T0: 2, T1: 0}) is True
    assert disk.recovery_point_checkpoint.read() == {T0: 2}
    assert manager.truncate_to({T0: 2}) is False
    manager.truncate_fully_and_start_at(T0, 9)
    # As in Kafka, starting over does not raise the recovery point (it only never exceeds the LEO).
    assert (log.log_start_offset, log.log_end_offset, disk.recovery_point_checkpoint.read()) == (9, 9, {T0: 2})


def test_cleanup_logs_runs_retention(disk):
    """Mirrors LogManagerTest#testCleanupSegmentsToMaintainSize (one batch plays one segment)."""
    manager = started(disk, default_config=LogConfig({"retention.bytes": 0}))
    log = manager.get_or_create_log(T0)
    for _ in range(3):
        log.append_as_leader(recs(1), 0)
    log.update_high_watermark(2)
    assert manager.cleanup_logs() == 2
    assert (log.log_start_offset, len(log.batches)) == (2, 1)


# -- log directory failure ------------------------------------------------------------------------


def test_offline_disk(disk):
    """With its only log directory failed the manager can create nothing and loads nothing."""
    manager = started(disk)
    manager.get_or_create_log(T0).append_as_leader(recs(1), 0)
    assert manager.handle_log_dir_failure("disk error") == [T0]
    assert manager.get_log(T0) is None and manager.live_log_dirs == []
    with pytest.raises(KafkaStorageException, match="are offline"):
        manager.get_or_create_log(T1)
    with pytest.raises(KafkaStorageException, match="No log directories available"):
        manager.get_or_create_log(T1, is_new=True)
    with pytest.raises(KafkaStorageException, match="Failed to delete log for orders-1 because it may be in one of the offline directories"):
        manager.async_delete(T1)
    with pytest.raises(KafkaStorageException, match="offline"):
        LogManager(disk, MockTime()).startup()
    # The data is still on the (failed) disk; operations on it fail.
    with pytest.raises(KafkaStorageException):
        disk.logs[T0].read(0, 100, False, disk.logs[T0].log_end_offset_metadata)
