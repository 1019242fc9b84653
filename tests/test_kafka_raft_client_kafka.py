"""Kafka 3.8's KafkaRaftClientTest (org.apache.kafka.raft), one test at a time, against kafka_ref/raft.

tests/test_kafka_raft_client.py holds the first, looser ports (3.7); this module ports the rest.
Kafka drives its client through RaftClientTestContext (MockLog, MockNetworkChannel, MockTime,
deliverRequest / assertSentXResponse); ``Context`` below plays that part: kafka_ref's client
answers an inbound request at once (KafkaRaftClient#handle_request), so ``deliver`` returns the
response, and requests the client sends are drained from tests/raft_support.py's MockChannel.
The quorum settings are the test context's (election timeout 10 s, fetch timeout 50 s, request
timeout 5 s, retry backoff 50 ms, election backoff max 100 ms); Kafka's MockableRandom is a
``random.Random`` whose ``randrange`` returns a fixed jitter. Kafka's local replica is id 0.
Kafka 3.8's KafkaRaftClientTest has no kraft.version 1 variants (kafka_ref has no directory ids:
ReplicaKey is the replica id). Kafka's IllegalArgumentException is ValueError here. Request
versions are not modelled: #testLeaderStateUpdateWithDifferentFetchRequestVersions runs once, with
kafka_ref's one MetadataFetchRequest shape (the replica id where Fetch v15+ puts it in ReplicaState).

The observer tests configure KIP-853's controller.quorum.bootstrap.servers (bootstrap ids -2, -3,
never a voter's id); kafka_ref has a static voter set, for which Kafka 3.8 uses the voters as the
bootstrap list, so they run with the voters as bootstrap servers. Where Kafka's test relies on the
leader not being a bootstrap server, the mocked random start index points past the leader.
kafka_ref has no DescribeQuorum wire request: #testDescribeQuorum and #testDescribeQuorumNonLeader
call KafkaRaftClient#handle_describe_quorum_request, the partition's answer.

Not ported:
- Snapshot tests (KafkaRaftClientSnapshotTest) and #testObserverFetchWithNoLocalId: snapshots are
  not modelled, and every kafka_ref node has an id.
- #testAppendFailedWithBufferAllocationException, #testAppendFailedWithRecordBatchTooLargeException:
  kafka_ref's BatchAccumulator holds record objects, with no memory pool and no batch byte limit.
- #testMetrics: Raft metrics are not modelled.
- The ``""`` cluster id halves of the *ClusterIdValidation tests: kafka_ref's requests use ``""``
  for "no cluster id" (Kafka's null, which is accepted); the matching and mismatching ids are ported.
"""

from __future__ import annotations

import random

import pytest

from kafka_ref.common.errors import ClusterAuthorizationException, Errors, IllegalStateException
from kafka_ref.common.requests.begin_quorum_epoch import BeginQuorumEpochRequest, BeginQuorumEpochResponse
from kafka_ref.common.requests.end_quorum_epoch import EndQuorumEpochRequest, EndQuorumEpochResponse
from kafka_ref.common.requests.metadata_fetch import MetadataFetchRequest, MetadataFetchResponse
from kafka_ref.common.requests.vote import VoteRequest, VoteResponse
from kafka_ref.common.time import MockTime
from kafka_ref.image.records import Batch
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.leader_state import DescribeQuorumReplicaState
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumStateStore
from kafka_ref.raft.raft_client import NotLeaderException, UnexpectedBaseOffsetException
from kafka_ref.raft.replicated_log import MetadataLog

from raft_support import CLUSTER, RECORD, Envelope, MockChannel, RecordingListener

ELECTION_TIMEOUT_MS = 10_000
FETCH_TIMEOUT_MS = 50_000
REQUEST_TIMEOUT_MS = 5_000
RETRY_BACKOFF_MS = 50
ELECTION_BACKOFF_MAX_MS = 100
CHECK_QUORUM_TIMEOUT_MS = int(FETCH_TIMEOUT_MS * 1.5)


class MockableRandom(random.Random):
    """Kafka's MockableRandom#mockNextInt: every bounded draw returns ``jitter`` (capped below the bound)."""

    def __init__(self, jitter: int = 0) -> None:
        super().__init__(0)
        self.jitter = jitter

    def randrange(self, start, stop=None, step=1):  # noqa: D102 - random.Random's signature
        bound = start if stop is None else stop
        return min(self.jitter, bound - 1)

    def choice(self, seq):  # noqa: D102
        return seq[0]


class Context:
    """RaftClientTestContext's role: a KafkaRaftClient on MockTime, MockChannel and a RecordingListener."""

    def __init__(self, local_id: int, voters, *, elected: tuple[int, int] | None = None,
                 voted: tuple[int, int] | None = None, unknown: int | None = None,
                 log_batches: tuple[tuple[int, int], ...] = (), jitter: int = 0,
                 election_timeout_ms: int = ELECTION_TIMEOUT_MS, request_timeout_ms: int = REQUEST_TIMEOUT_MS,
                 append_linger_ms: int = 0) -> None:
        self.local_id = local_id
        self.voters = tuple(sorted(voters))
        self.time = MockTime()
        self.store = QuorumStateStore()
        if elected is not None:
            self.store.write_election_state(ElectionState.with_elected_leader(elected[0], elected[1], self.voters))
        elif voted is not None:
            self.store.write_election_state(ElectionState.with_voted_candidate(voted[0], voted[1], self.voters))
        elif unknown is not None:
            self.store.write_election_state(ElectionState.with_unknown_leader(unknown, self.voters))
        self.log = MetadataLog()
        for epoch, count in log_batches:  # Builder#appendToLog
            self.log.append_as_follower(Batch(self.log.end_offset, epoch, 0, (RECORD,) * count))
        self.channel = MockChannel()
        config = QuorumConfig(election_timeout_ms=election_timeout_ms, fetch_timeout_ms=FETCH_TIMEOUT_MS,
                              election_backoff_max_ms=ELECTION_BACKOFF_MAX_MS, request_timeout_ms=request_timeout_ms,
                              retry_backoff_ms=RETRY_BACKOFF_MS, append_linger_ms=append_linger_ms)
        self.election_timeout_ms = election_timeout_ms
        self.client = KafkaRaftClient(local_id, self.voters, self.time, log=self.log, store=self.store,
                                      channel=self.channel, rng=MockableRandom(jitter), config=config,
                                      cluster_id=CLUSTER)
        self.listener = RecordingListener()
        self.client.register(self.listener)
        self.client.initialize()

    @classmethod
    def initialize_as_leader(cls, local_id: int, voters, epoch: int) -> "Context":
        """RaftClientTestContext#initializeAsLeader: Unattached in epoch - 1, then elected in ``epoch``."""
        context = cls(local_id, voters, unknown=epoch - 1)
        context.assert_unknown_leader(epoch - 1)
        context.become_leader()
        return context

    # -- driving ---------------------------------------------------------------------------------

    def poll(self) -> float:
        return self.client.poll()

    def deliver(self, request):
        """deliverRequest + pollUntilResponse: the client's answer (None while a Fetch is parked)."""
        envelope = Envelope(request)
        self.client.handle_request(envelope)
        self.last_envelope = envelope
        return envelope.response

    def sent(self, request_type: type | None = None):
        """channel.drainSendQueue, one request type: [(destination, correlation, request)]."""
        return self.channel.drain(request_type)

    def respond(self, outbound, response) -> None:
        """deliverResponse."""
        destination, correlation, req = outbound
        self.client.handle_response(destination, correlation, req, response)

    def become_leader(self) -> None:
        """RaftClientTestContext#becomeLeader: the election timeout passes, every voter grants, every voter acknowledges."""
        epoch = self.current_epoch() + 1
        self.time.advance(self.election_timeout_ms * 2)
        self.poll()
        self.poll()
        for outbound in self.sent(VoteRequest):
            assert outbound[2].candidate_epoch == epoch
            self.respond(outbound, VoteResponse(leader_epoch=epoch, vote_granted=True))
        self.poll()
        self.assert_elected_leader(epoch, self.local_id)
        self.poll()
        for outbound in self.sent(BeginQuorumEpochRequest):
            self.respond(outbound, BeginQuorumEpochResponse(leader_id=self.local_id, leader_epoch=epoch))
        self.poll()

    # -- requests and responses (RaftClientTestContext's builders) ---------------------------------

    @staticmethod
    def vote_request(epoch: int, candidate: int, last_epoch: int, last_offset: int, cluster_id: str = CLUSTER):
        return VoteRequest(cluster_id=cluster_id, candidate_id=candidate, candidate_epoch=epoch,
                           last_offset_epoch=last_epoch, last_offset=last_offset)

    @staticmethod
    def begin_epoch_request(epoch: int, leader: int, cluster_id: str = CLUSTER):
        return BeginQuorumEpochRequest(cluster_id=cluster_id, leader_id=leader, leader_epoch=epoch)

    @staticmethod
    def end_epoch_request(epoch: int, leader: int, successors, cluster_id: str = CLUSTER):
        return EndQuorumEpochRequest(cluster_id=cluster_id, leader_id=leader, leader_epoch=epoch,
                                     preferred_successors=tuple(successors))

    @staticmethod
    def fetch_request(epoch: int, replica: int, offset: int, last_epoch: int, max_wait_ms: int,
                      cluster_id: str = CLUSTER):
        return MetadataFetchRequest(cluster_id=cluster_id, replica_id=replica, current_leader_epoch=epoch,
                                    fetch_offset=offset, last_fetched_epoch=last_epoch, max_wait_ms=max_wait_ms)

    @staticmethod
    def fetch_response(epoch: int, leader: int, batches=(), high_watermark: int = 0, error: Errors = Errors.NONE):
        return MetadataFetchResponse(partition_error_code=error.code, leader_id=leader, leader_epoch=epoch,
                                     batches=tuple(batches), high_watermark=high_watermark)

    @staticmethod
    def batch(base_offset: int, epoch: int, count: int) -> Batch:
        """RaftClientTestContext#buildBatch."""
        return Batch(base_offset, epoch, 0, (RECORD,) * count)

    # -- assertions ------------------------------------------------------------------------------

    def current_epoch(self) -> int:
        return self.store.read_election_state().epoch

    def current_leader(self) -> int:
        return self.store.read_election_state().leader_id

    def assert_elected_leader(self, epoch: int, leader: int) -> None:
        assert self.store.read_election_state() == ElectionState.with_elected_leader(epoch, leader, self.voters)

    def assert_voted_candidate(self, epoch: int, candidate: int) -> None:
        assert self.store.read_election_state() == ElectionState.with_voted_candidate(epoch, candidate, self.voters)

    def assert_unknown_leader(self, epoch: int) -> None:
        assert self.store.read_election_state() == ElectionState.with_unknown_leader(epoch, self.voters)

    def assert_resigned_leader(self, epoch: int, leader: int) -> None:
        assert self.client.quorum.is_resigned()
        self.assert_elected_leader(epoch, leader)


