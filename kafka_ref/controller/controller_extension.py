"""The hooks a KafkaController extension answers (see ``KafkaController.extensions``).

Kafka has no such class: its KafkaController calls the reassignment, deletion and election code
inline. Here those flows live in their own modules, and the controller calls these hooks at
the same points. Each hook does nothing unless a flow overrides it, because most flows have
nothing to do at most of these points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from kafka_ref.common.topic_partition import TopicPartition
    from kafka_ref.controller.controller_context import PartitionAndReplica


class ControllerExtension:
    """Base of the admin flows: the controller's call-out points, all optional."""

    def on_failover_init(self, c: Any) -> None:
        """After the controller context is built, before the state machines start (onControllerFailover)."""

    def on_failover_resume(self, c: Any) -> None:
        """After the state machines started: resume pending work (onControllerFailover's tail)."""

    def on_resignation(self, c: Any) -> None:
        """The controller resigns (onControllerResignation)."""

    def on_broker_startup(self, c: Any, new_brokers: list[int], replicas: list["PartitionAndReplica"]) -> None:
        """Brokers came up and their replicas went online (onBrokerStartup's tail)."""

    def on_replicas_for_deletion_offline(self, c: Any, replicas: list["PartitionAndReplica"]) -> None:
        """Replicas of topics queued for deletion went offline (onReplicasBecomeOffline)."""

    def on_alter_partition_applied(self, c: Any, partitions: Sequence["TopicPartition"]) -> None:
        """AlterPartition changed (or confirmed) these partitions' ISR (processAlterPartition's tail)."""
