"""OffsetCommit: a consumer stores its positions with the group coordinator.

Mirrors org.apache.kafka.common.requests.OffsetCommitRequest / OffsetCommitResponse and the
message schemas OffsetCommitRequest.json / OffsetCommitResponse.json at version 9 (Kafka 3.8;
``generation_id_or_member_epoch`` is the generation for the classic protocol).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition

# Mirrors org.apache.kafka.common.requests.OffsetCommitRequest.DEFAULT_* constants.
DEFAULT_GENERATION_ID = -1
DEFAULT_MEMBER_ID = ""
DEFAULT_RETENTION_TIME = -1
DEFAULT_TIMESTAMP = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponsePartition:
    """Mirrors org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponsePartition."""

    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponseTopic:
    """Mirrors org.apache.kafka.common.message.OffsetCommitResponseData.OffsetCommitResponseTopic."""

    name: str = ""
    partitions: tuple[OffsetCommitResponsePartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.OffsetCommitResponse: an error per partition."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_COMMIT
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_COMMIT.api_name

    throttle_time_ms: int = 0
    topics: tuple[OffsetCommitResponseTopic, ...] = ()

    @classmethod
    def of(cls, errors: Mapping[TopicPartition, int], throttle_time_ms: int = 0) -> OffsetCommitResponse:
        """Mirrors OffsetCommitResponse(int, Map<TopicPartition, Errors>): group the codes by topic."""
        by_topic: dict[str, list[OffsetCommitResponsePartition]] = {}
        for tp, code in errors.items():
            by_topic.setdefault(tp.topic, []).append(OffsetCommitResponsePartition(partition_index=tp.partition, error_code=code))
        return cls(throttle_time_ms=throttle_time_ms, topics=tuple(
            OffsetCommitResponseTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()))

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition in the response."""
        return {TopicPartition(t.name, p.partition_index): p.error_code for t in self.topics for p in t.partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.OffsetCommitResponse#errorCounts."""
        return error_counts_of(p.error_code for t in self.topics for p in t.partitions)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequestPartition:
    """Mirrors org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestPartition.

    ``committed_offset`` is the next offset to consume; ``committed_leader_epoch`` the epoch of
    the record before it (-1 when unknown); ``commit_timestamp`` exists only in version 1.
    """

    partition_index: int = 0
    committed_offset: int = 0
    committed_leader_epoch: int = -1
    commit_timestamp: int = DEFAULT_TIMESTAMP
    committed_metadata: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequestTopic:
    """Mirrors org.apache.kafka.common.message.OffsetCommitRequestData.OffsetCommitRequestTopic."""

    name: str = ""
    partitions: tuple[OffsetCommitRequestPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.OffsetCommitRequest.

    A member of a generation commits with its generation and member id; a "simple" consumer
    that does not use group management commits with generation -1 and member id "".
    ``retention_time_ms`` is carried by versions 2-4 only.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_COMMIT
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_COMMIT.api_name
    RESPONSE_TYPE: ClassVar[type[OffsetCommitResponse]] = OffsetCommitResponse

    group_id: str = ""
    generation_id_or_member_epoch: int = DEFAULT_GENERATION_ID
    member_id: str = DEFAULT_MEMBER_ID
    group_instance_id: str | None = None
    retention_time_ms: int = DEFAULT_RETENTION_TIME
    topics: tuple[OffsetCommitRequestTopic, ...] = ()

    @classmethod
    def build(cls, group_id: str, offsets: Mapping[TopicPartition, tuple[int, int, str | None]], *,
              generation_id: int = DEFAULT_GENERATION_ID, member_id: str = DEFAULT_MEMBER_ID,
              group_instance_id: str | None = None) -> OffsetCommitRequest:
        """A request from ``{tp: (offset, leader_epoch, metadata)}``, grouped by topic."""
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for tp, (offset, epoch, metadata) in offsets.items():
            by_topic.setdefault(tp.topic, []).append(OffsetCommitRequestPartition(
                partition_index=tp.partition, committed_offset=offset, committed_leader_epoch=epoch,
                committed_metadata=metadata))
        return cls(group_id=group_id, generation_id_or_member_epoch=generation_id, member_id=member_id,
                   group_instance_id=group_instance_id, topics=tuple(OffsetCommitRequestTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()))

    def offsets(self) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.common.requests.OffsetCommitRequest#offsets."""
        return {TopicPartition(t.name, p.partition_index): p.committed_offset for t in self.topics for p in t.partitions}

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> OffsetCommitResponse:
        """Mirrors org.apache.kafka.common.requests.OffsetCommitRequest#getErrorResponse: every partition gets the error."""
        return OffsetCommitResponse(throttle_time_ms=throttle_time_ms, topics=tuple(
            OffsetCommitResponseTopic(name=t.name, partitions=tuple(
                OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error_code)
                for p in t.partitions))
            for t in self.topics))


OffsetCommitResponse.REQUEST_TYPE = OffsetCommitRequest
