"""Seeds on Spark: ``kafka-ref sim --scenario NAME --seeds N --master local[*] | spark://…``.

The seeds are spread over Spark executors the way the benchmark sweep spreads configurations
(benchmarks/sweep.py): an RDD of seeds, one Python worker running ``simulate`` per task, each
finished seed reported to the driver through an accumulator so the progress bar moves while the
others run. The driver rebuilds the same ``Summary`` table the local path prints and writes one
row per seed to Parquet (``<out>/<scenario>-<mode>-<era>.parquet``): the seed, whether it held,
its violations by invariant, faults by kind, workload counts, simulated and wall seconds, the
history digest and the replay command.

Every seed is independent and deterministic (its own trio schedule, its own random streams), so
where it runs does not change its outcome: a seed that fails on a cluster fails the same way in
``kafka-ref sim --seed S`` on a laptop. PySpark and Java come with the ``bench`` extra.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from kafka_ref.sim.progress import ProgressBar, SeedOutcome, Summary, run_one, throughput_clock
from kafka_ref.sim.scenarios import normalize_ibp
from kafka_ref.sim.simulate import SimConfig

PARQUET_SCHEMA = ("scenario string, metadata_mode string, era string, seed long, ok boolean, "
                  "violations string, faults string, workload string, simulated_s double, wall_s double, "
                  "events long, digest string, unclean_elections long, replay string")


def spark_session(master: str, app_name: str = "kafka-ref-sim") -> Any:
    """A quiet SparkSession whose Python workers run this interpreter (as the sweep's)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName(app_name)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "512m")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run_partition(seeds: Iterable[int], scenario: str, config: SimConfig, accumulator: Any) -> Iterator[SeedOutcome]:
    for seed in seeds:
        outcome = run_one(seed, scenario, config)
        accumulator.add(1)
        yield outcome


def outcome_row(outcome: SeedOutcome) -> tuple[Any, ...]:
    """One Parquet row (the columns of PARQUET_SCHEMA)."""
    r = outcome.result
    return (r.scenario, r.metadata_mode, r.ibp or "default", r.seed, r.ok,
            json.dumps(r.violation_counts, sort_keys=True), json.dumps(r.faults, sort_keys=True),
            json.dumps(r.workload, sort_keys=True), float(r.simulated_s), float(outcome.wall_s), r.events, r.digest,
            r.unclean_elections, r.replay_command(trace=False))


def run_summary_on_spark(scenario: str, seeds: Iterable[int], config: SimConfig, master: str, out_dir: str | os.PathLike[str],
                         progress: bool = True, on_failure: Callable[[Any], None] | None = None,
                         spark: Any = None) -> tuple[Summary, Path]:
    """Run the seeds on Spark; the same Summary as the local path, and the Parquet file written."""
    seeds = list(seeds)
    summary = Summary(scenario, normalize_ibp(config.ibp), config.metadata_mode)
    if spark is None:
        # A session already running in this process (a notebook, a test) is used, not stopped.
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    own = spark is None
    if own:
        spark = spark_session(master)
    try:
        sc = spark.sparkContext
        # 1. The seeds, a few per task so every executor core stays busy.
        slices = max(1, min(len(seeds), sc.defaultParallelism * 4))
        counter = sc.accumulator(0)
        rdd = sc.parallelize(seeds, slices).mapPartitions(
            lambda part: _run_partition(part, scenario, config, counter))
        # 2. Collect in a thread; the accumulator drives the progress bar meanwhile.
        bar = ProgressBar(len(seeds), f"{scenario} ({config.ibp or 'default'}, {config.metadata_mode}, {sc.master})") \
            if progress else None
        holder: dict[str, Any] = {}

        def collect() -> None:
            try:
                holder["outcomes"] = rdd.collect()
            except BaseException as exc:  # the Spark job itself failed
                holder["error"] = exc

        started = throughput_clock()
        worker = threading.Thread(target=collect, name="sim-seeds-collect", daemon=True)
        worker.start()
        shown = 0
        while worker.is_alive():
            worker.join(0.2)
            if bar is not None:
                for _ in range(min(counter.value, len(seeds)) - shown):
                    bar.update(False)
                    shown += 1
        if "error" in holder:
            raise holder["error"]
        if bar is not None:
            bar.close()
        # 3. The summary, as the local path builds it.
        outcomes: list[SeedOutcome] = sorted(holder["outcomes"], key=lambda o: o.result.seed)
        for outcome in outcomes:
            summary.add(outcome)
            if not outcome.result.ok and on_failure is not None:
                on_failure(outcome.result)
        summary.wall_s = throughput_clock() - started
        # 4. One Parquet row per seed.
        path = Path(out_dir) / f"{scenario}-{config.metadata_mode}-{config.ibp or 'default'}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        spark.createDataFrame([outcome_row(o) for o in outcomes], PARQUET_SCHEMA).coalesce(1) \
            .write.mode("overwrite").parquet(str(path))
        return summary, path
    finally:
        if own:
            spark.stop()
