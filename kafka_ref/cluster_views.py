"""Read-only views of a running Cluster for tests: values, never live objects.

``Cluster`` mixes in :class:`ClusterViews`. Every method here reads state and returns frozen
dataclasses, plain dicts or ints, so a test can keep a snapshot and compare it with a later one
without it changing underneath. The same calls work in every metadata mode where the concept
exists; where it does not (there is no controller in ``metadata_mode="manual"``), they raise
:class:`NoControllerError`, a one-line message naming the mode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.server.kafka_broker import KafkaBroker


class NoControllerError(RuntimeError):
    """An operation that needs a controller was called on a cluster that has none (manual mode)."""


@dataclass(frozen=True, slots=True)
class RemoteReplicaView:
    """What a partition leader knows about one follower (Kafka's ``Replica`` state on the leader).

    ``last_caught_up_time_ms`` is epoch milliseconds on the cluster's clock (see
    ``Cluster.now_ms``); 0 means "never caught up", as in Kafka.
    """

    broker_id: int
    log_end_offset: int
    log_start_offset: int
    last_caught_up_time_ms: int
    last_fetch_time_ms: int


@dataclass(frozen=True, slots=True)
class ReplicaStateView:
    """One broker's replica of one partition, frozen at the moment ``Cluster.replica_state`` read it.

    ``leader`` is the leader this broker believes in (-1 when none); ``isr`` and
    ``maximal_isr`` differ while an AlterPartition is in flight (the leader already counts a
    replica it is adding, for the high watermark, before the controller confirmed it).
    ``remote_replicas`` is filled on the leader only: one entry per other assigned replica.
    The offsets are -1 when the broker hosts the partition but has no log for it yet.
    """

    broker_id: int
    topic_partition: TopicPartition
    is_leader: bool
    leader: int
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    isr: frozenset[int]
    maximal_isr: frozenset[int]
    high_watermark: int
    log_start_offset: int
    log_end_offset: int
    remote_replicas: dict[int, RemoteReplicaView]

    def remote(self, broker_id: int) -> RemoteReplicaView:
        """The leader's view of follower ``broker_id`` (KeyError when it is not a remote replica here)."""
        return self.remote_replicas[broker_id]


def replica_state_of(broker: "KafkaBroker", tp: TopicPartition) -> ReplicaStateView | None:
    """Build the frozen view of ``tp`` on ``broker``; None when the broker does not host it online."""
    partition = broker.replica_manager.online_partition(tp)
    if partition is None:
        return None
    log = partition.log
    remotes = {}
    if partition.is_leader:
        for replica in partition.remote_replicas:
            remotes[replica.broker_id] = RemoteReplicaView(
                broker_id=replica.broker_id,
                log_end_offset=replica.log_end_offset,
                log_start_offset=replica.log_start_offset,
                last_caught_up_time_ms=replica.last_caught_up_time_ms,
                last_fetch_time_ms=replica.last_fetch_time_ms,
            )
    leader = partition.leader_replica_id_opt
    return ReplicaStateView(
        broker_id=broker.broker_id,
        topic_partition=tp,
        is_leader=partition.is_leader,
        leader=-1 if leader is None else leader,
        leader_epoch=partition.leader_epoch,
        partition_epoch=partition.partition_epoch,
        replicas=tuple(partition.assignment),
        adding_replicas=tuple(partition.adding_replicas),
        removing_replicas=tuple(partition.removing_replicas),
        isr=frozenset(partition.in_sync_replica_ids),
        maximal_isr=frozenset(partition.maximal_isr),
        high_watermark=log.high_watermark if log is not None else -1,
        log_start_offset=log.log_start_offset if log is not None else -1,
        log_end_offset=log.log_end_offset if log is not None else -1,
        remote_replicas=remotes,
    )


