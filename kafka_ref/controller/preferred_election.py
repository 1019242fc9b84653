"""Preferred replica leader election and the automatic leader rebalance.

Mirrors the election parts of kafka.controller.KafkaController (Kafka 3.x):
processReplicaLeaderElection / onReplicaElection for the /admin/preferred_replica_election
znode (ZkTriggered), fetchPendingPreferredReplicaElections and
removePartitionsFromPreferredReplicaElection, and the auto-rebalance task
(checkAndTriggerAutoLeaderRebalance, canPreferredReplicaBeLeader,
processAutoPreferredReplicaLeaderElection, scheduleAutoLeaderRebalanceTask). Seed 001 §5.4.4
describes the 0.10 PreferredReplicaPartitionLeaderSelector; the rule is the same here
(``PreferredReplicaPartitionLeaderElectionStrategy``): the first assigned replica leads if it is
alive and in the ISR; the ISR is unchanged; the leader epoch goes up by one.

The auto-rebalance check runs ``leader.imbalance.check.interval.seconds`` apart (the first
5 s after failover) on the broker's KafkaScheduler, in loop time. For each broker that is the
preferred replica of some partitions, the imbalance ratio is the share of those partitions it
does not lead; above ``leader.imbalance.per.broker.percentage`` / 100 the partitions whose
preferred replica could lead are elected back to it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kafka_ref.common.errors import ControllerMovedException, Errors, StateChangeFailedException
from kafka_ref.common.requests.elect_leaders import ElectionType
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.controller_context import OnlinePartition
from kafka_ref.controller.controller_extension import ControllerExtension
from kafka_ref.controller.election import (
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionAlgorithms,
    PreferredReplicaPartitionLeaderElectionStrategy,
)
from kafka_ref.controller.reassignment import ApiError
from kafka_ref.zk.zk_data import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_ref.controller.kafka_controller import KafkaController

AUTO_REBALANCE_INITIAL_DELAY_MS = 5000  # scheduleAutoLeaderRebalanceTask(delay = 5, SECONDS) at failover


class ElectionTrigger(enum.Enum):
    """Mirrors kafka.controller.ElectionTrigger (AutoTriggered, ZkTriggered, AdminClientTriggered)."""

    AutoTriggered = "AutoTriggered"
    ZkTriggered = "ZkTriggered"
    AdminClientTriggered = "AdminClientTriggered"


@dataclass
class AdminReplicaLeaderElection(ev.ControllerEvent):
    """Mirrors kafka.controller.ReplicaLeaderElection in its AdminClientTriggered form (ElectLeaders)."""

    flow: "PreferredReplicaElectionFlow"
    partitions: set[TopicPartition]
    election_type: "ElectionType"
    callback: Callable[[dict[TopicPartition, Any]], None]
    name: str = field(default="ReplicaLeaderElection")
    state = ev.ControllerState.MANUAL_LEADER_BALANCE

    def process(self, controller: Any) -> None:
        results = self.flow.process_replica_leader_election_for(
            controller, self.partitions, self.election_type, ElectionTrigger.AdminClientTriggered)
        self.callback(results or {})

    def preempt(self) -> None:
        """Mirrors ReplicaLeaderElection#preempt: NOT_CONTROLLER for every partition asked for."""
        self.callback({tp: ApiError(Errors.NOT_CONTROLLER) for tp in self.partitions})


def _log(c: "KafkaController") -> Any:
    return c.state_change_logger.bind(controller_epoch=c.controller_context.epoch)


def _is_queued_for_deletion(c: "KafkaController", topic: str) -> bool:
    manager = getattr(c, "topic_deletion_manager", None)
    return manager.is_topic_queued_up_for_deletion(topic) if manager is not None else False


