"""Seed 001 §5.4: the five 0.10 PartitionLeaderSelectors, built on Kafka 3.x's election rules.

Kafka 0.10 had no unit test per selector (the behaviour was covered by
kafka.controller.ControllerFailoverTest and the integration tests); each case here follows a
branch of the selector's selectLeader as seed §5.4.1–5.4.5 lays it out.
"""

from __future__ import annotations

import pytest
import structlog

from kafka_ref.common.errors import (
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    StateChangeFailedException,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.controller.leader_selectors import (
    ControlledShutdownLeaderSelector,
    NoOpLeaderSelector,
    OfflinePartitionLeaderSelector,
    PartitionLeaderSelector,
    PreferredReplicaPartitionLeaderSelector,
    ReassignedPartitionLeaderSelector,
)
from kafka_ref.zk.zk_data import BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState
from kafka_ref.zk.zk_data import ReplicaAssignment

TP = TopicPartition("t", 0)


def ctx_with(live: list[int], replicas: tuple[int, ...] | ReplicaAssignment = (), tp: TopicPartition = TP) -> ControllerContext:
    ctx = ControllerContext()
    ctx.set_live_brokers({BrokerInfo(b, f"host{b}", 9092): 10 + b for b in live})
    if replicas:
        assignment = replicas if isinstance(replicas, ReplicaAssignment) else ReplicaAssignment(replicas)
        ctx.update_partition_full_replica_assignment(tp, assignment)
    return ctx


def test_selector_base_is_abstract() -> None:
    with pytest.raises(TypeError):
        PartitionLeaderSelector(ControllerContext())  # type: ignore[abstract]


# ---- 5.4.1 NoOpLeaderSelector ------------------------------------------------------------------

def test_noop_selector_returns_current_state_and_assignment() -> None:
    ctx = ctx_with([1], (1, 2, 3))
    current = LeaderAndIsr(2, 4, (2, 3), partition_epoch=7)
    selector = NoOpLeaderSelector(ctx)
    with structlog.testing.capture_logs() as logs:
        assert selector.select_leader(TP, current) == (current, (1, 2, 3))
    assert [e["event"] for e in logs] == ["noop_leader_selector_asked_to_elect"]
    assert logs[0]["log_level"] == "warning"


# ---- 5.4.2 OfflinePartitionLeaderSelector --------------------------------------------------------

def test_offline_selector_no_assignment() -> None:
    ctx = ctx_with([1])
    with pytest.raises(NoReplicaOnlineException, match=r"^Partition t-0 doesn't have replicas assigned to it$"):
        OfflinePartitionLeaderSelector(ctx, lambda t: True).select_leader(TP, LeaderAndIsr(1, 0, (1,)))


def test_offline_selector_live_isr_member_leads_with_live_isr() -> None:
    ctx = ctx_with([2, 3], (1, 3, 2))
    asked: list[str] = []
    selector = OfflinePartitionLeaderSelector(ctx, lambda t: asked.append(t) or False)
    new, receivers = selector.select_leader(TP, LeaderAndIsr(1, 4, (1, 2, 3), partition_epoch=9))
    # The first assigned replica that is alive and in the ISR (3 precedes 2 in the assignment).
    assert new == LeaderAndIsr(3, 5, (2, 3), LeaderRecoveryState.RECOVERED, 9)
    assert receivers == (3, 2)
    assert asked == []  # the topic config is read only when no ISR member is alive


def test_offline_selector_no_live_isr_unclean_disabled() -> None:
    ctx = ctx_with([2, 3], (1, 2, 3))
    selector = OfflinePartitionLeaderSelector(ctx, lambda t: False)
    with pytest.raises(NoReplicaOnlineException) as info:
        selector.select_leader(TP, LeaderAndIsr(1, 4, (1,)))
    assert str(info.value) == ("No broker in ISR for partition t-0 is alive. Live brokers are: [2,3], "
                               "ISR brokers are: [1]")
    assert ctx.stats.unclean_leader_election_rate.count() == 0


def test_offline_selector_no_live_isr_unclean_enabled() -> None:
    ctx = ctx_with([2, 3], (1, 3, 2))
    selector = OfflinePartitionLeaderSelector(ctx, lambda t: True)
    new, receivers = selector.select_leader(TP, LeaderAndIsr(1, 4, (1,), partition_epoch=9))
    assert new == LeaderAndIsr(3, 5, (3,), LeaderRecoveryState.RECOVERING, 9)
    assert receivers == (3, 2)
    assert ctx.stats.unclean_leader_election_rate.count() == 1


def test_offline_selector_unclean_enabled_before_leader_recovery() -> None:
    ctx = ctx_with([2], (1, 2))
    selector = OfflinePartitionLeaderSelector(ctx, lambda t: True, is_leader_recovery_supported=False)
    new, _ = selector.select_leader(TP, LeaderAndIsr(1, 4, (1,)))
    assert new == LeaderAndIsr(2, 5, (2,), LeaderRecoveryState.RECOVERED, 0)


def test_offline_selector_unclean_enabled_but_no_replica_alive() -> None:
    ctx = ctx_with([7], (1, 2))
    selector = OfflinePartitionLeaderSelector(ctx, lambda t: True)
    with pytest.raises(NoReplicaOnlineException) as info:
        selector.select_leader(TP, LeaderAndIsr(1, 4, (1,)))
    assert str(info.value) == ("No replica for partition t-0 is alive. Live brokers are: [7], "
                               "Assigned replicas are: [1,2]")


def test_offline_selector_unclean_is_per_topic() -> None:
    """unclean.leader.election.enable is a topic config: one topic may elect uncleanly, another not."""
    a0, b0 = TopicPartition("a", 0), TopicPartition("b", 0)
    ctx = ctx_with([2], (1, 2), tp=a0)
    ctx.update_partition_full_replica_assignment(b0, ReplicaAssignment((1, 2)))
    selector = OfflinePartitionLeaderSelector(ctx, lambda topic: topic == "a")
    assert selector.select_leader(a0, LeaderAndIsr(1, 0, (1,)))[0].leader == 2
    with pytest.raises(NoReplicaOnlineException, match="No broker in ISR for partition b-0 is alive"):
        selector.select_leader(b0, LeaderAndIsr(1, 0, (1,)))


# ---- 5.4.3 ReassignedPartitionLeaderSelector ----------------------------------------------------

def test_reassigned_selector_elects_live_in_sync_target() -> None:
    ctx = ctx_with([1, 2, 3, 4], ReplicaAssignment((4, 3, 1, 2), adding_replicas=(4, 3), removing_replicas=(1, 2)))
    new, receivers = ReassignedPartitionLeaderSelector(ctx).select_leader(TP, LeaderAndIsr(1, 2, (1, 2, 3, 4)))
    assert (new, receivers) == (LeaderAndIsr(4, 3, (1, 2, 3, 4)), (4, 3))


def test_reassigned_selector_empty_target() -> None:
    ctx = ctx_with([1])
    with pytest.raises(NoReplicaOnlineException) as info:
        ReassignedPartitionLeaderSelector(ctx).select_leader(TP, LeaderAndIsr(1, 2, (1,)))
    assert str(info.value).startswith("List of reassigned replicas for partition t-0 is empty. "
                                      "Current leader and ISR: [LeaderAndIsr(leader=1, leader_epoch=2")


def test_reassigned_selector_no_target_in_sync() -> None:
    ctx = ctx_with([1, 2, 3, 4], ReplicaAssignment((4, 3, 1, 2), adding_replicas=(4, 3), removing_replicas=(1, 2)))
    with pytest.raises(NoReplicaOnlineException, match="None of the reassigned replicas for partition t-0 are "
                                                       "in-sync with the leader"):
        ReassignedPartitionLeaderSelector(ctx).select_leader(TP, LeaderAndIsr(1, 2, (1, 2)))


# ---- 5.4.4 PreferredReplicaPartitionLeaderSelector ----------------------------------------------

def test_preferred_selector_moves_leadership_to_preferred() -> None:
    ctx = ctx_with([1, 2, 3], (1, 2, 3))
    current = LeaderAndIsr(2, 6, (2, 3, 1), partition_epoch=11)
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(current, 1))
    new, receivers = PreferredReplicaPartitionLeaderSelector(ctx).select_leader(TP, current)
    assert (new, receivers) == (LeaderAndIsr(1, 7, (2, 3, 1), partition_epoch=11), (1, 2, 3))


