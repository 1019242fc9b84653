"""Which Raft requests may go out now: org.apache.kafka.raft.RequestManager.

One request at a time to each destination. A connection is READY, AWAITING_RESPONSE (a request
in flight, until its answer or ``request_timeout_ms``) or BACKING_OFF (after a failed request,
for ``retry_backoff_ms``). A response is only acted on when it answers the request in flight
(its correlation id), so answers to requests from before a reset, or that timed out, are ignored.

An observer looking for the leader asks one of the "bootstrap servers" (findReadyBootstrapServer):
with a static voter set, as every kafka_ref quorum has, Kafka 3.8 builds that list from the voters
(KafkaRaftClient#initialize); KIP-853's controller.quorum.bootstrap.servers (ids below -1) is not
modelled.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass
from typing import Iterable

from kafka_ref.common.time import Time


class _State(enum.Enum):
    AWAITING_RESPONSE = "AWAITING_RESPONSE"
    BACKING_OFF = "BACKING_OFF"
    READY = "READY"


@dataclass
class ConnectionState:
    """Mirrors org.apache.kafka.raft.RequestManager.ConnectionState."""

    node: int
    retry_backoff_ms: int
    request_timeout_ms: int
    state: _State = _State.READY
    last_send_time_ms: float = 0
    last_fail_time_ms: float = 0
    in_flight_correlation_id: int | None = None

    def is_backoff_complete(self, time_ms: float) -> bool:
        """Mirrors RequestManager.ConnectionState#isBackoffComplete."""
        return self.state is _State.BACKING_OFF and time_ms >= self.last_fail_time_ms + self.retry_backoff_ms

    def has_request_timed_out(self, time_ms: float) -> bool:
        """Mirrors RequestManager.ConnectionState#hasRequestTimedOut."""
        return self.state is _State.AWAITING_RESPONSE and time_ms >= self.last_send_time_ms + self.request_timeout_ms

    def is_ready(self, time_ms: float) -> bool:
        """Mirrors RequestManager.ConnectionState#isReady: a finished backoff or a timed-out request frees the connection."""
        if self.is_backoff_complete(time_ms) or self.has_request_timed_out(time_ms):
            self.state = _State.READY
        return self.state is _State.READY

    def is_backing_off(self, time_ms: float) -> bool:
        """Mirrors RequestManager.ConnectionState#isBackingOff."""
        return self.state is _State.BACKING_OFF and not self.is_backoff_complete(time_ms)

    def has_inflight_request(self, time_ms: float) -> bool:
        """Mirrors RequestManager.ConnectionState#hasInflightRequest."""
        return self.state is _State.AWAITING_RESPONSE and not self.has_request_timed_out(time_ms)

    def remaining_request_time_ms(self, time_ms: float) -> float:
        """Mirrors RequestManager.ConnectionState#remainingRequestTimeMs."""
        if self.has_inflight_request(time_ms):
            return self.last_send_time_ms + self.request_timeout_ms - time_ms
        return 0

    def remaining_backoff_ms(self, time_ms: float) -> float:
        """Mirrors RequestManager.ConnectionState#remainingBackoffMs."""
        if self.is_backing_off(time_ms):
            return self.last_fail_time_ms + self.retry_backoff_ms - time_ms
        return 0

    def is_response_expected(self, correlation_id: int) -> bool:
        """Mirrors RequestManager.ConnectionState#isResponseExpected."""
        return self.in_flight_correlation_id is not None and self.in_flight_correlation_id == correlation_id

    def on_response_error(self, correlation_id: int, time_ms: float) -> None:
        """Mirrors RequestManager.ConnectionState#onResponseError: the request in flight failed; back off."""
        if self.in_flight_correlation_id is not None and self.in_flight_correlation_id == correlation_id:
            self.last_fail_time_ms = time_ms
            self.state = _State.BACKING_OFF
            self.in_flight_correlation_id = None

    def on_request_sent(self, correlation_id: int, time_ms: float) -> None:
        """Mirrors RequestManager.ConnectionState#onRequestSent."""
        self.last_send_time_ms = time_ms
        self.in_flight_correlation_id = correlation_id
        self.state = _State.AWAITING_RESPONSE


