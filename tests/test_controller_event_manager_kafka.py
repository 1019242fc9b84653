"""Ports of kafka.controller.ControllerEventManagerTest (Kafka 3.8.0).

A ControllerEventManager with a processor of the test's own (Kafka's ControllerEventProcessor:
``process(event)``); where Kafka's processor blocks on a latch, this one returns an awaitable
the event thread waits for. ``ControllerEventManager.state`` is the ControllerState of the
event in hand (``AutoPreferredReplicaLeaderElection`` is AutoLeaderBalance, ``BrokerChange``
BrokerChange) and Idle between events.

Covered elsewhere: testEventThatThrowsException (the thread survives an event that raises) is
tests/test_controller_alter_partition.py::test_controller_event_thread_survives_a_failing_event;
the state it passes through is checked here beside testSuccessfulEvent.

Not ported:
- testMetricsCleanedOnClose, testEventQueueTime, testEventQueueTimeResetOnTimeout: the event
  manager's Yammer metrics (EventQueueTimeMs, EventQueueSize) are not modelled.
- The ControllerStats rate-and-time timer counts of testSuccessfulEvent and
  testEventWithoutRateMetrics (what the event processing itself does is ported).
"""

from __future__ import annotations

from typing import Any, Callable

import anyio
import pytest

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.update_metadata import UpdateMetadataResponse
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.controller_events import ControllerEventManager, ControllerState

pytestmark = pytest.mark.anyio


async def wait_until(predicate: Callable[[], bool], message: str, timeout_s: float = 5) -> None:
    """TestUtils.waitUntilTrue in loop time."""
    with anyio.fail_after(timeout_s):
        while not predicate():
            await anyio.sleep(0.001)
    assert predicate(), message


class Processor:
    """A ControllerEventProcessor: ``on_process`` handles each event; ``preempt`` does nothing."""

    def __init__(self, on_process: Callable[[Any], Any]) -> None:
        self.on_process = on_process

    def process(self, event: Any) -> Any:
        return self.on_process(event)

    def preempt(self, event: Any) -> None:
        return None


async def test_event_without_rate_metrics():
    """Mirrors ControllerEventManagerTest#testEventWithoutRateMetrics: an UpdateMetadataResponseReceived
    event (a state without a rate-and-time metric) is processed like any other."""
    processed_events: list[Any] = []
    manager = ControllerEventManager(0, Processor(processed_events.append))
    update_metadata_response = UpdateMetadataResponse(error_code=Errors.NONE.code)
    update_metadata_response_event = ev.UpdateMetadataResponseReceived(update_metadata_response, broker_id=1)
    assert update_metadata_response_event.state == ControllerState.UPDATE_METADATA_RESPONSE_RECEIVED
    async with anyio.create_task_group() as tg:
        tg.start_soon(manager.run)
        manager.put(update_metadata_response_event)
        await wait_until(lambda: len(processed_events) == 1, "Failed to process expected event before timing out")
        assert processed_events == [update_metadata_response_event]
        manager.close()
        tg.cancel_scope.cancel()


async def check(event: ev.ControllerEvent, func: Callable[[], None]) -> ControllerEventManager:
    """Mirrors the test's check: the manager reports the event's state while it is processed,
    Idle afterwards, and the processor ran once (whether ``func`` returns or raises)."""
    event_processed_listener_count = 0
    latch = anyio.Event()

    async def processing() -> None:
        nonlocal event_processed_listener_count
        # Only return once the test has looked at the manager's state.
        await latch.wait()
        event_processed_listener_count += 1
        func()

    manager = ControllerEventManager(0, Processor(lambda _event: processing()))
    async with anyio.create_task_group() as tg:
        tg.start_soon(manager.run)
        assert manager.state == ControllerState.IDLE
        manager.put(event)
        await wait_until(lambda: manager.state == event.state, f"Controller state is not {event.state}")
        latch.set()
        await wait_until(lambda: manager.state == ControllerState.IDLE, "Controller state has not changed back to Idle")
        assert event_processed_listener_count == 1
        manager.close()
        tg.cancel_scope.cancel()
    return manager


async def test_successful_event():
    """Mirrors ControllerEventManagerTest#testSuccessfulEvent."""
    event = ev.AutoPreferredReplicaLeaderElection()
    assert event.state == ControllerState.AUTO_LEADER_BALANCE == "AutoLeaderBalance"
    manager = await check(event, lambda: None)
    assert (manager.processed, manager.failed_events) == (["AutoPreferredReplicaLeaderElection"], [])


async def test_event_that_throws_exception_passes_through_its_state():
    """The state half of ControllerEventManagerTest#testEventThatThrowsException: BrokerChange
    while processed, Idle again after the processor raised."""
    def throw() -> None:
        raise ValueError("thrown for test purposes")

    event = ev.BrokerChange()
    assert event.state == ControllerState.BROKER_CHANGE == "BrokerChange"
    manager = await check(event, throw)
    assert manager.failed_events == [("BrokerChange", "ValueError('thrown for test purposes')")]


def test_controller_states_of_the_events():
    """Each event reports Kafka's ControllerState (KafkaController.scala's event definitions)."""
    expected = {
        ev.Startup: "ControllerChange", ev.Reelect: "ControllerChange", ev.ControllerChange: "ControllerChange",
        ev.Expire: "ControllerChange", ev.RegisterBrokerAndReelect: "ControllerChange",
        ev.BrokerChange: "BrokerChange", ev.TopicChange: "TopicChange", ev.PartitionModifications: "TopicChange",
        ev.TopicDeletion: "TopicDeletion", ev.TopicDeletionStopReplicaResponseReceived: "TopicDeletion",
        ev.ZkPartitionReassignment: "AlterPartitionReassignment",
        ev.AutoPreferredReplicaLeaderElection: "AutoLeaderBalance", ev.ReplicaLeaderElection: "ManualLeaderBalance",
        ev.ControlledShutdown: "ControlledShutdown", ev.AlterPartitionReceived: "IsrChange",
        ev.LeaderAndIsrResponseReceived: "LeaderAndIsrResponseReceived",
        ev.UpdateMetadataResponseReceived: "UpdateMetadataResponseReceived",
        ev.TopicUncleanLeaderElectionEnable: "TopicUncleanLeaderElectionEnable",
    }
    assert {cls: cls.state for cls in expected} == expected
    from kafka_ref.controller.admin_requests import ListPartitionReassignments
    from kafka_ref.controller.preferred_election import AdminReplicaLeaderElection
    from kafka_ref.controller.reassignment import ApiPartitionReassignment

    assert (ApiPartitionReassignment.state, AdminReplicaLeaderElection.state, ListPartitionReassignments.state) == (
        "AlterPartitionReassignment", "ManualLeaderBalance", "ListPartitionReassignment")
