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

Auto-commit is off in the harness unless a test turns it on (``enable_auto_commit=True``), as the
Kafka test builds its coordinator; the interval is the Kafka test's 2000 ms. kafka_ref's poll waits
for the auto-commit's answer; where Kafka's test leaves a commit in flight, the port's poll stops
short (``poll_without_waiting``) and the next poll waits for the same request. onJoinPrepare is
called as ``_on_join_prepare(deadline, generation, member_id)``; close(Duration) is ``aclose``.

Not ported:
- testMetrics, testThreadSafeAssignedPartitionsMetric: kafka_ref keeps no client metrics.
- testPerformAssignment*, testOnLeaderElectedShouldSkipAssignment, testSelectRebalanceProtocol,
  testOutdatedCoordinatorAssignment, test*ExceptionThrownFirstNonBlockingSubCallbacks,
  test*ExceptionShouldBeRenderedIfNotKafkaException, testPrepareJoinAndRejoinAfterFailedRebalance:
  custom (Mock/ThrowOnAssignment) assignors, the COOPERATIVE protocol or callback exception
  plumbing, none of which kafka_ref models (only the built-in range / round-robin assignors).
- testRackAware*/testNonRackAware*, testSubscriptionRackId: rack-aware assignment is not modelled.
- testSubscriptionChangeWithAuthorizationFailure: kafka_ref's ConsumerCoordinator#poll does not raise
  the metadata's topic errors (KafkaConsumer's poll does, after the coordinator's).
- testPerformAssignmentShouldUpdateGroupSubscriptionAfterAssignmentIfNeeded: needs an assignor that
  assigns topics nobody subscribed to (the built-in ones do not).

Pattern subscriptions and metadata-triggered rejoins (the last section) set the cluster the way
MockClient#updateMetadata does (``update_metadata``: the scripted broker's topics change and the
consumer's metadata takes them in at once); MockClient#prepareMetadataUpdate is the broker's topics
changed for the consumer's next refresh. Python's ``re`` stands in for java.util.regex.
- testCloseNoResponseForLeaveGroup: kafka_ref's close sends LeaveGroup without waiting for its answer.
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

import re

from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Callable

import anyio
import pytest
from mock_brokers import MockBrokers

from kafka_ref.clients.abstract_coordinator import NO_GENERATION, Generation
from kafka_ref.clients.consumer import ConsumerRebalanceListener, KafkaConsumer, RetriableCommitFailedException
from kafka_ref.clients.consumer_coordinator_offsets import CommitFailedException, OffsetAndMetadata
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
AUTO_COMMIT_INTERVAL_MS = 2000
RETRY_BACKOFF_MS = 100
REQUEST_TIMEOUT_MS = 30000
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
        # (Auto-commit off unless a test asks for it, as ConsumerCoordinatorTest#setup builds its coordinator.)
        config = dict(client_id="consumer-1", group_id=GROUP_ID, session_timeout_ms=SESSION_TIMEOUT_MS,
                      heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, max_poll_interval_ms=REBALANCE_TIMEOUT_MS,
                      retry_backoff_ms=RETRY_BACKOFF_MS, request_timeout_ms=REQUEST_TIMEOUT_MS,
                      enable_auto_commit=False, auto_commit_interval_ms=AUTO_COMMIT_INTERVAL_MS)
        config.update(consumer_config)
        consumer = KafkaConsumer(network, [NODE], **config)
        broker.time = consumer.time
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
    from kafka_ref.clients.abstract_coordinator import MemberState

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
# Auto-commit (enable.auto.commit)
# --------------------------------------------------------------------------------------------


def committed_offsets_sent(broker: ScriptedCoordinator) -> list[dict[TopicPartition, int]]:
    """The offsets of every OffsetCommit the coordinator received, in order."""
    return [r.offsets() for r in broker.requests if isinstance(r, OffsetCommitRequest)]


async def poll_without_waiting(coordinator) -> None:
    """ConsumerCoordinator#poll whose answers are not waited for: what it sends goes out, a request
    left unanswered stays in flight (the next poll waits for the same one)."""
    with anyio.move_on_after(0.000001):
        await coordinator.poll(LONG)


async def test_auto_commit_dynamic_assignment():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitDynamicAssignment."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        joined_at = coordinator.time.milliseconds()
        consumer.subscriptions.seek(T1P, 100)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await coordinator.poll(LONG)
        assert broker.prepared == deque()
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id) == (1, CONSUMER_ID)
        assert broker.arrival_times(OffsetCommitRequest) == [joined_at + AUTO_COMMIT_INTERVAL_MS]
        # The next one is due a whole interval later.
        assert coordinator.time_to_next_poll(coordinator.time.milliseconds()) == AUTO_COMMIT_INTERVAL_MS


