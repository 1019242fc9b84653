"""GroupCoordinator, case by case after Kafka's GroupCoordinatorTest (Kafka 3.7, dynamic members).

Each test mirrors one kafka.coordinator.group.GroupCoordinatorTest case with its settings
(tests/helpers_group.py: group.max.size 4, initial rebalance delay 50 ms, 500 ms member
timeouts, MockTimer-style clock advances) and asserts the values Kafka's test asserts. Static
membership (KIP-345) cases are in tests/test_group_coordinator_kafka_static.py.
"""

from __future__ import annotations

import anyio
import pytest

from helpers_group import (
    DEAD_GROUP,
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_MAX_SESSION_TIMEOUT,
    GROUP_MAX_SIZE,
    LEADER_INSTANCE_ID,
    OTHER_GROUP,
    PROTOCOL_NAME,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    TOPIC0,
    KafkaGroupFixture,
    join_with_n_members,
    offset_and_metadata,
    setup_group_with_pending_member,
    single_stable_member,
    started,
    two_members_rejoined,
    verify_heartbeat,
    verify_leave_group_result,
)

from kafka_ref.common.errors import Errors
from kafka_ref.common.time import MockTime
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    Stable,
)
from kafka_ref.coordinator.group.member_metadata import MemberMetadata
from kafka_ref.coordinator.group.rebalance import NEW_MEMBER_JOIN_TIMEOUT_MS

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------------------------------ group.max.size

async def test_join_group_should_receive_error_if_group_over_max_size():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupShouldReceiveErrorIfGroupOverMaxSize."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        rebalance = GROUP_INITIAL_REBALANCE_DELAY * 2
        futures = []
        for i in range(1, GROUP_MAX_SIZE + 1):
            futures.append(f.send_join(rebalance=rebalance))
            if i != 1:
                await f.advance(GROUP_INITIAL_REBALANCE_DELAY)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        assert [(await f.result(a)).error for a in futures] == [Errors.NONE] * GROUP_MAX_SIZE
        assert (await f.result(f.send_join(rebalance=rebalance))).error is Errors.GROUP_MAX_SIZE_REACHED
        tg.cancel_scope.cancel()


async def test_dynamic_members_join_group_with_max_size_and_required_known_member():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDynamicMembersJoinGroupWithMaxSizeAndRequiredKnownMember."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        members = GROUP_MAX_SIZE + 1
        first = [f.send_join(require_known=True) for _ in range(members)]
        member_ids = [(await f.result(a)).member_id for a in first]
        second = [f.send_join(m, require_known=True) for m in member_ids]
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        errors = [(await f.result(a)).error for a in second]
        assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
        assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE
        # Accepted members may rejoin while the group completes its rebalance; the others stay out.
        rejoin = [f.send_join(m, require_known=True) for m in member_ids]
        assert [(await f.result(a)).error for a in rejoin] == errors
        tg.cancel_scope.cancel()


async def test_dynamic_members_join_group_with_max_size():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDynamicMembersJoinGroupWithMaxSize."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        members = GROUP_MAX_SIZE + 1
        futures = [f.send_join() for _ in range(members)]
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        results = [await f.result(a) for a in futures]
        errors = [r.error for r in results]
        assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
        assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE
        rejoin = [f.send_join(r.member_id) for r in results]
        assert [(await f.result(a)).error for a in rejoin] == errors
        tg.cancel_scope.cancel()


async def test_dynamic_members_can_rejoin_group_with_max_size_while_rebalancing():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDynamicMembersCanReJoinGroupWithMaxSizeWhileRebalancing."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        members = GROUP_MAX_SIZE + 1
        first = [f.send_join(require_known=True) for _ in range(members)]
        member_ids = [(await f.result(a)).member_id for a in first]
        for m in member_ids:
            f.send_join(m, require_known=True)
        futures = [f.send_join(m, require_known=True) for m in member_ids]
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        errors = [(await f.result(a)).error for a in futures]
        assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
        assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == members - GROUP_MAX_SIZE
        tg.cancel_scope.cancel()


