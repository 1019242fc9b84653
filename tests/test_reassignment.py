"""Partition reassignment on the ZooKeeper-mode controller (KafkaController#onPartitionReassignment,
KIP-455 RS/AR/RR phases; seed 001 §5.4.3), mirroring kafka.admin.ReassignPartitionsIntegrationTest
and kafka.controller.ControllerIntegrationTest's reassignment tests."""

from __future__ import annotations

import logging

import anyio
import pytest
from structlog.testing import capture_logs

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.state_change import configure_logging
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

pytestmark = pytest.mark.anyio

TP = TopicPartition("t", 0)
RETRIABLE = {Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.NOT_ENOUGH_REPLICAS.code,
             Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code, Errors.REQUEST_TIMED_OUT.code,
             Errors.UNKNOWN_TOPIC_OR_PARTITION.code, Errors.LEADER_NOT_AVAILABLE.code}
# Auto-rebalance would elect the new preferred replica (RS[0]) mid-move and add an epoch.
CONFIG = {"min.insync.replicas": 2, "auto.leader.rebalance.enable": False}


@pytest.fixture
def debug_state_changes():
    configure_logging(logging.DEBUG)
    with capture_logs() as logs:
        yield logs
    configure_logging()


class SteadyProducer:
    """acks=all raw ProduceRequests to the current leader every 5 ms, retrying retriable errors."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.acked: list[tuple[int, bytes]] = []
        self.errors: list[int] = []
        self.stopped = False

    async def run(self) -> None:
        n = 0
        while not self.stopped:
            value = f"v{n}".encode()
            n += 1
            while not self.stopped:
                leader = self.cluster.leader_for("t", 0)
                request = ProduceRequest.build(acks=-1, timeout_ms=30000,
                                               records={TP: MemoryRecords.with_records([SimpleRecord(None, value)])})
                try:
                    response = await self.cluster.network.send("producer", leader, request, 31000,
                                                               principal="User:ANONYMOUS")
                except (DisconnectException, NetworkTimeoutException):
                    await anyio.sleep(0.01)
                    continue
                r = response.responses[0].partition_responses[0]
                if r.error_code == 0:
                    self.acked.append((r.base_offset, value))
                    break
                self.errors.append(r.error_code)
                await anyio.sleep(0.01)
            await anyio.sleep(0.005)


def record_leader_and_isr_writes(controller) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every leader/ISR znode write of partition t-0 by the controller: (leader, leader epoch, ISR)."""
    writes: list[tuple[int, int, tuple[int, ...]]] = []
    zk = controller.zk_client
    original = zk.update_leader_and_isr

    def recording(leader_and_isrs, controller_epoch, epoch_zk_version):
        result = original(leader_and_isrs, controller_epoch, epoch_zk_version)
        outcome = result.finished_partitions.get(TP)
        if outcome is not None and not isinstance(outcome, Exception):
            writes.append((outcome.leader, outcome.leader_epoch, tuple(outcome.isr)))
        return result

    zk.update_leader_and_isr = recording
    return writes


