"""Topic administration written straight to ZooKeeper, as ZooKeeper-era brokers did.

Mirrors kafka.zk.AdminZkClient (createTopic, createTopicWithAssignment, deleteTopic,
validateTopicCreate, the partition additions of createNewPartitionsAssignment /
createPartitionsWithAssignment) and kafka.admin.AdminUtils#assignReplicasToBrokers (rack-unaware branch).
Randomness comes from a ``random.Random`` the caller seeds, so a seeded cluster places
replicas the same way every run.
"""

from __future__ import annotations

import enum
import random
import re
from typing import Mapping, Sequence

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import (
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.zk.kafka_zk_client import KafkaZkClient
from kafka_ref.zk.zk_data import ConfigType, ReplicaAssignment

_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


class AdminOperationException(Exception):
    """Mirrors org.apache.kafka.server.common.AdminOperationException (not an ApiException)."""


class RackAwareMode(enum.Enum):
    """Mirrors kafka.admin.RackAwareMode: how getBrokerMetadatas treats racks."""

    # Ignore every rack.
    DISABLED = "Disabled"
    # Use racks when every broker has one, else ignore them.
    SAFE = "Safe"
    # Use racks; a mix of brokers with and without one is an error.
    ENFORCED = "Enforced"


def assign_replicas_to_brokers(
    broker_list: Sequence[int],
    n_partitions: int,
    replication_factor: int,
    rng: random.Random,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    racks: Mapping[int, str | None] | None = None,
) -> dict[int, list[int]]:
    """Mirrors org.apache.kafka.admin.AdminUtils#assignReplicasToBrokers (Kafka 3.7, unchanged in 3.8).

    Rack-unaware when no broker has a rack (``racks``: broker id to rack), rack-aware when every
    broker has one; a mix is an AdminOperationException. Rack-unaware: 1. the first replica of
    each partition walks the sorted brokers from a random start; 2. followers are shifted from
    the first by an amount that grows every time the partition id wraps the broker count, so
    leaders and followers spread evenly. The brokers are taken in the order given (callers pass
    them sorted by id, as AdminZkClient#getBrokerMetadatas does).
    """
    if n_partitions <= 0:
        raise InvalidPartitionsException("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
    if replication_factor > len(broker_list):
        raise InvalidReplicationFactorException(
            f"Replication factor: {replication_factor} larger than available brokers: {len(broker_list)}."
        )
    rack_of = {b: (racks or {}).get(b) for b in broker_list}
    if any(rack is not None for rack in rack_of.values()):
        if any(rack is None for rack in rack_of.values()):
            raise AdminOperationException("Not all brokers have rack information for replica rack aware assignment.")
        return _assign_replicas_to_brokers_rack_aware(n_partitions, replication_factor, rack_of,  # type: ignore[arg-type]
                                                      rng, fixed_start_index, start_partition_id)
    brokers = list(broker_list)
    n = len(brokers)
    # 1. Random start and shift unless fixed.
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    current = max(0, start_partition_id)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        # 2. Bump the shift each time the partition id wraps the broker count.
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[_replica_index(first, next_replica_shift, j, n)])
        result[current] = replicas
        current += 1
    return result


def _assign_replicas_to_brokers_rack_aware(n_partitions: int, replication_factor: int, rack_of: Mapping[int, str],
                                           rng: random.Random, fixed_start_index: int, start_partition_id: int
                                           ) -> dict[int, list[int]]:
    """Mirrors AdminUtils#assignReplicasToBrokersRackAware.

    1. The brokers in rack-alternated order (getRackAlternatedBrokerList); 2. the leaders walk it
    as in the rack-unaware case; 3. each further replica is the next broker (shifted as there, by
    the shift times the rack count) that is in a rack without a replica yet, unless every rack has
    one, and is not already a replica, unless every broker is.
    """
    num_racks = len(set(rack_of.values()))
    arranged = get_rack_alternated_broker_list(rack_of)
    n = len(arranged)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    current = max(0, start_partition_id)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift += 1
        first = (current + start_index) % n
        leader = arranged[first]
        replicas = [leader]
        racks_with_replicas = {rack_of[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _j in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, next_replica_shift * num_racks, k, n)]
                rack = rack_of[broker]
                k += 1
                if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                        and (broker not in brokers_with_replicas or len(brokers_with_replicas) == n)):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        result[current] = replicas
        current += 1
    return result


