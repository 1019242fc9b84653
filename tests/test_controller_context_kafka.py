"""The ZooKeeper-mode controller's shared state: replica assignments, reassignment arithmetic and
the preferred-replica imbalance count.

A port of Kafka 3.8.0's ``ControllerContextTest``, test by test: brokers 1, 2 and 3 live at epoch
1; partitions A-0, A-1 and B-0 assigned round robin ([1, 2, 3], [2, 3, 1], [3, 1, 2]).
tests/test_partition_state_machine.py has shorter checks of the same methods.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import ControllerContext, is_being_reassigned, reassign_to, target_replicas
from kafka_ref.zk.zk_data import BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment

BROKERS = (1, 2, 3)
TP1, TP2, TP3 = TopicPartition("A", 0), TopicPartition("A", 1), TopicPartition("B", 0)


@pytest.fixture
def context() -> ControllerContext:
    """ControllerContextTest#setUp."""
    ctx = ControllerContext()
    ctx.set_live_brokers({BrokerInfo(b, "localhost", 9900 + b): 1 for b in BROKERS})
    for leader_index, tp in enumerate((TP1, TP2, TP3)):
        replicas = tuple(BROKERS[(i + leader_index) % len(BROKERS)] for i in range(len(BROKERS)))
        ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
    return ctx


def _leader(leader: int, isr: tuple[int, ...]) -> LeaderIsrAndControllerEpoch:
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, isr), 0)


def test_update_partition_full_replica_assignment_updates_replica_assignment(context):
    """Mirrors ControllerContextTest#testUpdatePartitionFullReplicaAssignmentUpdatesReplicaAssignment."""
    context.update_partition_full_replica_assignment(TP1, ReplicaAssignment((4,)))
    full = context.partition_full_replica_assignment(TP1)
    assert (full.replicas, full.adding_replicas, full.removing_replicas) == ((4,), (), ())
    expected = ReplicaAssignment((3,), (1,), (2,))
    context.update_partition_full_replica_assignment(TP1, expected)
    assert context.partition_full_replica_assignment(TP1) == expected


def test_partition_replica_assignment_returns_empty_seq_if_topic_or_partition_does_not_exist(context):
    """Mirrors ControllerContextTest#testPartitionReplicaAssignmentReturnsEmptySeqIfTopicOrPartitionDoesNotExist."""
    assert context.partition_replica_assignment(TopicPartition("NONEXISTENT", 0)) == ()
    assert context.partition_replica_assignment(TopicPartition("A", 100)) == ()


def test_partition_full_replica_assignment_returns_empty_assignment_if_topic_or_partition_does_not_exist(context):
    """Mirrors ControllerContextTest#testPartitionFullReplicaAssignmentReturnsEmptyAssignmentIfTopicOrPartitionDoesNotExist."""
    empty = ReplicaAssignment((), (), ())
    assert context.partition_full_replica_assignment(TopicPartition("NONEXISTENT", 0)) == empty
    assert context.partition_full_replica_assignment(TopicPartition("A", 100)) == empty


def test_partition_replica_assignment_for_topic_returns_empty_map_if_topic_does_not_exist(context):
    """Mirrors ControllerContextTest#testPartitionReplicaAssignmentForTopicReturnsEmptyMapIfTopicDoesNotExist."""
    assert context.partition_replica_assignment_for_topic("NONEXISTENT") == {}


def test_partition_replica_assignment_for_topic_returns_expected_replica_assignments(context):
    """Mirrors ControllerContextTest#testPartitionReplicaAssignmentForTopicReturnsExpectedReplicaAssignments."""
    assert context.partition_replica_assignment_for_topic("A") == {TP1: (1, 2, 3), TP2: (2, 3, 1)}


