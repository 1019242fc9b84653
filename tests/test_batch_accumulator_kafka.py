"""The Raft leader's BatchAccumulator: offsets at append time, linger, forced drains, close.

Ports Kafka 3.8.0's raft/src/test/java/org/apache/kafka/raft/internals/BatchAccumulatorTest.java
(kafka_ref.raft.batch_accumulator.BatchAccumulator). Kafka's ``Long.MAX_VALUE - now`` for "no
linger timer running" is infinity here.

Not ported:
- #testCompletedBatchReleaseBuffer, the memory-pool halves of the others: no memory pool here.
- #testSingleBatchAccumulation, #testMultipleBatchAccumulation, #testRecordsAreSplit: kafka_ref's
  metadata records are objects with no byte size, so there is no batch byte limit to split at.
- #testDrainDoesNotBlockWithConcurrentAppend: one thread (the event loop), no append lock.
- #testMultipleControlRecords, #testInvalidControlRecordOffset, #testInvalidControlRecordEpoch,
  #testEmptyControlBatch: the generic appendControlMessages with a caller-built MemoryRecords is
  not modelled; the LeaderChangeMessage is its one use here.
"""

from __future__ import annotations

import math

import pytest

from kafka_ref.common.time import MockTime
from kafka_ref.image.records import LeaderChangeMessage
from kafka_ref.raft.batch_accumulator import BatchAccumulator
from kafka_ref.raft.raft_client import NotLeaderException, UnexpectedBaseOffsetException

from raft_support import RECORD

LEADER_EPOCH = 17
BASE_OFFSET = 157
LINGER_MS = 50
MESSAGE = LeaderChangeMessage(leader_id=0, voters=(0, 1), granting_voters=(0, 1))


def build(base_offset: int = BASE_OFFSET, linger_ms: int = LINGER_MS) -> tuple[BatchAccumulator, MockTime]:
    time = MockTime()
    return BatchAccumulator(LEADER_EPOCH, base_offset, linger_ms, time), time


def _records(n: int) -> list:
    return [RECORD] * n


def test_leader_change_message_written():
    """Mirrors BatchAccumulatorTest#testLeaderChangeMessageWritten: the control batch needs no linger."""
    acc, time = build(base_offset=0)
    acc.append_leader_change_message(MESSAGE, time.milliseconds())
    assert acc.needs_drain(time.milliseconds())
    (batch,) = acc.drain()
    assert (batch.base_offset, batch.control_records, batch.records, batch.num_records) == (0, (MESSAGE,), (), 1)
    assert acc.next_offset == 1


@pytest.mark.parametrize("atomic", [False, True])
def test_force_drain(atomic):
    """Mirrors BatchAccumulatorTest#testForceDrain: offsets are given at append time; a forced drain
    is due at once and hands every record over in one batch stamped when it opened."""
    acc, time = build()
    sizes = [1, 2, 3, 2, 1]
    expected_last = [157, 159, 162, 164, 165]
    assert [acc.append(LEADER_EPOCH, _records(n), is_atomic=atomic) for n in sizes] == expected_last
    assert not acc.needs_drain(time.milliseconds())
    acc.force_drain()
    assert acc.needs_drain(time.milliseconds()) and acc.time_until_drain(time.milliseconds()) == 0
    batches = acc.drain()
    assert len(batches) == 1
    assert not acc.needs_drain(time.milliseconds()) and acc.time_until_drain(time.milliseconds()) == math.inf
    assert (batches[0].base_offset, len(batches[0].records), batches[0].append_timestamp) == (157, 9, time.milliseconds())