async def test_last_joining_members_are_kicked_out_when_rejoining_group_with_max_size():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLastJoiningMembersAreKickedOutWhenReJoiningGroupWithMaxSize."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        members = GROUP_MAX_SIZE + 2
        group = GroupMetadata(GROUP, Stable, MockTime())
        member_ids = [group.generate_member_id("clientId", None, f.coordinator.rng) for _ in range(members)]
        for m in member_ids:
            group.add(MemberMetadata(m, None, "clientId", "clientHost", DEFAULT_REBALANCE_TIMEOUT,
                                     GROUP_MAX_SESSION_TIMEOUT, PROTOCOL_TYPE, PROTOCOLS))
        f.manager.add_group(group)
        f.coordinator.prepare_rebalance(group, "")
        futures = [f.send_join(m, session=GROUP_MAX_SESSION_TIMEOUT) for m in member_ids]
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        errors = [(await f.result(a)).error for a in futures]
        assert set(errors[:GROUP_MAX_SIZE]) == {Errors.NONE}
        assert set(errors[GROUP_MAX_SIZE:]) == {Errors.GROUP_MAX_SIZE_REACHED}
        assert not any(group.has(m) for m in member_ids[GROUP_MAX_SIZE:])
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ JoinGroup

@pytest.mark.parametrize("session", [9, GROUP_MAX_SESSION_TIMEOUT + 1], ids=["TooSmall", "TooLarge"])
async def test_join_group_session_timeout_out_of_bounds(session):
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupSessionTimeoutTooSmall / #testJoinGroupSessionTimeoutTooLarge."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.dynamic_join(session=session)).error is Errors.INVALID_SESSION_TIMEOUT
        tg.cancel_scope.cancel()


async def test_invalid_group_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testInvalidGroupId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.dynamic_join(group_id="")).error is Errors.INVALID_GROUP_ID
        tg.cancel_scope.cancel()


async def test_join_group_inconsistent_or_empty_protocol_type_and_empty_group_protocol():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupInconsistentProtocolType /
    #testJoinGroupWithEmptyProtocolType / #testJoinGroupWithEmptyGroupProtocol (dynamic members)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.dynamic_join(protocol_type="")).error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert (await f.dynamic_join(protocols=[])).error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert (await f.dynamic_join()).error is Errors.NONE
        assert (await f.result(f.send_join(protocol_type="connect"))).error is Errors.INCONSISTENT_GROUP_PROTOCOL
        tg.cancel_scope.cancel()


async def test_valid_join_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testValidJoinGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.dynamic_join()).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_new_member_timeout_completion():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testNewMemberTimeoutCompletion."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        session = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000
        answers = f.send_join(session=session)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        joined = await f.result(answers)
        group = f.group()
        assert joined.error is Errors.NONE
        assert sum(m.is_new for m in group.all_member_metadata()) == 0
        synced = await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})
        assert synced.error is Errors.NONE and group.size == 1
        await f.advance(NEW_MEMBER_JOIN_TIMEOUT_MS + 100)
        assert group.size == 1                      # the new-member timeout is no longer in effect
        await f.advance(session + 100)
        assert group.size == 0
        tg.cancel_scope.cancel()


async def test_new_member_join_expiration():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testNewMemberJoinExpiration."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        session, rebalance = NEW_MEMBER_JOIN_TIMEOUT_MS + 5000, NEW_MEMBER_JOIN_TIMEOUT_MS * 2
        first = await f.dynamic_join(session=session, rebalance=rebalance)
        assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
        group = f.group()
        assert sum(m.is_new for m in group.all_member_metadata()) == 0
        answers = f.send_join(session=session, rebalance=rebalance)
        await f.settle()
        assert not answers.done
        assert group.size == 2 and sum(m.is_new for m in group.all_member_metadata()) == 1
        new_member = next(m for m in group.all_member_metadata() if m.is_new)
        assert new_member.member_id != first.member_id
        await f.advance(NEW_MEMBER_JOIN_TIMEOUT_MS + 1)
        assert answers.done and answers.value.error is Errors.UNKNOWN_MEMBER_ID
        assert group.all_members() == {first.member_id}
        assert sum(m.is_new for m in group.all_member_metadata()) == 0
        tg.cancel_scope.cancel()


