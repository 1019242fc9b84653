"""Ports of org.apache.kafka.clients.MetadataTest (Kafka 3.8) against kafka_ref.clients.client_metadata.Metadata.

Kafka's ``Metadata(100, 1000, 1000)`` is ``Metadata(100, 1000, refresh_backoff_max_ms=1000,
topics=None)`` here (the base class wants every topic); responses are built the way
RequestTestUtils#metadataUpdateWith builds them: nodes 0..n-1, partition i led by node i % n
with itself as the only replica, no leader epoch unless one is given.
``updateWithCurrentRequestVersion(response, isPartial, now)`` is
``update_with_current_request_version(response, now, is_partial_update=isPartial)``. Kafka's
anonymous subclasses that override retainTopic / newMetadataRequestBuilderForNewTopics are
``topics`` (the retained set) and ``partial_updates=True`` here. A Metadata here starts as if
Kafka's #bootstrap had run (the bootstrap brokers live in NetworkClient): an update is
requested at once.

Not ported:
- testIgnoreLeaderEpochInOlderMetadataResponse: responses carry no wire version here (every
  response is the latest version, whose leader epochs are reliable).
- testClusterCopy, testConcurrentUpdateAndFetchForSnapshotAndCluster: Java Cluster copies and
  sentinel objects; threads (one event loop here, MetadataSnapshot is immutable).
"""

from __future__ import annotations

import random

import pytest

from kafka_ref.clients.client_metadata import (
    RETRY_BACKOFF_JITTER,
    LeaderAndEpoch,
    Metadata,
    Node,
    PartitionMetadata,
)
from kafka_ref.common.errors import Errors, IllegalStateException, InvalidTopicException, TopicAuthorizationException
from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

REFRESH_BACKOFF_MS = 100
REFRESH_BACKOFF_MAX_MS = 1000
METADATA_EXPIRE_MS = 1000
# The widest jittered band around the first backoff: 100 ms ± 20 %.
JITTER_SPAN = int(REFRESH_BACKOFF_MS * (1 + RETRY_BACKOFF_JITTER)) - int(REFRESH_BACKOFF_MS * (1 - RETRY_BACKOFF_JITTER))


def new_metadata(refresh_backoff_ms: int = REFRESH_BACKOFF_MS, refresh_backoff_max_ms: int = REFRESH_BACKOFF_MAX_MS,
                 metadata_expire_ms: int = METADATA_EXPIRE_MS) -> Metadata:
    return Metadata(refresh_backoff_ms, metadata_expire_ms, topics=None, refresh_backoff_max_ms=refresh_backoff_max_ms,
                    rng=random.Random(11))


def empty_response() -> MetadataResponse:
    """MetadataTest#emptyMetadataResponse: no brokers, no cluster id, no controller, no topics."""
    return MetadataResponse()


def partition(tp: TopicPartition, leader: int, epoch: int | None, replicas=None, isr=None, offline=(),
              error: Errors = Errors.NONE) -> MetadataResponsePartition:
    replicas = (leader,) if replicas is None else tuple(replicas)
    return MetadataResponsePartition(error_code=error.code, partition_index=tp.partition, leader_id=leader,
                                     leader_epoch=-1 if epoch is None else epoch, replica_nodes=replicas,
                                     isr_nodes=replicas if isr is None else tuple(isr), offline_replicas=tuple(offline))


def update_with(cluster_id: str | None, num_nodes: int, topic_errors: dict[str, Errors] | None = None,
                partition_counts: dict[str, int] | None = None, epoch=lambda tp: None,
                topic_ids: dict[str, Uuid] | None = None, supplier=None, internal=()) -> MetadataResponse:
    """RequestTestUtils#metadataUpdateWith(Ids): nodes 0..n-1; partition i led by node i % n."""
    topics = [MetadataResponseTopic(error_code=error.code, name=name, is_internal=name in internal)
              for name, error in (topic_errors or {}).items()]
    for name, count in (partition_counts or {}).items():
        parts = []
        for i in range(count):
            tp = TopicPartition(name, i)
            built = partition(tp, i % num_nodes, epoch(tp))
            parts.append(supplier(tp, built) if supplier else built)
        topics.append(MetadataResponseTopic(name=name, topic_id=(topic_ids or {}).get(name, ZERO_UUID),
                                            is_internal=name in internal, partitions=tuple(parts)))
    brokers = tuple(MetadataResponseBroker(node_id=i, host="localhost", port=1969 + i) for i in range(num_nodes))
    return MetadataResponse(brokers=brokers, cluster_id=cluster_id, controller_id=0 if num_nodes else -1,
                            topics=tuple(topics))


def single_partition_response(tp: TopicPartition, part: MetadataResponsePartition, brokers=(),
                              cluster_id: str | None = "clusterId") -> MetadataResponse:
    return MetadataResponse(
        brokers=tuple(MetadataResponseBroker(node_id=n.id, host=n.host, port=n.port, rack=n.rack) for n in brokers),
        cluster_id=cluster_id, controller_id=0,
        topics=(MetadataResponseTopic(name=tp.topic, partitions=(part,)),))


# --------------------------------------------------------------------------------------------
# Refresh timing and backoff
# --------------------------------------------------------------------------------------------


def test_metadata_update_after_close() -> None:
    """Mirrors MetadataTest#testMetadataUpdateAfterClose."""
    metadata = new_metadata()
    metadata.close()
    with pytest.raises(IllegalStateException):
        metadata.update_with_current_request_version(empty_response(), 1000)


def test_update_metadata_allowed_immediately_after_bootstrap() -> None:
    """Mirrors MetadataTest#testUpdateMetadataAllowedImmediatelyAfterBootstrap."""
    metadata = new_metadata()
    assert metadata.update_requested()
    assert metadata.time_to_allow_update(10000) == 0
    assert metadata.time_to_next_update(10000) == 0


