"""The ZooKeeper controller's AlterPartition handling, end to end through a Cluster.

Mirrors kafka.controller.ControllerIntegrationTest#testAlterPartitionErrors (Kafka 3.7): each
bad proposal gets its own error code, and a request the controller cannot decode (leader
recovery state 25) is answered with a top-level UNKNOWN_SERVER_ERROR while the controller
keeps serving.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_events import ControllerEvent, ControllerEventManager

pytestmark = pytest.mark.anyio

TP = TopicPartition("t", 0)


async def _cluster_with_topic(cluster: Cluster) -> dict:
    await cluster.create_topic("t", partitions=1, replication_factor=2)
    state = cluster.partition_state("t", 0)
    return state


def _request(cluster: Cluster, state: dict, *, topic: str = "t", partition: int = 0, leader: int | None = None,
             broker_epoch: int | None = None, leader_epoch: int | None = None, partition_epoch: int | None = None,
             isr: tuple[int, ...] | None = None, leader_recovery_state: int = 0, version: int | None = None,
             **topic_fields) -> AlterPartitionRequest:
    leader = state["leader"] if leader is None else leader
    if broker_epoch is None:
        broker_epoch = cluster.broker(leader).broker_epoch if leader in cluster.live_broker_ids() else 0
    return AlterPartitionRequest(broker_id=leader, broker_epoch=broker_epoch, version=version, topics=(AlterPartitionTopicData(
        topic_name=topic, **topic_fields, partitions=(AlterPartitionPartitionData(
            partition_index=partition,
            leader_epoch=state["leader_epoch"] if leader_epoch is None else leader_epoch,
            partition_epoch=state["partition_epoch"] if partition_epoch is None else partition_epoch,
            new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in (state["isr"] if isr is None else isr)),
            leader_recovery_state=leader_recovery_state),)),))


async def _errors(cluster: Cluster, request: AlterPartitionRequest) -> tuple[Errors, Errors | None]:
    response = await cluster.send(cluster.controller_id(), request)
    top = Errors.for_code(response.error_code)
    if not response.topics:
        return top, None
    return top, Errors.for_code(response.topics[0].partitions[0].error_code)


async def test_alter_partition_errors():
    """Mirrors ControllerIntegrationTest#testAlterPartitionErrors (the version-independent cases):
    the epoch checks come before the recovery-state checks, and leader recovery state 25 is a
    top-level UNKNOWN_SERVER_ERROR that leaves the partition state untouched and the controller up."""
    async with Cluster(brokers=2, metadata_mode="zk", seed=1) as cluster:
        state = await _cluster_with_topic(cluster)
        leader, leader_epoch, partition_epoch = state["leader"], state["leader_epoch"], state["partition_epoch"]
        live_epoch = cluster.broker(leader).broker_epoch
        cases = [
            (dict(broker_epoch=live_epoch - 1), (Errors.STALE_BROKER_EPOCH, None)),
            (dict(leader=99, broker_epoch=5), (Errors.STALE_BROKER_EPOCH, None)),
            (dict(topic="unknown"), (Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION)),
            (dict(partition=1), (Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION)),
            (dict(isr=(leader,), partition_epoch=partition_epoch - 1), (Errors.NONE, Errors.INVALID_UPDATE_VERSION)),
            (dict(partition_epoch=partition_epoch + 1), (Errors.NONE, Errors.NOT_CONTROLLER)),
            (dict(leader_epoch=leader_epoch - 1), (Errors.NONE, Errors.FENCED_LEADER_EPOCH)),
            (dict(leader_epoch=leader_epoch + 1), (Errors.NONE, Errors.NOT_CONTROLLER)),
            (dict(leader_recovery_state=1), (Errors.NONE, Errors.INVALID_REQUEST)),
            (dict(leader_recovery_state=1, isr=(leader,)), (Errors.NONE, Errors.INVALID_REQUEST)),
            (dict(leader_recovery_state=1, partition_epoch=partition_epoch - 1), (Errors.NONE, Errors.INVALID_UPDATE_VERSION)),
            (dict(leader_recovery_state=1, partition_epoch=partition_epoch + 1), (Errors.NONE, Errors.NOT_CONTROLLER)),
            (dict(leader_recovery_state=1, leader_epoch=leader_epoch - 1), (Errors.NONE, Errors.FENCED_LEADER_EPOCH)),
            (dict(leader_recovery_state=1, leader_epoch=leader_epoch + 1), (Errors.NONE, Errors.NOT_CONTROLLER)),
            (dict(leader_recovery_state=25), (Errors.UNKNOWN_SERVER_ERROR, None)),
        ]
        for fields, expected in cases:
            assert await _errors(cluster, _request(cluster, state, **fields)) == expected, fields
        # Nothing was written and the controller still serves: the next valid proposal commits.
        assert cluster.partition_state("t", 0) == state
        follower = next(b for b in state["isr"] if b != leader)
        response = await cluster.send(cluster.controller_id(), _request(cluster, state, isr=(leader,)))
        p = response.topics[0].partitions[0]
        assert (p.error_code, p.leader_id, p.leader_epoch, tuple(p.isr), p.partition_epoch) == (
            0, leader, leader_epoch, (leader,), partition_epoch + 1)
        assert cluster.partition_state("t", 0)["isr"] == [leader]
        assert follower in cluster.live_broker_ids()
        assert cluster.active_controller().event_manager.failed_events == []


class _Boom(ControllerEvent):
    name = "Boom"

    def process(self, controller) -> None:
        raise RuntimeError("boom")


class _Mark(ControllerEvent):
    name = "Mark"

    def __init__(self, seen: list) -> None:
        self.seen = seen

    def process(self, controller) -> None:
        self.seen.append("mark")


async def test_controller_event_thread_survives_a_failing_event():
    """Mirrors ControllerEventManagerTest#testEventThatThrowsException: an event that raises is
    logged and counted, and the next event is processed."""
    import anyio

    manager = ControllerEventManager(0, processor=None)
    seen: list = []
    manager.put(_Boom())
    manager.put(_Mark(seen))
    async with anyio.create_task_group() as tg:
        tg.start_soon(manager.run)
        while not seen:
            await anyio.sleep(0.001)
        tg.cancel_scope.cancel()
    assert manager.processed == ["Boom", "Mark"]
    assert manager.failed_events == [("Boom", "RuntimeError('boom')")]
    assert seen == ["mark"]


# ------------------------------------------------------------------------------ topic ids by request version


async def test_alter_partition_topic_ids_by_version():
    """Mirrors ControllerIntegrationTest#testAlterPartitionErrors' version cases (KIP-841, Kafka 3.7): versions
    2+ name topics by id (an unknown id is UNKNOWN_TOPIC_ID, the name riding along is ignored), 0-1 by name;
    a replica that is not alive proposed for the ISR is INELIGIBLE_REPLICA from version 2 and
    OPERATION_NOT_ATTEMPTED before."""
    from kafka_ref.common.uuid import Uuid

    async with Cluster(brokers=3, metadata_mode="zk", seed=2) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1]})
        state = cluster.partition_state("t", 0)
        topic_id = cluster.active_controller().controller_context.topic_ids["t"]
        stray = Uuid(5, 5)
        assert await _errors(cluster, _request(cluster, state, topic_id=stray)) == (Errors.NONE, Errors.UNKNOWN_TOPIC_ID)
        # Version 1 names by name: the stray id is ignored and the proposal is judged on its merits.
        v1 = await _errors(cluster, _request(cluster, state, leader_epoch=state["leader_epoch"] - 1, topic_id=stray, version=1))
        assert v1 == (Errors.NONE, Errors.FENCED_LEADER_EPOCH)
        assert await _errors(cluster, _request(cluster, state, topic="x", version=1)) == (Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        # Version 2+: the id names the topic even under a wrong name.
        v3 = await _errors(cluster, _request(cluster, state, topic="x", topic_id=topic_id, leader_epoch=state["leader_epoch"] - 1))
        assert v3 == (Errors.NONE, Errors.FENCED_LEADER_EPOCH)
        # Broker 2 is alive but no replica: proposing broker 5 (not alive) is ineligible.
        for version, expected in ((1, Errors.OPERATION_NOT_ATTEMPTED), (2, Errors.INELIGIBLE_REPLICA), (3, Errors.INELIGIBLE_REPLICA)):
            request = _request(cluster, state, isr=(state["leader"], 5), topic_id=topic_id, version=version)
            assert (request.request_version(), await _errors(cluster, request)) == (version, (Errors.NONE, expected))
        assert cluster.partition_state("t", 0) == state


def test_quorum_controller_alter_partition_topic_ids_by_version():
    """Mirrors ReplicationControlManagerTest#testAlterPartitionHandleUnknownTopicIdOrName and
    #testAlterPartitionShouldRejectFencedBrokers (Kafka 3.7; version 1 → OPERATION_NOT_ATTEMPTED, 2+ → INELIGIBLE_REPLICA)."""
    from test_kraft_cluster import FakeEnvelope, controller_with_topic, handle

    from kafka_ref.common.uuid import Uuid
    from kafka_ref.controller.quorum.quorum_controller import ControllerResult

    controller, _time, epochs, topic_id = controller_with_topic()

    def error(*, topic="t", tid=topic_id, version=None, isr=(0, 1, 2), partition_epoch=0):
        request = AlterPartitionRequest(broker_id=0, broker_epoch=epochs[0], version=version, topics=(AlterPartitionTopicData(
            topic_name=topic, topic_id=tid, partitions=(AlterPartitionPartitionData(
                partition_index=0, leader_epoch=0, partition_epoch=partition_epoch,
                new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in isr)),)),))
        env = FakeEnvelope(request)
        handle(controller, env)
        return Errors.for_code(env.response.topics[0].partitions[0].error_code)

    assert error(tid=Uuid(3, 3)) is Errors.UNKNOWN_TOPIC_ID
    assert error(topic="nope", tid=topic_id, version=1) is Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert error(topic="nope", tid=Uuid(3, 3), version=2) is Errors.UNKNOWN_TOPIC_ID
    # Broker 2 fenced: it cannot join the ISR; the code depends on the version.
    assert error(isr=(0, 1)) is Errors.NONE
    records: list = []
    controller.replication_control.handle_broker_fenced(2, records)
    controller._write("fence", ControllerResult(records, None), lambda _r: None)
    pe = controller.partition_state("t", 0)["partition_epoch"]
    assert error(isr=(0, 1, 2), partition_epoch=pe, version=1) is Errors.OPERATION_NOT_ATTEMPTED
    assert error(isr=(0, 1, 2), partition_epoch=pe, version=2) is Errors.INELIGIBLE_REPLICA
    assert error(isr=(0, 1, 2), partition_epoch=pe) is Errors.INELIGIBLE_REPLICA


