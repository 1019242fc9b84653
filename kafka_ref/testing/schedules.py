"""Schedule exploration: run a test under many seeded trio schedules, replay the one that failed.

trio runs each batch of runnable tasks in a random order drawn from an unseeded generator, so a
test of a whole cluster can interleave brokers, fetchers, controller and clients differently on
every run: a schedule-dependent bug shows up now and then and cannot be replayed. trio has a
deterministic mode (the switch Hypothesis uses): it sorts each batch by task creation order and
shuffles it with its module generator, which we seed. One seed is then one schedule, and the
same seed gives the same run.

pytest use (the hooks are loaded by the kafka_ref pytest plugin):

- ``@pytest.mark.kafka_ref_schedules(50)`` runs that test under schedules 0..49, one test item
  per schedule (``test_x[trio-schedule=17]``), each with fresh fixtures;
- ``--kafka-ref-schedules=50`` does the same for every async test (and every marked test);
- a failing item prints ``kafka_ref schedule seed: 17`` and the command that replays it;
- ``--kafka-ref-schedule-seed=17`` runs the selected tests under that one schedule;
- ``@pytest.mark.kafka_ref_schedules(20, only={"metadata_mode": "zk"})`` explores only the
  parametrized variants whose parameters match (the others run once).

Only trio has schedules to explore: the asyncio event loop runs callbacks in FIFO order, so an
asyncio variant of an explored test runs once (its other schedule items are deselected).
"""

from __future__ import annotations

import inspect
from typing import Any, Iterator

import pytest

MARKER = "kafka_ref_schedules"
_SEED_KEY = "kafka_ref_schedule"
_FAILED: list[tuple[str, int]] = []


# --------------------------------------------------------------------------------------------
# pytest hooks
# --------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka_ref", "kafka_ref schedule exploration")
    group.addoption("--kafka-ref-schedules", type=int, default=None, metavar="N",
                    help="run every async test (and every test marked kafka_ref_schedules) under N seeded "
                         "trio schedules (0..N-1)")
    group.addoption("--kafka-ref-schedule-seed", type=int, default=None, metavar="S",
                    help="run the selected tests under the one trio schedule S (replays a failure)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(n): run the test under n seeded trio schedules (schedule seeds 0..n-1); "
        "--kafka-ref-schedule-seed=S replays one")


def _schedule_seeds(metafunc: pytest.Metafunc) -> list[int] | None:
    """The schedule seeds this test runs under, or None to leave it alone."""
    config = metafunc.config
    marker = metafunc.definition.get_closest_marker(MARKER)
    replay = config.getoption("--kafka-ref-schedule-seed")
    count = config.getoption("--kafka-ref-schedules")
    explored = marker is not None or (count is not None and inspect.iscoroutinefunction(metafunc.function))
    if replay is not None:
        return [replay] if explored or inspect.iscoroutinefunction(metafunc.function) else None
    if not explored:
        return None
    if count is None:
        count = int(marker.args[0]) if marker is not None and marker.args else 20
    if count < 1:
        raise pytest.UsageError(f"kafka_ref_schedules needs at least one schedule, got {count}")
    return list(range(count))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    seeds = _schedule_seeds(metafunc)
    if seeds is None:
        return
    # The fixture is autouse (so in every test's closure, and set up before the test's own
    # fixtures start an event loop); here it gets its parameter.
    metafunc.parametrize(_SEED_KEY, seeds, indirect=True, ids=[f"schedule={s}" for s in seeds])


def _backend_name(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or "anyio_backend" not in callspec.params:
        return None
    backend = callspec.params["anyio_backend"]
    return backend[0] if isinstance(backend, tuple) else str(backend)


def _explored(item: pytest.Item) -> bool:
    """Whether this item's other parameters are ones the marker asks to explore.

    An asyncio variant has one schedule only; ``kafka_ref_schedules(n, only={"mode": "zk"})``
    explores the items whose parameters match ``only`` and runs the others once.
    """
    if _backend_name(item) == "asyncio":
        return False
    marker = item.get_closest_marker(MARKER)
    only = marker.kwargs.get("only") if marker is not None else None
    if not only:
        return True
    params = item.callspec.params  # type: ignore[attr-defined]
    return all(params.get(name) == value for name, value in only.items())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Items that are not explored (asyncio variants, parameters outside ``only``) keep their first schedule."""
    keep: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    first_seed: dict[str, Any] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or _SEED_KEY not in callspec.params or _explored(item):
            keep.append(item)
            continue
        key = item.nodeid.split("[", 1)[0] + repr(sorted((k, repr(v)) for k, v in callspec.params.items() if k != _SEED_KEY))
        if first_seed.setdefault(key, callspec.params[_SEED_KEY]) == callspec.params[_SEED_KEY]:
            keep.append(item)
        else:
            deselected.append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = keep


@pytest.fixture(autouse=True)
def kafka_ref_schedule(request: pytest.FixtureRequest) -> Iterator[int | None]:
    """The trio schedule seed this test item runs under (None: the test is not explored)."""
    seed = getattr(request, "param", None)
    if seed is None:
        yield None
        return
    # The simulator's switch (trio's deterministic mode, its generator seeded), imported late so
    # loading the plugin stays cheap.
    from kafka_ref.sim.simulate import deterministic_scheduling

    with deterministic_scheduling(seed):
        yield seed


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    callspec = getattr(item, "callspec", None)
    if report.failed and callspec is not None and _SEED_KEY in callspec.params:
        seed = callspec.params[_SEED_KEY]
        base = item.nodeid.split("[", 1)[0]
        report.sections.append(("kafka_ref schedule", f"kafka_ref schedule seed: {seed}\nreplay: "
                                f"pytest '{base}' --kafka-ref-schedule-seed={seed}"))
        if (item.nodeid, seed) not in _FAILED:
            _FAILED.append((item.nodeid, seed))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _FAILED:
        return
    terminalreporter.section("kafka_ref schedules")
    for nodeid, seed in _FAILED:
        terminalreporter.write_line(f"{nodeid}: failing schedule seed {seed} "
                                    f"(replay with --kafka-ref-schedule-seed={seed})")
    _FAILED.clear()
