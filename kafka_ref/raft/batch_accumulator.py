"""The Raft leader's write buffer: records wait ``controller.quorum.append.linger.ms`` before the log.

Mirrors org.apache.kafka.raft.internals.BatchAccumulator (Kafka 3.8). The leader's appends
(``KafkaRaftClient#scheduleAtomicAppend``) get their offsets at once but go into an open batch;
the Raft thread writes the finished batches to the log when the linger time since the first
waiting append has passed (``KafkaRaftClient#maybeAppendBatches``), or at once after a control
message (the LeaderChangeMessage) forced a drain. So every controller write reaches the log, and
is committed, at least ``append.linger.ms`` (25 ms by default) after it was made, and writes
made within one linger window share one batch.

kafka_ref's metadata records are objects, not bytes: there is no memory pool and no batch byte
limit (Kafka's 8 MiB ``MAX_BATCH_SIZE_BYTES``, which controller writes never reach), so an open
batch takes every append until it is drained.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from kafka_ref.common.time import Time
from kafka_ref.image.records import LeaderChangeMessage, MetadataRecord
from kafka_ref.raft.raft_client import NotLeaderException, UnexpectedBaseOffsetException

# SimpleTimer's "not running" deadline (Long.MAX_VALUE).
_NOT_RUNNING = float("inf")


class _DrainStatus(enum.Enum):
    STARTED = "started"
    FINISHED = "finished"
    NONE = "none"


@dataclass(frozen=True)
class CompletedBatch:
    """Mirrors BatchAccumulator.CompletedBatch: a finished batch waiting to be written to the log.

    A data batch has ``records``; a control batch (the LeaderChangeMessage) has ``control_records``.
    """

    base_offset: int
    append_timestamp: int
    records: tuple[MetadataRecord, ...] = ()
    control_records: tuple[LeaderChangeMessage, ...] = ()

    @property
    def num_records(self) -> int:
        return len(self.records) + len(self.control_records)


class BatchAccumulator:
    """Mirrors org.apache.kafka.raft.internals.BatchAccumulator (one per leader epoch)."""

    def __init__(self, epoch: int, base_offset: int, linger_ms: int, time: Time) -> None:
        self.epoch = epoch
        self.linger_ms = linger_ms
        self.time = time
        self.next_offset = base_offset
        self._linger_deadline_ms = _NOT_RUNNING
        self._drain_status = _DrainStatus.NONE
        self._completed: deque[CompletedBatch] = deque()
        # The open batch: its base offset, creation time and records (None: no open batch).
        self._current: list[MetadataRecord] | None = None
        self._current_base_offset = 0
        self._current_timestamp = 0

    def append(self, epoch: int, records: Iterable[MetadataRecord], required_base_offset: int | None = None,
               is_atomic: bool = True) -> int:
        """Mirrors BatchAccumulator#append: the offset of the last record; the records wait in the open batch.

        1. only this epoch appends (older: NotLeaderException; newer: the caller's mistake);
        2. the batch must start at ``required_base_offset`` when one is given; 3. a drain the
        Raft thread asked for is finished first (the open batch completes); 4. the records join
        the open batch (all of them together when atomic; without a byte limit a non-atomic
        append lands the same way); 5. the linger timer starts with the first waiting append.
        """
        # 1. The epoch.
        if epoch < self.epoch:
            raise NotLeaderException(f"Append failed because the given epoch {epoch} is stale. "
                                     f"Current leader epoch = {self.epoch}")
        if epoch > self.epoch:
            raise ValueError(f"Attempt to append from epoch {epoch} which is larger than the current epoch {self.epoch}")
        records = tuple(records)
        last_offset = self.next_offset + len(records) - 1
        # 2. The required base offset.
        if required_base_offset is not None and required_base_offset != self.next_offset:
            raise UnexpectedBaseOffsetException(f"Wanted base offset {required_base_offset}, but the next offset "
                                                f"was {self.next_offset}")
        # 3. A pending drain.
        self._maybe_complete_drain()
        # 4. Into the open batch.
        if self._current is None:
            self._start_new_batch()
        assert self._current is not None
        self._current.extend(records)
        # 5. Linger from the first waiting append.
        self._maybe_reset_linger()
        self.next_offset = last_offset + 1
        return last_offset

    def _maybe_reset_linger(self) -> None:
        """Mirrors BatchAccumulator#maybeResetLinger: the timer runs from the first append after a drain."""
        if self._linger_deadline_ms == _NOT_RUNNING:
            self._linger_deadline_ms = self.time.milliseconds() + self.linger_ms

    def _start_new_batch(self) -> None:
        """Mirrors BatchAccumulator#startNewBatch: a batch at the next offset, stamped now."""
        self._current = []
        self._current_base_offset = self.next_offset
        self._current_timestamp = self.time.milliseconds()

    def _complete_current_batch(self) -> None:
        """Mirrors BatchAccumulator#completeCurrentBatch."""
        assert self._current is not None
        self._completed.append(CompletedBatch(self._current_base_offset, self._current_timestamp, tuple(self._current)))
        self._current = None

    def append_leader_change_message(self, message: LeaderChangeMessage, current_time_ms: int) -> None:
        """Mirrors BatchAccumulator#appendLeaderChangeMessage (appendControlMessages).

        1. the open batch is finished first (forceDrain); 2. the control batch follows it, one
        offset long.
        """
        # 1. Everything before it goes first.
        self.force_drain()
        # 2. Its own batch.
        self._completed.append(CompletedBatch(self.next_offset, current_time_ms, (), (message,)))
        self.next_offset += 1

    def force_drain(self) -> None:
        """Mirrors BatchAccumulator#forceDrain: the next drain need not wait for the linger time."""
        self._drain_status = _DrainStatus.STARTED
        self._maybe_complete_drain()

    def _maybe_complete_drain(self) -> None:
        """Mirrors BatchAccumulator#maybeCompleteDrain: close the open batch and stop the linger timer."""
        if self._drain_status is _DrainStatus.STARTED:
            if self._current:
                self._complete_current_batch()
            self._linger_deadline_ms = _NOT_RUNNING
            self._drain_status = _DrainStatus.FINISHED

    def needs_drain(self, current_time_ms: float) -> bool:
        """Mirrors BatchAccumulator#needsDrain."""
        return self.time_until_drain(current_time_ms) <= 0

    def time_until_drain(self, current_time_ms: float) -> float:
        """Mirrors BatchAccumulator#timeUntilDrain: 0 once a drain finished, else what is left of the linger."""
        if self._drain_status is _DrainStatus.FINISHED:
            return 0
        return max(0.0, self._linger_deadline_ms - current_time_ms)

    def drain(self) -> list[CompletedBatch]:
        """Mirrors BatchAccumulator#drain: the finished batches, in offset order (the open one closed first)."""
        if self._drain_status is _DrainStatus.NONE:
            self._drain_status = _DrainStatus.STARTED
        self._maybe_complete_drain()
        # (Kafka's appending thread may hold the lock mid-append; here the drain always finishes.)
        self._drain_status = _DrainStatus.NONE
        drained = list(self._completed)
        self._completed.clear()
        return drained

    def is_empty(self) -> bool:
        """Mirrors BatchAccumulator#isEmpty: nothing waits for the linger timer."""
        return self._linger_deadline_ms == _NOT_RUNNING

    def num_completed_batches(self) -> int:
        """Mirrors BatchAccumulator#numCompletedBatches."""
        return len(self._completed)

    def close(self) -> None:
        """Mirrors BatchAccumulator#close: what was never written is dropped (the leader lost its epoch)."""
        self.drain()
