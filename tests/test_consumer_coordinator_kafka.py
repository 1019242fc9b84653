"""Ports of Kafka 3.8.0 ConsumerCoordinatorTest (AbstractCoordinatorTest is in test_abstract_coordinator_kafka.py).

clients/src/test/java/org/apache/kafka/clients/consumer/internals/ConsumerCoordinatorTest.java drives
a ConsumerCoordinator over a MockClient whose answers the test prepares one by one. Here the
consumer (kafka_ref.clients.consumer.KafkaConsumer with ``group_id``, which builds the
ConsumerCoordinator) talks over the in-process network to ``ScriptedCoordinator`` (the MockBrokers
of tests/mock_brokers.py as one node): broker 0, which answers Metadata by itself (topics ``test1``
and ``test2``, one partition each, as the Kafka test's metadata update) and every other request with the next prepared response, after checking the
request against the prepared matcher (MockClient#prepareResponse(matcher, response)). A request
with no prepared answer stays in flight, as with MockClient. Only the EAGER protocol is run (the
COOPERATIVE parametrisation needs a protocol kafka_ref does not model).

Kafka calls internals directly (sendHeartbeatRequest, joinGroupIfNeeded); the closest kafka_ref
entry points are used instead: ``maybe_heartbeat`` (the heartbeat thread's step), ``poll`` and
``ensure_active_group``, ``commit_offsets_sync``, ``fetch_committed_offsets`` and
``refresh_committed_offsets_if_needed`` (initWithCommittedOffsetsIfNeeded). commitAsync is
``commit_offsets_async``; kafka_ref has no network thread, so the commit is sent, and callbacks run
(invokeCompletedOffsetCommitCallbacks), at the consumer's next poll (``poll_for_consumer``) or
commitSync: where Kafka's test calls invokeCompletedOffsetCommitCallbacks, the port polls.

Not ported:
- testMetrics, testThreadSafeAssignedPartitionsMetric: kafka_ref keeps no client metrics.
- testPerformAssignment*, testOnLeaderElectedShouldSkipAssignment, testSelectRebalanceProtocol,
  testOutdatedCoordinatorAssignment, test*ExceptionThrownFirstNonBlockingSubCallbacks,
  test*ExceptionShouldBeRenderedIfNotKafkaException, testPrepareJoinAndRejoinAfterFailedRebalance:
  custom (Mock/ThrowOnAssignment) assignors, the COOPERATIVE protocol or callback exception
  plumbing, none of which kafka_ref models (only the built-in range / round-robin assignors).
- testPattern*, testForceMetadata*ForPatternSubscription*, test*InternalTopicsConfigOption,
  testRebalanceAfterNotMatchingTopicUnavailableWithPatternSubscribe: no pattern subscription.
- testMetadataChangeTriggersRebalance, testStaticLeaderRejoinsGroupAndCanTrigger*/CanDetect*,
  testUpdateMetadataDuringRebalance, testMetadataRefreshDuringRebalance, testRebalanceWithMetadataChange,
  testRackAware*/testNonRackAware*, testSubscriptionRackId, testRebalanceAfterTopicUnavailable*,
  testSubscriptionChangeWithAuthorizationFailure, testMetadataTopicsDuringSubscriptionChange:
  metadata-triggered rejoins and rack-aware assignment are not modelled.
- auto-commit (testAutoCommit*, testOnJoinPrepareWithOffsetCommit*, testJoinPrepare*, and the close tests built on auto-commit
  (testCloseCoordinatorNotKnown*, testCloseCoordinatorUnavailable*, testCloseTimeout*, testCloseMaxWait*,
  testCloseNoResponse*, testCloseNoWait)): kafka_ref has no enable.auto.commit, and close sends LeaveGroup
  without waiting.
- testEnsureCompletingAsyncCommitsWhenSyncCommitWithoutOffsets: kafka_ref's commitSync does not bound
  the pending async commits by its own timeout (it waits up to request.timeout.ms for them), and an
  async commit cut short is sent again by the next poll, where Kafka's stays in flight.
- testManyInFlightAsyncCommitsWithCoordinatorDisconnect, testCoordinatorUnknownInUnsentCallbacksAfterCoordinatorDead,
  testCoordinatorDisconnectAfterNotCoordinatorError, testCoordinatorDisconnectAfterCoordinatorNotAvailableError:
  kafka_ref's async commits are not in flight before the next poll, which sends them one after the
  other (a coordinator marked unknown is looked up again for the next one, where Kafka cancels the
  ones in flight).
- testWakeup*, testHeartbeatThreadClose, testAuthentication*: no wakeup, no heartbeat thread
  (heartbeats go from poll, only while stable), no authentication layer.
- testGetGroupMetadata, testThrowOnUnsupportedStableFlag, testNoThrowWhenStableFlagIsSupported:
  no ConsumerGroupMetadata object, no API-version negotiation.
"""

from __future__ import annotations

from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Callable

import anyio
import pytest
from mock_brokers import MockBrokers

