"""Topic deletion on the ZooKeeper-mode controller (TopicDeletionManager; seed 001 §5.3.3 replica
deletion states, seed 002 StopReplica), mirroring kafka.admin.DeleteTopicTest."""

from __future__ import annotations

import logging

import pytest
from structlog.testing import capture_logs

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import TopicDeletionDisabledException, UnknownTopicOrPartitionException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.state_change import configure_logging
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

ZK_TIMEOUT_MS = 18000


@pytest.fixture
def debug_state_changes():
    """Replica transitions are logged at debug level (Kafka's trace); capture them for the test."""
    configure_logging(logging.DEBUG)
    with capture_logs() as logs:
        yield logs
    configure_logging()


async def produce(cluster: Cluster, topic: str, partition: int, values: list[bytes]):
    tp = TopicPartition(topic, partition)
    request = ProduceRequest.build(acks=-1, timeout_ms=30000,
                                   records={tp: MemoryRecords.with_records([SimpleRecord(None, v) for v in values])})
    response = await cluster.network.send("client", cluster.leader_for(topic, partition), request, 31000,
                                          principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


def zk_paths(cluster: Cluster, topic: str) -> dict[str, bool]:
    zk = cluster.zookeeper
    return {path: zk.exists(path) is not None
            for path in (f"/brokers/topics/{topic}", f"/config/topics/{topic}", f"/admin/delete_topics/{topic}")}


def hosts_anything(cluster: Cluster, broker_id: int, tp: TopicPartition) -> bool:
    broker = cluster.broker(broker_id)
    return (broker.replica_manager.get_partition(tp) is not None or broker.log_manager.get_log(tp) is not None
            or broker.disk.get_local_log(tp) is not None)


def replica_transitions(logs: list[dict], topic: str) -> dict[tuple[int, int], list[str]]:
    out: dict[tuple[int, int], list[str]] = {}
    for e in logs:
        if e["event"] == "replica_state_changed" and e["topic_partition"].startswith(f"{topic}-"):
            key = (int(e["topic_partition"].rsplit("-", 1)[1]), e["replica"])
            out.setdefault(key, []).append(f"{e['from_state']}->{e['to_state']}")
    return out


DELETION_PATH = ["OnlineReplica->OfflineReplica", "OfflineReplica->ReplicaDeletionStarted",
                 "ReplicaDeletionStarted->ReplicaDeletionSuccessful", "ReplicaDeletionSuccessful->NonExistentReplica"]


async def test_delete_topic_with_all_alive_replicas_then_recreate(debug_state_changes):
    """Every replica walks Online → Offline → DeletionStarted → DeletionSuccessful → NonExistent,
    every broker's log is gone, ZooKeeper has no trace, and a topic re-created under the same
    name starts empty with a new topic id (DeleteTopicTest#testDeleteTopicWithAllAliveReplicas,
    #testRecreateTopicAfterDeletion)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=11) as cluster:
        await cluster.create_topic("t", partitions=3, replication_factor=3)
        old_id = cluster.active_controller().controller_context.topic_ids["t"]
        for p in range(3):
            r = await produce(cluster, "t", p, [b"a", b"b", b"c"])
            assert (r.error_code, r.base_offset) == (0, 0)
        tps = [TopicPartition("t", p) for p in range(3)]
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(tp).log_end_offset == 3
                                             for b in range(3) for tp in tps))
        debug_state_changes.clear()

        await cluster.delete_topic("t")
        await cluster.wait_until(lambda: not any(zk_paths(cluster, "t").values()), message="topic gone from ZooKeeper")
        await cluster.wait_until(lambda: not any(hosts_anything(cluster, b, tp) for b in range(3) for tp in tps))

        transitions = replica_transitions(debug_state_changes, "t")
        assert transitions == {(p, b): DELETION_PATH for p in range(3) for b in range(3)}
        controller = cluster.active_controller()
        ctx = controller.controller_context
        assert "t" not in ctx.all_topics and "t" not in ctx.topics_to_be_deleted and "t" not in ctx.topic_ids
        assert not ctx.topics_ineligible_for_deletion
        assert all(not cluster.broker(b).metadata_cache.contains_topic("t") for b in range(3))
        # Every StopReplica(delete) carried EpochDuringDelete and came back without error.
        deleted = [e for e in debug_state_changes if e["event"] == "replica_deletion_successful"]
        assert sorted(r for e in deleted for r in e["replicas"]) == sorted(f"t-{p}@{b}" for p in range(3) for b in range(3))

        await cluster.create_topic("t", partitions=3, replication_factor=3)
        new_id = cluster.active_controller().controller_context.topic_ids["t"]
        assert new_id != old_id
        for b in range(3):
            for tp in tps:
                log = cluster.broker(b).replica_manager.online_partition(tp).log
                assert (log.log_start_offset, log.log_end_offset) == (0, 0)
                assert log.topic_id == new_id
        r = await produce(cluster, "t", 0, [b"fresh"])
        assert (r.error_code, r.base_offset) == (0, 0)


async def test_deletion_halts_with_dead_broker_and_resumes_when_it_returns(debug_state_changes):
    """A replica on a dead broker goes to ReplicaDeletionIneligible and halts the topic; the
    markers stay in ZooKeeper. Once the live replicas are deleted, resumeDeletions puts the
    ineligible ones back to OfflineReplica for a retry (Kafka does this even while the topic is
    halted). When the broker returns its replicas go online, the deletion resumes, and its log
    is deleted too (DeleteTopicTest#testResumeDeleteTopicWithRecoveredFollower)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=12) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        for p in range(2):
            assert (await produce(cluster, "t", p, [b"x"])).error_code == 0
        tps = [TopicPartition("t", p) for p in range(2)]
        victim = next(b for b in range(3) if b != cluster.controller_id())
        await cluster.wait_until(lambda: all(cluster.broker(victim).log_manager.get_log(tp).log_end_offset == 1 for tp in tps))
        cluster.kill_broker(victim)
        controller = cluster.active_controller()
        ctx = controller.controller_context
        await cluster.wait_until(lambda: victim not in ctx.live_or_shutting_down_broker_ids, timeout_ms=ZK_TIMEOUT_MS * 2)
        debug_state_changes.clear()

        await cluster.delete_topic("t")  # answered once the controller's broker forgot the topic
        live = [b for b in range(3) if b != victim]
        await cluster.wait_until(lambda: not any(hosts_anything(cluster, b, tp) for b in live for tp in tps))
        await cluster.wait_until(lambda: all(ctx.replica_states.get(r) is not None and ctx.replica_states[r].name
                                             == "ReplicaDeletionSuccessful" for r in ctx.replicas_for_topic("t")
                                             if r.replica != victim))
        assert zk_paths(cluster, "t") == {"/brokers/topics/t": True, "/config/topics/t": True,
                                         "/admin/delete_topics/t": True}
        assert ctx.topics_to_be_deleted == {"t"} and ctx.topics_ineligible_for_deletion == {"t"}
        states = {(r.partition, r.replica): ctx.replica_states[r].name for r in ctx.replicas_for_topic("t")}
        assert states == {(p, b): ("OfflineReplica" if b == victim else "ReplicaDeletionSuccessful")
                          for p in range(2) for b in range(3)}
        assert cluster.disks[victim].get_local_log(tps[0]) is not None  # its data is still on its disk

        await cluster.restart_broker(victim)
        await cluster.wait_until(lambda: not any(zk_paths(cluster, "t").values()), timeout_ms=30000,
                                 message="deletion completed after the broker returned")
        await cluster.wait_until(lambda: not any(hosts_anything(cluster, victim, tp) for tp in tps))
        transitions = replica_transitions(debug_state_changes, "t")
        for p in range(2):
            assert transitions[(p, victim)] == ["OfflineReplica->ReplicaDeletionIneligible",
                                                "ReplicaDeletionIneligible->OfflineReplica",
                                                "OfflineReplica->OnlineReplica",
                                                *DELETION_PATH]
            for b in live:
                assert transitions[(p, b)] == DELETION_PATH
        assert not ctx.topics_to_be_deleted and not ctx.topics_ineligible_for_deletion


async def test_delete_topic_disabled():
    """delete.topic.enable=false: DeleteTopics answers TOPIC_DELETION_DISABLED, and a marker
    written straight to ZooKeeper is removed by the controller without touching the topic
    (DeleteTopicTest#testDisableDeleteTopic)."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"delete.topic.enable": False}, seed=13) as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        with pytest.raises(TopicDeletionDisabledException):
            await cluster.delete_topic("t")
        cluster.zookeeper.create("/admin/delete_topics/t", b"")
        await cluster.wait_until(lambda: cluster.zookeeper.exists("/admin/delete_topics/t") is None,
                                 message="marker removed by the controller")
        assert cluster.zookeeper.exists("/brokers/topics/t") is not None
        assert (await produce(cluster, "t", 0, [b"still here"])).error_code == 0


async def test_delete_unknown_topic():
    """Deleting a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION (DeleteTopicTest#testDeleteNonExistingTopic)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=14) as cluster:
        with pytest.raises(UnknownTopicOrPartitionException):
            await cluster.delete_topic("nope")


def _index(lines: list[str], needle: str, start: int = 0) -> int:
    return next(i for i, line in enumerate(lines) if i >= start and needle in line)


def test_demo_deletion():
    """``kafka-ref demo deletion`` narrates the deletion in Kafka's order: queued, started
    (partitions Offline → NonExistent), the dead broker's replicas ineligible and the topic
    halted, live replicas deleted, resumed when the broker returns, completed."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("deletion", out=lines.append) == 0
    order = ["topic_deletion_requested", "topic_deletion_enqueued", "topic_deletion_started",
             "to_state=ReplicaDeletionIneligible", "to_state=ReplicaDeletionStarted", "topic_deletion_halted",
             "replica_deletion_successful", "ZooKeeper still has /brokers/topics/t: True; ineligible topics: ['t']",
             "topic_deletion_resumed", "topic_deletion_completed", "logs of t-0 on disk: b0: -, b1: -, b2: -",
             "t-0 log end offset 0"]
    position = 0
    for needle in order:
        position = _index(lines, needle, position)


async def test_new_controller_resumes_deletion_marked_during_failover():
    """A deletion marker written while the controller is dead is picked up by the next
    controller at failover (fetchTopicDeletionsInProgress → TopicDeletionManager#init →
    tryTopicDeletion) and completed."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=15) as cluster:
        old_controller = cluster.controller_id()
        others = [b for b in range(3) if b != old_controller]
        await cluster.create_topic("t", replica_assignment={0: others})
        tp = TopicPartition("t", 0)
        await cluster.wait_until(lambda: all(cluster.broker(b).metadata_cache.contains(tp) for b in others))
        assert (await produce(cluster, "t", 0, [b"x"])).error_code == 0
        cluster.kill_broker(old_controller)
        cluster.zookeeper.create("/admin/delete_topics/t", b"")  # as the ZooKeeper-era tool did
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, old_controller), timeout_ms=40000)
        await cluster.wait_until(lambda: not any(zk_paths(cluster, "t").values()), message="deletion completed")
        await cluster.wait_until(lambda: not any(hosts_anything(cluster, b, tp) for b in others))
