"""The group cache and the ``__consumer_offsets`` partitions behind it.

Mirrors kafka.coordinator.group.GroupMetadataManager (Kafka 3.x) and
org.apache.kafka.coordinator.group.OffsetConfig. Seed 000 §``__consumer_offset`` leader 切换处理:
when this broker becomes leader of an offsets partition the coordinator loads every group and
committed offset stored in it (``load_groups_for_partition`` → ``load_groups_and_offsets``);
when it stops leading it forgets them (``remove_groups_for_partition``). In between it writes
group metadata and offset commits to that partition with acks=-1 and answers offset fetches
from memory.

Loading and unloading run as jobs on the broker's KafkaScheduler, one after another (Kafka
gives the manager a single-thread scheduler, "group-metadata-manager-"). A load yields to the
event loop between chunks of ``offsets.load.buffer.size`` bytes, so requests for groups of a
partition being loaded see COORDINATOR_LOAD_IN_PROGRESS, and a leadership change in the middle
stops the load at the next chunk.

Which offset bounds the load is a switch (docs/DESIGN.md §1.9), chosen by the broker's code
version (``kafka_ref.broker.version``): ``load_bound="log_end_offset"`` (the default; Kafka
0.11.0.0 onwards, KAFKA-5059, in a helper still named ``highWaterMark`` that calls
``getLogEndOffset``) or ``"high_watermark"`` (Kafka 0.10.x, seed 000: ``getHighWatermark``). In
both, the bound only decides whether another chunk is read: every record of a chunk (up to
``offsets.load.buffer.size`` bytes from the current offset) is replayed, even past the bound.
So under 0.10.x a new leader whose HW is still at its log start loads nothing, and with a small
load buffer it stops at the first batch boundary at or past the HW.
"""

from __future__ import annotations

import inspect
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import anyio

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.offset_fetch import INVALID_OFFSET, NO_METADATA, OffsetFetchResponsePartitions
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.utils import java_string_hash, utils_abs
from kafka_ref.coordinator.group import schemas
from kafka_ref.coordinator.group.group_metadata import (
    CommitRecordMetadataAndOffset,
    Dead,
    Empty,
    GroupMetadata,
    IllegalStateException,
    OffsetAndMetadata,
)
from kafka_ref.log.fetch_data import FetchIsolation

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
MAGIC_VALUE_V2 = 2
LOAD_BOUNDS = ("high_watermark", "log_end_offset")


@dataclass(frozen=True, slots=True)
class OffsetConfig:
    """Mirrors org.apache.kafka.coordinator.group.OffsetConfig (Kafka's defaults).

    ``from_kafka_config`` reads the keys KafkaConfig knows; offset.metadata.max.bytes and
    offsets.topic.segment.bytes keep Kafka's defaults.
    """

    max_metadata_size: int = 4096
    load_buffer_size: int = 5 * 1024 * 1024
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600000
    offsets_topic_num_partitions: int = 50
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_topic_replication_factor: int = 3
    offset_commit_timeout_ms: int = 5000
    offset_commit_required_acks: int = -1

    @classmethod
    def from_kafka_config(cls, config: KafkaConfig) -> "OffsetConfig":
        """Mirrors kafka.coordinator.group.GroupCoordinator#offsetConfig."""
        return cls(
            load_buffer_size=config.get("offsets.load.buffer.size"),
            offsets_retention_ms=config.get("offsets.retention.minutes") * 60 * 1000,
            offsets_retention_check_interval_ms=config.get("offsets.retention.check.interval.ms"),
            offsets_topic_num_partitions=config.get("offsets.topic.num.partitions"),
            offsets_topic_replication_factor=config.get("offsets.topic.replication.factor"),
            offset_commit_timeout_ms=config.get("offsets.commit.timeout.ms"),
            offset_commit_required_acks=config.get("offsets.commit.required.acks"),
        )


def partition_for(group_id: str, partition_count: int) -> int:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#partitionFor: ``Utils.abs(groupId.hashCode) % n``."""
    return utils_abs(java_string_hash(group_id)) % partition_count


