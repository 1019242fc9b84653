"""CreateTopics and DeleteTopics on a running cluster, after Kafka 3.7's request tests.

Mirrors kafka.server.CreateTopicsRequestTest, DeleteTopicsRequestTest and the matching
KafkaApisTest cases (testCreateTopicsWithAuthorizer, testDeleteTopicsByIdAuthorization,
testDeleteTopicsByNameAuthorization): each request goes to a broker of an in-process cluster, as
the clients' requests go to Kafka's brokers, and the test asserts Kafka's error codes and
messages. ListOffsets, OffsetForLeaderEpoch and Metadata are in tests/test_kafka_apis_kafka.py.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kafka_ref import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreateableTopicConfig,
    CreateTopicsRequest,
)
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicState
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL

pytestmark = pytest.mark.anyio

BROKERS = 3
_RNG = random.Random(11)


def new_id() -> Uuid:
    return Uuid.random_uuid(_RNG)


async def send_at(cluster: Cluster, broker: int, request: Any, version: int | None = None,
                  principal: str = ANONYMOUS_PRINCIPAL, timeout_ms: int = 60000) -> Any:
    """A client request to ``broker``, read at wire ``version`` (None: the newest, as in process)."""
    envelope = cluster.network.post("client", broker, request, principal)
    envelope.api_version = version
    return await cluster.network.wait(envelope, timeout_ms)


def topic_req(name: str, num_partitions: int = 1, replication_factor: int = 1,
              assignment: dict[int, list[int]] | None = None, config: dict[str, str] | None = None) -> CreatableTopic:
    """AbstractCreateTopicsRequestTest#topicReq: with an assignment the counts are -1 unless given."""
    if assignment is not None and (num_partitions, replication_factor) == (1, 1):
        num_partitions = replication_factor = -1
    return CreatableTopic(
        name=name, num_partitions=num_partitions, replication_factor=replication_factor,
        assignments=tuple(CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(r))
                          for p, r in (assignment or {}).items()),
        configs=tuple(CreateableTopicConfig(name=k, value=v) for k, v in (config or {}).items()))


def topics_req(*topics: CreatableTopic, timeout_ms: int = 10000, validate_only: bool = False) -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=topics, timeout_ms=timeout_ms, validate_only=validate_only)


async def admin_broker(cluster: Cluster) -> int:
    """The broker an admin client would send to: the controller in ZooKeeper mode (any broker in KRaft)."""
    await cluster.wait_until(lambda: cluster.controller_id() is not None)
    return cluster.controller_id() if cluster.metadata_mode == "zk" else 0


async def topic_metadata(cluster: Cluster, broker: int, name: str) -> Any:
    response = await cluster.send(broker, MetadataRequest.for_topics([name], allow_auto_topic_creation=False))
    return response.topic(name)


async def validate_topic_exists(cluster: Cluster, name: str) -> None:
    """AbstractCreateTopicsRequestTest#validateTopicExists: every broker knows it, with a leader."""
    await cluster.wait_until(lambda: all(
        cluster.broker(b).metadata_cache.contains_topic(name) for b in cluster.live_broker_ids()), timeout_ms=30000)
    assert (await topic_metadata(cluster, 0, name)).error_code == Errors.NONE.code


async def error_create(cluster: Cluster, request: CreateTopicsRequest, expected: dict[str, tuple[Errors, str | None]],
                       check_message: bool = False) -> Any:
    """AbstractCreateTopicsRequestTest#validateErrorCreateTopicsRequests."""
    response = await send_at(cluster, await admin_broker(cluster), request)
    assert len(response.topics) == len(expected)
    by_name = {t.name: t for t in response.topics}
    for name, (error, message) in expected.items():
        assert (name, Errors.for_code(by_name[name].error_code)) == (name, error)
        if check_message:
            assert by_name[name].error_message == message
        if error is Errors.NONE and not request.validate_only:
            await validate_topic_exists(cluster, name)
        elif error is not Errors.NONE:
            assert (by_name[name].num_partitions, by_name[name].replication_factor) == (-1, -1)
    return response


