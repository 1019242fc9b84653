"""End-to-end tests of kafka_ref.clients.consumer on a manual-mode 3-broker cluster in virtual time.

The test plays the controller. Mirrors, in spirit,
clients/src/test/java/org/apache/kafka/clients/consumer/internals/FetcherTest.java
(testFetchNormal, testFetchOffsetOutOfRange, testFetchOffsetOutOfRangeException,
testFetchFencedLeaderEpoch, testFetchUnknownLeaderEpoch — which, as here, does not refresh
metadata) and OffsetFetcherTest.java (testUpdateFetchPositionResetToDefaultOffset /
ResetToLatestOffset), run against real brokers.
"""

from __future__ import annotations

import random

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.clients import Consumer, NoOffsetForPartitionException, OffsetAndTimestamp, Producer
from kafka_ref.common.errors import Errors, IllegalStateException, KafkaException, OffsetOutOfRangeException, TimeoutException
from kafka_ref.common.requests.fetch import FetchRequest
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid

EPOCH_MS = 1_704_067_200_000  # kafka_ref.common.time.EPOCH_ORIGIN_MS
TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


# --------------------------------------------------------------------------------------------
# Playing the controller (same helpers as test_producer.py)
# --------------------------------------------------------------------------------------------


def replicas_led_by(leader: int) -> tuple[int, ...]:
    return (leader,) + tuple(b for b in range(3) if b != leader)


async def create_topic(cluster: Cluster, topic: str, leaders: list[int]) -> Uuid:
    """Partition p led by leaders[p], replicated on all three brokers, epoch 0."""
    topic_id = Uuid.random_uuid(random.Random(topic))
    await cluster.update_metadata([
        UpdateMetadataPartitionState(topic_name=topic, partition_index=p, controller_epoch=1, leader=leader,
                                     leader_epoch=0, isr=replicas_led_by(leader), zk_version=0,
                                     replicas=replicas_led_by(leader))
        for p, leader in enumerate(leaders)], {topic: topic_id})
    request = cluster.leader_and_isr_request([
        LeaderAndIsrPartitionState(topic_name=topic, partition_index=p, controller_epoch=1, leader=leader,
                                   leader_epoch=0, isr=replicas_led_by(leader), partition_epoch=0,
                                   replicas=replicas_led_by(leader), is_new=True)
        for p, leader in enumerate(leaders)], {topic: topic_id})
    for broker in range(3):
        await cluster.send(broker, request)
    return topic_id


async def leader_and_isr(cluster: Cluster, topic_id: Uuid, leader: int, epoch: int, brokers=(0, 1, 2)) -> None:
    request = cluster.leader_and_isr_request([LeaderAndIsrPartitionState(
        topic_name="t", partition_index=0, controller_epoch=1, leader=leader, leader_epoch=epoch,
        isr=replicas_led_by(leader), partition_epoch=epoch, replicas=(0, 1, 2))], {"t": topic_id})
    for broker in brokers:
        await cluster.send(broker, request)


async def update_metadata(cluster: Cluster, topic_id: Uuid, leader: int, epoch: int) -> None:
    await cluster.update_metadata([UpdateMetadataPartitionState(
        topic_name="t", partition_index=0, controller_epoch=1, leader=leader, leader_epoch=epoch,
        isr=replicas_led_by(leader), zk_version=epoch, replicas=(0, 1, 2))], {"t": topic_id})


async def produce(cluster: Cluster, values: list[bytes], partition: int = 0, acks: int = -1, linger_ms: int = 0) -> list[int]:
    """Send ``values`` to t-``partition`` (one batch when ``linger_ms`` > 0); their offsets."""
    async with Producer(cluster.network, [0, 1, 2], acks=acks, linger_ms=linger_ms,
                        client_id=f"producer-{random.random()}", request_timeout_ms=60000) as producer:
        await producer.partitions_for("t")
        futures = [producer.send_nowait("t", v, partition=partition, timestamp=EPOCH_MS + i) for i, v in enumerate(values)]
        return [(await f).offset for f in futures]


