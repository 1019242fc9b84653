"""Where a node stands in the metadata quorum: the epoch states and their persisted election state.

Mirrors org.apache.kafka.raft.QuorumState (KIP-595) and its EpochState classes:
UnattachedState, VotedState, CandidateState, LeaderState, FollowerState, ResignedState, with
ElectionState (epoch, leader, voted-for) persisted through a QuorumStateStore
(FileBasedStateStore's role). The store lives on the node's disk object, so a restarted voter
finds the epoch it was in and whom it voted for: it never votes twice in one epoch and never
leads an epoch twice.

The state classes follow Kafka 3.8 (tests/test_raft_states_kafka.py ports their unit tests):
the leader tracks observers and caught-up times (LeaderState#describeQuorum) and moves replicas
between voters and observers when handed a new voter set, but the quorum's voter set itself is
static here: KIP-853's voter-set records, directory ids (ReplicaKey) and kraft.version are not
modelled. Two differences stay: initialize refuses a store whose voter set differs from the
configured one (Kafka 3.7's rule; 3.8 reads the voters from the log), and an observer starts
Unattached with no election timer, where Kafka draws one it never reads (drawing it here
would shift the node's seeded RNG).
Kafka's IllegalArgumentException is ValueError.

Timers are virtual-time deadlines in milliseconds (``Time.milliseconds()``); election timeouts
are drawn from the node's seeded RNG.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Iterable

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import Time

NO_TIMEOUT = float("inf")


# ------------------------------------------------------------------------------ persisted state


@dataclass(frozen=True, slots=True)
class ElectionState:
    """Mirrors org.apache.kafka.raft.ElectionState: the epoch and its leader or the candidate voted for."""

    epoch: int
    leader_id: int = -1
    voted_id: int = -1
    voters: frozenset[int] = frozenset()

    @staticmethod
    def with_elected_leader(epoch: int, leader_id: int, voters: Iterable[int]) -> "ElectionState":
        """Mirrors org.apache.kafka.raft.ElectionState#withElectedLeader (a negative leader id is a ValueError,
        Kafka's IllegalArgumentException)."""
        if leader_id < 0:
            raise ValueError(f"Illegal leader Id {leader_id}: must be non-negative")
        return ElectionState(epoch, leader_id=leader_id, voters=frozenset(voters))

    @staticmethod
    def with_voted_candidate(epoch: int, voted_id: int, voters: Iterable[int]) -> "ElectionState":
        """Mirrors org.apache.kafka.raft.ElectionState#withVotedCandidate (a negative voted id is a ValueError)."""
        if voted_id < 0:
            raise ValueError(f"Illegal voted Id {voted_id}: must be non-negative")
        return ElectionState(epoch, voted_id=voted_id, voters=frozenset(voters))

    @staticmethod
    def with_unknown_leader(epoch: int, voters: Iterable[int]) -> "ElectionState":
        """Mirrors org.apache.kafka.raft.ElectionState#withUnknownLeader."""
        return ElectionState(epoch, voters=frozenset(voters))

    def is_leader(self, node_id: int) -> bool:
        """Mirrors org.apache.kafka.raft.ElectionState#isLeader (a negative id is a ValueError)."""
        if node_id < 0:
            raise ValueError(f"Invalid negative nodeId: {node_id}")
        return self.leader_id == node_id

    def is_voted_candidate(self, node_id: int) -> bool:
        """Mirrors org.apache.kafka.raft.ElectionState#isVotedCandidate, without directory ids (KIP-853)."""
        if node_id < 0:
            raise ValueError(f"Invalid node key {node_id}")
        return self.has_voted() and self.voted_id == node_id

    def has_leader(self) -> bool:
        return self.leader_id >= 0

    def has_voted(self) -> bool:
        return self.voted_id >= 0


class QuorumStateStore:
    """Mirrors org.apache.kafka.raft.QuorumStateStore (FileBasedStateStore): the ``quorum-state`` file.

    Kept on the node's disk object: it survives a crash of the node's process.
    """

    def __init__(self) -> None:
        self._state: ElectionState | None = None
        self.writes = 0

    def read_election_state(self) -> ElectionState | None:
        """Mirrors org.apache.kafka.raft.FileBasedStateStore#readElectionState (None: no file yet)."""
        return self._state

    def write_election_state(self, state: ElectionState) -> None:
        """Mirrors org.apache.kafka.raft.FileBasedStateStore#writeElectionState (an atomic file replace)."""
        self._state = state
        self.writes += 1

    def clear(self) -> None:
        """Mirrors org.apache.kafka.raft.FileBasedStateStore#clear."""
        self._state = None


# ------------------------------------------------------------------------------ epoch states


class _Timer:
    """A deadline on the virtual clock (org.apache.kafka.common.utils.Timer)."""

    def __init__(self, time: Time, timeout_ms: float) -> None:
        self.time = time
        self.reset(timeout_ms)

    def reset(self, timeout_ms: float) -> None:
        self.deadline_ms = self.time.milliseconds() + timeout_ms

    def remaining_ms(self) -> float:
        return max(0.0, self.deadline_ms - self.time.milliseconds())

    def is_expired(self) -> bool:
        return self.time.milliseconds() >= self.deadline_ms