@pytest.mark.parametrize("refresh_backoff_ms, metadata_expire_ms", [(100, 1000), (1000, 100), (0, 0), (0, 100), (100, 0)])
def test_time_to_next_update(refresh_backoff_ms: int, metadata_expire_ms: int) -> None:
    """Mirrors MetadataTest#testTimeToNextUpdate (exponential backoff off: max = initial)."""
    now = 10000
    larger = max(refresh_backoff_ms, metadata_expire_ms)
    metadata = new_metadata(refresh_backoff_ms, refresh_backoff_ms, metadata_expire_ms)
    # 1. Never updated: due now.
    assert metadata.time_to_next_update(now) == 0
    # 2. A successful update: due when it expires (or, if longer, after the backoff).
    metadata.update_with_current_request_version(empty_response(), now)
    assert metadata.time_to_next_update(now) == larger
    # 3. An explicit request ignores the expiry but not the backoff.
    metadata.request_update(True)
    assert metadata.time_to_next_update(now) == refresh_backoff_ms
    # 4. An update clears the request.
    metadata.update_with_current_request_version(empty_response(), now)
    assert metadata.time_to_next_update(now) == larger
    # 5. Both elapsed.
    now += larger
    assert metadata.time_to_next_update(now) == 0
    assert metadata.time_to_next_update(now + 1) == 0


def test_time_to_next_update_retry_backoff() -> None:
    """Mirrors MetadataTest#testTimeToNextUpdateRetryBackoff."""
    metadata = new_metadata()
    now = 10000
    # 1. A failed attempt: back off ~100 ms (±20 % jitter).
    metadata.failed_update(now)
    assert abs(metadata.time_to_next_update(now) - REFRESH_BACKOFF_MS) <= JITTER_SPAN
    assert 80 <= metadata.time_to_next_update(now) <= 120
    # 2. An explicit request still respects the backoff.
    metadata.request_update(True)
    assert 80 <= metadata.time_to_next_update(now) <= 120
    # 3. Past the largest backoff: due.
    now += REFRESH_BACKOFF_MS + 120
    assert metadata.time_to_next_update(now) == 0
    assert metadata.time_to_next_update(now + 1) == 0


def test_failed_update() -> None:
    """Mirrors MetadataTest#testFailedUpdate."""
    metadata = new_metadata()
    metadata.update_with_current_request_version(empty_response(), 100)
    assert metadata.time_to_next_update(1000) == 100
    # 1. A failure: the last successful update stays, the backoff applies from the failure.
    metadata.failed_update(1100)
    assert 80 <= metadata.time_to_next_update(1100) <= 120
    assert metadata.last_successful_update() == 100
    assert metadata.attempts == 1
    # 2. A success resets the attempts.
    metadata.update_with_current_request_version(empty_response(), 100)
    assert metadata.attempts == 0
    assert abs(metadata.time_to_next_update(1000) - 100) <= JITTER_SPAN


def test_exponential_refresh_backoff_for_failed_attempts() -> None:
    """After MetadataTest#testTimeToNextUpdateRetryBackoff: KIP-580 doubles the backoff per failed attempt up to the max."""
    metadata = new_metadata()
    now = 10000
    for attempt, base in enumerate([100, 200, 400, 800, 1000, 1000]):
        metadata.failed_update(now)
        assert metadata.attempts == attempt + 1
        delay = metadata.time_to_allow_update(now)
        assert int(base * 0.8) <= delay <= min(int(base * 1.2), REFRESH_BACKOFF_MAX_MS)
    # A success starts over.
    metadata.update_with_current_request_version(update_with("dummy", 1), now)
    assert metadata.attempts == 0


def test_equivalent_responses_back_off_exponentially() -> None:
    """After MetadataTest#testRequestUpdate and KIP-580: responses that change nothing back off, a new epoch resets it."""
    metadata = new_metadata()
    now = 10000
    response = update_with("dummy", 1, partition_counts={"topic": 1}, epoch=lambda tp: 5)
    # 1. The first response with an epoch is progress: the count starts at 1 after the update.
    metadata.update_with_current_request_version(response, now)
    assert metadata.equivalent_response_count == 0
    # 2. The same response again: no progress; each one lengthens the backoff.
    for count, base in [(1, 100), (2, 200), (3, 400)]:
        metadata.request_update(False)
        metadata.update_with_current_request_version(response, now)
        assert metadata.equivalent_response_count == count
        assert int(base * 0.8) <= metadata.time_to_allow_update(now) <= int(base * 1.2)
    # 3. A request that wants new metadata resets it.
    metadata.request_update(True)
    assert metadata.equivalent_response_count == 0
    assert 80 <= metadata.time_to_allow_update(now) <= 120
    # 4. A newer leader epoch is progress.
    metadata.update_with_current_request_version(response, now)
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic": 1},
                                                             epoch=lambda tp: 6), now)
    assert metadata.equivalent_response_count == 0
    # 5. Expired metadata starts the count over.
    metadata.update_with_current_request_version(response, now)
    assert metadata.equivalent_response_count == 1
    metadata.time_to_allow_update(now + METADATA_EXPIRE_MS)
    assert metadata.equivalent_response_count == 0


def test_cluster_listener_gets_notified_of_update() -> None:
    """Mirrors MetadataTest#testClusterListenerGetsNotifiedOfUpdate."""
    metadata = new_metadata()
    seen: list[str | None] = []
    metadata.cluster_resource_listeners.append(seen.append)
    assert seen == []
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic": 1, "topic1": 1}), 100)
    assert seen == ["dummy"]
    assert metadata.fetch().cluster_id == "dummy"


