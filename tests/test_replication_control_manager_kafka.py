"""Mirrors org.apache.kafka.controller.ReplicationControlManagerTest (Kafka 3.8.0).

The managers run alone, as in Kafka's ReplicationControlTestContext: a FeatureControlManager, a
ConfigurationControlManager, a ClusterControlManager on a MockTime (with Kafka's context's
effective session timeout of 0, see SESSION_TIMEOUT_MS_IN_CONTEXT), and a
ReplicationControlManager (default replication factor 3, one partition). Records the managers
return are replayed by hand. Brokers register at epoch 100 + id; the striped placer draws from a
copy of Kafka's MockRandom (a java.util.Random with MockRandom's generator), so placements are
Kafka's.

Not ported:
- testCreateTopicsWithMutationQuotaExceeded, testCreateTopicsWithValidateOnlyFlag(true),
  testDeleteTopicsWithMutationQuotaExceeded, testCreatePartitionsWithMutationQuotaExceeded:
  controller mutation quotas (KIP-599) are not modelled.
- testCreateTopicsWithPolicy: no CreateTopicPolicy plugin.
- testEligibleLeaderReplicas_* (ShrinkAndExpandIsr, BrokerFence, DeleteTopic, EffectiveMinIsr,
  CleanElection, UncleanShutdown): KIP-966 eligible leader replicas are not modelled.
- testKRaftClusterDescriber, testHandleAssignReplicasToDirsFailsOnOlderMv,
  testHandleAssignReplicasToDirs, testHandleDirectoriesOffline: no KIP-858 log directories.
- testProcessExpiredBrokerHeartbeat: kafka_ref's controller event queue has no deadlines, so there
  is no processExpiredBrokerHeartbeat.
"""

from __future__ import annotations

import random

import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors, InvalidReplicaAssignmentException, StaleBrokerEpochException
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.requests.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignablePartitionResponse,
    ReassignableTopic,
    ReassignableTopicResponse,
)
from kafka_ref.common.requests.broker_requests import BrokerHeartbeatRequest
from kafka_ref.common.requests.create_partitions import CreatePartitionsAssignment, CreatePartitionsTopic
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicResult,
    CreateableTopicConfig,
    CreateTopicsRequest,
)
from kafka_ref.common.requests.elect_leaders import ElectionType, ElectLeadersRequest, TopicPartitions
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsTopics,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.controller.quorum.cluster_control_manager import ClusterControlManager
from kafka_ref.controller.quorum.configuration_control_manager import ConfigurationControlManager, FeatureControlManager
from kafka_ref.controller.quorum.quorum_controller import ControllerResult
from kafka_ref.controller.quorum.replication_broker_changes import BrokerHeartbeatReply
from kafka_ref.controller.quorum.replication_control_manager import ReplicationControlManager
from kafka_ref.controller.reassignment import ApiError
from kafka_ref.image.records import (
    NO_LEADER,
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    ConfigResourceType,
    LeaderRecoveryState,
    MetadataRecordType,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.image.registrations import PartitionRegistration

BROKER_SESSION_TIMEOUT_MS = 1000
# Kafka's context converts those 1000 ms the wrong way round (1000 ns as milliseconds): the session
# timeout the ClusterControlManager gets is 0, so a broker is stale as soon as the clock moves.
SESSION_TIMEOUT_MS_IN_CONTEXT = 0
MASK64 = (1 << 64) - 1


class JavaMockRandom(random.Random):
    """org.apache.kafka.server.util.MockRandom as java.util.Random draws from it (nextInt, Collections.shuffle)."""

    def __init__(self, state: int = 17) -> None:
        super().__init__(0)
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & MASK64
        return self.state >> (64 - bits)

    def next_int(self, bound: int) -> int:
        # java.util.Random#nextInt(int): a power of two scales, else reject the biased tail.
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if ((u - r + m + 2**31) % 2**32) - 2**31 >= 0:
                return r
            u = self._next(31)

    def randrange(self, start, stop=None, step=1):  # type: ignore[override]
        assert stop is None and step == 1
        return self.next_int(start)

    def shuffle(self, x) -> None:  # type: ignore[override]
        # java.util.Collections#shuffle for a random-access list.
        for i in range(len(x), 1, -1):
            j = self.next_int(i)
            x[i - 1], x[j] = x[j], x[i - 1]


def default_broker_epoch(broker_id: int) -> int:
    return broker_id + 100


def isr_with_default_epoch(*isr: int) -> tuple[BrokerState, ...]:
    return tuple(BrokerState(broker_id=b, broker_epoch=default_broker_epoch(b)) for b in isr)


class ReplicationControlTestContext:
    """Mirrors ReplicationControlManagerTest.ReplicationControlTestContext."""

    def __init__(self, metadata_version: str = "3.8", **config) -> None:
        self.time = MockTime()
        self.feature_control = FeatureControlManager(MetadataVersion.parse(metadata_version))
        # (Kafka's test context builds it with KafkaConfigSchema.EMPTY: CreateTopics answers list no configs.)
        self.configuration_control = ConfigurationControlManager(KafkaConfig({"node.id": 0, "process.roles": "controller", **config}),
                                                                 empty_config_schema=True)
        self.cluster_control = ClusterControlManager(self.time, SESSION_TIMEOUT_MS_IN_CONTEXT, JavaMockRandom(),
                                                     self.feature_control, 0)
        self.replication_control = ReplicationControlManager(
            self.cluster_control, self.configuration_control, self.feature_control, random.Random(0), 0,
            default_num_partitions=1, default_replication_factor=3)
        self.cluster_control.activate()

    def replay(self, records) -> None:
        for record in records:
            match record.API_KEY:
                case MetadataRecordType.REGISTER_BROKER_RECORD:
                    self.cluster_control.replay_register(record, 0)
                case (MetadataRecordType.FENCE_BROKER_RECORD | MetadataRecordType.UNFENCE_BROKER_RECORD
                      | MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD):
                    self.cluster_control.replay_fencing(record)
                case MetadataRecordType.CONFIG_RECORD:
                    self.configuration_control.replay(record)
                case MetadataRecordType.TOPIC_RECORD:
                    self.replication_control.replay_topic(record)
                case MetadataRecordType.PARTITION_RECORD:
                    self.replication_control.replay_partition(record)
                case MetadataRecordType.PARTITION_CHANGE_RECORD:
                    self.replication_control.replay_partition_change(record)
                case MetadataRecordType.REMOVE_TOPIC_RECORD:
                    self.replication_control.replay_remove_topic(record)
                case _:
                    raise AssertionError(f"unexpected record {record}")

    def register_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            self.replay([RegisterBrokerRecord(
                broker_id=broker_id, broker_epoch=default_broker_epoch(broker_id),
                end_points=(BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9092 + broker_id),))])

    def heartbeat(self, broker_id: int, broker_epoch: int | None = None):
        request = BrokerHeartbeatRequest(
            broker_id=broker_id, broker_epoch=default_broker_epoch(broker_id) if broker_epoch is None else broker_epoch,
            current_metadata_offset=1, want_fence=False, want_shut_down=False)
        return self.replication_control.process_broker_heartbeat(request, 0)

    def unfence_brokers(self, *broker_ids: int) -> None:
        for broker_id in sorted(broker_ids):
            records, reply = self.heartbeat(broker_id)
            assert reply == BrokerHeartbeatReply(True, False, False, False)
            self.replay(records)

    def in_controlled_shutdown_brokers(self, *broker_ids: int) -> None:
        for broker_id in broker_ids:
            self.replay([BrokerRegistrationChangeRecord(
                broker_id=broker_id, broker_epoch=default_broker_epoch(broker_id),
                in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN)])

    def fence_brokers(self, broker_ids: set[int]) -> None:
        """Let every session lapse, keep the others alive by heartbeat, fence the stale ones one at a time."""
        self.time.advance(BROKER_SESSION_TIMEOUT_MS)
        self.unfence_brokers(*(b for b in self.cluster_control.broker_registrations if b not in broker_ids))
        while self.cluster_control.heartbeat_manager.find_one_stale_broker() is not None:
            self.replay(self.replication_control.maybe_fence_one_stale_broker())
        assert self.fenced_broker_ids() == broker_ids

    def fenced_broker_ids(self) -> set[int]:
        return {b for b, r in self.cluster_control.broker_registrations.items() if r.fenced}

    def alter_topic_config(self, topic: str, key: str, value: str) -> None:
        self.replay([ConfigRecord(resource_type=int(ConfigResourceType.TOPIC), resource_name=topic, name=key, value=value)])

    def create_test_topic(self, name: str, replicas: list[list[int]], expected_error: Errors = Errors.NONE,
                          configs: dict[str, str] | None = None) -> CreatableTopicResult:
        request = CreateTopicsRequest(topics=(CreatableTopic(
            name=name, num_partitions=-1, replication_factor=-1,
            assignments=tuple(CreatableReplicaAssignment(partition_index=i, broker_ids=tuple(r)) for i, r in enumerate(replicas)),
            configs=tuple(CreateableTopicConfig(name=k, value=v) for k, v in (configs or {}).items())),))
        records, response = self.replication_control.create_topics(request)
        result = response.topics[0]
        assert (result.name, Errors.for_code(result.error_code)) == (name, expected_error)
        if expected_error is Errors.NONE:
            assert (result.num_partitions, result.replication_factor) == (len(replicas), len(replicas[0]))
            self.replay(records)
        return result

    def create_test_topic_by_count(self, name: str, num_partitions: int, replication_factor: int,
                                   expected_error: Errors = Errors.NONE) -> CreatableTopicResult:
        request = CreateTopicsRequest(topics=(CreatableTopic(
            name=name, num_partitions=num_partitions, replication_factor=replication_factor),))
        records, response = self.replication_control.create_topics(request)
        result = response.topics[0]
        assert Errors.for_code(result.error_code) is expected_error
        if expected_error is Errors.NONE:
            self.replay(records)
        return result

    def delete_topic(self, topic_id: Uuid) -> None:
        records, results = self.replication_control.delete_topics([topic_id])
        assert results == {topic_id: Errors.NONE}
        assert records == [RemoveTopicRecord(topic_id=topic_id)]
        self.replay(records)

    def create_partitions(self, count: int, name: str, replicas: list[list[int]], expected_error: Errors) -> None:
        records, results = self.replication_control.create_partitions([CreatePartitionsTopic(
            name=name, count=count, assignments=tuple(CreatePartitionsAssignment(broker_ids=tuple(r)) for r in replicas))])
        assert len(results) == 1
        assert (results[0].name, Errors.for_code(results[0].error_code)) == (name, expected_error)
        self.replay(records)

    def alter_partition(self, topic_id: Uuid, partition_id: int, leader_id: int, isr: tuple[BrokerState, ...],
                        recovery: LeaderRecoveryState = LeaderRecoveryState.RECOVERED) -> None:
        registration = self.cluster_control.registration(leader_id)
        assert not registration.fenced
        partition = self.replication_control.get_partition(topic_id, partition_id)
        assert partition.leader == leader_id
        request = AlterPartitionRequest(broker_id=leader_id, broker_epoch=registration.epoch, topics=(AlterPartitionTopicData(
            topic_name=self.replication_control.topics[topic_id].name, topic_id=topic_id,
            partitions=(AlterPartitionPartitionData(
                partition_index=partition_id, partition_epoch=partition.partition_epoch,
                leader_epoch=partition.leader_epoch, leader_recovery_state=int(recovery),
                new_isr_with_epochs=isr),)),))
        records, _response = self.replication_control.alter_partition(request)
        self.replay(records)

    def current_broker_epoch(self, broker_id: int) -> int:
        return self.cluster_control.registration(broker_id).epoch

    def current_leader(self, topic_id: Uuid, partition_id: int) -> int | None:
        leader = self.replication_control.get_partition(topic_id, partition_id).leader
        return None if leader < 0 else leader


