"""kafka.server.MetadataCacheTest (Kafka 3.8): the broker's metadata cache, ZooKeeper and KRaft.

The parametrized Kafka cases run on both caches: the ZooKeeper one (kafka_ref/server/metadata_cache.py)
takes the UpdateMetadata request as it is, the KRaft one (kafka_ref/server/metadata/kraft_metadata_cache.py)
gets an image built the way Kafka's test helper builds it: the request's live brokers become
RegisterBrokerRecords (unfenced, replayed over an image without brokers but with the previous
topics), each topic a TopicRecord with one PartitionRecord per partition, or a RemoveTopicRecord
for a partition marked LeaderDuringDelete. Kafka's MetadataCache.getTopicMetadata takes a set of
names and a ListenerName; here it takes a list and the listener's name.

Not ported:
- testGetClusterMetadataWithOfflineReplicas: kafka_ref has no client-side Cluster/PartitionInfo
  model for getClusterMetadata to build.
- testGetTopicMetadataForDescribeTopicPartitionsResponse: DescribeTopicPartitions and eligible
  leader replicas (KIP-966) are not modelled.
- testGetOfflineReplicasConsidersDirAssignment: log directories (JBOD, directory assignment) are
  not modelled.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.abstract import ControlRequestType
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.image.delta import MetadataDelta
from kafka_ref.image.image import ClusterImage, MetadataImage, MetadataProvenance
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_ref.server.metadata_cache import (
    MetadataCache,
    MetadataSnapshot,
    create_deletion_entries,
    transform_kraft_controller_full_metadata_request,
)

PLAINTEXT = "PLAINTEXT"
SSL = "SSL"
# SecurityProtocol ids.
PLAINTEXT_ID = 0
SSL_ID = 1
BROKER_EPOCH = 0
NO_LEADER_ID = -1


@pytest.fixture(params=["zk", "kraft"])
def cache(request):
    """MetadataCacheTest#cacheProvider: a ZooKeeper cache and a KRaft cache for broker 1."""
    return MetadataCache(1) if request.param == "zk" else KRaftMetadataCache(1)


def endpoint(host: str, port: int, listener: str = PLAINTEXT) -> UpdateMetadataEndpoint:
    return UpdateMetadataEndpoint(host=host, port=port, listener=listener,
                                  security_protocol=SSL_ID if listener == SSL else PLAINTEXT_ID)


def broker(broker_id: int, *endpoints: UpdateMetadataEndpoint, rack: str | None = "") -> UpdateMetadataBroker:
    return UpdateMetadataBroker(id=broker_id, endpoints=tuple(endpoints), rack=rack)


def part(topic: str, index: int, leader: int, leader_epoch: int, isr, replicas, controller_epoch: int = 1,
         zk_version: int = 3, offline=()) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(topic_name=topic, partition_index=index, controller_epoch=controller_epoch,
                                        leader=leader, leader_epoch=leader_epoch, isr=tuple(isr), zk_version=zk_version,
                                        replicas=tuple(replicas), offline_replicas=tuple(offline))


def umr(partition_states, brokers, topic_ids=None, controller_id: int = 2, controller_epoch: int = 1,
        is_kraft_controller: bool = False, update_type: ControlRequestType = ControlRequestType.UNKNOWN,
        version: int = 8) -> UpdateMetadataRequest:
    """UpdateMetadataRequest.Builder: partition states grouped by topic, in order, each topic with
    its id from ``topic_ids`` (zero when absent)."""
    topic_ids = topic_ids or {}
    grouped: dict[str, list[UpdateMetadataPartitionState]] = {}
    for state in partition_states:
        grouped.setdefault(state.topic_name, []).append(state)
    return UpdateMetadataRequest(
        controller_id=controller_id, controller_epoch=controller_epoch, broker_epoch=BROKER_EPOCH,
        is_kraft_controller=is_kraft_controller, type=int(update_type), version=version,
        topic_states=tuple(UpdateMetadataTopicState(topic_name=name, topic_id=topic_ids.get(name, ZERO_UUID),
                                                    partition_states=tuple(states)) for name, states in grouped.items()),
        live_brokers=tuple(brokers),
    )


