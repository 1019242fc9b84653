"""The control requests' versions per inter.broker.protocol.version, and StopReplica before version 3.

Mirrors the IBP tests of kafka.controller.ControllerChannelManagerTest (Kafka 3.8) that
tests/test_controller_broker_request_batch.py does not hold. Kafka's tests walk every
MetadataVersion; kafka_ref compares IBPs by release, so each release stands for its last IV
("2.4" is IBP_2_4_IV1, "2.8" is IBP_2_8_IV1), as the plain version strings do in Kafka.
The request a broker receives here is the object the controller built, so a field a version
cannot carry is left at the value the broker would read off the wire (topic ids ZERO_UUID,
StopReplica leader epochs -1).
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
)
from kafka_ref.common.requests.update_metadata import UpdateMetadataRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.zk.zk_data import (
    BrokerInfo,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
    ReplicaAssignment,
)

CONTROLLER_ID = 1
CONTROLLER_EPOCH = 1
IBPS = ["0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5",
        "2.6", "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8"]
TOPIC_IDS = {"foo": Uuid.from_string("zWE-MNjxSt-Rt1hKImWx9Q"), "bar": Uuid.from_string("vDi76-KnTxGzgLPsrvR1GQ")}


class Env:
    """ControllerChannelManagerTest#initContext(Seq(1, 2, 3), 2 partitions, RF 3, foo and bar) and
    a MockControllerBrokerRequestBatch made with the given IBP."""

    def __init__(self, ibp: str | None = None, with_hook: bool = False) -> None:
        self.config = KafkaConfig({"broker.id": CONTROLLER_ID, **({"inter.broker.protocol.version": ibp} if ibp else {})})
        self.ctx = ControllerContext()
        self.ctx.set_live_brokers({BrokerInfo(b, "localhost", 9090 + b): 1 for b in (1, 2, 3)})
        self.ctx.set_all_topics(set(TOPIC_IDS))
        leader_index = 0
        for topic in sorted(TOPIC_IDS):
            self.ctx.add_topic_id(topic, TOPIC_IDS[topic])
            for p in range(2):
                replicas = tuple((1, 2, 3)[(i + leader_index) % 3] for i in range(3))
                self.ctx.update_partition_full_replica_assignment(TopicPartition(topic, p), ReplicaAssignment(replicas))
                leader_index += 1
        self.sent: list[tuple[int, Any, Any]] = []
        self.events: list[tuple[int, dict]] = []
        hook = (lambda response, b, errors: self.events.append((b, errors))) if with_hook else None
        self.batch = ControllerBrokerRequestBatch(
            self.config, lambda b, request, callback: self.sent.append((b, request, callback)),
            state_change_logger(controller_id=CONTROLLER_ID), self.ctx, stop_replica_response_callback=hook)

    def requests(self, kind: type, broker: int) -> list[Any]:
        return [r for b, r, _ in self.sent if isinstance(r, kind) and b == broker]

    def stop_replicas(self, partitions: dict[TopicPartition, tuple[int, bool]]) -> None:
        """Put each partition's leader (epoch 0, empty ISR) in the context and ask broker 2 to stop it."""
        self.batch.new_batch()
        for tp, (leader, delete) in partitions.items():
            self.ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, ()), CONTROLLER_EPOCH))
            self.batch.add_stop_replica_request_for_brokers([2], tp, delete)
        self.batch.send_requests_to_brokers(CONTROLLER_EPOCH)


def expected_stop_states(partitions: dict[TopicPartition, tuple[int, bool]], version: int,
                         queued_for_deletion: set[str] = frozenset()) -> dict[TopicPartition, StopReplicaPartitionState]:
    """ControllerChannelManagerTest#partitionStates: leader epochs only from version 3."""
    return {tp: StopReplicaPartitionState(
        partition_index=tp.partition, delete_partition=delete,
        leader_epoch=(LeaderAndIsr.EPOCH_DURING_DELETE if tp.topic in queued_for_deletion else 0) if version >= 3 else -1)
        for tp, (_leader, delete) in partitions.items()}


