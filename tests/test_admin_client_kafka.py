"""Ports of clients/src/test/java/org/apache/kafka/clients/admin/KafkaAdminClientTest.java (Kafka 3.8.0).

Kafka's tests drive the admin client against a MockClient: each test queues the responses it wants
(``prepareResponse``, ``prepareResponseFrom(node)``, a disconnect) and the client consumes them in
order. Here ``MockBrokers`` plays that part on kafka_ref's in-process network: three brokers (0, 1, 2;
broker 0 the controller, cluster id "mockClusterId", like AdminClientUnitTestEnv's mockCluster(3, 0))
whose answers come from a queue of prepared responses. A Metadata request with no prepared
MetadataResponse ahead of it is answered from the mock cluster itself (Kafka's env starts with that
metadata already known). Every request received is recorded, with the virtual time it arrived.

kafka_ref's admin methods await the whole call and raise the first failing key in request order
(Kafka's ``*Result#all``), so a Kafka assertion on one key's future becomes either the exception that
``all`` raises or, where several keys fail differently, one call per key order.

Not ported:
- testDefaultApiTimeoutAndRequestTimeoutConflicts, testGenerateClientId, testMetricsReporter*,
  testDisableJmxReporter, testExplicitlyEnableJmxReporter, testGetOrCreateListValue,
  testCalcTimeoutMsRemainingAsInt, testPrettyPrintException: configuration, metrics and helper
  internals kafka_ref's admin client does not have.
- testCloseAdminClient*, testAdminClientFailureWhenClosed: no background thread to close.
- testPropagatedMetadataFetchException, testAdminClientApisAuthenticationFailure,
  testDeleteRecordsMultipleSends: SASL authentication errors are not modelled.
- testCreateTopicsRetryThrottlingException*, testDeleteTopicsRetryThrottlingException*,
  testCreatePartitionsRetryThrottlingException*, testCreatePartitionsDontRetry*: controller mutation
  quotas (THROTTLING_QUOTA_EXCEEDED and the retryOnQuotaViolation option) are not modelled.
- testDeleteTopics' and testDeleteTopicsPartialResponse's topic-id halves, testDescribeTopicsByIds:
  the admin client addresses topics by name only.
- testDescribeTopicsWithDescribeTopicPartitionsApi*, testDescribeTopicPartitionsApi*: kafka_ref has no
  DescribeTopicPartitions API (describeTopics uses Metadata).
- ACLs, client quotas, SCRAM credentials, features, metadata quorum, UnregisterBroker, producers,
  transactions, fence producers, client metrics, client instance ids, AlterReplicaLogDirs,
  DescribeReplicaLogDirs, broker and client-metrics config resources: not modelled by kafka_ref's
  admin client.
- testDescribeCluster*, testParse*DescribeClusterResponse*: kafka_ref's describeCluster uses Metadata
  (the fallback path), there is no DescribeCluster API.
- testListConsumerGroupsWithStates/WithTypes*, testDescribeConsumerGroupsWithAuthorizedOperations*,
  testDescribeOldAndNewConsumerGroups, testDescribeGroupsWithBothUnsupportedApis,
  testBatchedListConsumerGroupOffsets*, testListConsumerGroupOffsetsOptionsWith*: state/type filters,
  authorized operations, the KIP-848 ConsumerGroupDescribe API and batched multi-group offset fetches
  are not modelled.
- testDeleteConsumerGroupsWithOlderBroker, testDeleteMultipleConsumerGroupsWithOlderBroker,
  testListOffsets*Unsupported*, testListOffsetsNonMaxTimestampDowngradedImmediately: API version
  negotiation (UnsupportedVersionException downgrades) is not modelled.
- testRemoveMembersFromGroupReason/TruncatesReason/DefaultReason: the removal reason is fixed.
- testClientSideTimeoutAfterFailureTo*: they use MockClient's failure injection at send time of a
  specific call type; the covered behaviour is in testSuccessfulRetryAfterRequestTimeout here.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable

import anyio
import pytest

from kafka_ref.clients.admin import (
    Admin,
    AlterConfigOp,
    DeletedRecords,
    ListOffsetsResultInfo,
    LogDirDescription,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    RecordsToDelete,
    ReplicaInfo,
    TopicMetadataAndConfig,
)
from kafka_ref.clients.admin_reassignments import PartitionReassignment
from kafka_ref.common.errors import (
    ApiException,
    ClusterAuthorizationException,
    Errors,
    InvalidTopicException,
    KafkaStorageException,
    OffsetOutOfRangeException,
    TimeoutException,
    TopicAuthorizationException,
    TopicDeletionDisabledException,
    UnknownServerException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafka_ref.common.requests.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
    CreatePartitionsTopicResult,
)
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from kafka_ref.common.requests.delete_records import (
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)
from kafka_ref.common.requests.delete_topics import DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse
from kafka_ref.common.requests.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
)
from kafka_ref.common.requests.describe_log_dirs import (
    DescribeLogDirsPartition,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeLogDirsResult,
    DescribeLogDirsTopic,
)
from kafka_ref.common.requests.elect_leaders import (
    ElectionType,
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from kafka_ref.common.requests.incremental_alter_configs import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_ref.common.requests.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.image.records import ConfigResourceType
from kafka_ref.network.network import DisconnectException, Envelope, Network, serve_inbox

pytestmark = pytest.mark.anyio

CLUSTER_ID = "mockClusterId"
TOPIC_ID = Uuid(0x1111, 0x2222)

# A prepared entry that answers by dropping the connection (MockClient's ``disconnected=true``).
DISCONNECT = object()
# A prepared entry that never answers (the request times out on the client side).
NO_ANSWER = object()


@dataclass
class Prepared:
    """One prepared answer: for which node (None: any), to which requests, and what."""

    response: Any
    node: int | None = None
    matcher: Callable[[Any], bool] | None = None


@dataclass
class MockBrokers:
    """Brokers on the in-process network that answer from a queue, like Kafka's MockClient.

    A request takes the first prepared entry meant for its node whose matcher (if any) accepts it
    and whose response is of the request's response type; a Metadata request with no such entry is
    answered from ``nodes``, ``controller`` and ``topics``. Anything else is recorded in
    ``unexpected`` and left unanswered.
    """

    nodes: tuple[int, ...] = (0, 1, 2)
    controller: int = 0
    topics: dict[str, MetadataResponseTopic] = field(default_factory=dict)
    prepared: list[Prepared] = field(default_factory=list)
    requests: list[tuple[int, Any, int]] = field(default_factory=list)
    unexpected: list[tuple[int, Any]] = field(default_factory=list)
    time: Time = field(default_factory=Time)

    def prepare_response(self, response: Any, *, node: int | None = None,
                         matcher: Callable[[Any], bool] | None = None) -> None:
        """Mirrors MockClient#prepareResponse / #prepareResponseFrom."""
        self.prepared.append(Prepared(response, node, matcher))

    def metadata_response(self, topics: tuple[MetadataResponseTopic, ...] | None = None, *,
                          controller: int | None = None) -> MetadataResponse:
        """Mirrors RequestTestUtils#metadataResponse for the mock cluster."""
        return MetadataResponse(
            brokers=tuple(MetadataResponseBroker(node_id=n, host="localhost", port=8121 + n) for n in self.nodes),
            cluster_id=CLUSTER_ID, controller_id=self.controller if controller is None else controller,
            topics=tuple(self.topics.values()) if topics is None else topics)

    def _fits(self, entry: Prepared, node: int, request: Any) -> bool:
        if entry.node is not None and entry.node != node:
            return False
        if entry.matcher is not None and not entry.matcher(request):
            return False
        if entry.response is DISCONNECT or entry.response is NO_ANSWER:
            return entry.matcher is not None or not isinstance(request, MetadataRequest)
        return isinstance(entry.response, request.RESPONSE_TYPE)

    def handle(self, node: int, envelope: Envelope) -> None:
        request = envelope.request
        self.requests.append((node, request, self.time.milliseconds()))
        for i, entry in enumerate(self.prepared):
            if self._fits(entry, node, request):
                del self.prepared[i]
                if entry.response is DISCONNECT:
                    envelope.fail(DisconnectException(f"node {node} disconnected"))
                elif entry.response is not NO_ANSWER:
                    envelope.respond(entry.response)
                return
        if isinstance(request, MetadataRequest):
            names = request.topic_names()
            topics = tuple(self.topics.values()) if names is None else tuple(
                self.topics.get(n) or MetadataResponseTopic(error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, name=n)
                for n in names)
            envelope.respond(self.metadata_response(topics))
            return
        self.unexpected.append((node, request))

    def sent(self, kind: type | None = None) -> list[tuple[int, Any]]:
        """The (node, request) pairs received, Metadata left out unless asked for."""
        return [(n, r) for n, r, _ in self.requests
                if (kind is None and not isinstance(r, MetadataRequest)) or (kind is not None and isinstance(r, kind))]


