"""Ports of kafka.log.LocalLogTest (Kafka 3.8.0): appends, reads, truncation and handler closing.

Each test names the Kafka test it mirrors. kafka_ref's LocalLog (kafka_ref/log/local_log.py) has
one "segment" whose batches each stand for a segment file where old data is removed, so where
Kafka's test counts or returns segments the port returns the batches that stand for them, and
``log.roll()`` has nothing to do. Kafka's appendRecords writes one uncompressed batch at
``initialOffset`` with leader epoch 0; so does ``append`` here.

Not ported:
- testRollEmptyActiveSegment, testNonActiveSegmentsFrom, testRollSegmentThatAlreadyExists,
  testNewSegmentsAfterRoll, testRollSegmentErrorWhenNextOffsetIsIllegal, testCreateAndDeleteSegment:
  segment rolling (LocalLog#roll, LogSegments) is not modelled.
- testRemoveAndDeleteSegmentsAsync, testDeleteSegmentFilesSync, testDeleteSegmentFilesAsync: files
  renamed with ``.deleted`` and deleted later by the scheduler are not modelled.
- testLogDeleteDirSuccessWhenEmptyAndFailureWhenNonEmpty, testLogDirRenameToNewDir,
  testLogDirRenameToExistingDir, testFlushingNonExistentDir: partition directories on a file
  system (LocalLog#deleteEmptyDir, #renameDir, a spied dir) are not modelled.
- testUpdateConfig: LocalLog keeps no LogConfig here (UnifiedLog holds the settings it uses).
- testLogCloseSuccess, testLogCloseIdempotent, testLogCloseFailureWhenInMemoryBufferClosed:
  LocalLog#close (closing the segment files) is not modelled; only closeHandlers is.
- testParseTopicPartitionName* and testLogDeleteDirName: directory names are never parsed back
  (the Disk maps partitions to logs) and deleted directories are not renamed.
- testOffsetFromFile: segment file names (LogFileUtils) are not modelled.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import LogOffsetMetadata
from kafka_ref.log.local_log import LocalLog

TP = TopicPartition("test_topic", 1)
# One uncompressed batch holding one record with a one-byte value and no key (61 + 8 bytes).
ONE_RECORD_BATCH_SIZE = 69


def make_log(next_offset: int = 0) -> LocalLog:
    return LocalLog(TP, "/kafka-logs", next_offset=next_offset)


def append(log: LocalLog, records: list[SimpleRecord], initial_offset: int = 0) -> None:
    """LocalLogTest#appendRecords: one batch at ``initial_offset`` (leader epoch 0)."""
    batch = MemoryRecords.with_records(records, base_offset=initial_offset, partition_leader_epoch=0)
    log.append(initial_offset + len(records) - 1, batch.batches)


def read(log: LocalLog, start_offset: int = 0, max_length: int | None = None, min_one_message: bool = False,
         max_offset_metadata: LogOffsetMetadata | None = None):
    """LocalLogTest#readRecords: defaults are the whole segment up to the log end."""
    return log.read(start_offset, log.size_in_bytes if max_length is None else max_length, min_one_message,
                    log.log_end_offset_metadata if max_offset_metadata is None else max_offset_metadata)


def key_values(fetch) -> list[tuple[bytes, bytes]]:
    """LocalLogTest#recordsToKvs: an absent key or value reads as empty."""
    return [(r.key or b"", r.value or b"") for r in fetch.records.records()]


def record(time: MockTime, value: bytes = b"a", key: bytes | None = None) -> SimpleRecord:
    return SimpleRecord(key, value, (), time.milliseconds())


def test_log_delete_segments_success():
    """Mirrors LocalLogTest#testLogDeleteSegmentsSuccess."""
    time = MockTime()
    log = make_log()
    append(log, [record(time)])
    before = list(log.batches)
    deleted = log.delete_all_segments()
    assert len(log) == 0
    assert deleted == before
    with pytest.raises(KafkaStorageException):
        log.check_if_memory_mapped_buffer_closed()


def test_log_flush():
    """Mirrors LocalLogTest#testLogFlush (the recovery point; the flush time is kept by UnifiedLog here)."""
    time = MockTime()
    log = make_log()
    assert log.recovery_point == 0
    append(log, [record(time)])
    log.mark_flushed(1)
    assert log.recovery_point == 1
    # A flush behind the recovery point does not move it back.
    log.mark_flushed(0)
    assert log.recovery_point == 1


def test_log_append():
    """Mirrors LocalLogTest#testLogAppend."""
    time = MockTime()
    log = make_log()
    assert list(read(log, max_length=1).records.records()) == []
    time.advance(1)
    kvs = [(b"abc", b"ABC"), (b"de", b"DE")]
    append(log, [record(time, value, key) for key, value in kvs])
    assert log.log_end_offset == 2
    assert log.recovery_point == 0
    fetched = read(log)
    assert [r.offset for r in fetched.records.records()] == [0, 1]
    assert key_values(fetched) == kvs


