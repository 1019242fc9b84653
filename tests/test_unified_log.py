"""Tests for UnifiedLog / LocalLog (in memory).

Where a test mirrors one of kafka.log.UnifiedLogTest (LogTest before 3.0) it says which; the
others pin behaviour described in UnifiedLog's docstrings.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import (
    CorruptRecordException,
    InconsistentTopicIdException,
    InvalidRecordException,
    KafkaStorageException,
    OffsetOutOfRangeException,
    RecordTooLargeException,
)
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log import (
    Disk,
    EpochEntry,
    FetchIsolation,
    LogOffsetMetadata,
    LogStartOffsetIncrementReason,
    OffsetAndEpoch,
    OffsetsOutOfOrderException,
    TimestampAndOffset,
    UnexpectedAppendOffsetException,
    UnifiedLog,
)

TP = TopicPartition("topic", 0)


def recs(n: int, *, base_offset: int = 0, epoch: int = -1, ts: int = 1000, size: int = 10) -> MemoryRecords:
    """One batch of ``n`` records with ``size``-byte values and timestamps ts, ts+1, ..."""
    return MemoryRecords.with_records(
        [SimpleRecord(f"k{i}".encode(), bytes(size), timestamp=ts + i) for i in range(n)],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
    )


def follower_recs(*ranges: tuple[int, int, int]) -> MemoryRecords:
    """Batches (base_offset, count, epoch) as a leader would have written them."""
    batches = [recs(count, base_offset=base, epoch=epoch).batches[0] for base, count, epoch in ranges]
    return MemoryRecords.of(batches)


def make_log(**kwargs) -> UnifiedLog:
    return UnifiedLog.create(TP, Disk(0), time=MockTime(), **kwargs)


def offsets_of(records: MemoryRecords) -> list[tuple[int, int]]:
    return [(b.base_offset, b.last_offset) for b in records]


class _OtherMagicBatch:
    """A batch that claims another magic (real RecordBatch objects are v2 only and immutable)."""

    def __init__(self, batch: RecordBatch, magic: int) -> None:
        self._batch = batch
        self.magic = magic

    def __getattr__(self, name: str):
        return getattr(self._batch, name)


@pytest.fixture
def log() -> UnifiedLog:
    return make_log()


def filled(log: UnifiedLog, *counts: int, epoch: int = 0) -> UnifiedLog:
    for count in counts:
        log.append_as_leader(recs(count), epoch)
    return log


# -- leader append --------------------------------------------------------------------------


def test_append_as_leader_assigns_offsets_from_leo_and_stamps_epoch(log):
    """Mirrors UnifiedLogTest#testAppendInfoFirstOffset: offsets continue from the LEO."""
    first = log.append_as_leader(recs(3), leader_epoch=5)
    second = log.append_as_leader(recs(2), leader_epoch=5)
    assert (first.first_offset, first.last_offset, first.num_messages) == (0, 2, 3)
    assert (second.first_offset, second.last_offset, second.last_offset_of_first_batch) == (3, 4, 4)
    assert second.valid_bytes == log.batches[1].size_in_bytes
    assert offsets_of(MemoryRecords.of(log.batches)) == [(0, 2), (3, 4)]
    assert [b.partition_leader_epoch for b in log.batches] == [5, 5]
    assert log.log_end_offset == 5
    assert log.leader_epoch_cache.epoch_entries == [EpochEntry(5, 0)]


def test_leader_append_rewrites_only_the_header(log):
    """The stamped batch keeps the records and CRC; the producer's batch is untouched."""
    produced = recs(2)
    log.append_as_leader(recs(1), 0)
    log.append_as_leader(produced, 1)
    stored = log.batches[1]
    assert produced.batches[0].base_offset == 0 and produced.batches[0].partition_leader_epoch == -1
    assert (stored.base_offset, stored.partition_leader_epoch) == (1, 1)
    assert stored.crc == produced.batches[0].crc and stored.is_valid()
    assert [(r.offset, r.key) for r in stored] == [(1, b"k0"), (2, b"k1")]


