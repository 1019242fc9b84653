"""org.apache.kafka.image image tests (Kafka 3.8): TopicsImageTest, ClusterImageTest, FeaturesImageTest,
ConfigurationsImageTest, ProducerIdsImageTest, MetadataImageTest and ImageDowngradeTest, against
kafka_ref/image/{image,delta,registrations,writer}.py.

Each Kafka image test builds IMAGE1, replays DELTA1_RECORDS into a delta on it and expects IMAGE2;
then it checks the records round trip: an image written out as records (MetadataImage#write with
ImageWriterOptions, into a RecordListWriter) and replayed from the empty image, stopping at every
intermediate image on the way (RecordTestUtils.TestThroughAllIntermediateImagesLeadingToFinalImageHelper,
``assert_through_all_intermediate_images`` here), gives the image back. Kafka's part deltas have an
overloaded ``replay``; kafka_ref names one method per record type, so ``replay_all`` dispatches.
The images' values are this file's own; the shapes (which broker is fenced, which topic is recreated,
which partition moves) are Kafka's.

tests/test_metadata_delta.py already mirrors the Kafka 3.3–3.6 forms of TopicsImageTest#testApplyDelta1,
#testBasicLocalChanges, #testDeleteAfterChanges and #testLocalReassignmentChanges (deletes, leaders and
followers); the tests here with those names check what Kafka 3.8 added to them: the recreated and the
created-then-removed topics of DELTA1, LocalReplicaChanges#electedLeaders and the record round trips.

Not ported:
- ClusterImageTest#testHandleLossOfControllerRegistrations and the RegisterControllerRecord of
  ClusterImageTest's DELTA1: controller registrations (KIP-919) are not modelled; the cluster image
  holds brokers only.
- ImageDowngradeTest#testDirectoryAssignmentState: replica directories (JBOD) and the
  ZkMigrationStateRecord are not modelled.
- FeaturesImageTest#testEmpty's ZK migration state case: the ZK migration state is not modelled.
- MetadataVersionChangeTest: kafka_ref has no MetadataVersionChange / MetadataVersionChangeException
  (the metadata loader that raises it is not modelled; metadata.version is a feature level here).
- AclsImageTest, AclsDeltaTest, ClientQuotasImageTest, ScramImageTest, DelegationTokenImageTest: ACLs,
  client quotas, SCRAM credentials and delegation tokens are not part of kafka_ref's metadata image.
- image/loader (MetadataLoaderTest, MetadataBatchLoaderTest), image/publisher (SnapshotGenerator,
  SnapshotEmitter, BrokerRegistrationTracker, ControllerRegistrationsPublisher), image/node and
  image/writer (ImageReWriterTest, RaftSnapshotWriterTest, ImageWriterOptionsTest): the broker reads the
  log through the Kafka 3.3 BrokerMetadataListener; snapshots, the loader and the image node tree are
  not modelled.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable

import pytest

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.delta import (
    ClusterDelta,
    ConfigurationsDelta,
    FeaturesDelta,
    LocalReplicaChanges,
    MetadataDelta,
    MetadataReplayException,
    ProducerIdsDelta,
    TopicsDelta,
)
from kafka_ref.image.image import (
    EMPTY_IMAGE,
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
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    ConfigResource,
    ConfigResourceType,
    FeatureLevelRecord,
    FenceBrokerRecord,
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
from kafka_ref.image.writer import (
    IBP_3_2_IV0,
    IBP_3_3_IV0,
    IBP_3_3_IV2,
    IBP_3_3_IV3,
    IBP_3_4_IV0,
    IBP_3_6_IV0,
    IBP_3_8_IV0,
    ImageWriterOptions,
    RecordListWriter,
    UnwritableMetadataException,
)

LOCAL = 3
BROKER = ConfigResourceType.BROKER

# ------------------------------------------------------------------------------ helpers (RecordTestUtils)

_REPLAY_METHODS: dict[type, dict[type, str]] = {
    TopicsDelta: {TopicRecord: "replay_topic", PartitionRecord: "replay_partition",
                  PartitionChangeRecord: "replay_partition_change", RemoveTopicRecord: "replay_remove_topic"},
    ClusterDelta: {RegisterBrokerRecord: "replay_register", UnregisterBrokerRecord: "replay_unregister",
                   FenceBrokerRecord: "replay_fence", UnfenceBrokerRecord: "replay_unfence",
                   BrokerRegistrationChangeRecord: "replay_registration_change"},
    ConfigurationsDelta: {ConfigRecord: "replay_config"},
    FeaturesDelta: {FeatureLevelRecord: "replay_feature_level"},
    ProducerIdsDelta: {ProducerIdsRecord: "replay_producer_ids"},
}


def replay_all(delta: Any, records: list) -> Any:
    """RecordTestUtils#replayAll: every record into ``delta`` (a MetadataDelta or one part's delta)."""
    for record in records:
        if isinstance(delta, MetadataDelta):
            delta.replay(record)
        else:
            getattr(delta, _REPLAY_METHODS[type(delta)][type(record)])(record)
    return delta


def image_records(image: Any, options: ImageWriterOptions | None = None) -> list:
    """The image written out with ``options`` (the Builder's defaults when None)."""
    writer = RecordListWriter()
    image.write(writer, options if options is not None else ImageWriterOptions())
    return writer.records()


