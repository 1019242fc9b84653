"""Kafka's znodes: paths and the bytes stored in them, plus the values they carry.

Mirrors kafka.zk.ZkData (Kafka 3.x, before the KRaft-migration additions of 3.4). One class per
znode, each with ``path`` and, where the znode holds data, ``encode``/``decode``.

Byte-exact JSON. Kafka writes these znodes with Jackson from Scala maps, so the key order on
the wire is the iteration order of the Scala map that was built:
* small immutable maps (up to 4 entries) keep insertion order;
* larger immutable maps are hash tries, whose order depends only on the keys' hashes (the
  partition state is the well-known ``{"controller_epoch":..,"leader":..,"version":1,
  "leader_epoch":..,"isr":[..]}``);
* ``mutable.Map`` is a hash table ordered by bucket (Java ``String.hashCode`` spread by
  ``h ^ (h >>> 16)``) and then by hash, in a table that grows with the entry count.
  ``scala_mutable_hash_map_order`` computes that order, so the topic and broker znodes (and the
  partition map inside a topic znode, for any partition count) come out as Kafka writes them.
Decoders accept any key order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, Iterable, Mapping, Sequence

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.zk.zookeeper import Stat


def _json_bytes(value: Any) -> bytes:
    """Compact JSON, UTF-8, no escaping of non-ASCII: what Kafka's Json.encodeAsBytes writes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _parse(data: bytes | None) -> Any:
    """Mirrors kafka.utils.Json#parseBytes: None for empty data."""
    if not data:
        return None
    return json.loads(data.decode("utf-8"))


