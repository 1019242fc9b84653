"""Partition#effectiveMinIsr and KAFKA-15583 end to end through a Cluster (Kafka 3.7.0).

A topic with replication factor 2 and ``min.insync.replicas=3``: a 3.7.0+ broker caps the min ISR
at the replica count, so acks=all writes succeed and the HW advances; a 3.6 broker
(``kafka_ref.broker.version``) refuses them with NOT_ENOUGH_REPLICAS. The IBP does not choose.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.config import ConfigException, KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

TP = TopicPartition("t", 0)


async def _produce(cluster: Cluster, acks: int):
    request = ProduceRequest.build(acks=acks, timeout_ms=5000, records={TP: MemoryRecords.with_records([SimpleRecord(None, b"v")])})
    response = await cluster.network.send("client", cluster.leader_for("t", 0), request, 10000, principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


@pytest.mark.parametrize("mode, config, expected", [
    ("zk", {"inter.broker.protocol.version": "3.6"}, (Errors.NONE, 2)),
    ("kraft", {}, (Errors.NONE, 2)),
    ("zk", {"inter.broker.protocol.version": "3.6", "kafka_ref.broker.version": "3.6"}, (Errors.NOT_ENOUGH_REPLICAS, 0)),
])
async def test_min_isr_above_replication_factor(mode, config, expected):
    """Mirrors PartitionTest#testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR's companion rule
    (effectiveMinIsr, KAFKA-15583): two acks=all writes to an RF-2 topic with min.insync.replicas=3."""
    # The broker default carries min.insync.replicas (a ZooKeeper-mode broker does not read topic overrides here).
    async with Cluster(brokers=2, metadata_mode=mode, seed=3, config={**config, "min.insync.replicas": 3}) as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=2)
        errors = [Errors.for_code((await _produce(cluster, -1)).error_code) for _ in range(2)]
        leader = cluster.broker(cluster.leader_for("t", 0)).replica_manager.online_partition(TP)
        assert (errors[-1], leader.leader_log_if_local().high_watermark) == expected
        assert errors[0] == errors[-1]
        assert leader.effective_min_isr() == (2 if expected[0] is Errors.NONE else 3)


def test_ibp_newer_than_broker_code_is_refused():
    """A broker cannot run an inter.broker.protocol.version newer than its own code (KafkaConfig validation)."""
    with pytest.raises(ConfigException, match="inter.broker.protocol.version"):
        KafkaConfig({"inter.broker.protocol.version": "3.7", "kafka_ref.broker.version": "3.6"})
    assert str(KafkaConfig({}).broker_version) == "3.8"