@asynccontextmanager
async def mock_env(nodes: tuple[int, ...] = (0, 1, 2), *, known_metadata: bool = True, **admin_config: Any):
    """Mirrors AdminClientUnitTestEnv(mockCluster(3, 0)): the mock brokers and an admin client bootstrapped to them.

    With ``known_metadata`` the client has already learnt the cluster (Kafka's env starts with it)
    and the request log starts empty.
    """
    network = Network()
    brokers = MockBrokers(nodes=nodes)
    async with anyio.create_task_group() as tg:
        for node in nodes:
            tg.start_soon(serve_inbox, network.register(node), partial(brokers.handle, node))
        admin = Admin(network, list(nodes), **admin_config)
        if known_metadata:
            assert await admin.client.maybe_update_metadata()
            brokers.requests.clear()
        yield brokers, admin
        tg.cancel_scope.cancel()
    assert brokers.unexpected == []


def topic_metadata(name: str, leaders: dict[int, int], error: Errors = Errors.NONE,
                   partition_error: Errors = Errors.NONE, leader_epoch: int = 5) -> MetadataResponseTopic:
    """A Metadata topic whose partition p is led by ``leaders[p]`` (the only replica)."""
    return MetadataResponseTopic(error_code=error.code, name=name, topic_id=TOPIC_ID, partitions=tuple(
        MetadataResponsePartition(error_code=partition_error.code, partition_index=p, leader_id=leader,
                                  leader_epoch=leader_epoch, replica_nodes=(leader,), isr_nodes=(leader,))
        for p, leader in sorted(leaders.items())))


