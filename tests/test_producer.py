"""End-to-end tests of kafka_ref.clients.producer on a manual-mode 3-broker cluster in virtual time.

The test plays the controller (UpdateMetadata, then LeaderAndIsr). Mirrors, in spirit,
clients/src/test/java/org/apache/kafka/clients/producer/internals/SenderTest.java
(testRetries, testExpiredBatch*, testNotLeaderOrFollower) and RecordAccumulatorTest.java
(testLinger, testFull, testFlush), run against real brokers instead of a MockClient.
"""

from __future__ import annotations

import random

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.clients import Producer, RecordMetadata, partition_for_key
from kafka_ref.common.errors import (ConfigException, Errors, IllegalStateException, KafkaException, RecordTooLargeException,
                                     TimeoutException)
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.fetch_data import FetchIsolation

EPOCH_MS = 1_704_067_200_000  # kafka_ref.common.time.EPOCH_ORIGIN_MS


# --------------------------------------------------------------------------------------------
# Playing the controller
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


async def move_leader(cluster: Cluster, topic: str, topic_id: Uuid, partition: int, leader: int, epoch: int,
                      update_metadata: bool = True) -> None:
    """A new leader and epoch for one partition: LeaderAndIsr to every replica, then UpdateMetadata."""
    isr = replicas_led_by(leader)
    request = cluster.leader_and_isr_request([LeaderAndIsrPartitionState(
        topic_name=topic, partition_index=partition, controller_epoch=1, leader=leader, leader_epoch=epoch,
        isr=isr, partition_epoch=epoch, replicas=(0, 1, 2))], {topic: topic_id})
    for broker in range(3):
        await cluster.send(broker, request)
    if update_metadata:
        await cluster.update_metadata([UpdateMetadataPartitionState(
            topic_name=topic, partition_index=partition, controller_epoch=1, leader=leader, leader_epoch=epoch,
            isr=isr, zk_version=epoch, replicas=(0, 1, 2))], {topic: topic_id})


def log_of(cluster: Cluster, broker: int, tp: TopicPartition):
    return cluster.broker(broker).replica_manager.online_partition(tp).log


def log_values(cluster: Cluster, broker: int, tp: TopicPartition) -> list[tuple[int, bytes | None]]:
    """(offset, value) of every record in a replica's log."""
    info = log_of(cluster, broker, tp).read(0, 1 << 30, FetchIsolation.LOG_END, True)
    return [(r.offset, r.value) for r in info.records.records()]


def produce_requests(cluster: Cluster, client_id: str = "producer-1") -> list:
    """Record every ProduceRequest the client sends: (destination, request)."""
    sent: list = []
    cluster.network.observers.append(
        lambda e: sent.append((e.dst, e.request)) if e.src == client_id and isinstance(e.request, ProduceRequest) else None)
    return sent


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_keyed_sends_acks_all_land_on_hashed_partitions() -> None:
    """acks=-1: each record is acknowledged once the ISR has it, on to_positive(murmur2(key)) % 3."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0, 1, 2])
        async with Producer(cluster.network, [0]) as producer:
            results = [await producer.send("t", b"v%d" % i, key=b"key-%d" % i) for i in range(6)]
        assert [r.partition for r in results] == [partition_for_key(b"key-%d" % i, 3) for i in range(6)] == [1, 0, 2, 2, 0, 2]
        assert [r.offset for r in results] == [0, 0, 0, 1, 1, 2]
        assert all(r.topic == "t" and r.timestamp >= EPOCH_MS for r in results)
        # Every replica has the records, and the leader's HW covers them.
        for broker in range(3):
            assert log_values(cluster, broker, TopicPartition("t", 2)) == [(0, b"v2"), (1, b"v3"), (2, b"v5")]
        assert log_of(cluster, 2, TopicPartition("t", 2)).high_watermark == 3


@pytest.mark.anyio
async def test_unkeyed_sends_round_robin_and_explicit_partition() -> None:
    """Null keys go round robin over partitions with a leader; an explicit partition wins."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0, 1, 2])
        async with Producer(cluster.network, [1], acks=1) as producer:
            results = [await producer.send("t", b"x") for _ in range(4)]
            pinned = await producer.send("t", b"y", partition=1, timestamp=EPOCH_MS + 5, headers=[("h", b"1")])
        assert [(r.partition, r.offset) for r in results] == [(0, 0), (1, 0), (2, 0), (0, 1)]
        assert pinned == RecordMetadata("t", 1, 1, EPOCH_MS + 5, serialized_key_size=-1, serialized_value_size=1)
        batch = log_of(cluster, 1, TopicPartition("t", 1)).read(1, 1 << 20).records.batches[0]
        assert [(r.value, r.headers, r.timestamp) for r in batch] == [(b"y", (("h", b"1"),), EPOCH_MS + 5)]