def vote_answer(response) -> tuple:
    """(error, epoch, leader, granted) of a Vote response (assertSentVoteResponse)."""
    return Errors.for_code(response.partition_error_code), response.leader_epoch, response.leader_id, response.vote_granted


def epoch_answer(response) -> tuple:
    """(error, epoch, leader) of a BeginQuorumEpoch / EndQuorumEpoch / Fetch response."""
    return Errors.for_code(response.partition_error_code), response.leader_epoch, response.leader_id


# ------------------------------------------------------------------------------------ initialization


def test_initialize_as_leader_from_state_store_single_member_quorum():
    """Mirrors KafkaRaftClientTest#testInitializeAsLeaderFromStateStoreSingleMemberQuorum."""
    context = Context(0, {0}, elected=(2, 0))
    context.poll()  # pollUntil the LeaderChangeMessage is written
    assert context.log.end_offset == 1 and context.log.last_fetched_epoch == 3
    assert context.client.leader_and_epoch() == (0, 3)
    context.assert_elected_leader(3, 0)


def test_initialize_as_resigned_and_become_candidate():
    """Mirrors KafkaRaftClientTest#testInitializeAsResignedAndBecomeCandidate."""
    context = Context(0, {0, 1}, elected=(2, 0))
    assert context.client.quorum.is_resigned() and context.log.end_offset == 0
    context.assert_elected_leader(2, 0)
    context.time.advance(ELECTION_TIMEOUT_MS)
    context.poll()
    assert context.client.quorum.is_candidate()
    context.assert_voted_candidate(3, 0)


def test_initialize_as_resigned_leader_from_state_store():
    """Mirrors KafkaRaftClientTest#testInitializeAsResignedLeaderFromStateStore."""
    context = Context(0, {0, 1}, elected=(2, 0))
    assert context.log.end_offset == 0
    context.assert_elected_leader(2, 0)
    context.poll()
    with pytest.raises(NotLeaderException):
        context.client.schedule_atomic_append(2, [RECORD, RECORD])
    (outbound,) = context.sent(EndQuorumEpochRequest)
    assert (outbound[0], outbound[2].leader_epoch, outbound[2].leader_id) == (1, 2, 0)
    context.respond(outbound, EndQuorumEpochResponse(leader_id=0, leader_epoch=2))
    context.poll()
    context.time.advance(ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(3, 0)
    (vote,) = context.sent(VoteRequest)
    assert (vote[0], vote[2]) == (1, Context.vote_request(3, 0, 0, 0))


def test_initialize_as_candidate_from_state_store():
    """Mirrors KafkaRaftClientTest#testInitializeAsCandidateFromStateStore."""
    context = Context(0, {0, 1, 2}, voted=(2, 0))
    context.assert_voted_candidate(2, 0)
    assert context.log.end_offset == 0
    context.poll()
    votes = context.sent(VoteRequest)
    assert [(d, r) for d, _c, r in votes] == [(1, Context.vote_request(2, 0, 0, 0)), (2, Context.vote_request(2, 0, 0, 0))]


@pytest.mark.parametrize("voters, granting", [((0, 1), (0, 1)), ((0, 1, 2), (0, 1))])
def test_initialize_as_candidate_and_become_leader(voters, granting):
    """Mirrors KafkaRaftClientTest#testInitializeAsCandidateAndBecomeLeader and
    KafkaRaftClientTest#testInitializeAsCandidateAndBecomeLeaderQuorumOfThree: the LeaderChangeMessage at offset 0 carries
    the election time, the voters and the granting voters; BeginQuorumEpoch follows."""
    context = Context(0, voters)
    context.assert_unknown_leader(0)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(1, 0)
    votes = context.sent(VoteRequest)
    assert [d for d, _c, _r in votes] == list(voters[1:])
    context.respond(votes[0], VoteResponse(leader_epoch=1, vote_granted=True))
    election_time = context.time.milliseconds()
    assert context.log.end_offset == 0  # the LeaderChangeMessage waits in the accumulator for a poll
    context.poll()
    context.assert_elected_leader(1, 0)
    assert context.log.end_offset == 1
    assert sorted(d for d, _c, _r in context.sent(BeginQuorumEpochRequest)) == list(voters[1:])
    (batch,) = context.log.batches
    assert batch.is_control and batch.append_timestamp == election_time and batch.epoch == 1
    message = batch.control_records[0]
    assert (message.leader_id, message.voters, message.granting_voters) == (0, voters, granting)


def test_initialize_as_follower_empty_log():
    """Mirrors KafkaRaftClientTest#testInitializeAsFollowerEmptyLog."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.assert_elected_leader(5, 1)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[0], fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (1, 5, 0, 0)


def test_initialize_as_follower_non_empty_log():
    """Mirrors KafkaRaftClientTest#testInitializeAsFollowerNonEmptyLog."""
    context = Context(0, {0, 1}, elected=(5, 1), log_batches=((3, 1),))
    context.assert_elected_leader(5, 1)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[0], fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (1, 5, 1, 3)


def test_initialize_observer_no_previous_state():
    """Mirrors KafkaRaftClientTest#testInitializeObserverNoPreviousState: FENCED_LEADER_EPOCH names the leader."""
    context = Context(0, {1, 2})
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch[0] in (1, 2)
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (0, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, error=Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)


# ------------------------------------------------------------------------------------ votes


def test_reject_votes_from_same_epoch_after_resigning_leadership():
    """Mirrors KafkaRaftClientTest#testRejectVotesFromSameEpochAfterResigningLeadership."""
    context = Context(0, {0, 1}, elected=(2, 0))
    assert context.log.end_offset == 0
    context.assert_elected_leader(2, 0)
    response = context.deliver(Context.vote_request(2, 1, context.log.last_fetched_epoch, context.log.end_offset))
    assert vote_answer(response) == (Errors.NONE, 2, 0, False)


def test_reject_votes_from_same_epoch_after_resigning_candidacy():
    """Mirrors KafkaRaftClientTest#testRejectVotesFromSameEpochAfterResigningCandidacy."""
    context = Context(0, {0, 1}, voted=(2, 0))
    context.assert_voted_candidate(2, 0)
    response = context.deliver(Context.vote_request(2, 1, context.log.last_fetched_epoch, context.log.end_offset))
    assert vote_answer(response) == (Errors.NONE, 2, -1, False)


@pytest.mark.parametrize("stored", ["elected", "voted"])
def test_grant_votes_from_higher_epoch_after_resigning(stored):
    """Mirrors KafkaRaftClientTest#testGrantVotesFromHigherEpochAfterResigningLeadership and
    KafkaRaftClientTest#testGrantVotesFromHigherEpochAfterResigningCandidacy: Unattached in the new epoch, then Voted."""
    context = Context(0, {0, 1}, **{stored: (2, 0)})
    assert context.client.quorum.is_resigned() if stored == "elected" else context.client.quorum.is_candidate()
    response = context.deliver(Context.vote_request(3, 1, context.log.last_fetched_epoch, context.log.end_offset))
    context.poll()
    assert context.client.quorum.is_voted()
    context.assert_voted_candidate(3, 1)
    assert vote_answer(response) == (Errors.NONE, 3, -1, True)


def test_handle_valid_vote_request_as_follower():
    """Mirrors KafkaRaftClientTest#testHandleValidVoteRequestAsFollower."""
    context = Context(0, {0, 1}, unknown=2)
    assert vote_answer(context.deliver(Context.vote_request(2, 1, 1, 1))) == (Errors.NONE, 2, -1, True)
    context.assert_voted_candidate(2, 1)


def test_handle_vote_request_as_follower_with_elected_leader():
    """Mirrors KafkaRaftClientTest#testHandleVoteRequestAsFollowerWithElectedLeader."""
    context = Context(0, {0, 1, 3}, elected=(2, 3))
    assert vote_answer(context.deliver(Context.vote_request(2, 1, 1, 1))) == (Errors.NONE, 2, 3, False)
    context.assert_elected_leader(2, 3)


def test_handle_vote_request_as_follower_with_voted_candidate():
    """Mirrors KafkaRaftClientTest#testHandleVoteRequestAsFollowerWithVotedCandidate."""
    context = Context(0, {0, 1, 3}, voted=(2, 3))
    assert vote_answer(context.deliver(Context.vote_request(2, 1, 1, 1))) == (Errors.NONE, 2, -1, False)
    context.assert_voted_candidate(2, 3)


def test_handle_invalid_vote_request_with_older_epoch():
    """Mirrors KafkaRaftClientTest#testHandleInvalidVoteRequestWithOlderEpoch."""
    context = Context(0, {0, 1}, unknown=2)
    assert vote_answer(context.deliver(Context.vote_request(1, 1, 0, 1))) == (Errors.FENCED_LEADER_EPOCH, 2, -1, False)
    context.assert_unknown_leader(2)


def test_handle_invalid_vote_request_as_observer():
    """Mirrors KafkaRaftClientTest#testHandleInvalidVoteRequestAsObserver (Kafka 3.8: no voter-set check, so an
    observer with an id judges the vote like a voter and, granting it, is Voted in the new epoch)."""
    context = Context(0, {1, 2}, unknown=2)
    response = context.deliver(Context.vote_request(3, 1, 2, 1))
    assert (Errors.for_code(response.partition_error_code), response.leader_epoch, response.leader_id,
            response.vote_granted) == (Errors.NONE, 3, -1, True)
    context.assert_voted_candidate(3, 1)


def test_leader_accept_vote_from_non_voter():
    """Mirrors KafkaRaftClientTest#testLeaderAcceptVoteFromNonVoter: a leader answers a non-voter's Vote as any
    other (older epoch FENCED_LEADER_EPOCH; same epoch NONE, not granted) and stays leader."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    fenced = context.deliver(Context.vote_request(4, 2, 0, 0))
    assert (Errors.for_code(fenced.partition_error_code), fenced.leader_epoch, fenced.leader_id,
            fenced.vote_granted) == (Errors.FENCED_LEADER_EPOCH, 5, 0, False)
    same = context.deliver(Context.vote_request(5, 2, 0, 0))
    assert (Errors.for_code(same.partition_error_code), same.leader_epoch, same.leader_id,
            same.vote_granted) == (Errors.NONE, 5, 0, False)
    context.assert_elected_leader(5, 0)


def test_leader_ignore_vote_request_on_same_epoch():
    """Mirrors KafkaRaftClientTest#testLeaderIgnoreVoteRequestOnSameEpoch."""
    context = Context.initialize_as_leader(0, {0, 1}, 2)
    response = context.deliver(Context.vote_request(2, 1, 1, 1))
    context.poll()
    assert vote_answer(response) == (Errors.NONE, 2, 0, False)
    context.assert_elected_leader(2, 0)


def test_candidate_ignore_vote_request_on_same_epoch():
    """Mirrors KafkaRaftClientTest#testCandidateIgnoreVoteRequestOnSameEpoch."""
    context = Context(0, {0, 1}, voted=(2, 0))
    context.poll()
    response = context.deliver(Context.vote_request(2, 1, 1, 1))
    context.poll()
    assert vote_answer(response) == (Errors.NONE, 2, -1, False)
    context.assert_voted_candidate(2, 0)


def test_invalid_vote_request():
    """Mirrors KafkaRaftClientTest#testInvalidVoteRequest: a negative offset or epoch, or a last epoch
    not below the candidate's, is INVALID_REQUEST and changes nothing."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.assert_elected_leader(5, 1)
    for last_epoch, last_offset in ((0, -5), (-1, 0), (6, 0)):
        response = context.deliver(Context.vote_request(6, 1, last_epoch, last_offset))
        assert vote_answer(response) == (Errors.INVALID_REQUEST, 5, 1, False)
        context.assert_elected_leader(5, 1)


def test_vote_request_timeout():
    """Mirrors KafkaRaftClientTest#testVoteRequestTimeout: after a request timeout the vote is asked again;
    the answer to the first request is ignored, the answer to the retry elects."""
    context = Context(0, {0, 1})
    context.assert_unknown_leader(0)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(1, 0)
    (first,) = context.sent(VoteRequest)
    assert first[2] == Context.vote_request(1, 0, 0, 0)
    context.time.advance(REQUEST_TIMEOUT_MS)
    context.poll()
    (retry,) = context.sent(VoteRequest)
    assert retry[2] == Context.vote_request(1, 0, 0, 0) and retry[1] != first[1]
    context.respond(first, VoteResponse(leader_epoch=1, vote_granted=True))
    context.poll()
    context.assert_voted_candidate(1, 0)
    context.respond(retry, VoteResponse(leader_epoch=1, vote_granted=True))
    context.poll()
    context.assert_elected_leader(1, 0)


def test_retry_election():
    """Mirrors KafkaRaftClientTest#testRetryElection: a rejected vote backs off (bounded by the election
    backoff max), then the voter stands again in the next epoch."""
    context = Context(0, {0, 1}, jitter=85)
    context.assert_unknown_leader(0)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(1, 0)
    (vote,) = context.sent(VoteRequest)
    assert vote[2] == Context.vote_request(1, 0, 0, 0)
    context.respond(vote, VoteResponse(leader_epoch=1, vote_granted=False))
    context.poll()
    context.assert_voted_candidate(1, 0)
    context.time.advance(ELECTION_BACKOFF_MAX_MS - 1)
    context.poll()
    context.assert_voted_candidate(1, 0)
    context.time.advance(1)
    context.poll()
    context.poll()
    context.assert_voted_candidate(2, 0)
    (vote,) = context.sent(VoteRequest)
    assert vote[2] == Context.vote_request(2, 0, 0, 0)


def test_voter_become_candidate_after_fetch_timeout():
    """Mirrors KafkaRaftClientTest#testVoterBecomeCandidateAfterFetchTimeout."""
    context = Context(0, {0, 1}, elected=(5, 1), log_batches=((3, 1),))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (5, 1, 3)
    context.time.advance(FETCH_TIMEOUT_MS)
    context.poll()
    context.poll()
    (vote,) = context.sent(VoteRequest)
    assert vote[2] == Context.vote_request(6, 0, 3, 1)
    context.assert_voted_candidate(6, 0)