from kafka_ref.clients.abstract_coordinator import NO_GENERATION, Generation
from kafka_ref.clients.consumer import ConsumerRebalanceListener, KafkaConsumer, RetriableCommitFailedException
from kafka_ref.clients.consumer_coordinator import CommitFailedException, OffsetAndMetadata
from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol, Subscription
from kafka_ref.common.errors import (
    Errors,
    FencedInstanceIdException,
    GroupAuthorizationException,
    KafkaException,
    OffsetMetadataTooLarge,
    RebalanceInProgressException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.requests.find_coordinator import Coordinator, FindCoordinatorRequest, FindCoordinatorResponse
from kafka_ref.common.requests.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupResponse, JoinGroupResponseMember
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, LeaveGroupResponse
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kafka_ref.common.requests.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from kafka_ref.common.requests.sync_group import SyncGroupRequest, SyncGroupResponse
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import DisconnectException, Envelope, Network

pytestmark = pytest.mark.anyio

TOPIC1 = "test1"
TOPIC2 = "test2"
T1P = TopicPartition(TOPIC1, 0)
T2P = TopicPartition(TOPIC2, 0)
GROUP_ID = "test-group"
CONSUMER_ID = "consumer"
NODE = 0
SESSION_TIMEOUT_MS = 10000
REBALANCE_TIMEOUT_MS = 60000
HEARTBEAT_INTERVAL_MS = 5000
LONG = 10_000_000  # stands in for time.timer(Long.MAX_VALUE): far beyond every wait below


# --------------------------------------------------------------------------------------------
# The scripted coordinator (MockClient with prepared responses)
# --------------------------------------------------------------------------------------------


class ScriptedCoordinator(MockBrokers):
    """Broker 0 (tests/mock_brokers.py): Metadata names ``test1`` and ``test2``, one partition each,
    led by node 0; anything else is answered from the prepared queue. ``requests`` lists every
    request received and ``held`` those with no prepared answer."""

    def __init__(self, network: Network) -> None:
        super().__init__(network, {T1P: NODE, T2P: NODE}, (NODE,), cluster_id="kafka-cluster")

    @property
    def requests(self) -> list[Any]:
        return self.received

    @property
    def held(self) -> list[Envelope]:
        return self.pending


@dataclass
class RebalanceListener:
    """Counts the callbacks, as ConsumerCoordinatorTest's MockRebalanceListener."""

    revoked: set[TopicPartition] | None = None
    assigned: set[TopicPartition] | None = None
    lost: set[TopicPartition] | None = None
    revoked_count: int = 0
    assigned_count: int = 0
    lost_count: int = 0


@asynccontextmanager
async def harness(**consumer_config: Any):
    """A group consumer against the scripted coordinator, its callbacks recorded by a listener."""
    network = Network()
    broker = ScriptedCoordinator(network)
    async with anyio.create_task_group() as tg:
        broker.serve(tg)
        config = dict(client_id="consumer-1", group_id=GROUP_ID, session_timeout_ms=SESSION_TIMEOUT_MS,
                      heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, max_poll_interval_ms=REBALANCE_TIMEOUT_MS,
                      retry_backoff_ms=100, request_timeout_ms=30000)
        config.update(consumer_config)
        consumer = KafkaConsumer(network, [NODE], **config)
        listener = RebalanceListener()
        coordinator = consumer.coordinator
        revoke_to_consumer = coordinator.on_partitions_revoked
        assign_to_consumer = coordinator.on_partitions_assigned
        lose_to_consumer = coordinator.on_partitions_lost

        def revoked(partitions: set[TopicPartition]) -> None:
            listener.revoked, listener.revoked_count = set(partitions), listener.revoked_count + 1
            revoke_to_consumer(partitions)

        def assigned(partitions: set[TopicPartition]) -> None:
            listener.assigned, listener.assigned_count = set(partitions), listener.assigned_count + 1
            assign_to_consumer(partitions)

        def lost(partitions: set[TopicPartition]) -> None:
            listener.lost, listener.lost_count = set(partitions), listener.lost_count + 1
            lose_to_consumer(partitions)

        coordinator.on_partitions_revoked = revoked
        coordinator.on_partitions_assigned = assigned
        coordinator.on_partitions_lost = lost
        yield consumer, coordinator, broker, listener
        assert broker.mismatches == [], f"requests that did not match the prepared matcher: {broker.mismatches}"
        tg.cancel_scope.cancel()


# -- response builders (ConsumerCoordinatorTest's private helpers) ----------------------------


def group_coordinator_response(error: Errors = Errors.NONE) -> FindCoordinatorResponse:
    return FindCoordinatorResponse(coordinators=(Coordinator(
        key=GROUP_ID, node_id=NODE if error is Errors.NONE else -1, host="localhost", port=9092,
        error_code=error.code),))


def heartbeat_response(error: Errors) -> HeartbeatResponse:
    return HeartbeatResponse(error_code=error.code)


def join_group_leader_response(generation: int, member_id: str, subscriptions: dict[str, list[str]],
                               error: Errors, protocol: str = "range") -> JoinGroupResponse:
    members = tuple(JoinGroupResponseMember(member_id=m, metadata=ConsumerProtocol.serialize_subscription(
        Subscription(tuple(topics)))) for m, topics in subscriptions.items())
    return JoinGroupResponse(error_code=error.code, generation_id=generation, protocol_type="consumer",
                             protocol_name=protocol, member_id=member_id, leader=member_id, members=members)


def join_group_follower_response(generation: int, member_id: str, leader: str, error: Errors,
                                 protocol: str = "range") -> JoinGroupResponse:
    return JoinGroupResponse(error_code=error.code, generation_id=generation, protocol_type="consumer",
                             protocol_name=protocol, member_id=member_id, leader=leader)


def sync_group_response(partitions: list[TopicPartition], error: Errors, protocol: str = "range") -> SyncGroupResponse:
    return SyncGroupResponse(error_code=error.code, protocol_type="consumer", protocol_name=protocol,
                             assignment=ConsumerProtocol.serialize_assignment(Assignment(tuple(partitions))))


def offset_commit_response(errors: dict[TopicPartition, Errors]) -> OffsetCommitResponse:
    return OffsetCommitResponse.of({tp: e.code for tp, e in errors.items()})


def offset_fetch_response(error: Errors, partitions: dict[TopicPartition, OffsetFetchResponsePartitions]) -> OffsetFetchResponse:
    topics: dict[str, list[OffsetFetchResponsePartitions]] = {}
    for tp, data in partitions.items():
        topics.setdefault(tp.topic, []).append(data)
    return OffsetFetchResponse(groups=(OffsetFetchResponseGroup(
        group_id=GROUP_ID, error_code=error.code,
        topics=tuple(OffsetFetchResponseTopics(name=t, partitions=tuple(ps)) for t, ps in topics.items())),))


def partition_offset(tp: TopicPartition, error: Errors, metadata: str, offset: int,
                     epoch: int = -1) -> dict[TopicPartition, OffsetFetchResponsePartitions]:
    return {tp: OffsetFetchResponsePartitions(partition_index=tp.partition, committed_offset=offset,
                                              committed_leader_epoch=epoch, metadata=metadata, error_code=error.code)}


def prepare_offset_commit(broker: ScriptedCoordinator, offsets: dict[TopicPartition, int], error: Errors,
                          disconnected: bool = False) -> None:
    """ConsumerCoordinatorTest#prepareOffsetCommitRequest: the commit must carry exactly ``offsets``."""
    broker.prepare_response(offset_commit_response({tp: error for tp in offsets}),
                            lambda r: isinstance(r, OffsetCommitRequest) and r.offsets() == offsets, disconnected)


def is_join(member_id: str | None = None) -> Callable[[Any], bool]:
    return lambda r: isinstance(r, JoinGroupRequest) and (member_id is None or r.member_id == member_id)


def is_sync(member_id: str, generation: int, leader: bool) -> Callable[[Any], bool]:
    return lambda r: (isinstance(r, SyncGroupRequest) and r.member_id == member_id and r.generation_id == generation
                      and ((member_id in r.group_assignment()) if leader else r.group_assignment() == {}))


async def ensure_coordinator_ready(coordinator, broker: ScriptedCoordinator) -> None:
    broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
    assert await coordinator.ensure_coordinator_ready(coordinator.time.milliseconds() + LONG)
    assert coordinator.coordinator == NODE


async def join_as_follower_and_receive_assignment(consumer, coordinator, broker, assignment: list[TopicPartition]) -> None:
    """ConsumerCoordinatorTest#joinAsFollowerAndReceiveAssignment."""
    await ensure_coordinator_ready(coordinator, broker)
    broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE), is_join())
    broker.prepare_response(sync_group_response(assignment, Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
    assert await coordinator.ensure_active_group(coordinator.time.milliseconds() + LONG)


async def heartbeat_after_session_timeout(coordinator, broker: ScriptedCoordinator, response: Any,
                                          disconnected: bool = False) -> None:
    """Sleep a session timeout, then the heartbeat step sends one Heartbeat answered with ``response``."""
    await anyio.sleep(SESSION_TIMEOUT_MS / 1000)
    broker.prepare_response(response, lambda r: isinstance(r, HeartbeatRequest), disconnected)
    await coordinator.maybe_heartbeat()
    assert broker.sent()[-1] == "HeartbeatRequest"


async def settle() -> None:
    """Let the scripted broker's task take what was just sent (a moment of virtual time)."""
    await anyio.sleep(0.001)


def now_plus(coordinator, ms: int = LONG) -> int:
    return coordinator.time.milliseconds() + ms


# --------------------------------------------------------------------------------------------
# Coordinator discovery and heartbeats
# --------------------------------------------------------------------------------------------


async def test_normal_heartbeat():
    """Mirrors ConsumerCoordinatorTest#testNormalHeartbeat."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.NONE))
        heartbeat = broker.requests[-1]
        assert (heartbeat.group_id, heartbeat.generation_id, heartbeat.member_id) == (GROUP_ID, 1, CONSUMER_ID)
        assert coordinator.coordinator == NODE
        assert not coordinator.rejoin_needed
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")


async def test_group_describe_unauthorized():
    """Mirrors ConsumerCoordinatorTest#testGroupDescribeUnauthorized."""
    async with harness() as (_, coordinator, broker, _):
        broker.prepare_response(group_coordinator_response(Errors.GROUP_AUTHORIZATION_FAILED))
        with pytest.raises(GroupAuthorizationException):
            await coordinator.ensure_coordinator_ready(now_plus(coordinator))
        assert coordinator.coordinator is None


async def test_group_read_unauthorized():
    """Mirrors ConsumerCoordinatorTest#testGroupReadUnauthorized."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(0, "memberId", {}, Errors.GROUP_AUTHORIZATION_FAILED))
        with pytest.raises(GroupAuthorizationException):
            await coordinator.poll(LONG)


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
async def test_heartbeat_marks_coordinator_unknown(error):
    """Mirrors ConsumerCoordinatorTest#testCoordinatorNotAvailable and #testNotCoordinator."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(error))
        assert coordinator.coordinator is None
        # The membership itself is untouched.
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        assert not coordinator.rejoin_needed


async def test_coordinator_disconnect():
    """Mirrors ConsumerCoordinatorTest#testCoordinatorDisconnect."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.NONE), disconnected=True)
        assert coordinator.coordinator is None
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")


async def test_illegal_generation():
    """Mirrors ConsumerCoordinatorTest#testIllegalGeneration: the partitions are lost on the next poll."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.ILLEGAL_GENERATION))
        assert coordinator.rejoin_needed
        # ILLEGAL_GENERATION keeps the member id (AbstractCoordinator#resetStateOnResponseError).
        assert coordinator.generation == Generation(-1, CONSUMER_ID, None)
        await coordinator.poll(0)
        assert (listener.lost_count, listener.lost) == (1, {T1P})
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert broker.sent()[-1] == "JoinGroupRequest" and broker.requests[-1].member_id == CONSUMER_ID


async def test_unknown_member_id():
    """Mirrors ConsumerCoordinatorTest#testUnknownMemberId."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.UNKNOWN_MEMBER_ID))
        assert coordinator.rejoin_needed
        assert coordinator.generation == NO_GENERATION
        await coordinator.poll(0)
        assert (listener.lost_count, listener.lost) == (1, {T1P})
        assert listener.revoked_count == 0
        assert consumer.assignment() == set()
        assert broker.sent()[-1] == "JoinGroupRequest" and broker.requests[-1].member_id == ""


# --------------------------------------------------------------------------------------------
# JoinGroup / SyncGroup
# --------------------------------------------------------------------------------------------


async def test_join_group_invalid_group_id():
    """Mirrors ConsumerCoordinatorTest#testJoinGroupInvalidGroupId."""
    from kafka_ref.common.errors import InvalidGroupIdException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(0, "leader", {}, Errors.INVALID_GROUP_ID))
        with pytest.raises(InvalidGroupIdException):
            await coordinator.poll(LONG)


async def test_normal_join_group_leader():
    """Mirrors ConsumerCoordinatorTest#testNormalJoinGroupLeader (the range assignor plays MockPartitionAssignor)."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(1, "leader", {"leader": [TOPIC1]}, Errors.NONE), is_join(""))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("leader", 1, leader=True))
        assert await coordinator.poll(LONG)
        sync = broker.requests[-1]
        assert ConsumerProtocol.deserialize_assignment(sync.group_assignment()["leader"]).partitions == (T1P,)
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}
        assert consumer.subscription() == {TOPIC1}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P})


async def test_normal_join_group_follower():
    """Mirrors ConsumerCoordinatorTest#testNormalJoinGroupFollower."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P})
        join = broker.requests[0 if broker.sent()[0] == "JoinGroupRequest" else 1]
        assert (join.group_id, join.session_timeout_ms, join.rebalance_timeout_ms, join.protocol_type) == (
            GROUP_ID, SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS, "consumer")
        assert [p.name for p in join.protocols] == ["range"]
        assert ConsumerProtocol.deserialize_subscription(join.protocols[0].metadata).topics == (TOPIC1,)


async def test_unexpected_error_on_sync_group():
    """Mirrors ConsumerCoordinatorTest#testUnexpectedErrorOnSyncGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.UNKNOWN_SERVER_ERROR))
        with pytest.raises(KafkaException, match="Unexpected error from SyncGroup"):
            await coordinator.ensure_active_group(now_plus(coordinator))


async def test_unknown_member_id_on_sync_group():
    """Mirrors ConsumerCoordinatorTest#testUnknownMemberIdOnSyncGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.UNKNOWN_MEMBER_ID))
        # The rejoin goes without a member id.
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(""))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}
        assert coordinator.generation == Generation(2, CONSUMER_ID, "range")


