"""ListOffsets: look up an offset by timestamp (or the earliest / latest offset).

Mirrors org.apache.kafka.common.requests.ListOffsetsRequest / ListOffsetsResponse and the
message schemas ListOffsetsRequest.json / ListOffsetsResponse.json (versions 8-9, Kafka 3.8).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsPartitionResponse:
    """Mirrors org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsPartitionResponse.

    The offset found and the timestamp of its record (-1 / -1 when none), with the leader
    epoch of that offset.
    """

    partition_index: int = 0
    error_code: int = 0
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsTopicResponse:
    """Mirrors org.apache.kafka.common.message.ListOffsetsResponseData.ListOffsetsTopicResponse."""

    name: str = ""
    partitions: tuple[ListOffsetsPartitionResponse, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ListOffsetsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_OFFSETS
    API_NAME: ClassVar[str] = ApiKeys.LIST_OFFSETS.api_name

    UNKNOWN_TIMESTAMP: ClassVar[int] = -1
    UNKNOWN_OFFSET: ClassVar[int] = -1
    UNKNOWN_EPOCH: ClassVar[int] = -1

    throttle_time_ms: int = 0
    topics: tuple[ListOffsetsTopicResponse, ...] = ()

    def responses_by_partition(self) -> dict[TopicPartition, ListOffsetsPartitionResponse]:
        """Every partition result keyed by TopicPartition, in response order."""
        return {TopicPartition(t.name, p.partition_index): p for t in self.topics for p in t.partitions}

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition, keyed by TopicPartition."""
        return {tp: p.error_code for tp, p in self.responses_by_partition().items()}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ListOffsetsResponse#errorCounts."""
        return error_counts_of(p.error_code for t in self.topics for p in t.partitions)


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsPartition:
    """Mirrors org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsPartition.

    ``timestamp`` is a record timestamp or one of the special values on ListOffsetsRequest
    (LATEST_TIMESTAMP, EARLIEST_TIMESTAMP, MAX_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP).
    """

    partition_index: int = 0
    current_leader_epoch: int = -1
    timestamp: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsTopic:
    """Mirrors org.apache.kafka.common.message.ListOffsetsRequestData.ListOffsetsTopic."""

    name: str = ""
    partitions: tuple[ListOffsetsPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOffsetsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ListOffsetsRequest.

    ``replica_id`` is -1 for a consumer, -2 for a debugging tool (which may read past the
    high watermark), or a broker id. ``isolation_level`` 1 (READ_COMMITTED) bounds the
    answer by the last stable offset.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_OFFSETS
    API_NAME: ClassVar[str] = ApiKeys.LIST_OFFSETS.api_name
    RESPONSE_TYPE: ClassVar[type[ListOffsetsResponse]] = ListOffsetsResponse

    EARLIEST_TIMESTAMP: ClassVar[int] = -2
    LATEST_TIMESTAMP: ClassVar[int] = -1
    MAX_TIMESTAMP: ClassVar[int] = -3
    EARLIEST_LOCAL_TIMESTAMP: ClassVar[int] = -4
    CONSUMER_REPLICA_ID: ClassVar[int] = -1
    DEBUGGING_REPLICA_ID: ClassVar[int] = -2

    replica_id: int = 0
    isolation_level: int = 0
    topics: tuple[ListOffsetsTopic, ...] = ()

    @staticmethod
    def to_list_offsets_topics(
        timestamps_to_search: Mapping[TopicPartition, ListOffsetsPartition],
    ) -> tuple[ListOffsetsTopic, ...]:
        """Mirrors org.apache.kafka.common.requests.ListOffsetsRequest#toListOffsetsTopics.

        Groups per-partition lookups by topic (first-seen topic order).
        """
        grouped: dict[str, list[ListOffsetsPartition]] = {}
        for tp, partition in timestamps_to_search.items():
            grouped.setdefault(tp.topic, []).append(partition)
        return tuple(ListOffsetsTopic(name=name, partitions=tuple(parts)) for name, parts in grouped.items())

    def partition_timestamps(self) -> dict[TopicPartition, ListOffsetsPartition]:
        """Every partition lookup keyed by TopicPartition, in request order."""
        return {TopicPartition(t.name, p.partition_index): p for t in self.topics for p in t.partitions}

    def duplicate_partitions(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.common.requests.ListOffsetsRequest#duplicatePartitions.

        Partitions listed more than once (the broker answers INVALID_REQUEST for them).
        """
        seen: set[TopicPartition] = set()
        duplicates: set[TopicPartition] = set()
        for topic in self.topics:
            for partition in topic.partitions:
                tp = TopicPartition(topic.name, partition.partition_index)
                if tp in seen:
                    duplicates.add(tp)
                seen.add(tp)
        return duplicates

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> ListOffsetsResponse:
        """Mirrors org.apache.kafka.common.requests.ListOffsetsRequest#getErrorResponse.

        Every partition gets the error with unknown offset and timestamp.
        """
        # 1. One error result per requested partition, topic by topic.
        topics = tuple(
            ListOffsetsTopicResponse(
                name=topic.name,
                partitions=tuple(
                    ListOffsetsPartitionResponse(
                        partition_index=p.partition_index,
                        error_code=error_code,
                        timestamp=ListOffsetsResponse.UNKNOWN_TIMESTAMP,
                        offset=ListOffsetsResponse.UNKNOWN_OFFSET,
                    )
                    for p in topic.partitions
                ),
            )
            for topic in self.topics
        )
        return ListOffsetsResponse(throttle_time_ms=throttle_time_ms, topics=topics)


ListOffsetsResponse.REQUEST_TYPE = ListOffsetsRequest
