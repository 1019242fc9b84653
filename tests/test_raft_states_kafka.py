"""Kafka 3.8's unit tests of the Raft epoch states (org.apache.kafka.raft): LeaderStateTest,
QuorumStateTest, CandidateStateTest, FollowerStateTest, VotedStateTest, UnattachedStateTest,
ResignedStateTest, ElectionStateTest and RequestManagerTest, against kafka_ref/raft/quorum_state.py,
epoch_states.py, leader_state.py, election_state.py and request_manager.py.

tests/test_quorum_state.py holds earlier, looser checks named after a few of these (3.7); this
module ports the 3.8 tests one by one. Kafka's QuorumStateTest runs each test for kraft.version
0 and 1; kafka_ref has no directory ids, so each runs once with kraft.version 0's meaning (the
voted id and the voter set are what is persisted). Kafka's local replica is id 0 throughout.
Kafka's IllegalArgumentException is ValueError in kafka_ref.
RequestManagerTest's bootstrap lists (ids -2, -3, ...) are handed to RequestManager directly; in a
kafka_ref quorum an observer's list is the voters (KafkaRaftClient#initialize with a static voter set).

Not ported:
- LeaderStateTest#testRequireNonNullAccumulator: kafka_ref's LeaderState may be built without a
  BatchAccumulator (these epoch-state tests never append); KafkaRaftClient always gives it one.
- LeaderStateTest#testUpdateHighWatermarkMetadata: LogOffsetMetadata's segment metadata is not
  modelled (offsets are plain ints), so an HW "update" at the same offset cannot exist.
- VotedStateTest#testCanGrantVoteWithDirectoryId, ElectionStateTest#testVotedCandidateWithVotedDirectoryId
  and the directory-id halves of the other vote tests: KIP-853 ReplicaKey directory ids.
- ElectionStateTest#testQuorumStateDataRoundTrip: the quorum-state file (QuorumStateData JSON,
  versions 0 and 1) is not modelled; QuorumStateStore keeps the ElectionState object itself.
- QuorumStateTest#testInitializeWithEmptyLocalId and
  #testNoLocalIdInitializationFailsIfElectionStateHasVotedCandidate: every kafka_ref node has an id.
"""

from __future__ import annotations

import random

import pytest

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import MockTime
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.epoch_states import NO_TIMEOUT, CandidateState, FollowerState, ResignedState, UnattachedState, VotedState
from kafka_ref.raft.leader_state import (
    CHECK_QUORUM_TIMEOUT_FACTOR,
    OBSERVER_SESSION_TIMEOUT_MS,
    DescribeQuorumReplicaState,
    LeaderState,
)
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumState, QuorumStateStore
from kafka_ref.raft.request_manager import RequestManager

LOCAL_ID = 0


# ---------------------------------------------------------------------------------- LeaderStateTest

LEADER_EPOCH = 5
LEADER_FETCH_TIMEOUT_MS = 2000
CHECK_QUORUM_TIMEOUT_MS = int(LEADER_FETCH_TIMEOUT_MS * CHECK_QUORUM_TIMEOUT_FACTOR)


def new_leader_state(time: MockTime, voters, epoch_start_offset: int) -> LeaderState:
    """LeaderStateTest#newLeaderState: every voter granted; local id 0, epoch 5, fetch timeout 2000 ms."""
    return LeaderState(time, LOCAL_ID, LEADER_EPOCH, epoch_start_offset, frozenset(voters), set(voters),
                       LEADER_FETCH_TIMEOUT_MS)


def voter_state(state: LeaderState, voter_id: int, now: float) -> DescribeQuorumReplicaState:
    """LeaderStateTest#describeVoterState."""
    return next(r for r in state.describe_quorum(now).current_voters if r.replica_id == voter_id)


def observer_state(state: LeaderState, observer_id: int, now: float) -> DescribeQuorumReplicaState:
    """LeaderStateTest#describeObserverState."""
    return next(r for r in state.describe_quorum(now).observers if r.replica_id == observer_id)


def test_leader_follower_acknowledgement():
    """Mirrors LeaderStateTest#testFollowerAcknowledgement."""
    state = new_leader_state(MockTime(), {LOCAL_ID, 1, 2}, 0)
    assert state.non_acknowledging_voters() == {1, 2}
    state.add_acknowledgement_from(1)
    assert state.non_acknowledging_voters() == {2}
    state.add_acknowledgement_from(2)
    assert state.non_acknowledging_voters() == set()


def test_leader_non_follower_acknowledgement():
    """Mirrors LeaderStateTest#testNonFollowerAcknowledgement: an acknowledgement from a non-voter is refused."""
    state = new_leader_state(MockTime(), {LOCAL_ID}, 0)
    with pytest.raises(ValueError):
        state.add_acknowledgement_from(1)


def test_leader_update_high_watermark_quorum_size_one():
    """Mirrors LeaderStateTest#testUpdateHighWatermarkQuorumSizeOne."""
    voters = {LOCAL_ID}
    state = new_leader_state(MockTime(), voters, 15)
    assert state.high_watermark() is None
    assert state.update_local_state(15, voters) is False
    assert state.non_acknowledging_voters() == set()
    assert state.high_watermark() is None
    assert state.update_local_state(16, voters) is True
    assert state.high_watermark() == 16
    assert state.update_local_state(20, voters) is True
    assert state.high_watermark() == 20


def test_leader_non_monotonic_local_end_offset_update():
    """Mirrors LeaderStateTest#testNonMonotonicLocalEndOffsetUpdate."""
    voters = {LOCAL_ID}
    state = new_leader_state(MockTime(), voters, 15)
    assert state.high_watermark() is None
    assert state.update_local_state(16, voters) is True
    assert state.high_watermark() == 16
    with pytest.raises(IllegalStateException):
        state.update_local_state(15, voters)


def test_leader_last_caught_up_time_voters():
    """Mirrors LeaderStateTest#testLastCaughtUpTimeVoters: a voter is caught up when a fetch reaches the
    leader's end, or the leader's end as of its previous fetch (then at that previous fetch's time)."""
    time = MockTime()
    current_time = 1000
    fetch_time = 0
    voters = {LOCAL_ID, 1, 2}
    state = new_leader_state(time, voters, 10)
    assert state.high_watermark() is None
    assert state.update_local_state(10, voters) is False
    assert state.non_acknowledging_voters() == {1, 2}
    assert state.high_watermark() is None
    # Node 1 falls behind.
    assert state.update_local_state(11, voters) is False
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 10) is False
    assert voter_state(state, LOCAL_ID, current_time).last_caught_up_timestamp == current_time
    assert voter_state(state, 1, current_time).last_caught_up_timestamp == -1
    # Node 1 reaches the leader's end.
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 11) is True
    caught_up_time = fetch_time
    assert voter_state(state, LOCAL_ID, current_time).last_caught_up_timestamp == current_time
    assert voter_state(state, 1, current_time).last_caught_up_timestamp == caught_up_time
    # Node 1 falls behind again.
    assert state.update_local_state(100, voters) is False
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 50) is True
    assert voter_state(state, 1, current_time).last_caught_up_timestamp == caught_up_time
    # Node 1 reaches the leader's end as of its previous fetch: caught up at that fetch's time.
    previous_fetch_time = fetch_time
    assert state.update_local_state(200, voters) is False
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 100) is True
    assert voter_state(state, LOCAL_ID, current_time).last_caught_up_timestamp == current_time
    assert voter_state(state, 1, current_time).last_caught_up_timestamp == previous_fetch_time
    # Node 2 never caught up.
    assert voter_state(state, 2, current_time).last_caught_up_timestamp == -1
    assert state.update_local_state(300, voters) is False
    fetch_time += 1
    assert state.update_replica_state(2, fetch_time, 200) is True
    assert voter_state(state, 2, current_time).last_caught_up_timestamp == -1
    fetch_time += 1
    assert state.update_replica_state(2, fetch_time, 250) is True
    assert voter_state(state, 2, current_time).last_caught_up_timestamp == -1


def test_leader_last_caught_up_time_observer():
    """Mirrors LeaderStateTest#testLastCaughtUpTimeObserver: the same rules for an observer, which never moves the HW."""
    time = MockTime()
    current_time = 1000
    fetch_time = 0
    voters = {LOCAL_ID}
    state = new_leader_state(time, voters, 5)
    assert state.high_watermark() is None
    assert state.non_acknowledging_voters() == set()
    # Node 1 falls behind.
    assert state.update_local_state(11, voters) is True
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 10) is False
    assert voter_state(state, LOCAL_ID, current_time).last_caught_up_timestamp == current_time
    assert observer_state(state, 1, current_time).last_caught_up_timestamp == -1
    # Node 1 reaches the leader's end.
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 11) is False
    caught_up_time = fetch_time
    assert observer_state(state, 1, current_time).last_caught_up_timestamp == caught_up_time
    # Node 1 falls behind.
    assert state.update_local_state(100, voters) is True
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 50) is False
    assert observer_state(state, 1, current_time).last_caught_up_timestamp == caught_up_time
    # Node 1 passes the leader's end as of its previous fetch.
    previous_fetch_time = fetch_time
    assert state.update_local_state(200, voters) is True
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 102) is False
    assert voter_state(state, LOCAL_ID, current_time).last_caught_up_timestamp == current_time
    assert observer_state(state, 1, current_time).last_caught_up_timestamp == previous_fetch_time
    # Node 1 reaches the leader's end.
    fetch_time += 1
    assert state.update_replica_state(1, fetch_time, 200) is False
    assert observer_state(state, 1, current_time).last_caught_up_timestamp == fetch_time