def get_rack_alternated_broker_list(rack_of: Mapping[int, str]) -> list[int]:
    """Mirrors AdminUtils#getRackAlternatedBrokerList: one broker from each rack in turn (racks sorted,
    each rack's brokers by id), e.g. racks a: 0, 1 and b: 2 give 0, 2, 1."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in rack_of.items():
        by_rack.setdefault(rack, []).append(broker)
    iterators = {rack: iter(sorted(brokers)) for rack, brokers in by_rack.items()}
    racks = sorted(iterators)
    result: list[int] = []
    index = 0
    while len(result) < len(rack_of):
        broker = next(iterators[racks[index]], None)
        if broker is not None:
            result.append(broker)
        index = (index + 1) % len(racks)
    return result


def has_collision_chars(topic: str) -> bool:
    """Mirrors org.apache.kafka.common.internals.Topic#hasCollisionChars: a '.' or '_' in the name."""
    return "_" in topic or "." in topic


def has_collision(topic_a: str, topic_b: str) -> bool:
    """Mirrors org.apache.kafka.common.internals.Topic#hasCollision: equal once every '.' is read as '_'
    (both become the same metric name)."""
    return topic_a.replace(".", "_") == topic_b.replace(".", "_")


def unify_collision_chars(topic: str) -> str:
    """Mirrors org.apache.kafka.common.internals.Topic#unifyCollisionChars: every '.' read as '_'."""
    return topic.replace(".", "_")


def detect_invalid_topic(name: str) -> str | None:
    """Mirrors org.apache.kafka.common.internals.Topic#detectInvalidTopic (Kafka 3.4+): why the name is
    not allowed, or None."""
    if not name:
        return "the empty string is not allowed"
    if name == ".":
        return "'.' is not allowed"
    if name == "..":
        return "'..' is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    if not _LEGAL_TOPIC.match(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(topic: str) -> None:
    """Mirrors org.apache.kafka.common.internals.Topic#validate (Kafka 3.4+ wording)."""
    reason = detect_invalid_topic(topic)
    if reason is not None:
        raise InvalidTopicException(f"Topic name is invalid: {reason}")