def java_string_hash_code(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    raw = text.encode("utf-16-be")
    for i in range(0, len(raw), 2):
        h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def scala_mutable_hash_map_order(keys: Iterable[str], initial_capacity: int = 16) -> list[str]:
    """Iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` after inserting ``keys``.

    ``initial_capacity`` is the requested capacity (16 for ``mutable.Map()``; a
    ``mutable.Map(k1 -> v1, ...)`` of n entries asks for ``int((n + 1) / 0.75)``). The table
    size is the next power of two per ``tableSizeFor``; it doubles whenever an insert would
    reach 75 % of it. Entries are iterated by bucket index, then by hash within a bucket.
    """
    keys = list(dict.fromkeys(keys))
    size = min((1 << (max(initial_capacity - 1, 4).bit_length() - 1)) * 2, 1 << 30)
    count = 0
    for _ in keys:
        if count + 1 >= int(size * 0.75):
            size *= 2
        count += 1

    def spread(key: str) -> int:
        h = java_string_hash_code(key)
        h ^= (h & 0xFFFFFFFF) >> 16
        return h

    return sorted(keys, key=lambda k: (spread(k) & (size - 1), spread(k)))


def _ordered(mapping: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    return {key: mapping[key] for key in order}


class ZkVersion:
    """Mirrors kafka.zk.ZkVersion."""

    MATCH_ANY_VERSION = -1  # a conditional write with this version matches any version
    UNKNOWN_VERSION = -2  # what Kafka reports for a node that does not exist


class LeaderRecoveryState(IntEnum):
    """Mirrors org.apache.kafka.metadata.LeaderRecoveryState (KIP-704)."""

    RECOVERED = 0
    RECOVERING = 1

    @classmethod
    def of(cls, value: int) -> "LeaderRecoveryState":
        """Mirrors LeaderRecoveryState#of: a value other than 0 or 1 is refused.

        Kafka throws IllegalArgumentException; here it is a ValueError with the same meaning
        (the caller's input is wrong, not the state).
        """
        if value == cls.RECOVERED:
            return cls.RECOVERED
        if value == cls.RECOVERING:
            return cls.RECOVERING
        raise ValueError(f"Value {value} is not a valid leader recovery state")


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """Mirrors kafka.api.LeaderAndIsr (Kafka 3.1-3.6; org.apache.kafka.metadata.LeaderAndIsr later).

    A partition's leader, leader epoch, ISR and recovery state. ``partition_epoch`` is the
    partition state znode's zkVersion in ZooKeeper mode: it is what a conditional update of
    the znode must name, and it moves by one with every write of the znode.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED
    partition_epoch: int = 0

    NO_LEADER = -1
    NO_EPOCH = -1
    LEADER_DURING_DELETE = -2
    EPOCH_DURING_DELETE = -2
    INITIAL_LEADER_EPOCH = 0
    INITIAL_PARTITION_EPOCH = 0
    # Kafka's own spellings of the same constants (kafka.api.LeaderAndIsr$).
    NoLeader = NO_LEADER
    NoEpoch = NO_EPOCH
    LeaderDuringDelete = LEADER_DURING_DELETE
    EpochDuringDelete = EPOCH_DURING_DELETE
    InitialLeaderEpoch = INITIAL_LEADER_EPOCH
    InitialPartitionEpoch = INITIAL_PARTITION_EPOCH

    def __post_init__(self) -> None:
        object.__setattr__(self, "isr", tuple(self.isr))

    @classmethod
    def initial(cls, leader: int, isr: Iterable[int]) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr$#apply(leader, isr): epochs at their initial values."""
        return cls(leader, cls.INITIAL_LEADER_EPOCH, tuple(isr), LeaderRecoveryState.RECOVERED,
                   cls.INITIAL_PARTITION_EPOCH)

    @classmethod
    def during_delete(cls, isr: Iterable[int]) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr$#duringDelete: the marker leader of a deleted topic."""
        return cls.initial(cls.LEADER_DURING_DELETE, isr)

    def with_partition_epoch(self, partition_epoch: int) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr#withPartitionEpoch."""
        return replace(self, partition_epoch=partition_epoch)

    def new_leader(self, leader: int) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr#newLeader: another leader, same ISR, next epoch."""
        return self.new_leader_and_isr(leader, self.isr)

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr#newLeaderAndIsr: leader epoch + 1, same partition epoch."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), self.leader_recovery_state,
                            self.partition_epoch)

    def new_recovering_leader_and_isr(self, leader: int, isr: Iterable[int]) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr#newRecoveringLeaderAndIsr (unclean election, KIP-704)."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), LeaderRecoveryState.RECOVERING,
                            self.partition_epoch)

    def new_recovery_state(self, leader_recovery_state: int) -> "LeaderAndIsr":
        """A copy with another recovery state and no epoch change.

        Kafka has no method of this name; it is the change an AlterPartition request makes when
        the leader reports it has RECOVERED (ControllerContext keeps the leader epoch then).
        """
        return replace(self, leader_recovery_state=LeaderRecoveryState(leader_recovery_state))

    def new_epoch(self) -> "LeaderAndIsr":
        """Mirrors kafka.api.LeaderAndIsr#newEpoch: same leader and ISR, leader epoch + 1."""
        return self.new_leader_and_isr(self.leader, self.isr)

    def leader_opt(self) -> int | None:
        """Mirrors kafka.api.LeaderAndIsr#leaderOpt."""
        return None if self.leader == self.NO_LEADER else self.leader

    def equals_allow_stale_partition_epoch(self, other: "LeaderAndIsr | None") -> bool:
        """Mirrors kafka.api.LeaderAndIsr#equalsAllowStalePartitionEpoch."""
        if other is None:
            return False
        return (self.leader == other.leader and self.leader_epoch == other.leader_epoch
                and self.isr == other.isr and self.leader_recovery_state == other.leader_recovery_state
                and self.partition_epoch <= other.partition_epoch)