def test_leader_idempotent_end_offset_update():
    """Mirrors LeaderStateTest#testIdempotentEndOffsetUpdate."""
    voters = {LOCAL_ID}
    state = new_leader_state(MockTime(), voters, 15)
    assert state.high_watermark() is None
    assert state.update_local_state(16, voters) is True
    assert state.update_local_state(16, voters) is False
    assert state.high_watermark() == 16


def test_leader_update_high_watermark_quorum_size_two():
    """Mirrors LeaderStateTest#testUpdateHighWatermarkQuorumSizeTwo: both voters needed; not before the epoch start."""
    voters = {LOCAL_ID, 1}
    state = new_leader_state(MockTime(), voters, 10)
    assert state.update_local_state(13, voters) is False
    assert state.non_acknowledging_voters() == {1}
    assert state.high_watermark() is None
    assert state.update_replica_state(1, 0, 10) is False
    assert state.non_acknowledging_voters() == set()
    assert state.high_watermark() is None
    assert state.update_replica_state(1, 0, 11) is True
    assert state.high_watermark() == 11
    assert state.update_replica_state(1, 0, 13) is True
    assert state.high_watermark() == 13


def test_leader_update_high_watermark_quorum_size_three():
    """Mirrors LeaderStateTest#testUpdateHighWatermarkQuorumSizeThree."""
    voters = {LOCAL_ID, 1, 2}
    state = new_leader_state(MockTime(), voters, 10)
    assert state.update_local_state(15, voters) is False
    assert state.non_acknowledging_voters() == {1, 2}
    assert state.high_watermark() is None
    assert state.update_replica_state(1, 0, 10) is False
    assert state.non_acknowledging_voters() == {2}
    assert state.high_watermark() is None
    assert state.update_replica_state(2, 0, 10) is False
    assert state.non_acknowledging_voters() == set()
    assert state.high_watermark() is None
    assert state.update_replica_state(2, 0, 15) is True
    assert state.high_watermark() == 15
    assert state.update_local_state(20, voters) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(1, 0, 20) is True
    assert state.high_watermark() == 20
    assert state.update_replica_state(2, 0, 20) is False
    assert state.high_watermark() == 20


def test_leader_high_watermark_does_increase_from_new_voter():
    """Mirrors LeaderStateTest#testHighWatermarkDoesIncreaseFromNewVoter: an observer's offset counts once it is a voter."""
    original = {LOCAL_ID, 1}
    state = new_leader_state(MockTime(), original, 5)
    assert state.update_local_state(15, original) is False
    assert state.update_replica_state(1, 0, 10) is True
    assert state.high_watermark() == 10
    # Node 2 is not a voter yet: its offset does not count.
    assert state.update_replica_state(2, 0, 15) is False
    assert state.high_watermark() == 10
    # With node 2 a voter, 15 is on a majority.
    with_node2 = {LOCAL_ID, 1, 2}
    assert state.update_local_state(15, with_node2) is True
    assert state.high_watermark() == 15
    assert state.update_local_state(16, with_node2) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 16) is True
    assert state.high_watermark() == 16


def test_leader_high_watermark_does_not_decrease_from_new_voter():
    """Mirrors LeaderStateTest#testHighWatermarkDoesNotDecreaseFromNewVoter: a larger voter set never lowers the HW."""
    original = {LOCAL_ID, 1, 2}
    state = new_leader_state(MockTime(), original, 5)
    assert state.update_local_state(15, original) is False
    assert state.update_replica_state(1, 0, 15) is True
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 10) is False
    assert state.update_replica_state(3, 0, 10) is False
    # Four voters: the majority holds only 10, but the HW stays at 15.
    with_node3 = {LOCAL_ID, 1, 2, 3}
    assert state.update_local_state(16, with_node3) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 13) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(3, 0, 13) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(1, 0, 16) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(3, 0, 16) is True
    assert state.high_watermark() == 16


def test_leader_update_high_watermark_removing_follower_from_voter_states():
    """Mirrors LeaderStateTest#testUpdateHighWatermarkRemovingFollowerFromVoterStates."""
    original = {LOCAL_ID, 1, 2}
    state = new_leader_state(MockTime(), original, 10)
    assert state.update_local_state(15, original) is False
    assert state.update_replica_state(1, 0, 15) is True
    assert state.update_replica_state(2, 0, 10) is False
    assert state.high_watermark() == 15
    # Without node 1 the majority holds 10; the HW stays.
    without_node1 = {LOCAL_ID, 2}
    assert state.update_local_state(17, without_node1) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 14) is False
    assert state.high_watermark() == 15
    assert state.update_local_state(18, without_node1) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(1, 0, 18) is False  # an observer now
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 15) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 16) is True
    assert state.high_watermark() == 16


def test_leader_update_high_watermark_quorum_removing_leader_from_voter_states():
    """Mirrors LeaderStateTest#testUpdateHighWatermarkQuorumRemovingLeaderFromVoterStates."""
    original = {LOCAL_ID, 1, 2}
    state = new_leader_state(MockTime(), original, 10)
    assert state.update_local_state(15, original) is False
    assert state.update_replica_state(1, 0, 15) is True
    assert state.update_replica_state(2, 0, 10) is False
    assert state.high_watermark() == 15
    # The leader leaves the voter set: the HW stays.
    without_leader = {1, 2}
    assert state.update_local_state(17, without_leader) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(1, 0, 16) is False
    assert state.high_watermark() == 15
    assert state.update_local_state(18, without_leader) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 14) is False
    assert state.high_watermark() == 15
    assert state.update_replica_state(2, 0, 15) is False
    assert state.high_watermark() == 15
    # Both remaining voters at 16.
    assert state.update_replica_state(2, 0, 16) is True
    assert state.high_watermark() == 16


def test_leader_non_monotonic_high_watermark_update():
    """Mirrors LeaderStateTest#testNonMonotonicHighWatermarkUpdate: a follower that lost its disk fetches from
    an earlier offset; its offset is taken, the HW is not rewound."""
    time = MockTime()
    voters = {LOCAL_ID, 1}
    state = new_leader_state(time, voters, 0)
    state.update_local_state(10, voters)
    state.update_replica_state(1, time.milliseconds(), 10)
    assert state.high_watermark() == 10
    assert state.update_replica_state(1, time.milliseconds(), 5) is False
    assert voter_state(state, 1, time.milliseconds()).log_end_offset == 5
    assert state.high_watermark() == 10


def set_up_leader_and_followers(time: MockTime, follower1: int, follower2: int, start: int, end: int) -> LeaderState:
    """LeaderStateTest#setUpLeaderAndFollowers."""
    voters = {LOCAL_ID, follower1, follower2}
    state = new_leader_state(time, voters, start)
    state.update_local_state(end, voters)
    assert state.high_watermark() is None
    state.update_replica_state(follower1, 0, start)
    state.update_replica_state(follower2, 0, end)
    return state


def test_leader_get_non_leader_followers_by_fetch_offset_descending():
    """Mirrors LeaderStateTest#testGetNonLeaderFollowersByFetchOffsetDescending."""
    state = set_up_leader_and_followers(MockTime(), 1, 2, 10, 15)
    assert state.non_leader_voters_by_descending_fetch_offset() == [2, 1]


def test_leader_describe_quorum_with_single_voter():
    """Mirrors LeaderStateTest#testDescribeQuorumWithSingleVoter: the leader is fetched and caught up "now"."""
    time = MockTime()
    voters = {LOCAL_ID}
    state = new_leader_state(time, voters, 10)
    assert state.high_watermark() is None
    data = state.describe_quorum(time.milliseconds())
    assert (data.error_code, data.high_watermark, data.leader_id, data.leader_epoch) == (0, -1, LOCAL_ID, LEADER_EPOCH)
    assert data.observers == ()
    assert data.current_voters == (DescribeQuorumReplicaState(LOCAL_ID, -1, time.milliseconds(), time.milliseconds()),)
    assert state.update_local_state(15, voters) is True
    assert state.high_watermark() == 15
    time.advance(500)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, data.leader_epoch) == (15, LOCAL_ID, LEADER_EPOCH)
    assert data.observers == ()
    assert data.current_voters == (DescribeQuorumReplicaState(LOCAL_ID, 15, time.milliseconds(), time.milliseconds()),)


