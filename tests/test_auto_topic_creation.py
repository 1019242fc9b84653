"""Auto topic creation from Metadata requests (auto.create.topics.enable).

Mirrors kafka.server.AutoTopicCreationManagerTest and KafkaApisTest's testMetadataAutoTopicCreation*
(Kafka 3.7): the unit tests drive DefaultAutoTopicCreationManager with a stand-in admin manager, as
Kafka's do with mocks; the cluster tests send Metadata to a running cluster in both metadata modes,
and the producer writes to a topic nobody created (kafka.api.ProducerSendTest#testAutoCreateTopic; over
the wire with kafka-python in tests/test_wire_kafka_python.py).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.create_topics import CreatableTopicResult, CreateTopicsResponse
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.server.auto_topic_creation_manager import DefaultAutoTopicCreationManager


class StubZkAdminManager:
    """Stands in for ZkAdminManager (Kafka's tests mock it): answers every topic with ``error``
    (None: never calls back), and records the requests."""

    admin_zk_client = object()  # marks a ZooKeeper-mode admin manager

    def __init__(self, error: Errors | None) -> None:
        self.error = error
        self.requests: list[Any] = []

    def create_topics(self, request: Any, respond: Any) -> None:
        self.requests.append(request)
        if self.error is not None:
            respond(CreateTopicsResponse(topics=tuple(
                CreatableTopicResult(name=t.name, error_code=self.error.code) for t in request.topics)))


class StubForwardingManager:
    """Stands in for the forwarding channel: keeps the request and its callback."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, Any]] = []

    def create_topics(self, request: Any, respond: Any) -> None:
        self.sent.append((request, respond))


def stub_broker(admin_manager: Any, zk: bool, **config: Any) -> Any:
    group_manager = SimpleNamespace(config=SimpleNamespace(offsets_topic_segment_bytes=104857600))
    return SimpleNamespace(broker_id=0, config=KafkaConfig({"broker.id": 0, **config}), admin_manager=admin_manager,
                           controller=object() if zk else None,
                           group_coordinator=SimpleNamespace(group_manager=group_manager))


@pytest.mark.parametrize(("returned", "expected"), [
    (Errors.INVALID_REPLICATION_FACTOR, Errors.INVALID_REPLICATION_FACTOR),
    (Errors.TOPIC_ALREADY_EXISTS, Errors.LEADER_NOT_AVAILABLE),
    (Errors.REQUEST_TIMED_OUT, Errors.LEADER_NOT_AVAILABLE),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION),
])
@pytest.mark.parametrize("topic", ["topic", "__consumer_offsets"])
def test_error_with_creation_in_zk(returned, expected, topic):
    """Mirrors AutoTopicCreationManagerTest#testInvalidReplicationFactorForNonInternalTopics,
    #testTopicExistsErrorSwapForNonInternalTopics, #testRequestTimeoutErrorSwapForNonInternalTopics,
    #testUnknownTopicPartitionForNonIntervalTopic and their ConsumerOffsetsTopic variants: the admin
    manager's error comes back as the topic's Metadata error, TOPIC_ALREADY_EXISTS and
    REQUEST_TIMED_OUT (the zero timeout) swapped for LEADER_NOT_AVAILABLE."""
    admin = StubZkAdminManager(returned)
    manager = DefaultAutoTopicCreationManager(stub_broker(admin, zk=True))
    [response] = manager.create_topics([topic])
    assert (response.name, response.error_code, response.is_internal) == (topic, expected.code, topic == "__consumer_offsets")
    assert admin.requests[0].timeout_ms == 0
    assert manager.inflight_topics == set()


