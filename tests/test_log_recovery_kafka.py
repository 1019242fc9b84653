"""High-watermark checkpoints across broker stops and restarts.

Ports of Kafka 3.8.0's ``LogRecoveryTest`` (two brokers, one partition replicated on both with
broker 0 preferred, controlled shutdown off so a stop is a plain clean stop; a producer with
acks=all; in ZooKeeper and KRaft mode) and ``HighwatermarkPersistenceTest`` (ReplicaManager's
``checkpointHighWatermarks`` writing each local log's HW to the replication-offset-checkpoint
file). The file is read back from the broker's Disk, which a stopped or crashed broker keeps,
as Kafka's test reads the file in the stopped broker's log directory.

Kafka's shutdowns happen in real time with the periodic checkpoint task (every
``replica.high.watermark.checkpoint.interval.ms``) running; here the loop is virtual, so the
assertions that Kafka makes "after a while" are made once the state is reached.
"""

from __future__ import annotations

import pytest

from helpers_replica import TP0, make_broker, new_partition, records
from kafka_ref import Cluster, TopicPartition

pytestmark = pytest.mark.anyio

TOPIC = "new-topic"
TP = TopicPartition(TOPIC, 0)
# LogRecoveryTest's overrides, plus controlled shutdown off as its broker configs ask.
CONFIG = {"replica.lag.time.max.ms": 5000, "replica.fetch.wait.max.ms": 1000, "replica.fetch.min.bytes": 20,
          "controlled.shutdown.enable": False, "offsets.topic.replication.factor": 2}


def _hw_file(cluster: Cluster, broker_id: int) -> int:
    """The partition's HW in broker ``broker_id``'s replication-offset-checkpoint (0 when absent)."""
    return cluster.disks[broker_id].replication_offset_checkpoint.read().get(TP, 0)


def _local_hw(cluster: Cluster, broker_id: int) -> int | None:
    state = cluster.replica_state(broker_id, TOPIC, 0)
    return None if state is None else state.high_watermark


def _leader(cluster: Cluster) -> int | None:
    """LogRecoveryTest#getLeaderIdForPartition: the live broker whose partition is led locally."""
    for broker_id in cluster.live_broker_ids():
        state = cluster.replica_state(broker_id, TOPIC, 0)
        if state is not None and state.is_leader:
            return broker_id
    return None


async def _wait_leader_change(cluster: Cluster, old: int | None) -> int:
    """TestUtils#awaitLeaderChange: a live broker other than ``old`` leads the partition."""
    await cluster.wait_until(lambda: _leader(cluster) not in (None, old), timeout_ms=60000,
                             message=f"the leadership of {TP} to move away from {old}")
    leader = _leader(cluster)
    assert leader is not None
    return leader


async def _send(cluster: Cluster, n: int) -> None:
    """LogRecoveryTest#sendMessages: ``n`` records to partition 0, each acknowledged (acks=all)."""
    async with cluster.producer(acks="all") as producer:
        for _ in range(n):
            await producer.send(TOPIC, value=b"hello", partition=0)
        await producer.flush()


async def _stop(cluster: Cluster, broker_id: int) -> None:
    """KafkaBroker#shutdown with controlled shutdown off; then wait until the cluster notices."""
    cluster.shutdown_broker_uncontrolled(broker_id)
    await cluster.wait_broker_gone(broker_id)


