"""IncrementalAlterConfigs: set, delete, append to or subtract from configuration keys (KIP-339).

Mirrors org.apache.kafka.common.requests.IncrementalAlterConfigsRequest /
IncrementalAlterConfigsResponse and the message schemas IncrementalAlterConfigsRequest.json /
IncrementalAlterConfigsResponse.json (versions 0-1). Resource types are
kafka_ref.image.records.ConfigResourceType's ids (TOPIC 2, BROKER 4); operations are
AlterConfigOp.OpType's ids.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


class OpType(enum.IntEnum):
    """Mirrors org.apache.kafka.clients.admin.AlterConfigOp.OpType."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsResourceResponse:
    """Mirrors org.apache.kafka.common.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse."""

    error_code: int = 0
    error_message: str | None = None
    resource_type: int = 0
    resource_name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class IncrementalAlterConfigsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.IncrementalAlterConfigsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.INCREMENTAL_ALTER_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.INCREMENTAL_ALTER_CONFIGS.api_name

    throttle_time_ms: int = 0
    responses: tuple[AlterConfigsResourceResponse, ...] = ()

    def error_counts(self) -> dict[int, int]:
        """Mirrors IncrementalAlterConfigsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.responses)


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterableConfig:
    """Mirrors org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterableConfig."""

    name: str = ""
    config_operation: int = OpType.SET
    value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterConfigsResource:
    """Mirrors org.apache.kafka.common.message.IncrementalAlterConfigsRequestData.AlterConfigsResource."""

    resource_type: int = 0
    resource_name: str = ""
    configs: tuple[AlterableConfig, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IncrementalAlterConfigsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.IncrementalAlterConfigsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.INCREMENTAL_ALTER_CONFIGS
    API_NAME: ClassVar[str] = ApiKeys.INCREMENTAL_ALTER_CONFIGS.api_name
    RESPONSE_TYPE: ClassVar[type[IncrementalAlterConfigsResponse]] = IncrementalAlterConfigsResponse

    resources: tuple[AlterConfigsResource, ...] = ()
    validate_only: bool = False

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0,
                           error_message: str | None = None) -> IncrementalAlterConfigsResponse:
        """Mirrors IncrementalAlterConfigsRequest#getErrorResponse: every resource gets the error."""
        return IncrementalAlterConfigsResponse(throttle_time_ms=throttle_time_ms, responses=tuple(
            AlterConfigsResourceResponse(error_code=error_code, error_message=error_message,
                                         resource_type=r.resource_type, resource_name=r.resource_name)
            for r in self.resources))


IncrementalAlterConfigsResponse.REQUEST_TYPE = IncrementalAlterConfigsRequest