def test_create_topics_with_forwarding_disabled():
    """Mirrors AutoTopicCreationManagerTest#testCreateTopicsWithForwardingDisabled: ZooKeeper mode
    writes the topic itself with timeout 0 and the broker defaults; no answer from the admin
    manager is UNKNOWN_TOPIC_OR_PARTITION."""
    admin = StubZkAdminManager(None)
    manager = DefaultAutoTopicCreationManager(stub_broker(admin, zk=True, **{"num.partitions": 4,
                                                                           "default.replication.factor": 2}))
    [response] = manager.create_topics(["topic"])
    assert (response.error_code, response.is_internal) == (Errors.UNKNOWN_TOPIC_OR_PARTITION.code, False)
    [request] = admin.requests
    assert (request.timeout_ms, request.validate_only) == (0, False)
    assert [(t.name, t.num_partitions, t.replication_factor, t.configs) for t in request.topics] == [("topic", 4, 2, ())]


def test_create_non_internal_topic_forwarded_once():
    """Mirrors AutoTopicCreationManagerTest#testCreateNonInternalTopic: a KRaft broker sends one
    CreateTopics (timeout request.timeout.ms) to the controller and answers UNKNOWN_TOPIC_OR_PARTITION;
    asking again while it is in flight sends nothing more; the controller's answer clears it."""
    forwarding = StubForwardingManager()
    manager = DefaultAutoTopicCreationManager(stub_broker(forwarding, zk=False, **{"request.timeout.ms": 30000}))
    for _ in range(2):
        [response] = manager.create_topics(["topic"])
        assert (response.name, response.error_code) == ("topic", Errors.UNKNOWN_TOPIC_OR_PARTITION.code)
    [(request, respond)] = forwarding.sent
    assert request.timeout_ms == 30000
    assert [(t.name, t.num_partitions, t.replication_factor) for t in request.topics] == [("topic", 1, 1)]
    assert manager.inflight_topics == {"topic"}
    respond(CreateTopicsResponse(topics=(CreatableTopicResult(name="topic"),)))
    assert manager.inflight_topics == set()
    manager.create_topics(["topic"])
    assert len(forwarding.sent) == 2


def test_create_offset_topic_settings():
    """Mirrors AutoTopicCreationManagerTest#testCreateOffsetTopic: the group coordinator's topic is
    created with offsets.topic.num.partitions, offsets.topic.replication.factor and its compacted
    configs; it is internal."""
    forwarding = StubForwardingManager()
    manager = DefaultAutoTopicCreationManager(stub_broker(forwarding, zk=False, **{
        "offsets.topic.num.partitions": 7, "offsets.topic.replication.factor": 3}))
    [response] = manager.create_topics(["__consumer_offsets"])
    assert response.is_internal
    [topic] = forwarding.sent[0][0].topics
    assert (topic.num_partitions, topic.replication_factor) == (7, 3)
    assert {c.name: c.value for c in topic.configs} == {"cleanup.policy": "compact", "segment.bytes": "104857600",
                                                        "compression.type": "producer"}


def test_invalid_names_are_not_created():
    """DefaultAutoTopicCreationManager#filterCreatableTopics: Topic#validate refuses the name
    (INVALID_TOPIC_EXCEPTION) before anything is sent."""
    forwarding = StubForwardingManager()
    manager = DefaultAutoTopicCreationManager(stub_broker(forwarding, zk=False))
    responses = manager.create_topics(["bad/name", "..", "x" * 250, "ok.topic_1-2"])
    assert [(r.name, r.error_code) for r in responses] == [
        ("bad/name", Errors.INVALID_TOPIC_EXCEPTION.code), ("..", Errors.INVALID_TOPIC_EXCEPTION.code),
        ("x" * 250, Errors.INVALID_TOPIC_EXCEPTION.code), ("ok.topic_1-2", Errors.UNKNOWN_TOPIC_OR_PARTITION.code)]
    assert [t.name for t in forwarding.sent[0][0].topics] == ["ok.topic_1-2"]


