"""The setting of Kafka's GroupCoordinatorTest, on a real broker in virtual time.

Plays the role of kafka.coordinator.group.GroupCoordinatorTest's setUp and helpers
(sendJoinGroup, dynamicJoinGroup, staticJoinGroup, syncGroupLeader/Follower, heartbeat,
commitOffsets, singleLeaveGroup/batchLeaveGroup): the same group settings
(group.min.session.timeout.ms 10, group.max.session.timeout.ms 10 minutes, group.max.size 4,
group.initial.rebalance.delay.ms 50; member session and rebalance timeouts 500 ms), a broker
that leads the group's ``__consumer_offsets`` partition (so group and offset records are really
written, where Kafka's test mocks the append), and MockTimer#advanceClock as ``advance(ms)``:
the loop clock moves by exactly that much, then the group purgatories' timer (``MockTimer``
below, shared by both as in Kafka's test) runs what is due the way Kafka's MockTimer does, and
the loop runs until nothing more is ready. The broker's own timer task is not started.

``result(answers)`` is Kafka's ``await(future, ...)``: the answer must be there already,
without any more time passing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from helpers_replica import lai_request, lai_state, make_broker, metadata_for

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leave_group import MemberIdentity
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import partition_for
from kafka_ref.server.delayed_produce import PartitionResponse

OFFSETS = "__consumer_offsets"
N = 3
GROUP = "groupId"
P = partition_for(GROUP, N)
OTHER_GROUP = next(g for g in ("otherGroup", "a", "b", "c", "d") if partition_for(g, N) != P)
DEAD_GROUP = next(g for g in ("deadGroupId", "e", "f", "h", "i", "j", "k") if partition_for(g, N) == P)
PROTOCOL_TYPE = "consumer"
PROTOCOL_NAME = "range"
PROTOCOLS = [(PROTOCOL_NAME, b"")]
PROTOCOL_SUPERSET = [(PROTOCOL_NAME, b""), ("roundrobin", b"")]
GROUP_MIN_SESSION_TIMEOUT = 10
GROUP_MAX_SESSION_TIMEOUT = 10 * 60 * 1000
GROUP_MAX_SIZE = 4
DEFAULT_REBALANCE_TIMEOUT = 500
DEFAULT_SESSION_TIMEOUT = 500
GROUP_INITIAL_REBALANCE_DELAY = 50
TOPIC0 = TopicPartition("topic", 0)


class Answers:
    """A response callback that remembers what it was called with (Kafka's Promise/Future pair)."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> None:
        self.values.append(value)

    @property
    def done(self) -> bool:
        return bool(self.values)

    @property
    def value(self) -> Any:
        assert len(self.values) == 1, self.values
        return self.values[0]


def offset_and_metadata(offset: int, leader_epoch: int | None = None, metadata: str = "") -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, leader_epoch, metadata, 0)


class MockTimer:
    """Mirrors org.apache.kafka.server.util.timer.MockTimer, which Kafka's GroupCoordinatorTest runs its purgatories on.

    Tasks wait in a java.util.PriorityQueue ordered by deadline alone (a binary heap: among equal
    deadlines the order is the heap's, which Kafka's expectations depend on, so the heap is
    Java's, sift for sift); ``advance_clock`` runs each task whose deadline is strictly before
    now, skipping cancelled ones; a task without delay runs at once when added.
    """

    def __init__(self, time: Any) -> None:
        self.time = time
        self.queue: list[tuple[int, Any]] = []
        self.purgatories: list[Any] = []

    def add(self, task: Any) -> None:
        """Mirrors MockTimer#add (PriorityQueue#offer: siftUp)."""
        if task.delay_ms <= 0:
            task.run()
            return
        entry = (self.time.hi_res_clock_ms() + task.delay_ms, task)
        queue, k = self.queue, len(self.queue)
        queue.append(entry)
        while k > 0:
            parent = (k - 1) >> 1
            if entry[0] >= queue[parent][0]:
                break
            queue[k] = queue[parent]
            k = parent
        queue[k] = entry

    def _poll(self) -> tuple[int, Any]:
        """PriorityQueue#poll: the head out, the last entry sifted down from the top."""
        queue = self.queue
        result, last = queue[0], queue.pop()
        n = len(queue)
        if n > 0:
            k, half = 0, n >> 1
            while k < half:
                child = 2 * k + 1
                right = child + 1
                if right < n and queue[child][0] > queue[right][0]:
                    child = right
                if last[0] <= queue[child][0]:
                    break
                queue[k] = queue[child]
                k = child
            queue[k] = last
        return result

    def advance_clock(self) -> int:
        """Mirrors MockTimer#advanceClock after the clock moved: run what is due, in queue order."""
        now = self.time.hi_res_clock_ms()
        ran = 0
        while self.queue and now > self.queue[0][0]:
            _, task = self._poll()
            if not task.cancelled:
                task.run()
                ran += 1
        return ran

    def size(self) -> int:
        return len(self.queue)


