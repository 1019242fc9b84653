"""The admin client's argument and result records (NewTopic, TopicDescription, OffsetSpec, ...).

Mirrors the value classes of org.apache.kafka.clients.admin that KafkaAdminClient
(kafka_ref/clients/admin.py) takes and returns; kept apart so the client module stays readable.
``_all`` is the *Result#all rule every admin module shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from kafka_ref.clients.client_metadata import Node
from kafka_ref.common.errors import ApiException
from kafka_ref.common.requests.create_topics import CreatableReplicaAssignment, CreatableTopic, CreateableTopicConfig
from kafka_ref.common.requests.list_offsets import ListOffsetsRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid


@dataclass(frozen=True, slots=True)
class RecordsToDelete:
    """Mirrors org.apache.kafka.clients.admin.RecordsToDelete: delete the records before an offset
    (-1: before the high watermark)."""

    before_offset: int

    @classmethod
    def before(cls, offset: int) -> "RecordsToDelete":
        """Mirrors RecordsToDelete#beforeOffset."""
        return cls(offset)


@dataclass(frozen=True, slots=True)
class DeletedRecords:
    """Mirrors org.apache.kafka.clients.admin.DeletedRecords: the partition's low watermark after the delete."""

    low_watermark: int


# --------------------------------------------------------------------------------------------
# Arguments and results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewTopic:
    """Mirrors org.apache.kafka.clients.admin.NewTopic.

    Either a partition count and replication factor (-1 each: the broker defaults) or an
    explicit ``replica_assignment`` (partition → broker ids), plus topic configs.
    """

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignment: dict[int, list[int]] | None = None
    configs: dict[str, str] = field(default_factory=dict)

    def to_creatable_topic(self) -> CreatableTopic:
        """Mirrors org.apache.kafka.clients.admin.NewTopic#convertToCreatableTopic."""
        # 1. An explicit assignment replaces the counts (sent as -1).
        if self.replica_assignment is not None:
            return CreatableTopic(
                name=self.name, num_partitions=-1, replication_factor=-1,
                assignments=tuple(CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(b))
                                  for p, b in sorted(self.replica_assignment.items())),
                configs=tuple(CreateableTopicConfig(name=k, value=v) for k, v in self.configs.items()),
            )
        # 2. Otherwise the counts as given.
        return CreatableTopic(
            name=self.name, num_partitions=self.num_partitions, replication_factor=self.replication_factor,
            configs=tuple(CreateableTopicConfig(name=k, value=v) for k, v in self.configs.items()),
        )


@dataclass(frozen=True, slots=True)
class TopicMetadataAndConfig:
    """Mirrors org.apache.kafka.clients.admin.CreateTopicsResult.TopicMetadataAndConfig."""

    topic_id: Uuid
    num_partitions: int
    replication_factor: int
    configs: dict[str, str | None]


@dataclass(frozen=True, slots=True)
class TopicPartitionInfo:
    """Mirrors org.apache.kafka.common.TopicPartitionInfo (brokers by id; ``leader`` None when there is none)."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """Mirrors org.apache.kafka.clients.admin.TopicDescription."""

    name: str
    topic_id: Uuid
    partitions: tuple[TopicPartitionInfo, ...]
    internal: bool = False


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """Mirrors org.apache.kafka.clients.admin.DescribeClusterResult (resolved)."""

    cluster_id: str | None
    controller: Node | None
    nodes: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class OffsetSpec:
    """Mirrors org.apache.kafka.clients.admin.OffsetSpec: which offset ``list_offsets`` looks up."""

    timestamp: int

    @classmethod
    def earliest(cls) -> OffsetSpec:
        """Mirrors org.apache.kafka.clients.admin.OffsetSpec#earliest: the log start offset."""
        return cls(ListOffsetsRequest.EARLIEST_TIMESTAMP)

    @classmethod
    def latest(cls) -> OffsetSpec:
        """Mirrors org.apache.kafka.clients.admin.OffsetSpec#latest: the high watermark (LSO for read_committed)."""
        return cls(ListOffsetsRequest.LATEST_TIMESTAMP)

    @classmethod
    def max_timestamp(cls) -> OffsetSpec:
        """Mirrors org.apache.kafka.clients.admin.OffsetSpec#maxTimestamp: the record with the largest timestamp."""
        return cls(ListOffsetsRequest.MAX_TIMESTAMP)

    @classmethod
    def for_timestamp(cls, timestamp: int) -> OffsetSpec:
        """Mirrors org.apache.kafka.clients.admin.OffsetSpec#forTimestamp: the first offset at or after ``timestamp``."""
        return cls(timestamp)


@dataclass(frozen=True, slots=True)
class AlterConfigOp:
    """Mirrors org.apache.kafka.clients.admin.AlterConfigOp (its ConfigEntry's name and value, and the OpType).

    ``op_type`` is "SET", "DELETE", "APPEND" or "SUBTRACT" (AlterConfigOp.OpType).
    """

    name: str
    value: str | None = None
    op_type: str = "SET"


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """Mirrors org.apache.kafka.clients.admin.NewPartitions: a topic's new total partition count.

    ``new_assignments`` (optional) lists the replicas of each added partition, in order.
    """

    total_count: int
    new_assignments: list[list[int]] | None = None

    @classmethod
    def increase_to(cls, total_count: int, new_assignments: list[list[int]] | None = None) -> NewPartitions:
        """Mirrors NewPartitions#increaseTo."""
        return cls(total_count, new_assignments)


@dataclass(frozen=True, slots=True)
class ListOffsetsResultInfo:
    """Mirrors org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo (-1 offset: none)."""

    offset: int
    timestamp: int
    leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """Mirrors org.apache.kafka.clients.admin.ReplicaInfo: one replica in a log directory."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """Mirrors org.apache.kafka.clients.admin.LogDirDescription (unknown volume bytes are None)."""

    error: ApiException | None
    replica_infos: dict[TopicPartition, ReplicaInfo]
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """Mirrors org.apache.kafka.clients.admin.ConfigEntry as describeConfigs returns it (no synonyms, type or documentation).

    ``source`` is a ConfigEntry.ConfigSource name: DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_BROKER_LOGGER_CONFIG or UNKNOWN.
    """

    name: str
    value: str | None
    source: str = "UNKNOWN"
    is_sensitive: bool = False
    is_read_only: bool = False

    @property
    def is_default(self) -> bool:
        """Mirrors ConfigEntry#isDefault: the value is the config's default."""
        return self.source == "DEFAULT_CONFIG"


def _all(results: dict, order: Iterable) -> dict:
    """Mirrors KafkaFuture#allOf as the *Result#all methods use it: the first failure (in request order) raises."""
    for key in order:
        value = results.get(key)
        if isinstance(value, BaseException):
            raise value
    return {key: results[key] for key in order}
