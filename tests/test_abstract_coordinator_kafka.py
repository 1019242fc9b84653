"""Ports of Kafka 3.8.0 AbstractCoordinatorTest: the group-membership base class of the consumer's coordinator.

clients/src/test/java/org/apache/kafka/clients/consumer/internals/AbstractCoordinatorTest.java drives a
DummyCoordinator (a bare AbstractCoordinator subclass) over a MockClient. Here the AbstractCoordinator
is kafka_ref.clients.abstract_coordinator.AbstractCoordinator as the ConsumerCoordinator that
KafkaConsumer builds (the only subclass kafka_ref has), talking to the scripted broker of
test_consumer_coordinator_kafka.py (``harness``, ``ScriptedCoordinator`` and the response builders are
shared with it). Kafka's sendJoinGroupRequest / joinGroupIfNeeded / ensureActiveGroup are
``_join_group`` (one JoinGroup and its SyncGroup; True when the next attempt goes at once) and
``ensure_active_group`` (the loop, with a deadline for the Timer); the heartbeat thread's step is
``maybe_heartbeat``. Besides the Kafka tests, the module checks the error branches of
AbstractCoordinator's response handlers that the Kafka tests reach only through other classes.

Not ported:
- testMetrics: kafka_ref keeps no client metrics.
- testCoordinatorDiscoveryExponentialBackoff: coordinator discovery backs off by a constant
  retry.backoff.ms; KIP-580's exponential backoff with random jitter is not modelled.
- testWakeup* (nine tests, testWakeupFromEnsureCoordinatorReady among them): no wakeup().
- testHeartbeatSentWhenCompletingRebalance, testUncaughtExceptionInHeartbeatThread,
  testPollHeartbeatAwakesHeartbeatThread: no heartbeat thread; heartbeats go from poll while the
  member is stable, and a JoinGroup / SyncGroup wait blocks them.
- testHandleMultipleMembersLeaveGroupResponse, testHandleLeaveGroupResponseWithEmptyMemberResponse,
  testHandleLeaveGroupResponseWithException: the LeaveGroup is sent without waiting (close is
  synchronous here), so there is no LeaveGroupResponseHandler future to check (of
  testHandleNormalLeaveGroupResponse and its truncated-reason variant, the request is checked).
- testLookupCoordinator: lookupCoordinator's shared in-flight future is not modelled
  (ensure_coordinator_ready sends FindCoordinator and waits for it in line).
- testAuthenticationErrorInEnsureCoordinatorReady: no authentication layer.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.clients.abstract_coordinator import NO_GENERATION, Generation, MemberState
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.join_group import JoinGroupResponse
from kafka_ref.common.requests.leave_group import LeaveGroupRequest
from kafka_ref.common.requests.sync_group import SyncGroupRequest, SyncGroupResponse
from test_consumer_coordinator_kafka import (
    CONSUMER_ID,
    HEARTBEAT_INTERVAL_MS,
    LONG,
    NODE,
    REBALANCE_TIMEOUT_MS,
    SESSION_TIMEOUT_MS,
    T1P,
    TOPIC1,
    Assignment,
    ConsumerProtocol,
    ensure_coordinator_ready,
    group_coordinator_response,
    harness,
    heartbeat_after_session_timeout,
    heartbeat_response,
    is_join,
    is_sync,
    join_as_follower_and_receive_assignment,
    join_group_follower_response,
    now_plus,
    settle,
    sync_group_response,
)

pytestmark = pytest.mark.anyio

REQUEST_TIMEOUT_MS = 30000  # the harness's request.timeout.ms
JOIN_GROUP_TIMEOUT_LAPSE = 5000  # AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE


# --------------------------------------------------------------------------------------------
# Moved from test_consumer_coordinator_kafka.py (bodies unchanged)
# --------------------------------------------------------------------------------------------


async def test_coordinator_discovery_retries_retriable_errors():
    """Mirrors the retriable branch of AbstractCoordinator#ensureCoordinatorReady: a FindCoordinator answered
    COORDINATOR_NOT_AVAILABLE is retried after retry.backoff.ms (and a metadata refresh)."""
    async with harness() as (_, coordinator, broker, _):
        broker.prepare_response(group_coordinator_response(Errors.COORDINATOR_NOT_AVAILABLE))
        broker.prepare_response(group_coordinator_response(Errors.NONE))
        start = coordinator.time.milliseconds()
        assert await coordinator.ensure_coordinator_ready(now_plus(coordinator))
        assert coordinator.coordinator == NODE
        assert broker.sent() == ["FindCoordinatorRequest", "FindCoordinatorRequest"]
        assert coordinator.time.milliseconds() - start >= 100


async def test_coordinator_discovery_fatal_error_is_raised():
    """Mirrors the fatal branch of AbstractCoordinator#ensureCoordinatorReady: a non-retriable FindCoordinator
    error is thrown, not retried."""
    from kafka_ref.common.errors import InvalidRequestException

    async with harness() as (_, coordinator, broker, _):
        broker.prepare_response(group_coordinator_response(Errors.INVALID_REQUEST))
        with pytest.raises(InvalidRequestException):
            await coordinator.ensure_coordinator_ready(now_plus(coordinator))
        assert broker.sent() == ["FindCoordinatorRequest"]
        assert coordinator.coordinator is None


async def test_heartbeat_illegal_generation_response_with_old_generation():
    """Mirrors AbstractCoordinatorTest#testHeartbeatIllegalGenerationResponseWithOldGeneration (and
    #testHeartbeatUnknownMemberResponseWithOldGeneration, #testHeartbeatInstanceFencedResponseWithOldGeneration):
    an answer about a generation the member has since left is ignored."""
    for error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
        async with harness() as (consumer, coordinator, broker, _):
            consumer.subscribe([TOPIC1])
            await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
            await anyio.sleep(SESSION_TIMEOUT_MS / 1000)
            with anyio.move_on_after(0):
                await coordinator.maybe_heartbeat()  # sent, not answered yet
            await settle()
            assert broker.sent()[-1] == "HeartbeatRequest" and len(broker.held) == 1
            # Meanwhile the member moved on to generation 2.
            new_generation = Generation(2, CONSUMER_ID, "range")
            coordinator.generation = new_generation
            broker.held.pop().respond(heartbeat_response(error))
            await coordinator.maybe_heartbeat()  # takes the answer to the pending heartbeat
            assert "heartbeat" not in coordinator._pending
            assert coordinator.coordinator == NODE
            assert coordinator.generation == new_generation
            assert not coordinator.rejoin_needed


async def test_heartbeat_rebalance_in_progress_requests_rejoin():
    """Mirrors the STABLE branch of AbstractCoordinator.HeartbeatResponseHandler#handle for REBALANCE_IN_PROGRESS
    (the counterpart of AbstractCoordinatorTest#testHeartbeatRebalanceInProgressResponseDuringRebalancing): a
    stable member asked to rebalance rejoins with its generation intact, revoking (not losing) its partitions."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.REBALANCE_IN_PROGRESS))
        assert coordinator.rejoin_needed
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(CONSUMER_ID))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 2, leader=False))
        assert await coordinator.poll(LONG)
        assert (listener.revoked_count, listener.revoked) == (1, {T1P})
        assert listener.lost_count == 0
        assert (listener.assigned_count, listener.assigned) == (2, {T1P})
        assert coordinator.generation == Generation(2, CONSUMER_ID, "range")