def replica_transitions(logs: list[dict]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for e in logs:
        if e["event"] == "replica_state_changed" and e["topic_partition"] == "t-0":
            out.setdefault(e["replica"], []).append(f"{e['from_state']}->{e['to_state']}")
    return out


def log_values(cluster: Cluster, broker_id: int) -> dict[int, bytes]:
    log = cluster.broker(broker_id).replica_manager.online_partition(TP).log
    return {r.offset: r.value for r in log.read(log.log_start_offset, 1 << 30).records.records()}


async def test_reassign_0_1_2_to_3_4_5_under_acks_all_load(debug_state_changes):
    """[0,1,2] → [3,4,5] through /admin/reassign_partitions while a producer writes with
    acks=all: the leader epoch goes 0 → 1 (A1) → 2 (B3, leader 3 elected from TRS) → 3, 4, 5
    (B4: each old replica leaves the ISR); new replicas go NonExistent → New → Online, old ones
    Online → Offline → DeletionStarted → DeletionSuccessful → NonExistent and their logs are
    deleted; every acknowledged record is in the final log at its offset
    (ReassignPartitionsIntegrationTest#testReassignment, ControllerIntegrationTest#testPartitionReassignment)."""
    config = {**CONFIG, "replica.socket.timeout.ms": 500}
    async with Cluster(brokers=6, metadata_mode="zk", config=config, seed=21) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        controller = cluster.active_controller()
        writes = record_leader_and_isr_writes(controller)
        producer = SteadyProducer(cluster)
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer.run)
            await cluster.wait_until(lambda: len(producer.acked) >= 20)
            debug_state_changes.clear()
            # Each new replica loses its first fetch (a 500 ms timeout): the move spans many writes.
            for b in (3, 4, 5):
                cluster.network.drop_next(b, 0)
            acked_at_start = len(producer.acked)
            assert await cluster.reassign_partitions({TP: [3, 4, 5]}) == {}
            await cluster.wait_until(lambda: cluster.topic_assignment("t")[0]["replicas"] == [3, 4, 5], timeout_ms=30000,
                                     message="reassignment completed")
            acked_at_completion = len(producer.acked)
            assert acked_at_completion - acked_at_start > 100
            await cluster.wait_until(lambda: len(producer.acked) >= acked_at_completion + 20)
            producer.stopped = True

        # The leader/ISR history: epochs bumped exactly where Kafka bumps them.
        assert writes[0] == (0, 1, (0, 1, 2))
        expansions = [w for w in writes if w[1] == 1][1:]
        assert expansions and all(w[0] == 0 for w in expansions)
        full_isr = expansions[-1][2]
        assert set(full_isr) == {0, 1, 2, 3, 4, 5}
        assert writes[len(expansions) + 1:] == [
            (3, 2, full_isr),
            (3, 3, tuple(r for r in full_isr if r != 0)),
            (3, 4, tuple(r for r in full_isr if r not in (0, 1))),
            (3, 5, tuple(r for r in full_isr if r not in (0, 1, 2))),
        ]
        assert cluster.partition_state("t", 0)["leader"] == 3 and cluster.partition_state("t", 0)["leader_epoch"] == 5
        # Replica states.
        transitions = replica_transitions(debug_state_changes)
        for b in (0, 1, 2):
            assert transitions[b] == ["OnlineReplica->OfflineReplica", "OfflineReplica->ReplicaDeletionStarted",
                                      "ReplicaDeletionStarted->ReplicaDeletionSuccessful",
                                      "ReplicaDeletionSuccessful->NonExistentReplica"]
        for b in (3, 4, 5):
            assert transitions[b] == ["NonExistentReplica->NewReplica", "NewReplica->OnlineReplica"]
        # ZooKeeper and the controller are clean.
        assert cluster.topic_assignment("t") == {0: {"replicas": [3, 4, 5], "adding_replicas": [], "removing_replicas": []}}
        assert cluster.zookeeper.exists("/admin/reassign_partitions") is None
        assert not controller.controller_context.partitions_being_reassigned
        # Old replicas deleted, new ones in sync.
        await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(TP) is None
                                             and cluster.broker(b).replica_manager.get_partition(TP) is None for b in (0, 1, 2)))
        await cluster.wait_until(lambda: len({cluster.broker(b).replica_manager.online_partition(TP).log.log_end_offset
                                              for b in (3, 4, 5)}) == 1)
        # No acknowledged record lost, each at the offset it was acknowledged with.
        final = log_values(cluster, 3)
        assert all(final[offset] == value for offset, value in producer.acked)
        assert set(producer.errors) <= RETRIABLE


