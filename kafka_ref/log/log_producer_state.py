"""Producer state: the part of UnifiedLog that drives its ProducerStateManager.

Mirrors kafka.log.UnifiedLog#analyzeAndValidateProducerState (the producer checks of an append)
and the companion object's producer-state helpers, UnifiedLog$#updateProducers,
#loadProducersFromRecords and #rebuildProducerState (the state replayed from the data when a log
is loaded or truncated). ``UnifiedLogProducerState`` is a mixin of ``UnifiedLog``
(kafka_ref/log/unified_log.py), kept apart, as retention is (kafka_ref/log/log_retention.py), to
keep that module within the project's size rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kafka_ref.common.records import RecordBatch
from kafka_ref.log.fetch_data import AppendOrigin, LogOffsetMetadata
from kafka_ref.log.producer_state_manager import (
    BatchMetadata,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateManager,
)


class UnifiedLogProducerState:
    """UnifiedLog's producer-state methods (``self`` is the UnifiedLog)."""

    def analyze_and_validate_producer_state(
        self, batches: Sequence[RecordBatch], origin: AppendOrigin,
    ) -> tuple[dict[int, ProducerAppendInfo], list[CompletedTxn], BatchMetadata | None]:
        """Mirrors kafka.log.UnifiedLog#analyzeAndValidateProducerState (no verification guards).

        Returns each producer's validated append, the transactions the markers complete, and
        for a client the already-written batch a retry repeats (then nothing else counts). The
        manager itself is unchanged. kafka_ref does not model AddPartitionsToTxn verification, so
        the "transactional batch without verification" check is left out.
        """
        updated: dict[int, ProducerAppendInfo] = {}
        completed: list[CompletedTxn] = []
        producers = self.producer_state_manager
        for batch in batches:
            if batch.producer_id < 0:
                continue
            # 1. A client's retry of one of the producer's last five batches.
            if origin == AppendOrigin.CLIENT:
                entry = producers.last_entry(batch.producer_id)
                duplicate = None if entry is None else entry.find_duplicate_batch(batch)
                if duplicate is not None:
                    return updated, completed, duplicate
            # 2. Validate and accumulate (transactions start at the batch's base offset).
            completed_txn = update_producers(producers, batch, updated, None, origin)
            if completed_txn is not None:
                completed.append(completed_txn)
        return updated, completed, None


def update_producers(
    producer_state_manager: ProducerStateManager,
    batch: RecordBatch,
    producers: dict[int, ProducerAppendInfo],
    first_offset_metadata: LogOffsetMetadata | None,
    origin: AppendOrigin,
) -> CompletedTxn | None:
    """Mirrors kafka.log.UnifiedLog$#updateProducers: one batch into its producer's pending append."""
    # 1. One ProducerAppendInfo per producer and append.
    producer_id = batch.producer_id
    append_info = producers.get(producer_id)
    if append_info is None:
        append_info = producers[producer_id] = producer_state_manager.prepare_update(producer_id, origin)
    completed_txn = append_info.append(batch, first_offset_metadata)
    # 2. Data or marker, a transactional batch ends the producer's verification.
    if batch.is_transactional:
        producer_state_manager.clear_verification_state_entry(producer_id)
    return completed_txn


def load_producers_from_records(producer_state_manager: ProducerStateManager, batches: Iterable[RecordBatch]) -> None:
    """Mirrors kafka.log.UnifiedLog$#loadProducersFromRecords: replay written batches without sequence checks."""
    loaded: dict[int, ProducerAppendInfo] = {}
    completed: list[CompletedTxn] = []
    # 1. Accumulate every producer's batches as replication does.
    for batch in batches:
        if batch.producer_id >= 0:
            completed_txn = update_producers(producer_state_manager, batch, loaded, None, AppendOrigin.REPLICATION)
            if completed_txn is not None:
                completed.append(completed_txn)
    # 2. Apply them, then the completed transactions.
    for append_info in loaded.values():
        producer_state_manager.update(append_info)
    for completed_txn in completed:
        producer_state_manager.complete_txn(completed_txn)


def rebuild_producer_state(
    producer_state_manager: ProducerStateManager,
    log_start_offset: int,
    last_offset: int,
    batches: Iterable[RecordBatch],
) -> None:
    """Mirrors kafka.log.UnifiedLog$#rebuildProducerState without snapshots: the state replayed from the data up to ``last_offset``.

    Kafka starts from the latest snapshot at or below ``last_offset``; kafka_ref keeps none, so
    a moved end replays every retained batch from the log start.
    """
    # 1. Drop what lies past the end (here: everything, unless the map is already at the end).
    now = producer_state_manager.time.milliseconds() if producer_state_manager.time is not None else 0
    producer_state_manager.truncate_and_reload(log_start_offset, last_offset, now)
    # 2. Replay the batches between the map's end and the last offset.
    if last_offset > producer_state_manager.map_end_offset():
        start = max(producer_state_manager.map_end_offset(), log_start_offset)
        load_producers_from_records(
            producer_state_manager, (b for b in batches if b.last_offset >= start and b.base_offset < last_offset))
    # 3. The map now ends at the log's end.
    producer_state_manager.update_map_end_offset(last_offset)

