"""kafka.log.ProducerStateManagerTest (Kafka 3.8.0), ported.

The producer state of one partition: epochs and sequences of idempotent producers, the last
five batches for duplicate detection, transactions opened by transactional batches and closed by
COMMIT/ABORT markers (first unstable / undecided offsets, the LSO a completed transaction
leaves), coordinator fencing, verification state entries and producer id expiration. The tests
drive kafka_ref's ProducerStateManager the way Kafka's do: ``prepare_update`` gives a
ProducerAppendInfo, batches and markers are appended to it, ``update`` applies it and
``update_map_end_offset`` moves the map's end. kafka_ref's MockTime starts at 2024-01-01, so
"now" is a positive timestamp as in Kafka's MockTime.

Kafka's tests take snapshots (``takeSnapshot``) before ``truncateAndReload``. kafka_ref keeps no
snapshot files (the logs live in memory, kafka_ref/log/disk.py): its ``truncate_and_reload``
always takes Kafka's "no snapshot in range" branch. Tests whose snapshot is out of range anyway
(testRemoveExpiredPidsOnReload, testAcceptAppendWithoutProducerStateOnReplica) or whose reload
does not move the map's end (testLoadFromSnapshotRetainsNonExpiredProducers) are ported without
the snapshot step; testFirstUnstableOffsetAfterTruncation and
testHasLateTransactionInitializedAfterReload are ported through UnifiedLog, which rebuilds the
state by replaying its batches where Kafka loads a snapshot.

Not ported:
- testTruncateAndReloadRemovesOutOfRangeSnapshots, testTakeSnapshot, testFetchSnapshotEmptySnapShot,
  testDeleteSnapshotsBefore, testTruncateFullyAndStartAt, testReloadSnapshots,
  testSkipSnapshotIfOffsetUnchanged: they count snapshot files in the log directory; kafka_ref
  writes none.
- testRecoverFromSnapshotUnfinishedTransaction, testRecoverFromSnapshotFinishedTransaction,
  testRecoverFromSnapshotEmptyTransaction, testCoordinatorFencedAfterReload: they check what a
  snapshot keeps (only the last batch of each producer); kafka_ref reloads from the data.
- testLoadFromEmptySnapshotFile, testLoadFromTruncatedSnapshotFile, testLoadFromCorruptSnapshotFile:
  corrupt snapshot files on disk.
- testRemoveStraySnapshotsKeepCleanShutdownSnapshot, testRemoveAllStraySnapshots,
  testRemoveAndMarkSnapshotForDeletion, testRemoveAndMarkSnapshotForDeletionAlreadyDeleted:
  snapshot files next to segment files.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import (
    InvalidProducerEpochException,
    InvalidTxnStateException,
    OutOfOrderSequenceException,
    TransactionCoordinatorFencedException,
)
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.records.constants import NO_SEQUENCE
from kafka_ref.common.records.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    end_transaction_marker_batch,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import UnifiedLog
from kafka_ref.log.disk import Disk
from kafka_ref.log.fetch_data import AppendOrigin, LogOffsetMetadata
from kafka_ref.log.producer_state_manager import (
    INT32_MAX,
    LATE_TRANSACTION_BUFFER_MS,
    TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateEntry,
    ProducerStateManager,
    ProducerStateManagerConfig,
)

PARTITION = TopicPartition("test", 0)
PRODUCER_ID = 1
MAX_TRANSACTION_TIMEOUT_MS = 5 * 60 * 1000
LATE_TRANSACTION_TIMEOUT_MS = MAX_TRANSACTION_TIMEOUT_MS + LATE_TRANSACTION_BUFFER_MS
EXPIRATION_MS = 86_400_000  # TransactionLogConfigs.PRODUCER_ID_EXPIRATION_MS_DEFAULT


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def config() -> ProducerStateManagerConfig:
    return ProducerStateManagerConfig(EXPIRATION_MS, True)


@pytest.fixture
def psm(time, config) -> ProducerStateManager:
    return new_manager(time, config)


def new_manager(time: MockTime, config: ProducerStateManagerConfig,
                partition: TopicPartition = PARTITION) -> ProducerStateManager:
    return ProducerStateManager(partition, MAX_TRANSACTION_TIMEOUT_MS, config, time)


def append(manager: ProducerStateManager, producer_id: int, producer_epoch: int, seq: int, offset: int,
           timestamp: int | None = None, *, is_transactional: bool = False,
           origin: AppendOrigin = AppendOrigin.CLIENT) -> None:
    """Kafka's ``append`` helper: a one-record batch at ``offset``, applied and the map end moved past it."""
    info = manager.prepare_update(producer_id, origin)
    ts = manager.time.milliseconds() if timestamp is None else timestamp
    info.append_data_batch(producer_epoch, seq, seq, ts, LogOffsetMetadata(offset), offset, is_transactional)
    manager.update(info)
    manager.update_map_end_offset(offset + 1)


