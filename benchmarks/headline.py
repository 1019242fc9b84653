"""The six headline measures of the replication hot path, in one go.

    python -m benchmarks.headline [--scale 1.0] [--json] [measure ...]

| name | what | unit |
|---|---|---|
| ``r1`` | 1 partition, RF 3, acks=all, 1 KiB x 16-record batches, ``replica.fetch.max.bytes=65536``: records/s, and that ÷ ``run_limit`` of the same configuration in the same process | ratio |
| ``r100`` | the same batches over 100 partitions: records/s (also fetches/s and p99 produce latency) | records/s |
| ``idle100`` | an idle 3-broker cluster, 100 partitions RF 3 (``run_idle``): simulated s per wall s | sim s / wall s |
| ``idle1000`` | the same with 1,000 partitions | sim s / wall s |
| ``sim`` | ``kafka-ref sim --scenario kip101`` over seeds 1..N in this process: seeds per minute | seeds/min |
| ``calls`` | Python function calls (cProfile) in R1's timed section ÷ produce requests, on the virtual clock | calls/request |

``calls`` is deterministic (the asyncio backend runs ready tasks in FIFO order and the virtual
clock moves only when every task waits), so it is the measure to trust on a busy machine; the
other five are wall-clock rates.

Only ``run_config``, ``run_limit``, ``run_idle`` (benchmarks/) and ``simulate`` (kafka_ref.sim)
are used, all of which exist at commit facf70e: ``benchmarks.compare`` runs this file against an
older checkout of the project (``--worker`` mode, one measure per process, JSON on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

# The R1 configuration: 1 KiB records in 16-record (16 KiB) batches, 64 KiB fetches.
R1: dict[str, Any] = {"partitions": 1, "replication_factor": 3, "acks": "all", "record_size": 1024,
                      "records_per_batch": 16, "replica.fetch.max.bytes": 65536}
R100: dict[str, Any] = {**R1, "partitions": 100}

# name -> (label, unit, target text)
MEASURES: dict[str, tuple[str, str, str]] = {
    "r1": ("R1: records/s ÷ run_limit", "ratio", "≥ 0.5"),
    "r100": ("R100: records/s", "records/s", "≥ 10× facf70e"),
    "idle100": ("idle, 100 partitions: sim s per wall s", "x", "≥ 500"),
    "idle1000": ("idle, 1,000 partitions: sim s per wall s", "x", "≥ 50"),
    "sim": ("sim kip101: seeds per minute", "seeds/min", "≥ 5× facf70e"),
    "calls": ("calls per produce request at R1", "calls", "≤ 250"),
}


def _scaled(n: float, scale: float, low: int) -> int:
    return max(low, int(n * scale))


def measure_r1(scale: float) -> dict[str, Any]:
    from benchmarks.fetch_throughput import run_config
    from benchmarks.limit import run_limit

    config = {**R1, "total_records": _scaled(50_000, scale, 4_000)}
    result = run_config(config)
    limit = run_limit(config)
    _ok(result, limit)
    return {"value": result["records_per_s"] / limit["records_per_s"], "records_per_s": result["records_per_s"],
            "limit_records_per_s": limit["records_per_s"], "fetch_requests_per_s": result["fetch_requests_per_s"],
            "produce_p99_wall_ms": result["produce_p99_wall_ms"]}


def measure_r100(scale: float) -> dict[str, Any]:
    from benchmarks.fetch_throughput import run_config

    result = run_config({**R100, "total_records": _scaled(30_000, scale, 4_000)})
    _ok(result)
    return {"value": result["records_per_s"], "records_per_s": result["records_per_s"],
            "fetch_requests_per_s": result["fetch_requests_per_s"], "produce_p99_wall_ms": result["produce_p99_wall_ms"],
            "records_per_cpu_s": result["records_per_cpu_s"]}


def _idle(partitions: int, sim_seconds: float) -> dict[str, Any]:
    from benchmarks.fetch_throughput import run_idle

    result = run_idle({"partitions": partitions, "replication_factor": 3}, sim_seconds=sim_seconds)
    _ok(result)
    return {"value": result["sim_per_wall"], "sim_s": result["sim_s"], "wall_s": result["wall_s"],
            "fetch_requests_per_sim_s": result["fetch_requests_per_sim_s"]}


def measure_idle100(scale: float) -> dict[str, Any]:
    return _idle(100, max(10.0, 60.0 * scale))


def measure_idle1000(scale: float) -> dict[str, Any]:
    return _idle(1000, max(5.0, 20.0 * scale))


def measure_sim(scale: float) -> dict[str, Any]:
    from kafka_ref.common.state_change import configure_logging  # noqa: F401  (imported by simulate)
    from kafka_ref.sim.simulate import SimConfig, simulate

    seeds = _scaled(10, scale, 2)
    start = time.perf_counter()
    violations = 0
    for seed in range(1, seeds + 1):
        result = simulate(seed, "kip101", SimConfig())
        violations += len(getattr(result, "violations", ()) or ())
    wall = time.perf_counter() - start
    return {"value": seeds * 60.0 / wall, "seeds": seeds, "wall_s": wall, "violations": violations}


def measure_calls(scale: float) -> dict[str, Any]:
    import cProfile
    import gc
    import pstats

    from benchmarks.fetch_throughput import run_config

    profiler = cProfile.Profile()
    # The cyclic collector is paused for the profiled run: a collection can run Python finalizers
    # (an event loop's async-generator hooks, __del__ methods) whose number depends on the garbage
    # the process made before, so the count would depend on what ran earlier in the process.
    gc.collect()
    gc.disable()
    try:
        result = run_config({**R1, "clock": "virtual", "total_records": _scaled(16_000, scale, 1_600)}, profiler)
    finally:
        gc.enable()
    _ok(result)
    calls = pstats.Stats(profiler).total_calls
    requests = result["batches"]  # one partition: one batch per produce request
    return {"value": calls / requests, "calls": calls, "produce_requests": requests}


FUNCTIONS: dict[str, Callable[[float], dict[str, Any]]] = {
    "r1": measure_r1, "r100": measure_r100, "idle100": measure_idle100, "idle1000": measure_idle1000,
    "sim": measure_sim, "calls": measure_calls,
}


def _ok(*results: dict[str, Any]) -> None:
    for result in results:
        if not result.get("ok"):
            raise RuntimeError(f"{result.get('runner')} failed: {result.get('error')}")


def measure_config(spec: str, scale: float) -> dict[str, Any]:
    """A custom fetch-throughput configuration, ``key=value,key=value``: its records/s."""
    from benchmarks.fetch_throughput import parse_assignments, run_config

    config = parse_assignments([item for item in spec.split(",") if item])
    result = run_config(config)
    _ok(result)
    return {"value": result["records_per_s"], "fetch_requests_per_s": result["fetch_requests_per_s"],
            "produce_p99_wall_ms": result["produce_p99_wall_ms"]}


def run_measure(name: str, scale: float) -> dict[str, Any]:
    if name in FUNCTIONS:
        return FUNCTIONS[name](scale)
    return measure_config(name, scale)


def load_average() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def label(name: str) -> tuple[str, str, str]:
    return MEASURES.get(name, (f"records/s of {name}", "records/s", ""))


def _worker(name: str, scale: float) -> int:
    # Run as a script from another checkout: that checkout (PYTHONPATH) must win over this
    # file's own directory, which Python put first on sys.path.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        out = run_measure(name, scale)
        out["ok"] = True
    except Exception as exc:  # reported to the parent, which prints it beside the other side
        out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print("@@RESULT@@" + json.dumps(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.headline", description=__doc__.splitlines()[0])
    parser.add_argument("measures", nargs="*", help=f"any of {', '.join(MEASURES)} (default: all six)")
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor (records, seeds, sim s)")
    parser.add_argument("--json", action="store_true", help="one JSON object per measure")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.worker, args.scale)
    names = args.measures or list(MEASURES)
    print(f"# load average {load_average()}, {os.cpu_count()} cores", flush=True)
    for name in names:
        text, unit, target = label(name)
        try:
            out = run_measure(name, args.scale)
        except Exception as exc:
            print(f"{text:45s} FAILED {type(exc).__name__}: {exc}", flush=True)
            continue
        if args.json:
            print(json.dumps({"measure": name, **out}), flush=True)
            continue
        extra = ", ".join(f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items() if k != "value")
        print(f"{text:45s} {out['value']:>12,.3f} {unit:10s} target {target:14s} ({extra})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
