"""How a client talks to brokers.

Mirrors the parts of org.apache.kafka.clients.NetworkClient a client in this process needs:
connection states with reconnect backoff (cluster_connection_states.py), in-flight counts per
broker, the least-loaded node, and the DefaultMetadataUpdater that sends MetadataRequests and
hears of every disconnection.

Every client (Producer, Consumer, Admin) owns one ``Metadata`` (client_metadata.py) and one
``NetworkClient``. Brokers are addressed by id on the in-process network.
"""

from __future__ import annotations

import math
import random
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import anyio

from kafka_ref.clients.client_metadata import Metadata, client_logger
from kafka_ref.clients.cluster_connection_states import ClusterConnectionStates
from kafka_ref.common.errors import KafkaException, NetworkException, TimeoutException
from kafka_ref.common.time import Time
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, DisconnectException, Envelope, Network


# NetworkClient's max.in.flight.requests.per.connection when none is given (Integer.MAX_VALUE).
MAX_IN_FLIGHT_UNBOUNDED = 2**31 - 1


@dataclass(frozen=True, slots=True)
class LeastLoadedNode:
    """Mirrors org.apache.kafka.clients.LeastLoadedNode: the node (None: none) and whether a connection is ready."""

    node: int | None
    at_least_one_connection_ready: bool

    @property
    def has_node_available_or_connection_ready(self) -> bool:
        """Mirrors LeastLoadedNode#hasNodeAvailableOrConnectionReady."""
        return self.node is not None or self.at_least_one_connection_ready


