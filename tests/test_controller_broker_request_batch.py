"""ControllerBrokerRequestBatch: what the controller sends to which broker, exactly.

Mirrors kafka.controller.ControllerChannelManagerTest (Kafka 3.x), the tests of
AbstractControllerBrokerRequestBatch; each test names the Kafka test it follows. Requests are
captured by a recording ``send_request`` and compared whole.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
)
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
)
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
from kafka_ref.controller.controller_context import ControllerContext, IllegalStateException
from kafka_ref.zk.zk_data import (
    BrokerInfo,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
    ReplicaAssignment,
)

CONTROLLER_ID = 1
CONTROLLER_EPOCH = 7
FOO_ID = Uuid.from_string("zWE-MNjxSt-Rt1hKImWx9Q")
FOO0, FOO1, FOO2 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("foo", 2)


def broker(b: int) -> BrokerInfo:
    return BrokerInfo(b, f"host{b}", 9090 + b, rack=f"r{b}")


def live_brokers(*ids: int) -> tuple[UpdateMetadataBroker, ...]:
    return tuple(UpdateMetadataBroker(id=b, endpoints=(UpdateMetadataEndpoint(
        port=9090 + b, host=f"host{b}", listener="PLAINTEXT", security_protocol=0),), rack=f"r{b}") for b in ids)


class Env:
    """A context with brokers 1-3 (epochs 11-13), topic foo (3 partitions) with leaders, and a batch."""

    def __init__(self, ibp: str | None = None, **hooks: Any) -> None:
        self.config = KafkaConfig({"broker.id": CONTROLLER_ID})
        self.ctx = ControllerContext()
        self.ctx.epoch = CONTROLLER_EPOCH
        self.ctx.set_live_brokers({broker(b): 10 + b for b in (1, 2, 3)})
        self.ctx.set_all_topics({"foo"})
        self.ctx.add_topic_id("foo", FOO_ID)
        for tp, replicas in ((FOO0, (1, 2, 3)), (FOO1, (2, 3, 1)), (FOO2, (3, 1, 4))):
            self.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
            lai = LeaderAndIsr(replicas[0], 5, replicas[:2], LeaderRecoveryState.RECOVERED, 9)
            self.ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(lai, 6))
        self.sent: list[tuple[int, Any, Any]] = []
        provider = (lambda: MetadataVersion.parse(ibp)) if ibp else None
        self.batch = ControllerBrokerRequestBatch(
            self.config, lambda b, request, callback: self.sent.append((b, request, callback)),
            state_change_logger(controller_id=CONTROLLER_ID), self.ctx, provider, **hooks)

    def info(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch:
        return self.ctx.partition_leadership_info[tp]

    def requests(self, kind: type) -> list[tuple[int, Any]]:
        return [(b, r) for b, r, _ in self.sent if isinstance(r, kind)]


def foo0_metadata(**overrides: Any) -> UpdateMetadataPartitionState:
    values = dict(topic_name="foo", partition_index=0, controller_epoch=6, leader=1, leader_epoch=5, isr=(1, 2),
                  zk_version=9, replicas=(1, 2, 3), offline_replicas=())
    values.update(overrides)
    return UpdateMetadataPartitionState(**values)


# ---- LeaderAndIsr ------------------------------------------------------------------------------

def test_leader_and_isr_request_sent() -> None:
    """Mirrors ControllerChannelManagerTest#testLeaderAndIsrRequestSent."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO1, env.info(FOO1), ReplicaAssignment((2, 3, 1)), False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    # One LeaderAndIsr to broker 2, then UpdateMetadata of both partitions to every broker.
    assert [(b, type(r).__name__) for b, r, _ in env.sent] == [
        (2, "LeaderAndIsrRequest"), (1, "UpdateMetadataRequest"), (2, "UpdateMetadataRequest"),
        (3, "UpdateMetadataRequest")]
    expected_states = (
        LeaderAndIsrPartitionState(topic_name="foo", partition_index=0, controller_epoch=6, leader=1, leader_epoch=5,
                                   isr=(1, 2), partition_epoch=9, replicas=(1, 2, 3), is_new=False),
        LeaderAndIsrPartitionState(topic_name="foo", partition_index=1, controller_epoch=6, leader=2, leader_epoch=5,
                                   isr=(2, 3), partition_epoch=9, replicas=(2, 3, 1), is_new=False),
    )
    assert env.sent[0][1] == LeaderAndIsrRequest.build(
        controller_id=1, controller_epoch=7, broker_epoch=12, partition_states=expected_states,
        topic_ids={"foo": FOO_ID},
        live_leaders=(LeaderAndIsrLiveLeader(broker_id=1, host_name="host1", port=9091),
                      LeaderAndIsrLiveLeader(broker_id=2, host_name="host2", port=9092)))
    assert env.sent[0][1].topic_states[0].topic_id == FOO_ID
    assert env.sent[0][2] is None  # no hook: the channel decides what to do with the answer
    assert env.batch.leader_and_isr_request_map == {}


