"""The Raft client around the ``__cluster_metadata`` log (one voter).

Mirrors org.apache.kafka.raft.KafkaRaftClient in the two roles
this project needs:

- on the controller node, the **leader** of a one-voter quorum: ``schedule_atomic_append``
  appends a batch, the single voter's own flush makes it committed at once (the high
  watermark is the log end), and registered listeners hear ``handle_commit``; observers'
  fetches are answered from the log, parked up to ``max_wait_ms`` when there is nothing new;
- on each broker, an **observer** (``RaftObserver``): it fetches the log from the leader over
  the network, keeps a local copy, and hands every batch at or below the leader's high
  watermark to its listeners (BrokerMetadataListener#handleCommit, seed 004 §2.1 step 1).

The log lives in memory. A broker's copy is lost with the broker process (a restarted broker
fetches from offset 0); Kafka keeps it on disk and replays it from a snapshot instead.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.metadata_fetch import FETCH_MAX_WAIT_MS, MetadataFetchRequest, MetadataFetchResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.uuid import METADATA_TOPIC_ID
from kafka_ref.image.records import MetadataRecord
from kafka_ref.network.network import DisconnectException, Envelope, NetworkTimeoutException
from kafka_ref.raft.raft_client import BatchReader, RaftListener
from kafka_ref.raft.replicated_log import MetadataLog

# The quorum.* client defaults.
QUORUM_REQUEST_TIMEOUT_MS = 2000
QUORUM_RETRY_BACKOFF_MS = 20


class _ListenerContext:
    """Mirrors KafkaRaftClient.ListenerContext: how far one listener has been told."""

    def __init__(self, listener: RaftListener) -> None:
        self.listener = listener
        self.next_offset = 0

    def fire_commits(self, log: MetadataLog) -> None:
        """Hand the listener every committed batch it has not seen yet."""
        batches = log.read(self.next_offset, max_offset=log.high_watermark)
        if batches:
            self.next_offset = batches[-1].last_offset + 1
            self.listener.handle_commit(BatchReader(batches))


# ------------------------------------------------------------------------------ the leader (controller node)


class KafkaRaftClient:
    """Mirrors org.apache.kafka.raft.KafkaRaftClient as the leader of a one-voter quorum.

    With one voter the leader's own flushed log end is a majority, so an appended batch is
    committed as soon as it is written. The leader epoch is 1 (the voter elected itself).
    """

    def __init__(self, node_id: int, time: Time, log: MetadataLog | None = None, epoch: int = 1) -> None:
        self.node_id = node_id
        self.time = time
        self.log = log if log is not None else MetadataLog()
        self.epoch = epoch
        self.listeners: list[_ListenerContext] = []
        self._new_data: anyio.Event | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._log = state_change_logger(controller_id=node_id)

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Where parked fetches wait (the controller node's task group)."""
        self._task_group = task_group

    def stop(self) -> None:
        """The node is going down: no more parking."""
        self._task_group = None

    def register(self, listener: RaftListener) -> None:
        """Mirrors KafkaRaftClient#register: the listener hears every commit from offset 0, then the leader.

        The leader change comes after the commits of earlier epochs, as KafkaRaftClient's
        ListenerContext holds it back until the listener has read up to the epoch's start: a
        restarted controller replays the whole log before it claims leadership.
        """
        context = _ListenerContext(listener)
        self.listeners.append(context)
        context.fire_commits(self.log)
        listener.handle_leader_change(self.node_id, self.epoch)

    def leader_and_epoch(self) -> tuple[int, int]:
        """Mirrors RaftClient#leaderAndEpoch."""
        return self.node_id, self.epoch

    def schedule_atomic_append(self, epoch: int, records: Iterable[MetadataRecord]) -> int:
        """Mirrors KafkaRaftClient#scheduleAtomicAppend; returns the offset of the last record.

        1. append the batch as leader; 2. flush, which with one voter moves the high
        watermark to the log end; 3. tell listeners about the new commit; 4. wake parked fetches.
        """
        if epoch != self.epoch:
            raise ValueError(f"Append at epoch {epoch} but the leader epoch is {self.epoch}")
        # 1. Append.
        batch = self.log.append_as_leader(records, epoch, self.time.milliseconds())
        # 2. One voter: the flushed log end is the majority's.
        self.log.update_high_watermark(self.log.end_offset)
        # 3. Listeners learn of the commit.
        for context in self.listeners:
            context.fire_commits(self.log)
        # 4. Observers waiting for new data get it now.
        if self._new_data is not None:
            self._new_data.set()
            self._new_data = None
        return batch.last_offset

    def handle_fetch_request(self, envelope: Envelope) -> None:
        """Mirrors KafkaRaftClient#handleFetchRequest: answer now, or park until new data or max wait."""
        request: MetadataFetchRequest = envelope.request
        # 1. The only partition is __cluster_metadata-0.
        if request.topic_id != METADATA_TOPIC_ID:
            envelope.respond(request.get_error_response(Errors.UNKNOWN_TOPIC_ID.code))
            return
        # 2. Data at or after the fetch offset: answer at once; otherwise wait in the background.
        if request.fetch_offset < self.log.end_offset or request.max_wait_ms <= 0 or self._task_group is None:
            envelope.respond(self._fetch_response(request))
        else:
            if self._new_data is None:
                self._new_data = anyio.Event()
            self._task_group.start_soon(self._park_fetch, envelope, self._new_data)

    async def _park_fetch(self, envelope: Envelope, new_data: anyio.Event) -> None:
        request: MetadataFetchRequest = envelope.request
        with anyio.move_on_after(request.max_wait_ms / 1000):
            await new_data.wait()
        envelope.respond(self._fetch_response(request))

    def _fetch_response(self, request: MetadataFetchRequest) -> MetadataFetchResponse:
        batches = self.log.read(request.fetch_offset)
        return MetadataFetchResponse(
            error_code=Errors.NONE.code, high_watermark=self.log.high_watermark,
            leader_id=self.node_id, leader_epoch=self.epoch, batches=tuple(batches),
        )


