"""The controller's connections to brokers: one queue and one sender task per live broker.

Mirrors kafka.controller.ControllerChannelManager and RequestSendThread (Kafka 3.x). Requests to
one broker are sent in order, one at a time; a request that fails to get an answer (the
broker crashed, the link is cut, it timed out) is retried after a backoff until it succeeds or
the broker is removed from the channel (the controller noticed it is dead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import anyio

from kafka_ref.common.state_change import state_change_logger
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

RETRY_BACKOFF_MS = 100


@dataclass(slots=True)
class QueueItem:
    """Mirrors kafka.controller.QueueItem: a request and what to do with its answer."""

    request: Any
    callback: Callable[[Any], None] | None


class RequestSendThread:
    """Mirrors kafka.controller.RequestSendThread: sends one broker's queue in order."""

    def __init__(self, controller_id: int, broker_id: int, network: Any, request_timeout_ms: int) -> None:
        self.controller_id = controller_id
        self.broker_id = broker_id
        self.network = network
        self.request_timeout_ms = request_timeout_ms
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream(math.inf)
        self.cancel_scope = anyio.CancelScope()
        self.sent = 0

    async def run(self) -> None:
        with self.cancel_scope:
            async for item in self.receive_stream:
                await self.do_work(item)

    async def do_work(self, item: QueueItem) -> None:
        """Mirrors kafka.controller.RequestSendThread#doWork: send until answered."""
        while True:
            try:
                response = await self.network.send(self.controller_id, self.broker_id, item.request, self.request_timeout_ms)
            except (DisconnectException, NetworkTimeoutException):
                await anyio.sleep(RETRY_BACKOFF_MS / 1000)
                continue
            self.sent += 1
            if item.callback is not None:
                item.callback(response)
            return


class ControllerChannelManager:
    """Mirrors kafka.controller.ControllerChannelManager."""

    def __init__(self, controller_id: int, network: Any, request_timeout_ms: int = 30000) -> None:
        self.controller_id = controller_id
        self.network = network
        self.request_timeout_ms = request_timeout_ms
        self.broker_state_info: dict[int, RequestSendThread] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        self._log = state_change_logger(controller_id=controller_id)

    def startup(self, task_group: anyio.abc.TaskGroup, broker_ids: list[int]) -> None:
        """Mirrors kafka.controller.ControllerChannelManager#startup."""
        self._task_group = task_group
        for broker_id in broker_ids:
            self.add_broker(broker_id)

    def shutdown(self) -> None:
        for broker_id in list(self.broker_state_info):
            self.remove_broker(broker_id)

    def add_broker(self, broker_id: int) -> None:
        """Mirrors kafka.controller.ControllerChannelManager#addBroker."""
        if broker_id in self.broker_state_info or self._task_group is None:
            return
        thread = RequestSendThread(self.controller_id, broker_id, self.network, self.request_timeout_ms)
        self.broker_state_info[broker_id] = thread
        self._task_group.start_soon(thread.run, name=f"controller-{self.controller_id}-to-broker-{broker_id}")

    def remove_broker(self, broker_id: int) -> None:
        """Mirrors kafka.controller.ControllerChannelManager#removeBroker: drop the queue and its thread."""
        thread = self.broker_state_info.pop(broker_id, None)
        if thread is not None:
            thread.cancel_scope.cancel()
            thread.send_stream.close()

    def send_request(self, broker_id: int, request: Any, callback: Callable[[Any], None] | None = None) -> None:
        """Mirrors kafka.controller.ControllerChannelManager#sendRequest (queued; dropped if the broker is gone)."""
        thread = self.broker_state_info.get(broker_id)
        if thread is None:
            self._log.warning("controller_request_to_unknown_broker", broker=broker_id, request=type(request).__name__)
            return
        thread.send_stream.send_nowait(QueueItem(request, callback))
