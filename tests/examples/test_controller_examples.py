"""Controller and group scenarios written against kafka_ref's public surface only.

Unclean leader election off and on, controller failover, partition reassignment, controlled
shutdown and group coordinator failover, in ZooKeeper mode (Cluster's default) and where the
concept is shared, in KRaft mode too. Public names only (tests/test_public_api.py checks).
"""

from __future__ import annotations

import pytest

from kafka_ref import Errors, TopicPartition

TP = TopicPartition("t", 0)


@pytest.mark.parametrize("unclean, leader_after, epoch_after, isr_after", [
    (False, -1, 2, [0]),
    (True, 1, 3, [1]),
], ids=["unclean-off", "unclean-on"])
@pytest.mark.kafka_cluster(metadata_mode="zk", brokers=2)
async def test_unclean_leader_election(kafka_cluster, unclean, leader_after, epoch_after, isr_after):
    """Follower 1 dies, leader 0 takes a record alone, then dies too; 1 comes back. With
    unclean.leader.election.enable=false the partition stays offline (no leader) rather than
    lose the record (the new controller marks it leaderless in epoch 2, keeping the last ISR);
    with true, 1 becomes leader in epoch 3 and the record written while it was away is gone.
    (Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionDisabled and
    #testUncleanLeaderElectionEnabled.)"""
    async with kafka_cluster(config={"unclean.leader.election.enable": unclean}) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1]})
        assert (await cluster.produce(0, "t", 0, [b"committed"], acks=-1)).base_offset == 0
        # 1. The follower dies; the controller takes it out of the ISR once its session expires.
        cluster.kill_broker(1)
        await cluster.wait_broker_gone(1)
        assert cluster.partition_state("t", 0)["isr"] == [0]
        assert (await cluster.produce(0, "t", 0, [b"only-on-0"], acks=-1)).base_offset == 1
        # 2. The leader (and controller) dies too: nothing is left to elect or to act.
        cluster.kill_broker(0)
        # 3. The out-of-sync replica returns and becomes the controller; it finds t-0's leader gone.
        await cluster.restart_broker(1)
        await cluster.wait_until(lambda: cluster.controller_id() == 1 and cluster.leader_for("t", 0) != 0,
                                 message="the new controller handled t-0")
        state = cluster.partition_state("t", 0)
        assert (state["leader"], state["leader_epoch"], state["isr"], state["controller_epoch"]) == (
            leader_after, epoch_after, isr_after, 2)
        if unclean:
            await cluster.wait_until(lambda: cluster.replica_state(1, "t", 0) is not None and cluster.replica_state(1, "t", 0).is_leader,
                                     message="1 leads")
            assert (await cluster.fetch(1, "t", 0, 0)).values == [b"committed"]
        else:
            result = await cluster.produce(1, "t", 0, [b"x"], acks=1)
            assert result.error == Errors.NOT_LEADER_OR_FOLLOWER


@pytest.mark.kafka_cluster(metadata_mode="zk", brokers=3)
async def test_controller_failover_increments_the_controller_epoch(kafka_cluster):
    """The controller broker dies; another broker wins the /controller election in the next
    controller epoch, and the new controller works (it creates a topic and elects leaders).
    (Mirrors ControllerIntegrationTest#testControllerMoveIncrementsControllerEpoch.)"""
    async with kafka_cluster as cluster:
        first = cluster.controller_id()
        assert cluster.controller_epoch() == 1
        cluster.kill_broker(first)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, first), message="a new controller")
        second = cluster.controller_id()
        assert second != first and cluster.controller_epoch() == 2
        await cluster.create_topic("after", partitions=2, replication_factor=2)
        for p in range(2):
            state = cluster.partition_state("after", p)
            assert state["controller_epoch"] == 2 and state["leader"] != first


@pytest.mark.parametrize("kafka_cluster", [{"metadata_mode": "zk", "brokers": 4}, {"metadata_mode": "kraft", "brokers": 4}],
                         ids=["zk", "kraft"], indirect=True)