def test_leader_and_isr_request_is_new() -> None:
    """Mirrors ControllerChannelManagerTest#testLeaderAndIsrRequestIsNew: is_new sticks."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), True)
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request)] = env.requests(LeaderAndIsrRequest)
    assert [s.is_new for s in request.partition_states()] == [True]


def test_leader_and_isr_request_sent_to_live_or_shutting_down_brokers() -> None:
    """Mirrors ControllerChannelManagerTest#testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers."""
    env = Env()
    env.ctx.shutting_down_broker_ids.add(3)
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([1, 3, 4, -1], FOO0, env.info(FOO0),
                                                     ReplicaAssignment((1, 2, 3)), False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    # Broker 4 is not alive and -1 is "no broker": neither gets a request.
    assert [(b, r.broker_epoch) for b, r in env.requests(LeaderAndIsrRequest)] == [(1, 11), (3, 13)]
    assert [b for b, _ in env.requests(UpdateMetadataRequest)] == [1, 2, 3]


def test_leader_and_isr_recovery_state_from_ibp_3_2() -> None:
    """Mirrors ControllerChannelManagerTest#testLeaderAndIsrInterBrokerProtocolVersion (recovery state only from 3.2)."""
    for ibp, expected in (("3.1", 0), ("3.2", 1), ("3.8", 1)):
        env = Env(ibp)
        info = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 6, (1,), LeaderRecoveryState.RECOVERING, 10), 7)
        env.batch.new_batch()
        env.batch.add_leader_and_isr_request_for_brokers([1], FOO0, info, ReplicaAssignment((1, 2, 3)), False)
        env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
        [(_, request)] = env.requests(LeaderAndIsrRequest)
        assert [s.leader_recovery_state for s in request.partition_states()] == [expected], ibp


def test_leader_and_isr_carries_reassignment_and_zero_uuid_for_unknown_topic() -> None:
    env = Env()
    bar0 = TopicPartition("bar", 0)
    assignment = ReplicaAssignment((1, 2, 3, 4), adding_replicas=(4,), removing_replicas=(1,))
    info = LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (1, 2, 3)), 7)
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], bar0, info, assignment, False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request)] = env.requests(LeaderAndIsrRequest)
    assert request.topic_ids() == {"bar": ZERO_UUID}
    [state] = request.partition_states()
    assert (state.replicas, state.adding_replicas, state.removing_replicas) == ((1, 2, 3, 4), (4,), (1,))
    # bar-0 has no cached leader: it is left out of UpdateMetadata, which still goes to everyone.
    assert [(b, r.topic_states) for b, r in env.requests(UpdateMetadataRequest)] == [(1, ()), (2, ()), (3, ())]


def test_leader_and_isr_response_hook() -> None:
    seen: list[tuple[Any, int]] = []
    env = Env(leader_and_isr_response_callback=lambda response, b: seen.append((response, b)))
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2, 3], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    callbacks = [(b, cb) for b, r, cb in env.sent if isinstance(r, LeaderAndIsrRequest)]
    response = LeaderAndIsrResponse(error_code=0)
    for _, cb in callbacks:
        cb(response)
    assert seen == [(response, 2), (response, 3)]


# ---- UpdateMetadata ----------------------------------------------------------------------------