class RequestManager:
    """Mirrors org.apache.kafka.raft.RequestManager (per-destination in-flight and backoff state).

    Times are read from ``time`` (Kafka passes ``currentTimeMs`` into every call).
    """

    def __init__(self, time: Time, retry_backoff_ms: int, request_timeout_ms: int,
                 bootstrap_servers: Iterable[int] = (), rng: random.Random | None = None) -> None:
        self.time = time
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        self.bootstrap_servers = list(bootstrap_servers)
        self.rng = rng or random.Random(0)
        self._connections: dict[int, ConnectionState] = {}

    def find_ready_bootstrap_server(self) -> int | None:
        """Mirrors org.apache.kafka.raft.RequestManager#findReadyBootstrapServer.

        1. none while any request (to any node) is in flight; 2. else the first ready server,
        scanning from a random start.
        """
        # 1. One request at a time.
        if self.has_any_inflight_request() or not self.bootstrap_servers:
            return None
        # 2. From a random start.
        start = self.rng.randrange(len(self.bootstrap_servers))
        for i in range(len(self.bootstrap_servers)):
            node = self.bootstrap_servers[(start + i) % len(self.bootstrap_servers)]
            if self.is_ready(node):
                return node
        return None

    def backoff_before_available_bootstrap_server(self) -> float:
        """Mirrors org.apache.kafka.raft.RequestManager#backoffBeforeAvailableBootstrapServer.

        1. the request in flight: until its timeout; 2. a ready server: 0; 3. else the shortest
        backoff left (at most retry.backoff.ms). Connections that became ready are forgotten.
        """
        now = self.time.milliseconds()
        min_backoff_ms: float = self.retry_backoff_ms
        for node, connection in list(self._connections.items()):
            if connection.has_request_timed_out(now) or connection.is_backoff_complete(now):
                del self._connections[node]
            elif connection.has_inflight_request(now):
                # 1. At most one fetch in flight.
                return connection.remaining_request_time_ms(now)
            elif connection.is_backing_off(now):
                min_backoff_ms = min(min_backoff_ms, connection.remaining_backoff_ms(now))
        # 2. A server ready now.
        if any(self.is_ready(node) for node in self.bootstrap_servers):
            return 0
        # 3. The backoff.
        return min_backoff_ms

    def has_any_inflight_request(self) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager#hasAnyInflightRequest.

        Connections whose request timed out or whose backoff ended are forgotten on the way;
        True as soon as one still has a request in flight.
        """
        now = self.time.milliseconds()
        for node, connection in list(self._connections.items()):
            if connection.has_request_timed_out(now) or connection.is_backoff_complete(now):
                del self._connections[node]
            elif connection.has_inflight_request(now):
                return True
        return False

    def has_request_timed_out(self, node: int) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager#hasRequestTimedOut."""
        state = self._connections.get(node)
        return state is not None and state.has_request_timed_out(self.time.milliseconds())

    def is_ready(self, node: int) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager#isReady: no state, or a state that became ready (then forgotten)."""
        state = self._connections.get(node)
        if state is None:
            return True
        ready = state.is_ready(self.time.milliseconds())
        if ready:
            self.reset(node)
        return ready

    def is_backing_off(self, node: int) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager#isBackingOff."""
        state = self._connections.get(node)
        return state is not None and state.is_backing_off(self.time.milliseconds())

    def remaining_request_time_ms(self, node: int) -> float:
        """Mirrors org.apache.kafka.raft.RequestManager#remainingRequestTimeMs."""
        state = self._connections.get(node)
        return 0 if state is None else state.remaining_request_time_ms(self.time.milliseconds())

    def remaining_backoff_ms(self, node: int) -> float:
        """Mirrors org.apache.kafka.raft.RequestManager#remainingBackoffMs (0 unless backing off)."""
        state = self._connections.get(node)
        return 0 if state is None else state.remaining_backoff_ms(self.time.milliseconds())

    def is_response_expected(self, node: int, correlation_id: int) -> bool:
        """Mirrors org.apache.kafka.raft.RequestManager#isResponseExpected."""
        state = self._connections.get(node)
        return state is not None and state.is_response_expected(correlation_id)

    def on_response_result(self, node: int, correlation_id: int, success: bool) -> None:
        """Mirrors org.apache.kafka.raft.RequestManager#onResponseResult.

        1. only the answer to the request in flight counts; 2. a success frees the connection;
        a failure backs it off.
        """
        # 1. The request in flight?
        if not self.is_response_expected(node, correlation_id):
            return
        # 2. Free, or back off.
        if success:
            self.reset(node)
        else:
            self._connections[node].on_response_error(correlation_id, self.time.milliseconds())

    def on_request_sent(self, node: int, correlation_id: int) -> None:
        """Mirrors org.apache.kafka.raft.RequestManager#onRequestSent."""
        state = self._connections.setdefault(node, ConnectionState(node, self.retry_backoff_ms, self.request_timeout_ms))
        state.on_request_sent(correlation_id, self.time.milliseconds())

    def reset(self, node: int) -> None:
        """Mirrors org.apache.kafka.raft.RequestManager#reset."""
        self._connections.pop(node, None)

    def reset_all(self) -> None:
        """Mirrors org.apache.kafka.raft.RequestManager#resetAll (a new role: forget requests in flight)."""
        self._connections.clear()
