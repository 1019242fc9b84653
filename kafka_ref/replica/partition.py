"""One partition as this broker hosts it: leader or follower state, ISR, HW.

Mirrors kafka.cluster.Partition (Kafka 3.7, ZooKeeper-era paths plus the KRaft-compatible
parts). Seeds: 000 §makeLeaders/§makeFollowers (Partition.makeLeader/makeFollower), 002
§makeLeader, 004 §2.3 (updateFollowerFetchState, maybeExpandIsr, maybeIncrementLeaderHW).

Kafka guards this object with ``leaderIsrUpdateLock``. Here every method is synchronous and
the broker runs on one event loop, so each call is atomic; where Kafka releases the lock
before doing something (completing delayed requests, sending AlterPartition) we keep the same
order so the sequence of effects is the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from kafka_ref.common.errors import Errors, NotEnoughReplicasException, NotLeaderOrFollowerException
from kafka_ref.common.metadata_version import LATEST_BROKER_VERSION, MetadataVersion
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.log.exceptions import UnexpectedAppendOffsetException
from kafka_ref.log.fetch_data import AppendOrigin, LeaderHwChange, LogOffsetMetadata
from kafka_ref.replica.partition_state import RECOVERED, CommittedPartitionState, PartitionState
from kafka_ref.replica.replica import Replica
from kafka_ref.replica.partition_deletes import PartitionDeletes
from kafka_ref.replica.partition_isr_updates import PartitionIsrUpdates
from kafka_ref.replica.partition_reads import PartitionReads

if TYPE_CHECKING:
    from kafka_ref.log.unified_log import UnifiedLog
    from kafka_ref.replica.replica_manager import ReplicaManager



class Partition(PartitionReads, PartitionDeletes, PartitionIsrUpdates):
    """Mirrors kafka.cluster.Partition."""

    def __init__(
        self,
        topic_partition: TopicPartition,
        *,
        replica_lag_time_max_ms: int,
        inter_broker_protocol_version: "MetadataVersion",
        local_broker_id: int,
        time: Time,
        replica_manager: ReplicaManager,
        broker_version: "MetadataVersion | None" = None,
        topic_id: Uuid | None = None,
    ) -> None:
        self.topic_partition = topic_partition
        self.topic = topic_partition.topic
        self.partition_id = topic_partition.partition
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.inter_broker_protocol_version = inter_broker_protocol_version
        # The release whose broker code runs (kafka_ref.broker.version): KAFKA-15583's rules follow it.
        self.broker_version = broker_version if broker_version is not None else MetadataVersion.parse(LATEST_BROKER_VERSION)
        # Kafka 3.8 (KAFKA-16234): the topic id the partition was created with (KRaft's
        # getOrCreatePartition passes it), else the first one its log shows, kept from then on.
        # Before 3.8 the id was always the log's, read anew on every call.
        self._remembers_topic_id = self.broker_version.is_at_least("3.8")
        self._topic_id = topic_id if self._remembers_topic_id else None
        self.local_broker_id = local_broker_id
        self.time = time
        self.replica_manager = replica_manager
        self.log_manager = replica_manager.log_manager
        self.metadata_cache = replica_manager.metadata_cache
        self.alter_partition_manager = replica_manager.alter_partition_manager
        self.log: "UnifiedLog | None" = None
        self.remote_replicas_map: dict[int, Replica] = {}
        self.assignment: tuple[int, ...] = ()
        self.adding_replicas: tuple[int, ...] = ()
        self.removing_replicas: tuple[int, ...] = ()
        self.leader_replica_id_opt: int | None = None
        # Kafka starts one below the initial epochs so the first LeaderAndIsr (epoch 0) is newer.
        self.leader_epoch = -1
        self.leader_epoch_start_offset_opt: int | None = None
        self.partition_epoch = 0
        self.controller_epoch = -1
        self.partition_state: PartitionState = CommittedPartitionState(frozenset(), RECOVERED)
        self.isr_expand_count = 0
        self.isr_shrink_count = 0
        self.failed_alter_partition_count = 0
        self._log = state_change_logger(broker_id=local_broker_id, topic_partition=str(topic_partition))
        self._effective_min_isr_cache: tuple[Any, int, int, Any] | None = None

    # ------------------------------------------------------------------ read-outs

    @property
    def topic_id(self) -> Uuid | None:
        """Mirrors kafka.cluster.Partition#topicId: the id of this partition's log, or of the
        log the log manager already holds for it (a log loaded from disk before any
        LeaderAndIsr attached it), so a restarted broker can tell an inconsistent id at once.

        From Kafka 3.8 (KAFKA-16234) 1. an id given at creation, or one found earlier, answers
        at once; 2. otherwise the log's id is read and remembered, so a partition whose log
        directory failed (its log gone) still knows its topic.
        """
        # 1. Known already (3.8+).
        known = self._topic_id
        if known is not None and known != ZERO_UUID:
            return known
        # 2. The log's, remembered from 3.8.
        log = self.log if self.log is not None else self.log_manager.get_log(self.topic_partition)
        found = log.topic_id if log is not None else None
        if self._remembers_topic_id:
            self._topic_id = found
        return found

    @property
    def is_leader(self) -> bool:
        return self.leader_replica_id_opt == self.local_broker_id

    @property
    def in_sync_replica_ids(self) -> frozenset[int]:
        return self.partition_state.isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.partition_state.maximal_isr

    @property
    def remote_replicas(self) -> list[Replica]:
        return list(self.remote_replicas_map.values())

    def get_leader_epoch(self) -> int:
        return self.leader_epoch

    def get_partition_epoch(self) -> int:
        return self.partition_epoch

    def get_replica(self, replica_id: int) -> Replica | None:
        return self.remote_replicas_map.get(replica_id)

    def leader_log_if_local(self) -> "UnifiedLog | None":
        return self.log if self.is_leader else None

    @property
    def log_start_offset(self) -> int:
        """Mirrors kafka.cluster.Partition#logStartOffset: the leader log's start offset, -1 when not led here."""
        log = self.leader_log_if_local()
        return -1 if log is None else log.log_start_offset

    @property
    def local_log_or_exception(self) -> "UnifiedLog":
        if self.log is None:
            raise NotLeaderOrFollowerException(
                f"Log for partition {self.topic_partition} is not available on broker {self.local_broker_id}"
            )
        return self.log

    def effective_min_isr(self) -> int:
        """Mirrors kafka.cluster.Partition#effectiveMinIsr (Kafka 3.7.0+, KAFKA-15583).

        The topic's min.insync.replicas, capped at the number of replicas (the leader and its
        remote replicas), so a topic whose min ISR exceeds its replication factor is not
        permanently under min ISR. Brokers before 3.7.0 (``kafka_ref.broker.version``) use the
        configured value as it is.
        """
        # 1. The topic's configured value.
        config = self.log_manager.fetch_log_config(self.topic)
        replicas = len(self.remote_replicas_map) + 1
        # Cached per partition (acks=all and the HW check read it per produce): recomputed when
        # the topic's config object, the replica count or the broker version changes.
        cached = self._effective_min_isr_cache
        if cached is not None and cached[0] is config and cached[1] == replicas and cached[3] is self.broker_version:
            return cached[2]
        configured = config.min_in_sync_replicas if config is not None else 1
        # 2. From 3.7.0 no more than the replicas this leader knows of (itself included).
        value = min(configured, replicas) if self.broker_version.caps_min_isr_at_replica_count else configured
        self._effective_min_isr_cache = (config, replicas, value, self.broker_version)
        return value

    # The name older kafka_ref code used for the same number.
    min_isr = effective_min_isr

    def replication_factor(self) -> int:
        """Mirrors kafka.cluster.AssignmentState#replicationFactor: the number of replicas, not counting
        those a reassignment is still adding (OngoingReassignmentState keeps the original count)."""
        if not self.adding_replicas:
            return len(self.assignment)
        return sum(1 for r in self.assignment if r not in self.adding_replicas)

    def is_under_replicated(self) -> bool:
        """Mirrors kafka.cluster.Partition#isUnderReplicated: led here with an ISR below the replication factor."""
        return self.is_leader and self.replication_factor() - len(self.partition_state.isr) > 0

    def is_under_min_isr(self) -> bool:
        # (leaderLogIfLocal written out: the leader's HW check asks this on every produce and follower fetch.)
        return (self.leader_replica_id_opt == self.local_broker_id and self.log is not None
                and len(self.partition_state.isr) < self.effective_min_isr())

    def is_at_min_isr(self) -> bool:
        return self.leader_log_if_local() is not None and len(self.partition_state.isr) == self.effective_min_isr()

    def is_adding_replica(self, replica_id: int) -> bool:
        return replica_id in self.adding_replicas

    def is_adding_local_replica(self) -> bool:
        """Mirrors kafka.cluster.Partition#isAddingLocalReplica."""
        return self.local_broker_id in self.adding_replicas

    def is_reassigning(self) -> bool:
        """Mirrors kafka.cluster.Partition#isReassigning: the assignment is an OngoingReassignmentState
        (replicas being added or removed)."""
        return bool(self.adding_replicas) or bool(self.removing_replicas)

    # ------------------------------------------------------------------ log creation

    def create_log_if_not_exists(
        self, is_new: bool, is_future_replica: bool, offset_checkpoints: dict[TopicPartition, int], topic_id: Uuid | None
    ) -> None:
        """Mirrors kafka.cluster.Partition#createLogIfNotExists."""
        if self.log is None:
            self.log = self.create_log(is_new, offset_checkpoints, topic_id)

    def create_log(self, is_new: bool, offset_checkpoints: dict[TopicPartition, int], topic_id: Uuid | None) -> "UnifiedLog":
        """Mirrors kafka.cluster.Partition#createLog: get or create the log, then seed its HW.

        The HW comes from the replication-offset-checkpoint (0 when absent), clamped into the
        log by ``update_high_watermark``. ``offset_checkpoints`` is the ReplicaManager's
        LazyOffsetCheckpoints (or a plain dict): the file is read here, after the log exists,
        so an unreadable file raises KafkaStorageException with the new log already registered.
        """
        # 1. The log manager opens the existing log or creates an empty one.
        log = self.log_manager.get_or_create_log(self.topic_partition, is_new=is_new, topic_id=topic_id)
        # 2. Seed the HW from the checkpoint file.
        checkpoint_hw = offset_checkpoints.get(self.topic_partition, 0)
        initial_hw = log.update_high_watermark(checkpoint_hw)
        self._log.info("log_loaded", initial_high_watermark=initial_hw)
        return log

    # ------------------------------------------------------------------ assignment

    def update_assignment_and_isr(
        self,
        replicas: Iterable[int],
        is_leader: bool,
        isr: Iterable[int],
        adding_replicas: Iterable[int],
        removing_replicas: Iterable[int],
        leader_recovery_state: int,
    ) -> None:
        """Mirrors kafka.cluster.Partition#updateAssignmentAndIsr.

        A leader keeps a Replica for every follower in the assignment (adding new ones first,
        then dropping removed ones); a follower keeps none. The ISR becomes committed state.
        """
        replicas = tuple(replicas)
        # 1. Remote replica bookkeeping only exists on the leader.
        if is_leader:
            followers = [r for r in replicas if r != self.local_broker_id]
            removed = [r for r in self.remote_replicas_map if r not in followers]
            for follower in followers:
                if follower not in self.remote_replicas_map:
                    self.remote_replicas_map[follower] = Replica(follower, self.topic_partition)
            for r in removed:
                del self.remote_replicas_map[r]
        else:
            self.remote_replicas_map.clear()
        # 2. The assignment, with any reassignment in progress.
        self.assignment = replicas
        self.adding_replicas = tuple(adding_replicas)
        self.removing_replicas = tuple(removing_replicas)
        # 3. The ISR as committed by the controller.
        self.partition_state = CommittedPartitionState(frozenset(isr), leader_recovery_state)

    # ------------------------------------------------------------------ leader / follower

    def make_leader(
        self,
        partition_state: LeaderAndIsrPartitionState,
        high_watermark_checkpoints: dict[TopicPartition, int],
        topic_id: Uuid | None,
    ) -> bool:
        """Mirrors kafka.cluster.Partition#makeLeader (Kafka 3.7).

        Returns True when this broker was not the leader before (a new leader). The epoch
        start offset and the followers' state are reset only when the leader epoch grows.
        """
        # 1. A state older than the partition epoch we know (an AlterPartition answer may
        #    already have moved it) is skipped.
        if partition_state.partition_epoch < self.partition_epoch:
            self._log.info(
                "become_leader_skipped_stale_partition_epoch",
                request_partition_epoch=partition_state.partition_epoch,
                partition_epoch=self.partition_epoch,
            )
            return False
        current_time_ms = self.time.milliseconds()
        is_new_leader = not self.is_leader
        is_new_leader_epoch = partition_state.leader_epoch > self.leader_epoch
        isr = frozenset(partition_state.isr)
        # 2. Record who decided, then assignment and ISR (a leader keeps follower replicas).
        self.controller_epoch = partition_state.controller_epoch
        self.update_assignment_and_isr(
            partition_state.replicas, True, isr,
            partition_state.adding_replicas, partition_state.removing_replicas, RECOVERED,
        )
        # 3. Make sure the local log exists.
        self.create_log_if_not_exists(partition_state.is_new, False, high_watermark_checkpoints, topic_id)
        leader_log = self.local_log_or_exception
        if is_new_leader_epoch:
            # 4. New epoch: it starts at our LEO. Cache it so followers with entries from
            #    later epochs than anything we have can still find where to truncate.
            leader_epoch_start_offset = leader_log.log_end_offset
            self._log.info(
                "become_leader",
                leader_epoch=partition_state.leader_epoch,
                epoch_start_offset=leader_epoch_start_offset,
                partition_epoch=partition_state.partition_epoch,
                high_watermark=leader_log.high_watermark,
                isr=sorted(isr),
                previous_leader=self.leader_replica_id_opt,
                previous_leader_epoch=self.leader_epoch,
            )
            leader_log.maybe_assign_epoch_start_offset(partition_state.leader_epoch, leader_epoch_start_offset)
            # 5. Reset each follower's fetch state for the new epoch.
            for replica in self.remote_replicas_map.values():
                replica.reset_replica_state(
                    current_time_ms=current_time_ms,
                    leader_end_offset=leader_epoch_start_offset,
                    is_new_leader=is_new_leader,
                    is_follower_in_sync=replica.broker_id in isr,
                )
            # 6. Only now adopt the new epoch and its start offset.
            self.leader_epoch = partition_state.leader_epoch
            self.leader_epoch_start_offset_opt = leader_epoch_start_offset
        else:
            self._log.info("become_leader_skipped_same_epoch", leader_epoch=self.leader_epoch, isr=sorted(isr))
        # 7. Adopt the partition epoch and leadership.
        self.partition_epoch = partition_state.partition_epoch
        self.leader_replica_id_opt = self.local_broker_id
        # 8. The ISR may have shrunk to us alone: the HW may move; then wake delayed requests.
        if self.maybe_increment_leader_hw(leader_log, current_time_ms):
            self.try_complete_delayed_requests()
        return is_new_leader

    def make_follower(
        self,
        partition_state: LeaderAndIsrPartitionState,
        high_watermark_checkpoints: dict[TopicPartition, int],
        topic_id: Uuid | None,
    ) -> bool:
        """Mirrors kafka.cluster.Partition#makeFollower (Kafka 3.6–3.8).

        Returns True when the leader epoch changed: fetchers must restart on every new leader
        epoch, even when the leader broker stays the same (Kafka 3.3+, KAFKA-13790; 3.0–3.2
        returned true when the leader or the epoch changed and false otherwise). The leader is
        recorded before the ISR is cleared, the 3.6 order (3.3–3.5 recorded it last). Neither
        older variant is modelled: no caller here depends on the difference.
        """
        # 1. Skip a state older than the partition epoch already known.
        if partition_state.partition_epoch < self.partition_epoch:
            self._log.info(
                "become_follower_skipped_stale_partition_epoch",
                request_partition_epoch=partition_state.partition_epoch,
                partition_epoch=self.partition_epoch,
            )
            return False
        is_new_leader_epoch = partition_state.leader_epoch > self.leader_epoch
        previous_leader, previous_epoch = self.leader_replica_id_opt, self.leader_epoch
        # 2. Leader and epochs first, then the assignment with an empty ISR (followers keep none).
        self.controller_epoch = partition_state.controller_epoch
        self.leader_replica_id_opt = partition_state.leader
        self.leader_epoch = partition_state.leader_epoch
        self.leader_epoch_start_offset_opt = None
        self.partition_epoch = partition_state.partition_epoch
        self.update_assignment_and_isr(
            partition_state.replicas, False, (),
            partition_state.adding_replicas, partition_state.removing_replicas,
            partition_state.leader_recovery_state,
        )
        # 3. The local log must exist.
        self.create_log_if_not_exists(partition_state.is_new, False, high_watermark_checkpoints, topic_id)
        follower_log = self.local_log_or_exception
        if is_new_leader_epoch:
            self._log.info(
                "become_follower",
                leader=partition_state.leader,
                leader_epoch=partition_state.leader_epoch,
                log_end_offset=follower_log.log_end_offset,
                high_watermark=follower_log.high_watermark,
                partition_epoch=partition_state.partition_epoch,
                previous_leader=previous_leader,
                previous_leader_epoch=previous_epoch,
            )
        else:
            self._log.info("become_follower_skipped_same_epoch", leader_epoch=self.leader_epoch)
        # 4. Restart fetchers only if the leader epoch moved.
        return is_new_leader_epoch

    # ------------------------------------------------------------------ follower fetch state (leader side)

    def update_follower_fetch_state(
        self,
        replica: Replica,
        follower_fetch_offset_metadata: LogOffsetMetadata,
        follower_start_offset: int,
        follower_fetch_time_ms: int,
        leader_end_offset: int,
        broker_epoch: int = -1,
    ) -> None:
        """Mirrors kafka.cluster.Partition#updateFollowerFetchState (Kafka 3.7; seed 004 §2.3).

        Record the follower's fetch (and, while DeleteRecords requests wait, see whether the low
        watermark rose with the follower's log start offset), then maybe add it to the ISR, then
        maybe move the HW if its LEO moved; if the low watermark or the HW moved, try to complete
        delayed produce/fetch/DeleteRecords requests.
        """
        # 1. The low watermark before (only computed while a DeleteRecords request waits).
        delete_waiting = self.num_delayed_delete() > 0
        old_leader_lw = self.low_watermark_if_leader() if delete_waiting else -1
        # 2. Remember the follower's previous LEO and record this fetch.
        # (The LEO is read through the snapshot's offset metadata, not its property: this runs
        #  for every partition of every follower fetch.)
        prev_follower_end_offset = replica.state_snapshot.log_end_offset_metadata.message_offset
        replica.update_fetch_state_or_throw(
            follower_fetch_offset_metadata, follower_start_offset, follower_fetch_time_ms, leader_end_offset, broker_epoch,
            self.metadata_cache,
        )
        # 3. The low watermark after.
        new_leader_lw = self.low_watermark_if_leader() if delete_waiting else -1
        leader_lw_incremented = new_leader_lw > old_leader_lw
        # 4. Maybe expand the ISR with this follower.
        self.maybe_expand_isr(replica)
        # 5. Maybe advance the HW, only if the follower's LEO changed.
        leader_hw_incremented = False
        if prev_follower_end_offset != replica.state_snapshot.log_end_offset_metadata.message_offset:
            # (leaderLogIfLocal written out: this runs per follower fetch that moved its LEO.)
            leader_log = self.log if self.leader_replica_id_opt == self.local_broker_id else None
            leader_hw_incremented = leader_log is not None and self.maybe_increment_leader_hw(
                leader_log, follower_fetch_time_ms
            )
        # 6. Wake delayed operations.
        if leader_lw_incremented or leader_hw_incremented:
            self.try_complete_delayed_requests()

    def is_replica_isr_eligible(self, follower_replica_id: int) -> bool:
        """Mirrors kafka.cluster.Partition#isReplicaIsrEligible (Kafka 3.7).

        ZooKeeper mode: the broker is alive. KRaft mode: not fenced, not in controlled
        shutdown, and the broker epoch the follower fetched with matches the metadata's
        (KIP-903, 3.5+); a replica this leader has no state for is not eligible.
        """
        get_alive_broker_epoch = getattr(self.metadata_cache, "get_alive_broker_epoch", None)
        if get_alive_broker_epoch is None:
            return self.metadata_cache.is_replica_isr_eligible(follower_replica_id)
        replica = self.remote_replicas_map.get(follower_replica_id)
        if replica is None:
            return False
        return self.metadata_cache.is_replica_isr_eligible(follower_replica_id, replica.state_snapshot.broker_epoch)

    def can_add_replica_to_isr(self, follower_replica_id: int) -> bool:
        """Mirrors kafka.cluster.Partition#canAddReplicaToIsr."""
        current = self.partition_state
        return (
            not current.is_inflight
            and follower_replica_id not in current.isr
            and self.is_replica_isr_eligible(follower_replica_id)
        )

    def is_follower_in_sync(self, follower_replica: Replica) -> bool:
        """Mirrors kafka.cluster.Partition#isFollowerInSync.

        The follower has reached the HW and the start of the current leader epoch, so it holds
        everything the leader committed and every record of this epoch's start.
        """
        leader_log = self.leader_log_if_local()
        if leader_log is None:
            return False
        end = follower_replica.state_snapshot.log_end_offset
        return (
            end >= leader_log.high_watermark
            and self.leader_epoch_start_offset_opt is not None
            and end >= self.leader_epoch_start_offset_opt
        )

    def needs_expand_isr(self, follower_replica: Replica) -> bool:
        """Mirrors kafka.cluster.Partition#needsExpandIsr."""
        return self.can_add_replica_to_isr(follower_replica.broker_id) and self.is_follower_in_sync(follower_replica)

    def maybe_expand_isr(self, follower_replica: Replica) -> None:
        """Mirrors kafka.cluster.Partition#maybeExpandIsr.

        Prepare a PendingExpandIsr (the follower counts in the maximal ISR at once) and send it
        to the controller with AlterPartition.
        """
        # 1. Cheap check first (Kafka: under the read lock). A follower already in a committed ISR
        #    fails canAddReplicaToIsr's first two tests, so it is answered without the calls
        #    (every follower fetch of every partition comes through here).
        current = self.partition_state
        if current.__class__ is CommittedPartitionState and follower_replica.broker_id in current.isr:
            return
        if not self.needs_expand_isr(follower_replica):
            return
        # 2. Re-check on committed state and prepare the pending expansion.
        current = self.partition_state
        if isinstance(current, CommittedPartitionState):
            update = self.prepare_isr_expand(current, follower_replica.broker_id)
            # 3. Submit outside the "lock".
            self.submit_alter_partition(update)

    def get_out_of_sync_replicas(self, max_lag_ms: int) -> set[int]:
        """Mirrors kafka.cluster.Partition#getOutOfSyncReplicas.

        An ISR follower is out of sync if it is neither at the leader's LEO now nor was caught up
        within ``max_lag_ms`` (by Replica's rule using the leader LEO of its previous fetch).
        """
        current = self.partition_state
        if current.is_inflight:
            return set()
        candidates = current.isr - {self.local_broker_id}
        now = self.time.milliseconds()
        leader_end_offset = self.local_log_or_exception.log_end_offset
        out = set()
        for replica_id in candidates:
            replica = self.get_replica(replica_id)
            if replica is None or not replica.state_snapshot.is_caught_up(leader_end_offset, now, max_lag_ms):
                out.add(replica_id)
        return out

    def maybe_shrink_isr(self) -> None:
        """Mirrors kafka.cluster.Partition#maybeShrinkIsr: drop lagging followers via AlterPartition."""
        # 1. Only a leader with committed state and out-of-sync followers acts.
        if self.partition_state.is_inflight or self.leader_log_if_local() is None:
            return
        out_of_sync = self.get_out_of_sync_replicas(self.replica_lag_time_max_ms)
        current = self.partition_state
        if not out_of_sync or not isinstance(current, CommittedPartitionState):
            return
        leader_log = self.local_log_or_exception
        self._log.info(
            "shrinking_isr",
            isr=sorted(current.isr),
            new_isr=sorted(current.isr - out_of_sync),
            leader_high_watermark=leader_log.high_watermark,
            leader_end_offset=leader_log.log_end_offset,
            out_of_sync={r: (self.get_replica(r).log_end_offset if self.get_replica(r) else None) for r in sorted(out_of_sync)},
        )
        # 2. Prepare the pending shrink (maximal ISR stays the committed ISR) and submit it.
        update = self.prepare_isr_shrink(current, frozenset(out_of_sync))
        self.submit_alter_partition(update)

    def maybe_increment_leader_hw(self, leader_log: "UnifiedLog", current_time_ms: int | None = None) -> bool:
        """Mirrors kafka.cluster.Partition#maybeIncrementLeaderHW (seed 004 §2.2 step 6; §2.3 step 7 calls it again).

        The new HW is the smallest LEO among the leader and every follower that is in the
        maximal ISR, or that is caught up (and eligible) and so about to join it — so a
        follower on its way in is not overtaken. Brokers from 3.7.0 (KAFKA-15583) do not move
        the HW while the committed ISR is below the effective min ISR; the switch is the broker's
        code version (``kafka_ref.broker.version``), not the IBP, because Kafka gates it on neither:
        a 3.7 broker applies it at any IBP.
        """
        # (Without a caller's time the clock is read only when a replica outside the maximal
        #  ISR is looked at: nothing moves the clock during this call, so the reading is the same.)
        # 1. Version switch: no HW advance under the effective min ISR from broker 3.7.0 on.
        if self.broker_version.no_hw_advance_below_min_isr and self.is_under_min_isr():
            return False
        # 2. Start from the leader's LEO and lower it to any replica that must be waited for.
        # (The log end read from the local log, not through UnifiedLog's property: per produce and follower LEO move.)
        leader_leo = leader_log.local_log.log_end_offset_metadata
        new_hw = leader_leo
        maximal_isr = self.partition_state.maximal_isr
        for replica in self.remote_replicas_map.values():
            state = replica.state_snapshot
            if state.log_end_offset_metadata.message_offset < new_hw.message_offset:
                if replica.broker_id not in maximal_isr and current_time_ms is None:
                    current_time_ms = self.time.milliseconds()
                if replica.broker_id in maximal_isr or (
                    state.is_caught_up(leader_leo.message_offset, current_time_ms, self.replica_lag_time_max_ms)
                    and self.is_replica_isr_eligible(replica.broker_id)
                ):
                    new_hw = state.log_end_offset_metadata
        # 3. The log only moves it forward.
        old = leader_log.maybe_increment_high_watermark(new_hw)
        if old is not None:
            self._log.debug("high_watermark_updated", old=old.message_offset, new=new_hw.message_offset)
            return True
        return False

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, Errors]:
        """Mirrors kafka.cluster.Partition#checkEnoughReplicasReachOffset (acks=all completion).

        Done when the HW reached the offset; the answer is NOT_ENOUGH_REPLICAS_AFTER_APPEND if
        the maximal ISR has meanwhile dropped below min.insync.replicas.
        """
        # (DelayedProduce asks this on every HW move of any partition of its request, and the
        #  usual answer is "not yet": leaderLogIfLocal is written out, and the maximal ISR and
        #  the min ISR are only read once the HW got there.)
        # 1. The leader's log, if this broker leads.
        leader_log = self.log if self.leader_replica_id_opt == self.local_broker_id else None
        if leader_log is None:
            return False, Errors.NOT_LEADER_OR_FOLLOWER
        # 2. Done once the HW reached the offset: then enough replicas, or too few in the maximal ISR.
        if leader_log.high_watermark >= required_offset:
            if self.effective_min_isr() <= len(self.partition_state.maximal_isr):
                return True, Errors.NONE
            return True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return False, Errors.NONE

    def try_complete_delayed_requests(self) -> None:
        """Mirrors kafka.cluster.Partition#tryCompleteDelayedRequests (DelayedOperations#checkAndCompleteAll:
        fetch, produce and DeleteRecords)."""
        self.replica_manager.complete_delayed_fetch_or_produce_requests(self.topic_partition)
        self.replica_manager.complete_delayed_delete_records_requests(self.topic_partition)

    # ------------------------------------------------------------------ appends

    def append_records_to_leader(self, records: Any, origin: AppendOrigin | str, required_acks: int) -> Any:
        """Mirrors kafka.cluster.Partition#appendRecordsToLeader.

        acks=all is refused before the append when the ISR is below min.insync.replicas.
        """
        # (leaderLogIfLocal written out: this runs per produced partition.)
        leader_log = self.log if self.leader_replica_id_opt == self.local_broker_id else None
        if leader_log is None:
            raise NotLeaderOrFollowerException(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}"
            )
        # 1. Not enough in-sync replicas (effective min ISR) for acks=all: refuse before writing.
        min_isr = self.effective_min_isr()
        in_sync_size = len(self.partition_state.isr)
        if in_sync_size < min_isr and required_acks == -1:
            raise NotEnoughReplicasException(
                f"The size of the current ISR {sorted(self.partition_state.isr)} is insufficient to satisfy "
                f"the min.isr requirement of {min_isr} for partition {self.topic_partition}"
            )
        # 2. Append with the current leader epoch.
        info = leader_log.append_as_leader(records, self.leader_epoch, origin)
        # 3. A single-member ISR advances the HW at once.
        info.leader_hw_change = (LeaderHwChange.INCREASED if self.maybe_increment_leader_hw(leader_log)
                                 else LeaderHwChange.SAME)
        return info

    def append_records_to_follower_or_future_replica(self, records: Any, is_future: bool = False) -> Any:
        """Mirrors kafka.cluster.Partition#appendRecordsToFollowerOrFutureReplica.

        A batch that starts below the log end is refused (UnexpectedAppendOffsetException), except
        on an empty log whose start offset falls inside the batch: that happens when DeleteRecords
        moved the leader's log start into the middle of a batch and this follower fetches it first.
        The log then restarts at the batch's first offset and takes it.
        """
        # 1. Append as follower.
        try:
            return self.local_log_or_exception.append_as_follower(records)
        except UnexpectedAppendOffsetException as e:
            # 2. An empty log straddled by the batch restarts at the batch's first offset; 3. retry.
            log = self.local_log_or_exception
            log_end_offset = log.log_end_offset
            if log_end_offset == log.log_start_offset and e.first_offset < log_end_offset <= e.last_offset:
                self._log.info("follower_log_restarted_at_batch", first_offset=e.first_offset,
                               log_start_offset=log.log_start_offset)
                self.truncate_fully_and_start_at(e.first_offset, is_future)
                return self.local_log_or_exception.append_as_follower(records)
            raise

    def truncate_to(self, offset: int, is_future: bool = False) -> None:
        """Mirrors kafka.cluster.Partition#truncateTo."""
        self.local_log_or_exception.truncate_to(offset)

    def truncate_fully_and_start_at(self, new_offset: int, is_future: bool = False) -> None:
        """Mirrors kafka.cluster.Partition#truncateFullyAndStartAt."""
        self.local_log_or_exception.truncate_fully_and_start_at(new_offset)

    # ------------------------------------------------------------------ removal

    def delete(self) -> None:
        """Mirrors kafka.cluster.Partition#delete: forget everything (the log manager deletes the log)."""
        self._clear()

    def mark_offline(self) -> None:
        """Mirrors kafka.cluster.Partition#markOffline: the log dir failed; forget everything."""
        self._clear()

    def _clear(self) -> None:
        """Mirrors kafka.cluster.Partition#clear."""
        self.remote_replicas_map.clear()
        self.assignment = ()
        self.adding_replicas = ()
        self.removing_replicas = ()
        self.log = None
        self.partition_state = CommittedPartitionState(frozenset(), RECOVERED)
        self.leader_replica_id_opt = None
        self.leader_epoch_start_offset_opt = None

    def __repr__(self) -> str:
        return (
            f"Partition({self.topic_partition}, leader={self.leader_replica_id_opt}, epoch={self.leader_epoch}, "
            f"partition_epoch={self.partition_epoch}, isr={sorted(self.partition_state.isr)}, "
            f"maximal_isr={sorted(self.partition_state.maximal_isr)})"
        )
