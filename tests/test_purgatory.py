"""DelayedOperationPurgatory, SystemTimer and KafkaScheduler tests (issue 3).

Mirrors kafka.server.DelayedOperationTest (Kafka 3.x; org.apache.kafka.server.purgatory in 3.9)
and the timer/scheduler behaviour the purgatories rely on. The synchronous tests drive a
MockTime and call SystemTimer#advance_clock by hand (Kafka's MockTimer); the async ones run
the timer task in virtual time.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.common.time import MockTime, Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory, TopicPartitionOperationKey
from kafka_ref.server.timer import KafkaScheduler, SystemTimer, TimerTask


class MockDelayedOperation(DelayedOperation):
    """Mirrors DelayedOperationTest.MockDelayedOperation: completable on demand; records callbacks."""

    def __init__(self, delay_ms: int, completable: bool = False) -> None:
        super().__init__(delay_ms)
        self.completable = completable
        self.try_count = 0
        self.completions = 0
        self.expirations = 0

    def try_complete(self) -> bool:
        self.try_count += 1
        return self.force_complete() if self.completable else False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


KEY_A = TopicPartitionOperationKey.of(TopicPartition("t", 0))
KEY_B = TopicPartitionOperationKey.of(TopicPartition("t", 1))


def purgatory(time: MockTime | None = None):
    time = time or MockTime()
    timer = SystemTimer(time)
    return time, timer, DelayedOperationPurgatory("mock", timer, 0)


def test_operation_key_label():
    """Mirrors TopicPartitionOperationKey#keyLabel."""
    assert KEY_A.key_label == "t-0"
    assert TopicPartitionOperationKey.of(TopicPartition("t", 0)) == KEY_A


def test_request_satisfaction():
    """Mirrors DelayedOperationTest#testRequestSatisfaction."""
    time, timer, p = purgatory()
    r1, r2 = MockDelayedOperation(100000), MockDelayedOperation(100000)
    assert p.check_and_complete(KEY_A) == 0
    assert p.try_complete_else_watch(r1, [KEY_A]) is False
    assert p.check_and_complete(KEY_A) == 0
    assert p.try_complete_else_watch(r2, [KEY_B]) is False
    assert p.check_and_complete(KEY_B) == 0
    r1.completable = True
    assert p.check_and_complete(KEY_A) == 1
    assert p.check_and_complete(KEY_A) == 0
    r2.completable = True
    assert p.check_and_complete(KEY_B) == 1
    assert p.check_and_complete(KEY_B) == 0
    assert (r1.completions, r2.completions, r1.expirations) == (1, 1, 0)
    assert timer.advance_clock() == 0


def test_try_complete_else_watch_completes_at_once():
    """Mirrors DelayedOperationPurgatory#tryCompleteElseWatch: a completable operation is never watched or timed."""
    time, timer, p = purgatory()
    op = MockDelayedOperation(100, completable=True)
    assert p.try_complete_else_watch(op, [KEY_A, KEY_B]) is True
    assert op.is_completed and op.completions == 1 and op.try_count == 1
    assert p.watched() == 0 and p.num_delayed() == 0 and timer.size() == 0
    with pytest.raises(AssertionError):
        p.try_complete_else_watch(MockDelayedOperation(100), [])


def test_request_expiry():
    """Mirrors DelayedOperationTest#testRequestExpiry: each operation expires after its own delay."""
    time, timer, p = purgatory()
    r1, r2 = MockDelayedOperation(1000), MockDelayedOperation(2000)
    p.try_complete_else_watch(r1, [KEY_A])
    p.try_complete_else_watch(r2, [KEY_B])
    assert timer.size() == 2
    time.advance(999)
    assert timer.advance_clock() == 0
    time.advance(1)
    assert timer.advance_clock() == 1
    assert (r1.is_completed, r1.completions, r1.expirations) == (True, 1, 1)
    assert not r2.is_completed
    time.advance(1000)
    assert timer.advance_clock() == 1
    assert (r2.completions, r2.expirations) == (1, 1)
    # Expired operations are no longer pending under their keys.
    assert p.num_delayed() == 0 and p.check_and_complete(KEY_A) == 0


