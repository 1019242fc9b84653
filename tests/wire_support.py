"""Shared pieces of the real-client tests: a wall-clock cluster with listeners, run from a thread.

Blocking clients (kafka-python, confluent-kafka) run in a worker thread; the test's async side
keeps the cluster's event loop running. From that thread, ``on_loop(fn, *args)`` runs a
synchronous Cluster call on the loop (kill a broker, look up a leader) and ``on_loop_async``
an async one (restart a broker).
"""

from __future__ import annotations

from typing import Any, Callable

import anyio
import anyio.from_thread

from kafka_ref.cluster import Cluster

# Short group timings so rebalances and failovers finish in seconds.
CLUSTER_CONFIG = {
    "group.initial.rebalance.delay.ms": 0,
    "group.min.session.timeout.ms": 1000,
    "offsets.topic.num.partitions": 3,
    # A killed broker is noticed in about a second (KRaft heartbeats, ZooKeeper sessions).
    "broker.heartbeat.interval.ms": 200,
    "broker.session.timeout.ms": 1500,
    "zookeeper.session.timeout.ms": 1500,
}


def on_loop(fn: Callable[..., Any], *args: Any) -> Any:
    return anyio.from_thread.run_sync(fn, *args)


def on_loop_async(fn: Callable[..., Any], *args: Any) -> Any:
    return anyio.from_thread.run(fn, *args)


async def run_with_cluster(client: Callable[[Cluster, str], Any], *, mode: str = "kraft", brokers: int = 3,
                           racks: dict[int, str] | None = None, config: dict[str, Any] | None = None) -> Any:
    """Start a wall-clock cluster with listeners and run ``client(cluster, bootstrap)`` in a thread."""
    async with Cluster(brokers=brokers, metadata_mode=mode, clock="wall", config={**CLUSTER_CONFIG, **(config or {})},
                       racks=racks) as cluster, cluster.serve() as bootstrap:
        with anyio.fail_after(90):
            return await anyio.to_thread.run_sync(client, cluster, bootstrap)


def kill_leader(cluster: Cluster, topic: str, partition: int = 0) -> int:
    """From the client thread: crash the partition's leader; returns its id."""
    leader = on_loop(cluster.leader_for, topic, partition)
    on_loop(cluster.kill_broker, leader)
    return leader


def wait_for_new_leader(cluster: Cluster, topic: str, old_leader: int, partition: int = 0) -> int:
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        leader = on_loop(cluster.leader_for, topic, partition)
        if leader not in (-1, old_leader):
            return leader
        time.sleep(0.05)
    raise AssertionError(f"no new leader for {topic}-{partition}")
