"""The broker's (and controller's) immutable picture of the cluster at one metadata offset.

Mirrors org.apache.kafka.image.MetadataImage and its parts (Kafka 3.8): ClusterImage
(registered brokers), TopicsImage (topics by id and by name, each with its partitions),
ConfigurationsImage, FeaturesImage and ProducerIdsImage, stamped with the offset and epoch of
the last record they contain (MetadataProvenance). An image is never changed: a MetadataDelta
built on it produces the next one (seed 004 §2.1 step 6, ``_delta.apply()``). Unchanged
topics and brokers are shared between consecutive images, as in Kafka. ``write`` turns an
image back into the records that rebuild it (kafka_ref/image/writer.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.records import ConfigRecord, ConfigResource, FeatureLevelRecord, ProducerIdsRecord, TopicRecord
from kafka_ref.image.registrations import BrokerRegistration, PartitionRegistration
from kafka_ref.image.writer import (
    METADATA_VERSION_FEATURE,
    MINIMUM_BOOTSTRAP_VERSION,
    MINIMUM_KRAFT_VERSION,
    ImageWriterOptions,
    RecordListWriter,
)


@dataclass(frozen=True, slots=True)
class MetadataProvenance:
    """Mirrors org.apache.kafka.image.MetadataProvenance: where in the log an image stands."""

    last_contained_offset: int = -1
    last_contained_epoch: int = -1
    last_contained_log_time_ms: int = -1


@dataclass(frozen=True, slots=True)
class ClusterImage:
    """Mirrors org.apache.kafka.image.ClusterImage: broker id → registration."""

    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        """Mirrors ClusterImage#broker (None for an unknown id, e.g. NO_LEADER)."""
        return self.brokers.get(broker_id)

    def is_empty(self) -> bool:
        return not self.brokers

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.ClusterImage#write: one RegisterBrokerRecord per broker
        (in id order here; Kafka's map order)."""
        for broker_id in sorted(self.brokers):
            writer.write(self.brokers[broker_id].to_record(options.metadata_version, options.handle_loss))


@dataclass(frozen=True, slots=True)
class TopicImage:
    """Mirrors org.apache.kafka.image.TopicImage: a topic's name, id and partitions."""

    name: str
    id: Uuid
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=dict)

    def topic_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(self.name, p) for p in sorted(self.partitions)]

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.TopicImage#write: the TopicRecord, then a PartitionRecord per partition."""
        writer.write(TopicRecord(name=self.name, topic_id=self.id))
        for partition_id in sorted(self.partitions):
            writer.write(self.partitions[partition_id].to_record(self.id, partition_id))


@dataclass(frozen=True, slots=True)
class TopicsImage:
    """Mirrors org.apache.kafka.image.TopicsImage: topics by id and by name."""

    topics_by_id: Mapping[Uuid, TopicImage] = field(default_factory=dict)
    topics_by_name: Mapping[str, TopicImage] = field(default_factory=dict)

    def get_topic(self, key: Uuid | str) -> TopicImage | None:
        """Mirrors TopicsImage#getTopic (by id or by name)."""
        if isinstance(key, Uuid):
            return self.topics_by_id.get(key)
        return self.topics_by_name.get(key)

    def get_partition(self, topic_id: Uuid, partition_id: int) -> PartitionRegistration | None:
        """Mirrors TopicsImage#getPartition."""
        topic = self.topics_by_id.get(topic_id)
        return topic.partitions.get(partition_id) if topic is not None else None

    def is_empty(self) -> bool:
        return not self.topics_by_id

    def topic_name_to_id_view(self) -> Mapping[str, Uuid]:
        """Mirrors org.apache.kafka.image.TopicsImage#topicNameToIdView: a read-only name → id map."""
        return MappingProxyType({name: topic.id for name, topic in self.topics_by_name.items()})

    def topic_id_to_name_view(self) -> Mapping[Uuid, str]:
        """Mirrors org.apache.kafka.image.TopicsImage#topicIdToNameView: a read-only id → name map."""
        return MappingProxyType({topic_id: topic.name for topic_id, topic in self.topics_by_id.items()})

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.TopicsImage#write: every topic (by name here; Kafka's map order)."""
        for name in sorted(self.topics_by_name):
            self.topics_by_name[name].write(writer, options)