async def test_heartbeat_request_with_fenced_instance_id_exception():
    """Mirrors AbstractCoordinatorTest#testHeartbeatRequestWithFencedInstanceIdException."""
    from kafka_ref.common.errors import FencedInstanceIdException

    async with harness(group_instance_id="test-instance") as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await anyio.sleep(SESSION_TIMEOUT_MS / 1000)
        broker.prepare_response(heartbeat_response(Errors.FENCED_INSTANCE_ID))
        with pytest.raises(FencedInstanceIdException):
            await coordinator.maybe_heartbeat()
        assert broker.requests[-1].group_instance_id == "test-instance"
        assert coordinator.generation == NO_GENERATION
        assert coordinator.rejoin_needed


async def test_group_max_size_exception_is_fatal():
    """Mirrors AbstractCoordinatorTest#testGroupMaxSizeExceptionIsFatal."""
    from kafka_ref.common.errors import GroupMaxSizeReachedException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, CONSUMER_ID, "", Errors.GROUP_MAX_SIZE_REACHED))
        with pytest.raises(GroupMaxSizeReachedException):
            await coordinator.ensure_active_group(now_plus(coordinator))
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest"]


async def test_join_group_request_with_member_id_required():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestWithMemberIdRequired."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.MEMBER_ID_REQUIRED), is_join(""))
        broker.prepare_response(join_group_follower_response(-1, "", "", Errors.UNKNOWN_MEMBER_ID), is_join("memberId"))
        # After UNKNOWN_MEMBER_ID the member id is forgotten and the next join goes without one.
        broker.prepare_response(join_group_follower_response(1, "memberId-2", "leader", Errors.NONE), is_join(""))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("memberId-2", 1, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.generation == Generation(1, "memberId-2", "range")


async def test_join_group_request_with_fenced_instance_id_exception():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestWithFencedInstanceIdException."""
    from kafka_ref.common.errors import FencedInstanceIdException

    async with harness(group_instance_id="test-instance") as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.FENCED_INSTANCE_ID))
        with pytest.raises(FencedInstanceIdException, match=Errors.FENCED_INSTANCE_ID.message):
            await coordinator.ensure_active_group(now_plus(coordinator))
        assert broker.requests[-1].group_instance_id == "test-instance"


async def test_sync_group_request_with_fenced_instance_id_exception():
    """Mirrors AbstractCoordinatorTest#testSyncGroupRequestWithFencedInstanceIdException."""
    from kafka_ref.common.errors import FencedInstanceIdException

    async with harness(group_instance_id="test-instance") as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.NONE))
        broker.prepare_response(sync_group_response([], Errors.FENCED_INSTANCE_ID))
        with pytest.raises(FencedInstanceIdException):
            await coordinator.ensure_active_group(now_plus(coordinator))