def update_cache(cache, request: UpdateMetadataRequest, records=()) -> None:
    """MetadataCacheTest$#updateCache."""
    if isinstance(cache, MetadataCache):
        cache.update_metadata(0, request)
        return
    image = cache.current_image()
    # Every live broker is in the request, but maybe not every partition: start from the old
    # topics and no brokers.
    partial = MetadataImage(MetadataProvenance(100, 10, 1000), image.features, ClusterImage(), image.topics,
                            image.configs, image.producer_ids)
    delta = MetadataDelta(partial)
    for b in request.live_brokers:
        previous = image.cluster.broker(b.id)
        delta.replay(RegisterBrokerRecord(
            broker_id=b.id,
            broker_epoch=previous.epoch if previous is not None else 0,
            incarnation_id=previous.incarnation_id if previous is not None else ZERO_UUID,
            end_points=tuple(BrokerEndpoint(name=e.listener, host=e.host, port=e.port, security_protocol=e.security_protocol)
                             for e in b.endpoints),
            rack=b.rack,
            fenced=previous.fenced if previous is not None else False,
        ))
    for topic in request.topic_states:
        delta.replay(TopicRecord(name=topic.topic_name, topic_id=topic.topic_id))
        for p in topic.partition_states:
            if p.leader == -2:
                delta.replay(RemoveTopicRecord(topic_id=topic.topic_id))
            else:
                delta.replay(PartitionRecord(partition_id=p.partition_index, topic_id=topic.topic_id,
                                             replicas=tuple(p.replicas), isr=tuple(p.isr), leader=p.leader,
                                             leader_epoch=p.leader_epoch, partition_epoch=p.zk_version))
    for record in records:
        delta.replay(record)
    cache.set_image(delta.apply(MetadataProvenance(100, 10, 1000)))


