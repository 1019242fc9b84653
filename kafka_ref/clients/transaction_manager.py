"""The idempotent producer's state: its producer id and epoch, and a sequence number per partition.

Mirrors the idempotent (non-transactional) part of
org.apache.kafka.clients.producer.internals.TransactionManager (Kafka 3.x). The Sender asks
for a producer id with InitProducerId before it drains anything; each drained batch gets the
id, the epoch and the partition's next sequence number, written into the batch once and kept
across retries, so the partition leader can answer a retried batch it already wrote with its
original offsets instead of writing it twice (ProducerStateManager's duplicate check). An
OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID answer fails the batch and makes the
producer start again under a new producer id with every sequence at 0 (KIP-360's epoch bump;
kafka_ref's coordinator answers a bump with a new id, see TransactionCoordinator).
Transactions are not modelled.
"""

from __future__ import annotations

from kafka_ref.clients.client_metadata import client_logger
from kafka_ref.common.errors import OutOfOrderSequenceException, UnknownProducerIdException
from kafka_ref.common.topic_partition import TopicPartition

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


class TransactionManager:
    """Mirrors org.apache.kafka.clients.producer.internals.TransactionManager (idempotence only)."""

    def __init__(self, client_id: str) -> None:
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        # TxnPartitionMap: the next sequence to hand out and the last one acknowledged.
        self.next_sequence: dict[TopicPartition, int] = {}
        self.last_acked_sequence: dict[TopicPartition, int] = {}
        self.epoch_bump_required = False
        self._log = client_logger(client_id=client_id)

    def has_producer_id(self) -> bool:
        """Mirrors TransactionManager#hasProducerId."""
        return self.producer_id != NO_PRODUCER_ID

    def set_producer_id_and_epoch(self, producer_id: int, producer_epoch: int) -> None:
        """Mirrors TransactionManager#setProducerIdAndEpoch (from an InitProducerId answer)."""
        self.producer_id, self.producer_epoch = producer_id, producer_epoch
        self._log.info("producer_id_set", producer_id=producer_id, producer_epoch=producer_epoch)

    def sequence_number(self, tp: TopicPartition) -> int:
        """Mirrors TransactionManager#sequenceNumber: the base sequence of the partition's next batch."""
        return self.next_sequence.get(tp, 0)

    def increment_sequence_number(self, tp: TopicPartition, increment: int) -> None:
        """Mirrors TransactionManager#incrementSequenceNumber (wrapping at Integer.MAX_VALUE)."""
        self.next_sequence[tp] = (self.sequence_number(tp) + increment) & 0x7FFFFFFF

    def handle_completed_batch(self, tp: TopicPartition, base_sequence: int, record_count: int) -> None:
        """Mirrors TransactionManager#handleCompletedBatch: remember the last sequence acknowledged."""
        last = base_sequence + record_count - 1
        if last > self.last_acked_sequence.get(tp, -1):
            self.last_acked_sequence[tp] = last

    def handle_failed_batch(self, tp: TopicPartition, exc: BaseException) -> None:
        """Mirrors TransactionManager#handleFailedBatch for an idempotent producer.

        1. A sequence the leader refused, or a producer id it no longer knows, means the
        producer's state and the leader's disagree: start again under a new id (epoch bump).
        2. Any other error leaves the state as it is.
        """
        if isinstance(exc, (OutOfOrderSequenceException, UnknownProducerIdException)):
            self._log.warning("producer_epoch_bump_requested", topic_partition=str(tp), error=type(exc).__name__)
            self.epoch_bump_required = True

    def bump_idempotent_epoch_and_reset_id_if_needed(self) -> None:
        """Mirrors TransactionManager#bumpIdempotentEpochAndResetIdIfNeeded: after a requested bump,
        forget the id and every sequence, so the Sender asks InitProducerId again before sending."""
        if self.epoch_bump_required:
            self.epoch_bump_required = False
            self.producer_id, self.producer_epoch = NO_PRODUCER_ID, NO_PRODUCER_EPOCH
            self.next_sequence.clear()
            self.last_acked_sequence.clear()