@pytest.mark.parametrize("join_type, sync_type, sync_name, consistent", [
    (None, None, None, True),
    ("consumer", "consumer", "range", True),
    ("wrong", None, None, False),
    ("consumer", "wrong-type", "range", False),
    ("consumer", "consumer", "wrong-name", False),
])
async def test_join_group_protocol_type_and_name(join_type, sync_type, sync_name, consistent):
    """Mirrors AbstractCoordinatorTest#testJoinGroupProtocolTypeAndName."""
    from kafka_ref.common.errors import InconsistentGroupProtocolException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        join = join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE)
        broker.prepare_response(JoinGroupResponse(
            error_code=0, generation_id=1, protocol_type=join_type, protocol_name="range", member_id=CONSUMER_ID,
            leader=join.leader))
        broker.prepare_response(SyncGroupResponse(
            error_code=0, protocol_type=sync_type, protocol_name=sync_name,
            assignment=ConsumerProtocol.serialize_assignment(Assignment((T1P,)))))
        if consistent:
            assert await coordinator.ensure_active_group(now_plus(coordinator))
            assert consumer.assignment() == {T1P}
        else:
            with pytest.raises(InconsistentGroupProtocolException):
                await coordinator.ensure_active_group(now_plus(coordinator))
            assert consumer.assignment() == set()


@pytest.mark.parametrize("in_sync", [False, True])
async def test_retain_member_id_after_disconnect(in_sync):
    """Mirrors AbstractCoordinatorTest#testRetainMemberIdAfterJoinGroupDisconnect and
    #testRetainMemberIdAfterSyncGroupDisconnect."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(5, "memberId", "leader", Errors.NONE), is_join(""))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("memberId", 5, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        coordinator.request_rejoin("Manual test trigger")
        assert coordinator.rejoin_needed
        if in_sync:
            broker.prepare_response(join_group_follower_response(10, "memberId", "leader", Errors.NONE), is_join("memberId"))
            broker.prepare_response(None, is_sync("memberId", 10, leader=False), disconnected=True)
        else:
            broker.prepare_response(None, is_join("memberId"), disconnected=True)
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        # The consumer always starts again from JoinGroup, with the member id it had.
        broker.prepare_response(join_group_follower_response(10, "memberId", "leader", Errors.NONE), is_join("memberId"))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("memberId", 10, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.generation == Generation(10, "memberId", "range")


async def test_leave_group_sent_with_group_instance_id_unset():
    """Mirrors AbstractCoordinatorTest#testLeaveGroupSentWithGroupInstanceIdUnSet: a static member sends none."""
    async with harness(group_instance_id="test-instance") as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        before = len(broker.requests)
        consumer.close()
        await anyio.sleep(0.01)
        assert len(broker.requests) == before


async def test_join_group_unknown_member_response_with_old_generation():
    """Mirrors AbstractCoordinatorTest#testJoinGroupUnknownMemberResponseWithOldGeneration."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        current = coordinator.generation
        coordinator.request_rejoin("test")
        with anyio.move_on_after(0):
            await coordinator.poll(LONG)
        await settle()
        assert broker.sent()[-1] == "JoinGroupRequest" and len(broker.held) == 1
        # The generation changes after the JoinGroup went out.
        new_generation = Generation(current.generation_id, current.member_id + "-new", current.protocol_name)
        coordinator.generation = new_generation
        broker.held.pop().respond(join_group_follower_response(current.generation_id + 1, CONSUMER_ID, "",
                                                               Errors.UNKNOWN_MEMBER_ID))
        assert await coordinator._join_group()  # UNKNOWN_MEMBER_ID: retry at once
        assert coordinator.generation == new_generation


@pytest.mark.parametrize("error", [Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION])
async def test_sync_group_error_response_with_old_generation(error):
    """Mirrors AbstractCoordinatorTest#testSyncGroupUnknownMemberResponseWithOldGeneration and
    #testSyncGroupIllegalGenerationResponseWithOldGeneration."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        current = coordinator.generation
        coordinator.request_rejoin("test")
        broker.prepare_response(join_group_follower_response(current.generation_id, CONSUMER_ID, "leader", Errors.NONE))
        with anyio.move_on_after(0.5):
            await coordinator.poll(LONG)
        # The SyncGroup is out and unanswered.
        assert broker.sent()[-2:] == ["JoinGroupRequest", "SyncGroupRequest"] and len(broker.held) == 1
        new_generation = Generation(current.generation_id, current.member_id + "-new", current.protocol_name)
        coordinator.generation = new_generation
        broker.held.pop().respond(sync_group_response([], error))
        # The next attempt waits for that SyncGroup (no new JoinGroup), and its answer is stale; the
        # failure is one joinGroupIfNeeded retries at once (it was False, a backoff, before that fix).
        assert await coordinator._join_group()
        assert broker.sent()[-1] == "SyncGroupRequest"
        assert coordinator.generation == new_generation


