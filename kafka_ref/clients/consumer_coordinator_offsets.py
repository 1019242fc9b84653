"""The offset half of the consumer's coordinator: commits (sync, async, auto) and committed-offset fetches.

Part of org.apache.kafka.clients.consumer.internals.ConsumerCoordinator (Kafka 3.x, the classic
protocol), kept apart from consumer_coordinator.py, whose ConsumerCoordinator inherits
``ConsumerCoordinatorOffsets``: commitOffsetsSync / commitOffsetsAsync and their response handling,
the auto-commit (#maybeAutoCommitOffsetsAsync, #maybeAutoCommitOffsetsSync), fetchCommittedOffsets
and initWithCommittedOffsetsIfNeeded, with the values they pass around (OffsetAndMetadata,
CommitFailedException, the async commit's future and completion). The mixin holds no state of its
own: it works on the ConsumerCoordinator's (its client, coordinator, generation, subscriptions,
pending and completed async commits); consumer_coordinator.py's module docstring describes the
behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_ref.clients.abstract_coordinator import NO_GENERATION, Generation, MemberState
from kafka_ref.clients.consumer import OffsetCommitCallback, RetriableCommitFailedException
from kafka_ref.clients.subscription_state import FetchPosition
from kafka_ref.common.errors import (
    Errors,
    FencedInstanceIdException,
    KafkaException,
    RebalanceInProgressException,
    RetriableException,
    TimeoutException,
)
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import DisconnectException


class CommitFailedException(KafkaException):
    """Mirrors org.apache.kafka.clients.consumer.CommitFailedException.

    The commit cannot complete because the group rebalanced and gave the partitions to
    another member (the coordinator answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION).
    """

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (
            "Commit cannot be completed since the group has already rebalanced and assigned the partitions to "
            "another member. The consumer should rejoin the group with a new poll."))


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """Mirrors org.apache.kafka.clients.consumer.OffsetAndMetadata: what a consumer commits."""

    offset: int
    leader_epoch: int | None = None
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class OffsetCommitCompletion:
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.OffsetCommitCompletion.

    A finished commitAsync whose callback has not run yet.
    """

    callback: OffsetCommitCallback | None
    offsets: dict[TopicPartition, OffsetAndMetadata]
    exception: BaseException | None

    def invoke(self) -> None:
        """Mirrors ConsumerCoordinator.OffsetCommitCompletion#invoke (no callback: nothing to tell)."""
        if self.callback is not None:
            self.callback(self.offsets, self.exception)