@pytest.mark.anyio
async def test_acks_1_does_not_wait_for_followers_but_acks_all_does() -> None:
    """Mirrors the acks contract: acks=1 returns after the leader's append, acks=-1 after the HW passes it.

    The followers' fetches are lost while their links are cut; they fetch again when those
    requests time out (replica.socket.timeout.ms, 30 s), so the acks=-1 request waits with a
    60 s timeout (a 30 s one would expire first and the retry would append the record twice:
    no idempotence).
    """
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        tp = TopicPartition("t", 0)
        cluster.network.cut_link(1, 0)
        cluster.network.cut_link(2, 0)
        async with Producer(cluster.network, [0], acks=1, client_id="p-acks1") as producer:
            assert (await producer.send("t", b"a")).offset == 0
        assert (log_of(cluster, 0, tp).log_end_offset, log_of(cluster, 0, tp).high_watermark) == (1, 0)
        async with Producer(cluster.network, [0], acks=-1, client_id="p-acksall", request_timeout_ms=60000) as producer:
            future = producer.send_nowait("t", b"b")
            await anyio.sleep(1)
            assert not future.done()
            cluster.network.heal_all()
            assert (await future).offset == 1
        assert log_of(cluster, 0, tp).high_watermark == 2
        assert log_values(cluster, 1, tp) == [(0, b"a"), (1, b"b")]


@pytest.mark.anyio
async def test_acks_0_completes_without_a_response() -> None:
    """acks=0: the future completes once the request is out, with offset -1; the broker still appends."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [2])
        sent = produce_requests(cluster)
        async with Producer(cluster.network, [0], acks=0) as producer:
            futures = [producer.send_nowait("t", b"v%d" % i) for i in range(3)]
            await producer.flush()
            assert [f.done() for f in futures] == [True, True, True]
            assert [f.value().offset for f in futures] == [-1, -1, -1]
        tp = TopicPartition("t", 0)
        await cluster.wait_until(lambda: log_of(cluster, 2, tp).log_end_offset == 3)
        assert log_values(cluster, 2, tp) == [(0, b"v0"), (1, b"v1"), (2, b"v2")]
        assert all(request.acks == 0 for _, request in sent)


@pytest.mark.anyio
async def test_linger_collects_records_into_one_batch() -> None:
    """Mirrors RecordAccumulatorTest#testLinger: records sent within linger.ms share one batch and request."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        sent = produce_requests(cluster)
        async with Producer(cluster.network, [0], linger_ms=100) as producer:
            futures = [producer.send_nowait("t", b"v%d" % i, partition=0) for i in range(5)]
            results = [await f for f in futures]
        assert [r.offset for r in results] == [0, 1, 2, 3, 4]
        assert len(sent) == 1
        dst, request = sent[0]
        batches = request.partition_records()[TopicPartition("t", 0)].batches
        assert (dst, [(b.base_offset, b.record_count) for b in batches]) == (0, [(0, 5)])


