"""A KRaft cluster with three controllers: failover, partitions, a lost majority (KIP-595 end to end).

After Kafka's KRaftClusterTest and RaftEventSimulationTest scenarios, on a whole Cluster in virtual
time: the active controller dies, a standby is elected within the election timeouts, brokers keep
serving and follow the new leader, topic creation works again and no committed metadata record
is lost; a partitioned leader resigns; without a majority nothing is committed and nothing
diverges.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateTopicsRequest

pytestmark = pytest.mark.anyio

VOTERS = (3000, 3001, 3002)
# quorum.fetch.timeout.ms (a follower stands after it) + the longest election timeout (2 × 1000 ms)
# + the longest election backoff (1000 ms): a new leader is elected well within this.
ELECTION_BOUND_S = (2000 + 2000 + 1000) / 1000


def committed(node) -> list[tuple[int, int, tuple]]:
    """(base offset, epoch, records) of every committed batch in a controller node's log."""
    log = node.metadata_log
    return [(b.base_offset, b.epoch, b.records + b.control_records) for b in log.batches if b.last_offset < log.high_watermark]


async def produce(cluster: Cluster, value: bytes) -> int:
    async with cluster.producer(acks="all") as producer:
        return (await producer.send("t", value, partition=0)).offset


def logs_agree(cluster: Cluster) -> bool:
    """Log matching on the committed prefix: every pair of voters agrees up to the smaller HW."""
    nodes = list(cluster.kraft.nodes.values())
    for a in nodes:
        for b in nodes:
            hw = min(a.metadata_log.high_watermark, b.metadata_log.high_watermark)
            ours = [x for x in a.metadata_log.batches if x.last_offset < hw]
            theirs = [x for x in b.metadata_log.batches if x.last_offset < hw]
            if ours != theirs:
                return False
    return True


async def test_three_controllers_elect_one_and_standbys_replay():
    """KRaftClusterTest#testCreateClusterAndCreateListDeleteTopic with 3 controllers: one voter leads, the
    other two follow, replay every committed record and hold the same image as the active one."""
    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=3) as cluster:
        kraft = cluster.kraft
        active = cluster.controller_id()
        assert active in VOTERS and kraft.voters == VOTERS
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        epoch = cluster.controller_epoch()
        states = {n: node.raft_client.quorum.state.name for n, node in kraft.nodes.items()}
        assert states == {n: ("Leader" if n == active else "Follower") for n in VOTERS}
        await cluster.wait_until(lambda: len({n.metadata_log.high_watermark for n in kraft.nodes.values()}) == 1)
        for node in kraft.nodes.values():
            assert node.raft_client.leader_and_epoch() == (active, epoch)
            assert node.controller.partition_state("t", 0) == cluster.active_controller().partition_state("t", 0)
            assert node.controller.is_active == (node.node_id == active)
        # Every broker is an observer that found the leader.
        assert {b: cluster.broker(b).kraft.raft.leader_and_epoch() for b in range(3)} == {b: (active, epoch) for b in range(3)}
        assert all(cluster.broker(b).metadata_cache.controller_id == active for b in range(3))


async def test_kill_the_active_controller_of_three():
    """KRaftClusterTest's controller failover: kill the active controller → a standby leads the next epoch
    within the election timeouts, brokers keep serving meanwhile, topic creation works again, no committed
    record is lost, and the restarted node rejoins as a follower of the new epoch."""
    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=5) as cluster:
        kraft = cluster.kraft
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        assert await produce(cluster, b"v0") == 0
        old, old_epoch = cluster.controller_id(), cluster.controller_epoch()
        await cluster.wait_until(lambda: len({n.metadata_log.high_watermark for n in kraft.nodes.values()}) == 1)
        before = committed(kraft.nodes[old])
        # 1. The active controller dies; the brokers keep serving with what they have.
        start = anyio.current_time()
        kraft.kill_controller()
        assert cluster.controller_id() is None
        assert await produce(cluster, b"v1") == 1
        # 2. A standby is elected and claims.
        await cluster.wait_until(lambda: kraft.active_node() is not None, timeout_ms=ELECTION_BOUND_S * 1000)
        assert anyio.current_time() - start <= ELECTION_BOUND_S
        new = cluster.controller_id()
        assert new != old and cluster.controller_epoch() > old_epoch
        # 3. Nothing committed is lost: the new leader's log starts with everything committed before.
        assert committed(kraft.nodes[new])[:len(before)] == before
        # 4. Topic creation works again, through the new controller; brokers follow it.
        await cluster.create_topic("u", replica_assignment={0: [1, 2, 0]})
        assert cluster.partition_state("u", 0)["leader"] == 1
        await cluster.wait_until(lambda: all(cluster.broker(b).kraft.raft.leader_id == new for b in range(3)))
        assert await produce(cluster, b"v2") == 2
        # 5. The old node comes back: it is a follower of the new epoch and catches up.
        await kraft.restart_controller(old)
        await cluster.wait_until(lambda: kraft.nodes[old].metadata_log.high_watermark == kraft.nodes[new].metadata_log.high_watermark)
        assert kraft.nodes[old].raft_client.quorum.is_follower()
        assert kraft.nodes[old].raft_client.leader_and_epoch() == (new, cluster.controller_epoch())
        assert logs_agree(cluster)
        assert kraft.nodes[old].controller.partition_state("u", 0) == cluster.active_controller().partition_state("u", 0)