# ------------------------------------------------------------------------------ CreateTopics


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_valid_create_topics_requests(mode: str) -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testValidCreateTopicsRequests: generated and
    manual assignments, several topics at once, broker defaults (-1) and validate-only (nothing is
    created; Metadata then knows no such topic)."""
    config = {"num.partitions": 1, "default.replication.factor": 1}
    async with Cluster(brokers=BROKERS, metadata_mode=mode, config=config, seed=5) as cluster:
        requests = [
            topics_req(topic_req("topic1")),
            topics_req(topic_req("topic2", replication_factor=3)),
            topics_req(topic_req("topic3", num_partitions=5, replication_factor=2, config={"min.insync.replicas": "2"})),
            topics_req(topic_req("topic4", assignment={0: [0]})),
            topics_req(topic_req("topic5", assignment={0: [0, 1], 1: [1, 0], 2: [1, 2]},
                                 config={"min.insync.replicas": "2"})),
            topics_req(topic_req("topic6"), topic_req("topic7", num_partitions=5, replication_factor=2),
                       topic_req("topic8", assignment={0: [0, 1], 1: [1, 0], 2: [1, 2]})),
            topics_req(topic_req("topic9"), topic_req("topic10", num_partitions=5, replication_factor=2),
                       topic_req("topic11", assignment={0: [0, 1], 1: [1, 0], 2: [1, 2]}), validate_only=True),
            topics_req(topic_req("topic12", replication_factor=-1, num_partitions=-1)),
            topics_req(topic_req("topic13", replication_factor=2, num_partitions=-1)),
            topics_req(topic_req("topic14", replication_factor=-1, num_partitions=2)),
        ]
        for request in requests:
            response = await send_at(cluster, await admin_broker(cluster), request)
            assert {t.name: t.error_code for t in response.topics} == {t.name: 0 for t in request.topics}
            for topic in request.topics:
                partitions = len(topic.assignments) or topic.num_partitions
                replication = len(topic.assignments[0].broker_ids) if topic.assignments else topic.replication_factor
                partitions = 1 if partitions == -1 else partitions
                replication = 1 if replication == -1 else replication
                if request.validate_only:
                    metadata = await topic_metadata(cluster, 0, topic.name)
                    assert (metadata.error_code, metadata.partitions) == (Errors.UNKNOWN_TOPIC_OR_PARTITION.code, ())
                    continue
                await validate_topic_exists(cluster, topic.name)
                for broker in cluster.live_broker_ids():
                    metadata = await topic_metadata(cluster, broker, topic.name)
                    assert (topic.name, len(metadata.partitions), len(metadata.partitions[0].replica_nodes)) == (
                        topic.name, partitions, replication)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_error_create_topics_requests(mode: str) -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testErrorCreateTopicsRequests: an existing topic
    is TOPIC_ALREADY_EXISTS ("Topic 'existing-topic' already exists."), -2 partitions
    INVALID_PARTITIONS, more replicas than brokers INVALID_REPLICATION_FACTOR, an unknown or
    invalid config INVALID_CONFIG, uneven replica lists INVALID_REPLICA_ASSIGNMENT; in one request
    each topic gets its own answer and the valid one is created. A failed topic reports -1
    partitions and replication factor."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        existing = "existing-topic"
        await cluster.create_topic(existing)
        await error_create(cluster, topics_req(topic_req(existing)),
                           {existing: (Errors.TOPIC_ALREADY_EXISTS, "Topic 'existing-topic' already exists.")},
                           check_message=True)
        cases = [
            (topic_req("error-partitions", num_partitions=-2), Errors.INVALID_PARTITIONS),
            (topic_req("error-replication", replication_factor=BROKERS + 1), Errors.INVALID_REPLICATION_FACTOR),
            (topic_req("error-config", config={"not.a.property": "error"}), Errors.INVALID_CONFIG),
            (topic_req("error-config-value", config={"message.format.version": "invalid-value"}), Errors.INVALID_CONFIG),
            (topic_req("error-assignment", assignment={0: [0, 1], 1: [0]}), Errors.INVALID_REPLICA_ASSIGNMENT),
        ]
        for topic, error in cases:
            await error_create(cluster, topics_req(topic), {topic.name: (error, None)})
        await error_create(cluster, topics_req(
            topic_req(existing), topic_req("partial-partitions", num_partitions=-2),
            topic_req("partial-replication", replication_factor=BROKERS + 1),
            topic_req("partial-assignment", assignment={0: [0, 1], 1: [0]}), topic_req("partial-none")), {
            existing: (Errors.TOPIC_ALREADY_EXISTS, None), "partial-partitions": (Errors.INVALID_PARTITIONS, None),
            "partial-replication": (Errors.INVALID_REPLICATION_FACTOR, None),
            "partial-assignment": (Errors.INVALID_REPLICA_ASSIGNMENT, None), "partial-none": (Errors.NONE, None)})
        await validate_topic_exists(cluster, "partial-none")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_invalid_create_topics_requests(mode: str) -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testInvalidCreateTopicsRequests: counts and an
    assignment together are INVALID_REQUEST, validate-only or not."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        for validate_only in (False, True):
            request = topics_req(topic_req("bad-args-topic", num_partitions=10, replication_factor=3,
                                           assignment={0: [0]}), validate_only=validate_only)
            await error_create(cluster, request, {"bad-args-topic": (Errors.INVALID_REQUEST, None)})


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_create_cluster_metadata_topic(mode: str) -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testCreateClusterMetadataTopic: nobody may create
    __cluster_metadata (TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        await error_create(cluster, topics_req(topic_req("__cluster_metadata")), {
            "__cluster_metadata": (Errors.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")}, check_message=True)


async def test_create_topics_not_controller() -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testNotController (ZooKeeper mode): a broker that
    is not the controller answers NOT_CONTROLLER."""
    async with Cluster(brokers=BROKERS, metadata_mode="zk", seed=5) as cluster:
        controller = await admin_broker(cluster)
        other = next(b for b in cluster.live_broker_ids() if b != controller)
        response = await send_at(cluster, other, topics_req(topic_req("topic1")))
        assert response.error_counts() == {Errors.NOT_CONTROLLER.code: 1}