def test_update_metadata_request_sent() -> None:
    """Mirrors ControllerChannelManagerTest#testUpdateMetadataRequestSent."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([2, 3], {FOO2, FOO0})
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    topic_state = UpdateMetadataTopicState(topic_name="foo", topic_id=FOO_ID, partition_states=(
        foo0_metadata(),
        UpdateMetadataPartitionState(topic_name="foo", partition_index=2, controller_epoch=6, leader=3, leader_epoch=5,
                                     isr=(3, 1), zk_version=9, replicas=(3, 1, 4), offline_replicas=(4,)),
    ))
    assert [(b, r) for b, r, _ in env.sent] == [
        (b, UpdateMetadataRequest(controller_id=1, controller_epoch=7, broker_epoch=10 + b, topic_states=(topic_state,),
                                  live_brokers=live_brokers(1, 2, 3)))
        for b in (2, 3)]


def test_update_metadata_request_during_topic_deletion() -> None:
    """Mirrors ControllerChannelManagerTest#testUpdateMetadataRequestDuringTopicDeletion."""
    env = Env()
    env.ctx.queue_topic_deletion({"foo"})
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([1], [FOO0])
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request)] = env.requests(UpdateMetadataRequest)
    assert list(request.partition_states()) == [foo0_metadata(leader=-2, leader_epoch=0, zk_version=0)]


def test_update_metadata_does_not_include_partitions_without_leader_and_isr() -> None:
    """Mirrors ControllerChannelManagerTest#testUpdateMetadataDoesNotIncludePartitionsWithoutLeaderAndIsr."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([1, 2], [TopicPartition("bar", 0), TopicPartition("bar", 1)])
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [(b, r.topic_states) for b, r in env.requests(UpdateMetadataRequest)] == [(1, ()), (2, ())]


def test_update_metadata_includes_live_or_shutting_down_brokers() -> None:
    """Mirrors ControllerChannelManagerTest#testUpdateMetadataIncludesLiveOrShuttingDownBrokers."""
    env = Env()
    env.ctx.shutting_down_broker_ids.add(2)
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([1, 2, 3, 4])
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    requests = env.requests(UpdateMetadataRequest)
    assert [b for b, _ in requests] == [1, 2, 3]
    assert {r.live_brokers for _, r in requests} == {live_brokers(1, 2, 3)}


def test_update_metadata_offline_replica_on_offline_log_dir() -> None:
    env = Env()
    env.ctx.replicas_on_offline_dirs[2] = {FOO0}
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([1], [FOO0])
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request)] = env.requests(UpdateMetadataRequest)
    assert list(request.partition_states()) == [foo0_metadata(offline_replicas=(2,))]


# ---- StopReplica -------------------------------------------------------------------------------

def stop_request(broker_id: int, *topic_states: StopReplicaTopicState) -> StopReplicaRequest:
    return StopReplicaRequest(controller_id=1, controller_epoch=7, broker_epoch=10 + broker_id, topic_states=topic_states)


def test_stop_replica_request_sent() -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaRequestSent."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=False)
    env.batch.add_stop_replica_request_for_brokers([2], FOO1, delete_partition=True)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [(b, r) for b, r, _ in env.sent] == [(2, stop_request(2, StopReplicaTopicState(
        topic_name="foo", partition_states=(
            StopReplicaPartitionState(partition_index=0, leader_epoch=5, delete_partition=False),
            StopReplicaPartitionState(partition_index=1, leader_epoch=5, delete_partition=True)))))]


def test_stop_replica_requests_while_topic_queued_for_deletion() -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaRequestsWhileTopicQueuedForDeletion."""
    env = Env()
    env.ctx.queue_topic_deletion({"foo"})
    env.batch.new_batch()
    env.batch.add_stop_replica_request_for_brokers([1, 2], FOO0, delete_partition=True)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [(b, [s.leader_epoch for s in r.partition_states().values()]) for b, r, _ in env.sent] == [
        (1, [LeaderAndIsr.EPOCH_DURING_DELETE]), (2, [LeaderAndIsr.EPOCH_DURING_DELETE])]


def test_stop_replica_request_without_leader_uses_no_epoch() -> None:
    env = Env()
    env.batch.new_batch()
    env.batch.add_stop_replica_request_for_brokers([1], TopicPartition("bar", 0), delete_partition=False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request, _)] = env.sent
    assert request.partition_states() == {
        TopicPartition("bar", 0): StopReplicaPartitionState(partition_index=0, leader_epoch=-1, delete_partition=False)}


def test_stop_replica_request_with_already_defined_deleted_partition() -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaRequestWithAlreadyDefinedDeletedPartition."""
    env = Env()
    env.batch.new_batch()
    env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=True)
    env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request, _)] = env.sent
    assert [s.delete_partition for s in request.partition_states().values()] == [True]


