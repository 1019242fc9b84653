"""What ``Cluster(metadata_mode="kraft", controllers=N)`` adds: a controller quorum and KRaft brokers.

The controllers are nodes ``KRAFT_CONTROLLER_ID`` (3000), 3001, ... on the in-process network:
each runs a KafkaRaftClient as a voter of the ``__cluster_metadata`` quorum and a
QuorumController, active on the Raft leader and a standby (replaying committed records)
elsewhere. With one controller (the default) the lone voter elects itself at once. Brokers are
observers of the quorum: they fetch the log from the leader, learn the active controller from
it, register and heartbeat there, and apply what is committed. The views every mode offers
(``controller_id``, ``controller_epoch``, ``active_controller``, ``partition_state``,
``leader_for``) read the active controller here instead of ZooKeeper.

A controller node can be killed and restarted (``kill_controller`` / ``restart_controller``).
Its disk (the metadata log and the ``quorum-state`` election record) survives; a restarted
process replays the committed part of its log as a standby and rejoins the quorum in the state
it left (a former leader comes back Resigned and never leads the same epoch twice). While no
controller is active, brokers keep serving with the metadata they have; their heartbeats,
metadata fetches and AlterPartition requests fail and are retried.
"""

from __future__ import annotations

import random
from typing import Any

import anyio

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.controller.quorum.quorum_controller import CLUSTER_ID, QuorumController
from kafka_ref.network.network import serve_inbox
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient
from kafka_ref.raft.network_channel import KafkaNetworkChannel
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumStateStore
from kafka_ref.raft.replicated_log import MetadataLog

KRAFT_CONTROLLER_ID = 3000


class ControllerNode:
    """One controller node: its disk (log, quorum-state) and its current process, if any."""

    def __init__(self, support: "KRaftClusterSupport", node_id: int) -> None:
        self.support = support
        self.node_id = node_id
        self.metadata_log = MetadataLog()
        self.quorum_store = QuorumStateStore()
        self.controller: QuorumController | None = None
        self.is_running = False
        self.incarnation = 0
        self._scope: anyio.CancelScope | None = None

    @property
    def raft_client(self) -> KafkaRaftClient | None:
        return self.controller.raft_client if self.controller is not None else None

    def new_process(self) -> QuorumController:
        """A controller process over the surviving disk: its Raft client restores the quorum state."""
        support = self.support
        seed = support.cluster.rng.getrandbits(64)
        channel = KafkaNetworkChannel(support.cluster.network, self.node_id, support.quorum_config.request_timeout_ms)
        raft_client = KafkaRaftClient(self.node_id, support.voters, support.time, log=self.metadata_log,
                                      store=self.quorum_store, channel=channel, rng=random.Random(seed + 1),
                                      config=support.quorum_config, cluster_id=CLUSTER_ID)
        config = KafkaConfig({**support.cluster.base_config, "node.id": self.node_id, "process.roles": "controller"})
        self.incarnation += 1
        self.controller = QuorumController(self.node_id, config, support.time, random.Random(seed), raft_client=raft_client)
        return self.controller

    async def run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        """One controller process: inbox, Raft poll loop and controller tasks, cancelled together on a kill."""
        controller = self.controller
        assert controller is not None
        with anyio.CancelScope() as scope:
            self._scope = scope
            inbox = self.support.cluster.network.register(self.node_id)
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_inbox, inbox, controller.handle, name=f"kraft-controller-{self.node_id}-requests")
                await tg.start(controller.raft_client.run, name=f"kraft-controller-{self.node_id}-raft")
                await tg.start(controller.run)
                self.is_running = True
                task_status.started()

    def kill(self) -> None:
        """The process dies: inbox closed, requests in flight fail, memory gone; the disk stays."""
        self.is_running = False
        self.support.cluster.network.unregister(self.node_id)
        if self._scope is not None:
            self._scope.cancel()


