"""A client's connection state per broker, and the reconnect backoff that keeps it off dead brokers.

Mirrors org.apache.kafka.clients.ClusterConnectionStates and
org.apache.kafka.common.utils.ExponentialBackoff (Kafka 3.8). What matters for liveness is kept
exactly: a node we failed to reach is *blacked out* for its reconnect backoff, which doubles with
every consecutive failure (``reconnect.backoff.ms`` 50 ms up to ``reconnect.backoff.max.ms``
1000 ms, ±20 % jitter) and resets once a connection is ready again. The states CONNECTING and
CHECKING_API_VERSIONS and the connection setup timeout (``socket.connection.setup.timeout.ms``
10 s doubling up to ``socket.connection.setup.timeout.max.ms`` 30 s, ±20 % jitter) are kept as
Kafka keeps them; on the in-process network NetworkClient leaves CONNECTING in the same step (the
destination is registered or not), so no setup ever times out there. Throttling (KIP-219) is
kept as state only: nothing in this process throttles a connection yet. Addresses and DNS are
not modelled (nodes are ids on the in-process network).

The jitter draws from seeded ``random.Random`` streams so a simulation replays exactly: one for
the reconnect backoff, a separate one for the setup timeout (Kafka draws both from
ThreadLocalRandom; separate streams keep the reconnect backoff's draws independent of the
setup timeout's).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum

from kafka_ref.common.errors import IllegalStateException

RECONNECT_BACKOFF_EXP_BASE = 2
RECONNECT_BACKOFF_JITTER = 0.2
CONNECTION_SETUP_TIMEOUT_EXP_BASE = 2
CONNECTION_SETUP_TIMEOUT_JITTER = 0.2


class ConnectionState(Enum):
    """Mirrors org.apache.kafka.clients.ConnectionState (the states this network can be in)."""

    DISCONNECTED = "DISCONNECTED"
    CONNECTING = "CONNECTING"
    CHECKING_API_VERSIONS = "CHECKING_API_VERSIONS"
    READY = "READY"
    AUTHENTICATION_FAILED = "AUTHENTICATION_FAILED"

    def is_disconnected(self) -> bool:
        """Mirrors ConnectionState#isDisconnected."""
        return self in (ConnectionState.DISCONNECTED, ConnectionState.AUTHENTICATION_FAILED)

    def is_connected(self) -> bool:
        """Mirrors ConnectionState#isConnected."""
        return self in (ConnectionState.CHECKING_API_VERSIONS, ConnectionState.READY)


class ExponentialBackoff:
    """Mirrors org.apache.kafka.common.utils.ExponentialBackoff.

    ``backoff(n)`` is ``initial * multiplier ** n`` (n capped where the value reaches
    ``max_interval``), times a random factor in ``[1 - jitter, 1 + jitter)``, never above
    ``max_interval``; a ``max_interval`` below ``initial`` gives a constant ``max_interval``.
    """

    def __init__(self, initial_interval: int, multiplier: int, max_interval: int, jitter: float,
                 rng: random.Random) -> None:
        self.initial_interval = min(initial_interval, max_interval)
        self.multiplier = multiplier
        self.max_interval = max_interval
        self.jitter = jitter
        self.rng = rng
        self.exp_max = (math.log(max_interval / max(initial_interval, 1)) / math.log(multiplier)
                        if max_interval > initial_interval else 0.0)

    def backoff(self, attempts: int) -> int:
        """Mirrors org.apache.kafka.common.utils.ExponentialBackoff#backoff."""
        # 1. No growth possible: the constant interval.
        if self.exp_max == 0:
            return self.initial_interval
        # 2. The exponential term, capped in the exponent.
        term = self.initial_interval * self.multiplier ** min(attempts, self.exp_max)
        # 3. Jitter, then the cap on the value.
        factor = 1.0 if self.jitter <= 0 else self.rng.uniform(1 - self.jitter, 1 + self.jitter)
        return min(int(factor * term), self.max_interval)


@dataclass(slots=True)
class NodeConnectionState:
    """Mirrors ClusterConnectionStates.NodeConnectionState (without addresses)."""

    state: ConnectionState
    last_connect_attempt_ms: int
    reconnect_backoff_ms: int
    connection_setup_timeout_ms: int = 0
    failed_attempts: int = 0
    failed_connect_attempts: int = 0
    throttle_until_time_ms: int = 0
    authentication_exception: BaseException | None = None


