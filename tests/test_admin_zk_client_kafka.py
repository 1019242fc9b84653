"""Replica assignment and ZooKeeper topic administration: AdminUtils#assignReplicasToBrokers and AdminZkClient.

Ports Kafka 3.8's core/src/test/scala/unit/kafka/admin/AdminRackAwareTest.scala (with RackAwareTest's
checkReplicaDistribution / getReplicaDistribution) and the topic parts of
core/src/test/scala/unit/kafka/zk/AdminZkClientTest.scala against
kafka_ref.zk.admin_zk_client (assign_replicas_to_brokers, AdminZkClient) over the in-memory
ZooKeeper. tests/test_rack_aware_assignment.py already holds
AdminRackAwareTest#testGetRackAlternatedBrokerListAndAssignReplicasToBrokers,
#testAssignmentWithRackAware and #testAssignmentWithRackAwareWithRandomStartIndex; the random
start cases here run over several seeds of the caller's ``random.Random`` (Kafka's AdminUtils
draws from a static Random). KRaft's placement is ported from
metadata/src/test/java/org/apache/kafka/metadata/placement/StripedReplicaPlacerTest.java against
kafka_ref.controller.quorum.replica_placer with a ``random.Random`` that draws as Kafka's
MockRandom under java.util.Random#nextInt, so the placements are Kafka's exact ones.

Not ported:
- AdminZkClientTest#shouldPropagateDynamicBrokerConfigs, #testBootstrapClientIdConfig,
  #testChangeUserOrUserClientIdConfigWithUserAndClientId, #testChangeUserOrUserClientIdConfigWithUser,
  #testChangeClientIdConfig, #testChangeIpConfig: quotas and dynamic broker/client/user/IP configs
  are not modelled.
- AdminZkClientTest#testTopicConfigChange's quota-manager checks (quotaManagers.leader.isThrottled):
  replication quotas are not modelled; its log config checks are ported.
- AdminZkClientTest#testConcurrentTopicCreation's two threads: kafka_ref runs one task at a time, so
  the two creations run one after the other (the second sees TopicExistsException, as the loser of
  Kafka's race does).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.common.errors import (
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TopicExistsException,
)
from kafka_ref.common.time import MockTime
from kafka_ref.zk import BrokerInfo, KafkaZkClient, ZooKeeper
from kafka_ref.zk.admin_zk_client import (
    AdminOperationException,
    AdminZkClient,
    RackAwareMode,
    assign_replicas_to_brokers,
)
from kafka_ref.zk.zk_data import ConfigType, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment

SEEDS = range(8)
SIX_BROKERS_THREE_RACKS = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


# ------------------------------------------------------------------ RackAwareTest helpers


def _distribution(assignment: dict[int, list[int]], racks: dict[int, str]):
    """RackAwareTest#getReplicaDistribution: each partition's racks, each broker's leader and replica counts."""
    partition_racks = {p: [racks[b] for b in replicas] for p, replicas in assignment.items()}
    leaders = Counter(replicas[0] for replicas in assignment.values())
    replicas_count = Counter(b for replicas in assignment.values() for b in replicas)
    return partition_racks, leaders, replicas_count


