"""Preferred replica leader election and auto leader rebalance on the ZooKeeper-mode controller
(seed 001 §5.4.4; KafkaController#processReplicaLeaderElection, #checkAndTriggerAutoLeaderRebalance),
mirroring kafka.admin.PreferredReplicaLeaderElectionCommandTest and
kafka.controller.ControllerIntegrationTest's preferred-election and auto-rebalance tests."""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

ZK_TIMEOUT_MS = 18000


async def produce(cluster: Cluster, tp: TopicPartition, value: bytes):
    request = ProduceRequest.build(acks=-1, timeout_ms=30000, records={tp: MemoryRecords.with_records([SimpleRecord(None, value)])})
    response = await cluster.network.send("client", cluster.leader_for(tp.topic, tp.partition), request, 31000,
                                          principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


def pick_brokers(cluster: Cluster) -> tuple[int, int, int]:
    """(preferred, second, third): the preferred replica is not the controller, so it can be bounced."""
    controller = cluster.controller_id()
    others = [b for b in range(3) if b != controller]
    return others[0], others[1], controller


async def bounce(cluster: Cluster, broker_id: int, tps: list[TopicPartition]) -> None:
    """Kill ``broker_id``, wait until it leads nothing, restart it, wait until it is back in every ISR."""
    cluster.kill_broker(broker_id)
    await cluster.wait_until(lambda: all(cluster.leader_for(tp.topic, tp.partition) not in (-1, broker_id) for tp in tps),
                             timeout_ms=ZK_TIMEOUT_MS * 2, message="leadership moved off the dead broker")
    await cluster.restart_broker(broker_id)
    await cluster.wait_until(lambda: all(broker_id in cluster.partition_state(tp.topic, tp.partition)["isr"] for tp in tps),
                             timeout_ms=60000, poll_ms=1, message="broker back in the ISR")


async def test_preferred_replica_election_through_zookeeper():
    """After a failover and the preferred replica's return, writing
    /admin/preferred_replica_election moves leadership back to the first assigned replica with a
    leader epoch bump and an unchanged ISR; the znode is then deleted
    (PreferredReplicaLeaderElectionCommandTest#testBasicPreferredReplicaElection)."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"auto.leader.rebalance.enable": False}, seed=31) as cluster:
        preferred, second, third = pick_brokers(cluster)
        await cluster.create_topic("t", replica_assignment={0: [preferred, second, third]})
        tp = TopicPartition("t", 0)
        assert (await produce(cluster, tp, b"a")).error_code == 0
        await bounce(cluster, preferred, [tp])
        before = cluster.partition_state("t", 0)
        assert before["leader"] == second and before["leader_epoch"] == 1

        await cluster.elect_preferred_leaders([tp])
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred, message="preferred leader elected")
        after = cluster.partition_state("t", 0)
        assert after["leader_epoch"] == before["leader_epoch"] + 1
        assert after["isr"] == before["isr"]
        await cluster.wait_until(lambda: cluster.zookeeper.exists("/admin/preferred_replica_election") is None)
        await cluster.wait_until(lambda: cluster.broker(preferred).replica_manager.online_partition(tp).leader_replica_id_opt
                                 == preferred)
        r = await produce(cluster, tp, b"b")
        assert (r.error_code, r.base_offset) == (0, 1)
        # A second request for a partition already led by its preferred replica changes nothing.
        await cluster.elect_preferred_leaders([tp])
        await cluster.wait_until(lambda: cluster.zookeeper.exists("/admin/preferred_replica_election") is None)
        assert cluster.partition_state("t", 0)["leader_epoch"] == after["leader_epoch"]


async def test_auto_leader_rebalance_at_next_check():
    """With auto.leader.rebalance.enable the controller checks every
    leader.imbalance.check.interval.seconds (first 5 s after failover) of loop time; once the
    preferred replica is back in the ISR, the first check after that finds its imbalance ratio
    (2/2 > 10%) and elects it for both partitions — not earlier
    (ControllerIntegrationTest#testAutoPreferredReplicaLeaderElection)."""
    config = {"leader.imbalance.check.interval.seconds": 10}
    async with Cluster(brokers=3, metadata_mode="zk", config=config, seed=32) as cluster:
        preferred, second, third = pick_brokers(cluster)
        await cluster.create_topic("t", replica_assignment={0: [preferred, second, third], 1: [preferred, third, second]})
        tps = [TopicPartition("t", 0), TopicPartition("t", 1)]
        controller = cluster.active_controller()
        checks: list[float] = []
        flow = controller.preferred_replica_election
        original = flow.check_and_trigger_auto_leader_rebalance

        def recording(c):
            checks.append(anyio.current_time())
            original(c)

        flow.check_and_trigger_auto_leader_rebalance = recording
        await bounce(cluster, preferred, tps)
        back_in_isr = anyio.current_time()
        assert all(cluster.leader_for("t", p) != preferred for p in range(2))
        await cluster.wait_until(lambda: all(cluster.leader_for("t", p) == preferred for p in range(2)),
                                 timeout_ms=20000, poll_ms=1, message="leadership rebalanced")
        rebalanced = anyio.current_time()
        next_check = min(t for t in checks if t >= back_in_isr)
        assert next_check <= rebalanced < next_check + 0.01
        # Checks ran 5 s after failover, then every 10 s.
        gaps = [round(b - a, 3) for a, b in zip(checks, checks[1:])]
        assert gaps and all(g == 10.0 for g in gaps)
        for p in range(2):
            assert cluster.partition_state("t", p)["leader_epoch"] == 2


async def test_auto_rebalance_waits_until_ratio_exceeds_threshold():
    """leader.imbalance.per.broker.percentage=50: a broker that does not lead 1 of its 2
    preferred partitions (ratio 0.5) is left alone; only a ratio above the threshold triggers
    an election (KafkaController#checkAndTriggerAutoLeaderRebalance's strict comparison)."""
    config = {"leader.imbalance.check.interval.seconds": 10, "leader.imbalance.per.broker.percentage": 50}
    async with Cluster(brokers=3, metadata_mode="zk", config=config, seed=33) as cluster:
        preferred, second, third = pick_brokers(cluster)
        await cluster.create_topic("t", replica_assignment={0: [preferred, second, third], 1: [preferred, third, second]})
        tps = [TopicPartition("t", 0), TopicPartition("t", 1)]
        controller = cluster.active_controller()
        checks: list[float] = []
        flow = controller.preferred_replica_election
        original = flow.check_and_trigger_auto_leader_rebalance
        flow.check_and_trigger_auto_leader_rebalance = lambda c: (checks.append(anyio.current_time()), original(c))
        await bounce(cluster, preferred, tps)
        # Partition 0 is elected by hand: the ratio for the preferred broker drops to 1/2.
        await cluster.elect_preferred_leaders([tps[0]])
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred, poll_ms=1)
        assert cluster.leader_for("t", 1) != preferred
        seen = len(checks)
        await cluster.wait_until(lambda: len(checks) >= seen + 2, timeout_ms=30000)
        assert cluster.leader_for("t", 1) != preferred
        assert cluster.partition_state("t", 1)["leader_epoch"] == 1


def test_demo_preferred_election():
    """``kafka-ref demo preferred-election``: t-0 back to its preferred leader on request, t-1 at
    the next auto-rebalance check (loop time 25 s: checks at 5 s, 15 s, 25 s)."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("preferred-election", out=lines.append) == 0
    order = ["preferred_replica_election_completed controller_epoch=1 topic_partition=t-0",
             "t=  25.000s  controller 0  leader_imbalance_above_threshold",
             "preferred_replica_election_completed controller_epoch=1 topic_partition=t-1",
             "t=25.000s p0: leader=1 epoch=2 isr=[0, 1, 2]; p1: leader=1 epoch=2 isr=[0, 1, 2]"]
    position = 0
    for needle in order:
        position = next(i for i, line in enumerate(lines) if i >= position and needle in line)


async def test_pending_preferred_election_runs_at_controller_failover():
    """/admin/preferred_replica_election written while the controller is dead is handled by the
    next controller (fetchPendingPreferredReplicaElections in onControllerFailover) and deleted."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"auto.leader.rebalance.enable": False}, seed=34) as cluster:
        preferred, second, controller = pick_brokers(cluster)
        await cluster.create_topic("t", replica_assignment={0: [preferred, second]})
        tp = TopicPartition("t", 0)
        await bounce(cluster, preferred, [tp])
        assert cluster.leader_for("t", 0) == second
        cluster.kill_broker(controller)
        await cluster.elect_preferred_leaders([tp])
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, controller), timeout_ms=40000)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred)
        await cluster.wait_until(lambda: cluster.zookeeper.exists("/admin/preferred_replica_election") is None)
        assert cluster.partition_state("t", 0)["leader_epoch"] == 2


