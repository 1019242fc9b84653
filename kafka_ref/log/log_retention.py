"""Retention: the part of UnifiedLog that moves the log start offset and deletes old data.

Mirrors kafka.log.UnifiedLog#maybeIncrementLogStartOffset / #updateLogStartOffset (DeleteRecords, a
leader's log start seen by a follower, retention) and #deleteOldSegments with its three rules (log
start offset breach, retention.bytes, retention.ms) and #deletableSegments. A mixin of ``UnifiedLog``
(kafka_ref/log/unified_log.py), kept apart to keep that module within the project's size rule;
LogManager's kafka-log-retention task calls ``delete_old_segments`` on every log.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from kafka_ref.common.errors import OffsetOutOfRangeException
from kafka_ref.common.records import RecordBatch
from kafka_ref.log.fetch_data import LogOffsetMetadata, LogStartOffsetIncrementReason


# (The same logger name as unified_log.py's: these are UnifiedLog's own log lines.)
_log = structlog.get_logger("kafka.log.UnifiedLog")


class UnifiedLogRetention:
    """UnifiedLog's retention methods (``self`` is the UnifiedLog)."""

    def delete_old_segments(self) -> int:
        """Mirrors kafka.log.UnifiedLog#deleteOldSegments.

        Each batch plays the part of a segment. 1. Batches wholly below the log start offset go
        (deleteLogStartOffsetBreachedSegments); with a ``delete`` cleanup policy also 2. the
        oldest batches while the log is larger than ``retention_bytes``
        (deleteRetentionSizeBreachedSegments) and 3. the oldest batches whose newest timestamp is
        more than ``retention_ms`` old (deleteRetentionMsBreachedSegments). Never past the HW.
        Returns how many batches went.
        """
        self.local_log.check_if_memory_mapped_buffer_closed()
        # 1. Log start breach.
        deleted = self._delete_old_segments(lambda batch: batch.next_offset <= self.log_start_offset)
        if self.cleanup_policy_delete:
            # 2. Retention by size: the oldest batches while the log is too large.
            if self.retention_bytes >= 0 and self.size >= self.retention_bytes:
                excess = [self.size - self.retention_bytes]

                def size_breached(batch: RecordBatch) -> bool:
                    if excess[0] - batch.size_in_bytes < 0:
                        return False
                    excess[0] -= batch.size_in_bytes
                    return True

                deleted += self._delete_old_segments(size_breached)
            # 3. Retention by time: batches whose newest record is older than retention.ms (a
            #    batch without timestamps has no age here; Kafka would use the file's mtime).
            if self.retention_ms >= 0:
                start_ms = self.time.milliseconds()
                deleted += self._delete_old_segments(
                    lambda batch: batch.max_timestamp >= 0 and start_ms - batch.max_timestamp > self.retention_ms)
        self._check_invariants()
        return deleted

    def _delete_old_segments(self, predicate: Callable[[RecordBatch], bool]) -> int:
        """Mirrors UnifiedLog#deleteOldSegments(predicate, reason) with #deletableSegments: the
        oldest batches, in order, while the predicate holds and they end at or below the HW
        (the log start offset never passes the HW), move the log start past them and go."""
        # 1. The deletable prefix.
        new_start = None
        for batch in self.local_log.batches:
            if batch.next_offset > self.high_watermark or not predicate(batch):
                break
            new_start = batch.next_offset
        if new_start is None:
            return 0
        # 2. The log start moves past them (deleteSegments), then they leave the log.
        self.maybe_increment_log_start_offset(new_start, LogStartOffsetIncrementReason.SEGMENT_DELETION)
        removed = len(self.local_log.remove_batches_below(min(self.log_start_offset, self.high_watermark)))
        # 3. If that rolled a new segment, the HW's position refers to the old one: look it up again.
        hw = self._high_watermark_metadata
        if not hw.message_offset_only() and hw.segment_base_offset < self.local_log.segment_base_offset:
            self._high_watermark_metadata = LogOffsetMetadata(hw.message_offset)
            self.high_watermark = self.last_stable_offset = hw.message_offset
        return removed

    def _update_log_start_offset(self, offset: int) -> None:
        """Mirrors kafka.log.UnifiedLog#updateLogStartOffset: HW and recovery point follow it up."""
        self.log_start_offset = offset
        if self.high_watermark < offset:
            self.update_high_watermark(offset)
        if self.local_log.recovery_point < offset:
            self.local_log.update_recovery_point(offset)

    def maybe_increment_log_start_offset(
        self,
        new_log_start_offset: int,
        reason: LogStartOffsetIncrementReason | str = LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION,
    ) -> bool:
        """Mirrors kafka.log.UnifiedLog#maybeIncrementLogStartOffset.

        Raise the log start offset (DeleteRecords, a leader's log start seen by a follower,
        retention); it may not pass the HW. Returns whether it moved. The batches below it
        stay until ``delete_old_segments`` runs, as in Kafka.
        """
        # 1. Never beyond the high watermark.
        if new_log_start_offset > self.high_watermark:
            raise OffsetOutOfRangeException(
                f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                f"{self.topic_partition} since it is larger than the high watermark {self.high_watermark}"
            )
        # (The flag is read first: the check's call only raises, and this runs per append or fetch.)
        if self.local_log.is_memory_mapped_buffer_closed:
            self.local_log.check_if_memory_mapped_buffer_closed()
        # 2. Only forward: update it and drop epoch entries wholly before it.
        if new_log_start_offset > self.log_start_offset:
            self._update_log_start_offset(new_log_start_offset)
            _log.info(
                "incremented_log_start_offset",
                topic_partition=str(self.topic_partition),
                log_start_offset=new_log_start_offset,
                reason=str(reason),
            )
            self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
            self._check_invariants()
            return True
        return False
