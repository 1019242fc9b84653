"""The idempotent producer's state: its producer id and epoch, and a sequence number per partition.

Mirrors the idempotent (non-transactional) part of
org.apache.kafka.clients.producer.internals.TransactionManager and TxnPartitionMap /
TxnPartitionEntry (Kafka 3.8). The Sender asks for a producer id with InitProducerId before it
drains anything; each drained batch gets the id, the epoch and the partition's next sequence
number, is tracked as in flight until it completes or fails, and keeps its stamp across
retries, so the partition leader can answer a retried batch it already wrote with its original
offsets instead of writing it twice (ProducerStateManager's duplicate check).

Up to ``max.in.flight.requests.per.connection`` (at most 5) batches of a partition may be in
flight at once; the manager keeps them ordered by sequence (``inflight_batches_by_sequence``)
so a retried batch is drained again only when it is the partition's first in flight, and the
accumulator puts retried batches back in sequence order.

When the leader and the producer disagree about sequences (OUT_OF_ORDER_SEQUENCE_NUMBER,
UNKNOWN_PRODUCER_ID) the producer bumps its epoch locally (KIP-360): same producer id, epoch
+ 1, and the partition's in-flight batches are renumbered from sequence 0 under the new epoch
and retried (``can_retry``); only an exhausted epoch (Short.MAX_VALUE) makes it ask for a new
producer id. A batch behind the failed one gets OUT_OF_ORDER_SEQUENCE_NUMBER too and simply
retries. A batch that expires after having been sent leaves its partition *unresolved*: no new
batch of it is drained until the batches still in flight tell whether the expired one was
written (a later success) or not (all in flight done with a gap: epoch bump). A batch failing
with an authorization error, a fenced producer or an unsupported version puts the manager in
its fatal state: the Sender then fails every record with that error. Transactions are not
modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_ref.clients.client_metadata import client_logger
from kafka_ref.common.errors import (
    ClusterAuthorizationException,
    Errors,
    IllegalStateException,
    OutOfOrderSequenceException,
    ProducerFencedException,
    RetriableException,
    TransactionalIdAuthorizationException,
    UnsupportedVersionException,
)
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.clients.record_accumulator import ProducerBatch

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_LAST_ACKED_SEQUENCE_NUMBER = -1
NO_SEQUENCE = -1
INVALID_OFFSET = -1
SHORT_MAX_VALUE = 32767


def _batch_order(batch: ProducerBatch) -> tuple[int, int, int]:
    """TxnPartitionEntry's PRODUCER_BATCH_COMPARATOR: producer id, then epoch, then base sequence."""
    return (batch.producer_id, batch.producer_epoch, batch.base_sequence)


