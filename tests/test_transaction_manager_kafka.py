"""Ports of Kafka 3.8.0 TransactionManagerTest, the idempotent (non-transactional) producer's tests
(clients/src/test/java/org/apache/kafka/clients/producer/internals/TransactionManagerTest.java).

Kafka's tests drive a TransactionManager beside a Sender built on a MockClient; many of them
make batches by hand (``writeIdempotentBatchWithValue``: stamp a batch with the partition's next
sequence and track it as in flight) and report their outcomes to the manager directly. Here
the manager is the one of a running idempotent producer (test_sender_kafka's ``sender_env``:
MockBrokers answer metadata and hold every other request for the test), which gets its producer
id from an answered InitProducerId as ``initializeIdempotentProducerId`` does; ``run_until``
wakes the producer's Sender until a condition holds, as ``runUntil`` calls ``runOnce``.

Not ported:
- Every transactional test (those using ``doInitTransactions``, ``beginTransaction``, AddPartitionsToTxn,
  AddOffsetsToTxn, TxnOffsetCommit, EndTxn, FindCoordinator for the transaction coordinator, abortable
  errors, testTransitionToFatalErrorWhenRetriedBatchIsExpired, testHealthyPartitionRetriesDuringEpochBump,
  testBumpTransactional*, testFailIfNotReadyForSend* of a transactional producer, ...): transactions are
  not modelled.
- testFailIfNotReadyForSendIdempotentProducer, testFailIfNotReadyForSendIdempotentProducerFatalError:
  exercise TransactionManager#maybeAddPartition, which kafka_ref's producer does not call (after a
  fatal error the Sender fails every record with the error instead; SenderTest#testClusterAuthorizationExceptionInProduceRequest).
- testBackgroundInvalidStateTransitionIsFatal, testForegroundInvalidStateTransitionIsRecoverable: the
  transactional state machine and its invalid transitions.
"""

from __future__ import annotations

import anyio
import pytest
from test_sender_kafka import (
    PRODUCER_ID,
    TP0,
    TP1,
    append,
    batches_of,
    receive_producer_id,
    sender_env,
    settle,
)

from kafka_ref.clients.producer import KafkaProducer
from kafka_ref.clients.record_accumulator import ProducerBatch
from kafka_ref.clients.transaction_manager import TransactionManager
from kafka_ref.common.errors import Errors, KafkaException, OutOfOrderSequenceException, TimeoutException
from kafka_ref.common.records import SimpleRecord
from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest
from kafka_ref.common.topic_partition import TopicPartition

EPOCH = 1
SHORT_MAX = 32767
PAST_RECONNECT_BACKOFF_MS = 100   # the first reconnect backoff: 50 ms with up to 20 % jitter


def write_idempotent_batch_with_value(producer: KafkaProducer, tp: TopicPartition, value: str) -> ProducerBatch:
    """TransactionManagerTest#writeIdempotentBatchWithValue: a one-record batch stamped with the
    partition's next sequence (the partition first moves to the current epoch if it may) and
    tracked as in flight by the producer's TransactionManager, as the accumulator's drain does."""
    tm = producer.transaction_manager
    now = producer.time.milliseconds()
    tm.maybe_update_producer_id_and_epoch(tp)
    sequence = tm.sequence_number(tp)
    tm.increment_sequence_number(tp, 1)
    batch = ProducerBatch(tp, 64, now)
    batch.try_append(SimpleRecord(b"", value.encode(), (), now), None, now)
    batch.set_producer_state(tm.producer_id, tm.producer_epoch, sequence)
    tm.add_in_flight_batch(batch)
    batch.close()
    return batch


async def run_until(producer: KafkaProducer, condition, max_tries: int = 10) -> None:
    """ProducerTestUtils#runUntil: run Sender rounds until ``condition()`` holds."""
    for _ in range(max_tries):
        if condition():
            break
        producer.sender.wakeup()
        await settle()
    assert condition(), f"Condition not satisfied after {max_tries} tries"


def test_default_sequence_number() -> None:
    """Mirrors TransactionManagerTest#testDefaultSequenceNumber."""
    tm = TransactionManager("clientId")
    assert tm.sequence_number(TP0) == 0
    tm.increment_sequence_number(TP0, 3)
    assert tm.sequence_number(TP0) == 3


