"""Topic deletion with brokers, controllers, reassignments and new partitions getting in its way.

Ports of Kafka 3.8.0's ``DeleteTopicTest`` that tests/test_topic_deletion.py does not already
cover in ZooKeeper mode (there: all replicas alive, a recovered follower, deletion disabled, an
unknown topic, recreation), plus the KRaft runs of the tests Kafka parameterises over both
modes. Brokers are created with controlled shutdown off, as Kafka's ``createTestTopicAndCluster``
does, so a stop is a clean stop; the topic is ``test`` with partition 0 on brokers 0, 1 and 2.

``verify_topic_deletion`` mirrors ``TestUtils#verifyTopicDeletion``: in ZooKeeper mode the
deletion marker and the topic znode are gone; on every broker the partitions are no longer
hosted and no log is left, in the log manager or on the broker's disk (Kafka's soft- and
hard-deleted directories). Kafka's cleaner-offset check has no counterpart (no log cleaner here).

Not ported: testDeleteTopicWithCleaner (no log cleaner in kafka_ref).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.clients.admin_types import NewPartitions, NewTopic
from kafka_ref.common.errors import UnknownTopicOrPartitionException
from kafka_ref.zk.admin_zk_client import AdminZkClient

pytestmark = pytest.mark.anyio

TOPIC = "test"
TP0 = TopicPartition(TOPIC, 0)
ASSIGNMENT = {0: [0, 1, 2]}
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])


async def _create_test_topic_and_cluster(cluster: Cluster, assignment: dict[int, list[int]] = ASSIGNMENT) -> None:
    """DeleteTopicTest#createTestTopicAndCluster: the topic, and its replicas' logs on brokers 0-2."""
    await cluster.create_topic(TOPIC, replica_assignment=assignment)
    await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(TP0) is not None for b in (0, 1, 2)),
                             message="replicas of test-0 created")


def _cluster(mode: str, brokers: int = 3, **config) -> Cluster:
    return Cluster(brokers=brokers, metadata_mode=mode, seed=21,
                   config={"controlled.shutdown.enable": False, "delete.topic.enable": True,
                           "offsets.topic.replication.factor": min(3, brokers), **config})


def _hosts_nothing(cluster: Cluster, broker_id: int, tp: TopicPartition) -> bool:
    broker = cluster.broker(broker_id)
    return (broker.replica_manager.online_partition(tp) is None and broker.log_manager.get_log(tp) is None
            and cluster.disks[broker_id].get_local_log(tp) is None)


async def verify_topic_deletion(cluster: Cluster, topic: str, num_partitions: int, brokers: list[int]) -> None:
    """TestUtils#verifyTopicDeletion."""
    tps = [TopicPartition(topic, p) for p in range(num_partitions)]
    if cluster.metadata_mode == "zk":
        zk = cluster.zookeeper
        await cluster.wait_until(lambda: zk.exists(f"/admin/delete_topics/{topic}") is None, timeout_ms=60000,
                                 message=f"/admin/delete_topics/{topic} removed")
        await cluster.wait_until(lambda: zk.exists(f"/brokers/topics/{topic}") is None, timeout_ms=60000,
                                 message=f"/brokers/topics/{topic} removed")
    await cluster.wait_until(lambda: all(_hosts_nothing(cluster, b, tp) for b in brokers for tp in tps),
                             timeout_ms=60000, message=f"every replica of {topic} deleted")


async def _stop(cluster: Cluster, broker_id: int) -> None:
    """KafkaBroker#shutdown with controlled shutdown off, then wait until the cluster noticed."""
    cluster.shutdown_broker_uncontrolled(broker_id)
    await cluster.wait_broker_gone(broker_id)


async def _delete(cluster: Cluster, topic: str = TOPIC) -> None:
    async with cluster.admin() as admin:
        await admin.delete_topics([topic])


