"""Tests after Kafka's KafkaRaftClientTest (org.apache.kafka.raft, 3.7): elections, votes, fetch and HW rules.

The client runs on MockTime with a recording channel (tests/raft_support.py): each test polls it,
answers its requests and checks exact epochs, votes, offsets and high watermarks.
"""

from __future__ import annotations

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.begin_quorum_epoch import BeginQuorumEpochRequest, BeginQuorumEpochResponse
from kafka_ref.common.requests.end_quorum_epoch import EndQuorumEpochRequest
from kafka_ref.common.requests.metadata_fetch import MetadataFetchRequest, MetadataFetchResponse
from kafka_ref.common.requests.vote import VoteRequest, VoteResponse
from kafka_ref.image.records import Batch
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.quorum_state import QuorumStateStore
from kafka_ref.raft.replicated_log import MetadataLog

from raft_support import CLUSTER, RECORD, Envelope, client, elect_local_leader

VOTERS = (1, 2, 3)


def request(raft, req):
    envelope = Envelope(req)
    raft.handle_request(envelope)
    return envelope.response


def vote(candidate: int, epoch: int, last_epoch: int, last_offset: int) -> VoteRequest:
    return VoteRequest(cluster_id=CLUSTER, candidate_id=candidate, candidate_epoch=epoch,
                       last_offset_epoch=last_epoch, last_offset=last_offset)


def fetch(replica: int, epoch: int, offset: int, last_epoch: int) -> MetadataFetchRequest:
    return MetadataFetchRequest(cluster_id=CLUSTER, replica_id=replica, current_leader_epoch=epoch,
                                fetch_offset=offset, last_fetched_epoch=last_epoch, max_wait_ms=0)


def log_with(*epochs: int) -> MetadataLog:
    """A log with one one-record batch per epoch given."""
    log = MetadataLog()
    for epoch in epochs:
        log.append_as_follower(Batch(log.end_offset, epoch, 0, (RECORD,)))
    return log


def test_initialize_single_member_quorum():
    """KafkaRaftClientTest#testInitializeSingleMemberQuorum: a lone voter leads epoch 1 at once, its
    LeaderChangeMessage at offset 0 is committed, and the listener hears the commit, then the leader."""
    raft, _time, _channel, listener = client(voters=(1,))
    assert raft.quorum.is_leader() and raft.leader_and_epoch() == (1, 1)
    # The LeaderChangeMessage waits in the accumulator until the first poll writes it.
    assert raft.log.batches == []
    raft.poll()
    assert [(b.base_offset, b.epoch, b.control_records[0].leader_id) for b in raft.log.batches] == [(0, 1, 1)]
    assert raft.log.high_watermark == 1 and listener.commits == [(0, 0)]
    assert listener.leader_changes == [(1, 1)]
    assert raft.schedule_atomic_append(1, [RECORD]) == 1 and raft.log.high_watermark == 1
    raft.poll()
    assert raft.log.high_watermark == 2


def test_election_timeout_makes_a_candidate_that_asks_every_voter():
    """KafkaRaftClientTest#testInitializeAsUnattachedAndBecomeLeader: the randomized timeout expires, the voter
    stands in epoch 1 (vote for itself stored) and sends Vote with its log end; one grant makes it leader."""
    raft, time, channel, listener = client()
    timeout = raft.quorum.state.remaining_election_ms()
    assert 1000 <= timeout < 2000
    time.advance(timeout - 1)
    raft.poll()
    assert raft.quorum.is_unattached()
    time.advance(1)
    raft.poll()
    raft.poll()
    assert raft.quorum.is_candidate() and raft.epoch == 1
    assert raft.store.read_election_state() == ElectionState.with_voted_candidate(1, 1, VOTERS)
    votes = channel.drain(VoteRequest)
    assert [(d, r) for d, _c, r in votes] == [(2, vote(1, 1, 0, 0)), (3, vote(1, 1, 0, 0))]
    destination, correlation, req = votes[1]
    raft.handle_response(destination, correlation, req, VoteResponse(leader_epoch=1, vote_granted=True))
    assert raft.quorum.is_leader() and raft.store.read_election_state() == ElectionState.with_elected_leader(1, 1, VOTERS)
    raft.poll()  # writes the LeaderChangeMessage (and sends BeginQuorumEpoch)
    assert raft.log.batches[0].control_records[0].granting_voters == (1, 3)
    assert listener.leader_changes == [(-1, 1)]  # the claim waits until the LeaderChangeMessage is committed
    # BeginQuorumEpoch goes to both voters that have not acknowledged.
    raft.poll()
    assert sorted(d for d, _c, _r in channel.drain(BeginQuorumEpochRequest)) == [2, 3]


