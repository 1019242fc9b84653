"""The replica state machine: where each (partition, broker) replica is in its life.

Mirrors kafka.controller.ReplicaStateMachine and ZkReplicaStateMachine (Kafka 3.x); seed 001
§5.3.3 describes the 0.10 version and its state diagram. The states and their valid previous
states are data (``VALID_PREVIOUS_REPLICA_STATES``); a replica whose current state does not allow
the target is logged with an IllegalStateException and left alone. The transitions that talk to
brokers:

* NonExistent → NewReplica: LeaderAndIsr (is_new) to the replica if the partition has a leader.
* → OnlineReplica: LeaderAndIsr with the current leader and ISR (or, from NewReplica, only make
  sure the replica is in the assignment).
* → OfflineReplica: StopReplica(delete=False) to it; remove it from the ISR in ZooKeeper (with
  version-race retries; a sole ISR member stays) and send the new LeaderAndIsr to the other
  replicas, or just UpdateMetadata when the partition never had a leader.
* Offline → ReplicaDeletionStarted: StopReplica(delete=True) to it.
* ReplicaDeletionSuccessful → NonExistentReplica: drop it from the assignment.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Sequence

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import ControllerMovedException, StateChangeFailedException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import (  # noqa: F401  (the states are re-exported here)
    VALID_PREVIOUS_REPLICA_STATES,
    IllegalStateException,
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlineReplica,
    PartitionAndReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
    remove_replica,
)
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartitionStateZNode
from kafka_ref.zk.zookeeper import Code

if TYPE_CHECKING:
    from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
    from kafka_ref.controller.controller_context import ControllerContext
    from kafka_ref.zk.kafka_zk_client import KafkaZkClient

__all__ = [
    "VALID_PREVIOUS_REPLICA_STATES", "NewReplica", "NonExistentReplica", "OfflineReplica", "OnlineReplica",
    "PartitionAndReplica", "ReplicaDeletionIneligible", "ReplicaDeletionStarted", "ReplicaDeletionSuccessful",
    "ReplicaState", "ReplicaStateMachine", "ZkReplicaStateMachine",
]


class ReplicaStateMachine(abc.ABC):
    """Mirrors kafka.controller.ReplicaStateMachine: start-up from the context."""

    def __init__(self, controller_context: "ControllerContext") -> None:
        self.controller_context = controller_context

    def startup(self) -> None:
        """Mirrors ReplicaStateMachine#startup: set every replica's state, then push online and offline ones."""
        # 1. States from broker liveness.
        self.initialize_replica_state()
        # 2. Online replicas get LeaderAndIsr; 3. offline ones are stopped and leave ISRs.
        online, offline = self.controller_context.online_and_offline_replicas()
        self.handle_state_changes(sorted(online), OnlineReplica)
        self.handle_state_changes(sorted(offline), OfflineReplica)

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Mirrors ReplicaStateMachine#shutdown (the states go with ControllerContext#resetContext)."""

    def initialize_replica_state(self) -> None:
        """Mirrors ReplicaStateMachine#initializeReplicaState.

        A replica on an online broker is OnlineReplica; any other is ReplicaDeletionIneligible,
        so a topic deletion racing with the failover does not count on it.
        """
        ctx = self.controller_context
        for tp in sorted(ctx.all_partitions):
            for replica_id in ctx.partition_replica_assignment(tp):
                replica = PartitionAndReplica(tp, replica_id)
                if ctx.is_replica_online(replica_id, tp):
                    ctx.put_replica_state(replica, OnlineReplica)
                else:
                    ctx.put_replica_state(replica, ReplicaDeletionIneligible)

    @abc.abstractmethod
    def handle_state_changes(self, replicas: Sequence[PartitionAndReplica], target_state: ReplicaState) -> None:
        """Mirrors ReplicaStateMachine#handleStateChanges."""