def _follower_of_tp0(cluster: Cluster, among: tuple[int, ...] = (0, 1, 2), avoid: tuple[int, ...] = ()) -> int:
    leader = cluster.leader_for(TOPIC, 0)
    return [b for b in among if b != leader and b not in avoid][-1]


@BOTH
async def test_delete_topic_with_all_alive_replicas(mode: str):
    """Mirrors DeleteTopicTest#testDeleteTopicWithAllAliveReplicas."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        await _delete(cluster)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])


@BOTH
async def test_resume_delete_topic_with_recovered_follower(mode: str):
    """Mirrors DeleteTopicTest#testResumeDeleteTopicWithRecoveredFollower: the live replicas go at
    once, the stopped follower's log stays on its disk (ZooKeeper: the topic stays marked) until
    it comes back."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        follower = _follower_of_tp0(cluster)
        await _stop(cluster, follower)
        await _delete(cluster)
        others = [b for b in (0, 1, 2) if b != follower]
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(TP0) is None for b in others),
                                 message="the live replicas deleted")
        assert cluster.disks[follower].get_local_log(TP0) is not None
        if mode == "zk":
            assert cluster.broker(others[0]).zk_client.is_topic_marked_for_deletion(TOPIC)
        await cluster.restart_broker(follower)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])


async def test_resume_delete_topic_on_controller_failover():
    """Mirrors DeleteTopicTest#testResumeDeleteTopicOnControllerFailover (ZooKeeper only): a
    follower is down, the topic is marked, the controller stops; the deletion stays halted
    until both are back, then completes."""
    async with _cluster("zk") as cluster:
        await _create_test_topic_and_cluster(cluster)
        controller = cluster.controller_id()
        follower = _follower_of_tp0(cluster, avoid=(controller,))
        await _stop(cluster, follower)
        alive = next(b for b in (0, 1, 2) if b not in (controller, follower))
        AdminZkClient(cluster.broker(alive).zk_client, cluster.broker(alive).rng).delete_topic(TOPIC)
        await _stop(cluster, controller)
        await cluster.wait_until(lambda: cluster.controller_id() == alive, timeout_ms=60000, message="a new controller")
        assert cluster.broker(alive).zk_client.is_topic_marked_for_deletion(TOPIC)
        await cluster.restart_broker(controller)
        await cluster.restart_broker(follower)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])


@BOTH
async def test_partition_reassignment_during_delete_topic(mode: str):
    """Mirrors DeleteTopicTest#testPartitionReassignmentDuringDeleteTopic: once the topic is gone
    from the metadata, reassigning its partition is UNKNOWN_TOPIC_OR_PARTITION; the stopped
    follower's replica is deleted when it returns."""
    async with _cluster(mode, brokers=4) as cluster:
        await _create_test_topic_and_cluster(cluster)
        follower = _follower_of_tp0(cluster)
        await _stop(cluster, follower)
        await _delete(cluster)
        async with cluster.admin() as admin:
            with anyio.fail_after(60):
                while True:
                    try:
                        await admin.describe_topics([TOPIC])
                    except UnknownTopicOrPartitionException:
                        break
                    await anyio.sleep(0.1)
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.alter_partition_reassignments({TP0: [1, 2, 3]})
        await cluster.restart_broker(follower)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])