def test_completion_cancels_expiry_and_happens_once():
    """Mirrors DelayedOperation#forceComplete: exactly one completion, a completed operation never expires."""
    time, timer, p = purgatory()
    op = MockDelayedOperation(500)
    p.try_complete_else_watch(op, [KEY_A, KEY_B])
    op.completable = True
    assert p.check_and_complete(KEY_B) == 1
    assert op.force_complete() is False
    assert p.check_and_complete(KEY_A) == 0
    time.advance(1000)
    assert timer.advance_clock() == 0
    assert (op.completions, op.expirations) == (1, 0)


def test_request_purge():
    """Mirrors DelayedOperationTest#testRequestPurge: completed operations leave num_delayed at once and
    the watch lists when their key is next checked."""
    time, timer, p = purgatory()
    test1, test2, test3 = (TopicPartitionOperationKey("test", i) for i in (1, 2, 3))
    r1, r2, r3 = MockDelayedOperation(100000), MockDelayedOperation(100000), MockDelayedOperation(100000)
    p.try_complete_else_watch(r1, [test1])
    p.try_complete_else_watch(r2, [test1, test2])
    p.try_complete_else_watch(r3, [test1, test2, test3])
    assert (p.num_delayed(), p.watched()) == (3, 6)
    r2.completable = True
    r2.try_complete()
    assert p.num_delayed() == 2
    r3.completable = True
    r3.try_complete()
    assert p.num_delayed() == 1
    p.check_and_complete(test1)
    assert p.watched() == 4
    p.check_and_complete(test2)
    assert p.watched() == 2
    p.check_and_complete(test3)
    assert p.watched() == 1
    r1.force_complete()
    p.purge_completed()
    assert (p.num_delayed(), p.watched()) == (0, 0)


def test_advance_clock_purges_past_the_interval():
    """DelayedOperationPurgatory#advanceClock's purge: completed operations lingering on keys nobody
    checks are swept once the operations counted since the last purge exceed the pending ones by
    more than purgeInterval; the estimate then restarts from the pending count."""
    time = MockTime()
    timer = SystemTimer(time)
    p = DelayedOperationPurgatory("mock", timer, 0, purge_interval=2)
    assert timer.purgatories == [p]
    test1, test2 = TopicPartitionOperationKey("test", 1), TopicPartitionOperationKey("test", 2)
    ops = [MockDelayedOperation(100000) for _ in range(4)]
    for op in ops:
        p.try_complete_else_watch(op, [test1, test2])
    assert (p.estimated_total_operations, p.num_delayed(), p.watched()) == (4, 4, 8)
    # Two complete elsewhere: 4 counted - 2 pending = 2, not more than the interval: no purge.
    ops[0].force_complete()
    ops[1].force_complete()
    p.advance_clock()
    assert (p.estimated_total_operations, p.watched(), p.purged_count) == (4, 8, 0)
    # A third: 4 - 1 = 3 > 2: the completed ones leave both lists, the estimate becomes 1.
    ops[2].force_complete()
    p.advance_clock()
    assert (p.estimated_total_operations, p.num_delayed(), p.watched(), p.purged_count) == (1, 1, 2, 6)
    # The pending operation still completes through its key.
    ops[3].completable = True
    assert p.check_and_complete(test1) == 1
    assert p.watched() == 1


@pytest.mark.anyio
async def test_idle_cluster_purges_parked_fetches():
    """An idle cluster parks a DelayedFetch per follower fetch, watched on every partition of the
    session, and nothing checks those keys again: the fetch purgatory's purge keeps the watch lists
    bounded (fetch.purgatory.purge.interval.requests; Kafka's default 1000, here 20)."""
    from kafka_ref import Cluster

    async with Cluster(brokers=3, config={"fetch.purgatory.purge.interval.requests": 20}) as cluster:
        await cluster.create_topic("idle", partitions=3, replication_factor=3)
        await anyio.sleep(60)
        for broker in cluster.brokers.values():
            fetches = broker.replica_manager.delayed_fetch_purgatory
            # Two fetchers long-poll this broker twice a second: ~240 parked fetches in 60 s, each
            # watched on its one partition; at most 21 of them (+ the pending ones) remain.
            assert fetches.purged_count > 150
            assert fetches.watched() <= 2 * 21 + 2
            assert fetches.estimated_total_operations <= 21 + 2


