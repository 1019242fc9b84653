"""The idempotent producer's state: its producer id and epoch, and a sequence number per partition.

Mirrors the idempotent (non-transactional) part of
org.apache.kafka.clients.producer.internals.TransactionManager and TxnPartitionMap /
TxnPartitionEntry (Kafka 3.8). The Sender asks for a producer id with InitProducerId before it
drains anything; each drained batch gets the id, the epoch and the partition's next sequence
number, is tracked as in flight until it completes or fails, and keeps its stamp across
retries, so the partition leader can answer a retried batch it already wrote with its original
offsets instead of writing it twice (ProducerStateManager's duplicate check).

When the leader and the producer disagree about sequences (OUT_OF_ORDER_SEQUENCE_NUMBER,
UNKNOWN_PRODUCER_ID) the producer bumps its epoch locally (KIP-360): same producer id, epoch
+ 1, and the partition's in-flight batches are renumbered from sequence 0 under the new epoch
and retried (``can_retry``); only an exhausted epoch (Short.MAX_VALUE) makes it ask for a new
producer id. A batch failing with an authorization error, a fenced producer or an unsupported
version puts the manager in its fatal state: the Sender then fails every record with that error.
Transactions, and the unresolved-sequence bookkeeping Kafka keeps for batches that expire after
being sent, are not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_ref.clients.client_metadata import client_logger
from kafka_ref.common.errors import (
    ClusterAuthorizationException,
    Errors,
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
SHORT_MAX_VALUE = 32767


class TxnPartitionEntry:
    """Mirrors org.apache.kafka.clients.producer.internals.TxnPartitionEntry.

    One partition's view: the producer id and epoch its sequences belong to, the next sequence
    to hand out, the last sequence and offset acknowledged, and the batches in flight (ordered
    by base sequence).
    """

    def __init__(self, tp: TopicPartition) -> None:
        self.topic_partition = tp
        self.producer_id_and_epoch = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
        self.next_sequence = 0
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER
        self.last_acked_offset = -1
        self.inflight_batches_by_sequence: list[ProducerBatch] = []

    def add_inflight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TxnPartitionEntry#addInflightBatch."""
        self.inflight_batches_by_sequence.append(batch)
        self.inflight_batches_by_sequence.sort(key=lambda b: b.base_sequence)

    def remove_inflight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TxnPartitionEntry#removeInFlightBatch."""
        if batch in self.inflight_batches_by_sequence:
            self.inflight_batches_by_sequence.remove(batch)

    def start_sequences_at_beginning(self, producer_id: int, producer_epoch: int) -> None:
        """Mirrors TxnPartitionEntry#startSequencesAtBeginning.

        1. Renumber the in-flight batches from 0, in sequence order, under the given id and
        epoch. 2. The partition's next sequence follows them; nothing is acknowledged yet.
        """
        sequence = 0
        for batch in list(self.inflight_batches_by_sequence):
            batch.reset_producer_state(producer_id, producer_epoch, sequence)
            sequence += batch.record_count
        self.producer_id_and_epoch = (producer_id, producer_epoch)
        self.next_sequence = sequence
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER


class TransactionManager:
    """Mirrors org.apache.kafka.clients.producer.internals.TransactionManager (idempotence only)."""

    def __init__(self, client_id: str) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        # TxnPartitionMap: one entry per partition written to.
        self.txn_partition_map: dict[TopicPartition, TxnPartitionEntry] = {}
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

    def maybe_transition_to_error_state(self, exc: BaseException) -> None:
        """Mirrors TransactionManager#maybeTransitionToErrorState for an idempotent producer.

        Authorization failures, a fenced producer and an unsupported version are fatal: the
        producer sends nothing more (the Sender fails every record from then on).
        """
        if isinstance(exc, (ClusterAuthorizationException, TransactionalIdAuthorizationException,
                            ProducerFencedException, UnsupportedVersionException)):
            self._log.error("producer_fatal_error", error=type(exc).__name__)
            self.fatal_error = True
            self.last_error = exc

    # -- producer id and epoch ----------------------------------------------------------------

    def has_producer_id(self) -> bool:
        """Mirrors TransactionManager#hasProducerId."""
        return self.producer_id != NO_PRODUCER_ID

    def set_producer_id_and_epoch(self, producer_id: int, producer_epoch: int) -> None:
        """Mirrors TransactionManager#setProducerIdAndEpoch (from an InitProducerId answer)."""
        self.producer_id, self.producer_epoch = producer_id, producer_epoch
        self._log.info("producer_id_set", producer_id=producer_id, producer_epoch=producer_epoch)

    def reset_idempotent_producer_id(self) -> None:
        """Mirrors TransactionManager#resetIdempotentProducerId: forget the id; the Sender asks InitProducerId again."""
        self.set_producer_id_and_epoch(NO_PRODUCER_ID, NO_PRODUCER_EPOCH)

    def request_epoch_bump_for_partition(self, tp: TopicPartition) -> None:
        """Mirrors TransactionManager#requestEpochBumpForPartition."""
        self.epoch_bump_required = True
        self.partitions_to_rewrite_sequences.add(tp)

    def bump_idempotent_producer_epoch(self) -> None:
        """Mirrors TransactionManager#bumpIdempotentProducerEpoch.

        1. The epoch goes up by one, under the same producer id; an exhausted epoch forgets
        the id instead. 2. The partitions that asked for the bump renumber their in-flight
        batches from sequence 0 under the new id and epoch.
        """
        if self.producer_epoch == SHORT_MAX_VALUE:
            self.reset_idempotent_producer_id()
        else:
            self.set_producer_id_and_epoch(self.producer_id, self.producer_epoch + 1)
        for tp in sorted(self.partitions_to_rewrite_sequences):
            self.get_or_create(tp).start_sequences_at_beginning(self.producer_id, self.producer_epoch)
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
        entry = self.get_or_create(tp)
        entry.next_sequence = (entry.next_sequence + increment) & 0x7FFFFFFF

    def last_acked_sequence(self, tp: TopicPartition) -> int | None:
        """Mirrors TransactionManager#lastAckedSequence (None: nothing acknowledged)."""
        entry = self.txn_partition_map.get(tp)
        if entry is None or entry.last_acked_sequence == NO_LAST_ACKED_SEQUENCE_NUMBER:
            return None
        return entry.last_acked_sequence

    def last_acked_offset(self, tp: TopicPartition) -> int | None:
        """Mirrors TransactionManager#lastAckedOffset (None: nothing acknowledged)."""
        entry = self.txn_partition_map.get(tp)
        return None if entry is None or entry.last_acked_offset == -1 else entry.last_acked_offset

    def is_next_sequence(self, tp: TopicPartition, sequence: int) -> bool:
        """Mirrors TransactionManager#isNextSequence: the batch right after the last acknowledged one."""
        return sequence - self.get_or_create(tp).last_acked_sequence == 1

    def has_inflight_batches(self, tp: TopicPartition) -> bool:
        """Mirrors TransactionManager#hasInflightBatches."""
        return bool(self.get_or_create(tp).inflight_batches_by_sequence)

    def has_stale_producer_id_and_epoch(self, tp: TopicPartition) -> bool:
        """Mirrors TransactionManager#hasStaleProducerIdAndEpoch."""
        return self.get_or_create(tp).producer_id_and_epoch != (self.producer_id, self.producer_epoch)

    def maybe_update_producer_id_and_epoch(self, tp: TopicPartition) -> None:
        """Mirrors TransactionManager#maybeUpdateProducerIdAndEpoch.

        A partition whose sequences belong to an older id or epoch starts again at 0 under the
        current one, once nothing of it is in flight.
        """
        if self.has_stale_producer_id_and_epoch(tp) and not self.has_inflight_batches(tp):
            self.get_or_create(tp).start_sequences_at_beginning(self.producer_id, self.producer_epoch)

    def add_in_flight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TransactionManager#addInFlightBatch."""
        self.get_or_create(batch.topic_partition).add_inflight_batch(batch)

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        """Mirrors TransactionManager#removeInFlightBatch."""
        self.get_or_create(batch.topic_partition).remove_inflight_batch(batch)

    def first_in_flight_sequence(self, tp: TopicPartition) -> int:
        """Mirrors TransactionManager#firstInFlightSequence (-1: none in flight)."""
        batches = self.get_or_create(tp).inflight_batches_by_sequence
        return batches[0].base_sequence if batches else -1

    # -- outcomes -----------------------------------------------------------------------------

    def handle_completed_batch(self, batch: ProducerBatch, base_offset: int) -> None:
        """Mirrors TransactionManager#handleCompletedBatch: remember the last sequence and offset acknowledged."""
        entry = self.get_or_create(batch.topic_partition)
        # 1. The last acknowledged sequence only moves forward.
        last = batch.base_sequence + batch.record_count - 1
        if last > entry.last_acked_sequence:
            entry.last_acked_sequence = last
        # 2. So does the last acknowledged offset (when the answer had one).
        if base_offset != -1:
            entry.last_acked_offset = max(entry.last_acked_offset, base_offset + batch.record_count - 1)
        # 3. The batch is no longer in flight.
        self.remove_in_flight_batch(batch)

    def handle_failed_batch(self, batch: ProducerBatch, exc: BaseException, adjust_sequence_numbers: bool) -> None:
        """Mirrors TransactionManager#handleFailedBatch for an idempotent producer.

        0. A fatal error puts the producer in its fatal state (and nothing else is done).
        1. The batch is no longer in flight. 2. A sequence gap the leader saw, or a producer id
        it no longer knows (UnknownProducerIdException is an OutOfOrderSequenceException): bump
        the epoch for the partition. 3. Any other failure of a batch that could still have been
        retried leaves a gap in the sequences: bump the epoch too. (Kafka's separate
        UnknownProducerId branch only matters to a transactional producer.)
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

        1. UNKNOWN_PRODUCER_ID: retry while the log start offset is unknown or the batch was
        already renumbered; otherwise retry under a bumped epoch. 2. OUT_OF_ORDER_SEQUENCE_NUMBER:
        a batch that is not the next one to be acknowledged (or was renumbered) just retries;
        the next one means a real gap: retry under a bumped epoch. 3. Otherwise retry what is
        retriable.
        """
        tp = batch.topic_partition
        if error is Errors.UNKNOWN_PRODUCER_ID:
            if log_start_offset == -1 or batch.sequence_has_been_reset():
                return True
            self.request_epoch_bump_for_partition(tp)
            return True
        if error is Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            if batch.sequence_has_been_reset() or not self.is_next_sequence(tp, batch.base_sequence):
                return True
            self.request_epoch_bump_for_partition(tp)
            return True
        return isinstance(error.exception(), RetriableException)