def test_vote_response_ignored_after_becoming_follower():
    """Mirrors KafkaRaftClientTest#testVoteResponseIgnoredAfterBecomingFollower."""
    context = Context(0, {0, 1, 2}, unknown=4)
    context.assert_unknown_leader(4)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(5, 0)
    votes = context.sent(VoteRequest)
    assert len(votes) == 2
    context.deliver(Context.begin_epoch_request(5, 2))
    context.poll()
    context.assert_elected_leader(5, 2)
    context.respond(votes[0], VoteResponse(leader_epoch=5, vote_granted=False))
    context.respond(votes[1], VoteResponse(leader_epoch=5, leader_id=2, vote_granted=False))
    context.poll()
    context.assert_elected_leader(5, 2)


# ------------------------------------------------------------------------------------ appends and resignation


def test_append_failed_with_not_leader_exception():
    """Mirrors KafkaRaftClientTest#testAppendFailedWithNotLeaderException."""
    context = Context(0, {0, 1}, unknown=2)
    with pytest.raises(NotLeaderException):
        context.client.schedule_atomic_append(2, [RECORD, RECORD])


def test_append_failed_with_fenced_epoch():
    """Mirrors KafkaRaftClientTest#testAppendFailedWithFencedEpoch: a newer epoch is the caller's mistake
    (IllegalArgumentException), an older one NotLeaderException."""
    context = Context(0, {0, 1})
    context.become_leader()
    assert context.current_leader() == 0
    epoch = context.current_epoch()
    with pytest.raises(ValueError):
        context.client.schedule_atomic_append(epoch + 1, [RECORD])
    with pytest.raises(NotLeaderException):
        context.client.schedule_atomic_append(epoch - 1, [RECORD])
    assert context.log.end_offset == 1


def test_end_quorum_epoch_retries_while_resigned():
    """Mirrors KafkaRaftClientTest#testEndQuorumEpochRetriesWhileResigned: an acknowledged voter is not asked
    again; the other one is, after the request timeout."""
    context = Context(0, {0, 1, 2}, elected=(19, 0), election_timeout_ms=10_000, request_timeout_ms=5_000)
    context.poll()
    requests = context.sent(EndQuorumEpochRequest)
    assert [(d, r.leader_epoch, r.leader_id) for d, _c, r in requests] == [(1, 19, 0), (2, 19, 0)]
    context.respond(requests[0], EndQuorumEpochResponse(leader_id=0, leader_epoch=19))
    context.poll()
    assert context.sent() == []
    context.time.advance(6000)
    context.poll()
    retries = context.sent(EndQuorumEpochRequest)
    assert [(d, r.leader_epoch) for d, _c, r in retries] == [(2, 19)]


def test_resign_will_complete_fetch_purgatory():
    """Mirrors KafkaRaftClientTest#testResignWillCompleteFetchPurgatory: a shutdown resigns the leader and the
    parked Fetch is answered NOT_LEADER_OR_FOLLOWER; the shutdown then times out."""
    context = Context(0, {0, 1})
    context.become_leader()
    epoch = context.current_epoch()
    context.client._running = True  # the Raft thread parks fetches (KafkaRaftClient#handleFetchRequest's purgatory)
    assert context.deliver(Context.fetch_request(epoch, 1, context.log.end_offset, epoch, 1000)) is None
    context.poll()
    assert context.last_envelope.response is None
    context.log.append_as_leader([RECORD], epoch, 0)
    context.client.shutdown(1000)
    context.poll()
    assert epoch_answer(context.last_envelope.response) == (Errors.NOT_LEADER_OR_FOLLOWER, epoch, 0)
    context.assert_resigned_leader(epoch, 0)
    context.time.advance(1000)
    context.poll()
    assert not context.client.is_running() and not context.client.is_shutting_down()
    assert isinstance(context.client.graceful_shutdown.error, TimeoutError)