class KRaftClusterSupport:
    """The KRaft half of kafka_ref.cluster.Cluster."""

    def __init__(self, cluster: Any, controllers: int = 1) -> None:
        if isinstance(controllers, bool) or not isinstance(controllers, int) or controllers < 1:
            raise ValueError(f"controllers must be a whole number of at least 1, got {controllers!r}")
        self.cluster = cluster
        self.voters = tuple(KRAFT_CONTROLLER_ID + i for i in range(controllers))
        self.controller_node = self.voters[0]
        self.time = Time()
        base = KafkaConfig({**cluster.base_config, "node.id": self.controller_node, "process.roles": "controller"})
        self.config = base
        self.quorum_config = QuorumConfig.from_kafka_config(base, self.voters)
        self.nodes = {v: ControllerNode(self, v) for v in self.voters}
        for node in self.nodes.values():
            node.new_process()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._killed: list[int] = []

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Bring every controller node up."""
        self._task_group = tg
        for node in self.nodes.values():
            await tg.start(node.run, name=f"kraft-controller-node-{node.node_id}")

    # -- faults ------------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """Some controller process is up."""
        return any(n.is_running for n in self.nodes.values())

    def active_node(self) -> ControllerNode | None:
        """The running node whose QuorumController is active."""
        for node in self.nodes.values():
            if node.is_running and node.controller is not None and node.controller.is_active:
                return node
        return None

    def kill_controller(self, node_id: int | None = None) -> None:
        """Kill a controller process (the active one when ``node_id`` is None); its disk stays."""
        node = self.nodes[node_id] if node_id is not None else (self.active_node() or self._any_running())
        if node is None or not node.is_running:
            return
        epoch = node.raft_client.epoch if node.raft_client is not None else -1
        node.kill()
        self._killed.append(node.node_id)
        state_change_logger(controller_id=node.node_id).info("controller_killed", epoch=epoch,
                                                             log_end_offset=node.metadata_log.end_offset)

    def _any_running(self) -> ControllerNode | None:
        return next((n for n in self.nodes.values() if n.is_running), None)

    async def restart_controller(self, node_id: int | None = None) -> None:
        """A new process on a killed node's disk (the last killed when ``node_id`` is None).

        The Raft client restores its quorum state from the store; the QuorumController replays
        the committed log as a standby. With one voter it then leads the next epoch at once.
        """
        if node_id is None:
            node_id = next((n for n in reversed(self._killed) if not self.nodes[n].is_running), None)
            if node_id is None:
                return
        node = self.nodes[node_id]
        if node.is_running:
            return
        assert self._task_group is not None, "restart_controller before start"
        if node_id in self._killed:
            self._killed.remove(node_id)
        node.new_process()
        # Shielded: a caller cancelled mid-start must not leave a registered inbox nobody serves.
        with anyio.CancelScope(shield=True):
            await self._task_group.start(node.run, name=f"kraft-controller-node-{node_id}")
        state_change_logger(controller_id=node_id).info("controller_restarted", epoch=node.raft_client.epoch,
                                                        log_end_offset=node.metadata_log.end_offset)

    def broker_kwargs(self) -> dict[str, Any]:
        """Brokers know the voters; the active controller is the Raft leader their observer learns."""
        return {"kraft_controller": self.voters}

    # -- views -------------------------------------------------------------------------------

    @property
    def controller(self) -> QuorumController:
        """The active QuorumController; while none is active, the controller that has committed the most."""
        active = self.active_node()
        if active is not None:
            assert active.controller is not None
            return active.controller
        candidates = [n for n in self.nodes.values() if n.controller is not None]
        best = max(candidates, key=lambda n: (n.is_running, n.controller.last_committed_offset, -n.node_id))
        assert best.controller is not None
        return best.controller

    @property
    def metadata_log(self) -> MetadataLog:
        """The log of the controller the views read (the active one when there is one)."""
        return self.controller.raft_client.log

    def controller_id(self) -> int | None:
        """The active controller's node id; None while no controller is active (no quorum, or mid-election)."""
        active = self.active_node()
        return active.node_id if active is not None else None

    def controller_epoch(self) -> int:
        """The Raft leader epoch of the metadata quorum (KRaft's controller epoch): the highest any node reached."""
        return max(n.raft_client.epoch for n in self.nodes.values() if n.raft_client is not None)

    def metadata_version(self) -> int:
        """The metadata log's end offset: changes whenever the controller wrote anything."""
        return self.metadata_log.end_offset

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The partition's registration at the active controller (while none is active: as the most
        caught-up controller knows it)."""
        return self.controller.partition_state(topic, partition)

    def unfenced_brokers(self) -> set[int]:
        registrations = self.controller.cluster_control.broker_registrations
        return {b for b, r in registrations.items() if not r.fenced}

    def converged(self) -> bool:
        """A controller is active, and every running broker is unfenced there and has applied everything committed."""
        live = set(self.cluster.live_broker_ids())
        return self.active_node() is not None and live <= self.unfenced_brokers() and self.caught_up(live)

    def caught_up(self, broker_ids: Any) -> bool:
        """Each broker has published the log up to the controller's last committed offset."""
        committed = self.controller.last_committed_offset
        for b in broker_ids:
            broker = self.cluster.brokers[b]
            support = broker.kraft
            if not broker.is_running or support is None or support.listener.image.highest_offset < committed:
                return False
        return True
