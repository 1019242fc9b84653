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
Kafka tests that run a call by topic name and then by topic id (TopicCollection.ofTopicIds) are
split into a by-name test and a ``*_by_ids`` test (``delete_topics_by_ids``, ``describe_topics_by_ids``).

Not ported:
- testDefaultApiTimeoutAndRequestTimeoutConflicts, testGenerateClientId, testMetricsReporter*,
  testDisableJmxReporter, testExplicitlyEnableJmxReporter, testGetOrCreateListValue,
  testCalcTimeoutMsRemainingAsInt, testPrettyPrintException: configuration, metrics and helper
  internals kafka_ref's admin client does not have.
- testCloseAdminClient*, testAdminClientFailureWhenClosed: no background thread to close.
- testPropagatedMetadataFetchException, testAdminClientApisAuthenticationFailure,
  testDeleteRecordsMultipleSends: SASL authentication errors are not modelled.
- testDescribeTopicsWithDescribeTopicPartitionsApi*, testDescribeTopicPartitionsApi*: kafka_ref has no
  DescribeTopicPartitions API (describeTopics uses Metadata).
- ACLs, client quotas, SCRAM credentials, features, metadata quorum, UnregisterBroker, producers,
  transactions, fence producers, client metrics, client instance ids, AlterReplicaLogDirs,
  DescribeReplicaLogDirs, broker and client-metrics config resources: not modelled by kafka_ref's
  admin client.
- testParse*DescribeClusterResponse*: static parsing helpers (and the controller endpoint type);
  testDescribeCluster's authorized-operations half: cluster authorized operations are not returned.
- testListConsumerGroupsWithStatesOlderBrokerVersion, testListConsumerGroupsWithTypes*, testDescribeConsumerGroupsWithAuthorizedOperations*,
  testDescribeOldAndNewConsumerGroups, testDescribeGroupsWithBothUnsupportedApis,
  testBatchedListConsumerGroupOffsets*, testListConsumerGroupOffsetsOptionsWithBatchedApi: state/type filters,
  authorized operations, the KIP-848 ConsumerGroupDescribe API and batched multi-group offset fetches
  are not modelled.
- testDeleteMultipleConsumerGroupsWithOlderBroker, testListOffsets*Unsupported*, testListOffsetsNonMaxTimestampDowngradedImmediately: API version
  negotiation (UnsupportedVersionException downgrades) is not modelled.
- testDescribeLogDirsDeprecated, testDescribeLogDirsOfflineDirDeprecated: the deprecated
  values()/all() views of the same result; the ports above cover the result itself.
- testGetSubLevelError: a private helper; its use (a member missing from the answer) is in
  testRemoveMembersFromGroup here.
- testClientSideTimeoutAfterFailureToSend: connections here are made at once (no delayed ready).
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
    TopicPartitionInfo,
)
from kafka_ref.clients.admin_reassignments import PartitionReassignment
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata
from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol
from kafka_ref.common.errors import (
    ApiException,
    ClusterAuthorizationException,
    Errors,
    InvalidTopicException,
    KafkaStorageException,
    OffsetOutOfRangeException,
    StaleMetadataException,
    TimeoutException,
    TopicAuthorizationException,
    TopicDeletionDisabledException,
    UnknownServerException,
    UnknownTopicIdException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.alter_partition_reassignments import (
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
from kafka_ref.common.requests.delete_groups import DeletableGroupResult, DeleteGroupsResponse
from kafka_ref.common.requests.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
)
from kafka_ref.common.requests.describe_groups import DescribedGroup, DescribedGroupMember, DescribeGroupsResponse
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
from kafka_ref.common.requests.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse
from kafka_ref.common.requests.incremental_alter_configs import (
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberResponse
from kafka_ref.common.requests.list_groups import ListedGroup, ListGroupsResponse
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
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kafka_ref.common.requests.offset_delete import OffsetDeleteResponse
from kafka_ref.common.requests.offset_fetch import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
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


def topic_ids_are(*topic_ids: Uuid) -> Callable[[Any], bool]:
    """Mirrors KafkaAdminClientTest#expectDeleteTopicsRequestWithTopicIds: a DeleteTopics request
    naming exactly these ids, in this order."""
    return lambda request: isinstance(request, DeleteTopicsRequest) and request.topic_ids() == list(topic_ids)


def delete_topics_response_with_ids(throttle_time_ms: int, *results: tuple[Uuid, Errors]) -> DeleteTopicsResponse:
    """Mirrors KafkaAdminClientTest#prepareDeleteTopicsResponseWithTopicId / #deletableTopicResultWithId:
    results keyed by topic id, no name."""
    return DeleteTopicsResponse(throttle_time_ms=throttle_time_ms, responses=tuple(
        DeletableTopicResult(name=None, topic_id=t, error_code=e.code) for t, e in results))


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


async def test_delete_topics_by_ids() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopics (with topic ids): success,
    TopicDeletionDisabledException, UnknownTopicIdException; each request names the id alone."""
    topic_id = Uuid(0x0123, 0x4567)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response_with_ids(0, (topic_id, Errors.NONE)),
                                 matcher=topic_ids_are(topic_id))
        assert await admin.delete_topics_by_ids([topic_id]) is None
        brokers.prepare_response(delete_topics_response_with_ids(0, (topic_id, Errors.TOPIC_DELETION_DISABLED)),
                                 matcher=topic_ids_are(topic_id))
        with pytest.raises(TopicDeletionDisabledException):
            await admin.delete_topics_by_ids([topic_id])
        brokers.prepare_response(delete_topics_response_with_ids(0, (topic_id, Errors.UNKNOWN_TOPIC_ID)),
                                 matcher=topic_ids_are(topic_id))
        with pytest.raises(UnknownTopicIdException):
            await admin.delete_topics_by_ids([topic_id])
        assert brokers.prepared == []
        assert [(n, r.topic_names(), r.topic_ids()) for n, r in brokers.sent()] == [(0, [], [topic_id])] * 3


async def test_delete_topics_by_ids_partial_response() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopicsPartialResponse (with topic ids): the id the
    controller left out fails with a plain ApiException naming it; the answered one succeeded."""
    topic_id1, topic_id2 = Uuid(0x0123, 0x4567), Uuid(0x89AB, 0xCDEF)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response_with_ids(1000, (topic_id1, Errors.NONE)),
                                 matcher=topic_ids_are(topic_id1, topic_id2))
        with pytest.raises(ApiException) as info:
            await admin.delete_topics_by_ids([topic_id1, topic_id2])
        assert type(info.value) is ApiException
        # The first failure in request order raises: topic_id1 (first) succeeded.
        assert str(info.value) == f"The controller response did not contain a result for topic {topic_id2}"
        assert brokers.prepared == []
        assert len(brokers.sent()) == 1


async def test_describe_topics_by_ids() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeTopicsByIds: a known id is described under the
    name the Metadata answer gives it; an id the answer does not carry fails with
    UnknownTopicIdException("TopicId <id> not found."); the zero id fails with
    InvalidTopicException without a request."""
    topic_id = Uuid(0x0123, 0x4567)
    async with mock_env() as (brokers, admin):
        partition = MetadataResponsePartition(partition_index=0, leader_id=0, leader_epoch=10,
                                              replica_nodes=(0,), isr_nodes=(0,), offline_replicas=(0,))
        brokers.prepare_response(brokers.metadata_response((MetadataResponseTopic(
            name="test-topic", topic_id=topic_id, partitions=(partition,)),)))
        described = await admin.describe_topics_by_ids([topic_id])
        assert list(described) == [topic_id]
        assert described[topic_id].name == "test-topic"
        assert described[topic_id].topic_id == topic_id
        assert described[topic_id].partitions == (TopicPartitionInfo(0, 0, (0,), (0,)),)
        request = brokers.sent(MetadataRequest)[-1][1]
        assert [(t.topic_id, t.name) for t in request.topics] == [(topic_id, None)]
        assert request.allow_auto_topic_creation is False

        non_exist_id = Uuid(0x89AB, 0xCDEF)
        brokers.prepare_response(brokers.metadata_response(()))
        with pytest.raises(UnknownTopicIdException) as info:
            await admin.describe_topics_by_ids([non_exist_id])
        assert str(info.value) == f"TopicId {non_exist_id} not found."

        sent = len(brokers.requests)
        with pytest.raises(InvalidTopicException) as invalid:
            await admin.describe_topics_by_ids([ZERO_UUID])
        assert str(invalid.value) == "The given topic id 'AAAAAAAAAAAAAAAAAAAAAA' cannot be represented in a request."
        assert len(brokers.requests) == sent
        assert brokers.prepared == []


async def test_zero_topic_id_fails_alone() -> None:
    """KafkaAdminClient#handleDeleteTopicsUsingIds and #handleDescribeTopicsByIds, as
    testDescribeTopicsByIds's invalid-id half meets a valid id: the zero id's future fails with
    InvalidTopicException while the other ids are still sent (deleted, described); ``all`` raises
    the zero id's failure, first in request order."""
    topic_id = Uuid(0x0123, 0x4567)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response_with_ids(0, (topic_id, Errors.NONE)),
                                 matcher=topic_ids_are(topic_id))
        with pytest.raises(InvalidTopicException) as info:
            await admin.delete_topics_by_ids([ZERO_UUID, topic_id])
        assert str(info.value) == "The given topic ID 'AAAAAAAAAAAAAAAAAAAAAA' cannot be represented in a request."
        assert [(n, r.topic_ids()) for n, r in brokers.sent()] == [(0, [topic_id])]

        brokers.prepare_response(brokers.metadata_response((MetadataResponseTopic(name="test-topic", topic_id=topic_id),)))
        with pytest.raises(InvalidTopicException):
            await admin.describe_topics_by_ids([ZERO_UUID, topic_id])
        assert [[t.topic_id for t in r.topics] for _, r in brokers.sent(MetadataRequest)] == [[topic_id]]
        assert brokers.prepared == []


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


# --------------------------------------------------------------------------------------------
# ElectLeaders, configs, log dirs
# --------------------------------------------------------------------------------------------


def elect_leaders_response(errors: dict[TopicPartition, Errors]) -> ElectLeadersResponse:
    by_topic: dict[str, list[PartitionResult]] = {}
    for tp, error in errors.items():
        by_topic.setdefault(tp.topic, []).append(PartitionResult(
            partition_id=tp.partition, error_code=error.code,
            error_message=None if error is Errors.NONE else error.message))
    return ElectLeadersResponse(error_code=0, replica_election_results=tuple(
        ReplicaElectionResult(topic=t, partition_result=tuple(ps)) for t, ps in by_topic.items()))


