"""The leader election algorithms and the Election batch helpers.

The first block mirrors kafka.controller.PartitionLeaderElectionAlgorithmsTest case by case;
the second checks kafka.controller.Election's wrappers (ISR, recipients, KIP-704 recovery).
"""

from __future__ import annotations

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    Election,
    ElectionResult,
    OfflinePartitionLeaderElectionStrategy,
    PartitionLeaderElectionAlgorithms as Algorithms,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassign,
)
from kafka_ref.zk.zk_data import BrokerInfo, LeaderAndIsr, LeaderRecoveryState, ReplicaAssignment

TP = TopicPartition("t", 0)


def ctx_with(live: list[int], assignment: ReplicaAssignment | None = None) -> ControllerContext:
    ctx = ControllerContext()
    ctx.set_live_brokers({BrokerInfo(b, f"host{b}", 9092): 10 + b for b in live})
    if assignment is not None:
        ctx.update_partition_full_replica_assignment(TP, assignment)
    return ctx


# ---- PartitionLeaderElectionAlgorithmsTest ----------------------------------------------------

def test_offline_partition_leader_election() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testOfflinePartitionLeaderElection."""
    ctx = ControllerContext()
    assert Algorithms.offline_partition_leader_election([2, 4], [2, 4], {4}, False, ctx) == 4
    assert ctx.stats.unclean_leader_election_rate.count() == 0


def test_offline_partition_leader_election_last_isr_offline_unclean_disabled() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled."""
    ctx = ControllerContext()
    assert Algorithms.offline_partition_leader_election([2, 4], [2], {4}, False, ctx) is None
    assert ctx.stats.unclean_leader_election_rate.count() == 0


def test_offline_partition_leader_election_last_isr_offline_unclean_enabled() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled."""
    ctx = ControllerContext()
    assert Algorithms.offline_partition_leader_election([2, 4], [2], {4}, True, ctx) == 4
    assert ctx.stats.unclean_leader_election_rate.count() == 1


def test_offline_partition_leader_election_unclean_enabled_but_clean_choice_exists() -> None:
    """A live ISR member wins even when unclean election is on (the meter does not move)."""
    ctx = ControllerContext()
    assert Algorithms.offline_partition_leader_election([2, 4, 6], [6], {4, 6}, True, ctx) == 6
    assert ctx.stats.unclean_leader_election_rate.count() == 0


def test_offline_partition_leader_election_unclean_enabled_nobody_alive() -> None:
    ctx = ControllerContext()
    assert Algorithms.offline_partition_leader_election([2, 4], [2], set(), True, ctx) is None
    assert ctx.stats.unclean_leader_election_rate.count() == 0


def test_reassign_partition_leader_election() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testReassignPartitionLeaderElection."""
    assert Algorithms.reassign_partition_leader_election([2, 4], [2, 4], {4}) == 4


def test_reassign_partition_leader_election_with_no_live_isr() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testReassignPartitionLeaderElectionWithNoLiveIsr."""
    assert Algorithms.reassign_partition_leader_election([2, 4], [2], set()) is None


def test_reassign_partition_leader_election_with_empty_isr() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testReassignPartitionLeaderElectionWithEmptyIsr."""
    assert Algorithms.reassign_partition_leader_election([2, 4], [], {2}) is None


def test_preferred_replica_partition_leader_election() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testPreferredReplicaPartitionLeaderElection."""
    assert Algorithms.preferred_replica_partition_leader_election([2, 4], [2, 4], {2, 4}) == 2


def test_preferred_replica_in_isr_not_live() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive."""
    assert Algorithms.preferred_replica_partition_leader_election([2, 4], [2], set()) is None


def test_preferred_replica_not_in_isr_live() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive."""
    assert Algorithms.preferred_replica_partition_leader_election([2, 4], [4], {2, 4}) is None


def test_preferred_replica_not_in_isr_not_live() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive."""
    assert Algorithms.preferred_replica_partition_leader_election([2, 4], [], set()) is None


def test_controlled_shutdown_partition_leader_election() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testControlledShutdownPartitionLeaderElection."""
    assert Algorithms.controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2}) == 4


def test_controlled_shutdown_last_isr_shutting_down() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown."""
    assert Algorithms.controlled_shutdown_partition_leader_election([2, 4], [2], {2, 4}, {2}) is None


def test_controlled_shutdown_all_isr_simultaneously_shutdown() -> None:
    """Mirrors PartitionLeaderElectionAlgorithmsTest#testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown."""
    assert Algorithms.controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2, 4}) is None


def test_controlled_shutdown_picks_in_assignment_order() -> None:
    """Kafka 3.x walks the assignment, not the ISR: assignment [6, 4], ISR [4, 6] → 6."""
    assert Algorithms.controlled_shutdown_partition_leader_election([2, 6, 4], [2, 4, 6], {2, 4, 6}, {2}) == 6


# ---- Election (kafka.controller.Election) -----------------------------------------------------

def test_leader_for_offline_clean_keeps_online_isr_and_recovery_state() -> None:
    ctx = ctx_with([2, 4], ReplicaAssignment((1, 2, 4)))
    current = LeaderAndIsr(1, 7, (1, 2, 4), LeaderRecoveryState.RECOVERED, 12)
    [result] = leader_for_offline(ctx, True, [(TP, current, False)])
    assert result == ElectionResult(TP, LeaderAndIsr(2, 8, (2, 4), LeaderRecoveryState.RECOVERED, 12), (2, 4))