async def test_rebalance_in_progress_on_sync_group():
    """Mirrors ConsumerCoordinatorTest#testRebalanceInProgressOnSyncGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.REBALANCE_IN_PROGRESS))
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest", "SyncGroupRequest",
                                 "JoinGroupRequest", "SyncGroupRequest"]


async def test_illegal_generation_on_sync_group():
    """Mirrors ConsumerCoordinatorTest#testIllegalGenerationOnSyncGroup: the member id survives ILLEGAL_GENERATION."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.ILLEGAL_GENERATION))
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}


async def test_rejoin_group():
    """Mirrors ConsumerCoordinatorTest#testRejoinGroup (EAGER: everything revoked, everything assigned again)."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P})
        listener.revoked = listener.assigned = None
        consumer.subscribe([TOPIC1, "otherTopic"])
        assert coordinator.rejoin_needed
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert (listener.assigned_count, listener.assigned) == (2, {T1P})
        join = broker.requests[-2]
        assert ConsumerProtocol.deserialize_subscription(join.protocols[0].metadata).topics == ("otherTopic", TOPIC1)


class RecordingRebalanceListener(ConsumerRebalanceListener):
    """The user's ConsumerRebalanceListener, recording every call in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("revoked", set(partitions)))

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("assigned", set(partitions)))

    def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("lost", set(partitions)))