@pytest.mark.parametrize("election_type", [ElectionType.PREFERRED, ElectionType.UNCLEAN])
async def test_elect_leaders(election_type: ElectionType) -> None:
    """Mirrors KafkaAdminClientTest#testElectLeaders.

    Per-partition errors come back as that partition's exception (ClusterAuthorizationException),
    success as None, and with no answer the call fails at its 100 ms deadline.
    """
    tp1, tp2 = TopicPartition("topic", 0), TopicPartition("topic", 2)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(elect_leaders_response({tp1: Errors.CLUSTER_AUTHORIZATION_FAILED,
                                                         tp2: Errors.CLUSTER_AUTHORIZATION_FAILED}))
        results = await admin.elect_leaders(election_type, [tp1, tp2])
        assert set(results) == {tp1, tp2}
        assert type(results[tp2]) is ClusterAuthorizationException
        brokers.prepare_response(elect_leaders_response({tp1: Errors.NONE, tp2: Errors.NONE}))
        assert await admin.elect_leaders(election_type, [tp1, tp2]) == {tp1: None, tp2: None}
        brokers.prepare_response(NO_ANSWER)
        start = admin.time.milliseconds()
        with pytest.raises(TimeoutException):
            await admin.elect_leaders(election_type, [tp1, tp2], timeout_ms=100)
        assert admin.time.milliseconds() - start == 100
        sent = brokers.sent()
        assert [n for n, _ in sent] == [0, 0, 0]
        assert all(isinstance(r, ElectLeadersRequest) and r.election_type == election_type for _, r in sent)


def describe_configs_result(name: str, error: Errors = Errors.NONE) -> DescribeConfigsResult:
    return DescribeConfigsResult(error_code=error.code, resource_type=ConfigResourceType.TOPIC, resource_name=name,
                                 configs=())


async def test_describe_configs_partial_response() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeConfigsPartialResponse: the resource the broker left
    out fails with ApiException."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(DescribeConfigsResponse(results=(describe_configs_result("topic"),)))
        with pytest.raises(ApiException) as info:
            await admin.describe_topic_configs(["topic", "topic2"])
        assert type(info.value) is ApiException
        assert str(info.value) == ("The node response did not contain a result for config resource "
                                   "ConfigResource(type=TOPIC, name='topic2')")
        [(_, request)] = brokers.sent()
        assert isinstance(request, DescribeConfigsRequest)
        assert [r.resource_name for r in request.resources] == ["topic", "topic2"]


async def test_describe_configs_unrequested() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeConfigsUnrequested: a resource nobody asked for is
    left out of the result."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(DescribeConfigsResponse(results=(
            DescribeConfigsResult(error_code=0, resource_type=ConfigResourceType.TOPIC, resource_name="topic",
                                  configs=(DescribeConfigsResourceResult(name="retention.ms", value="1000"),)),
            describe_configs_result("unrequested"))))
        assert await admin.describe_topic_configs(["topic"]) == {"topic": {"retention.ms": "1000"}}


async def test_incremental_alter_configs() -> None:
    """Mirrors KafkaAdminClientTest#testIncrementalAlterConfigs (its topic resource): a per-resource
    INVALID_REQUEST raises InvalidRequestException with the broker's message; then a call that succeeds."""
    from kafka_ref.common.errors import InvalidRequestException

    async with mock_env() as (brokers, admin):
        brokers.prepare_response(IncrementalAlterConfigsResponse(responses=(AlterConfigsResourceResponse(
            error_code=Errors.INVALID_REQUEST.code, error_message="Config value append is not allowed for config",
            resource_type=ConfigResourceType.TOPIC, resource_name="topic1"),)))
        with pytest.raises(InvalidRequestException, match="^Config value append is not allowed for config$"):
            await admin.incremental_alter_configs({"topic1": [AlterConfigOp("compression.type", "gzip", "APPEND")]})
        brokers.prepare_response(IncrementalAlterConfigsResponse(responses=(AlterConfigsResourceResponse(
            error_code=0, resource_type=ConfigResourceType.TOPIC, resource_name="topic1"),)))
        assert await admin.incremental_alter_configs({"topic1": [AlterConfigOp("retention.ms", "1000")]}) is None
        first, second = [r for _, r in brokers.sent()]
        assert isinstance(first, IncrementalAlterConfigsRequest)
        assert [(c.name, c.config_operation.name, c.value) for c in first.resources[0].configs] == [
            ("compression.type", "APPEND", "gzip")]
        assert [(c.name, c.config_operation.name, c.value) for c in second.resources[0].configs] == [
            ("retention.ms", "SET", "1000")]


def describe_log_dirs_response(error: Errors, log_dir: str, partitions: dict[TopicPartition, tuple[int, int]], *,
                               total_bytes: int = -1, usable_bytes: int = -1) -> DescribeLogDirsResponse:
    """Mirrors KafkaAdminClientTest#prepareDescribeLogDirsResponse."""
    by_topic: dict[str, list[DescribeLogDirsPartition]] = {}
    for tp, (size, lag) in partitions.items():
        by_topic.setdefault(tp.topic, []).append(DescribeLogDirsPartition(
            partition_index=tp.partition, partition_size=size, offset_lag=lag, is_future_key=False))
    return DescribeLogDirsResponse(results=(DescribeLogDirsResult(
        error_code=error.code, log_dir=log_dir, total_bytes=total_bytes, usable_bytes=usable_bytes,
        topics=tuple(DescribeLogDirsTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items())),))


async def _describe_log_dirs_case(total_bytes: int, usable_bytes: int, expect_total: int | None,
                                  expect_usable: int | None) -> None:
    tp = TopicPartition("topic", 12)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(describe_log_dirs_response(
            Errors.NONE, "/var/data/kafka", {tp: (1234567890, 24)}, total_bytes=total_bytes, usable_bytes=usable_bytes),
            node=0)
        assert await admin.describe_log_dirs([0]) == {0: {"/var/data/kafka": LogDirDescription(
            None, {tp: ReplicaInfo(1234567890, 24, False)}, expect_total, expect_usable)}}
        # No directories and no error (before v3 the field did not exist): not authorized.
        brokers.prepare_response(DescribeLogDirsResponse(results=()), node=0)
        with pytest.raises(ClusterAuthorizationException):
            await admin.describe_log_dirs([0])
        # No directories with an error (v3+): that error.
        brokers.prepare_response(DescribeLogDirsResponse(error_code=Errors.UNKNOWN_SERVER_ERROR.code, results=()),
                                 node=0)
        with pytest.raises(UnknownServerException):
            await admin.describe_log_dirs([0])
        assert [(n, r) for n, r in brokers.sent()] == [(0, DescribeLogDirsRequest(topics=None))] * 3


async def test_describe_log_dirs() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeLogDirs: volume bytes unknown (-1) read as None."""
    await _describe_log_dirs_case(-1, -1, None, None)


async def test_describe_log_dirs_with_volume_bytes() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeLogDirsWithVolumeBytes."""
    await _describe_log_dirs_case(123, 456, 123, 456)


async def test_describe_log_dirs_offline_dir() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeLogDirsOfflineDir: an offline directory is described
    with KafkaStorageException as its error and no replicas."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(describe_log_dirs_response(Errors.KAFKA_STORAGE_ERROR, "/var/data/kafka", {}), node=0)
        descriptions = await admin.describe_log_dirs([0])
        assert list(descriptions) == [0] and list(descriptions[0]) == ["/var/data/kafka"]
        description = descriptions[0]["/var/data/kafka"]
        assert type(description.error) is KafkaStorageException
        assert description.replica_infos == {}


async def test_describe_log_dirs_partial_failure() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeLogDirsPartialFailure (retries=0).

    Broker 0 never answers, broker 1 does: broker 0's result is a TimeoutException (an
    ApiException) and broker 1 was still asked and answered.
    """
    async with mock_env(retries=0) as (brokers, admin):
        brokers.prepare_response(NO_ANSWER, node=0)
        brokers.prepare_response(describe_log_dirs_response(Errors.NONE, "/data", {}), node=1)
        with pytest.raises(TimeoutException):
            await admin.describe_log_dirs([0, 1])
        assert brokers.prepared == []
        assert [n for n, _ in brokers.sent()] == [0, 1]
        # Broker 1's own result, asked alone, is its description.
        brokers.prepare_response(describe_log_dirs_response(Errors.NONE, "/data", {}), node=1)
        assert await admin.describe_log_dirs([1]) == {1: {"/data": LogDirDescription(None, {}, None, None)}}


# --------------------------------------------------------------------------------------------
# CreatePartitions, DeleteRecords, ListOffsets
# --------------------------------------------------------------------------------------------


async def test_create_partitions() -> None:
    """Mirrors KafkaAdminClientTest#testCreatePartitions: my_topic grows, other_topic fails with
    InvalidTopicException carrying the controller's message."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(CreatePartitionsResponse(results=(
            CreatePartitionsTopicResult(name="my_topic", error_code=0),
            CreatePartitionsTopicResult(name="other_topic", error_code=Errors.INVALID_TOPIC_EXCEPTION.code,
                                        error_message="some detailed reason"))),
            matcher=topics_named("my_topic", "other_topic"))
        with pytest.raises(InvalidTopicException) as info:
            await admin.create_partitions({"my_topic": NewPartitions.increase_to(3),
                                           "other_topic": NewPartitions.increase_to(3, [[2], [3]])})
        assert str(info.value) == "some detailed reason"
        [(node, request)] = brokers.sent()
        assert node == 0 and request.topics == (
            CreatePartitionsTopic(name="my_topic", count=3, assignments=None),
            CreatePartitionsTopic(name="other_topic", count=3, assignments=(
                CreatePartitionsAssignment(broker_ids=(2,)), CreatePartitionsAssignment(broker_ids=(3,)))))
        # my_topic alone succeeds.
        brokers.prepare_response(CreatePartitionsResponse(results=(
            CreatePartitionsTopicResult(name="my_topic", error_code=0),)), matcher=topics_named("my_topic"))
        assert await admin.create_partitions({"my_topic": NewPartitions.increase_to(3)}) is None