def create_topics_response(*results: tuple[str, Errors] | tuple[str, Errors, str]) -> CreateTopicsResponse:
    """Mirrors KafkaAdminClientTest#prepareCreateTopicsResponse."""
    return CreateTopicsResponse(topics=tuple(
        CreatableTopicResult(name=r[0], error_code=r[1].code, error_message=r[2] if len(r) > 2 else None,
                             topic_id=TOPIC_ID if r[1] is Errors.NONE else ZERO_UUID,
                             num_partitions=1 if r[1] is Errors.NONE else -1,
                             replication_factor=3 if r[1] is Errors.NONE else -1) for r in results))


def delete_topics_response(*results: tuple[str, Errors]) -> DeleteTopicsResponse:
    """Mirrors KafkaAdminClientTest#prepareDeleteTopicsResponse."""
    return DeleteTopicsResponse(responses=tuple(DeletableTopicResult(name=n, error_code=e.code) for n, e in results))


def topics_named(*names: str) -> Callable[[Any], bool]:
    """Mirrors KafkaAdminClientTest#expectCreateTopicsRequestWithTopics / expectDeleteTopicsRequestWithTopics."""
    def matches(request: Any) -> bool:
        if isinstance(request, (CreateTopicsRequest, DeleteTopicsRequest)):
            return {t.name for t in request.topics} == set(names)
        if isinstance(request, CreatePartitionsRequest):
            return {t.name for t in request.topics} == set(names)
        return False
    return matches


MY_TOPIC = NewTopic("myTopic", replica_assignment={0: [0, 1, 2]})


# --------------------------------------------------------------------------------------------
# Connecting and metadata
# --------------------------------------------------------------------------------------------