def append_end_txn_marker(manager: ProducerStateManager, producer_id: int, producer_epoch: int,
                          control_type: ControlRecordType, offset: int, coordinator_epoch: int = 0,
                          timestamp: int | None = None) -> CompletedTxn | None:
    """Kafka's ``appendEndTxnMarker`` helper: a coordinator's marker, the transaction completed."""
    info = manager.prepare_update(producer_id, AppendOrigin.COORDINATOR)
    ts = manager.time.milliseconds() if timestamp is None else timestamp
    completed = info.append_end_txn_marker(EndTransactionMarker(control_type, coordinator_epoch), producer_epoch,
                                           offset, ts)
    manager.update(info)
    if completed is not None:
        manager.complete_txn(completed)
    manager.update_map_end_offset(offset + 1)
    return completed


def fuo(manager: ProducerStateManager) -> int | None:
    """The first unstable offset's message offset (None when every transaction is stable)."""
    metadata = manager.first_unstable_offset()
    return None if metadata is None else metadata.message_offset


def txns(infos) -> list[tuple[int, int, int | None]]:
    return [(t.producer_id, t.first_offset.message_offset, t.last_offset) for t in infos]


# -- sequences and epochs -----------------------------------------------------------------------


def test_basic_id_mapping(psm):
    """Mirrors ProducerStateManagerTest#testBasicIdMapping."""
    append(psm, PRODUCER_ID, 0, 0, 0, 0)
    append(psm, PRODUCER_ID, 0, 1, 0, 1)
    # A repeated sequence is out of order here (duplicates are found by the log, before this).
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 0, 1, 0, 1)
    # A gap.
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 0, 5, 0, 2)
    # A new epoch starting at 0, then the old epoch is fenced.
    append(psm, PRODUCER_ID, 1, 0, 0, 3)
    with pytest.raises(InvalidProducerEpochException):
        append(psm, PRODUCER_ID, 0, 0, 0, 4)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (1, 0, 0)


def test_append_txn_marker_with_no_producer_state(psm):
    """Mirrors ProducerStateManagerTest#testAppendTxnMarkerWithNoProducerState."""
    append_end_txn_marker(psm, PRODUCER_ID, 2, ControlRecordType.COMMIT, offset=27)
    first = psm.last_entry(PRODUCER_ID)
    assert (first.producer_epoch, first.producer_id, first.last_seq) == (2, PRODUCER_ID, NO_SEQUENCE)
    # The marker alone still fences older epochs ...
    with pytest.raises(InvalidProducerEpochException):
        append(psm, PRODUCER_ID, 0, 0, 0, 4)
    # ... and asks the producer to restart its sequence at 0.
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 2, 17, 0, 4)
    append(psm, PRODUCER_ID, 2, 0, 39, 4)
    second = psm.last_entry(PRODUCER_ID)
    assert (second.producer_epoch, second.producer_id, second.last_seq) == (2, PRODUCER_ID, 0)


def test_producer_sequence_wrap_around(psm):
    """Mirrors ProducerStateManagerTest#testProducerSequenceWrapAround."""
    append(psm, PRODUCER_ID, 15, INT32_MAX, 735, origin=AppendOrigin.REPLICATION)
    append(psm, PRODUCER_ID, 15, 0, 735 + 500)
    entry = psm.last_entry(PRODUCER_ID)
    assert entry is not None
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (15, INT32_MAX, 0)


def test_producer_sequence_with_wrap_around_batch_record(psm, time):
    """Mirrors ProducerStateManagerTest#testProducerSequenceWithWrapAroundBatchRecord."""
    info = psm.prepare_update(PRODUCER_ID, AppendOrigin.REPLICATION)
    # One batch whose sequences wrap: MAX-10 .. MAX, 0 .. 9 at offsets 2000 .. 2020.
    info.append_data_batch(15, INT32_MAX - 10, 9, time.milliseconds(), LogOffsetMetadata(2000), 2020, False)
    assert psm.last_entry(PRODUCER_ID) is None
    psm.update(info)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset) == (
        INT32_MAX - 10, 9, 2000, 2020)


def test_producer_sequence_invalid_wrap_around(psm):
    """Mirrors ProducerStateManagerTest#testProducerSequenceInvalidWrapAround."""
    append(psm, PRODUCER_ID, 15, INT32_MAX, 735, origin=AppendOrigin.REPLICATION)
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 15, 1, 735 + 500)
    assert psm.last_entry(PRODUCER_ID).last_seq == INT32_MAX


def test_no_validation_on_first_entry_when_loading_log(psm):
    """Mirrors ProducerStateManagerTest#testNoValidationOnFirstEntryWhenLoadingLog."""
    append(psm, PRODUCER_ID, 5, 16, 735, origin=AppendOrigin.REPLICATION)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq, entry.last_data_offset, entry.first_data_offset) == (
        5, 16, 16, 735, 735)