async def test_delete_records_topic_authorization_error() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteRecordsTopicAuthorizationError: a topic-level
    TOPIC_AUTHORIZATION_FAILED in Metadata fails the partition without a DeleteRecords."""
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((MetadataResponseTopic(
            error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code, name="foo"),)))
        with pytest.raises(TopicAuthorizationException):
            await admin.delete_records({TopicPartition("foo", 0): RecordsToDelete.before(10)})
        assert brokers.sent() == []


async def test_delete_records() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteRecords.

    Metadata first answers LEADER_NOT_AVAILABLE, then UNKNOWN_TOPIC_OR_PARTITION (both retried),
    then the leaders; broker 0's DeleteRecords answer gives partition 0 its low watermark 3,
    partition 1 OffsetOutOfRangeException, partition 2 TopicAuthorizationException and leaves
    partition 3 out (ApiException). Each partition's outcome is read from a call whose first key
    it is.
    """
    p0, p1, p2, p3 = (TopicPartition("my_topic", p) for p in range(4))
    answer = DeleteRecordsResponse.of({
        p0: DeleteRecordsPartitionResult(partition_index=0, low_watermark=3, error_code=0),
        p1: DeleteRecordsPartitionResult(partition_index=1, low_watermark=-1, error_code=Errors.OFFSET_OUT_OF_RANGE.code),
        p2: DeleteRecordsPartitionResult(partition_index=2, low_watermark=-1,
                                         error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)})
    leaders = {0: 0, 1: 0, 2: 0, 3: 0}
    offsets = {p0: RecordsToDelete.before(3), p1: RecordsToDelete.before(10), p2: RecordsToDelete.before(10),
               p3: RecordsToDelete.before(10)}
    expected = {p1: OffsetOutOfRangeException, p2: TopicAuthorizationException, p3: ApiException}
    async with mock_env(nodes=(0,)) as (brokers, admin):
        for first, exception in expected.items():
            brokers.prepare_response(brokers.metadata_response((topic_metadata(
                "my_topic", leaders, error=Errors.LEADER_NOT_AVAILABLE, partition_error=Errors.LEADER_NOT_AVAILABLE),)))
            brokers.prepare_response(brokers.metadata_response((topic_metadata(
                "my_topic", leaders, error=Errors.UNKNOWN_TOPIC_OR_PARTITION),)))
            brokers.prepare_response(brokers.metadata_response((topic_metadata("my_topic", leaders),)))
            brokers.prepare_response(answer)
            ordered = {first: offsets[first], **{tp: o for tp, o in offsets.items() if tp != first}}
            with pytest.raises(exception) as info:
                await admin.delete_records(ordered)
            assert type(info.value) is exception
        # Partition 0 alone: its low watermark.
        brokers.prepare_response(brokers.metadata_response((topic_metadata("my_topic", leaders),)))
        brokers.prepare_response(answer)
        assert await admin.delete_records({p0: RecordsToDelete.before(3)}) == {p0: DeletedRecords(3)}
        assert brokers.prepared == []
        requests = [r for _, r in brokers.sent()]
        assert all(isinstance(r, DeleteRecordsRequest) for r in requests) and len(requests) == 4
        assert requests[0].offsets() == {p1: 10, p0: 3, p2: 10, p3: 10}
        # The brokers may wait for the replicas as long as the API timeout (default.api.timeout.ms).
        assert requests[0].timeout_ms == 60000


def list_offsets_response(results: dict[TopicPartition, tuple[Errors, int, int, int]]) -> ListOffsetsResponse:
    """Mirrors ListOffsetsResponse#singletonListOffsetsTopicResponse: (error, timestamp, offset, epoch) per partition."""
    by_topic: dict[str, list[ListOffsetsPartitionResponse]] = {}
    for tp, (error, timestamp, offset, epoch) in results.items():
        by_topic.setdefault(tp.topic, []).append(ListOffsetsPartitionResponse(
            partition_index=tp.partition, error_code=error.code, timestamp=timestamp, offset=offset, leader_epoch=epoch))
    return ListOffsetsResponse(topics=tuple(ListOffsetsTopicResponse(name=t, partitions=tuple(ps))
                                            for t, ps in by_topic.items()))


async def test_list_offsets() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsets: one ListOffsets to the leader, each spec's
    timestamp sent, each partition's offset, timestamp and leader epoch returned."""
    tp0, tp1, tp2, tp3 = (TopicPartition(t, 0) for t in ("foo", "bar", "baz", "qux"))
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response(tuple(topic_metadata(t, {0: 0}) for t in ("foo", "bar", "baz", "qux"))))
        brokers.prepare_response(list_offsets_response({
            tp0: (Errors.NONE, -1, 123, 321), tp1: (Errors.NONE, -1, 234, 432),
            tp2: (Errors.NONE, 123456789, 345, 543), tp3: (Errors.NONE, 234567890, 456, 654)}))
        now = admin.time.milliseconds()
        offsets = await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.earliest(),
                                            tp2: OffsetSpec.for_timestamp(now), tp3: OffsetSpec.max_timestamp()})
        assert offsets == {tp0: ListOffsetsResultInfo(123, -1, 321), tp1: ListOffsetsResultInfo(234, -1, 432),
                           tp2: ListOffsetsResultInfo(345, 123456789, 543),
                           tp3: ListOffsetsResultInfo(456, 234567890, 654)}
        [(node, request)] = brokers.sent()
        assert node == 0 and isinstance(request, ListOffsetsRequest)
        assert {tp: p.timestamp for tp, p in request.partition_timestamps().items()} == {tp0: ListOffsetsRequest.LATEST_TIMESTAMP,
                                                  tp1: ListOffsetsRequest.EARLIEST_TIMESTAMP, tp2: now,
                                                  tp3: ListOffsetsRequest.MAX_TIMESTAMP}


async def test_list_offsets_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsRetriableErrors: LEADER_NOT_AVAILABLE for foo-0
    refreshes the metadata and asks broker 0 again for foo-0 alone."""
    tp0, tp1, tp2 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
    async with mock_env(nodes=(0, 1)) as (brokers, admin):
        brokers.topics = {"foo": topic_metadata("foo", {0: 0, 1: 0}), "bar": topic_metadata("bar", {0: 1})}
        brokers.prepare_response(brokers.metadata_response())
        brokers.prepare_response(list_offsets_response({tp0: (Errors.LEADER_NOT_AVAILABLE, -1, 123, 321),
                                                        tp1: (Errors.NONE, -1, 987, 789)}), node=0)
        brokers.prepare_response(list_offsets_response({tp2: (Errors.NONE, -1, 456, 654)}), node=1)
        brokers.prepare_response(brokers.metadata_response())
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -1, 345, 543)}), node=0)
        offsets = await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.latest(), tp2: OffsetSpec.latest()})
        assert offsets == {tp0: ListOffsetsResultInfo(345, -1, 543), tp1: ListOffsetsResultInfo(987, -1, 789),
                           tp2: ListOffsetsResultInfo(456, -1, 654)}
        assert brokers.prepared == []
        assert [(n, set(r.partition_timestamps())) for n, r in brokers.sent()] == [
            (0, {tp0, tp1}), (1, {tp2}), (0, {tp0})]


async def test_list_offsets_non_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsNonRetriableErrors: TOPIC_AUTHORIZATION_FAILED
    fails the call."""
    tp0 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0, 1)) as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0}),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.TOPIC_AUTHORIZATION_FAILED, -1, -1, -1)}))
        with pytest.raises(TopicAuthorizationException):
            await admin.list_offsets({tp0: OffsetSpec.latest()})
        assert len(brokers.sent()) == 1


# --------------------------------------------------------------------------------------------
# Reassignments
# --------------------------------------------------------------------------------------------


def alter_reassignments_response(partitions: dict[str, Errors], error: Errors = Errors.NONE,
                                 message: str | None = None) -> AlterPartitionReassignmentsResponse:
    return AlterPartitionReassignmentsResponse(error_code=error.code, error_message=message, responses=tuple(
        ReassignableTopicResponse(name=t, partitions=(ReassignablePartitionResponse(
            partition_index=0, error_code=e.code, error_message=None if e is Errors.NONE else e.message),))
        for t, e in partitions.items()))


async def test_alter_partition_reassignments() -> None:
    """Mirrors KafkaAdminClientTest#testAlterPartitionReassignments, its six cases in order."""
    from kafka_ref.common.errors import InvalidReplicaAssignmentException

    tp1, tp2 = TopicPartition("A", 0), TopicPartition("B", 0)
    reassignments = {tp1: None, tp2: [1, 2, 3]}
    async with mock_env() as (brokers, admin):
        # 1. Fewer answers than partitions sent.
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE}))
        with pytest.raises(UnknownServerException, match="^The server returned too less results.Expected 2 but received 1$"):
            await admin.alter_partition_reassignments(reassignments)
        # 2. NOT_CONTROLLER: fresh metadata names broker 1, which answers.
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE, "B": Errors.NONE}, Errors.NOT_CONTROLLER,
                                                              Errors.NOT_CONTROLLER.message))
        brokers.prepare_response(brokers.metadata_response((), controller=1))
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE, "B": Errors.NONE}))
        assert await admin.alter_partition_reassignments(reassignments) == {tp1: None, tp2: None}
        # 3. A partition-level error fails that partition only.
        brokers.prepare_response(alter_reassignments_response({"A": Errors.INVALID_REPLICA_ASSIGNMENT, "B": Errors.NONE}))
        with pytest.raises(InvalidReplicaAssignmentException):
            await admin.alter_partition_reassignments(reassignments)
        # 4. A top-level error fails every partition with its message.
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE, "B": Errors.NONE},
                                                              Errors.CLUSTER_AUTHORIZATION_FAILED,
                                                              "this is custom error message"))
        with pytest.raises(ClusterAuthorizationException, match="^this is custom error message$"):
            await admin.alter_partition_reassignments({tp2: [1, 2, 3], tp1: None})
        # 5. Unrepresentable partitions fail at once; the rest is sent.
        invalid_topic, invalid_partition = TopicPartition("", 0), TopicPartition("ABC", -1)
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE}))
        with pytest.raises(InvalidTopicException, match="partition index -1"):
            await admin.alter_partition_reassignments({invalid_partition: [1, 2, 3], invalid_topic: [1, 2, 3],
                                                       tp1: [1, 2, 3]})
        with pytest.raises(InvalidTopicException, match="cannot be represented in a request"):
            await admin.alter_partition_reassignments({invalid_topic: [1, 2, 3]})
        # 6. Success.
        brokers.prepare_response(alter_reassignments_response({"A": Errors.NONE, "B": Errors.NONE}))
        assert await admin.alter_partition_reassignments(reassignments) == {tp1: None, tp2: None}
        sent = brokers.sent()
        assert [n for n, _ in sent] == [0, 0, 1, 1, 1, 1, 1]
        # Case 5 sent A-0 alone; a call with only unrepresentable partitions sends nothing.
        assert sent[5][1].reassignments() == {tp1: (1, 2, 3)}
        assert sent[0][1].reassignments() == {tp1: None, tp2: (1, 2, 3)}
        assert brokers.prepared == []