def test_get_topic_metadata_non_existing_topics(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataNonExistingTopics."""
    assert cache.get_topic_metadata(["topic"], listener_name=PLAINTEXT).topics == ()


def test_get_topic_metadata(cache):
    """Mirrors MetadataCacheTest#getTopicMetadata."""
    topic0, topic1 = "topic-0", "topic-1"
    brokers = [broker(b, endpoint(f"foo-{b}", 9092, PLAINTEXT), endpoint(f"foo-{b}", 9093, SSL), rack="rack1")
               for b in range(5)]
    states = [
        part(topic0, 0, leader=0, leader_epoch=0, isr=[0, 1, 3], replicas=[0, 1, 3]),
        part(topic0, 1, leader=1, leader_epoch=1, isr=[1, 0], replicas=[1, 2, 0, 4]),
        part(topic1, 0, leader=2, leader_epoch=2, isr=[2, 1], replicas=[2, 1, 3]),
    ]
    topic_ids = {topic0: Uuid(11, 1), topic1: Uuid(11, 2)}
    update_cache(cache, umr(states, brokers, topic_ids))

    for listener in (PLAINTEXT, SSL):
        for topic in (topic0, topic1):
            [metadata] = cache.get_topic_metadata([topic], listener_name=listener).topics
            assert metadata.error_code == Errors.NONE.code
            assert metadata.name == topic
            assert metadata.topic_id == topic_ids[topic]
            expected = [s for s in states if s.topic_name == topic]
            assert [p.partition_index for p in metadata.partitions] == [s.partition_index for s in expected]
            for p, s in zip(metadata.partitions, expected):
                assert p.error_code == Errors.NONE.code
                assert p.leader_id == s.leader
                assert p.leader_epoch == s.leader_epoch
                assert p.isr_nodes == s.isr
                assert p.replica_nodes == s.replicas


def verify_leader_or_endpoint_not_available(cache, brokers, listener: str, leader: int, expected_error: Errors,
                                            error_unavailable_listeners: bool) -> None:
    """MetadataCacheTest#verifyTopicMetadataPartitionLeaderOrEndpointNotAvailable."""
    update_cache(cache, umr([part("topic", 0, leader=leader, leader_epoch=1, isr=[0], replicas=[0])], brokers))
    [metadata] = cache.get_topic_metadata(["topic"], error_unavailable_listeners=error_unavailable_listeners,
                                          listener_name=listener).topics
    assert metadata.error_code == Errors.NONE.code
    [p] = metadata.partitions
    assert p.partition_index == 0
    assert p.error_code == expected_error.code
    assert p.leader_id == NO_LEADER_ID
    assert p.isr_nodes == (0,)
    assert p.replica_nodes == (0,)


def test_get_topic_metadata_partition_leader_not_available(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataPartitionLeaderNotAvailable."""
    brokers = [broker(0, endpoint("foo", 9092))]
    # Leader 1 is not a live broker: LEADER_NOT_AVAILABLE whatever the version.
    verify_leader_or_endpoint_not_available(cache, brokers, PLAINTEXT, 1, Errors.LEADER_NOT_AVAILABLE, False)
    verify_leader_or_endpoint_not_available(cache, brokers, PLAINTEXT, 1, Errors.LEADER_NOT_AVAILABLE, True)


def test_get_topic_metadata_partition_listener_not_available_on_leader(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataPartitionListenerNotAvailableOnLeader."""
    brokers = [broker(0, endpoint("host0", 9092, PLAINTEXT), endpoint("host0", 9093, SSL)),
               broker(1, endpoint("host1", 9092, PLAINTEXT))]
    # Leader 1 is alive but has no SSL listener: LISTENER_NOT_FOUND from version 6, else LEADER_NOT_AVAILABLE.
    verify_leader_or_endpoint_not_available(cache, brokers, SSL, 1, Errors.LISTENER_NOT_FOUND, True)
    verify_leader_or_endpoint_not_available(cache, brokers, SSL, 1, Errors.LEADER_NOT_AVAILABLE, False)


def test_get_topic_metadata_replica_not_available(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataReplicaNotAvailable."""
    # Replica 1 has no live broker.
    update_cache(cache, umr([part("topic", 0, leader=0, leader_epoch=0, isr=[0], replicas=[0, 1])],
                            [broker(0, endpoint("foo", 9092))]))

    [metadata] = cache.get_topic_metadata(["topic"], error_unavailable_endpoints=False, listener_name=PLAINTEXT).topics
    assert metadata.error_code == Errors.NONE.code
    [p] = metadata.partitions
    assert (p.partition_index, p.error_code) == (0, Errors.NONE.code)
    assert set(p.replica_nodes) == {0, 1}
    assert set(p.isr_nodes) == {0}

    [metadata] = cache.get_topic_metadata(["topic"], error_unavailable_endpoints=True, listener_name=PLAINTEXT).topics
    assert metadata.error_code == Errors.NONE.code
    [p] = metadata.partitions
    assert (p.partition_index, p.error_code) == (0, Errors.REPLICA_NOT_AVAILABLE.code)
    assert set(p.replica_nodes) == {0}
    assert set(p.isr_nodes) == {0}


def test_get_topic_metadata_isr_not_available(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataIsrNotAvailable."""
    # ISR member 1 has no live broker.
    update_cache(cache, umr([part("topic", 0, leader=0, leader_epoch=0, isr=[0, 1], replicas=[0])],
                            [broker(0, endpoint("foo", 9092), rack="rack1")]))

    [metadata] = cache.get_topic_metadata(["topic"], error_unavailable_endpoints=False, listener_name=PLAINTEXT).topics
    assert metadata.error_code == Errors.NONE.code
    [p] = metadata.partitions
    assert (p.partition_index, p.error_code) == (0, Errors.NONE.code)
    assert set(p.replica_nodes) == {0}
    assert set(p.isr_nodes) == {0, 1}

    [metadata] = cache.get_topic_metadata(["topic"], error_unavailable_endpoints=True, listener_name=PLAINTEXT).topics
    assert metadata.error_code == Errors.NONE.code
    [p] = metadata.partitions
    assert (p.partition_index, p.error_code) == (0, Errors.REPLICA_NOT_AVAILABLE.code)
    assert set(p.replica_nodes) == {0}
    assert set(p.isr_nodes) == {0}


def test_get_topic_metadata_with_non_supported_security_protocol(cache):
    """Mirrors MetadataCacheTest#getTopicMetadataWithNonSupportedSecurityProtocol."""
    update_cache(cache, umr([part("topic", 0, leader=0, leader_epoch=0, isr=[0, 1], replicas=[0])],
                            [broker(0, endpoint("foo", 9092), rack="")]))
    [metadata] = cache.get_topic_metadata(["topic"], listener_name=SSL).topics
    [p] = metadata.partitions
    # The leader has no SSL endpoint: no leader (-1, Kafka compares with NO_PARTITION_LEADER_EPOCH).
    assert p.leader_id == -1


def test_get_alive_brokers_should_not_be_mutated_by_update_cache(cache):
    """Mirrors MetadataCacheTest#getAliveBrokersShouldNotBeMutatedByUpdateCache."""
    def update(broker_ids) -> None:
        update_cache(cache, umr([part("topic", 0, leader=0, leader_epoch=0, isr=[0, 1], replicas=[0])],
                                [broker(b, endpoint("foo", 9092), rack="") for b in broker_ids]))

    update(range(3))
    alive = cache.get_alive_brokers()
    update(range(4))
    assert {b.id for b in alive} == {0, 1, 2}
    assert {b.id for b in cache.get_alive_brokers()} == {0, 1, 2, 3}


def test_get_partition_info(cache):
    """Mirrors MetadataCacheTest#testGetPartitionInfo."""
    state = part("topic", 0, leader=0, leader_epoch=0, isr=[2, 3, 0], replicas=[2, 3, 0, 1, 4], controller_epoch=1,
                 zk_version=3, offline=[0])
    update_cache(cache, umr([state], [broker(0, endpoint("foo", 9092), rack="rack1")]))

    info = cache.get_partition_info(TopicPartition("topic", 0))
    assert info.topic_name == "topic"
    assert info.partition_index == 0
    # KRaft keeps no controller epoch for partitions.
    assert info.controller_epoch == (1 if isinstance(cache, MetadataCache) else -1)
    assert info.leader == 0
    assert info.leader_epoch == 0
    assert info.isr == (2, 3, 0)
    assert info.zk_version == 3
    assert info.replicas == (2, 3, 0, 1, 4)
    if isinstance(cache, MetadataCache):
        assert info.offline_replicas == (0,)


# -- KRaft only ---------------------------------------------------------------------------------


def test_is_broker_fenced():
    """Mirrors MetadataCacheTest#testIsBrokerFenced."""
    cache = KRaftMetadataCache(0)
    delta = MetadataDelta(MetadataImage())
    delta.replay(RegisterBrokerRecord(broker_id=0, fenced=False))
    cache.set_image(delta.apply(MetadataProvenance()))
    assert cache.is_broker_fenced(0) is False

    delta.replay(BrokerRegistrationChangeRecord(broker_id=0, broker_epoch=0, fenced=BrokerRegistrationFencingChange.FENCE))
    cache.set_image(delta.apply(MetadataProvenance()))
    assert cache.is_broker_fenced(0) is True


def test_get_alive_brokers_with_broker_fenced():
    """Mirrors MetadataCacheTest#testGetAliveBrokersWithBrokerFenced."""
    cache = KRaftMetadataCache(0)
    listener = "listener"
    endpoints = (BrokerEndpoint(name=listener, host="foo", port=123, security_protocol=PLAINTEXT_ID),)
    delta = MetadataDelta(MetadataImage())
    delta.replay(RegisterBrokerRecord(broker_id=0, fenced=False, end_points=endpoints))
    delta.replay(RegisterBrokerRecord(broker_id=1, fenced=False, end_points=endpoints))
    delta.replay(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=0, fenced=BrokerRegistrationFencingChange.FENCE))
    image = delta.apply(MetadataProvenance())
    cache.set_image(image)
    assert cache.is_broker_fenced(0) is False
    assert cache.is_broker_fenced(1) is True

    alive = {b.id for b in cache.get_alive_brokers()}
    assert alive == {0}
    for broker_id, registration in image.cluster.brokers.items():
        assert (broker_id in alive) is (not registration.fenced)
        assert (cache.get_alive_broker_node(broker_id, listener) is not None) is (broker_id in alive)


def test_is_broker_in_controlled_shutdown():
    """Mirrors MetadataCacheTest#testIsBrokerInControlledShutdown."""
    cache = KRaftMetadataCache(0)
    delta = MetadataDelta(MetadataImage())
    delta.replay(RegisterBrokerRecord(broker_id=0, in_controlled_shutdown=False))
    cache.set_image(delta.apply(MetadataProvenance()))
    assert cache.is_broker_shutting_down(0) is False

    delta.replay(BrokerRegistrationChangeRecord(
        broker_id=0, broker_epoch=0,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    cache.set_image(delta.apply(MetadataProvenance()))
    assert cache.is_broker_shutting_down(0) is True


def test_get_live_broker_epoch():
    """Mirrors MetadataCacheTest#testGetLiveBrokerEpoch."""
    cache = KRaftMetadataCache(0)
    delta = MetadataDelta(MetadataImage())
    delta.replay(RegisterBrokerRecord(broker_id=0, broker_epoch=100, fenced=False))
    delta.replay(RegisterBrokerRecord(broker_id=1, broker_epoch=101, fenced=True))
    cache.set_image(delta.apply(MetadataProvenance()))
    assert cache.get_alive_broker_epoch(0) == 100
    assert cache.get_alive_broker_epoch(1) is None


# -- ZooKeeper only -----------------------------------------------------------------------------


def test_update_metadata_zero_topic_id_forgets_the_id():
    """No Kafka test of its own: ZkMetadataCache#updateMetadata drops the id of a topic that a
    request sends with the zero id (an UpdateMetadata below version 7 carries no ids)."""
    cache = MetadataCache(1)
    brokers = [broker(0, endpoint("foo", 9092))]
    states = [part("t", 0, leader=0, leader_epoch=0, isr=[0], replicas=[0])]
    cache.update_metadata(1, umr(states, brokers, {"t": Uuid(5, 5)}))
    assert cache.get_topic_id("t") == Uuid(5, 5)
    cache.update_metadata(2, umr(states, brokers))
    assert cache.get_topic_id("t") == ZERO_UUID
    assert cache.topic_names_to_ids() == {}


OLD_EPOCH = 122
NEW_EPOCH = 123
FOO = "foo"
FOO_ID = Uuid.from_string("HDceyWK0Ry-j3XLR8DvvGA")
BAR = "bar"
BAR_ID = Uuid.from_string("97FBD1g4QyyNNZNY94bkRA")
RECREATED_BAR_ID = Uuid.from_string("lZokxuaPRty7c5P4dNdTYA")


def umr_part(topic: str, index: int, controller_epoch: int, leader: int, isr, replicas, zk_version: int = 789):
    """A partition state of the hybrid-UMR cases (leader epoch 0, no offline replicas)."""
    return part(topic, index, leader=leader, leader_epoch=0, isr=isr, replicas=replicas,
                controller_epoch=controller_epoch, zk_version=zk_version)


OLD_FOO_0 = umr_part(FOO, 0, OLD_EPOCH, 4, [4, 5, 6], [4, 5, 6])
NEW_FOO_0 = umr_part(FOO, 0, NEW_EPOCH, 5, [4, 5, 6], [4, 5, 6])
OLD_FOO_1 = umr_part(FOO, 1, OLD_EPOCH, 5, [4, 5, 6], [4, 5, 6])
NEW_FOO_1 = umr_part(FOO, 1, NEW_EPOCH, 5, [4, 5], [4, 5, 6])
OLD_BAR_0 = umr_part(BAR, 0, OLD_EPOCH, 7, [7, 8], [7, 8, 9])
NEW_BAR_0 = umr_part(BAR, 0, NEW_EPOCH, 7, [7, 8], [7, 8, 9])
DELETED_BAR_0 = umr_part(BAR, 0, NEW_EPOCH, -2, [7, 8], [7, 8, 9], zk_version=0)
OLD_BAR_1 = umr_part(BAR, 1, OLD_EPOCH, 5, [4, 5, 6], [4, 5, 6])
NEW_BAR_1 = umr_part(BAR, 1, NEW_EPOCH, 5, [4, 5, 6], [4, 5, 6])
DELETED_BAR_1 = umr_part(BAR, 1, NEW_EPOCH, -2, [4, 5, 6], [4, 5, 6], zk_version=0)
OLD_BAR_2 = umr_part(BAR, 2, OLD_EPOCH, 9, [7, 8, 9], [7, 8, 9])
NEW_BAR_2 = umr_part(BAR, 2, NEW_EPOCH, 8, [7, 8], [7, 8, 9])
DELETED_BAR_2 = umr_part(BAR, 2, NEW_EPOCH, -2, [7, 8, 9], [7, 8, 9], zk_version=0)


def topic_state(name: str, topic_id: Uuid, *states: UpdateMetadataPartitionState) -> UpdateMetadataTopicState:
    return UpdateMetadataTopicState(topic_name=name, topic_id=topic_id, partition_states=tuple(states))


def prev_snapshot() -> MetadataSnapshot:
    """MetadataCacheTest#prevSnapshot: foo (2 partitions) and bar (3) at the old controller epoch."""
    return MetadataSnapshot({FOO: {0: OLD_FOO_0, 1: OLD_FOO_1}, BAR: {0: OLD_BAR_0, 1: OLD_BAR_1, 2: OLD_BAR_2}},
                            {FOO: FOO_ID, BAR: BAR_ID})


def transform(snapshot: MetadataSnapshot, topic_states) -> tuple[list[UpdateMetadataTopicState], list[str]]:
    logs: list[str] = []
    result = transform_kraft_controller_full_metadata_request(snapshot, NEW_EPOCH, tuple(topic_states), logs.append)
    return list(result), logs


def test_create_deletion_entries():
    """Mirrors MetadataCacheTest#testCreateDeletionEntries."""
    assert create_deletion_entries(FOO, FOO_ID, [OLD_FOO_0, OLD_FOO_1], NEW_EPOCH) == topic_state(
        FOO, FOO_ID,
        umr_part(FOO, 0, NEW_EPOCH, -2, [4, 5, 6], [4, 5, 6], zk_version=0),
        umr_part(FOO, 1, NEW_EPOCH, -2, [4, 5, 6], [4, 5, 6], zk_version=0),
    )


def test_transform_umr_with_no_changes():
    """Mirrors MetadataCacheTest#transformUMRWithNoChanges."""
    request = [topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1), topic_state(BAR, BAR_ID, NEW_BAR_0, NEW_BAR_1, NEW_BAR_2)]
    assert transform(prev_snapshot(), request) == (request, [])


def test_transform_umr_with_missing_bar():
    """Mirrors MetadataCacheTest#transformUMRWithMissingBar."""
    request = [topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1)]
    assert transform(prev_snapshot(), request) == (
        [topic_state(BAR, BAR_ID, DELETED_BAR_0, DELETED_BAR_1, DELETED_BAR_2),
         topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1)],
        ["Removing topic bar with ID 97FBD1g4QyyNNZNY94bkRA from the metadata cache since the full UMR did not include it."],
    )


def test_transform_umr_with_recreated_bar():
    """Mirrors MetadataCacheTest#transformUMRWithRecreatedBar."""
    request = [topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1),
               topic_state(BAR, RECREATED_BAR_ID, NEW_BAR_0, NEW_BAR_1, NEW_BAR_2)]
    assert transform(prev_snapshot(), request) == (
        [topic_state(BAR, BAR_ID, DELETED_BAR_0, DELETED_BAR_1, DELETED_BAR_2)] + request,
        ["Removing topic bar with ID 97FBD1g4QyyNNZNY94bkRA from the metadata cache since the full UMR did not include it."],
    )