def test_cancel_for_key():
    """Mirrors DelayedOperationTest#testShouldCancelForKeyReturningCancelledOperations and
    #testShouldReturnNilOperationsOnCancelForKeyWhenKeyDoesntExist."""
    time, timer, p = purgatory()
    ops = [MockDelayedOperation(10000) for _ in range(3)]
    for op in ops[:2]:
        p.try_complete_else_watch(op, [KEY_A])
    p.try_complete_else_watch(ops[2], [KEY_B])
    assert p.cancel_for_key(KEY_A) == ops[:2]
    assert p.cancel_for_key(KEY_A) == []
    assert p.cancel_for_key(TopicPartitionOperationKey("nope", 0)) == []
    time.advance(20000)
    assert timer.advance_clock() == 1  # only the operation under KEY_B was still armed
    assert [op.expirations for op in ops] == [0, 0, 1]


def test_operation_must_override_try_complete_and_on_complete():
    """Mirrors DelayedOperation's abstract tryComplete/onComplete."""
    op = DelayedOperation(10)
    with pytest.raises(TypeError):
        op.try_complete()
    with pytest.raises(TypeError):
        op.on_complete()
    with pytest.raises(TypeError):
        TimerTask(5).run()


def test_timer_runs_tasks_in_deadline_order_and_skips_cancelled():
    """Mirrors SystemTimer#add/#advanceClock: due tasks run in deadline order; cancelled ones never run."""
    time = MockTime()
    timer = SystemTimer(time)
    ran: list[str] = []

    class Task(TimerTask):
        def __init__(self, delay_ms: int, name: str) -> None:
            super().__init__(delay_ms)
            self.name = name

        def run(self) -> None:
            ran.append(self.name)

    tasks = [Task(300, "c"), Task(100, "a"), Task(200, "b"), Task(150, "cancelled")]
    for task in tasks:
        timer.add(task)
    tasks[3].cancel()
    assert timer.size() == 3
    time.advance(250)
    assert timer.advance_clock() == 2 and ran == ["a", "b"]
    time.advance(50)
    assert timer.advance_clock() == 1 and ran == ["a", "b", "c"]
    assert timer.size() == 0


@pytest.mark.anyio
async def test_expiration_in_virtual_time():
    """Mirrors the purgatory's expiration reaper: an operation times out after its delay in loop time."""
    time = Time()
    timer = SystemTimer(time)
    p = DelayedOperationPurgatory("mock", timer, 0)
    done: dict[str, float] = {}

    class TimedOp(MockDelayedOperation):
        def on_expiration(self) -> None:
            super().on_expiration()
            done[self.name] = anyio.current_time() - start

    async with anyio.create_task_group() as tg:
        tg.start_soon(timer.run)
        start = anyio.current_time()
        slow, fast, completed = TimedOp(30000), TimedOp(250), TimedOp(1000)
        slow.name, fast.name, completed.name = "slow", "fast", "completed"
        for op in (slow, fast, completed):
            p.try_complete_else_watch(op, [KEY_A])
        await anyio.sleep(0.5)
        completed.completable = True
        assert p.check_and_complete(KEY_A) == 1
        with anyio.fail_after(60):
            while "slow" not in done:
                await anyio.sleep(0.1)
        tg.cancel_scope.cancel()
    assert done["fast"] == pytest.approx(0.25, abs=1e-3)
    assert done["slow"] == pytest.approx(30.0, abs=1e-3)
    assert "completed" not in done and completed.completions == 1 and completed.expirations == 0


@pytest.mark.anyio
async def test_scheduler_runs_periodic_tasks_in_virtual_time():
    """Mirrors KafkaScheduler#schedule: tasks scheduled before startup start with it; delay then period."""
    scheduler = KafkaScheduler(Time())
    runs: dict[str, list[float]] = {"periodic": [], "once": []}
    scheduler.schedule("periodic", lambda: runs["periodic"].append(anyio.current_time()), delay_ms=0, period_ms=1000)
    scheduler.schedule("once", lambda: runs["once"].append(anyio.current_time()), delay_ms=2500)
    async with anyio.create_task_group() as tg:
        start = anyio.current_time()
        scheduler.startup(tg)
        await anyio.sleep(3.5)
        tg.cancel_scope.cancel()
    assert [round(t - start, 3) for t in runs["periodic"]] == [0.0, 1.0, 2.0, 3.0]
    assert [round(t - start, 3) for t in runs["once"]] == [2.5]
    assert scheduler.scheduled == ["periodic", "once"]