def test_control_record_bumps_producer_epoch(psm):
    """Mirrors ProducerStateManagerTest#testControlRecordBumpsProducerEpoch."""
    append(psm, PRODUCER_ID, 0, 0, 0)
    append_end_txn_marker(psm, PRODUCER_ID, 1, ControlRecordType.ABORT, 1)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.producer_epoch, entry.current_txn_first_offset, entry.first_seq, entry.last_seq) == (
        1, None, NO_SEQUENCE, NO_SEQUENCE)
    # The bumped epoch writes from sequence 0.
    append(psm, PRODUCER_ID, 1, 0, 2)
    assert psm.last_entry(PRODUCER_ID).first_seq == 0


def test_prepare_update_does_not_mutate(psm, time):
    """Mirrors ProducerStateManagerTest#testPrepareUpdateDoesNotMutate."""
    info = psm.prepare_update(PRODUCER_ID, AppendOrigin.CLIENT)
    info.append_data_batch(0, 0, 5, time.milliseconds(), LogOffsetMetadata(15), 20, False)
    assert psm.last_entry(PRODUCER_ID) is None
    psm.update(info)
    assert psm.last_entry(PRODUCER_ID) is not None
    next_info = psm.prepare_update(PRODUCER_ID, AppendOrigin.CLIENT)
    next_info.append_data_batch(0, 6, 10, time.milliseconds(), LogOffsetMetadata(26), 30, False)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.first_seq, entry.last_seq, entry.last_data_offset) == (0, 5, 20)
    psm.update(next_info)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.first_seq, entry.last_seq, entry.last_data_offset) == (0, 10, 30)


def test_accept_append_with_sequence_gaps_on_replica(psm):
    """Mirrors ProducerStateManagerTest#testAcceptAppendWithSequenceGapsOnReplica."""
    append(psm, PRODUCER_ID, 0, 0, 0, 0)
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 0, 3, 1, 1, origin=AppendOrigin.CLIENT)
    assert psm.active_producers[PRODUCER_ID].last_seq == 0
    # A follower takes the leader's batch whatever its sequence.
    append(psm, PRODUCER_ID, 0, 3, 1, 1, origin=AppendOrigin.REPLICATION)
    assert psm.active_producers[PRODUCER_ID].last_seq == 3


def test_sequence_not_validated_for_group_metadata_topic(time, config):
    """Mirrors ProducerStateManagerTest#testSequenceNotValidatedForGroupMetadataTopic: coordinator writes carry no sequence."""
    manager = new_manager(time, config, TopicPartition("__consumer_offsets", 0))
    append(manager, PRODUCER_ID, 0, NO_SEQUENCE, 99, is_transactional=True, origin=AppendOrigin.COORDINATOR)
    append(manager, PRODUCER_ID, 0, NO_SEQUENCE, 100, is_transactional=True, origin=AppendOrigin.COORDINATOR)
    entry = manager.last_entry(PRODUCER_ID)
    assert (entry.last_seq, entry.last_data_offset, entry.current_txn_first_offset) == (NO_SEQUENCE, 100, 99)
    # The same batch from a client is checked, and -1 does not follow -1.
    with pytest.raises(OutOfOrderSequenceException):
        append(manager, PRODUCER_ID, 0, NO_SEQUENCE, 101, is_transactional=True, origin=AppendOrigin.CLIENT)


# -- transactions -------------------------------------------------------------------------------


def test_txn_first_offset_metadata_cached(psm, time):
    """Mirrors ProducerStateManagerTest#testTxnFirstOffsetMetadataCached: the first unstable offset keeps its segment position."""
    offset = 992342
    info = ProducerAppendInfo(PARTITION, PRODUCER_ID, ProducerStateEntry.empty(PRODUCER_ID), AppendOrigin.CLIENT,
                              psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0))
    first_offset_metadata = LogOffsetMetadata(offset, 990000, 234224)
    info.append_data_batch(0, 0, 0, time.milliseconds(), first_offset_metadata, offset, True)
    psm.update(info)
    assert psm.first_unstable_offset() == LogOffsetMetadata(offset, 990000, 234224)


