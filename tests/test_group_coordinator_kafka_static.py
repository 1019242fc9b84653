"""Static membership (KIP-345) in the GroupCoordinator, case by case after Kafka's GroupCoordinatorTest (Kafka 3.7).

A member with a group instance id keeps its place across restarts: rejoining without its
member id it takes a new one (fencing whoever still uses the old id with FENCED_INSTANCE_ID),
usually without a rebalance; it survives a rebalance it misses until its session ends; it can
be removed by instance id. Each test mirrors one kafka.coordinator.group.GroupCoordinatorTest
case with its settings (tests/helpers_group.py) and asserts the values Kafka's test asserts.
"""

from __future__ import annotations

from dataclasses import replace

import anyio
import pytest

from helpers_group import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    GROUP_MAX_SIZE,
    LEADER_INSTANCE_ID,
    OTHER_GROUP,
    PROTOCOL_NAME,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    TOPIC0,
    KafkaGroupFixture,
    check_join_group_result,
    failing_appends,
    offset_and_metadata,
    started,
    static_members_join_and_rebalance,
    verify_leave_group_result,
)
from kafka_ref.common.errors import Errors, IllegalStateException
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.sync_group import SyncGroupRequest
from kafka_ref.common.time import MockTime
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.member_metadata import MemberMetadata
from kafka_ref.network.network import Envelope, Network

pytestmark = pytest.mark.anyio

INVALID_MEMBER_ID = "invalidMember"


# ------------------------------------------------------------------------------------------ joining

async def test_static_member_join_as_first_member():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberJoinAsFirstMember."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.static_join("", GROUP_INSTANCE_ID)).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_static_join_errors_before_the_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupWrongCoordinator / #testJoinGroupUnknownConsumerNewGroup
    / #testJoinGroupWithEmptyProtocolType (their static halves)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.static_join("", GROUP_INSTANCE_ID, group_id=OTHER_GROUP)).error is Errors.NOT_COORDINATOR
        assert (await f.static_join("memberId", GROUP_INSTANCE_ID)).error is Errors.UNKNOWN_MEMBER_ID
        assert (await f.static_join("", GROUP_INSTANCE_ID, protocol_type="")).error is Errors.INCONSISTENT_GROUP_PROTOCOL
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_explicit_unknown_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberReJoinWithExplicitUnknownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.static_join("", GROUP_INSTANCE_ID)).error is Errors.NONE
        assert (await f.static_join("unknown_member", GROUP_INSTANCE_ID)).error is Errors.FENCED_INSTANCE_ID
        tg.cancel_scope.cancel()


async def test_static_members_join_group_with_max_size():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersJoinGroupWithMaxSize."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        instance_ids = [f"instance-id-{i}" for i in range(1, GROUP_MAX_SIZE + 2)]
        futures = [f.send_join("", PROTOCOLS, i) for i in instance_ids]
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        results = [await f.result(a) for a in futures]
        errors = [r.error for r in results]
        assert errors.count(Errors.NONE) == GROUP_MAX_SIZE
        assert errors.count(Errors.GROUP_MAX_SIZE_REACHED) == 1
        rejoin = [f.send_join(r.member_id, PROTOCOLS, i) for i, r in zip(instance_ids, results)]
        assert [(await f.result(a)).error for a in rejoin] == errors
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_known_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithKnownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.static_join("", GROUP_INSTANCE_ID)
        assert joined.error is Errors.NONE
        member_id = joined.member_id
        rejoin = f.send_join(member_id, PROTOCOLS, GROUP_INSTANCE_ID)   # same metadata: answered at once
        await f.advance(1)
        rejoined = await f.result(rejoin)
        assert rejoined.error is Errors.NONE and f.group().is_(CompletingRebalance)
        synced = f.send_sync(member_id, rejoined.generation_id, {member_id: b""}, protocol_type=PROTOCOL_TYPE,
                             protocol_name=PROTOCOL_NAME, instance_id=GROUP_INSTANCE_ID)
        await f.advance(1)
        assert (await f.result(synced)).error is Errors.NONE and f.group().is_(Stable)
        tg.cancel_scope.cancel()


async def test_should_get_different_static_member_id_after_each_rejoin():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#shouldGetDifferentStaticMemberIdAfterEachRejoin."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        initial = await static_members_join_and_rebalance(f)
        last = initial.leader_id
        for _ in range(5):
            joined = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOLS, clock_advance=1)
            assert joined.member_id.startswith(LEADER_INSTANCE_ID) and joined.member_id != last
            last = joined.member_id
        tg.cancel_scope.cancel()


