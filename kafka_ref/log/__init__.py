"""The in-memory log layer.

Mirrors the package kafka.log (UnifiedLog, LocalLog, LogManager) and
org.apache.kafka.storage.internals.{log, epoch, checkpoint} (LeaderEpochFileCache, checkpoint
files, FetchDataInfo, LogAppendInfo, LogOffsetMetadata).

- ``UnifiedLog``: a replica's log: offsets (log start, HW, LEO), appends, reads, truncation.
- ``LocalLog``: the batches themselves; lives on the ``Disk`` and survives a broker crash.
- ``LeaderEpochFileCache``: epoch -> start offset, persisted to its checkpoint on every change.
- ``LogManager``: all logs of a broker; loads them from the Disk at startup.
- ``Disk``: one broker's log directory (logs and checkpoint files); can go offline.
"""

from kafka_ref.log.checkpoints import (
    CheckpointFile,
    EpochEntry,
    InMemoryLeaderEpochCheckpoint,
    LeaderEpochCheckpoint,
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
)
from kafka_ref.log.disk import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    Disk,
)
from kafka_ref.log.exceptions import OffsetsOutOfOrderException, UnexpectedAppendOffsetException
from kafka_ref.log.fetch_data import (
    UNKNOWN_OFFSET_METADATA,
    AppendOrigin,
    FetchDataInfo,
    FetchIsolation,
    LeaderHwChange,
    LogAppendInfo,
    LogOffsetMetadata,
    LogOffsetSnapshot,
    LogStartOffsetIncrementReason,
    OffsetAndEpoch,
    TimestampAndOffset,
)
from kafka_ref.log.leader_epoch_file_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache
from kafka_ref.log.local_log import BatchView, LocalLog
from kafka_ref.log.log_manager import LogManager
from kafka_ref.log.unified_log import (
    DEFAULT_MAX_MESSAGE_BYTES,
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    UnifiedLog,
)

__all__ = [
    "AppendOrigin",
    "BatchView",
    "CLEAN_SHUTDOWN_FILE",
    "CheckpointFile",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "Disk",
    "EARLIEST_LOCAL_TIMESTAMP",
    "EARLIEST_TIMESTAMP",
    "EpochEntry",
    "FetchDataInfo",
    "FetchIsolation",
    "InMemoryLeaderEpochCheckpoint",
    "LATEST_TIERED_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "LOG_START_OFFSET_CHECKPOINT",
    "LeaderEpochCheckpoint",
    "LeaderEpochCheckpointFile",
    "LeaderEpochFileCache",
    "LeaderHwChange",
    "LocalLog",
    "LogAppendInfo",
    "LogManager",
    "LogOffsetMetadata",
    "LogOffsetSnapshot",
    "LogStartOffsetIncrementReason",
    "MAX_TIMESTAMP",
    "OffsetAndEpoch",
    "OffsetCheckpointFile",
    "OffsetsOutOfOrderException",
    "RECOVERY_POINT_CHECKPOINT",
    "REPLICATION_OFFSET_CHECKPOINT",
    "TimestampAndOffset",
    "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
    "UNKNOWN_OFFSET_METADATA",
    "UnexpectedAppendOffsetException",
    "UnifiedLog",
]
