"""OffsetFetch: a consumer reads the offsets its group committed.

Mirrors org.apache.kafka.common.requests.OffsetFetchRequest / OffsetFetchResponse and the
message schemas OffsetFetchRequest.json / OffsetFetchResponse.json at version 9 (Kafka 3.8):
the batched form of KIP-709, one entry per group. ``topics=None`` for a group asks for every
partition it has an offset for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition

# Mirrors org.apache.kafka.common.requests.OffsetFetchResponse.INVALID_OFFSET / NO_METADATA.
INVALID_OFFSET = -1
NO_METADATA = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponsePartitions:
    """Mirrors org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponsePartitions."""

    partition_index: int = 0
    committed_offset: int = INVALID_OFFSET
    committed_leader_epoch: int = -1
    metadata: str | None = NO_METADATA
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponseTopics:
    """Mirrors org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseTopics."""

    name: str = ""
    partitions: tuple[OffsetFetchResponsePartitions, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponseGroup:
    """Mirrors org.apache.kafka.common.message.OffsetFetchResponseData.OffsetFetchResponseGroup."""

    group_id: str = ""
    topics: tuple[OffsetFetchResponseTopics, ...] = ()
    error_code: int = 0

    def partition_data(self) -> dict[TopicPartition, OffsetFetchResponsePartitions]:
        """Every partition of the group's answer, keyed by TopicPartition."""
        return {TopicPartition(t.name, p.partition_index): p for t in self.topics for p in t.partitions}


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.OffsetFetchResponse (version 8+: per group)."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_FETCH
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_FETCH.api_name

    throttle_time_ms: int = 0
    groups: tuple[OffsetFetchResponseGroup, ...] = ()

    def group(self, group_id: str) -> OffsetFetchResponseGroup | None:
        """The answer for one group, or None if the response does not name it."""
        for g in self.groups:
            if g.group_id == group_id:
                return g
        return None

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.OffsetFetchResponse#errorCounts (group and partition codes)."""
        codes: list[int] = []
        for g in self.groups:
            codes.append(g.error_code)
            codes.extend(p.error_code for t in g.topics for p in t.partitions)
        return error_counts_of(codes)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchRequestTopics:
    """Mirrors org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestTopics."""

    name: str = ""
    partition_indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchRequestGroup:
    """Mirrors org.apache.kafka.common.message.OffsetFetchRequestData.OffsetFetchRequestGroup.

    ``member_id`` / ``member_epoch`` belong to the new (KIP-848) protocol; the classic
    coordinator ignores them.
    """

    group_id: str = ""
    member_id: str | None = None
    member_epoch: int = -1
    topics: tuple[OffsetFetchRequestTopics, ...] | None = None

    def partitions(self) -> list[TopicPartition] | None:
        """The partitions asked for, or None for "all of them"."""
        if self.topics is None:
            return None
        return [TopicPartition(t.name, p) for t in self.topics for p in t.partition_indexes]


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.OffsetFetchRequest.

    ``require_stable`` (KIP-447) makes partitions with a commit still being written answer
    UNSTABLE_OFFSET_COMMIT instead of a possibly stale offset.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_FETCH
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_FETCH.api_name
    RESPONSE_TYPE: ClassVar[type[OffsetFetchResponse]] = OffsetFetchResponse

    groups: tuple[OffsetFetchRequestGroup, ...] = ()
    require_stable: bool = False

    @classmethod
    def for_group(cls, group_id: str, partitions: Iterable[TopicPartition] | None, *,
                  require_stable: bool = False) -> OffsetFetchRequest:
        """A request for one group (``partitions=None``: all of its offsets)."""
        topics: tuple[OffsetFetchRequestTopics, ...] | None = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            topics = tuple(OffsetFetchRequestTopics(name=t, partition_indexes=tuple(ps)) for t, ps in by_topic.items())
        return cls(groups=(OffsetFetchRequestGroup(group_id=group_id, topics=topics),), require_stable=require_stable)

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> OffsetFetchResponse:
        """Mirrors org.apache.kafka.common.requests.OffsetFetchRequest#getErrorResponse (v8+: every group gets the error)."""
        return OffsetFetchResponse(throttle_time_ms=throttle_time_ms, groups=tuple(
            OffsetFetchResponseGroup(group_id=g.group_id, error_code=error_code) for g in self.groups))


OffsetFetchResponse.REQUEST_TYPE = OffsetFetchRequest
