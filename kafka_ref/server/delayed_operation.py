"""Operations that wait in a purgatory until they can complete or time out.

Mirrors kafka.server.DelayedOperation and kafka.server.DelayedOperationPurgatory. An operation
is watched under one or more keys (``TopicPartitionOperationKey``); whoever changes the state
behind a key calls ``check_and_complete(key)``. Everything runs on one event loop, so Kafka's
per-operation lock is not needed: a sync call cannot interleave with another.
"""

from __future__ import annotations

from collections import defaultdict
from operator import itemgetter
from typing import Callable, Generic, Hashable, Iterable, TypeVar

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.server.timer import SystemTimer, TimerTask


class TopicPartitionOperationKey(tuple):
    """Mirrors kafka.server.TopicPartitionOperationKey: a purgatory key, (topic, partition).

    Immutable, equal only to a key of the same partition. Why a ``tuple`` underneath: the
    purgatory hashes a key for every partition of every parked fetch and produce; a tuple's hash
    runs in C, a (frozen dataclass) ``__hash__`` is a Python call each time. The value is the
    same as before, hash((topic, partition)), and nothing else of ``tuple`` is part of the type.
    """

    __slots__ = ()

    def __new__(cls, topic: str, partition: int) -> "TopicPartitionOperationKey":
        return tuple.__new__(cls, (topic, partition))

    topic = property(itemgetter(0), doc="The key's topic.")
    partition = property(itemgetter(1), doc="The key's partition index.")

    __hash__ = tuple.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other or (other.__class__ is TopicPartitionOperationKey and tuple.__eq__(self, other))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __getnewargs__(self) -> tuple[str, int]:
        return (self[0], self[1])

    def __repr__(self) -> str:
        return f"TopicPartitionOperationKey(topic={self[0]!r}, partition={self[1]!r})"

    @classmethod
    def of(cls, tp: TopicPartition) -> "TopicPartitionOperationKey":
        # One key object per partition (the purgatories build keys for every partition of every
        # produce and parked fetch); equal keys compare and hash as before.
        key = _OPERATION_KEYS.get(tp)
        if key is None:
            key = _OPERATION_KEYS[tp] = cls(tp.topic, tp.partition)
        return key

    @classmethod
    def of_all(cls, tps: Iterable[TopicPartition]) -> list["TopicPartitionOperationKey"]:
        """The keys of ``tps``, in order (a parked fetch keys every partition it waits on: one call
        per fetch, not one per partition)."""
        keys = _OPERATION_KEYS
        return [keys.get(tp) or cls.of(tp) for tp in tps]

    @property
    def key_label(self) -> str:
        return f"{self.topic}-{self.partition}"


_OPERATION_KEYS: dict[TopicPartition, TopicPartitionOperationKey] = {}


class DelayedOperation(TimerTask):
    """Mirrors kafka.server.DelayedOperation.

    Subclasses define ``try_complete`` (return ``self.force_complete()`` when done),
    ``on_complete`` (send the response) and ``on_expiration``.
    """

    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self._completed = False

    def force_complete(self) -> bool:
        """Mirrors kafka.server.DelayedOperation#forceComplete: complete exactly once."""
        if self._completed:
            return False
        self._completed = True
        self.cancel()
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    def try_complete(self) -> bool:
        raise TypeError(f"{type(self).__name__} must override try_complete()")

    def on_complete(self) -> None:
        raise TypeError(f"{type(self).__name__} must override on_complete()")

    def on_expiration(self) -> None:
        """Called after a completion forced by the timeout."""

    def safe_try_complete_or_else(self, f: Callable[[], None]) -> bool:
        """Mirrors kafka.server.DelayedOperation#safeTryCompleteOrElse (no lock needed on one loop).

        1. Try to complete; 2. if that fails run ``f``; 3. then try once more.
        """
        # 1. A first attempt.
        if self.try_complete():
            return True
        # 2. The fallback (the purgatory watches the operation here).
        f()
        # 3. The last completion check.
        return self.try_complete()

    def safe_try_complete(self) -> bool:
        """Mirrors kafka.server.DelayedOperation#safeTryComplete (no lock needed on one loop)."""
        return self.try_complete()

    def run(self) -> None:
        """Mirrors kafka.server.DelayedOperation#run: the timer fired."""
        if self.force_complete():
            self.on_expiration()


T = TypeVar("T", bound=DelayedOperation)