def fetches(cluster: Cluster, client_id: str = "consumer-1") -> list:
    """Every FetchRequest envelope the consumer posts (responses readable once answered)."""
    sent: list = []
    cluster.network.observers.append(
        lambda e: sent.append(e) if e.src == client_id and isinstance(e.request, FetchRequest) else None)
    return sent


def summary(records) -> list[tuple[int, int, bytes | None]]:
    return [(r.partition, r.offset, r.value) for r in records]


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_poll_returns_records_of_every_assigned_partition() -> None:
    """Mirrors FetcherTest#testFetchNormal: records in offset order with timestamps and leader epochs."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0, 1])
        await produce(cluster, [b"a0", b"a1", b"a2"], partition=0, linger_ms=5)
        await produce(cluster, [b"b0", b"b1"], partition=1)
        consumer = Consumer(cluster.network, [2], client_id="consumer-1")
        consumer.assign([TP0, TP1])
        records = await consumer.poll(5000)
        # Offset order within a partition; the partitions come in whatever order their leaders answered.
        assert [r for r in summary(records) if r[0] == 0] == [(0, 0, b"a0"), (0, 1, b"a1"), (0, 2, b"a2")]
        assert [r for r in summary(records) if r[0] == 1] == [(1, 0, b"b0"), (1, 1, b"b1")]
        assert [(r.topic, r.timestamp, r.leader_epoch, r.key, r.headers) for r in records if r.partition == 0][:2] == [
            ("t", EPOCH_MS, 0, None, ()), ("t", EPOCH_MS + 1, 0, None, ())]
        assert (await consumer.position(TP0), await consumer.position(TP1)) == (3, 2)
        assert consumer.high_watermark(TP0) == 3
        assert await consumer.poll(1000) == []


@pytest.mark.anyio
async def test_max_poll_records_hands_out_the_rest_later() -> None:
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v%d" % i for i in range(5)], linger_ms=5)
        consumer = Consumer(cluster.network, [0], max_poll_records=2)
        consumer.assign([TP0])
        polls = [summary(await consumer.poll(5000)) for _ in range(3)]
        assert polls == [[(0, 0, b"v0"), (0, 1, b"v1")], [(0, 2, b"v2"), (0, 3, b"v3")], [(0, 4, b"v4")]]


@pytest.mark.anyio
async def test_consumer_never_sees_data_at_or_above_the_high_watermark() -> None:
    """The leader serves consumers up to the HW only: acks=1 records wait for the followers."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0", b"v1", b"v2"])
        # Followers cut off: two more records reach only the leader (LEO 5, HW 3).
        cluster.network.cut_link(1, 0)
        cluster.network.cut_link(2, 0)
        assert await produce(cluster, [b"v3", b"v4"], acks=1) == [3, 4]
        leader_log = cluster.broker(0).replica_manager.online_partition(TP0).log
        assert (leader_log.log_end_offset, leader_log.high_watermark) == (5, 3)
        consumer = Consumer(cluster.network, [0])
        consumer.assign([TP0])
        assert summary(await consumer.poll(5000)) == [(0, 0, b"v0"), (0, 1, b"v1"), (0, 2, b"v2")]
        assert await consumer.poll(2000) == []
        assert await consumer.position(TP0) == 3
        assert await consumer.end_offsets([TP0]) == {TP0: 3}
        # Followers back: once the HW moves, the rest is served.
        cluster.network.heal_all()
        await cluster.wait_until(lambda: leader_log.high_watermark == 5, timeout_ms=60000)
        assert summary(await consumer.poll(5000)) == [(0, 3, b"v3"), (0, 4, b"v4")]
        assert consumer.high_watermark(TP0) == 5


