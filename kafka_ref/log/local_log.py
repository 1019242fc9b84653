"""The local log: the batches a broker holds for one partition.

Mirrors kafka.log.LocalLog (with the parts of org.apache.kafka.storage.internals.log.LogSegment
that matter once there are no files).

A LocalLog is the durable part of a partition's log: it lives on the broker's ``Disk`` and
survives a crash of the broker task. It is a list of immutable batches plus a parallel list
of base offsets (for bisect) and of byte positions. Kafka splits a log into segment files;
here there is one "segment" whose base offset only changes when the log is truncated fully.
Positions are byte offsets inside that segment, so offset metadata (``segment_base_offset``,
``relative_position_in_segment``) means what it means in Kafka. Batches removed from the
front keep the positions of the batches after them, as a deleted segment file would.

Like Kafka's LocalLog it is not safe on its own: UnifiedLog owns the rules (log start
offset, high watermark, epoch cache) and calls in here.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from kafka_ref.common.errors import KafkaStorageException, OffsetOutOfRangeException
from kafka_ref.common.records import MemoryRecords, RecordBatch
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.checkpoints import LeaderEpochCheckpointFile
from kafka_ref.log.fetch_data import FetchDataInfo, LogOffsetMetadata

FUTURE_DIR_SUFFIX = "-future"


def log_dir_name(topic_partition: TopicPartition) -> str:
    """Mirrors kafka.log.LocalLog#logDirName: ``topic-partition``."""
    return f"{topic_partition.topic}-{topic_partition.partition}"


class BatchView(Sequence):
    """A read-only window onto a log's batch list (no copy is made)."""

    __slots__ = ("_batches",)

    def __init__(self, batches: list[RecordBatch]) -> None:
        self._batches = batches

    def __len__(self) -> int:
        return len(self._batches)

    def __getitem__(self, index):  # type: ignore[override]
        return self._batches[index]

    def __iter__(self) -> Iterator[RecordBatch]:
        return iter(self._batches)

    def __repr__(self) -> str:
        return f"BatchView({len(self._batches)} batches)"