@pytest.mark.parametrize("atomic", [False, True])
def test_force_drain_before_append_leader_change_message(atomic):
    """Mirrors BatchAccumulatorTest#testForceDrainBeforeAppendLeaderChangeMessage: the open batch is
    completed first, the control batch follows at the next offset."""
    acc, time = build()
    for n in [1, 2, 3, 2, 1]:
        acc.append(LEADER_EPOCH, _records(n), is_atomic=atomic)
    assert not acc.needs_drain(time.milliseconds())
    acc.append_leader_change_message(MESSAGE, time.milliseconds())
    assert acc.needs_drain(time.milliseconds()) and acc.time_until_drain(time.milliseconds()) == 0
    batches = acc.drain()
    assert [(b.base_offset, len(b.records), len(b.control_records)) for b in batches] == [(157, 9, 0), (166, 0, 1)]
    assert not acc.needs_drain(time.milliseconds()) and acc.time_until_drain(time.milliseconds()) == math.inf
    assert batches[0].append_timestamp == time.milliseconds()


def test_linger_ignored_if_accumulator_empty():
    """Mirrors BatchAccumulatorTest#testLingerIgnoredIfAccumulatorEmpty."""
    acc, time = build()
    assert acc.is_empty() and not acc.needs_drain(time.milliseconds())
    assert acc.time_until_drain(time.milliseconds()) == math.inf


def test_linger_begins_on_first_write():
    """Mirrors BatchAccumulatorTest#testLingerBeginsOnFirstWrite."""
    acc, time = build()
    time.advance(15)
    assert acc.append(LEADER_EPOCH, [RECORD], is_atomic=False) == BASE_OFFSET
    assert acc.time_until_drain(time.milliseconds()) == LINGER_MS and not acc.is_empty()
    time.advance(LINGER_MS // 2)
    assert acc.time_until_drain(time.milliseconds()) == LINGER_MS // 2 and not acc.is_empty()
    time.advance(LINGER_MS // 2)
    assert acc.time_until_drain(time.milliseconds()) == 0
    assert acc.needs_drain(time.milliseconds()) and not acc.is_empty()


def test_unflushed_buffers_released_by_close():
    """Mirrors BatchAccumulatorTest#testUnflushedBuffersReleasedByClose: close drops what was not drained."""
    acc, _time = build()
    assert acc.append(LEADER_EPOCH, [RECORD], is_atomic=False) == BASE_OFFSET
    acc.close()
    assert acc.drain() == [] and acc.is_empty()


def test_close_when_empty():
    """Mirrors BatchAccumulatorTest#testCloseWhenEmpty."""
    acc, _time = build(linger_ms=LINGER_MS)
    acc.close()
    assert (acc.drain(), acc.next_offset, acc.num_completed_batches()) == ([], BASE_OFFSET, 0)


@pytest.mark.parametrize("correct_offset", [False, True])
def test_append_with_required_base_offset(correct_offset):
    """Mirrors BatchAccumulatorTest#testAppendWithRequiredBaseOffset."""
    acc, _time = build()
    if correct_offset:
        assert acc.append(LEADER_EPOCH, [RECORD], required_base_offset=BASE_OFFSET) == BASE_OFFSET
    else:
        with pytest.raises(UnexpectedBaseOffsetException) as info:
            acc.append(LEADER_EPOCH, [RECORD], required_base_offset=BASE_OFFSET - 1)
        assert str(info.value) == "Wanted base offset 156, but the next offset was 157"
        assert acc.is_empty() and acc.next_offset == BASE_OFFSET
    acc.close()


def test_append_checks_the_epoch():
    """BatchAccumulator#append: an older epoch is NotLeaderException, a newer one the caller's mistake."""
    acc, _time = build()
    with pytest.raises(NotLeaderException) as stale:
        acc.append(LEADER_EPOCH - 1, [RECORD])
    assert str(stale.value) == "Append failed because the given epoch 16 is stale. Current leader epoch = 17"
    with pytest.raises(ValueError) as newer:
        acc.append(LEADER_EPOCH + 1, [RECORD])
    assert str(newer.value) == "Attempt to append from epoch 18 which is larger than the current epoch 17"
    assert acc.is_empty() and acc.next_offset == BASE_OFFSET