def test_skip_empty_transactions(psm, time):
    """Mirrors ProducerStateManagerTest#testSkipEmptyTransactions: markers without data complete nothing."""
    coordinator_epoch = 27
    seq = [0]

    def append_end_txn(control_type, offset, info):
        return info.append_end_txn_marker(EndTransactionMarker(control_type, coordinator_epoch), 0, offset,
                                          time.milliseconds())

    def append_data(start_offset, end_offset, info):
        first = seq[0]
        seq[0] += end_offset - start_offset
        info.append_data_batch(0, first, seq[0], time.milliseconds(), LogOffsetMetadata(start_offset), end_offset, True)
        seq[0] += 1

    # One transaction in an append of its own.
    first_append = psm.prepare_update(PRODUCER_ID, AppendOrigin.CLIENT)
    append_data(16, 20, first_append)
    assert txns(first_append.started_transactions) == [(PRODUCER_ID, 16, None)]
    psm.update(first_append)
    psm.on_high_watermark_updated(21)
    assert psm.first_unstable_offset() == LogOffsetMetadata(16)
    # One append closes it, writes empty transactions, one full transaction and opens another.
    second_append = psm.prepare_update(PRODUCER_ID, AppendOrigin.CLIENT)
    first_completed = append_end_txn(ControlRecordType.COMMIT, 21, second_append)
    assert first_completed == CompletedTxn(PRODUCER_ID, 16, 21, False)
    assert append_end_txn(ControlRecordType.COMMIT, 22, second_append) is None
    assert append_end_txn(ControlRecordType.ABORT, 23, second_append) is None
    append_data(24, 27, second_append)
    second_completed = append_end_txn(ControlRecordType.ABORT, 28, second_append)
    assert second_completed == CompletedTxn(PRODUCER_ID, 24, 28, True)
    assert append_end_txn(ControlRecordType.ABORT, 29, second_append) is None
    append_data(30, 31, second_append)
    assert txns(second_append.started_transactions) == [(PRODUCER_ID, 24, None), (PRODUCER_ID, 30, None)]
    psm.update(second_append)
    psm.complete_txn(first_completed)
    psm.complete_txn(second_completed)
    psm.on_high_watermark_updated(32)
    assert psm.first_unstable_offset() == LogOffsetMetadata(30)


def test_has_late_transaction(psm, time):
    """Mirrors ProducerStateManagerTest#testHasLateTransaction."""
    producer_id1, epoch1 = 39, 2
    producer_id2, epoch2 = 57, 9
    append(psm, producer_id1, epoch1, 0, 100, is_transactional=True)
    assert not psm.has_late_transaction(time.milliseconds())
    time.advance(500)
    append(psm, producer_id2, epoch2, 0, 150, is_transactional=True)
    assert not psm.has_late_transaction(time.milliseconds())
    # Only the first is late ...
    time.advance(LATE_TRANSACTION_TIMEOUT_MS - 500 + 1)
    assert psm.has_late_transaction(time.milliseconds())
    # ... then both.
    time.advance(500)
    assert psm.has_late_transaction(time.milliseconds())
    append_end_txn_marker(psm, producer_id1, epoch1, ControlRecordType.COMMIT, offset=200)
    assert psm.has_late_transaction(time.milliseconds())
    append_end_txn_marker(psm, producer_id2, epoch2, ControlRecordType.COMMIT, offset=250)
    assert not psm.has_late_transaction(time.milliseconds())


def test_has_late_transaction_updated_after_partial_truncation(psm, time):
    """Mirrors ProducerStateManagerTest#testHasLateTransactionUpdatedAfterPartialTruncation."""
    append(psm, 39, 2, 0, 100, is_transactional=True)
    assert not psm.has_late_transaction(time.milliseconds())
    time.advance(LATE_TRANSACTION_TIMEOUT_MS + 1)
    assert psm.has_late_transaction(time.milliseconds())
    # Truncating below the transaction drops it.
    psm.truncate_and_reload(0, 80, time.milliseconds())
    assert not psm.has_late_transaction(time.milliseconds())
    assert (psm.last_entry(39), psm.first_undecided_offset(), psm.map_end_offset()) == (None, None, 0)


def test_has_late_transaction_updated_after_full_truncation(psm, time):
    """Mirrors ProducerStateManagerTest#testHasLateTransactionUpdatedAfterFullTruncation."""
    append(psm, 39, 2, 0, 100, is_transactional=True)
    assert not psm.has_late_transaction(time.milliseconds())
    time.advance(LATE_TRANSACTION_TIMEOUT_MS + 1)
    assert psm.has_late_transaction(time.milliseconds())
    psm.truncate_fully_and_start_at(150)
    assert not psm.has_late_transaction(time.milliseconds())
    assert (psm.active_producers, psm.map_end_offset()) == ({}, 150)


def test_last_stable_offset_completed_txn(psm, time):
    """Mirrors ProducerStateManagerTest#testLastStableOffsetCompletedTxn."""
    segment_base_offset = 990000

    def begin_txn(producer_id: int, start_offset: int) -> None:
        relative_offset = start_offset - segment_base_offset
        info = ProducerAppendInfo(PARTITION, producer_id, ProducerStateEntry.empty(producer_id), AppendOrigin.CLIENT,
                                  psm.maybe_create_verification_state_entry(producer_id, 0, 0))
        first_offset_metadata = LogOffsetMetadata(start_offset, segment_base_offset, 50 * relative_offset)
        info.append_data_batch(0, 0, 0, time.milliseconds(), first_offset_metadata, start_offset, True)
        psm.update(info)

    producer_id1, start_offset1 = PRODUCER_ID, 992342
    producer_id2, start_offset2 = PRODUCER_ID + 1, start_offset1 + 25
    producer_id3, start_offset3 = PRODUCER_ID + 2, start_offset1 + 57
    begin_txn(producer_id1, start_offset1)
    begin_txn(producer_id2, start_offset2)
    begin_txn(producer_id3, start_offset3)

    last_offset1 = start_offset3 + 15
    completed1 = CompletedTxn(producer_id1, start_offset1, last_offset1, False)
    assert psm.last_stable_offset(completed1) == start_offset2
    psm.complete_txn(completed1)
    psm.on_high_watermark_updated(last_offset1 + 1)
    assert fuo(psm) == start_offset2

    last_offset3 = last_offset1 + 20
    completed3 = CompletedTxn(producer_id3, start_offset3, last_offset3, False)
    assert psm.last_stable_offset(completed3) == start_offset2
    psm.complete_txn(completed3)
    psm.on_high_watermark_updated(last_offset3 + 1)
    assert fuo(psm) == start_offset2

    last_offset2 = last_offset3 + 78
    completed2 = CompletedTxn(producer_id2, start_offset2, last_offset2, False)
    assert psm.last_stable_offset(completed2) == last_offset2 + 1
    psm.complete_txn(completed2)
    psm.on_high_watermark_updated(last_offset2 + 1)
    assert psm.first_unstable_offset() is None