class ClusterViews:
    """Views every ``Cluster`` offers (mixed into ``kafka_ref.cluster.Cluster``)."""

    # Provided by Cluster.
    metadata_mode: str
    brokers: dict[int, "KafkaBroker"]
    zookeeper: Any
    kraft: Any
    controller: Any
    live_broker_ids: Callable[[], list[int]]

    # ------------------------------------------------------------------ time

    def now_ms(self) -> int:
        """The cluster's clock in epoch milliseconds: loop time plus the fixed origin every broker uses.

        Compare it with timestamps the brokers hand out (``last_caught_up_time_ms``, record
        timestamps, ``log_append_time_ms``). Needs a running event loop.
        """
        return Time().milliseconds()

    # ------------------------------------------------------------------ one broker's view

    def replica_state(self, broker_id: int, topic: str, partition: int) -> ReplicaStateView | None:
        """Broker ``broker_id``'s replica of ``topic``-``partition`` as a frozen value.

        Leadership, epochs, ISR and maximal ISR, high watermark, log start/end offsets and, on
        the leader, what it knows of each follower. None when the broker is down or does not
        host the partition. Works in every metadata mode.
        """
        broker = self.brokers.get(broker_id)
        if broker is None or not broker.is_running:
            return None
        return replica_state_of(broker, TopicPartition(topic, partition))

    def broker_epoch(self, broker_id: int) -> int:
        """The epoch broker ``broker_id`` registered with (ZooKeeper: its registration znode's creation
        transaction id; KRaft: the offset of its registration record); -1 in manual mode."""
        return self.brokers[broker_id].broker_epoch

    # ------------------------------------------------------------------ the controller's view

    def require_controller(self, operation: str) -> None:
        """Raise :class:`NoControllerError` naming ``operation`` when this cluster has no controller."""
        if self.metadata_mode == "manual":
            raise NoControllerError(
                f"{operation} needs a controller, and this Cluster runs metadata_mode='manual' (the test plays "
                f"the controller): use metadata_mode='zk' or 'kraft', or read brokers with replica_state()"
            )

    def _zk_json(self, path: str) -> Any:
        self.require_controller("reading ZooKeeper")
        if self.zookeeper is None or self.zookeeper.exists(path) is None:
            return None
        data, _stat = self.zookeeper.get_data(path)
        return json.loads(data) if data else None

    def topic_assignment(self, topic: str) -> dict[int, dict[str, list[int]]] | None:
        """Per partition: ``replicas``, ``adding_replicas`` and ``removing_replicas``, as the controller has them.

        ZooKeeper mode reads the topic znode; KRaft mode the controller's partition
        registrations. None when the topic does not exist.
        """
        self.require_controller("topic_assignment")
        if self.kraft is not None:
            control = self.kraft.controller.replication_control
            topic_id = control.get_topic_id(topic)
            if topic_id is None or topic_id not in control.topics:
                return None
            return {p: {"replicas": list(r.replicas), "adding_replicas": list(r.adding_replicas),
                        "removing_replicas": list(r.removing_replicas)}
                    for p, r in sorted(control.topics[topic_id].parts.items())}
        data = self._zk_json(f"/brokers/topics/{topic}")
        if data is None:
            return None
        return {int(p): {"replicas": list(r), "adding_replicas": list(data.get("adding_replicas", {}).get(p, [])),
                         "removing_replicas": list(data.get("removing_replicas", {}).get(p, []))}
                for p, r in data["partitions"].items()}

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The controller's state of one partition, or None when it does not exist.

        Keys in both modes: ``leader``, ``leader_epoch``, ``isr``, ``controller_epoch``,
        ``partition_epoch`` (ZooKeeper mode: the state znode's version), ``replicas``,
        ``adding_replicas``, ``removing_replicas``; KRaft mode adds ``leader_recovery_state``
        (and has ``controller_epoch`` -1: KRaft records no controller epoch per partition).
        """
        self.require_controller("partition_state")
        if self.kraft is not None:
            # (As committed: a write still lingering in the Raft leader's accumulator is not shown.)
            return self.kraft.partition_state(topic, partition)
        path = f"/brokers/topics/{topic}/partitions/{partition}/state"
        if self.zookeeper is None or self.zookeeper.exists(path) is None:
            return None
        data, stat = self.zookeeper.get_data(path)
        state = json.loads(data)
        assignment = (self.topic_assignment(topic) or {}).get(partition, {})
        return {"leader": state["leader"], "leader_epoch": state["leader_epoch"], "isr": list(state["isr"]),
                "controller_epoch": state["controller_epoch"], "partition_epoch": stat.version,
                "replicas": assignment.get("replicas", []), "adding_replicas": assignment.get("adding_replicas", []),
                "removing_replicas": assignment.get("removing_replicas", [])}

    def leader_for(self, topic: str, partition: int) -> int:
        """The partition's leader according to the controller; -1 when none or no such partition."""
        self.require_controller("leader_for")
        state = self.partition_state(topic, partition)
        return state["leader"] if state else -1

    def controller_id(self) -> int | None:
        """The active controller's id: the broker in /controller (ZooKeeper mode, None while there is
        none), the controller node (KRaft mode), or the id the test's stand-in uses (manual mode)."""
        if self.kraft is not None:
            return self.kraft.controller_id()
        if self.metadata_mode == "manual":
            return self.controller.controller_id
        data = self._zk_json("/controller")
        return data["brokerid"] if data else None

    def controller_epoch(self) -> int | None:
        """The controller epoch: /controller_epoch (ZooKeeper), the metadata quorum's epoch (KRaft), or
        the epoch the test's stand-in uses (manual)."""
        if self.kraft is not None:
            return self.kraft.controller_epoch()
        if self.metadata_mode == "manual":
            return self.controller.controller_epoch
        data = self._zk_json("/controller_epoch")
        return int(data) if data is not None else None

    def active_controller(self) -> Any:
        """The live controller object (KafkaController or QuorumController); None when there is none."""
        self.require_controller("active_controller")
        if self.kraft is not None:
            return self.kraft.controller
        cid = self.controller_id()
        return self.brokers[cid].controller if cid is not None and cid in self.brokers else None

    def topic_id(self, topic: str) -> Any:
        """The topic's id (a ``Uuid``) as the controller assigned it; in manual mode one the cluster
        assigns on first use and keeps, so LeaderAndIsr and UpdateMetadata agree. None when unknown."""
        if self.metadata_mode == "manual":
            return self.manual_topic_id(topic)
        if self.kraft is not None:
            return self.kraft.controller.replication_control.get_topic_id(topic)
        data = self._zk_json(f"/brokers/topics/{topic}")
        if data is None or "topic_id" not in data:
            return None
        from kafka_ref.common.uuid import Uuid

        return Uuid.from_string(data["topic_id"])

    def manual_topic_id(self, topic: str) -> Any:
        """Manual mode: the id this cluster uses for ``topic`` (made from the cluster's seed on first use)."""
        from kafka_ref.common.uuid import Uuid

        ids: dict[str, Uuid] = self.__dict__.setdefault("_manual_topic_ids", {})
        if topic not in ids:
            rng = self.rng  # type: ignore[attr-defined]
            ids[topic] = Uuid(rng.getrandbits(63) | 1, rng.getrandbits(64) | 1)
        return ids[topic]

    def partitions_led_by(self, broker_id: int) -> set[TopicPartition]:
        """Partitions whose leader (per the controller) is ``broker_id``."""
        self.require_controller("partitions_led_by")
        led: set[TopicPartition] = set()
        if self.kraft is not None:
            control = self.kraft.controller.replication_control
            for info in control.topics.values():
                for p, r in info.parts.items():
                    if r.leader == broker_id:
                        led.add(TopicPartition(info.name, p))
            return led
        assert self.zookeeper is not None
        for topic in self.zookeeper.get_children("/brokers/topics"):
            for p in self.zookeeper.get_children(f"/brokers/topics/{topic}/partitions"):
                if self.leader_for(topic, int(p)) == broker_id:
                    led.add(TopicPartition(topic, int(p)))
        return led

    def broker_gone(self, broker_id: int) -> bool:
        """True once no live broker's metadata lists ``broker_id`` and the controller acted on its loss.

        "Acted": ZooKeeper mode, its registration is gone and the controller no longer counts it
        live; KRaft mode, the controller fenced it. In both, no partition names it leader any
        more. Manual mode checks the brokers' metadata only (the test is the controller).
        """
        live = [b for b in self.live_broker_ids() if b != broker_id]
        if any(broker_id in self.brokers[b].metadata_cache.alive_brokers for b in live):
            return False
        if self.metadata_mode == "manual":
            return True
        if self.kraft is not None:
            registration = self.kraft.controller.cluster_control.broker_registrations.get(broker_id)
            if registration is not None and not registration.fenced:
                return False
        else:
            if self.zookeeper.exists(f"/brokers/ids/{broker_id}") is not None:
                return False
            controller = self.active_controller()
            if controller is None or broker_id in controller.controller_context.live_or_shutting_down_broker_ids:
                return False
        return not self.partitions_led_by(broker_id)
