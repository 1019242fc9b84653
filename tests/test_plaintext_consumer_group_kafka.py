"""kafka_ref's consumer in a group: subscribing, changing and dropping the subscription, and the
ConsumerRebalanceListener's view of the consumer from inside its callbacks.

Ports of Kafka 3.8.0's ``PlaintextConsumerSubscriptionTest`` and ``PlaintextConsumerCallbackTest``
(the classic group protocol) in ZooKeeper and KRaft mode, on the harness of
``tests/test_plaintext_consumer_kafka.py`` (AbstractConsumerTest's three brokers and "topic" with
two partitions). ``TestUtils.pollUntilTrue`` loops become poll loops bounded in virtual time. The
pattern tests of PlaintextConsumerSubscriptionTest are in ``tests/test_plaintext_consumer_pattern_kafka.py``.

Not ported:
- The group protocol parameter's "consumer" value (KIP-848): classic protocol only.
- PlaintextConsumerCallbackTest#testConsumerRebalanceListenerBeginningOffsetsOnPartitionsAssigned,
  #testConsumerRebalanceListenerBeginningOffsetsOnPartitionsRevoked and
  #testGetPositionOfNewlyAssignedPartitionOnPartitionsAssignedCallback: kafka_ref's listener
  callbacks are plain functions, and ``beginning_offsets`` / ``position`` are coroutines they
  cannot await.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.clients.consumer import ConsumerRebalanceListener
from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.topic_partition import TopicPartition
from test_plaintext_consumer_kafka import (
    BOTH,
    BROKER_COUNT,
    TOPIC,
    TP,
    ConsumerTest,
    consume_and_verify_records,
    send_records,
)

pytestmark = pytest.mark.anyio


class TestConsumerReassignmentListener(ConsumerRebalanceListener):
    """AbstractConsumerTest.TestConsumerReassignmentListener: counts the callbacks."""

    __test__ = False

    def __init__(self) -> None:
        self.calls_to_assigned = 0
        self.calls_to_revoked = 0

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.calls_to_assigned += 1

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.calls_to_revoked += 1


async def poll_until(consumer, condition, message: str, timeout_ms: int = 15000) -> None:
    """TestUtils.pollUntilTrue: poll(100) until ``condition()`` holds."""
    with anyio.fail_after(timeout_ms / 1000):
        while not condition():
            await consumer.poll(100)


async def await_assignment(consumer, expected: set[TopicPartition]) -> None:
    """AbstractConsumerTest#awaitAssignment."""
    await poll_until(consumer, lambda: consumer.assignment() == expected, f"assignment {expected}")


# --------------------------------------------------------------------------------------------
# PlaintextConsumerSubscriptionTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_expanding_topic_subscriptions(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testExpandingTopicSubscriptions: subscribing to one
    more topic rebalances to the partitions of both."""
    async with ConsumerTest(mode) as t:
        other_topic = "other"
        initial_assignment = {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)}
        async with t.consumer() as consumer:
            consumer.subscribe([TOPIC])
            await await_assignment(consumer, initial_assignment)
            await t.cluster.create_topic(other_topic, partitions=2, replication_factor=BROKER_COUNT)
            expanded = initial_assignment | {TopicPartition(other_topic, 0), TopicPartition(other_topic, 1)}
            consumer.subscribe([TOPIC, other_topic])
            await await_assignment(consumer, expanded)


@BOTH
async def test_shrinking_topic_subscriptions(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testShrinkingTopicSubscriptions."""
    async with ConsumerTest(mode) as t:
        other_topic = "other"
        await t.cluster.create_topic(other_topic, partitions=2, replication_factor=BROKER_COUNT)
        initial_assignment = {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1),
                              TopicPartition(other_topic, 0), TopicPartition(other_topic, 1)}
        async with t.consumer() as consumer:
            consumer.subscribe([TOPIC, other_topic])
            await await_assignment(consumer, initial_assignment)
            consumer.subscribe([TOPIC])
            await await_assignment(consumer, {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)})