def test_update_producer_transaction_state(psm, time):
    """Mirrors ProducerStateManagerTest#updateProducerTransactionState."""
    append(psm, PRODUCER_ID, 0, 0, 9)
    info = psm.prepare_update(PRODUCER_ID, AppendOrigin.CLIENT)
    info.append_data_batch(0, 1, 5, time.milliseconds(), LogOffsetMetadata(16), 20, True)
    entry = info.to_entry()
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset,
            entry.current_txn_first_offset) == (0, 1, 5, 16, 20, 16)
    assert txns(info.started_transactions) == [(PRODUCER_ID, 16, None)]

    info.append_data_batch(0, 6, 10, time.milliseconds(), LogOffsetMetadata(26), 30, True)
    entry = info.to_entry()
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset,
            entry.current_txn_first_offset) == (0, 1, 10, 16, 30, 16)
    assert txns(info.started_transactions) == [(PRODUCER_ID, 16, None)]

    completed = info.append_end_txn_marker(EndTransactionMarker(ControlRecordType.COMMIT, 15), 0, 40,
                                           time.milliseconds())
    assert completed == CompletedTxn(PRODUCER_ID, 16, 40, False)
    entry = info.to_entry()
    # The marker leaves the cached batches alone, takes the coordinator epoch, closes the transaction.
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset,
            entry.coordinator_epoch, entry.current_txn_first_offset) == (0, 1, 10, 16, 30, 15, None)
    assert txns(info.started_transactions) == [(PRODUCER_ID, 16, None)]


def test_out_of_sequence_after_control_record_epoch_bump(psm):
    """Mirrors ProducerStateManagerTest#testOutOfSequenceAfterControlRecordEpochBump."""
    append(psm, PRODUCER_ID, 0, 0, 0, is_transactional=True)
    append(psm, PRODUCER_ID, 0, 1, 1, is_transactional=True)
    append_end_txn_marker(psm, PRODUCER_ID, 1, ControlRecordType.ABORT, 1)
    # The bump reset the sequence: neither the old sequence nor a further bump without 0 goes.
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 1, 2, 2, is_transactional=True)
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 2, 2, 2, is_transactional=True)
    append(psm, PRODUCER_ID, 1, 0, 0, is_transactional=True)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.producer_epoch, entry.last_seq) == (1, 0)


def test_non_transactional_append_with_ongoing_transaction(psm):
    """Mirrors ProducerStateManagerTest#testNonTransactionalAppendWithOngoingTransaction."""
    append(psm, PRODUCER_ID, 0, 0, 0, is_transactional=True)
    with pytest.raises(InvalidTxnStateException):
        append(psm, PRODUCER_ID, 0, 1, 1)
    assert (psm.last_entry(PRODUCER_ID).last_seq, psm.first_undecided_offset()) == (0, 0)


def test_producer_state_after_fencing_abort_marker(psm, time):
    """Mirrors ProducerStateManagerTest#testProducerStateAfterFencingAbortMarker."""
    append(psm, PRODUCER_ID, 0, 0, 0, is_transactional=True)
    append_end_txn_marker(psm, PRODUCER_ID, 1, ControlRecordType.ABORT, offset=1)
    entry = psm.last_entry(PRODUCER_ID)
    assert (entry.current_txn_first_offset, entry.last_data_offset, entry.first_data_offset) == (None, -1, -1)
    # Kept, to keep fencing the old epoch.
    psm.remove_expired_producers(time.milliseconds())
    assert psm.last_entry(PRODUCER_ID) is not None


