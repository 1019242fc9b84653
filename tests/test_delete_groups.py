"""DeleteGroups: removing empty consumer groups and their offsets.

After Kafka's GroupCoordinatorTest delete-group cases (testDeleteEmptyGroup,
testDeleteEmptyGroupWithStoredOffsets, testDeleteNonEmptyGroup, testDeleteGroupWithInvalidGroupId,
testDeleteGroupWithWrongCoordinator) and DeleteConsumerGroupsTest's admin-level behaviour:
a deleted group's offsets are gone, its tombstones keep it gone after the coordinator moves, a
group with members is NON_EMPTY_GROUP and an unknown one GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients import Admin, Consumer, Producer
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata
from kafka_ref.common.errors import GroupIdNotFoundException, GroupNotEmptyException, RebalanceInProgressException
from kafka_ref.common.requests.delete_groups import DeleteGroupsRequest
from kafka_ref.coordinator.group.group_metadata import Dead

pytestmark = pytest.mark.anyio
TOPIC = "orders"
PARTS = [TopicPartition(TOPIC, p) for p in range(2)]


async def _group_with_commits(cluster: Cluster, group_id: str) -> Consumer:
    """A live group member that consumed and committed 2 records per partition (left open)."""
    bootstrap = cluster.live_broker_ids()
    async with Producer(cluster.network, bootstrap, acks="all") as producer:
        for i in range(4):
            await producer.send(TOPIC, b"v%d" % i, partition=i % 2)
    consumer = Consumer(cluster.network, bootstrap, group_id=group_id, session_timeout_ms=10000,
                        heartbeat_interval_ms=1000)
    consumer.subscribe([TOPIC])
    seen = 0
    with anyio.fail_after(60):
        while seen < 4:
            seen += len(await consumer.poll(500))
        while True:  # a rebalance may be under way: finish it with poll() and commit again
            try:
                await consumer.commit_sync({tp: OffsetAndMetadata(2) for tp in PARTS})
                return consumer
            except RebalanceInProgressException:
                await consumer.poll(500)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_group_after_members_leave_removes_offsets_durably(mode: str) -> None:
    """A live member: NON_EMPTY_GROUP; after it leaves the group is deleted, its offsets read -1,
    and a new coordinator (the old one killed) loads the tombstones, so it stays deleted."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=5,
                       config={"group.initial.rebalance.delay.ms": 0, "offsets.topic.replication.factor": 3}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})
        consumer = await _group_with_commits(cluster, "g1")
        assert await cluster.committed_offsets("g1", PARTS) == {PARTS[0]: 2, PARTS[1]: 2}
        async with cluster.admin() as admin:
            with pytest.raises(GroupNotEmptyException):
                await admin.delete_consumer_groups(["g1"])
            consumer.close()
            coordinator = cluster.coordinator_for("g1")
            group_manager = cluster.broker(coordinator).group_coordinator.group_manager
            await cluster.wait_until(lambda: group_manager.get_group("g1").size == 0, message="member left")
            await admin.delete_consumer_groups(["g1"])
            assert group_manager.get_group("g1") is None
            assert await cluster.committed_offsets("g1", PARTS) == {PARTS[0]: -1, PARTS[1]: -1}
            with pytest.raises(GroupIdNotFoundException):
                await admin.delete_consumer_groups(["g1"])
        # The tombstones were written with acks=0 (as Kafka does): once every replica has them, the
        # coordinator's broker dies and the new one replays them.
        offsets_partition = group_manager.partition_for("g1")
        leader_end = cluster.replica_state(coordinator, "__consumer_offsets", offsets_partition).log_end_offset

        def replicated() -> bool:
            return all(cluster.replica_state(b, "__consumer_offsets", offsets_partition).log_end_offset == leader_end
                       for b in cluster.live_broker_ids())

        await cluster.wait_until(replicated, message="tombstones replicated")
        cluster.kill_broker(coordinator)
        await cluster.wait_until(lambda: cluster.coordinator_for("g1") not in (None, coordinator), message="moved")
        assert await cluster.committed_offsets("g1", PARTS) == {PARTS[0]: -1, PARTS[1]: -1}
        new_manager = cluster.broker(cluster.coordinator_for("g1")).group_coordinator.group_manager
        assert new_manager.get_group("g1") is None


async def test_delete_groups_request_per_group_errors() -> None:
    """GroupCoordinatorTest's delete cases at the request level, on the coordinator and elsewhere.

    An offsets-only group (generation 0, never joined) is deleted with its offsets; an unknown
    group is GROUP_ID_NOT_FOUND; a broker that does not own the group's partition answers
    NOT_COORDINATOR; an empty group id is found nowhere (GROUP_ID_NOT_FOUND at its coordinator).
    """
    async with Cluster(brokers=3, metadata_mode="zk", seed=5,
                       config={"offsets.topic.replication.factor": 3}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})
        assert await cluster.commit_offsets("simple", {PARTS[0]: 7}) == {PARTS[0]: Errors.NONE}
        coordinator = cluster.coordinator_for("simple")
        group = cluster.broker(coordinator).group_coordinator.group_manager.get_group("simple")
        assert group.generation_id == 0
        response = await cluster.network.send("admin", coordinator, DeleteGroupsRequest(groups_names=("simple", "nope")), 5000)
        expected_nope = (Errors.GROUP_ID_NOT_FOUND if cluster.coordinator_for("nope") == coordinator
                         else Errors.NOT_COORDINATOR)
        assert response.errors() == {"simple": Errors.NONE.code, "nope": expected_nope.code}
        assert group.is_(Dead)
        assert await cluster.committed_offsets("simple", [PARTS[0]]) == {PARTS[0]: -1}
        other = next(b for b in cluster.live_broker_ids() if b != coordinator)
        response = await cluster.network.send("admin", other, DeleteGroupsRequest(groups_names=("simple",)), 5000)
        assert response.errors() == {"simple": Errors.NOT_COORDINATOR.code}
        empty_coordinator = cluster.coordinator_for("")
        response = await cluster.network.send("admin", empty_coordinator, DeleteGroupsRequest(groups_names=("",)), 5000)
        assert response.errors() == {"": Errors.GROUP_ID_NOT_FOUND.code}
