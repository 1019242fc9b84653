"""The leader epoch cache: which leader epoch began at which offset.

Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache (Kafka 3.x, where the
truncations write the checkpoint synchronously; later versions flush those asynchronously).

Each entry says "epoch E started at offset O" for the leader that wrote it. A follower asks
the leader for the end offset of its own latest epoch (OffsetsForLeaderEpoch, KIP-101/279)
and truncates to it, instead of to its high watermark. Entries stay strictly increasing in
both epoch and start offset; every change is written to the checkpoint, which lives on the
broker's Disk and so survives a crash.
"""

from __future__ import annotations

import bisect

import structlog

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.checkpoints import EpochEntry, LeaderEpochCheckpoint

__all__ = ["EpochEntry", "LeaderEpochFileCache", "UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET"]

# Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH / UNDEFINED_EPOCH_OFFSET.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

_log = structlog.get_logger("kafka.log.LeaderEpochFileCache")


class LeaderEpochFileCache:
    """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache.

    Kept as two parallel sorted lists (epochs, entries) in place of Kafka's TreeMap; one event
    loop means each method runs atomically, where Kafka takes its read/write lock.
    """

    def __init__(self, topic_partition: TopicPartition, checkpoint: LeaderEpochCheckpoint) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#<init>: load the entries found in the checkpoint."""
        self.topic_partition = topic_partition
        self.checkpoint = checkpoint
        self._epochs: list[int] = []
        self._entries: list[EpochEntry] = []
        # 1. Re-apply the checkpointed entries through the normal assignment rules.
        for entry in checkpoint.read():
            self._assign(entry)

    # -- assignment --------------------------------------------------------------------------

    def assign(self, epoch: int, start_offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#assign(int, long).

        Record that ``epoch`` starts at ``start_offset``; a no-op when the latest entry already
        has this epoch at the same or an earlier offset. Writes the checkpoint when it changed.
        """
        # (The usual call, a leader's append in its current epoch, changes nothing: answered
        #  here before an entry is built, with isUpdateNeeded's rule.)
        entries = self._entries
        if entries and epoch >= 0 and start_offset >= 0:
            latest = entries[-1]
            if epoch == latest.epoch and start_offset >= latest.start_offset:
                return
        # 1. Apply the rules; 2. persist only if something changed.
        if self._assign(EpochEntry(epoch, start_offset)):
            self.flush()

    def assign_entries(self, entries: list[EpochEntry]) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#assign(List<EpochEntry>): several entries, one write."""
        for entry in entries:
            self._assign(entry)
        if entries:
            self.flush()

    def _is_update_needed(self, entry: EpochEntry) -> bool:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#isUpdateNeeded."""
        # 1. Needed unless the latest entry is this epoch at an offset no later than this one.
        latest = self.latest_entry
        if latest is None:
            return True
        return entry.epoch != latest.epoch or entry.start_offset < latest.start_offset

    def _assign(self, entry: EpochEntry) -> bool:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#assign(EpochEntry): returns whether the cache changed."""
        # 1. Negative epochs or offsets are a caller bug (IllegalArgumentException in Kafka).
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        # 2. Skip the common case of "same epoch, later offset".
        if not self._is_update_needed(entry):
            return False
        # 3. Drop whatever would break monotonicity, then add the entry.
        self._maybe_truncate_non_monotonic_entries(entry)
        index = bisect.bisect_left(self._epochs, entry.epoch)
        self._epochs.insert(index, entry.epoch)
        self._entries.insert(index, entry)
        return True

    def _maybe_truncate_non_monotonic_entries(self, new_entry: EpochEntry) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#maybeTruncateNonMonotonicEntries.

        Walk back from the newest entry removing every entry whose epoch is not below the new
        epoch or whose start offset is not below the new start offset.
        """
        # 1. Remove from the end while an entry conflicts with the new one.
        removed: list[EpochEntry] = []
        while self._entries:
            last = self._entries[-1]
            if last.epoch >= new_entry.epoch or last.start_offset >= new_entry.start_offset:
                removed.append(last)
                self._entries.pop()
                self._epochs.pop()
            else:
                break
        # 2. Warn only when real history was cut (not just an empty epoch being replaced).
        if len(removed) > 1 or (removed and removed[0].start_offset != new_entry.start_offset):
            _log.warning(
                "leader_epoch_cache_truncated_conflicting_entries",
                topic_partition=str(self.topic_partition),
                new_entry=str(new_entry),
                removed=[str(e) for e in removed],
                size=len(self._entries),
            )

    # -- queries -----------------------------------------------------------------------------

    def non_empty(self) -> bool:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#nonEmpty."""
        return bool(self._entries)

    @property
    def latest_entry(self) -> EpochEntry | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#latestEntry."""
        return self._entries[-1] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#latestEpoch: the newest epoch, or None when empty."""
        return self._entries[-1].epoch if self._entries else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#earliestEntry."""
        return self._entries[0] if self._entries else None

    @property
    def previous_epoch(self) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#previousEpoch(): the epoch before the latest one."""
        return self._entries[-2].epoch if len(self._entries) >= 2 else None

    def previous_epoch_of(self, epoch: int) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#previousEpoch(int): the largest known epoch below ``epoch``."""
        index = bisect.bisect_left(self._epochs, epoch)
        return self._epochs[index - 1] if index > 0 else None

    def previous_entry(self, epoch: int) -> EpochEntry | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#previousEntry."""
        index = bisect.bisect_left(self._epochs, epoch)
        return self._entries[index - 1] if index > 0 else None

    def next_epoch(self, epoch: int) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#nextEpoch: the smallest known epoch above ``epoch``."""
        index = bisect.bisect_right(self._epochs, epoch)
        return self._epochs[index] if index < len(self._epochs) else None

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#epochEntry."""
        index = bisect.bisect_left(self._epochs, epoch)
        if index < len(self._epochs) and self._epochs[index] == epoch:
            return self._entries[index]
        return None

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#endOffsetFor.

        Returns ``(epoch, end offset)``: the largest known epoch not above the requested one,
        and the start offset of the next higher epoch as its end (the log end offset when the
        latest epoch is asked for). Undefined requests and epochs above every known epoch give
        ``(-1, -1)``; an epoch below every known epoch gives the requested epoch with the first
        known start offset.
        """
        # 1. An undefined epoch (old follower, bootstrap) gets undefined back.
        if requested_epoch == UNDEFINED_EPOCH:
            result = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
        # 2. The latest epoch is still open: it ends at the log end offset.
        elif self._entries and self._entries[-1].epoch == requested_epoch:
            result = (requested_epoch, log_end_offset)
        else:
            # 3. Find the first epoch above the requested one.
            higher = bisect.bisect_right(self._epochs, requested_epoch)
            if higher >= len(self._epochs):
                # 3a. Nothing above it (or an empty cache): unknown.
                result = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
            elif higher == 0:
                # 3b. Below every known epoch: the data was removed; answer with where the
                # first known epoch starts.
                result = (requested_epoch, self._entries[0].start_offset)
            else:
                # 3c. The floor epoch ends where the next epoch starts.
                result = (self._entries[higher - 1].epoch, self._entries[higher].start_offset)
        return result

    def epoch_for_offset(self, offset: int) -> int | None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#epochForOffset: the epoch that wrote ``offset``, if known."""
        # 1. Walk entries in order; the last one starting at or before the offset wins.
        previous: int | None = None
        for entry in self._entries:
            if entry.start_offset == offset:
                return entry.epoch
            if entry.start_offset > offset:
                return previous
            previous = entry.epoch
        return previous

    # -- truncation --------------------------------------------------------------------------

    def truncate_from_end(self, end_offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#truncateFromEnd (3.x; truncateFromEndAsyncFlush later).

        Remove every entry starting at or after ``end_offset``; an undefined (negative) offset
        does nothing.
        """
        # 1. Only when the newest entry starts at or past the end offset.
        latest = self.latest_entry
        if end_offset >= 0 and latest is not None and latest.start_offset >= end_offset:
            # 2. Drop entries from the end while they start at or past it, then persist.
            while self._entries and self._entries[-1].start_offset >= end_offset:
                self._entries.pop()
                self._epochs.pop()
            self.flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#truncateFromStart (3.x; truncateFromStartAsyncFlush later).

        Remove the entries starting at or before ``start_offset`` and re-add the last of them
        as starting at ``start_offset``, so the epoch of the new first offset stays known.
        """
        # 1. Collect entries from the front that start at or before the new start offset.
        removed: list[EpochEntry] = []
        while self._entries and self._entries[0].start_offset <= start_offset:
            removed.append(self._entries.pop(0))
            self._epochs.pop(0)
        # 2. Keep the epoch that covers the new start offset, moved up to it; persist.
        if removed:
            first = EpochEntry(removed[-1].epoch, start_offset)
            self._entries.insert(0, first)
            self._epochs.insert(0, first.epoch)
            self.flush()

    def clear_and_flush(self) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#clearAndFlush."""
        self._entries.clear()
        self._epochs.clear()
        self.flush()

    def clear(self) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#clear (no checkpoint write)."""
        self._entries.clear()
        self._epochs.clear()

    # -- views -------------------------------------------------------------------------------

    @property
    def epoch_entries(self) -> list[EpochEntry]:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#epochEntries: a copy, oldest first."""
        return list(self._entries)

    def epoch_with_offsets(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#epochWithOffsets."""
        return {entry.epoch: entry.start_offset for entry in self._entries}

    def flush(self) -> None:
        """Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache#flush (writeToFile): persist every entry."""
        self.checkpoint.write(self._entries)

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self.topic_partition}, {[(e.epoch, e.start_offset) for e in self._entries]})"
