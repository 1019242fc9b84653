"""Per-partition state of idempotent and transactional producers.

Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager, ProducerStateEntry,
ProducerAppendInfo, BatchMetadata, TxnMetadata, CompletedTxn, VerificationStateEntry and
ProducerStateManagerConfig (Kafka 3.8). A batch written by an idempotent producer carries its
producer id, epoch and the sequence number of its first record. The leader refuses a batch whose
epoch is older than the last one seen (INVALID_PRODUCER_EPOCH) or whose first sequence does not
follow the last one written (OUT_OF_ORDER_SEQUENCE_NUMBER), and answers a retried batch that is
already in the log with the offsets it was written at instead of writing it again (duplicate
detection over the last five batches of each producer). Followers apply the same state without
the sequence checks, so a new leader already knows every producer.

Transactions: a transactional data batch opens a transaction for its producer (its first
offset is kept as the producer's ``current_txn_first_offset`` and in the ongoing transactions);
a COMMIT or ABORT marker (a control batch) closes it, and the transaction stays "unreplicated"
until the high watermark passes its marker. The first unstable offset is the lowest first
offset of those transactions. A non-transactional batch while a transaction is open is
INVALID_TXN_STATE; a marker from an older coordinator epoch is TRANSACTION_COORDINATOR_FENCED.

What this model leaves out: Kafka snapshots this state to ``<offset>.snapshot`` files and reloads
it from the latest snapshot plus the log tail. Our logs live in memory and keep no snapshots, so
``truncate_and_reload`` always takes Kafka's "no snapshot" branch and the log replays its batches
(``UnifiedLog#rebuildProducerState`` reduced to "replay the data"). kafka_ref's UnifiedLog keeps
its last stable offset at the high watermark (its brokers do not serve the transactional APIs)
and does not schedule the periodic producer id expiration check.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_ref.common.errors import (
    InvalidProducerEpochException,
    InvalidTxnStateException,
    OutOfOrderSequenceException,
    TransactionCoordinatorFencedException,
)
from kafka_ref.common.records.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP
from kafka_ref.common.records.end_transaction_marker import ControlRecordType, EndTransactionMarker
from kafka_ref.common.records.record import decrement_sequence
from kafka_ref.common.records.record_batch import RecordBatch
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import AppendOrigin, LogOffsetMetadata

NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 2**31 - 1
#: TransactionLogConfigs.PRODUCER_ID_EXPIRATION_MS_DEFAULT (producer.id.expiration.ms, one day).
PRODUCER_ID_EXPIRATION_MS_DEFAULT = 86_400_000
#: TransactionStateManagerConfigs.TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT (transaction.max.timeout.ms).
TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT = 900_000
#: ProducerStateManager.LATE_TRANSACTION_BUFFER_MS.
LATE_TRANSACTION_BUFFER_MS = 5 * 60 * 1000


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
        """Mirrors org.apache.kafka.storage.internals.log.BatchMetadata#firstOffset."""
        return self.last_offset - self.offset_delta


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """Mirrors org.apache.kafka.storage.internals.log.CompletedTxn: a transaction closed by its marker (offsets inclusive)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(slots=True)
class TxnMetadata:
    """Mirrors org.apache.kafka.storage.internals.log.TxnMetadata: an ongoing (or unreplicated) transaction."""

    producer_id: int
    first_offset: LogOffsetMetadata
    last_offset: int | None = None


class VerificationStateEntry:
    """Mirrors org.apache.kafka.storage.internals.log.VerificationStateEntry.

    Kept from a verified AddPartitionsToTxn until the producer writes: it blocks a sequence
    higher than the lowest one seen. The verification guard is a fresh object, compared by
    identity as Kafka's VerificationGuard is.
    """

    __slots__ = ("timestamp", "verification_guard", "lowest_sequence", "epoch")

    def __init__(self, timestamp: int, sequence: int, epoch: int) -> None:
        self.timestamp = timestamp
        self.verification_guard = object()
        self.lowest_sequence = sequence
        self.epoch = epoch

    def maybe_update_lowest_sequence_and_epoch(self, incoming_sequence: int, incoming_epoch: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.VerificationStateEntry#maybeUpdateLowestSequenceAndEpoch."""
        # 1. A lower sequence of the same epoch lowers the bar.
        if incoming_epoch == self.epoch and incoming_sequence < self.lowest_sequence:
            self.lowest_sequence = incoming_sequence
        # 2. A newer epoch resets it to the incoming sequence.
        if incoming_epoch > self.epoch:
            self.epoch = incoming_epoch
            self.lowest_sequence = incoming_sequence


