"""kafka_ref: an executable, annotated specification of Apache Kafka's broker internals.

The names a test needs every day are importable from here::

    from kafka_ref import Cluster, TopicPartition, Errors, run_in_virtual_time

``import kafka_ref`` stays light: each name is imported from its module on first use
(PEP 562 ``__getattr__``), so importing the package loads no broker, controller or client code.

Public names: ``Cluster``, ``NoControllerError``, ``TopicPartition``, ``Errors``, ``Uuid``,
``run_in_virtual_time``, ``VirtualTimeEventLoop``, ``Time``; the values tests read back
(``ReplicaStateView``, ``RemoteReplicaView``, ``ProduceResult``, ``FetchResult``,
``FetchedRecord``, ``ControlledShutdownResult``); the controller's messages a manual test
builds (``LeaderAndIsrPartitionState``, ``UpdateMetadataPartitionState``); and the in-process
clients (``Producer``, ``Consumer``, ``Admin``), also reachable as ``cluster.producer()``,
``cluster.consumer()``, ``cluster.admin()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Cluster": "kafka_ref.cluster",
    "NoControllerError": "kafka_ref.cluster_views",
    "ReplicaStateView": "kafka_ref.cluster_views",
    "RemoteReplicaView": "kafka_ref.cluster_views",
    "ProduceResult": "kafka_ref.cluster_ops",
    "FetchResult": "kafka_ref.cluster_ops",
    "FetchedRecord": "kafka_ref.cluster_ops",
    "ControlledShutdownResult": "kafka_ref.cluster_ops",
    "TopicPartition": "kafka_ref.common.topic_partition",
    "Errors": "kafka_ref.common.errors",
    "Uuid": "kafka_ref.common.uuid",
    "Time": "kafka_ref.common.time",
    "LeaderAndIsrPartitionState": "kafka_ref.common.requests.leader_and_isr",
    "UpdateMetadataPartitionState": "kafka_ref.common.requests.update_metadata",
    "run_in_virtual_time": "kafka_ref.testing.virtual_time_loop",
    "VirtualTimeEventLoop": "kafka_ref.testing.virtual_time_loop",
    "Producer": "kafka_ref.clients",
    "Consumer": "kafka_ref.clients",
    "Admin": "kafka_ref.clients",
    "tune_gc": "kafka_ref.common.gc_tuning",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_ref' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from kafka_ref.clients import Admin, Consumer, Producer
    from kafka_ref.cluster import Cluster
    from kafka_ref.cluster_ops import ControlledShutdownResult, FetchedRecord, FetchResult, ProduceResult
    from kafka_ref.cluster_views import NoControllerError, RemoteReplicaView, ReplicaStateView
    from kafka_ref.common.errors import Errors
    from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
    from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
    from kafka_ref.common.time import Time
    from kafka_ref.common.topic_partition import TopicPartition
    from kafka_ref.common.uuid import Uuid
    from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop, run_in_virtual_time
