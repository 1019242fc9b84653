"""Replica sets of a KRaft partition reassignment (KIP-455 on the QuorumController).

Mirrors org.apache.kafka.controller.PartitionReassignmentReplicas and
PartitionReassignmentRevert (Kafka 3.5+). A reassignment from replicas R to target T goes in two
PartitionChangeRecords:

1. replicas become T followed by the replicas being removed (R minus T), with
   ``removing_replicas`` = R − T and ``adding_replicas`` = T − R;
2. once the ISR holds every replica that stays (all of T), the removing ones leave the replica
   set and the ISR, and both lists are cleared (``maybe_complete_reassignment``, called by
   PartitionChangeBuilder#build on every change of the partition).

Cancelling goes back to the original replicas (the merged list without the adding ones) and
takes the adding replicas out of the ISR; if nothing would be left in the ISR, the first original
replica is put back in it alone, which counts as an unclean election.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from kafka_ref.common.errors import InvalidReplicaAssignmentException


@dataclass(frozen=True, slots=True)
class PartitionReassignmentReplicas:
    """Mirrors org.apache.kafka.controller.PartitionReassignmentReplicas."""

    removing: tuple[int, ...]
    adding: tuple[int, ...]
    replicas: tuple[int, ...]

    @classmethod
    def from_assignments(cls, current: Sequence[int], target: Sequence[int]) -> "PartitionReassignmentReplicas":
        """The merged replica set for moving ``current`` to ``target`` (sets sorted, as Kafka's TreeSet)."""
        removing = tuple(sorted(set(current) - set(target)))
        adding = tuple(sorted(set(target) - set(current)))
        return cls(removing, adding, tuple(target) + removing)

    def is_reassignment_in_progress(self) -> bool:
        return bool(self.removing) or bool(self.adding)

    def maybe_complete_reassignment(self, target_isr: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Mirrors PartitionReassignmentReplicas#maybeCompleteReassignment: (replicas, isr) once done, else None.

        1. Nothing in progress: None. 2. Drop the removing replicas from the ISR and the
        replica set (neither may become empty). 3. Done only if the ISR now holds every replica.
        """
        if not self.is_reassignment_in_progress():
            return None
        new_isr = tuple(r for r in target_isr if r not in self.removing)
        new_replicas = tuple(r for r in self.replicas if r not in self.removing)
        if not new_isr or not new_replicas:
            return None
        if not set(new_replicas) <= set(new_isr):
            return None
        return new_replicas, new_isr

    def original_replicas(self) -> tuple[int, ...]:
        """Mirrors PartitionReassignmentReplicas#originalReplicas: the merged list without the adding ones."""
        return tuple(r for r in self.replicas if r not in self.adding)


@dataclass(frozen=True, slots=True)
class PartitionReassignmentRevert:
    """Mirrors org.apache.kafka.controller.PartitionReassignmentRevert: where a cancelled reassignment goes back to."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    unclean: bool

    @classmethod
    def of(cls, replicas: Sequence[int], isr: Sequence[int], removing: Sequence[int],
           adding: Sequence[int]) -> "PartitionReassignmentRevert":
        ongoing = PartitionReassignmentReplicas(tuple(removing), tuple(adding), tuple(replicas))
        original = ongoing.original_replicas()
        kept_isr = tuple(r for r in isr if r not in ongoing.adding)
        if kept_isr:
            return cls(original, kept_isr, False)
        # Every ISR member was being added: the first original replica comes back alone (unclean).
        if not original:
            raise InvalidReplicaAssignmentException("Invalid replica assignment: addingReplicas contains all replicas.")
        return cls(original, (original[0],), True)
