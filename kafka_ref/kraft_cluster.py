"""What ``Cluster(metadata_mode="kraft")`` adds: a controller node and KRaft brokers.

The controller is node ``KRAFT_CONTROLLER_ID`` (3000, a KRaft controller's usual node id range)
on the in-process network, running the QuorumController with a one-voter metadata log. Brokers
start with ``kraft_controller`` set, register with it, fetch the log and apply it. The views the
Cluster offers in every mode (``controller_id``, ``controller_epoch``, ``active_controller``,
``partition_state``, ``leader_for``) read the controller's state here instead of ZooKeeper.

The controller node can be killed and restarted (``kill_controller`` / ``restart_controller``).
Its ``__cluster_metadata`` log is its disk and survives; the new process rebuilds its state by
replaying that log as a standby, then wins the election of the one-voter quorum in the next
epoch and becomes active (QuorumController's failover, with one voter). While it is down,
brokers keep serving with the metadata they have; their heartbeats, metadata fetches and
AlterPartition requests fail and are retried.
"""

from __future__ import annotations

import random
from typing import Any

import anyio

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.time import Time
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient
from kafka_ref.raft.replicated_log import MetadataLog
from kafka_ref.controller.quorum.quorum_controller import QuorumController
from kafka_ref.network.network import serve_inbox

KRAFT_CONTROLLER_ID = 3000


class KRaftClusterSupport:
    """The KRaft half of kafka_ref.cluster.Cluster."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.controller_node = KRAFT_CONTROLLER_ID
        self.config = KafkaConfig({**cluster.base_config, "node.id": KRAFT_CONTROLLER_ID, "process.roles": "controller"})
        self.time = Time()
        # The controller node's disk: what a restarted controller process finds again.
        self.metadata_log = MetadataLog()
        self.controller = self._new_controller(epoch=1)
        self.is_running = False
        self._scope: anyio.CancelScope | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._log = state_change_logger(controller_id=KRAFT_CONTROLLER_ID)

    def _new_controller(self, epoch: int) -> QuorumController:
        """A controller process over the surviving log, leading the one-voter quorum in ``epoch``."""
        raft_client = KafkaRaftClient(self.controller_node, self.time, log=self.metadata_log, epoch=epoch)
        rng = random.Random(self.cluster.rng.getrandbits(64))
        return QuorumController(self.controller_node, self.config, self.time, rng, raft_client=raft_client)

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Bring the controller node up: its request loop and its background tasks."""
        self._task_group = tg
        await tg.start(self._run_node, name="kraft-controller-node")

    async def _run_node(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        """One controller process: the inbox loop and the controller's tasks, cancelled together on a kill."""
        with anyio.CancelScope() as scope:
            self._scope = scope
            inbox = self.cluster.network.register(self.controller_node)
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_inbox, inbox, self.controller.handle, name="kraft-controller-requests")
                await tg.start(self.controller.run)
                self.is_running = True
                task_status.started()

    def kill_controller(self) -> None:
        """The controller process dies: its inbox closes, requests in flight to it fail, its
        memory state is gone. The metadata log (its disk) stays for the next process."""
        if not self.is_running:
            return
        self.is_running = False
        self.cluster.network.unregister(self.controller_node)
        if self._scope is not None:
            self._scope.cancel()
        self._log.info("controller_killed", epoch=self.controller_epoch(), log_end_offset=self.metadata_log.end_offset)

    async def restart_controller(self) -> None:
        """A new controller process on the same log: it replays the log, then leads in the next epoch.

        With one voter the restarted node becomes candidate in epoch + 1, votes for itself and
        wins (KafkaRaftClient's election); its QuorumController replays every committed batch as
        a standby and claims leadership once caught up. Broker sessions start afresh at the
        claim, so no broker is fenced just because the controller was away.
        """
        if self.is_running:
            return
        assert self._task_group is not None, "restart_controller before start"
        self.controller = self._new_controller(epoch=self.controller.raft_client.epoch + 1)
        # Shielded: a caller cancelled mid-start must not leave a registered inbox nobody serves.
        with anyio.CancelScope(shield=True):
            await self._task_group.start(self._run_node, name="kraft-controller-node")
        self._log.info("controller_restarted", epoch=self.controller_epoch(), log_end_offset=self.metadata_log.end_offset)

    def broker_kwargs(self) -> dict[str, Any]:
        node = self.controller_node
        return {"kraft_controller": node, "controller_node_provider": lambda: node}

    # -- views -------------------------------------------------------------------------------

    def controller_id(self) -> int:
        return self.controller_node

    def controller_epoch(self) -> int:
        """The Raft leader epoch of the metadata quorum (KRaft's controller epoch)."""
        return self.controller.raft_client.epoch

    def metadata_version(self) -> int:
        """The metadata log's end offset: changes whenever the controller wrote anything."""
        return self.metadata_log.end_offset

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The partition's registration (while the controller is down: as its last process left it,
        which with one voter is exactly what the log says)."""
        return self.controller.partition_state(topic, partition)

    def unfenced_brokers(self) -> set[int]:
        registrations = self.controller.cluster_control.broker_registrations
        return {b for b, r in registrations.items() if not r.fenced}

    def converged(self) -> bool:
        """The controller is up, and every running broker is unfenced there and has applied everything committed."""
        live = set(self.cluster.live_broker_ids())
        return self.is_running and live <= self.unfenced_brokers() and self.caught_up(live)

    def caught_up(self, broker_ids: Any) -> bool:
        """Each broker has published the log up to the controller's last committed offset."""
        committed = self.controller.last_committed_offset
        for b in broker_ids:
            broker = self.cluster.brokers[b]
            support = broker.kraft
            if not broker.is_running or support is None or support.listener.image.highest_offset < committed:
                return False
        return True
