"""The controller-quorum simulator (after RaftEventSimulationTest) and the KRaft controller-failover demo."""

from __future__ import annotations

import pytest

import kafka_ref.raft.kafka_raft_client as raft_module
from kafka_ref.sim.raft_sim import SCENARIOS, simulate_quorum


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_quorum_scenarios_keep_the_raft_invariants(scenario):
    """RaftEventSimulationTest's scenarios, one short seeded run each: no invariant broken, leaders elected."""
    result = simulate_quorum(1, scenario, run_s=20)
    assert result.violations == []
    assert result.elections >= 1 and result.committed_batches > 5 and result.topics_created > 0
    if scenario not in ("initial-election", "drops"):
        assert result.elections >= 2 and result.events


def test_a_vote_without_the_log_check_breaks_committed_data(monkeypatch):
    """The checker can fail: with votes granted without the log up-to-date check (a deliberately broken
    build), a voter cut off from the others wins an election with a short log and the committed history
    is contradicted (a follower is told to truncate below its high watermark)."""
    monkeypatch.setattr(raft_module.KafkaRaftClient, "is_log_up_to_date", lambda self, epoch, offset: True)
    result = simulate_quorum(0, "partition-recovery", run_s=30)
    assert result.violations
    assert "committed never lost" in result.violations[0] and "below the high watermark" in result.violations[0]


def test_demo_kraft_controller_failover_narrates_the_vote():
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("controller-failover", mode="kraft", seed=7, out=lines.append) == 0
    text = "\n".join(lines)
    for needle in ("== three voters [3000, 3001, 3002]", "== killing the active controller", "raft_fetch_timeout",
                   "raft_candidate", "raft_vote_request", "granted=True", "raft_leader_elected", "is active in epoch",
                   "brokers' observers follow"):
        assert needle in text, needle


def test_sim_scenario_on_a_three_voter_quorum_keeps_every_invariant_and_replays():
    """kafka-ref sim --metadata-mode kraft --controllers 3: the data scenarios on a controller quorum.

    The quorum nemesis moves the active controller (a new epoch with a leader is elected while the
    brokers keep serving), the data invariants and the Raft invariants all hold, and the same seed
    gives the same history.
    """
    from kafka_ref.sim import SimConfig, simulate

    config = SimConfig(metadata_mode="kraft", controllers=3, keep_history=True)
    result = simulate(2, "controller-failover", config)
    assert [v.describe() for v in result.violations] == []
    assert result.controllers == 3
    assert "--metadata-mode kraft --controllers 3" in result.replay_command()
    quorum_faults = {k: v for k, v in result.faults.items()
                     if k in ("controller_kill", "controller_isolated", "controller_cut_from_voters")}
    assert sum(quorum_faults.values()) >= 3, result.faults
    elected = [e for e in result.history.events if e.name == "raft_leader_elected"]
    assert len({e.fields["epoch"] for e in elected}) >= 3
    assert len({e.fields["node_id"] if "node_id" in e.fields else e.source for e in elected}) >= 1
    assert result.workload["acked_all"] > 0 and result.workload["consumed"] > 0
    assert simulate(2, "controller-failover", config).digest == result.digest


def test_raft_sim_command_and_module_entry_point(capsys):
    """kafka-ref raft-sim (and python -m kafka_ref.sim.raft_sim, the same command): a summary line per scenario."""
    import subprocess
    import sys
    from pathlib import Path

    from kafka_ref.cli import main

    assert main(["raft-sim", "--scenario", "leader-failure", "--seeds", "2", "--duration", "10", "--no-progress"]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]   # (the test run's log lines come first)
    assert summary.startswith("leader-failure: 2 seeds, 0 with violations"), summary
    repo = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "kafka_ref.sim.raft_sim", "--scenario", "initial-election", "--seed", "1",
                           "--duration", "5"], capture_output=True, text=True, cwd=repo, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "seed 1 scenario initial-election: 1 epochs with a leader, 13 committed batches, 5 topics created",
        "  no invariant violated"]
