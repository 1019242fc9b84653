"""The limit: what moving the same batches costs with no protocol logic at all.

``run_limit(config)`` replays a configuration's pre-built produce traffic (the same
``Plan``) over the same ``kafka_ref.network.Network``, between the same number of tasks: one
request loop per broker (``serve_inbox``), one fetcher task per (follower broker, leader,
fetcher id) exactly as kafka_ref's ReplicaFetcherManager would group the partitions, and the
same producers with the same ``max_in_flight`` window. What it leaves out is everything Kafka
does per request: no validation, offsets, epochs, HW, ISR, purgatories or fetch sessions.

- A leader appends the produced batch reference to a per-partition list and answers at once
  (acks=1) or when every follower's fetcher has been handed the batch (acks=all).
- A fetcher's "fetch" names only itself. The leader keeps, per fetcher, a cursor into every
  partition and the set of partitions with unsent data, and answers with those batches (the
  per-partition and per-response byte limits are honoured, at least one batch per partition);
  with nothing new it parks the request until a produce arrives (a long poll with no timer).
- The follower appends the batch references to its own lists.

So the ratio kafka_ref / limit says how much of the time goes to protocol logic rather than
to moving batches between tasks.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import anyio

from benchmarks.fetch_throughput import BenchmarkError, ProduceStats, _metrics, _producer
from benchmarks.workload import (
    error_text,
    config_columns,
    TOPIC,
    Plan,
    assignment,
    build_plan,
    cycle_sends,
    environment,
    normalize_config,
    run_async,
)
from kafka_ref.common.gc_tuning import tune_gc
from kafka_ref.common.requests.produce import ProduceResponse
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Envelope, Network, serve_inbox
from kafka_ref.replica.fetcher.abstract_fetcher_manager import fetcher_id_for

_OK = ProduceResponse()  # an answer with no partition errors, shared by every produce


class EchoFetch:
    """The whole fetch request: which fetcher asks."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[int, int, int]) -> None:
        self.key = key


class EchoLog:
    """A partition's batches on one broker; ``high_watermark`` = what every follower was handed."""

    __slots__ = ("batches", "sizes", "records", "high_watermark_index", "counts")

    def __init__(self) -> None:
        self.batches: list[Any] = []
        self.sizes: list[int] = []
        self.counts: list[int] = []
        self.records = 0
        self.high_watermark_index = 0

    @property
    def log_end_offset(self) -> int:
        return len(self.batches)

    @property
    def high_watermark(self) -> int:
        return self.high_watermark_index


class _Pending:
    """An acks=all produce waiting for its partitions to be handed to every follower."""

    __slots__ = ("envelope", "remaining")

    def __init__(self, envelope: Envelope) -> None:
        self.envelope = envelope
        self.remaining = 0


