"""What a client knows about the cluster, and how it talks to brokers.

Mirrors org.apache.kafka.clients.Metadata (the client's metadata cache and its refresh rules),
org.apache.kafka.clients.MetadataSnapshot / org.apache.kafka.common.Cluster (one immutable view
of it), and the parts of org.apache.kafka.clients.NetworkClient a client in this process needs:
connection states with reconnect backoff (cluster_connection_states.py), in-flight counts per
broker, the least-loaded node, and the DefaultMetadataUpdater that sends MetadataRequests and
hears of every disconnection.

Every client (Producer, Consumer, Admin) owns one ``Metadata`` and one ``NetworkClient``. The
metadata follows Kafka 3.8 rules, including KIP-580's exponential refresh backoff (failed
attempts, and consecutive responses that changed nothing, back off from ``retry.backoff.ms``
towards ``retry.backoff.max.ms`` with ±20 % jitter):

- an update is *requested* (after an error that means the cached leader is stale) and then
  happens as soon as the refresh backoff has passed since the last attempt; a topic the
  client has not seen before is fetched at once; without requests, metadata older than
  ``metadata_max_age_ms`` is refreshed anyway;
- a partition's metadata is replaced only by a response with the same or a newer leader epoch,
  so a broker with a stale metadata cache cannot move the client back to an old leader;
- a response listing no brokers (a broker that has not received UpdateMetadata yet) counts as
  a failed attempt.

Brokers are addressed by id on the in-process network; ``Node`` keeps host and port only to
mirror what Kafka reports.
"""

from __future__ import annotations

import dataclasses
import math
import random
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import anyio
import structlog