class ClusterConnectionStates:
    """Mirrors org.apache.kafka.clients.ClusterConnectionStates (node ids are ints here)."""

    def __init__(self, reconnect_backoff_ms: int = 50, reconnect_backoff_max_ms: int = 1000,
                 rng: random.Random | None = None, connection_setup_timeout_ms: int = 10000,
                 connection_setup_timeout_max_ms: int = 30000,
                 setup_timeout_rng: random.Random | None = None) -> None:
        self.reconnect_backoff = ExponentialBackoff(reconnect_backoff_ms, RECONNECT_BACKOFF_EXP_BASE,
                                                    reconnect_backoff_max_ms, RECONNECT_BACKOFF_JITTER,
                                                    rng or random.Random(0))
        self.connection_setup_timeout = ExponentialBackoff(
            connection_setup_timeout_ms, CONNECTION_SETUP_TIMEOUT_EXP_BASE, connection_setup_timeout_max_ms,
            CONNECTION_SETUP_TIMEOUT_JITTER, setup_timeout_rng or random.Random("connection-setup-timeout"))
        self.node_state: dict[int, NodeConnectionState] = {}
        self.connecting_nodes: set[int] = set()

    def can_connect(self, node: int, now: int) -> bool:
        """Mirrors ClusterConnectionStates#canConnect: never tried, or disconnected and past the backoff."""
        state = self.node_state.get(node)
        if state is None:
            return True
        return state.state.is_disconnected() and now - state.last_connect_attempt_ms >= state.reconnect_backoff_ms

    def is_blacked_out(self, node: int, now: int) -> bool:
        """Mirrors ClusterConnectionStates#isBlackedOut: disconnected and still inside the backoff."""
        state = self.node_state.get(node)
        return (state is not None and state.state.is_disconnected()
                and now - state.last_connect_attempt_ms < state.reconnect_backoff_ms)

    def connection_delay(self, node: int, now: int) -> float:
        """Mirrors ClusterConnectionStates#connectionDelay: ms until a connection may be tried (inf when connected).

        1. Never tried: 0. 2. Connecting: the setup timeout. 3. Disconnected: what is left of the
        backoff. 4. Connected: no limit (Kafka's Long.MAX_VALUE).
        """
        state = self.node_state.get(node)
        if state is None:
            return 0
        if state.state is ConnectionState.CONNECTING:
            return state.connection_setup_timeout_ms
        if state.state.is_disconnected():
            return max(state.reconnect_backoff_ms - (now - state.last_connect_attempt_ms), 0)
        return math.inf

    def is_connecting(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isConnecting."""
        state = self.node_state.get(node)
        return state is not None and state.state is ConnectionState.CONNECTING

    def is_preparing_connection(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isPreparingConnection: connecting or checking API versions."""
        state = self.node_state.get(node)
        return state is not None and state.state in (ConnectionState.CONNECTING, ConnectionState.CHECKING_API_VERSIONS)

    def is_ready(self, node: int, now: int | None = None) -> bool:
        """Mirrors ClusterConnectionStates#isReady: READY and (when ``now`` is given) not throttled."""
        state = self.node_state.get(node)
        return (state is not None and state.state is ConnectionState.READY
                and (now is None or state.throttle_until_time_ms <= now))

    def has_ready_nodes(self, now: int) -> bool:
        """Mirrors ClusterConnectionStates#hasReadyNodes."""
        return any(self.is_ready(node, now) for node in self.node_state)

    def is_connected(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isConnected (checking API versions or ready)."""
        state = self.node_state.get(node)
        return state is not None and state.state.is_connected()

    def is_disconnected(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isDisconnected."""
        state = self.node_state.get(node)
        return state is not None and state.state.is_disconnected()

    def last_connect_attempt_ms(self, node: int) -> int:
        """Mirrors ClusterConnectionStates#lastConnectAttemptMs (0 for a node never tried)."""
        state = self.node_state.get(node)
        return 0 if state is None else state.last_connect_attempt_ms

    def connection_state(self, node: int) -> ConnectionState:
        """Mirrors ClusterConnectionStates#connectionState."""
        return self._node_state(node).state

    def authentication_exception(self, node: int) -> BaseException | None:
        """Mirrors ClusterConnectionStates#authenticationException."""
        state = self.node_state.get(node)
        return None if state is None else state.authentication_exception

    def connection_setup_timeout_ms(self, node: int) -> int:
        """Mirrors ClusterConnectionStates#connectionSetupTimeoutMs."""
        return self._node_state(node).connection_setup_timeout_ms

    def is_connection_setup_timeout(self, node: int, now: int) -> bool:
        """Mirrors ClusterConnectionStates#isConnectionSetupTimeout (only for a connecting node)."""
        state = self._node_state(node)
        if state.state is not ConnectionState.CONNECTING:
            raise IllegalStateException(f"Node {node} is not in connecting state")
        return now - state.last_connect_attempt_ms > state.connection_setup_timeout_ms

    def nodes_with_connection_setup_timeout(self, now: int) -> list[int]:
        """Mirrors ClusterConnectionStates#nodesWithConnectionSetupTimeout."""
        return sorted(node for node in self.connecting_nodes if self.is_connection_setup_timeout(node, now))

    def throttle(self, node: int, throttle_until_time_ms: int) -> None:
        """Mirrors ClusterConnectionStates#throttle: the deadline only moves forward."""
        state = self.node_state.get(node)
        if state is not None and state.throttle_until_time_ms < throttle_until_time_ms:
            state.throttle_until_time_ms = throttle_until_time_ms

    def throttle_delay_ms(self, node: int, now: int) -> int:
        """Mirrors ClusterConnectionStates#throttleDelayMs."""
        state = self.node_state.get(node)
        return state.throttle_until_time_ms - now if state is not None and state.throttle_until_time_ms > now else 0

    def poll_delay_ms(self, node: int, now: int) -> float:
        """Mirrors ClusterConnectionStates#pollDelayMs: the throttle delay of a connected node, else the connection delay."""
        throttle_delay = self.throttle_delay_ms(node, now)
        if self.is_connected(node) and throttle_delay > 0:
            return throttle_delay
        return self.connection_delay(node, now)

    def connecting(self, node: int, now: int) -> None:
        """Mirrors ClusterConnectionStates#connecting: a connection attempt starts now.

        1. A node seen before keeps its backoff state and becomes CONNECTING. 2. A new node gets
        the initial reconnect backoff and setup timeout.
        """
        state = self.node_state.get(node)
        if state is not None:
            state.last_connect_attempt_ms = now
            state.state = ConnectionState.CONNECTING
        else:
            self.node_state[node] = NodeConnectionState(ConnectionState.CONNECTING, now, self.reconnect_backoff.backoff(0),
                                                        self.connection_setup_timeout.backoff(0))
        self.connecting_nodes.add(node)

    def checking_api_versions(self, node: int) -> None:
        """Mirrors ClusterConnectionStates#checkingApiVersions: the socket is up; the setup timeout starts over."""
        state = self._node_state(node)
        state.state = ConnectionState.CHECKING_API_VERSIONS
        self._reset_connection_setup_timeout(state)
        self.connecting_nodes.discard(node)

    def ready(self, node: int) -> None:
        """Mirrors ClusterConnectionStates#ready: connected; the backoff and the setup timeout start over."""
        state = self._node_state(node)
        state.state = ConnectionState.READY
        state.authentication_exception = None
        state.failed_attempts = 0
        state.reconnect_backoff_ms = self.reconnect_backoff.backoff(0)
        self._reset_connection_setup_timeout(state)
        self.connecting_nodes.discard(node)

    def authentication_failed(self, node: int, now: int, exception: BaseException) -> None:
        """Mirrors ClusterConnectionStates#authenticationFailed: blacked out like a disconnection."""
        state = self._node_state(node)
        state.authentication_exception = exception
        state.state = ConnectionState.AUTHENTICATION_FAILED
        state.last_connect_attempt_ms = now
        self._update_reconnect_backoff(state)

    def disconnected(self, node: int, now: int) -> None:
        """Mirrors ClusterConnectionStates#disconnected: blacked out for a backoff that grows per failure."""
        state = self.node_state.get(node)
        if state is None:
            state = self.node_state[node] = NodeConnectionState(ConnectionState.DISCONNECTED, now, 0)
        # 1. The backoff counts from now, and doubles with each consecutive failure.
        state.last_connect_attempt_ms = now
        self._update_reconnect_backoff(state)
        # 2. A failed connection attempt lengthens the next setup timeout; any other disconnect resets it.
        if state.state is ConnectionState.CONNECTING:
            state.failed_connect_attempts += 1
            state.connection_setup_timeout_ms = self.connection_setup_timeout.backoff(state.failed_connect_attempts)
            self.connecting_nodes.discard(node)
        else:
            self._reset_connection_setup_timeout(state)
        # 3. The connection is gone.
        state.state = ConnectionState.DISCONNECTED

    def remove(self, node: int) -> None:
        """Mirrors ClusterConnectionStates#remove: forget the node (and its backoff)."""
        self.node_state.pop(node, None)
        self.connecting_nodes.discard(node)

    def _update_reconnect_backoff(self, state: NodeConnectionState) -> None:
        """Mirrors ClusterConnectionStates#updateReconnectBackoff."""
        state.reconnect_backoff_ms = self.reconnect_backoff.backoff(state.failed_attempts)
        state.failed_attempts += 1

    def _reset_connection_setup_timeout(self, state: NodeConnectionState) -> None:
        """Mirrors ClusterConnectionStates#resetConnectionSetupTimeout."""
        state.failed_connect_attempts = 0
        state.connection_setup_timeout_ms = self.connection_setup_timeout.backoff(0)

    def _node_state(self, node: int) -> NodeConnectionState:
        """Mirrors ClusterConnectionStates#nodeState: the state, which must exist."""
        state = self.node_state.get(node)
        if state is None:
            raise IllegalStateException(f"No entry found for connection {node}")
        return state