class KafkaGroupFixture:
    """Broker 0 leading ``__consumer_offsets-P``, with GroupCoordinatorTest's group settings."""

    def __init__(self, props: dict[str, Any] | None = None) -> None:
        self.broker = make_broker(0, {
            "offsets.topic.num.partitions": N,
            "group.min.session.timeout.ms": GROUP_MIN_SESSION_TIMEOUT,
            "group.max.session.timeout.ms": GROUP_MAX_SESSION_TIMEOUT,
            "group.max.size": GROUP_MAX_SIZE,
            "group.initial.rebalance.delay.ms": GROUP_INITIAL_REBALANCE_DELAY,
            **(props or {})}, time=Time())
        metadata_for(self.broker, brokers=(0, 1, 2))
        self.coordinator = self.broker.group_coordinator
        self.manager = self.coordinator.group_manager
        self.timer = MockTimer(self.broker.time)
        self.coordinator.heartbeat_purgatory.timer = self.timer
        self.coordinator.rebalance_purgatory.timer = self.timer

    async def start(self, tg: Any) -> KafkaGroupFixture:
        self.broker.scheduler.startup(tg)
        request = lai_request([lai_state(0, 0, (0,), (0,), topic=OFFSETS, partition=P)], topic_ids={OFFSETS: Uuid(7, 7)})
        self.broker.replica_manager.become_leader_or_follower(0, request, self.broker.on_leadership_change)
        while not self.manager.is_partition_owned(P):
            await anyio.sleep(0.001)
        # A quarter millisecond past a whole one: the timer's millisecond clock (a floor) then
        # reads exact whole milliseconds however the float sums round.
        now_ms = anyio.current_time() * 1000
        await anyio.sleep((int(now_ms) + 1.25 - now_ms) / 1000)
        await self.settle()
        return self

    # -- time ----------------------------------------------------------------------------------

    def _run_due(self) -> int:
        """The group purgatories' MockTimer, and anything else on the broker's timer, run what is due."""
        return self.timer.advance_clock() + self.broker.timer.advance_clock()

    async def settle(self) -> None:
        """Let every ready task run (appends acknowledged, callbacks called) without moving the clock."""
        for _ in range(50):
            self._run_due()
            await anyio.lowlevel.checkpoint()

    async def advance(self, ms: int) -> None:
        """Mirrors MockTimer#advanceClock: the clock moves ``ms``, what falls due runs."""
        await anyio.sleep(ms / 1000)
        await self.settle()

    async def result(self, answers: Answers) -> Any:
        """Kafka's ``await(future, ...)`` on a MockTimer: the answer is there without more time passing."""
        await self.settle()
        assert answers.done, "no answer yet"
        return answers.value

    def group(self, group_id: str = GROUP) -> Any:
        return self.manager.get_group(group_id)

    # -- requests ------------------------------------------------------------------------------

    def send_join(self, member_id: str = "", protocols=PROTOCOLS, instance_id: str | None = None, *,
                  group_id: str = GROUP, protocol_type: str = PROTOCOL_TYPE, session: int = DEFAULT_SESSION_TIMEOUT,
                  rebalance: int = DEFAULT_REBALANCE_TIMEOUT, require_known: bool = False,
                  skip_assignment: bool = True) -> Answers:
        """Mirrors GroupCoordinatorTest#sendJoinGroup."""
        answers = Answers()
        self.coordinator.handle_join_group(group_id, member_id, instance_id, require_known, skip_assignment, "clientId",
                                           "clientHost", rebalance, session, protocol_type, list(protocols), answers)
        return answers

    async def dynamic_join(self, member_id: str = "", protocols=PROTOCOLS, *, group_id: str = GROUP,
                           protocol_type: str = PROTOCOL_TYPE, session: int = DEFAULT_SESSION_TIMEOUT,
                           rebalance: int = DEFAULT_REBALANCE_TIMEOUT) -> Any:
        """Mirrors GroupCoordinatorTest#dynamicJoinGroup: MEMBER_ID_REQUIRED bounce, then the initial delay."""
        answers = self.send_join(member_id, protocols, group_id=group_id, protocol_type=protocol_type,
                                 session=session, rebalance=rebalance, require_known=True)
        if member_id == "":
            first = await self.result(answers)
            if first.error is not Errors.MEMBER_ID_REQUIRED:
                return first
            answers = self.send_join(first.member_id, protocols, group_id=group_id, protocol_type=protocol_type,
                                     session=session, rebalance=rebalance, require_known=True)
        await self.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        return await self.result(answers)

    async def join_partial(self, member_id: str = "", protocols=PROTOCOLS, *, session: int = DEFAULT_SESSION_TIMEOUT,
                           rebalance: int = DEFAULT_REBALANCE_TIMEOUT) -> Any:
        """Mirrors GroupCoordinatorTest#joinGroupPartial: one JoinGroup with require-known-member-id, answered at once."""
        return await self.result(self.send_join(member_id, protocols, session=session, rebalance=rebalance,
                                                require_known=True))

    async def static_join(self, member_id: str, instance_id: str, protocols=PROTOCOLS, *, group_id: str = GROUP,
                          protocol_type: str = PROTOCOL_TYPE, clock_advance: int = GROUP_INITIAL_REBALANCE_DELAY + 1,
                          session: int = DEFAULT_SESSION_TIMEOUT, rebalance: int = DEFAULT_REBALANCE_TIMEOUT,
                          skip_assignment: bool = True) -> Any:
        """Mirrors GroupCoordinatorTest#staticJoinGroup (and #staticJoinGroupWithPersistence: the write is real here)."""
        answers = self.send_join(member_id, protocols, instance_id, group_id=group_id, protocol_type=protocol_type,
                                 session=session, rebalance=rebalance, skip_assignment=skip_assignment)
        await self.advance(clock_advance)
        return await self.result(answers)

    def send_sync(self, member_id: str, generation: int, assignment: dict[str, bytes] | None = None, *,
                  protocol_type: str | None = None, protocol_name: str | None = None, instance_id: str | None = None,
                  group_id: str = GROUP) -> Answers:
        """Mirrors GroupCoordinatorTest#sendSyncGroupLeader / #sendSyncGroupFollower."""
        answers = Answers()
        self.coordinator.handle_sync_group(group_id, generation, member_id, protocol_type, protocol_name, instance_id,
                                           assignment or {}, answers)
        return answers

    async def sync_leader(self, member_id: str, generation: int, assignment: dict[str, bytes], **kwargs: Any) -> Any:
        """Mirrors GroupCoordinatorTest#syncGroupLeader."""
        return await self.result(self.send_sync(member_id, generation, assignment, **kwargs))

    async def sync_follower(self, member_id: str, generation: int, **kwargs: Any) -> Any:
        """Mirrors GroupCoordinatorTest#syncGroupFollower."""
        return await self.result(self.send_sync(member_id, generation, None, **kwargs))

    def heartbeat(self, member_id: str, generation: int, instance_id: str | None = None, group_id: str = GROUP) -> Errors:
        """Mirrors GroupCoordinatorTest#heartbeat (answered synchronously)."""
        answers = Answers()
        self.coordinator.handle_heartbeat(group_id, member_id, instance_id, generation, answers)
        return answers.value

    async def commit(self, member_id: str, generation: int, offsets: dict[TopicPartition, OffsetAndMetadata], *,
                     instance_id: str | None = None, group_id: str = GROUP) -> dict[TopicPartition, Errors]:
        """Mirrors GroupCoordinatorTest#commitOffsets."""
        answers = Answers()
        self.coordinator.handle_commit_offsets(group_id, member_id, instance_id, generation, offsets, answers)
        return await self.result(answers)

    def batch_leave(self, identities: list[MemberIdentity], group_id: str = GROUP) -> Any:
        """Mirrors GroupCoordinatorTest#batchLeaveGroup (answered synchronously)."""
        answers = Answers()
        self.coordinator.handle_leave_group(group_id, identities, answers)
        return answers.value

    def single_leave(self, member_id: str, instance_id: str | None = None, group_id: str = GROUP) -> Any:
        """Mirrors GroupCoordinatorTest#singleLeaveGroup."""
        return self.batch_leave([MemberIdentity(member_id=member_id, group_instance_id=instance_id)], group_id)