def test_vote_granted_once_per_epoch_and_persisted():
    """KafkaRaftClientTest#testHandleVoteRequestAsUnattached / #testVoteRequestRejectedIfAlreadyVoted."""
    raft, _time, _channel, _listener = client(local_id=2)
    response = request(raft, vote(1, 1, 0, 0))
    assert (response.partition_error_code, response.vote_granted, response.leader_epoch) == (0, True, 1)
    assert raft.quorum.is_voted() and raft.store.read_election_state() == ElectionState.with_voted_candidate(1, 1, VOTERS)
    assert request(raft, vote(3, 1, 0, 0)).vote_granted is False
    assert request(raft, vote(1, 1, 0, 0)).vote_granted is True  # the same candidate asking again


def test_vote_needs_an_up_to_date_log():
    """KafkaRaftClientTest#testHandleVoteRequestWithStaleLog: the candidate's (last epoch, end offset) must be
    at least ours, epoch first; a refused candidate still moves us to its epoch (Unattached)."""
    raft, _time, _channel, _listener = client(local_id=2, log=log_with(1, 2, 2))  # end 3, last epoch 2
    refused = request(raft, vote(1, 3, 1, 10))
    assert (refused.vote_granted, raft.epoch, raft.quorum.is_unattached()) == (False, 3, True)
    assert request(raft, vote(3, 3, 2, 2)).vote_granted is False
    assert request(raft, vote(3, 3, 2, 3)).vote_granted is True and raft.quorum.state.voted_id == 3