class EchoBroker:
    """A broker of the limit: produce appends a reference, fetch hands out unsent references."""

    def __init__(self, broker_id: int, c: dict[str, Any]) -> None:
        self.broker_id = broker_id
        self.max_bytes = c["replica.fetch.max.bytes"]
        self.response_max_bytes = c["replica.fetch.response.max.bytes"]
        self.logs: dict[int, EchoLog] = {}
        self.followers: dict[int, list[tuple[int, int, int]]] = {}  # partition -> fetcher keys
        self.cursors: dict[tuple[int, int, int], dict[int, int]] = {}
        self.dirty: dict[tuple[int, int, int], dict[int, None]] = {}
        self.parked: dict[tuple[int, int, int], Envelope] = {}
        self.waiters: dict[int, deque[tuple[int, _Pending]]] = {}

    def handle(self, envelope: Envelope) -> None:
        request = envelope.request
        if type(request) is EchoFetch:
            self.fetch(envelope, request.key)
        else:
            self.produce(envelope, request)

    def produce(self, envelope: Envelope, request: Any) -> None:
        pending = _Pending(envelope)
        for topic in request.topic_data:
            for data in topic.partition_data:
                p = data.index
                log = self.logs[p]
                log.batches.append(data.records)
                log.sizes.append(data.records.size_in_bytes)
                for key in self.followers[p]:
                    self.dirty[key][p] = None
                if request.acks == -1 and self.followers[p]:
                    pending.remaining += 1
                    self.waiters[p].append((len(log.batches), pending))
        # Answer now (acks=1, or nothing to wait for), then wake parked fetchers.
        if request.acks != 0 and pending.remaining == 0:
            envelope.respond(_OK)
        for topic in request.topic_data:
            for data in topic.partition_data:
                for key in self.followers[data.index]:
                    parked = self.parked.pop(key, None)
                    if parked is not None:
                        self.fetch(parked, key)

    def _release(self, p: int) -> None:
        keys = self.followers[p]
        handed = min(self.cursors[k][p] for k in keys) if keys else len(self.logs[p].batches)
        self.logs[p].high_watermark_index = handed
        waiters = self.waiters[p]
        while waiters and waiters[0][0] <= handed:
            pending = waiters.popleft()[1]
            pending.remaining -= 1
            if pending.remaining == 0:
                pending.envelope.respond(_OK)

    def fetch(self, envelope: Envelope, key: tuple[int, int, int]) -> None:
        dirty = self.dirty[key]
        if not dirty:
            self.parked[key] = envelope
            return
        cursors = self.cursors[key]
        out: list[tuple[int, list[Any]]] = []
        budget = self.response_max_bytes
        for p in list(dirty):
            log = self.logs[p]
            start = cursors[p]
            end, size, n = start, 0, len(log.batches)
            while end < n:
                s = log.sizes[end]
                # The first batch of a partition always fits its per-partition limit, and the
                # first batch of the response always fits the response limit.
                if end > start and size + s > self.max_bytes:
                    break
                if (out or end > start) and size + s > budget:
                    break
                size += s
                end += 1
            if end == start:
                break
            out.append((p, log.batches[start:end]))
            budget -= size
            cursors[p] = end
            if end == len(log.batches):
                del dirty[p]
            self._release(p)
            if budget <= 0:
                break
        envelope.respond(out)


class EchoView:
    """What the shared producer code needs: each partition's leader and leader log."""

    def __init__(self, leaders: dict[int, int], leader_logs: dict[int, EchoLog]) -> None:
        self.leaders = leaders
        self.leader_logs = leader_logs


async def _echo_fetcher(network: Network, key: tuple[int, int, int], logs: dict[int, EchoLog], counter: list[int]) -> None:
    follower, leader, _fetcher_id = key
    request = EchoFetch(key)
    while True:
        response = await network.send(follower, leader, request, 3_600_000)
        counter[0] += 1
        for p, batches in response:
            logs[p].batches.extend(batches)