def test_transform_umr_with_buggy_snapshot():
    """Mirrors MetadataCacheTest#transformUMRWithBuggySnapshot."""
    buggy = MetadataSnapshot({}, prev_snapshot().topic_ids)
    request = [topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1), topic_state(BAR, BAR_ID, NEW_BAR_0, NEW_BAR_1, NEW_BAR_2)]
    assert transform(buggy, request) == (request, [
        "Error: topic foo appeared in currentMetadata.topicNames, but not in currentMetadata.partitionStates.",
        "Error: topic bar appeared in currentMetadata.topicNames, but not in currentMetadata.partitionStates.",
    ])


def test_transform_umr_with_partition_the_cache_lacks():
    """No Kafka test of its own: ZkMetadataCache$#transformKRaftControllerFullMetadataRequest for a
    topic the request and the cache share: Kafka 3.8 writes deletion entries for the request's partitions the cache does not
    hold (bar-2 here), ahead of the request (no MetadataCacheTest case covers this branch)."""
    snapshot = MetadataSnapshot({FOO: {0: OLD_FOO_0, 1: OLD_FOO_1}, BAR: {0: OLD_BAR_0, 1: OLD_BAR_1}},
                                {FOO: FOO_ID, BAR: BAR_ID})
    request = [topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1), topic_state(BAR, BAR_ID, NEW_BAR_0, NEW_BAR_1, NEW_BAR_2)]
    assert transform(snapshot, request) == (
        [topic_state(BAR, BAR_ID, umr_part(BAR, 2, NEW_EPOCH, -2, [7, 8], [7, 8, 9], zk_version=0))] + request,
        ["Removing 1 partition(s) from topic bar with ID 97FBD1g4QyyNNZNY94bkRA from the metadata cache since "
         "the full UMR did not include them."],
    )


