"""Ports of kafka.controller.ControllerFailoverTest (Kafka 3.8.0, ZooKeeper mode).

KAFKA-2300: a controller that finds itself in an illegal state (a request batch it cannot build
or send) resigns and hands /controller back, so a controller with a newer epoch takes over.
Kafka's test blocks the controller's event thread inside a MockEvent that calls
``handleIllegalState`` itself; here the MockEvent returns an awaitable the event thread waits
for (Kafka's latch). Kafka checks that the controller's KafkaScheduler stopped; kafka_ref
models that scheduler as the auto-rebalance term (``PreferredReplicaElectionFlow.generation``),
which resignation ends, and the port checks it together with the rest of the resignation
(context reset, no channels).

The same resignation now follows an IllegalStateException where Kafka calls handleIllegalState:
sendUpdateMetadataRequest, doControlledShutdown and the reassignment's LeaderAndIsr update; the
second test drives it through sendUpdateMetadataRequest with a request batch left non-empty.

Covered elsewhere: the leader selectors the old ControllerFailoverTest exercised are in
tests/test_leader_selectors.py.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.controller_context import OnlinePartition

pytestmark = pytest.mark.anyio

NUM_NODES = 2
NUM_PARTS = 1
TOPIC = "topic1"


def failover_cluster(seed: int) -> Cluster:
    """The test's generateConfigs: two brokers, ``num.partitions`` 1."""
    return Cluster(brokers=NUM_NODES, metadata_mode="zk", config={"num.partitions": NUM_PARTS}, seed=seed)


class IllegalStateEvent(ev.MockEvent):
    """The test's MockEvent(ControllerState.BrokerChange): handleIllegalState, then the latch."""

    state = "BrokerChange"

    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.release = anyio.Event()
        self.exception_thrown: list[BaseException] = []

    def process(self, controller: Any = None) -> Any:
        try:
            self.controller.handle_illegal_state(IllegalStateException("Thrown for test purposes"))
        except BaseException as t:  # Kafka catches Throwable here, to look at it afterwards
            self.exception_thrown.append(t)
        return self.release.wait()


async def test_handle_illegal_state_exception():
    """Mirrors ControllerFailoverTest#testHandleIllegalStateException."""
    async with failover_cluster(seed=1) as cluster:
        initial_controller = cluster.active_controller()
        initial_epoch = initial_controller.epoch
        rebalance_term = initial_controller.preferred_replica_election.generation
        # 1. A topic with one partition, online in the controller's view.
        await cluster.create_topic(TOPIC)
        topic_partition = TopicPartition("topic1", 0)
        await cluster.wait_until(
            lambda: topic_partition in initial_controller.controller_context.partitions_in_state(OnlinePartition),
            message=f"Partition {topic_partition} did not transition to online state")

        # 2. handleIllegalState on the event thread, which then stays held.
        illegal_state_event = IllegalStateEvent(initial_controller)
        initial_controller.event_manager.put(illegal_state_event)
        await cluster.wait_until(lambda: initial_controller.preferred_replica_election.generation != rebalance_term,
                                 message="Scheduler was not shutdown")
        await cluster.wait_until(lambda: not initial_controller.is_active, message="Controller did not become inactive")
        assert initial_controller.controller_context.epoch == 0
        assert initial_controller.controller_context.live_broker_id_and_epochs == {}
        assert initial_controller.channel_manager.broker_state_info == {}
        illegal_state_event.release.set()
        await cluster.wait_until(lambda: bool(illegal_state_event.exception_thrown),
                                 message="handleIllegalState did not throw an exception")
        thrown = illegal_state_event.exception_thrown
        assert len(thrown) == 1 and isinstance(thrown[0], IllegalStateException), (
            f"handleIllegalState should throw an IllegalStateException, but {thrown} was thrown")
        assert str(thrown[0]) == "Thrown for test purposes"

        # 3. /controller was handed back: a controller with a newer epoch takes over.
        await cluster.wait_until(lambda: any(b.controller.is_active and b.controller.epoch > initial_epoch
                                             for b in cluster.brokers.values()),
                                 message="Failed to find controller")
        assert cluster.controller_epoch() == initial_epoch + 1
        new_controller = cluster.active_controller()
        assert new_controller.epoch == initial_epoch + 1
        assert cluster.leader_for(TOPIC, 0) >= 0


async def test_illegal_state_in_send_update_metadata_request_moves_the_controller():
    """KafkaController#sendUpdateMetadataRequest hands an IllegalStateException to
    handleIllegalState: a batch left holding an unsent UpdateMetadata makes the next
    newBatch() fail, and the controller resigns and deletes /controller; a new controller
    (epoch + 1; either broker may win the race) is elected and the exception still reaches the
    event thread."""
    async with failover_cluster(seed=2) as cluster:
        controller = cluster.active_controller()
        initial_epoch = controller.epoch
        await cluster.create_topic(TOPIC)

        class Broken(ev.MockEvent):
            state = "BrokerChange"

            def process(self, _controller: Any = None) -> None:
                # An unsent UpdateMetadata stays in the batch, then the controller sends another.
                controller.request_batch.add_update_metadata_request_for_brokers([0], set())
                controller.send_update_metadata_request([0, 1], set())

        failed_before = len(controller.event_manager.failed_events)
        controller.event_manager.put(Broken())
        await cluster.wait_until(lambda: len(controller.event_manager.failed_events) > failed_before,
                                 message="the event failed")
        name, error = controller.event_manager.failed_events[-1]
        assert name == "MockEvent" and error.startswith("IllegalStateException(")
        assert controller.request_batch.update_metadata_request_broker_set == set()
        await cluster.wait_until(lambda: cluster.controller_epoch() == initial_epoch + 1
                                 and cluster.active_controller() is not None
                                 and cluster.active_controller().epoch == initial_epoch + 1,
                                 message="a new controller")
