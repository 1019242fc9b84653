"""One clock for the whole project.

Mirrors org.apache.kafka.common.utils.Time. Kafka reads wall-clock epoch milliseconds and
uses 0 as "never" (for example ``last_caught_up_time_ms`` of a replica outside the ISR). A
virtual loop clock starts near 0, which would make "never" look recent, so ``Time`` adds a
fixed, realistic epoch origin to the event loop's clock. Nothing in kafka_ref reads the wall
clock: ``Time`` reads ``anyio.current_time()`` (virtual under trio's MockClock or our
asyncio virtual loop) and ``MockTime`` is advanced by hand in synchronous tests.
"""

from __future__ import annotations

import anyio

# 2024-01-01T00:00:00Z: the origin added to loop time so epoch-millisecond logic behaves.
EPOCH_ORIGIN_MS = 1_704_067_200_000


class Time:
    """Mirrors org.apache.kafka.common.utils.Time (SYSTEM), reading the event loop's clock."""

    def __init__(self, origin_ms: int = EPOCH_ORIGIN_MS) -> None:
        self.origin_ms = origin_ms

    def milliseconds(self) -> int:
        """Epoch milliseconds: loop time plus the origin."""
        return self.origin_ms + int(anyio.current_time() * 1000)

    def nanoseconds(self) -> int:
        """Monotonic nanoseconds from the loop clock."""
        return int(anyio.current_time() * 1_000_000_000)

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
