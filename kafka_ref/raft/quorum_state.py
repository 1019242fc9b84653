"""Where a node stands in the metadata quorum: the epoch states and their persisted election state.

Mirrors org.apache.kafka.raft.QuorumState (Kafka 3.7, KIP-595) and its EpochState classes:
UnattachedState, VotedState, CandidateState, LeaderState, FollowerState, ResignedState, with
ElectionState (epoch, leader, voted-for) persisted through a QuorumStateStore
(FileBasedStateStore's role). The store lives on the node's disk object, so a restarted voter
finds the epoch it was in and whom it voted for: it never votes twice in one epoch and never
leads an epoch twice.

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
        return ElectionState(epoch, leader_id=leader_id, voters=frozenset(voters))

    @staticmethod
    def with_voted_candidate(epoch: int, voted_id: int, voters: Iterable[int]) -> "ElectionState":
        return ElectionState(epoch, voted_id=voted_id, voters=frozenset(voters))

    @staticmethod
    def with_unknown_leader(epoch: int, voters: Iterable[int]) -> "ElectionState":
        return ElectionState(epoch, voters=frozenset(voters))

    def is_leader(self, node_id: int) -> bool:
        return self.leader_id == node_id

    def is_voted_candidate(self, node_id: int) -> bool:
        return self.voted_id == node_id

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
        """Mirrors FollowerState#updateHighWatermark: never backwards; True when it moved."""
        if high_watermark is None:
            return False
        if self._high_watermark is not None and high_watermark < self._high_watermark:
            raise IllegalStateException(f"Non-monotonic update of high watermark from {self._high_watermark} "
                                        f"to {high_watermark}")
        if self._high_watermark == high_watermark:
            return False
        self._high_watermark = high_watermark
        return True

    def high_watermark(self) -> int | None:
        return self._high_watermark


class CandidateState(EpochState):
    """Mirrors org.apache.kafka.raft.CandidateState: this voter asks for votes in its new epoch."""

    name = "Candidate"

    def __init__(self, time: Time, local_id: int, epoch: int, voters: frozenset[int], high_watermark: int | None,
                 retries: int, election_timeout_ms: float) -> None:
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
        return len(self.voters) // 2 + 1

    def granted_voters(self) -> set[int]:
        return {v for v, s in self.vote_states.items() if s is True}

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
        """Mirrors CandidateState#recordGrantedVote; a voter that rejected cannot grant in the same epoch."""
        if self.vote_states.get(remote_id, "absent") == "absent":
            raise IllegalStateException(f"Vote from {remote_id}, which is not a voter")
        if self.vote_states[remote_id] is False:
            raise IllegalStateException(f"Vote granted by {remote_id}, which already rejected this candidacy")
        was = self.vote_states[remote_id] is None
        self.vote_states[remote_id] = True
        return was

    def record_rejected_vote(self, remote_id: int) -> bool:
        """Mirrors CandidateState#recordRejectedVote."""
        if self.vote_states.get(remote_id, "absent") == "absent":
            raise IllegalStateException(f"Vote from {remote_id}, which is not a voter")
        if self.vote_states[remote_id] is True:
            raise IllegalStateException(f"Vote rejected by {remote_id}, which already granted this candidacy")
        was = self.vote_states[remote_id] is None
        self.vote_states[remote_id] = False
        return was

    def start_backing_off(self, backoff_ms: float) -> None:
        """Mirrors CandidateState#startBackingOff: wait before the next candidacy."""
        self.backoff_timer = _Timer(self.time, backoff_ms)

    def is_backing_off(self) -> bool:
        return self.backoff_timer is not None

    def is_backoff_complete(self) -> bool:
        return self.backoff_timer is not None and self.backoff_timer.is_expired()

    def remaining_backoff_ms(self) -> float:
        return self.backoff_timer.remaining_ms() if self.backoff_timer is not None else 0.0

    def has_election_timeout_expired(self) -> bool:
        return self.election_timer.is_expired()

    def remaining_election_ms(self) -> float:
        return self.election_timer.remaining_ms()

    def high_watermark(self) -> int | None:
        return self._high_watermark


@dataclass
class ReplicaState:
    """Mirrors LeaderState.ReplicaState: what the leader knows of one replica's log."""

    node_id: int
    end_offset: int | None = None
    last_fetch_ms: float = -1.0
    has_acknowledged_leader: bool = False


CHECK_QUORUM_TIMEOUT_FACTOR = 1.5