def maybe_convert_offset_commit_error(error: Errors) -> Errors:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#maybeConvertOffsetCommitError.

    Append errors become the errors a committing consumer understands.
    """
    if error is Errors.NETWORK_EXCEPTION:
        return Errors.COORDINATOR_LOAD_IN_PROGRESS
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
        return Errors.INVALID_COMMIT_OFFSET_SIZE
    return error


def _convert_store_group_error(error: Errors) -> Errors:
    """The error mapping inside GroupMetadataManager#storeGroup's putCacheCallback."""
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error is Errors.REQUEST_TIMED_OUT:
        return Errors.REBALANCE_IN_PROGRESS
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
        return Errors.UNKNOWN_SERVER_ERROR
    return error


class GroupMetadataManager:
    """Mirrors kafka.coordinator.group.GroupMetadataManager."""

    def __init__(
        self,
        broker_id: int,
        metadata_version: MetadataVersion,
        config: OffsetConfig,
        replica_manager: Any,
        scheduler: Any,
        time: Time,
        *,
        load_bound: str = "log_end_offset",
    ) -> None:
        if load_bound not in LOAD_BOUNDS:
            raise ValueError(f"load_bound must be one of {LOAD_BOUNDS}, not {load_bound!r}")
        self.broker_id = broker_id
        self.metadata_version = metadata_version
        self.config = config
        self.replica_manager = replica_manager
        self.scheduler = scheduler
        self.time = time
        self.load_bound = load_bound
        self.group_metadata_cache: dict[str, GroupMetadata] = {}
        self.loading_partitions: set[int] = set()
        self.owned_partitions: set[int] = set()
        self.epoch_for_partition_id: dict[int, int] = {}
        # How far each running load has read (observability: a load is visible while it runs).
        self.load_positions: dict[int, int] = {}
        self.shutting_down = False
        self.group_metadata_topic_partition_count = config.offsets_topic_num_partitions
        self._jobs: list[tuple[str, Callable[[], Any]]] = []
        self._draining = False
        self._log = state_change_logger(broker_id=broker_id)

    # -- life cycle ------------------------------------------------------------------------

    def startup(self, retrieve_group_metadata_topic_partition_count: Callable[[], int],
                enable_metadata_expiration: bool = False) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#startup.

        1. Learn the offsets topic's partition count. 2. With ``enable_metadata_expiration``,
        expire offsets (and the groups they leave empty) now and every
        offsets.retention.check.interval.ms: each run is a job on the manager's single
        scheduler thread, so it never interleaves with a load or an unload.
        """
        # 1. The partition count.
        self.group_metadata_topic_partition_count = retrieve_group_metadata_topic_partition_count()
        # 2. The "delete-expired-group-metadata" task.
        if enable_metadata_expiration:
            self.scheduler.schedule(
                "group-metadata-manager-delete-expired-group-metadata",
                lambda: self._submit("delete-expired-group-metadata", self.cleanup_expired_group_metadata),
                delay_ms=0, period_ms=self.config.offsets_retention_check_interval_ms)

    def shutdown(self) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#shutdown: loads stop at their next chunk."""
        self.shutting_down = True
        self._jobs.clear()

    def _submit(self, name: str, job: Callable[[], Any]) -> None:
        """Queue a job for the manager's single scheduler thread (jobs never overlap)."""
        self._jobs.append((name, job))
        if not self._draining:
            self._draining = True
            self.scheduler.schedule(f"group-metadata-manager-{name}", self._drain_jobs)

    def has_pending_jobs(self) -> bool:
        """True while a load or unload is queued or running on the manager's scheduler."""
        return bool(self._jobs) or self._draining

    async def _drain_jobs(self) -> None:
        try:
            while self._jobs:
                _name, job = self._jobs.pop(0)
                result = job()
                if inspect.isawaitable(result):
                    await result
        finally:
            self._draining = False

    # -- ownership -------------------------------------------------------------------------

    def current_groups(self) -> list[GroupMetadata]:
        return list(self.group_metadata_cache.values())

    def is_partition_owned(self, partition: int) -> bool:
        return partition in self.owned_partitions

    def is_partition_loading(self, partition: int) -> bool:
        return partition in self.loading_partitions

    def partition_for(self, group_id: str) -> int:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#partitionFor."""
        return partition_for(group_id, self.group_metadata_topic_partition_count)

    def is_group_local(self, group_id: str) -> bool:
        return self.is_partition_owned(self.partition_for(group_id))

    def is_group_loading(self, group_id: str) -> bool:
        return self.is_partition_loading(self.partition_for(group_id))

    def is_loading(self) -> bool:
        return bool(self.loading_partitions)

    def group_not_exists(self, group_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#groupNotExists: owned here, and absent or Dead."""
        group = self.group_metadata_cache.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_(Dead))

    def add_owned_partition(self, partition: int) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#addOwnedPartition (for tests)."""
        self.owned_partitions.add(partition)

    def add_loading_partition(self, partition: int) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#addLoadingPartition: False if owned or already loading."""
        if partition in self.owned_partitions or partition in self.loading_partitions:
            return False
        self.loading_partitions.add(partition)
        return True

    def maybe_update_coordinator_epoch(self, partition: int, epoch: int | None) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#maybeUpdateCoordinatorEpoch.

        Keeps the largest epoch seen per partition. True when ``epoch`` is None (no epoch to
        check) or at least the current one; a load or unload from an older epoch is stale.
        """
        current = self.epoch_for_partition_id.get(partition)
        if epoch is not None and (current is None or epoch > current):
            self.epoch_for_partition_id[partition] = epoch
            current = epoch
        return epoch is None or epoch == current

    # -- the cache -------------------------------------------------------------------------

    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self.group_metadata_cache.get(group_id)

    def get_or_maybe_create_group(self, group_id: str, create_if_not_exist: bool) -> GroupMetadata | None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#getOrMaybeCreateGroup (new groups start Empty)."""
        group = self.group_metadata_cache.get(group_id)
        if group is None and create_if_not_exist:
            group = GroupMetadata(group_id, Empty, self.time, self.broker_id)
            self.group_metadata_cache[group_id] = group
        return group

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#addGroup: the cached group wins if there is one."""
        return self.group_metadata_cache.setdefault(group.group_id, group)

    # -- writes ----------------------------------------------------------------------------

    def get_magic(self, partition: int) -> int | None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#getMagic: the record format if the log is local."""
        log = self.replica_manager.get_log(TopicPartition(GROUP_METADATA_TOPIC_NAME, partition))
        return None if log is None else MAGIC_VALUE_V2

    def _append_for_group(self, records: Mapping[TopicPartition, MemoryRecords],
                          callback: Callable[[dict[TopicPartition, Any]], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#appendForGroup: acks=-1, internal, origin coordinator."""
        self.replica_manager.append_records(
            timeout_ms=self.config.offset_commit_timeout_ms,
            required_acks=-1,
            internal_topics_allowed=True,
            origin="coordinator",
            entries_per_partition=records,
            response_callback=callback,
        )

    def store_group(self, group: GroupMetadata, group_assignment: Mapping[str, bytes],
                    response_callback: Callable[[Errors], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#storeGroup.

        1. Not hosting the partition: NOT_COORDINATOR. 2. One record, key = the group, value =
        generation, protocol, leader and every member with its assignment. 3. Append with
        acks=-1; the answer's error is translated for the group's members.
        """
        # 1. Only a broker with the partition's log can write it.
        partition = self.partition_for(group.group_id)
        if self.get_magic(partition) is None:
            response_callback(Errors.NOT_COORDINATOR)
            return
        # 2. The record (CREATE_TIME, now).
        timestamp = self.time.milliseconds()
        key = schemas.group_metadata_key(group.group_id)
        value = schemas.group_metadata_value(group, group_assignment, self.metadata_version)
        records = MemoryRecords.with_records([SimpleRecord(key, value, timestamp=timestamp)])
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, partition)
        generation_id = group.generation_id

        # 3. Translate the append's outcome.
        def put_cache_callback(response_status: dict[TopicPartition, Any]) -> None:
            if len(response_status) != 1 or tp not in response_status:
                raise IllegalStateException(f"Append status {response_status} should only have one partition {tp}")
            error = response_status[tp].error
            if error is not Errors.NONE:
                self._log.warning("group_metadata_append_failed", group_id=group.group_id, generation_id=generation_id,
                                  error=error.name)
            response_callback(Errors.NONE if error is Errors.NONE else _convert_store_group_error(error))

        self._append_for_group({tp: records}, put_cache_callback)

    def cleanup_expired_group_metadata(self) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#cleanupGroupMetadata() (the periodic expiration).

        1. Every cached group drops its expired offsets (GroupMetadata#removeExpiredOffsets at
        this instant, offsets.retention.minutes) and, through ``cleanup_group_metadata``, the
        tombstones are written and groups left Empty without offsets die. 2. A line is logged
        only when something expired.
        """
        # 1. Expire.
        current_timestamp = self.time.milliseconds()
        retention_ms = self.config.offsets_retention_ms
        removed = self.cleanup_group_metadata(
            list(self.group_metadata_cache.values()),
            lambda group: group.remove_expired_offsets(current_timestamp, retention_ms))
        # 2. Report.
        if removed > 0:
            self._log.info("expired_offsets_removed", offsets=removed,
                           elapsed_ms=self.time.milliseconds() - current_timestamp)

    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata],
                               selector: Callable[[GroupMetadata], Mapping[TopicPartition, OffsetAndMetadata]]) -> int:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#cleanupGroupMetadata(groups, ...).

        Per group: 1. ``selector`` removes offsets from the group (all of them, for DeleteGroups);
        an Empty group left without offsets dies. 2. A tombstone per removed offset and, for a dead
        group that was in the cache with a generation above 0, one for the group record. 3. The
        tombstones go straight to the local ``__consumer_offsets`` leader with acks=0 (a lost one
        is written again by a later cleanup); a group whose partition is not local here is skipped.
        Returns how many offsets were removed.
        """
        offsets_removed = 0
        for group in groups:
            # 1. Remove the selected offsets; maybe the group dies.
            removed = selector(group)
            if group.is_(Empty) and not group.has_offsets():
                group.transition_to(Dead)
            group_is_dead = group.is_(Dead)
            generation = group.generation_id
            partition_id = self.partition_for(group.group_id)
            if self.get_magic(partition_id) is None:
                self._log.info("cleanup_skipped_not_coordinator", group_id=group.group_id)
                continue
            partition = self.replica_manager.online_partition(TopicPartition(GROUP_METADATA_TOPIC_NAME, partition_id))
            if partition is None:
                continue
            # 2. The tombstones.
            timestamp = self.time.milliseconds()
            tombstones = [SimpleRecord(schemas.offset_commit_key(group.group_id, tp), None, timestamp=timestamp)
                          for tp in removed]
            if group_is_dead and self.group_metadata_cache.get(group.group_id) is group:
                del self.group_metadata_cache[group.group_id]
                # A group of generation 0 only ever stored offsets: no group record to remove.
                if generation > 0:
                    tombstones.append(SimpleRecord(schemas.group_metadata_key(group.group_id), None, timestamp=timestamp))
            # 3. Append to the leader, no acks.
            if tombstones:
                try:
                    partition.append_records_to_leader(MemoryRecords.with_records(tombstones), origin="coordinator",
                                                       required_acks=0)
                    offsets_removed += len(removed)
                except RUN_ENDING:
                    raise
                except Exception as exc:  # not the leader any more, etc.: a later cleanup writes them again
                    self._log.warning("cleanup_tombstones_failed", group_id=group.group_id, error=repr(exc))
        return offsets_removed

    def _validate_offset_metadata_length(self, metadata: str | None) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#validateOffsetMetadataLength."""
        return metadata is None or len(metadata) <= self.config.max_metadata_size

    def store_offsets(
        self,
        group: GroupMetadata,
        consumer_id: str,
        offset_topic_partition: TopicPartition,
        offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
        response_callback: Callable[[dict[TopicPartition, Errors]], None],
    ) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#storeOffsets (non-transactional commits).

        1. Offsets with too much metadata are refused (OFFSET_METADATA_TOO_LARGE); 2. not
        hosting the partition: NOT_COORDINATOR; 3. one record per partition in one batch,
        staged as pending in the group; 4. appended with acks=-1; on success the commits
        become visible (unless the group died meanwhile), on failure they are dropped.
        """
        # 1. Size check.
        filtered = {tp: o for tp, o in offset_metadata.items() if self._validate_offset_metadata_length(o.metadata)}
        if not filtered:
            response_callback({tp: Errors.OFFSET_METADATA_TOO_LARGE for tp in offset_metadata})
            return
        # 2. Coordinator check.
        if self.get_magic(self.partition_for(group.group_id)) is None:
            response_callback({tp: Errors.NOT_COORDINATOR for tp in offset_metadata})
            return
        # 3. The records (CREATE_TIME, now) and the staged commits.
        timestamp = self.time.milliseconds()
        records = MemoryRecords.with_records([
            SimpleRecord(schemas.offset_commit_key(group.group_id, tp),
                         schemas.offset_commit_value(o, self.metadata_version), timestamp=timestamp)
            for tp, o in filtered.items()
        ])
        group.prepare_offset_commit(filtered)

        def put_cache_callback(response_status: dict[TopicPartition, Any]) -> None:
            if len(response_status) != 1 or offset_topic_partition not in response_status:
                raise IllegalStateException(
                    f"Append status {response_status} should only have one partition {offset_topic_partition}")
            status = response_status[offset_topic_partition]
            if status.error is Errors.NONE:
                if not group.is_(Dead):
                    for tp, o in filtered.items():
                        group.on_offset_commit_append(tp, CommitRecordMetadataAndOffset(status.base_offset, o))
                error = Errors.NONE
            else:
                if not group.is_(Dead):
                    for tp, o in filtered.items():
                        group.fail_pending_offset_write(tp, o)
                self._log.warning("offset_commit_append_failed", group_id=group.group_id, member_id=consumer_id,
                                  error=status.error.name)
                error = maybe_convert_offset_commit_error(status.error)
            response_callback({
                tp: error if self._validate_offset_metadata_length(o.metadata) else Errors.OFFSET_METADATA_TOO_LARGE
                for tp, o in offset_metadata.items()
            })

        # 4. Append.
        self._append_for_group({offset_topic_partition: records}, put_cache_callback)

    def get_offsets(self, group_id: str, require_stable: bool,
                    partitions: Iterable[TopicPartition] | None) -> dict[TopicPartition, OffsetFetchResponsePartitions]:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#getOffsets.

        Never a stale offset: the cached commit, INVALID_OFFSET (-1) when there is none, or
        UNSTABLE_OFFSET_COMMIT while a commit is being written and ``require_stable`` is set.
        ``partitions=None`` returns every offset the group has.
        """
        def none(tp: TopicPartition, error: Errors = Errors.NONE) -> OffsetFetchResponsePartitions:
            return OffsetFetchResponsePartitions(partition_index=tp.partition, committed_offset=INVALID_OFFSET,
                                                 metadata=NO_METADATA, error_code=error.code)

        group = self.group_metadata_cache.get(group_id)
        # 1. Unknown or dead group: nothing committed.
        if group is None or group.is_(Dead):
            return {tp: none(tp) for tp in (partitions or ())}
        # 2. Each asked partition (or all known ones).
        result: dict[TopicPartition, OffsetFetchResponsePartitions] = {}
        for tp in (group.all_offsets() if partitions is None else partitions):
            if require_stable and group.has_pending_offset_commits_for_topic_partition(tp):
                result[tp] = none(tp, Errors.UNSTABLE_OFFSET_COMMIT)
                continue
            committed = group.offset(tp)
            if committed is None:
                result[tp] = none(tp)
            else:
                result[tp] = OffsetFetchResponsePartitions(
                    partition_index=tp.partition, committed_offset=committed.offset,
                    committed_leader_epoch=-1 if committed.leader_epoch is None else committed.leader_epoch,
                    metadata=committed.metadata, error_code=Errors.NONE.code)
        return result

    # -- loading (seed 000 §becoming leader) -----------------------------------------------

    def schedule_load_group_and_offsets(self, offsets_partition: int, coordinator_epoch: int,
                                        on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#scheduleLoadGroupAndOffsets (seed 000 loadGroupsForPartition)."""
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, offsets_partition)
        self._log.info("offsets_partition_load_scheduled", topic_partition=str(tp), coordinator_epoch=coordinator_epoch)
        start_ms = self.time.milliseconds()
        self._submit(f"load-{tp}", lambda: self.load_groups_and_offsets(tp, coordinator_epoch, on_group_loaded, start_ms))

    load_groups_for_partition = schedule_load_group_and_offsets

    async def load_groups_and_offsets(self, tp: TopicPartition, coordinator_epoch: int,
                                      on_group_loaded: Callable[[GroupMetadata], None], start_ms: int | None = None) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#loadGroupsAndOffsets.

        1. A stale coordinator epoch, or a partition already loading or owned, is skipped.
        2. The partition is "loading" while its records are replayed, then "owned" — even if
        the load failed or stopped early, as in Kafka (an unload scheduled by the leadership
        change that stopped it follows).
        """
        partition = tp.partition
        start_ms = self.time.milliseconds() if start_ms is None else start_ms
        # 1. Epoch and duplicate checks.
        if not self.maybe_update_coordinator_epoch(partition, coordinator_epoch):
            self._log.info("offsets_partition_load_skipped", topic_partition=str(tp), coordinator_epoch=coordinator_epoch,
                           reason="stale coordinator epoch", current_epoch=self.epoch_for_partition_id.get(partition))
            return
        if not self.add_loading_partition(partition):
            self._log.info("offsets_partition_load_skipped", topic_partition=str(tp), coordinator_epoch=coordinator_epoch,
                           reason="already loading or loaded")
            return
        # 2. Load; whatever happens the partition ends up owned.
        self._log.info("offsets_partition_loading", topic_partition=str(tp), coordinator_epoch=coordinator_epoch)
        try:
            groups, offsets = await self.do_load_groups_and_offsets(tp, on_group_loaded)
            self._log.info("offsets_partition_loaded", topic_partition=str(tp), coordinator_epoch=coordinator_epoch,
                           groups=groups, offsets=offsets, load_time_ms=self.time.milliseconds() - start_ms)
        except RUN_ENDING:
            raise
        except Exception as exc:  # Kafka's `case t: Throwable => error(...)`
            self._log.error("offsets_partition_load_failed", topic_partition=str(tp), error=repr(exc))
        finally:
            self.owned_partitions.add(partition)
            self.loading_partitions.discard(partition)
            self.load_positions.pop(partition, None)
            self._log.info("offsets_partition_owned", topic_partition=str(tp), coordinator_epoch=coordinator_epoch)

    def _load_bound(self, tp: TopicPartition) -> int:
        """The offset below which the load reads another chunk: the leader's LEO (0.11.0+) or HW
        (0.10.x), see the module doc; -1 when this broker no longer leads (the load ends)."""
        partition = self.replica_manager.online_partition(tp)
        leader_log = partition.leader_log_if_local() if partition is not None else None
        if leader_log is None:
            return -1
        return leader_log.high_watermark if self.load_bound == "high_watermark" else leader_log.log_end_offset

    async def do_load_groups_and_offsets(self, tp: TopicPartition,
                                         on_group_loaded: Callable[[GroupMetadata], None]) -> tuple[int, int]:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#doLoadGroupsAndOffsets (Kafka 3.7; seed 000
        loadGroupsAndOffsets; the 0.10.x bound behind ``load_bound``).

        Replays the partition from its log start, chunk by chunk, while the current offset is
        below the bound (re-read before every chunk, so losing leadership, bound -1, ends the
        loop): every record of every batch read is replayed, for each key the last record wins
        and a null value (tombstone) removes it. An offset commit remembers the offset of the
        first record of its batch. Then groups with metadata are loaded with their offsets,
        groups with only offsets become Empty groups, and a group the log says was removed but
        which is still cached is an error. Returns (groups, offsets) loaded. Transactional
        offset commits (pending until a COMMIT marker) are not modelled: control batches are
        skipped.
        """
        log = self.replica_manager.get_log(tp)
        if log is None:
            self._log.warning("offsets_partition_load_no_log", topic_partition=str(tp))
            return 0, 0
        loaded_offsets: dict[schemas.GroupTopicPartition, CommitRecordMetadataAndOffset] = {}
        loaded_groups: dict[str, GroupMetadata] = {}
        removed_groups: set[str] = set()
        # 1. Read chunk by chunk from the log start while below the bound.
        curr_offset = log.log_start_offset
        bound = self._load_bound(tp)
        read_at_least_one_record = True
        while curr_offset < bound and read_at_least_one_record and not self.shutting_down:
            fetch_data_info = log.read(curr_offset, self.config.load_buffer_size, FetchIsolation.LOG_END, True)
            read_at_least_one_record = len(fetch_data_info.records) > 0
            for batch in fetch_data_info.records:
                if batch.is_control_batch:  # transaction markers: transactional commits are not modelled
                    curr_offset = batch.next_offset
                    continue
                batch_base_offset: int | None = None
                for record in batch:
                    if record.key is None:
                        raise IllegalStateException("Group metadata/offset entry key should not be null")
                    if batch_base_offset is None:
                        batch_base_offset = record.offset  # the first record's offset, as Kafka takes it
                    # 2. Replay the record: last write wins, tombstones remove.
                    key = schemas.read_message_key(record.key)
                    if isinstance(key, schemas.OffsetKey):
                        if record.value is None:
                            loaded_offsets.pop(key.key, None)
                        else:
                            value = schemas.read_offset_message_value(record.value)
                            assert value is not None
                            loaded_offsets[key.key] = CommitRecordMetadataAndOffset(batch_base_offset, value)
                    elif isinstance(key, schemas.GroupMetadataKey):
                        group = schemas.read_group_message_value(key.key, record.value, self.time, self.broker_id)
                        if group is not None:
                            removed_groups.discard(key.key)
                            loaded_groups[key.key] = group
                        else:
                            loaded_groups.pop(key.key, None)
                            removed_groups.add(key.key)
                    else:
                        self._log.warning("offsets_partition_unknown_key", topic_partition=str(tp), version=key.version)
                curr_offset = batch.next_offset
            self.load_positions[tp.partition] = curr_offset
            # Another task may run here (a request, a LeaderAndIsr); then the bound is re-read.
            await anyio.sleep(0)
            bound = self._load_bound(tp)
        # 3. Split the offsets between groups with metadata and offsets-only groups.
        group_offsets: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        empty_group_offsets: dict[str, dict[TopicPartition, CommitRecordMetadataAndOffset]] = {}
        for gtp, record in loaded_offsets.items():
            target = group_offsets if gtp.group in loaded_groups else empty_group_offsets
            target.setdefault(gtp.group, {})[gtp.topic_partition] = record
        # 4. Groups with metadata.
        for group in loaded_groups.values():
            self._load_group(group, group_offsets.get(group.group_id, {}))
            on_group_loaded(group)
        # 5. Groups that only store offsets: Empty groups.
        for group_id, offsets in empty_group_offsets.items():
            group = GroupMetadata(group_id, Empty, self.time, self.broker_id)
            self._load_group(group, offsets)
            on_group_loaded(group)
        # 6. A removed group must not still be cached.
        for group_id in removed_groups:
            if group_id in self.group_metadata_cache and group_id not in empty_group_offsets:
                raise IllegalStateException(f"Unexpected unload of active group {group_id} while loading partition {tp}")
        return len(loaded_groups) + len(empty_group_offsets), len(loaded_offsets)

    def _load_group(self, group: GroupMetadata, offsets: Mapping[TopicPartition, CommitRecordMetadataAndOffset]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#loadGroup: offsets first, then into the cache."""
        group.initialize_offsets(offsets)
        current = self.add_group(group)
        if current is not group:
            self._log.info("group_load_ignored", group_id=group.group_id, generation_id=group.generation_id,
                           cached_generation_id=current.generation_id)

    # -- unloading (seed 000 §becoming follower) -------------------------------------------

    def remove_groups_for_partition(self, offsets_partition: int, coordinator_epoch: int | None,
                                    on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#removeGroupsForPartition (scheduled)."""
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, offsets_partition)
        self._log.info("offsets_partition_unload_scheduled", topic_partition=str(tp), coordinator_epoch=coordinator_epoch)
        self._submit(f"unload-{tp}", lambda: self.remove_groups_and_offsets(tp, coordinator_epoch, on_group_unloaded))

    def remove_groups_and_offsets(self, tp: TopicPartition, coordinator_epoch: int | None,
                                  on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadataManager#removeGroupsAndOffsets.

        Unless the epoch is stale: the partition is neither owned nor loading any more, and
        each of its groups is unloaded (Dead; parked requests answered) and dropped.
        """
        partition = tp.partition
        if not self.maybe_update_coordinator_epoch(partition, coordinator_epoch):
            self._log.info("offsets_partition_unload_skipped", topic_partition=str(tp), coordinator_epoch=coordinator_epoch,
                           current_epoch=self.epoch_for_partition_id.get(partition))
            return
        # 1. Stop serving the partition; 2. unload and forget its groups.
        self.owned_partitions.discard(partition)
        self.loading_partitions.discard(partition)
        num_groups = num_offsets = 0
        for group in list(self.group_metadata_cache.values()):
            if self.partition_for(group.group_id) == partition:
                on_group_unloaded(group)
                if self.group_metadata_cache.get(group.group_id) is group:
                    del self.group_metadata_cache[group.group_id]
                num_groups += 1
                num_offsets += group.num_offsets
        self._log.info("offsets_partition_unloaded", topic_partition=str(tp), coordinator_epoch=coordinator_epoch,
                       groups=num_groups, offsets=num_offsets)


def new_rng(broker_id: int) -> random.Random:
    """A member-id generator seeded per broker (Kafka uses UUID.randomUUID)."""
    return random.Random(0x6B61666B61 ^ broker_id)
