"""A whole Kafka cluster inside one process.

Three metadata modes (ZooKeeper is the default; README "Writing tests against kafka_ref" says why):

- ``Cluster(brokers=3, metadata_mode="zk")``: an in-memory ZooKeeper, brokers that register in
  it, elect a controller and follow its LeaderAndIsr / UpdateMetadata / StopReplica requests —
  Kafka's ZooKeeper-era cluster. Topics are created with CreateTopics sent to the controller.
- ``Cluster(brokers=3, metadata_mode="manual")``: no controller; the test plays it.
  ``await cluster.send(broker_id, request)`` delivers any request with the controller's
  principal; AlterPartition requests from partition leaders reach the harness endpoint
  ``CONTROLLER_NODE``, which by default accepts them (bumping the partition epoch) and records
  them; a test may install its own handler (``cluster.controller.handler``).
- ``Cluster(brokers=3, metadata_mode="kraft")``: a KRaft controller node (QuorumController with a
  one-voter ``__cluster_metadata`` log) and brokers that register, heartbeat, fetch the log and
  apply it (kafka_ref/raft/, image/, controller/quorum/, server/metadata/;
  the wiring is kafka_ref/kraft_cluster.py). The same views and operations work as in ZooKeeper mode.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import anyio

from kafka_ref.cluster_control import ClusterControl
from kafka_ref.cluster_ops import ClusterOps
from kafka_ref.cluster_views import ClusterViews
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.disk import Disk
from kafka_ref.network.network import INTER_BROKER_PRINCIPAL, Envelope, Network, serve_inbox
from kafka_ref.server.kafka_broker import KafkaBroker
from kafka_ref.common.time import Time
from kafka_ref.zk.zookeeper import ZooKeeper

CONTROLLER_NODE = "controller"


@dataclass
class ManualController:
    """The test's stand-in for the controller in manual mode: epochs and AlterPartition answers."""

    controller_id: int = 3000
    controller_epoch: int = 1
    alter_partition_requests: list[AlterPartitionRequest] = field(default_factory=list)
    handler: Callable[[AlterPartitionRequest], AlterPartitionResponse] | None = None

    def accept(self, request: AlterPartitionRequest) -> AlterPartitionResponse:
        """Accept every change: same leader and epoch, the proposed ISR, partition epoch + 1."""
        topics = []
        for topic in request.topics:
            topics.append(AlterPartitionResponseTopicData(
                topic_name=topic.topic_name,
                topic_id=topic.topic_id,
                partitions=tuple(
                    AlterPartitionResponsePartitionData(
                        partition_index=p.partition_index,
                        error_code=Errors.NONE.code,
                        leader_id=request.broker_id,
                        leader_epoch=p.leader_epoch,
                        isr=tuple(p.new_isr()),
                        leader_recovery_state=p.leader_recovery_state,
                        partition_epoch=p.partition_epoch + 1,
                    )
                    for p in topic.partitions
                ),
            ))
        return AlterPartitionResponse(topics=tuple(topics))

    def handle(self, envelope: Envelope) -> None:
        request = envelope.request
        if isinstance(request, AlterPartitionRequest):
            self.alter_partition_requests.append(request)
            envelope.respond((self.handler or self.accept)(request))
        else:
            envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))


