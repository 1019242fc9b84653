"""Client liveness under broker loss: every operation finishes while a live broker can answer.

The regression test replays the report of issue 17: with three brokers in ZooKeeper mode and a
topic of three partitions (RF 3, min.insync.replicas 2), each partition's leader in turn is
killed, records are sent to every partition, the old leader comes back and rejoins the ISR, and
more records are sent. Before the fix a send stalled in some trio schedules (schedules 4, 5 and
6 of 0..11): the producer's metadata named a dead broker as its lowest-id node, the reconnect
backoff (50 ms) ran out before the next refresh (100 ms), so every refresh went to the dead
broker and failed; the live brokers were never asked. Kafka's NetworkClient#leastLoadedNode
prefers a connected node, never picks one in reconnect backoff, and a disconnection requests a
metadata update (DefaultMetadataUpdater#handleServerDisconnect).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.topic_partition import TopicPartition

TOPIC = "orders"

pytestmark = pytest.mark.anyio


@pytest.mark.kafka_ref_schedules(12)
async def test_producer_survives_leader_kill_and_restart_of_every_partition(anyio_backend) -> None:
    """Issue 17's reproduction: no send may stall (delivery.timeout.ms 120 s would expire it)."""
    async with Cluster(brokers=3, metadata_mode="zk") as cluster:
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
        async with cluster.producer(acks="all") as producer:
            # Without idempotence a retry after a lost answer may write a batch twice, so
            # offsets are checked to grow, and every send must finish.
            last = {0: -1, 1: -1, 2: -1}
            sends = 0

            async def send_round(prefix: bytes) -> None:
                nonlocal sends
                for i in range(30):
                    with anyio.fail_after(60):
                        meta = await producer.send(TOPIC, prefix + b"%d" % i, partition=i % 3)
                    assert meta.offset > last[i % 3]
                    last[i % 3] = meta.offset
                    sends += 1

            for p in range(3):
                leader = cluster.leader_for(TOPIC, p)
                cluster.kill_broker(leader)
                await send_round(b"v")
                await cluster.wait_until(lambda: cluster.leader_for(TOPIC, p) not in (-1, leader))
                await cluster.restart_broker(leader)
                await cluster.wait_until(lambda: len(cluster.partition_state(TOPIC, p)["isr"]) == 3, timeout_ms=120000)
                await send_round(b"w")
            assert sends == 180
            for p in range(3):
                log = cluster.broker(cluster.leader_for(TOPIC, p)).replica_manager.get_partition_or_exception(
                    TopicPartition(TOPIC, p)).log
                assert log.high_watermark == last[p] + 1
