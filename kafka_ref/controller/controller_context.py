"""Everything the controller knows about the cluster, in one place.

Mirrors kafka.controller.ControllerContext (Kafka 3.x, ZooKeeper mode). The controller rebuilds
it from ZooKeeper when it takes over and keeps it current as events arrive; the state machines,
the leader elections and the request batch all read it. It is plain data: only the controller's
event task touches it, so nothing here takes a lock.

The partition and replica states and ``PartitionAndReplica`` are declared in Kafka's state
machine files; they live here, beside the maps that hold them, so the state machines and the
context share one definition without an import cycle (the state machine modules re-export them).
"""

from __future__ import annotations

from kafka_ref.common.errors import IllegalStateException  # noqa: F401 (re-exported)

import enum
from dataclasses import dataclass
from typing import Iterable, Mapping

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.zk.kafka_zk_client import INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION
from kafka_ref.zk.zk_data import BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment




# ---- states (kafka.controller.PartitionState / ReplicaState) --------------------------------

class PartitionState(enum.Enum):
    """Mirrors kafka.controller.PartitionState (the sealed trait and its four case objects).

    The value is Kafka's ``state`` byte. ``valid_previous_states`` is the transition table:
    a partition may enter a state only from one of these.
    """

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    @property
    def state(self) -> int:
        """Mirrors kafka.controller.PartitionState#state."""
        return self.value

    @property
    def valid_previous_states(self) -> frozenset["PartitionState"]:
        """Mirrors kafka.controller.PartitionState#validPreviousStates."""
        return VALID_PREVIOUS_PARTITION_STATES[self]

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


NewPartition = PartitionState.NewPartition
OnlinePartition = PartitionState.OnlinePartition
OfflinePartition = PartitionState.OfflinePartition
NonExistentPartition = PartitionState.NonExistentPartition

# The partition transition table as data (Kafka 3.x; seed 001 §5.3.2).
VALID_PREVIOUS_PARTITION_STATES: dict[PartitionState, frozenset[PartitionState]] = {
    NewPartition: frozenset({NonExistentPartition}),
    OnlinePartition: frozenset({NewPartition, OnlinePartition, OfflinePartition}),
    OfflinePartition: frozenset({NewPartition, OnlinePartition, OfflinePartition}),
    NonExistentPartition: frozenset({OfflinePartition}),
}


class ReplicaState(enum.Enum):
    """Mirrors kafka.controller.ReplicaState (the sealed trait and its seven case objects).

    The value is Kafka's ``state`` byte; ``valid_previous_states`` is the transition table.
    """

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    @property
    def state(self) -> int:
        """Mirrors kafka.controller.ReplicaState#state."""
        return self.value

    @property
    def valid_previous_states(self) -> frozenset["ReplicaState"]:
        """Mirrors kafka.controller.ReplicaState#validPreviousStates."""
        return VALID_PREVIOUS_REPLICA_STATES[self]

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


NewReplica = ReplicaState.NewReplica
OnlineReplica = ReplicaState.OnlineReplica
OfflineReplica = ReplicaState.OfflineReplica
ReplicaDeletionStarted = ReplicaState.ReplicaDeletionStarted
ReplicaDeletionSuccessful = ReplicaState.ReplicaDeletionSuccessful
ReplicaDeletionIneligible = ReplicaState.ReplicaDeletionIneligible
NonExistentReplica = ReplicaState.NonExistentReplica

# The replica transition table as data (Kafka 3.x; seed 001 §5.3.3 diagram).
VALID_PREVIOUS_REPLICA_STATES: dict[ReplicaState, frozenset[ReplicaState]] = {
    NewReplica: frozenset({NonExistentReplica}),
    OnlineReplica: frozenset({NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}),
    OfflineReplica: frozenset({NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible}),
    ReplicaDeletionStarted: frozenset({OfflineReplica}),
    ReplicaDeletionSuccessful: frozenset({ReplicaDeletionStarted}),
    ReplicaDeletionIneligible: frozenset({OfflineReplica, ReplicaDeletionStarted}),
    NonExistentReplica: frozenset({ReplicaDeletionSuccessful}),
}


