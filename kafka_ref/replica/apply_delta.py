"""The KRaft half of the ReplicaManager: apply a topics delta from the metadata log.

Mirrors kafka.server.ReplicaManager#applyDelta, #applyLocalLeadersDelta,
#applyLocalFollowersDelta and #getOrCreatePartition (Kafka 3.3–3.5; seed 004 §2.2 steps 2–6).
In KRaft mode no LeaderAndIsr / StopReplica requests arrive: every broker computes its own
local changes from TopicsDelta#localChanges and turns them into the same Partition calls the
ZooKeeper path makes (``make_leader`` / ``make_follower`` / ``stop_partitions``).

``ReplicaManager`` inherits these methods (``class ReplicaManager(ReadPath, ApplyDelta)``).
Like becomeLeaderOrFollower, ``apply_delta`` is synchronous: on one event loop it is atomic,
as Kafka makes it by holding ``replicaStateChangeLock``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint, InitialFetchState

if TYPE_CHECKING:
    from kafka_ref.image.delta import LocalReplicaChanges, PartitionInfo, TopicsDelta
    from kafka_ref.image.image import MetadataImage
    from kafka_ref.replica.partition import Partition

LISTENER = "PLAINTEXT"


class ApplyDelta:
    """Mirrors the KRaft methods of kafka.server.ReplicaManager (mixed into ReplicaManager)."""

    def get_or_create_partition(self: Any, tp: TopicPartition, delta: "TopicsDelta", topic_id: Uuid) -> tuple["Partition", bool] | None:
        """Mirrors ReplicaManager#getOrCreatePartition: (partition, is_new), or None when offline.

        A hosted partition whose log carries another topic id is a broken invariant
        (IllegalStateException in Kafka): the metadata log never reuses a partition name
        without deleting the old topic first.
        """
        from kafka_ref.replica.partition import Partition
        from kafka_ref.replica.replica_manager import OfflinePartition

        hosted = self.all_partitions.get(tp)
        # 1. Offline log dir: nothing to do here.
        if isinstance(hosted, OfflinePartition):
            self._log.warning("apply_delta_offline_partition", topic_partition=str(tp), topic_id=str(topic_id))
            return None
        # 2. Already hosted: same topic id or no log yet.
        if isinstance(hosted, Partition):
            if hosted.topic_id is not None and hosted.topic_id != topic_id:
                raise RuntimeError(f"Topic {tp} exists, but its ID is {hosted.topic_id}, not {topic_id} as expected")
            return hosted, False
        # 3. New here.
        if delta.image.get_topic(topic_id) is not None:
            self._log.error("apply_delta_partition_missing", topic_partition=str(tp), topic_id=str(topic_id))
        else:
            self._log.info("apply_delta_creating_partition", topic_partition=str(tp), topic_id=str(topic_id))
        partition = self._new_partition(tp)
        self.all_partitions[tp] = partition
        return partition, True

    def apply_delta(self: Any, delta: "TopicsDelta", new_image: "MetadataImage") -> "LocalReplicaChanges":
        """Mirrors ReplicaManager#applyDelta (seed 004 §2.2 step 2); returns the local changes applied.

        1. compute this broker's local changes; 2. stop (and delete) replicas removed from
        the replica set or of deleted topics — first, since a new topic may reuse the names;
        3. new leaders, then new followers; 4. partitions whose log could not be created go
        offline; 5. fetchers left without partitions stop.
        """
        from kafka_ref.replica.replica_manager import StopPartition

        # 1. Local changes, before touching any state.
        local_changes = delta.local_changes(self.local_broker_id)
        self._log.info("apply_delta_local_changes", offset=new_image.highest_offset,
                       deletes=sorted(map(str, local_changes.deletes)), leaders=sorted(map(str, local_changes.leaders)),
                       followers=sorted(map(str, local_changes.followers)))
        # 2. Deletions.
        if local_changes.deletes:
            self._log.info("apply_delta_deleting_partitions", partitions=len(local_changes.deletes))
            errors = self.stop_partitions([StopPartition(tp, True) for tp in sorted(local_changes.deletes, key=str)])
            for tp, exc in errors.items():
                reason = "offline log directory" if isinstance(exc, KafkaStorageException) else repr(exc)
                self._log.error("apply_delta_delete_failed", topic_partition=str(tp), reason=reason)
        # 3. Leaders and followers.
        if local_changes.leaders or local_changes.followers:
            offset_checkpoints = self.high_watermark_checkpoints()
            changed_partitions: set[Partition] = set()
            if local_changes.leaders:
                self.apply_local_leaders_delta(changed_partitions, delta, offset_checkpoints, local_changes.leaders)
            if local_changes.followers:
                self.apply_local_followers_delta(changed_partitions, new_image, delta, offset_checkpoints,
                                                 local_changes.followers)
            # 4. A partition object without a log (its creation failed) is offline.
            for tp in list(local_changes.leaders) + list(local_changes.followers):
                partition = self.online_partition(tp)
                if partition is None or partition.log is None:
                    self.mark_partition_offline(tp)
            # 5. Idle fetchers.
            self.replica_fetcher_manager.shutdown_idle_fetcher_threads()
        return local_changes

    def apply_local_leaders_delta(self: Any, changed_partitions: set, delta: "TopicsDelta",
                                  offset_checkpoints: dict[TopicPartition, int],
                                  new_local_leaders: Mapping[TopicPartition, "PartitionInfo"]) -> None:
        """Mirrors ReplicaManager#applyLocalLeadersDelta (seed 004 §2.2 step 4).

        1. stop fetching these partitions; 2. get or create each Partition and make it the
        leader with the registration turned into a LeaderAndIsr partition state.
        """
        self._log.info("apply_delta_transitioning_to_leaders", partitions=len(new_local_leaders))
        # 1. Fetchers first.
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(new_local_leaders))
        # 2. Become leader.
        for tp, info in sorted(new_local_leaders.items(), key=lambda kv: str(kv[0])):
            found = self.get_or_create_partition(tp, delta, info.topic_id)
            if found is None:
                continue
            partition, is_new = found
            try:
                state = info.partition.to_leader_and_isr_partition_state(tp, is_new)
                if not partition.make_leader(state, offset_checkpoints, info.topic_id):
                    self._log.info("apply_delta_skipped_become_leader", topic_partition=str(tp),
                                   reason="already a local leader")
                changed_partitions.add(partition)
            except KafkaStorageException as exc:
                self._log.error("apply_delta_become_leader_disk_error", topic_partition=str(tp), error=str(exc))

    def apply_local_followers_delta(self: Any, changed_partitions: set, new_image: "MetadataImage", delta: "TopicsDelta",
                                    offset_checkpoints: dict[TopicPartition, int],
                                    new_local_followers: Mapping[TopicPartition, "PartitionInfo"]) -> None:
        """Mirrors ReplicaManager#applyLocalFollowersDelta (Kafka 3.3 order; seed 004 §2.2 step 6).

        1. get or create each Partition; with a registered leader make it a follower (only a
        new leader epoch asks for a fetcher restart), without one just create the log so its
        HW is checkpointed (KAFKA-1647); 2. remove the fetchers of the restarting partitions,
        so the initial offset is computed on a quiet log; 3. add fetchers towards the new
        leaders; 4. complete the delayed produce/fetch requests waiting on us as leader.
        """
        self._log.info("apply_delta_transitioning_to_followers", partitions=len(new_local_followers))
        shutting_down = self.is_shutting_down
        to_make_follower: dict[TopicPartition, Partition] = {}
        # 1. Become follower.
        for tp, info in sorted(new_local_followers.items(), key=lambda kv: str(kv[0])):
            found = self.get_or_create_partition(tp, delta, info.topic_id)
            if found is None:
                continue
            partition, is_new = found
            try:
                if shutting_down:
                    self._log.debug("apply_delta_follower_skipped_shutting_down", topic_partition=str(tp))
                else:
                    leader = info.partition.leader
                    if new_image.cluster.broker(leader) is None:
                        self._log.info("apply_delta_follower_leader_unavailable", topic_partition=str(tp), leader=leader)
                        partition.create_log_if_not_exists(is_new, False, offset_checkpoints, info.topic_id)
                    else:
                        state = info.partition.to_leader_and_isr_partition_state(tp, is_new)
                        if partition.make_follower(state, offset_checkpoints, info.topic_id):
                            to_make_follower[tp] = partition
                        else:
                            self._log.info("apply_delta_skipped_become_follower", topic_partition=str(tp),
                                           leader_epoch=state.leader_epoch, partition_epoch=state.partition_epoch)
                changed_partitions.add(partition)
            except RUN_ENDING:
                raise
            except Exception as exc:  # Kafka: any Throwable marks the partition failed for the fetcher
                self._log.error("apply_delta_follower_failed", topic_partition=str(tp), error=repr(exc))
                self.replica_fetcher_manager.add_failed_partition(tp)
        # 2. Stop fetching first.
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(to_make_follower))
        self._log.info("apply_delta_stopped_fetchers_for_followers", partitions=len(to_make_follower))
        # 3. Fetch from the new leaders.
        initial_states: dict[TopicPartition, InitialFetchState] = {}
        for tp, partition in to_make_follower.items():
            registration = new_image.cluster.broker(partition.leader_replica_id_opt)
            node = registration.node(LISTENER) if registration is not None else None
            endpoint = node if node is not None else BrokerEndPoint(-1, "", -1)
            initial_states[tp] = InitialFetchState(
                topic_id=partition.topic_id, leader=endpoint, current_leader_epoch=partition.get_leader_epoch(),
                init_offset=self.initial_fetch_offset(partition.local_log_or_exception),
            )
        if initial_states:
            self.replica_fetcher_manager.add_fetcher_for_partitions(initial_states)
        self._log.info("apply_delta_started_fetchers_for_followers", partitions=len(initial_states),
                       leaders={str(tp): s.leader.id for tp, s in sorted(initial_states.items(), key=lambda kv: str(kv[0]))})
        # 4. Whatever waited on us as leader completes now.
        for tp in to_make_follower:
            self.complete_delayed_fetch_or_produce_requests(tp)