def test_new_leader_epoch_adds_an_epoch_entry(log):
    """A leader append in a new epoch records where that epoch starts."""
    filled(log, 2, epoch=0)
    log.append_as_leader(recs(1), 0)
    log.append_as_leader(recs(4), 3)
    assert log.leader_epoch_cache.epoch_entries == [EpochEntry(0, 0), EpochEntry(3, 3)]
    assert log.latest_epoch == 3


def test_empty_append_does_nothing(log):
    info = log.append_as_leader(MemoryRecords.EMPTY, 0)
    assert (info.valid_bytes, info.first_offset, info.last_offset, log.log_end_offset) == (0, -1, -1, 0)
    assert log.latest_epoch is None


def test_corrupt_batch_is_rejected(log):
    """A batch whose CRC does not match its bytes is rejected (analyzeAndValidateRecords)."""
    good = recs(2).batches[0]
    buffer = bytearray(good.buffer)
    buffer[-1] ^= 0xFF
    with pytest.raises(CorruptRecordException, match="Record is corrupt"):
        log.append_as_leader(MemoryRecords.of([RecordBatch(bytes(buffer))]), 0)
    assert log.log_end_offset == 0


def test_wrong_magic_is_rejected(log):
    """Only magic v2 exists here; a batch claiming another magic is corrupt."""
    batch = _OtherMagicBatch(recs(1).batches[0], magic=1)
    with pytest.raises(CorruptRecordException, match="Invalid magic 1"):
        log.append_as_leader(MemoryRecords((batch,)), 0)
    with pytest.raises(CorruptRecordException):
        log.append_as_follower(MemoryRecords((batch,)))
    assert log.log_end_offset == 0


def test_batch_larger_than_max_message_bytes_is_rejected():
    """Mirrors UnifiedLogTest#testMessageSizeCheck (leader side; the follower skips the check)."""
    log = make_log(max_message_bytes=100)
    big = recs(1, size=200)
    with pytest.raises(RecordTooLargeException, match=f"is {big.size_in_bytes} bytes which exceeds the maximum configured value of 100"):
        log.append_as_leader(big, 0)
    assert log.log_end_offset == 0
    # A follower does not re-check the size: the leader accepted the batch.
    log.append_as_follower(follower_recs((0, 1, 0)))
    log.append_as_follower(MemoryRecords.of([recs(1, base_offset=1, epoch=0, size=200).batches[0]]))
    assert log.log_end_offset == 2


def test_client_batch_must_start_at_offset_zero(log):
    """A client's v2 batch must come with base offset 0 (analyzeAndValidateRecords)."""
    with pytest.raises(InvalidRecordException, match="should be 0, but it is 7"):
        log.append_as_leader(recs(1, base_offset=7), 0)
    # A coordinator's append is not held to that.
    info = log.append_as_leader(recs(1, base_offset=7), 0, origin="coordinator")
    assert info.first_offset == 0


# -- follower append --------------------------------------------------------------------------


def test_append_as_follower_keeps_leader_offsets_and_epochs(log):
    """The follower keeps the leader's offsets and learns epochs from the batches."""
    info = log.append_as_follower(follower_recs((0, 3, 1), (3, 2, 1), (5, 1, 4)))
    assert (info.first_offset, info.last_offset, info.last_leader_epoch) == (0, 5, 4)
    assert offsets_of(MemoryRecords.of(log.batches)) == [(0, 2), (3, 4), (5, 5)]
    assert log.leader_epoch_cache.epoch_entries == [EpochEntry(1, 0), EpochEntry(4, 5)]
    assert log.log_end_offset == 6


def test_follower_append_rejects_non_monotonic_offsets(log):
    """Mirrors UnifiedLogTest#testAppendWithOutOfOrderOffsetsThrowsException (plus overlapping batches)."""
    out_of_order = follower_recs(*[(offset, 1, 0) for offset in (0, 1, 3, 2, 4)])
    with pytest.raises(
        OffsetsOutOfOrderException,
        match=r"Out of order offsets found in append to topic-0: \[\(0, 0\), \(1, 1\), \(3, 3\), \(2, 2\), \(4, 4\)\]",
    ):
        log.append_as_follower(out_of_order)
    with pytest.raises(OffsetsOutOfOrderException):
        log.append_as_follower(follower_recs((0, 3, 0), (2, 3, 0)))  # overlapping batches
    assert log.log_end_offset == 0