async def test_auto_commit_not_due_before_interval():
    """ConsumerCoordinator#maybeAutoCommitOffsetsAsync: a poll one millisecond before the interval has passed
    since the join (onJoinComplete restarts the timer, although the consumer was created a whole interval
    earlier) commits nothing; at the interval it commits."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        consumer.subscriptions.seek(T1P, 100)
        await anyio.sleep((AUTO_COMMIT_INTERVAL_MS - 1) / 1000)
        assert coordinator.time_to_next_poll(coordinator.time.milliseconds()) == 1
        assert await coordinator.poll(LONG)
        assert committed_offsets_sent(broker) == []
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await anyio.sleep(0.001)
        assert await coordinator.poll(LONG)
        assert committed_offsets_sent(broker) == [{T1P: 100}]


async def test_auto_commit_retry_backoff():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitRetryBackoff: a retriable failure brings the next
    auto-commit forward to retry.backoff.ms after it, not a whole interval."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        consumer.subscriptions.seek(T1P, 100)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        failed_at = coordinator.time.milliseconds()
        # The commit fails with a retriable error: the coordinator is looked up again.
        prepare_offset_commit(broker, {T1P: 100}, Errors.NOT_COORDINATOR)
        assert await coordinator.poll(LONG)
        assert coordinator.coordinator is None
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        assert await coordinator.poll(LONG)
        assert coordinator.coordinator == NODE
        consumer.subscriptions.seek(T1P, 200)
        # Half the backoff: no new commit.
        await anyio.sleep(RETRY_BACKOFF_MS / 2 / 1000)
        assert await coordinator.poll(LONG)
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        # The whole backoff: the commit is retried with the new position.
        await anyio.sleep(RETRY_BACKOFF_MS / 2 / 1000)
        await poll_without_waiting(coordinator)
        assert len(broker.waiting(OffsetCommitRequest)) == 1
        assert committed_offsets_sent(broker) == [{T1P: 100}, {T1P: 200}]
        assert broker.arrival_times(OffsetCommitRequest) == [failed_at, failed_at + RETRY_BACKOFF_MS]
        broker.respond(offset_commit_response({T1P: Errors.NONE}), OffsetCommitRequest)
        assert await coordinator.poll(LONG)
        assert broker.waiting(OffsetCommitRequest) == []
        assert len(committed_offsets_sent(broker)) == 2


async def test_auto_commit_awaits_interval():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitAwaitsInterval: an unanswered auto-commit is not sent
    again, and the next one waits for the interval (kafka_ref's poll waits for the answer: each poll
    here stops short, and the next one waits for the same request)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        consumer.subscriptions.seek(T1P, 100)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        first_at = coordinator.time.milliseconds()
        # Sent, not answered.
        await poll_without_waiting(coordinator)
        assert len(broker.waiting(OffsetCommitRequest)) == 1
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 2 / 1000)
        # No second commit while the first is unanswered.
        await poll_without_waiting(coordinator)
        assert len(broker.waiting(OffsetCommitRequest)) == 1
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        broker.respond(offset_commit_response({T1P: Errors.NONE}), OffsetCommitRequest)
        assert await coordinator.poll(LONG)
        assert broker.waiting(OffsetCommitRequest) == []
        consumer.subscriptions.seek(T1P, 200)
        # Before the interval: nothing.
        assert await coordinator.poll(LONG)
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        # After the rest of the interval: the next commit.
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 2 / 1000)
        await poll_without_waiting(coordinator)
        assert len(broker.waiting(OffsetCommitRequest)) == 1
        assert committed_offsets_sent(broker) == [{T1P: 100}, {T1P: 200}]
        assert broker.arrival_times(OffsetCommitRequest) == [first_at, first_at + AUTO_COMMIT_INTERVAL_MS]
        broker.respond(offset_commit_response({T1P: Errors.NONE}), OffsetCommitRequest)
        assert await coordinator.poll(LONG)
        assert broker.waiting(OffsetCommitRequest) == []


async def test_auto_commit_dynamic_assignment_rebalance():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitDynamicAssignmentRebalance: an interval that passed
    before the member joined commits nothing (the join restarts the timer); one after it commits."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        # Not joined: no commit.
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest", "SyncGroupRequest"]
        consumer.subscriptions.seek(T1P, 100)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await coordinator.poll(LONG)
        assert broker.prepared == deque()
        assert committed_offsets_sent(broker) == [{T1P: 100}]


async def test_auto_commit_manual_assignment():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitManualAssignment: a manually assigned consumer with a
    group.id auto-commits too, as a simple consumer (no generation, no member id)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        consumer.subscriptions.seek(T1P, 100)
        await ensure_coordinator_ready(coordinator, broker)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await coordinator.poll(LONG)
        assert broker.prepared == deque()
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id, commit.group_instance_id) == (-1, "", None)


async def test_auto_commit_manual_assignment_coordinator_unknown():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitManualAssignmentCoordinatorUnknown: nothing is
    committed without a poll; once the coordinator is found, the overdue commit goes at the next poll."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        consumer.subscriptions.seek(T1P, 100)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert broker.requests == []
        await ensure_coordinator_ready(coordinator, broker)
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        assert await coordinator.poll(LONG)
        assert broker.prepared == deque()
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]


async def test_auto_commit_async_with_user_assigned_type():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitAsyncWithUserAssignedType: a manually assigned consumer
    looks up no coordinator until an auto-commit is due; then it finds one and sends the commit (Kafka
    over two polls, the lookup in flight after the first; kafka_ref's lookup is waited for in one)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        assert await coordinator.poll(0)
        assert coordinator.coordinator is None
        assert broker.requests == []
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        consumer.subscriptions.seek(T1P, 100)
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        await poll_without_waiting(coordinator)
        assert coordinator.coordinator == NODE
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]
        assert len(broker.waiting(OffsetCommitRequest)) == 1


async def test_auto_commit_after_coordinator_back_to_service():
    """Mirrors ConsumerCoordinatorTest#testAutoCommitAfterCoordinatorBackToService: the due auto-commit of a
    consumer whose coordinator is unknown looks it up first, then commits; the position is untouched."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.assign([T1P])
        consumer.subscriptions.seek(T1P, 100)
        coordinator.mark_coordinator_unknown("test cause")
        assert coordinator.coordinator is None
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert coordinator.maybe_auto_commit_offsets_async(coordinator.time.milliseconds())
        # (Kafka's network thread sends it; here the consumer's next poll does.)
        await next_poll(coordinator, consumer)
        assert coordinator.coordinator == NODE
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]
        assert consumer.subscriptions.position(T1P).offset == 100