def test_leader_for_offline_unclean_marks_recovering_from_ibp_3_2() -> None:
    ctx = ctx_with([4], ReplicaAssignment((1, 2, 4)))
    current = LeaderAndIsr(1, 7, (1,), LeaderRecoveryState.RECOVERED, 12)
    [result] = leader_for_offline(ctx, True, [(TP, current, True)])
    assert result == ElectionResult(TP, LeaderAndIsr(4, 8, (4,), LeaderRecoveryState.RECOVERING, 12), (4,))
    assert ctx.stats.unclean_leader_election_rate.count() == 1


def test_leader_for_offline_unclean_without_leader_recovery_support() -> None:
    ctx = ctx_with([4], ReplicaAssignment((1, 2, 4)))
    current = LeaderAndIsr(1, 7, (1,), LeaderRecoveryState.RECOVERED, 12)
    [result] = leader_for_offline(ctx, False, [(TP, current, True)])
    assert result.leader_and_isr == LeaderAndIsr(4, 8, (4,), LeaderRecoveryState.RECOVERED, 12)


def test_leader_for_offline_unclean_disabled_no_leader() -> None:
    ctx = ctx_with([4], ReplicaAssignment((1, 2, 4)))
    current = LeaderAndIsr(1, 7, (1,), LeaderRecoveryState.RECOVERED, 12)
    assert leader_for_offline(ctx, True, [(TP, current, False)]) == [ElectionResult(TP, None, (4,))]


def test_leader_for_offline_without_state() -> None:
    ctx = ctx_with([1], ReplicaAssignment((1, 2)))
    assert leader_for_offline(ctx, True, [(TP, None, True)]) == [ElectionResult(TP, None, (1,))]


def test_leader_for_offline_shutting_down_broker_is_not_online() -> None:
    ctx = ctx_with([1, 2], ReplicaAssignment((1, 2)))
    ctx.shutting_down_broker_ids.add(1)
    [result] = leader_for_offline(ctx, True, [(TP, LeaderAndIsr(1, 0, (1, 2)), False)])
    assert result == ElectionResult(TP, LeaderAndIsr(2, 1, (2,)), (2,))


def test_leader_for_reassign_uses_target_replicas() -> None:
    ctx = ctx_with([1, 2, 3, 4], ReplicaAssignment((4, 3, 1, 2), adding_replicas=(4, 3), removing_replicas=(1, 2)))
    current = LeaderAndIsr(1, 3, (1, 2, 3, 4), partition_epoch=9)
    [result] = leader_for_reassign(ctx, [(TP, current)])
    assert result == ElectionResult(TP, LeaderAndIsr(4, 4, (1, 2, 3, 4), partition_epoch=9), (4, 3))


def test_leader_for_reassign_no_target_in_isr() -> None:
    ctx = ctx_with([1, 2, 3, 4], ReplicaAssignment((4, 3, 1, 2), adding_replicas=(4, 3), removing_replicas=(1, 2)))
    [result] = leader_for_reassign(ctx, [(TP, LeaderAndIsr(1, 3, (1, 2)))])
    assert result == ElectionResult(TP, None, (4, 3))


def test_leader_for_preferred_replica() -> None:
    ctx = ctx_with([1, 2], ReplicaAssignment((1, 2, 3)))
    [result] = leader_for_preferred_replica(ctx, [(TP, LeaderAndIsr(2, 5, (2, 1)))])
    assert result == ElectionResult(TP, LeaderAndIsr(1, 6, (2, 1)), (1, 2, 3))
    [none] = leader_for_preferred_replica(ctx, [(TP, LeaderAndIsr(2, 5, (2,)))])
    assert none == ElectionResult(TP, None, (1, 2, 3))


def test_leader_for_controlled_shutdown_shrinks_isr_and_tells_shutting_down_replica() -> None:
    ctx = ctx_with([1, 2, 3], ReplicaAssignment((1, 2, 3)))
    ctx.shutting_down_broker_ids.add(1)
    [result] = Election.leader_for_controlled_shutdown(ctx, [(TP, LeaderAndIsr(1, 5, (1, 3, 2)))])
    assert result == ElectionResult(TP, LeaderAndIsr(2, 6, (3, 2)), (1, 2, 3))
    ctx.shutting_down_broker_ids.update({2, 3})
    [none] = leader_for_controlled_shutdown(ctx, [(TP, LeaderAndIsr(1, 5, (1, 3, 2)))])
    assert none == ElectionResult(TP, None, (1, 2, 3))


def test_strategies_are_data() -> None:
    assert OfflinePartitionLeaderElectionStrategy(True) == OfflinePartitionLeaderElectionStrategy(True)
    assert OfflinePartitionLeaderElectionStrategy(True) != OfflinePartitionLeaderElectionStrategy(False)
    assert ReassignPartitionLeaderElectionStrategy() is ReassignPartitionLeaderElectionStrategy
    assert str(PreferredReplicaPartitionLeaderElectionStrategy) == "PreferredReplicaPartitionLeaderElectionStrategy"
    assert repr(ControlledShutdownPartitionLeaderElectionStrategy) == "ControlledShutdownPartitionLeaderElectionStrategy"
