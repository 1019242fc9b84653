"""Turns a wished-for partition state into the PartitionChangeRecord that gets there.

Mirrors org.apache.kafka.controller.PartitionChangeBuilder (Kafka 3.8, without ELR and log directories): given the current
registration, a target ISR / replica set, and which brokers may lead, it elects a leader
(clean from the target ISR, or — with unclean election allowed — any acceptable replica, which
then becomes the ISR alone and RECOVERING), bumps the leader epoch where needed, and returns
nothing when nothing would change.

Version switches (metadata.version, from ``inter.broker.protocol.version``):
- before 3.6 every ISR shrink also bumps the leader epoch (KAFKA-15021 dropped that);
- KIP-704 leader recovery state is written from 3.2.
"""

from __future__ import annotations

import enum
from typing import Callable, Iterable

from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.quorum.partition_reassignment import PartitionReassignmentReplicas
from kafka_ref.image.records import NO_LEADER, NO_LEADER_CHANGE, LeaderRecoveryState, PartitionChangeRecord
from kafka_ref.image.registrations import PartitionRegistration


class Election(enum.Enum):
    """Mirrors PartitionChangeBuilder.Election."""

    PREFERRED = "preferred"
    ONLINE = "online"
    UNCLEAN = "unclean"


class PartitionChangeBuilder:
    """Mirrors org.apache.kafka.controller.PartitionChangeBuilder."""

    def __init__(
        self,
        partition: PartitionRegistration,
        topic_id: Uuid,
        partition_id: int,
        is_acceptable_leader: Callable[[int], bool],
        is_leader_recovery_supported: bool = True,
        bump_leader_epoch_on_isr_shrink: bool = False,
    ) -> None:
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.is_acceptable_leader = is_acceptable_leader
        self.is_leader_recovery_supported = is_leader_recovery_supported
        self.bump_leader_epoch_on_isr_shrink = bump_leader_epoch_on_isr_shrink
        self.election = Election.ONLINE
        self.target_isr: list[int] = list(partition.isr)
        self.target_replicas: list[int] = list(partition.replicas)
        self.target_removing: list[int] = list(partition.removing_replicas)
        self.target_adding: list[int] = list(partition.adding_replicas)
        self.target_leader_recovery_state = partition.leader_recovery_state

    def set_election(self, election: Election) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setElection."""
        self.election = election
        return self

    def set_target_isr(self, isr: Iterable[int]) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setTargetIsr."""
        self.target_isr = list(isr)
        return self

    def set_target_replicas(self, replicas: Iterable[int]) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setTargetReplicas."""
        self.target_replicas = list(replicas)
        return self

    def set_target_removing(self, removing: Iterable[int]) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setTargetRemoving."""
        self.target_removing = list(removing)
        return self

    def set_target_adding(self, adding: Iterable[int]) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setTargetAdding."""
        self.target_adding = list(adding)
        return self

    def set_target_leader_recovery_state(self, state: LeaderRecoveryState) -> "PartitionChangeBuilder":
        """Mirrors PartitionChangeBuilder#setTargetLeaderRecoveryState."""
        self.target_leader_recovery_state = state
        return self

    # -- election ----------------------------------------------------------------------------

    def _is_valid_new_leader(self, replica: int) -> bool:
        """Mirrors PartitionChangeBuilder#isValidNewLeader: in the target ISR and acceptable."""
        return replica in self.target_isr and self.is_acceptable_leader(replica)

    def elect_leader(self) -> tuple[int, bool]:
        """Mirrors PartitionChangeBuilder#electLeader: (leader, unclean)."""
        if self.election is Election.PREFERRED:
            return self._elect_preferred_leader()
        return self._elect_any_leader()

    def _elect_preferred_leader(self) -> tuple[int, bool]:
        """Mirrors PartitionChangeBuilder#electPreferredLeader."""
        # 1. The first replica if it can lead; 2. else keep a valid current leader; 3. else any valid one.
        if self.target_replicas and self._is_valid_new_leader(self.target_replicas[0]):
            return self.target_replicas[0], False
        if self._is_valid_new_leader(self.partition.leader):
            return self.partition.leader, False
        for replica in self.target_replicas[1:]:
            if self._is_valid_new_leader(replica):
                return replica, False
        return NO_LEADER, False

    def _elect_any_leader(self) -> tuple[int, bool]:
        """Mirrors PartitionChangeBuilder#electAnyLeader."""
        # 1. The current leader stays if it still can.
        if self._is_valid_new_leader(self.partition.leader):
            return self.partition.leader, False
        # 2. The first replica in the target ISR that can lead.
        for replica in self.target_replicas:
            if self._is_valid_new_leader(replica):
                return replica, False
        # 3. Unclean: any acceptable replica, in replica order.
        if self.election is Election.UNCLEAN:
            for replica in self.target_replicas:
                if self.is_acceptable_leader(replica):
                    return replica, True
        return NO_LEADER, False

    def _try_election(self, record: dict) -> None:
        """Mirrors PartitionChangeBuilder#tryElection."""
        leader, unclean = self.elect_leader()
        if leader != self.partition.leader:
            record["leader"] = leader
            if unclean:
                # An unclean leader is the whole ISR, and recovers before trusting its log.
                record["isr"] = (leader,)
                if self.partition.leader_recovery_state != LeaderRecoveryState.RECOVERING and self.is_leader_recovery_supported:
                    record["leader_recovery_state"] = int(LeaderRecoveryState.RECOVERING)

    def trigger_leader_epoch_bump_for_replica_reassignment_if_needed(self, record: dict) -> None:
        """Mirrors PartitionChangeBuilder#triggerLeaderEpochBumpForReplicaReassignmentIfNeeded.

        1. A leader change already bumps the epoch; 2. else a replica that leaves the
        assignment forces a bump (the same leader is written again).
        """
        # 1. Already changing.
        if record.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            return
        # 2. Some old replica is gone from the target assignment.
        if not set(self.partition.replicas) <= set(self.target_replicas):
            record["leader"] = self.partition.leader

    def trigger_leader_epoch_bump_for_isr_shrink_if_needed(self, record: dict) -> None:
        """Mirrors PartitionChangeBuilder#triggerLeaderEpochBumpForIsrShrinkIfNeeded.

        Runs after the record's ISR is set. 1. Only before metadata.version 3.6 (KAFKA-15021;
        kafka_ref models no ZooKeeper migration, the other case Kafka bumps in); 2. a leader
        change already bumps; 3. no ISR in the record, nothing shrinks (an empty target ISR is
        never written, so it bumps nothing: KAFKA-16624); 4. a member gone from the ISR bumps.
        """
        # 1. Metadata version.
        if not self.bump_leader_epoch_on_isr_shrink:
            return
        # 2. Already changing.
        if record.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            return
        # 3. The ISR is not changing.
        new_isr = record.get("isr")
        if new_isr is None:
            return
        # 4. A shrink.
        if not set(self.partition.isr) <= set(new_isr):
            record["leader"] = self.partition.leader

    def _complete_reassignment_if_needed(self) -> None:
        """Mirrors PartitionChangeBuilder#completeReassignmentIfNeeded: once the target ISR holds
        every replica that stays, the removing replicas leave and the reassignment lists clear."""
        reassignment = PartitionReassignmentReplicas(tuple(self.target_removing), tuple(self.target_adding),
                                                     tuple(self.target_replicas))
        completed = reassignment.maybe_complete_reassignment(self.target_isr)
        if completed is None:
            return
        self.target_replicas, self.target_isr = list(completed[0]), list(completed[1])
        self.target_removing, self.target_adding = [], []

    def build(self) -> PartitionChangeRecord | None:
        """Mirrors PartitionChangeBuilder#build: the change record, or None when nothing changes.

        0. complete a reassignment the target ISR allows; 1. elect; 2. bump the leader epoch
        if a replica leaves; 3. set the new ISR unless the election set it or it would be
        empty (without ELR the last member stays in the ISR); 4. bump the leader epoch on an
        ISR shrink where the metadata version needs it; 5. the assignment; 6. the target
        recovery state, where it differs from the current one; 7. no-op check.
        """
        record: dict = {}
        # 0. Reassignment completion.
        self._complete_reassignment_if_needed()
        # 1. Election.
        self._try_election(record)
        # 2. Leader epoch bump for a replica that leaves.
        self.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
        # 3. ISR: never written empty.
        if "isr" not in record and self.target_isr and list(self.target_isr) != list(self.partition.isr):
            record["isr"] = tuple(self.target_isr)
        # 4. Leader epoch bump for an ISR shrink (before 3.6).
        self.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
        # 5. The assignment (Kafka's setAssignmentChanges: replicas only when some are targeted).
        if self.target_replicas and list(self.target_replicas) != list(self.partition.replicas):
            record["replicas"] = tuple(self.target_replicas)
        if list(self.target_removing) != list(self.partition.removing_replicas):
            record["removing_replicas"] = tuple(self.target_removing)
        if list(self.target_adding) != list(self.partition.adding_replicas):
            record["adding_replicas"] = tuple(self.target_adding)
        # 6. Recovery state: a target that differs from the current state wins.
        if self.target_leader_recovery_state != self.partition.leader_recovery_state:
            record["leader_recovery_state"] = int(self.target_leader_recovery_state)
        # 7. Nothing to say: no record.
        change = PartitionChangeRecord(partition_id=self.partition_id, topic_id=self.topic_id, **record)
        if change_record_is_no_op(change):
            return None
        return change


def change_record_is_no_op(record: PartitionChangeRecord) -> bool:
    """Mirrors PartitionChangeBuilder#changeRecordIsNoOp: no field of the record asks for a change.

    kafka_ref's PartitionChangeRecord has no ELR, last-known-ELR or directories fields.
    """
    return (record.isr is None and record.leader == NO_LEADER_CHANGE and record.replicas is None
            and record.removing_replicas is None and record.adding_replicas is None
            and record.leader_recovery_state == LeaderRecoveryState.NO_CHANGE)
