"""The deterministic simulator (kafka_ref/sim): every scenario on a fixed set of seeds in the
default era, replay determinism (in process and in a subprocess with another PYTHONHASHSEED),
the history's canonical form, the network fault model, and the ``kafka-ref sim`` command.

Modelled on Kafka's RaftEventSimulationTest: a seeded cluster, random faults, invariants after
every event, and a seed that replays exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import pytest

from kafka_ref.cli import main
from kafka_ref.network.network import INTER_BROKER_PRINCIPAL, Network, serve_inbox
from kafka_ref.sim import SCENARIOS, SimConfig, simulate
from kafka_ref.sim.history import History, canonical
from kafka_ref.sim.invariants import INVARIANTS

SHORT = SimConfig(duration_s=30.0)


CI_SEEDS = (11, 12)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
@pytest.mark.parametrize("seed", CI_SEEDS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario_holds_every_invariant_in_the_default_era(scenario, seed, mode):
    """Mirrors RaftEventSimulationTest's per-scenario properties: fixed seeds, no violation, in
    ZooKeeper mode and in KRaft mode. (The README's long run covers many more seeds.)"""
    result = simulate(seed, scenario, SimConfig(duration_s=30.0, metadata_mode=mode))
    assert result.metadata_mode == mode
    assert [v.describe() for v in result.violations] == []
    assert result.ok
    assert result.events > 500
    assert result.workload["acked_all"] > 0
    assert result.workload["consumed"] > 0
    # Every scenario injects faults (process, network or both).
    assert sum(result.faults.values()) > 0


def test_controller_failover_seed_143_finishes():
    """A zero-time livelock the long run found (it never ended and grew to gigabytes): a restarted
    leader that missed its LeaderAndIsr answered UNKNOWN_TOPIC_ID for two topics, its fetch
    response merged them into one topic entry, and the follower re-sent its full fetch at once,
    forever. Fixed in FetchResponse.of (Kafka's matchingTopic); the seed now finishes clean."""
    result = simulate(143, "controller-failover", SimConfig())
    assert [v.describe() for v in result.violations] == []
    assert result.faults["leader_and_isr_dropped"] == 1


def test_same_seed_twice_in_one_process_gives_the_same_history():
    first = simulate(5, "back-to-back-failures", SHORT)
    second = simulate(5, "back-to-back-failures", SHORT)
    assert first.digest == second.digest
    assert first.events == second.events
    assert first.faults == second.faults
    other = simulate(6, "back-to-back-failures", SHORT)
    assert other.digest != first.digest
    kraft = SimConfig(duration_s=30.0, metadata_mode="kraft")
    assert simulate(5, "controller-failover", kraft).digest == simulate(5, "controller-failover", kraft).digest


def test_same_seed_in_subprocesses_with_other_hash_seeds_gives_the_same_history():
    """String hashing differs per process (PYTHONHASHSEED): the history must not depend on it.

    (It once did: sets of TopicPartition iterated in string-hash order until TopicPartition took
    Kafka's hashCode; under hash seed 271828 the leader-failover run below then differed.)
    """
    runs = [(3, "controller-failover", "zk"), (1, "leader-failover", "zk"), (2, "partition-leader-away", "zk"),
            (1, "controller-failover", "kraft")]
    here = [simulate(seed, name, SimConfig(duration_s=20.0, metadata_mode=mode)).digest for seed, name, mode in runs]
    code = ("from kafka_ref.sim import simulate, SimConfig\n"
            f"for seed, name, mode in {runs!r}:\n"
            "    print(simulate(seed, name, SimConfig(duration_s=20.0, metadata_mode=mode)).digest)")
    for hash_seed in ("0", "271828"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split() == here


def test_a_failing_seed_names_invariant_seed_event_and_states_and_prints_its_replay_command():
    result = simulate(3, "kip101", SimConfig(ibp="0.10.2"))
    assert not result.ok
    violation = next(v for v in result.violations if v.invariant == "acked_write_durable")
    assert violation.seed == 3
    assert 0 <= violation.event_index < result.events
    assert set(violation.states) == {"offset", "acked_epoch", "found"}
    assert violation.describe().startswith(f"[acked_write_durable] seed=3 event=#{violation.event_index}: ")
    assert result.replay_command() == "kafka-ref sim --scenario kip101 --seed 3 --ibp 0.10.2 --trace"
    assert set(result.violation_counts) <= set(INVARIANTS)


def test_canonical_form_sorts_sets_and_drops_addresses():
    assert canonical({"b", "a", "c"}) == "{a,b,c}"
    assert canonical(frozenset({3, 1, 2})) == "{1,2,3}"
    assert canonical({"z": 1, "a": [1, (2, 3)]}) == "{a:[1,[2,3]],z:1}"
    assert canonical("<Foo object at 0x7f00deadbeef>") == "<Foo object>"
    assert canonical(b"v1") == "v1"


def test_history_digest_covers_every_event_line():
    clock = iter([0.0, 0.0, 0.5, 1.25]).__next__
    history = History(clock=clock)
    history.start_clock()
    history.append("client", "produce", n=1, acks=-1)
    history.append("fault", "crash_restart", broker=2)
    assert history.lines() == ["0 0.000 client produce acks=-1 n=1", "1 500.000 fault crash_restart broker=2"]
    same = History(clock=iter([0.0, 0.0, 0.5]).__next__)
    same.start_clock()
    same.append("client", "produce", acks=-1, n=1)
    assert same.lines()[0] == history.lines()[0]


class _DuplicateThenDelay:
    """A fault model: the first request twice (second copy 5 ms late), then each one 10 ms late."""

    def __init__(self, tg):
        self.tg = tg
        self.seen = 0

    def deliveries(self, envelope):
        self.seen += 1
        return (0.0, 0.005) if self.seen == 1 else (0.010,)

    def call_later(self, delay_s, callback):
        async def later():
            await anyio.sleep(delay_s)
            callback()

        self.tg.start_soon(later)


@pytest.mark.anyio
async def test_network_fault_model_duplicates_and_delays_requests():
    """Network.set_fault_model: a duplicate reaches the handler twice and the sender gets the
    answer to the second copy (the first answer was lost, as on a resend after a dropped
    connection); a delayed request arrives late; without a model the fast path is back."""
    network = Network()
    handled: list[tuple[str, float]] = []

    def handle(envelope):
        handled.append((envelope.request, anyio.current_time()))
        envelope.respond(f"ok {envelope.request} copy {sum(1 for r, _ in handled if r == envelope.request)}")

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_inbox, network.register(1), handle)
        network.set_fault_model(_DuplicateThenDelay(tg))
        start = anyio.current_time()
        assert await network.send(0, 1, "a", 1000, INTER_BROKER_PRINCIPAL) == "ok a copy 2"
        assert round((anyio.current_time() - start) * 1000) == 5
        assert await network.send(0, 1, "b", 1000, INTER_BROKER_PRINCIPAL) == "ok b copy 1"
        await anyio.sleep(0.05)
        network.set_fault_model(None)
        assert await network.send(0, 1, "c", 1000, INTER_BROKER_PRINCIPAL) == "ok c copy 1"
        tg.cancel_scope.cancel()
    assert [r for r, _ in handled] == ["a", "a", "b", "c"]
    times = [round((t - start) * 1000) for _, t in handled]
    assert times[:3] == [0, 5, 15]


def test_progress_bar_redraws_one_line():
    import io

    from kafka_ref.sim.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar(4, "kip101 (default)", stream=stream, width=8)
    bar.update(failed=False)
    bar.update(failed=True)
    bar.close()
    assert stream.getvalue() == ("\rkip101 (default) [##------] 1/4 seeds, 0 failing"
                                 "\rkip101 (default) [####----] 2/4 seeds, 1 failing\n")


def test_an_unknown_metadata_mode_is_refused():
    with pytest.raises(ValueError, match="runs 'zk' or 'kraft' clusters"):
        simulate(1, "leader-failover", SimConfig(metadata_mode="manual"))


def test_a_pre_kraft_era_is_refused_in_kraft_mode():
    with pytest.raises(ValueError, match=r"0\.11\.0 predates KRaft \(3\.0\)"):
        simulate(1, "kip279", SimConfig(ibp="0.11", metadata_mode="kraft"))


def test_cli_refuses_a_pre_kraft_era_in_kraft_mode(capsys):
    assert main(["sim", "--scenario", "kip101", "--seeds", "1", "--ibp", "0.10.2", "--metadata-mode", "kraft"]) == 2
    assert "0.10.2 predates KRaft (3.0)" in capsys.readouterr().err


def test_kraft_controller_failover_kills_and_restarts_the_controller_node():
    """KRaft mode's controller-failover: the controller node dies and comes back in a higher
    epoch, brokers lose heartbeats for longer than broker.session.timeout.ms (fenced, then
    unfenced), metadata fetches are dropped or duplicated; no invariant breaks."""
    result = simulate(1, "controller-failover", SimConfig(metadata_mode="kraft", keep_history=True))
    assert result.ok, [v.describe() for v in result.violations]
    assert (result.faults["controller_kill"], result.faults["broker_heartbeats_lost"]) == (2, 3)
    assert (result.faults["metadata_fetch_dropped"], result.faults["metadata_fetch_duplicated"]) == (6, 3)
    events = result.history.events
    epochs = [e.fields["epoch"] for e in events if e.name == "controller_restarted" and e.source == "fault"]
    assert epochs == [2, 3]
    # Two brokers fenced for lost heartbeats; five unfencings (three at start-up, then those two).
    assert len([e for e in events if e.name == "fencing_stale_broker"]) == 2
    assert len([e for e in events if e.name == "broker_state_change" and e.fields.get("next") == "UNFENCED"]) == 5


def test_cli_replays_one_seed(capsys):
    code = main(["sim", "--scenario", "leader-failover", "--seed", "4", "--duration", "20"])
    out = capsys.readouterr().out
    assert code == 0
    assert "seed 4 scenario leader-failover era default" in out
    assert "history sha256 " in out
    assert "no invariant violated" in out


def test_cli_trace_prints_a_timeline_with_the_faults(capsys):
    code = main(["sim", "--scenario", "back-to-back-failures", "--seed", "2", "--duration", "30", "--trace"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("timeline of seed 2, scenario back-to-back-failures, era default")
    assert "back_to_back " in out and "broker_crashed" in out and "become_leader" in out
    assert " produce_ack " not in out          # per-record traffic is left out of --trace


def test_cli_runs_many_seeds_in_worker_processes_and_prints_the_summary(capsys):
    code = main(["sim", "--scenario", "last-replica-standing", "--seeds", "2", "--jobs", "2", "--duration", "20",
                 "--no-progress", "--markdown"])
    out = capsys.readouterr().out
    assert code == 0
    assert "scenario last-replica-standing, era default, zk mode: 2 seeds, 0 with violations" in out
    assert "simulated s per wall s" in out and "seeds/min" in out
    assert "faults injected:" in out and "last_replica_standing" in out
    assert "violations (seeds per invariant):\n    none" in out
    assert "| last-replica-standing | zk | default | 2 |" in out


def test_long_run_script_writes_the_readme_table(tmp_path):
    """benchmarks/sim_long_run.py: one row per (scenario, mode, era), written as each finishes."""
    from benchmarks.sim_long_run import LEGACY_ERAS, main as long_run, plan

    rows = plan(1000, 200, 50)
    assert len(rows) == len(SCENARIOS) * (2 + len(LEGACY_ERAS))
    assert rows[0] == ("leader-failover", "zk", None, 1000) and ("kip279", "zk", "0.11", 50) in rows
    assert [r for r in plan(0, 200, 0, ("kraft",))] == [(name, "kraft", None, 200) for name in SCENARIOS]
    out = tmp_path / "run.md"
    assert long_run(["--seeds", "1", "--kraft-seeds", "0", "--era-seeds", "0", "--modes", "zk", "--jobs", "1",
                     "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Simulator long run (complete,")
    table = [line for line in text.splitlines() if line.startswith("| ") and "| zk | default | 1 |" in line]
    assert [line.split(" | ")[0][2:] for line in table] == list(SCENARIOS)
    assert all(" | 0 | 0 / 0 | " in line or "last-replica-standing" in line for line in table)


def test_a_clean_shutdown_cut_short_by_the_end_of_the_faults_is_finished_at_healing():
    """The 10,000-seed KRaft run of leader-failover found it (--seed=139, and 5 more in its first 500):
    a controlled shutdown begun just before the faults stopped was cancelled with its nemesis, the
    broker kept running with its fetchers stopped, healing restarted only stopped brokers, and the
    cluster never converged (replicas_identical, acked_write_durable). Healing now finishes such a
    shutdown with the clean stop and restarts the broker."""
    result = simulate(139, "leader-failover", SimConfig(metadata_mode="kraft", keep_history=True))
    assert [v.describe() for v in result.violations] == []
    assert result.faults["controlled_shutdown"] == 1
    # The seed still reaches the case: healing finished an interrupted shutdown.
    assert any(" interrupted_shutdown_finished " in line for line in result.history.lines())


@pytest.mark.anyio
async def test_metadata_fault_event_is_a_violation() -> None:
    """A KRaft broker's non-fatal metadata fault (BrokerMetadataPublisher's publishing fault
    handler logs it and goes on, as Kafka's does) is reported as ``metadata_applied_without_fault``."""
    from kafka_ref.sim.history import SOURCE_LOG
    from kafka_ref.sim.scenarios import get_scenario
    from kafka_ref.sim.simulate import SimConfig, SimContext

    ctx = SimContext(1, get_scenario("leader-failover"), SimConfig(metadata_mode="kraft"))
    ctx.history.append(SOURCE_LOG, "metadata_replay_error", broker_id=2, offset=7, error="ValueError()")
    assert [(v.invariant, v.message, v.states) for v in ctx.checker.violations] == [
        ("metadata_applied_without_fault", "broker 2: metadata_replay_error",
         {"broker_id": 2, "offset": 7, "error": "ValueError()"})]
    assert "metadata_applied_without_fault" in INVARIANTS
