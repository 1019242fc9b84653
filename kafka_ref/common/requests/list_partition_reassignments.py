"""ListPartitionReassignments: an admin asks the controller which partitions are being reassigned.

Mirrors org.apache.kafka.common.requests.ListPartitionReassignmentsRequest /
ListPartitionReassignmentsResponse and the message schemas ListPartitionReassignmentsRequest.json /
ListPartitionReassignmentsResponse.json (version 0, KIP-455). ``topics`` None lists every
reassignment in progress; named partitions that are not being reassigned are left out of the answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class OngoingPartitionReassignment:
    """Mirrors org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingPartitionReassignment."""

    partition_index: int = 0
    replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OngoingTopicReassignment:
    """Mirrors org.apache.kafka.common.message.ListPartitionReassignmentsResponseData.OngoingTopicReassignment."""

    name: str = ""
    partitions: tuple[OngoingPartitionReassignment, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListPartitionReassignmentsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ListPartitionReassignmentsResponse.

    A top-level ``error_code`` (NOT_CONTROLLER, authorization) answers the whole request;
    otherwise ``topics`` holds the reassignments in progress among those asked for.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_PARTITION_REASSIGNMENTS
    API_NAME: ClassVar[str] = ApiKeys.LIST_PARTITION_REASSIGNMENTS.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    topics: tuple[OngoingTopicReassignment, ...] = ()

    def reassignments(self) -> dict[TopicPartition, OngoingPartitionReassignment]:
        """Every partition answered, keyed by TopicPartition."""
        return {TopicPartition(t.name, p.partition_index): p for t in self.topics for p in t.partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ListPartitionReassignmentsResponse#errorCounts: the top-level code only."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class ListPartitionReassignmentsTopics:
    """Mirrors org.apache.kafka.common.message.ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics."""

    name: str = ""
    partition_indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListPartitionReassignmentsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ListPartitionReassignmentsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_PARTITION_REASSIGNMENTS
    API_NAME: ClassVar[str] = ApiKeys.LIST_PARTITION_REASSIGNMENTS.api_name
    RESPONSE_TYPE: ClassVar[type[ListPartitionReassignmentsResponse]] = ListPartitionReassignmentsResponse

    timeout_ms: int = 60000
    topics: tuple[ListPartitionReassignmentsTopics, ...] | None = None

    @classmethod
    def of(cls, partitions: Iterable[TopicPartition] | None, timeout_ms: int = 60000) -> ListPartitionReassignmentsRequest:
        """Build a request for these partitions (topics in first-seen order), or for every reassignment when None."""
        if partitions is None:
            return cls(timeout_ms=timeout_ms, topics=None)
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return cls(timeout_ms=timeout_ms, topics=tuple(
            ListPartitionReassignmentsTopics(name=t, partition_indexes=tuple(ps)) for t, ps in by_topic.items()))

    def partitions(self) -> list[TopicPartition] | None:
        """The partitions asked for, or None for all (KafkaApis#handleListPartitionReassignmentsRequest's partitionsOpt)."""
        if self.topics is None:
            return None
        return [TopicPartition(t.name, p) for t in self.topics for p in t.partition_indexes]

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0,
                           error_message: str | None = None) -> ListPartitionReassignmentsResponse:
        """Mirrors org.apache.kafka.common.requests.ListPartitionReassignmentsRequest#getErrorResponse.

        The top level carries the error; each named partition is echoed back with empty replica lists.
        """
        return ListPartitionReassignmentsResponse(
            throttle_time_ms=throttle_time_ms, error_code=error_code, error_message=error_message,
            topics=tuple(OngoingTopicReassignment(name=t.name, partitions=tuple(
                OngoingPartitionReassignment(partition_index=p) for p in t.partition_indexes))
                for t in self.topics or ()))


ListPartitionReassignmentsResponse.REQUEST_TYPE = ListPartitionReassignmentsRequest
