"""The consumer's side of group membership: assignment, offset commit and fetch, rebalance callbacks.

Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator (Kafka 3.x, the classic
protocol with the EAGER rebalance protocol) on top of AbstractCoordinator (abstract_coordinator.py:
coordinator discovery, JoinGroup / SyncGroup, heartbeats, leaving, Generation and MemberState),
using ConsumerProtocol (consumer_protocol.py) and the range / round-robin assignors (assignors.py).
The offset half (commitSync / commitAsync, the auto-commit, committed-offset fetches, with
OffsetAndMetadata and CommitFailedException) is the ConsumerCoordinatorOffsets mixin
(consumer_coordinator_offsets.py) that ConsumerCoordinator inherits.

The leader runs the assignor over every member's subscription; before rejoining, every owned
partition is revoked (EAGER), so after a rebalance positions come from the committed offsets.
A subscribed member commits only when STABLE. Partitions owned when the generation was reset
(UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION) are *lost* rather than revoked.

commitAsync (``commit_offsets_async``): KafkaConsumer#commit_async hands each call here; with no
network thread in kafka_ref it waits among the pending async commits until the consumer's next
poll, commit_sync or close, which send them in call order (one attempt each, after a coordinator lookup
if none is known) and run their callbacks. An async commit answered FENCED_INSTANCE_ID makes every
later poll, commitSync and commitAsync raise FencedInstanceIdException (asyncCommitFenced).

Auto-commit (enable.auto.commit, auto.commit.interval.ms): ``poll`` commits the consumed positions
asynchronously once the interval has passed (#maybeAutoCommitOffsetsAsync; a retriable failure brings
the next attempt forward to retry.backoff.ms), for a manually assigned consumer with a group.id too;
onJoinPrepare commits them before revoking the partitions and waits for the answer, retrying
retriable failures, for at most rebalance.timeout.ms; ``close`` commits them synchronously
(#maybeAutoCommitOffsetsSync). With no network thread, the poll that sends an auto-commit waits for
its answer (Kafka's poll goes on while it is in flight); an async commit (auto or not) whose wait a
short poll cut short is waited for again by the next call, not sent twice, as Kafka's stays in flight.

Pattern subscriptions and metadata-triggered rejoins (#maybeUpdateSubscriptionMetadata, at the start
of every poll): after a metadata update a pattern subscriber matches the cluster's topics again
(#updatePatternSubscription; the consumer's metadata, ConsumerMetadata, asks for every topic and
keeps internal ones only with exclude.internal.topics=false) and subscribes to what matches, and the
partition counts of the metadata topics (the subscription, and for the leader every member's topics:
#updateGroupSubscription) become the metadata snapshot. #rejoinNeededOrPending: the leader rejoins
when that snapshot differs from the one it assigned with (#assignmentSnapshot), any member when its
subscription differs from the one its JoinGroup carried; a pattern subscriber refreshes its metadata
before it joins. A returning static leader told to skip the assignment (KIP-814) still watches the
metadata. An assignment naming a topic the member no longer subscribes to is not taken: it rejoins.

Not modelled: the COOPERATIVE protocol, rack-aware assignment (the metadata snapshot compares
partition counts, not replica racks), and the partitions marked pending revocation while the
auto-commit before a rebalance is outstanding (SubscriptionState#markPendingRevocation).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio

from kafka_ref.clients.abstract_coordinator import (
    NO_GENERATION,
    NO_GENERATION_ID,
    AbstractCoordinator,
    Generation,
)
# The assignors and ConsumerProtocol live in their own modules (re-exported here).
from kafka_ref.clients.assignors import ASSIGNORS, RangeAssignor, RoundRobinAssignor  # noqa: F401
from kafka_ref.clients.client_metadata import Metadata, MetadataSnapshot
from kafka_ref.clients.consumer import OffsetCommitCallback
from kafka_ref.clients.consumer_coordinator_offsets import (
    AsyncCommitFuture,
    ConsumerCoordinatorOffsets,
    OffsetAndMetadata,
    OffsetCommitCompletion,
)
from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol, Subscription  # noqa: F401
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.common.errors import ConfigException, KafkaException, TimeoutException
from kafka_ref.common.requests.join_group import JoinGroupRequestProtocol, JoinGroupResponse
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition

PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
# A wait bounded by a deadline already passed still reads the answers that come back without loop
# time passing (as Kafka's client.poll with an expired timer does): one microsecond of loop time.
ZERO_TIME_MS = 0.001


@dataclass(frozen=True, slots=True)
class SubscriptionMetadataSnapshot:
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.MetadataSnapshot.

    The metadata update version and, per metadata topic, its partition count (0 for a topic the
    metadata does not know). Kafka keeps each partition's replica racks when client.rack is set;
    rack-aware assignment is not modelled, so only the count is compared here.
    """

    version: int
    partitions_per_topic: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, topics: Iterable[str], cluster: MetadataSnapshot, version: int) -> "SubscriptionMetadataSnapshot":
        """The snapshot of ``topics`` in ``cluster`` (Cluster#partitionsForTopic: none for an unknown topic)."""
        return cls(version, tuple(sorted((t, len(cluster.partitions_for_topic(t))) for t in set(topics))))

    def matches(self, other: "SubscriptionMetadataSnapshot") -> bool:
        """Mirrors ConsumerCoordinator.MetadataSnapshot#matches: the same update, or the same partition counts."""
        return self.version == other.version or self.partitions_per_topic == other.partitions_per_topic

    def __str__(self) -> str:
        return f"(version{self.version}: {dict(self.partitions_per_topic)})"


