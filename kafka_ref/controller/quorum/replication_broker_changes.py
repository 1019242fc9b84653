"""The controller's answers to broker state changes: fencing, unfencing, controlled shutdown, unregistration.

Mirrors the broker half of org.apache.kafka.controller.ReplicationControlManager (Kafka 3.4):
#processBrokerHeartbeat and the state changes it decides (#handleBrokerFenced,
#handleBrokerUnfenced, #handleBrokerInControlledShutdown), #unregisterBroker,
#maybeFenceOneStaleBroker, and #generateLeaderAndIsrUpdates, which moves a broker out of (or
into) ISRs and leaderships. ``ReplicationBrokerChanges`` is a mixin of
``ReplicationControlManager`` (kafka_ref/controller/quorum/replication_control_manager.py), kept
apart to keep that module within the project's size rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from kafka_ref.common.errors import BrokerIdNotRegisteredException
from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.quorum.cluster_control_manager import BrokerControlState
from kafka_ref.controller.quorum.partition_change_builder import Election
from kafka_ref.image.records import (
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    FenceBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    """Mirrors org.apache.kafka.metadata.BrokerHeartbeatReply."""

    is_caught_up: bool
    is_fenced: bool
    in_controlled_shutdown: bool
    should_shut_down: bool


class ReplicationBrokerChanges:
    """ReplicationControlManager's broker state change methods (``self`` is the ReplicationControlManager)."""

    def generate_leader_and_isr_updates(self, context: str, broker_to_remove: int, broker_to_add: int,
                                        records: list[Any], partitions: Iterator[tuple[Uuid, int]]) -> None:
        """Mirrors ReplicationControlManager#generateLeaderAndIsrUpdates.

        For each partition: drop ``broker_to_remove`` from the ISR and from leadership, accept
        ``broker_to_add`` as a leader even though it is still fenced, elect (unclean if the
        topic allows it).
        """
        def acceptable(replica: int) -> bool:
            return replica != broker_to_remove and (replica == broker_to_add or self.cluster_control.is_active(replica))

        before = len(records)
        for topic_id, partition_id in list(partitions):
            topic = self.topics[topic_id]
            partition = topic.parts[partition_id]
            builder = self._builder(partition, topic_id, partition_id, acceptable)
            if self.configuration_control.unclean_leader_election_enabled_for_topic(topic.name):
                builder.set_election(Election.UNCLEAN)
            builder.set_target_isr([r for r in partition.isr if r != broker_to_remove])
            change = builder.build()
            if change is not None:
                records.append(change)
        if len(records) != before:
            self._log.info("leader_and_isr_updates", context=context, partitions_changed=len(records) - before)

    def unregister_broker(self, broker_id: int) -> list[Any]:
        """Mirrors ReplicationControlManager#unregisterBroker: the records that remove a registered broker."""
        # 1. Only a registered broker can be unregistered.
        registration = self.cluster_control.registration(broker_id)
        if registration is None:
            raise BrokerIdNotRegisteredException(f"Broker ID {broker_id} is not currently registered")
        # 2. Leave every ISR and leadership, then the registration goes.
        records: list[Any] = []
        self.handle_broker_unregistered(broker_id, registration.epoch, records)
        return records

    def handle_broker_unregistered(self, broker_id: int, broker_epoch: int, records: list[Any]) -> None:
        """Mirrors ReplicationControlManager#handleBrokerUnregistered (no ELR: kafka_ref does not model KIP-966)."""
        self.generate_leader_and_isr_updates("handleBrokerUnregistered", broker_id, NO_LEADER, records,
                                             self.partitions_with_broker_in_isr(broker_id))
        records.append(UnregisterBrokerRecord(broker_id=broker_id, broker_epoch=broker_epoch))

    def handle_broker_fenced(self, broker_id: int, records: list[Any]) -> None:
        """Mirrors ReplicationControlManager#handleBrokerFenced: leave every ISR (but a last one), lose leaderships, fence."""
        registration = self.cluster_control.registration(broker_id)
        if registration is None:
            raise RuntimeError(f"Can't find broker registration for broker {broker_id}")
        self.generate_leader_and_isr_updates("handleBrokerFenced", broker_id, NO_LEADER, records,
                                             self.partitions_with_broker_in_isr(broker_id))
        if self.feature_control.is_broker_registration_change_record_supported():
            records.append(BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=registration.epoch,
                                                          fenced=BrokerRegistrationFencingChange.FENCE))
        else:
            records.append(FenceBrokerRecord(id=broker_id, epoch=registration.epoch))

    def handle_broker_unfenced(self, broker_id: int, broker_epoch: int, records: list[Any]) -> None:
        """Mirrors ReplicationControlManager#handleBrokerUnfenced: unfence, then lead leaderless partitions it can."""
        if self.feature_control.is_broker_registration_change_record_supported():
            records.append(BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker_epoch,
                                                          fenced=BrokerRegistrationFencingChange.UNFENCE))
        else:
            records.append(UnfenceBrokerRecord(id=broker_id, epoch=broker_epoch))
        self.generate_leader_and_isr_updates("handleBrokerUnfenced", NO_LEADER, broker_id, records,
                                             self.partitions_with_no_leader())

    def handle_broker_in_controlled_shutdown(self, broker_id: int, broker_epoch: int, records: list[Any]) -> None:
        """Mirrors ReplicationControlManager#handleBrokerInControlledShutdown: mark it, move its leaderships and ISR memberships."""
        if (self.feature_control.is_in_controlled_shutdown_state_supported()
                and not self.cluster_control.in_controlled_shutdown(broker_id)):
            records.append(BrokerRegistrationChangeRecord(
                broker_id=broker_id, broker_epoch=broker_epoch,
                in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
        self.generate_leader_and_isr_updates(f"enterControlledShutdown[{broker_id}]", broker_id, NO_LEADER, records,
                                             self.partitions_with_broker_in_isr(broker_id))

    def process_broker_heartbeat(self, request: Any, register_broker_record_offset: int) -> tuple[list[Any], BrokerHeartbeatReply]:
        """Mirrors ReplicationControlManager#processBrokerHeartbeat.

        1. the broker epoch must be current; 2. the heartbeat manager decides the next state;
        3. a state change writes its records; 4. the contact is noted; 5. the reply.
        """
        broker_id = request.broker_id
        # 1. Epoch.
        self.cluster_control.check_broker_epoch(broker_id, request.broker_epoch)
        heartbeat_manager = self.cluster_control.heartbeat_manager
        # 2. Next state.
        current, following = heartbeat_manager.calculate_next_broker_state(
            broker_id, request, register_broker_record_offset, lambda: self.has_leaderships(broker_id))
        records: list[Any] = []
        # 3. Records for the transition.
        if current is not following:
            self._log.info("broker_state_change", heartbeat_broker=broker_id, current=current.name, next=following.name,
                           broker_metadata_offset=request.current_metadata_offset,
                           register_broker_record_offset=register_broker_record_offset)
            if following is BrokerControlState.FENCED or following is BrokerControlState.SHUTDOWN_NOW:
                self.handle_broker_fenced(broker_id, records)
            elif following is BrokerControlState.UNFENCED:
                self.handle_broker_unfenced(broker_id, request.broker_epoch, records)
            elif following is BrokerControlState.CONTROLLED_SHUTDOWN:
                self.handle_broker_in_controlled_shutdown(broker_id, request.broker_epoch, records)
        # 4. Contact.
        heartbeat_manager.touch(broker_id, following.fenced, request.current_metadata_offset)
        # 5. Reply.
        reply = BrokerHeartbeatReply(
            is_caught_up=request.current_metadata_offset >= register_broker_record_offset,
            is_fenced=following.fenced, in_controlled_shutdown=following.in_controlled_shutdown,
            should_shut_down=following.should_shut_down,
        )
        return records, reply

    def maybe_fence_one_stale_broker(self) -> list[Any]:
        """Mirrors ReplicationControlManager#maybeFenceOneStaleBroker: one expired session at a time."""
        records: list[Any] = []
        heartbeat_manager = self.cluster_control.heartbeat_manager
        broker_id = heartbeat_manager.find_one_stale_broker()
        if broker_id is not None:
            self._log.info("fencing_stale_broker", stale_broker=broker_id,
                           session_timeout_ms=heartbeat_manager.session_timeout_ns // 1_000_000)
            self.handle_broker_fenced(broker_id, records)
            heartbeat_manager.fence(broker_id)
        return records
