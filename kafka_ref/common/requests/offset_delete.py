"""OffsetDelete: an admin client removes a consumer group's committed offsets for some partitions.

Mirrors org.apache.kafka.common.requests.OffsetDeleteRequest / OffsetDeleteResponse and the
message schemas OffsetDeleteRequest.json / OffsetDeleteResponse.json (version 0). The request
goes to the group's coordinator; the answer has a group-level error and, when that is NONE, one
error per partition (GROUP_SUBSCRIBED_TO_TOPIC for a topic the live members still consume).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponsePartition:
    """Mirrors org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponsePartition."""

    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponseTopic:
    """Mirrors org.apache.kafka.common.message.OffsetDeleteResponseData.OffsetDeleteResponseTopic."""

    name: str = ""
    partitions: tuple[OffsetDeleteResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.OffsetDeleteResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_DELETE
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_DELETE.api_name

    error_code: int = 0
    throttle_time_ms: int = 0
    topics: tuple[OffsetDeleteResponseTopic, ...] = ()

    @classmethod
    def of(cls, errors: dict[TopicPartition, int], throttle_time_ms: int = 0) -> "OffsetDeleteResponse":
        """Mirrors OffsetDeleteResponse.Builder#addPartition: per-partition errors grouped by topic, first seen first."""
        by_topic: dict[str, list[OffsetDeleteResponsePartition]] = {}
        for tp, code in errors.items():
            by_topic.setdefault(tp.topic, []).append(OffsetDeleteResponsePartition(partition_index=tp.partition,
                                                                                   error_code=code))
        return cls(throttle_time_ms=throttle_time_ms, topics=tuple(
            OffsetDeleteResponseTopic(name=name, partitions=tuple(parts)) for name, parts in by_topic.items()))

    def partition_errors(self) -> dict[TopicPartition, int]:
        """Each partition's error code, keyed by TopicPartition."""
        return {TopicPartition(t.name, p.partition_index): p.error_code for t in self.topics for p in t.partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors OffsetDeleteResponse#errorCounts: the group error and every partition's."""
        return error_counts_of([self.error_code, *(p.error_code for t in self.topics for p in t.partitions)])


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteRequestPartition:
    """Mirrors org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestPartition."""

    partition_index: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteRequestTopic:
    """Mirrors org.apache.kafka.common.message.OffsetDeleteRequestData.OffsetDeleteRequestTopic."""

    name: str = ""
    partitions: tuple[OffsetDeleteRequestPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.OffsetDeleteRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_DELETE
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_DELETE.api_name
    RESPONSE_TYPE: ClassVar[type[OffsetDeleteResponse]] = OffsetDeleteResponse

    group_id: str = ""
    topics: tuple[OffsetDeleteRequestTopic, ...] = ()

    @classmethod
    def of(cls, group_id: str, partitions: Iterable[TopicPartition]) -> "OffsetDeleteRequest":
        """Build the request for one group (what DeleteConsumerGroupOffsetsHandler#buildBatchedRequest sends)."""
        by_topic: dict[str, list[OffsetDeleteRequestPartition]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(OffsetDeleteRequestPartition(partition_index=tp.partition))
        return cls(group_id=group_id, topics=tuple(
            OffsetDeleteRequestTopic(name=name, partitions=tuple(parts)) for name, parts in by_topic.items()))

    def partitions(self) -> list[TopicPartition]:
        """Every partition asked for, in request order."""
        return [TopicPartition(t.name, p.partition_index) for t in self.topics for p in t.partitions]

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> OffsetDeleteResponse:
        """Mirrors OffsetDeleteRequest#getErrorResponse: only the group-level error, no topics."""
        return OffsetDeleteResponse(error_code=error_code, throttle_time_ms=throttle_time_ms)


OffsetDeleteResponse.REQUEST_TYPE = OffsetDeleteRequest
