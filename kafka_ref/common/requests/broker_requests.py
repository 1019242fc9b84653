"""The two requests a KRaft broker sends to the controller about itself.

Mirrors org.apache.kafka.common.requests.BrokerRegistrationRequest / BrokerRegistrationResponse
and BrokerHeartbeatRequest / BrokerHeartbeatResponse with the message schemas
BrokerRegistrationRequest.json (v1) and BrokerHeartbeatRequest.json (v0), fields in snake_case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.uuid import ZERO_UUID, Uuid


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRegistrationResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.BrokerRegistrationResponse: the new broker epoch or an error."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BROKER_REGISTRATION
    API_NAME: ClassVar[str] = ApiKeys.BROKER_REGISTRATION.api_name
    throttle_time_ms: int = 0
    error_code: int = 0
    broker_epoch: int = -1

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        return {self.error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class Listener:
    """Mirrors BrokerRegistrationRequestData.Listener."""

    name: str = "PLAINTEXT"
    host: str = "localhost"
    port: int = 9092
    security_protocol: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Feature:
    """Mirrors org.apache.kafka.common.message.BrokerRegistrationRequestData.Feature: a feature version range the broker supports."""

    name: str
    min_supported_version: int
    max_supported_version: int


# The metadata.version range a kafka_ref broker supports (BrokerFeatures#defaultSupportedFeatures):
# from 3.0-IV1 (level 1, MetadataVersion.MINIMUM_KRAFT_VERSION) to 3.8-IV0 (level 20), the latest
# kafka_ref models. The other features Kafka 3.8 brokers list are not modelled.
SUPPORTED_METADATA_VERSION_FEATURE = Feature(name="metadata.version", min_supported_version=1, max_supported_version=20)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRegistrationRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.BrokerRegistrationRequest.

    ``incarnation_id`` is new for every broker process: the controller tells a restart of the
    same broker id from a second process claiming it.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BROKER_REGISTRATION
    API_NAME: ClassVar[str] = ApiKeys.BROKER_REGISTRATION.api_name
    RESPONSE_TYPE: ClassVar[type] = BrokerRegistrationResponse
    broker_id: int = 0
    cluster_id: str = ""
    incarnation_id: Uuid = ZERO_UUID
    listeners: tuple[Listener, ...] = ()
    rack: str | None = None
    is_migrating_zk_broker: bool = False
    # What BrokerLifecycleManager sends (kafka_ref's default, so hand-built requests register);
    # an empty tuple is a broker that lists no features (the controller assumes metadata.version 1 only).
    features: tuple[Feature, ...] = (SUPPORTED_METADATA_VERSION_FEATURE,)

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> BrokerRegistrationResponse:
        """Mirrors AbstractRequest#getErrorResponse: the whole request answered with one error."""
        return BrokerRegistrationResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


BrokerRegistrationResponse.REQUEST_TYPE = BrokerRegistrationRequest


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHeartbeatResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.BrokerHeartbeatResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BROKER_HEARTBEAT
    API_NAME: ClassVar[str] = ApiKeys.BROKER_HEARTBEAT.api_name
    throttle_time_ms: int = 0
    error_code: int = 0
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        return {self.error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHeartbeatRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.BrokerHeartbeatRequest.

    The broker reports the metadata offset it has loaded and whether it wants to stay fenced
    (until its first metadata publish) or to shut down (controlled shutdown).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BROKER_HEARTBEAT
    API_NAME: ClassVar[str] = ApiKeys.BROKER_HEARTBEAT.api_name
    RESPONSE_TYPE: ClassVar[type] = BrokerHeartbeatResponse
    broker_id: int = 0
    broker_epoch: int = -1
    current_metadata_offset: int = -1
    want_fence: bool = False   # (the schema default)
    want_shut_down: bool = False

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> BrokerHeartbeatResponse:
        """Mirrors AbstractRequest#getErrorResponse: the whole request answered with one error."""
        return BrokerHeartbeatResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


BrokerHeartbeatResponse.REQUEST_TYPE = BrokerHeartbeatRequest