@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    """Mirrors kafka.controller.LeaderIsrAndControllerEpoch: a partition state and its writer's epoch."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """Mirrors kafka.controller.ReplicaAssignment: replicas plus any reassignment in flight."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("replicas", "adding_replicas", "removing_replicas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class TopicIdReplicaAssignment:
    """Mirrors kafka.zk.TopicZNode.TopicIdReplicaAssignment."""

    topic: str
    topic_id: Uuid | None
    assignment: Mapping[TopicPartition, ReplicaAssignment] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """Mirrors kafka.zk.BrokerInfo (with the broker reduced to one PLAINTEXT endpoint).

    ``version`` is the registration JSON version: 5 for inter.broker.protocol 2.7 and later.
    """

    broker_id: int
    host: str
    port: int
    rack: str | None = None
    jmx_port: int = -1
    version: int = 5

    @property
    def path(self) -> str:
        """Mirrors kafka.zk.BrokerInfo#path."""
        return BrokerIdZNode.path(self.broker_id)

    def to_json_bytes(self, timestamp_ms: int) -> bytes:
        """Mirrors kafka.zk.BrokerInfo#toJsonBytes (the timestamp is the registration time)."""
        return BrokerIdZNode.encode(self, timestamp_ms)


class ControllerZNode:
    """Mirrors kafka.zk.ControllerZNode (the version 1 payload of Kafka 3.0-3.3)."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ControllerZNode#path."""
        return "/controller"

    @staticmethod
    def encode(broker_id: int, timestamp_ms: int) -> bytes:
        """Mirrors kafka.zk.ControllerZNode#encode: ``{"version":1,"brokerid":N,"timestamp":"ms"}``."""
        return _json_bytes({"version": 1, "brokerid": broker_id, "timestamp": str(timestamp_ms)})

    @staticmethod
    def decode(data: bytes | None) -> int | None:
        """Mirrors kafka.zk.ControllerZNode#decode: the controller's broker id."""
        js = _parse(data)
        return None if js is None else int(js["brokerid"])


class ControllerEpochZNode:
    """Mirrors kafka.zk.ControllerEpochZNode: the epoch as decimal text."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ControllerEpochZNode#path."""
        return "/controller_epoch"

    @staticmethod
    def encode(epoch: int) -> bytes:
        """Mirrors kafka.zk.ControllerEpochZNode#encode."""
        return str(epoch).encode("utf-8")

    @staticmethod
    def decode(data: bytes) -> int:
        """Mirrors kafka.zk.ControllerEpochZNode#decode."""
        return int(data.decode("utf-8"))


class BrokersZNode:
    """Mirrors kafka.zk.BrokersZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.BrokersZNode#path."""
        return "/brokers"


class BrokerIdsZNode:
    """Mirrors kafka.zk.BrokerIdsZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.BrokerIdsZNode#path."""
        return "/brokers/ids"


class BrokerIdZNode:
    """Mirrors kafka.zk.BrokerIdZNode: one broker's ephemeral registration."""

    @staticmethod
    def path(broker_id: int) -> str:
        """Mirrors kafka.zk.BrokerIdZNode#path."""
        return f"{BrokerIdsZNode.path()}/{broker_id}"

    @staticmethod
    def encode(info: BrokerInfo, timestamp_ms: int) -> bytes:
        """Mirrors kafka.zk.BrokerIdZNode#encode.

        Kafka fills a ``mutable.Map`` of six entries (version, host, port, endpoints, jmx_port,
        timestamp), adds rack (v3+), listener_security_protocol_map (v4+) and features (v5+),
        and Jackson writes it in that map's hash order. Features are empty here: this model
        advertises no feature versions.
        """
        # 1. the base fields
        fields: dict[str, Any] = {
            "version": info.version, "host": info.host, "port": info.port,
            "endpoints": [f"PLAINTEXT://{info.host}:{info.port}"], "jmx_port": info.jmx_port,
            "timestamp": str(timestamp_ms),
        }
        # 2. the fields later versions add
        if info.rack is not None and info.version >= 3:
            fields["rack"] = info.rack
        if info.version >= 4:
            fields["listener_security_protocol_map"] = {"PLAINTEXT": "PLAINTEXT"}
        if info.version >= 5:
            fields["features"] = {}
        order = scala_mutable_hash_map_order(fields, initial_capacity=int((6 + 1) / 0.75))
        return _json_bytes(_ordered(fields, order))

    @staticmethod
    def decode(broker_id: int, data: bytes) -> BrokerInfo:
        """Mirrors kafka.zk.BrokerIdZNode#decode (the PLAINTEXT host and port)."""
        js = _parse(data)
        if js is None:
            raise ValueError(f"Failed to parse ZooKeeper registration for broker {broker_id}: {data!r}")
        host, port = js.get("host"), js.get("port")
        if host is None:
            host, _, port_text = js["endpoints"][0].split("://", 1)[1].rpartition(":")
            port = int(port_text)
        return BrokerInfo(broker_id, host, int(port), js.get("rack"), int(js.get("jmx_port", -1)),
                          int(js["version"]))