class TxnPartitionEntry:
    """Mirrors org.apache.kafka.clients.producer.internals.TxnPartitionEntry.

    One partition's view: the producer id and epoch its sequences belong to, the next sequence
    to hand out, the last sequence and offset acknowledged, and the batches in flight, a sorted
    set keyed by (producer id, epoch, base sequence) as Kafka's TreeSet is: adding a batch whose
    key is already there does nothing, and removing one removes the batch with its key.
    """

    def __init__(self, tp: TopicPartition) -> None:
        self.topic_partition = tp
        self.producer_id_and_epoch = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        self.next_sequence = 0
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER
        self.last_acked_offset = INVALID_OFFSET
        self.inflight_batches_by_sequence: list[ProducerBatch] = []

    def has_inflight_batches(self) -> bool:
        """Mirrors TxnPartitionEntry#hasInflightBatches."""
        return bool(self.inflight_batches_by_sequence)

    def next_batch_by_sequence(self) -> ProducerBatch | None:
        """Mirrors TxnPartitionEntry#nextBatchBySequence: the in-flight batch with the lowest key."""
        return self.inflight_batches_by_sequence[0] if self.inflight_batches_by_sequence else None

    def increment_sequence(self, increment: int) -> None:
        """Mirrors TxnPartitionEntry#incrementSequence (DefaultRecordBatch#incrementSequence wraps past Integer.MAX_VALUE)."""
        if self.next_sequence > 0x7FFFFFFF - increment:
            self.next_sequence = increment - (0x7FFFFFFF - self.next_sequence) - 1
        else:
            self.next_sequence += increment

    def add_inflight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TxnPartitionEntry#addInflightBatch.

        1. A batch with the same key already tracked: nothing to add. 2. Otherwise insert it in key order.
        """
        key = _batch_order(batch)
        if any(_batch_order(b) == key for b in self.inflight_batches_by_sequence):
            return
        self.inflight_batches_by_sequence.append(batch)
        self.inflight_batches_by_sequence.sort(key=_batch_order)

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TxnPartitionEntry#removeInFlightBatch: drop the tracked batch with the batch's key."""
        key = _batch_order(batch)
        for i, tracked in enumerate(self.inflight_batches_by_sequence):
            if _batch_order(tracked) == key:
                del self.inflight_batches_by_sequence[i]
                return

    def start_sequences_at_beginning(self, producer_id: int, producer_epoch: int) -> None:
        """Mirrors TxnPartitionEntry#startSequencesAtBeginning.

        1. Renumber the in-flight batches from 0, in sequence order, under the given id and
        epoch. 2. The partition's next sequence follows them; nothing is acknowledged yet.
        """
        sequence = 0
        for batch in list(self.inflight_batches_by_sequence):
            batch.reset_producer_state(producer_id, producer_epoch, sequence)
            sequence += batch.record_count
        self.inflight_batches_by_sequence.sort(key=_batch_order)
        self.producer_id_and_epoch = (producer_id, producer_epoch)
        self.next_sequence = sequence
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER

    def maybe_update_last_acked_sequence(self, sequence: int) -> int:
        """Mirrors TxnPartitionEntry#maybeUpdateLastAckedSequence: only moves forward; returns the last acknowledged sequence."""
        if sequence > self.last_acked_sequence:
            self.last_acked_sequence = sequence
        return self.last_acked_sequence

    def adjust_sequences_due_to_failed_batch(self, base_sequence: int, record_count: int) -> None:
        """Mirrors TxnPartitionEntry#adjustSequencesDueToFailedBatch.

        Kafka calls it (through TxnPartitionMap) only for a transactional producer: an idempotent
        one bumps its epoch instead (TransactionManager#handleFailedBatch).
        1. The next sequence goes back by the failed batch's record count. 2. The in-flight
        batches after it move back by as much (their id and epoch unchanged).
        """
        if self.next_sequence - record_count < 0:
            raise IllegalStateException(f"Sequence number for partition {self.topic_partition} is going to become "
                                        f"negative: {self.next_sequence - record_count}")
        self.next_sequence -= record_count
        for batch in list(self.inflight_batches_by_sequence):
            if batch.base_sequence < base_sequence:
                continue
            new_sequence = batch.base_sequence - record_count
            if new_sequence < 0:
                raise IllegalStateException(f"Sequence number for batch with sequence {batch.base_sequence} for partition "
                                            f"{self.topic_partition} is going to become negative: {new_sequence}")
            batch.reset_producer_state(batch.producer_id, batch.producer_epoch, new_sequence)
        self.inflight_batches_by_sequence.sort(key=_batch_order)