def test_first_unstable_offset(psm):
    """Mirrors ProducerStateManagerTest#testFirstUnstableOffset."""
    assert psm.first_undecided_offset() is None
    append(psm, PRODUCER_ID, 5, 0, offset=99, is_transactional=True)
    assert (psm.first_undecided_offset(), fuo(psm)) == (99, 99)
    another_pid = 2
    append(psm, another_pid, 5, 0, offset=105, is_transactional=True)
    assert (psm.first_undecided_offset(), fuo(psm)) == (99, 99)
    # Decided but not yet below the HW: still unstable.
    append_end_txn_marker(psm, PRODUCER_ID, 5, ControlRecordType.COMMIT, offset=109)
    assert (psm.first_undecided_offset(), fuo(psm)) == (105, 99)
    psm.on_high_watermark_updated(100)
    assert fuo(psm) == 99
    psm.on_high_watermark_updated(110)
    assert fuo(psm) == 105
    append_end_txn_marker(psm, another_pid, 5, ControlRecordType.ABORT, offset=112)
    assert (psm.first_undecided_offset(), fuo(psm)) == (None, 105)
    psm.on_high_watermark_updated(113)
    assert fuo(psm) is None


def test_old_epoch_for_control_record(psm):
    """Mirrors ProducerStateManagerTest#testOldEpochForControlRecord."""
    assert psm.first_undecided_offset() is None
    append(psm, PRODUCER_ID, 5, 0, offset=99, is_transactional=True)
    with pytest.raises(InvalidProducerEpochException):
        append_end_txn_marker(psm, PRODUCER_ID, 3, ControlRecordType.COMMIT, offset=100)
    assert psm.first_undecided_offset() == 99


def test_coordinator_fencing(psm):
    """Mirrors ProducerStateManagerTest#testCoordinatorFencing."""
    append(psm, PRODUCER_ID, 5, 0, offset=99, is_transactional=True)
    append_end_txn_marker(psm, PRODUCER_ID, 5, ControlRecordType.COMMIT, offset=100, coordinator_epoch=1)
    assert psm.last_entry(PRODUCER_ID).coordinator_epoch == 1
    # The same coordinator epoch, then a newer one, are allowed ...
    append_end_txn_marker(psm, PRODUCER_ID, 5, ControlRecordType.COMMIT, offset=101, coordinator_epoch=1)
    append_end_txn_marker(psm, PRODUCER_ID, 5, ControlRecordType.COMMIT, offset=102, coordinator_epoch=2)
    # ... an older one is a zombie coordinator.
    with pytest.raises(TransactionCoordinatorFencedException):
        append_end_txn_marker(psm, PRODUCER_ID, 5, ControlRecordType.COMMIT, offset=103, coordinator_epoch=1)
    assert psm.last_entry(PRODUCER_ID).coordinator_epoch == 2


def test_append_empty_control_batch(psm):
    """Mirrors ProducerStateManagerTest#testAppendEmptyControlBatch: a control batch cleaned of its marker starts nothing."""
    producer_id, base_offset = 23423, 15
    batch = RecordBatch.build([], base_offset=base_offset, is_transactional=True, is_control=True,
                              producer_id=producer_id, producer_epoch=0)
    assert batch.is_control_batch and batch.records() == []
    info = psm.prepare_update(producer_id, AppendOrigin.CLIENT)
    assert info.append(batch) is None
    psm.update(info)
    psm.update_map_end_offset(base_offset + 1)
    assert psm.last_entry(producer_id).current_txn_first_offset is None
    assert psm.first_undecided_offset() is None


# -- expiration, reload -------------------------------------------------------------------------


def test_pid_expiration_timeout(psm, time, config):
    """Mirrors ProducerStateManagerTest#testPidExpirationTimeout."""
    append(psm, PRODUCER_ID, 5, 37, 1)
    time.advance(config.producer_id_expiration_ms + 1)
    psm.remove_expired_producers(time.milliseconds())
    assert psm.last_entry(PRODUCER_ID) is None
    # Gone, so any sequence is taken again.
    append(psm, PRODUCER_ID, 5, 37 + 1, 2)
    assert [e.last_seq for e in psm.active_producers.values()] == [38]
    assert psm.map_end_offset() == 3


def test_producers_with_ongoing_transactions_dont_expire(psm, time, config):
    """Mirrors ProducerStateManagerTest#testProducersWithOngoingTransactionsDontExpire."""
    append(psm, PRODUCER_ID, 5, 0, offset=99, is_transactional=True)
    assert psm.first_undecided_offset() == 99
    time.advance(config.producer_id_expiration_ms + 1)
    psm.remove_expired_producers(time.milliseconds())
    assert psm.last_entry(PRODUCER_ID) is not None
    assert psm.first_undecided_offset() == 99
    psm.remove_expired_producers(time.milliseconds())
    assert psm.last_entry(PRODUCER_ID) is not None


def test_remove_expired_pids_on_reload(psm, time, config):
    """Mirrors ProducerStateManagerTest#testRemoveExpiredPidsOnReload (Kafka's snapshot at 2 lies past the reload's end and is dropped)."""
    append(psm, PRODUCER_ID, 0, 0, 0, 0)
    append(psm, PRODUCER_ID, 0, 1, 1, 1)
    recovered = new_manager(time, config)
    recovered.truncate_and_reload(0, 1, 70000)
    # Nothing known of the producer: the client's next sequence is taken.
    append(recovered, PRODUCER_ID, 0, 2, 2, 70001)
    assert [e.last_seq for e in recovered.active_producers.values()] == [2]
    assert recovered.map_end_offset() == 3