def test_follower_append_below_log_end_offset_is_unexpected(log):
    """Mirrors UnifiedLogTest#testAppendBelowExpectedOffsetThrowsException."""
    log.append_as_follower(follower_recs((0, 5, 0)))
    with pytest.raises(UnexpectedAppendOffsetException) as excinfo:
        log.append_as_follower(follower_recs((3, 4, 0)))
    exc = excinfo.value
    assert (exc.first_offset, exc.last_offset) == (3, 6)
    assert str(exc).startswith(
        "Unexpected offset in append to topic-0. First offset 3 is less than the next offset 5. "
        "First 10 offsets in append: [3, 4, 5, 6], last offset in append: 6. Log start offset = 0"
    )
    assert log.log_end_offset == 5


def test_follower_append_may_leave_a_gap(log):
    """Kafka checks only "not below the LEO": offsets may jump (compacted leaders)."""
    log.append_as_follower(follower_recs((0, 2, 0)))
    log.append_as_follower(follower_recs((10, 2, 0)))
    assert log.log_end_offset == 12
    assert offsets_of(log.read(5, 10_000).records) == [(10, 11)]


# -- read -------------------------------------------------------------------------------------


def test_read_from_middle_of_batch_returns_whole_batch(log):
    """Kafka reads from batch boundaries: the batch holding the offset comes whole."""
    filled(log, 5, 5)
    info = log.read(7, 10_000, FetchIsolation.LOG_END, min_one_message=False)
    assert offsets_of(info.records) == [(5, 9)]
    assert info.records.batches[0] is log.batches[1]  # a reference, not a copy
    assert info.fetch_offset_metadata == LogOffsetMetadata(7, 0, log.batches[0].size_in_bytes)
    assert info.first_entry_incomplete is False


def test_min_one_message_returns_oversized_first_batch(log):
    """Mirrors UnifiedLogTest#testReadWithTooSmallMaxLength."""
    filled(log, 3, 3)
    first_size = log.batches[0].size_in_bytes
    with_min = log.read(0, first_size - 1, FetchIsolation.LOG_END, min_one_message=True)
    assert offsets_of(with_min.records) == [(0, 2)]
    assert with_min.first_entry_incomplete is False
    without = log.read(0, first_size - 1, FetchIsolation.LOG_END, min_one_message=False)
    assert without.records.batches == ()
    assert without.first_entry_incomplete is True
    assert log.read(0, 0, FetchIsolation.LOG_END, min_one_message=False).records.batches == ()


def test_read_stops_before_exceeding_max_length(log):
    """Whole batches only: a batch that would cross max_length is left for the next fetch."""
    filled(log, 2, 2, 2)
    sizes = [b.size_in_bytes for b in log.batches]
    info = log.read(0, sizes[0] + sizes[1] + sizes[2] - 1, FetchIsolation.LOG_END, True)
    assert offsets_of(info.records) == [(0, 1), (2, 3)]
    assert info.records.size_in_bytes == sizes[0] + sizes[1]
    assert offsets_of(log.read(0, sum(sizes), FetchIsolation.LOG_END, True).records) == [(0, 1), (2, 3), (4, 5)]


def test_read_is_bounded_by_isolation(log):
    """HW bounds consumers, LSO read_committed ones, LEO followers."""
    filled(log, 2, 2, 2)
    log.update_high_watermark(4)
    assert offsets_of(log.read(0, 10_000, FetchIsolation.HIGH_WATERMARK, True).records) == [(0, 1), (2, 3)]
    assert offsets_of(log.read(0, 10_000, FetchIsolation.TXN_COMMITTED, True).records) == [(0, 1), (2, 3)]
    assert offsets_of(log.read(0, 10_000, FetchIsolation.LOG_END, True).records) == [(0, 1), (2, 3), (4, 5)]
    at_hw = log.read(4, 10_000, FetchIsolation.HIGH_WATERMARK, True)
    assert at_hw.records.batches == ()
    assert at_hw.fetch_offset_metadata.message_offset == 4
    # Past the HW but within the log: empty, not an error.
    assert log.read(5, 10_000, FetchIsolation.HIGH_WATERMARK, True).records.batches == ()