def full_umr(topic_states) -> UpdateMetadataRequest:
    """MetadataCacheTest#createFullUMR: from a KRaft controller (type left unset), version 8."""
    return UpdateMetadataRequest(controller_id=0, is_kraft_controller=True, controller_epoch=123, broker_epoch=456,
                                 topic_states=tuple(topic_states), version=8)


def check_cache_contents(cache: MetadataCache, expected: dict[Uuid, list[UpdateMetadataPartitionState]]) -> None:
    """MetadataCacheTest#checkCacheContents."""
    names_to_ids = {s.topic_name: topic_id for topic_id, states in expected.items() for s in states}
    parts: dict[str, set[TopicPartition]] = {}
    for states in expected.values():
        for s in states:
            parts.setdefault(s.topic_name, set()).add(TopicPartition(s.topic_name, s.partition_index))
    assert cache.topic_names_to_ids() == names_to_ids
    assert cache.topic_ids_to_names() == {topic_id: name for name, topic_id in names_to_ids.items()}
    assert cache.get_all_topics() == set(parts)
    for topic in cache.get_all_topics():
        assert set(cache.get_topic_partitions(topic)) == parts[topic]


def test_update_zk_metadata_cache_via_hybrid_umr():
    """Mirrors MetadataCacheTest#testUpdateZkMetadataCacheViaHybridUMR."""
    cache = MetadataCache(1)
    cache.update_metadata(123, full_umr([topic_state(FOO, FOO_ID, OLD_FOO_0, OLD_FOO_1),
                                         topic_state(BAR, BAR_ID, OLD_BAR_0, OLD_BAR_1)]))
    check_cache_contents(cache, {FOO_ID: [OLD_FOO_0, OLD_FOO_1], BAR_ID: [OLD_BAR_0, OLD_BAR_1]})