async def test_timeout_and_retry_join_group_if_needed():
    """Mirrors AbstractCoordinatorTest#testTimeoutAndRetryJoinGroupIfNeeded: a JoinGroup left unanswered when the
    first attempt runs out of time is the one the second attempt waits for."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        with anyio.move_on_after(30):
            await coordinator.poll(30000)
        assert coordinator.rejoin_needed
        assert len(broker.held) == 1 and broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest"]
        broker.held.pop().respond(join_group_follower_response(1, "memberId", "leaderId", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.poll(30000)
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest", "SyncGroupRequest"]
        assert coordinator.generation == Generation(1, "memberId", "range")


async def test_join_group_request_with_rebalance_in_progress():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestWithRebalanceInProgress: retried at once."""
    async with harness() as (consumer, coordinator, broker, listener):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.REBALANCE_IN_PROGRESS))
        broker.prepare_response(join_group_follower_response(1, "memberId", "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        start = coordinator.time.milliseconds()
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.time.milliseconds() == start
        assert listener.assigned_count == 1
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest", "JoinGroupRequest", "SyncGroupRequest"]


async def test_backoff_and_retry_upon_retriable_error():
    """Mirrors AbstractCoordinatorTest#testBackoffAndRetryUponRetriableError (one retry.backoff.ms; kafka_ref's
    backoff is constant, so no jitter)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "", "", Errors.COORDINATOR_LOAD_IN_PROGRESS))
        broker.prepare_response(join_group_follower_response(1, "memberId", "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        start = coordinator.time.milliseconds()
        assert await coordinator.ensure_active_group(now_plus(coordinator, 30000))
        assert coordinator.time.milliseconds() - start == 100


async def test_return_upon_retriable_error_and_expired_timer():
    """Mirrors AbstractCoordinatorTest#testReturnUponRetriableErrorAndExpiredTimer."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        start = coordinator.time.milliseconds()
        deadline = now_plus(coordinator, 500)
        async with anyio.create_task_group() as tg:
            async def attempt() -> None:
                assert not await coordinator.ensure_active_group(deadline)

            tg.start_soon(attempt)
            await anyio.sleep(0.5)
            broker.held.pop().respond(join_group_follower_response(-1, "", "", Errors.COORDINATOR_LOAD_IN_PROGRESS))
        assert coordinator.time.milliseconds() - start == 500
        assert coordinator.rejoin_needed


# --------------------------------------------------------------------------------------------
# JoinGroup timeouts
# --------------------------------------------------------------------------------------------


async def _join_in_background(coordinator, results: list) -> None:
    results.append(await coordinator._join_group())


async def test_join_group_request_timeout():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestTimeout."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        results: list = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(_join_in_background, coordinator, results)
            # Past the request timeout the JoinGroup still waits: the rebalance timeout is longer.
            await anyio.sleep((REQUEST_TIMEOUT_MS + 1) / 1000)
            assert results == [] and coordinator.coordinator == NODE
            assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest"] and len(broker.held) == 1
            # Rebalance timeout + JOIN_GROUP_TIMEOUT_LAPSE after it went out, it fails as a disconnect.
            await anyio.sleep((REBALANCE_TIMEOUT_MS - REQUEST_TIMEOUT_MS + JOIN_GROUP_TIMEOUT_LAPSE) / 1000)
            assert results == [False]
        assert coordinator.coordinator is None
        assert coordinator.rejoin_needed


async def test_join_group_request_timeout_lower_bounded_by_default_request_timeout():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestTimeoutLowerBoundedByDefaultRequestTimeout."""
    rebalance_timeout_ms = REQUEST_TIMEOUT_MS - 10000
    async with harness(max_poll_interval_ms=rebalance_timeout_ms) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        results: list = []
        expected_deadline = coordinator.time.milliseconds() + REQUEST_TIMEOUT_MS
        async with anyio.create_task_group() as tg:
            tg.start_soon(_join_in_background, coordinator, results)
            await anyio.sleep((rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE + 1) / 1000)
            assert results == [] and coordinator.coordinator == NODE
            await anyio.sleep((expected_deadline - coordinator.time.milliseconds() + 1) / 1000)
            assert results == [False]
        assert coordinator.coordinator is None


async def test_join_group_request_max_timeout():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestMaxTimeout: the largest rebalance timeout
    (Integer.MAX_VALUE) still gives a JoinGroup that ends."""
    max_int = 2**31 - 1
    async with harness(max_poll_interval_ms=max_int) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        results: list = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(_join_in_background, coordinator, results)
            await settle()
            assert results == [] and len(broker.held) == 1
            await anyio.sleep((max_int + JOIN_GROUP_TIMEOUT_LAPSE + 1) / 1000)
            assert results == [False]
        assert coordinator.coordinator is None


# --------------------------------------------------------------------------------------------
# JoinGroup / SyncGroup answers
# --------------------------------------------------------------------------------------------


async def test_join_group_request_with_group_instance_id_not_found():
    """Mirrors AbstractCoordinatorTest#testJoinGroupRequestWithGroupInstanceIdNotFound."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.UNKNOWN_MEMBER_ID))
        assert await coordinator._join_group()  # UNKNOWN_MEMBER_ID: the next JoinGroup goes at once
        assert coordinator.rejoin_needed
        assert coordinator.generation == NO_GENERATION


async def test_no_generation_will_not_trigger_protocol_name_check():
    """Mirrors AbstractCoordinatorTest#testNoGenerationWillNotTriggerProtocolNameCheck: the generation is
    reset (resetGenerationOnLeaveGroup, as the heartbeat thread may) while the SyncGroup is out, so its
    answer's unexpected protocol name is not checked; the rebalance is retried at once instead."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, CONSUMER_ID, "memberid", Errors.NONE),
                                lambda r: is_join()(r) and r.protocol_type == "consumer")

        def reset_then_match(request) -> bool:
            coordinator.reset_generation_on_leave_group()
            return (isinstance(request, SyncGroupRequest) and request.protocol_type == "consumer"
                    and request.protocol_name == "range")

        broker.prepare_response(sync_group_response([T1P], Errors.NONE, protocol="wrong-name"), reset_then_match)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "memberid", Errors.NONE),
                                lambda r: is_join()(r) and r.protocol_type == "consumer")
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 1, leader=False))
        start = coordinator.time.milliseconds()
        # No exception (the generation was reset), and no backoff: the Timer of 100 ms does not run out.
        assert await coordinator.ensure_active_group(now_plus(coordinator, 100))
        assert coordinator.time.milliseconds() == start
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        assert broker.sent() == ["FindCoordinatorRequest", "JoinGroupRequest", "SyncGroupRequest",
                                 "JoinGroupRequest", "SyncGroupRequest"]
        # The second JoinGroup went without a member id: leaving the group forgets it.
        assert broker.requests[3].member_id == ""


