"""Ports of Kafka 3.8.0's admin-client integration tests against kafka_ref's in-process cluster.

core/src/test/scala/integration/kafka/api/BaseAdminIntegrationTest.scala and
PlaintextAdminIntegrationTest.scala drive a real KafkaAdminClient against three brokers; here
``cluster.admin()`` (kafka_ref/clients/admin*.py) talks to a three-broker ``Cluster`` in virtual
time, in both metadata modes where Kafka runs both (its ``quorum`` parameter, "zk" and "kraft").
The harness's broker settings follow Kafka's (one partition and a replication factor of 1 by
default, auto leader rebalance off); Kafka's ``killBroker`` is a clean shutdown without controlled
shutdown (``controlled.shutdown.enable`` is false), ``cluster.shutdown_broker_uncontrolled`` here. kafka_ref's admin methods await the whole call and raise the
first failing key in request order (Kafka's ``*Result#all``), so an assertion on one key's future
becomes the exception that call raises.

Cases already covered elsewhere: testConsumerGroups' listing, alterConsumerGroupOffsets and
removeMembersFromConsumerGroup steps (tests/test_admin_groups.py), testIncrementalAlterConfigsForTopic
(tests/test_alter_configs.py), checkValidAlterConfigs / checkInvalidAlterConfigs on topics
(tests/test_alter_configs_legacy.py), the DeleteRecords low-watermark cases (tests/test_delete_records.py).

The IncrementalAlterConfigs cases that name topic configs kafka_ref's LogConfig gains with the
config-validation work (testValidIncrementalAlterConfigs, testAppendAlreadyExistsConfigsAndSubtractNotExistsConfigs,
testInvalidIncrementalAlterConfigs, testNullConfigs, testAppendConfigTo*) are in
tests/test_admin_integration_configs_kafka.py.

Not ported:
- BaseAdminIntegrationTest#testAuthorizedOperations, PlaintextAdminIntegrationTest#testAclOperations and
  the authorized-operations checks of testConsumerGroups: ACLs and includeAuthorizedOperations are not
  modelled (kafka_ref's authorizer is a deny list, with no ACL API).
- testAdminClientHandlingBadIPWithoutTimeout: no DNS or host resolution on the in-process network.
- testDescribeReplicaLogDirs, testAlterReplicaLogDirs, testAlterLogDirsAfterDeleteRecords, and the
  alterReplicaLogDirs step of testLongTopicNames: one log directory per broker (no JBOD, no
  AlterReplicaLogDirs / DescribeReplicaLogDirs).
- testDelayedClose, testForceClose, testCallInFlightTimeouts: the admin client runs each call in the
  caller's task (no background thread to close, no timeout-processor factory to inject failures).
- testIncrementalAlterConfigsDeleteAndSetBrokerConfigs, testIncrementalAlterConfigsDeleteBrokerConfigs,
  testCreateTopicsReturnsConfigs: dynamic broker configs (per broker and cluster default) are not
  modelled, nor the synonym-based config sources CreateTopics reports for static broker keys.
- testDescribeConfigsForLog4jLogLevels, testIncrementalAlterConfigsForLog4jLogLevels*,
  testAlterConfigsForLog4jLogLevelsDoesNotWork: no BROKER_LOGGER resources (no log4j loggers).
- testDescribeAndAlterConfigs' count of broker entries, listener security map and sensitive
  ssl.truststore.password: kafka_ref's broker config has no listener or SSL keys and no internal-key split.
- AdminClientWithPoliciesIntegrationTest#testInvalidAlterConfigsDueToPolicy: alter.config.policy.class.name
  (AlterConfigPolicy) is not modelled; its testValidAlterConfigs / testInvalidAlterConfigs run
  PlaintextAdminIntegrationTest#checkValidAlterConfigs / #checkInvalidAlterConfigs, ported in
  tests/test_alter_configs_legacy.py.
"""

from __future__ import annotations

import random

