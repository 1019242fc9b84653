"""GroupCoordinator: membership, rebalances, failure detection and offsets on one broker.

Mirrors kafka.coordinator.group.GroupCoordinatorTest (Kafka 3.x, classic protocol): the error
cases of JoinGroup / SyncGroup / Heartbeat / LeaveGroup / OffsetCommit / OffsetFetch where
Kafka returns them, the rebalance protocol (delayed join, leader assignment stored before
anyone is answered), session and rebalance timeouts in virtual time, and the request
handlers of KafkaApis for the group APIs.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from helpers_replica import lai_request, lai_state, make_broker, metadata_for, um_state
from kafka_ref.clients.abstract_coordinator import Generation, MemberState
from kafka_ref.clients.client_metadata import Metadata
from kafka_ref.clients.consumer_coordinator import (
    Assignment,
    ConsumerCoordinator,
    ConsumerProtocol,
    RangeAssignor,
    RoundRobinAssignor,
    Subscription,
)
from kafka_ref.clients.consumer_coordinator_offsets import CommitFailedException
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.common.errors import Errors, RebalanceInProgressException
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from kafka_ref.common.requests.leave_group import MemberIdentity
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.requests.sync_group import SyncGroupRequest
from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Empty,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import partition_for
from kafka_ref.network.network import Envelope, Network

pytestmark = pytest.mark.anyio

OFFSETS = "__consumer_offsets"
N = 3
GROUP = "g"                                                     # partition 1
OTHER_GROUP = next(g for g in ("a", "b", "c", "d") if partition_for(g, N) != partition_for(GROUP, N))
P = partition_for(GROUP, N)
FRESH_GROUP = next(g for g in ("e", "f", "h", "i", "j", "k") if partition_for(g, N) == P)
FOO0 = TopicPartition("foo", 0)
SESSION = 10000
REBALANCE = 20000
PROTOCOLS = [("range", b"range-meta"), ("roundrobin", b"rr-meta")]


class Answers:
    def __init__(self) -> None:
        self.values: list[Any] = []
        self.event = anyio.Event()

    def __call__(self, value: Any) -> None:
        self.values.append(value)
        self.event.set()

    @property
    def value(self) -> Any:
        assert len(self.values) == 1, self.values
        return self.values[0]


class Fixture:
    """A running broker 0 that owns __consumer_offsets-1 (the group's partition), like GroupCoordinatorTest's setUp."""

    def __init__(self, props: dict[str, Any] | None = None) -> None:
        self.broker = make_broker(0, {"offsets.topic.num.partitions": N, "group.initial.rebalance.delay.ms": 0,
                                      **(props or {})}, time=Time())
        metadata_for(self.broker, brokers=(0, 1, 2))
        self.coordinator = self.broker.group_coordinator
        self.manager = self.coordinator.group_manager

    async def start(self, tg: Any) -> "Fixture":
        tg.start_soon(self.broker.timer.run)
        self.broker.scheduler.startup(tg)
        request = lai_request([lai_state(0, 0, (0,), (0,), topic=OFFSETS, partition=P)], topic_ids={OFFSETS: Uuid(7, 7)})
        self.broker.replica_manager.become_leader_or_follower(0, request, self.broker.on_leadership_change)
        while not self.manager.is_partition_owned(P):
            await anyio.sleep(0.001)
        return self

    def group(self, group_id: str = GROUP) -> Any:
        return self.manager.get_group(group_id)

    # -- requests, straight to the coordinator ----------------------------------------------------

    def join(self, member_id: str = "", *, group_id: str = GROUP, protocols=PROTOCOLS, session: int = SESSION,
             rebalance: int = REBALANCE, require_known: bool = False, protocol_type: str = "consumer",
             client_id: str = "client") -> Answers:
        answers = Answers()
        self.coordinator.handle_join_group(group_id, member_id, None, require_known, True, client_id, "/host", rebalance,
                                           session, protocol_type, list(protocols), answers)
        return answers

    def sync(self, member_id: str, generation: int, assignment: dict[str, bytes] | None = None, *,
             group_id: str = GROUP, protocol_name: str | None = "range") -> Answers:
        answers = Answers()
        self.coordinator.handle_sync_group(group_id, generation, member_id, "consumer", protocol_name, None,
                                           assignment or {}, answers)
        return answers

    def heartbeat(self, member_id: str, generation: int, group_id: str = GROUP) -> Errors:
        answers = Answers()
        self.coordinator.handle_heartbeat(group_id, member_id, None, generation, answers)
        return answers.value

    def commit(self, member_id: str, generation: int, offset: int = 5, group_id: str = GROUP) -> Answers:
        answers = Answers()
        self.coordinator.handle_commit_offsets(group_id, member_id, None, generation,
                                               {FOO0: OffsetAndMetadata(offset, None, "", 0)}, answers)
        return answers

    def leave(self, *member_ids: str, group_id: str = GROUP) -> Any:
        answers = Answers()
        self.coordinator.handle_leave_group(group_id, [MemberIdentity(member_id=m) for m in member_ids], answers)
        return answers.value

    async def joined(self, answers: Answers, timeout_s: float = 60) -> Any:
        with anyio.fail_after(timeout_s):
            await answers.event.wait()
        return answers.value

    async def two_stable_members(self) -> tuple[Any, Any]:
        """Two members (needs group.initial.rebalance.delay.ms > 0 to join together), synced: (leader, follower)."""
        a, b = self.join(client_id="a"), self.join(client_id="b")
        ra, rb = await self.joined(a), await self.joined(b)
        leader, follower = (ra, rb) if ra.member_id == ra.leader_id else (rb, ra)
        follower_sync = self.sync(follower.member_id, follower.generation_id)
        await self.joined(self.sync(leader.member_id, leader.generation_id, {}))
        await self.joined(follower_sync)
        return leader, follower

    async def stable_member(self, **join_kwargs: Any) -> Any:
        """Join alone and sync: a Stable group with one member; returns the JoinGroupResult."""
        result = await self.joined(self.join(**join_kwargs))
        assert result.error is Errors.NONE
        synced = self.sync(result.member_id, result.generation_id, {result.member_id: b"all"})
        await self.joined(synced)
        return result


# ------------------------------------------------------------------------------------------ group status

async def test_requests_for_groups_of_partitions_not_owned_get_not_coordinator():
    """GroupCoordinatorTest#testJoinGroupWrongCoordinator / #testHeartbeatWrongCoordinator / #testSyncGroupFromUnknownGroup..."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        assert f.join(group_id=OTHER_GROUP).value.error is Errors.NOT_COORDINATOR
        assert f.sync("m", 1, group_id=OTHER_GROUP).value.error is Errors.NOT_COORDINATOR
        assert f.heartbeat("m", 1, group_id=OTHER_GROUP) is Errors.NOT_COORDINATOR
        assert f.commit("m", 1, group_id=OTHER_GROUP).value == {FOO0: Errors.NOT_COORDINATOR}
        assert f.leave("m", group_id=OTHER_GROUP).top_level_error is Errors.NOT_COORDINATOR
        assert f.coordinator.handle_fetch_offsets(OTHER_GROUP, False, [FOO0]) == (Errors.NOT_COORDINATOR, {})
        tg.cancel_scope.cancel()


async def test_requests_while_the_partition_loads():
    """GroupCoordinatorTest#testJoinGroupWhileLoading / #testSyncGroupWhileLoading (REBALANCE_IN_PROGRESS) / heartbeat NONE."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        f.manager.owned_partitions.discard(P)
        f.manager.loading_partitions.add(P)
        assert f.join().value.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
        assert f.sync("m", 1).value.error is Errors.REBALANCE_IN_PROGRESS
        assert f.heartbeat("m", 1) is Errors.NONE
        assert f.commit("m", 1).value == {FOO0: Errors.COORDINATOR_LOAD_IN_PROGRESS}
        assert f.coordinator.handle_fetch_offsets(GROUP, False, None) == (Errors.COORDINATOR_LOAD_IN_PROGRESS, {})
        tg.cancel_scope.cancel()


async def test_invalid_group_id_and_inactive_coordinator():
    """GroupCoordinatorTest#testJoinGroupInvalidGroupId / #testRequestHandlingWhileCoordinatorNotActive (implicitly)."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        assert f.join(group_id="").value.error is Errors.INVALID_GROUP_ID
        assert f.heartbeat("m", 1, group_id="") is Errors.INVALID_GROUP_ID
        f.coordinator.shutdown()
        assert f.join().value.error is Errors.COORDINATOR_NOT_AVAILABLE
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ JoinGroup

@pytest.mark.parametrize("session", [5999, 1800001])
async def test_join_group_session_timeout_bounds(session):
    """GroupCoordinatorTest#testJoinGroupSessionTimeoutTooSmall / TooLarge (group.min/max.session.timeout.ms)."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        result = f.join(session=session).value
        assert (result.error, result.member_id, result.generation_id) == (Errors.INVALID_SESSION_TIMEOUT, "", -1)
        assert f.group() is None
        tg.cancel_scope.cancel()


async def test_join_group_unknown_member_of_unknown_group():
    """GroupCoordinatorTest#testJoinGroupUnknownConsumerNewGroup."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        assert f.join("memberId").value.error is Errors.UNKNOWN_MEMBER_ID
        assert f.group() is None
        tg.cancel_scope.cancel()


async def test_join_group_inconsistent_protocols():
    """GroupCoordinatorTest#testJoinGroupInconsistentProtocolType / #testJoinGroupWithEmptyProtocolType / #testJoinGroupInconsistentGroupProtocol."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 3000}).start(tg)
        assert f.join(protocol_type="").value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert f.join(protocols=[]).value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
        first = f.join(protocols=[("range", b"")])
        assert f.join(protocol_type="connect").value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert f.join(protocols=[("roundrobin", b"")]).value.error is Errors.INCONSISTENT_GROUP_PROTOCOL
        assert (await f.joined(first)).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_member_id_required_then_join_with_it():
    """GroupCoordinatorTest#testNewMemberJoinExpiration-style KIP-394 flow (JoinGroup v4+)."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        first = f.join(require_known=True, client_id="consumer-1").value
        assert first.error is Errors.MEMBER_ID_REQUIRED and first.member_id.startswith("consumer-1-")
        assert f.group().is_pending_member(first.member_id) and f.group().current_state is Empty
        result = await f.joined(f.join(first.member_id, require_known=True))
        assert (result.error, result.member_id, result.generation_id, result.leader_id) == (
            Errors.NONE, first.member_id, 1, first.member_id)
        assert [m.member_id for m in result.members] == [first.member_id]
        assert result.members[0].metadata == b"range-meta"
        tg.cancel_scope.cancel()


async def test_pending_member_expires_after_session_timeout():
    """GroupCoordinatorTest#testPendingMemberJoinExpiration-like: a member id never used is forgotten."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        first = f.join(require_known=True).value
        await anyio.sleep(SESSION / 1000 + 0.1)
        assert not f.group().is_pending_member(first.member_id)
        assert f.join(first.member_id, require_known=True).value.error is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_initial_rebalance_delay_gathers_members():
    """GroupCoordinatorTest#testDelayRebalanceUptoRebalanceTimeout / KIP-134 (loop-clock time).

    The first delay (3 s) ends at t=3; a member arrived meanwhile, so another full delay
    follows (ending at t=6), not one counted from the new member's arrival.
    """
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 3000}).start(tg)
        start = anyio.current_time()
        a = f.join(client_id="a")
        await anyio.sleep(2.0)
        b = f.join(client_id="b")                       # extends the delay by another round
        ra, rb = await f.joined(a), await f.joined(b)
        assert anyio.current_time() - start == pytest.approx(6.0, abs=0.01)
        assert ra.generation_id == rb.generation_id == 1
        assert f.group().size == 2 and f.group().current_state is CompletingRebalance
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ the rebalance protocol

async def test_join_and_sync_two_members():
    """GroupCoordinatorTest#testSyncGroupFollowerAfterLeader / #testSyncGroupLeaderAfterFollower: followers wait for the leader."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a"), f.join(client_id="b")
        ra, rb = await f.joined(a), await f.joined(b)
        leader, follower = (ra, rb) if ra.member_id == ra.leader_id else (rb, ra)
        assert len(leader.members) == 2 and follower.members == ()
        assert (leader.protocol_name, leader.protocol_type) == ("range", "consumer")
        follower_sync = f.sync(follower.member_id, follower.generation_id)
        assert follower_sync.values == [] and f.group().current_state is CompletingRebalance
        # The leader forgets the follower: it gets an empty assignment.
        leader_sync = f.sync(leader.member_id, leader.generation_id, {leader.member_id: b"L"})
        await f.joined(leader_sync)
        assert (leader_sync.value.error, leader_sync.value.member_assignment) == (Errors.NONE, b"L")
        assert (follower_sync.value.error, follower_sync.value.member_assignment) == (Errors.NONE, b"")
        assert f.group().current_state is Stable
        # A Stable group answers a SyncGroup with the current assignment.
        again = f.sync(leader.member_id, leader.generation_id)
        assert again.value.member_assignment == b"L"
        tg.cancel_scope.cancel()


async def test_sync_group_errors():
    """GroupCoordinatorTest#testSyncGroupFromUnknownMember / #testSyncGroupFromIllegalGeneration / #testSyncGroupEmptyAssignment..."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        assert f.sync("m", 1).value.error is Errors.UNKNOWN_MEMBER_ID          # no group at all
        member, other = await f.two_stable_members()
        assert f.sync("nope", member.generation_id).value.error is Errors.UNKNOWN_MEMBER_ID
        assert f.sync(member.member_id, member.generation_id + 1).value.error is Errors.ILLEGAL_GENERATION
        assert f.sync(member.member_id, member.generation_id, protocol_name="roundrobin").value.error is \
            Errors.INCONSISTENT_GROUP_PROTOCOL
        # Once the group is rebalancing again, SyncGroup sends the member back to JoinGroup.
        parked = f.join(member.member_id, protocols=[("range", b"changed")])
        assert f.group().current_state is PreparingRebalance
        assert f.sync(member.member_id, member.generation_id).value.error is Errors.REBALANCE_IN_PROGRESS
        await f.joined(f.join(other.member_id))
        await f.joined(parked)
        tg.cancel_scope.cancel()


async def test_heartbeat_errors():
    """GroupCoordinatorTest#testHeartbeatUnknownGroup / UnknownConsumerExistingGroup / IllegalGeneration / DuringRebalance / EmptyGroup."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 3000}).start(tg)
        assert f.heartbeat("m", 1) is Errors.UNKNOWN_MEMBER_ID
        member = await f.stable_member()
        assert f.heartbeat(member.member_id, member.generation_id) is Errors.NONE
        assert f.heartbeat("nope", member.generation_id) is Errors.UNKNOWN_MEMBER_ID
        assert f.heartbeat(member.member_id, member.generation_id + 1) is Errors.ILLEGAL_GENERATION
        # A new member's join starts a rebalance: heartbeats now say REBALANCE_IN_PROGRESS.
        newcomer = f.join(client_id="new")
        assert f.group().current_state is PreparingRebalance
        assert f.heartbeat(member.member_id, member.generation_id) is Errors.REBALANCE_IN_PROGRESS
        rejoin = f.join(member.member_id)
        await f.joined(newcomer), await f.joined(rejoin)
        tg.cancel_scope.cancel()


async def test_leader_rejoin_in_stable_group_forces_a_rebalance_follower_does_not():
    """GroupCoordinatorTest#testLeaderRejoin* / #testFollowerJoinGroupWithSameMetadataNoRebalance."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a"), f.join(client_id="b")
        ra, rb = await f.joined(a), await f.joined(b)
        leader, follower = (ra, rb) if ra.member_id == ra.leader_id else (rb, ra)
        sync_f = f.sync(follower.member_id, 1)
        await f.joined(f.sync(leader.member_id, 1, {leader.member_id: b"x", follower.member_id: b"y"}))
        await f.joined(sync_f)
        same = f.join(follower.member_id)               # same metadata: current generation back, no rebalance
        assert (same.value.error, same.value.generation_id, same.value.members) == (Errors.NONE, 1, ())
        assert f.group().current_state is Stable
        rejoin = f.join(leader.member_id)               # the leader's JoinGroup forces one
        assert f.group().current_state is PreparingRebalance and rejoin.values == []
        follower_rejoin = f.join(follower.member_id)
        await f.joined(rejoin), await f.joined(follower_rejoin)
        assert rejoin.value.generation_id == 2
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ timeouts

async def test_session_expiration_removes_member_and_empties_group():
    """GroupCoordinatorTest#testSessionTimeout: no heartbeat for session.timeout.ms → removed; the group is Empty."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        member = await f.stable_member()
        await anyio.sleep(SESSION / 1000 - 1)
        assert f.heartbeat(member.member_id, 1) is Errors.NONE          # renews the session
        await anyio.sleep(SESSION / 1000 - 1)
        assert f.group().has(member.member_id)
        await anyio.sleep(1.1)
        assert not f.group().has(member.member_id)
        assert (f.group().current_state, f.group().generation_id) == (Empty, 2)
        assert f.heartbeat(member.member_id, 1) is Errors.UNKNOWN_MEMBER_ID
        tg.cancel_scope.cancel()


async def test_expired_member_makes_the_others_rebalance():
    """GroupCoordinatorTest#testHeartbeatDuringRebalanceCausesRebalanceInProgress via a failed member."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a", session=6000), f.join(client_id="b", session=30000)
        ra, rb = await f.joined(a), await f.joined(b)
        leader, follower = (ra, rb) if ra.member_id == ra.leader_id else (rb, ra)
        sync_f = f.sync(follower.member_id, 1)
        await f.joined(f.sync(leader.member_id, 1, {}))
        await f.joined(sync_f)
        survivor = rb.member_id
        for _ in range(7):                              # b heartbeats, a stays silent
            await anyio.sleep(1)
            f.heartbeat(survivor, 1)
        assert not f.group().has(ra.member_id)
        assert f.group().current_state is PreparingRebalance
        assert f.heartbeat(survivor, 1) is Errors.REBALANCE_IN_PROGRESS
        rejoined = await f.joined(f.join(survivor))
        assert (rejoined.generation_id, rejoined.leader_id, len(rejoined.members)) == (2, survivor, 1)
        tg.cancel_scope.cancel()


async def test_rebalance_timeout_removes_members_that_do_not_rejoin():
    """GroupCoordinatorTest#testRebalanceCompletesBeforeMemberJoins-like: after the rebalance timeout the absent member is dropped."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a", session=30000), f.join(client_id="b", session=30000)
        ra, rb = await f.joined(a), await f.joined(b)
        sync_b = f.sync(rb.member_id, 1) if rb.member_id != rb.leader_id else f.sync(ra.member_id, 1)
        leader = ra if ra.member_id == ra.leader_id else rb
        await f.joined(f.sync(leader.member_id, 1, {}))
        await f.joined(sync_b)
        start = anyio.current_time()
        rejoin = f.join(ra.member_id, protocols=[("range", b"new")], rebalance=5000, session=30000)
        result = await f.joined(rejoin)
        assert anyio.current_time() - start == pytest.approx(REBALANCE / 1000, abs=0.01)   # the group's max rebalance timeout
        assert (result.generation_id, result.leader_id, [m.member_id for m in result.members]) == (2, ra.member_id, [ra.member_id])
        tg.cancel_scope.cancel()


async def test_member_that_never_syncs_is_removed():
    """GroupCoordinatorTest#testRebalanceTimesOutWhenSyncRequestIsNotReceived (DelayedSync)."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a"), f.join(client_id="b")
        ra, rb = await f.joined(a), await f.joined(b)
        leader, follower = (ra, rb) if ra.member_id == ra.leader_id else (rb, ra)
        await f.joined(f.sync(leader.member_id, 1, {}))
        for _ in range(REBALANCE // 1000):              # the leader keeps heartbeating; the follower never syncs
            await anyio.sleep(1)
            f.heartbeat(leader.member_id, 1)
        await anyio.sleep(0.1)
        assert not f.group().has(follower.member_id)
        assert f.group().current_state is PreparingRebalance
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ LeaveGroup

async def test_leave_group():
    """GroupCoordinatorTest#testLeaveGroup / #testLeaveGroupUnknownConsumerExistingGroup / #testLeaveGroupUnknownGroup."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        unknown_group = f.leave("m")
        assert (unknown_group.top_level_error, [m.error_code for m in unknown_group.member_responses]) == (
            Errors.NONE, [Errors.UNKNOWN_MEMBER_ID.code])
        member = await f.stable_member()
        result = f.leave(member.member_id, "nope")
        assert [(m.member_id, m.error_code) for m in result.member_responses] == [
            (member.member_id, 0), ("nope", Errors.UNKNOWN_MEMBER_ID.code)]
        # The last member left: the rebalance completes at once with nobody, generation 2 is Empty.
        assert (f.group().current_state, f.group().generation_id) == (Empty, 2)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ offsets

async def test_commit_and_fetch_offsets():
    """GroupCoordinatorTest#testBasicFetchTxnOffsets-like basics: simple consumer commit, member commit, fetch."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        # A consumer without group management (generation -1) creates an Empty group.
        assert f.commit("", -1, offset=5).value == {FOO0: Errors.NONE}
        assert f.group().current_state is Empty
        error, data = f.coordinator.handle_fetch_offsets(GROUP, False, [FOO0, TopicPartition("foo", 1)])
        assert error is Errors.NONE
        assert {tp: d.committed_offset for tp, d in data.items()} == {FOO0: 5, TopicPartition("foo", 1): -1}
        # Generations elsewhere are refused.
        assert f.commit("m", 1, group_id=FRESH_GROUP).value == {FOO0: Errors.ILLEGAL_GENERATION}
        member = await f.stable_member()
        assert f.commit(member.member_id, member.generation_id, offset=9).value == {FOO0: Errors.NONE}
        assert f.commit("", -1).value == {FOO0: Errors.UNKNOWN_MEMBER_ID}           # not Empty any more
        assert f.commit("nope", member.generation_id).value == {FOO0: Errors.UNKNOWN_MEMBER_ID}
        assert f.commit(member.member_id, member.generation_id + 1).value == {FOO0: Errors.ILLEGAL_GENERATION}
        assert f.coordinator.handle_fetch_offsets(GROUP, False, None)[1][FOO0].committed_offset == 9
        tg.cancel_scope.cancel()


async def test_commit_during_rebalances():
    """GroupCoordinatorTest#testCommitOffsetInCompletingRebalance (REBALANCE_IN_PROGRESS) and commits while PreparingRebalance."""
    async with anyio.create_task_group() as tg:
        f = await Fixture({"group.initial.rebalance.delay.ms": 1000}).start(tg)
        a, b = f.join(client_id="a"), f.join(client_id="b")
        member, other = await f.joined(a), await f.joined(b)
        assert f.group().current_state is CompletingRebalance
        assert f.commit(member.member_id, 1).value == {FOO0: Errors.REBALANCE_IN_PROGRESS}
        leader = member if member.member_id == member.leader_id else other
        follower_sync = f.sync(other.member_id if leader is member else member.member_id, 1)
        await f.joined(f.sync(leader.member_id, 1, {}))
        await f.joined(follower_sync)
        parked = f.join(member.member_id, protocols=[("range", b"changed")])
        assert f.group().current_state is PreparingRebalance
        assert f.commit(member.member_id, 1, offset=3).value == {FOO0: Errors.NONE}
        await f.joined(f.join(other.member_id))
        await f.joined(parked)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ KafkaApis handlers

def envelope(request: Any, network: Network, principal: str = "User:ANONYMOUS") -> Envelope:
    return Envelope("client-1", 0, 1, request, principal, network)


async def test_group_api_handlers():
    """KafkaApis#handleJoinGroupRequest / #handleSyncGroupRequest / #handleOffsetCommitRequest / #handleFindCoordinatorRequest."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        apis, network = f.broker.apis, Network()
        # JoinGroup v4+: a member id first; the client id is the sender.
        e = envelope(JoinGroupRequest(group_id=GROUP, session_timeout_ms=SESSION, rebalance_timeout_ms=REBALANCE,
                                      protocol_type="consumer", protocols=(JoinGroupRequestProtocol(name="range"),)), network)
        apis.handle(e)
        assert e.response.error_code == Errors.MEMBER_ID_REQUIRED.code and e.response.member_id.startswith("client-1-")
        # SyncGroup v5 needs protocol type and name.
        e = envelope(SyncGroupRequest(group_id=GROUP, generation_id=1, member_id="m"), network)
        apis.handle(e)
        assert e.response.error_code == Errors.INCONSISTENT_GROUP_PROTOCOL.code
        # OffsetCommit: partitions unknown to the metadata cache are refused, the rest committed.
        metadata_for(f.broker, brokers=(0, 1, 2), states=[um_state(0, 0, (0,), (0,), topic="foo")])
        e = envelope(OffsetCommitRequest.build(GROUP, {FOO0: (7, 2, "m"), TopicPartition("bar", 0): (1, -1, None)}), network)
        apis.handle(e)
        await anyio.sleep(0.01)
        assert e.response.partition_errors() == {FOO0: 0, TopicPartition("bar", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        e = envelope(OffsetFetchRequest.for_group(GROUP, [FOO0]), network)
        apis.handle(e)
        data = e.response.group(GROUP).partition_data()[FOO0]
        assert (data.committed_offset, data.committed_leader_epoch, data.metadata) == (7, 2, "m")
        # FindCoordinator without a controller to create __consumer_offsets: COORDINATOR_NOT_AVAILABLE.
        e = envelope(FindCoordinatorRequest(key_type=0, coordinator_keys=(GROUP,)), network)
        apis.handle(e)
        assert (e.response.coordinators[0].error_code, e.response.coordinators[0].node_id) == (
            Errors.COORDINATOR_NOT_AVAILABLE.code, -1)
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ the purgatory

def test_group_purgatory_keeps_operations_watched_while_completing():
    """Completing a DelayedJoin may watch a new one under the same key (no member rejoined): it stays watched."""
    from kafka_ref.common.time import MockTime
    from kafka_ref.coordinator.group.group_coordinator import GroupPurgatory
    from kafka_ref.server.delayed_operation import DelayedOperation
    from kafka_ref.server.timer import SystemTimer

    purgatory = GroupPurgatory("Rebalance", SystemTimer(MockTime()))

    class Op(DelayedOperation):
        def __init__(self, then=None) -> None:
            super().__init__(1000)
            self.ready, self.then = False, then

        def try_complete(self) -> bool:
            return self.force_complete() if self.ready else False

        def on_complete(self) -> None:
            if self.then is not None:
                purgatory.try_complete_else_watch(self.then, ["key"])

    follow_up = Op()
    first = Op(then=follow_up)
    purgatory.try_complete_else_watch(first, ["key"])
    first.ready = True
    assert purgatory.check_and_complete("key") == 1
    assert purgatory.watched() == 1
    follow_up.ready = True
    assert purgatory.check_and_complete("key") == 1 and purgatory.watched() == 0


# ------------------------------------------------------------------------------------------ the client's side



def tps(*names: str) -> list[TopicPartition]:
    return [TopicPartition(n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names]


def test_range_assignor():
    """RangeAssignorTest#testTwoConsumersTwoTopicsSixPartitions / #testOnlyAssignsPartitionsFromSubscribedTopics."""
    subs = {"c1": Subscription(("t1", "t2")), "c2": Subscription(("t1", "t2"))}
    assert RangeAssignor().assign({"t1": 3, "t2": 3}, subs) == {
        "c1": tps("t1-0", "t1-1", "t2-0", "t2-1"), "c2": tps("t1-2", "t2-2")}
    assert RangeAssignor().assign({"t1": 3, "t2": 2}, {"c1": Subscription(("t1",))}) == {"c1": tps("t1-0", "t1-1", "t1-2")}


def test_round_robin_assignor():
    """RoundRobinAssignorTest#testTwoConsumersTwoTopicsSixPartitions / #testMultipleConsumersMixedTopics."""
    subs = {"c1": Subscription(("t1", "t2")), "c2": Subscription(("t1", "t2"))}
    assert RoundRobinAssignor().assign({"t1": 3, "t2": 3}, subs) == {
        "c1": tps("t1-0", "t1-2", "t2-1"), "c2": tps("t1-1", "t2-0", "t2-2")}
    mixed = {"c0": Subscription(("t1",)), "c1": Subscription(("t1", "t2")), "c2": Subscription(("t1",))}
    assert RoundRobinAssignor().assign({"t1": 3, "t2": 2}, mixed) == {
        "c0": tps("t1-0"), "c1": tps("t1-1", "t2-0", "t2-1"), "c2": tps("t1-2")}


def test_consumer_protocol_bytes():
    """ConsumerProtocolTest: version 0 subscription and assignment, byte for byte."""
    subscription = ConsumerProtocol.serialize_subscription(Subscription(("t",)))
    assert subscription == bytes.fromhex("0000" "00000001" "0001" "74" "ffffffff")
    assert ConsumerProtocol.deserialize_subscription(subscription) == Subscription(("t",))
    assignment = ConsumerProtocol.serialize_assignment(Assignment(tuple(tps("t-0", "t-2"))))
    assert assignment == bytes.fromhex("0000" "00000001" "0001" "74" "00000002" "00000000" "00000002" "ffffffff")
    assert ConsumerProtocol.deserialize_assignment(assignment) == Assignment(tuple(tps("t-0", "t-2")))
    assert ConsumerProtocol.deserialize_assignment(b"") == Assignment(())
    # A version-1 subscription (owned partitions) is read past its v0 prefix.
    v1 = bytes.fromhex("0001" "00000001" "0001" "74" "ffffffff" "00000001" "0001" "74" "00000001" "00000003")
    assert ConsumerProtocol.deserialize_subscription(v1).owned_partitions == tuple(tps("t-3"))


def member_client() -> ConsumerCoordinator:
    metadata = Metadata()
    client = NetworkClient(Network(), "consumer-1", [0], metadata, time=Time())
    coordinator = ConsumerCoordinator(client, metadata, GROUP)
    coordinator.subscribe(["foo"])
    coordinator.coordinator = 0
    coordinator.generation = Generation(3, "consumer-1-abc", "range")
    coordinator.state = MemberState.STABLE
    coordinator.rejoin_needed = False
    return coordinator


def test_client_heartbeat_errors_send_the_member_back():
    """AbstractCoordinator.HeartbeatResponseHandler: REBALANCE_IN_PROGRESS rejoins with the same id; UNKNOWN_MEMBER_ID
    resets generation and member id, ILLEGAL_GENERATION only the generation; NOT_COORDINATOR forgets the
    coordinator but keeps the generation."""
    c = member_client()
    c._handle_heartbeat_error(Errors.REBALANCE_IN_PROGRESS, c.generation)
    assert c.rejoin_needed and c.generation == Generation(3, "consumer-1-abc", "range")
    for error, after in ((Errors.UNKNOWN_MEMBER_ID, Generation()),
                         (Errors.ILLEGAL_GENERATION, Generation(-1, "consumer-1-abc", None))):
        c = member_client()
        c._handle_heartbeat_error(error, c.generation)
        assert c.rejoin_needed and c.generation == after
    c = member_client()
    c._handle_heartbeat_error(Errors.NOT_COORDINATOR, c.generation)
    assert c.coordinator is None and not c.rejoin_needed and c.generation.generation_id == 3


def test_client_commit_errors():
    """ConsumerCoordinator.OffsetCommitResponseHandler: fatal, rebalance and retriable answers."""
    c = member_client()
    with pytest.raises(CommitFailedException):
        c._handle_commit_response({FOO0: Errors.ILLEGAL_GENERATION.code}, c.generation)
    assert c.generation == Generation(-1, "consumer-1-abc", None) and c.rejoin_needed
    c = member_client()
    with pytest.raises(RebalanceInProgressException):
        c._handle_commit_response({FOO0: Errors.REBALANCE_IN_PROGRESS.code}, c.generation)
    assert c.rejoin_needed
    c = member_client()
    assert c._handle_commit_response({FOO0: Errors.COORDINATOR_LOAD_IN_PROGRESS.code}, c.generation) is False
    assert c._handle_commit_response({FOO0: Errors.NOT_COORDINATOR.code}, c.generation) is False and c.coordinator is None
    assert c._handle_commit_response({FOO0: Errors.NONE.code}, c.generation) is True
    # A member whose JoinGroup is under way cannot commit with its old generation (a stable member
    # merely asked to rejoin still can: AbstractCoordinator#generationIfStable looks at the state).
    c = member_client()
    c.request_rejoin("test")
    assert c._generation_if_stable() == Generation(3, "consumer-1-abc", "range")
    c.state = MemberState.PREPARING_REBALANCE
    with pytest.raises(RebalanceInProgressException):
        c._generation_if_stable()


# ------------------------------------------------------------------------------------------ request dataclasses

def test_group_requests_error_responses():
    """AbstractRequest#getErrorResponse of the six group APIs (JoinGroupRequestTest, OffsetCommitRequestTest, ...)."""
    from kafka_ref.common.requests.leave_group import LeaveGroupRequest
    from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest as Fetch

    code = Errors.NOT_COORDINATOR.code
    join = JoinGroupRequest(group_id=GROUP, member_id="m").get_error_response(code)
    assert (join.error_code, join.generation_id, join.protocol_name, join.leader, join.member_id) == (code, -1, "", "", "")
    assert SyncGroupRequest(group_id=GROUP).get_error_response(code).assignment == b""
    assert HeartbeatRequest(group_id=GROUP).get_error_response(code).error_code == code
    assert LeaveGroupRequest(group_id=GROUP, members=(MemberIdentity(member_id="m"),)).get_error_response(code).members == ()
    commit = OffsetCommitRequest.build(GROUP, {FOO0: (1, -1, None), TopicPartition("bar", 3): (2, -1, "x")})
    assert commit.get_error_response(code).partition_errors() == {FOO0: code, TopicPartition("bar", 3): code}
    assert commit.offsets() == {FOO0: 1, TopicPartition("bar", 3): 2}
    fetch = Fetch.for_group(GROUP, [FOO0]).get_error_response(code)
    assert (fetch.group(GROUP).error_code, fetch.group(GROUP).topics) == (code, ())
    assert Fetch.for_group(GROUP, None).groups[0].partitions() is None
