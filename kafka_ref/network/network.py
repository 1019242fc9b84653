"""An in-process network of nodes that exchange request/response envelopes.

Stands in for Kafka's socket server, RequestChannel and NetworkClient. Each node (a broker, the
controller endpoint, a client) owns an inbox. ``await network.send(src, dst, request)`` puts an
``Envelope`` in ``dst``'s inbox and waits for the response (or for a timeout in loop time).

Failure model, matching what a Kafka client observes:
- destination not running (crashed, never started): ``DisconnectException`` at once, like a
  refused connection; requests in flight to a node that crashes fail the same way;
- isolated node, cut link or a dropped message: no answer, so ``NetworkTimeoutException`` after
  ``timeout_ms`` of loop time (like a request timing out on a silent peer);
- an optional fault model (``set_fault_model``, used by the simulator in kafka_ref/sim) may
  delay, duplicate, reorder or drop individual requests, drawing its choices from a seeded rng.

Inboxes use the nowait fast path (docs/DESIGN.md §5): ``send_nowait`` into an unbounded
stream, and the receiver tries ``receive_nowait`` before awaiting.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Protocol, Sequence

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from kafka_ref.common.errors import NetworkException, TimeoutException

NodeId = Hashable

INTER_BROKER_PRINCIPAL = "User:kafka"
ANONYMOUS_PRINCIPAL = "User:ANONYMOUS"


class DisconnectException(NetworkException):
    """Mirrors org.apache.kafka.common.errors.DisconnectException: the peer closed the connection.

    A subclass of NetworkException here so ``Errors.for_exception`` answers NETWORK_EXCEPTION,
    which is what Kafka's clients turn a disconnect into.
    """


class NetworkTimeoutException(TimeoutException):
    """No response within the request timeout (the peer is silent: isolated, cut off, or dropped)."""


@dataclass(slots=True, eq=False, weakref_slot=True)
class Envelope:
    """One request in flight: who sent it, to whom, as which principal, and how to answer.

    The handler calls ``respond(response)`` exactly once, possibly much later (a delayed
    produce or fetch answers when its purgatory operation completes), like Kafka's
    RequestChannel#sendResponse.
    """

    src: NodeId
    dst: NodeId
    correlation_id: int
    request: Any
    principal: str
    _network: "Network"
    # Fast path: most answers come before anyone waits (a produce answered in the handler, a
    # fetch with data ready), so the flag says "answered" and the event that wakes a waiter is
    # made only by ``Network.wait`` when it actually has to wait.
    _answered: bool = False
    _event: anyio.Event | None = None
    response: Any = None
    error: BaseException | None = None
    # A copy whose answer never reaches the sender (the earlier copies of a duplicated request).
    answer_lost: bool = False
    # The request's wire version when it came over a socket (kafka_ref.wire); None in process
    # (the newest version). Handlers whose behaviour depends on the version read it.
    api_version: int | None = None

    def respond(self, response: Any) -> None:
        if self._answered or self.answer_lost:
            return
        # The answer travels back over the same link: a cut link or isolation loses it.
        network = self._network
        if (network._isolated or network._cut) and not network._deliverable(self.dst, self.src):
            return
        self.response = response
        self._answered = True
        if self._event is not None:
            self._event.set()

    def fail(self, error: BaseException) -> None:
        if not self._answered:
            self.error = error
            self._answered = True
            if self._event is not None:
                self._event.set()

    @property
    def answered(self) -> bool:
        return self._answered


class FaultModel(Protocol):
    """What ``Network.set_fault_model`` expects: per-request delivery delays and a timer."""

    def deliveries(self, envelope: Envelope) -> Sequence[float]: ...

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> None: ...


class _Node:
    __slots__ = ("node_id", "send_stream", "receive_stream", "in_flight")

    def __init__(self, node_id: NodeId) -> None:
        self.node_id = node_id
        self.send_stream: ObjectSendStream[Envelope]
        self.receive_stream: ObjectReceiveStream[Envelope]
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream(math.inf)
        # Weak: a request nobody waits for (acks=0 produce) is forgotten once handled.
        self.in_flight: weakref.WeakSet[Envelope] = weakref.WeakSet()


class Network:
    """The set of reachable nodes, their inboxes, and the fault switches."""

    def __init__(self) -> None:
        self._nodes: dict[NodeId, _Node] = {}
        self._correlation = 0
        self._isolated: set[NodeId] = set()
        self._cut: set[frozenset] = set()
        self._drop_next: dict[tuple[NodeId, NodeId], int] = defaultdict(int)
        self.sent_count = 0
        self.observers: list[Callable[[Envelope], None]] = []
        self._fault_model: FaultModel | None = None

    # -- node lifecycle -------------------------------------------------------------------

    def register(self, node_id: NodeId) -> ObjectReceiveStream[Envelope]:
        """Bring a node up and hand it its inbox (replacing any previous incarnation)."""
        self.unregister(node_id)
        node = _Node(node_id)
        self._nodes[node_id] = node
        return node.receive_stream

    def unregister(self, node_id: NodeId) -> None:
        """Take a node down: its inbox closes and everything in flight to it fails at once."""
        node = self._nodes.pop(node_id, None)
        if node is None:
            return
        node.send_stream.close()
        # In send order, so the waiters wake in the same order on every run (a set of envelopes
        # iterates in memory-address order).
        for envelope in sorted(node.in_flight, key=lambda e: e.correlation_id):
            envelope.fail(DisconnectException(f"node {node_id} disconnected"))
        node.in_flight.clear()

    def is_up(self, node_id: NodeId) -> bool:
        return node_id in self._nodes

    # -- faults ---------------------------------------------------------------------------

    def isolate(self, node_id: NodeId) -> None:
        """Cut every link of ``node_id`` (requests in either direction go unanswered)."""
        self._isolated.add(node_id)

    def heal_node(self, node_id: NodeId) -> None:
        self._isolated.discard(node_id)

    def cut_link(self, a: NodeId, b: NodeId) -> None:
        self._cut.add(frozenset((a, b)))

    def heal_link(self, a: NodeId, b: NodeId) -> None:
        self._cut.discard(frozenset((a, b)))

    def heal_all(self) -> None:
        self._isolated.clear()
        self._cut.clear()
        self._drop_next.clear()

    def drop_next(self, src: NodeId, dst: NodeId, count: int = 1) -> None:
        """Silently drop the next ``count`` requests from ``src`` to ``dst``."""
        self._drop_next[(src, dst)] += count

    def set_fault_model(self, model: "FaultModel | None") -> None:
        """Install a model that decides the fate of each request (None removes it).

        For every request that would be delivered, ``model.deliveries(envelope)`` returns the
        delays, in seconds of loop time, at which copies reach the destination: ``(0.0,)`` is a
        normal delivery, ``()`` drops it, two entries duplicate it, and different delays on the
        same link reorder messages. A duplicated request is handled once per copy and the sender
        gets the answer to the last copy: the earlier answers are lost, as when a request is sent
        again after its connection dropped with the first answer still on the way (TCP itself
        never duplicates, so this is the only way Kafka sees a request twice).
        ``model.call_later(delay_s, callback)`` must run the callback after that much loop time. A late copy is lost if the destination restarted or the link
        broke meanwhile. Without a model, ``post`` takes the usual fast path.
        """
        self._fault_model = model

    def _deliver_late(self, node: "_Node", envelope: Envelope) -> None:
        if self._nodes.get(node.node_id) is not node or not self._deliverable(envelope.src, envelope.dst):
            return
        node.send_stream.send_nowait(envelope)

    def _post_with_faults(self, node: "_Node", envelope: Envelope) -> Envelope:
        assert self._fault_model is not None
        delays = self._fault_model.deliveries(envelope)
        if not delays:
            return envelope
        node.in_flight.add(envelope)
        last = len(delays) - 1
        for i, delay in enumerate(delays):
            copy = envelope if i == last else Envelope(envelope.src, envelope.dst, envelope.correlation_id,
                                                       envelope.request, envelope.principal, self, answer_lost=True)
            if delay <= 0:
                node.send_stream.send_nowait(copy)
            else:
                self._fault_model.call_later(delay, lambda copy=copy: self._deliver_late(node, copy))
        return envelope

    def _deliverable(self, src: NodeId, dst: NodeId) -> bool:
        if src in self._isolated or dst in self._isolated:
            return False
        return frozenset((src, dst)) not in self._cut

    # -- sending --------------------------------------------------------------------------

    def post(self, src: NodeId, dst: NodeId, request: Any, principal: str = INTER_BROKER_PRINCIPAL) -> Envelope:
        """Queue ``request`` to ``dst`` without waiting; the caller awaits ``wait(envelope)``."""
        self._correlation += 1
        envelope = Envelope(src, dst, self._correlation, request, principal, self)
        self.sent_count += 1
        for observer in self.observers:
            observer(envelope)
        node = self._nodes.get(dst)
        if node is None:
            envelope.fail(DisconnectException(f"node {dst} is not reachable (connection refused)"))
            return envelope
        if self._drop_next:
            key = (src, dst)
            if self._drop_next.get(key):
                self._drop_next[key] -= 1
                return envelope
        if (self._isolated or self._cut) and not self._deliverable(src, dst):
            return envelope
        if self._fault_model is not None:
            return self._post_with_faults(node, envelope)
        node.in_flight.add(envelope)
        node.send_stream.send_nowait(envelope)
        return envelope

    async def wait(self, envelope: Envelope, timeout_ms: float) -> Any:
        """Wait for the envelope's answer; raise its error or a timeout."""
        if not envelope._answered:
            # Only a request that has to wait pays for an event and a timeout (cancel scope).
            event = envelope._event = anyio.Event()
            with anyio.move_on_after(timeout_ms / 1000.0):
                await event.wait()
        node = self._nodes.get(envelope.dst)
        if node is not None:
            node.in_flight.discard(envelope)
        if not envelope._answered:
            raise NetworkTimeoutException(
                f"request {type(envelope.request).__name__} from {envelope.src} to {envelope.dst} "
                f"timed out after {timeout_ms} ms"
            )
        if envelope.error is not None:
            raise envelope.error
        return envelope.response

    async def send(
        self,
        src: NodeId,
        dst: NodeId,
        request: Any,
        timeout_ms: float = 30000,
        principal: str = INTER_BROKER_PRINCIPAL,
    ) -> Any:
        """Send ``request`` from ``src`` to ``dst`` and return the response."""
        return await self.wait(self.post(src, dst, request, principal), timeout_ms)


async def serve_inbox(inbox: ObjectReceiveStream[Envelope], handle: Callable[[Envelope], None]) -> None:
    """Run a node's request loop: hand each envelope to ``handle`` in arrival order.

    Mirrors kafka.server.KafkaRequestHandler#run. ``handle`` is synchronous (one event loop: a
    request's handling is atomic, like Kafka's request handler holding the partition locks);
    anything that must wait (acks=all, fetch max wait) parks in a purgatory and answers later.
    """
    while True:
        try:
            envelope = inbox.receive_nowait()
        except anyio.WouldBlock:
            try:
                envelope = await inbox.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return
        handle(envelope)