async def test_create_topics_with_very_short_timeouts() -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testCreateTopicsWithVeryShortTimeouts (ZooKeeper
    mode): timeouts of 0 and -1 ms answer REQUEST_TIMED_OUT, and the topics are created all the same.
    (Kafka's 1 ms case is left out: in-process messages take no loop time, so the leaders are
    there within 1 ms and kafka_ref answers NONE.)"""
    async with Cluster(brokers=BROKERS, metadata_mode="zk", seed=5) as cluster:
        for name, timeout in (("error-timeout-zero", 0), ("error-timeout-negative", -1)):
            request = topics_req(topic_req(name, num_partitions=10, replication_factor=3), timeout_ms=timeout)
            response = await send_at(cluster, await admin_broker(cluster), request)
            assert [(t.name, t.error_code) for t in response.topics] == [(name, Errors.REQUEST_TIMED_OUT.code)]
        for name in ("error-timeout-zero", "error-timeout-negative"):
            await validate_topic_exists(cluster, name)


async def test_create_topics_request_result_fields() -> None:
    """Mirrors kafka.server.CreateTopicsRequestTest#testCreateTopicsRequestVersions at the newest
    version (ZooKeeper mode): the answer carries the partition count, the replication factor, the
    topic's configs (min.insync.replicas=2 among them) and a topic id."""
    async with Cluster(brokers=BROKERS, metadata_mode="zk", seed=5) as cluster:
        request = topics_req(topic_req("topic_7", config={"min.insync.replicas": "2"}))
        [result] = (await send_at(cluster, await admin_broker(cluster), request)).topics
        assert (result.name, result.error_code, result.num_partitions, result.replication_factor) == ("topic_7", 0, 1, 1)
        assert {c.name: c.value for c in result.configs}["min.insync.replicas"] == "2"
        assert result.topic_id != ZERO_UUID
        assert result.topic_id == cluster.broker(0).metadata_cache.get_topic_id("topic_7")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_create_topics_with_authorizer(mode: str) -> None:
    """Mirrors kafka.server.KafkaApisTest#testCreateTopicsWithAuthorizer and KafkaApis#handleCreateTopicsRequest:
    without CREATE on the cluster, a topic the principal may not CREATE is TOPIC_AUTHORIZATION_FAILED
    ("Authorization failed.") and is not created, the other one is; a topic named twice is
    INVALID_REQUEST ("Found multiple entries for this topic.") for each entry (KRaft's controller:
    once, "Duplicate topic name.", ControllerApis#createTopics)."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        admin = await admin_broker(cluster)
        authorizers = [cluster.broker(b).apis.authorizer for b in cluster.live_broker_ids()]
        if cluster.kraft is not None:
            authorizers.append(cluster.kraft.controller.authorizer)
        for authorizer in authorizers:
            authorizer.deny_cluster(ANONYMOUS_PRINCIPAL, "CREATE")
            authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "CREATE", "unauthorized-topic")
        response = await send_at(cluster, admin, topics_req(topic_req("authorized-topic"), topic_req("unauthorized-topic")))
        by_name = {t.name: t for t in response.topics}
        assert (by_name["authorized-topic"].error_code, by_name["unauthorized-topic"].error_code,
                by_name["unauthorized-topic"].error_message) == (0, Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                                                  "Authorization failed.")
        await validate_topic_exists(cluster, "authorized-topic")
        assert (await topic_metadata(cluster, 0, "unauthorized-topic")).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        response = await send_at(cluster, admin, topics_req(topic_req("twice"), topic_req("twice", num_partitions=2)))
        if mode == "zk":
            assert [(t.name, t.error_code, t.error_message) for t in response.topics] == [
                ("twice", Errors.INVALID_REQUEST.code, "Found multiple entries for this topic.")] * 2
        else:  # ControllerApis#createTopics answers a duplicated name once
            assert [(t.name, t.error_code, t.error_message) for t in response.topics] == [
                ("twice", Errors.INVALID_REQUEST.code, "Duplicate topic name.")]
        assert (await topic_metadata(cluster, 0, "twice")).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code


# ------------------------------------------------------------------------------ DeleteTopics


async def delete_at(cluster: Cluster, request: DeleteTopicsRequest, version: int | None = None,
                    broker: int | None = None, principal: str = ANONYMOUS_PRINCIPAL) -> Any:
    target = await admin_broker(cluster) if broker is None else broker
    return await send_at(cluster, target, request, version, principal)


async def wait_deleted(cluster: Cluster, name: str) -> None:
    """DeleteTopicsRequestTest#validateTopicIsDeleted: no broker answers Metadata for it with NONE."""
    await cluster.wait_until(lambda: not any(cluster.broker(b).metadata_cache.contains_topic(name)
                                             for b in cluster.live_broker_ids()), timeout_ms=60000, message=name)
    assert (await topic_metadata(cluster, 0, name)).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_valid_delete_topic_requests(mode: str) -> None:
    """Mirrors kafka.server.DeleteTopicsRequestTest#testValidDeleteTopicRequests: one topic, two
    topics, and two topics by id (the answer names them); no errors, and the topics are gone."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        await cluster.create_topic("topic-1")
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["topic-1"], 10000))
        assert response.error_counts() == {0: 1}
        await wait_deleted(cluster, "topic-1")
        await cluster.create_topic("topic-3", partitions=5, replication_factor=2)
        await cluster.create_topic("topic-4", partitions=1, replication_factor=2)
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["topic-3", "topic-4"], 10000))
        assert response.error_counts() == {0: 2}
        for name in ("topic-3", "topic-4"):
            await wait_deleted(cluster, name)
        await cluster.create_topic("topic-7", partitions=3, replication_factor=2)
        await cluster.create_topic("topic-6", partitions=1, replication_factor=2)
        ids = {n: cluster.broker(0).metadata_cache.get_topic_id(n) for n in ("topic-7", "topic-6")}
        request = DeleteTopicsRequest(topics=tuple(DeleteTopicState(topic_id=ids[n]) for n in ("topic-7", "topic-6")),
                                      timeout_ms=10000)
        response = await delete_at(cluster, request)
        assert [(r.name, r.topic_id, r.error_code) for r in response.responses] == [
            ("topic-7", ids["topic-7"], 0), ("topic-6", ids["topic-6"], 0)]
        for name in ("topic-7", "topic-6"):
            await wait_deleted(cluster, name)


async def test_error_delete_topic_requests() -> None:
    """Mirrors kafka.server.DeleteTopicsRequestTest#testErrorDeleteTopicRequests (ZooKeeper mode): an
    unknown name is UNKNOWN_TOPIC_OR_PARTITION, alone or beside a topic that is deleted; an unknown
    id UNKNOWN_TOPIC_ID beside a known one; a zero timeout REQUEST_TIMED_OUT while the topic is
    still deleted."""
    async with Cluster(brokers=BROKERS, metadata_mode="zk", seed=5) as cluster:
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["invalid-topic"], 30000))
        assert response.topic_errors() == {"invalid-topic": Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        await cluster.create_topic("partial-topic-1")
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(
            ["partial-topic-1", "partial-invalid-topic"], 30000))
        assert response.topic_errors() == {"partial-topic-1": 0,
                                           "partial-invalid-topic": Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        await wait_deleted(cluster, "partial-topic-1")
        await cluster.create_topic("topic-id-1")
        valid, invalid = cluster.broker(0).metadata_cache.get_topic_id("topic-id-1"), new_id()
        response = await delete_at(cluster, DeleteTopicsRequest(
            topics=(DeleteTopicState(topic_id=invalid), DeleteTopicState(topic_id=valid)), timeout_ms=30000))
        assert {r.topic_id: (r.name, r.error_code) for r in response.responses} == {
            invalid: (None, Errors.UNKNOWN_TOPIC_ID.code), valid: ("topic-id-1", 0)}
        await wait_deleted(cluster, "topic-id-1")
        await cluster.create_topic("invalid-timeout", partitions=5, replication_factor=2)
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["invalid-timeout"], 0))
        assert response.topic_errors() == {"invalid-timeout": Errors.REQUEST_TIMED_OUT.code}
        await wait_deleted(cluster, "invalid-timeout")


async def test_delete_topics_not_controller() -> None:
    """Mirrors kafka.server.DeleteTopicsRequestTest#testNotController (ZooKeeper mode)."""
    async with Cluster(brokers=BROKERS, metadata_mode="zk", seed=5) as cluster:
        controller = await admin_broker(cluster)
        other = next(b for b in cluster.live_broker_ids() if b != controller)
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["not-controller"], 1000), broker=other)
        assert response.topic_errors() == {"not-controller": Errors.NOT_CONTROLLER.code}


