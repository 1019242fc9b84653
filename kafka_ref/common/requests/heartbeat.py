"""Heartbeat: a member tells its coordinator it is alive; the answer says whether to rejoin.

Mirrors org.apache.kafka.common.requests.HeartbeatRequest / HeartbeatResponse and the message
schemas HeartbeatRequest.json / HeartbeatResponse.json at version 4 (Kafka 3.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.HeartbeatResponse.

    REBALANCE_IN_PROGRESS here is how a stable member learns that it must rejoin.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.HEARTBEAT
    API_NAME: ClassVar[str] = ApiKeys.HEARTBEAT.api_name

    throttle_time_ms: int = 0
    error_code: int = 0

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.HeartbeatResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.HeartbeatRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.HEARTBEAT
    API_NAME: ClassVar[str] = ApiKeys.HEARTBEAT.api_name
    RESPONSE_TYPE: ClassVar[type[HeartbeatResponse]] = HeartbeatResponse

    group_id: str = ""
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> HeartbeatResponse:
        """Mirrors org.apache.kafka.common.requests.HeartbeatRequest#getErrorResponse."""
        return HeartbeatResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


HeartbeatResponse.REQUEST_TYPE = HeartbeatRequest
