"""CreatePartitions: an admin client raises the partition count of existing topics.

Mirrors org.apache.kafka.common.requests.CreatePartitionsRequest / CreatePartitionsResponse and
the message schemas CreatePartitionsRequest.json / CreatePartitionsResponse.json (versions 0-3).
``count`` is the topic's new total; ``assignments`` (None: let the broker place them) lists the
replicas of each added partition, in partition order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePartitionsTopicResult:
    """Mirrors org.apache.kafka.common.message.CreatePartitionsResponseData.CreatePartitionsTopicResult."""

    name: str = ""
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePartitionsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.CreatePartitionsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CREATE_PARTITIONS
    API_NAME: ClassVar[str] = ApiKeys.CREATE_PARTITIONS.api_name

    throttle_time_ms: int = 0
    results: tuple[CreatePartitionsTopicResult, ...] = ()

    def topic_errors(self) -> dict[str, int]:
        """The error code of each topic, keyed by name."""
        return {r.name: r.error_code for r in self.results}

    def error_counts(self) -> dict[int, int]:
        """Mirrors CreatePartitionsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.results)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePartitionsAssignment:
    """Mirrors org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsAssignment."""

    broker_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePartitionsTopic:
    """Mirrors org.apache.kafka.common.message.CreatePartitionsRequestData.CreatePartitionsTopic."""

    name: str = ""
    count: int = 0
    assignments: tuple[CreatePartitionsAssignment, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePartitionsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.CreatePartitionsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CREATE_PARTITIONS
    API_NAME: ClassVar[str] = ApiKeys.CREATE_PARTITIONS.api_name
    RESPONSE_TYPE: ClassVar[type[CreatePartitionsResponse]] = CreatePartitionsResponse

    topics: tuple[CreatePartitionsTopic, ...] = ()
    timeout_ms: int = 60000
    validate_only: bool = False

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0,
                           error_message: str | None = None) -> CreatePartitionsResponse:
        """Mirrors CreatePartitionsRequest#getErrorResponse: every topic gets the error."""
        return CreatePartitionsResponse(throttle_time_ms=throttle_time_ms, results=tuple(
            CreatePartitionsTopicResult(name=t.name, error_code=error_code, error_message=error_message)
            for t in self.topics))


CreatePartitionsResponse.REQUEST_TYPE = CreatePartitionsRequest