async def test_auto_commit_on_manual_reassignment():
    """LegacyKafkaConsumer#assign: a new manual assignment first auto-commits the consumed positions (of the
    partitions given up too) when the interval has passed, as no rebalance will commit them."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        await ensure_coordinator_ready(coordinator, broker)
        consumer.assign([T1P])
        consumer.subscriptions.seek(T1P, 100)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        consumer.assign([T2P])
        assert consumer.assignment() == {T2P}
        await next_poll(coordinator, consumer)
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert broker.prepared == deque()


async def prepare_coordinator_for_close_test(consumer, coordinator, broker, use_group_management: bool,
                                             should_poll: bool) -> None:
    """ConsumerCoordinatorTest#prepareCoordinatorForCloseTest: coordinator found, joined as a follower
    owning ``test1-0`` (or assigned it by hand), position 100, then one poll if asked."""
    if use_group_management:
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
    else:
        await ensure_coordinator_ready(coordinator, broker)
        consumer.assign([T1P])
    consumer.subscriptions.seek(T1P, 100)
    if should_poll:
        assert await coordinator.poll(LONG)


async def test_on_join_prepare_with_offset_commit_should_success_after_retry():
    """Mirrors ConsumerCoordinatorTest#testOnJoinPrepareWithOffsetCommitShouldSuccessAfterRetry: a retriable
    failure of the auto-commit before the rebalance makes onJoinPrepare answer "not yet" after the retry
    backoff; the next call commits again and revokes."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=False)
        prepare_offset_commit(broker, {T1P: 100}, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        started = coordinator.time.milliseconds()
        assert not await coordinator._on_join_prepare(now_plus(coordinator, 100), 42, "consumer-42")
        assert coordinator.time.milliseconds() - started == RETRY_BACKOFF_MS
        assert listener.revoked_count == 0 and consumer.assignment() == {T1P}
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        assert await coordinator._on_join_prepare(now_plus(coordinator, 100), 42, "consumer-42")
        assert broker.prepared == deque() and broker.held == []
        assert coordinator.coordinator == NODE
        assert committed_offsets_sent(broker) == [{T1P: 100}, {T1P: 100}]
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


async def test_on_join_prepare_with_offset_commit_should_keep_join_after_non_retryable_exception():
    """Mirrors ConsumerCoordinatorTest#testOnJoinPrepareWithOffsetCommitShouldKeepJoinAfterNonRetryableException."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=False)
        prepare_offset_commit(broker, {T1P: 100}, Errors.UNKNOWN_MEMBER_ID)
        assert await coordinator._on_join_prepare(now_plus(coordinator, 100), 42, "consumer-42")
        assert broker.prepared == deque() and broker.held == []
        assert coordinator.coordinator == NODE
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


async def test_on_join_prepare_with_offset_commit_should_keep_join_after_rebalance_timeout():
    """Mirrors ConsumerCoordinatorTest#testOnJoinPrepareWithOffsetCommitShouldKeepJoinAfterRebalanceTimeout:
    once rebalance.timeout.ms has passed since the first onJoinPrepare, a retriable failure no longer
    holds the rebalance back; the commit is the one sent first (still in flight, not sent again)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=False)
        assert not await coordinator._on_join_prepare(now_plus(coordinator, 0), 42, "consumer-42")
        await anyio.sleep(REBALANCE_TIMEOUT_MS / 1000)
        broker.respond(offset_commit_response({T1P: Errors.UNKNOWN_TOPIC_OR_PARTITION}), OffsetCommitRequest)
        assert await coordinator._on_join_prepare(now_plus(coordinator, 100), 42, "consumer-42")
        assert broker.prepared == deque() and broker.held == []
        assert coordinator.coordinator == NODE
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


async def test_join_prepare_with_disable_auto_commit():
    """Mirrors ConsumerCoordinatorTest#testJoinPrepareWithDisableAutoCommit: nothing is committed."""
    async with harness(group_instance_id="group-id") as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        assert await coordinator._on_join_prepare(now_plus(coordinator, 0), 42, "consumer-42")
        assert len(broker.prepared) == 1
        assert broker.held == []
        assert committed_offsets_sent(broker) == []
        assert coordinator.coordinator == NODE