import anyio
import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients.admin import Admin, DeletedRecords, NewPartitions, NewTopic, RecordsToDelete
from kafka_ref.common.errors import (
    ElectionNotNeededException,
    EligibleLeadersNotAvailableException,
    GroupIdNotFoundException,
    GroupNotEmptyException,
    GroupSubscribedToTopicException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidTopicException,
    LeaderNotAvailableException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    PreferredLeaderNotAvailableException,
    TimeoutException,
    TopicExistsException,
    UnknownMemberIdException,
    UnknownTopicIdException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_ref.common.requests.delete_records import DeleteRecordsRequest
from kafka_ref.common.requests.elect_leaders import ElectionType
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.image.records import ConfigResource, ConfigResourceType

pytestmark = pytest.mark.anyio
MODES = ["zk", "kraft"]
# BaseAdminIntegrationTest#modifyConfigs (the rest are the harness defaults).
BASE_CONFIG = {"auto.leader.rebalance.enable": False, "controlled.shutdown.enable": False,
               "group.initial.rebalance.delay.ms": 0}


def _cluster(mode: str, **config) -> Cluster:
    return Cluster(brokers=3, metadata_mode=mode, config={**BASE_CONFIG, **config})


async def _wait_for_topics(cluster: Cluster, admin, present, missing) -> None:
    """BaseAdminIntegrationTest#waitForTopics: list topics until the present ones show and the missing ones do not."""
    with anyio.fail_after(60):
        while True:
            names = await admin.list_topics()
            if set(present) <= names and not set(missing) & names:
                return
            await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", MODES)
async def test_create_delete_topics(mode):
    """Mirrors BaseAdminIntegrationTest#testCreateDeleteTopics."""
    topics = ["mytopic", "mytopic2", "mytopic3"]
    new_topics = [NewTopic("mytopic", replica_assignment={0: [1, 2], 1: [2, 0]}),
                  NewTopic("mytopic2", 3, 3), NewTopic("mytopic3")]
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            # 1. validate_only answers what would be created and creates nothing.
            validated = await admin.create_topics(new_topics, validate_only=True)
            await _wait_for_topics(cluster, admin, [], topics)

            def check(result):
                assert [(result[t].num_partitions, result[t].replication_factor) for t in topics] == [(2, 2), (3, 3), (1, 1)]
                assert result["mytopic"].configs

            check(validated)
            # 2. Created for real: the ids are the brokers' ids.
            created = await admin.create_topics(new_topics)
            await _wait_for_topics(cluster, admin, topics, [])
            check(created)
            for topic in topics:
                assert created[topic].topic_id == cluster.topic_id(topic) != ZERO_UUID
            # 3. Again: TopicExistsException for each.
            for topic in new_topics:
                with pytest.raises(TopicExistsException):
                    await admin.create_topics([topic])
            # 4. Described.
            described = await admin.describe_topics(topics)
            assert set(described) == set(topics)
            topic0 = described["mytopic"]
            assert (topic0.internal, topic0.name, len(topic0.partitions)) == (False, "mytopic", 2)
            assert [(p.partition, p.leader, p.replicas, p.isr) for p in topic0.partitions] == [
                (0, 1, (1, 2), (1, 2)), (1, 2, (2, 0), (2, 0))]
            topic1 = described["mytopic2"]
            assert [p.partition for p in topic1.partitions] == [0, 1, 2]
            for p in topic1.partitions:
                assert sorted(p.replicas) == [0, 1, 2]
                assert p.isr == p.replicas
                assert p.leader in p.replicas
            topic3 = described["mytopic3"]
            assert (topic3.name, len(topic3.partitions), len(topic3.partitions[0].replicas)) == ("mytopic3", 1, 1)
            # 5. Deleted.
            await admin.delete_topics(topics)
            await _wait_for_topics(cluster, admin, [], topics)


async def _send_records(cluster: Cluster, count: int, tp: TopicPartition) -> None:
    """PlaintextAdminIntegrationTest#sendRecords: ``count`` records to one partition, every send acknowledged."""
    async with cluster.producer() as producer:
        for i in range(count):
            producer.send_nowait(tp.topic, str(i).encode(), key=str(i).encode(), partition=tp.partition)
        await producer.flush()


async def _subscribe_and_wait_for_assignment(consumer, topic: str) -> None:
    """PlaintextAdminIntegrationTest#subscribeAndWaitForAssignment."""
    consumer.subscribe([topic])
    with anyio.fail_after(60):
        while not consumer.assignment():
            await consumer.poll(100)


async def _leader(admin, tp: TopicPartition) -> int | None:
    return (await admin.describe_topics([tp.topic]))[tp.topic].partitions[tp.partition].leader


async def _assert_leader(admin, tp: TopicPartition, leader: int | None) -> None:
    """TestUtils#assertLeader / #assertNoLeader: wait until the admin client describes that leader."""
    with anyio.fail_after(60):
        while await _leader(admin, tp) != leader:
            await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", MODES)
async def test_create_topics_answers_configs_only_where_describable(mode):
    """Mirrors ControllerApisTest#testCreateTopics' "indescribable" topic (KafkaApis#handleCreateTopicsRequest in
    ZooKeeper mode): a created topic the principal may not DESCRIBE_CONFIGS is answered without configs or
    counts (nor, from a ZooKeeper broker, its id), TOPIC_AUTHORIZATION_FAILED as its topic config error;
    the describable one with all of them."""
    async with _cluster(mode) as cluster:
        # ZooKeeper: the broker decides; KRaft: the active controller, as the forwarded principal.
        authorizer = (cluster.broker(cluster.controller_id()).apis.authorizer if mode == "zk"
                      else cluster.active_controller().authorizer)
        authorizer.deny_topic("User:eve", "DESCRIBE_CONFIGS", "indescribable")
        request = CreateTopicsRequest(topics=tuple(CreatableTopic(name=n, num_partitions=2, replication_factor=3)
                                                   for n in ("baz", "indescribable")), timeout_ms=10000)
        target = cluster.controller_id() if mode == "zk" else 0
        response = await cluster.network.send("eve", target, request, 15000, principal="User:eve")
        baz, hidden = response.topics
        assert (baz.name, baz.error_code, baz.num_partitions, baz.replication_factor, baz.topic_config_error_code) == (
            "baz", 0, 2, 3, 0)
        assert {c.name: c.value for c in baz.configs}["cleanup.policy"] == "delete"
        assert (hidden.name, hidden.error_code, hidden.num_partitions, hidden.replication_factor,
                hidden.topic_config_error_code, hidden.configs) == (
            "indescribable", 0, -1, -1, Errors.TOPIC_AUTHORIZATION_FAILED.code, ())
        # The id: KRaft answers it; a ZooKeeper broker only for describable topics (ZkAdminManager#populateIds).
        assert cluster.topic_id("indescribable") != ZERO_UUID
        assert hidden.topic_id == (ZERO_UUID if mode == "zk" else cluster.topic_id("indescribable"))
        assert baz.topic_id == cluster.topic_id("baz")


@pytest.mark.parametrize("mode", MODES)
async def test_close(mode):
    """Mirrors PlaintextAdminIntegrationTest#testClose: a second close has no effect."""
    async with _cluster(mode) as cluster:
        admin = cluster.admin()
        admin.close()
        admin.close()


@pytest.mark.parametrize("mode", MODES)
async def test_minimum_request_timeouts(mode):
    """Mirrors PlaintextAdminIntegrationTest#testMinimumRequestTimeouts: bootstrapped from a broker that does
    not exist, with a request timeout of 0, a 2 ms call fails with TimeoutException, and not at once."""
    async with _cluster(mode) as cluster:
        admin = Admin(cluster.network, [99], request_timeout_ms=0, default_api_timeout_ms=40000)
        start = cluster.now_ms()
        with pytest.raises(TimeoutException):
            await admin.create_topics([NewTopic("mytopic", 1, 1), NewTopic("mytopic2", 1, 1)], timeout_ms=2)
        assert cluster.now_ms() > start


@pytest.mark.parametrize("mode", MODES)
async def test_create_existing_topics_throw_topic_exists_exception(mode):
    """Mirrors PlaintextAdminIntegrationTest#testCreateExistingTopicsThrowTopicExistsException."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic("mytopic", 1, 1)])
            await _wait_for_topics(cluster, admin, ["mytopic"], [])
            # An existing name wins over the bad replication factor, even when only validating.
            with pytest.raises(TopicExistsException):
                await admin.create_topics([NewTopic("mytopic", 1, 4)], validate_only=True)


@pytest.mark.parametrize("mode", MODES)
async def test_delete_topics_with_ids(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDeleteTopicsWithIds."""
    topics = ["mytopic", "mytopic2", "mytopic3"]
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic("mytopic", replica_assignment={0: [1, 2], 1: [2, 0]}),
                                       NewTopic("mytopic2", 3, 3), NewTopic("mytopic3")])
            await _wait_for_topics(cluster, admin, topics, [])
            await admin.delete_topics_by_ids([cluster.topic_id(t) for t in topics])
            await _wait_for_topics(cluster, admin, [], topics)