def assert_through_all_intermediate_images(final: Any, records: list, empty: Any,
                                           new_delta: Callable[[Any], Any],
                                           apply: Callable[[Any], Any] = lambda d: d.apply()) -> None:
    """RecordTestUtils.TestThroughAllIntermediateImagesLeadingToFinalImageHelper#test: replay the first n
    records onto the empty image, then the rest in batches of every size, one delta per batch, and
    land on ``final`` each time; all records in one delta land there too."""
    for first in range(1, len(records) + 1):
        first_image = apply(replay_all(new_delta(empty), records[:first]))
        for batch in range(1, len(records) - first + 1):
            image = first_image
            for start in range(first, len(records), batch):
                image = apply(replay_all(new_delta(image), records[start:start + batch]))
            assert image == final
    assert apply(replay_all(new_delta(empty), records)) == final


def topic(name: str, topic_id: Uuid, *partitions: PartitionRegistration) -> TopicImage:
    return TopicImage(name, topic_id, dict(enumerate(partitions)))


def topics_image(*topics: TopicImage) -> TopicsImage:
    return TopicsImage({t.id: t for t in topics}, {t.name: t for t in topics})


def in_sync(replicas: tuple[int, ...]) -> PartitionRegistration:
    """TopicsImageTest#newPartition: all replicas in sync, the first leads, both epochs 1."""
    return PartitionRegistration(replicas, replicas, leader=replicas[0], leader_epoch=1, partition_epoch=1)


def in_sync_record(topic_id: Uuid, partition_id: int, replicas: tuple[int, ...]) -> PartitionRecord:
    """TopicsImageTest#newPartitionRecord."""
    return PartitionRecord(partition_id=partition_id, topic_id=topic_id, replicas=replicas, isr=replicas,
                           leader=replicas[0], leader_epoch=1, partition_epoch=1)


def names(partitions) -> set[str]:
    return {str(tp) for tp in partitions}


# ------------------------------------------------------------------------------ TopicsImageTest

FOO = Uuid(0x11, 1)
FOO2 = Uuid(0x11, 2)
BAR = Uuid(0x22, 1)
BAZ = Uuid(0x33, 1)
BAM = Uuid(0x44, 1)
BAM2 = Uuid(0x44, 2)
ZOO = Uuid(0x55, 1)

TOPICS_IMAGE1 = topics_image(
    topic("foo", FOO,
          PartitionRegistration((2, 3, 4), (2, 3), leader=2, leader_epoch=1, partition_epoch=345),
          PartitionRegistration((3, 4, 5), (3, 4, 5), leader=3, leader_epoch=4, partition_epoch=684),
          PartitionRegistration((2, 4, 5), (2, 4, 5), leader=2, leader_epoch=10, partition_epoch=84)),
    topic("bar", BAR,
          PartitionRegistration((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), leader=0, leader_epoch=1,
                                partition_epoch=345)),
)
TOPICS_DELTA1_RECORDS = [
    RemoveTopicRecord(topic_id=FOO),
    PartitionChangeRecord(topic_id=BAR, partition_id=0, leader=1),
    TopicRecord(name="baz", topic_id=BAZ),
    PartitionRecord(partition_id=0, topic_id=BAZ, replicas=(1, 2, 3, 4), isr=(3, 4), removing_replicas=(2,),
                    adding_replicas=(1,), leader=3, leader_epoch=2, partition_epoch=1),
    # foo comes back under a new id, with no partitions yet.
    TopicRecord(name="foo", topic_id=FOO2),
    # bam is created and removed within the delta.
    TopicRecord(name="bam", topic_id=BAM),
    RemoveTopicRecord(topic_id=BAM),
]
TOPICS_IMAGE2 = topics_image(
    topic("foo", FOO2),
    topic("bar", BAR,
          PartitionRegistration((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), leader=1, leader_epoch=2,
                                partition_epoch=346)),
    topic("baz", BAZ,
          PartitionRegistration((1, 2, 3, 4), (3, 4), (2,), (1,), leader=3, leader_epoch=2, partition_epoch=1)),
)


def assert_topics_round_trip(final: TopicsImage, records: list | None = None) -> None:
    """TopicsImageTest#testToImage."""
    records = image_records(final) if records is None else records
    assert_through_all_intermediate_images(final, records, TopicsImage(), TopicsDelta)


def test_topics_empty_image_round_trip():
    """Mirrors TopicsImageTest#testEmptyImageRoundTrip."""
    assert image_records(TopicsImage()) == []
    assert_topics_round_trip(TopicsImage())


def test_topics_image1_round_trip():
    """Mirrors TopicsImageTest#testImage1RoundTrip: a TopicRecord per topic, then its PartitionRecords."""
    records = image_records(TOPICS_IMAGE1)
    assert [type(r).__name__ for r in records] == ["TopicRecord", "PartitionRecord", "TopicRecord",
                                                   "PartitionRecord", "PartitionRecord", "PartitionRecord"]
    assert records[1] == PartitionRecord(partition_id=0, topic_id=BAR, replicas=(0, 1, 2, 3, 4), isr=(0, 1, 2, 3),
                                         removing_replicas=(1,), adding_replicas=(3, 4), leader=0, leader_epoch=1,
                                         partition_epoch=345)
    assert_topics_round_trip(TOPICS_IMAGE1)


def test_topics_apply_delta1():
    """Mirrors TopicsImageTest#testApplyDelta1 (Kafka 3.8 records): foo removed and recreated under a new id
    without partitions, bar-0's new leader bumps both epochs, baz created, bam created then removed."""
    delta = replay_all(TopicsDelta(TOPICS_IMAGE1), TOPICS_DELTA1_RECORDS)
    assert delta.apply() == TOPICS_IMAGE2
    # Only foo's old id counts as deleted; bam never reached an image. Both new ids were created.
    assert delta.deleted_topic_ids == {FOO}
    assert delta.created_topic_ids == {BAZ, FOO2, BAM}
    assert delta.topic_was_deleted("foo") and not delta.topic_was_deleted("bam")
    assert_topics_round_trip(TOPICS_IMAGE2, image_records(TOPICS_IMAGE1) + TOPICS_DELTA1_RECORDS)


