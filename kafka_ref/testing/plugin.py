"""The kafka_ref pytest plugin (registered as a ``pytest11`` entry point: installing kafka_ref enables it).

Fixtures:

- ``kafka_cluster``: a :class:`ClusterFixture`; ``async with kafka_cluster as cluster:`` in the
  test builds and starts a :class:`kafka_ref.Cluster` and stops it at the end of the block. Configure it with the marker
  ``@pytest.mark.kafka_cluster(metadata_mode="kraft", brokers=3, config={...}, seed=0)`` or by
  indirect parametrization, ``@pytest.mark.parametrize("kafka_cluster", [{"metadata_mode":
  "zk"}, {"metadata_mode": "kraft"}], indirect=True)`` (parameters override the marker).
  The cluster is started inside the test, not in the fixture, so its task group belongs to the
  test's task: a broker task that fails fails the test where it runs.
- ``kafka_cluster_factory``: ``Cluster`` itself, for a test that wants several clusters or
  builds one from computed arguments (``async with kafka_cluster_factory(brokers=1) as c:``).
- ``virtual_clock_backends``: fresh ``(name, options)`` pairs of the two virtual-time anyio
  backends. A fixture value cannot parametrize another fixture, so a suite that builds its own
  ``anyio_backend`` uses the function instead: ``@pytest.fixture(params=virtual_backends(),
  ids=["trio", "asyncio"])`` with ``from kafka_ref.testing.plugin import virtual_backends``
  (each test still gets a MockClock of its own).

Virtual time, with no conftest: every ``async def`` test that requests ``kafka_cluster`` or
``kafka_cluster_factory`` runs on the anyio plugin twice, ``[trio]`` with
``trio.testing.MockClock(autojump_threshold=0)`` and ``[asyncio]`` with
``VirtualTimeEventLoop``, each with a clock starting at 0 (a 30 s timeout costs no wall time).
It need not be marked ``@pytest.mark.anyio`` when it takes the fixture as an argument (a test
that gets it only through another fixture needs the mark). Choose backends with the ini option
``kafka_ref_backends = trio`` or ``@pytest.mark.kafka_ref_backends("asyncio")``. A suite that
defines its own ``anyio_backend`` fixture keeps it.

pytest-asyncio: a test marked ``@pytest.mark.asyncio`` that requests one of the fixtures runs
on pytest-asyncio's runner with a ``VirtualTimeEventLoop``, through pytest-asyncio's
``pytest_asyncio_loop_factories`` hook (no ``event_loop_policy`` override). Other asyncio tests
get the loop of the current event-loop policy, as without the plugin.

Seeded-schedule exploration (``kafka_ref/testing/schedules.py``) is loaded from here as a
sub-plugin when that module exists; its hooks and fixtures live there.
"""

from __future__ import annotations

import importlib.util
import inspect
from typing import Any, Callable

import pytest
import trio.testing

from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop, default_event_loop

# Sub-plugins of this plugin: loaded with it when present (each module holds its own hooks).
pytest_plugins = [name for name in ("kafka_ref.testing.schedules",) if importlib.util.find_spec(name) is not None]

# The fixtures that put a test on virtual time.
CLUSTER_FIXTURES = ("kafka_cluster", "kafka_cluster_factory")
BACKENDS = ("trio", "asyncio")
CLUSTER_MARKER = "kafka_cluster"
BACKENDS_MARKER = "kafka_ref_backends"


# The trio option dicts handed out as ``anyio_backend`` parameters: pytest gives one parameter
# value to every item of a parametrized function, so each gets a fresh MockClock before its test
# (``pytest_runtest_setup``) and every test's timeline starts at 0 whatever ran before it.
_TRIO_OPTIONS: list[dict[str, Any]] = []


def _fresh_trio_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


def virtual_backends(names: tuple[str, ...] | list[str] = BACKENDS) -> list[tuple[str, dict[str, Any]]]:
    """Fresh (name, options) pairs for anyio: trio with a MockClock, asyncio with our virtual loop."""
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise pytest.UsageError(f"kafka_ref backends {unknown} are not known; use 'trio' and/or 'asyncio'")
    out: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        if name == "trio":
            options: dict[str, Any] = {"clock": _fresh_trio_clock()}
            _TRIO_OPTIONS.append(options)
            out.append(("trio", options))
        else:
            out.append(("asyncio", {"loop_factory": VirtualTimeEventLoop}))
    return out


# ---------------------------------------------------------------------------------------- hooks


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("kafka_ref_backends", "anyio backends for tests using kafka_ref fixtures (virtual time)",
                  type="args", default=list(BACKENDS))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{CLUSTER_MARKER}(**kwargs): Cluster arguments for the kafka_cluster fixture "
                   "(metadata_mode, brokers, config, seed)")
    config.addinivalue_line(
        "markers", f"{BACKENDS_MARKER}(*names): virtual-time anyio backends for this test ('trio', 'asyncio')")


def _uses_cluster_fixtures(fixturenames: Any) -> bool:
    return any(name in fixturenames for name in CLUSTER_FIXTURES)


def _user_defined_anyio_backend(metafunc: pytest.Metafunc) -> bool:
    """True when the suite overrides ``anyio_backend`` (a conftest fixture or a parametrize mark)."""
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if "anyio_backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return True
    defs = metafunc._arg2fixturedefs.get("anyio_backend")  # noqa: SLF001 - pytest offers no public accessor
    return bool(defs) and defs[-1].func.__module__ != "anyio.pytest_plugin"