async def test_list_partition_reassignments() -> None:
    """Mirrors KafkaAdminClientTest#testListPartitionReassignments: NOT_CONTROLLER retried at the new
    controller, a top-level UNKNOWN_TOPIC_OR_PARTITION raised, and the reassignments returned."""
    tp1, tp2 = TopicPartition("A", 0), TopicPartition("B", 0)
    ongoing = (OngoingTopicReassignment(name="A", partitions=(OngoingPartitionReassignment(
        partition_index=0, replicas=(1, 2, 3, 4, 5, 6), adding_replicas=(4, 5, 6), removing_replicas=(1, 2, 3)),)),
               OngoingTopicReassignment(name="B", partitions=(OngoingPartitionReassignment(
                   partition_index=0, replicas=(1, 2, 3, 4, 5, 6), adding_replicas=(4, 5, 6),
                   removing_replicas=(1, 2, 3)),)))
    expected = {tp: PartitionReassignment((1, 2, 3, 4, 5, 6), (4, 5, 6), (1, 2, 3)) for tp in (tp1, tp2)}
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(ListPartitionReassignmentsResponse(error_code=Errors.NOT_CONTROLLER.code,
                                                                    error_message=Errors.NOT_CONTROLLER.message))
        brokers.prepare_response(brokers.metadata_response((), controller=1))
        brokers.prepare_response(ListPartitionReassignmentsResponse(topics=ongoing))
        assert await admin.list_partition_reassignments() == expected
        brokers.prepare_response(ListPartitionReassignmentsResponse(
            error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, error_message=Errors.UNKNOWN_TOPIC_OR_PARTITION.message))
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.list_partition_reassignments([tp1, tp2])
        brokers.prepare_response(ListPartitionReassignmentsResponse(topics=ongoing))
        assert await admin.list_partition_reassignments() == expected
        sent = brokers.sent()
        assert [n for n, _ in sent] == [0, 1, 1, 1]
        assert all(isinstance(r, ListPartitionReassignmentsRequest) for _, r in sent)
        assert [r.partitions() for _, r in sent] == [None, None, [tp1, tp2], None]


# --------------------------------------------------------------------------------------------
# Consumer groups
# --------------------------------------------------------------------------------------------

GROUP_ID = "group-0"


def find_coordinator_response(error: Errors, node: int | None = 0, key: str = GROUP_ID) -> FindCoordinatorResponse:
    """Mirrors KafkaAdminClientTest#prepareFindCoordinatorResponse (no node: -1, "", -1)."""
    return FindCoordinatorResponse(coordinators=(Coordinator(
        key=key, node_id=-1 if node is None else node, host="" if node is None else "localhost",
        port=-1 if node is None else 8121 + node, error_code=error.code,
        error_message=None if error is Errors.NONE else error.message),))


def describe_groups_response(*groups: DescribedGroup) -> DescribeGroupsResponse:
    return DescribeGroupsResponse(groups=groups)


def described_group(error: Errors, protocol_type: str = "", members: tuple[DescribedGroupMember, ...] = (),
                    group_id: str = GROUP_ID, state: str = "") -> DescribedGroup:
    """Mirrors DescribeGroupsResponse#groupMetadata."""
    return DescribedGroup(error_code=error.code, group_id=group_id, group_state=state, protocol_type=protocol_type,
                          protocol_data="", members=members)


def offset_fetch_response(error: Errors, offsets: dict[TopicPartition, int] | None = None) -> OffsetFetchResponse:
    """Mirrors KafkaAdminClientTest#offsetFetchResponse (group-level error, committed offsets)."""
    by_topic: dict[str, list[OffsetFetchResponsePartitions]] = {}
    for tp, offset in (offsets or {}).items():
        by_topic.setdefault(tp.topic, []).append(OffsetFetchResponsePartitions(
            partition_index=tp.partition, committed_offset=offset, committed_leader_epoch=-1, metadata="", error_code=0))
    return OffsetFetchResponse(groups=(OffsetFetchResponseGroup(group_id=GROUP_ID, error_code=error.code, topics=tuple(
        OffsetFetchResponseTopics(name=t, partitions=tuple(ps)) for t, ps in by_topic.items())),))


def leave_group_response(error: Errors, members: dict[str, Errors] | None = None) -> LeaveGroupResponse:
    return LeaveGroupResponse(error_code=error.code, members=tuple(
        MemberResponse(member_id="", group_instance_id=i, error_code=e.code) for i, e in (members or {}).items()))


def sent_types(brokers: MockBrokers) -> list[str]:
    return [type(r).__name__.removesuffix("Request") for _, r in brokers.sent()]


async def test_list_consumer_groups() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroups (four brokers, retries=2).

    A Metadata answer without brokers is retried; each broker's ListGroups is asked (broker 1 twice
    more after COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS); only consumer-protocol
    groups are listed; broker 3's UNKNOWN_SERVER_ERROR fails the call (ListConsumerGroupsResult#all).
    """
    async with mock_env(nodes=(0, 1, 2, 3), retries=2) as (brokers, admin):
        brokers.prepare_response(MetadataResponse(brokers=(), cluster_id=CLUSTER_ID, controller_id=-1))
        brokers.prepare_response(brokers.metadata_response(()))

        def listed(*groups: tuple[str, str]) -> ListGroupsResponse:
            return ListGroupsResponse(groups=tuple(ListedGroup(group_id=g, protocol_type=p, group_state="Stable")
                                                   for g, p in groups))

        brokers.prepare_response(listed(("group-1", "consumer"), ("group-connect-1", "connector")), node=0)
        brokers.prepare_response(ListGroupsResponse(error_code=Errors.COORDINATOR_NOT_AVAILABLE.code), node=1)
        brokers.prepare_response(ListGroupsResponse(error_code=Errors.COORDINATOR_LOAD_IN_PROGRESS.code), node=1)
        brokers.prepare_response(listed(("group-2", "consumer"), ("group-connect-2", "connector")), node=1)
        brokers.prepare_response(listed(("group-3", "consumer"), ("group-connect-3", "connector")), node=2)
        brokers.prepare_response(ListGroupsResponse(error_code=Errors.UNKNOWN_SERVER_ERROR.code), node=3)
        with pytest.raises(UnknownServerException):
            await admin.list_consumer_groups()
        assert brokers.prepared == []
        assert [n for n, _ in brokers.sent()] == [0, 1, 1, 1, 2, 3]
        # Without the failing broker the three consumer groups are listed, each with its state.
        brokers.nodes = (0, 1, 2)
        brokers.prepare_response(listed(("group-1", "consumer"), ("group-connect-1", "connector")), node=0)
        brokers.prepare_response(listed(("group-2", "consumer")), node=1)
        brokers.prepare_response(listed(("group-3", "consumer"), ("group-connect-3", "connector")), node=2)
        listings = await admin.list_consumer_groups()
        assert [(g.group_id, g.is_simple_consumer_group, g.state) for g in listings] == [
            ("group-1", False, "Stable"), ("group-2", False, "Stable"), ("group-3", False, "Stable")]


async def test_list_consumer_groups_metadata_failure() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupsMetadataFailure (retries=0): Metadata
    without brokers leaves no one to ask, and with no retry left the call fails (TimeoutException,
    a KafkaException)."""
    async with mock_env(retries=0) as (brokers, admin):
        brokers.prepare_response(MetadataResponse(brokers=(), cluster_id=CLUSTER_ID, controller_id=-1))
        with pytest.raises(TimeoutException) as info:
            await admin.list_consumer_groups()
        assert isinstance(info.value.__cause__, StaleMetadataException)
        assert brokers.sent() == []


@pytest.mark.parametrize("call", ["alter_offsets", "describe", "list_offsets", "delete_groups", "delete_offsets",
                                  "remove_members"])
async def test_group_calls_num_retries(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testOffsetCommitNumRetries, #testDescribeConsumerGroupNumRetries,
    #testListConsumerGroupOffsetsNumRetries, #testDeleteConsumerGroupsNumRetries,
    #testDeleteConsumerGroupOffsetsNumRetries and #testRemoveMembersFromGroupNumRetries (retries=0):
    NOT_COORDINATOR from the coordinator would need a retry, so the call fails with TimeoutException."""
    tp1 = TopicPartition("foo", 0)
    not_coordinator = {
        "alter_offsets": OffsetCommitResponse.of({tp1: Errors.NOT_COORDINATOR.code}),
        "describe": describe_groups_response(described_group(Errors.NOT_COORDINATOR)),
        "list_offsets": offset_fetch_response(Errors.NOT_COORDINATOR),
        "delete_groups": DeleteGroupsResponse(results=(DeletableGroupResult(group_id=GROUP_ID,
                                                                            error_code=Errors.NOT_COORDINATOR.code),)),
        "delete_offsets": OffsetDeleteResponse(error_code=Errors.NOT_COORDINATOR.code),
        "remove_members": leave_group_response(Errors.NOT_COORDINATOR),
    }[call]
    async with mock_env(retries=0) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(not_coordinator)
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        run = {
            "alter_offsets": lambda: admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)}),
            "describe": lambda: admin.describe_consumer_groups([GROUP_ID]),
            "list_offsets": lambda: admin.list_consumer_group_offsets(GROUP_ID),
            "delete_groups": lambda: admin.delete_consumer_groups([GROUP_ID]),
            "delete_offsets": lambda: admin.delete_consumer_group_offsets(GROUP_ID, [tp1]),
            "remove_members": lambda: admin.remove_members_from_consumer_group(GROUP_ID, ["instance-1", "instance-2"]),
        }[call]
        with pytest.raises(TimeoutException):
            await run()
        assert len(brokers.sent()) == 2
        brokers.prepared.clear()


@pytest.mark.parametrize("call", ["alter_offsets", "describe", "list_offsets", "delete_groups", "delete_offsets",
                                  "remove_members"])
async def test_group_calls_retry_backoff(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testOffsetCommitRetryBackoff, #testDescribeConsumerGroupRetryBackoff,
    #testListConsumerGroupOffsetsRetryBackoff, #testDeleteConsumerGroupsRetryBackoff,
    #testDeleteConsumerGroupOffsetsRetryBackoff and #testRemoveMembersFromGroupRetryBackoff:
    after NOT_COORDINATOR the coordinator is looked up again and the second attempt comes one
    retry backoff (100 ms, within the jitter bounds) after the first."""
    tp1 = TopicPartition("foo", 0)
    responses = {
        "alter_offsets": (OffsetCommitResponse.of({tp1: Errors.NOT_COORDINATOR.code}),
                          OffsetCommitResponse.of({tp1: Errors.NONE.code})),
        "describe": (describe_groups_response(described_group(Errors.NOT_COORDINATOR)),
                     describe_groups_response(described_group(Errors.NONE, "consumer"))),
        "list_offsets": (offset_fetch_response(Errors.NOT_COORDINATOR), offset_fetch_response(Errors.NONE)),
        "delete_groups": tuple(DeleteGroupsResponse(results=(DeletableGroupResult(group_id=GROUP_ID, error_code=e.code),))
                               for e in (Errors.NOT_COORDINATOR, Errors.NONE)),
        "delete_offsets": (OffsetDeleteResponse(error_code=Errors.NOT_COORDINATOR.code),
                           OffsetDeleteResponse.of({tp1: Errors.NONE.code})),
        "remove_members": (leave_group_response(Errors.NOT_COORDINATOR),
                           leave_group_response(Errors.NONE, {"instance-1": Errors.NONE})),
    }[call]
    async with mock_env(retry_backoff_ms=100) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(responses[0])
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(responses[1])
        run = {
            "alter_offsets": lambda: admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)}),
            "describe": lambda: admin.describe_consumer_groups([GROUP_ID]),
            "list_offsets": lambda: admin.list_consumer_group_offsets(GROUP_ID),
            "delete_groups": lambda: admin.delete_consumer_groups([GROUP_ID]),
            "delete_offsets": lambda: admin.delete_consumer_group_offsets(GROUP_ID, [tp1]),
            "remove_members": lambda: admin.remove_members_from_consumer_group(GROUP_ID, ["instance-1"]),
        }[call]
        await run()
        assert brokers.prepared == []
        first, second = [t for _, r, t in brokers.requests if not isinstance(r, (MetadataRequest, FindCoordinatorRequest))]
        assert 80 <= second - first <= 120
        assert sent_types(brokers)[0] == "FindCoordinator" and sent_types(brokers)[2] == "FindCoordinator"