def test_topics_image2_round_trip():
    """Mirrors TopicsImageTest#testImage2RoundTrip (a topic with no partitions included)."""
    assert_topics_round_trip(TOPICS_IMAGE2)


def test_basic_local_changes_elected_leaders():
    """Mirrors TopicsImageTest#testBasicLocalChanges (Kafka 3.8): over DELTA1, bam is recreated under a
    second id with bam-1 on this broker, and baz gains a partition followed here. baz-0 is a new
    leadership (elected and leader); baz-1, bar-0 (partition epoch moved) and bam-1 are followed."""
    records = TOPICS_DELTA1_RECORDS + [
        TopicRecord(name="bam", topic_id=BAM2),
        in_sync_record(BAM2, 0, (0, 1, 2)),
        in_sync_record(BAM2, 1, (0, 1, LOCAL)),
        PartitionRecord(partition_id=1, topic_id=BAZ, replicas=(4, 2, LOCAL), isr=(4, 2, LOCAL), leader=4,
                        leader_epoch=2, partition_epoch=1),
    ]
    delta = replay_all(TopicsDelta(TOPICS_IMAGE1), records)
    changes = delta.local_changes(LOCAL)
    assert names(changes.elected_leaders) == {"baz-0"}
    assert names(changes.leaders) == {"baz-0"}
    assert names(changes.followers) == {"baz-1", "bar-0", "bam-1"}
    # foo-0 and foo-1 held a replica here; the foo of FOO2 has no partitions yet.
    assert names(changes.deletes) == {"foo-0", "foo-1"}
    assert changes.topic_ids == {"baz": BAZ, "bar": BAR, "bam": BAM2}
    assert changes.followers[TopicPartition("bam", 1)].topic_id == BAM2
    assert_topics_round_trip(delta.apply(), image_records(TOPICS_IMAGE1) + records)


def test_delete_after_changes_elected_leaders():
    """Mirrors TopicsImageTest#testDeleteAfterChanges (Kafka 3.8): leader moved away, then the topic
    removed: only a delete, no leader (elected or not), no follower; the image round trips."""
    image = topics_image(topic("zoo", ZOO, in_sync((LOCAL, 1, 2))))
    records = [PartitionChangeRecord(topic_id=ZOO, partition_id=0, leader=1), RemoveTopicRecord(topic_id=ZOO)]
    delta = replay_all(TopicsDelta(image), records)
    changes = delta.local_changes(LOCAL)
    assert changes.deletes == {TopicPartition("zoo", 0)}
    assert (changes.elected_leaders, changes.leaders, changes.followers) == ({}, {}, {})
    assert delta.apply() == TopicsImage()
    assert_topics_round_trip(delta.apply(), image_records(image) + records)


def test_updated_leaders():
    """Mirrors TopicsImageTest#testUpdatedLeaders: an ISR shrink on a partition led here moves the partition
    epoch, not the leader epoch: a leader change to apply, but no election."""
    image = topics_image(topic("zoo", ZOO, in_sync((LOCAL, 1, 2))))
    delta = replay_all(TopicsDelta(image), [PartitionChangeRecord(topic_id=ZOO, partition_id=0, isr=(LOCAL, 1))])
    changes = delta.local_changes(LOCAL)
    assert changes.deletes == set()
    assert changes.elected_leaders == {}
    assert names(changes.leaders) == {"zoo-0"}
    assert changes.followers == {}
    updated = changes.leaders[TopicPartition("zoo", 0)].partition
    assert (updated.isr, updated.leader_epoch, updated.partition_epoch) == ((LOCAL, 1), 1, 2)


