"""Seed 001 §5.4: the five PartitionLeaderSelectors of Kafka 0.10, on Kafka 3.x's rules.

Mirrors kafka.controller.PartitionLeaderSelector and its implementations (Kafka 0.10:
NoOpLeaderSelector, OfflinePartitionLeaderSelector, ReassignedPartitionLeaderSelector,
PreferredReplicaPartitionLeaderSelector, ControlledShutdownLeaderSelector). Kafka 2.x replaced
them with the batch elections in ``election``; here each selector asks ``election`` for the
answer, so both views share one rule set, and keeps the 0.10 interface:
``select_leader(topic_partition, current_leader_and_isr) -> (LeaderAndIsr, replicas)`` that
raises where 0.10 raised instead of returning "no leader".

Where the two eras differ the selector follows 3.x and says so:
* the new LeaderAndIsr keeps the partition epoch it was read with; 0.10 returned
  ``zkVersion + 1`` (what the znode would hold after the write). Either way the conditional
  write names the version read.
* the controlled-shutdown leader is the first *assigned* replica that qualifies (0.10 took the
  first qualifying ISR member).
* an unclean offline election marks the partition RECOVERING from IBP 3.2 (KIP-704).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Callable

from kafka_ref.common.errors import (
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    StateChangeFailedException,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import target_replicas
from kafka_ref.controller.election import (
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
)
from kafka_ref.zk.zk_data import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_ref.controller.controller_context import ControllerContext


def _ids(ids: object) -> str:
    return ",".join(str(i) for i in sorted(ids)) if isinstance(ids, (set, frozenset)) else ",".join(map(str, ids))


class PartitionLeaderSelector(abc.ABC):
    """Mirrors kafka.controller.PartitionLeaderSelector (0.10).

    ``select_leader`` gets the partition and its LeaderAndIsr as read from ZooKeeper and
    returns the new LeaderAndIsr and the replicas that must receive the LeaderAndIsr request.
    """

    def __init__(self, controller_context: "ControllerContext") -> None:
        self.controller_context = controller_context
        self._log = state_change_logger(selector=type(self).__name__)

    @abc.abstractmethod
    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors kafka.controller.PartitionLeaderSelector#selectLeader."""


class NoOpLeaderSelector(PartitionLeaderSelector):
    """Mirrors kafka.controller.NoOpLeaderSelector (seed §5.4.1): changes nothing."""

    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors NoOpLeaderSelector#selectLeader: the current LeaderAndIsr and all assigned replicas."""
        self._log.warning("noop_leader_selector_asked_to_elect", topic_partition=str(topic_partition))
        return current_leader_and_isr, self.controller_context.partition_replica_assignment(topic_partition)


class OfflinePartitionLeaderSelector(PartitionLeaderSelector):
    """Mirrors kafka.controller.OfflinePartitionLeaderSelector (seed §5.4.2).

    For a partition whose leader died (or a new one). ``unclean_leader_election_enabled(topic)``
    is the topic's ``unclean.leader.election.enable`` (topic override over broker default);
    ``is_leader_recovery_supported`` is IBP >= 3.2.
    """

    def __init__(self, controller_context: "ControllerContext",
                 unclean_leader_election_enabled: Callable[[str], bool],
                 is_leader_recovery_supported: bool = True) -> None:
        super().__init__(controller_context)
        self.unclean_leader_election_enabled = unclean_leader_election_enabled
        self.is_leader_recovery_supported = is_leader_recovery_supported

    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors OfflinePartitionLeaderSelector#selectLeader.

        1. No assignment → NoReplicaOnlineException. 2. A live ISR member → it leads, the live
        ISR stays. 3. No live ISR member and unclean election off → NoReplicaOnlineException.
        4. Unclean on but no live replica → NoReplicaOnlineException. 5. Otherwise the first
        live assigned replica leads alone. The live assigned replicas receive the request.
        """
        ctx = self.controller_context
        # 1. The partition must have replicas assigned.
        assigned = ctx.partition_replica_assignment(topic_partition)
        if not assigned:
            raise NoReplicaOnlineException(f"Partition {topic_partition} doesn't have replicas assigned to it")
        # 2. Read the topic's unclean setting only when no ISR member is alive (as Kafka does).
        live_isr = [r for r in current_leader_and_isr.isr if ctx.is_replica_online(r, topic_partition)]
        unclean = False if live_isr else self.unclean_leader_election_enabled(topic_partition.topic)
        [result] = leader_for_offline(ctx, self.is_leader_recovery_supported,
                                      [(topic_partition, current_leader_and_isr, unclean)])
        # 3. Say why nobody could be elected.
        if result.leader_and_isr is None:
            if not unclean:
                raise NoReplicaOnlineException(
                    f"No broker in ISR for partition {topic_partition} is alive. Live brokers are: "
                    f"[{_ids(ctx.live_broker_ids)}], ISR brokers are: [{_ids(current_leader_and_isr.isr)}]")
            raise NoReplicaOnlineException(
                f"No replica for partition {topic_partition} is alive. Live brokers are: "
                f"[{_ids(ctx.live_broker_ids)}], Assigned replicas are: [{_ids(assigned)}]")
        if not live_isr:
            self._log.warning("unclean_leader_election", topic_partition=str(topic_partition),
                              leader=result.leader_and_isr.leader, live_replicas=list(result.live_replicas))
        return result.leader_and_isr, result.live_replicas


class ReassignedPartitionLeaderSelector(PartitionLeaderSelector):
    """Mirrors kafka.controller.ReassignedPartitionLeaderSelector (seed §5.4.3).

    New leader: a live, in-sync replica of the reassignment target; ISR unchanged; the target
    replicas receive the request. 0.10 read the target from ``partitionsBeingReassigned``;
    3.x derives it from the full assignment (replicas minus those being removed).
    """

    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors ReassignedPartitionLeaderSelector#selectLeader."""
        ctx = self.controller_context
        # 1. Elect from the target replicas.
        [result] = leader_for_reassign(ctx, [(topic_partition, current_leader_and_isr)])
        if result.leader_and_isr is not None:
            return result.leader_and_isr, result.live_replicas
        # 2. Nobody: either there is no target or no target replica is alive and in sync.
        targets = target_replicas(ctx.partition_full_replica_assignment(topic_partition))
        if not targets:
            raise NoReplicaOnlineException(
                f"List of reassigned replicas for partition {topic_partition} is empty. "
                f"Current leader and ISR: [{current_leader_and_isr}]")
        raise NoReplicaOnlineException(
            f"None of the reassigned replicas for partition {topic_partition} are in-sync with the leader. "
            f"Current leader and ISR: [{current_leader_and_isr}]")