async def test_rejoin_with_valid_generation_revokes_even_no_partitions():
    """ConsumerCoordinator#onJoinPrepare, EAGER with a valid generation: the listener's onPartitionsRevoked
    runs even when the member owns no partition (Kafka calls invokePartitionsRevoked with the empty set;
    only the lost branch checks for emptiness). ConsumerCoordinatorTest#testOutdatedCoordinatorAssignment
    counts this call (EAGER revokedCount 1 with nothing owned) but needs a custom assignor kafka_ref lacks;
    this is the same rejoin as testRejoinGroup, from an empty assignment."""
    async with harness() as (consumer, coordinator, broker, listener):
        user = RecordingRebalanceListener()
        consumer.subscribe([TOPIC1], user)
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [])
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        assert consumer.assignment() == set()
        assert (listener.revoked_count, listener.assigned_count, listener.assigned) == (0, 1, set())
        consumer.subscribe([TOPIC1, TOPIC2], user)
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 2, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert (listener.revoked_count, listener.revoked) == (1, set())
        assert (listener.assigned_count, listener.assigned) == (2, {T1P})
        assert listener.lost_count == 0
        assert user.calls == [("assigned", set()), ("revoked", set()), ("assigned", {T1P})]
        assert consumer.assignment() == {T1P}


async def test_join_prepare_runs_once_per_rebalance():
    """AbstractCoordinator#joinGroupIfNeeded calls onJoinPrepare once per rebalance (needsJoinPrepare, set
    again only by a completed join or a reset of the generation), as AbstractCoordinatorTest#
    testJoinGroupRequestWithRebalanceInProgress counts (onJoinPrepareInvokes 1): a SyncGroup answered
    REBALANCE_IN_PROGRESS sends a new JoinGroup at once, and the partitions, already revoked, are not
    revoked a second time (an empty revocation would reach the listener under a valid generation)."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        consumer.subscribe([TOPIC1, TOPIC2])
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([], Errors.REBALANCE_IN_PROGRESS), is_sync(CONSUMER_ID, 2, leader=False))
        broker.prepare_response(join_group_follower_response(3, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE), is_sync(CONSUMER_ID, 3, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert broker.sent()[-4:] == ["JoinGroupRequest", "SyncGroupRequest", "JoinGroupRequest", "SyncGroupRequest"]
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert (listener.assigned_count, listener.assigned) == (2, {T1P, T2P})
        assert coordinator.generation == Generation(3, CONSUMER_ID, "range")


async def test_rejoin_after_generation_reset_loses_no_partitions_silently():
    """ConsumerCoordinator#onJoinPrepare's other branch: after a reset generation (a Heartbeat answered
    UNKNOWN_MEMBER_ID) the owned partitions are lost, and onPartitionsLost runs only if there are any;
    with none owned neither callback runs (as ConsumerCoordinatorTest#testUnknownMemberId, from an empty
    assignment)."""
    async with harness() as (consumer, coordinator, broker, listener):
        user = RecordingRebalanceListener()
        consumer.subscribe([TOPIC1], user)
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.UNKNOWN_MEMBER_ID))
        assert coordinator.generation == NO_GENERATION
        await coordinator.poll(0)
        assert broker.sent()[-1] == "JoinGroupRequest" and broker.requests[-1].member_id == ""
        assert (listener.revoked_count, listener.lost_count, listener.assigned_count) == (0, 0, 1)
        assert user.calls == [("assigned", set())]


async def test_disconnect_in_join():
    """Mirrors ConsumerCoordinatorTest#testDisconnectInJoin."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE), disconnected=True)
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed
        assert consumer.assignment() == {T1P}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P})


async def test_invalid_session_timeout():
    """Mirrors ConsumerCoordinatorTest#testInvalidSessionTimeout."""
    from kafka_ref.common.errors import InvalidSessionTimeoutException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(0, CONSUMER_ID, "", Errors.INVALID_SESSION_TIMEOUT))
        with pytest.raises(InvalidSessionTimeoutException):
            await coordinator.ensure_active_group(now_plus(coordinator))


# --------------------------------------------------------------------------------------------
# Leaving the group
# --------------------------------------------------------------------------------------------


def is_leave(member_id: str) -> Callable[[Any], bool]:
    return lambda r: (isinstance(r, LeaveGroupRequest) and r.group_id == GROUP_ID
                      and [m.member_id for m in r.members] == [member_id])


async def test_leave_group_on_close():
    """Mirrors ConsumerCoordinatorTest#testLeaveGroupOnClose."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        consumer.close()
        await anyio.sleep(0.01)
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert broker.prepared == deque()


async def test_maybe_leave_group():
    """Mirrors ConsumerCoordinatorTest#testMaybeLeaveGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        coordinator.maybe_leave_group_nowait("test maybe leave group")
        await anyio.sleep(0.01)
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert broker.requests[-1].members[0].reason == "test maybe leave group"
        assert coordinator.generation == NO_GENERATION
        assert coordinator.rejoin_needed


async def test_pending_member_should_leave_group():
    """Mirrors ConsumerCoordinatorTest#testPendingMemberShouldLeaveGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "consumer-id", "leader-id", Errors.MEMBER_ID_REQUIRED))
        # joinGroupIfNeeded(timer(0)): one JoinGroup, then out of time.
        assert not await coordinator.ensure_active_group(now_plus(coordinator, 0))
        assert coordinator.generation == Generation(-1, "consumer-id", None)
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave("consumer-id"))
        coordinator.maybe_leave_group_nowait("pending member leaves")
        await anyio.sleep(0.01)
        assert broker.sent()[-1] == "LeaveGroupRequest"


async def test_unsubscribe_with_valid_generation():
    """Mirrors ConsumerCoordinatorTest#testUnsubscribeWithValidGeneration, with a member that really is in a
    stable generation: onLeavePrepare revokes its partitions (Kafka's test, whose generation was never set,
    sees them lost, as test_unsubscribe_with_invalid_generation does)."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        consumer.unsubscribe()
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert listener.lost_count == 0
        assert consumer.assignment() == set()
        await settle()
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert broker.requests[-1].members[0].reason == "the consumer unsubscribed from all topics"