def test_local_reassignment_changes_elected_leaders():
    """Mirrors TopicsImageTest#testLocalReassignmentChanges (Kafka 3.8): follower→leader and
    not-a-replica→leader are both elections; leader→follower and not-a-replica→follower follow;
    follower→removed and leader→removed are deletes; the final image round trips."""
    image = topics_image(topic(
        "zoo", ZOO,
        in_sync((0, 1, LOCAL)), in_sync((LOCAL, 1, 2)), in_sync((0, 1, LOCAL)),
        in_sync((LOCAL, 1, 2)), in_sync((0, 1, 2)), in_sync((0, 1, 2)),
    ))
    records = [
        PartitionChangeRecord(topic_id=ZOO, partition_id=0, leader=LOCAL),
        PartitionChangeRecord(topic_id=ZOO, partition_id=1, leader=1),
        PartitionChangeRecord(topic_id=ZOO, partition_id=2, isr=(0, 1, 2), replicas=(0, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=3, leader=0, isr=(0, 1, 2), replicas=(0, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=4, leader=LOCAL, isr=(LOCAL, 1, 2), replicas=(LOCAL, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=5, isr=(0, 1, LOCAL), replicas=(0, 1, LOCAL)),
    ]
    delta = replay_all(TopicsDelta(image), records)
    changes = delta.local_changes(LOCAL)
    assert names(changes.deletes) == {"zoo-2", "zoo-3"}
    assert names(changes.elected_leaders) == {"zoo-0", "zoo-4"}
    assert names(changes.leaders) == {"zoo-0", "zoo-4"}
    assert names(changes.followers) == {"zoo-1", "zoo-5"}
    assert changes.elected_leaders[TopicPartition("zoo", 4)].partition.leader_epoch == 2
    assert_topics_round_trip(delta.apply(), image_records(image) + records)


def test_topic_name_to_id_view():
    """Mirrors TopicsImageTest#testTopicNameToIdView: a read-only view of the image's names."""
    view = TOPICS_IMAGE1.topic_name_to_id_view()
    assert dict(view) == {"foo": FOO, "bar": BAR}
    assert "baz" not in view and view.get("baz") is None
    assert set(view.values()) == {FOO, BAR}
    with pytest.raises(TypeError):
        view["bar"] = FOO  # type: ignore[index]
    with pytest.raises(TypeError):
        del view["foo"]  # type: ignore[attr-defined]


def test_topic_id_to_name_view():
    """Mirrors TopicsImageTest#testTopicIdToNameView."""
    view = TOPICS_IMAGE1.topic_id_to_name_view()
    assert dict(view) == {FOO: "foo", BAR: "bar"}
    assert BAZ not in view and view.get(BAZ) is None
    assert set(view.values()) == {"foo", "bar"}
    assert isinstance(view, MappingProxyType)
    with pytest.raises(TypeError):
        view[FOO] = "bar"  # type: ignore[index]


# ------------------------------------------------------------------------------ ClusterImageTest

INC0, INC1, INC2, INC2_NEW = Uuid(0x70, 0), Uuid(0x70, 1), Uuid(0x70, 2), Uuid(0x70, 3)
FOO_FEATURE = (BrokerFeature(name="foo", min_supported_version=1, max_supported_version=3),)


def endpoint(port: int) -> tuple[BrokerEndpoint, ...]:
    return (BrokerEndpoint(name="PLAINTEXT", host="localhost", port=port, security_protocol=0),)


CLUSTER_IMAGE1 = ClusterImage({
    0: BrokerRegistration(0, 1000, INC0, endpoint(9092), None, fenced=True, supported_features=FOO_FEATURE),
    1: BrokerRegistration(1, 1001, INC1, endpoint(9093), None, fenced=False, supported_features=FOO_FEATURE),
    2: BrokerRegistration(2, 123, INC2, endpoint(9094), "arack", fenced=False),
})
CLUSTER_DELTA1_RECORDS = [
    UnfenceBrokerRecord(id=0, epoch=1000),
    FenceBrokerRecord(id=1, epoch=1001),
    BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=1000,
                                   in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN),
    UnregisterBrokerRecord(broker_id=2, broker_epoch=123),
]
CLUSTER_IMAGE2 = ClusterImage({
    0: BrokerRegistration(0, 1000, INC0, endpoint(9092), None, fenced=False, in_controlled_shutdown=True,
                          supported_features=FOO_FEATURE),
    1: BrokerRegistration(1, 1001, INC1, endpoint(9093), None, fenced=True, supported_features=FOO_FEATURE),
})
MV_RANGE = (BrokerFeature(name="metadata.version", min_supported_version=IBP_3_3_IV3, max_supported_version=IBP_3_6_IV0),)
CLUSTER_DELTA2_RECORDS = CLUSTER_DELTA1_RECORDS + [
    FenceBrokerRecord(id=0, epoch=1000),
    UnfenceBrokerRecord(id=1, epoch=1001),
    # NONE leaves the controlled-shutdown state as it is: only a new registration clears it.
    BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=1000,
                                   in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.NONE),
    RegisterBrokerRecord(broker_id=2, is_migrating_zk_broker=True, incarnation_id=INC2_NEW, broker_epoch=1002,
                         end_points=endpoint(9094), features=MV_RANGE, rack="rack3"),
]
CLUSTER_IMAGE3 = ClusterImage({
    0: BrokerRegistration(0, 1000, INC0, endpoint(9092), None, fenced=True, in_controlled_shutdown=True,
                          supported_features=FOO_FEATURE),
    1: BrokerRegistration(1, 1001, INC1, endpoint(9093), None, fenced=False, supported_features=FOO_FEATURE),
    2: BrokerRegistration(2, 1002, INC2_NEW, endpoint(9094), "rack3", fenced=True, supported_features=MV_RANGE,
                          is_migrating_zk_broker=True),
})


def assert_cluster_round_trip(final: ClusterImage, records: list | None = None) -> None:
    """ClusterImageTest#testToImage."""
    records = image_records(final) if records is None else records
    assert_through_all_intermediate_images(final, records, ClusterImage(), ClusterDelta)


def test_cluster_empty_image_round_trip():
    """Mirrors ClusterImageTest#testEmptyImageRoundTrip."""
    assert_cluster_round_trip(ClusterImage())


def test_cluster_image1_round_trip():
    """Mirrors ClusterImageTest#testImage1RoundTrip: one RegisterBrokerRecord per broker."""
    records = image_records(CLUSTER_IMAGE1)
    assert records[2] == RegisterBrokerRecord(broker_id=2, incarnation_id=INC2, broker_epoch=123,
                                              end_points=endpoint(9094), rack="arack", fenced=False)
    assert_cluster_round_trip(CLUSTER_IMAGE1)


def test_cluster_apply_delta1():
    """Mirrors ClusterImageTest#testApplyDelta1: unfence b0, fence b1, b0 into controlled shutdown, b2
    unregistered."""
    delta = replay_all(ClusterDelta(CLUSTER_IMAGE1), CLUSTER_DELTA1_RECORDS)
    assert delta.apply() == CLUSTER_IMAGE2
    assert delta.broker(2) is None and delta.broker(0).in_controlled_shutdown
    assert_cluster_round_trip(CLUSTER_IMAGE2, image_records(CLUSTER_IMAGE1) + CLUSTER_DELTA1_RECORDS)


def test_cluster_image2_round_trip():
    """Mirrors ClusterImageTest#testImage2RoundTrip."""
    assert_cluster_round_trip(CLUSTER_IMAGE2)


def test_cluster_apply_delta2():
    """Mirrors ClusterImageTest#testApplyDelta2: DELTA1's records again over IMAGE2 (unregistering b2, no
    longer registered, is no error: Kafka checks no epoch there), then fence b0, unfence b1, a NONE
    controlled-shutdown change (b0 stays in controlled shutdown), and b2 registered anew as a migrating
    ZK broker at a new epoch."""
    delta = replay_all(ClusterDelta(CLUSTER_IMAGE2), CLUSTER_DELTA2_RECORDS)
    assert delta.apply() == CLUSTER_IMAGE3
    assert_cluster_round_trip(CLUSTER_IMAGE3, image_records(CLUSTER_IMAGE2) + CLUSTER_DELTA2_RECORDS)


def test_cluster_image3_round_trip():
    """Mirrors ClusterImageTest#testImage3RoundTrip (the migrating flag survives at the default version)."""
    assert image_records(CLUSTER_IMAGE3)[2].is_migrating_zk_broker is True
    assert_cluster_round_trip(CLUSTER_IMAGE3)


def test_registration_change_that_changes_nothing_is_not_staged():
    """Mirrors ClusterDelta#replay(BrokerRegistrationChangeRecord): a change leaving the registration as it
    was stages nothing; a value outside BrokerRegistrationFencingChange or
    BrokerRegistrationInControlledShutdownChange cannot be replayed."""
    delta = ClusterDelta(CLUSTER_IMAGE2)
    delta.replay_registration_change(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=1001, fenced=1))
    delta.replay_registration_change(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=1000, in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.NONE))
    assert delta.changed_brokers == {}
    assert delta.apply() == CLUSTER_IMAGE2
    with pytest.raises(MetadataReplayException, match="unknown value for fenced field: 2"):
        delta.replay_registration_change(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=1001, fenced=2))
    with pytest.raises(MetadataReplayException, match="unknown value for inControlledShutdown field: 5"):
        delta.replay_registration_change(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=1001,
                                                                        in_controlled_shutdown=5))
    # Fencing still needs the broker registered at the record's epoch.
    with pytest.raises(MetadataReplayException, match="did not match the current broker epoch, 1001"):
        delta.replay_fence(FenceBrokerRecord(id=1, epoch=1000))


