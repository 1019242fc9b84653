"""DescribeLogDirs: which partitions a broker's log directory holds, their sizes and offset lags.

Mirrors Kafka's DescribeLogDirsRequestTest#testDescribeLogDirsRequest (an online directory with
every partition's size and lag, an offline one answered KAFKA_STORAGE_ERROR with nothing in it and
unknown volume bytes; a broker here has one directory, so the two cases are two moments), plus
ReplicaManager#describeLogDirs's topic filter, a future log (ReplicaManager#getLogEndOffsetLag)
and KafkaAdminClient#describeLogDirs.
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients import LogDirDescription, ReplicaInfo
from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.requests.describe_log_dirs import DescribeLogDirsPartition, DescribeLogDirsRequest

pytestmark = pytest.mark.anyio
TOPIC = "topic"
TP0, TP1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)


async def _describe(cluster: Cluster, broker_id: int, partitions: list[TopicPartition] | None):
    return await cluster.network.send("admin", broker_id, DescribeLogDirsRequest.of(partitions), 5000)


async def _cluster_with_data(cluster: Cluster) -> None:
    """topic: 2 partitions on brokers [0, 1] and [1, 0], 10 and 4 records; other: 1 partition on [0]."""
    await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1], 1: [1, 0]})
    await cluster.create_topic("other", replica_assignment={0: [0]})
    await cluster.produce(0, TOPIC, 0, [b"v%d" % i for i in range(10)])
    await cluster.produce(1, TOPIC, 1, [b"w%d" % i for i in range(4)])

    def caught_up() -> bool:
        return all(cluster.replica_state(b, TOPIC, p).log_end_offset == n
                   for b in (0, 1) for p, n in ((0, 10), (1, 4)))

    await cluster.wait_until(caught_up, message="followers caught up")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_describe_log_dirs_request(mode: str):
    """DescribeLogDirsRequestTest#testDescribeLogDirsRequest: the online directory, then the same directory offline."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=11) as cluster:
        await _cluster_with_data(cluster)
        broker = cluster.broker(0)
        response = await _describe(cluster, 0, None)
        assert response.error_code == 0
        [result] = response.results
        assert (result.error_code, result.log_dir, result.total_bytes, result.usable_bytes) == (
            0, "/kafka-logs-0", -1, -1)
        logs = {tp: broker.log_manager.get_log(tp) for tp in (TP0, TP1, TopicPartition("other", 0))}
        # Sizes are the bytes of the batches each log holds; replicas caught up lag 0 (leader or follower).
        assert {tp: log.size for tp, log in logs.items()} == {
            tp: sum(b.size_in_bytes for b in log.batches) for tp, log in logs.items()}
        assert all(log.size > 0 for tp, log in logs.items() if tp.topic == TOPIC)
        assert response.partitions_by_dir() == {"/kafka-logs-0": {
            tp: DescribeLogDirsPartition(partition_index=tp.partition, partition_size=log.size, offset_lag=0,
                                         is_future_key=False)
            for tp, log in logs.items()}}
        # The follower's copy of topic-0 on broker 1 is byte for byte the leader's.
        follower = (await _describe(cluster, 1, [TP0])).partitions_by_dir()["/kafka-logs-1"][TP0]
        assert (follower.partition_size, follower.offset_lag) == (logs[TP0].size, 0)
        # The directory fails: KAFKA_STORAGE_ERROR, nothing listed, unknown volume bytes.
        broker.log_manager.handle_log_dir_failure("test")
        response = await _describe(cluster, 0, None)
        assert response.error_code == 0
        [result] = response.results
        assert (result.error_code, result.log_dir, result.topics, result.total_bytes, result.usable_bytes) == (
            Errors.KAFKA_STORAGE_ERROR.code, "/kafka-logs-0", (), -1, -1)


async def test_describe_log_dirs_topic_filter_and_future_log():
    """ReplicaManager#describeLogDirs: only the asked-for partitions (since 3.8, KAFKA-16807, a topic with none asked for is left out);
    partitions not hosted are not listed; a future log lags the current log's end (getLogEndOffsetLag)."""
    async with Cluster(brokers=2, metadata_mode="zk", seed=11) as cluster:
        await _cluster_with_data(cluster)
        response = await _describe(cluster, 0, [TP1, TopicPartition(TOPIC, 7), TopicPartition("nope", 0)])
        [result] = response.results
        assert [(t.name, [p.partition_index for p in t.partitions]) for t in result.topics] == [
            (TOPIC, [1])]
        # A future log (what AlterReplicaLogDirs would create) of topic-0, empty: it lags by the current LEO.
        broker = cluster.broker(0)
        future = broker.log_manager.get_or_create_log(TP0, is_future=True)
        response = await _describe(cluster, 0, [TP0])
        by_key = {(p.partition_index, p.is_future_key): (p.partition_size, p.offset_lag)
                  for t in response.results[0].topics for p in t.partitions}
        assert by_key == {(0, False): (broker.log_manager.get_log(TP0).size, 0), (0, True): (future.size, 10)}
        assert future.size == 0


async def test_admin_describe_log_dirs():
    """KafkaAdminClient#describeLogDirs: per broker, its directory with each replica (size, lag, future?); unknown bytes None;
    an offline directory's description carries KafkaStorageException."""
    async with Cluster(brokers=2, metadata_mode="kraft", seed=11) as cluster:
        await _cluster_with_data(cluster)
        async with cluster.admin() as admin:
            described = await admin.describe_log_dirs([0, 1])
            assert sorted(described) == [0, 1]
            d0 = described[0]["/kafka-logs-0"]
            assert (d0.error, d0.total_bytes, d0.usable_bytes) == (None, None, None)
            log0 = cluster.broker(0).log_manager.get_log(TP0)
            assert sorted(d0.replica_infos) == [TopicPartition("other", 0), TP0, TP1]
            assert isinstance(d0, LogDirDescription)
            assert d0.replica_infos[TP0] == ReplicaInfo(size=log0.size, offset_lag=0, is_future=False)
            assert sorted(described[1]["/kafka-logs-1"].replica_infos) == [TP0, TP1]
            cluster.broker(1).log_manager.handle_log_dir_failure("test")
            d1 = (await admin.describe_log_dirs([1]))[1]["/kafka-logs-1"]
            assert isinstance(d1.error, KafkaStorageException) and d1.replica_infos == {}
