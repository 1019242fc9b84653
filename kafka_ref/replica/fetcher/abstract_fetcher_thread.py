"""The fetcher loop shared by every follower fetcher: truncate, then fetch, forever.

Mirrors kafka.server.AbstractFetcherThread (Kafka 3.8); its metrics are in fetcher_metrics, its
truncation methods (maybeTruncate and the paths below) in abstract_fetcher_truncation.

Kafka runs each fetcher as a thread that holds ``partitionMapLock`` while it touches the
partition map; ``addPartitions``/``removePartitions`` from the ReplicaManager take the same
lock. Here a fetcher is an anyio task and there is one event loop, so every synchronous
stretch of code is atomic. The only interleaving points are the ``await``s on the leader
(OffsetsForLeaderEpoch, ListOffsets, Fetch). Kafka holds the lock across some of those calls
(the out-of-range reset); we cannot, because the ReplicaManager calls ``add_partitions`` /
``remove_partitions`` synchronously. So after every await we re-check that the partition's
fetch state is still the very object we started from (``_is_current``) before touching the
local log, and drop the result otherwise -- the outcome Kafka gets by making the other side
wait.

Era switches (docs/DESIGN.md §1.9), selected by the subclass / leader end point:

* ``is_offset_for_leader_epoch_supported`` False (IBP < 0.11): a truncating partition is cut
  back to its high watermark (the initial fetch offset), the pre-KIP-101 rule.
* IBP 0.11–1.1 (KIP-101): one OffsetsForLeaderEpoch round; the v0 answer has no epoch, so
  ``_get_offset_truncation_state`` truncates to min(leader end offset, log end offset).
* IBP 2.0–2.6 (KIP-279): the answer carries the epoch; rounds repeat until the follower knows
  the leader's epoch (each intermediate round truncates to the end of its own smaller epoch).
* ``leader.is_truncation_on_fetch_supported`` (IBP >= 2.7, KIP-320/595): partitions start in
  FETCHING with their last fetched epoch; the leader answers a divergent fetch with a diverging
  epoch and ``truncate_on_fetch_response`` truncates. No epoch request is sent (unless a
  partition had no epoch at all when added; then it truncates to its high watermark).
"""

from __future__ import annotations

import abc
import structlog
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

import anyio
import anyio.lowlevel

