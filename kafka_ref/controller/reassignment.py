"""Partition reassignment on the ZooKeeper-era controller (KIP-455, Kafka 3.x).

Mirrors the reassignment parts of kafka.controller.KafkaController: onPartitionReassignment and
its helpers, processZkPartitionReassignment (the /admin/reassign_partitions znode),
processApiPartitionReassignment (the AlterPartitionReassignments API, with cancellation),
maybeCompleteReassignment (run after every successful AlterPartition, IBP ≥ 2.7) and the
failover / broker start-up resumption. Seed 001 §5.4.3 describes the 0.10 leader selector this
uses at step B3 (``ReassignPartitionLeaderElectionStrategy`` here).

Names, as in Kafka's comments: RS the replica set written in the topic znode, ORS the
original set, TRS the target, AR = TRS − ORS the replicas being added, RR = ORS − TRS those
being removed. Moving ORS {0,1,2} to TRS {3,4,5} goes:

====================  =========  =========  ======  ================  ============
RS                    AR         RR         leader  ISR               leader epoch
====================  =========  =========  ======  ================  ============
0,1,2                 -          -          0       0,1,2             e
3,4,5,0,1,2           3,4,5      0,1,2      0       0,1,2             e+1   (U1, A1)
3,4,5,0,1,2           3,4,5      0,1,2      0       0,1,2,3,4,5       e+1   (AlterPartition)
3,4,5,0,1,2           3,4,5      0,1,2      3       0,1,2,3,4,5       e+2   (B3 election)
3,4,5,0,1,2           3,4,5      0,1,2      3       3,4,5             e+5   (B4, one per RR)
3,4,5                 -          -          3       3,4,5             e+5   (B6)
====================  =========  =========  ======  ================  ============

The topic znode holds RS/AR/RR while the move runs, so a new controller resumes it; it is
rewritten to TRS only at the very end (B6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kafka_ref.common.errors import ControllerMovedException, Errors, StateChangeFailedException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.controller_context import (
    IllegalStateException,
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlineReplica,
    OnlinePartition,
    PartitionAndReplica,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    is_being_reassigned,
    origin_replicas,
    reassign_to,
    target_replicas,
)
from kafka_ref.controller.controller_extension import ControllerExtension
from kafka_ref.controller.election import ReassignPartitionLeaderElectionStrategy
from kafka_ref.zk.kafka_zk_client import CreateRequest, SetDataRequest
from kafka_ref.zk.zookeeper import Code
from kafka_ref.zk.zk_data import LeaderIsrAndControllerEpoch, ReassignPartitionsZNode, ReplicaAssignment, ZkVersion

if TYPE_CHECKING:
    from kafka_ref.controller.kafka_controller import KafkaController


@dataclass(frozen=True, slots=True)
class ApiError:
    """Mirrors org.apache.kafka.common.requests.ApiError: an error code and an optional message."""

    error: Errors
    message: str | None = None

    @classmethod
    def from_throwable(cls, exc: BaseException) -> "ApiError":
        """Mirrors org.apache.kafka.common.requests.ApiError#fromThrowable.

        1. The code of the exception; 2. its message, unless that is the code's default text
        (nothing worth sending) or the code is UNKNOWN_SERVER_ERROR (nothing to leak).
        """
        # 1. The code.
        error = Errors.for_exception(exc)
        # 2. The message, only when it says more than the code does.
        message = str(exc) if exc.args else None
        if error is Errors.UNKNOWN_SERVER_ERROR or message == error.message:
            message = None
        return cls(error, message)


API_ERROR_NONE = ApiError(Errors.NONE)

AlterReassignmentsCallback = Callable[["dict[TopicPartition, ApiError] | ApiError"], None]


@dataclass
class ApiPartitionReassignment(ev.ControllerEvent):
    """Mirrors kafka.controller.ApiPartitionReassignment: an AlterPartitionReassignments request, queued."""

    flow: "PartitionReassignmentFlow"
    reassignments: dict[TopicPartition, tuple[int, ...] | None]
    callback: AlterReassignmentsCallback
    name: str = field(default="ApiPartitionReassignment")
    state = ev.ControllerState.ALTER_PARTITION_REASSIGNMENT

    def process(self, controller: Any) -> None:
        self.flow.process_api_partition_reassignment(controller, self.reassignments, self.callback)

    def preempt(self) -> None:
        """Mirrors ApiPartitionReassignment#preempt: NOT_CONTROLLER."""
        self.callback(ApiError(Errors.NOT_CONTROLLER))


