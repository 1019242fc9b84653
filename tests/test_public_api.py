"""The public API for people who write tests against kafka_ref (issue 18).

Checks the surface itself: ``kafka_ref``'s top-level names and how light the import is, the
frozen replica view, produce/fetch helpers on both paths, the control-request senders, the
controlled-shutdown outcome, manual mode's one-line errors, the pytest plugin (its fixtures as
its docstrings name them; virtual time with no conftest, on the anyio and pytest-asyncio
paths), and the rule that tests/examples uses public names only.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

import kafka_ref
from kafka_ref import (
    Cluster,
    ControlledShutdownResult,
    Errors,
    FetchResult,
    NoControllerError,
    ProduceResult,
    ReplicaStateView,
    TopicPartition,
    run_in_virtual_time,
)
from kafka_ref.testing import plugin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = Path(__file__).resolve().parent / "examples"
TP = TopicPartition("t", 0)


# ------------------------------------------------------------------------------ imports


def test_import_kafka_ref_is_light_and_top_level_names_resolve():
    """``import kafka_ref`` loads no submodule; each public name comes from its module on first use."""
    out = subprocess.run(
        [sys.executable, "-c", "import sys, kafka_ref; print(sorted(m for m in sys.modules if m.startswith('kafka_ref')),"
                               " 'anyio' in sys.modules)"],
        capture_output=True, text=True, check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    ).stdout.strip()
    assert out == "['kafka_ref'] False"
    from kafka_ref.cluster import Cluster as ClusterFromModule
    from kafka_ref.common.errors import Errors as ErrorsFromModule
    from kafka_ref.testing.virtual_time_loop import run_in_virtual_time as run_from_module

    assert (Cluster, Errors, run_in_virtual_time) == (ClusterFromModule, ErrorsFromModule, run_from_module)
    for name in kafka_ref.__all__:
        assert getattr(kafka_ref, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        kafka_ref.Nope  # noqa: B018


def test_public_surface_has_docstrings_and_type_hints():
    """Every public method of Cluster (its own and the mixins') documents itself and annotates its return."""
    from kafka_ref.cluster_control import ClusterControl
    from kafka_ref.cluster_ops import ClusterOps
    from kafka_ref.cluster_views import ClusterViews

    for mixin in (ClusterViews, ClusterControl, ClusterOps, Cluster):
        for name, member in vars(mixin).items():
            if name.startswith("_") or not callable(member) and not isinstance(member, staticmethod):
                continue
            func = member.__func__ if isinstance(member, staticmethod) else member
            assert inspect.getdoc(func), f"{mixin.__name__}.{name} has no docstring"
            assert "return" in func.__annotations__, f"{mixin.__name__}.{name} has no return annotation"


# ------------------------------------------------------------------------------ views and helpers


@pytest.mark.anyio
async def test_replica_state_is_a_frozen_snapshot():
    async with Cluster(brokers=3) as cluster:
        assert cluster.metadata_mode == "zk"
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        for value in (b"a", b"b", b"c"):
            await cluster.produce(0, "t", 0, [value], acks=-1)
        leader = cluster.replica_state(0, "t", 0)
        assert isinstance(leader, ReplicaStateView)
        assert (leader.is_leader, leader.leader, leader.leader_epoch, leader.isr, leader.maximal_isr) == (
            True, 0, 0, frozenset({0, 1, 2}), frozenset({0, 1, 2}))
        assert (leader.high_watermark, leader.log_start_offset, leader.log_end_offset, leader.replicas) == (3, 0, 3, (0, 1, 2))
        assert sorted(leader.remote_replicas) == [1, 2]
        assert all(r.log_end_offset == 3 and 0 < r.last_caught_up_time_ms <= cluster.now_ms()
                   for r in leader.remote_replicas.values())
        follower = cluster.replica_state(1, "t", 0)
        assert (follower.is_leader, follower.leader, follower.remote_replicas, follower.log_end_offset) == (False, 0, {}, 3)
        with pytest.raises(dataclasses.FrozenInstanceError):
            leader.high_watermark = 9  # type: ignore[misc]
        await cluster.produce(0, "t", 0, [b"d"], acks=-1)
        assert leader.high_watermark == 3 and cluster.replica_state(0, "t", 0).high_watermark == 4
        assert cluster.replica_state(0, "other", 0) is None
        cluster.kill_broker(2)
        assert cluster.replica_state(2, "t", 0) is None


@pytest.mark.anyio
async def test_now_ms_is_the_brokers_clock():
    async with Cluster(brokers=1, metadata_mode="manual") as cluster:
        before = cluster.now_ms()
        await anyio.sleep(5)
        assert cluster.now_ms() - before == 5000
        assert before > 1_700_000_000_000  # epoch milliseconds, as Kafka's clock


@pytest.mark.anyio
@pytest.mark.parametrize("via", ["apis", "replica_manager"])
async def test_produce_and_fetch_return_values_on_both_paths(via):
    async with Cluster(brokers=2, metadata_mode="manual") as cluster:
        await cluster.set_partition_state("t", leader=0, leader_epoch=3, isr=[0, 1], replicas=[0, 1], is_new=True)
        first = await cluster.produce(0, "t", 0, [b"a", (b"k", b"b")], acks=-1, via=via)
        assert first == ProduceResult(Errors.NONE, 0, -1, 0, None)
        fetched = await cluster.fetch(0, "t", 0, 0, via=via)
        assert isinstance(fetched, FetchResult)
        assert (fetched.error, fetched.high_watermark, fetched.log_start_offset, fetched.diverging_epoch) == (Errors.NONE, 2, 0, None)
        assert [(r.offset, r.key, r.value, r.leader_epoch) for r in fetched.records] == [(0, None, b"a", 3), (1, b"k", b"b", 3)]
        # A follower claiming it last fetched epoch 2 up to offset 2 diverges: epoch 2 ends at 0 here.
        diverged = await cluster.fetch(0, "t", 0, 2, replica_id=1, last_fetched_epoch=2, current_leader_epoch=3, via=via)
        assert (diverged.error, diverged.diverging_epoch, diverged.records) == (Errors.NONE, (2, 0), ())
        # Not the leader (before Fetch v11 only the leader serves a consumer; from v11 the follower
        # does, up to its own high watermark), fenced epoch.
        assert (await cluster.fetch(1, "t", 0, 0, version=10, via=via)).error == Errors.NOT_LEADER_OR_FOLLOWER
        from_follower = await cluster.fetch(1, "t", 0, 0, via=via)
        assert (from_follower.error, from_follower.high_watermark) == (Errors.NONE, cluster.replica_state(1, "t", 0).high_watermark)
        assert (await cluster.fetch(0, "t", 0, 0, current_leader_epoch=2, via=via)).error == Errors.FENCED_LEADER_EPOCH
        assert (await cluster.produce(1, "t", 0, [b"x"], acks=1, via=via)).error == Errors.NOT_LEADER_OR_FOLLOWER
    with pytest.raises(ValueError, match="via='wire'"):
        await cluster.produce(0, "t", 0, [b"x"], via="wire")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_control_request_senders_answer_per_partition_errors():
    """StopReplica with a stale leader epoch, and requests from an older controller epoch, read back
    as {TopicPartition: Errors}. (ReplicaManagerTest#testStopReplicaWithExistingPartitionAndOlderLeaderEpoch,
    #testStopReplicaWithStaleControllerEpoch.)"""
    async with Cluster(brokers=2, metadata_mode="manual") as cluster:
        assert (cluster.controller_id(), cluster.controller_epoch(), cluster.broker_epoch(0)) == (3000, 1, -1)
        await cluster.set_partition_state("t", [0, 1], leader=0, leader_epoch=5, isr=[0, 1], replicas=[0, 1], is_new=True)
        t1 = TopicPartition("t", 1)
        stop = cluster.stop_replica_request({TP: (4, False), t1: (6, True)})
        assert await cluster.send_stop_replica(1, stop) == {TP: Errors.FENCED_LEADER_EPOCH, t1: Errors.NONE}
        assert cluster.replica_state(1, "t", 0) is not None and cluster.replica_state(1, "t", 1) is None
        stale = cluster.stop_replica_request({TP: (9, False)}, controller_epoch=0)
        assert await cluster.send_stop_replica(1, stale) == {TP: Errors.STALE_CONTROLLER_EPOCH}
        metadata = cluster.update_metadata_request(controller_epoch=0)
        assert await cluster.send_update_metadata(0, metadata) == Errors.STALE_CONTROLLER_EPOCH
        assert await cluster.send_update_metadata(0, cluster.update_metadata_request()) == Errors.NONE
        # The cluster keeps one id per topic in manual mode.
        assert cluster.topic_id("t") == cluster.topic_id("t") != cluster.topic_id("u")


@pytest.mark.anyio
async def test_manual_mode_controller_operations_fail_in_one_line():
    async with Cluster(brokers=1, metadata_mode="manual") as cluster:
        for call in (lambda: cluster.partition_state("t", 0), lambda: cluster.topic_assignment("t"),
                     lambda: cluster.leader_for("t", 0), lambda: cluster.active_controller()):
            with pytest.raises(NoControllerError, match=r"^\w+ needs a controller, and this Cluster runs metadata_mode='manual'"):
                call()
        with pytest.raises(NoControllerError, match=r"^create_topic needs a controller.*metadata_mode='zk' or 'kraft'") as caught:
            await cluster.create_topic("t")
        assert "\n" not in str(caught.value)
        with pytest.raises(NoControllerError, match=r"^delete_topic needs a controller"):
            await cluster.delete_topic("t")
        assert (await cluster.shutdown_broker(0)) == ControlledShutdownResult(0, False, frozenset(), 0)
    async with Cluster(brokers=1, metadata_mode="zk") as cluster:
        with pytest.raises(ValueError, match=r"^set_partition_state plays the controller and needs metadata_mode='manual'"):
            await cluster.set_partition_state("t", leader=0, leader_epoch=0, isr=[0], replicas=[0])


@pytest.mark.anyio
async def test_shutdown_broker_reports_partitions_that_could_not_move():
    """A partition whose ISR is only the broker shutting down cannot move: the outcome lists it,
    after controlled.shutdown.max.retries attempts. (KafkaServer#controlledShutdown's retry loop.)"""
    config = {"replica.lag.time.max.ms": 1000, "controlled.shutdown.max.retries": 2,
              "controlled.shutdown.retry.backoff.ms": 500}
    async with Cluster(brokers=3, config=config, seed=42) as cluster:
        controller = cluster.controller_id()
        victim, other = [b for b in range(3) if b != controller]
        await cluster.create_topic("t", replica_assignment={0: [victim, other]})
        cluster.network.cut_link(other, victim)
        assert (await cluster.produce(victim, "t", 0, [b"x"], acks=1)).error == Errors.NONE
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [victim])
        outcome = await cluster.shutdown_broker(victim)
        assert outcome == ControlledShutdownResult(victim, False, frozenset({TP}), 2)
        await cluster.wait_broker_gone(victim)
        assert cluster.broker_gone(victim) and cluster.partition_state("t", 0)["leader"] == -1


