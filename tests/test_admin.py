"""Tests for kafka_ref.clients.admin against a tiny scripted broker pair (and one real cluster).

Mirrors, in spirit, clients/src/test/java/org/apache/kafka/clients/admin/KafkaAdminClientTest.java
(testCreateTopics, testCreateTopicsRetryBackoff, testCreateTopicsHandleNotControllerException,
testDeleteTopics, testDescribeCluster, testListOffsets): where Kafka uses a MockClient with
prepared responses, the brokers here are two nodes on the in-process network that answer
Metadata / CreateTopics / DeleteTopics from a script and record every request.
"""

from __future__ import annotations

import random
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.clients import (
    Admin,
    ClusterDescription,
    ListOffsetsResultInfo,
    NewTopic,
    Node,
    OffsetSpec,
    Producer,
    TopicDescription,
    TopicMetadataAndConfig,
    TopicPartitionInfo,
)
from kafka_ref.common.errors import (
    Errors,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TimeoutException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from kafka_ref.common.requests.delete_topics import (
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicState,
    DeleteTopicsResponse,
)
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import Envelope, Network, serve_inbox

TOPIC_ID = Uuid(0x1234, 0x5678)


@dataclass
class ScriptedBrokers:
    """Brokers 0 and 1: answer Metadata from ``topics``, CreateTopics/DeleteTopics only when controller.

    ``controller_id`` is what Metadata reports; ``actual_controller`` is who accepts
    CreateTopics/DeleteTopics (others answer NOT_CONTROLLER, after which Metadata reports the
    actual controller, as after a controller move). ``errors`` scripts per-topic errors.
    """

    controller_id: int = 1
    actual_controller: int = 1
    topics: dict[str, MetadataResponseTopic] = field(default_factory=dict)
    errors: dict[str, tuple[Errors, str | None]] = field(default_factory=dict)
    requests: list[tuple[int, Any]] = field(default_factory=list)

    def handle(self, broker_id: int, envelope: Envelope) -> None:
        request = envelope.request
        self.requests.append((broker_id, request))
        if isinstance(request, MetadataRequest):
            names = request.topic_names()
            envelope.respond(MetadataResponse(
                brokers=tuple(MetadataResponseBroker(node_id=b, host="localhost", port=9092 + b) for b in (0, 1)),
                cluster_id="scripted-cluster", controller_id=self.controller_id,
                topics=tuple(self.topics.get(n) or MetadataResponseTopic(error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, name=n)
                             for n in (names if names is not None else sorted(self.topics))),
            ))
        elif isinstance(request, CreateTopicsRequest):
            envelope.respond(CreateTopicsResponse(topics=tuple(self._create(broker_id, t) for t in request.topics)))
        elif isinstance(request, DeleteTopicsRequest):
            envelope.respond(DeleteTopicsResponse(responses=tuple(
                DeletableTopicResult(name=t.name, error_code=self._error(broker_id, t.name).code,
                                     error_message=self.errors.get(t.name, (None, None))[1])
                for t in request.topics)))
        else:
            envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))

    def _error(self, broker_id: int, name: str) -> Errors:
        if broker_id != self.actual_controller:
            self.controller_id = self.actual_controller
            return Errors.NOT_CONTROLLER
        return self.errors.get(name, (Errors.NONE, None))[0]

    def _create(self, broker_id: int, topic: CreatableTopic) -> CreatableTopicResult:
        error = self._error(broker_id, topic.name)
        if error is not Errors.NONE:
            return CreatableTopicResult(name=topic.name, error_code=error.code, error_message=self.errors.get(topic.name, (None, None))[1])
        partitions = topic.num_partitions if not topic.assignments else len(topic.assignments)
        factor = topic.replication_factor if not topic.assignments else len(topic.assignments[0].broker_ids)
        return CreatableTopicResult(
            name=topic.name, topic_id=TOPIC_ID, error_code=0, num_partitions=partitions, replication_factor=factor,
            configs=tuple(CreatableTopicConfigs(name=c.name, value=c.value) for c in topic.configs))


@asynccontextmanager
async def scripted_brokers(network: Network, brokers=(0, 1), **script: Any):
    scripted = ScriptedBrokers(**script)
    async with anyio.create_task_group() as tg:
        for broker in brokers:
            tg.start_soon(serve_inbox, network.register(broker), partial(scripted.handle, broker))
        yield scripted
        tg.cancel_scope.cancel()


def sent(scripted: ScriptedBrokers) -> list[tuple[int, str]]:
    return [(b, type(r).__name__) for b, r in scripted.requests]


