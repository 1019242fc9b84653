"""The records of the ``__cluster_metadata`` log, and the batches that carry them.

Mirrors the generated classes of metadata/src/main/resources/common/metadata/*Record.json
(Kafka 3.4 shapes) and org.apache.kafka.raft.Batch. Each record is a frozen dataclass whose
fields are the schema's fields in snake_case; ``API_KEY`` is the schema's apiKey, which
``MetadataRecordType`` names (MetadataDelta#replay dispatches on it, seed 004 §2.1 step 4).

Sentinels used across KRaft: ``NO_LEADER`` (-1) and ``NO_LEADER_CHANGE`` (-2, only in a
PartitionChangeRecord); a PartitionChangeRecord field left at None means "unchanged".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.uuid import ZERO_UUID, Uuid

NO_LEADER = -1
NO_LEADER_CHANGE = -2


class MetadataRecordType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.metadata.MetadataRecordType (the apiKey of each record)."""

    REGISTER_BROKER_RECORD = 0
    UNREGISTER_BROKER_RECORD = 1
    TOPIC_RECORD = 2
    PARTITION_RECORD = 3
    CONFIG_RECORD = 4
    PARTITION_CHANGE_RECORD = 5
    FENCE_BROKER_RECORD = 7
    UNFENCE_BROKER_RECORD = 8
    REMOVE_TOPIC_RECORD = 9
    FEATURE_LEVEL_RECORD = 12
    PRODUCER_IDS_RECORD = 15
    BROKER_REGISTRATION_CHANGE_RECORD = 17


class LeaderRecoveryState(enum.IntEnum):
    """Mirrors org.apache.kafka.metadata.LeaderRecoveryState (KIP-704).

    RECOVERING marks a leader chosen by an unclean election until it has recovered its log;
    NO_CHANGE (-1) is only ever the value of a PartitionChangeRecord field.
    """

    NO_CHANGE = -1
    RECOVERED = 0
    RECOVERING = 1

    def change_to(self, value: int) -> "LeaderRecoveryState":
        """Mirrors LeaderRecoveryState#changeTo: NO_CHANGE keeps the current state."""
        return self if value == LeaderRecoveryState.NO_CHANGE else LeaderRecoveryState(value)


class BrokerRegistrationFencingChange(enum.IntEnum):
    """Mirrors org.apache.kafka.metadata.BrokerRegistrationFencingChange (the Fenced field)."""

    UNFENCE = -1
    NONE = 0
    FENCE = 1


class BrokerRegistrationInControlledShutdownChange(enum.IntEnum):
    """Mirrors org.apache.kafka.metadata.BrokerRegistrationInControlledShutdownChange."""

    NONE = 0
    IN_CONTROLLED_SHUTDOWN = 1


class ConfigResourceType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.config.ConfigResource.Type (the ids ConfigRecord stores)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """Mirrors org.apache.kafka.common.config.ConfigResource: a type and a name ("" = cluster default)."""

    type: ConfigResourceType
    name: str


