"""How the controller picks a partition leader: the four algorithms, their wrappers, the strategies.

Mirrors kafka.controller.PartitionLeaderElectionAlgorithms, kafka.controller.Election and the
PartitionLeaderElectionStrategy types of Kafka 3.x (3.2 onwards, with KIP-704 leader recovery).
Seed 001 §5.4 describes the same rules as five selector classes of Kafka 0.10; those live in
``leader_selectors`` and are built on the functions here, so there is one rule set.

Each algorithm is a pure function of the replica list, the ISR and the live replicas and returns
a broker id or None. The ``leader_for_*`` helpers apply one to a batch of partitions read from
ZooKeeper and produce ``ElectionResult``s: the new LeaderAndIsr (None when nobody qualifies) and
the replicas that must receive the LeaderAndIsr request. A new LeaderAndIsr keeps the partition
epoch it was read with (the zkVersion the conditional write names); the write returns the new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import target_replicas
from kafka_ref.zk.zk_data import LeaderAndIsr

if TYPE_CHECKING:
    from kafka_ref.controller.controller_context import ControllerContext


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """Mirrors kafka.controller.ElectionResult.

    ``leader_and_isr`` is None when no replica qualifies; ``live_replicas`` are the brokers to
    send the LeaderAndIsr request to.
    """

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]


class PartitionLeaderElectionAlgorithms:
    """Mirrors kafka.controller.PartitionLeaderElectionAlgorithms: who may lead, in replica order."""

    @staticmethod
    def offline_partition_leader_election(assignment: Sequence[int], isr: Sequence[int], live_replicas: Iterable[int],
                                          unclean_leader_election_enabled: bool,
                                          controller_context: "ControllerContext") -> int | None:
        """Mirrors PartitionLeaderElectionAlgorithms#offlinePartitionLeaderElection.

        The first assigned replica that is alive and in the ISR. Failing that, and only if
        unclean election is allowed, the first assigned replica that is alive (counted in the
        unclean-election meter).
        """
        live = set(live_replicas)
        # 1. Clean choice: alive and in sync, in assignment order.
        for replica in assignment:
            if replica in live and replica in isr:
                return replica
        # 2. Unclean choice: alive, in assignment order, only when allowed.
        if unclean_leader_election_enabled:
            for replica in assignment:
                if replica in live:
                    controller_context.stats.unclean_leader_election_rate.mark()
                    return replica
        return None

    @staticmethod
    def reassign_partition_leader_election(reassignment: Sequence[int], isr: Sequence[int],
                                           live_replicas: Iterable[int]) -> int | None:
        """Mirrors PartitionLeaderElectionAlgorithms#reassignPartitionLeaderElection.

        The first replica of the target assignment that is alive and in the ISR.
        """
        live = set(live_replicas)
        return next((r for r in reassignment if r in live and r in isr), None)

    @staticmethod
    def preferred_replica_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                    live_replicas: Iterable[int]) -> int | None:
        """Mirrors PartitionLeaderElectionAlgorithms#preferredReplicaPartitionLeaderElection.

        Only the preferred (first assigned) replica, and only if it is alive and in the ISR.
        """
        if not assignment:
            return None
        preferred = assignment[0]
        return preferred if preferred in set(live_replicas) and preferred in isr else None

    @staticmethod
    def controlled_shutdown_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                      live_replicas: Iterable[int],
                                                      shutting_down_brokers: Iterable[int]) -> int | None:
        """Mirrors PartitionLeaderElectionAlgorithms#controlledShutdownPartitionLeaderElection.

        The first assigned replica that is alive (shutting-down brokers count as alive here),
        in the ISR, and not itself shutting down.
        """
        live = set(live_replicas)
        shutting_down = set(shutting_down_brokers)
        return next((r for r in assignment if r in live and r in isr and r not in shutting_down), None)


# ---- Election (kafka.controller.Election) ---------------------------------------------------

def _leader_for_offline(partition: TopicPartition, leader_and_isr: LeaderAndIsr | None,
                        unclean_leader_election_enabled: bool, is_leader_recovery_supported: bool,
                        controller_context: "ControllerContext") -> ElectionResult:
    """Mirrors Election#leaderForOffline for one partition."""
    # 1. The assigned replicas that are online receive the request whatever happens.
    assignment = controller_context.partition_replica_assignment(partition)
    live_replicas = tuple(r for r in assignment if controller_context.is_replica_online(r, partition))
    if leader_and_isr is None:
        return ElectionResult(partition, None, live_replicas)
    # 2. Pick the leader.
    isr = leader_and_isr.isr
    leader = PartitionLeaderElectionAlgorithms.offline_partition_leader_election(
        assignment, isr, live_replicas, unclean_leader_election_enabled, controller_context)
    if leader is None:
        return ElectionResult(partition, None, live_replicas)
    # 3. A clean leader keeps the ISR members that are online; an unclean one is alone in the ISR
    #    and, from IBP 3.2, marks the partition RECOVERING (KIP-704).
    if leader in isr:
        new_isr: tuple[int, ...] = tuple(r for r in isr if controller_context.is_replica_online(r, partition))
    else:
        new_isr = (leader,)
    if leader not in isr and is_leader_recovery_supported:
        new_leader_and_isr = leader_and_isr.new_recovering_leader_and_isr(leader, new_isr)
    else:
        new_leader_and_isr = leader_and_isr.new_leader_and_isr(leader, new_isr)
    return ElectionResult(partition, new_leader_and_isr, live_replicas)