def _check_replica_distribution(assignment: dict[int, list[int]], racks: dict[int, str], num_brokers: int,
                                num_partitions: int, replication_factor: int, verify_rack_aware: bool = True,
                                verify_leader_distribution: bool = True,
                                verify_replicas_distribution: bool = True) -> None:
    """RackAwareTest#checkReplicaDistribution."""
    # No broker twice in one partition.
    for replicas in assignment.values():
        assert len(set(replicas)) == len(replicas)
    partition_racks, leaders, replicas_count = _distribution(assignment, racks)
    if verify_rack_aware:
        assert [len(set(r)) for r in partition_racks.values()] == [replication_factor] * num_partitions
    if verify_leader_distribution:
        assert sorted(leaders.values()) == [num_partitions // num_brokers] * num_brokers
    if verify_replicas_distribution:
        assert sorted(replicas_count.values()) == [num_partitions * replication_factor // num_brokers] * num_brokers


def _assign(racks: dict[int, str], partitions: int, rf: int, seed: int = 0, fixed_start_index: int = -1,
            start_partition_id: int = -1) -> dict[int, list[int]]:
    return assign_replicas_to_brokers(sorted(racks), partitions, rf, random.Random(seed), fixed_start_index=fixed_start_index,
                                      start_partition_id=start_partition_id, racks=racks)


# ------------------------------------------------------------------ AdminRackAwareTest


def test_assignment_with_rack_aware_with_uneven_replicas() -> None:
    """Mirrors AdminRackAwareTest#testAssignmentWithRackAwareWithUnevenReplicas: 13 partitions over 6 brokers."""
    assignment = _assign(SIX_BROKERS_THREE_RACKS, 13, 3, fixed_start_index=0, start_partition_id=0)
    assert sorted(assignment) == list(range(13))
    _check_replica_distribution(assignment, SIX_BROKERS_THREE_RACKS, 6, 13, 3, verify_leader_distribution=False,
                                verify_replicas_distribution=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_rack_aware_with_uneven_racks(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testAssignmentWithRackAwareWithUnevenRacks: rack1 has three brokers."""
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    _check_replica_distribution(_assign(racks, 12, 3, seed), racks, 6, 12, 3, verify_replicas_distribution=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_2_replicas_rack_aware(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testAssignmentWith2ReplicasRackAware."""
    _check_replica_distribution(_assign(SIX_BROKERS_THREE_RACKS, 12, 2, seed), SIX_BROKERS_THREE_RACKS, 6, 12, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_rack_aware_expansion(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testRackAwareExpansion: brokers 6-11, partitions numbered from 12."""
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    assignment = _assign(racks, 12, 2, seed, fixed_start_index=-1, start_partition_id=12)
    assert sorted(assignment) == list(range(12, 24))
    _check_replica_distribution(assignment, racks, 6, 12, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_2_replicas_rack_aware_with_6_partitions(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testAssignmentWith2ReplicasRackAwareWith6Partitions."""
    _check_replica_distribution(_assign(SIX_BROKERS_THREE_RACKS, 6, 2, seed), SIX_BROKERS_THREE_RACKS, 6, 6, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_2_replicas_rack_aware_with_6_partitions_and_3_brokers(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers."""
    racks = {0: "rack1", 1: "rack2", 4: "rack3"}
    _check_replica_distribution(_assign(racks, 3, 2, seed), racks, 3, 3, 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_large_number_partitions_assignment(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testLargeNumberPartitionsAssignment: 96 partitions over 12 brokers."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1", 6: "rack1", 7: "rack2",
             8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"}
    _check_replica_distribution(_assign(racks, 96, 3, seed), racks, 12, 96, 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_more_replicas_than_racks(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testMoreReplicasThanRacks: five replicas over three racks cover all three."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = _assign(racks, 6, 5, seed)
    assert [len(r) for r in assignment.values()] == [5] * 6
    partition_racks, _, _ = _distribution(assignment, racks)
    assert all(len(set(partition_racks[p])) == 3 for p in range(6))


@pytest.mark.parametrize("seed", SEEDS)
def test_less_replicas_than_racks(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testLessReplicasThanRacks: two replicas always in two racks."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = _assign(racks, 6, 2, seed)
    assert [len(r) for r in assignment.values()] == [2] * 6
    partition_racks, _, _ = _distribution(assignment, racks)
    assert all(len(set(partition_racks[p])) == 2 for p in range(6))


@pytest.mark.parametrize("seed", SEEDS)
def test_single_rack(seed: int) -> None:
    """Mirrors AdminRackAwareTest#testSingleRack: one rack, every broker leads once."""
    racks = {b: "rack1" for b in range(6)}
    assignment = _assign(racks, 6, 3, seed)
    assert [len(r) for r in assignment.values()] == [3] * 6
    partition_racks, leaders, _ = _distribution(assignment, racks)
    assert all(len(set(partition_racks[p])) == 1 for p in range(6))
    assert leaders == {b: 1 for b in racks}


def test_skip_broker_with_replica_already_assigned() -> None:
    """Mirrors AdminRackAwareTest#testSkipBrokerWithReplicaAlreadyAssigned: four replicas over three racks
    of five brokers, start index 2: no broker twice in a partition."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    assignment = _assign(racks, 6, 4, fixed_start_index=2, start_partition_id=-1)
    _check_replica_distribution(assignment, racks, 5, 6, 4, verify_rack_aware=False, verify_leader_distribution=False,
                                verify_replicas_distribution=False)
    assert [len(r) for r in assignment.values()] == [4] * 6


def test_replica_assignment() -> None:
    """Mirrors AdminRackAwareTest#testReplicaAssignment: replication factors 0 and 6 over five brokers are
    refused; start index 0 gives Kafka's exact rack-unaware placement."""
    brokers = [0, 1, 2, 3, 4]
    with pytest.raises(InvalidReplicationFactorException) as info:
        assign_replicas_to_brokers(brokers, 10, 0, random.Random(0))
    assert str(info.value) == "Replication factor must be larger than 0."
    with pytest.raises(InvalidReplicationFactorException) as info:
        assign_replicas_to_brokers(brokers, 10, 6, random.Random(0))
    assert str(info.value) == "Replication factor: 6 larger than available brokers: 5."
    with pytest.raises(InvalidPartitionsException, match="^Number of partitions must be larger than 0.$"):
        assign_replicas_to_brokers(brokers, 0, 1, random.Random(0))
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert assign_replicas_to_brokers(brokers, 10, 3, random.Random(0), fixed_start_index=0) == expected


def test_rack_unaware_assignment_takes_the_brokers_in_the_order_given() -> None:
    """AdminUtils#assignReplicasToBrokersRackUnaware walks the broker list as given (no sort of its own)."""
    assert assign_replicas_to_brokers([4, 2, 0], 3, 2, random.Random(0), fixed_start_index=0) == {
        0: [4, 2], 1: [2, 0], 2: [0, 4]}


# ------------------------------------------------------------------ AdminZkClientTest


@pytest.fixture
def zk_client() -> KafkaZkClient:
    client = KafkaZkClient(ZooKeeper(MockTime()))
    client.create_top_level_paths()
    return client


def _register(zk_client: KafkaZkClient, racks: dict[int, str | None]) -> None:
    """TestUtils#createBrokersInZk."""
    for broker_id, rack in racks.items():
        zk_client.register_broker(BrokerInfo(broker_id, f"host{broker_id}", 9092 + broker_id, rack=rack))


def test_manual_replica_assignment(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testManualReplicaAssignment."""
    _register(zk_client, {b: None for b in range(5)})
    admin = AdminZkClient(zk_client, random.Random(0))
    bad = [
        ({0: [0, 0]}, "Duplicate replica assignment found"),
        ({0: [0, 1], 1: [0]}, "All partitions should have the same number of replicas"),
        ({1: [1, 2], 2: [1, 2]}, "partitions should be a consecutive 0-based integer sequence"),
        ({0: [1, 2], 3: [1, 2]}, "partitions should be a consecutive 0-based integer sequence"),
        ({-1: [1, 2], 1: [1, 2], 2: [1, 2], 4: [1, 2]}, "partitions should be a consecutive 0-based integer sequence"),
    ]
    for assignment, message in bad:
        with pytest.raises(InvalidReplicaAssignmentException, match=message):
            admin.create_topic_with_assignment("test", {}, assignment)
    assert not zk_client.topic_exists("test")
    good = {0: [0, 1, 2], 1: [1, 2, 3]}
    admin.create_topic_with_assignment("test", {}, good)
    assert zk_client.get_full_replica_assignment_for_topics(["test"]) == {
        TopicPartition("test", p): ReplicaAssignment(tuple(r), (), ()) for p, r in good.items()}


def test_topic_creation_in_zk(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testTopicCreationInZK: the assignment is stored as given (leaders written
    beside it do not change it) and the topic cannot be created twice."""
    expected = {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1], 5: [0, 2, 3], 6: [1, 3, 4],
                7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2], 10: [1, 2, 3], 11: [1, 3, 4]}
    leaders = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 0, 6: 1, 7: 2, 8: 3, 9: 4, 10: 1, 11: 1}
    _register(zk_client, {b: None for b in range(5)})
    admin = AdminZkClient(zk_client, random.Random(0))
    admin.create_topic_with_assignment("test", {}, expected)
    # TestUtils#makeLeaderForPartition.
    zk_client.create_topic_partition_states({
        TopicPartition("test", p): LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 1, (leader,), 0, 0), 1)
        for p, leader in leaders.items()})
    stored = zk_client.get_replica_assignment_for_topics(["test"])
    assert len(stored) == 12
    assert {tp.partition: list(r) for tp, r in stored.items()} == expected
    assert {p: zk_client.get_leader_for_partition(TopicPartition("test", p)) for p in leaders} == leaders
    with pytest.raises(TopicExistsException, match="^Topic 'test' already exists.$"):
        admin.create_topic_with_assignment("test", {}, expected)


def test_topic_creation_with_collision(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testTopicCreationWithCollision."""
    _register(zk_client, {b: None for b in range(5)})
    admin = AdminZkClient(zk_client, random.Random(0))
    admin.create_topic("test.topic", 3, 1)
    with pytest.raises(InvalidTopicException) as info:
        admin.create_topic("test_topic", 3, 1)
    assert str(info.value) == "Topic 'test_topic' collides with existing topics: test.topic"


def test_marked_deletion_topic_creation(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testMarkedDeletionTopicCreation (the deletion marker written for real)."""
    zk_client.create_delete_topic_path("test")
    with pytest.raises(TopicExistsException) as info:
        AdminZkClient(zk_client, random.Random(0)).validate_topic_create("test", {}, {})
    assert str(info.value) == "Topic 'test' is marked for deletion."


class _RacingZkClient:
    """AdminZkClientTest#testMockedConcurrentTopicCreation's mock: topicExists says no, but the topic
    list (read a moment later) already holds the topic."""

    def __init__(self, topic: str) -> None:
        self.topic = topic

    def is_topic_marked_for_deletion(self, topic: str) -> bool:
        return False

    def topic_exists(self, topic: str) -> bool:
        return False

    def get_all_topics_in_cluster(self) -> set[str]:
        return {"some.topic", self.topic, "some.other.topic"}


def test_mocked_concurrent_topic_creation() -> None:
    """Mirrors AdminZkClientTest#testMockedConcurrentTopicCreation: a name with collision characters that
    appears in the topic list is TopicExistsException, not a collision with itself."""
    admin = AdminZkClient(_RacingZkClient("test.topic"), random.Random(0))  # type: ignore[arg-type]
    with pytest.raises(TopicExistsException, match="^Topic 'test.topic' already exists.$"):
        admin.validate_topic_create("test.topic", {}, {})


def test_concurrent_topic_creation(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testConcurrentTopicCreation (the two creations in turn): the second is
    TopicExistsException; the topic has 3 partitions of one replica and its min.insync.replicas override."""
    _register(zk_client, {b: None for b in range(5)})
    admin = AdminZkClient(zk_client, random.Random(0))
    topic = "test-concurrent-topic-creation"
    props = {"min.insync.replicas": "2"}
    for attempt in range(2):
        try:
            admin.create_topic(topic, 3, 1, props)
        except TopicExistsException:
            assert attempt == 1
        assignment = zk_client.get_full_replica_assignment_for_topics([topic])
        assert len(assignment) == 3
        assert all(len(a.replicas) == 1 for a in assignment.values())
        assert zk_client.get_entity_configs(ConfigType.TOPIC, topic) == props


def test_get_broker_metadatas(zk_client: KafkaZkClient) -> None:
    """Mirrors AdminZkClientTest#testGetBrokerMetadatas: broker 4 has no rack."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack1", 5: "rack3"}
    _register(zk_client, {b: racks.get(b) for b in range(6)})
    admin = AdminZkClient(zk_client, random.Random(0))
    assert admin.get_broker_metadatas(RackAwareMode.DISABLED) == {b: None for b in range(6)}
    assert admin.get_broker_metadatas(RackAwareMode.SAFE) == {b: None for b in range(6)}
    with pytest.raises(AdminOperationException) as info:
        admin.get_broker_metadatas(RackAwareMode.ENFORCED)
    assert str(info.value) == ("Not all brokers have rack information. Add --disable-rack-aware in command line to "
                               "make replica assignment without rack information.")
    partial = [0, 1, 2, 3, 5]
    processed = admin.get_broker_metadatas(RackAwareMode.ENFORCED, partial)
    assert list(processed) == partial
    assert list(processed.values()) == [racks[b] for b in partial]
    admin.create_topic("foo", 3, 2, rack_aware_mode=RackAwareMode.SAFE)
    assert len(zk_client.get_replica_assignment_for_topics(["foo"])) == 3
    # The default (Enforced) refuses the mixed cluster.
    with pytest.raises(AdminOperationException):
        admin.create_topic("bar", 3, 2)


@pytest.mark.anyio
async def test_topic_config_change() -> None:
    """Mirrors AdminZkClientTest#testTopicConfigChange (without the quota manager): overrides given at
    creation, changed, read back from ZooKeeper, removed and restored reach every log of the topic;
    the throttled-replica lists parse as lists and "" is the empty list."""
    partitions, topic = 3, "my-topic"

    def make_config(message_size: int, retention_ms: int, leaders: str, followers: str) -> dict[str, str]:
        return {"max.message.bytes": str(message_size), "retention.ms": str(retention_ms),
                "leader.replication.throttled.replicas": leaders, "follower.replication.throttled.replicas": followers}

    async with Cluster(brokers=1, metadata_mode="zk", seed=7) as cluster:
        broker = cluster.broker(0)
        admin = broker.admin_manager.admin_zk_client

        async def check(message_size: int, retention_ms: int, leaders: str, followers: str) -> None:
            def applied() -> bool:
                logs = [broker.log_manager.get_log(TopicPartition(topic, p)) for p in range(partitions)]
                config = broker.log_manager.fetch_log_config(topic)
                return (all(log is not None and log.max_message_bytes == message_size and log.retention_ms == retention_ms
                            for log in logs)
                        and config.get("leader.replication.throttled.replicas") == ([] if not leaders else leaders.split(","))
                        and config.get("follower.replication.throttled.replicas") == ([] if not followers else followers.split(",")))

            await cluster.wait_until(applied, message=f"{topic} config {message_size} {retention_ms} {leaders} {followers}")

        max_message_size, retention_ms = 1024, 1000 * 1000
        admin.create_topic(topic, partitions, 1, make_config(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1"))
        await check(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1")
        admin.change_topic_config(topic, make_config(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1"))
        await check(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1")
        new_config = make_config(2 * max_message_size, 2 * retention_ms, "*", "*")
        admin.change_topic_config(topic, new_config)
        await check(2 * max_message_size, 2 * retention_ms, "*", "*")
        assert admin.fetch_entity_config(ConfigType.TOPIC, topic) == new_config
        # No overrides: the defaults.
        admin.change_topic_config(topic, {})
        await check(1048588, 604800000, "", "")
        admin.change_topic_config(topic, make_config(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1"))
        await check(max_message_size, retention_ms, "0:0,1:0,2:0", "0:1,1:1,2:1")
        # "" for both lists clears them (the other overrides are gone too: the whole set is replaced).
        admin.change_topic_config(topic, {"follower.replication.throttled.replicas": "",
                                          "leader.replication.throttled.replicas": ""})
        await check(1048588, 604800000, "", "")


# ------------------------------------------------------------------ StripedReplicaPlacerTest (KRaft placement)


class JavaMockRandom(random.Random):
    """org.apache.kafka.server.util.MockRandom under java.util.Random#nextInt(bound): the draws
    StripedReplicaPlacer makes (randrange and shuffle both go through ``_randbelow``, and Python's
    shuffle swaps as Collections#shuffle does), so the placements are Kafka's exactly."""

    def __init__(self, state: int = 17) -> None:
        super().__init__(0)
        self.state = state

    def _next(self, bits: int) -> int:
        # MockRandom#next: a 64-bit LCG, the top ``bits`` bits.
        self.state = (self.state * 2862933555777941757 + 3037000493) & (2**64 - 1)
        return self.state >> (64 - bits)

    def _randbelow(self, bound: int) -> int:  # type: ignore[override]
        # Random#nextInt(bound): power-of-two bounds scale, others reject the biased tail.
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        r = u % bound
        while u - r + m > 2**31 - 1:
            u = self._next(31)
            r = u % bound
        return r


def _usable(*brokers: tuple[int, str | None, bool]):
    from kafka_ref.controller.quorum.replica_placer import UsableBroker

    return [UsableBroker(b, rack, fenced) for b, rack, fenced in brokers]


def test_striped_broker_list() -> None:
    """Mirrors StripedReplicaPlacerTest#testBrokerList."""
    from kafka_ref.controller.quorum.replica_placer import BrokerList

    assert BrokerList().next(1) == -1
    brokers = BrokerList()
    brokers.brokers.extend([0, 1, 2, 3])
    assert [brokers.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [brokers.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]


def test_avoid_fenced_replica_if_possible_on_single_rack() -> None:
    """Mirrors StripedReplicaPlacerTest#testAvoidFencedReplicaIfPossibleOnSingleRack."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    rack_list = RackList(JavaMockRandom(), _usable((3, None, False), (1, None, True), (0, None, False),
                                                   (4, None, False), (2, None, False)))
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers, rack_list.rack_names) == (5, 4, [None])
    for factor in (0, -1):
        with pytest.raises(InvalidReplicationFactorException):
            rack_list.place(factor)
    assert [rack_list.place(4) for _ in range(5)] == [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0],
                                                      [0, 4, 3, 2]]


def test_multi_partition_topic_placement_on_single_unfenced_broker() -> None:
    """Mirrors StripedReplicaPlacerTest#testMultiPartitionTopicPlacementOnSingleUnfencedBroker."""
    from kafka_ref.controller.quorum.replica_placer import StripedReplicaPlacer

    placer = StripedReplicaPlacer(JavaMockRandom())
    assert placer.place(0, 3, 1, _usable((0, None, False), (1, None, True))) == [[0], [0], [0]]


def test_placement_on_fenced_replica_on_single_rack() -> None:
    """Mirrors StripedReplicaPlacerTest#testPlacementOnFencedReplicaOnSingleRack."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    rack_list = RackList(JavaMockRandom(), _usable((3, None, False), (1, None, True), (2, None, False)))
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers, rack_list.rack_names) == (3, 2, [None])
    assert [rack_list.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_rack_list_with_multiple_racks() -> None:
    """Mirrors StripedReplicaPlacerTest#testRackListWithMultipleRacks."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    rack_list = RackList(JavaMockRandom(), _usable((11, "1", False), (10, "1", False), (30, "3", False),
                                                   (31, "3", False), (21, "2", False), (20, "2", True)))
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers, rack_list.rack_names) == (6, 5, ["1", "2", "3"])
    assert [rack_list.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_rack_list_with_invalid_racks() -> None:
    """Mirrors StripedReplicaPlacerTest#testRackListWithInvalidRacks: racks 2 and 3 wholly fenced."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    rack_list = RackList(JavaMockRandom(), _usable((11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
                                                   (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True)))
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers, rack_list.rack_names) == (
        8, 3, ["1", "2", "3", "4"])
    assert [rack_list.place(4) for _ in range(3)] == [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


@pytest.mark.parametrize(("brokers", "factor", "message"), [
    (((11, "1", True), (10, "1", True)), 1, "All brokers are currently fenced."),
    (((11, "1", False), (10, "1", False)), 3,
     "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."),
    (((11, "1", False), (10, "1", False)), 0, "Invalid replication factor 0: the replication factor must be positive."),
], ids=["AllBrokersFenced", "NotEnoughBrokers", "NonPositiveReplicationFactor"])
def test_placer_refusals(brokers, factor: int, message: str) -> None:
    """Mirrors StripedReplicaPlacerTest#testAllBrokersFenced, #testNotEnoughBrokers and
    #testNonPositiveReplicationFactor."""
    from kafka_ref.controller.quorum.replica_placer import StripedReplicaPlacer

    with pytest.raises(InvalidReplicationFactorException) as info:
        StripedReplicaPlacer(JavaMockRandom()).place(0, 1, factor, _usable(*brokers))
    assert str(info.value) == message


def test_successful_placement() -> None:
    """Mirrors StripedReplicaPlacerTest#testSuccessfulPlacement."""
    from kafka_ref.controller.quorum.replica_placer import StripedReplicaPlacer

    placer = StripedReplicaPlacer(JavaMockRandom())
    assert placer.place(0, 5, 3, _usable((0, None, False), (3, None, False), (2, None, False), (1, None, False))) == [
        [2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_even_distribution() -> None:
    """Mirrors StripedReplicaPlacerTest#testEvenDistribution: 200 partitions of two replicas over four brokers."""
    from kafka_ref.controller.quorum.replica_placer import StripedReplicaPlacer

    placer = StripedReplicaPlacer(JavaMockRandom())
    placed = placer.place(0, 200, 2, _usable(*((b, None, False) for b in range(4))))
    counts = Counter(tuple(replicas) for replicas in placed)
    assert counts == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16, (2, 0): 13,
                      (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


@pytest.mark.parametrize(("brokers", "factor", "message"), [
    (((0, None, True), (1, None, True), (2, None, True)), 3, "All brokers are currently fenced."),
    (((11, "1", False), (10, "1", False)), 3,
     "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."),
    (((11, "1", False), (10, "1", False)), -1, "Invalid replication factor -1: the replication factor must be positive."),
], ids=["RackListAllBrokersFenced", "RackListNotEnoughBrokers", "RackListNonPositiveReplicationFactor"])
def test_rack_list_refusals(brokers, factor: int, message: str) -> None:
    """Mirrors StripedReplicaPlacerTest#testRackListAllBrokersFenced, #testRackListNotEnoughBrokers and
    #testRackListNonPositiveReplicationFactor."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    rack_list = RackList(JavaMockRandom(), _usable(*brokers))
    with pytest.raises(InvalidReplicationFactorException) as info:
        rack_list.place(factor)
    assert str(info.value) == message


def test_rack_list_checks_in_kafkas_order() -> None:
    """RackList#place checks the factor against the registered brokers before looking for an unfenced
    one (StripedReplicaPlacer#place checks the other way round)."""
    from kafka_ref.controller.quorum.replica_placer import RackList, StripedReplicaPlacer

    brokers = _usable((0, None, True), (1, None, True))
    with pytest.raises(InvalidReplicationFactorException, match="cannot be reached because only 2 broker"):
        RackList(JavaMockRandom(), brokers).place(3)
    with pytest.raises(InvalidReplicationFactorException, match="^All brokers are currently fenced.$"):
        StripedReplicaPlacer(JavaMockRandom()).place(0, 1, 3, brokers)


def test_racks_draw_their_offsets_in_hash_map_order() -> None:
    """StripedReplicaPlacer.RackList initializes its racks by walking a java.util.HashMap: rack "a"
    (hash bucket 1) draws its start offset before rack "b" (bucket 2) even when "b" registered first;
    then the rack list draws its own offset."""
    from kafka_ref.controller.quorum.replica_placer import RackList

    draws = JavaMockRandom(1)
    a_offset, b_offset, list_offset = draws._randbelow(2), draws._randbelow(3), draws._randbelow(2)
    swapped = JavaMockRandom(1)
    assert (swapped._randbelow(3), swapped._randbelow(2)) != (b_offset, a_offset)  # the order is observable
    rack_list = RackList(JavaMockRandom(1), _usable((5, "b", False), (6, "b", False), (7, "b", False),
                                                   (1, "a", False), (2, "a", False)))
    assert (rack_list.racks["a"].unfenced.offset, rack_list.racks["b"].unfenced.offset, rack_list.offset) == (
        a_offset, b_offset, list_offset)
