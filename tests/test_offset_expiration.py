"""Offset expiration on a running cluster: the coordinator's periodic cleanupGroupMetadata.

The unit cases of GroupMetadataManagerTest (testOffsetExpirationSemantics,
testOffsetExpirationOfSimpleConsumer, testExpireGroupWithOffsetsOnly, ...) are in
tests/test_group_metadata_manager_kafka.py against a stand-in ReplicaManager; these run the same
rules through real brokers, with a one-minute retention so the run stays short in virtual time:
a simple consumer's offsets count from their commit, a consumer group's from the moment it became
Empty, and a group left without offsets is removed. Kafka schedules the task at start-up and every
offsets.retention.check.interval.ms (here 10 s).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from test_offset_delete import FOO, TOPIC, _member_with_commits
from kafka_ref.coordinator.group.group_metadata import Empty

pytestmark = pytest.mark.anyio

RETENTION_S = 60
CHECK_S = 10
CONFIG = {"group.initial.rebalance.delay.ms": 0, "offsets.topic.replication.factor": 3,
          "offsets.retention.minutes": RETENTION_S // 60, "offsets.retention.check.interval.ms": CHECK_S * 1000}


async def _sleep_until(t: float) -> None:
    await anyio.sleep(max(0.0, t - anyio.current_time()))


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_simple_consumer_offsets_expire_from_their_commit(mode: str):
    """GroupMetadataManagerTest#testOffsetExpirationOfSimpleConsumer on a cluster: a group that only
    commits (no members, no protocol type) loses its offsets one retention after the commit, at the
    next check, and the group itself is removed (testExpireGroupWithOffsetsOnly)."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=11, config=CONFIG) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        await cluster.commit_offsets("simple", {FOO[0]: 7, FOO[1]: 9})
        committed_at = anyio.current_time()
        manager = cluster.broker(cluster.coordinator_for("simple")).group_coordinator.group_manager
        # Just short of the retention: kept.
        await _sleep_until(committed_at + RETENTION_S - 1)
        assert await cluster.committed_offsets("simple", FOO[:2]) == {FOO[0]: 7, FOO[1]: 9}
        assert manager.get_group("simple") is not None
        # One check interval past the retention: both gone, and the group with them.
        await _sleep_until(committed_at + RETENTION_S + CHECK_S + 1)
        assert manager.get_group("simple") is None
        assert await cluster.committed_offsets("simple", FOO[:2]) == {FOO[0]: -1, FOO[1]: -1}


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_consumer_group_offsets_count_from_becoming_empty(mode: str):
    """GroupMetadataManagerTest#testOffsetExpirationSemantics on a cluster: while its member is
    subscribed (Stable) the group keeps its offsets past the retention; once Empty, the retention
    counts from the state change, not from the commits."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=5, config=CONFIG) as cluster:
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
        consumer = await _member_with_commits(cluster, "grp")   # 100 + p on each partition p
        committed_at = anyio.current_time()
        manager = cluster.broker(cluster.coordinator_for("grp")).group_coordinator.group_manager
        # Stable and subscribed for longer than the retention: the offsets stay.
        while anyio.current_time() < committed_at + RETENTION_S + 2 * CHECK_S:
            await consumer.poll(500)
        assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: 100, FOO[1]: 101, FOO[2]: 102}
        consumer.close()
        await cluster.wait_until(lambda: manager.get_group("grp").is_(Empty), message="member left")
        empty_at = anyio.current_time()
        # Well past the commits' retention, short of the Empty state's: kept.
        await _sleep_until(empty_at + RETENTION_S - 1)
        assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: 100, FOO[1]: 101, FOO[2]: 102}
        # Past it: expired, and the Empty group without offsets is removed.
        await _sleep_until(empty_at + RETENTION_S + CHECK_S + 1)
        assert manager.get_group("grp") is None
        assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: -1, FOO[1]: -1, FOO[2]: -1}
