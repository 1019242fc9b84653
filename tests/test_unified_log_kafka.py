"""Ports of kafka.log.UnifiedLogTest (Kafka 3.8.0): appends, reads, producer state, epochs.

Each test names the Kafka test it mirrors. kafka_ref's log keeps one "segment" whose batches
each play the part of a segment file for retention (kafka_ref/log/log_retention.py), so where a
Kafka test counts segments the port counts the batches that are left, or asserts the offsets
that the segment counts stand for. Log rolls do not exist here: a Kafka test's ``log.roll()``
has nothing to do and is left out. The rest of UnifiedLogTest is in
tests/test_unified_log_kafka2.py; earlier ports are in tests/test_unified_log.py.
"""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from kafka_ref.common.errors import (
    OffsetOutOfRangeException,
    OutOfOrderSequenceException,
    RecordTooLargeException,
)
from kafka_ref.common.records import (
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    TimestampType,
)
from kafka_ref.common.records.builder import MemoryRecordsBuilder
from kafka_ref.common.records.constants import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    NO_TIMESTAMP,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import (
    AppendOrigin,
    Disk,
    EpochEntry,
    FetchIsolation,
    LogStartOffsetIncrementReason,
    UnexpectedAppendOffsetException,
    UnifiedLog,
)
from kafka_ref.log.unified_log import MAX_TIMESTAMP

TP = TopicPartition("topic", 0)


def make_log(disk: Disk | None = None, time: MockTime | None = None, **kwargs) -> UnifiedLog:
    return UnifiedLog.create(TP, disk if disk is not None else Disk(0), time=time or MockTime(), **kwargs)


def records(*values: bytes | None, keys: list[bytes | None] | None = None, timestamp: int | None = None,
            base_offset: int = 0, leader_epoch: int = -1, producer_id: int = -1, producer_epoch: int = -1,
            sequence: int = -1, compression: str = "none",
            timestamp_type: TimestampType | str = "create") -> MemoryRecords:
    """TestUtils#records: one v2 batch of the given values (keys None unless given)."""
    keys = keys if keys is not None else [None] * len(values)
    return MemoryRecords.with_records(
        [SimpleRecord(key, value, timestamp=timestamp) for key, value in zip(keys, values)],
        base_offset=base_offset, partition_leader_epoch=leader_epoch, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=sequence, compression=compression,
        timestamp_type=timestamp_type)


def batches_of(*memory_records: MemoryRecords) -> MemoryRecords:
    """Several single-batch MemoryRecords written back to back (a ByteBuffer of builders)."""
    return MemoryRecords.of([batch for recs in memory_records for batch in recs])


def with_last_offset_delta(batch: RecordBatch, last_offset_delta: int) -> RecordBatch:
    """A batch whose header claims ``last_offset_delta`` (what compaction leaves, MemoryRecords#filterTo)."""
    buffer = bytearray(batch.buffer)
    struct.pack_into(">i", buffer, ATTRIBUTES_OFFSET + 2, last_offset_delta)
    struct.pack_into(">I", buffer, CRC_OFFSET, crc32c(bytes(buffer[ATTRIBUTES_OFFSET:])))
    return RecordBatch(bytes(buffer))


def compacted_batch(base_offset: int, kept: list[tuple[int, bytes]], last_offset_delta: int, *,
                    producer_id: int = -1, producer_epoch: int = -1, sequence: int = -1,
                    leader_epoch: int = 0) -> MemoryRecords:
    """A batch as the cleaner leaves it: records ``kept`` at their offsets, the original last offset delta."""
    builder = MemoryRecordsBuilder(base_offset=base_offset, producer_id=producer_id, producer_epoch=producer_epoch,
                                   base_sequence=sequence, partition_leader_epoch=leader_epoch)
    for offset, value in kept:
        builder.append_with_offset(offset, 0, None, value)
    return MemoryRecords.of([with_last_offset_delta(builder.build_batch(), last_offset_delta)])


def last_sequences(log: UnifiedLog) -> dict[int, int]:
    """UnifiedLog#activeProducersWithLastSequence."""
    return {pid: entry.last_seq for pid, entry in log.producer_state_manager.producers.items()}


def read_log(log: UnifiedLog, start: int, max_length: int, isolation: FetchIsolation = FetchIsolation.LOG_END,
             min_one_message: bool = True):
    """LogTestUtils#readLog (minOneMessage defaults to true)."""
    return log.read(start, max_length, isolation, min_one_message)


# -- appends and offsets ---------------------------------------------------------------------