# ------------------------------------------------------------------------------ examples use the public surface only


def private_uses(source: str) -> list[str]:
    """Names in ``source`` that a test against the public surface must not use.

    Any attribute, name or import starting with an underscore (dunders aside), any
    ``replica_manager`` attribute, and imports from kafka_ref submodules (only ``from kafka_ref
    import ...`` is public).
    """
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_") and not (node.attr.startswith("__") and node.attr.endswith("__")):
                found.append(f"line {line}: .{node.attr}")
            if node.attr in ("replica_manager", "brokers", "disks", "kraft", "zookeeper"):
                found.append(f"line {line}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id.startswith("_") and not node.id.startswith("__"):
            found.append(f"line {line}: {node.id}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kafka_ref") and node.module != "kafka_ref":
            found.append(f"line {line}: from {node.module} import ...")
        elif isinstance(node, ast.Import):
            found.extend(f"line {line}: import {a.name}" for a in node.names if a.name.startswith("kafka_ref."))
        elif isinstance(node, ast.ImportFrom) and node.module == "kafka_ref":
            found.extend(f"line {line}: {a.name}" for a in node.names if a.name.startswith("_"))
    return sorted(found, key=lambda f: int(f.split(":")[0].split()[1]))


def test_the_private_name_check_catches_reach_ins():
    bad = textwrap.dedent("""
        from kafka_ref.cluster import Cluster
        import kafka_ref.server
        from kafka_ref import _EXPORTS
        async def test(cluster):
            cluster.broker(0).replica_manager.online_partition(tp)
            cluster._metadata_converged()
            cluster.brokers[0]
    """)
    assert private_uses(bad) == [
        "line 2: from kafka_ref.cluster import ...", "line 3: import kafka_ref.server", "line 4: _EXPORTS",
        "line 6: .replica_manager", "line 7: ._metadata_converged", "line 8: .brokers",
    ]


def test_examples_use_only_the_public_surface():
    files = sorted(EXAMPLES.glob("test_*.py"))
    tests = [n for f in files for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.AsyncFunctionDef) and n.name.startswith("test_")]
    assert len(files) >= 3 and len(tests) >= 10
    problems = {f.name: private_uses(f.read_text()) for f in files}
    assert problems == {f.name: [] for f in files}