def registration(replicas, isr, leader, leader_epoch=0, partition_epoch=0) -> PartitionRegistration:
    return PartitionRegistration(replicas=tuple(replicas), isr=tuple(isr), leader=leader,
                                 leader_recovery_state=LeaderRecoveryState.RECOVERED, leader_epoch=leader_epoch,
                                 partition_epoch=partition_epoch)


def foo_request() -> CreateTopicsRequest:
    return CreateTopicsRequest(topics=(CreatableTopic(name="foo", num_partitions=-1, replication_factor=-1),))


# ------------------------------------------------------------------------------ CreateTopics


def test_create_topics():
    """Mirrors ReplicationControlManagerTest#testCreateTopics."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    # 1. No broker at all.
    _records, response = rc.create_topics(foo_request())
    assert response.topics == (CreatableTopicResult(
        name="foo", error_code=Errors.INVALID_REPLICATION_FACTOR.code,
        error_message="Unable to replicate the partition 3 time(s): All brokers are currently fenced."),)
    # 2. Broker 0 unfenced but in controlled shutdown, 1 and 2 fenced: placed, but no ISR.
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0)
    ctx.in_controlled_shutdown_brokers(0)
    _records, response = rc.create_topics(foo_request())
    assert response.topics == (CreatableTopicResult(
        name="foo", error_code=Errors.INVALID_REPLICATION_FACTOR.code,
        error_message="Unable to replicate the partition 3 time(s): All brokers are currently fenced or in "
                      "controlled shutdown."),)
    # 3. All three registered again and unfenced.
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    records, response = rc.create_topics(foo_request())
    topic_id = response.topics[0].topic_id
    assert response.topics == (CreatableTopicResult(
        name="foo", topic_id=topic_id, error_code=0, error_message=None, num_partitions=1, replication_factor=3),)
    ctx.replay(records)
    assert records[0] == TopicRecord(name="foo", topic_id=topic_id)
    assert rc.get_partition(topic_id, 0) == registration([1, 2, 0], [1, 2, 0], 1)
    # 4. Again: it exists.
    _records, response = rc.create_topics(foo_request())
    assert response.topics == (CreatableTopicResult(
        name="foo", error_code=Errors.TOPIC_ALREADY_EXISTS.code, error_message="Topic 'foo' already exists."),)


def test_create_topics_isr_invariants():
    """Mirrors ReplicationControlManagerTest#testCreateTopicsISRInvariants: broker 2 is fenced and broker 1
    in controlled shutdown, so both are replicas but only broker 0 is in the ISR."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1)
    ctx.in_controlled_shutdown_brokers(1)
    records, response = rc.create_topics(foo_request())
    topic_id = response.topics[0].topic_id
    assert response.topics == (CreatableTopicResult(
        name="foo", topic_id=topic_id, error_code=0, error_message=None, num_partitions=1, replication_factor=3),)
    ctx.replay(records)
    assert rc.get_partition(topic_id, 0) == registration([1, 0, 2], [0], 0)


def test_create_topics_with_configs():
    """Mirrors ReplicationControlManagerTest#testCreateTopicsWithConfigs (a topic config key kafka_ref
    accepts stands in for Kafka's unchecked "foo")."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    valid = (CreateableTopicConfig(name="cleanup.policy", value="compact"),)
    # 1. TopicRecord, ConfigRecord, PartitionRecord.
    records, response = rc.create_topics(CreateTopicsRequest(topics=(CreatableTopic(
        name="foo", num_partitions=-1, replication_factor=-1, configs=valid),)))
    assert response.topics[0].error_code == 0
    assert [type(r) for r in records] == [TopicRecord, ConfigRecord, PartitionRecord]
    ctx.replay(records)
    assert ctx.configuration_control.topic_configs("foo") == {"cleanup.policy": "compact"}
    # 2. A null value.
    records, response = rc.create_topics(CreateTopicsRequest(topics=(CreatableTopic(
        name="bar", num_partitions=-1, replication_factor=-1,
        configs=(CreateableTopicConfig(name="cleanup.policy", value=None),)),)))
    assert (response.topics[0].error_code, response.topics[0].error_message) == (
        Errors.INVALID_CONFIG.code, "Null value not supported for topic configs: cleanup.policy")
    # 3. A bad replication factor writes nothing, configs included.
    records, response = rc.create_topics(CreateTopicsRequest(topics=(CreatableTopic(
        name="baz", num_partitions=-1, replication_factor=-2, configs=valid),)))
    assert response.topics[0].error_code == Errors.INVALID_REPLICATION_FACTOR.code
    assert list(records) == []
    # 4. Two topics together, one bad: only the good one's records.
    records, response = rc.create_topics(CreateTopicsRequest(topics=(
        CreatableTopic(name="batched-topic-1", num_partitions=-1, replication_factor=-1, configs=valid),
        CreatableTopic(name="batched-topic2", num_partitions=-1, replication_factor=-2, configs=valid))))
    assert [Errors.for_code(t.error_code) for t in response.topics] == [Errors.NONE, Errors.INVALID_REPLICATION_FACTOR]
    assert len(records) == 3
    assert records[0] == TopicRecord(name="batched-topic-1", topic_id=response.topics[0].topic_id)
    assert records[1] == ConfigRecord(resource_type=int(ConfigResourceType.TOPIC), resource_name="batched-topic-1",
                                      name="cleanup.policy", value="compact")
    assert type(records[2]) is PartitionRecord and records[2].topic_id == records[0].topic_id


def test_create_topics_with_validate_only_flag():
    """Mirrors ReplicationControlManagerTest#testCreateTopicsWithValidateOnlyFlag (without a quota)."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    records, response = ctx.replication_control.create_topics(CreateTopicsRequest(
        validate_only=True, topics=(CreatableTopic(name="foo", num_partitions=1, replication_factor=3),)))
    assert len(records) == 0
    assert response.topics[0].error_code == Errors.NONE.code