async def test_describe_consumer_groups() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeConsumerGroups (one broker).

    FindCoordinator's COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS are retried;
    DescribeGroups' COORDINATOR_LOAD_IN_PROGRESS is asked again of the same coordinator,
    NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE look it up again; the members come back with
    their decoded assignments.
    """
    from kafka_ref.clients.admin_groups import MemberDescription

    partitions = tuple(TopicPartition("my_topic", p) for p in range(3))
    assignment = ConsumerProtocol.serialize_assignment(Assignment(partitions))
    members = (DescribedGroupMember(member_id="0", group_instance_id="instance1", client_id="clientId0",
                                    client_host="clientHost", member_assignment=assignment),
               DescribedGroupMember(member_id="1", group_instance_id="instance2", client_id="clientId1",
                                    client_host="clientHost", member_assignment=assignment))
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE, None))
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_LOAD_IN_PROGRESS, None))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(describe_groups_response(described_group(Errors.COORDINATOR_LOAD_IN_PROGRESS)))
        brokers.prepare_response(describe_groups_response(described_group(Errors.NOT_COORDINATOR)))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(describe_groups_response(described_group(Errors.COORDINATOR_NOT_AVAILABLE)))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(describe_groups_response(described_group(Errors.NONE, "consumer", members)))
        described = await admin.describe_consumer_groups([GROUP_ID])
        assert list(described) == [GROUP_ID]
        assert described[GROUP_ID].group_id == GROUP_ID
        assert described[GROUP_ID].members == (
            MemberDescription("0", "instance1", "clientId0", "clientHost", frozenset(partitions)),
            MemberDescription("1", "instance2", "clientId1", "clientHost", frozenset(partitions)))
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator"] * 3 + ["DescribeGroups"] * 2 + [
            "FindCoordinator", "DescribeGroups", "FindCoordinator", "DescribeGroups"]


async def test_describe_multiple_consumer_groups() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeMultipleConsumerGroups: both groups are described,
    each at its coordinator (here one DescribeGroups per group)."""
    partitions = tuple(TopicPartition("my_topic", p) for p in range(3))
    assignment = ConsumerProtocol.serialize_assignment(Assignment(partitions))
    members = (DescribedGroupMember(member_id="0", client_id="clientId0", client_host="clientHost",
                                    member_assignment=assignment),
               DescribedGroupMember(member_id="1", client_id="clientId1", client_host="clientHost",
                                    member_assignment=assignment))
    async with mock_env(nodes=(0,)) as (brokers, admin):
        for group in (GROUP_ID, "group-connect-0"):
            brokers.prepare_response(find_coordinator_response(Errors.NONE, 0, key=group))
            brokers.prepare_response(describe_groups_response(described_group(Errors.NONE, "consumer", members, group)))
        described = await admin.describe_consumer_groups([GROUP_ID, "group-connect-0"])
        assert set(described) == {GROUP_ID, "group-connect-0"}
        assert [len(d.members) for d in described.values()] == [2, 2]


async def test_describe_non_consumer_groups() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeNonConsumerGroups: a group of another protocol type
    fails with ValueError (Kafka's IllegalArgumentException)."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(describe_groups_response(described_group(Errors.NONE, "non-consumer")))
        with pytest.raises(ValueError, match=r"^GroupId group-0 is not a consumer group \(non-consumer\)\.$"):
            await admin.describe_consumer_groups([GROUP_ID])


async def test_list_consumer_group_offsets_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupOffsetsRetriableErrors: LOAD_IN_PROGRESS asks
    the coordinator again, NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE look it up again."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.COORDINATOR_LOAD_IN_PROGRESS))
        brokers.prepare_response(offset_fetch_response(Errors.NOT_COORDINATOR))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.COORDINATOR_NOT_AVAILABLE))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.NONE))
        assert await admin.list_consumer_group_offsets(GROUP_ID) == {}
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator", "OffsetFetch", "OffsetFetch", "FindCoordinator", "OffsetFetch",
                                       "FindCoordinator", "OffsetFetch"]


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.INVALID_GROUP_ID, Errors.GROUP_ID_NOT_FOUND,
                                   Errors.UNKNOWN_MEMBER_ID, Errors.STALE_MEMBER_EPOCH])
async def test_list_consumer_group_offsets_non_retriable_errors(error: Errors) -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupOffsetsNonRetriableErrors."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(error))
        with pytest.raises(error.exception_class):
            await admin.list_consumer_group_offsets(GROUP_ID)
        assert len(brokers.sent()) == 2


async def test_list_consumer_group_offsets() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupOffsets: every partition answered is listed,
    one without a committed offset (-1) as None."""
    p0, p1, p2, p3 = (TopicPartition("my_topic", p) for p in range(4))
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE, None))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.COORDINATOR_LOAD_IN_PROGRESS))
        brokers.prepare_response(offset_fetch_response(Errors.NOT_COORDINATOR))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.COORDINATOR_NOT_AVAILABLE))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(offset_fetch_response(Errors.NONE, {p0: 10, p1: 0, p2: 20, p3: -1}))
        offsets = await admin.list_consumer_group_offsets(GROUP_ID)
        assert offsets == {p0: OffsetAndMetadata(10), p1: OffsetAndMetadata(0), p2: OffsetAndMetadata(20), p3: None}
        assert brokers.prepared == []


async def test_delete_consumer_group_offsets() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupOffsets: bar-0's GROUP_SUBSCRIBED_TO_TOPIC
    fails the call; foo-0 alone succeeds."""
    from kafka_ref.common.errors import GroupSubscribedToTopicException

    tp1, tp2 = TopicPartition("foo", 0), TopicPartition("bar", 0)
    answer = OffsetDeleteResponse.of({tp1: Errors.NONE.code, tp2: Errors.GROUP_SUBSCRIBED_TO_TOPIC.code})
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(answer)
        with pytest.raises(GroupSubscribedToTopicException):
            await admin.delete_consumer_group_offsets(GROUP_ID, [tp1, tp2])
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(answer)
        assert await admin.delete_consumer_group_offsets(GROUP_ID, [tp1]) is None


async def test_delete_consumer_group_offsets_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupOffsetsRetriableErrors."""
    tp1 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetDeleteResponse(error_code=Errors.COORDINATOR_LOAD_IN_PROGRESS.code))
        brokers.prepare_response(OffsetDeleteResponse(error_code=Errors.NOT_COORDINATOR.code))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetDeleteResponse(error_code=Errors.COORDINATOR_NOT_AVAILABLE.code))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetDeleteResponse.of({tp1: Errors.NONE.code}))
        assert await admin.delete_consumer_group_offsets(GROUP_ID, [tp1]) is None
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator", "OffsetDelete", "OffsetDelete", "FindCoordinator",
                                       "OffsetDelete", "FindCoordinator", "OffsetDelete"]


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.INVALID_GROUP_ID, Errors.GROUP_ID_NOT_FOUND])
async def test_delete_consumer_group_offsets_non_retriable_errors(error: Errors) -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupOffsetsNonRetriableErrors."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetDeleteResponse(error_code=error.code))
        with pytest.raises(error.exception_class):
            await admin.delete_consumer_group_offsets(GROUP_ID, [TopicPartition("foo", 0)])


@pytest.mark.parametrize("call", ["delete_offsets", "alter_offsets"])
async def test_find_coordinator_retriable_errors(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupOffsetsFindCoordinatorRetriableErrors and
    #testAlterConsumerGroupOffsetsFindCoordinatorRetriableErrors: FindCoordinator is asked again
    after COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS."""
    tp1 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE, None))
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_LOAD_IN_PROGRESS, None))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        if call == "delete_offsets":
            brokers.prepare_response(OffsetDeleteResponse.of({tp1: Errors.NONE.code}))
            assert await admin.delete_consumer_group_offsets(GROUP_ID, [tp1]) is None
        else:
            brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.NONE.code}))
            assert await admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)}) is None
        assert sent_types(brokers)[:3] == ["FindCoordinator"] * 3 and len(brokers.sent()) == 4