async def test_partitioned_leader_resigns_and_a_majority_elects_another():
    """RaftEventSimulationTest#canElectNewLeaderAfterOldLeaderPartitionedAway: the isolated leader stops hearing
    fetches, resigns after 1.5 fetch timeouts (check quorum); the other two elect a leader; healed, the old
    leader follows the new epoch and nothing diverges."""
    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=11) as cluster:
        kraft = cluster.kraft
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        old, old_epoch = cluster.controller_id(), cluster.controller_epoch()
        cluster.network.isolate(old)
        await cluster.wait_until(lambda: any(n.raft_client.quorum.is_leader() and n.node_id != old
                                             for n in kraft.nodes.values()), timeout_ms=10000)
        await cluster.wait_until(lambda: not kraft.nodes[old].raft_client.quorum.is_leader(), timeout_ms=5000)
        assert kraft.nodes[old].raft_client.epoch == old_epoch  # it resigned, it did not move on
        await cluster.wait_until(lambda: kraft.active_node() is not None and kraft.active_node().node_id != old)
        await cluster.create_topic("u", replica_assignment={0: [0, 1, 2]})
        cluster.network.heal_node(old)
        new = cluster.controller_id()
        await cluster.wait_until(lambda: kraft.nodes[old].raft_client.leader_id == new, timeout_ms=10000)
        await cluster.wait_until(lambda: kraft.nodes[old].metadata_log.high_watermark == kraft.nodes[new].metadata_log.high_watermark)
        assert logs_agree(cluster)


async def test_without_a_majority_nothing_commits_and_nothing_diverges():
    """RaftEventSimulationTest#canRecoverAfterAllNodesKilled / the lost-majority case: with two of three voters
    down the survivor cannot be elected, answers NOT_CONTROLLER and commits nothing; restoring one voter
    restores progress and the logs agree."""
    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=13) as cluster:
        kraft = cluster.kraft
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        active = cluster.controller_id()
        standby = next(v for v in VOTERS if v != active)
        survivor = next(v for v in VOTERS if v not in (active, standby))
        kraft.kill_controller(active)
        kraft.kill_controller(standby)
        hw = kraft.nodes[survivor].metadata_log.high_watermark
        await anyio.sleep(10)
        node = kraft.nodes[survivor]
        assert kraft.active_node() is None and not node.raft_client.quorum.is_leader()
        assert node.metadata_log.high_watermark == hw
        request = CreateTopicsRequest(topics=(CreatableTopic(name="x", num_partitions=1, replication_factor=1),))
        answer = await cluster.network.send("admin", survivor, request, 1000)
        assert Errors.for_code(answer.topics[0].error_code) is Errors.NOT_CONTROLLER
        # Brokers still serve.
        assert await produce(cluster, b"alone") == 0
        # One voter back: a majority again.
        await kraft.restart_controller(standby)
        await cluster.wait_until(lambda: kraft.active_node() is not None, timeout_ms=20000)
        await cluster.create_topic("u", replica_assignment={0: [2, 0, 1]})
        assert logs_agree(cluster)
        assert "x" not in {t.name for t in cluster.active_controller().replication_control.topics.values()}