async def test_static_member_join_with_unknown_instance_id_and_known_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberJoinWithUnknownInstanceIdAndKnownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        joined = await f.static_join(r.leader_id, "unknown_instance", PROTOCOL_SUPERSET, clock_advance=1)
        assert joined.error is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_illegal_state_as_unknown_member():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberReJoinWithIllegalStateAsUnknownMember."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await static_members_join_and_rebalance(f)
        group = f.group()
        group.transition_to(PreparingRebalance)
        group.transition_to(Empty)
        with pytest.raises(IllegalStateException) as raised:
            await f.static_join("", FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1)
        assert GROUP in str(raised.value) and FOLLOWER_INSTANCE_ID in str(raised.value)
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("mismatch", ["follower-as-leader", "leader-as-follower"])
async def test_static_member_rejoin_with_mismatched_member_id(mismatch):
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinAsFollowerWithMismatchedMemberId /
    #staticMemberRejoinAsLeaderWithMismatchedMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        member_id, instance_id = ((r.follower_id, LEADER_INSTANCE_ID) if mismatch == "follower-as-leader"
                                  else (r.leader_id, FOLLOWER_INSTANCE_ID))
        joined = await f.static_join(member_id, instance_id, PROTOCOL_SUPERSET, clock_advance=1)
        assert joined.error is Errors.FENCED_INSTANCE_ID
        tg.cancel_scope.cancel()


async def test_join_group_protocol_type_is_not_provided_when_an_error_occurs():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupProtocolTypeIsNotProvidedWhenAnErrorOccurs."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        result = await f.result(f.send_join("fake-id", PROTOCOL_SUPERSET, LEADER_INSTANCE_ID))
        assert (result.error, result.protocol_type) == (Errors.UNKNOWN_MEMBER_ID, None)
        tg.cancel_scope.cancel()


async def test_join_group_returns_the_protocol_type():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testJoinGroupReturnsTheProtocolType."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        leader = f.send_join("", PROTOCOL_SUPERSET, LEADER_INSTANCE_ID)
        follower = f.send_join("", PROTOCOL_SUPERSET, FOLLOWER_INSTANCE_ID)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        for answers in (leader, follower):
            result = await f.result(answers)
            assert (result.error, result.protocol_type) == (Errors.NONE, PROTOCOL_TYPE)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ fencing duplicates

async def test_static_member_fence_duplicate_rejoined_follower():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberFenceDuplicateRejoinedFollower."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        f.send_join()                                   # a third member: rebalance
        await f.advance(1)
        assert f.group().is_(PreparingRebalance)
        await f.advance(1)
        old_follower = f.send_join(r.follower_id, PROTOCOLS, FOLLOWER_INSTANCE_ID)
        await f.advance(1)
        duplicate = f.send_join("", PROTOCOLS, FOLLOWER_INSTANCE_ID)
        await f.advance(1)
        check_join_group_result(f, await f.result(old_follower), Errors.FENCED_INSTANCE_ID, -1, set(),
                                PreparingRebalance, None)
        assert not duplicate.done
        tg.cancel_scope.cancel()


async def test_static_member_fence_duplicate_syncing_follower_after_member_id_changed():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberFenceDuplicateSyncingFollowerAfterMemberIdChanged."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        leader_join = f.send_join(r.leader_id, PROTOCOLS, LEADER_INSTANCE_ID)
        await f.advance(1)
        assert f.group().is_(PreparingRebalance)
        await f.advance(1)
        old_follower_join = f.send_join(r.follower_id, PROTOCOLS, FOLLOWER_INSTANCE_ID)
        await f.advance(1)
        leader = await f.result(leader_join)
        check_join_group_result(f, leader, Errors.NONE, r.generation + 1, {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID},
                                CompletingRebalance, PROTOCOL_TYPE)
        assert (leader.member_id, leader.leader_id) == (r.leader_id, r.leader_id)
        old_follower = await f.result(old_follower_join)
        check_join_group_result(f, old_follower, Errors.NONE, r.generation + 1, set(), CompletingRebalance,
                                PROTOCOL_TYPE, leader_id=leader.member_id)
        assert (old_follower.member_id, old_follower.leader_id) == (r.follower_id, r.leader_id)
        assert f.group().is_(CompletingRebalance)
        # A duplicate follower (no member id) replaces the member id: the old one's parked SyncGroup is fenced.
        old_follower_sync = f.send_sync(old_follower.member_id, old_follower.generation_id,
                                        protocol_type=PROTOCOL_TYPE, protocol_name=PROTOCOL_NAME,
                                        instance_id=FOLLOWER_INSTANCE_ID)
        duplicate_join = f.send_join("", PROTOCOLS, FOLLOWER_INSTANCE_ID)
        await f.advance(1)
        assert (await f.result(old_follower_sync)).error is Errors.FENCED_INSTANCE_ID
        assert f.group().is_(PreparingRebalance)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        duplicate = await f.result(duplicate_join)
        check_join_group_result(f, duplicate, Errors.NONE, r.generation + 2, {FOLLOWER_INSTANCE_ID},
                                CompletingRebalance, PROTOCOL_TYPE, leader_id=duplicate.member_id)
        assert f.group().is_(CompletingRebalance)
        tg.cancel_scope.cancel()