async def verify_session_expiration(f: KafkaGroupFixture) -> None:
    """Mirrors GroupCoordinatorTest#verifySessionExpiration."""
    await f.advance(DEFAULT_SESSION_TIMEOUT + 1)
    assert f.group().current_state is Empty
    assert not f.group().all_members()


async def test_new_member_failure_after_join_group_completion():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testNewMemberFailureAfterJoinGroupCompletion."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await two_members_rejoined(f)
        await verify_session_expiration(f)
        tg.cancel_scope.cancel()


async def test_new_member_failure_after_sync_group_completion():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testNewMemberFailureAfterSyncGroupCompletion."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first, joined, other = await two_members_rejoined(f)
        f.send_sync(other.member_id, joined.generation_id)
        synced = await f.sync_leader(first.member_id, joined.generation_id,
                                     {first.member_id: b"", other.member_id: b""})
        assert synced.error is Errors.NONE
        await verify_session_expiration(f)
        tg.cancel_scope.cancel()


async def test_join_group_inconsistent_group_protocol():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupInconsistentGroupProtocol."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        answers = f.send_join(protocols=[("range", b"")])
        other = await f.dynamic_join(protocols=[("roundrobin", b"")])
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        assert (await f.result(answers)).error is Errors.NONE
        assert other.error is Errors.INCONSISTENT_GROUP_PROTOCOL
        tg.cancel_scope.cancel()


async def test_join_group_unknown_consumer_existing_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupUnknownConsumerExistingGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.dynamic_join()).error is Errors.NONE
        assert (await f.result(f.send_join("memberId"))).error is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_join_group_unknown_consumer_new_dead_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupUnknownConsumerNewDeadGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        f.manager.add_group(GroupMetadata(DEAD_GROUP, Dead, MockTime()))
        assert (await f.dynamic_join(group_id=DEAD_GROUP)).error is Errors.COORDINATOR_NOT_AVAILABLE
        tg.cancel_scope.cancel()


async def test_sync_dead_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSyncDeadGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        f.manager.add_group(GroupMetadata(DEAD_GROUP, Dead, MockTime()))
        assert (await f.sync_follower("memberId", 1, group_id=DEAD_GROUP)).error is Errors.COORDINATOR_NOT_AVAILABLE
        tg.cancel_scope.cancel()


async def test_join_group_second_join_inconsistent_protocol():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupSecondJoinInconsistentProtocol."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first = await f.result(f.send_join(require_known=True))
        assert first.error is Errors.MEMBER_ID_REQUIRED
        assert (await f.result(f.send_join(first.member_id, [], require_known=True))).error is \
            Errors.INCONSISTENT_GROUP_PROTOCOL
        answers = f.send_join(first.member_id, require_known=True)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        assert (await f.result(answers)).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_join_group_from_unchanged_follower_does_not_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupFromUnchangedFollowerDoesNotRebalance."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        _, joined, other = await two_members_rejoined(f)
        follower = await f.result(f.send_join(other.member_id))
        assert (follower.error, follower.generation_id) == (Errors.NONE, joined.generation_id)
        tg.cancel_scope.cancel()


async def test_join_group_from_unchanged_leader_should_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupFromUnchangedLeaderShouldRebalance."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first = await single_stable_member(f)
        second = await f.result(f.send_join(first.member_id))
        assert second.error is Errors.NONE and second.generation_id != first.generation_id
        tg.cancel_scope.cancel()


async def test_second_member_partially_join_and_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSecondMemberPartiallyJoinAndTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first = await single_stable_member(f)
        await f.advance(100)
        group = f.group()
        assert group.all_members() == {first.member_id} and group.num_pending == 0
        assert group.current_state is Stable
        second = await f.join_partial()
        assert second.error is Errors.MEMBER_ID_REQUIRED
        assert (group.num_pending, group.current_state) == (1, Stable)
        assert group.all_members() == {first.member_id}
        await f.advance(300)
        assert f.heartbeat(first.member_id, 1) is Errors.NONE
        await f.advance(300)                         # the pending member's session ends
        assert group.all_members() == {first.member_id}
        assert (group.num_pending, group.current_state) == (0, Stable)
        tg.cancel_scope.cancel()


