"""A sweep's outputs: the results DataFrame (Parquet), CSV, plots and a Markdown summary.

Plain Python over the result dicts (no pandas needed); Spark only writes the Parquet file.
Plots use matplotlib's Agg backend (no display).
"""

from __future__ import annotations

import csv
import json
import os
import platform
from pathlib import Path
from statistics import mean
from typing import Any

LEAD_COLUMNS = ["config_id", "repeat", "runner", "ok", "error"]
METRIC_COLUMNS = [
    "records_per_s", "batches_per_s", "mb_per_s", "follower_records_per_s", "fetch_requests_per_s",
    "batches_per_fetch", "bytes_per_fetch", "produce_acks", "produce_p50_loop_ms", "produce_p99_loop_ms",
    "produce_p50_wall_ms", "produce_p99_wall_ms", "hw_lag_mean", "hw_lag_max", "isr_shrinks",
    "records", "batches", "bytes", "wall_s", "loop_s", "sim_per_wall", "cpu_s", "records_per_cpu_s",
    "fetch_requests_per_cpu_s", "peak_rss_mb", "limit_records_per_s", "limit_fetch_requests_per_s",
    "limit_records_per_cpu_s", "limit_ratio", "limit_ratio_cpu", "limit_error",
]
TABLE_METRICS = [("records_per_s", "records/s", "{:,.0f}"), ("mb_per_s", "MB/s", "{:.1f}"),
                 ("fetch_requests_per_s", "fetches/s", "{:,.0f}"), ("batches_per_fetch", "batches/fetch", "{:.2f}"),
                 ("produce_p99_loop_ms", "p99 ms", "{:.2f}"), ("limit_ratio", "limit ratio", "{:.3f}"),
                 ("limit_ratio_cpu", "limit ratio (CPU)", "{:.3f}")]


def columns_of(results: list[dict[str, Any]], axes: list[str]) -> list[str]:
    """A stable column order: ids, the axes' config columns, metrics, then everything else."""
    seen: list[str] = []
    present = {k for r in results for k in r}
    axis_cols = ["cfg_" + a.replace(".", "_") for a in axes]
    for col in LEAD_COLUMNS + axis_cols + METRIC_COLUMNS:
        if col in present and col not in seen:
            seen.append(col)
    seen.extend(sorted(present - set(seen)))
    return seen


