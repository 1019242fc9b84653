"""ReplicaManager tests ported from Kafka 3.8's kafka.server.ReplicaManagerTest: the KRaft ones.

These drive ReplicaManager#applyDelta and #getOrCreatePartition with TopicsDelta / MetadataImage
values built the way Kafka's test builds them (``topicsCreateDelta``, ``topicsChangeDelta``,
``topicsDeleteDelta``, ``imageFromTopics``): a TopicsDelta replayed on a TopicsImage, and an
image whose cluster part is ClusterImageTest.IMAGE1 (brokers 0, 1 and 2 on localhost:9092-9094,
broker 0 fenced). Like ``setupReplicaManagerWithMockedPurgatories`` each test wires one broker
without running it (MockTime; the purgatories' timer only moves when a test advances it), and
calls applyDelta directly: the metadata cache is not fed. Where Kafka swaps in a mocked
ReplicaFetcherManager, ``RecordingFetcherManager`` stands in for it: it records the calls,
answers removeFetcherForPartitions with an empty map and runs no fetcher.

tests/test_apply_delta.py holds older, looser versions of some of these (and of the 3.0–3.2
follower path); the ports here follow Kafka 3.8's test bodies.

Not ported:
- every ``enableRemoteStorage = true`` case, and the RemoteLogManager checks of the others
  (``verifyRLMOnLeadershipChange``, ``stopPartitions`` with ``deleteRemoteLog``): tiered storage
  is not modelled; each test below is the ``false`` case.
- testApplyDeltaShouldHandleReplicaAssignedToOnlineDirectory, ...ToUnassignedDirectory,
  ...ToLostDirectory: JBOD directory assignment (DirectoryEventHandler, directory ids in
  PartitionRecord) is not modelled; a broker has one log directory.
- testFullLairDuringKRaftMigration, ...RemovesOld, ...WithTopicRecreations: ZooKeeper-to-KRaft
  migration (full LeaderAndIsr from a KRaft controller) is not modelled.
- the ``directories`` field of the PartitionRecord / PartitionChangeRecord values Kafka's tests
  set (testGetOrCreatePartitionShouldNotCreateOfflinePartition,
  testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath) is left out for the same reason;
  the rest of those tests is ported.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from helpers_replica import Collector, fetch_partition, rm_fetch
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.image.delta import TopicsDelta
from kafka_ref.image.image import ClusterImage, MetadataImage, MetadataProvenance, TopicsImage
from kafka_ref.image.records import (
    NO_LEADER,
    BrokerEndpoint,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.image.registrations import BrokerRegistration
from kafka_ref.log.disk import Disk
from kafka_ref.log.fetch_data import FetchIsolation
from kafka_ref.network.network import Network
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint, InitialFetchState
from kafka_ref.replica.replica_manager import OfflinePartition
from kafka_ref.server.kafka_broker import KafkaBroker

FOO_UUID = Uuid.from_string("fFJBx0OmQG-UqeaT6YaSwA")
BAR_UUID = Uuid.from_string("vApAP6y7Qx23VOfKBzbOBQ")
FOO0 = TopicPartition("foo", 0)
INT_MAX = 2**31 - 1


# ------------------------------------------------------------------------------ Kafka's test fixtures


def cluster_image1() -> ClusterImage:
    """ClusterImageTest.IMAGE1's brokers: 0 (epoch 1000, fenced), 1 (1001) and 2 (123), PLAINTEXT on
    localhost:9092, 9093 and 9094."""
    def registration(broker_id: int, epoch: int, port: int, fenced: bool) -> BrokerRegistration:
        return BrokerRegistration(id=broker_id, epoch=epoch, incarnation_id=Uuid(0, broker_id + 1),
                                  listeners=(BrokerEndpoint(name="PLAINTEXT", host="localhost", port=port),),
                                  fenced=fenced)
    return ClusterImage({0: registration(0, 1000, 9092, True), 1: registration(1, 1001, 9093, False),
                         2: registration(2, 123, 9094, False)})


IMAGE1 = cluster_image1()


def endpoint(broker_id: int) -> BrokerEndPoint:
    """The PLAINTEXT end point IMAGE1 gives a broker, as ReplicaManager's fetchers see it."""
    node = IMAGE1.broker(broker_id).node("PLAINTEXT")
    assert node is not None
    return node


