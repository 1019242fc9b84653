"""What a Raft client offers its listeners: org.apache.kafka.raft.RaftClient.Listener and BatchReader."""

from __future__ import annotations

from typing import Iterable, Iterator, Protocol

from kafka_ref.image.records import Batch


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
