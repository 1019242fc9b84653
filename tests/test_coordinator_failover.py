"""Seed 000's __consumer_offsets leader change end to end in a ZooKeeper-mode cluster, and its demo.

A group of three consumers commits offsets; the broker leading the group's offsets partition
is killed (one consumer dies with it); the new leader loads the group and its offsets from the
log up to the HW (loading → owned), the surviving consumers rebalance onto it and resume from
the committed offsets: nothing before the last commit is consumed twice, nothing is skipped.
Mirrors the coordinator-migration parts of kafka.api.ConsumerBounceTest
(testConsumptionWithBrokerFailures / testCoordinatorFailover) and GroupCoordinatorTest's load
expectations.
"""

from __future__ import annotations

import json

import anyio
import pytest
import structlog

from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.demos.coordinator_failover import (
    PARTITIONS,
    RECORDS_PER_PARTITION,
    TOPIC,
    run_coordinator_failover,
)
from kafka_ref.demos.demo import run_demo

pytestmark = pytest.mark.anyio

ALL = [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]


@pytest.mark.kafka_ref_schedules(20, only={"metadata_mode": "zk"})
@pytest.mark.parametrize("metadata_mode", ["zk", "kraft"])
async def test_coordinator_failover_resumes_from_committed_offsets(metadata_mode):
    state_change_logger()           # structlog configured before capture_logs takes it over
    with structlog.testing.capture_logs() as logs:
        report = await run_coordinator_failover(seed=7, metadata_mode=metadata_mode)
    otp = f"__consumer_offsets-{report.offsets_partition}"
    assert report.new_coordinator not in (-1, report.old_coordinator)
    assert report.coordinator_epoch == 1                   # leader epoch 0 → 1 at the failover

    # The new leader loaded the partition: loading → loaded → owned, with the leader epoch as coordinator epoch.
    events = [(e["event"], e.get("coordinator_epoch")) for e in logs
              if e.get("broker_id") == report.new_coordinator and e.get("topic_partition") == otp
              and e["event"] in ("offsets_partition_loading", "offsets_partition_loaded", "offsets_partition_owned")]
    assert events == [("offsets_partition_loading", 1), ("offsets_partition_loaded", 1), ("offsets_partition_owned", 1)]
    loaded = next(e for e in logs if e["event"] == "offsets_partition_loaded" and e.get("broker_id") == report.new_coordinator
                  and e["topic_partition"] == otp)
    assert (loaded["groups"], loaded["offsets"]) == (1, PARTITIONS)

    # ... the group as it was: generation 1, three members, Stable, and exactly the acknowledged commits.
    assert (report.loaded_generation, report.loaded_members, report.loaded_state) == (1, 3, "Stable")
    assert report.loaded_offsets == report.committed_before_kill
    assert sorted(report.loaded_offsets) == ALL

    # The dead consumer's session expired at the new coordinator; the survivors formed generation 2.
    expired = [e for e in logs if e["event"] == "member_session_expired" and e.get("broker_id") == report.new_coordinator]
    assert len(expired) == 1 and expired[0]["member_id"].startswith(report.crashed_consumer + "-")
    assert report.final_generation == 2
    assert sorted(tp for parts in report.final_assignment.values() for tp in parts) == ALL
    assert [len(parts) for parts in report.final_assignment.values()] == [3, 3]

    # None skipped: every record of every partition was consumed.
    consumed = {}
    for _seq, _consumer, _generation, tp, offset in report.consumed:
        consumed.setdefault(tp, set()).add(offset)
    assert consumed == {tp: set(range(RECORDS_PER_PARTITION)) for tp in ALL}

    # No record consumed twice unless it lies at or after its partition's last commit at that time.
    first_seen: set[tuple[TopicPartition, int]] = set()
    for seq, _consumer, _generation, tp, offset in report.consumed:
        if (tp, offset) in first_seen:
            assert offset >= report.committed_at(tp, seq), (tp, offset, report.committed_at(tp, seq))
        first_seen.add((tp, offset))
    # The crashed consumer's uncommitted records are exactly what was consumed twice.
    crashed_uncommitted = [(tp, o) for c, tp, o in report.uncommitted_before_kill if c == report.crashed_consumer]
    assert crashed_uncommitted and report.duplicates() == crashed_uncommitted

    # In generation 2 each partition resumed exactly at its committed offset.
    for tp in ALL:
        final = [(seq, offset) for seq, _c, gen, p, offset in report.consumed if p == tp and gen == 2]
        if final:
            seq, offset = final[0]
            assert offset == report.committed_at(tp, seq)
        else:                                               # fully consumed and committed before generation 2
            assert report.committed_at(tp, 10**9) == RECORDS_PER_PARTITION


