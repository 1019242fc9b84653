"""A partition replica's log, in memory.

Mirrors kafka.log.UnifiedLog (Kafka 3.x; the tiered-storage half is left out, so the "unified"
view is just the local log) together with the parts of kafka.log.LogLoader that run when a
broker loads a log it already has.

UnifiedLog owns the offsets a replica reasons about: the log start offset, the high watermark
(HW), the log end offset (LEO, from the LocalLog) and the leader epoch cache. The batches
themselves live in the LocalLog on the broker's Disk. Appends either assign offsets (leader)
or keep the leader's offsets (follower); reads return whole batches by reference. The
invariants log_start <= HW <= LEO and "batches never overlap" are checked after every change
and raise AssertionError with the log's state.

All methods are synchronous and run atomically on the one event loop (Kafka holds the log's
lock for the same sections).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import structlog

from kafka_ref.common.errors import InconsistentTopicIdException, OffsetOutOfRangeException, RecordTooLargeException
from kafka_ref.common.records import CompressionType, MemoryRecords, RecordBatch
from kafka_ref.common.time import MockTime, Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.exceptions import UnexpectedAppendOffsetException
from kafka_ref.log.fetch_data import (
    NO_TIMESTAMP,
    UNIFIED_LOG_UNKNOWN_OFFSET,
    UNKNOWN_FILE_POSITION,
    UNKNOWN_OFFSET,
    AppendOrigin,
    FetchDataInfo,
    FetchIsolation,
    LogAppendInfo,
    LogOffsetMetadata,
    LogOffsetSnapshot,
    OffsetAndEpoch,
    TimestampAndOffset,
)
from kafka_ref.log.leader_epoch_file_cache import UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafka_ref.log.local_log import BatchView, LocalLog
from kafka_ref.log.log_producer_state import UnifiedLogProducerState, rebuild_producer_state
from kafka_ref.log.log_retention import UnifiedLogRetention
from kafka_ref.log.log_validator import (
    NO_TIMESTAMP_BOUND,
    LogValidator,
    LongRef,
    analyze_and_validate_records,
    target_compression,
)
from kafka_ref.log.producer_state_manager import ProducerStateManager

if TYPE_CHECKING:
    from kafka_ref.log.disk import Disk

# Mirrors kafka.log.Defaults / LogConfig: max.message.bytes.
DEFAULT_MAX_MESSAGE_BYTES = 1048588

# Mirrors org.apache.kafka.common.requests.ListOffsetsRequest's special timestamps.
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5

_log = structlog.get_logger("kafka.log.UnifiedLog")


class UnifiedLog(UnifiedLogProducerState, UnifiedLogRetention):
    """Mirrors kafka.log.UnifiedLog.

    ``high_watermark`` is the value to start from (Partition passes the checkpointed one); it
    is clamped into [log_start_offset, log_end_offset]. ``log_start_offset`` defaults to where
    the local data begins.
    """

    UNKNOWN_OFFSET = UNIFIED_LOG_UNKNOWN_OFFSET

    def __init__(
        self,
        topic_partition: TopicPartition,
        local_log: LocalLog,
        *,
        log_start_offset: int | None = None,
        high_watermark: int = 0,
        time: Time | None = None,
        topic_id: Uuid | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        retention_bytes: int = -1,
        leader_epoch_cache: LeaderEpochFileCache | None = None,
    ) -> None:
        self.topic_partition = topic_partition
        self.local_log = local_log
        self.time = time if time is not None else MockTime()
        # Producers' state (filled from the data below, once the offsets are known).
        self.producer_state_manager = ProducerStateManager(topic_partition, time=self.time)
        self.max_message_bytes = max_message_bytes
        self.retention_bytes = retention_bytes
        # The topic's message.timestamp.type (LogConfig#messageTimestampType): "LogAppendTime"
        # makes the leader stamp each appended batch with its clock (LogManager keeps it current).
        self.message_timestamp_type = "CreateTime"
        # message.timestamp.before.max.ms / after.max.ms (KIP-937; the deprecated
        # message.timestamp.difference.max.ms when they are unset): how far a CreateTime record's
        # timestamp may lie from the leader's clock (unbounded by default).
        # compression.type: "producer" keeps each batch's codec; a codec name makes the leader
        # write batches in that codec (LogValidator's recompression).
        self.compression_type = "producer"
        self.timestamp_before_max_ms = NO_TIMESTAMP_BOUND
        self.timestamp_after_max_ms = NO_TIMESTAMP_BOUND
        # retention.ms and whether cleanup.policy includes "delete" (LogManager keeps them current).
        self.retention_ms = 604800000
        self.cleanup_policy_delete = True
        # LogConfig#compact: cleanup.policy includes "compact" (the leader then refuses records without a key).
        self.compact = False
        # 1. The epoch cache reads its checkpoint, which lives with the local log on the disk.
        self.leader_epoch_cache = (
            leader_epoch_cache
            if leader_epoch_cache is not None
            else LeaderEpochFileCache(topic_partition, local_log.leader_epoch_checkpoint)
        )
        start = 0 if log_start_offset is None else log_start_offset
        self.log_start_offset = start
        self._high_watermark_metadata = LogOffsetMetadata(start)
        # Mirrors kafka.log.UnifiedLog#highWatermark: a plain attribute kept equal to the
        # metadata's message offset wherever that is set (it is read several times per request).
        self.high_watermark = start
        # Mirrors kafka.log.UnifiedLog#lastStableOffset: the HW, as this log holds no transactions;
        # a plain attribute set with the HW (every follower fetch of every partition reads it).
        self.last_stable_offset = start
        # The read helper's empty FetchDataInfo at the current log end (ReplicaManager's
        # _follower_read_at_log_end), shared while the end does not move.
        self.empty_read_at_end: "FetchDataInfo | None" = None
        self._last_flush_time = self.time.milliseconds()
        self._topic_id: Uuid | None = None
        # 2. Apply the log start offset (moving HW and recovery point up to it if needed).
        self._update_log_start_offset(start)
        # 3. The local log start can only be at or after the first retained batch.
        local_start = max(start, local_log.first_segment_base_offset)
        self._update_log_start_offset(local_start)
        # 4. Topic id: the partition.metadata file wins; a different given id is an error.
        self._initialize_topic_id(topic_id)
        # Producers' state, rebuilt from the data (LogLoader's producer state load).
        rebuild_producer_state(self.producer_state_manager, self.log_start_offset, local_log.log_end_offset,
                               local_log.batches)
        # 5. Start from the given high watermark, clamped into range.
        self.update_high_watermark(high_watermark)
        self._check_invariants()

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        topic_partition: TopicPartition,
        disk: "Disk",
        *,
        time: Time | None = None,
        topic_id: Uuid | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        log_start_offset_checkpoint: int = 0,
        recovery_point_checkpoint: int = 0,
        high_watermark: int = 0,
        had_clean_shutdown: bool = True,
        is_future: bool = False,
    ) -> "UnifiedLog":
        """Mirrors kafka.log.UnifiedLog#apply: open (or create) the partition's log on ``disk``."""
        # 1. Find the local log on the disk, or create its directory.
        local_log = disk.get_or_create_local_log(topic_partition, is_future=is_future)
        # 2. Load it.
        return cls.load(
            topic_partition,
            local_log,
            time=time,
            topic_id=topic_id,
            max_message_bytes=max_message_bytes,
            log_start_offset_checkpoint=log_start_offset_checkpoint,
            recovery_point_checkpoint=recovery_point_checkpoint,
            high_watermark=high_watermark,
            had_clean_shutdown=had_clean_shutdown,
        )

    @classmethod
    def load(
        cls,
        topic_partition: TopicPartition,
        local_log: LocalLog,
        *,
        time: Time | None = None,
        topic_id: Uuid | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        log_start_offset_checkpoint: int = 0,
        recovery_point_checkpoint: int = 0,
        high_watermark: int = 0,
        had_clean_shutdown: bool = True,
    ) -> "UnifiedLog":
        """Mirrors kafka.log.LogLoader#load followed by the kafka.log.UnifiedLog constructor.

        In memory every batch is intact, so "recovery" only reconciles the checkpoints with
        the data: the epoch cache is trimmed to the data, and the recovery point is the log
        end after a clean shutdown or the checkpointed one otherwise.
        """
        # 1. Open the log's handlers again (a previous failure may have closed them).
        local_log.reopen()
        # 2. A log ending before the checkpointed log start offset is emptied and restarted there.
        if local_log.log_end_offset < log_start_offset_checkpoint:
            local_log.truncate_fully_and_start_at(log_start_offset_checkpoint)
            local_log.leader_epoch_checkpoint.write([])
        # 3. The epoch cache may hold entries past the data (a truncation not yet flushed).
        cache = LeaderEpochFileCache(topic_partition, local_log.leader_epoch_checkpoint)
        cache.truncate_from_end(local_log.log_end_offset)
        # 4. The log start offset is the checkpointed one, or where the data begins if later.
        new_log_start_offset = max(log_start_offset_checkpoint, local_log.first_segment_base_offset)
        cache.truncate_from_start(new_log_start_offset)
        # 5. Recovery point: everything is recovered after a clean shutdown.
        if had_clean_shutdown:
            local_log.update_recovery_point(local_log.log_end_offset)
        else:
            local_log.update_recovery_point(min(recovery_point_checkpoint, local_log.log_end_offset))
        # 6. Build the log.
        return cls(
            topic_partition,
            local_log,
            log_start_offset=new_log_start_offset,
            high_watermark=high_watermark,
            time=time,
            topic_id=topic_id,
            max_message_bytes=max_message_bytes,
            leader_epoch_cache=cache,
        )

    # -- simple accessors --------------------------------------------------------------------

    @property
    def dir(self) -> str:
        """Mirrors kafka.log.UnifiedLog#dir: the partition directory."""
        return self.local_log.dir

    @property
    def parent_dir(self) -> str:
        """Mirrors kafka.log.UnifiedLog#parentDir: the log directory holding it."""
        return self.local_log.parent_dir

    @property
    def name(self) -> str:
        """Mirrors kafka.log.UnifiedLog#name: the partition directory name."""
        return self.local_log.dir.rsplit("/", 1)[-1]

    @property
    def is_future(self) -> bool:
        """Mirrors kafka.log.UnifiedLog#isFuture (an AlterReplicaLogDirs copy)."""
        return self.local_log.is_future

    @property
    def recovery_point(self) -> int:
        """Mirrors kafka.log.UnifiedLog#recoveryPoint: offsets below it are flushed."""
        return self.local_log.recovery_point

    @property
    def log_end_offset(self) -> int:
        """Mirrors kafka.log.UnifiedLog#logEndOffset."""
        return self.local_log._next_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        """Mirrors kafka.log.UnifiedLog#logEndOffsetMetadata."""
        return self.local_log.log_end_offset_metadata

    @property
    def batches(self) -> BatchView:
        """A read-only view of the batches (no copy)."""
        return self.local_log.batches

    @property
    def size(self) -> int:
        """Mirrors kafka.log.UnifiedLog#size: bytes held."""
        return self.local_log.size_in_bytes

    @property
    def last_flush_time(self) -> int:
        """Mirrors kafka.log.UnifiedLog#lastFlushTime."""
        return self._last_flush_time

    @property
    def latest_epoch(self) -> int | None:
        """Mirrors kafka.log.UnifiedLog#latestEpoch."""
        return self.leader_epoch_cache.latest_epoch

    def is_empty(self) -> bool:
        """Mirrors kafka.log.UnifiedLog#isEmpty."""
        return self.log_start_offset == self.log_end_offset

    # -- topic id ----------------------------------------------------------------------------

    @property
    def topic_id(self) -> Uuid | None:
        """Mirrors kafka.log.UnifiedLog#topicId; assigning calls assign_topic_id."""
        return self._topic_id

    @topic_id.setter
    def topic_id(self, topic_id: Uuid) -> None:
        self.assign_topic_id(topic_id)

    def _initialize_topic_id(self, topic_id: Uuid | None) -> None:
        """Mirrors kafka.log.UnifiedLog#initializeTopicId (partition.metadata kept, as in KRaft / IBP >= 2.8)."""
        # 1. A recorded id wins; a different requested id is a conflict.
        file_topic_id = self.local_log.partition_metadata_topic_id
        if file_topic_id is not None:
            if topic_id is not None and topic_id != file_topic_id:
                raise InconsistentTopicIdException(
                    f"Tried to assign topic ID {topic_id} to log for topic partition {self.topic_partition},"
                    f"but log already contained topic ID {file_topic_id}"
                )
            self._topic_id = file_topic_id
        # 2. Otherwise record the given id, if any.
        elif topic_id is not None:
            self._topic_id = topic_id
            self.local_log.partition_metadata_topic_id = topic_id

    def assign_topic_id(self, topic_id: Uuid) -> None:
        """Mirrors kafka.log.UnifiedLog#assignTopicId: set once; a different id later is a conflict."""
        # 1. Same id again is fine, a different one is not.
        if self._topic_id is not None:
            if self._topic_id != topic_id:
                raise InconsistentTopicIdException(
                    f"Tried to assign topic ID {topic_id} to log for topic partition {self.topic_partition},"
                    f"but log already contained topic ID {self._topic_id}"
                )
            return
        # 2. Record it in memory and in partition.metadata.
        self._topic_id = topic_id
        self.local_log.partition_metadata_topic_id = topic_id

    # -- high watermark ----------------------------------------------------------------------

    def update_high_watermark(self, hw: int | LogOffsetMetadata) -> int:
        """Mirrors kafka.log.UnifiedLog#updateHighWatermark: set HW clamped to [log start, LEO]; may go down."""
        # 1. Clamp: below the log start -> log start; at or past the end -> the end's metadata.
        metadata = hw if isinstance(hw, LogOffsetMetadata) else LogOffsetMetadata(hw)
        end = self.local_log.log_end_offset_metadata
        if metadata.message_offset < self.log_start_offset:
            new = LogOffsetMetadata(self.log_start_offset)
        elif metadata.message_offset >= end.message_offset:
            new = end
        else:
            new = metadata
        # 2. Store it.
        self._update_high_watermark_metadata(new)
        return new.message_offset

    def maybe_increment_high_watermark(self, new_high_watermark: int | LogOffsetMetadata) -> LogOffsetMetadata | None:
        """Mirrors kafka.log.UnifiedLog#maybeIncrementHighWatermark (leader side).

        Moves HW forward only; returns the old HW metadata when it moved, else None. A value
        beyond the log end offset is a caller bug (ValueError, Kafka's IllegalArgumentException).
        """
        # (The class is tested before isinstance, and the log end read without its property: this
        #  runs on every leader append and every follower fetch that moved a follower's LEO.)
        if new_high_watermark.__class__ is LogOffsetMetadata or isinstance(new_high_watermark, LogOffsetMetadata):
            new = new_high_watermark
        else:
            new = LogOffsetMetadata(new_high_watermark)
        # 1. Never beyond the log end.
        if new.message_offset > self.local_log._next_offset:
            raise ValueError(
                f"High watermark {new} update exceeds current log end offset {self.log_end_offset_metadata}"
            )
        # (LogOffsetMetadata#messageOffsetOnly written out here and in fetchHighWatermarkMetadata:
        #  both run on every leader append and follower LEO move.)
        if new.segment_base_offset == UNKNOWN_OFFSET and new.relative_position_in_segment == UNKNOWN_FILE_POSITION:
            new = self.maybe_convert_to_offset_metadata(new.message_offset)
        # 2. Move only forward (or onto a newer segment at the same offset).
        old = self.fetch_high_watermark_metadata()
        if old.message_offset < new.message_offset or (
            old.message_offset == new.message_offset and old.on_older_segment(new)
        ):
            self._update_high_watermark_metadata(new)
            return old
        return None

    def maybe_update_high_watermark(self, hw: int) -> int | None:
        """Mirrors kafka.log.UnifiedLog#maybeUpdateHighWatermark (follower side): the new HW if it changed."""
        old = self.high_watermark
        new = self.update_high_watermark(hw)
        return None if new == old else new

    def fetch_high_watermark_metadata(self) -> LogOffsetMetadata:
        """Mirrors kafka.log.UnifiedLog#fetchHighWatermarkMetadata: HW with its position, looked up once."""
        # (The flag is read first: the check's call only raises, and this runs per append or fetch.)
        if self.local_log.is_memory_mapped_buffer_closed:
            self.local_log.check_if_memory_mapped_buffer_closed()
        metadata = self._high_watermark_metadata
        if (metadata.segment_base_offset == UNKNOWN_OFFSET
                and metadata.relative_position_in_segment == UNKNOWN_FILE_POSITION):
            full = self.maybe_convert_to_offset_metadata(metadata.message_offset)
            self._update_high_watermark_metadata(full)
            return full
        return metadata

    def _update_high_watermark_metadata(self, new: LogOffsetMetadata) -> None:
        """Mirrors kafka.log.UnifiedLog#updateHighWatermarkMetadata."""
        # 1. Negative is a bug.
        if new.message_offset < 0:
            raise ValueError("High watermark offset should be non-negative")
        # 2. A decrease is allowed (truncation, a new leader) but worth a warning.
        if new.message_offset < self._high_watermark_metadata.message_offset:
            _log.warning(
                "non_monotonic_high_watermark_update",
                topic_partition=str(self.topic_partition),
                old=self._high_watermark_metadata.message_offset,
                new=new.message_offset,
            )
        self._high_watermark_metadata = new
        self.high_watermark = self.last_stable_offset = new.message_offset
        # 3. Completed transactions whose markers are now below the HW are replicated (the last
        #    stable offset itself stays the HW: kafka_ref's brokers serve no transactions).
        if self.producer_state_manager.unreplicated_txns:
            self.producer_state_manager.on_high_watermark_updated(new.message_offset)

    def _update_high_watermark_with_log_end_offset(self) -> None:
        """Mirrors kafka.log.UnifiedLog#updateHighWatermarkWithLogEndOffset: HW at the end moves with it."""
        if self.high_watermark >= self.local_log.log_end_offset:
            self._update_high_watermark_metadata(self.local_log.log_end_offset_metadata)

    @property
    def last_stable_offset_lag(self) -> int:
        """Mirrors kafka.log.UnifiedLog#lastStableOffsetLag."""
        return self.high_watermark - self.last_stable_offset

    def fetch_last_stable_offset_metadata(self) -> LogOffsetMetadata:
        """Mirrors kafka.log.UnifiedLog#fetchLastStableOffsetMetadata (no open transactions: the HW)."""
        return self.fetch_high_watermark_metadata()

    def fetch_offset_snapshot(self) -> LogOffsetSnapshot:
        """Mirrors kafka.log.UnifiedLog#fetchOffsetSnapshot."""
        # With no open transactions the last stable offset is the HW: look it up once.
        high_watermark = self.fetch_high_watermark_metadata()
        return LogOffsetSnapshot(self.log_start_offset, self.local_log.log_end_offset_metadata, high_watermark, high_watermark)

    def maybe_convert_to_offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """Mirrors kafka.log.UnifiedLog#maybeConvertToOffsetMetadata: position if in range, else offset only."""
        try:
            return self.local_log.convert_to_offset_metadata_or_throw(offset)
        except OffsetOutOfRangeException:
            return LogOffsetMetadata(offset)

    # -- log start offset --------------------------------------------------------------------

    # -- append ------------------------------------------------------------------------------

    def append_as_leader(
        self,
        records: MemoryRecords,
        leader_epoch: int,
        origin: AppendOrigin | str = AppendOrigin.CLIENT,
    ) -> LogAppendInfo:
        """Mirrors kafka.log.UnifiedLog#appendAsLeader: validate, assign offsets from the LEO and stamp the epoch."""
        if origin.__class__ is not AppendOrigin:
            origin = AppendOrigin(origin)
        validate_and_assign_offsets = origin != AppendOrigin.RAFT_LEADER
        return self._append(records, origin, validate_and_assign_offsets, leader_epoch, ignore_record_size=False)

    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """Mirrors kafka.log.UnifiedLog#appendAsFollower: keep the leader's offsets and epochs."""
        return self._append(records, AppendOrigin.REPLICATION, False, -1, ignore_record_size=True)

    def _append(
        self,
        records: MemoryRecords,
        origin: AppendOrigin,
        validate_and_assign_offsets: bool,
        leader_epoch: int,
        ignore_record_size: bool,
    ) -> LogAppendInfo:
        """Mirrors kafka.log.UnifiedLog#append."""
        # 1. Validate the batches and gather what the append covers.
        append_info = analyze_and_validate_records(
            records,
            self.topic_partition,
            origin,
            ignore_record_size,
            not validate_and_assign_offsets,
            leader_epoch,
            self.max_message_bytes,
            self.log_start_offset,
        )
        # 2. Nothing valid: nothing to do.
        if append_info.valid_bytes <= 0:
            return append_info
        # (The flag is read first: the check's call only raises, and this runs per append or fetch.)
        if self.local_log.is_memory_mapped_buffer_closed:
            self.local_log.check_if_memory_mapped_buffer_closed()
        batches: Sequence[RecordBatch] = records.batches
        if validate_and_assign_offsets:
            # 3a. Leader: the LogValidator checks the batch, offsets run on from the LEO and the
            #     leader's epoch is stamped; under LogAppendTime the batch's max timestamp becomes
            #     the leader's clock, and a topic codec other than the producer's makes it write
            #     the records again (BrokerCompressionType#targetCompression: "producer" keeps
            #     the source codec).
            offset = LongRef(self.local_log.log_end_offset)
            append_info.first_offset = offset.value
            source_compression = append_info.source_compression
            if source_compression.__class__ is not CompressionType:
                source_compression = CompressionType(source_compression)
            # (A topic on "producer" needs no BrokerCompressionType lookup: the usual case, per append.)
            target = None if self.compression_type == "producer" else target_compression(self.compression_type)
            validator = LogValidator(
                records, self.topic_partition, self.time, source_compression,
                source_compression if target is None else target, self.compact, self.message_timestamp_type,
                self.timestamp_before_max_ms, self.timestamp_after_max_ms, leader_epoch, origin,
            )
            result = validator.validate_messages_and_assign_offsets(offset)
            batches = result.validated_records.batches
            append_info.max_timestamp = result.max_timestamp_ms
            append_info.shallow_offset_of_max_timestamp = result.shallow_offset_of_max_timestamp
            append_info.last_offset = offset.value - 1
            if self.message_timestamp_type == "LogAppendTime":
                append_info.log_append_time = result.log_append_time_ms
            # 3b. Written again, a batch may have grown past max.message.bytes.
            if result.message_size_maybe_changed:
                for batch in batches:
                    if batch.size_in_bytes > self.max_message_bytes:
                        raise RecordTooLargeException(
                            f"Message batch size is {batch.size_in_bytes} bytes in append to partition "
                            f"{self.topic_partition} which exceeds the maximum configured size of "
                            f"{self.max_message_bytes}."
                        )
            append_info.last_offset_of_first_batch = batches[0].last_offset
            append_info.last_leader_epoch = leader_epoch
        else:
            # 3c. Follower: the leader's offsets must continue from our end.
            log_end_offset = self.local_log.log_end_offset
            if append_info.first_or_last_offset_of_first_batch < log_end_offset:
                first_offset = append_info.first_offset
                first_ten = [record.offset for record in itertools.islice(records.records(), 10)]
                raise UnexpectedAppendOffsetException(
                    f"Unexpected offset in append to {self.topic_partition}. First offset "
                    f"{append_info.first_or_last_offset_of_first_batch} is less than the next offset "
                    f"{log_end_offset}. First 10 offsets in append: {first_ten}, last offset in append: "
                    f"{append_info.last_offset}. Log start offset = {self.log_start_offset}",
                    first_offset,
                    append_info.last_offset,
                )
        # 4. Producers (analyzeAndValidateProducerState): a client's retried batch that is already
        #    written is answered with its offsets and not written again; an old epoch, a
        #    sequence gap, plain data inside an open transaction or a fenced coordinator's
        #    marker is refused before anything is written.
        updated_producers, completed_txns, duplicate = self.analyze_and_validate_producer_state(batches, origin)
        if duplicate is not None:
            # (The duplicate's answer carries the written batch's timestamp as its log append
            #  time, whatever the timestamp type, as Kafka's does.)
            append_info.first_offset = duplicate.first_offset
            append_info.last_offset = duplicate.last_offset
            append_info.log_append_time = duplicate.timestamp
            append_info.log_start_offset = self.log_start_offset
            return append_info
        # 5. Record in the epoch cache the epoch each batch was written under.
        #    (maybeAssignEpochStartOffset written out: one call per appended batch, not two.)
        assign_epoch = self.leader_epoch_cache.assign
        for batch in batches:
            assign_epoch(batch.partition_leader_epoch, batch.base_offset)
        # 6. Append; a HW that sat at the end keeps pointing at the (moved) end.
        self.local_log.append(append_info.last_offset, batches)
        self._update_high_watermark_with_log_end_offset()
        # 7. Producer state: the validated appends, completed transactions, the map's end.
        producers = self.producer_state_manager
        if updated_producers:
            for producer_append_info in updated_producers.values():
                producers.update(producer_append_info)
            for completed_txn in completed_txns:
                producers.complete_txn(completed_txn)
        producers.update_map_end_offset(append_info.last_offset + 1)
        append_info.log_start_offset = self.log_start_offset
        self._check_invariants()
        return append_info

    # -- epochs ------------------------------------------------------------------------------

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Mirrors kafka.log.UnifiedLog#maybeAssignEpochStartOffset."""
        self.leader_epoch_cache.assign(leader_epoch, start_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> OffsetAndEpoch | None:
        """Mirrors kafka.log.UnifiedLog#endOffsetForEpoch: None when the cache cannot answer."""
        found_epoch, found_offset = self.leader_epoch_cache.end_offset_for(leader_epoch, self.log_end_offset)
        if found_offset == UNDEFINED_EPOCH_OFFSET:
            return None
        return OffsetAndEpoch(found_offset, found_epoch)

    # -- read --------------------------------------------------------------------------------

    def read(
        self,
        fetch_offset: int,
        max_length: int,
        isolation: FetchIsolation = FetchIsolation.LOG_END,
        min_one_message: bool = False,
    ) -> FetchDataInfo:
        """Mirrors kafka.log.UnifiedLog#read.

        Whole batches from the one holding ``fetch_offset`` up to the isolation's bound (LEO,
        HW or LSO), within ``max_length`` bytes except that with ``min_one_message`` the first
        batch comes anyway. A batch reaching past the bound is not returned; reading at the
        bound returns no batch. Offsets outside [log start, LEO] raise OffsetOutOfRangeException.
        """
        # 1. The offset must be in range.
        if fetch_offset < self.log_start_offset or fetch_offset > self.log_end_offset:
            raise OffsetOutOfRangeException(
                f"Received request for offset {fetch_offset} for partition {self.topic_partition}, "
                f"but we only have log segments in the range {self.log_start_offset} to {self.log_end_offset}."
            )
        # 2. The bound for this isolation level.
        if isolation is FetchIsolation.LOG_END:
            max_offset_metadata = self.local_log.log_end_offset_metadata
        elif isolation is FetchIsolation.HIGH_WATERMARK:
            max_offset_metadata = self.fetch_high_watermark_metadata()
        else:
            max_offset_metadata = self.fetch_last_stable_offset_metadata()
        # 3. Read the local log.
        return self.local_log.read(
            fetch_offset, max_length, min_one_message, max_offset_metadata, isolation is FetchIsolation.TXN_COMMITTED
        )

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """Mirrors kafka.log.UnifiedLog#fetchOffsetByTimestamp (ListOffsets).

        -2 earliest, -1 latest, -3 the record with the largest timestamp, otherwise the first
        record at or after the log start with a timestamp >= the target (None if none).
        """
        cache = self.leader_epoch_cache
        # 1. Earliest: the log start offset, with its epoch when the cache reaches that far back.
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            earliest = cache.earliest_entry
            epoch = earliest.epoch if earliest is not None and earliest.start_offset <= self.log_start_offset else None
            return TimestampAndOffset(NO_TIMESTAMP, self.log_start_offset, epoch)
        # 2. Latest: the log end offset and the latest epoch.
        if target_timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self.log_end_offset, cache.latest_epoch)
        # 3. Latest tiered: no remote storage here.
        if target_timestamp == LATEST_TIERED_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
        batches = self.local_log.batches
        # 4. Max timestamp: the first batch reaching the largest timestamp, and its record.
        if target_timestamp == MAX_TIMESTAMP:
            best: RecordBatch | None = None
            for batch in batches:
                if best is None or batch.max_timestamp > best.max_timestamp:
                    best = batch
            if best is None:
                return None
            for record in best:
                if record.timestamp == best.max_timestamp:
                    epoch = best.partition_leader_epoch if best.partition_leader_epoch >= 0 else None
                    return TimestampAndOffset(best.max_timestamp, record.offset, epoch)
            return None
        # 5. A timestamp: first batch whose max timestamp reaches it, then the record inside.
        for batch in batches:
            if batch.last_offset < self.log_start_offset or batch.max_timestamp < target_timestamp:
                continue
            for record in batch:
                if record.timestamp >= target_timestamp and record.offset >= self.log_start_offset:
                    epoch = batch.partition_leader_epoch if batch.partition_leader_epoch >= 0 else None
                    return TimestampAndOffset(record.timestamp, record.offset, epoch)
        return None

    # -- flush -------------------------------------------------------------------------------

    def flush(self, offset: int | None = None) -> None:
        """Mirrors kafka.log.UnifiedLog#flush(offset, includingOffset=false): the recovery point moves to ``offset``.

        Without an offset, flushes to the log end (Kafka's flush(forceFlushActiveSegment)).
        """
        # 1. Nothing to do unless it moves the recovery point.
        target = self.log_end_offset if offset is None else offset
        if target > self.local_log.recovery_point:
            # 2. Data is already durable in memory; mark it flushed.
            self.local_log.mark_flushed(target)
            self._last_flush_time = self.time.milliseconds()

    def flush_upto_offset_exclusive(self, offset: int) -> None:
        """Mirrors kafka.log.UnifiedLog#flushUptoOffsetExclusive."""
        self.flush(offset)

    # -- truncation --------------------------------------------------------------------------

    def truncate_to(self, target_offset: int) -> bool:
        """Mirrors kafka.log.UnifiedLog#truncateTo: make the log end at ``target_offset``.

        Batches with offsets at or past the target go (a batch straddling it goes whole); the
        LEO becomes the target, HW is clamped, and the epoch cache loses entries starting at
        or past it. Returns whether anything was truncated.
        """
        # 1. Negative targets are a bug.
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic_partition} to a negative offset ({target_offset}).")
        # 2. Nothing to cut: still trim epoch entries a failed leader may have left past the end.
        if target_offset >= self.local_log.log_end_offset:
            self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
            return False
        _log.info("truncating_log", topic_partition=str(self.topic_partition), target_offset=target_offset)
        self.local_log.check_if_memory_mapped_buffer_closed()
        # 3. Below all data: start over at the target.
        if self.local_log.first_segment_base_offset > target_offset:
            self.truncate_fully_and_start_at(target_offset)
        else:
            # 4. Cut the data and the epoch cache; the log start follows.
            self.local_log.truncate_to(target_offset)
            self.leader_epoch_cache.truncate_from_end(target_offset)
            self.log_start_offset = min(target_offset, self.log_start_offset)
            # 5. Producer state as the remaining data leaves it, then the HW.
            rebuild_producer_state(self.producer_state_manager, self.log_start_offset, target_offset,
                                   self.local_log.batches)
            if self.high_watermark >= self.local_log.log_end_offset:
                self.update_high_watermark(self.local_log.log_end_offset_metadata)
        self._check_invariants()
        return True

    def truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None = None) -> None:
        """Mirrors kafka.log.UnifiedLog#truncateFullyAndStartAt: drop all data and start at ``new_offset``."""
        _log.info("truncating_log_fully", topic_partition=str(self.topic_partition), new_offset=new_offset)
        # 1. Empty the local log and the epoch cache.
        self.local_log.truncate_fully_and_start_at(new_offset)
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state_manager.truncate_fully_and_start_at(new_offset)
        # 2. The log start offset and HW follow (the producer state has nothing to replay).
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        rebuild_producer_state(self.producer_state_manager, self.log_start_offset, new_offset, ())
        self.update_high_watermark(self.local_log.log_end_offset_metadata)
        self._check_invariants()

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        """Mirrors kafka.log.UnifiedLog#close: nothing to release in memory beyond the handlers check."""
        self.local_log.check_if_memory_mapped_buffer_closed()

    def close_handlers(self) -> None:
        """Mirrors kafka.log.UnifiedLog#closeHandlers: after a log directory failure every I/O fails."""
        self.local_log.close_handlers()

    def delete(self) -> None:
        """Mirrors kafka.log.UnifiedLog#delete: drop the data and the epoch cache."""
        self.local_log.check_if_memory_mapped_buffer_closed()
        self.leader_epoch_cache.clear()
        self.local_log.delete_all_segments()

    # -- invariants --------------------------------------------------------------------------

    def _check_invariants(self) -> None:
        """Assert log_start <= HW <= LEO (the design's invariant 8); batch order is checked on append."""
        # (The log end read without its property: this runs after every append.)
        if not (self.log_start_offset <= self.high_watermark <= self.local_log._next_offset):
            raise AssertionError(f"log offsets out of order: {self!r}")

    def __repr__(self) -> str:
        return (
            f"UnifiedLog(dir={self.dir}, topicId={self._topic_id}, topic={self.topic_partition.topic}, "
            f"partition={self.topic_partition.partition}, highWatermark={self.high_watermark}, "
            f"lastStableOffset={self.last_stable_offset}, logStartOffset={self.log_start_offset}, "
            f"logEndOffset={self.log_end_offset}, latestEpoch={self.latest_epoch}, batches={len(self.local_log)})"
        )