# ------------------------------------------------------------------------------ FeaturesImageTest

FEATURES_MV = IBP_3_8_IV0
FEATURES_IMAGE1 = FeaturesImage({"foo": 2, "bar": 1}, FEATURES_MV)
FEATURES_DELTA1_RECORDS = [
    FeatureLevelRecord(name="foo", feature_level=3),
    FeatureLevelRecord(name="bar", feature_level=0),
    FeatureLevelRecord(name="baz", feature_level=8),
]
FEATURES_IMAGE2 = FeaturesImage({"foo": 3, "baz": 8}, FEATURES_MV)
FEATURES_DELTA2_RECORDS = [
    FeatureLevelRecord(name="foo", feature_level=0),
    FeatureLevelRecord(name="baz", feature_level=0),
    FeatureLevelRecord(name="bar", feature_level=1),
]
FEATURES_IMAGE3 = FeaturesImage({"bar": 1}, FEATURES_MV)


def assert_features_round_trip(final: FeaturesImage, records: list | None = None) -> None:
    """FeaturesImageTest#testToImage (written at the image's own metadata.version)."""
    records = image_records(final, ImageWriterOptions(final.metadata_version)) if records is None else records
    assert_through_all_intermediate_images(final, records, FeaturesImage(), FeaturesDelta)


def test_features_empty_image_round_trip():
    """Mirrors FeaturesImageTest#testEmptyImageRoundTrip: the minimum KRaft metadata.version predates
    FeatureLevelRecord, so nothing is written."""
    assert image_records(FeaturesImage(), ImageWriterOptions(FeaturesImage().metadata_version)) == []
    assert_features_round_trip(FeaturesImage())


def test_features_image1_round_trip():
    """Mirrors FeaturesImageTest#testImage1RoundTrip: metadata.version first, then each feature."""
    assert image_records(FEATURES_IMAGE1, ImageWriterOptions(FEATURES_MV)) == [
        FeatureLevelRecord(name="metadata.version", feature_level=FEATURES_MV),
        FeatureLevelRecord(name="bar", feature_level=1),
        FeatureLevelRecord(name="foo", feature_level=2),
    ]
    assert_features_round_trip(FEATURES_IMAGE1)


def test_features_apply_delta1():
    """Mirrors FeaturesImageTest#testApplyDelta1: a level changed, one removed (level 0), one added."""
    delta = replay_all(FeaturesDelta(FEATURES_IMAGE1), FEATURES_DELTA1_RECORDS)
    assert delta.apply() == FEATURES_IMAGE2
    assert delta.metadata_version_change is None
    assert_features_round_trip(FEATURES_IMAGE2, image_records(FEATURES_IMAGE1, ImageWriterOptions(FEATURES_MV))
                               + FEATURES_DELTA1_RECORDS)


def test_features_image2_round_trip():
    """Mirrors FeaturesImageTest#testImage2RoundTrip."""
    assert_features_round_trip(FEATURES_IMAGE2)


def test_features_image3_round_trip():
    """Mirrors FeaturesImageTest#testImage3RoundTrip."""
    assert_features_round_trip(FEATURES_IMAGE3)


