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