def leader_and_isr_version(ibp: str) -> int:
    v = KafkaConfig({"broker.id": 1, "inter.broker.protocol.version": ibp}).inter_broker_protocol_version
    for since, version in (("3.4", 7), ("3.2", 6), ("2.8", 5), ("2.4", 4), ("2.2", 2), ("1.0", 1)):
        if v.is_at_least(since):
            return version
    return 0


@pytest.mark.parametrize("ibp", [None, *IBPS])
def test_leader_and_isr_inter_broker_protocol_version(ibp: str | None) -> None:
    """Mirrors ControllerChannelManagerTest#testLeaderAndIsrInterBrokerProtocolVersion.

    The version follows the IBP; the leader recovery state travels from version 6 (IBP 3.2) and
    the topic ids from version 5 (IBP 2.8).
    """
    env = Env(ibp)
    expected_version = 7 if ibp is None else leader_and_isr_version(ibp)
    recovering = ibp is None or env.config.inter_broker_protocol_version.is_at_least("3.2")
    foo0 = TopicPartition("foo", 0)
    lai = LeaderAndIsr(1, 0, (1, 2), LeaderRecoveryState.RECOVERING if recovering else LeaderRecoveryState.RECOVERED)
    info = LeaderIsrAndControllerEpoch(lai, CONTROLLER_EPOCH)
    env.ctx.put_partition_leadership_info(foo0, info)
    env.batch.new_batch()
    env.batch.add_leader_and_isr_request_for_brokers([2], foo0, info, ReplicaAssignment((1, 2, 3)), False)
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    [request] = env.requests(LeaderAndIsrRequest, 2)
    assert request.version == expected_version
    assert [s.leader_recovery_state for s in request.partition_states()] == [1 if recovering else 0]
    assert request.topic_ids() == {"foo": TOPIC_IDS["foo"] if expected_version >= 5 else ZERO_UUID}


@pytest.mark.parametrize("ibp", [None, *IBPS])
def test_update_metadata_inter_broker_protocol_version(ibp: str | None) -> None:
    """Mirrors ControllerChannelManagerTest#testUpdateMetadataInterBrokerProtocolVersion (topic ids from version 7)."""
    env = Env(ibp)
    expected = {None: 8, "0.9.0": 1, "0.10.0": 2, "0.10.1": 2, "0.10.2": 3, "0.11.0": 3, "1.0": 4, "1.1": 4, "2.0": 4,
                "2.1": 4, "2.2": 5, "2.3": 5, "2.4": 6, "2.5": 6, "2.6": 6, "2.7": 6, "2.8": 7, "3.0": 7, "3.1": 7,
                "3.2": 7, "3.3": 7}.get(ibp, 8)
    foo0 = TopicPartition("foo", 0)
    env.ctx.put_partition_leadership_info(foo0, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), CONTROLLER_EPOCH))
    env.batch.new_batch()
    env.batch.add_update_metadata_request_for_brokers([2], {foo0})
    env.batch.send_requests_to_brokers(CONTROLLER_EPOCH)
    assert [b for b, _, _ in env.sent] == [2]
    [request] = env.requests(UpdateMetadataRequest, 2)
    assert request.version == expected
    assert [(t.topic_name, t.topic_id) for t in request.topic_states] == [
        ("foo", TOPIC_IDS["foo"] if expected >= 7 else ZERO_UUID)]


