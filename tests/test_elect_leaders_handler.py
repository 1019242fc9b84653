"""ElectLeaders (API 43) served by a ZooKeeper-mode broker: KafkaApis#handleElectLeaders,
ReplicaManager#electLeaders and DelayedElectLeader (Kafka 3.7).

After kafka.admin.LeaderElectionCommandTest (testPreferredReplicaElection, testTopicPartition,
testPathToJsonFile's unknown partition) and the ZooKeeper branch of KafkaApisTest's ElectLeaders
cases: the answer for an elected partition comes only once the receiving broker's metadata cache
shows the new leader, or REQUEST_TIMED_OUT at the request's timeout; ELECTION_NOT_NEEDED is left
out when all partitions were asked for; a broker whose controller is not active answers
NOT_CONTROLLER per partition; without ALTER on the cluster every named partition is
CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import ElectionNotNeededException, Errors, UnknownTopicOrPartitionException
from kafka_ref.common.requests.elect_leaders import ElectionType, ElectLeadersRequest, ElectLeadersResponse
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
CONFIG = {"auto.leader.rebalance.enable": False}


async def _elect(cluster: Cluster, broker: int, partitions, timeout_ms: int = 30000) -> ElectLeadersResponse:
    request = ElectLeadersRequest.of(partitions, ElectionType.PREFERRED, timeout_ms=timeout_ms)
    return await cluster.network.send("admin", broker, request, timeout_ms + 5000, principal="User:ANONYMOUS")


async def _preferred_replica_is_a_follower(cluster: Cluster) -> tuple[int, int]:
    """t-0 and t-1 prefer a broker that is not the controller; it dies and comes back as a follower.

    Returns (controller, preferred); in KRaft mode the controller is not a broker."""
    controller = cluster.controller_id()
    brokers = cluster.live_broker_ids()
    preferred, other = [b for b in brokers if b != controller][:2]
    third = next(b for b in brokers if b not in (preferred, other))
    await cluster.create_topic("t", replica_assignment={0: [preferred, other, third],
                                                        1: [preferred, third, other]})
    cluster.kill_broker(preferred)
    await cluster.wait_until(lambda: preferred not in (cluster.leader_for("t", 0), cluster.leader_for("t", 1)))
    await cluster.restart_broker(preferred)
    await cluster.wait_until(lambda: all(preferred in cluster.partition_state("t", p)["isr"] for p in (0, 1)))
    assert preferred not in (cluster.leader_for("t", 0), cluster.leader_for("t", 1))
    return controller, preferred


async def test_the_answer_waits_for_the_metadata_cache_or_times_out():
    """DelayedElectLeader: with timeout 0 the elected partition is REQUEST_TIMED_OUT (the election
    still happened); with time to wait the answer is NONE and comes when this broker's metadata
    cache already names the new leader."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=11, config=CONFIG) as cluster:
        controller, preferred = await _preferred_replica_is_a_follower(cluster)
        cache = cluster.broker(controller).metadata_cache
        response = await _elect(cluster, controller, [T0], timeout_ms=0)
        assert response.partition_errors() == {T0: Errors.REQUEST_TIMED_OUT.code}
        assert response.error_code == Errors.NONE.code
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred)
        response = await _elect(cluster, controller, [T1])
        assert response.partition_errors() == {T1: Errors.NONE.code}
        assert cache.get_partition_info(T1).leader == preferred
        assert cluster.broker(controller).apis.delayed_elect_leader_purgatory.num_delayed() == 0


async def test_not_needed_unknown_all_partitions_not_controller_and_authorization():
    """LeaderElectionCommandTest's cases through the handler: a partition already led by its preferred
    replica is ELECTION_NOT_NEEDED and an unknown one UNKNOWN_TOPIC_OR_PARTITION; asking for all
    partitions (null) elects what needs it and leaves the rest out; another broker answers
    NOT_CONTROLLER; a principal denied ALTER on the cluster gets CLUSTER_AUTHORIZATION_FAILED."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=12, config=CONFIG) as cluster:
        controller, preferred = await _preferred_replica_is_a_follower(cluster)
        other = next(b for b in cluster.live_broker_ids() if b not in (controller, preferred))
        # Another broker's controller is not active.
        response = await _elect(cluster, other, [T0])
        assert response.partition_errors() == {T0: Errors.NOT_CONTROLLER.code}
        # All partitions: both t partitions move back; nothing else is answered.
        response = await _elect(cluster, controller, None)
        assert response.partition_errors() == {T0: Errors.NONE.code, T1: Errors.NONE.code}
        assert (cluster.leader_for("t", 0), cluster.leader_for("t", 1)) == (preferred, preferred)
        response = await _elect(cluster, controller, None)
        assert response.replica_election_results == ()
        # Named: not needed, unknown.
        response = await _elect(cluster, controller, [T0, TopicPartition("nope", 0)])
        assert response.partition_errors() == {T0: Errors.ELECTION_NOT_NEEDED.code,
                                               TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        # No ALTER on the cluster.
        cluster.broker(controller).apis.authorizer.deny_cluster("User:ANONYMOUS", "ALTER")
        response = await _elect(cluster, controller, [T0, T1])
        assert response.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
        assert response.partition_errors() == {T0: Errors.CLUSTER_AUTHORIZATION_FAILED.code,
                                               T1: Errors.CLUSTER_AUTHORIZATION_FAILED.code}


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_admin_elect_leaders(mode):
    """KafkaAdminClient#electLeaders / ElectLeadersResult#partitions: NONE maps to None; a partition
    already led by its preferred replica to ElectionNotNeededException, an unknown one to
    UnknownTopicOrPartitionException; with no partitions named, only the elected ones are answered."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=13, config=CONFIG) as cluster:
        _, preferred = await _preferred_replica_is_a_follower(cluster)
        admin = cluster.admin()
        assert await admin.elect_leaders(ElectionType.PREFERRED, [T0]) == {T0: None}
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred)
        results = await admin.elect_leaders(ElectionType.PREFERRED, [T0, TopicPartition("nope", 0)])
        assert {tp: type(e) for tp, e in results.items()} == {
            T0: ElectionNotNeededException, TopicPartition("nope", 0): UnknownTopicOrPartitionException}
        assert await admin.elect_leaders(ElectionType.PREFERRED) == {T1: None}
        await cluster.wait_until(lambda: cluster.leader_for("t", 1) == preferred)
        assert await admin.elect_leaders(ElectionType.PREFERRED) == {}
