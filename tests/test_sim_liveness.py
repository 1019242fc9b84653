"""The simulator's liveness invariants (kafka_ref/sim/client_workload.py) and its client scenario."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import trio.testing

from kafka_ref.common.errors import TimeoutException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.sim import SimConfig, simulate
from kafka_ref.sim.client_workload import AVAILABLE_WINDOW_S, BOUND_SLACK_S, ClientWorkload
from kafka_ref.sim.history import History

TP = TopicPartition("sim", 0)


def test_client_scenario_runs_real_clients_through_the_faults_and_after_healing():
    result = simulate(3, "client-failover", SimConfig(duration_s=30.0))
    assert [v.describe() for v in result.violations] == []
    # The Producer, group Consumer and Admin all made calls, every one of which ended in time.
    assert result.workload["client_ops"] > 100
    assert result.workload["client_ops_ok"] + result.workload["client_ops_failed"] == result.workload["client_ops"]
    assert result.faults["leader_kill_cycle"] > 0


class _Checker:
    def __init__(self) -> None:
        self.violations: list[tuple[str, str, dict[str, Any]]] = []

    def violate(self, invariant: str, message: str, **states: Any) -> None:
        self.violations.append((invariant, message, states))


def _workload() -> tuple[ClientWorkload, _Checker]:
    checker = _Checker()
    ctx = SimpleNamespace(checker=checker, history=History(), partitions=[TP], stopping=False,
                          sub_rng=lambda name: __import__("random").Random(name))
    return ClientWorkload(ctx), checker  # type: ignore[arg-type]


def _run(main: Any) -> None:
    anyio.run(main, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})


def test_operation_past_its_timeout_is_client_op_bounded():
    workload, checker = _workload()

    async def main() -> None:
        ok, result, op = await workload.operation("producer", "send", 5.0, lambda: anyio.sleep(60))
        assert (ok, result, op.outcome) == (False, None, "unbounded")
        assert op.ended_s - op.started_s == 5.0 + BOUND_SLACK_S
        # An error within the timeout is a completed operation.
        async def fail() -> None:
            await anyio.sleep(4.9)
            raise TimeoutException("Expiring 1 record(s)")
        ok, result, op = await workload.operation("producer", "send", 5.0, fail)
        assert (ok, op.outcome) == (False, "TimeoutException")

    _run(main)
    assert [(v[0], v[2]["operation"], v[2]["timeout_s"]) for v in checker.violations] == [("client_op_bounded", "send", 5.0)]


def test_failure_after_healing_is_client_progress_after_heal():
    workload, checker = _workload()

    async def main() -> None:
        async def fail() -> None:
            raise TimeoutException("Timeout of 30000ms expired before successfully committing offsets")
        await workload.operation("consumer", "commit", 30.0, fail, after_heal=True)
        await workload.operation("consumer", "poll", 1.0, lambda: anyio.sleep(0.5), after_heal=True)

    _run(main)
    assert [(v[0], v[2]["operation"]) for v in checker.violations] == [("client_progress_after_heal", "commit")]


def test_failure_while_the_partition_was_available_is_client_op_while_available():
    workload, checker = _workload()
    workload.partition_available = lambda tp: True  # type: ignore[method-assign]

    async def main() -> None:
        async def fail() -> None:
            await anyio.sleep(30)
            raise TimeoutException("Expiring 1 record(s) for sim-0:30000 ms has passed since batch creation")
        # 1. Unavailable until 20 s into a 30 s send: the failure is excused.
        workload._unavailable_at[TP] = 20.0
        ok, error, op = await workload.operation("producer", "send", 50.0, fail)
        workload._check_failed_while_available(TP, op, error)
        assert checker.violations == []
        # 2. Available for the send's last AVAILABLE_WINDOW_S and more: a violation.
        workload._unavailable_at[TP] = anyio.current_time() + 30 - AVAILABLE_WINDOW_S - 0.5
        ok, error, op = await workload.operation("producer", "send", 50.0, fail)
        workload._check_failed_while_available(TP, op, error)

    _run(main)
    assert [(v[0], v[2]["topic_partition"]) for v in checker.violations] == [("client_op_while_available", "sim-0")]
    assert "had been available for 12.5 s" in checker.violations[0][1]