def partition_record(start_id: int, leader: int, partition: int = 0) -> PartitionRecord:
    """ReplicaManagerTest#partitionRecord: replicas and ISR (start_id, start_id + 1), epochs 0."""
    return PartitionRecord(partition_id=partition, topic_id=FOO_UUID, replicas=(start_id, start_id + 1),
                           isr=(start_id, start_id + 1), removing_replicas=(), adding_replicas=(), leader=leader,
                           leader_epoch=0, partition_epoch=0)


def topics_create_delta(start_id: int, is_start_id_leader: bool, partition: int = 0) -> TopicsDelta:
    """ReplicaManagerTest#topicsCreateDelta: topic foo created with one partition led by start_id or start_id + 1."""
    leader = start_id if is_start_id_leader else start_id + 1
    delta = TopicsDelta(TopicsImage())
    delta.replay_topic(TopicRecord(name="foo", topic_id=FOO_UUID))
    delta.replay_partition(partition_record(start_id, leader, partition))
    return delta


def topics_change_delta(topics_image: TopicsImage, start_id: int, is_start_id_leader: bool) -> TopicsDelta:
    """ReplicaManagerTest#topicsChangeDelta: a PartitionChangeRecord for foo-0 naming a leader (so the leader
    epoch moves even when the leader stays)."""
    leader = start_id if is_start_id_leader else start_id + 1
    delta = TopicsDelta(topics_image)
    delta.replay_partition_change(PartitionChangeRecord(partition_id=0, topic_id=FOO_UUID,
                                                        replicas=(start_id, start_id + 1),
                                                        isr=(start_id, start_id + 1), leader=leader))
    return delta


def topics_delete_delta(topics_image: TopicsImage) -> TopicsDelta:
    """ReplicaManagerTest#topicsDeleteDelta: RemoveTopicRecord for foo."""
    delta = TopicsDelta(topics_image)
    delta.replay_remove_topic(RemoveTopicRecord(topic_id=FOO_UUID))
    return delta


def image_from_topics(topics_image: TopicsImage) -> MetadataImage:
    """ReplicaManagerTest#imageFromTopics: provenance (100, 10, 1000), IMAGE1, the given topics."""
    return MetadataImage(provenance=MetadataProvenance(100, 10, 1000), cluster=IMAGE1, topics=topics_image)


class RecordingFetcherManager:
    """Stands in for Kafka's ``mock(classOf[ReplicaFetcherManager])``: records what ReplicaManager asks.

    ``on_remove`` plays Mockito's ``thenAnswer`` for removeFetcherForPartitions; the answer is
    always an empty map, as the tests stub it.
    """

    def __init__(self) -> None:
        self.removed: list[set[TopicPartition]] = []
        self.added: list[dict[TopicPartition, InitialFetchState]] = []
        self.failed: list[TopicPartition] = []
        self.on_remove: Callable[[], None] | None = None

    def reset(self) -> None:
        """Mockito's ``reset``: forget the calls so far."""
        self.removed.clear()
        self.added.clear()
        self.failed.clear()

    def remove_fetcher_for_partitions(self, partitions: Any) -> dict:
        self.removed.append(set(partitions))
        if self.on_remove is not None:
            self.on_remove()
        return {}

    def add_fetcher_for_partitions(self, partition_and_offsets: Any) -> None:
        self.added.append(dict(partition_and_offsets))

    def add_failed_partition(self, topic_partition: TopicPartition) -> None:
        self.failed.append(topic_partition)

    def get_fetcher(self, topic_partition: TopicPartition) -> None:
        return None

    def shutdown_idle_fetcher_threads(self) -> None:
        """Nothing runs."""

    def shutdown(self) -> None:
        """Nothing runs."""