def test_vote_from_an_older_epoch_is_fenced():
    """KafkaRaftClientTest#testHandleVoteRequestWithOlderEpoch; and a malformed one is INVALID_REQUEST."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(5, 3, VOTERS))
    raft, _time, _channel, _listener = client(local_id=2, store=store)
    response = request(raft, vote(1, 4, 0, 0))
    assert (Errors.for_code(response.partition_error_code), response.leader_id, response.leader_epoch) == \
        (Errors.FENCED_LEADER_EPOCH, 3, 5)
    assert Errors.for_code(request(raft, vote(1, 6, 6, 0)).partition_error_code) is Errors.INVALID_REQUEST


def test_vote_from_a_non_voter_by_version():
    """KafkaRaftClient#validateVoterOnlyRequest: up to Kafka 3.7 a Vote from a replica outside the voter set is
    INCONSISTENT_VOTER_SET and changes nothing; Kafka 3.8 dropped the check (the request is judged like a voter's)."""
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.raft.quorum_state import QuorumConfig

    def stored():
        store = QuorumStateStore()
        store.write_election_state(ElectionState.with_elected_leader(5, 3, VOTERS))
        return store

    old_config = QuorumConfig.from_kafka_config(KafkaConfig({"kafka_ref.broker.version": "3.7", "inter.broker.protocol.version": "3.7"}), VOTERS)
    assert old_config.inconsistent_voter_set_check is True
    raft, _time, _channel, _listener = client(local_id=2, store=stored(), config=old_config)
    refused = request(raft, vote(7, 6, 0, 0))
    assert (Errors.for_code(refused.partition_error_code), refused.vote_granted, raft.epoch) == (
        Errors.INCONSISTENT_VOTER_SET, False, 5)
    new_config = QuorumConfig.from_kafka_config(KafkaConfig({}), VOTERS)
    assert new_config.inconsistent_voter_set_check is False
    raft, _time, _channel, _listener = client(local_id=2, store=stored(), config=new_config)
    judged = request(raft, vote(7, 6, 0, 0))
    assert (Errors.for_code(judged.partition_error_code), judged.vote_granted, raft.epoch) == (Errors.NONE, True, 6)


def test_leader_high_watermark_needs_a_majority_past_the_epoch_start():
    """KafkaRaftClientTest#testLeaderHighWatermarkAdvance (3 voters): appends stay uncommitted until one
    follower has fetched past them; the HW goes back to fetchers in the response."""
    raft, time, channel, listener = client()
    elect_local_leader(raft, time, channel)
    assert raft.schedule_atomic_append(1, [RECORD]) == 1
    raft.poll()  # the accumulator drains (linger 0 here)
    assert raft.log.high_watermark == 0 and listener.commits == []
    first = request(raft, fetch(2, 1, 0, 0))
    assert [b.base_offset for b in first.batches] == [0, 1] and first.high_watermark == -1
    second = request(raft, fetch(2, 1, 2, 1))
    assert (second.high_watermark, raft.log.high_watermark, second.batches) == (2, 2, ())
    assert listener.commits == [(0, 0), (1, 1)]
    # An observer's progress does not count.
    raft.schedule_atomic_append(1, [RECORD])
    raft.poll()
    request(raft, fetch(10, 1, 3, 1))
    assert raft.log.high_watermark == 2


def test_fetch_with_a_diverging_epoch_and_follower_truncation():
    """KafkaRaftClientTest#testFetchResponseWithDivergingEpoch: the leader answers where the fetcher's last
    epoch ends on its log; the follower truncates there and fetches again."""
    leader_log = log_with(1, 1, 3)  # offsets 0,1 epoch 1; 2 epoch 3
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_voted_candidate(4, 1, VOTERS))
    leader, _time, _channel, _listener = client(log=leader_log, store=store)
    leader.quorum.state.record_granted_vote(2)
    leader._maybe_transition_to_leader(leader.quorum.state)
    leader.poll()  # writes the LeaderChangeMessage
    assert leader.leader_and_epoch() == (1, 4) and leader.log.end_offset == 4
    diverged = request(leader, fetch(2, 4, 4, 2))  # follower: epochs 1,1,2,2 ending at 4
    assert (diverged.diverging_epoch, diverged.diverging_end_offset, diverged.batches) == (1, 2, ())
    # The follower's side.
    follower_store = QuorumStateStore()
    follower_store.write_election_state(ElectionState.with_elected_leader(4, 1, VOTERS))
    follower, _t, channel, _l = client(local_id=2, log=log_with(1, 1, 2, 2), store=follower_store)
    follower.poll()
    destination, correlation, req = channel.drain(MetadataFetchRequest)[0]
    assert (destination, req.fetch_offset, req.last_fetched_epoch, req.current_leader_epoch) == (1, 4, 2, 4)
    follower.handle_response(destination, correlation, req, diverged)
    assert follower.log.end_offset == 2 and follower.log.last_fetched_epoch == 1
    follower.poll()
    destination, correlation, req = channel.drain(MetadataFetchRequest)[0]
    answer = request(leader, req)
    # Nothing is committed until a majority holds an offset past the epoch start (3).
    assert [b.base_offset for b in answer.batches] == [2, 3] and answer.high_watermark == -1
    follower.handle_response(destination, correlation, req, answer)
    assert [(b.base_offset, b.epoch) for b in follower.log.batches] == [(0, 1), (1, 1), (2, 3), (3, 4)]
    assert follower.log.high_watermark == 0
    follower.poll()
    destination, correlation, req = channel.drain(MetadataFetchRequest)[0]
    answer = request(leader, req)
    assert (answer.high_watermark, leader.log.high_watermark) == (4, 4)
    follower.handle_response(destination, correlation, req, answer)
    assert follower.log.high_watermark == 4