def test_request_update() -> None:
    """Mirrors MetadataTest#testRequestUpdate."""
    metadata = new_metadata()
    tp = TopicPartition("topic", 0)
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic": 1},
                                                             epoch=lambda _tp: 0), 10)
    assert not metadata.update_requested()
    epochs = [42, 42, 41, 41, 42, 43, 43, 42, 41, 44]
    requested = [True, False, False, False, False, True, False, False, False, True]
    for i, epoch in enumerate(epochs):
        metadata.update_last_seen_epoch_if_newer(tp, epoch)
        assert metadata.update_requested() is requested[i], i
        metadata.update_with_current_request_version(empty_response(), 0)
        assert not metadata.update_requested()


def test_request_version() -> None:
    """Mirrors MetadataTest#testRequestVersion (full updates only)."""
    metadata = new_metadata()
    metadata.request_update(True)
    version = metadata.new_metadata_request_and_version().request_version
    metadata.update(version, update_with(None, 1, partition_counts={"topic": 1}), 0)
    assert not metadata.update_requested()
    # 1. A topic added while a request is in flight: the answer to the older request leaves an update due.
    metadata.request_update_for_new_topics()
    version = metadata.new_metadata_request_and_version().request_version
    metadata.request_update_for_new_topics()
    metadata.update(version, update_with(None, 1, partition_counts={"topic": 1}), 0)
    assert metadata.update_requested()
    # 2. The next update resolves it.
    version = metadata.new_metadata_request_and_version().request_version
    metadata.update(version, update_with(None, 1, partition_counts={"topic": 1}), 0)
    assert not metadata.update_requested()


def test_request_update_for_new_topics_is_immediate() -> None:
    """After MetadataTest#testRequestVersion: requestUpdateForNewTopics skips the backoff (lastRefreshMs = 0)."""
    metadata = new_metadata()
    metadata.failed_update(10000)
    assert metadata.time_to_next_update(10000) > 0
    metadata.request_update_for_new_topics()
    assert metadata.time_to_next_update(10000) == 0


# --------------------------------------------------------------------------------------------
# Leader epochs
# --------------------------------------------------------------------------------------------


def test_stale_metadata() -> None:
    """Mirrors MetadataTest#testStaleMetadata: an older epoch with a changed ISR is ignored."""
    metadata = new_metadata()
    tp = TopicPartition("topic", 0)
    metadata.update_with_current_request_version(
        single_partition_response(tp, partition(tp, 1, 10, replicas=[1, 2, 3])), 100)
    metadata.update_with_current_request_version(
        single_partition_response(tp, partition(tp, 1, 9, replicas=[1, 2, 3], isr=[1, 2])), 101)
    assert metadata.last_seen_leader_epoch(tp) == 10
    current = metadata.partition_metadata_if_current(tp)
    assert current is not None
    assert current.in_sync_replica_ids == (1, 2, 3)
    assert current.leader_epoch == 10


def test_update_last_epoch() -> None:
    """Mirrors MetadataTest#testUpdateLastEpoch."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    metadata.update_with_current_request_version(empty_response(), 0)
    # 1. No epoch on record: nothing changes.
    assert not metadata.update_last_seen_epoch_if_newer(tp, 0)
    assert not metadata.update_last_seen_epoch_if_newer(tp, 1)
    assert not metadata.update_last_seen_epoch_if_newer(tp, 2)
    assert metadata.last_seen_leader_epoch(tp) is None
    # 2. Metadata with an epoch sets it.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1},
                                                             epoch=lambda _tp: 10), 1)
    assert metadata.last_seen_leader_epoch(tp) == 10
    # 3. Older or equal: kept; newer: replaced.
    assert not metadata.update_last_seen_epoch_if_newer(tp, 1)
    assert metadata.last_seen_leader_epoch(tp) == 10
    assert not metadata.update_last_seen_epoch_if_newer(tp, 10)
    assert metadata.last_seen_leader_epoch(tp) == 10
    assert metadata.update_last_seen_epoch_if_newer(tp, 12)
    assert metadata.last_seen_leader_epoch(tp) == 12
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1},
                                                             epoch=lambda _tp: 12), 2)
    assert metadata.last_seen_leader_epoch(tp) == 12
    # 4. Metadata with an older epoch does not overwrite it.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1},
                                                             epoch=lambda _tp: 11), 3)
    assert metadata.last_seen_leader_epoch(tp) == 12


def test_update_last_seen_epoch_rejects_negative_epoch() -> None:
    """After Metadata#updateLastSeenEpochIfNewer: a negative epoch is an IllegalArgumentException."""
    metadata = new_metadata()
    with pytest.raises(ValueError):
        metadata.update_last_seen_epoch_if_newer(TopicPartition("topic", 0), -1)


