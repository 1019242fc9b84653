"""The ZooKeeper-era controller.

Mirrors kafka.controller.KafkaController (Kafka 3.x, ZooKeeper mode). Seed 001 is the spec:
§5.1 election (ZookeeperLeaderElector → ``elect``), §5.2 failover and resignation, §5.3 the
state machines it drives, §5.4 the leader selectors. Every action runs as an event on the
ControllerEventManager's single task, so controller state needs no locks; ZooKeeper watches
only enqueue events.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NoReturn

import anyio

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import ControllerMovedException, Errors, IllegalStateException
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.admin_flows import install_admin_flows
from kafka_ref.controller.alter_partition_handlers import AlterPartitionHandlers
from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
from kafka_ref.controller.controller_channel_manager import ControllerChannelManager
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.controller.election import OfflinePartitionLeaderElectionStrategy
from kafka_ref.controller.partition_state_machine import (
    NewPartition,
    OfflinePartition,
    OnlinePartition,
    ZkPartitionStateMachine,
)
from kafka_ref.controller.replica_state_machine import (
    NewReplica,
    OfflineReplica,
    OnlineReplica,
    PartitionAndReplica,
    ZkReplicaStateMachine,
)
from kafka_ref.zk.kafka_zk_client import KafkaZkClient
from kafka_ref.zk.zk_data import ConfigType, TopicIdReplicaAssignment, TopicPartitionsZNode, TopicZNode
from kafka_ref.zk.zookeeper_client import StateChangeHandler, ZNodeChangeHandler, ZNodeChildChangeHandler

CONTROLLER_PATH = "/controller"
BROKER_IDS_PATH = "/brokers/ids"
TOPICS_PATH = "/brokers/topics"
DELETE_TOPICS_PATH = "/admin/delete_topics"
REASSIGN_PATH = "/admin/reassign_partitions"
PREFERRED_ELECTION_PATH = "/admin/preferred_replica_election"


class _NodeHandler(ZNodeChangeHandler):
    def __init__(self, path: str, on_create: Callable[[], None] | None, on_delete: Callable[[], None] | None,
                 on_change: Callable[[], None] | None) -> None:
        self.path = path
        self._c, self._d, self._ch = on_create, on_delete, on_change

    def handle_creation(self) -> None:
        if self._c:
            self._c()

    def handle_deletion(self) -> None:
        if self._d:
            self._d()

    def handle_data_change(self) -> None:
        if self._ch:
            self._ch()


class _ChildHandler(ZNodeChildChangeHandler):
    def __init__(self, path: str, on_change: Callable[[], None]) -> None:
        self.path = path
        self._ch = on_change

    def handle_child_change(self) -> None:
        self._ch()


class _SessionHandler(StateChangeHandler):
    """Mirrors KafkaController's StateChangeHandler (session expiry → Expire, then re-register)."""

    name = "controller-state-change-handler"

    def __init__(self, controller: "KafkaController") -> None:
        self.controller = controller

    def before_initializing_session(self) -> None:
        self.controller.event_manager.clear_and_put(ev.Expire())

    def after_initializing_session(self) -> None:
        self.controller.event_manager.put(ev.RegisterBrokerAndReelect())