def test_features_apply_delta2():
    """Mirrors FeaturesImageTest#testApplyDelta2: every feature removed, one added back at another level."""
    delta = replay_all(FeaturesDelta(FEATURES_IMAGE2), FEATURES_DELTA2_RECORDS)
    assert delta.apply() == FEATURES_IMAGE3
    assert_features_round_trip(FEATURES_IMAGE3, image_records(FEATURES_IMAGE2, ImageWriterOptions(FEATURES_MV))
                               + FEATURES_DELTA2_RECORDS)


def test_features_empty():
    """Mirrors FeaturesImageTest#testEmpty (without the ZK migration state): a feature, or a metadata.version
    above the minimum KRaft one, makes the image non-empty."""
    assert FeaturesImage().is_empty()
    assert not FeaturesImage({"foo": 1}).is_empty()
    assert not FeaturesImage({}, IBP_3_3_IV0).is_empty()


def test_metadata_version_is_kept_apart_from_the_features():
    """Mirrors FeaturesDelta#replay(FeatureLevelRecord) and MetadataDelta#metadataVersionChanged: a
    metadata.version record changes the image's metadata.version, not its finalized features; level 0
    names no MetadataVersion and is refused (a feature at level 0 is removed)."""
    delta = MetadataDelta(EMPTY_IMAGE)
    assert delta.metadata_version_changed() is None
    delta.replay(FeatureLevelRecord(name="metadata.version", feature_level=IBP_3_6_IV0))
    delta.replay(FeatureLevelRecord(name="foo", feature_level=2))
    assert delta.metadata_version_changed() == IBP_3_6_IV0
    image = delta.apply(MetadataProvenance(5, 1, 0))
    assert image.features == FeaturesImage({"foo": 2}, IBP_3_6_IV0)
    assert image.features.metadata_version_level() == IBP_3_6_IV0
    assert EMPTY_IMAGE.features.metadata_version_level() == 1
    with pytest.raises(MetadataReplayException):
        MetadataDelta(image).replay(FeatureLevelRecord(name="metadata.version", feature_level=0))


def test_metadata_version_change_reaches_every_part():
    """Mirrors MetadataDelta#replay(FeatureLevelRecord): a new metadata.version creates every part's delta
    (their handleMetadataVersionChange), so the next image's parts are rebuilt, unchanged; another
    feature's level touches only the features."""
    feature_only = MetadataDelta(METADATA_IMAGE1)
    feature_only.replay(FeatureLevelRecord(name="foo", feature_level=5))
    assert (feature_only.cluster_delta, feature_only.topics_delta, feature_only.configs_delta,
            feature_only.producer_ids_delta) == (None, None, None, None)
    delta = MetadataDelta(METADATA_IMAGE1)
    delta.replay(FeatureLevelRecord(name="metadata.version", feature_level=IBP_3_6_IV0))
    assert delta.topics_delta is not None and delta.topics_delta.changed_topics == {}
    assert delta.topics_delta.local_changes(LOCAL) == LocalReplicaChanges()
    assert delta.cluster_delta.changed_brokers == {} and delta.configs_delta.changes == {}
    image = delta.apply(METADATA_IMAGE1.provenance)
    assert image == MetadataImage(METADATA_IMAGE1.provenance, FeaturesImage({"foo": 2, "bar": 1}, IBP_3_6_IV0),
                                  CLUSTER_IMAGE1, TOPICS_IMAGE1, CONFIGS_IMAGE1, PIDS_IMAGE1)


# ------------------------------------------------------------------------------ ConfigurationsImageTest

CONFIGS_IMAGE1 = ConfigurationsImage({
    ConfigResource(BROKER, "0"): {"foo": "bar", "baz": "quux"},
    ConfigResource(BROKER, "1"): {"foobar": "foobaz"},
})
CONFIGS_DELTA1_RECORDS = [
    ConfigRecord(resource_type=BROKER, resource_name="0", name="foo", value=None),
    ConfigRecord(resource_type=BROKER, resource_name="0", name="baz", value=None),
    ConfigRecord(resource_type=BROKER, resource_name="1", name="foobar", value=None),
    ConfigRecord(resource_type=BROKER, resource_name="1", name="barfoo", value="bazfoo"),
    ConfigRecord(resource_type=BROKER, resource_name="2", name="foo", value="bar"),
]
CONFIGS_IMAGE2 = ConfigurationsImage({
    ConfigResource(BROKER, "1"): {"barfoo": "bazfoo"},
    ConfigResource(BROKER, "2"): {"foo": "bar"},
})


def assert_configs_round_trip(final: ConfigurationsImage, records: list | None = None) -> None:
    """ConfigurationsImageTest#testToImage."""
    records = image_records(final) if records is None else records
    assert_through_all_intermediate_images(final, records, ConfigurationsImage(), ConfigurationsDelta)


def test_configurations_empty_image_round_trip():
    """Mirrors ConfigurationsImageTest#testEmptyImageRoundTrip."""
    assert_configs_round_trip(ConfigurationsImage())


def test_configurations_image1_round_trip():
    """Mirrors ConfigurationsImageTest#testImage1RoundTrip: one ConfigRecord per key."""
    assert image_records(CONFIGS_IMAGE1) == [
        ConfigRecord(resource_type=BROKER, resource_name="0", name="baz", value="quux"),
        ConfigRecord(resource_type=BROKER, resource_name="0", name="foo", value="bar"),
        ConfigRecord(resource_type=BROKER, resource_name="1", name="foobar", value="foobaz"),
    ]
    assert_configs_round_trip(CONFIGS_IMAGE1)


