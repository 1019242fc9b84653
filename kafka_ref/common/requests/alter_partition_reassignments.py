"""AlterPartitionReassignments: an admin asks the controller to move (or stop moving) replicas.

Mirrors org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest /
AlterPartitionReassignmentsResponse and the message schemas
AlterPartitionReassignmentsRequest.json / AlterPartitionReassignmentsResponse.json (version 0,
KIP-455). A partition whose ``replicas`` is None cancels the reassignment in progress.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignablePartitionResponse:
    """Mirrors org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse."""

    partition_index: int = 0
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignableTopicResponse:
    """Mirrors org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData.ReassignableTopicResponse."""

    name: str = ""
    partitions: tuple[ReassignablePartitionResponse, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionReassignmentsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse.

    A top-level ``error_code`` (NOT_CONTROLLER, authorization) answers the whole request;
    otherwise each partition carries its own error.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_PARTITION_REASSIGNMENTS
    API_NAME: ClassVar[str] = ApiKeys.ALTER_PARTITION_REASSIGNMENTS.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    error_message: str | None = None
    responses: tuple[ReassignableTopicResponse, ...] = ()

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition answered, keyed by TopicPartition."""
        return {TopicPartition(t.name, p.partition_index): p.error_code for t in self.responses for p in t.partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.AlterPartitionReassignmentsResponse#errorCounts.

        The top-level code once, then every partition's code.
        """
        return error_counts_of([self.error_code] + [p.error_code for t in self.responses for p in t.partitions])


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignablePartition:
    """Mirrors org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignablePartition.

    ``replicas`` None (JSON null) cancels the partition's reassignment.
    """

    partition_index: int = 0
    replicas: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReassignableTopic:
    """Mirrors org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData.ReassignableTopic."""

    name: str = ""
    partitions: tuple[ReassignablePartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionReassignmentsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_PARTITION_REASSIGNMENTS
    API_NAME: ClassVar[str] = ApiKeys.ALTER_PARTITION_REASSIGNMENTS.api_name
    RESPONSE_TYPE: ClassVar[type[AlterPartitionReassignmentsResponse]] = AlterPartitionReassignmentsResponse

    timeout_ms: int = 60000
    topics: tuple[ReassignableTopic, ...] = ()

    @classmethod
    def of(cls, reassignments: Mapping[TopicPartition, Sequence[int] | None],
           timeout_ms: int = 60000) -> AlterPartitionReassignmentsRequest:
        """Build a request from {partition: target replicas, or None to cancel}, topics in first-seen order."""
        by_topic: dict[str, list[ReassignablePartition]] = {}
        for tp, replicas in reassignments.items():
            by_topic.setdefault(tp.topic, []).append(ReassignablePartition(
                partition_index=tp.partition, replicas=None if replicas is None else tuple(replicas)))
        return cls(timeout_ms=timeout_ms, topics=tuple(
            ReassignableTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()))

    def reassignments(self) -> dict[TopicPartition, tuple[int, ...] | None]:
        """{partition: target replicas or None}, as KafkaApis#handleAlterPartitionReassignmentsRequest reads them."""
        return {TopicPartition(t.name, p.partition_index): p.replicas for t in self.topics for p in t.partitions}

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> AlterPartitionReassignmentsResponse:
        """Mirrors org.apache.kafka.common.requests.AlterPartitionReassignmentsRequest#getErrorResponse.

        Every partition of the request gets the error (and so does the top level).
        """
        return AlterPartitionReassignmentsResponse(
            throttle_time_ms=throttle_time_ms, error_code=error_code,
            responses=tuple(ReassignableTopicResponse(name=t.name, partitions=tuple(
                ReassignablePartitionResponse(partition_index=p.partition_index, error_code=error_code)
                for p in t.partitions)) for t in self.topics))


AlterPartitionReassignmentsResponse.REQUEST_TYPE = AlterPartitionReassignmentsRequest