class LeaderState(EpochState):
    """Mirrors org.apache.kafka.raft.LeaderState: this voter leads the epoch.

    ``epoch_start_offset`` is the log end when the epoch began (where the LeaderChangeMessage
    goes). The high watermark is the largest offset a majority of voters (the leader counts)
    have, and only once it is past the epoch start: a leader must commit an entry of its own
    epoch before anything of an earlier epoch counts as committed.
    """

    name = "Leader"

    def __init__(self, time: Time, local_id: int, epoch: int, epoch_start_offset: int, voters: frozenset[int],
                 granting_voters: set[int], fetch_timeout_ms: float) -> None:
        self.time = time
        self.local_id = local_id
        self.epoch = epoch
        self.epoch_start_offset = epoch_start_offset
        self.voters = voters
        self.granting_voters = frozenset(granting_voters)
        self._high_watermark: int | None = None
        self.voter_states = {v: ReplicaState(v) for v in voters}
        self.voter_states[local_id].has_acknowledged_leader = True
        self.observer_states: dict[int, ReplicaState] = {}
        self.resign_requested = False
        # Check quorum (KAFKA-15489): resign when a majority has not fetched for 1.5 fetch timeouts.
        self.check_quorum_timeout_ms = fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR
        self.check_quorum_timer = _Timer(time, self.check_quorum_timeout_ms)
        self.fetched_voters: set[int] = set()

    def election(self) -> ElectionState:
        return ElectionState.with_elected_leader(self.epoch, self.local_id, self.voters)

    def high_watermark(self) -> int | None:
        return self._high_watermark

    def time_until_check_quorum_expires(self) -> float:
        """Mirrors LeaderState#timeUntilCheckQuorumExpires (a lone voter never expires)."""
        if len(self.voters) == 1:
            return NO_TIMEOUT
        return self.check_quorum_timer.remaining_ms()

    def update_check_quorum_for_following_voter(self, node_id: int) -> None:
        """Mirrors LeaderState#updateCheckQuorumForFollowingVoter: a majority fetched → restart the timer."""
        if node_id not in self.voters or node_id == self.local_id:
            return
        self.fetched_voters.add(node_id)
        # The leader counts itself towards the majority.
        if len(self.fetched_voters) + 1 >= len(self.voters) // 2 + 1:
            self.fetched_voters.clear()
            self.check_quorum_timer.reset(self.check_quorum_timeout_ms)

    def non_acknowledging_voters(self) -> set[int]:
        """Mirrors LeaderState#nonAcknowledgingVoters: BeginQuorumEpoch goes to these."""
        return {v for v, s in self.voter_states.items() if not s.has_acknowledged_leader}

    def add_acknowledgement_from(self, remote_id: int) -> None:
        """Mirrors LeaderState#addAcknowledgementFrom."""
        state = self.voter_states.get(remote_id)
        if state is not None:
            state.has_acknowledged_leader = True

    def non_leader_voters_by_descending_fetch_offset(self) -> list[int]:
        """Mirrors LeaderState#nonLeaderVotersByDescendingFetchOffset: the resignation's preferred successors."""
        others = [s for v, s in self.voter_states.items() if v != self.local_id]
        others.sort(key=lambda s: (-(s.end_offset if s.end_offset is not None else -1), s.node_id))
        return [s.node_id for s in others]

    def update_local_state(self, end_offset: int) -> bool:
        """Mirrors LeaderState#updateLocalState: the leader's flushed log end; True when the HW moved."""
        state = self.voter_states[self.local_id]
        if state.end_offset is not None and end_offset < state.end_offset:
            raise IllegalStateException(f"Non-monotonic update of the leader's end offset {state.end_offset} → {end_offset}")
        state.end_offset = end_offset
        return self.maybe_update_high_watermark()

    def update_replica_state(self, replica_id: int, fetch_time_ms: float, end_offset: int) -> bool:
        """Mirrors LeaderState#updateReplicaState: a voter's or observer's fetch offset; True when the HW moved.

        1. the leader's own offset is never set by a fetch; 2. a voter's offset never goes back
        (except by a new fetch after truncation, which Kafka logs); 3. voters recompute the HW.
        """
        if replica_id == self.local_id:
            raise IllegalStateException("Remote replica id matches the leader's")
        # 1. Whose state.
        if replica_id in self.voter_states:
            state = self.voter_states[replica_id]
        else:
            state = self.observer_states.setdefault(replica_id, ReplicaState(replica_id))
        # 2. Record it (a fetch acknowledges the leader).
        state.end_offset = end_offset
        state.last_fetch_ms = fetch_time_ms
        state.has_acknowledged_leader = True
        # 3. Only voters move the HW.
        return replica_id in self.voter_states and self.maybe_update_high_watermark()

    def maybe_update_high_watermark(self) -> bool:
        """Mirrors LeaderState#maybeUpdateHighWatermark.

        1. sort the voters' end offsets, largest first; 2. the one at index len/2 is on a
        majority; 3. it becomes the HW if it is past the epoch start and above the current HW.
        """
        # 1. Voters by end offset (unknown offsets last).
        offsets = sorted((s.end_offset for s in self.voter_states.values() if s.end_offset is not None), reverse=True)
        index = len(self.voter_states) // 2
        if index >= len(offsets):
            return False
        # 2. Replicated on a majority.
        candidate = offsets[index]
        # 3. Past the epoch start, and forward only.
        if candidate > self.epoch_start_offset and (self._high_watermark is None or candidate > self._high_watermark):
            self._high_watermark = candidate
            return True
        return False

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
        """Mirrors ResignedState#acknowledgeResignation."""
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
        if election.has_voted() and not self.is_voter():
            raise IllegalStateException(f"Stored state {election} has a vote but {self.local_id} is not a voter")
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
        """Mirrors QuorumState#transitionToVoted: one vote per epoch, only by a voter, only for a voter."""
        if candidate_id == self.local_id:
            raise IllegalStateException("Cannot transition to Voted for ourselves")
        if not self.is_voter():
            raise IllegalStateException(f"Cannot vote: {self.local_id} is not a voter")
        if not self.is_voter(candidate_id):
            raise IllegalStateException(f"Cannot vote for {candidate_id}: not a voter")
        if epoch < self.epoch or (epoch == self.epoch and not self.is_unattached()):
            raise IllegalStateException(f"Cannot transition to Voted for {candidate_id} in epoch {epoch} from {self.state}")
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