@pytest.mark.anyio
async def test_seek_into_the_middle_of_a_batch() -> None:
    """The broker returns the whole batch holding the fetch offset; the consumer skips records below it."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v%d" % i for i in range(5)], linger_ms=5)
        sent = fetches(cluster)
        consumer = Consumer(cluster.network, [0])
        consumer.assign([TP0])
        consumer.seek(TP0, 2)
        assert summary(await consumer.poll(5000)) == [(0, 2, b"v2"), (0, 3, b"v3"), (0, 4, b"v4")]
        first = sent[0]
        assert first.request.topics[0].partitions[0].fetch_offset == 2
        batches = first.response.partition_data("t", 0).records.batches
        assert [(b.base_offset, b.record_count) for b in batches] == [(0, 5)]
        assert await consumer.position(TP0) == 5


@pytest.mark.anyio
async def test_offset_out_of_range_resets_to_earliest() -> None:
    """Mirrors FetcherTest#testFetchOffsetOutOfRange: OFFSET_OUT_OF_RANGE, then ListOffsets(EARLIEST), then data."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0", b"v1"])
        seen: list = []
        cluster.network.observers.append(lambda e: seen.append(e) if e.src == "consumer-1" else None)
        consumer = Consumer(cluster.network, [0])
        consumer.assign([TP0])
        consumer.seek(TP0, 100)
        assert summary(await consumer.poll(5000)) == [(0, 0, b"v0"), (0, 1, b"v1")]
        names = [type(e.request).__name__ for e in seen]
        # The last fetch is the one poll sends before returning records (Kafka pipelines it too).
        assert names == ["MetadataRequest", "FetchRequest", "ListOffsetsRequest", "FetchRequest", "FetchRequest"]
        assert seen[1].response.partition_data("t", 0).error_code == Errors.OFFSET_OUT_OF_RANGE.code
        assert seen[2].request.topics[0].partitions[0].timestamp == -2  # EARLIEST_TIMESTAMP
        assert [seen[i].request.topics[0].partitions[0].fetch_offset for i in (1, 3, 4)] == [100, 0, 2]


@pytest.mark.anyio
async def test_offset_out_of_range_resets_to_latest() -> None:
    """auto_offset_reset="latest": the position jumps to the end; only newer records follow."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0", b"v1"])
        consumer = Consumer(cluster.network, [0], auto_offset_reset="latest")
        consumer.assign([TP0])
        assert await consumer.position(TP0) == 2
        consumer.seek(TP0, 100)
        assert await consumer.poll(1000) == []
        assert await consumer.position(TP0) == 2
        await produce(cluster, [b"v2"])
        assert summary(await consumer.poll(5000)) == [(0, 2, b"v2")]


@pytest.mark.anyio
async def test_no_reset_policy_raises() -> None:
    """auto_offset_reset="none": no position → NoOffsetForPartitionException; out of range → OffsetOutOfRangeException."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0"])
        consumer = Consumer(cluster.network, [0], auto_offset_reset="none")
        consumer.assign([TP0])
        with pytest.raises(NoOffsetForPartitionException, match=r"Undefined offset with no reset policy for partitions: \[t-0\]"):
            await consumer.poll(1000)
        consumer.seek(TP0, 7)
        with pytest.raises(OffsetOutOfRangeException, match="Fetch position 7 is out of range for partition t-0"):
            await consumer.poll(1000)
        # Raised again on every poll until the application seeks (FetcherTest does the same check twice).
        with pytest.raises(OffsetOutOfRangeException):
            await consumer.poll(1000)
        consumer.seek(TP0, 0)
        assert summary(await consumer.poll(5000)) == [(0, 0, b"v0")]