def test_invalid_create_topics_with_validate_only_flag():
    """Mirrors ReplicationControlManagerTest#testInvalidCreateTopicsWithValidateOnlyFlag."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    records, response = ctx.replication_control.create_topics(CreateTopicsRequest(
        validate_only=True, topics=(CreatableTopic(name="foo", num_partitions=1, replication_factor=4),)))
    assert len(records) == 0
    assert response.topics == (CreatableTopicResult(
        name="foo", error_code=Errors.INVALID_REPLICATION_FACTOR.code,
        error_message="Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be "
                      "reached because only 3 broker(s) are registered."),)


def test_create_topic_with_collision_chars():
    """Mirrors ReplicationControlManagerTest#testCreateTopicWithCollisionChars: a deleted topic's name is
    free again, with a new id; plus the collision the check exists for."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    initial = ctx.create_test_topic_by_count("foo.bar", 2, 2)
    assert len(ctx.replication_control.topics[initial.topic_id].parts) == 2
    colliding = ctx.create_test_topic_by_count("foo_bar", 1, 1, Errors.INVALID_TOPIC_EXCEPTION)
    assert colliding.error_message == "Topic 'foo_bar' collides with existing topic: foo.bar"
    ctx.delete_topic(initial.topic_id)
    recreated = ctx.create_test_topic_by_count("foo.bar", 4, 2)
    assert recreated.topic_id != initial.topic_id
    assert len(ctx.replication_control.topics[recreated.topic_id].parts) == 4


def test_manual_partition_assignment_on_all_fenced_brokers():
    """Mirrors ReplicationControlManagerTest#testManualPartitionAssignmentOnAllFencedBrokers."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2, 3)
    ctx.create_test_topic("foo", [[0, 1, 2]], Errors.INVALID_REPLICA_ASSIGNMENT)


def test_create_partitions_fails_with_manual_assignment_with_all_fenced():
    """Mirrors ReplicationControlManagerTest#testCreatePartitionsFailsWithManualAssignmentWithAllFenced."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2, 3, 4, 5)
    ctx.unfence_brokers(0, 1, 2)
    foo_id = ctx.create_test_topic("foo", [[0, 1, 2]]).topic_id
    ctx.create_partitions(2, "foo", [[3, 4, 5]], Errors.INVALID_REPLICA_ASSIGNMENT)
    ctx.create_partitions(2, "foo", [[2, 4, 5]], Errors.NONE)
    assert ctx.replication_control.get_partition(foo_id, 1) == registration([2, 4, 5], [2], 2)


def test_validate_good_manual_partition_assignments():
    """Mirrors ReplicationControlManagerTest#testValidateGoodManualPartitionAssignments."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(1, 2, 3)
    rc = ctx.replication_control
    assert rc.validate_manual_partition_assignment((1,), 1) is None
    assert rc.validate_manual_partition_assignment((1,), None) is None
    assert rc.validate_manual_partition_assignment((1, 2, 3), 3) is None
    assert rc.validate_manual_partition_assignment((1, 2, 3), None) is None


def test_validate_bad_manual_partition_assignments():
    """Mirrors ReplicationControlManagerTest#testValidateBadManualPartitionAssignments."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(1, 2)
    rc = ctx.replication_control
    cases = [
        ((), None, "The manual partition assignment includes an empty replica list."),
        ((1, 2, 3), None, "The manual partition assignment includes broker 3, but no such broker is registered."),
        ((1, 2, 2), None, "The manual partition assignment includes the broker 2 more than once."),
        ((1, 2), 3, "The manual partition assignment includes a partition with 2 replica(s), but this is not "
                    "consistent with previous partitions, which have 3 replica(s)."),
    ]
    for assignment, replication_factor, message in cases:
        with pytest.raises(InvalidReplicaAssignmentException) as info:
            rc.validate_manual_partition_assignment(assignment, replication_factor)
        assert str(info.value) == message


# ------------------------------------------------------------------------------ fencing and ISR


def test_remove_leaderships():
    """Mirrors ReplicationControlManagerTest#testRemoveLeaderships: fencing broker 0 takes it out of every ISR."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3)
    ctx.unfence_brokers(0, 1, 2, 3)
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2], [1, 2, 3], [2, 3, 0], [0, 2, 1]]).topic_id
    # Kafka's brokersToIsrs().iterator(0, true): the partitions broker 0 leads.
    assert {p for t, p in rc.partitions_with_broker_in_isr(0) if rc.get_partition(t, p).leader == 0} == {0, 3}
    records: list = []
    rc.handle_broker_fenced(0, records)
    ctx.replay(records)
    assert list(rc.partitions_with_broker_in_isr(0)) == []
    assert [rc.get_partition(topic_id, p).leader for p in range(4)] == [1, 1, 2, 2]


def send_alter_partition(ctx: ReplicationControlTestContext, broker_id: int, broker_epoch: int, topic_id: Uuid,
                         data: AlterPartitionPartitionData, version: int | None = None) -> AlterPartitionResponse:
    """ReplicationControlManagerTest#sendAlterPartition: by topic id, the result replayed."""
    request = AlterPartitionRequest(broker_id=broker_id, broker_epoch=broker_epoch, version=version,
                                    topics=(AlterPartitionTopicData(topic_id=topic_id, partitions=(data,)),))
    records, response = ctx.replication_control.alter_partition(request)
    ctx.replay(records)
    return response


def new_alter_partition(ctx: ReplicationControlTestContext, topic_id: Uuid, isr: tuple[BrokerState, ...],
                        recovery: LeaderRecoveryState = LeaderRecoveryState.RECOVERED, **overrides) -> AlterPartitionPartitionData:
    partition = ctx.replication_control.get_partition(topic_id, 0)
    fields = dict(partition_index=0, leader_epoch=partition.leader_epoch, partition_epoch=partition.partition_epoch,
                  new_isr_with_epochs=isr, leader_recovery_state=int(recovery))
    fields.update(overrides)
    return AlterPartitionPartitionData(**fields)


def assert_alter_partition_response(response: AlterPartitionResponse, topic_id: Uuid, expected: Errors
                                    ) -> AlterPartitionResponsePartitionData:
    assert len(response.topics) == 1
    assert response.topics[0].topic_id == topic_id
    assert len(response.topics[0].partitions) == 1
    data = response.topics[0].partitions[0]
    assert (data.partition_index, Errors.for_code(data.error_code)) == (0, expected)
    return data


def assert_consistent_alter_partition_response(ctx, topic_id: Uuid, data: AlterPartitionResponsePartitionData) -> None:
    partition = ctx.replication_control.get_partition(topic_id, 0)
    assert (data.leader_id, data.leader_epoch, data.partition_epoch, tuple(data.isr)) == (
        partition.leader, partition.leader_epoch, partition.partition_epoch, partition.isr)


def test_shrink_and_expand_isr():
    """Mirrors ReplicationControlManagerTest#testShrinkAndExpandIsr."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]]).topic_id
    assert ctx.current_leader(topic_id, 0) == 0
    epoch = ctx.current_broker_epoch(0)
    shrink = send_alter_partition(ctx, 0, epoch, topic_id, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1)))
    data = assert_alter_partition_response(shrink, topic_id, Errors.NONE)
    assert_consistent_alter_partition_response(ctx, topic_id, data)
    assert (data.isr, data.leader_epoch, data.partition_epoch) == ((0, 1), 0, 1)
    expand = send_alter_partition(ctx, 0, epoch, topic_id, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1, 2)))
    data = assert_alter_partition_response(expand, topic_id, Errors.NONE)
    assert_consistent_alter_partition_response(ctx, topic_id, data)
    assert (data.isr, data.leader_epoch, data.partition_epoch) == ((0, 1, 2), 0, 2)


def test_invalid_alter_partition_requests():
    """Mirrors ReplicationControlManagerTest#testInvalidAlterPartitionRequests."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]]).topic_id
    leader, not_leader = 0, 1
    assert ctx.current_leader(topic_id, 0) == leader
    epoch = ctx.current_broker_epoch(leader)
    before = ctx.replication_control.get_partition(topic_id, 0)

    def answer(broker, data):
        return send_alter_partition(ctx, broker, ctx.current_broker_epoch(broker), topic_id, data)

    # Not the leader.
    assert_alter_partition_response(answer(not_leader, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1))),
                                    topic_id, Errors.INVALID_REQUEST)
    # A stale broker epoch fails the whole request.
    with pytest.raises(StaleBrokerEpochException):
        send_alter_partition(ctx, leader, epoch - 1, topic_id, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1)))
    # Epochs from the future: this controller is behind.
    assert_alter_partition_response(answer(leader, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1), leader_epoch=500)),
                                    topic_id, Errors.NOT_CONTROLLER)
    assert_alter_partition_response(answer(leader, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1), partition_epoch=500)),
                                    topic_id, Errors.NOT_CONTROLLER)
    # 3 is no replica; the leader left out; RECOVERING with two members; RECOVERED back to RECOVERING.
    assert_alter_partition_response(answer(leader, new_alter_partition(ctx, topic_id, isr_with_default_epoch(0, 1, 3))),
                                    topic_id, Errors.INVALID_REQUEST)
    assert_alter_partition_response(answer(leader, new_alter_partition(ctx, topic_id, isr_with_default_epoch(1, 2))),
                                    topic_id, Errors.INVALID_REQUEST)
    assert_alter_partition_response(answer(leader, new_alter_partition(
        ctx, topic_id, isr_with_default_epoch(0, 1), LeaderRecoveryState.RECOVERING)), topic_id, Errors.INVALID_REQUEST)
    assert_alter_partition_response(answer(leader, new_alter_partition(
        ctx, topic_id, isr_with_default_epoch(0), LeaderRecoveryState.RECOVERING)), topic_id, Errors.INVALID_REQUEST)
    # None of them changed anything.
    assert ctx.replication_control.get_partition(topic_id, 0) == before