@pytest.mark.anyio
async def test_batch_size_splits_batches() -> None:
    """Mirrors RecordAccumulatorTest#testFull: a batch takes records while 61 + 37·n ≤ batch.size.

    Each record (null key, 30-byte value, no headers, same timestamp) is 37 bytes in a v2
    batch, so batch.size=150 holds two; with max_in_flight=1 the batches go one request each.
    """
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        sent = produce_requests(cluster)
        async with Producer(cluster.network, [0], linger_ms=1000, batch_size=150) as producer:
            await producer.partitions_for("t")
            futures = [producer.send_nowait("t", bytes(30), partition=0, timestamp=EPOCH_MS) for _ in range(5)]
            assert [producer.accumulator.batches[TopicPartition("t", 0)][i].record_count for i in range(3)] == [2, 2, 1]
            results = [await f for f in futures]
        assert [r.offset for r in results] == [0, 1, 2, 3, 4]
        assert [[b.record_count for b in r.partition_records()[TopicPartition("t", 0)].batches] for _, r in sent] == [[2], [2], [1]]
        assert [b.size_in_bytes for b in log_of(cluster, 0, TopicPartition("t", 0)).read(0, 1 << 20).records.batches] == [135, 135, 98]


@pytest.mark.anyio
async def test_retry_after_leader_moves() -> None:
    """Mirrors SenderTest#testNotLeaderOrFollower-style recovery against real brokers.

    The controller (the test) makes broker 1 leader in epoch 1. The producer's cached
    metadata still names broker 0, which answers NOT_LEADER_OR_FOLLOWER naming broker 1 in
    epoch 1 (KIP-951); the producer takes that leader at once and resends to broker 1 without
    waiting its retry backoff (the leader epoch moved on), and still refreshes its metadata.
    """
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        topic_id = await create_topic(cluster, "t", [0])
        tp = TopicPartition("t", 0)
        async with Producer(cluster.network, [0]) as producer:
            assert (await producer.send("t", b"before")).offset == 0
            await anyio.sleep(1)
            await move_leader(cluster, "t", topic_id, 0, leader=1, epoch=1)
            seen: list = []
            cluster.network.observers.append(lambda e: seen.append(e) if e.src == "producer-1" else None)
            result = await producer.send("t", b"after")
        assert result == RecordMetadata("t", 0, 1, result.timestamp, serialized_key_size=-1, serialized_value_size=5)
        # The retry goes straight to broker 1; the refresh Kafka still requests follows (to the
        # least loaded broker; how many refreshes fit before the producer closes depends on how
        # long the acks=all write takes).
        assert [(e.dst, type(e.request).__name__) for e in seen[:2]] == [(0, "ProduceRequest"), (1, "ProduceRequest")]
        refused = seen[0].response.responses[0].partition_responses[0]
        assert refused.error_code == Errors.NOT_LEADER_OR_FOLLOWER.code
        assert (refused.current_leader.leader_id, refused.current_leader.leader_epoch) == (1, 1)
        assert seen[2:] and all(e.request == MetadataRequest.for_topics(["t"]) for e in seen[2:])
        assert producer.metadata.current_leader(tp).leader == 1
        assert producer.metadata.current_leader(tp).epoch == 1
        assert log_values(cluster, 1, tp) == [(0, b"before"), (1, b"after")]


@pytest.mark.anyio
async def test_record_too_large_for_broker_is_not_retried() -> None:
    """MESSAGE_TOO_LARGE is not retriable: the caller gets RecordTooLargeException after one attempt."""
    async with Cluster(brokers=3, metadata_mode="manual", config={"message.max.bytes": 200}) as cluster:
        await create_topic(cluster, "t", [0])
        sent = produce_requests(cluster)
        async with Producer(cluster.network, [0]) as producer:
            with pytest.raises(RecordTooLargeException):
                await producer.send("t", bytes(300))
            assert (await producer.send("t", b"small")).offset == 0
        assert len(sent) == 2


@pytest.mark.anyio
async def test_record_larger_than_max_request_size_fails_in_the_client() -> None:
    """Mirrors KafkaProducer#ensureValidRecordSize: reported through the future, nothing is sent.

    186 = the 61-byte batch header + DefaultRecord#recordSizeUpperBound's 125 bytes (the 21-byte
    MAX_RECORD_OVERHEAD, a 1-byte null key, a 2-byte varint value length, the 100-byte value and a
    1-byte header count): Kafka checks the upper bound, not the exact size (170).
    """
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        sent = produce_requests(cluster)
        async with Producer(cluster.network, [0], max_request_size=100) as producer:
            future = producer.send_nowait("t", bytes(100))
            assert future.done()
            with pytest.raises(RecordTooLargeException, match="The message is 186 bytes when serialized which is "
                                                              "larger than 100, which is the value of the max.request.size"):
                await future
        assert sent == []