class TransactionManager:
    """Mirrors org.apache.kafka.clients.producer.internals.TransactionManager (idempotence only)."""

    def __init__(self, client_id: str) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        # TxnPartitionMap: one entry per partition written to.
        self.txn_partition_map: dict[TopicPartition, TxnPartitionEntry] = {}
        # Partitions with a batch that expired after being sent, mapped to the sequence right
        # after it: no new batch of theirs is drained until the in-flight ones resolve it.
        self.partitions_with_unresolved_sequences: dict[TopicPartition, int] = {}
        self.partitions_to_rewrite_sequences: set[TopicPartition] = set()
        self.epoch_bump_required = False
        # State.FATAL_ERROR: the error the producer cannot go on after (None: no fatal error).
        self.last_error: BaseException | None = None
        self.fatal_error = False
        self._log = client_logger(client_id=client_id)

    # -- error state --------------------------------------------------------------------------

    def has_fatal_error(self) -> bool:
        """Mirrors TransactionManager#hasFatalError."""
        return self.fatal_error

    def transition_to_fatal_error(self, exc: BaseException) -> None:
        """Mirrors TransactionManager#transitionToFatalError."""
        self._log.error("producer_fatal_error", error=type(exc).__name__)
        self.fatal_error = True
        self.last_error = exc

    def maybe_transition_to_error_state(self, exc: BaseException) -> None:
        """Mirrors TransactionManager#maybeTransitionToErrorState for an idempotent producer.

        Authorization failures, a fenced producer and an unsupported version are fatal: the
        producer sends nothing more (the Sender fails every record from then on).
        """
        if isinstance(exc, (ClusterAuthorizationException, TransactionalIdAuthorizationException,
                            ProducerFencedException, UnsupportedVersionException)):
            self.transition_to_fatal_error(exc)

    # -- producer id and epoch ----------------------------------------------------------------

    def has_producer_id(self) -> bool:
        """Mirrors TransactionManager#hasProducerId."""
        return self.producer_id != NO_PRODUCER_ID

    def producer_id_and_epoch(self, tp: TopicPartition | None = None) -> tuple[int, int]:
        """Mirrors TransactionManager#producerIdAndEpoch: the producer's, or (given a partition) the one its sequences belong to."""
        if tp is not None:
            return self.get_or_create(tp).producer_id_and_epoch
        return (self.producer_id, self.producer_epoch)

    def set_producer_id_and_epoch(self, producer_id: int, producer_epoch: int) -> None:
        """Mirrors TransactionManager#setProducerIdAndEpoch (from an InitProducerId answer)."""
        self.producer_id, self.producer_epoch = producer_id, producer_epoch
        self._log.info("producer_id_set", producer_id=producer_id, producer_epoch=producer_epoch)

    def reset_idempotent_producer_id(self) -> None:
        """Mirrors TransactionManager#resetIdempotentProducerId: forget the id; the Sender asks InitProducerId again."""
        self.set_producer_id_and_epoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    def reset_sequence_for_partition(self, tp: TopicPartition) -> None:
        """Mirrors TransactionManager#resetSequenceForPartition: forget the partition's sequences."""
        self.txn_partition_map.pop(tp, None)
        self.partitions_with_unresolved_sequences.pop(tp, None)

    def reset_sequence_numbers(self) -> None:
        """Mirrors TransactionManager#resetSequenceNumbers: forget every partition's sequences."""
        self.txn_partition_map.clear()
        self.partitions_with_unresolved_sequences.clear()

    def request_epoch_bump_for_partition(self, tp: TopicPartition) -> None:
        """Mirrors TransactionManager#requestEpochBumpForPartition."""
        self.epoch_bump_required = True
        self.partitions_to_rewrite_sequences.add(tp)

    def bump_idempotent_producer_epoch(self) -> None:
        """Mirrors TransactionManager#bumpIdempotentProducerEpoch.

        1. The epoch goes up by one, under the same producer id; an exhausted epoch forgets
        the id instead. 2. The partitions that asked for the bump renumber their in-flight
        batches from sequence 0 under the new id and epoch, and are no longer unresolved.
        """
        if self.producer_epoch == SHORT_MAX_VALUE:
            self.reset_idempotent_producer_id()
        else:
            self.set_producer_id_and_epoch(self.producer_id, self.producer_epoch + 1)
        for tp in sorted(self.partitions_to_rewrite_sequences):
            entry = self.txn_partition_map.get(tp)
            if entry is None:
                raise IllegalStateException(f"Trying to get txnPartitionEntry for {tp}, but it was never set for this partition.")
            entry.start_sequences_at_beginning(self.producer_id, self.producer_epoch)
            self.partitions_with_unresolved_sequences.pop(tp, None)
        self.partitions_to_rewrite_sequences.clear()
        self.epoch_bump_required = False

    def bump_idempotent_epoch_and_reset_id_if_needed(self) -> None:
        """Mirrors TransactionManager#bumpIdempotentEpochAndResetIdIfNeeded.

        A requested bump happens now; with no producer id afterwards the Sender sends
        InitProducerId before it drains anything (Sender#runOnce checks ``has_producer_id``).
        """
        if self.epoch_bump_required:
            self.bump_idempotent_producer_epoch()

    # -- sequences ----------------------------------------------------------------------------

    def get_or_create(self, tp: TopicPartition) -> TxnPartitionEntry:
        """Mirrors org.apache.kafka.clients.producer.internals.TxnPartitionMap#getOrCreate."""
        entry = self.txn_partition_map.get(tp)
        if entry is None:
            entry = self.txn_partition_map[tp] = TxnPartitionEntry(tp)
        return entry

    def sequence_number(self, tp: TopicPartition) -> int:
        """Mirrors TransactionManager#sequenceNumber: the base sequence of the partition's next batch."""
        return self.get_or_create(tp).next_sequence

    def increment_sequence_number(self, tp: TopicPartition, increment: int) -> None:
        """Mirrors TransactionManager#incrementSequenceNumber (wrapping at Integer.MAX_VALUE)."""
        self.get_or_create(tp).increment_sequence(increment)

    def last_acked_sequence(self, tp: TopicPartition) -> int | None:
        """Mirrors TransactionManager#lastAckedSequence (None: nothing acknowledged)."""
        entry = self.txn_partition_map.get(tp)
        if entry is None or entry.last_acked_sequence == NO_LAST_ACKED_SEQUENCE_NUMBER:
            return None
        return entry.last_acked_sequence

    def last_acked_offset(self, tp: TopicPartition) -> int | None:
        """Mirrors TransactionManager#lastAckedOffset (None: nothing acknowledged)."""
        entry = self.txn_partition_map.get(tp)
        return None if entry is None or entry.last_acked_offset == INVALID_OFFSET else entry.last_acked_offset

    def is_next_sequence(self, tp: TopicPartition, sequence: int) -> bool:
        """Mirrors TransactionManager#isNextSequence: the batch right after the last acknowledged one."""
        last = self.last_acked_sequence(tp)
        return sequence - (NO_LAST_ACKED_SEQUENCE_NUMBER if last is None else last) == 1

    def has_inflight_batches(self, tp: TopicPartition) -> bool:
        """Mirrors TransactionManager#hasInflightBatches."""
        return self.get_or_create(tp).has_inflight_batches()

    def has_stale_producer_id_and_epoch(self, tp: TopicPartition) -> bool:
        """Mirrors TransactionManager#hasStaleProducerIdAndEpoch."""
        return self.get_or_create(tp).producer_id_and_epoch != (self.producer_id, self.producer_epoch)

    def maybe_update_producer_id_and_epoch(self, tp: TopicPartition) -> None:
        """Mirrors TransactionManager#maybeUpdateProducerIdAndEpoch.

        0. Nothing changes in the fatal state. 1. A partition whose sequences belong to an older
        id or epoch starts again at 0 under the current one, once nothing of it is in flight.
        """
        if self.has_fatal_error():
            return
        if self.has_stale_producer_id_and_epoch(tp) and not self.has_inflight_batches(tp):
            self.get_or_create(tp).start_sequences_at_beginning(self.producer_id, self.producer_epoch)

    def add_in_flight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TransactionManager#addInFlightBatch (only a batch with a sequence can be tracked)."""
        if not batch.has_sequence():
            raise IllegalStateException(f"Can't track batch for partition {batch.topic_partition} when sequence is not set.")
        self.get_or_create(batch.topic_partition).add_inflight_batch(batch)

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TransactionManager#removeInFlightBatch."""
        if self.has_inflight_batches(batch.topic_partition):
            self.get_or_create(batch.topic_partition).remove_in_flight_batch(batch)

    def first_in_flight_sequence(self, tp: TopicPartition) -> int:
        """Mirrors TransactionManager#firstInFlightSequence (NO_SEQUENCE, -1: none in flight)."""
        batch = self.next_batch_by_sequence(tp)
        return NO_SEQUENCE if batch is None else batch.base_sequence

    def next_batch_by_sequence(self, tp: TopicPartition) -> ProducerBatch | None:
        """Mirrors TransactionManager#nextBatchBySequence: the partition's first batch in flight."""
        return self.get_or_create(tp).next_batch_by_sequence()

    # -- unresolved sequences -----------------------------------------------------------------

    def has_unresolved_sequences(self) -> bool:
        """Mirrors TransactionManager#hasUnresolvedSequences."""
        return bool(self.partitions_with_unresolved_sequences)

    def has_unresolved_sequence(self, tp: TopicPartition) -> bool:
        """Mirrors TransactionManager#hasUnresolvedSequence."""
        return tp in self.partitions_with_unresolved_sequences

    def mark_sequence_unresolved(self, batch: ProducerBatch) -> None:
        """Mirrors TransactionManager#markSequenceUnresolved: remember the sequence after the expired batch (the highest)."""
        next_sequence = batch.last_sequence() + 1
        tp = batch.topic_partition
        self.partitions_with_unresolved_sequences[tp] = max(self.partitions_with_unresolved_sequences.get(tp, next_sequence),
                                                            next_sequence)
        self._log.debug("sequence_unresolved", topic_partition=str(tp),
                        next_sequence=self.partitions_with_unresolved_sequences[tp])

    def maybe_resolve_sequences(self) -> None:
        """Mirrors TransactionManager#maybeResolveSequences.

        For each unresolved partition with nothing left in flight: 1. the last acknowledged
        sequence is right before the next one to hand out: a later batch succeeded, so the
        expired one was written; resolved. 2. Otherwise the sequences have a gap: bump the
        epoch for the partition. Either way it is no longer unresolved.
        """
        for tp in list(self.partitions_with_unresolved_sequences):
            if self.has_inflight_batches(tp):
                continue
            if not self.is_next_sequence(tp, self.sequence_number(tp)):
                last = self.last_acked_sequence(tp)
                self._log.info("unresolved_sequence_epoch_bump", topic_partition=str(tp),
                               last_acked_sequence=NO_LAST_ACKED_SEQUENCE_NUMBER if last is None else last,
                               next_sequence=self.sequence_number(tp))
                self.request_epoch_bump_for_partition(tp)
            del self.partitions_with_unresolved_sequences[tp]

    def is_next_sequence_for_unresolved_partition(self, tp: TopicPartition, sequence: int) -> bool:
        """Mirrors TransactionManager#isNextSequenceForUnresolvedPartition: the batch right after the expired one."""
        return self.has_unresolved_sequence(tp) and sequence == self.partitions_with_unresolved_sequences[tp]

    # -- outcomes -----------------------------------------------------------------------------

    def handle_completed_batch(self, batch: ProducerBatch, base_offset: int) -> None:
        """Mirrors TransactionManager#handleCompletedBatch: remember the last sequence and offset acknowledged.

        1. The last acknowledged sequence only moves forward (and only for a partition still
        tracked: a reset forgot it). 2. So does the last acknowledged offset, when the answer
        had one (TxnPartitionMap#updateLastAckedOffset tracks the partition again if needed).
        3. The batch is no longer in flight.
        """
        entry = self.txn_partition_map.get(batch.topic_partition)
        if entry is not None:
            entry.maybe_update_last_acked_sequence(batch.last_sequence())
        if base_offset != INVALID_OFFSET:
            last_offset = base_offset + batch.record_count - 1
            entry = self.get_or_create(batch.topic_partition)
            if last_offset > entry.last_acked_offset:
                entry.last_acked_offset = last_offset
        self.remove_in_flight_batch(batch)

    def handle_failed_batch(self, batch: ProducerBatch, exc: BaseException, adjust_sequence_numbers: bool) -> None:
        """Mirrors TransactionManager#handleFailedBatch for an idempotent producer.

        0. A fatal error puts the producer in its fatal state (and nothing else is done).
        1. The batch is no longer in flight. 2. A sequence gap the leader saw, or a producer id
        it no longer knows (UnknownProducerIdException is an OutOfOrderSequenceException): bump
        the epoch for the partition. 3. Any other failure of a batch that could still have been
        retried leaves a gap in the sequences: bump the epoch too. (Kafka's separate
        UnknownProducerId branch and its sequence adjustment only matter to a transactional producer.)
        """
        self.maybe_transition_to_error_state(exc)
        self.remove_in_flight_batch(batch)
        if self.has_fatal_error():
            return
        tp = batch.topic_partition
        if isinstance(exc, OutOfOrderSequenceException):
            self._log.warning("out_of_order_sequence", topic_partition=str(tp), producer_id=batch.producer_id,
                              producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence)
            self.request_epoch_bump_for_partition(tp)
        elif adjust_sequence_numbers:
            self.request_epoch_bump_for_partition(tp)

    def can_retry(self, error: Errors, log_start_offset: int, batch: ProducerBatch) -> bool:
        """Mirrors TransactionManager#canRetry for an idempotent producer.

        1. UNKNOWN_PRODUCER_ID: retry as is while the log start offset is unknown or the batch
        was renumbered since it was sent; otherwise (the log's head was removed, or not) retry
        under a bumped epoch. 2. OUT_OF_ORDER_SEQUENCE_NUMBER with no unresolved sequence: a
        batch that is not the next one to be acknowledged (or was renumbered) just retries: an
        earlier batch failed. 3. Otherwise it is retried too, under a bumped epoch when the gap
        is real: no unresolved sequence, or the batch right after the expired one. 4. Any other
        error: retry what is retriable.
        """
        tp = batch.topic_partition
        if error is Errors.UNKNOWN_PRODUCER_ID:
            if log_start_offset == -1:
                return True
            if batch.sequence_has_been_reset():
                return True
            last_offset = self.last_acked_offset(tp)
            if (NO_LAST_ACKED_SEQUENCE_NUMBER if last_offset is None else last_offset) < log_start_offset:
                self.request_epoch_bump_for_partition(tp)
                return True
            self.request_epoch_bump_for_partition(tp)
            return True
        if error is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            if not self.has_unresolved_sequence(tp) and (
                    batch.sequence_has_been_reset() or not self.is_next_sequence(tp, batch.base_sequence)):
                return True
            if not self.has_unresolved_sequence(tp) or self.is_next_sequence_for_unresolved_partition(tp, batch.base_sequence):
                self.request_epoch_bump_for_partition(tp)
            return True
        return isinstance(error.exception(), RetriableException)