async def test_join_group_completion_when_pending_member_joins():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupCompletionWhenPendingMemberJoins."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        pending = await setup_group_with_pending_member(f)
        await f.result(f.send_join(pending.member_id))
        assert f.group().current_state is CompletingRebalance
        assert (f.group().size, f.group().num_pending) == (3, 0)
        tg.cancel_scope.cancel()


async def test_join_group_completion_when_pending_member_times_out():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupCompletionWhenPendingMemberTimesOut."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await setup_group_with_pending_member(f)
        await f.advance(120)
        assert f.group().current_state is CompletingRebalance
        assert (f.group().size, f.group().num_pending) == (2, 0)
        tg.cancel_scope.cancel()


async def test_pending_members_leaves_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testPendingMembersLeavesGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        pending = await setup_group_with_pending_member(f)
        verify_leave_group_result(f.single_leave(pending.member_id))
        assert f.group().current_state is CompletingRebalance
        assert (f.group().size, f.group().num_pending) == (2, 0)
        assert all(m.group_instance_id is None for m in f.group().all_member_metadata())
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ the rebalance's SyncGroup deadline

async def test_rebalance_times_out_when_sync_request_is_not_received():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRebalanceTimesOutWhenSyncRequestIsNotReceived."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        results = await join_with_n_members(f, 3)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
        for r in results:
            verify_heartbeat(f, r, Errors.UNKNOWN_MEMBER_ID)
        tg.cancel_scope.cancel()


async def test_rebalance_times_out_when_sync_request_is_not_received_from_followers():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromFollowers."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        leader, *followers = results = await join_with_n_members(f, 3)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        synced = f.send_sync(leader.member_id, leader.generation_id, {r.member_id: b"" for r in results},
                             protocol_type=PROTOCOL_TYPE, protocol_name=PROTOCOL_NAME)
        assert (await f.result(synced)).error is Errors.NONE
        verify_heartbeat(f, leader, Errors.NONE)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
        verify_heartbeat(f, leader, Errors.REBALANCE_IN_PROGRESS)
        for r in followers:
            verify_heartbeat(f, r, Errors.UNKNOWN_MEMBER_ID)
        tg.cancel_scope.cancel()


async def test_rebalance_times_out_when_sync_request_is_not_received_from_leaders():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRebalanceTimesOutWhenSyncRequestIsNotReceivedFromLeaders."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        leader, *followers = results = await join_with_n_members(f, 3)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        follower_syncs = [f.send_sync(r.member_id, r.generation_id, protocol_type=PROTOCOL_TYPE,
                                      protocol_name=PROTOCOL_NAME) for r in followers]
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
        assert {(await f.result(a)).error for a in follower_syncs} == {Errors.REBALANCE_IN_PROGRESS}
        verify_heartbeat(f, leader, Errors.UNKNOWN_MEMBER_ID)
        for r in followers:
            verify_heartbeat(f, r, Errors.REBALANCE_IN_PROGRESS)
        tg.cancel_scope.cancel()


async def test_rebalance_does_not_time_out_when_all_sync_are_received():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRebalanceDoesNotTimeOutWhenAllSyncAreReceived."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        leader, *followers = results = await join_with_n_members(f, 3)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        synced = f.send_sync(leader.member_id, leader.generation_id, {r.member_id: b"" for r in results},
                             protocol_type=PROTOCOL_TYPE, protocol_name=PROTOCOL_NAME)
        assert (await f.result(synced)).error is Errors.NONE
        follower_syncs = [f.send_sync(r.member_id, r.generation_id, protocol_type=PROTOCOL_TYPE,
                                      protocol_name=PROTOCOL_NAME) for r in followers]
        assert {(await f.result(a)).error for a in follower_syncs} == {Errors.NONE}
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2 + 1)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT // 2)
        for r in results:
            verify_heartbeat(f, r, Errors.NONE)
        tg.cancel_scope.cancel()