@dataclass(frozen=True, slots=True, order=True)
class PartitionAndReplica:
    """Mirrors kafka.controller.PartitionAndReplica: one replica (a broker id) of one partition."""

    topic_partition: TopicPartition
    replica: int

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition

    def __str__(self) -> str:
        return f"[Topic={self.topic},Partition={self.partition},Replica={self.replica}]"


# ---- ReplicaAssignment helpers (kafka.controller.ReplicaAssignment's derived views) ---------

def origin_replicas(assignment: ReplicaAssignment) -> tuple[int, ...]:
    """Mirrors kafka.controller.ReplicaAssignment#originReplicas: replicas minus those being added."""
    return tuple(r for r in assignment.replicas if r not in assignment.adding_replicas)


def target_replicas(assignment: ReplicaAssignment) -> tuple[int, ...]:
    """Mirrors kafka.controller.ReplicaAssignment#targetReplicas: replicas minus those being removed."""
    return tuple(r for r in assignment.replicas if r not in assignment.removing_replicas)


def is_being_reassigned(assignment: ReplicaAssignment) -> bool:
    """Mirrors kafka.controller.ReplicaAssignment#isBeingReassigned."""
    return bool(assignment.adding_replicas or assignment.removing_replicas)


def reassign_to(assignment: ReplicaAssignment, target: Iterable[int]) -> ReplicaAssignment:
    """Mirrors kafka.controller.ReplicaAssignment#reassignTo: the full set while moving to ``target``."""
    target = tuple(target)
    origin = origin_replicas(assignment)
    full = tuple(dict.fromkeys(target + origin))
    return ReplicaAssignment(full, tuple(r for r in full if r not in origin), tuple(r for r in full if r not in target))


def remove_replica(assignment: ReplicaAssignment, replica: int) -> ReplicaAssignment:
    """Mirrors kafka.controller.ReplicaAssignment#removeReplica (from all three lists)."""
    return ReplicaAssignment(
        tuple(r for r in assignment.replicas if r != replica),
        tuple(r for r in assignment.adding_replicas if r != replica),
        tuple(r for r in assignment.removing_replicas if r != replica),
    )


EMPTY_ASSIGNMENT = ReplicaAssignment(())


class Meter:
    """A counting stand-in for a Yammer meter: ``mark`` adds, ``count`` reads."""

    def __init__(self) -> None:
        self._count = 0

    def mark(self, n: int = 1) -> None:
        self._count += n

    def count(self) -> int:
        return self._count


class ControllerStats:
    """Mirrors kafka.controller.ControllerStats (the meter the elections touch)."""

    def __init__(self) -> None:
        self.unclean_leader_election_rate = Meter()


