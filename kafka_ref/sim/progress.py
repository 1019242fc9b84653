"""Running many seeds: worker processes, a progress bar and the summary table.

``run_seeds`` runs ``simulate`` for a range of seeds, in this process or in ``jobs`` worker
processes (multiprocessing, never threads: the simulator configures structlog and trio's
scheduler globally, per process). ``Summary`` aggregates the results into the table
``kafka-ref sim`` prints: seeds run, faults injected by kind, violations by invariant, and
throughput (seeds per minute, simulated seconds per wall second).

Throughput is the one place kafka_ref reads a wall clock (``throughput_clock``, every seed runner
uses it): it measures how fast the simulator runs and never feeds anything back into a simulation.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, TextIO

from kafka_ref.sim.scenarios import normalize_ibp
from kafka_ref.sim.simulate import SimConfig, SimResult, simulate


def throughput_clock() -> float:
    """Wall seconds for throughput figures only (local and Spark seed runners alike)."""
    return time.perf_counter()


@dataclass
class SeedOutcome:
    """A SimResult (without its history) plus the wall time it took."""

    result: SimResult
    wall_s: float


def run_one(seed: int, scenario: str, config: SimConfig) -> SeedOutcome:
    start = throughput_clock()
    result = simulate(seed, scenario, config)
    result.history = None
    return SeedOutcome(result, throughput_clock() - start)


def _run_one_star(args: tuple[int, str, SimConfig]) -> SeedOutcome:
    return run_one(*args)


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the parent, which stops the pool (no traceback per worker)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_seeds(scenario: str, seeds: Iterable[int], config: SimConfig, jobs: int = 1) -> Iterator[SeedOutcome]:
    """Yield one outcome per seed, as they finish (in seed order when ``jobs`` is 1)."""
    tasks = [(seed, scenario, config) for seed in seeds]
    if jobs <= 1:
        for task in tasks:
            yield _run_one_star(task)
        return
    # fork: workers start at once with kafka_ref already imported (the parent has not run an
    # event loop yet); spawn elsewhere.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with context.Pool(processes=jobs, maxtasksperchild=200, initializer=_ignore_sigint) as pool:
        yield from pool.imap_unordered(_run_one_star, tasks, chunksize=1)


@dataclass
class Summary:
    """Aggregated results of many seeds of one scenario in one era."""

    scenario: str
    ibp: str | None
    metadata_mode: str = "zk"
    seeds: int = 0
    failed_seeds: list[int] = field(default_factory=list)
    faults: Counter = field(default_factory=Counter)
    violations: Counter = field(default_factory=Counter)
    first_violation: dict[str, str] = field(default_factory=dict)
    simulated_s: float = 0.0
    seed_wall_s: float = 0.0
    wall_s: float = 0.0
    acked_all: int = 0
    acked_one: int = 0
    consumed: int = 0
    unclean_elections: int = 0
    unclean_losses: int = 0
    acks1_losses: int = 0
    events: int = 0

    def add(self, outcome: SeedOutcome) -> None:
        r = outcome.result
        self.seeds += 1
        self.faults.update(r.faults)
        self.violations.update({k: 1 for k in r.violation_counts})
        for v in r.violations:
            self.first_violation.setdefault(v.invariant, f"seed {r.seed}: {v.describe()}")
        if r.violations:
            self.failed_seeds.append(r.seed)
        self.simulated_s += r.simulated_s
        self.seed_wall_s += outcome.wall_s
        self.acked_all += r.workload.get("acked_all", 0)
        self.acked_one += r.workload.get("acked_one", 0)
        self.consumed += r.workload.get("consumed", 0)
        self.unclean_elections += r.unclean_elections
        self.unclean_losses += r.unclean_losses
        self.acks1_losses += r.acks1_losses
        self.events += r.events

    @property
    def era(self) -> str:
        return self.ibp or "default"

    @property
    def seeds_per_minute(self) -> float:
        return 60.0 * self.seeds / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def sim_per_wall(self) -> float:
        """Simulated seconds per wall second of one worker."""
        return self.simulated_s / self.seed_wall_s if self.seed_wall_s > 0 else 0.0

    def table(self) -> str:
        lines = [f"scenario {self.scenario}, era {self.era}, {self.metadata_mode} mode: {self.seeds} seeds, "
                 f"{len(self.failed_seeds)} with violations"]
        lines.append(f"  {'simulated time':<28} {self.simulated_s:,.0f} s ({self.sim_per_wall:,.0f} simulated s per wall s)")
        lines.append(f"  {'throughput':<28} {self.seeds_per_minute:,.1f} seeds/min (wall {self.wall_s:,.1f} s)")
        lines.append(f"  {'workload':<28} {self.acked_all:,} acks=all and {self.acked_one:,} acks=1 writes acknowledged, "
                     f"{self.consumed:,} records consumed, {self.events:,} events")
        lines.append(f"  {'unclean elections':<28} {self.unclean_elections} (acknowledged writes lost to them: "
                     f"{self.unclean_losses}); acks=1 writes lost: {self.acks1_losses}")
        lines.append("  faults injected:")
        for kind, count in sorted(self.faults.items()):
            lines.append(f"    {kind:<28} {count:>8,}")
        lines.append("  violations (seeds per invariant):")
        if not self.violations:
            lines.append("    none")
        for invariant, count in sorted(self.violations.items()):
            lines.append(f"    {invariant:<28} {count:>8,}")
            lines.append(f"      first: {self.first_violation[invariant][:300]}")
        if self.failed_seeds:
            shown = ", ".join(str(s) for s in sorted(self.failed_seeds)[:20])
            lines.append(f"  failing seeds: {shown}{' ...' if len(self.failed_seeds) > 20 else ''}")
        return "\n".join(lines)

    def markdown_row(self) -> str:
        violations = ", ".join(f"{k} ({v})" for k, v in sorted(self.violations.items())) or "0"
        return (f"| {self.scenario} | {self.metadata_mode} | {self.era} | {self.seeds} | {sum(self.faults[k] for k in self.faults if not k.startswith('msg_')):,} "
                f"| {violations} | {self.unclean_elections} / {self.unclean_losses} | {self.seeds_per_minute:,.0f} "
                f"| {self.sim_per_wall:,.0f} |")


class ProgressBar:
    """A one-line progress bar on a terminal stream (redrawn in place)."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        self.total = total
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.done = 0
        self.failed = 0

    def update(self, failed: bool) -> None:
        self.done += 1
        self.failed += int(failed)
        filled = int(self.width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} seeds, {self.failed} failing")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def run_summary(scenario: str, seeds: Iterable[int], config: SimConfig, jobs: int = 1,
                progress: bool = True, on_failure: Callable[[SimResult], None] | None = None) -> Summary:
    """Run the seeds with a progress bar; call ``on_failure`` for each failing seed."""
    seeds = list(seeds)
    summary = Summary(scenario, normalize_ibp(config.ibp), config.metadata_mode)
    bar = ProgressBar(len(seeds), f"{scenario} ({config.ibp or 'default'}, {config.metadata_mode})") if progress else None
    start = throughput_clock()
    for outcome in run_seeds(scenario, seeds, config, jobs):
        summary.add(outcome)
        if bar is not None:
            bar.update(not outcome.result.ok)
        if not outcome.result.ok and on_failure is not None:
            on_failure(outcome.result)
    summary.wall_s = throughput_clock() - start
    if bar is not None:
        bar.close()
    return summary
