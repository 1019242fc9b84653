"""The ``kafka-ref sim`` and ``kafka-ref scenario`` commands (wired into kafka_ref/cli.py).

``kafka-ref sim --scenario NAME --seeds 1000 [--ibp 0.10.2] [--jobs 2]`` runs many seeds with a
progress bar and prints the summary table; ``kafka-ref sim --scenario NAME --seed 42 --trace``
replays one seed as a readable timeline. ``kafka-ref scenario NAME [--debug]`` prints a
narrated walkthrough keyed to the seeds' numbered steps.
"""

from __future__ import annotations

import argparse
from typing import Callable

from typing import TYPE_CHECKING

from kafka_ref.sim.scenarios import ERAS, SCENARIOS, normalize_ibp

if TYPE_CHECKING:
    from kafka_ref.sim.history import Event
    from kafka_ref.sim.simulate import SimResult

# Events the default --trace leaves out (the per-record traffic and per-fetch chatter).
_QUIET_EVENTS = frozenset({"produce", "produce_ack", "consume", "high_watermark_updated", "produce_failed",
                           "produce_error", "produce_skipped", "offset_commit", "offset_commit_result",
                           "metadata_cache_updated", "consumer_out_of_range_ignored"})


def add_sim_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenario", default="leader-failover",
                        help=f"scenario, or 'all' ({', '.join(SCENARIOS)})")
    parser.add_argument("--seeds", type=int, default=None, help="how many seeds to run (from --first-seed)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None, help="run (replay) one seed")
    parser.add_argument("--ibp", default=None,
                        help=f"inter.broker.protocol.version: an era ({', '.join(ERAS)}) or a version")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--trace", action="store_true", help="with --seed: print the run as a timeline")
    parser.add_argument("--trace-all", action="store_true", help="like --trace, with every produce/consume event")
    parser.add_argument("--duration", type=float, default=None, help="simulated seconds before healing")
    parser.add_argument("--metadata-mode", default="zk", help="cluster metadata mode: zk or kraft")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table row per scenario")
    parser.add_argument("--no-progress", action="store_true")


def run_sim_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Returns 1 when any seed broke an invariant, else 0."""
    from kafka_ref.sim.simulate import SimConfig, check_config, simulate

    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in names:
        if name not in SCENARIOS:
            out(f"unknown scenario {name!r}; available: {', '.join(SCENARIOS)}")
            return 2
    config = SimConfig(ibp=normalize_ibp(args.ibp), metadata_mode=args.metadata_mode, duration_s=args.duration,
                       keep_history=args.trace or args.trace_all)
    try:
        check_config(config)
    except ValueError as exc:
        out(str(exc))
        return 2
    if args.seed is not None:
        failed = False
        for name in names:
            result = simulate(args.seed, name, config)
            _print_one(result, out, trace=args.trace or args.trace_all, everything=args.trace_all)
            failed |= not result.ok
        return 1 if failed else 0
    from kafka_ref.sim.progress import run_summary

    seeds = range(args.first_seed, args.first_seed + (args.seeds or 100))
    failed = False
    rows = []
    for name in names:
        def report(result: "SimResult") -> None:
            if not args.no_progress:
                out("")
            out(f"seed {result.seed} broke {', '.join(sorted(result.violation_counts))}; replay: "
                f"{result.replay_command()}")

        summary = run_summary(name, seeds, config, jobs=args.jobs, progress=not args.no_progress, on_failure=report)
        out(summary.table())
        rows.append(summary.markdown_row())
        failed |= bool(summary.failed_seeds)
    if args.markdown:
        out(MARKDOWN_HEADER)
        for row in rows:
            out(row)
    return 1 if failed else 0


MARKDOWN_HEADER = ("| scenario | mode | era | seeds | faults | seeds with violations (by invariant) | unclean elections / "
                   "acked writes lost to them | seeds/min | sim s per wall s |\n|---|---|---|---|---|---|---|---|---|")


def _print_one(result: "SimResult", out: Callable[[str], None], trace: bool, everything: bool) -> None:
    era = result.ibp or "default"
    if trace and result.history is not None:
        referenced = {v.event_index for v in result.violations}

        def shown(event: "Event") -> bool:
            return everything or event.name not in _QUIET_EVENTS or event.index in referenced or (
                event.name == "produce_ack" and event.fields.get("acks") == -1 and event.index in referenced)

        out(f"timeline of seed {result.seed}, scenario {result.scenario}, era {era} "
            f"(produce/consume traffic {'shown' if everything else 'left out: --trace-all shows it'}):")
        for line in result.history.timeline(shown):
            out(line)
    out(f"seed {result.seed} scenario {result.scenario} era {era}: {result.events} events, "
        f"{result.simulated_s:.1f} simulated s, history sha256 {result.digest}")
    out(f"  faults: {', '.join(f'{k}={v}' for k, v in result.faults.items()) or 'none'}")
    out(f"  workload: {', '.join(f'{k}={v}' for k, v in result.workload.items())}; unclean elections "
        f"{result.unclean_elections} (acked writes lost to them {result.unclean_losses}), acks=1 writes lost "
        f"{result.acks1_losses}")
    if result.ok:
        out("  no invariant violated")
        return
    out(f"  {sum(result.violation_counts.values())} violation(s):")
    for violation in result.violations:
        out(f"    {violation.describe()}")
    out(f"  replay: {result.replay_command()}")


def add_scenario_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", default=None, help="walkthrough name (leave out to list them)")
    parser.add_argument("--debug", action="store_true", help="stop in the debugger (breakpoint()) at each step")


def run_scenario_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    from kafka_ref.sim.narrated import NARRATED, run_narrated

    if args.name is None:
        out("narrated scenarios:")
        for name, (description, _fn) in NARRATED.items():
            out(f"  {name:<28} {description}")
        return 0
    return run_narrated(args.name, debug=args.debug, out=out)