async def test_unsubscribe_with_invalid_generation():
    """Mirrors ConsumerCoordinatorTest#testUnsubscribeWithInvalidGeneration."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.UNKNOWN_MEMBER_ID))
        before = len(broker.requests)
        consumer.unsubscribe()
        assert (listener.lost_count, listener.lost) == (1, {T1P})
        assert listener.revoked_count == 0
        await settle()
        # No member id left: nothing to leave.
        assert len(broker.requests) == before


async def test_close_dynamic_assignment():
    """Mirrors ConsumerCoordinatorTest#testCloseDynamicAssignment (without the auto-commit kafka_ref lacks):
    close revokes the partitions and sends LeaveGroup."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        consumer.close()
        await settle()
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


async def test_close_manual_assignment():
    """Mirrors ConsumerCoordinatorTest#testCloseManualAssignment (without auto-commit): a manually assigned
    consumer is no group member, so close sends no LeaveGroup and calls no callback."""
    async with harness() as (consumer, coordinator, broker, listener):
        await ensure_coordinator_ready(coordinator, broker)
        consumer.assign([T1P])
        consumer.close()
        await settle()
        assert broker.sent() == ["FindCoordinatorRequest"]
        assert (listener.revoked_count, listener.lost_count) == (0, 0)


@pytest.mark.parametrize("awaiting_reset", [False, True])
async def test_no_coordinator_discovery_if_positions_known_or_awaiting_reset(awaiting_reset):
    """Mirrors ConsumerCoordinatorTest#testNoCoordinatorDiscoveryIfPositionsKnown and
    #testNoCoordinatorDiscoveryIfPartitionAwaitingReset."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        if awaiting_reset:
            consumer.seek_to_beginning([T1P])
        else:
            consumer.seek(T1P, 500)
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        state = consumer.subscriptions.assigned_state(T1P)
        if awaiting_reset:
            assert state.awaiting_reset() and state.position is None
            assert consumer.subscriptions.partitions_needing_reset(coordinator.time.milliseconds()) == [T1P]
        else:
            assert state.position.offset == 500
        assert coordinator.coordinator is None
        assert broker.requests == []


# --------------------------------------------------------------------------------------------
# Offset commits (commitSync)
# --------------------------------------------------------------------------------------------


def offsets(offset: int = 100, metadata: str = "") -> dict[TopicPartition, OffsetAndMetadata]:
    return {T1P: OffsetAndMetadata(offset, None, metadata)}


@pytest.mark.parametrize("how", ["NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "disconnected"])
async def test_commit_offset_sync_rediscovers_coordinator(how):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetSyncNotCoordinator, #testCommitOffsetSyncCoordinatorNotAvailable
    and #testCommitOffsetSyncCoordinatorDisconnected."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        if how == "disconnected":
            prepare_offset_commit(broker, {T1P: 100}, Errors.NONE, disconnected=True)
        else:
            prepare_offset_commit(broker, {T1P: 100}, Errors[how])
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await coordinator.commit_offsets_sync(offsets(), LONG)
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest", "FindCoordinatorRequest",
                                 "OffsetCommitRequest"]
        # A manually assigned consumer commits as a simple consumer: no generation, member or instance id.
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id, commit.group_instance_id) == (-1, "", None)


async def test_retry_commit_unknown_topic_or_partition():
    """Mirrors ConsumerCoordinatorTest#testRetryCommitUnknownTopicOrPartition."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_commit_response({T1P: Errors.UNKNOWN_TOPIC_OR_PARTITION}))
        broker.prepare_response(offset_commit_response({T1P: Errors.NONE}))
        start = coordinator.time.milliseconds()
        await coordinator.commit_offsets_sync(offsets(100, "metadata"), 10000)
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest", "OffsetCommitRequest"]
        # One retry backoff between the attempts.
        assert coordinator.time.milliseconds() - start == 100
        assert broker.requests[-1].topics[0].partitions[0].committed_metadata == "metadata"


async def test_commit_offset_metadata_too_large():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetMetadataTooLarge."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, Errors.OFFSET_METADATA_TOO_LARGE)
        with pytest.raises(OffsetMetadataTooLarge):
            await coordinator.commit_offsets_sync(offsets(100, "metadata"), LONG)


@pytest.mark.parametrize("error", [Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID])
async def test_commit_offset_generation_errors_fail_the_commit(error):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetIllegalGeneration and #testCommitOffsetUnknownMemberId."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, error)
        with pytest.raises(CommitFailedException):
            await coordinator.commit_offsets_sync(offsets(100, "metadata"), LONG)
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]


@pytest.mark.parametrize("error, generation_after", [
    (Errors.ILLEGAL_GENERATION, Generation(-1, CONSUMER_ID, None)),
    (Errors.UNKNOWN_MEMBER_ID, NO_GENERATION),
])
async def test_commit_offset_generation_errors_reset_generation(error, generation_after):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetIllegalGenerationShouldResetGenerationId and
    #testCommitOffsetUnknownMemberShouldResetToNoGeneration."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [])
        prepare_offset_commit(broker, {T1P: 100}, error)
        with pytest.raises(CommitFailedException):
            await coordinator.commit_offsets_sync(offsets(100, "metadata"), 30000)
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id) == (1, CONSUMER_ID)
        assert coordinator.generation == generation_after
        assert coordinator.rejoin_needed


