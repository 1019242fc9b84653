"""kafka_ref's consumer subscribed to a topic pattern: the topics it matches, found again at every
metadata refresh, assigned by the group.

Ports of Kafka 3.8.0's ``PlaintextConsumerSubscriptionTest`` pattern tests (the classic group
protocol) in ZooKeeper and KRaft mode, on the harness of ``tests/test_plaintext_consumer_kafka.py``
(AbstractConsumerTest's three brokers, "topic" with two partitions, metadata.max.age.ms 100) and the
helpers of ``tests/test_plaintext_consumer_group_kafka.py``. ``Pattern.compile`` is ``re.compile``:
java.util.regex and Python's ``re`` agree on these patterns, and a topic matches when the whole name
does (Matcher#matches is ``fullmatch``). The record counts are Kafka's; nothing reads the records.

Not ported:
- The group protocol parameter's "consumer" value (KIP-848): classic protocol only.
"""

from __future__ import annotations

import re

import pytest

from kafka_ref.common.topic_partition import TopicPartition
from test_plaintext_consumer_group_kafka import TestConsumerReassignmentListener, await_assignment
from test_plaintext_consumer_kafka import BOTH, BROKER_COUNT, TOPIC, TP, ConsumerTest, send_records

pytestmark = pytest.mark.anyio


def partitions(topic: str, count: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(count)}


async def create_and_fill(t: ConsumerTest, producer, topic: str, count: int, records: int = 1000) -> None:
    """createTopic(topic, count, brokerCount), then ``records`` records into each partition."""
    await t.cluster.create_topic(topic, partitions=count, replication_factor=BROKER_COUNT)
    for p in range(count):
        await send_records(producer, records, TopicPartition(topic, p), 0)


@BOTH
async def test_pattern_subscription(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testPatternSubscription: "t.*c" matches "topic" and
    "tblablac" (not "tblablak" nor "tblab1"); "tsomec", created later, is assigned after a refresh."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            await send_records(producer, 10000, TP, 0)
            await create_and_fill(t, producer, "tblablac", 2)
            await create_and_fill(t, producer, "tblablak", 2)
            await create_and_fill(t, producer, "tblab1", 2)
            async with t.consumer() as consumer:
                assert consumer.assignment() == set()
                consumer.subscribe(re.compile("t.*c"), TestConsumerReassignmentListener())
                assignment = partitions(TOPIC, 2) | partitions("tblablac", 2)
                await await_assignment(consumer, assignment)
                assert consumer.subscription() == {TOPIC, "tblablac"}
                await create_and_fill(t, producer, "tsomec", 2)
                assignment |= partitions("tsomec", 2)
                await await_assignment(consumer, assignment)
                assert consumer.subscription() == {TOPIC, "tblablac", "tsomec"}
                consumer.unsubscribe()
                assert consumer.assignment() == set()


@BOTH
async def test_subsequent_pattern_subscription(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testSubsequentPatternSubscription: ".*o.*" matches
    "topic" and "foo"; then "..." matches "foo" and "bar". metadata.max.age.ms is 30000, so the
    second subscribe itself brings the refresh that finds "bar"."""
    async with ConsumerTest(mode) as t:
        async with t.consumer(metadata_max_age_ms=30000) as consumer, t.producer() as producer:
            await send_records(producer, 10000, TP, 0)
            await create_and_fill(t, producer, "foo", 1)
            assert consumer.assignment() == set()
            consumer.subscribe(re.compile(".*o.*"), TestConsumerReassignmentListener())
            assignment = partitions(TOPIC, 2) | partitions("foo", 1)
            await await_assignment(consumer, assignment)
            await create_and_fill(t, producer, "bar", 1)
            consumer.subscribe(re.compile("..."), TestConsumerReassignmentListener())
            assignment = partitions("foo", 1) | partitions("bar", 1)
            await await_assignment(consumer, assignment)
            assert consumer.subscription() == {"foo", "bar"}
            consumer.unsubscribe()
            assert consumer.assignment() == set()


@BOTH
async def test_pattern_unsubscription(mode: str):
    """Mirrors PlaintextConsumerSubscriptionTest#testPatternUnsubscription: unsubscribe clears the
    assignment at once."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            await send_records(producer, 10000, TP, 0)
            await create_and_fill(t, producer, "tblablac", 2)
            async with t.consumer() as consumer:
                assert consumer.assignment() == set()
                consumer.subscribe(re.compile("t.*c"), TestConsumerReassignmentListener())
                await await_assignment(consumer, partitions(TOPIC, 2) | partitions("tblablac", 2))
                consumer.unsubscribe()
                assert consumer.assignment() == set()
                assert consumer.subscription() == set()
