"""The controller's events: everything the controller does happens as one of these, in order.

Mirrors kafka.controller.ControllerEvent and its case objects/classes (Kafka 3.x) and
kafka.controller.ControllerEventManager: one queue, one task processing events one at a
time, so controller state needs no locks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio

from kafka_ref.common.errors import ControllerMovedException, Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.state_change import state_change_logger


class ControllerState:
    """Mirrors kafka.controller.ControllerState: what the controller's event thread is busy with.

    ControllerEventManager#state holds the state of the event being processed, Idle between
    events. Each event names its state (several share one: Startup, Reelect, Expire and
    RegisterBrokerAndReelect are all ControllerChange). Kafka's byte values and per-state
    rate-and-time metrics are not modelled; the names are Kafka's.
    """

    IDLE = "Idle"
    CONTROLLER_CHANGE = "ControllerChange"
    BROKER_CHANGE = "BrokerChange"
    TOPIC_CHANGE = "TopicChange"
    TOPIC_DELETION = "TopicDeletion"
    ALTER_PARTITION_REASSIGNMENT = "AlterPartitionReassignment"
    AUTO_LEADER_BALANCE = "AutoLeaderBalance"
    MANUAL_LEADER_BALANCE = "ManualLeaderBalance"
    CONTROLLED_SHUTDOWN = "ControlledShutdown"
    ISR_CHANGE = "IsrChange"
    LEADER_AND_ISR_RESPONSE_RECEIVED = "LeaderAndIsrResponseReceived"
    LOG_DIR_CHANGE = "LogDirChange"
    CONTROLLER_SHUTDOWN = "ControllerShutdown"
    UNCLEAN_LEADER_ELECTION_ENABLE = "UncleanLeaderElectionEnable"
    TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE = "TopicUncleanLeaderElectionEnable"
    LIST_PARTITION_REASSIGNMENT = "ListPartitionReassignment"
    UPDATE_METADATA_RESPONSE_RECEIVED = "UpdateMetadataResponseReceived"
    UPDATE_FEATURES = "UpdateFeatures"


class ControllerEvent:
    """Mirrors kafka.controller.ControllerEvent: ``process`` dispatches to the controller.

    ``state`` is the event's ControllerState (an event that names none reports Idle, as Kafka's
    AllocateProducerIds does).
    """

    name = "ControllerEvent"
    state = ControllerState.IDLE

    def process(self, controller: Any) -> None:
        raise TypeError(f"{type(self).__name__} must override process()")

    def preempt(self) -> None:
        """Mirrors ControllerEvent#preempt: the event is dropped unprocessed (the queue was cleared
        at session expiry or controller shutdown); events with a callback answer it here."""


def _event(name: str, method: str, state: str) -> type[ControllerEvent]:
    def process(self: ControllerEvent, controller: Any) -> None:
        getattr(controller, method)()

    return type(name, (ControllerEvent,), {"name": name, "state": state, "process": process,
                                           "__doc__": f"Mirrors kafka.controller.{name}."})


Startup = _event("Startup", "process_startup", ControllerState.CONTROLLER_CHANGE)
Reelect = _event("Reelect", "process_reelect", ControllerState.CONTROLLER_CHANGE)
ControllerChange = _event("ControllerChange", "process_controller_change", ControllerState.CONTROLLER_CHANGE)
BrokerChange = _event("BrokerChange", "process_broker_change", ControllerState.BROKER_CHANGE)
TopicChange = _event("TopicChange", "process_topic_change", ControllerState.TOPIC_CHANGE)
Expire = _event("Expire", "process_expire", ControllerState.CONTROLLER_CHANGE)
RegisterBrokerAndReelect = _event("RegisterBrokerAndReelect", "process_register_broker_and_reelect",
                                  ControllerState.CONTROLLER_CHANGE)
AutoPreferredReplicaLeaderElection = _event("AutoPreferredReplicaLeaderElection",
                                            "process_auto_preferred_replica_leader_election",
                                            ControllerState.AUTO_LEADER_BALANCE)
TopicDeletion = _event("TopicDeletion", "process_topic_deletion", ControllerState.TOPIC_DELETION)
ZkPartitionReassignment = _event("ZkPartitionReassignment", "process_zk_partition_reassignment",
                                 ControllerState.ALTER_PARTITION_REASSIGNMENT)
ReplicaLeaderElection = _event("ReplicaLeaderElection", "process_replica_leader_election",
                               ControllerState.MANUAL_LEADER_BALANCE)


class MockEvent(ControllerEvent):
    """Mirrors kafka.controller.MockEvent: an event used only in tests.

    KafkaController#process calls its ``process()`` without the controller. Kafka's tests make
    it block the event thread on a latch; here ``process()`` may return an awaitable, and the
    event thread waits for it before taking the next event (nothing else in the controller
    runs meanwhile, as in Kafka).

    Kafka builds a MockEvent with the ControllerState it reports; here a subclass sets
    ``state`` (TopicChange unless it says otherwise).
    """

    name = "MockEvent"
    state = ControllerState.TOPIC_CHANGE

    def process(self, controller: Any = None) -> Any:
        return None

    def preempt(self) -> None:
        return None


@dataclass
class AlterPartitionReceived(ControllerEvent):
    """Mirrors kafka.controller.AlterPartitionReceived."""

    request: Any
    callback: Callable[[Any], None]
    name: str = "AlterPartitionReceived"
    state = ControllerState.ISR_CHANGE

    def process(self, controller: Any) -> None:
        controller.process_alter_partition(self.request, self.callback)


@dataclass
class ControlledShutdown(ControllerEvent):
    """Mirrors kafka.controller.ControlledShutdown."""

    broker_id: int
    broker_epoch: int
    callback: Callable[[Any], None]
    name: str = "ControlledShutdown"
    state = ControllerState.CONTROLLED_SHUTDOWN

    def process(self, controller: Any) -> None:
        controller.process_controlled_shutdown(self.broker_id, self.broker_epoch, self.callback)

    def preempt(self) -> None:
        """Mirrors ControlledShutdown#preempt: the callback fails with ControllerMovedException."""
        self.callback(Errors.for_exception(ControllerMovedException("Controller moved to another broker")))