# --------------------------------------------------------------------------------------------
# Tests against the scripted brokers
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_create_topics_goes_to_the_controller() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopics: Metadata from the bootstrap broker names the controller."""
    network = Network()
    async with scripted_brokers(network, controller_id=1) as scripted:
        admin = Admin(network, [0])
        result = await admin.create_topics([NewTopic("a", 3, 2, configs={"cleanup.policy": "compact"})])
    assert result == {"a": TopicMetadataAndConfig(TOPIC_ID, 3, 2, {"cleanup.policy": "compact"})}
    assert scripted.requests == [
        (0, MetadataRequest(topics=(), allow_auto_topic_creation=True)),
        (1, CreateTopicsRequest(topics=(CreatableTopic(
            name="a", num_partitions=3, replication_factor=2,
            configs=(CreateableTopicConfig(name="cleanup.policy", value="compact"),)),), timeout_ms=30000)),
    ]


@pytest.mark.anyio
async def test_create_topics_with_replica_assignment_and_validate_only() -> None:
    """Mirrors NewTopic#convertToCreatableTopic: an explicit assignment is sent with -1 counts."""
    network = Network()
    async with scripted_brokers(network) as scripted:
        admin = Admin(network, [0])
        result = await admin.create_topics([NewTopic("b", replica_assignment={1: [1, 0], 0: [0, 1]})], validate_only=True)
    assert result == {"b": TopicMetadataAndConfig(TOPIC_ID, 2, 2, {})}
    assert scripted.requests[-1] == (1, CreateTopicsRequest(topics=(CreatableTopic(
        name="b", num_partitions=-1, replication_factor=-1,
        assignments=(CreatableReplicaAssignment(partition_index=0, broker_ids=(0, 1)),
                     CreatableReplicaAssignment(partition_index=1, broker_ids=(1, 0))),),),
        timeout_ms=30000, validate_only=True))


@pytest.mark.anyio
async def test_not_controller_refreshes_metadata_and_retries() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsHandleNotControllerException."""
    network = Network()
    async with scripted_brokers(network, controller_id=0, actual_controller=1) as scripted:
        admin = Admin(network, [0])
        result = await admin.create_topics([NewTopic("a", 1, 1)])
    assert result == {"a": TopicMetadataAndConfig(TOPIC_ID, 1, 1, {})}
    assert sent(scripted) == [(0, "MetadataRequest"), (0, "CreateTopicsRequest"), (0, "MetadataRequest"), (1, "CreateTopicsRequest")]
    assert admin.metadata.fetch().controller_id == 1


@pytest.mark.anyio
async def test_per_topic_errors_raise_kafka_exceptions() -> None:
    """The first failed topic (in request order) raises its Kafka exception; the others were still sent."""
    network = Network()
    errors = {"exists": (Errors.TOPIC_ALREADY_EXISTS, "Topic 'exists' already exists."),
              "bad": (Errors.INVALID_REPLICATION_FACTOR, None)}
    async with scripted_brokers(network, errors=errors) as scripted:
        admin = Admin(network, [0])
        with pytest.raises(TopicExistsException, match=r"^Topic 'exists' already exists\.$"):
            await admin.create_topics([NewTopic("ok", 1, 1), NewTopic("exists", 1, 1), NewTopic("bad", 1, 5)])
        assert [t.name for t in scripted.requests[-1][1].topics] == ["ok", "exists", "bad"]
        with pytest.raises(InvalidReplicationFactorException) as info:
            await admin.create_topics([NewTopic("bad", 1, 5)])
        assert str(info.value) == Errors.INVALID_REPLICATION_FACTOR.message
        with pytest.raises(InvalidTopicException, match="cannot be represented in a request"):
            await admin.create_topics([NewTopic("", 1, 1)])


@pytest.mark.anyio
async def test_delete_topics() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopics: sent to the controller, errors per topic."""
    network = Network()
    errors = {"gone": (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)}
    async with scripted_brokers(network, errors=errors) as scripted:
        admin = Admin(network, [0])
        assert await admin.delete_topics(["a"]) is None
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.delete_topics(["a", "gone"])
    assert scripted.requests[1] == (1, DeleteTopicsRequest(topics=(DeleteTopicState(name="a"),), timeout_ms=30000))
    assert scripted.requests[-1] == (1, DeleteTopicsRequest(
        topics=(DeleteTopicState(name="a"), DeleteTopicState(name="gone")), timeout_ms=30000))


