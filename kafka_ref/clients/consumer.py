"""The consumer: fetch records of assigned partitions from their leaders.

Mirrors org.apache.kafka.clients.consumer.KafkaConsumer (the classic consumer, Kafka 3.x). Its internals live in subscription_state.py (SubscriptionState) and
fetcher.py (Fetcher with AbstractFetch and FetchCollector, CompletedFetch, OffsetFetcher).

``poll`` follows KafkaConsumer#poll: bring fetch positions up to date (partitions without one
are reset with ListOffsets according to ``auto_offset_reset``), return buffered records if
there are any, otherwise send one FetchRequest per leader that has no fetch in flight and wait
for the first answer or the timeout. Each partition is fetched from the leader the metadata
names, with that leader's epoch as ``current_leader_epoch`` (KIP-320); a leader answering
FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER (and the other errors that mean stale metadata)
makes the consumer refresh metadata and retry (when the answer names the new leader and epoch,
KIP-951, the position moves to it at once: fetcher.py); OFFSET_OUT_OF_RANGE resets the position. Brokers
serve consumers only up to the high watermark (the LSO for ``isolation_level=1``), and a fetch
that starts inside a batch gets the whole batch: records below the position are skipped here.

Group membership: with ``group_id`` set, ``subscribe(topics, listener)`` hands partition
assignment to the group (abstract_coordinator.py: JoinGroup/SyncGroup/Heartbeat;
consumer_coordinator.py: range and round-robin assignors, ``commit_sync`` / ``commit_async`` /
``committed``); the ConsumerRebalanceListener hears of revoked partitions while they are still
assigned and of assigned ones once they are. ``subscribe(re.compile(...))`` (or ``subscribe_pattern``)
subscribes to every topic the pattern matches, matched again at each metadata refresh (the metadata
then asks for all topics; internal ones count only with ``exclude_internal_topics=False``); a change
in the matched topics, or in the partition counts of the group's topics as the leader sees them,
rebalances the group. ``assign``, ``subscribe`` and a pattern subscription exclude each other
(SubscriptionType). ``_update_assignment_metadata_if_needed`` first sends queued commitAsync calls and lets the
coordinator poll (join, heartbeat, auto-commit), whose assignment replaces the consumer's, then initialises
positions of partitions without one from the committed offsets (manually assigned ones too,
when there is a group.id) before falling back to ``auto_offset_reset``. ``poll(0)`` does the
work that takes no loop time and returns. With a group.id, ``enable_auto_commit`` (default true, as
Kafka's) commits the positions every ``auto_commit_interval_ms`` (5000) from poll (the positions
before that poll's records are returned), before a rebalance revokes partitions, on ``assign``
(the partitions given up) and on close: ``aclose`` (and ``async with``) waits for it as
KafkaConsumer#close(Duration) does, ``close`` sends it without waiting (close(Duration.ZERO)).

After a leader or epoch change a position that knows its record's epoch is validated first
(KIP-320): OffsetsForLeaderEpoch asks the new leader where that epoch ends; a log truncated below
the position moves it back to the divergence point (or raises LogTruncationException with
``auto_offset_reset="none"``). Not modelled: fetch sessions (KIP-227; every fetch here is a full,
sessionless fetch) and aborted-transaction filtering for read_committed. Follower fetching (KIP-392): with ``client_rack`` set, a leader whose broker has
a replica selector may name a preferred read replica; the consumer then fetches from it until the
metadata would expire, it answers an error, or a fetch to it fails (then back to the leader). Because the in-process network answers in zero time, a partition
that got an error is not fetched again for ``retry_backoff_ms`` (a real network's round trip
would space the retries; here they would spin without letting virtual time advance).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import anyio

from kafka_ref.clients.client_metadata import ConsumerMetadata, client_logger
from kafka_ref.clients.fetcher import ConsumerRecord, Fetcher, LogTruncationException, OffsetFetcher
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.clients.subscription_state import FetchPosition, SubscriptionState, SubscriptionType
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.errors import (
    ConfigException,
    Errors,
    IllegalStateException,
    InvalidConfigurationException,
    InvalidOffsetException,
    KafkaException,
    RetriableException,
    TimeoutException,
)
from kafka_ref.common.requests.list_offsets import ListOffsetsRequest
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Network

OFFSET_RESET_STRATEGIES = ("earliest", "latest", "none")
# poll(0)'s budget: one microsecond of loop time, so work the in-process network answers at once
# completes and anything that would wait is cut short.
ZERO_TIME_MS = 0.001


class RetriableCommitFailedException(RetriableException):
    """Mirrors org.apache.kafka.clients.consumer.RetriableCommitFailedException.

    What a commitAsync callback gets when the commit failed with an error a new attempt may not
    meet (a coordinator moving or loading, a lost connection, a timeout).
    """


class NoOffsetForPartitionException(InvalidOffsetException):
    """Mirrors org.apache.kafka.clients.consumer.NoOffsetForPartitionException.

    A partition has no position and ``auto_offset_reset`` is "none".
    """


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """Mirrors org.apache.kafka.clients.consumer.OffsetAndTimestamp."""

    offset: int
    timestamp: int
    leader_epoch: int | None = None


OffsetCommitCallback = Callable[[dict[TopicPartition, Any], "BaseException | None"], None]  # OffsetCommitCallback#onComplete


class ConsumerRebalanceListener:
    """Mirrors org.apache.kafka.clients.consumer.ConsumerRebalanceListener.

    Passed to ``subscribe``; called inside ``poll`` (and ``close`` / ``unsubscribe``) with the
    partitions the group takes away before a rebalance and those it hands out after one. The
    callbacks are plain functions: they may use the consumer's synchronous methods
    (``assignment``, ``seek``, ``pause``), not its coroutines. ``on_partitions_lost`` (the
    partitions may already be another member's) calls ``on_partitions_revoked`` unless overridden.
    """

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        """Mirrors ConsumerRebalanceListener#onPartitionsRevoked."""

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        """Mirrors ConsumerRebalanceListener#onPartitionsAssigned."""

    def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
        """Mirrors ConsumerRebalanceListener#onPartitionsLost (by default the same as a revocation)."""
        self.on_partitions_revoked(partitions)


# --------------------------------------------------------------------------------------------
# The consumer
# --------------------------------------------------------------------------------------------


class KafkaConsumer:
    """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer (classic protocol, manual assignment).

    No background task: network work happens inside ``poll``, ``position`` and the offset
    lookups, as in Kafka's single-threaded consumer. ``auto_offset_reset`` is "earliest" (the
    default here, so a test reads what it wrote first; Kafka's default is "latest"), "latest" or
    "none"; ``isolation_level`` 0 is read_uncommitted, 1 read_committed. With a ``group_id``,
    ``enable_auto_commit`` (Kafka's default: true) commits the consumed positions on its own every
    ``auto_commit_interval_ms`` (5000) from ``poll``, before a rebalance revokes the partitions and
    on close; without one it defaults to false and cannot be set (as ConsumerConfig#maybeOverrideEnableAutoCommit).
    ``commit_sync`` / ``commit_async`` commit when asked, either way.
    """

    def __init__(
        self,
        network: Network,
        bootstrap_brokers: Iterable[int],
        *,
        client_id: str = "consumer-1",
        auto_offset_reset: str = "earliest",
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        max_partition_fetch_bytes: int = 1048576,
        max_poll_records: int = 500,
        isolation_level: int = 0,
        request_timeout_ms: int = 30000,
        retry_backoff_ms: int = 100,
        default_api_timeout_ms: int = 60000,
        metadata_max_age_ms: int = 300000,
        time: Time | None = None,
        group_id: str | None = None,
        session_timeout_ms: int = 45000,
        heartbeat_interval_ms: int = 3000,
        max_poll_interval_ms: int = 300000,
        partition_assignment_strategy: Iterable[str] = ("range",),
        client_rack: str = "",
        group_instance_id: str | None = None,
        allow_auto_create_topics: bool = True,
        enable_auto_commit: bool | None = None,
        auto_commit_interval_ms: int = 5000,
        exclude_internal_topics: bool = True,
    ) -> None:
        # 1. Validate the configuration (ConfigException names the key).
        if auto_offset_reset not in OFFSET_RESET_STRATEGIES:
            raise ConfigException("auto.offset.reset", auto_offset_reset, "String must be one of: latest, earliest, none")
        if isolation_level not in (0, 1):
            raise ConfigException("isolation.level", isolation_level, "0 (read_uncommitted) or 1 (read_committed)")
        if max_poll_records < 1:
            raise ConfigException("max.poll.records", max_poll_records, "Value must be at least 1")
        if auto_commit_interval_ms < 0:
            raise ConfigException("auto.commit.interval.ms", auto_commit_interval_ms, "Value must be at least 0")
        # (ConsumerConfig#maybeOverrideEnableAutoCommit: enable.auto.commit defaults to true, but to
        #  false without a group.id, where setting it to true is refused.)
        if group_id is None and enable_auto_commit:
            raise InvalidConfigurationException("enable.auto.commit cannot be set to true when default group id (null) is used.")
        self.enable_auto_commit = (group_id is not None) if enable_auto_commit is None else enable_auto_commit
        self.client_id = client_id
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self.fetch_min_bytes = fetch_min_bytes
        self.fetch_max_bytes = fetch_max_bytes
        self.max_partition_fetch_bytes = max_partition_fetch_bytes
        self.max_poll_records = max_poll_records
        self.isolation_level = isolation_level
        # client.rack: sent with every fetch; a leader with a replica selector may then send this
        # consumer to a replica in its rack (KIP-392).
        self.client_rack = client_rack
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.default_api_timeout_ms = default_api_timeout_ms
        self.time = time or Time()
        self._log = client_logger(client_id=client_id)
        # 2. Components.
        # allow.auto.create.topics (KIP-361): whether the consumer's Metadata requests let a broker
        # with auto.create.topics.enable create a topic it asks about. exclude.internal.topics: whether
        # a pattern subscription leaves internal topics out (ConsumerMetadata#retainTopic).
        self.subscriptions = SubscriptionState(auto_offset_reset)
        self.metadata = ConsumerMetadata(retry_backoff_ms, metadata_max_age_ms, topics=(),
                                         allow_auto_topic_creation=allow_auto_create_topics,
                                         subscriptions=self.subscriptions,
                                         include_internal_topics=not exclude_internal_topics)
        self.client = NetworkClient(network, client_id, bootstrap_brokers, self.metadata, time=self.time,
                                    request_timeout_ms=request_timeout_ms)
        self.fetcher = Fetcher(self)
        self.offset_fetcher = OffsetFetcher(self)
        self._closed = False
        # 3. Group membership (subscribe, committed offsets): the ConsumerCoordinator, when group.id is set.
        from kafka_ref.clients.consumer_coordinator import ConsumerCoordinator

        self.coordinator = None if group_id is None else ConsumerCoordinator.for_consumer(
            self, group_id, session_timeout_ms=session_timeout_ms, heartbeat_interval_ms=heartbeat_interval_ms,
            max_poll_interval_ms=max_poll_interval_ms, partition_assignment_strategy=partition_assignment_strategy,
            group_instance_id=group_instance_id, auto_commit_enabled=self.enable_auto_commit,
            auto_commit_interval_ms=auto_commit_interval_ms)
        # The group's assignment goes to SubscriptionState#assignFromSubscribed, around the user's
        # ConsumerRebalanceListener (ConsumerCoordinator#onJoinPrepare / #onJoinComplete / #onLeavePrepare).
        self._rebalance_listener: ConsumerRebalanceListener | None = None
        if self.coordinator is not None:
            self.coordinator.on_partitions_revoked = self._on_partitions_revoked
            self.coordinator.on_partitions_lost = self._on_partitions_lost
            self.coordinator.on_partitions_assigned = self._on_partitions_assigned

    async def __aenter__(self) -> KafkaConsumer:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    def close(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#close(Duration.ZERO): what goes at
        once is sent and no answer is waited for (``aclose`` waits, as Kafka's close()).

        1. A group member's coordinator closes with no time (ConsumerCoordinator#close: the
        auto-commit sent to a known coordinator, then onLeavePrepare and LeaveGroup); 2. closed.
        """
        if self.coordinator is not None and not self._closed:
            # 1. (ConsumerCoordinator#close with an expired timer: nothing here awaits.)
            self.coordinator._post_auto_commit()
            self.coordinator.on_leave_prepare()
            self.coordinator.maybe_leave_group_nowait()
        # 2. Closed.
        self._close_fetcher()

    async def aclose(self, timeout_ms: float = 30000) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#close(Duration) (close() is 30 s).

        1. The coordinator closes within min(``timeout_ms``, request.timeout.ms)
        (#createTimerForRequest): the auto-commit and commitAsync calls not sent yet, then the
        partitions are given up and a dynamic member leaves the group; a failure there (a
        rebalance listener's exception) is logged and kept; 2. closed all the same; 3. the kept
        failure is raised as KafkaException("Failed to close kafka consumer"). ``async with``
        closes this way.
        """
        if timeout_ms < 0:
            raise ValueError("The timeout cannot be negative.")  # (Java's IllegalArgumentException)
        first_exception: Exception | None = None
        if self.coordinator is not None and not self._closed:
            # 1. ConsumerCoordinator#close(closeTimer) (Utils#swallow keeps the first exception).
            try:
                await self.coordinator.close(min(timeout_ms, self.request_timeout_ms))
            except RUN_ENDING:
                raise
            except Exception as exc:
                self._log.error("coordinator_close_failed", error=repr(exc))
                first_exception = exc
        # 2. Closed.
        self._close_fetcher()
        # 3. The failure.
        if first_exception is not None:
            raise KafkaException("Failed to close kafka consumer") from first_exception

    def _close_fetcher(self) -> None:
        self._closed = True
        self.fetcher.pending.clear()
        self.fetcher.completed_fetches.clear()

    def _ensure_open(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#acquireAndEnsureOpen (one task, no lock)."""
        if self._closed:
            raise KafkaException("This consumer has already been closed.")

    # -- assignment and positions ----------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#assign.

        1. No partitions is an unsubscribe; 2. malformed partitions are refused; 3. buffered data
        of partitions no longer assigned goes; 4. metadata for the new topics, then the
        assignment (IllegalStateException while subscribed to topics).
        """
        self._ensure_open()
        partitions = list(partitions)
        # 1. assign([]) is unsubscribe().
        if not partitions:
            self.unsubscribe()
            return
        # 2. Malformed partitions.
        for tp in partitions:
            if not isinstance(tp, TopicPartition) or not tp.topic:
                raise KafkaException(f"Topic partitions to assign to cannot have null or empty topic: {tp!r}")
        # 3. Subscribed to topics: the assignment is the group's (SubscriptionState#setSubscriptionType).
        self.subscriptions.set_subscription_type(SubscriptionType.USER_ASSIGNED)
        self.fetcher.clear_buffered_data_for_unassigned_partitions(set(partitions))
        # (The positions of the partitions given up are auto-committed, if due, as no rebalance will:
        #  ConsumerCoordinator#maybeAutoCommitOffsetsAsync; the commit goes out at the next poll.)
        if self.coordinator is not None:
            self.coordinator.maybe_auto_commit_offsets_async(self.time.milliseconds())
        # 4. Metadata for the new topics, then the assignment itself.
        self.metadata.add_topics({tp.topic for tp in partitions})
        self.subscriptions.assign_from_user(partitions)

    def assignment(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#assignment."""
        return self.subscriptions.assigned_partitions()

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#pause: no fetches and no records for
        these assigned partitions until resumed (records already fetched are kept back)."""
        self._ensure_open()
        for tp in partitions:
            self.subscriptions.pause(tp)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#resume."""
        self._ensure_open()
        for tp in partitions:
            self.subscriptions.resume(tp)

    def paused(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#paused."""
        self._ensure_open()
        return self.subscriptions.paused_partitions()

    # -- group membership (kafka_ref.clients.consumer_coordinator) ---------------------------

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], listener: ConsumerRebalanceListener | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#subscribe(Collection, ConsumerRebalanceListener)
        (a compiled ``re.Pattern``: ``subscribe_pattern``).

        1. A group is needed; 2. no topics is an unsubscribe; 3. each topic must be named;
        4. the subscription type becomes AUTO_TOPICS (IllegalStateException after ``assign``),
        buffered data of other topics goes, and the coordinator rejoins with the new topics at
        the next poll; ``listener`` hears of the partitions the group takes and gives.
        """
        # 0. A compiled pattern: subscribe(Pattern, listener).
        if isinstance(topics, re.Pattern):
            self.subscribe_pattern(topics, listener)
            return
        self._ensure_open()
        # 1. Group management needs a group.id.
        self._maybe_throw_invalid_group_id_exception()
        topics = list(topics)
        # 2. subscribe([]) is unsubscribe().
        if not topics:
            self.unsubscribe()
            return
        # 3. Named topics only.
        for topic in topics:
            if not isinstance(topic, str) or not topic.strip():
                raise KafkaException("Topic collection to subscribe to cannot contain null or empty topic")
        # 4. The subscription itself.
        self.subscriptions.subscribe()
        self._rebalance_listener = listener
        self.fetcher.clear_buffered_data_for_unassigned_partitions(
            {tp for tp in self.subscriptions.assigned_partitions() if tp.topic in set(topics)})
        self.coordinator.subscribe(topics)

    def subscribe_pattern(self, pattern: re.Pattern[str], listener: ConsumerRebalanceListener | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.LegacyKafkaConsumer#subscribe(Pattern, ConsumerRebalanceListener).

        1. A group is needed, and a non-empty pattern (Java's IllegalArgumentException is ValueError);
        2. the subscription type becomes AUTO_PATTERN (IllegalStateException after ``assign`` or a topic
        subscription); 3. the pattern is matched against the topics the metadata knows now
        (ConsumerCoordinator#updatePatternSubscription) and at every metadata update after, and a
        metadata update asking for every topic is requested at once.
        """
        # 1. group.id, pattern.
        self._maybe_throw_invalid_group_id_exception()
        if pattern is None or not pattern.pattern:
            raise ValueError("Topic pattern to subscribe to cannot be " + ("null" if pattern is None else "empty"))
        self._ensure_open()
        # 2. The subscription itself.
        self._log.info("subscribed_to_pattern", pattern=pattern.pattern)
        self.subscriptions.subscribe_pattern(pattern)
        self._rebalance_listener = listener
        # 3. The topics it matches now; all topics at the next metadata update.
        self.coordinator.update_pattern_subscription(self.metadata.fetch())
        self.metadata.request_update_for_new_topics()

    def _maybe_throw_invalid_group_id_exception(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.LegacyKafkaConsumer#maybeThrowInvalidGroupIdException."""
        if self.coordinator is None:
            raise Errors.INVALID_GROUP_ID.exception("To use the group management or offset commit APIs, you must "
                                                    "provide a valid group.id in the consumer configuration.")

    def subscription(self) -> set[str]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#subscription: the subscribed topics
        (under a pattern, those it matched)."""
        self._ensure_open()
        return set(self.coordinator.subscription) if self.coordinator is not None else set()

    def unsubscribe(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#unsubscribe.

        1. Buffered records go; 2. a group member leaves the group (LeaveGroup unless static);
        3. no subscription and no assignment remain.
        """
        self._ensure_open()
        # 1. Nothing buffered survives.
        self.fetcher.completed_fetches.clear()
        # 2. Leave the group.
        if self.coordinator is not None:
            self.coordinator.on_leave_prepare()
            self.coordinator.maybe_leave_group_nowait("the consumer unsubscribed from all topics")
            self.coordinator.subscription = ()
            self.coordinator.group_subscription = frozenset()
        # 3. No assignment and no subscription type.
        self.subscriptions.unsubscribe()
        self._rebalance_listener = None

    def _on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker#invokePartitionsRevoked
        (and the assignFromSubscribed that follows it in ConsumerCoordinator): the listener runs while
        the partitions are still assigned, then they go."""
        self._give_up_partitions(partitions, lost=False)

    def _on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker#invokePartitionsLost
        (then the partitions go)."""
        self._give_up_partitions(partitions, lost=True)

    def _give_up_partitions(self, partitions: set[TopicPartition], lost: bool) -> None:
        listener = self._rebalance_listener
        try:
            # 1. The user's listener, with the partitions still assigned.
            if listener is not None:
                (listener.on_partitions_lost if lost else listener.on_partitions_revoked)(set(partitions))
        finally:
            # 2. Then the assignment shrinks (SubscriptionState#assignFromSubscribed) with their buffered records.
            if self.subscriptions.has_auto_assigned_partitions():
                remaining = self.subscriptions.assigned_partitions() - set(partitions)
                self.fetcher.clear_buffered_data_for_unassigned_partitions(remaining)
                self.subscriptions.assign_from_subscribed(sorted(remaining))

    def _on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker#invokePartitionsAssigned,
        with the group's assignment taken first (SubscriptionState#assignFromSubscribed), as
        ConsumerCoordinator#onJoinComplete does."""
        # 1. The new assignment (positions come from the committed offsets at the next poll).
        if not self.subscriptions.has_auto_assigned_partitions():
            return
        self.fetcher.clear_buffered_data_for_unassigned_partitions(set(partitions))
        self.subscriptions.assign_from_subscribed(sorted(partitions))
        # 2. The user's listener.
        if self._rebalance_listener is not None:
            self._rebalance_listener.on_partitions_assigned(set(partitions))

    async def commit_sync(self, offsets: dict[TopicPartition, Any] | None = None, timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#commitSync: the consumed positions by default.

        Earlier commitAsync calls go out first, so the coordinator sees the commits in call order.
        """
        self._ensure_open()
        if self.coordinator is None:
            raise Errors.INVALID_GROUP_ID.exception("commit_sync needs a group.id")
        offsets = self.coordinator.consumed_offsets(self) if offsets is None else offsets
        await self.coordinator.commit_offsets_sync(offsets, self.default_api_timeout_ms if timeout_ms is None else timeout_ms)

    def commit_async(self, offsets: dict[TopicPartition, Any] | None = None,
                     callback: OffsetCommitCallback | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#commitAsync.

        1. The offsets are fixed now (the consumed positions by default); 2. ConsumerCoordinator#commitOffsetsAsync
        takes it: the commit goes out at the next ``poll`` (or ``commit_sync``, or ``aclose``), one
        attempt, and ``callback(offsets, exception)`` hears how it ended there: None, the fatal
        error, or RetriableCommitFailedException for a retriable one. Kafka sends at once from its
        network thread; kafka_ref has none, so a commit not sent before a ``close()`` (which waits
        for nothing) is dropped.
        """
        self._ensure_open()
        if self.coordinator is None:
            raise Errors.INVALID_GROUP_ID.exception("commit_async needs a group.id")
        # 1. The offsets to commit.
        offsets = self.coordinator.consumed_offsets(self) if offsets is None else dict(offsets)
        # 2. The coordinator's pending async commits.
        self.coordinator.commit_offsets_async(offsets, callback)

    async def committed(self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None) -> dict[TopicPartition, Any]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#committed(Set): OffsetAndMetadata or None per partition."""
        self._ensure_open()
        if self.coordinator is None:
            raise Errors.INVALID_GROUP_ID.exception("committed needs a group.id")
        return await self.coordinator.fetch_committed_offsets(
            partitions, self.default_api_timeout_ms if timeout_ms is None else timeout_ms)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#seek(TopicPartition, long)."""
        self._ensure_open()
        if offset < 0:
            raise KafkaException("seek offset must not be a negative number")
        self.subscriptions.seek_unvalidated(tp, FetchPosition(offset, None, self.metadata.current_leader(tp)))

    def seek_to_beginning(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#seekToBeginning (lazy: resolved on the next poll)."""
        for tp in partitions:
            self.subscriptions.request_offset_reset(tp, "earliest")

    def seek_to_end(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#seekToEnd (lazy: resolved on the next poll)."""
        for tp in partitions:
            self.subscriptions.request_offset_reset(tp, "latest")

    async def position(self, tp: TopicPartition, timeout_ms: float | None = None) -> int:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#position(TopicPartition, Duration).

        The offset of the next record to fetch; resolves it with ListOffsets first when the
        partition has none (TimeoutException if that takes longer than ``timeout_ms``).
        """
        self._ensure_open()
        if not self.subscriptions.is_assigned(tp):
            raise IllegalStateException("You can only check the position for partitions assigned to this consumer.")
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.time.milliseconds() + timeout_ms
        while True:
            state = self.subscriptions.assigned_state(tp)
            if state.has_valid_position():
                return state.position.offset
            now = self.time.milliseconds()
            if now >= deadline:
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before the position for partition "
                                       f"{tp} could be determined")
            await self._update_assignment_metadata_if_needed()
            # A failed lookup backs the partition off: wait for that (within the timeout).
            if not state.has_valid_position():
                now = self.time.milliseconds()
                wait_ms = state.next_retry_time_ms - now if state.next_retry_time_ms > now else self.retry_backoff_ms
                await self.time.sleep(max(min(wait_ms, deadline - now), 0))

    def high_watermark(self, tp: TopicPartition) -> int | None:
        """The high watermark of the last fetch response for ``tp`` (None before the first)."""
        return self.subscriptions.assigned_state(tp).high_watermark

    # -- polling ---------------------------------------------------------------------------

    async def poll(self, timeout_ms: float) -> list[ConsumerRecord]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#poll(Duration).

        Returns as soon as records are available (at most ``max_poll_records``), or an empty
        list once ``timeout_ms`` of loop time has passed.
        """
        self._ensure_open()
        if self.subscriptions.subscription_type is SubscriptionType.NONE:
            # (SubscriptionState#hasNoSubscriptionOrUserAssignment: Java's IllegalStateException.)
            raise IllegalStateException("Consumer is not subscribed to any topics or assigned any partitions")
        deadline = self.time.milliseconds() + timeout_ms
        answered_at_once = False
        while True:
            # 1. Positions and metadata up to date (bounded by the poll timeout). poll(0) still does
            #    the work that takes no loop time (Kafka's poll(Duration.ZERO) sends requests and reads
            #    the answers already there): it stops only where loop time would pass, and a JoinGroup
            #    or SyncGroup cut short is resumed by the next poll.
            budget_ms = ZERO_TIME_MS if timeout_ms <= 0 else max(deadline - self.time.milliseconds(), 0)
            with anyio.move_on_after(budget_ms / 1000.0):
                await self._update_assignment_metadata_if_needed()
            # 2. Buffered records first; send the next fetches before returning them (pipelining).
            records = self.fetcher.collect_fetch(self.max_poll_records)
            if records:
                self.fetcher.send_fetches()
                return records
            # (With fetch.max.wait.ms 0 a partition at its end is answered at once and empty: over a
            #  real network each round costs a round trip; here the next round waits 1 ms, or poll
            #  would fetch forever at one instant of virtual time.)
            if answered_at_once:
                await self.time.sleep(min(1, max(deadline - self.time.milliseconds(), 0)))
            # 3. Nothing buffered: fetch and wait for the first answer.
            self.fetcher.send_fetches()
            remaining = deadline - self.time.milliseconds()
            if remaining <= 0:
                if timeout_ms > 0:
                    return []
                # (poll(0): fetch answers that come back without loop time passing are read now.)
                await self.fetcher.wait_for_fetches(ZERO_TIME_MS)
                records = self.fetcher.collect_fetch(self.max_poll_records)
                if records:
                    self.fetcher.send_fetches()
                return records
            sent_at = self.time.milliseconds()
            await self.fetcher.wait_for_fetches(min(remaining, self._poll_wait_ms()))
            answered_at_once = (self.fetch_max_wait_ms == 0 and self.time.milliseconds() == sent_at
                                and not self.fetcher.pending)

    def _poll_wait_ms(self) -> float:
        """How long to wait for fetches: until one answers, or until metadata or a backed-off partition is due."""
        now = self.time.milliseconds()
        if self.subscriptions.partitions_needing_reset(now):
            return 0
        waits = [self.request_timeout_ms if self.fetcher.pending else self.retry_backoff_ms]
        waits.append(self.metadata.time_to_next_update(now))
        # KafkaConsumer#pollForFetches bounds the wait by ConsumerCoordinator#timeToNextPoll (the next
        # heartbeat or auto-commit), so a member heartbeats and auto-commits on time.
        if self.coordinator is not None:
            waits.append(self.coordinator.time_to_next_poll(now))
        waits.extend(s.next_retry_time_ms - now for s in self.subscriptions.assignment.values() if s.next_retry_time_ms > now)
        return min(waits)

    async def _update_assignment_metadata_if_needed(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#updateAssignmentMetadataIfNeeded.

        With group membership the coordinator's poll and committed offsets come first here
        (see the module docstring); with manual assignment: metadata, leaders, resets.
        """
        # 0. Queued commitAsync calls go out first; then a group member joins / heartbeats and
        #    takes positions from the committed offsets; a
        #    manually assigned consumer with a group.id starts from its group's committed offsets
        #    too (KafkaConsumer#updateFetchPositions: ConsumerCoordinator#initWithCommittedOffsetsIfNeeded).
        if self.coordinator is not None:
            await self.coordinator.poll_for_consumer(self)
            if self.subscriptions.subscription_type is SubscriptionType.USER_ASSIGNED:
                await self.coordinator.refresh_committed_offsets_if_needed(self)
        # 1. Metadata when due, and the leaders it names for every position.
        await self.client.poll_metadata()
        self.metadata.maybe_throw_any_exception()
        # (OffsetFetcher#validatePositionsOnMetadataChange: a new leader or epoch means the
        #  position is checked against the new leader's log first, KIP-320.)
        self.offset_fetcher.validate_positions_on_metadata_change()
        await self.offset_fetcher.validate_positions_if_needed()
        # 2. Partitions without a position take the reset strategy (or fail with "none").
        undefined = self.subscriptions.reset_initializing_positions()
        if undefined:
            raise NoOffsetForPartitionException(
                f"Undefined offset with no reset policy for partitions: [{', '.join(str(tp) for tp in undefined)}]")
        # 3. Resets that are due.
        await self.offset_fetcher.reset_positions_if_needed()

    # -- offset lookups --------------------------------------------------------------------

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#beginningOffsets (the log start offsets)."""
        return await self._offsets_at(partitions, ListOffsetsRequest.EARLIEST_TIMESTAMP, timeout_ms)

    async def end_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#endOffsets (HW, or LSO for read_committed)."""
        return await self._offsets_at(partitions, ListOffsetsRequest.LATEST_TIMESTAMP, timeout_ms)

    async def offsets_for_times(
        self, timestamps: dict[TopicPartition, int], timeout_ms: float | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Mirrors org.apache.kafka.clients.consumer.KafkaConsumer#offsetsForTimes.

        The first offset whose timestamp is at least the one given, per partition (None when
        there is none).
        """
        self._ensure_open()
        for tp, ts in timestamps.items():
            if ts < 0:
                raise KafkaException(f"The target time for partition {tp} is {ts}. The target time cannot be negative.")
        found = await self.offset_fetcher.fetch_offsets_by_times(
            dict(timestamps), self.default_api_timeout_ms if timeout_ms is None else timeout_ms)
        return {tp: None if d is None else OffsetAndTimestamp(d.offset, -1 if d.timestamp is None else d.timestamp, d.leader_epoch)
                for tp, d in found.items()}

    async def _offsets_at(
        self, partitions: Iterable[TopicPartition], timestamp: int, timeout_ms: float | None
    ) -> dict[TopicPartition, int]:
        self._ensure_open()
        found = await self.offset_fetcher.fetch_offsets_by_times(
            {tp: timestamp for tp in partitions}, self.default_api_timeout_ms if timeout_ms is None else timeout_ms)
        return {tp: d.offset for tp, d in found.items() if d is not None}


Consumer = KafkaConsumer

__all__ = [
    "Consumer", "ConsumerRebalanceListener", "ConsumerRecord", "KafkaConsumer", "LogTruncationException",
    "NoOffsetForPartitionException", "OffsetAndTimestamp", "OffsetCommitCallback", "RetriableCommitFailedException",
]
