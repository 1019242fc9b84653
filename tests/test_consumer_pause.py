"""Consumer pause/resume, subscription() and unsubscribe().

Mirrors org.apache.kafka.clients.consumer.internals.FetcherTest#testFetchOnPausedPartition,
#testFetchOnCompletedFetchesForPausedAndResumedPartitions and #testFetchOnCompletedFetchesForSomePausedPartitions
(a paused partition is not fetched, and records already fetched for it are kept back until it is
resumed), KafkaConsumerTest#testPause... (pausing an unassigned partition is refused) and
KafkaConsumerTest#testUnsubscribeShouldTriggerPartitionsRevokedWithValidGeneration's effect (unsubscribe
leaves the group and drops the assignment).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.common.errors import KafkaException
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


async def _cluster_with_records(cluster: Cluster) -> None:
    await cluster.create_topic("t", partitions=2, replication_factor=1)
    async with cluster.producer() as producer:
        for i in range(3):
            for p in (0, 1):
                await producer.send("t", f"p{p}-{i}".encode(), partition=p)


async def _poll_all(consumer, count: int, timeout_s: float = 30) -> list:
    records: list = []
    with anyio.fail_after(timeout_s):
        while len(records) < count:
            records.extend(await consumer.poll(200))
    return records


async def test_fetch_on_paused_partition():
    """A paused partition is left out of fetches and gives no records; resumed, it gives all of them."""
    async with Cluster(brokers=1) as cluster:
        await _cluster_with_records(cluster)
        consumer = cluster.consumer(auto_offset_reset="earliest")
        consumer.assign([TP0, TP1])
        consumer.pause([TP0])
        assert consumer.paused() == {TP0}
        records = await _poll_all(consumer, 3)
        for _ in range(5):
            records.extend(await consumer.poll(200))
        assert sorted((r.partition, r.offset) for r in records) == [(1, 0), (1, 1), (1, 2)]
        assert consumer.subscriptions.fetchable_partitions(cluster.now_ms()) == [TP1]
        consumer.resume([TP0])
        assert consumer.paused() == set()
        records = await _poll_all(consumer, 3)
        assert sorted((r.partition, r.offset) for r in records) == [(0, 0), (0, 1), (0, 2)]


async def test_completed_fetches_for_paused_and_resumed_partitions():
    """Records fetched before the pause are kept back (not dropped) and come out once resumed, the
    position unchanged meanwhile."""
    async with Cluster(brokers=1) as cluster:
        await _cluster_with_records(cluster)
        consumer = cluster.consumer(auto_offset_reset="earliest")
        consumer.assign([TP0])
        # Step through KafkaConsumer#poll's first half by hand: positions, then a fetch answered
        # and buffered, not yet handed out.
        with anyio.fail_after(30):
            while not consumer.fetcher.completed_fetches:
                await consumer._update_assignment_metadata_if_needed()
                consumer.fetcher.send_fetches()
                await consumer.fetcher.wait_for_fetches(200)
        consumer.pause([TP0])
        assert consumer.fetcher.collect_fetch(500) == []
        assert len(consumer.fetcher.completed_fetches) == 1
        assert await consumer.position(TP0) == 0
        consumer.resume([TP0])
        assert [(r.partition, r.offset) for r in consumer.fetcher.collect_fetch(500)] == [(0, 0), (0, 1), (0, 2)]


async def test_pause_unassigned_partition_is_refused():
    async with Cluster(brokers=1) as cluster:
        consumer = cluster.consumer()
        consumer.assign([TP0])
        with pytest.raises(KafkaException, match="No current assignment for partition t-1"):
            consumer.pause([TP1])


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_unsubscribe_leaves_the_group(mode):
    async with Cluster(brokers=1, metadata_mode=mode) as cluster:
        await _cluster_with_records(cluster)
        consumers = [cluster.consumer(client_id=f"c{i}", group_id="g", auto_offset_reset="earliest",
                                      session_timeout_ms=10000, heartbeat_interval_ms=1000) for i in (1, 2)]
        for consumer in consumers:
            consumer.subscribe(["t"])
        with anyio.fail_after(60):
            while any(c.coordinator.rejoin_needed or not c.assignment() for c in consumers):
                for consumer in consumers:
                    await consumer.poll(200)
        assert consumers[0].subscription() == {"t"}
        consumers[0].unsubscribe()
        assert (consumers[0].subscription(), consumers[0].assignment()) == (set(), set())
        # The other member gets both partitions after the rebalance the LeaveGroup starts.
        with anyio.fail_after(60):
            while consumers[1].assignment() != {TP0, TP1}:
                await consumers[1].poll(200)
        group = cluster.broker(0).group_coordinator.group_manager.get_group("g")
        assert [m.client_id for m in group.all_member_metadata()] == ["c2"]