def verify_leave_group_result(result: Any, top_level: Errors = Errors.NONE, member_errors: list[Errors] = ()) -> None:
    """Mirrors GroupCoordinatorTest.verifyLeaveGroupResult."""
    assert result.top_level_error is top_level
    if member_errors:
        assert [m.error_code for m in result.member_responses] == [e.code for e in member_errors]


# ------------------------------------------------------------------------------------------ GroupCoordinatorTest's recurring steps

async def started(tg: Any) -> KafkaGroupFixture:
    return await KafkaGroupFixture().start(tg)


async def single_stable_member(f: KafkaGroupFixture, **join_kwargs):
    """Join alone and sync as leader (the first steps of many of Kafka's cases)."""
    joined = await f.dynamic_join(**join_kwargs)
    assert (joined.error, joined.leader_id) == (Errors.NONE, joined.member_id)
    synced = await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})
    assert synced.error is Errors.NONE
    return joined


async def two_members_rejoined(f: KafkaGroupFixture):
    """A stable single member, then a new member and the first member's rejoin: both answered, gen 2."""
    first = await single_stable_member(f)
    other_join = f.send_join()
    join = f.send_join(first.member_id)
    joined, other = await f.result(join), await f.result(other_join)
    assert (joined.error, other.error) == (Errors.NONE, Errors.NONE)
    assert joined.generation_id == other.generation_id
    assert (joined.leader_id, other.leader_id) == (first.member_id, first.member_id)
    return first, joined, other