def test_epoch_update_after_topic_deletion() -> None:
    """Mirrors MetadataTest#testEpochUpdateAfterTopicDeletion."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1}, epoch=lambda _tp: 10,
                                                             topic_ids={"topic-1": Uuid(1, 1)}), 1)
    assert metadata.last_seen_leader_epoch(tp) == 10
    # 1. Deleted: the response has an error; the last seen epoch stays.
    metadata.update_with_current_request_version(
        update_with("dummy", 1, topic_errors={"topic-1": Errors.UNKNOWN_TOPIC_OR_PARTITION}), 1)
    assert metadata.last_seen_leader_epoch(tp) == 10
    # 2. Recreated with a new id: its lower epoch replaces ours.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1}, epoch=lambda _tp: 5,
                                                             topic_ids={"topic-1": Uuid(2, 2)}), 1)
    assert metadata.last_seen_leader_epoch(tp) == 5


def test_epoch_update_on_changed_topic_ids() -> None:
    """Mirrors MetadataTest#testEpochUpdateOnChangedTopicIds."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    ids = {"topic-1": Uuid(3, 3)}

    def update(epoch: int, topic_ids: dict[str, Uuid] | None, now: int) -> None:
        metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1},
                                                                 epoch=lambda _tp: epoch, topic_ids=topic_ids), now)

    metadata.update_with_current_request_version(empty_response(), 0)
    update(100, None, 1)
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 1. No id before, one now: the new id's epoch wins, even lower.
    update(10, ids, 2)
    assert metadata.last_seen_leader_epoch(tp) == 10
    update(10, ids, 3)
    assert metadata.last_seen_leader_epoch(tp) == 10
    update(12, ids, 4)
    assert metadata.last_seen_leader_epoch(tp) == 12
    # 2. A different id: its epoch wins, lower or higher.
    update(3, {"topic-1": Uuid(4, 4)}, 5)
    assert metadata.last_seen_leader_epoch(tp) == 3
    update(20, {"topic-1": Uuid(5, 5)}, 6)
    assert metadata.last_seen_leader_epoch(tp) == 20


def test_reject_old_metadata() -> None:
    """Mirrors MetadataTest#testRejectOldMetadata."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    counts = {"topic-1": 1}
    no_isr = lambda _tp, p: MetadataResponsePartition(  # noqa: E731
        error_code=p.error_code, partition_index=p.partition_index, leader_id=p.leader_id, leader_epoch=p.leader_epoch,
        replica_nodes=p.replica_nodes, isr_nodes=(), offline_replicas=p.offline_replicas)
    metadata.update_with_current_request_version(empty_response(), 0)
    # 1. First epoch seen: accepted.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 100), 10)
    assert tp in metadata.fetch().partitions
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 2. Empty ISR with an older epoch: rejected.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 99,
                                                             supplier=no_isr), 20)
    assert metadata.fetch().partitions[tp].in_sync_replica_ids == (0,)
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 3. Empty ISR with the same epoch: accepted.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 100,
                                                             supplier=no_isr), 20)
    assert metadata.fetch().partitions[tp].in_sync_replica_ids == ()
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 4. Not in the response: the partition goes, its last seen epoch stays.
    metadata.update_with_current_request_version(update_with("dummy", 1), 20)
    assert tp not in metadata.fetch().partitions
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 5. Back with an older epoch: not added.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 99), 10)
    assert tp not in metadata.fetch().partitions
    assert metadata.last_seen_leader_epoch(tp) == 100


def test_out_of_band_epoch_update() -> None:
    """Mirrors MetadataTest#testOutOfBandEpochUpdate."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    counts = {"topic-1": 5}
    metadata.update_with_current_request_version(empty_response(), 0)
    assert not metadata.update_last_seen_epoch_if_newer(tp, 99)
    response = update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 100)
    metadata.update_with_current_request_version(response, 10)
    assert tp in metadata.fetch().partitions
    assert metadata.last_seen_leader_epoch(tp) == 100
    # 1. A newer epoch from a fetch or list-offsets response: the cache stays but is not current.
    assert metadata.update_last_seen_epoch_if_newer(tp, 101)
    assert tp in metadata.fetch().partitions
    assert metadata.fetch().partition_count("topic-1") == 5
    assert metadata.partition_metadata_if_current(tp) is None
    assert metadata.current_leader(tp) == LeaderAndEpoch(None, 101)
    assert metadata.last_seen_leader_epoch(tp) == 101
    # 2. Metadata with the older epoch is rejected; nothing changes.
    metadata.update_with_current_request_version(response, 20)
    assert metadata.fetch().partition_count("topic-1") == 5
    assert metadata.partition_metadata_if_current(tp) is None
    assert metadata.last_seen_leader_epoch(tp) == 101
    # 3. Metadata with the same epoch is accepted.
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts=counts, epoch=lambda _tp: 101), 30)
    assert metadata.fetch().partition_count("topic-1") == 5
    assert metadata.partition_metadata_if_current(tp) is not None
    assert metadata.current_leader(tp) == LeaderAndEpoch(0, 101)
    assert metadata.last_seen_leader_epoch(tp) == 101


def test_no_epoch() -> None:
    """Mirrors MetadataTest#testNoEpoch."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.update_with_current_request_version(update_with("dummy", 1, partition_counts={"topic-1": 1}), 10)
    assert metadata.last_seen_leader_epoch(tp) is None
    current = metadata.partition_metadata_if_current(tp)
    assert current is not None and current.topic_partition.partition == 0 and current.leader_id == 0
    # No epoch on record: an epoch from elsewhere does not make one.
    metadata.update_last_seen_epoch_if_newer(tp, 10)
    current = metadata.partition_metadata_if_current(tp)
    assert current is not None and current.leader_epoch is None


def test_leader_metadata_inconsistent_with_broker_metadata() -> None:
    """Mirrors MetadataTest#testLeaderMetadataInconsistentWithBrokerMetadata."""
    metadata = new_metadata()
    tp = TopicPartition("topic", 0)
    node0, node1, node2 = Node(0, "localhost", 9092), Node(1, "localhost", 9093), Node(2, "localhost", 9094)
    # 1. Epoch 10 led by 0; then a stale view (epoch 8, led by 1, node 0 absent and offline).
    metadata.update_with_current_request_version(single_partition_response(
        tp, partition(tp, 0, 10, replicas=[0, 1, 2]), brokers=[node0, node1, node2], cluster_id=None), 10)
    metadata.update_with_current_request_version(single_partition_response(
        tp, partition(tp, 1, 8, replicas=[0, 1, 2], isr=[1, 2], offline=[0]), brokers=[node1, node2], cluster_id=None), 20)
    # 2. The epoch-10 partition is kept, but its leader is not a known node.
    assert metadata.fetch().leader_for(tp) is None
    assert metadata.last_seen_leader_epoch(tp) == 10
    assert metadata.current_leader(tp).leader is None


