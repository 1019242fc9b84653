"""Checkpoint files, kept as text in memory.

Mirrors org.apache.kafka.server.common.CheckpointFile,
org.apache.kafka.storage.internals.checkpoint.{CheckpointFileWithFailureHandler,
OffsetCheckpointFile, LeaderEpochCheckpointFile} and
org.apache.kafka.storage.internals.log.EpochEntry.

A checkpoint file is the text Kafka would write: a version line (0), a count line, then one
entry per line. We keep that text (not a dict), so a test can look at exactly what a broker
would find on disk after a crash, and ``read`` really parses it back. A file that was never
written does not exist and reads as empty, as in Kafka. A file that does not parse takes its
log directory offline and raises KafkaStorageException, as Kafka's failure handler does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.topic_partition import TopicPartition

CURRENT_VERSION = 0

T = TypeVar("T")


class LogDirFailureChannel(Protocol):
    """Mirrors org.apache.kafka.storage.internals.log.LogDirFailureChannel (what a file needs of it)."""

    def mark_offline(self, reason: str) -> None: ...


@dataclass(frozen=True, slots=True, order=True)
class EpochEntry:
    """Mirrors org.apache.kafka.storage.internals.log.EpochEntry: an epoch and its first offset."""

    epoch: int
    start_offset: int

    def __str__(self) -> str:
        return f"EpochEntry(epoch={self.epoch}, startOffset={self.start_offset})"


class _MalformedCheckpoint(Exception):
    """A parse failure inside a checkpoint file (Kafka's IOException); never escapes this module."""


class EntryFormatter(Protocol[T]):
    """Mirrors org.apache.kafka.server.common.CheckpointFile.EntryFormatter: one entry <-> one line."""

    def to_string(self, entry: T) -> str: ...

    def from_string(self, line: str) -> T: ...


class CheckpointFile(Generic[T]):
    """Mirrors org.apache.kafka.server.common.CheckpointFile with CheckpointFileWithFailureHandler.

    The shared format: version, count, entries, one per line as the formatter writes them.
    ``content`` is the file's text, or None while the file does not exist.
    """

    def __init__(
        self,
        path: str,
        formatter: EntryFormatter[T],
        log_dir_failure_channel: LogDirFailureChannel | None = None,
    ) -> None:
        self.path = path
        self.formatter = formatter
        self.log_dir_failure_channel = log_dir_failure_channel
        self.content: str | None = None
        self.write_count = 0

    # -- file operations ---------------------------------------------------------------------

    def exists(self) -> bool:
        return self.content is not None

    def delete(self) -> None:
        """Remove the file (it then reads as empty)."""
        self.content = None

    def write_entries(self, entries: Iterable[T]) -> None:
        """Mirrors org.apache.kafka.server.common.CheckpointFile#write: replace the file atomically with the given entries."""
        # 1. A failed log directory cannot be written to.
        self._check_writable()
        # 2. Render version, count, then one line per entry.
        items = list(entries)
        lines = [str(CURRENT_VERSION), str(len(items))]
        lines.extend(map(self.formatter.to_string, items))
        # 3. Swap the new text in whole (Kafka writes a .tmp file and renames it).
        self.content = "\n".join(lines) + "\n"
        self.write_count += 1

    def read_entries(self) -> list[T]:
        """Mirrors org.apache.kafka.server.common.CheckpointFile#read: parse the file; a missing file reads as empty."""
        # 1. No file yet: nothing was checkpointed.
        if self.content is None:
            return []
        try:
            # 2. Check the version line.
            lines = self.content.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if not lines:
                raise _MalformedCheckpoint("empty file")
            try:
                version = int(lines[0].strip())
            except ValueError:
                raise _MalformedCheckpoint(f"Malformed line in checkpoint file ({self.path}): '{lines[0]}'") from None
            if version != CURRENT_VERSION:
                raise _MalformedCheckpoint(f"Unrecognised version:{version}, expected version: {CURRENT_VERSION} in checkpoint file at: {self.path}")
            # 3. Read the expected count, then exactly that many entries.
            if len(lines) < 2:
                raise _MalformedCheckpoint(f"Malformed line in checkpoint file ({self.path}): missing entry count")
            try:
                expected = int(lines[1].strip())
            except ValueError:
                raise _MalformedCheckpoint(f"Malformed line in checkpoint file ({self.path}): '{lines[1]}'") from None
            entries = [self._parse_line(line) for line in lines[2:]]
            if len(entries) != expected:
                raise _MalformedCheckpoint(f"Expected {expected} entries in checkpoint file ({self.path}), but found only {len(entries)}")
            return entries
        except _MalformedCheckpoint as exc:
            # 4. Like CheckpointFileWithFailureHandler: the directory goes offline.
            message = f"Error while reading checkpoint file {self.path}: {exc}"
            if self.log_dir_failure_channel is not None:
                self.log_dir_failure_channel.mark_offline(message)
            raise KafkaStorageException(message) from exc

    def _parse_line(self, line: str) -> T:
        try:
            return self.formatter.from_string(line)
        except (ValueError, IndexError):
            raise _MalformedCheckpoint(f"Malformed line in checkpoint file ({self.path}): '{line}'") from None

    def _check_writable(self) -> None:
        channel = self.log_dir_failure_channel
        if channel is not None and getattr(channel, "offline", False):
            raise KafkaStorageException(f"Error while writing to checkpoint file {self.path}: the log directory is offline")


class _OffsetFormatter:
    """Mirrors OffsetCheckpointFile.Formatter: ``<topic> <partition> <offset>``."""

    def to_string(self, entry: tuple[TopicPartition, int]) -> str:
        tp, offset = entry
        return f"{tp.topic} {tp.partition} {offset}"

    def from_string(self, line: str) -> tuple[TopicPartition, int]:
        parts = line.split()
        if len(parts) != 3:
            raise ValueError(line)
        return TopicPartition(parts[0], int(parts[1])), int(parts[2])


def _by_topic_partition(entry: tuple[TopicPartition, int]) -> tuple[str, int]:
    tp = entry[0]
    return (tp.topic, tp.partition)


class OffsetCheckpointFile(CheckpointFile[tuple[TopicPartition, int]]):
    """Mirrors org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile.

    Lines of ``<topic> <partition> <offset>``; used for replication-offset-checkpoint (high
    watermarks), recovery-point-offset-checkpoint and log-start-offset-checkpoint.
    """

    def __init__(self, path: str, log_dir_failure_channel: LogDirFailureChannel | None = None) -> None:
        super().__init__(path, _OffsetFormatter(), log_dir_failure_channel)

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Mirrors org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile#write: one line per partition, in a stable order."""
        # (Sorted by (topic, partition) as plain tuples: the same order as comparing the
        #  TopicPartitions, without two Python comparison calls per step of the sort; the broker
        #  writes its high watermarks this way every few seconds, one line per partition.)
        self.write_entries(sorted(offsets.items(), key=_by_topic_partition))

    def read(self) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile#read."""
        return dict(self.read_entries())


class LeaderEpochCheckpoint(Protocol):
    """Mirrors org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpoint (Kafka 3.7)."""

    def write(self, epochs: Iterable[EpochEntry]) -> None: ...

    def read(self) -> list[EpochEntry]: ...


class _EpochEntryFormatter:
    """Mirrors LeaderEpochCheckpointFile.Formatter: ``<epoch> <start offset>``."""

    def to_string(self, entry: EpochEntry) -> str:
        return f"{entry.epoch} {entry.start_offset}"

    def from_string(self, line: str) -> EpochEntry:
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(line)
        return EpochEntry(int(parts[0]), int(parts[1]))


class LeaderEpochCheckpointFile(CheckpointFile[EpochEntry]):
    """Mirrors org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile.

    Lines of ``<epoch> <start offset>``; the file ``leader-epoch-checkpoint`` in a partition's
    directory.
    """

    LEADER_EPOCH_CHECKPOINT_FILENAME = "leader-epoch-checkpoint"

    def __init__(self, path: str, log_dir_failure_channel: LogDirFailureChannel | None = None) -> None:
        super().__init__(path, _EpochEntryFormatter(), log_dir_failure_channel)

    def write(self, epochs: Iterable[EpochEntry]) -> None:
        """Mirrors org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile#write."""
        self.write_entries(epochs)

    def read(self) -> list[EpochEntry]:
        """Mirrors org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile#read."""
        return self.read_entries()


class InMemoryLeaderEpochCheckpoint:
    """Mirrors org.apache.kafka.storage.internals.checkpoint.InMemoryLeaderEpochCheckpoint.

    A checkpoint that is only a list, for a cache nobody needs to persist.
    """

    def __init__(self) -> None:
        self._epochs: list[EpochEntry] = []

    def write(self, epochs: Iterable[EpochEntry]) -> None:
        self._epochs = list(epochs)

    def read(self) -> list[EpochEntry]:
        return list(self._epochs)


class LazyOffsetCheckpoints:
    """Mirrors kafka.server.checkpoints.LazyOffsetCheckpoints: the high watermark checkpoint, read on first use.

    What ReplicaManager hands to Partition#createLog during a LeaderAndIsr (or a KRaft delta):
    the replication-offset-checkpoint of the log's directory is read only when a partition's
    log is created and asks for its HW, then kept for the rest of the request. So an
    unreadable file fails that partition's log creation (KafkaStorageException: the partition
    goes offline), not the whole request, and a request that creates no log never reads it.
    A failed read is tried again on the next fetch (Scala's lazy val). One directory here.
    """

    def __init__(self, checkpoint: OffsetCheckpointFile) -> None:
        self._checkpoint = checkpoint
        self._offsets: dict[TopicPartition, int] | None = None

    def fetch(self, topic_partition: TopicPartition) -> int | None:
        """Mirrors kafka.server.checkpoints.LazyOffsetCheckpoints#fetch (the one log dir implied)."""
        # 1. Read the directory's file the first time a partition asks.
        if self._offsets is None:
            self._offsets = self._checkpoint.read()
        # 2. The partition's checkpointed HW, if any.
        return self._offsets.get(topic_partition)

    def get(self, topic_partition: TopicPartition, default: int | None = None) -> int | None:
        """``fetch`` with a default: the dict-like read Partition#createLog uses (it also accepts a plain dict)."""
        offset = self.fetch(topic_partition)
        return default if offset is None else offset