class PreferredReplicaPartitionLeaderSelector(PartitionLeaderSelector):
    """Mirrors kafka.controller.PreferredReplicaPartitionLeaderSelector (seed §5.4.4).

    New leader: the preferred (first assigned) replica if alive and in sync; ISR unchanged;
    all assigned replicas receive the request.
    """

    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors PreferredReplicaPartitionLeaderSelector#selectLeader.

        1. The preferred replica already leads (per the controller's cache, falling back to the
        LeaderAndIsr given) → LeaderElectionNotNeededException. 2. It is alive and in the ISR →
        it leads. 3. Otherwise → StateChangeFailedException.
        """
        ctx = self.controller_context
        assigned = ctx.partition_replica_assignment(topic_partition)
        if not assigned:
            raise StateChangeFailedException(f"Partition {topic_partition} doesn't have replicas assigned to it")
        preferred = assigned[0]
        # 1. Nothing to do if the preferred replica leads already.
        cached = ctx.partition_leadership_info.get(topic_partition)
        current_leader = cached.leader_and_isr.leader if cached is not None else current_leader_and_isr.leader
        if current_leader == preferred:
            raise LeaderElectionNotNeededException(
                f"Preferred replica {preferred} is already the current leader for partition {topic_partition}")
        # 2. Elect it if it qualifies.
        self._log.info("preferred_replica_election_triggered", topic_partition=str(topic_partition),
                       current_leader=current_leader, preferred_replica=preferred)
        [result] = leader_for_preferred_replica(ctx, [(topic_partition, current_leader_and_isr)])
        if result.leader_and_isr is not None:
            return result.leader_and_isr, result.live_replicas
        # 3. It is dead or out of sync.
        raise StateChangeFailedException(
            f"Preferred replica {preferred} for partition {topic_partition} is either not alive or not in the isr. "
            f"Current leader and ISR: [{current_leader_and_isr}]")


class ControlledShutdownLeaderSelector(PartitionLeaderSelector):
    """Mirrors kafka.controller.ControlledShutdownLeaderSelector (seed §5.4.5).

    New leader: an ISR member not on a shutting-down broker; new ISR: the ISR without the
    shutting-down brokers; the live-or-shutting-down assigned replicas receive the request.
    """

    def select_leader(self, topic_partition: TopicPartition,
                      current_leader_and_isr: LeaderAndIsr) -> tuple[LeaderAndIsr, tuple[int, ...]]:
        """Mirrors ControlledShutdownLeaderSelector#selectLeader."""
        ctx = self.controller_context
        # 1. Elect away from the shutting-down brokers.
        [result] = leader_for_controlled_shutdown(ctx, [(topic_partition, current_leader_and_isr)])
        if result.leader_and_isr is not None:
            return result.leader_and_isr, result.live_replicas
        # 2. Only shutting-down brokers are left in the ISR.
        raise StateChangeFailedException(
            f"No other replicas in ISR {_ids(current_leader_and_isr.isr)} for {topic_partition} besides "
            f"shutting down brokers {_ids(ctx.shutting_down_broker_ids)}")