async def setup_group_with_pending_member(f: KafkaGroupFixture):
    """Mirrors GroupCoordinatorTest#setupGroupWithPendingMember: two members rejoining, a third pending."""
    joined1 = await f.dynamic_join()
    assert f.group().current_state is CompletingRebalance
    assert (await f.sync_leader(joined1.member_id, joined1.generation_id, {joined1.member_id: b""})).error is Errors.NONE
    assert f.group().current_state is Stable
    second_join = f.send_join()
    first_join = f.send_join(joined1.member_id)
    first_result, second_result = await f.result(first_join), await f.result(second_join)
    assert f.group().current_state is CompletingRebalance
    synced = await f.sync_leader(joined1.member_id, first_result.generation_id, {joined1.member_id: b""})
    assert synced.error is Errors.NONE and f.group().current_state is Stable
    f.send_join(first_result.member_id)
    assert f.group().current_state is PreparingRebalance
    pending = await f.join_partial(session=100)
    assert f.group().num_pending == 1
    f.send_join(second_result.member_id)
    assert f.group().current_state is PreparingRebalance and f.group().num_pending == 1
    return pending


async def join_with_n_members(f: KafkaGroupFixture, n: int):
    """Mirrors GroupCoordinatorTest#joinWithNMembers."""
    first = [f.send_join(require_known=True) for _ in range(n)]
    member_ids = [(await f.result(a)).member_id for a in first]
    futures = [f.send_join(m, require_known=True) for m in member_ids]
    await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
    await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
    results = [await f.result(a) for a in futures]
    assert {r.error for r in results} == {Errors.NONE}
    # Kafka's first member (HashMap order aside) is the leader: put it first.
    return sorted(results, key=lambda r: r.member_id != r.leader_id)