class TopicsZNode:
    """Mirrors kafka.zk.TopicsZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.TopicsZNode#path."""
        return f"{BrokersZNode.path()}/topics"


class TopicZNode:
    """Mirrors kafka.zk.TopicZNode: a topic's replica assignment (JSON version 3, with topic id)."""

    @staticmethod
    def path(topic: str) -> str:
        """Mirrors kafka.zk.TopicZNode#path."""
        return f"{TopicsZNode.path()}/{topic}"

    @staticmethod
    def encode(topic_id: Uuid | None, assignment: Mapping[TopicPartition, ReplicaAssignment]) -> bytes:
        """Mirrors kafka.zk.TopicZNode#encode.

        Kafka builds three ``mutable.Map``s (partitions, adding, removing; empty lists are
        left out of the last two) and a ``mutable.Map`` of four entries plus topic_id, so
        the output is ``{"partitions":{..},"topic_id":"..","adding_replicas":{..},
        "removing_replicas":{..},"version":3}`` with the partition keys in hash order.
        """
        # 1. one map per replica list, keyed by the partition number as text
        partitions: dict[str, list[int]] = {}
        adding: dict[str, list[int]] = {}
        removing: dict[str, list[int]] = {}
        for tp, ra in assignment.items():
            key = str(tp.partition)
            partitions[key] = list(ra.replicas)
            if ra.adding_replicas:
                adding[key] = list(ra.adding_replicas)
            if ra.removing_replicas:
                removing[key] = list(ra.removing_replicas)
        # 2. the top-level map; topic_id only when the topic has one
        top: dict[str, Any] = {
            "version": 3,
            "partitions": _ordered(partitions, scala_mutable_hash_map_order(partitions)),
            "adding_replicas": _ordered(adding, scala_mutable_hash_map_order(adding)),
            "removing_replicas": _ordered(removing, scala_mutable_hash_map_order(removing)),
        }
        if topic_id is not None:
            top["topic_id"] = str(topic_id)
        return _json_bytes(_ordered(top, scala_mutable_hash_map_order(top, initial_capacity=int((4 + 1) / 0.75))))

    @staticmethod
    def decode(topic: str, data: bytes | None) -> TopicIdReplicaAssignment:
        """Mirrors kafka.zk.TopicZNode#decode (older versions without topic_id decode too)."""
        js = _parse(data)
        if js is None:
            return TopicIdReplicaAssignment(topic, None, {})
        topic_id = Uuid.from_string(js["topic_id"]) if "topic_id" in js else None
        adding = js.get("adding_replicas") or {}
        removing = js.get("removing_replicas") or {}
        assignment = {
            TopicPartition(topic, int(p)): ReplicaAssignment(tuple(replicas), tuple(adding.get(p, ())),
                                                             tuple(removing.get(p, ())))
            for p, replicas in (js.get("partitions") or {}).items()
        }
        return TopicIdReplicaAssignment(topic, topic_id, assignment)


