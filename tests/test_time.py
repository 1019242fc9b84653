"""kafka_ref.common.time.Time against the event loop's clock (virtual or real)."""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.common import time as time_module
from kafka_ref.common.time import Time


def test_milliseconds_reads_a_float_sum_as_the_millisecond_it_stands_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtual clock's time is a float sum of sleeps: 0.045 s + 0.005 s is 0.049999999999999996.
    A deadline armed for 50 ms must read as 50 ms when it fires (Kafka's clocks count whole
    milliseconds), not as 49 ms, which would send the waiter back to sleep for one more."""
    monkeypatch.setattr(time_module, "loop_time", lambda: 0.045 + 0.005)
    assert 0.045 + 0.005 < 0.05
    assert Time(origin_ms=1_000).milliseconds() == 1_050
    monkeypatch.setattr(time_module, "loop_time", lambda: 0.0509999)
    assert Time(origin_ms=1_000).milliseconds() == 1_050


@pytest.mark.anyio
async def test_milliseconds_after_a_sleep_on_the_virtual_clock() -> None:
    """Sleeping 45 ms then 5 ms on the test's virtual clock reads 50 ms later."""
    clock = Time(origin_ms=0)
    start = clock.milliseconds()
    await anyio.sleep(0.045)
    await anyio.sleep(0.005)
    assert clock.milliseconds() - start == 50