def setup(broker_id: int, *, fetcher_manager: RecordingFetcherManager | None = None,
          broker_version: str | None = None) -> tuple[KafkaBroker, Any]:
    """Mirrors ReplicaManagerTest#setupReplicaManagerWithMockedPurgatories for the KRaft tests: a broker
    wired in KRaft mode but not running; ``fetcher_manager`` replaces the ReplicaFetcherManager."""
    props: dict[str, Any] = {"broker.id": broker_id, "node.id": broker_id}
    if broker_version is not None:
        props.update({"kafka_ref.broker.version": broker_version, "inter.broker.protocol.version": broker_version})
    broker = KafkaBroker(broker_id, KafkaConfig(props), Network(), Disk(broker_id), time=MockTime(),
                         kraft_controller=3000)
    rm = broker.replica_manager
    if fetcher_manager is not None:
        rm.replica_fetcher_manager = fetcher_manager
    return broker, rm


def apply(rm: Any, delta: TopicsDelta) -> MetadataImage:
    """``replicaManager.applyDelta(delta, imageFromTopics(delta.apply()))``; returns the image."""
    image = image_from_topics(delta.apply())
    rm.apply_delta(delta, image)
    return image


def send_producer_append(rm: Any, tp: TopicPartition, num_of_records: int) -> Collector:
    """Mirrors ReplicaManagerTest#sendProducerAppend: values "0".."n-1", acks=-1, timeout 10 ms."""
    records = MemoryRecords.with_records([SimpleRecord(None, str(i).encode()) for i in range(num_of_records)])
    collector = Collector()
    rm.append_records(10, -1, False, "client", {tp: records}, collector)
    return collector


def fetch_partition_as_follower(rm: Any, tp: TopicPartition, fetch_offset: int, replica_id: int, *,
                                max_wait_ms: int = 0, min_bytes: int = 1) -> Collector:
    """Mirrors ReplicaManagerTest#fetchPartitionAsFollower with PartitionData(fetchOffset, logStartOffset 0,
    maxBytes Int.MaxValue, no leader epoch) and FetchParams(replicaEpoch 1, maxBytes 1 MiB, LOG_END)."""
    params = FetchParams(replica_id=replica_id, replica_epoch=1, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                         max_bytes=1024 * 1024, isolation=FetchIsolation.LOG_END)
    return rm_fetch(rm, params, (tp, fetch_partition(fetch_offset, log_start_offset=0, max_bytes=INT_MAX)),
                    topic_ids={tp.topic: FOO_UUID})


def only(collector: Collector, tp: TopicPartition = FOO0) -> Any:
    """The fetch callback's one answer (Kafka's fetchPartition asserts there is exactly one)."""
    assert collector.calls == 1
    assert [t for t, _ in collector.value] == [tp]
    return collector.value[0][1]


def online(rm: Any, tp: TopicPartition = FOO0) -> Any:
    """``val HostedPartition.Online(partition) = replicaManager.getPartition(tp)``."""
    partition = rm.online_partition(tp)
    assert partition is not None, f"{tp} is not hosted online: {rm.get_partition(tp)!r}"
    return partition


def fetcher_leader(rm: Any, tp: TopicPartition = FOO0) -> BrokerEndPoint | None:
    """``replicaManager.replicaFetcherManager.getFetcher(tp).map(_.leader.brokerEndPoint())``."""
    fetcher = rm.replica_fetcher_manager.get_fetcher(tp)
    return None if fetcher is None else fetcher.leader.broker_end_point()


# ------------------------------------------------------------------------------ getOrCreatePartition


def test_get_or_create_partition():
    """Mirrors ReplicaManagerTest#testGetOrCreatePartition.

    A new partition is created once; the same object comes back. A partition hosted Offline with
    no Partition object behind it is created anew (Kafka 3.7+), but once an online partition of
    topic bar goes offline, a delta naming bar's id leaves it offline.
    """
    broker, rm = setup(0)
    empty_delta = TopicsDelta(TopicsImage())
    foo_part, foo_new = rm.get_or_create_partition(FOO0, empty_delta, FOO_UUID)
    assert foo_new is True
    assert foo_part.topic_partition == FOO0
    foo_part2, foo_new2 = rm.get_or_create_partition(FOO0, empty_delta, FOO_UUID)
    assert foo_new2 is False
    assert foo_part2 is foo_part
    bar1 = TopicPartition("bar", 1)
    rm.mark_partition_offline(bar1)
    bar_part, bar_new = rm.get_or_create_partition(bar1, empty_delta, BAR_UUID)
    assert bar_new is True
    assert bar_part.topic_partition == bar1
    # Kafka mocks the log manager into holding a bar-1 log with bar's id; here the log is real.
    broker.log_manager.get_or_create_log(bar1, is_new=True, topic_id=BAR_UUID)
    rm.mark_partition_offline(bar1)
    assert rm.get_or_create_partition(bar1, empty_delta, BAR_UUID) is None
    hosted = rm.get_partition(bar1)
    assert isinstance(hosted, OfflinePartition) and hosted.partition is bar_part