class EpochState(ABC):
    """Mirrors org.apache.kafka.raft.EpochState: what every state knows and answers."""

    name = "Epoch"
    epoch: int

    @abstractmethod
    def election(self) -> ElectionState:
        """The election state this state persists (each of the six states says its own)."""

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        """Mirrors EpochState#canGrantVote; a state with a leader or its own candidacy never grants."""
        return False

    def high_watermark(self) -> int | None:
        return None

    def __repr__(self) -> str:
        return f"{self.name}(epoch={self.epoch}, election={self.election()})"


class UnattachedState(EpochState):
    """Mirrors org.apache.kafka.raft.UnattachedState: an epoch with no leader known and no vote cast."""

    name = "Unattached"

    def __init__(self, time: Time, epoch: int, voters: frozenset[int], high_watermark: int | None,
                 election_timeout_ms: float) -> None:
        self.epoch = epoch
        self.voters = voters
        self._high_watermark = high_watermark
        self.election_timeout_ms = election_timeout_ms
        self.election_timer = _Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState.with_unknown_leader(self.epoch, self.voters)

    def has_election_timeout_expired(self) -> bool:
        return self.election_timer.is_expired()

    def remaining_election_ms(self) -> float:
        return self.election_timer.remaining_ms()

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        """Mirrors UnattachedState#canGrantVote: no vote yet this epoch, so the log check decides."""
        return is_log_up_to_date

    def high_watermark(self) -> int | None:
        return self._high_watermark


class VotedState(EpochState):
    """Mirrors org.apache.kafka.raft.VotedState: this voter voted for ``voted_id`` in the epoch."""

    name = "Voted"

    def __init__(self, time: Time, epoch: int, voted_id: int, voters: frozenset[int], high_watermark: int | None,
                 election_timeout_ms: float) -> None:
        self.epoch = epoch
        self.voted_id = voted_id
        self.voters = voters
        self._high_watermark = high_watermark
        self.election_timer = _Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState.with_voted_candidate(self.epoch, self.voted_id, self.voters)

    def has_election_timeout_expired(self) -> bool:
        return self.election_timer.is_expired()

    def remaining_election_ms(self) -> float:
        return self.election_timer.remaining_ms()

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        """Mirrors VotedState#canGrantVote: only the same candidate again (a retried request)."""
        return candidate_id == self.voted_id

    def high_watermark(self) -> int | None:
        return self._high_watermark


class FollowerState(EpochState):
    """Mirrors org.apache.kafka.raft.FollowerState: the leader of the epoch is known; fetch from it."""

    name = "Follower"

    def __init__(self, time: Time, epoch: int, leader_id: int, voters: frozenset[int], high_watermark: int | None,
                 fetch_timeout_ms: float) -> None:
        self.epoch = epoch
        self.leader_id = leader_id
        self.voters = voters
        self._high_watermark = high_watermark
        self.fetch_timeout_ms = fetch_timeout_ms
        self.fetch_timer = _Timer(time, fetch_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self.epoch, self.leader_id, self.voters)

    def has_fetch_timeout_expired(self) -> bool:
        return self.fetch_timer.is_expired()

    def remaining_fetch_ms(self) -> float:
        return self.fetch_timer.remaining_ms()

    def reset_fetch_timeout(self) -> None:
        """Mirrors FollowerState#resetFetchTimeout: a successful fetch from the leader."""
        self.fetch_timer.reset(self.fetch_timeout_ms)

    def override_fetch_timeout(self, timeout_ms: float) -> None:
        """Mirrors FollowerState#overrideFetchTimeout (EndQuorumEpoch: elect sooner)."""
        self.fetch_timer.reset(timeout_ms)

    def update_high_watermark(self, high_watermark: int | None) -> bool:
        """Mirrors org.apache.kafka.raft.FollowerState#updateHighWatermark: never backwards; True when it changed.

        1. an unknown value may not replace a known one; 2. with a known one, a negative or a
        smaller value is refused (ValueError, Kafka's IllegalArgumentException) and the same
        value is no change; 3. else it is taken (an unknown HW taking an unknown value counts as
        a change, as in Kafka).
        """
        # 1. Unknown over known.
        if high_watermark is None and self._high_watermark is not None:
            raise ValueError(f"Attempt to overwrite current high watermark {self._high_watermark} with unknown value")
        # 2. Monotonic.
        if self._high_watermark is not None:
            if high_watermark < 0:  # type: ignore[operator]
                raise ValueError(f"Illegal negative ({high_watermark}) high watermark update")
            if self._high_watermark > high_watermark:  # type: ignore[operator]
                raise ValueError(f"Non-monotonic update of high watermark from {self._high_watermark} "
                                 f"to {high_watermark}")
            if self._high_watermark == high_watermark:
                return False
        # 3. Take it.
        self._high_watermark = high_watermark
        return True

    def high_watermark(self) -> int | None:
        return self._high_watermark


