"""DeleteRecords: an admin client moves partitions' log start offsets forward.

Mirrors org.apache.kafka.common.requests.DeleteRecordsRequest / DeleteRecordsResponse and the
message schemas DeleteRecordsRequest.json / DeleteRecordsResponse.json (versions 0-2). Each
partition goes to its leader with the offset before which records are deleted (-1: the high
watermark); the answer carries the partition's low watermark, the smallest log start offset of
its live replicas, once it has reached that offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsPartitionResult:
    """Mirrors org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult."""

    partition_index: int = 0
    low_watermark: int = -1
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsTopicResult:
    """Mirrors org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult."""

    name: str = ""
    partitions: tuple[DeleteRecordsPartitionResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DeleteRecordsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_RECORDS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_RECORDS.api_name
    # Mirrors DeleteRecordsResponse.INVALID_LOW_WATERMARK.
    INVALID_LOW_WATERMARK: ClassVar[int] = -1

    throttle_time_ms: int = 0
    topics: tuple[DeleteRecordsTopicResult, ...] = ()

    @classmethod
    def of(cls, results: dict[TopicPartition, DeleteRecordsPartitionResult], throttle_time_ms: int = 0) -> "DeleteRecordsResponse":
        """Group per-partition results by topic, in the order first seen (as KafkaApis does)."""
        by_topic: dict[str, list[DeleteRecordsPartitionResult]] = {}
        for tp, result in results.items():
            by_topic.setdefault(tp.topic, []).append(result)
        return cls(throttle_time_ms=throttle_time_ms, topics=tuple(
            DeleteRecordsTopicResult(name=name, partitions=tuple(parts)) for name, parts in by_topic.items()))

    def results_by_partition(self) -> dict[TopicPartition, DeleteRecordsPartitionResult]:
        """Each partition's result, keyed by TopicPartition."""
        return {TopicPartition(t.name, p.partition_index): p for t in self.topics for p in t.partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors DeleteRecordsResponse#errorCounts."""
        return error_counts_of(p.error_code for t in self.topics for p in t.partitions)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsPartition:
    """Mirrors org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition."""

    partition_index: int = 0
    offset: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsTopic:
    """Mirrors org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic."""

    name: str = ""
    partitions: tuple[DeleteRecordsPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecordsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DeleteRecordsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_RECORDS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_RECORDS.api_name
    RESPONSE_TYPE: ClassVar[type[DeleteRecordsResponse]] = DeleteRecordsResponse
    # Mirrors DeleteRecordsRequest.HIGH_WATERMARK: delete everything below the high watermark.
    HIGH_WATERMARK: ClassVar[int] = -1

    topics: tuple[DeleteRecordsTopic, ...] = ()
    timeout_ms: int = 30000

    @classmethod
    def of(cls, offsets: dict[TopicPartition, int], timeout_ms: int = 30000) -> "DeleteRecordsRequest":
        """Build the request from a partition -> offset map (DeleteRecordsRequest.Builder)."""
        by_topic: dict[str, list[DeleteRecordsPartition]] = {}
        for tp, offset in offsets.items():
            by_topic.setdefault(tp.topic, []).append(DeleteRecordsPartition(partition_index=tp.partition, offset=offset))
        return cls(timeout_ms=timeout_ms, topics=tuple(
            DeleteRecordsTopic(name=name, partitions=tuple(parts)) for name, parts in by_topic.items()))

    def offsets(self) -> dict[TopicPartition, int]:
        """Each partition's requested offset, in request order."""
        return {TopicPartition(t.name, p.partition_index): p.offset for t in self.topics for p in t.partitions}

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DeleteRecordsResponse:
        """Mirrors DeleteRecordsRequest#getErrorResponse: every partition gets the error."""
        return DeleteRecordsResponse(throttle_time_ms=throttle_time_ms, topics=tuple(
            DeleteRecordsTopicResult(name=t.name, partitions=tuple(
                DeleteRecordsPartitionResult(partition_index=p.partition_index,
                                             low_watermark=DeleteRecordsResponse.INVALID_LOW_WATERMARK, error_code=error_code)
                for p in t.partitions))
            for t in self.topics))


DeleteRecordsResponse.REQUEST_TYPE = DeleteRecordsRequest
