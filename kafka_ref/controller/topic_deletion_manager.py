"""Topic deletion on the ZooKeeper-era controller.

Mirrors kafka.controller.TopicDeletionManager, kafka.controller.DeletionClient /
ControllerDeletionClient and the deletion parts of kafka.controller.KafkaController (Kafka 3.x):
processTopicDeletion, processTopicDeletionStopReplicaResponseReceived,
fetchTopicDeletionsInProgress and the deletion hooks of failover, broker start-up and broker
failure. Seed 001 §5.3.3 gives the replica states a deletion walks through.

How a deletion goes, in short:

* An admin (DeleteTopics → ZkAdminManager) creates ``/admin/delete_topics/<topic>``; the
  controller's child watch fires ``TopicDeletion``; the topic is queued.
* When the topic is eligible (queued, nothing in ReplicaDeletionStarted, not marked ineligible)
  its partitions go Offline → NonExistent, every broker gets UpdateMetadata with leader
  LeaderDuringDelete (-2) so it forgets the partitions, and its replicas go OfflineReplica
  (StopReplica without delete, out of the ISR) → ReplicaDeletionStarted (StopReplica with
  delete and leader epoch EpochDuringDelete).
* Each StopReplica answer comes back as a ``TopicDeletionStopReplicaResponseReceived`` event:
  replicas without error become ReplicaDeletionSuccessful, the others
  ReplicaDeletionIneligible (the topic is then halted until something resumes it).
* Replicas on dead brokers go straight to ReplicaDeletionIneligible; the topic waits until
  the broker comes back (``on_broker_startup``) and is then retried.
* When every replica is ReplicaDeletionSuccessful, the replicas become NonExistentReplica and
  the topic znode, its config and its delete marker are removed.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kafka_ref.common.errors import Errors
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.controller_context import (
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflineReplica,
    PartitionAndReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
)
from kafka_ref.controller.controller_extension import ControllerExtension

if TYPE_CHECKING:
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.controller.controller_context import ControllerContext
    from kafka_ref.controller.kafka_controller import KafkaController


def _sorted_replicas(replicas: Iterable[PartitionAndReplica]) -> list[PartitionAndReplica]:
    return sorted(replicas, key=lambda r: (r.topic, r.partition, r.replica))


def _describe(replicas: Iterable[PartitionAndReplica]) -> list[str]:
    return [f"{r.topic}-{r.partition}@{r.replica}" for r in _sorted_replicas(replicas)]


class DeletionClient(abc.ABC):
    """Mirrors kafka.controller.DeletionClient: what the manager needs from outside the context."""

    @abc.abstractmethod
    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        """Mirrors kafka.controller.DeletionClient#deleteTopic."""

    @abc.abstractmethod
    def delete_topic_deletions(self, topics: list[str], epoch_zk_version: int) -> None:
        """Mirrors kafka.controller.DeletionClient#deleteTopicDeletions."""

    @abc.abstractmethod
    def mute_partition_modifications(self, topic: str) -> None:
        """Mirrors kafka.controller.DeletionClient#mutePartitionModifications."""

    @abc.abstractmethod
    def send_metadata_update(self, partitions: set[TopicPartition]) -> None:
        """Mirrors kafka.controller.DeletionClient#sendMetadataUpdate."""


