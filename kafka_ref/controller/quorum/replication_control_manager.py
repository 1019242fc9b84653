"""The controller's topics and partitions: creation, deletion, ISR changes, leader election.

Mirrors org.apache.kafka.controller.ReplicationControlManager (Kafka 3.4). Every operation
returns the records it wants written (the QuorumController replays them and appends them to the
metadata log) and the answer for the caller; the state here changes only by ``replay``.

Kafka keeps a BrokersToIsrs index (broker → partitions whose ISR holds it, NO_LEADER →
leaderless partitions); here the same questions are answered by scanning the partitions,
which gives the same answers in partition order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterator

from kafka_ref.server.bounded_list import BoundedList
from kafka_ref.common.errors import (
    ApiException,
    Errors,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    NoReassignmentInProgressException,
    UnknownTopicIdException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
)
from kafka_ref.common.requests.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafka_ref.common.requests.create_partitions import CreatePartitionsTopic, CreatePartitionsTopicResult
from kafka_ref.common.requests.create_topics import CreatableTopicConfigs, CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsResponse,
    ListPartitionReassignmentsTopics,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.controller.quorum.cluster_control_manager import ClusterControlManager
from kafka_ref.controller.quorum.configuration_control_manager import ConfigurationControlManager, FeatureControlManager
from kafka_ref.controller.quorum.partition_change_builder import Election, PartitionChangeBuilder
from kafka_ref.controller.quorum.partition_reassignment import PartitionReassignmentReplicas, PartitionReassignmentRevert
from kafka_ref.controller.quorum.replication_broker_changes import ReplicationBrokerChanges
from kafka_ref.controller.quorum.replication_leader_elections import ReplicationLeaderElections
from kafka_ref.controller.reassignment import ApiError
from kafka_ref.image.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    ConfigResource,
    ConfigResourceType,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.image.registrations import PartitionRegistration
from kafka_ref.zk.admin_zk_client import has_collision_chars, unify_collision_chars, validate_topic_name


@dataclass(slots=True)
class TopicControlInfo:
    """Mirrors ReplicationControlManager.TopicControlInfo."""

    name: str
    id: Uuid
    parts: dict[int, PartitionRegistration] = field(default_factory=dict)


# Mirrors QuorumController.MAX_RECORDS_PER_USER_OP (= MAX_RECORDS_PER_BATCH, Kafka 3.5.0+): the most
# records one user operation may write in its atomic batch.
MAX_RECORDS_PER_USER_OP = 10000
# Mirrors ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE: the most preferred-leader
# elections one maybeBalancePartitionLeaders run writes.
MAX_ELECTIONS_PER_IMBALANCE = 1000


class ReplicationControlManager(ReplicationBrokerChanges, ReplicationLeaderElections):
    """Mirrors org.apache.kafka.controller.ReplicationControlManager."""

    def __init__(self, cluster_control: ClusterControlManager, configuration_control: ConfigurationControlManager,
                 feature_control: FeatureControlManager, rng: random.Random, controller_id: int,
                 default_num_partitions: int = 1, default_replication_factor: int = 1,
                 delete_topic_enable: bool = True,
                 max_elections_per_imbalance: int = MAX_ELECTIONS_PER_IMBALANCE) -> None:
        self.cluster_control = cluster_control
        self.configuration_control = configuration_control
        self.feature_control = feature_control
        self.rng = rng
        self.default_num_partitions = default_num_partitions
        self.default_replication_factor = default_replication_factor
        self.delete_topic_enable = delete_topic_enable
        self.topics_by_name: dict[str, Uuid] = {}
        # Mirrors ReplicationControlManager#topicsWithCollisionChars: for each name with a '.' or '_',
        # read with '.' as '_', the existing topics that read so.
        self.topics_with_collision_chars: dict[str, set[str]] = {}
        self.topics: dict[Uuid, TopicControlInfo] = {}
        self.max_elections_per_imbalance = max_elections_per_imbalance
        # Mirrors ReplicationControlManager#imbalancedPartitions: partitions whose leader is not their
        # preferred (first) replica, kept by replay (a dict used as an insertion-ordered set).
        self.imbalanced_partitions: dict[tuple[Uuid, int], None] = {}
        self._log = state_change_logger(controller_id=controller_id)

    # ------------------------------------------------------------------ replay

    def replay_topic(self, record: TopicRecord) -> None:
        """Mirrors ReplicationControlManager#replay(TopicRecord).

        1. The name now maps to the record's id; 2. a name already present (no RemoveTopicRecord
        in between) is a corrupt log: fail, saying whether the id is the same or a new one
        (as in Kafka, the name map was already overwritten); 3. the new topic, no partitions yet.
        """
        # 1. Name to id.
        existing = self.topics_by_name.get(record.name)
        self.topics_by_name[record.name] = record.topic_id
        # 2. Duplicates.
        if existing is not None:
            if existing == record.topic_id:
                raise RuntimeError(f"Found duplicate TopicRecord for {record.name} with topic ID {record.topic_id}")
            raise RuntimeError(f"Found duplicate TopicRecord for {record.name} with a different ID than before. "
                               f"Previous ID was {existing} and new ID is {record.topic_id}")
        # 3. The topic, indexed for collisions when its name has a '.' or '_'.
        if has_collision_chars(record.name):
            self.topics_with_collision_chars.setdefault(unify_collision_chars(record.name), set()).add(record.name)
        self.topics[record.topic_id] = TopicControlInfo(record.name, record.topic_id)

    def replay_partition(self, record: PartitionRecord) -> None:
        """Mirrors ReplicationControlManager#replay(PartitionRecord)."""
        topic = self.topics.get(record.topic_id)
        if topic is None:
            raise RuntimeError(f"Tried to create partition {record.topic_id}:{record.partition_id}, but no topic with that ID was found.")
        registration = PartitionRegistration.from_record(record)
        topic.parts[record.partition_id] = registration
        self._update_imbalance(record.topic_id, record.partition_id, registration)

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        """Mirrors ReplicationControlManager#replay(PartitionChangeRecord)."""
        topic = self.topics.get(record.topic_id)
        previous = topic.parts.get(record.partition_id) if topic is not None else None
        if previous is None:
            raise RuntimeError(f"Tried to change partition {record.topic_id}:{record.partition_id}, but it was not found.")
        registration = previous.merge(record)
        topic.parts[record.partition_id] = registration
        self._update_imbalance(record.topic_id, record.partition_id, registration)

    def _update_imbalance(self, topic_id: Uuid, partition_id: int, registration: PartitionRegistration) -> None:
        """The imbalancedPartitions step of replay(PartitionRecord / PartitionChangeRecord)."""
        if registration.has_preferred_leader():
            self.imbalanced_partitions.pop((topic_id, partition_id), None)
        else:
            self.imbalanced_partitions[(topic_id, partition_id)] = None

    def replay_remove_topic(self, record: RemoveTopicRecord) -> None:
        """Mirrors ReplicationControlManager#replay(RemoveTopicRecord): the topic and its configs go."""
        topic = self.topics.pop(record.topic_id, None)
        if topic is None:
            raise UnknownTopicIdException(f"Can't find topic with ID {record.topic_id} to remove.")
        self.topics_by_name.pop(topic.name, None)
        for partition_id in topic.parts:
            self.imbalanced_partitions.pop((record.topic_id, partition_id), None)
        if has_collision_chars(topic.name):
            normalized = unify_collision_chars(topic.name)
            colliding = self.topics_with_collision_chars.get(normalized)
            if colliding is not None:
                colliding.discard(topic.name)
                if not colliding:
                    del self.topics_with_collision_chars[normalized]
        self.configuration_control.delete_topic_configs(topic.name)

    # ------------------------------------------------------------------ the BrokersToIsrs questions

    def partitions_with_broker_in_isr(self, broker_id: int) -> Iterator[tuple[Uuid, int]]:
        """Mirrors BrokersToIsrs#partitionsWithBrokerInIsr."""
        for topic in list(self.topics.values()):
            for partition_id, partition in sorted(topic.parts.items()):
                if broker_id in partition.isr:
                    yield topic.id, partition_id

    def partitions_with_no_leader(self) -> Iterator[tuple[Uuid, int]]:
        """Mirrors BrokersToIsrs#partitionsWithNoLeader."""
        for topic in list(self.topics.values()):
            for partition_id, partition in sorted(topic.parts.items()):
                if partition.leader == NO_LEADER:
                    yield topic.id, partition_id

    def has_leaderships(self, broker_id: int) -> bool:
        """Mirrors BrokersToIsrs#hasLeaderships."""
        return any(p.leader == broker_id for t in self.topics.values() for p in t.parts.values())

    def get_partition(self, topic_id: Uuid, partition_id: int) -> PartitionRegistration | None:
        """Mirrors ReplicationControlManager#getPartition."""
        topic = self.topics.get(topic_id)
        return topic.parts.get(partition_id) if topic is not None else None

    def get_topic_id(self, name: str) -> Uuid | None:
        """Mirrors ReplicationControlManager#getTopicId."""
        return self.topics_by_name.get(name)

    def _builder(self, partition: PartitionRegistration, topic_id: Uuid, partition_id: int, acceptable: Any) -> PartitionChangeBuilder:
        return PartitionChangeBuilder(
            partition, topic_id, partition_id, acceptable,
            is_leader_recovery_supported=self.feature_control.is_leader_recovery_supported(),
            bump_leader_epoch_on_isr_shrink=self.feature_control.is_leader_epoch_bump_required_on_isr_shrink(),
        )

    # ------------------------------------------------------------------ CreateTopics

    def create_topics(self, request: CreateTopicsRequest,
                      describable: set[str] | None = None) -> tuple[list[Any], CreateTopicsResponse]:
        """Mirrors ReplicationControlManager#createTopics: one atomic batch for every topic created.

        1. names must be valid and new; 2. configs must not be null; 3. topic by topic, its
        configs must validate, then it gets its partitions (manual assignment or the striped
        placer) with the ISR = the active replicas and the leader = the first of them, written as
        TopicRecord, its ConfigRecords, its PartitionRecords; 4. the response per topic. A created
        topic outside ``describable`` (the names the principal may DESCRIBE_CONFIGS; None: every
        topic) is answered without its configs and counts (TOPIC_AUTHORIZATION_FAILED as its
        topic config error).
        """
        errors: dict[str, ApiError] = {}
        # At most MAX_RECORDS_PER_USER_OP records for the whole request (KAFKA-14996): past that
        # BoundedListTooLongException fails the request, POLICY_VIOLATION for every topic.
        records: BoundedList = BoundedList(MAX_RECORDS_PER_USER_OP)
        # 1. Names: valid and not colliding, then not existing (which overrides a name error).
        self.validate_new_topic_names(errors, request.topics, self.topics_with_collision_chars)
        for topic in request.topics:
            if topic.name in self.topics_by_name:
                errors[topic.name] = ApiError(Errors.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
        # 2. Configs: null values fail the topic (ReplicationControlManager#computeConfigChanges).
        changes: dict[str, dict[str, str]] = {}
        for topic in request.topics:
            if topic.name in errors:
                continue
            nulls = [c.name for c in topic.configs if c.value is None]
            if nulls:
                errors[topic.name] = ApiError(Errors.INVALID_CONFIG, f"Null value not supported for topic configs: {','.join(nulls)}")
            elif topic.configs:
                changes[topic.name] = {c.name: c.value for c in topic.configs}
        # 3. Topic by topic: its config records (a bad config fails it), then the topic itself,
        #    which writes TopicRecord, those config records and its PartitionRecords, or nothing.
        successes: dict[str, CreatableTopicResult] = {}
        for topic in request.topics:
            if topic.name in errors:
                continue
            config_records: list[Any] = []
            if topic.name in changes:
                resource = ConfigResource(ConfigResourceType.TOPIC, topic.name)
                config_records, config_errors = self.configuration_control.incremental_alter_configs(
                    {resource: changes[topic.name]})
                if resource in config_errors:
                    errors[topic.name] = ApiError.from_throwable(config_errors[resource])
                    continue
            try:
                successes[topic.name] = self._create_topic(topic, records, config_records,
                                                           describable is None or topic.name in describable)
            except ApiException as exc:
                errors[topic.name] = ApiError.from_throwable(exc)
        # 4. Answer.
        results = []
        for topic in request.topics:
            error = errors.get(topic.name)
            if error is not None:
                results.append(CreatableTopicResult(name=topic.name, error_code=error.error.code, error_message=error.message))
            else:
                results.append(successes[topic.name])
        self._log.info("create_topics_result", topics={t.name: Errors.for_code(r.error_code).name for t, r in zip(request.topics, results)})
        if request.validate_only:
            return [], CreateTopicsResponse(topics=tuple(results))
        return records, CreateTopicsResponse(topics=tuple(results))

    @staticmethod
    def validate_new_topic_names(topic_errors: dict[str, ApiError], topics: Any,
                                 topics_with_collision_chars: dict[str, set[str]]) -> None:
        """Mirrors ReplicationControlManager#validateNewTopicNames.

        For each topic not already failed: 1. an invalid name is INVALID_TOPIC_EXCEPTION with
        Topic#validate's text; 2. a name that reads like an existing one once '.' is taken as
        '_' (both would name the same metrics) is INVALID_TOPIC_EXCEPTION naming the first such
        topic in name order.
        """
        for topic in topics:
            if topic.name in topic_errors:
                continue
            # 1. Topic#validate.
            try:
                validate_topic_name(topic.name)
            except InvalidTopicException as exc:
                topic_errors[topic.name] = ApiError(Errors.INVALID_TOPIC_EXCEPTION, str(exc))
            # 2. Collisions.
            if has_collision_chars(topic.name):
                colliding = topics_with_collision_chars.get(unify_collision_chars(topic.name))
                if colliding:
                    topic_errors[topic.name] = ApiError(
                        Errors.INVALID_TOPIC_EXCEPTION,
                        f"Topic '{topic.name}' collides with existing topic: {sorted(colliding)[0]}")

    def _create_topic(self, topic: Any, records: list[Any], config_records: list[Any] = (),
                      authorized_to_return_configs: bool = True) -> CreatableTopicResult:
        """Mirrors ReplicationControlManager#createTopic: nothing is written unless the topic is created."""
        new_parts: dict[int, PartitionRegistration] = {}
        if topic.assignments:
            # 1. A manual assignment: -1/-1 required, consecutive partitions, registered brokers.
            if topic.replication_factor != -1:
                raise InvalidRequestException("A manual partition assignment was specified, but replication factor was not set to -1.")
            if topic.num_partitions != -1:
                raise InvalidRequestException("A manual partition assignment was specified, but numPartitions was not set to -1.")
            replication_factor: int | None = None
            for assignment in topic.assignments:
                if assignment.partition_index in new_parts:
                    raise InvalidReplicaAssignmentException(
                        f"Found multiple manual partition assignments for partition {assignment.partition_index}")
                self.validate_manual_partition_assignment(assignment.broker_ids, replication_factor)
                replication_factor = len(assignment.broker_ids)
                isr = [b for b in assignment.broker_ids if self.cluster_control.is_active(b)]
                if not isr:
                    raise InvalidReplicaAssignmentException(
                        f"All brokers specified in the manual partition assignment for partition "
                        f"{assignment.partition_index} are fenced or in controlled shutdown.")
                new_parts[assignment.partition_index] = PartitionRegistration(
                    tuple(assignment.broker_ids), tuple(isr), leader=isr[0])
            if sorted(new_parts) != list(range(len(new_parts))):
                raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
        else:
            # 2. The placer picks the replicas.
            if topic.replication_factor < -1 or topic.replication_factor == 0:
                raise InvalidReplicationFactorException("Replication factor must be larger than 0, or -1 to use the default value.")
            if topic.num_partitions < -1 or topic.num_partitions == 0:
                raise Errors.INVALID_PARTITIONS.exception("Number of partitions was set to an invalid non-positive value.")
            num_partitions = self.default_num_partitions if topic.num_partitions == -1 else topic.num_partitions
            replication_factor = self.default_replication_factor if topic.replication_factor == -1 else topic.replication_factor
            # kafka_ref checks the record bound before placing: Kafka places every partition first
            # and fails when the records overflow, after building all the placements in memory
            # (with billions of partitions that exhausts the controller). Same answer, no blow-up.
            if isinstance(records, BoundedList):
                records.ensure_room(1 + num_partitions)
            try:
                placements = self.cluster_control.replica_placer.place(0, num_partitions, replication_factor,
                                                                       self.cluster_control.usable_brokers())
            except InvalidReplicationFactorException as exc:
                raise InvalidReplicationFactorException(f"Unable to replicate the partition {replication_factor} time(s): {exc}") from None
            for partition_id, replicas in enumerate(placements):
                isr = [b for b in replicas if self.cluster_control.is_active(b)]
                if not isr:
                    raise InvalidReplicationFactorException(
                        f"Unable to replicate the partition {replication_factor} time(s): All brokers are currently "
                        "fenced or in controlled shutdown.")
                new_parts[partition_id] = PartitionRegistration(tuple(replicas), tuple(isr), leader=isr[0])
        # 3. A fresh topic id, the TopicRecord, then one PartitionRecord per partition.
        topic_id = Uuid.random_uuid(self.rng)
        records.append(TopicRecord(name=topic.name, topic_id=topic_id))
        records.extend(config_records)
        for partition_id in sorted(new_parts):
            records.append(new_parts[partition_id].to_record(topic_id, partition_id))
        # 4. The answer lists the topic's effective configs (its creation configs over the defaults)
        #    and counts, when the principal may describe its configs.
        if not authorized_to_return_configs:
            return CreatableTopicResult(name=topic.name, topic_id=topic_id, error_code=Errors.NONE.code, error_message=None,
                                        topic_config_error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
        configs = tuple(CreatableTopicConfigs(name=e.name, value=None if e.is_sensitive else e.value,
                                              read_only=e.read_only, config_source=int(e.config_source),
                                              is_sensitive=e.is_sensitive)
                        for e in self.configuration_control.compute_effective_topic_configs(
                            {c.name: c.value for c in topic.configs}))
        return CreatableTopicResult(
            name=topic.name, topic_id=topic_id, error_code=Errors.NONE.code, error_message=None,
            num_partitions=len(new_parts), replication_factor=len(new_parts[0].replicas), configs=configs,
        )

    def validate_manual_partition_assignment(self, assignment: tuple[int, ...], replication_factor: int | None) -> None:
        """Mirrors ReplicationControlManager#validateManualPartitionAssignment."""
        if not assignment:
            raise InvalidReplicaAssignmentException("The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(assignment):
            if self.cluster_control.registration(broker_id) is None:
                raise InvalidReplicaAssignmentException(
                    f"The manual partition assignment includes broker {broker_id}, but no such broker is registered.")
            if broker_id == previous:
                raise InvalidReplicaAssignmentException(
                    f"The manual partition assignment includes the broker {broker_id} more than once.")
            previous = broker_id
        if replication_factor is not None and len(assignment) != replication_factor:
            raise InvalidReplicaAssignmentException(
                f"The manual partition assignment includes a partition with {len(assignment)} replica(s), but this is "
                f"not consistent with previous partitions, which have {replication_factor} replica(s).")

    # ------------------------------------------------------------------ CreatePartitions

    def create_partitions(self, topics: list[CreatePartitionsTopic]) -> tuple[list[Any], list[CreatePartitionsTopicResult]]:
        """Mirrors org.apache.kafka.controller.ReplicationControlManager#createPartitions(ControllerRequestContext, List): every topic's new partitions in one atomic batch.

        A topic that fails keeps its error and adds no records; the others go on. More than
        MAX_RECORDS_PER_USER_OP records in all fails the whole request (BoundedListTooLongException).
        """
        records: BoundedList = BoundedList(MAX_RECORDS_PER_USER_OP)
        results = []
        for topic in topics:
            try:
                self._create_partitions(topic, records)
                results.append(CreatePartitionsTopicResult(name=topic.name))
            except ApiException as exc:
                api_error = ApiError.from_throwable(exc)
                results.append(CreatePartitionsTopicResult(name=topic.name, error_code=api_error.error.code,
                                                           error_message=api_error.message))
        return records, results

    def _create_partitions(self, topic: CreatePartitionsTopic, records: BoundedList) -> None:
        """Mirrors org.apache.kafka.controller.ReplicationControlManager#createPartitions(ControllerRequestContext, CreatePartitionsTopic, List): one topic.

        1. The topic must exist and the count must grow; 2. given assignments must be one per
        added partition, each valid (validateManualPartitionAssignment at the topic's replication
        factor, partition 0's) with at least one active broker for the ISR; otherwise the striped
        placer places them after the existing partitions; 3. a PartitionRecord per new
        partition, ISR = its active replicas, leader = the first of them.
        """
        # 1. An existing topic, a larger count.
        topic_id = self.topics_by_name.get(topic.name)
        info = self.topics.get(topic_id) if topic_id is not None else None
        if info is None:
            raise UnknownTopicOrPartitionException()
        current = len(info.parts)
        if topic.count == current:
            raise Errors.INVALID_PARTITIONS.exception(f"Topic already has {current} partition(s).")
        if topic.count < current:
            raise Errors.INVALID_PARTITIONS.exception(
                f"The topic {topic.name} currently has {current} partition(s); {topic.count} would not be an increase.")
        additional = topic.count - current
        if topic.assignments is not None and len(topic.assignments) != additional:
            raise InvalidReplicaAssignmentException(
                f"Attempted to add {additional} additional partition(s), but only {len(topic.assignments)} "
                "assignment(s) were specified.")
        replication_factor = len(next(iter(info.parts.values())).replicas)
        # 2. The replicas and ISR of each new partition.
        if topic.assignments is not None:
            placements, isrs = [], []
            for i, assignment in enumerate(topic.assignments):
                self.validate_manual_partition_assignment(tuple(assignment.broker_ids), replication_factor)
                isr = [b for b in assignment.broker_ids if self.cluster_control.is_active(b)]
                if not isr:
                    raise InvalidReplicaAssignmentException(
                        f"All brokers specified in the manual partition assignment for partition {current + i} are "
                        "fenced or in controlled shutdown.")
                placements.append(list(assignment.broker_ids))
                isrs.append(isr)
        else:
            records.ensure_room(additional)
            placements = self.cluster_control.replica_placer.place(current, additional, replication_factor,
                                                                   self.cluster_control.usable_brokers())
            isrs = placements
        # 3. The records.
        for i, (replicas, isr) in enumerate(zip(placements, isrs)):
            active = [b for b in isr if self.cluster_control.is_active(b)]
            if not active:
                raise InvalidReplicationFactorException(
                    f"Unable to replicate the partition {replication_factor} time(s): All brokers are currently "
                    "fenced or in controlled shutdown.")
            registration = PartitionRegistration(tuple(replicas), tuple(active), leader=active[0])
            records.append(registration.to_record(info.id, current + i))

    # ------------------------------------------------------------------ AlterPartitionReassignments

    def alter_partition_reassignments(self, request: AlterPartitionReassignmentsRequest
                                      ) -> tuple[list[Any], AlterPartitionReassignmentsResponse]:
        """Mirrors ReplicationControlManager#alterPartitionReassignments: each partition on its own, errors per partition."""
        records: list[Any] = []
        topics_out = []
        for topic in request.topics:
            partitions_out = []
            for target in topic.partitions:
                try:
                    self.alter_partition_reassignment(topic.name, target.partition_index, target.replicas, records)
                    error, message = Errors.NONE, None
                except ApiException as exc:
                    api_error = ApiError.from_throwable(exc)
                    error, message = api_error.error, api_error.message
                partitions_out.append(ReassignablePartitionResponse(
                    partition_index=target.partition_index, error_code=error.code, error_message=message))
            topics_out.append(ReassignableTopicResponse(name=topic.name, partitions=tuple(partitions_out)))
        self._log.info("alter_partition_reassignments", records=len(records))
        return records, AlterPartitionReassignmentsResponse(responses=tuple(topics_out))

    def list_partition_reassignments(self, topics: tuple[ListPartitionReassignmentsTopics, ...] | None
                                     ) -> ListPartitionReassignmentsResponse:
        """Mirrors ReplicationControlManager#listPartitionReassignments.

        1. None: every topic with a partition being reassigned (Kafka keeps these in its
        ``reassigningTopics`` map; here they are found by looking); 2. named topics that exist,
        their named partitions; 3. only partitions being reassigned are answered, and a topic
        with none is left out (ReplicationControlManager#listReassigningTopic).
        """
        if topics is None:
            # 1. All reassigning topics.
            wanted = [(topic, sorted(p for p, r in topic.parts.items() if r.is_reassigning()))
                      for topic in self.topics.values()]
        else:
            # 2. The topics named (unknown ones skipped).
            wanted = [(self.topics[self.topics_by_name[t.name]], list(t.partition_indexes)) for t in topics
                      if self.topics_by_name.get(t.name) in self.topics]
        # 3. The ongoing reassignments (ReplicationControlManager#getOngoingPartitionReassignment).
        out = []
        for topic, partition_ids in wanted:
            ongoing = tuple(OngoingPartitionReassignment(
                partition_index=p, replicas=tuple(r.replicas), adding_replicas=tuple(r.adding_replicas),
                removing_replicas=tuple(r.removing_replicas))
                for p in partition_ids if (r := topic.parts.get(p)) is not None and r.is_reassigning())
            if ongoing:
                out.append(OngoingTopicReassignment(name=topic.name, partitions=ongoing))
        return ListPartitionReassignmentsResponse(topics=tuple(out))

    def alter_partition_reassignment(self, topic_name: str, partition_id: int, replicas: tuple[int, ...] | None,
                                     records: list[Any]) -> None:
        """Mirrors ReplicationControlManager#alterPartitionReassignment: start/change one, or cancel it (replicas None)."""
        topic_id = self.topics_by_name.get(topic_name)
        topic = self.topics.get(topic_id) if topic_id is not None else None
        if topic is None:
            raise UnknownTopicOrPartitionException(f"Unable to find a topic named {topic_name}.")
        partition = topic.parts.get(partition_id)
        if partition is None:
            raise UnknownTopicOrPartitionException(f"Unable to find partition {topic_name}:{partition_id}.")
        if replicas is None:
            change = self.cancel_partition_reassignment(topic_name, topic_id, partition_id, partition)
        else:
            change = self.change_partition_reassignment(topic_id, partition_id, partition, replicas)
        if change is not None:
            records.append(change)

    def cancel_partition_reassignment(self, topic_name: str, topic_id: Uuid, partition_id: int,
                                      partition: PartitionRegistration) -> Any:
        """Mirrors ReplicationControlManager#cancelPartitionReassignment: back to the original replicas.

        1. Only a partition being reassigned can be cancelled; 2. a revert that empties the ISR
        is an unclean election, allowed only with unclean.leader.election.enable; 3. one change
        record: original replicas, the ISR without the adding replicas, no reassignment lists.
        """
        # 1. In progress?
        if not partition.is_reassigning():
            raise NoReassignmentInProgressException(Errors.NO_REASSIGNMENT_IN_PROGRESS.message)
        revert = PartitionReassignmentRevert.of(partition.replicas, partition.isr, partition.removing_replicas,
                                                partition.adding_replicas)
        unclean_allowed = self.configuration_control.unclean_leader_election_enabled_for_topic(topic_name)
        # 2. Unclean only if allowed.
        if revert.unclean and not unclean_allowed:
            raise InvalidReplicaAssignmentException(
                f"Unable to revert partition assignment for {topic_name}:{partition_id} because it would require an "
                "unclean leader election.")
        # 3. The change.
        builder = self._builder(partition, topic_id, partition_id, self.cluster_control.is_active)
        if unclean_allowed:
            builder.set_election(Election.UNCLEAN)
        builder.set_target_isr(revert.isr).set_target_replicas(revert.replicas).set_target_removing(()).set_target_adding(())
        return builder.build()

    def change_partition_reassignment(self, topic_id: Uuid, partition_id: int, partition: PartitionRegistration,
                                      target: tuple[int, ...]) -> Any:
        """Mirrors ReplicationControlManager#changePartitionReassignment: the first record of a reassignment.

        1. The target must be a valid assignment of registered brokers; 2. the merged replica
        set (target, then the replicas being removed) with removing/adding lists, unless the
        ISR already allows completing it in the same record (a mere reordering, for one).
        """
        # 1. Valid target.
        self.validate_manual_partition_assignment(tuple(target), None)
        # 2. Merged replicas and the reassignment lists.
        reassignment = PartitionReassignmentReplicas.from_assignments(partition.replicas, target)
        builder = self._builder(partition, topic_id, partition_id, self.cluster_control.is_active)
        if list(reassignment.replicas) != list(partition.replicas):
            builder.set_target_replicas(reassignment.replicas)
        if reassignment.removing:
            builder.set_target_removing(reassignment.removing)
        if reassignment.adding:
            builder.set_target_adding(reassignment.adding)
        return builder.build()

    # ------------------------------------------------------------------ DeleteTopics

    def find_topic_ids(self, names: Any) -> dict[str | None, "Uuid | ApiError"]:
        """Mirrors ReplicationControlManager#findTopicIds: each name's id, or why there is none.

        kafka_ref reads the latest state (Kafka reads at the last committed offset; the
        controller answers from the same state it then writes against).
        """
        results: dict[str | None, Uuid | ApiError] = {}
        for name in names:
            if name is None:
                results[None] = ApiError(Errors.INVALID_REQUEST, "Invalid null topic name.")
                continue
            topic_id = self.topics_by_name.get(name)
            results[name] = topic_id if topic_id is not None else ApiError(
                Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.message)
        return results

    def find_topic_names(self, topic_ids: Any) -> dict[Uuid | None, "str | ApiError"]:
        """Mirrors ReplicationControlManager#findTopicNames: each id's topic name, or why there is none."""
        results: dict[Uuid | None, str | ApiError] = {}
        for topic_id in topic_ids:
            if topic_id is None or topic_id == ZERO_UUID:
                results[topic_id] = ApiError(Errors.INVALID_REQUEST, f"Attempt to find topic with invalid topicId {topic_id}")
                continue
            topic = self.topics.get(topic_id)
            results[topic_id] = topic.name if topic is not None else ApiError(
                Errors.UNKNOWN_TOPIC_ID, Errors.UNKNOWN_TOPIC_ID.message)
        return results

    def delete_topics(self, topic_ids: list[Uuid]) -> tuple[list[Any], dict[Uuid, Errors]]:
        """Mirrors ReplicationControlManager#deleteTopics: one RemoveTopicRecord per known topic."""
        records: list[Any] = []
        results: dict[Uuid, Errors] = {}
        for topic_id in topic_ids:
            if not self.delete_topic_enable:
                results[topic_id] = Errors.TOPIC_DELETION_DISABLED
            elif topic_id not in self.topics:
                results[topic_id] = Errors.UNKNOWN_TOPIC_ID
            else:
                records.append(RemoveTopicRecord(topic_id=topic_id))
                results[topic_id] = Errors.NONE
        return records, results

    # ------------------------------------------------------------------ AlterPartition

    def alter_partition(self, request: AlterPartitionRequest) -> tuple[list[Any], AlterPartitionResponse]:
        """Mirrors ReplicationControlManager#alterPartition (Kafka 3.7).

        The sender's broker epoch must be current (else STALE_BROKER_EPOCH for the whole
        request); versions 2+ name each topic by id (unknown: UNKNOWN_TOPIC_ID), 0-1 by name
        (unknown: UNKNOWN_TOPIC_OR_PARTITION); each partition is validated
        (validateAlterPartitionData), then the ISR change goes through a PartitionChangeBuilder
        like any other change.
        """
        # 1. Broker epoch.
        self.cluster_control.check_broker_epoch(request.broker_id, request.broker_epoch)
        records: list[Any] = []
        topics_out = []
        use_topic_ids = request.uses_topic_ids()
        for topic_data in request.topics:
            # 2. The topic, by id from version 2, by name before.
            topic_id = topic_data.topic_id if use_topic_ids else self.topics_by_name.get(topic_data.topic_name)
            topic = self.topics.get(topic_id) if topic_id is not None and topic_id != ZERO_UUID else None
            if topic is None:
                error = Errors.UNKNOWN_TOPIC_ID if use_topic_ids else Errors.UNKNOWN_TOPIC_OR_PARTITION
                topics_out.append(AlterPartitionResponseTopicData(
                    topic_name=topic_data.topic_name, topic_id=topic_data.topic_id,
                    partitions=tuple(AlterPartitionResponsePartitionData(partition_index=p.partition_index, error_code=error.code)
                                     for p in topic_data.partitions)))
                continue
            partitions_out = []
            for data in topic_data.partitions:
                partition = topic.parts.get(data.partition_index)
                # 3. Validate.
                error = self._validate_alter_partition_data(request.broker_id, topic, data.partition_index, partition,
                                                            request.request_version(), data)
                if error is not Errors.NONE:
                    partitions_out.append(AlterPartitionResponsePartitionData(partition_index=data.partition_index, error_code=error.code))
                    continue
                # 4. Build the change (unclean election only if the topic allows it).
                builder = self._builder(partition, topic.id, data.partition_index, self.cluster_control.is_active)
                if self.configuration_control.unclean_leader_election_enabled_for_topic(topic.name):
                    builder.set_election(Election.UNCLEAN)
                builder.set_target_isr(data.new_isr())
                builder.set_target_leader_recovery_state(LeaderRecoveryState(data.leader_recovery_state))
                change = builder.build()
                if change is not None:
                    records.append(change)
                    partition = partition.merge(change)
                    if change.leader not in (request.broker_id, NO_LEADER_CHANGE):
                        # A completed reassignment moved the leadership: the sender must refresh its
                        # metadata. Versions 0-1 know no NEW_LEADER_ELECTED and get FENCED_LEADER_EPOCH.
                        error = Errors.NEW_LEADER_ELECTED if request.request_version() > 1 else Errors.FENCED_LEADER_EPOCH
                        partitions_out.append(AlterPartitionResponsePartitionData(
                            partition_index=data.partition_index, error_code=error.code))
                        continue
                # 5. The committed state goes back to the leader.
                partitions_out.append(AlterPartitionResponsePartitionData(
                    partition_index=data.partition_index, error_code=Errors.NONE.code, leader_id=partition.leader,
                    leader_epoch=partition.leader_epoch, isr=partition.isr,
                    leader_recovery_state=int(partition.leader_recovery_state), partition_epoch=partition.partition_epoch))
            topics_out.append(AlterPartitionResponseTopicData(topic_name=topic_data.topic_name, topic_id=topic_data.topic_id,
                                                              partitions=tuple(partitions_out)))
        return records, AlterPartitionResponse(topics=tuple(topics_out))

    def _validate_alter_partition_data(self, broker_id: int, topic: TopicControlInfo, partition_id: int,
                                       partition: PartitionRegistration | None, request_version: int, data: Any) -> Errors:
        """Mirrors ReplicationControlManager#validateAlterPartitionData."""
        if partition is None:
            return Errors.UNKNOWN_TOPIC_OR_PARTITION
        # Epochs from the future: this controller is behind, the leader should find another.
        if data.leader_epoch > partition.leader_epoch or data.partition_epoch > partition.partition_epoch:
            return Errors.NOT_CONTROLLER
        if data.leader_epoch < partition.leader_epoch:
            return Errors.FENCED_LEADER_EPOCH
        if broker_id != partition.leader:
            return Errors.INVALID_REQUEST
        if data.partition_epoch < partition.partition_epoch:
            return Errors.INVALID_UPDATE_VERSION
        new_isr = data.new_isr()
        if len(set(new_isr)) != len(new_isr) or any(r not in partition.replicas for r in new_isr) or not new_isr:
            return Errors.INVALID_REQUEST
        if partition.leader not in new_isr:
            return Errors.INVALID_REQUEST
        if data.leader_recovery_state == LeaderRecoveryState.RECOVERING and len(new_isr) > 1:
            return Errors.INVALID_REQUEST
        if partition.leader_recovery_state == LeaderRecoveryState.RECOVERED and data.leader_recovery_state == LeaderRecoveryState.RECOVERING:
            return Errors.INVALID_REQUEST
        # Every proposed member must be registered, unfenced, not shutting down (and at the epoch the leader saw).
        # Below version 3 the request carries no broker epochs (Kafka's alterPartition rebuilds the
        # list from NewIsr with epoch -1), so none is checked.
        for state in data.new_isr_with_epochs:
            registration = self.cluster_control.registration(state.broker_id)
            broker_epoch = state.broker_epoch if request_version >= 3 else -1
            if (registration is None or registration.in_controlled_shutdown or registration.fenced
                    or (broker_epoch != -1 and registration.epoch != broker_epoch)):
                self._log.info("alter_partition_ineligible_replica", topic=topic.name, partition=partition_id,
                               replica=state.broker_id)
                # KIP-841: the error code depends on the request version.
                return Errors.INELIGIBLE_REPLICA if request_version > 1 else Errors.OPERATION_NOT_ATTEMPTED
        return Errors.NONE
