"""Ports of org.apache.kafka.clients.ClusterConnectionStatesTest (Kafka 3.8) against
kafka_ref.clients.cluster_connection_states.ClusterConnectionStates.

Kafka's settings: reconnect backoff 10 s up to 60 s, connection setup timeout 10 s up to 127 s,
both ±20 % jitter; node ids 1001, 2002 and 3003. Jitter draws come from seeded streams here, so
each test checks Kafka's bands, not one value. Kafka's Long.MAX_VALUE connection delay of a
connected node is ``math.inf``.

Not ported (addresses and DNS are not modelled: nodes are ids on the in-process network):
testSingleIP, testMultipleIPs, testHostResolveChange, testNodeWithNewHostname,
testSkipLastAttemptedIp.
"""

from __future__ import annotations

import math
import random

import pytest

from kafka_ref.clients.cluster_connection_states import (
    CONNECTION_SETUP_TIMEOUT_EXP_BASE,
    CONNECTION_SETUP_TIMEOUT_JITTER,
    RECONNECT_BACKOFF_EXP_BASE,
    RECONNECT_BACKOFF_JITTER,
    ClusterConnectionStates,
    ConnectionState,
)
from kafka_ref.common.errors import AuthenticationException, IllegalStateException
from kafka_ref.common.time import MockTime

RECONNECT_BACKOFF_MS = 10 * 1000
RECONNECT_BACKOFF_MAX_MS = 60 * 1000
CONNECTION_SETUP_TIMEOUT_MS = 10 * 1000
CONNECTION_SETUP_TIMEOUT_MAX_MS = 127 * 1000
NODE1, NODE2, NODE3 = 1001, 2002, 3003


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def states() -> ClusterConnectionStates:
    return ClusterConnectionStates(RECONNECT_BACKOFF_MS, RECONNECT_BACKOFF_MAX_MS, random.Random(5),
                                   CONNECTION_SETUP_TIMEOUT_MS, CONNECTION_SETUP_TIMEOUT_MAX_MS, random.Random(6))


def within(expected: float, actual: float, delta: float) -> bool:
    return abs(expected - actual) <= delta