async def test_leader_failure_in_sync_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaderFailureInSyncGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        _, joined, other = await two_members_rejoined(f)
        follower_sync = f.send_sync(other.member_id, joined.generation_id)
        await f.advance(DEFAULT_SESSION_TIMEOUT + 100)
        assert (await f.result(follower_sync)).error is Errors.REBALANCE_IN_PROGRESS
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("follower_first", [False, True], ids=["FollowerAfterLeader", "LeaderAfterFollower"])
async def test_sync_group_follower_and_leader(follower_first):
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSyncGroupFollowerAfterLeader / #testSyncGroupLeaderAfterFollower."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first, joined, other = await two_members_rejoined(f)
        generation, leader_id, follower_id = joined.generation_id, first.member_id, other.member_id
        follower_sync = f.send_sync(follower_id, generation) if follower_first else None
        leader = await f.sync_leader(leader_id, generation, {leader_id: b"\x00", follower_id: b"\x01"})
        assert (leader.error, leader.member_assignment) == (Errors.NONE, b"\x00")
        follower = await f.result(follower_sync) if follower_first else await f.sync_follower(follower_id, generation)
        assert (follower.error, follower.member_assignment) == (Errors.NONE, b"\x01")
        tg.cancel_scope.cancel()


async def test_sync_group_empty_assignment():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSyncGroupEmptyAssignment."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        synced = await f.sync_leader(joined.member_id, joined.generation_id, {})
        assert (synced.error, synced.member_assignment) == (Errors.NONE, b"")
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("protocol_type, protocol_name, expected, expected_type, expected_name", [
    ("whatever", None, Errors.INCONSISTENT_GROUP_PROTOCOL, None, None),
    (None, "whatever", Errors.INCONSISTENT_GROUP_PROTOCOL, None, None),
    (None, None, Errors.NONE, PROTOCOL_TYPE, PROTOCOL_NAME),
    (PROTOCOL_TYPE, PROTOCOL_NAME, Errors.NONE, PROTOCOL_TYPE, PROTOCOL_NAME),
], ids=["ProtocolTypeIsInconsistent", "ProtocolNameIsInconsistent", "NotProvided", "Consistent"])
async def test_sync_group_protocol_type_and_name(protocol_type, protocol_name, expected, expected_type, expected_name):
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSyncGroupReturnsAnErrorWhenProtocolTypeIsInconsistent /
    #testSyncGroupReturnsAnErrorWhenProtocolNameIsInconsistent / #testSyncGroupSucceedWhenProtocolTypeAndNameAreNotProvided /
    #testSyncGroupSucceedWhenProtocolTypeAndNameAreConsistent (via #testSyncGroupProtocolTypeAndNameWith)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        leader_join = f.send_join("", PROTOCOL_SUPERSET, LEADER_INSTANCE_ID)
        follower_join = f.send_join("", PROTOCOL_SUPERSET, FOLLOWER_INSTANCE_ID)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        leader, follower = await f.result(leader_join), await f.result(follower_join)
        kwargs = {"protocol_type": protocol_type, "protocol_name": protocol_name}
        synced = await f.sync_leader(leader.member_id, leader.generation_id, {leader.member_id: b""}, **kwargs)
        assert (synced.error, synced.protocol_type, synced.protocol_name) == (expected, expected_type, expected_name)
        synced = await f.sync_follower(follower.member_id, leader.generation_id, **kwargs)
        assert (synced.error, synced.protocol_type, synced.protocol_name) == (expected, expected_type, expected_name)
        tg.cancel_scope.cancel()


