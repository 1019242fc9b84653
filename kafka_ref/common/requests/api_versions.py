"""ApiVersions: which APIs, at which versions, does this broker speak?

Mirrors org.apache.kafka.common.requests.ApiVersionsRequest / ApiVersionsResponse and the
message schemas ApiVersionsRequest.json / ApiVersionsResponse.json (version 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys

# The ApiVersions versions Kafka 3.8 accepts; sent back with UNSUPPORTED_VERSION (KIP-511).
API_VERSIONS_OLDEST_VERSION = 0
API_VERSIONS_LATEST_VERSION = 3

_SOFTWARE_NAME_VERSION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersion:
    """Mirrors org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion."""

    api_key: int = 0
    min_version: int = 0
    max_version: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SupportedFeatureKey:
    """Mirrors org.apache.kafka.common.message.ApiVersionsResponseData.SupportedFeatureKey."""

    name: str = ""
    min_version: int = 0
    max_version: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalizedFeatureKey:
    """Mirrors org.apache.kafka.common.message.ApiVersionsResponseData.FinalizedFeatureKey."""

    name: str = ""
    max_version_level: int = 0
    min_version_level: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersionsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ApiVersionsResponse.

    The supported version range of every API, plus the supported and finalized features
    (``finalized_features_epoch`` -1: unknown).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.API_VERSIONS
    API_NAME: ClassVar[str] = ApiKeys.API_VERSIONS.api_name

    error_code: int = 0
    api_keys: tuple[ApiVersion, ...] = ()
    throttle_time_ms: int = 0
    supported_features: tuple[SupportedFeatureKey, ...] = ()
    finalized_features_epoch: int = -1
    finalized_features: tuple[FinalizedFeatureKey, ...] = ()
    zk_migration_ready: bool = False

    def api_version(self, api_key: int) -> ApiVersion | None:
        """Mirrors org.apache.kafka.common.requests.ApiVersionsResponse#apiVersion.

        The version range advertised for one API; None when it is not supported.
        """
        for version in self.api_keys:
            if version.api_key == api_key:
                return version
        return None

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ApiVersionsResponse#errorCounts."""
        return {self.error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersionsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ApiVersionsRequest.

    The client names its software and version (KIP-511), used in broker metrics.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.API_VERSIONS
    API_NAME: ClassVar[str] = ApiKeys.API_VERSIONS.api_name
    RESPONSE_TYPE: ClassVar[type[ApiVersionsResponse]] = ApiVersionsResponse

    client_software_name: str = ""
    client_software_version: str = ""

    def is_valid(self) -> bool:
        """Mirrors org.apache.kafka.common.requests.ApiVersionsRequest#isValid.

        Name and version must be non-empty runs of letters, digits, '-' and '.', starting
        and ending with a letter or digit.
        """
        return bool(
            _SOFTWARE_NAME_VERSION.fullmatch(self.client_software_name)
            and _SOFTWARE_NAME_VERSION.fullmatch(self.client_software_version)
        )

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> ApiVersionsResponse:
        """Mirrors org.apache.kafka.common.requests.ApiVersionsRequest#getErrorResponse.

        With UNSUPPORTED_VERSION the response still lists the ApiVersions range the broker
        accepts, so the client can retry at a version it shares (KIP-511).
        """
        # 1. The error and throttle time.
        api_keys: tuple[ApiVersion, ...] = ()
        # 2. For UNSUPPORTED_VERSION, advertise the ApiVersions API's own range.
        if error_code == Errors.UNSUPPORTED_VERSION.code:
            api_keys = (
                ApiVersion(
                    api_key=ApiKeys.API_VERSIONS.id,
                    min_version=API_VERSIONS_OLDEST_VERSION,
                    max_version=API_VERSIONS_LATEST_VERSION,
                ),
            )
        return ApiVersionsResponse(error_code=error_code, api_keys=api_keys, throttle_time_ms=throttle_time_ms)


ApiVersionsResponse.REQUEST_TYPE = ApiVersionsRequest