# ------------------------------------------------------------------------------ broker records


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerEndpoint:
    """Mirrors RegisterBrokerRecord.BrokerEndpoint: one listener of a broker."""

    name: str = "PLAINTEXT"
    host: str = "localhost"
    port: int = 9092
    security_protocol: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerFeature:
    """Mirrors RegisterBrokerRecord.BrokerFeature: a feature range the broker supports."""

    name: str
    min_supported_version: int
    max_supported_version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerRecord:
    """Mirrors org.apache.kafka.common.metadata.RegisterBrokerRecord (apiKey 0).

    Written by the controller when a broker registers; its offset in the log is the broker
    epoch. A registration starts fenced (``fenced`` defaults to true, as in the schema).
    """

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.REGISTER_BROKER_RECORD
    broker_id: int
    is_migrating_zk_broker: bool = False
    incarnation_id: Uuid = ZERO_UUID
    broker_epoch: int = 0
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterBrokerRecord:
    """Mirrors org.apache.kafka.common.metadata.UnregisterBrokerRecord (apiKey 1)."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.UNREGISTER_BROKER_RECORD
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FenceBrokerRecord:
    """Mirrors org.apache.kafka.common.metadata.FenceBrokerRecord (apiKey 7; metadata.version < 3.3)."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.FENCE_BROKER_RECORD
    id: int
    epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnfenceBrokerRecord:
    """Mirrors org.apache.kafka.common.metadata.UnfenceBrokerRecord (apiKey 8; metadata.version < 3.3)."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.UNFENCE_BROKER_RECORD
    id: int
    epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRegistrationChangeRecord:
    """Mirrors org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord (apiKey 17).

    From metadata.version 3.3 it replaces Fence/UnfenceBrokerRecord: ``fenced`` is a
    BrokerRegistrationFencingChange, ``in_controlled_shutdown`` a
    BrokerRegistrationInControlledShutdownChange.
    """

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD
    broker_id: int
    broker_epoch: int
    fenced: int = BrokerRegistrationFencingChange.NONE
    in_controlled_shutdown: int = BrokerRegistrationInControlledShutdownChange.NONE


# ------------------------------------------------------------------------------ topic records


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicRecord:
    """Mirrors org.apache.kafka.common.metadata.TopicRecord (apiKey 2): a topic's name and id."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.TOPIC_RECORD
    name: str
    topic_id: Uuid


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionRecord:
    """Mirrors org.apache.kafka.common.metadata.PartitionRecord (apiKey 3): a whole partition state."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.PARTITION_RECORD
    partition_id: int
    topic_id: Uuid
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionChangeRecord:
    """Mirrors org.apache.kafka.common.metadata.PartitionChangeRecord (apiKey 5).

    Only the fields that change are set: ``isr``/``replicas``/... None means unchanged,
    ``leader`` NO_LEADER_CHANGE (-2) keeps the leader (any other value bumps the leader
    epoch on replay), ``leader_recovery_state`` -1 keeps the recovery state. Every replay
    bumps the partition epoch.
    """

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.PARTITION_CHANGE_RECORD
    partition_id: int
    topic_id: Uuid
    isr: tuple[int, ...] | None = None
    leader: int = NO_LEADER_CHANGE
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = LeaderRecoveryState.NO_CHANGE


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveTopicRecord:
    """Mirrors org.apache.kafka.common.metadata.RemoveTopicRecord (apiKey 9): the topic is deleted."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.REMOVE_TOPIC_RECORD
    topic_id: Uuid


# ------------------------------------------------------------------------------ other records


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigRecord:
    """Mirrors org.apache.kafka.common.metadata.ConfigRecord (apiKey 4).

    One configuration key of a resource; ``value`` None removes the key.
    """

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.CONFIG_RECORD
    resource_type: int
    resource_name: str
    name: str
    value: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureLevelRecord:
    """Mirrors org.apache.kafka.common.metadata.FeatureLevelRecord (apiKey 12), e.g. metadata.version."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.FEATURE_LEVEL_RECORD
    name: str
    feature_level: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ProducerIdsRecord:
    """Mirrors org.apache.kafka.common.metadata.ProducerIdsRecord (apiKey 15): next free producer id block."""

    API_KEY: ClassVar[MetadataRecordType] = MetadataRecordType.PRODUCER_IDS_RECORD
    broker_id: int
    broker_epoch: int
    next_producer_id: int


MetadataRecord = (
    RegisterBrokerRecord | UnregisterBrokerRecord | FenceBrokerRecord | UnfenceBrokerRecord
    | BrokerRegistrationChangeRecord | TopicRecord | PartitionRecord | PartitionChangeRecord
    | RemoveTopicRecord | ConfigRecord | FeatureLevelRecord | ProducerIdsRecord
)


# ------------------------------------------------------------------------------ batches


@dataclass(frozen=True, slots=True)
class LeaderChangeMessage:
    """Mirrors org.apache.kafka.common.message.LeaderChangeMessage: the control record a new Raft leader writes first.

    ``voters`` are the quorum's voters, ``granting_voters`` those that voted for the leader.
    """

    version: int = 0
    leader_id: int = -1
    voters: tuple[int, ...] = ()
    granting_voters: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Batch:
    """Mirrors org.apache.kafka.raft.Batch: records appended atomically, with their offsets and epoch.

    ``base_offset`` is the offset of the first record; record ``i`` sits at ``base_offset + i``.
    ``epoch`` is the Raft leader epoch that wrote the batch. A control batch (Batch#control, the
    leader's LeaderChangeMessage) has no data ``records`` and its ``control_records`` instead;
    listeners see it and skip it, but it takes offsets like any batch.
    """

    base_offset: int
    epoch: int
    append_timestamp: int
    records: tuple[MetadataRecord, ...]
    control_records: tuple[LeaderChangeMessage, ...] = ()

    @property
    def last_offset(self) -> int:
        return self.base_offset + len(self.records) + len(self.control_records) - 1

    @property
    def is_control(self) -> bool:
        return bool(self.control_records)

    @property
    def size_in_bytes(self) -> int:
        """A stand-in for the encoded size (records are kept as objects): 64 bytes a record."""
        return 64 * (len(self.records) + len(self.control_records))

    def __iter__(self):
        return iter(self.records)