def test_follower_fetch_timeout_starts_an_election():
    """KafkaRaftClientTest#testFollowerAsVoterFetchTimeout: no answer from the leader for quorum.fetch.timeout.ms."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(5, 3, VOTERS))
    raft, time, _channel, _listener = client(store=store)
    assert raft.quorum.is_follower()
    time.advance(1999)
    raft.poll()
    assert raft.quorum.is_follower()
    time.advance(1)
    raft.poll()
    assert raft.quorum.is_candidate() and raft.epoch == 6


def test_leader_without_fetches_from_a_majority_resigns():
    """KafkaRaftClientTest#testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters: after 1.5 fetch
    timeouts the leader resigns, sends EndQuorumEpoch with its successors, and stands again later."""
    raft, time, channel, _listener = client()
    elect_local_leader(raft, time, channel)
    request(raft, fetch(3, 1, 1, 1))  # voter 3 is ahead of 2
    time.advance(2999)
    raft.poll()
    assert raft.quorum.is_leader()
    request(raft, fetch(2, 1, 0, 0))
    time.advance(2999)
    raft.poll()
    assert raft.quorum.is_leader()
    time.advance(3000)
    raft.poll()
    assert raft.quorum.is_resigned() and raft.epoch == 1
    raft.poll()
    ends = channel.drain(EndQuorumEpochRequest)
    assert [(d, r.leader_epoch, r.preferred_successors) for d, _c, r in ends] == [(2, 1, (3, 2)), (3, 1, (3, 2))]
    with_writes = raft.store.writes
    time.advance(2000)
    raft.poll()
    assert raft.quorum.is_candidate() and raft.epoch == 2 and raft.store.writes == with_writes + 1


def test_end_quorum_epoch_lets_the_first_successor_stand_at_once():
    """KafkaRaftClientTest#testHandleEndQuorumRequest: the first preferred successor stands at the next poll."""
    store = QuorumStateStore()
    store.write_election_state(ElectionState.with_elected_leader(2, 1, VOTERS))
    raft, _time, _channel, _listener = client(local_id=3, store=store)
    response = request(raft, EndQuorumEpochRequest(cluster_id=CLUSTER, leader_id=1, leader_epoch=2, preferred_successors=(3, 2)))
    assert response.partition_error_code == 0
    raft.poll()
    assert raft.quorum.is_candidate() and raft.epoch == 3


def test_restarted_leader_is_resigned_and_cannot_vote_in_its_epoch():
    """KafkaRaftClientTest#testInitializeAsResignedLeaderFromStateStore: the stored state survives the crash."""
    store = QuorumStateStore()
    raft, time, channel, _listener = client(store=store)
    elect_local_leader(raft, time, channel)
    log = raft.log
    restarted, _time, _channel, listener = client(store=store, log=log)
    assert restarted.quorum.is_resigned() and restarted.epoch == 1
    assert request(restarted, vote(2, 1, 1, 1)).vote_granted is False
    assert listener.leader_changes == [(-1, 1)]  # a resigned node is not announced as the leader


def test_begin_quorum_epoch_makes_a_follower_and_is_acknowledged():
    """KafkaRaftClientTest#testHandleBeginQuorumRequest / #testBeginQuorumEpochResponse acknowledgement."""
    raft, _time, _channel, listener = client(local_id=2)
    response = request(raft, BeginQuorumEpochRequest(cluster_id=CLUSTER, leader_id=1, leader_epoch=3))
    assert (response.partition_error_code, response.leader_id, response.leader_epoch) == (0, 1, 3)
    assert raft.quorum.is_follower() and raft.store.read_election_state() == ElectionState.with_elected_leader(3, 1, VOTERS)
    assert listener.leader_changes == [(1, 3)]
    leader, time, channel, _l = client()
    elect_local_leader(leader, time, channel)
    leader.poll()
    destination, correlation, req = channel.drain(BeginQuorumEpochRequest)[0]
    leader.handle_response(destination, correlation, req, BeginQuorumEpochResponse(leader_id=1, leader_epoch=1))
    assert leader.quorum.state.non_acknowledging_voters() == {3}


def test_observer_finds_the_leader_through_any_voter():
    """KafkaRaftClientTest#testObserverHandleRetryFetchToBootstrapServer: an observer fetches from a voter;
    NOT_LEADER_OR_FOLLOWER names the leader, which it then follows."""
    raft, _time, channel, listener = client(local_id=10)
    raft.poll()
    (destination, correlation, req), = channel.drain(MetadataFetchRequest)
    assert destination in VOTERS and req.replica_id == 10 and req.current_leader_epoch == 0
    raft.handle_response(destination, correlation, req, MetadataFetchResponse(
        partition_error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, leader_id=2, leader_epoch=3))
    assert raft.quorum.is_follower() and raft.leader_and_epoch() == (2, 3) and listener.leader_changes == [(2, 3)]
    raft.poll()
    (destination, _c, req), = channel.drain(MetadataFetchRequest)
    assert (destination, req.current_leader_epoch) == (2, 3)