async def test_rejoin_reason():
    """Mirrors AbstractCoordinatorTest#testRejoinReason."""
    from kafka_ref.common.errors import GroupMaxSizeReachedException

    def expect_join(broker, member_id: str, reason: str) -> None:
        broker.prepare_response(join_group_follower_response(5, "memberId", "leaderId", Errors.NONE),
                                lambda r: is_join(member_id)(r) and r.protocol_type == "consumer" and r.reason == reason)
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("memberId", 5, leader=False))

    async def ensure_active_group(coordinator) -> None:
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.generation == Generation(5, "memberId", "range")
        assert not coordinator.rejoin_needed
        # A completed rebalance empties the reason.
        assert coordinator.rejoin_reason == ""

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        # The first JoinGroup has no reason to give.
        expect_join(broker, "", "")
        await ensure_active_group(coordinator)
        # A requested rejoin sends its reason.
        expect_join(broker, "memberId", "Manual test trigger")
        coordinator.request_rejoin("Manual test trigger")
        await ensure_active_group(coordinator)
        # A failed rebalance: the next JoinGroup names the exception.
        broker.prepare_response(join_group_follower_response(-1, "memberId", "", Errors.GROUP_MAX_SIZE_REACHED))
        coordinator.request_rejoin("Manual test trigger 2")
        with pytest.raises(GroupMaxSizeReachedException):
            await coordinator.ensure_active_group(now_plus(coordinator, 100))
        expect_join(broker, "memberId", "rebalance failed due to GroupMaxSizeReachedException")
        await ensure_active_group(coordinator)
        # A reason longer than 255 characters is cut to 255.
        reason = "Very l" + "o" * 163 + "ng reason that is 271 characters long to make sure that length limit logic handles the scenario nicely"
        assert len(reason) == 271
        expect_join(broker, "memberId", reason[:255])
        coordinator.request_rejoin(reason)
        await ensure_active_group(coordinator)