def test_resign_in_older_epoch_ignored():
    """Mirrors KafkaRaftClientTest#testResignInOlderEpochIgnored."""
    context = Context(0, {0, 1})
    context.become_leader()
    epoch = context.current_epoch()
    context.client.resign(epoch - 1)
    context.poll()
    context.time.advance(ELECTION_TIMEOUT_MS * 2)
    context.poll()
    context.assert_elected_leader(epoch, 0)
    assert context.client.quorum.is_leader()


def test_handle_begin_quorum_epoch_after_user_initiated_resign():
    """Mirrors KafkaRaftClientTest#testHandleBeginQuorumEpochAfterUserInitiatedResign."""
    context = Context(0, {0, 1, 2})
    context.become_leader()
    epoch = context.current_epoch()
    context.client.resign(epoch)
    context.poll()
    assert context.client.quorum.is_resigned()
    response = context.deliver(Context.begin_epoch_request(epoch + 1, 1))
    assert epoch_answer(response) == (Errors.NONE, epoch + 1, 1)
    context.assert_elected_leader(epoch + 1, 1)
    assert context.listener.leader_changes[-1] == (1, epoch + 1)


def test_leader_should_resign_leadership_if_not_get_fetch_request_from_majority_voters():
    """Mirrors KafkaRaftClientTest#testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters:
    a voter's fetch restarts the check-quorum timer, an observer's does not."""
    context = Context(0, {0, 1, 2})
    context.become_leader()
    epoch = context.current_epoch()
    for fetcher in (None, 1, 2):
        if fetcher is not None:
            context.deliver(Context.fetch_request(epoch, fetcher, 0, 0, 0))
            context.poll()
        context.time.advance(CHECK_QUORUM_TIMEOUT_MS // 2)
        context.poll()
        assert not context.client.quorum.is_resigned()
    context.deliver(Context.fetch_request(epoch, 3, 0, 0, 0))
    context.poll()
    context.time.advance(CHECK_QUORUM_TIMEOUT_MS // 2)
    context.poll()
    context.assert_resigned_leader(epoch, 0)


def test_leader_should_not_resign_leadership_if_only_one_voters():
    """Mirrors KafkaRaftClientTest#testLeaderShouldNotResignLeadershipIfOnlyOneVoters."""
    context = Context(0, {0})
    assert context.current_leader() == 0
    context.time.advance(CHECK_QUORUM_TIMEOUT_MS)
    context.poll()
    assert context.client.quorum.is_leader()


def test_election_timeout_after_user_initiated_resign():
    """Mirrors KafkaRaftClientTest#testElectionTimeoutAfterUserInitiatedResign: an acknowledged EndQuorumEpoch
    is not sent again, a Fetch to the resigned leader is NOT_LEADER_OR_FOLLOWER, and the election timer
    makes it a candidate in the next epoch."""
    context = Context(0, {0, 1})
    context.become_leader()
    epoch = context.current_epoch()
    context.client.resign(epoch)
    context.poll()
    assert context.client.quorum.is_resigned()
    context.poll()
    (end,) = context.sent(EndQuorumEpochRequest)
    assert (end[0], end[2].leader_epoch, end[2].leader_id, end[2].preferred_successors) == (1, epoch, 0, (1,))
    context.respond(end, EndQuorumEpochResponse(leader_id=0, leader_epoch=epoch))
    context.poll()
    context.time.advance(RETRY_BACKOFF_MS)
    context.poll()
    assert context.sent() == []
    response = context.deliver(Context.fetch_request(1, -1, 0, 0, 0))
    assert epoch_answer(response) == (Errors.NOT_LEADER_OR_FOLLOWER, epoch, 0)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    assert context.client.quorum.is_candidate() and context.current_epoch() == epoch + 1
    assert context.listener.leader_changes[-1] == (-1, epoch + 1)


def test_cannot_resign_with_larger_epoch_than_current_epoch():
    """Mirrors KafkaRaftClientTest#testCannotResignWithLargerEpochThanCurrentEpoch."""
    context = Context(0, {0, 1})
    context.become_leader()
    with pytest.raises(ValueError):
        context.client.resign(context.current_epoch() + 1)


def test_cannot_resign_if_not_leader():
    """Mirrors KafkaRaftClientTest#testCannotResignIfNotLeader."""
    context = Context(0, {0, 1}, elected=(2, 1))
    assert context.current_leader() == 1
    with pytest.raises(ValueError):
        context.client.resign(2)


def test_cannot_resign_if_observer():
    """Mirrors KafkaRaftClientTest#testCannotResignIfObserver."""
    context = Context(0, {1, 2})
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch[0] in (1, 2) and (fetch[2].current_leader_epoch, fetch[2].fetch_offset) == (0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, error=Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)
    with pytest.raises(IllegalStateException):
        context.client.resign(5)


# ------------------------------------------------------------------------------------ graceful shutdown


def test_grant_votes_when_shutting_down():
    """Mirrors KafkaRaftClientTest#testGrantVotesWhenShuttingDown."""
    context = Context.initialize_as_leader(0, {0, 1}, 2)
    context.client.shutdown(1000)
    assert context.client.is_shutting_down()
    response = context.deliver(Context.vote_request(3, 1, context.log.last_fetched_epoch, context.log.end_offset))
    context.poll()
    assert context.client.quorum.is_voted()
    context.assert_voted_candidate(3, 1)
    assert vote_answer(response) == (Errors.NONE, 3, -1, True)


def test_leader_graceful_shutdown():
    """Mirrors KafkaRaftClientTest#testLeaderGracefulShutdown: resign with EndQuorumEpoch, vote for the
    successor, finish once it leads."""
    context = Context.initialize_as_leader(0, {0, 1}, 1)
    shutdown = context.client.shutdown(5000)
    assert context.client.is_shutting_down() and context.client.is_running() and not shutdown.is_finished()
    context.poll()
    context.poll()
    assert context.client.is_shutting_down() and context.client.is_running()
    (end,) = context.sent(EndQuorumEpochRequest)
    assert (end[0], end[2].leader_epoch) == (1, 1)
    response = context.deliver(Context.vote_request(2, 1, 1, 1))
    context.poll()
    assert vote_answer(response) == (Errors.NONE, 2, -1, True)
    context.deliver(Context.begin_epoch_request(2, 1))
    context.poll()
    assert not context.client.is_running() and not context.client.is_shutting_down()
    assert shutdown.is_finished() and shutdown.error is None


def test_end_quorum_epoch_sent_based_on_fetch_offset():
    """Mirrors KafkaRaftClientTest#testEndQuorumEpochSentBasedOnFetchOffset: successors by descending fetch offset."""
    context = Context.initialize_as_leader(0, {0, 1, 2}, 1)
    assert context.deliver(Context.fetch_request(1, 1, 1, 1, 0)).high_watermark == 1
    context.client.schedule_atomic_append(1, [RECORD, RECORD])
    context.poll()
    assert context.deliver(Context.fetch_request(1, 2, 3, 1, 0)).high_watermark == 3
    context.client.shutdown(ELECTION_TIMEOUT_MS * 2)
    assert context.client.is_running()
    context.poll()
    context.poll()
    assert context.client.is_running()
    ends = context.sent(EndQuorumEpochRequest)
    assert [(d, r.leader_epoch, r.preferred_successors) for d, _c, r in ends] == [(1, 1, (2, 1)), (2, 1, (2, 1))]


def test_leader_graceful_shutdown_timeout():
    """Mirrors KafkaRaftClientTest#testLeaderGracefulShutdownTimeout."""
    context = Context.initialize_as_leader(0, {0, 1}, 1)
    shutdown = context.client.shutdown(5000)
    assert context.client.is_running() and not shutdown.is_finished()
    context.poll()
    context.poll()
    assert context.client.is_running()
    (end,) = context.sent(EndQuorumEpochRequest)
    assert (end[0], end[2].leader_epoch) == (1, 1)
    context.time.advance(5000)
    context.poll()
    assert not context.client.is_running()
    assert shutdown.is_finished() and isinstance(shutdown.error, TimeoutError)


def test_follower_graceful_shutdown():
    """Mirrors KafkaRaftClientTest#testFollowerGracefulShutdown."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.assert_elected_leader(5, 1)
    context.poll()
    shutdown = context.client.shutdown(5000)
    assert context.client.is_running() and not shutdown.is_finished()
    context.poll()
    assert not context.client.is_running() and shutdown.is_finished() and shutdown.error is None


def test_observer_graceful_shutdown():
    """Mirrors KafkaRaftClientTest#testObserverGracefulShutdown."""
    context = Context(0, {1, 2}, unknown=5)
    context.poll()
    context.assert_unknown_leader(5)
    shutdown = context.client.shutdown(5000)
    assert context.client.is_running() and not shutdown.is_finished()
    context.poll()
    assert not context.client.is_running() and shutdown.is_finished() and shutdown.error is None


def test_graceful_shutdown_single_member_quorum():
    """Mirrors KafkaRaftClientTest#testGracefulShutdownSingleMemberQuorum."""
    context = Context(0, {0})
    context.assert_elected_leader(1, 0)
    context.poll()
    assert context.sent() == []
    context.client.shutdown(5000)
    assert context.client.is_running()
    context.poll()
    assert not context.client.is_running()


# ------------------------------------------------------------------------------------ BeginQuorumEpoch / EndQuorumEpoch


def test_handle_begin_quorum_request():
    """Mirrors KafkaRaftClientTest#testHandleBeginQuorumRequest: a voter that voted follows the candidate it elected."""
    context = Context(0, {0, 1}, voted=(2, 1))
    response = context.deliver(Context.begin_epoch_request(2, 1))
    context.assert_elected_leader(2, 1)
    assert epoch_answer(response) == (Errors.NONE, 2, 1)


def test_handle_begin_quorum_response():
    """Mirrors KafkaRaftClientTest#testHandleBeginQuorumResponse: a resigned leader follows the next epoch's leader."""
    context = Context(0, {0, 1}, elected=(2, 0))
    context.deliver(Context.begin_epoch_request(3, 1))
    context.assert_elected_leader(3, 1)


def test_end_quorum_ignored_as_candidate_if_older_epoch():
    """Mirrors KafkaRaftClientTest#testEndQuorumIgnoredAsCandidateIfOlderEpoch: FENCED_LEADER_EPOCH, and the
    candidate's election timer is not touched."""
    context = Context(0, {0, 1}, unknown=4, jitter=85)
    context.time.advance(ELECTION_TIMEOUT_MS + 85)
    context.poll()
    context.assert_voted_candidate(5, 0)
    response = context.deliver(Context.end_epoch_request(3, 1, [0]))
    context.poll()
    assert epoch_answer(response) == (Errors.FENCED_LEADER_EPOCH, 5, -1)
    context.time.advance(ELECTION_TIMEOUT_MS + 85 - 1)
    context.poll()
    context.assert_voted_candidate(5, 0)
    context.time.advance(1)
    context.poll()  # the election timed out: backing off
    context.assert_voted_candidate(5, 0)
    context.time.advance(ELECTION_BACKOFF_MAX_MS)
    context.poll()
    context.assert_voted_candidate(6, 0)


def test_end_quorum_ignored_as_leader_if_older_epoch():
    """Mirrors KafkaRaftClientTest#testEndQuorumIgnoredAsLeaderIfOlderEpoch."""
    context = Context.initialize_as_leader(0, {0, 1, 2}, 7)
    response = context.deliver(Context.end_epoch_request(5, 1, [0, 2]))
    assert epoch_answer(response) == (Errors.FENCED_LEADER_EPOCH, 7, 0)
    context.time.advance(FETCH_TIMEOUT_MS - 1)
    context.poll()
    context.assert_elected_leader(7, 0)


def test_end_quorum_starts_new_election_immediately_if_follower_unattached():
    """Mirrors KafkaRaftClientTest#testEndQuorumStartsNewElectionImmediatelyIfFollowerUnattached."""
    context = Context(0, {0, 1, 2}, unknown=2)
    response = context.deliver(Context.end_epoch_request(2, 1, [0, 2]))
    assert epoch_answer(response) == (Errors.NONE, 2, 1)
    context.poll()
    context.assert_voted_candidate(3, 0)


def test_handle_end_quorum_request():
    """Mirrors KafkaRaftClientTest#testHandleEndQuorumRequest."""
    context = Context(0, {0, 1}, elected=(2, 1))
    response = context.deliver(Context.end_epoch_request(2, 1, [0]))
    assert epoch_answer(response) == (Errors.NONE, 2, 1)
    context.poll()
    context.assert_voted_candidate(3, 0)


def test_handle_end_quorum_request_with_lower_priority_to_become_leader():
    """Mirrors KafkaRaftClientTest#testHandleEndQuorumRequestWithLowerPriorityToBecomeLeader: the second
    preferred successor waits (strict exponential backoff) before standing, still fetching meanwhile."""
    context = Context(0, {0, 1, 3}, elected=(2, 1))
    response = context.deliver(Context.end_epoch_request(2, 1, [3, 0]))
    assert epoch_answer(response) == (Errors.NONE, 2, 1)
    context.time.advance(1)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[0], fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (1, 2, 0, 0)
    context.time.advance(RETRY_BACKOFF_MS)
    context.poll()
    context.poll()
    votes = context.sent(VoteRequest)
    assert [r for _d, _c, r in votes] == [Context.vote_request(3, 0, 0, 0)] * 2
    context.assert_voted_candidate(3, 0)


@pytest.mark.parametrize("kind", ["begin", "end"])
def test_quorum_epoch_request_cluster_id_validation(kind):
    """Mirrors KafkaRaftClientTest#testBeginQuorumEpochRequestClusterIdValidation and
    KafkaRaftClientTest#testEndQuorumEpochRequestClusterIdValidation: a foreign cluster id is INCONSISTENT_CLUSTER_ID."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)

    def build(cluster_id):
        if kind == "begin":
            return Context.begin_epoch_request(5, 0, cluster_id=cluster_id)
        return Context.end_epoch_request(5, 0, [1], cluster_id=cluster_id)

    assert epoch_answer(context.deliver(build(CLUSTER))) == (Errors.NONE, 5, 0)
    assert Errors.for_code(context.deliver(build("invalid-uuid")).error_code) is Errors.INCONSISTENT_CLUSTER_ID


def test_vote_request_cluster_id_validation():
    """Mirrors KafkaRaftClientTest#testVoteRequestClusterIdValidation."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    assert vote_answer(context.deliver(Context.vote_request(5, 0, 0, 0))) == (Errors.NONE, 5, 0, False)
    response = context.deliver(Context.vote_request(5, 0, 0, 0, cluster_id="invalid-uuid"))
    assert Errors.for_code(response.error_code) is Errors.INCONSISTENT_CLUSTER_ID


# ------------------------------------------------------------------------------------ Fetch on the leader


def test_listener_commit_callback_after_leader_write():
    """Mirrors KafkaRaftClientTest#testListenerCommitCallbackAfterLeaderWrite: the HW moves with the follower's
    fetch offset; the listener hears the append once it is committed."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    context.poll()
    assert context.client.quorum.high_watermark() is None and context.log.end_offset == 1
    response = context.deliver(Context.fetch_request(5, 1, 1, 5, 0))
    assert epoch_answer(response) == (Errors.NONE, 5, 0)
    assert context.client.quorum.high_watermark() == 1
    offset = context.client.schedule_atomic_append(5, [RECORD, RECORD, RECORD])
    context.poll()
    assert context.listener.commits[-1] == (0, 0)
    response = context.deliver(Context.fetch_request(5, 1, 1, 5, 500))
    assert epoch_answer(response) == (Errors.NONE, 5, 0)
    assert context.client.quorum.high_watermark() == 1 and context.listener.commits[-1] == (0, 0)
    context.deliver(Context.fetch_request(5, 1, 4, 5, 500))
    context.poll()
    assert context.client.quorum.high_watermark() == 4
    assert context.listener.commits[-1] == (1, offset) and offset == 3


def test_leader_immediately_sends_diverging_epoch():
    """Mirrors KafkaRaftClientTest#testLeaderImmediatelySendsDivergingEpoch: epoch 2 ends where epoch 3 starts (3)."""
    context = Context(0, {0, 1}, unknown=5, log_batches=((1, 3), (3, 3), (5, 3)))
    context.become_leader()
    epoch = context.current_epoch()
    context.client._running = True  # would park the fetch, but a diverging answer goes at once
    response = context.deliver(Context.fetch_request(epoch, 1, 6, 2, 500))
    assert epoch_answer(response) == (Errors.NONE, epoch, 0)
    assert (response.diverging_epoch, response.diverging_end_offset) == (1, 3)


def test_invalid_fetch_request():
    """Mirrors KafkaRaftClientTest#testInvalidFetchRequest."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    for epoch, offset, last_epoch, max_wait, error in (
            (5, -5, 0, 0, Errors.INVALID_REQUEST), (5, 0, -1, 0, Errors.INVALID_REQUEST),
            (5, 0, 6, 0, Errors.INVALID_REQUEST), (6, 0, 0, 0, Errors.UNKNOWN_LEADER_EPOCH),
            (5, 0, 0, -1, Errors.INVALID_REQUEST)):
        response = context.deliver(Context.fetch_request(epoch, 1, offset, last_epoch, max_wait))
        assert epoch_answer(response) == (error, 5, 0)


def test_fetch_request_cluster_id_validation():
    """Mirrors KafkaRaftClientTest#testFetchRequestClusterIdValidation."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    assert epoch_answer(context.deliver(Context.fetch_request(5, 1, -5, 0, 0))) == (Errors.INVALID_REQUEST, 5, 0)
    response = context.deliver(Context.fetch_request(5, 1, -5, 0, 0, cluster_id="invalid-uuid"))
    assert Errors.for_code(response.error_code) is Errors.INCONSISTENT_CLUSTER_ID


def test_purgatory_fetch_timeout():
    """Mirrors KafkaRaftClientTest#testPurgatoryFetchTimeout: an empty answer once max wait passes."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    context.client._running = True
    assert context.deliver(Context.fetch_request(5, 1, 1, 5, 500)) is None
    context.poll()
    assert context.last_envelope.response is None
    context.time.advance(500)
    context.poll()
    response = context.last_envelope.response
    assert epoch_answer(response) == (Errors.NONE, 5, 0) and response.batches == ()


def test_purgatory_fetch_satisfied_by_write():
    """Mirrors KafkaRaftClientTest#testPurgatoryFetchSatisfiedByWrite."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    context.client._running = True
    assert context.deliver(Context.fetch_request(5, 1, 1, 5, 500)) is None
    context.poll()
    context.client.schedule_atomic_append(5, [RECORD, RECORD, RECORD])
    context.poll()
    response = context.last_envelope.response
    assert epoch_answer(response) == (Errors.NONE, 5, 0)
    assert [(b.base_offset, b.last_offset, b.records) for b in response.batches] == [(1, 3, (RECORD,) * 3)]


def test_purgatory_fetch_completed_by_follower_transition():
    """Mirrors KafkaRaftClientTest#testPurgatoryFetchCompletedByFollowerTransition."""
    context = Context.initialize_as_leader(0, {0, 1, 2}, 5)
    context.client._running = True
    assert context.deliver(Context.fetch_request(5, 1, 1, 5, 500)) is None
    parked = context.last_envelope
    context.poll()
    assert parked.response is None
    response = context.deliver(Context.begin_epoch_request(6, 2))
    context.assert_elected_leader(6, 2)
    assert epoch_answer(response) == (Errors.NONE, 6, 2)
    assert epoch_answer(parked.response) == (Errors.NOT_LEADER_OR_FOLLOWER, 6, 2) and parked.response.batches == ()


def test_fetch_should_be_treated_as_leader_acknowledgement():
    """Mirrors KafkaRaftClientTest#testFetchShouldBeTreatedAsLeaderAcknowledgement: no BeginQuorumEpoch retry
    to a voter that fetched."""
    context = Context(0, {0, 1}, unknown=4)
    context.time.advance(ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    for outbound in context.sent(VoteRequest):
        context.respond(outbound, VoteResponse(leader_epoch=5, vote_granted=True))
    context.poll()
    context.assert_elected_leader(5, 0)
    (begin,) = context.sent(BeginQuorumEpochRequest)
    assert (begin[0], begin[2].leader_epoch) == (1, 5)
    response = context.deliver(Context.fetch_request(5, 1, 0, 0, 0))
    assert epoch_answer(response) == (Errors.NONE, 5, 0)
    context.time.advance(REQUEST_TIMEOUT_MS)
    context.poll()
    assert context.sent() == []


def _linger_leader(linger_ms: int = 50) -> tuple["Context", list[int]]:
    """A two-voter leader with ``linger_ms`` (Builder#withAppendLingerMs) and a record of its wake-ups
    (the message queue's wakeupRequested: each entry is the log end offset when a wake-up was asked)."""
    context = Context(0, {0, 1}, append_linger_ms=linger_ms)
    context.become_leader()
    wakeups: list[int] = []
    context.client._wake = lambda: wakeups.append(context.log.end_offset)  # type: ignore[method-assign]
    return context, wakeups


@pytest.mark.parametrize("request_kind", ["begin_epoch", "vote_up_to_date", "vote_stale"])
def test_accumulator_cleared_after_losing_leadership(request_kind):
    """Mirrors KafkaRaftClientTest#testAccumulatorClearedAfterBecomingFollower,
    #testAccumulatorClearedAfterBecomingVoted and #testAccumulatorClearedAfterBecomingUnattached:
    an append still lingering when a higher epoch arrives is dropped with the leader's accumulator
    (Kafka counts the buffers handed back to its memory pool; here the record never reaches the log)."""
    context, _wakeups = _linger_leader()
    assert context.current_leader() == 0
    epoch = context.current_epoch()
    accumulator = context.client.quorum.state.accumulator
    assert context.log.end_offset == 1
    assert context.client.schedule_atomic_append(epoch, [RECORD]) == 1
    assert accumulator.is_empty() is False
    if request_kind == "begin_epoch":
        context.deliver(Context.begin_epoch_request(epoch + 1, 1))
        context.assert_elected_leader(epoch + 1, 1)
    elif request_kind == "vote_up_to_date":
        context.deliver(Context.vote_request(epoch + 1, 1, epoch, context.log.end_offset))
        context.assert_voted_candidate(epoch + 1, 1)
    else:
        context.deliver(Context.vote_request(epoch + 1, 1, epoch, 0))
        context.assert_unknown_leader(epoch + 1)
    assert (accumulator.is_empty(), accumulator.num_completed_batches(), accumulator.drain()) == (True, 0, [])
    context.poll()
    assert context.log.end_offset == 1


def test_channel_woken_up_if_linger_timeout_reached_without_append():
    """Mirrors KafkaRaftClientTest#testChannelWokenUpIfLingerTimeoutReachedWithoutAppend: the first append
    wakes the Raft thread, whose polls then sleep what is left of the linger time, and the batch is
    written once it has passed."""
    context, wakeups = _linger_leader(50)
    assert context.current_leader() == 0 and context.log.end_offset == 1
    epoch = context.current_epoch()
    assert context.client.schedule_atomic_append(epoch, [RECORD]) == 1
    assert wakeups == [1]
    assert context.poll() == 50
    context.time.advance(20)
    assert context.poll() == 30
    context.time.advance(30)
    context.poll()
    assert context.log.end_offset == 2


def test_channel_woken_up_if_linger_timeout_reached_during_append():
    """Mirrors KafkaRaftClientTest#testChannelWokenUpIfLingerTimeoutReachedDuringAppend: an append made
    after the linger time has run out wakes the Raft thread at once, and both records go to the log
    in one batch on its next poll."""
    context, wakeups = _linger_leader(50)
    assert context.log.end_offset == 1
    epoch = context.current_epoch()
    assert context.client.schedule_atomic_append(epoch, [RECORD]) == 1
    assert context.poll() == 50
    del wakeups[:]
    context.time.advance(50)
    assert context.client.schedule_atomic_append(epoch, [RECORD]) == 2
    assert wakeups == [1]
    context.poll()
    assert context.log.end_offset == 3
    assert [(b.base_offset, len(b.records)) for b in context.log.batches[1:]] == [(1, 2)]


def test_leader_append_single_member_quorum():
    """Mirrors KafkaRaftClientTest#testLeaderAppendSingleMemberQuorum: committed at once; an observer reads the
    LeaderChangeMessage batch, then the data batch."""
    context = Context(0, {0})
    now = context.time.milliseconds()
    context.poll()  # pollUntil the LeaderChangeMessage is written
    context.assert_elected_leader(1, 0)
    assert context.client.quorum.high_watermark() == 1
    context.poll()
    context.client.schedule_atomic_append(1, [RECORD, RECORD, RECORD])
    context.poll()
    assert context.client.quorum.high_watermark() == 4
    batches, offset, last_epoch = [], 0, 0
    while True:
        response = context.deliver(Context.fetch_request(1, 1, offset, last_epoch, 0))
        assert epoch_answer(response) == (Errors.NONE, 1, 0)
        if not response.batches:
            break
        batches.extend(response.batches)
        offset, last_epoch = batches[-1].last_offset + 1, batches[-1].epoch
    assert len(batches) == 2
    control, data = batches
    assert control.is_control and control.append_timestamp == now
    message = control.control_records[0]
    assert (message.leader_id, message.voters, message.granting_voters) == (0, (0,), (0,))
    assert data.epoch == 1 and data.records == (RECORD,) * 3


# ------------------------------------------------------------------------------------ Fetch on the follower


def test_follower_replication():
    """Mirrors KafkaRaftClientTest#testFollowerReplication."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (5, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(0, 3, 2)], 0))
    context.poll()
    assert context.log.end_offset == 2


def test_empty_record_set_in_fetch_response():
    """Mirrors KafkaRaftClientTest#testEmptyRecordSetInFetchResponse: the follower's HW follows the leader's,
    capped by its log end."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    context.respond(fetch, Context.fetch_response(5, 1, (), 0))
    context.poll()
    assert context.log.end_offset == 0 and context.client.quorum.high_watermark() == 0
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (5, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(0, 5, 2)], 0))
    context.poll()
    assert context.log.end_offset == 2 and context.client.quorum.high_watermark() == 0
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (2, 5)
    context.respond(fetch, Context.fetch_response(5, 1, (), 2))
    context.poll()
    assert context.log.end_offset == 2 and context.client.quorum.high_watermark() == 2


def test_follower_log_reconciliation():
    """Mirrors KafkaRaftClientTest#testFollowerLogReconciliation: truncate to the diverging end offset, fetch again."""
    context = Context(0, {0, 1}, elected=(5, 1), log_batches=((3, 2), (3, 1)))
    assert context.log.end_offset == 3
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (3, 3)
    context.respond(fetch, MetadataFetchResponse(leader_id=1, leader_epoch=5, high_watermark=1,
                                                 diverging_epoch=3, diverging_end_offset=2))
    context.poll()
    assert context.log.end_offset == 2
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (5, 2, 3)


def test_fetch_response_ignored_after_becoming_candidate():
    """Mirrors KafkaRaftClientTest#testFetchResponseIgnoredAfterBecomingCandidate."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    context.time.advance(FETCH_TIMEOUT_MS)
    context.poll()
    context.assert_voted_candidate(6, 0)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(0, 3, 2)], 0))
    context.poll()
    assert context.log.end_offset == 0
    context.assert_voted_candidate(6, 0)


def test_fetch_response_ignored_after_becoming_follower_of_different_leader():
    """Mirrors KafkaRaftClientTest#testFetchResponseIgnoredAfterBecomingFollowerOfDifferentLeader."""
    context = Context(0, {0, 1, 2}, elected=(5, 1))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    context.deliver(Context.begin_epoch_request(6, 2))
    context.poll()
    context.assert_elected_leader(6, 2)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(0, 3, 2)], 0))
    context.poll()
    assert context.log.end_offset == 0
    context.assert_elected_leader(6, 2)