@pytest.mark.parametrize("broker_version, recreated", [("3.6", False), ("3.7", True), (None, True)])
def test_get_or_create_partition_over_an_offline_partition_by_version(broker_version, recreated):
    """ReplicaManager#getOrCreatePartition over a partition hosted Offline with no Partition object: 3.0–3.6
    answered None whatever the topic id; 3.7 (KAFKA-16157) and 3.8 host a new partition there."""
    _, rm = setup(0, broker_version=broker_version)
    bar1 = TopicPartition("bar", 1)
    rm.mark_partition_offline(bar1)
    found = rm.get_or_create_partition(bar1, TopicsDelta(TopicsImage()), BAR_UUID)
    if recreated:
        partition, is_new = found
        assert is_new is True and rm.get_partition(bar1) is partition
    else:
        assert found is None
        assert isinstance(rm.get_partition(bar1), OfflinePartition)


def test_get_or_create_partition_should_not_create_offline_partition():
    """Mirrors ReplicaManagerTest#testGetOrCreatePartitionShouldNotCreateOfflinePartition.

    The partition made leader (epoch 1, replicas and ISR {1, 2}) goes offline; the same delta
    asking for it again gets nothing: the offline partition keeps foo's id (Kafka 3.8 remembers
    the id it was created with, KAFKA-16234), so it is not recreated.
    """
    local_id = 1
    _, rm = setup(local_id)
    leader_topics_delta = topics_create_delta(local_id, True, partition=0)
    partition, is_new_when_created_for_first_time = rm.get_or_create_partition(FOO0, leader_topics_delta, FOO_UUID)
    state = LeaderAndIsrPartitionState(topic_name="test-topic", partition_index=0, controller_epoch=0, leader=local_id,
                                       leader_epoch=1, isr=(1, 2), partition_epoch=0, replicas=(1, 2), is_new=False)
    partition.make_leader(state, rm.high_watermark_checkpoints(), None)
    assert is_new_when_created_for_first_time is True
    rm.mark_partition_offline(FOO0)
    assert rm.get_or_create_partition(FOO0, leader_topics_delta, FOO_UUID) is None
    hosted = rm.get_partition(FOO0)
    assert isinstance(hosted, OfflinePartition) and hosted.partition.topic_id == FOO_UUID


# ------------------------------------------------------------------------------ applyDelta: leader <-> follower


def test_delta_from_leader_to_follower():
    """Mirrors ReplicaManagerTest#testDeltaFromLeaderToFollower (enableRemoteStorage = false).

    Leader at epoch 0 with ISR {1, 2}: an acks=-1 produce of 3 records completes once broker 2
    fetches at offset 3. The change delta makes broker 2 leader (epoch 1): produce is refused
    with NOT_LEADER_OR_FOLLOWER and a fetcher points at broker 2's PLAINTEXT end point.
    """
    local_id, other_id, num_of_records = 1, 2, 3
    _, rm = setup(local_id)
    leader_metadata_image = apply(rm, topics_create_delta(local_id, True))
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 0
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    leader_response = send_producer_append(rm, FOO0, num_of_records)
    fetch_partition_as_follower(rm, FOO0, num_of_records, other_id)
    assert leader_response.calls == 1 and leader_response.value[FOO0].error is Errors.NONE
    apply(rm, topics_change_delta(leader_metadata_image.topics, local_id, False))
    follower_response = send_producer_append(rm, FOO0, num_of_records)
    assert follower_response.value[FOO0].error is Errors.NOT_LEADER_OR_FOLLOWER
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 1
    assert fetcher_leader(rm) == BrokerEndPoint(other_id, "localhost", 9094) == endpoint(other_id)