# --------------------------------------------------------------------------------------------
# Topic errors
# --------------------------------------------------------------------------------------------


def test_invalid_topic_error() -> None:
    """Mirrors MetadataTest#testInvalidTopicError."""
    metadata = new_metadata()
    response = update_with("clusterId", 1, topic_errors={"topic;":  Errors.INVALID_TOPIC_EXCEPTION})
    metadata.update_with_current_request_version(response, 0)
    with pytest.raises(InvalidTopicException, match=r"topic;"):
        metadata.maybe_throw_any_exception()
    # 1. Raised once, then cleared.
    metadata.maybe_throw_any_exception()
    # 2. A later good update clears an error not yet raised.
    metadata.update_with_current_request_version(response, 0)
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.maybe_throw_any_exception()


def test_topic_authorization_error() -> None:
    """Mirrors MetadataTest#testTopicAuthorizationError."""
    metadata = new_metadata()
    response = update_with("clusterId", 1, topic_errors={"foo": Errors.TOPIC_AUTHORIZATION_FAILED})
    metadata.update_with_current_request_version(response, 0)
    with pytest.raises(TopicAuthorizationException, match=r"\[foo\]"):
        metadata.maybe_throw_any_exception()
    metadata.maybe_throw_any_exception()
    metadata.update_with_current_request_version(response, 0)
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.maybe_throw_any_exception()


def test_metadata_topic_errors() -> None:
    """Mirrors MetadataTest#testMetadataTopicErrors: the topic's own error, and every error cleared after."""
    metadata = new_metadata()
    response = update_with("clusterId", 1, topic_errors={"invalidTopic": Errors.INVALID_TOPIC_EXCEPTION,
                                                         "sensitiveTopic1": Errors.TOPIC_AUTHORIZATION_FAILED,
                                                         "sensitiveTopic2": Errors.TOPIC_AUTHORIZATION_FAILED})
    metadata.update_with_current_request_version(response, 0)
    with pytest.raises(TopicAuthorizationException, match=r"\[sensitiveTopic1\]"):
        metadata.maybe_throw_exception_for_topic("sensitiveTopic1")
    metadata.maybe_throw_any_exception()  # cleared: sensitiveTopic2 and invalidTopic too
    metadata.update_with_current_request_version(response, 0)
    with pytest.raises(TopicAuthorizationException, match=r"\[sensitiveTopic2\]"):
        metadata.maybe_throw_exception_for_topic("sensitiveTopic2")
    metadata.maybe_throw_any_exception()
    metadata.update_with_current_request_version(response, 0)
    with pytest.raises(InvalidTopicException, match=r"\[invalidTopic\]"):
        metadata.maybe_throw_exception_for_topic("invalidTopic")
    metadata.maybe_throw_any_exception()
    # Another topic raises nothing but clears the errors.
    metadata.update_with_current_request_version(response, 0)
    metadata.maybe_throw_exception_for_topic("anotherTopic")
    metadata.maybe_throw_any_exception()


def test_any_exception_prefers_authorization_over_invalid() -> None:
    """After Metadata#recoverableException: unauthorized topics are reported before invalid ones."""
    metadata = new_metadata()
    metadata.update_with_current_request_version(update_with("clusterId", 1, topic_errors={
        "bad;": Errors.INVALID_TOPIC_EXCEPTION, "secret": Errors.TOPIC_AUTHORIZATION_FAILED}), 0)
    with pytest.raises(TopicAuthorizationException, match=r"\[secret\]"):
        metadata.maybe_throw_any_exception()
    metadata.maybe_throw_any_exception()


# --------------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------------


def test_node_if_offline() -> None:
    """Mirrors MetadataTest#testNodeIfOffline."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    supplier = lambda _tp, p: partition(_tp, 0, 99, replicas=[0], isr=[], offline=[1])  # noqa: E731
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.update_with_current_request_version(update_with("dummy", 2, partition_counts={"topic-1": 1},
                                                             epoch=lambda _tp: 99, supplier=supplier), 10)
    assert metadata.fetch().node_if_online(tp, 0) == Node(0, "localhost", 1969)
    assert metadata.fetch().node_if_online(tp, 1) is None
    assert metadata.fetch().node_by_id(0).id == 0
    assert metadata.fetch().node_by_id(1).id == 1


def test_node_if_online_when_not_in_replica_set() -> None:
    """Mirrors MetadataTest#testNodeIfOnlineWhenNotInReplicaSet."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    supplier = lambda _tp, p: partition(_tp, 0, 99, replicas=[0], isr=[])  # noqa: E731
    metadata.update_with_current_request_version(empty_response(), 0)
    metadata.update_with_current_request_version(update_with("dummy", 2, partition_counts={"topic-1": 1},
                                                             epoch=lambda _tp: 99, supplier=supplier), 10)
    assert metadata.fetch().node_by_id(1).id == 1
    assert metadata.fetch().node_if_online(tp, 1) is None


def test_node_if_online_non_existent_topic_partition() -> None:
    """Mirrors MetadataTest#testNodeIfOnlineNonExistentTopicPartition."""
    metadata = new_metadata()
    tp = TopicPartition("topic-1", 0)
    metadata.update_with_current_request_version(update_with(None, 2), 0)
    assert metadata.fetch().node_by_id(0).id == 0
    assert tp not in metadata.fetch().partitions
    assert metadata.fetch().node_if_online(tp, 0) is None