def test_configurations_apply_delta1():
    """Mirrors ConfigurationsImageTest#testApplyDelta1: broker 0 loses every key (the resource goes),
    broker 1 swaps a key, broker 2 appears."""
    delta = replay_all(ConfigurationsDelta(CONFIGS_IMAGE1), CONFIGS_DELTA1_RECORDS)
    assert delta.apply() == CONFIGS_IMAGE2
    assert ConfigResource(BROKER, "0") not in delta.apply().data
    assert_configs_round_trip(CONFIGS_IMAGE2, image_records(CONFIGS_IMAGE1) + CONFIGS_DELTA1_RECORDS)


def test_configurations_image2_round_trip():
    """Mirrors ConfigurationsImageTest#testImage2RoundTrip."""
    assert_configs_round_trip(CONFIGS_IMAGE2)


def test_removed_topic_takes_its_configuration_along():
    """Mirrors MetadataDelta#replay(RemoveTopicRecord) → ConfigurationsDelta#replay(RemoveTopicRecord, name):
    every key of the topic goes, those staged in the same delta too; a topic recreated under the name
    afterwards starts from its own records."""
    topic_resource = ConfigResource(ConfigResourceType.TOPIC, "zoo")
    base = MetadataDelta(EMPTY_IMAGE)
    replay_all(base, [
        TopicRecord(name="zoo", topic_id=ZOO), in_sync_record(ZOO, 0, (0, 1)),
        ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name="zoo", name="retention.ms", value="100"),
    ])
    image = base.apply(MetadataProvenance(3, 1, 0))
    delta = replay_all(MetadataDelta(image), [
        ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name="zoo", name="cleanup.policy",
                     value="compact"),
        RemoveTopicRecord(topic_id=ZOO),
    ])
    assert delta.apply().configs.config_properties(topic_resource) == {}
    assert delta.apply().configs.data == {}
    recreated = replay_all(MetadataDelta(image), [
        RemoveTopicRecord(topic_id=ZOO),
        TopicRecord(name="zoo", topic_id=FOO2),
        ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name="zoo", name="segment.ms", value="7"),
    ]).apply()
    assert recreated.configs.config_properties(topic_resource) == {"segment.ms": "7"}
    assert recreated.topics.get_topic("zoo").id == FOO2


# ------------------------------------------------------------------------------ ProducerIdsImageTest

PIDS_IMAGE1 = ProducerIdsImage(123)
PIDS_DELTA1_RECORDS = [
    ProducerIdsRecord(broker_id=2, broker_epoch=100, next_producer_id=456),
    ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=780),
    ProducerIdsRecord(broker_id=3, broker_epoch=100, next_producer_id=785),
    ProducerIdsRecord(broker_id=2, broker_epoch=100, next_producer_id=800),
]
PIDS_IMAGE2 = ProducerIdsImage(800)


def test_producer_ids_apply_delta_and_round_trip():
    """Mirrors ProducerIdsImageTest#testApplyDelta1, #testImage1RoundTrip and #testEmptyImageRoundTrip: the
    last block handed out wins; the image is written as one record without broker id or epoch."""
    assert replay_all(ProducerIdsDelta(PIDS_IMAGE1), PIDS_DELTA1_RECORDS).apply() == PIDS_IMAGE2
    assert image_records(ProducerIdsImage()) == []
    assert image_records(PIDS_IMAGE1) == [ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=123)]
    for image in (ProducerIdsImage(), PIDS_IMAGE1, PIDS_IMAGE2):
        assert_through_all_intermediate_images(image, image_records(image), ProducerIdsImage(), ProducerIdsDelta)
    assert_through_all_intermediate_images(PIDS_IMAGE2, image_records(PIDS_IMAGE1) + PIDS_DELTA1_RECORDS,
                                           ProducerIdsImage(), ProducerIdsDelta)


# ------------------------------------------------------------------------------ MetadataImageTest

METADATA_IMAGE1 = MetadataImage(MetadataProvenance(100, 4, 2000), FEATURES_IMAGE1, CLUSTER_IMAGE1, TOPICS_IMAGE1,
                                CONFIGS_IMAGE1, PIDS_IMAGE1)
METADATA_DELTA1_RECORDS = (FEATURES_DELTA1_RECORDS + CLUSTER_DELTA1_RECORDS + TOPICS_DELTA1_RECORDS
                           + CONFIGS_DELTA1_RECORDS + PIDS_DELTA1_RECORDS)
METADATA_IMAGE2 = MetadataImage(MetadataProvenance(200, 5, 4000), FEATURES_IMAGE2, CLUSTER_IMAGE2, TOPICS_IMAGE2,
                                CONFIGS_IMAGE2, PIDS_IMAGE2)


def metadata_delta1() -> MetadataDelta:
    return replay_all(MetadataDelta(METADATA_IMAGE1), METADATA_DELTA1_RECORDS)


def assert_metadata_round_trip(final: MetadataImage, records: list | None = None) -> None:
    """MetadataImageTest#testToImage: every delta applied with the final image's provenance."""
    if records is None:
        records = image_records(final, ImageWriterOptions(final.features.metadata_version))
    assert_through_all_intermediate_images(final, records, EMPTY_IMAGE, MetadataDelta,
                                           lambda d: d.apply(final.provenance))


def test_metadata_empty_image_round_trip():
    """Mirrors MetadataImageTest#testEmptyImageRoundTrip."""
    assert EMPTY_IMAGE.is_empty()
    assert image_records(EMPTY_IMAGE, ImageWriterOptions(EMPTY_IMAGE.features.metadata_version)) == []
    assert_metadata_round_trip(EMPTY_IMAGE)