def test_batch_crossing_the_bound_is_not_returned(log):
    """A HW in the middle of a batch (possible on a follower) excludes that batch."""
    log.append_as_follower(follower_recs((0, 4, 0), (4, 4, 0)))
    log.update_high_watermark(6)
    assert offsets_of(log.read(0, 10_000, FetchIsolation.HIGH_WATERMARK, True).records) == [(0, 3)]
    assert log.read(4, 10_000, FetchIsolation.HIGH_WATERMARK, True).records.batches == ()


def test_read_at_log_end_is_empty(log):
    """Reading at the LEO returns no data and the LEO's metadata."""
    filled(log, 3)
    info = log.read(3, 10_000, FetchIsolation.LOG_END, True)
    assert info.records.batches == ()
    assert info.fetch_offset_metadata == log.log_end_offset_metadata
    assert make_log().read(0, 100).records.batches == ()


def test_read_out_of_range_raises(log):
    """Mirrors UnifiedLogTest#testReadOutOfRange."""
    filled(log, 3, 3)
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(2)
    with pytest.raises(OffsetOutOfRangeException, match="offset 7 for partition topic-0, but we only have log segments in the range 2 to 6"):
        log.read(7, 100, FetchIsolation.LOG_END, True)
    with pytest.raises(OffsetOutOfRangeException, match="offset 1 .* in the range 2 to 6"):
        log.read(1, 100, FetchIsolation.LOG_END, True)


def test_offset_metadata_positions_measure_bytes(log):
    """DelayedFetch's accounting: position_diff between two offsets is the bytes between them."""
    filled(log, 2, 3)
    start = log.read(0, 10_000).fetch_offset_metadata
    assert log.log_end_offset_metadata.position_diff(start) == log.size
    assert log.fetch_high_watermark_metadata() == LogOffsetMetadata(0, 0, 0)


# -- high watermark ---------------------------------------------------------------------------


def test_update_high_watermark_clamps_and_may_go_down(log):
    """Mirrors UnifiedLogTest#testHighWatermarkMaintenance."""
    filled(log, 5)
    assert log.update_high_watermark(-1) == 0
    assert log.update_high_watermark(3) == 3
    assert log.update_high_watermark(100) == 5
    assert log.high_watermark == 5
    assert log.update_high_watermark(2) == 2


def test_maybe_increment_high_watermark_only_moves_forward(log):
    """Leader side: HW only moves forward and never past the LEO; follower side returns the new HW."""
    filled(log, 2, 2)
    old = log.maybe_increment_high_watermark(2)
    assert old == LogOffsetMetadata(0, 0, 0)
    assert log.high_watermark == 2
    assert log.maybe_increment_high_watermark(1) is None
    assert log.maybe_increment_high_watermark(2) is None
    with pytest.raises(ValueError, match="exceeds current log end offset"):
        log.maybe_increment_high_watermark(5)
    assert log.maybe_update_high_watermark(4) == 4
    assert log.maybe_update_high_watermark(4) is None


def test_high_watermark_at_end_follows_truncation(log):
    filled(log, 2, 2)
    log.update_high_watermark(4)
    log.truncate_to(2)
    assert (log.high_watermark, log.log_end_offset) == (2, 2)


def test_fetch_offset_snapshot(log):
    filled(log, 2, 2)
    log.update_high_watermark(2)
    snap = log.fetch_offset_snapshot()
    assert (snap.log_start_offset, snap.log_end_offset.message_offset, snap.high_watermark.message_offset,
            snap.last_stable_offset.message_offset) == (0, 4, 2, 2)


# -- log start offset and retention -----------------------------------------------------------


