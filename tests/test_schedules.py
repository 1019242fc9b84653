"""The pytest plugin's schedule exploration (kafka_ref/testing/schedules.py), run with pytester."""

from __future__ import annotations

import re

import pytest

# Imported once here: pytester drops the modules an inner run imports, and re-importing them
# would cost seconds per inner run.
import anyio._backends._trio  # noqa: F401
import kafka_ref.sim.simulate  # noqa: F401
import trio.testing  # noqa: F401

pytest_plugins = ["pytester"]

RACE = '''
import anyio
import pytest
import trio.testing


@pytest.fixture
def anyio_backend():
    return "trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}


async def _race():
    order = []

    async def append(name):
        order.append(name)

    async with anyio.create_task_group() as tg:
        tg.start_soon(append, "a")
        tg.start_soon(append, "b")
    return order


@pytest.mark.anyio
@pytest.mark.kafka_ref_schedules(8)
async def test_race(anyio_backend):
    assert await _race() == ["a", "b"]


@pytest.mark.anyio
async def test_unmarked(anyio_backend, kafka_ref_schedule):
    print("SCHEDULE", kafka_ref_schedule)
'''


def _failing_seeds(output: str) -> list[int]:
    return sorted({int(s) for s in re.findall(r"failing schedule seed (\d+)", output)})


def test_marker_runs_schedules_and_prints_failing_seeds(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_race=RACE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-s", "test_race.py::test_race")
    outcomes = result.parseoutcomes()
    failing = _failing_seeds(result.stdout.str())
    # 1. Eight items, one per schedule; the two task orders both occur.
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 8
    assert 0 < len(failing) < 8 and outcomes["failed"] == len(failing)
    result.stdout.fnmatch_lines([f"*kafka_ref schedule seed: {failing[0]}*",
                                 f"*--kafka-ref-schedule-seed={failing[0]}*"])
    # 2. The printed seed replays the failure; a passing seed passes again.
    replay = pytester.runpytest_inprocess("-p", "no:cacheprovider", "test_race.py::test_race",
                                          f"--kafka-ref-schedule-seed={failing[0]}")
    replay.assert_outcomes(failed=1)
    passing = next(s for s in range(8) if s not in failing)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "test_race.py::test_race",
                                 f"--kafka-ref-schedule-seed={passing}").assert_outcomes(passed=1)


def test_option_explores_every_async_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_race=RACE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-s", "--kafka-ref-schedules=3",
                                          "test_race.py::test_unmarked")
    result.assert_outcomes(passed=3)
    assert sorted(re.findall(r"SCHEDULE (\d+)", result.stdout.str())) == ["0", "1", "2"]
    # Without the option an unmarked test runs once and is not given a schedule.
    plain = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-s", "test_race.py::test_unmarked")
    plain.assert_outcomes(passed=1)
    assert re.findall(r"SCHEDULE (\S+)", plain.stdout.str()) == ["None"]
