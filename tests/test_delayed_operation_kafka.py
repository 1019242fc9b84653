"""DelayedOperation and DelayedOperationPurgatory tests ported from Kafka 3.8's kafka.server.DelayedOperationTest.

tests/test_purgatory.py already carries testRequestSatisfaction, testRequestExpiry (in MockTime)
and testRequestPurge; the rest of the suite is here. Kafka's purgatory has its own SystemTimer
and reaper thread; here the purgatory is built on a SystemTimer over MockTime whose clock the
tests advance by hand, except for the concurrent test, which runs in virtual loop time.

Not ported:
- testLockInTryCompleteElseWatch: it checks that tryCompleteElseWatch holds the operation's
  ReentrantLock and does not go through safeTryComplete; kafka_ref runs on one event loop and
  has no per-operation lock.
- testDelayedFuture: DelayedFuturePurgatory (the ACL updates of an asynchronous Authorizer, on an
  executor thread) is not modelled.
"""

from __future__ import annotations

import random

import anyio
import pytest

from kafka_ref.common.time import MockTime, Time
from kafka_ref.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafka_ref.server.timer import SystemTimer


class MockDelayedOperation(DelayedOperation):
    """Mirrors DelayedOperationTest.MockDelayedOperation: completes once ``completable`` is set."""

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.completable = False
        self.tries = 0
        self.completions = 0
        self.expirations = 0

    def try_complete(self) -> bool:
        self.tries += 1
        if self.completable:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


def mock_purgatory():
    """Mirrors DelayedOperationTest#setUp: a purgatory named "mock" (its timer over MockTime)."""
    time = MockTime()
    timer = SystemTimer(time)
    return time, timer, DelayedOperationPurgatory("mock", timer)


def test_safe_try_complete_or_else():
    """Mirrors DelayedOperationTest#testSafeTryCompleteOrElse."""

    def op(should_complete: bool) -> MockDelayedOperation:
        operation = MockDelayedOperation(100000)
        operation.completable = should_complete
        return operation

    passed = []
    incomplete = op(False)
    assert incomplete.safe_try_complete_or_else(lambda: passed.append(True)) is False
    assert passed == [True]
    # Not completable: tried before and after the fallback, and still pending.
    assert (incomplete.tries, incomplete.is_completed, incomplete.completions) == (2, False, 0)

    def must_not_run() -> None:
        raise AssertionError("this method should NOT be executed")

    complete = op(True)
    assert complete.safe_try_complete_or_else(must_not_run) is True
    assert (complete.tries, complete.is_completed, complete.completions) == (1, True, 1)


def test_safe_try_complete_or_else_last_check_sees_what_the_fallback_did():
    """Mirrors DelayedOperation#safeTryCompleteOrElse's last completion check: an operation made
    completable by the fallback completes there."""
    operation = MockDelayedOperation(100000)

    def fallback() -> None:
        operation.completable = True

    assert operation.safe_try_complete_or_else(fallback) is True
    assert (operation.tries, operation.completions) == (2, 1)


def test_should_cancel_for_key_returning_cancelled_operations():
    """Mirrors DelayedOperationTest#shouldCancelForKeyReturningCancelledOperations."""
    time, timer, purgatory = mock_purgatory()
    ops = [MockDelayedOperation(10000) for _ in range(3)]
    purgatory.try_complete_else_watch(ops[0], ["key"])
    purgatory.try_complete_else_watch(ops[1], ["key"])
    purgatory.try_complete_else_watch(ops[2], ["key2"])

    cancelled = purgatory.cancel_for_key("key")
    assert len(cancelled) == 2
    assert cancelled == ops[:2]
    assert purgatory.num_delayed() == 1
    assert purgatory.watched() == 1
    # Cancelled, not completed: no callback ran, and their timeouts are disarmed.
    time.advance(10000)
    assert timer.advance_clock() == 1
    assert [(op.completions, op.expirations) for op in ops] == [(0, 0), (0, 0), (1, 1)]


def test_cancel_for_key_stops_counting_an_operation_still_watched_elsewhere():
    """Mirrors DelayedOperationPurgatory#numDelayed (the timer's size): an operation cancelled under
    one key leaves the count although another key still watches it."""
    time, timer, purgatory = mock_purgatory()
    op = MockDelayedOperation(10000)
    purgatory.try_complete_else_watch(op, ["key", "key2"])
    assert (purgatory.num_delayed(), purgatory.watched()) == (1, 2)
    assert purgatory.cancel_for_key("key") == [op]
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 1)
    assert op.is_completed is False


def test_should_return_nil_operations_on_cancel_for_key_when_key_doesnt_exist():
    """Mirrors DelayedOperationTest#shouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist."""
    _, _, purgatory = mock_purgatory()
    assert purgatory.cancel_for_key("key") == []


@pytest.mark.anyio
async def test_try_complete_with_multiple_threads():
    """Mirrors DelayedOperationTest#testTryCompleteWithMultipleThreads.

    100 operations, each under its own key, get 20 completion attempts at random times within
    10 ms (here: 2,000 tasks in virtual loop time instead of a 20-thread pool); the last attempt
    on each makes it completable. Every operation must complete, exactly once, through its key.
    """
    time = Time()
    timer = SystemTimer(time)
    purgatory = DelayedOperationPurgatory("mock", timer)
    rng = random.Random(20)
    max_delay_ms = 10
    completion_attempts = 20

    class TestDelayOperation(MockDelayedOperation):
        def __init__(self, index: int) -> None:
            super().__init__(10000)
            self.key = f"key{index}"
            self.completion_attempts_remaining = completion_attempts

    ops = []
    for index in range(100):
        op = TestDelayOperation(index)
        assert purgatory.try_complete_else_watch(op, [op.key]) is False
        ops.append(op)
    assert (purgatory.num_delayed(), purgatory.watched()) == (100, 100)
    completed_by_checks = []

    async def schedule_try_complete(op: TestDelayOperation, delay_ms: int) -> None:
        await anyio.sleep(delay_ms / 1000)
        op.completion_attempts_remaining -= 1
        if op.completion_attempts_remaining == 0:
            op.completable = True
        completed_by_checks.append(purgatory.check_and_complete(op.key))

    async with anyio.create_task_group() as tg:
        for _ in range(completion_attempts):
            for op in ops:
                tg.start_soon(schedule_try_complete, op, rng.randrange(max_delay_ms))

    assert all(op.is_completed for op in ops)
    assert [op.completions for op in ops] == [1] * 100
    assert len(completed_by_checks) == 2000 and sum(completed_by_checks) == 100
    assert (purgatory.num_delayed(), purgatory.watched()) == (0, 0)
    assert timer.size() == 0
