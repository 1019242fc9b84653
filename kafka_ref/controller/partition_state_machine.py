"""The partition state machine: NonExistent → New → Online ⇄ Offline → NonExistent.

Mirrors kafka.controller.PartitionStateMachine and ZkPartitionStateMachine (Kafka 3.x); seed 001
§5.3.1–5.3.2 describes the 0.10 version (one partition at a time, with leader selectors). The
3.x machine works on batches: partitions whose current state does not allow the target are
logged with an IllegalStateException and left alone; NewPartition → OnlinePartition writes the
first leader and ISR to ZooKeeper (``initialize_leader_and_isr_for_partitions``); Offline/Online
→ OnlinePartition runs an election (``elect_leader_for_partitions``) that reads each partition
state znode, aborts a partition whose znode was written by a newer controller, writes the
results with a version check and retries the ones that lost a version race. Every decision is
queued on the request batch and sent at the end of ``handle_state_changes``.

The strategy argument is a Kafka 3.x ``PartitionLeaderElectionStrategy`` or, to replay the
seed's 0.10 flow, a ``PartitionLeaderSelector`` (its exceptions become the partition's result).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Callable, Sequence

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import (
    ControllerMovedException,
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    StateChangeFailedException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import (  # noqa: F401  (the states are re-exported here)
    VALID_PREVIOUS_PARTITION_STATES,
    IllegalStateException,
    NewPartition,
    NonExistentPartition,
    OfflinePartition,
    OnlinePartition,
    PartitionState,
)
from kafka_ref.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    ElectionResult,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
)
from kafka_ref.controller.leader_selectors import PartitionLeaderSelector
from kafka_ref.zk.zk_data import ConfigType, LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartitionStateZNode
from kafka_ref.zk.zookeeper import Code, KeeperException

if TYPE_CHECKING:
    from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
    from kafka_ref.controller.controller_context import ControllerContext
    from kafka_ref.zk.kafka_zk_client import KafkaZkClient

__all__ = [
    "VALID_PREVIOUS_PARTITION_STATES", "NewPartition", "NonExistentPartition", "OfflinePartition", "OnlinePartition",
    "PartitionState", "PartitionStateMachine", "ZkPartitionStateMachine",
]

ElectionOutcome = LeaderAndIsr | Exception
Strategy = PartitionLeaderElectionStrategy | PartitionLeaderSelector


class PartitionStateMachine(abc.ABC):
    """Mirrors kafka.controller.PartitionStateMachine: start-up and the online trigger."""

    def __init__(self, controller_context: "ControllerContext") -> None:
        self.controller_context = controller_context

    def startup(self) -> None:
        """Mirrors PartitionStateMachine#startup: set every partition's state, then bring New/Offline online."""
        # 1. States from the leader cache.
        self.initialize_partition_state()
        # 2. Elect leaders where needed.
        self.trigger_online_partition_state_change()

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Mirrors PartitionStateMachine#shutdown (the states go with ControllerContext#resetContext)."""

    def trigger_online_partition_state_change(self, topic: str | None = None) -> dict[TopicPartition, ElectionOutcome]:
        """Mirrors PartitionStateMachine#triggerOnlinePartitionStateChange (all partitions, or one topic's).

        Every partition in NewPartition or OfflinePartition, except those of topics queued for
        deletion, goes to OnlinePartition with the offline election (unclean per topic config).
        """
        # 1. The New and Offline partitions.
        partitions = self.controller_context.partitions_in_states({OfflinePartition, NewPartition}, topic)
        # 2. Not those being deleted; then try to bring them online.
        to_trigger = sorted(p for p in partitions if not self.controller_context.is_topic_queued_up_for_deletion(p.topic))
        return self.handle_state_changes(to_trigger, OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))

    def initialize_partition_state(self) -> None:
        """Mirrors PartitionStateMachine#initializePartitionState.

        No cached leader → NewPartition; a leader that is online → OnlinePartition; else OfflinePartition.
        """
        ctx = self.controller_context
        for tp in sorted(ctx.all_partitions):
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                ctx.put_partition_state(tp, NewPartition)
            elif ctx.is_replica_online(info.leader_and_isr.leader, tp):
                ctx.put_partition_state(tp, OnlinePartition)
            else:
                ctx.put_partition_state(tp, OfflinePartition)

    @abc.abstractmethod
    def handle_state_changes(self, partitions: Sequence[TopicPartition], target_state: PartitionState,
                             leader_election_strategy: Strategy | None = None) -> dict[TopicPartition, ElectionOutcome]:
        """Mirrors PartitionStateMachine#handleStateChanges."""


