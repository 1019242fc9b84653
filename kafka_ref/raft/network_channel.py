"""How a Raft client's requests travel: org.apache.kafka.raft.NetworkChannel over the in-process network.

``send`` does not wait: the request goes out in the background and its answer (or the
timeout or disconnect) comes back to the client's ``handle_response``, as KafkaNetworkChannel
hands responses to the Raft client's message queue.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import anyio

from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

ResponseHandler = Callable[[int, int, Any, Any], None]


class NetworkChannel(Protocol):
    """Mirrors org.apache.kafka.raft.NetworkChannel."""

    def send(self, destination: int, correlation_id: int, request: Any) -> None: ...


class KafkaNetworkChannel:
    """Mirrors org.apache.kafka.raft.KafkaNetworkChannel on kafka_ref's Network."""

    def __init__(self, network: Any, node_id: int, request_timeout_ms: int) -> None:
        self.network = network
        self.node_id = node_id
        self.request_timeout_ms = request_timeout_ms
        self._task_group: anyio.abc.TaskGroup | None = None
        self._on_response: ResponseHandler | None = None

    def start(self, task_group: anyio.abc.TaskGroup, on_response: ResponseHandler) -> None:
        self._task_group = task_group
        self._on_response = on_response

    def stop(self) -> None:
        self._task_group = None

    def send(self, destination: int, correlation_id: int, request: Any) -> None:
        """Send in the background; the outcome reaches ``on_response(destination, correlation, request, result)``."""
        if self._task_group is None or self._on_response is None:
            return
        self._task_group.start_soon(self._send, destination, correlation_id, request)

    async def _send(self, destination: int, correlation_id: int, request: Any) -> None:
        try:
            result: Any = await self.network.send(self.node_id, destination, request, self.request_timeout_ms)
        except (DisconnectException, NetworkTimeoutException) as exc:
            result = exc
        if self._on_response is not None:
            self._on_response(destination, correlation_id, request, result)
