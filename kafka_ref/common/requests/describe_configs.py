"""DescribeConfigs: the effective configuration of topics and brokers.

Mirrors org.apache.kafka.common.requests.DescribeConfigsRequest / DescribeConfigsResponse and the
message schemas DescribeConfigsRequest.json / DescribeConfigsResponse.json at version 4
(Kafka 3.8). Resource types (kafka_ref.image.records.ConfigResourceType), config sources and
config types are Kafka's numeric codes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


class ConfigSource(enum.IntEnum):
    """Mirrors org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigSource."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class ConfigType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.requests.DescribeConfigsResponse.ConfigType."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsSynonym:
    """Mirrors org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsSynonym."""

    name: str = ""
    value: str | None = ""
    source: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsResourceResult:
    """Mirrors org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResourceResult."""

    name: str = ""
    value: str | None = ""
    read_only: bool = False
    config_source: int = -1
    is_sensitive: bool = False
    synonyms: tuple[DescribeConfigsSynonym, ...] = ()
    config_type: int = 0
    documentation: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsResult:
    """Mirrors org.apache.kafka.common.message.DescribeConfigsResponseData.DescribeConfigsResult."""

    error_code: int = 0
    error_message: str | None = ""
    resource_type: int = 0
    resource_name: str = ""
    configs: tuple[DescribeConfigsResourceResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DescribeConfigsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_CONFIGS.api_name

    throttle_time_ms: int = 0
    results: tuple[DescribeConfigsResult, ...] = ()

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.DescribeConfigsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.results)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsResource:
    """Mirrors org.apache.kafka.common.message.DescribeConfigsRequestData.DescribeConfigsResource.

    ``configuration_keys`` None asks for every key.
    """

    resource_type: int = 0
    resource_name: str = ""
    configuration_keys: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeConfigsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DescribeConfigsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_CONFIGS.api_name
    RESPONSE_TYPE: ClassVar[type[DescribeConfigsResponse]] = DescribeConfigsResponse

    resources: tuple[DescribeConfigsResource, ...] = ()
    include_synonyms: bool = False
    include_documentation: bool = False

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DescribeConfigsResponse:
        """Mirrors org.apache.kafka.common.requests.DescribeConfigsRequest#getErrorResponse (every resource, the error)."""
        return DescribeConfigsResponse(throttle_time_ms=throttle_time_ms, results=tuple(
            DescribeConfigsResult(error_code=error_code, error_message=None, resource_type=r.resource_type,
                                  resource_name=r.resource_name) for r in self.resources))


DescribeConfigsResponse.REQUEST_TYPE = DescribeConfigsRequest
