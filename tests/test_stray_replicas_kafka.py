"""Stray replicas on a KRaft broker: logs the first metadata image no longer assigns here.

Ports of Kafka 3.8.0's ``LogManagerTest#testIsStrayKraftReplica*`` (``LogManager#isStrayKraftReplica``)
and of ``testLoadLogRenameLogThatShouldBeStray`` (the log is renamed aside, kept, and not loaded),
plus the broker-level case: a replica of a topic deleted while its broker was down is set aside at
the broker's first metadata publish (Kafka 3.8: ``BrokerMetadataPublisher#initializeManagers``
starts the LogManager with that test); ``DeleteTopicTest``'s KRaft runs in
tests/test_delete_topic_kafka.py exercise it through topic deletion.
"""

from __future__ import annotations

import pytest

from helpers_replica import make_broker
from kafka_ref import Cluster, TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.image import TopicImage, TopicsImage
from kafka_ref.image.registrations import PartitionRegistration
from kafka_ref.log.log_manager import LogManager

FOO_ID = Uuid.from_string("Sl08ZXU2QW6uF5hIoSzc8w")
BAR_ID = Uuid.from_string("69O438ZkTSeqqclTtZO2KA")
QUUX_ID = Uuid.from_string("YS9owjv5TG2OlsvBM0Qw6g")
FOO0, FOO1 = (FOO_ID, TopicPartition("foo", 0)), (FOO_ID, TopicPartition("foo", 1))
BAR0, BAR1 = (BAR_ID, TopicPartition("bar", 0)), (BAR_ID, TopicPartition("bar", 1))
QUUX0 = (QUUX_ID, TopicPartition("quux", 0))


def _topics_image(*topics: dict[tuple[Uuid, TopicPartition], list[int]]) -> TopicsImage:
    """LogManagerTest#topicsImage / #topicImage: one TopicImage per map of partition -> replicas."""
    images = []
    for parts in topics:
        (topic_id, first), *_ = parts
        images.append(TopicImage(first.topic, topic_id, {tp.partition: PartitionRegistration(
            replicas=tuple(replicas), isr=tuple(replicas), leader=replicas[0]) for (_, tp), replicas in parts.items()}))
    return TopicsImage({t.id: t for t in images}, {t.name: t for t in images})


def _logs(*partitions: tuple[Uuid, TopicPartition]):
    """LogManagerTest#mockLog: a log per partition, carrying its topic id."""
    broker = make_broker(0)
    out = []
    for topic_id, tp in partitions:
        out.append(broker.log_manager.get_or_create_log(tp, is_new=True, topic_id=topic_id))
    return out


def test_is_stray_kraft_replica_with_empty_image():
    """Mirrors LogManagerTest#testIsStrayKraftReplicaWithEmptyImage."""
    image = _topics_image()
    assert all(LogManager.is_stray_kraft_replica(0, image, log) for log in _logs(FOO0, FOO1, BAR0, BAR1, QUUX0))


def test_is_stray_kraft_replica_in_image():
    """Mirrors LogManagerTest#testIsStrayKraftReplicaInImage: a partition or topic the image lacks is stray."""
    image = _topics_image({FOO0: [0, 1, 2]}, {BAR0: [0, 1, 2], BAR1: [0, 1, 2]})
    strays = {log.topic_partition for log in _logs(FOO0, FOO1, BAR0, BAR1, QUUX0)
              if LogManager.is_stray_kraft_replica(0, image, log)}
    assert strays == {FOO1[1], QUUX0[1]}


def test_is_stray_kraft_replica_in_image_with_remote_replicas():
    """Mirrors LogManagerTest#testIsStrayKraftReplicaInImageWithRemoteReplicas: replicas leaving broker 0 out."""
    image = _topics_image({FOO0: [0, 1, 2]}, {BAR0: [1, 2, 3], BAR1: [2, 3, 0]})
    strays = {log.topic_partition for log in _logs(FOO0, BAR0, BAR1) if LogManager.is_stray_kraft_replica(0, image, log)}
    assert strays == {BAR0[1]}


def test_is_stray_kraft_missing_topic_id():
    """Mirrors LogManagerTest#testIsStrayKraftMissingTopicId."""
    broker = make_broker(0)
    log = broker.log_manager.get_or_create_log(TopicPartition("foo", 0), is_new=True)
    assert log.topic_id is None
    assert LogManager.is_stray_kraft_replica(0, _topics_image(), log)


def test_a_recreated_topic_makes_the_old_incarnation_stray():
    """The same name under a new topic id (Kafka's recreatedFoo0 case): the old log is stray."""
    image = _topics_image({(Uuid.from_string("_dOOzPe3TfiWV21Lh7Vmqg"), TopicPartition("foo", 0)): [0, 1, 2]})
    (log,) = _logs(FOO0)
    assert LogManager.is_stray_kraft_replica(0, image, log)


def test_set_aside_stray_logs_renames_and_keeps_them():
    """Mirrors LogManagerTest#testLoadLogRenameLogThatShouldBeStray: the stray log leaves the
    manager and its directory is renamed aside with its data; the others stay."""
    broker = make_broker(0)
    lm = broker.log_manager
    foo0 = lm.get_or_create_log(FOO0[1], is_new=True, topic_id=FOO_ID)
    lm.get_or_create_log(BAR0[1], is_new=True, topic_id=BAR_ID)
    image = _topics_image({BAR0: [0, 1, 2]})
    assert lm.set_aside_stray_logs(lambda log: LogManager.is_stray_kraft_replica(0, image, log)) == [FOO0[1]]
    assert lm.get_log(FOO0[1]) is None and lm.get_log(BAR0[1]) is not None
    assert lm.stray_logs == {FOO0[1]: foo0}
    assert broker.disk.get_local_log(FOO0[1]) is None
    assert [local.topic_partition for local in broker.disk.stray_logs] == [FOO0[1]]


@pytest.mark.anyio
async def test_replica_of_topic_deleted_while_broker_down_is_set_aside_on_restart():
    """A KRaft broker stopped before its topic is deleted: on restart the first image has no such
    topic id, so its log is stray: not loaded, not hosted, its data renamed aside and kept."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=9,
                       config={"controlled.shutdown.enable": False}) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        tp = TopicPartition("t", 0)
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(tp) is not None for b in range(3)))
        topic_id = cluster.topic_id("t")
        cluster.shutdown_broker_uncontrolled(2)
        await cluster.wait_broker_gone(2)
        await cluster.delete_topic("t")
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(tp) is None for b in (0, 1)))
        await cluster.restart_broker(2)
        lm = cluster.broker(2).log_manager
        await cluster.wait_until(lambda: tp in lm.stray_logs, message="the old replica set aside")
        assert lm.get_log(tp) is None and cluster.broker(2).replica_manager.online_partition(tp) is None
        assert [(local.topic_partition, local.partition_metadata_topic_id) for local in cluster.disks[2].stray_logs] == [
            (tp, topic_id)]
        assert cluster.disks[2].get_local_log(tp) is None
