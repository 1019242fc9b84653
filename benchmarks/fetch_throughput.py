"""Fetch throughput of kafka_ref: one configuration in an in-process cluster, measured.

``run_config(config) -> dict`` starts a cluster (``metadata_mode="manual"``: this runner plays
the controller and sends UpdateMetadata / LeaderAndIsr itself; or ``"zk"``: the cluster's own
controller creates the topic), pre-builds every producer's batches, warms up, then times
producers that send ProduceRequests to the partition leaders while the followers' fetchers
replicate. The timed section ends when every produce is acknowledged and every follower of
every active partition has caught up to the leader's high watermark.

Wall-clock rates use ``time.perf_counter``; loop-time figures use ``anyio.current_time()``
(real under ``clock="wall"``, virtual under ``clock="virtual"``, where time only moves when
every task waits). See ``benchmarks/README`` section of the project README for the metrics.

Command line: ``python -m benchmarks.fetch_throughput partitions=100 acks=all --limit --profile``.
"""

from __future__ import annotations

import random
import sys
import time
import traceback
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel

from benchmarks.workload import (
    error_text,
    config_columns,
    TOPIC,
    Plan,
    Send,
    assignment,
    broker_config,
    build_plan,
    cycle_sends,
    environment,
    normalize_config,
    peak_rss_mb,
    percentile,
    quiet_logging,
    run_async,
)
from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.gc_tuning import tune_gc
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, Network

POLL_S = 0.0005  # loop-time interval of the caught-up check


class BenchmarkError(RuntimeError):
    """A configuration that did not complete (an error response, a timeout)."""


# --------------------------------------------------------------------------------------------
# Cluster set-up
# --------------------------------------------------------------------------------------------


async def _create_topic_manual(cluster: Cluster, c: dict[str, Any], replicas: dict[int, list[int]]) -> None:
    """Play the controller: UpdateMetadata to every broker, then each broker's LeaderAndIsr."""
    topic_id = Uuid.random_uuid(random.Random(c["seed"]))
    ids = {TOPIC: topic_id}
    await cluster.update_metadata([
        UpdateMetadataPartitionState(topic_name=TOPIC, partition_index=p, controller_epoch=1, leader=r[0],
                                     leader_epoch=0, isr=tuple(r), zk_version=0, replicas=tuple(r))
        for p, r in replicas.items()
    ], ids)
    for broker in range(c["brokers"]):
        states = [
            LeaderAndIsrPartitionState(topic_name=TOPIC, partition_index=p, controller_epoch=1, leader=r[0],
                                       leader_epoch=0, isr=tuple(r), partition_epoch=0, replicas=tuple(r), is_new=True)
            for p, r in replicas.items() if broker in r
        ]
        if not states:
            continue
        response = await cluster.send(broker, cluster.leader_and_isr_request(states, ids), timeout_ms=120_000)
        errors = {code for t in response.topics for pe in t.partition_errors for code in (pe.error_code,) if code}
        if response.error_code or errors:
            raise BenchmarkError(f"LeaderAndIsr to broker {broker} failed: {response}")


async def _create_topic_zk(cluster: Cluster, c: dict[str, Any], replicas: dict[int, list[int]]) -> None:
    """Let the cluster's controller create the topic with our assignment and wait for full ISRs."""
    await cluster.create_topic(TOPIC, replica_assignment=replicas, timeout_ms=120_000)
    await cluster.wait_until(
        lambda: all(len((cluster.partition_state(TOPIC, p) or {"isr": ()})["isr"]) == len(r) for p, r in replicas.items()),
        timeout_ms=120_000, message="every partition with its full ISR")


def count_isr_shrinks(cluster: Any) -> int:
    """ISR shrinks so far: Kafka's ReplicaManager isrShrinkRate meter, which each Partition marks
    when its ISR loses a member (here ``Partition.isr_shrink_count``), summed over the brokers."""
    return sum(p.isr_shrink_count for b in cluster.brokers.values() if b.is_running
               for p in b.replica_manager.online_partitions())


