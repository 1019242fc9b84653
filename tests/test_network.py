"""The in-process network's failure model (issue 3), in virtual time on both backends.

A dead node refuses at once (DisconnectException, like a refused connection); an isolated
node, a cut link or a dropped message leaves the sender waiting until its timeout in loop
time; an answer travelling back over a link cut meanwhile is lost. Stands in for the parts of
Kafka's NetworkClient/SocketServer behaviour the replication protocol depends on.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.common.errors import Errors
from kafka_ref.network.network import (
    ANONYMOUS_PRINCIPAL,
    INTER_BROKER_PRINCIPAL,
    DisconnectException,
    Network,
    NetworkTimeoutException,
    serve_inbox,
)

pytestmark = pytest.mark.anyio


class Echo:
    """A node that answers ("echo", request, principal) and remembers what it handled."""

    def __init__(self, network: Network, node, *, before_respond=None) -> None:
        self.network = network
        self.node = node
        self.handled: list = []
        self.before_respond = before_respond

    def handle(self, envelope) -> None:
        self.handled.append(envelope.request)
        if self.before_respond is not None:
            self.before_respond(envelope)
        envelope.respond(("echo", envelope.request, envelope.principal))


async def start(tg, network, node, **kwargs) -> Echo:
    echo = Echo(network, node, **kwargs)
    tg.start_soon(serve_inbox, network.register(node), echo.handle)
    return echo


async def test_request_and_response_carry_the_principal():
    """A delivered request is answered; the receiver sees the sender's principal."""
    network = Network()
    async with anyio.create_task_group() as tg:
        echo = await start(tg, network, "b")
        assert await network.send("a", "b", "ping") == ("echo", "ping", INTER_BROKER_PRINCIPAL)
        assert await network.send("a", "b", "pong", principal=ANONYMOUS_PRINCIPAL) == ("echo", "pong", ANONYMOUS_PRINCIPAL)
        assert echo.handled == ["ping", "pong"] and network.sent_count == 2
        tg.cancel_scope.cancel()


async def test_dead_node_disconnects_at_once():
    """A node that is not running refuses the connection: DisconnectException, no time passes."""
    network = Network()
    start_time = anyio.current_time()
    with pytest.raises(DisconnectException):
        await network.send("a", "nobody", "ping", timeout_ms=30000)
    assert anyio.current_time() == start_time
    assert Errors.for_exception(DisconnectException("x")) is Errors.NETWORK_EXCEPTION
    assert not network.is_up("nobody")


async def test_node_dying_with_requests_in_flight_disconnects_them():
    """Requests in flight to a node that goes down fail at once with DisconnectException."""
    network = Network()
    network.register("b")  # nobody serves the inbox: requests sit there
    outcome = {}

    async def call():
        try:
            await network.send("a", "b", "ping", timeout_ms=30000)
        except DisconnectException:
            outcome["at"] = anyio.current_time()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await anyio.sleep(1)
        down_at = anyio.current_time()
        network.unregister("b")
    assert outcome["at"] == down_at


@pytest.mark.parametrize("fault", ["isolate_receiver", "isolate_sender", "cut_link", "drop_next"])
async def test_silent_faults_time_out_in_loop_time(fault):
    """An isolated node, a cut link or a dropped message: no answer, NetworkTimeoutException after timeout_ms."""
    network = Network()
    async with anyio.create_task_group() as tg:
        echo = await start(tg, network, "b")
        if fault == "isolate_receiver":
            network.isolate("b")
        elif fault == "isolate_sender":
            network.isolate("a")
        elif fault == "cut_link":
            network.cut_link("a", "b")
        else:
            network.drop_next("a", "b")
        start_time = anyio.current_time()
        with pytest.raises(NetworkTimeoutException):
            await network.send("a", "b", "lost", timeout_ms=1500)
        assert anyio.current_time() - start_time == pytest.approx(1.5, abs=1e-6)
        assert echo.handled == []
        # Other links keep working while the fault lasts (except for an isolated receiver).
        if fault != "isolate_receiver":
            assert await network.send("c", "b", "other") == ("echo", "other", INTER_BROKER_PRINCIPAL)
        # After healing (a dropped message only drops one), the same link works again.
        network.heal_all()
        assert await network.send("a", "b", "again") == ("echo", "again", INTER_BROKER_PRINCIPAL)
        tg.cancel_scope.cancel()


async def test_response_lost_on_a_link_cut_while_the_request_was_handled():
    """The request reaches the node and has its effect, but the answer travels back over a cut link."""
    network = Network()
    async with anyio.create_task_group() as tg:
        echo = await start(tg, network, "b", before_respond=lambda env: network.cut_link("a", "b"))
        with pytest.raises(NetworkTimeoutException):
            await network.send("a", "b", "write", timeout_ms=2000)
        assert echo.handled == ["write"]
        network.heal_link("a", "b")
        echo.before_respond = None
        assert await network.send("a", "b", "read") == ("echo", "read", INTER_BROKER_PRINCIPAL)
        tg.cancel_scope.cancel()


async def test_inbox_keeps_arrival_order_and_observers_see_every_request():
    """serve_inbox hands envelopes to the handler in arrival order; observers see every post."""
    network = Network()
    observed = []
    network.observers.append(lambda envelope: observed.append((envelope.src, envelope.dst, envelope.request)))
    async with anyio.create_task_group() as tg:
        echo = await start(tg, network, "b")
        envelopes = [network.post("a", "b", i) for i in range(5)]
        results = [await network.wait(e, 1000) for e in envelopes]
        assert [r[1] for r in results] == [0, 1, 2, 3, 4]
        assert echo.handled == [0, 1, 2, 3, 4]
        assert [e.correlation_id for e in envelopes] == sorted(e.correlation_id for e in envelopes)
        tg.cancel_scope.cancel()
    assert observed == [("a", "b", i) for i in range(5)]


async def test_restarted_node_gets_a_fresh_inbox():
    """register replaces a previous incarnation: requests in flight to the old one are disconnected."""
    network = Network()
    network.register("b")
    envelope = network.post("a", "b", "to the old one")
    network.register("b")
    with pytest.raises(DisconnectException):
        await network.wait(envelope, 1000)
    async with anyio.create_task_group() as tg:
        await start(tg, network, "b")
        assert await network.send("a", "b", "to the new one") == ("echo", "to the new one", INTER_BROKER_PRINCIPAL)
        tg.cancel_scope.cancel()
