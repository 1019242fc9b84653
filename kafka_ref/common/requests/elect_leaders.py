"""ElectLeaders: an admin asks the controller for preferred or unclean leader elections.

Mirrors org.apache.kafka.common.requests.ElectLeadersRequest / ElectLeadersResponse and the
message schemas ElectLeadersRequest.json / ElectLeadersResponse.json (KIP-460: the election
type field). ``topic_partitions`` None means every partition of the cluster; an empty tuple
means none.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


class ElectionType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.ElectionType."""

    PREFERRED = 0
    UNCLEAN = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionResult:
    """Mirrors org.apache.kafka.common.message.ElectLeadersResponseData.PartitionResult."""

    partition_id: int = 0
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicaElectionResult:
    """Mirrors org.apache.kafka.common.message.ElectLeadersResponseData.ReplicaElectionResult: one topic's partitions."""

    topic: str = ""
    partition_result: tuple[PartitionResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectLeadersResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ElectLeadersResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ELECT_LEADERS
    API_NAME: ClassVar[str] = ApiKeys.ELECT_LEADERS.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    replica_election_results: tuple[ReplicaElectionResult, ...] = ()

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition answered, keyed by TopicPartition."""
        return {TopicPartition(t.topic, p.partition_id): p.error_code
                for t in self.replica_election_results for p in t.partition_result}

    def error_counts(self) -> dict[int, int]:
        """Mirrors ElectLeadersResponse#errorCounts: the top-level code, then every partition's."""
        return error_counts_of([self.error_code] + [p.error_code for t in self.replica_election_results
                                                    for p in t.partition_result])


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPartitions:
    """Mirrors org.apache.kafka.common.message.ElectLeadersRequestData.TopicPartitions."""

    topic: str = ""
    partitions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectLeadersRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ElectLeadersRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ELECT_LEADERS
    API_NAME: ClassVar[str] = ApiKeys.ELECT_LEADERS.api_name
    RESPONSE_TYPE: ClassVar[type[ElectLeadersResponse]] = ElectLeadersResponse

    election_type: int = ElectionType.PREFERRED
    topic_partitions: tuple[TopicPartitions, ...] | None = None
    timeout_ms: int = 60000

    @classmethod
    def of(cls, partitions: Iterable[TopicPartition] | None, election_type: ElectionType = ElectionType.PREFERRED,
           timeout_ms: int = 60000) -> ElectLeadersRequest:
        """Build a request for these partitions (topics in first-seen order), or for all when None."""
        if partitions is None:
            return cls(election_type=election_type, topic_partitions=None, timeout_ms=timeout_ms)
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return cls(election_type=election_type, timeout_ms=timeout_ms, topic_partitions=tuple(
            TopicPartitions(topic=t, partitions=tuple(ps)) for t, ps in by_topic.items()))

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> ElectLeadersResponse:
        """Mirrors ElectLeadersRequest#getErrorResponse: every named partition gets the error."""
        return ElectLeadersResponse(
            throttle_time_ms=throttle_time_ms, error_code=error_code,
            replica_election_results=tuple(
                ReplicaElectionResult(topic=t.topic, partition_result=tuple(
                    PartitionResult(partition_id=p, error_code=error_code) for p in t.partitions))
                for t in self.topic_partitions or ()))


ElectLeadersResponse.REQUEST_TYPE = ElectLeadersRequest
