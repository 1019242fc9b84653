"""What a benchmark configuration means, and the pieces every runner shares.

A configuration is a flat dict. ``normalize_config`` fills in the defaults below, checks the
values and derives ``records_per_batch`` from ``batch_size`` when only the latter is given.
``build_plan`` pre-builds every producer's batches (the encoding cost stays outside the timed
section) and says which partition each one goes to. The helpers at the bottom run a coroutine
on the chosen backend and clock, and describe the machine and the code that produced a result.

Timing (``time.perf_counter``, ``time.process_time``) lives only in ``benchmarks/``: nothing in
``kafka_ref/`` reads the wall clock.
"""

from __future__ import annotations

import math
import os
import platform
import resource
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from kafka_ref.clients.partitioner import partition_for_key
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition

TOPIC = "bench"

# Defaults: Kafka's own where the key is Kafka's (docs/DESIGN.md §5), small workloads otherwise.
DEFAULTS: dict[str, Any] = {
    "brokers": 3,
    "partitions": 1,
    "replication_factor": 3,
    "record_size": 1024,
    "records_per_batch": None,  # derived from batch_size when None
    "batch_size": 16384,  # bytes of record values per batch (the producer's batch.size)
    "total_records": 50_000,
    "duration_s": None,  # when set, produce for this many wall seconds instead of total_records
    "producers": 1,
    "max_in_flight": 5,  # max.in.flight.requests.per.connection
    "max.request.size": 1_048_576,  # the producer's cap on one ProduceRequest
    "acks": "all",
    "min.insync.replicas": 1,
    "replica.fetch.max.bytes": 1_048_576,
    "replica.fetch.response.max.bytes": 10_485_760,
    "replica.fetch.min.bytes": 1,
    "replica.fetch.wait.max.ms": 500,
    "num.replica.fetchers": 1,
    "max.incremental.fetch.session.cache.slots": 1000,
    "active_partitions": None,  # None: every partition receives data
    "keyed": False,  # True: murmur2-hashed keys choose partitions; False: explicit partitions
    "metadata_mode": "manual",  # "manual" (the runner plays the controller) or "zk"
    "clock": "wall",  # "wall" (real loop clock) or "virtual" (time jumps when every task waits)
    "backend": "asyncio",  # anyio backend: "asyncio" or "trio"
    "warmup": 2000,  # records produced and fully replicated before the timed section
    "seed": 0,
    "timeout_s": 300.0,  # wall-clock bound on one configuration
}

BROKER_KEYS = (
    "min.insync.replicas",
    "replica.fetch.max.bytes",
    "replica.fetch.response.max.bytes",
    "replica.fetch.min.bytes",
    "replica.fetch.wait.max.ms",
    "num.replica.fetchers",
    "max.incremental.fetch.session.cache.slots",
)

# Pre-built batches are reused in a ring; this bounds the bytes the ring holds.
POOL_BYTES = 64 * 1024 * 1024


class BenchmarkConfigError(ValueError):
    """A configuration key or value the runner cannot use."""


def _acks(value: Any) -> int:
    if value in ("all", "-1", -1):
        return -1
    if value in (0, 1, "0", "1"):
        return int(value)
    raise BenchmarkConfigError(f"acks must be 0, 1, -1 or 'all', not {value!r}")


