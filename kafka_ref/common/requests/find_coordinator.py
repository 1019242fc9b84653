"""FindCoordinator: which broker coordinates a consumer group or a transactional id?

Mirrors org.apache.kafka.common.requests.FindCoordinatorRequest / FindCoordinatorResponse and
the message schemas FindCoordinatorRequest.json / FindCoordinatorResponse.json (version 4,
batched keys of KIP-699).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


class CoordinatorType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType."""

    GROUP = 0
    TRANSACTION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Coordinator:
    """Mirrors org.apache.kafka.common.message.FindCoordinatorResponseData.Coordinator.

    The coordinator of one key, or an error (then node -1, host "", port -1).
    """

    key: str = ""
    node_id: int = 0
    host: str = ""
    port: int = 0
    error_code: int = 0
    error_message: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FindCoordinatorResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.FindCoordinatorResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FIND_COORDINATOR
    API_NAME: ClassVar[str] = ApiKeys.FIND_COORDINATOR.api_name

    throttle_time_ms: int = 0
    coordinators: tuple[Coordinator, ...] = ()

    @classmethod
    def prepare_error_response(cls, error_code: int, keys: Iterable[str]) -> FindCoordinatorResponse:
        """Mirrors org.apache.kafka.common.requests.FindCoordinatorResponse#prepareErrorResponse.

        Every key gets the error, the error's default message, and "no node" (-1, "", -1).
        """
        message = Errors.for_code(error_code).message
        return cls(
            coordinators=tuple(
                Coordinator(key=key, node_id=-1, host="", port=-1, error_code=error_code, error_message=message)
                for key in keys
            )
        )

    def coordinator(self, key: str) -> Coordinator | None:
        """The result for one key; None when the key is not in the response."""
        for coordinator in self.coordinators:
            if coordinator.key == key:
                return coordinator
        return None

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.FindCoordinatorResponse#errorCounts."""
        return error_counts_of(c.error_code for c in self.coordinators)


@dataclass(frozen=True, slots=True, kw_only=True)
class FindCoordinatorRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.FindCoordinatorRequest.

    ``key_type`` is a CoordinatorType; ``coordinator_keys`` are group ids or transactional ids.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FIND_COORDINATOR
    API_NAME: ClassVar[str] = ApiKeys.FIND_COORDINATOR.api_name
    RESPONSE_TYPE: ClassVar[type[FindCoordinatorResponse]] = FindCoordinatorResponse

    key_type: int = 0
    coordinator_keys: tuple[str, ...] = ()

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> FindCoordinatorResponse:
        """Mirrors org.apache.kafka.common.requests.FindCoordinatorRequest#getErrorResponse.

        Every requested key gets the error (see FindCoordinatorResponse.prepare_error_response).
        """
        response = FindCoordinatorResponse.prepare_error_response(error_code, self.coordinator_keys)
        return FindCoordinatorResponse(throttle_time_ms=throttle_time_ms, coordinators=response.coordinators)


FindCoordinatorResponse.REQUEST_TYPE = FindCoordinatorRequest
