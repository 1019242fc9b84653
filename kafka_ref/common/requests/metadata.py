"""Metadata: which brokers exist and who leads each partition.

Mirrors org.apache.kafka.common.requests.MetadataRequest / MetadataResponse and the message
schemas MetadataRequest.json / MetadataResponse.json (version 12).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, update_error_counts
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

AUTHORIZED_OPERATIONS_OMITTED = -2147483648

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataResponseBroker:
    """Mirrors org.apache.kafka.common.message.MetadataResponseData.MetadataResponseBroker."""

    node_id: int = 0
    host: str = ""
    port: int = 0
    rack: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataResponsePartition:
    """Mirrors org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition.

    Leader (-1 when none), leader epoch, all replicas, the ISR and the offline replicas of
    one partition. LEADER_NOT_AVAILABLE or REPLICA_NOT_AVAILABLE may come with valid data.
    """

    error_code: int = 0
    partition_index: int = 0
    leader_id: int = 0
    leader_epoch: int = -1
    replica_nodes: tuple[int, ...] = ()
    isr_nodes: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataResponseTopic:
    """Mirrors org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic."""

    error_code: int = 0
    name: str | None = ""
    topic_id: Uuid = ZERO_UUID
    is_internal: bool = False
    partitions: tuple[MetadataResponsePartition, ...] = ()
    topic_authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.MetadataResponse.

    The live brokers, the cluster id, the controller id (-1 when unknown) and the requested
    topics with their partitions.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.METADATA
    API_NAME: ClassVar[str] = ApiKeys.METADATA.api_name

    NO_CONTROLLER_ID: ClassVar[int] = -1
    NO_LEADER_ID: ClassVar[int] = -1

    throttle_time_ms: int = 0
    brokers: tuple[MetadataResponseBroker, ...] = ()
    cluster_id: str | None = None
    controller_id: int = -1
    topics: tuple[MetadataResponseTopic, ...] = ()

    def errors(self) -> dict[str, int]:
        """Mirrors org.apache.kafka.common.requests.MetadataResponse#errors.

        The error code of each topic that has one (NONE left out), keyed by name.
        """
        return {t.name or "": t.error_code for t in self.topics if t.error_code != 0}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.MetadataResponse#errorCounts.

        For each topic, its partitions' codes and then the topic's own code.
        """
        # 1. Per topic: every partition code, then the topic code.
        counts: dict[int, int] = {}
        for topic in self.topics:
            for partition in topic.partitions:
                update_error_counts(counts, partition.error_code)
            update_error_counts(counts, topic.error_code)
        return counts

    def topic(self, name: str) -> MetadataResponseTopic | None:
        """The metadata of one topic by name; None when it is not in the response."""
        for topic in self.topics:
            if topic.name == name:
                return topic
        return None

    def broker(self, node_id: int) -> MetadataResponseBroker | None:
        """One live broker by id; None when it is not in the response."""
        for broker in self.brokers:
            if broker.node_id == node_id:
                return broker
        return None

    def partitions_by_topic_partition(self) -> dict[TopicPartition, MetadataResponsePartition]:
        """Every partition of every named topic, keyed by TopicPartition."""
        return {
            TopicPartition(t.name, p.partition_index): p for t in self.topics if t.name for p in t.partitions
        }

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition of every named topic, keyed by TopicPartition."""
        return {tp: p.error_code for tp, p in self.partitions_by_topic_partition().items()}

    def topic_ids(self) -> dict[str, Uuid]:
        """Mirrors org.apache.kafka.common.requests.MetadataResponse#topicIds (named topics with an id)."""
        return {t.name: t.topic_id for t in self.topics if t.name and t.topic_id != ZERO_UUID}


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataRequestTopic:
    """Mirrors org.apache.kafka.common.message.MetadataRequestData.MetadataRequestTopic.

    A topic asked about by id or name (name may be None when the id is given).
    """

    topic_id: Uuid = ZERO_UUID
    name: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.MetadataRequest.

    ``topics`` None asks for every topic; an empty tuple asks for none (brokers only).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.METADATA
    API_NAME: ClassVar[str] = ApiKeys.METADATA.api_name
    RESPONSE_TYPE: ClassVar[type[MetadataResponse]] = MetadataResponse

    topics: tuple[MetadataRequestTopic, ...] | None = ()
    allow_auto_topic_creation: bool = True
    include_topic_authorized_operations: bool = False

    @classmethod
    def for_topics(cls, topics: Iterable[str], allow_auto_topic_creation: bool = True) -> MetadataRequest:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest.Builder(List, boolean)."""
        return cls(
            topics=tuple(MetadataRequestTopic(name=name) for name in topics),
            allow_auto_topic_creation=allow_auto_topic_creation,
        )

    @classmethod
    def all_topics(cls) -> MetadataRequest:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest.Builder#allTopics."""
        return cls(topics=None, allow_auto_topic_creation=True)

    def is_all_topics(self) -> bool:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest#isAllTopics."""
        return self.topics is None

    def topic_names(self) -> list[str] | None:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest#topics (None: all topics)."""
        if self.topics is None:
            return None
        return [t.name for t in self.topics if t.name is not None]

    def topic_ids(self) -> list[Uuid]:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest#topicIds."""
        if self.topics is None:
            return []
        return [t.topic_id for t in self.topics if t.topic_id != ZERO_UUID]

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> MetadataResponse:
        """Mirrors org.apache.kafka.common.requests.MetadataRequest#getErrorResponse.

        Every requested topic gets the error and no partitions (a None name becomes "").
        An all-topics request gets an empty topic list.
        """
        # 1. One error entry per requested topic.
        topics: tuple[MetadataResponseTopic, ...] = ()
        if self.topics is not None:
            topics = tuple(
                MetadataResponseTopic(
                    name="" if t.name is None else t.name,
                    topic_id=t.topic_id,
                    error_code=error_code,
                    is_internal=False,
                    partitions=(),
                )
                for t in self.topics
            )
        return MetadataResponse(throttle_time_ms=throttle_time_ms, topics=topics)


MetadataResponse.REQUEST_TYPE = MetadataRequest