class ClusterView:
    """Where each active partition's leader and follower logs are, and the fetcher counters."""

    def __init__(self, cluster: Cluster, c: dict[str, Any], replicas: dict[int, list[int]]) -> None:
        self.cluster = cluster
        self.leaders: dict[int, int] = {}
        self.leader_logs: dict[int, Any] = {}
        self.follower_logs: dict[int, list[Any]] = {}
        for p in range(c["active_partitions"]):
            tp = TopicPartition(TOPIC, p)
            owners = [b for b in replicas[p] if cluster.broker(b).replica_manager.online_partition(tp) is not None]
            partitions = {b: cluster.broker(b).replica_manager.online_partition(tp) for b in owners}
            leader = next(b for b, part in partitions.items() if part.is_leader)
            self.leaders[p] = leader
            self.leader_logs[p] = partitions[leader].log
            self.follower_logs[p] = [partitions[b].log for b in owners if b != leader]

    def fetchers(self) -> list[Any]:
        return [f for b in self.cluster.brokers.values()
                for f in b.replica_manager.replica_fetcher_manager.fetcher_thread_map.values()]

    def fetch_requests(self) -> int:
        return sum(f.fetcher_stats.request_rate.count for f in self.fetchers())

    def isr_shrinks(self) -> int:
        return count_isr_shrinks(self.cluster)

    def caught_up(self, p: int) -> bool:
        leader_log = self.leader_logs[p]
        leo = leader_log.log_end_offset
        if leader_log.high_watermark != leo:
            return False
        return all(f.log_end_offset >= leo for f in self.follower_logs[p])

    async def wait_caught_up(self, deadline: float) -> None:
        """Poll (in loop time) until every active partition is fully replicated."""
        pending = [p for p in self.leader_logs if not self.caught_up(p)]
        while pending:
            if time.perf_counter() > deadline:
                raise BenchmarkError(f"followers of {len(pending)} partitions not caught up before the wall-clock timeout")
            await anyio.sleep(POLL_S)
            pending = [p for p in pending if not self.caught_up(p)]


# --------------------------------------------------------------------------------------------
# Producers
# --------------------------------------------------------------------------------------------


class ProduceStats:
    """What the producers saw: latencies, HW lag samples, and what they sent."""

    def __init__(self) -> None:
        self.latency_loop_ms: list[float] = []
        self.latency_wall_ms: list[float] = []
        self.hw_lag: list[int] = []
        self.records = 0
        self.batches = 0
        self.bytes = 0


def _check(response: Any) -> None:
    for topic in response.responses:
        for p in topic.partition_responses:
            if p.error_code:
                raise BenchmarkError(f"produce to {topic.name}-{p.index} failed: {Errors.for_code(p.error_code).name} "
                                     f"{p.error_message or ''}")


async def _producer(index: int, network: Network, view: ClusterView, sends: list[Send], c: dict[str, Any],
                    stats: ProduceStats | None, deadline: float | None) -> None:
    """Send pre-built requests to the leaders with up to ``max_in_flight`` unanswered."""
    client = f"producer-{index}"
    acks = c["acks"]
    window = c["max_in_flight"]
    inflight: deque[tuple[Any, Send, float, float]] = deque()
    leader_logs = view.leader_logs
    post, wait = network.post, network.wait
    now, wall = anyio.current_time, time.perf_counter

    async def complete() -> None:
        envelope, send, t_loop, t_wall = inflight.popleft()
        response = await wait(envelope, 60_000)
        _check(response)
        if stats is not None:
            stats.latency_loop_ms.append((now() - t_loop) * 1000.0)
            stats.latency_wall_ms.append((wall() - t_wall) * 1000.0)
            log = leader_logs[send.partitions[0]]
            stats.hw_lag.append(log.log_end_offset - log.high_watermark)

    def count(send: Send) -> None:
        if stats is not None:
            stats.records += send.record_count
            stats.batches += len(send.partitions)
            stats.bytes += send.size_in_bytes

    if deadline is None:
        for send in sends:
            if acks != 0 and len(inflight) >= window:
                await complete()
            envelope = post(client, send.leader, send.request, ANONYMOUS_PRINCIPAL)
            count(send)
            if acks != 0:
                inflight.append((envelope, send, now(), wall()))
            else:
                await anyio.lowlevel.checkpoint()
    else:
        i = 0
        while wall() < deadline:
            send = sends[i % len(sends)]
            i += 1
            if acks != 0 and len(inflight) >= window:
                await complete()
            envelope = post(client, send.leader, send.request, ANONYMOUS_PRINCIPAL)
            count(send)
            if acks != 0:
                inflight.append((envelope, send, now(), wall()))
            else:
                await anyio.lowlevel.checkpoint()
    while inflight:
        await complete()


