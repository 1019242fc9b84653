"""The leader's epoch state and what it knows of each replica.

Mirrors org.apache.kafka.raft.LeaderState with its nested ReplicaState, and the
DescribeQuorumResponseData replica and partition data that LeaderState#describeQuorum fills.
The leader tracks observers and caught-up times and moves replicas between voters and
observers when handed a new voter set; the other epoch states are in kafka_ref/raft/epoch_states.py.
Kafka's IllegalArgumentException is ValueError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.time import Time
from kafka_ref.image.records import LeaderChangeMessage
from kafka_ref.raft.batch_accumulator import BatchAccumulator
from kafka_ref.raft.election_state import ElectionState
from kafka_ref.raft.epoch_states import NO_TIMEOUT, EpochState, _Timer


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
                 granting_voters: set[int], fetch_timeout_ms: float, accumulator: BatchAccumulator | None = None) -> None:
        self.time = time
        # The epoch's write buffer (appends wait in it for the linger time).
        self.accumulator = accumulator
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

    def append_leader_change_message(self, current_time_ms: int) -> None:
        """Mirrors LeaderState#appendLeaderChangeMessage: the epoch's first batch names the leader and its voters.

        It goes through the accumulator, which drains at once (forceDrain): the leader's next
        poll writes it, so the epoch can commit without waiting for the linger time.
        """
        assert self.accumulator is not None
        message = LeaderChangeMessage(leader_id=self.local_id, voters=tuple(sorted(self.voter_states)),
                                      granting_voters=tuple(sorted(self.granting_voters)))
        self.accumulator.append_leader_change_message(message, current_time_ms)
        self.accumulator.force_drain()

    def close(self) -> None:
        """Mirrors LeaderState#close: batches never written are dropped with the epoch."""
        if self.accumulator is not None:
            self.accumulator.close()

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