@pytest.mark.parametrize("error, prepared, coordinator_known", [
    (Errors.NONE, True, True), (Errors.COORDINATOR_NOT_AVAILABLE, False, False), (Errors.UNKNOWN_MEMBER_ID, True, True)])
async def test_join_prepare_and_commit(error, prepared, coordinator_known):
    """Mirrors ConsumerCoordinatorTest#testJoinPrepareAndCommitCompleted, #testJoinPrepareAndCommitWithCoordinatorNotAvailable
    and #testJoinPrepareAndCommitWithUnknownMemberId (an expired timer still reads the answer that comes at once)."""
    async with harness(enable_auto_commit=True, group_instance_id="group-id") as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        prepare_offset_commit(broker, {T1P: 100}, error)
        started = coordinator.time.milliseconds()
        assert await coordinator._on_join_prepare(now_plus(coordinator, 0), 42, "consumer-42") is prepared
        coordinator.invoke_completed_offset_commit_callbacks()
        assert coordinator.time.milliseconds() == started
        assert broker.prepared == deque() and broker.held == []
        assert (coordinator.coordinator == NODE) is coordinator_known
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        commit = broker.requests[-1]
        assert (commit.generation_id_or_member_epoch, commit.member_id, commit.group_instance_id) == (1, CONSUMER_ID, "group-id")
        assert listener.revoked_count == (1 if prepared else 0)


async def test_rebalance_waits_for_auto_commit_before_join():
    """AbstractCoordinator#joinGroupIfNeeded with ConsumerCoordinator#onJoinPrepare: a rejoin first
    auto-commits the consumed positions and only then revokes and sends the JoinGroup; a retriable
    failure makes that poll return False after the retry backoff (joinGroupIfNeeded gives up when
    onJoinPrepare is not done), and the next poll commits again, then joins."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=False)
        consumer.subscribe([TOPIC1, TOPIC2])
        prepare_offset_commit(broker, {T1P: 100}, Errors.COORDINATOR_LOAD_IN_PROGRESS)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE), is_sync(CONSUMER_ID, 2, leader=False))
        started = coordinator.time.milliseconds()
        assert not await coordinator.poll(LONG)
        assert coordinator.time.milliseconds() - started == RETRY_BACKOFF_MS
        assert listener.revoked_count == 0 and "JoinGroupRequest" not in broker.sent()[-2:]
        assert await coordinator.poll(LONG)
        assert broker.sent()[-4:] == ["OffsetCommitRequest", "OffsetCommitRequest", "JoinGroupRequest", "SyncGroupRequest"]
        assert broker.arrival_times(OffsetCommitRequest) == [started, started + RETRY_BACKOFF_MS]
        assert broker.arrival_times(JoinGroupRequest)[-1] == started + RETRY_BACKOFF_MS
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert consumer.assignment() == {T1P, T2P}


async def test_close_dynamic_assignment():
    """Mirrors ConsumerCoordinatorTest#testCloseDynamicAssignment (#gracefulCloseTest): close auto-commits,
    then revokes the partitions and leaves the group."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        before = len(broker.requests)
        broker.prepare_response(offset_commit_response({T1P: Errors.NONE}),
                                lambda r: isinstance(r, OffsetCommitRequest) and r.group_id == GROUP_ID)
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        started = coordinator.time.milliseconds()
        await consumer.aclose()
        await settle()
        assert broker.sent()[before:] == ["OffsetCommitRequest", "LeaveGroupRequest"]
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert coordinator.time.milliseconds() - started == 1  # the settle


async def test_close_manual_assignment():
    """Mirrors ConsumerCoordinatorTest#testCloseManualAssignment: the auto-commit, and no LeaveGroup nor
    callback (a manually assigned consumer is no group member)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, False, should_poll=True)
        broker.prepare_response(offset_commit_response({T1P: Errors.NONE}),
                                lambda r: isinstance(r, OffsetCommitRequest) and r.group_id == GROUP_ID)
        await consumer.aclose()
        await settle()
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetCommitRequest"]
        assert (listener.revoked_count, listener.lost_count) == (0, 0)


async def test_close_without_auto_commit_leaves_without_commit():
    """ConsumerCoordinator#close with enable.auto.commit off: no commit, the partitions revoked, LeaveGroup
    (testCloseDynamicAssignment's other half)."""
    async with harness() as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        broker.prepare_response(LeaveGroupResponse(error_code=0), is_leave(CONSUMER_ID))
        consumer.close()
        await settle()
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert committed_offsets_sent(broker) == []
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


async def test_close_rebalance_listener_failure_is_raised_after_closing():
    """LegacyKafkaConsumer#close(Duration, boolean): the auto-commit goes out, then the user's listener raises
    in onLeavePrepare (so no LeaveGroup follows, as AbstractCoordinator#close skips maybeLeaveGroup); the
    consumer is closed all the same and close raises KafkaException caused by the listener's error."""

    class FailingListener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
            raise RuntimeError("listener failed")

    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1], FailingListener())
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        consumer.subscriptions.seek(T1P, 100)
        prepare_offset_commit(broker, {T1P: 100}, Errors.NONE)
        with pytest.raises(KafkaException, match="Failed to close kafka consumer") as raised:
            await consumer.aclose()
        assert isinstance(raised.value.__cause__, RuntimeError)
        await settle()
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert "LeaveGroupRequest" not in broker.sent()
        with pytest.raises(KafkaException, match="already been closed"):
            await consumer.poll(0)