def test_preferred_selector_not_needed() -> None:
    ctx = ctx_with([1, 2], (1, 2))
    current = LeaderAndIsr(1, 6, (1, 2))
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(current, 1))
    with pytest.raises(LeaderElectionNotNeededException) as info:
        PreferredReplicaPartitionLeaderSelector(ctx).select_leader(TP, current)
    assert str(info.value) == "Preferred replica 1 is already the current leader for partition t-0"


def test_preferred_selector_preferred_not_alive() -> None:
    ctx = ctx_with([2], (1, 2))
    current = LeaderAndIsr(2, 6, (1, 2))
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(current, 1))
    with pytest.raises(StateChangeFailedException, match=r"^Preferred replica 1 for partition t-0 is either not "
                                                         r"alive or not in the isr\."):
        PreferredReplicaPartitionLeaderSelector(ctx).select_leader(TP, current)


def test_preferred_selector_preferred_not_in_isr() -> None:
    ctx = ctx_with([1, 2], (1, 2))
    current = LeaderAndIsr(2, 6, (2,))
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(current, 1))
    with pytest.raises(StateChangeFailedException, match="is either not alive or not in the isr"):
        PreferredReplicaPartitionLeaderSelector(ctx).select_leader(TP, current)


# ---- 5.4.5 ControlledShutdownLeaderSelector -----------------------------------------------------

def test_controlled_shutdown_selector_moves_leader_off_shutting_down_broker() -> None:
    ctx = ctx_with([1, 2, 3], (1, 2, 3))
    ctx.shutting_down_broker_ids.add(1)
    new, receivers = ControlledShutdownLeaderSelector(ctx).select_leader(TP, LeaderAndIsr(1, 3, (1, 3, 2)))
    # New ISR drops the shutting-down broker; the shutting-down replica still hears about it.
    assert (new, receivers) == (LeaderAndIsr(2, 4, (3, 2)), (1, 2, 3))


def test_controlled_shutdown_selector_only_shutting_down_brokers_in_isr() -> None:
    ctx = ctx_with([1, 2, 3], (1, 2, 3))
    ctx.shutting_down_broker_ids.update({1, 2})
    with pytest.raises(StateChangeFailedException) as info:
        ControlledShutdownLeaderSelector(ctx).select_leader(TP, LeaderAndIsr(1, 3, (1, 2)))
    assert str(info.value) == "No other replicas in ISR 1,2 for t-0 besides shutting down brokers 1,2"