async def _produce(cluster: Cluster, view: ClusterView, per_producer: list[list[Send]], c: dict[str, Any],
                   stats: ProduceStats | None, deadline: float | None = None) -> None:
    async with anyio.create_task_group() as tg:
        for i, sends in enumerate(per_producer):
            if sends:
                tg.start_soon(_producer, i, cluster.network, view, sends, c, stats, deadline)


# --------------------------------------------------------------------------------------------
# One configuration
# --------------------------------------------------------------------------------------------


def _metrics(c: dict[str, Any], stats: ProduceStats, wall_s: float, loop_s: float, cpu_s: float,
             fetch_requests: int, isr_shrinks: int) -> dict[str, Any]:
    copies = c["replication_factor"] - 1
    wall_s = max(wall_s, 1e-9)
    replicated_batches = stats.batches * copies
    replicated_bytes = stats.bytes * copies
    latency_label = "all" if c["acks"] == -1 else str(c["acks"])
    return {
        "records": stats.records,
        "batches": stats.batches,
        "bytes": stats.bytes,
        "wall_s": wall_s,
        "loop_s": loop_s,
        "sim_per_wall": loop_s / wall_s,
        "records_per_s": stats.records / wall_s,
        "batches_per_s": stats.batches / wall_s,
        "mb_per_s": stats.bytes / wall_s / 1e6,
        "follower_records_per_s": stats.records * copies / wall_s,
        "fetch_requests": fetch_requests,
        "fetch_requests_per_s": fetch_requests / wall_s,
        "batches_per_fetch": replicated_batches / fetch_requests if fetch_requests else 0.0,
        "bytes_per_fetch": replicated_bytes / fetch_requests if fetch_requests else 0.0,
        "produce_acks": latency_label,
        "produce_p50_loop_ms": percentile(stats.latency_loop_ms, 0.50),
        "produce_p99_loop_ms": percentile(stats.latency_loop_ms, 0.99),
        "produce_p50_wall_ms": percentile(stats.latency_wall_ms, 0.50),
        "produce_p99_wall_ms": percentile(stats.latency_wall_ms, 0.99),
        "hw_lag_mean": sum(stats.hw_lag) / len(stats.hw_lag) if stats.hw_lag else 0.0,
        "hw_lag_max": max(stats.hw_lag, default=0),
        "isr_shrinks": isr_shrinks,
        "cpu_s": cpu_s,
        # Per CPU second of this process: steadier than wall rates on a shared machine.
        "records_per_cpu_s": stats.records / max(cpu_s, 1e-9),
        "fetch_requests_per_cpu_s": fetch_requests / max(cpu_s, 1e-9),
        "peak_rss_mb": peak_rss_mb(),
    }


async def _run(c: dict[str, Any], plan: Plan, out: dict[str, Any], profiler: Any = None) -> None:
    quiet_logging()
    deadline = time.perf_counter() + c["timeout_s"]
    replicas = assignment(c)
    async with Cluster(brokers=c["brokers"], metadata_mode=c["metadata_mode"], config=broker_config(c), seed=c["seed"]) as cluster:
        # A stuck configuration fails after timeout_s of loop time (wall time under clock="wall";
        # under a virtual clock time only moves when every task waits, so a hang gets there fast).
        with anyio.fail_after(c["timeout_s"]):
            await _run_cluster(c, plan, out, profiler, deadline, replicas, cluster)