@dataclass
class TopicDeletionStopReplicaResponseReceived(ControllerEvent):
    """Mirrors kafka.controller.TopicDeletionStopReplicaResponseReceived."""

    replica_id: int
    request_error: int
    partition_errors: dict = field(default_factory=dict)
    name: str = "TopicDeletionStopReplicaResponseReceived"
    state = ControllerState.TOPIC_DELETION

    def process(self, controller: Any) -> None:
        controller.process_topic_deletion_stop_replica_response_received(self.replica_id, self.request_error, self.partition_errors)


@dataclass
class LeaderAndIsrResponseReceived(ControllerEvent):
    """Mirrors kafka.controller.LeaderAndIsrResponseReceived."""

    response: Any
    broker_id: int
    name: str = "LeaderAndIsrResponseReceived"
    state = ControllerState.LEADER_AND_ISR_RESPONSE_RECEIVED

    def process(self, controller: Any) -> None:
        controller.process_leader_and_isr_response_received(self.response, self.broker_id)


@dataclass
class UpdateMetadataResponseReceived(ControllerEvent):
    """Mirrors kafka.controller.UpdateMetadataResponseReceived."""

    response: Any
    broker_id: int
    name: str = "UpdateMetadataResponseReceived"
    state = ControllerState.UPDATE_METADATA_RESPONSE_RECEIVED

    def process(self, controller: Any) -> None:
        controller.process_update_metadata_response_received(self.response, self.broker_id)