async def make_coordinator_unknown(coordinator, broker, error: Errors) -> None:
    """ConsumerCoordinatorTest#makeCoordinatorUnknown: a heartbeat answered with ``error``."""
    await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(error))
    assert coordinator.coordinator is None


async def close_took_ms(consumer, timeout_ms: float | None = None) -> int:
    """How long KafkaConsumer#close(Duration) took on the virtual clock (close() with no timeout)."""
    started = consumer.time.milliseconds()
    if timeout_ms is None:
        await consumer.aclose()
    else:
        await consumer.aclose(timeout_ms)
    return consumer.time.milliseconds() - started


@pytest.mark.parametrize("error, auto_commit, instance_id, expected_ms", [
    (Errors.NOT_COORDINATOR, False, None, 0),
    (Errors.NOT_COORDINATOR, True, None, 1000),
    (Errors.COORDINATOR_NOT_AVAILABLE, False, None, 0),
    (Errors.COORDINATOR_NOT_AVAILABLE, True, "group-instance-id", 1000)])
async def test_close_coordinator_unknown(error, auto_commit, instance_id, expected_ms):
    """Mirrors ConsumerCoordinatorTest#testCloseCoordinatorNotKnownNoCommits, #testCloseCoordinatorNotKnownWithCommits,
    #testCloseCoordinatorUnavailableNoCommits and #testCloseTimeoutCoordinatorUnavailableForCommit: with a
    commit to make and no coordinator, close(1 s) takes the whole second looking for one; without, none of it."""
    async with harness(enable_auto_commit=auto_commit, group_instance_id=instance_id) as (consumer, coordinator, broker, _):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        await make_coordinator_unknown(coordinator, broker, error)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await close_took_ms(consumer, 1000) == expected_ms
        assert committed_offsets_sent(broker) == []
        assert broker.sent()[-1] == ("FindCoordinatorRequest" if auto_commit else "HeartbeatRequest")