class NetworkClient:
    """Mirrors org.apache.kafka.clients.NetworkClient (connections, in-flight counts, least-loaded node, metadata updates).

    Requests go out as ``client_id`` with the ``User:ANONYMOUS`` principal. Connection state
    per broker lives in ``connection_states`` (ClusterConnectionStates): a broker that refused a
    connection, dropped one or let a request time out is disconnected and blacked out for its
    reconnect backoff (exponential, ``reconnect_backoff_ms`` up to ``reconnect_backoff_max_ms``).
    Every disconnection asks for a metadata update, since it may mean the metadata is stale
    (DefaultMetadataUpdater#handleServerDisconnect), and fails every request still in flight on
    that connection; a connection is disconnected once, however many requests were waiting on
    it (the client's own ``disconnect`` asks for no update). Transport failures surface as
    Kafka's NetworkException (DisconnectException) or TimeoutException (NetworkTimeoutException).
    A response's ``throttle_time_ms`` holds the connection back (KIP-219), and
    ``max_in_flight_requests_per_connection`` (unbounded unless given) caps what #isReady
    allows.

    A connection attempt here succeeds or fails at once (the broker is up on the in-process
    network or not), so ``ready(node)`` connects in the same step; a connection the client
    holds to a broker that has since crashed is noticed (as Kafka's selector notices the
    closed socket) the next time the client looks at that node.
    """

    def __init__(
        self,
        network: Network,
        client_id: str,
        bootstrap_brokers: Iterable[int],
        metadata: Metadata,
        *,
        time: Time | None = None,
        request_timeout_ms: int = 30000,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        max_in_flight_requests_per_connection: int = MAX_IN_FLIGHT_UNBOUNDED,
        principal: str = ANONYMOUS_PRINCIPAL,
        rng: random.Random | None = None,
    ) -> None:
        self.network = network
        self.client_id = client_id
        self.bootstrap_brokers = list(bootstrap_brokers)
        if not self.bootstrap_brokers:
            raise KafkaException("bootstrap_brokers must name at least one broker")
        self.metadata = metadata
        self.time = time or Time()
        self.request_timeout_ms = request_timeout_ms
        self.reconnect_backoff_ms = reconnect_backoff_ms
        self.max_in_flight_requests_per_connection = max_in_flight_requests_per_connection
        self.principal = principal
        # Kafka draws the least-loaded node's starting offset and the backoff jitter at random;
        # a stream seeded from the client id keeps runs replayable.
        self.rng = rng or random.Random(f"network-client/{client_id}")
        self.connection_states = ClusterConnectionStates(
            reconnect_backoff_ms, reconnect_backoff_max_ms, self.rng,
            setup_timeout_rng=random.Random(f"connection-setup-timeout/{client_id}"))
        # Requests being waited for, per broker (InFlightRequests#count).
        self.in_flight: dict[int, int] = {}
        # Every request posted on a connection and not yet forgotten (the InFlightRequests queue
        # that NetworkClient#cancelInFlightRequests fails when the connection closes), and the
        # connection each went out on: a failure is processed as a disconnection only while that
        # connection is still the node's current one (one disconnection per connection).
        self._sent: dict[int, weakref.WeakSet[Envelope]] = {}
        self._sent_on: weakref.WeakKeyDictionary[Envelope, int] = weakref.WeakKeyDictionary()
        self._connection_ids: dict[int, int] = {}
        self.metadata_listeners: list[Callable[[], None]] = []
        self._metadata_fetch: anyio.Event | None = None
        # Envelopes whose failure was already handled (refused at post, or cancelled with their
        # connection): their waiters do not process the disconnection again.
        self._failed_at_post: weakref.WeakSet[Envelope] = weakref.WeakSet()
        self._log = client_logger(client_id=client_id)

    # -- connections -----------------------------------------------------------------------

    def _check_connection(self, node: int, now: int) -> None:
        """Mirrors the disconnect detection of NetworkClient#poll (Selector#disconnected) for one node.

        A connection the client believes READY to a broker that is no longer up is processed
        as a disconnection now.
        """
        if self.connection_states.is_ready(node) and not self.network.is_up(node):
            self.process_disconnection(node, now)

    def can_send_request(self, node: int, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#canSendRequest.

        Connected and not throttled, and fewer than ``max_in_flight_requests_per_connection``
        requests in flight (InFlightRequests#canSendMore; a send completes at once here).
        """
        return (self.connection_states.is_ready(node, now)
                and self.in_flight.get(node, 0) < self.max_in_flight_requests_per_connection)

    def is_ready(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#isReady: a request can go to ``node`` now.

        (Kafka's #isReady also holds every request back while a metadata update is due; here the
        metadata update runs in its own task and does not need that priority.)
        """
        now = self.time.milliseconds() if now is None else now
        self._check_connection(node, now)
        return self.can_send_request(node, now)

    def ready(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#ready: sendable, or connect now if allowed."""
        now = self.time.milliseconds() if now is None else now
        # 1. Already able to send.
        if self.is_ready(node, now):
            return True
        # 2. Not blacked out: try to connect (here the attempt's outcome is known at once).
        if self.connection_states.can_connect(node, now):
            self.initiate_connect(node, now)
        return self.can_send_request(node, now)

    def _connected(self, node: int, now: int) -> bool:
        """A connection to ``node``, made now if none and allowed (ConsumerNetworkClient#trySend's #ready)."""
        self._check_connection(node, now)
        if not self.connection_states.is_ready(node) and self.connection_states.can_connect(node, now):
            self.initiate_connect(node, now)
        return self.connection_states.is_ready(node)

    def can_connect(self, node: int, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#canConnect."""
        return self.connection_states.can_connect(node, now)

    def initiate_connect(self, node: int, now: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#initiateConnect (and the connect's completion)."""
        # 1. The attempt starts (it sets the time the backoff counts from).
        self.connection_states.connecting(node, now)
        # 2. A broker that is up accepts the connection (a new connection id); otherwise it is
        #    refused and handled like any disconnection (backoff, metadata update requested).
        if self.network.is_up(node):
            self.connection_states.ready(node)
            self._connection_ids[node] = self._connection_ids.get(node, 0) + 1
        else:
            self._log.debug("connection_refused", node=node)
            self.process_disconnection(node, now)

    def process_disconnection(self, node: int, now: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#processDisconnection.

        The node enters reconnect backoff, every request still in flight on the connection
        fails (#cancelInFlightRequests), and the metadata updater hears of it.
        """
        # 1. Disconnected: blacked out for the (growing) reconnect backoff.
        self.connection_states.disconnected(node, now)
        # 2. Requests in flight on the connection fail with it.
        self._cancel_in_flight_requests(node)
        # 3. The metadata updater learns of it (and asks for an update).
        self.handle_server_disconnect(now, node)

    def disconnect(self, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#disconnect: the client closes the connection.

        Nothing happens for a node already disconnected (its backoff is not restarted); else the
        requests in flight fail and the node is disconnected (no metadata update: the client
        chose to close it).
        """
        # 1. Already disconnected: leave the backoff as it is.
        if self.connection_states.is_disconnected(node):
            return
        # 2. Fail what is in flight, then disconnect.
        now = self.time.milliseconds()
        self._cancel_in_flight_requests(node)
        self.connection_states.disconnected(node, now)

    def _cancel_in_flight_requests(self, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#cancelInFlightRequests: fail them, oldest first."""
        sent = self._sent.pop(node, None)
        if not sent:
            return
        for envelope in sorted(sent, key=lambda e: e.correlation_id):
            # Failed already (the broker went away) or failed now: either way its waiter must
            # not process this disconnection again.
            self._failed_at_post.add(envelope)
            envelope.fail(DisconnectException(f"connection to node {node} was closed"))

    def connection_failed(self, node: int) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#connectionFailed."""
        return self.connection_states.is_disconnected(node)

    def connection_delay(self, node: int, now: int) -> float:
        """Mirrors org.apache.kafka.clients.NetworkClient#connectionDelay."""
        return self.connection_states.connection_delay(node, now)

    def is_unavailable(self, node: int, now: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient#isUnavailable.

        The last connection attempt failed and its reconnect backoff has not passed yet.
        """
        now = self.time.milliseconds() if now is None else now
        self._check_connection(node, now)
        return self.connection_failed(node) and self.connection_delay(node, now) > 0

    # -- requests --------------------------------------------------------------------------

    def post(self, node: int, request: Any) -> Envelope:
        """Mirrors org.apache.kafka.clients.NetworkClient#send: queue a request without waiting (acks=0, or ``wait`` later).

        Connects first when there is no connection (as ConsumerNetworkClient#trySend does via
        #ready). A node in reconnect backoff is not contacted: the request fails at once with
        DisconnectException (ConsumerNetworkClient#checkDisconnects), as does one the broker refuses.
        """
        now = self.time.milliseconds()
        if not self._connected(node, now):
            envelope = Envelope(self.client_id, node, -1, request, self.principal, self.network)
            envelope.fail(DisconnectException(f"connection to node {node} failed (reconnect backoff "
                                              f"{self.connection_delay(node, now)} ms left)"))
            self._failed_at_post.add(envelope)
            return envelope
        envelope = self.network.post(self.client_id, node, request, self.principal)
        if envelope.answered and envelope.error is not None:
            self._failed_at_post.add(envelope)
            self.process_disconnection(node, now)
            return envelope
        self._sent.setdefault(node, weakref.WeakSet()).add(envelope)
        self._sent_on[envelope] = self._connection_ids.get(node, 0)
        return envelope

    async def wait(self, envelope: Envelope, timeout_ms: float | None = None) -> Any:
        """Wait for a posted request's answer, counting it in flight while waiting.

        A lost connection disconnects the node once (NetworkClient#processDisconnection), and a
        request timeout closes the connection, failing every other request in flight on it
        (NetworkClient#handleTimedOutRequests); a throttled response holds the connection back
        (NetworkClient#maybeThrottle).
        """
        node = envelope.dst
        self.in_flight[node] = self.in_flight.get(node, 0) + 1
        try:
            response = await self.network.wait(envelope, self.request_timeout_ms if timeout_ms is None else timeout_ms)
        except (NetworkException, TimeoutException):
            if envelope not in self._failed_at_post and self._sent_on.get(envelope) == self._connection_ids.get(node):
                self.process_disconnection(node, self.time.milliseconds())
            raise
        finally:
            self.in_flight[node] -= 1
        self.maybe_throttle(node, response)
        return response

    def maybe_throttle(self, node: int, response: Any) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient#maybeThrottle: a broker-requested throttle (KIP-219)."""
        throttle_time_ms = getattr(response, "throttle_time_ms", 0) or 0
        if throttle_time_ms > 0:
            self.connection_states.throttle(node, self.time.milliseconds() + throttle_time_ms)

    async def send(self, node: int, request: Any, timeout_ms: float | None = None) -> Any:
        """Mirrors org.apache.kafka.clients.NetworkClient#send then #poll: the request to broker ``node`` and its response."""
        return await self.wait(self.post(node, request), timeout_ms)

    def in_flight_request_count(self, node: int | None = None) -> int:
        """Mirrors org.apache.kafka.clients.NetworkClient#inFlightRequestCount (one node, or all)."""
        if node is None:
            return sum(self.in_flight.values())
        return self.in_flight.get(node, 0)

    def has_in_flight_requests(self, node: int | None = None) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient#hasInFlightRequests (one node, or any)."""
        return self.in_flight_request_count(node) > 0

    def least_loaded_node(self, now: int | None = None) -> int | None:
        """The node of :meth:`least_loaded` (what most callers want)."""
        return self.least_loaded(now).node

    def least_loaded(self, now: int | None = None) -> LeastLoadedNode:
        """Mirrors org.apache.kafka.clients.NetworkClient#leastLoadedNode (Kafka 3.8).

        From a random starting point among the known brokers: a broker we can send to with
        nothing in flight at once, else the one with fewest in flight, else one whose connection
        is being prepared, else the broker we may connect to whose last attempt is oldest. A
        broker in reconnect backoff is never chosen. No node: the caller waits
        ``reconnect_backoff_ms``. Before the first metadata the candidates are the bootstrap
        brokers; when no known broker is available and no connection is ready, the bootstrap
        brokers are tried as well (the re-bootstrap of KIP-899, Kafka 3.8's
        ``metadata.recovery.strategy=rebootstrap``).
        """
        now = self.time.milliseconds() if now is None else now
        known = sorted(self.metadata.fetch().nodes)
        # 1. The known brokers (the bootstrap list before the first metadata).
        result = self._least_loaded_of(known or self.bootstrap_brokers, now)
        # 2. Nothing available and no connection ready: the bootstrap list.
        if known and not result.has_node_available_or_connection_ready:
            result = self._least_loaded_of(self.bootstrap_brokers, now)
        return result

    def _least_loaded_of(self, nodes: list[int], now: int) -> LeastLoadedNode:
        if not nodes:
            return LeastLoadedNode(None, False)
        found_ready: int | None = None
        found_connecting: int | None = None
        found_can_connect: int | None = None
        fewest = math.inf
        at_least_one_connection_ready = False
        # 1. Start at a random offset so load spreads over the brokers.
        offset = self.rng.randrange(len(nodes))
        for i in range(len(nodes)):
            node = nodes[(offset + i) % len(nodes)]
            self._check_connection(node, now)
            if self.connection_states.is_ready(node, now):
                at_least_one_connection_ready = True
            # 2. Sendable: nothing in flight wins at once, else remember the least loaded.
            if self.can_send_request(node, now):
                in_flight = self.in_flight.get(node, 0)
                if in_flight == 0:
                    return LeastLoadedNode(node, True)
                if in_flight < fewest:
                    fewest, found_ready = in_flight, node
            # 3. A connection being set up.
            elif self.connection_states.is_preparing_connection(node):
                found_connecting = node
            # 4. Not connected but allowed to connect: prefer the least recently tried.
            elif self.connection_states.can_connect(node, now):
                if (found_can_connect is None or self.connection_states.last_connect_attempt_ms(found_can_connect)
                        > self.connection_states.last_connect_attempt_ms(node)):
                    found_can_connect = node
            # 5. Otherwise (reconnect backoff, throttled, or at its in-flight limit) the node is left out.
        for found in (found_ready, found_connecting, found_can_connect):
            if found is not None:
                return LeastLoadedNode(found, at_least_one_connection_ready)
        return LeastLoadedNode(None, at_least_one_connection_ready)

    # -- metadata --------------------------------------------------------------------------

    @property
    def metadata_fetch_in_progress(self) -> bool:
        """Mirrors NetworkClient.DefaultMetadataUpdater#hasFetchInProgress."""
        return self._metadata_fetch is not None

    def is_update_due(self, now: int) -> bool:
        """Mirrors NetworkClient.DefaultMetadataUpdater#isUpdateDue."""
        return not self.metadata_fetch_in_progress and self.metadata.time_to_next_update(now) == 0

    def handle_server_disconnect(self, now: int, node: int) -> None:
        """Mirrors org.apache.kafka.clients.NetworkClient.DefaultMetadataUpdater#handleServerDisconnect.

        A disconnection while an update is due counts as a failed update attempt (so the
        refresh backs off); and since it may mean our metadata names a dead broker, an update is
        requested.
        """
        # 1. A due update that meets a disconnect backs off like a failed one.
        if self.is_update_due(now):
            self.metadata.failed_update(now)
        # 2. The disconnect may come from stale metadata: ask for an update.
        self.metadata.request_update(False)

    async def maybe_update_metadata(self) -> bool:
        """Mirrors org.apache.kafka.clients.NetworkClient.DefaultMetadataUpdater#maybeUpdate.

        One MetadataRequest to the least-loaded node now; if one is already in flight, wait
        for it instead of sending another. True when the metadata was updated.
        """
        # 1. Share an update already in flight.
        if self._metadata_fetch is not None:
            version = self.metadata.update_version
            await self._metadata_fetch.wait()
            return self.metadata.update_version > version
        self._metadata_fetch = anyio.Event()
        try:
            # 2. The least-loaded node; none (every broker in reconnect backoff): try again
            #    after the reconnect backoff.
            now = self.time.milliseconds()
            node = self.least_loaded_node(now)
            if node is None:
                self._log.debug("metadata_request_no_node_available")
                await self.time.sleep(self.reconnect_backoff_ms)
                return False
            # 3. Connect if needed; a refused connection is a failed attempt.
            if not self.ready(node, now):
                self.metadata.failed_update(now)
                return False
            # 4. Ask it for the topics this client wants.
            request_and_version = self.metadata.new_metadata_request_and_version(now)
            request = request_and_version.request
            try:
                response = await self.send(node, request)
            except (NetworkException, TimeoutException) as exc:
                self._log.debug("metadata_request_failed", node=node, error=repr(exc))
                self.metadata.failed_update(self.time.milliseconds())
                return False
            # 5. A broker that knows no brokers yet has nothing useful to say.
            if not response.brokers:
                self.metadata.failed_update(self.time.milliseconds())
                return False
            self.metadata.update(request_and_version.request_version, response, self.time.milliseconds(),
                                 is_partial_update=request_and_version.is_partial_update)
            return True
        finally:
            event, self._metadata_fetch = self._metadata_fetch, None
            event.set()
            for listener in self.metadata_listeners:
                listener()

    async def poll_metadata(self) -> None:
        """Refresh metadata if it is due (requested and past the backoff, or expired); else return."""
        if self.metadata.time_to_next_update(self.time.milliseconds()) == 0:
            await self.maybe_update_metadata()

    async def await_metadata_update(self, deadline_ms: int) -> None:
        """Wait out the refresh backoff (bounded by ``deadline_ms``), then refresh once."""
        wait_ms = min(self.metadata.time_to_allow_update(self.time.milliseconds()), max(deadline_ms - self.time.milliseconds(), 0))
        if wait_ms > 0:
            await self.time.sleep(wait_ms)
        if self.time.milliseconds() <= deadline_ms:
            self.metadata.request_update()
            await self.maybe_update_metadata()
