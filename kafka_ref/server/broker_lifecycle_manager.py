"""A KRaft broker's registration and heartbeats.

Mirrors kafka.server.BrokerLifecycleManager (Kafka 3.3–3.4). The broker registers with a new
incarnation id (retrying, e.g. while the controller still holds a live session of its previous
process), then heartbeats every ``broker.heartbeat.interval.ms``. Each heartbeat reports the
metadata offset the broker has loaded and whether it wants to stay fenced (until it has caught
up and published its first image) or to shut down. The controller's answers drive the broker
state: STARTING → RECOVERY (registered) → RUNNING (unfenced) → PENDING_CONTROLLED_SHUTDOWN →
SHUTTING_DOWN.
"""

from __future__ import annotations

import enum
import random
from typing import Any, Callable, Hashable

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.uuid import Uuid
from kafka_ref.common.requests.broker_requests import BrokerHeartbeatRequest, BrokerRegistrationRequest, Listener
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException


class BrokerState(enum.IntEnum):
    """Mirrors org.apache.kafka.metadata.BrokerState."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 6
    SHUTTING_DOWN = 7


class BrokerLifecycleManager:
    """Mirrors kafka.server.BrokerLifecycleManager."""

    def __init__(self, broker_id: int, config: Any, network: Any, controller_node_provider: Callable[[], Hashable],
                 highest_metadata_offset_provider: Callable[[], int], rng: random.Random,
                 on_broker_epoch: Callable[[int], None] = lambda _epoch: None, cluster_id: str = "") -> None:
        self.broker_id = broker_id
        self.network = network
        self.controller_node_provider = controller_node_provider
        self.highest_metadata_offset_provider = highest_metadata_offset_provider
        self.on_broker_epoch = on_broker_epoch
        self.cluster_id = cluster_id
        self.rack: str | None = config.get("broker.rack")
        self.heartbeat_interval_ms = config.get("broker.heartbeat.interval.ms")
        # The heartbeat channel gives up on a request after the session timeout (BrokerServer's retry timeout).
        self.request_timeout_ms = config.get("broker.session.timeout.ms")
        self.incarnation_id = Uuid.random_uuid(rng)
        self.state = BrokerState.NOT_RUNNING
        self.broker_epoch = -1
        self.ready_to_unfence = False
        self.is_fenced = True
        self.registrations_sent = 0
        self.heartbeats_sent = 0
        self.initial_catch_up = anyio.Event()
        self.initial_unfence = anyio.Event()
        self.controlled_shutdown_done = anyio.Event()
        self._wake = anyio.Event()
        self._wake_requested = False
        self._log = state_change_logger(broker_id=broker_id)

    # ------------------------------------------------------------------ controls

    def set_ready_to_unfence(self) -> None:
        """Mirrors BrokerLifecycleManager#setReadyToUnfence: from now on heartbeats ask to be unfenced."""
        self.ready_to_unfence = True
        self._schedule_next_communication_immediately()

    def begin_controlled_shutdown(self) -> None:
        """Mirrors BrokerLifecycleManager#beginControlledShutdown: heartbeat now, asking to shut down."""
        self._log.info("broker_begin_controlled_shutdown", broker_epoch=self.broker_epoch)
        self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
        self._schedule_next_communication_immediately()

    def _schedule_next_communication_immediately(self) -> None:
        """Mirrors BrokerLifecycleManager#scheduleNextCommunicationImmediately (even if a heartbeat is in flight)."""
        self._wake_requested = True
        self._wake.set()

    # ------------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Register (until accepted), then heartbeat until shut down."""
        self.state = BrokerState.STARTING
        while self.broker_epoch < 0:
            if not await self.send_broker_registration():
                await self._sleep(self.heartbeat_interval_ms)
        while self.state is not BrokerState.SHUTTING_DOWN:
            await self.send_broker_heartbeat()
            if self.state is BrokerState.SHUTTING_DOWN:
                break
            # One interval later (after a failure too); a state request (ready to unfence,
            # controlled shutdown) wakes the loop at once.
            await self._sleep(self.heartbeat_interval_ms)

    async def _sleep(self, ms: int) -> None:
        if self._wake_requested:
            self._wake_requested = False
            return
        self._wake = anyio.Event()
        with anyio.move_on_after(ms / 1000):
            await self._wake.wait()
        self._wake_requested = False

    async def send_broker_registration(self) -> bool:
        """Mirrors BrokerLifecycleManager#sendBrokerRegistration and its response handler."""
        request = BrokerRegistrationRequest(
            broker_id=self.broker_id, cluster_id=self.cluster_id, incarnation_id=self.incarnation_id,
            listeners=(Listener(name="PLAINTEXT", host="localhost", port=9092 + self.broker_id),), rack=self.rack,
        )
        self.registrations_sent += 1
        try:
            response = await self.network.send(self.broker_id, self.controller_node_provider(), request, self.request_timeout_ms)
        except (DisconnectException, NetworkTimeoutException) as exc:
            self._log.info("broker_registration_no_response", reason=str(exc))
            return False
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            # DUPLICATE_BROKER_REGISTRATION while our previous process still has a session, etc.
            self._log.info("broker_registration_failed", error=error.name)
            return False
        # Registered: the broker epoch is the offset of our RegisterBrokerRecord.
        self.broker_epoch = response.broker_epoch
        self.state = BrokerState.RECOVERY
        self.on_broker_epoch(self.broker_epoch)
        self._log.info("broker_registered", broker_epoch=self.broker_epoch, incarnation_id=str(self.incarnation_id))
        return True

    async def send_broker_heartbeat(self) -> bool:
        """Mirrors BrokerLifecycleManager#sendBrokerHeartbeat and HeartbeatResponseHandler#onComplete."""
        metadata_offset = self.highest_metadata_offset_provider()
        request = BrokerHeartbeatRequest(
            broker_id=self.broker_id, broker_epoch=self.broker_epoch, current_metadata_offset=metadata_offset,
            want_fence=not self.ready_to_unfence, want_shut_down=self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN,
        )
        self.heartbeats_sent += 1
        try:
            response = await self.network.send(self.broker_id, self.controller_node_provider(), request, self.request_timeout_ms)
        except (DisconnectException, NetworkTimeoutException) as exc:
            self._log.info("broker_heartbeat_no_response", reason=type(exc).__name__)
            return False
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            self._log.warning("broker_heartbeat_failed", error=error.name)
            return False
        was_fenced, self.is_fenced = self.is_fenced, response.is_fenced
        if was_fenced != self.is_fenced:
            self._log.info("broker_fencing_changed", fenced=self.is_fenced, metadata_offset=metadata_offset)
        # 1. RECOVERY: caught up → the broker may publish; unfenced → RUNNING.
        if self.state is BrokerState.RECOVERY:
            if not response.is_fenced:
                self.state = BrokerState.RUNNING
                self.initial_unfence.set()
                self._log.info("broker_running", broker_epoch=self.broker_epoch, metadata_offset=metadata_offset)
            elif response.is_caught_up and not self.initial_catch_up.is_set():
                self._log.info("broker_caught_up", metadata_offset=metadata_offset)
                self.initial_catch_up.set()
        # 2. Controlled shutdown: leave once the controller says so.
        elif self.state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            if response.should_shut_down:
                self._log.info("broker_controlled_shutdown_complete", broker_epoch=self.broker_epoch)
                self.state = BrokerState.SHUTTING_DOWN
                self.controlled_shutdown_done.set()
        return True
