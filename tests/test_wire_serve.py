"""Listener life cycle and the ``kafka-ref serve`` shell server.

A killed broker's listener closes its connections and refuses new ones; the restarted broker
listens on the same port again (as a restarted Kafka process does on its configured port).
"""

from __future__ import annotations

import argparse

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.wire.shell import ClusterWatcher, add_serve_arguments, run_command, serve_main
from tests.wire_support import CLUSTER_CONFIG

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def _refused(host: str, port: int) -> bool:
    try:
        stream = await anyio.connect_tcp(host, port)
    except OSError:
        return True
    await stream.aclose()
    return False


async def test_kill_closes_listener_restart_reopens_same_port_and_watcher_reports():
    async with Cluster(brokers=3, metadata_mode="kraft", clock="wall", config=CLUSTER_CONFIG) as cluster, \
            cluster.serve() as bootstrap:
        await cluster.create_topic("t", 1, 3)
        lines: list[str] = []
        watcher = ClusterWatcher(cluster, lines.append)
        watcher.look()
        leader = cluster.leader_for("t", 0)
        assert lines == [f"t-0: leader {leader} epoch 0 isr [0, 1, 2]"]
        host, port = bootstrap.split(",")[leader].split(":")
        connection = await anyio.connect_tcp(host, int(port))
        # 1. kill: the open connection is closed by the broker side, new ones are refused.
        assert await run_command(cluster, watcher, f"kill {leader}") == f"killed broker {leader}"
        with anyio.fail_after(5):
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError)):
                await connection.receive()
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) not in (-1, leader), timeout_ms=10000)
        with anyio.fail_after(5):
            while not await _refused(host, int(port)):
                await anyio.sleep(0.05)
        watcher.look()
        new = cluster.leader_for("t", 0)
        assert f"broker {leader} down" in lines
        assert f"t-0: leader {leader} -> {new} (epoch 1)" in lines
        # 2. restart: the same port accepts again.
        assert await run_command(cluster, watcher, f"restart {leader}") == f"restarted broker {leader}"
        with anyio.fail_after(5):
            while await _refused(host, int(port)):
                await anyio.sleep(0.05)
        # 3. Bad commands answer with text and change nothing.
        assert (await run_command(cluster, watcher, "kill x")).startswith("bad arguments for kill")
        assert await run_command(cluster, watcher, "frobnicate") == "unknown command 'frobnicate'; try help"
        assert (await run_command(cluster, watcher, "isolate 2"), await run_command(cluster, watcher, "heal")) == (
            "isolated broker 2", "healed")


async def test_serve_main_creates_topics_and_prints_bootstrap():
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    args = parser.parse_args(["--brokers", "1", "--port", "0", "--topic", "orders:2:1", "--no-stdin"])
    out: list[str] = []
    seen: dict = {}

    async with anyio.create_task_group() as tg:
        def ready(cluster, bootstrap):
            seen["topics"] = {t: cluster.leader_for(t, p) for t in ("orders",) for p in range(2)}
            seen["bootstrap"] = bootstrap
            tg.cancel_scope.cancel()

        tg.start_soon(serve_main, args, out.append, ready)
    assert out[0] == f"bootstrap: {seen['bootstrap']}"
    assert seen["topics"] == {"orders": 0}
