"""``kafka-ref scenario NAME``: every narrated walkthrough runs and prints its key steps, each
tagged with the seed step it shows (kafka_ref/sim/narrated.py, walkthroughs*.py)."""

from __future__ import annotations

import sys

import pytest

from kafka_ref.cli import main
from kafka_ref.sim.narrated import NARRATED, run_narrated


def narrate(name: str) -> list[str]:
    lines: list[str] = []
    assert run_narrated(name, out=lines.append) == 0
    return lines


def steps(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("  [")]


def index_of(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_every_walkthrough_is_listed_by_the_cli(capsys):
    assert main(["scenario"]) == 0
    out = capsys.readouterr().out
    for name in ("leader-and-isr", "controller-failover", "partition-states", "replica-states", "replica-lifecycle",
                 "fetch-hw", "consumer-offsets-migration"):
        assert name in NARRATED and f"  {name} " in out


def test_leader_and_isr_shows_seed_000s_nine_steps():
    lines = narrate("leader-and-isr")
    shown = steps(lines)
    for n in range(1, 10):
        assert any(line.startswith(f"  [seed 000 step {n}]") for line in shown), n
    # Broker 0's first request, in Kafka's order: steps 1, 2, 3, 5, 7, 8, 9.
    first = shown[:shown.index(next(x for x in shown if x.startswith("  [seed 000 step 9] broker 0")) ) + 1]
    order = [line.split("]")[0] for line in first if line.startswith("  [seed 000 step")]
    assert order == ["  [seed 000 step 1", "  [seed 000 step 2", "  [seed 000 step 2", "  [seed 000 step 3",
                     "  [seed 000 step 5", "  [seed 000 step 7", "  [seed 000 step 8", "  [seed 000 step 9"]
    assert "  [seed 000 §makeLeaders 1] broker 0: remove the fetchers of these partitions" in shown
    assert ("  [seed 000 step 1] broker 1: older than 1: the whole request is refused with STALE_CONTROLLER_EPOCH"
            in shown)
    assert "   answer: STALE_CONTROLLER_EPOCH" in lines
    assert ("  [seed 000 step 2] broker 1: t-0 skipped: leader epoch 0 is not newer than the one this broker has"
            in shown)
    assert "  [seed 000 §makeFollowers 6] broker 1: added fetcher to broker 0 for partitions ['t-0']" in shown
    # The leadership move: broker 0 follows and truncates the record only it had.
    assert any(line.startswith("  [seed 000 §makeFollowers 4] t-0 truncated to offset 2") for line in shown)
    assert lines[-2] == ("   broker 0 now follows broker 1: broker 0 (follower) LEO=2 HW=2; broker 1 (leader) LEO=2 "
                         "HW=2; broker 2 (follower) LEO=2 HW=2")


def test_fetch_hw_prints_hw_and_leo_of_every_replica_through_seed_004s_four_phases():
    lines = narrate("fetch-hw")
    shown = steps(lines)
    phases = [line.split("]")[0].strip(" [") for line in shown]
    assert phases == ["seed 004 phase 1", "seed 004 phase 2", "seed 004 phase 3", "seed 004 phase 3",
                      "seed 004 phase 4", "seed 004 phase 4", "seed 004 phase 4"]
    assert shown[0].endswith("broker 0 (leader) LEO=1 HW=1; broker 1 (follower) LEO=1 HW=1; broker 2 (follower) LEO=1 HW=1")
    assert "broker 0 (leader) LEO=2 HW=1; broker 1 (follower) LEO=1 HW=1; broker 2 (follower) LEO=1 HW=1" in shown[1]
    assert "maybeIncrementLeaderHW moves the HW 1 -> 2" in shown[4]
    assert shown[-1].endswith("broker 0 (leader) LEO=2 HW=2; broker 1 (follower) LEO=2 HW=2; broker 2 (follower) LEO=2 HW=2")


def test_controller_failover_shows_resignation_and_failover_steps():
    lines = narrate("controller-failover")
    refs = {line.split("]")[0].strip(" [") for line in steps(lines)}
    for n in (1, 2, 3, 4, 5, 6, 7, 8):
        assert any(ref.endswith(f"failover {n}") for ref in refs), n
    for ref in ("seed 001 §5.2 resignation 1/3", "seed 001 §5.2 resignation 4", "seed 001 §5.2 resignation 5",
                "seed 001 §5.2 resignation 6", "seed 001 §5.2 resignation 7"):
        assert ref in refs
    assert any("controller epoch 2" in line and line.startswith("== broker") for line in lines)


def test_partition_states_walks_seed_001_section_5_3_2():
    shown = steps(narrate("partition-states"))
    transitions = [line.split(": t-0 ")[1].split(":")[0] for line in shown]
    assert transitions == ["NonExistentPartition -> NewPartition", "NewPartition -> OnlinePartition",
                           "OnlinePartition -> OfflinePartition", "OfflinePartition -> OnlinePartition",
                           "OnlinePartition -> OfflinePartition", "OfflinePartition -> NonExistentPartition"]
    assert [line.split("]")[0].strip(" [") for line in shown][:4] == [
        "seed 001 §5.3.2.1", "seed 001 §5.3.2.2 initializeLeaderAndIsrForPartition", "seed 001 §5.3.2.3",
        "seed 001 §5.3.2.2 electLeaderForPartition, §5.4.2"]
    # The two Online -> Offline transitions have different causes, and say so.
    reasons = [line.split(": ", 2)[2] for line in shown if "OnlinePartition -> OfflinePartition" in line]
    assert reasons == ["its leader died: only the state changes",
                       "the topic is being deleted: offline first, only the state changes"]


def test_replica_states_walks_seed_001_section_5_3_3():
    shown = steps(narrate("replica-states"))
    transitions = [line.split(" of t-0: ")[1].split(":")[0] for line in shown]
    assert transitions == ["NonExistentReplica -> NewReplica", "NewReplica -> OnlineReplica",
                           "OnlineReplica -> OfflineReplica", "OfflineReplica -> OnlineReplica",
                           "OnlineReplica -> OfflineReplica", "OfflineReplica -> ReplicaDeletionStarted",
                           "ReplicaDeletionStarted -> ReplicaDeletionSuccessful",
                           "ReplicaDeletionSuccessful -> NonExistentReplica"]


def test_replica_lifecycle_creates_follows_and_stops_twice():
    lines = narrate("replica-lifecycle")
    shown = steps(lines)
    created = index_of(shown, "has no local log yet: create it")
    leader = index_of(shown, "[seed 002 §makeLeader 1-6]")
    follower = index_of(shown, "[seed 002 §makeFollowers 1-2]")
    keep = index_of(shown, "deletePartition=False: stop fetching, complete its delayed requests, keep the log")
    delete = index_of(shown, "deletePartition=True: forget the partition and delete its log")
    assert created < leader < follower < keep < delete
    assert sum("[seed 002 §handleStopReplicaRequest]" in line for line in shown) == 2
    assert lines[-2].endswith("hosts t-0: False; log on disk: False")


def test_consumer_offsets_migration_shows_immigration_and_emigration():
    lines = narrate("consumer-offsets-migration")
    shown = steps(lines)
    emigrate = index_of(shown, "[seed 000 §becoming follower 1 (onGroupUnloaded)]")
    immigrate = max(i for i, line in enumerate(shown) if "[seed 000 §becoming leader (onElection)]" in line)
    loaded = index_of(shown, "[seed 000 §loadGroupsAndOffsets 4 (loadGroup)]")
    assert emigrate < immigrate < loaded
    assert "group narrated-group into the cache: state Empty, 2 committed offsets" in shown[loaded]
    assert any("OffsetFetch there: {'t-0': 42, 't-1': 7}" in line for line in lines)
    assert any(line.endswith(": NOT_COORDINATOR") for line in lines)


def test_cli_scenario_debug_stops_at_every_step(capsys, monkeypatch):
    stops: list[int] = []
    monkeypatch.setattr(sys, "breakpointhook", lambda *a, **k: stops.append(1))
    assert main(["scenario", "fetch-hw", "--debug"]) == 0
    out = capsys.readouterr().out
    assert out.count("  [seed 004 phase") == len(stops) == 7


def test_unknown_walkthrough_is_refused():
    lines: list[str] = []
    assert run_narrated("nope", out=lines.append) == 2
    assert lines[0].startswith("unknown scenario 'nope'; available: leader-and-isr, ")


@pytest.mark.parametrize("name", ["fetch-hw"])
def test_walkthroughs_are_deterministic(name):
    assert narrate(name) == narrate(name)
