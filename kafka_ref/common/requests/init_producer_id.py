"""InitProducerId: a producer asks for a producer id and epoch (idempotence, KIP-98).

Mirrors org.apache.kafka.common.requests.InitProducerIdRequest / InitProducerIdResponse and the
message schemas InitProducerIdRequest.json / InitProducerIdResponse.json at version 4
(Kafka 3.8). ``transactional_id`` None asks for an idempotent (non-transactional) producer id;
``producer_id`` / ``producer_epoch`` (v3+, KIP-360) name the id an existing producer holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class InitProducerIdResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.InitProducerIdResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.INIT_PRODUCER_ID
    API_NAME: ClassVar[str] = ApiKeys.INIT_PRODUCER_ID.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    producer_id: int = -1
    producer_epoch: int = 0

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.InitProducerIdResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class InitProducerIdRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.InitProducerIdRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.INIT_PRODUCER_ID
    API_NAME: ClassVar[str] = ApiKeys.INIT_PRODUCER_ID.api_name
    RESPONSE_TYPE: ClassVar[type[InitProducerIdResponse]] = InitProducerIdResponse

    transactional_id: str | None = None
    transaction_timeout_ms: int = 0
    producer_id: int = -1
    producer_epoch: int = -1

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> InitProducerIdResponse:
        """Mirrors org.apache.kafka.common.requests.InitProducerIdRequest#getErrorResponse (no id, epoch 0)."""
        return InitProducerIdResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


InitProducerIdResponse.REQUEST_TYPE = InitProducerIdRequest
