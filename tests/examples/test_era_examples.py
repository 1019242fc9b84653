"""Historical behaviour behind a switch, and the manual-mode controller duty, with the public surface only."""

from __future__ import annotations

import anyio
import pytest
import structlog

from kafka_ref import Errors, LeaderAndIsrPartitionState, TopicPartition

TP = TopicPartition("t", 0)


@pytest.mark.parametrize("ibp, kept", [("0.10.2", False), ("3.7", True)], ids=["ibp-0.10.2", "ibp-3.7"])
@pytest.mark.kafka_cluster(metadata_mode="manual", brokers=2)
async def test_kip101_acknowledged_record_lost_by_high_watermark_truncation(kafka_cluster, ibp, kept):
    """KIP-101's first scenario. A leads, B follows; m2 is acknowledged to an acks=-1 producer
    while B's high watermark (and its checkpoint) still says 1. B restarts and, before it hears
    from A, A dies and B becomes leader. Before 0.11 (inter.broker.protocol.version 0.10.2) B
    truncated to its high watermark on becoming a follower, so the acknowledged m2 is gone and
    offset 1 is reused; from 0.11 on a follower asks the leader where to truncate and keeps m2.
    (Kafka's EpochDrivenReplicationProtocolAcceptanceTest#shouldSurviveFastLeaderChange checks
    the fixed behaviour; virtual time makes the old failure deterministic.)"""
    a, b = 0, 1
    async with kafka_cluster(config={"inter.broker.protocol.version": ibp}) as cluster:
        await cluster.set_partition_state("t", leader=a, leader_epoch=0, isr=[a, b], replicas=[a, b], is_new=True)
        assert (await cluster.produce(a, "t", 0, [b"m1"], acks=-1)).base_offset == 0
        await anyio.sleep(6)  # B's high watermark (1) reaches its checkpoint file (every 5 s)
        assert (await cluster.produce(a, "t", 0, [b"m2"], acks=-1)).base_offset == 1
        view = cluster.replica_state(b, "t", 0)
        assert (view.log_end_offset, view.high_watermark) == (2, 1)  # B learns HW 2 only on its next fetch
        # 1. B crashes and comes back; it cannot reach A, which is about to die.
        cluster.kill_broker(b)
        cluster.network.cut_link(a, b)
        await cluster.restart_broker(b)
        await cluster.set_partition_state("t", leader=a, leader_epoch=0, isr=[a, b], replicas=[a, b], to=[b])
        await anyio.sleep(1)
        assert cluster.replica_state(b, "t", 0).log_end_offset == (2 if kept else 1)
        # 2. A dies; B leads epoch 1 and takes m3.
        cluster.kill_broker(a)
        await cluster.set_partition_state("t", leader=b, leader_epoch=1, isr=[b], replicas=[a, b], to=[b])
        result = await cluster.produce(b, "t", 0, [b"m3"], acks=-1)
        assert (result.error, result.base_offset) == (Errors.NONE, 2 if kept else 1)
        expected = [b"m1", b"m2", b"m3"] if kept else [b"m1", b"m3"]
        assert (await cluster.fetch(b, "t", 0, 0)).values == expected


@pytest.mark.kafka_cluster(metadata_mode="manual", brokers=2)
async def test_leader_and_isr_without_update_metadata_starves_followers(kafka_cluster):
    """Kafka's controller always sends UpdateMetadata with a LeaderAndIsr. A test playing the
    controller that sends only the LeaderAndIsr leaves the leader's metadata cache without the
    partition: it answers its follower's fetches (by topic id) UNKNOWN_TOPIC_ID (and logs why, once),
    so an acks=all append on the replica path times out. ``set_partition_state`` sends both and the partition works."""
    async with kafka_cluster as cluster:
        state = LeaderAndIsrPartitionState(topic_name="t", partition_index=0, controller_epoch=1, leader=0, leader_epoch=0,
                                           isr=(0, 1), partition_epoch=0, replicas=(0, 1), is_new=True)
        request = cluster.leader_and_isr_request([state])
        # The brokers know each other (an UpdateMetadata listing them), but not the partition.
        assert {b: r.error_code for b, r in (await cluster.update_metadata()).items()} == {0: 0, 1: 0}
        with structlog.testing.capture_logs() as logs:
            for broker in (0, 1):
                assert await cluster.send_leader_and_isr(broker, request) == {TP: Errors.NONE}
            # A client's produce is refused by the same check; the replica path appends, then waits.
            assert (await cluster.produce(0, "t", 0, [b"v"], acks=-1)).error == Errors.UNKNOWN_TOPIC_OR_PARTITION
            result = await cluster.produce(0, "t", 0, [b"v"], acks=-1, timeout_ms=3000, via="replica_manager")
        assert (result.error, result.base_offset) == (Errors.REQUEST_TIMED_OUT, 0)
        warnings = [e for e in logs if e["event"] == "follower_fetch_refused_unknown_partition"]
        assert [(w["topic_partition"], w["follower"], w["error"], w["log_level"]) for w in warnings] == [
            ("t-0", 1, "UNKNOWN_TOPIC_ID", "warning")]
        # The controller's pair of requests fixes it.
        await cluster.set_partition_state("t", leader=0, leader_epoch=1, isr=[0, 1], replicas=[0, 1])
        assert (await cluster.produce(0, "t", 0, [b"w"], acks=-1)).error == Errors.NONE
        assert cluster.replica_state(0, "t", 0).high_watermark == 2


@pytest.mark.asyncio
@pytest.mark.kafka_cluster(metadata_mode="kraft", brokers=3)
async def test_pytest_asyncio_style_test_in_virtual_time(kafka_cluster):
    """The same fixture under pytest-asyncio: the plugin gives the test a virtual-time loop, so a
    broker session timeout (9 s in KRaft mode) passes without waiting for it."""
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        leader = cluster.leader_for("t", 0)
        cluster.kill_broker(leader)
        await cluster.wait_broker_gone(leader)
        assert cluster.leader_for("t", 0) not in (-1, leader)
        assert cluster.partition_state("t", 0)["leader_epoch"] == 1
