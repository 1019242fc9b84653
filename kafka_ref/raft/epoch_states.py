"""The epoch states a quorum member moves between, all but the leader's.

Mirrors org.apache.kafka.raft.EpochState and its UnattachedState, VotedState, FollowerState,
CandidateState and ResignedState classes (each its own class file in Kafka). LeaderState and the
per-replica data it keeps live in kafka_ref/raft/leader_state.py; QuorumState
(kafka_ref/raft/quorum_state.py) holds the current state and the rules for leaving it.
Kafka's IllegalArgumentException is ValueError.

Timers are virtual-time deadlines in milliseconds (``Time.milliseconds()``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import Time
from kafka_ref.raft.election_state import ElectionState

NO_TIMEOUT = float("inf")


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

    def close(self) -> None:
        """Mirrors EpochState#close: what the state holds is let go when the quorum leaves it (the leader's buffer)."""

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
