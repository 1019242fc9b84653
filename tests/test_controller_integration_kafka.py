"""Ports of kafka.controller.ControllerIntegrationTest (Kafka 3.8.0) to the in-process ZooKeeper-mode cluster.

Kafka's test starts real brokers against a real ZooKeeper and drives the controller through
ZooKeeper writes (AdminZkClient, KafkaZkClient) and through events put on the controller's
queue. Here a ``Cluster(metadata_mode="zk")`` plays the brokers and a KafkaZkClient of the
test's own (``zk``, Kafka's ``zkClient`` of QuorumTestHarness) writes and reads the znodes.
Kafka's ``servers(i).shutdown()`` is a controlled shutdown followed by the clean stop, which is
``Cluster.shutdown_broker``; ``startup()`` again is ``Cluster.restart_broker``. Where Kafka
blocks the controller's event thread on a latch inside a MockEvent, the MockEvent here returns
an awaitable the event thread waits for.

Covered elsewhere under other names (not repeated here):
- testTopicCreation: tests/test_zk_cluster.py::test_controller_elected_and_topic_created.
- testControllerMoveIncrementsControllerEpoch: tests/examples/test_controller_examples.py.
- testPartitionReassignment: tests/test_reassignment.py (RS/AR/RR and every epoch of the move)
  and tests/examples/test_controller_examples.py.
- testPartitionReassignmentResumesAfterReplicaComesOnline: tests/test_reassignment.py
  (test_new_controller_and_returning_broker_resume_reassignment, with a failover added).
- testPreferredReplicaLeaderElection: the first half of testBackToBackPreferredReplicaLeaderElections
  below, and tests/test_preferred_election.py.
- testAutoPreferredReplicaLeaderElection: tests/test_preferred_election.py
  (test_auto_leader_rebalance_at_next_check).
- testAlterPartitionErrors: tests/test_controller_alter_partition.py.

Not ported:
- testMetadataPropagationOnControlPlane: a separate control-plane listener and its network
  metrics are not modelled (one in-process network, no per-listener metrics).
- testPartitionReassignmentToBrokerWithOfflineLogDir: needs JBOD log directories (one Disk per broker).
- testControllerFeatureZNodeSetup* (six tests): the /feature znode (KIP-584 feature versioning) is not modelled.
- The metric assertions of the reassignment tests (ControllerStats timers are not modelled).
"""

from __future__ import annotations

import logging
import random
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable

import anyio
import pytest
from structlog.testing import capture_logs

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.state_change import configure_logging
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.controller import controller_events as ev
from kafka_ref.zk.admin_zk_client import AdminZkClient
from kafka_ref.zk.kafka_zk_client import KafkaZkClient
from kafka_ref.zk.zk_data import PreferredReplicaElectionZNode, ReplicaAssignment

pytestmark = pytest.mark.anyio

TP = TopicPartition("t", 0)
# KafkaController.InitialControllerEpoch + 1 and InitialControllerEpochZkVersion + 1.
FIRST_CONTROLLER_EPOCH = 1
FIRST_CONTROLLER_EPOCH_ZK_VERSION = 1
INITIAL_LEADER_EPOCH = 0  # LeaderAndIsr.InitialLeaderEpoch
NO_LEADER = -1  # LeaderAndIsr.NoLeader
OLD_IBP = "2.7-IV0"  # IBP_2_7_IV0: before topic ids
LATEST_IBP = "3.8"
ZK_SESSION_MS = 18000


# ------------------------------------------------------------------------------ harness


def broker_configs(*, auto_leader_rebalance: bool = False, unclean: bool = False, controlled_shutdown: bool = True,
                   ibp: str | None = None) -> dict[str, Any]:
    """Mirrors the test's makeServers: rebalance and unclean election off unless asked, checks every second."""
    config: dict[str, Any] = {
        "auto.leader.rebalance.enable": auto_leader_rebalance,
        "unclean.leader.election.enable": unclean,
        "leader.imbalance.check.interval.seconds": 1,
        "controlled.shutdown.enable": controlled_shutdown,
    }
    if ibp is not None:
        config["inter.broker.protocol.version"] = ibp
    return config


@asynccontextmanager
async def zk_cluster(brokers: int, seed: int, **options: Any) -> AsyncIterator[tuple[Cluster, KafkaZkClient]]:
    """A ZooKeeper-mode cluster and the test's own ZooKeeper client (QuorumTestHarness's zkClient)."""
    async with Cluster(brokers=brokers, metadata_mode="zk", config=broker_configs(**options), seed=seed) as cluster:
        zk = KafkaZkClient(cluster.zookeeper, name="test-harness")
        async with anyio.create_task_group() as tg:
            tg.start_soon(zk.run)
            try:
                yield cluster, zk
            finally:
                tg.cancel_scope.cancel()
                zk.close()


def admin(zk: KafkaZkClient) -> AdminZkClient:
    return AdminZkClient(zk, random.Random(7))


async def create_topic(cluster: Cluster, zk: KafkaZkClient, topic: str, assignment: dict[int, list[int]],
                       brokers: list[int] | None = None) -> None:
    """Mirrors TestUtils.createTopic: write the topic through AdminZkClient, then wait until every
    given broker (default: the live ones) has every partition with a leader in its metadata."""
    admin(zk).create_topic_with_assignment(topic, {}, assignment)
    await wait_for_all_partitions_metadata(cluster, topic, len(assignment), brokers)


async def wait_for_all_partitions_metadata(cluster: Cluster, topic: str, partitions: int,
                                           brokers: list[int] | None = None) -> None:
    """Mirrors TestUtils.waitForAllPartitionsMetadata."""
    def known() -> bool:
        for b in cluster.live_broker_ids() if brokers is None else brokers:
            for p in range(partitions):
                info = cluster.broker(b).metadata_cache.get_partition_info(TopicPartition(topic, p))
                if info is None or info.leader == NO_LEADER:
                    return False
        return True

    await cluster.wait_until(known, message=f"every partition of {topic} in the brokers' metadata")


def partition_state(zk: KafkaZkClient, tp: TopicPartition) -> Any:
    """The partition's LeaderIsrAndControllerEpoch from its state znode (None when absent)."""
    return zk.get_topic_partition_states([tp]).get(tp)


def is_expected_partition_state(state: Any, controller_epoch: int, leader: int, leader_epoch: int) -> bool:
    return (state is not None and state.controller_epoch == controller_epoch
            and state.leader_and_isr.leader == leader and state.leader_and_isr.leader_epoch == leader_epoch)


async def wait_for_partition_state(cluster: Cluster, zk: KafkaZkClient, tp: TopicPartition, controller_epoch: int,
                                   leader: int, leader_epoch: int, message: str, timeout_ms: float = 40000) -> None:
    """Mirrors the test's waitForPartitionState."""
    await cluster.wait_until(lambda: is_expected_partition_state(partition_state(zk, tp), controller_epoch, leader,
                                                                 leader_epoch), timeout_ms, message=message)


async def wait_until_controller_epoch(cluster: Cluster, zk: KafkaZkClient, epoch: int, message: str) -> None:
    """Mirrors the test's waitUntilControllerEpoch."""
    await cluster.wait_until(lambda: (zk.get_controller_epoch() or (None,))[0] == epoch, message=message)


async def wait_until_broker_metadata_is_propagated(cluster: Cluster, brokers: list[int]) -> None:
    """Mirrors TestUtils.waitUntilBrokerMetadataIsPropagated: each broker knows exactly these brokers alive."""
    await cluster.wait_until(lambda: all(set(cluster.broker(b).metadata_cache.alive_brokers) == set(brokers)
                                         for b in brokers), message=f"brokers {brokers} know each other alone")


def other_brokers(cluster: Cluster, *excluded: int) -> list[int]:
    return [b for b in sorted(cluster.brokers) if b not in excluded]