from kafka_ref.common.errors import (
    CorruptRecordException,
    Errors,
    FencedLeaderEpochException,
    InvalidRecordException,
    KafkaStorageException,
    NotLeaderOrFollowerException,
    UnknownLeaderEpochException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.fetch import FetchResponse
from kafka_ref.common.requests.offsets_for_leader_epoch import EpochEndOffset
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.replica.fetcher.abstract_fetcher_truncation import AbstractFetcherThreadTruncation
from kafka_ref.replica.fetcher.fetcher_metrics import FetcherLagStats, FetcherStats
from kafka_ref.replica.fetcher.partition_fetch_state import (FETCHING, TRUNCATING, DelayedItem, FailedPartitions,
                                                             InitialFetchState, OffsetAndEpoch, OffsetTruncationState,
                                                             PartitionFetchState, PartitionStates)

if TYPE_CHECKING:
    from kafka_ref.log.fetch_data import LogAppendInfo
    from kafka_ref.replica.fetcher.leader_end_point import LeaderEndPoint

log = structlog.get_logger("kafka.server.AbstractFetcherThread")


class AbstractFetcherThread(AbstractFetcherThreadTruncation, abc.ABC):
    """Mirrors kafka.server.AbstractFetcherThread.

    Fetches a set of partitions from one leader. ``do_work`` is one iteration (truncate what
    must be truncated, then one fetch round); ``run`` repeats it until ``shutdown``. Tests
    drive ``do_work`` directly. Subclasses implement the local side: ``process_partition_data``,
    ``truncate``, ``truncate_fully_and_start_at``, ``latest_epoch``, ``log_start_offset``,
    ``log_end_offset``, ``end_offset_for_epoch`` and ``is_offset_for_leader_epoch_supported``.
    """

    def __init__(
        self,
        name: str,
        client_id: str,
        leader: LeaderEndPoint,
        failed_partitions: FailedPartitions,
        fetch_back_off_ms: int = 0,
        time: Time | None = None,
    ) -> None:
        self.name = name
        self.client_id = client_id
        self.leader = leader
        self.failed_partitions = failed_partitions
        self.fetch_back_off_ms = fetch_back_off_ms
        self.time = time if time is not None else Time()
        self.partition_states: PartitionStates[PartitionFetchState] = PartitionStates()
        self.fetcher_stats = FetcherStats()
        self.fetcher_lag_stats = FetcherLagStats()
        # Partitions added with a negative initial offset wait here for a leader lookup.
        self._pending_offset_resets: set[TopicPartition] = set()
        # ShutdownableThread state.
        self._running = True
        self._started = False
        self._thread_failed = False
        self._cancel_scope: anyio.CancelScope | None = None
        self._shutdown_complete: anyio.Event | None = None
        self._finished = False
        # partitionMapCond: set by add/delay to wake a fetcher that is backing off.
        self._partition_map_cond: anyio.Event | None = None

    # -- subclass hooks (the local replica) ----------------------------------------------

    is_offset_for_leader_epoch_supported: bool = True

    @abc.abstractmethod
    def process_partition_data(self, topic_partition: TopicPartition, fetch_offset: int, partition_data: Any) -> LogAppendInfo | None:
        """Mirrors kafka.server.AbstractFetcherThread#processPartitionData (append fetched data)."""

    @abc.abstractmethod
    def truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#truncate."""

    @abc.abstractmethod
    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, offset: int) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#truncateFullyAndStartAt."""

    @abc.abstractmethod
    def latest_epoch(self, topic_partition: TopicPartition) -> int | None:
        """Mirrors kafka.server.AbstractFetcherThread#latestEpoch (None: the log has no epochs)."""

    @abc.abstractmethod
    def log_start_offset(self, topic_partition: TopicPartition) -> int:
        """Mirrors kafka.server.AbstractFetcherThread#logStartOffset."""

    @abc.abstractmethod
    def log_end_offset(self, topic_partition: TopicPartition) -> int:
        """Mirrors kafka.server.AbstractFetcherThread#logEndOffset."""

    @abc.abstractmethod
    def end_offset_for_epoch(self, topic_partition: TopicPartition, epoch: int) -> OffsetAndEpoch | None:
        """Mirrors kafka.server.AbstractFetcherThread#endOffsetForEpoch."""

    # -- lifecycle (ShutdownableThread) ----------------------------------------------------

    @property
    def is_running(self) -> bool:
        """Mirrors org.apache.kafka.server.util.ShutdownableThread#isRunning."""
        return self._running

    @property
    def is_started(self) -> bool:
        """Mirrors ShutdownableThread#isStarted."""
        return self._started

    @property
    def is_thread_failed(self) -> bool:
        """Mirrors ShutdownableThread#isThreadFailed: the loop died on an unexpected error."""
        return self._thread_failed

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors ShutdownableThread#start: run the loop as a task of ``task_group``."""
        self._started = True
        task_group.start_soon(self.run, name=self.name)

    async def run(self) -> None:
        """Mirrors org.apache.kafka.server.util.ShutdownableThread#run: ``do_work`` until shut down."""
        self._shutdown_complete = anyio.Event()
        try:
            with anyio.CancelScope() as scope:
                self._cancel_scope = scope
                # 1. Loop while nobody asked us to stop. The checkpoint lets other tasks run
                #    even if a leader end point answers without ever suspending.
                while self._running:
                    await self.do_work()
                    await anyio.lowlevel.checkpoint()
        except RUN_ENDING:
            raise
        except Exception:
            # 2. An unexpected error kills the fetcher (Kafka logs "Error due to" and the
            #    manager counts it as a dead thread).
            if self._running:
                log.exception("fetcher_thread_failed", fetcher=self.name)
            self._thread_failed = True
        finally:
            self._finished = True
            self._shutdown_complete.set()

    def initiate_shutdown(self) -> bool:
        """Mirrors ShutdownableThread#initiateShutdown: stop the loop (cancels an in-flight wait)."""
        if not self._running:
            return False
        self._running = False
        if self._cancel_scope is not None:
            self._cancel_scope.cancel()
        self._signal_all()
        return True

    async def await_shutdown(self) -> None:
        """Mirrors ShutdownableThread#awaitShutdown: wait for the loop task to end."""
        if self._shutdown_complete is not None and not self._finished:
            await self._shutdown_complete.wait()

    def shutdown(self) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#shutdown.

        Synchronous here (the ReplicaManager calls it from synchronous code): the loop task is
        cancelled at its current await; a fetch in flight is abandoned, its answer ignored.
        1. Stop the loop; 2. drop the request and byte meters, then every lag gauge, as Kafka does.
        """
        # 1. Stop.
        self.initiate_shutdown()
        # 2. Metrics.
        self.fetcher_stats.unregister()
        self.fetcher_lag_stats.unregister()

    # -- the work loop ---------------------------------------------------------------------

    async def do_work(self) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#doWork: maybeTruncate, then maybeFetch."""
        await self.maybe_truncate()
        await self.maybe_fetch()

    async def maybe_fetch(self) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#maybeFetch."""
        # 1. Let the leader end point build the request from the ready partitions.
        result = self.leader.build_fetch(self.partition_states.partition_state_map())
        self.handle_partitions_with_errors(result.partitions_with_error, "maybeFetch")
        replica_fetch = result.result
        # 2. Nothing to fetch: back off (an add or delay wakes us early).
        if replica_fetch is None:
            await self._await_partition_map_cond(self.fetch_back_off_ms)
            return
        # 3. Send it and process the answer.
        await self.process_fetch_request(replica_fetch.partition_data, replica_fetch.fetch_request)

    def handle_partitions_with_errors(self, partitions: Iterable[TopicPartition], method_name: str) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#handlePartitionsWithErrors: back off."""
        partitions = list(partitions)
        if partitions:
            log.debug("fetcher_partitions_with_errors", fetcher=self.name, method=method_name, partitions=sorted(map(str, partitions)))
            self.delay_partitions(partitions, self.fetch_back_off_ms)

    # -- a fenced leader epoch (the truncation, fetch and out-of-range paths) -----------

    def _on_partition_fenced(self, tp: TopicPartition, request_epoch: int | None) -> bool:
        """Mirrors kafka.server.AbstractFetcherThread#onPartitionFenced.

        If our epoch is still the one the leader fenced, give the partition up (mark it failed)
        and wait for new metadata; returns False. If the epoch already moved on, returns True
        so the partition just backs off and retries.
        """
        current = self.partition_states.state_value(tp)
        if current is None:
            return False
        if request_epoch is not None and request_epoch == current.current_leader_epoch:
            log.info("fenced_by_newer_leader_epoch_awaiting_leader_and_isr", fetcher=self.name, topic_partition=str(tp),
                     current_leader_epoch=current.current_leader_epoch)
            self.mark_partition_failed(tp)
            return False
        log.info("leader_behind_current_leader_epoch_retry_later", fetcher=self.name, topic_partition=str(tp),
                 current_leader_epoch=current.current_leader_epoch)
        return True

    # -- fetching --------------------------------------------------------------------------

    async def process_fetch_request(self, session_partitions: Mapping[TopicPartition, Any], fetch_request: Any) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#processFetchRequest (Kafka 3.7).

        Sends one fetch and handles each partition's answer. As in Kafka, the answer is used
        only if the partition is still ready and still at the offset we asked with (it may have
        been removed, re-added or truncated while the request was in flight); the leader epoch
        is not compared (a re-added partition at the same offset takes the answer).
        A failure in one partition (corrupt data, a storage error) never stops the others.
        """
        partitions_with_error: set[TopicPartition] = set()
        diverging_end_offsets: dict[TopicPartition, EpochEndOffset] = {}
        response_data: Mapping[TopicPartition, Any] = {}
        # 1. Send the fetch; on any failure every partition backs off.
        try:
            response_data = await self.leader.fetch(fetch_request)
        except RUN_ENDING:
            raise
        except Exception as exc:
            if self.is_running:
                log.warning("fetch_request_failed", fetcher=self.name, error=repr(exc))
                partitions_with_error.update(self.partition_states.partition_set())
        self.fetcher_stats.request_rate.mark()
        # 2. Handle each partition of the answer.
        for tp, partition_data in response_data.items():
            current = self.partition_states.state_value(tp)
            if current is None:
                continue
            requested = session_partitions.get(tp)
            if requested is None or requested.fetch_offset != current.fetch_offset or not current.is_ready_for_fetch:
                continue
            error = Errors.for_code(partition_data.error_code)
            if error is Errors.NONE:
                self._handle_fetched_data(tp, current, partition_data, partitions_with_error, diverging_end_offsets)
            elif error is Errors.OFFSET_OUT_OF_RANGE:
                # 2b. Reset against the leader's log start / end offsets.
                if not await self.handle_out_of_range_error(tp, current, requested.current_leader_epoch):
                    partitions_with_error.add(tp)
            elif error is Errors.UNKNOWN_LEADER_EPOCH:
                # 2c. The leader is behind our epoch: wait for it to catch up.
                log.debug("fetch_fenced_leader_epoch", fetcher=self.name, topic_partition=str(tp), current_leader_epoch=current.current_leader_epoch)
                partitions_with_error.add(tp)
            elif error is Errors.FENCED_LEADER_EPOCH:
                # 2d. We are behind the leader's epoch.
                if self._on_partition_fenced(tp, requested.current_leader_epoch):
                    partitions_with_error.add(tp)
            elif error is Errors.NOT_LEADER_OR_FOLLOWER:
                # 2e. Leadership moved; new metadata will follow.
                log.debug("fetch_leader_moved", fetcher=self.name, topic_partition=str(tp))
                partitions_with_error.add(tp)
            elif error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_ID, Errors.INCONSISTENT_TOPIC_ID):
                # 2f. Transient while a topic is being created or deleted.
                log.warning("fetch_partition_unknown_at_leader", fetcher=self.name, topic_partition=str(tp), error=error.name)
                partitions_with_error.add(tp)
            else:
                # 2g. Anything else: back off and retry.
                log.error("fetch_partition_error", fetcher=self.name, topic_partition=str(tp), offset=current.fetch_offset, error=error.name)
                partitions_with_error.add(tp)
        # 3. Diverging epochs truncate now; failed partitions back off.
        if diverging_end_offsets:
            self.truncate_on_fetch_response(diverging_end_offsets)
        if partitions_with_error:
            self.handle_partitions_with_errors(partitions_with_error, "processFetchRequest")

    def _handle_fetched_data(
        self,
        tp: TopicPartition,
        current: PartitionFetchState,
        partition_data: Any,
        partitions_with_error: set[TopicPartition],
        diverging_end_offsets: dict[TopicPartition, EpochEndOffset],
    ) -> None:
        """The Errors.NONE branch of kafka.server.AbstractFetcherThread#processFetchRequest."""
        try:
            # 1. A diverging epoch: truncate first; the data (and HW) wait for the next fetch.
            if self.leader.is_truncation_on_fetch_supported and FetchResponse.is_diverging_epoch(partition_data):
                diverging = partition_data.diverging_epoch
                diverging_end_offsets[tp] = EpochEndOffset(
                    error_code=Errors.NONE.code, partition=tp.partition,
                    leader_epoch=diverging.epoch, end_offset=diverging.end_offset,
                )
                return
            # 2. Hand the data to the local replica.
            log_append_info = self.process_partition_data(tp, current.fetch_offset, partition_data)
            if log_append_info is None:
                return
            # 3. Advance the fetch offset past what was appended and record the lag; an empty
            #    answer still sets a lag that was never known (KAFKA-15080, Kafka 3.6.0+), so an
            #    idle partition does not look out of sync forever.
            valid_bytes = log_append_info.valid_bytes
            next_offset = log_append_info.last_offset + 1 if valid_bytes > 0 else current.fetch_offset
            lag = max(0, partition_data.high_watermark - next_offset)
            self.fetcher_lag_stats.get_and_maybe_put(tp).lag = lag
            if (valid_bytes > 0 or current.lag is None) and tp in self.partition_states:
                last_fetched_epoch = log_append_info.last_leader_epoch
                if last_fetched_epoch is None:
                    last_fetched_epoch = current.last_fetched_epoch
                self.partition_states.update_and_move_to_end(tp, PartitionFetchState(
                    current.topic_id, next_offset, lag, current.current_leader_epoch, None, FETCHING, last_fetched_epoch,
                ))
                if valid_bytes > 0:
                    self.fetcher_stats.byte_rate.mark(valid_bytes)
        except (CorruptRecordException, InvalidRecordException) as exc:
            # 4. Bad data in this partition only: back off and fetch it again.
            log.error("fetch_invalid_records", fetcher=self.name, topic_partition=str(tp), offset=current.fetch_offset, error=repr(exc))
            partitions_with_error.add(tp)
        except KafkaStorageException:
            # 5. The log directory failed: stop fetching this partition.
            log.error("fetch_processing_failed", fetcher=self.name, topic_partition=str(tp), offset=current.fetch_offset)
            self.mark_partition_failed(tp)
        except RUN_ENDING:
            raise
        except Exception:
            # 6. Anything unexpected (for example an offset mismatch): fail this partition only.
            log.exception("fetch_processing_error", fetcher=self.name, topic_partition=str(tp), offset=current.fetch_offset)
            self.mark_partition_failed(tp)

    # -- out of range ----------------------------------------------------------------------

    def _is_current(self, tp: TopicPartition, state: PartitionFetchState) -> bool:
        """True if ``state`` is still the partition's fetch state (nothing changed across an await)."""
        return self.partition_states.state_value(tp) is state

    async def _fetch_offset_and_truncate(self, tp: TopicPartition, guard: PartitionFetchState) -> PartitionFetchState | None:
        """Mirrors kafka.server.AbstractFetcherThread#fetchOffsetAndTruncate.

        Called when the leader says our fetch offset is out of range (or when no offset is
        known). Returns the new fetch state, or None if the partition's state changed while we
        were asking the leader (then the newer state stands and nothing is truncated).

        * leader's log end offset < ours (an unclean election left us ahead): truncate to the
          leader's end offset and fetch from there;
        * otherwise fetch from max(our log end offset, leader's log start offset), truncating
          the whole log first when we are below the leader's log start.
        """
        topic_id, current_leader_epoch = guard.topic_id, guard.current_leader_epoch
        replica_end_offset = self.log_end_offset(tp)
        # 1. Ask the leader for its log end offset.
        leader_end = await self.leader.fetch_latest_offset(tp, current_leader_epoch)
        if not self._is_current(tp, guard):
            return None
        leader_end_offset = leader_end.offset
        if leader_end_offset < replica_end_offset:
            # 2. We are ahead of the leader: cut back to its end.
            log.warning("fetch_offset_reset_to_leader_end_offset", fetcher=self.name, topic_partition=str(tp), from_offset=replica_end_offset,
                        to_offset=leader_end_offset)
            self.truncate(tp, OffsetTruncationState(leader_end_offset, truncation_completed=True))
            self.fetcher_lag_stats.get_and_maybe_put(tp).lag = 0
            return PartitionFetchState(topic_id, leader_end_offset, 0, current_leader_epoch, None, FETCHING, self.latest_epoch(tp))
        # 3. Ask for the leader's log start offset.
        leader_start = await self.leader.fetch_earliest_offset(tp, current_leader_epoch)
        if not self._is_current(tp, guard):
            return None
        leader_start_offset = leader_start.offset
        log.warning("fetch_offset_reset_to_leader_start_offset", fetcher=self.name, topic_partition=str(tp), from_offset=replica_end_offset,
                    to_offset=leader_start_offset)
        # 4. Below the leader's log start: drop our log and start at the leader's start.
        if leader_start_offset > replica_end_offset:
            self.truncate_fully_and_start_at(tp, leader_start_offset)
            offset_to_fetch = leader_start_offset
        else:
            offset_to_fetch = replica_end_offset
        initial_lag = leader_end_offset - offset_to_fetch
        self.fetcher_lag_stats.get_and_maybe_put(tp).lag = initial_lag
        return PartitionFetchState(topic_id, offset_to_fetch, initial_lag, current_leader_epoch, None, FETCHING, self.latest_epoch(tp))

    async def handle_out_of_range_error(self, tp: TopicPartition, fetch_state: PartitionFetchState, leader_epoch_in_request: int | None) -> bool:
        """Mirrors kafka.server.AbstractFetcherThread#handleOutOfRangeError.

        True when the offset was reset (or the partition was fenced and marked failed, or its
        state changed meanwhile): no back-off needed. False on a retriable error.
        """
        try:
            new_state = await self._fetch_offset_and_truncate(tp, fetch_state)
            if new_state is not None:
                self.partition_states.update_and_move_to_end(tp, new_state)
                log.info("fetch_offset_out_of_range", fetcher=self.name, topic_partition=str(tp), offset=fetch_state.fetch_offset,
                         reset_to=new_state.fetch_offset)
            return True
        except FencedLeaderEpochException:
            return self._on_partition_fenced(tp, leader_epoch_in_request)
        except (UnknownTopicOrPartitionException, UnknownLeaderEpochException, NotLeaderOrFollowerException) as exc:
            log.info("fetch_offset_lookup_failed", fetcher=self.name, topic_partition=str(tp), error=str(exc))
            return False
        except RUN_ENDING:
            raise
        except Exception:
            log.exception("fetch_offset_lookup_error", fetcher=self.name, topic_partition=str(tp))
            return False

    async def _resolve_pending_offset_resets(self) -> None:
        """Find a fetch offset for partitions added with a negative initial offset.

        Kafka does this inside addPartitions with a blocking ListOffsets call; our
        ``add_partitions`` is synchronous, so the lookup happens at the start of the next
        ``do_work`` (same rule: fetchOffsetAndTruncate). A failure backs the partition off.
        """
        # (Nothing pending, the usual case: no walk over every partition on each round of the loop.)
        if not self._pending_offset_resets:
            return
        # In fetch order (a set iterates in string-hash order, which differs per process).
        for tp in [tp for tp in self.partition_states.partition_state_map() if tp in self._pending_offset_resets] + \
                [tp for tp in sorted(self._pending_offset_resets, key=lambda t: (t.topic, t.partition))
                 if self.partition_states.state_value(tp) is None]:
            state = self.partition_states.state_value(tp)
            if state is None:
                self._pending_offset_resets.discard(tp)
                continue
            if state.is_delayed:
                continue
            try:
                new_state = await self._fetch_offset_and_truncate(tp, state)
            except FencedLeaderEpochException:
                self._pending_offset_resets.discard(tp)
                self._on_partition_fenced(tp, state.current_leader_epoch)
                continue
            except RUN_ENDING:
                raise
            except Exception as exc:
                log.info("initial_fetch_offset_failed", fetcher=self.name, topic_partition=str(tp), error=repr(exc))
                self.delay_partitions([tp], self.fetch_back_off_ms)
                continue
            if new_state is not None:
                self._pending_offset_resets.discard(tp)
                self.partition_states.update_and_move_to_end(tp, new_state)

    # -- partition membership (called by the manager / ReplicaManager, synchronously) ------

    def mark_partitions_for_truncation(self, topic_partition: TopicPartition, truncation_offset: int) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#markPartitionsForTruncation."""
        state = self.partition_states.state_value(topic_partition)
        if state is not None:
            self.partition_states.update_and_move_to_end(topic_partition, PartitionFetchState(
                state.topic_id, min(truncation_offset, state.fetch_offset), state.lag, state.current_leader_epoch,
                state.delay, TRUNCATING, None,
            ))
            self._signal_all()

    def mark_partition_failed(self, topic_partition: TopicPartition) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#markPartitionFailed."""
        self.failed_partitions.add(topic_partition)
        self.remove_partitions({topic_partition})
        state_change_logger(fetcher=self.name).warning("partition marked as failed", topic_partition=str(topic_partition))

    def _partition_fetch_state(self, tp: TopicPartition, initial: InitialFetchState, current: PartitionFetchState | None) -> PartitionFetchState:
        """Mirrors kafka.server.AbstractFetcherThread#partitionFetchState.

        Re-adding a partition with the epoch it already has keeps its state (no truncation).
        From IBP 2.7 a partition whose log has an epoch starts FETCHING (truncation happens on
        the fetch response); otherwise it starts TRUNCATING.
        """
        # 1. Same epoch: nothing to redo.
        if current is not None and current.current_leader_epoch == initial.current_leader_epoch:
            return current
        # 2. No offset known: find one from the leader on the next do_work.
        if initial.init_offset < 0:
            self._pending_offset_resets.add(tp)
            return PartitionFetchState(initial.topic_id, initial.init_offset, None, initial.current_leader_epoch, None, TRUNCATING, None)
        self._pending_offset_resets.discard(tp)
        # 3. Truncation on fetch: fetch at once if the log has an epoch to send.
        if self.leader.is_truncation_on_fetch_supported:
            last_fetched_epoch = self.latest_epoch(tp)
            state = FETCHING if last_fetched_epoch is not None else TRUNCATING
            return PartitionFetchState(initial.topic_id, initial.init_offset, None, initial.current_leader_epoch, None, state, last_fetched_epoch)
        # 4. Older eras truncate first.
        return PartitionFetchState(initial.topic_id, initial.init_offset, None, initial.current_leader_epoch, None, TRUNCATING, None)

    def add_partitions(self, initial_fetch_states: Mapping[TopicPartition, InitialFetchState]) -> set[TopicPartition]:
        """Mirrors kafka.server.AbstractFetcherThread#addPartitions."""
        # 1. Re-added partitions are no longer failed.
        self.failed_partitions.remove_all(initial_fetch_states.keys())
        # 2. Work out each partition's state and put it at the back.
        for tp, initial in initial_fetch_states.items():
            current = self.partition_states.state_value(tp)
            self.partition_states.update_and_move_to_end(tp, self._partition_fetch_state(tp, initial, current))
        # 3. Wake a fetcher that was idling.
        self._signal_all()
        return set(initial_fetch_states)

    def maybe_update_topic_ids(self, partitions: Iterable[TopicPartition], topic_ids: Callable[[str], Uuid | None]) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#maybeUpdateTopicIds."""
        for tp in partitions:
            current = self.partition_states.state_value(tp)
            if current is not None:
                self.partition_states.update(tp, current.update_topic_id(topic_ids(tp.topic)))
        self._signal_all()

    def delay_partitions(self, partitions: Iterable[TopicPartition], delay_ms: int) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#delayPartitions: back off until a deadline.

        Delayed partitions move to the back in their current fetch order: callers often pass a
        set, whose iteration order follows string hashes (PYTHONHASHSEED), and that order would
        become the next full fetch request's partition order.
        """
        wanted = set(partitions)
        for tp in [tp for tp in self.partition_states.partition_state_map() if tp in wanted]:
            current = self.partition_states.state_value(tp)
            if current is not None and not current.is_delayed:
                self.partition_states.update_and_move_to_end(tp, replace(current, delay=DelayedItem(delay_ms, self.time)))
        self._signal_all()

    def remove_partitions(self, topic_partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        """Mirrors kafka.server.AbstractFetcherThread#removePartitions: returns the removed states."""
        removed: dict[TopicPartition, PartitionFetchState] = {}
        for tp in topic_partitions:
            state = self.partition_states.state_value(tp)
            self.partition_states.remove(tp)
            self._pending_offset_resets.discard(tp)
            self.fetcher_lag_stats.unregister(tp)
            if state is not None:
                removed[tp] = state
        return removed

    def remove_all_partitions(self) -> dict[TopicPartition, PartitionFetchState]:
        """Mirrors kafka.server.AbstractFetcherThread#removeAllPartitions."""
        return self.remove_partitions(list(self.partition_states))

    @property
    def partition_count(self) -> int:
        """Mirrors kafka.server.AbstractFetcherThread#partitionCount."""
        return self.partition_states.size

    @property
    def partitions(self) -> set[TopicPartition]:
        """Mirrors kafka.server.AbstractFetcherThread#partitions."""
        return self.partition_states.partition_set()

    def fetch_state(self, topic_partition: TopicPartition) -> PartitionFetchState | None:
        """Mirrors kafka.server.AbstractFetcherThread#fetchState."""
        return self.partition_states.state_value(topic_partition)

    # -- partitionMapCond ------------------------------------------------------------------

    def _signal_all(self) -> None:
        if self._partition_map_cond is not None:
            self._partition_map_cond.set()

    async def _await_partition_map_cond(self, timeout_ms: int) -> None:
        """Wait up to ``timeout_ms`` of loop time, or until a partition is added or delayed."""
        event = anyio.Event()
        self._partition_map_cond = event
        try:
            with anyio.move_on_after(timeout_ms / 1000.0):
                await event.wait()
        finally:
            if self._partition_map_cond is event:
                self._partition_map_cond = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, leader={self.leader.broker_end_point()}, partitions={self.partition_count})"
