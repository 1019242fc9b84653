"""Fetch: consumers and follower replicas read records from a partition leader.

Mirrors org.apache.kafka.common.requests.FetchRequest / FetchResponse and the message schemas
FetchRequest.json / FetchResponse.json at version 16 (Kafka 3.7-3.8: topic ids, the
replica state of KIP-903 and the node endpoints of KIP-951). The topic name fields of
versions before 13 are kept beside the topic ids, because an in-process cluster always knows
both and reading by name is what Python callers want; but the request carries its version,
and from version 13 a broker names each topic by its id alone (``FetchRequest#fetchData``),
so an id it cannot resolve is UNKNOWN_TOPIC_ID whatever name rode along.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.records import MemoryRecords
from kafka_ref.common.requests.abstract import REQUEST_HEADER_FIELD, AbstractRequest, AbstractResponse, update_error_counts
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochEndOffset:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.EpochEndOffset.

    The diverging epoch of a fetch (KIP-595/KIP-320 truncation on fetch): the largest epoch
    the leader has that is not later than the follower's last fetched epoch, and where it
    ends. An epoch of -1 means no divergence was detected.
    """

    epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderIdAndEpoch:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.LeaderIdAndEpoch.

    The leader the responding broker knows of (-1 when unknown), returned with
    NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH so the client can skip a metadata refresh.
    """

    leader_id: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotId:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.SnapshotId.

    The snapshot a KRaft follower must fetch when its offset is below the log start offset.
    """

    end_offset: int = -1
    epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class AbortedTransaction:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.AbortedTransaction."""

    producer_id: int = 0
    first_offset: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeEndpoint:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.NodeEndpoint.

    Where to reach a leader named in ``current_leader`` (KIP-951). ``rack`` is nullable.
    """

    node_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionData:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.PartitionData.

    The answer for one partition: an error code, the leader's high watermark, last stable
    offset and log start offset, the records read (MemoryRecords.EMPTY when none; Kafka's
    null), and the tagged fields a follower uses to truncate (``diverging_epoch``) or
    re-resolve the leader (``current_leader``).
    """

    partition_index: int = 0
    error_code: int = 0
    high_watermark: int = 0
    last_stable_offset: int = -1
    log_start_offset: int = -1
    diverging_epoch: EpochEndOffset = EpochEndOffset()
    current_leader: LeaderIdAndEpoch = LeaderIdAndEpoch()
    snapshot_id: SnapshotId = SnapshotId()
    aborted_transactions: tuple[AbortedTransaction, ...] | None = ()
    preferred_read_replica: int = -1
    records: MemoryRecords = MemoryRecords.EMPTY


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchableTopicResponse:
    """Mirrors org.apache.kafka.common.message.FetchResponseData.FetchableTopicResponse."""

    topic: str = ""
    topic_id: Uuid = ZERO_UUID
    partitions: tuple[PartitionData, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.FetchResponse.

    A top-level error (used by fetch sessions, e.g. FETCH_SESSION_ID_NOT_FOUND), the fetch
    session id, and the per-partition results grouped by topic.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FETCH
    API_NAME: ClassVar[str] = ApiKeys.FETCH.api_name

    INVALID_HIGH_WATERMARK: ClassVar[int] = -1
    INVALID_LAST_STABLE_OFFSET: ClassVar[int] = -1
    INVALID_LOG_START_OFFSET: ClassVar[int] = -1
    INVALID_PREFERRED_REPLICA_ID: ClassVar[int] = -1

    throttle_time_ms: int = 0
    error_code: int = 0
    session_id: int = 0
    responses: tuple[FetchableTopicResponse, ...] = ()
    node_endpoints: tuple[NodeEndpoint, ...] = ()

    @classmethod
    def of(
        cls,
        error_code: int,
        throttle_time_ms: int,
        session_id: int,
        response_data: Mapping[TopicIdPartition | TopicPartition, PartitionData],
        node_endpoints: Iterable[NodeEndpoint] = (),
    ) -> FetchResponse:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#of (and #toMessage).

        Builds the response from an ordered map of partition results. Consecutive entries of
        the same topic share one topic entry; a topic that reappears later starts a new one,
        so the input order is kept exactly.
        """
        topics: list[FetchableTopicResponse] = []
        current: list[PartitionData] = []
        current_topic: str | None = None
        current_id: Uuid = ZERO_UUID
        for key, data in response_data.items():
            topic, topic_id, partition = _split_key(key)
            # 1. The map key decides the partition index.
            if data.partition_index != partition:
                data = dataclasses.replace(data, partition_index=partition)
            # 2. Extend the previous topic entry only when it is the same topic (FetchResponse#matchingTopic):
            #    the same id when the previous entry has one, else the same name. Partitions of
            #    different unknown ids all carry the name "" and must not merge into one entry.
            if current_topic is not None and (topic_id == current_id if current_id != ZERO_UUID else topic == current_topic):
                current.append(data)
                continue
            if current_topic is not None:
                topics.append(FetchableTopicResponse(topic=current_topic, topic_id=current_id, partitions=tuple(current)))
            current_topic, current_id, current = topic, topic_id, [data]
        if current_topic is not None:
            topics.append(FetchableTopicResponse(topic=current_topic, topic_id=current_id, partitions=tuple(current)))
        # 3. Top-level fields.
        return cls(
            throttle_time_ms=throttle_time_ms,
            error_code=error_code,
            session_id=session_id,
            responses=tuple(topics),
            node_endpoints=tuple(node_endpoints),
        )

    @staticmethod
    def partition_response(partition_index: int, error_code: int) -> PartitionData:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#partitionResponse(int, Errors).

        A partition result carrying only an error: invalid high watermark, no records.
        """
        return PartitionData(
            partition_index=partition_index,
            error_code=error_code,
            high_watermark=FetchResponse.INVALID_HIGH_WATERMARK,
        )

    def response_data(self, topic_names: Mapping[Uuid, str] | None = None) -> dict[TopicPartition, PartitionData]:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#responseData.

        Every partition result keyed by TopicPartition, in response order. A topic without a
        name is named through ``topic_names`` (id to name); one that cannot be named is left
        out, as Kafka does.
        """
        data: dict[TopicPartition, PartitionData] = {}
        for topic in self.responses:
            # 1. Resolve the name; 2. skip topics that cannot be named.
            name = _topic_name(topic.topic, topic.topic_id, topic_names)
            if name is None:
                continue
            for partition in topic.partitions:
                data[TopicPartition(name, partition.partition_index)] = partition
        return data

    def topic_ids(self) -> set[Uuid]:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#topicIds: the response's topic ids, zero left out."""
        # (A zero id is recognised by its halves: no equality call per topic.)
        return {t.topic_id for t in self.responses
                if t.topic_id.most_significant_bits or t.topic_id.least_significant_bits}

    def partition_data(self, topic: str, partition: int) -> PartitionData | None:
        """The result for one partition, looked up by topic name; None when absent."""
        for topic_response in self.responses:
            if topic_response.topic != topic:
                continue
            for data in topic_response.partitions:
                if data.partition_index == partition:
                    return data
        return None

    def partition_errors(self, topic_names: Mapping[Uuid, str] | None = None) -> dict[TopicPartition, int]:
        """The error code of every partition, keyed by TopicPartition."""
        return {tp: data.error_code for tp, data in self.response_data(topic_names).items()}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#errorCounts.

        The top-level code once, then each partition's code.
        """
        # 1. Top-level error; 2. every partition's error.
        counts: dict[int, int] = {}
        update_error_counts(counts, self.error_code)
        for topic in self.responses:
            for partition in topic.partitions:
                update_error_counts(counts, partition.error_code)
        return counts

    @staticmethod
    def records_or_fail(partition: PartitionData) -> MemoryRecords:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#recordsOrFail.

        The partition's records, EMPTY when the field is None.
        """
        if partition.records is None:
            return MemoryRecords.EMPTY
        if not isinstance(partition.records, MemoryRecords):
            raise TypeError(f"The record set type {type(partition.records).__name__} is not MemoryRecords")
        return partition.records

    @staticmethod
    def records_size(partition: PartitionData) -> int:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#recordsSize."""
        return 0 if partition.records is None else partition.records.size_in_bytes

    def records_size_in_bytes(self) -> int:
        """The total size of the records of every partition in the response."""
        return sum(self.records_size(p) for t in self.responses for p in t.partitions)

    @staticmethod
    def is_diverging_epoch(partition: PartitionData) -> bool:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#isDivergingEpoch."""
        return partition.diverging_epoch.epoch >= 0

    @staticmethod
    def is_preferred_replica(partition: PartitionData) -> bool:
        """Mirrors org.apache.kafka.common.requests.FetchResponse#isPreferredReplica."""
        return partition.preferred_read_replica != FetchResponse.INVALID_PREFERRED_REPLICA_ID


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaState:
    """Mirrors org.apache.kafka.common.message.FetchRequestData.ReplicaState.

    Who is fetching (KIP-903): a follower's broker id and broker epoch; -1 for a consumer.
    """

    replica_id: int = -1
    replica_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchPartition:
    """Mirrors org.apache.kafka.common.message.FetchRequestData.FetchPartition.

    Where to read one partition from. ``current_leader_epoch`` fences a stale fetcher
    (KIP-320); ``last_fetched_epoch`` lets the leader detect divergence (KIP-595);
    ``log_start_offset`` is reported by followers only.
    """

    partition: int = 0
    current_leader_epoch: int = -1
    fetch_offset: int = 0
    last_fetched_epoch: int = -1
    log_start_offset: int = -1
    partition_max_bytes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchTopic:
    """Mirrors org.apache.kafka.common.message.FetchRequestData.FetchTopic."""

    topic: str = ""
    topic_id: Uuid = ZERO_UUID
    partitions: tuple[FetchPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgottenTopic:
    """Mirrors org.apache.kafka.common.message.FetchRequestData.ForgottenTopic.

    Partitions an incremental fetch removes from its session (KIP-227).
    """

    topic: str = ""
    topic_id: Uuid = ZERO_UUID
    partitions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.FetchRequest.

    ``replica_id`` (before v15) and ``replica_state`` (v15+) say who fetches: -1 for a
    consumer, a broker id for a follower; ``build`` fills both, and
    ``requesting_replica_id()`` reads whichever is set. ``session_id``/``session_epoch`` are
    the fetch-session fields of KIP-227 (0 and -1: no session, a full fetch).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FETCH
    API_NAME: ClassVar[str] = ApiKeys.FETCH.api_name
    RESPONSE_TYPE: ClassVar[type[FetchResponse]] = FetchResponse

    CONSUMER_REPLICA_ID: ClassVar[int] = -1
    DEBUGGING_REPLICA_ID: ClassVar[int] = -2
    FUTURE_LOCAL_REPLICA_ID: ClassVar[int] = -3
    INVALID_LOG_START_OFFSET: ClassVar[int] = -1
    INVALID_SESSION_ID: ClassVar[int] = 0
    INITIAL_EPOCH: ClassVar[int] = 0
    FINAL_EPOCH: ClassVar[int] = -1

    # Kafka 3.7-3.8 speak Fetch up to v16; v13 (KIP-516) named topics by id alone.
    LATEST_VERSION: ClassVar[int] = 16
    TOPIC_ID_VERSION: ClassVar[int] = 13

    cluster_id: str | None = None
    replica_id: int = -1
    replica_state: ReplicaState = ReplicaState()
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 0x7FFFFFFF
    isolation_level: int = 0
    session_id: int = 0
    session_epoch: int = -1
    topics: tuple[FetchTopic, ...] = ()
    forgotten_topics_data: tuple[ForgottenTopic, ...] = ()
    rack_id: str = ""
    # The version the sender chose; None: the one Kafka's builder would choose (``request_version``).
    version: int | None = dataclasses.field(default=None, metadata=REQUEST_HEADER_FIELD)

    @classmethod
    def build(
        cls,
        *,
        fetch_data: Mapping[TopicIdPartition | TopicPartition, FetchPartition],
        max_wait_ms: int,
        min_bytes: int,
        replica_id: int = -1,
        replica_epoch: int = -1,
        max_bytes: int = 0x7FFFFFFF,
        isolation_level: int = 0,
        session_id: int = 0,
        session_epoch: int = -1,
        to_forget: Iterable[TopicIdPartition | TopicPartition] = (),
        rack_id: str = "",
        cluster_id: str | None = None,
        version: int | None = None,
    ) -> FetchRequest:
        """Mirrors org.apache.kafka.common.requests.FetchRequest.Builder#build.

        Turns an ordered map of partition to FetchPartition into the message. Consecutive
        partitions of one topic share a topic entry (a topic seen again later gets a new
        entry, keeping the caller's order); the partition index comes from the map key.
        Forgotten partitions are grouped by topic. ``version`` defaults to what Kafka's
        senders pick: the latest when every topic has an id, else 12 (the last by name).
        """
        # 1. Group the partitions to fetch, in order, by consecutive topic.
        topics: list[FetchTopic] = []
        current: list[FetchPartition] = []
        current_topic: str | None = None
        current_id: Uuid = ZERO_UUID
        for key, data in fetch_data.items():
            topic, topic_id, partition = _split_key(key)
            if data.partition != partition:
                data = dataclasses.replace(data, partition=partition)
            if topic == current_topic:
                current.append(data)
                continue
            if current_topic is not None:
                topics.append(FetchTopic(topic=current_topic, topic_id=current_id, partitions=tuple(current)))
            current_topic, current_id, current = topic, topic_id, [data]
        if current_topic is not None:
            topics.append(FetchTopic(topic=current_topic, topic_id=current_id, partitions=tuple(current)))
        # 2. Group the partitions to forget by topic.
        forgotten: dict[str, tuple[Uuid, list[int]]] = {}
        for key in to_forget:
            topic, topic_id, partition = _split_key(key)
            forgotten.setdefault(topic, (topic_id, []))[1].append(partition)
        # 3. Who is fetching goes in both the old field and the v15+ replica state.
        request = cls(
            cluster_id=cluster_id,
            replica_id=replica_id,
            replica_state=ReplicaState(replica_id=replica_id, replica_epoch=replica_epoch),
            max_wait_ms=max_wait_ms,
            min_bytes=min_bytes,
            max_bytes=max_bytes,
            isolation_level=isolation_level,
            session_id=session_id,
            session_epoch=session_epoch,
            topics=tuple(topics),
            forgotten_topics_data=tuple(
                ForgottenTopic(topic=name, topic_id=tid, partitions=tuple(parts))
                for name, (tid, parts) in forgotten.items()
            ),
            rack_id=rack_id,
            version=version,
        )
        # 4. The version: v13+ only when every topic can be named by id (FetchSessionHandler#canUseTopicIds).
        #    (A sender that chose one, as every follower fetch does, needs no second message.)
        if version is None:
            request = dataclasses.replace(request, version=request.request_version())
        return request

    def request_version(self) -> int:
        """The version this request is read at: ``version`` when the sender set it, else the
        latest if every topic (fetched or forgotten) has an id and 12 otherwise, as Kafka's
        consumer and follower choose (an in-process request, or one decoded from v12 or older,
        which has no ids)."""
        if self.version is not None:
            return self.version
        ids = [t.topic_id for t in self.topics] + [t.topic_id for t in self.forgotten_topics_data]
        return self.LATEST_VERSION if all(i != ZERO_UUID for i in ids) else self.TOPIC_ID_VERSION - 1

    @classmethod
    def for_consumer(
        cls, max_wait_ms: int, min_bytes: int, fetch_data: Mapping[TopicIdPartition | TopicPartition, FetchPartition]
    ) -> FetchRequest:
        """Mirrors org.apache.kafka.common.requests.FetchRequest.Builder#forConsumer."""
        return cls.build(fetch_data=fetch_data, max_wait_ms=max_wait_ms, min_bytes=min_bytes)

    @classmethod
    def for_replica(
        cls,
        replica_id: int,
        replica_epoch: int,
        max_wait_ms: int,
        min_bytes: int,
        fetch_data: Mapping[TopicIdPartition | TopicPartition, FetchPartition],
    ) -> FetchRequest:
        """Mirrors org.apache.kafka.common.requests.FetchRequest.Builder#forReplica."""
        return cls.build(
            fetch_data=fetch_data,
            max_wait_ms=max_wait_ms,
            min_bytes=min_bytes,
            replica_id=replica_id,
            replica_epoch=replica_epoch,
        )

    def requesting_replica_id(self) -> int:
        """Mirrors org.apache.kafka.common.requests.FetchRequest#replicaId.

        The replica state's id when set (v15+), else the old ``replica_id`` field.
        """
        if self.replica_state.replica_id != -1:
            return self.replica_state.replica_id
        return self.replica_id

    def is_from_follower(self) -> bool:
        """Mirrors org.apache.kafka.server.storage.log.FetchParams#isFromFollower.

        True when a broker (a valid, non-negative replica id) sends the fetch.
        """
        return self.requesting_replica_id() >= 0

    def fetch_data(self, topic_names: Mapping[Uuid, str] | None = None) -> dict[TopicIdPartition, FetchPartition]:
        """Mirrors org.apache.kafka.common.requests.FetchRequest#fetchData.

        Every partition to fetch keyed by TopicIdPartition, in request order. Before version 13
        a topic is its name. From version 13 it is its id: a broker passes ``topic_names`` (its
        metadata's id → name map) and a topic whose id it cannot resolve keeps "" as its name,
        so the broker answers UNKNOWN_TOPIC_ID for it, whatever name the dataclass carries. A
        caller with no map reads the names the dataclass carries.
        """
        has_ids = self.request_version() >= self.TOPIC_ID_VERSION
        by_id = has_ids and topic_names is not None
        data: dict[TopicIdPartition, FetchPartition] = {}
        for topic in self.topics:
            name = (topic_names.get(topic.topic_id, "") if by_id  # type: ignore[union-attr]
                    else _topic_name(topic.topic, topic.topic_id, topic_names) or "")
            # Before version 13 the wire has no topic id: whatever the dataclass holds is not sent.
            topic_id = topic.topic_id if has_ids else ZERO_UUID
            for partition in topic.partitions:
                data[TopicIdPartition(topic_id, TopicPartition(name, partition.partition))] = partition
        return data

    def forgotten_topics(self, topic_names: Mapping[Uuid, str] | None = None) -> list[TopicIdPartition]:
        """Mirrors org.apache.kafka.common.requests.FetchRequest#forgottenTopics (by id from v13, as fetch_data)."""
        has_ids = self.request_version() >= self.TOPIC_ID_VERSION
        by_id = has_ids and topic_names is not None
        forgotten: list[TopicIdPartition] = []
        for topic in self.forgotten_topics_data:
            name = (topic_names.get(topic.topic_id, "") if by_id  # type: ignore[union-attr]
                    else _topic_name(topic.topic, topic.topic_id, topic_names) or "")
            topic_id = topic.topic_id if has_ids else ZERO_UUID
            for partition in topic.partitions:
                forgotten.append(TopicIdPartition(topic_id, TopicPartition(name, partition)))
        return forgotten

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> FetchResponse:
        """Mirrors org.apache.kafka.common.requests.FetchRequest#getErrorResponse.

        The error at the top level and in every requested partition (each with an invalid
        high watermark and no records); topics keep their names and ids, and the response
        carries the request's session id.
        """
        # 1. One error partition per requested partition, topic by topic.
        responses = tuple(
            FetchableTopicResponse(
                topic=topic.topic,
                topic_id=topic.topic_id,
                partitions=tuple(FetchResponse.partition_response(p.partition, error_code) for p in topic.partitions),
            )
            for topic in self.topics
        )
        # 2. Top-level error, throttle time and session id.
        return FetchResponse(
            throttle_time_ms=throttle_time_ms,
            error_code=error_code,
            session_id=self.session_id,
            responses=responses,
        )


FetchResponse.REQUEST_TYPE = FetchRequest


def _split_key(key: TopicIdPartition | TopicPartition) -> tuple[str, Uuid, int]:
    """(topic name, topic id, partition) of a TopicIdPartition or a TopicPartition."""
    if isinstance(key, TopicIdPartition):
        return key.topic, key.topic_id, key.partition
    return key.topic, ZERO_UUID, key.partition


def _topic_name(name: str, topic_id: Uuid, topic_names: Mapping[Uuid, str] | None) -> str | None:
    """A topic's name: the one in the message, else the one ``topic_names`` has for its id."""
    if name:
        return name
    if topic_names is None:
        return None
    return topic_names.get(topic_id)