class CandidateState(EpochState):
    """Mirrors org.apache.kafka.raft.CandidateState: this voter asks for votes in its new epoch."""

    name = "Candidate"

    def __init__(self, time: Time, local_id: int, epoch: int, voters: frozenset[int], high_watermark: int | None,
                 retries: int, election_timeout_ms: float) -> None:
        # Kafka: the local replica must be one of the voters (IllegalArgumentException).
        if local_id not in voters:
            raise ValueError(f"Local replica {local_id} must be in the set of voters {sorted(voters)}")
        self.time = time
        self.local_id = local_id
        self.epoch = epoch
        self.voters = voters
        self._high_watermark = high_watermark
        self.retries = retries
        self.election_timer = _Timer(time, election_timeout_ms)
        self.backoff_timer: _Timer | None = None
        # None: not answered yet; True granted; False rejected. The candidate votes for itself.
        self.vote_states: dict[int, bool | None] = {v: None for v in voters}
        self.vote_states[local_id] = True

    def election(self) -> ElectionState:
        return ElectionState.with_voted_candidate(self.epoch, self.local_id, self.voters)

    def majority_size(self) -> int:
        """Mirrors CandidateState#majoritySize."""
        return len(self.vote_states) // 2 + 1

    def granted_voters(self) -> set[int]:
        """Mirrors org.apache.kafka.raft.CandidateState#grantingVoters."""
        return {v for v, s in self.vote_states.items() if s is True}

    granting_voters = granted_voters

    def rejecting_voters(self) -> set[int]:
        return {v for v, s in self.vote_states.items() if s is False}

    def unrecorded_voters(self) -> set[int]:
        """Mirrors CandidateState#unrecordedVoters: voters still to answer (Vote requests go to them)."""
        return {v for v, s in self.vote_states.items() if s is None}

    def is_vote_granted(self) -> bool:
        """Mirrors CandidateState#isVoteGranted: a majority (this voter included) granted."""
        return len(self.granted_voters()) >= self.majority_size()

    def is_vote_rejected(self) -> bool:
        """Mirrors CandidateState#isVoteRejected: even every missing answer would not make a majority."""
        return len(self.granted_voters()) + len(self.unrecorded_voters()) < self.majority_size()

    def record_granted_vote(self, remote_id: int) -> bool:
        """Mirrors org.apache.kafka.raft.CandidateState#recordGrantedVote: True when the voter had not answered.

        A non-voter, or a voter that already rejected this candidacy, is a caller bug (ValueError,
        Kafka's IllegalArgumentException).
        """
        state = self.vote_states.get(remote_id, "absent")
        if state == "absent":
            raise ValueError(f"Attempt to grant vote to non-voter {remote_id}")
        if state is False:
            raise ValueError(f"Attempt to grant vote from node {remote_id} which previously rejected our request")
        self.vote_states[remote_id] = True
        return state is None

    def record_rejected_vote(self, remote_id: int) -> bool:
        """Mirrors org.apache.kafka.raft.CandidateState#recordRejectedVote: True when the voter had not answered.

        A non-voter, or a voter that already granted (this candidate's own vote included), is a
        caller bug (ValueError).
        """
        state = self.vote_states.get(remote_id, "absent")
        if state == "absent":
            raise ValueError(f"Attempt to reject vote to non-voter {remote_id}")
        if state is True:
            raise ValueError(f"Attempt to reject vote from node {remote_id} which previously granted our request")
        self.vote_states[remote_id] = False
        return state is None

    def start_backing_off(self, backoff_ms: float) -> None:
        """Mirrors CandidateState#startBackingOff: wait before the next candidacy."""
        self.backoff_timer = _Timer(self.time, backoff_ms)

    def is_backing_off(self) -> bool:
        return self.backoff_timer is not None

    def is_backoff_complete(self) -> bool:
        return self.backoff_timer is not None and self.backoff_timer.is_expired()

    def remaining_backoff_ms(self) -> float:
        """Mirrors org.apache.kafka.raft.CandidateState#remainingBackoffMs (only while backing off)."""
        if self.backoff_timer is None:
            raise IllegalStateException("Candidate is not currently backing off")
        return self.backoff_timer.remaining_ms()

    def has_election_timeout_expired(self) -> bool:
        return self.election_timer.is_expired()

    def remaining_election_ms(self) -> float:
        return self.election_timer.remaining_ms()

    def high_watermark(self) -> int | None:
        return self._high_watermark