def test_demo_coordinator_failover_narrates_the_flow():
    """``kafka-ref demo coordinator-failover``: the scenario's lines and the state-change events it illustrates."""
    lines: list[str] = []
    assert run_demo("coordinator-failover", seed=7, out=lines.append) == 0
    text = "\n".join(lines)
    assert lines[0] == "kafka-ref demo coordinator-failover: three brokers (ZooKeeper mode), a group of three consumers, virtual time"
    for fragment in (
        "== 2. consumers c1, c2, c3 subscribe as group 'orders'",
        "offsets_topic_creation",
        "== 5. kill broker",
        "(the coordinator); consumer c3 dies with it (no LeaveGroup)",
        "offsets_partition_loading",
        "[seed 000 §becoming leader: loadGroupsForPartition → loading]",
        "offsets_partition_owned",
        "group_loaded",
        "loaded group 'orders': generation 1, 3 members, Stable",
        "member_session_expired",
        "group_stabilized             group_id=orders generation_id=2",
        "== 7. 60 distinct records consumed of 60; consumed twice:",
        "(only records after their partition's last commit)",
    ):
        assert fragment in text, fragment
    # The load happens after the kill, and ownership after loading.
    kill = text.index("== 5. kill broker")
    assert kill < text.index("offsets_partition_loading", kill) < text.index("offsets_partition_owned", kill)
    assert lines[-1].startswith("== done at t=")


async def test_find_coordinator_creates_the_offsets_topic_with_replication_capped_by_live_brokers():
    """KafkaApis#getCoordinator: COORDINATOR_NOT_AVAILABLE while __consumer_offsets is created (RF min(3, live brokers))."""
    from kafka_ref.cluster import Cluster
    from kafka_ref.common.errors import Errors
    from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest

    async with Cluster(brokers=1, metadata_mode="zk", config={"offsets.topic.num.partitions": 2}, seed=3) as cluster:
        request = FindCoordinatorRequest(key_type=0, coordinator_keys=("g",))
        first = await cluster.network.send("client", 0, request, 1000, principal="User:ANONYMOUS")
        assert (first.coordinators[0].error_code, first.coordinators[0].node_id) == (Errors.COORDINATOR_NOT_AVAILABLE.code, -1)
        await cluster.wait_until(lambda: all(cluster.leader_for("__consumer_offsets", p) == 0 for p in range(2)))
        for p in range(2):
            assert cluster.partition_state("__consumer_offsets", p)["isr"] == [0]
        answer = await cluster.network.send("client", 0, request, 1000, principal="User:ANONYMOUS")
        assert (answer.coordinators[0].error_code, answer.coordinators[0].node_id) == (0, 0)
        data, _stat = cluster.zookeeper.get_data("/config/topics/__consumer_offsets")
        configs = json.loads(data)["config"]
        assert configs == {"cleanup.policy": "compact", "segment.bytes": "104857600", "compression.type": "producer"}


async def test_group_in_kraft_mode():
    """Both metadata modes: the coordinator's leadership hooks and FindCoordinator's topic creation work in KRaft too."""
    from kafka_ref.cluster import Cluster

    config = {"offsets.topic.num.partitions": 3, "offsets.topic.replication.factor": 3}
    async with Cluster(brokers=3, metadata_mode="kraft", config=config, seed=5) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        async with cluster.producer() as producer:
            for i in range(4):
                await producer.send("t", f"v{i}".encode(), partition=i % 2)
        consumers = [cluster.consumer(client_id=f"k{i}", group_id="kg", session_timeout_ms=10000, heartbeat_interval_ms=1000)
                     for i in (1, 2)]
        for consumer in consumers:
            consumer.subscribe(["t"])
        got: set[tuple[int, int]] = set()
        with anyio.fail_after(60):
            while len(got) < 4 or any(c.coordinator.rejoin_needed for c in consumers):
                for consumer in consumers:
                    got |= {(r.partition, r.offset) for r in await consumer.poll(200)}
        for consumer in consumers:
            await consumer.commit_sync()
        assert sorted(len(c.assignment()) for c in consumers) == [1, 1]
        committed = await consumers[0].committed([TopicPartition("t", 0), TopicPartition("t", 1)])
        assert {tp: o.offset for tp, o in committed.items()} == {TopicPartition("t", 0): 2, TopicPartition("t", 1): 2}
