"""Expose a running Cluster on localhost TCP listeners for real Kafka clients.

``async with cluster.serve() as bootstrap:`` binds one listener per broker (ports chosen by the
OS unless ``port`` is given: broker ``b`` then listens on ``port + b``), yields the
``host:port,...`` bootstrap string, and keeps each listener in step with its broker:

- while the broker runs, its listener accepts connections and feeds its KafkaApis;
- when the broker is killed or shut down, the listener closes every connection and stops
  accepting (clients see connection refused, as with a dead Kafka process);
- when the broker is restarted, the listener binds the same port again.

Real sockets need a real clock: the cluster must run with ``clock="wall"`` on a normal event
loop (not trio's MockClock or the virtual asyncio loop), or time would jump while clients wait.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio.abc import SocketAttribute

from kafka_ref.common.requests.api_versions import ApiVersionsRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.wire.apis import Addresses, handle_api_versions_request
from kafka_ref.wire.socket_server import SocketServer

# How often (seconds) a listener checks whether its broker died or came back.
WATCH_INTERVAL_S = 0.02


def loop_clock_is_virtual() -> bool:
    """Whether the running loop's clock jumps (trio MockClock, our virtual asyncio loop)."""
    import sniffio

    if sniffio.current_async_library() == "trio":
        import trio
        import trio.testing

        return isinstance(trio.lowlevel.current_clock(), trio.testing.MockClock)
    from kafka_ref.testing.virtual_time_loop import running_loop_is_virtual

    return running_loop_is_virtual()


async def _bind(host: str, port: int) -> Any:
    # A restarted broker takes its old port back; right after a close the OS may still hold it.
    for attempt in range(50):
        try:
            return await anyio.create_tcp_listener(local_host=host, local_port=port)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or attempt == 49:
                raise
            await anyio.sleep(0.05)
    raise AssertionError("unreachable")


class WireServer:
    """The listeners of one cluster (what ``cluster.serve()`` runs)."""

    def __init__(self, cluster: Any, host: str = "127.0.0.1", port: int = 0) -> None:
        self.cluster = cluster
        self.host = host
        self.base_port = port
        self.addresses: Addresses = {}
        self.servers: dict[int, SocketServer] = {}
        # The open listener of each broker (closed ones are removed).
        self.listeners: dict[int, Any] = {}
        self._log = state_change_logger()

    async def close_listeners(self) -> None:
        """Close every open listener before the tasks accepting on them are cancelled.

        Why first: anyio's close removes the socket's reader from the loop before it cancels a
        pending accept, so a connection arriving in the same loop iteration cannot complete an
        accept the cancellation already cancelled (CPython 3.11's selector loop then raises
        InvalidStateError in its ``_sock_accept`` callback, failing the run).
        """
        for broker_id in list(self.listeners):
            await self.listeners.pop(broker_id).aclose()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{h}:{p}" for _, (h, p) in sorted(self.addresses.items()))

    async def run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        # 1. Bind every broker's listener first, so every address is known before any answer.
        listeners = {}
        for broker_id in range(self.cluster.num_brokers):
            listener = await _bind(self.host, self.base_port + broker_id if self.base_port else 0)
            listeners[broker_id] = listener
            self.addresses[broker_id] = (self.host, listener.extra(SocketAttribute.local_port))
        # 2. One watcher per broker keeps its listener in step with the broker.
        async with anyio.create_task_group() as tg:
            for broker_id, listener in listeners.items():
                tg.start_soon(self._follow_broker, broker_id, listener)
            self._log.info("wire_listening", bootstrap=self.bootstrap)
            task_status.started(self.bootstrap)

    async def _follow_broker(self, broker_id: int, listener: Any) -> None:
        host, port = self.addresses[broker_id]
        while True:
            broker = self.cluster.brokers.get(broker_id)
            # 1. Broker down: no listener, connections refused.
            if broker is None or not broker.is_running:
                if listener is not None:
                    self.listeners.pop(broker_id, None)
                    await listener.aclose()
                    listener = None
                    self._log.info("wire_listener_closed", broker_id=broker_id, port=port)
                await anyio.sleep(WATCH_INTERVAL_S)
                continue
            # 2. Broker up: listen (again, on the same port); its KafkaApis answers ApiVersions too
            #    (InitProducerId: every broker registers it, see install_transaction_coordinator).
            if listener is None:
                listener = await _bind(host, port)
                self._log.info("wire_listener_reopened", broker_id=broker_id, port=port)
            self.listeners[broker_id] = listener
            broker.apis.register(ApiVersionsRequest, handle_api_versions_request)
            server = SocketServer(self.cluster.network, broker_id, self.addresses)
            self.servers[broker_id] = server
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.serve, listener)
                # 3. Until this broker process dies; then every connection is closed.
                while broker.is_running and self.cluster.brokers.get(broker_id) is broker:
                    await anyio.sleep(WATCH_INTERVAL_S)
                # Close first, then cancel the accept loop and the connections (see close_listeners).
                self.listeners.pop(broker_id, None)
                await listener.aclose()
                tg.cancel_scope.cancel()
            listener = None
            self._log.info("wire_listener_closed", broker_id=broker_id, port=port)


@contextlib.asynccontextmanager
async def serve(cluster: Any, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Run the cluster's wire listeners; yields the bootstrap string (``Cluster.serve``)."""
    if loop_clock_is_virtual():
        raise RuntimeError("cluster.serve() needs a real clock: run the cluster with clock='wall' "
                           "on a normal event loop, not a virtual-time one")
    server = WireServer(cluster, host, port)
    async with anyio.create_task_group() as tg:
        bootstrap = await tg.start(server.run)
        cluster.wire = server
        try:
            yield bootstrap
        finally:
            with anyio.CancelScope(shield=True):
                await server.close_listeners()
            tg.cancel_scope.cancel()