@dataclass(slots=True)
class ProducerStateManagerConfig:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManagerConfig (both settings are dynamic)."""

    producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS_DEFAULT
    transaction_verification_enabled: bool = True


class ProducerStateEntry:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry."""

    __slots__ = ("producer_id", "producer_epoch", "coordinator_epoch", "last_timestamp", "current_txn_first_offset",
                 "batch_metadata")

    def __init__(
        self,
        producer_id: int,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        coordinator_epoch: int = -1,
        last_timestamp: int = NO_TIMESTAMP,
        current_txn_first_offset: int | None = None,
        first_batch_metadata: BatchMetadata | None = None,
    ) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = last_timestamp
        self.current_txn_first_offset = current_txn_first_offset
        self.batch_metadata: deque[BatchMetadata] = deque(maxlen=NUM_BATCHES_TO_RETAIN)
        if first_batch_metadata is not None:
            self.batch_metadata.append(first_batch_metadata)

    @classmethod
    def empty(cls, producer_id: int) -> "ProducerStateEntry":
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#empty."""
        return cls(producer_id)

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#isEmpty."""
        return not self.batch_metadata

    @property
    def first_seq(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#firstSeq."""
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#lastSeq."""
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#firstDataOffset."""
        return self.batch_metadata[0].first_offset if self.batch_metadata else -1

    @property
    def last_data_offset(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#lastDataOffset."""
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#lastOffsetDelta."""
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    def with_producer_id_and_batch_metadata(self, producer_id: int,
                                            batch_metadata: BatchMetadata | None) -> "ProducerStateEntry":
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#withProducerIdAndBatchMetadata."""
        return ProducerStateEntry(producer_id, self.producer_epoch, self.coordinator_epoch, self.last_timestamp,
                                  self.current_txn_first_offset, batch_metadata)

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#addBatch: a new epoch forgets the old epoch's batches."""
        # 1. A new epoch starts a fresh batch history.
        self.maybe_update_producer_epoch(producer_epoch)
        # 2. Keep the last five batches (the deque drops the oldest).
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#maybeUpdateProducerEpoch."""
        if self.producer_epoch != producer_epoch:
            self.batch_metadata.clear()
            self.producer_epoch = producer_epoch
            return True
        return False

    def update(self, next_entry: "ProducerStateEntry") -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#update(ProducerStateEntry): take over an append's entry."""
        self._update(next_entry.producer_epoch, next_entry.coordinator_epoch, next_entry.last_timestamp,
                     next_entry.batch_metadata, next_entry.current_txn_first_offset)

    def update_for_marker(self, producer_epoch: int, coordinator_epoch: int, last_timestamp: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#update(short, int, long): a marker ends the transaction (overload)."""
        self._update(producer_epoch, coordinator_epoch, last_timestamp, (), None)

    def _update(self, producer_epoch: int, coordinator_epoch: int, last_timestamp: int,
                batch_metadata: Iterable[BatchMetadata], current_txn_first_offset: int | None) -> None:
        # 1. A new epoch forgets the batches of the old one.
        self.maybe_update_producer_epoch(producer_epoch)
        # 2. Append the new batches (the oldest fall out past five).
        self.batch_metadata.extend(batch_metadata)
        # 3. Transaction and coordinator state as the append left them.
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = current_txn_first_offset
        self.last_timestamp = last_timestamp

    def find_duplicate_batch(self, batch: RecordBatch) -> BatchMetadata | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#findDuplicateBatch: the same epoch and exact sequence range."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, batch.last_sequence)

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateEntry#batchWithSequenceRange."""
        for metadata in self.batch_metadata:
            if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                return metadata
        return None

    def __repr__(self) -> str:
        return (f"ProducerStateEntry(producer_id={self.producer_id}, producer_epoch={self.producer_epoch}, "
                f"current_txn_first_offset={self.current_txn_first_offset}, coordinator_epoch={self.coordinator_epoch}, "
                f"last_timestamp={self.last_timestamp}, batch_metadata={list(self.batch_metadata)})")


class ProducerAppendInfo:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo.

    Validates one producer's batches of an append against the state its last append left,
    and gathers the resulting entry and the transactions the append starts. Nothing reaches the
    ProducerStateManager before ``ProducerStateManager#update``.
    """

    def __init__(self, topic_partition: TopicPartition, producer_id: int, current_entry: ProducerStateEntry,
                 origin: AppendOrigin, verification_state_entry: VerificationStateEntry | None = None) -> None:
        self.topic_partition = topic_partition
        self.producer_id = producer_id
        self.current_entry = current_entry
        self.origin = origin
        self.verification_state_entry = verification_state_entry
        self.transactions: list[TxnMetadata] = []
        self.updated_entry = current_entry.with_producer_id_and_batch_metadata(producer_id, None)

    def maybe_validate_data_batch(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#maybeValidateDataBatch: sequences only for clients."""
        self.check_producer_epoch(producer_epoch, offset)
        if self.origin == AppendOrigin.CLIENT:
            self.check_sequence(producer_epoch, first_seq, offset)

    def check_producer_epoch(self, producer_epoch: int, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#checkProducerEpoch: replication only warns."""
        if producer_epoch < self.updated_entry.producer_epoch:
            # 1. An older epoch than the last seen is a zombie (INVALID_PRODUCER_EPOCH since 2.7) ...
            if self.origin != AppendOrigin.REPLICATION:
                raise InvalidProducerEpochException(
                    f"Epoch of producer {self.producer_id} at offset {offset} in {self.topic_partition} is "
                    f"{producer_epoch}, which is smaller than the last seen epoch {self.updated_entry.producer_epoch}")
            # 2. ... but a follower takes what its leader wrote (Kafka logs a warning).

    def check_sequence(self, producer_epoch: int, append_first_seq: int, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#checkSequence."""
        # 1. A verified transaction blocks sequences above the lowest one seen while verifying.
        verification = self.verification_state_entry
        if verification is not None and append_first_seq > verification.lowest_sequence:
            raise OutOfOrderSequenceException(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} in partition "
                f"{self.topic_partition}: {append_first_seq} (incoming seq. number), "
                f"{verification.lowest_sequence} (earliest seen sequence)")
        updated = self.updated_entry
        if producer_epoch != updated.producer_epoch:
            # 2. A new epoch must start at 0, unless the producer had no epoch yet.
            if append_first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceException(
                    f"Invalid sequence number for new epoch of producer {self.producer_id}at offset {offset} in "
                    f"partition {self.topic_partition}: {producer_epoch} (request epoch), {append_first_seq} "
                    f"(seq. number), {updated.producer_epoch} (current producer epoch)")
        else:
            # 3. Within an epoch each batch follows the last one: this append's last batch, else the entry's.
            if not updated.is_empty():
                current_last_seq = updated.last_seq
            elif producer_epoch == self.current_entry.producer_epoch:
                current_last_seq = self.current_entry.last_seq
            else:
                current_last_seq = NO_SEQUENCE
            # 4. Any sequence is accepted when the producer has no epoch (its records are gone).
            if not (self.current_entry.producer_epoch == NO_PRODUCER_EPOCH
                    or self.in_sequence(current_last_seq, append_first_seq)):
                raise OutOfOrderSequenceException(
                    f"Out of order sequence number for producer {self.producer_id} at offset {offset} in partition "
                    f"{self.topic_partition}: {append_first_seq} (incoming seq. number), {current_last_seq} "
                    f"(current end sequence number)")

    @staticmethod
    def in_sequence(last_seq: int, next_seq: int) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#inSequence."""
        return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)

    def append(self, batch: RecordBatch, first_offset_metadata: LogOffsetMetadata | None = None) -> CompletedTxn | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#append: a data batch or a transaction marker."""
        if batch.is_control_batch:
            # 1. A marker batch holds one record; an empty one (cleaned away) changes nothing.
            records = batch.records()
            if not records:
                return None
            record = records[0]
            marker = EndTransactionMarker.deserialize(record)
            return self.append_end_txn_marker(marker, batch.producer_epoch, batch.base_offset, record.timestamp)
        # 2. A data batch.
        if first_offset_metadata is None:
            first_offset_metadata = LogOffsetMetadata(batch.base_offset)
        self.append_data_batch(batch.producer_epoch, batch.base_sequence, batch.last_sequence, batch.max_timestamp,
                               first_offset_metadata, batch.last_offset, batch.is_transactional)
        return None

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, last_timestamp: int,
                          first_offset_metadata: LogOffsetMetadata, last_offset: int, is_transactional: bool) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#appendDataBatch."""
        first_offset = first_offset_metadata.message_offset
        # 1. Epoch (and, for clients, sequence) checks.
        self.maybe_validate_data_batch(epoch, first_seq, first_offset)
        # 2. Remember the batch.
        self.updated_entry.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp)
        current_txn_first_offset = self.updated_entry.current_txn_first_offset
        if current_txn_first_offset is not None and not is_transactional:
            # 3. Plain data while the producer's transaction is open.
            raise InvalidTxnStateException(
                f"Expected transactional write from producer {self.producer_id} at offset {first_offset_metadata} "
                f"in partition {self.topic_partition}")
        if current_txn_first_offset is None and is_transactional:
            # 4. The first transactional batch opens a transaction.
            self.updated_entry.current_txn_first_offset = first_offset
            self.transactions.append(TxnMetadata(self.producer_id, first_offset_metadata))

    def check_coordinator_epoch(self, end_txn_marker: EndTransactionMarker, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#checkCoordinatorEpoch: replication only logs."""
        if self.updated_entry.coordinator_epoch > end_txn_marker.coordinator_epoch:
            if self.origin != AppendOrigin.REPLICATION:
                raise TransactionCoordinatorFencedException(
                    f"Invalid coordinator epoch for producerId {self.producer_id} at offset {offset} in partition "
                    f"{self.topic_partition}: {end_txn_marker.coordinator_epoch} (zombie), "
                    f"{self.updated_entry.coordinator_epoch} (current)")

    def append_end_txn_marker(self, end_txn_marker: EndTransactionMarker, producer_epoch: int, offset: int,
                              timestamp: int) -> CompletedTxn | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#appendEndTxnMarker."""
        # 1. Fencing: producer epoch and coordinator epoch.
        self.check_producer_epoch(producer_epoch, offset)
        self.check_coordinator_epoch(end_txn_marker, offset)
        # 2. Only a transaction with data completes (an empty one leaves the LSO alone).
        first = self.updated_entry.current_txn_first_offset
        completed = None if first is None else CompletedTxn(
            self.producer_id, first, offset, end_txn_marker.control_type == ControlRecordType.ABORT)
        # 3. The entry takes the marker's epochs and forgets the transaction.
        self.updated_entry.update_for_marker(producer_epoch, end_txn_marker.coordinator_epoch, timestamp)
        return completed

    def to_entry(self) -> ProducerStateEntry:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#toEntry."""
        return self.updated_entry

    @property
    def started_transactions(self) -> list[TxnMetadata]:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerAppendInfo#startedTransactions."""
        return list(self.transactions)


class ProducerStateManager:
    """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager (without snapshot files)."""

    def __init__(self, topic_partition: TopicPartition, max_transaction_timeout_ms: int = TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT,
                 producer_state_manager_config: ProducerStateManagerConfig | None = None,
                 time: Time | None = None) -> None:
        self.topic_partition = topic_partition
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.producer_state_manager_config = producer_state_manager_config or ProducerStateManagerConfig()
        self.time = time
        self.producers: dict[int, ProducerStateEntry] = {}
        self.verification_states: dict[int, VerificationStateEntry] = {}
        # Ongoing transactions and completed ones whose marker is above the HW, by first offset.
        self.ongoing_txns: dict[int, TxnMetadata] = {}
        self.unreplicated_txns: dict[int, TxnMetadata] = {}
        self.oldest_txn_last_timestamp = -1
        self.last_map_offset = 0
        self.last_snap_offset = 0

    # -- producers ----------------------------------------------------------------------------

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#lastEntry."""
        return self.producers.get(producer_id)

    @property
    def active_producers(self) -> dict[int, ProducerStateEntry]:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#activeProducers (a read-only view by contract)."""
        return self.producers

    def producer_id_count(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#producerIdCount."""
        return len(self.producers)

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#isEmpty."""
        return not self.producers and not self.unreplicated_txns

    def map_end_offset(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#mapEndOffset."""
        return self.last_map_offset

    def update_map_end_offset(self, last_offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#updateMapEndOffset."""
        self.last_map_offset = last_offset

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#prepareUpdate: validation state, the manager unchanged."""
        current = self.producers.get(producer_id) or ProducerStateEntry.empty(producer_id)
        return ProducerAppendInfo(self.topic_partition, producer_id, current, origin,
                                  self.verification_states.get(producer_id))

    def update(self, append_info: ProducerAppendInfo) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#update: apply a validated append."""
        # 1. Batches without a producer never get here.
        if append_info.producer_id == NO_PRODUCER_ID:
            raise ValueError(f"Invalid producer id {append_info.producer_id} passed to update for partition"
                             f"{self.topic_partition}")
        # 2. The producer's entry takes the append's state (a new producer is added as is).
        updated_entry = append_info.to_entry()
        current = self.producers.get(append_info.producer_id)
        if current is not None:
            current.update(updated_entry)
        else:
            self.producers[append_info.producer_id] = updated_entry
        # 3. Transactions the append opened.
        for txn in append_info.transactions:
            self.ongoing_txns[txn.first_offset.message_offset] = txn
        self.update_oldest_txn_timestamp()

    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#loadProducerEntry."""
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            offset = entry.current_txn_first_offset
            self.ongoing_txns[offset] = TxnMetadata(entry.producer_id, LogOffsetMetadata(offset))

    def is_producer_expired(self, current_time_ms: int, producer_state: ProducerStateEntry) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#isProducerExpired: idle too long and no open transaction."""
        return (producer_state.current_txn_first_offset is None
                and current_time_ms - producer_state.last_timestamp
                >= self.producer_state_manager_config.producer_id_expiration_ms)

    def remove_expired_producers(self, current_time_ms: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#removeExpiredProducers."""
        # 1. Producers idle past producer.id.expiration.ms without an open transaction.
        expired = [pid for pid, entry in self.producers.items() if self.is_producer_expired(current_time_ms, entry)]
        for pid in expired:
            del self.producers[pid]
        # 2. Verification entries that were never used.
        expiration_ms = self.producer_state_manager_config.producer_id_expiration_ms
        stale = [pid for pid, entry in self.verification_states.items()
                 if current_time_ms - entry.timestamp >= expiration_ms]
        for pid in stale:
            del self.verification_states[pid]

    # -- verification -------------------------------------------------------------------------

    def maybe_create_verification_state_entry(self, producer_id: int, sequence: int, epoch: int) -> VerificationStateEntry:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#maybeCreateVerificationStateEntry."""
        entry = self.verification_states.get(producer_id)
        if entry is None:
            now = self.time.milliseconds() if self.time is not None else 0
            entry = self.verification_states[producer_id] = VerificationStateEntry(now, sequence, epoch)
        entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry

    def verification_state_entry(self, producer_id: int) -> VerificationStateEntry | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#verificationStateEntry."""
        return self.verification_states.get(producer_id)

    def clear_verification_state_entry(self, producer_id: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#clearVerificationStateEntry."""
        self.verification_states.pop(producer_id, None)

    # -- transactions -------------------------------------------------------------------------

    def has_late_transaction(self, current_time_ms: int) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#hasLateTransaction."""
        last_timestamp = self.oldest_txn_last_timestamp
        return last_timestamp > 0 and (
            current_time_ms - last_timestamp > self.max_transaction_timeout_ms + LATE_TRANSACTION_BUFFER_MS)

    def update_oldest_txn_timestamp(self) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#updateOldestTxnTimestamp."""
        if not self.ongoing_txns:
            self.oldest_txn_last_timestamp = -1
            return
        oldest = self.ongoing_txns[min(self.ongoing_txns)]
        entry = self.producers.get(oldest.producer_id)
        self.oldest_txn_last_timestamp = entry.last_timestamp if entry is not None else -1

    def first_unstable_offset(self) -> LogOffsetMetadata | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#firstUnstableOffset: undecided, or decided above the HW."""
        unreplicated = self.unreplicated_txns[min(self.unreplicated_txns)].first_offset if self.unreplicated_txns else None
        undecided = self.ongoing_txns[min(self.ongoing_txns)].first_offset if self.ongoing_txns else None
        if unreplicated is None:
            return undecided
        if undecided is None:
            return unreplicated
        return undecided if undecided.message_offset < unreplicated.message_offset else unreplicated

    def first_undecided_offset(self) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#firstUndecidedOffset."""
        if not self.ongoing_txns:
            return None
        return self.ongoing_txns[min(self.ongoing_txns)].first_offset.message_offset

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#onHighWatermarkUpdated."""
        self.remove_unreplicated_transactions(high_watermark)

    def remove_unreplicated_transactions(self, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#removeUnreplicatedTransactions: markers below ``offset`` are replicated."""
        done = [first for first, txn in self.unreplicated_txns.items()
                if txn.last_offset is not None and txn.last_offset < offset]
        for first in done:
            del self.unreplicated_txns[first]

    def last_stable_offset(self, completed_txn: CompletedTxn) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#lastStableOffset: the LSO once ``completed_txn`` completes."""
        nxt = self.find_next_incomplete_txn(completed_txn.producer_id)
        return nxt.first_offset.message_offset if nxt is not None else completed_txn.last_offset + 1

    def find_next_incomplete_txn(self, producer_id: int) -> TxnMetadata | None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#findNextIncompleteTxn."""
        for first in sorted(self.ongoing_txns):
            txn = self.ongoing_txns[first]
            if txn.producer_id != producer_id:
                return txn
        return None

    def complete_txn(self, completed_txn: CompletedTxn) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#completeTxn: undecided -> unreplicated."""
        # 1. The transaction must have been started.
        txn = self.ongoing_txns.pop(completed_txn.first_offset, None)
        if txn is None:
            raise ValueError(f"Attempted to complete transaction {completed_txn} on partition "
                             f"{self.topic_partition} which was not started")
        # 2. It waits for the HW to pass its marker.
        txn.last_offset = completed_txn.last_offset
        self.unreplicated_txns[completed_txn.first_offset] = txn
        self.update_oldest_txn_timestamp()

    # -- truncation and reload ----------------------------------------------------------------

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#onLogStartOffsetIncremented (no snapshots: the snap offset is the start)."""
        self.remove_unreplicated_transactions(log_start_offset)
        if self.last_map_offset < log_start_offset:
            self.last_map_offset = log_start_offset
        self.last_snap_offset = log_start_offset

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, current_time_ms: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#truncateAndReload without snapshot files.

        Kafka reloads from the latest snapshot in range; there are none here, so a moved end
        clears the state and restarts the map at the log start (loadFromSnapshot's empty
        branch), and the log replays its batches from there.
        """
        del current_time_ms  # only used to drop expired producers read from a snapshot
        if log_end_offset != self.last_map_offset:
            # 1. Forget everything; unreplicated transactions are below the (assumed) HW.
            self.producers.clear()
            self.ongoing_txns.clear()
            self.update_oldest_txn_timestamp()
            self.unreplicated_txns.clear()
            # 2. No snapshot: the map starts over at the log start.
            self.last_snap_offset = log_start_offset
            self.last_map_offset = log_start_offset
        else:
            # 3. Same end: only the start moved.
            self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.ProducerStateManager#truncateFullyAndStartAt."""
        self.producers.clear()
        self.ongoing_txns.clear()
        self.unreplicated_txns.clear()
        self.last_snap_offset = 0
        self.last_map_offset = offset
        self.update_oldest_txn_timestamp()
