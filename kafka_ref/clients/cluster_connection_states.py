"""A client's connection state per broker, and the reconnect backoff that keeps it off dead brokers.

Mirrors org.apache.kafka.clients.ClusterConnectionStates and
org.apache.kafka.common.utils.ExponentialBackoff (Kafka 3.7). On the in-process network a
connection attempt succeeds or fails at once (the destination is registered or not), so the
CONNECTING and CHECKING_API_VERSIONS states pass in the same step and are not kept; what
matters for liveness is kept exactly: a node we failed to reach is *blacked out* for its
reconnect backoff, which doubles with every consecutive failure (``reconnect.backoff.ms``
50 ms up to ``reconnect.backoff.max.ms`` 1000 ms, ±20 % jitter) and resets once a connection
is ready again.

The jitter draws from a seeded ``random.Random`` so a simulation replays exactly.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import Enum

RECONNECT_BACKOFF_EXP_BASE = 2
RECONNECT_BACKOFF_JITTER = 0.2


class ConnectionState(Enum):
    """Mirrors org.apache.kafka.clients.ConnectionState (the states this network can be in)."""

    DISCONNECTED = "DISCONNECTED"
    READY = "READY"


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
    """Mirrors ClusterConnectionStates.NodeConnectionState (without addresses and setup timeouts)."""

    state: ConnectionState
    last_connect_attempt_ms: int
    reconnect_backoff_ms: int
    failed_attempts: int = 0


class ClusterConnectionStates:
    """Mirrors org.apache.kafka.clients.ClusterConnectionStates (node ids are ints here)."""

    def __init__(self, reconnect_backoff_ms: int = 50, reconnect_backoff_max_ms: int = 1000,
                 rng: random.Random | None = None) -> None:
        self.reconnect_backoff = ExponentialBackoff(reconnect_backoff_ms, RECONNECT_BACKOFF_EXP_BASE,
                                                    reconnect_backoff_max_ms, RECONNECT_BACKOFF_JITTER,
                                                    rng or random.Random(0))
        self.node_state: dict[int, NodeConnectionState] = {}

    def can_connect(self, node: int, now: int) -> bool:
        """Mirrors ClusterConnectionStates#canConnect: never tried, or disconnected and past the backoff."""
        state = self.node_state.get(node)
        if state is None:
            return True
        return state.state is ConnectionState.DISCONNECTED and now - state.last_connect_attempt_ms >= state.reconnect_backoff_ms

    def is_blacked_out(self, node: int, now: int) -> bool:
        """Mirrors ClusterConnectionStates#isBlackedOut: disconnected and still inside the backoff."""
        state = self.node_state.get(node)
        return (state is not None and state.state is ConnectionState.DISCONNECTED
                and now - state.last_connect_attempt_ms < state.reconnect_backoff_ms)

    def connection_delay(self, node: int, now: int) -> float:
        """Mirrors ClusterConnectionStates#connectionDelay: ms until a connection may be tried (inf when connected)."""
        state = self.node_state.get(node)
        if state is None:
            return 0
        if state.state is ConnectionState.DISCONNECTED:
            return max(state.reconnect_backoff_ms - (now - state.last_connect_attempt_ms), 0)
        return math.inf

    def is_ready(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isReady (no throttling here)."""
        state = self.node_state.get(node)
        return state is not None and state.state is ConnectionState.READY

    def is_disconnected(self, node: int) -> bool:
        """Mirrors ClusterConnectionStates#isDisconnected."""
        state = self.node_state.get(node)
        return state is not None and state.state is ConnectionState.DISCONNECTED

    def last_connect_attempt_ms(self, node: int) -> int:
        """Mirrors ClusterConnectionStates#lastConnectAttemptMs (0 for a node never tried)."""
        state = self.node_state.get(node)
        return 0 if state is None else state.last_connect_attempt_ms

    def connecting(self, node: int, now: int) -> None:
        """Mirrors ClusterConnectionStates#connecting: a connection attempt starts now."""
        state = self.node_state.get(node)
        if state is None:
            self.node_state[node] = NodeConnectionState(ConnectionState.DISCONNECTED, now, self.reconnect_backoff.backoff(0))
        else:
            state.last_connect_attempt_ms = now

    def ready(self, node: int) -> None:
        """Mirrors ClusterConnectionStates#ready: connected; the backoff starts over."""
        state = self.node_state[node]
        state.state = ConnectionState.READY
        state.failed_attempts = 0
        state.reconnect_backoff_ms = self.reconnect_backoff.backoff(0)

    def disconnected(self, node: int, now: int) -> None:
        """Mirrors ClusterConnectionStates#disconnected: blacked out for a backoff that grows per failure."""
        state = self.node_state.get(node)
        if state is None:
            state = self.node_state[node] = NodeConnectionState(ConnectionState.DISCONNECTED, now, 0)
        # 1. The backoff counts from now, and doubles with each consecutive failure.
        state.last_connect_attempt_ms = now
        state.reconnect_backoff_ms = self.reconnect_backoff.backoff(state.failed_attempts)
        state.failed_attempts += 1
        # 2. The connection is gone.
        state.state = ConnectionState.DISCONNECTED
