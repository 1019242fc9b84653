"""Ports of org.apache.kafka.clients.NetworkClientTest (Kafka 3.8) against kafka_ref.clients.network_client.NetworkClient.

Kafka drives NetworkClient with a MockSelector; here the client talks to a broker id registered
on the in-process Network, and each test plays the broker by taking envelopes from its inbox
and answering (or not) by hand. Kafka's settings: reconnect backoff 10 s (max 100 s), request
timeout 1 s; a "server disconnect" is the broker leaving the network. A connection attempt
succeeds or fails at once here (the broker is up or not). Async tests run in virtual time.

Not ported:
- testSendToUnreadyNode: ``post`` connects on demand (as ConsumerNetworkClient#trySend) and a
  node that cannot be reached fails the request with DisconnectException instead.
- testSimpleRequestResponseWithStaticNodes / ...WithNoBrokerDiscovery, testApiVersionsRequest,
  testInvalidApiVersionsRequest, testUnsupportedApiVersionsRequestWith(out)VersionProvidedByTheBroker,
  testUnsupportedVersionDuringInternalMetadataRequest, testThrottlingNotEnabledForConnectionToOlderBroker,
  testClientDisconnectAfterInternalApiVersionRequest: no ApiVersions handshake in process (every
  request is the newest version).
- testConnectionSetupTimeout, testConnectionTimeoutAfterThrottling, testCloseConnectingNode,
  testConnectionDoesNotRemainStuckInCheckingApiVersionsStateIfChannelNeverBecomesReady: a
  connection never stays CONNECTING here (the setup timeout itself is ported in
  tests/test_cluster_connection_states_kafka.py).
- testDnsLookupFailure, testReconnectAfterAddressChange, testFailedConnectionToFirstAddress(AfterReconnect):
  no addresses or DNS. testAuthenticationFailureWithInFlightMetadataRequest: no SASL/SSL.
- testTelemetryRequest: client telemetry (KIP-714) is not modelled. testClose, testCorrelationId:
  no selector to close; correlation ids are the Network's (unique per process).
- testLeastLoadedNodeProvideDisconnectedNodesPrioritizedByLastConnectionTimestamp: already in
  tests/test_client_liveness.py.
"""

from __future__ import annotations

import math

import anyio
import pytest

from kafka_ref.clients.client_metadata import Metadata, MetadataSnapshot, Node
from kafka_ref.clients.network_client import LeastLoadedNode, NetworkClient
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse, MetadataResponseBroker
from kafka_ref.common.requests.produce import ProduceRequest, ProduceResponse
from kafka_ref.common.time import MockTime, Time
from kafka_ref.network.network import DisconnectException, Network, NetworkTimeoutException

NODE = 0
RECONNECT_BACKOFF_MS = 10 * 1000
RECONNECT_BACKOFF_MAX_MS = 10 * 10000
REQUEST_TIMEOUT_MS = 1000


def new_client(network: Network, time: Time, *, nodes=(NODE,), reconnect_backoff_max_ms: int = RECONNECT_BACKOFF_MAX_MS,
               max_in_flight: int | None = None, metadata: Metadata | None = None) -> NetworkClient:
    if metadata is None:
        metadata = Metadata(50, 5000, topics=None, refresh_backoff_max_ms=50)
        metadata.snapshot = MetadataSnapshot(nodes={n: Node(n, "localhost", 1969 + n) for n in nodes})
        metadata.need_full_update = False
        metadata.last_successful_refresh_ms = time.milliseconds()
    extra = {} if max_in_flight is None else {"max_in_flight_requests_per_connection": max_in_flight}
    return NetworkClient(network, "mock", list(nodes), metadata, time=time, request_timeout_ms=REQUEST_TIMEOUT_MS,
                         reconnect_backoff_ms=RECONNECT_BACKOFF_MS, reconnect_backoff_max_ms=reconnect_backoff_max_ms,
                         **extra)


def metadata_request() -> MetadataRequest:
    return MetadataRequest.for_topics([], True)


def produce_request() -> ProduceRequest:
    return ProduceRequest(acks=1, timeout_ms=1000)