class LocalLog:
    """Mirrors kafka.log.LocalLog.

    Durable state of one partition replica on one broker: the batches, the log end offset,
    the recovery point, the leader-epoch checkpoint file and the partition.metadata topic id.
    """

    def __init__(
        self,
        topic_partition: TopicPartition,
        parent_dir: str,
        *,
        next_offset: int = 0,
        recovery_point: int = 0,
        is_future: bool = False,
    ) -> None:
        self.topic_partition = topic_partition
        self.parent_dir = parent_dir
        self.dir = f"{parent_dir}/{log_dir_name(topic_partition)}" + (FUTURE_DIR_SUFFIX if is_future else "")
        self.is_future = is_future
        # The batches and two parallel lists: base offsets (bisect) and segment positions.
        self._batches: list[RecordBatch] = []
        self._base_offsets: list[int] = []
        self._positions: list[int] = []
        # The one "segment" positions are measured in: its base offset and the byte position
        # where the next batch goes. It changes only when the log starts over.
        self.segment_base_offset = next_offset
        self._end_position = 0
        # Where the oldest retained "segment" begins (each removed batch counts as a segment).
        self._first_segment_base_offset = next_offset
        self._next_offset = next_offset
        # Mirrors kafka.log.LocalLog#logEndOffsetMetadata (the field nextOffsetMetadata): a plain
        # attribute that every append, truncation and roll keeps in step
        # (_update_log_end_offset_metadata); every follower fetch of every partition reads it.
        self.log_end_offset_metadata = LogOffsetMetadata(next_offset, next_offset, 0)
        # Mirrors kafka.log.LocalLog#logEndOffset: the offset the next appended record gets. A
        # plain attribute kept equal to ``_next_offset`` (read several times per request).
        self.log_end_offset = next_offset
        self.recovery_point = recovery_point
        # Files that live in the partition directory.
        self.leader_epoch_checkpoint = LeaderEpochCheckpointFile(f"{self.dir}/leader-epoch-checkpoint")
        self.partition_metadata_topic_id: Uuid | None = None
        # Set when the directory fails (LogDirFailureChannel) or the log is closed.
        self.is_memory_mapped_buffer_closed = False

    # -- state -------------------------------------------------------------------------------

    def check_if_memory_mapped_buffer_closed(self) -> None:
        """Mirrors kafka.log.LocalLog#checkIfMemoryMappedBufferClosed: no I/O once handlers are closed."""
        if self.is_memory_mapped_buffer_closed:
            raise KafkaStorageException(f"The memory mapped buffer for log of {self.topic_partition} is already closed")

    def close_handlers(self) -> None:
        """Mirrors kafka.log.LocalLog#closeHandlers: called when the log directory goes offline."""
        self.is_memory_mapped_buffer_closed = True

    def reopen(self) -> None:
        """Open the files again when a restarted broker loads this log."""
        self.is_memory_mapped_buffer_closed = False

    @property
    def batches(self) -> BatchView:
        return BatchView(self._batches)

    def _update_log_end_offset_metadata(self) -> None:
        """Keep ``log_end_offset_metadata`` (Kafka's nextOffsetMetadata field) in step with the end
        offset, the segment and its size: called wherever one of them moves. The object is kept
        while the end it describes is unchanged (an idle partition's fetches share it)."""
        metadata = self.log_end_offset_metadata
        if (metadata.message_offset != self._next_offset or metadata.relative_position_in_segment != self._end_position
                or metadata.segment_base_offset != self.segment_base_offset):
            self.log_end_offset_metadata = LogOffsetMetadata(self._next_offset, self.segment_base_offset, self._end_position)

    @property
    def first_segment_base_offset(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.LogSegments#firstSegmentBaseOffset: where the retained data begins.

        It starts where the log was created (or started over), moves up as old batches are
        removed, and does not move when the log is truncated at its end.
        """
        return self._first_segment_base_offset

    @property
    def size_in_bytes(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.LogSegments#sizeInBytes."""
        return self._end_position - self._positions[0] if self._positions else 0

    @property
    def unflushed_messages(self) -> int:
        """Mirrors kafka.log.LocalLog#unflushedMessages."""
        return self._next_offset - self.recovery_point

    def __len__(self) -> int:
        return len(self._batches)

    # -- recovery point ----------------------------------------------------------------------

    def update_recovery_point(self, new_recovery_point: int) -> None:
        """Mirrors kafka.log.LocalLog#updateRecoveryPoint."""
        self.recovery_point = new_recovery_point

    def mark_flushed(self, offset: int) -> None:
        """Mirrors kafka.log.LocalLog#markFlushed: move the recovery point up to ``offset``."""
        self.check_if_memory_mapped_buffer_closed()
        if offset > self.recovery_point:
            self.update_recovery_point(offset)

    def _update_log_end_offset(self, end_offset: int) -> None:
        """Mirrors kafka.log.LocalLog#updateLogEndOffset: the recovery point never exceeds the end."""
        self._next_offset = self.log_end_offset = end_offset
        self._update_log_end_offset_metadata()
        if self.recovery_point > end_offset:
            self.update_recovery_point(end_offset)

    # -- append and read ---------------------------------------------------------------------

    def append(self, last_offset: int, batches: Sequence[RecordBatch]) -> None:
        """Mirrors kafka.log.LocalLog#append: add already-validated batches and move the end offset.

        The caller (UnifiedLog) has checked the offsets; this only asserts they do not overlap.
        """
        # 1. Check the handlers are open. (The flag is read first: the check's call only raises,
        #    and this runs per append.)
        if self.is_memory_mapped_buffer_closed:
            self.check_if_memory_mapped_buffer_closed()
        # 2. Add each batch with its base offset and position (LogSegment#append).
        batches_list = self._batches
        for batch in batches:
            if batches_list and batch.base_offset <= batches_list[-1].last_offset:
                raise AssertionError(
                    f"{self.topic_partition}: batch at {batch.base_offset} overlaps the log ending at "
                    f"{batches_list[-1].last_offset} (LEO {self._next_offset})"
                )
            batches_list.append(batch)
            self._base_offsets.append(batch.base_offset)
            self._positions.append(self._end_position)
            self._end_position += batch.size_in_bytes
        # 3. The log end offset follows the last appended offset.
        self._update_log_end_offset(last_offset + 1)

    def _index_of_batch_for(self, offset: int) -> int:
        """Index of the first batch whose last offset is at or above ``offset`` (may be len).

        This is LogSegment#translateOffset: the batch containing the offset, or the next one
        when the offset falls in a gap.
        """
        index = bisect.bisect_right(self._base_offsets, offset) - 1
        if index < 0:
            return 0
        if self._batches[index].last_offset >= offset:
            return index
        return index + 1

    def _position_of_index(self, index: int) -> int:
        return self._positions[index] if index < len(self._positions) else self._end_position

    def convert_to_offset_metadata_or_throw(self, offset: int) -> LogOffsetMetadata:
        """Mirrors kafka.log.LocalLog#convertToOffsetMetadataOrThrow.

        The segment position of ``offset`` (the start of the batch holding it); raises
        OffsetOutOfRangeException beyond the log end.
        """
        return self.read(offset, 1, False, self.log_end_offset_metadata).fetch_offset_metadata

    def read(
        self,
        start_offset: int,
        max_length: int,
        min_one_message: bool,
        max_offset_metadata: LogOffsetMetadata,
        include_aborted_txns: bool = False,
    ) -> FetchDataInfo:
        """Mirrors kafka.log.LocalLog#read and org.apache.kafka.storage.internals.log.LogSegment#read.

        Whole batches from the one holding ``start_offset``, none reaching past the position
        of ``max_offset_metadata``, at most ``max_length`` bytes (the first batch regardless
        when ``min_one_message``).
        """
        # 1. Check the handlers are open and the offset is not past the end.
        self.check_if_memory_mapped_buffer_closed()
        end_offset = self._next_offset
        if start_offset > end_offset or start_offset < 0:
            raise OffsetOutOfRangeException(
                f"Received request for offset {start_offset} for partition {self.topic_partition}, "
                f"but we only have log segments upto {end_offset}."
            )
        aborted = () if include_aborted_txns else None
        # 2. Reading at the bound gives nothing; past the bound gives nothing at its position.
        if start_offset == max_offset_metadata.message_offset:
            return FetchDataInfo(max_offset_metadata, MemoryRecords.EMPTY, False, aborted)
        if start_offset > max_offset_metadata.message_offset:
            return FetchDataInfo(self.convert_to_offset_metadata_or_throw(start_offset), MemoryRecords.EMPTY, False, aborted)
        # 3. Find the batch holding the offset (translateOffset). None means no data lies
        #    between it and the LEO (possible after a truncation inside a batch): Kafka answers
        #    with the LEO's metadata; we keep the asked offset, placed at the end position, so
        #    converting a HW there never moves it.
        index = self._index_of_batch_for(start_offset)
        if index >= len(self._batches):
            at_end = LogOffsetMetadata(start_offset, self.segment_base_offset, self._end_position)
            return FetchDataInfo(at_end, MemoryRecords.EMPTY, False, aborted)
        start_position = self._positions[index]
        offset_metadata = LogOffsetMetadata(start_offset, self.segment_base_offset, start_position)
        first_size = self._batches[index].size_in_bytes
        # 4. The first batch may exceed max_length when min_one_message is asked for.
        adjusted_max_size = max(max_length, first_size) if min_one_message else max_length
        # 5. The upper position: the bound's position on this segment, the whole segment if
        #    the bound is on a newer one, nothing if we do not know where it is.
        if max_offset_metadata.message_offset_only() or max_offset_metadata.segment_base_offset < self.segment_base_offset:
            max_position = None
        elif max_offset_metadata.segment_base_offset > self.segment_base_offset:
            max_position = self._end_position
        else:
            max_position = max_offset_metadata.relative_position_in_segment
        if adjusted_max_size == 0 or max_position is None:
            return FetchDataInfo(offset_metadata, MemoryRecords.EMPTY, False, aborted)
        # 6. Take every whole batch ending within min(bound, size limit).
        fetch_size = min(max_position - start_position, adjusted_max_size)
        limit = start_position + fetch_size
        stop = bisect.bisect_right(self._positions, limit, index) - 1
        if stop == len(self._batches) - 1 and self._end_position <= limit:
            stop = len(self._batches)
        records = MemoryRecords.of(self._batches[index:stop]) if stop > index else MemoryRecords.EMPTY
        return FetchDataInfo(offset_metadata, records, adjusted_max_size < first_size, aborted)

    # -- removal -----------------------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> list[RecordBatch]:
        """Mirrors kafka.log.LocalLog#truncateTo and org.apache.kafka.storage.internals.log.LogSegment#truncateTo.

        Remove every batch whose last offset is at or above ``target_offset`` (a batch
        straddling the target goes whole, as a segment is cut at a batch boundary) and set the
        log end offset to ``target_offset`` exactly as Kafka does.
        """
        # 1. Cut at the batch holding the target offset.
        index = self._index_of_batch_for(target_offset)
        removed = self._batches[index:]
        if removed:
            self._end_position = self._positions[index]
            del self._batches[index:]
            del self._base_offsets[index:]
            del self._positions[index:]
        # 2. The end offset becomes the target.
        self._update_log_end_offset(target_offset)
        return removed

    def truncate_fully_and_start_at(self, new_offset: int) -> list[RecordBatch]:
        """Mirrors kafka.log.LocalLog#truncateFullyAndStartAt: drop everything, start a new segment."""
        # 1. Check the handlers are open.
        self.check_if_memory_mapped_buffer_closed()
        # 2. Remove all batches; the new segment begins at new_offset, position 0.
        removed = self._batches
        self._batches = []
        self._base_offsets = []
        self._positions = []
        self.segment_base_offset = new_offset
        self._first_segment_base_offset = new_offset
        self._end_position = 0
        # 3. The end offset becomes the new offset.
        self._update_log_end_offset(new_offset)
        return removed

    def remove_batches_below(self, offset: int) -> list[RecordBatch]:
        """Mirrors kafka.log.LocalLog#removeAndDeleteSegments for segments entirely below ``offset``.

        Drops batches whose next offset is at or below ``offset`` (each batch plays the part
        of a segment here). Positions of the remaining batches do not change.
        """
        # 1. Count leading batches that end at or before the offset.
        count = 0
        batches = self._batches
        while count < len(batches) and batches[count].next_offset <= offset:
            count += 1
        # 2. Remove them from all three lists; the oldest segment now starts at the next batch.
        removed = batches[:count]
        if count:
            del self._batches[:count]
            del self._base_offsets[:count]
            del self._positions[:count]
            if self._batches:
                self._first_segment_base_offset = self._base_offsets[0]
            else:
                # 3. Nothing left: Kafka rolls a new empty segment at the log end first.
                self.segment_base_offset = self._next_offset
                self._first_segment_base_offset = self._next_offset
                self._end_position = 0
                self._update_log_end_offset_metadata()
        return removed

    def delete_all_segments(self) -> list[RecordBatch]:
        """Mirrors kafka.log.LocalLog#deleteAllSegments: drop every batch and close the handlers."""
        removed = self._batches
        self._batches = []
        self._base_offsets = []
        self._positions = []
        self._end_position = 0
        self._update_log_end_offset_metadata()
        self.is_memory_mapped_buffer_closed = True
        return removed

    def __repr__(self) -> str:
        return (
            f"LocalLog({self.topic_partition}, batches={len(self._batches)}, "
            f"first={self.first_segment_base_offset}, leo={self._next_offset}, "
            f"recovery_point={self.recovery_point})"
        )