def alter_isr_request(topic_id: Uuid, version: int, partition_epoch: int, isr: tuple[BrokerState, ...]) -> AlterPartitionRequest:
    """The AlterPartition broker 1 sends in the fencing tests: by name below version 2, by id from 2."""
    return AlterPartitionRequest(broker_id=1, broker_epoch=101, version=version, topics=(AlterPartitionTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=topic_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionPartitionData(partition_index=0, partition_epoch=partition_epoch, leader_epoch=0,
                                                new_isr_with_epochs=isr),)),))


def error_response(topic_id: Uuid, version: int, error: Errors) -> AlterPartitionResponse:
    return AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=topic_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionResponsePartitionData(partition_index=0, error_code=error.code),)),))


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_fenced_brokers(version):
    """Mirrors ReplicationControlManagerTest#testAlterPartitionShouldRejectFencedBrokers."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3, 4]]).topic_id
    records: list = []
    rc.handle_broker_fenced(3, records)
    ctx.replay(records)
    assert rc.get_partition(foo_id, 0) == registration([1, 2, 3, 4], [1, 2, 4], 1, partition_epoch=1)
    request = alter_isr_request(foo_id, version, 1, isr_with_default_epoch(1, 2, 3, 4))
    records, response = rc.alter_partition(request)
    expected = Errors.OPERATION_NOT_ATTEMPTED if version <= 1 else Errors.INELIGIBLE_REPLICA
    assert response == error_response(foo_id, version, expected)
    assert records == []
    # Broker 3 back: the same proposal commits.
    records = []
    rc.handle_broker_unfenced(3, 103, records)
    ctx.replay(records)
    records, response = rc.alter_partition(request)
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=foo_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionResponsePartitionData(
            partition_index=0, leader_id=1, leader_epoch=0, isr=(1, 2, 3, 4), partition_epoch=2, error_code=0),)),))


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_brokers_with_stale_epoch(version):
    """Mirrors ReplicationControlManagerTest#testAlterPartitionShouldRejectBrokersWithStaleEpoch: only
    version 3 carries the broker epochs that show broker 4 re-registered since the leader saw it."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3, 4]]).topic_id
    ctx.alter_partition(foo_id, 0, 1, isr_with_default_epoch(1, 2, 3))
    request = alter_isr_request(foo_id, version, 1, isr_with_default_epoch(1, 2, 3, 4))
    # Broker 4 failed silently and registers again, then is unfenced.
    new_epoch = default_broker_epoch(4) + 1000
    ctx.replay([RegisterBrokerRecord(broker_id=4, broker_epoch=new_epoch,
                                     end_points=(BrokerEndpoint(name="PLAINTEXT", host="localhost", port=9096),))])
    records, reply = ctx.heartbeat(4, new_epoch)
    assert reply == BrokerHeartbeatReply(True, False, False, False)
    ctx.replay(records)
    records, response = rc.alter_partition(request)
    if version >= 3:
        assert response == error_response(foo_id, version, Errors.INELIGIBLE_REPLICA)
        assert records == []
    else:
        assert response.error_code == Errors.NONE.code
        assert Errors.for_code(response.topics[0].partitions[0].error_code) is Errors.NONE
        assert response.topics[0].partitions[0].isr == (1, 2, 3, 4)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_shutting_down_brokers(version):
    """Mirrors ReplicationControlManagerTest#testAlterPartitionShouldRejectShuttingDownBrokers."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3, 4]]).topic_id
    assert rc.get_partition(foo_id, 0) == registration([1, 2, 3, 4], [1, 2, 3, 4], 1)
    ctx.in_controlled_shutdown_brokers(3)
    records, response = rc.alter_partition(alter_isr_request(foo_id, version, 0, isr_with_default_epoch(1, 2, 3, 4)))
    expected = Errors.OPERATION_NOT_ATTEMPTED if version <= 1 else Errors.INELIGIBLE_REPLICA
    assert response == error_response(foo_id, version, expected)
    assert records == []


def test_fence_multiple_brokers():
    """Mirrors ReplicationControlManagerTest#testFenceMultipleBrokers."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]]).topic_id
    assert ctx.fenced_broker_ids() == set()
    ctx.fence_brokers({2, 3})
    p0, p1, p2 = (rc.get_partition(foo_id, p) for p in range(3))
    assert (p0.replicas, p0.isr, p0.leader) == ((1, 2, 3), (1,), 1)
    assert (p1.replicas, p1.isr, p1.leader) == ((2, 3, 4), (4,), 4)
    assert (p2.replicas, p2.isr) == ((0, 2, 1), (0, 1))
    assert p2.leader != 2


# ------------------------------------------------------------------------------ elections


def elect(ctx, election_type: ElectionType, partitions: dict[str, list[int]] | None):
    request = ElectLeadersRequest(election_type=int(election_type), topic_partitions=None if partitions is None else tuple(
        TopicPartitions(topic=t, partitions=tuple(ps)) for t, ps in partitions.items()))
    records, response = ctx.replication_control.elect_leaders(request)
    assert response.error_code == Errors.NONE.code
    answers = {(r.topic, p.partition_id): Errors.for_code(p.error_code)
               for r in response.replica_election_results for p in r.partition_result}
    # ApiError(Errors) carries the code's default text; ApiError.NONE carries none.
    for r in response.replica_election_results:
        for p in r.partition_result:
            error = Errors.for_code(p.error_code)
            if error is Errors.NONE:
                assert p.error_message is None
            elif error is not Errors.UNKNOWN_TOPIC_OR_PARTITION:
                assert p.error_message == error.message
    return records, response, answers


def election_messages(response) -> dict:
    return {(r.topic, p.partition_id): p.error_message for r in response.replica_election_results for p in r.partition_result}


def assert_leader_and_isr(ctx, topic_id: Uuid, partition_id: int, leader: int, isr: tuple[int, ...]) -> None:
    partition = ctx.replication_control.get_partition(topic_id, partition_id)
    assert (partition.isr, partition.leader) == (isr, leader)


@pytest.mark.parametrize("elect_all_partitions", [True, False])
def test_elect_unclean_leaders_without_elr(elect_all_partitions):
    """Mirrors ReplicationControlManagerTest#testElectUncleanLeaders_WithoutElr (metadata.version 3.6).
    Electing every partition leaves the ELECTION_NOT_NEEDED ones out of the answer."""
    ctx = ReplicationControlTestContext("3.6-IV1")
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]]).topic_id
    ctx.fence_brokers({2, 3})
    ctx.fence_brokers({1, 2, 3})
    assert_leader_and_isr(ctx, foo_id, 0, NO_LEADER, (1,))
    assert_leader_and_isr(ctx, foo_id, 1, 4, (4,))
    assert_leader_and_isr(ctx, foo_id, 2, 0, (0,))
    partitions = None if elect_all_partitions else {"foo": [0, 1, 2]}

    def expected(first: Errors) -> dict:
        if elect_all_partitions:
            return {("foo", 0): first}
        return {("foo", 0): first, ("foo", 1): Errors.ELECTION_NOT_NEEDED, ("foo", 2): Errors.ELECTION_NOT_NEEDED}

    # Nobody left to lead partition 0.
    records, _response, answers = elect(ctx, ElectionType.UNCLEAN, partitions)
    assert records == []
    assert answers == expected(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    # Broker 2 comes back; it rejoins partition 1's ISR (no preferred election may follow from it).
    ctx.unfence_brokers(2)
    ctx.alter_partition(foo_id, 1, 4, isr_with_default_epoch(2, 4))
    records, _response, answers = elect(ctx, ElectionType.UNCLEAN, partitions)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=foo_id, leader=2, isr=(2,),
                                             leader_recovery_state=int(LeaderRecoveryState.RECOVERING))]
    ctx.replay(records)
    assert_leader_and_isr(ctx, foo_id, 0, 2, (2,))
    assert_leader_and_isr(ctx, foo_id, 1, 4, (2, 4))
    assert_leader_and_isr(ctx, foo_id, 2, 0, (0,))
    assert answers == expected(Errors.NONE)


