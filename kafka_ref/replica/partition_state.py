"""The ISR as the leader sees it while AlterPartition requests are in flight.

Mirrors the sealed trait kafka.cluster.PartitionState and its cases CommittedPartitionState,
PendingExpandIsr and PendingShrinkIsr (KIP-497). ``isr`` is what the controller committed;
``maximal_isr`` is what the leader must assume for HW purposes: an expansion counts the new
member at once (stricter for HW), a shrink keeps the departing members until it commits.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.zk.zk_data import LeaderAndIsr

RECOVERED = 0
RECOVERING = 1


@dataclass(frozen=True, slots=True)
class CommittedPartitionState:
    """Mirrors kafka.cluster.CommittedPartitionState."""

    isr: frozenset[int]
    leader_recovery_state: int = RECOVERED

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr

    @property
    def is_inflight(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class PendingExpandIsr:
    """Mirrors kafka.cluster.PendingExpandIsr."""

    new_in_sync_replica_id: int
    sent_leader_and_isr: LeaderAndIsr
    last_committed_state: CommittedPartitionState
    # KRaft (KIP-903): (member, broker epoch) pairs taken when the change was prepared, sent with it
    # (and with any retry of it); None in ZooKeeper mode. Kafka keeps them in sentLeaderAndIsr.
    isr_broker_epochs: tuple[tuple[int, int], ...] | None = None

    @property
    def isr(self) -> frozenset[int]:
        return self.last_committed_state.isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr | {self.new_in_sync_replica_id}

    @property
    def leader_recovery_state(self) -> int:
        return self.last_committed_state.leader_recovery_state

    @property
    def is_inflight(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class PendingShrinkIsr:
    """Mirrors kafka.cluster.PendingShrinkIsr."""

    out_of_sync_replica_ids: frozenset[int]
    sent_leader_and_isr: LeaderAndIsr
    last_committed_state: CommittedPartitionState
    # As PendingExpandIsr's.
    isr_broker_epochs: tuple[tuple[int, int], ...] | None = None

    @property
    def isr(self) -> frozenset[int]:
        return self.last_committed_state.isr

    @property
    def maximal_isr(self) -> frozenset[int]:
        return self.isr

    @property
    def leader_recovery_state(self) -> int:
        return self.last_committed_state.leader_recovery_state

    @property
    def is_inflight(self) -> bool:
        return True


PartitionState = CommittedPartitionState | PendingExpandIsr | PendingShrinkIsr
PendingPartitionChange = PendingExpandIsr | PendingShrinkIsr