async def test_rejoin_reason_names_what_sent_the_member_back():
    """Mirrors the reasons AbstractCoordinator#resetStateOnResponseError, #joinGroupIfNeeded and
    ConsumerCoordinator#rejoinNeededOrPending give requestRejoin, as the next JoinGroup carries them: a
    heartbeat answered ILLEGAL_GENERATION, a SyncGroup answered REBALANCE_IN_PROGRESS, a changed subscription."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.ILLEGAL_GENERATION))
        assert coordinator.rejoin_reason == "encountered ILLEGAL_GENERATION from HEARTBEAT response"
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE),
                                lambda r: r.reason == "encountered ILLEGAL_GENERATION from HEARTBEAT response")
        broker.prepare_response(sync_group_response([], Errors.REBALANCE_IN_PROGRESS))
        broker.prepare_response(join_group_follower_response(3, CONSUMER_ID, "leader", Errors.NONE),
                                lambda r: r.reason == "rebalance failed due to RebalanceInProgressException")
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 3, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.rejoin_reason == ""
        consumer.subscribe([TOPIC1, "otherTopic"])
        assert coordinator.rejoin_needed and coordinator.rejoin_reason == "subscription has changed"


@pytest.mark.parametrize("error, member_id_after_error", [
    (Errors.REBALANCE_IN_PROGRESS, CONSUMER_ID),
    (Errors.ILLEGAL_GENERATION, CONSUMER_ID),
    (Errors.UNKNOWN_MEMBER_ID, ""),
])
async def test_sync_group_rebalance_errors_rejoin_at_once(error, member_id_after_error):
    """Mirrors AbstractCoordinator#joinGroupIfNeeded's retry rule for a failed SyncGroup: REBALANCE_IN_PROGRESS,
    ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID send the next JoinGroup at once, without retry.backoff.ms
    (SyncGroupResponseHandler keeps the member id for all but UNKNOWN_MEMBER_ID)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
        broker.prepare_response(sync_group_response([], error))
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE),
                                is_join(member_id_after_error))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 2, leader=False))
        start = coordinator.time.milliseconds()
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.time.milliseconds() == start
        assert coordinator.generation == Generation(2, CONSUMER_ID, "range")
        assert consumer.assignment() == {T1P}


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
@pytest.mark.parametrize("api", ["JoinGroup", "SyncGroup"])
async def test_join_and_sync_coordinator_errors_mark_coordinator_unknown(api, error):
    """Mirrors the COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR branch of AbstractCoordinator.JoinGroupResponseHandler
    and SyncGroupResponseHandler, and joinGroupIfNeeded's retry: the coordinator is marked unknown, then after
    retry.backoff.ms a new FindCoordinator, and the rebalance starts again from JoinGroup with the member id
    the member had."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        if api == "JoinGroup":
            broker.prepare_response(join_group_follower_response(-1, CONSUMER_ID, "", error))
            first = ["JoinGroupRequest"]
            member_id = ""
        else:
            broker.prepare_response(join_group_follower_response(1, CONSUMER_ID, "leader", Errors.NONE))
            broker.prepare_response(sync_group_response([], error))
            first = ["JoinGroupRequest", "SyncGroupRequest"]
            member_id = CONSUMER_ID
        broker.prepare_response(group_coordinator_response(Errors.NONE), lambda r: isinstance(r, FindCoordinatorRequest))
        broker.prepare_response(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE), is_join(member_id))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync(CONSUMER_ID, 2, leader=False))
        start = coordinator.time.milliseconds()
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.time.milliseconds() - start == 100
        assert broker.sent() == ["FindCoordinatorRequest", *first, "FindCoordinatorRequest", "JoinGroupRequest",
                                 "SyncGroupRequest"]
        assert coordinator.coordinator == NODE
        assert coordinator.generation == Generation(2, CONSUMER_ID, "range")


async def test_join_group_answer_after_leaving_is_unjoined():
    """Mirrors the UnjoinedGroupException branch of AbstractCoordinator.JoinGroupResponseHandler#handle: a JoinGroup
    still pending when the member left the group (its answer waited for as it is, initiateJoinGroup's joinFuture)
    is not followed by a SyncGroup; the member stays UNJOINED and joins again after retry.backoff.ms, without
    a member id."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        coordinator.request_rejoin("test")
        with anyio.move_on_after(0):
            await coordinator.poll(LONG)
        await settle()
        assert broker.sent()[-1] == "JoinGroupRequest" and len(broker.held) == 1
        pending_join = broker.held.pop()
        coordinator.maybe_leave_group_nowait("test leaving")
        await settle()
        assert broker.sent()[-1] == "LeaveGroupRequest"
        assert coordinator.state is MemberState.UNJOINED
        pending_join.respond(join_group_follower_response(2, CONSUMER_ID, "leader", Errors.NONE))
        assert not await coordinator._join_group()  # retriable: after the backoff
        assert broker.sent()[-1] == "LeaveGroupRequest"  # no SyncGroup
        assert coordinator.state is MemberState.UNJOINED
        assert coordinator.generation == NO_GENERATION
        assert coordinator.rejoin_needed
        assert coordinator.rejoin_reason == "rebalance failed due to UnjoinedGroupException"
        broker.prepare_response(join_group_follower_response(3, "memberId-2", "leader", Errors.NONE), is_join(""))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE), is_sync("memberId-2", 3, leader=False))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.generation == Generation(3, "memberId-2", "range")