@pytest.mark.parametrize("call", ["delete_offsets", "alter_offsets"])
async def test_find_coordinator_non_retriable_errors(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupOffsetsFindCoordinatorNonRetriableErrors and
    #testAlterConsumerGroupOffsetsFindCoordinatorNonRetriableErrors: GROUP_AUTHORIZATION_FAILED from
    FindCoordinator fails the call."""
    from kafka_ref.common.errors import GroupAuthorizationException

    tp1 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.GROUP_AUTHORIZATION_FAILED, None))
        with pytest.raises(GroupAuthorizationException):
            if call == "delete_offsets":
                await admin.delete_consumer_group_offsets(GROUP_ID, [tp1])
            else:
                await admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)})
        assert sent_types(brokers) == ["FindCoordinator"]


async def test_remove_members_from_group_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testRemoveMembersFromGroupRetriableErrors."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.COORDINATOR_LOAD_IN_PROGRESS))
        brokers.prepare_response(leave_group_response(Errors.NOT_COORDINATOR))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.COORDINATOR_NOT_AVAILABLE))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.NONE, {"instance-1": Errors.NONE}))
        assert await admin.remove_members_from_consumer_group(GROUP_ID, ["instance-1"]) is None
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator", "LeaveGroup", "LeaveGroup", "FindCoordinator", "LeaveGroup",
                                       "FindCoordinator", "LeaveGroup"]


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.INVALID_GROUP_ID, Errors.GROUP_ID_NOT_FOUND])
async def test_remove_members_from_group_non_retriable_errors(error: Errors) -> None:
    """Mirrors KafkaAdminClientTest#testRemoveMembersFromGroupNonRetriableErrors."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(error))
        with pytest.raises(error.exception_class):
            await admin.remove_members_from_consumer_group(GROUP_ID, ["instance-1"])


async def test_remove_members_from_group() -> None:
    """Mirrors KafkaAdminClientTest#testRemoveMembersFromGroup.

    A top-level UNKNOWN_SERVER_ERROR fails the call; a member-level UNKNOWN_MEMBER_ID fails it
    with that error; a member missing from the answer fails it with ValueError (Kafka's
    IllegalArgumentException); then success. Removing all: the members come from
    describeConsumerGroups (its own coordinator lookup), and a member error fails the call with a
    KafkaException caused by it.
    """
    from kafka_ref.common.errors import KafkaException, UnknownMemberIdException

    one, two = "instance-1", "instance-2"
    partitions = tuple(TopicPartition("my_topic", p) for p in (1, 2, 3))
    assignment = ConsumerProtocol.serialize_assignment(Assignment(partitions))
    group = described_group(Errors.NONE, "consumer", tuple(
        DescribedGroupMember(member_id=f"{i}-member", group_instance_id=i, client_id="clientId", client_host="clientHost",
                             member_assignment=assignment) for i in (one, two)))
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_LOAD_IN_PROGRESS, None))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.COORDINATOR_LOAD_IN_PROGRESS))
        brokers.prepare_response(leave_group_response(Errors.UNKNOWN_SERVER_ERROR))
        with pytest.raises(UnknownServerException):
            await admin.remove_members_from_consumer_group(GROUP_ID, [one, two])
        # One member-level error.
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.NONE, {one: Errors.UNKNOWN_MEMBER_ID, two: Errors.NONE}))
        with pytest.raises(UnknownMemberIdException):
            await admin.remove_members_from_consumer_group(GROUP_ID, [one, two])
        # A member the answer leaves out.
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.NONE, {two: Errors.NONE}))
        with pytest.raises(ValueError, match="was not included in the removal response"):
            await admin.remove_members_from_consumer_group(GROUP_ID, [one, two])
        # Success.
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.NONE, {two: Errors.NONE, one: Errors.NONE}))
        assert await admin.remove_members_from_consumer_group(GROUP_ID, [one, two]) is None
        # Remove all: the members come from describeConsumerGroups; one member error fails the call.
        for leave_answer in (leave_group_response(Errors.NONE, {one: Errors.UNKNOWN_MEMBER_ID, two: Errors.NONE}),
                             leave_group_response(Errors.NONE, {two: Errors.NONE, one: Errors.NONE})):
            brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
            brokers.prepare_response(describe_groups_response(group))
            brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
            brokers.prepare_response(leave_answer)
        with pytest.raises(KafkaException) as info:
            await admin.remove_members_from_consumer_group(GROUP_ID)
        assert type(info.value) is KafkaException
        assert isinstance(info.value.__cause__, UnknownMemberIdException)
        # Remove all, every member leaving.
        assert await admin.remove_members_from_consumer_group(GROUP_ID) is None
        assert brokers.prepared == []
        leaves = [r for _, r in brokers.sent() if isinstance(r, LeaveGroupRequest)]
        assert [tuple(m.group_instance_id for m in r.members) for r in leaves] == [(one, two)] * 7
        assert all(m.member_id == "" and m.reason == "member was removed by an admin" for r in leaves for m in r.members)


async def test_offset_commit_with_multiple_errors() -> None:
    """Mirrors KafkaAdminClientTest#testOffsetCommitWithMultipleErrors (retries=0): foo-1's
    UNKNOWN_TOPIC_OR_PARTITION is that partition's result, not a retry, so the call raises it."""
    foo0, foo1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    async with mock_env(retries=0) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({foo0: Errors.NONE.code,
                                                          foo1: Errors.UNKNOWN_TOPIC_OR_PARTITION.code}))
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.alter_consumer_group_offsets(GROUP_ID, {foo0: OffsetAndMetadata(123), foo1: OffsetAndMetadata(456)})
        [_, (_, commit)] = brokers.sent()
        assert commit.offsets() == {foo0: 123, foo1: 456}


async def test_alter_consumer_group_offsets() -> None:
    """Mirrors KafkaAdminClientTest#testAlterConsumerGroupOffsets: both partitions committed."""
    tp1, tp2 = TopicPartition("foo", 0), TopicPartition("bar", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.NONE.code, tp2: Errors.NONE.code}))
        assert await admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123),
                                                                   tp2: OffsetAndMetadata(456)}) is None
        [_, (_, commit)] = brokers.sent()
        assert isinstance(commit, OffsetCommitRequest) and commit.group_id == GROUP_ID
        assert commit.offsets() == {tp1: 123, tp2: 456}
        assert (commit.generation_id_or_member_epoch, commit.member_id) == (-1, "")


async def test_alter_consumer_group_offsets_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testAlterConsumerGroupOffsetsRetriableErrors: COORDINATOR_NOT_AVAILABLE
    and NOT_COORDINATOR look the coordinator up again, COORDINATOR_LOAD_IN_PROGRESS and
    REBALANCE_IN_PROGRESS ask the same one again."""
    tp1 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.COORDINATOR_NOT_AVAILABLE.code}))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.COORDINATOR_LOAD_IN_PROGRESS.code}))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.NOT_COORDINATOR.code}))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.REBALANCE_IN_PROGRESS.code}))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: Errors.NONE.code}))
        assert await admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)}) is None
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator", "OffsetCommit", "FindCoordinator", "OffsetCommit",
                                       "OffsetCommit", "FindCoordinator", "OffsetCommit", "OffsetCommit"]


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.INVALID_GROUP_ID, Errors.GROUP_ID_NOT_FOUND,
                                   Errors.STALE_MEMBER_EPOCH])
async def test_alter_consumer_group_offsets_non_retriable_errors(error: Errors) -> None:
    """Mirrors KafkaAdminClientTest#testAlterConsumerGroupOffsetsNonRetriableErrors."""
    tp1 = TopicPartition("foo", 0)
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(OffsetCommitResponse.of({tp1: error.code}))
        with pytest.raises(error.exception_class):
            await admin.alter_consumer_group_offsets(GROUP_ID, {tp1: OffsetAndMetadata(123)})
        assert len(brokers.sent()) == 2


async def test_list_offsets_metadata_retriable_errors() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsMetadataRetriableErrors: a topic-level
    LEADER_NOT_AVAILABLE and then a partition-level UNKNOWN_TOPIC_OR_PARTITION (the topic itself
    known) are looked up again; then each leader answers."""
    tp0, tp1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    async with mock_env(nodes=(0, 1)) as (brokers, admin):
        leaders = {0: 0, 1: 1}
        brokers.prepare_response(brokers.metadata_response((topic_metadata(
            "foo", leaders, error=Errors.LEADER_NOT_AVAILABLE, partition_error=Errors.LEADER_NOT_AVAILABLE),)))
        brokers.prepare_response(brokers.metadata_response((topic_metadata(
            "foo", leaders, partition_error=Errors.UNKNOWN_TOPIC_OR_PARTITION),)))
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", leaders),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -1, 345, 543)}), node=0)
        brokers.prepare_response(list_offsets_response({tp1: (Errors.NONE, -1, 789, 987)}), node=1)
        assert await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.latest()}) == {
            tp0: ListOffsetsResultInfo(345, -1, 543), tp1: ListOffsetsResultInfo(789, -1, 987)}
        assert brokers.prepared == []
        assert [n for n, _ in brokers.sent()] == [0, 1]


async def test_list_offsets_with_multiple_partitions_leader_change() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsWithMultiplePartitionsLeaderChange: broker 0
    answers NOT_LEADER_OR_FOLLOWER and LEADER_NOT_AVAILABLE; fresh metadata names brokers 1 and 2."""
    tp0, tp1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0, 1: 0}),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NOT_LEADER_OR_FOLLOWER, -1, 345, 543),
                                                        tp1: (Errors.LEADER_NOT_AVAILABLE, -2, 123, 456)}), node=0)
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 1, 1: 2}),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -1, 345, 543)}), node=1)
        brokers.prepare_response(list_offsets_response({tp1: (Errors.NONE, -2, 123, 456)}), node=2)
        assert await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.latest()}) == {
            tp0: ListOffsetsResultInfo(345, -1, 543), tp1: ListOffsetsResultInfo(123, -2, 456)}
        assert brokers.prepared == []
        assert [n for n, _ in brokers.sent()] == [0, 1, 2]


async def test_list_offsets_with_leader_change() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsWithLeaderChange."""
    tp0 = TopicPartition("foo", 0)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0}),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NOT_LEADER_OR_FOLLOWER, -1, 345, 543)}), node=0)
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 1}),)))
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -2, 123, 456)}), node=1)
        assert await admin.list_offsets({tp0: OffsetSpec.latest()}) == {tp0: ListOffsetsResultInfo(123, -2, 456)}
        assert brokers.prepared == []


@pytest.mark.parametrize(("topic_error", "partition_error", "expected"), [
    (Errors.TOPIC_AUTHORIZATION_FAILED, Errors.TOPIC_AUTHORIZATION_FAILED, TopicAuthorizationException),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NONE, UnknownTopicOrPartitionException),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION, UnknownTopicOrPartitionException),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.LEADER_NOT_AVAILABLE, UnknownTopicOrPartitionException),
])
async def test_list_offsets_metadata_non_retriable_errors(topic_error: Errors, partition_error: Errors,
                                                          expected: type) -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsMetadataNonRetriableErrors: an unknown or
    unauthorized topic fails at once, whatever its partitions say."""
    async with mock_env(nodes=(0, 1)) as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((topic_metadata(
            "foo", {0: 0}, error=topic_error, partition_error=partition_error),)))
        with pytest.raises(expected):
            await admin.list_offsets({TopicPartition("foo", 0): OffsetSpec.latest()})
        assert brokers.sent() == []


