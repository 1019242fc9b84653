"""The ``__cluster_metadata`` log a Raft client replicates.

Mirrors org.apache.kafka.raft.ReplicatedLog as kafka.raft.KafkaMetadataLog implements it, in memory.
"""

from __future__ import annotations

from typing import Iterable

from kafka_ref.image.records import Batch, MetadataRecord

METADATA_TOPIC = "__cluster_metadata"
MAX_BATCHES_PER_FETCH = 1000


class MetadataLog:
    """Mirrors kafka.raft.KafkaMetadataLog (in memory): batches with contiguous offsets and a high watermark."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self.high_watermark = 0

    @property
    def end_offset(self) -> int:
        """The log end offset (the next offset to write)."""
        return self.batches[-1].last_offset + 1 if self.batches else 0

    @property
    def last_fetched_epoch(self) -> int:
        """Mirrors KafkaMetadataLog#lastFetchedEpoch."""
        return self.batches[-1].epoch if self.batches else -1

    def append_as_leader(self, records: Iterable[MetadataRecord], epoch: int, append_timestamp: int) -> Batch:
        """Mirrors KafkaMetadataLog#appendAsLeader: one batch at the log end."""
        batch = Batch(self.end_offset, epoch, append_timestamp, tuple(records))
        if not batch.records:
            raise ValueError("A metadata batch needs at least one record")
        self.batches.append(batch)
        return batch

    def append_as_follower(self, batch: Batch) -> None:
        """Mirrors KafkaMetadataLog#appendAsFollower: the leader's batch, at our log end."""
        if batch.base_offset != self.end_offset:
            raise ValueError(f"Batch at offset {batch.base_offset} does not follow the log end {self.end_offset}")
        self.batches.append(batch)

    def update_high_watermark(self, offset: int) -> None:
        """Mirrors KafkaMetadataLog#updateHighWatermark: never beyond the log end."""
        self.high_watermark = min(offset, self.end_offset)

    def read(self, start_offset: int, max_offset: int | None = None, max_batches: int = MAX_BATCHES_PER_FETCH) -> list[Batch]:
        """Mirrors KafkaMetadataLog#read: the batches holding ``start_offset`` onwards, ending below ``max_offset``."""
        out: list[Batch] = []
        for batch in self.batches:
            if batch.last_offset < start_offset:
                continue
            if max_offset is not None and batch.last_offset >= max_offset:
                break
            out.append(batch)
            if len(out) >= max_batches:
                break
        return out