def test_delta_from_follower_to_leader():
    """Mirrors ReplicaManagerTest#testDeltaFromFollowerToLeader (enableRemoteStorage = false).

    As follower of broker 2 (epoch 0) produce is refused; after the change delta makes broker 1
    leader at epoch 1, an acks=-1 produce completes once broker 2 fetches at offset 3, the ISR
    is {1, 2} and no fetcher is left.
    """
    local_id, other_id, num_of_records = 1, 2, 3
    _, rm = setup(local_id)
    follower_metadata_image = apply(rm, topics_create_delta(local_id, False))
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 0
    assert fetcher_leader(rm) == endpoint(other_id)
    follower_response = send_producer_append(rm, FOO0, num_of_records)
    assert follower_response.value[FOO0].error is Errors.NOT_LEADER_OR_FOLLOWER
    apply(rm, topics_change_delta(follower_metadata_image.topics, local_id, True))
    leader_response = send_producer_append(rm, FOO0, num_of_records)
    fetch_partition_as_follower(rm, FOO0, num_of_records, other_id)
    assert leader_response.calls == 1 and leader_response.value[FOO0].error is Errors.NONE
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 1
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None


def test_delta_follower_with_no_change():
    """Mirrors ReplicaManagerTest#testDeltaFollowerWithNoChange (enableRemoteStorage = false): the same
    creation delta applied twice leaves the follower at epoch 0 fetching from broker 2."""
    local_id, other_id = 1, 2
    _, rm = setup(local_id)
    follower_topics_delta = topics_create_delta(local_id, False)
    follower_metadata_image = image_from_topics(follower_topics_delta.apply())
    rm.apply_delta(follower_topics_delta, follower_metadata_image)
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 0
    fetcher = rm.replica_fetcher_manager.get_fetcher(FOO0)
    assert fetcher_leader(rm) == endpoint(other_id)
    rm.apply_delta(follower_topics_delta, follower_metadata_image)
    no_change_partition = online(rm)
    assert no_change_partition is follower_partition
    assert not no_change_partition.is_leader
    assert no_change_partition.get_leader_epoch() == 0
    assert fetcher_leader(rm) == endpoint(other_id)
    # Not a new leader epoch: the fetcher was not restarted.
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is fetcher


# ------------------------------------------------------------------------------ applyDelta: removal and deletion


def test_delta_follower_to_not_replica():
    """Mirrors ReplicaManagerTest#testDeltaFollowerToNotReplica (enableRemoteStorage = false): the change
    delta moves foo-0 to replicas {2, 3}; the follower's partition, fetcher and log are gone."""
    local_id, other_id = 1, 2
    broker, rm = setup(local_id)
    follower_metadata_image = apply(rm, topics_create_delta(local_id, False))
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 0
    assert fetcher_leader(rm) == endpoint(other_id)
    apply(rm, topics_change_delta(follower_metadata_image.topics, other_id, True))
    assert rm.get_partition(FOO0) is None
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    assert broker.log_manager.get_log(FOO0) is None


def test_delta_follower_removed_topic():
    """Mirrors ReplicaManagerTest#testDeltaFollowerRemovedTopic (enableRemoteStorage = false)."""
    local_id, other_id = 1, 2
    broker, rm = setup(local_id)
    follower_metadata_image = apply(rm, topics_create_delta(local_id, False))
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 0
    assert fetcher_leader(rm) == endpoint(other_id)
    apply(rm, topics_delete_delta(follower_metadata_image.topics))
    assert rm.get_partition(FOO0) is None
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    assert broker.log_manager.get_log(FOO0) is None


def test_delta_leader_to_not_replica():
    """Mirrors ReplicaManagerTest#testDeltaLeaderToNotReplica (enableRemoteStorage = false)."""
    local_id, other_id = 1, 2
    broker, rm = setup(local_id)
    leader_metadata_image = apply(rm, topics_create_delta(local_id, True))
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 0
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    apply(rm, topics_change_delta(leader_metadata_image.topics, other_id, True))
    assert rm.get_partition(FOO0) is None
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    assert broker.log_manager.get_log(FOO0) is None