def test_partition_replica_assignment():
    """Mirrors ControllerContextTest#testPartitionReplicaAssignment: target replicas and whether a
    move is in progress, written out and as reassignTo builds them."""
    cases = [
        (ReplicaAssignment((1, 2, 3, 4, 5, 6), (2, 3, 4), (1, 5, 6)), True, (2, 3, 4)),
        (ReplicaAssignment((1, 2, 3, 4), (), (1, 4)), True, (2, 3)),
        (ReplicaAssignment((1, 2, 3, 4), (4,), (2,)), True, (1, 3, 4)),
        (ReplicaAssignment((1, 2, 3, 4, 5, 6)), False, (1, 2, 3, 4, 5, 6)),
    ]
    for assignment, moving, target in cases:
        assert (is_being_reassigned(assignment), target_replicas(assignment)) == (moving, target)
    four = reassign_to(ReplicaAssignment((1, 2, 3, 4)), (4, 2, 5, 3))
    assert (four.replicas, target_replicas(four), four.adding_replicas, four.removing_replicas,
            is_being_reassigned(four)) == ((4, 2, 5, 3, 1), (4, 2, 5, 3), (5,), (1,), True)
    five = reassign_to(ReplicaAssignment((1, 2, 3)), (4, 5, 6))
    assert (five.replicas, target_replicas(five), five.adding_replicas, five.removing_replicas,
            is_being_reassigned(five)) == ((4, 5, 6, 1, 2, 3), (4, 5, 6), (4, 5, 6), (1, 2, 3), True)
    same = reassign_to(ReplicaAssignment((1, 2, 3)), (3, 1, 2))
    assert (same.replicas, target_replicas(same), same.adding_replicas, same.removing_replicas,
            is_being_reassigned(same)) == ((3, 1, 2), (3, 1, 2), (), (), False)


def test_reassign_to_idempotence():
    """Mirrors ControllerContextTest#testReassignToIdempotence."""
    for assignment in (ReplicaAssignment((1, 2, 3)),
                       ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)),
                       ReplicaAssignment((4, 2, 3, 1), (4,), (1,))):
        assert reassign_to(assignment, target_replicas(assignment)) == assignment


def test_reassign_to():
    """Mirrors ControllerContextTest#testReassignTo: a second move starts from the original replicas."""
    assignment = ReplicaAssignment((1, 2, 3))
    first = reassign_to(assignment, (4, 5, 6))
    assert first == ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert reassign_to(first, (7, 8, 9)) == ReplicaAssignment((7, 8, 9, 1, 2, 3), (7, 8, 9), (1, 2, 3))
    assert reassign_to(assignment, (7, 8, 9)) == ReplicaAssignment((7, 8, 9, 1, 2, 3), (7, 8, 9), (1, 2, 3))
    assert reassign_to(first, (1, 2, 3)) == assignment


def test_preferred_replica_imbalance_metric(context):
    """Mirrors ControllerContextTest#testPreferredReplicaImbalanceMetric."""
    for tp in (TP1, TP2, TP3):
        context.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2, 3)))
    assert context.preferred_replica_imbalance_count == 0
    context.put_partition_leadership_info(TP1, _leader(1, (1, 2, 3)))
    assert context.preferred_replica_imbalance_count == 0
    context.put_partition_leadership_info(TP2, _leader(2, (2, 3, 1)))
    assert context.preferred_replica_imbalance_count == 1
    context.put_partition_leadership_info(TP3, _leader(3, (3, 1, 2)))
    assert context.preferred_replica_imbalance_count == 2
    context.update_partition_full_replica_assignment(TP1, ReplicaAssignment((2, 3, 1)))
    context.update_partition_full_replica_assignment(TP2, ReplicaAssignment((2, 3, 1)))
    assert context.preferred_replica_imbalance_count == 2
    context.queue_topic_deletion({TP3.topic})
    assert context.preferred_replica_imbalance_count == 1
    context.put_partition_leadership_info(TP3, _leader(1, (3, 1, 2)))
    assert context.preferred_replica_imbalance_count == 1
    for topic in ("A", "A", "B"):
        context.remove_topic(topic)
    assert context.preferred_replica_imbalance_count == 0


def test_preferred_replica_imbalance_metric_on_concurrent_topic_deletion(context):
    """Mirrors ControllerContextTest#testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion:
    queueing a topic for deletion twice (a second deletion queued while the first is in progress)
    does not count its leaderless partitions."""
    tp_a, tp_b = TopicPartition("A", 0), TopicPartition("B", 0)
    context.update_partition_full_replica_assignment(tp_a, ReplicaAssignment((1, 2, 3)))
    context.update_partition_full_replica_assignment(tp_b, ReplicaAssignment((1, 2, 3)))
    assert context.preferred_replica_imbalance_count == 0
    context.queue_topic_deletion({"A"})
    context.put_partition_leadership_info(tp_a, _leader(LeaderAndIsr.NO_LEADER, (1, 2, 3)))
    assert context.preferred_replica_imbalance_count == 0
    context.queue_topic_deletion({"A", "B"})
    assert context.preferred_replica_imbalance_count == 0