def test_high_watermark_metadata_updated_after_segment_roll():
    """Mirrors UnifiedLogTest#testHighWatermarkMetadataUpdatedAfterSegmentRoll (no roll here)."""
    log = make_log()
    recs = records(b"value", b"value", b"value", keys=[b"a", b"b", b"c"], timestamp=0)

    def assert_fetch(fetch_offset: int, size: int, offsets: list[int]) -> None:
        info = log.read(fetch_offset, 2048, FetchIsolation.HIGH_WATERMARK, False)
        assert info.records.size_in_bytes == size
        assert [r.offset for r in info.records.records()] == offsets

    log.append_as_leader(recs, 0)
    assert_fetch(0, 0, [])
    log.maybe_increment_high_watermark(log.log_end_offset_metadata)
    assert_fetch(0, recs.size_in_bytes, [0, 1, 2])
    log.append_as_leader(recs, 0)
    assert_fetch(3, 0, [])


def test_append_as_leader_with_raft_leader():
    """Mirrors UnifiedLogTest#testAppendAsLeaderWithRaftLeader."""
    log = make_log()

    def raft_records(offset: int) -> MemoryRecords:
        return records(b"value", b"value", b"value", keys=[b"a", b"b", b"c"], timestamp=0, base_offset=offset,
                       leader_epoch=0)

    log.append_as_leader(raft_records(0), 0, AppendOrigin.RAFT_LEADER)
    assert (log.log_start_offset, log.log_end_offset) == (0, 3)
    with pytest.raises(UnexpectedAppendOffsetException):
        log.append_as_leader(raft_records(1), 0, AppendOrigin.RAFT_LEADER)
    log.append_as_leader(raft_records(3), 0, AppendOrigin.RAFT_LEADER)
    assert log.log_end_offset == 6


def test_truncate_fully_and_start():
    """Mirrors UnifiedLogTest#testTruncateFullyAndStart (an idempotent producer's batch stands in
    for the transactional one: kafka_ref models no transactions)."""
    disk = Disk(0)
    log = make_log(disk)
    log.append_as_leader(records(b"0", b"1", b"2"), 0)
    log.append_as_leader(records(b"3", b"4", producer_id=17, producer_epoch=10, sequence=0), 0)
    assert last_sequences(log) == {17: 1}
    log.close()
    reopened = make_log(disk)
    assert last_sequences(reopened) == {17: 1}
    reopened.truncate_fully_and_start_at(2, 1)
    assert last_sequences(reopened) == {}
    assert (reopened.log_start_offset, reopened.log_end_offset) == (1, 2)


def test_duplicate_appends():
    """Mirrors UnifiedLogTest#testDuplicateAppends."""
    log = make_log()
    pid, epoch = 1, 0
    seq = 0
    for _ in range(6):
        log.append_as_leader(records(b"value", keys=[b"key"], producer_id=pid, producer_epoch=epoch, sequence=seq), 0)
        seq += 1

    def multi() -> MemoryRecords:
        value = f"value-{seq}".encode()
        key = f"key-{seq}".encode()
        return records(value, value, value, keys=[key] * 3, producer_id=pid, producer_epoch=epoch, sequence=seq)

    multi_info = log.append_as_leader(multi(), 0)
    assert multi_info.last_offset - multi_info.first_offset + 1 == 3
    duplicate_info = log.append_as_leader(multi(), 0)
    assert (duplicate_info.first_offset, duplicate_info.last_offset) == (multi_info.first_offset, multi_info.last_offset)
    seq += 3
    # A batch overlapping the end of the last one: out of order.
    with pytest.raises(OutOfOrderSequenceException):
        log.append_as_leader(records(b"v", b"v", producer_id=pid, producer_epoch=epoch, sequence=seq - 2), 0)
    # The fourth batch from the end (sequence 2) is still remembered: answered, not written.
    end = log.log_end_offset
    log.append_as_leader(records(b"value", keys=[b"key"], producer_id=pid, producer_epoch=epoch, sequence=2), 0)
    assert log.log_end_offset == end
    # Older than the last five batches: out of order.
    with pytest.raises(OutOfOrderSequenceException):
        log.append_as_leader(records(b"value-1", keys=[b"key-1"], producer_id=pid, producer_epoch=epoch, sequence=1), 0)
    original = log.append_as_leader(records(b"value", keys=[b"key"], producer_id=pid, producer_epoch=epoch, sequence=seq), 0)
    again = log.append_as_leader(records(b"value", keys=[b"key"], producer_id=pid, producer_epoch=epoch, sequence=seq), 0)
    assert (again.first_offset, again.last_offset) == (original.first_offset, original.last_offset) == (9, 9)