async def test_list_offsets_partial_response() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsPartialResponse: the partition the leader left out
    fails with ApiException."""
    tp0, tp1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    async with mock_env(nodes=(0, 1)) as (brokers, admin):
        for _ in range(2):
            brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0, 1: 0}),)))
            brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -2, 123, 456)}), node=0)
        with pytest.raises(ApiException) as info:
            await admin.list_offsets({tp1: OffsetSpec.latest(), tp0: OffsetSpec.latest()})
        assert type(info.value) is ApiException
        assert str(info.value) == "The response from broker 0 did not contain a result for topic partition foo-1"
        # The partition that was answered has its offset.
        assert await admin.list_offsets({tp0: OffsetSpec.latest()}) == {tp0: ListOffsetsResultInfo(123, -2, 456)}


async def test_list_offsets_handles_fulfillment_timeouts() -> None:
    """Mirrors KafkaAdminClientTest#testListOffsetsHandlesFulfillmentTimeouts (retries=2).

    REQUEST_TIMED_OUT for foo-0 asks the same leader again (no new lookup): three such answers
    exhaust the retries and the call fails with TimeoutException; two are followed by success.
    """
    tp0, tp1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    with_error = list_offsets_response({tp0: (Errors.REQUEST_TIMED_OUT, -1, -1, -1), tp1: (Errors.NONE, -1, 345, 543)})
    async with mock_env(nodes=(0,), retries=2) as (brokers, admin):
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0, 1: 0}),)))
        for _ in range(3):
            brokers.prepare_response(with_error, node=0)
        with pytest.raises(TimeoutException):
            await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.latest()})
        assert brokers.prepared == []
        assert [type(r).__name__ for _, r, _ in brokers.requests] == ["MetadataRequest"] + ["ListOffsetsRequest"] * 3
        # Once foo-1 is answered only foo-0 is asked again.
        assert [set(r.partition_timestamps()) for _, r in brokers.sent()] == [{tp0, tp1}, {tp0}, {tp0}]
        brokers.requests.clear()
        brokers.prepare_response(brokers.metadata_response((topic_metadata("foo", {0: 0, 1: 0}),)))
        for _ in range(2):
            brokers.prepare_response(with_error, node=0)
        brokers.prepare_response(list_offsets_response({tp0: (Errors.NONE, -1, 789, 987)}), node=0)
        assert await admin.list_offsets({tp0: OffsetSpec.latest(), tp1: OffsetSpec.latest()}) == {
            tp0: ListOffsetsResultInfo(789, -1, 987), tp1: ListOffsetsResultInfo(345, -1, 543)}
        assert brokers.prepared == []


def all_topics_metadata(request: Any) -> bool:
    return isinstance(request, MetadataRequest) and request.is_all_topics()


async def test_successful_retry_after_request_timeout() -> None:
    """Mirrors KafkaAdminClientTest#testSuccessfulRetryAfterRequestTimeout.

    listTopics' first Metadata goes unanswered; it times out after request.timeout.ms (1000 ms)
    and, the 3000 ms API timeout not being reached, is sent again after the backoff and answered.
    """
    async with mock_env(nodes=(0,), request_timeout_ms=1000, retry_backoff_ms=100,
                        retry_backoff_max_ms=100) as (brokers, admin):
        brokers.topics = {"foo": topic_metadata("foo", {0: 0})}
        brokers.prepare_response(NO_ANSWER, matcher=all_topics_metadata)
        assert await admin.list_topics(timeout_ms=3000) == {"foo"}
        first, second = [t for _, r, t in brokers.requests if all_topics_metadata(r)]
        assert second - first == 1000 + 100


@pytest.mark.parametrize(("default_api_timeout_ms", "override_ms"), [(3000, None), (10000, 3000)])
async def test_api_timeout(default_api_timeout_ms: int, override_ms: int | None) -> None:
    """Mirrors KafkaAdminClientTest#testDefaultApiTimeout and #testDefaultApiTimeoutOverride.

    With a 1500 ms request timeout and a 3000 ms API timeout (the default, or the call's own),
    two unanswered attempts use up the API timeout and the call fails with TimeoutException.
    """
    async with mock_env(nodes=(0,), request_timeout_ms=1500, retry_backoff_ms=100,
                        default_api_timeout_ms=default_api_timeout_ms) as (brokers, admin):
        for _ in range(2):
            brokers.prepare_response(NO_ANSWER, matcher=all_topics_metadata)
        start = admin.time.milliseconds()
        with pytest.raises(TimeoutException):
            await admin.list_topics(timeout_ms=override_ms)
        assert admin.time.milliseconds() - start == 3000
        assert brokers.prepared == []
        assert len([r for _, r, _ in brokers.requests if all_topics_metadata(r)]) == 2


async def test_request_timeout_exceeding_default_api_timeout() -> None:
    """Mirrors KafkaAdminClientTest#testRequestTimeoutExceedingDefaultApiTimeout: a request timeout
    (120 s) above the default API timeout (60 s) raises the API timeout to match, so the request
    is still in flight after 60 s and the call fails only at 120 s."""
    async with mock_env(nodes=(0,), request_timeout_ms=120000, retry_backoff_ms=100) as (brokers, admin):
        brokers.prepare_response(NO_ANSWER, matcher=all_topics_metadata)
        assert admin.default_api_timeout_ms == 120000
        start = admin.time.milliseconds()

        async def in_flight_at_60s() -> None:
            await anyio.sleep(60.001)
            assert admin.client.in_flight_request_count(0) == 1

        async with anyio.create_task_group() as tg:
            tg.start_soon(in_flight_at_60s)
            with pytest.raises(TimeoutException):
                await admin.list_topics()
        assert admin.time.milliseconds() - start == 120000


async def test_delete_consumer_groups_with_older_broker() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteConsumerGroupsWithOlderBroker (FindCoordinator one key
    at a time, which is how kafka_ref always asks).

    FindCoordinator's retriable errors are retried and the group is deleted; its
    GROUP_AUTHORIZATION_FAILED fails the call; DeleteGroups' COORDINATOR_LOAD_IN_PROGRESS asks the
    coordinator again, NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE look it up again.
    """
    from kafka_ref.common.errors import GroupAuthorizationException

    def deleted(error: Errors) -> DeleteGroupsResponse:
        return DeleteGroupsResponse(results=(DeletableGroupResult(group_id="groupId", error_code=error.code),))

    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE, None, key="groupId"))
        brokers.prepare_response(find_coordinator_response(Errors.COORDINATOR_LOAD_IN_PROGRESS, None, key="groupId"))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0, key="groupId"))
        brokers.prepare_response(deleted(Errors.NONE))
        assert await admin.delete_consumer_groups(["groupId"]) is None
        brokers.prepare_response(find_coordinator_response(Errors.GROUP_AUTHORIZATION_FAILED, None, key="groupId"))
        with pytest.raises(GroupAuthorizationException):
            await admin.delete_consumer_groups(["groupId"])
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0, key="groupId"))
        brokers.prepare_response(deleted(Errors.COORDINATOR_LOAD_IN_PROGRESS))
        brokers.prepare_response(deleted(Errors.NOT_COORDINATOR))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0, key="groupId"))
        brokers.prepare_response(deleted(Errors.COORDINATOR_NOT_AVAILABLE))
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0, key="groupId"))
        brokers.prepare_response(deleted(Errors.NONE))
        assert await admin.delete_consumer_groups(["groupId"]) is None
        assert brokers.prepared == []
        assert sent_types(brokers) == ["FindCoordinator"] * 3 + ["DeleteGroups", "FindCoordinator", "FindCoordinator",
                                                                 "DeleteGroups", "DeleteGroups", "FindCoordinator",
                                                                 "DeleteGroups", "FindCoordinator", "DeleteGroups"]


# --------------------------------------------------------------------------------------------
# Controller mutation quotas: THROTTLING_QUOTA_EXCEEDED and retryOnQuotaViolation
# --------------------------------------------------------------------------------------------


def quota_response(call: str, throttle_time_ms: int, results: dict[str, Errors]) -> Any:
    """Mirrors prepareCreateTopicsResponse / prepareDeleteTopicsResponse / prepareCreatePartitionsResponse
    with a throttle time."""
    if call == "create_topics":
        return CreateTopicsResponse(throttle_time_ms=throttle_time_ms, topics=tuple(
            CreatableTopicResult(name=n, error_code=e.code, topic_id=TOPIC_ID, num_partitions=1, replication_factor=1)
            for n, e in results.items()))
    if call == "delete_topics":
        return DeleteTopicsResponse(throttle_time_ms=throttle_time_ms, responses=tuple(
            DeletableTopicResult(name=n, error_code=e.code) for n, e in results.items()))
    return CreatePartitionsResponse(throttle_time_ms=throttle_time_ms, results=tuple(
        CreatePartitionsTopicResult(name=n, error_code=e.code) for n, e in results.items()))


async def run_quota_call(admin: Admin, call: str, retry_on_quota_violation: bool) -> Any:
    names = ["topic1", "topic2", "topic3"]
    if call == "create_topics":
        return await admin.create_topics([NewTopic(n, 1, 1) for n in names],
                                         retry_on_quota_violation=retry_on_quota_violation)
    if call == "delete_topics":
        return await admin.delete_topics(names, retry_on_quota_violation=retry_on_quota_violation)
    return await admin.create_partitions({n: NewPartitions.increase_to(i + 1) for i, n in enumerate(names)},
                                         retry_on_quota_violation=retry_on_quota_violation)


QUOTA_CALLS = ["create_topics", "delete_topics", "create_partitions"]
FIRST_ANSWER = {"topic1": Errors.NONE, "topic2": Errors.THROTTLING_QUOTA_EXCEEDED, "topic3": Errors.TOPIC_ALREADY_EXISTS}


@pytest.mark.parametrize("call", QUOTA_CALLS)
async def test_retry_throttling_exception_when_enabled(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsRetryThrottlingExceptionWhenEnabled,
    #testDeleteTopicsRetryThrottlingExceptionWhenEnabled (by name) and
    #testCreatePartitionsRetryThrottlingExceptionWhenEnabled: the throttled topic2 is sent alone
    again until it succeeds; topic3's error is the call's failure."""
    from kafka_ref.common.errors import TopicExistsException

    async with mock_env() as (brokers, admin):
        brokers.prepare_response(quota_response(call, 1000, FIRST_ANSWER), matcher=topics_named("topic1", "topic2", "topic3"))
        brokers.prepare_response(quota_response(call, 1000, {"topic2": Errors.THROTTLING_QUOTA_EXCEEDED}),
                                 matcher=topics_named("topic2"))
        brokers.prepare_response(quota_response(call, 0, {"topic2": Errors.NONE}), matcher=topics_named("topic2"))
        with pytest.raises(TopicExistsException):
            await run_quota_call(admin, call, True)
        assert brokers.prepared == []
        assert [sorted(t.name for t in r.topics) for _, r in brokers.sent()] == [
            ["topic1", "topic2", "topic3"], ["topic2"], ["topic2"]]


async def test_delete_topics_by_ids_retry_throttling_exception_when_enabled() -> None:
    """Mirrors KafkaAdminClientTest#testDeleteTopicsRetryThrottlingExceptionWhenEnabled (with topic
    ids): the throttled topic_id2 is sent alone again until it succeeds; topic_id3's
    UNKNOWN_TOPIC_ID is the call's failure."""
    topic_id1, topic_id2, topic_id3 = Uuid(1, 1), Uuid(2, 2), Uuid(3, 3)
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(delete_topics_response_with_ids(
            1000, (topic_id1, Errors.NONE), (topic_id2, Errors.THROTTLING_QUOTA_EXCEEDED),
            (topic_id3, Errors.UNKNOWN_TOPIC_ID)), matcher=topic_ids_are(topic_id1, topic_id2, topic_id3))
        brokers.prepare_response(delete_topics_response_with_ids(1000, (topic_id2, Errors.THROTTLING_QUOTA_EXCEEDED)),
                                 matcher=topic_ids_are(topic_id2))
        brokers.prepare_response(delete_topics_response_with_ids(0, (topic_id2, Errors.NONE)),
                                 matcher=topic_ids_are(topic_id2))
        with pytest.raises(UnknownTopicIdException):
            await admin.delete_topics_by_ids([topic_id1, topic_id2, topic_id3], retry_on_quota_violation=True)
        assert brokers.prepared == []
        assert [(n, r.topic_ids()) for n, r in brokers.sent()] == [
            (0, [topic_id1, topic_id2, topic_id3]), (0, [topic_id2]), (0, [topic_id2])]


