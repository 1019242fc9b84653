"""kafka.server.metadata tests (Kafka 3.8): BrokerMetadataPublisherTest and BrokerMetadataPublisher#updateCoordinator,
against kafka_ref/server/metadata/broker_metadata_publisher.py, and ZkConfigRepositoryTest against
kafka_ref/server/metadata/zk_config_repository.py; and, since kafka_ref's broker reads the metadata log
through Kafka 3.3's BrokerMetadataListener (3.4 replaced it with the MetadataLoader, whose tests are not
ported), BrokerMetadataListenerTest as Kafka 3.3.0 had it.

``update_coordinator`` reaches the group coordinator through the broker's hooks
(``on_offsets_partition_resignation(partition, epoch)``, -1 for Kafka's "no epoch", and
``on_leadership_change(leaders, followers)``, whose group listener calls onElection / onResignation);
the broker here is a recorder of those hooks with a configuration naming the Kafka release.

Not ported:
- testReloadUpdatedFilesWithoutConfigChange: the DynamicConfigPublisher and broker reconfiguration are
  not modelled.
- testNewImagePushedToGroupCoordinator: the new group coordinator (KIP-848, onNewMetadataImage) is not
  modelled; kafka_ref's group coordinator is the classic one.
- MockConfigRepositoryTest: kafka_ref has no MockConfigRepository (tests build real images or ZooKeeper).
- BrokerMetadataListenerTest (3.3) #testCreateSnapshot, #testNotSnapshotAfterMetadataVersionChangeBeforePublishing,
  #testSnapshotAfterMetadataVersionChangeWhenStarting and #testSnapshotAfterMetadataVersionChange, and the
  snapshot half of #testNoSnapshotAfterError: metadata snapshots (the MetadataSnapshotter) are not
  modelled. The BrokerServerMetrics assertions of #testPublish are left out: those metrics are not
  modelled (only metadataLoadErrorCount is).
"""

from __future__ import annotations

from types import SimpleNamespace

import anyio
import pytest