def _spark_type(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "string"
    if kinds == {bool}:
        return "boolean"
    if kinds <= {int}:
        return "bigint"
    if kinds <= {int, float}:
        return "double"
    return "string"


def _cell(value: Any, spark_type: str) -> Any:
    if value is None:
        return None
    if spark_type == "double":
        return float(value)
    if spark_type == "string" and not isinstance(value, str):
        return json.dumps(value)
    return value


def results_dataframe(spark: Any, results: list[dict[str, Any]], columns: list[str]) -> Any:
    """The results as a Spark DataFrame with one typed column per key."""
    types = {c: _spark_type([r.get(c) for r in results]) for c in columns}
    schema = ", ".join(f"`{c}` {types[c]}" for c in columns)
    rows = [tuple(_cell(r.get(c), types[c]) for c in columns) for r in results]
    return spark.createDataFrame(rows, schema)


def aggregate(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration: numeric metrics averaged over its successful repeats."""
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_id.setdefault(r.get("config_id", "?"), []).append(r)
    rows = []
    for cid, runs in by_id.items():
        ok = [r for r in runs if r.get("ok")]
        row = dict(runs[0])
        row["repeats_ok"] = len(ok)
        row["ok"] = bool(ok)
        for key in METRIC_COLUMNS:
            values = [r[key] for r in ok if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
            row[key] = mean(values) if values else None
        rows.append(row)
    return rows


def _axis_values(grid: dict[str, Any], axis: str) -> list[Any]:
    return list(grid["axes"][axis])


def _config(row: dict[str, Any]) -> dict[str, Any]:
    return json.loads(row.get("config_json") or "{}")


def write_plots(grid: dict[str, Any], rows: list[dict[str, Any]], out_dir: Path) -> dict[str, Path]:
    """plot_<axis>.png: mean records/s against each axis, one line per value of a second axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths: dict[str, Path] = {}
    axes = [a for a in grid["axes"] if len(grid["axes"][a]) > 1]
    ok_rows = [r for r in rows if r.get("ok")]
    if not ok_rows:
        return paths
    for x_axis in axes:
        preferred = grid.get("series")
        others = [a for a in axes if a != x_axis]
        series_axis = preferred if preferred in others else (others[0] if others else None)
        x_values = _axis_values(grid, x_axis)
        series_values = _axis_values(grid, series_axis) if series_axis else [None]
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=80)
        all_y: list[float] = []
        for i, s in enumerate(series_values):
            color = f"C{i % 10}"
            for metric, style, suffix in (("records_per_s", "-o", ""), ("limit_records_per_s", ":", " (limit)")):
                xs, ys = [], []
                for xi, xv in enumerate(x_values):
                    vals = [r[metric] for r in ok_rows if r.get(metric) is not None
                            and _config(r).get(x_axis) == xv and (series_axis is None or _config(r).get(series_axis) == s)]
                    if vals:
                        xs.append(xi)
                        ys.append(mean(vals))
                if xs:
                    label = (f"{series_axis}={s}" if series_axis else "kafka_ref") + suffix
                    ax.plot(xs, ys, style, color=color, label=label, linewidth=1.5 if not suffix else 1.0)
                    all_y.extend(ys)
        ax.set_xticks(range(len(x_values)))
        ax.set_xticklabels([str(v) for v in x_values])
        ax.set_xlabel(x_axis)
        ax.set_ylabel("records/s (mean over other axes)")
        if all_y and min(all_y) > 0 and max(all_y) / min(all_y) > 20:
            ax.set_yscale("log")
        ax.set_title(f"{grid['name']}: records/s by {x_axis}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / f"plot_{x_axis.replace('.', '_')}.png"
        fig.savefig(path)
        plt.close(fig)
        paths[f"plot_{x_axis}"] = path
    return paths


def _fmt(value: Any, pattern: str) -> str:
    if value is None:
        return "–"
    try:
        return pattern.format(value)
    except (ValueError, TypeError):
        return str(value)


def _table(rows: list[dict[str, Any]], axes: list[str]) -> list[str]:
    header = "| " + " | ".join(axes + [label for _k, label, _f in TABLE_METRICS]) + " |"
    lines = [header, "|" + "---|" * (len(axes) + len(TABLE_METRICS))]
    for r in rows:
        config = _config(r)
        cells = [str(config.get(a)) for a in axes] + [_fmt(r.get(k), f) for k, _l, f in TABLE_METRICS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def machine_description() -> str:
    memory = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores{memory}, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def write_summary(grid: dict[str, Any], results: list[dict[str, Any]], rows: list[dict[str, Any]], out_dir: Path,
                  master: str, sweep_wall_s: float, top: int = 5) -> Path:
    axes = list(grid["axes"])
    ok = sorted((r for r in rows if r.get("ok") and r.get("records_per_s") is not None),
                key=lambda r: r["records_per_s"], reverse=True)
    failed = [r for r in results if not r.get("ok")]
    ratios = [r["limit_ratio"] for r in ok if r.get("limit_ratio") is not None]
    commit = next((r.get("git_commit") for r in results if r.get("git_commit")), "unknown")
    lines = [
        f"# Sweep `{grid['name']}`",
        "",
        f"- machine: {machine_description()}; Spark master `{master}`; commit `{commit}`",
        f"- {len(rows)} configurations x {grid['repeats']} repeats = {len(results)} runs: "
        f"{len(results) - len(failed)} ok, {len(failed)} failed; sweep wall time {sweep_wall_s:.0f} s",
        f"- fixed: `{json.dumps(grid['fixed'], sort_keys=True)}`",
    ]
    if ratios:
        lines.append(f"- kafka_ref / limit (records/s): mean {mean(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")
    cpu_ratios = [r["limit_ratio_cpu"] for r in ok if r.get("limit_ratio_cpu") is not None]
    if cpu_ratios:
        lines.append(f"- the same per CPU second (steadier on a shared machine): mean {mean(cpu_ratios):.3f}, "
                     f"min {min(cpu_ratios):.3f}, max {max(cpu_ratios):.3f}")
    lines += ["", f"## Best {min(top, len(ok))} configurations (records/s)", ""] + _table(ok[:top], axes)
    lines += ["", f"## Worst {min(top, len(ok))} configurations", ""] + _table(list(reversed(ok[-top:])), axes)
    if len(ok) <= 48:
        lines += ["", "## All configurations", ""] + _table(ok, axes)
    if failed:
        lines += ["", "## Failures", ""]
        for r in failed:
            lines.append(f"- `{r.get('config_json')}`: {r.get('error')}")
    path = out_dir / "summary.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_outputs(spark: Any, grid: dict[str, Any], results: list[dict[str, Any]], out_dir: Path, master: str,
                  sweep_wall_s: float) -> dict[str, Path]:
    """results.parquet (Spark), results.csv, plot_<axis>.png and summary.md under ``out_dir``."""
    axes = list(grid["axes"])
    columns = columns_of(results, axes)
    paths: dict[str, Path] = {}
    df = results_dataframe(spark, results, columns)
    parquet = out_dir / "results.parquet"
    df.write.mode("overwrite").parquet(str(parquet))
    paths["parquet"] = parquet
    csv_path = out_dir / "results.csv"
    with open(csv_path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for r in results:
            writer.writerow(["" if r.get(c) is None else r.get(c) for c in columns])
    paths["csv"] = csv_path
    rows = aggregate(results)
    paths.update(write_plots(grid, rows, out_dir))
    paths["summary"] = write_summary(grid, results, rows, out_dir, master, sweep_wall_s)
    return paths