def deleting_authorizers(cluster: Cluster) -> list[Any]:
    """The authorizers DeleteTopics meets: every broker's, and in KRaft mode the controller's, where
    DELETE on the cluster would allow every topic (ControllerApis#deleteTopics), so it is denied."""
    authorizers = [cluster.broker(b).apis.authorizer for b in cluster.live_broker_ids()]
    if cluster.kraft is not None:
        cluster.kraft.controller.authorizer.deny_cluster(ANONYMOUS_PRINCIPAL, "DELETE")
        authorizers.append(cluster.kraft.controller.authorizer)
    return authorizers


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_topics_by_id_authorization(mode: str) -> None:
    """Mirrors kafka.server.KafkaApisTest#testDeleteTopicsByIdAuthorization (and in KRaft mode
    ControllerApis#deleteTopics): by id, a topic the principal may not DESCRIBE is
    TOPIC_AUTHORIZATION_FAILED with no name, one it may describe but not DELETE is
    TOPIC_AUTHORIZATION_FAILED with its name, an id no topic has UNKNOWN_TOPIC_ID with no name.
    Nothing is deleted."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        for name in ("foo", "bar"):
            await cluster.create_topic(name)
        for authorizer in deleting_authorizers(cluster):
            authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", "foo")
            for name in ("foo", "bar"):
                authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DELETE", name)
        ids = {n: cluster.broker(0).metadata_cache.get_topic_id(n) for n in ("foo", "bar")}
        missing = new_id()
        request = DeleteTopicsRequest(topics=(DeleteTopicState(topic_id=ids["foo"]), DeleteTopicState(topic_id=ids["bar"]),
                                              DeleteTopicState(topic_id=missing)), timeout_ms=10000)
        response = await delete_at(cluster, request)
        assert {r.topic_id: (r.name, Errors.for_code(r.error_code)) for r in response.responses} == {
            ids["foo"]: (None, Errors.TOPIC_AUTHORIZATION_FAILED), ids["bar"]: ("bar", Errors.TOPIC_AUTHORIZATION_FAILED),
            missing: (None, Errors.UNKNOWN_TOPIC_ID)}
        assert all(cluster.broker(0).metadata_cache.contains_topic(n) for n in ("foo", "bar"))


@pytest.mark.parametrize("mode", ["zk", "kraft"])
@pytest.mark.parametrize("version", [5, 6])
async def test_delete_topics_by_name_authorization(version: int, mode: str) -> None:
    """Mirrors kafka.server.KafkaApisTest#testDeleteTopicsByNameAuthorization (names as v5's
    ``topic_names`` array or v6's topic states; in KRaft mode ControllerApis#deleteTopics): no
    DESCRIBE and no DELETE, or DESCRIBE without DELETE, are TOPIC_AUTHORIZATION_FAILED; an
    authorized name no topic has is UNKNOWN_TOPIC_OR_PARTITION."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        await cluster.create_topic("bar")
        for authorizer in deleting_authorizers(cluster):
            authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", "foo")
            for name in ("foo", "bar"):
                authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DELETE", name)
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["foo", "bar", "baz"], 10000), version)
        assert response.topic_errors() == {"foo": Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                           "bar": Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                           "baz": Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        assert cluster.broker(0).metadata_cache.contains_topic("bar")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_topics_with_name_and_id_is_invalid_request(mode: str) -> None:
    """Mirrors KafkaApis#handleDeleteTopicsRequest (ZooKeeper mode: a topic given by name and id at
    once makes the whole request INVALID_REQUEST) and ControllerApis#deleteTopics (KRaft mode: that
    entry alone, "You may not specify both topic name and topic id.", and a name given twice
    "Duplicate topic name."); nothing is deleted."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        await cluster.create_topic("both")
        await cluster.create_topic("other")
        topic_id = cluster.broker(0).metadata_cache.get_topic_id("both")
        response = await delete_at(cluster, DeleteTopicsRequest(
            topics=(DeleteTopicState(name="both", topic_id=topic_id),), timeout_ms=10000))
        assert [(r.name, r.topic_id, r.error_code) for r in response.responses] == [
            ("both", topic_id, Errors.INVALID_REQUEST.code)]
        if mode == "kraft":
            assert response.responses[0].error_message == "You may not specify both topic name and topic id."
            response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["other", "other"], 10000))
            assert [(r.name, r.error_code, r.error_message) for r in response.responses] == [
                ("other", Errors.INVALID_REQUEST.code, "Duplicate topic name.")]
        assert all(cluster.broker(0).metadata_cache.contains_topic(n) for n in ("both", "other"))


@pytest.mark.parametrize("mode", ["zk", "kraft"])
@pytest.mark.parametrize(("version", "error"), [(2, Errors.INVALID_REQUEST), (3, Errors.TOPIC_DELETION_DISABLED),
                                                 (None, Errors.TOPIC_DELETION_DISABLED)])
async def test_delete_topics_with_deletion_disabled(version: int | None, error: Errors, mode: str) -> None:
    """Mirrors kafka.server.DeleteTopicsRequestWithDeletionDisabledTest, KafkaApis#handleDeleteTopicsRequest
    and ControllerApis#deleteTopics (the forwarded request keeps the client's version): with
    delete.topic.enable=false every topic answers TOPIC_DELETION_DISABLED, or INVALID_REQUEST
    before version 3 (which has no such error); the topic stays."""
    async with Cluster(brokers=BROKERS, metadata_mode=mode, config={"delete.topic.enable": False}, seed=5) as cluster:
        await cluster.create_topic("topic-1")
        response = await delete_at(cluster, DeleteTopicsRequest.for_topic_names(["topic-1"], 10000), version)
        assert response.topic_errors() == {"topic-1": error.code}
        assert cluster.broker(0).metadata_cache.contains_topic("topic-1")


# ------------------------------------------------------------------------------ DescribeConfigs, InitProducerId


async def test_describe_configs_with_authorizer() -> None:
    """Mirrors kafka.server.KafkaApisTest#testDescribeConfigsWithAuthorizer and
    ConfigHelper#handleDescribeConfigsRequest: with DESCRIBE_CONFIGS on topic-1 its configs come
    back (min.insync.replicas=3 as set); without it the topic is TOPIC_AUTHORIZATION_FAILED with
    the error's message and no configs, and a broker resource without DESCRIBE_CONFIGS on the
    cluster CLUSTER_AUTHORIZATION_FAILED, both after the authorized resources; a name no topic can
    have is INVALID_TOPIC_EXCEPTION; an unknown resource type fails the whole request
    (INVALID_REQUEST)."""
    from kafka_ref.common.requests.describe_configs import DescribeConfigsRequest, DescribeConfigsResource

    topic, broker = 2, 4  # ConfigResource.Type ids
    async with Cluster(brokers=1, metadata_mode="zk", seed=5) as cluster:
        await cluster.create_topic("topic-1", config={"min.insync.replicas": "3"})
        request = DescribeConfigsRequest(resources=(DescribeConfigsResource(resource_type=topic, resource_name="topic-1"),),
                                         include_synonyms=True)
        [result] = (await send_at(cluster, 0, request)).results
        assert (result.resource_type, result.resource_name, result.error_code) == (topic, "topic-1", 0)
        assert [(c.name, c.value) for c in result.configs if c.name == "min.insync.replicas"] == [("min.insync.replicas", "3")]
        authorizer = cluster.broker(0).apis.authorizer
        authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE_CONFIGS", "topic-1")
        authorizer.deny_cluster(ANONYMOUS_PRINCIPAL, "DESCRIBE_CONFIGS")
        request = DescribeConfigsRequest(resources=(
            DescribeConfigsResource(resource_type=broker, resource_name="0"),
            DescribeConfigsResource(resource_type=topic, resource_name="topic-1"),
            DescribeConfigsResource(resource_type=topic, resource_name="bad/name")))
        response = await send_at(cluster, 0, request)
        assert [(r.resource_name, Errors.for_code(r.error_code), r.error_message, r.configs) for r in response.results][1:] == [
            ("0", Errors.CLUSTER_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED.message, ()),
            ("topic-1", Errors.TOPIC_AUTHORIZATION_FAILED, Errors.TOPIC_AUTHORIZATION_FAILED.message, ())]
        assert (response.results[0].resource_name, response.results[0].error_code) == (
            "bad/name", Errors.INVALID_TOPIC_EXCEPTION.code)
        request = DescribeConfigsRequest(resources=(DescribeConfigsResource(resource_type=topic, resource_name="x"),
                                                    DescribeConfigsResource(resource_type=3, resource_name="y")))
        response = await send_at(cluster, 0, request)
        assert [(r.resource_name, r.error_code) for r in response.results] == [
            ("x", Errors.INVALID_REQUEST.code), ("y", Errors.INVALID_REQUEST.code)]


@pytest.mark.parametrize(("producer_id", "producer_epoch"), [(10, -1), (-1, 2)])
@pytest.mark.parametrize("transactional_id", ["known", None])
async def test_reject_init_producer_id_when_id_or_epoch_missing(producer_id: int, producer_epoch: int,
                                                               transactional_id: str | None) -> None:
    """Mirrors kafka.server.KafkaApisTest#rejectInitProducerIdWhenIdButNotEpochProvided and
    #rejectInitProducerIdWhenEpochButNotIdProvided: a producer id without an epoch, or an epoch
    without an id, is INVALID_REQUEST (no id, epoch 0 in the answer); with neither a new
    idempotent producer gets an id and epoch 0."""
    from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest
    from kafka_ref.coordinator.transaction.transaction_coordinator import TransactionCoordinator

    async with Cluster(brokers=1, metadata_mode="zk", seed=5) as cluster:
        broker = cluster.broker(0)
        broker.apis.register(InitProducerIdRequest, TransactionCoordinator(broker).handle_init_producer_id_request)
        request = InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=15 * 60 * 1000,
                                        producer_id=producer_id, producer_epoch=producer_epoch)
        response = await send_at(cluster, 0, request)
        assert (response.error_code, response.producer_id, response.producer_epoch) == (Errors.INVALID_REQUEST.code, -1, 0)
        response = await send_at(cluster, 0, InitProducerIdRequest())
        assert (response.error_code, response.producer_epoch) == (0, 0) and response.producer_id >= 0


# ------------------------------------------------------------------------------ Authorization of topic changes


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_create_partitions_authorization(mode: str) -> None:
    """Mirrors kafka.server.KafkaApisTest#testCreatePartitionsAuthorization: foo (ALTER allowed) grows
    to two partitions, bar (ALTER denied) is TOPIC_AUTHORIZATION_FAILED and keeps its one."""
    from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic

    async with Cluster(brokers=BROKERS, metadata_mode=mode, seed=5) as cluster:
        for name in ("foo", "bar"):
            await cluster.create_topic(name)
        admin = await admin_broker(cluster)
        authorizers = [cluster.broker(b).apis.authorizer for b in cluster.live_broker_ids()]
        if cluster.kraft is not None:
            authorizers.append(cluster.kraft.controller.authorizer)
        for authorizer in authorizers:
            authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "ALTER", "bar")
        request = CreatePartitionsRequest(topics=(CreatePartitionsTopic(name="foo", count=2),
                                                  CreatePartitionsTopic(name="bar", count=10)), timeout_ms=35000)
        response = await send_at(cluster, admin, request)
        assert {r.name: Errors.for_code(r.error_code) for r in response.results} == {
            "foo": Errors.NONE, "bar": Errors.TOPIC_AUTHORIZATION_FAILED}
        await cluster.wait_until(lambda: len(cluster.broker(0).metadata_cache.get_topic_partitions("foo")) == 2)
        assert len(cluster.broker(0).metadata_cache.get_topic_partitions("bar")) == 1


@pytest.mark.parametrize("incremental", [True, False])
async def test_alter_configs_with_authorizer(incremental: bool) -> None:
    """Mirrors kafka.server.KafkaApisTest#testIncrementalAlterConfigsWithAuthorizer and
    #testAlterConfigsWithAuthorizer: the topic the principal may ALTER_CONFIGS is changed (NONE),
    the other one is TOPIC_AUTHORIZATION_FAILED and keeps its configs."""
    from kafka_ref.common.requests.alter_configs import AlterConfigsRequest
    from kafka_ref.common.requests.alter_configs import AlterConfigsResource as LegacyResource
    from kafka_ref.common.requests.alter_configs import AlterableConfig as LegacyConfig
    from kafka_ref.common.requests.incremental_alter_configs import (
        AlterableConfig,
        AlterConfigsResource,
        IncrementalAlterConfigsRequest,
    )

    async with Cluster(brokers=1, metadata_mode="zk", seed=5) as cluster:
        for name in ("authorized-topic", "unauthorized-topic"):
            await cluster.create_topic(name)
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "ALTER_CONFIGS", "unauthorized-topic")
        names = ("authorized-topic", "unauthorized-topic")
        if incremental:
            request: Any = IncrementalAlterConfigsRequest(resources=tuple(AlterConfigsResource(
                resource_type=2, resource_name=n, configs=(AlterableConfig(name="retention.ms", value="1000"),))
                for n in names))
            results = (await send_at(cluster, 0, request)).responses
        else:
            request = AlterConfigsRequest(resources=tuple(LegacyResource(
                resource_type=2, resource_name=n, configs=(LegacyConfig(name="retention.ms", value="1000"),))
                for n in names))
            results = (await send_at(cluster, 0, request)).responses
        assert {r.resource_name: Errors.for_code(r.error_code) for r in results} == {
            "authorized-topic": Errors.NONE, "unauthorized-topic": Errors.TOPIC_AUTHORIZATION_FAILED}
        await cluster.wait_until(lambda: cluster.broker(0).log_manager.fetch_log_config("authorized-topic")
                                 .overrides.get("retention.ms") in ("1000", 1000))
        assert "retention.ms" not in cluster.broker(0).log_manager.fetch_log_config("unauthorized-topic").overrides