def test_update_zk_metadata_cache_with_recreated_topic():
    """Mirrors MetadataCacheTest#testUpdateZkMetadataCacheWithRecreatedTopic."""
    cache = MetadataCache(1)
    cache.update_metadata(123, full_umr([topic_state(FOO, FOO_ID, OLD_FOO_0, OLD_FOO_1),
                                         topic_state(BAR, BAR_ID, OLD_BAR_0, OLD_BAR_1)]))
    cache.update_metadata(124, full_umr([topic_state(FOO, FOO_ID, NEW_FOO_0, NEW_FOO_1),
                                         topic_state(BAR, BAR_ID, OLD_BAR_0, OLD_BAR_1)]))
    check_cache_contents(cache, {FOO_ID: [NEW_FOO_0, NEW_FOO_1], BAR_ID: [OLD_BAR_0, OLD_BAR_1]})
    assert cache.get_partition_info(TopicPartition(FOO, 0)) == NEW_FOO_0


def test_handle_full_update_metadata_request_in_zk_migration():
    """Mirrors MetadataCacheTest#testHandleFullUpdateMetadataRequestInZkMigration."""
    def states(name: str, partitions: int) -> list[UpdateMetadataPartitionState]:
        return [part(name, i, leader=0, leader_epoch=10, isr=[0, 1], replicas=[0, 1, 2], controller_epoch=2, zk_version=10)
                for i in range(partitions)]

    initial_states = states("test-topic-1", 3) + states("test-topic-2", 3)
    initial_ids = {"test-topic-1": Uuid.from_string("IQ2F1tpCRoSbjfq4zBJwpg"),
                   "test-topic-2": Uuid.from_string("4N8_J-q7SdWHPFkos275pQ")}
    new_ids = {"different-topic": Uuid.from_string("DraFMNOJQOC5maTb1vtZ8Q")}
    new_states = [part("different-topic", 0, leader=0, leader_epoch=10, isr=[0, 1, 2], replicas=[0, 1, 2],
                       controller_epoch=42, zk_version=1)]

    def after(request: UpdateMetadataRequest, zk_migration_enabled: bool = True) -> MetadataCache:
        cache = MetadataCache(1, zk_migration_enabled=zk_migration_enabled)
        cache.update_metadata(1, umr(initial_states, [], initial_ids, controller_id=1, controller_epoch=42))
        cache.update_metadata(1, request)
        return cache

    def request(is_kraft_controller: bool = True, update_type=ControlRequestType.FULL) -> UpdateMetadataRequest:
        return umr(new_states, [], new_ids, controller_id=1, controller_epoch=42,
                   is_kraft_controller=is_kraft_controller, update_type=update_type)

    # A full request from a KRaft controller, but migration is not enabled: applied as it is.
    cache = after(request(), zk_migration_enabled=False)
    assert len(cache.get_all_topics()) == 3
    assert cache.contains_topic("test-topic-1")
    # A full request from a KRaft controller with migration enabled: what it leaves out goes.
    cache = after(request())
    assert cache.get_all_topics() == {"different-topic"}
    assert not cache.contains_topic("test-topic-1")
    # Full but from a ZooKeeper controller.
    cache = after(request(is_kraft_controller=False))
    assert len(cache.get_all_topics()) == 3
    assert cache.contains_topic("test-topic-1")
    # From a KRaft controller but incremental, or of unknown type.
    for update_type in (ControlRequestType.INCREMENTAL, ControlRequestType.UNKNOWN):
        cache = after(request(update_type=update_type))
        assert len(cache.get_all_topics()) == 3
        assert cache.contains_topic("test-topic-1")


