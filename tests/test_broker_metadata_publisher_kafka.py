"""kafka.server.metadata tests (Kafka 3.8): BrokerMetadataPublisherTest and BrokerMetadataPublisher#updateCoordinator,
against kafka_ref/server/metadata/broker_metadata_publisher.py, and ZkConfigRepositoryTest against
kafka_ref/server/metadata/zk_config_repository.py.

``update_coordinator`` reaches the group coordinator through the broker's hooks
(``on_offsets_partition_resignation(partition, epoch)``, -1 for Kafka's "no epoch", and
``on_leadership_change(leaders, followers)``, whose group listener calls onElection / onResignation);
the broker here is a recorder of those hooks with a configuration naming the Kafka release.

Not ported:
- testReloadUpdatedFilesWithoutConfigChange: the DynamicConfigPublisher and broker reconfiguration are
  not modelled.
- testExceptionInUpdateCoordinator: kafka_ref's publisher has no metadata publishing fault handler; a
  failure in one step is not caught and counted.
- testNewImagePushedToGroupCoordinator: the new group coordinator (KIP-848, onNewMetadataImage) is not
  modelled; kafka_ref's group coordinator is the classic one.
- MockConfigRepositoryTest: kafka_ref has no MockConfigRepository (tests build real images or ZooKeeper).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from test_metadata_image_kafka import METADATA_IMAGE1, in_sync, metadata_delta1, topic, topics_image

from kafka_ref.common.config import MetadataVersion
from kafka_ref.common.errors import InvalidRequestException
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.delta import MetadataDelta
from kafka_ref.image.image import MetadataImage, MetadataProvenance
from kafka_ref.image.records import ConfigResource, ConfigResourceType, PartitionChangeRecord, RemoveTopicRecord
from kafka_ref.server.metadata.broker_metadata_publisher import BrokerMetadataPublisher, get_topic_delta
from kafka_ref.server.metadata.zk_config_repository import ZkConfigRepository
from kafka_ref.zk.zk_data import ConfigType

LOCAL = 3
OFFSETS = Uuid(0x99, 1)


def test_get_topic_delta():
    """Mirrors BrokerMetadataPublisherTest#testGetTopicDelta: none for an unknown topic, none for a topic the
    delta deleted (foo, recreated under another id, is looked up in the old image), one for a changed topic."""
    delta = metadata_delta1()
    assert get_topic_delta("not-a-topic", METADATA_IMAGE1, delta) is None
    assert get_topic_delta("foo", METADATA_IMAGE1, delta) is None
    bar = get_topic_delta("bar", METADATA_IMAGE1, delta)
    assert bar is not None and bar.name == "bar" and set(bar.partition_changes) == {0}


class _Broker:
    """Records the coordinator hooks BrokerMetadataPublisher#updateCoordinator calls."""

    def __init__(self, version: str = "3.8") -> None:
        self.broker_id = LOCAL
        self.config = SimpleNamespace(broker_version=MetadataVersion.parse(version))
        self.metadata_cache = None
        self.replica_manager = None
        self.calls: list[tuple] = []

    def on_offsets_partition_resignation(self, partition: int, leader_epoch: int) -> None:
        self.calls.append(("resign", partition, leader_epoch))

    def on_leadership_change(self, leaders, followers) -> None:
        for change in leaders:
            self.calls.append(("elect", change.topic_partition.partition, change.get_leader_epoch()))
        for change in followers:
            self.calls.append(("resign", change.topic_partition.partition, change.get_leader_epoch()))


def offsets_image() -> MetadataImage:
    """__consumer_offsets with partition 0 led here, 1 followed here, 2 led here, 3 elsewhere."""
    return MetadataImage(MetadataProvenance(10, 1, 0), topics=topics_image(topic(
        "__consumer_offsets", OFFSETS,
        in_sync((LOCAL, 1, 2)), in_sync((1, LOCAL, 2)), in_sync((LOCAL, 2, 1)), in_sync((0, 1, 2)))))


def update(broker: _Broker, image: MetadataImage, records: list) -> list[tuple]:
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    BrokerMetadataPublisher(broker).update_coordinator(delta.apply(MetadataProvenance(11, 1, 0)), delta)
    return broker.calls