async def test_static_member_fence_duplicate_rejoining_follower_after_member_id_changed():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberFenceDuplicateRejoiningFollowerAfterMemberIdChanged."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        leader_join = f.send_join(r.leader_id, PROTOCOLS, LEADER_INSTANCE_ID)
        await f.advance(1)
        assert f.group().is_(PreparingRebalance)
        duplicate_join = f.send_join("", PROTOCOLS, FOLLOWER_INSTANCE_ID)
        await f.advance(1)
        old_follower_join = f.send_join(r.follower_id, PROTOCOLS, FOLLOWER_INSTANCE_ID)
        check_join_group_result(f, await f.result(leader_join), Errors.NONE, r.generation + 1,
                                {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, CompletingRebalance, PROTOCOL_TYPE)
        duplicate = await f.result(duplicate_join)
        check_join_group_result(f, duplicate, Errors.NONE, r.generation + 1, set(), CompletingRebalance, PROTOCOL_TYPE)
        assert duplicate.member_id != r.follower_id
        check_join_group_result(f, await f.result(old_follower_join), Errors.FENCED_INSTANCE_ID, -1, set(),
                                CompletingRebalance, None)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ rejoining a Stable group

@pytest.mark.parametrize("support_skipping_assignment", [True, False])
async def test_static_member_rejoin_with_leader_id_and_unknown_member_id(support_skipping_assignment):
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithLeaderIdAndUnknownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        # The static leader comes back without its member id: no rebalance, no assignment to do.
        joined = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1,
                                     skip_assignment=support_skipping_assignment)
        check_join_group_result(
            f, joined, Errors.NONE, r.generation,
            {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID} if support_skipping_assignment else set(), Stable, PROTOCOL_TYPE,
            joined.member_id if support_skipping_assignment else r.leader_id,
            skip_assignment=support_skipping_assignment)
        old_leader = await f.static_join(r.leader_id, LEADER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1)
        assert old_leader.error is Errors.FENCED_INSTANCE_ID
        old_sync = await f.sync_leader(r.leader_id, r.generation, {}, instance_id=LEADER_INSTANCE_ID)
        assert old_sync.error is Errors.FENCED_INSTANCE_ID
        assert (await f.sync_leader(r.leader_id, r.generation, {})).error is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_leader_id_and_known_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithLeaderIdAndKnownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f, session=DEFAULT_REBALANCE_TIMEOUT // 2)
        joined = await f.static_join(r.leader_id, LEADER_INSTANCE_ID, PROTOCOL_SUPERSET,
                                     clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
        assert not f.group().has_static_member(FOLLOWER_INSTANCE_ID)     # its session ended meanwhile
        check_join_group_result(f, joined, Errors.NONE, r.generation + 1, {LEADER_INSTANCE_ID}, CompletingRebalance,
                                PROTOCOL_TYPE, r.leader_id, r.leader_id)
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_leader_id_and_unexpected_dead_or_empty_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithLeaderIdAndUnexpectedDeadGroup /
    #staticMemberRejoinWithLeaderIdAndUnexpectedEmptyGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        f.group().transition_to(PreparingRebalance)
        f.group().transition_to(Empty)
        joined = await f.static_join(r.leader_id, LEADER_INSTANCE_ID, PROTOCOLS, clock_advance=1)
        assert joined.error is Errors.UNKNOWN_MEMBER_ID
        f.group().transition_to(Dead)
        joined = await f.static_join(r.leader_id, LEADER_INSTANCE_ID, PROTOCOLS, clock_advance=1)
        assert joined.error is Errors.COORDINATOR_NOT_AVAILABLE
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_follower_id_and_change_of_protocol():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithFollowerIdAndChangeOfProtocol."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f, session=DEFAULT_SESSION_TIMEOUT * 2)
        joined = await f.static_join(r.follower_id, FOLLOWER_INSTANCE_ID, [("roundrobin", b"")],
                                     clock_advance=DEFAULT_SESSION_TIMEOUT + 1)
        assert joined.member_id == r.follower_id
        assert f.group().has_static_member(LEADER_INSTANCE_ID)
        assert f.group().is_leader(r.follower_id)        # the old leader did not rejoin in time: re-elected
        check_join_group_result(f, joined, Errors.NONE, r.generation + 1, {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID},
                                CompletingRebalance, PROTOCOL_TYPE, r.follower_id, r.follower_id)
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_with_selected_protocol_changed():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWithSelectedProtocolChanged."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        assert f.group().select_protocol() != "roundrobin"
        joined = await f.static_join("", FOLLOWER_INSTANCE_ID, [("roundrobin", b"")],
                                     clock_advance=DEFAULT_SESSION_TIMEOUT + 1)
        check_join_group_result(f, joined, Errors.NONE, r.generation + 1, {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID},
                                CompletingRebalance, PROTOCOL_TYPE)
        assert f.group().is_leader(joined.member_id) and joined.member_id != r.follower_id
        assert joined.protocol_name == "roundrobin"
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_while_select_protocol_unchanged_persistence_failure():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchangedPersistenceFailure."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        new_protocols = [(f.group().select_protocol(), b"")]
        with failing_appends(f, Errors.MESSAGE_TOO_LARGE):
            joined = await f.static_join("", FOLLOWER_INSTANCE_ID, new_protocols, clock_advance=1)
        check_join_group_result(f, joined, Errors.UNKNOWN_SERVER_ERROR, r.generation, set(), Stable, PROTOCOL_TYPE)
        # The member id was not replaced: the old one still joins and syncs.
        assert joined.member_id != r.follower_id
        old = await f.static_join(r.follower_id, FOLLOWER_INSTANCE_ID, new_protocols, clock_advance=1)
        assert old.error is Errors.NONE
        synced = await f.sync_follower(r.follower_id, r.generation, instance_id=FOLLOWER_INSTANCE_ID)
        assert synced.error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_updated_session_and_rebalance_timeouts_but_cannot_persist_change():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsButCannotPersistChange."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        with failing_appends(f, Errors.MESSAGE_TOO_LARGE):
            joined = await f.static_join("", FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1,
                                         session=2 * DEFAULT_SESSION_TIMEOUT, rebalance=2 * DEFAULT_REBALANCE_TIMEOUT)
        check_join_group_result(f, joined, Errors.UNKNOWN_SERVER_ERROR, r.generation, set(), Stable, PROTOCOL_TYPE)
        assert [(m.session_timeout_ms, m.rebalance_timeout_ms) for m in f.group().all_member_metadata()] == \
            [(DEFAULT_SESSION_TIMEOUT, DEFAULT_REBALANCE_TIMEOUT)] * 2
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_updated_session_and_rebalance_timeouts_and_persist_change():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithUpdatedSessionAndRebalanceTimeoutsAndPersistChange."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        timeouts = {"session": 2 * DEFAULT_SESSION_TIMEOUT, "rebalance": 2 * DEFAULT_REBALANCE_TIMEOUT}
        follower = await f.static_join("", FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1, **timeouts)
        check_join_group_result(f, follower, Errors.NONE, r.generation, set(), Stable, PROTOCOL_TYPE)
        leader = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1, **timeouts)
        check_join_group_result(f, leader, Errors.NONE, r.generation, {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID},
                                Stable, PROTOCOL_TYPE, leader.leader_id, leader.member_id, skip_assignment=True)
        assert leader.leader_id == leader.member_id
        assert [(m.session_timeout_ms, m.rebalance_timeout_ms) for m in f.group().all_member_metadata()] == \
            [(2 * DEFAULT_SESSION_TIMEOUT, 2 * DEFAULT_REBALANCE_TIMEOUT)] * 2
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_unknown_member_id_and_change_of_protocol_while_select_protocol_unchanged():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithUnknownMemberIdAndChangeOfProtocolWhileSelectProtocolUnchanged."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        new_protocols = [(f.group().select_protocol(), b"")]
        joined = await f.static_join("", FOLLOWER_INSTANCE_ID, new_protocols, clock_advance=1)
        check_join_group_result(f, joined, Errors.NONE, r.generation, set(), Stable, PROTOCOL_TYPE)
        assert joined.member_id != r.follower_id
        old = await f.static_join(r.follower_id, FOLLOWER_INSTANCE_ID, new_protocols, clock_advance=1)
        assert old.error is Errors.FENCED_INSTANCE_ID
        old_sync = await f.sync_follower(r.follower_id, r.generation, instance_id=FOLLOWER_INSTANCE_ID)
        assert old_sync.error is Errors.FENCED_INSTANCE_ID
        new_sync = await f.sync_follower(joined.member_id, r.generation, instance_id=FOLLOWER_INSTANCE_ID)
        assert (new_sync.error, new_sync.member_assignment) == (Errors.NONE, r.follower_assignment)
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_with_known_leader_id_to_trigger_rebalance_and_follower_with_change_of_protocol():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinWithKnownLeaderIdToTriggerRebalanceAndFollowerWithChangeofProtocol."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        leader_join = f.send_join(r.leader_id, PROTOCOL_SUPERSET, LEADER_INSTANCE_ID)
        follower_join = f.send_join(r.follower_id, PROTOCOL_SUPERSET, FOLLOWER_INSTANCE_ID)   # completes the rebalance
        await f.advance(1)
        check_join_group_result(f, await f.result(leader_join), Errors.NONE, r.generation + 1,
                                {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}, CompletingRebalance, PROTOCOL_TYPE,
                                r.leader_id, r.leader_id)
        check_join_group_result(f, await f.result(follower_join), Errors.NONE, r.generation + 1, set(),
                                CompletingRebalance, PROTOCOL_TYPE, r.leader_id, r.follower_id)
        # The follower narrows its protocols: a rebalance the old leader misses (its session ends first).
        changed = f.send_join(r.follower_id, PROTOCOLS, FOLLOWER_INSTANCE_ID)
        assert f.group().is_(PreparingRebalance)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        check_join_group_result(f, await f.result(changed), Errors.NONE, r.generation + 2, {FOLLOWER_INSTANCE_ID},
                                CompletingRebalance, PROTOCOL_TYPE, r.follower_id, r.follower_id)
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_as_follower_with_unknown_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinAsFollowerWithUnknownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        joined = await f.static_join("", FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1)
        assert f.group().has_static_member(LEADER_INSTANCE_ID)
        check_join_group_result(f, joined, Errors.NONE, r.generation, set(), Stable, PROTOCOL_TYPE)
        assert joined.member_id != r.follower_id
        synced = await f.sync_follower(joined.member_id, r.generation)
        assert (synced.error, synced.member_assignment) == (Errors.NONE, r.follower_assignment)
        tg.cancel_scope.cancel()


