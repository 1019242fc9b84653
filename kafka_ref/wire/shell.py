"""``kafka-ref serve``: a cluster on localhost for real clients, with a live log and fault commands.

    kafka-ref serve --brokers 3 [--mode zk|kraft] [--port 9092] [--topic NAME:PARTITIONS:RF ...]
                    [--admin-port PORT] [--no-stdin]

Prints the bootstrap string, then one line per change it sees (a broker going down or up, a
partition's leader or ISR changing, a topic appearing) and runs until Ctrl-C. Faults are typed
on stdin or sent, one command per line, to the admin socket (``--admin-port``; e.g.
``echo "kill 1" | nc 127.0.0.1 9999``):

    kill N          crash broker N (listener closes; its disk survives)
    restart N       start broker N again (same disk, same port)
    shutdown N      controlled shutdown of broker N (leadership moved away first)
    isolate N       cut every link of broker N (clients and brokers get no answers)
    heal [N]        undo isolation of N (all isolations and cut links without N)
    elect           preferred-leader election for every partition
    create NAME P RF    create a topic
    status          brokers, controller and every partition's leader/ISR
    help            this list
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

import anyio
from kafka_ref.common.fatal import RUN_ENDING

COMMANDS_HELP = __doc__[__doc__.index("    kill N"):].rstrip() if __doc__ else ""
POLL_S = 0.1


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--mode", choices=("zk", "kraft"), default="kraft", help="metadata mode (default: kraft)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9092,
                        help="broker b listens on PORT+b (default 9092; 0: ports chosen by the OS)")
    parser.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS:RF",
                        help="create a topic at start (repeatable)")
    parser.add_argument("--admin-port", type=int, default=None, help="also accept commands on this TCP port")
    parser.add_argument("--no-stdin", action="store_true", help="do not read commands from stdin")
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="broker config override")


def _parse_topic(spec: str) -> tuple[str, int, int]:
    try:
        name, partitions, rf = spec.rsplit(":", 2)
        return name, int(partitions), int(rf)
    except ValueError:
        raise SystemExit(f"--topic {spec!r}: expected NAME:PARTITIONS:RF") from None


class ClusterWatcher:
    """Prints what changed between two looks at the cluster (brokers, leaders, ISRs)."""

    def __init__(self, cluster: Any, emit: Callable[[str], None]) -> None:
        self.cluster = cluster
        self.emit = emit
        self.brokers: dict[int, bool] = {}
        self.partitions: dict[tuple[str, int], tuple[int, int, tuple[int, ...]]] = {}

    def topics(self) -> dict[str, int]:
        for broker_id in self.cluster.live_broker_ids():
            cache = self.cluster.brokers[broker_id].metadata_cache
            return {t: len(cache.get_topic_partitions(t)) for t in sorted(cache.get_all_topics())
                    if not t.startswith("__")}
        return {}

    def look(self) -> None:
        for broker_id, broker in sorted(self.cluster.brokers.items()):
            up = broker.is_running
            if self.brokers.get(broker_id) != up:
                if broker_id in self.brokers:
                    self.emit(f"broker {broker_id} {'up' if up else 'down'}")
                self.brokers[broker_id] = up
        for topic, count in self.topics().items():
            for p in range(count):
                state = self.cluster.partition_state(topic, p)
                if state is None:
                    continue
                now = (state["leader"], state["leader_epoch"], tuple(sorted(state["isr"])))
                before = self.partitions.get((topic, p))
                if before == now:
                    continue
                self.partitions[(topic, p)] = now
                if before is None:
                    self.emit(f"{topic}-{p}: leader {now[0]} epoch {now[1]} isr {list(now[2])}")
                    continue
                if before[0] != now[0] or before[1] != now[1]:
                    self.emit(f"{topic}-{p}: leader {before[0]} -> {now[0]} (epoch {now[1]})")
                if before[2] != now[2]:
                    self.emit(f"{topic}-{p}: isr {list(before[2])} -> {list(now[2])}")

    def status(self) -> str:
        lines = [f"brokers up: {self.cluster.live_broker_ids()}  controller: {self.cluster.controller_id()}"]
        for (topic, p), (leader, epoch, isr) in sorted(self.partitions.items()):
            lines.append(f"  {topic}-{p}: leader {leader} epoch {epoch} isr {list(isr)}")
        return "\n".join(lines)


async def run_command(cluster: Any, watcher: ClusterWatcher, line: str) -> str:
    """Run one admin command; returns the text to show (errors are text too, never raised)."""
    words = line.split()
    if not words:
        return ""
    cmd, args = words[0].lower(), words[1:]
    try:
        if cmd == "kill":
            cluster.kill_broker(int(args[0]))
            return f"killed broker {args[0]}"
        if cmd == "restart":
            await cluster.restart_broker(int(args[0]))
            return f"restarted broker {args[0]}"
        if cmd == "shutdown":
            result = await cluster.shutdown_broker(int(args[0]))
            ok = getattr(result, "succeeded", result)
            return f"broker {args[0]} shut down (controlled shutdown {'succeeded' if ok else 'did not complete'})"
        if cmd == "isolate":
            cluster.network.isolate(int(args[0]))
            return f"isolated broker {args[0]}"
        if cmd == "heal":
            if args:
                cluster.network.heal_node(int(args[0]))
            else:
                cluster.network.heal_all()
            return "healed"
        if cmd == "elect":
            await cluster.elect_preferred_leaders()
            return "preferred leader election requested"
        if cmd == "create":
            await cluster.create_topic(args[0], int(args[1]), int(args[2]))
            return f"created topic {args[0]}"
        if cmd == "status":
            watcher.look()
            return watcher.status()
        if cmd == "help":
            return COMMANDS_HELP
        return f"unknown command {cmd!r}; try help"
    except (IndexError, ValueError) as exc:
        return f"bad arguments for {cmd}: {exc}"
    except RUN_ENDING:
        raise
    except Exception as exc:  # a fault command must never stop the server
        return f"{cmd} failed: {type(exc).__name__}: {exc}"


async def _admin_socket(cluster: Any, watcher: ClusterWatcher, host: str, port: int) -> None:
    from anyio.streams.buffered import BufferedByteReceiveStream

    async def client(stream: Any) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            try:
                while True:
                    line = (await reader.receive_until(b"\n", 4096)).decode(errors="replace")
                    await stream.send((await run_command(cluster, watcher, line) + "\n").encode())
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.DelimiterNotFound):
                return

    listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
    await listener.serve(client)


async def serve_main(args: argparse.Namespace, out: Callable[[str], None] = print,
                     ready: Callable[[Any, str], None] | None = None) -> None:
    from kafka_ref.cluster import Cluster

    config: dict[str, Any] = {"group.initial.rebalance.delay.ms": 0}
    for item in args.config:
        key, _, value = item.partition("=")
        config[key] = value
    topics = [_parse_topic(t) for t in args.topic]
    async with Cluster(brokers=args.brokers, metadata_mode=args.mode, clock="wall", config=config) as cluster, \
            cluster.serve(args.host, args.port) as bootstrap:
        for name, partitions, rf in topics:
            await cluster.create_topic(name, partitions, rf)
        out(f"bootstrap: {bootstrap}")
        out(f"{args.brokers} brokers ({args.mode} mode); commands on stdin"
            + (f" and on {args.host}:{args.admin_port}" if args.admin_port else "") + "; Ctrl-C stops")
        watcher = ClusterWatcher(cluster, out)
        if ready is not None:
            ready(cluster, bootstrap)
        async with anyio.create_task_group() as tg:
            if args.admin_port:
                tg.start_soon(_admin_socket, cluster, watcher, args.host, args.admin_port)
            if not args.no_stdin:
                tg.start_soon(_read_stdin, cluster, watcher, out)
            while True:
                watcher.look()
                await anyio.sleep(POLL_S)


async def _read_stdin(cluster: Any, watcher: ClusterWatcher, out: Callable[[str], None]) -> None:
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            return  # stdin closed: keep serving
        reply = await run_command(cluster, watcher, line)
        if reply:
            out(reply)


def run_serve_command(args: argparse.Namespace) -> int:
    try:
        anyio.run(serve_main, args, lambda text: print(text, flush=True), backend="asyncio")
    except KeyboardInterrupt:
        print("stopped", flush=True)
    return 0