def normalize_config(config: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults filled in, values checked, ``acks`` as an int and ``records_per_batch`` known."""
    config = dict(config or {})
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise BenchmarkConfigError(f"unknown configuration keys: {unknown}; known: {sorted(DEFAULTS)}")
    c = {**DEFAULTS, **config}
    c["acks"] = _acks(c["acks"])
    for key in ("brokers", "partitions", "replication_factor", "record_size", "producers", "max_in_flight",
                "max.request.size"):
        c[key] = int(c[key])
        if c[key] < 1:
            raise BenchmarkConfigError(f"{key} must be at least 1, not {c[key]}")
    if c["replication_factor"] > c["brokers"]:
        raise BenchmarkConfigError(f"replication_factor {c['replication_factor']} exceeds brokers {c['brokers']}")
    if c["records_per_batch"] is None:
        c["records_per_batch"] = max(1, int(c["batch_size"]) // c["record_size"])
    c["records_per_batch"] = int(c["records_per_batch"])
    c["batch_size"] = c["records_per_batch"] * c["record_size"]
    if c["active_partitions"] is None:
        c["active_partitions"] = c["partitions"]
    c["active_partitions"] = int(c["active_partitions"])
    if not 1 <= c["active_partitions"] <= c["partitions"]:
        raise BenchmarkConfigError(f"active_partitions must be in 1..{c['partitions']}, not {c['active_partitions']}")
    c["total_records"] = int(c["total_records"])
    c["warmup"] = int(c["warmup"] or 0)
    if c["metadata_mode"] not in ("manual", "zk"):
        raise BenchmarkConfigError(f"metadata_mode must be 'manual' or 'zk', not {c['metadata_mode']!r}")
    if c["clock"] not in ("wall", "virtual"):
        raise BenchmarkConfigError(f"clock must be 'wall' or 'virtual', not {c['clock']!r}")
    if c["backend"] not in ("asyncio", "trio"):
        raise BenchmarkConfigError(f"backend must be 'asyncio' or 'trio', not {c['backend']!r}")
    c["keyed"] = bool(c["keyed"])
    return c


def config_columns(c: dict[str, Any]) -> dict[str, Any]:
    """The configuration echoed into a result: ``cfg_<key>`` with dots as underscores (Spark-safe)."""
    return {"cfg_" + k.replace(".", "_"): v for k, v in c.items()}


def broker_config(c: dict[str, Any]) -> dict[str, Any]:
    """The KafkaConfig keys of a normalised configuration (the rest drive the workload)."""
    return {k: c[k] for k in BROKER_KEYS}


def assignment(c: dict[str, Any]) -> dict[int, list[int]]:
    """Replicas of each partition, spread round robin; the first replica is the leader."""
    b, rf = c["brokers"], c["replication_factor"]
    return {p: [(p + i) % b for i in range(rf)] for p in range(c["partitions"])}


# --------------------------------------------------------------------------------------------
# Pre-built produce traffic
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Batch:
    """One encoded record batch for one partition."""

    partition: int
    records: MemoryRecords
    record_count: int
    size_in_bytes: int


@dataclass(slots=True)
class Send:
    """One produce request, built before timing: the leader it goes to and what it carries."""

    leader: int
    partitions: tuple[int, ...]
    request: ProduceRequest
    record_count: int
    size_in_bytes: int


@dataclass
class Plan:
    """Every producer's sends in order, for the warm-up and for the timed section."""

    warmup: list[list[Send]] = field(default_factory=list)
    timed: list[list[Send]] = field(default_factory=list)

    def timed_totals(self) -> tuple[int, int, int]:
        sends = [s for producer in self.timed for s in producer]
        return (sum(s.record_count for s in sends), sum(len(s.partitions) for s in sends),
                sum(s.size_in_bytes for s in sends))


def _keys_for(c: dict[str, Any], count: int, start: int) -> dict[int, list[bytes]]:
    """``count`` keys, starting at key number ``start``, grouped by the partition murmur2 picks.

    Keys that hash outside the active partitions are skipped (the producer would not send them).
    """
    by_partition: dict[int, list[bytes]] = {}
    n, i = c["partitions"], start
    found = 0
    while found < count:
        key = b"key-%d" % i
        i += 1
        p = partition_for_key(key, n)
        if p >= c["active_partitions"]:
            continue
        by_partition.setdefault(p, []).append(key)
        found += 1
    return by_partition


def _batch(c: dict[str, Any], partition: int, keys: list[bytes] | None, serial: int) -> Batch:
    """Encode one batch (a v2 RecordBatch via RecordBatch.build)."""
    size = c["record_size"]
    count = len(keys) if keys is not None else c["records_per_batch"]
    stamp = (b"%08d" % serial)[-8:]
    value = (stamp * (size // 8 + 1))[:size]
    records = [SimpleRecord(keys[i] if keys is not None else None, value) for i in range(count)]
    batch = RecordBatch.build(records, timestamp=1_704_067_200_000)
    memory_records = MemoryRecords.of([batch])
    return Batch(partition, memory_records, count, memory_records.size_in_bytes)


def group_requests(c: dict[str, Any], batches: list[Batch], leaders: dict[int, int]) -> list[Send]:
    """Pack a producer's batches into ProduceRequests the way Kafka's Sender drains them.

    One request per leader holds at most one batch per partition and at most
    ``max.request.size`` bytes (the first batch always fits); a partition's next batch goes
    in a later request, so each partition's batches stay in order.
    """
    max_size = c["max.request.size"]
    sends: list[Send] = []
    open_: dict[int, list[Batch]] = {}
    open_size: dict[int, int] = {}

    def emit(leader: int) -> None:
        group = open_.pop(leader)
        open_size.pop(leader)
        request = ProduceRequest.build(acks=c["acks"], timeout_ms=30_000, records={
            TopicPartition(TOPIC, b.partition): b.records for b in group})
        sends.append(Send(leader, tuple(b.partition for b in group), request,
                          sum(b.record_count for b in group), sum(b.size_in_bytes for b in group)))

    for batch in batches:
        leader = leaders[batch.partition]
        group = open_.get(leader)
        if group is not None and (any(b.partition == batch.partition for b in group)
                                  or open_size[leader] + batch.size_in_bytes > max_size):
            emit(leader)
            group = None
        if group is None:
            open_[leader] = group = []
            open_size[leader] = 0
        group.append(batch)
        open_size[leader] += batch.size_in_bytes
    for leader in list(open_):
        emit(leader)
    return sends


def build_plan(c: dict[str, Any], timed_records: int | None = None) -> Plan:
    """Pre-build the warm-up and timed sends of every producer.

    Batch j of the run goes to active partition ``j % active_partitions`` and producer
    ``j % producers`` (explicit partitions), or keys pick the partition (``keyed``). Distinct
    batches are built per partition up to a memory bound (``POOL_BYTES``) and then reused in a
    ring: the leader rewrites offsets into a new buffer on every append, so reuse is safe.
    Each producer's batches are then packed into requests per leader (``group_requests``).
    """
    plan = Plan()
    rpb = c["records_per_batch"]
    active = c["active_partitions"]
    approx_batch = rpb * (c["record_size"] + 20) + 61
    per_partition_pool = max(1, POOL_BYTES // max(1, active * approx_batch))
    total = c["total_records"] if timed_records is None else timed_records
    leaders = {p: r[0] for p, r in assignment(c).items()}
    pool: dict[int, list[Batch]] = {}

    def batches_for(records: int, key_start: int) -> list[tuple[int, list[bytes] | None]]:
        out: list[tuple[int, list[bytes] | None]] = []
        if c["keyed"]:
            by_partition = _keys_for(c, records, key_start)
            chunks = {p: [keys[i:i + rpb] for i in range(0, len(keys), rpb)] for p, keys in by_partition.items()}
            # Interleave partitions round by round, the way a producer's accumulator drains them.
            for round_ in range(max((len(v) for v in chunks.values()), default=0)):
                out.extend((p, chunks[p][round_]) for p in sorted(chunks) if round_ < len(chunks[p]))
        else:
            n = math.ceil(records / rpb) if records > 0 else 0
            out.extend((j % active, None) for j in range(n))
        return out

    serial = 0

    def to_sends(items: list[tuple[int, list[bytes] | None]]) -> list[list[Send]]:
        nonlocal serial
        producers: list[list[Batch]] = [[] for _ in range(c["producers"])]
        for j, (p, keys) in enumerate(items):
            ring = pool.setdefault(p, [])
            if keys is not None or len(ring) < per_partition_pool:
                batch = _batch(c, p, keys, serial)
                serial += 1
                if keys is None:
                    ring.append(batch)
            else:
                batch = ring[j % len(ring)]
            producers[j % c["producers"]].append(batch)
        return [group_requests(c, batches, leaders) for batches in producers]

    plan.warmup = to_sends(batches_for(c["warmup"], 0))
    plan.timed = to_sends(batches_for(total, c["warmup"] + 1))
    return plan


def cycle_sends(plan: Plan, producer: int) -> list[Send]:
    """The sends a producer repeats in duration mode."""
    return plan.timed[producer]


# --------------------------------------------------------------------------------------------
# Running and describing
# --------------------------------------------------------------------------------------------


def run_async(fn: Callable[[], Awaitable[Any]], backend: str, clock: str) -> Any:
    """Run ``fn`` on the anyio backend, with a real or a virtual loop clock."""
    import anyio

    options: dict[str, Any] = {}
    if backend == "asyncio" and clock == "virtual":
        from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop

        options["loop_factory"] = VirtualTimeEventLoop
    elif backend == "trio" and clock == "virtual":
        import trio.testing

        options["clock"] = trio.testing.MockClock(autojump_threshold=0)
    return anyio.run(fn, backend=backend, backend_options=options)


def error_text(exc: BaseException, c: dict[str, Any]) -> str:
    """``Type: message`` for a failed configuration (a bare timeout says which bound it hit)."""
    # Task groups wrap what failed inside them: report the one underlying error.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc)
    if isinstance(exc, TimeoutError) and not text:
        text = f"the configuration did not finish within timeout_s={c['timeout_s']}"
    return f"{type(exc).__name__}: {text}"


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) by nearest rank; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


_GIT_COMMIT: str | None = None


def git_commit() -> str:
    """The commit of the kafka_ref checkout these numbers came from ("unknown" outside git)."""
    global _GIT_COMMIT
    if _GIT_COMMIT is None:
        root = Path(__file__).resolve().parent.parent
        try:
            out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                                 capture_output=True, text=True, timeout=5)
            _GIT_COMMIT = out.stdout.strip() or "unknown"
            status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=10)
            if _GIT_COMMIT != "unknown" and status.stdout.strip():
                _GIT_COMMIT += "-dirty"  # uncommitted changes to tracked files
        except (OSError, subprocess.SubprocessError):
            _GIT_COMMIT = "unknown"
    return _GIT_COMMIT


def environment(c: dict[str, Any]) -> dict[str, Any]:
    """Who ran this: Python, the anyio backend and clock, cores, the commit."""
    import anyio

    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "anyio": getattr(anyio, "__version__", None) or _dist_version("anyio"),
        "backend": c["backend"],
        "clock": c["clock"],
        "cpu_count": os.cpu_count(),
        "git_commit": git_commit(),
    }


def _dist_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def quiet_logging() -> None:
    """Keep structlog events off the hot paths' output (they are still filtered cheaply)."""
    import logging

    from kafka_ref.common.state_change import configure_logging

    configure_logging(logging.WARNING, None)