@pytest.mark.parametrize("error, new_generation, preparing, expected", [
    # testCommitOffsetIllegalGenerationWithNewGeneration
    (Errors.ILLEGAL_GENERATION, Generation(2, "memberId-new", None), "after", RebalanceInProgressException),
    # testCommitOffsetIllegalGenerationWithResetGeneration
    (Errors.ILLEGAL_GENERATION, NO_GENERATION, None, CommitFailedException),
    # testCommitOffsetUnknownMemberWithNewGeneration
    (Errors.UNKNOWN_MEMBER_ID, Generation(2, "memberId-new", None), "after", RebalanceInProgressException),
    # testCommitOffsetUnknownMemberWithResetGeneration
    (Errors.UNKNOWN_MEMBER_ID, NO_GENERATION, None, CommitFailedException),
    # testCommitOffsetFencedInstanceWithRebalancingGeneration
    (Errors.FENCED_INSTANCE_ID, Generation(2, "memberId-new", None), "before", RebalanceInProgressException),
    # testCommitOffsetFencedInstanceWithNewGeneration
    (Errors.FENCED_INSTANCE_ID, Generation(2, "memberId-new", None), None, CommitFailedException),
])
async def test_commit_offset_error_after_generation_changed(error, new_generation, preparing, expected):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetIllegalGenerationWithNewGeneration,
    #testCommitOffsetIllegalGenerationWithResetGeneration, #testCommitOffsetUnknownMemberWithNewGeneration,
    #testCommitOffsetUnknownMemberWithResetGeneration, #testCommitOffsetFencedInstanceWithRebalancingGeneration and
    #testCommitOffsetFencedInstanceWithNewGeneration: the generation (and maybe the state) changes while the
    commit is in flight; a member already rebalancing hears RebalanceInProgressException, otherwise the commit
    fails, and the new generation is never reset by the stale answer."""
    from kafka_ref.clients.consumer_coordinator import MemberState

    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        coordinator.generation = Generation(1, "memberId", None)
        if preparing == "before":
            coordinator.state = MemberState.PREPARING_REBALANCE
        raised: list[BaseException] = []

        async def commit() -> None:
            try:
                await coordinator.commit_offsets_sync(offsets(100, "metadata"), 30000)
            except KafkaException as exc:
                raised.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(commit)
            await settle()
            assert broker.sent()[-1] == "OffsetCommitRequest" and len(broker.held) == 1
            coordinator.generation = new_generation
            if preparing == "after":
                coordinator.state = MemberState.PREPARING_REBALANCE
            broker.held.pop().respond(offset_commit_response({T1P: error}))
        assert [type(e) for e in raised] == [expected]
        assert coordinator.generation == new_generation


async def test_commit_offset_should_not_set_instance_id_if_member_id_is_unknown():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetShouldNotSetInstanceIdIfMemberIdIsUnknown."""
    async with harness(group_instance_id="test-instance") as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_commit_response({T1P: Errors.NONE}),
                                lambda r: isinstance(r, OffsetCommitRequest) and r.group_instance_id is None)
        await coordinator.commit_offsets_sync(offsets(), 5000)
        assert broker.requests[-1].member_id == ""