# ------------------------------------------------------------------------------------ listeners


def claimed(listener: RecordingListener, local_id: int = 0) -> int | None:
    """MockListener#currentClaimedEpoch: the epoch of the last leader change naming the local node."""
    if listener.leader_changes and listener.leader_changes[-1][0] == local_id:
        return listener.leader_changes[-1][1]
    return None


def last_commit_offset(listener: RecordingListener) -> int | None:
    return listener.commits[-1][1] if listener.commits else None


def test_handle_leader_change_fires_after_listener_reaches_epoch_start_offset_on_empty_log():
    """Mirrors KafkaRaftClientTest#testHandleLeaderChangeFiresAfterListenerReachesEpochStartOffsetOnEmptyLog."""
    context = Context(0, {0, 1})
    context.become_leader()
    context.poll()
    epoch = context.current_epoch()
    assert context.log.end_offset == 1
    assert (claimed(context.listener), last_commit_offset(context.listener)) == (None, None)
    context.deliver(Context.fetch_request(epoch, 1, 0, 0, 0))
    context.poll()
    assert (claimed(context.listener), last_commit_offset(context.listener)) == (None, None)
    context.deliver(Context.fetch_request(epoch, 1, 1, epoch, 0))
    context.poll()
    assert last_commit_offset(context.listener) == 0
    context.poll()
    assert claimed(context.listener) == epoch


