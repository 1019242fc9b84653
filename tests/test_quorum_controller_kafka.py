"""Mirrors org.apache.kafka.controller.QuorumControllerTest (Kafka 3.8.0), the parts kafka_ref models.

Kafka runs a QuorumController over a LocalLogManager on the wall clock and polls with
TestUtils#waitForCondition. Here a lone-voter QuorumController (its own KafkaRaftClient: every
write commits at once) runs its background work (the fencing timer, leader balancing) in
virtual time; requests reach it through ControllerApis' entry, QuorumController#handle, as in
tests/test_kraft_cluster.py. Polling loops advance virtual time instead of sleeping.

Not ported:
- testConfigurationOperations, testDelayedConfigurationOperations, testConfigResourceExistenceChecker:
  dynamic broker configs (BROKER0) and the controller's describeConfigs are not modelled (the
  controller takes topic configs only); a held-back commit (LocalLogManager#setMaxReadOffset) has
  no counterpart for a lone voter.
- testUncleanShutdownBroker: KIP-966 eligible leader replicas (ELR, metadata.version 3.9).
- testNoOpRecordWriteAfterTimeout: no NoOpRecord / maxIdleIntervalNs.
- testSnapshotSaveAndLoad, testMissingInMemorySnapshot (disabled in Kafka),
  testFatalMetadataErrorDuringSnapshotLoading: no metadata snapshots.
- testTimeouts: the controller event queue has no deadlines.
- testFatalMetadataReplayErrorOnActive, testFatalMetadataErrorDuringLogLoading: no fault handlers.
- testUpgradeFromPreProductionVersion, testInsertBootstrapRecordsToEmptyLog, testActivationRecords*,
  testMigrationsEnabledForOldBootstrapMetadataVersion: bootstrap metadata files and activation
  records beyond metadata.version are not modelled.
- testBootstrapZkMigrationRecord, testUpgradeMigrationStateFrom34, testFailoverDuringMigrationTransaction,
  testBrokerHeartbeatDuringMigration: no ZooKeeper migration (KIP-866).
- testAppendRecords, testAppendRecordsAtomically: QuorumController#appendRecords' batch splitting
  (kafka_ref appends each write as one atomic batch).
"""

from __future__ import annotations

import random
from typing import Callable

import anyio
import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import BrokerIdNotRegisteredException, Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from kafka_ref.common.requests.broker_requests import BrokerHeartbeatRequest, BrokerRegistrationRequest, Listener
from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest
from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.quorum.quorum_controller import QuorumController
from kafka_ref.image.records import NO_LEADER, PartitionChangeRecord, UnregisterBrokerRecord

pytestmark = pytest.mark.anyio

CONTROLLER_ID = 3000
LISTENERS = (Listener(name="PLAINTEXT", host="localhost", port=9092),)


class FakeEnvelope:
    """A request as ControllerApis hands it to the controller; the answer lands in ``response``."""

    def __init__(self, request, principal: str = "User:kafka") -> None:
        self.request = request
        self.principal = principal
        self.response = None

    def respond(self, response) -> None:
        self.response = response


def new_controller(**config) -> QuorumController:
    """QuorumControllerTestEnv with one controller (call inside the event loop: the clock is the loop's).

    Its Raft client lingers 0 ms (Kafka's test env writes at once too); the test plays the Raft
    thread: a poll writes the LeaderChangeMessage, which makes the controller claim its epoch.
    """
    controller = QuorumController(CONTROLLER_ID, KafkaConfig({"node.id": CONTROLLER_ID, "process.roles": "controller",
                                                             "controller.quorum.append.linger.ms": 0, **config}))
    controller.raft_client.poll()
    return controller


def call(controller: QuorumController, request):
    """One request, then the Raft thread's poll: a lone voter with no linger commits the write, so it is answered."""
    envelope = FakeEnvelope(request)
    controller.handle(envelope)
    controller.raft_client.poll()
    assert envelope.response is not None, f"{type(request).__name__} was not answered"
    return envelope.response


def register_broker(controller: QuorumController, broker_id: int, incarnation: Uuid) -> int:
    response = call(controller, BrokerRegistrationRequest(
        broker_id=broker_id, cluster_id=controller.cluster_id, incarnation_id=incarnation, listeners=LISTENERS))
    assert Errors.for_code(response.error_code) is Errors.NONE
    return response.broker_epoch


