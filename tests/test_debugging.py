"""Stepping through kafka_ref in a debugger (the learner's-experience issue, items 1 and 2)."""

from __future__ import annotations

import os
import pdb
import subprocess
import sys
import textwrap
from pathlib import Path

from kafka_ref.cli import main
from kafka_ref.kafka_map import collect_mirrors, find, first_body_line

REPO = Path(__file__).resolve().parent.parent


def test_scenario_debug_stops_in_the_mirrored_kafka_method(capsys, monkeypatch):
    """``kafka-ref scenario fetch-hw --debug`` opens pdb in the Kafka method each step shows,
    not in the narration or structlog frames between."""
    stops: list[str] = []

    def interaction(self, frame, traceback):
        stops.append(f"{frame.f_globals['__name__']}:{frame.f_code.co_qualname}")
        self.set_continue()

    monkeypatch.setattr(pdb.Pdb, "interaction", interaction)
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    try:
        assert main(["scenario", "fetch-hw", "--debug"]) == 0
    finally:
        sys.settrace(None)
    assert stops == [
        "kafka_ref.sim.walkthroughs:fetch_hw",  # phase 1 is the walkthrough's own summary
        "kafka_ref.replica.replica_manager:ReplicaManager.append_to_local_log",
        "kafka_ref.replica.fetcher.abstract_fetcher_thread:AbstractFetcherThread._handle_fetched_data",
        "kafka_ref.replica.fetcher.abstract_fetcher_thread:AbstractFetcherThread._handle_fetched_data",
        "kafka_ref.replica.partition:Partition.maybe_increment_leader_hw",
        "kafka_ref.replica.fetcher.abstract_fetcher_thread:AbstractFetcherThread._handle_fetched_data",
        "kafka_ref.replica.fetcher.abstract_fetcher_thread:AbstractFetcherThread._handle_fetched_data",
    ]
    out = capsys.readouterr().out
    assert "--- step [seed 004 phase 4]: stopped in Partition.maybe_increment_leader_hw (kafka_ref/replica/partition.py:" in out


def test_quit_in_scenario_debug_ends_the_run(monkeypatch, capsys):
    def interaction(self, frame, traceback):
        self.set_quit()

    monkeypatch.setattr(pdb.Pdb, "interaction", interaction)
    monkeypatch.delenv("PYTHONBREAKPOINT", raising=False)
    try:
        assert main(["scenario", "fetch-hw", "--debug"]) == 1
    finally:
        sys.settrace(None)
    captured = capsys.readouterr()
    assert captured.err == "kafka-ref scenario: quit from the debugger\n"
    assert captured.out.count("--- step [") == 1


def test_relative_breakpoint_from_the_repository_root(tmp_path):
    """The README recipe: ``PYTHONPATH=.`` (or an editable install in compat mode) puts the
    repository root on sys.path, so pdb resolves ``b kafka_ref/replica/partition.py:LINE``."""
    [entry] = [e for e in find(collect_mirrors(), "Partition#makeLeader") if e.module == "kafka_ref/replica/partition.py"]
    line = first_body_line(entry)
    script = tmp_path / "example.py"
    script.write_text(textwrap.dedent("""
        import anyio, trio.testing
        from kafka_ref.cluster import Cluster

        async def main():
            async with Cluster(brokers=1, metadata_mode="zk") as cluster:
                await cluster.create_topic("t", partitions=1, replication_factor=1)

        anyio.run(main, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
    """))
    env = {**os.environ, "PYTHONPATH": "."}
    result = subprocess.run([sys.executable, "-m", "pdb", str(script)], cwd=REPO, env=env, text=True,
                            input=f"b kafka_ref/replica/partition.py:{line}\nc\np self.topic_partition\nq\n",
                            capture_output=True, timeout=120)
    assert f"Breakpoint 1 at {REPO}/kafka_ref/replica/partition.py:{line}" in result.stdout
    assert f"kafka_ref/replica/partition.py({line})make_leader()" in result.stdout
    assert "(Pdb) TopicPartition(topic='t', partition=0)" in result.stdout