def test_preferred_election_does_not_trigger_unclean_election():
    """Mirrors ReplicationControlManagerTest#testPreferredElectionDoesNotTriggerUncleanElection."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(1, 2, 3, 4)
    ctx.unfence_brokers(1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3]]).topic_id
    ctx.fence_brokers({2, 3})
    ctx.fence_brokers({1, 2, 3})
    ctx.unfence_brokers(2)
    assert_leader_and_isr(ctx, foo_id, 0, NO_LEADER, (1,))
    ctx.alter_topic_config("foo", "unclean.leader.election.enable", "true")
    records, _response, answers = elect(ctx, ElectionType.PREFERRED, {"foo": [0]})
    assert records == []
    assert answers == {("foo", 0): Errors.PREFERRED_LEADER_NOT_AVAILABLE}


def test_elect_preferred_leaders():
    """Mirrors ReplicationControlManagerTest#testElectPreferredLeaders."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(1, 2, 3, 4)
    ctx.in_controlled_shutdown_brokers(1)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]]).topic_id
    request = {"foo": [0, 1, 2], "bar": [0, 1]}
    records, _response, answers = elect(ctx, ElectionType.PREFERRED, request)
    assert answers == {("foo", 0): Errors.PREFERRED_LEADER_NOT_AVAILABLE, ("foo", 1): Errors.ELECTION_NOT_NEEDED,
                       ("foo", 2): Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                       ("bar", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION, ("bar", 1): Errors.UNKNOWN_TOPIC_OR_PARTITION}
    messages = election_messages(_response)
    assert (messages[("bar", 0)], messages[("bar", 1)]) == ("No such topic as bar", "No such topic as bar")
    assert records == []
    # Broker 1 registers again (leaving controlled shutdown); 0 and 1 are unfenced.
    ctx.register_brokers(1)
    ctx.unfence_brokers(0, 1)
    records, response = rc.alter_partition(AlterPartitionRequest(broker_id=2, broker_epoch=102, topics=(
        AlterPartitionTopicData(topic_id=foo_id, partitions=(
            AlterPartitionPartitionData(partition_index=0, partition_epoch=0, leader_epoch=0,
                                        new_isr_with_epochs=isr_with_default_epoch(1, 2, 3)),
            AlterPartitionPartitionData(partition_index=2, partition_epoch=0, leader_epoch=0,
                                        new_isr_with_epochs=isr_with_default_epoch(0, 2, 1)))),)))
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(topic_id=foo_id, partitions=(
        AlterPartitionResponsePartitionData(partition_index=0, leader_id=2, leader_epoch=0, isr=(1, 2, 3),
                                            partition_epoch=1, error_code=0),
        AlterPartitionResponsePartitionData(partition_index=2, leader_id=2, leader_epoch=0, isr=(0, 2, 1),
                                            partition_epoch=1, error_code=0))),))
    ctx.replay(records)
    records, _response, answers = elect(ctx, ElectionType.PREFERRED, request)
    assert answers == {("foo", 0): Errors.NONE, ("foo", 1): Errors.ELECTION_NOT_NEEDED, ("foo", 2): Errors.NONE,
                       ("bar", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION, ("bar", 1): Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=foo_id, leader=1),
                       PartitionChangeRecord(partition_id=2, topic_id=foo_id, leader=0)]


# ------------------------------------------------------------------------------ DeleteTopics and replay


def test_delete_topics():
    """Mirrors ReplicationControlManagerTest#testDeleteTopics (retention.ms stands in for
    min.cleanable.dirty.ratio, a key kafka_ref's LogConfig lacks)."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    configs = (CreateableTopicConfig(name="cleanup.policy", value="compact"),
               CreateableTopicConfig(name="retention.ms", value="100000"))
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(0, 1)
    records, response = rc.create_topics(CreateTopicsRequest(topics=(CreatableTopic(
        name="foo", num_partitions=3, replication_factor=2, configs=configs),)))
    topic_id = response.topics[0].topic_id
    assert response.topics == (CreatableTopicResult(name="foo", topic_id=topic_id, error_code=0, error_message=None,
                                                    num_partitions=3, replication_factor=2),)
    # Nothing changes until the records are replayed.
    assert rc.get_partition(topic_id, 0) is None
    assert ctx.configuration_control.topic_configs("foo") == {}
    ctx.replay(records)
    assert [rc.get_partition(topic_id, p) is not None for p in range(4)] == [True, True, True, False]
    assert ctx.configuration_control.topic_configs("foo") == {"cleanup.policy": "compact", "retention.ms": "100000"}
    assert rc.find_topic_names([topic_id]) == {topic_id: "foo"}
    assert rc.find_topic_ids(["foo"]) == {"foo": topic_id}
    invalid_id = Uuid(topic_id.most_significant_bits + 1, topic_id.least_significant_bits)
    assert rc.find_topic_names([invalid_id]) == {invalid_id: ApiError(Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_TOPIC_ID.message)}
    assert rc.find_topic_ids(["bar"]) == {
        "bar": ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.message)}
    records, results = rc.delete_topics([invalid_id])
    assert (records, results) == ([], {invalid_id: Errors.UNKNOWN_TOPIC_ID})
    records, results = rc.delete_topics([topic_id])
    assert (records, results) == ([RemoveTopicRecord(topic_id=topic_id)], {topic_id: Errors.NONE})
    ctx.replay(records)
    assert [rc.get_partition(topic_id, p) for p in range(4)] == [None] * 4
    assert rc.find_topic_names([topic_id]) == {topic_id: ApiError(Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_TOPIC_ID.message)}
    assert rc.find_topic_ids(["foo"]) == {
        "foo": ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.message)}
    assert ctx.configuration_control.topic_configs("foo") == {}


def test_duplicate_topic_id_replay():
    """Mirrors ReplicationControlManagerTest#testDuplicateTopicIdReplay."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    first, second = Uuid.from_string("Ktv3YkMQRe-MId4VkkrMyw"), Uuid.from_string("8auUWq8zQqe_99H_m2LAmw")
    rc.replay_topic(TopicRecord(name="foo", topic_id=first))
    with pytest.raises(RuntimeError) as info:
        rc.replay_topic(TopicRecord(name="foo", topic_id=first))
    assert str(info.value) == "Found duplicate TopicRecord for foo with topic ID Ktv3YkMQRe-MId4VkkrMyw"
    with pytest.raises(RuntimeError) as info:
        rc.replay_topic(TopicRecord(name="foo", topic_id=second))
    assert str(info.value) == ("Found duplicate TopicRecord for foo with a different ID than before. "
                               "Previous ID was Ktv3YkMQRe-MId4VkkrMyw and new ID is 8auUWq8zQqe_99H_m2LAmw")


# ------------------------------------------------------------------------------ CreatePartitions


def test_create_partitions():
    """Mirrors ReplicationControlManagerTest#testCreatePartitions (without the log directories check)."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    request = CreateTopicsRequest(topics=(
        CreatableTopic(name="foo", num_partitions=3, replication_factor=2),
        CreatableTopic(name="bar", num_partitions=4, replication_factor=2),
        CreatableTopic(name="quux", num_partitions=2, replication_factor=2),
        CreatableTopic(name="foo2", num_partitions=2, replication_factor=2)))
    ctx.register_brokers(0, 1, 3)
    ctx.unfence_brokers(0, 1, 3)
    records, response = rc.create_topics(request)
    assert [t.error_code for t in response.topics] == [0, 0, 0, 0]
    ctx.replay(records)
    # 1. Placed by the striped placer.
    records, results = rc.create_partitions([
        CreatePartitionsTopic(name="foo", count=5, assignments=None),
        CreatePartitionsTopic(name="bar", count=3, assignments=None),
        CreatePartitionsTopic(name="baz", count=3, assignments=None),
        CreatePartitionsTopic(name="quux", count=2, assignments=None)])
    assert [(r.name, Errors.for_code(r.error_code), r.error_message) for r in results] == [
        ("foo", Errors.NONE, None),
        ("bar", Errors.INVALID_PARTITIONS, "The topic bar currently has 4 partition(s); 3 would not be an increase."),
        ("baz", Errors.UNKNOWN_TOPIC_OR_PARTITION, None),
        ("quux", Errors.INVALID_PARTITIONS, "Topic already has 2 partition(s).")]
    assert [(type(r), r.partition_id) for r in records] == [(PartitionRecord, 3), (PartitionRecord, 4)]
    ctx.replay(records)
    # 2. Given assignments.
    records, results = rc.create_partitions([
        CreatePartitionsTopic(name="foo", count=6, assignments=(CreatePartitionsAssignment(broker_ids=(1, 3)),)),
        CreatePartitionsTopic(name="bar", count=5, assignments=(CreatePartitionsAssignment(broker_ids=(1,)),)),
        CreatePartitionsTopic(name="quux", count=4, assignments=(CreatePartitionsAssignment(broker_ids=(1, 0)),)),
        CreatePartitionsTopic(name="foo2", count=3, assignments=(CreatePartitionsAssignment(broker_ids=(2, 0)),))])
    assert [(r.name, Errors.for_code(r.error_code), r.error_message) for r in results] == [
        ("foo", Errors.NONE, None),
        ("bar", Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes a partition with 1 "
                                                   "replica(s), but this is not consistent with previous partitions, "
                                                   "which have 2 replica(s)."),
        ("quux", Errors.INVALID_REPLICA_ASSIGNMENT,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        ("foo2", Errors.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 2, but no such broker is registered.")]
    ctx.replay(records)
    foo_id = rc.get_topic_id("foo")
    assert rc.get_partition(foo_id, 5) == registration([1, 3], [1, 3], 1)
    assert len(rc.topics[foo_id].parts) == 6


def test_create_partitions_fails_when_all_brokers_are_fenced_or_in_controlled_shutdown():
    """Mirrors ReplicationControlManagerTest#testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(0, 1)
    records, _response = rc.create_topics(CreateTopicsRequest(topics=(
        CreatableTopic(name="foo", num_partitions=1, replication_factor=2),)))
    ctx.replay(records)
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(0)
    ctx.in_controlled_shutdown_brokers(0)
    records, results = rc.create_partitions([CreatePartitionsTopic(name="foo", count=2, assignments=None)])
    assert [(r.name, Errors.for_code(r.error_code), r.error_message) for r in results] == [
        ("foo", Errors.INVALID_REPLICATION_FACTOR,
         "Unable to replicate the partition 2 time(s): All brokers are currently fenced or in controlled shutdown.")]
    assert list(records) == []


