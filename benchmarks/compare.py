"""A/B: the headline measures on this working tree and on a git revision, interleaved.

    python -m benchmarks.compare --baseline facf70e [--reps 3] [--scale 1.0] [measure|config ...]
    kafka-ref bench compare --baseline facf70e ...

The revision is checked out in a temporary ``git worktree`` (removed afterwards). Every measure
runs in a fresh Python process per side (``benchmarks/headline.py --worker``, this tree's copy of
the measuring code, importing ``kafka_ref`` and ``benchmarks`` from the side's checkout), and the
two sides alternate (A B, then B A, ...) so a machine that gets busier or quieter during the run
hurts both alike. Each cell is the median over ``--reps``.

Arguments are measure names (``r1 r100 idle100 idle1000 sim calls``, default all six) or a
fetch-throughput configuration written ``key=value,key=value`` (its records/s is compared).
The last column says whether the working tree meets the issue's target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.headline import MEASURES, label, load_average

ROOT = Path(__file__).resolve().parent.parent
HEADLINE = Path(__file__).resolve().parent / "headline.py"

LOWER_IS_BETTER = {"calls"}


def run_side(tree: Path, name: str, scale: float, timeout_s: float) -> dict[str, Any]:
    """One measure in a fresh interpreter with ``tree`` first on the import path."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, str(HEADLINE), "--worker", name, "--scale", str(scale)]
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout_s:.0f} s"}
    for line in proc.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    return {"ok": False, "error": (proc.stderr.strip().splitlines() or ["no result"])[-1]}


def target_met(name: str, new: float, base: float) -> str:
    if name == "r1":
        return "yes" if new >= 0.5 else "no"
    if name == "r100":
        return "yes" if new >= 10 * base else "no"
    if name == "idle100":
        return "yes" if new >= 500 else "no"
    if name == "idle1000":
        return "yes" if new >= 50 else "no"
    if name == "sim":
        return "yes" if new >= 5 * base else "no"
    if name == "calls":
        return "yes" if new <= 250 else "no"
    return ""


def _median(results: list[dict[str, Any]], key: str = "value") -> float | None:
    values = [r[key] for r in results if r.get("ok") and isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def _fmt(v: float | None) -> str:
    if v is None:
        return "failed"
    return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.1f}"


def compare(baseline: str, names: list[str], reps: int, scale: float, timeout_s: float,
            out=print) -> list[dict[str, Any]]:
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", baseline], capture_output=True,
                         text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="kafka_ref_baseline_"))
    base_tree = tmp / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base_tree), rev],
                   check=True, capture_output=True)
    results: dict[str, dict[str, list[dict[str, Any]]]] = {n: {"base": [], "new": []} for n in names}
    started = time.perf_counter()
    loads = [load_average()]
    try:
        out(f"# baseline {rev}, working tree {head}{' (with uncommitted changes)' if dirty else ''}; "
            f"{reps} rep(s), scale {scale}; load average at start {loads[0]}", flush=True)
        step = 0
        for rep in range(reps):
            for name in names:
                sides = [("base", base_tree), ("new", ROOT)]
                if step % 2:
                    sides.reverse()
                step += 1
                for side, tree in sides:
                    r = run_side(tree, name, scale, timeout_s)
                    results[name][side].append(r)
                    shown = _fmt(r["value"]) if r.get("ok") else r.get("error")
                    out(f"#   rep {rep + 1} {name:9s} {side:4s} {shown}", flush=True)
            loads.append(load_average())
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)], capture_output=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)
        try:
            tmp.rmdir()
        except OSError:
            pass
    rows = []
    out("")
    out(f"| measure | {rev} | {head}{'+' if dirty else ''} | new ÷ base | target | met |")
    out("|---|---|---|---|---|---|")
    for name in names:
        base, new = _median(results[name]["base"]), _median(results[name]["new"])
        ratio = new / base if base and new is not None else None
        text, _unit, target = label(name)
        met = target_met(name, new, base) if base is not None and new is not None else ""
        rows.append({"measure": name, "base": base, "new": new, "ratio": ratio, "met": met,
                     "base_runs": results[name]["base"], "new_runs": results[name]["new"]})
        out(f"| {text} | {_fmt(base)} | {_fmt(new)} | {_fmt(ratio)}× | {target} | {met} |")
    out("")
    out(f"# {time.perf_counter() - started:.0f} s; load average (1/5/15 min) per rep: {' | '.join(loads)}")
    for name in names:
        for side in ("base", "new"):
            extras = [{k: v for k, v in r.items() if k not in ("ok",)} for r in results[name][side]]
            out(f"#   {name} {side}: {json.dumps(extras)}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.splitlines()[0])
    parser.add_argument("measures", nargs="*", help=f"{', '.join(MEASURES)} or key=value,key=value (default: all six)")
    parser.add_argument("--baseline", required=True, help="git revision to compare against (e.g. facf70e)")
    parser.add_argument("--reps", type=int, default=3, help="runs per side per measure; the median is shown")
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor (records, seeds, sim s)")
    parser.add_argument("--timeout", type=float, default=900.0, help="wall seconds per single run")
    args = parser.parse_args(argv)
    compare(args.baseline, args.measures or list(MEASURES), args.reps, args.scale, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
