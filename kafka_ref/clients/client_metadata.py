"""What a client knows about the cluster.

Mirrors org.apache.kafka.clients.Metadata (the client's metadata cache and its refresh rules) and
org.apache.kafka.clients.MetadataSnapshot / org.apache.kafka.common.Cluster (one immutable view
of it). How a client talks to brokers (org.apache.kafka.clients.NetworkClient) is in
network_client.py.

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
  a failed attempt;
- between refreshes, a partition's leader may move to the newer leader a Produce or Fetch answer
  names (KIP-951, ``update_partition_leadership``: NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH
  with ``current_leader`` and the leaders' ``node_endpoints``), which the Sender and the
  consumer's Fetcher apply as Kafka 3.8's clients do.

Brokers are addressed by id on the in-process network; ``Node`` keeps host and port only to
mirror what Kafka reports.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import structlog

from kafka_ref.clients.cluster_connection_states import ExponentialBackoff
from kafka_ref.common.node import Node  # noqa: F401  (re-exported: the clients' name for it)
from kafka_ref.common.errors import (
    Errors,
    IllegalStateException,
    InvalidMetadataException,
    InvalidTopicException,
    KafkaException,
    TopicAuthorizationException,
)
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid


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

    def leader_epoch_for(self, tp: TopicPartition) -> int | None:
        """Mirrors org.apache.kafka.clients.MetadataSnapshot#leaderEpochFor: the cached partition's leader epoch, if any."""
        partition = self.partitions.get(tp)
        return None if partition is None else partition.leader_epoch

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

    # Whether a full update drops the topics retain_topic refuses (a class's property: ConsumerMetadata does).
    filters_response = False

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
            # Only a Metadata with topic expiry (the producer's), the consumer's (ConsumerMetadata) or a
            # partial update filters the response by its topics; the admin's keeps whatever the broker sent.
            if ((self.metadata_idle_ms is not None or is_partial_update or self.filters_response)
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


class ConsumerMetadata(Metadata):
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerMetadata.

    The consumer's metadata follows its SubscriptionState (``subscriptions``): under a pattern
    subscription every request asks for all topics, and a response keeps the wanted topics (those
    subscribed, assigned or looked up: ``topics``) and the other topics the pattern matches, an
    internal topic only with ``include_internal_topics`` (exclude.internal.topics=false).
    """

    filters_response = True

    def __init__(self, refresh_backoff_ms: int = 100, metadata_expire_ms: int = 300000, *,
                 subscriptions: Any, include_internal_topics: bool = False, **kwargs: Any) -> None:
        super().__init__(refresh_backoff_ms, metadata_expire_ms, **kwargs)
        self.subscriptions = subscriptions
        self.include_internal_topics = include_internal_topics

    def new_metadata_request_and_version(self, now_ms: int = 0) -> MetadataRequestAndVersion:
        """Mirrors ConsumerMetadata#newMetadataRequestBuilder: all topics for a pattern subscription,
        otherwise the wanted topics."""
        if self.subscriptions.has_pattern_subscription():
            return MetadataRequestAndVersion(MetadataRequest.all_topics(), self.request_version, False)
        return super().new_metadata_request_and_version(now_ms)

    def retain_topic(self, topic: str, is_internal: bool, now_ms: int) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerMetadata#retainTopic.

        1. A wanted topic is kept; 2. an internal one is dropped unless internal topics are
        included; 3. otherwise it is kept when the subscribed pattern matches it.
        """
        # 1. Wanted (SubscriptionState#needsMetadata, or a transient topic).
        if self.topics is None or topic in self.topics:
            return True
        # 2. exclude.internal.topics.
        if is_internal and not self.include_internal_topics:
            return False
        # 3. The pattern.
        return self.subscriptions.matches_subscribed_pattern(topic)


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