def test_handle_leader_change_fires_after_listener_reaches_epoch_start_offset():
    """Mirrors KafkaRaftClientTest#testHandleLeaderChangeFiresAfterListenerReachesEpochStartOffset: the
    claim comes once the listener has read the three earlier batches and the LeaderChangeMessage at 9."""
    context = Context(0, {0, 1}, unknown=4, log_batches=((1, 3), (1, 3), (2, 3)))
    context.become_leader()
    context.poll()
    assert context.log.end_offset == 10
    assert (claimed(context.listener), last_commit_offset(context.listener)) == (None, None)
    context.deliver(Context.fetch_request(5, 1, 3, 1, 0))
    context.poll()
    assert (claimed(context.listener), last_commit_offset(context.listener)) == (None, None)
    context.deliver(Context.fetch_request(5, 1, 10, 5, 0))
    context.poll()
    assert context.listener.commits == [(0, 2), (3, 5), (6, 8), (9, 9)]
    assert claimed(context.listener) == 5 and last_commit_offset(context.listener) == 9


def test_late_registered_listener_catches_up():
    """Mirrors KafkaRaftClientTest#testLateRegisteredListenerCatchesUp."""
    context = Context(0, {0, 1}, unknown=4, log_batches=((1, 3), (1, 3), (2, 3)))
    context.become_leader()
    context.poll()
    context.deliver(Context.fetch_request(5, 1, 10, 5, 0))
    context.poll()
    assert context.client.quorum.high_watermark() == 10
    assert (last_commit_offset(context.listener), claimed(context.listener)) == (9, 5)
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    assert (last_commit_offset(second), claimed(second)) == (9, 5)
    assert second.commits == context.listener.commits
    assert claimed(context.listener) == 5