# --------------------------------------------------------------------------------------------
# Requests and responses
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_simple_request_response(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testSimpleRequestResponse."""
    network = Network()
    inbox = network.register(NODE)
    client = new_client(network, Time())
    envelope = client.post(NODE, metadata_request())
    assert client.connection_states.is_ready(NODE)
    # 1. The broker has the request; the client counts it in flight while waiting.
    received = inbox.receive_nowait()
    assert received.request == metadata_request() and received.src == "mock"
    answer = MetadataResponse(brokers=(MetadataResponseBroker(node_id=NODE),))
    result = []

    async def waiter() -> None:
        result.append(await client.wait(envelope))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert client.in_flight_request_count(NODE) == 1 and client.has_in_flight_requests()
        received.respond(answer)
    # 2. The answer comes back; nothing in flight.
    assert result == [answer]
    assert client.in_flight_request_count() == 0 and not client.has_in_flight_requests(NODE)


async def _request_timeout(request_timeout_ms: int | None) -> None:
    network = Network()
    inbox = network.register(NODE)
    time = Time()
    client = new_client(network, time)
    # 1. A produce that is answered: no metadata update wanted.
    envelope = client.post(NODE, produce_request())
    inbox.receive_nowait().respond(ProduceResponse())
    assert await client.wait(envelope, request_timeout_ms) == ProduceResponse()
    assert not client.metadata.update_requested()
    # 2. One that is not: it times out, the node is disconnected and a metadata update requested.
    envelope = client.post(NODE, produce_request())
    start = time.milliseconds()
    with pytest.raises(NetworkTimeoutException):
        await client.wait(envelope, request_timeout_ms)
    assert time.milliseconds() - start == (REQUEST_TIMEOUT_MS if request_timeout_ms is None else request_timeout_ms)
    assert client.connection_failed(NODE)
    assert client.metadata.update_requested()
    assert client.in_flight_request_count(NODE) == 0


@pytest.mark.anyio
async def test_request_timeout(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testRequestTimeout (a request's own timeout)."""
    await _request_timeout(REQUEST_TIMEOUT_MS + 5000)


@pytest.mark.anyio
async def test_default_request_timeout(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testDefaultRequestTimeout."""
    await _request_timeout(None)


@pytest.mark.anyio
async def test_request_timeout_fails_every_request_in_flight_on_the_connection(anyio_backend) -> None:
    """After NetworkClientTest#testRequestTimeout: closing the timed-out connection fails its other requests (handleTimedOutRequests)."""
    network = Network()
    network.register(NODE)
    client = new_client(network, Time())
    first = client.post(NODE, produce_request())
    outcomes: dict[str, str] = {}

    async def wait_first() -> None:
        try:
            await client.wait(first, 500)
        except NetworkTimeoutException:
            outcomes["first"] = "timeout"

    async def wait_second(second) -> None:
        try:
            await client.wait(second)
        except DisconnectException:
            outcomes["second"] = "disconnected"

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait_first)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(wait_second, client.post(NODE, produce_request()))
    assert outcomes == {"first": "timeout", "second": "disconnected"}
    # One disconnection for the connection: the backoff is the first one (10 s ± 20 %).
    assert client.connection_states.node_state[NODE].failed_attempts == 1
    assert 8000 <= client.connection_delay(NODE, client.time.milliseconds()) <= 12000


# --------------------------------------------------------------------------------------------
# The least-loaded node
# --------------------------------------------------------------------------------------------


def test_least_loaded_node() -> None:
    """Mirrors NetworkClientTest#testLeastLoadedNode."""
    network = Network()
    network.register(NODE)
    time = MockTime()
    client = new_client(network, time)
    # 1. Not connected: still the node (it may be connected to).
    result = client.least_loaded(time.milliseconds())
    assert result == LeastLoadedNode(NODE, False) and result.has_node_available_or_connection_ready
    assert client.ready(NODE, time.milliseconds())
    assert client.least_loaded(time.milliseconds()) == LeastLoadedNode(NODE, True)
    # 2. Past the backoff the server drops the connection: no node at all.
    time.advance(RECONNECT_BACKOFF_MS)
    network.unregister(NODE)
    assert not client.ready(NODE, time.milliseconds())
    result = client.least_loaded(time.milliseconds())
    assert result.node is None and not result.has_node_available_or_connection_ready


@pytest.mark.anyio
async def test_has_node_available_or_connection_ready(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testHasNodeAvailableOrConnectionReady (max.in.flight.requests.per.connection 1)."""
    network = Network()
    network.register(NODE)
    client = new_client(network, Time(), max_in_flight=1)
    assert client.ready(NODE)
    assert client.least_loaded() == LeastLoadedNode(NODE, True)
    envelope = client.post(NODE, metadata_request())
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.wait, envelope)
        await anyio.wait_all_tasks_blocked()
        # At its in-flight limit the node is not offered, but a connection is ready.
        result = client.least_loaded()
        assert result.node is None and result.has_node_available_or_connection_ready
        assert not client.is_ready(NODE) and not client.ready(NODE)
        envelope.respond(MetadataResponse())
    assert client.least_loaded() == LeastLoadedNode(NODE, True)


@pytest.mark.anyio
async def test_least_loaded_node_considers_throttled_connections(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testLeastLoadedNodeConsidersThrottledConnections."""
    network = Network()
    inbox = network.register(NODE)
    time = Time()
    client = new_client(network, time)
    assert client.ready(NODE)
    envelope = client.post(NODE, produce_request())
    inbox.receive_nowait().respond(ProduceResponse(throttle_time_ms=100))
    await client.wait(envelope)
    # 1. Throttled for 100 ms: no least-loaded node, not ready.
    assert client.least_loaded().node is None
    assert not client.is_ready(NODE)
    assert client.connection_states.throttle_delay_ms(NODE, time.milliseconds()) == 100
    # 2. Afterwards it is back.
    await time.sleep(100)
    assert client.least_loaded_node() == NODE and client.is_ready(NODE)


# --------------------------------------------------------------------------------------------
# Connection delay and reconnect backoff
# --------------------------------------------------------------------------------------------


def test_connection_delay() -> None:
    """Mirrors NetworkClientTest#testConnectionDelay and #testConnectionDelayWithNoExponentialBackoff."""
    for max_ms in (RECONNECT_BACKOFF_MAX_MS, RECONNECT_BACKOFF_MS):
        time = MockTime()
        client = new_client(Network(), time, reconnect_backoff_max_ms=max_ms)
        assert client.connection_delay(NODE, time.milliseconds()) == 0


def test_connection_delay_connected() -> None:
    """Mirrors NetworkClientTest#testConnectionDelayConnected and #testConnectionDelayConnectedWithNoExponentialBackoff."""
    for max_ms in (RECONNECT_BACKOFF_MAX_MS, RECONNECT_BACKOFF_MS):
        network = Network()
        network.register(NODE)
        time = MockTime()
        client = new_client(network, time, reconnect_backoff_max_ms=max_ms)
        assert client.ready(NODE, time.milliseconds())
        assert client.connection_delay(NODE, time.milliseconds()) == math.inf


def test_connection_delay_disconnected() -> None:
    """Mirrors NetworkClientTest#testConnectionDelayDisconnected: the second failure backs off twice as long."""
    network = Network()
    network.register(NODE)
    time = MockTime()
    client = new_client(network, time)
    assert client.ready(NODE, time.milliseconds())
    # 1. The server drops the connection: ~10 s.
    network.unregister(NODE)
    assert not client.is_ready(NODE, time.milliseconds())
    delay = client.connection_delay(NODE, time.milliseconds())
    assert abs(delay - RECONNECT_BACKOFF_MS) <= RECONNECT_BACKOFF_MS * 0.3
    time.advance(delay)
    assert client.connection_delay(NODE, time.milliseconds()) == 0
    # 2. The next attempt fails too: about twice as long.
    assert not client.ready(NODE, time.milliseconds())
    expected = 2 * RECONNECT_BACKOFF_MS
    second = client.connection_delay(NODE, time.milliseconds())
    assert abs(second - expected) <= expected * 0.2


def test_connection_delay_disconnected_with_no_exponential_backoff() -> None:
    """Mirrors NetworkClientTest#testConnectionDelayDisconnectedWithNoExponentialBackoff (max = initial: constant, no jitter)."""
    network = Network()
    network.register(NODE)
    time = MockTime()
    client = new_client(network, time, reconnect_backoff_max_ms=RECONNECT_BACKOFF_MS)
    assert client.ready(NODE, time.milliseconds())
    network.unregister(NODE)
    assert not client.is_ready(NODE, time.milliseconds())
    assert client.connection_delay(NODE, time.milliseconds()) == RECONNECT_BACKOFF_MS
    time.advance(RECONNECT_BACKOFF_MS)
    assert client.connection_delay(NODE, time.milliseconds()) == 0
    # The second failure backs off exactly as long.
    assert not client.ready(NODE, time.milliseconds())
    assert client.connection_delay(NODE, time.milliseconds()) == RECONNECT_BACKOFF_MS


def test_refused_connections_back_off_exponentially() -> None:
    """After NetworkClientTest#testServerDisconnectAfterInternalApiVersionRequest: each consecutive failed connection doubles the backoff.

    (Kafka's test fails the connection before it is READY; here that is a refused connection.
    A connection that became READY resets the backoff, as in Kafka.)
    """
    network = Network()
    time = MockTime()
    client = new_client(network, time)
    max_exp = math.log(RECONNECT_BACKOFF_MAX_MS / RECONNECT_BACKOFF_MS) / math.log(2)
    for i in range(5):
        assert client.can_connect(NODE, time.milliseconds())
        assert not client.ready(NODE, time.milliseconds())
        expected = round(2 ** min(i, max_exp) * RECONNECT_BACKOFF_MS)
        delay = client.connection_delay(NODE, time.milliseconds())
        assert abs(delay - expected) <= 0.2 * expected, (i, delay)
        assert delay <= RECONNECT_BACKOFF_MAX_MS
        time.advance(delay + 1)
    # A ready connection starts the backoff over.
    network.register(NODE)
    assert client.ready(NODE, time.milliseconds())
    network.unregister(NODE)
    assert not client.is_ready(NODE, time.milliseconds())
    assert abs(client.connection_delay(NODE, time.milliseconds()) - RECONNECT_BACKOFF_MS) <= 0.2 * RECONNECT_BACKOFF_MS


# --------------------------------------------------------------------------------------------
# Disconnections
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_disconnect_during_user_metadata_request(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testDisconnectDuringUserMetadataRequest: the user's request fails as disconnected."""
    network = Network()
    network.register(NODE)
    client = new_client(network, Time())
    envelope = client.post(NODE, metadata_request())
    failures: list[BaseException] = []

    async def waiter() -> None:
        try:
            await client.wait(envelope)
        except DisconnectException as exc:
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        assert client.in_flight_request_count(NODE) == 1
        assert client.has_in_flight_requests(NODE) and client.has_in_flight_requests()
        network.unregister(NODE)
    assert len(failures) == 1
    assert client.connection_failed(NODE) and client.metadata.update_requested()


@pytest.mark.anyio
async def test_disconnect_with_multiple_in_flights(anyio_backend) -> None:
    """Mirrors NetworkClientTest#testDisconnectWithMultipleInFlights: both fail as disconnected, one disconnection."""
    network = Network()
    network.register(NODE)
    client = new_client(network, Time())
    assert client.is_ready(NODE) or client.ready(NODE)
    first, second = client.post(NODE, metadata_request()), client.post(NODE, metadata_request())
    assert first.correlation_id != second.correlation_id
    order: list[int] = []

    async def waiter(envelope) -> None:
        try:
            await client.wait(envelope)
        except DisconnectException:
            order.append(envelope.correlation_id)

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter, first)
        tg.start_soon(waiter, second)
        await anyio.wait_all_tasks_blocked()
        assert client.in_flight_request_count() == 2 and client.in_flight_request_count(NODE) == 2
        client.disconnect(NODE)
    # Both fail as disconnected (oldest first; the waiters then wake in the scheduler's order).
    assert sorted(order) == [first.correlation_id, second.correlation_id]
    assert isinstance(first.error, DisconnectException) and isinstance(second.error, DisconnectException)
    assert client.in_flight_request_count() == 0 and client.in_flight_request_count(NODE) == 0
    assert client.connection_states.node_state[NODE].failed_attempts == 1


@pytest.mark.anyio
async def test_server_disconnect_with_multiple_in_flights_counts_once(anyio_backend) -> None:
    """After NetworkClientTest#testDisconnectWithMultipleInFlights: a server drop is one disconnection, however many wait."""
    network = Network()
    network.register(NODE)
    client = new_client(network, Time())
    envelopes = [client.post(NODE, metadata_request()) for _ in range(3)]

    async def waiter(envelope) -> None:
        with pytest.raises(DisconnectException):
            await client.wait(envelope)

    async with anyio.create_task_group() as tg:
        for envelope in envelopes:
            tg.start_soon(waiter, envelope)
        await anyio.wait_all_tasks_blocked()
        network.unregister(NODE)
    assert client.connection_states.node_state[NODE].failed_attempts == 1
    assert 8000 <= client.connection_delay(NODE, client.time.milliseconds()) <= 12000


@pytest.mark.anyio
async def test_late_failure_of_a_closed_connections_request_leaves_the_new_connection(anyio_backend) -> None:
    """After NetworkClientTest#testDisconnectWithMultipleInFlights: a request of a connection already closed fails
    without closing the connection made since."""
    network = Network()
    network.register(NODE)
    time = MockTime()
    client = new_client(network, time)
    old = client.post(NODE, metadata_request())
    # 1. The broker goes; the client notices before the request's waiter runs, and reconnects later.
    network.unregister(NODE)
    assert not client.is_ready(NODE, time.milliseconds())
    time.advance(int(client.connection_delay(NODE, time.milliseconds())))
    network.register(NODE)
    assert client.ready(NODE, time.milliseconds())
    # 2. The old request's failure surfaces now: the new connection stays.
    with pytest.raises(DisconnectException):
        await client.wait(old)
    assert client.is_ready(NODE, time.milliseconds())
    assert client.connection_states.node_state[NODE].failed_attempts == 0


def test_call_disconnect() -> None:
    """Mirrors NetworkClientTest#testCallDisconnect."""
    network = Network()
    network.register(NODE)
    time = MockTime()
    client = new_client(network, time)
    assert client.ready(NODE, time.milliseconds())
    assert not client.connection_failed(NODE)
    # 1. The client closes the connection: backoff, and no metadata update (its own choice).
    client.disconnect(NODE)
    assert not client.is_ready(NODE, time.milliseconds())
    assert client.connection_failed(NODE)
    assert not client.can_connect(NODE, time.milliseconds())
    assert not client.metadata.update_requested()
    # 2. Disconnecting a disconnected node does not restart its backoff.
    time.advance(RECONNECT_BACKOFF_MAX_MS)
    assert client.can_connect(NODE, time.milliseconds())
    client.disconnect(NODE)
    assert client.can_connect(NODE, time.milliseconds())


# --------------------------------------------------------------------------------------------
# The metadata updater
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_metadata_update_on_unreachable_node_backs_off_exponentially(anyio_backend) -> None:
    """After NetworkClientTest#testLeastLoadedNode and DefaultMetadataUpdater#maybeUpdate: failed refreshes count as attempts (KIP-580)."""
    time = Time()
    metadata = Metadata(100, 300000, topics=None, refresh_backoff_max_ms=1000)
    client = new_client(Network(), time, metadata=metadata)
    # 1. The only broker refuses: a failed attempt, and the node is in reconnect backoff.
    assert not await client.maybe_update_metadata()
    assert metadata.attempts == 1 and client.connection_failed(NODE)
    assert 80 <= metadata.time_to_next_update(time.milliseconds()) <= 120
    # 2. While it is backing off there is no node: the updater waits the reconnect backoff.
    start = time.milliseconds()
    assert not await client.maybe_update_metadata()
    assert time.milliseconds() - start == RECONNECT_BACKOFF_MS
    assert metadata.attempts == 1
    # 3. Past the reconnect backoff a second refused attempt doubles the metadata backoff.
    await time.sleep(client.connection_delay(NODE, time.milliseconds()))
    assert not await client.maybe_update_metadata()
    assert metadata.attempts == 2 and metadata.equivalent_response_count == 0
    assert 160 <= metadata.time_to_allow_update(time.milliseconds()) <= 240