async def test_static_member_rejoin_as_follower_with_known_member_id_and_no_protocol_change():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberRejoinAsFollowerWithKnownMemberIdAndNoProtocolChange."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        joined = await f.static_join(r.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1)
        assert f.group().has_static_member(LEADER_INSTANCE_ID)
        check_join_group_result(f, joined, Errors.NONE, r.generation, set(), Stable, PROTOCOL_TYPE,
                                r.leader_id, r.follower_id)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ SyncGroup / Heartbeat / OffsetCommit

async def test_static_member_sync_as_leader_with_invalid_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberSyncAsLeaderWithInvalidMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        synced = await f.sync_leader("invalid", r.generation, {}, instance_id=LEADER_INSTANCE_ID)
        assert synced.error is Errors.FENCED_INSTANCE_ID
        tg.cancel_scope.cancel()


async def test_static_member_heartbeat_leader_with_invalid_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberHeartbeatLeaderWithInvalidMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        assert (await f.sync_leader(r.leader_id, r.generation, {})).error is Errors.NONE
        assert f.heartbeat(r.leader_id, r.generation) is Errors.NONE
        assert f.heartbeat(INVALID_MEMBER_ID, r.generation, LEADER_INSTANCE_ID) is Errors.FENCED_INSTANCE_ID
        tg.cancel_scope.cancel()


