"""The AlterPartition side of a Partition: proposing ISR changes and handling the controller's answers.

Mirrors kafka.cluster.Partition#prepareIsrExpand, #prepareIsrShrink, #addBrokerEpochToIsr,
#submitAlterPartition, #handleAlterPartitionError and #handleAlterPartitionUpdate (Kafka 3.7,
KIP-497 and KIP-903). They are methods of Partition (a mixin); the split only keeps each module
readable. A proposal becomes the partition's pending state at once (PendingExpandIsr or
PendingShrinkIsr) and stays so until the controller's answer commits it, resets it, or leaves it
waiting for new metadata.
"""

from __future__ import annotations

from typing import Iterable

from kafka_ref.common.errors import Errors
from kafka_ref.replica.partition_state import (
    CommittedPartitionState,
    PendingExpandIsr,
    PendingPartitionChange,
    PendingShrinkIsr,
)
from kafka_ref.zk.zk_data import LeaderAndIsr


class PartitionIsrUpdates:
    """AlterPartition methods of kafka.cluster.Partition."""

    def _sent_leader_and_isr(self, isr: frozenset[int], recovery_state: int) -> LeaderAndIsr:
        return LeaderAndIsr(
            leader=self.local_broker_id,
            leader_epoch=self.leader_epoch,
            isr=tuple(sorted(isr)),
            leader_recovery_state=recovery_state,
            partition_epoch=self.partition_epoch,
        )

    def add_broker_epoch_to_isr(self, isr: Iterable[int]) -> tuple[tuple[int, int], ...] | None:
        """Mirrors kafka.cluster.Partition#addBrokerEpochToIsr (KIP-903, Kafka 3.5+).

        KRaft mode: each member with the broker epoch its last fetch carried, -1 for a member
        that has not fetched from this leader (this broker's own epoch is filled in by the
        AlterPartitionManager, which holds it). ZooKeeper mode sends no epochs: None.
        """
        if getattr(self.metadata_cache, "get_alive_broker_epoch", None) is None:
            return None
        epochs = []
        for broker_id in sorted(isr):
            replica = self.remote_replicas_map.get(broker_id)
            epoch = replica.state_snapshot.broker_epoch if replica is not None else None
            epochs.append((broker_id, -1 if epoch is None else epoch))
        return tuple(epochs)

    def prepare_isr_expand(self, current_state: CommittedPartitionState, new_in_sync_replica_id: int) -> PendingExpandIsr:
        """Mirrors kafka.cluster.Partition#prepareIsrExpand: assume the expansion until answered.

        The members' broker epochs are taken now, with the proposal, so a retry resends them as
        they were.
        """
        # 1. The ISR to propose, with its members' broker epochs (KRaft).
        isr_to_send = current_state.isr | {new_in_sync_replica_id}
        # 2. The pending state counts the new member in the maximal ISR at once.
        updated = PendingExpandIsr(
            new_in_sync_replica_id,
            self._sent_leader_and_isr(isr_to_send, current_state.leader_recovery_state),
            current_state,
            self.add_broker_epoch_to_isr(isr_to_send),
        )
        self.partition_state = updated
        self._log.info("isr_expand_pending", isr=sorted(current_state.isr), new_isr=sorted(isr_to_send))
        return updated

    def prepare_isr_shrink(self, current_state: CommittedPartitionState, out_of_sync: frozenset[int]) -> PendingShrinkIsr:
        """Mirrors kafka.cluster.Partition#prepareIsrShrink: keep the old ISR as maximal until answered.

        The members' broker epochs are taken now, with the proposal (as for an expansion).
        """
        # 1. The ISR to propose, with its members' broker epochs (KRaft).
        isr_to_send = current_state.isr - out_of_sync
        # 2. The pending state keeps the old ISR as the maximal ISR.
        updated = PendingShrinkIsr(
            out_of_sync,
            self._sent_leader_and_isr(isr_to_send, current_state.leader_recovery_state),
            current_state,
            self.add_broker_epoch_to_isr(isr_to_send),
        )
        self.partition_state = updated
        return updated

    def submit_alter_partition(self, proposed_isr_state: PendingPartitionChange) -> None:
        """Mirrors kafka.cluster.Partition#submitAlterPartition.

        The AlterPartitionManager batches and sends the change; its answer comes back through
        ``_on_alter_partition_result``, which ignores answers for a state we already left.
        """
        topic_id = self.topic_id
        callback = lambda result, error: self._on_alter_partition_result(proposed_isr_state, result, error)  # noqa: E731
        # KRaft: the members' broker epochs taken when the change was prepared go along (KIP-903).
        epochs = proposed_isr_state.isr_broker_epochs
        if epochs is None:
            self.alter_partition_manager.submit(self.topic_partition, topic_id, proposed_isr_state.sent_leader_and_isr,
                                                self.controller_epoch, callback)
            return
        self.alter_partition_manager.submit(self.topic_partition, topic_id, proposed_isr_state.sent_leader_and_isr,
                                            self.controller_epoch, callback, isr_broker_epochs=dict(epochs))

    def _on_alter_partition_result(
        self, proposed_isr_state: PendingPartitionChange, leader_and_isr: LeaderAndIsr | None, error: Errors | None
    ) -> None:
        hw_incremented = False
        should_retry = False
        # 1. An answer for a state that leader election already replaced is stale.
        if self.partition_state is not proposed_isr_state:
            self._log.debug("alter_partition_result_ignored", proposed=str(proposed_isr_state))
        elif leader_and_isr is not None:
            hw_incremented = self.handle_alter_partition_update(proposed_isr_state, leader_and_isr)
        else:
            should_retry = self.handle_alter_partition_error(proposed_isr_state, error or Errors.UNKNOWN_SERVER_ERROR)
        # 2. Wake delayed operations if the HW moved; 3. retry the same proposal if asked to.
        if hw_incremented:
            self.try_complete_delayed_requests()
        if should_retry:
            self.submit_alter_partition(proposed_isr_state)

    def handle_alter_partition_error(self, proposed_isr_state: PendingPartitionChange, error: Errors) -> bool:
        """Mirrors kafka.cluster.Partition#handleAlterPartitionError; True means "retry".

        Three classes: the controller refused the change (OPERATION_NOT_ATTEMPTED,
        INELIGIBLE_REPLICA) → back to the last committed state; our metadata is stale
        (UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH,
        INVALID_UPDATE_VERSION, INVALID_REQUEST, NEW_LEADER_ELECTED) → stay pending until new
        metadata arrives; anything else → retry.
        """
        self.failed_alter_partition_count += 1
        if error in (Errors.OPERATION_NOT_ATTEMPTED, Errors.INELIGIBLE_REPLICA):
            self.partition_state = proposed_isr_state.last_committed_state
            self._log.info("alter_partition_rejected_reset", error=error.name, isr=sorted(self.partition_state.isr))
            return False
        if error in (
            Errors.UNKNOWN_TOPIC_OR_PARTITION,
            Errors.UNKNOWN_TOPIC_ID,
            Errors.FENCED_LEADER_EPOCH,
            Errors.INVALID_UPDATE_VERSION,
            Errors.INVALID_REQUEST,
            Errors.NEW_LEADER_ELECTED,
        ):
            self._log.info("alter_partition_failed_awaiting_metadata", error=error.name)
            return False
        self._log.warning("alter_partition_failed_retrying", error=error.name)
        return True

    def handle_alter_partition_update(self, proposed_isr_state: PendingPartitionChange, leader_and_isr: LeaderAndIsr) -> bool:
        """Mirrors kafka.cluster.Partition#handleAlterPartitionUpdate; returns whether the HW moved."""
        # 1. An answer for another leader epoch or an older partition epoch is ignored.
        if leader_and_isr.leader_epoch != self.leader_epoch:
            self.failed_alter_partition_count += 1
            return False
        if leader_and_isr.partition_epoch < self.partition_epoch:
            self.failed_alter_partition_count += 1
            return False
        # 2. Commit the controller's ISR and partition epoch.
        self.partition_state = CommittedPartitionState(frozenset(leader_and_isr.isr), leader_and_isr.leader_recovery_state)
        self.partition_epoch = leader_and_isr.partition_epoch
        if isinstance(proposed_isr_state, PendingExpandIsr):
            self.isr_expand_count += 1
        else:
            self.isr_shrink_count += 1
        self._log.info(
            "isr_updated",
            isr=sorted(self.partition_state.isr),
            partition_epoch=self.partition_epoch,
            under_min_isr=self.is_under_min_isr(),
        )
        # 3. The ISR may have shrunk: the HW may move.
        leader_log = self.leader_log_if_local()
        return leader_log is not None and self.maybe_increment_leader_hw(leader_log)