class TopicPartitionsZNode:
    """Mirrors kafka.zk.TopicPartitionsZNode."""

    @staticmethod
    def path(topic: str) -> str:
        """Mirrors kafka.zk.TopicPartitionsZNode#path."""
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    """Mirrors kafka.zk.TopicPartitionZNode."""

    @staticmethod
    def path(partition: TopicPartition) -> str:
        """Mirrors kafka.zk.TopicPartitionZNode#path."""
        return f"{TopicPartitionsZNode.path(partition.topic)}/{partition.partition}"


class TopicPartitionStateZNode:
    """Mirrors kafka.zk.TopicPartitionStateZNode: leader, leader epoch, ISR, controller epoch."""

    # Iteration order of Scala's immutable HashMap for these key sets (a hash trie: the order
    # depends on the keys only).
    _ORDER = ("controller_epoch", "leader", "version", "leader_epoch", "isr")
    _ORDER_WITH_RECOVERY = ("controller_epoch", "leader", "version", "leader_recovery_state",
                            "leader_epoch", "isr")

    @staticmethod
    def path(partition: TopicPartition) -> str:
        """Mirrors kafka.zk.TopicPartitionStateZNode#path."""
        return f"{TopicPartitionZNode.path(partition)}/state"

    @classmethod
    def encode(cls, value: LeaderIsrAndControllerEpoch) -> bytes:
        """Mirrors kafka.zk.TopicPartitionStateZNode#encode (leader_recovery_state only if RECOVERING)."""
        lai = value.leader_and_isr
        fields = {"version": 1, "leader": lai.leader, "leader_epoch": lai.leader_epoch,
                  "controller_epoch": value.controller_epoch, "isr": list(lai.isr)}
        order = cls._ORDER
        if lai.leader_recovery_state != LeaderRecoveryState.RECOVERED:
            fields["leader_recovery_state"] = int(lai.leader_recovery_state)
            order = cls._ORDER_WITH_RECOVERY
        return _json_bytes(_ordered(fields, order))

    @staticmethod
    def decode(data: bytes | None, stat: Stat) -> LeaderIsrAndControllerEpoch | None:
        """Mirrors kafka.zk.TopicPartitionStateZNode#decode: the zkVersion is the partition epoch."""
        js = _parse(data)
        if js is None:
            return None
        lai = LeaderAndIsr(int(js["leader"]), int(js["leader_epoch"]), tuple(js["isr"]),
                           LeaderRecoveryState(int(js.get("leader_recovery_state", 0))), stat.version)
        return LeaderIsrAndControllerEpoch(lai, int(js["controller_epoch"]))


class ConfigType:
    """Mirrors kafka.server.ConfigType: the entity types under /config."""

    TOPIC = "topics"
    CLIENT = "clients"
    USER = "users"
    BROKER = "brokers"
    IP = "ips"
    ALL = (TOPIC, CLIENT, USER, BROKER, IP)


class ConfigZNode:
    """Mirrors kafka.zk.ConfigZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ConfigZNode#path."""
        return "/config"


class ConfigEntityTypeZNode:
    """Mirrors kafka.zk.ConfigEntityTypeZNode."""

    @staticmethod
    def path(entity_type: str) -> str:
        """Mirrors kafka.zk.ConfigEntityTypeZNode#path."""
        return f"{ConfigZNode.path()}/{entity_type}"


class ConfigEntityZNode:
    """Mirrors kafka.zk.ConfigEntityZNode: ``{"version":1,"config":{...}}``.

    Kafka's config map is a java.util.Properties, whose order depends on the JVM; this model
    writes the config keys sorted.
    """

    @staticmethod
    def path(entity_type: str, entity_name: str) -> str:
        """Mirrors kafka.zk.ConfigEntityZNode#path."""
        return f"{ConfigEntityTypeZNode.path(entity_type)}/{entity_name}"

    @staticmethod
    def encode(config: Mapping[str, str]) -> bytes:
        """Mirrors kafka.zk.ConfigEntityZNode#encode."""
        return _json_bytes({"version": 1, "config": {k: str(config[k]) for k in sorted(config)}})

    @staticmethod
    def decode(data: bytes | None) -> dict[str, str]:
        """Mirrors kafka.zk.ConfigEntityZNode#decode."""
        js = _parse(data)
        if not isinstance(js, dict) or not isinstance(js.get("config"), dict):
            return {}
        return {k: str(v) for k, v in js["config"].items()}