def test_metadata_image1_round_trip():
    """Mirrors MetadataImageTest#testImage1RoundTrip: features (metadata.version first), cluster, topics,
    configurations, producer ids."""
    records = image_records(METADATA_IMAGE1, ImageWriterOptions(FEATURES_MV))
    assert records[0] == FeatureLevelRecord(name="metadata.version", feature_level=FEATURES_MV)
    assert [type(r).__name__ for r in records[3:6]] == ["RegisterBrokerRecord"] * 3
    assert type(records[6]).__name__ == "TopicRecord"
    assert records[-1] == ProducerIdsRecord(broker_id=-1, broker_epoch=-1, next_producer_id=123)
    assert not METADATA_IMAGE1.is_empty()
    assert_metadata_round_trip(METADATA_IMAGE1)


def test_metadata_apply_delta1():
    """Mirrors MetadataImageTest#testApplyDelta1: every part's DELTA1 records in one MetadataDelta give
    every part's IMAGE2; written-out IMAGE1 plus those records rebuild IMAGE2 from empty."""
    assert metadata_delta1().apply(METADATA_IMAGE2.provenance) == METADATA_IMAGE2
    records = image_records(METADATA_IMAGE1, ImageWriterOptions(FEATURES_MV)) + METADATA_DELTA1_RECORDS
    assert_metadata_round_trip(METADATA_IMAGE2, records)


def test_metadata_image2_round_trip():
    """Mirrors MetadataImageTest#testImage2RoundTrip."""
    assert_metadata_round_trip(METADATA_IMAGE2)


# ------------------------------------------------------------------------------ ImageDowngradeTest

DOWNGRADE_TOPIC = Uuid(0x66, 1)
DOWNGRADE_TOPIC_RECORDS = [
    TopicRecord(name="foo", topic_id=DOWNGRADE_TOPIC),
    PartitionRecord(partition_id=0, topic_id=DOWNGRADE_TOPIC, replicas=(0, 1), isr=(0, 1), leader=0, leader_epoch=1,
                    partition_epoch=2),
]


def mv_record(level: int) -> FeatureLevelRecord:
    return FeatureLevelRecord(name="metadata.version", feature_level=level)


def write_with_expected_losses(metadata_version: int, expected_losses: list[str], inputs: list,
                               expected_outputs: list) -> None:
    """ImageDowngradeTest#writeWithExpectedLosses: replay ``inputs`` from empty, write the image at
    ``metadata_version``; each loss names that version."""
    losses: list[UnwritableMetadataException] = []
    image = replay_all(MetadataDelta(EMPTY_IMAGE), inputs).apply(MetadataProvenance())
    records = image_records(image, ImageWriterOptions(metadata_version, losses.append))
    assert [loss.loss for loss in losses] == expected_losses
    assert all(loss.metadata_version == metadata_version for loss in losses)
    assert records == expected_outputs


def test_premodern_version():
    """Mirrors ImageDowngradeTest#testPremodernVersion: 3.2-IV0 has no FeatureLevelRecord, so neither
    metadata.version nor any feature can be written; the features are a loss."""
    write_with_expected_losses(
        IBP_3_2_IV0, ["feature flag(s): foo.feature"],
        [mv_record(IBP_3_3_IV0), *DOWNGRADE_TOPIC_RECORDS, FeatureLevelRecord(name="foo.feature", feature_level=4)],
        DOWNGRADE_TOPIC_RECORDS)


def test_pre_controlled_shutdown_state_version():
    """Mirrors ImageDowngradeTest#testPreControlledShutdownStateVersion: 3.3-IV2 cannot say a broker is in
    controlled shutdown."""
    registered = dict(broker_id=123, incarnation_id=Uuid(0x77, 1), broker_epoch=456, rack=None, fenced=False)
    write_with_expected_losses(
        IBP_3_3_IV2, ["the inControlledShutdown state of one or more brokers"],
        [mv_record(IBP_3_3_IV3), RegisterBrokerRecord(**registered, in_controlled_shutdown=True),
         *DOWNGRADE_TOPIC_RECORDS],
        [mv_record(IBP_3_3_IV2), RegisterBrokerRecord(**registered), *DOWNGRADE_TOPIC_RECORDS])


def test_pre_zk_migration_support_version():
    """Mirrors ImageDowngradeTest#testPreZkMigrationSupportVersion: 3.3-IV3 keeps the controlled-shutdown
    state but cannot mark a migrating ZooKeeper broker."""
    registered = dict(broker_id=123, incarnation_id=Uuid(0x77, 1), broker_epoch=456, rack=None, fenced=False,
                      in_controlled_shutdown=True)
    write_with_expected_losses(
        IBP_3_3_IV3, ["the isMigratingZkBroker state of one or more brokers"],
        [mv_record(IBP_3_4_IV0), RegisterBrokerRecord(**registered, is_migrating_zk_broker=True),
         *DOWNGRADE_TOPIC_RECORDS],
        [mv_record(IBP_3_3_IV3), RegisterBrokerRecord(**registered), *DOWNGRADE_TOPIC_RECORDS])


def test_default_writer_options_refuse_a_loss():
    """Mirrors ImageWriterOptions.Builder's default loss handler: without one, a loss is an
    UnwritableMetadataException naming the metadata.version and what was lost."""
    image = replay_all(MetadataDelta(EMPTY_IMAGE), [FeatureLevelRecord(name="foo.feature", feature_level=4)]).apply()
    with pytest.raises(UnwritableMetadataException) as caught:
        image_records(image, ImageWriterOptions(IBP_3_2_IV0))
    assert (caught.value.metadata_version, caught.value.loss) == (IBP_3_2_IV0, "feature flag(s): foo.feature")
