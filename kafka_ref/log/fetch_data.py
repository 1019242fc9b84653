"""The small value types that cross the log's boundary.

Mirrors org.apache.kafka.server.storage.log.FetchIsolation,
org.apache.kafka.storage.internals.log.{FetchDataInfo, LogAppendInfo, LogOffsetMetadata,
LogOffsetSnapshot, AppendOrigin, LeaderHwChange, LogStartOffsetIncrementReason} and
org.apache.kafka.server.common.OffsetAndEpoch.

Our log has no files, but it keeps Kafka's notion of a position: every batch sits at a byte
position inside the current "segment" (see LocalLog), so a LogOffsetMetadata here carries the
same three numbers as Kafka's and ``position_diff`` works the way DelayedFetch expects.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_ref.common.errors import KafkaException

if TYPE_CHECKING:
    from kafka_ref.common.records import MemoryRecords

UNKNOWN_OFFSET = -1
UNKNOWN_FILE_POSITION = -1
# Mirrors kafka.log.UnifiedLog.UnknownOffset: "no first offset known" in a LogAppendInfo.
UNIFIED_LOG_UNKNOWN_OFFSET = -1
NO_TIMESTAMP = -1


class FetchIsolation(enum.Enum):
    """Mirrors org.apache.kafka.server.storage.log.FetchIsolation.

    Which offset bounds a read: followers read to the log end, consumers to the high
    watermark, read_committed consumers to the last stable offset.
    """

    LOG_END = "log_end"
    HIGH_WATERMARK = "high_watermark"
    TXN_COMMITTED = "txn_committed"

    @classmethod
    def of(cls, replica_id: int, isolation_level: int) -> "FetchIsolation":
        """Mirrors org.apache.kafka.server.storage.log.FetchIsolation#of.

        A fetch from a replica (replica_id >= 0) reads to the log end; a consumer reads to
        the high watermark, or to the LSO with READ_COMMITTED (isolation level 1).
        """
        # 1. Replicas are not bounded by the high watermark.
        if replica_id >= 0:
            return cls.LOG_END
        # 2. Consumers: read_committed stops at the last stable offset.
        if isolation_level == 1:
            return cls.TXN_COMMITTED
        return cls.HIGH_WATERMARK


class AppendOrigin(str, enum.Enum):
    """Mirrors org.apache.kafka.storage.internals.log.AppendOrigin.

    Who is appending: it decides which validations run. A plain string such as ``"client"``
    compares equal to the member.
    """

    REPLICATION = "replication"
    COORDINATOR = "coordinator"
    CLIENT = "client"
    RAFT_LEADER = "raft_leader"


class LeaderHwChange(enum.Enum):
    """Mirrors org.apache.kafka.storage.internals.log.LeaderHwChange."""

    INCREASED = "increased"
    SAME = "same"
    NONE = "none"


class LogStartOffsetIncrementReason(enum.Enum):
    """Mirrors org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason."""

    LEADER_OFFSET_INCREMENTED = "leader offset increment"
    SEGMENT_DELETION = "segment deletion"
    CLIENT_RECORD_DELETION = "client delete records request"
    SNAPSHOT_GENERATED = "snapshot generated"

    def __str__(self) -> str:
        return self.value


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class LogOffsetMetadata:
    """Mirrors org.apache.kafka.storage.internals.log.LogOffsetMetadata.

    An offset plus, when known, where it sits: the base offset of the segment holding it and
    its byte position inside that segment. An offset built from a bare number is
    "message offset only" and cannot be compared by position.
    """

    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    def message_offset_only(self) -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.LogOffsetMetadata#messageOffsetOnly."""
        return (
            self.segment_base_offset == UNKNOWN_OFFSET
            and self.relative_position_in_segment == UNKNOWN_FILE_POSITION
        )

    def on_older_segment(self, that: "LogOffsetMetadata") -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.LogOffsetMetadata#onOlderSegment."""
        # 1. Without a segment on either side we cannot say it is older (Kafka 3.8, KAFKA-16452:
        #    no longer an exception, as a HW may now be held as a bare offset). (messageOffsetOnly
        #    written out: the leader's HW check asks this whenever the HW stays put.)
        if ((self.segment_base_offset == UNKNOWN_OFFSET and self.relative_position_in_segment == UNKNOWN_FILE_POSITION)
                or (that.segment_base_offset == UNKNOWN_OFFSET
                    and that.relative_position_in_segment == UNKNOWN_FILE_POSITION)):
            return False
        # 2. Older means a smaller segment base offset.
        return self.segment_base_offset < that.segment_base_offset

    def on_same_segment(self, that: "LogOffsetMetadata") -> bool:
        """Mirrors org.apache.kafka.storage.internals.log.LogOffsetMetadata#onSameSegment."""
        # 1. A bare offset is on no known segment.
        if self.message_offset_only() or that.message_offset_only():
            return False
        # 2. Same base offset, same segment.
        return self.segment_base_offset == that.segment_base_offset

    def position_diff(self, that: "LogOffsetMetadata") -> int:
        """Mirrors org.apache.kafka.storage.internals.log.LogOffsetMetadata#positionDiff: bytes between two offsets of one segment."""
        # 1. Both must have positions, in the same segment.
        if self.message_offset_only() or that.message_offset_only():
            raise KafkaException(f"{self} cannot compare its segment position with {that} since it only has message offset info")
        if not self.on_same_segment(that):
            raise KafkaException(f"{self} cannot compare its segment position with {that} since they are not on the same segment")
        # 2. The difference of the two relative positions.
        return self.relative_position_in_segment - that.relative_position_in_segment

    def __str__(self) -> str:
        return (
            f"(offset={self.message_offset}, segment=[{self.segment_base_offset}:"
            f"{self.relative_position_in_segment}])"
        )