def test_create_partitions_isr_invariants():
    """Mirrors ReplicationControlManagerTest#testCreatePartitionsISRInvariants."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1)
    ctx.in_controlled_shutdown_brokers(1)
    records, _response = rc.create_topics(CreateTopicsRequest(topics=(
        CreatableTopic(name="foo", num_partitions=1, replication_factor=3),)))
    ctx.replay(records)
    topic_id = records[0].topic_id
    more, _results = rc.create_partitions([CreatePartitionsTopic(name="foo", count=2, assignments=None)])
    ctx.replay(more)
    # Broker 2 is fenced and broker 1 in controlled shutdown: only 0 is in the ISR.
    assert rc.get_partition(topic_id, 1) == registration([0, 1, 2], [0], 0)


# ------------------------------------------------------------------------------ reassignment


def reassign(ctx, topics: dict[str, dict[int, tuple[int, ...] | None]]):
    request = AlterPartitionReassignmentsRequest(topics=tuple(
        ReassignableTopic(name=name, partitions=tuple(
            ReassignablePartition(partition_index=p, replicas=r) for p, r in parts.items()))
        for name, parts in topics.items()))
    return ctx.replication_control.alter_partition_reassignments(request)


def reassign_response(topics: dict[str, list[tuple[int, Errors, str | None]]]) -> AlterPartitionReassignmentsResponse:
    return AlterPartitionReassignmentsResponse(responses=tuple(
        ReassignableTopicResponse(name=name, partitions=tuple(
            ReassignablePartitionResponse(partition_index=p, error_code=e.code, error_message=m) for p, e, m in parts))
        for name, parts in topics.items()))


def reassigning(ctx, topics=None) -> tuple:
    return ctx.replication_control.list_partition_reassignments(topics).topics


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_reassign_partitions(version):
    """Mirrors ReplicationControlManagerTest#testReassignPartitions."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3)
    ctx.unfence_brokers(0, 1, 2, 3)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3], [3, 2, 1]]).topic_id
    ctx.create_test_topic("bar", [[1, 2, 3]])
    assert reassigning(ctx) == ()
    records, response = reassign(ctx, {"foo": {0: (3, 2, 1), 1: (0, 2, 1), 2: (0, 2, 1)}, "bar": {}})
    assert response == reassign_response({"foo": [(0, Errors.NONE, None), (1, Errors.NONE, None),
                                                  (2, Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")],
                                          "bar": []})
    ctx.replay(records)
    # Partition 0 was only reordered; partition 1 is moving 3 out and 0 in.
    current = (OngoingTopicReassignment(name="foo", partitions=(OngoingPartitionReassignment(
        partition_index=1, removing_replicas=(3,), adding_replicas=(0,), replicas=(0, 2, 1, 3)),)),)
    assert reassigning(ctx) == current
    assert reassigning(ctx, (ListPartitionReassignmentsTopics(name="bar", partition_indexes=(0, 1, 2)),)) == ()
    assert reassigning(ctx, (ListPartitionReassignmentsTopics(name="foo", partition_indexes=(0, 1, 2)),)) == current
    # Cancelling (not replayed): only partition 1 had something to cancel.
    records, response = reassign(ctx, {"foo": {0: None, 1: None, 2: None}, "bar": {0: None}})
    assert records == [PartitionChangeRecord(topic_id=foo_id, partition_id=1, replicas=(2, 1, 3), leader=3,
                                             removing_replicas=(), adding_replicas=())]
    assert response == reassign_response({
        "foo": [(0, Errors.NO_REASSIGNMENT_IN_PROGRESS, None), (1, Errors.NONE, None),
                (2, Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2.")],
        "bar": [(0, Errors.NO_REASSIGNMENT_IN_PROGRESS, None)]})
    # Leader 3 brings 0 into the ISR: the move completes and 3, leaving, stops leading.
    request = AlterPartitionRequest(broker_id=3, broker_epoch=103, version=version, topics=(AlterPartitionTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=foo_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionPartitionData(partition_index=1, partition_epoch=1, leader_epoch=0,
                                                new_isr_with_epochs=isr_with_default_epoch(3, 0, 2, 1)),)),))
    records, response = rc.alter_partition(request)
    expected = Errors.NEW_LEADER_ELECTED if version > 1 else Errors.FENCED_LEADER_EPOCH
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=foo_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionResponsePartitionData(partition_index=1, error_code=expected.code),)),))
    ctx.replay(records)
    assert reassigning(ctx) == ()
    assert rc.get_partition(foo_id, 1) == registration([0, 2, 1], [0, 2, 1], 0, leader_epoch=1, partition_epoch=2)