def test_stop_replica_groups_by_broker_and_sent_only_to_live_or_shutting_down() -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaGroupsByBroker and
    #testStopReplicaSentOnlyToLiveAndShuttingDownBrokers."""
    env = Env()
    env.ctx.shutting_down_broker_ids.add(3)
    env.batch.new_batch()
    for tp in (FOO0, FOO1, TopicPartition("bar", 0)):
        env.batch.add_stop_replica_request_for_brokers([3, 2, 4], tp, delete_partition=False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [b for b, _, _ in env.sent] == [2, 3]
    assert env.sent[0][1] == stop_request(
        2,
        StopReplicaTopicState(topic_name="foo", partition_states=(
            StopReplicaPartitionState(partition_index=0, leader_epoch=5),
            StopReplicaPartitionState(partition_index=1, leader_epoch=5))),
        StopReplicaTopicState(topic_name="bar", partition_states=(
            StopReplicaPartitionState(partition_index=0, leader_epoch=-1),)))
    assert env.batch.stop_replica_request_map == {}


def test_stop_replica_response_callback_reports_only_deleting_topics() -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaRequestsWhileTopicDeletionStarted (the callback part)."""
    reported: list[tuple[int, dict]] = []
    env = Env(stop_replica_response_callback=lambda response, b, errors: reported.append((b, errors)))
    env.batch.new_batch()
    env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=True)
    env.batch.add_stop_replica_request_for_brokers([2], FOO1, delete_partition=False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, _, callback)] = env.sent
    response = StopReplicaResponse(partition_errors=(
        StopReplicaPartitionError(topic_name="foo", partition_index=0, error_code=Errors.KAFKA_STORAGE_ERROR.code),
        StopReplicaPartitionError(topic_name="foo", partition_index=1, error_code=0)))
    # Deletion has not started: nothing is reported.
    callback(response)
    assert reported == []
    # Once it has, only the partition deleted by this request is reported.
    env.ctx.queue_topic_deletion({"foo"})
    env.ctx.begin_topic_deletion({"foo"})
    callback(response)
    assert reported == [(2, {FOO0: Errors.KAFKA_STORAGE_ERROR})]


# ---- batch life cycle --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["leader_and_isr", "stop_replica", "update_metadata"])
def test_new_batch_refuses_to_drop_unsent_requests(kind: str) -> None:
    """Mirrors AbstractControllerBrokerRequestBatch#newBatch's three checks."""
    env = Env()
    env.batch.new_batch()
    if kind == "leader_and_isr":
        env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
        message = r"Some LeaderAndIsr state changes \{2: \['foo-0'\]\} might be lost"
    elif kind == "stop_replica":
        env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=False)
        message = r"Some StopReplica state changes \{2: \['foo-0'\]\} might be lost"
    else:
        env.batch.add_update_metadata_request_for_brokers([2], [FOO0])
        message = r"Some UpdateMetadata state changes to brokers \[2\] with partition info \['foo-0'\] might be lost"
    with pytest.raises(IllegalStateException, match=message):
        env.batch.new_batch()
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    env.batch.new_batch()  # sent: a new batch is fine


def test_clear_forgets_everything() -> None:
    env = Env()
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
    env.batch.add_stop_replica_request_for_brokers([2], FOO0, delete_partition=False)
    env.batch.clear()
    env.batch.new_batch()
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert env.sent == []


def test_send_failure_is_rethrown_as_illegal_state() -> None:
    env = Env()

    def failing(b: int, request: Any, callback: Any) -> None:
        raise RuntimeError("channel closed")

    env.batch.send_request = failing
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], FOO0, env.info(FOO0), ReplicaAssignment((1, 2, 3)), False)
    with pytest.raises(IllegalStateException, match="channel closed"):
        env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)


def test_broker_known_only_by_id_is_named_without_endpoint() -> None:
    env = Env()
    env.ctx.add_live_brokers({5: 15})
    info = LeaderIsrAndControllerEpoch(LeaderAndIsr(5, 0, (5,)), 7)
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([5], FOO0, info, ReplicaAssignment((5,)), True)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [(_, request)] = env.requests(LeaderAndIsrRequest)
    assert (request.broker_epoch, request.live_leaders) == (15, (LeaderAndIsrLiveLeader(broker_id=5, host_name="", port=0),))
    assert env.requests(UpdateMetadataRequest)[0][1].live_brokers == live_brokers(1, 2, 3)