async def _run_cluster(c: dict[str, Any], plan: Plan, out: dict[str, Any], profiler: Any, deadline: float,
                       replicas: dict[int, list[int]], cluster: Cluster) -> None:
    # 1. The topic, with leaders and followers in place.
    setup0 = time.perf_counter()
    if c["metadata_mode"] == "manual":
        await _create_topic_manual(cluster, c, replicas)
    else:
        await _create_topic_zk(cluster, c, replicas)
    view = ClusterView(cluster, c, replicas)
    moved = {p: b for p, b in view.leaders.items() if b != replicas[p][0]}
    if moved:
        raise BenchmarkError(f"leaders are not the preferred replicas (requests are packed per leader): {moved}")
    out["setup_s"] = time.perf_counter() - setup0
    # 2. Warm up: produce and replicate fully before anything is timed.
    warm0 = time.perf_counter()
    await _produce(cluster, view, plan.warmup, c, None)
    await view.wait_caught_up(deadline)
    out["warmup_s"] = time.perf_counter() - warm0
    # 3. The timed section.
    stats = ProduceStats()
    fetch0, shrink0 = view.fetch_requests(), view.isr_shrinks()
    if profiler is not None:
        profiler.enable()
    cpu0, loop0, wall0 = time.process_time(), anyio.current_time(), time.perf_counter()
    produce_deadline = None if c["duration_s"] is None else wall0 + float(c["duration_s"])
    if produce_deadline is None:
        await _produce(cluster, view, plan.timed, c, stats)
    else:
        cycles = [cycle_sends(plan, i) for i in range(c["producers"])]
        await _produce(cluster, view, cycles, c, stats, produce_deadline)
    await view.wait_caught_up(deadline)
    wall1, loop1, cpu1 = time.perf_counter(), anyio.current_time(), time.process_time()
    if profiler is not None:
        profiler.disable()
    out.update(_metrics(c, stats, wall1 - wall0, loop1 - loop0, cpu1 - cpu0,
                        view.fetch_requests() - fetch0, view.isr_shrinks() - shrink0))
    cluster.network.heal_all()


def run_config(config: dict[str, Any] | None = None, profiler: Any = None) -> dict[str, Any]:
    """Run one configuration and return its metrics, the configuration and the environment.

    Never raises for a configuration that fails at run time: the result carries ``error``
    (the exception's text) and ``ok=False`` instead, so a sweep goes on. A bad key or value
    (``BenchmarkConfigError``) is raised at once.
    """
    tune_gc()  # kafka_ref's collector setting for its own processes (kafka_ref/common/gc_tuning.py)
    c = normalize_config(config)
    result: dict[str, Any] = {"runner": "kafka_ref", **config_columns(c), **environment(c)}
    out: dict[str, Any] = {}
    try:
        timed_records = None
        if c["duration_s"] is not None:
            # Duration mode cycles a ring of batches: enough for every producer and partition.
            timed_records = max(c["producers"] * c["active_partitions"], 64) * c["records_per_batch"]
        plan = build_plan(c, timed_records)
        run_async(lambda: _run(c, plan, out, profiler), c["backend"], c["clock"])
        result.update(out)
        result["ok"] = True
        result["error"] = None
    except Exception as exc:  # a sweep records the failure and moves on
        result["ok"] = False
        result["error"] = error_text(exc, c)
        result["traceback"] = traceback.format_exc(limit=8)
    return result


async def _run_idle(c: dict[str, Any], sim_seconds: float, out: dict[str, Any]) -> None:
    quiet_logging()
    replicas = assignment(c)
    async with Cluster(brokers=c["brokers"], metadata_mode=c["metadata_mode"], config=broker_config(c), seed=c["seed"]) as cluster:
        setup0 = time.perf_counter()
        if c["metadata_mode"] == "manual":
            await _create_topic_manual(cluster, c, replicas)
        else:
            await _create_topic_zk(cluster, c, replicas)
        view = ClusterView(cluster, c, replicas)
        # Let every fetcher settle into its long polls before measuring.
        await anyio.sleep(1.0)
        out["setup_s"] = time.perf_counter() - setup0
        fetch0 = view.fetch_requests()
        cpu0, loop0, wall0 = time.process_time(), anyio.current_time(), time.perf_counter()
        await anyio.sleep(sim_seconds)
        wall1, loop1, cpu1 = time.perf_counter(), anyio.current_time(), time.process_time()
        fetches = view.fetch_requests() - fetch0
        out.update({"sim_s": loop1 - loop0, "wall_s": wall1 - wall0, "cpu_s": cpu1 - cpu0,
                    "sim_per_wall": (loop1 - loop0) / max(wall1 - wall0, 1e-9), "fetch_requests": fetches,
                    "fetch_requests_per_sim_s": fetches / max(loop1 - loop0, 1e-9),
                    "fetch_requests_per_wall_s": fetches / max(wall1 - wall0, 1e-9), "peak_rss_mb": peak_rss_mb()})


