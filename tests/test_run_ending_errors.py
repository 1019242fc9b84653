"""A debugger's quit or a Ctrl-C inside a broker stops the whole cluster and arrives as itself.

Kafka's request handler answers any Throwable with an error code and keeps serving; here that
holds for ordinary exceptions (``test_kafka_apis``), but pdb's ``q`` (``bdb.BdbQuit``, an
``Exception`` subclass), ``KeyboardInterrupt`` and ``SystemExit`` must end the run: before this,
quitting pdb in ``Partition.make_leader`` left the cluster running on the virtual clock forever.
"""

from __future__ import annotations

import bdb

import anyio
import pytest
import trio.testing

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.uuid import Uuid
from kafka_ref.replica.partition import Partition
from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop

TOPIC_ID = Uuid(0x1111222233334444, 0x5555666677778888)
BACKENDS = {
    "trio": lambda: {"clock": trio.testing.MockClock(autojump_threshold=0)},
    "asyncio": lambda: {"loop_factory": VirtualTimeEventLoop},
}


def _run_cluster_with_failing_make_leader(backend: str, error: type[BaseException], fail_on_call: int,
                                          monkeypatch: pytest.MonkeyPatch) -> dict:
    """Create a topic, kill its leader; make_leader raises ``error`` on its n-th call."""
    seen: dict = {"calls": 0, "raised_at": None, "after_raise": []}
    original = Partition.make_leader

    def make_leader(self, *args, **kwargs):
        seen["calls"] += 1
        if seen["calls"] == fail_on_call:
            seen["raised_at"] = anyio.current_time()
            raise error()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Partition, "make_leader", make_leader)

    async def main() -> None:
        try:
            async with Cluster(brokers=3, metadata_mode="zk") as cluster:
                await cluster.create_topic("t", partitions=1, replication_factor=3)
                old_leader = cluster.leader_for("t", 0)
                cluster.kill_broker(old_leader)
                # The new leader's make_leader raises; nothing below may run long after.
                while True:
                    await anyio.sleep(1)
                    seen["after_raise"].append(anyio.current_time())
        finally:
            seen["ended_at"] = anyio.current_time()

    with pytest.raises(error) as caught:
        anyio.run(main, backend=backend, backend_options=BACKENDS[backend]())
    seen["caught"] = caught.value
    return seen


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
@pytest.mark.parametrize("error", [bdb.BdbQuit, KeyboardInterrupt])
def test_quit_in_make_leader_stops_the_cluster_and_propagates(backend, error, monkeypatch):
    # 1st call: the topic's first leader; 2nd: the successor after the kill.
    seen = _run_cluster_with_failing_make_leader(backend, error, 2, monkeypatch)
    # The exception itself (no ExceptionGroup wrapper) reaches the caller of anyio.run ...
    assert type(seen["caught"]) is error
    assert seen["calls"] == 2
    # ... at the loop instant it was raised: no timer, fetcher or client kept the run going.
    assert seen["ended_at"] == seen["raised_at"]
    assert [t for t in seen["after_raise"] if t > seen["raised_at"]] == []


@pytest.mark.parametrize("error", [bdb.BdbQuit, KeyboardInterrupt])
def test_quit_during_cluster_start_propagates(error, monkeypatch):
    """Quitting at the very first stop (during start-up) ends the run too, not a later timeout."""
    seen = _run_cluster_with_failing_make_leader("trio", error, 1, monkeypatch)
    assert type(seen["caught"]) is error
    assert seen["calls"] == 1
    assert seen["ended_at"] == seen["raised_at"]


@pytest.mark.anyio
async def test_ordinary_exception_in_make_leader_is_answered_and_the_broker_keeps_serving(monkeypatch):
    """Only run-ending exceptions escape; a plain bug becomes UNKNOWN_SERVER_ERROR, as
    KafkaApis#handle answers any other Throwable (KafkaApisTest#testHandleRequestWithUnexpectedError
    is not in 3.x's suite; this is the behaviour of its `case e: Throwable => handleError`)."""

    def make_leader(self, *args, **kwargs):
        raise RuntimeError("a bug in make_leader")

    monkeypatch.setattr(Partition, "make_leader", make_leader)
    async with Cluster(brokers=1, metadata_mode="manual") as cluster:
        request = cluster.leader_and_isr_request([
            LeaderAndIsrPartitionState(topic_name="t", partition_index=0, controller_epoch=1, leader=0,
                                       leader_epoch=0, isr=(0,), partition_epoch=0, replicas=(0,), is_new=True)
        ], {"t": TOPIC_ID})
        response = await cluster.send(0, request)
        assert response.error_code == Errors.UNKNOWN_SERVER_ERROR.code
        assert cluster.broker(0).is_running
        assert cluster.live_broker_ids() == [0]


def parse_source(source: str):  # noqa: ANN201 - an ast.Module
    """ast.parse, retried once: CPython 3.11.7 can raise a spurious "AST constructor recursion
    depth mismatch" SystemError depending on the stack depth it is called at (fixed in 3.11.8)."""
    import ast

    try:
        return ast.parse(source)
    except SystemError:
        return ast.parse(source)


def test_every_catch_all_in_kafka_ref_lets_run_ending_exceptions_through():
    """Each ``except Exception`` in kafka_ref has an ``except RUN_ENDING: raise`` before it in the
    same ``try`` (bdb.BdbQuit is an Exception subclass: a catch-all would swallow pdb's quit)."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "kafka_ref"
    missing = []
    for path in sorted(package.rglob("*.py")):
        tree = parse_source(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try):
                continue
            seen_run_ending = False
            for handler in node.handlers:
                names = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
                ids = {n.id for n in names if isinstance(n, ast.Name)}
                if "RUN_ENDING" in ids:
                    seen_run_ending = True
                if ("Exception" in ids or handler.type is None) and not seen_run_ending:
                    missing.append(f"{path.relative_to(package.parent)}:{handler.lineno}")
    assert missing == []


@pytest.mark.anyio
@pytest.mark.parametrize("error", [bdb.BdbQuit, KeyboardInterrupt])
async def test_timer_reaper_stops_on_a_run_ending_error_from_a_task(error):
    """SystemTimer#run fires due tasks; one that quits the debugger ends the reaper's loop
    (it used to be the loop left spinning on the virtual clock)."""
    from kafka_ref.common.time import Time
    from kafka_ref.server.timer import SystemTimer, TimerTask

    fired: list[float] = []

    class Quits(TimerTask):
        def run(self) -> None:
            fired.append(anyio.current_time())
            raise error()

    timer = SystemTimer(Time())
    start = anyio.current_time()
    timer.add(Quits(250))
    with pytest.raises(error):
        with anyio.fail_after(60):
            await timer.run()
    assert [round(t - start, 3) for t in fired] == [0.25]