def test_handle_commit_callback_fires_after_follower_high_watermark_advances():
    """Mirrors KafkaRaftClientTest#testHandleCommitCallbackFiresAfterFollowerHighWatermarkAdvances."""
    context = Context(0, {0, 1}, elected=(5, 1))
    assert context.client.quorum.high_watermark() is None
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[0], fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (1, 5, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(0, 3, 3)], 0))
    context.poll()
    assert context.client.quorum.high_watermark() == 0 and context.listener.commits == []
    assert claimed(context.listener) is None
    (fetch,) = context.sent(MetadataFetchRequest)
    assert (fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (3, 3)
    context.respond(fetch, Context.fetch_response(5, 1, [Context.batch(3, 3, 3)], 3))
    context.poll()
    assert context.client.quorum.high_watermark() == 3
    assert context.listener.commits == [(0, 2)] and claimed(context.listener) is None


def test_handle_commit_callback_fires_in_voted_state():
    """Mirrors KafkaRaftClientTest#testHandleCommitCallbackFiresInVotedState: a listener registered after the
    leader voted for another candidate still reads up to the HW, and claims nothing."""
    context = Context(0, {0, 1}, unknown=6, log_batches=((2, 3), (4, 3), (4, 3)))
    context.become_leader()
    context.deliver(Context.fetch_request(7, 1, 10, 7, 0))
    context.poll()
    assert context.client.quorum.high_watermark() == 10
    context.deliver(Context.vote_request(8, 1, 7, 10))
    context.assert_voted_candidate(8, 1)
    assert context.client.quorum.high_watermark() == 10
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    context.assert_voted_candidate(8, 1)
    assert last_commit_offset(second) == 9 and claimed(second) is None


def test_handle_commit_callback_fires_in_candidate_state():
    """Mirrors KafkaRaftClientTest#testHandleCommitCallbackFiresInCandidateState."""
    context = Context(0, {0, 1}, unknown=6, log_batches=((2, 3), (4, 3), (4, 3)))
    context.become_leader()
    assert context.log.end_offset == 10
    response = context.deliver(Context.fetch_request(7, 1, 10, 7, 0))
    assert epoch_answer(response) == (Errors.NONE, 7, 0)
    assert context.client.quorum.high_watermark() == 10
    vote = context.deliver(Context.vote_request(8, 1, 7, 9))  # a shorter log: refused
    assert vote.vote_granted is False
    context.assert_unknown_leader(8)
    assert context.client.quorum.high_watermark() == 10
    context.time.advance(ELECTION_TIMEOUT_MS * 2)
    context.poll()
    context.assert_voted_candidate(9, 0)
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    context.assert_voted_candidate(9, 0)
    assert last_commit_offset(second) == 9 and claimed(second) is None


def test_handle_leader_change_fires_after_unattached_registration():
    """Mirrors KafkaRaftClientTest#testHandleLeaderChangeFiresAfterUnattachedRegistration."""
    context = Context(0, {0, 1}, unknown=7)
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    assert second.leader_changes == [(-1, 7)]
    context.deliver(Context.begin_epoch_request(7, 1))
    assert second.leader_changes == [(-1, 7), (1, 7)]


def test_handle_leader_change_fires_after_follower_registration():
    """Mirrors KafkaRaftClientTest#testHandleLeaderChangeFiresAfterFollowerRegistration."""
    context = Context(0, {0, 1}, elected=(7, 1))
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    assert second.leader_changes == [(1, 7)]


def test_reregistration_changes_listener_context():
    """Mirrors KafkaRaftClientTest#testReregistrationChangesListenerContext: an unregistered listener hears
    no later commit."""
    context = Context(0, {0, 1}, unknown=4, log_batches=((1, 3), (1, 3), (2, 3)))
    context.become_leader()
    context.poll()
    assert context.log.end_offset == 10
    context.deliver(Context.fetch_request(5, 1, 10, 5, 0))  # advanceLocalLeaderHighWatermarkToLogEndOffset
    context.poll()
    assert last_commit_offset(context.listener) == 9
    second = RecordingListener()
    context.client.register(second)
    context.poll()
    assert last_commit_offset(second) == 9
    context.client.unregister(second)
    assert context.client.schedule_atomic_append(5, [RECORD]) == 10
    context.poll()
    context.deliver(Context.fetch_request(5, 1, 11, 5, 0))
    context.poll()
    assert last_commit_offset(context.listener) == 10 and last_commit_offset(second) == 9


# ------------------------------------------------------------------------------------ DescribeQuorum


def test_describe_quorum_non_leader():
    """Mirrors KafkaRaftClientTest#testDescribeQuorumNonLeader."""
    context = Context(0, {0, 1, 2}, unknown=2)
    answer = context.client.handle_describe_quorum_request()
    assert Errors.for_code(answer.error_code) is Errors.NOT_LEADER_OR_FOLLOWER
    assert (answer.current_voters, answer.observers) == ((), ())


def test_describe_quorum():
    """Mirrors KafkaRaftClientTest#testDescribeQuorum: end offsets and fetch / caught-up times per voter; an
    observer behind the HW was never caught up (-1)."""
    context = Context.initialize_as_leader(0, {0, 1, 2}, 1)
    lagging_fetch_time = context.time.milliseconds()
    assert context.deliver(Context.fetch_request(1, 1, 1, 1, 0)).high_watermark == 1
    context.client.schedule_atomic_append(1, [RECORD, RECORD])
    context.poll()
    context.time.advance(100)
    close_fetch_time = context.time.milliseconds()
    assert context.deliver(Context.fetch_request(1, 2, 3, 1, 0)).high_watermark == 3
    context.time.advance(100)
    observer_fetch_time = context.time.milliseconds()
    assert context.deliver(Context.fetch_request(1, 3, 0, 0, 0)).high_watermark == 3
    context.time.advance(100)
    now = context.time.milliseconds()
    answer = context.client.handle_describe_quorum_request()
    assert (answer.error_code, answer.leader_id, answer.leader_epoch, answer.high_watermark) == (0, 0, 1, 3)
    assert answer.current_voters == (
        DescribeQuorumReplicaState(0, 3, now, now),
        DescribeQuorumReplicaState(1, 1, lagging_fetch_time, lagging_fetch_time),
        DescribeQuorumReplicaState(2, 3, close_fetch_time, close_fetch_time),
    )
    assert answer.observers == (DescribeQuorumReplicaState(3, 0, observer_fetch_time, -1),)


# ------------------------------------------------------------------------------------ observers


def discover_leader_as_observer(context: Context, leader: int, epoch: int) -> None:
    """RaftClientTestContext#discoverLeaderAsObserver: the first fetch's answer names the leader."""
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch[0] in context.voters
    assert (fetch[2].current_leader_epoch, fetch[2].fetch_offset, fetch[2].last_fetched_epoch) == (0, 0, 0)
    context.respond(fetch, Context.fetch_response(epoch, leader, (), 0))
    context.poll()
    context.assert_elected_leader(epoch, leader)


def fetch_data(outbound) -> tuple:
    """(destination, current leader epoch, fetch offset, last fetched epoch) (assertFetchRequestData)."""
    request = outbound[2]
    return outbound[0], request.current_leader_epoch, request.fetch_offset, request.last_fetched_epoch


def test_observer_quorum_discovery_failure():
    """Mirrors KafkaRaftClientTest#testObserverQuorumDiscoveryFailure: an error answer backs the server off;
    after the retry backoff a bootstrap server is asked again."""
    context = Context(0, {1, 2})
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch_data(fetch) == (1, 0, 0, 0)
    context.respond(fetch, Context.fetch_response(-1, -1, (), -1, Errors.UNKNOWN_SERVER_ERROR))
    assert context.client.request_manager.is_backing_off(1)
    context.time.advance(RETRY_BACKOFF_MS)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch_data(fetch) == (1, 0, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, (), 0, Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)


def test_observer_send_discovery_fetch_after_fetch_timeout():
    """Mirrors KafkaRaftClientTest#testObserverSendDiscoveryFetchAfterFetchTimeout."""
    context = Context(0, {1, 2}, jitter=1)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch_data(fetch) == (2, 0, 0, 0)
    context.respond(fetch, Context.fetch_response(5, 1, (), 0, Errors.FENCED_LEADER_EPOCH))
    context.assert_elected_leader(5, 1)
    context.time.advance(FETCH_TIMEOUT_MS)
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch_data(fetch) == (2, 5, 0, 0)


def test_observer_handle_retry_fetch_to_bootstrap_server():
    """Mirrors KafkaRaftClientTest#testObserverHandleRetryFetchtToBootstrapServer: the fetch to the leader
    timed out, a bootstrap server is asked; the late answer to the first fetch is ignored."""
    context = Context(0, {1, 2}, jitter=1)
    context.poll()
    (discovery,) = context.sent(MetadataFetchRequest)
    assert fetch_data(discovery) == (2, 0, 0, 0)
    context.respond(discovery, Context.fetch_response(5, 1, (), 0, Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)
    (to_leader,) = context.sent(MetadataFetchRequest)
    assert fetch_data(to_leader) == (1, 5, 0, 0)
    context.time.advance(REQUEST_TIMEOUT_MS)
    context.poll()
    (retry,) = context.sent(MetadataFetchRequest)
    assert fetch_data(retry) == (2, 5, 0, 0)
    context.respond(to_leader, Context.fetch_response(5, 1, [Context.batch(0, 3, 2)], 0))
    context.poll()
    assert context.log.end_offset == 0
    context.respond(retry, Context.fetch_response(5, 1, [Context.batch(0, 3, 2)], 0))
    context.poll()
    assert context.log.end_offset == 2  # the answer to the retry is taken


def test_observer_handle_retry_fetch_to_leader():
    """Mirrors KafkaRaftClientTest#testObserverHandleRetryFetchToLeader: while the retry is in flight nothing
    else is sent."""
    context = Context(0, {1, 2}, jitter=1)
    context.poll()
    (discovery,) = context.sent(MetadataFetchRequest)
    context.respond(discovery, Context.fetch_response(5, 1, (), 0, Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)
    (to_leader,) = context.sent(MetadataFetchRequest)
    assert fetch_data(to_leader) == (1, 5, 0, 0)
    context.time.advance(REQUEST_TIMEOUT_MS)
    context.poll()
    (retry,) = context.sent(MetadataFetchRequest)
    assert fetch_data(retry) == (2, 5, 0, 0)
    context.poll()
    assert context.sent() == []


def test_observer_leader_rediscovery_after_broker_not_available_error():
    """Mirrors KafkaRaftClientTest#testObserverLeaderRediscoveryAfterBrokerNotAvailableError: the leader's
    connection backs off, another voter is asked and names the leader."""
    context = Context(0, {1, 2})
    discover_leader_as_observer(context, 1, 5)
    context.poll()
    (first,) = context.sent(MetadataFetchRequest)
    assert fetch_data(first) == (1, 5, 0, 0)
    context.respond(first, Context.fetch_response(5, -1, (), -1, Errors.BROKER_NOT_AVAILABLE))
    context.poll()
    (second,) = context.sent(MetadataFetchRequest)
    assert fetch_data(second) == (2, 5, 0, 0)
    context.respond(second, Context.fetch_response(5, 1, (), 0, Errors.NOT_LEADER_OR_FOLLOWER))
    context.poll()
    context.assert_elected_leader(5, 1)


def test_observer_leader_rediscovery_after_request_timeout():
    """Mirrors KafkaRaftClientTest#testObserverLeaderRediscoveryAfterRequestTimeout."""
    context = Context(0, {1, 2}, jitter=1)
    context.poll()
    (discovery,) = context.sent(MetadataFetchRequest)
    context.respond(discovery, Context.fetch_response(5, 1, (), 0))
    context.poll()
    context.assert_elected_leader(5, 1)
    (first,) = context.sent(MetadataFetchRequest)
    assert fetch_data(first) == (1, 5, 0, 0)
    context.time.advance(REQUEST_TIMEOUT_MS)
    context.poll()
    (second,) = context.sent(MetadataFetchRequest)
    assert fetch_data(second) == (2, 5, 0, 0)
    context.respond(second, Context.fetch_response(5, 1, (), 0, Errors.FENCED_LEADER_EPOCH))
    context.poll()
    context.assert_elected_leader(5, 1)


# ------------------------------------------------------------------------------------ top-level errors


def test_cluster_authorization_failed_in_fetch():
    """Mirrors KafkaRaftClientTest#testClusterAuthorizationFailedInFetch (kafka_ref handles the answer as it
    arrives, so handle_response raises where Kafka's next poll does)."""
    context = Context(0, {0, 1}, elected=(5, 1))
    context.poll()
    (fetch,) = context.sent(MetadataFetchRequest)
    assert fetch_data(fetch) == (1, 5, 0, 0)
    with pytest.raises(ClusterAuthorizationException):
        context.respond(fetch, MetadataFetchResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code))


def test_cluster_authorization_failed_in_begin_quorum_epoch():
    """Mirrors KafkaRaftClientTest#testClusterAuthorizationFailedInBeginQuorumEpoch."""
    context = Context(0, {0, 1}, unknown=4)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    (vote,) = context.sent(VoteRequest)
    context.respond(vote, VoteResponse(leader_epoch=5, vote_granted=True))
    context.assert_elected_leader(5, 0)
    context.poll()
    (begin,) = context.sent(BeginQuorumEpochRequest)
    with pytest.raises(ClusterAuthorizationException):
        context.respond(begin, BeginQuorumEpochResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code))


def test_cluster_authorization_failed_in_vote():
    """Mirrors KafkaRaftClientTest#testClusterAuthorizationFailedInVote."""
    context = Context(0, {0, 1}, unknown=4)
    context.time.advance(2 * ELECTION_TIMEOUT_MS)
    context.poll()
    context.poll()
    context.assert_voted_candidate(5, 0)
    (vote,) = context.sent(VoteRequest)
    assert vote[2] == Context.vote_request(5, 0, 0, 0)
    with pytest.raises(ClusterAuthorizationException):
        context.respond(vote, VoteResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code))


