"""The in-process consumer as a static group member (group_instance_id, KIP-345).

Shaped after kafka.api.PlaintextConsumerTest's static-membership cases and
AbstractCoordinatorTest#testLeaveGroupSentWithGroupInstanceIdUnSet: a static member's close sends no
LeaveGroup, so a restart with the same group.instance.id within the session timeout gets its
partitions back without a rebalance (the generation does not move); a second consumer with the same
instance id fences the first (FENCED_INSTANCE_ID: FencedInstanceIdException on its next poll).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.common.errors import ConfigException, FencedInstanceIdException, InvalidGroupIdException
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

GROUP = "static-group"


def _consumer(cluster: Cluster, instance: str | None, client_id: str):
    return cluster.consumer(client_id=client_id, group_id=GROUP, group_instance_id=instance, session_timeout_ms=10000,
                            heartbeat_interval_ms=1000, auto_offset_reset="earliest")


async def _poll_until_assigned(consumers, timeout_s: float = 60) -> None:
    with anyio.fail_after(timeout_s):
        while any(c.coordinator.rejoin_needed or not c.assignment() for c in consumers):
            for consumer in consumers:
                await consumer.poll(200)


def _group(cluster: Cluster):
    for broker in cluster.brokers.values():
        group = broker.group_coordinator.group_manager.get_group(GROUP)
        if group is not None and broker.is_running:
            return group
    raise AssertionError("no coordinator holds the group")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_static_member_restart_keeps_assignment_without_rebalance(mode):
    async with Cluster(brokers=3, metadata_mode=mode) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        first = [_consumer(cluster, f"instance-{i}", f"c{i}") for i in (1, 2)]
        for consumer in first:
            consumer.subscribe(["t"])
        await _poll_until_assigned(first)
        generation = _group(cluster).generation_id
        assignment = {c.coordinator.group_instance_id: c.assignment() for c in first}
        assert sorted(len(a) for a in assignment.values()) == [1, 1]
        # instance-1 closes (no LeaveGroup: it stays in the group) and comes back 2 s later.
        first[0].close()
        await anyio.sleep(2)
        group = _group(cluster)
        assert sorted(m.group_instance_id for m in group.all_member_metadata()) == ["instance-1", "instance-2"]
        again = _consumer(cluster, "instance-1", "c1-again")
        again.subscribe(["t"])
        await _poll_until_assigned([again, first[1]])
        assert again.assignment() == assignment["instance-1"]
        assert first[1].assignment() == assignment["instance-2"]
        assert _group(cluster).generation_id == generation


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_dynamic_member_close_leaves_the_group(mode):
    """Without an instance id, close sends LeaveGroup and the group rebalances at once."""
    async with Cluster(brokers=3, metadata_mode=mode) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        consumers = [_consumer(cluster, None, f"d{i}") for i in (1, 2)]
        for consumer in consumers:
            consumer.subscribe(["t"])
        await _poll_until_assigned(consumers)
        consumers[0].close()
        await anyio.sleep(1)
        assert len(_group(cluster).all_member_metadata()) == 1


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_same_instance_id_fences_the_older_consumer(mode):
    async with Cluster(brokers=3, metadata_mode=mode) as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        old = _consumer(cluster, "instance-1", "old")
        old.subscribe(["t"])
        await _poll_until_assigned([old])
        new = _consumer(cluster, "instance-1", "new")
        new.subscribe(["t"])
        await _poll_until_assigned([new])
        assert new.assignment() == {TopicPartition("t", 0)}
        # The old one's next heartbeat (or commit) carries a member id the instance no longer has.
        with anyio.fail_after(30), pytest.raises(FencedInstanceIdException):
            while True:
                await old.poll(200)


async def test_invalid_group_instance_id_is_refused():
    async with Cluster(brokers=1) as cluster:
        with pytest.raises((InvalidGroupIdException, ConfigException)):
            _consumer(cluster, "bad/id", "x")
