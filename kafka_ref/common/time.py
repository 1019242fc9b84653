"""One clock for the whole project.

Mirrors org.apache.kafka.common.utils.Time. Kafka reads wall-clock epoch milliseconds and
uses 0 as "never" (for example ``last_caught_up_time_ms`` of a replica outside the ISR). A
virtual loop clock starts near 0, which would make "never" look recent, so ``Time`` adds a
fixed, realistic epoch origin to the event loop's clock. Nothing in kafka_ref reads the wall
clock: ``Time`` reads ``anyio.current_time()`` (virtual under trio's MockClock or our
asyncio virtual loop) and ``MockTime`` is advanced by hand in synchronous tests.
"""

from __future__ import annotations

import contextvars
import time as _wall
from typing import Callable

import anyio
import anyio.lowlevel

# 2024-01-01T00:00:00Z: the origin added to loop time so epoch-millisecond logic behaves.
EPOCH_ORIGIN_MS = 1_704_067_200_000

# The origin a ``Time()`` made in this context takes: the fixed one, or (clock="wall", chosen
# once when a cluster starts) the real epoch at loop time zero.
_default_origin_ms: contextvars.ContextVar[int] = contextvars.ContextVar("time_origin_ms", default=EPOCH_ORIGIN_MS)


def use_wall_clock_origin() -> contextvars.Token:
    """Make ``Time()`` objects created from here on report real epoch milliseconds.

    The loop's clock must itself be real (not trio's MockClock or the virtual asyncio loop).
    This is the one place kafka_ref reads the wall clock: once, to align loop time with the
    epoch. Undo with ``_default_origin_ms.reset(token)``.
    """
    origin = _wall.time_ns() // 1_000_000 - int(anyio.current_time() * 1000)
    return _default_origin_ms.set(origin)


def reset_clock_origin(token: contextvars.Token) -> None:
    _default_origin_ms.reset(token)


# (read the running loop's clock, is that loop still the one running here?) for this task.
# Why it exists: ``anyio.current_time()`` finds the backend (sniffio) on every call, ~3 µs, and
# the replication path reads the clock a dozen times per produce request. A context variable is
# per task and per thread and a new run starts from a copy of the caller's context, so an entry
# set inside one run is never seen by another; the "still running" check covers a context that
# is carried into a later run anyway (an asyncio loop that stopped, a trio run that ended).
_LOOP_CLOCK: contextvars.ContextVar[tuple[Callable[[], float], Callable[[], bool]] | None] = contextvars.ContextVar(
    "kafka_ref_loop_clock", default=None)


def _resolve_loop_clock() -> float:
    """Find the running loop's clock once (anyio's backend lookup) and remember it for this task."""
    token = anyio.lowlevel.current_token()  # raises outside an event loop, as current_time() does
    native = token.native_token
    clock = getattr(native, "time", None)
    running = getattr(native, "is_running", None)
    if callable(clock) and callable(running):
        # An asyncio event loop (our virtual-time loop included): its own time(), bound once.
        entry = (clock, running)
    else:
        # trio (MockClock or real): trio.current_time() already reads the current run's clock.
        import trio

        entry = (trio.current_time, trio.lowlevel.in_trio_run)
    _LOOP_CLOCK.set(entry)
    return entry[0]()


def loop_time() -> float:
    """The running event loop's clock in seconds: what ``anyio.current_time()`` returns, cheaply."""
    entry = _LOOP_CLOCK.get()
    if entry is not None and entry[1]():
        return entry[0]()
    return _resolve_loop_clock()


class Time:
    """Mirrors org.apache.kafka.common.utils.Time (SYSTEM), reading the event loop's clock."""

    def __init__(self, origin_ms: int | None = None) -> None:
        self.origin_ms = _default_origin_ms.get() if origin_ms is None else origin_ms

    def milliseconds(self) -> int:
        """Epoch milliseconds: loop time plus the origin (whole milliseconds of :meth:`nanoseconds`)."""
        return self.origin_ms + round(loop_time() * 1_000_000_000) // 1_000_000

    def nanoseconds(self) -> int:
        """Monotonic nanoseconds from the loop clock, rounded to the nearest nanosecond.

        A virtual clock's time is a float sum of sleeps (0.045 + 0.005 is 0.049999999999999996):
        rounding makes a deadline armed for 50 ms read 50 ms when it fires, as Kafka's integer
        clocks would, instead of 49 ms and one more sleep. Every reading below (milliseconds,
        hi_res_clock_ms) derives from this one, so they agree with each other.
        """
        return round(loop_time() * 1_000_000_000)

    def hi_res_clock_ms(self) -> int:
        return self.nanoseconds() // 1_000_000

    async def sleep(self, ms: float) -> None:
        """Sleep on the loop clock (virtual where the loop is)."""
        await anyio.sleep(ms / 1000.0)


class MockTime(Time):
    """Mirrors org.apache.kafka.common.utils.MockTime: a clock only ``sleep``/``advance`` move.

    ``sleep`` here is synchronous and just advances the clock, for sans-I/O unit tests.
    """

    def __init__(self, now_ms: int = EPOCH_ORIGIN_MS, hi_res_ns: int = 0) -> None:
        super().__init__(origin_ms=0)
        self._now_ms = now_ms
        self._ns = hi_res_ns

    def milliseconds(self) -> int:
        return self._now_ms

    def nanoseconds(self) -> int:
        return self._ns

    def advance(self, ms: int) -> None:
        if ms < 0:
            raise ValueError("MockTime cannot go backwards")
        self._now_ms += ms
        self._ns += ms * 1_000_000

    async def sleep(self, ms: float) -> None:  # type: ignore[override]
        self.advance(int(ms))
