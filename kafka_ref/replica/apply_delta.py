"""The KRaft half of the ReplicaManager: apply a topics delta from the metadata log.

Mirrors kafka.server.ReplicaManager#applyDelta, #applyLocalLeadersDelta,
#applyLocalFollowersDelta and #getOrCreatePartition (Kafka 3.4–3.8; 3.0–3.3 followers behind
``kafka_ref.broker.version``; seed 004 §2.2 steps 2–6).
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
from kafka_ref.image.records import NO_LEADER
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
        without deleting the old topic first. An offline partition of the same topic stays
        offline; from Kafka 3.7 (KAFKA-16157) a topic recreated under the name of one whose
        log directory failed is hosted anew (before 3.7 every offline partition stayed offline).
        From 3.8 the new Partition knows its topic id before it has a log (KAFKA-16234).
        """
        from kafka_ref.replica.partition import Partition
        from kafka_ref.replica.replica_manager import OfflinePartition

        version = self.config.broker_version
        new_topic_id = topic_id if version.is_at_least("3.8") else None
        hosted = self.all_partitions.get(tp)
        # 1. Offline log dir: nothing to do here, unless the name now belongs to another topic (3.7+).
        if isinstance(hosted, OfflinePartition):
            offline = hosted.partition
            if not version.is_at_least("3.7") or (offline is not None and offline.topic_id == topic_id):
                self._log.warning("apply_delta_offline_partition", topic_partition=str(tp), topic_id=str(topic_id))
                return None
            self._log.info("apply_delta_creating_partition_over_offline", topic_partition=str(tp),
                           topic_id=str(topic_id))
            partition = self._new_partition(tp, new_topic_id)
            self.all_partitions[tp] = partition
            return partition, True
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
        partition = self._new_partition(tp, new_topic_id)
        self.all_partitions[tp] = partition
        return partition, True

    def apply_delta(self: Any, delta: "TopicsDelta", new_image: "MetadataImage") -> "LocalReplicaChanges":
        """Mirrors ReplicaManager#applyDelta (seed 004 §2.2 step 2); returns the local changes applied.

        1. compute this broker's local changes; 2. stop (and delete) replicas removed from
        the replica set or of deleted topics — first, since a new topic may reuse the names;
        3. new leaders, then new followers (a partition whose log cannot be created goes
        offline there, in the storage-error handler, as in Kafka); 4. fetchers left without
        partitions stop.
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
            # 4. Idle fetchers.
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
                # The Partition object exists but its log could not be created: offline.
                self._log.error("apply_delta_become_leader_disk_error", topic_partition=str(tp), error=str(exc))
                self.mark_partition_offline(tp)

    def apply_local_followers_delta(self: Any, changed_partitions: set, new_image: "MetadataImage", delta: "TopicsDelta",
                                    offset_checkpoints: dict[TopicPartition, int],
                                    local_followers: Mapping[TopicPartition, "PartitionInfo"]) -> None:
        """Mirrors ReplicaManager#applyLocalFollowersDelta (Kafka 3.4–3.8; KAFKA-13790 and KAFKA-13858, 3.3.0).

        1. get or create each Partition and always make it a follower of the registration's
           leader, even a leader of -1 or one not registered: a replica that led before steps
           down, and the log exists so its HW is checkpointed (KAFKA-1647); 2. while this broker
           is in controlled shutdown, a partition with no leader, or whose ISR no longer holds
           this broker, stops fetching; otherwise a new leader epoch restarts the fetcher;
           3. remove the fetchers of the restarting partitions (so the initial offset is computed
           on a quiet log), add fetchers towards the leaders that are registered, and complete
           the delayed produce/fetch requests waiting on us as leader; 4. stop the partitions of
           step 2 (their logs stay).

        ``kafka_ref.broker.version`` selects older code: 3.3.0 also skipped every partition while
        the replica manager was shutting down; 3.0–3.2 made a follower only when the leader was
        registered and otherwise just created the log, so a leader whose partition got leader -1
        kept leading at its old epoch (``_apply_local_followers_delta_3_2``).
        """
        if not self.config.broker_version.is_at_least("3.3"):
            self._apply_local_followers_delta_3_2(changed_partitions, new_image, delta, offset_checkpoints, local_followers)
            return
        self._log.info("apply_delta_transitioning_to_followers", partitions=len(local_followers))
        skip_while_shutting_down = not self.config.broker_version.is_at_least("3.4") and self.is_shutting_down
        to_start_fetching: dict[TopicPartition, Partition] = {}
        to_stop_fetching: list[TopicPartition] = []
        # 1. Always update the follower state.
        for tp, info in sorted(local_followers.items(), key=lambda kv: str(kv[0])):
            found = self.get_or_create_partition(tp, delta, info.topic_id)
            if found is None:
                continue
            partition, is_new = found
            try:
                if skip_while_shutting_down:
                    self._log.debug("apply_delta_follower_skipped_shutting_down", topic_partition=str(tp))
                else:
                    state = info.partition.to_leader_and_isr_partition_state(tp, is_new)
                    is_new_leader_epoch = partition.make_follower(state, offset_checkpoints, info.topic_id)
                    # 2. Controlled shutdown: leaderless replicas and replicas out of the ISR stop.
                    if self.is_in_controlled_shutdown and (
                            info.partition.leader == NO_LEADER or self.local_broker_id not in info.partition.isr):
                        to_stop_fetching.append(tp)
                    elif is_new_leader_epoch:
                        to_start_fetching[tp] = partition
                changed_partitions.add(partition)
            except RUN_ENDING:
                raise
            except KafkaStorageException as exc:
                # The Partition object exists but its log could not be created: offline.
                self._log.error("apply_delta_follower_disk_error", topic_partition=str(tp), error=str(exc))
                self.replica_fetcher_manager.add_failed_partition(tp)
                self.mark_partition_offline(tp)
            except Exception as exc:  # Kafka: any Throwable marks the partition failed for the fetcher
                self._log.error("apply_delta_follower_failed", topic_partition=str(tp), error=repr(exc))
                self.replica_fetcher_manager.add_failed_partition(tp)
        # 3. Restart the fetchers of partitions at a new leader epoch.
        if to_start_fetching:
            self.replica_fetcher_manager.remove_fetcher_for_partitions(set(to_start_fetching))
            self._log.info("apply_delta_stopped_fetchers_for_followers", partitions=len(to_start_fetching))
            initial_states: dict[TopicPartition, InitialFetchState] = {}
            for tp, partition in to_start_fetching.items():
                leader = partition.leader_replica_id_opt
                registration = new_image.cluster.broker(leader) if leader is not None else None
                node = registration.node(LISTENER) if registration is not None else None
                if node is None:
                    continue  # no fetcher towards a leader that is not alive (or -1)
                initial_states[tp] = InitialFetchState(
                    topic_id=partition.topic_id, leader=node, current_leader_epoch=partition.get_leader_epoch(),
                    init_offset=self.initial_fetch_offset(partition.local_log_or_exception),
                )
            if initial_states:
                self.replica_fetcher_manager.add_fetcher_for_partitions(initial_states)
            self._log.info("apply_delta_started_fetchers_for_followers", partitions=len(initial_states),
                           leaders={str(tp): s.leader.id for tp, s in sorted(initial_states.items(), key=lambda kv: str(kv[0]))})
            for tp in to_start_fetching:
                self.complete_delayed_fetch_or_produce_requests(tp)
        # 4. Controlled shutdown: stop (without deleting) what step 2 set aside.
        if to_stop_fetching:
            from kafka_ref.replica.replica_manager import StopPartition

            self.stop_partitions([StopPartition(tp, False) for tp in to_stop_fetching])
            self._log.info("apply_delta_stopped_fetchers_for_controlled_shutdown", partitions=len(to_stop_fetching))

    def _apply_local_followers_delta_3_2(self: Any, changed_partitions: set, new_image: "MetadataImage", delta: "TopicsDelta",
                                         offset_checkpoints: dict[TopicPartition, int],
                                         new_local_followers: Mapping[TopicPartition, "PartitionInfo"]) -> None:
        """Mirrors ReplicaManager#applyLocalFollowersDelta as Kafka 3.0–3.2 had it (``kafka_ref.broker.version`` < 3.3).

        1. get or create each Partition; with a registered leader make it a follower (only a
        new leader epoch asks for a fetcher restart), without one (leader -1 included) just
        create the log so its HW is checkpointed (KAFKA-1647) — a partition this broker led
        keeps leading at its old epoch; 2. remove the fetchers of the restarting partitions;
        3. add fetchers towards the new leaders; 4. complete the delayed produce/fetch requests
        waiting on us as leader. kafka_ref's Partition#makeFollower returns 3.3's value (a new
        leader epoch); 3.0–3.2 also returned true when only the leader changed, which a KRaft
        leader change never does without a new epoch.
        """
        self._log.info("apply_delta_transitioning_to_followers", partitions=len(new_local_followers))
        shutting_down = self.is_shutting_down
        to_make_follower: dict[TopicPartition, Partition] = {}
        # 1. Become follower where the leader is registered.
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
                    elif partition.make_follower(info.partition.to_leader_and_isr_partition_state(tp, is_new),
                                                 offset_checkpoints, info.topic_id):
                        to_make_follower[tp] = partition
                changed_partitions.add(partition)
            except RUN_ENDING:
                raise
            except KafkaStorageException as exc:
                self._log.error("apply_delta_follower_disk_error", topic_partition=str(tp), error=str(exc))
                self.replica_fetcher_manager.add_failed_partition(tp)
                self.mark_partition_offline(tp)
            except Exception as exc:  # Kafka: any Throwable marks the partition failed for the fetcher
                self._log.error("apply_delta_follower_failed", topic_partition=str(tp), error=repr(exc))
                self.replica_fetcher_manager.add_failed_partition(tp)
        # 2. Stop fetching first.
        self.replica_fetcher_manager.remove_fetcher_for_partitions(set(to_make_follower))
        # 3. Fetch from the new leaders.
        initial_states: dict[TopicPartition, InitialFetchState] = {}
        for tp, partition in to_make_follower.items():
            registration = new_image.cluster.broker(partition.leader_replica_id_opt)
            node = registration.node(LISTENER) if registration is not None else None
            initial_states[tp] = InitialFetchState(
                topic_id=partition.topic_id, leader=node if node is not None else BrokerEndPoint(-1, "", -1),
                current_leader_epoch=partition.get_leader_epoch(),
                init_offset=self.initial_fetch_offset(partition.local_log_or_exception),
            )
        if initial_states:
            self.replica_fetcher_manager.add_fetcher_for_partitions(initial_states)
        # 4. Whatever waited on us as leader completes now.
        for tp in to_make_follower:
            self.complete_delayed_fetch_or_produce_requests(tp)