from kafka_ref.clients.cluster_connection_states import ClusterConnectionStates, ExponentialBackoff
from kafka_ref.common.node import Node  # noqa: F401  (re-exported: the clients' name for it)
from kafka_ref.common.errors import (
    Errors,
    IllegalStateException,
    InvalidMetadataException,
    InvalidTopicException,
    KafkaException,
    NetworkException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, DisconnectException, Envelope, Network


# CommonClientConfigs#RETRY_BACKOFF_EXP_BASE and #RETRY_BACKOFF_JITTER (the metadata refresh backoff).
RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2


def client_logger(**context: Any) -> Any:
    """A structlog logger for client events, configured the project's way (see state_change)."""
    state_change_logger()  # makes sure structlog is configured before the first client event
    return structlog.get_logger("kafka.clients").bind(**context)


# --------------------------------------------------------------------------------------------
# The immutable view
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    """Mirrors org.apache.kafka.clients.Metadata.LeaderAndEpoch (leader by broker id; None = unknown)."""

    leader: int | None = None
    epoch: int | None = None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """Mirrors org.apache.kafka.common.requests.MetadataResponse.PartitionMetadata.

    ``leader_id`` and ``leader_epoch`` are None when the response had none (-1).
    """

    error: Errors
    topic_partition: TopicPartition
    leader_id: int | None
    leader_epoch: int | None
    replica_ids: tuple[int, ...] = ()
    in_sync_replica_ids: tuple[int, ...] = ()
    offline_replica_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """Mirrors org.apache.kafka.clients.MetadataSnapshot and the queries of org.apache.kafka.common.Cluster.

    One consistent view: live brokers, the controller, partitions and topic ids, plus the
    topics the last response called invalid or unauthorized.
    """

    cluster_id: str | None = None
    nodes: dict[int, Node] = field(default_factory=dict)
    controller_id: int | None = None
    partitions: dict[TopicPartition, PartitionMetadata] = field(default_factory=dict)
    topic_ids: dict[str, Uuid] = field(default_factory=dict)
    unauthorized_topics: frozenset[str] = frozenset()
    invalid_topics: frozenset[str] = frozenset()
    internal_topics: frozenset[str] = frozenset()

    def partitions_for_topic(self, topic: str) -> list[PartitionMetadata]:
        """Mirrors org.apache.kafka.common.Cluster#partitionsForTopic (sorted by partition)."""
        return sorted((p for tp, p in self.partitions.items() if tp.topic == topic), key=lambda p: p.topic_partition.partition)

    def partition_count(self, topic: str) -> int | None:
        """Mirrors org.apache.kafka.common.Cluster#partitionCountForTopic (None: topic unknown)."""
        count = sum(1 for tp in self.partitions if tp.topic == topic)
        return count or None

    def available_partitions(self, topic: str) -> list[int]:
        """Mirrors org.apache.kafka.common.Cluster#availablePartitionsForTopic: partitions with a live leader."""
        return [p.topic_partition.partition for p in self.partitions_for_topic(topic) if self.leader_for(p.topic_partition) is not None]

    def leader_for(self, tp: TopicPartition) -> int | None:
        """Mirrors org.apache.kafka.common.Cluster#leaderFor: the leader's id when it is a known node."""
        partition = self.partitions.get(tp)
        if partition is None or partition.leader_id is None or partition.leader_id not in self.nodes:
            return None
        return partition.leader_id

    def node_by_id(self, node_id: int) -> Node | None:
        """Mirrors org.apache.kafka.common.Cluster#nodeById."""
        return self.nodes.get(node_id)

    def node_if_online(self, tp: TopicPartition, node_id: int) -> Node | None:
        """Mirrors org.apache.kafka.common.Cluster#nodeIfOnline: a known replica of ``tp`` that is not offline."""
        node = self.nodes.get(node_id)
        partition = self.partitions.get(tp)
        if (node is None or partition is None or node_id in partition.offline_replica_ids
                or node_id not in partition.replica_ids):
            return None
        return node

    def merge_with(self, cluster_id: str | None, nodes: dict[int, Node], add_partitions: Iterable[PartitionMetadata],
                   add_unauthorized: Iterable[str], add_invalid: Iterable[str], add_internal: Iterable[str],
                   controller_id: int | None, add_topic_ids: dict[str, Uuid],
                   retain_topic: Callable[[str, bool], bool]) -> MetadataSnapshot:
        """Mirrors org.apache.kafka.clients.MetadataSnapshot#mergeWith.

        The new partitions, plus this view's partitions of retained topics; topic ids of retained
        topics, replaced (or removed, when the response has none) for the topics in the response.
        """
        def retained(topic: str) -> bool:
            return retain_topic(topic, topic in self.internal_topics)

        # 1. Topic ids of retained topics, then the response's (a topic without one loses it).
        topic_ids = {topic: tid for topic, tid in self.topic_ids.items() if retained(topic)}
        partitions: dict[TopicPartition, PartitionMetadata] = {}
        for partition in add_partitions:
            partitions[partition.topic_partition] = partition
            tid = add_topic_ids.get(partition.topic_partition.topic)
            if tid is not None:
                topic_ids[partition.topic_partition.topic] = tid
            else:
                topic_ids.pop(partition.topic_partition.topic, None)
        # 2. Partitions of retained topics not in the response.
        for tp, partition in self.partitions.items():
            if retained(tp.topic):
                partitions.setdefault(tp, partition)
        # 3. Topic error and internal sets: the new ones plus the retained old ones.
        return MetadataSnapshot(
            cluster_id=cluster_id,
            nodes=dict(nodes),
            controller_id=controller_id,
            partitions=partitions,
            topic_ids=topic_ids,
            unauthorized_topics=frozenset(add_unauthorized) | {t for t in self.unauthorized_topics if retained(t)},
            invalid_topics=frozenset(add_invalid) | {t for t in self.invalid_topics if retained(t)},
            internal_topics=frozenset(add_internal) | {t for t in self.internal_topics if retained(t)},
        )

    def topics(self) -> set[str]:
        """Mirrors org.apache.kafka.common.Cluster#topics."""
        return {tp.topic for tp in self.partitions}


# --------------------------------------------------------------------------------------------
# The mutable cache and its refresh rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetadataRequestAndVersion:
    """Mirrors org.apache.kafka.clients.Metadata.MetadataRequestAndVersion."""

    request: MetadataRequest
    request_version: int
    is_partial_update: bool


class Metadata:
    """Mirrors org.apache.kafka.clients.Metadata (with ProducerMetadata/ConsumerMetadata's topic set).

    ``topics`` are the topics this client wants metadata for; ``None`` asks for every topic.
    ``refresh_backoff_ms`` / ``refresh_backoff_max_ms`` are ``retry.backoff.ms`` /
    ``retry.backoff.max.ms`` (KIP-580); the jitter draws from ``rng`` (Kafka: ThreadLocalRandom),
    seeded so a simulation replays exactly. ``refresh_backoff_max_ms`` defaults to Kafka 3.8's
    ``retry.backoff.max.ms`` (1000); None makes the backoff the constant ``refresh_backoff_ms``
    without jitter (ExponentialBackoff with max = initial, Kafka before 3.7).
    """

    def __init__(
        self,
        refresh_backoff_ms: int = 100,
        metadata_expire_ms: int = 300000,
        *,
        topics: Iterable[str] | None = (),
        allow_auto_topic_creation: bool = True,
        refresh_backoff_max_ms: int | None = 1000,
        rng: random.Random | None = None,
        metadata_idle_ms: int | None = None,
        partial_updates: bool = False,
    ) -> None:
        self.refresh_backoff_ms = refresh_backoff_ms
        self.refresh_backoff = ExponentialBackoff(refresh_backoff_ms, RETRY_BACKOFF_EXP_BASE,
                                                  refresh_backoff_ms if refresh_backoff_max_ms is None else refresh_backoff_max_ms,
                                                  RETRY_BACKOFF_JITTER, rng or random.Random("metadata-refresh-backoff"))
        self.metadata_expire_ms = metadata_expire_ms
        self.topics: set[str] | None = None if topics is None else set(topics)
        # ProducerMetadata's topic expiry (metadata.max.idle.ms): a topic not used for that long
        # is dropped from the wanted set; None (consumer, admin) keeps topics until removed.
        self.metadata_idle_ms = metadata_idle_ms
        self.topic_expiry_ms: dict[str, int] = {}
        self.new_topics: set[str] = set()
        # ProducerMetadata#newMetadataRequestBuilderForNewTopics: ask for new topics only while
        # the rest is fresh (the base Metadata and ConsumerMetadata always send full requests).
        self.partial_updates = partial_updates
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self.snapshot = MetadataSnapshot()
        self.last_refresh_ms = 0
        self.last_successful_refresh_ms = 0
        self.attempts = 0
        self.request_version = 0
        self.update_version = 0
        self.need_full_update = True
        self.need_partial_update = False
        self.equivalent_response_count = 0
        self.is_closed = False
        self.last_seen_leader_epochs: dict[TopicPartition, int] = {}
        self.invalid_topics: set[str] = set()
        self.unauthorized_topics: set[str] = set()
        # ClusterResourceListeners: called with the cluster id after every update.
        self.cluster_resource_listeners: list[Callable[[str | None], None]] = []
        self._log = client_logger()

    # -- reading ---------------------------------------------------------------------------

    def fetch(self) -> MetadataSnapshot:
        """Mirrors org.apache.kafka.clients.Metadata#fetch: the current view, without waiting."""
        return self.snapshot

    def last_seen_leader_epoch(self, tp: TopicPartition) -> int | None:
        """Mirrors org.apache.kafka.clients.Metadata#lastSeenLeaderEpoch."""
        return self.last_seen_leader_epochs.get(tp)

    def last_successful_update(self) -> int:
        """Mirrors org.apache.kafka.clients.Metadata#lastSuccessfulUpdate."""
        return self.last_successful_refresh_ms

    def partition_metadata_if_current(self, tp: TopicPartition) -> PartitionMetadata | None:
        """Mirrors org.apache.kafka.clients.Metadata#partitionMetadataIfCurrent.

        The cached partition, unless a newer leader epoch than its own has been seen.
        """
        # 1. No epoch seen (old format): whatever is cached.
        epoch = self.last_seen_leader_epochs.get(tp)
        partition = self.snapshot.partitions.get(tp)
        if epoch is None or partition is None:
            return partition
        # 2. Cached metadata of another epoch is not current.
        return partition if partition.leader_epoch == epoch else None

    def current_leader(self, tp: TopicPartition) -> LeaderAndEpoch:
        """Mirrors org.apache.kafka.clients.Metadata#currentLeader.

        The cached leader and epoch, unless a newer epoch has been seen elsewhere (then the
        leader is unknown and only the epoch is reported).
        """
        # 1. Cached metadata that is current for the last epoch seen.
        partition = self.partition_metadata_if_current(tp)
        # 2. No current metadata: leader unknown.
        if partition is None:
            return LeaderAndEpoch(None, self.last_seen_leader_epochs.get(tp))
        return LeaderAndEpoch(self.snapshot.leader_for(tp), partition.leader_epoch)

    def time_to_allow_update(self, now_ms: int) -> int:
        """Mirrors org.apache.kafka.clients.Metadata#timeToAllowUpdate (KIP-580's exponential backoff).

        Two backoffs, each drawn with jitter at every call as Kafka does: one for failed
        attempts, one for consecutive responses that changed nothing (stale metadata).
        """
        # 1. Backoff for failed attempts since the last success.
        backoff_for_attempts = max(
            self.last_refresh_ms + self.refresh_backoff.backoff(self.attempts - 1 if self.attempts > 0 else 0) - now_ms, 0)
        # 2. Expired metadata starts the equivalent-response count over.
        if max(self.last_successful_refresh_ms + self.metadata_expire_ms - now_ms, 0) == 0:
            self.equivalent_response_count = 0
        # 3. Backoff for responses that made no progress.
        equivalent_backoff = (self.refresh_backoff.backoff(self.equivalent_response_count - 1)
                              if self.equivalent_response_count > 0 else 0)
        backoff_for_equivalent = max(self.last_refresh_ms + equivalent_backoff - now_ms, 0)
        return max(backoff_for_attempts, backoff_for_equivalent)

    def time_to_next_update(self, now_ms: int) -> int:
        """Mirrors org.apache.kafka.clients.Metadata#timeToNextUpdate.

        0 once an update is requested and the backoff has passed; otherwise the time until
        the metadata expires.
        """
        time_to_expire = 0 if self.update_requested() else max(self.last_successful_refresh_ms + self.metadata_expire_ms - now_ms, 0)
        return max(time_to_expire, self.time_to_allow_update(now_ms))

    def update_requested(self) -> bool:
        """Mirrors org.apache.kafka.clients.Metadata#updateRequested."""
        return self.need_full_update or self.need_partial_update

    # -- asking for updates ----------------------------------------------------------------

    def request_update(self, reset_equivalent_response_backoff: bool = False) -> int:
        """Mirrors org.apache.kafka.clients.Metadata#requestUpdate: refresh after the backoff.

        ``reset_equivalent_response_backoff`` is True where new metadata is wanted, False (the
        default here, as at most of Kafka's call sites) where an operation is being retried.
        """
        self.need_full_update = True
        if reset_equivalent_response_backoff:
            self.equivalent_response_count = 0
        return self.update_version

    def request_update_for_new_topics(self) -> int:
        """Mirrors org.apache.kafka.clients.Metadata#requestUpdateForNewTopics: refresh at once."""
        self.last_refresh_ms = 0
        self.need_partial_update = True
        self.equivalent_response_count = 0
        self.request_version += 1
        return self.update_version

    def add_topics(self, topics: Iterable[str], now_ms: int | None = None) -> None:
        """Mirrors ProducerMetadata#add / ConsumerMetadata#setTopics: want these topics too.

        With topic expiry, each use (``now_ms``) pushes the topic's expiry to
        ``now_ms + metadata_idle_ms``; a topic not wanted before is fetched at once.
        """
        if self.topics is None:
            return
        topics = set(topics)
        # 1. Every use of a topic keeps it alive for metadata.max.idle.ms.
        if self.metadata_idle_ms is not None and now_ms is not None:
            for topic in topics:
                self.topic_expiry_ms[topic] = now_ms + self.metadata_idle_ms
        # 2. New topics: fetch them at once.
        new = topics - self.topics
        if new:
            self.topics |= new
            self.new_topics |= new
            self.request_update_for_new_topics()

    def retain_topic(self, topic: str, is_internal: bool, now_ms: int) -> bool:
        """Mirrors ProducerMetadata#retainTopic (Metadata#retainTopic keeps everything).

        A topic not wanted is dropped; a new one is kept until its first metadata; one unused
        past its expiry is removed from the wanted set now.
        """
        # 1. Every topic wanted (the base Metadata).
        if self.topics is None:
            return True
        # 2. Not wanted; or new and still waiting for its metadata.
        if topic not in self.topics:
            return False
        if topic in self.new_topics:
            return True
        # 3. Expired: forget it.
        expiry = self.topic_expiry_ms.get(topic)
        if expiry is not None and expiry <= now_ms:
            self._log.debug("removing_unused_topic", topic=topic, expiry_ms=expiry, now_ms=now_ms)
            self.topics.discard(topic)
            del self.topic_expiry_ms[topic]
            return False
        return True

    def new_metadata_request_and_version(self, now_ms: int = 0) -> MetadataRequestAndVersion:
        """Mirrors org.apache.kafka.clients.Metadata#newMetadataRequestAndVersion.

        A partial request (the new topics only) when partial updates are on, no full update is
        wanted and the metadata has not expired; otherwise every wanted topic.
        """
        # 1. Partial: only while the last full update is still fresh.
        if (self.partial_updates and not self.need_full_update
                and self.last_successful_refresh_ms + self.metadata_expire_ms > now_ms):
            request = MetadataRequest.for_topics(sorted(self.new_topics), self.allow_auto_topic_creation)
            return MetadataRequestAndVersion(request, self.request_version, True)
        # 2. Full.
        if self.topics is None:
            request = MetadataRequest.all_topics()
        else:
            request = MetadataRequest.for_topics(sorted(self.topics), self.allow_auto_topic_creation)
        return MetadataRequestAndVersion(request, self.request_version, False)

    def update_last_seen_epoch_if_newer(self, tp: TopicPartition, leader_epoch: int) -> bool:
        """Mirrors org.apache.kafka.clients.Metadata#updateLastSeenEpochIfNewer.

        A newer epoch learnt from a fetched batch or response makes the cached leader stale:
        remember it and request an update. Without an epoch on record nothing changes.
        """
        # 1. A negative epoch is a caller bug (IllegalArgumentException).
        if leader_epoch < 0:
            raise ValueError(f"Invalid leader epoch {leader_epoch} (must be non-negative)")
        # 2. Only an epoch newer than one on record replaces it.
        old = self.last_seen_leader_epochs.get(tp)
        updated = old is not None and leader_epoch > old
        if updated:
            self.last_seen_leader_epochs[tp] = leader_epoch
        # 3. A newer epoch means the cached leader is stale.
        self.need_full_update = self.need_full_update or updated
        return updated

    # -- applying responses ----------------------------------------------------------------

    def failed_update(self, now_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#failedUpdate: the attempt counts for the backoff."""
        self.last_refresh_ms = now_ms
        self.attempts += 1
        self.equivalent_response_count = 0

    def close(self) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#close: no more updates."""
        self.is_closed = True

    def update_with_current_request_version(self, response: MetadataResponse, now_ms: int, *,
                                            is_partial_update: bool = False) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#updateWithCurrentRequestVersion."""
        self.update(self.request_version, response, now_ms, is_partial_update=is_partial_update)

    def update(self, request_version: int, response: MetadataResponse, now_ms: int, *,
               is_partial_update: bool = False) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#update and #handleMetadataResponse.

        A partial update (new topics only) is merged into the current view and leaves a full
        update that was due still due.
        """
        # 1. A closed metadata takes no more updates.
        if self.is_closed:
            raise IllegalStateException("Update requested after metadata close")
        # 2. Bookkeeping: this attempt succeeded; topics added meanwhile still need a fetch. The
        #    equivalent-response count goes up; a response that changes a partition's leader
        #    epoch (or topic id, or has none) resets it in _update_latest_metadata.
        self.need_partial_update = request_version < self.request_version
        self.last_refresh_ms = now_ms
        self.attempts = 0
        self.update_version += 1
        if not is_partial_update:
            self.need_full_update = False
            self.last_successful_refresh_ms = now_ms
        self.equivalent_response_count += 1
        previous_cluster_id = self.snapshot.cluster_id
        # 3. Topics: partitions of healthy topics (epoch-checked), errors remembered.
        partitions: dict[TopicPartition, PartitionMetadata] = {}
        topic_ids: dict[str, Uuid] = {}
        old_topic_ids = self.snapshot.topic_ids
        unauthorized: set[str] = set()
        invalid: set[str] = set()
        internal: set[str] = set()
        for topic in response.topics:
            name = topic.name or ""
            topic_id: Uuid | None = None
            old_topic_id: Uuid | None = None
            if topic.topic_id != ZERO_UUID:
                topic_id = topic_ids[name] = topic.topic_id
                old_topic_id = old_topic_ids.get(name)
            # Only a Metadata with topic expiry (the producer's) or a partial update filters the
            # response by its topics; the others keep whatever the broker sent, as they always have here.
            if ((self.metadata_idle_ms is not None or is_partial_update)
                    and not self.retain_topic(name, topic.is_internal, now_ms)):
                continue
            if topic.is_internal:
                internal.add(name)
            error = Errors.for_code(topic.error_code)
            if error is Errors.NONE:
                for p in topic.partitions:
                    latest = self._update_latest_metadata(_partition_metadata(name, p), topic_id, old_topic_id)
                    if latest is not None:
                        partitions[latest.topic_partition] = latest
                    if isinstance(Errors.for_code(p.error_code).exception(), InvalidMetadataException):
                        self.request_update(False)
            else:
                if isinstance(error.exception(), InvalidMetadataException):
                    self.request_update(False)
                if error is Errors.INVALID_TOPIC_EXCEPTION:
                    invalid.add(name)
                elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                    unauthorized.add(name)
        # 4. The new view replaces the old one (a partial one is merged into it).
        nodes = {b.node_id: Node(b.node_id, b.host, b.port, b.rack) for b in response.brokers}
        controller_id = response.controller_id if response.controller_id >= 0 else None
        if is_partial_update:
            in_response = {topic.name or "" for topic in response.topics}
            self.snapshot = self.snapshot.merge_with(
                response.cluster_id, nodes, partitions.values(), unauthorized, invalid, internal, controller_id,
                topic_ids, lambda topic, is_internal: topic not in in_response and self.retain_topic(topic, is_internal, now_ms))
        else:
            self.snapshot = MetadataSnapshot(
                cluster_id=response.cluster_id,
                nodes=nodes,
                controller_id=controller_id,
                partitions=partitions,
                topic_ids=topic_ids,
                unauthorized_topics=frozenset(unauthorized),
                invalid_topics=frozenset(invalid),
                internal_topics=frozenset(internal),
            )
        # 5. Errors for callers to raise (maybeSetMetadataError); forget epochs of topics no longer wanted.
        self.invalid_topics = set(self.snapshot.invalid_topics)
        self.unauthorized_topics = set(self.snapshot.unauthorized_topics)
        for tp in [tp for tp in self.last_seen_leader_epochs if not self.retain_topic(tp.topic, False, now_ms)]:
            del self.last_seen_leader_epochs[tp]
        # 6. New topics in the response have had their first metadata (ProducerMetadata#update).
        if self.new_topics:
            self.new_topics -= {topic.name or "" for topic in response.topics}
        # 7. A new cluster id is logged (debug: info-level client events go to the simulator timeline);
        #    listeners hear of every update.
        if previous_cluster_id != response.cluster_id:
            self._log.debug("cluster_id", cluster_id=response.cluster_id)
        for listener in self.cluster_resource_listeners:
            listener(response.cluster_id)

    def _update_latest_metadata(self, partition: PartitionMetadata, topic_id: Uuid | None = None,
                                old_topic_id: Uuid | None = None) -> PartitionMetadata | None:
        """Mirrors org.apache.kafka.clients.Metadata#updateLatestMetadata.

        Which partition metadata to cache, ordered by leader epoch; a topic that was recreated
        (new topic id) starts its epochs over.
        """
        tp = partition.topic_partition
        # 1. No epoch in the response: take it as it is and forget the epoch.
        if partition.leader_epoch is None:
            self.last_seen_leader_epochs.pop(tp, None)
            self.equivalent_response_count = 0
            return partition
        new_epoch = partition.leader_epoch
        current = self.last_seen_leader_epochs.get(tp)
        # 2. First epoch seen: take it.
        if current is None:
            self.last_seen_leader_epochs[tp] = new_epoch
            self.equivalent_response_count = 0
            return partition
        # 3. A new topic id (the topic was recreated): its epoch replaces ours, even if lower.
        if topic_id is not None and topic_id != old_topic_id:
            self._log.debug("leader_epoch_reset_for_new_topic_id", partition=str(tp), epoch=new_epoch,
                           old_topic_id=str(old_topic_id), topic_id=str(topic_id))
            self.last_seen_leader_epochs[tp] = new_epoch
            self.equivalent_response_count = 0
            return partition
        # 4. Not older than the last one: take it (a newer one is progress).
        if new_epoch >= current:
            self.last_seen_leader_epochs[tp] = new_epoch
            if new_epoch > current:
                self.equivalent_response_count = 0
            return partition
        # 5. An older epoch (a stale broker): keep what we had.
        return self.snapshot.partitions.get(tp)

    def update_partition_leadership(self, partition_leaders: dict[TopicPartition, LeaderAndEpoch],
                                    leader_nodes: Iterable[Node]) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.Metadata#updatePartitionLeadership (KIP-951).

        New leaders learnt from a Produce or Fetch response are merged into the cached
        metadata; returns the partitions whose leader changed.
        """
        # 1. The given nodes, then the cached ones not among them.
        new_nodes = {node.id: node for node in leader_nodes}
        for node_id, node in self.snapshot.nodes.items():
            new_nodes.setdefault(node_id, node)
        # 2. Keep only complete, newer leaders on a known node for a partition still cached.
        updated: dict[TopicPartition, PartitionMetadata] = {}
        for tp, new_leader in partition_leaders.items():
            current = self.current_leader(tp)
            if new_leader.epoch is None or new_leader.leader is None:
                continue
            if current.epoch is not None and new_leader.epoch <= current.epoch:
                continue
            if new_leader.leader not in new_nodes:
                continue
            existing = self.snapshot.partitions.get(tp)
            if existing is None:
                continue
            updated[tp] = dataclasses.replace(existing, leader_id=new_leader.leader, leader_epoch=new_leader.epoch)
            self.last_seen_leader_epochs[tp] = new_leader.epoch
        if not updated:
            return set()
        # 3. Merge: the updated partitions replace theirs, everything else is kept
        #    (MetadataSnapshot#mergeWith).
        self.snapshot = dataclasses.replace(self.snapshot, nodes=new_nodes,
                                            partitions={**self.snapshot.partitions, **updated})
        for listener in self.cluster_resource_listeners:
            listener(self.snapshot.cluster_id)
        return set(updated)

    def maybe_throw_exception_for_topic(self, topic: str) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#maybeThrowExceptionForTopic.

        Raises the topic's error (authorization before invalid); every recoverable error is
        cleared either way (#clearErrorsAndMaybeThrowException).
        """
        # 1. The topic's error, if any.
        exception: KafkaException | None = None
        if topic in self.unauthorized_topics:
            exception = TopicAuthorizationException(f"Not authorized to access topics: [{topic}]")
        elif topic in self.invalid_topics:
            exception = InvalidTopicException(f"Invalid topics: [{topic}]")
        # 2. All recoverable errors are cleared.
        self.invalid_topics, self.unauthorized_topics = set(), set()
        if exception is not None:
            raise exception

    def maybe_throw_any_exception(self) -> None:
        """Mirrors org.apache.kafka.clients.Metadata#maybeThrowAnyException (authorization before invalid)."""
        invalid, unauthorized = sorted(self.invalid_topics), sorted(self.unauthorized_topics)
        self.invalid_topics, self.unauthorized_topics = set(), set()
        if unauthorized:
            raise TopicAuthorizationException(f"Not authorized to access topics: [{', '.join(unauthorized)}]")
        if invalid:
            raise InvalidTopicException(f"Invalid topics: [{', '.join(invalid)}]")


def _partition_metadata(topic: str, p: Any) -> PartitionMetadata:
    return PartitionMetadata(
        error=Errors.for_code(p.error_code),
        topic_partition=TopicPartition(topic, p.partition_index),
        leader_id=p.leader_id if p.leader_id >= 0 else None,
        leader_epoch=p.leader_epoch if p.leader_epoch >= 0 else None,
        replica_ids=tuple(p.replica_nodes),
        in_sync_replica_ids=tuple(p.isr_nodes),
        offline_replica_ids=tuple(p.offline_replicas),
    )


# --------------------------------------------------------------------------------------------
# Talking to brokers
# --------------------------------------------------------------------------------------------


# NetworkClient's max.in.flight.requests.per.connection when none is given (Integer.MAX_VALUE).
MAX_IN_FLIGHT_UNBOUNDED = 2**31 - 1


@dataclass(frozen=True, slots=True)
class LeastLoadedNode:
    """Mirrors org.apache.kafka.clients.LeastLoadedNode: the node (None: none) and whether a connection is ready."""

    node: int | None
    at_least_one_connection_ready: bool

    @property
    def has_node_available_or_connection_ready(self) -> bool:
        """Mirrors LeastLoadedNode#hasNodeAvailableOrConnectionReady."""
        return self.node is not None or self.at_least_one_connection_ready


class NetworkClient:
    """Mirrors org.apache.kafka.clients.NetworkClient (connections, in-flight counts, least-loaded node, metadata updates).

    Requests go out as ``client_id`` with the ``User:ANONYMOUS`` principal. Connection state
    per broker lives in ``connection_states`` (ClusterConnectionStates): a broker that refused a
    connection, dropped one or let a request time out is disconnected and blacked out for its
    reconnect backoff (exponential, ``reconnect_backoff_ms`` up to ``reconnect_backoff_max_ms``).
    Every disconnection asks for a metadata update, since it may mean the metadata is stale
    (DefaultMetadataUpdater#handleServerDisconnect), and fails every request still in flight on
    that connection; a connection is disconnected once, however many requests were waiting on
    it (the client's own ``disconnect`` asks for no update). Transport failures surface as
    Kafka's NetworkException (DisconnectException) or TimeoutException (NetworkTimeoutException).
    A response's ``throttle_time_ms`` holds the connection back (KIP-219), and
    ``max_in_flight_requests_per_connection`` (unbounded unless given) caps what #isReady
    allows.

    A connection attempt here succeeds or fails at once (the broker is up on the in-process
    network or not), so ``ready(node)`` connects in the same step; a connection the client
    holds to a broker that has since crashed is noticed (as Kafka's selector notices the
    closed socket) the next time the client looks at that node.
    """

    def __init__(
        self,
        network: Network,
        client_id: str,
        bootstrap_brokers: Iterable[int],
        metadata: Metadata,
        *,
        time: Time | None = None,
        request_timeout_ms: int = 30000,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        max_in_flight_requests_per_connection: int = MAX_IN_FLIGHT_UNBOUNDED,
        principal: str = ANONYMOUS_PRINCIPAL,
        rng: random.Random | None = None,
    ) -> None:
        self.network = network
        self.client_id = client_id
        self.bootstrap_brokers = list(bootstrap_brokers)
        if not self.bootstrap_brokers:
            raise KafkaException("bootstrap_brokers must name at least one broker")
        self.metadata = metadata
        self.time = time or Time()
        self.request_timeout_ms = request_timeout_ms
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self.max_in_flight_requests_per_connection = max_in_flight_requests_per_connection
        self.principal = principal
        # Kafka draws the least-loaded node's starting offset and the backoff jitter at random;
        # a stream seeded from the client id keeps runs replayable.
        self.rng = rng or random.Random(f"network-client/{client_id}")
        self.connection_states = ClusterConnectionStates(
            reconnect_backoff_ms, reconnect_backoff_max_ms, self.rng,
            setup_timeout_rng=random.Random(f"connection-setup-timeout/{client_id}"))
        # Requests being waited for, per broker (InFlightRequests#count).
        self.in_flight: dict[int, int] = {}
        # Every request posted on a connection and not yet forgotten (the InFlightRequests queue
        # that NetworkClient#cancelInFlightRequests fails when the connection closes), and the
        # connection each went out on: a failure is processed as a disconnection only while that
        # connection is still the node's current one (one disconnection per connection).
        self._sent: dict[int, weakref.WeakSet[Envelope]] = {}
        self._sent_on: weakref.WeakKeyDictionary[Envelope, int] = weakref.WeakKeyDictionary()
        self._connection_ids: dict[int, int] = {}
        self.metadata_listeners: list[Callable[[], None]] = []
        self._metadata_fetch: anyio.Event | None = None
        # Envelopes whose failure was already handled (refused at post, or cancelled with their
        # connection): their waiters do not process the disconnection again.
        self._failed_at_post: weakref.WeakSet[Envelope] = weakref.WeakSet()
        self._log = client_logger(client_id=client_id)

    # -- connections -----------------------------------------------------------------------

    def _check_connection(self, node: int, now: int) -> None:
        """Mirrors the disconnect detection of NetworkClient#poll (Selector#disconnected) for one node.

        A connection the client believes READY to a broker that is no longer up is processed
        as a disconnection now.
        """
        if self.connection_states.is_ready(node) and not self.network.is_up(node):
            self.process_disconnection(node, now)

    def can_send_request(self, node: int, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#canSendRequest.

        Connected and not throttled, and fewer than ``max_in_flight_requests_per_connection``
        requests in flight (InFlightRequests#canSendMore; a send completes at once here).
        """
        return (self.connection_states.is_ready(node, now)
                and self.in_flight.get(node, 0) < self.max_in_flight_requests_per_connection)

    def is_ready(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#isReady: a request can go to ``node`` now.

        (Kafka's #isReady also holds every request back while a metadata update is due; here the
        metadata update runs in its own task and does not need that priority.)
        """
        now = self.time.milliseconds() if now is None else now
        self._check_connection(node, now)
        return self.can_send_request(node, now)

    def ready(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#ready: sendable, or connect now if allowed."""
        now = self.time.milliseconds() if now is None else now
        # 1. Already able to send.
        if self.is_ready(node, now):
            return True
        # 2. Not blacked out: try to connect (here the attempt's outcome is known at once).
        if self.connection_states.can_connect(node, now):
            self.initiate_connect(node, now)
        return self.can_send_request(node, now)

    def _connected(self, node: int, now: int) -> bool:
        """A connection to ``node``, made now if none and allowed (ConsumerNetworkClient#trySend's #ready)."""
        self._check_connection(node, now)
        if not self.connection_states.is_ready(node) and self.connection_states.can_connect(node, now):
            self.initiate_connect(node, now)
        return self.connection_states.is_ready(node)

    def can_connect(self, node: int, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#canConnect."""
        return self.connection_states.can_connect(node, now)

    def initiate_connect(self, node: int, now: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#initiateConnect (and the connect's completion)."""
        # 1. The attempt starts (it sets the time the backoff counts from).
        self.connection_states.connecting(node, now)
        # 2. A broker that is up accepts the connection (a new connection id); otherwise it is
        #    refused and handled like any disconnection (backoff, metadata update requested).
        if self.network.is_up(node):
            self.connection_states.ready(node)
            self._connection_ids[node] = self._connection_ids.get(node, 0) + 1
        else:
            self._log.debug("connection_refused", node=node)
            self.process_disconnection(node, now)

    def process_disconnection(self, node: int, now: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#processDisconnection.

        The node enters reconnect backoff, every request still in flight on the connection
        fails (#cancelInFlightRequests), and the metadata updater hears of it.
        """
        # 1. Disconnected: blacked out for the (growing) reconnect backoff.
        self.connection_states.disconnected(node, now)
        # 2. Requests in flight on the connection fail with it.
        self._cancel_in_flight_requests(node)
        # 3. The metadata updater learns of it (and asks for an update).
        self.handle_server_disconnect(now, node)

    def disconnect(self, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#disconnect: the client closes the connection.

        Nothing happens for a node already disconnected (its backoff is not restarted); else the
        requests in flight fail and the node is disconnected (no metadata update: the client
        chose to close it).
        """
        # 1. Already disconnected: leave the backoff as it is.
        if self.connection_states.is_disconnected(node):
            return
        # 2. Fail what is in flight, then disconnect.
        now = self.time.milliseconds()
        self._cancel_in_flight_requests(node)
        self.connection_states.disconnected(node, now)

    def _cancel_in_flight_requests(self, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#cancelInFlightRequests: fail them, oldest first."""
        sent = self._sent.pop(node, None)
        if not sent:
            return
        for envelope in sorted(sent, key=lambda e: e.correlation_id):
            # Failed already (the broker went away) or failed now: either way its waiter must
            # not process this disconnection again.
            self._failed_at_post.add(envelope)
            envelope.fail(DisconnectException(f"connection to node {node} was closed"))

    def connection_failed(self, node: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#connectionFailed."""
        return self.connection_states.is_disconnected(node)

    def connection_delay(self, node: int, now: int) -> float:
        """Mirrors org.apache.kafka.clients.NetworkClient#connectionDelay."""
        return self.connection_states.connection_delay(node, now)

    def is_unavailable(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient#isUnavailable.

        The last connection attempt failed and its reconnect backoff has not passed yet.
        """
        now = self.time.milliseconds() if now is None else now
        self._check_connection(node, now)
        return self.connection_failed(node) and self.connection_delay(node, now) > 0

    # -- requests --------------------------------------------------------------------------

    def post(self, node: int, request: Any) -> Envelope:
        """Mirrors org.apache.kafka.clients.NetworkClient#send: queue a request without waiting (acks=0, or ``wait`` later).

        Connects first when there is no connection (as ConsumerNetworkClient#trySend does via
        #ready). A node in reconnect backoff is not contacted: the request fails at once with
        DisconnectException (ConsumerNetworkClient#checkDisconnects), as does one the broker refuses.
        """
        now = self.time.milliseconds()
        if not self._connected(node, now):
            envelope = Envelope(self.client_id, node, -1, request, self.principal, self.network)
            envelope.fail(DisconnectException(f"connection to node {node} failed (reconnect backoff "
                                              f"{self.connection_delay(node, now)} ms left)"))
            self._failed_at_post.add(envelope)
            return envelope
        envelope = self.network.post(self.client_id, node, request, self.principal)
        if envelope.answered and envelope.error is not None:
            self._failed_at_post.add(envelope)
            self.process_disconnection(node, now)
            return envelope
        self._sent.setdefault(node, weakref.WeakSet()).add(envelope)
        self._sent_on[envelope] = self._connection_ids.get(node, 0)
        return envelope

    async def wait(self, envelope: Envelope, timeout_ms: float | None = None) -> Any:
        """Wait for a posted request's answer, counting it in flight while waiting.

        A lost connection disconnects the node once (NetworkClient#processDisconnection), and a
        request timeout closes the connection, failing every other request in flight on it
        (NetworkClient#handleTimedOutRequests); a throttled response holds the connection back
        (NetworkClient#maybeThrottle).
        """
        node = envelope.dst
        self.in_flight[node] = self.in_flight.get(node, 0) + 1
        try:
            response = await self.network.wait(envelope, self.request_timeout_ms if timeout_ms is None else timeout_ms)
        except (NetworkException, TimeoutException):
            if envelope not in self._failed_at_post and self._sent_on.get(envelope) == self._connection_ids.get(node):
                self.process_disconnection(node, self.time.milliseconds())
            raise
        finally:
            self.in_flight[node] -= 1
        self.maybe_throttle(node, response)
        return response

    def maybe_throttle(self, node: int, response: Any) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#maybeThrottle: a broker-requested throttle (KIP-219)."""
        throttle_time_ms = getattr(response, "throttle_time_ms", 0) or 0
        if throttle_time_ms > 0:
            self.connection_states.throttle(node, self.time.milliseconds() + throttle_time_ms)

    async def send(self, node: int, request: Any, timeout_ms: float | None = None) -> Any:
        """Mirrors org.apache.kafka.clients.NetworkClient#send then #poll: the request to broker ``node`` and its response."""
        return await self.wait(self.post(node, request), timeout_ms)

    def in_flight_request_count(self, node: int | None = None) -> int:
        """Mirrors org.apache.kafka.clients.NetworkClient#inFlightRequestCount (one node, or all)."""
        if node is None:
            return sum(self.in_flight.values())
        return self.in_flight.get(node, 0)

    def has_in_flight_requests(self, node: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#hasInFlightRequests (one node, or any)."""
        return self.in_flight_request_count(node) > 0

    def least_loaded_node(self, now: int | None = None) -> int | None:
        """The node of :meth:`least_loaded` (what most callers want)."""
        return self.least_loaded(now).node

    def least_loaded(self, now: int | None = None) -> LeastLoadedNode:
        """Mirrors org.apache.kafka.clients.NetworkClient#leastLoadedNode (Kafka 3.8).

        From a random starting point among the known brokers: a broker we can send to with
        nothing in flight at once, else the one with fewest in flight, else one whose connection
        is being prepared, else the broker we may connect to whose last attempt is oldest. A
        broker in reconnect backoff is never chosen. No node: the caller waits
        ``reconnect_backoff_ms``. Before the first metadata the candidates are the bootstrap
        brokers; when no known broker is available and no connection is ready, the bootstrap
        brokers are tried as well (the re-bootstrap of KIP-899, Kafka 3.8's
        ``metadata.recovery.strategy=rebootstrap``).
        """
        now = self.time.milliseconds() if now is None else now
        known = sorted(self.metadata.fetch().nodes)
        # 1. The known brokers (the bootstrap list before the first metadata).
        result = self._least_loaded_of(known or self.bootstrap_brokers, now)
        # 2. Nothing available and no connection ready: the bootstrap list.
        if known and not result.has_node_available_or_connection_ready:
            result = self._least_loaded_of(self.bootstrap_brokers, now)
        return result

    def _least_loaded_of(self, nodes: list[int], now: int) -> LeastLoadedNode:
        if not nodes:
            return LeastLoadedNode(None, False)
        found_ready: int | None = None
        found_connecting: int | None = None
        found_can_connect: int | None = None
        fewest = math.inf
        at_least_one_connection_ready = False
        # 1. Start at a random offset so load spreads over the brokers.
        offset = self.rng.randrange(len(nodes))
        for i in range(len(nodes)):
            node = nodes[(offset + i) % len(nodes)]
            self._check_connection(node, now)
            if self.connection_states.is_ready(node, now):
                at_least_one_connection_ready = True
            # 2. Sendable: nothing in flight wins at once, else remember the least loaded.
            if self.can_send_request(node, now):
                in_flight = self.in_flight.get(node, 0)
                if in_flight == 0:
                    return LeastLoadedNode(node, True)
                if in_flight < fewest:
                    fewest, found_ready = in_flight, node
            # 3. A connection being set up.
            elif self.connection_states.is_preparing_connection(node):
                found_connecting = node
            # 4. Not connected but allowed to connect: prefer the least recently tried.
            elif self.connection_states.can_connect(node, now):
                if (found_can_connect is None or self.connection_states.last_connect_attempt_ms(found_can_connect)
                        > self.connection_states.last_connect_attempt_ms(node)):
                    found_can_connect = node
            # 5. Otherwise (reconnect backoff, throttled, or at its in-flight limit) the node is left out.
        for found in (found_ready, found_connecting, found_can_connect):
            if found is not None:
                return LeastLoadedNode(found, at_least_one_connection_ready)
        return LeastLoadedNode(None, at_least_one_connection_ready)

    # -- metadata --------------------------------------------------------------------------

    @property
    def metadata_fetch_in_progress(self) -> bool:
        """Mirrors NetworkClient.DefaultMetadataUpdater#hasFetchInProgress."""
        return self._metadata_fetch is not None

    def is_update_due(self, now: int) -> bool:
        """Mirrors NetworkClient.DefaultMetadataUpdater#isUpdateDue."""
        return not self.metadata_fetch_in_progress and self.metadata.time_to_next_update(now) == 0

    def handle_server_disconnect(self, now: int, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient.DefaultMetadataUpdater#handleServerDisconnect.

        A disconnection while an update is due counts as a failed update attempt (so the
        refresh backs off); and since it may mean our metadata names a dead broker, an update is
        requested.
        """
        # 1. A due update that meets a disconnect backs off like a failed one.
        if self.is_update_due(now):
            self.metadata.failed_update(now)
        # 2. The disconnect may come from stale metadata: ask for an update.
        self.metadata.request_update(False)

    async def maybe_update_metadata(self) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient.DefaultMetadataUpdater#maybeUpdate.

        One MetadataRequest to the least-loaded node now; if one is already in flight, wait
        for it instead of sending another. True when the metadata was updated.
        """
        # 1. Share an update already in flight.
        if self._metadata_fetch is not None:
            version = self.metadata.update_version
            await self._metadata_fetch.wait()
            return self.metadata.update_version > version
        self._metadata_fetch = anyio.Event()
        try:
            # 2. The least-loaded node; none (every broker in reconnect backoff): try again
            #    after the reconnect backoff.
            now = self.time.milliseconds()
            node = self.least_loaded_node(now)
            if node is None:
                self._log.debug("metadata_request_no_node_available")
                await self.time.sleep(self.reconnect_backoff_ms)
                return False
            # 3. Connect if needed; a refused connection is a failed attempt.
            if not self.ready(node, now):
                self.metadata.failed_update(now)
                return False
            # 4. Ask it for the topics this client wants.
            request_and_version = self.metadata.new_metadata_request_and_version(now)
            request = request_and_version.request
            try:
                response = await self.send(node, request)
            except (NetworkException, TimeoutException) as exc:
                self._log.debug("metadata_request_failed", node=node, error=repr(exc))
                self.metadata.failed_update(self.time.milliseconds())
                return False
            # 5. A broker that knows no brokers yet has nothing useful to say.
            if not response.brokers:
                self.metadata.failed_update(self.time.milliseconds())
                return False
            self.metadata.update(request_and_version.request_version, response, self.time.milliseconds(),
                                 is_partial_update=request_and_version.is_partial_update)
            return True
        finally:
            event, self._metadata_fetch = self._metadata_fetch, None
            event.set()
            for listener in self.metadata_listeners:
                listener()

    async def poll_metadata(self) -> None:
        """Refresh metadata if it is due (requested and past the backoff, or expired); else return."""
        if self.metadata.time_to_next_update(self.time.milliseconds()) == 0:
            await self.maybe_update_metadata()

    async def await_metadata_update(self, deadline_ms: int) -> None:
        """Wait out the refresh backoff (bounded by ``deadline_ms``), then refresh once."""
        wait_ms = min(self.metadata.time_to_allow_update(self.time.milliseconds()), max(deadline_ms - self.time.milliseconds(), 0))
        if wait_ms > 0:
            await self.time.sleep(wait_ms)
        if self.time.milliseconds() <= deadline_ms:
            self.metadata.request_update()
            await self.maybe_update_metadata()