def record_leader_and_isr_writes(controller: Any, tp: TopicPartition) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every leader/ISR write of ``tp`` the controller makes from now on: (leader, leader epoch, ISR)."""
    writes: list[tuple[int, int, tuple[int, ...]]] = []
    original = controller.zk_client.update_leader_and_isr

    def recording(leader_and_isrs: Any, controller_epoch: int, epoch_zk_version: int) -> Any:
        result = original(leader_and_isrs, controller_epoch, epoch_zk_version)
        outcome = result.finished_partitions.get(tp)
        if outcome is not None and not isinstance(outcome, Exception):
            writes.append((outcome.leader, outcome.leader_epoch, tuple(outcome.isr)))
        return result

    controller.zk_client.update_leader_and_isr = recording
    return writes


@pytest.fixture
def controller_logs():
    """Every controller log event of the test (Kafka's LogCaptureAppender at INFO)."""
    configure_logging(logging.DEBUG)
    with capture_logs() as logs:
        yield logs
    configure_logging()


class HoldEvent(ev.MockEvent):
    """A MockEvent that keeps the controller's event thread busy until ``release`` is set (Kafka's latch)."""

    name = "HoldEvent"

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = False

    def process(self, controller: Any = None) -> Any:
        self.started = True
        return self.release.wait()


async def hold_event_thread(cluster: Cluster) -> HoldEvent:
    """Wait until the controller's event thread is idle, then park it on a HoldEvent."""
    controller = cluster.active_controller()
    await cluster.wait_until(lambda: controller.event_manager.state == ev.IDLE
                             and controller.event_manager.receive_stream.statistics().current_buffer_used == 0,
                             message="the controller event thread idle")
    hold = HoldEvent()
    controller.event_manager.put(hold)
    await cluster.wait_until(lambda: hold.started, message="the controller event thread held")
    return hold


# ------------------------------------------------------------------------------ controller election


async def test_empty_cluster():
    """Mirrors ControllerIntegrationTest#testEmptyCluster."""
    async with zk_cluster(1, seed=1) as (cluster, zk):
        await cluster.wait_until(lambda: zk.get_controller_id() is not None, message="a controller")
        await wait_until_controller_epoch(cluster, zk, FIRST_CONTROLLER_EPOCH, "broker failed to set controller epoch")
        epoch, stat = zk.get_controller_epoch()
        assert (zk.get_controller_id(), epoch, stat.version) == (0, FIRST_CONTROLLER_EPOCH, FIRST_CONTROLLER_EPOCH_ZK_VERSION)


async def test_controller_epoch_persists_when_all_brokers_down():
    """Mirrors ControllerIntegrationTest#testControllerEpochPersistsWhenAllBrokersDown."""
    async with zk_cluster(1, seed=2) as (cluster, zk):
        await wait_until_controller_epoch(cluster, zk, FIRST_CONTROLLER_EPOCH, "broker failed to set controller epoch")
        await cluster.shutdown_broker(0)
        await cluster.wait_until(lambda: zk.get_controller_id() is None, message="the controller gone")
        assert zk.get_controller_epoch()[0] == FIRST_CONTROLLER_EPOCH


# ------------------------------------------------------------------------------ metadata propagation


async def test_metadata_propagation_on_broker_change():
    """Mirrors ControllerIntegrationTest#testMetadataPropagationOnBrokerChange: a non-controller
    broker whose loss moves no leadership goes away and comes back; the others list it offline
    for t-0 meanwhile, and afterwards every broker has the full replica lists and no offline replica."""
    async with zk_cluster(3, seed=3) as (cluster, zk):
        await wait_until_broker_metadata_is_propagated(cluster, [0, 1, 2])
        controller_id = cluster.controller_id()
        test_broker = other_brokers(cluster, controller_id)[0]
        remaining = other_brokers(cluster, test_broker)
        assignment = {0: [remaining[0], test_broker], 1: remaining}
        await create_topic(cluster, zk, "topic1", assignment)

        await cluster.shutdown_broker(test_broker)
        await wait_until_broker_metadata_is_propagated(cluster, remaining)
        for b in remaining:
            offline = cluster.broker(b).metadata_cache.get_partition_info(TopicPartition("topic1", 0))
            assert list(offline.offline_replicas) == [test_broker]
            assert list(offline.replicas) == assignment[0]
            assert list(offline.isr) == [remaining[0]]
            online = cluster.broker(b).metadata_cache.get_partition_info(TopicPartition("topic1", 1))
            assert list(online.replicas) == assignment[1]
            assert list(online.offline_replicas) == []

        await cluster.restart_broker(test_broker)

        def consistent() -> bool:
            for b in cluster.live_broker_ids():
                for p, replicas in assignment.items():
                    info = cluster.broker(b).metadata_cache.get_partition_info(TopicPartition("topic1", p))
                    if info is None or list(info.offline_replicas) or list(info.replicas) != replicas:
                        return False
            return True

        await cluster.wait_until(consistent, message="consistent metadata after broker startup")
        assert cluster.live_broker_ids() == [0, 1, 2]


async def test_metadata_propagation_for_offline_replicas():
    """Mirrors ControllerIntegrationTest#testMetadataPropagationForOfflineReplicas: every broker
    stops; the controller's broker and then another one come back while the only replica of t-0
    stays down; each learns t-0 with no leader, its replica offline and its last ISR."""
    async with zk_cluster(3, seed=4) as (cluster, zk):
        await wait_until_broker_metadata_is_propagated(cluster, [0, 1, 2])
        controller_id = cluster.controller_id()
        replica_broker, other_broker = other_brokers(cluster, controller_id)
        await create_topic(cluster, zk, "topic1", {0: [replica_broker]})
        for b in (other_broker, replica_broker, controller_id):
            await cluster.shutdown_broker(b)

        async def verify_metadata(broker_id: int) -> None:
            await cluster.restart_broker(broker_id)

            def offline_known() -> bool:
                info = cluster.broker(broker_id).metadata_cache.get_partition_info(TopicPartition("topic1", 0))
                return (info is not None and list(info.offline_replicas) != [] and info.leader == NO_LEADER
                        and list(info.replicas) != [] and list(info.isr) != [])

            await cluster.wait_until(offline_known, message=f"broker {broker_id} knows topic1-0 offline")
            info = cluster.broker(broker_id).metadata_cache.get_partition_info(TopicPartition("topic1", 0))
            assert (list(info.replicas), list(info.isr), list(info.offline_replicas)) == (
                [replica_broker], [replica_broker], [replica_broker])

        await verify_metadata(controller_id)
        await verify_metadata(other_broker)


async def test_metadata_propagation_on_broker_shutdown_with_no_replicas():
    """Mirrors ControllerIntegrationTest#testMetadataPropagationOnBrokerShutdownWithNoReplicas:
    the broker hosting the only replica stops, then the third broker; the controller, alone,
    knows it is the only live broker."""
    async with zk_cluster(3, seed=5) as (cluster, zk):
        await wait_until_broker_metadata_is_propagated(cluster, [0, 1, 2])
        controller_id = cluster.controller_id()
        replica_broker, other_broker = other_brokers(cluster, controller_id)
        await create_topic(cluster, zk, "topic1", {0: [replica_broker]})
        await cluster.shutdown_broker(replica_broker)
        await cluster.shutdown_broker(other_broker)
        await wait_until_broker_metadata_is_propagated(cluster, [controller_id])
        info = cluster.broker(controller_id).metadata_cache.get_partition_info(TopicPartition("topic1", 0))
        assert (info.leader, list(info.offline_replicas)) == (NO_LEADER, [replica_broker])


# ------------------------------------------------------------------------------ topic creation and expansion


async def test_topic_creation_with_offline_replica():
    """Mirrors ControllerIntegrationTest#testTopicCreationWithOfflineReplica: the first assigned
    replica is down, so the live one leads from the start and is the whole ISR."""
    async with zk_cluster(2, seed=6) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await cluster.shutdown_broker(other)
        await create_topic(cluster, zk, "t", {0: [other, controller_id]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        assert list(partition_state(zk, TP).leader_and_isr.isr) == [controller_id]


async def test_topic_partition_expansion():
    """Mirrors ControllerIntegrationTest#testTopicPartitionExpansion: a partition added to the
    topic znode (fenced by the first controller epoch's zkVersion) gets its leader and reaches
    the broker's metadata."""
    async with zk_cluster(1, seed=7) as (cluster, zk):
        tp1 = TopicPartition("t", 1)
        await create_topic(cluster, zk, "t", {0: [0]})
        expanded = {TP: ReplicaAssignment((0,)), tp1: ReplicaAssignment((0,))}
        zk.set_topic_assignment("t", zk.get_topic_id("t"), expanded, FIRST_CONTROLLER_EPOCH_ZK_VERSION)
        await wait_for_partition_state(cluster, zk, tp1, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic partition expansion")
        await wait_for_all_partitions_metadata(cluster, "t", 2)
        assert list(partition_state(zk, tp1).leader_and_isr.isr) == [0]


async def test_topic_partition_expansion_with_offline_replica():
    """Mirrors ControllerIntegrationTest#testTopicPartitionExpansionWithOfflineReplica."""
    async with zk_cluster(2, seed=8) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        tp1 = TopicPartition("t", 1)
        await create_topic(cluster, zk, "t", {0: [other, controller_id]})
        await cluster.shutdown_broker(other)
        expanded = {TP: ReplicaAssignment((other, controller_id)), tp1: ReplicaAssignment((other, controller_id))}
        zk.set_topic_assignment("t", zk.get_topic_id("t"), expanded, FIRST_CONTROLLER_EPOCH_ZK_VERSION)
        await wait_for_partition_state(cluster, zk, tp1, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic partition expansion")
        await wait_for_all_partitions_metadata(cluster, "t", 2, [controller_id])
        assert list(partition_state(zk, tp1).leader_and_isr.isr) == [controller_id]


# ------------------------------------------------------------------------------ reassignment


async def test_partition_reassignment_with_offline_replica_halting_progress():
    """Mirrors ControllerIntegrationTest#testPartitionReassignmentWithOfflineReplicaHaltingProgress:
    moving t-0 to a dead broker stops after phase A (RS = TRS + ORS, leader epoch + 1); the
    request stays in /admin/reassign_partitions."""
    async with zk_cluster(2, seed=9) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await create_topic(cluster, zk, "t", {0: [controller_id]})
        await cluster.shutdown_broker(other)
        zk.create_partition_reassignment({TP: [other]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH + 1,
                                       "failed to get expected partition state during partition reassignment with offline replica")
        await anyio.sleep(5)
        assert zk.reassign_partitions_in_progress()
        assert zk.get_full_replica_assignment_for_topics(["t"]) == {
            TP: ReplicaAssignment((other, controller_id), (other,), (controller_id,))}
        assert is_expected_partition_state(partition_state(zk, TP), FIRST_CONTROLLER_EPOCH, controller_id,
                                           INITIAL_LEADER_EPOCH + 1)


# ------------------------------------------------------------------------------ preferred replica election


async def preferred_replica_leader_election(cluster: Cluster, zk: KafkaZkClient, controller_id: int, other: int,
                                            tp: TopicPartition, replicas: set[int], leader_epoch: int) -> None:
    """Mirrors the test's preferredReplicaLeaderElection: bounce the preferred replica, then elect it back."""
    await cluster.shutdown_broker(other)
    await wait_for_partition_state(cluster, zk, tp, FIRST_CONTROLLER_EPOCH, controller_id, leader_epoch + 1,
                                   "failed to get expected partition state upon broker shutdown")
    await cluster.restart_broker(other)
    await cluster.wait_until(lambda: set(zk.get_topic_partition_state(tp).leader_and_isr.isr) == replicas,
                             message="restarted broker failed to join in-sync replicas")
    zk.create_preferred_replica_election({tp})
    await cluster.wait_until(lambda: not zk.path_exists(PreferredReplicaElectionZNode.path()),
                             message="failed to remove preferred replica leader election path after completion")
    await wait_for_partition_state(cluster, zk, tp, FIRST_CONTROLLER_EPOCH, other, leader_epoch + 2,
                                   "failed to get expected partition state upon broker startup")


async def test_back_to_back_preferred_replica_leader_elections():
    """Mirrors ControllerIntegrationTest#testBackToBackPreferredReplicaLeaderElections (its first
    round is ControllerIntegrationTest#testPreferredReplicaLeaderElection): each round moves
    leadership to the controller (controlled shutdown, epoch + 1) and back (epoch + 2)."""
    async with zk_cluster(2, seed=10) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await create_topic(cluster, zk, "t", {0: [other, controller_id]})
        await preferred_replica_leader_election(cluster, zk, controller_id, other, TP, {other, controller_id},
                                                INITIAL_LEADER_EPOCH)
        await preferred_replica_leader_election(cluster, zk, controller_id, other, TP, {other, controller_id},
                                                INITIAL_LEADER_EPOCH + 2)


async def test_preferred_replica_leader_election_with_offline_preferred_replica():
    """Mirrors ControllerIntegrationTest#testPreferredReplicaLeaderElectionWithOfflinePreferredReplica:
    the election gives up on the dead preferred replica and still deletes the znode."""
    async with zk_cluster(2, seed=11) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await create_topic(cluster, zk, "t", {0: [other, controller_id]})
        await cluster.shutdown_broker(other)
        zk.create_preferred_replica_election({TP})
        await cluster.wait_until(lambda: not zk.path_exists(PreferredReplicaElectionZNode.path()),
                                 message="failed to remove preferred replica leader election path after giving up")
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH + 1,
                                       "failed to get expected partition state upon broker shutdown")


async def test_auto_preferred_replica_leader_election_with_other_reassigning_partitions():
    """Mirrors ControllerIntegrationTest#testAutoPreferredReplicaLeaderElectionWithOtherReassigningPartitions:
    a stuck reassignment of another partition does not stop auto-rebalance from moving t-0 back
    to its preferred replica; the reassignment completes once its target broker returns."""
    async with zk_cluster(3, seed=12, auto_leader_rebalance=True) as (cluster, zk):
        controller_id = cluster.controller_id()
        leader_broker, other_broker = other_brokers(cluster, controller_id)
        await create_topic(cluster, zk, "t", {0: [leader_broker, controller_id]})
        reassigning_tp = TopicPartition("reassigning", 0)
        await create_topic(cluster, zk, "reassigning", {0: [controller_id]})

        await cluster.shutdown_broker(leader_broker)
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH + 1,
                                       "failed to get expected partition state upon broker shutdown")

        await cluster.shutdown_broker(other_broker)
        zk.create_partition_reassignment({reassigning_tp: [other_broker]})
        await wait_for_partition_state(cluster, zk, reassigning_tp, FIRST_CONTROLLER_EPOCH, controller_id,
                                       INITIAL_LEADER_EPOCH + 1,
                                       "failed to get expected partition state during partition reassignment with offline replica")

        await cluster.restart_broker(leader_broker)
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, leader_broker, INITIAL_LEADER_EPOCH + 2,
                                       "failed to get expected partition state upon leader broker startup")
        assert zk.reassign_partitions_in_progress()

        await cluster.restart_broker(other_broker)
        await wait_for_partition_state(cluster, zk, reassigning_tp, FIRST_CONTROLLER_EPOCH, other_broker,
                                       INITIAL_LEADER_EPOCH + 4,
                                       "failed to get expected partition state upon other broker startup")
        await cluster.wait_until(lambda: zk.get_full_replica_assignment_for_topics(["reassigning"])
                                 == {reassigning_tp: ReplicaAssignment((other_broker,))},
                                 message="the topic znode has the new assignment")
        await cluster.wait_until(lambda: not zk.reassign_partitions_in_progress(),
                                 message="the reassign partitions path removed after completion")


async def test_auto_preferred_replica_leader_election_with_same_partition_being_reassigned():
    """Mirrors ControllerIntegrationTest#testAutoPreferredReplicaLeaderElectionWithSamePartitionBeingReassigned:
    while t-0 moves to [leader, controller, other] (stuck on the dead ``other``), auto-rebalance
    already elects the new preferred replica (epoch 2); when ``other`` returns, the move resumes
    (A1 again: epoch 3, the state Kafka's test waits for) and completes once it caught up (B3
    keeps the leader and bumps the epoch once more: 4, a state Kafka's test polls past)."""
    async with zk_cluster(3, seed=13, auto_leader_rebalance=True) as (cluster, zk):
        controller_id = cluster.controller_id()
        leader_broker, other_broker = other_brokers(cluster, controller_id)
        await create_topic(cluster, zk, "t", {0: [controller_id, leader_broker]})

        await cluster.shutdown_broker(other_broker)
        target = (leader_broker, controller_id, other_broker)
        zk.create_partition_reassignment({TP: list(target)})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, leader_broker, INITIAL_LEADER_EPOCH + 2,
                                       "failed to get expected partition state after auto preferred replica leader election")
        assert zk.reassign_partitions_in_progress()

        writes = record_leader_and_isr_writes(cluster.active_controller(), TP)
        await cluster.restart_broker(other_broker)
        await cluster.wait_until(lambda: zk.get_full_replica_assignment_for_topics(["t"]) == {TP: ReplicaAssignment(target)},
                                 message="the topic znode has the new assignment")
        await cluster.wait_until(lambda: not zk.reassign_partitions_in_progress(),
                                 message="the reassign partitions path removed after completion")
        # A1 on the broker's return, its ISR join (AlterPartition), then B3.
        assert [(leader, epoch, sorted(isr)) for leader, epoch, isr in writes] == [
            (leader_broker, INITIAL_LEADER_EPOCH + 3, sorted([controller_id, leader_broker])),
            (leader_broker, INITIAL_LEADER_EPOCH + 3, sorted(target)),
            (leader_broker, INITIAL_LEADER_EPOCH + 4, sorted(target))]
        assert is_expected_partition_state(partition_state(zk, TP), FIRST_CONTROLLER_EPOCH, leader_broker,
                                           INITIAL_LEADER_EPOCH + 4)
        assert sorted(partition_state(zk, TP).leader_and_isr.isr) == sorted(target)


# ------------------------------------------------------------------------------ leader and ISR on broker failure


@pytest.mark.parametrize("unclean", [False, True], ids=["unclean-disabled", "unclean-enabled"])
async def test_leader_and_isr_when_entire_isr_offline(unclean):
    """Mirrors ControllerIntegrationTest#testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionDisabled
    and #testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionEnabled: the only replica
    dies; the partition is left with no leader in the next leader epoch and its last ISR,
    whether or not unclean election is allowed (there is no other replica to pick)."""
    async with zk_cluster(2, seed=14, unclean=unclean) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await create_topic(cluster, zk, "t", {0: [other]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        await cluster.shutdown_broker(other)
        await cluster.wait_until(
            lambda: is_expected_partition_state(partition_state(zk, TP), FIRST_CONTROLLER_EPOCH, NO_LEADER,
                                                INITIAL_LEADER_EPOCH + 1)
            and list(partition_state(zk, TP).leader_and_isr.isr) == [other],
            message="failed to get expected partition state after entire isr went offline")


# ------------------------------------------------------------------------------ controlled shutdown


async def controlled_shutdown(controller: Any, broker_id: int, broker_epoch: int) -> Any:
    """KafkaController#controlledShutdown: a ControlledShutdown event; what its callback got
    (the partitions still led by the broker, or the error)."""
    done = anyio.Event()
    results: list[Any] = []

    def callback(result: Any) -> None:
        results.append(result)
        done.set()

    controller.event_manager.put(ev.ControlledShutdown(broker_id, broker_epoch, callback))
    await done.wait()
    return results[0]


async def test_controlled_shutdown():
    """Mirrors ControllerIntegrationTest#testControlledShutdown: the controller is asked to shut
    down brokers 2, 1 and 0 in turn (the brokers keep running): the followers leave the ISR,
    leader 0 stays, and for 0 itself nothing can take over, so the partition is reported back."""
    async with zk_cluster(3, seed=15, controlled_shutdown=False) as (cluster, zk):
        tp = TopicPartition("test", 0)
        await create_topic(cluster, zk, "test", {0: [0, 1, 2]})
        controller = cluster.active_controller()

        remaining = await controlled_shutdown(controller, 2, cluster.broker(2).broker_epoch)
        active = [0, 1]
        await cluster.wait_until(lambda: all(len(cluster.broker(b).metadata_cache.get_partition_info(tp).isr) != 3
                                             for b in active), message="the ISR shrink reached the brokers")
        assert remaining == set()
        info = cluster.broker(active[0]).metadata_cache.get_partition_info(tp)
        assert (info.leader, list(info.isr)) == (0, [0, 1])
        # The follower left the ISR through OfflineReplica, which bumps the leader epoch.
        assert is_expected_partition_state(partition_state(zk, tp), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH + 1)

        remaining = await controlled_shutdown(controller, 1, cluster.broker(1).broker_epoch)
        assert remaining == set()
        await cluster.wait_until(lambda: list(cluster.broker(0).metadata_cache.get_partition_info(tp).isr) == [0],
                                 message="the second ISR shrink reached broker 0")
        assert cluster.broker(0).metadata_cache.get_partition_info(tp).leader == 0
        assert all(cluster.broker(b).metadata_cache.get_partition_info(tp).leader == 0 for b in range(3))
        assert is_expected_partition_state(partition_state(zk, tp), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH + 2)

        remaining = await controlled_shutdown(controller, 0, cluster.broker(0).broker_epoch)
        assert remaining == {tp}
        # The leader does not change: every replica is shutting down.
        assert all(cluster.broker(b).metadata_cache.get_partition_info(tp).leader == 0 for b in range(3))
        # The controlled-shutdown election found no candidate: nothing was written.
        state = partition_state(zk, tp)
        assert (state.leader_and_isr.leader, list(state.leader_and_isr.isr)) == (0, [0])
        assert is_expected_partition_state(state, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH + 2)
        assert controller.controller_context.shutting_down_broker_ids == {0, 1, 2}


async def test_controller_reject_controlled_shutdown_request_with_stale_broker_epoch():
    """Mirrors ControllerIntegrationTest#testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch."""
    async with zk_cluster(2, seed=16, controlled_shutdown=False) as (cluster, zk):
        controller = cluster.active_controller()
        other = other_brokers(cluster, controller.broker_id)[0]
        result = await controlled_shutdown(controller, other, cluster.broker(other).broker_epoch - 1)
        assert result == Errors.STALE_BROKER_EPOCH
        assert controller.controller_context.shutting_down_broker_ids == set()


# ------------------------------------------------------------------------------ controller moves


async def controller_move(cluster: Cluster, zk: KafkaZkClient, logs: list[dict], action: Callable[[], None]) -> list[dict]:
    """Mirrors the test's testControllerMove: with the event thread held, ``action`` writes to
    ZooKeeper and another broker takes /controller (a new controller epoch); released, the old
    controller's first fenced write fails with ControllerMovedException and it resigns. Returns
    the INFO events that logged the ControllerMovedException."""
    controller = cluster.active_controller()
    hold = await hold_event_thread(cluster)
    action()
    zk.delete_controller(controller.controller_context.epoch_zk_version)
    zk.register_controller_and_increment_controller_epoch(len(cluster.brokers))
    hold.release.set()
    await cluster.wait_until(lambda: not controller.is_active, message="the controller resigned")
    return [e for e in logs if e["event"] == "controller_moved" and e["log_level"] == "info"
            and "ControllerMovedException" in e["error"]]


async def test_controller_move_on_topic_creation(controller_logs):
    """Mirrors ControllerIntegrationTest#testControllerMoveOnTopicCreation."""
    async with zk_cluster(1, seed=17) as (cluster, zk):
        moved = await controller_move(cluster, zk, controller_logs,
                                      lambda: admin(zk).create_topic_with_assignment("t", {}, {0: [0]}))
        assert [e["controller_event"] for e in moved] == ["TopicChange"]
        assert zk.get_controller_id() == 1 and zk.get_controller_epoch()[0] == FIRST_CONTROLLER_EPOCH + 1
        # The old controller wrote nothing for the new topic.
        assert partition_state(zk, TP) is None


async def test_controller_move_on_topic_deletion(controller_logs):
    """Mirrors ControllerIntegrationTest#testControllerMoveOnTopicDeletion."""
    async with zk_cluster(1, seed=18) as (cluster, zk):
        await create_topic(cluster, zk, "t", {0: [0]})
        moved = await controller_move(cluster, zk, controller_logs, lambda: admin(zk).delete_topic("t"))
        assert [e["controller_event"] for e in moved] == ["TopicDeletion"]
        assert zk.topic_exists("t") and zk.is_topic_marked_for_deletion("t")


async def test_controller_move_on_preferred_replica_election(controller_logs):
    """Mirrors ControllerIntegrationTest#testControllerMoveOnPreferredReplicaElection."""
    async with zk_cluster(1, seed=19) as (cluster, zk):
        await create_topic(cluster, zk, "t", {0: [0]})
        moved = await controller_move(cluster, zk, controller_logs, lambda: zk.create_preferred_replica_election({TP}))
        assert [e["controller_event"] for e in moved] == ["ReplicaLeaderElection"]
        assert zk.path_exists(PreferredReplicaElectionZNode.path())


async def test_controller_move_on_partition_reassignment(controller_logs):
    """Mirrors ControllerIntegrationTest#testControllerMoveOnPartitionReassignment."""
    async with zk_cluster(1, seed=20) as (cluster, zk):
        await create_topic(cluster, zk, "t", {0: [0]})
        moved = await controller_move(cluster, zk, controller_logs, lambda: zk.create_partition_reassignment({TP: [0]}))
        assert [e["controller_event"] for e in moved] == ["ZkPartitionReassignment"]
        assert zk.reassign_partitions_in_progress()


async def test_controller_detects_bounced_brokers():
    """Mirrors ControllerIntegrationTest#testControllerDetectsBouncedBrokers: a broker stops and
    starts again while the controller's event thread is busy; the controller later sees the
    same id with a newer broker epoch (a bounce), fails and restarts it, and the new process
    gets its partition and the metadata."""
    async with zk_cluster(2, seed=21, controlled_shutdown=False) as (cluster, zk):
        controller = cluster.active_controller()
        other = other_brokers(cluster, controller.broker_id)[0]
        await create_topic(cluster, zk, "t", {0: [0, 1]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        old_epoch = cluster.broker(other).broker_epoch
        hold = await hold_event_thread(cluster)
        await cluster.shutdown_broker(other)
        await cluster.restart_broker(other)
        new_broker = cluster.broker(other)
        assert new_broker.broker_epoch > old_epoch
        assert len(new_broker.replica_manager.all_partitions) == 0
        hold.release.set()
        await cluster.wait_until(lambda: len(new_broker.replica_manager.all_partitions) == 1
                                 and new_broker.metadata_cache.get_all_topics() == {"t"}
                                 and len(new_broker.metadata_cache.alive_brokers) == 2,
                                 message="broker initialised after restart")
        assert controller.controller_context.live_broker_id_and_epochs[other] == new_broker.broker_epoch


# ------------------------------------------------------------------------------ preemption on controller shutdown


class CountingEvent(ev.MockEvent):
    """A MockEvent that records whether it was processed or preempted."""

    name = "CountingEvent"

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def process(self, controller: Any = None) -> Any:
        self.seen.append("processed")
        return None

    def preempt(self) -> None:
        self.seen.append("preempted")


async def test_preemption_on_controller_shutdown():
    """Mirrors ControllerIntegrationTest#testPreemptionOnControllerShutdown: with the event thread
    busy, two queued events are preempted by the controller's shutdown and never processed."""
    async with zk_cluster(1, seed=35, controlled_shutdown=False) as (cluster, zk):
        controller = cluster.active_controller()
        hold = await hold_event_thread(cluster)
        seen: list[str] = []
        controller.event_manager.put(CountingEvent(seen))
        controller.event_manager.put(CountingEvent(seen))
        controller.shutdown()
        assert seen == ["preempted", "preempted"]
        assert not controller.is_active
        hold.release.set()
        await cluster.wait_until(lambda: controller.event_manager.state == ev.IDLE, message="the held event done")
        await anyio.sleep(1)
        assert seen == ["preempted", "preempted"]


async def test_preemption_with_callbacks():
    """Mirrors ControllerIntegrationTest#testPreemptionWithCallbacks: events that carry a callback
    answer it when preempted: NOT_CONTROLLER for an election (per partition), a reassignment
    and a reassignment listing; the controlled shutdown fails with ControllerMovedException
    (its error, STALE_CONTROLLER_EPOCH)."""
    from kafka_ref.common.requests.elect_leaders import ElectionType
    from kafka_ref.controller.admin_requests import ListPartitionReassignments
    from kafka_ref.controller.preferred_election import AdminReplicaLeaderElection
    from kafka_ref.controller.reassignment import ApiError, ApiPartitionReassignment

    async with zk_cluster(1, seed=36, controlled_shutdown=False) as (cluster, zk):
        controller = cluster.active_controller()
        tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
        answers: dict[str, Any] = {}
        hold = await hold_event_thread(cluster)
        controller.event_manager.put(AdminReplicaLeaderElection(
            controller.preferred_replica_election, {tp0, tp1}, ElectionType.PREFERRED,
            lambda results: answers.__setitem__("election", results)))
        controller.event_manager.put(ev.ControlledShutdown(0, 0, lambda result: answers.__setitem__("shutdown", result)))
        controller.event_manager.put(ApiPartitionReassignment(
            controller.partition_reassignment, {tp0: None, tp1: None},
            lambda result: answers.__setitem__("reassignment", result)))
        controller.event_manager.put(ListPartitionReassignments(
            [tp0, tp1], lambda result: answers.__setitem__("listing", result)))
        controller.shutdown()
        assert answers == {
            "election": {tp0: ApiError(Errors.NOT_CONTROLLER), tp1: ApiError(Errors.NOT_CONTROLLER)},
            "shutdown": Errors.STALE_CONTROLLER_EPOCH,
            "reassignment": ApiError(Errors.NOT_CONTROLLER),
            "listing": ApiError(Errors.NOT_CONTROLLER),
        }
        hold.release.set()
        await anyio.sleep(1)
        assert len(answers) == 4


# ------------------------------------------------------------------------------ AlterPartition


def alter_partition_request(broker_id: int, broker_epoch: int, version: int, tp: TopicPartition, topic_id: Any,
                            leader_epoch: int, partition_epoch: int, isr: list[int], recovery_state: int) -> AlterPartitionRequest:
    """An AlterPartition request of ``version``: topics by id from version 2, by name before."""
    by_id = version > 1
    return AlterPartitionRequest(broker_id=broker_id, broker_epoch=broker_epoch, version=version, topics=(
        AlterPartitionTopicData(topic_name="" if by_id else tp.topic, topic_id=topic_id if by_id else ZERO_UUID,
                                partitions=(AlterPartitionPartitionData(
                                    partition_index=tp.partition, leader_epoch=leader_epoch,
                                    partition_epoch=partition_epoch,
                                    new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in isr),
                                    leader_recovery_state=recovery_state),)),))


async def alter_partition(controller: Any, request: AlterPartitionRequest) -> Any:
    """The test's alterPartitionFuture: an AlterPartitionReceived event; the response."""
    done = anyio.Event()
    responses: list[Any] = []
    controller.event_manager.put(ev.AlterPartitionReceived(request, lambda r: (responses.append(r), done.set())))
    with anyio.fail_after(10):
        await done.wait()
    return responses[0]


def response_topic_key(topic: Any) -> tuple[str, Any]:
    """How a response names its topic: (name, id); versions 2+ give the id only, 0-1 the name only."""
    return topic.topic_name, topic.topic_id


@pytest.mark.parametrize("ibp, version", [(OLD_IBP, 0), (OLD_IBP, 1), (LATEST_IBP, 0), (LATEST_IBP, 1),
                                          (LATEST_IBP, 2), (LATEST_IBP, 3)])
async def test_alter_partition(ibp, version):
    """Mirrors ControllerIntegrationTest#testAlterPartition (IBP 2.7 with versions 0-1, the
    latest IBP with every version; Kafka skips IBP 2.7 with versions 2+): the leader proposes
    the ISR the controller already has, and the answer is the current state unchanged, the
    topic named by id only when the IBP has ids and the version uses them."""
    async with zk_cluster(1, seed=22, ibp=ibp) as (cluster, zk):
        controller_id = cluster.controller_id()
        await create_topic(cluster, zk, "t", {0: [controller_id]})
        controller = cluster.active_controller()
        current = partition_state(zk, TP).leader_and_isr
        topic_id = controller.controller_context.topic_ids.get("t", ZERO_UUID)
        assert (topic_id != ZERO_UUID) == (ibp == LATEST_IBP)
        broker_epoch = controller.controller_context.live_broker_id_and_epochs[controller_id]
        response = await alter_partition(controller, alter_partition_request(
            controller_id, broker_epoch, version, TP, topic_id, current.leader_epoch, current.partition_epoch,
            list(current.isr), int(current.leader_recovery_state)))
        assert response.error_code == Errors.NONE.code
        [topic] = response.topics
        assert response_topic_key(topic) == (("", topic_id) if version > 1 else ("t", ZERO_UUID))
        [p] = topic.partitions
        assert (p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.partition_epoch, list(p.isr),
                p.leader_recovery_state) == (0, Errors.NONE.code, controller_id, current.leader_epoch,
                                             current.partition_epoch, list(current.isr), int(current.leader_recovery_state))


async def test_alter_partition_version2_keep_working_when_controller_downgrade_to_pre28_ibp():
    """Mirrors ControllerIntegrationTest#testAlterPartitionVersion2KeepWorkingWhenControllerDowngradeToPre28IBP:
    a controller downgraded to IBP 2.7 gives no new topic ids but keeps those topics have, so an
    AlterPartition naming the topic by id (the latest version) still works."""
    async with zk_cluster(1, seed=33, ibp=LATEST_IBP) as (cluster, zk):
        controller_id = cluster.controller_id()
        await create_topic(cluster, zk, "t", {0: [controller_id]})
        await cluster.shutdown_broker(0)
        cluster.base_config["inter.broker.protocol.version"] = OLD_IBP
        await cluster.restart_broker(0)
        await cluster.wait_until(lambda: cluster.active_controller() is not None, message="a controller")
        controller = cluster.active_controller()
        assert controller.config.inter_broker_protocol_version.text == OLD_IBP
        current = partition_state(zk, TP).leader_and_isr
        topic_id = controller.controller_context.topic_ids.get("t", ZERO_UUID)
        assert topic_id != ZERO_UUID and topic_id == zk.get_topic_id("t")
        response = await alter_partition(controller, alter_partition_request(
            controller_id, controller.controller_context.live_broker_id_and_epochs[controller_id], 3, TP, topic_id,
            current.leader_epoch, current.partition_epoch, list(current.isr), int(current.leader_recovery_state)))
        [topic] = response.topics
        [p] = topic.partitions
        assert (response.error_code, response_topic_key(topic)) == (Errors.NONE.code, ("", topic_id))
        assert (p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.partition_epoch, list(p.isr),
                p.leader_recovery_state) == (0, Errors.NONE.code, controller_id, current.leader_epoch,
                                             current.partition_epoch, list(current.isr), int(current.leader_recovery_state))


async def test_idempotent_alter_partition():
    """Mirrors ControllerIntegrationTest#testIdempotentAlterPartition: the first proposal bumps
    the partition epoch; the same ISR proposed again, with an older, equal or newer partition
    epoch, answers the committed state without another change."""
    async with zk_cluster(2, seed=23) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        await create_topic(cluster, zk, "t", {0: [other, controller_id]})
        controller = cluster.active_controller()
        old = partition_state(zk, TP).leader_and_isr
        new_isr = [old.leader]
        new_partition_epoch = old.partition_epoch + 1
        topic_id = controller.controller_context.topic_ids["t"]
        broker_epoch = controller.controller_context.live_broker_id_and_epochs[other]

        async def send_and_verify(request_partition_epoch: int) -> None:
            response = await alter_partition(controller, alter_partition_request(
                other, broker_epoch, 3, TP, topic_id, old.leader_epoch, request_partition_epoch, new_isr,
                int(old.leader_recovery_state)))
            [topic] = response.topics
            [p] = topic.partitions
            assert (response.error_code, response_topic_key(topic)) == (Errors.NONE.code, ("", topic_id))
            assert (p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.partition_epoch, list(p.isr),
                    p.leader_recovery_state) == (0, Errors.NONE.code, other, old.leader_epoch, new_partition_epoch,
                                                 new_isr, int(old.leader_recovery_state))

        await send_and_verify(old.partition_epoch)
        await send_and_verify(old.partition_epoch)
        await send_and_verify(new_partition_epoch)
        state = partition_state(zk, TP).leader_and_isr
        assert (list(state.isr), state.partition_epoch) == (new_isr, new_partition_epoch)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_shutdown_broker_not_added_to_isr(version):
    """Mirrors ControllerIntegrationTest#testShutdownBrokerNotAddedToIsr: the leader proposes
    an ISR with a broker that is down; KIP-841 refuses it (INELIGIBLE_REPLICA from version 2,
    OPERATION_NOT_ATTEMPTED before) and the ISR stays; back up, the broker rejoins."""
    async with zk_cluster(2, seed=24) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = other_brokers(cluster, controller_id)[0]
        full_isr = [controller_id, other]
        await create_topic(cluster, zk, "t", {0: full_isr})
        await cluster.shutdown_broker(other)
        controller = cluster.active_controller()
        current = controller.controller_context.partition_leadership_info[TP].leader_and_isr
        topic_id = controller.controller_context.topic_ids["t"]
        assert list(current.isr) == [controller_id]
        response = await alter_partition(controller, alter_partition_request(
            controller_id, controller.controller_context.live_broker_id_and_epochs[controller_id], version, TP,
            topic_id, current.leader_epoch, current.partition_epoch, full_isr, int(current.leader_recovery_state)))
        expected = Errors.INELIGIBLE_REPLICA if version > 1 else Errors.OPERATION_NOT_ATTEMPTED
        [topic] = response.topics
        [p] = topic.partitions
        assert response_topic_key(topic) == (("", topic_id) if version > 1 else ("t", ZERO_UUID))
        assert (response.error_code, p.partition_index, p.error_code) == (Errors.NONE.code, 0, expected.code)
        assert list(controller.controller_context.partition_leadership_info[TP].leader_and_isr.isr) == [controller_id]

        await cluster.restart_broker(other)
        await cluster.wait_until(lambda: list(zk.get_topic_partition_state(TP).leader_and_isr.isr) == full_isr,
                                 message="replica did not rejoin ISR")


async def test_alter_partition_errors_after_unclean_election():
    """Mirrors ControllerIntegrationTest#testAlterPartitionErrorsAfterUncleanElection: A and B
    (not the controller) replicate t-0; A stops (ISR [B]), B stops (no leader, ISR [B]), A
    returns and is elected uncleanly with ISR [A] in state RECOVERING. Proposals then fail on
    the broker epoch, the epochs, or (for a RECOVERING proposal with two replicas) as invalid,
    the epoch checks coming first."""
    async with zk_cluster(3, seed=32, unclean=True) as (cluster, zk):
        controller_id = cluster.controller_id()
        controller = cluster.active_controller()
        ctx = controller.controller_context
        replica1, replica2 = other_brokers(cluster, controller_id)
        await create_topic(cluster, zk, "t", {0: [replica1, replica2]})
        topic_id = ctx.topic_ids["t"]

        await cluster.shutdown_broker(replica1)
        after_first = ctx.partition_leadership_info[TP].leader_and_isr
        assert (after_first.leader, set(after_first.isr)) == (replica2, {replica2})

        await cluster.shutdown_broker(replica2)
        await cluster.wait_until(lambda: ctx.partition_leadership_info[TP].leader_and_isr.leader == NO_LEADER,
                                 message="t-0 offline")
        after_second = ctx.partition_leadership_info[TP].leader_and_isr
        assert (after_second.leader, set(after_second.isr)) == (NO_LEADER, {replica2})

        await cluster.restart_broker(replica1)
        await cluster.wait_until(lambda: all(
            (info := cluster.broker(b).metadata_cache.get_partition_info(TP)) is not None and info.leader == replica1
            for b in cluster.live_broker_ids()), message="every live broker knows the new leader")
        after_restart = ctx.partition_leadership_info[TP].leader_and_isr
        assert (after_restart.leader, set(after_restart.isr), int(after_restart.leader_recovery_state)) == (
            replica1, {replica1}, 1)  # LeaderRecoveryState.RECOVERING

        leader_broker_epoch = cluster.broker(replica1).broker_epoch
        leader_epoch, partition_epoch = after_restart.leader_epoch, after_restart.partition_epoch
        recovered, recovering = 0, 1

        async def assert_alter_partition(top_level: Errors = Errors.NONE, partition_error: Errors = Errors.NONE, *,
                                         leader_id: int = replica1, broker_epoch: int = leader_broker_epoch,
                                         leader_epoch: int = leader_epoch, partition_epoch: int = partition_epoch,
                                         recovery_state: int = recovered) -> None:
            response = await alter_partition(controller, alter_partition_request(
                leader_id, broker_epoch, 3, TP, topic_id, leader_epoch, partition_epoch, [replica1, replica2],
                recovery_state))
            if top_level != Errors.NONE:
                assert (response.error_code, response.topics) == (top_level.code, ())
                return
            [topic] = response.topics
            [p] = topic.partitions
            assert (response.error_code, response_topic_key(topic), p.partition_index, p.error_code) == (
                Errors.NONE.code, ("", topic_id), 0, partition_error.code)

        await assert_alter_partition(Errors.STALE_BROKER_EPOCH, broker_epoch=leader_broker_epoch - 1)
        await assert_alter_partition(Errors.STALE_BROKER_EPOCH, leader_id=99)
        await assert_alter_partition(partition_error=Errors.INVALID_UPDATE_VERSION, partition_epoch=partition_epoch - 1)
        await assert_alter_partition(partition_error=Errors.NOT_CONTROLLER, partition_epoch=partition_epoch + 1)
        await assert_alter_partition(partition_error=Errors.FENCED_LEADER_EPOCH, leader_epoch=leader_epoch - 1)
        await assert_alter_partition(partition_error=Errors.NOT_CONTROLLER, leader_epoch=leader_epoch + 1)
        await assert_alter_partition(partition_error=Errors.INVALID_REQUEST, recovery_state=recovering)
        # Version and epoch errors come before the other checks: the leader may have stale state.
        await assert_alter_partition(partition_error=Errors.INVALID_UPDATE_VERSION, partition_epoch=partition_epoch - 1,
                                     recovery_state=recovering)
        await assert_alter_partition(partition_error=Errors.NOT_CONTROLLER, partition_epoch=partition_epoch + 1,
                                     recovery_state=recovering)
        await assert_alter_partition(partition_error=Errors.FENCED_LEADER_EPOCH, leader_epoch=leader_epoch - 1,
                                     recovery_state=recovering)
        await assert_alter_partition(partition_error=Errors.NOT_CONTROLLER, leader_epoch=leader_epoch + 1,
                                     recovery_state=recovering)
        assert ctx.partition_leadership_info[TP].leader_and_isr == after_restart


# ------------------------------------------------------------------------------ topic ids


async def test_topic_ids_are_added():
    """Mirrors ControllerIntegrationTest#testTopicIdsAreAdded: topics written without an id get
    one from the controller (IBP 2.8+), each its own, and an id never changes."""
    async with zk_cluster(1, seed=25) as (cluster, zk):
        controller = cluster.active_controller()
        ctx = controller.controller_context
        assert ctx.topic_ids.get("t1") is None
        tp1, tp2 = TopicPartition("t1", 0), TopicPartition("t2", 0)
        await create_topic(cluster, zk, "t1", {0: [0]})
        await wait_for_partition_state(cluster, zk, tp1, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        topic_id1 = ctx.topic_ids["t1"]
        assert ctx.topic_names[topic_id1] == "t1"
        assert zk.get_topic_id("t1") == topic_id1
        await create_topic(cluster, zk, "t2", {0: [0]})
        await wait_for_partition_state(cluster, zk, tp2, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        topic_id2 = ctx.topic_ids["t2"]
        assert ctx.topic_names[topic_id2] == "t2"
        assert ctx.topic_ids["t1"] == topic_id1
        assert topic_id1 != topic_id2


async def test_topic_ids_are_not_added():
    """Mirrors ControllerIntegrationTest#testTopicIdsAreNotAdded: on IBP 2.7 no topic gets an id."""
    async with zk_cluster(1, seed=26, ibp=OLD_IBP) as (cluster, zk):
        ctx = cluster.active_controller().controller_context
        assert ctx.topic_ids.get("t1") is None
        for topic in ("t1", "t2"):
            await create_topic(cluster, zk, topic, {0: [0]})
            await wait_for_partition_state(cluster, zk, TopicPartition(topic, 0), FIRST_CONTROLLER_EPOCH, 0,
                                           INITIAL_LEADER_EPOCH, "failed to get expected partition state upon topic creation")
            assert ctx.topic_ids.get(topic) is None
            assert zk.get_topic_id(topic) is None
        assert ctx.topic_ids.get("t1") is None and ctx.topic_names == {}


@pytest.mark.parametrize("ibp", [LATEST_IBP, OLD_IBP], ids=["latest", "older-version"])
async def test_topic_id_migration_and_handling(ibp):
    """Mirrors ControllerIntegrationTest#testTopicIdMigrationAndHandling and
    #testTopicIdMigrationAndHandlingWithOlderVersion: a topic created through AdminZkClient
    (no id) gets one from an IBP 2.8+ controller and none from a 2.7 one; adding a partition
    keeps it; deleting the topic drops it from the controller."""
    async with zk_cluster(1, seed=27, ibp=ibp) as (cluster, zk):
        admin_zk = admin(zk)
        ctx = cluster.active_controller().controller_context
        admin_zk.create_topic("t", 1, 1)
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        topic_id_after_create = zk.get_topic_id("t")
        assert (topic_id_after_create is not None) == (ibp == LATEST_IBP)
        assert ctx.topic_ids.get("t") == topic_id_after_create

        existing = {tp.partition: a for tp, a in zk.get_full_replica_assignment_for_topics(["t"]).items()}
        new_partitions = admin_zk.create_new_partitions_assignment("t", existing, sorted(admin_zk.get_broker_metadatas()), 2)
        admin_zk.create_partitions_with_assignment("t", existing, new_partitions)
        await wait_for_partition_state(cluster, zk, TopicPartition("t", 1), FIRST_CONTROLLER_EPOCH, 0,
                                       INITIAL_LEADER_EPOCH, "failed to get expected partition state upon partition addition")
        assert zk.get_topic_id("t") == topic_id_after_create
        assert ctx.topic_ids.get("t") == topic_id_after_create

        admin_zk.delete_topic("t")
        await cluster.wait_until(lambda: "t" not in ctx.all_topics and ctx.topic_ids.get("t") is None,
                                 message="the topic removed from the controller context")
        assert ctx.topic_names == {}


@pytest.mark.parametrize("ibp", [LATEST_IBP, OLD_IBP], ids=["topic-id", "no-topic-id"])
async def test_topic_id_persists_through_controller_reelection(ibp):
    """Mirrors ControllerIntegrationTest#testTopicIdPersistsThroughControllerReelection and
    #testNoTopicIdPersistsThroughControllerReelection: the next controller reads the same id
    (or the same absence of one) from ZooKeeper."""
    async with zk_cluster(2, seed=28, ibp=ibp) as (cluster, zk):
        controller_id = cluster.controller_id()
        controller = cluster.active_controller()
        await create_topic(cluster, zk, "t", {0: [controller_id]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, controller_id, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        topic_id = controller.controller_context.topic_ids.get("t")
        assert (topic_id is not None) == (ibp == LATEST_IBP)
        await cluster.shutdown_broker(controller_id)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, controller_id), message="a new controller")
        assert cluster.active_controller().controller_context.topic_ids.get("t") == topic_id


async def test_topic_id_persists_through_controller_restart():
    """Mirrors ControllerIntegrationTest#testTopicIdPersistsThroughControllerRestart."""
    async with zk_cluster(1, seed=29) as (cluster, zk):
        controller = cluster.active_controller()
        await create_topic(cluster, zk, "t", {0: [0]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        topic_id = controller.controller_context.topic_ids["t"]
        await cluster.shutdown_broker(0)
        await cluster.restart_broker(0)
        await cluster.wait_until(lambda: cluster.active_controller() is not None, message="a controller")
        assert cluster.active_controller().controller_context.topic_ids["t"] == topic_id


async def test_topic_id_created_on_upgrade():
    """Mirrors ControllerIntegrationTest#testTopicIdCreatedOnUpgrade: a topic made on IBP 2.7 has
    no id; the broker restarted on the latest IBP becomes controller, gives the topic an id
    in ZooKeeper and in its context, and the log takes the same id; deletion removes the topic."""
    async with zk_cluster(1, seed=30, ibp=OLD_IBP) as (cluster, zk):
        controller = cluster.active_controller()
        await create_topic(cluster, zk, "t", {0: [0]})
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        assert zk.get_topic_id("t") is None
        assert controller.controller_context.topic_ids.get("t") is None
        assert cluster.broker(0).log_manager.get_log(TP).topic_id is None

        await cluster.shutdown_broker(0)
        cluster.base_config["inter.broker.protocol.version"] = LATEST_IBP
        await cluster.restart_broker(0)
        await cluster.wait_until(lambda: zk.get_topic_id("t") is not None, message="a topic id in ZooKeeper")
        topic_id = zk.get_topic_id("t")
        ctx = cluster.active_controller().controller_context
        assert ctx.topic_ids["t"] == topic_id and ctx.topic_names[topic_id] == "t"
        await cluster.wait_until(lambda: cluster.broker(0).log_manager.get_log(TP) is not None
                                 and cluster.broker(0).log_manager.get_log(TP).topic_id == topic_id,
                                 message="the log has the topic id")

        admin(zk).delete_topic("t")
        await cluster.wait_until(lambda: "t" not in ctx.all_topics,
                                 message="topic should have been removed from controller context after deletion")


class MixedIbpCluster(Cluster):
    """A cluster whose broker 0 runs IBP 2.7 while the others run the latest IBP (an upgrade in progress)."""

    def broker_config(self, broker_id: int) -> Any:
        config = super().broker_config(broker_id)
        return config.copy_with({"inter.broker.protocol.version": OLD_IBP}) if broker_id == 0 else config


async def test_topic_id_created_on_upgrade_multi_broker_scenario():
    """Mirrors ControllerIntegrationTest#testTopicIdCreatedOnUpgradeMultiBrokerScenario: the
    controller (broker 0) is still on IBP 2.7 while brokers 1-3 run the latest IBP; the topic on
    1-3 has no id and neither have its logs. Once broker 0 bounces, an upgraded broker becomes
    controller, gives the topic an id, and every log takes it."""
    async with MixedIbpCluster(brokers=4, metadata_mode="zk", config=broker_configs(), seed=34) as cluster:
        zk = KafkaZkClient(cluster.zookeeper, name="test-harness")
        async with anyio.create_task_group() as tg:
            tg.start_soon(zk.run)
            assert cluster.controller_id() == 0
            controller = cluster.active_controller()
            assert controller.config.inter_broker_protocol_version.text == OLD_IBP
            remaining = [1, 2, 3]
            await create_topic(cluster, zk, "t", {0: remaining})
            await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, remaining[0], INITIAL_LEADER_EPOCH,
                                           "failed to get expected partition state upon topic creation")
            assert zk.get_topic_id("t") is None
            assert controller.controller_context.topic_ids.get("t") is None
            for b in remaining:
                await cluster.wait_until(lambda: cluster.broker(b).log_manager.get_log(TP) is not None,
                                         message=f"log created on broker {b}")
                assert cluster.broker(b).log_manager.get_log(TP).topic_id is None

            await cluster.shutdown_broker(0)
            await cluster.restart_broker(0)
            await cluster.wait_until(lambda: cluster.controller_id() is not None and cluster.active_controller() is not None,
                                     message="a controller")
            await cluster.wait_until(lambda: zk.get_topic_id("t") is not None, message="a topic id in ZooKeeper")
            topic_id = zk.get_topic_id("t")
            new_controller = cluster.active_controller()
            assert new_controller.broker_id in remaining
            assert new_controller.controller_context.topic_ids["t"] == topic_id
            assert new_controller.controller_context.topic_names[topic_id] == "t"
            for b in remaining:
                await cluster.wait_until(lambda: cluster.broker(b).log_manager.get_log(TP).topic_id == topic_id,
                                         message=f"broker {b}'s log has the topic id")

            admin(zk).delete_topic("t")
            await cluster.wait_until(lambda: "t" not in new_controller.controller_context.all_topics,
                                     message="topic should have been removed from controller context after deletion")
            tg.cancel_scope.cancel()
        zk.close()


async def test_topic_id_upgrade_after_reassigning_partitions():
    """Mirrors ControllerIntegrationTest#testTopicIdUpgradeAfterReassigningPartitions: IBP 2.7 →
    latest (the topic gets an id) → 2.7 (the id is kept) → a reassignment on 2.7 (the id
    survives the topic znode rewrite) → latest again; deletion removes the id."""
    async with zk_cluster(1, seed=31, ibp=OLD_IBP) as (cluster, zk):
        admin(zk).create_topic("t", 1, 1)
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon topic creation")
        assert zk.get_topic_id("t") is None
        assert cluster.active_controller().controller_context.topic_ids.get("t") is None

        async def restart_on(ibp: str) -> None:
            await cluster.shutdown_broker(0)
            cluster.base_config["inter.broker.protocol.version"] = ibp
            await cluster.restart_broker(0)

        async def await_topic_id() -> Any:
            def consistent() -> Any:
                ctx = cluster.active_controller().controller_context if cluster.active_controller() else None
                topic_id = ctx.topic_ids.get("t") if ctx is not None else None
                return topic_id is not None and ctx.topic_names.get(topic_id) == "t"

            await cluster.wait_until(consistent, message="a consistent topic id in the controller context")
            topic_id = cluster.active_controller().controller_context.topic_ids["t"]
            assert zk.get_topic_id("t") == topic_id
            return topic_id

        await restart_on(LATEST_IBP)
        topic_id = await await_topic_id()

        await restart_on(OLD_IBP)
        await wait_for_partition_state(cluster, zk, TP, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH,
                                       "failed to get expected partition state upon controller restart")
        assert await await_topic_id() == topic_id

        assert await cluster.reassign_partitions({TP: [0]}, via="api") == {TP: Errors.NONE.code}
        await wait_for_partition_state(cluster, zk, TP, 3, 0, 1, "failed to get expected partition state upon reassignment")
        assert await await_topic_id() == topic_id

        await restart_on(LATEST_IBP)
        await wait_for_partition_state(cluster, zk, TP, 3, 0, 1, "failed to get expected partition state upon controller restart")
        assert await await_topic_id() == topic_id

        admin(zk).delete_topic("t")
        ctx = cluster.active_controller().controller_context
        await cluster.wait_until(lambda: topic_id not in ctx.topic_names,
                                 message="the topic id removed from the controller context")
        assert ctx.topic_ids.get("t") is None