def test_log_start_offset_cannot_pass_high_watermark(log):
    """DeleteRecords cannot move the log start offset past the HW."""
    filled(log, 5)
    log.update_high_watermark(3)
    with pytest.raises(OffsetOutOfRangeException, match="Cannot increment the log start offset to 4 of partition topic-0 since it is larger than the high watermark 3"):
        log.maybe_increment_log_start_offset(4, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    assert log.maybe_increment_log_start_offset(3) is True
    assert log.maybe_increment_log_start_offset(2) is False
    # The recovery point follows the log start offset up (UnifiedLog#updateLogStartOffset).
    assert (log.log_start_offset, log.high_watermark, log.recovery_point) == (3, 3, 3)


def test_log_start_offset_truncates_epoch_cache_and_old_batches(log):
    """Mirrors UnifiedLogTest#testRetentionIdempotency's log-start part: data goes only when retention runs."""
    log.retention_ms = -1  # the records are stamped in 1970: no time retention in this test
    filled(log, 2, epoch=0)
    filled(log, 2, epoch=1)
    filled(log, 2, epoch=2)
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(3)
    assert log.leader_epoch_cache.epoch_entries == [EpochEntry(1, 3), EpochEntry(2, 4)]
    assert len(log.batches) == 3  # batches stay until retention runs
    assert log.delete_old_segments() == 1
    assert offsets_of(MemoryRecords.of(log.batches)) == [(2, 3), (4, 5)]
    assert offsets_of(log.read(3, 10_000).records) == [(2, 3), (4, 5)]


def test_retention_bytes_deletes_oldest_batches_below_high_watermark(log):
    log.retention_ms = -1  # the records are stamped in 1970: only size retention here
    filled(log, 1, 1, 1, 1)
    size = log.batches[0].size_in_bytes
    log.retention_bytes = 2 * size
    log.update_high_watermark(1)
    assert log.delete_old_segments() == 1  # only one batch lies below the HW
    log.update_high_watermark(4)
    assert log.delete_old_segments() == 1
    assert (log.log_start_offset, len(log.batches), log.size) == (2, 2, 2 * size)


# -- truncation -------------------------------------------------------------------------------


def test_truncate_to_removes_batches_at_and_after_target(log):
    """Mirrors UnifiedLogTest#testTruncateTo."""
    filled(log, 3, epoch=0)
    filled(log, 3, epoch=1)
    filled(log, 3, epoch=2)
    log.update_high_watermark(9)
    assert log.truncate_to(6) is True
    assert offsets_of(MemoryRecords.of(log.batches)) == [(0, 2), (3, 5)]
    assert (log.log_end_offset, log.high_watermark) == (6, 6)
    assert log.leader_epoch_cache.epoch_entries == [EpochEntry(0, 0), EpochEntry(1, 3)]
    assert log.truncate_to(6) is False
    assert log.truncate_to(100) is False


def test_truncate_to_inside_a_batch_removes_it_whole(log):
    """Kafka cuts a segment at the batch holding the target; the LEO becomes the target itself."""
    filled(log, 3, 3)
    log.truncate_to(4)
    assert offsets_of(MemoryRecords.of(log.batches)) == [(0, 2)]
    assert log.log_end_offset == 4
    assert log.append_as_leader(recs(1), 0).first_offset == 4


def test_truncate_below_first_batch_truncates_fully(log):
    """Truncating below the first retained offset starts the log over at the target."""
    filled(log, 3, 3)
    log.update_high_watermark(6)
    log.maybe_increment_log_start_offset(3)
    log.delete_old_segments()
    assert log.truncate_to(1) is True
    assert (len(log.batches), log.log_start_offset, log.high_watermark, log.log_end_offset) == (0, 1, 1, 1)
    assert log.leader_epoch_cache.epoch_entries == []


def test_truncate_to_negative_offset_is_a_bug(log):
    with pytest.raises(ValueError, match="negative offset"):
        log.truncate_to(-1)


@pytest.mark.parametrize(("epoch", "beyond"), [(20, 0), (24, 1)])
def test_truncate_to_end_offset_clears_epoch_cache(log, epoch, beyond):
    """Mirrors UnifiedLogTest#testTruncateToEndOffsetClearsEpochCache."""
    log.append_as_follower(follower_recs((27, 2, 19)))
    assert (log.leader_epoch_cache.latest_entry, log.log_end_offset) == (EpochEntry(19, 27), 29)
    # Becoming leader records the new epoch at the LEO before any data is written...
    log.maybe_assign_epoch_start_offset(epoch, log.log_end_offset)
    assert log.leader_epoch_cache.latest_entry == EpochEntry(epoch, 29)
    # ...and becoming follower again truncates at or past the LEO: the empty epoch goes.
    assert log.truncate_to(log.log_end_offset + beyond) is False
    assert (log.leader_epoch_cache.latest_entry, log.log_end_offset) == (EpochEntry(19, 27), 29)


def test_append_empty_log_below_log_start_offset_throws(log):
    """Mirrors UnifiedLogTest#testAppendEmptyLogBelowLogStartOffsetThrowsException."""
    log.truncate_fully_and_start_at(7)
    assert (log.log_start_offset, log.log_end_offset) == (7, 7)
    with pytest.raises(UnexpectedAppendOffsetException) as excinfo:
        log.append_as_follower(follower_recs((4, 3, 0)))
    assert (excinfo.value.first_offset, excinfo.value.last_offset) == (4, 6)


def test_fetch_up_to_log_end_offset(log):
    """Mirrors UnifiedLogTest#testFetchUpToLogEndOffset (3.x: the metadata keeps the fetch offset)."""
    log.append_as_leader(recs(3), 0)
    log.append_as_leader(recs(2), 0)
    for offset in range(log.log_start_offset, log.log_end_offset):
        info = log.read(offset, 2**31 - 1, FetchIsolation.LOG_END, True)
        assert info.first_entry_incomplete is False
        assert info.records.size_in_bytes > 0
        assert all(record.offset < log.log_end_offset for record in info.records.records())
        assert info.fetch_offset_metadata.message_offset == offset


def test_fetch_up_to_high_watermark(log):
    """Mirrors UnifiedLogTest#testFetchUpToHighWatermark."""
    log.append_as_leader(recs(3), 0)
    log.append_as_leader(recs(2), 0)

    def assert_high_watermark_bounded_fetches() -> None:
        for offset in range(log.log_start_offset, log.high_watermark):
            info = log.read(offset, 2**31 - 1, FetchIsolation.HIGH_WATERMARK, True)
            assert info.records.size_in_bytes > 0 and info.first_entry_incomplete is False
            assert all(record.offset < log.high_watermark for record in info.records.records())
            assert info.fetch_offset_metadata.message_offset == offset
        for offset in range(log.high_watermark, log.log_end_offset + 1):
            info = log.read(offset, 2**31 - 1, FetchIsolation.HIGH_WATERMARK, True)
            assert info.records.size_in_bytes == 0 and info.first_entry_incomplete is False
            assert info.fetch_offset_metadata.message_offset == offset

    assert_high_watermark_bounded_fetches()
    log.update_high_watermark(3)
    assert_high_watermark_bounded_fetches()
    log.update_high_watermark(5)
    assert_high_watermark_bounded_fetches()


def test_log_reinitialize_after_manual_delete():
    """Mirrors UnifiedLogTest#testLogReinitializeAfterManualDelete: no data but a log start offset."""
    disk = Disk(0)
    log = UnifiedLog.load(TP, disk.get_or_create_local_log(TP), log_start_offset_checkpoint=500)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (500, 500, 500)


def test_truncate_fully_and_start_at(log):
    """Mirrors the end of UnifiedLogTest#testHighWatermarkMaintenance (full truncation resets HW)."""
    filled(log, 4)
    log.update_high_watermark(4)
    log.truncate_fully_and_start_at(10)
    assert (len(log.batches), log.log_start_offset, log.high_watermark, log.log_end_offset) == (0, 10, 10, 10)
    assert log.leader_epoch_cache.epoch_entries == []
    assert log.append_as_leader(recs(2), 3).first_offset == 10
    assert log.read(10, 10_000).fetch_offset_metadata == LogOffsetMetadata(10, 10, 0)


# -- epochs and list offsets ------------------------------------------------------------------


def test_end_offset_for_epoch(log):
    """end_offset_for_epoch answers from the epoch cache with the LEO for the latest epoch."""
    log.append_as_follower(follower_recs((0, 2, 1), (2, 3, 3), (5, 2, 5)))
    assert log.end_offset_for_epoch(5) == OffsetAndEpoch(7, 5)
    assert log.end_offset_for_epoch(4) == OffsetAndEpoch(5, 3)
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)
    assert log.end_offset_for_epoch(6) is None
    assert log.end_offset_for_epoch(-1) is None


