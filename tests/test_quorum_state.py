"""Tests after Kafka's QuorumStateTest, CandidateStateTest and LeaderStateTest (org.apache.kafka.raft, 3.7)."""

from __future__ import annotations

import random

import pytest

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import MockTime
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.epoch_states import CandidateState
from kafka_ref.raft.leader_state import LeaderState
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumState, QuorumStateStore

VOTERS = (1, 2, 3)


def quorum(local_id: int = 1, store: QuorumStateStore | None = None, log_end_epoch: int = 0, voters=VOTERS):
    time = MockTime()
    state = QuorumState(local_id, voters, QuorumConfig(), store or QuorumStateStore(), time, random.Random(0))
    state.initialize(log_end_epoch)
    return state, time


def test_initialize_primordial_epoch():
    """QuorumStateTest#testInitializePrimordialEpoch: no stored state → Unattached in epoch 0, written back."""
    state, _time = quorum()
    assert state.is_unattached() and state.epoch == 0 and state.leader_id() == -1
    assert state.store.read_election_state() == ElectionState.with_unknown_leader(0, VOTERS)
    assert 1000 <= state.state.remaining_election_ms() < 2000


def test_initialize_as_resigned_leader():
    """QuorumStateTest#testInitializeAsResignedLeader: a voter that led epoch 5 restarts Resigned in epoch 5."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(5, 1, VOTERS))
    state, _time = quorum(store=store)
    assert state.is_resigned() and state.epoch == 5
    assert state.store.read_election_state() == ElectionState.with_elected_leader(5, 1, VOTERS)
    assert state.can_grant_vote(2, True) is False


def test_initialize_as_voted_and_as_candidate():
    """QuorumStateTest#testInitializeAsVoted and #testInitializeAsResignedCandidate."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(5, 2, VOTERS))
    state, _time = quorum(store=store)
    assert state.is_voted() and state.epoch == 5 and state.state.voted_id == 2
    assert (state.can_grant_vote(2, False), state.can_grant_vote(3, True)) == (True, False)
    store.write_election_state(ElectionState.with_voted_candidate(5, 1, VOTERS))
    state, _time = quorum(store=store)
    assert state.is_candidate() and state.epoch == 5 and state.state.retries == 1


def test_initialize_with_log_epoch_ahead_of_store():
    """QuorumStateTest#testInitializeWithEmptyStateAndLaterLogEpoch: the log's epoch wins, Unattached."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(5, 2, VOTERS))
    state, _time = quorum(store=store, log_end_epoch=7)
    assert state.is_unattached() and state.epoch == 7


def test_initialize_as_follower():
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(4, 3, VOTERS))
    state, _time = quorum(store=store)
    assert state.is_follower() and state.leader_and_epoch() == (3, 4)


def test_transitions_are_durable_and_checked():
    """QuorumStateTest#testUnattachedToCandidate, #testCandidateToLeader, #testVotedCannotChangeVote,
    #testFollowerCannotChangeLeaderInSameEpoch, #testCandidateToLeaderWithoutGrantedVote."""
    state, _time = quorum()
    state.transition_to_candidate()
    assert (state.epoch, state.state.election()) == (1, ElectionState.with_voted_candidate(1, 1, VOTERS))
    assert state.store.read_election_state() == ElectionState.with_voted_candidate(1, 1, VOTERS)
    with pytest.raises(IllegalStateException):
        state.transition_to_leader(0)  # only our own vote so far
    assert state.state.record_granted_vote(3) is True
    leader = state.transition_to_leader(0)
    assert state.store.read_election_state() == ElectionState.with_elected_leader(1, 1, VOTERS)
    assert leader.granting_voters == frozenset({1, 3})
    with pytest.raises(IllegalStateException):
        state.transition_to_candidate()
    # Resigning does not rewrite the store.
    writes = state.store.writes
    state.transition_to_resigned([3, 2])
    assert state.is_resigned() and state.store.writes == writes
    # A new epoch from a vote request: one vote per epoch.
    state.transition_to_unattached(2)
    state.transition_to_voted(2, 2)
    assert state.store.read_election_state() == ElectionState.with_voted_candidate(2, 2, VOTERS)
    with pytest.raises(IllegalStateException):
        state.transition_to_voted(2, 3)
    state.transition_to_follower(2, 2)
    with pytest.raises(IllegalStateException):
        state.transition_to_follower(2, 3)
    with pytest.raises(IllegalStateException):
        state.transition_to_unattached(2)


def test_observer_cannot_stand_but_can_vote():
    """QuorumStateTest#testObserverCannotBecomeCandidateOrLeader / #testObserverWithIdCanVote (Kafka 3.8:
    QuorumState no longer checks the voter set when voting; KafkaRaftClient decides whom it answers)."""
    state, _time = quorum(local_id=10)
    assert state.is_observer() and state.state.remaining_election_ms() == float("inf")
    with pytest.raises(IllegalStateException):
        state.transition_to_candidate()
    state.transition_to_voted(0 + 1, 2)
    assert state.is_voted() and (state.epoch, state.state.voted_id) == (1, 2)


def test_candidate_vote_counting():
    """CandidateStateTest#testMajorityGranted / #testMajorityRejected / #testCannotChangeVoteGrantedToRejected."""
    time = MockTime()
    five = frozenset({1, 2, 3, 4, 5})
    state = CandidateState(time, 1, 4, five, None, 1, 1500)
    assert state.unrecorded_voters() == {2, 3, 4, 5} and state.majority_size() == 3
    state.record_granted_vote(2)
    assert not state.is_vote_granted()
    state.record_rejected_vote(3)
    state.record_rejected_vote(4)
    assert not state.is_vote_rejected()
    state.record_rejected_vote(5)
    assert state.is_vote_rejected() and state.rejecting_voters() == {3, 4, 5}
    with pytest.raises(ValueError):  # Kafka's IllegalArgumentException
        state.record_granted_vote(3)


def test_leader_high_watermark_from_the_majority():
    """LeaderStateTest#testUpdateHighWatermarkQuorumSizeThree / #testHighWatermarkDoesNotIncreaseBeforeEpochStart:
    the HW is the offset a majority holds, and only once past the epoch start; observers do not count."""
    time = MockTime()
    state = LeaderState(time, 1, 3, 10, frozenset(VOTERS), {1, 2}, 2000)
    assert state.update_local_state(15) is False and state.high_watermark() is None
    assert state.update_replica_state(2, time.milliseconds(), 10) is False  # not past the epoch start
    assert state.update_replica_state(2, time.milliseconds(), 13) is True and state.high_watermark() == 13
    assert state.update_replica_state(10, time.milliseconds(), 15) is False and state.high_watermark() == 13
    assert state.update_replica_state(3, time.milliseconds(), 15) is True and state.high_watermark() == 15
    assert state.non_leader_voters_by_descending_fetch_offset() == [3, 2]
    assert state.non_acknowledging_voters() == set()


def test_leader_check_quorum_timer():
    """LeaderStateTest#testCheckQuorum: a majority must fetch within 1.5 fetch timeouts; a lone voter never expires."""
    time = MockTime()
    state = LeaderState(time, 1, 1, 0, frozenset(VOTERS), {1, 2}, 2000)
    assert state.time_until_check_quorum_expires() == 3000
    time.advance(2000)
    state.update_check_quorum_for_following_voter(2)
    assert state.time_until_check_quorum_expires() == 3000
    time.advance(3000)
    assert state.time_until_check_quorum_expires() == 0
    alone = LeaderState(time, 1, 1, 0, frozenset({1}), {1}, 2000)
    assert alone.time_until_check_quorum_expires() == float("inf")