async def test_admin_triggered_elections():
    """ElectLeaders through the controller (KafkaController#electLeaders, AdminClientTriggered):
    UNCLEAN elects a live out-of-sync replica of an offline partition even with
    unclean.leader.election.enable=false; PREFERRED answers ELECTION_NOT_NEEDED where the
    preferred replica already leads and UNKNOWN_TOPIC_OR_PARTITION for unknown partitions
    (ControllerIntegrationTest#testElectLeaders... / LeaderElectionCommandTest)."""
    from kafka_ref.common.errors import Errors
    from kafka_ref.controller.preferred_election import ElectionType
    from kafka_ref.controller.reassignment import ApiError

    config = {"replica.lag.time.max.ms": 1000, "auto.leader.rebalance.enable": False}
    async with Cluster(brokers=3, metadata_mode="zk", config=config, seed=35) as cluster:
        leader, follower, controller = pick_brokers(cluster)
        await cluster.create_topic("t", replica_assignment={0: [leader, follower]})
        await cluster.create_topic("u", replica_assignment={0: [controller, follower]})
        tp, up = TopicPartition("t", 0), TopicPartition("u", 0)
        cluster.network.cut_link(follower, leader)
        request = ProduceRequest.build(acks=1, timeout_ms=1000, records={tp: MemoryRecords.with_records([SimpleRecord(None, b"x")])})
        await cluster.network.send("client", leader, request, 2000, principal="User:ANONYMOUS")
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [leader], timeout_ms=30000)
        cluster.network.heal_link(follower, leader)
        cluster.kill_broker(leader)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == -1, timeout_ms=ZK_TIMEOUT_MS * 2)
        flow = cluster.active_controller().preferred_replica_election

        async def elect(partitions, election_type):
            done = anyio.Event()
            box = {}
            flow.elect_leaders(cluster.active_controller(), partitions, election_type,
                               lambda results: (box.update(results), done.set()))
            await done.wait()
            return box

        assert await elect([tp], ElectionType.UNCLEAN) == {tp: follower}
        state = cluster.partition_state("t", 0)
        assert (state["leader"], state["isr"]) == (follower, [follower])
        results = await elect([up, TopicPartition("nope", 0)], ElectionType.PREFERRED)
        assert results == {up: ApiError(Errors.ELECTION_NOT_NEEDED),
                           TopicPartition("nope", 0): ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                                               "The partition does not exist.")}
