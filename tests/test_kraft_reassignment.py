"""Partition reassignment on the KRaft controller (KIP-455 through the QuorumController).

Mirrors Kafka's PartitionReassignmentReplicasTest, PartitionReassignmentRevertTest and the
reassignment cases of ReplicationControlManagerTest (testReassignPartitions,
testCancelReassignPartitions), then runs a whole move on a KRaft cluster.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors, InvalidReplicaAssignmentException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.quorum.partition_change_builder import PartitionChangeBuilder
from kafka_ref.controller.quorum.partition_reassignment import PartitionReassignmentReplicas, PartitionReassignmentRevert
from kafka_ref.image.records import LeaderRecoveryState
from kafka_ref.image.registrations import PartitionRegistration
from kafka_ref.common.uuid import Uuid

TP = TopicPartition("t", 0)


# ------------------------------------------------------------------------------ the replica sets


def test_reassignment_replicas_merge_target_then_removing():
    """PartitionReassignmentReplicasTest#testNoneAddedOrRemoved / #testAdditionsAndRemovals."""
    same = PartitionReassignmentReplicas.from_assignments([3, 2, 1], [3, 2, 1])
    assert (same.removing, same.adding, same.replicas) == ((), (), (3, 2, 1))
    assert not same.is_reassignment_in_progress()
    moved = PartitionReassignmentReplicas.from_assignments([3, 2, 1], [0, 1, 3])
    assert (moved.removing, moved.adding, moved.replicas) == ((2,), (0,), (0, 1, 3, 2))
    assert moved.original_replicas() == (1, 3, 2)
    reordered = PartitionReassignmentReplicas.from_assignments([3, 2, 1], [1, 2, 3])
    assert (reordered.removing, reordered.adding, reordered.replicas) == ((), (), (1, 2, 3))


def test_reassignment_completes_only_when_the_isr_holds_every_remaining_replica():
    """PartitionReassignmentReplicasTest#testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas
    and #testIsrSpecifiedAndMaybeCompleteReassignment."""
    moved = PartitionReassignmentReplicas.from_assignments([0, 1, 2], [3, 0, 1])
    assert moved.maybe_complete_reassignment([0, 1, 2]) is None
    assert moved.maybe_complete_reassignment([0, 1, 2, 3]) == ((3, 0, 1), (0, 1, 3))
    # The removing replicas alone in the ISR: never completes to an empty ISR.
    away = PartitionReassignmentReplicas.from_assignments([0, 1], [2, 3])
    assert away.maybe_complete_reassignment([0, 1]) is None
    assert away.maybe_complete_reassignment([0, 2]) is None
    assert away.maybe_complete_reassignment([1, 2, 3]) == ((2, 3), (2, 3))


def test_reassignment_revert():
    """PartitionReassignmentRevertTest: none added or removed, some removing, some adding, and the
    unclean case where every ISR member was being added."""
    assert PartitionReassignmentRevert.of([3, 2, 1], [3, 2], [], []) == PartitionReassignmentRevert((3, 2, 1), (3, 2), False)
    assert PartitionReassignmentRevert.of([3, 2, 1], [3, 2], [2, 1], []) == PartitionReassignmentRevert((3, 2, 1), (3, 2), False)
    assert PartitionReassignmentRevert.of([4, 3, 2, 1], [4, 3], [], [4]) == PartitionReassignmentRevert((3, 2, 1), (3,), False)
    assert PartitionReassignmentRevert.of([3, 2, 1, 0], [3], [1], [3]) == PartitionReassignmentRevert((2, 1, 0), (2,), True)
    with pytest.raises(InvalidReplicaAssignmentException):
        PartitionReassignmentRevert.of([1, 2], [1], [], [1, 2])


def test_change_builder_completes_a_reassignment_when_the_isr_catches_up():
    """PartitionChangeBuilderTest#testCompletedReassignment: the ISR expansion that brings in the last
    adding replica also drops the removing replica and clears the lists; the leader (being removed)
    hands over to the first remaining ISR member with a leader epoch bump."""
    topic_id = Uuid(1, 2)
    partition = PartitionRegistration(replicas=(3, 4, 0, 1), isr=(0, 1), removing_replicas=(0, 1),
                                      adding_replicas=(3, 4), leader=0, leader_recovery_state=LeaderRecoveryState.RECOVERED,
                                      leader_epoch=5, partition_epoch=7)
    halfway = PartitionChangeBuilder(partition, topic_id, 0, lambda _b: True).set_target_isr([0, 1, 3]).build()
    assert (halfway.isr, halfway.replicas, halfway.leader) == ((0, 1, 3), None, -2)
    done = PartitionChangeBuilder(partition, topic_id, 0, lambda _b: True).set_target_isr([0, 1, 3, 4]).build()
    assert (done.isr, done.replicas, done.removing_replicas, done.adding_replicas, done.leader) == (
        (3, 4), (3, 4), (), (), 3)