class ConfigEntityChangeNotificationZNode:
    """Mirrors kafka.zk.ConfigEntityChangeNotificationZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ConfigEntityChangeNotificationZNode#path."""
        return f"{ConfigZNode.path()}/changes"


class ConfigEntityChangeNotificationSequenceZNode:
    """Mirrors kafka.zk.ConfigEntityChangeNotificationSequenceZNode."""

    SEQUENCE_NUMBER_PREFIX = "config_change_"

    @classmethod
    def create_path(cls) -> str:
        """Mirrors kafka.zk.ConfigEntityChangeNotificationSequenceZNode#createPath."""
        return f"{ConfigEntityChangeNotificationZNode.path()}/{cls.SEQUENCE_NUMBER_PREFIX}"

    @staticmethod
    def encode(sanitized_entity_path: str) -> bytes:
        """Mirrors kafka.zk.ConfigEntityChangeNotificationSequenceZNode#encode."""
        return _json_bytes({"version": 2, "entity_path": sanitized_entity_path})


def _encode_partition_list(partitions: Iterable[TopicPartition]) -> list[dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in partitions]


def _decode_partition_list(data: bytes | None) -> set[TopicPartition]:
    js = _parse(data)
    if js is None:
        return set()
    return {TopicPartition(p["topic"], int(p["partition"])) for p in js["partitions"]}


class IsrChangeNotificationZNode:
    """Mirrors kafka.zk.IsrChangeNotificationZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.IsrChangeNotificationZNode#path."""
        return "/isr_change_notification"


class IsrChangeNotificationSequenceZNode:
    """Mirrors kafka.zk.IsrChangeNotificationSequenceZNode: ``isr_change_<seq>`` notifications."""

    SEQUENCE_NUMBER_PREFIX = "isr_change_"
    VERSION = 1  # kafka.controller.IsrChangeNotificationHandler.Version

    @classmethod
    def path(cls, sequence_number: str = "") -> str:
        """Mirrors kafka.zk.IsrChangeNotificationSequenceZNode#path."""
        return f"{IsrChangeNotificationZNode.path()}/{cls.SEQUENCE_NUMBER_PREFIX}{sequence_number}"

    @classmethod
    def encode(cls, partitions: Iterable[TopicPartition]) -> bytes:
        """Mirrors kafka.zk.IsrChangeNotificationSequenceZNode#encode.

        ``{"version":1,"partitions":[{"topic":..,"partition":..}]}``, partitions in the given order.
        """
        return _json_bytes({"version": cls.VERSION, "partitions": _encode_partition_list(partitions)})

    @staticmethod
    def decode(data: bytes | None) -> set[TopicPartition]:
        """Mirrors kafka.zk.IsrChangeNotificationSequenceZNode#decode."""
        return _decode_partition_list(data)

    @classmethod
    def sequence_number(cls, path: str) -> str:
        """Mirrors kafka.zk.IsrChangeNotificationSequenceZNode#sequenceNumber."""
        return path[path.rfind(cls.SEQUENCE_NUMBER_PREFIX) + len(cls.SEQUENCE_NUMBER_PREFIX):]


class LogDirEventNotificationZNode:
    """Mirrors kafka.zk.LogDirEventNotificationZNode (path only)."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.LogDirEventNotificationZNode#path."""
        return "/log_dir_event_notification"


class AdminZNode:
    """Mirrors kafka.zk.AdminZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.AdminZNode#path."""
        return "/admin"


class DeleteTopicsZNode:
    """Mirrors kafka.zk.DeleteTopicsZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.DeleteTopicsZNode#path."""
        return f"{AdminZNode.path()}/delete_topics"


