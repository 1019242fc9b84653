"""The simulator across eras (inter.broker.protocol.version): the checker finds the KIP-101 loss
under 0.10.2 and the KIP-279 divergence under 0.11 on the scenarios built to provoke them, and
finds nothing on the same seeds under 2.0 and the default era.

The seeds below were picked by scanning from seed 1 (the bounded search in the last test shows
how few seeds it takes); a change to the simulator or the cluster may move them.
"""

from __future__ import annotations

import pytest

from kafka_ref.sim import SimConfig, simulate
from kafka_ref.sim.scenarios import ERAS, SCENARIOS, normalize_ibp

KIP101_SEED = 7
KIP279_SEED = 7  # the first seed (from 1) whose IBP-0.11 run shows the divergence since the brokers schedule log retention
SECONDS = 30.0  # simulated seconds of faults per run (then healing and the final checks)


def test_eras_map_to_inter_broker_protocol_versions():
    assert ERAS == {"0.10.2": "0.10.2", "0.11": "0.11.0", "2.0": "2.0", "default": None}
    assert normalize_ibp("0.11") == "0.11.0"
    assert normalize_ibp("default") is None
    assert normalize_ibp("3.5") == "3.5"
    assert SCENARIOS["kip101"].expect_violation == {"0.10.2": "acked_write_durable"}
    assert SCENARIOS["kip279"].expect_violation == {"0.11": "replicas_identical"}


def test_kip101_loses_an_acknowledged_write_before_kip101():
    """IBP 0.10.2: a follower truncates to its own HW on a leader change; elected next, it lacks
    writes the previous leader acknowledged (the scenario of KIP-101)."""
    result = simulate(KIP101_SEED, "kip101", SimConfig(ibp="0.10.2", duration_s=SECONDS))
    assert "acked_write_durable" in result.violation_counts
    loss = next(v for v in result.violations if v.invariant == "acked_write_durable")
    assert loss.seed == KIP101_SEED
    assert "is not on every replica" in loss.message
    assert loss.states["acked_epoch"] == 0
    assert result.faults["back_to_back"] >= 1


@pytest.mark.parametrize("ibp", ["0.11", "2.0", None])
def test_kip101_scenario_holds_from_kip101_on(ibp):
    result = simulate(KIP101_SEED, "kip101", SimConfig(ibp=normalize_ibp(ibp), duration_s=SECONDS))
    assert [v.describe() for v in result.violations] == []


def test_kip279_replicas_diverge_with_kip101_as_first_shipped():
    """IBP 0.11: a follower asks for an epoch the new leader never had and is answered with the
    start of the leader's next epoch; it keeps a suffix the leader does not have (KIP-279)."""
    result = simulate(KIP279_SEED, "kip279", SimConfig(ibp="0.11.0", duration_s=SECONDS))
    assert "replicas_identical" in result.violation_counts
    divergence = next(v for v in result.violations if v.invariant == "replicas_identical")
    assert divergence.seed == KIP279_SEED
    assert " differ from offset " in divergence.message
    # The two replicas hold different records (different leader epochs) at the same offset.
    held = [v for k, v in divergence.states.items() if k.startswith("replica_")]
    assert len(held) == 2 and held[0] != held[1]


@pytest.mark.parametrize("ibp", ["2.0", None])
def test_kip279_scenario_holds_from_kip279_on(ibp):
    result = simulate(KIP279_SEED, "kip279", SimConfig(ibp=ibp, duration_s=SECONDS))
    assert [v.describe() for v in result.violations] == []


def first_failing_seed(scenario: str, ibp: str, invariant: str, limit: int) -> int | None:
    for seed in range(1, limit + 1):
        if invariant in simulate(seed, scenario, SimConfig(ibp=ibp, duration_s=SECONDS)).violation_counts:
            return seed
    return None


@pytest.mark.parametrize("scenario,ibp,invariant", [
    ("kip101", "0.10.2", "acked_write_durable"),
    ("kip279", "0.11.0", "replicas_identical"),
])
def test_the_checker_finds_each_anomaly_within_a_few_seeds(scenario, ibp, invariant):
    assert first_failing_seed(scenario, ibp, invariant, limit=10) is not None