# --------------------------------------------------------------------------------------------
# Leader changes from Produce/Fetch responses (KIP-951)
# --------------------------------------------------------------------------------------------


def test_topic_metadata_on_update_partition_leadership() -> None:
    """Mirrors MetadataTest#testTopicMetadataOnUpdatePartitionLeadership."""
    metadata = new_metadata()
    topic = "input-topic"
    node1, node2 = Node(1, "localhost", 9091), Node(2, "localhost", 9091)
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    response = MetadataResponse(
        brokers=tuple(MetadataResponseBroker(node_id=n.id, host=n.host, port=n.port) for n in (node1, node2)),
        cluster_id="clusterId", controller_id=1,
        topics=(MetadataResponseTopic(name=topic, topic_id=Uuid(7, 7), partitions=(
            partition(tp0, 1, 1, replicas=[1, 2]), partition(tp1, 1, 1, replicas=[1, 2]))),))
    metadata.update_with_current_request_version(response, 0)
    assert len(metadata.fetch().partitions_for_topic(topic)) == 2
    assert metadata.fetch().leader_for(tp0) == 1 and metadata.fetch().leader_for(tp1) == 1
    # Partition 1's leader moves to node 2 (epoch 3).
    assert metadata.update_partition_leadership({tp1: LeaderAndEpoch(2, 3)}, [node1]) == {tp1}
    assert len(metadata.fetch().partitions_for_topic(topic)) == 2
    assert metadata.fetch().leader_for(tp0) == 1
    assert metadata.fetch().leader_for(tp1) == 2
    assert metadata.current_leader(tp1) == LeaderAndEpoch(2, 3)


def test_update_partition_leadership() -> None:
    """Mirrors MetadataTest#testUpdatePartitionLeadership."""
    metadata = new_metadata()
    calls: list[str | None] = []
    metadata.cluster_resource_listeners.append(calls.append)
    tp11, tp12, tp21 = TopicPartition("topic1", 0), TopicPartition("topic1", 1), TopicPartition("topic2", 0)
    internal = TopicPartition("__consumer_offsets", 0)
    fixed = {
        tp11: partition(tp11, 1, 100, replicas=[1, 2], offline=[3]),
        tp12: partition(tp12, 2, 200, replicas=[2, 3], offline=[1]),
        tp21: partition(tp21, 2, 200, replicas=[2, 3], offline=[1]),
        internal: partition(internal, 2, 200, replicas=[2, 3], offline=[1]),
    }
    ids = {"topic1": Uuid(8, 1), "topic2": Uuid(8, 2), "__consumer_offsets": Uuid(8, 3)}
    metadata.request_update(True)
    version = metadata.new_metadata_request_and_version().request_version
    metadata.update(version, update_with(
        "kafka-cluster", 5, topic_errors={"topic3": Errors.INVALID_TOPIC_EXCEPTION, "topic4": Errors.TOPIC_AUTHORIZATION_FAILED},
        partition_counts={"topic1": 2, "topic2": 1, "__consumer_offsets": 1}, topic_ids=ids,
        supplier=lambda tp, p: fixed[tp], internal=("__consumer_offsets",)), 0)
    nodes = [metadata.fetch().nodes[i] for i in range(5)]
    assert not metadata.update_requested()
    assert calls == ["kafka-cluster"]
    before = metadata.fetch()

    def check(expected_tp11: PartitionMetadata, expected_nodes: list[Node]) -> None:
        snapshot = metadata.fetch()
        assert snapshot.cluster_id == "kafka-cluster"
        assert snapshot.controller_id == 0
        assert snapshot.nodes == {n.id: n for n in expected_nodes}
        assert snapshot.partitions[tp11] == expected_tp11
        for tp in (tp12, tp21, internal):
            assert snapshot.partitions[tp] == before.partitions[tp]
        assert snapshot.topic_ids == ids
        assert snapshot.invalid_topics == {"topic3"} and snapshot.unauthorized_topics == {"topic4"}
        assert snapshot.internal_topics == {"__consumer_offsets"}

    # 1. Ignored: no leader, an unknown leader node, a partition not cached, a stale epoch.
    updates = {
        TopicPartition("topic1", 999): LeaderAndEpoch(None, None),
        tp21: LeaderAndEpoch(99999, 99999),
        TopicPartition("topic_missing_from_existing_metadata", 1): LeaderAndEpoch(0, 99999),
        tp11: LeaderAndEpoch(1, 99),
    }
    assert metadata.update_partition_leadership(updates, nodes) == set()
    check(before.partitions[tp11], nodes)
    assert calls == ["kafka-cluster"]
    # 2. A newer leader for tp11 applies; a new node is added and node 0 is replaced.
    updates[tp11] = LeaderAndEpoch(2, 101)
    new_node = Node(999, "testhost", 99999, "testrack")
    updated_node0 = Node(0, "newhost", nodes[0].port, "newrack")
    nodes = [updated_node0, *nodes[1:], new_node]
    assert metadata.update_partition_leadership(updates, nodes) == {tp11}
    expected = PartitionMetadata(Errors.NONE, tp11, 2, 101, (1, 2), (1, 2), (3,))
    check(expected, nodes)
    assert metadata.last_seen_leader_epoch(tp11) == 101
    assert calls == ["kafka-cluster", "kafka-cluster"]


# --------------------------------------------------------------------------------------------
# Topic expiry (ProducerMetadata's retainTopic, which MetadataTest's base class leaves out)
# --------------------------------------------------------------------------------------------


def producer_metadata(idle_ms: int = 60000) -> Metadata:
    return Metadata(REFRESH_BACKOFF_MS, METADATA_EXPIRE_MS, topics=(), metadata_idle_ms=idle_ms, rng=random.Random(3))