from test_metadata_image_kafka import METADATA_IMAGE1, in_sync, metadata_delta1, topic, topics_image

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import InvalidRequestException
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.delta import LocalReplicaChanges, MetadataDelta
from kafka_ref.image.image import MetadataImage, MetadataProvenance
from kafka_ref.common.time import Time
from kafka_ref.image.records import (
    Batch,
    ConfigResource,
    ConfigResourceType,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.image.registrations import BrokerRegistration
from kafka_ref.raft.raft_client import BatchReader
from kafka_ref.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_ref.server.metadata.broker_metadata_publisher import BrokerMetadataPublisher, FatalFaultError, get_topic_delta
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



class _PublishingBroker(_Broker):
    """A broker whose metadata cache, replica manager and log manager record what publish hands them."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[MetadataImage] = []
        self.applied: list = []
        self.deleted: list = []
        self.hw_checkpoint_started = False
        self.stray_check_fails = False
        broker = self
        self.metadata_cache = SimpleNamespace(set_image=self.images.append)

        def apply_delta(topics_delta, new_image):
            broker.applied.append(topics_delta)
            return LocalReplicaChanges()

        def start_hw_checkpoints():
            broker.hw_checkpoint_started = True

        def set_aside_stray_logs(is_stray):
            if broker.stray_check_fails:
                raise OSError("log directory unreadable")

        self.replica_manager = SimpleNamespace(apply_delta=apply_delta,
                                               start_high_watermark_check_point_thread=start_hw_checkpoints)
        self.config = KafkaConfig({"broker.id": LOCAL})
        self.topic_configs: list[tuple[str, int]] = []
        self.log_manager = SimpleNamespace(
            set_aside_stray_logs=set_aside_stray_logs, started=True,
            update_topic_config=lambda topic, config: broker.topic_configs.append((topic, config.min_in_sync_replicas)))

    def on_deleted_partitions(self, partitions) -> None:
        self.deleted.extend(str(tp) for tp in partitions)


def test_exception_in_update_coordinator():
    """Mirrors BrokerMetadataPublisherTest#testExceptionInUpdateCoordinator: an updateCoordinator that throws is
    a (non-fatal) metadata publishing fault naming the failure; the rest of the publish still runs (the
    replica manager got the delta, the deleted partitions were reported) and the next publish works."""
    broker = _PublishingBroker()
    publisher = BrokerMetadataPublisher(broker)

    def failing_update_coordinator(new_image, delta):
        raise RuntimeError("injected failure")

    publisher.update_coordinator = failing_update_coordinator
    faults: list[tuple[str, str]] = []
    handle_fault = publisher.handle_publishing_fault
    publisher.handle_publishing_fault = lambda message, exc: (faults.append((message, str(exc))),
                                                              handle_fault(message, exc))
    delta = MetadataDelta(offsets_image())
    delta.replay(RemoveTopicRecord(topic_id=OFFSETS))
    new_image = delta.apply(MetadataProvenance(11, 1, 0))
    publisher.publish(delta, new_image)
    assert faults == [("Error updating group coordinator with local changes in initial MetadataDelta up to 11",
                       "injected failure")]
    assert publisher.metadata_apply_error_count == 1
    assert broker.images == [new_image] and broker.applied == [delta.topics_delta]
    assert broker.deleted == ["__consumer_offsets-0", "__consumer_offsets-1", "__consumer_offsets-2",
                              "__consumer_offsets-3"]
    # The removed topic's configuration is cleared (the defaults apply again).
    assert broker.topic_configs == [("__consumer_offsets", 1)]
    assert broker.hw_checkpoint_started and not publisher.first_publish
    # The next publish goes through the same steps.
    publisher.publish(MetadataDelta(new_image), new_image)
    assert broker.images == [new_image, new_image] and publisher.metadata_apply_error_count == 1


def test_failure_to_start_the_managers_is_fatal():
    """Mirrors BrokerMetadataPublisher#initializeManagers: a LogManager start-up failure goes to the fatal
    fault handler (the broker stops), not to the publishing one."""
    broker = _PublishingBroker()
    broker.stray_check_fails = True
    publisher = BrokerMetadataPublisher(broker)
    with pytest.raises(FatalFaultError, match="Error starting LogManager"):
        publisher.publish(MetadataDelta(offsets_image()), offsets_image())
    assert publisher.metadata_apply_error_count == 0 and not broker.hw_checkpoint_started


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


# ------------------------------------------------------------------------------ BrokerMetadataListenerTest (Kafka 3.3)

LISTENER_FOO = Uuid(0xAA, 1)


def mock_batch_reader(last_offset: int, append_timestamp: int, records: list) -> BatchReader:
    """RecordTestUtils#mockBatchReader: the records in batches of at most two, epoch 0, ending at ``last_offset``."""
    batches = []
    offset = last_offset - len(records) + 1
    for start in range(0, len(records), 2):
        chunk = tuple(records[start:start + 2])
        batches.append(Batch(offset, 0, append_timestamp, chunk))
        offset += len(chunk)
    return BatchReader(batches)


def registered(broker_id: int, epoch: int, fenced: bool) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(broker_id=broker_id, broker_epoch=epoch, fenced=fenced, rack=None,
                                incarnation_id=Uuid(0xBB, broker_id))


class _Publisher:
    """MetadataPublisher: keeps what it was handed."""

    def __init__(self) -> None:
        self.published: list[tuple[MetadataDelta, MetadataImage]] = []

    def publish(self, delta: MetadataDelta, new_image: MetadataImage) -> None:
        self.published.append((delta, new_image))


@pytest.mark.anyio
async def test_listener_create_and_close():
    """Mirrors BrokerMetadataListenerTest#testCreateAndClose: the event queue's task ends once closed, and a
    commit after that is rejected without loading anything."""
    listener = BrokerMetadataListener(0, Time())
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            listener.close()
    listener.handle_commit(mock_batch_reader(100, 300, [registered(0, 100, False)]))
    assert listener.highest_metadata_offset == -1


@pytest.mark.anyio
async def test_listener_publish():
    """Mirrors BrokerMetadataListenerTest#testPublish (3.3): commits load into the pending delta (the
    published image stays empty, the loaded offset moves); startPublishing hands the publisher that delta
    and an image at the last loaded offset."""
    listener = BrokerMetadataListener(0, Time())
    publisher = _Publisher()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            listener.handle_commit(mock_batch_reader(100, 300, [registered(0, 100, False)]))
            assert await listener.get_image_records().get() == []
            assert listener.highest_metadata_offset == 100
            listener.handle_commit(mock_batch_reader(200, 500, [registered(1, 200, True)]))
            await listener.start_publishing(publisher).wait()
            listener.close()
    [(delta, image)] = publisher.published
    assert image.highest_offset == 200
    assert image.provenance == MetadataProvenance(200, 0, 500)
    assert delta.cluster_delta.broker(0) == BrokerRegistration(0, 100, Uuid(0xBB, 0), fenced=False)
    assert delta.cluster_delta.broker(1) == BrokerRegistration(1, 200, Uuid(0xBB, 1), fenced=True)
    assert listener.image is image


@pytest.mark.anyio
async def test_listener_handle_commits_with_no_snapshotter_defined():
    """Mirrors BrokerMetadataListenerTest#testHandleCommitsWithNoSnapshotterDefined (3.3): brokers registered,
    a topic created, then 10001 commits of a removing-replicas set and clear, all loaded up to their offset."""
    listener = BrokerMetadataListener(0, Time())
    broker_ids = (0, 1, 2, 3)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            for broker_id in broker_ids:
                listener.handle_commit(mock_batch_reader(100, 0, [registered(broker_id, 100, False)]))
            listener.handle_commit(mock_batch_reader(200, 0, [
                TopicRecord(name="foo", topic_id=LISTENER_FOO),
                PartitionRecord(partition_id=0, topic_id=LISTENER_FOO, isr=broker_ids, leader=0, replicas=broker_ids),
            ]))
            await listener.get_image_records().get()
            assert listener.highest_metadata_offset == 200
            for _ in range(10001):
                listener.handle_commit(mock_batch_reader(1000, 0, [
                    PartitionChangeRecord(partition_id=0, topic_id=LISTENER_FOO, removing_replicas=(1,)),
                    PartitionChangeRecord(partition_id=0, topic_id=LISTENER_FOO, removing_replicas=()),
                ]))
            await listener.get_image_records().get()
            assert listener.highest_metadata_offset == 1000
            publisher = _Publisher()
            await listener.start_publishing(publisher).wait()
            # Once published, getImageRecords writes the image: brokers, then the topic and its partition
            # (no feature level at the minimum KRaft metadata.version).
            records = await listener.get_image_records().get()
            listener.close()
    [(_delta, image)] = publisher.published
    partition = image.topics.get_partition(LISTENER_FOO, 0)
    # Each change bumps the partition epoch; the leader never changed.
    assert (partition.removing_replicas, partition.partition_epoch, partition.leader_epoch) == ((), 20002, 0)
    assert sorted(image.cluster.brokers) == [0, 1, 2, 3]
    assert [type(r).__name__ for r in records] == ["RegisterBrokerRecord"] * 4 + ["TopicRecord", "PartitionRecord"]
    assert records[-1] == PartitionRecord(partition_id=0, topic_id=LISTENER_FOO, isr=broker_ids, leader=0,
                                          replicas=broker_ids, partition_epoch=20002)


@pytest.mark.anyio
async def test_listener_bad_records_are_loading_faults():
    """Mirrors the bad-records half of BrokerMetadataListenerTest#testNoSnapshotAfterError (3.3): changes to a
    topic that does not exist go to the metadata loading fault handler (one fault each, counted), loading
    carries on, and later good records still load and publish."""
    listener = BrokerMetadataListener(0, Time())
    bar = Uuid(0xAA, 2)
    broker_ids = (0, 1, 2, 3)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            for broker_id in broker_ids:
                listener.handle_commit(mock_batch_reader(100, 0, [registered(broker_id, 100, False)]))
            listener.handle_commit(mock_batch_reader(200, 0, [
                TopicRecord(name="foo", topic_id=LISTENER_FOO),
                PartitionRecord(partition_id=0, topic_id=LISTENER_FOO, isr=broker_ids, leader=0, replicas=broker_ids),
            ]))
            await listener.get_image_records().get()
            assert (listener.highest_metadata_offset, listener.metadata_load_error_count) == (200, 0)
            listener.handle_commit(mock_batch_reader(1000, 0, [
                PartitionChangeRecord(partition_id=0, topic_id=bar, removing_replicas=(1,)),
                PartitionChangeRecord(partition_id=0, topic_id=bar, removing_replicas=()),
            ]))
            await listener.get_image_records().get()
            assert (listener.highest_metadata_offset, listener.metadata_load_error_count) == (1000, 2)
            listener.handle_commit(mock_batch_reader(2000, 0, [
                PartitionChangeRecord(partition_id=0, topic_id=LISTENER_FOO, removing_replicas=(1,)),
            ]))
            publisher = _Publisher()
            await listener.start_publishing(publisher).wait()
            listener.close()
    [(_delta, image)] = publisher.published
    assert listener.metadata_load_error_count == 2
    assert image.highest_offset == 2000
    assert image.topics.get_partition(LISTENER_FOO, 0).removing_replicas == (1,)
    assert image.topics.get_topic(bar) is None