class ConsumerCoordinator(AbstractCoordinator, ConsumerCoordinatorOffsets):
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.

    ``on_partitions_revoked`` / ``on_partitions_assigned`` are called with the partitions
    given up before a rejoin and received after a SyncGroup (ConsumerRebalanceListener);
    ``on_partitions_lost`` (default: ``on_partitions_revoked``) when the generation or member id
    was reset first, so the partitions may already belong to another member.
    """

    def __init__(
        self,
        client: NetworkClient,
        metadata: Metadata,
        group_id: str,
        *,
        time: Time | None = None,
        session_timeout_ms: int = 45000,
        rebalance_timeout_ms: int = 300000,
        heartbeat_interval_ms: int = 3000,
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 30000,
        assignors: Iterable[str] = ("range",),
        on_partitions_revoked: Callable[[set[TopicPartition]], None] | None = None,
        on_partitions_assigned: Callable[[set[TopicPartition]], None] | None = None,
        group_instance_id: str | None = None,
        on_partitions_lost: Callable[[set[TopicPartition]], None] | None = None,
        auto_commit_enabled: bool = False,
        auto_commit_interval_ms: int = 5000,
        subscriptions: Any = None,
    ) -> None:
        super().__init__(
            client, group_id, time=time, session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms, heartbeat_interval_ms=heartbeat_interval_ms,
            retry_backoff_ms=retry_backoff_ms, request_timeout_ms=request_timeout_ms,
            group_instance_id=group_instance_id)
        self.metadata = metadata
        unknown = [a for a in assignors if a not in ASSIGNORS]
        if unknown:
            raise KafkaException(f"Unknown partition assignment strategy: {unknown}")
        self.assignors = [ASSIGNORS[a]() for a in assignors]
        self.on_partitions_revoked = on_partitions_revoked
        self.on_partitions_assigned = on_partitions_assigned
        # ConsumerRebalanceListener#onPartitionsLost: by default the same as a revocation.
        self.on_partitions_lost = on_partitions_lost
        self.subscription: tuple[str, ...] = ()
        # The subscription the last JoinGroup carried (ConsumerCoordinator#joinedSubscription).
        self._joined_subscription: tuple[str, ...] | None = None
        # The leader's view of every member's topics (SubscriptionState#groupSubscription): it watches
        # their metadata too; emptied by onJoinPrepare.
        self.group_subscription: frozenset[str] = frozenset()
        self.is_leader = False
        self.assignment: set[TopicPartition] = set()
        self.rebalances = 0
        # commitAsync calls not sent yet (ConsumerCoordinator#pendingAsyncCommits counts those waiting
        # for a coordinator lookup): kafka_ref has no network thread, so every one waits here, in call
        # order, until the consumer's next poll or commitSync.
        self._pending_async_commits: list[tuple[dict[TopicPartition, OffsetAndMetadata], OffsetCommitCallback | None,
                                                AsyncCommitFuture]] = []
        # Finished commitAsync calls whose callbacks have not run (#completedOffsetCommits).
        self._completed_offset_commits: deque[OffsetCommitCompletion] = deque()
        # Set once an async commit was answered FENCED_INSTANCE_ID (#asyncCommitFenced): from then on
        # invoke_completed_offset_commit_callbacks raises FencedInstanceIdException.
        self._async_commit_fenced = False
        # enable.auto.commit / auto.commit.interval.ms (#autoCommitEnabled, #autoCommitIntervalMs): the
        # consumed positions (SubscriptionState#allConsumed of ``subscriptions``) are committed
        # asynchronously from poll once the interval has passed (#nextAutoCommitTimer, its deadline
        # here), synchronously before a rebalance revokes the partitions and when the consumer closes.
        self.auto_commit_enabled = auto_commit_enabled
        self.auto_commit_interval_ms = auto_commit_interval_ms
        self.subscriptions = subscriptions
        # (Kafka makes the timer only with auto-commit on; a coordinator without it never reads the clock here.)
        self.next_auto_commit_deadline_ms: int | None = (
            self.time.milliseconds() + auto_commit_interval_ms if auto_commit_enabled else None)
        # The auto-commit onJoinPrepare waits for (#autoCommitOffsetRequestFuture) and the bound on
        # that wait (#joinPrepareTimer: rebalance.timeout.ms from the first onJoinPrepare of a rebalance).
        self._auto_commit_offset_request: AsyncCommitFuture | None = None
        self._join_prepare_deadline_ms: int | None = None
        # The generation the async commit in flight went out with (its handler's sentGeneration).
        self._async_commit_sent_generation = NO_GENERATION
        # The partition counts of the subscribed topics at the last metadata update seen
        # (#metadataSnapshot) and, for the leader, at its last assignment (#assignmentSnapshot):
        # when they differ, the leader rejoins.
        self.metadata_snapshot = SubscriptionMetadataSnapshot.of(self.metadata_topics(), metadata.fetch(),
                                                                 metadata.update_version)
        self.assignment_snapshot: SubscriptionMetadataSnapshot | None = None

    def protocol_type(self) -> str:
        """Mirrors ConsumerCoordinator#protocolType."""
        return PROTOCOL_TYPE

    # -- subscription --------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """Mirrors KafkaConsumer#subscribe's effect on the coordinator: a changed subscription means a rejoin.

        Its reason is "subscription has changed" once a JoinGroup went out with another subscription
        (ConsumerCoordinator#rejoinNeededOrPending); before the first one, there is none to give.
        """
        topics = tuple(sorted(set(topics)))
        if topics != self.subscription:
            self.subscription = topics
            self.metadata.add_topics(topics)
            if self._joined_subscription is not None:
                self.request_rejoin_if_necessary("subscription has changed", "subscription changed")
            else:
                self.rejoin_needed = True

    def _has_auto_assigned_partitions(self) -> bool:
        """SubscriptionState#hasAutoAssignedPartitions of the consumer's subscriptions (a coordinator
        built without them is group-managed once it has topics)."""
        if self.subscriptions is None:
            return bool(self.subscription)
        return self.subscriptions.has_auto_assigned_partitions()

    def _has_pattern_subscription(self) -> bool:
        """SubscriptionState#hasPatternSubscription of the consumer's subscriptions."""
        return self.subscriptions is not None and self.subscriptions.has_pattern_subscription()

    def subscribe_from_pattern(self, topics: Iterable[str]) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#subscribeFromPattern
        (the topics live here): True when the matched topics changed.

        1. Only under a pattern subscription (Java's IllegalArgumentException is ValueError);
        2. the subscription becomes the matched topics, which the metadata then wants too.
        """
        # 1. AUTO_PATTERN only.
        if not self._has_pattern_subscription():
            raise ValueError("Attempt to subscribe from pattern while subscription type set to "
                             f"{'NONE' if self.subscriptions is None else self.subscriptions.subscription_type.value}")
        # 2. SubscriptionState#changeSubscription.
        topics = tuple(sorted(set(topics)))
        if topics == self.subscription:
            return False
        self.subscription = topics
        self.metadata.add_topics(topics)
        return True

    def metadata_topics(self) -> set[str]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#metadataTopics: the
        member's subscription, and for the leader every member's topics too."""
        if not self.group_subscription:
            return set(self.subscription)
        return set(self.group_subscription) | set(self.subscription)

    def update_pattern_subscription(self, cluster: MetadataSnapshot) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#updatePatternSubscription.

        1. The topics of ``cluster`` the pattern matches (the consumer's metadata holds internal topics
        only with exclude.internal.topics=false); 2. a changed match becomes the subscription and
        asks for a metadata update at once.
        """
        # 1. The matching topics.
        topics = {t for t in cluster.topics() if self.subscriptions.matches_subscribed_pattern(t)}
        # 2. The subscription.
        if self.subscribe_from_pattern(topics):
            self.metadata.request_update_for_new_topics()

    def maybe_update_subscription_metadata(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#maybeUpdateSubscriptionMetadata.

        Only after a metadata update not seen yet: 1. a pattern is matched again; 2. the partition
        counts of the metadata topics become the new metadata snapshot (rejoin_needed_or_pending
        compares it with the one the leader assigned with).
        """
        version = self.metadata.update_version
        if version > self.metadata_snapshot.version:
            cluster = self.metadata.fetch()
            # 1. The pattern against the new topics.
            if self._has_pattern_subscription():
                self.update_pattern_subscription(cluster)
            # 2. The snapshot.
            self.metadata_snapshot = SubscriptionMetadataSnapshot.of(self.metadata_topics(), cluster, version)

    def rejoin_needed_or_pending(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#rejoinNeededOrPending.

        1. Never for a manually assigned consumer; 2. the leader rejoins when the partition counts of
        the group's topics changed since its assignment ("cached metadata has changed"); 3. any member
        when its subscription changed since its JoinGroup ("subscription has changed"); 4. otherwise
        AbstractCoordinator's answer.
        """
        # 1. Group-managed only.
        if not self._has_auto_assigned_partitions():
            return False
        # 2. Metadata changed under the leader's assignment.
        if self.assignment_snapshot is not None and not self.assignment_snapshot.matches(self.metadata_snapshot):
            self.request_rejoin_if_necessary(
                "cached metadata has changed",
                f"cached metadata has changed from {self.assignment_snapshot} at the beginning of the rebalance "
                f"to {self.metadata_snapshot}")
            return True
        # 3. Subscription changed since the JoinGroup.
        if self._joined_subscription is not None and set(self._joined_subscription) != set(self.subscription):
            self.request_rejoin_if_necessary(
                "subscription has changed",
                f"subscription has changed from {list(self._joined_subscription)} at the beginning of the "
                f"rebalance to {list(self.subscription)}")
            return True
        # 4. AbstractCoordinator.
        return super().rejoin_needed_or_pending()

    async def _ensure_fresh_metadata(self, deadline_ms: int) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient#ensureFreshMetadata.

        1. Nothing to do unless an update is requested or due; 2. otherwise updates are awaited
        (#awaitMetadataUpdate, at least once) until the metadata's version moves or ``deadline_ms``
        passes; True when it moved.
        """
        # 1. Fresh enough: nothing requested and either not expired yet or still in the refresh backoff.
        #    (Metadata#timeToNextUpdate is not asked while the metadata has not expired: its answer is
        #    not 0 then, and asking would draw a backoff jitter from the metadata's random source.)
        if not self.metadata.update_requested():
            now = self.time.milliseconds()
            if (self.metadata.last_successful_update() + self.metadata.metadata_expire_ms > now
                    or self.metadata.time_to_next_update(now) != 0):
                return True
        # 2. Wait for an update: one attempt at least, even with the deadline reached.
        version = self.metadata.update_version
        while True:
            await self.client.await_metadata_update(deadline_ms)
            if self.metadata.update_version != version or self.time.milliseconds() >= deadline_ms:
                break
        return self.metadata.update_version > version

    # -- the poll loop -----------------------------------------------------------------------------

    async def poll(self, timeout_ms: float) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#poll(Timer, boolean).

        Coordinator known, group joined, heartbeat sent when due, then the auto-commit when its
        interval has passed.

        True when the member is in a stable generation within the timeout (always for a manually
        assigned consumer, which looks up no coordinator here and joins no group).
        0. A metadata update not seen yet is taken in (#maybeUpdateSubscriptionMetadata: the pattern
        matched again, the metadata snapshot renewed);
        1. a subscribed member heartbeats when due, finds the coordinator and (re)joins when
        #rejoinNeededOrPending, a pattern subscriber first refreshing its metadata (requested when
        the backoff allows) and matching again; a poll that cannot do either returns False before
        any auto-commit; 2. the auto-commit (#maybeAutoCommitOffsetsAsync), manual assignment included.
        """
        deadline = self.time.milliseconds() + int(timeout_ms)
        # 0. The latest metadata.
        self.maybe_update_subscription_metadata()
        if self._has_auto_assigned_partitions():
            # 1. A heartbeat is due even while everything is fine; then the coordinator and membership.
            await self.maybe_heartbeat()
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline):
                return False
            if self.rejoin_needed_or_pending():
                if self._has_pattern_subscription():
                    # (Fresh metadata before a pattern subscriber joins, so one topic creation does not
                    #  set off one rebalance per member.)
                    if self.metadata.time_to_allow_update(self.time.milliseconds()) == 0:
                        self.metadata.request_update(True)
                    if not await self._ensure_fresh_metadata(deadline):
                        return False
                    self.maybe_update_subscription_metadata()
                if not await self.ensure_active_group(deadline):
                    return False
        # 2. Offsets committed on their own when the interval has passed; the commit goes out now
        #    (Kafka's commitOffsetsAsync transmits it at once) and its answer is read here.
        if self.maybe_auto_commit_offsets_async(self.time.milliseconds()):
            await self._send_pending_async_commits()
        return True

    def time_to_next_poll(self, now: int) -> float:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#timeToNextPoll.

        How long the consumer may wait before polling the coordinator again: until the next
        heartbeat, or the next auto-commit when that is sooner.
        """
        # 1. Without auto-commit, only heartbeats set the pace.
        if not self.auto_commit_enabled:
            return self.time_to_next_heartbeat(now)
        # 2. Otherwise the sooner of the two (Timer#remainingMs is never negative).
        return min(max(self.next_auto_commit_deadline_ms - now, 0), self.time_to_next_heartbeat(now))

    async def close(self, timeout_ms: float) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#close(Timer).

        1. The synchronous auto-commit (#maybeAutoCommitOffsetsSync), then commitAsync calls not sent
        yet, within ``timeout_ms``; 2. AbstractCoordinator#close: the partitions are given up
        (onLeavePrepare) and a dynamic member leaves the group (LeaveGroup sent, not awaited).
        A timeout of zero sends what can go at once and waits for no answer (close(Duration.ZERO)).
        """
        deadline = self.time.milliseconds() + int(timeout_ms)
        try:
            if timeout_ms <= 0:
                # 1. (No time: the auto-commit is sent to a known coordinator and not waited for.)
                self._post_auto_commit()
            else:
                # 1. Within the timeout: a wait still going at its end is given up.
                with anyio.move_on_after(timeout_ms / 1000.0):
                    await self.maybe_auto_commit_offsets_sync(deadline)
                    if self._pending_async_commits:
                        await self._send_pending_async_commits()
        finally:
            # 2. Leave.
            self.on_leave_prepare()
            self.maybe_leave_group_nowait()

    # -- the join hooks --------------------------------------------------------------------------------

    async def _on_join_prepare(self, deadline_ms: int, generation_id: int, member_id: str) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#onJoinPrepare (EAGER).

        Called before a rebalance's first JoinGroup (AbstractCoordinator#needsJoinPrepare) with the
        generation and member id of that moment; False means "not yet" (the auto-commit is still
        going): the caller returns and calls it again on its next poll.
        1. The first call of a rebalance starts the joinPrepareTimer (rebalance.timeout.ms);
        2. with enable.auto.commit and no auto-commit of this rebalance outstanding, the consumed
        positions are committed asynchronously; 3. that commit is waited for until ``deadline_ms``
        or the joinPrepareTimer, whichever is sooner (a deadline already passed still reads what
        answers at once); it is waited for again (False, after min(retry.backoff.ms, the time left))
        while unanswered or after a retriable failure, unless the joinPrepareTimer expired; a fatal
        failure is logged and the rebalance goes on. 4. A generation or member id that was reset (by
        an error answer, or leaving the group) means the owned partitions may already be someone
        else's: they are *lost* (onPartitionsLost), only if there are any; 5. otherwise EAGER revokes
        every owned partition (onPartitionsRevoked), and the listener hears of it even when there
        are none; 6. the rebalance's timer and commit are forgotten, the member is no longer the
        leader and the group subscription is emptied (SubscriptionState#resetGroupSubscription).
        """
        # 1. joinPrepareTimer.
        now = self.time.milliseconds()
        if self._join_prepare_deadline_ms is None:
            self._join_prepare_deadline_ms = now + self.rebalance_timeout_ms
        # 2. The auto-commit before the revocation (#maybeAutoCommitOffsetsAsync()).
        if self.auto_commit_enabled and self._auto_commit_offset_request is None:
            self._auto_commit_offset_request = self.auto_commit_offsets_async()
        # 3. Its answer, within the sooner of the two bounds.
        future = self._auto_commit_offset_request
        if future is not None:
            poll_deadline = min(deadline_ms, self._join_prepare_deadline_ms)
            with anyio.move_on_after(max(poll_deadline - now, ZERO_TIME_MS) / 1000.0):
                await self._send_pending_async_commits()
            now = self.time.milliseconds()
            completed = True
            if now >= self._join_prepare_deadline_ms:
                self._log.error("auto_commit_before_rebalance_timed_out")
            elif not future.done or (future.failed() and future.is_retriable()):
                completed = False
            elif future.failed():
                self._log.error("auto_commit_before_rebalance_failed", error=repr(future.exception))
            if future.done:
                self._auto_commit_offset_request = None
            if not completed:
                await self.time.sleep(min(max(poll_deadline - now, 0), self.retry_backoff_ms))
                return False
        partitions = set(self.assignment)
        if generation_id == NO_GENERATION_ID or member_id == NO_GENERATION.member_id:
            # 4. Lost: the generation or member id was reset; nothing owned, no callback.
            if partitions:
                self.assignment = set()
                self._invoke_partitions_lost_or_revoked(partitions, lost=True)
        else:
            # 5. EAGER: revoke everything, the empty set too.
            self.assignment = set()
            self._invoke_partitions_lost_or_revoked(partitions, lost=False)
        # 6. The next rebalance starts afresh: no longer the leader, no group subscription.
        self.is_leader = False
        self.group_subscription = frozenset()
        self._join_prepare_deadline_ms = None
        self._auto_commit_offset_request = None
        return True

    def _join_protocols(self) -> tuple[JoinGroupRequestProtocol, ...]:
        """Mirrors ConsumerCoordinator#metadata: one protocol per assignor, all with this subscription."""
        self._joined_subscription = self.subscription
        metadata = ConsumerProtocol.serialize_subscription(Subscription(self.subscription))
        return tuple(JoinGroupRequestProtocol(name=a.name, metadata=metadata) for a in self.assignors)

    async def _on_join_leader(self, response: JoinGroupResponse) -> dict[str, bytes]:
        """Mirrors ConsumerCoordinator#onLeaderElected: run the chosen assignor over every member's subscription.

        1. The leader watches every member's topics (#updateGroupSubscription: their metadata, fresh);
        2. the chosen assignor over the partition counts of the metadata; 3. the metadata snapshot
        it assigned with is kept (#assignmentSnapshot): a later change makes the leader rejoin. A
        returning static leader told to skip the assignment (KIP-814) keeps the snapshot and assigns
        nothing. (The built-in assignors assign subscribed topics only: #maybeUpdateGroupSubscription
        has nothing to do.)
        """
        subscriptions = {m.member_id: ConsumerProtocol.deserialize_subscription(m.metadata) for m in response.members}
        topics = {t for s in subscriptions.values() for t in s.topics}
        # 1. The leader needs partition counts for every topic anyone subscribes to.
        await self._update_group_subscription(topics)
        self.is_leader = True
        # (A returning static leader, KIP-814: the coordinator kept the assignment; the leader only
        #  watches the metadata from here.)
        if response.skip_assignment:
            self._log.info("assignment_skipped", generation_id=response.generation_id)
            self.assignment_snapshot = self.metadata_snapshot
            return {}
        snapshot = self.metadata.fetch()
        partitions_per_topic = {t: snapshot.partition_count(t) or 0 for t in topics}
        # 2. Assign with the protocol the coordinator chose.
        assignor = next(a for a in self.assignors if a.name == response.protocol_name)
        assignment = assignor.assign(partitions_per_topic, subscriptions)
        # 3. What the assignment was computed from.
        self.assignment_snapshot = self.metadata_snapshot
        self._log.info("assignment_computed", assignor=assignor.name, generation_id=response.generation_id,
                       assignment={m: [str(tp) for tp in parts] for m, parts in sorted(assignment.items())})
        return {m: ConsumerProtocol.serialize_assignment(Assignment(tuple(parts))) for m, parts in assignment.items()}

    async def _update_group_subscription(self, topics: set[str]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#updateGroupSubscription.

        1. The group's topics become the leader's group subscription (SubscriptionState#groupSubscribe),
        metadata for topics it does not subscribe to itself requested at once; 2. fresh metadata
        (ConsumerNetworkClient#ensureFreshMetadata, no time bound) and the snapshot taken from it.
        """
        # 1. groupSubscribe.
        self.group_subscription = frozenset(topics)
        self.metadata.add_topics(topics)
        if not set(self.subscription) >= self.group_subscription:
            self.metadata.request_update_for_new_topics()
        # 2. Fresh metadata (Kafka's Long.MAX_VALUE timer).
        if not await self._ensure_fresh_metadata(self.time.milliseconds() + 2**62):
            raise TimeoutException("Timed out waiting for fresh metadata")
        self.maybe_update_subscription_metadata()

    def _maybe_update_joined_subscription(self, assigned: set[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#maybeUpdateJoinedSubscription.

        Under a pattern, assigned topics the JoinGroup did not carry (the leader matched them first)
        join both the subscription and the joined subscription.
        """
        if not self._has_pattern_subscription():
            return
        added = {tp.topic for tp in assigned} - set(self._joined_subscription or ())
        if added:
            if self.subscribe_from_pattern(set(self.subscription) | added):
                self.metadata.request_update_for_new_topics()
            self._joined_subscription = tuple(sorted(set(self._joined_subscription or ()) | added))

    def _on_join_complete(self, generation: Generation, assignment: bytes) -> None:
        """Mirrors ConsumerCoordinator#onJoinComplete: take the assignment (the base class has made the member STABLE).

        1. Only the leader watches the metadata for changes; 2. an assignment of topics this member
        does not subscribe to (its subscription changed since it joined) is not taken: rejoin;
        3. under a pattern the assigned topics join the subscription; 4. the auto-commit interval
        starts over; 5. the assignment and the listener.
        """
        # 1. A follower keeps no assignment snapshot.
        if not self.is_leader:
            self.assignment_snapshot = None
        assigned = set(ConsumerProtocol.deserialize_assignment(assignment).partitions)
        # 2. (SubscriptionState#checkAssignmentMatchedSubscription.)
        matched = (self.subscriptions.check_assignment_matched_subscription(assigned, self.subscription)
                   if self.subscriptions is not None else all(tp.topic in self.subscription for tp in assigned))
        if not matched:
            self.request_rejoin(
                "received assignment does not match the current subscription",
                f"received assignment {sorted(str(tp) for tp in assigned)} does not match the current subscription "
                f"{list(self.subscription)}; it is likely that the subscription has changed since we joined the group, "
                "will re-join with current subscription")
            return
        # 3. Topics the leader matched for this member.
        self._maybe_update_joined_subscription(assigned)
        self.rebalances += 1
        # 4. (The auto-commit interval starts over from the new assignment.)
        if self.auto_commit_enabled:
            self.next_auto_commit_deadline_ms = self.time.milliseconds() + self.auto_commit_interval_ms
        # 5. The assignment.
        self.assignment = assigned
        self._log.info("partitions_assigned", generation_id=generation.generation_id,
                       partitions=sorted(str(tp) for tp in self.assignment))
        if self.on_partitions_assigned is not None:
            self.on_partitions_assigned(set(self.assignment))

    def on_leave_prepare(self) -> None:
        """Mirrors ConsumerCoordinator#onLeavePrepare: give the partitions up before leaving the group.

        1. Only a group-assigned (subscribed) member with partitions has anything to give up;
        2. they are lost if the generation or member id was reset or a rebalance is under way,
        revoked otherwise; the assignment is emptied.
        """
        # 1. Anything to give up?
        if not self._has_auto_assigned_partitions() or not self.assignment:
            return
        partitions = set(self.assignment)
        self.assignment = set()
        # 2. Lost or revoked.
        generation = self.generation
        self._invoke_partitions_lost_or_revoked(
            partitions,
            generation.generation_id == NO_GENERATION_ID or not generation.has_member_id() or self.rebalance_in_progress())

    def _invoke_partitions_lost_or_revoked(self, partitions: set[TopicPartition], lost: bool) -> None:
        """Mirrors ConsumerCoordinator#invokePartitionsLost / #invokePartitionsRevoked: the lost
        callback (the revoke one when none is set) or the revoke callback, logged as such."""
        if lost:
            self._log.info("partitions_lost", partitions=sorted(str(tp) for tp in partitions))
            callback = self.on_partitions_lost if self.on_partitions_lost is not None else self.on_partitions_revoked
        else:
            self._log.info("partitions_revoked", partitions=sorted(str(tp) for tp in partitions))
            callback = self.on_partitions_revoked
        if callback is not None:
            callback(partitions)

    def maybe_leave_group_nowait(self, reason: str = "the consumer is being closed") -> None:
        """AbstractCoordinator#maybeLeaveGroup; the consumer's view of its assignment empties too."""
        super().maybe_leave_group_nowait(reason)
        self.assignment = set()

    # -- the KafkaConsumer side -----------------------------------------------------------------------

    @classmethod
    def for_consumer(cls, consumer: Any, group_id: str, *, session_timeout_ms: int, heartbeat_interval_ms: int,
                     max_poll_interval_ms: int, partition_assignment_strategy: Iterable[str],
                     group_instance_id: str | None = None, auto_commit_enabled: bool = False,
                     auto_commit_interval_ms: int = 5000) -> "ConsumerCoordinator":
        """The coordinator KafkaConsumer's constructor builds when ``group.id`` is set.

        Revoked partitions leave the consumer's assignment (and their buffered records);
        assigned ones join it without positions, to be filled from the committed offsets.
        """
        if heartbeat_interval_ms >= session_timeout_ms:
            raise ConfigException("heartbeat.interval.ms", heartbeat_interval_ms,
                                  "Heartbeat must be set lower than the session timeout")

        def revoked(partitions: set[TopicPartition]) -> None:
            consumer.assign(sorted(consumer.assignment() - partitions))

        def assigned(partitions: set[TopicPartition]) -> None:
            consumer.assign(sorted(partitions))

        return cls(consumer.client, consumer.metadata, group_id, time=consumer.time,
                   session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=max_poll_interval_ms,
                   heartbeat_interval_ms=heartbeat_interval_ms, retry_backoff_ms=consumer.retry_backoff_ms,
                   request_timeout_ms=consumer.request_timeout_ms, assignors=partition_assignment_strategy,
                   on_partitions_revoked=revoked, on_partitions_assigned=assigned, group_instance_id=group_instance_id,
                   on_partitions_lost=revoked, auto_commit_enabled=auto_commit_enabled,
                   auto_commit_interval_ms=auto_commit_interval_ms, subscriptions=consumer.subscriptions)

    async def poll_for_consumer(self, consumer: Any) -> None:
        """Mirrors the group part of KafkaConsumer#updateAssignmentMetadataIfNeeded.

        0. Pending commitAsync calls go out and their callbacks run (ConsumerCoordinator#poll
        starts with invokeCompletedOffsetCommitCallbacks), for a manually assigned consumer too;
        1. ConsumerCoordinator#poll (coordinator, membership, heartbeat, auto-commit; a manually
        assigned consumer only auto-commits); 2. positions of newly assigned partitions from the
        committed offsets (refreshCommittedOffsetsIfNeeded); partitions with no commit are left to
        ``auto_offset_reset``.
        """
        # 0. commitAsync calls.
        await self._send_pending_async_commits()
        # 1. The coordinator's poll.
        await self.poll(consumer.default_api_timeout_ms)
        # 2. Committed offsets of a group-assigned member's new partitions.
        if self._has_auto_assigned_partitions():
            await self.refresh_committed_offsets_if_needed(consumer)

    @staticmethod
    def consumed_offsets(consumer: Any) -> dict[TopicPartition, OffsetAndMetadata]:
        """SubscriptionState#allConsumed (``consumed_offsets_of``) for ``consumer``'s subscriptions."""
        return ConsumerCoordinator.consumed_offsets_of(consumer.subscriptions)

    @staticmethod
    def consumed_offsets_of(subscriptions: Any) -> dict[TopicPartition, OffsetAndMetadata]:
        """Mirrors SubscriptionState#allConsumed: the position of every assigned partition in a valid
        (FETCHING) state; one awaiting a reset or a validation is left out."""
        out = {}
        for tp in sorted(subscriptions.assigned_partitions()):
            state = subscriptions.assigned_state(tp)
            if state.has_valid_position():
                out[tp] = OffsetAndMetadata(state.position.offset, state.position.offset_epoch)
        return out