@pytest.mark.anyio
async def test_unknown_topic_times_out_after_max_block_ms() -> None:
    """Mirrors KafkaProducer#waitOnMetadata: a topic that never appears fails after max.block.ms."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        async with Producer(cluster.network, [0], max_block_ms=1000) as producer:
            with pytest.raises(TimeoutException, match=r"^Topic nope not present in metadata after 1000 ms\.$"):
                await producer.send("nope", b"v")


@pytest.mark.anyio
async def test_records_sent_before_metadata_keep_their_order() -> None:
    """Records queued while the topic's metadata is fetched are appended in send order."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [1])
        async with Producer(cluster.network, [0], linger_ms=10) as producer:
            futures = [producer.send_nowait("t", b"v%d" % i) for i in range(4)]
            assert [f.done() for f in futures] == [False] * 4
            assert [(await f).offset for f in futures] == [0, 1, 2, 3]
        assert log_values(cluster, 1, TopicPartition("t", 0)) == [(0, b"v0"), (1, b"v1"), (2, b"v2"), (3, b"v3")]


@pytest.mark.anyio
async def test_batches_expire_after_delivery_timeout() -> None:
    """Mirrors SenderTest#testExpiredBatchesInMultiplePartitions: a dead leader means retries until delivery.timeout.ms."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        async with Producer(cluster.network, [1], delivery_timeout_ms=5000, request_timeout_ms=3000) as producer:
            await producer.partitions_for("t")
            cluster.kill_broker(0)
            with pytest.raises(TimeoutException, match=r"^Expiring 1 record\(s\) for t-0:\d+ ms has passed since batch creation$"):
                await producer.send("t", b"v")


@pytest.mark.anyio
async def test_flush_sends_lingering_batches_and_close_drains() -> None:
    """Mirrors RecordAccumulatorTest#testFlush: flush ignores linger.ms; close sends what is left."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        async with Producer(cluster.network, [0], linger_ms=60000) as producer:
            first = [producer.send_nowait("t", b"a%d" % i) for i in range(3)]
            await producer.flush()
            assert [f.value().offset for f in first] == [0, 1, 2]
            last = producer.send_nowait("t", b"b")
        assert last.value().offset == 3
        with pytest.raises(IllegalStateException, match="Cannot perform operation after producer has been closed"):
            producer.send_nowait("t", b"c")


@pytest.mark.anyio
async def test_callbacks_fire_in_record_order() -> None:
    """Mirrors ProducerBatch#completeFutureAndFireCallbacks: one call per record, in order."""
    async with Cluster(brokers=3, metadata_mode="manual") as cluster:
        await create_topic(cluster, "t", [0])
        calls: list = []
        async with Producer(cluster.network, [0], linger_ms=5) as producer:
            for i in range(3):
                producer.send_nowait("t", b"v", callback=lambda md, exc, i=i: calls.append((i, md.offset, exc)))
            await producer.flush()
        assert calls == [(0, 0, None), (1, 1, None), (2, 2, None)]


def test_invalid_configuration_and_records() -> None:
    """ConfigException names the key; malformed records raise KafkaException at once."""
    from kafka_ref.network.network import Network

    with pytest.raises(ConfigException, match="Invalid value 2 for configuration acks"):
        Producer(Network(), [0], acks=2)
    with pytest.raises(ConfigException, match="delivery.timeout.ms"):
        Producer(Network(), [0], delivery_timeout_ms=1000)
    with pytest.raises(KafkaException, match="not running"):
        Producer(Network(), [0]).send_nowait("t", b"v")


@pytest.mark.anyio
async def test_invalid_record_arguments() -> None:
    async with Cluster(brokers=1, metadata_mode="manual") as cluster:
        async with Producer(cluster.network, [0]) as producer:
            with pytest.raises(KafkaException, match="Invalid partition: -1"):
                producer.send_nowait("t", b"v", partition=-1)
            with pytest.raises(KafkaException, match="must be bytes or None"):
                producer.send_nowait("t", "text")
            with pytest.raises(KafkaException, match="Invalid timestamp: -5"):
                producer.send_nowait("t", b"v", timestamp=-5)