def run_idle(config: dict[str, Any] | None = None, sim_seconds: float = 30.0) -> dict[str, Any]:
    """An idle cluster (topic created, nothing produced): loop seconds per wall second.

    Meant for ``clock="virtual"`` (the default here): followers long-poll
    ``replica.fetch.wait.max.ms`` and time jumps between polls, so the figure says how much
    simulated time one wall second buys with this many partitions.
    """
    tune_gc()  # kafka_ref's collector setting for its own processes (kafka_ref/common/gc_tuning.py)
    config = {"clock": "virtual", **(config or {})}
    c = normalize_config(config)
    result: dict[str, Any] = {"runner": "idle", **config_columns(c), **environment(c)}
    out: dict[str, Any] = {}
    try:
        run_async(lambda: _run_idle(c, sim_seconds, out), c["backend"], c["clock"])
        result.update(out, ok=True, error=None)
    except Exception as exc:
        result.update(ok=False, error=error_text(exc, c), traceback=traceback.format_exc(limit=8))
    return result


def profile_config(config: dict[str, Any] | None = None, top: int = 15, sort: str = "tottime") -> str:
    """Run one configuration with cProfile on its timed section; the ``top`` functions as text."""
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    result = run_config(config, profiler)
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats(sort).print_stats(top)
    head = f"records/s {result.get('records_per_s', 0):,.0f} (under the profiler); error: {result.get('error')}\n"
    return head + buffer.getvalue()


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """``key=value`` pairs; values parsed as TOML scalars where they parse (ints, floats, bools)."""
    import tomllib

    config: dict[str, Any] = {}
    for item in items:
        key, _, raw = item.partition("=")
        if not _:
            raise SystemExit(f"expected key=value, got {item!r}")
        try:
            config[key] = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            config[key] = raw
    return config


def format_result(result: dict[str, Any]) -> str:
    keys = ("records_per_s", "batches_per_s", "mb_per_s", "fetch_requests_per_s", "batches_per_fetch",
            "bytes_per_fetch", "produce_p50_loop_ms", "produce_p99_loop_ms", "produce_p50_wall_ms",
            "produce_p99_wall_ms", "hw_lag_mean", "hw_lag_max", "isr_shrinks", "wall_s", "loop_s",
            "sim_per_wall", "cpu_s", "peak_rss_mb")
    lines = [f"{result.get('runner')}: ok={result.get('ok')} error={result.get('error')}"]
    for k in keys:
        v = result.get(k)
        if v is not None:
            lines.append(f"  {k:24s} {v:,.3f}" if isinstance(v, float) else f"  {k:24s} {v}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.fetch_throughput",
                                     description="Run one fetch-throughput configuration (key=value ...).")
    parser.add_argument("settings", nargs="*", help="configuration keys, e.g. partitions=100 acks=all")
    parser.add_argument("--limit", action="store_true", help="also run the echo-fetch limit and print the ratio")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary instead")
    args = parser.parse_args(argv)
    config = parse_assignments(args.settings)
    if args.profile:
        print(profile_config(config))
        return 0
    result = run_config(config)
    print(format_result(result))
    if args.limit:
        from benchmarks.limit import run_limit

        limit = run_limit(config)
        print(format_result(limit))
        if result.get("ok") and limit.get("ok"):
            print(f"  ratio kafka_ref/limit    {result['records_per_s'] / limit['records_per_s']:.3f}")
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
