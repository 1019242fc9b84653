"""The ``kafka-ref`` command.

A command line it cannot run (a bad value, a flag without the one it needs, an unknown grid) is
reported as one line, ``kafka-ref <command>: error: ...``, with exit status 2; Ctrl-C prints one
line and exits 130. Errors inside kafka_ref itself keep their traceback: they are bugs to report.
"""

from __future__ import annotations

import argparse
import bdb
import sys
from typing import NoReturn


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (the usage text is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from kafka_ref.common.layout import add_width_arguments
    from kafka_ref.sim.commands import non_negative_int

    parser = OneLineErrorParser(
        prog="kafka-ref",
        description="kafka_ref: an executable, annotated specification of Apache Kafka's broker internals.",
    )
    sub = parser.add_subparsers(dest="command", parser_class=OneLineErrorParser)
    demo = sub.add_parser("demo", help="narrated run of a three-broker cluster in virtual time")
    demo.add_argument("flow", nargs="?", default="failover", help="which flow to narrate: failover (default), deletion, reassignment, preferred-election, controlled-shutdown, coordinator-failover")
    demo.add_argument("--seed", type=non_negative_int, default=7,
                      help="seeds the cluster's randomness and the task schedule: the same seed prints the "
                           "same lines (default: %(default)s)")
    demo.add_argument("--backend", choices=("trio", "asyncio"), default="trio",
                      help="event loop, both in virtual time (default: %(default)s)")
    demo.add_argument("--mode", choices=("zk", "kraft"), default="zk", help="metadata mode of the cluster (default: zk)")
    add_width_arguments(demo)
    sweep = sub.add_parser("sweep", help="run a fetch-throughput benchmark grid in Spark executors (needs .[bench])")
    sweep.add_argument("--grid", default="quick", help="grid name (quick, default, scale) or a TOML path")
    sweep.add_argument("--out", default="results", help="output directory (default: results/)")
    sweep.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")
    bench = sub.add_parser("bench", help="hot-path measures: compare (A/B against a git revision) or headline")
    bench.add_argument("what", choices=("compare", "headline"))
    bench.add_argument("rest", nargs=argparse.REMAINDER, help="arguments of python -m benchmarks.<what>")
    from kafka_ref.sim.commands import add_scenario_arguments, add_sim_arguments

    add_sim_arguments(sub.add_parser("sim", help="deterministic simulation: seeded faults, invariant checks, replay"))
    add_scenario_arguments(sub.add_parser("scenario", help="narrated walkthrough keyed to the seeds' numbered steps"))
    from kafka_ref.sim.raft_sim_command import add_raft_sim_arguments

    add_raft_sim_arguments(sub.add_parser("raft-sim", help="the KRaft controller quorum (3 voters) under faults, "
                                                           "checked against Raft's invariants"))
    from kafka_ref.kafka_map import add_map_arguments

    add_map_arguments(sub.add_parser("map", help="the Kafka map: every mirrored Kafka method, where it lives, which seed step it serves"))
    from kafka_ref.wire.shell import add_serve_arguments

    add_serve_arguments(sub.add_parser("serve", help="a cluster on localhost for real Kafka clients, with fault commands"))
    return parser


def main(argv: list[str] | None = None) -> int:
    from kafka_ref.common.gc_tuning import tune_gc

    tune_gc()  # kafka_ref's own process: its collector setting (kafka_ref/common/gc_tuning.py)
    command = "kafka-ref"
    try:
        from kafka_ref.sim.commands import CommandError

        parser = build_parser()
        args = parser.parse_args(argv)
        command = f"kafka-ref {args.command}" if args.command else command
        try:
            return _run(parser, args)
        except CommandError as exc:
            print(f"{command}: error: {exc}", file=sys.stderr)
            return 2
        except bdb.BdbQuit:
            print(f"{command}: quit from the debugger", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        # Start on a fresh line if a progress bar was being redrawn on this terminal.
        lead = "\n" if sys.stderr.isatty() else ""
        print(f"{lead}{command}: interrupted", file=sys.stderr)
        return 130


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from kafka_ref.common.layout import WIDTH

    if args.command == "demo":
        from kafka_ref.demos.demo import run_demo

        return run_demo(args.flow, seed=args.seed, backend=args.backend, mode=args.mode,
                        width=None if args.wide else WIDTH)
    if args.command == "sweep":
        from benchmarks.sweep import run_from_args

        return run_from_args(args)
    if args.command == "bench":
        import importlib

        return importlib.import_module(f"benchmarks.{args.what}").main(args.rest)
    if args.command == "sim":
        from kafka_ref.sim.commands import run_sim_command

        return run_sim_command(args)
    if args.command == "raft-sim":
        from kafka_ref.sim.raft_sim_command import run_raft_sim_command

        return run_raft_sim_command(args)
    if args.command == "scenario":
        from kafka_ref.sim.commands import run_scenario_command

        return run_scenario_command(args)
    if args.command == "map":
        from kafka_ref.kafka_map import run_map_command

        return run_map_command(args)
    if args.command == "serve":
        from kafka_ref.wire.shell import run_serve_command

        return run_serve_command(args)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