@pytest.mark.parametrize("call", QUOTA_CALLS)
async def test_retry_throttling_exception_when_enabled_until_request_timeout(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsRetryThrottlingExceptionWhenEnabledUntilRequestTimeOut,
    #testDeleteTopicsRetryThrottlingExceptionWhenEnabledUntilRequestTimeOut (by name) and
    #testCreatePartitionsRetryThrottlingExceptionWhenEnabledUntilRequestTimeOut: the third request
    is never answered; at the 60 s API timeout topic2 fails with its ThrottlingQuotaExceededException,
    the throttle time used up (0)."""
    from kafka_ref.common.errors import ThrottlingQuotaExceededException

    async with mock_env(default_api_timeout_ms=60000) as (brokers, admin):
        brokers.prepare_response(quota_response(call, 1000, FIRST_ANSWER), matcher=topics_named("topic1", "topic2", "topic3"))
        brokers.prepare_response(quota_response(call, 1000, {"topic2": Errors.THROTTLING_QUOTA_EXCEEDED}),
                                 matcher=topics_named("topic2"))
        for _ in range(5):
            brokers.prepare_response(NO_ANSWER, matcher=topics_named("topic2"))
        start = admin.time.milliseconds()
        with pytest.raises(ThrottlingQuotaExceededException) as info:
            await run_quota_call(admin, call, True)
        assert info.value.throttle_time_ms == 0
        assert admin.time.milliseconds() - start == 60000
        assert [sorted(t.name for t in r.topics) for _, r in brokers.sent()][:3] == [
            ["topic1", "topic2", "topic3"], ["topic2"], ["topic2"]]
        brokers.prepared.clear()


@pytest.mark.parametrize("call", QUOTA_CALLS)
async def test_dont_retry_throttling_exception_when_disabled(call: str) -> None:
    """Mirrors KafkaAdminClientTest#testCreateTopicsDontRetryThrottlingExceptionWhenDisabled,
    #testDeleteTopicsDontRetryThrottlingExceptionWhenDisabled (by name) and
    #testCreatePartitionsDontRetryThrottlingExceptionWhenDisabled: topic2 fails at once with the
    broker's throttle time (1000 ms)."""
    from kafka_ref.common.errors import ThrottlingQuotaExceededException

    async with mock_env() as (brokers, admin):
        brokers.prepare_response(quota_response(call, 1000, FIRST_ANSWER), matcher=topics_named("topic1", "topic2", "topic3"))
        with pytest.raises(ThrottlingQuotaExceededException) as info:
            await run_quota_call(admin, call, False)
        assert info.value.throttle_time_ms == 1000
        assert len(brokers.sent()) == 1


@pytest.mark.parametrize(("reason", "expected"), [
    ("testing remove members reason", "testing remove members reason"),
    ("Very l" + "o" * 163 + "ng reason that is 271 characters long to make sure that length limit logic handles the "
     "scenario nicely", None),
    (None, "member was removed by an admin"),
    ("", "member was removed by an admin"),
])
async def test_remove_members_from_group_reason(reason: str | None, expected: str | None) -> None:
    """Mirrors KafkaAdminClientTest#testRemoveMembersFromGroupReason, #testRemoveMembersFromGroupTruncatesReason
    and #testRemoveMembersFromGroupDefaultReason: every LeaveGroup member carries the reason, cut to 255
    characters, or the default one."""
    if expected is None:
        assert len(reason) == 271
        expected = reason[:255]
    async with mock_env() as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(leave_group_response(Errors.NONE, {"instance-1": Errors.NONE, "instance-2": Errors.NONE}),
                                 matcher=lambda r: isinstance(r, LeaveGroupRequest)
                                 and all(m.reason == expected for m in r.members))
        assert await admin.remove_members_from_consumer_group(GROUP_ID, ["instance-1", "instance-2"], reason=reason) is None
        assert brokers.prepared == []


async def test_list_consumer_groups_with_states() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupsWithStates: each listing carries the state the
    broker reports; a group without a protocol type is a simple consumer group."""
    async with mock_env(nodes=(0,)) as (brokers, admin):
        brokers.prepare_response(ListGroupsResponse(groups=(
            ListedGroup(group_id="group-1", protocol_type="consumer", group_state="Stable"),
            ListedGroup(group_id="group-2", protocol_type="", group_state="Empty"))), node=0)
        listings = await admin.list_consumer_groups()
        assert {(g.group_id, g.is_simple_consumer_group, g.state) for g in listings} == {
            ("group-2", True, "Empty"), ("group-1", False, "Stable")}
        assert len(listings) == 2


def describe_cluster_response(brokers: MockBrokers, controller: int) -> Any:
    """Mirrors KafkaAdminClientTest#prepareDescribeClusterResponse."""
    from kafka_ref.common.requests.describe_cluster import DescribeClusterBroker, DescribeClusterResponse

    return DescribeClusterResponse(cluster_id=CLUSTER_ID, controller_id=controller, brokers=tuple(
        DescribeClusterBroker(broker_id=n, host="localhost", port=8121 + n) for n in brokers.nodes))


async def test_describe_cluster() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeCluster (four brokers): DescribeCluster gives the cluster
    id, the brokers and the controller, twice (controllers 2 then 3)."""
    from kafka_ref.clients.client_metadata import Node
    from kafka_ref.common.requests.describe_cluster import DescribeClusterRequest

    async with mock_env(nodes=(0, 1, 2, 3), retries=2) as (brokers, admin):
        brokers.prepare_response(describe_cluster_response(brokers, 2))
        brokers.prepare_response(describe_cluster_response(brokers, 3))
        nodes = {Node(n, "localhost", 8121 + n) for n in range(4)}
        first = await admin.describe_cluster()
        assert (first.cluster_id, set(first.nodes), first.controller.id) == (CLUSTER_ID, nodes, 2)
        second = await admin.describe_cluster()
        assert (second.cluster_id, set(second.nodes), second.controller.id) == (CLUSTER_ID, nodes, 3)
        assert all(isinstance(r, DescribeClusterRequest) for _, r in brokers.sent()) and len(brokers.sent()) == 2


async def test_describe_cluster_handle_error() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeClusterHandleError: a top-level INVALID_REQUEST fails the
    call with the broker's message."""
    from kafka_ref.common.errors import InvalidRequestException
    from kafka_ref.common.requests.describe_cluster import DescribeClusterResponse

    async with mock_env(nodes=(0, 1, 2, 3), retries=2) as (brokers, admin):
        brokers.prepare_response(DescribeClusterResponse(error_code=Errors.INVALID_REQUEST.code, error_message="my error"))
        with pytest.raises(InvalidRequestException, match="^my error$"):
            await admin.describe_cluster()
        assert len(brokers.sent()) == 1


async def test_describe_cluster_fail_back() -> None:
    """Mirrors KafkaAdminClientTest#testDescribeClusterFailBack: a broker without DescribeCluster (here it
    answers UNSUPPORTED_VERSION) is asked with Metadata instead."""
    from kafka_ref.clients.client_metadata import Node
    from kafka_ref.common.requests.describe_cluster import DescribeClusterRequest, DescribeClusterResponse

    async with mock_env(nodes=(0, 1, 2, 3), retries=2) as (brokers, admin):
        brokers.prepare_response(DescribeClusterResponse(error_code=Errors.UNSUPPORTED_VERSION.code))
        brokers.prepare_response(brokers.metadata_response((), controller=2))
        described = await admin.describe_cluster()
        assert (described.cluster_id, set(described.nodes), described.controller.id) == (
            CLUSTER_ID, {Node(n, "localhost", 8121 + n) for n in range(4)}, 2)
        assert brokers.prepared == []
        assert [type(r) for _, r, _ in brokers.requests] == [DescribeClusterRequest, MetadataRequest]


async def test_list_consumer_group_offsets_options_with_unbatched_api() -> None:
    """Mirrors KafkaAdminClientTest#testListConsumerGroupOffsetsOptionsWithUnbatchedApi (retries=0): the
    OffsetFetch asks for group-0's A-0 with requireStable, and with the 300 ms API timeout the unanswered
    request times out at 300 ms."""
    from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest

    async with mock_env(retries=0) as (brokers, admin):
        brokers.prepare_response(find_coordinator_response(Errors.NONE, 0))
        brokers.prepare_response(NO_ANSWER, matcher=lambda r: isinstance(r, OffsetFetchRequest))
        start = admin.time.milliseconds()
        with pytest.raises(TimeoutException):
            await admin.list_consumer_group_offsets(GROUP_ID, [TopicPartition("A", 0)], require_stable=True,
                                                    timeout_ms=300)
        assert admin.time.milliseconds() - start == 300
        [_, (_, fetch)] = brokers.sent()
        assert isinstance(fetch, OffsetFetchRequest) and fetch.require_stable
        assert [g.group_id for g in fetch.groups] == [GROUP_ID]
        assert [(t.name, t.partition_indexes) for t in fetch.groups[0].topics] == [("A", (0,))]


async def test_client_side_timeout_after_failure_to_receive_response() -> None:
    """Mirrors KafkaAdminClientTest#testClientSideTimeoutAfterFailureToReceiveResponse: with a 1 ms
    request timeout the unanswered Metadata disconnects its broker, the call is not failed (the API
    timeout is 100 s) and the retry, sent to another broker, is answered."""
    async with mock_env(request_timeout_ms=1, default_api_timeout_ms=100000, retry_backoff_ms=0) as (brokers, admin):
        brokers.prepare_response(NO_ANSWER, matcher=all_topics_metadata)
        assert await admin.list_topics() == set()
        (first, _, sent_at), (second, _, retried_at) = [(n, r, t) for n, r, t in brokers.requests if all_topics_metadata(r)]
        assert first != second and retried_at - sent_at == 1
        assert admin.client.connection_failed(first)
