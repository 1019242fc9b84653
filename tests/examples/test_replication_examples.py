"""Replication scenarios written against kafka_ref's public surface only.

Each test is a classic scenario a Kafka engineer pins: what the leader accepts from the
controller, acks=all with a lagging follower, the ISR shrinking and growing back, a follower
truncating after a leader change. They use ``from kafka_ref import ...`` names, the
``kafka_cluster`` fixture of the kafka_ref pytest plugin, and ``Cluster`` methods; none reaches
into a broker's internals (tests/test_public_api.py checks that). They run on trio and asyncio
in virtual time.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Errors, LeaderAndIsrPartitionState, TopicPartition, Uuid

TP = TopicPartition("t", 0)


@pytest.mark.kafka_cluster(metadata_mode="zk", brokers=2)
async def test_leader_and_isr_from_a_stale_controller_is_refused(kafka_cluster):
    """A LeaderAndIsr carrying an older controller epoch is refused whole with
    STALE_CONTROLLER_EPOCH, one carrying an older broker epoch with STALE_BROKER_EPOCH, and the
    partition keeps the state the real controller gave it.
    (Mirrors LeaderElectionTest#testLeaderElectionWithStaleControllerEpoch.)"""
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1]})
        assert cluster.partition_state("t", 0)["leader_epoch"] == 0
        assert cluster.controller_epoch() == 1
        state = LeaderAndIsrPartitionState(topic_name="t", partition_index=0, controller_epoch=2, leader=1,
                                           leader_epoch=0, isr=(0, 1), partition_epoch=0, replicas=(0, 1))
        # 1. A "controller" 2 in epoch 0 (the real one is in epoch 1), with broker 1's real epoch.
        stale_controller = cluster.leader_and_isr_request([state], {"t": Uuid(7, 7)}, controller_id=2, controller_epoch=0,
                                                          broker_epoch=cluster.broker_epoch(1))
        assert await cluster.send_leader_and_isr(1, stale_controller) == {TP: Errors.STALE_CONTROLLER_EPOCH}
        # 2. The right controller epoch, but an older broker epoch than broker 1 registered with.
        stale_broker = cluster.leader_and_isr_request([state], broker_epoch=cluster.broker_epoch(1) - 1)
        assert await cluster.send_leader_and_isr(1, stale_broker) == {TP: Errors.STALE_BROKER_EPOCH}
        # 3. Nothing changed on either replica.
        for broker in (0, 1):
            view = cluster.replica_state(broker, "t", 0)
            assert (view.leader, view.leader_epoch, view.is_leader) == (0, 0, broker == 0)


@pytest.mark.kafka_cluster(metadata_mode="manual", brokers=2)
async def test_leader_and_isr_with_another_topic_id_is_refused(kafka_cluster):
    """A broker that knows partition t-0 under one topic id answers a LeaderAndIsr naming another
    id with INCONSISTENT_TOPIC_ID for that partition, and keeps its state.
    (Mirrors ReplicaManagerTest#testInconsistentIdReturnsError.)"""
    async with kafka_cluster as cluster:
        assert await cluster.set_partition_state("t", leader=0, leader_epoch=0, isr=[0, 1], replicas=[0, 1], is_new=True) == {
            0: {TP: Errors.NONE}, 1: {TP: Errors.NONE}}
        state = LeaderAndIsrPartitionState(topic_name="t", partition_index=0, controller_epoch=1, leader=0,
                                           leader_epoch=1, isr=(0, 1), partition_epoch=5, replicas=(0, 1))
        other_id = Uuid(0x1234, 0x5678)
        assert other_id != cluster.topic_id("t")
        request = cluster.leader_and_isr_request([state], {"t": other_id})
        assert await cluster.send_leader_and_isr(0, request) == {TP: Errors.INCONSISTENT_TOPIC_ID}
        assert cluster.replica_state(0, "t", 0).leader_epoch == 0
        # The same change under the right id is accepted.
        assert await cluster.send_leader_and_isr(0, cluster.leader_and_isr_request([state])) == {TP: Errors.NONE}
        assert cluster.replica_state(0, "t", 0).leader_epoch == 1