class ControllerDeletionClient(DeletionClient):
    """Mirrors kafka.controller.ControllerDeletionClient: the controller and its ZooKeeper client."""

    def __init__(self, controller: "KafkaController", zk_client: Any) -> None:
        self.controller = controller
        self.zk_client = zk_client

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        """Mirrors kafka.controller.ControllerDeletionClient#deleteTopic.

        Every write is fenced by the controller epoch znode version, so a deposed controller
        cannot finish a deletion the new one is handling.
        """
        # 1. /brokers/topics/<topic> and everything under it (partition state znodes).
        self.zk_client.delete_topic_znode(topic, epoch_zk_version)
        # 2. /config/topics/<topic>.
        self.zk_client.delete_topic_configs([topic], epoch_zk_version)
        # 3. The marker /admin/delete_topics/<topic>.
        self.zk_client.delete_topic_deletions([topic], epoch_zk_version)

    def delete_topic_deletions(self, topics: list[str], epoch_zk_version: int) -> None:
        """Mirrors kafka.controller.ControllerDeletionClient#deleteTopicDeletions."""
        self.zk_client.delete_topic_deletions(topics, epoch_zk_version)

    def mute_partition_modifications(self, topic: str) -> None:
        """Mirrors kafka.controller.ControllerDeletionClient#mutePartitionModifications.

        The controller drops the topic's PartitionModificationsHandler, so a re-created topic of
        the same name is seen as a new topic, not as a partition change of the old one.
        """
        self.controller.unregister_partition_modifications_handlers([topic])

    def send_metadata_update(self, partitions: set[TopicPartition]) -> None:
        """Mirrors kafka.controller.ControllerDeletionClient#sendMetadataUpdate: to every live broker."""
        ctx = self.controller.controller_context
        self.controller.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set(partitions))