# Kafka 3.8 (KAFKA-16452): a bare offset, no segment and no position.
UNKNOWN_OFFSET_METADATA = LogOffsetMetadata(-1, UNIFIED_LOG_UNKNOWN_OFFSET, UNKNOWN_FILE_POSITION)


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class LogOffsetSnapshot:
    """Mirrors org.apache.kafka.storage.internals.log.LogOffsetSnapshot."""

    log_start_offset: int
    log_end_offset: LogOffsetMetadata
    high_watermark: LogOffsetMetadata
    last_stable_offset: LogOffsetMetadata


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class FetchDataInfo:
    """Mirrors org.apache.kafka.storage.internals.log.FetchDataInfo.

    What a read returns: where the read started (offset and position) and the whole batches
    read, as references into the log. ``first_entry_incomplete`` is set, as in Kafka, when
    the first batch did not fit in ``max_length``; Kafka then hands out a partial batch that
    ReplicaManager turns into an empty response, we hand out no batch at all.
    """

    fetch_offset_metadata: LogOffsetMetadata
    records: "MemoryRecords"
    first_entry_incomplete: bool = False
    aborted_transactions: tuple | None = None


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class OffsetAndEpoch:
    """Mirrors org.apache.kafka.server.common.OffsetAndEpoch (offset first, then epoch)."""

    offset: int
    epoch: int

    @property
    def leader_epoch(self) -> int:
        return self.epoch


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    """Mirrors org.apache.kafka.common.record.FileRecords.TimestampAndOffset.

    ``leader_epoch`` is None where Kafka's Optional is empty.
    """

    timestamp: int
    offset: int
    leader_epoch: int | None = None


@dataclass(slots=True)
class LogAppendInfo:
    """Mirrors org.apache.kafka.storage.internals.log.LogAppendInfo.

    What an append did. Mutable like Kafka's: the leader path fills in the offsets after it
    has assigned them.
    """

    first_offset: int
    last_offset: int
    last_leader_epoch: int | None
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    source_compression: str  # a CompressionType member (a StrEnum: equal to its name) or the name
    valid_bytes: int
    last_offset_of_first_batch: int
    record_errors: list = field(default_factory=list)
    leader_hw_change: LeaderHwChange = LeaderHwChange.NONE

    @property
    def first_or_last_offset_of_first_batch(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.LogAppendInfo#firstOrLastOffsetOfFirstBatch."""
        return self.first_offset if self.first_offset >= 0 else self.last_offset_of_first_batch

    @property
    def num_messages(self) -> int:
        """Mirrors org.apache.kafka.storage.internals.log.LogAppendInfo#numMessages: offsets covered by the append (0 if unknown)."""
        if self.first_offset >= 0 and self.last_offset >= 0:
            return self.last_offset - self.first_offset + 1
        return 0

    @classmethod
    def unknown_log_append_info_with_log_start_offset(cls, log_start_offset: int) -> "LogAppendInfo":
        """Mirrors org.apache.kafka.storage.internals.log.LogAppendInfo#unknownLogAppendInfoWithLogStartOffset."""
        return cls(
            first_offset=UNIFIED_LOG_UNKNOWN_OFFSET,
            last_offset=-1,
            last_leader_epoch=None,
            max_timestamp=NO_TIMESTAMP,
            shallow_offset_of_max_timestamp=-1,
            log_append_time=NO_TIMESTAMP,
            log_start_offset=log_start_offset,
            source_compression="none",
            valid_bytes=-1,
            last_offset_of_first_batch=-1,
        )