@BOTH
async def test_increase_partition_count_during_delete_topic(mode: str):
    """Mirrors DeleteTopicTest#testIncreasePartitionCountDuringDeleteTopic: CreatePartitions on a
    topic being deleted fails (or is undone); in ZooKeeper mode the controller also moves. Both
    partitions end up deleted everywhere."""
    async with _cluster(mode, brokers=4) as cluster:
        await _create_test_topic_and_cluster(cluster)
        follower = _follower_of_tp0(cluster)
        hosts = [0, 1, 2]
        if mode == "kraft":
            await _stop(cluster, follower)
            await _delete(cluster)
            async with cluster.admin() as admin:
                try:
                    await admin.create_partitions({TOPIC: NewPartitions.increase_to(2)})
                except Exception:   # noqa: BLE001  (Kafka ignores the outcome too)
                    pass
            await cluster.restart_broker(follower)
        else:
            await _stop(cluster, follower)
            live = [b for b in cluster.live_broker_ids()]
            AdminZkClient(cluster.broker(live[0]).zk_client, cluster.broker(live[0]).rng).delete_topic(TOPIC)
            controller_id = cluster.controller_id()
            context = cluster.active_controller().controller_context
            replicas = {(0, b) for b in hosts}

            def tried_everywhere() -> bool:
                states = {(r.partition, r.replica): context.replica_states.get(r).name
                          for r in context.replicas_for_topic(TOPIC) if context.replica_states.get(r) is not None}
                return {k for k, v in states.items() if v in ("ReplicaDeletionSuccessful", "OfflineReplica")} == replicas

            await cluster.wait_until(tried_everywhere, timeout_ms=60000,
                                     message="every replica deleted or offline")
            async with cluster.admin() as admin:
                try:
                    await admin.create_partitions({TOPIC: NewPartitions.increase_to(2)})
                except Exception:   # noqa: BLE001  (Kafka ignores the outcome too)
                    pass
            await _stop(cluster, controller_id)
            await cluster.wait_until(lambda: cluster.controller_id() not in (None, controller_id), timeout_ms=60000,
                                     message="a new controller")
            await cluster.restart_broker(follower)
            await cluster.restart_broker(controller_id)
        await verify_topic_deletion(cluster, TOPIC, 2, hosts)


@BOTH
async def test_delete_topic_during_add_partition(mode: str):
    """Mirrors DeleteTopicTest#testDeleteTopicDuringAddPartition: partitions 1 and 2 are added
    while a follower is down, then the topic is deleted; everything, the new partitions
    included, is gone once the follower returns."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        follower = _follower_of_tp0(cluster)
        new_partition = TopicPartition(TOPIC, 1)
        if mode == "kraft":
            await _stop(cluster, follower)
            async with cluster.admin() as admin:
                await admin.create_partitions({TOPIC: NewPartitions.increase_to(3)})
        else:
            live = [b for b in (0, 1, 2) if b != follower]
            admin_zk = AdminZkClient(cluster.broker(live[0]).zk_client, cluster.broker(live[0]).rng)
            brokers = sorted(admin_zk.get_broker_metadatas())
            await _stop(cluster, follower)
            await cluster.wait_until(lambda: cluster.zookeeper.exists(f"/brokers/ids/{follower}") is None,
                                     message="the follower out of ZooKeeper")
            existing = cluster.broker(live[0]).zk_client.get_full_replica_assignment_for_topics({TOPIC})
            existing = {tp.partition: a for tp, a in existing.items()}
            added = admin_zk.create_new_partitions_assignment(TOPIC, existing, brokers, 3,
                                                              {1: [0, 1, 2], 2: [0, 1, 2]})
            admin_zk.create_partitions_with_assignment(TOPIC, existing, added)
        await _delete(cluster)
        await cluster.restart_broker(follower)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])
        await cluster.wait_until(lambda: all(_hosts_nothing(cluster, b, new_partition) for b in (0, 1, 2)),
                                 message="the new partition's replicas deleted")


@BOTH
async def test_add_partition_during_delete_topic(mode: str):
    """Mirrors DeleteTopicTest#testAddPartitionDuringDeleteTopic: partitions added right after the
    deletion started never outlive it."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        new_partition = TopicPartition(TOPIC, 1)
        if mode == "kraft":
            await _delete(cluster)
            async with cluster.admin() as admin:
                try:
                    await admin.create_partitions({TOPIC: NewPartitions.increase_to(3)})
                except UnknownTopicOrPartitionException:
                    pass    # the topic is already gone from the metadata
        else:
            admin_zk = AdminZkClient(cluster.broker(0).zk_client, cluster.broker(0).rng)
            brokers = sorted(admin_zk.get_broker_metadatas())
            existing = {tp.partition: a for tp, a in
                        cluster.broker(0).zk_client.get_full_replica_assignment_for_topics({TOPIC}).items()}
            await _delete(cluster)
            if cluster.broker(0).zk_client.topic_exists(TOPIC):
                added = admin_zk.create_new_partitions_assignment(TOPIC, existing, brokers, 3,
                                                                  {1: [0, 1, 2], 2: [0, 1, 2]})
                admin_zk.create_partitions_with_assignment(TOPIC, existing, added)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])
        await cluster.wait_until(lambda: all(_hosts_nothing(cluster, b, new_partition) for b in (0, 1, 2)),
                                 message="no replica of the added partition left")