async def test_timeout_without_metadata() -> None:
    """Mirrors KafkaAdminClientTest#testTimeoutWithoutMetadata.

    The bootstrap broker never answers Metadata, so no controller is ever known: the call fails
    with TimeoutException at its 1000 ms deadline and CreateTopics is never sent.
    """
    async with mock_env(nodes=(0,), known_metadata=False, request_timeout_ms=10) as (brokers, admin):
        for _ in range(200):
            brokers.prepare_response(NO_ANSWER, matcher=lambda r: isinstance(r, MetadataRequest))
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)))
        start = admin.time.milliseconds()
        with pytest.raises(TimeoutException):
            await admin.create_topics([MY_TOPIC], timeout_ms=1000)
        assert admin.time.milliseconds() - start <= 1000 + 10
        assert brokers.sent() == []
        brokers.prepared.clear()


async def test_connection_failure_on_metadata_update() -> None:
    """Mirrors KafkaAdminClientTest#testConnectionFailureOnMetadataUpdate.

    The first Metadata answer is a dropped connection; the client asks again, learns the cluster
    and sends CreateTopics to the controller.
    """
    async with mock_env(known_metadata=False) as (brokers, admin):
        brokers.prepare_response(DISCONNECT, matcher=lambda r: isinstance(r, MetadataRequest))
        brokers.prepare_response(brokers.metadata_response(controller=1), matcher=lambda r: isinstance(r, MetadataRequest))
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)), matcher=topics_named("myTopic"))
        result = await admin.create_topics([MY_TOPIC], timeout_ms=10000)
        assert result == {"myTopic": TopicMetadataAndConfig(TOPIC_ID, 1, 3, {})}
        assert [type(r).__name__ for _, r, _ in brokers.requests] == [
            "MetadataRequest", "MetadataRequest", "CreateTopicsRequest"]
        [(node, request)] = brokers.sent()
        assert node == 1 and request.topics == (CreatableTopic(
            name="myTopic", num_partitions=-1, replication_factor=-1,
            assignments=(CreatableReplicaAssignment(partition_index=0, broker_ids=(0, 1, 2)),)),)
        # The CreateTopics timeout is what is left of the 10 s deadline after the metadata retry.
        assert 9000 <= request.timeout_ms < 10000


async def test_unreachable_bootstrap_server() -> None:
    """Mirrors KafkaAdminClientTest#testUnreachableBootstrapServer.

    The bootstrap broker is down for the first 200 ms; the admin client keeps trying and the call
    succeeds once it comes up.
    """
    network = Network()
    brokers = MockBrokers()
    async with anyio.create_task_group() as tg:
        admin = Admin(network, [0])
        for node in (1, 2):
            tg.start_soon(serve_inbox, network.register(node), partial(brokers.handle, node))

        async def bring_up_bootstrap() -> None:
            await anyio.sleep(0.2)
            tg.start_soon(serve_inbox, network.register(0), partial(brokers.handle, 0))

        tg.start_soon(bring_up_bootstrap)
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)), matcher=topics_named("myTopic"))
        start = admin.time.milliseconds()
        assert await admin.create_topics([MY_TOPIC], timeout_ms=10000) == {
            "myTopic": TopicMetadataAndConfig(TOPIC_ID, 1, 3, {})}
        [(node, _, at)] = [(n, r, t) for n, r, t in brokers.requests if isinstance(r, MetadataRequest)]
        assert node == 0 and at - start >= 200
        tg.cancel_scope.cancel()
    assert brokers.unexpected == []


# --------------------------------------------------------------------------------------------
# CreateTopics / DeleteTopics
# --------------------------------------------------------------------------------------------


async def test_create_topics() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopics."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)), matcher=topics_named("myTopic"))
        assert await admin.create_topics([MY_TOPIC], timeout_ms=10000) == {
            "myTopic": TopicMetadataAndConfig(TOPIC_ID, 1, 3, {})}
        assert [n for n, _ in brokers.sent()] == [0]


