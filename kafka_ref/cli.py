"""The ``kafka-ref`` command."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-ref",
        description="kafka_ref: an executable, annotated specification of Apache Kafka's broker internals.",
    )
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="narrated run of a three-broker cluster in virtual time")
    demo.add_argument("flow", nargs="?", default="failover", help="which flow to narrate: failover (default), deletion, reassignment, preferred-election, controlled-shutdown, coordinator-failover")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--backend", choices=("trio", "asyncio"), default="trio")
    demo.add_argument("--mode", choices=("zk", "kraft"), default="zk", help="metadata mode of the cluster (default: zk)")
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
    from kafka_ref.kafka_map import add_map_arguments

    add_map_arguments(sub.add_parser("map", help="the Kafka map: every mirrored Kafka method, where it lives, which seed step it serves"))
    from kafka_ref.wire.shell import add_serve_arguments

    add_serve_arguments(sub.add_parser("serve", help="a cluster on localhost for real Kafka clients, with fault commands"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from kafka_ref.demos.demo import run_demo

        return run_demo(args.flow, seed=args.seed, backend=args.backend, mode=args.mode)
    if args.command == "sweep":
        from benchmarks.sweep import run_from_args

        return run_from_args(args)
    if args.command == "bench":
        import importlib

        return importlib.import_module(f"benchmarks.{args.what}").main(args.rest)
    if args.command == "sim":
        from kafka_ref.sim.commands import run_sim_command

        return run_sim_command(args)
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
