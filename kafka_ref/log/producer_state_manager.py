"""Per-partition state of idempotent producers: epochs, sequences, the last few batches.

Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager, ProducerStateEntry,
ProducerAppendInfo and BatchMetadata (Kafka 3.7), for idempotent (non-transactional)
producers. A batch written by an idempotent producer carries its producer id, epoch and the
sequence number of its first record. The leader refuses a batch whose epoch is older than the
last one seen (INVALID_PRODUCER_EPOCH) or whose first sequence does not follow the last one
written (OUT_OF_ORDER_SEQUENCE_NUMBER), and answers a retried batch that is already in the log
with the offsets it was written at instead of writing it again (duplicate detection over the
last five batches of each producer). Followers apply the same state without the checks, so a
new leader already knows every producer.

Kafka snapshots this state to disk and reloads it from the snapshot plus the log tail. Our logs
live in memory, so the state is rebuilt from the log's batches whenever the log is loaded or
truncated (``ProducerStateManager#truncateAndReload`` reduced to "reload from the data").
Transactions (control batches, the last stable offset) are not modelled: kafka_ref's brokers
do not advertise the transactional APIs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafka_ref.common.errors import InvalidProducerEpochException, OutOfOrderSequenceException
from kafka_ref.common.records.constants import NO_PRODUCER_EPOCH, NO_SEQUENCE
from kafka_ref.common.records.record import decrement_sequence
from kafka_ref.common.records.record_batch import RecordBatch
from kafka_ref.common.topic_partition import TopicPartition

NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Mirrors org.apache.kafka.storage.internals.log.BatchMetadata: one written batch of a producer."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.BatchMetadata#firstSeq (sequences wrap at Integer.MAX_VALUE)."""
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    last_timestamp: int = -1
    batch_metadata: deque = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#addBatch: a new epoch forgets the old epoch's batches."""
        # 1. A new epoch starts a fresh batch history.
        if self.producer_epoch != producer_epoch:
            self.batch_metadata.clear()
            self.producer_epoch = producer_epoch
        # 2. Keep the last five batches.
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def find_duplicate_batch(self, batch: RecordBatch) -> BatchMetadata | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#findDuplicateBatch: the same epoch and exact sequence range."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        first, last = batch.base_sequence, batch.last_sequence
        for metadata in self.batch_metadata:
            if metadata.first_seq == first and metadata.last_seq == last:
                return metadata
        return None


class ProducerStateManager:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager (idempotent producers)."""

    def __init__(self, topic_partition: TopicPartition) -> None:
        self.topic_partition = topic_partition
        self.producers: dict[int, ProducerStateEntry] = {}

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#lastEntry."""
        return self.producers.get(producer_id)

    def find_duplicate(self, batch: RecordBatch) -> BatchMetadata | None:
        """The already-written batch this one repeats, if any (UnifiedLog#analyzeAndValidateProducerState)."""
        entry = self.producers.get(batch.producer_id)
        return None if entry is None else entry.find_duplicate_batch(batch)

    def validate(self, batches: Iterable[RecordBatch]) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#maybeValidateDataBatch for a client append, before anything is written.

        Follows Kafka 3.7. Batches of one request are checked against the state as each earlier
        batch of the same request would leave it. Raises InvalidProducerEpochException or
        OutOfOrderSequenceException; the caller writes nothing then.
        """
        pending: dict[int, tuple[int, int]] = {}  # producer id -> (epoch, last seq) after earlier batches
        for batch in batches:
            if batch.producer_id < 0:
                continue
            entry = self.producers.get(batch.producer_id)
            current_epoch = entry.producer_epoch if entry is not None else NO_PRODUCER_EPOCH
            current_last_seq = entry.last_seq if entry is not None else NO_SEQUENCE
            epoch, last_seq = pending.get(batch.producer_id, (current_epoch, current_last_seq))
            offset = batch.base_offset
            # 1. Epoch: an older epoch than the last seen is a zombie.
            if batch.producer_epoch < epoch:
                raise InvalidProducerEpochException(
                    f"Epoch of producer {batch.producer_id} at offset {offset} in {self.topic_partition} is "
                    f"{batch.producer_epoch}, which is smaller than the last seen epoch {epoch}")
            first_seq = batch.base_sequence
            # 2. Sequence: a new epoch must start at 0 (unless the producer had no epoch yet) ...
            if batch.producer_epoch != epoch:
                if first_seq != 0 and epoch != NO_PRODUCER_EPOCH:
                    raise OutOfOrderSequenceException(
                        f"Invalid sequence number for new epoch of producer {batch.producer_id} at offset {offset} "
                        f"in partition {self.topic_partition}: {batch.producer_epoch} (request epoch), {first_seq} "
                        f"(seq. number), {epoch} (current producer epoch)")
            # 3. ... and within an epoch each batch follows the last one (any sequence is
            #    accepted when the producer's records are gone from the log).
            elif not (current_epoch == NO_PRODUCER_EPOCH or _in_sequence(last_seq, first_seq)):
                raise OutOfOrderSequenceException(
                    f"Out of order sequence number for producer {batch.producer_id} at offset {offset} in "
                    f"partition {self.topic_partition}: {first_seq} (incoming seq. number), {last_seq} "
                    f"(current end sequence number)")
            pending[batch.producer_id] = (batch.producer_epoch, batch.last_sequence)

    def update(self, batches: Iterable[RecordBatch]) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#appendDataBatch with ProducerStateManager#update, for written batches."""
        for batch in batches:
            if batch.producer_id < 0 or batch.is_control_batch:
                continue
            entry = self.producers.get(batch.producer_id)
            if entry is None:
                entry = self.producers[batch.producer_id] = ProducerStateEntry(batch.producer_id)
            entry.add_batch(batch.producer_epoch, batch.last_sequence, batch.last_offset,
                            batch.last_offset - batch.base_offset, batch.max_timestamp)

    def reload(self, batches: Iterable[RecordBatch]) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#truncateAndReload: forget everything, replay the log's batches."""
        self.producers.clear()
        self.update(batches)


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#inSequence."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)