@pytest.mark.anyio
async def test_fenced_leader_epoch_refreshes_metadata_and_follows_the_new_leader() -> None:
    """Mirrors FetcherTest#testFetchFencedLeaderEpoch: the old leader (now a follower in epoch 1)
    refuses a fetch in epoch 0; the consumer refreshes metadata and fetches from broker 1 in epoch 1."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        topic_id = await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0", b"v1"])
        sent = fetches(cluster)
        consumer = Consumer(cluster.network, [2])
        consumer.assign([TP0])
        assert summary(await consumer.poll(5000)) == [(0, 0, b"v0"), (0, 1, b"v1")]
        await anyio.sleep(1)
        await leader_and_isr(cluster, topic_id, leader=1, epoch=1)
        await update_metadata(cluster, topic_id, leader=1, epoch=1)
        assert await produce(cluster, [b"v2"]) == [2]
        records = await consumer.poll(5000)
        assert summary(records) == [(0, 2, b"v2")]
        assert records[0].leader_epoch == 1
        route = [(e.dst, e.request.topics[0].partitions[0].current_leader_epoch, e.request.topics[0].partitions[0].fetch_offset,
                  e.response.partition_data("t", 0).error_code) for e in sent if e.answered]
        assert route[-1] == (1, 1, 2, 0)
        assert (0, 0, 2, Errors.FENCED_LEADER_EPOCH.code) in route  # from the old leader
        assert consumer.metadata.current_leader(TP0).leader == 1


@pytest.mark.anyio
async def test_unknown_leader_epoch_is_retried_until_the_broker_catches_up() -> None:
    """Mirrors FetcherTest#testFetchUnknownLeaderEpoch: the consumer knows epoch 1 before broker 1 does."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        topic_id = await create_topic(cluster, "t", [0])
        await produce(cluster, [b"v0"])
        # The metadata says broker 1 leads in epoch 1, but broker 1 has not been told yet.
        await leader_and_isr(cluster, topic_id, leader=1, epoch=1, brokers=(0, 2))
        await update_metadata(cluster, topic_id, leader=1, epoch=1)
        sent = fetches(cluster)
        consumer = Consumer(cluster.network, [2])
        consumer.assign([TP0])
        consumer.seek(TP0, 0)
        assert await consumer.poll(300) == []
        assert [(e.dst, e.response.partition_data("t", 0).error_code) for e in sent if e.answered][0] == (
            1, Errors.UNKNOWN_LEADER_EPOCH.code)
        await leader_and_isr(cluster, topic_id, leader=1, epoch=1, brokers=(1,))
        assert summary(await consumer.poll(5000)) == [(0, 0, b"v0")]


@pytest.mark.anyio
async def test_offset_lookups() -> None:
    """Mirrors KafkaConsumer#beginningOffsets / #endOffsets / #offsetsForTimes through ListOffsets."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0, 2])
        await produce(cluster, [b"v0", b"v1", b"v2"], partition=0)
        consumer = Consumer(cluster.network, [1])
        assert await consumer.beginning_offsets([TP0, TP1]) == {TP0: 0, TP1: 0}
        assert await consumer.end_offsets([TP0, TP1]) == {TP0: 3, TP1: 0}
        assert await consumer.offsets_for_times({TP0: EPOCH_MS + 1, TP1: EPOCH_MS}) == {
            TP0: OffsetAndTimestamp(1, EPOCH_MS + 1, 0), TP1: None}
        with pytest.raises(TimeoutException, match="Failed to get offsets by times in 500ms"):
            await consumer.end_offsets([TopicPartition("missing", 0)], timeout_ms=500)


@pytest.mark.anyio
async def test_misuse_raises() -> None:
    async with Cluster(brokers=1, metadata_mode="manual") as cluster:
        consumer = Consumer(cluster.network, [0])
        with pytest.raises(IllegalStateException, match="not subscribed to any topics or assigned any partitions"):
            await consumer.poll(10)
        with pytest.raises(KafkaException, match="No current assignment for partition t-0"):
            consumer.seek(TP0, 0)
        consumer.assign([TP0])
        with pytest.raises(KafkaException, match="seek offset must not be a negative number"):
            consumer.seek(TP0, -1)
        with pytest.raises(IllegalStateException, match="only check the position for partitions assigned"):
            await consumer.position(TP1)
        consumer.close()
        with pytest.raises(KafkaException, match="already been closed"):
            await consumer.poll(10)
