"""The broker's listener on the metadata log: committed batches in, new images out.

Mirrors kafka.server.metadata.BrokerMetadataListener (Kafka 3.3; seed 004 §2.1). The Raft
client calls ``handle_commit``; the listener only queues a HandleCommitsEvent on its own event
queue (KafkaEventQueue), whose task later loads the batches into the pending MetadataDelta
(``load_batches`` → MetadataDelta#replay per record) and, once a publisher is installed,
publishes: the delta becomes the next image and the publisher applies both.

Until the broker has caught up with the log at startup no publisher is installed, so commits
only accumulate in the delta; ``start_publishing`` then publishes everything at once (the
"first publish" that initialises the broker's managers, seed 004 §2.2 step 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import anyio

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.image.delta import MetadataDelta
from kafka_ref.image.image import EMPTY_IMAGE, MetadataImage, MetadataProvenance
from kafka_ref.image.writer import ImageWriterOptions, RecordListWriter
from kafka_ref.raft.raft_client import BatchReader


@dataclass(frozen=True, slots=True)
class BatchLoadResults:
    """Mirrors BrokerMetadataListener.BatchLoadResults."""

    num_batches: int
    num_records: int
    elapsed_us: int
    num_bytes: int
    highest_metadata_offset: int


class BrokerMetadataListener:
    """Mirrors kafka.server.metadata.BrokerMetadataListener."""

    def __init__(self, broker_id: int, time: Time) -> None:
        self.broker_id = broker_id
        self.time = time
        self._image: MetadataImage = EMPTY_IMAGE
        self._delta = MetadataDelta(self._image)
        self._highest_offset = -1
        self._highest_epoch = -1
        self._highest_timestamp = -1
        self._publisher: Any = None
        self.publish_count = 0
        # BrokerServerMetrics#metadataLoadErrorCount: faults the metadata loading fault handler saw.
        self.metadata_load_error_count = 0
        self._send, self._receive = anyio.create_memory_object_stream(math.inf)
        self._log = state_change_logger(broker_id=broker_id)

    # ------------------------------------------------------------------ read-outs

    @property
    def highest_metadata_offset(self) -> int:
        """Mirrors BrokerMetadataListener#highestMetadataOffset: the last offset loaded (published or not)."""
        return self._highest_offset

    @property
    def image(self) -> MetadataImage:
        """The last published image."""
        return self._image

    # ------------------------------------------------------------------ RaftClient.Listener

    def handle_commit(self, reader: BatchReader) -> None:
        """Mirrors BrokerMetadataListener#handleCommit: queue a HandleCommitsEvent."""
        self._append(lambda: self._handle_commits_event(reader))

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        """Mirrors BrokerMetadataListener#handleLeaderChange (nothing to do for a broker)."""
        self._log.info("metadata_leader_change", leader_id=leader_id, epoch=epoch)

    def start_publishing(self, publisher: Any) -> anyio.Event:
        """Mirrors BrokerMetadataListener#startPublishing: install the publisher and publish at once.

        Returns an event set after that first publish.
        """
        done = anyio.Event()

        def start_publishing_event() -> None:
            self._publisher = publisher
            self.publish(publisher)
            done.set()

        self._append(start_publishing_event)
        return done

    def close(self) -> None:
        """Mirrors kafka.server.metadata.BrokerMetadataListener#close: begin shutdown and close the event queue.

        Events already queued still run (the queue's task drains them and ends); any event
        appended afterwards is rejected (dropped, see ``_append``).
        """
        self._send.close()

    def get_image_records(self) -> "ImageRecordsFuture":
        """Mirrors kafka.server.metadata.BrokerMetadataListener#getImageRecords (for tests): a
        GetImageRecordsEvent writes the last published image as records, at the image's own
        metadata.version."""
        future = ImageRecordsFuture()

        def get_image_records_event() -> None:
            writer = RecordListWriter()
            self._image.write(writer, ImageWriterOptions(self._image.features.metadata_version))
            future.complete(writer.records())

        self._append(get_image_records_event)
        return future

    # ------------------------------------------------------------------ the event queue

    def _append(self, event: Callable[[], None]) -> None:
        """Mirrors KafkaEventQueue#append: once the queue's thread has stopped (the broker is
        shutting down) an appended event is rejected, not run; here it is dropped."""
        try:
            self._send.send_nowait(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._log.debug("metadata_event_rejected_queue_closed")

    async def run(self) -> None:
        """The event queue's thread: run events one at a time, in order."""
        async with self._receive:
            async for event in self._receive:
                event()

    def _handle_commits_event(self, reader: BatchReader) -> None:
        """Mirrors BrokerMetadataListener.HandleCommitsEvent#run (seed 004 §2.1 step 2).

        1. load the batches into the delta; 2. publish if a publisher is installed.
        """
        try:
            results = self.load_batches(self._delta, reader)
        finally:
            reader.close()
        self._log.debug("metadata_commits_loaded", batches=results.num_batches, records=results.num_records,
                        highest_metadata_offset=results.highest_metadata_offset)
        if self._publisher is not None:
            self.publish(self._publisher)

    def load_batches(self, delta: MetadataDelta, reader: BatchReader) -> BatchLoadResults:
        """Mirrors BrokerMetadataListener#loadBatches (seed 004 §2.1 step 3): replay every record into ``delta``.

        A record that cannot be replayed is a metadata loading fault: the broker's handler
        (KafkaRaftServer's LoggingFaultHandler "metadata loading") logs it and counts it in
        metadataLoadErrorCount, and loading goes on with the next record.
        """
        start_ns = self.time.nanoseconds()
        num_batches = num_records = num_bytes = 0
        last_batch = None
        # 1. Replay each record in order; a failing record is a fault, not the end of loading.
        for batch in reader:
            for index, record in enumerate(batch.records):
                try:
                    delta.replay(record)
                except RUN_ENDING:
                    raise
                except Exception as exc:  # Kafka: any Throwable goes to metadataLoadingFaultHandler
                    self.metadata_load_error_count += 1
                    self._log.error("metadata_replay_error", offset=batch.base_offset + index, error=repr(exc))
                finally:
                    num_records += 1
            num_bytes += batch.size_in_bytes
            num_batches += 1
            last_batch = batch
        # 2. Remember how far we have loaded.
        if last_batch is not None:
            self._highest_offset = last_batch.last_offset
            self._highest_epoch = last_batch.epoch
            self._highest_timestamp = last_batch.append_timestamp
        elapsed_us = (self.time.nanoseconds() - start_ns) // 1000
        return BatchLoadResults(num_batches, num_records, elapsed_us, num_bytes, self._highest_offset)

    def publish(self, publisher: Any) -> None:
        """Mirrors BrokerMetadataListener#publish (seed 004 §2.1 step 7): delta → image, then hand both on."""
        delta = self._delta
        self._image = delta.apply(MetadataProvenance(self._highest_offset, self._highest_epoch, self._highest_timestamp))
        self._delta = MetadataDelta(self._image)
        self.publish_count += 1
        self._log.info("metadata_publish", offset=self._highest_offset, records=delta.records_replayed,
                       topics_changed=delta.topics_delta is not None, brokers_changed=delta.cluster_delta is not None)
        publisher.publish(delta, self._image)


class ImageRecordsFuture:
    """The CompletableFuture of BrokerMetadataListener#getImageRecords: set by the event, awaited by the caller."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._records: list = []

    def complete(self, records: list) -> None:
        self._records = records
        self._done.set()

    async def get(self) -> list:
        await self._done.wait()
        return self._records