def test_cancel_reassign_partitions():
    """Mirrors ReplicationControlManagerTest#testCancelReassignPartitions."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(0, 1, 2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3, 4], [0, 1, 2, 3], [4, 3, 1, 0], [2, 3, 4, 1]]).topic_id
    bar_id = ctx.create_test_topic("bar", [[4, 3, 2]]).topic_id
    assert reassigning(ctx) == ()
    records: list = []
    rc.handle_broker_fenced(3, records)
    ctx.replay(records)
    assert rc.get_partition(foo_id, 0) == registration([1, 2, 3, 4], [1, 2, 4], 1, partition_epoch=1)
    records, response = reassign(ctx, {"foo": {0: (1, 2, 4), 1: (1, 2, 3, 0), 2: (5, 6, 7), 3: ()},
                                       "bar": {0: (1, 2, 3, 4, 0)}})
    assert response == reassign_response({
        "foo": [(0, Errors.NONE, None), (1, Errors.NONE, None),
                (2, Errors.INVALID_REPLICA_ASSIGNMENT,
                 "The manual partition assignment includes broker 5, but no such broker is registered."),
                (3, Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")],
        "bar": [(0, Errors.NONE, None)]})
    ctx.replay(records)
    # foo-0 completed at once (3, fenced, was out of the ISR); foo-1 was a reordering; bar-0 waits for 0 and 1.
    assert rc.get_partition(foo_id, 0) == registration([1, 2, 4], [1, 2, 4], 1, leader_epoch=1, partition_epoch=2)
    assert rc.get_partition(foo_id, 1) == registration([1, 2, 3, 0], [0, 1, 2], 0, partition_epoch=2)
    bar = rc.get_partition(bar_id, 0)
    assert (bar.replicas, bar.isr, bar.adding_replicas, bar.removing_replicas, bar.leader, bar.leader_epoch,
            bar.partition_epoch) == ((1, 2, 3, 4, 0), (4, 2), (0, 1), (), 4, 0, 2)
    current = (OngoingTopicReassignment(name="bar", partitions=(OngoingPartitionReassignment(
        partition_index=0, removing_replicas=(), adding_replicas=(0, 1), replicas=(1, 2, 3, 4, 0)),)),)
    assert reassigning(ctx) == current
    assert reassigning(ctx, (ListPartitionReassignmentsTopics(name="foo", partition_indexes=(0, 1, 2)),)) == ()
    assert reassigning(ctx, (ListPartitionReassignmentsTopics(name="bar", partition_indexes=(0, 1, 2)),)) == current
    # The ISR grows (3 still missing, so nothing completes); the answer is not replayed.
    _records, response = rc.alter_partition(AlterPartitionRequest(broker_id=4, broker_epoch=104, topics=(
        AlterPartitionTopicData(topic_id=bar_id, partitions=(AlterPartitionPartitionData(
            partition_index=0, partition_epoch=2, leader_epoch=0,
            new_isr_with_epochs=isr_with_default_epoch(4, 1, 2, 0)),)),)))
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(topic_id=bar_id, partitions=(
        AlterPartitionResponsePartitionData(partition_index=0, leader_id=4, leader_epoch=0, isr=(4, 1, 2, 0),
                                            partition_epoch=3, error_code=0),)),))
    # Cancel: bar goes back to [2, 3, 4]; 0 and 1 leave, so the leader epoch is bumped.
    records, response = reassign(ctx, {"foo": {0: None}, "bar": {0: None}})
    assert records == [PartitionChangeRecord(topic_id=bar_id, partition_id=0, leader=4, replicas=(2, 3, 4),
                                             adding_replicas=())]
    assert response == reassign_response({"foo": [(0, Errors.NO_REASSIGNMENT_IN_PROGRESS, None)],
                                          "bar": [(0, Errors.NONE, None)]})
    ctx.replay(records)
    assert reassigning(ctx) == ()
    assert rc.get_partition(bar_id, 0) == registration([2, 3, 4], [4, 2], 4, leader_epoch=1, partition_epoch=3)


def test_reassign_partitions_handles_new_reassignment_that_removes_previously_adding_replicas():
    """Mirrors ReplicationControlManagerTest#testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4, 5)
    ctx.unfence_brokers(0, 1, 2, 3, 4, 5)
    topic = "topic-1"
    topic_id = ctx.create_test_topic(topic, [[0, 1]]).topic_id
    assert reassigning(ctx) == ()
    # 1. [0, 1] -> [2, 3].
    records, response = reassign(ctx, {topic: {0: (2, 3)}})
    assert response == reassign_response({topic: [(0, Errors.NONE, None)]})
    ctx.replay(records)
    assert reassigning(ctx) == (OngoingTopicReassignment(name=topic, partitions=(OngoingPartitionReassignment(
        partition_index=0, removing_replicas=(0, 1), adding_replicas=(2, 3), replicas=(2, 3, 0, 1)),)),)
    # 2. Replica 2 joins the ISR.
    partition = rc.get_partition(topic_id, 0)
    records, response = rc.alter_partition(AlterPartitionRequest(
        broker_id=partition.leader, broker_epoch=ctx.current_broker_epoch(partition.leader), topics=(
            AlterPartitionTopicData(topic_id=topic_id, partitions=(AlterPartitionPartitionData(
                partition_index=0, partition_epoch=partition.partition_epoch, leader_epoch=partition.leader_epoch,
                new_isr_with_epochs=isr_with_default_epoch(0, 1, 2)),)),)))
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(topic_id=topic_id, partitions=(
        AlterPartitionResponsePartitionData(partition_index=0, leader_id=0, leader_epoch=0, isr=(0, 1, 2),
                                            partition_epoch=partition.partition_epoch + 1, error_code=0),)),))
    ctx.replay(records)
    # 3. Preferred election makes 2, first in the replica list, the leader.
    records, response, answers = elect(ctx, ElectionType.PREFERRED, {topic: [0]})
    assert answers == {(topic, 0): Errors.NONE}
    assert response.error_code == 0
    ctx.replay(records)
    assert rc.get_partition(topic_id, 0).leader == 2
    # 4. A new target [4, 5]: every old and adding replica is now being removed, 2 still leads.
    records, response = reassign(ctx, {topic: {0: (4, 5)}})
    assert response == reassign_response({topic: [(0, Errors.NONE, None)]})
    ctx.replay(records)
    assert reassigning(ctx) == (OngoingTopicReassignment(name=topic, partitions=(OngoingPartitionReassignment(
        partition_index=0, removing_replicas=(0, 1, 2, 3), adding_replicas=(4, 5), replicas=(4, 5, 0, 1, 2, 3)),)),)
    partition = rc.get_partition(topic_id, 0)
    assert partition.leader == 2 and 2 in partition.replicas
    # 5. Everybody in the ISR completes the move; 4 takes over and the sender hears NEW_LEADER_ELECTED.
    records, response = rc.alter_partition(AlterPartitionRequest(
        broker_id=2, broker_epoch=ctx.current_broker_epoch(2), topics=(
            AlterPartitionTopicData(topic_id=topic_id, partitions=(AlterPartitionPartitionData(
                partition_index=0, partition_epoch=partition.partition_epoch, leader_epoch=partition.leader_epoch,
                new_isr_with_epochs=isr_with_default_epoch(0, 1, 2, 3, 4, 5)),)),)))
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(topic_id=topic_id, partitions=(
        AlterPartitionResponsePartitionData(partition_index=0, error_code=Errors.NEW_LEADER_ELECTED.code),)),))
    ctx.replay(records)
    assert rc.get_partition(topic_id, 0).leader == 4
    assert reassigning(ctx) == ()


# ------------------------------------------------------------------------------ more


def test_validate_new_topic_names():
    """Mirrors ReplicationControlManagerTest#testValidateNewTopicNames."""
    topic_errors: dict = {}
    topics = [CreatableTopic(name=""), CreatableTopic(name="woo"), CreatableTopic(name=".")]
    ReplicationControlManager.validate_new_topic_names(topic_errors, topics, {})
    assert topic_errors == {
        "": ApiError(Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
        ".": ApiError(Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '.' is not allowed"),
    }


def test_topic_name_collision():
    """Mirrors ReplicationControlManagerTest#testTopicNameCollision."""
    topic_errors: dict = {}
    topics = [CreatableTopic(name="foo.bar"), CreatableTopic(name="woo.bar_foo")]
    collision_map = {"foo_bar": {"foo_bar"}, "woo_bar_foo": {"woo.bar.foo", "woo_bar.foo"}}
    ReplicationControlManager.validate_new_topic_names(topic_errors, topics, collision_map)
    assert topic_errors == {
        "foo.bar": ApiError(Errors.INVALID_TOPIC_EXCEPTION, "Topic 'foo.bar' collides with existing topic: foo_bar"),
        "woo.bar_foo": ApiError(Errors.INVALID_TOPIC_EXCEPTION,
                                "Topic 'woo.bar_foo' collides with existing topic: woo.bar.foo"),
    }


def test_collision_index_follows_replay():
    """ReplicationControlManager#topicsWithCollisionChars as replay keeps it (kafka_ref's own check,
    behind testCreateTopicWithCollisionChars): added by TopicRecord, dropped by RemoveTopicRecord."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    first, second = Uuid(1, 1), Uuid(2, 2)
    ctx.replay([TopicRecord(name="a.b", topic_id=first), TopicRecord(name="plain", topic_id=second)])
    assert rc.topics_with_collision_chars == {"a_b": {"a.b"}}
    ctx.replay([RemoveTopicRecord(topic_id=first)])
    assert rc.topics_with_collision_chars == {}


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_handle_unknown_topic_id_or_name(version):
    """Mirrors ReplicationControlManagerTest#testAlterPartitionHandleUnknownTopicIdOrName."""
    ctx = ReplicationControlTestContext()
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    topic_id = Uuid(12345, 67890)
    request = AlterPartitionRequest(broker_id=0, broker_epoch=100, version=version, topics=(AlterPartitionTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=topic_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionPartitionData(partition_index=0),)),))
    records, response = ctx.replication_control.alter_partition(request)
    expected = Errors.UNKNOWN_TOPIC_ID if version > 1 else Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
        topic_name="foo" if version <= 1 else "", topic_id=topic_id if version > 1 else ZERO_UUID,
        partitions=(AlterPartitionResponsePartitionData(partition_index=0, error_code=expected.code),)),))
    assert records == []


@pytest.mark.parametrize("metadata_version", ["3.2-IV0", "3.3-IV3"])
def test_process_broker_heartbeat_in_controlled_shutdown(metadata_version):
    """Mirrors ReplicationControlManagerTest#testProcessBrokerHeartbeatInControlledShutdown. Kafka runs
    3.3-IV2 and 3.3-IV3; kafka_ref's metadata.version steps by release, so 3.2-IV0 stands for the
    version before the in-controlled-shutdown registration state."""
    ctx = ReplicationControlTestContext(metadata_version)
    ctx.register_brokers(0, 1, 2)
    ctx.unfence_brokers(0, 1, 2)
    topic_id = ctx.create_test_topic("foo", [[0, 1, 2]]).topic_id
    records, _reply = ctx.replication_control.process_broker_heartbeat(BrokerHeartbeatRequest(
        broker_id=0, broker_epoch=100, current_metadata_offset=0, want_fence=False, want_shut_down=True), 0)
    expected: list = []
    if metadata_version == "3.3-IV3":
        expected.append(BrokerRegistrationChangeRecord(
            broker_id=0, broker_epoch=100,
            in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))
    expected.append(PartitionChangeRecord(partition_id=0, topic_id=topic_id, isr=(1, 2), leader=1))
    assert records == expected


