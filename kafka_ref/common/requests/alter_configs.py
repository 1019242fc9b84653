"""AlterConfigs (legacy): replace a resource's whole set of dynamic config overrides.

Mirrors org.apache.kafka.common.requests.AlterConfigsRequest / AlterConfigsResponse and the message
schemas AlterConfigsRequest.json / AlterConfigsResponse.json (versions 0-2). Unlike
IncrementalAlterConfigs, the configs named for a resource become its complete override set: a key
left out goes back to its default. Resource types are kafka_ref.image.records.ConfigResourceType's
ids (TOPIC 2, BROKER 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsResourceResponse:
    """Mirrors org.apache.kafka.common.message.AlterConfigsResponseData.AlterConfigsResourceResponse."""

    error_code: int = 0
    error_message: str | None = None
    resource_type: int = 0
    resource_name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.AlterConfigsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.ALTER_CONFIGS.api_name

    throttle_time_ms: int = 0
    responses: tuple[AlterConfigsResourceResponse, ...] = ()

    def errors(self) -> dict[tuple[int, str], int]:
        """Mirrors AlterConfigsResponse#errors: each resource's error code, keyed by (type, name)."""
        return {(r.resource_type, r.resource_name): r.error_code for r in self.responses}

    def error_counts(self) -> dict[int, int]:
        """Mirrors AlterConfigsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.responses)


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterableConfig:
    """Mirrors org.apache.kafka.common.message.AlterConfigsRequestData.AlterableConfig."""

    name: str = ""
    value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsResource:
    """Mirrors org.apache.kafka.common.message.AlterConfigsRequestData.AlterConfigsResource."""

    resource_type: int = 0
    resource_name: str = ""
    configs: tuple[AlterableConfig, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.AlterConfigsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.ALTER_CONFIGS.api_name
    RESPONSE_TYPE: ClassVar[type[AlterConfigsResponse]] = AlterConfigsResponse

    resources: tuple[AlterConfigsResource, ...] = ()
    validate_only: bool = False

    @classmethod
    def for_topics(cls, configs: dict[str, dict[str, str]], validate_only: bool = False) -> "AlterConfigsRequest":
        """Build the request (AlterConfigsRequest.Builder): each topic's complete new override set."""
        from kafka_ref.image.records import ConfigResourceType

        return cls(validate_only=validate_only, resources=tuple(
            AlterConfigsResource(resource_type=int(ConfigResourceType.TOPIC), resource_name=topic, configs=tuple(
                AlterableConfig(name=k, value=v) for k, v in keys.items()))
            for topic, keys in configs.items()))

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0,
                           error_message: str | None = None) -> AlterConfigsResponse:
        """Mirrors AlterConfigsRequest#getErrorResponse: every resource gets the error."""
        return AlterConfigsResponse(throttle_time_ms=throttle_time_ms, responses=tuple(
            AlterConfigsResourceResponse(error_code=error_code, error_message=error_message,
                                         resource_type=r.resource_type, resource_name=r.resource_name)
            for r in self.resources))


AlterConfigsResponse.REQUEST_TYPE = AlterConfigsRequest
