"""Port of kafka.server.ReplicaFetchTest (Kafka 3.8.0), in ZooKeeper and KRaft mode.

Two brokers (IntegrationTestHarness with brokerCount 2), topics ``foo`` and ``bar`` with one
partition and two replicas each; a producer (acks=all, string keys and values) sends four
records to each topic; the follower's replica fetcher must bring its logs to the leader's log
end offset. Kafka waits until every broker's LEO equals the first broker's and is above 0;
the port also checks that the LEO is exactly 4 and that both replicas hold the same records.

Not ported: nothing (the suite has this one test, parameterised over both metadata modes).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

TOPIC_1 = "foo"
TOPIC_2 = "bar"
BROKER_COUNT = 2


def log_records(cluster: Cluster, broker_id: int, tp: TopicPartition) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of every record in the broker's local log of ``tp``."""
    log = cluster.broker(broker_id).log_manager.get_log(tp)
    return [(r.offset, r.key, r.value) for batch in log.read(0, 1 << 20).records for r in batch]


@pytest.mark.parametrize("quorum", ["zk", "kraft"])
async def test_replica_fetcher_thread(quorum: str):
    """Mirrors ReplicaFetchTest#testReplicaFetcherThread."""
    partition = 0
    test_message_list_1 = ["test1", "test2", "test3", "test4"]
    test_message_list_2 = ["test5", "test6", "test7", "test8"]
    async with Cluster(brokers=BROKER_COUNT, metadata_mode=quorum, seed=1) as cluster:
        # 1. Both topics, two replicas each, leaders elected.
        for topic in (TOPIC_1, TOPIC_2):
            await cluster.create_topic(topic, replication_factor=2)

        # 2. Send every record (keyed by its own value), then wait for each acknowledgement.
        async with cluster.producer(acks=-1) as producer:
            records = [(TOPIC_1, m) for m in test_message_list_1] + [(TOPIC_2, m) for m in test_message_list_2]
            futures = [producer.send_nowait(topic, m.encode(), key=m.encode()) for topic, m in records]
            for future in futures:
                await future

        # 3. The broker logs come to be identical.
        def logs_match() -> bool:
            result = True
            for topic in (TOPIC_1, TOPIC_2):
                tp = TopicPartition(topic, partition)
                expected_offset = cluster.broker(0).log_manager.get_log(tp).log_end_offset
                result = result and expected_offset > 0 and all(
                    expected_offset == cluster.broker(b).log_manager.get_log(tp).log_end_offset
                    for b in range(BROKER_COUNT))
            return result

        await cluster.wait_until(logs_match, message="Broker logs should be identical")
        for topic, messages in ((TOPIC_1, test_message_list_1), (TOPIC_2, test_message_list_2)):
            tp = TopicPartition(topic, partition)
            expected = [(i, m.encode(), m.encode()) for i, m in enumerate(messages)]
            for b in range(BROKER_COUNT):
                assert cluster.broker(b).log_manager.get_log(tp).log_end_offset == 4
                assert log_records(cluster, b, tp) == expected