def test_log_close_handlers():
    """Mirrors LocalLogTest#testLogCloseHandlers (Kafka's closed channel surfaces as KafkaStorageException here)."""
    time = MockTime()
    log = make_log()
    kvs = [record(time, b"ABC", b"abc"), record(time, b"DE", b"de")]
    append(log, kvs)
    log.close_handlers()
    with pytest.raises(KafkaStorageException):
        append(log, kvs, initial_offset=2)
    assert log.log_end_offset == 2


def test_log_close_handlers_idempotent():
    """Mirrors LocalLogTest#testLogCloseHandlersIdempotent."""
    log = make_log()
    log.close_handlers()
    log.close_handlers()
    with pytest.raises(KafkaStorageException):
        log.check_if_memory_mapped_buffer_closed()


def test_remove_and_delete_segments_sync():
    """Mirrors LocalLogTest#testRemoveAndDeleteSegmentsSync: every batch (segment) below the end goes."""
    time = MockTime()
    log = make_log()
    for offset in range(9):
        append(log, [record(time)], initial_offset=offset)
    to_delete = list(log.batches)
    assert len(to_delete) == 9
    deleted = log.remove_batches_below(log.log_end_offset)
    assert deleted == to_delete
    assert len(log) == 0
    assert (log.log_end_offset, log.first_segment_base_offset, log.segment_base_offset) == (9, 9, 9)


def test_truncate_fully_and_start_at():
    """Mirrors LocalLogTest#testTruncateFullyAndStartAt."""
    time = MockTime()
    log = make_log()
    for offset in range(13):
        append(log, [record(time)], initial_offset=offset)
    expected = list(log.batches)
    deleted = log.truncate_fully_and_start_at(10)
    assert deleted == expected
    assert len(log) == 0
    assert log.segment_base_offset == 10
    assert log.recovery_point == 0
    assert log.log_end_offset == 10
    assert list(read(log, start_offset=10).records.records()) == []


def test_when_fetch_offset_higher_than_max_offset():
    """Mirrors LocalLogTest#testWhenFetchOffsetHigherThanMaxOffset.

    Kafka reads in its segment of offsets 2 and 3 (base 2, offset 3 at position 69); here the one
    segment starts at 2 and holds 2, 3 and 4, so the bound of case 0 is offset 4's place in it
    rather than a newer segment, and the log end of case 2 is at 3 * 69 in it.
    """
    time = MockTime()
    log = make_log(next_offset=2)
    for offset in range(2, 5):
        append(log, [record(time)], initial_offset=offset)
    assert log.batches[0].size_in_bytes == ONE_RECORD_BATCH_SIZE
    bound = LogOffsetMetadata(4, 2, 2 * ONE_RECORD_BATCH_SIZE)
    # case 0: start below the bound: the batch before it.
    fetched = read(log, start_offset=3, max_offset_metadata=bound)
    assert [r.offset for r in fetched.records.records()] == [3]
    assert fetched.fetch_offset_metadata == LogOffsetMetadata(3, 2, ONE_RECORD_BATCH_SIZE)
    # case 1: start at the bound: nothing, at the bound.
    fetched = read(log, start_offset=4, max_offset_metadata=bound)
    assert list(fetched.records.records()) == []
    assert fetched.fetch_offset_metadata == bound
    # case 2: start past the bound: nothing, at the start offset's own place (the log end).
    fetched = read(log, start_offset=5, max_offset_metadata=bound)
    assert list(fetched.records.records()) == []
    assert fetched.fetch_offset_metadata == LogOffsetMetadata(5, 2, 3 * ONE_RECORD_BATCH_SIZE)
    # case 3: the bound has no position (message offset only): nothing.
    fetched = read(log, start_offset=3, max_offset_metadata=LogOffsetMetadata(4, -1, -1))
    assert list(fetched.records.records()) == []
    assert fetched.fetch_offset_metadata == LogOffsetMetadata(3, 2, ONE_RECORD_BATCH_SIZE)
    # case 4: the bound is on an older segment than the start: nothing.
    fetched = read(log, start_offset=3, max_offset_metadata=LogOffsetMetadata(4, 0, 40))
    assert list(fetched.records.records()) == []
    assert fetched.fetch_offset_metadata == LogOffsetMetadata(3, 2, ONE_RECORD_BATCH_SIZE)


def test_truncate_to():
    """Mirrors LocalLogTest#testTruncateTo (Kafka returns the whole segments past 7; here the batches at 7 and after)."""
    time = MockTime()
    log = make_log()
    for offset in range(12):
        append(log, [record(time)], initial_offset=offset)
    assert log.log_end_offset == 12
    expected = list(log.batches)[7:]
    deleted = log.truncate_to(7)
    assert deleted == expected
    assert [batch.base_offset for batch in deleted] == [7, 8, 9, 10, 11]
    assert len(log) == 7
    assert log.recovery_point == 0
    assert log.log_end_offset == 7
    fetched = read(log, start_offset=6)
    assert len(list(fetched.records.records())) == 1
    assert key_values(fetched) == [(b"", b"a")]
    # Appends carry on at the new end.
    append(log, [record(time)], initial_offset=7)
    assert log.log_end_offset == 8