def test_topic_expiry() -> None:
    """After ProducerMetadataTest#testTopicExpiry: an unused topic leaves the request after metadata.max.idle.ms."""
    metadata = producer_metadata()
    now = 1000
    # 1. A new topic: wanted, fetched at once, kept while new.
    metadata.add_topics(["topic-0"], now)
    assert metadata.topics == {"topic-0"} and metadata.new_topics == {"topic-0"}
    assert metadata.time_to_next_update(now) == 0
    metadata.update_with_current_request_version(update_with("c", 1, partition_counts={"topic-0": 1}, epoch=lambda tp: 3), now)
    assert metadata.new_topics == set()
    assert metadata.last_seen_leader_epoch(TopicPartition("topic-0", 0)) == 3
    # 2. Used again before the expiry: kept.
    metadata.add_topics(["topic-0"], now + 50000)
    metadata.update_with_current_request_version(update_with("c", 1, partition_counts={"topic-0": 1}, epoch=lambda tp: 3), now + 60000)
    assert metadata.topics == {"topic-0"}
    request = metadata.new_metadata_request_and_version().request
    assert [t.name for t in request.topics] == ["topic-0"]
    # 3. Unused past its expiry: dropped from the response and from the wanted topics; its epoch too.
    metadata.update_with_current_request_version(update_with("c", 1, partition_counts={"topic-0": 1}, epoch=lambda tp: 3), now + 110000)
    assert metadata.topics == set()
    assert TopicPartition("topic-0", 0) not in metadata.fetch().partitions
    assert metadata.last_seen_leader_epoch(TopicPartition("topic-0", 0)) is None
    request = metadata.new_metadata_request_and_version().request
    assert request.topics == ()


def test_new_topic_is_retained_until_its_first_metadata() -> None:
    """After ProducerMetadataTest#testRequestUpdateForTopic / ProducerMetadata#retainTopic: a new topic never expires before its first metadata."""
    metadata = producer_metadata(idle_ms=100)
    metadata.add_topics(["new-topic"], 0)
    # A response without it (e.g. still being created), far past the idle time: still wanted.
    metadata.update_with_current_request_version(update_with("c", 1), 10000)
    assert metadata.topics == {"new-topic"} and metadata.new_topics == {"new-topic"}
    # Once its metadata came, the idle time applies.
    metadata.update_with_current_request_version(update_with("c", 1, partition_counts={"new-topic": 1}), 10000)
    assert metadata.new_topics == set() and metadata.topics == {"new-topic"}
    metadata.update_with_current_request_version(update_with("c", 1, partition_counts={"new-topic": 1}), 10001)
    assert metadata.topics == set()


# --------------------------------------------------------------------------------------------
# Partial updates and merges
# --------------------------------------------------------------------------------------------


def test_partial_metadata_update() -> None:
    """Mirrors MetadataTest#testPartialMetadataUpdate."""
    metadata = Metadata(REFRESH_BACKOFF_MS, METADATA_EXPIRE_MS, topics=None, partial_updates=True, rng=random.Random(2))
    metadata.need_full_update = False  # Kafka's Metadata starts without a request (no bootstrap here)
    now = 0
    assert not metadata.update_requested()
    response = update_with(None, 1, partition_counts={"topic": 1})

    def update(request_and_version, at: int = now) -> None:
        metadata.update(request_and_version.request_version, response, at, is_partial_update=request_and_version.is_partial_update)

    # 1. A requested update is a full one.
    metadata.request_update(True)
    rv = metadata.new_metadata_request_and_version(now)
    assert not rv.is_partial_update
    update(rv)
    assert not metadata.update_requested()
    # 2. New topics only: partial.
    metadata.request_update_for_new_topics()
    rv = metadata.new_metadata_request_and_version(now)
    assert rv.is_partial_update
    update(rv)
    assert not metadata.update_requested()
    # 3. Both: full.
    metadata.request_update(True)
    metadata.request_update_for_new_topics()
    rv = metadata.new_metadata_request_and_version(now)
    assert not rv.is_partial_update
    update(rv)
    assert not metadata.update_requested()
    # 4. New topics, but the metadata has expired: full.
    metadata.request_update_for_new_topics()
    refresh_time = now + METADATA_EXPIRE_MS
    rv = metadata.new_metadata_request_and_version(refresh_time)
    assert not rv.is_partial_update
    update(rv, refresh_time)
    assert not metadata.update_requested()
    # 5. Two overlapping partial updates: only the later one settles it.
    metadata.request_update_for_new_topics()
    first = metadata.new_metadata_request_and_version(refresh_time)
    assert first.is_partial_update
    metadata.request_update_for_new_topics()
    second = metadata.new_metadata_request_and_version(refresh_time)
    assert second.is_partial_update
    assert metadata.update_requested()
    metadata.update(first.request_version, update_with(None, 1, partition_counts={"topic-1": 1}), refresh_time,
                    is_partial_update=True)
    assert metadata.update_requested()
    metadata.update(second.request_version, update_with(None, 1, partition_counts={"topic-2": 1}), refresh_time,
                    is_partial_update=True)
    assert not metadata.update_requested()