def test_cluster_connection_state_changes(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testClusterConnectionStateChanges."""
    assert states.can_connect(NODE1, time.milliseconds())
    assert states.connection_delay(NODE1, time.milliseconds()) == 0
    # 1. Connecting: not ready, not blacked out; the delay is the setup timeout.
    states.connecting(NODE1, time.milliseconds())
    assert states.connection_state(NODE1) is ConnectionState.CONNECTING
    assert states.is_connecting(NODE1)
    assert not states.is_ready(NODE1, time.milliseconds())
    assert not states.is_blacked_out(NODE1, time.milliseconds())
    assert not states.has_ready_nodes(time.milliseconds())
    assert within(CONNECTION_SETUP_TIMEOUT_MS, states.connection_delay(NODE1, time.milliseconds()),
                  CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_JITTER)
    time.advance(100)
    # 2. Connected.
    states.ready(NODE1)
    assert states.connection_state(NODE1) is ConnectionState.READY
    assert states.is_ready(NODE1, time.milliseconds())
    assert states.has_ready_nodes(time.milliseconds())
    assert not states.is_connecting(NODE1)
    assert not states.is_blacked_out(NODE1, time.milliseconds())
    assert states.connection_delay(NODE1, time.milliseconds()) == math.inf
    time.advance(15000)
    # 3. Disconnected: blacked out for the reconnect backoff (±20 %).
    states.disconnected(NODE1, time.milliseconds())
    assert states.connection_state(NODE1) is ConnectionState.DISCONNECTED
    assert states.is_disconnected(NODE1)
    assert states.is_blacked_out(NODE1, time.milliseconds())
    assert not states.is_connecting(NODE1)
    assert not states.has_ready_nodes(time.milliseconds())
    assert not states.can_connect(NODE1, time.milliseconds())
    backoff = states.connection_delay(NODE1, time.milliseconds())
    assert within(RECONNECT_BACKOFF_MS, backoff, RECONNECT_BACKOFF_MS * RECONNECT_BACKOFF_JITTER)
    # 4. Past the backoff a connection may be tried again.
    time.advance(backoff + 1)
    assert states.can_connect(NODE1, time.milliseconds())


def test_multiple_node_connection_states(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testMultipleNodeConnectionStates."""
    assert states.can_connect(NODE1, time.milliseconds()) and states.can_connect(NODE2, time.milliseconds())
    assert not states.has_ready_nodes(time.milliseconds())
    # 1. Only a ready node counts.
    states.connecting(NODE2, time.milliseconds())
    assert not states.has_ready_nodes(time.milliseconds())
    time.advance(1000)
    states.ready(NODE2)
    assert states.has_ready_nodes(time.milliseconds())
    states.connecting(NODE1, time.milliseconds())
    assert states.has_ready_nodes(time.milliseconds())
    time.advance(1000)
    states.ready(NODE1)
    assert states.has_ready_nodes(time.milliseconds())
    time.advance(12000)
    # 2. Disconnects, one at a time.
    states.disconnected(NODE2, time.milliseconds())
    assert states.has_ready_nodes(time.milliseconds())
    assert states.is_blacked_out(NODE2, time.milliseconds())
    assert not states.is_blacked_out(NODE1, time.milliseconds())
    time.advance(states.connection_delay(NODE2, time.milliseconds()))
    states.disconnected(NODE1, time.milliseconds() + 1)
    assert states.is_blacked_out(NODE1, time.milliseconds())
    assert not states.is_blacked_out(NODE2, time.milliseconds())
    assert not states.has_ready_nodes(time.milliseconds())


def test_authorization_failed(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testAuthorizationFailed."""
    states.connecting(NODE1, time.milliseconds())
    time.advance(100)
    states.authentication_failed(NODE1, time.milliseconds(), AuthenticationException("No path to CA for certificate!"))
    time.advance(1000)
    assert states.connection_state(NODE1) is ConnectionState.AUTHENTICATION_FAILED
    assert isinstance(states.authentication_exception(NODE1), AuthenticationException)
    assert not states.has_ready_nodes(time.milliseconds())
    assert not states.can_connect(NODE1, time.milliseconds())
    time.advance(states.connection_delay(NODE1, time.milliseconds()) + 1)
    assert states.can_connect(NODE1, time.milliseconds())
    states.ready(NODE1)
    assert states.authentication_exception(NODE1) is None


def test_remove_node(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testRemoveNode."""
    states.connecting(NODE1, time.milliseconds())
    time.advance(1000)
    states.ready(NODE1)
    time.advance(10000)
    states.disconnected(NODE1, time.milliseconds())
    # Removing a blacked-out node clears its backoff.
    states.remove(NODE1)
    assert states.can_connect(NODE1, time.milliseconds())
    assert not states.is_blacked_out(NODE1, time.milliseconds())
    assert states.connection_delay(NODE1, time.milliseconds()) == 0
    with pytest.raises(IllegalStateException):
        states.connection_state(NODE1)


def test_max_reconnect_backoff(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testMaxReconnectBackoff."""
    effective_max = round(RECONNECT_BACKOFF_MAX_MS * (1 + RECONNECT_BACKOFF_JITTER))
    states.connecting(NODE1, time.milliseconds())
    time.advance(1000)
    states.disconnected(NODE1, time.milliseconds())
    for _ in range(100):
        backoff = states.connection_delay(NODE1, time.milliseconds())
        assert backoff <= effective_max
        assert backoff <= RECONNECT_BACKOFF_MAX_MS  # kafka_ref (as Kafka's ExponentialBackoff) caps after the jitter
        assert not states.can_connect(NODE1, time.milliseconds())
        time.advance(backoff + 1)
        assert states.can_connect(NODE1, time.milliseconds())
        states.connecting(NODE1, time.milliseconds())
        time.advance(10)
        states.disconnected(NODE1, time.milliseconds())


@pytest.mark.parametrize("enter_checking_api_versions", [False, True])
def test_exponential_reconnect_backoff(states: ClusterConnectionStates, time: MockTime,
                                       enter_checking_api_versions: bool) -> None:
    """Mirrors ClusterConnectionStatesTest#testExponentialReconnectBackoff (#verifyReconnectExponentialBackoff)."""
    max_exp = math.log(RECONNECT_BACKOFF_MAX_MS / max(RECONNECT_BACKOFF_MS, 1)) / math.log(RECONNECT_BACKOFF_EXP_BASE)
    states.remove(NODE1)
    for i in range(10):
        states.connecting(NODE1, time.milliseconds())
        if enter_checking_api_versions:
            states.checking_api_versions(NODE1)
        states.disconnected(NODE1, time.milliseconds())
        expected = round(RECONNECT_BACKOFF_EXP_BASE ** min(i, max_exp) * RECONNECT_BACKOFF_MS)
        backoff = states.connection_delay(NODE1, time.milliseconds())
        assert within(expected, backoff, RECONNECT_BACKOFF_JITTER * expected), (i, expected, backoff)
        time.advance(backoff + 1)


def test_throttled(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testThrottled."""
    states.connecting(NODE1, time.milliseconds())
    time.advance(1000)
    states.ready(NODE1)
    time.advance(10000)
    assert states.throttle_delay_ms(NODE1, time.milliseconds()) == 0
    # 1. Throttled for 100 ms: not ready meanwhile; the poll delay is the throttle delay.
    states.throttle(NODE1, time.milliseconds() + 100)
    assert states.throttle_delay_ms(NODE1, time.milliseconds()) == 100
    assert not states.is_ready(NODE1, time.milliseconds())
    time.advance(50)
    assert states.throttle_delay_ms(NODE1, time.milliseconds()) == 50
    assert states.poll_delay_ms(NODE1, time.milliseconds()) == 50
    # 2. An earlier deadline does not shorten it.
    states.throttle(NODE1, time.milliseconds() + 10)
    assert states.throttle_delay_ms(NODE1, time.milliseconds()) == 50
    # 3. Past the deadline: the poll delay is the connection delay again.
    time.advance(50)
    assert states.throttle_delay_ms(NODE1, time.milliseconds()) == 0
    assert states.poll_delay_ms(NODE1, time.milliseconds()) == states.connection_delay(NODE1, time.milliseconds()) == math.inf
    assert states.is_ready(NODE1, time.milliseconds())


def test_is_preparing_connection(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testIsPreparingConnection."""
    assert not states.is_preparing_connection(NODE1)
    states.connecting(NODE1, time.milliseconds())
    assert states.is_preparing_connection(NODE1)
    states.checking_api_versions(NODE1)
    assert states.is_preparing_connection(NODE1)
    assert states.is_connected(NODE1) and not states.is_ready(NODE1, time.milliseconds())
    states.disconnected(NODE1, time.milliseconds())
    assert not states.is_preparing_connection(NODE1)


def test_exponential_connection_setup_timeout(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testExponentialConnectionSetupTimeout."""
    assert states.can_connect(NODE1, time.milliseconds())
    # 1. Each failed connection attempt doubles the setup timeout.
    steps = int(math.log(CONNECTION_SETUP_TIMEOUT_MAX_MS / CONNECTION_SETUP_TIMEOUT_MS)
                / math.log(CONNECTION_SETUP_TIMEOUT_EXP_BASE))
    assert steps == 3
    for n in range(steps + 1):
        states.connecting(NODE1, time.milliseconds())
        assert NODE1 in states.connecting_nodes
        expected = CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_EXP_BASE ** n
        assert within(expected, states.connection_setup_timeout_ms(NODE1), expected * CONNECTION_SETUP_TIMEOUT_JITTER)
        states.disconnected(NODE1, time.milliseconds())
        assert NODE1 not in states.connecting_nodes
    # 2. Capped at the maximum.
    states.connecting(NODE1, time.milliseconds())
    assert within(CONNECTION_SETUP_TIMEOUT_MAX_MS, states.connection_setup_timeout_ms(NODE1),
                  CONNECTION_SETUP_TIMEOUT_MAX_MS * CONNECTION_SETUP_TIMEOUT_JITTER)
    assert states.connection_setup_timeout_ms(NODE1) <= CONNECTION_SETUP_TIMEOUT_MAX_MS
    assert NODE1 in states.connecting_nodes
    # 3. Ready resets it.
    states.ready(NODE1)
    assert within(CONNECTION_SETUP_TIMEOUT_MS, states.connection_setup_timeout_ms(NODE1),
                  CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_JITTER)
    assert NODE1 not in states.connecting_nodes
    # 4. Losing an established connection does not lengthen it.
    states.disconnected(NODE1, time.milliseconds())
    states.connecting(NODE1, time.milliseconds())
    assert within(CONNECTION_SETUP_TIMEOUT_MS, states.connection_setup_timeout_ms(NODE1),
                  CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_JITTER)
    assert NODE1 in states.connecting_nodes


def test_timed_out_connections(states: ClusterConnectionStates, time: MockTime) -> None:
    """Mirrors ClusterConnectionStatesTest#testTimedOutConnections."""
    states.connecting(NODE1, time.milliseconds())
    states.connecting(NODE2, time.milliseconds())
    assert states.nodes_with_connection_setup_timeout(time.milliseconds()) == []
    time.advance(CONNECTION_SETUP_TIMEOUT_MS // 2)
    states.connecting(NODE3, time.milliseconds())
    # 1. Past the first two timeouts (with the largest jitter).
    time.advance(int(CONNECTION_SETUP_TIMEOUT_MS / 2 + CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_JITTER))
    assert states.nodes_with_connection_setup_timeout(time.milliseconds()) == [NODE1, NODE2]
    states.disconnected(NODE1, time.milliseconds())
    states.disconnected(NODE2, time.milliseconds())
    # 2. Past the third.
    time.advance(int(CONNECTION_SETUP_TIMEOUT_MS / 2 + CONNECTION_SETUP_TIMEOUT_MS * CONNECTION_SETUP_TIMEOUT_JITTER))
    assert states.nodes_with_connection_setup_timeout(time.milliseconds()) == [NODE3]
    states.disconnected(NODE3, time.milliseconds())
    assert states.nodes_with_connection_setup_timeout(time.milliseconds()) == []
    # 3. Only a connecting node can time out.
    with pytest.raises(IllegalStateException):
        states.is_connection_setup_timeout(NODE3, time.milliseconds())