def test_leader_describe_quorum_with_multiple_voters():
    """Mirrors LeaderStateTest#testDescribeQuorumWithMultipleVoters."""
    time = MockTime()
    voters = {LOCAL_ID, 1, 2}
    state = new_leader_state(time, voters, 10)
    assert state.update_local_state(15, voters) is False
    assert state.high_watermark() is None
    active_fetch_time = time.milliseconds()
    assert state.update_replica_state(1, active_fetch_time, 15) is True
    assert state.high_watermark() == 15
    time.advance(500)
    now = time.milliseconds()
    data = state.describe_quorum(now)
    assert (data.high_watermark, data.leader_id, data.leader_epoch, data.observers) == (15, LOCAL_ID, LEADER_EPOCH, ())
    assert data.current_voters == (
        DescribeQuorumReplicaState(LOCAL_ID, 15, now, now),
        DescribeQuorumReplicaState(1, 15, active_fetch_time, active_fetch_time),
        DescribeQuorumReplicaState(2, -1, -1, -1),
    )


def test_leader_describe_quorum_with_observers():
    """Mirrors LeaderStateTest#testDescribeQuorumWithObservers."""
    time = MockTime()
    voters = {LOCAL_ID}
    state = new_leader_state(time, voters, 10)
    assert state.update_local_state(11, voters) is True
    assert state.high_watermark() == 11
    time.advance(500)
    observer_fetch_time = time.milliseconds()
    assert state.update_replica_state(10, observer_fetch_time, 11) is False
    time.advance(500)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, data.leader_epoch) == (11, LOCAL_ID, LEADER_EPOCH)
    assert [r.replica_id for r in data.current_voters] == [LOCAL_ID]
    assert data.observers == (DescribeQuorumReplicaState(10, 11, observer_fetch_time, observer_fetch_time),)


def test_leader_describe_quorum_with_voters_and_observers():
    """Mirrors LeaderStateTest#testDescribeQuorumWithVotersAndObservers: a voter that leaves the set is
    described as an observer, and counts for the HW again once it is back."""
    time = MockTime()
    voters = {LOCAL_ID, 1, 2}
    state = new_leader_state(time, voters, 10)
    assert state.update_local_state(11, voters) is False
    assert state.update_replica_state(2, 0, 11) is True
    assert state.high_watermark() == 11
    # Node 1 becomes an observer.
    fetch_time = time.milliseconds()
    assert state.update_replica_state(1, fetch_time, 11) is False
    state.update_local_state(15, {LOCAL_ID, 2})
    time.advance(500)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, data.leader_epoch) == (11, LOCAL_ID, LEADER_EPOCH)
    assert [(r.replica_id, r.log_end_offset) for r in data.observers] == [(1, 11)]
    assert len(data.current_voters) == 2
    # Node 1 catches up as an observer: no HW change.
    time.advance(500)
    fetch_time = time.milliseconds()
    assert state.update_replica_state(1, fetch_time, 15) is False
    assert state.high_watermark() == 11
    # Node 1 is a voter again: the HW moves.
    assert state.update_local_state(20, voters) is True
    time.advance(500)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, data.leader_epoch, data.observers) == (15, LOCAL_ID, LEADER_EPOCH, ())
    assert len(data.current_voters) == 3
    node1 = next(r for r in data.current_voters if r.replica_id == 1)
    assert (node1.log_end_offset, node1.last_fetch_timestamp) == (15, fetch_time)


def test_leader_clear_inactive_observers_ignores_leader():
    """Mirrors LeaderStateTest#testClearInactiveObserversIgnoresLeader: silent observers expire after
    OBSERVER_SESSION_TIMEOUT_MS, but a leader outside the voter set is always described."""
    time = MockTime()
    voters = {LOCAL_ID, 1}
    state = new_leader_state(time, voters, 10)
    assert state.update_local_state(11, voters) is False
    assert state.update_replica_state(1, time.milliseconds(), 11) is True
    time.advance(500)
    assert state.update_replica_state(10, time.milliseconds(), 11) is False
    time.advance(500)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, len(data.current_voters)) == (11, LOCAL_ID, 2)
    assert [r.replica_id for r in data.observers] == [10]
    # The observer's session times out.
    time.advance(OBSERVER_SESSION_TIMEOUT_MS)
    data = state.describe_quorum(time.milliseconds())
    assert (data.high_watermark, data.leader_id, len(data.current_voters), data.observers) == (11, LOCAL_ID, 2, ())
    # The leader leaves the voter set and is still described, as an observer fetching "now".
    assert state.update_local_state(20, {1}) is False
    time.advance(OBSERVER_SESSION_TIMEOUT_MS)
    now = time.milliseconds()
    data = state.describe_quorum(now)
    assert (data.high_watermark, data.leader_id, len(data.current_voters)) == (11, LOCAL_ID, 1)
    assert [(r.replica_id, r.last_fetch_timestamp) for r in data.observers] == [(LOCAL_ID, now)]


