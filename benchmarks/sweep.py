"""The sweep: a grid of configurations, each run in a Spark executor's Python worker.

``kafka-ref sweep --grid quick --out results/ [--master local[*]]`` (or
``python -m benchmarks.sweep``) reads a grid TOML, builds the cartesian product of its axes (times
the repeats) as a Spark DataFrame with one row and one partition per run, and runs every row with
``run_config`` (plus ``run_limit`` unless the grid says ``limit = false``) inside
``mapPartitions``, one configuration per partition. Each finished configuration reaches the
driver at once through an accumulator, so a progress line is printed per configuration while
the others still run. A configuration that fails is recorded with its error; the sweep goes on.

Under ``--out``: ``results.parquet`` (Spark), ``results.csv``, ``plot_<axis>.png`` (records/s
against each axis, one line per value of a second axis) and ``summary.md`` (best and worst
configurations, the limit ratio, failures, the machine).

Grid TOML::

    name = "quick"
    repeats = 1              # each configuration runs this many times
    limit = true             # also run the echo-fetch limit for every configuration
    series = "replication_factor"   # the second axis of the plots (optional)

    [fixed]                  # keys every configuration shares
    total_records = 20000

    [axes]                   # the cartesian product of these
    partitions = [1, 16, 100]
    acks = [1, "all"]
    "replica.fetch.max.bytes" = [65536, 1048576]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
import tomllib
from itertools import product
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from benchmarks.workload import DEFAULTS, BenchmarkConfigError

GRIDS_DIR = Path(__file__).resolve().parent / "grids"
SPARK_LOG4J2 = Path(__file__).resolve().parent / "spark-log4j2.properties"


# --------------------------------------------------------------------------------------------
# Grids
# --------------------------------------------------------------------------------------------


def load_grid(name_or_path: str | os.PathLike[str]) -> dict[str, Any]:
    """A grid by name (``quick``, ``default``, ``scale``: benchmarks/grids/) or by path; validated."""
    path = Path(name_or_path)
    if not path.suffix:
        path = GRIDS_DIR / f"{name_or_path}.toml"
    if not path.exists():
        known = sorted(p.stem for p in GRIDS_DIR.glob("*.toml"))
        raise BenchmarkConfigError(f"no grid {str(name_or_path)!r} (known: {known}, or give a .toml path)")
    grid = tomllib.loads(path.read_text())
    grid.setdefault("name", path.stem)
    grid.setdefault("repeats", 1)
    grid.setdefault("limit", True)
    grid.setdefault("fixed", {})
    grid.setdefault("axes", {})
    for key in list(grid["fixed"]) + list(grid["axes"]):
        if key not in DEFAULTS:
            raise BenchmarkConfigError(f"grid {grid['name']!r}: unknown configuration key {key!r}")
    for key, values in grid["axes"].items():
        if not isinstance(values, list) or not values:
            raise BenchmarkConfigError(f"grid {grid['name']!r}: axis {key!r} needs a non-empty list of values")
    if int(grid["repeats"]) < 1:
        raise BenchmarkConfigError(f"grid {grid['name']!r}: repeats must be at least 1")
    return grid


def config_id(config: dict[str, Any]) -> str:
    """A short stable id of a configuration (the same for each of its repeats)."""
    return hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]


def expand_grid(grid: dict[str, Any]) -> list[dict[str, Any]]:
    """The cartesian product in plain Python (the Spark DataFrame holds the same rows)."""
    axes = grid["axes"]
    rows = []
    for values in product(*axes.values()):
        config = {**grid["fixed"], **dict(zip(axes, values))}
        for repeat in range(int(grid["repeats"])):
            rows.append({"config_id": config_id(config), "repeat": repeat, "config": config})
    return rows


def axis_column(key: str) -> str:
    """The DataFrame column of an axis (dots are struct access in Spark SQL)."""
    return "axis_" + key.replace(".", "_")


def configs_dataframe(spark: Any, grid: dict[str, Any]) -> Any:
    """The cartesian product as a DataFrame, one row (and one partition) per run.

    Columns: ``config_id``, ``repeat``, one JSON-valued ``axis_<key>`` column per axis and
    ``config_json`` (fixed keys included). Built over an RDD that already has one partition per
    row, so running it needs no shuffle.
    """
    axes = list(grid["axes"])
    rows = [(r["config_id"], r["repeat"], *(json.dumps(r["config"][a]) for a in axes), json.dumps(r["config"], sort_keys=True))
            for r in expand_grid(grid)]
    schema = ", ".join(["config_id string", "repeat int", *(f"{axis_column(a)} string" for a in axes), "config_json string"])
    rdd = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    return spark.createDataFrame(rdd, schema)


# --------------------------------------------------------------------------------------------
# Running inside executors
# --------------------------------------------------------------------------------------------


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, default=str)


def run_one(config: dict[str, Any], with_limit_run: bool) -> dict[str, Any]:
    """One configuration: kafka_ref's figures, the limit's, the ratio; never raises."""
    from benchmarks.fetch_throughput import run_config
    from benchmarks.limit import run_limit, with_limit

    started = time.perf_counter()
    try:
        result = run_config(config)
        if with_limit_run:
            result = with_limit(result, run_limit(config))
    except Exception as exc:  # a bad key or value in the grid: record it like any failure
        result = {"runner": "kafka_ref", "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    result.pop("traceback", None)
    result["run_wall_s"] = time.perf_counter() - started
    result["worker_pid"] = os.getpid()
    return {k: _scalar(v) for k, v in result.items()}


def _run_partition(rows: Iterable[Any], with_limit_run: bool, accumulator: Any) -> Iterator[str]:
    for row in rows:
        config = json.loads(row["config_json"])
        result = run_one(config, with_limit_run)
        result["config_id"] = row["config_id"]
        result["repeat"] = int(row["repeat"])
        result["config_json"] = row["config_json"]
        line = json.dumps(result)
        accumulator.add([line])
        yield line


# --------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------


#: Start-up notices of the Spark JVM (and the JDK) that say nothing to a user of the sweep.
SPARK_NOISE = (b"WARNING: Using incubator modules", b"Setting default log level to",
               b"To adjust logging level use sc.setLogLevel", b"Using Spark's default log4j profile",
               b"WARN NativeCodeLoader")


def filter_child_stderr(noise: tuple[bytes, ...] = SPARK_NOISE) -> Callable[[], None]:
    """Route fd 2 through a filter until the returned function is called.

    A child process started meanwhile (Spark's JVM) keeps the filtered stderr for its whole life:
    its lines go on to the real stderr unless they contain one of ``noise``. Calling the returned
    function gives this process its own stderr back.
    """
    read_fd, write_fd = os.pipe()
    real_stderr = os.dup(2)
    sys.stderr.flush()
    os.dup2(write_fd, 2)
    os.close(write_fd)

    def pump() -> None:
        with os.fdopen(read_fd, "rb") as lines:
            for line in lines:
                if not any(n in line for n in noise):
                    os.write(real_stderr, line)

    thread = threading.Thread(target=pump, name="spark-stderr-filter", daemon=True)
    thread.start()

    def restore() -> None:
        sys.stderr.flush()
        os.dup2(real_stderr, 2)

    restore.pump = thread  # type: ignore[attr-defined]  # ends when every child holding the pipe has exited
    return restore


def spark_session(master: str = "local[*]", app_name: str = "kafka-ref-sweep") -> Any:
    """A quiet local-friendly SparkSession (docs/DESIGN.md §5): workers run this interpreter."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    restore_stderr = filter_child_stderr()
    try:
        spark = _build_session(SparkSession, master, app_name)
    finally:
        restore_stderr()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _build_session(SparkSession: Any, master: str, app_name: str) -> Any:  # noqa: N803 - the class
    return (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "512m")
        # A fresh Python worker per configuration: peak RSS and CPU belong to that run only.
        .config("spark.python.worker.reuse", "false")
        # Errors only from the JVM's own logging (its start-up WARN lines are noise to a user).
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={SPARK_LOG4J2.as_uri()}")
        .getOrCreate()
    )


