"""The header in front of every request and response.

Mirrors org.apache.kafka.common.requests.RequestHeader and ResponseHeader (RequestHeader.json,
ResponseHeader.json).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.errors import InvalidRequestException
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True)
class ResponseHeader:
    """Mirrors org.apache.kafka.common.requests.ResponseHeader.

    A response names only the correlation id of the request it answers.
    """

    correlation_id: int = 0


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """Mirrors org.apache.kafka.common.requests.RequestHeader.

    Which API is called (``api_key``) at which version, the correlation id the response will
    echo, and the client id the caller chose (nullable in Kafka; "" by default). An ``int``
    api key is turned into its ApiKeys member; an id Kafka does not know is an invalid request.
    """

    api_key: ApiKeys
    api_version: int = 0
    correlation_id: int = 0
    client_id: str | None = ""

    def __post_init__(self) -> None:
        # 1. Normalise the api key to its enum member, refusing ids Kafka does not define.
        if not isinstance(self.api_key, ApiKeys):
            if not ApiKeys.has_id(self.api_key):
                raise InvalidRequestException(f"Unknown API key {self.api_key}")
            object.__setattr__(self, "api_key", ApiKeys.for_id(self.api_key))

    def to_response_header(self) -> ResponseHeader:
        """Mirrors org.apache.kafka.common.requests.RequestHeader#toResponseHeader."""
        return ResponseHeader(correlation_id=self.correlation_id)