def test_update_coordinator_local_changes():
    """Mirrors BrokerMetadataPublisher#updateCoordinator: partition 0 moves its leader away (resign at the new
    leader epoch), 1 is won here (elected at epoch 2), 2 drops this broker from its replicas (resign without
    an epoch), 3 gains a replica here (a follower: resign at its epoch)."""
    calls = update(_Broker(), offsets_image(), [
        PartitionChangeRecord(topic_id=OFFSETS, partition_id=0, leader=1),
        PartitionChangeRecord(topic_id=OFFSETS, partition_id=1, leader=LOCAL),
        PartitionChangeRecord(topic_id=OFFSETS, partition_id=2, leader=2, isr=(2, 1), replicas=(2, 1)),
        PartitionChangeRecord(topic_id=OFFSETS, partition_id=3, replicas=(0, 1, 2, LOCAL)),
    ])
    assert calls == [("resign", 2, -1), ("elect", 1, 2), ("resign", 0, 2), ("resign", 3, 1)]


def test_update_coordinator_offsets_topic_deleted():
    """Mirrors BrokerMetadataPublisher#updateCoordinator when __consumer_offsets itself is deleted: every
    partition led here resigns at its leader epoch; the deleted topic has no topic delta left."""
    calls = update(_Broker(), offsets_image(), [RemoveTopicRecord(topic_id=OFFSETS)])
    assert calls == [("resign", 0, 1), ("resign", 2, 1)]


@pytest.mark.parametrize("version, expected", [("3.7", [("elect", 0, 1)]), ("3.8", [])])
def test_update_coordinator_elects_only_on_a_new_leader_epoch(version, expected):
    """Mirrors BrokerMetadataPublisher#updateCoordinator's use of LocalReplicaChanges#electedLeaders (KAFKA-15468,
    Kafka 3.8): an ISR shrink on a partition led here moves only the partition epoch; 3.7 called onElection
    again (at the same leader epoch), 3.8 leaves the loaded partition alone."""
    calls = update(_Broker(version), offsets_image(),
                   [PartitionChangeRecord(topic_id=OFFSETS, partition_id=0, isr=(LOCAL, 1))])
    assert calls == expected


# ------------------------------------------------------------------------------ ZkConfigRepositoryTest


class _ZkClient:
    """Answers KafkaZkClient#getEntityConfigs from a table, as the Kafka test's mock does."""

    def __init__(self, configs: dict[tuple[str, str], dict[str, str]]) -> None:
        self.configs = configs

    def get_entity_configs(self, entity_type: str, name: str) -> dict[str, str]:
        return dict(self.configs.get((entity_type, name), {}))


def test_zk_config_repository():
    """Mirrors ZkConfigRepositoryTest#testZkConfigRepository: broker and topic configurations come from their
    znodes; the cluster-wide broker entity (empty name) is read from "<default>"."""
    repository = ZkConfigRepository(_ZkClient({
        (ConfigType.BROKER, "1"): {"a": "b"},
        (ConfigType.TOPIC, "topic"): {"c": "d"},
        (ConfigType.BROKER, "<default>"): {"e": "f"},
    }))
    assert repository.broker_config(1) == {"a": "b"}
    assert repository.topic_config("topic") == {"c": "d"}
    assert repository.config(ConfigResource(ConfigResourceType.TOPIC, "topic")) == {"c": "d"}
    assert repository.config(ConfigResource(ConfigResourceType.BROKER, "")) == {"e": "f"}
    assert repository.topic_config("other") == {}


def test_unsupported_types():
    """Mirrors ZkConfigRepositoryTest#testUnsupportedTypes: every type but topics, brokers and client metrics
    is an illegal argument; client metrics are refused as an invalid request (KRaft only)."""
    repository = ZkConfigRepository(_ZkClient({}))
    for resource_type in ConfigResourceType:
        if resource_type in (ConfigResourceType.TOPIC, ConfigResourceType.BROKER, ConfigResourceType.CLIENT_METRICS):
            continue
        with pytest.raises(ValueError, match=f"Unsupported config type: {resource_type.name}"):
            repository.config(ConfigResource(resource_type, resource_type.name))
    with pytest.raises(InvalidRequestException, match="only supported on KRaft clusters"):
        repository.config(ConfigResource(ConfigResourceType.CLIENT_METRICS, "CLIENT_METRICS"))
