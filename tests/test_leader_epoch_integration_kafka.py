"""Leader epochs end to end: stamped on written batches, bumped by bounces, answered by
OffsetsForLeaderEpoch.

Ports of Kafka 3.8.0's ``LeaderEpochIntegrationTest`` in ZooKeeper and KRaft mode. Kafka's test
uses broker ids 100, 101 and 102 in two of its cases; kafka_ref's clusters number their
brokers from 0, so 100/101/102 are 0/1/2 here. Kafka's ``TestFetcherThread#leaderOffsetsFor``
is an OffsetsForLeaderEpoch request sent by one broker (as a follower, ``replica_id`` its id) to
another; here it goes over the cluster's network from that broker's node.
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.common.requests.offsets_for_leader_epoch import OffsetForLeaderEpochRequest, OffsetForLeaderPartition

pytestmark = pytest.mark.anyio

T1P0, T1P1, T1P2 = (TopicPartition("foo", p) for p in range(3))
T2P0, T2P2 = TopicPartition("bar", 0), TopicPartition("bar", 2)
UNDEFINED_EPOCH_OFFSET = -1


async def _leader_offsets_for(cluster: Cluster, from_broker: int, to_broker: int,
                              epochs: dict[TopicPartition, int]) -> dict:
    """TestFetcherThread#leaderOffsetsFor: broker ``from_broker`` asks ``to_broker`` as a follower would."""
    request = OffsetForLeaderEpochRequest.for_follower(
        from_broker, {tp: OffsetForLeaderPartition(partition=tp.partition, current_leader_epoch=-1, leader_epoch=epoch)
                      for tp, epoch in epochs.items()})
    response = await cluster.network.send(from_broker, to_broker, request, 30000)
    return response.epoch_end_offsets()


def _batches_have_epoch(cluster: Cluster, epoch: int, min_offset: int) -> bool:
    """LeaderEpochIntegrationTest#messagesHaveLeaderEpoch: on both brokers, partition 0 of both
    topics has data and every batch from ``min_offset`` on carries ``epoch``."""
    for tp in (T1P0, T2P0):
        for broker_id in (0, 1):
            log = cluster.broker(broker_id).log_manager.get_log(tp)
            if log is None or log.log_end_offset <= min_offset:
                return False
            if any(b.partition_leader_epoch != epoch for b in log.batches if b.last_offset >= min_offset):
                return False
    return True


async def _send_four_messages_to_each_topic(cluster: Cluster) -> None:
    async with cluster.producer() as producer:
        for value in ("test1", "test2", "test3", "test4"):
            await producer.send("foo", value=value.encode(), key=value.encode())
        for value in ("test5", "test6", "test7", "test8"):
            await producer.send("bar", value=value.encode(), key=value.encode())


