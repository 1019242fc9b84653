"""ZooKeeper-mode brokers apply a topic's config overrides (LogManager#fetchLogConfig via ZkConfigRepository).

A topic created with ``min.insync.replicas`` / ``max.message.bytes`` overrides writes them to
``/config/topics/<topic>`` before its assignment; every replica's log must run with them, also
after a broker restart (LogManager#fetchTopicConfigOverrides at start-up).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors, TopicPartition

TP = TopicPartition("orders", 0)


async def _wait(predicate, timeout_s: float = 30.0) -> None:
    with anyio.fail_after(timeout_s):
        while not predicate():
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_min_insync_replicas_override_refuses_acks_all_below_it():
    """After Kafka's PlaintextProducerSendTest / ProduceRequestTest NOT_ENOUGH_REPLICAS cases.

    Broker default min.insync.replicas is 1; the topic says 3. With one follower stopped and
    dropped from the ISR, an acks=all produce gets NOT_ENOUGH_REPLICAS (19) — only if the
    leader's partition really reads the topic override from ZooKeeper.
    """
    async with Cluster(brokers=3, metadata_mode="zk", config={"replica.lag.time.max.ms": 1000}, seed=5) as cluster:
        await cluster.create_topic("orders", replica_assignment={0: [0, 1, 2]}, config={"min.insync.replicas": "3"})
        assert cluster.broker(0).replica_manager.get_partition(TP).effective_min_isr() == 3
        for b in range(3):
            assert cluster.broker(b).log_manager.fetch_log_config("orders").min_in_sync_replicas == 3
        assert (await cluster.produce(0, "orders", 0, [b"a"], acks=-1)).error == Errors.NONE
        cluster.kill_broker(2)
        await _wait(lambda: cluster.broker(0).replica_manager.get_partition(TP).partition_state.isr == frozenset({0, 1}))
        result = await cluster.produce(0, "orders", 0, [b"b"], acks=-1)
        assert result.error == Errors.NOT_ENOUGH_REPLICAS
        assert (await cluster.produce(0, "orders", 0, [b"c"], acks=1)).error == Errors.NONE


@pytest.mark.anyio
async def test_overrides_survive_a_broker_restart_and_reach_every_replica():
    """max.message.bytes override on every replica's log, and min ISR, after a clean restart."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=6) as cluster:
        await cluster.create_topic("orders", replica_assignment={0: [0, 1, 2]},
                                   config={"min.insync.replicas": "2", "max.message.bytes": "5000"})
        for b in range(3):
            log = cluster.broker(b).log_manager.get_log(TP)
            assert log.max_message_bytes == 5000
        await cluster.restart_broker(1)
        await _wait(lambda: cluster.broker(1).replica_manager.get_partition(TP) is not None)
        broker = cluster.broker(1)
        assert broker.log_manager.get_log(TP).max_message_bytes == 5000
        assert broker.log_manager.fetch_log_config("orders").min_in_sync_replicas == 2
        assert cluster.broker(0).replica_manager.get_partition(TP).effective_min_isr() == 2
        result = await cluster.produce(0, "orders", 0, [b"x" * 6000], acks=-1)
        assert result.error == Errors.MESSAGE_TOO_LARGE