def test_quorum_controller_survives_unknown_leader_recovery_state():
    """Mirrors QuorumController#handleEventException (Kafka 3.7): LeaderRecoveryState.of(25) fails the
    AlterPartition with UNKNOWN_SERVER_ERROR for the whole request, nothing is written, and the controller
    answers the next request (kafka_ref does not renounce, see QuorumController#handle)."""
    from test_kraft_cluster import FakeEnvelope, controller_with_topic, handle

    controller, _time, epochs, topic_id = controller_with_topic()
    before = controller.partition_state("t", 0)

    def send(recovery):
        request = AlterPartitionRequest(broker_id=0, broker_epoch=epochs[0], topics=(AlterPartitionTopicData(
            topic_name="t", topic_id=topic_id, partitions=(AlterPartitionPartitionData(
                partition_index=0, leader_epoch=0, partition_epoch=0, leader_recovery_state=recovery,
                new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in (0, 1))),)),))
        env = FakeEnvelope(request)
        handle(controller, env)
        return env.response

    response = send(25)
    assert (Errors.for_code(response.error_code), response.topics) == (Errors.UNKNOWN_SERVER_ERROR, ())
    assert controller.partition_state("t", 0) == before
    p = send(0).topics[0].partitions[0]
    assert (p.error_code, tuple(p.isr), p.partition_epoch) == (0, (0, 1), 1)