@BOTH
async def test_unsubscribe_topic(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testUnsubscribeTopic: after the first rebalance
    (one assignment callback, no revocation), subscribe([]) unsubscribes: no assignment left, and
    the owned partitions were revoked through the listener."""
    async with ConsumerTest(mode) as t:
        async with t.consumer(session_timeout_ms=100, heartbeat_interval_ms=30) as consumer:
            listener = TestConsumerReassignmentListener()
            consumer.subscribe([TOPIC], listener)
            await poll_until(consumer, lambda: listener.calls_to_assigned > 0, "the first rebalance")
            assert (listener.calls_to_assigned, listener.calls_to_revoked) == (1, 0)
            consumer.subscribe([])
            assert consumer.assignment() == set()
            assert consumer.subscription() == set()
            assert (listener.calls_to_assigned, listener.calls_to_revoked) == (1, 1)


# --------------------------------------------------------------------------------------------
# PlaintextConsumerCallbackTest
# --------------------------------------------------------------------------------------------


class _Listener(ConsumerRebalanceListener):
    def __init__(self, on_assigned=None, on_revoked=None) -> None:
        self._on_assigned, self._on_revoked = on_assigned, on_revoked
        self.partitions_assigned = False
        self.partitions_revoked = False

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        if self._on_assigned is not None:
            self._on_assigned(partitions)
        self.partitions_assigned = True

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        if self._on_revoked is not None:
            self._on_revoked(partitions)
        self.partitions_revoked = True


async def _trigger_on_partitions_assigned(consumer, execute) -> None:
    """PlaintextConsumerCallbackTest#triggerOnPartitionsAssigned: run ``execute`` inside onPartitionsAssigned."""
    listener = _Listener(on_assigned=execute)
    consumer.subscribe([TOPIC], listener)
    await poll_until(consumer, lambda: listener.partitions_assigned, "the rebalance")


async def _trigger_on_partitions_revoked(consumer, execute) -> None:
    """PlaintextConsumerCallbackTest#triggerOnPartitionsRevoked: run ``execute`` inside
    onPartitionsRevoked, which close() calls after the first rebalance."""
    listener = _Listener(on_revoked=execute)
    consumer.subscribe([TOPIC], listener)
    await poll_until(consumer, lambda: listener.partitions_assigned, "the rebalance")
    consumer.close()
    assert listener.partitions_revoked


def _assign_fails(consumer, tp: TopicPartition):
    def execute(partitions):
        with pytest.raises(IllegalStateException) as caught:
            consumer.assign([tp])
        assert str(caught.value) == "Subscription to topics, partitions and pattern are mutually exclusive"
    return execute


@BOTH
async def test_consumer_rebalance_listener_assign_on_partitions_assigned(mode: str):
    """Mirrors PlaintextConsumerCallbackTest#testConsumerRebalanceListenerAssignOnPartitionsAssigned:
    assign() inside the callback of a subscribed consumer is an IllegalStateException."""
    async with ConsumerTest(mode) as t:
        consumer = t.consumer()
        await _trigger_on_partitions_assigned(consumer, _assign_fails(consumer, TP))
        consumer.close()


@BOTH
async def test_consumer_rebalance_listener_assignment_on_partitions_assigned(mode: str):
    """Mirrors PlaintextConsumerCallbackTest#testConsumerRebalanceListenerAssignmentOnPartitionsAssigned:
    the new assignment is already in place when onPartitionsAssigned runs."""
    async with ConsumerTest(mode) as t:
        consumer = t.consumer()
        seen = []
        await _trigger_on_partitions_assigned(consumer, lambda partitions: seen.append((set(partitions), consumer.assignment())))
        assert seen == [({TP, TopicPartition(TOPIC, 1)}, {TP, TopicPartition(TOPIC, 1)})]
        consumer.close()


@BOTH
async def test_consumer_rebalance_listener_assign_on_partitions_revoked(mode: str):
    """Mirrors PlaintextConsumerCallbackTest#testConsumerRebalanceListenerAssignOnPartitionsRevoked."""
    async with ConsumerTest(mode) as t:
        consumer = t.consumer()
        await _trigger_on_partitions_revoked(consumer, _assign_fails(consumer, TP))


@BOTH
async def test_consumer_rebalance_listener_assignment_on_partitions_revoked(mode: str):
    """Mirrors PlaintextConsumerCallbackTest#testConsumerRebalanceListenerAssignmentOnPartitionsRevoked:
    the revoked partitions are still assigned while onPartitionsRevoked runs; gone afterwards."""
    async with ConsumerTest(mode) as t:
        consumer = t.consumer()
        seen = []
        await _trigger_on_partitions_revoked(consumer, lambda partitions: seen.append((set(partitions), consumer.assignment())))
        assert seen == [({TP, TopicPartition(TOPIC, 1)}, {TP, TopicPartition(TOPIC, 1)})]
        assert consumer.subscriptions.assigned_partitions() == set()


@BOTH
async def test_seek_position_and_pause_newly_assigned_partition_on_partitions_assigned_callback(mode: str):
    """Mirrors PlaintextConsumerCallbackTest#testSeekPositionAndPauseNewlyAssignedPartitionOnPartitionsAssignedCallback:
    a seek to 100 and a pause inside onPartitionsAssigned hold; resumed, the consumer reads 100..119."""
    async with ConsumerTest(mode) as t:
        starting_offset, total_records = 100, 120
        async with t.producer() as producer:
            await send_records(producer, total_records, TP, 0)
        consumer = t.consumer()

        def execute(partitions):
            consumer.seek(TP, starting_offset)
            consumer.pause([TP])

        await _trigger_on_partitions_assigned(consumer, execute)
        assert TP in consumer.paused()
        consumer.resume([TP])
        await consume_and_verify_records(consumer, total_records - starting_offset, starting_offset,
                                         starting_key_and_value_index=starting_offset, starting_timestamp=starting_offset)
        consumer.close()


@BOTH
async def test_long_poll_heartbeats_within_the_session(mode: str):
    """KafkaConsumer#pollForFetches bounds its wait by ConsumerCoordinator#timeToNextPoll (the time
    to the next heartbeat): one poll(2000) with a 100 ms session and 30 ms heartbeats keeps the
    member in its generation (no revocation, no new assignment)."""
    async with ConsumerTest(mode) as t:
        async with t.consumer(session_timeout_ms=100, heartbeat_interval_ms=30) as consumer:
            listener = TestConsumerReassignmentListener()
            consumer.subscribe([TOPIC], listener)
            await poll_until(consumer, lambda: listener.calls_to_assigned > 0, "the first rebalance")
            generation = consumer.coordinator.generation.generation_id
            await consumer.poll(2000)
            assert consumer.coordinator.generation.generation_id == generation
            assert (listener.calls_to_assigned, listener.calls_to_revoked) == (1, 0)
