"""The broker's log manager.

Mirrors kafka.log.LogManager (Kafka 3.x) for one log directory (the broker's Disk).

The LogManager is in-memory broker state: it is rebuilt by ``startup`` from what the Disk
holds. A clean ``shutdown`` flushes every log, writes the recovery-point and log-start-offset
checkpoints and leaves the clean-shutdown marker; a crash is simply the broker dropping this
object, so whatever was not checkpointed is gone while the logs themselves stay on the Disk.
Kafka's periodic tasks (flush, checkpoint, retention) are plain methods here; the broker's
scheduler calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import structlog

from kafka_ref.common.config import LogConfig
from kafka_ref.common.errors import InconsistentTopicIdException, KafkaStorageException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.time import MockTime, Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.disk import Disk
from kafka_ref.log.log_validator import NO_TIMESTAMP_BOUND
from kafka_ref.log.unified_log import DEFAULT_MAX_MESSAGE_BYTES, UnifiedLog

# Mirrors LogManager.InitialTaskDelayMs: the first run of the periodic log tasks.
INITIAL_TASK_DELAY_MS = 30 * 1000

_log = structlog.get_logger("kafka.log.LogManager")


class LogManager:
    """Mirrors kafka.log.LogManager.

    ``default_config`` supplies max.message.bytes and retention.bytes for every log,
    ``topic_configs`` the per-topic configs in force; ``max_message_bytes`` overrides the
    default's value when given. ``config_repository`` (Kafka's ConfigRepository; a
    ZooKeeper-mode broker sets a ZkConfigRepository once its ZooKeeper session exists) is read
    for a topic's overrides when one of its logs is created; KRaft brokers push overrides with
    ``update_topic_config`` from the metadata image instead.
    """

    def __init__(
        self,
        disk: Disk,
        time: Time | None = None,
        *,
        default_config: LogConfig | None = None,
        max_message_bytes: int | None = None,
        topic_configs: Mapping[str, LogConfig] | None = None,
        scheduler: Any = None,
        retention_check_ms: int = 300000,
    ) -> None:
        self.disk = disk
        # Kafka's scheduler and log.retention.check.interval.ms: startup schedules retention.
        self.scheduler = scheduler
        self.retention_check_ms = retention_check_ms
        self.time = time if time is not None else MockTime()
        self.default_config = default_config
        self.max_message_bytes = max_message_bytes
        self.topic_configs: dict[str, LogConfig] = dict(topic_configs or {})
        self.config_repository: Any = None
        self.current_logs: dict[TopicPartition, UnifiedLog] = {}
        # Logs set aside as stray (KRaft: LogManager#strayLogs), kept out of current_logs.
        self.stray_logs: dict[TopicPartition, UnifiedLog] = {}
        self.future_logs: dict[TopicPartition, UnifiedLog] = {}
        self.had_clean_shutdown: bool | None = None
        self.started = False

    # -- configuration -----------------------------------------------------------------------

    def fetch_log_config(self, topic: str) -> LogConfig | None:
        """Mirrors kafka.log.LogManager#fetchLogConfig: the topic's overrides, else the default."""
        return self.topic_configs.get(topic, self.default_config)

    def fetch_topic_config_overrides(self, topics: Iterable[str]) -> None:
        """Mirrors kafka.log.LogManager#fetchTopicConfigOverrides: each topic's config from the repository.

        Kafka reads the overrides of every topic before loading logs at start-up, and
        getOrCreateLog reads them again (fetchLogConfig) for a log it creates. Here the result is
        kept in ``topic_configs`` (what ``fetch_log_config`` answers) and applied to the topic's
        loaded logs, so a recreated topic never keeps an earlier topic's overrides.
        """
        if self.config_repository is None:
            return
        for topic in sorted(set(topics)):
            overrides = self.config_repository.topic_config(topic)
            # None: the repository cannot answer now; keep what we have.
            if overrides is not None:
                self.update_topic_overrides(topic, overrides)

    def update_topic_overrides(self, topic: str, overrides: Mapping[str, str]) -> None:
        """A topic's overrides on the broker's defaults become its config (none: the default's).

        What LogManager#updateTopicConfig does with ``LogConfig.fromProps(defaults, overrides)``,
        for the ZooKeeper paths (start-up, log creation, TopicConfigHandler).
        """
        if overrides and self.default_config is not None:
            self.update_topic_config(topic, LogConfig(overrides, self.default_config.defaults))
        elif self.topic_configs.pop(topic, None) is not None:
            self._apply_limits(topic)

    def _apply_config(self, log: UnifiedLog, topic: str) -> None:
        """Give a log the parts of its topic's config the append and retention paths read
        (what Kafka's UnifiedLog reads from its LogConfig): max.message.bytes, retention.bytes,
        retention.ms, the cleanup policy (delete, compact), message.timestamp.type, the timestamp bounds and compression.type."""
        config = self.fetch_log_config(topic)
        max_bytes = config.max_message_size if config is not None else DEFAULT_MAX_MESSAGE_BYTES
        if self.max_message_bytes is not None and topic not in self.topic_configs:
            max_bytes = self.max_message_bytes
        log.max_message_bytes = max_bytes
        if config is not None:
            log.retention_bytes = config.get("retention.bytes")
            log.retention_ms = config.get("retention.ms")
            log.cleanup_policy_delete = config.delete
            log.compact = config.compact
            log.message_timestamp_type = config.get("message.timestamp.type")
            log.compression_type = config.get("compression.type")
            # LogConfig#getMessageTimestampBeforeMaxMs / AfterMaxMs: the deprecated difference
            # bound stands in for an unset before/after bound.
            difference = config.get("message.timestamp.difference.max.ms")
            before, after = config.get("message.timestamp.before.max.ms"), config.get("message.timestamp.after.max.ms")
            log.timestamp_before_max_ms = before if before != NO_TIMESTAMP_BOUND else difference
            log.timestamp_after_max_ms = after if after != NO_TIMESTAMP_BOUND else difference

    def update_topic_config(self, topic: str, config: LogConfig) -> None:
        """Mirrors kafka.log.LogManager#updateTopicConfig: apply new limits to the topic's logs."""
        self.topic_configs[topic] = config
        self._apply_limits(topic)

    def _apply_limits(self, topic: str) -> None:
        for log in self.logs_by_topic(topic):
            self._apply_config(log, topic)

    # -- startup and shutdown ----------------------------------------------------------------

    def startup(self) -> None:
        """Mirrors kafka.log.LogManager#startup / #loadLogs: load every log found on the disk, then
        schedule retention (kafka-log-retention).

        Each log gets its log start offset and recovery point from the checkpoints (a
        missing or unreadable checkpoint counts as 0) and its high watermark from
        replication-offset-checkpoint, clamped into range. In Kafka the HW is applied by
        Partition#createLog right after; doing it here gives the same result.
        """
        # 1. A failed directory cannot be loaded.
        disk = self.disk
        if disk.offline:
            raise KafkaStorageException(f"Can not load logs: log directory {disk.log_dir} is offline")
        # 2. Was the last shutdown clean? The marker is consumed by loading.
        self.had_clean_shutdown = disk.clean_shutdown
        disk.clean_shutdown = False
        # 3. Read the checkpoints, tolerating unreadable ones as Kafka does.
        recovery_points = self._read_checkpoint_leniently(disk.recovery_point_checkpoint)
        log_start_offsets = self._read_checkpoint_leniently(disk.log_start_offset_checkpoint)
        high_watermarks = self._read_checkpoint_leniently(disk.replication_offset_checkpoint)
        # 4. Load each partition's log (current and future).
        for is_future, local_logs, target in ((False, disk.logs, self.current_logs), (True, disk.future_logs, self.future_logs)):
            for tp, local_log in sorted(local_logs.items()):
                log = UnifiedLog.load(
                    tp,
                    local_log,
                    time=self.time,
                    log_start_offset_checkpoint=log_start_offsets.get(tp, 0),
                    recovery_point_checkpoint=recovery_points.get(tp, 0),
                    high_watermark=0 if is_future else high_watermarks.get(tp, 0),
                    had_clean_shutdown=bool(self.had_clean_shutdown),
                )
                self._apply_config(log, tp.topic)
                target[tp] = log
        # 5. Retention runs periodically: first after 30 s (Kafka's InitialTaskDelayMs), then
        #    every log.retention.check.interval.ms.
        if self.scheduler is not None:
            self.scheduler.schedule("kafka-log-retention", self.cleanup_logs, delay_ms=INITIAL_TASK_DELAY_MS,
                                    period_ms=self.retention_check_ms)
        self.started = True
        _log.info("logs_loaded", broker_id=disk.broker_id, logs=len(self.current_logs), clean=self.had_clean_shutdown)

    @staticmethod
    def is_stray_kraft_replica(broker_id: int, topics_image: Any, log: UnifiedLog) -> bool:
        """Mirrors kafka.log.LogManager#isStrayKraftReplica.

        1. A log without a topic id is stray (nothing was ever appended to it). 2. Otherwise
        it is stray when the image has no such partition of that topic id (the topic was
        deleted, or re-created under a new id), or the partition's replicas leave this broker out.
        """
        # 1. No topic id.
        topic_id = log.topic_id
        if topic_id is None:
            return True
        # 2. The image's partition of that id, and this broker among its replicas.
        partition = topics_image.get_partition(topic_id, log.topic_partition.partition)
        return partition is None or broker_id not in partition.replicas

    @staticmethod
    def _read_checkpoint_leniently(checkpoint) -> dict[TopicPartition, int]:
        try:
            return checkpoint.read()
        except KafkaStorageException as exc:
            _log.warning("checkpoint_unreadable", path=checkpoint.path, error=str(exc))
            return {}

    def shutdown(self) -> None:
        """Mirrors kafka.log.LogManager#shutdown: flush and close every log, checkpoint, mark clean."""
        # 1. An offline directory is skipped entirely (no checkpoints, no marker).
        if self.disk.offline:
            self.current_logs.clear()
            self.future_logs.clear()
            self.started = False
            return
        # 2. Flush and close each log.
        for log in self.all_logs():
            log.flush()
            log.close()
        # 3. Write recovery points and log start offsets.
        self.checkpoint_recovery_offsets()
        self.checkpoint_log_start_offsets()
        # 4. Leave the clean-shutdown marker.
        self.disk.clean_shutdown = True
        self.started = False
        _log.info("log_manager_shut_down", broker_id=self.disk.broker_id)

    # -- lookups -----------------------------------------------------------------------------

    def get_log(self, topic_partition: TopicPartition, is_future: bool = False) -> UnifiedLog | None:
        """Mirrors kafka.log.LogManager#getLog."""
        return (self.future_logs if is_future else self.current_logs).get(topic_partition)

    def all_logs(self) -> list[UnifiedLog]:
        """Mirrors kafka.log.LogManager#allLogs: current and future logs."""
        return list(self.current_logs.values()) + list(self.future_logs.values())

    def logs_by_topic(self, topic: str) -> list[UnifiedLog]:
        """Mirrors kafka.log.LogManager#logsByTopic."""
        return [log for tp, log in self.current_logs.items() if tp.topic == topic]

    @property
    def live_log_dirs(self) -> list[str]:
        """Mirrors kafka.log.LogManager#liveLogDirs."""
        return [] if self.disk.offline else [self.disk.log_dir]

    def get_or_create_log(
        self,
        topic_partition: TopicPartition,
        is_new: bool = False,
        topic_id: Uuid | None = None,
        is_future: bool = False,
    ) -> UnifiedLog:
        """Mirrors kafka.log.LogManager#getOrCreateLog.

        The existing log, or a new empty one on the disk. A topic id given here is assigned to
        a log that has none; a different id than the log's raises InconsistentTopicIdException.
        """
        log = self.get_log(topic_partition, is_future)
        if log is None:
            # 1. Creating needs an online directory.
            if self.disk.offline:
                if not is_new:
                    raise KafkaStorageException(
                        f"Can not create log for {topic_partition} because log directories {self.disk.log_dir} are offline"
                    )
                raise KafkaStorageException(f"No log directories available. Tried {self.disk.log_dir}")
            # 2. Create the log on the disk with the topic's limits (its overrides read afresh).
            self.fetch_topic_config_overrides([topic_partition.topic])
            log = UnifiedLog.create(
                topic_partition,
                self.disk,
                time=self.time,
                topic_id=topic_id,
                is_future=is_future,
            )
            self._apply_config(log, topic_partition.topic)
            (self.future_logs if is_future else self.current_logs)[topic_partition] = log
            _log.info("created_log", topic_partition=str(topic_partition), is_future=is_future)
        # 3. Give a log without a topic id the one we were told; refuse a conflicting one.
        if topic_id is not None:
            if log.topic_id is None:
                log.assign_topic_id(topic_id)
            elif log.topic_id != topic_id:
                raise InconsistentTopicIdException(
                    f"Tried to assign topic ID {topic_id} to log for topic partition {topic_partition},"
                    f"but log already contained topic ID {log.topic_id}"
                )
        return log

    # -- deletion ----------------------------------------------------------------------------

    def add_stray_log(self, stray_partition: TopicPartition, stray_log: UnifiedLog) -> None:
        """Mirrors kafka.log.LogManager#addStrayLog."""
        self.stray_logs[stray_partition] = stray_log

    def set_aside_stray_logs(self, is_stray: Any) -> list[TopicPartition]:
        """The ``isStray`` branch of kafka.log.LogManager#loadLog, for logs already loaded.

        A KRaft broker in Kafka 3.8 loads its logs only at the first metadata publish
        (BrokerMetadataPublisher#initializeManagers), passing ``isStray``; kafka_ref's broker
        loads them at start-up as in ZooKeeper mode, so the first publish applies the same test
        to what was loaded: 1. each current log that ``is_stray`` picks leaves the manager;
        2. its directory is renamed aside ("-stray") and kept, not deleted, as Kafka 3.8 does;
        3. the recovery and log start offset checkpoints are rewritten without it.
        Returns the partitions set aside.
        """
        strays = [tp for tp, log in sorted(self.current_logs.items()) if is_stray(log)]
        for tp in strays:
            # 1. Out of the current logs. 2. Renamed aside, recorded as stray.
            log = self.current_logs.pop(tp)
            self.disk.rename_stray(tp)
            self.add_stray_log(tp, log)
            _log.warning("log_marked_stray", broker_id=self.disk.broker_id, topic_partition=str(tp),
                         topic_id=str(log.topic_id))
        # 3. Checkpoints without them.
        if strays and not self.disk.offline:
            self.checkpoint_recovery_offsets()
            self.checkpoint_log_start_offsets()
        return strays

    def async_delete(self, topic_partition: TopicPartition, is_future: bool = False, checkpoint: bool = True) -> UnifiedLog | None:
        """Mirrors LogManager#asyncDelete.

        Forget the log and remove its directory from the disk; returns the removed log, or
        None if there was none. Kafka renames the directory and deletes the files later; the
        data is gone here at once. A missing log is an error only while the directory is
        offline (the log may be there, unreachable). A log on an offline directory is
        forgotten but its directory cannot be renamed: KafkaStorageException, as Kafka's
        UnifiedLog#renameDir raises (LocalLog#maybeHandleIOException refuses an offline dir).
        ``checkpoint`` False leaves the checkpoint files to the caller (the batch overload).
        """
        # 1. Remove it from the manager.
        logs = self.future_logs if is_future else self.current_logs
        removed = logs.pop(topic_partition, None)
        if removed is None:
            if self.disk.offline:
                raise KafkaStorageException(
                    f"Failed to delete log for {'future ' if is_future else ''}{topic_partition} because it may be "
                    f"in one of the offline directories {self.disk.log_dir}"
                )
            return None
        # 2. Rename (here: delete) the directory; an offline directory refuses it.
        if self.disk.offline:
            raise KafkaStorageException(
                f"Error while renaming dir for {topic_partition} in log dir {self.disk.log_dir}: "
                f"the log dir is already offline due to a previous IO exception."
            )
        removed.delete()
        self.disk.delete_local_log(topic_partition, is_future)
        # 3. Rewrite the checkpoints without it.
        if checkpoint:
            self.checkpoint_recovery_offsets()
            self.checkpoint_log_start_offsets()
        _log.info("deleted_log", topic_partition=str(topic_partition), is_future=is_future)
        return removed

    def async_delete_partitions(self, topic_partitions: Iterable[TopicPartition],
                                error_handler: Callable[[TopicPartition, BaseException], None]) -> None:
        """Mirrors kafka.log.LogManager#asyncDelete(Iterable, boolean, BiConsumer) (the batch overload; never stray here).

        What ReplicaManager#stopPartitions calls: 1. for each partition, the current log and then
        the future log, each only if this manager holds one (a partition without a log is not an
        error), deleted without checkpointing; a failure goes to ``error_handler`` and the next
        partition is tried; 2. the directory's checkpoints are written once, if any log was
        there to delete.
        """
        touched_dir = False
        # 1. Delete each partition's logs.
        for tp in topic_partitions:
            try:
                if self.get_log(tp) is not None:
                    touched_dir = True
                    self.async_delete(tp, checkpoint=False)
                if self.get_log(tp, is_future=True) is not None:
                    touched_dir = True
                    self.async_delete(tp, is_future=True, checkpoint=False)
            except RUN_ENDING:
                raise
            except Exception as exc:  # Kafka's `case e: Throwable => errorHandler(topicPartition, e)`
                error_handler(tp, exc)
        # 2. One checkpoint for the directory.
        if touched_dir:
            self.checkpoint_recovery_offsets()
            self.checkpoint_log_start_offsets()

    def delete_log(self, topic_partition: TopicPartition, is_future: bool = False) -> UnifiedLog | None:
        """Delete a log if present (the same as async_delete here)."""
        return self.async_delete(topic_partition, is_future)

    # -- truncation --------------------------------------------------------------------------

    def truncate_to(self, partition_offsets: Mapping[TopicPartition, int], is_future: bool = False) -> bool:
        """Mirrors kafka.log.LogManager#truncateTo: truncate several logs; checkpoint recovery points after."""
        # 1. Truncate each log that exists.
        truncated = False
        for tp, offset in partition_offsets.items():
            log = self.get_log(tp, is_future)
            if log is not None and log.truncate_to(offset):
                truncated = True
        # 2. Recovery points may have moved back.
        if truncated:
            self.checkpoint_recovery_offsets()
        return truncated

    def truncate_fully_and_start_at(
        self,
        topic_partition: TopicPartition,
        new_offset: int,
        is_future: bool = False,
        log_start_offset: int | None = None,
    ) -> None:
        """Mirrors kafka.log.LogManager#truncateFullyAndStartAt."""
        log = self.get_log(topic_partition, is_future)
        if log is not None:
            log.truncate_fully_and_start_at(new_offset, log_start_offset)
            self.checkpoint_recovery_offsets()

    # -- checkpoints and periodic work -------------------------------------------------------

    def checkpoint_recovery_offsets(self) -> None:
        """Mirrors kafka.log.LogManager#checkpointLogRecoveryOffsets: write every log's recovery point."""
        if self.disk.offline:
            return
        self.disk.recovery_point_checkpoint.write({tp: log.recovery_point for tp, log in self.current_logs.items()})

    checkpoint_log_recovery_offsets = checkpoint_recovery_offsets

    def checkpoint_log_start_offsets(self) -> None:
        """Mirrors kafka.log.LogManager#checkpointLogStartOffsets.

        Only logs whose log start offset lies past their first retained data are written;
        the others can recover it from the data itself.
        """
        if self.disk.offline:
            return
        self.disk.log_start_offset_checkpoint.write(
            {
                tp: log.log_start_offset
                for tp, log in self.current_logs.items()
                if log.log_start_offset > log.local_log.first_segment_base_offset
            }
        )

    def checkpoint_high_watermarks(self) -> None:
        """Mirrors kafka.server.ReplicaManager#checkpointHighWatermarks for the logs managed here.

        Writes every current log's HW to replication-offset-checkpoint (ReplicaManager calls
        this on its timer and at a clean shutdown).
        """
        if self.disk.offline:
            return
        self.disk.replication_offset_checkpoint.write({tp: log.high_watermark for tp, log in self.current_logs.items()})

    def flush_dirty_logs(self) -> None:
        """Mirrors kafka.log.LogManager#flushDirtyLogs: every log's recovery point moves to its end."""
        for log in self.all_logs():
            log.flush()

    def cleanup_logs(self) -> int:
        """Mirrors kafka.log.LogManager#cleanupLogs: run retention on every log; returns batches deleted.

        Nothing on an offline directory (its logs are being dropped)."""
        if self.disk.offline:
            return 0
        deleted = sum(log.delete_old_segments() for log in list(self.current_logs.values()))
        if deleted:
            _log.info("log_retention", broker_id=self.disk.broker_id, batches_deleted=deleted)
        return deleted

    def handle_log_dir_failure(self, reason: str = "log directory failure") -> list[TopicPartition]:
        """Mirrors kafka.log.LogManager#handleLogDirFailure: the disk goes offline, its logs are dropped."""
        # 1. Mark the directory offline (closes every LocalLog's handlers).
        self.disk.mark_offline(reason)
        # 2. Forget the logs on it and return their partitions.
        offline = sorted(self.current_logs)
        for log in self.all_logs():
            log.close_handlers()
        self.current_logs.clear()
        self.future_logs.clear()
        return offline

    def __repr__(self) -> str:
        return f"LogManager(broker_id={self.disk.broker_id}, logs={len(self.current_logs)}, started={self.started})"