async def test_commit_offset_rebalance_in_progress():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetRebalanceInProgress."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        # ensureActiveGroup(timer(0)): the JoinGroup goes out and is not answered yet.
        with anyio.move_on_after(0):
            await coordinator.poll(0)
        await settle()
        assert broker.sent()[-1] == "JoinGroupRequest" and len(broker.held) == 1
        assert coordinator.rejoin_needed
        # While rebalancing the commit fails before anything is sent.
        with pytest.raises(RebalanceInProgressException):
            await coordinator.commit_offsets_sync(offsets(100, "metadata"), LONG)
        assert broker.sent()[-1] == "JoinGroupRequest"
        broker.held.pop().respond(join_group_leader_response(1, "leader", {"leader": [TOPIC1]}, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("leader", 1, leader=True))
        assert await coordinator.poll(LONG)
        expected = Generation(1, "leader", "range")
        assert not coordinator.rejoin_needed
        assert coordinator.generation == expected
        prepare_offset_commit(broker, {T1P: 100}, Errors.REBALANCE_IN_PROGRESS)
        with pytest.raises(RebalanceInProgressException):
            await coordinator.commit_offsets_sync(offsets(100, "metadata"), LONG)
        # A rejoin is asked for, but the generation stays.
        assert coordinator.rejoin_needed
        assert coordinator.generation == expected


async def test_commit_sent_while_stable_member_awaits_rejoin():
    """Mirrors the STABLE case of ConsumerCoordinator#sendOffsetCommitRequest (generationIfStable): a heartbeat
    asking for a rebalance does not stop a stable member's commit, which goes out with its generation."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.REBALANCE_IN_PROGRESS))
        assert coordinator.rejoin_needed
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await coordinator.commit_offsets_sync(offsets(), LONG)
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id) == (1, CONSUMER_ID)


async def test_commit_after_reset_generation_fails_without_sending():
    """Mirrors the UNJOINED branch of ConsumerCoordinator#sendOffsetCommitRequest: a subscribed consumer out of
    the group cannot commit (CommitFailedException), as after testCommitOffsetUnknownMemberShouldResetToNoGeneration."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.UNKNOWN_MEMBER_ID))
        before = len(broker.requests)
        with pytest.raises(CommitFailedException, match="not part of an active group"):
            await coordinator.commit_offsets_sync(offsets(), LONG)
        assert len(broker.requests) == before


async def test_commit_offset_sync_callback_with_non_retriable_exception():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetSyncCallbackWithNonRetriableException."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, Errors.UNKNOWN_SERVER_ERROR)
        with pytest.raises(KafkaException, match="Unexpected error in commit"):
            await coordinator.commit_offsets_sync(offsets(), LONG)


async def test_commit_offset_sync_without_future_gets_completed():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetSyncWithoutFutureGetsCompleted: a zero timeout with no
    answer fails (kafka_ref raises TimeoutException where Kafka's commitOffsetsSync returns false)."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        with pytest.raises(TimeoutException):
            with anyio.fail_after(60):
                await coordinator.commit_offsets_sync(offsets(), 0)


async def test_commit_offset_request_sync_with_fenced_instance_id_exception():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetRequestSyncWithFencedInstanceIdException."""
    from kafka_ref.common.errors import FencedInstanceIdException

    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, Errors.FENCED_INSTANCE_ID)
        with pytest.raises(FencedInstanceIdException):
            await coordinator.commit_offsets_sync(offsets(), LONG)


async def test_commit_topic_authorization_failed():
    """Mirrors the TOPIC_AUTHORIZATION_FAILED branch of ConsumerCoordinator.OffsetCommitResponseHandler
    (ConsumerCoordinatorTest has no test of it)."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_commit_response({T1P: Errors.TOPIC_AUTHORIZATION_FAILED, T2P: Errors.NONE}))
        with pytest.raises(TopicAuthorizationException, match=r"Not authorized to access topics: \[test1\]"):
            await coordinator.commit_offsets_sync({T1P: OffsetAndMetadata(1), T2P: OffsetAndMetadata(2)}, LONG)


# --------------------------------------------------------------------------------------------
# Offset commits (commitAsync)
# --------------------------------------------------------------------------------------------


class MockCommitCallback:
    """ConsumerCoordinatorTest's MockCommitCallback: counts its calls, keeps the last offsets and exception."""

    def __init__(self) -> None:
        self.invoked = 0
        self.offsets: dict[TopicPartition, OffsetAndMetadata] | None = None
        self.exception: BaseException | None = None

    def __call__(self, committed: dict[TopicPartition, OffsetAndMetadata], exception: BaseException | None) -> None:
        self.invoked += 1
        self.offsets, self.exception = dict(committed), exception


async def next_poll(coordinator, consumer) -> None:
    """The consumer's next poll as far as the coordinator goes: pending commitAsync calls are sent and
    the callbacks of finished ones run (ConsumerCoordinator#poll starts with invokeCompletedOffsetCommitCallbacks)."""
    await coordinator.poll_for_consumer(consumer)


@pytest.mark.parametrize("manual, metadata", [(False, ""), (True, ""), (True, "hello")])
async def test_commit_offset_async_succeeds(manual, metadata):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetAsyncWithDefaultCallback, #testCommitOffsetOnly and
    #testCommitOffsetMetadataAsync: one OffsetCommit, and the callback runs once, without an exception,
    with the offsets committed. kafka_ref sends the commit at the next poll (no network thread), so
    nothing is sent and no callback runs before it."""
    async with harness() as (consumer, coordinator, broker, _):
        if manual:
            consumer.assign([T1P])
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        callback = MockCommitCallback()
        coordinator.commit_offsets_async(offsets(100, metadata), callback)
        assert (callback.invoked, broker.sent()) == (0, ["FindCoordinatorRequest"])
        await next_poll(coordinator, consumer)
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]
        assert broker.requests[-1].topics[0].partitions[0].committed_metadata == metadata
        assert (callback.invoked, callback.exception, callback.offsets) == (1, None, offsets(100, metadata))
        # Each callback runs once.
        await next_poll(coordinator, consumer)
        assert callback.invoked == 1


@pytest.mark.parametrize("how", ["COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR", "disconnected"])
async def test_commit_offset_async_retriable_failure(how):
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetAsyncFailedWithDefaultCallback,
    #testCommitOffsetAsyncCoordinatorNotAvailable, #testCommitOffsetAsyncNotCoordinator and
    #testCommitOffsetAsyncDisconnected: no retry; the coordinator is marked unknown and the callback
    hears RetriableCommitFailedException once, caused by the error (DisconnectException for a lost connection)."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        if how == "disconnected":
            prepare_offset_commit(broker, {T1P: 100}, Errors.NONE, disconnected=True)
        else:
            prepare_offset_commit(broker, {T1P: 100}, Errors[how])
        callback = MockCommitCallback()
        coordinator.commit_offsets_async(offsets(), callback)
        await next_poll(coordinator, consumer)
        assert coordinator.coordinator is None
        assert callback.invoked == 1
        assert isinstance(callback.exception, RetriableCommitFailedException)
        cause = DisconnectException if how == "disconnected" else type(Errors[how].exception())
        assert type(callback.exception.__cause__) is cause
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]


async def test_commit_offset_async_coordinator_lookup_failure_is_retriable():
    """Mirrors ConsumerCoordinator#commitOffsetsAsync's coordinator lookup (the onFailure of its listener):
    with no coordinator known the commit waits for a lookup, and a lookup that fails, even with a fatal
    error such as GROUP_AUTHORIZATION_FAILED, reaches the callback as RetriableCommitFailedException
    wrapping that error; no OffsetCommit is sent."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        broker.prepare_response(group_coordinator_response(Errors.GROUP_AUTHORIZATION_FAILED),
                                lambda r: isinstance(r, FindCoordinatorRequest))
        callback = MockCommitCallback()
        coordinator.commit_offsets_async(offsets(), callback)
        await next_poll(coordinator, consumer)
        assert broker.sent() == ["FindCoordinatorRequest"]
        assert callback.invoked == 1
        assert isinstance(callback.exception, RetriableCommitFailedException)
        assert isinstance(callback.exception.__cause__, GroupAuthorizationException)


async def test_async_commit_callbacks_invoked_prior_to_sync_commit_completion():
    """Mirrors ConsumerCoordinatorTest#testAsyncCommitCallbacksInvokedPriorToSyncCommitCompletion: a
    commitSync after a commitAsync returns only after the async commit's callback ran, and the
    coordinator gets the commits in call order. (kafka_ref's commitSync sends the earlier async commit
    first, so the two requests are answered one after the other rather than together.)"""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        committed: list[int] = []
        coordinator.commit_offsets_async({T1P: OffsetAndMetadata(0)}, lambda o, e: committed.append(0))

        async def commit_sync() -> None:
            await coordinator.commit_offsets_sync({T1P: OffsetAndMetadata(1)}, 10000)
            committed.append(1)

        async with anyio.create_task_group() as tg:
            tg.start_soon(commit_sync)
            for expected in (0, 1):
                await settle()
                assert len(broker.held) == 1
                assert broker.held[0].request.offsets() == {T1P: expected}
                broker.respond(offset_commit_response({T1P: Errors.NONE}), OffsetCommitRequest)
        assert committed == [0, 1]
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest", "OffsetCommitRequest"]


async def test_coordinator_not_available_with_user_assigned_type():
    """Mirrors ConsumerCoordinatorTest#testCoordinatorNotAvailableWithUserAssignedType: a manually assigned
    consumer with nothing to commit never looks the coordinator up at poll (the prepared answers stay unused)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        broker.prepare_response(group_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE))
        await next_poll(coordinator, consumer)
        assert coordinator.coordinator is None
        broker.prepare_response(group_coordinator_response(Errors.NONE))
        await next_poll(coordinator, consumer)
        assert coordinator.coordinator is None
        assert broker.requests == [] and len(broker.prepared) == 2


async def test_commit_async_with_user_assigned_type():
    """Mirrors ConsumerCoordinatorTest#testCommitAsyncWithUserAssignedType: a manually assigned consumer
    looks the coordinator up only for a commit, and sends the commit once it is found. (kafka_ref sends
    the lookup at the poll, and a poll cut short abandons it: the second poll sends a new one, answered
    here from the prepared queue, where Kafka's test answers the first.)"""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        await next_poll(coordinator, consumer)
        assert coordinator.coordinator is None and broker.requests == []
        callback = MockCommitCallback()
        coordinator.commit_offsets_async(offsets(), callback)
        with anyio.move_on_after(0.001):
            await next_poll(coordinator, consumer)
        assert coordinator.coordinator is None
        assert broker.sent() == ["FindCoordinatorRequest"] and len(broker.held) == 1
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        with anyio.move_on_after(0.001):
            await next_poll(coordinator, consumer)
        assert coordinator.coordinator == NODE
        assert broker.sent()[-1] == "OffsetCommitRequest"
        assert broker.waiting(OffsetCommitRequest)[0].request.offsets() == {T1P: 100}
        # No answer yet: the callback has not run.
        assert callback.invoked == 0


async def test_commit_after_leave_group():
    """Mirrors ConsumerCoordinatorTest#testCommitAfterLeaveGroup: after leaving the group and switching to
    manual assignment, a commitAsync goes as a simple consumer (no generation, no member id)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        consumer.unsubscribe()
        coordinator.maybe_leave_group_nowait("test commit after leave")
        consumer.assign([T1P])
        await settle()
        broker.prepare_response(offset_commit_response({T1P: Errors.NONE}), lambda r: (
            isinstance(r, OffsetCommitRequest) and r.member_id == "" and r.generation_id_or_member_epoch == -1))
        callback = MockCommitCallback()
        coordinator.commit_offsets_async(offsets(), callback)
        await next_poll(coordinator, consumer)
        assert broker.sent()[-2:] == ["LeaveGroupRequest", "OffsetCommitRequest"]
        assert (callback.invoked, callback.exception) == (1, None)


async def receive_fenced_instance_id_exception(consumer, coordinator, broker) -> MockCommitCallback:
    """ConsumerCoordinatorTest#receiveFencedInstanceIdException: an async commit answered FENCED_INSTANCE_ID;
    the call that would run its callback raises FencedInstanceIdException instead."""
    consumer.assign([T1P])
    await ensure_coordinator_ready(coordinator, broker)
    prepare_offset_commit(broker, {T1P: 100}, Errors.FENCED_INSTANCE_ID)
    callback = MockCommitCallback()
    coordinator.commit_offsets_async(offsets(), callback)
    with pytest.raises(FencedInstanceIdException):
        await next_poll(coordinator, consumer)
    return callback


async def test_commit_offset_request_async_with_fenced_instance_id_exception():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetRequestAsyncWithFencedInstanceIdException: the fenced
    commit's own callback never runs (asyncCommitFenced is checked before any callback)."""
    async with harness() as (consumer, coordinator, broker, _):
        callback = await receive_fenced_instance_id_exception(consumer, coordinator, broker)
        assert callback.invoked == 0
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]


async def test_commit_offset_request_async_always_receive_fenced_exception():
    """Mirrors ConsumerCoordinatorTest#testCommitOffsetRequestAsyncAlwaysReceiveFencedException: once fenced,
    commitAsync, commitSync and poll all raise FencedInstanceIdException, and nothing more is sent."""
    async with harness() as (consumer, coordinator, broker, _):
        await receive_fenced_instance_id_exception(consumer, coordinator, broker)
        later = MockCommitCallback()
        with pytest.raises(FencedInstanceIdException):
            coordinator.commit_offsets_async(offsets(), later)
        with pytest.raises(FencedInstanceIdException):
            await coordinator.commit_offsets_sync(offsets(), LONG)
        with pytest.raises(FencedInstanceIdException):
            await next_poll(coordinator, consumer)
        assert later.invoked == 0
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]