def test_accept_append_without_producer_state_on_replica(psm, time, config):
    """Mirrors ProducerStateManagerTest#testAcceptAppendWithoutProducerStateOnReplica (no snapshot in range, as in Kafka)."""
    append(psm, PRODUCER_ID, 0, 0, 0, 0)
    append(psm, PRODUCER_ID, 0, 1, 1, 1)
    recovered = new_manager(time, config)
    recovered.truncate_and_reload(0, 1, 70000)
    assert PRODUCER_ID not in recovered.active_producers
    append(recovered, PRODUCER_ID, 0, 2, 2, 70001, origin=AppendOrigin.REPLICATION)
    entry = recovered.active_producers[PRODUCER_ID]
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (0, 2, 2)


def test_load_from_snapshot_retains_non_expired_producers(psm):
    """Mirrors ProducerStateManagerTest#testLoadFromSnapshotRetainsNonExpiredProducers: a reload that keeps the map's end only moves the start."""
    pid1, pid2 = 1, 2
    append(psm, pid1, 0, 0, 0)
    append(psm, pid2, 0, 0, 1)
    assert len(psm.active_producers) == 2
    psm.truncate_and_reload(1, 2, psm.time.milliseconds())
    assert len(psm.active_producers) == 2
    entry1, entry2 = psm.last_entry(pid1), psm.last_entry(pid2)
    assert (entry1.last_seq, entry1.last_data_offset) == (0, 0)
    assert (entry2.last_seq, entry2.last_data_offset) == (0, 1)


# -- verification state -------------------------------------------------------------------------


def test_entry_for_verification(psm):
    """Mirrors ProducerStateManagerTest#testEntryForVerification."""
    original = psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0)
    guard = original.verification_guard
    # An existing entry is reused.
    updated = psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0)
    assert psm.verification_state_entry(PRODUCER_ID).verification_guard is guard
    assert updated.verification_guard is guard
    append(psm, PRODUCER_ID, 0, 0, offset=0, is_transactional=True)
    psm.clear_verification_state_entry(PRODUCER_ID)
    assert psm.verification_state_entry(PRODUCER_ID) is None


def test_sequence_and_epoch_in_verification_entry(psm):
    """Mirrors ProducerStateManagerTest#testSequenceAndEpochInVerificationEntry."""
    original = psm.maybe_create_verification_state_entry(PRODUCER_ID, 1, 0)
    guard = original.verification_guard

    def verify(new_entry, expected_sequence: int, expected_epoch: int) -> None:
        entry = psm.verification_state_entry(PRODUCER_ID)
        assert entry.verification_guard is guard and new_entry.verification_guard is guard
        assert (entry.lowest_sequence, entry.epoch) == (expected_sequence, expected_epoch)

    verify(original, 1, 0)
    # A lower sequence lowers it; a higher epoch resets it; a lower epoch is ignored.
    verify(psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0), 0, 0)
    verify(psm.maybe_create_verification_state_entry(PRODUCER_ID, 2, 1), 2, 1)
    verify(psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0), 2, 1)


@pytest.mark.parametrize("dynamically_disable", [True, False])
def test_throw_out_of_order_sequence_with_verification_sequence_check(psm, config, dynamically_disable):
    """Mirrors ProducerStateManagerTest#testThrowOutOfOrderSequenceWithVerificationSequenceCheck."""
    original = psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0)
    # The check runs off the entry even when verification is switched off afterwards.
    if dynamically_disable:
        config.transaction_verification_enabled = False
    with pytest.raises(OutOfOrderSequenceException):
        append(psm, PRODUCER_ID, 0, 4, offset=0, is_transactional=True)
    assert psm.verification_state_entry(PRODUCER_ID) is original
    assert psm.last_entry(PRODUCER_ID) is None