def _requests_cluster_fixtures(obj: Any) -> bool:
    try:
        return _uses_cluster_fixtures(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str, obj: object) -> None:
    """An ``async def`` test asking for a cluster fixture runs on anyio unless pytest-asyncio owns it."""
    if not (collector.istestfunction(obj, name) and inspect.iscoroutinefunction(obj) and _requests_cluster_fixtures(obj)):
        return
    own_marks = getattr(obj, "pytestmark", ())
    if collector.get_closest_marker("asyncio") is None and not any(m.name == "asyncio" for m in own_marks):
        pytest.mark.usefixtures("anyio_backend")(obj)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Put async tests that use the cluster fixtures on the virtual-time anyio backends."""
    if not _uses_cluster_fixtures(metafunc.fixturenames) or not inspect.iscoroutinefunction(metafunc.function):
        return
    if metafunc.definition.get_closest_marker("asyncio") is not None:
        return  # pytest-asyncio runs it; see pytest_asyncio_loop_factories
    if _user_defined_anyio_backend(metafunc):
        return
    marker = metafunc.definition.get_closest_marker(BACKENDS_MARKER)
    names = list(marker.args) if marker is not None else list(metafunc.config.getini("kafka_ref_backends"))
    if "anyio_backend" not in metafunc.fixturenames:
        metafunc.fixturenames.append("anyio_backend")
    # A parametrize mark (rather than a direct call) so pytest's fixture manager leaves anyio's own,
    # real-time ``anyio_backend`` parametrization out.
    metafunc.definition.add_marker(pytest.mark.parametrize("anyio_backend", virtual_backends(names), ids=names))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Give a test on our trio backend a MockClock of its own (see ``_TRIO_OPTIONS``)."""
    callspec = getattr(item, "callspec", None)
    backend = callspec.params.get("anyio_backend") if callspec is not None else None
    if isinstance(backend, tuple) and any(backend[1] is options for options in _TRIO_OPTIONS):
        backend[1]["clock"] = _fresh_trio_clock()


@pytest.hookimpl(optionalhook=True)
def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Callable[[], Any]]:
    """pytest-asyncio: a virtual-time loop for tests using the cluster fixtures, the usual loop otherwise."""
    if _uses_cluster_fixtures(getattr(item, "fixturenames", ())):
        return {"kafka_ref_virtual_time": VirtualTimeEventLoop}
    return {"default": default_event_loop}


# ---------------------------------------------------------------------------------------- fixtures


@pytest.fixture
def virtual_clock_backends() -> list[tuple[str, dict[str, Any]]]:
    """Fresh ``(name, options)`` pairs of both virtual-time anyio backends (trio MockClock, asyncio virtual loop)."""
    return virtual_backends()


@pytest.fixture
def kafka_cluster_factory() -> Callable[..., Any]:
    """``Cluster`` itself: ``async with kafka_cluster_factory(brokers=3, metadata_mode="kraft") as cluster``."""
    from kafka_ref.cluster import Cluster

    return Cluster


class ClusterFixture:
    """What the ``kafka_cluster`` fixture gives: Cluster arguments, and a Cluster once entered.

    ``async with kafka_cluster as cluster:`` builds ``Cluster(**kafka_cluster.kwargs)`` inside
    the running event loop (a KRaft controller needs the loop's clock from its first record)
    and starts it; leaving the block stops it. ``kafka_cluster(brokers=1)`` is a copy with
    some arguments replaced. ``cluster`` is also kept as ``kafka_cluster.cluster``.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs: dict[str, Any] = kwargs
        self.cluster: Any = None

    def __call__(self, **overrides: Any) -> "ClusterFixture":
        return ClusterFixture(**{**self.kwargs, **overrides})

    async def __aenter__(self) -> Any:
        from kafka_ref.cluster import Cluster

        if self.cluster is not None:
            raise RuntimeError("this kafka_cluster is already started; use kafka_cluster(...) for another one")
        cluster = Cluster(**self.kwargs)
        await cluster.__aenter__()
        self.cluster = cluster
        return cluster

    async def __aexit__(self, *exc: Any) -> bool | None:
        cluster, self.cluster = self.cluster, None
        return await cluster.__aexit__(*exc)

    def __repr__(self) -> str:
        return f"ClusterFixture({', '.join(f'{k}={v!r}' for k, v in self.kwargs.items())})"


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest) -> ClusterFixture:
    """A Cluster to start in the test: ``async with kafka_cluster as cluster:``.

    Arguments come from ``@pytest.mark.kafka_cluster(...)`` (``metadata_mode``, ``brokers``,
    ``config``, ``seed``), overridden by an indirect parameter dict; ``Cluster``'s defaults
    fill the rest. See :class:`ClusterFixture`.
    """
    kwargs: dict[str, Any] = {}
    marker = request.node.get_closest_marker(CLUSTER_MARKER)
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{CLUSTER_MARKER} takes keyword arguments only: {marker.args!r}")
        kwargs.update(marker.kwargs)
    param = getattr(request, "param", None)
    if param is not None:
        if not isinstance(param, dict):
            raise pytest.UsageError(f"kafka_cluster parameters must be dicts of Cluster arguments, got {param!r}")
        kwargs.update(param)
    return ClusterFixture(**kwargs)