@dataclass(slots=True)
class AsyncCommitFuture:
    """The RequestFuture ConsumerCoordinator#commitOffsetsAsync returns, as onJoinPrepare reads it.

    ``done`` once the commit was answered (or could not be sent); ``exception`` is the error it
    failed with, as the future holds it (not wrapped in RetriableCommitFailedException).
    """

    done: bool = False
    exception: BaseException | None = None

    def failed(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.RequestFuture#failed."""
        return self.done and self.exception is not None

    def is_retriable(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.RequestFuture#isRetriable."""
        return isinstance(self.exception, RetriableException)


class ConsumerCoordinatorOffsets:
    """The offset commit and fetch methods of org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.

    A mixin of ConsumerCoordinator (consumer_coordinator.py), which provides the state and the
    AbstractCoordinator methods these use.
    """

    # -- auto-commit -----------------------------------------------------------------------------------

    def _all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """SubscriptionState#allConsumed (``consumed_offsets_of``) on the consumer's subscriptions (nothing without one)."""
        if self.subscriptions is None:
            return {}
        return self.consumed_offsets_of(self.subscriptions)

    def maybe_auto_commit_offsets_async(self, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#maybeAutoCommitOffsetsAsync(long).

        1. Nothing without enable.auto.commit; 2. nothing before the auto-commit timer expires;
        3. otherwise the timer restarts with auto.commit.interval.ms and the consumed positions are
        committed asynchronously (#autoCommitOffsetsAsync). True when a commit was queued: it goes
        out at the caller's next ``_send_pending_async_commits`` (poll sends it at once).
        """
        # 1. Disabled.
        if not self.auto_commit_enabled:
            return False
        # 2. Not yet due (Timer#update(now), #isExpired).
        if now < self.next_auto_commit_deadline_ms:
            return False
        # 3. Due: next interval from now (Timer#reset), then the commit.
        self.next_auto_commit_deadline_ms = now + self.auto_commit_interval_ms
        self.auto_commit_offsets_async()
        return True

    def auto_commit_offsets_async(self) -> AsyncCommitFuture:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#autoCommitOffsetsAsync.

        1. The consumed positions of every assigned partition (SubscriptionState#allConsumed);
        2. committed with commitOffsetsAsync, whose callback only logs, except that a retriable
        failure (RetriableCommitFailedException) brings the next auto-commit forward to
        retry.backoff.ms after it is heard of (#nextAutoCommitTimer#updateAndReset).
        """
        # 1. What to commit.
        offsets = self._all_consumed()
        self._log.debug("auto_commit_sent", offsets={str(tp): o.offset for tp, o in offsets.items()})

        def on_complete(committed: dict[TopicPartition, Any], exception: BaseException | None) -> None:
            if isinstance(exception, RetriableCommitFailedException):
                self.next_auto_commit_deadline_ms = self.time.milliseconds() + self.retry_backoff_ms
                self._log.debug("auto_commit_failed_retriable", error=repr(exception.__cause__))
            elif exception is not None:
                self._log.warning("auto_commit_failed", error=repr(exception))
            else:
                self._log.debug("auto_commit_completed", offsets={str(tp): o.offset for tp, o in committed.items()})

        # 2. The asynchronous commit.
        return self.commit_offsets_async(offsets, on_complete)

    async def maybe_auto_commit_offsets_sync(self, deadline_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#maybeAutoCommitOffsetsSync(Timer).

        Used on close. 1. Nothing without enable.auto.commit; 2. the consumed positions are
        committed with commitOffsetsSync until ``deadline_ms``; 3. a commit that times out or fails
        is only logged, as an asynchronous auto-commit's failure would be.
        """
        # 1. Disabled.
        if not self.auto_commit_enabled:
            return
        # 2. The synchronous commit, bounded by the deadline.
        offsets = self._all_consumed()
        try:
            await self.commit_offsets_sync(offsets, max(deadline_ms - self.time.milliseconds(), 0))
        except TimeoutException:
            # 3. Timed out, or failed: not propagated.
            self._log.debug("auto_commit_sync_timed_out", offsets={str(tp): o.offset for tp, o in offsets.items()})
        except KafkaException as exc:
            self._log.warning("auto_commit_sync_failed", error=repr(exc))

    def _post_auto_commit(self) -> None:
        """maybeAutoCommitOffsetsSync with an expired timer (close(Duration.ZERO)): commitOffsetsSync sends
        one OffsetCommit if the coordinator is known and polls for no time, so the request goes
        out and its answer is not read; a commit that cannot be built (the member is not stable) is dropped."""
        if not self.auto_commit_enabled or self.coordinator is None or self.client.is_unavailable(self.coordinator):
            return
        offsets = self._all_consumed()
        if not offsets:
            return
        try:
            generation = self._generation_if_stable()
        except KafkaException:
            return
        self.client.post(self.coordinator, OffsetCommitRequest.build(
            self.group_id,
            {tp: (o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata) for tp, o in offsets.items()},
            generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id if self._has_auto_assigned_partitions() else None))

    # -- offsets ---------------------------------------------------------------------------------------

    async def commit_offsets_sync(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], timeout_ms: float) -> None:
        """Mirrors ConsumerCoordinator#commitOffsetsSync: retry retriable errors until the timeout.

        UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION raise CommitFailedException (and reset the
        generation); REBALANCE_IN_PROGRESS raises RebalanceInProgressException (and rejoins).
        1. Earlier commitAsync calls go out first and their callbacks run, even when ``offsets`` is
        empty (Kafka: invokeCompletedOffsetCommitCallbacks, and #invokePendingAsyncCommits for an empty
        commit), so the coordinator sees the commits in call order; a member whose async commit was
        fenced raises FencedInstanceIdException here; 2. nothing to commit: done;
        3. one OffsetCommit per attempt to a known coordinator until one succeeds.
        """
        # 1. The commitAsync calls before this one.
        await self._send_pending_async_commits()
        # 2. Nothing to commit.
        if not offsets:
            return
        # 3. Attempts until the deadline.
        deadline = self.time.milliseconds() + int(timeout_ms)
        while True:
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before successfully committing offsets {dict(offsets)}")
            if await self._send_offset_commit_request(offsets) is None:
                self._log.info("offsets_committed", offsets={str(tp): o.offset for tp, o in offsets.items()})
                return
            if not await self._backoff(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before successfully committing offsets {dict(offsets)}")

    async def _send_offset_commit_request(self, offsets: Mapping[TopicPartition, OffsetAndMetadata],
                                          resumable: str | None = None) -> RetriableException | None:
        """Mirrors ConsumerCoordinator#sendOffsetCommitRequest, answered by OffsetCommitResponseHandler.

        One OffsetCommit to the known coordinator. None when every partition committed; on a
        retriable failure the error the future would fail with (DisconnectException without an
        answer, as ConsumerNetworkClient raises for a lost connection or a timed-out request; else the
        first retriable partition error's exception); a fatal error raises. With ``resumable`` (an
        async commit) a request whose wait was cut short (the end of a short poll) is waited for
        again rather than sent twice, as Kafka's stays in flight; its answer is judged against the
        generation it went out with.
        """
        # 1. The generation a commit carries (a commit out of a stable generation fails here);
        #    a resumed request keeps the one it was sent with.
        pending = self._pending.get(resumable) if resumable is not None else None
        resumed = pending is not None and pending.dst == self.coordinator
        generation = self._async_commit_sent_generation if resumed else self._generation_if_stable()
        if resumable is not None and not resumed:
            self._async_commit_sent_generation = generation
        # 2. The request. (The instance id goes only with a group-assigned member's generation: a
        #    manually assigned consumer commits as a "simple" consumer.)
        request = OffsetCommitRequest.build(
            self.group_id,
            {tp: (o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata) for tp, o in offsets.items()},
            generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id if self._has_auto_assigned_partitions() else None)
        node = self.coordinator
        response = await self._send_to_coordinator(request, resumable=resumable)
        # 3. No answer: the connection was lost (the coordinator is marked unknown).
        if response is None:
            return DisconnectException(f"OffsetCommit to node {node} got no answer")
        # 4. The answer, per partition.
        errors = response.partition_errors()
        if self._handle_commit_response(errors, generation):
            return None
        # 5. Retriable: the error that decided it (the first one, leaving aside collected topic authorizations).
        error = next(e for e in map(Errors.for_code, errors.values())
                     if e is not Errors.NONE and e is not Errors.TOPIC_AUTHORIZATION_FAILED)
        return error.exception()

    def commit_offsets_async(self, offsets: dict[TopicPartition, OffsetAndMetadata],
                             callback: OffsetCommitCallback | None) -> AsyncCommitFuture:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#commitOffsetsAsync.

        1. Callbacks of commitAsync calls that finished run first (FencedInstanceIdException once an
        async commit was fenced: the commit is not taken); 2. the commit joins the pending async
        commits. Kafka's network thread would send it at once (after a coordinator lookup if none
        is known); kafka_ref has none, so ``_send_pending_async_commits`` sends it at the consumer's
        next poll or commitSync (an auto-commit: in the same poll), or when it closes. Returns the
        commit's future (done once answered).
        """
        # 1. Finished commits first.
        self.invoke_completed_offset_commit_callbacks()
        # 2. Pending until the next poll or commitSync.
        future = AsyncCommitFuture()
        self._pending_async_commits.append((offsets, callback, future))
        return future

    async def _send_pending_async_commits(self) -> None:
        """The part of ConsumerCoordinator#commitOffsetsAsync Kafka's network thread carries out.

        0. Callbacks of finished commits run first, as ConsumerCoordinator#poll and #commitOffsetsSync
        start (FencedInstanceIdException once an async commit was fenced, before anything is sent).
        Then the pending commits, in call order: 1. with offsets to commit and no known coordinator,
        a lookup first (#coordinatorUnknownAndUnreadyAsync, #lookupCoordinator; Kafka's is one
        FindCoordinator, here lookups are retried for up to request_timeout_ms); a failed lookup
        completes the commit with RetriableCommitFailedException wrapping its error, whatever that
        error is (the lookupCoordinator listener's onFailure); 2. otherwise one attempt
        (#doCommitOffsetsAsync; a wait cut short leaves the commit first in the queue, and the next
        call waits for the same request); 3. the commit leaves the queue and its callback runs
        (#invokeCompletedOffsetCommitCallbacks). Once a commit was fenced the rest are still sent (Kafka's
        network thread has sent them already) but no callback runs: 4. the call raises
        FencedInstanceIdException.
        """
        # 0. Finished commits, or the fence.
        self.invoke_completed_offset_commit_callbacks()
        while self._pending_async_commits:
            offsets, callback, future = self._pending_async_commits[0]
            try:
                # 1. The coordinator, looked up if unknown (an empty commit needs none).
                if offsets and self.coordinator is None and not await self.ensure_coordinator_ready(
                        self.time.milliseconds() + self.request_timeout_ms):
                    raise Errors.COORDINATOR_NOT_AVAILABLE.exception()
            except KafkaException as exc:
                future.done, future.exception = True, exc
                self._completed_offset_commits.append(
                    OffsetCommitCompletion(callback, offsets, self._retriable_commit_failure(exc)))
            else:
                # 2. One attempt.
                await self._do_commit_offsets_async(offsets, callback, future)
            # 3. Done: off the queue, callback run (unless fenced).
            self._pending_async_commits.pop(0)
            if not self._async_commit_fenced:
                self.invoke_completed_offset_commit_callbacks()
        # 4. A fenced commit ends the call.
        self.invoke_completed_offset_commit_callbacks()

    async def _do_commit_offsets_async(self, offsets: dict[TopicPartition, OffsetAndMetadata],
                                       callback: OffsetCommitCallback | None,
                                       future: AsyncCommitFuture | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#doCommitOffsetsAsync.

        1. One OffsetCommit (#sendOffsetCommitRequest; an empty commit succeeds without one);
        2. the future completes, and the completion waits for invokeCompletedOffsetCommitCallbacks
        with None, the fatal error, or RetriableCommitFailedException wrapping a retriable one;
        3. FENCED_INSTANCE_ID sets asyncCommitFenced.
        """
        exception: BaseException | None = None
        try:
            # 1. One attempt (a retriable failure fails it: commitAsync does not retry).
            failure = await self._send_offset_commit_request(offsets, resumable="async_commit") if offsets else None
            if failure is not None:
                raise failure
        except KafkaException as exc:
            exception = exc
        # 2. The future, and the completion for the callback.
        if future is not None:
            future.done, future.exception = True, exception
        if isinstance(exception, RetriableException):
            exception = self._retriable_commit_failure(exception)
        self._completed_offset_commits.append(OffsetCommitCompletion(callback, offsets, exception))
        # 3. A fenced static member: every later poll and commit raises (#asyncCommitFenced).
        if isinstance(exception, FencedInstanceIdException):
            self._async_commit_fenced = True

    @staticmethod
    def _retriable_commit_failure(exc: KafkaException) -> KafkaException:
        """``exc`` wrapped in RetriableCommitFailedException, as a commitAsync callback hears it
        (new RetriableCommitFailedException(e) in #doCommitOffsetsAsync and #commitOffsetsAsync)."""
        wrapped = RetriableCommitFailedException(f"Offset commit failed with a retriable exception. "
                                                 f"You should retry committing the latest consumed offsets. ({exc})")
        wrapped.__cause__ = exc
        return wrapped

    def invoke_completed_offset_commit_callbacks(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator#invokeCompletedOffsetCommitCallbacks.

        1. Once an async commit was fenced (asyncCommitFenced) it raises FencedInstanceIdException
        and no callback runs, the fenced commit's own neither; 2. otherwise the finished commitAsync
        calls' callbacks run, oldest first, each once.
        """
        # 1. Fenced: the static member cannot go on.
        if self._async_commit_fenced:
            raise FencedInstanceIdException(
                f"Get fenced exception for group.instance.id {self.group_instance_id or 'unset_instance_id'}, "
                f"current member.id is {self.generation.member_id}")
        # 2. Oldest first.
        while self._completed_offset_commits:
            self._completed_offset_commits.popleft().invoke()

    def _generation_if_stable(self) -> Generation:
        """The generation a commit carries (ConsumerCoordinator#sendOffsetCommitRequest's choice).

        Without a subscription (manual assignment) commits go as a "simple" consumer
        (generation -1). With one, the member must be STABLE (AbstractCoordinator#generationIfStable);
        otherwise the commit fails before it is sent: RebalanceInProgressException while a
        JoinGroup / SyncGroup is under way (#rebalanceInProgress), CommitFailedException when
        the member is not in the group at all.
        """
        if not self._has_auto_assigned_partitions():
            return NO_GENERATION
        if self.state is not MemberState.STABLE:
            if self.rebalance_in_progress():
                raise RebalanceInProgressException(
                    "Offset commit cannot be completed since the consumer is undergoing a rebalance for auto partition "
                    "assignment. You can try completing the rebalance by calling poll() and then retry the operation.")
            raise CommitFailedException(
                "Offset commit cannot be completed since the consumer is not part of an active group for auto "
                "partition assignment; it is likely that the consumer was kicked out of the group.")
        return self.generation

    def _handle_commit_response(self, errors: Mapping[TopicPartition, int], generation: Generation) -> bool:
        """Mirrors ConsumerCoordinator.OffsetCommitResponseHandler#handle; True when every partition committed.

        The first partition error decides (retriable ones return False: retry after the backoff;
        fatal ones raise), except TOPIC_AUTHORIZATION_FAILED, collected over every partition.
        """
        unauthorized_topics: set[str] = set()
        for tp, code in errors.items():
            error = Errors.for_code(code)
            if error is Errors.NONE:
                continue
            # 1. Authorization: the group at once, topics once all are seen.
            if error is Errors.GROUP_AUTHORIZATION_FAILED:
                error.maybe_raise(f"Not authorized to access group: {self.group_id}")
            elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                unauthorized_topics.add(tp.topic)
            # 2. The user's own metadata or offsets are refused.
            elif error in (Errors.OFFSET_METADATA_TOO_LARGE, Errors.INVALID_COMMIT_OFFSET_SIZE):
                error.maybe_raise()
            # 3. Retriable: as they are, or after finding the coordinator again.
            elif error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.UNKNOWN_TOPIC_OR_PARTITION):
                return False
            elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REQUEST_TIMED_OUT):
                self.mark_coordinator_unknown(f"OffsetCommit answered {error.name}")
                return False
            # 4. The group moved on: rebalance, reset, or fenced.
            elif error is Errors.REBALANCE_IN_PROGRESS:
                # Rejoin, but keep the generation: the caller may poll to finish the rebalance, then commit again.
                self.request_rejoin("offset commit failed since group is already rebalancing")
                raise RebalanceInProgressException(
                    "Offset commit cannot be completed since the consumer group is executing a rebalance at the "
                    "moment. You can try completing the rebalance by calling poll() and then retry commit again")
            elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
                # A member that already moved on to a new rebalance only hears of that rebalance;
                # otherwise the generation is reset (ILLEGAL_GENERATION keeps the member id).
                if generation != self.generation and self.state is MemberState.PREPARING_REBALANCE:
                    raise RebalanceInProgressException(
                        "Offset commit cannot be completed since the consumer member's generation is already stale, "
                        "meaning it has already participated another rebalance and got a new generation. You can try "
                        "completing the rebalance by calling poll() and then retry commit again")
                self.reset_generation_on_response_error("OffsetCommit", error, error is not Errors.ILLEGAL_GENERATION)
                raise CommitFailedException()
            elif error is Errors.FENCED_INSTANCE_ID:
                # Fatal for the generation that was sent; a member already past it sees a rebalance or a failed commit.
                if generation == self.generation:
                    error.maybe_raise()
                if self.state is MemberState.PREPARING_REBALANCE:
                    raise RebalanceInProgressException(
                        "Offset commit cannot be completed since the consumer member's old generation is fenced by its "
                        "group instance id, it is possible that this consumer has already participated another "
                        "rebalance and got a new generation")
                raise CommitFailedException()
            else:
                raise KafkaException(f"Unexpected error in commit: {error.message}")
        if unauthorized_topics:
            Errors.TOPIC_AUTHORIZATION_FAILED.maybe_raise(
                f"Not authorized to access topics: [{', '.join(sorted(unauthorized_topics))}]")
        return True

    async def fetch_committed_offsets(self, partitions: Iterable[TopicPartition],
                                      timeout_ms: float) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """Mirrors ConsumerCoordinator#fetchCommittedOffsets (require_stable, as KafkaConsumer asks).

        None for a partition without a committed offset; retries loading coordinators and
        unstable offsets until the timeout.
        """
        partitions = list(partitions)
        deadline = self.time.milliseconds() + int(timeout_ms)
        while True:
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before the committed offsets could be fetched")
            response = await self._send_to_coordinator(
                OffsetFetchRequest.for_group(self.group_id, partitions, require_stable=True))
            if response is not None:
                result = self._handle_offset_fetch(response)
                if result is not None:
                    return result
            if not await self._backoff(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before the committed offsets could be fetched")

    def _handle_offset_fetch(self, response: object) -> dict[TopicPartition, OffsetAndMetadata | None] | None:
        """Mirrors ConsumerCoordinator.OffsetFetchResponseHandler#handle; None means retry."""
        group = response.group(self.group_id)  # type: ignore[attr-defined]
        if group is None:
            return None
        # 1. Group-level errors: retry a loading coordinator, rediscover after NOT_COORDINATOR;
        #    anything else fails the fetch.
        error = Errors.for_code(group.error_code)
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            return None
        if error is Errors.NOT_COORDINATOR:
            self.mark_coordinator_unknown(f"OffsetFetch answered {error.name}")
            return None
        if error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        if error is not Errors.NONE:
            raise KafkaException(f"Unexpected error in fetch offset response: {error.message}")
        # 2. Per partition: a missing partition fails at once; unauthorized topics are collected;
        #    unstable offsets mean retry; -1 is "no committed offset".
        result: dict[TopicPartition, OffsetAndMetadata | None] = {}
        unauthorized_topics: set[str] = set()
        unstable = False
        for tp, data in group.partition_data().items():
            p_error = Errors.for_code(data.error_code)
            if p_error is Errors.UNKNOWN_TOPIC_OR_PARTITION:
                raise KafkaException(f"Topic or Partition {tp} does not exist")
            if p_error is Errors.TOPIC_AUTHORIZATION_FAILED:
                unauthorized_topics.add(tp.topic)
            elif p_error is Errors.UNSTABLE_OFFSET_COMMIT:
                unstable = True
            elif p_error is not Errors.NONE:
                raise KafkaException(f"Unexpected error in fetch offset response for partition {tp}: {p_error.message}")
            else:
                result[tp] = None if data.committed_offset < 0 else OffsetAndMetadata(
                    data.committed_offset, None if data.committed_leader_epoch < 0 else data.committed_leader_epoch,
                    data.metadata or "")
        # 3. Authorization first, then the retry for unstable offsets.
        if unauthorized_topics:
            Errors.TOPIC_AUTHORIZATION_FAILED.maybe_raise(
                f"Not authorized to access topics: [{', '.join(sorted(unauthorized_topics))}]")
        if unstable:
            return None
        return result

    async def refresh_committed_offsets_if_needed(self, consumer: Any, timeout_ms: float | None = None) -> bool:
        """Mirrors ConsumerCoordinator#initWithCommittedOffsetsIfNeeded (and refreshCommittedOffsets).

        1. The assigned partitions still initializing (no position, no reset asked); 2. their
        committed offsets, within ``timeout_ms`` (False when that runs out, as Kafka's null
        answer); 3. a committed offset becomes the position, a partition without one stays
        initializing (left to ``auto_offset_reset``).
        """
        subscriptions = consumer.subscriptions
        # 1. Initializing partitions.
        missing = [tp for tp in sorted(consumer.assignment())
                   if subscriptions.assigned_state(tp).position is None and not subscriptions.assigned_state(tp).awaiting_reset()]
        if not missing:
            return True
        # 2. Their committed offsets.
        try:
            committed = await self.fetch_committed_offsets(
                missing, consumer.default_api_timeout_ms if timeout_ms is None else timeout_ms)
        except TimeoutException:
            return False
        # 3. Positions from them (ConsumerUtils#refreshCommittedOffsets): the committed leader epoch
        #    first updates the metadata's last seen epoch, then the position carries it, so it is
        #    validated against the current leader before fetching (KIP-320) when both epochs are known.
        for tp, offset in committed.items():
            if offset is None:
                continue
            if offset.leader_epoch is not None:
                self.metadata.update_last_seen_epoch_if_newer(tp, offset.leader_epoch)
            if subscriptions.is_assigned(tp):
                subscriptions.seek_unvalidated(
                    tp, FetchPosition(offset.offset, offset.leader_epoch, self.metadata.current_leader(tp)))
                self._log.info("position_from_committed_offset", topic_partition=str(tp), offset=offset.offset)
        return True
