"""ReplicaManager#applyLocalFollowersDelta end to end in a KRaft Cluster (Kafka 3.3+, KAFKA-13790/13858).

Broker 0 leads ``solo`` (replicas [0]) and ``t`` (replicas [0, 1]) and starts a controlled shutdown.
The controller moves ``t``'s leadership to broker 1 and drops 0 from its ISR, and, having no one
else for ``solo``, sets its leader to -1. Broker 0 then follows no one for ``solo`` (it refuses an
acks=1 write) and stops fetching both partitions, keeping their logs. A 3.2 broker
(``kafka_ref.broker.version``) kept leading ``solo`` at its old leader epoch and took the write.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

SOLO, T0 = TopicPartition("solo", 0), TopicPartition("t", 0)


@pytest.mark.parametrize("version, solo_after", [
    ("3.8", (False, -1, 1, Errors.NOT_LEADER_OR_FOLLOWER)),
    ("3.2", (True, 0, 0, Errors.NONE)),
])
async def test_controlled_shutdown_with_a_leaderless_partition(version, solo_after):
    """Mirrors ReplicaManagerTest#testReplicasAreStoppedWhileInControlledShutdownWithKRaft through a Cluster."""
    config = {"kafka_ref.broker.version": version, "inter.broker.protocol.version": version}
    async with Cluster(brokers=2, metadata_mode="kraft", seed=7, config=config) as cluster:
        await cluster.create_topic("solo", replica_assignment={0: [0]})
        await cluster.create_topic("t", replica_assignment={0: [0, 1]})
        broker = cluster.broker(0)
        assert await broker.controlled_shutdown() is True
        assert (cluster.partition_state("solo", 0)["leader"], cluster.partition_state("t", 0)["leader"]) == (-1, 1)
        solo = broker.replica_manager.online_partition(SOLO)
        request = ProduceRequest.build(acks=1, timeout_ms=1000, records={SOLO: MemoryRecords.with_records([SimpleRecord(None, b"x")])})
        response = await cluster.network.send("client", 0, request, 5000, principal="User:ANONYMOUS")
        error = Errors.for_code(response.responses[0].partition_responses[0].error_code)
        assert (solo.is_leader, solo.leader_replica_id_opt, solo.get_leader_epoch(), error) == solo_after
        manager = broker.replica_manager.replica_fetcher_manager
        if version == "3.8":
            # Both stopped fetching (leaderless; out of the ISR) and kept their logs.
            assert (manager.get_fetcher(SOLO), manager.get_fetcher(T0)) == (None, None)
            assert solo.log.log_end_offset == 0
        assert broker.log_manager.get_log(SOLO) is not None and broker.log_manager.get_log(T0) is not None