@dataclass
class ReplicaState:
    """Mirrors LeaderState.ReplicaState: what the leader knows of one replica's log (timestamps -1: never)."""

    node_id: int
    end_offset: int | None = None
    last_fetch_timestamp: float = -1
    last_fetch_leader_log_end_offset: int = -1
    last_caught_up_timestamp: float = -1
    has_acknowledged_leader: bool = False

    def update_leader_end_offset(self, end_offset: int) -> None:
        """Mirrors LeaderState.ReplicaState#updateLeaderEndOffset: the leader's own entry keeps only its end."""
        self.end_offset = end_offset

    def update_follower_state(self, current_time_ms: float, fetch_offset: int, leader_end_offset: int | None) -> None:
        """Mirrors LeaderState.ReplicaState#updateFollowerState.

        1. with the leader's end known: a fetch at (or past) it catches the replica up now; a
        fetch at (or past) the leader's end as of the previous fetch caught it up at that
        previous fetch's time; either way remember the leader's end for the next fetch;
        2. the fetch time, end offset and acknowledgement follow.
        """
        # 1. Caught-up time, before the fetch time moves.
        if leader_end_offset is not None:
            if fetch_offset >= leader_end_offset:
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp, current_time_ms)
            elif self.last_fetch_leader_log_end_offset > 0 and fetch_offset >= self.last_fetch_leader_log_end_offset:
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp, self.last_fetch_timestamp)
            self.last_fetch_leader_log_end_offset = leader_end_offset
        # 2. The fetch itself.
        self.last_fetch_timestamp = max(self.last_fetch_timestamp, current_time_ms)
        self.end_offset = fetch_offset
        self.has_acknowledged_leader = True

    def sort_key(self) -> tuple:
        """Mirrors LeaderState.ReplicaState#compareTo: largest end offset first, unknown last, then by id."""
        return (self.end_offset is None, -(self.end_offset or 0), self.node_id)


@dataclass(frozen=True, slots=True)
class DescribeQuorumReplicaState:
    """Mirrors org.apache.kafka.common.message.DescribeQuorumResponseData.ReplicaState (-1: unknown)."""

    replica_id: int
    log_end_offset: int = -1
    last_fetch_timestamp: float = -1
    last_caught_up_timestamp: float = -1


@dataclass(frozen=True, slots=True)
class DescribeQuorumPartitionData:
    """Mirrors org.apache.kafka.common.message.DescribeQuorumResponseData.PartitionData (LeaderState#describeQuorum fills it)."""

    error_code: int
    leader_id: int
    leader_epoch: int
    high_watermark: int
    current_voters: tuple[DescribeQuorumReplicaState, ...]
    observers: tuple[DescribeQuorumReplicaState, ...]


CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
OBSERVER_SESSION_TIMEOUT_MS = 300_000