@pytest.mark.parametrize("mode", MODES)
async def test_describe_non_existing_topic(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeNonExistingTopic: describing does not create it."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic("existing-topic", 1, 1)])
            await _wait_for_topics(cluster, admin, ["existing-topic"], [])
            assert (await admin.describe_topics(["existing-topic"]))["existing-topic"].name == "existing-topic"
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.describe_topics(["non-existing", "existing-topic"])
            assert cluster.topic_assignment("non-existing") is None
            if mode == "zk":
                assert cluster.zookeeper.exists("/brokers/topics/non-existing") is None


@pytest.mark.parametrize("mode", MODES)
async def test_describe_topics_with_ids(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeTopicsWithIds: an unknown id is UnknownTopicIdException."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic("existing-topic", 1, 1)])
            await _wait_for_topics(cluster, admin, ["existing-topic"], [])
            await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.get_topic_id("existing-topic") != ZERO_UUID)
            existing = cluster.broker(0).metadata_cache.get_topic_id("existing-topic")
            missing = Uuid.random_uuid(random.Random(5))
            assert (await admin.describe_topics_by_ids([existing]))[existing].topic_id == existing
            assert (await admin.describe_topics_by_ids([existing]))[existing].name == "existing-topic"
            with pytest.raises(UnknownTopicIdException) as info:
                await admin.describe_topics_by_ids([existing, missing])
            assert str(info.value) == f"TopicId {missing} not found."


@pytest.mark.parametrize("mode", MODES)
async def test_describe_topics_with_names(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeTopicsWithNames: the id the brokers' metadata has."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic("existing-topic", 1, 1)])
            await _wait_for_topics(cluster, admin, ["existing-topic"], [])
            topic_id = cluster.broker(0).metadata_cache.get_topic_id("existing-topic")
            assert topic_id != ZERO_UUID
            assert (await admin.describe_topics(["existing-topic"]))["existing-topic"].topic_id == topic_id


@pytest.mark.parametrize("mode", MODES)
async def test_describe_cluster(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeCluster (and #testListNodes): the brokers' cluster
    id; ZooKeeper: the controller the brokers' metadata names; KRaft: one of the brokers (Kafka's
    brokers answer with a random live broker, the controller node not being one)."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            description = await admin.describe_cluster()
            assert description.cluster_id == cluster.broker(0).cluster_id is not None
            if mode == "zk":
                assert description.controller.id == cluster.broker(0).metadata_cache.controller_id == cluster.controller_id()
            else:
                assert description.controller.id in (0, 1, 2)
            assert [n.id for n in description.nodes] == [0, 1, 2]


@pytest.mark.parametrize("mode", MODES)
async def test_describe_log_dirs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeLogDirs: each broker lists the partitions it leads
    (ten partitions, one replica each) in its one log directory. Kafka's brokers measure their
    volumes; kafka_ref's disks have none, so total and usable bytes are unknown (None)."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic("topic", partitions=10)
        leaders = {p: cluster.leader_for("topic", p) for p in range(10)}
        async with cluster.admin() as admin:
            by_broker = await admin.describe_log_dirs([0, 1, 2])
        for broker_id in (0, 1, 2):
            dirs = by_broker[broker_id]
            assert list(dirs) == [f"/kafka-logs-{broker_id}"]
            [description] = dirs.values()
            assert description.error is None
            assert {tp.partition for tp in description.replica_infos if tp.topic == "topic"} == {
                p for p, leader in leaders.items() if leader == broker_id}
            assert (description.total_bytes, description.usable_bytes) == (None, None)


async def _partition_count(cluster: Cluster, admin, topic: str, expected: int) -> int:
    """BaseAdminIntegrationTest#getTopicMetadata with an expected count: describe until it shows, then the count."""
    with anyio.fail_after(60):
        while True:
            described = await admin.describe_topics([topic])
            if len(described[topic].partitions) == expected:
                return expected
            await anyio.sleep(0.1)


async def _wait_for_all_partitions_metadata(cluster: Cluster, topic: str, expected: int) -> None:
    """TestUtils#waitForAllPartitionsMetadata: every broker's metadata has exactly ``expected`` partitions with leaders."""
    def ready() -> bool:
        for b in cluster.live_broker_ids():
            cache = cluster.broker(b).metadata_cache
            if not all(cache.contains(TopicPartition(topic, p)) for p in range(expected)):
                return False
            if cache.contains(TopicPartition(topic, expected)):
                return False
        return True

    await cluster.wait_until(ready, 60000, message=f"{expected} partitions of {topic} everywhere")


@pytest.mark.parametrize("mode", MODES)
async def test_describe_and_alter_configs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeAndAlterConfigs (its describe half; the alter half,
    checkValidAlterConfigs, is tests/test_alter_configs_legacy.py): a topic's override is a
    dynamic topic config, a default is the default; each broker resource is answered by that
    broker, with its own id and the default compression type. Kafka's count of broker entries,
    listener map and sensitive truststore password are not modelled."""
    topic1, topic2 = "describe-alter-configs-topic-1", "describe-alter-configs-topic-2"
    resource1, resource2 = ConfigResource(ConfigResourceType.TOPIC, topic1), ConfigResource(ConfigResourceType.TOPIC, topic2)
    broker1, broker2 = ConfigResource(ConfigResourceType.BROKER, "1"), ConfigResource(ConfigResourceType.BROKER, "2")
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic1, config={"max.message.bytes": "500000", "retention.ms": "60000000"})
        await cluster.create_topic(topic2)
        async with cluster.admin() as admin:
            configs = await admin.describe_configs([resource1, resource2, broker1, broker2])
            assert list(configs) == [resource1, resource2, broker1, broker2]
            entry = configs[resource1]["max.message.bytes"]
            assert (entry.name, entry.value, entry.is_default, entry.is_sensitive, entry.is_read_only) == (
                "max.message.bytes", "500000", False, False, False)
            assert entry.source == "DYNAMIC_TOPIC_CONFIG"
            assert configs[resource1]["retention.ms"].value == "60000000"
            entry = configs[resource2]["max.message.bytes"]
            assert (entry.name, entry.value, entry.is_default, entry.is_sensitive, entry.is_read_only) == (
                "max.message.bytes", "1048588", True, False, False)
            assert configs[broker1]["broker.id"].value == "1"
            assert configs[broker2]["broker.id"].value == "2"
            entry = configs[broker1]["compression.type"]
            assert (entry.name, entry.value, entry.is_default, entry.is_sensitive, entry.is_read_only) == (
                "compression.type", "producer", True, False, False)


@pytest.mark.parametrize("mode", MODES)
async def test_create_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testCreatePartitions: validate-only and real increases, with
    and without assignments, then every refusal with its exact message (which differs between the
    ZooKeeper broker's AdminZkClient and the KRaft controller), a mixed answer, and a deleted topic."""
    kraft = mode == "kraft"
    topic1, topic2 = "create-partitions-topic-1", "create-partitions-topic-2"
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic1)
        await cluster.create_topic(topic2, replication_factor=2)
        async with cluster.admin() as admin:
            described = await admin.describe_topics([topic1, topic2])
            assert (len(described[topic1].partitions), len(described[topic2].partitions)) == (1, 1)
            # 1. Validate-only changes nothing; the real request adds two partitions.
            await admin.create_partitions({topic1: NewPartitions.increase_to(3)}, validate_only=True)
            await _wait_for_all_partitions_metadata(cluster, topic1, 1)
            await admin.create_partitions({topic1: NewPartitions.increase_to(3)})
            await _wait_for_all_partitions_metadata(cluster, topic1, 3)
            # 2. The same with assignments.
            assignments = [[0, 1], [1, 2]]
            await admin.create_partitions({topic2: NewPartitions.increase_to(3, assignments)}, validate_only=True)
            await _wait_for_all_partitions_metadata(cluster, topic2, 1)
            await admin.create_partitions({topic2: NewPartitions.increase_to(3, assignments)})
            await _partition_count(cluster, admin, topic2, 3)
            partitions = (await admin.describe_topics([topic2]))[topic2].partitions
            assert [p.replicas for p in partitions[1:]] == [(0, 1), (1, 2)]

            async def refused(new: NewPartitions, exc_type, message: str, topic: str = topic1, count: int = 3) -> None:
                with pytest.raises(exc_type) as info:
                    await admin.create_partitions({topic: new}, validate_only=validate_only)
                assert type(info.value) is exc_type
                assert str(info.value) == message
                if topic != unknown:
                    assert await _partition_count(cluster, admin, topic, count) == count

            unknown = "an-unknown-topic"
            # 3. Each refusal, validate-only and not.
            for validate_only in (True, False):
                await refused(NewPartitions.increase_to(1), InvalidPartitionsException,
                              f"The topic {topic1} currently has 3 partition(s); 1 would not be an increase." if kraft
                              else "Topic currently has 3 partitions, which is higher than the requested 1.")
                noop = "Topic already has 3 partition(s)." if kraft else "Topic already has 3 partitions."
                await refused(NewPartitions.increase_to(3), InvalidPartitionsException, noop, topic2)
                await refused(NewPartitions.increase_to(3, assignments), InvalidPartitionsException, noop, topic2)
                await refused(NewPartitions.increase_to(3, assignments[::-1]), InvalidPartitionsException, noop, topic2)
                await refused(NewPartitions.increase_to(2), UnknownTopicOrPartitionException,
                              Errors.UNKNOWN_TOPIC_OR_PARTITION.message if kraft
                              else "The topic 'an-unknown-topic' does not exist.", unknown)
                await refused(NewPartitions.increase_to(-22), InvalidPartitionsException,
                              f"The topic {topic1} currently has 3 partition(s); -22 would not be an increase." if kraft
                              else "Topic currently has 3 partitions, which is higher than the requested -22.")
                await refused(NewPartitions.increase_to(4, [[1, 2]]), InvalidReplicaAssignmentException,
                              "The manual partition assignment includes a partition with 2 replica(s), but this is not "
                              "consistent with previous partitions, which have 1 replica(s)." if kraft
                              else "Inconsistent replication factor between partitions, partition 0 has 1 while "
                                   "partitions [3] have replication factors [2], respectively.")
                await refused(NewPartitions.increase_to(6, [[1]]), InvalidReplicaAssignmentException,
                              "Attempted to add 3 additional partition(s), but only 1 assignment(s) were specified." if kraft
                              else "Increasing the number of partitions by 3 but 1 assignments provided.")
                await refused(NewPartitions.increase_to(4, [[1], [2]]), InvalidReplicaAssignmentException,
                              "Attempted to add 1 additional partition(s), but only 2 assignment(s) were specified." if kraft
                              else "Increasing the number of partitions by 1 but 2 assignments provided.")
                await refused(NewPartitions.increase_to(4, [[1, 1]]), InvalidReplicaAssignmentException,
                              "The manual partition assignment includes the broker 1 more than once." if kraft
                              else "Duplicate brokers not allowed in replica assignment: 1, 1 for partition id 3.")
                await refused(NewPartitions.increase_to(5, [[1], [1, 0]]), InvalidReplicaAssignmentException,
                              "The manual partition assignment includes a partition with 2 replica(s), but this is not "
                              "consistent with previous partitions, which have 1 replica(s)." if kraft
                              else "Inconsistent replication factor between partitions, partition 0 has 1 while "
                                   "partitions [4] have replication factors [2], respectively.")
                await refused(NewPartitions.increase_to(4, [[12]]), InvalidReplicaAssignmentException,
                              "The manual partition assignment includes broker 12, but no such broker is registered." if kraft
                              else "Unknown broker(s) in replica assignment: 12.")
                await refused(NewPartitions.increase_to(4, []), InvalidReplicaAssignmentException,
                              "Attempted to add 1 additional partition(s), but only 0 assignment(s) were specified." if kraft
                              else "Increasing the number of partitions by 1 but 0 assignments provided.")
            # 4. A mixed answer: topic1 grows to 4, topic2's decrease fails.
            with pytest.raises(InvalidPartitionsException) as info:
                await admin.create_partitions({topic1: NewPartitions.increase_to(4), topic2: NewPartitions.increase_to(2)})
            assert str(info.value) == (f"The topic {topic2} currently has 3 partition(s); 2 would not be an increase." if kraft
                                       else "Topic currently has 3 partitions, which is higher than the requested 2.")
            await _wait_for_all_partitions_metadata(cluster, topic1, 4)
            await _wait_for_all_partitions_metadata(cluster, topic2, 3)
            # 5. A deleted topic: ZooKeeper queues it (InvalidTopicException), KRaft removes it at once.
            await admin.delete_topics([topic1])
            expected = UnknownTopicOrPartitionException if kraft else InvalidTopicException
            with pytest.raises(expected) as info:
                await admin.create_partitions({topic1: NewPartitions.increase_to(4)}, validate_only=True)
            assert str(info.value) == (Errors.UNKNOWN_TOPIC_OR_PARTITION.message if kraft
                                       else "The topic is queued for deletion.")


TOPIC = "topic"
TP = TopicPartition(TOPIC, 0)


@pytest.mark.parametrize("mode", MODES)
async def test_seek_after_delete_records(mode):
    """Mirrors PlaintextAdminIntegrationTest#testSeekAfterDeleteRecords: seeking to the beginning lands on
    the new log start offset; -1 deletes up to the high watermark."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        async with cluster.admin() as admin, cluster.consumer(group_id="group") as consumer:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
            await _send_records(cluster, 10, TP)
            consumer.seek_to_beginning([TP])
            assert await consumer.position(TP) == 0
            assert await admin.delete_records({TP: RecordsToDelete.before(5)}) == {TP: DeletedRecords(5)}
            consumer.seek_to_beginning([TP])
            assert await consumer.position(TP) == 5
            consumer.seek(TP, 7)
            assert await consumer.position(TP) == 7
            await admin.delete_records({TP: RecordsToDelete.before(DeleteRecordsRequest.HIGH_WATERMARK)})
            consumer.seek_to_beginning([TP])
            assert await consumer.position(TP) == 10


@pytest.mark.parametrize("mode", MODES)
async def test_log_start_offset_checkpoint(mode):
    """Mirrors PlaintextAdminIntegrationTest#testLogStartOffsetCheckpoint: every broker restarted, the
    log start offset (5) survives, seen as the low watermark of a DeleteRecords before offset 0."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        async with cluster.consumer(group_id="group") as consumer:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
        await _send_records(cluster, 10, TP)
        async with cluster.admin() as admin:
            assert await admin.delete_records({TP: RecordsToDelete.before(5)}) == {TP: DeletedRecords(5)}
        for b in (0, 1, 2):
            cluster.shutdown_broker_uncontrolled(b)
        for b in (0, 1, 2):
            await cluster.restart_broker(b)
        async with cluster.admin() as admin:
            with anyio.fail_after(120):
                while True:
                    try:
                        low = (await admin.delete_records({TP: RecordsToDelete.before(0)}))[TP].low_watermark
                    except (LeaderNotAvailableException, NotLeaderOrFollowerException):
                        await anyio.sleep(0.1)
                        continue
                    if low == 5:
                        break
                    await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", MODES)
async def test_log_start_offset_after_delete_records(mode):
    """Mirrors PlaintextAdminIntegrationTest#testLogStartOffsetAfterDeleteRecords: every replica starts at 3."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        async with cluster.admin() as admin, cluster.consumer(group_id="group") as consumer:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
            await _send_records(cluster, 10, TP)
            assert await admin.delete_records({TP: RecordsToDelete.before(3)}) == {TP: DeletedRecords(3)}
        assert [cluster.replica_state(b, TOPIC, 0).log_start_offset for b in (0, 1, 2)] == [3, 3, 3]


@pytest.mark.parametrize("mode", MODES)
async def test_replica_can_fetch_from_log_start_offset_after_delete_records(mode):
    """Mirrors PlaintextAdminIntegrationTest#testReplicaCanFetchFromLogStartOffsetAfterDeleteRecords: a
    follower down during the delete restarts at the leader's log start offset and catches up, also
    when the new log start offset lies beyond its own log end offset."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, replication_factor=3)
        follower = 0 if cluster.leader_for(TOPIC, 0) != 0 else 1

        async def wait_for_follower_log(start: int, end: int) -> None:
            await cluster.wait_until(lambda: cluster.replica_state(follower, TOPIC, 0) is not None, 60000)
            await cluster.wait_until(lambda: cluster.replica_state(follower, TOPIC, 0).log_start_offset == start, 60000,
                                     message=f"follower log start {start}")
            await cluster.wait_until(lambda: cluster.replica_state(follower, TOPIC, 0).log_end_offset == end, 60000,
                                     message=f"follower log end {end}")

        cluster.shutdown_broker_uncontrolled(follower)
        async with cluster.admin() as admin:
            await _send_records(cluster, 100, TP)
            await admin.delete_records({TP: RecordsToDelete.before(3)})
            await cluster.restart_broker(follower)
            await wait_for_follower_log(3, 100)
            assert [cluster.replica_state(b, TOPIC, 0).log_start_offset for b in (0, 1, 2)] == [3, 3, 3]
            # Again, deleting beyond the stopped follower's log end offset.
            cluster.shutdown_broker_uncontrolled(follower)
            await _send_records(cluster, 100, TP)
            await admin.delete_records({TP: RecordsToDelete.before(117)})
            await cluster.restart_broker(follower)
            with anyio.fail_after(60):
                while follower not in (await admin.describe_topics([TOPIC]))[TOPIC].partitions[0].isr:
                    await anyio.sleep(0.1)
            await wait_for_follower_log(117, 200)


@pytest.mark.parametrize("mode", MODES)
async def test_offsets_for_times_after_delete_records(mode):
    """Mirrors PlaintextAdminIntegrationTest#testOffsetsForTimesAfterDeleteRecords: offsetsForTimes(0) follows
    the log start offset, and finds nothing once every record is deleted."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        async with cluster.admin() as admin, cluster.consumer(group_id="group") as consumer:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
            await _send_records(cluster, 10, TP)
            assert (await consumer.offsets_for_times({TP: 0}))[TP].offset == 0
            await admin.delete_records({TP: RecordsToDelete.before(5)})
            assert (await consumer.offsets_for_times({TP: 0}))[TP].offset == 5
            await admin.delete_records({TP: RecordsToDelete.before(DeleteRecordsRequest.HIGH_WATERMARK)})
            assert (await consumer.offsets_for_times({TP: 0}))[TP] is None


async def _consume_records(consumer, count: int) -> list:
    """TestUtils#consumeRecords: poll until exactly ``count`` records came back."""
    records: list = []
    with anyio.fail_after(60):
        while len(records) < count:
            records += await consumer.poll(100)
    assert len(records) == count
    return records


@pytest.mark.parametrize("mode", MODES)
async def test_consume_after_delete_records(mode):
    """Mirrors PlaintextAdminIntegrationTest#testConsumeAfterDeleteRecords: a seek below the log start offset
    resets to it (auto.offset.reset=earliest), so 7 and then 2 records remain to read."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC)
        async with cluster.consumer(group_id="group") as consumer, cluster.admin() as admin:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
            await _send_records(cluster, 10, TP)
            await _consume_records(consumer, 10)
            await admin.delete_records({TP: RecordsToDelete.before(3)})
            consumer.seek(TP, 1)
            assert [r.offset for r in await _consume_records(consumer, 7)] == list(range(3, 10))
            await admin.delete_records({TP: RecordsToDelete.before(8)})
            consumer.seek(TP, 1)
            assert [r.offset for r in await _consume_records(consumer, 2)] == [8, 9]


@pytest.mark.parametrize("mode", MODES)
async def test_delete_records_with_exception(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDeleteRecordsWithException: past the high watermark is
    OffsetOutOfRangeException."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC)
        async with cluster.consumer(group_id="group") as consumer, cluster.admin() as admin:
            await _subscribe_and_wait_for_assignment(consumer, TOPIC)
            await _send_records(cluster, 10, TP)
            assert (await admin.delete_records({TP: RecordsToDelete.before(5)}))[TP].low_watermark == 5
            with pytest.raises(OffsetOutOfRangeException) as info:
                await admin.delete_records({TP: RecordsToDelete.before(20)})
            assert type(info.value) is OffsetOutOfRangeException


@pytest.mark.parametrize("mode", MODES)
async def test_describe_configs_for_topic(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDescribeConfigsForTopic: an unknown topic and an invalid name."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        async with cluster.admin() as admin:
            assert (await admin.describe_topic_configs([TOPIC]))[TOPIC]["cleanup.policy"] == "delete"
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.describe_topic_configs(["unknown"])
            with pytest.raises(InvalidTopicException):
                await admin.describe_topic_configs(["(invalid topic)"])


@pytest.mark.parametrize("mode", MODES)
async def test_consumer_groups(mode):
    """Mirrors PlaintextAdminIntegrationTest#testConsumerGroups: a group of two static members and one
    dynamic member, each consuming its own topic and committing after every poll: listed (also by
    state), described beside a fake group (Dead, no members, no assignor), its offsets listed;
    removing an unknown instance fails; deleting it while it has members is GroupNotEmptyException
    (the fake group GroupIdNotFoundException); one static member removed, then every member; then
    the Empty group is deleted."""
    topics = ["test_topic", "test_topic1", "test_topic2"]
    group, client_id, fake = "test_group_id", "test_client_id", "fake_group_id"
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            assert await admin.list_consumer_groups() == []
            await admin.create_topics([NewTopic(t, 2, 1) for t in topics])
            await _wait_for_topics(cluster, admin, topics, [])
            async with cluster.producer() as producer:
                await producer.send("test_topic", None, partition=0)
            consumers = [cluster.consumer(group_id=group, client_id=client_id, group_instance_id=instance)
                         for instance in ("test_instance_id_1", "test_instance_id_2", None)]
            assigned = anyio.Event()

            async def consume(consumer, topic: str) -> None:
                # The consumer thread: poll, then commit what it consumed, until cancelled.
                consumer.subscribe([topic])
                while True:
                    await consumer.poll(5000)
                    if all(c.assignment() for c in consumers):
                        assigned.set()
                    await consumer.commit_sync()

            async with anyio.create_task_group() as tg:
                for consumer, topic in zip(consumers, topics):
                    tg.start_soon(consume, consumer, topic)
                with anyio.fail_after(30):
                    await assigned.wait()
                # 1. Listed, Stable; listed when asking for Stable, not when asking for Empty.
                with anyio.fail_after(60):
                    while [(g.group_id, g.state) for g in await admin.list_consumer_groups()] != [(group, "Stable")]:
                        await anyio.sleep(0.1)
                assert [g.group_id for g in await admin.list_consumer_groups(states=["Stable"])] == [group]
                assert await admin.list_consumer_groups(states=["Empty"]) == []
                # 2. Described, beside the fake group.
                described = await admin.describe_consumer_groups([group, fake])
                assert list(described) == [group, fake]
                real = described[group]
                assert (real.group_id, real.is_simple_consumer_group, len(real.members)) == (group, False, 3)
                assert {m.client_id for m in real.members} == {client_id}
                by_topic: dict[str, int] = {}
                for member in real.members:
                    for tp in member.assignment:
                        by_topic[tp.topic] = by_topic.get(tp.topic, 0) + 1
                assert by_topic == {t: 2 for t in topics}
                dead = described[fake]
                assert (dead.group_id, dead.members, dead.partition_assignor, dead.state) == (fake, (), "", "Dead")
                # 3. The committed offset of test_topic-0 reaches 1.
                t0 = TopicPartition("test_topic", 0)
                with anyio.fail_after(60):
                    while getattr((await admin.list_consumer_group_offsets(group)).get(t0), "offset", None) != 1:
                        await anyio.sleep(0.1)
                # 4. An unknown instance id.
                with pytest.raises(UnknownMemberIdException):
                    await admin.remove_members_from_consumer_group(group, ["invalid-instance-id"])
                # 5. Deleting: the fake group is not found, the real one is not empty.
                with pytest.raises(GroupIdNotFoundException):
                    await admin.delete_consumer_groups([fake])
                with pytest.raises(GroupNotEmptyException):
                    await admin.delete_consumer_groups([group])
                # 6. One static member removed; then all the others (a static and the dynamic one).
                await admin.remove_members_from_consumer_group(group, ["test_instance_id_1"])
                described = await admin.describe_consumer_groups([group])
                assert (described[group].group_id, described[group].is_simple_consumer_group,
                        len(described[group].members)) == (group, False, 2)
                # (Kafka stops its consumer threads only at the end; here they stop first, so none
                # rejoins in between, then every member is removed.)
                tg.cancel_scope.cancel()
            for consumer in consumers:
                consumer.close()
            await admin.remove_members_from_consumer_group(group)
            assert (await admin.describe_consumer_groups([group]))[group].members == ()
            # 7. The Empty group goes.
            await admin.delete_consumer_groups([group])
            assert (await admin.describe_consumer_groups([group]))[group].state == "Dead"


@pytest.mark.parametrize("mode", MODES)
async def test_delete_consumer_group_offsets(mode):
    """Mirrors PlaintextAdminIntegrationTest#testDeleteConsumerGroupOffsets: while the group consumes the
    topic its offset is GroupSubscribedToTopicException (an unknown topic's
    UnknownTopicOrPartitionException); a fake group is GroupIdNotFoundException; once the
    consumer left, the offset goes and only the unknown topic fails."""
    topic, group, fake = "test_topic", "test_group_id", "fake_group_id"
    tp1, tp2 = TopicPartition(topic, 0), TopicPartition("foo", 0)
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic(topic, 1, 1)])
            await _wait_for_topics(cluster, admin, [topic], [])
            async with cluster.producer() as producer:
                await producer.send(topic, None, partition=0)
            async with cluster.consumer(group_id=group, client_id="test_client_id", session_timeout_ms=45000,
                                        max_poll_interval_ms=2**31 - 1) as consumer:
                consumer.subscribe([topic])
                records = await consumer.poll(15000)
                assert len(records) == 1
                await consumer.commit_sync()
                # 1. While consuming: per partition, in request order.
                with pytest.raises(GroupSubscribedToTopicException):
                    await admin.delete_consumer_group_offsets(group, [tp1, tp2])
                with pytest.raises(UnknownTopicOrPartitionException):
                    await admin.delete_consumer_group_offsets(group, [tp2, tp1])
                # 2. The fake group.
                with pytest.raises(GroupIdNotFoundException):
                    await admin.delete_consumer_group_offsets(fake, [tp1, tp2])
            # 3. Empty group: tp1's offset goes, tp2 is unknown.
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.delete_consumer_group_offsets(group, [tp1, tp2])
            assert await admin.list_consumer_group_offsets(group) == {}


async def _wait_for_brokers_out_of_isr(admin, partitions, brokers) -> None:
    """TestUtils#waitForBrokersOutOfIsr: until no named partition lists the brokers in its ISR."""
    with anyio.fail_after(60):
        while True:
            described = await admin.describe_topics(sorted({tp.topic for tp in partitions}))
            if all(not set(brokers) & set(described[tp.topic].partitions[tp.partition].isr) for tp in partitions):
                return
            await anyio.sleep(0.1)


async def _wait_for_online_broker(admin, broker: int) -> None:
    """TestUtils#waitForOnlineBroker: until the cluster description lists the broker."""
    with anyio.fail_after(60):
        while broker not in [n.id for n in (await admin.describe_cluster()).nodes]:
            await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", MODES)
async def test_elect_preferred_leaders(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectPreferredLeaders: no-op elections
    (ElectionNotNeededException, or nothing listed for all partitions), elections after the preferred
    replica changed (by a reassignment reordering the replicas), an unknown partition, and a
    preferred leader that is down (PreferredLeaderNotAvailableException)."""
    kraft = mode == "kraft"
    prefer0, prefer1, prefer2 = [0, 1, 2], [1, 2, 0], [2, 0, 1]
    p1 = TopicPartition("elect-preferred-leaders-topic-1", 0)
    p2 = TopicPartition("elect-preferred-leaders-topic-2", 0)
    unknown = TopicPartition("topic-does-not-exist", 0)
    async with _cluster(mode) as cluster:
        await cluster.create_topic(p1.topic, replica_assignment={0: prefer0})
        await cluster.create_topic(p2.topic, replica_assignment={0: prefer0})
        async with cluster.admin() as admin:

            async def preferred_leader(tp: TopicPartition) -> int:
                return (await admin.describe_topics([tp.topic]))[tp.topic].partitions[tp.partition].replicas[0]

            async def change_preferred_leader(assignment: list[int]) -> None:
                # The replicas reordered by a reassignment; the leaders stay where they are.
                preferred = assignment[0]
                cache = cluster.broker(0).metadata_cache
                prior1, prior2 = (cache.get_partition_leader_endpoint(tp).id for tp in (p1, p2))
                moves = {tp: assignment for tp, prior in ((p1, prior1), (p2, prior2)) if prior != preferred}
                await admin.alter_partition_reassignments(moves)
                with anyio.fail_after(10):
                    while (await preferred_leader(p1), await preferred_leader(p2)) != (preferred, preferred):
                        await anyio.sleep(0.1)
                await _assert_leader(admin, p1, prior1)
                await _assert_leader(admin, p2, prior2)

            def assert_unknown(result) -> None:
                exc = result[unknown]
                assert type(exc) is UnknownTopicOrPartitionException
                assert str(exc) == (f"No such topic as {unknown.topic}" if kraft else "The partition does not exist.")

            def assert_preferred_leader_not_available(tp: TopicPartition, result) -> None:
                exc = result[tp]
                assert type(exc) is PreferredLeaderNotAvailableException
                assert (Errors.PREFERRED_LEADER_NOT_AVAILABLE.message if kraft else
                        f"Failed to elect leader for partition {tp} under strategy "
                        "PreferredReplicaPartitionLeaderElectionStrategy") in str(exc)

            await _assert_leader(admin, p1, 0)
            await _assert_leader(admin, p2, 0)
            # 1. No-op: ElectionNotNeededException; for all partitions, nothing listed.
            result = await admin.elect_leaders(ElectionType.PREFERRED, [p1])
            assert type(result[p1]) is ElectionNotNeededException
            await _assert_leader(admin, p1, 0)
            assert await admin.elect_leaders(ElectionType.PREFERRED, None) == {}
            await _assert_leader(admin, p1, 0)
            await _assert_leader(admin, p2, 0)
            # 2. Preferred leader 1: p1 elected by name, then p2 as the only one needing it.
            await change_preferred_leader(prefer1)
            assert await admin.elect_leaders(ElectionType.PREFERRED, [p1]) == {p1: None}
            await _assert_leader(admin, p1, 1)
            await _assert_leader(admin, p2, 0)
            assert await admin.elect_leaders(ElectionType.PREFERRED, None) == {p2: None}
            await _assert_leader(admin, p2, 1)
            # 3. An unknown partition.
            result = await admin.elect_leaders(ElectionType.PREFERRED, [unknown])
            assert list(result) == [unknown]
            assert_unknown(result)
            await _assert_leader(admin, p1, 1)
            await _assert_leader(admin, p2, 1)
            # 4. Preferred leader 2: a mixed answer, then p2.
            await change_preferred_leader(prefer2)
            result = await admin.elect_leaders(ElectionType.PREFERRED, [unknown, p1])
            assert set(result) == {unknown, p1}
            assert result[p1] is None
            await _assert_leader(admin, p1, 2)
            await _assert_leader(admin, p2, 1)
            assert_unknown(result)
            assert await admin.elect_leaders(ElectionType.PREFERRED, [p2]) == {p2: None}
            await _assert_leader(admin, p2, 2)
            # 5. Preferred leader 1, shut down.
            await change_preferred_leader(prefer1)
            cluster.shutdown_broker_uncontrolled(1)
            await _wait_for_brokers_out_of_isr(admin, [p1, p2], [1])
            result = await admin.elect_leaders(ElectionType.PREFERRED, [p1], timeout_ms=10000)
            assert list(result) == [p1]
            assert_preferred_leader_not_available(p1, result)
            await _assert_leader(admin, p1, 2)
            result = await admin.elect_leaders(ElectionType.PREFERRED, None, timeout_ms=10000)
            assert {p1, p2} <= set(result)
            assert_preferred_leader_not_available(p1, result)
            await _assert_leader(admin, p1, 2)
            assert_preferred_leader_not_available(p2, result)
            await _assert_leader(admin, p2, 2)


async def _unclean_setup(cluster: Cluster, admin, assignment: dict[int, list[int]]) -> list[TopicPartition]:
    await cluster.create_topic("unclean-test-topic-1", replica_assignment=assignment)
    partitions = [TopicPartition("unclean-test-topic-1", p) for p in sorted(assignment)]
    for tp in partitions:
        await _assert_leader(admin, tp, 1)
    return partitions


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_for_one_partition(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersForOnePartition: the out-of-sync replica
    (2) becomes leader once the last ISR member (1) is gone."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            [p1] = await _unclean_setup(cluster, admin, {0: [1, 2]})
            cluster.shutdown_broker_uncontrolled(2)
            await _wait_for_brokers_out_of_isr(admin, [p1], [2])
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, None)
            await cluster.restart_broker(2)
            await _wait_for_online_broker(admin, 2)
            assert await admin.elect_leaders(ElectionType.UNCLEAN, [p1]) == {p1: None}
            await _assert_leader(admin, p1, 2)


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_for_many_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersForManyPartitions."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            p1, p2 = await _unclean_setup(cluster, admin, {0: [1, 2], 1: [1, 2]})
            cluster.shutdown_broker_uncontrolled(2)
            await _wait_for_brokers_out_of_isr(admin, [p1, p2], [2])
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, None)
            await _assert_leader(admin, p2, None)
            await cluster.restart_broker(2)
            await _wait_for_online_broker(admin, 2)
            assert await admin.elect_leaders(ElectionType.UNCLEAN, [p1, p2]) == {p1: None, p2: None}
            await _assert_leader(admin, p1, 2)
            await _assert_leader(admin, p2, 2)


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_for_all_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersForAllPartitions: with no partitions
    named, only the leaderless one is elected (the other, led by broker 0, is not listed)."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            p1, p2 = await _unclean_setup(cluster, admin, {0: [1, 2], 1: [1, 0]})
            cluster.shutdown_broker_uncontrolled(2)
            await _wait_for_brokers_out_of_isr(admin, [p1], [2])
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, None)
            await _assert_leader(admin, p2, 0)
            await cluster.restart_broker(2)
            await _wait_for_online_broker(admin, 2)
            assert await admin.elect_leaders(ElectionType.UNCLEAN, None) == {p1: None}
            await _assert_leader(admin, p1, 2)
            await _assert_leader(admin, p2, 0)


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_for_unknown_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersForUnknownPartitions."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            await _unclean_setup(cluster, admin, {0: [1, 2]})
            unknown_partition = TopicPartition("unclean-test-topic-1", 1)
            unknown_topic = TopicPartition("unknown-topic", 0)
            result = await admin.elect_leaders(ElectionType.UNCLEAN, [unknown_partition, unknown_topic])
            assert type(result[unknown_partition]) is UnknownTopicOrPartitionException
            assert type(result[unknown_topic]) is UnknownTopicOrPartitionException


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_when_no_live_brokers(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersWhenNoLiveBrokers: no replica alive is
    EligibleLeadersNotAvailableException."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            [p1] = await _unclean_setup(cluster, admin, {0: [1, 2]})
            cluster.shutdown_broker_uncontrolled(2)
            await _wait_for_brokers_out_of_isr(admin, [p1], [2])
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, None)
            result = await admin.elect_leaders(ElectionType.UNCLEAN, [p1])
            assert type(result[p1]) is EligibleLeadersNotAvailableException


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_noop(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersNoop: a partition with a leader needs
    no unclean election."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            [p1] = await _unclean_setup(cluster, admin, {0: [1, 2]})
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, 2)
            await cluster.restart_broker(1)
            result = await admin.elect_leaders(ElectionType.UNCLEAN, [p1])
            assert type(result[p1]) is ElectionNotNeededException


@pytest.mark.parametrize("mode", MODES)
async def test_elect_unclean_leaders_and_noop(mode):
    """Mirrors PlaintextAdminIntegrationTest#testElectUncleanLeadersAndNoop: one partition elected, the
    other (led by broker 0) ElectionNotNeededException."""
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            p1, p2 = await _unclean_setup(cluster, admin, {0: [1, 2], 1: [1, 0]})
            cluster.shutdown_broker_uncontrolled(2)
            await _wait_for_brokers_out_of_isr(admin, [p1], [2])
            cluster.shutdown_broker_uncontrolled(1)
            await _assert_leader(admin, p1, None)
            await _assert_leader(admin, p2, 0)
            await cluster.restart_broker(2)
            await _wait_for_online_broker(admin, 2)
            result = await admin.elect_leaders(ElectionType.UNCLEAN, [p1, p2])
            assert result[p1] is None
            assert type(result[p2]) is ElectionNotNeededException
            await _assert_leader(admin, p1, 2)
            await _assert_leader(admin, p2, 0)


@pytest.mark.parametrize("mode", MODES)
async def test_list_reassignments_does_not_show_non_reassigning_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testListReassignmentsDoesNotShowNonReassigningPartitions."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic("list-reassignments-no-reassignments", replication_factor=3)
        tp = TopicPartition("list-reassignments-no-reassignments", 0)
        async with cluster.admin() as admin:
            assert await admin.list_partition_reassignments([tp]) == {}
            assert await admin.list_partition_reassignments() == {}


@pytest.mark.parametrize("mode", MODES)
async def test_list_reassignments_does_not_show_deleted_partitions(mode):
    """Mirrors PlaintextAdminIntegrationTest#testListReassignmentsDoesNotShowDeletedPartitions: a partition
    of a topic that does not exist is not listed."""
    async with _cluster(mode) as cluster:
        tp = TopicPartition("list-reassignments-no-reassignments", 0)
        async with cluster.admin() as admin:
            assert await admin.list_partition_reassignments([tp]) == {}
            assert await admin.list_partition_reassignments() == {}


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_alter_partition_reassignments(mode):
    """Mirrors PlaintextAdminIntegrationTest#testInvalidAlterPartitionReassignments: unknown partitions
    fail with UnknownTopicOrPartitionException; a replica on no broker, negative ids and a duplicate
    replica with InvalidReplicaAssignmentException."""
    topic = "alter-reassignments-topic-1"
    tp1, tp2, tp3 = (TopicPartition(topic, p) for p in range(3))
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic, partitions=4)
        async with cluster.admin() as admin:
            valid = [0, 1, 2]
            for missing in (TopicPartition("topicA", 0), TopicPartition(topic, 4)):
                with pytest.raises(UnknownTopicOrPartitionException):
                    await admin.alter_partition_reassignments({missing: valid, tp1: valid, tp2: valid, tp3: valid})
            for tp, bad in ((tp1, [0, 1, 2, 3]), (tp2, [-3, -2, -1]), (tp3, [0, 1, 1])):
                with pytest.raises(InvalidReplicaAssignmentException):
                    await admin.alter_partition_reassignments({tp: bad})


@pytest.mark.parametrize("mode", MODES)
async def test_long_topic_names(mode):
    """Mirrors PlaintextAdminIntegrationTest#testLongTopicNames (without its alterReplicaLogDirs step):
    249 characters is the longest valid name."""
    long_name, invalid_name = "x" * 249, "x" * 250
    async with _cluster(mode) as cluster:
        async with cluster.admin() as admin:
            with pytest.raises(InvalidTopicException):
                await admin.create_topics([NewTopic(invalid_name, 3, 3), NewTopic(long_name, 3, 3)])
            await _wait_for_topics(cluster, admin, [long_name], [invalid_name])