@pytest.mark.kafka_ref_schedules(20)
async def test_cancel_reassignment_mid_way_restores_original_assignment(debug_state_changes):
    """A move that cannot finish (one new replica cannot reach the leader) is cancelled with
    AlterPartitionReassignments(replicas=None): RS goes back to ORS, the adding replicas are
    stopped and deleted, and the leader epoch is bumped once more for the original replica set
    (ReassignPartitionsIntegrationTest#testCancellation)."""
    async with Cluster(brokers=6, metadata_mode="zk", config=CONFIG, seed=22) as cluster:
        controller_id = cluster.controller_id()
        others = [b for b in range(6) if b != controller_id]
        origin = others[:3]
        target = [b for b in range(6) if b not in origin]
        leader = origin[0]
        blocked = next(b for b in target if b != controller_id)
        await cluster.create_topic("t", replica_assignment={0: origin})
        controller = cluster.active_controller()
        writes = record_leader_and_isr_writes(controller)
        cluster.network.cut_link(blocked, leader)  # the blocked replica cannot fetch: TRS never in the ISR
        debug_state_changes.clear()
        assert await cluster.reassign_partitions({TP: target}, via="api") == {TP: Errors.NONE.code}
        await cluster.wait_until(lambda: set(cluster.partition_state("t", 0)["isr"]) == set(origin) | (set(target) - {blocked}),
                                 message="the reachable new replicas joined the ISR")
        assert cluster.topic_assignment("t")[0] == {"replicas": target + origin, "adding_replicas": target,
                                                    "removing_replicas": origin}
        assert TP in controller.controller_context.partitions_being_reassigned

        assert await cluster.cancel_partition_reassignments([TP]) == {TP: Errors.NONE.code}
        cluster.network.heal_link(blocked, leader)
        assert cluster.topic_assignment("t")[0] == {"replicas": origin, "adding_replicas": [], "removing_replicas": []}
        assert not controller.controller_context.partitions_being_reassigned
        await cluster.wait_until(lambda: all(cluster.broker(b).replica_manager.get_partition(TP) is None
                                             and cluster.broker(b).log_manager.get_log(TP) is None for b in target))
        state = cluster.partition_state("t", 0)
        assert state["leader"] == leader
        # A1 at epoch 1, ISR expansions at epoch 1, the cancelled adding replicas leave the ISR
        # (one epoch each for those in it), then B3 bumps the epoch for RS = ORS.
        assert writes[0] == (leader, 1, tuple(origin))
        joined = [b for b in target if b != blocked]
        assert [w[1] for w in writes if w[1] > 1] == [2, 3, 4]
        assert writes[-1] == (leader, 4, tuple(origin)) and state["leader_epoch"] == 4
        assert sorted(state["isr"]) == sorted(origin)
        transitions = replica_transitions(debug_state_changes)
        for b in target:
            assert transitions[b] == ["NonExistentReplica->NewReplica", "NewReplica->OfflineReplica",
                                      "OfflineReplica->ReplicaDeletionStarted",
                                      "ReplicaDeletionStarted->ReplicaDeletionSuccessful",
                                      "ReplicaDeletionSuccessful->NonExistentReplica"]
        assert len(joined) == 2