class DeleteTopicsTopicZNode:
    """Mirrors kafka.zk.DeleteTopicsTopicZNode: one topic queued for deletion (no data)."""

    @staticmethod
    def path(topic: str) -> str:
        """Mirrors kafka.zk.DeleteTopicsTopicZNode#path."""
        return f"{DeleteTopicsZNode.path()}/{topic}"


class ReassignPartitionsZNode:
    """Mirrors kafka.zk.ReassignPartitionsZNode (the pre-KIP-455 znode, still read in 3.x)."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ReassignPartitionsZNode#path."""
        return f"{AdminZNode.path()}/reassign_partitions"

    @staticmethod
    def encode(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
        """Mirrors kafka.zk.ReassignPartitionsZNode#encode.

        ``{"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]}``.
        """
        partitions = [{"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                      for tp, replicas in reassignment.items()]
        return _json_bytes({"version": 1, "partitions": partitions})

    @staticmethod
    def decode(data: bytes) -> dict[TopicPartition, tuple[int, ...]]:
        """Mirrors kafka.zk.ReassignPartitionsZNode#decode."""
        js = _parse(data) or {"partitions": []}
        return {TopicPartition(p["topic"], int(p["partition"])): tuple(p["replicas"]) for p in js["partitions"]}


class PreferredReplicaElectionZNode:
    """Mirrors kafka.zk.PreferredReplicaElectionZNode."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.PreferredReplicaElectionZNode#path."""
        return f"{AdminZNode.path()}/preferred_replica_election"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        """Mirrors kafka.zk.PreferredReplicaElectionZNode#encode.

        ``{"version":1,"partitions":[{"topic":..,"partition":..}]}``, partitions in the given order.
        """
        return _json_bytes({"version": 1, "partitions": _encode_partition_list(partitions)})

    @staticmethod
    def decode(data: bytes | None) -> set[TopicPartition]:
        """Mirrors kafka.zk.PreferredReplicaElectionZNode#decode."""
        return _decode_partition_list(data)


class ConsumerPathZNode:
    """Mirrors kafka.zk.ConsumerPathZNode (the old consumer's root, still pre-created)."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ConsumerPathZNode#path."""
        return "/consumers"


class ClusterIdZNode:
    """Mirrors kafka.zk.ClusterIdZNode: ``{"version":"1","id":"..."}``."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ClusterIdZNode#path."""
        return "/cluster/id"

    @staticmethod
    def to_json(cluster_id: str) -> bytes:
        """Mirrors kafka.zk.ClusterIdZNode#toJson."""
        return _json_bytes({"version": "1", "id": cluster_id})

    @staticmethod
    def from_json(data: bytes) -> str:
        """Mirrors kafka.zk.ClusterIdZNode#fromJson."""
        return str(_parse(data)["id"])


class BrokerSequenceIdZNode:
    """Mirrors kafka.zk.BrokerSequenceIdZNode: its zkVersion generates broker ids."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.BrokerSequenceIdZNode#path."""
        return f"{BrokersZNode.path()}/seqid"


class ProducerIdBlockZNode:
    """Mirrors kafka.zk.ProducerIdBlockZNode (path only)."""

    @staticmethod
    def path() -> str:
        """Mirrors kafka.zk.ProducerIdBlockZNode#path."""
        return "/latest_producer_id_block"


# Mirrors kafka.zk.ZkData.PersistentZkPaths: created at broker start-up if missing.
PERSISTENT_ZK_PATHS: tuple[str, ...] = (
    ConsumerPathZNode.path(),
    BrokerIdsZNode.path(),
    TopicsZNode.path(),
    ConfigEntityChangeNotificationZNode.path(),
    DeleteTopicsZNode.path(),
    BrokerSequenceIdZNode.path(),
    IsrChangeNotificationZNode.path(),
    ProducerIdBlockZNode.path(),
    LogDirEventNotificationZNode.path(),
) + tuple(ConfigEntityTypeZNode.path(t) for t in ConfigType.ALL)
