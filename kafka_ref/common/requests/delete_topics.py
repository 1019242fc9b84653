"""DeleteTopics: an admin client asks for topics to be deleted.

Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest / DeleteTopicsResponse and the
message schemas DeleteTopicsRequest.json / DeleteTopicsResponse.json (version 6: topics by
name or id).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.uuid import ZERO_UUID, Uuid


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletableTopicResult:
    """Mirrors org.apache.kafka.common.message.DeleteTopicsResponseData.DeletableTopicResult."""

    name: str | None = ""
    topic_id: Uuid = ZERO_UUID
    error_code: int = 0
    error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DeleteTopicsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_TOPICS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_TOPICS.api_name

    throttle_time_ms: int = 0
    responses: tuple[DeletableTopicResult, ...] = ()

    def topic_errors(self) -> dict[str, int]:
        """The error code of each named topic, keyed by name."""
        return {r.name: r.error_code for r in self.responses if r.name is not None}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.DeleteTopicsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.responses)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicState:
    """Mirrors org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState.

    A topic named either by ``name`` (``topic_id`` ZERO_UUID) or by ``topic_id`` (``name`` None).
    """

    name: str | None = None
    topic_id: Uuid = ZERO_UUID


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_TOPICS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_TOPICS.api_name
    RESPONSE_TYPE: ClassVar[type[DeleteTopicsResponse]] = DeleteTopicsResponse

    topics: tuple[DeleteTopicState, ...] = ()
    timeout_ms: int = 0

    @classmethod
    def for_topic_names(cls, names: Iterable[str], timeout_ms: int) -> DeleteTopicsRequest:
        """A request deleting topics by name."""
        return cls(topics=tuple(DeleteTopicState(name=n) for n in names), timeout_ms=timeout_ms)

    def topic_names(self) -> list[str]:
        """Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest#topicNames."""
        return [t.name for t in self.topics if t.name is not None]

    def topic_ids(self) -> list[Uuid]:
        """Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest#topicIds."""
        return [t.topic_id for t in self.topics if t.topic_id != ZERO_UUID]

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DeleteTopicsResponse:
        """Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest#getErrorResponse.

        Every topic, as named (by name or id), gets the error.
        """
        responses = tuple(
            DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=error_code) for t in self.topics
        )
        return DeleteTopicsResponse(throttle_time_ms=throttle_time_ms, responses=responses)


DeleteTopicsResponse.REQUEST_TYPE = DeleteTopicsRequest