async def test_heartbeat_empty_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testHeartbeatEmptyGroup (a static member in an Empty group)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        group = GroupMetadata(GROUP, Empty, MockTime())
        group.add(MemberMetadata("memberId", GROUP_INSTANCE_ID, "clientId", "clientHost", DEFAULT_REBALANCE_TIMEOUT,
                                 DEFAULT_SESSION_TIMEOUT, PROTOCOL_TYPE, PROTOCOL_SUPERSET))
        f.manager.add_group(group)
        assert f.heartbeat("memberId", 0) is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_static_member_commit_offset_with_invalid_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#staticMemberCommitOffsetWithInvalidMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        assert (await f.sync_leader(r.leader_id, r.generation, {})).error is Errors.NONE
        offsets = {TOPIC0: offset_and_metadata(0)}
        assert await f.commit(r.leader_id, r.generation, offsets) == {TOPIC0: Errors.NONE}
        assert await f.commit(INVALID_MEMBER_ID, r.generation, offsets, instance_id=LEADER_INSTANCE_ID) == \
            {TOPIC0: Errors.FENCED_INSTANCE_ID}
        tg.cancel_scope.cancel()


async def test_manual_commit_offset_should_not_validate_member_id_and_instance_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testManualCommitOffsetShouldNotValidateMemberIdAndInstanceId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        offsets = {TOPIC0: offset_and_metadata(0)}
        assert await f.commit("", -1, offsets, instance_id="instance-id") == {TOPIC0: Errors.NONE}
        assert await f.commit("unknown", -1, offsets) == {TOPIC0: Errors.NONE}
        tg.cancel_scope.cancel()