async def _setup(cluster: Cluster) -> None:
    await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]})
    await cluster.wait_until(lambda: _leader(cluster) == 0, message="broker 0 to lead")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_hw_checkpoint_no_failures_single_log_segment(mode: str):
    """Mirrors LogRecoveryTest#testHWCheckpointNoFailuresSingleLogSegment."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=1, config=CONFIG) as cluster:
        await _setup(cluster)
        await _send(cluster, 2)
        await cluster.wait_until(lambda: _local_hw(cluster, 1) == 2, message="follower HW 2")
        for broker_id in (0, 1):
            cluster.broker(broker_id).replica_manager.checkpoint_high_watermarks()
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (2, 2)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_hw_checkpoint_with_failures_single_log_segment(mode: str):
    """Mirrors LogRecoveryTest#testHWCheckpointWithFailuresSingleLogSegment: each stop writes the
    HW the broker had; the restarted preferred replica catches up and rejoins the ISR before the
    other stops; after the last write both files hold 2."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=2, config=CONFIG) as cluster:
        await _setup(cluster)
        leader = _leader(cluster)
        assert _hw_file(cluster, 0) == 0
        await _send(cluster, 1)
        await cluster.wait_until(lambda: _local_hw(cluster, 1) == 1, message="follower HW 1")
        hw = 1
        # The preferred replica stops: its file holds the HW it had, the leadership moves to 1.
        await _stop(cluster, 0)
        assert _hw_file(cluster, 0) == hw
        leader = await _wait_leader_change(cluster, leader)
        assert leader == 1
        # It comes back; its checkpoint is unchanged and it rejoins the ISR.
        await cluster.restart_broker(0)
        assert _leader(cluster) in (0, 1)
        assert _hw_file(cluster, 0) == hw
        await cluster.wait_until(lambda: cluster.replica_state(1, TOPIC, 0).isr == frozenset({0, 1}),
                                 timeout_ms=60000, message="broker 0 back in the ISR")
        # Broker 1 stops: its file holds the HW too; leadership goes back to 0.
        await _stop(cluster, 1)
        assert _hw_file(cluster, 1) == hw
        await cluster.restart_broker(1)
        leader = await _wait_leader_change(cluster, leader)
        assert leader == 0
        await _send(cluster, 1)
        hw += 1
        await cluster.wait_until(lambda: _local_hw(cluster, 1) == hw, timeout_ms=60000, message="follower HW 2")
        # Both stop: each writes the HW it reached.
        cluster.shutdown_broker_uncontrolled(0)
        cluster.shutdown_broker_uncontrolled(1)
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (hw, hw)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_hw_checkpoint_no_failures_multiple_log_segments(mode: str):
    """Mirrors LogRecoveryTest#testHWCheckpointNoFailuresMultipleLogSegments (20 records; segments
    are not modelled, the HW bookkeeping is the same)."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3, config=CONFIG) as cluster:
        await _setup(cluster)
        await _send(cluster, 20)
        await cluster.wait_until(lambda: _local_hw(cluster, 1) == 20, message="follower HW 20")
        cluster.shutdown_broker_uncontrolled(0)
        cluster.shutdown_broker_uncontrolled(1)
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (20, 20)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_hw_checkpoint_with_failures_multiple_log_segments(mode: str):
    """Mirrors LogRecoveryTest#testHWCheckpointWithFailuresMultipleLogSegments: both brokers stop,
    broker 1 alone comes back and leads (it was in the ISR), then broker 0 rejoins as a follower
    and learns the new HW."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=4, config=CONFIG) as cluster:
        await _setup(cluster)
        leader = _leader(cluster)
        await _send(cluster, 2)
        hw = 2
        await cluster.wait_until(lambda: _local_hw(cluster, 1) == hw, message="follower HW 2")
        cluster.shutdown_broker_uncontrolled(0)
        cluster.shutdown_broker_uncontrolled(1)
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (hw, hw)
        await cluster.restart_broker(1)
        leader = await _wait_leader_change(cluster, leader)
        assert leader == 1
        assert _hw_file(cluster, 0) == hw
        await cluster.restart_broker(0)
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (hw, hw)
        await _send(cluster, 2)
        hw += 2
        await cluster.wait_until(lambda: _local_hw(cluster, 0) == hw, timeout_ms=60000, message="broker 0 HW 4")
        cluster.shutdown_broker_uncontrolled(0)
        cluster.shutdown_broker_uncontrolled(1)
        assert (_hw_file(cluster, 0), _hw_file(cluster, 1)) == (hw, hw)


# ---------------------------------------------------------------------------- HighwatermarkPersistenceTest


def _checkpointed(broker, tp: TopicPartition) -> int:
    """HighwatermarkPersistenceTest#hwmFor: the partition's entry in the checkpoint file, 0 when absent."""
    return broker.disk.replication_offset_checkpoint.read().get(tp, 0)


def _partition_with_log(broker, tp: TopicPartition):
    """ReplicaManager#createPartition, then Partition#setLog with LogManager#getOrCreateLog's log."""
    partition = new_partition(broker, tp)
    partition.log = broker.log_manager.get_or_create_log(tp)
    return partition


def test_high_watermark_persistence_single_partition():
    """Mirrors HighwatermarkPersistenceTest#testHighWatermarkPersistenceSinglePartition."""
    broker = make_broker(0)
    rm = broker.replica_manager
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, TP0) == 0
    partition = _partition_with_log(broker, TP0)
    partition.update_assignment_and_isr(replicas=[0, 1], is_leader=True, isr=[0], adding_replicas=[],
                                        removing_replicas=[], leader_recovery_state=0)
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, TP0) == partition.log.high_watermark == 0
    # Kafka moves the HW of an empty log to 5 and sees it clamped back to the log end (0).
    partition.local_log_or_exception.update_high_watermark(5)
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, TP0) == partition.log.high_watermark == 0


def test_high_watermark_persistence_multiple_partitions():
    """Mirrors HighwatermarkPersistenceTest#testHighWatermarkPersistenceMultiplePartitions."""
    broker = make_broker(0)
    rm = broker.replica_manager
    t1p0, t2p0 = TopicPartition("foo1", 0), TopicPartition("foo2", 0)
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, t1p0) == 0
    p1 = _partition_with_log(broker, t1p0)
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, t1p0) == p1.log.high_watermark == 0
    # Append count+1 records (Kafka's helper appends 0..count inclusive), move the HW to 5.
    p1.local_log_or_exception.append_as_leader(records(6), leader_epoch=0)
    p1.local_log_or_exception.update_high_watermark(5)
    rm.checkpoint_high_watermarks()
    assert (p1.log.high_watermark, _checkpointed(broker, t1p0)) == (5, 5)
    p2 = _partition_with_log(broker, t2p0)
    rm.checkpoint_high_watermarks()
    assert _checkpointed(broker, t2p0) == p2.log.high_watermark == 0
    p2.local_log_or_exception.append_as_leader(records(16), leader_epoch=0)
    p2.local_log_or_exception.update_high_watermark(15)
    assert p2.log.high_watermark == 15
    p1.local_log_or_exception.append_as_leader(records(6), leader_epoch=0)
    p1.local_log_or_exception.update_high_watermark(10)
    assert p1.log.high_watermark == 10
    rm.checkpoint_high_watermarks()
    assert (_checkpointed(broker, t2p0), _checkpointed(broker, t1p0)) == (15, 10)