# --------------------------------------------------------------------------------------------
# Committed offsets (OffsetFetch)
# --------------------------------------------------------------------------------------------


async def assign_manually(consumer) -> None:
    consumer.assign([T1P])
    assert consumer.subscriptions.position(T1P) is None


async def test_refresh_offset():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffset."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", 100)),
                                lambda r: isinstance(r, OffsetFetchRequest) and r.require_stable)
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        assert consumer.subscriptions.position(T1P).offset == 100


async def test_refresh_offset_with_validation():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetWithValidation: a committed offset from an older leader
    epoch becomes the position but must be validated (KIP-320) before fetching."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.leader_epoch = 4
        assert await consumer.client.maybe_update_metadata()
        assert consumer.metadata.current_leader(T1P).epoch == 4
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", 100, 3)))
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        state = consumer.subscriptions.assigned_state(T1P)
        assert (state.position.offset, state.position.offset_epoch) == (100, 3)
        assert state.awaiting_validation
        assert not state.has_valid_position()


async def test_fetch_committed_offsets():
    """Mirrors ConsumerCoordinatorTest#testFetchCommittedOffsets."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "blahblah", 500, 15)))
        fetched = await coordinator.fetch_committed_offsets([T1P], LONG)
        assert fetched == {T1P: OffsetAndMetadata(500, 15, "blahblah")}


async def test_topic_authorization_failed_in_offset_fetch():
    """Mirrors ConsumerCoordinatorTest#testTopicAuthorizationFailedInOffsetFetch."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_fetch_response(
            Errors.NONE, partition_offset(T1P, Errors.TOPIC_AUTHORIZATION_FAILED, "", -1)))
        with pytest.raises(TopicAuthorizationException, match=r"Not authorized to access topics: \[test1\]"):
            await coordinator.fetch_committed_offsets([T1P], LONG)


async def test_refresh_offset_load_in_progress():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetLoadInProgress."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.COORDINATOR_LOAD_IN_PROGRESS, {}))
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", 100)))
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        assert consumer.subscriptions.position(T1P).offset == 100
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetFetchRequest", "OffsetFetchRequest"]


async def test_refresh_offsets_group_not_authorized():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetsGroupNotAuthorized."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.GROUP_AUTHORIZATION_FAILED, {}))
        with pytest.raises(GroupAuthorizationException, match=GROUP_ID):
            await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)


async def test_refresh_offset_with_pending_transactions():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetWithPendingTransactions."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.UNSTABLE_OFFSET_COMMIT, "", -1)))
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", 100)))
        assert not await coordinator.refresh_committed_offsets_if_needed(consumer, 0)
        assert consumer.subscriptions.position(T1P) is None
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, 0)
        assert consumer.subscriptions.position(T1P).offset == 100


async def test_refresh_offset_unknown_topic_or_partition():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetUnknownTopicOrPartition."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.UNKNOWN_TOPIC_OR_PARTITION, "", 100)))
        with pytest.raises(KafkaException, match="Topic or Partition test1-0 does not exist"):
            await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)


async def test_refresh_offset_not_coordinator_for_consumer():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetNotCoordinatorForConsumer."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.NOT_COORDINATOR, {}))
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", 100)))
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        assert consumer.subscriptions.position(T1P).offset == 100
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetFetchRequest", "FindCoordinatorRequest",
                                 "OffsetFetchRequest"]


async def test_refresh_offset_with_no_fetchable_offsets():
    """Mirrors ConsumerCoordinatorTest#testRefreshOffsetWithNoFetchableOffsets."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        await assign_manually(consumer)
        broker.prepare_response(offset_fetch_response(Errors.NONE, partition_offset(T1P, Errors.NONE, "", -1)))
        assert await coordinator.refresh_committed_offsets_if_needed(consumer, LONG)
        state = consumer.subscriptions.assigned_state(T1P)
        assert state.position is None
        assert not state.awaiting_reset()
        assert consumer.subscriptions.partitions_needing_reset(coordinator.time.milliseconds()) == []


async def test_offset_fetch_coordinator_not_available_is_unexpected():
    """Mirrors the group-level error branch of ConsumerCoordinator.OffsetFetchResponseHandler (3.8): only
    COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR are retried; COORDINATOR_NOT_AVAILABLE is unexpected."""
    async with harness() as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(offset_fetch_response(Errors.COORDINATOR_NOT_AVAILABLE, {}))
        with pytest.raises(KafkaException, match="Unexpected error in fetch offset response"):
            await coordinator.fetch_committed_offsets([T1P], LONG)
