"""Deterministic simulation: seeded workloads and faults, a history, an invariant checker.

``simulate(seed, scenario, config) -> SimResult`` (kafka_ref.sim.simulate); scenarios in
kafka_ref.sim.scenarios; narrated walkthroughs in kafka_ref.sim.narrated. From the shell:
``kafka-ref sim --scenario leader-failover --seeds 100`` and ``kafka-ref scenario NAME``.
"""

from kafka_ref.sim.scenarios import ERAS, SCENARIOS, Scenario, get_scenario
from kafka_ref.sim.simulate import SimConfig, SimResult, simulate

__all__ = ["ERAS", "SCENARIOS", "Scenario", "SimConfig", "SimResult", "get_scenario", "simulate"]
