"""The ``kafka-ref raft-sim`` command (wired into kafka_ref/cli.py): the controller quorum simulator.

``kafka-ref raft-sim --scenario all --seeds 1000 [--first-seed 0] [--jobs 2]`` runs
kafka_ref/sim/raft_sim.py's scenarios (after Kafka's RaftEventSimulationTest) over many seeds
with a progress bar and prints one summary per scenario: seeds, seeds with a violation, epochs
that had a leader, committed batches, topics created, seeds per minute. A failing seed prints
the command that replays it; ``kafka-ref raft-sim --scenario NAME --seed N`` replays one seed
and prints its faults and violations. ``python -m kafka_ref.sim.raft_sim`` is the same command.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from kafka_ref.sim.commands import CommandError, add_seed_arguments, positive_float, positive_int
from kafka_ref.sim.raft_sim import RUN_S, SCENARIOS, QuorumSimResult, simulate_quorum


def add_raft_sim_arguments(parser: argparse.ArgumentParser) -> None:
    add_seed_arguments(parser, SCENARIOS, "all", 0, "run (replay) this one seed and print its faults and violations")
    parser.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: %(default)s)")
    parser.add_argument("--duration", type=positive_float, default=RUN_S,
                        help="simulated seconds of faults and workload before healing (default: %(default)g)")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table row per scenario")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is drawn only when stderr is a terminal anyway)")


@dataclass
class QuorumSummary:
    """Many seeds of one quorum scenario, aggregated."""

    scenario: str
    seeds: int = 0
    failed_seeds: list[int] = field(default_factory=list)
    first_violation: str = ""
    elections: int = 0
    committed_batches: int = 0
    topics_created: int = 0
    wall_s: float = 0.0

    def add(self, result: QuorumSimResult) -> None:
        self.seeds += 1
        self.elections += result.elections
        self.committed_batches += result.committed_batches
        self.topics_created += result.topics_created
        if result.violations:
            self.failed_seeds.append(result.seed)
            if not self.first_violation:
                self.first_violation = f"seed {result.seed}: {result.violations[0]}"

    @property
    def seeds_per_minute(self) -> float:
        return 60.0 * self.seeds / self.wall_s if self.wall_s > 0 else 0.0

    def table(self) -> str:
        lines = [f"{self.scenario}: {self.seeds} seeds, {len(self.failed_seeds)} with violations, "
                 f"{self.elections} epochs with a leader, {self.committed_batches} committed batches, "
                 f"{self.topics_created} topics created; {self.wall_s:.0f} s wall, "
                 f"{self.seeds_per_minute:.1f} seeds/min"]
        if self.failed_seeds:
            lines.append(f"  failing seeds: {', '.join(map(str, sorted(self.failed_seeds)[:20]))}"
                         f"{' ...' if len(self.failed_seeds) > 20 else ''}")
            lines.append(f"  first: {self.first_violation}")
        return "\n".join(lines)

    def markdown_row(self) -> str:
        return (f"| {self.scenario} | {self.seeds} | {len(self.failed_seeds)} | {self.elections} | "
                f"{self.wall_s:.0f} s | {self.seeds_per_minute:.1f} |")


MARKDOWN_HEADER = ("| scenario | seeds | runs with a violation | epochs with a leader (all seeds) | wall | seeds/min |\n"
                   "|---|---|---|---|---|---|")


def replay_command(scenario: str, seed: int, duration_s: float = RUN_S) -> str:
    duration = f" --duration {duration_s:g}" if duration_s != RUN_S else ""
    return f"kafka-ref raft-sim --scenario {scenario} --seed {seed}{duration}"


def _run_one(task: tuple[int, str, float]) -> QuorumSimResult:
    seed, scenario, run_s = task
    return simulate_quorum(seed, scenario, run_s)


def run_quorum_seeds(scenario: str, seeds: Iterable[int], run_s: float = RUN_S,
                     jobs: int = 1) -> Iterator[QuorumSimResult]:
    """Yield one result per seed as they finish (in seed order when ``jobs`` is 1), in worker processes
    when ``jobs`` > 1 (each run configures trio's clock per process)."""
    from kafka_ref.sim.progress import _ignore_sigint

    tasks = [(seed, scenario, run_s) for seed in seeds]
    if jobs <= 1:
        for task in tasks:
            yield _run_one(task)
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with multiprocessing.get_context(method).Pool(processes=jobs, maxtasksperchild=200,
                                                  initializer=_ignore_sigint) as pool:
        yield from pool.imap_unordered(_run_one, tasks, chunksize=1)


def run_raft_sim_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Returns 1 when any seed broke an invariant, else 0."""
    from kafka_ref.sim.progress import ProgressBar, throughput_clock

    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in names:
        if name not in SCENARIOS:
            raise CommandError(f"unknown scenario {name!r}; available: {', '.join(SCENARIOS)}, all")
    if args.seed is not None and args.seeds is not None:
        raise CommandError("--seed replays one seed and --seeds runs many: give one of them")
    if args.seed is not None:
        failed = False
        for name in names:
            result = simulate_quorum(args.seed, name, args.duration)
            out(f"seed {result.seed} scenario {name}: {result.elections} epochs with a leader, "
                f"{result.committed_batches} committed batches, {result.topics_created} topics created")
            for event in result.events:
                out(f"  {event}")
            if result.violations:
                out(f"  {len(result.violations)} violation(s):")
                for violation in result.violations:
                    out(f"    {violation}")
                failed = True
            else:
                out("  no invariant violated")
        return 1 if failed else 0
    seeds = range(args.first_seed, args.first_seed + (args.seeds or 100))
    progress = not args.no_progress and sys.stderr.isatty()
    failed = False
    rows = []
    for name in names:
        summary = QuorumSummary(name)
        bar = ProgressBar(len(seeds), name) if progress else None
        start = throughput_clock()
        for result in run_quorum_seeds(name, seeds, args.duration, args.jobs):
            summary.add(result)
            if bar is not None:
                bar.update(bool(result.violations))
            if result.violations:
                if bar is not None:
                    out("")
                out(f"seed {result.seed} broke {result.violations[0]}; replay: "
                    f"{replay_command(name, result.seed, args.duration)}")
        summary.wall_s = throughput_clock() - start
        if bar is not None:
            bar.close()
        out(summary.table())
        rows.append(summary.markdown_row())
        failed |= bool(summary.failed_seeds)
    if args.markdown:
        out(MARKDOWN_HEADER)
        for row in rows:
            out(row)
    return 1 if failed else 0
