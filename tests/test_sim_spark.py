"""``kafka-ref sim --master local[2]``: seeds on Spark executors, the same summary, per-seed Parquet.

Needs PySpark (the ``bench`` extra) and Java 17 on PATH; skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import shutil

import pytest

from kafka_ref.cli import main
from kafka_ref.sim import SimConfig, simulate

pytestmark = pytest.mark.spark

try:
    import pyspark  # noqa: F401

    _SPARK_MISSING = None
except ImportError as exc:  # pragma: no cover - depends on the environment
    _SPARK_MISSING = f"pyspark is not importable ({exc}); install the bench extra: pip install -e '.[test,bench]'"


@pytest.fixture(scope="module")
def spark():
    if _SPARK_MISSING:
        pytest.skip(_SPARK_MISSING)
    if shutil.which("java") is None and not __import__("os").environ.get("JAVA_HOME"):
        pytest.skip("no Java on PATH (PySpark needs Java 17)")
    from kafka_ref.sim.spark_seeds import spark_session

    session = spark_session("local[2]", app_name="kafka-ref-sim-test")
    yield session
    session.stop()


def test_sim_on_spark_prints_the_summary_and_writes_one_parquet_row_per_seed(spark, tmp_path, capsys):
    code = main(["sim", "--scenario", "last-replica-standing", "--first-seed", "1", "--seeds", "3", "--duration", "10",
                 "--master", "local[2]", "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "scenario last-replica-standing, era default, zk mode: 3 seeds, 0 with violations" in out
    assert "violations (seeds per invariant):\n    none" in out
    path = tmp_path / "last-replica-standing-zk-default.parquet"
    assert f"per-seed outcomes: {path}" in out
    rows = spark.read.parquet(str(path)).orderBy("seed").collect()
    assert [(r.seed, r.ok, r.scenario, r.metadata_mode, r.era) for r in rows] == [
        (s, True, "last-replica-standing", "zk", "default") for s in (1, 2, 3)]
    # A seed's outcome does not depend on where it ran: the same history digest as in this process.
    local = simulate(2, "last-replica-standing", SimConfig(duration_s=10.0))
    assert rows[1].digest == local.digest and rows[1].events == local.events
    assert json.loads(rows[1].violations) == {} and json.loads(rows[1].faults) == local.faults
    assert rows[1].replay == "kafka-ref sim --scenario last-replica-standing --seed 2"