def heartbeat(controller: QuorumController, broker_id: int, broker_epoch: int, offset: int = 100000):
    return call(controller, BrokerHeartbeatRequest(broker_id=broker_id, broker_epoch=broker_epoch,
                                                   current_metadata_offset=offset, want_fence=False))


def send_broker_heartbeat_to_unfence_brokers(controller: QuorumController, brokers, broker_epochs: dict[int, int]) -> None:
    """Mirrors QuorumControllerIntegrationTestUtils#sendBrokerHeartbeatToUnfenceBrokers: each reply is
    caught up, not fenced, not shutting down."""
    for broker_id in brokers:
        response = heartbeat(controller, broker_id, broker_epochs[broker_id])
        assert (Errors.for_code(response.error_code), response.is_caught_up, response.is_fenced,
                response.should_shut_down) == (Errors.NONE, True, False, False)


async def wait_for_condition(condition: Callable[[], bool], max_wait_ms: int, message: str, poll_ms: int = 100) -> None:
    """TestUtils#waitForCondition in virtual time."""
    with anyio.move_on_after(max_wait_ms / 1000):
        while not condition():
            await anyio.sleep(poll_ms / 1000)
        return
    raise AssertionError(message)


def create_topic(controller: QuorumController, name: str, num_partitions: int, replication_factor: int):
    response = call(controller, CreateTopicsRequest(topics=(
        CreatableTopic(name=name, num_partitions=num_partitions, replication_factor=replication_factor),)))
    [result] = response.topics
    return result


def random_incarnation(rng: random.Random) -> Uuid:
    return Uuid.random_uuid(rng)


async def test_fence_multiple_brokers():
    """Mirrors QuorumControllerTest#testFenceMultipleBrokers."""
    all_brokers, keep_unfenced, to_fence = [1, 2, 3, 4, 5], [1], [2, 3, 4, 5]
    session_timeout_ms = 1000
    rng = random.Random(5)
    controller = new_controller(**{"broker.session.timeout.ms": session_timeout_ms,
                                   "inter.broker.protocol.version": "3.7"})
    async with anyio.create_task_group() as tg:
        tg.start_soon(controller.run)
        broker_epochs = {b: register_broker(controller, b, random_incarnation(rng)) for b in all_brokers}
        # Only registered: still fenced.
        for b in all_brokers:
            assert controller.cluster_control.is_unfenced(b) is False, f"Broker {b} should have been fenced"

        # Unfence all and create foo: 5 partitions, 5 replicas.
        send_broker_heartbeat_to_unfence_brokers(controller, all_brokers, broker_epochs)
        result = create_topic(controller, "foo", len(all_brokers), len(all_brokers))
        assert Errors.for_code(result.error_code) is Errors.NONE
        topic_id_foo = result.topic_id

        # Fence some: only broker 1 keeps heartbeating.
        def others_fenced() -> bool:
            send_broker_heartbeat_to_unfence_brokers(controller, keep_unfenced, broker_epochs)
            return not any(controller.cluster_control.is_unfenced(b) for b in to_fence)

        await wait_for_condition(others_fenced, session_timeout_ms * 3,
                                 "Fencing of brokers did not process within expected time")
        send_broker_heartbeat_to_unfence_brokers(controller, keep_unfenced, broker_epochs)
        for b in keep_unfenced:
            assert controller.cluster_control.is_unfenced(b) is True, f"Broker {b} should have been unfenced"
        for b in to_fence:
            assert controller.cluster_control.is_unfenced(b) is False, f"Broker {b} should have been fenced"

        # Partition 0's ISR is [1], led by 1 (kafka_ref checks every partition: the same holds).
        partition = controller.replication_control.get_partition(topic_id_foo, 0)
        assert (partition.isr, partition.leader) == ((1,), 1)
        for p in range(len(all_brokers)):
            other = controller.replication_control.get_partition(topic_id_foo, p)
            assert (other.isr, other.leader) == ((1,), 1)
        assert controller.replication_control.are_partition_leaders_imbalanced() is True
        tg.cancel_scope.cancel()


