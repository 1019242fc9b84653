"""Admin listings: listTopics, listConsumerGroups, describeConsumerGroups, listConsumerGroupOffsets.

Shaped after kafka.api.PlaintextAdminIntegrationTest#testConsumerGroups (list the group, describe
it with its members and their partitions, the assignor and the Stable state, list its committed
offsets) and #testListTopics / KafkaAdminClientTest#testListConsumerGroupOffsets (a partition
without a committed offset maps to None), in both metadata modes.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata
from kafka_ref.common.errors import InvalidGroupIdException
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

T0, T1, T2 = (TopicPartition("orders", p) for p in range(3))


async def _stable_group(cluster: Cluster):
    await cluster.create_topic("orders", partitions=3, replication_factor=2)
    await cluster.create_topic("audit", partitions=1, replication_factor=1)
    async with cluster.producer() as producer:
        for p in range(3):
            await producer.send("orders", b"v", partition=p)
    # (Auto-commit off, as PlaintextAdminIntegrationTest's consumers: the offsets are the test's own.)
    consumers = [cluster.consumer(client_id=f"c{i}", group_id="billing", auto_offset_reset="earliest",
                                  session_timeout_ms=10000, heartbeat_interval_ms=1000,
                                  partition_assignment_strategy=("roundrobin",), enable_auto_commit=False)
                 for i in (1, 2)]
    await _subscribe_until_assigned(consumers)
    return consumers


async def _subscribe_until_assigned(consumers) -> None:
    """Subscribe each consumer to ``orders`` and poll them all until every one has partitions."""
    for consumer in consumers:
        consumer.subscribe(["orders"])
    with anyio.fail_after(60):
        while any(c.coordinator.rejoin_needed or not c.assignment() for c in consumers):
            for consumer in consumers:
                await consumer.poll(200)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_consumer_group_listings(mode):
    async with Cluster(brokers=3, metadata_mode=mode, config={"offsets.topic.num.partitions": 3}) as cluster:
        consumers = await _stable_group(cluster)
        # Commit offset 1 for partitions 0 and 1 only (partition 2 never committed).
        for consumer in consumers:
            mine = {tp: OffsetAndMetadata(1) for tp in (T0, T1) if tp in consumer.assignment()}
            if mine:
                await consumer.commit_sync(mine)
        async with cluster.admin() as admin:
            assert await admin.list_topics() == {"orders", "audit"}
            assert await admin.list_topics(list_internal=True) == {"orders", "audit", "__consumer_offsets"}
            [listing] = await admin.list_consumer_groups()
            assert (listing.group_id, listing.is_simple_consumer_group, listing.state) == ("billing", False, "Stable")
            description = (await admin.describe_consumer_groups(["billing"]))["billing"]
            assert (description.state, description.partition_assignor, description.is_simple_consumer_group) == (
                "Stable", "roundrobin", False)
            assert sorted(m.client_id for m in description.members) == ["c1", "c2"]
            by_client = {m.client_id: m.assignment for m in description.members}
            assert by_client == {"c1": consumers[0].assignment(), "c2": consumers[1].assignment()}
            assert by_client["c1"] | by_client["c2"] == {T0, T1, T2}
            coordinator = cluster.broker(description.coordinator).group_coordinator.group_manager
            assert coordinator.get_group("billing") is not None
            offsets = await admin.list_consumer_group_offsets("billing")
            assert {tp: o.offset for tp, o in offsets.items()} == {T0: 1, T1: 1}
            # A partition asked for by name without a committed offset maps to None.
            assert {tp: o and o.offset for tp, o in (await admin.list_consumer_group_offsets("billing", [T1, T2])).items()} == {
                T1: 1, T2: None}


async def test_describe_unknown_group_is_dead_and_empty_id_refused():
    async with Cluster(brokers=1, config={"offsets.topic.num.partitions": 1, "offsets.topic.replication.factor": 1}) as cluster:
        async with cluster.admin() as admin:
            nobody = (await admin.describe_consumer_groups(["nobody"]))["nobody"]
            assert (nobody.state, nobody.members) == ("Dead", ())
            assert await admin.list_consumer_groups() == []
            assert await admin.list_consumer_group_offsets("nobody") == {}
            with pytest.raises(InvalidGroupIdException):
                await admin.describe_consumer_groups([""])


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_alter_consumer_group_offsets(mode):
    """Mirrors PlaintextAdminIntegrationTest#testConsumerGroups' alterConsumerGroupOffsets step: refused
    while the group has members (UNKNOWN_MEMBER_ID), applied once it is Empty, then read back."""
    from kafka_ref.common.errors import UnknownMemberIdException

    async with Cluster(brokers=3, metadata_mode=mode, config={"offsets.topic.num.partitions": 3}) as cluster:
        consumers = await _stable_group(cluster)
        async with cluster.admin() as admin:
            with pytest.raises(UnknownMemberIdException):
                await admin.alter_consumer_group_offsets("billing", {T0: OffsetAndMetadata(0)})
            for consumer in consumers:
                consumer.close()
            with anyio.fail_after(30):
                while (await admin.describe_consumer_groups(["billing"]))["billing"].state != "Empty":
                    await anyio.sleep(0.5)
            await admin.alter_consumer_group_offsets("billing", {T0: OffsetAndMetadata(1, metadata="reset"),
                                                                 T2: OffsetAndMetadata(0)})
            offsets = await admin.list_consumer_group_offsets("billing")
            assert {tp: (o.offset, o.metadata) for tp, o in offsets.items()} == {T0: (1, "reset"), T2: (0, "")}


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_remove_members_from_consumer_group(mode):
    """Mirrors PlaintextAdminIntegrationTest#testConsumerGroups' removeMembersFromConsumerGroup steps: an
    unknown instance id fails with UNKNOWN_MEMBER_ID; a static member removed by its instance id leaves
    at once (its partitions go to the rest); with no ids every member goes and the group is Empty."""
    from kafka_ref.common.errors import UnknownMemberIdException

    async with Cluster(brokers=3, metadata_mode=mode, config={"offsets.topic.num.partitions": 3}) as cluster:
        await cluster.create_topic("orders", partitions=3, replication_factor=2)
        consumers = [cluster.consumer(client_id=f"s{i}", group_id="static", group_instance_id=f"inst-{i}",
                                      session_timeout_ms=30000, heartbeat_interval_ms=1000) for i in (1, 2)]
        await _subscribe_until_assigned(consumers)
        async with cluster.admin() as admin:
            with pytest.raises(UnknownMemberIdException):
                await admin.remove_members_from_consumer_group("static", ["nobody"])
            await admin.remove_members_from_consumer_group("static", ["inst-1"])
            consumers[0].close()
            with anyio.fail_after(60):
                while consumers[1].assignment() != {T0, T1, T2}:
                    await consumers[1].poll(200)
            members = (await admin.describe_consumer_groups(["static"]))["static"].members
            assert [m.group_instance_id for m in members] == ["inst-2"]
            consumers[1].close()
            await admin.remove_members_from_consumer_group("static")
            description = (await admin.describe_consumer_groups(["static"]))["static"]
            assert (description.state, description.members) == ("Empty", ())