def test_verification_state_entry_expiration(psm, time, config):
    """Mirrors ProducerStateManagerTest#testVerificationStateEntryExpiration."""
    original = psm.maybe_create_verification_state_entry(PRODUCER_ID, 0, 0)
    time.advance(config.producer_id_expiration_ms // 2)
    psm.remove_expired_producers(time.milliseconds())
    assert psm.verification_state_entry(PRODUCER_ID) is original
    time.advance(config.producer_id_expiration_ms // 2 + 1)
    psm.remove_expired_producers(time.milliseconds())
    assert psm.verification_state_entry(PRODUCER_ID) is None


# -- through UnifiedLog, where Kafka reloads a snapshot -----------------------------------------


def _data(seq: int, offset: int, *, epoch: int = 0, pid: int = PRODUCER_ID, transactional: bool = False,
          timestamp: int) -> RecordBatch:
    return RecordBatch.build([SimpleRecord(value=b"v%d" % seq)], base_offset=offset, partition_leader_epoch=0,
                             producer_id=pid, producer_epoch=epoch, base_sequence=seq, timestamp=timestamp,
                             is_transactional=transactional)


def _marker(control_type: ControlRecordType, offset: int, *, epoch: int = 0, pid: int = PRODUCER_ID,
            timestamp: int) -> RecordBatch:
    return end_transaction_marker_batch(offset, timestamp, 0, pid, epoch, EndTransactionMarker(control_type, 0))


def test_first_unstable_offset_after_truncation():
    """Mirrors ProducerStateManagerTest#testFirstUnstableOffsetAfterTruncation, through UnifiedLog#truncateTo (the state is replayed from the data)."""
    time = MockTime()
    log = UnifiedLog.create(PARTITION, Disk(0), time=time)
    now = time.milliseconds()
    # Offsets 0-98 from another producer, a transaction at 99 committed at 105 (data up to 104), then
    # plain data of the producer at 106.
    log.append_as_follower(MemoryRecords.of([RecordBatch.build(
        [SimpleRecord(value=b"x")] * 99, base_offset=0, partition_leader_epoch=0, timestamp=now)]))
    log.append_as_follower(MemoryRecords.of([_data(0, 99, transactional=True, timestamp=now)]))
    psm = log.producer_state_manager
    assert fuo(psm) == 99
    log.append_as_follower(MemoryRecords.of([RecordBatch.build(
        [SimpleRecord(value=b"y")] * 5, base_offset=100, partition_leader_epoch=0, timestamp=now)]))
    log.append_as_follower(MemoryRecords.of([_marker(ControlRecordType.COMMIT, 105, timestamp=now)]))
    log.update_high_watermark(106)
    assert fuo(psm) is None
    log.append_as_follower(MemoryRecords.of([_data(1, 106, timestamp=now)]))
    assert (psm.map_end_offset(), psm.last_entry(PRODUCER_ID).last_seq) == (107, 1)
    # Cutting the last batch keeps the completed transaction stable ...
    log.truncate_to(106)
    assert (fuo(psm), psm.last_entry(PRODUCER_ID).last_seq, psm.map_end_offset()) == (None, 0, 106)
    # ... cutting the marker reopens it.
    log.truncate_to(100)
    assert (fuo(psm), psm.first_undecided_offset(), psm.map_end_offset()) == (99, 99, 100)
    assert psm.last_entry(PRODUCER_ID).current_txn_first_offset == 99


def test_has_late_transaction_initialized_after_reload():
    """Mirrors ProducerStateManagerTest#testHasLateTransactionInitializedAfterReload, through UnifiedLog#load (the state is replayed from the data)."""
    time = MockTime()
    disk = Disk(0)
    log = UnifiedLog.create(PARTITION, disk, time=time)
    start = time.milliseconds()
    log.append_as_follower(MemoryRecords.of([_data(0, 0, pid=39, epoch=2, transactional=True, timestamp=start)]))
    time.advance(500)
    log.append_as_follower(MemoryRecords.of([_data(0, 1, pid=57, epoch=9, transactional=True,
                                                   timestamp=time.milliseconds())]))
    assert not log.producer_state_manager.has_late_transaction(time.milliseconds())
    # The log's manager runs with transaction.max.timeout.ms's default (15 minutes).
    late_ms = TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT + LATE_TRANSACTION_BUFFER_MS
    time.advance(late_ms - 500 + 1)
    reloaded = UnifiedLog.load(PARTITION, log.local_log, time=time)
    assert reloaded.producer_state_manager.has_late_transaction(time.milliseconds())
    assert reloaded.producer_state_manager.first_undecided_offset() == 0
    assert reloaded.producer_state_manager.oldest_txn_last_timestamp == start


def test_log_refuses_plain_data_inside_an_open_transaction_and_markers_close_it():
    """UnifiedLog#append with ProducerAppendInfo#appendDataBatch: INVALID_TXN_STATE from a client, nothing written; a marker ends the transaction."""
    time = MockTime()
    log = UnifiedLog.create(PARTITION, Disk(0), time=time)
    now = time.milliseconds()
    log.append_as_leader(MemoryRecords.of([_data(0, 0, transactional=True, timestamp=now)]), leader_epoch=0)
    with pytest.raises(InvalidTxnStateException):
        log.append_as_leader(MemoryRecords.of([_data(1, 0, timestamp=now)]), leader_epoch=0)
    assert log.log_end_offset == 1
    log.append_as_leader(MemoryRecords.of([_marker(ControlRecordType.ABORT, 0, timestamp=now)]), leader_epoch=0,
                         origin=AppendOrigin.COORDINATOR)
    psm = log.producer_state_manager
    assert (log.log_end_offset, psm.first_undecided_offset(), psm.last_entry(PRODUCER_ID).current_txn_first_offset) == (
        2, None, None)
    info = log.append_as_leader(MemoryRecords.of([_data(1, 0, timestamp=now)]), leader_epoch=0)
    assert (info.first_offset, log.log_end_offset) == (2, 3)