@pytest.mark.parametrize("ibp", [None, *IBPS])
def test_stop_replica_inter_broker_protocol_version(ibp: str | None) -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaInterBrokerProtocolVersion."""
    env = Env(ibp)
    v = env.config.inter_broker_protocol_version
    expected = (4 if v.is_at_least("3.4") else 3 if v.is_at_least("2.6") else 2 if v.is_at_least("2.4")
                else 1 if v.is_at_least("2.2") else 0)
    env.stop_replicas({TopicPartition("foo", 0): (1, False)})
    assert [b for b, _, _ in env.sent] == [2]
    assert [r.version for r in env.requests(StopReplicaRequest, 2)] == [expected]


@pytest.mark.parametrize("ibp", IBPS)
def test_stop_replica_request_without_delete_partition_while_topic_deletion_started(ibp: str) -> None:
    """Mirrors ControllerChannelManagerTest#testStopReplicaRequestWithoutDeletePartitionWhileTopicDeletionStarted.

    Stopping without deleting, even for a topic being deleted, tells the deletion manager nothing.
    """
    env = Env(ibp, with_hook=True)
    partitions = {TopicPartition("foo", 0): (1, False), TopicPartition("foo", 1): (2, False),
                  TopicPartition("bar", 1): (3, False)}
    env.ctx.queue_topic_deletion({"foo"})
    env.ctx.begin_topic_deletion({"foo"})
    env.stop_replicas(partitions)
    assert [b for b, _, _ in env.sent] == [2]
    [(_, request, callback)] = env.sent
    assert request.partition_states() == expected_stop_states(partitions, request.version, {"foo"})
    if callback is not None:
        callback(StopReplicaResponse(partition_errors=tuple(
            StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition) for tp in partitions)))
    assert env.events == []


@pytest.mark.parametrize("ibp", [None, *IBPS])
def test_mixed_delete_and_not_delete_stop_replica_requests(ibp: str | None) -> None:
    """Mirrors ControllerChannelManagerTest#testMixedDeleteAndNotDeleteStopReplicaRequests.

    From IBP 2.6 one request carries both kinds; before, the deletions go first in a request of
    their own and the rest in a second one.
    """
    env = Env(ibp)
    deletes = {TopicPartition("foo", 0): (1, True), TopicPartition("foo", 1): (2, True)}
    non_deletes = {TopicPartition("bar", 0): (1, False), TopicPartition("bar", 1): (2, False)}
    env.stop_replicas({**deletes, **non_deletes})
    requests = env.requests(StopReplicaRequest, 2)
    assert [b for b, _, _ in env.sent] == [2] * len(requests)
    if ibp is None or env.config.inter_broker_protocol_version.is_at_least("2.6"):
        [request] = requests
        assert request.partition_states() == expected_stop_states({**deletes, **non_deletes}, request.version)
    else:
        with_delete, without_delete = requests
        assert with_delete.partition_states() == expected_stop_states(deletes, with_delete.version)
        assert without_delete.partition_states() == expected_stop_states(non_deletes, without_delete.version)


def test_stop_replica_with_delete_before_version_3_reports_deletion_errors() -> None:
    """The callback of a pre-version-3 StopReplica(delete=true) reports each deleted partition of a
    topic being deleted (sendStopReplicaRequests's responseCallback with ``_ => true``); the
    request without delete has no callback."""
    env = Env("2.5", with_hook=True)
    env.ctx.queue_topic_deletion({"foo"})
    env.ctx.begin_topic_deletion({"foo"})
    env.stop_replicas({TopicPartition("foo", 0): (1, True), TopicPartition("bar", 0): (1, False)})
    (_, with_delete, callback), (_, without_delete, no_callback) = env.sent
    assert [(r.version, list(r.partition_states())) for r in (with_delete, without_delete)] == [
        (2, [TopicPartition("foo", 0)]), (2, [TopicPartition("bar", 0)])]
    assert no_callback is None
    callback(StopReplicaResponse(partition_errors=(StopReplicaPartitionError(
        topic_name="foo", partition_index=0, error_code=Errors.KAFKA_STORAGE_ERROR.code),)))
    assert env.events == [(2, {TopicPartition("foo", 0): Errors.KAFKA_STORAGE_ERROR})]