async def test_balance_partition_leaders():
    """Mirrors QuorumControllerTest#testBalancePartitionLeaders (leader.imbalance.check.interval 1 s)."""
    all_brokers, keep_unfenced, to_fence = [1, 2, 3], [1, 2], [3]
    session_timeout_ms = 2000
    leader_imbalance_check_interval_ns = 1_000_000_000
    rng = random.Random(6)
    controller = new_controller(**{"broker.session.timeout.ms": session_timeout_ms,
                                   "leader.imbalance.check.interval.seconds": leader_imbalance_check_interval_ns // 10**9,
                                   "auto.leader.rebalance.enable": True,
                                   "inter.broker.protocol.version": "3.7"})
    async with anyio.create_task_group() as tg:
        tg.start_soon(controller.run)
        broker_epochs = {b: register_broker(controller, b, random_incarnation(rng)) for b in all_brokers}
        for b in all_brokers:
            assert controller.cluster_control.is_unfenced(b) is False, f"Broker {b} should have been fenced"
        send_broker_heartbeat_to_unfence_brokers(controller, all_brokers, broker_epochs)
        result = create_topic(controller, "foo", len(all_brokers), len(all_brokers))
        assert Errors.for_code(result.error_code) is Errors.NONE
        topic_id_foo = result.topic_id

        # Broker 3 stops heartbeating and is fenced.
        def fenced() -> bool:
            send_broker_heartbeat_to_unfence_brokers(controller, keep_unfenced, broker_epochs)
            return not any(controller.cluster_control.is_unfenced(b) for b in to_fence)

        await wait_for_condition(fenced, session_timeout_ms * 3, "Fencing of brokers did not process within expected time")
        send_broker_heartbeat_to_unfence_brokers(controller, keep_unfenced, broker_epochs)
        for b in keep_unfenced:
            assert controller.cluster_control.is_unfenced(b) is True, f"Broker {b} should have been unfenced"
        for b in to_fence:
            assert controller.cluster_control.is_unfenced(b) is False, f"Broker {b} should have been fenced"
        assert controller.replication_control.are_partition_leaders_imbalanced() is True

        # Broker 3 registers again (a new incarnation) and every broker is unfenced.
        for b in to_fence:
            broker_epochs[b] = register_broker(controller, b, random_incarnation(rng))
        send_broker_heartbeat_to_unfence_brokers(controller, all_brokers, broker_epochs)

        # The one imbalanced partition is the one broker 3 prefers; 3 joins its ISR.
        imbalanced = set(controller.replication_control.imbalanced_partitions)
        assert len(imbalanced) == 1
        [(topic_id, partition_id)] = imbalanced
        assert topic_id == topic_id_foo
        partition = controller.replication_control.get_partition(topic_id_foo, partition_id)
        assert partition.replicas[0] == 3 and partition.leader != 3 and 3 not in partition.isr
        response = call(controller, AlterPartitionRequest(
            broker_id=partition.leader, broker_epoch=broker_epochs[partition.leader], version=0,
            topics=(AlterPartitionTopicData(topic_name="foo", partitions=(AlterPartitionPartitionData(
                partition_index=partition_id, leader_epoch=partition.leader_epoch,
                partition_epoch=partition.partition_epoch,
                new_isr_with_epochs=tuple(BrokerState(broker_id=b, broker_epoch=-1) for b in (1, 2, 3))),)),)))
        assert Errors.for_code(response.topics[0].partitions[0].error_code) is Errors.NONE

        # Within ten check intervals the balancing run moves leadership back to 3.
        last_heartbeat_ms = controller.time.nanoseconds() // 1_000_000
        send_broker_heartbeat_to_unfence_brokers(controller, all_brokers, broker_epochs)

        def balanced() -> bool:
            nonlocal last_heartbeat_ms
            now_ms = controller.time.nanoseconds() // 1_000_000
            if now_ms > last_heartbeat_ms + session_timeout_ms // 2:
                last_heartbeat_ms = now_ms
                send_broker_heartbeat_to_unfence_brokers(controller, all_brokers, broker_epochs)
            return not controller.replication_control.are_partition_leaders_imbalanced()

        await wait_for_condition(balanced, leader_imbalance_check_interval_ns * 10 // 1_000_000,
                                 "Leaders were not balanced after unfencing all of the brokers")
        after = controller.replication_control.get_partition(topic_id_foo, partition_id)
        assert (after.leader, after.leader_epoch) == (3, partition.leader_epoch + 1)
        tg.cancel_scope.cancel()


