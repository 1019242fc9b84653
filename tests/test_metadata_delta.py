"""MetadataDelta / TopicsDelta tests (issue 10), mirroring org.apache.kafka.image.TopicsImageTest,
ClusterImageTest and MetadataDeltaTest (Kafka 3.3–3.6): record replay, apply() to the next image, and
TopicsDelta#localChanges classification (seed 004 §2.1–2.2)."""

from __future__ import annotations

import pytest

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.delta import MetadataDelta, MetadataReplayException, TopicsDelta
from kafka_ref.image.image import EMPTY_IMAGE, MetadataProvenance, TopicImage, TopicsImage
from kafka_ref.controller.quorum.partition_change_builder import Election, PartitionChangeBuilder
from kafka_ref.image.records import (
    NO_LEADER,
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    ConfigResource,
    ConfigResourceType,
    FeatureLevelRecord,
    FenceBrokerRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafka_ref.image.registrations import PartitionRegistration

FOO = Uuid(1, 101)
BAR = Uuid(1, 202)
BAZ = Uuid(1, 303)
NEW_FOO = Uuid(1, 404)
ZOO = Uuid(1, 505)
LOCAL = 3


def topics_image(*topics: TopicImage) -> TopicsImage:
    return TopicsImage({t.id: t for t in topics}, {t.name: t for t in topics})


def topic(name: str, topic_id: Uuid, *partitions: PartitionRegistration) -> TopicImage:
    return TopicImage(name, topic_id, dict(enumerate(partitions)))


def simple_partition(replicas: tuple[int, ...]) -> PartitionRegistration:
    """All replicas in sync, the first leads, epochs 1 (TopicsImageTest#newPartition)."""
    return PartitionRegistration(replicas, replicas, leader=replicas[0], leader_epoch=1, partition_epoch=1)


def simple_partition_record(topic_id: Uuid, partition_id: int, replicas: tuple[int, ...]) -> PartitionRecord:
    return PartitionRecord(partition_id=partition_id, topic_id=topic_id, replicas=replicas, isr=replicas,
                           leader=replicas[0], leader_epoch=1, partition_epoch=1)


# IMAGE1 / DELTA1 of TopicsImageTest, in our own values.
IMAGE1 = topics_image(
    topic("foo", FOO,
          PartitionRegistration((2, 3, 4), (2, 3), leader=2, leader_epoch=1, partition_epoch=345),
          PartitionRegistration((3, 4, 5), (3, 4, 5), leader=3, leader_epoch=4, partition_epoch=684),
          PartitionRegistration((2, 4, 5), (2, 4, 5), leader=2, leader_epoch=10, partition_epoch=84)),
    topic("bar", BAR,
          PartitionRegistration((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), leader=0, leader_epoch=1, partition_epoch=345)),
)
DELTA1_RECORDS = [
    RemoveTopicRecord(topic_id=FOO),
    PartitionChangeRecord(topic_id=BAR, partition_id=0, leader=1),
    TopicRecord(name="baz", topic_id=BAZ),
    PartitionRecord(partition_id=0, topic_id=BAZ, replicas=(1, 2, 3, 4), isr=(3, 4), removing_replicas=(2,),
                    adding_replicas=(1,), leader=3, leader_epoch=2, partition_epoch=1),
]


def replay_all(delta: TopicsDelta, records: list) -> TopicsDelta:
    for record in records:
        if isinstance(record, TopicRecord):
            delta.replay_topic(record)
        elif isinstance(record, PartitionRecord):
            delta.replay_partition(record)
        elif isinstance(record, PartitionChangeRecord):
            delta.replay_partition_change(record)
        elif isinstance(record, RemoveTopicRecord):
            delta.replay_remove_topic(record)
    return delta


def names(partitions) -> set[str]:
    return {str(tp) for tp in partitions}


# ------------------------------------------------------------------------------ apply


def test_apply_delta1():
    """Mirrors TopicsImageTest#testApplyDelta1: foo removed, bar-0 with a new leader (epochs + 1), baz created."""
    image2 = replay_all(TopicsDelta(IMAGE1), DELTA1_RECORDS).apply()
    expected = topics_image(
        topic("bar", BAR,
              PartitionRegistration((0, 1, 2, 3, 4), (0, 1, 2, 3), (1,), (3, 4), leader=1, leader_epoch=2, partition_epoch=346)),
        topic("baz", BAZ,
              PartitionRegistration((1, 2, 3, 4), (3, 4), (2,), (1,), leader=3, leader_epoch=2, partition_epoch=1)),
    )
    assert image2 == expected
    # The old image is untouched (images are immutable).
    assert IMAGE1.get_topic("foo").partitions[0].partition_epoch == 345


def test_unchanged_topics_are_shared_between_images():
    """MetadataImage parts without a delta are the same objects in the next image."""
    delta = TopicsDelta(IMAGE1)
    delta.replay_partition_change(PartitionChangeRecord(topic_id=BAR, partition_id=0, isr=(0, 1)))
    image2 = delta.apply()
    assert image2.get_topic("foo") is IMAGE1.get_topic("foo")
    assert image2.get_topic("bar") is not IMAGE1.get_topic("bar")


def test_partition_change_merge_rules():
    """Mirrors PartitionRegistrationTest#testMergePartitionChangeRecordWithReassignmentData and the epoch rules."""
    base = PartitionRegistration((1, 2, 3), (1, 2, 3), leader=1, leader_epoch=5, partition_epoch=7)
    # ISR only: the partition epoch moves, the leader epoch does not.
    isr_only = base.merge(PartitionChangeRecord(topic_id=FOO, partition_id=0, isr=(1, 2)))
    assert (isr_only.isr, isr_only.leader, isr_only.leader_epoch, isr_only.partition_epoch) == ((1, 2), 1, 5, 8)
    # Leader set (even to the same broker): the leader epoch moves too.
    same_leader = base.merge(PartitionChangeRecord(topic_id=FOO, partition_id=0, leader=1))
    assert (same_leader.leader, same_leader.leader_epoch, same_leader.partition_epoch) == (1, 6, 8)
    no_leader = base.merge(PartitionChangeRecord(topic_id=FOO, partition_id=0, leader=NO_LEADER))
    assert (no_leader.leader, no_leader.leader_epoch, no_leader.has_leader()) == (-1, 6, False)
    # Recovery state: -1 keeps it.
    recovering = base.merge(PartitionChangeRecord(topic_id=FOO, partition_id=0, leader=2, isr=(2,),
                                                  leader_recovery_state=LeaderRecoveryState.RECOVERING))
    assert recovering.leader_recovery_state is LeaderRecoveryState.RECOVERING
    assert recovering.merge(PartitionChangeRecord(topic_id=FOO, partition_id=0, isr=(2, 3))).leader_recovery_state \
        is LeaderRecoveryState.RECOVERING


def test_partition_change_for_unknown_partition_fails():
    """Mirrors TopicDelta#replay(PartitionChangeRecord): a change for a partition nobody created is an error."""
    delta = TopicsDelta(IMAGE1)
    with pytest.raises(MetadataReplayException):
        delta.replay_partition_change(PartitionChangeRecord(topic_id=BAR, partition_id=9, isr=(0,)))
    with pytest.raises(MetadataReplayException):
        delta.replay_remove_topic(RemoveTopicRecord(topic_id=ZOO))


# ------------------------------------------------------------------------------ localChanges


def test_basic_local_changes():
    """Mirrors TopicsImageTest#testBasicLocalChanges: deleted topic, partition-epoch-only change, new
    topic led here, a new topic reusing a deleted topic's name, a new partition followed here."""
    records = list(DELTA1_RECORDS) + [
        TopicRecord(name="foo", topic_id=NEW_FOO),
        simple_partition_record(NEW_FOO, 0, (0, 1, 2)),
        simple_partition_record(NEW_FOO, 1, (0, 1, LOCAL)),
        PartitionRecord(partition_id=1, topic_id=BAZ, replicas=(4, 2, LOCAL), isr=(4, 2, LOCAL), leader=4,
                        leader_epoch=2, partition_epoch=1),
    ]
    changes = replay_all(TopicsDelta(IMAGE1), records).local_changes(LOCAL)
    # Both old foo partitions this broker held go (foo-1 is then recreated under the new id).
    assert names(changes.deletes) == {"foo-0", "foo-1"}
    assert names(changes.leaders) == {"baz-0"}
    assert names(changes.followers) == {"baz-1", "bar-0", "foo-1"}
    # PartitionInfo carries the topic id and the new registration.
    assert changes.followers[TopicPartition("foo", 1)].topic_id == NEW_FOO
    assert changes.leaders[TopicPartition("baz", 0)].partition.leader_epoch == 2


def test_delete_after_changes():
    """Mirrors TopicsImageTest#testDeleteAfterChanges: a change then the topic's removal → only a delete."""
    image = topics_image(topic("zoo", ZOO, simple_partition((LOCAL, 1, 2))))
    changes = replay_all(TopicsDelta(image), [
        PartitionChangeRecord(topic_id=ZOO, partition_id=0, leader=1),
        RemoveTopicRecord(topic_id=ZOO),
    ]).local_changes(LOCAL)
    assert names(changes.deletes) == {"zoo-0"}
    assert changes.leaders == {} and changes.followers == {}


def test_created_and_deleted_in_one_delta_leaves_nothing():
    """TopicsDelta#replay(RemoveTopicRecord) for a topic created in the same delta: it never existed locally."""
    delta = replay_all(TopicsDelta(TopicsImage()), [
        TopicRecord(name="zoo", topic_id=ZOO), simple_partition_record(ZOO, 0, (LOCAL, 1)), RemoveTopicRecord(topic_id=ZOO),
    ])
    changes = delta.local_changes(LOCAL)
    assert (changes.deletes, changes.leaders, changes.followers) == (set(), {}, {})
    assert delta.apply().get_topic("zoo") is None


def test_local_reassignment_changes():
    """Mirrors TopicsImageTest#testLocalReassignmentChanges: follower→leader, leader→follower, removal from the
    replica set as follower and as leader, not-a-replica → leader / follower."""
    image = topics_image(topic(
        "zoo", ZOO,
        simple_partition((0, 1, LOCAL)), simple_partition((LOCAL, 1, 2)), simple_partition((0, 1, LOCAL)),
        simple_partition((LOCAL, 1, 2)), simple_partition((0, 1, 2)), simple_partition((0, 1, 2)),
    ))
    changes = replay_all(TopicsDelta(image), [
        PartitionChangeRecord(topic_id=ZOO, partition_id=0, leader=LOCAL),
        PartitionChangeRecord(topic_id=ZOO, partition_id=1, leader=1),
        PartitionChangeRecord(topic_id=ZOO, partition_id=2, isr=(0, 1, 2), replicas=(0, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=3, leader=0, isr=(0, 1, 2), replicas=(0, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=4, leader=LOCAL, isr=(LOCAL, 1, 2), replicas=(LOCAL, 1, 2)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=5, isr=(0, 1, LOCAL), replicas=(0, 1, LOCAL)),
    ]).local_changes(LOCAL)
    assert names(changes.deletes) == {"zoo-2", "zoo-3"}
    assert names(changes.leaders) == {"zoo-0", "zoo-4"}
    assert names(changes.followers) == {"zoo-1", "zoo-5"}


def test_partition_epoch_decides_membership_not_leader_epoch():
    """TopicDelta#localChanges (3.3+): an ISR-only change is a leader/follower change (partition epoch moved);
    a partition whose registration did not change at all, or a broker outside the replica set, is not."""
    image = topics_image(topic("zoo", ZOO, simple_partition((LOCAL, 1, 2)), simple_partition((1, LOCAL, 2)),
                               simple_partition((0, 1, 2))))
    delta = replay_all(TopicsDelta(image), [
        PartitionChangeRecord(topic_id=ZOO, partition_id=0, isr=(LOCAL, 1)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=1, isr=(1, LOCAL)),
        PartitionChangeRecord(topic_id=ZOO, partition_id=2, isr=(0, 1)),
    ])
    changes = delta.local_changes(LOCAL)
    assert names(changes.leaders) == {"zoo-0"}
    assert names(changes.followers) == {"zoo-1"}
    assert changes.deletes == set()
    assert changes.leaders[TopicPartition("zoo", 0)].partition.leader_epoch == 1
    assert changes.leaders[TopicPartition("zoo", 0)].partition.partition_epoch == 2
    # A PartitionRecord identical in partition epoch to the image's is no change here.
    same = TopicsDelta(image)
    same.replay_partition(simple_partition_record(ZOO, 0, (LOCAL, 1, 2)))
    assert same.local_changes(LOCAL).leaders == {}


# ------------------------------------------------------------------------------ the whole MetadataDelta


def register(broker_id: int, epoch: int) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, incarnation_id=Uuid(7, broker_id), broker_epoch=epoch,
                                end_points=(BrokerEndpoint(host="localhost", port=9092 + broker_id),))


def test_metadata_delta_replay_dispatches_by_record_type():
    """Mirrors MetadataDelta#replay (seed 004 §2.1 step 4): each record type reaches its part of the delta,
    apply() stamps the provenance, and parts left alone are shared."""
    delta = MetadataDelta(EMPTY_IMAGE)
    records = [
        FeatureLevelRecord(name="metadata.version", feature_level=20),
        register(0, 1), register(1, 2), register(2, 3),
        BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=1, fenced=BrokerRegistrationFencingChange.UNFENCE),
        UnfenceBrokerRecord(id=1, epoch=2),
        TopicRecord(name="t", topic_id=ZOO),
        PartitionRecord(partition_id=0, topic_id=ZOO, replicas=(0, 1), isr=(0, 1), leader=0),
        ConfigRecord(resource_type=ConfigResourceType.TOPIC, resource_name="t", name="min.insync.replicas", value="2"),
        ProducerIdsRecord(broker_id=0, broker_epoch=1, next_producer_id=1000),
    ]
    for record in records:
        delta.replay(record)
    image = delta.apply(MetadataProvenance(9, 1, 0))
    assert image.highest_offset == 9
    assert image.features.metadata_version_level() == 20
    assert {b: (r.epoch, r.fenced) for b, r in image.cluster.brokers.items()} == {0: (1, False), 1: (2, False), 2: (3, True)}
    assert image.cluster.broker(0).node().port == 9092
    assert image.topics.get_topic("t").partitions[0].isr == (0, 1)
    assert image.configs.config_properties(ConfigResource(ConfigResourceType.TOPIC, "t")) == {"min.insync.replicas": "2"}
    assert image.producer_ids.next_producer_id == 1000
    # Next delta: fence broker 1, put broker 0 in controlled shutdown, unregister 2, delete the topic.
    delta2 = MetadataDelta(image)
    delta2.replay(FenceBrokerRecord(id=1, epoch=2))
    delta2.replay(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=1, in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    delta2.replay(UnregisterBrokerRecord(broker_id=2, broker_epoch=3))
    delta2.replay(RemoveTopicRecord(topic_id=ZOO))
    image2 = delta2.apply(MetadataProvenance(13, 1, 0))
    assert {b: (r.fenced, r.in_controlled_shutdown) for b, r in image2.cluster.brokers.items()} == {0: (False, True), 1: (True, False)}
    assert image2.topics.get_topic("t") is None
    assert image2.configs.config_properties(ConfigResource(ConfigResourceType.TOPIC, "t")) == {}
    assert delta2.topics_delta.topic_was_deleted("t")
    assert image2.features is image.features and image2.producer_ids is image.producer_ids


def test_broker_record_with_wrong_epoch_is_refused():
    """Mirrors ClusterDelta#getBrokerOrThrow: a fencing record for another broker epoch cannot apply."""
    image = MetadataDelta(EMPTY_IMAGE)
    image.replay(register(0, 5))
    delta = MetadataDelta(image.apply())
    with pytest.raises(MetadataReplayException):
        delta.replay(FenceBrokerRecord(id=0, epoch=4))
    with pytest.raises(MetadataReplayException):
        delta.replay(UnfenceBrokerRecord(id=9, epoch=1))


# ------------------------------------------------------------------------------ PartitionChangeBuilder


def build(partition, acceptable, *, isr=None, election=Election.ONLINE, bump_on_shrink=False):
    builder = PartitionChangeBuilder(partition, ZOO, 0, acceptable, bump_leader_epoch_on_isr_shrink=bump_on_shrink)
    builder.set_election(election)
    if isr is not None:
        builder.set_target_isr(isr)
    return builder.build()


def test_partition_change_builder_elections():
    """Mirrors PartitionChangeBuilderTest#testElectLeader / #testUncleanLeaderElection / #testNoChange."""
    p = PartitionRegistration((2, 1, 3), (2, 1, 3), leader=2, leader_epoch=4, partition_epoch=9)
    active = lambda r: r in (1, 3)  # noqa: E731 -- broker 2 is fenced
    # The leader is fenced: the first ISR replica that may lead takes over, ISR without the fenced one.
    change = build(p, lambda r: r != 2 and active(r), isr=(1, 3))
    assert (change.leader, change.isr) == (1, (1, 3))
    # Nothing to change: no record.
    assert build(p, lambda r: True) is None
    # The last ISR member goes: no leader, and the ISR keeps it (never written empty).
    lonely = PartitionRegistration((2, 1), (2,), leader=2, leader_epoch=4, partition_epoch=9)
    change = build(lonely, lambda r: r == 1, isr=())
    assert (change.leader, change.isr) == (NO_LEADER, None)
    assert lonely.merge(change).isr == (2,)
    # Unclean allowed: an out-of-sync replica leads alone, RECOVERING.
    change = build(lonely, lambda r: r == 1, isr=(), election=Election.UNCLEAN)
    assert (change.leader, change.isr, change.leader_recovery_state) == (1, (1,), LeaderRecoveryState.RECOVERING)
    # Preferred election moves leadership back to the first replica if it is in the ISR.
    moved = PartitionRegistration((2, 1, 3), (1, 2, 3), leader=1, leader_epoch=5, partition_epoch=10)
    assert build(moved, lambda r: True, election=Election.PREFERRED).leader == 2


def test_isr_shrink_bumps_leader_epoch_only_before_3_6():
    """Mirrors PartitionChangeBuilder#triggerLeaderEpochBumpIfNeeded (KAFKA-15021): ISR shrinks bump the
    leader epoch before metadata.version 3.6; expansions never do."""
    p = PartitionRegistration((1, 2, 3), (1, 2, 3), leader=1, leader_epoch=4, partition_epoch=9)
    old = build(p, lambda r: True, isr=(1, 2), bump_on_shrink=True)
    new = build(p, lambda r: True, isr=(1, 2), bump_on_shrink=False)
    assert (old.leader, p.merge(old).leader_epoch) == (1, 5)
    assert (new.leader, p.merge(new).leader_epoch) == (-2, 4)
    shrunk = p.merge(new)
    grow = build(shrunk, lambda r: True, isr=(1, 2, 3), bump_on_shrink=True)
    assert shrunk.merge(grow).leader_epoch == 4