@BOTH
async def test_recreate_topic_after_deletion(mode: str):
    """Mirrors DeleteTopicTest#testRecreateTopicAfterDeletion."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        await _delete(cluster)
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])
        async with cluster.admin() as admin:
            await admin.create_topics([NewTopic(TOPIC, replica_assignment=ASSIGNMENT)])
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(TP0) is not None for b in (0, 1, 2)),
                                 message="replicas of the re-created topic")


@BOTH
async def test_delete_non_existing_topic(mode: str):
    """Mirrors DeleteTopicTest#testDeleteNonExistingTopic: UNKNOWN_TOPIC_OR_PARTITION, and the
    topic that exists is untouched and keeps a leader."""
    async with _cluster(mode) as cluster:
        await _create_test_topic_and_cluster(cluster)
        async with cluster.admin() as admin:
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.delete_topics(["test2"])
        await verify_topic_deletion(cluster, "test2", 1, [0, 1, 2])
        assert all(cluster.broker(b).log_manager.get_log(TP0) is not None for b in (0, 1, 2))
        if mode == "zk":
            assert cluster.zookeeper.exists(f"/brokers/topics/{TOPIC}") is not None
        assert cluster.leader_for(TOPIC, 0) in (0, 1, 2)


async def test_delete_topic_already_marked_as_deleted():
    """Mirrors DeleteTopicTest#testDeleteTopicAlreadyMarkedAsDeleted (ZooKeeper): deleting it
    again answers UNKNOWN_TOPIC_OR_PARTITION (marked for deletion, or already gone)."""
    async with _cluster("zk") as cluster:
        await _create_test_topic_and_cluster(cluster)
        await _delete(cluster)
        async with cluster.admin() as admin:
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.delete_topics([TOPIC])
        await verify_topic_deletion(cluster, TOPIC, 1, [0, 1, 2])


async def test_deleting_partially_deleted_topic():
    """Mirrors DeleteTopicTest#testDeletingPartiallyDeletedTopic (ZooKeeper): a controller that
    died after removing one partition's znode left the topic half deleted; with every broker
    stopped, that znode is removed and the topic marked; after the restart the new controller
    finishes the deletion of both partitions."""
    async with _cluster("zk", brokers=4) as cluster:
        await _create_test_topic_and_cluster(cluster, {0: [0, 1, 2], 1: [0, 1, 2]})
        for b in range(4):
            cluster.shutdown_broker_uncontrolled(b)
        zk = cluster.zookeeper
        await cluster.wait_until(lambda: not zk.get_children("/brokers/ids"), message="every broker gone")
        for path in (f"/brokers/topics/{TOPIC}/partitions/0/state", f"/brokers/topics/{TOPIC}/partitions/0"):
            if zk.exists(path) is not None:
                zk.delete(path)
        zk.create(f"/admin/delete_topics/{TOPIC}", b"")
        for b in range(4):
            await cluster.restart_broker(b)
        await cluster.wait_until(lambda: cluster.controller_id() is not None, message="a controller")
        await verify_topic_deletion(cluster, TOPIC, 2, [0, 1, 2, 3])
