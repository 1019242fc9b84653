"""A broker's disk: the state that survives a crash of the broker task.

Mirrors one Kafka log directory (an entry of ``log.dirs``) with the files in it, and the part
of org.apache.kafka.storage.internals.log.LogDirFailureChannel that marks it offline.

What lives here is exactly what a Kafka broker finds again after ``kill -9``: each
partition's LocalLog (batches, the leader-epoch-checkpoint file, partition.metadata), the
offset checkpoint files at the top of the directory, and the clean-shutdown marker. Anything
held only by the LogManager or UnifiedLog (the high watermark in memory, a log start offset
not yet checkpointed) is lost when the broker object is dropped.
"""

from __future__ import annotations

from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.checkpoints import OffsetCheckpointFile
from kafka_ref.log.local_log import LocalLog

# File names at the top of a log directory (Kafka's constants).
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"  # ReplicaManager.HighWatermarkFilename
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"  # LogManager.RecoveryPointCheckpointFile
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"  # LogManager.LogStartOffsetCheckpointFile
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"  # LogLoader.CleanShutdownFile


class Disk:
    """One Kafka log directory (an entry of ``log.dirs``) and its failure state.

    Kafka has no class for this: it is the directory on disk plus the directory's entry in
    org.apache.kafka.storage.internals.log.LogDirFailureChannel. ``logs`` maps each partition to its LocalLog; ``offline`` is set when the directory fails
    (I/O errors, an unreadable checkpoint), after which its logs refuse every operation.
    """

    def __init__(self, broker_id: int, log_dir: str | None = None) -> None:
        self.broker_id = broker_id
        self.log_dir = log_dir if log_dir is not None else f"/kafka-logs-{broker_id}"
        self.logs: dict[TopicPartition, LocalLog] = {}
        self.future_logs: dict[TopicPartition, LocalLog] = {}
        # Directories renamed with Kafka's "-stray" suffix (LogManager#loadLog, KRaft): kept, never
        # loaded again; Kafka 3.8 does not delete them either.
        self.stray_logs: list[LocalLog] = []
        self._checkpoint_files: dict[str, OffsetCheckpointFile] = {}
        self.clean_shutdown = False
        self.offline = False
        self.offline_reason: str | None = None

    # -- checkpoint files --------------------------------------------------------------------

    def checkpoint_file(self, name: str) -> OffsetCheckpointFile:
        """The offset checkpoint file ``name`` at the top of the directory (created on first use)."""
        existing = self._checkpoint_files.get(name)
        if existing is None:
            existing = OffsetCheckpointFile(f"{self.log_dir}/{name}", log_dir_failure_channel=self)
            self._checkpoint_files[name] = existing
        return existing

    @property
    def replication_offset_checkpoint(self) -> OffsetCheckpointFile:
        """High watermarks, written by ReplicaManager#checkpointHighWatermarks."""
        return self.checkpoint_file(REPLICATION_OFFSET_CHECKPOINT)

    @property
    def recovery_point_checkpoint(self) -> OffsetCheckpointFile:
        """Recovery points, written by LogManager#checkpointLogRecoveryOffsets."""
        return self.checkpoint_file(RECOVERY_POINT_CHECKPOINT)

    @property
    def log_start_offset_checkpoint(self) -> OffsetCheckpointFile:
        """Log start offsets, written by LogManager#checkpointLogStartOffsets."""
        return self.checkpoint_file(LOG_START_OFFSET_CHECKPOINT)

    # -- partition directories ---------------------------------------------------------------

    def _check_online(self, what: str) -> None:
        if self.offline:
            raise KafkaStorageException(f"Can not {what} because log directory {self.log_dir} is offline")

    def get_local_log(self, topic_partition: TopicPartition, is_future: bool = False) -> LocalLog | None:
        return (self.future_logs if is_future else self.logs).get(topic_partition)

    def get_or_create_local_log(self, topic_partition: TopicPartition, is_future: bool = False) -> LocalLog:
        """The partition's LocalLog, creating its directory if there is none."""
        logs = self.future_logs if is_future else self.logs
        local_log = logs.get(topic_partition)
        if local_log is None:
            self._check_online(f"create log for {topic_partition}")
            local_log = LocalLog(topic_partition, self.log_dir, is_future=is_future)
            local_log.leader_epoch_checkpoint.log_dir_failure_channel = self
            logs[topic_partition] = local_log
        return local_log

    def delete_local_log(self, topic_partition: TopicPartition, is_future: bool = False) -> LocalLog | None:
        """Remove the partition's directory and everything in it."""
        return (self.future_logs if is_future else self.logs).pop(topic_partition, None)

    def rename_stray(self, topic_partition: TopicPartition) -> LocalLog | None:
        """The partition's directory renamed aside as stray (UnifiedLog#renameDir to logStrayDirName)."""
        local_log = self.logs.pop(topic_partition, None)
        if local_log is not None:
            self.stray_logs.append(local_log)
        return local_log

    def replace_current_with_future(self, topic_partition: TopicPartition) -> None:
        """The future log becomes the partition's log (LogManager#replaceCurrentWithFutureLog)."""
        future = self.future_logs.pop(topic_partition)
        self.logs[topic_partition] = future

    # -- failure -----------------------------------------------------------------------------

    def mark_offline(self, reason: str) -> None:
        """Mirrors org.apache.kafka.storage.internals.log.LogDirFailureChannel#maybeAddOfflineLogDir: the directory fails.

        Every log on it closes its handlers, so later reads, appends and truncations raise
        KafkaStorageException.
        """
        # 1. Only the first failure is recorded.
        if not self.offline:
            self.offline = True
            self.offline_reason = reason
        # 2. Close the handlers of every log on the directory.
        for local_log in list(self.logs.values()) + list(self.future_logs.values()):
            local_log.close_handlers()

    def files(self) -> dict[str, str]:
        """The text of every file this model keeps, by path (for tests and debugging)."""
        result = {f.path: f.content for f in self._checkpoint_files.values() if f.content is not None}
        if self.clean_shutdown:
            result[f"{self.log_dir}/{CLEAN_SHUTDOWN_FILE}"] = ""
        for local_log in list(self.logs.values()) + list(self.future_logs.values()):
            checkpoint = local_log.leader_epoch_checkpoint
            if checkpoint.content is not None:
                result[checkpoint.path] = checkpoint.content
        return result

    def __repr__(self) -> str:
        state = "offline" if self.offline else "online"
        return f"Disk(broker_id={self.broker_id}, log_dir={self.log_dir}, logs={len(self.logs)}, {state})"