# ------------------------------------------------------------------------------ an observer (broker)


class RaftObserver:
    """Mirrors org.apache.kafka.raft.KafkaRaftClient as an observer (a broker's KafkaRaftManager).

    Fetches the leader's log from its own log end, appends what comes back, and moves its
    high watermark to the leader's (bounded by what it holds). Listeners are handed the
    batches that became committed, in order.
    """

    def __init__(self, node_id: int, network: Any, leader_node_provider: Callable[[], Hashable], time: Time) -> None:
        self.node_id = node_id
        self.network = network
        self.leader_node_provider = leader_node_provider
        self.time = time
        self.log = MetadataLog()
        self.listeners: list[_ListenerContext] = []
        self.leader_id = -1
        self.leader_epoch = -1
        self.fetches_sent = 0
        self._log = state_change_logger(broker_id=node_id)

    def register(self, listener: RaftListener) -> None:
        """Mirrors KafkaRaftClient#register."""
        context = _ListenerContext(listener)
        self.listeners.append(context)
        context.fire_commits(self.log)

    @property
    def high_watermark(self) -> int:
        """Mirrors RaftClient#highWatermark."""
        return self.log.high_watermark

    async def run(self) -> None:
        """Mirrors KafkaRaftClient#pollFollowerAsObserver: fetch, append, advance, repeat."""
        while True:
            request = MetadataFetchRequest(
                replica_id=self.node_id, current_leader_epoch=self.leader_epoch, fetch_offset=self.log.end_offset,
                last_fetched_epoch=self.log.last_fetched_epoch, max_wait_ms=FETCH_MAX_WAIT_MS,
            )
            try:
                self.fetches_sent += 1
                response = await self.network.send(self.node_id, self.leader_node_provider(), request,
                                                   QUORUM_REQUEST_TIMEOUT_MS)
            except (DisconnectException, NetworkTimeoutException):
                await anyio.sleep(QUORUM_RETRY_BACKOFF_MS / 1000)
                continue
            if response.error_code != Errors.NONE.code:
                await anyio.sleep(QUORUM_RETRY_BACKOFF_MS / 1000)
                continue
            self.handle_fetch_response(response)

    def handle_fetch_response(self, response: MetadataFetchResponse) -> None:
        """Mirrors KafkaRaftClient#handleFetchResponse for an observer.

        1. a new leader or epoch is noted (listeners hear it); 2. batches at our log end are
        appended; 3. the high watermark follows the leader's; 4. newly committed batches go
        to the listeners.
        """
        # 1. Leader changes.
        if (response.leader_id, response.leader_epoch) != (self.leader_id, self.leader_epoch):
            self.leader_id, self.leader_epoch = response.leader_id, response.leader_epoch
            for context in self.listeners:
                context.listener.handle_leader_change(self.leader_id, self.leader_epoch)
        # 2. Append.
        for batch in response.batches:
            if batch.base_offset == self.log.end_offset:
                self.log.append_as_follower(batch)
        # 3. High watermark.
        if response.high_watermark > self.log.high_watermark:
            self.log.update_high_watermark(response.high_watermark)
        # 4. Commits.
        for context in self.listeners:
            context.fire_commits(self.log)