@dataclass(frozen=True, slots=True)
class ConfigurationsImage:
    """Mirrors org.apache.kafka.image.ConfigurationsImage: resource → its configuration keys."""

    data: Mapping[ConfigResource, Mapping[str, str]] = field(default_factory=dict)

    def config_properties(self, resource: ConfigResource) -> dict[str, str]:
        """Mirrors ConfigurationsImage#configProperties (empty when the resource has none)."""
        return dict(self.data.get(resource, {}))

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.image.ConfigurationsImage#isEmpty."""
        return not self.data

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.ConfigurationsImage#write: one ConfigRecord per key of every resource."""
        for resource in sorted(self.data, key=lambda r: (int(r.type), r.name)):
            for name, value in sorted(self.data[resource].items()):
                writer.write(ConfigRecord(resource_type=int(resource.type), resource_name=resource.name,
                                          name=name, value=value))


@dataclass(frozen=True, slots=True)
class FeaturesImage:
    """Mirrors org.apache.kafka.image.FeaturesImage: the finalized feature levels and, apart from
    them, the metadata.version (its feature level; MINIMUM_KRAFT_VERSION until one is written).
    The ZK migration state is not modelled."""

    finalized_versions: Mapping[str, int] = field(default_factory=dict)
    metadata_version: int = MINIMUM_KRAFT_VERSION

    def metadata_version_level(self) -> int:
        """Mirrors org.apache.kafka.image.FeaturesImage#metadataVersion (as a feature level)."""
        return self.metadata_version

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.image.FeaturesImage#isEmpty: no feature and the minimum KRaft metadata.version."""
        return not self.finalized_versions and self.metadata_version == MINIMUM_KRAFT_VERSION

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.FeaturesImage#write.

        1. Below 3.3-IV0 no FeatureLevelRecord exists: every finalized feature is a loss; 2.
        otherwise metadata.version first (the options' level: the records are read at it),
        then each feature.
        """
        # 1. Too old for feature levels.
        if options.metadata_version < MINIMUM_BOOTSTRAP_VERSION:
            if self.finalized_versions:
                options.handle_loss("feature flag(s): " + ", ".join(sorted(self.finalized_versions)))
            return
        # 2. metadata.version, then the others.
        writer.write(FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=options.metadata_version))
        for name in sorted(self.finalized_versions):
            writer.write(FeatureLevelRecord(name=name, feature_level=self.finalized_versions[name]))


@dataclass(frozen=True, slots=True)
class ProducerIdsImage:
    """Mirrors org.apache.kafka.image.ProducerIdsImage: the next producer id block starts here."""

    next_producer_id: int = -1

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.image.ProducerIdsImage#isEmpty."""
        return self.next_producer_id == -1

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.ProducerIdsImage#write: the next block's start, if any
        (broker id and epoch -1)."""
        if self.next_producer_id >= 0:
            writer.write(ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=self.next_producer_id))


@dataclass(frozen=True, slots=True)
class MetadataImage:
    """Mirrors org.apache.kafka.image.MetadataImage."""

    provenance: MetadataProvenance = MetadataProvenance()
    features: FeaturesImage = FeaturesImage()
    cluster: ClusterImage = ClusterImage()
    topics: TopicsImage = TopicsImage()
    configs: ConfigurationsImage = ConfigurationsImage()
    producer_ids: ProducerIdsImage = ProducerIdsImage()

    @property
    def highest_offset(self) -> int:
        """Mirrors MetadataImage#highestOffsetAndEpoch().offset()."""
        return self.provenance.last_contained_offset

    def is_empty(self) -> bool:
        """Mirrors org.apache.kafka.image.MetadataImage#isEmpty."""
        return (self.features.is_empty() and self.cluster.is_empty() and self.topics.is_empty()
                and self.configs.is_empty() and self.producer_ids.is_empty())

    def write(self, writer: RecordListWriter, options: ImageWriterOptions) -> None:
        """Mirrors org.apache.kafka.image.MetadataImage#write: features first (metadata.version leads the records), then
        the cluster, topics, configurations and producer ids; the writer is closed.

        Kafka 3.8 also writes a ZkMigrationStateRecord from 3.4-IV0, controller registrations,
        client quotas, ACLs, SCRAM credentials and delegation tokens: none is modelled here.
        """
        self.features.write(writer, options)
        self.cluster.write(writer, options)
        self.topics.write(writer, options)
        self.configs.write(writer, options)
        self.producer_ids.write(writer, options)
        writer.close(True)


EMPTY_IMAGE = MetadataImage()