async def _run_limit(c: dict[str, Any], plan: Plan, out: dict[str, Any]) -> None:
    replicas = assignment(c)
    network = Network()
    brokers = {b: EchoBroker(b, c) for b in range(c["brokers"])}
    follower_logs: dict[int, dict[int, EchoLog]] = {b: {} for b in brokers}
    fetcher_keys: set[tuple[int, int, int]] = set()
    n_fetchers = c["num.replica.fetchers"]
    for p, r in replicas.items():
        leader = brokers[r[0]]
        leader.logs[p] = EchoLog()
        leader.waiters[p] = deque()
        leader.followers[p] = []
        fid = fetcher_id_for(TopicPartition(TOPIC, p), n_fetchers)
        for f in r[1:]:
            key = (f, r[0], fid)
            fetcher_keys.add(key)
            leader.followers[p].append(key)
            leader.cursors.setdefault(key, {})[p] = 0
            leader.dirty.setdefault(key, {})
            follower_logs[f][p] = EchoLog()
    leaders = {p: replicas[p][0] for p in range(c["active_partitions"])}
    view = EchoView(leaders, {p: brokers[leaders[p]].logs[p] for p in leaders})
    counter = [0]
    deadline = time.perf_counter() + c["timeout_s"]

    def caught_up(p: int) -> bool:
        n = len(view.leader_logs[p].batches)
        return all(len(follower_logs[f][p].batches) >= n for f in replicas[p][1:])

    async def wait_caught_up() -> None:
        pending = [p for p in leaders if not caught_up(p)]
        while pending:
            if time.perf_counter() > deadline:
                raise BenchmarkError("limit: followers not caught up before the wall-clock timeout")
            await anyio.sleep(0.0005)
            pending = [p for p in pending if not caught_up(p)]

    async with anyio.create_task_group() as tg:
        for b, broker in brokers.items():
            tg.start_soon(serve_inbox, network.register(b), broker.handle)
        for key in sorted(fetcher_keys):
            tg.start_soon(_echo_fetcher, network, key, follower_logs[key[0]], counter)
        # Warm up, then the timed section, as in run_config.
        await _produce_echo(network, view, plan.warmup, c, None)
        await wait_caught_up()
        stats = ProduceStats()
        fetch0 = counter[0]
        cpu0, loop0, wall0 = time.process_time(), anyio.current_time(), time.perf_counter()
        if c["duration_s"] is None:
            await _produce_echo(network, view, plan.timed, c, stats)
        else:
            cycles = [cycle_sends(plan, i) for i in range(c["producers"])]
            await _produce_echo(network, view, cycles, c, stats, wall0 + float(c["duration_s"]))
        await wait_caught_up()
        wall1, loop1, cpu1 = time.perf_counter(), anyio.current_time(), time.process_time()
        out.update(_metrics(c, stats, wall1 - wall0, loop1 - loop0, cpu1 - cpu0, counter[0] - fetch0, 0))
        tg.cancel_scope.cancel()


async def _produce_echo(network: Network, view: EchoView, per_producer: list[list[Any]], c: dict[str, Any],
                        stats: ProduceStats | None, deadline: float | None = None) -> None:
    async with anyio.create_task_group() as tg:
        for i, sends in enumerate(per_producer):
            if sends:
                tg.start_soon(_producer, i, network, view, sends, c, stats, deadline)


def run_limit(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the echo-fetch limit for ``config``; same result keys as ``run_config``."""
    tune_gc()  # the same collector setting as run_config, so the ratio compares like with like
    import traceback

    c = normalize_config(config)
    result: dict[str, Any] = {"runner": "limit", **config_columns(c), **environment(c)}
    out: dict[str, Any] = {}
    try:
        timed_records = None
        if c["duration_s"] is not None:
            timed_records = max(c["producers"] * c["active_partitions"], 64) * c["records_per_batch"]
        plan = build_plan(c, timed_records)
        run_async(lambda: _run_limit(c, plan, out), c["backend"], c["clock"])
        result.update(out)
        result["ok"] = True
        result["error"] = None
    except Exception as exc:
        result["ok"] = False
        result["error"] = error_text(exc, c)
        result["traceback"] = traceback.format_exc(limit=8)
    return result


def with_limit(result: dict[str, Any], limit: dict[str, Any]) -> dict[str, Any]:
    """``result`` plus the limit's records/s and the ratio kafka_ref / limit."""
    merged = dict(result)
    merged["limit_records_per_s"] = limit.get("records_per_s")
    merged["limit_fetch_requests_per_s"] = limit.get("fetch_requests_per_s")
    merged["limit_records_per_cpu_s"] = limit.get("records_per_cpu_s")
    merged["limit_error"] = limit.get("error")
    if result.get("ok") and limit.get("ok") and limit.get("records_per_s"):
        merged["limit_ratio"] = result["records_per_s"] / limit["records_per_s"]
        merged["limit_ratio_cpu"] = result["records_per_cpu_s"] / limit["records_per_cpu_s"]
    else:
        merged["limit_ratio"] = None
        merged["limit_ratio_cpu"] = None
    return merged