class TopicDeletionManager:
    """Mirrors kafka.controller.TopicDeletionManager (Kafka 3.7).

    The bookkeeping (topics to be deleted, with deletion started, ineligible) lives in the
    ControllerContext, as in 3.7; this class holds the rules. With ``delete.topic.enable=false``
    nothing is ever queued and every query answers as if no deletion existed.
    """

    def __init__(self, config: "KafkaConfig", controller_context: "ControllerContext", replica_state_machine: Any,
                 partition_state_machine: Any, client: DeletionClient, state_change_logger: Any) -> None:
        self.config = config
        self.controller_context = controller_context
        self.replica_state_machine = replica_state_machine
        self.partition_state_machine = partition_state_machine
        self.client = client
        self.is_delete_topic_enabled: bool = bool(config.get("delete.topic.enable"))
        self._log = state_change_logger

    # ---- entry points ------------------------------------------------------------------------
    def init(self, initial_topics_to_be_deleted: set[str], initial_topics_ineligible_for_deletion: set[str]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#init (called on controller failover).

        With deletion enabled the topics found under /admin/delete_topics are queued and those
        that cannot make progress now stay ineligible; with deletion disabled the markers are
        removed, so they do not fire again on every failover.
        """
        self._log.info("topic_deletion_manager_init", topics_to_be_deleted=sorted(initial_topics_to_be_deleted),
                       ineligible=sorted(initial_topics_ineligible_for_deletion))
        ctx = self.controller_context
        if self.is_delete_topic_enabled:
            # 1. Queue; 2. keep the ineligible ones that are queued halted.
            ctx.queue_topic_deletion(initial_topics_to_be_deleted)
            ctx.topics_ineligible_for_deletion.update(initial_topics_ineligible_for_deletion & ctx.topics_to_be_deleted)
        else:
            # 1. Deletion is off: clear the markers.
            self.client.delete_topic_deletions(sorted(initial_topics_to_be_deleted), ctx.epoch_zk_version)

    def try_topic_deletion(self) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#tryTopicDeletion."""
        if self.is_delete_topic_enabled:
            self.resume_deletions()

    def enqueue_topics_for_deletion(self, topics: set[str]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#enqueueTopicsForDeletion.

        A topic stays queued until every replica of every partition is deleted.
        """
        if self.is_delete_topic_enabled:
            # 1. Queue (this also cleans the preferred-replica imbalance metric); 2. act.
            self.controller_context.queue_topic_deletion(topics)
            self._log.info("topic_deletion_enqueued", topics=sorted(topics))
            self.resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str] = ()) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#resumeDeletionForTopics.

        Called when a broker hosting replicas of queued topics starts, or when a reassignment
        of one of their partitions completes: they become eligible again.
        """
        if self.is_delete_topic_enabled:
            ctx = self.controller_context
            to_resume = set(topics) & ctx.topics_to_be_deleted
            if to_resume:
                ctx.topics_ineligible_for_deletion.difference_update(to_resume)
                self._log.info("topic_deletion_resumed", topics=sorted(to_resume))
                self.resume_deletions()

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#failReplicaDeletion.

        Replicas whose deletion failed (an error in the StopReplica answer, or their broker
        died) become ReplicaDeletionIneligible and their topics are halted.
        """
        if self.is_delete_topic_enabled:
            failed = _sorted_replicas(r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic))
            if failed:
                topics = {r.topic for r in failed}
                self._log.info("replica_deletion_failed", replicas=_describe(failed), topics=sorted(topics))
                # 1. Mark the replicas; 2. halt their topics; 3. see what else can move.
                self._replica_state_change(failed, ReplicaDeletionIneligible)
                self.mark_topic_ineligible_for_deletion(topics, "replica deletion failure")
                self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: str) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#markTopicIneligibleForDeletion.

        Only topics already queued are halted (dead replicas, a reassignment in progress).
        """
        if self.is_delete_topic_enabled:
            ctx = self.controller_context
            new_halted = ctx.topics_to_be_deleted & set(topics)
            ctx.topics_ineligible_for_deletion.update(new_halted)
            if new_halted:
                self._log.info("topic_deletion_halted", topics=sorted(new_halted), reason=reason)

    def is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        """Mirrors kafka.controller.TopicDeletionManager#isTopicIneligibleForDeletion."""
        if self.is_delete_topic_enabled:
            return topic in self.controller_context.topics_ineligible_for_deletion
        return True

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        """Mirrors kafka.controller.TopicDeletionManager#isTopicDeletionInProgress: a replica is being deleted."""
        if self.is_delete_topic_enabled:
            return self.controller_context.is_any_replica_in_state(topic, ReplicaDeletionStarted)
        return False

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """Mirrors kafka.controller.TopicDeletionManager#isTopicQueuedUpForDeletion."""
        if self.is_delete_topic_enabled:
            return self.controller_context.is_topic_queued_up_for_deletion(topic)
        return False

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#completeReplicaDeletion.

        A broker answered StopReplica(delete) without error for these replicas: they become
        ReplicaDeletionSuccessful, and a topic whose replicas all are is torn down.
        """
        deleted = _sorted_replicas(r for r in replicas if self.is_topic_queued_up_for_deletion(r.topic))
        self._log.info("replica_deletion_successful", replicas=_describe(deleted))
        self._replica_state_change(deleted, ReplicaDeletionSuccessful)
        self.resume_deletions()

    def is_topic_eligible_for_deletion(self, topic: str) -> bool:
        """Mirrors kafka.controller.TopicDeletionManager#isTopicEligibleForDeletion.

        Queued, no replica being deleted right now, and not halted.
        """
        return (self.controller_context.is_topic_queued_up_for_deletion(topic)
                and not self.is_topic_deletion_in_progress(topic)
                and not self.is_topic_ineligible_for_deletion(topic))

    # ---- the work ----------------------------------------------------------------------------
    def retry_deletion_for_ineligible_replicas(self, topics: set[str]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#retryDeletionForIneligibleReplicas.

        ReplicaDeletionIneligible replicas go back to OfflineReplica so the next pass can move
        them to ReplicaDeletionStarted again.
        """
        ctx = self.controller_context
        failed = _sorted_replicas(r for t in topics for r in ctx.replicas_in_state(t, ReplicaDeletionIneligible))
        self._log.info("topic_deletion_retry", topics=sorted(topics), replicas=_describe(failed))
        self._replica_state_change(failed, OfflineReplica)

    def complete_delete_topic(self, topic: str) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#completeDeleteTopic.

        1. stop watching the topic znode; 2. deleted replicas become NonExistentReplica (out of
        the assignment cache); 3. remove the topic from ZooKeeper; 4. forget it.
        """
        ctx = self.controller_context
        # 1. A re-created topic must not look like a partition change of this one.
        self.client.mute_partition_modifications(topic)
        # 2. The replicas leave the state machine.
        deleted = _sorted_replicas(ctx.replicas_in_state(topic, ReplicaDeletionSuccessful))
        self._replica_state_change(deleted, NonExistentReplica)
        # 3. ZooKeeper: topic znode, config, delete marker.
        self.client.delete_topic(topic, ctx.epoch_zk_version)
        # 4. The controller's cache.
        ctx.remove_topic(topic)
        self._log.info("topic_deletion_completed", topic=topic)

    def on_topic_deletion(self, topics: set[str]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#onTopicDeletion.

        Topics seen for the first time: their partitions go Offline then NonExistent, and only
        then is the deletion marked as started (so the offline-partition count ignores them).
        Every broker then learns (leader LeaderDuringDelete) that the partitions are going.
        """
        ctx = self.controller_context
        unseen = topics - ctx.topics_with_deletion_started
        if unseen:
            partitions = sorted(p for t in unseen for p in ctx.partitions_for_topic(t))
            # 1. Partitions: Offline, then NonExistent.
            self.partition_state_machine.handle_state_changes(partitions, OfflinePartition)
            self.partition_state_machine.handle_state_changes(partitions, NonExistentPartition)
            # 2. After the state changes, so the offline count was adjusted first.
            ctx.begin_topic_deletion(unseen)
            self._log.info("topic_deletion_started", topics=sorted(unseen),
                           partitions=[str(p) for p in partitions])
        # 3. Brokers stop serving these partitions (UpdateMetadata with LeaderDuringDelete).
        self.client.send_metadata_update({p for t in topics for p in ctx.partitions_for_topic(t)})
        # 4. The replicas.
        self.on_partition_deletion(topics)

    def on_partition_deletion(self, topics_to_be_deleted: set[str]) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#onPartitionDeletion.

        1. replicas on dead brokers → ReplicaDeletionIneligible (their topics are halted);
        2. live replicas not yet deleted → OfflineReplica (StopReplica, out of the ISR);
        3. the same → ReplicaDeletionStarted (StopReplica with delete).
        """
        ctx = self.controller_context
        all_dead: list[PartitionAndReplica] = []
        all_for_retry: list[PartitionAndReplica] = []
        ineligible_topics: set[str] = set()
        for topic in sorted(topics_to_be_deleted):
            replicas = _sorted_replicas(ctx.replicas_for_topic(topic))
            alive = [r for r in replicas if ctx.is_replica_online(r.replica, r.topic_partition)]
            dead = [r for r in replicas if r not in alive]
            done = ctx.replicas_in_state(topic, ReplicaDeletionSuccessful)
            all_dead.extend(dead)
            all_for_retry.extend(r for r in alive if r not in done)
            if dead:
                self._log.info("topic_deletion_dead_replicas", topic=topic, replicas=_describe(dead))
                ineligible_topics.add(topic)
        # 1. Dead replicas cannot be deleted now.
        self._replica_state_change(all_dead, ReplicaDeletionIneligible)
        # 2. Stop the followers fetching (and take every replica out of the ISR).
        self._replica_state_change(all_for_retry, OfflineReplica)
        # 3. Delete.
        self._replica_state_change(all_for_retry, ReplicaDeletionStarted)
        if ineligible_topics:
            self.mark_topic_ineligible_for_deletion(ineligible_topics, "offline replicas")

    def resume_deletions(self) -> None:
        """Mirrors kafka.controller.TopicDeletionManager#resumeDeletions (private in Kafka).

        For each queued topic: all replicas deleted → tear it down; nothing in progress and
        some replica ineligible → retry those; eligible → (re)start its deletion.
        """
        ctx = self.controller_context
        queued = sorted(ctx.topics_to_be_deleted)
        eligible_for_retry: set[str] = set()
        eligible_for_deletion: set[str] = set()
        for topic in queued:
            # 1. Done?
            if ctx.are_all_replicas_in_state(topic, ReplicaDeletionSuccessful):
                self.complete_delete_topic(topic)
            elif not ctx.is_any_replica_in_state(topic, ReplicaDeletionStarted):
                # 2. Not started, or some replica failed: a retry candidate.
                if ctx.is_any_replica_in_state(topic, ReplicaDeletionIneligible):
                    eligible_for_retry.add(topic)
            # 3. Eligible now?
            if self.is_topic_eligible_for_deletion(topic):
                eligible_for_deletion.add(topic)
        if eligible_for_retry:
            self.retry_deletion_for_ineligible_replicas(eligible_for_retry)
        if eligible_for_deletion:
            self.on_topic_deletion(eligible_for_deletion)

    def _replica_state_change(self, replicas: list[PartitionAndReplica], state: ReplicaState) -> None:
        if replicas:
            self._log.info("deletion_replica_states", to_state=str(state), replicas=_describe(replicas))
            self.replica_state_machine.handle_state_changes(replicas, state)


class TopicDeletionFlow(ControllerExtension):
    """Mirrors the topic-deletion parts of kafka.controller.KafkaController, as a controller extension.

    Holds the controller's TopicDeletionManager (also reachable as
    ``controller.topic_deletion_manager``) and the KafkaController methods that feed it. The
    deletion bookkeeping goes with ControllerContext#resetContext on resignation.
    """

    def __init__(self, controller: "KafkaController") -> None:
        self.manager = TopicDeletionManager(
            controller.config, controller.controller_context, controller.replica_state_machine,
            controller.partition_state_machine, ControllerDeletionClient(controller, controller.zk_client),
            controller.state_change_logger,
        )
        # StopReplica(delete) answers for topics being deleted come back as controller events.
        hook = _stop_replica_response_hook(controller)
        for batch in (controller.request_batch, controller.replica_state_machine.controller_broker_request_batch,
                      controller.partition_state_machine.controller_broker_request_batch):
            batch.stop_replica_response_callback = hook

    # ---- failover ------------------------------------------------------------------------------
    def fetch_topic_deletions_in_progress(self, c: "KafkaController") -> tuple[set[str], set[str]]:
        """Mirrors kafka.controller.KafkaController#fetchTopicDeletionsInProgress.

        The topics marked in ZooKeeper, and those that cannot progress now: a replica offline,
        or a partition being reassigned.
        """
        ctx = c.controller_context
        # 1. The markers.
        to_be_deleted = set(c.zk_client.get_topic_deletions())
        # 2. Topics with a replica that is not online.
        with_offline = {t for t in ctx.all_topics
                        if any(not ctx.is_replica_online(r.replica, r.topic_partition) for r in ctx.replicas_for_topic(t))}
        # 3. Topics with a reassignment in progress.
        reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
        return to_be_deleted, with_offline | reassigning

    def on_failover_init(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#onControllerFailover (its deletion-manager initialisation).

        Runs before the state machines start, as in Kafka.
        """
        to_be_deleted, ineligible = self.fetch_topic_deletions_in_progress(c)
        self.manager.init(to_be_deleted, ineligible)

    def on_failover_resume(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#onControllerFailover (its ``tryTopicDeletion`` step)."""
        self.manager.try_topic_deletion()

    def on_broker_startup(self, c: "KafkaController", new_brokers: list[int], replicas: list[PartitionAndReplica]) -> None:
        """Mirrors kafka.controller.KafkaController#onBrokerStartup (its deletion step): a returning broker may unblock deletions."""
        for_deletion = [r for r in replicas if self.manager.is_topic_queued_up_for_deletion(r.topic)]
        if for_deletion:
            c.state_change_logger.info("topic_deletion_replicas_on_started_brokers", brokers=sorted(new_brokers),
                                       replicas=_describe(for_deletion))
            self.manager.resume_deletion_for_topics({r.topic for r in for_deletion})

    def on_replicas_for_deletion_offline(self, c: "KafkaController", replicas: list[PartitionAndReplica]) -> None:
        """Mirrors kafka.controller.KafkaController#onReplicasBecomeOffline (its deletion step): their deletion fails for now."""
        self.manager.fail_replica_deletion(replicas)

    # ---- events --------------------------------------------------------------------------------
    def process_topic_deletion(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#processTopicDeletion (the /admin/delete_topics watch).

        Markers of unknown topics are removed; with deletion enabled the others are queued
        (halted first if a partition is being reassigned); with deletion disabled their markers
        are removed.
        """
        if not c.is_active:
            return
        ctx = c.controller_context
        # 1. Read the markers (re-arms the child watch).
        topics = set(c.zk_client.get_topic_deletions())
        # 2. Unknown topics: drop their markers.
        non_existent = topics - ctx.all_topics
        if non_existent:
            c.state_change_logger.warning("topic_deletion_of_unknown_topics", topics=sorted(non_existent))
            c.zk_client.delete_topic_deletions(sorted(non_existent), ctx.epoch_zk_version)
        topics -= non_existent
        if self.manager.is_delete_topic_enabled:
            if topics:
                c.state_change_logger.info("topic_deletion_requested", topics=sorted(topics))
                # 3. A reassignment in progress halts the deletion (only topics already queued).
                reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
                for topic in sorted(topics):
                    if topic in reassigning:
                        self.manager.mark_topic_ineligible_for_deletion({topic}, "topic reassignment in progress")
                # 4. Queue them.
                self.manager.enqueue_topics_for_deletion(topics)
        else:
            # 3'. delete.topic.enable=false: the markers go away.
            c.state_change_logger.info("topic_deletion_disabled_removing_markers", topics=sorted(topics))
            c.zk_client.delete_topic_deletions(sorted(topics), ctx.epoch_zk_version)

    def process_topic_deletion_stop_replica_response_received(
        self, c: "KafkaController", replica_id: int, request_error: int, partition_errors: dict[TopicPartition, Errors],
    ) -> None:
        """Mirrors kafka.controller.KafkaController#processTopicDeletionStopReplicaResponseReceived.

        A request-level error fails every partition of the answer; otherwise each partition's
        own error decides between ReplicaDeletionIneligible and ReplicaDeletionSuccessful.
        """
        if not c.is_active:
            return
        c.state_change_logger.debug("topic_deletion_stop_replica_response", broker=replica_id,
                                    request_error=Errors.for_code(request_error).name,
                                    partition_errors={str(tp): e.name for tp, e in partition_errors.items()})
        # 1. Which partitions failed.
        if request_error != Errors.NONE.code:
            in_error = set(partition_errors)
        else:
            in_error = {tp for tp, e in partition_errors.items() if e != Errors.NONE}
        # 2. Those replicas failed; 3. the others are deleted.
        self.manager.fail_replica_deletion({PartitionAndReplica(tp, replica_id) for tp in in_error})
        if len(in_error) != len(partition_errors):
            deleted = set(partition_errors) - in_error
            self.manager.complete_replica_deletion({PartitionAndReplica(tp, replica_id) for tp in deleted})


def _stop_replica_response_hook(controller: "KafkaController") -> Callable[[Any, int, dict], None]:
    """Mirrors ControllerBrokerRequestBatch#handleStopReplicaResponse: the answer becomes an event."""

    def hook(response: Any, broker_id: int, partition_errors: dict[TopicPartition, Errors]) -> None:
        controller.event_manager.put(ev.TopicDeletionStopReplicaResponseReceived(
            broker_id, response.error_code, dict(partition_errors)))

    return hook
