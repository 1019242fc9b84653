"""The PySpark sweep end to end: a two-configuration grid on local[2].

Needs PySpark (the ``bench`` extra) and Java 17 on PATH; skipped with the reason otherwise.
Takes ~15-25 s (Spark start-up, one fresh Python worker per configuration).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

try:
    import pyspark  # noqa: F401

    _SPARK_MISSING = None
except ImportError as exc:  # pragma: no cover - depends on the environment
    _SPARK_MISSING = f"pyspark is not importable ({exc}); install the bench extra: pip install -e '.[test,bench]'"

GRID = """
name = "two"
repeats = 1
limit = true

[fixed]
total_records = 320
warmup = 32
record_size = 100
batch_size = 1600
replication_factor = 3
timeout_s = 120

[axes]
partitions = [1, 2]
"""

EXPECTED_COLUMNS = {"config_id", "repeat", "runner", "ok", "error", "cfg_partitions", "cfg_replication_factor",
                    "cfg_replica_fetch_max_bytes", "records_per_s", "batches_per_s", "mb_per_s",
                    "fetch_requests_per_s", "batches_per_fetch", "bytes_per_fetch", "produce_p50_loop_ms",
                    "produce_p99_wall_ms", "hw_lag_mean", "isr_shrinks", "cpu_s", "peak_rss_mb",
                    "limit_records_per_s", "limit_ratio", "python", "backend", "git_commit", "config_json"}


@pytest.fixture(scope="module")
def spark():
    if _SPARK_MISSING:
        pytest.skip(_SPARK_MISSING)
    if shutil.which("java") is None and not __import__("os").environ.get("JAVA_HOME"):
        pytest.skip("no Java on PATH (PySpark needs Java 17)")
    from benchmarks.sweep import spark_session

    session = spark_session("local[2]", app_name="kafka-ref-sweep-test")
    yield session
    session.stop()


def test_two_configuration_grid_writes_results_plots_and_summary(spark, tmp_path: Path):
    from benchmarks.sweep import run_sweep

    grid = tmp_path / "two.toml"
    grid.write_text(GRID)
    out = tmp_path / "out"
    lines: list[str] = []
    summary = run_sweep(str(grid), out, spark=spark, echo=lines.append)

    # 1. Both configurations ran, one progress line each, none failed.
    assert summary["runs"] == 2 and summary["failed"] == 0, [r.get("error") for r in summary["results"]]
    progress = [line for line in lines if line.startswith("[")]
    assert sorted(line[:5] for line in progress) == ["[1/2]", "[2/2]"]
    assert all("records/s" in line and "ratio" in line for line in progress)

    # 2. The files.
    for name in ("results.csv", "summary.md", "plot_partitions.png"):
        assert (out / name).is_file(), name
    assert (out / "results.parquet").is_dir()

    # 3. Parquet and CSV hold the same rows and the expected columns.
    df = spark.read.parquet(str(out / "results.parquet"))
    assert EXPECTED_COLUMNS <= set(df.columns)
    rows = df.select("cfg_partitions", "records", "ok").orderBy("cfg_partitions").collect()
    assert [(r.cfg_partitions, r.records, r.ok) for r in rows] == [(1, 320, True), (2, 320, True)]
    with open(out / "results.csv", newline="") as f:
        records = list(csv.DictReader(f))
    assert EXPECTED_COLUMNS <= set(records[0])
    assert sorted(r["cfg_partitions"] for r in records) == ["1", "2"]

    # 4. The summary names the best and worst configurations and the limit ratio.
    text = (out / "summary.md").read_text()
    assert "## Best 2 configurations" in text and "## Worst 2 configurations" in text
    assert "kafka_ref / limit" in text