def test_sequence_number_overflow() -> None:
    """Mirrors TransactionManagerTest#testSequenceNumberOverflow: sequences wrap past Integer.MAX_VALUE to 0."""
    tm = TransactionManager("clientId")
    assert tm.sequence_number(TP0) == 0
    tm.increment_sequence_number(TP0, 2**31 - 1)
    assert tm.sequence_number(TP0) == 2**31 - 1
    tm.increment_sequence_number(TP0, 100)
    assert tm.sequence_number(TP0) == 99
    tm.increment_sequence_number(TP0, 2**31 - 1)
    assert tm.sequence_number(TP0) == 98


@pytest.mark.anyio
async def test_producer_id_reset() -> None:
    """Mirrors TransactionManagerTest#testProducerIdReset: with the epoch exhausted a bump forgets
    the producer id; only the partition that asked for it starts its sequences again."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, 15, SHORT_MAX)
        assert (tm.sequence_number(TP0), tm.sequence_number(TP1)) == (0, 0)
        tm.increment_sequence_number(TP0, 3)
        assert tm.sequence_number(TP0) == 3
        tm.increment_sequence_number(TP1, 3)
        assert tm.sequence_number(TP1) == 3
        tm.request_epoch_bump_for_partition(TP0)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert not tm.has_producer_id()
        assert (tm.sequence_number(TP0), tm.sequence_number(TP1)) == (0, 3)


@pytest.mark.anyio
async def test_bump_epoch_and_reset_sequence_numbers_after_unknown_producer_id() -> None:
    """Mirrors TransactionManagerTest#testBumpEpochAndResetSequenceNumbersAfterUnknownProducerId:
    UNKNOWN_PRODUCER_ID for the second of five batches in flight (log start offset past the
    first's offset): the Sender bumps the epoch and the four batches left are renumbered 0..3."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, EPOCH)
        b1, b2, b3, b4, b5 = (write_idempotent_batch_with_value(producer, TP0, str(i)) for i in range(1, 6))
        assert tm.sequence_number(TP0) == 5
        now = producer.time.milliseconds()
        b1.done(500, now, None)
        tm.handle_completed_batch(b1, 500)
        assert tm.can_retry(Errors.UNKNOWN_PRODUCER_ID, 500, b2)
        await run_until(producer, lambda: tm.producer_epoch == 2)
        assert b2.producer_epoch == 2
        assert [b.base_sequence for b in (b2, b3, b4, b5)] == [0, 1, 2, 3]
        assert tm.sequence_number(TP0) == 4


@pytest.mark.anyio
async def test_batch_failure_after_producer_reset() -> None:
    """Mirrors TransactionManagerTest#testBatchFailureAfterProducerReset: the epoch is exhausted, so
    the bump resets the producer id; the partition that asked for it renumbers its in-flight
    batch, the other keeps its sequences."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, SHORT_MAX)
        tp0_b1 = write_idempotent_batch_with_value(producer, TP0, "1")
        tp1_b1 = write_idempotent_batch_with_value(producer, TP1, "1")
        tm.handle_completed_batch(tp0_b1, -1)
        tm.handle_completed_batch(tp1_b1, -1)
        tp0_b2 = write_idempotent_batch_with_value(producer, TP0, "2")
        tp1_b2 = write_idempotent_batch_with_value(producer, TP1, "2")
        assert (tm.sequence_number(TP0), tm.sequence_number(TP1)) == (2, 2)
        assert tm.can_retry(Errors.UNKNOWN_PRODUCER_ID, 400, tp0_b1)
        tm.handle_completed_batch(tp1_b1, -1)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert not tm.has_producer_id()
        assert tm.sequence_number(TP0) == 1
        assert tm.next_batch_by_sequence(TP0) is tp0_b2
        assert tp0_b2.base_sequence == 0
        assert tm.sequence_number(TP1) == 2
        assert tm.next_batch_by_sequence(TP1) is tp1_b2


@pytest.mark.anyio
async def test_batch_completed_after_producer_reset() -> None:
    """Mirrors TransactionManagerTest#testBatchCompletedAfterProducerReset: a partition keeps its
    sequences and old epoch while its batches are in flight across a producer id reset caused
    by another partition; once they are done it starts again at 0 under the new id."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, SHORT_MAX)
        b1 = write_idempotent_batch_with_value(producer, TP0, "1")
        write_idempotent_batch_with_value(producer, TP1, "1")
        b2 = write_idempotent_batch_with_value(producer, TP0, "2")
        assert tm.sequence_number(TP0) == 2
        # The producer id is reset because of the other partition; a new one arrives.
        tm.request_epoch_bump_for_partition(TP1)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert not tm.has_producer_id()
        await run_until(producer, lambda: len(brokers.requests(InitProducerIdRequest)) == 1)
        await receive_producer_id(brokers, PRODUCER_ID + 1, 0)
        assert tm.producer_id_and_epoch() == (PRODUCER_ID + 1, 0)
        tm.handle_completed_batch(b1, 500)
        assert tm.sequence_number(TP0) == 2
        assert tm.last_acked_sequence(TP0) == 0
        assert tm.next_batch_by_sequence(TP0) is b2
        assert tm.next_batch_by_sequence(TP0).producer_epoch == SHORT_MAX
        tm.handle_completed_batch(b2, 500)
        tm.maybe_update_producer_id_and_epoch(TP0)
        assert tm.sequence_number(TP0) == 0
        assert tm.last_acked_sequence(TP0) is None
        assert tm.next_batch_by_sequence(TP0) is None
        assert tm.producer_id_and_epoch(TP0) == (PRODUCER_ID + 1, 0)


@pytest.mark.anyio
async def test_duplicate_sequence_after_producer_reset() -> None:
    """Mirrors TransactionManagerTest#testDuplicateSequenceAfterProducerReset: a batch whose request
    timed out is retried and then expires while its retry is in flight: its sequence is
    unresolved, and with nothing else in flight the next round bumps the epoch and starts the
    partition at sequence 0; the next batch goes as sequence 0 of the new epoch and is retried
    (not failed) when its request times out too."""
    request_timeout, delivery_timeout = 10000, 15000
    async with sender_env(enable_idempotence=True, request_timeout_ms=request_timeout,
                          delivery_timeout_ms=delivery_timeout) as (brokers, producer):
        tm = producer.transaction_manager
        producer.accumulator.retry_backoff_ms = 0
        await receive_producer_id(brokers, PRODUCER_ID, EPOCH)
        assert tm.sequence_number(TP0) == 0
        future1 = append(producer, TP0)
        await settle()
        assert tm.sequence_number(TP0) == 1
        [first] = brokers.requests()
        # The request times out (the client drops the connection); the batch is retried as soon
        # as the node can be reached again (no retry backoff here).
        await anyio.sleep(request_timeout / 1000)
        await settle()
        assert producer.client.in_flight_request_count(0) == 0
        assert tm.has_inflight_batches(TP0)
        assert tm.sequence_number(TP0) == 1
        brokers.pending.remove(first)
        await anyio.sleep(PAST_RECONNECT_BACKOFF_MS / 1000)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        [retry] = brokers.requests()
        assert tm.has_inflight_batches(TP0)
        # The delivery timeout passes while the retry is in flight: the batch expires.
        await anyio.sleep((delivery_timeout - request_timeout) / 1000)
        await settle()
        assert isinstance(future1.exception(), TimeoutException)
        assert producer.client.in_flight_request_count(0) == 1
        # The next round bumps the epoch: nothing in flight resolved the expired sequence.
        await run_until(producer, lambda: tm.producer_epoch == EPOCH + 1)
        assert tm.sequence_number(TP0) == 0
        assert not tm.has_unresolved_sequence(TP0)
        future2 = append(producer, TP0)
        await settle()
        assert tm.first_in_flight_sequence(TP0) == 0
        assert tm.sequence_number(TP0) == 1
        second = brokers.requests()[-1]
        [batch] = batches_of(second, TP0)
        assert (batch.producer_epoch, batch.base_sequence) == (EPOCH + 1, 0)
        # The second batch's request times out as well: it is retried, not failed.
        await anyio.sleep((request_timeout + PAST_RECONNECT_BACKOFF_MS) / 1000)
        await settle()
        assert tm.has_inflight_batches(TP0)
        assert not future2.done()


@pytest.mark.anyio
async def test_bump_epoch_after_timeout_without_pending_inflight_requests() -> None:
    """Mirrors TransactionManagerTest#testBumpEpochAfterTimeoutWithoutPendingInflightRequests: a
    sequence marked unresolved after its batch was acknowledged resolves at once; one whose
    batch failed (the only one in flight) leaves a gap: the Sender bumps the epoch."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        tp = TopicPartition("foo", 0)
        await receive_producer_id(brokers, 15, 5)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (15, 5)
        assert tm.sequence_number(tp) == 0
        b1 = write_idempotent_batch_with_value(producer, tp, "1")
        assert tm.sequence_number(tp) == 1
        tm.handle_completed_batch(b1, 500)
        assert tm.last_acked_sequence(tp) == 0
        # Nothing in flight: marking it unresolved is undone by the next resolution.
        tm.mark_sequence_unresolved(b1)
        tm.maybe_resolve_sequences()
        assert tm.producer_id_and_epoch() == (15, 5)
        assert not tm.has_unresolved_sequences()
        # A new batch fails with a timeout.
        b2 = write_idempotent_batch_with_value(producer, tp, "2")
        assert tm.sequence_number(tp) == 2
        tm.mark_sequence_unresolved(b2)
        tm.handle_failed_batch(b2, TimeoutException(), False)
        assert tm.has_unresolved_sequences()
        tm.maybe_resolve_sequences()
        assert not tm.has_unresolved_sequences()
        assert tm.epoch_bump_required
        await run_until(producer, lambda: tm.producer_epoch == 6)
        assert tm.producer_id == 15


@pytest.mark.anyio
async def test_no_producer_id_reset_after_last_in_flight_batch_succeeds() -> None:
    """Mirrors TransactionManagerTest#testNoProducerIdResetAfterLastInFlightBatchSucceeds: two of
    three batches time out, the third is acknowledged: the sequences are resolved without a bump."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        tp = TopicPartition("foo", 0)
        await receive_producer_id(brokers, 15, 5)
        b1 = write_idempotent_batch_with_value(producer, tp, "1")
        b2 = write_idempotent_batch_with_value(producer, tp, "2")
        b3 = write_idempotent_batch_with_value(producer, tp, "3")
        assert tm.sequence_number(tp) == 3
        tm.mark_sequence_unresolved(b1)
        tm.handle_failed_batch(b1, TimeoutException(), False)
        assert tm.has_unresolved_sequences()
        # No bump while the sequences are unresolved.
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (15, 5)
        assert tm.has_unresolved_sequences()
        tm.handle_failed_batch(b2, TimeoutException(), False)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (15, 5)
        assert tm.has_unresolved_sequences()
        # The third batch is acknowledged: resolved, no reset.
        tm.handle_completed_batch(b3, 500)
        tm.maybe_resolve_sequences()
        assert tm.producer_id_and_epoch() == (15, 5)
        assert not tm.has_unresolved_sequences()
        assert not tm.epoch_bump_required
        assert tm.sequence_number(tp) == 3


@pytest.mark.anyio
async def test_epoch_bump_after_last_inflight_batch_fails() -> None:
    """Mirrors TransactionManagerTest#testEpochBumpAfterLastInflightBatchFails: the first of three
    batches times out, the second is acknowledged (not enough: its sequence follows the gap),
    the third fails too: the epoch is bumped and the partition starts at sequence 0."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        tp = TopicPartition("foo", 0)
        await receive_producer_id(brokers, PRODUCER_ID, EPOCH)
        b1 = write_idempotent_batch_with_value(producer, tp, "1")
        b2 = write_idempotent_batch_with_value(producer, tp, "2")
        b3 = write_idempotent_batch_with_value(producer, tp, "3")
        assert tm.sequence_number(tp) == 3
        tm.mark_sequence_unresolved(b1)
        tm.handle_failed_batch(b1, TimeoutException(), False)
        assert tm.has_unresolved_sequences()
        tm.handle_completed_batch(b2, 500)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (PRODUCER_ID, EPOCH)
        assert tm.has_unresolved_sequences()
        tm.handle_failed_batch(b3, TimeoutException(), False)
        await run_until(producer, lambda: tm.producer_epoch == 2)
        assert not tm.has_unresolved_sequences()
        assert tm.sequence_number(tp) == 0


@pytest.mark.anyio
async def test_no_failed_batch_handling_when_txn_manager_is_in_fatal_error() -> None:
    """Mirrors TransactionManagerTest#testNoFailedBatchHandlingWhenTxnManagerIsInFatalError: an
    OutOfOrderSequenceException bumps the epoch; once the manager is in its fatal state a failed
    batch no longer does."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        tp = TopicPartition("foo", 0)
        await receive_producer_id(brokers, 15, 5)
        b1 = write_idempotent_batch_with_value(producer, tp, "1")
        tm.handle_failed_batch(b1, OutOfOrderSequenceException("out of sequence"), False)
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (15, 6)
        tm.transition_to_fatal_error(KafkaException())
        b2 = write_idempotent_batch_with_value(producer, tp, "2")
        tm.handle_failed_batch(b2, TimeoutException(), True)
        assert not tm.epoch_bump_required
        tm.bump_idempotent_epoch_and_reset_id_if_needed()
        assert tm.producer_id_and_epoch() == (15, 6)


@pytest.mark.anyio
async def test_failed_inflight_batch_after_epoch_bump() -> None:
    """Mirrors TransactionManagerTest#testFailedInflightBatchAfterEpochBump and
    #testHealthyPartitionRetriesDuringEpochBump (the same steps; the latter moves the partition
    to the current epoch once more at the end, which changes nothing): an epoch bump for
    partition 0 renumbers its batches only; partition 1 keeps its old-epoch batch in flight,
    holds back a new batch meanwhile, retries the old one under the old epoch, and moves to the
    new epoch (from sequence 0) only when it is done."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        accumulator = producer.accumulator
        await receive_producer_id(brokers, PRODUCER_ID, EPOCH)
        tp0_b1 = write_idempotent_batch_with_value(producer, TP0, "1")
        tp0_b2 = write_idempotent_batch_with_value(producer, TP0, "2")
        write_idempotent_batch_with_value(producer, TP0, "3")
        tp1_b1 = write_idempotent_batch_with_value(producer, TP1, "4")
        tp1_b2 = write_idempotent_batch_with_value(producer, TP1, "5")
        assert (tm.sequence_number(TP0), tm.sequence_number(TP1)) == (3, 2)
        # The first batch of each partition succeeds.
        now = producer.time.milliseconds()
        tp0_b1.done(500, now, None)
        tm.handle_completed_batch(tp0_b1, 500)
        tp1_b1.done(500, now, None)
        tm.handle_completed_batch(tp1_b1, 500)
        # UNKNOWN_PRODUCER_ID for partition 0's second batch: epoch bump.
        assert tm.can_retry(Errors.UNKNOWN_PRODUCER_ID, 500, tp0_b2)
        await run_until(producer, lambda: tm.producer_epoch == 2)
        assert tm.next_batch_by_sequence(TP0) is tp0_b2
        assert tm.first_in_flight_sequence(TP0) == 0
        assert tp0_b2.base_sequence == 0
        assert tp0_b2.sequence_has_been_reset()
        assert tp0_b2.producer_epoch == 2
        assert tm.next_batch_by_sequence(TP1) is tp1_b2
        assert tm.first_in_flight_sequence(TP1) == 1
        assert tp1_b2.base_sequence == 1
        assert not tp1_b2.sequence_has_been_reset()
        assert tp1_b2.producer_epoch == EPOCH
        # A new batch of partition 1 is not drained while it has old-epoch batches in flight.
        append(producer, TP1)
        producer.sender.wakeup()
        await settle()
        assert len(accumulator.get_deque(TP1)) == 1
        assert brokers.requests() == []
        # Partition 1's batch comes back (NOT_LEADER_OR_FOLLOWER): retried under its old epoch.
        assert tm.can_retry(Errors.NOT_LEADER_OR_FOLLOWER, 600, tp1_b2)
        accumulator.reenqueue(tp1_b2, producer.time.milliseconds())
        await anyio.sleep(producer.retry_backoff_ms / 1000)
        producer.sender.wakeup()
        await settle()
        assert len(accumulator.get_deque(TP1)) == 1
        assert accumulator.get_deque(TP1)[0] is not tp1_b2
        assert tp1_b2.producer_epoch == EPOCH
        [request] = brokers.requests()
        [sent] = batches_of(request, TP1)
        assert (sent.producer_epoch, sent.base_sequence) == (EPOCH, 1)
        # It succeeds: nothing of partition 1 in flight, it moves to the new epoch.
        tp1_b2.done(500, now, None)
        tm.handle_completed_batch(tp1_b2, 500)
        tm.maybe_update_producer_id_and_epoch(TP1)
        assert not tm.has_inflight_batches(TP1)
        assert tm.sequence_number(TP1) == 0
        # The queued batch is drained now, under the new epoch.
        await run_until(producer, lambda: tm.has_inflight_batches(TP1))
        assert len(accumulator.get_deque(TP1)) == 0
        tp1_b3 = tm.next_batch_by_sequence(TP1)
        assert tp1_b3.producer_epoch == EPOCH + 1
        assert tp1_b3.base_sequence == 0
        tp1_b3.done(500, now, None)
        tm.handle_completed_batch(tp1_b3, 500)
        assert not tm.has_inflight_batches(TP1)
        assert tm.sequence_number(TP1) == 1
        tm.maybe_update_producer_id_and_epoch(TP1)
        assert not tm.has_inflight_batches(TP1)
        assert (tm.sequence_number(TP1), tm.last_acked_sequence(TP1)) == (1, 0)
