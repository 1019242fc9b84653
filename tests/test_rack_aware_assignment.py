"""Rack-aware replica placement in ZooKeeper mode (AdminUtils#assignReplicasToBrokersRackAware).

After Kafka's AdminRackAwareTest (testGetRackAlternatedBrokerListAndAssignReplicasToBrokers: the
exact rack-alternated order and placements; testAssignmentWithRackAware*: every partition's
replicas in distinct racks while racks allow it, leaders and replicas spread evenly) and
AdminUtils' mixed-rack refusal; and topic creation in a cluster with racks in both modes
(KRaft places with StripedReplicaPlacer, which reads the same registered racks).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafka_ref import Cluster
from kafka_ref.zk.admin_zk_client import AdminOperationException, assign_replicas_to_brokers, get_rack_alternated_broker_list

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_rack_alternated_list_and_exact_assignment() -> None:
    """AdminRackAwareTest#testGetRackAlternatedBrokerListAndAssignReplicasToBrokers."""
    assert get_rack_alternated_broker_list(RACKS) == [0, 3, 1, 5, 4, 2]
    assert get_rack_alternated_broker_list({b: r for b, r in RACKS.items() if b != 5}) == [0, 3, 1, 4, 2]
    assignment = assign_replicas_to_brokers(sorted(RACKS), 7, 3, random.Random(0), fixed_start_index=0,
                                            start_partition_id=0, racks=RACKS)
    assert assignment == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3], 6: [0, 4, 2]}


@pytest.mark.parametrize("start", [2, -1])
def test_each_partition_spans_every_rack_and_load_is_even(start: int) -> None:
    """AdminRackAwareTest#testAssignmentWithRackAware (fixed start 2) and ...WithRandomStartIndex:
    6 partitions, RF 3 over 3 racks of 2 brokers: every partition in 3 racks, each broker leads
    once and holds 3 replicas."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    assignment = assign_replicas_to_brokers(sorted(racks), 6, 3, random.Random(7), fixed_start_index=start,
                                            start_partition_id=0, racks=racks)
    assert all(len({racks[b] for b in replicas}) == 3 for replicas in assignment.values())
    assert Counter(r[0] for r in assignment.values()) == {b: 1 for b in racks}
    assert Counter(b for r in assignment.values() for b in r) == {b: 3 for b in racks}


def test_mixed_racks_are_refused_and_none_is_rack_unaware() -> None:
    with pytest.raises(AdminOperationException, match="Not all brokers have rack information"):
        assign_replicas_to_brokers([0, 1, 2], 3, 2, random.Random(0), racks={0: "a", 1: None, 2: "b"})
    assert assign_replicas_to_brokers([0, 1, 2], 3, 2, random.Random(0), fixed_start_index=0, racks={0: None}) == \
        assign_replicas_to_brokers([0, 1, 2], 3, 2, random.Random(0), fixed_start_index=0)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_created_topics_spread_replicas_over_racks(mode: str) -> None:
    """CreateTopics in a cluster whose brokers have racks: with RF 2 over racks {a: 0, 1; b: 2, 3}
    every partition has one replica in each rack (ZooKeeper: AdminUtils rack-aware; KRaft:
    StripedReplicaPlacer)."""
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    async with Cluster(brokers=4, metadata_mode=mode, seed=2, racks=racks) as cluster:
        await cluster.create_topic("t", partitions=8, replication_factor=2)
        replicas = [cluster.replica_state(cluster.leader_for("t", p), "t", p).replicas for p in range(8)]
        assert all({racks[b] for b in r} == {"a", "b"} for r in replicas), replicas
