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
The classes are split as Kafka's files are: ElectionState in kafka_ref/raft/election_state.py,
the epoch states in kafka_ref/raft/epoch_states.py, LeaderState in kafka_ref/raft/leader_state.py;
this module keeps QuorumStateStore, QuorumConfig and QuorumState.
Kafka's IllegalArgumentException is ValueError.

Timers are virtual-time deadlines in milliseconds (``Time.milliseconds()``); election timeouts
are drawn from the node's seeded RNG.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterable

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import Time
from kafka_ref.raft.batch_accumulator import BatchAccumulator
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.epoch_states import (
    NO_TIMEOUT,
    CandidateState,
    EpochState,
    FollowerState,
    ResignedState,
    UnattachedState,
    VotedState,
)
from kafka_ref.raft.leader_state import LeaderState


# ------------------------------------------------------------------------------ persisted state


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
    # quorum.append.linger.ms: how long the leader's appends wait to be batched (BatchAccumulator).
    append_linger_ms: int = 25
    # Kafka 3.7 and earlier (kafka_ref.broker.version below 3.8) answer Vote, BeginQuorumEpoch and
    # EndQuorumEpoch from or to a non-voter with INCONSISTENT_VOTER_SET; Kafka 3.8 dropped that
    # check of validateVoterOnlyRequest while preparing dynamic voters (KIP-853).
    inconsistent_voter_set_check: bool = False

    @classmethod
    def from_kafka_config(cls, config: Any, voters: Iterable[int]) -> "QuorumConfig":
        """The controller.quorum.* keys of a node's KafkaConfig (what Kafka's QuorumConfig reads from its AbstractConfig)."""
        return cls(
            election_timeout_ms=config.get("controller.quorum.election.timeout.ms"),
            fetch_timeout_ms=config.get("controller.quorum.fetch.timeout.ms"),
            election_backoff_max_ms=config.get("controller.quorum.election.backoff.max.ms"),
            request_timeout_ms=config.get("controller.quorum.request.timeout.ms"),
            retry_backoff_ms=config.get("controller.quorum.retry.backoff.ms"),
            voters=tuple(voters),
            append_linger_ms=config.get("controller.quorum.append.linger.ms"),
            inconsistent_voter_set_check=not config.get("kafka_ref.broker.version").is_at_least("3.8"),
        )


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

    def transition_to_leader(self, epoch_start_offset: int, accumulator: BatchAccumulator | None = None) -> LeaderState:
        """Mirrors QuorumState#transitionToLeader: only a candidate that won a majority.

        ``accumulator`` is the new epoch's write buffer (KafkaRaftClient#onBecomeLeader makes it);
        the epoch-state tests, which never append, leave it out.
        """
        if self.is_observer() or not isinstance(self.state, CandidateState):
            raise IllegalStateException(f"Cannot transition to Leader from {self.state}")
        if not self.state.is_vote_granted():
            raise IllegalStateException("Cannot become leader without a majority of votes")
        state = LeaderState(self.time, self.local_id, self.epoch, epoch_start_offset, self.voters,
                            self.state.granted_voters(), self.config.fetch_timeout_ms, accumulator)
        self._durable_transition_to(state)
        return state

    def _durable_transition_to(self, state: EpochState) -> None:
        """Mirrors QuorumState#durableTransitionTo: write the election state, close the old state, then switch."""
        self.store.write_election_state(state.election())
        self.state.close()
        self.state = state