class LeaderState(EpochState):
    """Mirrors org.apache.kafka.raft.LeaderState: this voter leads the epoch.

    ``epoch_start_offset`` is the log end when the epoch began (where the LeaderChangeMessage
    goes). The high watermark is the largest offset a majority of voters (the leader counts)
    have, and only once it is past the epoch start: a leader must commit an entry of its own
    epoch before anything of an earlier epoch counts as committed. It never goes back, even
    when a change of the voter set would compute a smaller one.
    """

    name = "Leader"

    def __init__(self, time: Time, local_id: int, epoch: int, epoch_start_offset: int, voters: frozenset[int],
                 granting_voters: set[int], fetch_timeout_ms: float) -> None:
        self.time = time
        self.local_id = local_id
        self.epoch = epoch
        self.epoch_start_offset = epoch_start_offset
        self.voters = frozenset(voters)
        self.granting_voters = frozenset(granting_voters)
        self._high_watermark: int | None = None
        # Only the leader itself has acknowledged its leadership so far.
        self.voter_states = {v: ReplicaState(v, has_acknowledged_leader=v == local_id) for v in sorted(voters)}
        self.observer_states: dict[int, ReplicaState] = {}
        self.resign_requested = False
        # Check quorum (KAFKA-15489): resign when a majority has not fetched for 1.5 fetch timeouts.
        self.check_quorum_timeout_ms = fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR
        self.check_quorum_timer = _Timer(time, self.check_quorum_timeout_ms)
        self.fetched_voters: set[int] = set()

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self.epoch, self.local_id, self.voter_states)

    def high_watermark(self) -> int | None:
        return self._high_watermark

    def is_voter(self, remote_node_id: int) -> bool:
        """Mirrors LeaderState#isVoter: a member of the leader's current voter set."""
        return remote_node_id in self.voter_states

    def time_until_check_quorum_expires(self) -> float:
        """Mirrors LeaderState#timeUntilCheckQuorumExpires (a lone voter never expires)."""
        if len(self.voter_states) == 1:
            return NO_TIMEOUT
        return self.check_quorum_timer.remaining_ms()

    def update_check_quorum_for_following_voter(self, node_id: int) -> None:
        """Mirrors LeaderState#updateCheckQuorumForFollowingVoter: a majority fetched → restart the timer.

        1. a fetch from the leader itself is a caller bug (ValueError, Kafka's
        IllegalArgumentException); only voters count; 2. once the voters that fetched, with the
        leader, make a majority, the timer restarts and the count starts over.
        """
        # 1. Whose fetch.
        if node_id == self.local_id:
            raise ValueError("Received a FETCH/FETCH_SNAPSHOT request from the leader itself.")
        if self.is_voter(node_id):
            self.fetched_voters.add(node_id)
        # 2. The majority excluding the leader (1 of 3 voters, 2 of 5).
        majority = len(self.voter_states) // 2
        if len(self.fetched_voters) >= majority:
            self.fetched_voters.clear()
            self.check_quorum_timer.reset(self.check_quorum_timeout_ms)

    def non_acknowledging_voters(self) -> set[int]:
        """Mirrors LeaderState#nonAcknowledgingVoters: BeginQuorumEpoch goes to these."""
        return {v for v, s in self.voter_states.items() if not s.has_acknowledged_leader}

    def add_acknowledgement_from(self, remote_id: int) -> None:
        """Mirrors LeaderState#addAcknowledgementFrom (a non-voter is a ValueError, Kafka's IllegalArgumentException)."""
        state = self.voter_states.get(remote_id)
        if state is None:
            raise ValueError(f"Unexpected acknowledgement from non-voter {remote_id}")
        state.has_acknowledged_leader = True

    def _followers_by_descending_fetch_offset(self) -> list[ReplicaState]:
        """Mirrors LeaderState#followersByDescendingFetchOffset (the voters, the leader included)."""
        return sorted(self.voter_states.values(), key=ReplicaState.sort_key)

    def non_leader_voters_by_descending_fetch_offset(self) -> list[int]:
        """Mirrors LeaderState#nonLeaderVotersByDescendingFetchOffset: the resignation's preferred successors."""
        return [s.node_id for s in self._followers_by_descending_fetch_offset() if s.node_id != self.local_id]

    def _get_or_create_replica_state(self, remote_node_id: int) -> ReplicaState:
        """Mirrors LeaderState#getOrCreateReplicaState: a voter's entry, else an observer's (created on first sight)."""
        state = self.voter_states.get(remote_node_id)
        if state is None:
            state = self.observer_states.setdefault(remote_node_id, ReplicaState(remote_node_id))
        return state

    def update_local_state(self, end_offset: int, last_voter_set: Iterable[int] | None = None) -> bool:
        """Mirrors LeaderState#updateLocalState: the leader's flushed log end; True when the HW moved.

        1. the leader's end never goes back; 2. record it; 3. voters and observers follow the
        latest voter set (None: the current one; kafka_ref's voter set is static, KIP-853's
        changes reach only this method); 4. recompute the HW.
        """
        # 1. Monotonic.
        state = self._get_or_create_replica_state(self.local_id)
        if state.end_offset is not None and state.end_offset > end_offset:
            raise IllegalStateException(f"Detected non-monotonic update of local end offset: "
                                        f"{state.end_offset} -> {end_offset}")
        # 2. Record.
        state.update_leader_end_offset(end_offset)
        # 3. The voter set.
        self._update_voter_and_observer_states(self.voter_states.keys() if last_voter_set is None else last_voter_set)
        # 4. The HW.
        return self.maybe_update_high_watermark()

    def update_replica_state(self, replica_id: int, current_time_ms: float, fetch_offset: int) -> bool:
        """Mirrors LeaderState#updateReplicaState: a voter's or observer's fetch offset; True when the HW moved.

        1. a negative id (a consumer's fetch) changes nothing; the leader's own id is a caller
        bug; 2. the replica's state (an observer's is created), updated against the leader's
        end offset (a fetch offset going back is only logged in Kafka); 3. the fetch counts
        towards check quorum; 4. only voters move the HW.
        """
        # 1. Who fetched.
        if replica_id < 0:
            return False
        if replica_id == self.local_id:
            raise IllegalStateException(f"Remote replica ID {replica_id} matches the local leader ID")
        # 2. Its state.
        state = self._get_or_create_replica_state(replica_id)
        leader_end_offset = self._get_or_create_replica_state(self.local_id).end_offset
        state.update_follower_state(current_time_ms, fetch_offset, leader_end_offset)
        # 3. Check quorum.
        self.update_check_quorum_for_following_voter(replica_id)
        # 4. The HW.
        return self.is_voter(state.node_id) and self.maybe_update_high_watermark()

    def maybe_update_high_watermark(self) -> bool:
        """Mirrors LeaderState#maybeUpdateHighWatermark.

        1. the voters by end offset, largest first (unknown last); 2. the one at index len/2
        is on a majority; 3. it becomes the HW only if known, past the epoch start and above
        the current HW (a smaller value, after a change of the voter set or a follower that
        lost its disk, is only logged in Kafka).
        """
        # 1. Voters by end offset.
        followers = self._followers_by_descending_fetch_offset()
        index_of_hw = len(self.voter_states) // 2
        # 2. Replicated on a majority.
        candidate = followers[index_of_hw].end_offset
        # 3. Known, past the epoch start, forward only.
        if candidate is None or candidate <= self.epoch_start_offset:
            return False
        if self._high_watermark is None or candidate > self._high_watermark:
            self._high_watermark = candidate
            return True
        return False

    def _update_voter_and_observer_states(self, last_voter_set: Iterable[int]) -> None:
        """Mirrors LeaderState#updateVoterAndObserverStates: replicas move between voters and observers, state kept."""
        voters = set(last_voter_set)
        # 1. Voters no longer in the set become observers.
        for node_id in [n for n in self.voter_states if n not in voters]:
            self.observer_states[node_id] = self.voter_states.pop(node_id)
        # 2. New voters come from the observers (or start empty).
        for node_id in sorted(voters):
            if node_id not in self.voter_states:
                self.voter_states[node_id] = self.observer_states.pop(node_id, None) or ReplicaState(node_id)
        self.voters = frozenset(self.voter_states)

    def _clear_inactive_observers(self, current_time_ms: float) -> None:
        """Mirrors LeaderState#clearInactiveObservers: observers silent for OBSERVER_SESSION_TIMEOUT_MS go (never the leader)."""
        for node_id in [n for n, s in self.observer_states.items()
                        if current_time_ms - s.last_fetch_timestamp >= OBSERVER_SESSION_TIMEOUT_MS and n != self.local_id]:
            del self.observer_states[node_id]

    def _describe_replica_state(self, state: ReplicaState, current_time_ms: float) -> DescribeQuorumReplicaState:
        """Mirrors LeaderState#describeReplicaState: the leader is always fetched and caught up as of now."""
        if state.node_id == self.local_id:
            last_caught_up, last_fetch = current_time_ms, current_time_ms
        else:
            last_caught_up, last_fetch = state.last_caught_up_timestamp, state.last_fetch_timestamp
        return DescribeQuorumReplicaState(state.node_id, state.end_offset if state.end_offset is not None else -1,
                                          last_fetch, last_caught_up)

    def describe_quorum(self, current_time_ms: float) -> DescribeQuorumPartitionData:
        """Mirrors LeaderState#describeQuorum: the leader's view of voters and recently active observers."""
        self._clear_inactive_observers(current_time_ms)
        return DescribeQuorumPartitionData(
            error_code=0, leader_id=self.local_id, leader_epoch=self.epoch,
            high_watermark=self._high_watermark if self._high_watermark is not None else -1,
            current_voters=tuple(self._describe_replica_state(s, current_time_ms)
                                 for _, s in sorted(self.voter_states.items())),
            observers=tuple(self._describe_replica_state(s, current_time_ms)
                            for _, s in sorted(self.observer_states.items())),
        )

    def request_resign(self) -> None:
        """Mirrors LeaderState#requestResign."""
        self.resign_requested = True


