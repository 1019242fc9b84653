"""The simulator's long run: many seeds of every scenario, in every era and both metadata modes.

    python -m benchmarks.sim_long_run --seeds 500 --kraft-seeds 100 --era-seeds 50 --jobs 2 \
        --out docs/sim_long_run.md

Writes a markdown file with one table row per (scenario, mode, era) as each finishes (so a run
cut short keeps what it did), followed by the full per-run summaries (faults by kind, first
violation of each invariant, failing seeds). The README's simulation table is this file's
table. Legacy eras are expected to break invariants on their scenarios (kip101 under 0.10.2,
kip279 under 0.11); the default era and KRaft mode are expected to break none.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kafka_ref.sim.commands import MARKDOWN_HEADER
from kafka_ref.sim.progress import run_summary
from kafka_ref.sim.scenarios import SCENARIOS
from kafka_ref.sim.simulate import SimConfig

LEGACY_ERAS = ("0.10.2", "0.11", "2.0")


def plan(seeds: int, kraft_seeds: int, era_seeds: int, modes: tuple[str, ...] = ("zk", "kraft"),
         eras: tuple[str, ...] = LEGACY_ERAS) -> list[tuple[str, str, str | None, int]]:
    """(scenario, metadata mode, era, seeds) for every row of the table."""
    rows = [(name, "zk", None, seeds) for name in SCENARIOS]
    rows += [(name, "kraft", None, kraft_seeds) for name in SCENARIOS]
    rows += [(name, "zk", era, era_seeds) for era in eras for name in SCENARIOS]
    return [row for row in rows if row[3] > 0 and row[1] in modes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=500, help="seeds per scenario, default era, ZooKeeper mode")
    parser.add_argument("--kraft-seeds", type=int, default=100, help="seeds per scenario, default era, KRaft mode")
    parser.add_argument("--era-seeds", type=int, default=50, help="seeds per scenario in each legacy era")
    parser.add_argument("--modes", default="zk,kraft", help="which metadata modes' rows to run (comma-separated)")
    parser.add_argument("--eras", default=",".join(LEGACY_ERAS), help="which legacy eras' rows to run (comma-separated)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("docs/sim_long_run.md"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows: list[str] = []
    details: list[str] = []

    def write(final: bool) -> None:
        minutes = (time.perf_counter() - started) / 60
        status = "complete" if final else "in progress"
        text = [f"# Simulator long run ({status}, {minutes:.0f} min of wall time, --jobs {args.jobs})", "",
                "`python -m benchmarks.sim_long_run " + " ".join(sys.argv[1:] if argv is None else argv) + "`", "",
                MARKDOWN_HEADER, *rows, "", "## Summaries", "", "```", *details, "```", ""]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(text))

    eras = tuple(e for e in args.eras.split(",") if e)
    for scenario, mode, era, seeds in plan(args.seeds, args.kraft_seeds, args.era_seeds, tuple(args.modes.split(",")), eras):
        config = SimConfig(ibp=era, metadata_mode=mode)
        summary = run_summary(scenario, range(1, seeds + 1), config, jobs=args.jobs, progress=sys.stderr.isatty())
        rows.append(summary.markdown_row())
        details.append(summary.table())
        print(summary.markdown_row(), flush=True)
        write(final=False)
    write(final=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