def test_full_umr_with_recreated_topic_reports_only_partitions_really_deleted():
    """No Kafka test of its own: ZkMetadataCache#updateMetadata returns the partitions a request
    deletes, but one deleted and re-created by the same request (a topic recreated under a new
    id, seen in a full UMR from a KRaft controller) is not among them."""
    cache = MetadataCache(1, zk_migration_enabled=True)
    cache.update_metadata(1, full_umr([topic_state(FOO, FOO_ID, OLD_FOO_0, OLD_FOO_1),
                                       topic_state(BAR, BAR_ID, OLD_BAR_0, OLD_BAR_1, OLD_BAR_2)]))
    # foo is left out (deleted); bar comes back under a new id with two partitions.
    request = UpdateMetadataRequest(controller_id=0, is_kraft_controller=True, type=int(ControlRequestType.FULL),
                                    controller_epoch=NEW_EPOCH, broker_epoch=456, version=8,
                                    topic_states=(topic_state(BAR, RECREATED_BAR_ID, NEW_BAR_0, NEW_BAR_1),))
    deleted = cache.update_metadata(2, request)
    assert deleted == [TopicPartition(FOO, 0), TopicPartition(FOO, 1), TopicPartition(BAR, 2)]
    assert cache.get_all_topics() == {BAR}
    assert cache.get_topic_partitions(BAR) == [TopicPartition(BAR, 0), TopicPartition(BAR, 1)]
    # As in Kafka 3.8: the ids are recorded before the partitions are applied, and deleting bar's
    # last old partition drops the name's id, so the recreated bar is left without one.
    assert cache.topic_names_to_ids() == {}