def _log(c: "KafkaController") -> Any:
    return c.state_change_logger.bind(controller_epoch=c.controller_context.epoch)


def _deletion(c: "KafkaController") -> Any:
    return getattr(c, "topic_deletion_manager", None)


class PartitionReassignmentFlow(ControllerExtension):
    """Mirrors the reassignment methods of kafka.controller.KafkaController, as a controller extension.

    Only the AlterPartition path (IBP ≥ 2.7) completes a move: no per-partition ISR watch is
    registered, so resignation has nothing to unregister.
    """

    # ---- failover and broker start-up ------------------------------------------------------------
    def on_failover_init(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#initializeControllerContext (its reassignment step).

        A partition whose topic znode still lists adding or removing replicas was being moved
        when the previous controller stopped: it is being reassigned.
        """
        ctx = c.controller_context
        for tp in sorted(ctx.all_partitions):
            if is_being_reassigned(ctx.partition_full_replica_assignment(tp)):
                ctx.partitions_being_reassigned.add(tp)

    def on_failover_resume(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#onControllerFailover (its ``initializePartitionReassignments`` step)."""
        self.initialize_partition_reassignments(c)

    def on_broker_startup(self, c: "KafkaController", new_brokers: list[int], replicas: list[PartitionAndReplica]) -> None:
        """Mirrors kafka.controller.KafkaController#onBrokerStartup (its reassignment step): moves waiting for these brokers resume."""
        new = set(new_brokers)
        self.maybe_resume_reassignments(c, lambda tp, assignment: any(r in new for r in target_replicas(assignment)))

    def on_alter_partition_applied(self, c: "KafkaController", partitions: Sequence[TopicPartition]) -> None:
        """Mirrors kafka.controller.KafkaController#processAlterPartition (its tail): an ISR expansion may complete a move."""
        for tp in partitions:
            if tp in c.controller_context.partitions_being_reassigned:
                self.maybe_complete_reassignment(c, tp)

    def initialize_partition_reassignments(self, c: "KafkaController") -> None:
        """Mirrors kafka.controller.KafkaController#initializePartitionReassignments.

        Reassignments written to ZooKeeper while no controller was active go first (they
        supersede API ones for the same partitions); then API reassignments in progress resume.
        """
        zk_resumed = self.process_zk_partition_reassignment(c)
        self.maybe_resume_reassignments(c, lambda tp, _assignment: tp not in zk_resumed)

    def maybe_resume_reassignments(self, c: "KafkaController",
                                   should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        """Mirrors kafka.controller.KafkaController#maybeResumeReassignments."""
        ctx = c.controller_context
        for tp in sorted(ctx.partitions_being_reassigned):
            current = ctx.partition_full_replica_assignment(tp)
            if should_resume(tp, current):
                self.on_partition_reassignment(c, tp, current)

    # ---- the reassignment itself ---------------------------------------------------------------
    def on_partition_reassignment(self, c: "KafkaController", tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#onPartitionReassignment.

        Phase U records the move (ZooKeeper first, then memory). Phase A runs while some
        target replica is not yet in the ISR: bump the leader epoch so every replica learns the
        new replica set, and start the adding replicas. Phase B runs once the whole target set
        is in the ISR: move leadership into the target set if needed, retire the removed
        replicas (out of the ISR, StopReplica, deleted), write RS = TRS and drop the request.
        """
        ctx = c.controller_context
        log = _log(c)
        deletion = _deletion(c)
        # 0. No deletion of the topic while it is being moved.
        if deletion is not None:
            deletion.mark_topic_ineligible_for_deletion({tp.topic}, "topic reassignment in progress")
        # U. Record the new assignment.
        self.update_current_reassignment(c, tp, reassignment)
        adding = reassignment.adding_replicas
        removing = reassignment.removing_replicas
        if not self.is_reassignment_complete(c, tp, reassignment):
            log.info("reassignment_phase_a", topic_partition=str(tp), replicas=list(reassignment.replicas),
                     adding=list(adding), removing=list(removing))
            # A1. New leader epoch, LeaderAndIsr with RS/AR/RR to ORS + TRS.
            self.update_leader_epoch_and_send_request(c, tp, reassignment)
            # A2. The adding replicas start (NewReplica: LeaderAndIsr is_new to them).
            self.start_new_replicas_for_reassigned_partition(c, tp, adding)
        else:
            log.info("reassignment_phase_b", topic_partition=str(tp), target=list(target_replicas(reassignment)),
                     removing=list(removing))
            # B1. The adding replicas are online.
            self._replica_state_change(c, [PartitionAndReplica(tp, r) for r in adding], OnlineReplica)
            # B2. In memory RS = TRS.
            completed = ReplicaAssignment(target_replicas(reassignment))
            ctx.update_partition_full_replica_assignment(tp, completed)
            # B3. Leader into TRS (election) or just a new epoch with RS = TRS.
            self.move_reassigned_partition_leader_if_required(c, tp, completed)
            # B4/B5. Removed replicas: out of the ISR, stopped, deleted.
            self.stop_removed_replicas_of_reassigned_partition(c, tp, removing)
            # B6. ZooKeeper RS = TRS.
            self.update_replica_assignment_for_partition(c, tp, completed)
            # B7. No longer reassigning (also out of /admin/reassign_partitions).
            self.remove_partition_from_reassigning_partitions(c, tp, completed)
            # B8. Everyone learns the final replicas and ISR.
            c.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), {tp})
            final = ctx.partition_leadership_info.get(tp)
            log.info("reassignment_completed", topic_partition=str(tp), replicas=list(completed.replicas),
                     leader_and_isr=str(final.leader_and_isr) if final is not None else None)
            # A deletion waiting on this move may go on.
            if deletion is not None:
                deletion.resume_deletion_for_topics({tp.topic})

    def update_current_reassignment(self, c: "KafkaController", tp: TopicPartition, reassignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#updateCurrentReassignment.

        A new reassignment replacing one in progress (or a cancellation) may leave some
        currently adding replicas unneeded: they are stopped and deleted right away.
        """
        ctx = c.controller_context
        current = ctx.partition_full_replica_assignment(tp)
        if current != reassignment:
            _log(c).info("reassignment_assignment_updated", topic_partition=str(tp), previous=_ra(current),
                         new=_ra(reassignment))
            # U1. ZooKeeper first, so a failover resumes from here; U2. memory.
            self.update_replica_assignment_for_partition(c, tp, reassignment)
            ctx.update_partition_full_replica_assignment(tp, reassignment)
            # U3. Replicas of the old move that the new one does not need.
            unneeded = [r for r in current.replicas if r not in reassignment.replicas]
            if unneeded:
                self.stop_removed_replicas_of_reassigned_partition(c, tp, unneeded)
        ctx.partitions_being_reassigned.add(tp)

    def is_reassignment_complete(self, c: "KafkaController", tp: TopicPartition, assignment: ReplicaAssignment) -> bool:
        """Mirrors kafka.controller.KafkaController#isReassignmentComplete: TRS ⊆ ISR, read from ZooKeeper."""
        if not is_being_reassigned(assignment):
            return True
        state = c.zk_client.get_topic_partition_states([tp]).get(tp)
        return state is not None and set(target_replicas(assignment)) <= set(state.leader_and_isr.isr)

    def move_reassigned_partition_leader_if_required(self, c: "KafkaController", tp: TopicPartition,
                                                     new_assignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#moveReassignedPartitionLeaderIfRequired (step B3).

        Leader outside TRS, or dead: elect from TRS (live, in the ISR; seed 001 §5.4.3).
        Leader in TRS and alive: only bump the leader epoch so it learns RS = TRS.
        """
        ctx = c.controller_context
        current_leader = ctx.partition_leadership_info[tp].leader_and_isr.leader
        log = _log(c)
        if current_leader not in new_assignment.replicas:
            log.info("reassignment_leader_not_in_target", topic_partition=str(tp), leader=current_leader,
                     target=list(new_assignment.replicas))
            c.partition_state_machine.handle_state_changes([tp], OnlinePartition, ReassignPartitionLeaderElectionStrategy)
        elif ctx.is_replica_online(current_leader, tp):
            log.info("reassignment_leader_in_target", topic_partition=str(tp), leader=current_leader)
            self.update_leader_epoch_and_send_request(c, tp, new_assignment)
        else:
            log.info("reassignment_leader_in_target_but_dead", topic_partition=str(tp), leader=current_leader)
            c.partition_state_machine.handle_state_changes([tp], OnlinePartition, ReassignPartitionLeaderElectionStrategy)

    def stop_removed_replicas_of_reassigned_partition(self, c: "KafkaController", tp: TopicPartition,
                                                      removed_replicas: Sequence[int]) -> None:
        """Mirrors kafka.controller.KafkaController#stopRemovedReplicasOfReassignedPartition.

        Two StopReplica requests per replica (seed 002): OfflineReplica sends one without
        delete and takes the replica out of the ISR; ReplicaDeletionStarted sends one with
        delete. The result is not awaited: the replica is marked deleted at once.
        """
        replicas = [PartitionAndReplica(tp, r) for r in removed_replicas]
        for state in (OfflineReplica, ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistentReplica):
            self._replica_state_change(c, replicas, state)

    def update_replica_assignment_for_partition(self, c: "KafkaController", tp: TopicPartition,
                                                assignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#updateReplicaAssignmentForPartition.

        Rewrites the whole topic znode with this partition's new RS/AR/RR (fenced by the
        controller epoch); a missing topic znode is an IllegalStateException.
        """
        ctx = c.controller_context
        topic_assignment = ctx.partition_full_replica_assignment_for_topic(tp.topic)
        topic_assignment[tp] = assignment
        if not c.zk_client.topic_exists(tp.topic):
            raise IllegalStateException(f"Failed to update assignment for {tp} since the topic has no current assignment")
        c.zk_client.set_topic_assignment(tp.topic, ctx.topic_ids.get(tp.topic), topic_assignment, ctx.epoch_zk_version)
        _log(c).debug("reassignment_zk_assignment_written", topic_partition=str(tp), assignment=_ra(assignment))

    def start_new_replicas_for_reassigned_partition(self, c: "KafkaController", tp: TopicPartition,
                                                    new_replicas: Sequence[int]) -> None:
        """Mirrors kafka.controller.KafkaController#startNewReplicasForReassignedPartition (one at a time)."""
        for replica in new_replicas:
            self._replica_state_change(c, [PartitionAndReplica(tp, replica)], NewReplica)

    def update_leader_epoch_and_send_request(self, c: "KafkaController", tp: TopicPartition,
                                             assignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#updateLeaderEpochAndSendRequest.

        Bumps the leader epoch (leader and ISR unchanged) and sends LeaderAndIsr with the new
        RS/AR/RR to the original replicas and, with is_new, to the adding ones.
        """
        updated = self.update_leader_epoch(c, tp)
        log = _log(c)
        if updated is None:
            log.error("reassignment_leader_epoch_update_failed", topic_partition=str(tp), assignment=_ra(assignment))
            return
        batch = c.request_batch
        try:
            batch.new_batch()
            batch.add_leader_and_isr_request_for_brokers(origin_replicas(assignment), tp, updated, assignment, is_new=False)
            batch.add_leader_and_isr_request_for_brokers(assignment.adding_replicas, tp, updated, assignment, is_new=True)
            batch.send_requests_to_brokers(c.controller_context.epoch)
        except IllegalStateException as e:
            c.handle_illegal_state(e)
        log.info("reassignment_leader_and_isr_sent", topic_partition=str(tp),
                 leader_and_isr=str(updated.leader_and_isr), assignment=_ra(assignment))

    def update_leader_epoch(self, c: "KafkaController", tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """Mirrors kafka.controller.KafkaController#updateLeaderEpoch.

        Leader and ISR stay; the leader epoch goes up by one so the leader accepts a
        LeaderAndIsr carrying the changed replica set. Retries on a version race.
        """
        ctx = c.controller_context
        while True:
            # 1. Read the state again from ZooKeeper.
            state = c.zk_client.get_topic_partition_states([tp]).get(tp)
            if state is None:
                raise IllegalStateException(
                    f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. This could mean we "
                    "somehow tried to reassign a partition that doesn't exist")
            if state.controller_epoch > ctx.epoch:
                raise StateChangeFailedException(
                    "Leader and isr path written by another controller. This probably means the current controller "
                    f"with epoch {ctx.epoch} went through a soft failure and another controller was elected with epoch "
                    f"{state.controller_epoch}. Aborting state change by this controller")
            # 2. Same leader and ISR, next epoch; 3. conditional write.
            result = c.zk_client.update_leader_and_isr({tp: state.leader_and_isr.new_epoch()}, ctx.epoch,
                                                       ctx.epoch_zk_version)
            outcome = result.finished_partitions.get(tp)
            if outcome is None:
                continue  # lost a version race: read and try again
            if isinstance(outcome, Exception):
                raise outcome
            info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
            ctx.put_partition_leadership_info(tp, info)
            _log(c).info("reassignment_leader_epoch_bumped", topic_partition=str(tp), leader_epoch=outcome.leader_epoch,
                         partition_epoch=outcome.partition_epoch)
            return info

    def remove_partition_from_reassigning_partitions(self, c: "KafkaController", tp: TopicPartition,
                                                     assignment: ReplicaAssignment) -> None:
        """Mirrors kafka.controller.KafkaController#removePartitionFromReassigningPartitions."""
        ctx = c.controller_context
        if tp not in ctx.partitions_being_reassigned:
            raise IllegalStateException("Cannot remove a reassigning partition because it is not present in memory")
        self.maybe_remove_from_zk_reassignment(
            c, lambda t, replicas: t == tp and tuple(replicas) == tuple(assignment.replicas))
        ctx.partitions_being_reassigned.discard(tp)

    def maybe_remove_from_zk_reassignment(self, c: "KafkaController",
                                          should_remove: Callable[[TopicPartition, Sequence[int]], bool]) -> None:
        """Mirrors kafka.controller.KafkaController#maybeRemoveFromZkReassignment.

        Rewrites /admin/reassign_partitions without the matching partitions; when none is
        left the znode is deleted and a ZkPartitionReassignment event re-arms the watch.
        """
        zk = c.zk_client
        ctx = c.controller_context
        if not zk.reassign_partitions_in_progress():
            return
        current = zk.get_partition_reassignment()
        removing = {tp: r for tp, r in current.items() if should_remove(tp, r)}
        remaining = {tp: r for tp, r in current.items() if not should_remove(tp, r)}
        _log(c).info("reassignment_zk_request_updated", removed=[str(tp) for tp in removing],
                     remaining=[str(tp) for tp in remaining])
        if not remaining:
            zk.delete_partition_reassignment(ctx.epoch_zk_version)
            c.event_manager.put(ev.ZkPartitionReassignment())
        else:
            _set_or_create_partition_reassignment(zk, remaining, ctx.epoch_zk_version)

    def maybe_complete_reassignment(self, c: "KafkaController", tp: TopicPartition) -> None:
        """Mirrors kafka.controller.KafkaController#maybeCompleteReassignment: phase B once TRS ⊆ ISR."""
        reassignment = c.controller_context.partition_full_replica_assignment(tp)
        if self.is_reassignment_complete(c, tp, reassignment):
            _log(c).info("reassignment_targets_in_isr", topic_partition=str(tp),
                         target=list(target_replicas(reassignment)))
            self.on_partition_reassignment(c, tp, reassignment)

    # ---- triggers ------------------------------------------------------------------------------
    def maybe_trigger_partition_reassignment(self, c: "KafkaController",
                                             reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> dict[TopicPartition, ApiError]:
        """Mirrors kafka.controller.KafkaController#maybeTriggerPartitionReassignment.

        A partition of a topic being deleted, or unknown, is refused; otherwise the move starts.
        """
        ctx = c.controller_context
        deletion = _deletion(c)
        results: dict[TopicPartition, ApiError] = {}
        for tp, reassignment in reassignments.items():
            if deletion is not None and deletion.is_topic_queued_up_for_deletion(tp.topic):
                _log(c).info("reassignment_skipped_topic_being_deleted", topic_partition=str(tp))
                results[tp] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
            elif ctx.partition_replica_assignment(tp):
                try:
                    self.on_partition_reassignment(c, tp, reassignment)
                    results[tp] = API_ERROR_NONE
                except ControllerMovedException:
                    raise
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    _log(c).error("reassignment_failed", topic_partition=str(tp), error=repr(exc))
                    results[tp] = ApiError(Errors.UNKNOWN_SERVER_ERROR)
            else:
                results[tp] = ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        return results

    def maybe_build_reassignment(self, c: "KafkaController", tp: TopicPartition,
                                 target_replicas_opt: Sequence[int] | None) -> ReplicaAssignment | None:
        """Mirrors kafka.controller.KafkaController#maybeBuildReassignment.

        No target means "cancel": back to the original replicas, if a move is in progress.
        """
        current = c.controller_context.partition_full_replica_assignment(tp)
        if is_being_reassigned(current):
            target = origin_replicas(current) if target_replicas_opt is None else tuple(target_replicas_opt)
            return reassign_to(current, target)
        if target_replicas_opt is None:
            return None
        return reassign_to(current, tuple(target_replicas_opt))

    def validate_replicas(self, c: "KafkaController", tp: TopicPartition, replicas: Sequence[int]) -> ApiError | None:
        """Mirrors kafka.controller.KafkaController#validateReplicas (API reassignments only)."""
        ctx = c.controller_context
        if not replicas:
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment.")
        if len(set(replicas)) != len(replicas):
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                            f"Duplicate replica ids in partition reassignment replica list: {list(replicas)}")
        if any(r < 0 for r in replicas):
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {list(replicas)}")
        new_assignment = reassign_to(ctx.partition_full_replica_assignment(tp), replicas)
        if not set(new_assignment.adding_replicas) <= ctx.live_broker_ids:
            return ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                            "Replica assignment has brokers that are not alive. Replica list: "
                            f"{list(new_assignment.adding_replicas)}, live broker list: {sorted(ctx.live_broker_ids)}")
        return None

    def process_zk_partition_reassignment(self, c: "KafkaController") -> set[TopicPartition]:
        """Mirrors kafka.controller.KafkaController#processZkPartitionReassignment.

        Reads /admin/reassign_partitions (re-arming the watch whether or not it exists),
        starts each move, and drops the partitions that failed from the znode.
        """
        if not (c.is_active and c.zk_client.register_znode_change_handler_and_check_existence(
                c.partition_reassignment_handler)):
            return set()
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        # 1. Build each move against the current assignment.
        for tp, targets in c.zk_client.get_partition_reassignment().items():
            built = self.maybe_build_reassignment(c, tp, targets)
            if built is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = built
        _log(c).info("reassignment_requested_in_zk", partitions={str(tp): list(a.replicas) for tp, a in to_reassign.items()})
        # 2. Start them.
        results.update(self.maybe_trigger_partition_reassignment(c, to_reassign))
        # 3. Failed ones leave the znode.
        failed = {tp for tp, e in results.items() if e.error != Errors.NONE}
        if failed:
            _log(c).warning("reassignment_failed_in_zk", errors={str(tp): results[tp].error.name for tp in sorted(failed)})
            self.maybe_remove_from_zk_reassignment(c, lambda t, _replicas: t in failed)
        return {tp for tp, e in results.items() if e.error == Errors.NONE}

    def process_api_partition_reassignment(self, c: "KafkaController",
                                           reassignments: Mapping[TopicPartition, Sequence[int] | None],
                                           callback: AlterReassignmentsCallback) -> None:
        """Mirrors kafka.controller.KafkaController#processApiPartitionReassignment.

        The newest request wins: a ZooKeeper reassignment of the same partitions is dropped
        from /admin/reassign_partitions before the move (or cancellation) starts.
        """
        if not c.is_active:
            callback(ApiError(Errors.NOT_CONTROLLER))
            return
        results: dict[TopicPartition, ApiError] = {}
        to_reassign: dict[TopicPartition, ReplicaAssignment] = {}
        # 1. Validate and build.
        for tp, targets in reassignments.items():
            error = self.validate_replicas(c, tp, targets) if targets is not None else None
            if error is not None:
                results[tp] = error
                continue
            built = self.maybe_build_reassignment(c, tp, targets)
            if built is None:
                results[tp] = ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS)
            else:
                to_reassign[tp] = built
        # 2. API over ZooKeeper; 3. start.
        self.maybe_remove_from_zk_reassignment(c, lambda t, _replicas: t in to_reassign)
        results.update(self.maybe_trigger_partition_reassignment(c, to_reassign))
        callback(results)

    def list_partition_reassignments(self, c: "KafkaController",
                                     partitions: Sequence[TopicPartition] | None = None) -> dict[TopicPartition, ReplicaAssignment]:
        """Mirrors kafka.controller.KafkaController#processListPartitionReassignments (without the event)."""
        ctx = c.controller_context
        wanted = sorted(ctx.partitions_being_reassigned) if partitions is None else list(partitions)
        return {tp: ctx.partition_full_replica_assignment(tp) for tp in wanted
                if is_being_reassigned(ctx.partition_full_replica_assignment(tp))}

    # ---- helpers -------------------------------------------------------------------------------
    def alter_partition_reassignments(self, c: "KafkaController",
                                      reassignments: Mapping[TopicPartition, Sequence[int] | None],
                                      callback: AlterReassignmentsCallback) -> None:
        """Mirrors kafka.controller.KafkaController#alterPartitionReassignments: queue the request as an event."""
        c.event_manager.put(ApiPartitionReassignment(
            self, {tp: None if r is None else tuple(r) for tp, r in reassignments.items()}, callback))

    @staticmethod
    def _replica_state_change(c: "KafkaController", replicas: list[PartitionAndReplica], state: Any) -> None:
        if replicas:
            _log(c).info("reassignment_replica_states", to_state=str(state),
                         replicas=[f"{r.topic}-{r.partition}@{r.replica}" for r in replicas])
            c.replica_state_machine.handle_state_changes(replicas, state)


def _ra(assignment: ReplicaAssignment) -> str:
    return (f"RS={list(assignment.replicas)} AR={list(assignment.adding_replicas)} "
            f"RR={list(assignment.removing_replicas)}")


def _set_or_create_partition_reassignment(zk: Any, reassignment: Mapping[TopicPartition, Sequence[int]],
                                          expected_controller_epoch_zk_version: int) -> None:
    """Mirrors kafka.zk.KafkaZkClient#setOrCreatePartitionReassignment.

    Set the znode's data, or create it if it went away; both fenced by the controller epoch.
    """
    # 1. Set; 2. on NoNode, create.
    data = ReassignPartitionsZNode.encode(reassignment)
    path = ReassignPartitionsZNode.path()
    response = zk._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION),
                                                 expected_controller_epoch_zk_version)
    if response.result_code == Code.NONODE:
        response = zk._retry_request_until_connected(CreateRequest(path, data), expected_controller_epoch_zk_version)
    response.maybe_throw()