def test_fetch_offset_by_timestamp(log):
    """Mirrors UnifiedLogTest#testFetchOffsetByTimestampIncludesLeaderEpoch."""
    log.append_as_leader(recs(3, ts=100), 0)  # timestamps 100..102
    log.append_as_leader(recs(3, ts=500), 1)  # 500..502
    log.append_as_leader(recs(2, ts=200), 2)  # 200..201
    assert log.fetch_offset_by_timestamp(-2) == TimestampAndOffset(-1, 0, 0)
    assert log.fetch_offset_by_timestamp(-1) == TimestampAndOffset(-1, 8, 2)
    assert log.fetch_offset_by_timestamp(-3) == TimestampAndOffset(502, 5, 1)
    assert log.fetch_offset_by_timestamp(101) == TimestampAndOffset(101, 1, 0)
    assert log.fetch_offset_by_timestamp(150) == TimestampAndOffset(500, 3, 1)
    assert log.fetch_offset_by_timestamp(600) is None
    assert make_log().fetch_offset_by_timestamp(-3) is None


# -- topic id, flush, failures ----------------------------------------------------------------


def test_topic_id_assignment_and_conflict():
    """Mirrors UnifiedLogTest#testLogFailsWhenInconsistentTopicIdSet."""
    disk = Disk(0)
    a, b = Uuid(1, 2), Uuid(3, 4)
    log = UnifiedLog.create(TP, disk, topic_id=None)
    log.topic_id = a
    log.assign_topic_id(a)
    with pytest.raises(InconsistentTopicIdException, match="already contained topic ID"):
        log.assign_topic_id(b)
    assert disk.logs[TP].partition_metadata_topic_id == a
    with pytest.raises(InconsistentTopicIdException):
        UnifiedLog.create(TP, disk, topic_id=b)
    assert UnifiedLog.create(TP, disk).topic_id == a