class KafkaController(AlterPartitionHandlers):
    """Mirrors kafka.controller.KafkaController."""

    def __init__(
        self,
        config: KafkaConfig,
        zk_client: KafkaZkClient,
        network: Any,
        broker: Any,
    ) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.zk_client = zk_client
        self.network = network
        self.broker = broker
        self.active_controller_id = -1
        self.controller_context = ControllerContext()
        self.channel_manager = ControllerChannelManager(self.broker_id, network, config.get("controller.socket.timeout.ms"))
        self.state_change_logger = state_change_logger(controller_id=self.broker_id)
        self.replica_state_machine = ZkReplicaStateMachine(
            config, self.state_change_logger, self.controller_context, zk_client, self._new_request_batch()
        )
        self.partition_state_machine = ZkPartitionStateMachine(
            config, self.state_change_logger, self.controller_context, zk_client, self._new_request_batch(),
            self.unclean_leader_election_enabled,
        )
        self.request_batch = self._new_request_batch()
        self.event_manager = ev.ControllerEventManager(self.broker_id, self)
        self.controller_change_handler = _NodeHandler(
            CONTROLLER_PATH,
            lambda: self.event_manager.put(ev.ControllerChange()),
            lambda: self.event_manager.put(ev.Reelect()),
            lambda: self.event_manager.put(ev.ControllerChange()),
        )
        self.broker_change_handler = _ChildHandler(BROKER_IDS_PATH, lambda: self.event_manager.put(ev.BrokerChange()))
        self.topic_change_handler = _ChildHandler(TOPICS_PATH, lambda: self.event_manager.put(ev.TopicChange()))
        self.topic_deletion_handler = _ChildHandler(DELETE_TOPICS_PATH, lambda: self.event_manager.put(ev.TopicDeletion()))
        self.partition_reassignment_handler = _NodeHandler(
            REASSIGN_PATH, lambda: self.event_manager.put(ev.ZkPartitionReassignment()), None, None)
        self.preferred_replica_election_handler = _NodeHandler(
            PREFERRED_ELECTION_PATH, lambda: self.event_manager.put(ev.ReplicaLeaderElection()), None, None)
        # One data watch per topic znode: partitions added to an existing topic (CreatePartitions).
        self.partition_modifications_handlers: dict[str, _NodeHandler] = {}
        self.session_handler = _SessionHandler(self)
        self._task_group: anyio.abc.TaskGroup | None = None
        self.extensions: list[Any] = []  # admin flows (deletion, reassignment, ...) hook in here
        self._log = self.state_change_logger
        install_admin_flows(self)  # reassignment, topic deletion, preferred election, controlled shutdown

    def _new_request_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(
            self.config, lambda broker_id, request, callback: self.send_request(broker_id, request, callback),
            self.state_change_logger, self.controller_context,
        )

    # ------------------------------------------------------------------ plumbing

    @property
    def is_active(self) -> bool:
        return self.active_controller_id == self.broker_id

    @property
    def epoch(self) -> int:
        return self.controller_context.epoch

    @property
    def broker_epoch(self) -> int:
        """Mirrors kafka.controller.KafkaController#brokerEpoch.

        This broker's epoch: the czxid of its /brokers/ids registration, set at startup and
        again by RegisterBrokerAndReelect after a new ZooKeeper session. kafka_ref keeps the
        value on the broker (KafkaBroker#register_broker_in_zk writes it); KafkaApis fences
        control requests against it (isBrokerEpochStale).
        """
        return self.broker.broker_epoch

    def send_request(self, broker_id: int, request: Any, callback: Callable[[Any], None] | None = None) -> None:
        """Queue a request to a broker; LeaderAndIsr answers come back as controller events."""
        from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest

        if callback is None and isinstance(request, LeaderAndIsrRequest):
            def callback(response: Any, b: int = broker_id) -> None:
                self.event_manager.put(ev.LeaderAndIsrResponseReceived(response, b))
        self.channel_manager.send_request(broker_id, request, callback)

    def unclean_leader_election_enabled(self, topic: str) -> bool:
        """The topic's unclean.leader.election.enable (its ZooKeeper config over the broker default)."""
        overrides = self.zk_client.get_entity_configs(ConfigType.TOPIC, topic)
        return LogConfig.from_broker(self.config, overrides).unclean_leader_election_enable

    # ------------------------------------------------------------------ life cycle

    def startup(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors kafka.controller.KafkaController#startup: session handler, event thread, Startup."""
        self._task_group = task_group
        self.zk_client.register_state_change_handler(self.session_handler)
        task_group.start_soon(self.event_manager.run, name=f"controller-event-thread-{self.broker_id}")
        self.event_manager.put(ev.Startup())

    def process_startup(self) -> None:
        """Mirrors KafkaController#processStartup: watch /controller, then try to become controller."""
        self.zk_client.register_znode_change_handler_and_check_existence(self.controller_change_handler)
        self.elect()

    def elect(self) -> None:
        """Mirrors KafkaController#elect (seed 001 §5.1, ZookeeperLeaderElector#elect).

        1. someone already holds /controller → remember who; 2. otherwise race to create it
        and bump /controller_epoch in one conditional multi; 3. the winner fails over; the loser
        (ControllerMovedException) resigns if needed and watches.
        """
        # 1. Existing controller?
        self.active_controller_id = _or_minus_one(self.zk_client.get_controller_id())
        if self.active_controller_id != -1:
            self._log.debug("controller_exists", active_controller_id=self.active_controller_id)
            return
        try:
            # 2. Race for the ephemeral znode and the epoch.
            epoch, epoch_zk_version = self.zk_client.register_controller_and_increment_controller_epoch(self.broker_id)
            self.controller_context.epoch = epoch
            self.controller_context.epoch_zk_version = epoch_zk_version
            self.active_controller_id = self.broker_id
            self._log.info("controller_elected", controller_epoch=epoch, epoch_zk_version=epoch_zk_version)
            # 3. Take over.
            self.on_controller_failover()
        except ControllerMovedException:
            self.maybe_resign()
            self._log.debug("controller_election_lost", active_controller_id=self.active_controller_id)

    def on_controller_failover(self) -> None:
        """Mirrors KafkaController#onControllerFailover (Kafka 3.7 order).

        Seed 001 §5.2 (0.10) lists: epoch, listeners, context, replica then partition state
        machine startup, UpdateMetadata, reassignments and preferred elections, auto-rebalance,
        deletion. Kafka 1.1 (the controller rewrite) moved the UpdateMetadata to all live brokers
        *before* the state machines start, so brokers know who is alive before any LeaderAndIsr
        arrives; we follow that order, as 3.7 has it.
        """
        assert self._task_group is not None
        # 1. Register the child and node watches the controller needs.
        for handler in (self.broker_change_handler, self.topic_change_handler, self.topic_deletion_handler):
            self.zk_client.register_znode_child_change_handler(handler)
            self.zk_client.get_children(handler.path)  # arms the child watch
        for handler in (self.preferred_replica_election_handler, self.partition_reassignment_handler):
            self.zk_client.register_znode_change_handler_and_check_existence(handler)
        # 2. Build the controller context from ZooKeeper; start the channels.
        self.initialize_controller_context()
        # 3. Topic deletion bookkeeping (extensions: the deletion manager).
        for ext in self.extensions:
            ext.on_failover_init(self)
        # 4. Tell every live broker about every live broker.
        self.send_update_metadata_request(sorted(self.controller_context.live_or_shutting_down_broker_ids), set())
        # 5. Replica then partition state machine (elects leaders for offline partitions).
        self.replica_state_machine.startup()
        self.partition_state_machine.startup()
        self._log.info("controller_failover_complete", controller_epoch=self.epoch,
                       live_brokers=sorted(self.controller_context.live_broker_ids))
        # 6. Pending reassignments, deletions, preferred elections, auto-rebalance (extensions).
        for ext in self.extensions:
            ext.on_failover_resume(self)

    def on_controller_resignation(self) -> None:
        """Mirrors KafkaController#onControllerResignation (seed 001 §5.2)."""
        self._log.info("controller_resigning", controller_epoch=self.epoch)
        for handler in (self.broker_change_handler, self.topic_change_handler, self.topic_deletion_handler):
            self.zk_client.unregister_znode_child_change_handler(handler.path)
        for handler in (self.preferred_replica_election_handler, self.partition_reassignment_handler):
            self.zk_client.unregister_znode_change_handler(handler.path)
        self.unregister_partition_modifications_handlers(list(self.partition_modifications_handlers))
        for ext in self.extensions:
            ext.on_resignation(self)
        self.partition_state_machine.shutdown()
        self.replica_state_machine.shutdown()
        for batch in (self.request_batch, self.partition_state_machine.controller_broker_request_batch,
                      self.replica_state_machine.controller_broker_request_batch):
            batch.clear()
        self.channel_manager.shutdown()
        self.controller_context.reset_context()

    def handle_illegal_state(self, e: IllegalStateException) -> NoReturn:
        """Mirrors KafkaController#handleIllegalState: a controller in an illegal state resigns.

        Called where a request batch could not be built or sent (the update of a reassigned
        partition's leader, sendUpdateMetadataRequest, doControlledShutdown).
        """
        # 1. Drop what the batch still holds; 2. give up /controller; 3. rethrow to the caller.
        self._log.error("controller_forced_to_resign", error=repr(e))
        self.request_batch.clear()
        self.trigger_controller_move()
        raise e

    def trigger_controller_move(self) -> None:
        """Mirrors KafkaController#triggerControllerMove.

        1. Re-read who holds /controller: nothing to do if it is not this broker any more.
        2. Resign (the context's epoch zkVersion is read first: resignation resets it), then
        delete /controller fenced by that zkVersion, so every broker's watch fires and a new
        election runs. A ControllerMovedException means someone else got there first.
        """
        # 1. Still the controller?
        self.active_controller_id = _or_minus_one(self.zk_client.get_controller_id())
        if not self.is_active:
            self._log.warning("controller_move_already_happened")
            return
        try:
            # 2. Resign, then hand /controller back.
            expected_controller_epoch_zk_version = self.controller_context.epoch_zk_version
            self.active_controller_id = -1
            self.on_controller_resignation()
            self.zk_client.delete_controller(expected_controller_epoch_zk_version)
        except ControllerMovedException:
            self._log.warning("controller_move_already_happened")

    def maybe_resign(self) -> None:
        """Mirrors KafkaController#maybeResign: re-watch /controller; resign if we lost it."""
        was_active = self.is_active
        self.zk_client.register_znode_change_handler_and_check_existence(self.controller_change_handler)
        self.active_controller_id = _or_minus_one(self.zk_client.get_controller_id())
        if was_active and not self.is_active:
            self.on_controller_resignation()

    def process(self, event: ev.ControllerEvent) -> Any:
        """Mirrors KafkaController#process: handle one event from the event thread.

        1. A MockEvent (used only by tests) runs its own ``process()``; what it returns (an
        awaitable, where Kafka's tests block the event thread on a latch) goes back to the event
        thread, which waits for it. 2. Every other event dispatches to this controller.
        3. A ControllerMovedException means another broker holds /controller now (a fenced
        write failed): logged at INFO, then maybe_resign(). Any other error propagates to the
        event thread, which logs and counts it and goes on.
        """
        try:
            # 1. Test events.
            if isinstance(event, ev.MockEvent):
                return event.process()
            # 2. The controller's own events.
            event.process(self)
        except ControllerMovedException as exc:
            # 3. Someone else is controller: give up what this one holds.
            self._log.info("controller_moved", controller_event=event.name, error=repr(exc))
            self.maybe_resign()
        return None

    def process_controller_change(self) -> None:
        self.maybe_resign()

    def process_reelect(self) -> None:
        """Mirrors KafkaController#processReelect: the controller znode went away."""
        self.maybe_resign()
        self.elect()

    def process_expire(self) -> None:
        """Mirrors KafkaController#processExpire: our session died, so we are no longer controller."""
        self.active_controller_id = -1
        self.on_controller_resignation()

    def process_register_broker_and_reelect(self) -> None:
        """Mirrors KafkaController#processRegisterBrokerAndReelect: new session, new broker epoch."""
        self.broker.register_broker_in_zk()
        self.process_reelect()

    def shutdown(self) -> None:
        """Mirrors KafkaController#shutdown.

        1. Close the event manager: the event in hand is the last one processed, every queued
        event is preempted (a callback waiting in one is answered with an error). 2. Resign if
        active (the event task dies with the broker).
        """
        # 1. No more events; the queued ones are preempted.
        self.event_manager.close()
        # 2. Give up the controller's state.
        if self.is_active:
            self.active_controller_id = -1
            self.on_controller_resignation()

    # ------------------------------------------------------------------ context

    def initialize_controller_context(self) -> None:
        """Mirrors KafkaController#initializeControllerContext."""
        ctx = self.controller_context
        # 1. Live brokers and their epochs.
        ctx.set_live_brokers(self.zk_client.get_all_broker_and_epochs_in_cluster())
        # 2. Topics, ids and assignments.
        topics = self.zk_client.get_all_topics_in_cluster(register_watch=True)
        ctx.set_all_topics(topics)
        self.register_partition_modifications_handlers(sorted(topics))
        items = self.zk_client.get_replica_assignment_and_topic_id_for_topics(topics)
        self.process_topic_ids(items)
        for item in items:
            for tp, assignment in item.assignment.items():
                ctx.update_partition_full_replica_assignment(tp, assignment)
        ctx.clear_partition_leadership_info()
        ctx.shutting_down_broker_ids.clear()
        # 3. Leader/ISR of every partition from its state znode.
        self.update_leader_and_isr_cache()
        # 4. Channels to every live broker.
        assert self._task_group is not None
        self.channel_manager.startup(self._task_group, sorted(ctx.live_or_shutting_down_broker_ids))

    def update_leader_and_isr_cache(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Mirrors KafkaController#updateLeaderAndIsrCache."""
        parts = list(self.controller_context.all_partitions) if partitions is None else list(partitions)
        for tp, leader_isr in self.zk_client.get_topic_partition_states(parts).items():
            self.controller_context.put_partition_leadership_info(tp, leader_isr)

    def send_update_metadata_request(self, brokers: Iterable[int], partitions: set[TopicPartition]) -> None:
        """Mirrors KafkaController#sendUpdateMetadataRequest."""
        try:
            self.request_batch.new_batch()
            self.request_batch.add_update_metadata_request_for_brokers(list(brokers), partitions)
            self.request_batch.send_requests_to_brokers(self.epoch)
        except IllegalStateException as e:
            self.handle_illegal_state(e)

    # ------------------------------------------------------------------ brokers

    def process_broker_change(self) -> None:
        """Mirrors KafkaController#processBrokerChange: new, bounced and dead brokers."""
        if not self.is_active:
            return
        ctx = self.controller_context
        cur_infos = {info.broker_id: (info, epoch) for info, epoch in self.zk_client.get_all_broker_and_epochs_in_cluster().items()}
        cur = {b: epoch for b, (_, epoch) in cur_infos.items()}
        known = set(ctx.live_or_shutting_down_broker_ids)
        new_ids = sorted(set(cur) - known)
        dead_ids = sorted(known - set(cur))
        known_epochs = ctx.live_broker_id_and_epochs
        bounced_ids = sorted(b for b in set(cur) & known if cur[b] > known_epochs.get(b, -1))
        self._log.info("broker_change", new=new_ids, dead=dead_ids, bounced=bounced_ids)
        # 1. Channels follow membership.
        for b in new_ids:
            self.channel_manager.add_broker(b)
        for b in bounced_ids:
            self.channel_manager.remove_broker(b)
            self.channel_manager.add_broker(b)
        for b in dead_ids:
            self.channel_manager.remove_broker(b)
        # 2. New brokers start up; bounced ones fail then start; dead ones fail.
        if new_ids:
            ctx.add_live_brokers({cur_infos[b][0]: cur_infos[b][1] for b in new_ids})
            self.on_broker_startup(new_ids)
        if bounced_ids:
            ctx.remove_live_brokers(set(bounced_ids))
            self.on_broker_failure(bounced_ids)
            ctx.add_live_brokers({cur_infos[b][0]: cur_infos[b][1] for b in bounced_ids})
            self.on_broker_startup(bounced_ids)
        if dead_ids:
            ctx.remove_live_brokers(set(dead_ids))
            self.on_broker_failure(dead_ids)

    def on_broker_startup(self, new_brokers: list[int]) -> None:
        """Mirrors KafkaController#onBrokerStartup."""
        ctx = self.controller_context
        new_set = set(new_brokers)
        existing = sorted(set(ctx.live_or_shutting_down_broker_ids) - new_set)
        # 1. Existing brokers learn about the new ones; new ones get every partition with a leader.
        self.send_update_metadata_request(existing, set())
        self.send_update_metadata_request(new_brokers, set(ctx.partitions_with_leaders()))
        # 2. Every replica on the new brokers goes online (they get LeaderAndIsr for what they host).
        replicas = sorted(ctx.replicas_on_brokers(new_set), key=_replica_key)
        self.replica_state_machine.handle_state_changes(replicas, OnlineReplica)
        # 3. New and offline partitions may now get a leader.
        self.partition_state_machine.trigger_online_partition_state_change()
        # 4. Reassignments and deletions waiting on these brokers (extensions).
        for ext in self.extensions:
            ext.on_broker_startup(self, new_brokers, replicas)

    def on_broker_failure(self, dead_brokers: list[int]) -> None:
        """Mirrors KafkaController#onBrokerFailure."""
        ctx = self.controller_context
        for b in dead_brokers:
            ctx.shutting_down_broker_ids.discard(b)
        replicas = sorted(ctx.replicas_on_brokers(set(dead_brokers)), key=_replica_key)
        self.on_replicas_become_offline(replicas)

    def on_replicas_become_offline(self, new_offline_replicas: list[PartitionAndReplica]) -> None:
        """Mirrors KafkaController#onReplicasBecomeOffline."""
        ctx = self.controller_context
        for_deletion = [r for r in new_offline_replicas if ctx.is_topic_queued_up_for_deletion(r.topic_partition.topic)]
        not_for_deletion = [r for r in new_offline_replicas if r not in for_deletion]
        # 1. Partitions that lost their leader go offline, then try to come back online.
        partitions_with_offline_leader = sorted(ctx.partitions_with_offline_leader(), key=_tp_key)
        self.partition_state_machine.handle_state_changes(partitions_with_offline_leader, OfflinePartition)
        results = self.partition_state_machine.trigger_online_partition_state_change()
        # 2. The replicas go offline (removed from ISRs).
        self.replica_state_machine.handle_state_changes(not_for_deletion, OfflineReplica)
        # 3. Deletion of affected topics fails for now (extensions).
        if for_deletion:
            for ext in self.extensions:
                ext.on_replicas_for_deletion_offline(self, for_deletion)
        # 4. If nothing changed, still tell everyone who is alive now.
        if not not_for_deletion and all(isinstance(v, BaseException) for v in results.values()):
            self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set())

    # ------------------------------------------------------------------ topics

    def process_topic_change(self) -> None:
        """Mirrors KafkaController#processTopicChange: new topics get partitions created."""
        if not self.is_active:
            return
        ctx = self.controller_context
        topics = self.zk_client.get_all_topics_in_cluster(register_watch=True)
        new_topics = topics - set(ctx.all_topics)
        deleted_topics = set(ctx.all_topics) - topics
        ctx.set_all_topics(topics)
        self.register_partition_modifications_handlers(sorted(new_topics))
        added = self.zk_client.get_replica_assignment_and_topic_id_for_topics(new_topics)
        for topic in deleted_topics:
            ctx.remove_topic(topic)
        self.process_topic_ids(added)
        new_partitions: list[TopicPartition] = []
        for item in added:
            for tp, assignment in item.assignment.items():
                ctx.update_partition_full_replica_assignment(tp, assignment)
                new_partitions.append(tp)
        if new_partitions:
            self.on_new_partition_creation(sorted(new_partitions, key=_tp_key))

    def process_topic_ids(self, topic_id_assignments: list[TopicIdReplicaAssignment]) -> None:
        """Mirrors KafkaController#processTopicIds (KIP-516).

        1. With an IBP that supports topic ids (2.8+), topics whose znode has no id get one
        now, written back to ZooKeeper (fenced by our controller epoch); below 2.8 the znodes
        stay as they are. 2. Every id known, new or kept from an earlier IBP, goes into the
        context, so a downgraded controller does not lose the ids topics already have.
        """
        # 1. Ids for the id-less topics, when this IBP uses ids.
        updated = list(topic_id_assignments)
        if self.config.uses_topic_id:
            with_ids = [item for item in updated if item.topic_id is not None]
            without_ids = [item for item in updated if item.topic_id is None]
            updated = with_ids + self.zk_client.set_topic_ids(without_ids, self.controller_context.epoch_zk_version,
                                                              self.broker.rng)
        # 2. The context learns every id.
        for item in updated:
            if item.topic_id is not None:
                self.controller_context.add_topic_id(item.topic, item.topic_id)

    def register_partition_modifications_handlers(self, topics: list[str]) -> None:
        """Mirrors KafkaController#registerPartitionModificationsHandlers: a data watch per topic znode.

        The handler is only registered here; the next read of the topic znode arms the watch.
        """
        for topic in topics:
            self.partition_modifications_handlers[topic] = _NodeHandler(
                TopicZNode.path(topic), None, None,
                lambda topic=topic: self.event_manager.put(ev.PartitionModifications(topic)))
        for handler in self.partition_modifications_handlers.values():
            self.zk_client.register_znode_change_handler(handler)

    def unregister_partition_modifications_handlers(self, topics: list[str]) -> None:
        """Mirrors KafkaController#unregisterPartitionModificationsHandlers."""
        for topic in topics:
            handler = self.partition_modifications_handlers.pop(topic, None)
            if handler is not None:
                self.zk_client.unregister_znode_change_handler(handler.path)

    def process_partition_modifications(self, topic: str) -> None:
        """Mirrors KafkaController#processPartitionModifications: partitions added to an existing topic.

        1. Read the topic's assignment again (re-arming the watch); the partitions the context
        does not know are new. 2. A topic queued for deletion gets no new partitions: the
        assignment of the partitions that exist is written back. 3. Otherwise the new
        partitions are created exactly as a new topic's are (onNewPartitionCreation).
        """
        if not self.is_active:
            return
        ctx = self.controller_context
        # 1. The assignment now in ZooKeeper against the context.
        assignment = self.zk_client.get_full_replica_assignment_for_topics([topic])
        to_add = {tp: a for tp, a in assignment.items() if not ctx.partition_replica_assignment(tp)}
        if ctx.is_topic_queued_up_for_deletion(topic):
            # 2. Restore what exists (Kafka's restorePartitionReplicaAssignment).
            if to_add:
                self._log.warning("partition_modifications_skipped_topic_deleting", topic=topic,
                                  partitions=sorted(tp.partition for tp in to_add))
                existing = set(self.zk_client.get_children(TopicPartitionsZNode.path(topic)))
                restored = {tp: ctx.partition_full_replica_assignment(tp)
                            for tp in assignment if str(tp.partition) in existing}
                self.zk_client.set_topic_assignment(topic, ctx.topic_ids.get(topic), restored, ctx.epoch_zk_version)
            return
        # 3. Create the new partitions.
        if to_add:
            self._log.info("partition_modifications", topic=topic, partitions=sorted(tp.partition for tp in to_add))
            for tp, replica_assignment in to_add.items():
                ctx.update_partition_full_replica_assignment(tp, replica_assignment)
            self.on_new_partition_creation(sorted(to_add, key=_tp_key))

    def enable_topic_unclean_leader_election(self, topic: str) -> None:
        """Mirrors KafkaController#enableTopicUncleanLeaderElection: queued only on the active controller."""
        if self.is_active:
            self.event_manager.put(ev.TopicUncleanLeaderElectionEnable(topic))

    def process_topic_unclean_leader_election_enable(self, topic: str) -> None:
        """Mirrors KafkaController#processTopicUncleanLeaderElectionEnable.

        The topic's New and Offline partitions get another election, now allowed to pick an
        out-of-sync replica (the offline election reads the topic's config again).
        """
        if not self.is_active:
            return
        self._log.info("topic_unclean_leader_election_enabled", topic=topic)
        self.partition_state_machine.trigger_online_partition_state_change(topic)

    def on_new_partition_creation(self, new_partitions: list[TopicPartition]) -> None:
        """Mirrors KafkaController#onNewPartitionCreation (seed 001 §5.3.2.1–5.3.2.2)."""
        self._log.info("new_partition_creation", partitions=[str(tp) for tp in new_partitions])
        replicas = sorted(self.controller_context.replicas_for_partition(new_partitions), key=_replica_key)
        self.partition_state_machine.handle_state_changes(new_partitions, NewPartition)
        self.replica_state_machine.handle_state_changes(replicas, NewReplica)
        self.partition_state_machine.handle_state_changes(
            new_partitions, OnlinePartition, OfflinePartitionLeaderElectionStrategy(False)
        )
        self.replica_state_machine.handle_state_changes(replicas, OnlineReplica)

    # ------------------------------------------------------------------ broker responses

    def process_leader_and_isr_response_received(self, response: Any, broker_id: int) -> None:
        """Mirrors KafkaController#processLeaderAndIsrResponseReceived (offline dirs are not modelled)."""
        if response.error_code != Errors.NONE.code:
            self._log.warning("leader_and_isr_response_error", broker=broker_id, error=Errors.for_code(response.error_code).name)

    def process_update_metadata_response_received(self, response: Any, broker_id: int) -> None:
        """Mirrors KafkaController#processUpdateMetadataResponseReceived: an error is logged (active controller only).

        Not yet reached from the request batch: Kafka queues an UpdateMetadataResponseReceived
        event per UpdateMetadata answer, whose only effect is this log line; queueing it here
        reorders same-instant steps in the simulator's recorded traces, so the batch passes no
        UpdateMetadata callback (the answer is dropped, as before).
        """
        if not self.is_active:
            return
        if response.error_code != Errors.NONE.code:
            self._log.error("update_metadata_response_error", broker=broker_id,
                            error=Errors.for_code(response.error_code).name)

    # ------------------------------------------------------------------ flows provided by extensions

    def _dispatch(self, method: str, *args: Any) -> None:
        handled = False
        for ext in self.extensions:
            fn = getattr(ext, method, None)
            if fn is not None:
                fn(self, *args)
                handled = True
        if not handled:
            self._log.debug("controller_event_without_handler", handler=method)

    def process_topic_deletion(self) -> None:
        self._dispatch("process_topic_deletion")

    def process_zk_partition_reassignment(self) -> None:
        self._dispatch("process_zk_partition_reassignment")

    def process_replica_leader_election(self) -> None:
        self._dispatch("process_replica_leader_election")

    def process_auto_preferred_replica_leader_election(self) -> None:
        self._dispatch("process_auto_preferred_replica_leader_election")

    def process_topic_deletion_stop_replica_response_received(self, replica_id: int, request_error: int, partition_errors: dict) -> None:
        self._dispatch("process_topic_deletion_stop_replica_response_received", replica_id, request_error, partition_errors)

    def process_controlled_shutdown(self, broker_id: int, broker_epoch: int, callback: Callable[[Any], None]) -> None:
        if not any(hasattr(ext, "process_controlled_shutdown") for ext in self.extensions):
            callback(Errors.UNSUPPORTED_VERSION)
            return
        self._dispatch("process_controlled_shutdown", broker_id, broker_epoch, callback)


def _tp_key(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)


def _replica_key(r: PartitionAndReplica) -> tuple[str, int, int]:
    return (r.topic_partition.topic, r.topic_partition.partition, r.replica)


def _or_minus_one(broker_id: int | None) -> int:
    return -1 if broker_id is None else broker_id