async def test_complete_heartbeat_with_group_dead():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCompleteHeartbeatWithGroupDead."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        f.heartbeat(r.leader_id, r.generation)
        group = f.group()
        group.transition_to(Dead)
        assert f.coordinator.try_complete_heartbeat(group, r.leader_id, False, lambda: True)
        f.coordinator.on_expire_heartbeat(group, r.leader_id, False)
        assert group.has(r.leader_id)
        tg.cancel_scope.cancel()


async def test_complete_heartbeat_with_member_already_removed():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCompleteHeartbeatWithMemberAlreadyRemoved."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        f.heartbeat(r.leader_id, r.generation)
        group = f.group()
        group.remove(r.leader_id)
        assert f.coordinator.try_complete_heartbeat(group, r.leader_id, False, lambda: True)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ missing a rebalance

async def test_rebalance_completes_before_member_joins():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRebalanceCompletesBeforeMemberJoins."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        first = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOLS, rebalance=1200, session=1000)
        assert (first.error, first.leader_id) == (Errors.NONE, first.member_id)
        assert (await f.sync_leader(first.member_id, first.generation_id, {first.member_id: b""})).error is Errors.NONE
        other_session = DEFAULT_SESSION_TIMEOUT
        other_join = f.send_join()
        for expected in (Errors.REBALANCE_IN_PROGRESS, Errors.REBALANCE_IN_PROGRESS):
            await f.advance(other_session)
            assert f.heartbeat(first.member_id, first.generation_id) is expected
        await f.advance(other_session)                  # the rebalance times out without the static member
        other = await f.result(other_join)
        synced = await f.sync_leader(other.member_id, other.generation_id, {other.member_id: b""})
        assert synced.error is Errors.NONE
        assert other.error is Errors.NONE
        # The static member stays (until its session ends), a generation behind.
        assert f.heartbeat(first.member_id, first.generation_id) is Errors.ILLEGAL_GENERATION
        for expected in (Errors.NONE, Errors.NONE, Errors.REBALANCE_IN_PROGRESS):
            await f.advance(other_session)
            assert f.heartbeat(other.member_id, other.generation_id) is expected
        rejoined = await f.result(f.send_join(other.member_id))
        assert rejoined.error is Errors.NONE
        synced = await f.sync_leader(other.member_id, rejoined.generation_id, {other.member_id: b""})
        assert synced.error is Errors.NONE
        for _ in range(20):                             # no further rebalance
            await f.advance(500)
            assert f.heartbeat(other.member_id, rejoined.generation_id) is Errors.NONE
        tg.cancel_scope.cancel()


