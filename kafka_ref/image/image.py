"""The broker's (and controller's) immutable picture of the cluster at one metadata offset.

Mirrors org.apache.kafka.image.MetadataImage and its parts (Kafka 3.4): ClusterImage
(registered brokers), TopicsImage (topics by id and by name, each with its partitions),
ConfigurationsImage, FeaturesImage and ProducerIdsImage, stamped with the offset and epoch of
the last record they contain (MetadataProvenance). An image is never changed: a MetadataDelta
built on it produces the next one (seed 004 §2.1 step 6, ``_delta.apply()``). Unchanged
topics and brokers are shared between consecutive images, as in Kafka.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.records import ConfigResource
from kafka_ref.image.registrations import BrokerRegistration, PartitionRegistration


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


@dataclass(frozen=True, slots=True)
class TopicImage:
    """Mirrors org.apache.kafka.image.TopicImage: a topic's name, id and partitions."""

    name: str
    id: Uuid
    partitions: Mapping[int, PartitionRegistration] = field(default_factory=dict)

    def topic_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(self.name, p) for p in sorted(self.partitions)]


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


@dataclass(frozen=True, slots=True)
class ConfigurationsImage:
    """Mirrors org.apache.kafka.image.ConfigurationsImage: resource → its configuration keys."""

    data: Mapping[ConfigResource, Mapping[str, str]] = field(default_factory=dict)

    def config_properties(self, resource: ConfigResource) -> dict[str, str]:
        """Mirrors ConfigurationsImage#configProperties (empty when the resource has none)."""
        return dict(self.data.get(resource, {}))


@dataclass(frozen=True, slots=True)
class FeaturesImage:
    """Mirrors org.apache.kafka.image.FeaturesImage: finalized feature levels (metadata.version among them)."""

    finalized_versions: Mapping[str, int] = field(default_factory=dict)

    def metadata_version_level(self) -> int:
        return self.finalized_versions.get("metadata.version", 0)


@dataclass(frozen=True, slots=True)
class ProducerIdsImage:
    """Mirrors org.apache.kafka.image.ProducerIdsImage: the next producer id block starts here."""

    next_producer_id: int = -1


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
        return self.cluster.is_empty() and self.topics.is_empty() and not self.features.finalized_versions


EMPTY_IMAGE = MetadataImage()