def test_cluster_authorization_failed_in_end_quorum_epoch():
    """Mirrors KafkaRaftClientTest#testClusterAuthorizationFailedInEndQuorumEpoch."""
    context = Context.initialize_as_leader(0, {0, 1}, 2)
    context.client.shutdown(5000)
    context.poll()
    context.poll()
    (end,) = context.sent(EndQuorumEpochRequest)
    assert (end[0], end[2].leader_epoch) == (1, 2)
    with pytest.raises(ClusterAuthorizationException):
        context.respond(end, EndQuorumEpochResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code))


@pytest.mark.parametrize("correct_offset", [False, True])
def test_append_with_required_base_offset(correct_offset):
    """Mirrors KafkaRaftClientTest#testAppendWithRequiredBaseOffset."""
    context = Context(0, {0, 1})
    context.become_leader()
    assert context.current_leader() == 0
    epoch = context.current_epoch()
    if correct_offset:
        assert context.client.schedule_atomic_append(epoch, [RECORD], required_base_offset=1) == 1
        response = context.deliver(Context.begin_epoch_request(epoch + 1, 1))
        assert epoch_answer(response) == (Errors.NONE, epoch + 1, 1)
    else:
        with pytest.raises(UnexpectedBaseOffsetException):
            context.client.schedule_atomic_append(epoch, [RECORD], required_base_offset=2)
        assert context.log.end_offset == 1


def test_leader_state_update_with_different_fetch_request_versions():
    """Mirrors KafkaRaftClientTest#testLeaderStateUpdateWithDifferentFetchRequestVersions (one request shape)."""
    context = Context.initialize_as_leader(0, {0, 1}, 5)
    context.poll()
    assert context.client.quorum.high_watermark() is None and context.log.end_offset == 1
    response = context.deliver(Context.fetch_request(5, 1, 1, 5, 0))
    assert epoch_answer(response) == (Errors.NONE, 5, 0)
    assert context.client.quorum.high_watermark() == 1
