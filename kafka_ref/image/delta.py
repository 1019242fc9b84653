"""Changes on top of a MetadataImage, accumulated record by record.

Mirrors org.apache.kafka.image.MetadataDelta and its parts (Kafka 3.8): ``replay(record)``
dispatches on the record type (seed 004 §2.1 step 4), each part remembers only what changed
(a TopicRecord only stages a new TopicDelta, step 5–6), and ``apply()`` builds the next
immutable image. TopicDelta#localChanges / TopicsDelta#localChanges classify what a broker
must do with its own replicas (seed 004 §2.2 step 3): delete, lead, or follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.image import (
    ClusterImage,
    ConfigurationsImage,
    FeaturesImage,
    MetadataImage,
    MetadataProvenance,
    ProducerIdsImage,
    TopicImage,
    TopicsImage,
)
from kafka_ref.image.records import (
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    ConfigResource,
    ConfigResourceType,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecordType,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_ref.image.registrations import BrokerRegistration, PartitionRegistration
from kafka_ref.image.writer import METADATA_VERSION_FEATURE, MINIMUM_KRAFT_VERSION


class MetadataReplayException(RuntimeError):
    """A record that cannot apply to the current state (Kafka throws a RuntimeException here)."""


# ------------------------------------------------------------------------------ local changes


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """Mirrors org.apache.kafka.image.LocalReplicaChanges.PartitionInfo: the topic id and the new registration."""

    topic_id: Uuid
    partition: PartitionRegistration


@dataclass(slots=True)
class LocalReplicaChanges:
    """Mirrors org.apache.kafka.image.LocalReplicaChanges (Kafka 3.8).

    ``deletes``: partitions this broker no longer hosts; ``leaders``: partitions it leads
    whose partition epoch moved (a new leadership, or an ISR or replica change);
    ``elected_leaders``: the subset of ``leaders`` whose leader epoch moved too (KAFKA-15468,
    3.8: what the coordinators load on); ``followers``: partitions it follows whose partition
    epoch moved; ``topic_ids``: name → id of the topics in leaders and followers. The
    directory assignments of Kafka 3.7+ (JBOD) are not modelled.
    """

    deletes: set[TopicPartition] = field(default_factory=set)
    leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    followers: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    elected_leaders: dict[TopicPartition, PartitionInfo] = field(default_factory=dict)
    topic_ids: dict[str, Uuid] = field(default_factory=dict)


# ------------------------------------------------------------------------------ topics


class TopicDelta:
    """Mirrors org.apache.kafka.image.TopicDelta: changed partitions of one topic."""

    def __init__(self, image: TopicImage) -> None:
        self.image = image
        self.partition_changes: dict[int, PartitionRegistration] = {}

    @property
    def name(self) -> str:
        return self.image.name

    @property
    def id(self) -> Uuid:
        return self.image.id

    def new_partitions(self) -> dict[int, PartitionRegistration]:
        """Mirrors TopicDelta#newPartitions: changed partitions the image does not have yet."""
        return {p: r for p, r in self.partition_changes.items() if p not in self.image.partitions}

    def replay_partition(self, record: PartitionRecord) -> None:
        """Mirrors TopicDelta#replay(PartitionRecord): the record is the whole new state."""
        self.partition_changes[record.partition_id] = PartitionRegistration.from_record(record)

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        """Mirrors TopicDelta#replay(PartitionChangeRecord): merge into the latest known state."""
        # 1. The latest state: staged in this delta, else the image's.
        previous = self.partition_changes.get(record.partition_id) or self.image.partitions.get(record.partition_id)
        if previous is None:
            raise MetadataReplayException(f"Unable to find partition {record.topic_id}:{record.partition_id}")
        # 2. Merge (bumps the partition epoch, and the leader epoch if the leader is set).
        self.partition_changes[record.partition_id] = previous.merge(record)

    def apply(self) -> TopicImage:
        """Mirrors TopicDelta#apply: unchanged partitions are shared with the old image."""
        partitions = dict(self.image.partitions)
        partitions.update(self.partition_changes)
        return TopicImage(self.image.name, self.image.id, partitions)

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """Mirrors TopicDelta#localChanges (Kafka 3.8).

        For every changed partition: not a replica any more but was one → delete; the leader
        is this broker and the partition epoch moved → leader, and elected leader too when
        the leader epoch moved (or the partition is new here); a replica with another leader
        and a moved partition epoch → follower. A partition epoch bump without a leader epoch
        bump (an ISR change) still lands in leaders/followers; Partition#makeFollower then
        decides whether fetchers restart.
        """
        changes = LocalReplicaChanges()
        for partition_id, registration in self.partition_changes.items():
            tp = TopicPartition(self.name, partition_id)
            previous = self.image.partitions.get(partition_id)
            # 1. Removed from the replica set.
            if broker_id not in registration.replicas:
                if previous is not None and broker_id in previous.replicas:
                    changes.deletes.add(tp)
            # 2. Leader here, with a new partition epoch; elected if the leader epoch moved too.
            elif registration.leader == broker_id:
                if previous is None or previous.partition_epoch != registration.partition_epoch:
                    info = PartitionInfo(self.id, registration)
                    changes.leaders[tp] = info
                    if previous is None or previous.leader_epoch != registration.leader_epoch:
                        changes.elected_leaders[tp] = info
                    changes.topic_ids.setdefault(self.name, self.id)
            # 3. Follower here, with a new partition epoch.
            else:
                if previous is None or previous.partition_epoch != registration.partition_epoch:
                    changes.followers[tp] = PartitionInfo(self.id, registration)
                    changes.topic_ids.setdefault(self.name, self.id)
        return changes

    def __repr__(self) -> str:
        return f"TopicDelta({self.name}, partition_changes={self.partition_changes})"