async def _metadata(cluster: Cluster, broker: int, topics: list[str], allow: bool = True) -> dict[str, Any]:
    response = await cluster.send(broker, MetadataRequest.for_topics(topics, allow_auto_topic_creation=allow))
    return {t.name: t for t in response.topics}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_metadata_auto_topic_creation_for_non_internal_topic(mode):
    """Mirrors KafkaApisTest#testMetadataAutoTopicCreationForNonInternalTopic, on a running cluster:
    ZooKeeper mode answers LEADER_NOT_AVAILABLE (written, no leader yet), KRaft mode
    UNKNOWN_TOPIC_OR_PARTITION (sent to the controller); then the topic exists with num.partitions
    partitions of default.replication.factor replicas, and a known topic in the same request is
    answered first."""
    config = {"num.partitions": 3, "default.replication.factor": 2}
    async with Cluster(brokers=3, metadata_mode=mode, config=config) as cluster:
        await cluster.create_topic("known", partitions=1, replication_factor=1)
        response = await cluster.send(1, MetadataRequest.for_topics(["fresh", "known"]))
        assert [t.name for t in response.topics] == ["known", "fresh"]
        first = Errors.LEADER_NOT_AVAILABLE if mode == "zk" else Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert (response.topics[1].error_code, response.topics[1].is_internal, response.topics[1].partitions) == (
            first.code, False, ())
        await cluster.wait_until(lambda: all(cluster.leader_for("fresh", p) >= 0 for p in range(3)), timeout_ms=30000)
        fresh = (await _metadata(cluster, 1, ["fresh"]))["fresh"]
        assert fresh.error_code == Errors.NONE.code
        assert sorted(p.partition_index for p in fresh.partitions) == [0, 1, 2]
        assert {len(p.replica_nodes) for p in fresh.partitions} == {2}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_metadata_auto_topic_creation_disabled(mode):
    """Mirrors KafkaApisTest#testMetadataAutoTopicCreationDisabledForNonInternalTopic: with
    auto.create.topics.enable=false, or a request that does not allow it, the topic answers
    UNKNOWN_TOPIC_OR_PARTITION and is not created; a name no topic can have answers
    INVALID_TOPIC_EXCEPTION either way."""
    async with Cluster(brokers=1, metadata_mode=mode, config={"auto.create.topics.enable": False}) as cluster:
        answers = await _metadata(cluster, 0, ["nope", "bad/name"])
        assert answers["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        assert answers["bad/name"].error_code == Errors.INVALID_TOPIC_EXCEPTION.code
        await anyio.sleep(5)
        assert (await _metadata(cluster, 0, ["nope"]))["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
    async with Cluster(brokers=1, metadata_mode=mode) as cluster:
        answers = await _metadata(cluster, 0, ["nope"], allow=False)
        assert answers["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        await anyio.sleep(5)
        assert (await _metadata(cluster, 0, ["nope"], allow=False))["nope"].error_code == \
            Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        # An all-topics request never creates anything.
        response = await cluster.send(0, MetadataRequest.all_topics())
        assert [t.name for t in response.topics if not t.is_internal] == []


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_producer_auto_creates_topic(mode):
    """Mirrors kafka.api.ProducerSendTest#testAutoCreateTopic with the in-process producer: the
    first record to a topic nobody created lands at offset 0 once the topic is made."""
    async with Cluster(brokers=3, metadata_mode=mode, config={"default.replication.factor": 3}) as cluster:
        async with cluster.producer(acks=-1) as producer:
            metadata = await producer.send("auto", b"value", key=b"k")
        assert (metadata.topic, metadata.partition, metadata.offset) == ("auto", 0, 0)
        state = cluster.partition_state("auto", 0)
        assert sorted(state["replicas"]) == [0, 1, 2]
        assert state["leader"] in (0, 1, 2)



@pytest.mark.anyio
@pytest.mark.parametrize("allow", [True, False])
async def test_consumer_allow_auto_create_topics(allow):
    """The consumer's allow.auto.create.topics (KIP-361) decides whether its subscription's Metadata
    requests create the topic (Kafka's default: true)."""
    async with Cluster(brokers=1) as cluster:
        consumer = cluster.consumer(group_id="g", allow_auto_create_topics=allow)
        consumer.subscribe(["wanted"])
        for _ in range(10):
            await consumer.poll(200)
        assert (cluster.partition_state("wanted", 0) is not None) is allow
        consumer.close()