class DelayedOperationPurgatory(Generic[T]):
    """Mirrors kafka.server.DelayedOperationPurgatory."""

    def __init__(self, purgatory_name: str, timer: SystemTimer, broker_id: int = 0, purge_interval: int = 1000) -> None:
        self.purgatory_name = purgatory_name
        self.timer = timer
        self.broker_id = broker_id
        self._watchers: dict[Hashable, list[T]] = defaultdict(list)
        self.completed_count = 0
        self.expired_count = 0
        # Kafka's purgeInterval and estimatedTotalOperations: completed operations stay in the
        # watch lists of keys nobody checks again (an idle partition's parked fetches), so once
        # more than ``purge_interval`` of them may be lingering, advance_clock sweeps them out.
        self.purge_interval = purge_interval
        self.estimated_total_operations = 0
        self.purged_count = 0
        # The broker's one reaper task (SystemTimer.run) stands for every purgatory's
        # ExpiredOperationReaper: it calls advance_clock after each wake-up.
        timer.purgatories.append(self)

    def try_complete_else_watch(self, operation: T, watch_keys: Iterable[Hashable]) -> bool:
        """Mirrors kafka.server.DelayedOperationPurgatory#tryCompleteElseWatch.

        1. Try to complete at once; 2. otherwise watch under every key; 3. arm the timeout.
        """
        # (A list, the usual argument, is recognised by its class before isinstance: per armed operation.)
        keys = watch_keys if watch_keys.__class__ is list or isinstance(watch_keys, list) else list(watch_keys)
        assert keys, "The watch key list can't be empty"
        # 1. A first attempt: most operations can complete right away.
        if operation.safe_try_complete():
            self.completed_count += 1
            return True
        # 2. Watch the operation under every key and count it for the purge estimate (Kafka 3.x
        #    then tries once more, for a completion that raced the watching; on one event loop
        #    nothing can change in between, so that second attempt is left out).
        self.estimated_total_operations += 1
        watchers = self._watchers
        for key in keys:
            watchers[key].append(operation)
        # 3. Arm the expiration timer if still pending (isCompleted read as the field it is).
        if not operation._completed:
            self.timer.add(operation)
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Mirrors kafka.server.DelayedOperationPurgatory#checkAndComplete; returns how many completed."""
        watchers = self._watchers.get(key)
        if not watchers:
            return 0
        completed = 0
        remaining: list[T] = []
        snapshot = list(watchers)
        for op in snapshot:
            if op._completed:  # (isCompleted read as the field it is: per watched operation per check)
                continue
            if op.safe_try_complete():
                completed += 1
            else:
                remaining.append(op)
        # Completing an operation may have watched new ones under this key: keep them. (The
        # usual case, the same list with nothing added, needs no search.)
        current = self._watchers.get(key, [])
        if current is not watchers or len(current) != len(snapshot):
            seen = {id(op) for op in snapshot}
            remaining.extend(op for op in current if id(op) not in seen and not op.is_completed)
        if remaining:
            self._watchers[key] = remaining
        else:
            self._watchers.pop(key, None)
        self.completed_count += completed
        return completed

    def watched(self) -> int:
        """Mirrors kafka.server.DelayedOperationPurgatory#watched: watch-list entries, completed ones
        included until a check of their key (or a purge) drops them."""
        return sum(len(ops) for ops in self._watchers.values())

    def num_delayed(self) -> int:
        """Mirrors kafka.server.DelayedOperationPurgatory#numDelayed: the operations still armed in
        the timer. (The broker's timer is shared by its purgatories, so they are counted from the
        watch lists: a pending operation is on at least one; completion, expiry and cancelForKey
        all cancel its timer task.)"""
        if not self._watchers:
            return 0
        return len({id(op) for ops in self._watchers.values() for op in ops if not op.cancelled})

    def cancel_for_key(self, key: Hashable) -> list[T]:
        """Mirrors kafka.server.DelayedOperationPurgatory#cancelForKey: stop watching ``key``; its
        operations leave the timer without completing; returns them."""
        ops = self._watchers.pop(key, [])
        for op in ops:
            op.cancel()
        return ops

    def purge_completed(self) -> int:
        """Mirrors DelayedOperationPurgatory.Watchers#purgeCompleted over every key: drop completed
        operations from the watch lists (a key left with none is removed); returns how many."""
        purged = 0
        for key in list(self._watchers):
            watchers = self._watchers[key]
            pending = [op for op in watchers if not op.is_completed]
            purged += len(watchers) - len(pending)
            if pending:
                self._watchers[key] = pending
            else:
                del self._watchers[key]
        return purged

    def advance_clock(self) -> None:
        """Mirrors kafka.server.DelayedOperationPurgatory#advanceClock (its purge half).

        1. Expired operations were already fired by the broker's timer (SystemTimer.run, which
           calls this after each wake-up). 2. If the operations counted since the last purge
           exceed the pending ones by more than ``purge_interval``, reset the estimate to the
           pending count and 3. purge completed operations from every watch list.
        """
        # 2. (The estimate alone bounds the test from above: the pending count is only worked
        #    out once the estimate passes the interval.)
        if self.estimated_total_operations <= self.purge_interval:
            return
        num_delayed = self.num_delayed()
        if self.estimated_total_operations - num_delayed <= self.purge_interval:
            return
        self.estimated_total_operations = num_delayed
        # 3. Sweep.
        self.purged_count += self.purge_completed()