def test_multiple_producer_ids_per_memory_record():
    """Mirrors UnifiedLogTest#testMultipleProducerIdsPerMemoryRecord."""
    log = make_log()
    appended = batches_of(*(
        records(b"value", keys=[b"key"], base_offset=offset, producer_id=offset + 1, producer_epoch=0, sequence=0,
                timestamp_type="log_append", timestamp=0, leader_epoch=0)
        for offset in range(4)))
    log.append_as_follower(appended)
    log.flush()
    fetched = list(read_log(log, 0, 2**31 - 1).records)
    assert len(fetched) == 4
    for original, batch in zip(appended, fetched):
        assert (batch.producer_id, batch.base_offset, batch.base_sequence) == (
            original.producer_id, original.base_offset, original.base_sequence)


def test_duplicate_append_to_follower():
    """Mirrors UnifiedLogTest#testDuplicateAppendToFollower: a follower does not check sequences."""
    log = make_log()
    assert log.log_end_offset == 0
    for base in (0, 2):
        log.append_as_follower(records(b"a", b"b", base_offset=base, producer_id=1, producer_epoch=0, sequence=0,
                                       leader_epoch=0))
    assert log.log_end_offset == 4


def test_multiple_producers_with_duplicates_in_single_append():
    """Mirrors UnifiedLogTest#testMultipleProducersWithDuplicatesInSingleAppend."""
    log = make_log()
    layout = [(0, 1, 0), (1, 2, 0), (2, 1, 1), (3, 2, 1), (4, 1, 1)]  # (offset, pid, seq); the last repeats pid 1 seq 1
    appended = batches_of(*(
        records(b"value", keys=[b"key"], base_offset=offset, producer_id=pid, producer_epoch=0, sequence=seq,
                timestamp_type="log_append", timestamp=0, leader_epoch=0)
        for offset, pid, seq in layout))
    assert log.log_end_offset == 0
    log.append_as_follower(appended)
    assert log.log_end_offset == 5


def test_producer_id_map_truncate_to_with_no_snapshots():
    """Mirrors UnifiedLogTest#testProducerIdMapTruncateToWithNoSnapshots."""
    log = make_log()
    log.append_as_leader(records(b"a", producer_id=1, producer_epoch=0, sequence=0), 0)
    log.append_as_leader(records(b"b", producer_id=1, producer_epoch=0, sequence=1), 0)
    log.truncate_to(1)
    assert last_sequences(log) == {1: 0}


def test_update_producer_id_map_with_compacted_data():
    """Mirrors UnifiedLogTest#testUpdateProducerIdMapWithCompactedData: a batch with gaps keeps its
    last sequence (base sequence plus the header's last offset delta)."""
    log = make_log()
    log.append_as_follower(compacted_batch(23, [(23, b"a"), (25, b"c")], 3, producer_id=1, producer_epoch=0, sequence=0))
    assert last_sequences(log) == {1: 3}


def test_rebuild_producer_id_map_with_compacted_data():
    """Mirrors UnifiedLogTest#testRebuildProducerIdMapWithCompactedData."""
    log = make_log()
    log.append_as_follower(compacted_batch(23, [(23, b"a"), (25, b"c")], 3, producer_id=1, producer_epoch=0, sequence=0))
    log.append_as_follower(records(b"e", b"f", base_offset=27, leader_epoch=0, timestamp=0))
    log.truncate_to(27)
    assert last_sequences(log) == {1: 3}


def test_rebuild_producer_state_with_empty_compacted_batch():
    """Mirrors UnifiedLogTest#testRebuildProducerStateWithEmptyCompactedBatch: an emptied batch
    (RETAIN_EMPTY) still carries its producer's last sequence."""
    log = make_log()
    log.append_as_follower(compacted_batch(23, [], 1, producer_id=1, producer_epoch=0, sequence=0))
    log.append_as_follower(records(b"e", b"f", base_offset=25, leader_epoch=0, timestamp=0))
    log.truncate_to(25)
    assert last_sequences(log) == {1: 1}


def test_producer_id_expiration_on_segment_deletion():
    """Mirrors UnifiedLogTest#testProducerIdExpirationOnSegmentDeletion: retention keeps producer state."""
    log = make_log()
    first = records(b"foo", producer_id=1, producer_epoch=0, sequence=0)
    log.retention_bytes = first.size_in_bytes * 2
    log.append_as_leader(first, 0)
    log.append_as_leader(records(b"bar", producer_id=2, producer_epoch=0, sequence=0), 0)
    log.append_as_leader(records(b"baz", producer_id=2, producer_epoch=0, sequence=1), 0)
    assert len(log.batches) == 3 and set(last_sequences(log)) == {1, 2}
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments()
    assert len(log.batches) == 2
    assert set(last_sequences(log)) == {1, 2}