class TopicsDelta:
    """Mirrors org.apache.kafka.image.TopicsDelta: created, changed and deleted topics."""

    def __init__(self, image: TopicsImage) -> None:
        self.image = image
        # Topics deleted here are not in changed_topics; a topic of the image that was deleted is
        # in deleted_topic_ids; one created and deleted within this delta leaves no trace there.
        self.changed_topics: dict[Uuid, TopicDelta] = {}
        self.deleted_topic_ids: set[Uuid] = set()
        self.created_topic_ids: set[Uuid] = set()

    def replay_topic(self, record: TopicRecord) -> None:
        """Mirrors TopicsDelta#replay(TopicRecord): stage an empty topic; its partitions come next."""
        self.changed_topics[record.topic_id] = TopicDelta(TopicImage(record.name, record.topic_id, {}))
        self.created_topic_ids.add(record.topic_id)

    def _get_or_create_topic_delta(self, topic_id: Uuid) -> TopicDelta:
        """Mirrors TopicsDelta#getOrCreateTopicDelta."""
        delta = self.changed_topics.get(topic_id)
        if delta is None:
            image = self.image.get_topic(topic_id)
            if image is None:
                raise MetadataReplayException(f"Unable to find topic {topic_id}")
            delta = TopicDelta(image)
            self.changed_topics[topic_id] = delta
        return delta

    def replay_partition(self, record: PartitionRecord) -> None:
        """Mirrors TopicsDelta#replay(PartitionRecord)."""
        self._get_or_create_topic_delta(record.topic_id).replay_partition(record)

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        """Mirrors TopicsDelta#replay(PartitionChangeRecord)."""
        self._get_or_create_topic_delta(record.topic_id).replay_partition_change(record)

    def replay_remove_topic(self, record: RemoveTopicRecord) -> str:
        """Mirrors TopicsDelta#replay(RemoveTopicRecord); returns the removed topic's name.

        A topic created and removed within this delta simply disappears from the changed topics
        (its id stays among the created ones, as in Kafka); one from the image is remembered as
        deleted (localChanges then deletes its local replicas).
        """
        # 1. Staged in this delta: drop the staged changes.
        delta = self.changed_topics.pop(record.topic_id, None)
        if delta is not None:
            name = delta.image.name
            if record.topic_id in self.image.topics_by_id:
                self.deleted_topic_ids.add(record.topic_id)
            return name
        # 2. Only in the image: remember the deletion.
        image = self.image.get_topic(record.topic_id)
        if image is None:
            raise MetadataReplayException(f"Unable to delete unknown topic ID {record.topic_id}")
        self.deleted_topic_ids.add(record.topic_id)
        return image.name

    def get_topic(self, topic_id: Uuid) -> TopicDelta | None:
        """Mirrors TopicsDelta#changedTopic: the staged delta of one topic, if any."""
        return self.changed_topics.get(topic_id)

    def topic_was_deleted(self, topic_name: str) -> bool:
        """Mirrors TopicsDelta#topicWasDeleted."""
        image = self.image.get_topic(topic_name)
        return image is not None and image.id in self.deleted_topic_ids

    def apply(self) -> TopicsImage:
        """Mirrors TopicsDelta#apply."""
        by_id = {tid: t for tid, t in self.image.topics_by_id.items() if tid not in self.deleted_topic_ids}
        for topic_id, delta in self.changed_topics.items():
            by_id[topic_id] = delta.apply()
        by_name = {t.name: t for t in by_id.values()}
        return TopicsImage(by_id, by_name)

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """Mirrors TopicsDelta#localChanges (seed 004 §2.2 step 3).

        The union of each changed topic's local changes (deletes, elected leaders, leaders,
        followers, topic ids), plus every replica of a deleted topic this broker held.
        """
        changes = LocalReplicaChanges()
        # 1. Changed topics.
        for delta in self.changed_topics.values():
            topic_changes = delta.local_changes(broker_id)
            changes.deletes |= topic_changes.deletes
            changes.elected_leaders.update(topic_changes.elected_leaders)
            changes.leaders.update(topic_changes.leaders)
            changes.followers.update(topic_changes.followers)
            changes.topic_ids.update(topic_changes.topic_ids)
        # 2. Deleted topics: every partition we were a replica of.
        for topic_id in self.deleted_topic_ids:
            image = self.image.get_topic(topic_id)
            for partition_id, previous in image.partitions.items():
                if broker_id in previous.replicas:
                    changes.deletes.add(TopicPartition(image.name, partition_id))
        return changes