# ------------------------------------------------------------------------------ the pytest plugin


def test_plugin_docstrings_name_only_fixtures_that_exist(request):
    """Every fixture-looking name in the plugin's docstrings is a fixture pytest collected from it
    (or a known non-fixture word: markers, ini options, Cluster arguments, classes)."""
    fixture_manager = request.session._fixturemanager  # noqa: SLF001 - pytest keeps collected fixtures here
    if hasattr(fixture_manager, "_arg2fixturedefs"):  # pytest 8
        arg2defs = dict(fixture_manager._arg2fixturedefs)  # noqa: SLF001
    else:  # pytest 9 keys them by the node that defines them
        arg2defs = {name: [d for defs in by_node.values() for d in defs]
                    for name, by_node in fixture_manager._arg2node2fixturedefs.items()}  # noqa: SLF001
    plugin_fixtures = {name for name, defs in arg2defs.items() if any(d.func.__module__ == plugin.__name__ for d in defs)}
    assert plugin_fixtures == {"kafka_cluster", "kafka_cluster_factory", "virtual_clock_backends"}
    all_fixtures = set(arg2defs)
    docs = [plugin.__doc__] + [inspect.getdoc(obj) or "" for obj in vars(plugin).values() if callable(obj)]
    named = {w for doc in docs for w in __import__("re").findall(r"``([a-z_][a-z0-9_]*)``", doc)}
    non_fixtures = {"metadata_mode", "brokers", "config", "seed", "kafka_ref_backends", "kafka_cluster", "cluster",
                    "pytest_asyncio_loop_factories", "event_loop_policy", "anyio_backend", "pytest11"}
    assert named - non_fixtures <= all_fixtures, named - non_fixtures - all_fixtures
    assert "virtual_asyncio_loop" not in all_fixtures and all(
        "virtual_asyncio_loop" not in d for d in docs)