async def test_sync_group_from_unknown_member_and_illegal_generation():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSyncGroupFromUnknownMember / #testSyncGroupFromIllegalGeneration
    / #testSyncGroupFromUnknownGroup / #testSyncGroupNotCoordinator."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.sync_follower("memberId", 1, group_id=OTHER_GROUP)).error is Errors.NOT_COORDINATOR
        assert (await f.sync_follower("memberId", 1)).error is Errors.UNKNOWN_MEMBER_ID
        joined = await f.dynamic_join()
        illegal = await f.sync_leader(joined.member_id, joined.generation_id + 1, {joined.member_id: b""})
        assert illegal.error is Errors.ILLEGAL_GENERATION
        synced = await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})
        assert synced.error is Errors.NONE
        assert (await f.sync_follower("blah", joined.generation_id)).error is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ Heartbeat

async def test_heartbeat_wrong_coordinator_and_unknown_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatWrongCoordinator / #testHeartbeatUnknownGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert f.heartbeat("memberId", -1, group_id=OTHER_GROUP) is Errors.NOT_COORDINATOR
        assert f.heartbeat("memberId", -1) is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_heartbeat_dead_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatDeadGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        f.manager.add_group(GroupMetadata(DEAD_GROUP, Dead, MockTime()))
        assert f.heartbeat("memberId", 1, group_id=DEAD_GROUP) is Errors.COORDINATOR_NOT_AVAILABLE
        tg.cancel_scope.cancel()


async def test_heartbeat_unknown_consumer_existing_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatUnknownConsumerExistingGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await single_stable_member(f)
        assert f.heartbeat("memberId", 1) is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_heartbeat_rebalance_in_progress():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatRebalanceInProgress (CompletingRebalance: NONE)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        tg.cancel_scope.cancel()


async def test_heartbeat_illegal_generation_and_valid_heartbeat():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatIllegalGeneration / #testValidHeartbeat."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await single_stable_member(f)
        assert f.heartbeat(joined.member_id, 2) is Errors.ILLEGAL_GENERATION
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        tg.cancel_scope.cancel()


async def test_session_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSessionTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await single_stable_member(f)
        await f.advance(DEFAULT_SESSION_TIMEOUT + 100)
        assert f.heartbeat(joined.member_id, 1) is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_heartbeat_maintains_session():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatMaintainsSession."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        session = 1000
        joined = await single_stable_member(f, session=session, rebalance=session)
        await f.advance(session // 2)
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        await f.advance(session // 2 + 100)
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        tg.cancel_scope.cancel()


async def test_commit_maintains_session():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCommitMaintainsSession."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        session = 1000
        joined = await single_stable_member(f, session=session, rebalance=session)
        await f.advance(session // 2)
        assert await f.commit(joined.member_id, joined.generation_id, {TOPIC0: offset_and_metadata(0)}) == \
            {TOPIC0: Errors.NONE}
        await f.advance(session // 2 + 100)
        assert f.heartbeat(joined.member_id, 1) is Errors.NONE
        tg.cancel_scope.cancel()


async def test_session_timeout_during_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSessionTimeoutDuringRebalance."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first = await single_stable_member(f, rebalance=2000, session=1000)
        other_join = f.send_join()
        await f.advance(500)
        assert f.heartbeat(first.member_id, first.generation_id) is Errors.REBALANCE_IN_PROGRESS
        await f.advance(1100)                        # the first member's session ends: it falls out
        assert f.heartbeat(first.member_id, first.generation_id) is Errors.UNKNOWN_MEMBER_ID
        assert (await f.result(other_join)).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_heartbeat_during_rebalance_causes_rebalance_in_progress():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatDuringRebalanceCausesRebalanceInProgress."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        f.send_join()
        assert f.heartbeat(joined.member_id, joined.generation_id) is Errors.REBALANCE_IN_PROGRESS
        tg.cancel_scope.cancel()


async def test_generation_id_increments_on_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testGenerationIdIncrementsOnRebalance."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert (joined.generation_id, joined.error) == (1, Errors.NONE)
        assert (await f.sync_leader(joined.member_id, 1, {joined.member_id: b""})).error is Errors.NONE
        rejoined = await f.result(f.send_join(joined.member_id))
        assert (rejoined.generation_id, rejoined.error) == (2, Errors.NONE)
        tg.cancel_scope.cancel()