@pytest.mark.kafka_cluster(metadata_mode="zk", brokers=3,
                           config={"min.insync.replicas": 2, "replica.lag.time.max.ms": 10000})
async def test_acks_all_waits_for_a_lagging_follower_to_leave_the_isr(kafka_cluster):
    """acks=all with a follower that stopped fetching: the produce is answered only once the
    leader dropped the follower from the ISR (replica.lag.time.max.ms later) and the HW could
    pass the batch; with a second follower gone the ISR is below min.insync.replicas and
    produces fail with NOT_ENOUGH_REPLICAS.
    (In the spirit of IsrExpirationTest#testIsrExpirationForStuckFollowers and
    ProducerFailureHandlingTest#testNotEnoughReplicasAfterBrokerShutdown, with followers cut off
    rather than shut down.)"""
    async with kafka_cluster as cluster:
        # The controller leads, so cutting followers off the leader leaves its AlterPartition path alone.
        leader = cluster.controller_id()
        first, second = [b for b in range(3) if b != leader]
        await cluster.create_topic("t", replica_assignment={0: [leader, first, second]})
        assert cluster.leader_for("t", 0) == leader
        assert (await cluster.produce(leader, "t", 0, [b"a"], acks=-1)).base_offset == 0
        # 1. One follower can no longer reach the leader.
        cluster.network.cut_link(first, leader)
        started = anyio.current_time()
        result = await cluster.produce(leader, "t", 0, [b"b"], acks=-1)
        waited = anyio.current_time() - started
        assert (result.error, result.base_offset) == (Errors.NONE, 1)
        assert 10 <= waited < 20, waited
        assert sorted(cluster.partition_state("t", 0)["isr"]) == sorted([leader, second])
        # 2. The other goes too. A follower whose log ends where the leader's does counts as caught
        #    up however long it is silent, so an acks=1 record puts it behind; then the leader
        #    shrinks the ISR to itself and refuses acks=all writes.
        cluster.network.cut_link(second, leader)
        assert (await cluster.produce(leader, "t", 0, [b"c"], acks=1)).base_offset == 2
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [leader], message="ISR is the leader alone")
        result = await cluster.produce(leader, "t", 0, [b"d"], acks=-1)
        assert (result.error, result.base_offset) == (Errors.NOT_ENOUGH_REPLICAS, -1)


@pytest.mark.parametrize("kafka_cluster", [{"metadata_mode": "zk"}, {"metadata_mode": "kraft"}],
                         ids=["zk", "kraft"], indirect=True)
async def test_isr_shrinks_for_a_stuck_follower_and_expands_when_it_catches_up(kafka_cluster):
    """A follower that stops fetching leaves the ISR after replica.lag.time.max.ms (the leader
    asks the controller with AlterPartition, bumping the partition epoch) and comes back once it
    has caught up, in ZooKeeper and KRaft mode alike.
    (Mirrors IsrExpirationTest#testIsrExpirationForStuckFollowers, then the expansion.)"""
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        for value in (b"a", b"b"):
            await cluster.produce(0, "t", 0, [value], acks=-1)
        before = cluster.partition_state("t", 0)
        assert sorted(before["isr"]) == [0, 1, 2]
        cluster.network.cut_link(2, 0)
        caught_up_at = cluster.replica_state(0, "t", 0).remote(2).last_caught_up_time_ms
        # A silent follower whose log ends where the leader's does still counts as caught up:
        # one acks=1 record puts it behind.
        assert (await cluster.produce(0, "t", 0, [b"c"], acks=1)).base_offset == 2
        await cluster.wait_until(lambda: 2 not in cluster.partition_state("t", 0)["isr"], timeout_ms=60000,
                                 message="follower 2 out of the ISR")
        # The leader dropped it once it had not caught up for more than replica.lag.time.max.ms (30 s).
        assert cluster.now_ms() - caught_up_at > 30000
        shrunk = cluster.partition_state("t", 0)
        assert sorted(shrunk["isr"]) == [0, 1] and shrunk["partition_epoch"] > before["partition_epoch"]
        assert (await cluster.produce(0, "t", 0, [b"d"], acks=-1)).base_offset == 3
        view = cluster.replica_state(0, "t", 0)
        assert (view.high_watermark, view.log_end_offset, view.remote(2).log_end_offset) == (4, 4, 2)
        assert view.isr == frozenset({0, 1})
        # Healed: the follower fetches the missing records and is back.
        cluster.network.heal_link(2, 0)
        await cluster.wait_until(lambda: sorted(cluster.partition_state("t", 0)["isr"]) == [0, 1, 2], timeout_ms=60000,
                                 message="follower 2 back in the ISR")
        assert cluster.replica_state(2, "t", 0).log_end_offset == 4