async def test_close_coordinator_not_known_manual_assignment():
    """Mirrors ConsumerCoordinatorTest#testCloseCoordinatorNotKnownManualAssignment (the coordinator marked
    unknown directly: a manually assigned consumer sends no heartbeat)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, False, should_poll=True)
        coordinator.mark_coordinator_unknown("test")
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await close_took_ms(consumer, 1000) == 1000
        assert broker.sent() == ["FindCoordinatorRequest", "FindCoordinatorRequest"]


async def test_close_max_wait_coordinator_unavailable_for_commit():
    """Mirrors ConsumerCoordinatorTest#testCloseMaxWaitCoordinatorUnavailableForCommit: close(Long.MAX_VALUE)
    is bounded by request.timeout.ms."""
    async with harness(enable_auto_commit=True, group_instance_id="group-instance-id") as (consumer, coordinator, broker, _):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        await make_coordinator_unknown(coordinator, broker, Errors.COORDINATOR_NOT_AVAILABLE)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await close_took_ms(consumer, LONG) == REQUEST_TIMEOUT_MS


async def test_close_no_response_for_commit():
    """Mirrors ConsumerCoordinatorTest#testCloseNoResponseForCommit: an unanswered auto-commit holds close()
    for request.timeout.ms; a static member sends no LeaveGroup."""
    async with harness(enable_auto_commit=True, group_instance_id="group-instance-id") as (consumer, coordinator, broker, _):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await close_took_ms(consumer) == REQUEST_TIMEOUT_MS
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert "LeaveGroupRequest" not in broker.sent()


async def test_close_no_wait():
    """Mirrors ConsumerCoordinatorTest#testCloseNoWait: close(0) returns at once, having sent the auto-commit
    (KafkaConsumer#close() without a timeout, kafka_ref's synchronous ``close``, does the same)."""
    async with harness(enable_auto_commit=True, group_instance_id="group-instance-id") as (consumer, coordinator, broker, _):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        assert await close_took_ms(consumer, 0) == 0
        await settle()
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        assert len(broker.waiting(OffsetCommitRequest)) == 1


async def test_sync_close_sends_auto_commit_before_leave_group():
    """KafkaConsumer#close(Duration.ZERO) of a group member: the auto-commit goes out, then the LeaveGroup,
    neither waited for."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, listener):
        await prepare_coordinator_for_close_test(consumer, coordinator, broker, True, should_poll=True)
        before = len(broker.requests)
        consumer.close()
        await settle()
        assert broker.sent()[before:] == ["OffsetCommitRequest", "LeaveGroupRequest"]
        assert committed_offsets_sent(broker) == [{T1P: 100}]
        commit = broker.requests[before]
        assert (commit.generation_id_or_member_epoch, commit.member_id) == (1, CONSUMER_ID)
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})


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


# --------------------------------------------------------------------------------------------
# Pattern subscription and metadata-triggered rejoins
# --------------------------------------------------------------------------------------------


def update_metadata(consumer, broker: ScriptedCoordinator, leaders: dict[TopicPartition, int]) -> None:
    """MockClient#updateMetadata: the cluster becomes ``leaders`` and the consumer's metadata takes it in
    now (the coordinator sees it at its next #maybeUpdateSubscriptionMetadata)."""
    broker.leaders = dict(leaders)
    consumer.metadata.update_with_current_request_version(broker.metadata_response(), consumer.time.milliseconds())


def joined_topics(join: JoinGroupRequest) -> tuple[str, ...]:
    """The topics a JoinGroup's first protocol carries."""
    return ConsumerProtocol.deserialize_subscription(join.protocols[0].metadata).topics


def prepare_join_and_sync(broker: ScriptedCoordinator, member_id: str, generation: int, subscription: list[str],
                          assignment: list[TopicPartition]) -> None:
    """ConsumerCoordinatorTest#prepareJoinAndSyncResponse: this member leads alone and is handed ``assignment``."""
    broker.prepare_response(join_group_leader_response(generation, member_id, {member_id: subscription}, Errors.NONE))
    broker.prepare_response(sync_group_response(assignment, Errors.NONE), is_sync(member_id, generation, leader=True))


T1P1 = TopicPartition(TOPIC1, 1)
T2P1 = TopicPartition(TOPIC2, 1)
BOTH = {T1P: NODE, T2P: NODE}


async def test_metadata_topics_during_subscription_change():
    """Mirrors ConsumerCoordinatorTest#testMetadataTopicsDuringSubscriptionChange."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        assert coordinator.metadata_topics() == {TOPIC1}
        await ensure_coordinator_ready(coordinator, broker)
        prepare_join_and_sync(broker, "subscription_change", 1, [TOPIC1], [T1P])
        assert await coordinator.poll(0)
        assert coordinator.metadata_topics() == {TOPIC1}
        # The leader still watches the old topic until the next rebalance.
        consumer.subscribe([TOPIC2])
        assert coordinator.metadata_topics() == {TOPIC1, TOPIC2}
        prepare_join_and_sync(broker, "subscription_change", 2, [TOPIC2], [T2P])
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.assignment() == {T2P}
        assert coordinator.metadata_topics() == {TOPIC2}


async def test_pattern_join_group_leader():
    """Mirrors ConsumerCoordinatorTest#testPatternJoinGroupLeader.

    The range assignor plays MockPartitionAssignor: the member's subscription in the JoinGroup answer
    names both topics, as the JoinGroup itself does after the refresh a pattern subscriber forces first.
    """
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe(re.compile("test.*"))
        # The metadata knows one topic; the cluster has both by the time the consumer refreshes.
        update_metadata(consumer, broker, {T1P: NODE})
        broker.leaders = dict(BOTH)
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(1, "leader", {"leader": [TOPIC1, TOPIC2]}, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE), is_sync("leader", 1, leader=True))
        assert await coordinator.poll(LONG)
        assert joined_topics(broker.requests[-2]) == (TOPIC1, TOPIC2)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscriptions.num_assigned_partitions() == 2
        assert coordinator.metadata_topics() == {TOPIC1, TOPIC2}
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P, T2P})


async def test_pattern_join_group_follower():
    """Mirrors ConsumerCoordinatorTest#testPatternJoinGroupFollower: the topics of the assignment that
    match the pattern join the subscription (#maybeUpdateJoinedSubscription)."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe(re.compile("test.*"))
        update_metadata(consumer, broker, {T1P: NODE})
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
        broker.leaders = dict(BOTH)
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscriptions.num_assigned_partitions() == 2
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P, T2P})


async def test_metadata_refresh_during_rebalance():
    """Mirrors ConsumerCoordinatorTest#testMetadataRefreshDuringRebalance: a topic created (then deleted)
    while the leader's SyncGroup is out is matched at the next poll and the group rebalances."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe(re.compile(".*"))
        update_metadata(consumer, broker, {T1P: NODE})
        coordinator.maybe_update_subscription_metadata()
        assert consumer.subscription() == {TOPIC1}
        await ensure_coordinator_ready(coordinator, broker)

        def add_topic2(request: Any) -> bool:
            update_metadata(consumer, broker, BOTH)
            return True

        broker.prepare_response(join_group_leader_response(1, "leader", {"leader": [TOPIC1]}, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), add_topic2)
        assert await coordinator.poll(LONG)
        # The rejoin is noticed only by the next poll.
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscription() == {TOPIC1}
        assert consumer.assignment() == {T1P}
        assert (listener.revoked_count, listener.revoked) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (1, {T1P})

        # A second rebalance with the topic found; the metadata loses it again meanwhile.
        def drop_topic2(request: Any) -> bool:
            update_metadata(consumer, broker, {T1P: NODE})
            return True

        broker.prepare_response(join_group_leader_response(2, "leader", {"leader": [TOPIC1, TOPIC2]}, Errors.NONE),
                                lambda r: isinstance(r, JoinGroupRequest) and set(joined_topics(r)) >= {TOPIC1, TOPIC2})
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE), drop_topic2)
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        assert consumer.assignment() == {T1P, T2P}
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert (listener.assigned_count, listener.assigned) == (2, {T1P, T2P})

        # A third with the topic gone.
        broker.prepare_response(join_group_leader_response(3, "leader", {"leader": [TOPIC1]}, Errors.NONE),
                                lambda r: isinstance(r, JoinGroupRequest) and TOPIC1 in joined_topics(r))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscription() == {TOPIC1}
        assert consumer.assignment() == {T1P}
        assert (listener.revoked_count, listener.revoked) == (2, {T1P, T2P})
        assert (listener.assigned_count, listener.assigned) == (3, {T1P})
        assert listener.lost_count == 0


async def test_force_metadata_refresh_for_pattern_subscription_during_rebalance():
    """Mirrors ConsumerCoordinatorTest#testForceMetadataRefreshForPatternSubscriptionDuringRebalance."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe(re.compile(".*"))
        update_metadata(consumer, broker, {T1P: NODE})
        coordinator.maybe_update_subscription_metadata()
        assert consumer.subscription() == {TOPIC1}
        await ensure_coordinator_ready(coordinator, broker)
        # The next refresh names two topics.
        broker.leaders = dict(BOTH)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
        assert await coordinator.poll(LONG)
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        # A refresh that changes nothing does not rebalance again.
        consumer.metadata.request_update(True)
        await consumer.client.maybe_update_metadata()
        assert not coordinator.rejoin_needed_or_pending()


async def test_force_metadata_delete_for_pattern_subscription_during_rebalance():
    """Mirrors ConsumerCoordinatorTest#testForceMetadataDeleteForPatternSubscriptionDuringRebalance (auto-commit on)."""
    async with harness(enable_auto_commit=True) as (consumer, coordinator, broker, _):
        consumer.subscribe(re.compile("test.*"))
        update_metadata(consumer, broker, BOTH)
        coordinator.maybe_update_subscription_metadata()
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        await ensure_coordinator_ready(coordinator, broker)
        # The next refresh names one topic only.
        broker.leaders = {T1P: NODE}
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
        assert await coordinator.poll(LONG)
        assert consumer.subscription() == {TOPIC1}
        consumer.metadata.request_update(True)
        await consumer.client.maybe_update_metadata()
        assert not coordinator.rejoin_needed_or_pending()


async def test_rebalance_with_metadata_change():
    """Mirrors ConsumerCoordinatorTest#testRebalanceWithMetadataChange (verifyRebalanceWithMetadataChange
    expecting a rebalance, no rack). Where Kafka's poll(1) looks the coordinator up again and sends the
    next JoinGroup at once, kafka_ref's backs off first: the next poll does both."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1, TOPIC2])
        update_metadata(consumer, broker, BOTH)
        coordinator.maybe_update_subscription_metadata()
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(1, "leader", {"leader": [TOPIC1, TOPIC2]}, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.subscription() == {TOPIC1, TOPIC2}
        assert consumer.assignment() == {T1P, T2P}
        assert (listener.revoked_count, listener.revoked, listener.assigned_count) == (0, None, 1)
        # The metadata changes: the leader's next poll sends a JoinGroup.
        update_metadata(consumer, broker, {T1P: NODE})
        await poll_without_waiting(coordinator)
        assert [type(e.request).__name__ for e in broker.held] == ["JoinGroupRequest"]
        # The metadata goes back, the JoinGroup fails: the rejoin still goes ahead.
        update_metadata(consumer, broker, BOTH)
        broker.respond(join_group_follower_response(1, "leader", "leader", Errors.NOT_COORDINATOR), JoinGroupRequest)
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        assert broker.held == []
        await poll_without_waiting(coordinator)
        assert coordinator.rejoin_needed_or_pending()
        broker.prepare_response(join_group_leader_response(2, "leader", {"leader": [TOPIC1, TOPIC2]}, Errors.NONE),
                                is_join("leader"))
        broker.prepare_response(sync_group_response([T1P, T2P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert (listener.revoked_count, listener.revoked) == (1, {T1P, T2P})
        # Nothing lost: the failed rebalance was not fatal.
        assert (listener.lost_count, listener.lost) == (0, None)
        assert (listener.assigned_count, listener.assigned) == (2, {T1P, T2P})
        assert consumer.assignment() == {T1P, T2P}


async def test_metadata_change_triggers_rebalance():
    """Mirrors ConsumerCoordinatorTest#testMetadataChangeTriggersRebalance: a new partition of a subscribed topic."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        update_metadata(consumer, broker, BOTH)
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_leader_response(1, CONSUMER_ID, {CONSUMER_ID: [TOPIC1]}, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        update_metadata(consumer, broker, {T1P: NODE, T1P1: NODE})
        coordinator.maybe_update_subscription_metadata()
        assert coordinator.rejoin_needed_or_pending()
        assert coordinator.rejoin_reason == "cached metadata has changed"


@pytest.mark.parametrize("others", [False, True])
async def test_static_leader_rejoins_group_and_can_trigger_rebalance(others):
    """Mirrors ConsumerCoordinatorTest#testStaticLeaderRejoinsGroupAndCanTriggersRebalance (``others``
    False) and #testStaticLeaderRejoinsGroupAndCanDetectMetadataChangesForOtherMembers (True): a
    returning static leader told to skip the assignment still watches every member's topics."""
    import dataclasses

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        update_metadata(consumer, broker, BOTH)
        await ensure_coordinator_ready(coordinator, broker)
        members = {CONSUMER_ID: [TOPIC1], "consumer2": [TOPIC2]} if others else {CONSUMER_ID: [TOPIC1]}
        broker.prepare_response(dataclasses.replace(
            join_group_leader_response(1, CONSUMER_ID, members, Errors.NONE), skip_assignment=True))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE),
                                lambda r: isinstance(r, SyncGroupRequest) and r.group_assignment() == {})
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert coordinator.metadata_topics() == ({TOPIC1, TOPIC2} if others else {TOPIC1})
        # A new partition of the topic (of the other member's topic, which alone is left).
        update_metadata(consumer, broker, {T2P: NODE, T2P1: NODE} if others else {T1P: NODE, T1P1: NODE})
        coordinator.maybe_update_subscription_metadata()
        assert coordinator.rejoin_needed_or_pending()