class ResignedState(EpochState):
    """Mirrors org.apache.kafka.raft.ResignedState: a leader that gave up its epoch (or restarted as its leader).

    It tells the other voters with EndQuorumEpoch until each acknowledges, and becomes a
    candidate when its election timeout expires.
    """

    name = "Resigned"

    def __init__(self, time: Time, local_id: int, epoch: int, voters: frozenset[int], election_timeout_ms: float,
                 preferred_successors: list[int]) -> None:
        self.local_id = local_id
        self.epoch = epoch
        self.voters = voters
        self.preferred_successors = list(preferred_successors)
        self.unacked_voters = set(voters) - {local_id}
        self.election_timer = _Timer(time, election_timeout_ms)

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self.epoch, self.local_id, self.voters)

    def acknowledge_resignation(self, voter_id: int) -> None:
        """Mirrors org.apache.kafka.raft.ResignedState#acknowledgeResignation (a non-voter is a ValueError)."""
        if voter_id not in self.voters:
            raise ValueError(f"Attempt to acknowledge delivery of EndQuorumEpoch by a non-voter {voter_id}")
        self.unacked_voters.discard(voter_id)

    def has_election_timeout_expired(self) -> bool:
        return self.election_timer.is_expired()

    def remaining_election_ms(self) -> float:
        return self.election_timer.remaining_ms()


# ------------------------------------------------------------------------------ QuorumState


@dataclass
class QuorumConfig:
    """Mirrors org.apache.kafka.raft.RaftConfig: the quorum.* settings (Kafka's defaults)."""

    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    voters: tuple[int, ...] = field(default_factory=tuple)