def test_leader_check_quorum():
    """Mirrors LeaderStateTest#testCheckQuorum: five voters, two followers' fetches (a majority with the
    leader) restart the timer; one voter and an observer do not."""
    time = MockTime()
    state = new_leader_state(time, {LOCAL_ID, 1, 2, 3, 4}, 0)
    assert state.time_until_check_quorum_expires() == CHECK_QUORUM_TIMEOUT_MS
    time.advance(CHECK_QUORUM_TIMEOUT_MS // 2)
    assert state.time_until_check_quorum_expires() > 0
    state.update_check_quorum_for_following_voter(1)
    state.update_check_quorum_for_following_voter(2)
    assert state.time_until_check_quorum_expires() == CHECK_QUORUM_TIMEOUT_MS
    time.advance(CHECK_QUORUM_TIMEOUT_MS // 2)
    remaining = state.time_until_check_quorum_expires()
    assert remaining == CHECK_QUORUM_TIMEOUT_MS // 2
    state.update_check_quorum_for_following_voter(3)
    state.update_check_quorum_for_following_voter(5)  # an observer
    assert state.time_until_check_quorum_expires() == remaining
    time.advance(CHECK_QUORUM_TIMEOUT_MS // 2)
    assert state.time_until_check_quorum_expires() == 0


def test_leader_check_quorum_with_one_voter():
    """Mirrors LeaderStateTest#testCheckQuorumWithOneVoter: a lone voter's timer never expires."""
    time = MockTime()
    state = new_leader_state(time, {LOCAL_ID}, 0)
    assert state.time_until_check_quorum_expires() == NO_TIMEOUT
    time.advance(CHECK_QUORUM_TIMEOUT_MS)
    assert state.time_until_check_quorum_expires() == NO_TIMEOUT
    state.update_check_quorum_for_following_voter(1)
    assert state.time_until_check_quorum_expires() == NO_TIMEOUT


def test_leader_no_op_for_negative_remote_node_id():
    """Mirrors LeaderStateTest#testNoOpForNegativeRemoteNodeId: a consumer's fetch (id -1) is not an observer."""
    time = MockTime()
    state = new_leader_state(time, {LOCAL_ID}, 10)
    assert state.update_replica_state(-1, 0, 10) is False
    assert state.describe_quorum(time.milliseconds()).observers == ()


def test_leader_observer_state_expiration():
    """Mirrors LeaderStateTest#testObserverStateExpiration."""
    time = MockTime()
    state = new_leader_state(time, {LOCAL_ID}, 10)
    state.update_replica_state(10, time.milliseconds(), 10)
    assert [r.replica_id for r in state.describe_quorum(time.milliseconds()).observers] == [10]
    time.advance(OBSERVER_SESSION_TIMEOUT_MS)
    assert state.describe_quorum(time.milliseconds()).observers == ()


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_leader_grant_vote(is_log_up_to_date):
    """Mirrors LeaderStateTest#testGrantVote: a leader grants no vote in its epoch."""
    state = new_leader_state(MockTime(), {1, 2, 3}, 1)
    assert [state.can_grant_vote(c, is_log_up_to_date) for c in (1, 2, 3)] == [False, False, False]


def test_leader_update_check_quorum_from_itself_is_refused():
    """LeaderState#updateFetchedVoters (under LeaderStateTest's check-quorum tests): the leader's own id is
    a caller bug, and a leader's own id in updateReplicaState is an IllegalStateException."""
    state = new_leader_state(MockTime(), {LOCAL_ID, 1, 2}, 0)
    with pytest.raises(ValueError):
        state.update_check_quorum_for_following_voter(LOCAL_ID)
    with pytest.raises(IllegalStateException):
        state.update_replica_state(LOCAL_ID, 0, 5)


# ---------------------------------------------------------------------------------- QuorumStateTest

ELECTION_TIMEOUT_MS = 5000
FETCH_TIMEOUT_MS = 10000


class MockableRandom(random.Random):
    """org.apache.kafka.test.MockableRandom: ``mock_next_int`` fixes what the next draws return."""

    def __init__(self, seed: int = 1) -> None:
        super().__init__(seed)
        self._mocked: tuple[int | None, int] | None = None

    def mock_next_int(self, value: int, expected_bound: int | None = None) -> None:
        self._mocked = (expected_bound, value)

    def randrange(self, *args, **kwargs):  # type: ignore[override]
        if self._mocked is None:
            return super().randrange(*args, **kwargs)
        bound, value = self._mocked
        if bound is not None:
            assert args == (bound,)
        return value


class QuorumFixture:
    """QuorumStateTest's fields: a store, a clock and a random shared by the QuorumStates it builds."""

    def __init__(self) -> None:
        self.store = QuorumStateStore()
        self.time = MockTime()
        self.random = MockableRandom(1)

    def build(self, voters, local_id: int = LOCAL_ID) -> QuorumState:
        """QuorumStateTest#buildQuorumState."""
        config = QuorumConfig(election_timeout_ms=ELECTION_TIMEOUT_MS, fetch_timeout_ms=FETCH_TIMEOUT_MS)
        return QuorumState(local_id, voters, config, self.store, self.time, self.random)

    def initialize_empty(self, voters, local_id: int = LOCAL_ID) -> QuorumState:
        """QuorumStateTest#initializeEmptyState: epoch 0, no leader, stored first."""
        state = self.build(voters, local_id)
        self.store.write_election_state(ElectionState.with_unknown_leader(0, voters))
        state.initialize(0)
        return state

    def stored(self) -> ElectionState | None:
        return self.store.read_election_state()


@pytest.fixture
def fx() -> QuorumFixture:
    return QuorumFixture()


STANDALONE = frozenset({LOCAL_ID})
WITH_1 = frozenset({LOCAL_ID, 1})
WITH_1_2 = frozenset({LOCAL_ID, 1, 2})


def test_quorum_initialize_primordial_epoch(fx):
    """Mirrors QuorumStateTest#testInitializePrimordialEpoch: a lone voter's first candidacy is granted at once."""
    assert fx.stored() is None
    state = fx.initialize_empty(STANDALONE)
    assert state.is_unattached() and state.epoch == 0
    state.transition_to_candidate()
    candidate = state.candidate_state_or_throw()
    assert candidate.is_vote_granted() is True
    assert candidate.epoch == 1


def test_quorum_initialize_as_unattached(fx):
    """Mirrors QuorumStateTest#testInitializeAsUnattached."""
    fx.store.write_election_state(ElectionState.with_unknown_leader(5, WITH_1_2))
    fx.random.mock_next_int(2500)
    state = fx.build(WITH_1_2)
    state.initialize(0)
    unattached = state.unattached_state_or_throw()
    assert unattached.epoch == 5
    assert unattached.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_initialize_as_follower(fx):
    """Mirrors QuorumStateTest#testInitializeAsFollower."""
    fx.store.write_election_state(ElectionState.with_elected_leader(5, 1, WITH_1_2))
    state = fx.build(WITH_1_2)
    state.initialize(0)
    assert state.is_follower() and state.epoch == 5
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (5, 1)
    assert follower.remaining_fetch_ms() == FETCH_TIMEOUT_MS


def test_quorum_initialize_as_voted(fx):
    """Mirrors QuorumStateTest#testInitializeAsVoted."""
    fx.store.write_election_state(ElectionState.with_voted_candidate(5, 1, WITH_1_2))
    fx.random.mock_next_int(2500)
    state = fx.build(WITH_1_2)
    state.initialize(0)
    assert state.is_voted() and state.epoch == 5
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (5, 1)
    assert voted.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_initialize_as_resigned_candidate(fx):
    """Mirrors QuorumStateTest#testInitializeAsResignedCandidate: our own stored vote → Candidate again, only
    our vote granted."""
    election = ElectionState.with_voted_candidate(5, LOCAL_ID, WITH_1_2)
    fx.store.write_election_state(election)
    fx.random.mock_next_int(2500)
    state = fx.build(WITH_1_2)
    state.initialize(0)
    assert state.is_candidate() and state.epoch == 5
    candidate = state.candidate_state_or_throw()
    assert candidate.epoch == 5
    assert candidate.election() == election
    assert candidate.unrecorded_voters() == {1, 2}
    assert candidate.granting_voters() == {LOCAL_ID}
    assert candidate.rejecting_voters() == set()
    assert candidate.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_initialize_as_resigned_leader(fx):
    """Mirrors QuorumStateTest#testInitializeAsResignedLeader: a restarted leader never leads its epoch again."""
    election = ElectionState.with_elected_leader(5, LOCAL_ID, WITH_1_2)
    fx.store.write_election_state(election)
    fx.random.mock_next_int(2500)
    state = fx.build(WITH_1_2)
    state.initialize(0)
    assert state.is_leader() is False and state.epoch == 5
    resigned = state.resigned_state_or_throw()
    assert resigned.epoch == 5
    assert resigned.election() == election
    assert resigned.unacked_voters == {1, 2}
    assert resigned.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_candidate_to_candidate(fx):
    """Mirrors QuorumStateTest#testCandidateToCandidate: the backoff, then a new epoch with fresh votes and timer."""
    assert fx.stored() is None
    state = fx.initialize_empty(WITH_1_2)
    state.transition_to_candidate()
    assert state.is_candidate() and state.epoch == 1
    candidate1 = state.candidate_state_or_throw()
    candidate1.record_rejected_vote(2)
    candidate1.start_backing_off(500)
    assert candidate1.is_backing_off() and not candidate1.is_backoff_complete()
    fx.time.advance(499)
    assert candidate1.is_backing_off() and not candidate1.is_backoff_complete()
    fx.time.advance(1)
    assert candidate1.is_backing_off() and candidate1.is_backoff_complete()
    fx.random.mock_next_int(2500)
    state.transition_to_candidate()
    candidate2 = state.candidate_state_or_throw()
    assert state.epoch == 2
    assert candidate2.granting_voters() == {LOCAL_ID}
    assert candidate2.rejecting_voters() == set()
    assert candidate2.retries == 2
    assert candidate2.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_candidate_to_resigned(fx):
    """Mirrors QuorumStateTest#testCandidateToResigned: only a leader resigns."""
    state = fx.initialize_empty(WITH_1_2)
    state.transition_to_candidate()
    assert state.is_candidate() and state.epoch == 1
    with pytest.raises(IllegalStateException):
        state.transition_to_resigned([LOCAL_ID])
    assert state.is_candidate()


def test_quorum_candidate_to_leader(fx):
    """Mirrors QuorumStateTest#testCandidateToLeader: a new leader has no HW yet."""
    state = fx.initialize_empty(STANDALONE)
    state.transition_to_candidate()
    assert state.is_candidate() and state.epoch == 1
    state.transition_to_leader(0)
    leader = state.leader_state_or_throw()
    assert state.is_leader() and leader.epoch == 1
    assert leader.high_watermark() is None


def test_quorum_candidate_to_leader_without_granted_vote(fx):
    """Mirrors QuorumStateTest#testCandidateToLeaderWithoutGrantedVote."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    assert state.candidate_state_or_throw().is_vote_granted() is False
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)
    state.candidate_state_or_throw().record_granted_vote(1)
    assert state.candidate_state_or_throw().is_vote_granted() is True
    state.transition_to_leader(0)
    assert state.is_leader()


def test_quorum_candidate_to_follower(fx):
    """Mirrors QuorumStateTest#testCandidateToFollower."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_follower(5, 1)
    assert (state.epoch, state.leader_id()) == (5, 1)
    assert fx.stored() == ElectionState.with_elected_leader(5, 1, WITH_1)


def test_quorum_candidate_to_unattached(fx):
    """Mirrors QuorumStateTest#testCandidateToUnattached."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_unattached(5)
    assert (state.epoch, state.leader_id()) == (5, -1)
    assert fx.stored() == ElectionState.with_unknown_leader(5, WITH_1)


def test_quorum_candidate_to_voted(fx):
    """Mirrors QuorumStateTest#testCandidateToVoted."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_voted(5, 1)
    assert (state.epoch, state.leader_id()) == (5, -1)
    assert state.voted_state_or_throw().voted_id == 1
    assert fx.stored() == ElectionState.with_voted_candidate(5, 1, WITH_1)


def test_quorum_candidate_to_any_state_lower_epoch(fx):
    """Mirrors QuorumStateTest#testCandidateToAnyStateLowerEpoch: nothing goes back to an older epoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_candidate()
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(4)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(4, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(4, 1)
    assert state.epoch == 6
    assert fx.stored() == ElectionState.with_voted_candidate(6, LOCAL_ID, WITH_1)


def test_quorum_leader_to_leader(fx):
    """Mirrors QuorumStateTest#testLeaderToLeader."""
    state = fx.initialize_empty(STANDALONE)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_leader(0)
    assert state.is_leader() and state.epoch == 1
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)
    assert state.is_leader() and state.epoch == 1


def test_quorum_leader_to_resigned(fx):
    """Mirrors QuorumStateTest#testLeaderToResigned."""
    state = fx.initialize_empty(STANDALONE)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_leader(0)
    assert state.is_leader() and state.epoch == 1
    state.transition_to_resigned([LOCAL_ID])
    resigned = state.resigned_state_or_throw()
    assert resigned.election() == ElectionState.with_elected_leader(1, LOCAL_ID, STANDALONE)
    assert resigned.epoch == 1
    assert resigned.unacked_voters == set()


def test_quorum_leader_to_candidate(fx):
    """Mirrors QuorumStateTest#testLeaderToCandidate."""
    state = fx.initialize_empty(STANDALONE)
    state.initialize(0)
    state.transition_to_candidate()
    state.transition_to_leader(0)
    assert state.is_leader() and state.epoch == 1
    with pytest.raises(IllegalStateException):
        state.transition_to_candidate()
    assert state.is_leader() and state.epoch == 1


def test_quorum_leader_to_follower(fx):
    """Mirrors QuorumStateTest#testLeaderToFollower."""
    state = fx.initialize_empty(WITH_1)
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    state.transition_to_follower(5, 1)
    assert (state.epoch, state.leader_id()) == (5, 1)
    assert fx.stored() == ElectionState.with_elected_leader(5, 1, WITH_1)


def test_quorum_leader_to_unattached(fx):
    """Mirrors QuorumStateTest#testLeaderToUnattached."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    state.transition_to_unattached(5)
    assert (state.epoch, state.leader_id()) == (5, -1)
    assert fx.stored() == ElectionState.with_unknown_leader(5, WITH_1)


def test_quorum_leader_to_voted(fx):
    """Mirrors QuorumStateTest#testLeaderToVoted."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    state.transition_to_voted(5, 1)
    assert (state.epoch, state.leader_id()) == (5, -1)
    assert state.voted_state_or_throw().voted_id == 1
    assert fx.stored() == ElectionState.with_voted_candidate(5, 1, WITH_1)


def test_quorum_leader_to_any_state_lower_epoch(fx):
    """Mirrors QuorumStateTest#testLeaderToAnyStateLowerEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_candidate()
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(4)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(4, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(4, 1)
    assert state.epoch == 6
    assert fx.stored() == ElectionState.with_elected_leader(6, LOCAL_ID, WITH_1)


def test_quorum_cannot_follow_or_vote_for_self(fx):
    """Mirrors QuorumStateTest#testCannotFollowOrVoteForSelf."""
    assert fx.stored() is None
    state = fx.initialize_empty(STANDALONE)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(0, LOCAL_ID)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(0, LOCAL_ID)


def test_quorum_unattached_to_leader_or_resigned(fx):
    """Mirrors QuorumStateTest#testUnattachedToLeaderOrResigned."""
    fx.store.write_election_state(ElectionState.with_voted_candidate(5, 1, WITH_1))
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    assert state.is_unattached()
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)
    with pytest.raises(IllegalStateException):
        state.transition_to_resigned([])


def test_quorum_unattached_to_voted_same_epoch(fx):
    """Mirrors QuorumStateTest#testUnattachedToVotedSameEpoch: voting restarts the election timer."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_voted(5, 1)
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (5, 1)
    assert fx.stored() == ElectionState.with_voted_candidate(5, 1, WITH_1)
    assert voted.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_unattached_to_voted_higher_epoch(fx):
    """Mirrors QuorumStateTest#testUnattachedToVotedHigherEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_voted(8, 1)
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (8, 1)
    assert fx.stored() == ElectionState.with_voted_candidate(8, 1, WITH_1)


def test_quorum_unattached_to_candidate(fx):
    """Mirrors QuorumStateTest#testUnattachedToCandidate."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_candidate()
    candidate = state.candidate_state_or_throw()
    assert candidate.epoch == 6
    assert candidate.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_unattached_to_unattached(fx):
    """Mirrors QuorumStateTest#testUnattachedToUnattached: a higher epoch keeps the running election timer."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    remaining = state.unattached_state_or_throw().remaining_election_ms()
    fx.time.advance(1000)
    state.transition_to_unattached(6)
    unattached = state.unattached_state_or_throw()
    assert unattached.epoch == 6
    assert unattached.remaining_election_ms() == remaining - 1000


def test_quorum_unattached_to_follower_same_epoch(fx):
    """Mirrors QuorumStateTest#testUnattachedToFollowerSameEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_follower(5, 1)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (5, 1)
    assert follower.remaining_fetch_ms() == FETCH_TIMEOUT_MS


def test_quorum_unattached_to_follower_higher_epoch(fx):
    """Mirrors QuorumStateTest#testUnattachedToFollowerHigherEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_follower(8, 1)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (8, 1)
    assert follower.remaining_fetch_ms() == FETCH_TIMEOUT_MS


def test_quorum_unattached_to_any_state_lower_epoch(fx):
    """Mirrors QuorumStateTest#testUnattachedToAnyStateLowerEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_unattached(5)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(4)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(4, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(4, 1)
    assert state.epoch == 5
    assert fx.stored() == ElectionState.with_unknown_leader(5, WITH_1)


def test_quorum_voted_to_invalid_leader_or_resigned(fx):
    """Mirrors QuorumStateTest#testVotedToInvalidLeaderOrResigned."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)
    with pytest.raises(IllegalStateException):
        state.transition_to_resigned([])


def test_quorum_voted_to_candidate(fx):
    """Mirrors QuorumStateTest#testVotedToCandidate."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_candidate()
    candidate = state.candidate_state_or_throw()
    assert candidate.epoch == 6
    assert candidate.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_voted_to_voted_same_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToVotedSameEpoch: one vote per epoch, even for the same candidate."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_unattached(5)
    state.transition_to_voted(8, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(8, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(8, 2)


def test_quorum_voted_to_follower_same_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToFollowerSameEpoch: the epoch's leader need not be whom we voted for."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    state.transition_to_follower(5, 2)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (5, 2)
    assert fx.stored() == ElectionState.with_elected_leader(5, 2, WITH_1_2)


def test_quorum_voted_to_follower_higher_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToFollowerHigherEpoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    state.transition_to_follower(8, 2)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (8, 2)
    assert fx.stored() == ElectionState.with_elected_leader(8, 2, WITH_1_2)


def test_quorum_voted_to_unattached_same_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToUnattachedSameEpoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(5)


def test_quorum_voted_to_unattached_higher_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToUnattachedHigherEpoch: the election timer keeps running."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    remaining = state.voted_state_or_throw().remaining_election_ms()
    fx.time.advance(1000)
    state.transition_to_unattached(6)
    unattached = state.unattached_state_or_throw()
    assert unattached.epoch == 6
    assert unattached.remaining_election_ms() == remaining - 1000


def test_quorum_voted_to_any_state_lower_epoch(fx):
    """Mirrors QuorumStateTest#testVotedToAnyStateLowerEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_voted(5, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(4)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(4, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(4, 1)
    assert state.epoch == 5
    assert fx.stored() == ElectionState.with_voted_candidate(5, 1, WITH_1)


def test_quorum_follower_to_follower_same_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToFollowerSameEpoch: one leader per epoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(8, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(8, 2)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (8, 2)
    assert fx.stored() == ElectionState.with_elected_leader(8, 2, WITH_1_2)


def test_quorum_follower_to_follower_higher_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToFollowerHigherEpoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    state.transition_to_follower(9, 1)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (9, 1)
    assert fx.stored() == ElectionState.with_elected_leader(9, 1, WITH_1_2)


def test_quorum_follower_to_leader_or_resigned(fx):
    """Mirrors QuorumStateTest#testFollowerToLeaderOrResigned."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)
    with pytest.raises(IllegalStateException):
        state.transition_to_resigned([])


def test_quorum_follower_to_candidate(fx):
    """Mirrors QuorumStateTest#testFollowerToCandidate."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_candidate()
    candidate = state.candidate_state_or_throw()
    assert candidate.epoch == 9
    assert candidate.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_follower_to_unattached_same_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToUnattachedSameEpoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(8)


def test_quorum_follower_to_unattached_higher_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToUnattachedHigherEpoch: a fresh election timer (no timer ran as follower)."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_unattached(9)
    unattached = state.unattached_state_or_throw()
    assert unattached.epoch == 9
    assert unattached.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_follower_to_voted_same_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToVotedSameEpoch: a follower does not vote in its leader's epoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    for candidate in (1, LOCAL_ID, 2):
        with pytest.raises(IllegalStateException):
            state.transition_to_voted(8, candidate)


def test_quorum_follower_to_voted_higher_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToVotedHigherEpoch."""
    state = fx.initialize_empty(WITH_1_2)
    state.initialize(0)
    state.transition_to_follower(8, 2)
    fx.random.mock_next_int(2500, ELECTION_TIMEOUT_MS)
    state.transition_to_voted(9, 1)
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (9, 1)
    assert voted.remaining_election_ms() == ELECTION_TIMEOUT_MS + 2500


def test_quorum_follower_to_any_state_lower_epoch(fx):
    """Mirrors QuorumStateTest#testFollowerToAnyStateLowerEpoch."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_follower(5, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(4)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(4, 1)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(4, 1)
    assert state.epoch == 5
    assert fx.stored() == ElectionState.with_elected_leader(5, 1, WITH_1)


def test_quorum_can_become_follower_of_non_voter(fx):
    """Mirrors QuorumStateTest#testCanBecomeFollowerOfNonVoter: Kafka 3.8 lets a voter vote for, and follow,
    a replica outside its voter set (kafka_ref refused the vote before)."""
    state = fx.initialize_empty(WITH_1)
    state.initialize(0)
    state.transition_to_voted(4, 2)
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (4, 2)
    state.transition_to_follower(4, 2)
    assert state.leader_and_epoch() == (2, 4)


def test_quorum_observer_cannot_become_candidate_or_leader(fx):
    """Mirrors QuorumStateTest#testObserverCannotBecomeCandidateOrLeader."""
    state = fx.initialize_empty(frozenset({1}))
    state.initialize(0)
    assert state.is_observer()
    with pytest.raises(IllegalStateException):
        state.transition_to_candidate()
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)


def test_quorum_observer_with_id_can_vote(fx):
    """Mirrors QuorumStateTest#testObserverWithIdCanVote (kafka_ref refused an observer's vote before)."""
    state = fx.initialize_empty(frozenset({1}))
    state.initialize(0)
    assert state.is_observer()
    state.transition_to_voted(5, 1)
    voted = state.voted_state_or_throw()
    assert (voted.epoch, voted.voted_id) == (5, 1)


def test_quorum_observer_with_id_finds_its_vote_after_a_restart(fx):
    """QuorumState#initialize (after QuorumStateTest#testObserverWithIdCanVote and #testInitializeAsVoted):
    Kafka 3.8 refuses a stored vote only without a local id, so an observer that voted restarts Voted."""
    state = fx.initialize_empty(frozenset({1}))
    state.transition_to_voted(5, 1)
    restarted = fx.build(frozenset({1}))
    restarted.initialize(0)
    assert restarted.is_observer() and restarted.is_voted()
    assert (restarted.epoch, restarted.voted_state_or_throw().voted_id) == (5, 1)


def test_quorum_observer_follower_to_unattached(fx):
    """Mirrors QuorumStateTest#testObserverFollowerToUnattached: an observer waits in Unattached without a timer."""
    state = fx.initialize_empty(frozenset({1, 2}))
    state.initialize(0)
    assert state.is_observer()
    state.transition_to_follower(2, 1)
    state.transition_to_unattached(3)
    unattached = state.unattached_state_or_throw()
    assert unattached.epoch == 3
    assert unattached.election_timeout_ms == NO_TIMEOUT


def test_quorum_observer_unattached_to_follower(fx):
    """Mirrors QuorumStateTest#testObserverUnattachedToFollower."""
    state = fx.initialize_empty(frozenset({1, 2}))
    state.initialize(0)
    assert state.is_observer()
    state.transition_to_unattached(2)
    state.transition_to_follower(3, 1)
    follower = state.follower_state_or_throw()
    assert (follower.epoch, follower.leader_id) == (3, 1)
    assert follower.remaining_fetch_ms() == FETCH_TIMEOUT_MS


def test_quorum_initialize_with_corrupted_store(fx):
    """Mirrors QuorumStateTest#testInitializeWithCorruptedStore (whose mocked store is never used: the state
    is built on the empty store): the log's epoch 2 wins, Unattached with no leader."""
    state = fx.build(STANDALONE)
    state.initialize(2)
    assert state.epoch == 2
    assert state.is_unattached() and state.has_leader() is False


def test_quorum_has_remote_leader(fx):
    """Mirrors QuorumStateTest#testHasRemoteLeader: only a Follower has a leader that is not this node."""
    state = fx.initialize_empty(WITH_1)
    assert state.has_remote_leader() is False
    state.transition_to_candidate()
    assert state.has_remote_leader() is False
    state.candidate_state_or_throw().record_granted_vote(1)
    state.transition_to_leader(0)
    assert state.has_remote_leader() is False
    state.transition_to_unattached(state.epoch + 1)
    assert state.has_remote_leader() is False
    state.transition_to_voted(state.epoch + 1, 1)
    assert state.has_remote_leader() is False
    state.transition_to_follower(state.epoch + 1, 1)
    assert state.has_remote_leader() is True


def test_quorum_high_watermark_retained(fx):
    """Mirrors QuorumStateTest#testHighWatermarkRetained: the HW goes along through every transition but to
    Leader, which starts without one."""
    state = fx.initialize_empty(WITH_1)
    state.transition_to_follower(5, 1)
    state.follower_state_or_throw().update_high_watermark(10)
    assert state.high_watermark() == 10
    state.transition_to_unattached(6)
    assert state.high_watermark() == 10
    state.transition_to_voted(7, 1)
    assert state.high_watermark() == 10
    state.transition_to_candidate()
    assert state.high_watermark() == 10
    candidate = state.candidate_state_or_throw()
    candidate.record_granted_vote(1)
    assert candidate.is_vote_granted() is True
    state.transition_to_leader(10)
    assert state.high_watermark() is None


# ---------------------------------------------------------------------------------- CandidateStateTest

CANDIDATE_EPOCH = 5


def new_candidate_state(time: MockTime, voters) -> CandidateState:
    """CandidateStateTest#newCandidateState: local id 0, epoch 5, no retries yet, election timeout 5000 ms."""
    return CandidateState(time, LOCAL_ID, CANDIDATE_EPOCH, frozenset(voters), None, 0, ELECTION_TIMEOUT_MS)


def test_candidate_single_node_quorum():
    """Mirrors CandidateStateTest#testSingleNodeQuorum."""
    state = new_candidate_state(MockTime(), {LOCAL_ID})
    assert (state.is_vote_granted(), state.is_vote_rejected(), state.unrecorded_voters()) == (True, False, set())


def test_candidate_two_node_quorum_vote_rejected():
    """Mirrors CandidateStateTest#testTwoNodeQuorumVoteRejected."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert (state.is_vote_granted(), state.is_vote_rejected(), state.unrecorded_voters()) == (False, False, {1})
    assert state.record_rejected_vote(1) is True
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (False, True)


def test_candidate_two_node_quorum_vote_granted():
    """Mirrors CandidateStateTest#testTwoNodeQuorumVoteGranted."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert (state.is_vote_granted(), state.is_vote_rejected(), state.unrecorded_voters()) == (False, False, {1})
    assert state.record_granted_vote(1) is True
    assert state.unrecorded_voters() == set()
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (True, False)


def test_candidate_three_node_quorum_vote_granted():
    """Mirrors CandidateStateTest#testThreeNodeQuorumVoteGranted: one grant makes the majority; a later
    rejection does not undo it."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1, 2})
    assert (state.is_vote_granted(), state.is_vote_rejected(), state.unrecorded_voters()) == (False, False, {1, 2})
    assert state.record_granted_vote(1) is True
    assert state.unrecorded_voters() == {2}
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (True, False)
    assert state.record_rejected_vote(2) is True
    assert state.unrecorded_voters() == set()
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (True, False)


def test_candidate_three_node_quorum_vote_rejected():
    """Mirrors CandidateStateTest#testThreeNodeQuorumVoteRejected: lost only once the majority is out of reach."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1, 2})
    assert (state.is_vote_granted(), state.is_vote_rejected(), state.unrecorded_voters()) == (False, False, {1, 2})
    assert state.record_rejected_vote(1) is True
    assert state.unrecorded_voters() == {2}
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (False, False)
    assert state.record_rejected_vote(2) is True
    assert state.unrecorded_voters() == set()
    assert (state.is_vote_granted(), state.is_vote_rejected()) == (False, True)


def test_candidate_cannot_reject_vote_from_local_id():
    """Mirrors CandidateStateTest#testCannotRejectVoteFromLocalId."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    with pytest.raises(ValueError):
        state.record_rejected_vote(LOCAL_ID)


def test_candidate_cannot_change_vote_granted_to_rejected():
    """Mirrors CandidateStateTest#testCannotChangeVoteGrantedToRejected."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert state.record_granted_vote(1) is True
    with pytest.raises(ValueError):
        state.record_rejected_vote(1)
    assert state.is_vote_granted() is True


def test_candidate_cannot_change_vote_rejected_to_granted():
    """Mirrors CandidateStateTest#testCannotChangeVoteRejectedToGranted."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert state.record_rejected_vote(1) is True
    with pytest.raises(ValueError):
        state.record_granted_vote(1)
    assert state.is_vote_rejected() is True


def test_candidate_cannot_grant_or_reject_non_voters():
    """Mirrors CandidateStateTest#testCannotGrantOrRejectNonVoters."""
    state = new_candidate_state(MockTime(), {LOCAL_ID})
    with pytest.raises(ValueError):
        state.record_granted_vote(1)
    with pytest.raises(ValueError):
        state.record_rejected_vote(1)


def test_candidate_idempotent_grant():
    """Mirrors CandidateStateTest#testIdempotentGrant."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert state.record_granted_vote(1) is True
    assert state.record_granted_vote(1) is False


def test_candidate_idempotent_reject():
    """Mirrors CandidateStateTest#testIdempotentReject."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1})
    assert state.record_rejected_vote(1) is True
    assert state.record_rejected_vote(1) is False


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_candidate_grant_vote(is_log_up_to_date):
    """Mirrors CandidateStateTest#testGrantVote: a candidate votes for nobody else (and not again for itself)."""
    state = new_candidate_state(MockTime(), {LOCAL_ID, 1, 2, 3})
    assert [state.can_grant_vote(c, is_log_up_to_date) for c in (0, 1, 2, 3)] == [False] * 4


def test_candidate_election_state():
    """Mirrors CandidateStateTest#testElectionState."""
    voters = frozenset({LOCAL_ID, 1, 2, 3})
    state = new_candidate_state(MockTime(), voters)
    assert state.election() == ElectionState.with_voted_candidate(CANDIDATE_EPOCH, LOCAL_ID, voters)


def test_candidate_invalid_voter_set():
    """Mirrors CandidateStateTest#testInvalidVoterSet: the candidate must be one of the voters."""
    with pytest.raises(ValueError):
        new_candidate_state(MockTime(), {1, 2, 3})


def test_candidate_remaining_backoff_only_while_backing_off():
    """CandidateState#remainingBackoffMs (under CandidateStateTest/QuorumStateTest#testCandidateToCandidate):
    asking before the backoff started is an IllegalStateException."""
    time = MockTime()
    state = new_candidate_state(time, {LOCAL_ID, 1})
    with pytest.raises(IllegalStateException):
        state.remaining_backoff_ms()
    state.start_backing_off(300)
    time.advance(100)
    assert state.remaining_backoff_ms() == 200


# ---------------------------------------------------------------------------------- FollowerStateTest

FOLLOWER_FETCH_TIMEOUT_MS = 15000
FOLLOWER_LEADER = 3


def new_follower_state(time: MockTime, voters, high_watermark=None) -> FollowerState:
    """FollowerStateTest#newFollowerState: epoch 5, leader 3, fetch timeout 15000 ms."""
    return FollowerState(time, 5, FOLLOWER_LEADER, frozenset(voters), high_watermark, FOLLOWER_FETCH_TIMEOUT_MS)


def test_follower_fetch_timeout_expiration():
    """Mirrors FollowerStateTest#testFetchTimeoutExpiration."""
    time = MockTime()
    state = new_follower_state(time, {1, 2, 3})
    assert state.has_fetch_timeout_expired() is False
    assert state.remaining_fetch_ms() == FOLLOWER_FETCH_TIMEOUT_MS
    time.advance(5000)
    assert state.has_fetch_timeout_expired() is False
    assert state.remaining_fetch_ms() == FOLLOWER_FETCH_TIMEOUT_MS - 5000
    time.advance(10000)
    assert state.has_fetch_timeout_expired() is True
    assert state.remaining_fetch_ms() == 0


def test_follower_monotonic_high_watermark():
    """Mirrors FollowerStateTest#testMonotonicHighWatermark: never unknown again, never backwards."""
    state = new_follower_state(MockTime(), {1, 2, 3})
    assert state.update_high_watermark(15) is True
    with pytest.raises(ValueError):
        state.update_high_watermark(None)
    with pytest.raises(ValueError):
        state.update_high_watermark(14)
    assert state.update_high_watermark(15) is False
    assert state.high_watermark() == 15


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_follower_grant_vote(is_log_up_to_date):
    """Mirrors FollowerStateTest#testGrantVote: a follower grants no vote in its leader's epoch."""
    state = new_follower_state(MockTime(), {1, 2, 3})
    assert [state.can_grant_vote(c, is_log_up_to_date) for c in (1, 2, 3)] == [False, False, False]


def test_follower_leader_node():
    """Mirrors FollowerStateTest#testLeaderNode (kafka_ref keeps the leader's id, not its Node)."""
    state = new_follower_state(MockTime(), {0, 1, 2})
    assert state.leader_id == FOLLOWER_LEADER
    assert state.election() == ElectionState.with_elected_leader(5, FOLLOWER_LEADER, {0, 1, 2})


# ---------------------------------------------------------------------------------- VotedStateTest

VOTED_ID = 1
VOTED_TIMEOUT_MS = 10000


def test_voted_election_timeout():
    """Mirrors VotedStateTest#testElectionTimeout."""
    time = MockTime()
    state = VotedState(time, 5, VOTED_ID, frozenset(), None, VOTED_TIMEOUT_MS)
    assert (state.epoch, state.voted_id) == (5, VOTED_ID)
    assert state.election() == ElectionState.with_voted_candidate(5, VOTED_ID, set())
    assert state.remaining_election_ms() == VOTED_TIMEOUT_MS
    assert state.has_election_timeout_expired() is False
    time.advance(5000)
    assert state.remaining_election_ms() == VOTED_TIMEOUT_MS - 5000
    assert state.has_election_timeout_expired() is False
    time.advance(5000)
    assert state.remaining_election_ms() == 0
    assert state.has_election_timeout_expired() is True


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_voted_can_grant_vote_without_directory_id(is_log_up_to_date):
    """Mirrors VotedStateTest#testCanGrantVoteWithoutDirectoryId: only the candidate voted for, log or not."""
    state = VotedState(MockTime(), 5, VOTED_ID, frozenset(), None, VOTED_TIMEOUT_MS)
    assert state.can_grant_vote(VOTED_ID, is_log_up_to_date) is True
    assert state.can_grant_vote(VOTED_ID + 1, is_log_up_to_date) is False


# ---------------------------------------------------------------------------------- UnattachedStateTest

def test_unattached_election_timeout():
    """Mirrors UnattachedStateTest#testElectionTimeout."""
    time = MockTime()
    voters = frozenset({1, 2, 3})
    state = UnattachedState(time, 5, voters, None, 10000)
    assert state.epoch == 5
    assert state.election() == ElectionState.with_unknown_leader(5, voters)
    assert state.remaining_election_ms() == 10000
    assert state.has_election_timeout_expired() is False
    time.advance(5000)
    assert state.remaining_election_ms() == 5000
    assert state.has_election_timeout_expired() is False
    time.advance(5000)
    assert state.remaining_election_ms() == 0
    assert state.has_election_timeout_expired() is True


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_unattached_grant_vote(is_log_up_to_date):
    """Mirrors UnattachedStateTest#testGrantVote: no vote cast yet, so the log check decides."""
    state = UnattachedState(MockTime(), 5, frozenset({1, 2, 3}), None, 10000)
    assert [state.can_grant_vote(c, is_log_up_to_date) for c in (1, 2, 3)] == [is_log_up_to_date] * 3


# ---------------------------------------------------------------------------------- ResignedStateTest

def new_resigned_state(time: MockTime, voters) -> ResignedState:
    """ResignedStateTest#newResignedState: local id 0, epoch 5, election timeout 5000 ms, no successors."""
    return ResignedState(time, LOCAL_ID, 5, frozenset(voters), ELECTION_TIMEOUT_MS, [])


def test_resigned_state():
    """Mirrors ResignedStateTest#testResignedState."""
    time = MockTime()
    voters = frozenset({LOCAL_ID, 1})
    state = new_resigned_state(time, voters)
    assert state.election() == ElectionState.with_elected_leader(5, LOCAL_ID, voters)
    assert state.epoch == 5
    assert state.unacked_voters == {1}
    state.acknowledge_resignation(1)
    assert state.unacked_voters == set()
    assert state.remaining_election_ms() == ELECTION_TIMEOUT_MS
    assert state.has_election_timeout_expired() is False
    time.advance(ELECTION_TIMEOUT_MS // 2)
    assert state.remaining_election_ms() == ELECTION_TIMEOUT_MS // 2
    assert state.has_election_timeout_expired() is False
    time.advance(ELECTION_TIMEOUT_MS // 2)
    assert state.remaining_election_ms() == 0
    assert state.has_election_timeout_expired() is True


@pytest.mark.parametrize("is_log_up_to_date", [True, False])
def test_resigned_grant_vote(is_log_up_to_date):
    """Mirrors ResignedStateTest#testGrantVote: a resigned leader grants no vote in its epoch."""
    state = new_resigned_state(MockTime(), {1, 2, 3})
    assert [state.can_grant_vote(c, is_log_up_to_date) for c in (1, 2, 3)] == [False, False, False]


def test_resigned_negative_scenario_acknowledge_resignation():
    """Mirrors ResignedStateTest#testNegativeScenarioAcknowledgeResignation: a non-voter cannot acknowledge."""
    voters = frozenset({0, 1, 2, 3, 4, 5})
    state = new_resigned_state(MockTime(), voters)
    assert state.election() == ElectionState.with_elected_leader(5, 0, voters)
    assert state.epoch == 5
    with pytest.raises(ValueError):
        state.acknowledge_resignation(10)


# ---------------------------------------------------------------------------------- ElectionStateTest

def test_election_voted_candidate_without_voted_id():
    """Mirrors ElectionStateTest#testVotedCandidateWithoutVotedId."""
    assert ElectionState.with_unknown_leader(5, set()).is_voted_candidate(1) is False


def test_election_voted_candidate_without_voted_directory_id():
    """Mirrors ElectionStateTest#testVotedCandidateWithoutVotedDirectoryId (the id half: kafka_ref has no
    directory ids, so the voted id alone decides)."""
    election = ElectionState.with_voted_candidate(5, 1, set())
    assert election.is_voted_candidate(1) is True
    assert election.is_voted_candidate(2) is False


def test_election_state_rejects_negative_ids():
    """ElectionState#withElectedLeader, #withVotedCandidate, #isLeader and #isVotedCandidate (under
    ElectionStateTest): a negative id is an IllegalArgumentException."""
    with pytest.raises(ValueError):
        ElectionState.with_elected_leader(5, -1, set())
    with pytest.raises(ValueError):
        ElectionState.with_voted_candidate(5, -1, set())
    election = ElectionState.with_elected_leader(5, 1, set())
    assert (election.is_leader(1), election.is_leader(2)) == (True, False)
    with pytest.raises(ValueError):
        election.is_leader(-1)
    with pytest.raises(ValueError):
        election.is_voted_candidate(-1)


# ---------------------------------------------------------------------------------- RequestManagerTest

RM_REQUEST_TIMEOUT_MS = 30000
RM_RETRY_BACKOFF_MS = 100


def new_request_manager(time: MockTime, bootstrap_servers: list[int] | None = None) -> RequestManager:
    """RequestManagerTest's RequestManager: retry backoff 100 ms, request timeout 30000 ms."""
    return RequestManager(time, RM_RETRY_BACKOFF_MS, RM_REQUEST_TIMEOUT_MS,
                          bootstrap_servers=bootstrap_servers or (), rng=random.Random(1))


def make_bootstrap_list(count: int) -> list[int]:
    """Mirrors RequestManagerTest#makeBootstrapList: ids -2, -3, ... (bootstrap servers' ids are below -1)."""
    return [-2 - i for i in range(count)]


def test_request_manager_reset_all_connections():
    """Mirrors RequestManagerTest#testResetAllConnections: a request in flight and a backoff are both forgotten."""
    time = MockTime()
    cache = new_request_manager(time)
    cache.on_request_sent(1, 1)
    assert cache.is_ready(1) is False
    cache.on_request_sent(2, 2)
    cache.on_response_result(2, 2, False)
    assert cache.is_ready(2) is False
    cache.reset_all()
    assert (cache.is_ready(1), cache.is_ready(2)) == (True, True)


def test_request_manager_backoff_after_failure():
    """Mirrors RequestManagerTest#testBackoffAfterFailure."""
    time = MockTime()
    cache = new_request_manager(time)
    assert cache.is_ready(1) is True
    cache.on_request_sent(1, 1)
    assert cache.is_ready(1) is False
    cache.on_response_result(1, 1, False)
    assert cache.is_ready(1) is False
    assert (cache.is_backing_off(1), cache.remaining_backoff_ms(1)) == (True, RM_RETRY_BACKOFF_MS)
    time.advance(RM_RETRY_BACKOFF_MS)
    assert cache.is_ready(1) is True


def test_request_manager_successful_response():
    """Mirrors RequestManagerTest#testSuccessfulResponse."""
    time = MockTime()
    cache = new_request_manager(time)
    cache.on_request_sent(1, 1)
    assert cache.is_ready(1) is False
    cache.on_response_result(1, 1, True)
    assert cache.is_ready(1) is True


def test_request_manager_ignore_unexpected_response():
    """Mirrors RequestManagerTest#testIgnoreUnexpectedResponse: an answer to another correlation id changes nothing."""
    time = MockTime()
    cache = new_request_manager(time)
    cache.on_request_sent(1, 1)
    assert cache.is_ready(1) is False
    cache.on_response_result(1, 2, True)
    assert cache.is_ready(1) is False
    assert cache.is_response_expected(1, 1) is True


def test_request_manager_request_timeout():
    """Mirrors RequestManagerTest#testRequestTimeout: a request unanswered for request.timeout.ms frees the
    connection (kafka_ref waited for the network's failure before)."""
    time = MockTime()
    cache = new_request_manager(time)
    cache.on_request_sent(1, 1)
    assert cache.is_ready(1) is False
    assert cache.remaining_request_time_ms(1) == RM_REQUEST_TIMEOUT_MS
    time.advance(RM_REQUEST_TIMEOUT_MS - 1)
    assert (cache.is_ready(1), cache.has_request_timed_out(1)) == (False, False)
    time.advance(1)
    assert cache.has_request_timed_out(1) is True
    assert cache.is_ready(1) is True
    assert cache.is_response_expected(1, 1) is False


def test_request_manager_any_inflight_request_with_any_request():
    """Mirrors RequestManagerTest#testAnyInflightRequestWithAnyRequest: in flight until answered, failed
    or timed out."""
    time = MockTime()
    cache = new_request_manager(time)
    assert cache.has_any_inflight_request() is False
    cache.on_request_sent(1, 11)
    assert cache.has_any_inflight_request() is True
    time.advance(RM_REQUEST_TIMEOUT_MS)
    assert cache.has_any_inflight_request() is False
    cache.on_request_sent(1, 12)
    cache.on_response_result(1, 12, False)
    assert cache.has_any_inflight_request() is False
    cache.on_request_sent(1, 12)
    cache.on_response_result(1, 12, True)
    assert cache.has_any_inflight_request() is False


def test_request_manager_request_to_bootstrap_list():
    """Mirrors RequestManagerTest#testRequestToBootstrapList: a bootstrap server is offered only while
    no request is in flight and it is not backing off; the wait is the request's timeout, then the
    shortest backoff left."""
    time = MockTime()
    bootstrap_list = make_bootstrap_list(2)
    cache = new_request_manager(time, bootstrap_list)
    node1 = cache.find_ready_bootstrap_server()
    assert node1 in bootstrap_list
    assert cache.backoff_before_available_bootstrap_server() == 0
    # A request to it: nothing else is offered until it times out.
    cache.on_request_sent(node1, 1)
    assert cache.find_ready_bootstrap_server() is None
    assert cache.backoff_before_available_bootstrap_server() == RM_REQUEST_TIMEOUT_MS
    # It fails at 100 ms: the other server is offered.
    time.advance(100)
    cache.on_response_result(node1, 1, False)
    node2 = cache.find_ready_bootstrap_server()
    assert node2 in bootstrap_list and node2 != node1
    assert cache.backoff_before_available_bootstrap_server() == 0
    cache.on_request_sent(node2, 2)
    assert cache.find_ready_bootstrap_server() is None
    assert cache.backoff_before_available_bootstrap_server() == RM_REQUEST_TIMEOUT_MS
    # The second fails 1 ms before the first's backoff ends: both back off, 1 ms to wait.
    time.advance(RM_RETRY_BACKOFF_MS - 1)
    cache.on_response_result(node2, 2, False)
    assert cache.find_ready_bootstrap_server() is None
    assert cache.backoff_before_available_bootstrap_server() == 1
    # The first's backoff ends: it is offered again.
    time.advance(1)
    assert cache.find_ready_bootstrap_server() == node1
    assert cache.backoff_before_available_bootstrap_server() == 0
    assert cache.is_backing_off(node2) is True


def test_request_manager_find_ready_with_inflight_request():
    """Mirrors RequestManagerTest#testFindReadyWithInflightRequest: a request in flight to a node outside
    the bootstrap list still keeps every bootstrap server back."""
    time = MockTime()
    cache = new_request_manager(time, make_bootstrap_list(3))
    cache.on_request_sent(1, 1)
    assert cache.find_ready_bootstrap_server() is None
    assert cache.backoff_before_available_bootstrap_server() == RM_REQUEST_TIMEOUT_MS


def test_request_manager_find_ready_with_request_timedout():
    """Mirrors RequestManagerTest#testFindReadyWithRequestTimedout: once the other node's request times
    out, a bootstrap server is offered and the old request's answer is no longer expected."""
    time = MockTime()
    bootstrap_list = make_bootstrap_list(3)
    cache = new_request_manager(time, bootstrap_list)
    cache.on_request_sent(1, 1)
    assert cache.is_response_expected(1, 1) is True
    assert cache.find_ready_bootstrap_server() is None
    time.advance(RM_REQUEST_TIMEOUT_MS)
    assert cache.find_ready_bootstrap_server() in bootstrap_list
    assert cache.is_response_expected(1, 1) is False