class ZkReplicaStateMachine(ReplicaStateMachine):
    """Mirrors kafka.controller.ZkReplicaStateMachine."""

    def __init__(self, config: KafkaConfig, state_change_logger: Any, controller_context: "ControllerContext",
                 zk_client: "KafkaZkClient", controller_broker_request_batch: "ControllerBrokerRequestBatch") -> None:
        super().__init__(controller_context)
        self.config = config
        self.controller_id = config.broker_id
        self.state_change_logger = state_change_logger
        self.zk_client = zk_client
        self.controller_broker_request_batch = controller_broker_request_batch

    def shutdown(self) -> None:
        """Mirrors ReplicaStateMachine#shutdown: only a log line (the states go with resetContext)."""
        self.state_change_logger.info("replica_state_machine_stopped")

    def _log(self) -> Any:
        return self.state_change_logger.bind(controller_epoch=self.controller_context.epoch)

    def handle_state_changes(self, replicas: Sequence[PartitionAndReplica], target_state: ReplicaState) -> None:
        """Mirrors ZkReplicaStateMachine#handleStateChanges.

        Replicas are handled broker by broker (in first-seen order) inside one batch.
        ControllerMovedException propagates; any other failure is logged.
        """
        replicas = list(replicas)
        if not replicas:
            return
        try:
            # 1. A fresh batch; 2. per broker, the transitions; 3. one send.
            self.controller_broker_request_batch.new_batch()
            by_replica: dict[int, list[PartitionAndReplica]] = {}
            for r in replicas:
                by_replica.setdefault(r.replica, []).append(r)
            for replica_id, for_broker in by_replica.items():
                self._do_handle_state_changes(replica_id, for_broker, target_state)
            self.controller_broker_request_batch.send_requests_to_brokers(self.controller_context.epoch)
        except ControllerMovedException as exc:
            self.state_change_logger.error("controller_moved_during_replica_state_change",
                                           target_state=str(target_state), error=repr(exc))
            raise
        except RUN_ENDING:
            raise
        except Exception as exc:
            self.state_change_logger.error("replica_state_change_error", target_state=str(target_state),
                                           error=repr(exc))

    def _do_handle_state_changes(self, replica_id: int, replicas: list[PartitionAndReplica],
                                 target_state: ReplicaState) -> None:
        """Mirrors ZkReplicaStateMachine#doHandleStateChanges (the transition table at work)."""
        ctx = self.controller_context
        batch = self.controller_broker_request_batch
        # 1. Unknown replicas start as NonExistentReplica; 2. refuse forbidden transitions.
        for r in replicas:
            ctx.put_replica_state_if_not_exists(r, NonExistentReplica)
        valid, invalid = ctx.check_valid_replica_state_change(replicas, target_state)
        for r in invalid:
            self._log_invalid_transition(r, target_state)
        # 3. Apply the target state.
        if target_state == NewReplica:
            for r in valid:
                tp, current = r.topic_partition, ctx.replica_state(r)
                info = ctx.partition_leadership_info.get(tp)
                if info is not None and info.leader_and_isr.leader == replica_id:
                    # A replica that is already the leader cannot be a new replica.
                    self._log_failed_state_change(r, current, NewReplica, StateChangeFailedException(
                        f"Replica {replica_id} for partition {tp} cannot be moved to NewReplica state as it is "
                        "being requested to become leader"))
                    continue
                if info is not None:
                    batch.add_leader_and_isr_request_for_brokers([replica_id], tp, info,
                                                                 ctx.partition_full_replica_assignment(tp), is_new=True)
                self._log_successful_transition(replica_id, tp, current, NewReplica)
                ctx.put_replica_state(r, NewReplica)
        elif target_state == OnlineReplica:
            for r in valid:
                tp, current = r.topic_partition, ctx.replica_state(r)
                if current == NewReplica:
                    # A new replica joins the assignment if it is not there yet.
                    assignment = ctx.partition_full_replica_assignment(tp)
                    if replica_id not in assignment.replicas:
                        self._log().error("adding_replica_not_in_assignment", replica=replica_id,
                                          topic_partition=str(tp), assignment=list(assignment.replicas))
                        ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(
                            assignment.replicas + (replica_id,), assignment.adding_replicas,
                            assignment.removing_replicas))
                else:
                    info = ctx.partition_leadership_info.get(tp)
                    if info is not None:
                        batch.add_leader_and_isr_request_for_brokers(
                            [replica_id], tp, info, ctx.partition_full_replica_assignment(tp), is_new=False)
                self._log_successful_transition(replica_id, tp, current, OnlineReplica)
                ctx.put_replica_state(r, OnlineReplica)
        elif target_state == OfflineReplica:
            self._to_offline(replica_id, valid)
        elif target_state == ReplicaDeletionStarted:
            for r in valid:
                self._log_successful_transition(replica_id, r.topic_partition, ctx.replica_state(r), target_state)
                ctx.put_replica_state(r, ReplicaDeletionStarted)
                batch.add_stop_replica_request_for_brokers([replica_id], r.topic_partition, delete_partition=True)
        elif target_state in (ReplicaDeletionIneligible, ReplicaDeletionSuccessful):
            for r in valid:
                self._log_successful_transition(replica_id, r.topic_partition, ctx.replica_state(r), target_state)
                ctx.put_replica_state(r, target_state)
        else:  # NonExistentReplica
            for r in valid:
                current = ctx.replica_state(r)
                ctx.update_partition_full_replica_assignment(
                    r.topic_partition, remove_replica(ctx.partition_full_replica_assignment(r.topic_partition), r.replica))
                self._log_successful_transition(replica_id, r.topic_partition, current, NonExistentReplica)
                ctx.remove_replica_state(r)

    def _to_offline(self, replica_id: int, valid: list[PartitionAndReplica]) -> None:
        """The OfflineReplica branch of ZkReplicaStateMachine#doHandleStateChanges."""
        ctx = self.controller_context
        batch = self.controller_broker_request_batch
        # 1. Stop the replica (keep its log).
        for r in valid:
            batch.add_stop_replica_request_for_brokers([replica_id], r.topic_partition, delete_partition=False)
        with_leader = [r for r in valid if r.topic_partition in ctx.partition_leadership_info]
        without_leader = [r for r in valid if r.topic_partition not in ctx.partition_leadership_info]
        # 2. Take it out of the ISR of partitions that have a leader; tell the other replicas.
        updated = self.remove_replicas_from_isr(replica_id, [r.topic_partition for r in with_leader])
        for tp, info in updated.items():
            self._log().info("partition_isr_shrunk_for_offline_replica", topic_partition=str(tp), replica=replica_id,
                             leader_and_isr=str(info.leader_and_isr))
            if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                recipients = [b for b in ctx.partition_replica_assignment(tp) if b != replica_id]
                batch.add_leader_and_isr_request_for_brokers(recipients, tp, info,
                                                             ctx.partition_full_replica_assignment(tp), is_new=False)
            r = PartitionAndReplica(tp, replica_id)
            self._log_successful_transition(replica_id, tp, ctx.replica_state(r), OfflineReplica)
            ctx.put_replica_state(r, OfflineReplica)
        # 3. Partitions that never had a leader: only metadata to broadcast.
        for r in without_leader:
            self._log_successful_transition(replica_id, r.topic_partition, ctx.replica_state(r), OfflineReplica)
            batch.add_update_metadata_request_for_brokers(sorted(ctx.live_or_shutting_down_broker_ids),
                                                          [r.topic_partition])
            ctx.put_replica_state(r, OfflineReplica)

    # ---- removing a replica from ISRs ----------------------------------------------------------
    def remove_replicas_from_isr(self, replica_id: int,
                                 partitions: Sequence[TopicPartition]) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Mirrors ZkReplicaStateMachine#removeReplicasFromIsr: retry until no version race is left.

        Returns the new leader/ISR of every partition handled (also those the replica was not in
        the ISR of); failures are logged and left out.
        """
        results: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = list(partitions)
        while remaining:
            finished, remaining = self._do_remove_replicas_from_isr(replica_id, remaining)
            for tp, outcome in finished.items():
                if isinstance(outcome, Exception):
                    r = PartitionAndReplica(tp, replica_id)
                    self._log_failed_state_change(r, self.controller_context.replica_state(r), OfflineReplica, outcome)
                else:
                    results[tp] = outcome
        return results

    def _do_remove_replicas_from_isr(
        self, replica_id: int, partitions: list[TopicPartition],
    ) -> tuple[dict[TopicPartition, LeaderIsrAndControllerEpoch | Exception], list[TopicPartition]]:
        """Mirrors ZkReplicaStateMachine#doRemoveReplicasFromIsr: one read-adjust-write round."""
        ctx = self.controller_context
        # 1. Current states from ZooKeeper.
        leader_and_isrs, no_state_in_zk = self._get_topic_partition_states_from_zk(partitions)
        with_replica = {tp: v for tp, v in leader_and_isrs.items()
                        if isinstance(v, LeaderAndIsr) and replica_id in v.isr}
        without_replica = {tp: v for tp, v in leader_and_isrs.items() if tp not in with_replica}
        # 2. Drop the replica from the ISR (not the last member); it no longer leads.
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        for tp, lai in with_replica.items():
            new_leader = LeaderAndIsr.NO_LEADER if replica_id == lai.leader else lai.leader
            new_isr = lai.isr if len(lai.isr) == 1 else tuple(r for r in lai.isr if r != replica_id)
            adjusted[tp] = lai.new_leader_and_isr(new_leader, new_isr)
        # 3. Write, fenced by the controller epoch, each conditional on the version read.
        update = self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)
        # 4. No state znode: a failure unless the topic is being deleted.
        out: dict[TopicPartition, LeaderIsrAndControllerEpoch | Exception] = {}
        for tp in no_state_in_zk:
            if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                out[tp] = StateChangeFailedException(
                    f"Failed to change state of replica {replica_id} for partition {tp} since the leader and isr "
                    "path in zookeeper is empty")
        # 5. Cache what is now true.
        for tp, outcome in {**without_replica, **update.finished_partitions}.items():
            if isinstance(outcome, Exception):
                out[tp] = outcome
            else:
                info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
                ctx.put_partition_leadership_info(tp, info)
                out[tp] = info
        for tp in update.partitions_to_retry:
            self._log().debug("remove_replica_from_isr_bad_zk_version", topic_partition=str(tp), replica=replica_id,
                              attempted=str(adjusted[tp]))
        return out, list(update.partitions_to_retry)

    def _get_topic_partition_states_from_zk(
        self, partitions: list[TopicPartition],
    ) -> tuple[dict[TopicPartition, LeaderAndIsr | Exception], list[TopicPartition]]:
        """Mirrors ZkReplicaStateMachine#getTopicPartitionStatesFromZk.

        Returns the states read (or the error, including "written by a newer controller") and
        the partitions without a state znode.
        """
        ctx = self.controller_context
        try:
            responses = self.zk_client.get_topic_partition_states_raw(partitions)
        except RUN_ENDING:
            raise
        except Exception as exc:
            return {tp: exc for tp in partitions}, []
        result: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        missing: list[TopicPartition] = []
        for response in responses:
            tp = response.ctx
            if response.result_code == Code.OK:
                decoded = TopicPartitionStateZNode.decode(response.data, response.stat)
                if decoded is None:
                    missing.append(tp)
                elif decoded.controller_epoch > ctx.epoch:
                    result[tp] = StateChangeFailedException(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {ctx.epoch} went through a soft failure and another controller was "
                        f"elected with epoch {decoded.controller_epoch}. Aborting state change by this controller")
                else:
                    result[tp] = decoded.leader_and_isr
            elif response.result_code == Code.NONODE:
                missing.append(tp)
            else:
                result[tp] = response.result_exception
        return result, missing

    # ---- logging -------------------------------------------------------------------------------
    def _log_successful_transition(self, replica_id: int, partition: TopicPartition,
                                   current_state: ReplicaState, target_state: ReplicaState) -> None:
        """Mirrors ZkReplicaStateMachine#logSuccessfulTransition (Kafka's trace level)."""
        self._log().debug("replica_state_changed", replica=replica_id, topic_partition=str(partition),
                          from_state=str(current_state), to_state=str(target_state))

    def _log_invalid_transition(self, replica: PartitionAndReplica, target_state: ReplicaState) -> None:
        """Mirrors ZkReplicaStateMachine#logInvalidTransition: an IllegalStateException, logged."""
        current = self.controller_context.replica_state(replica)
        valid = ",".join(str(s) for s in sorted(target_state.valid_previous_states, key=lambda s: s.value))
        self._log_failed_state_change(replica, current, target_state, IllegalStateException(
            f"Replica {replica} should be in the {valid} states before moving to {target_state} state. "
            f"Instead it is in {current} state"))

    def _log_failed_state_change(self, replica: PartitionAndReplica, current_state: ReplicaState,
                                 target_state: ReplicaState, error: BaseException) -> None:
        """Mirrors ZkReplicaStateMachine#logFailedStateChange."""
        self._log().error("replica_state_change_failed", replica=replica.replica,
                          topic_partition=str(replica.topic_partition), from_state=str(current_state),
                          to_state=str(target_state), error_type=type(error).__name__, error=str(error))
