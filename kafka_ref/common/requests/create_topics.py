"""CreateTopics: an admin client asks for new topics.

Mirrors org.apache.kafka.common.requests.CreateTopicsRequest / CreateTopicsResponse and the
message schemas CreateTopicsRequest.json / CreateTopicsResponse.json (version 7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.uuid import ZERO_UUID, Uuid

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatableTopicConfigs:
    """Mirrors org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicConfigs.

    One configuration of the created topic. ``config_source`` is Kafka's
    DescribeConfigsResponse.ConfigSource id (-1 unknown).
    """

    name: str = ""
    value: str | None = ""
    read_only: bool = False
    config_source: int = -1
    is_sensitive: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatableTopicResult:
    """Mirrors org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult.

    The outcome for one topic: its new id, error, and the partitions, replication factor and
    configs it ended up with (-1 / -1 when not reported).
    """

    name: str = ""
    topic_id: Uuid = ZERO_UUID
    error_code: int = 0
    error_message: str | None = ""
    topic_config_error_code: int = 0
    num_partitions: int = -1
    replication_factor: int = -1
    configs: tuple[CreatableTopicConfigs, ...] | None = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.CreateTopicsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CREATE_TOPICS
    API_NAME: ClassVar[str] = ApiKeys.CREATE_TOPICS.api_name

    throttle_time_ms: int = 0
    topics: tuple[CreatableTopicResult, ...] = ()

    def topic_errors(self) -> dict[str, int]:
        """The error code of each topic, keyed by name."""
        return {t.name: t.error_code for t in self.topics}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.CreateTopicsResponse#errorCounts."""
        return error_counts_of(t.error_code for t in self.topics)


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatableReplicaAssignment:
    """Mirrors org.apache.kafka.common.message.CreateTopicsRequestData.CreatableReplicaAssignment."""

    partition_index: int = 0
    broker_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateableTopicConfig:
    """Mirrors org.apache.kafka.common.message.CreateTopicsRequestData.CreateableTopicConfig (Kafka's spelling)."""

    name: str = ""
    value: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatableTopic:
    """Mirrors org.apache.kafka.common.message.CreateTopicsRequestData.CreatableTopic.

    A topic to create: a partition count and replication factor (-1 each for the broker
    defaults) or an explicit assignment, plus topic configs.
    """

    name: str = ""
    num_partitions: int = 0
    replication_factor: int = 0
    assignments: tuple[CreatableReplicaAssignment, ...] = ()
    configs: tuple[CreateableTopicConfig, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.CreateTopicsRequest.

    ``validate_only`` checks the request without creating anything.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CREATE_TOPICS
    API_NAME: ClassVar[str] = ApiKeys.CREATE_TOPICS.api_name
    RESPONSE_TYPE: ClassVar[type[CreateTopicsResponse]] = CreateTopicsResponse

    NO_NUM_PARTITIONS: ClassVar[int] = -1
    NO_REPLICATION_FACTOR: ClassVar[int] = -1

    topics: tuple[CreatableTopic, ...] = ()
    timeout_ms: int = 60000
    validate_only: bool = False

    def get_error_response(
        self, error_code: int, throttle_time_ms: int = 0, error_message: str | None = None
    ) -> CreateTopicsResponse:
        """Mirrors org.apache.kafka.common.requests.CreateTopicsRequest#getErrorResponse.

        Every topic gets the error; ``error_message`` is the exception's text when it
        differs from the code's default (Kafka's ApiError message), None otherwise.
        """
        topics = tuple(
            CreatableTopicResult(name=t.name, error_code=error_code, error_message=error_message) for t in self.topics
        )
        return CreateTopicsResponse(throttle_time_ms=throttle_time_ms, topics=topics)


CreateTopicsResponse.REQUEST_TYPE = CreateTopicsRequest