async def test_reassignment_api_validation():
    """AlterPartitionReassignments refuses bad targets per partition: empty, duplicate, negative
    or dead brokers (INVALID_REPLICA_ASSIGNMENT), unknown partitions (UNKNOWN_TOPIC_OR_PARTITION),
    and a cancellation with nothing in progress (NO_REASSIGNMENT_IN_PROGRESS)
    (KafkaController#validateReplicas, #maybeBuildReassignment)."""
    async with Cluster(brokers=4, metadata_mode="zk", config=CONFIG, seed=23) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=2)
        victim = next(b for b in range(4) if b != cluster.controller_id())
        cluster.kill_broker(victim)
        ctx = cluster.active_controller().controller_context
        await cluster.wait_until(lambda: victim not in ctx.live_or_shutting_down_broker_ids, timeout_ms=40000)
        t1 = TopicPartition("t", 1)
        result = await cluster.reassign_partitions({TP: [], t1: [0, 0]}, via="api")
        assert result == {TP: Errors.INVALID_REPLICA_ASSIGNMENT.code, t1: Errors.INVALID_REPLICA_ASSIGNMENT.code}
        live = [b for b in range(4) if b != victim]
        result = await cluster.reassign_partitions({TP: [-1, live[0]], t1: [victim, live[0]],
                                                    TopicPartition("nope", 0): live[:2]}, via="api")
        assert result == {TP: Errors.INVALID_REPLICA_ASSIGNMENT.code, t1: Errors.INVALID_REPLICA_ASSIGNMENT.code,
                          TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        assert await cluster.cancel_partition_reassignments([TP]) == {TP: Errors.NO_REASSIGNMENT_IN_PROGRESS.code}


def test_demo_reassignment():
    """``kafka-ref demo reassignment`` narrates U, A and B in order and ends with RS = TRS, leader 3
    at leader epoch 5 and the old replicas' logs gone."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("reassignment", out=lines.append) == 0
    order = ["reassignment_requested_in_zk", "reassignment_assignment_updated", "reassignment_phase_a",
             "reassignment_leader_epoch_bumped", "to_state=NewReplica", "reassignment_targets_in_isr",
             "reassignment_phase_b", "reassignment_leader_not_in_target", "to_state=OfflineReplica",
             "to_state=ReplicaDeletionStarted", "to_state=NonExistentReplica", "reassignment_completed",
             "topic znode: {0: {'replicas': [3, 4, 5], 'adding_replicas': [], 'removing_replicas': []}}; "
             "p0: leader=3 epoch=5 isr=[3, 4, 5]",
             "logs of t-0 on disk: b0: -, b1: -, b2: -, b3: log, b4: log, b5: log"]
    position = 0
    for needle in order:
        position = next(i for i, line in enumerate(lines) if i >= position and needle in line)


async def test_new_controller_and_returning_broker_resume_reassignment():
    """A move waits in phase A because one target broker is dead. The controller dies too; the
    next controller finds RS/AR/RR in the topic znode and the request in
    /admin/reassign_partitions and resumes the move (A1: leader epoch 2). When the dead target
    broker returns, onBrokerStartup resumes it again (epoch 3); the broker catches up and the
    move completes: B3 elects 3 (epoch 4), B4 retires 1 and 2 (epochs 5, 6)
    (ControllerIntegrationTest#testPartitionReassignmentResumesAfterReplicaComesOnline, with a failover)."""
    async with Cluster(brokers=6, metadata_mode="zk", config=CONFIG, seed=24) as cluster:
        old_controller = cluster.controller_id()
        origin, target, dead = [1, 2, 3], [3, 4, 5], 5
        assert old_controller not in origin + target
        await cluster.create_topic("t", replica_assignment={0: origin})
        cluster.kill_broker(dead)
        ctx = cluster.active_controller().controller_context
        await cluster.wait_until(lambda: dead not in ctx.live_or_shutting_down_broker_ids, timeout_ms=40000)
        await cluster.reassign_partitions({TP: target})  # the ZooKeeper path does not check liveness
        await cluster.wait_until(lambda: sorted(cluster.partition_state("t", 0)["isr"]) == [1, 2, 3, 4])
        assert cluster.partition_state("t", 0)["leader_epoch"] == 1
        cluster.kill_broker(old_controller)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, old_controller), timeout_ms=40000)
        new_controller = cluster.active_controller()
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["leader_epoch"] == 2,
                                 message="the new controller resumed the move (A1 again)")
        assert TP in new_controller.controller_context.partitions_being_reassigned
        assert cluster.topic_assignment("t")[0] == {"replicas": [3, 4, 5, 1, 2], "adding_replicas": [4, 5],
                                                    "removing_replicas": [1, 2]}
        await cluster.restart_broker(dead)
        await cluster.wait_until(lambda: cluster.topic_assignment("t")[0]["replicas"] == target, timeout_ms=30000)
        assert cluster.topic_assignment("t")[0] == {"replicas": target, "adding_replicas": [], "removing_replicas": []}
        assert cluster.zookeeper.exists("/admin/reassign_partitions") is None
        state = cluster.partition_state("t", 0)
        assert (state["leader"], state["leader_epoch"], state["isr"]) == (3, 6, [3, 4, 5])