@pytest.mark.anyio
async def test_describe_topics_and_cluster() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeCluster and its describeTopics cases (both answered from Metadata)."""
    network = Network()
    topics = {"a": MetadataResponseTopic(name="a", topic_id=TOPIC_ID, partitions=(
        MetadataResponsePartition(partition_index=1, leader_id=-1, leader_epoch=3, replica_nodes=(0, 1), isr_nodes=(0,),
                                  error_code=Errors.LEADER_NOT_AVAILABLE.code),
        MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=2, replica_nodes=(1, 0), isr_nodes=(1, 0)),
    ))}
    async with scripted_brokers(network, topics=topics) as scripted:
        admin = Admin(network, [0])
        described = await admin.describe_topics(["a"])
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.describe_topics(["a", "missing"])
        cluster = await admin.describe_cluster()
    assert described == {"a": TopicDescription("a", TOPIC_ID, (
        TopicPartitionInfo(0, 1, (1, 0), (1, 0)), TopicPartitionInfo(1, None, (0, 1), (0,))))}
    assert scripted.requests[1] == (0, MetadataRequest.for_topics(["a"], allow_auto_topic_creation=False))
    assert cluster == ClusterDescription("scripted-cluster", Node(1, "localhost", 9093),
                                         (Node(0, "localhost", 9092), Node(1, "localhost", 9093)))


@pytest.mark.anyio
async def test_unreachable_controller_times_out() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsRetryBackoff: retries every retry.backoff.ms until the deadline."""
    network = Network()
    async with scripted_brokers(network, brokers=(0,), controller_id=1) as scripted:
        admin = Admin(network, [0], request_timeout_ms=300)
        with pytest.raises(TimeoutException, match=r"^Call\(callName=createTopics, deadlineMs=\d+, tries=\d+\) timed out"):
            await admin.create_topics([NewTopic("a", 1, 1)], timeout_ms=1000)
    # Broker 1 refuses every attempt at once; only Metadata reaches the live broker.
    assert {name for _, name in sent(scripted)} == {"MetadataRequest"}


# --------------------------------------------------------------------------------------------
# list_offsets against a real (manual-mode) cluster
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_list_offsets_on_a_cluster() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsets: leaders from Metadata, then ListOffsets per leader."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        topic_id = Uuid.random_uuid(random.Random(1))
        await cluster.update_metadata([UpdateMetadataPartitionState(
            topic_name="t", partition_index=0, controller_epoch=1, leader=2, leader_epoch=0, isr=(2, 0, 1),
            zk_version=0, replicas=(2, 0, 1))], {"t": topic_id})
        request = cluster.leader_and_isr_request([LeaderAndIsrPartitionState(
            topic_name="t", partition_index=0, controller_epoch=1, leader=2, leader_epoch=0, isr=(2, 0, 1),
            partition_epoch=0, replicas=(2, 0, 1), is_new=True)], {"t": topic_id})
        for broker in range(3):
            await cluster.send(broker, request)
        async with Producer(cluster.network, [0], linger_ms=5) as producer:
            base = 1_704_067_200_000
            for i in range(3):
                producer.send_nowait("t", b"v%d" % i, timestamp=base + 10 * i)
            await producer.flush()
        admin = Admin(cluster.network, [1])
        tp = TopicPartition("t", 0)
        assert await admin.list_offsets({tp: OffsetSpec.earliest()}) == {tp: ListOffsetsResultInfo(0, -1, 0)}
        assert await admin.list_offsets({tp: OffsetSpec.latest()}) == {tp: ListOffsetsResultInfo(3, -1, 0)}
        assert await admin.list_offsets({tp: OffsetSpec.for_timestamp(base + 15)}) == {tp: ListOffsetsResultInfo(2, base + 20, 0)}
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.list_offsets({TopicPartition("missing", 0): OffsetSpec.latest()})
        described = await admin.describe_topics(["t"])
        assert described["t"] == TopicDescription("t", topic_id, (TopicPartitionInfo(0, 2, (2, 0, 1), (2, 0, 1)),))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_describe_cluster_reports_the_cluster_id(mode: str) -> None:
    """Metadata v2+ carries the cluster id (KafkaServer#getOrGenerateClusterId in ZooKeeper mode: the
    first broker's proposal is stored in /cluster/id and every broker, restarted ones too, answers it)."""
    from kafka_ref.controller.quorum.quorum_controller import CLUSTER_ID

    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        async with Admin(cluster.network, [0, 1, 2]) as admin:
            first = (await admin.describe_cluster()).cluster_id
        ids = {cluster.broker(b).metadata_cache.get_topic_metadata([]).cluster_id for b in range(3)}
        await cluster.restart_broker(1)
        after = cluster.broker(1).metadata_cache.get_topic_metadata([]).cluster_id
    if mode == "kraft":
        assert first == CLUSTER_ID
    else:
        assert len(first) == 22  # a base64 Uuid, as CoreUtils#generateUuidAsBase64 makes
    assert ids == {first} and after == first