STANDALONE_SUITE = '''
import time
import anyio
import pytest

WALL = []

@pytest.mark.kafka_cluster(brokers=3, config={"min.insync.replicas": 2})
async def test_anyio_path(kafka_cluster):
    async with kafka_cluster as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        start = anyio.current_time()
        await anyio.sleep(120)
        assert anyio.current_time() - start == pytest.approx(120)
        assert cluster.metadata_mode == "zk"

@pytest.mark.asyncio
async def test_pytest_asyncio_path(kafka_cluster):
    import asyncio
    async with kafka_cluster as cluster:
        assert type(asyncio.get_running_loop()).__name__ == "VirtualTimeEventLoop"
        await asyncio.sleep(120)

@pytest.mark.asyncio
async def test_other_asyncio_tests_keep_a_real_loop():
    import asyncio
    assert type(asyncio.get_running_loop()).__name__ != "VirtualTimeEventLoop"
'''


def test_plugin_gives_virtual_time_without_a_conftest(tmp_path):
    """A suite with no conftest: the fixture's tests run on trio and asyncio (anyio) and under
    pytest-asyncio, each sleeping 120 s of loop time, with no pytest deprecation warning (such as
    pytest-asyncio's for an event_loop_policy override)."""
    (tmp_path / "test_standalone.py").write_text(STANDALONE_SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-W", "error::pytest.PytestDeprecationWarning", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    wall = time.perf_counter() - started
    assert result.returncode == 0, result.stdout + result.stderr
    for item in ("test_anyio_path[trio] PASSED", "test_anyio_path[asyncio] PASSED", "test_pytest_asyncio_path PASSED",
                 "test_other_asyncio_tests_keep_a_real_loop PASSED"):
        assert item in result.stdout, result.stdout
    assert "4 passed" in result.stdout
    assert wall < 60  # four tests that each sleep 120 s of loop time


OWN_BACKEND_CONFTEST = '''
import pytest
from kafka_ref.testing.plugin import virtual_backends

@pytest.fixture(params=virtual_backends(), ids=["trio", "asyncio"])
def anyio_backend(request):
    return request.param
'''

OWN_BACKEND_SUITE = '''
import anyio
import pytest

@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.anyio
async def test_each_run_starts_at_zero(n):
    assert anyio.current_time() < 0.001
    await anyio.sleep(100)
'''


def test_a_suite_with_its_own_anyio_backend_uses_virtual_backends(tmp_path):
    """``virtual_backends()`` parametrizes a suite's own ``anyio_backend``; every item (two share
    one parameter value per backend) starts its clock at 0 and sleeps 100 s of loop time."""
    (tmp_path / "conftest.py").write_text(OWN_BACKEND_CONFTEST)
    (tmp_path / "test_own.py").write_text(OWN_BACKEND_SUITE)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert result.returncode == 0 and "4 passed" in result.stdout, result.stdout + result.stderr
