"""Which Raft requests may go out now: org.apache.kafka.raft.RequestManager.

One request at a time to each destination; after a failure (timeout, disconnect, an error
that is not handled) the destination backs off for ``retry_backoff_ms``. A response is only
acted on when it answers the request in flight (its correlation id), so answers to requests
from before a reset are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.time import Time


@dataclass
class _ConnectionState:
    in_flight_correlation: int | None = None
    backoff_until_ms: float = -1.0


class RequestManager:
    """Mirrors org.apache.kafka.raft.RequestManager (per-destination in-flight and backoff state)."""

    def __init__(self, time: Time, retry_backoff_ms: int, request_timeout_ms: int) -> None:
        self.time = time
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        self._states: dict[int, _ConnectionState] = {}

    def _state(self, node: int) -> _ConnectionState:
        return self._states.setdefault(node, _ConnectionState())

    def is_ready(self, node: int) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager.ConnectionState#isReady: nothing in flight and not backing off."""
        state = self._state(node)
        return state.in_flight_correlation is None and self.time.milliseconds() >= state.backoff_until_ms

    def remaining_backoff_ms(self, node: int) -> float:
        state = self._state(node)
        if state.in_flight_correlation is not None:
            return self.request_timeout_ms
        return max(0.0, state.backoff_until_ms - self.time.milliseconds())

    def on_request_sent(self, node: int, correlation_id: int) -> None:
        self._state(node).in_flight_correlation = correlation_id

    def is_response_expected(self, node: int, correlation_id: int) -> bool:
        return self._state(node).in_flight_correlation == correlation_id

    def on_response_received(self, node: int) -> None:
        """The answer was handled: the destination is ready again."""
        state = self._state(node)
        state.in_flight_correlation = None
        state.backoff_until_ms = -1.0

    def on_response_error(self, node: int) -> None:
        """The request failed: back off before the next one."""
        state = self._state(node)
        state.in_flight_correlation = None
        state.backoff_until_ms = self.time.milliseconds() + self.retry_backoff_ms

    def reset_all(self) -> None:
        """Mirrors RequestManager#resetAll (a new role: forget requests in flight)."""
        self._states.clear()