# -- reads -------------------------------------------------------------------------------------


def test_load_empty_log():
    """Mirrors UnifiedLogTest#testLoadEmptyLog."""
    disk = Disk(0)
    make_log(disk).close()
    log = make_log(disk)
    info = log.append_as_leader(records(b"test", timestamp=0), 0)
    assert (info.first_offset, log.log_end_offset) == (0, 1)


def test_append_and_read_with_sequential_offsets():
    """Mirrors UnifiedLogTest#testAppendAndReadWithSequentialOffsets."""
    log = make_log()
    values = [str(i).encode() for i in range(0, 100, 2)]
    for value in values:
        log.append_as_leader(records(value), 0)
    for i, value in enumerate(values):
        batch = next(iter(read_log(log, i, 1).records))
        assert batch.last_offset == i
        record = next(iter(batch))
        assert record.key is None and record.value == value
    assert len(read_log(log, len(values), 100).records) == 0


MESSAGE_IDS = list(range(50)) + list(range(50, 200, 7))


def _append_non_sequential(log: UnifiedLog) -> None:
    for message_id in MESSAGE_IDS:
        log.append_as_follower(records(str(message_id).encode(), base_offset=message_id, leader_epoch=0))


def test_append_and_read_with_non_sequential_offsets():
    """Mirrors UnifiedLogTest#testAppendAndReadWithNonSequentialOffsets."""
    log = make_log()
    _append_non_sequential(log)
    for i in range(50, max(MESSAGE_IDS)):
        expected = next(m for m in MESSAGE_IDS if m >= i)
        record = next(read_log(log, i, 100).records.records())
        assert (record.offset, record.key, record.value) == (expected, None, str(expected).encode())


def test_read_with_min_message():
    """Mirrors UnifiedLogTest#testReadWithMinMessage."""
    log = make_log()
    _append_non_sequential(log)
    for i in range(50, max(MESSAGE_IDS)):
        expected = next(m for m in MESSAGE_IDS if m >= i)
        for max_length in (1, 100000, 100):
            record = next(read_log(log, i, max_length).records.records())
            assert (record.offset, record.value) == (expected, str(expected).encode())


def test_log_rolls():
    """Mirrors UnifiedLogTest#testLogRolls: reads across many appends return each record in turn."""
    log = make_log()
    appended = [records(str(i).encode(), timestamp=1000 + i) for i in range(100)]
    for recs in appended:
        log.append_as_leader(recs, 0)
    log.flush()
    offset = 0
    for i in range(100):
        head = next(iter(read_log(log, offset, 1024 * 1024).records))
        assert head.last_offset == offset
        expected, actual = next(appended[i].records()), next(iter(head))
        assert (actual.key, actual.value, actual.timestamp) == (expected.key, expected.value, expected.timestamp)
        offset = head.last_offset + 1
    assert list(read_log(log, 100, 1024 * 1024).records.records()) == []
    assert log.recovery_point == 100


def test_compressed_messages():
    """Mirrors UnifiedLogTest#testCompressedMessages: a read inside a compressed batch starts at its first record."""
    log = make_log()
    log.append_as_leader(records(b"hello", b"there", compression="gzip"), 0)
    log.append_as_leader(records(b"alpha", b"beta", compression="gzip"), 0)

    def first_offset_read(offset: int) -> int:
        return next(read_log(log, offset, 4096).records.records()).offset

    assert [first_offset_read(offset) for offset in range(4)] == [0, 0, 2, 2]


def test_append_message_with_null_payload():
    """Mirrors UnifiedLogTest#testAppendMessageWithNullPayload."""
    log = make_log()
    log.append_as_leader(records(None), 0)
    head = next(read_log(log, 0, 4096).records.records())
    assert head.offset == 0 and head.value is None


def test_append_with_no_timestamp():
    """Mirrors UnifiedLogTest#testAppendWithNoTimestamp."""
    log = make_log()
    info = log.append_as_leader(records(b"value", keys=[b"key"], timestamp=NO_TIMESTAMP), 0)
    assert (info.first_offset, info.max_timestamp, log.log_end_offset) == (0, NO_TIMESTAMP, 1)