def test_delta_leader_to_removed_topic():
    """Mirrors ReplicaManagerTest#testDeltaLeaderToRemovedTopic (enableRemoteStorage = false)."""
    local_id, other_id = 1, 2
    broker, rm = setup(local_id)
    leader_metadata_image = apply(rm, topics_create_delta(local_id, True))
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 0
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    apply(rm, topics_delete_delta(leader_metadata_image.topics))
    assert rm.get_partition(FOO0) is None
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    assert broker.log_manager.get_log(FOO0) is None


# ------------------------------------------------------------------------------ applyDelta: delayed operations


def test_delta_to_follower_completes_produce():
    """Mirrors ReplicaManagerTest#testDeltaToFollowerCompletesProduce (enableRemoteStorage = false): an
    acks=-1 produce parked on the leader is answered NOT_LEADER_OR_FOLLOWER when it becomes a follower."""
    local_id, other_id, num_of_records = 1, 2, 3
    _, rm = setup(local_id)
    leader_metadata_image = apply(rm, topics_create_delta(local_id, True))
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 0
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    leader_response = send_producer_append(rm, FOO0, num_of_records)
    assert leader_response.calls == 0
    apply(rm, topics_change_delta(leader_metadata_image.topics, local_id, False))
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 1
    assert leader_response.calls == 1
    assert leader_response.value[FOO0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_delta_to_follower_completes_fetch():
    """Mirrors ReplicaManagerTest#testDeltaToFollowerCompletesFetch (enableRemoteStorage = false): broker 2's
    fetch at offset 0 (min bytes Int.MaxValue, max wait 1000 ms) waits, and is answered
    NOT_LEADER_OR_FOLLOWER when the leader becomes a follower."""
    local_id, other_id = 1, 2
    _, rm = setup(local_id)
    leader_metadata_image = apply(rm, topics_create_delta(local_id, True))
    leader_partition = online(rm)
    assert leader_partition.is_leader
    assert set(leader_partition.in_sync_replica_ids) == {local_id, other_id}
    assert leader_partition.get_leader_epoch() == 0
    assert rm.replica_fetcher_manager.get_fetcher(FOO0) is None
    fetch_callback = fetch_partition_as_follower(rm, FOO0, 0, other_id, min_bytes=INT_MAX, max_wait_ms=1000)
    assert not fetch_callback.done
    apply(rm, topics_change_delta(leader_metadata_image.topics, local_id, False))
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 1
    assert only(fetch_callback).error is Errors.NOT_LEADER_OR_FOLLOWER


# ------------------------------------------------------------------------------ applyDelta: storage errors


@pytest.mark.parametrize("is_start_id_leader", [True, False])
def test_delta_to_leader_or_follower_marks_partition_offline_if_log_cant_be_created(is_start_id_leader):
    """Mirrors ReplicaManagerTest#testDeltaToLeaderOrFollowerMarksPartitionOfflineIfLogCantBeCreated.

    Kafka deletes the data directory; here the broker's only log directory fails. Leader or
    follower, the partition is hosted Offline and the Partition behind it still knows foo's id.
    """
    local_id = 1
    broker, rm = setup(local_id)
    broker.disk.mark_offline("data directory deleted")
    apply(rm, topics_create_delta(local_id, is_start_id_leader))
    hosted_partition = rm.get_partition(FOO0)
    assert type(hosted_partition) is OfflinePartition
    assert hosted_partition.partition is not None and hosted_partition.partition.topic_id == FOO_UUID


# ------------------------------------------------------------------------------ applyDelta: fetcher restarts


def test_delta_follower_stop_fetcher_before_creating_initial_fetch_offset():
    """Mirrors ReplicaManagerTest#testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset
    (enableRemoteStorage = false).

    The follower starts fetching from broker 2 at offset 0, epoch 0. On the next leader epoch the
    (recorded) fetcher manager writes one record at leader epoch 0 while its fetcher is being
    removed: the new fetcher starts after it, at offset 1, epoch 1 — the initial offset is
    computed only once the old fetcher is gone.
    """
    local_id, other_id = 1, 2
    manager = RecordingFetcherManager()
    _, rm = setup(local_id, fetcher_manager=manager)
    follower_topics_delta = topics_create_delta(local_id, False)
    follower_metadata_image = apply(rm, follower_topics_delta)
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 0
    assert follower_partition.local_log_or_exception.log_end_offset == 0
    leader = BrokerEndPoint(other_id, "localhost", 9094)
    assert manager.added == [{FOO0: InitialFetchState(topic_id=FOO_UUID, leader=leader, current_leader_epoch=0,
                                                      init_offset=0)}]

    def fetcher_writes_before_it_stops() -> None:
        partition = rm.online_partition(FOO0)
        if partition is not None:
            partition.append_records_to_follower_or_future_replica(
                MemoryRecords.with_records([SimpleRecord(None, b"first message")], partition_leader_epoch=0),
                is_future=False)

    manager.on_remove = fetcher_writes_before_it_stops
    apply(rm, topics_change_delta(follower_metadata_image.topics, local_id, False))
    assert not follower_partition.is_leader
    assert follower_partition.get_leader_epoch() == 1
    assert follower_partition.local_log_or_exception.log_end_offset == 1
    assert manager.removed == [{FOO0}, {FOO0}]
    assert manager.added[1] == {FOO0: InitialFetchState(topic_id=FOO_UUID, leader=leader, current_leader_epoch=1,
                                                        init_offset=1)}
    assert len(manager.added) == 2


def test_fetcher_are_not_restarted_if_leader_epoch_is_not_bumped_with_kraft_path():
    """Mirrors ReplicaManagerTest#testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath
    (enableRemoteStorage = false).

    Broker 0 follows broker 1 (epochs 0/0): the fetcher is removed and added once. A change that
    adds replica 2 bumps only the partition epoch (1): the fetchers are left alone. A change that
    makes broker 2 leader bumps the leader epoch (1, partition epoch 2): the fetcher is removed
    and added towards broker 2, from offset 0.
    """
    local_id = 0
    manager = RecordingFetcherManager()
    _, rm = setup(local_id, fetcher_manager=manager)
    follower_topics_delta = TopicsDelta(TopicsImage())
    follower_topics_delta.replay_topic(TopicRecord(name="foo", topic_id=FOO_UUID))
    follower_topics_delta.replay_partition(partition_record(local_id, local_id + 1))
    follower_metadata_image = apply(rm, follower_topics_delta)
    follower_partition = online(rm)
    assert not follower_partition.is_leader
    assert (follower_partition.get_leader_epoch(), follower_partition.get_partition_epoch()) == (0, 0)
    assert manager.removed == [{FOO0}]
    assert manager.added == [{FOO0: InitialFetchState(topic_id=FOO_UUID, leader=endpoint(local_id + 1),
                                                      current_leader_epoch=0, init_offset=0)}]
    assert endpoint(local_id + 1) == BrokerEndPoint(1, "localhost", 9093)
    manager.reset()
    # Partition epoch only.
    follower_topics_delta = TopicsDelta(follower_metadata_image.topics)
    follower_topics_delta.replay_partition_change(PartitionChangeRecord(
        partition_id=0, topic_id=FOO_UUID, replicas=(local_id, local_id + 1, local_id + 2),
        isr=(local_id, local_id + 1)))
    follower_metadata_image = apply(rm, follower_topics_delta)
    assert not follower_partition.is_leader
    assert (follower_partition.get_leader_epoch(), follower_partition.get_partition_epoch()) == (0, 1)
    assert (manager.removed, manager.added) == ([], [])
    manager.reset()
    # Leader epoch too.
    follower_topics_delta = TopicsDelta(follower_metadata_image.topics)
    follower_topics_delta.replay_partition_change(PartitionChangeRecord(
        partition_id=0, topic_id=FOO_UUID, replicas=(local_id, local_id + 1, local_id + 2),
        isr=(local_id, local_id + 1, local_id + 2), leader=local_id + 2))
    apply(rm, follower_topics_delta)
    assert not follower_partition.is_leader
    assert (follower_partition.get_leader_epoch(), follower_partition.get_partition_epoch()) == (1, 2)
    assert manager.removed == [{FOO0}]
    assert manager.added == [{FOO0: InitialFetchState(topic_id=FOO_UUID, leader=BrokerEndPoint(2, "localhost", 9094),
                                                      current_leader_epoch=1, init_offset=0)}]


# ------------------------------------------------------------------------------ applyDelta: controlled shutdown


def test_replicas_are_stopped_while_in_controlled_shutdown_with_kraft():
    """Mirrors ReplicaManagerTest#testReplicasAreStoppedWhileInControlledShutdownWithKRaft
    (enableRemoteStorage = false).

    foo-0 follows in the ISR, foo-1 leads alone, foo-2 follows outside the ISR. The broker goes
    SHUTTING_DOWN (no effect in KRaft mode) and begins its controlled shutdown; the controller
    shrinks foo-0's ISR and sets foo-1's leader to NO_LEADER. Both become followers at leader
    epoch 1 / partition epoch 1 and their fetchers are removed in one call (stopPartitions,
    logs kept); foo-2 is untouched.
    """
    local_id = 0
    foo1, foo2 = TopicPartition("foo", 1), TopicPartition("foo", 2)
    manager = RecordingFetcherManager()
    broker, rm = setup(local_id, fetcher_manager=manager)
    topics_delta = TopicsDelta(TopicsImage())
    topics_delta.replay_topic(TopicRecord(name="foo", topic_id=FOO_UUID))
    # foo-0: a follower in the ISR.
    topics_delta.replay_partition(PartitionRecord(partition_id=0, topic_id=FOO_UUID, replicas=(local_id, local_id + 1),
                                                  isr=(local_id, local_id + 1), leader=local_id + 1, leader_epoch=0,
                                                  partition_epoch=0))
    # foo-1: the leader, alone in the ISR.
    topics_delta.replay_partition(PartitionRecord(partition_id=1, topic_id=FOO_UUID, replicas=(local_id, local_id + 1),
                                                  isr=(local_id,), leader=local_id, leader_epoch=0, partition_epoch=0))
    # foo-2: a follower out of the ISR.
    topics_delta.replay_partition(PartitionRecord(partition_id=2, topic_id=FOO_UUID, replicas=(local_id, local_id + 1),
                                                  isr=(local_id + 1,), leader=local_id + 1, leader_epoch=0,
                                                  partition_epoch=0))
    metadata_image = apply(rm, topics_delta)
    foo_partition0, foo_partition1, foo_partition2 = online(rm, FOO0), online(rm, foo1), online(rm, foo2)
    assert [(p.is_leader, p.get_leader_epoch(), p.get_partition_epoch())
            for p in (foo_partition0, foo_partition1, foo_partition2)] == [(False, 0, 0), (True, 0, 0), (False, 0, 0)]
    manager.reset()
    rm.is_shutting_down = True
    rm.begin_controlled_shutdown()
    topics_delta = TopicsDelta(metadata_image.topics)
    topics_delta.replay_partition_change(PartitionChangeRecord(partition_id=0, topic_id=FOO_UUID,
                                                               replicas=(local_id, local_id + 1), isr=(local_id + 1,),
                                                               leader=local_id + 1))
    topics_delta.replay_partition_change(PartitionChangeRecord(partition_id=1, topic_id=FOO_UUID,
                                                               replicas=(local_id, local_id + 1), isr=(local_id,),
                                                               leader=NO_LEADER))
    apply(rm, topics_delta)
    states = [(p.is_leader, p.get_leader_epoch(), p.get_partition_epoch())
              for p in (foo_partition0, foo_partition1, foo_partition2)]
    # foo-0 and foo-1 moved on; foo-2 did not.
    assert states == [(False, 1, 1), (False, 1, 1), (False, 0, 0)]
    assert manager.removed == [{FOO0, foo1}]
    assert manager.added == []
    # stopPartitions without deleteLocalLog: still hosted, logs kept.
    assert [rm.online_partition(tp) for tp in (FOO0, foo1, foo2)] == [foo_partition0, foo_partition1, foo_partition2]
    assert all(broker.log_manager.get_log(tp) is not None for tp in (FOO0, foo1, foo2))
