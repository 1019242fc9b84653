"""The fetch-throughput runner, the echo-fetch limit, grids and reports (fast; no Spark).

No timed assertions: rates depend on the machine. Counts are exact: the workload is fixed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from benchmarks.fetch_throughput import run_config, run_idle
from benchmarks.limit import run_limit, with_limit
from benchmarks.report import aggregate, columns_of, write_summary
from benchmarks.sweep import expand_grid, load_grid, progress_line
from benchmarks.workload import BenchmarkConfigError, assignment, build_plan, normalize_config

TINY = {"partitions": 2, "replication_factor": 3, "total_records": 320, "warmup": 32,
        "record_size": 100, "batch_size": 1600, "timeout_s": 60}

METRICS = ("records_per_s", "batches_per_s", "mb_per_s", "fetch_requests_per_s", "batches_per_fetch",
           "bytes_per_fetch", "produce_p50_loop_ms", "produce_p99_loop_ms", "produce_p50_wall_ms",
           "produce_p99_wall_ms", "hw_lag_mean", "hw_lag_max", "isr_shrinks", "cpu_s", "peak_rss_mb",
           "python", "backend", "git_commit")


def test_normalize_config_fills_defaults_and_derives_records_per_batch():
    c = normalize_config({"record_size": 1024, "batch_size": 16384, "acks": "all"})
    assert c["records_per_batch"] == 16
    assert c["acks"] == -1
    assert c["active_partitions"] == c["partitions"] == 1
    assert c["replica.fetch.max.bytes"] == 1_048_576
    assert c["max.incremental.fetch.session.cache.slots"] == 1000
    assert normalize_config({"records_per_batch": 5, "record_size": 100})["batch_size"] == 500


@pytest.mark.parametrize("bad", [{"no.such.key": 1}, {"acks": 2}, {"replication_factor": 4},
                                 {"active_partitions": 3, "partitions": 2}, {"clock": "sundial"}])
def test_normalize_config_rejects_bad_input(bad):
    with pytest.raises(BenchmarkConfigError):
        normalize_config(bad)


def test_plan_packs_one_batch_per_partition_per_request_by_leader():
    c = normalize_config({**TINY, "partitions": 6, "total_records": 1200})
    plan = build_plan(c)
    sends = plan.timed[0]
    # 1200 records / 16 per batch = 75 batches round robin over 6 partitions; leaders 0,1,2,0,1,2,
    # so each request carries partitions p and p+3 of one leader (the last three carry one).
    assert [len(s.partitions) for s in sends] == [2] * 36 + [1] * 3
    assert sum(s.record_count for s in sends) == 75 * 16
    leaders = {p: r[0] for p, r in assignment(c).items()}
    for s in sends:
        assert len(set(s.partitions)) == len(s.partitions)
        assert all(leaders[p] == s.leader for p in s.partitions)


def test_run_config_replicates_the_whole_workload():
    result = run_config(TINY)
    assert result["ok"], result.get("traceback")
    assert result["runner"] == "kafka_ref"
    # 320 records / 16 per batch = 20 batches, every one acknowledged and replicated twice.
    assert result["records"] == 320
    assert result["batches"] == 20
    assert result["isr_shrinks"] == 0
    assert result["cfg_replication_factor"] == 3
    assert result["cfg_replica_fetch_max_bytes"] == 1_048_576
    assert result["fetch_requests"] > 0
    for key in METRICS:
        assert result[key] is not None, key


def test_run_config_records_a_failure_instead_of_raising():
    result = run_config({**TINY, "timeout_s": 0.000001})
    assert result["ok"] is False
    assert result["error"] == "TimeoutError: the configuration did not finish within timeout_s=1e-06"


def test_run_limit_moves_the_same_batches_and_gives_a_ratio():
    result = run_config(TINY)
    limit = run_limit(TINY)
    assert limit["ok"], limit.get("traceback")
    assert limit["runner"] == "limit"
    assert (limit["records"], limit["batches"], limit["bytes"]) == (result["records"], result["batches"], result["bytes"])
    merged = with_limit(result, limit)
    assert merged["limit_records_per_s"] == limit["records_per_s"]
    assert merged["limit_ratio"] == result["records_per_s"] / limit["records_per_s"]


def test_run_limit_acks_1_and_keyed_records():
    limit = run_limit({**TINY, "acks": 1, "keyed": True, "partitions": 4})
    assert limit["ok"], limit.get("traceback")
    assert limit["records"] == 320


def test_run_config_keyed_virtual_clock_on_trio():
    result = run_config({**TINY, "keyed": True, "clock": "virtual", "backend": "trio", "acks": 1})
    assert result["ok"], result.get("traceback")
    assert result["records"] == 320
    assert result["backend"] == "trio"


def test_run_idle_reports_simulated_seconds_per_wall_second():
    result = run_idle({"partitions": 4}, sim_seconds=5.0)
    assert result["ok"], result.get("traceback")
    assert result["sim_s"] == pytest.approx(5.0)
    # Six fetchers (3 followers x 2 leaders each) long-poll 500 ms of loop time.
    assert result["fetch_requests"] > 0


def test_grids_expand_to_their_cartesian_products():
    assert len(expand_grid(load_grid("quick"))) == 3 * 2 * 2 * 2
    assert len(expand_grid(load_grid("default"))) == 5 * 3 * 2 * 2 * 3 * 2 * 2
    scale = load_grid("scale")
    assert max(scale["axes"]["partitions"]) == 10_000
    with pytest.raises(BenchmarkConfigError):
        load_grid("no-such-grid")


def test_grid_with_unknown_key_is_rejected(tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text('[axes]\n"replica.fetch.maximum" = [1]\n')
    with pytest.raises(BenchmarkConfigError):
        load_grid(path)


def test_summary_and_progress_from_results(tmp_path: Path):
    grid = {"name": "t", "repeats": 2, "fixed": {}, "axes": {"partitions": [1, 2]}, "limit": True}
    results = []
    for p, rate in ((1, 100.0), (2, 300.0)):
        for repeat in range(2):
            results.append({"config_id": f"c{p}", "repeat": repeat, "ok": True, "records_per_s": rate + repeat,
                            "limit_records_per_s": 1000.0, "limit_ratio": (rate + repeat) / 1000.0,
                            "config_json": json.dumps({"partitions": p}), "cfg_partitions": p})
    results.append({"config_id": "c3", "repeat": 0, "ok": False, "error": "BenchmarkError: boom",
                    "config_json": json.dumps({"partitions": 3})})
    rows = aggregate(results)
    assert [r["records_per_s"] for r in rows[:2]] == [100.5, 300.5]
    assert columns_of(results, ["partitions"])[:6] == ["config_id", "repeat", "ok", "error", "cfg_partitions", "records_per_s"]
    text = write_summary(grid, results, rows, tmp_path, master="local[2]", sweep_wall_s=1.0).read_text()
    assert "| 2 | 300 |" in text  # the mean of 300 and 301, rounded half to even
    assert "BenchmarkError: boom" in text
    assert progress_line(1, 5, results[0], ["partitions"]).startswith("[1/5] partitions=1 -> 100 records/s")
    assert progress_line(5, 5, results[-1], ["partitions"]) == "[5/5] partitions=3 FAILED: BenchmarkError: boom"


def test_mockafka_peer_produces_and_consumes_everything():
    pytest.importorskip("mockafka", reason="mockafka-py is in the bench extra")
    from benchmarks.peers.mockafka_peer import run_mockafka

    result = run_mockafka({"total_records": 500, "record_size": 100, "partitions": 2})
    assert result["ok"], result.get("traceback")
    assert result["records"] == 500


def test_csv_columns_are_written_in_order(tmp_path: Path):
    pytest.importorskip("matplotlib", reason="matplotlib is in the bench extra")
    from benchmarks.report import write_plots

    grid = {"name": "t", "repeats": 1, "fixed": {}, "axes": {"partitions": [1, 2], "acks": [1, "all"]}}
    results = [{"config_id": f"{p}{a}", "ok": True, "records_per_s": 10.0 * p, "limit_records_per_s": 100.0,
                "config_json": json.dumps({"partitions": p, "acks": a})} for p in (1, 2) for a in (1, "all")]
    paths = write_plots(grid, aggregate(results), tmp_path)
    assert sorted(p.name for p in paths.values()) == ["plot_acks.png", "plot_partitions.png"]
    csv_path = tmp_path / "x.csv"
    with open(csv_path, "w", newline="") as f:
        csv.writer(f).writerow(columns_of(results, ["partitions"]))
    assert csv_path.read_text().startswith("config_id,ok,records_per_s")


def test_headline_call_count_is_stable_and_compare_judges_targets():
    """The cProfile call count per produce request agrees between two runs, each in a fresh
    interpreter as ``benchmarks.compare`` runs it (virtual clock, asyncio FIFO). On a quiet machine
    the two counts are equal; on a loaded one they have been seen to differ by ~0.2 % (77,481 vs
    77,645 calls at this scale, cause not yet found), so the check allows 0.5 %."""
    from benchmarks.compare import ROOT, run_side, target_met

    first, second = run_side(ROOT, "calls", 0.1, 300), run_side(ROOT, "calls", 0.1, 300)
    assert first["ok"] and second["ok"], (first, second)
    assert first["produce_requests"] == second["produce_requests"] == 100
    assert abs(first["calls"] - second["calls"]) <= 0.005 * first["calls"], (first["calls"], second["calls"])
    assert target_met("calls", 240.0, 960.0) == "yes"
    assert target_met("r100", 9.0, 1.0) == "no"
    assert target_met("sim", 5.0, 1.0) == "yes"


def test_cli_bench_routes_to_the_benchmark_module():
    from kafka_ref.cli import build_parser

    args = build_parser().parse_args(["bench", "compare", "--baseline", "HEAD", "calls"])
    assert (args.what, args.rest) == ("compare", ["--baseline", "HEAD", "calls"])


def test_isr_shrinks_counts_the_partitions_shrinks():
    """The isr_shrinks column sums Partition.isr_shrink_count (it read a counter nothing moved)."""
    from types import SimpleNamespace

    from benchmarks.fetch_throughput import count_isr_shrinks

    def broker(*counts: int, running: bool = True) -> SimpleNamespace:
        partitions = [SimpleNamespace(isr_shrink_count=c) for c in counts]
        return SimpleNamespace(is_running=running, replica_manager=SimpleNamespace(online_partitions=lambda: partitions))

    cluster = SimpleNamespace(brokers={0: broker(2, 0, 1), 1: broker(3), 2: broker(5, running=False)})
    assert count_isr_shrinks(cluster) == 6


def test_spark_start_up_noise_is_filtered_from_the_jvms_stderr():
    """Spark's JVM start-up notices (native-hadoop WARN, default log level, JDK incubator modules)
    are dropped; anything else the child writes, and this process's own stderr, get through."""
    import subprocess
    import sys
    import textwrap

    program = textwrap.dedent("""
        import subprocess, sys
        from benchmarks.sweep import filter_child_stderr
        restore = filter_child_stderr()
        child = subprocess.Popen(["sh", "-c", "echo 'WARNING: Using incubator modules: jdk.incubator.vector' >&2; "
                                  "echo '26/11/24 12:06:35 WARN NativeCodeLoader: Unable to load' >&2; "
                                  "echo 'Setting default log level to \\"WARN\\".' >&2; echo 'a real error' >&2"])
        restore()
        child.wait()
        restore.pump.join(30)
        print("after restore", file=sys.stderr)
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                            cwd=Path(__file__).resolve().parent.parent)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "a real error\nafter restore\n"