@pytest.mark.kafka_cluster(metadata_mode="manual", brokers=3)
async def test_old_leader_truncates_after_a_leader_change(kafka_cluster):
    """Broker 0 leads epoch 0 and, cut off from its followers, appends two records with acks=1
    nobody replicates. Broker 1 becomes leader in epoch 1 and appends one. A fetch from 0 as
    follower reports the divergence (epoch 0 ends at offset 3 on the new leader); once 0 follows
    epoch 1 it truncates its two records and ends up with the new leader's log.
    (In the spirit of EpochDrivenReplicationProtocolAcceptanceTest#shouldFollowLeaderEpochBasicWorkflow.)"""
    async with kafka_cluster as cluster:
        await cluster.set_partition_state("t", leader=0, leader_epoch=0, isr=[0, 1, 2], replicas=[0, 1, 2], is_new=True)
        for value in (b"a", b"b", b"c"):
            assert (await cluster.produce(0, "t", 0, [value], acks=-1)).error == Errors.NONE
        # 1. Cut off, broker 0 takes two records alone.
        cluster.network.cut_link(0, 1)
        cluster.network.cut_link(0, 2)
        for value in (b"lost-1", b"lost-2"):
            assert (await cluster.produce(0, "t", 0, [value], acks=1)).error == Errors.NONE
        assert [cluster.replica_state(b, "t", 0).log_end_offset for b in range(3)] == [5, 3, 3]
        # 2. Broker 1 leads epoch 1 with 2 in sync, and takes a record.
        await cluster.set_partition_state("t", leader=1, leader_epoch=1, isr=[1, 2], replicas=[0, 1, 2], to=[1, 2])
        assert (await cluster.produce(1, "t", 0, [b"d"], acks=-1)).base_offset == 3
        # 3. What a fetch from broker 0 (last fetched epoch 0, at offset 5) hears from the new leader.
        answer = await cluster.fetch(1, "t", 0, 5, replica_id=0, current_leader_epoch=1, last_fetched_epoch=0)
        assert (answer.error, answer.diverging_epoch, answer.records) == (Errors.NONE, (0, 3), ())
        # 4. Healed and told to follow epoch 1, broker 0 truncates and catches up.
        cluster.network.heal_link(0, 1)
        cluster.network.heal_link(0, 2)
        await cluster.set_partition_state("t", leader=1, leader_epoch=1, isr=[1, 2], replicas=[0, 1, 2], to=[0])
        await cluster.wait_until(lambda: cluster.replica_state(0, "t", 0).log_end_offset == 4, message="0 truncated and caught up")
        consumed = await cluster.fetch(1, "t", 0, 0)
        assert consumed.values == [b"a", b"b", b"c", b"d"]
        assert [r.leader_epoch for r in consumed.records] == [0, 0, 0, 1]
        assert cluster.replica_state(0, "t", 0).leader == 1