class AdminZkClient:
    """Mirrors kafka.zk.AdminZkClient.

    ``kafka_config`` is Kafka's optional KafkaConfig: a broker's client validates topic configs on
    the broker's own defaults (KafkaConfig#extractLogConfigMap), a bare client on LogConfig's.
    """

    def __init__(self, zk_client: KafkaZkClient, rng: random.Random, kafka_config: KafkaConfig | None = None) -> None:
        self.zk_client = zk_client
        self.rng = rng
        self.kafka_config = kafka_config

    def _validate_log_config(self, config: Mapping[str, str]) -> None:
        # LogConfig#validate with the broker's defaults and its tiered-storage switch, when there is a broker.
        if self.kafka_config is None:
            LogConfig.validate(config)
        else:
            LogConfig.validate(config, self.kafka_config.extract_log_config_map(),
                               self.kafka_config.is_remote_storage_system_enabled)

    def get_broker_metadatas(self, rack_aware_mode: "RackAwareMode | None" = None,
                             broker_list: Sequence[int] | None = None) -> dict[int, str | None]:
        """Mirrors kafka.zk.AdminZkClient#getBrokerMetadatas: each registered broker's rack, by broker id.

        1. The registered brokers, or those of them in ``broker_list``; 2. ENFORCED (the default)
        refuses a mix of brokers with and without racks (AdminOperationException); 3. DISABLED drops
        every rack, SAFE drops them all when some broker has none; 4. ordered by broker id.
        """
        mode = RackAwareMode.ENFORCED if rack_aware_mode is None else rack_aware_mode
        # 1. The brokers asked about.
        brokers = self.zk_client.get_all_brokers_in_cluster()
        if broker_list is not None:
            brokers = [b for b in brokers if b.broker_id in broker_list]
        with_rack = [b for b in brokers if b.rack is not None]
        # 2. Enforced: all or none.
        if mode is RackAwareMode.ENFORCED and with_rack and len(with_rack) < len(brokers):
            raise AdminOperationException("Not all brokers have rack information. Add --disable-rack-aware in command "
                                          "line to make replica assignment without rack information.")
        # 3. Which racks to keep.
        keep = not (mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and len(with_rack) < len(brokers)))
        # 4. By id.
        return {b.broker_id: (b.rack if keep else None) for b in sorted(brokers, key=lambda b: b.broker_id)}

    def create_topic(
        self, topic: str, partitions: int, replication_factor: int, topic_config: Mapping[str, str] | None = None,
        rack_aware_mode: "RackAwareMode | None" = None, uses_topic_id: bool = False,
    ) -> dict[int, list[int]]:
        """Mirrors kafka.zk.AdminZkClient#createTopic: assign replicas over the brokers (getBrokerMetadatas
        with ``rack_aware_mode``, ENFORCED by default), then write the topic."""
        brokers = self.get_broker_metadatas(rack_aware_mode)
        assignment = assign_replicas_to_brokers(list(brokers), partitions, replication_factor, self.rng, racks=brokers)
        self.create_topic_with_assignment(topic, topic_config or {}, assignment, uses_topic_id=uses_topic_id)
        return assignment

    def validate_topic_create(self, topic: str, assignment: Mapping[int, Sequence[int]], config: Mapping[str, str]) -> None:
        """Mirrors kafka.zk.AdminZkClient#validateTopicCreate.

        1. A legal name, not marked for deletion, not existing, and not colliding with an existing
        topic once '.' and '_' are taken as the same (Topic#hasCollision); 2. an even, duplicate-free,
        0-based assignment; 3. valid configs.
        """
        # 1. The name.
        validate_topic_name(topic)
        if self.zk_client.is_topic_marked_for_deletion(topic):
            raise TopicExistsException(f"Topic '{topic}' is marked for deletion.")
        if self.zk_client.topic_exists(topic):
            raise TopicExistsException(f"Topic '{topic}' already exists.")
        if has_collision_chars(topic):
            all_topics = self.zk_client.get_all_topics_in_cluster()
            # The topic may have been created since topicExists answered (a concurrent creation).
            if topic in all_topics:
                raise TopicExistsException(f"Topic '{topic}' already exists.")
            colliding = sorted(t for t in all_topics if has_collision(topic, t))
            if colliding:
                raise InvalidTopicException(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")
        # 2. The assignment.
        sizes = {len(r) for r in assignment.values()}
        if len(sizes) > 1:
            raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
        for partition, replicas in assignment.items():
            if len(set(replicas)) != len(replicas):
                raise InvalidReplicaAssignmentException(
                    f"Duplicate replica assignment found: {partition} -> {list(replicas)}")
        expected = list(range(len(assignment)))
        if sorted(assignment) != expected:
            raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
        # 3. The configs.
        self._validate_log_config(config)

    def create_topic_with_assignment(
        self, topic: str, config: Mapping[str, str], partition_replica_assignment: Mapping[int, Sequence[int]],
        topic_id: Uuid | None = None, uses_topic_id: bool = False,
    ) -> Uuid | None:
        """Mirrors kafka.zk.AdminZkClient#createTopicWithAssignment: config znode first, then the topic.

        ``uses_topic_id`` (Kafka's parameter, false by default; ZkAdminManager passes the
        broker's ``usesTopicId``) writes a fresh topic id into the znode (``topic_id`` when
        given); without it the topic znode has no id and a controller on IBP 2.8+ adds one
        (KafkaController#processTopicIds). Returns the id written, or None.
        """
        self.validate_topic_create(topic, partition_replica_assignment, config)
        # 1. Topic configs go first so the controller sees them when the topic appears.
        self.zk_client.set_or_create_entity_configs(ConfigType.TOPIC, topic, {k: str(v) for k, v in config.items()})
        # 2. Then the assignment (with a fresh topic id when asked), which fires the controller's TopicChange.
        if uses_topic_id:
            topic_id = topic_id or Uuid.random_uuid(self.rng)
        self.zk_client.create_topic_assignment(
            topic, topic_id, {TopicPartition(topic, p): list(r) for p, r in partition_replica_assignment.items()}
        )
        return topic_id

    def delete_topic(self, topic: str) -> None:
        """Mirrors kafka.zk.AdminZkClient#deleteTopic: mark it under /admin/delete_topics."""
        if not self.zk_client.topic_exists(topic):
            raise UnknownTopicOrPartitionException(f"Topic `{topic}` to delete does not exist")
        self.zk_client.create_delete_topic_path(topic)

    # ---- adding partitions ---------------------------------------------------------------

    def create_new_partitions_assignment(
        self, topic: str, existing_assignment: Mapping[int, ReplicaAssignment], all_brokers: Sequence[int],
        num_partitions: int, replica_assignment: Mapping[int, Sequence[int]] | None = None,
    ) -> dict[int, ReplicaAssignment]:
        """Mirrors kafka.zk.AdminZkClient#createNewPartitionsAssignment: the replicas of the partitions to add.

        1. Partition 0 must exist (its replica count is the topic's replication factor); 2. the new
        count must be an increase (INVALID_PARTITIONS); 3. a given assignment is validated
        (validateReplicaAssignment); 4. otherwise the new partitions are placed by
        assignReplicasToBrokers, continuing from partition 0's first replica with partition ids
        after the existing ones.
        """
        # 1. Partition 0's replicas.
        if 0 not in existing_assignment:
            raise InvalidReplicaAssignmentException(
                f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing.")
        partition0 = existing_assignment[0].replicas
        # 2. Only an increase.
        partitions_to_add = num_partitions - len(existing_assignment)
        if partitions_to_add <= 0:
            raise InvalidPartitionsException(
                f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
                f"{len(existing_assignment)} partitions, {num_partitions} would not be an increase.")
        # 3. A proposed assignment must be valid.
        brokers = sorted(all_brokers)
        if replica_assignment is not None:
            self._validate_replica_assignment(replica_assignment, len(partition0), set(brokers))
            proposed = {p: list(r) for p, r in replica_assignment.items()}
        else:
            # 4. Placed after the existing partitions, starting at partition 0's first replica.
            start_index = next((i for i, b in enumerate(brokers) if b >= partition0[0]), 0)
            proposed = assign_replicas_to_brokers(brokers, partitions_to_add, len(partition0), self.rng,
                                                  fixed_start_index=start_index,
                                                  start_partition_id=len(existing_assignment),
                                                  racks=self.get_broker_metadatas())
        return {p: ReplicaAssignment(tuple(r)) for p, r in proposed.items()}

    def create_partitions_with_assignment(
        self, topic: str, existing_assignment: Mapping[int, ReplicaAssignment],
        new_partition_assignment: Mapping[int, ReplicaAssignment],
    ) -> dict[int, ReplicaAssignment]:
        """Mirrors kafka.zk.AdminZkClient#createPartitionsWithAssignment: the combined assignment written back.

        The topic znode keeps its topic id (writeTopicPartitionAssignment with isUpdate); the
        controller's PartitionModificationsHandler sees the data change.
        """
        combined = {**existing_assignment, **new_partition_assignment}
        topic_id = self.zk_client.get_topic_id(topic)
        self.zk_client.set_topic_assignment(
            topic, topic_id, {TopicPartition(topic, p): a for p, a in sorted(combined.items())})
        return combined

    @staticmethod
    def _validate_replica_assignment(replica_assignment: Mapping[int, Sequence[int]], expected_replication_factor: int,
                                     available_broker_ids: set[int]) -> None:
        """Mirrors kafka.zk.AdminZkClient#validateReplicaAssignment."""
        for partition_id, replicas in replica_assignment.items():
            if not replicas:
                raise InvalidReplicaAssignmentException(f"Cannot have replication factor of 0 for partition id {partition_id}.")
            if len(set(replicas)) != len(replicas):
                raise InvalidReplicaAssignmentException(
                    f"Duplicate brokers not allowed in replica assignment: {', '.join(map(str, replicas))} "
                    f"for partition id {partition_id}.")
            if not set(replicas) <= available_broker_ids:
                raise BrokerNotAvailableException(
                    f"Some brokers specified for partition id {partition_id} are not available. Specified brokers: "
                    f"{', '.join(map(str, replicas))}, available brokers: {', '.join(map(str, sorted(available_broker_ids)))}.")
        bad = sorted((p, len(r)) for p, r in replica_assignment.items() if len(r) != expected_replication_factor)
        if bad:
            raise InvalidReplicaAssignmentException(
                f"Inconsistent replication factor between partitions, partition 0 has {expected_replication_factor} "
                f"while partitions [{', '.join(str(p) for p, _ in bad)}] have replication factors "
                f"[{', '.join(str(n) for _, n in bad)}], respectively.")

    # ---- topic configs -----------------------------------------------------------------

    def fetch_entity_config(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        """Mirrors kafka.zk.AdminZkClient#fetchEntityConfig: the entity's overrides ({} when none)."""
        return self.zk_client.get_entity_configs(root_entity_type, sanitized_entity_name)

    def validate_topic_config(self, topic: str, configs: Mapping[str, str]) -> None:
        """Mirrors kafka.zk.AdminZkClient#validateTopicConfig: an existing topic, valid keys and values."""
        # 1. A legal name of an existing topic.
        validate_topic_name(topic)
        if not self.zk_client.topic_exists(topic):
            raise UnknownTopicOrPartitionException(f"Topic '{topic}' does not exist.")
        # 2. Every key a topic key (InvalidConfigurationException), every value valid on the
        #    broker's defaults (ConfigException).
        self._validate_log_config(configs)

    def change_topic_config(self, topic: str, configs: Mapping[str, str]) -> None:
        """Mirrors kafka.zk.AdminZkClient#changeTopicConfig: validate, then the overrides and a change notification."""
        self.validate_topic_config(topic, configs)
        self.change_entity_config(ConfigType.TOPIC, topic, configs)

    def change_entity_config(self, root_entity_type: str, sanitized_entity_name: str, configs: Mapping[str, str]) -> None:
        """Mirrors kafka.zk.AdminZkClient#changeEntityConfig.

        1. The whole override set replaces /config/<type>/<name>; 2. a sequential
        /config/changes/config_change_N names the entity, so every broker's ZkConfigManager
        reloads it.
        """
        self.zk_client.set_or_create_entity_configs(root_entity_type, sanitized_entity_name, configs)
        self.zk_client.create_config_change_notification(f"{root_entity_type}/{sanitized_entity_name}")