def _list_accumulator(sc: Any) -> Any:
    from pyspark.accumulators import AccumulatorParam

    class ListParam(AccumulatorParam):
        def zero(self, value: list[str]) -> list[str]:
            return []

        def addInPlace(self, a: list[str], b: list[str]) -> list[str]:
            a.extend(b)
            return a

    return sc.accumulator([], ListParam())


def progress_line(done: int, total: int, result: dict[str, Any], axes: list[str]) -> str:
    config = json.loads(result.get("config_json", "{}"))
    shown = " ".join(f"{k}={config.get(k)}" for k in axes)
    if not result.get("ok"):
        return f"[{done}/{total}] {shown} FAILED: {result.get('error')}"
    line = f"[{done}/{total}] {shown} -> {result['records_per_s']:,.0f} records/s"
    if result.get("limit_ratio") is not None:
        line += f" (limit {result['limit_records_per_s']:,.0f}, ratio {result['limit_ratio']:.3f})"
    return line + f" in {result.get('run_wall_s', 0):.1f} s"


def run_sweep(grid_name: str, out: str | os.PathLike[str], master: str = "local[*]", spark: Any = None,
              echo: Any = print) -> dict[str, Any]:
    """Run a grid; write results.parquet, results.csv, plots and summary.md under ``out``.

    ``spark``: an existing SparkSession to use (not stopped here); otherwise one is started on
    ``master`` and stopped at the end. Returns paths and counts.
    """
    grid = load_grid(grid_name)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    own_session = spark is None
    if own_session:
        spark = spark_session(master)
    try:
        sc = spark.sparkContext
        echo(f"sweep {grid['name']!r} on {sc.master} (parallelism {sc.defaultParallelism}), "
             f"Spark ready in {time.perf_counter() - started:.1f} s")
        # 1. The cartesian product, one run per partition.
        configs = configs_dataframe(spark, grid)
        total = configs.rdd.getNumPartitions()
        echo(f"{total} runs ({total // int(grid['repeats'])} configurations x {grid['repeats']} repeats)")
        accumulator = _list_accumulator(sc)
        axes, with_limit_run = list(grid["axes"]), bool(grid["limit"])
        rdd = configs.rdd.mapPartitions(lambda rows: _run_partition(rows, with_limit_run, accumulator))
        # 2. Run in a driver thread; print each configuration as its task finishes.
        holder: dict[str, Any] = {}

        def collect() -> None:
            try:
                holder["lines"] = rdd.collect()
            except BaseException as exc:  # the Spark job itself failed
                holder["error"] = exc

        worker = threading.Thread(target=collect, name="sweep-collect", daemon=True)
        worker.start()
        seen = 0
        while True:
            alive = worker.is_alive()
            lines = list(accumulator.value)
            for line in lines[seen:]:
                seen += 1
                echo(progress_line(seen, total, json.loads(line), axes))
            if not alive:
                break
            time.sleep(0.2)
        worker.join()
        if "error" in holder:
            raise holder["error"]
        # 3. The results DataFrame, its files, the plots and the summary.
        results = [json.loads(line) for line in holder["lines"]]
        from benchmarks.report import write_outputs

        paths = write_outputs(spark, grid, results, out_dir, master=sc.master,
                              sweep_wall_s=time.perf_counter() - started)
        failed = sum(1 for r in results if not r.get("ok"))
        echo(f"done: {len(results) - failed} ok, {failed} failed in {time.perf_counter() - started:.1f} s; "
             f"wrote {', '.join(str(p) for p in paths.values())}")
        return {"runs": len(results), "failed": failed, "paths": paths, "results": results}
    finally:
        if own_session:
            spark.stop()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="kafka-ref sweep", description="Run a benchmark grid in Spark executors.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_args(args)


def add_arguments(parser: Any) -> None:
    parser.add_argument("--grid", default="quick", help="grid name (quick, default, scale) or a TOML path")
    parser.add_argument("--out", default="results", help="output directory (default: results/)")
    parser.add_argument("--master", default="local[*]", help="Spark master (default: local[*])")


def run_from_args(args: Any) -> int:
    from kafka_ref.sim.commands import CommandError

    try:
        load_grid(args.grid)  # a bad grid is reported before Spark starts
    except (BenchmarkConfigError, OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("kafka-ref sweep needs PySpark and matplotlib: pip install -e '.[bench]' (and Java 17 on PATH)",
              file=sys.stderr)
        return 2
    summary = run_sweep(args.grid, args.out, args.master)
    return 0 if summary["runs"] > summary["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