class PreferredReplicaElectionFlow(ControllerExtension):
    """Mirrors the preferred-election and auto-rebalance parts of kafka.controller.KafkaController.

    Installed as a KafkaController extension.

    ``generation`` stands for the controller's own KafkaScheduler being shut down on
    resignation: a rebalance task scheduled by an earlier term of this controller does nothing.
    """

    def __init__(self) -> None:
        self.generation = 0

    # ---- failover ------------------------------------------------------------------------------
    def on_failover_resume(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#onControllerFailover (its election and scheduler steps).

        Elections written to ZooKeeper before this controller took over run now; then the
        auto-rebalance task is scheduled if ``auto.leader.rebalance.enable``.
        """
        # 1. Pending /admin/preferred_replica_election.
        pending = self.fetch_pending_preferred_replica_elections(c)
        self.on_replica_election(c, pending, ElectionType.PREFERRED, ElectionTrigger.ZkTriggered)
        # 2. The controller scheduler starts (a new term); 3. first rebalance check in 5 s.
        self.generation += 1
        if c.config.get("auto.leader.rebalance.enable"):
            self.schedule_auto_leader_rebalance_task(c, AUTO_REBALANCE_INITIAL_DELAY_MS)

    def on_resignation(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#onControllerResignation (its ``kafkaScheduler.shutdown()`` step)."""
        self.generation += 1

    def fetch_pending_preferred_replica_elections(self, c: "KafkaController") -> set[TopicPartition]:
        """Mirrors kafka.controller.KafkaController#fetchPendingPreferredReplicaElections.

        Partitions listed in the znode that already have their preferred leader, or whose
        topic is gone or queued for deletion, are skipped.
        """
        ctx = c.controller_context
        listed = c.zk_client.get_preferred_replica_election()
        completed = set()
        for tp in listed:
            replicas = ctx.partition_replica_assignment(tp)
            info = ctx.partition_leadership_info.get(tp)
            if not replicas or (info is not None and info.leader_and_isr.leader == replicas[0]):
                completed.add(tp)
        pending = listed - completed
        skipped = {tp for tp in pending if _is_queued_for_deletion(c, tp.topic)}
        pending -= skipped
        log = _log(c).info if listed else _log(c).debug  # an empty znode is not worth a line
        log("preferred_replica_elections_pending", listed=_names(listed), completed=_names(completed),
            skipped_for_deletion=_names(skipped), resuming=_names(pending))
        return pending

    # ---- the election --------------------------------------------------------------------------
    def on_replica_election(self, c: "KafkaController", partitions: set[TopicPartition], election_type: ElectionType,
                            election_trigger: ElectionTrigger) -> dict[TopicPartition, Any]:
        """Mirrors kafka.controller.KafkaController#onReplicaElection.

        Runs the election through the partition state machine (Online → Online) and returns
        each partition's new LeaderAndIsr or the error; for ZooKeeper and auto triggers the
        znode bookkeeping follows whatever happened.
        """
        log = _log(c).info if partitions else _log(c).debug
        log("replica_leader_election", election_type=election_type.name, trigger=election_trigger.value,
            partitions=_names(partitions))
        try:
            # 1. The strategy: preferred, or unclean only when an admin asked for it.
            if election_type == ElectionType.PREFERRED:
                strategy: Any = PreferredReplicaPartitionLeaderElectionStrategy
            else:
                strategy = OfflinePartitionLeaderElectionStrategy(
                    allow_unclean=election_trigger == ElectionTrigger.AdminClientTriggered)
            # 2. Elect.
            results = c.partition_state_machine.handle_state_changes(sorted(partitions), OnlinePartition, strategy)
            # 3. Errors are logged (a moved controller stops everything).
            if election_trigger != ElectionTrigger.AdminClientTriggered:
                for tp, outcome in sorted(results.items()):
                    if isinstance(outcome, ControllerMovedException):
                        raise outcome
                    if isinstance(outcome, Exception):
                        _log(c).error("replica_leader_election_failed", topic_partition=str(tp),
                                      election_type=election_type.name, error=str(outcome))
            return results
        finally:
            if election_trigger != ElectionTrigger.AdminClientTriggered:
                self.remove_partitions_from_preferred_replica_election(
                    c, partitions, election_trigger == ElectionTrigger.AutoTriggered)

    def remove_partitions_from_preferred_replica_election(self, c: "KafkaController", partitions: Iterable[TopicPartition],
                                                          is_triggered_by_auto_rebalance: bool) -> None:
        """Mirrors kafka.controller.KafkaController#removePartitionsFromPreferredReplicaElection.

        Logs which partitions now have their preferred leader. For a ZooKeeper request the
        znode is deleted and a ReplicaLeaderElection event re-arms the watch.
        """
        ctx = c.controller_context
        log = _log(c)
        for tp in sorted(partitions):
            info = ctx.partition_leadership_info.get(tp)
            replicas = ctx.partition_replica_assignment(tp)
            if info is None or not replicas:
                continue
            if info.leader_and_isr.leader == replicas[0]:
                log.info("preferred_replica_election_completed", topic_partition=str(tp), leader=replicas[0],
                         leader_epoch=info.leader_and_isr.leader_epoch)
            else:
                log.warning("preferred_replica_election_not_completed", topic_partition=str(tp),
                            preferred=replicas[0], leader=info.leader_and_isr.leader)
        if not is_triggered_by_auto_rebalance:
            c.zk_client.delete_preferred_replica_election(ctx.epoch_zk_version)
            c.event_manager.put(ev.ReplicaLeaderElection())

    def elect_leaders(self, c: "KafkaController", partitions: Iterable[TopicPartition], election_type: ElectionType,
                      callback: Callable[[dict[TopicPartition, Any]], None]) -> None:
        """Mirrors kafka.controller.KafkaController#electLeaders: an admin's election, queued as an event.

        The callback gets, per partition, the new leader id or an ApiError.
        """
        c.event_manager.put(AdminReplicaLeaderElection(self, set(partitions), election_type, callback))

    def process_replica_leader_election(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#processReplicaLeaderElection for a ZooKeeper trigger.

        Re-arms the watch on /admin/preferred_replica_election; if it exists, elects the
        preferred leader of the listed partitions that exist, are not being deleted and are not
        already led by their preferred replica.
        """
        self.process_replica_leader_election_for(c, None, ElectionType.PREFERRED, ElectionTrigger.ZkTriggered)

    def process_replica_leader_election_for(self, c: "KafkaController", partitions_from_admin: set[TopicPartition] | None,
                                            election_type: ElectionType, election_trigger: ElectionTrigger,
                                            ) -> dict[TopicPartition, ApiError | int] | None:
        """Mirrors kafka.controller.KafkaController#processReplicaLeaderElection (all triggers).

        Returns per partition the new leader or an ApiError (Kafka hands this to the
        ElectLeaders callback); None when there was nothing to do.
        """
        ctx = c.controller_context
        if not c.is_active:
            if partitions_from_admin is None:
                return None
            return {tp: ApiError(Errors.NOT_CONTROLLER) for tp in partitions_from_admin}
        # 1. Admin partitions, or the znode (re-arming its watch; absent → nothing to do).
        if election_trigger != ElectionTrigger.AdminClientTriggered and not \
                c.zk_client.register_znode_change_handler_and_check_existence(c.preferred_replica_election_handler):
            return None
        partitions = set(partitions_from_admin) if partitions_from_admin is not None \
            else c.zk_client.get_preferred_replica_election()
        # 2. Unknown partitions and partitions of topics being deleted are skipped.
        all_partitions = ctx.all_partitions
        unknown = {tp for tp in partitions if tp not in all_partitions}
        known = partitions - unknown
        being_deleted = {tp for tp in known if _is_queued_for_deletion(c, tp.topic)}
        live = known - being_deleted
        if unknown:
            _log(c).info("replica_leader_election_unknown_partitions", partitions=_names(unknown))
        if being_deleted:
            _log(c).warning("replica_leader_election_topics_being_deleted", partitions=_names(being_deleted))
        # 3. Only partitions that need a new leader.
        electable: set[TopicPartition] = set()
        already_valid: set[TopicPartition] = set()
        for tp in live:
            info = ctx.partition_leadership_info.get(tp)
            leader = info.leader_and_isr.leader if info is not None else LeaderAndIsr.NO_LEADER
            if election_type == ElectionType.PREFERRED:
                needs = leader != ctx.partition_replica_assignment(tp)[0]
            else:
                needs = leader == LeaderAndIsr.NO_LEADER or leader not in ctx.live_broker_ids
            (electable if needs else already_valid).add(tp)
        # 4. Elect and report.
        results: dict[TopicPartition, ApiError | int] = {}
        for tp, outcome in self.on_replica_election(c, electable, election_type, election_trigger).items():
            if isinstance(outcome, StateChangeFailedException):
                error = Errors.PREFERRED_LEADER_NOT_AVAILABLE if election_type == ElectionType.PREFERRED \
                    else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
                results[tp] = ApiError(error, str(outcome))
            elif isinstance(outcome, Exception):
                results[tp] = ApiError(Errors.for_exception(outcome), str(outcome))
            else:
                results[tp] = outcome.leader
        results.update({tp: ApiError(Errors.ELECTION_NOT_NEEDED) for tp in already_valid})
        results.update({tp: ApiError(Errors.INVALID_TOPIC_EXCEPTION, "The topic is being deleted") for tp in being_deleted})
        results.update({tp: ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
                        for tp in unknown})
        return results

    # ---- auto rebalance ------------------------------------------------------------------------
    def schedule_auto_leader_rebalance_task(self, c: "KafkaController", delay_ms: int) -> None:
        """Mirrors kafka.controller.KafkaController#scheduleAutoLeaderRebalanceTask (a one-shot task).

        When it fires it only queues an AutoPreferredReplicaLeaderElection event, so the check
        runs on the controller's event task like everything else.
        """
        generation = self.generation

        def fire() -> None:
            if generation == self.generation and c.is_active:
                c.event_manager.put(ev.AutoPreferredReplicaLeaderElection())

        c.broker.scheduler.schedule("auto-leader-rebalance-task", fire, delay_ms=delay_ms)

    def process_auto_preferred_replica_leader_election(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#processAutoPreferredReplicaLeaderElection.

        Check, then schedule the next check ``leader.imbalance.check.interval.seconds`` later.
        """
        if not c.is_active:
            return
        try:
            _log(c).info("auto_preferred_replica_leader_election_check")
            self.check_and_trigger_auto_leader_rebalance(c)
        finally:
            self.schedule_auto_leader_rebalance_task(c, c.config.get("leader.imbalance.check.interval.seconds") * 1000)

    def check_and_trigger_auto_leader_rebalance(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#checkAndTriggerAutoLeaderRebalance."""
        ctx = c.controller_context
        threshold = c.config.get("leader.imbalance.per.broker.percentage") / 100
        # 1. Partitions (not being deleted) grouped by their preferred replica.
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in sorted(ctx.all_partitions):
            replicas = ctx.partition_replica_assignment(tp)
            if replicas and not _is_queued_for_deletion(c, tp.topic):
                by_preferred.setdefault(replicas[0], []).append(tp)
        for broker, partitions in sorted(by_preferred.items()):
            # 2. Those it does not lead, and the ratio.
            not_led = [tp for tp in partitions if (info := ctx.partition_leadership_info.get(tp)) is not None
                       and info.leader_and_isr.leader != broker]
            ratio = len(not_led) / len(partitions)
            _log(c).debug("leader_imbalance_ratio", broker=broker, ratio=ratio, not_led=_names(not_led))
            # 3. Above the threshold: elect the preferred replica where it can lead.
            if ratio > threshold:
                candidates = {tp for tp in not_led if not _is_queued_for_deletion(c, tp.topic)
                              and tp.topic in ctx.all_topics and self.can_preferred_replica_be_leader(c, tp)}
                _log(c).info("leader_imbalance_above_threshold", broker=broker, ratio=round(ratio, 4),
                             threshold=threshold, candidates=_names(candidates))
                self.on_replica_election(c, candidates, ElectionType.PREFERRED, ElectionTrigger.AutoTriggered)

    def can_preferred_replica_be_leader(self, c: "KafkaController", tp: TopicPartition) -> bool:
        """Mirrors kafka.controller.KafkaController#canPreferredReplicaBeLeader: alive and in the ISR."""
        ctx = c.controller_context
        assignment = ctx.partition_replica_assignment(tp)
        live = [r for r in assignment if ctx.is_replica_online(r, tp)]
        isr = ctx.partition_leadership_info[tp].leader_and_isr.isr
        return PartitionLeaderElectionAlgorithms.preferred_replica_partition_leader_election(assignment, isr, live) is not None


def _names(partitions: Iterable[TopicPartition]) -> list[str]:
    return [str(tp) for tp in sorted(partitions)]