async def test_partition_reassignment_moves_the_replicas(kafka_cluster):
    """t-0 moves from [0, 1, 2] to [1, 2, 3]: while broker 3 cannot fetch the controller reports
    the move in progress (replicas [1, 2, 3, 0], adding [3], removing [0]); once 3 caught up it
    completes, broker 0 no longer hosts the partition and 3 has the whole log.
    (Mirrors ControllerIntegrationTest#testPartitionReassignment.)"""
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", replica_assignment={0: [1, 0, 2]})
        for value in (b"a", b"b", b"c"):
            await cluster.produce(1, "t", 0, [value], acks=-1)
        cluster.network.cut_link(3, 1)
        assert await cluster.reassign_partitions({TP: [1, 2, 3]}, via="api") == {TP: Errors.NONE.code}
        await cluster.wait_until(lambda: cluster.topic_assignment("t")[0]["adding_replicas"] == [3],
                                 message="the reassignment started")
        assert cluster.topic_assignment("t") == {0: {"replicas": [1, 2, 3, 0], "adding_replicas": [3], "removing_replicas": [0]}}
        state = cluster.partition_state("t", 0)
        assert (state["adding_replicas"], state["removing_replicas"]) == ([3], [0])
        cluster.network.heal_link(3, 1)
        await cluster.wait_until(lambda: cluster.topic_assignment("t")[0]["replicas"] == [1, 2, 3], timeout_ms=60000,
                                 message="the reassignment completed")
        assert cluster.topic_assignment("t") == {0: {"replicas": [1, 2, 3], "adding_replicas": [], "removing_replicas": []}}
        await cluster.wait_until(lambda: cluster.replica_state(0, "t", 0) is None, message="broker 0 dropped t-0")
        assert sorted(cluster.partition_state("t", 0)["isr"]) == [1, 2, 3]
        assert cluster.replica_state(3, "t", 0).log_end_offset == 3


@pytest.mark.parametrize("kafka_cluster", [{"metadata_mode": "zk"}, {"metadata_mode": "kraft"}], ids=["zk", "kraft"], indirect=True)
async def test_controlled_shutdown_moves_leadership_first(kafka_cluster):
    """A broker shut down cleanly asks the controller to move its leaderships away first: the
    outcome reports success with nothing left, every partition it led has a new leader, and the
    cluster then notices it is gone. (Mirrors ControllerIntegrationTest#testControlledShutdown.)"""
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2], 1: [0, 2, 1], 2: [1, 2, 0]})
        assert cluster.partitions_led_by(0) == {TopicPartition("t", 0), TopicPartition("t", 1)}
        outcome = await cluster.shutdown_broker(0)
        assert (outcome.succeeded, outcome.remaining_partitions) == (True, frozenset())
        assert outcome.attempts == 1
        assert cluster.partitions_led_by(0) == set()
        assert [cluster.leader_for("t", p) for p in range(3)] == [1, 2, 1]
        await cluster.wait_broker_gone(0)
        assert all(0 not in cluster.partition_state("t", p)["isr"] for p in range(3))


@pytest.mark.parametrize("kafka_cluster", [{"metadata_mode": "zk"}, {"metadata_mode": "kraft"}], ids=["zk", "kraft"], indirect=True)
async def test_group_coordinator_failover_keeps_committed_offsets(kafka_cluster):
    """Offsets committed to a group's coordinator survive the coordinator's death: the leader of
    the group's __consumer_offsets partition moves, the new coordinator loads the partition, and
    the same offsets come back; a partition never committed answers -1.
    (In the spirit of GroupCoordinatorIntegrationTest and the coordinator failover seed notes.)"""
    config = {"offsets.topic.num.partitions": 3, "offsets.topic.replication.factor": 3}
    async with kafka_cluster(config=config) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
        assert await cluster.commit_offsets("g", {t0: 5}) == {t0: Errors.NONE}
        old = cluster.coordinator_for("g")
        assert old is not None
        assert await cluster.committed_offsets("g", [t0, t1]) == {t0: 5, t1: -1}
        cluster.kill_broker(old)
        await cluster.wait_broker_gone(old)
        new = cluster.coordinator_for("g")
        assert new not in (None, old)
        assert await cluster.committed_offsets("g", [t0, t1]) == {t0: 5, t1: -1}
        assert await cluster.commit_offsets("g", {t0: 7, t1: 2}) == {t0: Errors.NONE, t1: Errors.NONE}
        assert await cluster.committed_offsets("g", [t0, t1]) == {t0: 7, t1: 2}