# ------------------------------------------------------------------------------ on a KRaft cluster


@pytest.mark.anyio
async def test_reassignment_moves_a_partition_to_new_brokers_in_kraft_mode():
    """ReplicationControlManagerTest#testReassignPartitions end to end: AlterPartitionReassignments
    writes the merged replica set; the new brokers become followers (applyDelta) and catch up; the
    leader's ISR expansion completes the move (the old brokers leave the replica set, one of the new
    ones leads with a leader epoch bump); the old brokers delete their replicas; no acknowledged
    record is lost. Errors: unknown topic, unregistered broker, cancelling when nothing is moving."""
    async with Cluster(brokers=6, metadata_mode="kraft", seed=3) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        async with cluster.producer(acks=-1) as producer:
            acked = [await producer.send("t", f"v{i}".encode(), partition=0) for i in range(20)]
        assert [m.offset for m in acked] == list(range(20))
        errors = await cluster.reassign_partitions({TP: [3, 4, 5], TopicPartition("nope", 0): [0],
                                                    TopicPartition("t", 1): [0]}, via="api")
        assert errors == {TP: Errors.NONE.code, TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
                          TopicPartition("t", 1): Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["replicas"] == [3, 4, 5], timeout_ms=30000)
        state = cluster.partition_state("t", 0)
        assert (state["leader"], state["leader_epoch"], sorted(state["isr"])) == (3, 1, [3, 4, 5])
        await cluster.wait_until(lambda: all(cluster.disks[b].get_local_log(TP) is None for b in (0, 1, 2)), timeout_ms=30000)
        leader_log = cluster.broker(3).replica_manager.online_partition(TP).log
        await cluster.wait_until(lambda: leader_log.high_watermark == 20, timeout_ms=30000)
        for b in (3, 4, 5):
            log = cluster.broker(b).replica_manager.online_partition(TP).log
            assert log.log_end_offset == 20
        # Nothing to cancel now; an unregistered broker is refused.
        assert await cluster.cancel_partition_reassignments([TP]) == {TP: Errors.NO_REASSIGNMENT_IN_PROGRESS.code}
        assert await cluster.reassign_partitions({TP: [3, 4, 9]}, via="api") == {TP: Errors.INVALID_REPLICA_ASSIGNMENT.code}


@pytest.mark.anyio
async def test_cancelling_a_stuck_reassignment_reverts_to_the_original_replicas():
    """ReplicationControlManagerTest#testCancelReassignPartitions: a target broker that is down keeps
    the move from completing; cancelling writes the original replicas back and takes the adding
    replica out of the ISR and the replica set."""
    async with Cluster(brokers=4, metadata_mode="kraft", seed=4) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        cluster.kill_broker(3)
        errors = await cluster.reassign_partitions({TP: [0, 1, 3]}, via="api")
        assert errors == {TP: Errors.NONE.code}
        state = cluster.partition_state("t", 0)
        assert (state["replicas"], sorted(state["isr"])) == ([0, 1, 3, 2], [0, 1, 2])
        registration = cluster.active_controller().replication_control.get_partition(registration_topic(cluster), 0)
        assert (registration.removing_replicas, registration.adding_replicas) == ((2,), (3,))
        assert await cluster.cancel_partition_reassignments([TP]) == {TP: Errors.NONE.code}
        state = cluster.partition_state("t", 0)
        assert (state["replicas"], sorted(state["isr"]), state["leader"]) == ([0, 1, 2], [0, 1, 2], 0)
        registration = cluster.active_controller().replication_control.get_partition(registration_topic(cluster), 0)
        assert (registration.removing_replicas, registration.adding_replicas) == ((), ())


def registration_topic(cluster: Cluster) -> Uuid:
    return cluster.active_controller().replication_control.get_topic_id("t")
