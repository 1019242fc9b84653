"""The broker's replica manager: leadership changes, appends, fetches, ISR upkeep.

Mirrors kafka.server.ReplicaManager (Kafka 3.7, ZooKeeper-era request paths). Seeds: 000
§becomeLeaderOrFollower (nine steps), §makeLeaders, §makeFollowers; 002
§handleLeaderAndIsrRequest, §stopReplicas, §stopPartitions; 003; 004 §2.3.

Kafka serialises leadership changes with ``replicaStateChangeLock``. Every method here that
changes state is synchronous and the broker runs on one event loop, so each call is atomic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from kafka_ref.common.errors import (
    ApiException,
    ControllerMovedException,
    CorruptRecordException,
    Errors,
    KafkaStorageException,
    NotLeaderOrFollowerException,
    RecordBatchTooLargeException,
    RecordTooLargeException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.records import MemoryRecords
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
)
from kafka_ref.common.requests.stop_replica import StopReplicaPartitionState
from kafka_ref.common.replica_selector import create_replica_selector
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.checkpoints import LazyOffsetCheckpoints
from kafka_ref.log.fetch_data import AppendOrigin, FetchIsolation, LeaderHwChange
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.fetcher.partition_fetch_state import InitialFetchState
from kafka_ref.replica.hosted_partitions import HostedPartitions
from kafka_ref.replica.partition import Partition
from kafka_ref.replica.apply_delta import ApplyDelta
from kafka_ref.replica.delete_records_path import DeleteRecordsPath
from kafka_ref.replica.read_path import ReadPath
from kafka_ref.server.delayed_operation import DelayedOperationPurgatory, TopicPartitionOperationKey
from kafka_ref.server.delayed_produce import DelayedProduce, ProducePartitionStatus, produce_response_status

if TYPE_CHECKING:  # the broker's components, for the reader's go-to-definition (no import cycle at run time)
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.common.time import Time
    from kafka_ref.log.disk import Disk
    from kafka_ref.log.log_manager import LogManager
    from kafka_ref.server.alter_partition_manager import AlterPartitionManager
    from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache
    from kafka_ref.server.metadata_cache import MetadataCache
    from kafka_ref.server.timer import KafkaScheduler, SystemTimer

EPOCH_DURING_DELETE = -2
NO_EPOCH = -1
# org.apache.kafka.common.internals.Topic#INTERNAL_TOPICS: only internal callers append to these.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
# ReplicaManager#appendToLocalLog's known failures: answered with LogAppendInfo.UNKNOWN_LOG_APPEND_INFO.
_EXPECTED_APPEND_ERRORS = (
    UnknownTopicOrPartitionException,
    NotLeaderOrFollowerException,
    RecordTooLargeException,
    RecordBatchTooLargeException,
    CorruptRecordException,
    KafkaStorageException,
)


class OfflinePartition:
    """Mirrors kafka.server.HostedPartition.Offline: the partition's log dir has failed.

    Since Kafka 3.7 (KAFKA-16157) it keeps the Partition object that went offline, if there
    was one, so that ReplicaManager#getOrCreatePartition can tell whether a KRaft delta names
    that same topic (stay offline) or a topic recreated under the same name (host it anew).
    """

    def __init__(self, topic_partition: TopicPartition, partition: "Partition | None" = None) -> None:
        self.topic_partition = topic_partition
        self.partition = partition


@dataclass(frozen=True, slots=True)
class StopPartition:
    """Mirrors kafka.server.StopPartition."""

    topic_partition: TopicPartition
    delete_local_log: bool
    delete_remote_log: bool = False


class ReplicaManager(ReadPath, ApplyDelta, DeleteRecordsPath):
    """Mirrors kafka.server.ReplicaManager."""

    def __init__(
        self,
        *,
        config: KafkaConfig,
        time: Time,
        log_manager: LogManager,
        metadata_cache: MetadataCache | KRaftMetadataCache,
        alter_partition_manager: AlterPartitionManager,
        scheduler: KafkaScheduler,
        timer: SystemTimer,
        disk: Disk,
        replica_fetcher_manager_factory: Callable[["ReplicaManager"], Any],
    ) -> None:
        self.config = config
        self.time = time
        self.log_manager = log_manager
        self.metadata_cache = metadata_cache
        self.alter_partition_manager = alter_partition_manager
        self.scheduler = scheduler
        self.disk = disk
        self.local_broker_id: int = config.broker_id
        self.fetch_max_bytes: int = config.get("fetch.max.bytes")
        self.controller_epoch = 0  # KafkaController.InitialControllerEpoch
        self.all_partitions: dict[TopicPartition, Partition | OfflinePartition] = HostedPartitions()
        self.hw_thread_initialized = False
        self.is_shutting_down = False
        self.is_in_controlled_shutdown = False  # KRaft: set by begin_controlled_shutdown (Kafka 3.3+)
        self.broker_epoch_supplier: Callable[[], int] = lambda: -1
        self.delayed_produce_purgatory: DelayedOperationPurgatory = DelayedOperationPurgatory(
            "Produce", timer, self.local_broker_id, config.get("producer.purgatory.purge.interval.requests"))
        self.delayed_fetch_purgatory: DelayedOperationPurgatory = DelayedOperationPurgatory(
            "Fetch", timer, self.local_broker_id, config.get("fetch.purgatory.purge.interval.requests"))
        self.delayed_delete_records_purgatory: DelayedOperationPurgatory = DelayedOperationPurgatory(
            "DeleteRecords", timer, self.local_broker_id, config.get("delete.records.purgatory.purge.interval.requests"))
        # Mirrors ReplicaManager#replicaSelectorOpt: the KIP-392 selector, if replica.selector.class names one.
        self.replica_selector = create_replica_selector(config.get("replica.selector.class"))
        self.replica_fetcher_manager = replica_fetcher_manager_factory(self)
        self.leadership_change_listeners: list[Callable[[Iterable[Partition], Iterable[Partition]], None]] = []
        self._log = state_change_logger(broker_id=self.local_broker_id)

    # ------------------------------------------------------------------ lifecycle

    def startup(self) -> None:
        """Mirrors kafka.server.ReplicaManager#startup: schedule ISR expiration every lag/2."""
        self.scheduler.schedule(
            "isr-expiration", self.maybe_shrink_isr, period_ms=self.config.replica_lag_time_max_ms // 2
        )

    def begin_controlled_shutdown(self) -> None:
        """Mirrors kafka.server.ReplicaManager#beginControlledShutdown (KRaft, Kafka 3.3+, KAFKA-13858).

        From now on applyLocalFollowersDelta stops the followers that lose their leader or
        their place in the ISR instead of restarting their fetchers.
        """
        self.is_in_controlled_shutdown = True

    def shutdown(self, checkpoint_hw: bool = True) -> None:
        """Mirrors kafka.server.ReplicaManager#shutdown (clean: checkpoint HWs)."""
        self.is_shutting_down = True
        self.replica_fetcher_manager.shutdown()
        if checkpoint_hw:
            self.checkpoint_high_watermarks()

    # ------------------------------------------------------------------ partition lookup

    def get_partition(self, tp: TopicPartition) -> Partition | OfflinePartition | None:
        return self.all_partitions.get(tp)

    def online_partition(self, tp: TopicPartition) -> Partition | None:
        p = self.all_partitions.get(tp)
        return p if isinstance(p, Partition) else None

    def online_partitions(self) -> list[Partition]:
        return [p for p in self.all_partitions.values() if isinstance(p, Partition)]

    def get_partition_or_error(self, tp: TopicPartition) -> Partition | Errors:
        """Mirrors kafka.server.ReplicaManager#getPartitionOrError."""
        hosted = self.all_partitions.get(tp)
        if isinstance(hosted, Partition):
            return hosted
        if isinstance(hosted, OfflinePartition):
            return Errors.KAFKA_STORAGE_ERROR
        # Unknown here: the metadata cache tells a partition that exists elsewhere from one that doesn't.
        if self.metadata_cache.contains(tp):
            return Errors.NOT_LEADER_OR_FOLLOWER
        return Errors.UNKNOWN_TOPIC_OR_PARTITION

    def get_partition_or_exception(self, tp: TopicPartition) -> Partition:
        """Mirrors kafka.server.ReplicaManager#getPartitionOrException."""
        # An online partition is answered at once (every fetched partition comes through here);
        # the error classification runs only when it is not.
        hosted = self.all_partitions.get(tp)
        if hosted.__class__ is Partition:
            return hosted
        result = self.get_partition_or_error(tp)
        if isinstance(result, Errors):
            raise result.exception(f"Error while fetching partition state for {tp} on broker {self.local_broker_id}")
        return result

    def local_log_or_exception(self, tp: TopicPartition) -> Any:
        return self.get_partition_or_exception(tp).local_log_or_exception

    def get_log(self, tp: TopicPartition) -> Any:
        return self.log_manager.get_log(tp)

    def mark_partition_offline(self, tp: TopicPartition) -> None:
        """Mirrors kafka.server.ReplicaManager#markPartitionOffline (a failed log dir).

        1. an online partition is hosted Offline with its Partition object kept (Kafka 3.7+),
        which then forgets its state; 2. anything else becomes Offline without one.
        """
        previous = self.all_partitions.get(tp)
        if isinstance(previous, Partition):
            # 1. Online: keep the object (it still knows its topic id), then clear it.
            self.all_partitions[tp] = OfflinePartition(tp, previous)
            previous.mark_offline()
        else:
            # 2. Not hosted, or already offline.
            self.all_partitions[tp] = OfflinePartition(tp)

    def _new_partition(self, tp: TopicPartition, topic_id: Uuid | None = None) -> Partition:
        """Mirrors kafka.cluster.Partition$#apply: with ``topic_id`` the TopicIdPartition form (KRaft, Kafka 3.8)."""
        return Partition(
            tp,
            topic_id=topic_id,
            replica_lag_time_max_ms=self.config.replica_lag_time_max_ms,
            inter_broker_protocol_version=self.config.inter_broker_protocol_version,
            broker_version=self.config.broker_version,
            local_broker_id=self.local_broker_id,
            time=self.time,
            replica_manager=self,
        )

    def high_watermark_checkpoints(self) -> LazyOffsetCheckpoints:
        """The replication-offset-checkpoint, read when a log is created (``new LazyOffsetCheckpoints(highWatermarkCheckpoints)``)."""
        return LazyOffsetCheckpoints(self.disk.checkpoint_file("replication-offset-checkpoint"))

    # ------------------------------------------------------------------ LeaderAndIsr

    def become_leader_or_follower(
        self,
        correlation_id: int,
        request: LeaderAndIsrRequest,
        on_leadership_change: Callable[[Iterable[Partition], Iterable[Partition]], None] | None = None,
    ) -> LeaderAndIsrResponse:
        """Mirrors kafka.server.ReplicaManager#becomeLeaderOrFollower (seed 000's nine steps)."""
        controller_id = request.controller_id
        state_log = self._log.bind(controller_id=controller_id, controller_epoch=request.controller_epoch, correlation_id=correlation_id)
        states = list(request.partition_states())
        state_log.info("leader_and_isr_received", partitions=len(states))
        # 1. A request from an older controller is refused whole.
        if request.controller_epoch < self.controller_epoch:
            state_log.warning("leader_and_isr_stale_controller_epoch", latest_controller_epoch=self.controller_epoch)
            return request.get_error_response(Errors.STALE_CONTROLLER_EPOCH.code)
        self.controller_epoch = request.controller_epoch
        response_map: dict[TopicPartition, Errors] = {}
        topic_ids = request.topic_ids()
        partitions_to_be_leader: dict[Partition, LeaderAndIsrPartitionState] = {}
        partitions_to_be_follower: dict[Partition, LeaderAndIsrPartitionState] = {}
        topic_id_update_follower_partitions: list[Partition] = []
        # 2. Create missing Partition objects (no log yet) and check topic id and leader epoch.
        for state in states:
            tp = state.topic_partition()
            hosted = self.all_partitions.get(tp)
            if isinstance(hosted, OfflinePartition):
                state_log.warning("leader_and_isr_offline_partition", topic_partition=str(tp))
                response_map[tp] = Errors.KAFKA_STORAGE_ERROR
                continue
            if hosted is None:
                hosted = self._new_partition(tp)
                self.all_partitions[tp] = hosted
            partition = hosted
            request_topic_id = _topic_id_or_none(topic_ids.get(tp.topic))
            log_topic_id = partition.topic_id
            current_leader_epoch = partition.get_leader_epoch()
            if request_topic_id is not None and log_topic_id is not None and request_topic_id != log_topic_id:
                state_log.error("leader_and_isr_inconsistent_topic_id", topic_partition=str(tp),
                          log_topic_id=str(log_topic_id), request_topic_id=str(request_topic_id))
                response_map[tp] = Errors.INCONSISTENT_TOPIC_ID
            elif state.leader_epoch > current_leader_epoch:
                if self.local_broker_id in state.replicas:
                    # 3./4. Sort into leaders and followers by the leader field.
                    if state.leader == self.local_broker_id:
                        partitions_to_be_leader[partition] = state
                    else:
                        partitions_to_be_follower[partition] = state
                else:
                    state_log.warning("leader_and_isr_not_in_replicas", topic_partition=str(tp), replicas=list(state.replicas))
                    response_map[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            elif state.leader_epoch < current_leader_epoch:
                state_log.warning("leader_and_isr_stale_leader_epoch", topic_partition=str(tp),
                            request_leader_epoch=state.leader_epoch, current_leader_epoch=current_leader_epoch)
                response_map[tp] = Errors.STALE_CONTROLLER_EPOCH
            else:
                # Same epoch: only a topic id change is accepted (an upgrade to topic ids assigns
                # it to the log; a downgrade drops it from a follower's fetch state).
                if request_topic_id is not None and log_topic_id is None:
                    self.local_log_or_exception(tp).assign_topic_id(request_topic_id)
                    state_log.info("leader_and_isr_assigned_topic_id", topic_partition=str(tp), topic_id=str(request_topic_id))
                    if state.leader != self.local_broker_id:
                        topic_id_update_follower_partitions.append(partition)
                    response_map[tp] = Errors.NONE
                elif request_topic_id is None and log_topic_id is not None and state.leader != self.local_broker_id:
                    state_log.info("leader_and_isr_removed_topic_id", topic_partition=str(tp), topic_id=str(log_topic_id))
                    topic_id_update_follower_partitions.append(partition)
                    response_map[tp] = Errors.NONE
                else:
                    state_log.info("leader_and_isr_same_leader_epoch", topic_partition=str(tp), leader_epoch=state.leader_epoch)
                    response_map[tp] = Errors.STALE_CONTROLLER_EPOCH
        hw_checkpoints = self.high_watermark_checkpoints()
        # 5. Become leader where asked.
        partitions_become_leader = (
            self.make_leaders(controller_id, request.controller_epoch, partitions_to_be_leader, correlation_id,
                              response_map, hw_checkpoints, topic_ids)
            if partitions_to_be_leader else set()
        )
        # 6. Become follower where asked.
        partitions_become_follower = (
            self.make_followers(controller_id, request.controller_epoch, partitions_to_be_follower, correlation_id,
                                response_map, hw_checkpoints, topic_ids)
            if partitions_to_be_follower else set()
        )
        # Followers whose topic id changed without a new leader epoch tell their fetchers.
        if topic_id_update_follower_partitions:
            self.update_topic_id_for_followers(topic_id_update_follower_partitions, topic_ids)
        # 7. Start the HW checkpoint task after the first LeaderAndIsr, once partitions are populated.
        self.start_high_watermark_check_point_thread()
        # 8. Fetchers left without partitions go away.
        self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        # 9. Tell the group coordinator (and any other listener) about the changes. Kafka hands
        #    over identity-hashed sets; we hand them over in partition order so a seeded run
        #    loads and unloads coordinator partitions in the same order every time.
        partitions_become_leader = sorted(partitions_become_leader, key=lambda p: (p.topic, p.partition_id))
        partitions_become_follower = sorted(partitions_become_follower, key=lambda p: (p.topic, p.partition_id))
        if on_leadership_change is not None:
            on_leadership_change(partitions_become_leader, partitions_become_follower)
        for listener in self.leadership_change_listeners:
            listener(partitions_become_leader, partitions_become_follower)
        state_log.info("leader_and_isr_finished", leaders=len(partitions_become_leader), followers=len(partitions_become_follower))
        return _leader_and_isr_response(response_map, topic_ids)

    def make_leaders(
        self,
        controller_id: int,
        controller_epoch: int,
        partition_states: dict[Partition, LeaderAndIsrPartitionState],
        correlation_id: int,
        response_map: dict[TopicPartition, Errors],
        hw_checkpoints: dict[TopicPartition, int],
        topic_ids: Mapping[str, Uuid],
    ) -> set[Partition]:
        """Mirrors kafka.server.ReplicaManager#makeLeaders (seed 000 §makeLeaders).

        1. stop fetching these partitions; 2. make each the leader; only partitions that were
        not already led here count as "became leader".
        """
        for partition in partition_states:
            response_map[partition.topic_partition] = Errors.NONE
        # 1. Stop the fetchers first.
        self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in partition_states})
        self._log.info("stopped_fetchers_for_become_leader", correlation_id=correlation_id, partitions=len(partition_states))
        made: set[Partition] = set()
        # 2. Make each partition the leader.
        for partition, state in partition_states.items():
            try:
                if partition.make_leader(state, hw_checkpoints, _topic_id_or_none(topic_ids.get(state.topic_name))):
                    made.add(partition)
            except KafkaStorageException:
                # The Partition object exists but its log could not be created: offline.
                self.mark_partition_offline(partition.topic_partition)
                response_map[partition.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        return made

    def make_followers(
        self,
        controller_id: int,
        controller_epoch: int,
        partition_states: dict[Partition, LeaderAndIsrPartitionState],
        correlation_id: int,
        response_map: dict[TopicPartition, Errors],
        hw_checkpoints: dict[TopicPartition, int],
        topic_ids: Mapping[str, Uuid],
    ) -> set[Partition]:
        """Mirrors kafka.server.ReplicaManager#makeFollowers (seed 000 §makeFollowers, Kafka 3.7 order).

        1. make_follower where the leader is alive (else only create the log); 2. remove the
        fetchers of the partitions whose leader epoch changed; 3. complete their delayed
        operations; 4. add fetchers from the initial fetch offset computed *after* removal.
        """
        for partition in partition_states:
            response_map[partition.topic_partition] = Errors.NONE
        to_make_follower: list[Partition] = []
        # 1. Become follower only when the leader is known alive.
        for partition, state in partition_states.items():
            topic_id = _topic_id_or_none(topic_ids.get(state.topic_name))
            try:
                if self.metadata_cache.has_alive_broker(state.leader):
                    if partition.make_follower(state, hw_checkpoints, topic_id):
                        to_make_follower.append(partition)
                else:
                    self._log.error(
                        "become_follower_leader_unavailable",
                        topic_partition=str(partition.topic_partition),
                        leader=state.leader,
                        correlation_id=correlation_id,
                    )
                    # The log is still created so its HW is part of the checkpoint (KAFKA-1647).
                    partition.create_log_if_not_exists(state.is_new, False, hw_checkpoints, topic_id)
            except KafkaStorageException:
                self.mark_partition_offline(partition.topic_partition)
                response_map[partition.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        # 2. Stop fetching first so the initial fetch position is computed on a quiet log.
        self.replica_fetcher_manager.remove_fetcher_for_partitions({p.topic_partition for p in to_make_follower})
        self._log.info("stopped_fetchers_for_become_follower", correlation_id=correlation_id, partitions=len(to_make_follower))
        # 3. Requests waiting on these partitions as leader can complete now.
        for partition in to_make_follower:
            self.complete_delayed_fetch_or_produce_requests(partition.topic_partition)
        # 4. Start fetching from the new leader.
        if not self.is_shutting_down and to_make_follower:
            initial_states = {}
            for partition in to_make_follower:
                leader_id = partition.leader_replica_id_opt
                endpoint = self.metadata_cache.get_alive_broker_node(leader_id)
                log = partition.local_log_or_exception
                initial_states[partition.topic_partition] = InitialFetchState(
                    topic_id=partition.topic_id,
                    leader=endpoint,
                    current_leader_epoch=partition.get_leader_epoch(),
                    init_offset=self.initial_fetch_offset(log),
                )
            self.replica_fetcher_manager.add_fetcher_for_partitions(initial_states)
        return set(to_make_follower)

    def initial_fetch_offset(self, log: Any) -> int:
        """Mirrors kafka.server.ReplicaManager#initialFetchOffset.

        With truncation on fetch (IBP ≥ 2.7) and a log that has epochs, start at the LEO and let
        the leader report divergence; otherwise start at the HW (older eras then truncate).
        """
        ibp = self.config.inter_broker_protocol_version
        if ibp.truncates_on_fetch and log.latest_epoch is not None:
            return log.log_end_offset
        return log.high_watermark

    def update_topic_id_for_followers(self, partitions: Iterable[Partition], topic_ids: Mapping[str, Uuid]) -> None:
        """Mirrors kafka.server.ReplicaManager#updateTopicIdForFollowers.

        A same-epoch LeaderAndIsr that adds (or drops) a topic id reaches the fetchers of the
        follower partitions whose leader is alive; nothing happens while shutting down.
        """
        if self.is_shutting_down:
            return
        # 1. Partition -> leader, for leaders the metadata cache has alive.
        to_update = {
            p.topic_partition: p.leader_replica_id_opt
            for p in partitions
            if p.leader_replica_id_opt is not None and self.metadata_cache.has_alive_broker(p.leader_replica_id_opt)
        }
        # 2. The fetchers adopt the request's topic id (None when it has none).
        self.replica_fetcher_manager.maybe_update_topic_ids(to_update, lambda topic: _topic_id_or_none(topic_ids.get(topic)))

    # ------------------------------------------------------------------ StopReplica

    def stop_replicas(
        self,
        correlation_id: int,
        controller_id: int,
        controller_epoch: int,
        partition_states: Mapping[TopicPartition, StopReplicaPartitionState],
    ) -> tuple[dict[TopicPartition, Errors], Errors]:
        """Mirrors kafka.server.ReplicaManager#stopReplicas (seed 002 §stopReplicas).

        Epoch sentinels: EpochDuringDelete (-2, topic deletion) and NoEpoch (-1, old request
        versions) bypass the leader-epoch check; otherwise an older epoch is FENCED_LEADER_EPOCH.
        """
        state_log = self._log.bind(controller_id=controller_id, controller_epoch=controller_epoch, correlation_id=correlation_id)
        state_log.info("stop_replica_received", partitions=len(partition_states))
        response_map: dict[TopicPartition, Errors] = {}
        # 1. Refuse an older controller.
        if controller_epoch < self.controller_epoch:
            state_log.warning("stop_replica_stale_controller_epoch", latest_controller_epoch=self.controller_epoch)
            return response_map, Errors.STALE_CONTROLLER_EPOCH
        self.controller_epoch = controller_epoch
        stopped: list[StopPartition] = []
        # 2. Decide per partition.
        for tp, state in partition_states.items():
            hosted = self.all_partitions.get(tp)
            if isinstance(hosted, OfflinePartition):
                response_map[tp] = Errors.KAFKA_STORAGE_ERROR
            elif isinstance(hosted, Partition):
                request_epoch = state.leader_epoch
                if request_epoch in (EPOCH_DURING_DELETE, NO_EPOCH) or request_epoch >= hosted.get_leader_epoch():
                    stopped.append(StopPartition(tp, state.delete_partition))
                    response_map[tp] = Errors.NONE
                else:
                    state_log.warning("stop_replica_fenced_leader_epoch", topic_partition=str(tp),
                                request_leader_epoch=request_epoch, current_leader_epoch=hosted.get_leader_epoch())
                    response_map[tp] = Errors.FENCED_LEADER_EPOCH
            else:
                # Not hosted (e.g. deleted while this broker was down): still delete the log if asked.
                stopped.append(StopPartition(tp, state.delete_partition))
                response_map[tp] = Errors.NONE
        # 3. Stop them; failures overwrite the optimistic NONE.
        for tp, exc in self.stop_partitions(stopped).items():
            response_map[tp] = Errors.for_exception(exc)
        return response_map, Errors.NONE

    def stop_partitions(self, partitions_to_stop: Iterable[StopPartition]) -> dict[TopicPartition, BaseException]:
        """Mirrors kafka.server.ReplicaManager#stopPartitions (seed 002 §stopPartitions).

        1. remove fetchers; 2. drop deleted partitions from the map; 3. complete their delayed
        operations; 4. delete the logs (LogManager#asyncDelete, the batch overload).
        """
        partitions_to_stop = list(partitions_to_stop)
        # 1. Fetchers read partitions through us: stop them first.
        self.replica_fetcher_manager.remove_fetcher_for_partitions({s.topic_partition for s in partitions_to_stop})
        to_delete: list[TopicPartition] = []
        for stop in partitions_to_stop:
            tp = stop.topic_partition
            if stop.delete_local_log:
                # 2. Forget the partition.
                hosted = self.all_partitions.get(tp)
                if isinstance(hosted, Partition):
                    del self.all_partitions[tp]
                    hosted.delete()
                to_delete.append(tp)
            # 3. Anything waiting on us as leader completes now rather than timing out.
            self.complete_delayed_fetch_or_produce_requests(tp)
        # 4. Delete the logs in one batch (one checkpoint); a partition without a log here is
        #    not an error, a log whose directory fails is.
        errors: dict[TopicPartition, BaseException] = {}
        if to_delete:
            self.log_manager.async_delete_partitions(to_delete, errors.__setitem__)
        if to_delete:
            self._log.info("stopped_partitions_deleted", partitions=[str(tp) for tp in to_delete])
        return errors

    # ------------------------------------------------------------------ UpdateMetadata

    def maybe_update_metadata_cache(self, correlation_id: int, request: Any) -> list[TopicPartition]:
        """Mirrors kafka.server.ReplicaManager#maybeUpdateMetadataCache; returns deleted partitions."""
        if request.controller_epoch < self.controller_epoch:
            message = (
                f"Received update metadata request with correlation id {correlation_id} from an old controller "
                f"{request.controller_id} with epoch {request.controller_epoch}. Latest known controller epoch "
                f"is {self.controller_epoch}"
            )
            self._log.warning("update_metadata_stale_controller_epoch", correlation_id=correlation_id)
            raise ControllerMovedException(message)
        deleted = self.metadata_cache.update_metadata(correlation_id, request)
        self.controller_epoch = request.controller_epoch
        return deleted

    # ------------------------------------------------------------------ produce

    def append_records(
        self,
        timeout_ms: int,
        required_acks: int,
        internal_topics_allowed: bool,
        origin: AppendOrigin | str,
        entries_per_partition: Mapping[TopicPartition, MemoryRecords],
        response_callback: Callable[[dict[TopicPartition, Any]], None],
    ) -> None:
        """Mirrors kafka.server.ReplicaManager#appendRecords.

        1. validate acks; 2. append to the local leader logs; 3. wake fetchers waiting for new
        data; 4. acks=-1 with something appended waits in the produce purgatory for the HW,
        otherwise answer now.

        Deliberate difference: Kafka 3.7 does not complete delayed operations during the append;
        it queues them (``addCompletePurgatoryAction``) and KafkaApis#handle runs the queue in its
        ``finally`` (``tryCompleteActions``), after the request's own response is sent, to keep
        lock-holding threads out of other partitions' purgatories. kafka_ref runs on one event
        loop with no locks, so it completes them here, inline; the answers are the same, only
        their order relative to this request's own response can differ.
        """
        # 1. Only 0, 1 and -1 are valid.
        if required_acks not in (0, 1, -1):
            response_callback({tp: produce_response_status(Errors.INVALID_REQUIRED_ACKS) for tp in entries_per_partition})
            return
        # 2. Append.
        local_results = self.append_to_local_log(internal_topics_allowed, origin, entries_per_partition, required_acks)
        # (One pass over the results builds the statuses, counts the failures and wakes the
        #  purgatories, with each partition's operation key made once: this runs per produce.)
        statuses: dict[TopicPartition, ProducePartitionStatus] = {}
        keys: list[TopicPartitionOperationKey] = []
        failed = 0
        for tp, result in local_results.items():
            statuses[tp] = ProducePartitionStatus.from_result(result)
            key = TopicPartitionOperationKey.of(tp)
            keys.append(key)
            # 3. New data (and maybe a new HW) may complete waiting fetches and produces.
            info = result.info
            if info is not None:
                if info.leader_hw_change is LeaderHwChange.INCREASED:  # LogAppendResult#hw_incremented
                    self.delayed_produce_purgatory.check_and_complete(key)
                self.delayed_fetch_purgatory.check_and_complete(key)
            if result.error is not Errors.NONE:
                failed += 1
        # 4. acks=all waits for replication unless every partition failed.
        if required_acks == -1 and entries_per_partition and failed < len(entries_per_partition):
            op = DelayedProduce(timeout_ms, statuses, self, response_callback)
            self.delayed_produce_purgatory.try_complete_else_watch(op, keys)
        else:
            response_callback({tp: status.response_status for tp, status in statuses.items()})

    def append_to_local_log(
        self,
        internal_topics_allowed: bool,
        origin: AppendOrigin | str,
        entries_per_partition: Mapping[TopicPartition, MemoryRecords],
        required_acks: int,
    ) -> dict[TopicPartition, "LogAppendResult"]:
        """Mirrors kafka.server.ReplicaManager#appendToLocalLog: per-partition errors, never a crash."""
        results: dict[TopicPartition, LogAppendResult] = {}
        for tp, records in entries_per_partition.items():
            # 1. Internal topics only from internal callers (the group coordinator; Topic#isInternal).
            if tp.topic in INTERNAL_TOPICS and not internal_topics_allowed:
                results[tp] = LogAppendResult(None, Errors.INVALID_TOPIC_EXCEPTION, f"Cannot append to internal topic {tp.topic}")
                continue
            try:
                # 2. Find the partition (errors by hosting state) and append as leader.
                partition = self.get_partition_or_exception(tp)
                info = partition.append_records_to_leader(records, origin, required_acks)
                results[tp] = LogAppendResult(info, Errors.NONE, None)
            except _EXPECTED_APPEND_ERRORS as exc:
                # 3. Hosting, size, corruption and storage errors answer without a log start offset.
                results[tp] = LogAppendResult(None, Errors.for_exception(exc), str(exc))
            except RUN_ENDING:
                raise
            except Exception as exc:  # Kafka's `case t: Throwable`: logged, answered, never fatal
                # 4. Any other failure (an out-of-order sequence, an invalid record...) answers
                #    with the partition's log start offset (processFailedRecord).
                if not isinstance(exc, ApiException):  # (Kafka logs these all; here only the unexpected ones)
                    self._log.error("append_failed", topic_partition=str(tp), error=repr(exc))
                results[tp] = LogAppendResult(None, Errors.for_exception(exc), str(exc), self._failed_append_log_start_offset(tp))
        return results

    def _failed_append_log_start_offset(self, tp: TopicPartition) -> int:
        """The log start offset ReplicaManager#appendToLocalLog's processFailedRecord reports (-1 when not online)."""
        partition = self.online_partition(tp)
        return -1 if partition is None else partition.log_start_offset

    # ------------------------------------------------------------------ delayed operations

    def complete_delayed_fetch_or_produce_requests(self, tp: TopicPartition) -> None:
        """Mirrors kafka.server.ReplicaManager#completeDelayedFetchOrProduceRequests."""
        key = TopicPartitionOperationKey.of(tp)
        self.delayed_produce_purgatory.check_and_complete(key)
        self.delayed_fetch_purgatory.check_and_complete(key)

    def complete_delayed_fetch_requests(self, topic_partitions: Iterable[TopicPartition]) -> None:
        """Mirrors kafka.server.ReplicaManager#completeDelayedFetchRequests (after follower appends)."""
        for tp in topic_partitions:
            self.delayed_fetch_purgatory.check_and_complete(TopicPartitionOperationKey.of(tp))

    # ------------------------------------------------------------------ periodic tasks

    def maybe_shrink_isr(self) -> None:
        """Mirrors kafka.server.ReplicaManager#maybeShrinkIsr (the isr-expiration task)."""
        for partition in self.online_partitions():
            if partition.is_leader:
                partition.maybe_shrink_isr()

    def start_high_watermark_check_point_thread(self) -> None:
        """Mirrors kafka.server.ReplicaManager#startHighWatermarkCheckPointThread (once)."""
        if not self.hw_thread_initialized:
            self.hw_thread_initialized = True
            interval = self.config.get("replica.high.watermark.checkpoint.interval.ms")
            self.scheduler.schedule("highwatermark-checkpoint", self.checkpoint_high_watermarks, delay_ms=0, period_ms=interval)

    def checkpoint_high_watermarks(self) -> None:
        """Mirrors kafka.server.ReplicaManager#checkpointHighWatermarks: HW of every local log."""
        # 1. The HW of every online partition's log.
        hws = {}
        for partition in self.online_partitions():
            if partition.log is not None:
                hws[partition.topic_partition] = partition.log.high_watermark
        # 2. Write the directory's file; a failed directory is logged, never fatal to the task.
        try:
            self.disk.checkpoint_file("replication-offset-checkpoint").write(hws)
        except KafkaStorageException as exc:
            self._log.error("high_watermark_checkpoint_failed", log_dir=self.disk.log_dir, error=str(exc))

    # ------------------------------------------------------------------ read helpers used by KafkaApis

    def fetch_params(self, request: Any, client_metadata: Any = None) -> FetchParams:
        """FetchParams for a FetchRequest, as KafkaApis#handleFetchRequest builds them (with the
        client metadata of a v11+ request)."""
        replica_id = request.requesting_replica_id()
        # The broker's fetch.max.bytes caps every fetch's response size (KIP-541), and min bytes
        # never exceeds the cap (no fetch quotas here, so no quota-window cap).
        max_bytes = min(request.max_bytes, self.fetch_max_bytes)
        return FetchParams(
            replica_id=replica_id,
            replica_epoch=request.replica_state.replica_epoch,
            max_wait_ms=request.max_wait_ms,
            min_bytes=min(request.min_bytes, max_bytes),
            max_bytes=max_bytes,
            isolation=FetchIsolation.of(replica_id, request.isolation_level),
            client_metadata=client_metadata,
        )


@dataclass(slots=True)
class LogAppendResult:
    """Mirrors kafka.server.ReplicaManager.LogAppendResult."""

    info: Any
    error: Errors
    error_message: str | None
    # LogAppendInfo#unknownLogAppendInfoWithLogStartOffset: what a failed append reports (-1: unknown).
    log_start_offset: int = -1

    @property
    def hw_incremented(self) -> bool:
        from kafka_ref.log.fetch_data import LeaderHwChange

        return self.info is not None and self.info.leader_hw_change == LeaderHwChange.INCREASED


def _topic_id_or_none(topic_id: Uuid | None) -> Uuid | None:
    from kafka_ref.common.uuid import ZERO_UUID

    return None if topic_id is None or topic_id == ZERO_UUID else topic_id


def _leader_and_isr_response(response_map: Mapping[TopicPartition, Errors], topic_ids: Mapping[str, Uuid]) -> LeaderAndIsrResponse:
    from kafka_ref.common.uuid import ZERO_UUID

    by_topic: dict[str, list[LeaderAndIsrPartitionError]] = {}
    for tp, error in response_map.items():
        by_topic.setdefault(tp.topic, []).append(LeaderAndIsrPartitionError(partition_index=tp.partition, error_code=error.code))
    return LeaderAndIsrResponse(
        error_code=Errors.NONE.code,
        topics=tuple(
            LeaderAndIsrTopicError(topic_id=topic_ids.get(topic, ZERO_UUID), partition_errors=tuple(errs))
            for topic, errs in by_topic.items()
        ),
    )

