"""CreatePartitions: adding partitions to existing topics, in both metadata modes.

After Kafka's AddPartitionsTest (kafka.admin): wrong replica counts, too few assignments, the
partition-0 check, incrementing with the broker's placement, manual assignments, and the
ZooKeeper placement of new partitions over all or some brokers (exact leaders and replica sets);
plus KafkaApis#handleCreatePartitionsRequest's request-level checks (duplicates, NOT_CONTROLLER,
a topic queued for deletion) and validate-only.
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, Errors
from kafka_ref.clients import Admin, NewPartitions
from kafka_ref.common.errors import (
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from kafka_ref.zk.admin_zk_client import AdminZkClient
from kafka_ref.zk.zk_data import ReplicaAssignment

MODES = ["zk", "kraft"]
TOPICS = {"new-topic1": {0: [0, 1]}, "new-topic2": {0: [1, 2]}, "new-topic3": {0: [2, 3, 0, 1]}, "new-topic4": {0: [0, 3]}}


async def _setup(cluster: Cluster) -> None:
    for name, assignment in TOPICS.items():
        await cluster.create_topic(name, replica_assignment=assignment)


async def _described(admin: Admin, topic: str) -> dict[int, tuple[int | None, set[int]]]:
    description = (await admin.describe_topics([topic]))[topic]
    return {p.partition: (p.leader, set(p.replicas)) for p in description.partitions}


async def _wait_partitions(cluster: Cluster, topic: str, count: int) -> None:
    """Every live broker's metadata cache shows ``count`` partitions with leaders."""
    def ready() -> bool:
        for b in cluster.live_broker_ids():
            parts = cluster.broker(b).metadata_cache.partition_states.get(topic, {}) if cluster.metadata_mode == "zk" else None
            if parts is not None and (len(parts) != count or any(s.leader < 0 for s in parts.values())):
                return False
            if parts is None and len(cluster.broker(b).metadata_cache.get_topic_partitions(topic)) != count:
                return False
        return True

    await cluster.wait_until(ready, message=f"{topic} has {count} partitions everywhere")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_wrong_replica_count(mode: str) -> None:
    """AddPartitionsTest#testWrongReplicaCount: 3 replicas for a topic of replication factor 2."""
    async with Cluster(brokers=4, metadata_mode=mode, seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            with pytest.raises(InvalidReplicaAssignmentException):
                await admin.create_partitions({"new-topic1": NewPartitions.increase_to(2, [[0, 1, 2]])})


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_missing_partitions_in_create_partitions(mode: str) -> None:
    """AddPartitionsTest#testMissingPartitionsInCreatePartitions: one assignment for two new partitions."""
    async with Cluster(brokers=4, metadata_mode=mode, seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            with pytest.raises(InvalidReplicaAssignmentException) as info:
                await admin.create_partitions({"new-topic1": NewPartitions.increase_to(3, [[0, 1, 2]])})
        expected = ("Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."
                    if mode == "kraft" else "Increasing the number of partitions by 2 but 1 assignments provided.")
        assert expected in str(info.value)
        if mode == "zk":
            admin_zk = AdminZkClient(cluster.broker(0).zk_client, cluster.broker(0).rng)
            with pytest.raises(InvalidReplicaAssignmentException, match="partition id 0 is missing"):
                admin_zk.create_new_partitions_assignment("new-topic5", {1: ReplicaAssignment((0, 1))}, [0, 1, 2, 3], 2,
                                                          {1: [0, 1], 2: [0, 1, 2]})


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_increment_partitions(mode: str) -> None:
    """AddPartitionsTest#testIncrementPartitions: 1 → 3 partitions, each with 2 replicas and a leader among them."""
    async with Cluster(brokers=4, metadata_mode=mode, seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            await admin.create_partitions({"new-topic1": NewPartitions.increase_to(3)})
            await _wait_partitions(cluster, "new-topic1", 3)
            described = await _described(admin, "new-topic1")
        assert sorted(described) == [0, 1, 2]
        for leader, replicas in described.values():
            assert len(replicas) == 2 and leader in replicas
        # The new partitions take writes.
        for partition in (1, 2):
            leader = cluster.leader_for("new-topic1", partition)
            assert (await cluster.produce(leader, "new-topic1", partition, [b"x"], acks=-1)).error == Errors.NONE


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_manual_assignment_of_replicas(mode: str) -> None:
    """AddPartitionsTest#testManualAssignmentOfReplicas: [[0, 1], [2, 3]] for partitions 1 and 2."""
    async with Cluster(brokers=4, metadata_mode=mode, seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            await admin.create_partitions({"new-topic2": NewPartitions.increase_to(3, [[0, 1], [2, 3]])})
            await _wait_partitions(cluster, "new-topic2", 3)
            described = await _described(admin, "new-topic2")
        assert described[1] == (0, {0, 1})
        assert described[2] == (2, {2, 3})


@pytest.mark.anyio
async def test_replica_placement_all_servers() -> None:
    """AddPartitionsTest#testReplicaPlacementAllServers (ZooKeeper placement): 1 → 7 partitions of RF 4."""
    async with Cluster(brokers=4, metadata_mode="zk", seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            await admin.create_partitions({"new-topic3": NewPartitions.increase_to(7)})
            await _wait_partitions(cluster, "new-topic3", 7)
            described = await _described(admin, "new-topic3")
        assert described == {0: (2, {2, 3, 0, 1}), 1: (3, {3, 2, 0, 1}), 2: (0, {0, 3, 1, 2}), 3: (1, {1, 0, 2, 3}),
                             4: (2, {2, 3, 0, 1}), 5: (3, {3, 0, 1, 2}), 6: (0, {0, 1, 2, 3})}


@pytest.mark.anyio
async def test_replica_placement_partial_servers() -> None:
    """AddPartitionsTest#testReplicaPlacementPartialServers (ZooKeeper placement): 1 → 3 partitions of RF 2."""
    async with Cluster(brokers=4, metadata_mode="zk", seed=3) as cluster:
        await _setup(cluster)
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            await admin.create_partitions({"new-topic2": NewPartitions.increase_to(3)})
            await _wait_partitions(cluster, "new-topic2", 3)
            described = await _described(admin, "new-topic2")
        assert described == {0: (1, {1, 2}), 1: (2, {0, 2}), 2: (3, {1, 3})}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_request_level_errors_and_validate_only(mode: str) -> None:
    """KafkaApis#handleCreatePartitionsRequest / ControllerApis#createPartitions: per-topic answers.

    A duplicate is INVALID_REQUEST, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, no growth
    INVALID_PARTITIONS; validate-only answers NONE and adds nothing; a non-controller ZooKeeper
    broker answers NOT_CONTROLLER for every topic.
    """
    async with Cluster(brokers=4, metadata_mode=mode, seed=3) as cluster:
        await _setup(cluster)
        controller = cluster.controller_id()
        target = controller if mode == "zk" else 0
        request = CreatePartitionsRequest(topics=(
            CreatePartitionsTopic(name="new-topic1", count=2), CreatePartitionsTopic(name="new-topic1", count=3),
            CreatePartitionsTopic(name="missing", count=2), CreatePartitionsTopic(name="new-topic2", count=1),
            CreatePartitionsTopic(name="new-topic4", count=2, assignments=(CreatePartitionsAssignment(broker_ids=(3, 0)),)),
        ), timeout_ms=5000, validate_only=True)
        response = await cluster.network.send("admin", target, request, 10_000)
        assert response.topic_errors() == {
            "new-topic1": Errors.INVALID_REQUEST.code, "missing": Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
            "new-topic2": Errors.INVALID_PARTITIONS.code, "new-topic4": Errors.NONE.code}
        assert len(cluster.topic_assignment("new-topic4")) == 1
        if mode == "zk":
            other = next(b for b in cluster.live_broker_ids() if b != controller)
            response = await cluster.network.send("admin", other, request, 10_000)
            assert set(response.topic_errors().values()) == {Errors.NOT_CONTROLLER.code}
        async with Admin(cluster.network, [0, 1, 2, 3]) as admin:
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.create_partitions({"missing": NewPartitions.increase_to(2)})
            with pytest.raises(InvalidPartitionsException):
                await admin.create_partitions({"new-topic2": NewPartitions.increase_to(1)})


@pytest.mark.anyio
async def test_topic_queued_for_deletion_gets_no_partitions() -> None:
    """A topic queued for deletion (a replica down keeps it there) is INVALID_TOPIC_EXCEPTION."""
    async with Cluster(brokers=4, metadata_mode="zk", seed=3) as cluster:
        await _setup(cluster)
        cluster.kill_broker(3)
        await cluster.wait_until(lambda: 3 not in cluster.live_broker_ids(), message="broker 3 gone")
        controller = cluster.broker(cluster.controller_id()).controller
        cluster.broker(cluster.controller_id()).admin_manager.admin_zk_client.delete_topic("new-topic4")
        await cluster.wait_until(lambda: controller.controller_context.is_topic_queued_up_for_deletion("new-topic4"),
                                 message="queued for deletion")
        request = CreatePartitionsRequest(topics=(CreatePartitionsTopic(name="new-topic4", count=2),), timeout_ms=1000)
        response = await cluster.network.send("admin", cluster.controller_id(), request, 10_000)
        assert response.topic_errors() == {"new-topic4": Errors.INVALID_TOPIC_EXCEPTION.code}