class ZkPartitionStateMachine(PartitionStateMachine):
    """Mirrors kafka.controller.ZkPartitionStateMachine.

    ``unclean_leader_election_enabled(topic)`` answers a topic's ``unclean.leader.election.enable``;
    by default it reads the topic's config znode over the broker's defaults, as Kafka's
    ``zkClient.getLogConfigs`` does. ``is_leader_recovery_supported`` is IBP >= 3.2 (KIP-704).
    """

    def __init__(self, config: KafkaConfig, state_change_logger: Any, controller_context: "ControllerContext",
                 zk_client: "KafkaZkClient", controller_broker_request_batch: "ControllerBrokerRequestBatch",
                 unclean_leader_election_enabled: Callable[[str], bool] | None = None) -> None:
        super().__init__(controller_context)
        self.config = config
        self.controller_id = config.broker_id
        self.state_change_logger = state_change_logger
        self.zk_client = zk_client
        self.controller_broker_request_batch = controller_broker_request_batch
        self.unclean_leader_election_enabled = unclean_leader_election_enabled or self._topic_unclean_config
        self.is_leader_recovery_supported = config.inter_broker_protocol_version.is_at_least("3.2")

    def shutdown(self) -> None:
        """Mirrors PartitionStateMachine#shutdown: only a log line (the states go with resetContext)."""
        self.state_change_logger.info("partition_state_machine_stopped")

    def _topic_unclean_config(self, topic: str) -> bool:
        overrides = self.zk_client.get_entity_configs(ConfigType.TOPIC, topic)
        return LogConfig.from_broker(self.config, overrides).unclean_leader_election_enable

    def _log(self) -> Any:
        return self.state_change_logger.bind(controller_epoch=self.controller_context.epoch)

    def _partition_state(self, partition: TopicPartition) -> PartitionState:
        return self.controller_context.partition_state(partition)

    # ---- entry point -------------------------------------------------------------------------
    def handle_state_changes(self, partitions: Sequence[TopicPartition], target_state: PartitionState,
                             leader_election_strategy: Strategy | None = None) -> dict[TopicPartition, ElectionOutcome]:
        """Mirrors ZkPartitionStateMachine#handleStateChanges.

        Returns, for target OnlinePartition, each elected partition's new LeaderAndIsr or the
        exception that failed it (initialised New partitions are not in the map, as in Kafka).
        ControllerMovedException propagates: this controller is no longer in charge. Any other
        failure fails every partition.
        """
        partitions = list(partitions)
        if not partitions:
            return {}
        try:
            # 1. A fresh batch; 2. the transitions; 3. one send for everything decided.
            self.controller_broker_request_batch.new_batch()
            result = self._do_handle_state_changes(partitions, target_state, leader_election_strategy)
            self.controller_broker_request_batch.send_requests_to_brokers(self.controller_context.epoch)
            return result
        except ControllerMovedException as exc:
            self.state_change_logger.error("controller_moved_during_partition_state_change",
                                           target_state=str(target_state), error=repr(exc))
            raise
        except RUN_ENDING:
            raise
        except Exception as exc:
            self.state_change_logger.error("partition_state_change_error", target_state=str(target_state),
                                           error=repr(exc))
            return {p: exc for p in partitions}

    def _do_handle_state_changes(self, partitions: list[TopicPartition], target_state: PartitionState,
                                 strategy: Strategy | None) -> dict[TopicPartition, ElectionOutcome]:
        """Mirrors ZkPartitionStateMachine#doHandleStateChanges (the transition table at work)."""
        ctx = self.controller_context
        log = self._log()
        # 1. Unknown partitions start as NonExistentPartition.
        for p in partitions:
            ctx.put_partition_state_if_not_exists(p, NonExistentPartition)
        # 2. Refuse transitions the table forbids.
        valid, invalid = ctx.check_valid_partition_state_change(partitions, target_state)
        for p in invalid:
            self._log_invalid_transition(p, target_state)
        # 3. Apply the target state.
        if target_state == NewPartition:
            for p in valid:
                log.info("partition_state_changed", topic_partition=str(p), from_state=str(self._partition_state(p)),
                         to_state=str(target_state), assigned_replicas=list(ctx.partition_replica_assignment(p)))
                ctx.put_partition_state(p, NewPartition)
            return {}
        if target_state == OnlinePartition:
            uninitialized = [p for p in valid if self._partition_state(p) == NewPartition]
            to_elect = [p for p in valid if self._partition_state(p) in (OfflinePartition, OnlinePartition)]
            # 3a. New partitions: first leader and ISR.
            if uninitialized:
                for p in self.initialize_leader_and_isr_for_partitions(uninitialized):
                    log.info("partition_state_changed", topic_partition=str(p),
                             from_state=str(self._partition_state(p)), to_state=str(target_state),
                             leader_and_isr=str(ctx.partition_leadership_info[p].leader_and_isr))
                    ctx.put_partition_state(p, OnlinePartition)
            # 3b. Offline/Online partitions: an election.
            if to_elect:
                if strategy is None:
                    raise ValueError("Election strategy is a required field when the target state is OnlinePartition")
                results = self.elect_leader_for_partitions(to_elect, strategy)
                for p, outcome in results.items():
                    if isinstance(outcome, LeaderAndIsr):
                        log.info("partition_state_changed", topic_partition=str(p),
                                 from_state=str(self._partition_state(p)), to_state=str(target_state),
                                 leader_and_isr=str(outcome))
                        ctx.put_partition_state(p, OnlinePartition)
                return results
            return {}
        # 3c. OfflinePartition / NonExistentPartition: only the state changes.
        for p in valid:
            log.debug("partition_state_changed", topic_partition=str(p), from_state=str(self._partition_state(p)),
                      to_state=str(target_state))
            ctx.put_partition_state(p, target_state)
        return {}

    # ---- NewPartition -> OnlinePartition -----------------------------------------------------
    def initialize_leader_and_isr_for_partitions(self, partitions: Sequence[TopicPartition]) -> list[TopicPartition]:
        """Mirrors ZkPartitionStateMachine#initializeLeaderAndIsrForPartitions (seed §5.3.2.2).

        Leader = first online assigned replica, ISR = all online assigned replicas, written as a
        new state znode (fenced by the controller epoch). A partition with no online replica, or
        whose znode already exists, fails and stays New. Returns the partitions initialised.
        """
        ctx = self.controller_context
        # 1. Online replicas of each partition.
        live_per_partition = [(p, tuple(r for r in ctx.partition_replica_assignment(p) if ctx.is_replica_online(r, p)))
                              for p in partitions]
        # 2. No online replica: fail.
        with_live = []
        for p, live in live_per_partition:
            if not live:
                self._log_failed_state_change(p, NewPartition, OnlinePartition, StateChangeFailedException(
                    f"Controller {self.controller_id} epoch {ctx.epoch} encountered error during state change of "
                    f"partition {p} from New to Online, assigned replicas are "
                    f"[{','.join(map(str, ctx.partition_replica_assignment(p)))}], live brokers are "
                    f"[{','.join(map(str, sorted(ctx.live_broker_ids)))}]. No assigned replica is alive."))
            else:
                with_live.append((p, live))
        # 3. The first leader and ISR of each.
        states = {p: LeaderIsrAndControllerEpoch(LeaderAndIsr.initial(live[0], live), ctx.epoch) for p, live in with_live}
        if not states:
            return []
        # 4. Create the state znodes.
        try:
            responses = self.zk_client.create_topic_partition_states_raw(states, ctx.epoch_zk_version)
        except ControllerMovedException:
            raise
        except RUN_ENDING:
            raise
        except Exception as exc:
            for p in states:
                self._log_failed_state_change(p, self._partition_state(p), OnlinePartition, exc)
            return []
        # 5. Cache and announce the successes.
        successful = []
        for p, state in states.items():
            response = responses[p]
            if response.result_code == Code.OK:
                ctx.put_partition_leadership_info(p, state)
                self.controller_broker_request_batch.add_leader_and_isr_request_for_brokers(
                    state.leader_and_isr.isr, p, state, ctx.partition_full_replica_assignment(p), is_new=True)
                successful.append(p)
            else:
                self._log_failed_state_change(p, NewPartition, OnlinePartition,
                                              KeeperException.create(response.result_code, response.path))
        return successful

    # ---- Offline/Online -> OnlinePartition ---------------------------------------------------
    def elect_leader_for_partitions(self, partitions: Sequence[TopicPartition],
                                    strategy: Strategy) -> dict[TopicPartition, ElectionOutcome]:
        """Mirrors ZkPartitionStateMachine#electLeaderForPartitions: elect until nothing is left to retry."""
        remaining = list(partitions)
        finished: dict[TopicPartition, ElectionOutcome] = {}
        while remaining:
            # 1. One round; partitions that lost a version race go round again.
            done, remaining = self._do_elect_leader_for_partitions(remaining, strategy)
            for p, outcome in done.items():
                if isinstance(outcome, LeaderElectionNotNeededException):
                    self._log().debug("leader_election_not_needed", topic_partition=str(p), reason=str(outcome))
                elif isinstance(outcome, Exception):
                    self._log_failed_state_change(p, self._partition_state(p), OnlinePartition, outcome)
            finished.update(done)
            if remaining:
                self._log().info("retrying_leader_election", strategy=str(strategy),
                                 partitions=[str(p) for p in remaining])
        return finished

    def _do_elect_leader_for_partitions(
        self, partitions: list[TopicPartition], strategy: Strategy,
    ) -> tuple[dict[TopicPartition, ElectionOutcome], list[TopicPartition]]:
        """Mirrors ZkPartitionStateMachine#doElectLeaderForPartitions: one read-elect-write round."""
        ctx = self.controller_context
        # 1. Read the current partition states from ZooKeeper.
        try:
            responses = self.zk_client.get_topic_partition_states_raw(partitions)
        except RUN_ENDING:
            raise
        except Exception as exc:
            return {p: exc for p in partitions}, []
        failed: dict[TopicPartition, ElectionOutcome] = {}
        valid: list[tuple[TopicPartition, LeaderAndIsr]] = []
        for response in responses:
            p = response.ctx
            decoded = (TopicPartitionStateZNode.decode(response.data, response.stat)
                       if response.result_code == Code.OK else None)
            if response.result_code not in (Code.OK, Code.NONODE):
                failed[p] = response.result_exception
            elif decoded is None:
                failed[p] = StateChangeFailedException(
                    f"LeaderAndIsr information doesn't exist for partition {p} in {self._partition_state(p)} state")
            elif decoded.controller_epoch > ctx.epoch:
                # 2. A newer controller wrote it: this one must not touch the partition.
                failed[p] = StateChangeFailedException(
                    f"Aborted leader election for partition {p} since the LeaderAndIsr path was already written by "
                    f"another controller. This probably means that the current controller {self.controller_id} went "
                    f"through a soft failure and another controller was elected with epoch {decoded.controller_epoch}.")
            else:
                valid.append((p, decoded.leader_and_isr))
        if not valid:
            return failed, []
        # 3. Elect under the strategy.
        elected = self._elect(valid, strategy, failed)
        with_leaders = [r for r in elected if r.leader_and_isr is not None]
        for r in elected:
            if r.leader_and_isr is None and r.topic_partition not in failed:
                failed[r.topic_partition] = StateChangeFailedException(
                    f"Failed to elect leader for partition {r.topic_partition} under strategy {strategy}")
        if not with_leaders:
            return failed, []
        recipients = {r.topic_partition: r.live_replicas for r in with_leaders}
        adjusted = {r.topic_partition: r.leader_and_isr for r in with_leaders}
        # 4. Write the new states, each conditional on the version read (fenced by our epoch).
        update = self.zk_client.update_leader_and_isr(adjusted, ctx.epoch, ctx.epoch_zk_version)
        # 5. Cache and announce what was written.
        for p, outcome in update.finished_partitions.items():
            if isinstance(outcome, LeaderAndIsr):
                info = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
                ctx.put_partition_leadership_info(p, info)
                self.controller_broker_request_batch.add_leader_and_isr_request_for_brokers(
                    recipients[p], p, info, ctx.partition_full_replica_assignment(p), is_new=False)
        for p in update.partitions_to_retry:
            self._log().debug("leader_election_bad_zk_version", topic_partition=str(p),
                              attempted=str(adjusted[p]))
        return {**update.finished_partitions, **failed}, list(update.partitions_to_retry)

    def _elect(self, valid: list[tuple[TopicPartition, LeaderAndIsr]], strategy: Strategy,
               failed: dict[TopicPartition, ElectionOutcome]) -> list[ElectionResult]:
        """Run the strategy's election (or the seed's selector) over the partitions read."""
        ctx = self.controller_context
        if isinstance(strategy, OfflinePartitionLeaderElectionStrategy):
            state = self._collect_unclean_leader_election_state(valid, strategy.allow_unclean)
            return leader_for_offline(ctx, self.is_leader_recovery_supported, state)
        if strategy is ReassignPartitionLeaderElectionStrategy:
            return leader_for_reassign(ctx, valid)
        if strategy is PreferredReplicaPartitionLeaderElectionStrategy:
            return leader_for_preferred_replica(ctx, valid)
        if strategy is ControlledShutdownPartitionLeaderElectionStrategy:
            return leader_for_controlled_shutdown(ctx, valid)
        if isinstance(strategy, PartitionLeaderSelector):
            return self._select_with(strategy, valid, failed)
        raise ValueError(f"Unknown partition leader election strategy {strategy!r}")

    def _select_with(self, selector: PartitionLeaderSelector, valid: list[tuple[TopicPartition, LeaderAndIsr]],
                     failed: dict[TopicPartition, ElectionOutcome]) -> list[ElectionResult]:
        """Seed §5.3.2.2 electLeaderForPartition: a 0.10 selector per partition.

        LeaderElectionNotNeededException and NoReplicaOnlineException become the result as they
        are; any other error is wrapped in StateChangeFailedException.
        """
        results = []
        for p, current in valid:
            try:
                new_lai, replicas = selector.select_leader(p, current)
            except (LeaderElectionNotNeededException, NoReplicaOnlineException) as exc:
                failed[p] = exc
                new_lai, replicas = None, ()
            except RUN_ENDING:
                raise
            except Exception as exc:
                failed[p] = StateChangeFailedException(
                    f"encountered error while electing leader for partition {p} due to: {exc}.")
                new_lai, replicas = None, ()
            results.append(ElectionResult(p, new_lai, tuple(replicas)))
        return results

    def _collect_unclean_leader_election_state(
        self, leader_and_isrs: list[tuple[TopicPartition, LeaderAndIsr]], allow_unclean: bool,
    ) -> list[tuple[TopicPartition, LeaderAndIsr | None, bool]]:
        """Mirrors ZkPartitionStateMachine#collectUncleanLeaderElectionState.

        Unclean election is considered only for partitions with no online ISR member; their
        topic's config is read only when the strategy does not already allow it. A topic whose
        config cannot be read fails its partitions.
        """
        ctx = self.controller_context
        # 1. Split on "some ISR member is online".
        no_live_isr = [(p, lai) for p, lai in leader_and_isrs
                       if not any(ctx.is_replica_online(r, p) for r in lai.isr)]
        with_live_isr = [(p, lai) for p, lai in leader_and_isrs
                         if any(ctx.is_replica_online(r, p) for r in lai.isr)]
        # 2. Unclean per topic (forced, or from the topic config).
        out: list[tuple[TopicPartition, LeaderAndIsr | None, bool]] = []
        if allow_unclean:
            out.extend((p, lai, True) for p, lai in no_live_isr)
        else:
            per_topic: dict[str, bool | Exception] = {}
            for topic in dict.fromkeys(p.topic for p, _ in no_live_isr):
                try:
                    per_topic[topic] = bool(self.unclean_leader_election_enabled(topic))
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    per_topic[topic] = exc
            for p, lai in no_live_isr:
                setting = per_topic[p.topic]
                if isinstance(setting, Exception):
                    self._log_failed_state_change(p, self._partition_state(p), OnlinePartition, setting)
                    out.append((p, None, False))
                else:
                    out.append((p, lai, setting))
        # 3. The others elect cleanly.
        out.extend((p, lai, False) for p, lai in with_live_isr)
        return out

    # ---- logging -------------------------------------------------------------------------------
    def _log_invalid_transition(self, partition: TopicPartition, target_state: PartitionState) -> None:
        """Mirrors ZkPartitionStateMachine#logInvalidTransition: an IllegalStateException, logged."""
        current = self._partition_state(partition)
        valid = ",".join(str(s) for s in sorted(target_state.valid_previous_states, key=lambda s: s.value))
        self._log_failed_state_change(partition, current, target_state, IllegalStateException(
            f"Partition {partition} should be in one of {valid} states before moving to {target_state} state. "
            f"Instead it is in {current} state"))

    def _log_failed_state_change(self, partition: TopicPartition, current_state: PartitionState,
                                 target_state: PartitionState, error: BaseException) -> None:
        """Mirrors ZkPartitionStateMachine#logFailedStateChange."""
        self._log().error("partition_state_change_failed", topic_partition=str(partition),
                          from_state=str(current_state), to_state=str(target_state),
                          error_type=type(error).__name__, error=str(error))