class ControllerContext:
    """Mirrors kafka.controller.ControllerContext (Kafka 3.7).

    Live brokers with their epochs (a broker that is shutting down stays "live or shutting
    down" but leaves ``live_broker_ids``), topics and ids, the full replica assignment of every
    partition, the leader/ISR cache, the partition and replica states, and topic-deletion
    bookkeeping. ``partition_leadership_info`` is the leader/ISR cache as a dict; write it
    through ``put_partition_leadership_info`` so the imbalance metric stays right.
    """

    def __init__(self) -> None:
        self.stats = ControllerStats()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.shutting_down_broker_ids: set[int] = set()
        self._live_brokers: dict[int, BrokerInfo | None] = {}
        self._live_broker_epochs: dict[int, int] = {}
        self.epoch: int = INITIAL_CONTROLLER_EPOCH
        self.epoch_zk_version: int = INITIAL_CONTROLLER_EPOCH_ZK_VERSION
        self.all_topics: set[str] = set()
        self.topic_ids: dict[str, Uuid] = {}
        self.topic_names: dict[Uuid, str] = {}
        self.partition_assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self.partition_leadership_info: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[PartitionAndReplica, ReplicaState] = {}
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()

    # ---- topics and assignments ----------------------------------------------------------
    def _clear_topics_state(self) -> None:
        """Mirrors ControllerContext#clearTopicsState."""
        self.all_topics.clear()
        self.topic_ids.clear()
        self.topic_names.clear()
        self.partition_assignments.clear()
        self.partition_leadership_info.clear()
        self.partitions_being_reassigned.clear()
        self.replicas_on_offline_dirs.clear()
        self.partition_states.clear()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.replica_states.clear()

    def add_topic_id(self, topic: str, topic_id: Uuid) -> None:
        """Mirrors ControllerContext#addTopicId: the topic must be known and the maps must agree."""
        # 1. Only known topics get ids.
        if topic not in self.all_topics:
            raise IllegalStateException(f"topic {topic} is not contained in all topics.")
        # 2. An id, once given, never changes; a name and an id map one to one.
        existing_id = self.topic_ids.get(topic)
        if existing_id is not None and existing_id != topic_id:
            raise IllegalStateException(f"topic ID map already contained ID for topic {topic} and new ID "
                                        f"{topic_id} did not match existing ID {existing_id}")
        existing_name = self.topic_names.get(topic_id)
        if existing_name is not None and existing_name != topic:
            raise IllegalStateException(f"topic name map already contained ID {topic_id} and new name "
                                        f"{topic} did not match existing name {existing_name}")
        self.topic_ids[topic] = topic_id
        self.topic_names[topic_id] = topic

    def partition_replica_assignment(self, topic_partition: TopicPartition) -> tuple[int, ...]:
        """Mirrors ControllerContext#partitionReplicaAssignment: the replicas, () if unknown."""
        assignment = self.partition_assignments.get(topic_partition.topic, {}).get(topic_partition.partition)
        return assignment.replicas if assignment is not None else ()

    def partition_full_replica_assignment(self, topic_partition: TopicPartition) -> ReplicaAssignment:
        """Mirrors ControllerContext#partitionFullReplicaAssignment (empty if unknown)."""
        return self.partition_assignments.get(topic_partition.topic, {}).get(topic_partition.partition,
                                                                            EMPTY_ASSIGNMENT)

    def update_partition_full_replica_assignment(self, topic_partition: TopicPartition,
                                                 new_assignment: ReplicaAssignment) -> None:
        """Mirrors ControllerContext#updatePartitionFullReplicaAssignment."""
        assignments = self.partition_assignments.setdefault(topic_partition.topic, {})
        previous = assignments.get(topic_partition.partition)
        assignments[topic_partition.partition] = new_assignment
        info = self.partition_leadership_info.get(topic_partition)
        self._update_preferred_replica_imbalance_metric(topic_partition, previous, info, new_assignment, info)

    def partition_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, tuple[int, ...]]:
        """Mirrors ControllerContext#partitionReplicaAssignmentForTopic."""
        return {TopicPartition(topic, p): a.replicas for p, a in self.partition_assignments.get(topic, {}).items()}

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        """Mirrors ControllerContext#partitionFullReplicaAssignmentForTopic."""
        return {TopicPartition(topic, p): a for p, a in self.partition_assignments.get(topic, {}).items()}

    @property
    def all_partitions(self) -> set[TopicPartition]:
        """Mirrors ControllerContext#allPartitions."""
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items() for p in parts}

    def partitions_for_topic(self, topic: str) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsForTopic."""
        return {TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {})}

    def replicas_for_topic(self, topic: str) -> set[PartitionAndReplica]:
        """Mirrors ControllerContext#replicasForTopic."""
        return {PartitionAndReplica(TopicPartition(topic, p), r)
                for p, a in self.partition_assignments.get(topic, {}).items() for r in a.replicas}

    def replicas_for_partition(self, partitions: Iterable[TopicPartition]) -> set[PartitionAndReplica]:
        """Mirrors ControllerContext#replicasForPartition."""
        return {PartitionAndReplica(tp, r) for tp in partitions for r in self.partition_replica_assignment(tp)}

    def set_all_topics(self, topics: Iterable[str]) -> None:
        """Mirrors ControllerContext#setAllTopics."""
        self.all_topics.clear()
        self.all_topics.update(topics)

    def remove_topic(self, topic: str) -> None:
        """Mirrors ControllerContext#removeTopic: forget the topic, its id, assignment and leaders."""
        # 1. The imbalance metric was already cleaned if the topic was queued for deletion.
        if topic not in self.topics_to_be_deleted:
            self._clean_preferred_replica_imbalance_metric(topic)
        # 2. Drop every trace of the topic.
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.all_topics.discard(topic)
        topic_id = self.topic_ids.pop(topic, None)
        if topic_id is not None:
            self.topic_names.pop(topic_id, None)
        for partition in self.partition_assignments.pop(topic, {}):
            self.partition_leadership_info.pop(TopicPartition(topic, partition), None)

    def topic_name(self, topic_id: Uuid) -> str | None:
        """Mirrors ControllerContext#topicName."""
        return self.topic_names.get(topic_id)

    # ---- brokers ----------------------------------------------------------------------------
    def set_live_brokers(self, broker_and_epochs: Mapping[BrokerInfo | int, int]) -> None:
        """Mirrors ControllerContext#setLiveBrokers: replace the live set.

        Keys are BrokerInfo (as KafkaZkClient#getAllBrokerAndEpochsInCluster returns them) or
        bare broker ids; a bare id has no endpoint, so requests name it without host and port.
        """
        self._clear_live_brokers()
        self.add_live_brokers(broker_and_epochs)

    def _clear_live_brokers(self) -> None:
        self._live_brokers.clear()
        self._live_broker_epochs.clear()

    def add_live_brokers(self, broker_and_epochs: Mapping[BrokerInfo | int, int]) -> None:
        """Mirrors ControllerContext#addLiveBrokers."""
        for broker, broker_epoch in broker_and_epochs.items():
            broker_id = broker.broker_id if isinstance(broker, BrokerInfo) else int(broker)
            self._live_brokers[broker_id] = broker if isinstance(broker, BrokerInfo) else None
            self._live_broker_epochs[broker_id] = broker_epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        """Mirrors ControllerContext#removeLiveBrokers."""
        for broker_id in broker_ids:
            self._live_brokers.pop(broker_id, None)
            self._live_broker_epochs.pop(broker_id, None)

    def update_broker_metadata(self, old_metadata: BrokerInfo, new_metadata: BrokerInfo) -> None:
        """Mirrors ControllerContext#updateBrokerMetadata (the epoch is unchanged)."""
        self._live_brokers.pop(old_metadata.broker_id, None)
        self._live_brokers[new_metadata.broker_id] = new_metadata

    @property
    def live_broker_ids(self) -> set[int]:
        """Mirrors ControllerContext#liveBrokerIds: live and not shutting down."""
        return set(self._live_broker_epochs) - self.shutting_down_broker_ids

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        """Mirrors ControllerContext#liveOrShuttingDownBrokerIds."""
        return set(self._live_broker_epochs)

    @property
    def live_or_shutting_down_brokers(self) -> list[BrokerInfo]:
        """Mirrors ControllerContext#liveOrShuttingDownBrokers (those registered with an endpoint), by id."""
        return [info for _, info in sorted(self._live_brokers.items()) if info is not None]

    @property
    def live_broker_id_and_epochs(self) -> dict[int, int]:
        """Mirrors ControllerContext#liveBrokerIdAndEpochs."""
        return dict(self._live_broker_epochs)

    def live_or_shutting_down_broker(self, broker_id: int) -> BrokerInfo | None:
        """Mirrors ControllerContext#liveOrShuttingDownBroker."""
        return self._live_brokers.get(broker_id)

    def is_replica_online(self, broker_id: int, topic_partition: TopicPartition,
                          include_shutting_down_brokers: bool = False) -> bool:
        """Mirrors ControllerContext#isReplicaOnline: its broker is up and its log dir is not offline."""
        if include_shutting_down_brokers:
            broker_online = broker_id in self._live_broker_epochs
        else:
            broker_online = broker_id in self._live_broker_epochs and broker_id not in self.shutting_down_broker_ids
        return broker_online and topic_partition not in self.replicas_on_offline_dirs.get(broker_id, set())

    def partitions_on_broker(self, broker_id: int) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsOnBroker."""
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items()
                for p, a in parts.items() if broker_id in a.replicas}

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> set[PartitionAndReplica]:
        """Mirrors ControllerContext#replicasOnBrokers."""
        ids = set(broker_ids)
        return {PartitionAndReplica(TopicPartition(t, p), r) for t, parts in self.partition_assignments.items()
                for p, a in parts.items() for r in a.replicas if r in ids}

    def online_and_offline_replicas(self) -> tuple[set[PartitionAndReplica], set[PartitionAndReplica]]:
        """Mirrors ControllerContext#onlineAndOfflineReplicas: every assigned replica, split by is_replica_online."""
        online: set[PartitionAndReplica] = set()
        offline: set[PartitionAndReplica] = set()
        for topic, parts in self.partition_assignments.items():
            for p, assignment in parts.items():
                tp = TopicPartition(topic, p)
                for r in assignment.replicas:
                    (online if self.is_replica_online(r, tp) else offline).add(PartitionAndReplica(tp, r))
        return online, offline

    def online_and_offline_partitions(self) -> tuple[set[TopicPartition], set[TopicPartition]]:
        """The partitions in OnlinePartition and in OfflinePartition state (not a Kafka method)."""
        return self.partitions_in_state(OnlinePartition), self.partitions_in_state(OfflinePartition)

    def reset_context(self) -> None:
        """Mirrors ControllerContext#resetContext: what a resigning controller forgets."""
        self.topics_to_be_deleted.clear()
        self.topics_with_deletion_started.clear()
        self.topics_ineligible_for_deletion.clear()
        self.shutting_down_broker_ids.clear()
        self.epoch = 0
        self.epoch_zk_version = 0
        self._clear_topics_state()
        self._clear_live_brokers()

    # ---- topic deletion ---------------------------------------------------------------------
    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        """Mirrors ControllerContext#queueTopicDeletion.

        1. Only topics not queued already count as new: a second deletion requested while the first
        is in progress queues both again, and the imbalance count must lose each topic's
        partitions once. 2. Queue them; 3. drop them from the imbalance count.
        """
        # 1. The newly queued topics.
        new_topics = set(topics) - self.topics_to_be_deleted
        # 2. Queue. 3. Their partitions stop counting.
        self.topics_to_be_deleted.update(new_topics)
        for topic in sorted(new_topics):
            self._clean_preferred_replica_imbalance_metric(topic)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        """Mirrors ControllerContext#beginTopicDeletion."""
        self.topics_with_deletion_started.update(topics)

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        """Mirrors ControllerContext#isTopicDeletionInProgress."""
        return topic in self.topics_with_deletion_started

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """Mirrors ControllerContext#isTopicQueuedUpForDeletion."""
        return topic in self.topics_to_be_deleted

    def is_topic_eligible_for_deletion(self, topic: str) -> bool:
        """Mirrors ControllerContext#isTopicEligibleForDeletion."""
        return topic in self.topics_to_be_deleted and topic not in self.topics_ineligible_for_deletion

    @property
    def topics_queued_for_deletion(self) -> set[str]:
        """Mirrors ControllerContext#topicsQueuedForDeletion."""
        return self.topics_to_be_deleted

    # ---- replica states ---------------------------------------------------------------------
    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionAndReplica]:
        """Mirrors ControllerContext#replicasInState (replicas of ``topic`` in ``state``)."""
        return {r for r in self.replicas_for_topic(topic) if self.replica_states.get(r) == state}

    def are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        """Mirrors ControllerContext#areAllReplicasInState."""
        return all(self.replica_states.get(r) == state for r in self.replicas_for_topic(topic))

    def is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        """Mirrors ControllerContext#isAnyReplicaInState."""
        return any(self.replica_states.get(r) == state for r in self.replicas_for_topic(topic))

    def check_valid_replica_state_change(
        self, replicas: Iterable[PartitionAndReplica], target_state: ReplicaState,
    ) -> tuple[list[PartitionAndReplica], list[PartitionAndReplica]]:
        """Mirrors ControllerContext#checkValidReplicaStateChange: (valid, invalid), order kept."""
        valid: list[PartitionAndReplica] = []
        invalid: list[PartitionAndReplica] = []
        for replica in replicas:
            ok = self.replica_states[replica] in target_state.valid_previous_states
            (valid if ok else invalid).append(replica)
        return valid, invalid

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        """Mirrors ControllerContext#putReplicaState."""
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        """Mirrors ControllerContext#removeReplicaState."""
        self.replica_states.pop(replica, None)

    def put_replica_state_if_not_exists(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        """Mirrors ControllerContext#putReplicaStateIfNotExists."""
        self.replica_states.setdefault(replica, state)

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        """Mirrors ControllerContext#replicaState (KeyError for an unknown replica, as Kafka's map throws)."""
        return self.replica_states[replica]

    # ---- partition states -------------------------------------------------------------------
    def check_valid_partition_state_change(
        self, partitions: Iterable[TopicPartition], target_state: PartitionState,
    ) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """Mirrors ControllerContext#checkValidPartitionStateChange: (valid, invalid), order kept."""
        valid: list[TopicPartition] = []
        invalid: list[TopicPartition] = []
        for partition in partitions:
            ok = self.partition_states[partition] in target_state.valid_previous_states
            (valid if ok else invalid).append(partition)
        return valid, invalid

    def put_partition_state(self, partition: TopicPartition, target_state: PartitionState) -> None:
        """Mirrors ControllerContext#putPartitionState (and keeps offline_partition_count)."""
        current_state = self.partition_states.get(partition, NonExistentPartition)
        self.partition_states[partition] = target_state
        self._update_partition_state_metrics(partition, current_state, target_state)

    def _update_partition_state_metrics(self, partition: TopicPartition, current_state: PartitionState,
                                        target_state: PartitionState) -> None:
        """Mirrors ControllerContext#updatePartitionStateMetrics: count offline partitions.

        Partitions of a topic whose deletion has started are not counted either way.
        """
        if not self.is_topic_deletion_in_progress(partition.topic):
            if current_state != OfflinePartition and target_state == OfflinePartition:
                self.offline_partition_count += 1
            elif current_state == OfflinePartition and target_state != OfflinePartition:
                self.offline_partition_count -= 1

    def put_partition_state_if_not_exists(self, partition: TopicPartition, state: PartitionState) -> None:
        """Mirrors ControllerContext#putPartitionStateIfNotExists."""
        if partition not in self.partition_states:
            self.partition_states[partition] = state
            self._update_partition_state_metrics(partition, NonExistentPartition, state)

    def partition_state(self, partition: TopicPartition) -> PartitionState:
        """Mirrors ControllerContext#partitionState (KeyError for an unknown partition)."""
        return self.partition_states[partition]

    def partitions_in_state(self, state: PartitionState, topic: str | None = None) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsInState(state) and partitionsInState(topic, state)."""
        return self.partitions_in_states({state}, topic)

    def partitions_in_states(self, states: Iterable[PartitionState], topic: str | None = None) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsInStates(states) and partitionsInStates(topic, states)."""
        states = set(states)
        if topic is None:
            return {tp for tp, s in self.partition_states.items() if s in states}
        return {tp for tp in self.partitions_for_topic(topic) if self.partition_states.get(tp) in states}

    # ---- leadership ------------------------------------------------------------------------
    def put_partition_leadership_info(self, partition: TopicPartition,
                                      leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch) -> None:
        """Mirrors ControllerContext#putPartitionLeadershipInfo."""
        previous = self.partition_leadership_info.get(partition)
        self.partition_leadership_info[partition] = leader_isr_and_controller_epoch
        assignment = self.partition_full_replica_assignment(partition)
        self._update_preferred_replica_imbalance_metric(partition, assignment, previous, assignment,
                                                        leader_isr_and_controller_epoch)

    @property
    def partitions_leadership_info(self) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Mirrors ControllerContext#partitionsLeadershipInfo."""
        return self.partition_leadership_info

    def partitions_with_leaders(self) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsWithLeaders (topics queued for deletion left out)."""
        return {tp for tp in self.partition_leadership_info if not self.is_topic_queued_up_for_deletion(tp.topic)}

    def partitions_with_offline_leader(self) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionsWithOfflineLeader."""
        return {tp for tp, info in self.partition_leadership_info.items()
                if not self.is_replica_online(info.leader_and_isr.leader, tp)
                and not self.is_topic_queued_up_for_deletion(tp.topic)}

    def partition_leaders_on_broker(self, broker_id: int) -> set[TopicPartition]:
        """Mirrors ControllerContext#partitionLeadersOnBroker (only partitions with other replicas)."""
        return {tp for tp, info in self.partition_leadership_info.items()
                if not self.is_topic_queued_up_for_deletion(tp.topic)
                and info.leader_and_isr.leader == broker_id
                and len(self.partition_replica_assignment(tp)) > 1}

    def clear_partition_leadership_info(self) -> None:
        """Mirrors ControllerContext#clearPartitionLeadershipInfo."""
        self.partition_leadership_info.clear()

    @property
    def partition_with_leaders_count(self) -> int:
        """Mirrors ControllerContext#partitionWithLeadersCount."""
        return len(self.partition_leadership_info)

    def leader_epoch(self, topic_partition: TopicPartition) -> int:
        """Mirrors ControllerChannelContext#leaderEpoch: the epoch a StopReplica carries.

        EpochDuringDelete (-2) when the topic is queued for deletion (it overrides any epoch),
        else the cached leader epoch, else NoEpoch (-1).
        """
        if self.is_topic_queued_up_for_deletion(topic_partition.topic):
            return LeaderAndIsr.EPOCH_DURING_DELETE
        info = self.partition_leadership_info.get(topic_partition)
        return info.leader_and_isr.leader_epoch if info is not None else LeaderAndIsr.NO_EPOCH

    # ---- preferred replica imbalance metric ------------------------------------------------
    def _update_preferred_replica_imbalance_metric(
        self, partition: TopicPartition,
        old_assignment: ReplicaAssignment | None, old_info: LeaderIsrAndControllerEpoch | None,
        new_assignment: ReplicaAssignment | None, new_info: LeaderIsrAndControllerEpoch | None,
    ) -> None:
        """Mirrors ControllerContext#updatePreferredReplicaImbalanceMetric."""
        if self.is_topic_queued_up_for_deletion(partition.topic):
            return
        if old_assignment is not None and old_info is not None and not _has_preferred_leader(old_assignment, old_info):
            self.preferred_replica_imbalance_count -= 1
        if new_assignment is not None and new_info is not None and not _has_preferred_leader(new_assignment, new_info):
            self.preferred_replica_imbalance_count += 1

    def _clean_preferred_replica_imbalance_metric(self, topic: str) -> None:
        """Mirrors ControllerContext#cleanPreferredReplicaImbalanceMetric."""
        for partition, assignment in self.partition_assignments.get(topic, {}).items():
            info = self.partition_leadership_info.get(TopicPartition(topic, partition))
            if info is not None and not _has_preferred_leader(assignment, info):
                self.preferred_replica_imbalance_count -= 1


def _has_preferred_leader(assignment: ReplicaAssignment, info: LeaderIsrAndControllerEpoch) -> bool:
    """Mirrors ControllerContext#hasPreferredLeader (a reassigning preferred replica counts once in the ISR)."""
    if not assignment.replicas:
        return True
    preferred = assignment.replicas[0]
    if is_being_reassigned(assignment) and preferred in assignment.adding_replicas:
        return preferred not in info.leader_and_isr.isr
    return info.leader_and_isr.leader == preferred
