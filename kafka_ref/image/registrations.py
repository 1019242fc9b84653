"""What the metadata log says about a partition and about a broker.

Mirrors org.apache.kafka.metadata.PartitionRegistration and BrokerRegistration (Kafka 3.4).
Both are immutable: a record produces a new value (``merge``, ``clone_with``), which is what
lets a MetadataImage share unchanged parts with the image before it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
)
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """Mirrors org.apache.kafka.metadata.PartitionRegistration: one partition's replicas, ISR, leader, epochs."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: LeaderRecoveryState = LeaderRecoveryState.RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0

    @classmethod
    def from_record(cls, record: PartitionRecord) -> "PartitionRegistration":
        """Mirrors PartitionRegistration(PartitionRecord)."""
        return cls(
            replicas=tuple(record.replicas),
            isr=tuple(record.isr),
            removing_replicas=tuple(record.removing_replicas),
            adding_replicas=tuple(record.adding_replicas),
            leader=record.leader,
            leader_recovery_state=LeaderRecoveryState(record.leader_recovery_state),
            leader_epoch=record.leader_epoch,
            partition_epoch=record.partition_epoch,
        )

    def merge(self, record: PartitionChangeRecord) -> "PartitionRegistration":
        """Mirrors PartitionRegistration#merge.

        Fields the record leaves unset stay; a set leader (even the same broker) bumps the
        leader epoch; the partition epoch always grows by one.
        """
        # 1. Assignment and ISR: None keeps the current value.
        replicas = self.replicas if record.replicas is None else tuple(record.replicas)
        isr = self.isr if record.isr is None else tuple(record.isr)
        removing = self.removing_replicas if record.removing_replicas is None else tuple(record.removing_replicas)
        adding = self.adding_replicas if record.adding_replicas is None else tuple(record.adding_replicas)
        # 2. Leader: NO_LEADER_CHANGE keeps leader and epoch, anything else is a new leader epoch.
        if record.leader == NO_LEADER_CHANGE:
            leader, leader_epoch = self.leader, self.leader_epoch
        else:
            leader, leader_epoch = record.leader, self.leader_epoch + 1
        # 3. Recovery state, then the partition epoch bump.
        recovery = self.leader_recovery_state.change_to(record.leader_recovery_state)
        return PartitionRegistration(replicas, isr, removing, adding, leader, recovery, leader_epoch, self.partition_epoch + 1)

    def to_record(self, topic_id: Uuid, partition_id: int) -> PartitionRecord:
        """Mirrors PartitionRegistration#toRecord."""
        return PartitionRecord(
            partition_id=partition_id, topic_id=topic_id, replicas=self.replicas, isr=self.isr,
            removing_replicas=self.removing_replicas, adding_replicas=self.adding_replicas, leader=self.leader,
            leader_recovery_state=int(self.leader_recovery_state), leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
        )

    def to_leader_and_isr_partition_state(self, tp: TopicPartition, is_new: bool) -> LeaderAndIsrPartitionState:
        """Mirrors PartitionRegistration#toLeaderAndIsrPartitionState.

        KRaft has no controller epoch for partitions: the state carries -1, and the partition
        epoch plays the part the znode version played in ZooKeeper mode.
        """
        return LeaderAndIsrPartitionState(
            topic_name=tp.topic,
            partition_index=tp.partition,
            controller_epoch=-1,
            leader=self.leader,
            leader_epoch=self.leader_epoch,
            isr=self.isr,
            partition_epoch=self.partition_epoch,
            replicas=self.replicas,
            adding_replicas=self.adding_replicas,
            removing_replicas=self.removing_replicas,
            leader_recovery_state=int(self.leader_recovery_state),
            is_new=is_new,
        )

    def has_leader(self) -> bool:
        """Mirrors PartitionRegistration#hasLeader."""
        return self.leader != NO_LEADER

    def preferred_replica(self) -> int:
        """Mirrors PartitionRegistration#preferredReplica: the first replica, or NO_LEADER."""
        return self.replicas[0] if self.replicas else NO_LEADER

    def has_preferred_leader(self) -> bool:
        """Mirrors PartitionRegistration#hasPreferredLeader."""
        return self.leader == self.preferred_replica()

    def is_reassigning(self) -> bool:
        """Mirrors PartitionRegistration#isReassigning."""
        return bool(self.removing_replicas) or bool(self.adding_replicas)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """Mirrors org.apache.kafka.metadata.BrokerRegistration: a registered broker as the log describes it."""

    id: int
    epoch: int
    incarnation_id: Uuid
    listeners: tuple[BrokerEndpoint, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    supported_features: tuple[BrokerFeature, ...] = ()
    is_migrating_zk_broker: bool = False

    @classmethod
    def from_record(cls, record: RegisterBrokerRecord) -> "BrokerRegistration":
        """Mirrors BrokerRegistration#fromRecord."""
        return cls(
            id=record.broker_id, epoch=record.broker_epoch, incarnation_id=record.incarnation_id,
            listeners=tuple(record.end_points), rack=record.rack, fenced=record.fenced,
            in_controlled_shutdown=record.in_controlled_shutdown, supported_features=tuple(record.features),
            is_migrating_zk_broker=record.is_migrating_zk_broker,
        )

    def to_record(self, metadata_version_level: int, handle_loss: Callable[[str], None]) -> RegisterBrokerRecord:
        """Mirrors BrokerRegistration#toRecord(ImageWriterOptions): the registration as a record for ``metadata_version_level``.

        1. Identity, rack, epoch, incarnation, fenced state; 2. the in-controlled-shutdown state
        only where the metadata.version has it (3.3-IV3, level 7; else ``handle_loss`` is told);
        3. the ZK-migration flag only from 3.4-IV0 (level 8), likewise; 4. listeners and
        supported features.
        """
        # 2. A state the older metadata.version cannot carry is lost.
        in_controlled_shutdown = False
        if self.in_controlled_shutdown:
            if metadata_version_level >= 7:  # MetadataVersion#isInControlledShutdownStateSupported
                in_controlled_shutdown = True
            else:
                handle_loss("the inControlledShutdown state of one or more brokers")
        # 3. Likewise the migrating-ZK-broker flag.
        is_migrating_zk_broker = False
        if self.is_migrating_zk_broker:
            if metadata_version_level >= 8:  # MetadataVersion#isMigrationSupported
                is_migrating_zk_broker = True
            else:
                handle_loss("the isMigratingZkBroker state of one or more brokers")
        # 1, 4. The rest as registered.
        return RegisterBrokerRecord(
            broker_id=self.id, rack=self.rack, broker_epoch=self.epoch, incarnation_id=self.incarnation_id,
            fenced=self.fenced, in_controlled_shutdown=in_controlled_shutdown,
            is_migrating_zk_broker=is_migrating_zk_broker, end_points=self.listeners,
            features=self.supported_features,
        )

    def node(self, listener_name: str = "PLAINTEXT") -> BrokerEndPoint | None:
        """Mirrors BrokerRegistration#node: the broker's end point on ``listener_name``."""
        for endpoint in self.listeners:
            if endpoint.name == listener_name:
                return BrokerEndPoint(self.id, endpoint.host, endpoint.port)
        return None

    def clone_with(self, fencing_change: int, in_controlled_shutdown_change: int) -> "BrokerRegistration":
        """Mirrors BrokerRegistration#cloneWith: apply a BrokerRegistrationChangeRecord's two changes.

        FENCE / UNFENCE set the fenced flag, NONE keeps it; IN_CONTROLLED_SHUTDOWN sets the
        controlled-shutdown flag, NONE keeps it (only a new registration clears it).
        """
        fenced = self.fenced
        if fencing_change == BrokerRegistrationFencingChange.FENCE:
            fenced = True
        elif fencing_change == BrokerRegistrationFencingChange.UNFENCE:
            fenced = False
        shutting_down = self.in_controlled_shutdown
        if in_controlled_shutdown_change == BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN:
            shutting_down = True
        return replace(self, fenced=fenced, in_controlled_shutdown=shutting_down)