def test_delete_topics_through_the_controller_answers_api_error_texts():
    """ControllerApis#deleteTopics over findTopicNames/findTopicIds (kafka_ref's own check, behind
    testDeleteTopics): an unknown id or name carries its code's default text, as ApiError(Errors)
    does; a deleted topic carries none."""
    from test_kraft_cluster import FakeEnvelope, controller_with_topic, handle

    from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicState

    controller, _time, _epochs, topic_id = controller_with_topic()
    missing = Uuid(4242, 4242)
    env = FakeEnvelope(DeleteTopicsRequest(topics=(
        DeleteTopicState(topic_id=missing), DeleteTopicState(name="nope"), DeleteTopicState(name="t")), timeout_ms=1000))
    handle(controller, env)
    answers = {(r.name, r.topic_id): (Errors.for_code(r.error_code), r.error_message) for r in env.response.responses}
    assert answers == {
        (None, missing): (Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_TOPIC_ID.message),
        ("nope", ZERO_UUID): (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.message),
        ("t", topic_id): (Errors.NONE, None),
    }
    assert controller.replication_control.get_topic_id("t") is None


# ------------------------------------------------------------------------------ leader balancing


def test_balance_partition_leaders():
    """Mirrors ReplicationControlManagerTest#testBalancePartitionLeaders."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    ctx.register_brokers(0, 1, 2, 3, 4)
    ctx.unfence_brokers(2, 3, 4)
    foo_id = ctx.create_test_topic("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]]).topic_id
    # Partitions 0 and 2 are led by 2, not by their fenced preferred replicas.
    assert rc.are_partition_leaders_imbalanced() is True
    assert set(rc.imbalanced_partitions) == {(foo_id, 0), (foo_id, 2)}

    def expand(partition_id: int, isr: tuple[int, ...]) -> None:
        records, response = rc.alter_partition(AlterPartitionRequest(broker_id=2, broker_epoch=102, topics=(
            AlterPartitionTopicData(topic_id=foo_id, partitions=(AlterPartitionPartitionData(
                partition_index=partition_id, partition_epoch=0, leader_epoch=0,
                new_isr_with_epochs=isr_with_default_epoch(*isr)),)),)))
        assert response == AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(topic_id=foo_id, partitions=(
            AlterPartitionResponsePartitionData(partition_index=partition_id, leader_id=2, leader_epoch=0, isr=isr,
                                                partition_epoch=1, error_code=0),)),))
        ctx.replay(records)

    # 1. Broker 1 back and in partition 0's ISR: only partition 0 can be balanced.
    ctx.unfence_brokers(1)
    expand(0, (1, 2, 3))
    records, reschedule_immediately = rc.maybe_balance_partition_leaders()
    ctx.replay(records)
    assert records == [PartitionChangeRecord(partition_id=0, topic_id=foo_id, leader=1)]
    assert rc.are_partition_leaders_imbalanced() is True
    assert reschedule_immediately is False
    # 2. Broker 0 back and in partition 2's ISR: balanced.
    ctx.unfence_brokers(0)
    expand(2, (0, 2, 1))
    records, reschedule_immediately = rc.maybe_balance_partition_leaders()
    ctx.replay(records)
    assert records == [PartitionChangeRecord(partition_id=2, topic_id=foo_id, leader=0)]
    assert rc.are_partition_leaders_imbalanced() is False
    assert reschedule_immediately is False


def test_balance_partition_leaders_stops_at_its_bound():
    """ReplicationControlManager#maybeBalancePartitionLeaders with maxElectionsPerImbalance reached
    (kafka_ref's own check): the run stops and asks to be rescheduled at once; deleting a topic
    drops its partitions from the imbalance set."""
    ctx = ReplicationControlTestContext()
    rc = ctx.replication_control
    rc.max_elections_per_imbalance = 1
    ctx.register_brokers(0, 1)
    ctx.unfence_brokers(1)
    foo_id = ctx.create_test_topic("foo", [[0, 1], [0, 1]]).topic_id
    assert set(rc.imbalanced_partitions) == {(foo_id, 0), (foo_id, 1)}
    ctx.unfence_brokers(0)
    for partition_id in (0, 1):
        ctx.alter_partition(foo_id, partition_id, 1, isr_with_default_epoch(1, 0))
    records, reschedule_immediately = rc.maybe_balance_partition_leaders()
    assert (records, reschedule_immediately) == ([PartitionChangeRecord(partition_id=0, topic_id=foo_id, leader=0)], True)
    ctx.replay(records)
    records, reschedule_immediately = rc.maybe_balance_partition_leaders()
    assert (records, reschedule_immediately) == ([PartitionChangeRecord(partition_id=1, topic_id=foo_id, leader=0)], False)
    ctx.replay(records)
    assert rc.are_partition_leaders_imbalanced() is False
    bar_id = ctx.create_test_topic("bar", [[0, 1]]).topic_id
    records: list = []
    rc.handle_broker_fenced(0, records)
    ctx.replay(records)
    assert (bar_id, 0) in rc.imbalanced_partitions
    ctx.delete_topic(bar_id)
    assert (bar_id, 0) not in rc.imbalanced_partitions


def test_quorum_controller_schedules_leader_balancing():
    """QuorumController#maybeScheduleNextBalancePartitionLeaders (kafka_ref's own check): after a write
    that leaves a leader off its preferred replica, a run is scheduled a check interval later;
    the run writes the preferred elections; with auto.leader.rebalance.enable off nothing is scheduled."""
    from test_kraft_cluster import controller_with_topic

    from kafka_ref.controller.quorum.quorum_controller import ImbalanceSchedule

    controller, time, epochs, topic_id = controller_with_topic(**{"leader.imbalance.check.interval.seconds": 30})
    assert controller.imbalanced_scheduled is ImbalanceSchedule.DEFERRED
    # Broker 0 (leader of t-0) is fenced: 1 leads, 0 is out of the ISR.
    records: list = []
    controller.replication_control.handle_broker_fenced(0, records)
    controller._write("fence", ControllerResult(records, None), lambda _r: None)
    controller.raft_client.poll()  # the Raft thread writes it (linger 0): committed, so shown
    assert controller.partition_state("t", 0)["leader"] == 1
    assert controller.imbalanced_scheduled is ImbalanceSchedule.SCHEDULED
    assert controller._balance_deadline_ns == time.nanoseconds() + 30 * 1_000_000_000
    # 0 returns to the ISR; the run elects it back.
    records = []
    controller.replication_control.handle_broker_unfenced(0, epochs[0], records)
    controller._write("unfence", ControllerResult(records, None), lambda _r: None)
    controller.raft_client.poll()
    state = controller.partition_state("t", 0)
    alter_records, _response = controller.replication_control.alter_partition(AlterPartitionRequest(
        broker_id=1, broker_epoch=epochs[1], topics=(AlterPartitionTopicData(topic_id=topic_id, partitions=(
            AlterPartitionPartitionData(partition_index=0, leader_epoch=state["leader_epoch"],
                                        partition_epoch=state["partition_epoch"],
                                        new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in (1, 2, 0))),)),)))
    controller._write("alter", ControllerResult(alter_records, None), lambda _r: None)
    controller.maybe_balance_partition_leaders()
    controller.raft_client.poll()
    assert controller.partition_state("t", 0)["leader"] == 0
    assert controller.replication_control.are_partition_leaders_imbalanced() is False
    assert controller.imbalanced_scheduled is ImbalanceSchedule.DEFERRED
    # Disabled: never scheduled.
    off, _time, _epochs, _tid = controller_with_topic(**{"auto.leader.rebalance.enable": False})
    records = []
    off.replication_control.handle_broker_fenced(0, records)
    off._write("fence", ControllerResult(records, None), lambda _r: None)
    assert off.replication_control.are_partition_leaders_imbalanced() is True
    assert off.imbalanced_scheduled is ImbalanceSchedule.DEFERRED and off._balance_deadline_ns is None


@pytest.mark.anyio
async def test_kraft_cluster_rebalances_leaders_back_to_the_preferred_replica():
    """QuorumController's leader balancing end to end (kafka_ref's own check, after
    testBalancePartitionLeaders): the preferred replica is bounced, comes back into the ISR, and a
    balancing run within one check interval makes it the leader again, one leader epoch later."""
    import anyio

    from test_preferred_election import bounce

    from kafka_ref.cluster import Cluster
    from kafka_ref.common.topic_partition import TopicPartition

    config = {"leader.imbalance.check.interval.seconds": 10}
    async with Cluster(brokers=3, metadata_mode="kraft", config=config, seed=41) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2], 1: [0, 2, 1]})
        tps = [TopicPartition("t", 0), TopicPartition("t", 1)]
        await bounce(cluster, 0, tps)
        back_in_isr = anyio.current_time()
        assert [cluster.leader_for("t", p) for p in range(2)] == [1, 2]
        isrs = [cluster.partition_state("t", p)["isr"] for p in range(2)]
        assert [sorted(isr) for isr in isrs] == [[0, 1, 2], [0, 1, 2]]
        await cluster.wait_until(lambda: all(cluster.leader_for("t", p) == 0 for p in range(2)),
                                 timeout_ms=20000, poll_ms=1, message="leadership rebalanced")
        assert anyio.current_time() - back_in_isr <= 10.5
        assert [cluster.partition_state("t", p)["leader_epoch"] for p in range(2)] == [2, 2]
        # The election changes the leader only.
        assert [cluster.partition_state("t", p)["isr"] for p in range(2)] == isrs