def test_message_size_check_in_append_as_follower():
    """Mirrors UnifiedLogTest#testMessageSizeCheckInAppendAsFollower: the follower skips the size check."""
    first = records(b"You", b"bethe", leader_epoch=0)
    second = records(b"change (I need more bytes)... blah blah blah.", b"More padding boo hoo", base_offset=5,
                     leader_epoch=0)
    log = make_log(max_message_bytes=second.size_in_bytes - 1)
    log.append_as_follower(first)
    log.append_as_follower(second)
    assert log.log_end_offset == 7
    with pytest.raises(RecordTooLargeException):
        log.append_as_leader(records(b"change (I need more bytes)... blah blah blah.", b"More padding boo hoo"), 0)


def test_offset_snapshot():
    """Mirrors UnifiedLogTest#testOffsetSnapshot: the snapshot's HW carries its position."""
    log = make_log()
    log.append_as_follower(records(b"a", b"b", b"c", leader_epoch=5))
    log.update_high_watermark(2)
    for _ in range(2):
        offsets = log.fetch_offset_snapshot()
        assert offsets.high_watermark.message_offset == 2
        assert not offsets.high_watermark.message_offset_only()


def test_fetch_offset_by_timestamp_with_max_timestamp_includes_timestamp():
    """Mirrors UnifiedLogTest#testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp."""
    log = make_log()
    assert log.fetch_offset_by_timestamp(0) is None
    first = 1_000_000
    log.append_as_leader(records(bytes(10), timestamp=first), 0)
    log.append_as_leader(records(bytes(10), timestamp=first + 1), 0)
    log.append_as_leader(records(bytes(10), timestamp=first), 0)
    found = log.fetch_offset_by_timestamp(MAX_TIMESTAMP)
    assert (found.timestamp, found.offset, found.leader_epoch) == (first + 1, 1, 0)


# -- high watermark and log start offset -----------------------------------------------------


def test_maybe_update_high_watermark_as_follower():
    """Mirrors UnifiedLogTest#testMaybeUpdateHighWatermarkAsFollower."""
    log = make_log()
    for i in range(100):
        log.append_as_leader(records(f"test{i}".encode()), 0)
    assert log.maybe_update_high_watermark(99) == 99
    assert log.maybe_update_high_watermark(99) is None
    assert log.maybe_update_high_watermark(100) == 100
    assert log.maybe_update_high_watermark(100) is None
    assert log.maybe_update_high_watermark(101) is None


def test_cannot_increment_log_start_offset_past_high_watermark():
    """Mirrors UnifiedLogTest#testCannotIncrementLogStartOffsetPastHighWatermark."""
    log = make_log()
    for i in range(100):
        log.append_as_leader(records(f"test{i}".encode()), 0)
    log.update_high_watermark(25)
    with pytest.raises(OffsetOutOfRangeException):
        log.maybe_increment_log_start_offset(26, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    assert log.log_start_offset == 0


# -- leader epochs ---------------------------------------------------------------------------


def test_should_apply_epoch_to_message_on_append_if_leader():
    """Mirrors UnifiedLogTest#shouldApplyEpochToMessageOnAppendIfLeader."""
    log = make_log()
    log.maybe_assign_epoch_start_offset(72, 50)
    for i in range(50):
        log.append_as_leader(records(str(i).encode()), 72)
    for i in range(50):
        assert next(iter(read_log(log, i, 1).records)).partition_leader_epoch == 72


def test_follower_should_save_epoch_information_from_replicated_messages_to_the_epoch_cache():
    """Mirrors UnifiedLogTest#followerShouldSaveEpochInformationFromReplicatedMessagesToTheEpochCache."""
    log = make_log()
    for i in range(50):
        log.append_as_follower(records(str(i).encode(), base_offset=i, leader_epoch=42))
    assert log.latest_epoch == 42


def test_should_truncate_leader_epoch_checkpoint_file_when_truncating_log():
    """Mirrors UnifiedLogTest#shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog."""
    log = make_log()
    cache = log.leader_epoch_cache

    def append(epoch: int, start_offset: int, count: int) -> None:
        for i in range(count):
            log.append_as_follower(records(b"value", base_offset=start_offset + i, leader_epoch=epoch))

    append(0, 0, 10)
    append(1, 10, 6)
    append(2, 16, 4)
    assert log.log_end_offset == 20
    log.truncate_to(log.log_end_offset)
    assert len(cache.epoch_entries) == 3
    log.truncate_to(11)
    assert cache.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 10)]
    log.truncate_to(10)
    assert cache.epoch_entries == [EpochEntry(0, 0)]
    log.truncate_to(0)
    assert cache.epoch_entries == []
    # The checkpoint file follows the cache.
    assert log.local_log.leader_epoch_checkpoint.read() == []