@dataclass
class PartitionModifications(ControllerEvent):
    """Mirrors kafka.controller.PartitionModifications: a topic znode's assignment changed."""

    topic: str
    name: str = "PartitionModifications"
    state = ControllerState.TOPIC_CHANGE

    def process(self, controller: Any) -> None:
        controller.process_partition_modifications(self.topic)


@dataclass
class TopicUncleanLeaderElectionEnable(ControllerEvent):
    """Mirrors kafka.controller.TopicUncleanLeaderElectionEnable."""

    topic: str
    name: str = "TopicUncleanLeaderElectionEnable"
    state = ControllerState.TOPIC_UNCLEAN_LEADER_ELECTION_ENABLE

    def process(self, controller: Any) -> None:
        controller.process_topic_unclean_leader_election_enable(self.topic)


# Mirrors ControllerState.Idle: the event thread waits for the next event.
IDLE = ControllerState.IDLE


class ControllerEventManager:
    """Mirrors kafka.controller.ControllerEventManager: a queue and the thread that drains it."""

    def __init__(self, controller_id: int, processor: Any) -> None:
        self.controller_id = controller_id
        self.processor = processor
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream(math.inf)
        self.processed: list[str] = []
        self.failed_events: list[tuple[str, str]] = []
        # Mirrors ControllerEventManager#state: the state of the event being processed, or IDLE.
        self.state: str = IDLE
        # Set by close(): the thread takes no further event (Kafka's ShutdownableThread#initiateShutdown).
        self.closed = False
        self._log = state_change_logger(controller_id=controller_id)

    def put(self, event: ControllerEvent) -> None:
        self.send_stream.send_nowait(event)

    def clear_and_put(self, event: ControllerEvent) -> None:
        """Mirrors ControllerEventManager#clearAndPut: drop the queued events, each preempted (its
        callback, if any, answered with an error), then queue ``event`` (session expiry)."""
        self._preempt_queued()
        self.put(event)

    def _preempt_queued(self) -> None:
        # The queue drained in order; each dropped event is preempted (ControllerEvent#preempt).
        while True:
            try:
                dropped = self.receive_stream.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            dropped.preempt()

    def close(self) -> None:
        """Mirrors ControllerEventManager#close: the event thread stops after the event in hand,
        and every queued event is preempted (Kafka's clearAndPut(ShutdownEventThread))."""
        self.closed = True
        self._preempt_queued()

    async def run(self) -> None:
        """Mirrors ControllerEventThread#doWork: process events one by one, never dying on an error.

        1. ``state`` is the ControllerState of the event being processed ("Idle" between
        events). 2. The processor's ``process(event)`` (KafkaController#process) handles it, or,
        for a processor without one, the event itself; an awaitable it returns (a test's
        MockEvent holding the thread) is waited for. 3. Kafka catches any Throwable, logs it and
        counts it in a metric; the thread goes on to the next event. Here the handler counts the
        failure in ``failed_events`` and logs it; the log call names the event
        ``controller_event`` (a structlog logger reserves ``event`` for the message itself), and
        even a failing log call cannot end the loop.
        """
        process = getattr(self.processor, "process", None)
        async for event in self.receive_stream:
            if self.closed:
                # Queued after close(): never processed, as Kafka's stopped thread leaves it.
                continue
            # 1. Busy with this event.
            self.processed.append(event.name)
            self.state = event.state
            try:
                # 2. Handle it.
                pending = process(event) if process is not None else event.process(self.processor)
                if pending is not None:
                    await pending
            except RUN_ENDING:
                raise
            except Exception as exc:  # 3. the controller logs and keeps going, as Kafka's does
                self.failed_events.append((event.name, repr(exc)))
                try:
                    self._log.error("controller_event_failed", controller_event=event.name, error=repr(exc))
                except RUN_ENDING:
                    raise
                except Exception:  # the error path itself must not take the controller down
                    pass
            self.state = IDLE
            await anyio.lowlevel.checkpoint()
