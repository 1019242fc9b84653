"""What a Raft client offers its listeners: RaftClient.Listener, BatchReader, and the per-listener progress."""

from __future__ import annotations

from typing import Iterable, Iterator, Protocol

from kafka_ref.image.records import Batch
from kafka_ref.raft.replicated_log import MetadataLog


class BatchReader:
    """Mirrors org.apache.kafka.raft.BatchReader: committed batches handed to a listener."""

    def __init__(self, batches: Iterable[Batch]) -> None:
        self._batches = list(batches)

    def __iter__(self) -> Iterator[Batch]:
        return iter(self._batches)

    @property
    def last_offset(self) -> int | None:
        return self._batches[-1].last_offset if self._batches else None

    def close(self) -> None:
        """Mirrors BatchReader#close (nothing to release in memory)."""


class RaftListener(Protocol):
    """Mirrors org.apache.kafka.raft.RaftClient.Listener."""

    def handle_commit(self, reader: BatchReader) -> None: ...

    def handle_leader_change(self, leader_id: int, epoch: int) -> None: ...


class NotLeaderException(RuntimeError):
    """Mirrors org.apache.kafka.raft.errors.NotLeaderException: an append by a node that does not lead that epoch."""


class UnexpectedBaseOffsetException(RuntimeError):
    """Mirrors org.apache.kafka.raft.errors.UnexpectedBaseOffsetException: an atomic append whose required base
    offset is not the next offset of the log."""


class ListenerContext:
    """Mirrors org.apache.kafka.raft.KafkaRaftClient.ListenerContext: how far one listener has been told, and which leader it heard."""

    def __init__(self, listener: RaftListener) -> None:
        self.listener = listener
        self.next_offset = 0
        self.last_fired_leader: tuple[int, int] = (-1, 0)

    def fire_commits(self, log: MetadataLog) -> None:
        """Hand the listener every committed batch it has not seen yet (control batches included)."""
        while self.next_offset < log.high_watermark:
            batches = log.read(self.next_offset, max_offset=log.high_watermark)
            if not batches:
                return
            self.next_offset = batches[-1].last_offset + 1
            self.listener.handle_commit(BatchReader(batches))

    def maybe_fire_leader_change(self, leader_and_epoch: tuple[int, int], epoch_start_offset: int = -1) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient.ListenerContext#maybeFireLeaderChange.

        1. a new epoch, or a leader found for the same epoch, is news (shouldFireLeaderChange);
        2. when the local node leads, the listener hears it only once it has read past the
        epoch's start offset, i.e. the leader's LeaderChangeMessage is committed and read (so a
        new active controller has replayed everything committed before its epoch).
        ``epoch_start_offset`` -1: not the local leader (the one-argument maybeFireLeaderChange).
        """
        leader_id, epoch = leader_and_epoch
        last_leader, last_epoch = self.last_fired_leader
        # 1. News?
        changed = epoch > last_epoch or (epoch == last_epoch and leader_id >= 0 and last_leader < 0)
        # 2. Past the start of our own epoch.
        if changed and self.next_offset > epoch_start_offset:
            self.last_fired_leader = leader_and_epoch
            self.listener.handle_leader_change(leader_id, epoch)