async def test_group_max_size_reached_names_the_group():
    """Mirrors the GROUP_MAX_SIZE_REACHED branch of AbstractCoordinator.JoinGroupResponseHandler#handle: a fatal
    GroupMaxSizeReachedException that names the group."""
    from kafka_ref.common.errors import GroupMaxSizeReachedException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await ensure_coordinator_ready(coordinator, broker)
        broker.prepare_response(join_group_follower_response(-1, CONSUMER_ID, "", Errors.GROUP_MAX_SIZE_REACHED))
        with pytest.raises(GroupMaxSizeReachedException) as raised:
            await coordinator.ensure_active_group(now_plus(coordinator))
        assert str(raised.value) == "Consumer group test-group already has the configured maximum number of members."


# --------------------------------------------------------------------------------------------
# Heartbeats
# --------------------------------------------------------------------------------------------


async def test_heartbeat_rebalance_in_progress_response_during_rebalancing():
    """Mirrors AbstractCoordinatorTest#testHeartbeatRebalanceInProgressResponseDuringRebalancing: a heartbeat
    answered REBALANCE_IN_PROGRESS while the member is already rejoining leaves the generation alone (here
    the answer is taken by no one: heartbeats wait while a rejoin is pending, and the next stable
    generation drops it)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        current = coordinator.generation
        await anyio.sleep(HEARTBEAT_INTERVAL_MS / 1000)
        with anyio.move_on_after(0):
            await coordinator.maybe_heartbeat()
        await settle()
        assert broker.sent()[-1] == "HeartbeatRequest" and len(broker.held) == 1
        broker.held.pop().respond(heartbeat_response(Errors.REBALANCE_IN_PROGRESS))
        coordinator.request_rejoin("test")
        with anyio.move_on_after(0.1):
            await coordinator.ensure_active_group(now_plus(coordinator, 100))
        # The generation is not reset while the rebalance is in progress.
        assert coordinator.generation == current
        assert coordinator.state is MemberState.PREPARING_REBALANCE
        assert broker.sent()[-1] == "JoinGroupRequest" and len(broker.held) == 1
        broker.held.pop().respond(join_group_follower_response(current.generation_id, CONSUMER_ID, "", Errors.NONE))
        broker.prepare_response(sync_group_response([T1P], Errors.NONE))
        assert await coordinator.ensure_active_group(now_plus(coordinator))
        assert coordinator.generation == current
        assert "heartbeat" not in coordinator._pending


async def sleep_until(coordinator, target_ms: int) -> None:
    """Sleep until the coordinator's clock reads ``target_ms`` (a hair past it, so millisecond truncation
    cannot leave it one short)."""
    await anyio.sleep((target_ms - coordinator.time.milliseconds()) / 1000 + 0.0002)
    assert coordinator.time.milliseconds() == target_ms


async def test_heartbeat_sent_every_heartbeat_interval():
    """Mirrors Heartbeat#shouldHeartbeat / #sentHeartbeat as AbstractCoordinator.HeartbeatThread uses them: the
    first heartbeat goes one heartbeat.interval.ms after the SyncGroup, the next one interval after that."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        synced = coordinator.time.milliseconds()
        sent = len(broker.requests)
        for n in (1, 2):
            await sleep_until(coordinator, synced + n * HEARTBEAT_INTERVAL_MS - 1)
            await coordinator.maybe_heartbeat()
            assert len(broker.requests) == sent + n - 1
            await sleep_until(coordinator, synced + n * HEARTBEAT_INTERVAL_MS)
            broker.prepare_response(heartbeat_response(Errors.NONE), lambda r: isinstance(r, HeartbeatRequest))
            await coordinator.maybe_heartbeat()
            assert broker.sent()[sent:] == ["HeartbeatRequest"] * n
        assert not coordinator.rejoin_needed