async def group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(f):
    """Mirrors GroupCoordinatorTest#groupStuckInRebalanceTimeoutDueToNonjoinedStaticMember."""
    long_session = DEFAULT_SESSION_TIMEOUT * 2
    r = await static_members_join_and_rebalance(f, session=long_session)
    dynamic_join = f.send_join("", PROTOCOL_SUPERSET, session=long_session)
    await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
    dynamic = await f.result(dynamic_join)
    assert (dynamic.leader_id, dynamic.error, len(dynamic.members), dynamic.generation_id) == \
        (dynamic.member_id, Errors.NONE, 3, 2)
    group = f.group()
    assert group.current_state is CompletingRebalance
    assert group.all_members() == {r.leader_id, r.follower_id, dynamic.member_id}
    assert group.all_static_members() == {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}
    assert group.all_dynamic_members() == {dynamic.member_id}
    # The static follower leaves (by member id): a rebalance only the static leader survives, unjoined.
    verify_leave_group_result(f.single_leave(r.follower_id))
    assert group.current_state is PreparingRebalance
    await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
    assert not group.all_dynamic_members() and group.all_members() == {r.leader_id}
    assert (group.generation_id, group.current_state) == (2, PreparingRebalance)
    return r


async def test_leader_fail_to_rejoin_before_final_rebalance_timeout_with_long_session_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaderFailToRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(f)
        await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
        group = f.group()
        assert (group.all_members(), group.leader_or_null(), group.generation_id) == (set(), None, 3)
        assert group.current_state is Empty
        tg.cancel_scope.cancel()


async def test_leader_rejoin_before_final_rebalance_timeout_with_long_session_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaderRejoinBeforeFinalRebalanceTimeoutWithLongSessionTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await group_stuck_in_rebalance_timeout_due_to_nonjoined_static_member(f)
        rejoined = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOLS)
        check_join_group_result(f, rejoined, Errors.NONE, 3, {LEADER_INSTANCE_ID}, CompletingRebalance, PROTOCOL_TYPE)
        group = f.group()
        assert group.all_members() == {rejoined.member_id}
        assert group.leader_or_null() is not None and group.generation_id == 3
        tg.cancel_scope.cancel()


async def test_static_member_follower_fail_to_rejoin_before_rebalance_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMemberFollowerFailToRejoinBeforeRebalanceTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f, session=DEFAULT_REBALANCE_TIMEOUT * 2)
        new_join = f.send_join("", PROTOCOL_SUPERSET, "newMember")
        assert f.group().current_state is PreparingRebalance
        leader = await f.static_join(r.leader_id, LEADER_INSTANCE_ID, PROTOCOL_SUPERSET,
                                     clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
        check_join_group_result(f, leader, Errors.NONE, r.generation + 1,
                                {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID, "newMember"}, CompletingRebalance,
                                PROTOCOL_TYPE, leader_id=r.leader_id, member_id=r.leader_id)
        check_join_group_result(f, await f.result(new_join), Errors.NONE, r.generation + 1, set(), CompletingRebalance,
                                PROTOCOL_TYPE, leader_id=r.leader_id)
        tg.cancel_scope.cancel()


async def test_static_member_leader_fail_to_rejoin_before_rebalance_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMemberLeaderFailToRejoinBeforeRebalanceTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f, session=DEFAULT_REBALANCE_TIMEOUT * 2)
        new_join = f.send_join("", PROTOCOL_SUPERSET, "newMember")
        await f.advance(1)
        assert f.group().current_state is PreparingRebalance
        old_follower = await f.static_join(r.follower_id, FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET,
                                           clock_advance=DEFAULT_REBALANCE_TIMEOUT + 1)
        new_member = await f.result(new_join)
        new_leader, new_follower = ((old_follower, new_member) if old_follower.leader_id == old_follower.member_id
                                    else (new_member, old_follower))
        check_join_group_result(f, new_leader, Errors.NONE, r.generation + 1,
                                {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID, "newMember"}, CompletingRebalance,
                                PROTOCOL_TYPE)
        check_join_group_result(f, new_follower, Errors.NONE, r.generation + 1, set(), CompletingRebalance,
                                PROTOCOL_TYPE, leader_id=new_leader.member_id)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ KafkaApis: static members need IBP 2.3

def _envelope(request, network):
    return Envelope("client-1", 0, 1, request, "User:ANONYMOUS", network)


