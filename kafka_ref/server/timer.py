"""Timed tasks on the loop clock.

Mirrors org.apache.kafka.server.util.timer.SystemTimer (the hierarchical timing wheel) in the
simplest faithful form: a heap of deadlines served by one task that sleeps until the earliest
one. Deadlines are loop-clock milliseconds (``Time.hi_res_clock_ms``), so under a virtual clock
a 30 s request timeout costs nothing.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable

import anyio
import structlog

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.time import Time

_log = structlog.get_logger("kafka.utils.KafkaScheduler")


class TimerTask:
    """Mirrors org.apache.kafka.server.util.timer.TimerTask: something to run at a deadline."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def run(self) -> None:  # overridden by DelayedOperation
        raise TypeError(f"{type(self).__name__} must override run()")


class SystemTimer:
    """Mirrors org.apache.kafka.server.util.timer.SystemTimer#add / #advanceClock."""

    def __init__(self, time: Time) -> None:
        self.time = time
        self._heap: list[tuple[int, int, TimerTask]] = []
        self._seq = itertools.count()
        self._wakeup = anyio.Event()
        # Whether ``_wakeup`` is set already: add() then skips setting it again (a no-op that still
        # costs two calls, and most adds come before the reaper has run).
        self._wakeup_set = False
        # The purgatories this timer serves: after each wake-up the reaper runs their purge check
        # (DelayedOperationPurgatory#advanceClock), as each of Kafka's per-purgatory reapers does.
        self.purgatories: list = []
        # The deadline the reaper sleeps until (inf: until woken); None while it is not asleep.
        self._reaper_deadline: float | None = None

    def add(self, task: TimerTask) -> None:
        """The task joins the heap; the reaper is woken only if it must act sooner.

        Like the DelayQueue that Kafka's reaper polls (whose offer signals a waiting taker only when
        the new element becomes the head), a task due no earlier than the one the reaper sleeps
        until does not wake it, unless a purgatory's purge check could now pass
        (DelayedOperationPurgatory#advanceClock). Cancelled tasks at the top are dropped here, as
        the reaper does after each wake-up, so a reaper left asleep does not keep completed
        operations alive.
        """
        deadline = self.time.hi_res_clock_ms() + task.delay_ms
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        heapq.heappush(heap, (deadline, next(self._seq), task))
        if self._wakeup_set:
            return
        armed = self._reaper_deadline
        if armed is not None and deadline >= armed:
            for purgatory in self.purgatories:
                if purgatory.estimated_total_operations > purgatory.purge_interval:
                    break
            else:
                return
        self._wakeup_set = True
        self._wakeup.set()

    def size(self) -> int:
        return sum(1 for _, _, t in self._heap if not t.cancelled)

    def advance_clock(self) -> int:
        """Run every task whose deadline has passed; return how many ran."""
        now = self.time.hi_res_clock_ms()
        ran = 0
        while self._heap and self._heap[0][0] <= now:
            _, _, task = heapq.heappop(self._heap)
            if not task.cancelled:
                task.run()
                ran += 1
        return ran

    async def run(self) -> None:
        """The expiration reaper: sleep until the earliest deadline (or the next add), fire what is
        due, then let each purgatory purge its watch lists if it is time to."""
        while True:
            self.advance_clock()
            for purgatory in self.purgatories:
                # (advanceClock's first test read here: a purgatory below its purge interval has
                #  nothing to do, and the reaper wakes per armed operation.)
                if purgatory.estimated_total_operations > purgatory.purge_interval:
                    purgatory.advance_clock()
            while self._heap and self._heap[0][2].cancelled:
                heapq.heappop(self._heap)
            self._wakeup = anyio.Event()
            self._wakeup_set = False
            if self._heap:
                self._reaper_deadline = self._heap[0][0]
                wait_ms = max(0, self._heap[0][0] - self.time.hi_res_clock_ms())
                try:
                    with anyio.move_on_after(wait_ms / 1000.0):
                        await self._wakeup.wait()
                finally:
                    self._reaper_deadline = None
            else:
                self._reaper_deadline = float("inf")
                try:
                    await self._wakeup.wait()
                finally:
                    self._reaper_deadline = None


class KafkaScheduler:
    """Mirrors kafka.utils.KafkaScheduler#schedule: named periodic or one-shot tasks.

    Tasks run inside the broker's task group, so a crash of the broker cancels them all.
    """

    def __init__(self, time: Time) -> None:
        self.time = time
        self._task_group: anyio.abc.TaskGroup | None = None
        self._pending: list[tuple[str, Callable[[], object], int, int]] = []
        self.scheduled: list[str] = []

    def startup(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        for item in self._pending:
            self._start(*item)
        self._pending.clear()

    def schedule(self, name: str, fn: Callable[[], object], delay_ms: int = 0, period_ms: int = -1) -> None:
        """Run ``fn`` after ``delay_ms`` and then every ``period_ms`` (once if negative)."""
        self.scheduled.append(name)
        if self._task_group is None:
            self._pending.append((name, fn, delay_ms, period_ms))
        else:
            self._start(name, fn, delay_ms, period_ms)

    def _start(self, name: str, fn: Callable[[], object], delay_ms: int, period_ms: int) -> None:
        async def loop() -> None:
            await anyio.sleep(delay_ms / 1000.0)
            while True:
                # A failing run is logged and the task keeps its schedule, as Kafka's scheduler
                # catches what a task throws.
                try:
                    result = fn()
                    if hasattr(result, "__await__"):
                        await result  # type: ignore[misc]
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    _log.error("uncaught_exception_in_scheduled_task", task=name, error=repr(exc))
                if period_ms < 0:
                    return
                await anyio.sleep(period_ms / 1000.0)

        assert self._task_group is not None
        self._task_group.start_soon(loop, name=name)
