"""The ``kafka-ref sim`` and ``kafka-ref scenario`` commands (wired into kafka_ref/cli.py).

``kafka-ref sim --scenario NAME --seeds 1000 [--ibp 0.10.2] [--jobs 2]`` runs many seeds with a
progress bar and prints the summary table (``--master local[*] | spark://…`` spreads them over Spark
executors instead and writes per-seed Parquet: kafka_ref/sim/spark_seeds.py); ``kafka-ref sim --scenario NAME --seed 42 --trace``
replays one seed as a readable timeline. ``kafka-ref scenario NAME [--debug]`` prints a
narrated walkthrough keyed to the seeds' numbered steps.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Callable, Iterable

from kafka_ref.common.layout import WIDTH, add_width_arguments, wrap
from kafka_ref.sim.scenarios import ERAS, SCENARIOS, normalize_ibp

if TYPE_CHECKING:
    from kafka_ref.sim.timeline_svg import TimelineRecorder
    from kafka_ref.sim.history import Event
    from kafka_ref.sim.simulate import SimResult

# Events the default --trace leaves out (the per-record traffic and per-fetch chatter).
_QUIET_EVENTS = frozenset({"produce", "produce_ack", "consume", "high_watermark_updated", "produce_failed",
                           "produce_error", "produce_skipped", "offset_commit", "offset_commit_result",
                           "metadata_cache_updated", "consumer_out_of_range_ignored"})


class CommandError(Exception):
    """A command line the command cannot run; ``kafka-ref`` prints it as one line and exits 2."""


def _whole_number(text: str, minimum: int, bound: str) -> int:
    """argparse helper: ``text`` as an int of at least ``minimum`` (``bound`` says so in the error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{bound}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    return _whole_number(text, 1, "must be at least 1")


def non_negative_int(text: str) -> int:
    """argparse type: a whole number of at least 0 (seeds)."""
    return _whole_number(text, 0, "must be 0 or more")


def positive_float(text: str) -> float:
    """argparse type: a number above 0 (simulated seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def add_seed_arguments(parser: argparse.ArgumentParser, scenarios: Iterable[str], default_scenario: str,
                       first_seed: int, seed_help: str) -> None:
    """The options both simulators share: which scenario, which seeds."""
    parser.add_argument("--scenario", default=default_scenario,
                        help=f"scenario, or 'all' ({', '.join(scenarios)}; default: %(default)s)")
    parser.add_argument("--seeds", type=positive_int, default=None,
                        help="how many seeds to run, starting at --first-seed (default: 100)")
    parser.add_argument("--first-seed", type=non_negative_int, default=first_seed,
                        help="the first seed of a --seeds run (default: %(default)s)")
    parser.add_argument("--seed", type=non_negative_int, default=None, help=seed_help)


def add_sim_arguments(parser: argparse.ArgumentParser) -> None:
    add_seed_arguments(parser, SCENARIOS, "leader-failover", 1, "run (replay) this one seed; --trace prints its timeline")
    parser.add_argument("--ibp", default=None,
                        help=f"inter.broker.protocol.version: an era ({', '.join(ERAS)}) or a Kafka release "
                             "from 0.10.0 to 3.8 (default: the current rules)")
    parser.add_argument("--jobs", type=positive_int, default=1, help="worker processes (default: %(default)s)")
    parser.add_argument("--trace", action="store_true", help="with --seed: print the run as a timeline")
    parser.add_argument("--trace-all", action="store_true", help="like --trace, with every produce/consume event")
    parser.add_argument("--svg", metavar="PATH", default=None,
                        help="with --seed: draw the run as an SVG timeline (brokers, epochs, LEO/HW, faults)")
    parser.add_argument("--duration", type=positive_float, default=None,
                        help="simulated seconds of faults before healing (default: the scenario's own)")
    parser.add_argument("--metadata-mode", choices=("zk", "kraft"), default="zk",
                        help="cluster metadata mode (default: %(default)s)")
    parser.add_argument("--controllers", type=positive_int, default=1,
                        help="with --metadata-mode kraft: controller quorum voters; more than 1 adds voter kills and "
                             "partitions to the controller faults and checks the Raft invariants (default: %(default)s)")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table row per scenario")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it is drawn only when stderr is a terminal anyway)")
    add_width_arguments(parser)
    parser.add_argument("--master", default=None,
                        help="run the seeds on Spark executors (local[*], spark://host:7077; needs the bench extra)")
    parser.add_argument("--out", default="results/sim", help="with --master: where the per-seed Parquet goes")


def run_sim_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    """Returns 1 when any seed broke an invariant, else 0."""
    from kafka_ref.sim.simulate import SimConfig, check_config, simulate

    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in names:
        if name not in SCENARIOS:
            raise CommandError(f"unknown scenario {name!r}; available: {', '.join(SCENARIOS)}, all")
    one_seed_only = [flag for flag, on in (("--trace", args.trace), ("--trace-all", args.trace_all),
                                           ("--svg", getattr(args, "svg", None))) if on]
    if one_seed_only and args.seed is None:
        raise CommandError(f"{one_seed_only[0]} replays one run: give it --seed N")
    if args.seed is not None and args.seeds is not None:
        raise CommandError("--seed replays one seed and --seeds runs many: give one of them")
    config = SimConfig(ibp=normalize_ibp(args.ibp), metadata_mode=args.metadata_mode, duration_s=args.duration,
                       keep_history=bool(args.trace or args.trace_all or getattr(args, "svg", None)),
                       controllers=getattr(args, "controllers", 1))
    try:
        check_config(config)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.seed is not None:
        from kafka_ref.sim.timeline_svg import TimelineRecorder

        if args.svg and len(names) > 1:
            raise CommandError("--svg draws one run: give one --scenario, not 'all'")
        failed = False
        for name in names:
            recorder = TimelineRecorder(title=f"kafka-ref sim --scenario {name} --seed {args.seed}"
                                              f"{' --ibp ' + args.ibp if args.ibp else ''} ({args.metadata_mode})",
                                        topic="sim") if args.svg else None
            result = simulate(args.seed, name, config, recorder=recorder)
            _print_one(result, out, trace=args.trace or args.trace_all, everything=args.trace_all,
                       width=None if getattr(args, "wide", False) else WIDTH)
            if recorder is not None:
                _write_svg(args.svg, recorder, out)
            failed |= not result.ok
        return 1 if failed else 0
    from kafka_ref.sim.progress import run_summary

    seeds = range(args.first_seed, args.first_seed + (args.seeds or 100))
    # A bar redrawn with carriage returns only makes sense on a terminal (not in a log or a pipe).
    progress = not args.no_progress and sys.stderr.isatty()
    failed = False
    rows = []
    for name in names:
        def report(result: "SimResult") -> None:
            if progress:
                out("")
            out(f"seed {result.seed} broke {', '.join(sorted(result.violation_counts))}; replay: "
                f"{result.replay_command()}")

        if getattr(args, "master", None):
            from kafka_ref.sim.spark_seeds import run_summary_on_spark

            summary, parquet = run_summary_on_spark(name, seeds, config, args.master, args.out,
                                                    progress=progress, on_failure=report)
            out(f"per-seed outcomes: {parquet}")
        else:
            summary = run_summary(name, seeds, config, jobs=args.jobs, progress=progress, on_failure=report)
        out(summary.table())
        rows.append(summary.markdown_row())
        failed |= bool(summary.failed_seeds)
    if args.markdown:
        out(MARKDOWN_HEADER)
        for row in rows:
            out(row)
    return 1 if failed else 0


def _write_svg(path: str, recorder: "TimelineRecorder", out: Callable[[str], None]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(recorder.svg())
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
    out(f"timeline written to {path}")


MARKDOWN_HEADER = ("| scenario | mode | era | seeds | faults | seeds with violations (by invariant) | unclean elections / "
                   "acked writes lost to them | seeds/min | sim s per wall s |\n|---|---|---|---|---|---|---|---|---|")


def _print_one(result: "SimResult", out: Callable[[str], None], trace: bool, everything: bool,
               width: int | None = WIDTH) -> None:
    era = result.ibp or "default"
    raw_out = out

    def out(text: str) -> None:  # noqa: F811 - every line laid out for the terminal width
        for part in wrap(text, width):
            raw_out(part)

    if trace and result.history is not None:
        referenced = {v.event_index for v in result.violations}

        def shown(event: "Event") -> bool:
            return everything or event.name not in _QUIET_EVENTS or event.index in referenced or (
                event.name == "produce_ack" and event.fields.get("acks") == -1 and event.index in referenced)

        out(f"timeline of seed {result.seed}, scenario {result.scenario}, era {era} "
            f"(produce/consume traffic {'shown' if everything else 'left out: --trace-all shows it'}):")
        for line in result.history.timeline(shown, width=width):
            raw_out(line)
    out(f"seed {result.seed} scenario {result.scenario} era {era}: {result.events} events, "
        f"{result.simulated_s:.1f} simulated s")
    out(f"  history sha256 {result.digest}")
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
    parser.add_argument("--svg", metavar="PATH", default=None,
                        help="also draw the run as an SVG timeline (brokers, leader epochs, LEO/HW, events)")
    add_width_arguments(parser)


def run_scenario_command(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    from kafka_ref.sim.narrated import NARRATED, run_narrated

    if args.name is None:
        out("narrated scenarios:")
        for name, (description, _fn) in NARRATED.items():
            out(f"  {name:<28} {description}")
        return 0
    from kafka_ref.sim.narrated import NARRATED as WALKTHROUGHS

    if args.name not in WALKTHROUGHS:
        raise CommandError(f"unknown scenario {args.name!r}; available: {', '.join(WALKTHROUGHS)}")
    if args.svg is not None:
        try:
            open(args.svg, "a", encoding="utf-8").close()
        except OSError as exc:
            raise CommandError(f"cannot write {args.svg}: {exc.strerror}") from None
    return run_narrated(args.name, debug=args.debug, out=out, svg=args.svg,
                        width=None if args.wide else WIDTH)