async def test_reject_requests_when_static_membership_not_supported():
    """Mirrors kafka.server.KafkaApisTest#rejectJoinGroupRequestWhenStaticMembershipNotSupported /
    #rejectSyncGroupRequestWhenStaticMembershipNotSupported / #rejectHeartbeatRequestWhenStaticMembershipNotSupported /
    #rejectOffsetCommitRequestWhenStaticMembershipNotSupported (IBP 2.2)."""
    async with anyio.create_task_group() as tg:
        f = await KafkaGroupFixture({"inter.broker.protocol.version": "2.2"}).start(tg)
        apis, network = f.broker.apis, Network()
        requests = [
            JoinGroupRequest(group_id="test", member_id="test", group_instance_id="instanceId", protocol_type="consumer"),
            SyncGroupRequest(group_id="test", generation_id=1, member_id="test", group_instance_id="instanceId",
                             protocol_type="consumer", protocol_name="range"),
            HeartbeatRequest(group_id="test", generation_id=1, member_id="test", group_instance_id="instanceId"),
            replace(OffsetCommitRequest.build("test", {TOPIC0: (0, -1, None)}, generation_id=1, member_id="test"),
                    group_instance_id="instanceId"),
        ]
        codes = []
        for request in requests:
            e = _envelope(request, network)
            apis.handle(e)
            codes.append(e.response.error_code if hasattr(e.response, "error_code")
                         else set(e.response.partition_errors().values()))
        assert codes == [Errors.UNSUPPORTED_VERSION.code] * 3 + [{Errors.UNSUPPORTED_VERSION.code}]
        tg.cancel_scope.cancel()


async def test_static_join_group_request_from_ibp_2_3():
    """KafkaApis#handleJoinGroupRequest and GroupCoordinatorAdapter#joinGroup at IBP 2.3+: a static member's JoinGroup
    reaches the coordinator and is never asked for a member id first (MEMBER_ID_REQUIRED is for dynamic members)."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        apis, network = f.broker.apis, Network()
        e = _envelope(JoinGroupRequest(group_id=GROUP, session_timeout_ms=DEFAULT_SESSION_TIMEOUT,
                                       rebalance_timeout_ms=DEFAULT_REBALANCE_TIMEOUT, group_instance_id="instanceId",
                                       protocol_type="consumer", protocols=(JoinGroupRequestProtocol(name="range"),)),
                      network)
        apis.handle(e)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        assert e.response.error_code == 0 and e.response.generation_id == 1
        assert e.response.member_id.startswith("instanceId-") and e.response.leader == e.response.member_id
        assert [m.group_instance_id for m in e.response.members] == ["instanceId"]
        heartbeat = _envelope(HeartbeatRequest(group_id=GROUP, generation_id=1, member_id="stale",
                                               group_instance_id="instanceId"), network)
        apis.handle(heartbeat)
        assert heartbeat.response.error_code == Errors.FENCED_INSTANCE_ID.code
        tg.cancel_scope.cancel()


async def test_static_members_survive_a_coordinator_move():
    """KIP-345 across a coordinator change (no single Kafka test; GroupMetadataManagerTest#testStoreNonEmptyGroup and
    #testloadGroupWithStaticMember are its halves): the stored group record carries each member's group instance id,
    so after the ``__consumer_offsets`` partition is unloaded and loaded again a static member that restarts
    (no member id) takes its old place without a rebalance, and the old member id is fenced."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        r = await static_members_join_and_rebalance(f)
        partition, before = f.manager.partition_for(GROUP), f.group()
        f.coordinator.on_resignation(partition, 1)
        f.coordinator.on_election(partition, 2)
        while f.manager.has_pending_jobs() or not f.manager.is_partition_owned(partition):
            await anyio.sleep(0.001)
        group = f.group()
        assert group is not before and before.is_(Dead)         # unloaded, then read back from the log
        assert (group.current_state, group.generation_id) == (Stable, r.generation)
        assert group.all_static_members() == {LEADER_INSTANCE_ID, FOLLOWER_INSTANCE_ID}
        assert group.current_static_member_id(FOLLOWER_INSTANCE_ID) == r.follower_id
        joined = await f.static_join("", FOLLOWER_INSTANCE_ID, PROTOCOL_SUPERSET, clock_advance=1)
        check_join_group_result(f, joined, Errors.NONE, r.generation, set(), Stable, PROTOCOL_TYPE, r.leader_id)
        assert f.heartbeat(r.follower_id, r.generation, FOLLOWER_INSTANCE_ID) is Errors.FENCED_INSTANCE_ID
        assert f.heartbeat(joined.member_id, r.generation, FOLLOWER_INSTANCE_ID) is Errors.NONE
        tg.cancel_scope.cancel()