def test_flush_moves_recovery_point(log):
    filled(log, 3)
    assert log.recovery_point == 0
    log.flush(2)
    assert log.recovery_point == 2
    log.flush()
    assert log.recovery_point == 3


def test_offline_disk_fails_every_operation():
    """Mirrors UnifiedLogTest#testAppendToOrReadFromLogInFailedLogDir."""
    disk = Disk(0)
    log = UnifiedLog.create(TP, disk)
    filled(log, 2)
    disk.mark_offline("test")
    with pytest.raises(KafkaStorageException, match="already closed"):
        log.append_as_leader(recs(1), 0)
    with pytest.raises(KafkaStorageException):
        log.read(0, 100)
    with pytest.raises(KafkaStorageException):
        log.truncate_to(1)
    with pytest.raises(KafkaStorageException, match="is offline"):
        UnifiedLog.create(TopicPartition("other", 0), disk)


def test_load_reconciles_checkpoints_with_data():
    """LogLoader#load: epoch cache trimmed to the data, recovery point from the checkpoint."""
    disk = Disk(0)
    log = UnifiedLog.create(TP, disk)
    filled(log, 2, epoch=0)
    filled(log, 2, epoch=1)
    disk.logs[TP].leader_epoch_checkpoint.write([EpochEntry(0, 0), EpochEntry(1, 2), EpochEntry(2, 9)])
    reloaded = UnifiedLog.load(TP, disk.logs[TP], log_start_offset_checkpoint=1, high_watermark=3, had_clean_shutdown=False)
    assert reloaded.leader_epoch_cache.epoch_entries == [EpochEntry(0, 1), EpochEntry(1, 2)]
    assert (reloaded.log_start_offset, reloaded.high_watermark, reloaded.log_end_offset, reloaded.recovery_point) == (1, 3, 4, 1)
