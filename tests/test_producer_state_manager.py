"""Idempotent producers in the log: epochs, sequences, duplicates, state after truncation and reload.

Log-level cases in the spirit of Kafka's ProducerStateManagerTest (whose port is
tests/test_producer_state_manager_kafka.py) and UnifiedLogTest (testDuplicateAppends, testOldProducerEpoch,
testNonSequentialAppend, testProducerIdMapTruncateTo).
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import InvalidProducerEpochException, OutOfOrderSequenceException
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import UnifiedLog
from kafka_ref.log.disk import Disk
from kafka_ref.log.fetch_data import AppendOrigin
from kafka_ref.log.producer_state_manager import INT32_MAX, ProducerStateManager

TP = TopicPartition("t", 0)
PID = 1000


def batch(seq: int, n: int = 1, *, epoch: int = 0, pid: int = PID, base_offset: int = 0) -> RecordBatch:
    return RecordBatch.build([SimpleRecord(value=b"v%d" % (seq + i)) for i in range(n)], base_offset=base_offset,
                             producer_id=pid, producer_epoch=epoch, base_sequence=seq, timestamp=1000)


def append(log: UnifiedLog, *batches: RecordBatch):
    return log.append_as_leader(MemoryRecords.of(batches), leader_epoch=0)


def make_log(disk: Disk | None = None) -> UnifiedLog:
    return UnifiedLog.create(TP, disk or Disk(0), time=MockTime())


def test_sequences_must_follow_within_an_epoch():
    """UnifiedLogTest#testNonSequentialAppend: a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, nothing written."""
    log = make_log()
    append(log, batch(0, 3))
    assert log.log_end_offset == 3
    with pytest.raises(OutOfOrderSequenceException):
        append(log, batch(5))
    assert log.log_end_offset == 3
    info = append(log, batch(3, 2))
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (3, 4, 5)


def test_retried_batch_is_answered_with_its_first_offsets_and_not_written_again():
    """UnifiedLogTest#testDuplicateAppends: any of the last five batches is recognised."""
    log = make_log()
    for i in range(6):
        append(log, batch(2 * i, 2))
    assert log.log_end_offset == 12
    # The first batch (seq 0-1) has left the five-batch window: it is out of order now ...
    with pytest.raises(OutOfOrderSequenceException):
        append(log, batch(0, 2))
    # ... the third (seq 4-5 at offsets 4-5) is still in it.
    info = append(log, batch(4, 2))
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (4, 5, 12)


def test_old_epoch_is_refused_and_new_epoch_starts_at_zero():
    """UnifiedLogTest#testOldProducerEpoch and ProducerAppendInfo's new-epoch rule."""
    log = make_log()
    append(log, batch(0, epoch=1))
    with pytest.raises(InvalidProducerEpochException):
        append(log, batch(1, epoch=0))
    with pytest.raises(OutOfOrderSequenceException):
        append(log, batch(7, epoch=2))
    append(log, batch(0, epoch=2))
    assert log.producer_state_manager.last_entry(PID).producer_epoch == 2
    assert log.log_end_offset == 2


def test_unknown_producer_may_start_at_any_sequence_and_sequences_wrap():
    """ProducerStateManagerTest#testProducerSequenceWrapAround (and a producer whose records are gone)."""
    psm = ProducerStateManager(TP)
    info = psm.prepare_update(PID, AppendOrigin.CLIENT)
    info.append(batch(INT32_MAX - 1, 2))
    psm.update(info)
    assert psm.last_entry(PID).last_seq == INT32_MAX
    psm.prepare_update(PID, AppendOrigin.CLIENT).append(batch(0))
    with pytest.raises(OutOfOrderSequenceException):
        psm.prepare_update(PID, AppendOrigin.CLIENT).append(batch(1))


def test_followers_apply_state_so_a_new_leader_detects_duplicates():
    """Replicated batches build the same state without checks (origin REPLICATION)."""
    leader, follower = make_log(), make_log(Disk(1))
    # (Two appends: a leader takes one v2 batch per append, LogValidator's rule.)
    append(leader, batch(0, 2))
    append(leader, batch(2, 2))
    follower.append_as_follower(MemoryRecords.of(leader.batches))
    info = append(follower, batch(2, 2))
    assert (info.first_offset, info.last_offset, follower.log_end_offset) == (2, 3, 4)


def test_truncation_and_reload_rebuild_the_state_from_the_data():
    """UnifiedLogTest#testProducerIdMapTruncateTo: state follows the data after truncation and restart."""
    disk = Disk(0)
    log = make_log(disk)
    append(log, batch(0, 2))
    append(log, batch(2, 2))
    log.truncate_to(2)
    assert log.producer_state_manager.last_entry(PID).last_seq == 1
    info = append(log, batch(2, 2))  # no longer a duplicate: written again at offset 2
    assert (info.first_offset, log.log_end_offset) == (2, 4)
    reloaded = UnifiedLog.load(TP, log.local_log, time=MockTime())
    assert reloaded.producer_state_manager.last_entry(PID).last_seq == 3