def test_partial_request_names_only_new_topics() -> None:
    """After MetadataTest#testPartialMetadataUpdate: ProducerMetadata's partial request asks for the new topics only."""
    metadata = Metadata(REFRESH_BACKOFF_MS, METADATA_EXPIRE_MS, topics=(), partial_updates=True, rng=random.Random(2))
    metadata.add_topics(["a"])
    rv = metadata.new_metadata_request_and_version(0)
    assert not rv.is_partial_update and [t.name for t in rv.request.topics] == ["a"]
    metadata.update(rv.request_version, update_with("c", 1, partition_counts={"a": 1}), 0)
    metadata.add_topics(["b"])
    rv = metadata.new_metadata_request_and_version(10)
    assert rv.is_partial_update and [t.name for t in rv.request.topics] == ["b"]
    metadata.update(rv.request_version, update_with("c", 1, partition_counts={"b": 2}), 10, is_partial_update=True)
    # The merge keeps topic a; b joins it; the full update stays where it was.
    assert metadata.fetch().partition_count("a") == 1 and metadata.fetch().partition_count("b") == 2
    assert metadata.last_successful_update() == 0
    assert metadata.new_topics == set()


def test_metadata_merge() -> None:
    """Mirrors MetadataTest#testMetadataMerge."""
    metadata = Metadata(REFRESH_BACKOFF_MS, METADATA_EXPIRE_MS, topics=(), partial_updates=True, rng=random.Random(2))
    ids = {"oldValidTopic": Uuid(9, 1), "keepValidTopic": Uuid(9, 2)}
    # 1. "old" and "keep" variants, all retained.
    metadata.topics = {"oldInvalidTopic", "keepInvalidTopic", "oldUnauthorizedTopic", "keepUnauthorizedTopic",
                       "oldValidTopic", "keepValidTopic"}
    metadata.update_with_current_request_version(update_with(
        "oldClusterId", 2,
        topic_errors={"oldInvalidTopic": Errors.INVALID_TOPIC_EXCEPTION, "keepInvalidTopic": Errors.INVALID_TOPIC_EXCEPTION,
                      "oldUnauthorizedTopic": Errors.TOPIC_AUTHORIZATION_FAILED,
                      "keepUnauthorizedTopic": Errors.TOPIC_AUTHORIZATION_FAILED},
        partition_counts={"oldValidTopic": 2, "keepValidTopic": 3}, epoch=lambda tp: 100, topic_ids=ids), 0,
        is_partial_update=True)
    snapshot = metadata.fetch()
    assert snapshot.cluster_id == "oldClusterId" and len(snapshot.nodes) == 2
    assert snapshot.invalid_topics == {"oldInvalidTopic", "keepInvalidTopic"}
    assert snapshot.unauthorized_topics == {"oldUnauthorizedTopic", "keepUnauthorizedTopic"}
    assert snapshot.topics() == {"oldValidTopic", "keepValidTopic"}
    assert snapshot.partition_count("oldValidTopic") == 2 and snapshot.partition_count("keepValidTopic") == 3
    assert snapshot.topic_ids == ids
    # 2. "new" variants join "keep"; the "old" ones go.
    metadata.topics = {"keepInvalidTopic", "newInvalidTopic", "keepUnauthorizedTopic", "newUnauthorizedTopic",
                       "keepValidTopic", "newValidTopic"}
    ids["newValidTopic"] = Uuid(9, 3)
    new_response = update_with(
        "newClusterId", 3,
        topic_errors={"newInvalidTopic": Errors.INVALID_TOPIC_EXCEPTION, "newUnauthorizedTopic": Errors.TOPIC_AUTHORIZATION_FAILED},
        partition_counts={"keepValidTopic": 2, "newValidTopic": 4}, epoch=lambda tp: 200, topic_ids=ids)
    metadata.update_with_current_request_version(new_response, 0, is_partial_update=True)
    del ids["oldValidTopic"]
    snapshot = metadata.fetch()
    assert snapshot.cluster_id == "newClusterId" and len(snapshot.nodes) == 3
    assert snapshot.invalid_topics == {"keepInvalidTopic", "newInvalidTopic"}
    assert snapshot.unauthorized_topics == {"keepUnauthorizedTopic", "newUnauthorizedTopic"}
    assert snapshot.topics() == {"keepValidTopic", "newValidTopic"}
    assert snapshot.partition_count("keepValidTopic") == 2 and snapshot.partition_count("newValidTopic") == 4
    assert snapshot.topic_ids == ids
    # 3. Nothing retained: every topic is cleared.
    metadata.topics = set()
    metadata.update_with_current_request_version(new_response, 0, is_partial_update=True)
    snapshot = metadata.fetch()
    assert snapshot.cluster_id == "newClusterId" and len(snapshot.nodes) == 3
    assert snapshot.invalid_topics == frozenset() and snapshot.unauthorized_topics == frozenset()
    assert snapshot.topics() == set() and snapshot.topic_ids == {}


def test_metadata_merge_on_id_downgrade() -> None:
    """Mirrors MetadataTest#testMetadataMergeOnIdDowngrade: a response without a topic id removes it."""
    metadata = Metadata(REFRESH_BACKOFF_MS, METADATA_EXPIRE_MS, topics=("validTopic1", "validTopic2"),
                        partial_updates=True, rng=random.Random(2))
    ids = {"validTopic1": Uuid(10, 1), "validTopic2": Uuid(10, 2)}
    counts = {"validTopic1": 2, "validTopic2": 3}
    metadata.update_with_current_request_version(update_with("clusterId", 2, partition_counts=counts, epoch=lambda tp: 100,
                                                             topic_ids=ids), 0, is_partial_update=True)
    assert metadata.fetch().topic_ids == ids
    # The controller's older IBP: validTopic1 comes without an id.
    del ids["validTopic1"]
    metadata.update_with_current_request_version(update_with("clusterId", 2, partition_counts=counts, epoch=lambda tp: 200,
                                                             topic_ids=ids), 0, is_partial_update=True)
    snapshot = metadata.fetch()
    assert snapshot.topic_ids == ids
    assert snapshot.topics() == {"validTopic1", "validTopic2"}
    assert snapshot.partition_count("validTopic1") == 2
    assert snapshot.topic_ids.get("validTopic1") is None