async def _bounce(cluster: Cluster, broker_id: int) -> None:
    """KafkaBroker#shutdown (controlled shutdown on, as by default), then #startup on the same disk."""
    await cluster.shutdown_broker(broker_id)
    await cluster.wait_broker_gone(broker_id)
    await cluster.restart_broker(broker_id)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_should_add_current_leader_epoch_to_messages_as_they_are_written_to_leader(mode: str):
    """Mirrors LeaderEpochIntegrationTest#shouldAddCurrentLeaderEpochToMessagesAsTheyAreWrittenToLeader."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=1, config={"offsets.topic.replication.factor": 2}) as cluster:
        for topic in ("foo", "bar"):
            await cluster.create_topic(topic, replica_assignment={0: [0, 1]})
        await _send_four_messages_to_each_topic(cluster)
        await cluster.wait_until(lambda: _batches_have_epoch(cluster, 0, 0), message="batches stamped with epoch 0")
        # Bounce the leader: the leadership moves to 1 (epoch 1).
        await _bounce(cluster, 0)
        for tp in (T1P0, T2P0):
            await cluster.wait_until(lambda: getattr(cluster.broker(0).metadata_cache.get_partition_info(tp),
                                                     "leader_epoch", None) == 1,
                                     message=f"{tp} at epoch 1 in broker 0's metadata")
        await _send_four_messages_to_each_topic(cluster)
        await cluster.wait_until(lambda: _batches_have_epoch(cluster, 1, 4), message="new batches stamped with epoch 1")
        assert [cluster.partition_state(t, 0)["leader_epoch"] for t in ("foo", "bar")] == [1, 1]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_should_send_leader_epoch_request_and_get_a_response(mode: str):
    """Mirrors LeaderEpochIntegrationTest#shouldSendLeaderEpochRequestAndGetAResponse."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=2, config={"offsets.topic.replication.factor": 3}) as cluster:
        await cluster.create_topic("foo", replica_assignment={0: [0], 1: [1]})
        await cluster.create_topic("bar", replica_assignment={0: [0]})
        async with cluster.producer(acks=-1) as producer:
            for tp, count, value in ((T1P0, 10, b"IHeartLogs"), (T1P1, 20, b"OhAreThey"), (T2P0, 30, b"IReallyDo")):
                for _ in range(count):
                    producer.send_nowait(tp.topic, value, partition=tp.partition)
            await producer.flush()
        requested = {T1P0: 0, T1P1: 0, T2P0: 0, T2P2: 0}
        answers = await _leader_offsets_for(cluster, 2, 0, requested)
        assert (answers[T1P0].end_offset, answers[T2P0].end_offset) == (10, 30)
        # foo-1 is not on broker 0.
        assert (answers[T1P1].error_code, answers[T1P1].end_offset) == (Errors.NOT_LEADER_OR_FOLLOWER.code,
                                                                        UNDEFINED_EPOCH_OFFSET)
        answers = await _leader_offsets_for(cluster, 2, 1, requested)
        assert answers[T1P1].end_offset == 20


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_should_increase_leader_epoch_between_leader_restarts(mode: str):
    """Mirrors LeaderEpochIntegrationTest#shouldIncreaseLeaderEpochBetweenLeaderRestarts (and
    #shouldSupportRequestsForEpochsNotOnTheLeader, which Kafka appends to it): a single-replica
    partition on broker 1 gains two epochs per bounce (leaderless while its only replica is
    away, then led again), and OffsetsForLeaderEpoch answers from the leader's epoch cache."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3, config={"offsets.topic.replication.factor": 1}) as cluster:
        if mode == "zk":
            assert cluster.controller_id() == 0     # the controller is not the broker bounced below

        def leo() -> int:
            return cluster.broker(1).replica_manager.local_log_or_exception(T1P0).log_end_offset

        await cluster.create_topic("foo", replica_assignment={0: [1]})
        async with cluster.producer(acks=-1) as producer:
            await producer.send("foo", b"IHeartLogs", partition=0)
        # 1. One record in epoch 0.
        answer = (await _leader_offsets_for(cluster, 0, 1, {T1P0: 0}))[T1P0]
        assert (answer.leader_epoch, answer.end_offset, leo()) == (0, 1, 1)
        # 2. Bounced: epoch 2 (1 was the leaderless epoch); epoch 0 still ends at 1.
        await _bounce(cluster, 1)
        await cluster.wait_until(lambda: cluster.partition_state("foo", 0)["leader"] == 1, timeout_ms=60000,
                                 message="broker 1 leads again")
        async with cluster.producer(acks=-1) as producer:
            await producer.send("foo", b"IHeartLogs", partition=0)
        assert cluster.partition_state("foo", 0)["leader_epoch"] == 2
        answer = (await _leader_offsets_for(cluster, 0, 1, {T1P0: 0}))[T1P0]
        assert (answer.leader_epoch, answer.end_offset) == (0, 1)
        answer = (await _leader_offsets_for(cluster, 0, 1, {T1P0: 1}))[T1P0]   # nothing was written in epoch 1
        assert (answer.leader_epoch, answer.end_offset) == (0, 1)
        answer = (await _leader_offsets_for(cluster, 0, 1, {T1P0: 2}))[T1P0]
        assert (answer.leader_epoch, answer.end_offset, leo()) == (2, 2, 2)
        # 3. Bounced again: epoch 4.
        await _bounce(cluster, 1)
        await cluster.wait_until(lambda: cluster.partition_state("foo", 0)["leader"] == 1, timeout_ms=60000,
                                 message="broker 1 leads again")
        async with cluster.producer(acks=-1) as producer:
            await producer.send("foo", b"IHeartLogs", partition=0)
        assert cluster.partition_state("foo", 0)["leader_epoch"] == 4
        ends = {epoch: (await _leader_offsets_for(cluster, 0, 1, {T1P0: epoch}))[T1P0].end_offset for epoch in range(6)}
        assert (ends[0], ends[2], ends[4], leo()) == (1, 2, 3, 3)
        # shouldSupportRequestsForEpochsNotOnTheLeader: an epoch the leader never had answers the
        # end of the largest epoch below it (1 -> epoch 0's end, 3 -> epoch 2's); one above the
        # latest is undefined.
        assert (ends[1], ends[3], ends[5]) == (1, 2, UNDEFINED_EPOCH_OFFSET)