class QuorumState:
    """Mirrors org.apache.kafka.raft.QuorumState: the current EpochState and the rules for leaving it.

    Every transition but the one to Resigned is durable: the new ElectionState is written to
    the store before the state changes, so a crash right after never forgets a vote.
    """

    def __init__(self, local_id: int, voters: Iterable[int], config: QuorumConfig, store: QuorumStateStore,
                 time: Time, rng: random.Random) -> None:
        self.local_id = local_id
        self.voters = frozenset(voters)
        self.config = config
        self.store = store
        self.time = time
        self.rng = rng
        self.state: EpochState = UnattachedState(time, 0, self.voters, None, NO_TIMEOUT)

    # -- reads ----------------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.state.epoch

    def is_voter(self, node_id: int | None = None) -> bool:
        return (self.local_id if node_id is None else node_id) in self.voters

    def is_observer(self) -> bool:
        return not self.is_voter()

    def is_only_voter(self) -> bool:
        return self.voters == frozenset({self.local_id})

    def leader_id(self) -> int:
        """Mirrors QuorumState#leaderIdOrSentinel (-1: not known)."""
        return self.state.election().leader_id

    def has_leader(self) -> bool:
        return self.leader_id() >= 0

    def has_remote_leader(self) -> bool:
        """Mirrors org.apache.kafka.raft.QuorumState#hasRemoteLeader: a known leader that is not this node."""
        return self.has_leader() and self.leader_id() != self.local_id

    def _state_or_throw(self, kind: type, name: str):
        if isinstance(self.state, kind):
            return self.state
        raise IllegalStateException(f"Expected to be {name}, but the current state is {self.state}")

    def follower_state_or_throw(self) -> "FollowerState":
        """Mirrors org.apache.kafka.raft.QuorumState#followerStateOrThrow."""
        return self._state_or_throw(FollowerState, "Follower")

    def voted_state_or_throw(self) -> "VotedState":
        """Mirrors org.apache.kafka.raft.QuorumState#votedStateOrThrow."""
        return self._state_or_throw(VotedState, "Voted")

    def unattached_state_or_throw(self) -> "UnattachedState":
        """Mirrors org.apache.kafka.raft.QuorumState#unattachedStateOrThrow."""
        return self._state_or_throw(UnattachedState, "Unattached")

    def leader_state_or_throw(self) -> "LeaderState":
        """Mirrors org.apache.kafka.raft.QuorumState#leaderStateOrThrow."""
        return self._state_or_throw(LeaderState, "Leader")

    def resigned_state_or_throw(self) -> "ResignedState":
        """Mirrors org.apache.kafka.raft.QuorumState#resignedStateOrThrow."""
        return self._state_or_throw(ResignedState, "Resigned")

    def candidate_state_or_throw(self) -> "CandidateState":
        """Mirrors org.apache.kafka.raft.QuorumState#candidateStateOrThrow."""
        return self._state_or_throw(CandidateState, "Candidate")

    def leader_and_epoch(self) -> tuple[int, int]:
        """Mirrors QuorumState#leaderAndEpoch."""
        return self.leader_id(), self.epoch

    def high_watermark(self) -> int | None:
        return self.state.high_watermark()

    def is_leader(self) -> bool:
        return isinstance(self.state, LeaderState)

    def is_follower(self) -> bool:
        return isinstance(self.state, FollowerState)

    def is_candidate(self) -> bool:
        return isinstance(self.state, CandidateState)

    def is_voted(self) -> bool:
        return isinstance(self.state, VotedState)

    def is_unattached(self) -> bool:
        return isinstance(self.state, UnattachedState)

    def is_resigned(self) -> bool:
        return isinstance(self.state, ResignedState)

    def can_grant_vote(self, candidate_id: int, is_log_up_to_date: bool) -> bool:
        """Mirrors QuorumState#canGrantVote."""
        return self.state.can_grant_vote(candidate_id, is_log_up_to_date)

    def random_election_timeout_ms(self) -> float:
        """Mirrors QuorumState#randomElectionTimeoutMs: the timeout plus up to as much again, from the seeded RNG."""
        timeout = self.config.election_timeout_ms
        return timeout + self.rng.randrange(timeout) if timeout > 0 else 0

    # -- initialize -----------------------------------------------------------------------------

    def initialize(self, log_end_epoch: int) -> None:
        """Mirrors QuorumState#initialize: start in the state the store says we left.

        1. no stored state: Unattached in epoch 0; 2. the log holds a later epoch than the
        store: Unattached in that epoch; 3. we led the epoch: Resigned (never lead it twice);
        4. we were a candidate: Candidate again; 5. we voted: Voted; 6. we followed: Follower;
        7. else Unattached.
        """
        election = self.store.read_election_state() or ElectionState.with_unknown_leader(0, self.voters)
        if election.voters and election.voters != self.voters:
            raise IllegalStateException(f"Configured voters {sorted(self.voters)} differ from the stored "
                                        f"{sorted(election.voters)}")
        # Kafka 3.8 refuses a stored vote only without a local id (every kafka_ref node has one): an
        # observer may have voted (QuorumState#transitionToVoted) and finds its vote again.
        # 2. The log is ahead of the store.
        if election.epoch < log_end_epoch:
            state: EpochState = UnattachedState(self.time, log_end_epoch, self.voters, None, self._election_timeout())
        # 3. We led this epoch.
        elif election.is_leader(self.local_id):
            state = ResignedState(self.time, self.local_id, election.epoch, self.voters,
                                  self.random_election_timeout_ms(), [])
        # 4. Our own candidacy.
        elif election.is_voted_candidate(self.local_id):
            state = CandidateState(self.time, self.local_id, election.epoch, self.voters, None, 1,
                                   self.random_election_timeout_ms())
        # 5. A vote for someone else.
        elif election.has_voted():
            state = VotedState(self.time, election.epoch, election.voted_id, self.voters, None,
                               self.random_election_timeout_ms())
        # 6. A known leader.
        elif election.has_leader():
            state = FollowerState(self.time, election.epoch, election.leader_id, self.voters, None,
                                  self.config.fetch_timeout_ms)
        # 7. Nothing known.
        else:
            state = UnattachedState(self.time, election.epoch, self.voters, None, self._election_timeout())
        self._durable_transition_to(state)

    def _election_timeout(self) -> float:
        return NO_TIMEOUT if self.is_observer() else self.random_election_timeout_ms()

    # -- transitions ----------------------------------------------------------------------------

    def transition_to_resigned(self, preferred_successors: list[int]) -> None:
        """Mirrors QuorumState#transitionToResigned: only a leader resigns; the stored state does not change."""
        if not self.is_leader():
            raise IllegalStateException(f"Invalid transition to Resigned from {self.state}")
        self.state = ResignedState(self.time, self.local_id, self.epoch, self.voters,
                                   self.random_election_timeout_ms(), preferred_successors)

    def transition_to_unattached(self, epoch: int) -> None:
        """Mirrors QuorumState#transitionToUnattached: a higher epoch whose leader is not known.

        An election timer already running (candidate, voted, unattached) keeps its deadline.
        """
        if epoch <= self.epoch:
            raise IllegalStateException(f"Cannot transition to Unattached with epoch {epoch} from {self.state}")
        if self.is_observer():
            timeout: float = NO_TIMEOUT
        elif isinstance(self.state, (CandidateState, VotedState, UnattachedState)):
            timeout = self.state.remaining_election_ms()
        else:
            timeout = self.random_election_timeout_ms()
        self._durable_transition_to(UnattachedState(self.time, epoch, self.voters, self.high_watermark(), timeout))

    def transition_to_voted(self, epoch: int, candidate_id: int) -> None:
        """Mirrors org.apache.kafka.raft.QuorumState#transitionToVoted: one vote per epoch.

        1. never for ourselves; 2. never for an older epoch, and in the current epoch only from
        Unattached. As in Kafka 3.8 the voter set is not checked here (an observer with an id
        may vote, and for a replica outside the voter set): KafkaRaftClient decides whom to ask
        and whom to answer.
        """
        # 1. Not ourselves.
        if candidate_id == self.local_id:
            raise IllegalStateException(f"Cannot transition to Voted for {candidate_id} and epoch {epoch} since it "
                                        f"matches the local broker.id")
        # 2. Epoch rules.
        if epoch < self.epoch:
            raise IllegalStateException(f"Cannot transition to Voted for {candidate_id} and epoch {epoch} since the "
                                        f"current epoch ({self.epoch}) is larger")
        if epoch == self.epoch and not self.is_unattached():
            raise IllegalStateException(f"Cannot transition to Voted for {candidate_id} and epoch {epoch} from the "
                                        f"current state ({self.state})")
        self._durable_transition_to(VotedState(self.time, epoch, candidate_id, self.voters, self.high_watermark(),
                                               self.random_election_timeout_ms()))

    def transition_to_follower(self, epoch: int, leader_id: int) -> None:
        """Mirrors QuorumState#transitionToFollower: the leader of ``epoch`` is known (never ourselves)."""
        if leader_id == self.local_id:
            raise IllegalStateException("Cannot follow ourselves")
        if epoch < self.epoch or (epoch == self.epoch and (self.is_follower() or self.is_leader())):
            raise IllegalStateException(f"Cannot transition to Follower of {leader_id} in epoch {epoch} from {self.state}")
        self._durable_transition_to(FollowerState(self.time, epoch, leader_id, self.voters, self.high_watermark(),
                                                  self.config.fetch_timeout_ms))

    def transition_to_candidate(self) -> None:
        """Mirrors QuorumState#transitionToCandidate: the next epoch, voting for ourselves."""
        if self.is_observer():
            raise IllegalStateException("An observer cannot become a candidate")
        if self.is_leader():
            raise IllegalStateException("A leader cannot become a candidate")
        retries = self.state.retries + 1 if isinstance(self.state, CandidateState) else 1
        self._durable_transition_to(CandidateState(self.time, self.local_id, self.epoch + 1, self.voters,
                                                   self.high_watermark(), retries, self.random_election_timeout_ms()))

    def transition_to_leader(self, epoch_start_offset: int) -> LeaderState:
        """Mirrors QuorumState#transitionToLeader: only a candidate that won a majority."""
        if self.is_observer() or not isinstance(self.state, CandidateState):
            raise IllegalStateException(f"Cannot transition to Leader from {self.state}")
        if not self.state.is_vote_granted():
            raise IllegalStateException("Cannot become leader without a majority of votes")
        state = LeaderState(self.time, self.local_id, self.epoch, epoch_start_offset, self.voters,
                            self.state.granted_voters(), self.config.fetch_timeout_ms)
        self._durable_transition_to(state)
        return state

    def _durable_transition_to(self, state: EpochState) -> None:
        """Mirrors QuorumState#durableTransitionTo: write the election state, then switch."""
        self.store.write_election_state(state.election())
        self.state = state