def _raise_underlying(group: BaseExceptionGroup) -> None:
    """Re-raise the one exception that ended the cluster's task group as itself.

    The task groups nest (cluster, broker, client), so a single error arrives wrapped in a group
    per level. One that ends the run (KeyboardInterrupt, SystemExit, pdb's BdbQuit) wins over the
    cancellations and time-outs it caused elsewhere; otherwise, when exactly one exception is
    inside, it is raised without its wrappers. Returns (and the caller re-raises the group) when
    several independent errors happened.
    """
    leaves: list[BaseException] = []

    def collect(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                collect(inner)
        else:
            leaves.append(exc)

    collect(group)
    cancelled = anyio.get_cancelled_exc_class()
    leaves = [e for e in leaves if not isinstance(e, cancelled)]
    stoppers = [e for e in leaves if isinstance(e, RUN_ENDING) or not isinstance(e, Exception)]
    chosen = stoppers[0] if stoppers else (leaves[0] if len(leaves) == 1 else None)
    if chosen is not None:
        raise chosen from None


class Cluster(ClusterViews, ClusterControl, ClusterOps):
    """A whole Kafka cluster in one process; use it with ``async with``.

    ``metadata_mode`` is ``"zk"`` (the default: a ZooKeeper-era controller elected among the
    brokers), ``"kraft"`` (a KRaft controller node) or ``"manual"`` (no controller: the test
    sends LeaderAndIsr / UpdateMetadata itself); in KRaft mode ``controllers`` voters form the
    metadata quorum (1 by default). ``config`` holds broker configs by Kafka's
    dotted names; ``seed`` fixes the cluster's own randomness. Views (``replica_state``,
    ``partition_state``, ...) come from ``kafka_ref.cluster_views``, awaitable operations
    (``produce``, ``fetch``, ``shutdown_broker``, groups) from ``kafka_ref.cluster_ops`` and
    control requests from ``kafka_ref.cluster_control``.
    """

    def __init__(
        self,
        brokers: int = 3,
        metadata_mode: str = "zk",
        config: dict[str, Any] | None = None,
        seed: int = 0,
        clock: str = "loop",
        controllers: int = 1,
        racks: dict[int, str] | None = None,
    ) -> None:
        if clock not in ("loop", "wall"):
            raise ValueError(f"clock {clock!r} is not available; use 'loop' (virtual where the loop is) or 'wall'")
        self.clock = clock
        self._clock_token: Any = None
        self.wire: Any = None  # kafka_ref.wire.serve.WireServer while serve() runs
        if metadata_mode not in ("manual", "zk", "kraft"):
            raise ValueError(f"metadata_mode {metadata_mode!r} is not available; use 'zk', 'kraft' or 'manual'")
        if isinstance(brokers, bool) or not isinstance(brokers, int) or brokers < 1:
            raise ValueError(f"brokers must be a whole number of at least 1, got {brokers!r}")
        self.num_brokers = brokers
        self.metadata_mode = metadata_mode
        self.base_config = dict(config or {})
        KafkaConfig(self.base_config)  # validate early: ConfigException names a bad value
        # Each broker's ``broker.rack`` (KIP-36), e.g. {0: "a", 1: "b", 2: "b"}.
        self.racks = dict(racks or {})
        unknown = sorted(set(self.racks) - set(range(brokers)))
        if unknown:
            raise ValueError(f"racks names brokers {unknown} this cluster does not have (brokers 0..{brokers - 1})")
        self.rng = random.Random(seed)
        self.network = Network()
        self.disks = {b: Disk(b) for b in range(brokers)}
        self.brokers: dict[int, KafkaBroker] = {}
        self.controller = ManualController()
        self.zookeeper: ZooKeeper | None = None
        # KRaft mode: the controller node and its QuorumController (kafka_ref/kraft_cluster.py).
        self.kraft: Any = None
        if metadata_mode == "kraft":
            from kafka_ref.kraft_cluster import KRaftClusterSupport

            self.kraft = KRaftClusterSupport(self, controllers)
        self._tg: anyio.abc.TaskGroup | None = None
        self._correlation = 0

    # ------------------------------------------------------------------ life cycle

    async def __aenter__(self) -> "Cluster":
        if self.clock == "wall":
            # Real epoch milliseconds for every Time made from here on (kafka_ref/wire/serve.py).
            from kafka_ref.common.time import use_wall_clock_origin

            self._clock_token = use_wall_clock_origin()
            if self.kraft is not None:
                self.kraft.time = Time()
        self._tg = await anyio.create_task_group().__aenter__()
        try:
            return await self._start()
        except BaseException as exc:
            # Leave the task group properly (cancelled) so a failed or cancelled start-up unwinds cleanly.
            self._tg.cancel_scope.cancel()
            try:
                await self._tg.__aexit__(type(exc), exc, exc.__traceback__)
            except BaseExceptionGroup as group:
                _raise_underlying(group)
            raise

    async def _start(self) -> "Cluster":
        assert self._tg is not None
        if self.metadata_mode == "zk":
            self.zookeeper = ZooKeeper(time=Time())
            self._tg.start_soon(self.zookeeper.run, name="zookeeper")
        elif self.kraft is not None:
            await self.kraft.start(self._tg)
        else:
            inbox = self.network.register(CONTROLLER_NODE)
            self._tg.start_soon(serve_inbox, inbox, self.controller.handle)
        for broker_id in range(self.num_brokers):
            await self.start_broker(broker_id)
        if self.metadata_mode == "zk":
            await self.wait_until(lambda: self.controller_id() is not None and self._metadata_converged(),
                                  message="controller elected and every broker known to every broker")
        if self.kraft is not None:
            await self.wait_until(lambda: self.kraft.converged() and self._metadata_converged(),
                                  message="every broker unfenced and caught up with the metadata log")
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        try:
            return await self._tg.__aexit__(*exc)
        except BaseExceptionGroup as group:
            _raise_underlying(group)
            raise
        finally:
            if self._clock_token is not None:
                from kafka_ref.common.time import reset_clock_origin

                reset_clock_origin(self._clock_token)
                self._clock_token = None

    def serve(self, host: str = "127.0.0.1", port: int = 0) -> Any:
        """Kafka wire-protocol listeners for real clients: ``async with cluster.serve() as bootstrap``.

        Needs ``clock="wall"``; see kafka_ref/wire/serve.py.
        """
        from kafka_ref.wire.serve import serve

        return serve(self, host, port)

    def broker_config(self, broker_id: int) -> KafkaConfig:
        """The KafkaConfig broker ``broker_id`` runs with: the cluster's config plus its ``broker.id``
        (and its ``broker.rack`` when ``racks`` names one)."""
        rack = {"broker.rack": self.racks[broker_id]} if broker_id in self.racks else {}
        return KafkaConfig({**self.base_config, **rack, "broker.id": broker_id})

    async def start_broker(self, broker_id: int) -> KafkaBroker:
        """Start broker ``broker_id`` on its Disk in this cluster's mode (``restart_broker`` for one that ran before)."""
        assert self._tg is not None
        if self.metadata_mode == "zk":
            broker = KafkaBroker(
                broker_id, self.broker_config(broker_id), self.network, self.disks[broker_id],
                zookeeper=self.zookeeper, rng=random.Random(self.rng.getrandbits(64)),
            )
        elif self.kraft is not None:
            broker = KafkaBroker(
                broker_id, self.broker_config(broker_id), self.network, self.disks[broker_id],
                rng=random.Random(self.rng.getrandbits(64)), **self.kraft.broker_kwargs(),
            )
        else:
            broker = KafkaBroker(
                broker_id, self.broker_config(broker_id), self.network, self.disks[broker_id],
                controller_node_provider=lambda: CONTROLLER_NODE,
            )
        self.brokers[broker_id] = broker
        await self._tg.start(broker.run)
        return broker

    def broker(self, broker_id: int) -> KafkaBroker:
        """The KafkaBroker object (internals; tests read state through ``replica_state`` and the views)."""
        return self.brokers[broker_id]

    def kill_broker(self, broker_id: int) -> None:
        """Crash a broker: memory state lost, its Disk kept."""
        if broker_id not in self.brokers:
            raise ValueError(f"kill_broker({broker_id!r}): no such broker; this cluster has brokers "
                             f"{sorted(self.brokers)}")
        self.brokers[broker_id].crash()

    async def restart_broker(self, broker_id: int) -> KafkaBroker:
        """Start a fresh broker process on the same Disk.

        In ZooKeeper mode the new process can only register once the old session's ephemeral
        /brokers/ids node is gone (Kafka refuses to start otherwise), so this waits for that.
        """
        old = self.brokers.get(broker_id)
        if old is not None and old.is_running:
            old.crash()
        if self.zookeeper is not None:
            timeout = self.broker_config(broker_id).get("zookeeper.session.timeout.ms") * 2
            await self.wait_until(lambda: self.zookeeper.exists(f"/brokers/ids/{broker_id}") is None, timeout_ms=timeout,
                                  message=f"old registration of broker {broker_id} expired")
        return await self.start_broker(broker_id)

    def shutdown_broker_uncontrolled(self, broker_id: int) -> None:
        """A clean process stop without controlled shutdown (checkpoints written, session closed)."""
        self.brokers[broker_id].shutdown()

    # ------------------------------------------------------------------ admin flows (ZooKeeper mode)

    async def delete_topic(self, name: str, timeout_ms: int = 30000) -> Any:
        """DeleteTopics sent to the controller; raises the topic's error (e.g. TOPIC_DELETION_DISABLED)."""
        from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest

        self.require_controller("delete_topic")
        request = DeleteTopicsRequest.for_topic_names([name], timeout_ms)
        response = await self._send_to_controller(request, timeout_ms)
        result = response.responses[0]
        Errors.for_code(result.error_code).maybe_raise(result.error_message)
        await self._wait_brokers_applied(timeout_ms, f"the deletion of {name}")
        return result

    async def reassign_partitions(self, reassignment: dict[TopicPartition, list[int]], via: str = "zk") -> dict[TopicPartition, int]:
        """Start moving partitions to the given replicas.

        ``via="zk"`` writes /admin/reassign_partitions as the ZooKeeper-era tool did (returns
        {}); ``via="api"`` sends AlterPartitionReassignments to the controller and returns
        each partition's error code.
        """
        self.require_controller("reassign_partitions")
        if via == "zk":
            from kafka_ref.zk.zk_data import ReassignPartitionsZNode

            assert self.zookeeper is not None
            self.zookeeper.create(ReassignPartitionsZNode.path(), ReassignPartitionsZNode.encode(reassignment))
            return {}
        return await self._alter_partition_reassignments({tp: list(r) for tp, r in reassignment.items()})

    async def cancel_partition_reassignments(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """AlterPartitionReassignments with no target replicas: revert the moves in progress."""
        return await self._alter_partition_reassignments({tp: None for tp in partitions})

    async def _alter_partition_reassignments(self, reassignments: dict[TopicPartition, list[int] | None]) -> dict[TopicPartition, int]:
        from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest

        request = AlterPartitionReassignmentsRequest.of(reassignments)
        response = await self._send_to_controller(request, request.timeout_ms)
        Errors.for_code(response.error_code).maybe_raise(response.error_message)
        return response.partition_errors()

    async def elect_preferred_leaders(self, partitions: Iterable[TopicPartition] | None = None,
                                      timeout_ms: int = 30000) -> dict[TopicPartition, int]:
        """Move leadership back to the preferred replicas (every partition when None).

        ZooKeeper mode writes /admin/preferred_replica_election, as the ZooKeeper-era tool did,
        and returns {}. KRaft mode sends ElectLeaders (PREFERRED) to the controller, waits until
        the live brokers applied the result, and returns each answered partition's error code.
        """
        from kafka_ref.zk.zk_data import PreferredReplicaElectionZNode

        self.require_controller("elect_preferred_leaders")
        if self.kraft is not None:
            from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest

            request = ElectLeadersRequest.of(None if partitions is None else list(partitions), timeout_ms=timeout_ms)
            response = await self._send_to_controller(request, timeout_ms)
            Errors.for_code(response.error_code).maybe_raise()
            await self._wait_brokers_applied(timeout_ms, "the elections")
            return response.partition_errors()
        assert self.zookeeper is not None
        if partitions is None:
            partitions = [TopicPartition(t, int(p)) for t in self.zookeeper.get_children("/brokers/topics")
                          for p in self.zookeeper.get_children(f"/brokers/topics/{t}/partitions")]
        self.zookeeper.create(PreferredReplicaElectionZNode.path(),
                              PreferredReplicaElectionZNode.encode(sorted(partitions)))
        return {}

    # ------------------------------------------------------------------ ZooKeeper-mode views

    def _metadata_converged(self) -> bool:
        live = set(self.live_broker_ids())
        return all(set(self.brokers[b].metadata_cache.alive_brokers) == live for b in live)

    async def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1,
                           config: dict[str, str] | None = None, timeout_ms: int = 30000,
                           replica_assignment: dict[int, list[int]] | None = None) -> Any:
        """Create a topic through CreateTopics sent to the controller; waits for leaders.

        ``replica_assignment`` ({partition: [brokers]}) replaces partitions/replication_factor.
        """
        from kafka_ref.common.requests.create_topics import (
            CreatableReplicaAssignment,
            CreatableTopic,
            CreateableTopicConfig,
            CreateTopicsRequest,
        )

        self.require_controller("create_topic")
        configs = tuple(CreateableTopicConfig(name=k, value=str(v)) for k, v in (config or {}).items())
        if replica_assignment is not None:
            partitions = len(replica_assignment)
            topic = CreatableTopic(name=name, num_partitions=-1, replication_factor=-1, configs=configs, assignments=tuple(
                CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(r)) for p, r in sorted(replica_assignment.items())))
        else:
            topic = CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication_factor, configs=configs)
        request = CreateTopicsRequest(topics=(topic,), timeout_ms=timeout_ms)
        response = await self._send_to_controller(request, timeout_ms)
        result = response.topics[0]
        Errors.for_code(result.error_code).maybe_raise(result.error_message)
        await self.wait_until(lambda: all(self.leader_for(name, p) >= 0 for p in range(partitions)), timeout_ms)
        # Every live broker knows the partitions (the controller's UpdateMetadata reached it), so a
        # produce right after create_topic finds them.
        await self.wait_until(lambda: all(self.brokers[b].metadata_cache.contains(TopicPartition(name, p))
                                          for b in self.live_broker_ids() for p in range(partitions)),
                              timeout_ms, message=f"every live broker knows {name}")
        await self._wait_brokers_applied(timeout_ms, f"the creation of {name}")
        return result

    async def _send_to_controller(self, request: Any, timeout_ms: float) -> Any:
        """An admin request to the active controller (once there is one); its answer."""
        self.require_controller(type(request).__name__)
        await self.wait_until(lambda: self.controller_id() is not None)
        return await self.network.send("admin", self.controller_id(), request, timeout_ms + 1000)

    async def _wait_brokers_applied(self, timeout_ms: float, what: str) -> None:
        """KRaft mode: wait until every live broker has published what the controller committed."""
        if self.kraft is not None:
            await self.wait_until(lambda: self.kraft.caught_up(self.live_broker_ids()), timeout_ms,
                                  message=f"brokers applied {what}")

    # ------------------------------------------------------------------ playing the controller

    async def send(self, broker_id: int, request: Any, timeout_ms: float = 30000, principal: str = INTER_BROKER_PRINCIPAL) -> Any:
        """Deliver ``request`` to a broker as the controller (or as ``principal``) and return the answer."""
        return await self.network.send(CONTROLLER_NODE, broker_id, request, timeout_ms, principal)

    def live_broker_ids(self) -> list[int]:
        """Ids of the brokers whose process is running, sorted."""
        return sorted(b for b, broker in self.brokers.items() if broker.is_running)

    # ------------------------------------------------------------------ clients

    def producer(self, **kwargs: Any) -> Any:
        """A ``kafka_ref.clients.Producer`` bootstrapped from the live brokers (use ``async with``)."""
        from kafka_ref.clients import Producer

        return Producer(self.network, self.live_broker_ids(), **kwargs)

    def consumer(self, **kwargs: Any) -> Any:
        """A ``kafka_ref.clients.Consumer`` bootstrapped from the live brokers."""
        from kafka_ref.clients import Consumer

        return Consumer(self.network, self.live_broker_ids(), **kwargs)

    def admin(self, **kwargs: Any) -> Any:
        """A ``kafka_ref.clients.Admin`` bootstrapped from the live brokers."""
        from kafka_ref.clients import Admin

        return Admin(self.network, self.live_broker_ids(), **kwargs)

    async def wait_until(self, predicate: Callable[[], bool], timeout_ms: float = 30000, poll_ms: float = 10,
                         message: str = "condition") -> None:
        """Wait in loop time until ``predicate()`` holds; TimeoutError after ``timeout_ms``."""
        try:
            with anyio.fail_after(timeout_ms / 1000):
                while not predicate():
                    await anyio.sleep(poll_ms / 1000)
        except TimeoutError:
            raise TimeoutError(f"timed out after {timeout_ms} ms of loop time waiting for {message}") from None


def partition(topic: str, index: int) -> TopicPartition:
    return TopicPartition(topic, index)