# ------------------------------------------------------------------------------ cluster


class ClusterDelta:
    """Mirrors org.apache.kafka.image.ClusterDelta: changed broker registrations (None = unregistered)."""

    def __init__(self, image: ClusterImage) -> None:
        self.image = image
        self.changed_brokers: dict[int, BrokerRegistration | None] = {}

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        """Mirrors ClusterDelta#broker: the registration as of this delta."""
        if broker_id in self.changed_brokers:
            return self.changed_brokers[broker_id]
        return self.image.broker(broker_id)

    def _broker_or_throw(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        """Mirrors ClusterDelta#getBrokerOrThrow: the record must name the current epoch."""
        broker = self.broker(broker_id)
        if broker is None:
            raise MetadataReplayException(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
        if broker.epoch != epoch:
            raise MetadataReplayException(
                f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match the current "
                f"broker epoch, {broker.epoch}.")
        return broker

    def replay_register(self, record: RegisterBrokerRecord) -> None:
        """Mirrors ClusterDelta#replay(RegisterBrokerRecord)."""
        self.changed_brokers[record.broker_id] = BrokerRegistration.from_record(record)

    def replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        """Mirrors ClusterDelta#replay(UnregisterBrokerRecord): the broker goes, whatever its epoch
        (unlike fencing, Kafka checks neither that it is registered nor the epoch)."""
        self.changed_brokers[record.broker_id] = None

    def replay_fence(self, record: FenceBrokerRecord) -> None:
        """Mirrors ClusterDelta#replay(FenceBrokerRecord)."""
        broker = self._broker_or_throw(record.id, record.epoch, "fence")
        self.changed_brokers[record.id] = broker.clone_with(BrokerRegistrationFencingChange.FENCE,
                                                            BrokerRegistrationInControlledShutdownChange.NONE)

    def replay_unfence(self, record: UnfenceBrokerRecord) -> None:
        """Mirrors ClusterDelta#replay(UnfenceBrokerRecord)."""
        broker = self._broker_or_throw(record.id, record.epoch, "unfence")
        self.changed_brokers[record.id] = broker.clone_with(BrokerRegistrationFencingChange.UNFENCE,
                                                            BrokerRegistrationInControlledShutdownChange.NONE)

    def replay_registration_change(self, record: BrokerRegistrationChangeRecord) -> None:
        """Mirrors ClusterDelta#replay(BrokerRegistrationChangeRecord).

        1. The broker must be registered at the record's epoch; 2. both fields must hold a
        known change; 3. only a registration that really changes is staged.
        """
        # 1. Current registration.
        broker = self._broker_or_throw(record.broker_id, record.broker_epoch, "change")
        # 2. Known values only (BrokerRegistrationFencingChange#fromValue and its sibling).
        if record.fenced not in set(BrokerRegistrationFencingChange):
            raise MetadataReplayException(f"Unable to replay {record}: unknown value for fenced field: {record.fenced}")
        if record.in_controlled_shutdown not in set(BrokerRegistrationInControlledShutdownChange):
            raise MetadataReplayException(f"Unable to replay {record}: unknown value for inControlledShutdown field: "
                                          f"{record.in_controlled_shutdown}")
        # 3. Stage the new registration if it differs.
        changed = broker.clone_with(record.fenced, record.in_controlled_shutdown)
        if changed != broker:
            self.changed_brokers[record.broker_id] = changed

    def apply(self) -> ClusterImage:
        """Mirrors ClusterDelta#apply."""
        brokers = dict(self.image.brokers)
        for broker_id, registration in self.changed_brokers.items():
            if registration is None:
                brokers.pop(broker_id, None)
            else:
                brokers[broker_id] = registration
        return ClusterImage(brokers)


# ------------------------------------------------------------------------------ configs, features, producer ids


class ConfigurationsDelta:
    """Mirrors org.apache.kafka.image.ConfigurationsDelta: changed keys per resource (None = removed)."""

    def __init__(self, image: ConfigurationsImage) -> None:
        self.image = image
        self.changes: dict[ConfigResource, dict[str, str | None]] = {}

    def replay_config(self, record: ConfigRecord) -> None:
        """Mirrors ConfigurationsDelta#replay(ConfigRecord)."""
        resource = ConfigResource(ConfigResourceType(record.resource_type), record.resource_name)
        self.changes.setdefault(resource, {})[record.name] = record.value

    def delete_topic_configs(self, topic_name: str) -> None:
        """Mirrors ConfigurationsDelta#replay(RemoveTopicRecord, topicName): drop every key of the topic."""
        resource = ConfigResource(ConfigResourceType.TOPIC, topic_name)
        keys = set(self.image.data.get(resource, {})) | set(self.changes.get(resource, {}))
        self.changes[resource] = {k: None for k in keys}

    def apply(self) -> ConfigurationsImage:
        """Mirrors ConfigurationsDelta#apply: resources left with no keys disappear."""
        data = {r: dict(v) for r, v in self.image.data.items()}
        for resource, keys in self.changes.items():
            merged = data.setdefault(resource, {})
            for k, v in keys.items():
                if v is None:
                    merged.pop(k, None)
                else:
                    merged[k] = v
            if not merged:
                del data[resource]
        return ConfigurationsImage(data)


class FeaturesDelta:
    """Mirrors org.apache.kafka.image.FeaturesDelta: feature level changes (level 0 removes a
    feature) and, apart, a metadata.version change."""

    def __init__(self, image: FeaturesImage) -> None:
        self.image = image
        self.changes: dict[str, int | None] = {}
        self.metadata_version_change: int | None = None

    def replay_feature_level(self, record: FeatureLevelRecord) -> None:
        """Mirrors org.apache.kafka.image.FeaturesDelta#replay(FeatureLevelRecord).

        metadata.version is kept apart (MetadataVersion#fromFeatureLevel refuses a level that
        names no version, 0 included); any other feature at level 0 is removed.
        """
        if record.name == METADATA_VERSION_FEATURE:
            if record.feature_level < MINIMUM_KRAFT_VERSION:
                raise MetadataReplayException(f"No MetadataVersion with feature level {record.feature_level}")
            self.metadata_version_change = record.feature_level
        elif record.feature_level == 0:
            self.changes[record.name] = None
        else:
            self.changes[record.name] = record.feature_level

    def apply(self) -> FeaturesImage:
        """Mirrors FeaturesDelta#apply."""
        versions = dict(self.image.finalized_versions)
        for name, level in self.changes.items():
            if level is None:
                versions.pop(name, None)
            else:
                versions[name] = level
        metadata_version = self.image.metadata_version if self.metadata_version_change is None \
            else self.metadata_version_change
        return FeaturesImage(versions, metadata_version)


class ProducerIdsDelta:
    """Mirrors org.apache.kafka.image.ProducerIdsDelta."""

    def __init__(self, image: ProducerIdsImage) -> None:
        self.next_producer_id = image.next_producer_id

    def replay_producer_ids(self, record: ProducerIdsRecord) -> None:
        """Mirrors ProducerIdsDelta#replay(ProducerIdsRecord)."""
        self.next_producer_id = record.next_producer_id

    def apply(self) -> ProducerIdsImage:
        """Mirrors ProducerIdsDelta#apply."""
        return ProducerIdsImage(self.next_producer_id)


# ------------------------------------------------------------------------------ the whole delta


class MetadataDelta:
    """Mirrors org.apache.kafka.image.MetadataDelta: every part's delta, created on first use."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.features_delta: FeaturesDelta | None = None
        self.cluster_delta: ClusterDelta | None = None
        self.topics_delta: TopicsDelta | None = None
        self.configs_delta: ConfigurationsDelta | None = None
        self.producer_ids_delta: ProducerIdsDelta | None = None
        self.records_replayed = 0

    def get_or_create_cluster_delta(self) -> ClusterDelta:
        """Mirrors MetadataDelta#getOrCreateClusterDelta."""
        if self.cluster_delta is None:
            self.cluster_delta = ClusterDelta(self.image.cluster)
        return self.cluster_delta

    def get_or_create_topics_delta(self) -> TopicsDelta:
        """Mirrors MetadataDelta#getOrCreateTopicsDelta."""
        if self.topics_delta is None:
            self.topics_delta = TopicsDelta(self.image.topics)
        return self.topics_delta

    def get_or_create_configs_delta(self) -> ConfigurationsDelta:
        """Mirrors MetadataDelta#getOrCreateConfigsDelta."""
        if self.configs_delta is None:
            self.configs_delta = ConfigurationsDelta(self.image.configs)
        return self.configs_delta

    def get_or_create_features_delta(self) -> FeaturesDelta:
        """Mirrors MetadataDelta#getOrCreateFeaturesDelta."""
        if self.features_delta is None:
            self.features_delta = FeaturesDelta(self.image.features)
        return self.features_delta

    def get_or_create_producer_ids_delta(self) -> ProducerIdsDelta:
        """Mirrors MetadataDelta#getOrCreateProducerIdsDelta."""
        if self.producer_ids_delta is None:
            self.producer_ids_delta = ProducerIdsDelta(self.image.producer_ids)
        return self.producer_ids_delta

    def metadata_version_changed(self) -> int | None:
        """Mirrors org.apache.kafka.image.MetadataDelta#metadataVersionChanged: the new
        metadata.version level, if this delta sets one."""
        return None if self.features_delta is None else self.features_delta.metadata_version_change

    def replay(self, record: object) -> None:
        """Mirrors MetadataDelta#replay(ApiMessage): dispatch on the record type (seed 004 §2.1 step 4)."""
        record_type = getattr(record, "API_KEY", None)
        self.records_replayed += 1
        match record_type:
            case MetadataRecordType.REGISTER_BROKER_RECORD:
                self.get_or_create_cluster_delta().replay_register(record)
            case MetadataRecordType.UNREGISTER_BROKER_RECORD:
                self.get_or_create_cluster_delta().replay_unregister(record)
            case MetadataRecordType.TOPIC_RECORD:
                self.get_or_create_topics_delta().replay_topic(record)
            case MetadataRecordType.PARTITION_RECORD:
                self.get_or_create_topics_delta().replay_partition(record)
            case MetadataRecordType.CONFIG_RECORD:
                self.get_or_create_configs_delta().replay_config(record)
            case MetadataRecordType.PARTITION_CHANGE_RECORD:
                self.get_or_create_topics_delta().replay_partition_change(record)
            case MetadataRecordType.FENCE_BROKER_RECORD:
                self.get_or_create_cluster_delta().replay_fence(record)
            case MetadataRecordType.UNFENCE_BROKER_RECORD:
                self.get_or_create_cluster_delta().replay_unfence(record)
            case MetadataRecordType.REMOVE_TOPIC_RECORD:
                # The topic's configuration goes with it.
                name = self.get_or_create_topics_delta().replay_remove_topic(record)
                self.get_or_create_configs_delta().delete_topic_configs(name)
            case MetadataRecordType.FEATURE_LEVEL_RECORD:
                self.replay_feature_level(record)
            case MetadataRecordType.PRODUCER_IDS_RECORD:
                self.get_or_create_producer_ids_delta().replay_producer_ids(record)
            case MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD:
                self.get_or_create_cluster_delta().replay_registration_change(record)
            case _:
                raise MetadataReplayException(f"Unknown metadata record type {type(record).__name__}")

    def replay_feature_level(self, record: FeatureLevelRecord) -> None:
        """Mirrors org.apache.kafka.image.MetadataDelta#replay(FeatureLevelRecord) (Kafka 3.3+, KAFKA-13830).

        1. The features delta takes the record; 2. a metadata.version change reaches every
        part (each part's handleMetadataVersionChange, a no-op in Kafka 3.8 for the parts
        modelled here), which creates every part's delta: the publisher then sees a topics
        delta, empty as it may be, and hands it to ReplicaManager#applyDelta.
        """
        # 1. The feature level.
        self.get_or_create_features_delta().replay_feature_level(record)
        # 2. Every part learns of the new metadata.version.
        if self.features_delta.metadata_version_change is not None:
            self.get_or_create_cluster_delta()
            self.get_or_create_configs_delta()
            self.get_or_create_topics_delta()
            self.get_or_create_producer_ids_delta()

    def apply(self, provenance: MetadataProvenance | None = None) -> MetadataImage:
        """Mirrors MetadataDelta#apply: the next image (parts without a delta are shared)."""
        return MetadataImage(
            provenance=provenance if provenance is not None else self.image.provenance,
            features=self.features_delta.apply() if self.features_delta else self.image.features,
            cluster=self.cluster_delta.apply() if self.cluster_delta else self.image.cluster,
            topics=self.topics_delta.apply() if self.topics_delta else self.image.topics,
            configs=self.configs_delta.apply() if self.configs_delta else self.image.configs,
            producer_ids=self.producer_ids_delta.apply() if self.producer_ids_delta else self.image.producer_ids,
        )