async def test_unregister_broker():
    """Mirrors QuorumControllerTest#testUnregisterBroker. Kafka's broker epoch is 5 (its bootstrap and
    activation records come first); kafka_ref's log holds the leader's empty epoch batch (offset 0)
    and the metadata.version FeatureLevelRecord (offset 1), so the RegisterBrokerRecord is offset 2."""
    controller = new_controller()
    epoch = register_broker(controller, 0, Uuid.from_string("kxAT73dKQsitIedpiPtwBA"))
    assert epoch == 2
    foo = CreateTopicsRequest(topics=(CreatableTopic(name="foo", num_partitions=1, replication_factor=1),))
    [result] = call(controller, foo).topics
    assert Errors.for_code(result.error_code) is Errors.INVALID_REPLICATION_FACTOR
    [result] = call(controller, foo).topics
    assert result.error_message == "Unable to replicate the partition 1 time(s): All brokers are currently fenced."
    response = heartbeat(controller, 0, epoch)
    assert (Errors.for_code(response.error_code), response.is_caught_up, response.is_fenced,
            response.should_shut_down) == (Errors.NONE, True, False, False)
    [result] = call(controller, foo).topics
    assert Errors.for_code(result.error_code) is Errors.NONE
    topic_id = result.topic_id
    assert list(controller.replication_control.partitions_with_broker_in_isr(0)) == [(topic_id, 0)]

    answers: list = []
    controller.unregister_broker(0, answers.append)
    controller.raft_client.poll()  # the Raft thread writes and commits it
    assert answers == [None]
    assert list(controller.replication_control.partitions_with_no_leader()) == [(topic_id, 0)]
    # (kafka_ref's additions) what was written, and that the broker is gone.
    batch = controller.raft_client.log.batches[-1]
    assert list(batch.records) == [PartitionChangeRecord(partition_id=0, topic_id=topic_id, leader=NO_LEADER),
                                   UnregisterBrokerRecord(broker_id=0, broker_epoch=epoch)]
    assert controller.cluster_control.registration(0) is None
    with pytest.raises(BrokerIdNotRegisteredException, match="Broker ID 0 is not currently registered"):
        controller.unregister_broker(0, answers.append)


async def test_early_controller_results():
    """Mirrors QuorumControllerTest#testEarlyControllerResults: requests with nothing to do are
    answered at once, empty and without error."""
    controller = new_controller()
    create = call(controller, CreateTopicsRequest(topics=(), timeout_ms=120000))
    assert (create.topics, create.throttle_time_ms) == ((), 0)
    delete = call(controller, DeleteTopicsRequest(topics=()))
    assert delete.responses == ()
    create_partitions = call(controller, CreatePartitionsRequest(topics=()))
    assert create_partitions.results == ()
    elect = call(controller, ElectLeadersRequest(topic_partitions=()))
    assert (Errors.for_code(elect.error_code), elect.replica_election_results) == (Errors.NONE, ())
    reassign = call(controller, AlterPartitionReassignmentsRequest(topics=()))
    assert (Errors.for_code(reassign.error_code), reassign.responses) == (Errors.NONE, ())
    # Nothing was written past the bootstrap.
    assert controller.write_offset == 1


async def test_registration_errors_reach_the_broker():
    """QuorumController#registerBroker's refusals as the broker hears them (kafka_ref's own check, after
    ClusterControlManagerTest#testRegistrationWithIncorrectClusterId and
    #testRegistrationWithUnsupportedMetadataVersion): INCONSISTENT_CLUSTER_ID, UNSUPPORTED_VERSION for a
    broker that lists no metadata.version range (version 1 only) under 3.8, and nothing written."""
    controller = new_controller()
    incarnation = Uuid.from_string("kxAT73dKQsitIedpiPtwBA")
    wrong_cluster = call(controller, BrokerRegistrationRequest(
        broker_id=0, cluster_id="WIjw3grwRZmR2uOpdpVXbg", incarnation_id=incarnation, listeners=LISTENERS))
    assert (Errors.for_code(wrong_cluster.error_code), wrong_cluster.broker_epoch) == (Errors.INCONSISTENT_CLUSTER_ID, -1)
    too_old = call(controller, BrokerRegistrationRequest(
        broker_id=0, cluster_id=controller.cluster_id, incarnation_id=incarnation, listeners=LISTENERS, features=()))
    assert (Errors.for_code(too_old.error_code), too_old.broker_epoch) == (Errors.UNSUPPORTED_VERSION, -1)
    assert controller.write_offset == 1
    assert controller.cluster_control.broker_registrations == {}
    assert register_broker(controller, 0, incarnation) == 2