@pytest.mark.parametrize("error", [Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR])
async def test_failed_heartbeat_retried_after_backoff(error):
    """Mirrors Heartbeat#failHeartbeat as AbstractCoordinator.HeartbeatThread uses it: after a heartbeat answered
    COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR (the coordinator marked unknown, then found again), the next
    heartbeat is due retry.backoff.ms after the failure, not a whole heartbeat.interval.ms after the failed
    one went out (kafka_ref's backoff is the constant retry.backoff.ms, without KIP-580's jitter)."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(error))
        failed = coordinator.time.milliseconds()
        assert coordinator.coordinator is None
        await ensure_coordinator_ready(coordinator, broker)
        sent = len(broker.requests)
        await sleep_until(coordinator, failed + 99)
        await coordinator.maybe_heartbeat()
        assert len(broker.requests) == sent
        await sleep_until(coordinator, failed + 100)
        broker.prepare_response(heartbeat_response(Errors.NONE), lambda r: isinstance(r, HeartbeatRequest))
        await coordinator.maybe_heartbeat()
        assert broker.sent()[sent:] == ["HeartbeatRequest"]
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        # A successful heartbeat brings the interval back.
        assert coordinator.next_heartbeat_ms == failed + 100 + HEARTBEAT_INTERVAL_MS


@pytest.mark.parametrize("error", [Errors.GROUP_AUTHORIZATION_FAILED, Errors.UNKNOWN_SERVER_ERROR])
async def test_heartbeat_fatal_errors(error):
    """Mirrors the GROUP_AUTHORIZATION_FAILED and unexpected-error branches of
    AbstractCoordinator.HeartbeatResponseHandler#handle: both are raised, the membership is left as it was."""
    from kafka_ref.common.errors import GroupAuthorizationException, KafkaException

    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        expected = GroupAuthorizationException if error is Errors.GROUP_AUTHORIZATION_FAILED else KafkaException
        message = ("Not authorized to access group: test-group" if error is Errors.GROUP_AUTHORIZATION_FAILED
                   else f"Unexpected error in heartbeat response: {Errors.UNKNOWN_SERVER_ERROR.message}")
        with pytest.raises(expected) as raised:
            await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(error))
        assert str(raised.value) == message
        assert coordinator.generation == Generation(1, CONSUMER_ID, "range")
        assert not coordinator.rejoin_needed


# --------------------------------------------------------------------------------------------
# Leaving the group
# --------------------------------------------------------------------------------------------


async def test_leave_group_resets_generation_and_sends_reason():
    """Mirrors AbstractCoordinator#maybeLeaveGroup and #resetGenerationOnLeaveGroup: a dynamic member sends
    LeaveGroup with its member id and the reason, then is UNJOINED with no generation and must rejoin."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        coordinator.maybe_leave_group_nowait("test leaving")
        await settle()
        leave = broker.requests[-1]
        assert isinstance(leave, LeaveGroupRequest)
        assert [(m.member_id, m.reason) for m in leave.members] == [(CONSUMER_ID, "test leaving")]
        assert coordinator.generation == NO_GENERATION
        assert coordinator.state is MemberState.UNJOINED
        assert coordinator.rejoin_needed


@pytest.mark.parametrize("reason_length", [22, 276])
async def test_handle_normal_leave_group_response(reason_length):
    """Mirrors AbstractCoordinatorTest#testHandleNormalLeaveGroupResponse and
    #testHandleNormalLeaveGroupResponseAndTruncatedLeaveReason: the LeaveGroup their matcher checks (this
    member's id, the reason cut to 255 characters) and its answer taken by the broker; kafka_ref does not wait
    for that answer, so the future they check has no counterpart."""
    from kafka_ref.common.requests.leave_group import LeaveGroupResponse, MemberResponse

    reason = "test maybe leave group" if reason_length == 22 else "Very l" + "o" * 163 + (
        "ng leaveReason that is 271 characters long to make sure that length limit logic handles the scenario nicely")
    assert len(reason) == reason_length
    async with harness(max_poll_interval_ms=2**31 - 1) as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        broker.prepare_response(
            LeaveGroupResponse(error_code=0, members=(MemberResponse(member_id=CONSUMER_ID, error_code=0),)),
            lambda r: (isinstance(r, LeaveGroupRequest)
                       and [(m.member_id, m.reason) for m in r.members] == [(CONSUMER_ID, reason[:255])]))
        coordinator.maybe_leave_group_nowait(reason)
        await settle()
        assert broker.sent()[-1] == "LeaveGroupRequest" and len(broker.prepared) == 0


async def test_unjoined_member_sends_no_leave_group():
    """Mirrors AbstractCoordinator#maybeLeaveGroup's condition: a member that is UNJOINED (here after a heartbeat
    answered ILLEGAL_GENERATION, which keeps the member id) sends no LeaveGroup."""
    async with harness() as (consumer, coordinator, broker, _):
        consumer.subscribe([TOPIC1])
        await join_as_follower_and_receive_assignment(consumer, coordinator, broker, [T1P])
        await heartbeat_after_session_timeout(coordinator, broker, heartbeat_response(Errors.ILLEGAL_GENERATION))
        assert coordinator.state is MemberState.UNJOINED
        assert coordinator.generation == Generation(-1, CONSUMER_ID, None)
        before = len(broker.requests)
        consumer.close()
        await settle()
        assert len(broker.requests) == before
        assert coordinator.generation == NO_GENERATION