async def test_create_topics_partial_response() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsPartialResponse.

    The controller answers for myTopic only: myTopic is created, myTopic2 fails with a plain
    ApiException (the controller response did not contain a result for it).
    """
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)),
                                 matcher=topics_named("myTopic", "myTopic2"))
        with pytest.raises(ApiException) as info:
            await admin.create_topics([MY_TOPIC, NewTopic("myTopic2", replica_assignment={0: [0, 1, 2]})],
                                      timeout_ms=10000)
        assert type(info.value) is ApiException
        assert str(info.value) == "The controller response did not contain a result for topic myTopic2"
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)),
                                 matcher=topics_named("myTopic", "myTopic2"))
        with pytest.raises(ApiException):
            await admin.create_topics([MY_TOPIC, NewTopic("myTopic2", replica_assignment={0: [0, 1, 2]})])
        assert len(brokers.sent(CreateTopicsRequest)) == 2


async def test_create_topics_retry_backoff() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsRetryBackoff.

    The first CreateTopics meets a dropped connection; the retry reaches the controller after the
    retry backoff (100 ms, within the exponential backoff's jitter bounds).
    """
    async with mock_env(retry_backoff_ms=100) as (brokers, admin):
        brokers.prepare_response(DISCONNECT, matcher=lambda r: isinstance(r, CreateTopicsRequest))
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)),
                                 matcher=lambda r: isinstance(r, CreateTopicsRequest))
        await admin.create_topics([MY_TOPIC], timeout_ms=10000)
        first, second = [t for _, r, t in brokers.requests if isinstance(r, CreateTopicsRequest)]
        # RETRY_BACKOFF_JITTER is 0.2: the backoff lies in [80, 120] ms.
        assert 80 <= second - first <= 120


async def test_create_topics_handle_not_controller_exception() -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsHandleNotControllerException.

    Broker 0 answers NOT_CONTROLLER; fresh metadata names broker 1, which creates the topic.
    """
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NOT_CONTROLLER)), node=0)
        brokers.prepare_response(brokers.metadata_response((), controller=1))
        brokers.prepare_response(create_topics_response(("myTopic", Errors.NONE)), node=1)
        assert await admin.create_topics([MY_TOPIC], timeout_ms=10000) == {
            "myTopic": TopicMetadataAndConfig(TOPIC_ID, 1, 3, {})}
        assert [n for n, _ in brokers.sent()] == [0, 1]
        assert admin.metadata.fetch().controller_id == 1


async def test_delete_topics() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopics (by name): success, TopicDeletionDisabledException,
    UnknownTopicOrPartitionException."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response(("myTopic", Errors.NONE)), matcher=topics_named("myTopic"))
        assert await admin.delete_topics(["myTopic"]) is None
        brokers.prepare_response(delete_topics_response(("myTopic", Errors.TOPIC_DELETION_DISABLED)),
                                 matcher=topics_named("myTopic"))
        with pytest.raises(TopicDeletionDisabledException):
            await admin.delete_topics(["myTopic"])
        brokers.prepare_response(delete_topics_response(("myTopic", Errors.UNKNOWN_TOPIC_OR_PARTITION)),
                                 matcher=topics_named("myTopic"))
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.delete_topics(["myTopic"])
        assert [n for n, _ in brokers.sent()] == [0, 0, 0]


async def test_delete_topics_partial_response() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopicsPartialResponse (by name): the topic the
    controller left out fails with ApiException."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response(("myTopic", Errors.NONE)),
                                 matcher=topics_named("myTopic", "myOtherTopic"))
        with pytest.raises(ApiException) as info:
            await admin.delete_topics(["myTopic", "myOtherTopic"])
        assert type(info.value) is ApiException
        assert str(info.value) == "The controller response did not contain a result for topic myOtherTopic"


async def test_invalid_topic_names() -> None:
    """Mirrors KafkaAdminClientTest#testInvalidTopicNames: an empty name fails with
    InvalidTopicException without any request going out."""
    async with mock_env() as (brokers, admin):
        with pytest.raises(InvalidTopicException):
            await admin.delete_topics([""])
        with pytest.raises(InvalidTopicException):
            await admin.describe_topics([""])
        with pytest.raises(InvalidTopicException):
            await admin.create_topics([NewTopic("", 1, 1)])
        assert brokers.requests == []