async def test_update_metadata_during_rebalance():
    """Mirrors ConsumerCoordinatorTest#testUpdateMetadataDuringRebalance (the range assignor plays
    MockPartitionAssignor: with no metadata for topic2 it assigns topic1 only)."""
    tp1, tp2 = TopicPartition("topic1", 0), TopicPartition("topic2", 0)
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe(["topic1", "topic2"])
        update_metadata(consumer, broker, {tp1: NODE})
        await ensure_coordinator_ready(coordinator, broker)

        def both_topics(request: Any) -> bool:
            if (isinstance(request, SyncGroupRequest) and request.member_id == "leader" and request.generation_id == 1
                    and "leader" in request.group_assignment()):
                update_metadata(consumer, broker, {tp1: NODE, tp2: NODE})
                return True
            return False

        members = {"leader": ["topic1", "topic2"]}
        broker.prepare_response(join_group_leader_response(1, "leader", members, Errors.NONE))
        broker.prepare_response(sync_group_response([tp1], Errors.NONE), both_topics)
        assert await coordinator.poll(LONG)
        assert consumer.assignment() == {tp1}
        # The metadata update makes the leader rebalance again.
        broker.prepare_response(join_group_leader_response(2, "leader", members, Errors.NONE))
        broker.prepare_response(sync_group_response([tp1, tp2], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        assert consumer.assignment() == {tp1, tp2}
        assert broker.sent().count("JoinGroupRequest") == 2


@pytest.mark.parametrize("pattern, unavailable", [(False, set()), (True, set()), (True, {"notmatching"})])
async def test_rebalance_after_topic_unavailable(pattern, unavailable):
    """Mirrors ConsumerCoordinatorTest#testRebalanceAfterTopicUnavailableWithSubscribe,
    #testRebalanceAfterTopicUnavailableWithPatternSubscribe and
    #testRebalanceAfterNotMatchingTopicUnavailableWithPatternSubscribe (unavailableTopicTest): a
    subscribed topic unknown at the first assignment is assigned once it appears. kafka_ref's
    ConsumerNetworkClient#poll(0) is one metadata update sent at once."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe(re.compile("test.*") if pattern else [TOPIC1])
        broker.leaders = {}
        broker.topic_errors = {TOPIC1: Errors.UNKNOWN_TOPIC_OR_PARTITION}
        await ensure_coordinator_ready(coordinator, broker)
        members = {CONSUMER_ID: [TOPIC1]}
        broker.prepare_response(join_group_leader_response(1, CONSUMER_ID, members, Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not coordinator.rejoin_needed_or_pending()
        # Nothing to assign: the listener hears of no partition.
        assert listener.assigned == set()
        assert consumer.metadata.update_requested(), "Metadata refresh not requested for unavailable partitions"
        # The topic appears (another, not matching the pattern, is unknown).
        broker.leaders = {T1P: NODE}
        broker.topic_errors = {topic: Errors.UNKNOWN_TOPIC_OR_PARTITION for topic in unavailable}
        await consumer.client.maybe_update_metadata()
        broker.prepare_response(join_group_leader_response(2, CONSUMER_ID, members, Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.poll(LONG)
        assert not consumer.metadata.update_requested(), "Metadata refresh requested unnecessarily"
        assert not coordinator.rejoin_needed_or_pending()
        assert listener.assigned == {T1P}


@pytest.mark.parametrize("include_internal_topics", [False, True])
async def test_internal_topic_inclusion(include_internal_topics):
    """Mirrors ConsumerCoordinatorTest#testExcludeInternalTopicsConfigOption (False) and
    #testIncludeInternalTopicsConfigOption (True) (testInternalTopicInclusion)."""
    offsets_topic = TopicPartition("__consumer_offsets", 0)
    async with harness(exclude_internal_topics=not include_internal_topics) as (consumer, coordinator, broker, _):
        consumer.subscribe(re.compile(".*"))
        broker.internal_topics = {"__consumer_offsets"}
        update_metadata(consumer, broker, {offsets_topic: NODE})
        coordinator.maybe_update_subscription_metadata()
        assert ("__consumer_offsets" in consumer.subscription()) is include_internal_topics
