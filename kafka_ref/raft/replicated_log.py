"""The ``__cluster_metadata`` log a Raft client replicates.

Mirrors org.apache.kafka.raft.ReplicatedLog as kafka.raft.KafkaMetadataLog implements it, in memory.
The log object is the node's disk: it survives a crash of the node's process (a restarted voter
finds its batches again). The high watermark is kept with it, so a restarted voter hands its
listeners what it already knew to be committed.
"""

from __future__ import annotations

import bisect
from typing import Iterable

from kafka_ref.image.records import Batch, LeaderChangeMessage, MetadataRecord

METADATA_TOPIC = "__cluster_metadata"
MAX_BATCHES_PER_FETCH = 1000


class MetadataLog:
    """Mirrors kafka.raft.KafkaMetadataLog (in memory): batches with contiguous offsets and a high watermark.

    Besides the batches it keeps the leader-epoch cache (LeaderEpochFileCache): the start
    offset of every epoch found in the log, used to find where two logs diverge.
    """

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self._base_offsets: list[int] = []
        self._epochs: list[tuple[int, int]] = []  # (epoch, start offset), ascending
        self.high_watermark = 0

    @property
    def end_offset(self) -> int:
        """The log end offset (the next offset to write)."""
        return self.batches[-1].last_offset + 1 if self.batches else 0

    @property
    def last_fetched_epoch(self) -> int:
        """Mirrors KafkaMetadataLog#lastFetchedEpoch (0 for an empty log, as Kafka's epoch cache says)."""
        return self.batches[-1].epoch if self.batches else 0

    def end_offset_and_epoch(self) -> tuple[int, int]:
        """Mirrors KafkaRaftClient#endOffset: (log end offset, last fetched epoch)."""
        return self.end_offset, self.last_fetched_epoch

    def _append(self, batch: Batch) -> None:
        if not self._epochs or self._epochs[-1][0] != batch.epoch:
            if self._epochs and batch.epoch < self._epochs[-1][0]:
                raise ValueError(f"Batch epoch {batch.epoch} is below the log's last epoch {self._epochs[-1][0]}")
            self._epochs.append((batch.epoch, batch.base_offset))
        self.batches.append(batch)
        self._base_offsets.append(batch.base_offset)

    def append_as_leader(self, records: Iterable[MetadataRecord], epoch: int, append_timestamp: int) -> Batch:
        """Mirrors KafkaMetadataLog#appendAsLeader: one batch at the log end."""
        batch = Batch(self.end_offset, epoch, append_timestamp, tuple(records))
        if not batch.records:
            raise ValueError("A metadata batch needs at least one record")
        self._append(batch)
        return batch

    def append_leader_change(self, message: LeaderChangeMessage, epoch: int, append_timestamp: int) -> Batch:
        """The leader's control batch (the LeaderChangeMessage its accumulator made) at the log end.

        KafkaMetadataLog#appendAsLeader writes it like any other batch; kafka_ref keeps control
        records apart from the data records of a Batch.
        """
        batch = Batch(self.end_offset, epoch, append_timestamp, (), (message,))
        self._append(batch)
        return batch

    def append_as_follower(self, batch: Batch) -> None:
        """Mirrors KafkaMetadataLog#appendAsFollower: the leader's batch, at our log end."""
        if batch.base_offset != self.end_offset:
            raise ValueError(f"Batch at offset {batch.base_offset} does not follow the log end {self.end_offset}")
        self._append(batch)

    def update_high_watermark(self, offset: int) -> None:
        """Mirrors KafkaMetadataLog#updateHighWatermark: never beyond the log end."""
        self.high_watermark = min(offset, self.end_offset)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """Mirrors KafkaMetadataLog#endOffsetForEpoch (LeaderEpochFileCache#endOffsetFor): (end offset, epoch).

        1. the log's latest epoch: it ends at the log end; 2. an epoch below every epoch in
        the log: (start of the first epoch, the epoch asked); 3. an epoch above every epoch:
        the log end and its last epoch; 4. otherwise the largest epoch not above the one asked
        and where the next epoch starts.
        """
        if not self._epochs:
            return self.end_offset, self.last_fetched_epoch
        # 1. The latest epoch.
        if epoch == self._epochs[-1][0]:
            return self.end_offset, epoch
        index = bisect.bisect_right(self._epochs, (epoch, float("inf")))
        # 3. Above every epoch of the log.
        if index >= len(self._epochs):
            return self.end_offset, self.last_fetched_epoch
        higher_start = self._epochs[index][1]
        # 2. Below every epoch.
        if index == 0:
            return higher_start, epoch
        # 4. The floor epoch ends where the next one starts.
        return higher_start, self._epochs[index - 1][0]

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> tuple[bool, tuple[int, int]]:
        """Mirrors ReplicatedLog#validateOffsetAndEpoch: (valid, diverging end offset and epoch when not).

        A fetcher at ``offset`` whose last batch has ``epoch`` agrees with this log when this
        log's ``epoch`` ends at or after ``offset``; else it must truncate to where it ends.
        """
        # 1. Nothing fetched yet from a log that starts at 0.
        if offset == 0:
            return True, (0, 0)
        # 2. Compare with where our copy of that epoch ends.
        end_offset, end_epoch = self.end_offset_for_epoch(epoch)
        if end_epoch != epoch or end_offset < offset:
            return False, (end_offset, end_epoch)
        return True, (offset, epoch)

    def truncate_to_end_offset(self, end_offset: int, epoch: int) -> int:
        """Mirrors ReplicatedLog#truncateToEndOffset: truncate to the divergence point the leader sent.

        1. our own end of that epoch, capped at the leader's; 2. never below the high watermark.
        """
        if epoch == 0:
            truncation_offset = min(end_offset, self.end_offset)
        else:
            local_end, local_epoch = self.end_offset_for_epoch(epoch)
            truncation_offset = min(local_end, end_offset) if local_epoch == epoch else local_end
        self.truncate_to(truncation_offset)
        return truncation_offset

    def truncate_to(self, offset: int) -> None:
        """Mirrors KafkaMetadataLog#truncateTo: drop every batch at or after ``offset``; never below the HW."""
        if offset < self.high_watermark:
            raise ValueError(f"Attempt to truncate to offset {offset}, below the high watermark {self.high_watermark}")
        while self.batches and self.batches[-1].base_offset >= offset:
            self.batches.pop()
            self._base_offsets.pop()
        if self.batches and self.batches[-1].last_offset >= offset:
            raise ValueError(f"Offset {offset} falls inside the batch at {self.batches[-1].base_offset}")
        end = self.end_offset
        while self._epochs and self._epochs[-1][1] >= end:
            self._epochs.pop()

    def read(self, start_offset: int, max_offset: int | None = None, max_batches: int = MAX_BATCHES_PER_FETCH) -> list[Batch]:
        """Mirrors KafkaMetadataLog#read: the batches holding ``start_offset`` onwards, ending below ``max_offset``."""
        out: list[Batch] = []
        index = max(0, bisect.bisect_right(self._base_offsets, start_offset) - 1)
        for batch in self.batches[index:index + max_batches + 1]:
            if batch.last_offset < start_offset:
                continue
            if max_offset is not None and batch.last_offset >= max_offset:
                break
            out.append(batch)
            if len(out) >= max_batches:
                break
        return out