def verify_heartbeat(f: KafkaGroupFixture, result, expected: Errors) -> None:
    """Mirrors GroupCoordinatorTest#verifyHeartbeat."""
    assert f.heartbeat(result.member_id, result.generation_id) is expected


LEADER_INSTANCE_ID = "leader"
FOLLOWER_INSTANCE_ID = "follower"
GROUP_INSTANCE_ID = "groupInstanceId"


@dataclass(frozen=True)
class RebalanceResult:
    """Mirrors GroupCoordinatorTest.RebalanceResult."""

    generation: int
    leader_id: str
    leader_assignment: bytes
    follower_id: str
    follower_assignment: bytes


async def static_members_join_and_rebalance(f: KafkaGroupFixture, leader_instance_id: str = LEADER_INSTANCE_ID,
                                            follower_instance_id: str = FOLLOWER_INSTANCE_ID, *,
                                            session: int = DEFAULT_SESSION_TIMEOUT,
                                            rebalance: int = DEFAULT_REBALANCE_TIMEOUT) -> RebalanceResult:
    """Mirrors GroupCoordinatorTest#staticMembersJoinAndRebalance: two static members, generation 1, Stable."""
    leader_join = f.send_join("", PROTOCOL_SUPERSET, leader_instance_id, session=session, rebalance=rebalance)
    follower_join = f.send_join("", PROTOCOL_SUPERSET, follower_instance_id, session=session, rebalance=rebalance)
    await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
    await f.advance(DEFAULT_REBALANCE_TIMEOUT + 1)
    leader, follower = await f.result(leader_join), await f.result(follower_join)
    assert (leader.error, leader.generation_id) == (Errors.NONE, 1)
    assert (follower.error, follower.generation_id) == (Errors.NONE, 1)
    leader_sync = await f.sync_leader(leader.member_id, leader.generation_id, {leader.member_id: b""})
    assert leader_sync.error is Errors.NONE and f.group().is_(Stable)
    follower_sync = await f.sync_follower(follower.member_id, leader.generation_id)
    assert follower_sync.error is Errors.NONE and f.group().is_(Stable)
    return RebalanceResult(1, leader.member_id, leader_sync.member_assignment, follower.member_id,
                           follower_sync.member_assignment)


def check_join_group_result(f: KafkaGroupFixture, result: Any, error: Errors, generation: int, instance_ids: set[str],
                            state: Any, protocol_type: str | None, leader_id: str = "", member_id: str = "",
                            skip_assignment: bool = False) -> None:
    """Mirrors GroupCoordinatorTest#checkJoinGroupResult (an empty leader or member id is not checked)."""
    assert result.error is error
    assert result.generation_id == generation
    assert len(result.members) == len(instance_ids)
    assert {m.group_instance_id for m in result.members} == instance_ids
    assert f.group().current_state is state
    assert result.protocol_type == protocol_type
    assert result.skip_assignment is skip_assignment
    if leader_id:
        assert result.leader_id == leader_id
    if member_id:
        assert result.member_id == member_id


@contextlib.contextmanager
def failing_appends(f: KafkaGroupFixture, error: Errors) -> Iterator[None]:
    """Every ``__consumer_offsets`` append answers ``error`` (Kafka's test stubs appendForGroup with it)."""
    def append_for_group(records: Any, callback: Any) -> None:
        callback({tp: PartitionResponse(error) for tp in records})

    f.manager._append_for_group = append_for_group
    try:
        yield
    finally:
        del f.manager._append_for_group
