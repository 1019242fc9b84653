"""What ``Cluster(metadata_mode="kraft")`` adds: a controller node and KRaft brokers.

The controller is node ``KRAFT_CONTROLLER_ID`` (3000, a KRaft controller's usual node id range)
on the in-process network, running the QuorumController with a one-voter metadata log. Brokers
start with ``kraft_controller`` set, register with it, fetch the log and apply it. The views the
Cluster offers in every mode (``controller_id``, ``controller_epoch``, ``active_controller``,
``partition_state``, ``leader_for``) read the controller's state here instead of ZooKeeper.
"""

from __future__ import annotations

import random
from typing import Any

import anyio

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.time import Time
from kafka_ref.metadata.quorum_controller import QuorumController
from kafka_ref.network.network import serve_inbox

KRAFT_CONTROLLER_ID = 3000


class KRaftClusterSupport:
    """The KRaft half of kafka_ref.cluster.Cluster."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.controller_node = KRAFT_CONTROLLER_ID
        config = KafkaConfig({**cluster.base_config, "node.id": KRAFT_CONTROLLER_ID, "process.roles": "controller"})
        self.controller = QuorumController(KRAFT_CONTROLLER_ID, config, Time(), random.Random(cluster.rng.getrandbits(64)))

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Bring the controller node up: its request loop and its background tasks."""
        inbox = self.cluster.network.register(self.controller_node)
        tg.start_soon(serve_inbox, inbox, self.controller.handle, name="kraft-controller-requests")
        await tg.start(self.controller.run)

    def broker_kwargs(self) -> dict[str, Any]:
        node = self.controller_node
        return {"kraft_controller": node, "controller_node_provider": lambda: node}

    # -- views -------------------------------------------------------------------------------

    def controller_id(self) -> int:
        return self.controller_node

    def controller_epoch(self) -> int:
        """The Raft leader epoch of the metadata quorum (KRaft's controller epoch)."""
        return self.controller.raft_client.epoch

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        return self.controller.partition_state(topic, partition)

    def unfenced_brokers(self) -> set[int]:
        registrations = self.controller.cluster_control.broker_registrations
        return {b for b, r in registrations.items() if not r.fenced}

    def converged(self) -> bool:
        """Every running broker is unfenced at the controller and has applied everything committed."""
        live = set(self.cluster.live_broker_ids())
        return live <= self.unfenced_brokers() and self.caught_up(live)

    def caught_up(self, broker_ids: Any) -> bool:
        """Each broker has published the log up to the controller's last committed offset."""
        committed = self.controller.last_committed_offset
        for b in broker_ids:
            broker = self.cluster.brokers[b]
            support = broker.kraft
            if not broker.is_running or support is None or support.listener.image.highest_offset < committed:
                return False
        return True
