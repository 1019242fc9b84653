"""The election state a voter persists: the epoch and its leader or the candidate voted for.

Mirrors org.apache.kafka.raft.ElectionState (its own class in Kafka). QuorumStateStore
(kafka_ref/raft/quorum_state.py) keeps it on the node's disk; each epoch state
(kafka_ref/raft/epoch_states.py, kafka_ref/raft/leader_state.py) answers its own with ``election()``.
Kafka's IllegalArgumentException is ValueError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


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