def leader_for_offline(
    controller_context: "ControllerContext",
    is_leader_recovery_supported: bool,
    partitions_with_unclean_leader_election_state: Iterable[tuple[TopicPartition, LeaderAndIsr | None, bool]],
) -> list[ElectionResult]:
    """Mirrors kafka.controller.Election#leaderForOffline.

    Elects leaders for new or offline partitions. Each input is (partition, its LeaderAndIsr or
    None when it could not be read, whether unclean election is allowed for it).
    """
    return [_leader_for_offline(tp, lai, unclean, is_leader_recovery_supported, controller_context)
            for tp, lai, unclean in partitions_with_unclean_leader_election_state]


def leader_for_reassign(controller_context: "ControllerContext",
                        leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
    """Mirrors kafka.controller.Election#leaderForReassign.

    Leader from the reassignment's target replicas; ISR unchanged; every target replica
    receives the request.
    """
    results = []
    for partition, leader_and_isr in leader_and_isrs:
        # 1. Target replicas (the full assignment minus those being removed) and the live ones.
        targets = target_replicas(controller_context.partition_full_replica_assignment(partition))
        live = tuple(r for r in targets if controller_context.is_replica_online(r, partition))
        # 2. Elect; the ISR is kept as it is.
        leader = PartitionLeaderElectionAlgorithms.reassign_partition_leader_election(targets, leader_and_isr.isr, live)
        results.append(ElectionResult(partition, None if leader is None else leader_and_isr.new_leader(leader), targets))
    return results


def leader_for_preferred_replica(controller_context: "ControllerContext",
                                 leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
    """Mirrors kafka.controller.Election#leaderForPreferredReplica.

    The preferred replica leads if it is alive and in sync; ISR unchanged; every assigned
    replica receives the request.
    """
    results = []
    for partition, leader_and_isr in leader_and_isrs:
        # 1. The assignment and its live members.
        assignment = controller_context.partition_replica_assignment(partition)
        live = tuple(r for r in assignment if controller_context.is_replica_online(r, partition))
        # 2. Elect; the ISR is kept as it is.
        leader = PartitionLeaderElectionAlgorithms.preferred_replica_partition_leader_election(
            assignment, leader_and_isr.isr, live)
        results.append(ElectionResult(partition, None if leader is None else leader_and_isr.new_leader(leader),
                                      assignment))
    return results


def leader_for_controlled_shutdown(controller_context: "ControllerContext",
                                   leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
    """Mirrors kafka.controller.Election#leaderForControlledShutdown.

    Leader from the ISR but not on a shutting-down broker; the shutting-down brokers leave the
    ISR; every live-or-shutting-down assigned replica receives the request (the shutting-down
    one must learn it is no longer leader).
    """
    shutting_down = set(controller_context.shutting_down_broker_ids)
    results = []
    for partition, leader_and_isr in leader_and_isrs:
        # 1. Replicas on live or shutting-down brokers.
        assignment = controller_context.partition_replica_assignment(partition)
        live_or_shutting_down = tuple(r for r in assignment if controller_context.is_replica_online(
            r, partition, include_shutting_down_brokers=True))
        # 2. Elect, and drop the shutting-down brokers from the ISR.
        isr = leader_and_isr.isr
        leader = PartitionLeaderElectionAlgorithms.controlled_shutdown_partition_leader_election(
            assignment, isr, live_or_shutting_down, shutting_down)
        new_isr = tuple(r for r in isr if r not in shutting_down)
        new_lai = None if leader is None else leader_and_isr.new_leader_and_isr(leader, new_isr)
        results.append(ElectionResult(partition, new_lai, live_or_shutting_down))
    return results


class Election:
    """Mirrors kafka.controller.Election (the object): the four batch helpers as static methods."""

    leader_for_offline = staticmethod(leader_for_offline)
    leader_for_reassign = staticmethod(leader_for_reassign)
    leader_for_preferred_replica = staticmethod(leader_for_preferred_replica)
    leader_for_controlled_shutdown = staticmethod(leader_for_controlled_shutdown)


# ---- strategies (kafka.controller.PartitionLeaderElectionStrategy) ---------------------------

class PartitionLeaderElectionStrategy:
    """Mirrors kafka.controller.PartitionLeaderElectionStrategy: which election to run."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class OfflinePartitionLeaderElectionStrategy(PartitionLeaderElectionStrategy):
    """Mirrors kafka.controller.OfflinePartitionLeaderElectionStrategy.

    ``allow_unclean`` forces unclean election on (an admin's unclean election request);
    otherwise each topic's ``unclean.leader.election.enable`` decides.
    """

    allow_unclean: bool


class _CaseObjectStrategy(PartitionLeaderElectionStrategy):
    """A Scala case object: one instance; calling it returns itself so ``X`` and ``X()`` agree."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self) -> "_CaseObjectStrategy":
        return self

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__


ReassignPartitionLeaderElectionStrategy = _CaseObjectStrategy("ReassignPartitionLeaderElectionStrategy")
"""Mirrors kafka.controller.ReassignPartitionLeaderElectionStrategy (a case object)."""

PreferredReplicaPartitionLeaderElectionStrategy = _CaseObjectStrategy("PreferredReplicaPartitionLeaderElectionStrategy")
"""Mirrors kafka.controller.PreferredReplicaPartitionLeaderElectionStrategy (a case object)."""

ControlledShutdownPartitionLeaderElectionStrategy = _CaseObjectStrategy(
    "ControlledShutdownPartitionLeaderElectionStrategy")
"""Mirrors kafka.controller.ControlledShutdownPartitionLeaderElectionStrategy (a case object)."""
