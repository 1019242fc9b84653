"""The consumer's side of group membership: find the coordinator, join, sync, heartbeat, commit.

Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator and ConsumerCoordinator
(Kafka 3.x, the classic protocol with the EAGER rebalance protocol), using ConsumerProtocol
(consumer_protocol.py) and the range / round-robin assignors (assignors.py), with
CommitFailedException (the Heartbeat timer is a deadline kept here).

Life of a member: FindCoordinator (any broker) → JoinGroup (first without a member id: the
coordinator hands one out with MEMBER_ID_REQUIRED, KIP-394) → if leader, run the assignor over
every member's subscription → SyncGroup (the leader sends the assignment, followers an empty
one) → the assignment arrives → heartbeats every ``heartbeat_interval_ms``. Before rejoining,
every owned partition is revoked (EAGER), so after a rebalance positions come from the
committed offsets.

The member's state follows AbstractCoordinator.MemberState (UNJOINED → PREPARING_REBALANCE when
the JoinGroup goes out → COMPLETING_REBALANCE when it is answered → STABLE after the SyncGroup);
a subscribed member commits only when STABLE. A JoinGroup and its SyncGroup are one pending
operation: a poll that runs out while either waits resumes it next time.

Errors that send the member back: REBALANCE_IN_PROGRESS (rejoin with the same member id),
UNKNOWN_MEMBER_ID (reset the generation and member id, rejoin), ILLEGAL_GENERATION (reset the
generation, keep the member id, rejoin) — answers about an older generation are ignored; partitions
owned when the generation was reset are *lost* rather than revoked; NOT_COORDINATOR /
COORDINATOR_NOT_AVAILABLE or a lost connection (find the coordinator again; a parked JoinGroup or
SyncGroup is retried there), COORDINATOR_LOAD_IN_PROGRESS (retry after ``retry_backoff_ms``).

There is no heartbeat thread: like the rest of this in-process consumer, network work happens
inside ``poll`` (and the blocking calls), so a member must be polled at least every session
timeout. Static membership (group.instance.id, KIP-345) is modelled. Not modelled: the
COOPERATIVE protocol, commitAsync and auto-commit, exponential retry backoff (KIP-580), metadata-triggered
rejoins (a leader does not notice new partitions of subscribed topics), max.poll.interval.ms.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The assignors and ConsumerProtocol live in their own modules (re-exported here).
from kafka_ref.clients.assignors import ASSIGNORS, RangeAssignor, RoundRobinAssignor  # noqa: F401
from kafka_ref.clients.client_metadata import Metadata, NetworkClient, client_logger
from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol, Subscription  # noqa: F401
from kafka_ref.clients.subscription_state import FetchPosition
from kafka_ref.common.errors import (
    ConfigException,
    Errors,
    KafkaException,
    NetworkException,
    RebalanceInProgressException,
    RetriableException,
    TimeoutException,
)
from kafka_ref.common.requests.find_coordinator import CoordinatorType, FindCoordinatorRequest
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, MemberIdentity
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.requests.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition

PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE
NO_GENERATION_ID = -1
UNKNOWN_MEMBER_ID = ""


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
class Generation:
    """Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator.Generation."""

    generation_id: int = NO_GENERATION_ID
    member_id: str = UNKNOWN_MEMBER_ID
    protocol_name: str | None = None

    def has_member_id(self) -> bool:
        return self.member_id != UNKNOWN_MEMBER_ID


NO_GENERATION = Generation()


class MemberState(enum.Enum):
    """Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator.MemberState."""

    UNJOINED = "UNJOINED"  # not in a group: before the first join, or after a reset / leave
    PREPARING_REBALANCE = "PREPARING_REBALANCE"  # JoinGroup sent, no answer yet
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"  # JoinGroup answered, SyncGroup pending
    STABLE = "STABLE"  # SyncGroup answered: a member of a stable generation


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """Mirrors org.apache.kafka.clients.consumer.OffsetAndMetadata: what a consumer commits."""

    offset: int
    leader_epoch: int | None = None
    metadata: str = ""


class ConsumerCoordinator:
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerCoordinator (with AbstractCoordinator).

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
    ) -> None:
        if not group_id:
            raise Errors.INVALID_GROUP_ID.exception("The configured group.id should not be empty")
        if group_instance_id is not None:
            JoinGroupRequest.validate_group_instance_id(group_instance_id)
        self.client = client
        self.metadata = metadata
        self.group_id = group_id
        # group.instance.id: a static member (KIP-345) keeps its assignment across restarts within
        # the session timeout and does not leave the group when it closes.
        self.group_instance_id = group_instance_id
        self.time = time or client.time
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        unknown = [a for a in assignors if a not in ASSIGNORS]
        if unknown:
            raise KafkaException(f"Unknown partition assignment strategy: {unknown}")
        self.assignors = [ASSIGNORS[a]() for a in assignors]
        self.on_partitions_revoked = on_partitions_revoked
        self.on_partitions_assigned = on_partitions_assigned
        # ConsumerRebalanceListener#onPartitionsLost: by default the same as a revocation.
        self.on_partitions_lost = on_partitions_lost
        self.coordinator: int | None = None
        self.generation = NO_GENERATION
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self.subscription: tuple[str, ...] = ()
        self.assignment: set[TopicPartition] = set()
        self.next_heartbeat_ms = 0
        self.rebalances = 0
        self._pending: dict[str, Any] = {}
        # The generation each pending resumable request went out with (its handler's sentGeneration).
        self._sent_generations: dict[str, Generation] = {}
        self._heartbeat_generation = NO_GENERATION
        self._log = client_logger(client_id=client.client_id, group_id=group_id)

    # -- subscription --------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """Mirrors KafkaConsumer#subscribe's effect on the coordinator: a changed subscription means a rejoin."""
        topics = tuple(sorted(set(topics)))
        if topics != self.subscription:
            self.subscription = topics
            self.metadata.add_topics(topics)
            self.request_rejoin("subscription changed")

    def request_rejoin(self, reason: str) -> None:
        """Mirrors AbstractCoordinator#requestRejoin."""
        if not self.rejoin_needed:
            self._log.info("rejoin_requested", reason=reason)
        self.rejoin_needed = True

    # -- coordinator discovery -------------------------------------------------------------------

    def mark_coordinator_unknown(self, reason: str) -> None:
        """Mirrors AbstractCoordinator#markCoordinatorUnknown: the generation is kept."""
        if self.coordinator is not None:
            self._log.info("coordinator_marked_unknown", coordinator=self.coordinator, reason=reason)
        self.coordinator = None
        self._pending.pop("heartbeat", None)

    async def ensure_coordinator_ready(self, deadline_ms: int) -> bool:
        """Mirrors AbstractCoordinator#ensureCoordinatorReady: FindCoordinator until one answers or the deadline."""
        # 0. A known coordinator we cannot connect to (reconnect backoff) is given up first.
        if self.coordinator is not None and self.client.is_unavailable(self.coordinator):
            self.mark_coordinator_unknown("coordinator unavailable")
            if not await self._backoff(deadline_ms):
                return False
        while self.coordinator is None:
            # 1. FindCoordinator to the least-loaded broker (AbstractCoordinator#lookupCoordinator);
            #    no broker available is a retriable failure like a lost connection.
            node = self.client.least_loaded_node()
            if node is not None:
                try:
                    response = await self.client.send(node, FindCoordinatorRequest(
                        key_type=CoordinatorType.GROUP, coordinator_keys=(self.group_id,)))
                    result = response.coordinator(self.group_id)
                    error = Errors.NONE if result is None else Errors.for_code(result.error_code)
                    if result is not None and error is Errors.NONE:
                        self.coordinator = result.node_id
                        self._log.info("coordinator_discovered", coordinator=result.node_id)
                        return True
                    if error is Errors.GROUP_AUTHORIZATION_FAILED:
                        error.maybe_raise(f"Not authorized to access group: {self.group_id}")
                    # A non-retriable error is fatal (the future is not retriable).
                    if error is not Errors.NONE and not isinstance(error.exception(), RetriableException):
                        error.maybe_raise()
                except (NetworkException, TimeoutException):
                    pass
            # 2. Retriable failure: back off, then refresh metadata before looking again.
            if not await self._backoff(deadline_ms):
                return False
            await self.client.await_metadata_update(deadline_ms)
        return True

    async def _backoff(self, deadline_ms: int) -> bool:
        """Sleep retry_backoff_ms unless that passes the deadline; False when out of time."""
        now = self.time.milliseconds()
        if now >= deadline_ms:
            return False
        await self.time.sleep(min(self.retry_backoff_ms, deadline_ms - now))
        return True

    async def _send_to_coordinator(self, request: object, timeout_ms: float | None = None,
                                   resumable: str | None = None) -> object | None:
        """Send to the coordinator; a lost connection or timeout marks it unknown and returns None.

        A ``resumable`` request (JoinGroup, SyncGroup: they may wait at the coordinator for a
        long time) survives a cancelled wait, e.g. the end of a short ``poll``: the next call
        waits for the same request instead of sending another (Kafka's pending joinFuture).
        """
        node = self.coordinator
        if node is None:
            return None
        envelope = self._pending.get(resumable) if resumable is not None else None
        if envelope is None or envelope.dst != node:
            envelope = self.client.post(node, request)
            if resumable is not None:
                self._pending[resumable] = envelope
                self._sent_generations[resumable] = self.generation
        try:
            response = await self.client.wait(envelope, timeout_ms)
        except (NetworkException, TimeoutException) as exc:
            self._pending.pop(resumable, None)
            self.mark_coordinator_unknown(f"request {type(request).__name__} failed: {exc!r}")
            return None
        self._pending.pop(resumable, None)
        return response

    # -- the poll loop -----------------------------------------------------------------------------

    async def poll(self, timeout_ms: float) -> bool:
        """Mirrors ConsumerCoordinator#poll: coordinator known, group joined, heartbeat sent when due.

        True when the member is in a stable generation within the timeout.
        """
        deadline = self.time.milliseconds() + int(timeout_ms)
        if not self.subscription:
            return False
        # 1. A heartbeat is due even while everything is fine.
        await self.maybe_heartbeat()
        # 2. The coordinator, then membership.
        if self.coordinator is None and not await self.ensure_coordinator_ready(deadline):
            return False
        if self.rejoin_needed:
            return await self.ensure_active_group(deadline)
        return True

    async def maybe_heartbeat(self) -> None:
        """Mirrors AbstractCoordinator.HeartbeatThread's loop body (run from poll here).

        A heartbeat whose answer a short poll did not wait for is waited for next time.
        """
        now = self.time.milliseconds()
        if self.coordinator is None or self.rejoin_needed or not self.generation.has_member_id():
            return
        if "heartbeat" not in self._pending:
            if now < self.next_heartbeat_ms:
                return
            self.next_heartbeat_ms = now + self.heartbeat_interval_ms
            self._heartbeat_generation = self.generation
        generation = self._heartbeat_generation
        response = await self._send_to_coordinator(HeartbeatRequest(
            group_id=self.group_id, generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id), resumable="heartbeat")
        if response is None:
            self.next_heartbeat_ms = self.time.milliseconds() + self.retry_backoff_ms
            return
        self._handle_heartbeat_error(Errors.for_code(response.error_code), generation)

    def _handle_heartbeat_error(self, error: Errors, generation: Generation) -> None:
        """Mirrors AbstractCoordinator.HeartbeatResponseHandler#handle."""
        if error is Errors.NONE:
            return
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"heartbeat answered {error.name}")
        elif error is Errors.REBALANCE_IN_PROGRESS:
            self.request_rejoin("group is rebalancing (heartbeat)")
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            # 1. Only an answer about the current generation resets it (ILLEGAL_GENERATION keeps
            #    the member id, which is still valid); a stale one is ignored.
            if generation == self.generation:
                self.reset_generation_on_response_error("Heartbeat", error, error is not Errors.ILLEGAL_GENERATION)
                # 2. A fenced static member cannot go on (FencedInstanceIdException).
                if error is Errors.FENCED_INSTANCE_ID:
                    error.maybe_raise()
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        else:
            raise KafkaException(f"Unexpected error in heartbeat response: {error.message}")

    def reset_generation_on_response_error(self, api: str, error: Errors, should_reset_member_id: bool = True) -> None:
        """Mirrors AbstractCoordinator#resetStateOnResponseError (resetStateAndRejoin): forget the generation, rejoin.

        The member id goes too unless ``should_reset_member_id`` is False (ILLEGAL_GENERATION:
        the member id is still valid, and rejoining with it spares the coordinator waiting out
        the old member's rebalance timeout).
        """
        self._log.info("generation_reset", api=api, error=error.name, generation_id=self.generation.generation_id)
        # 1. resetStateAndGeneration: unjoined, no generation; the member id kept or not.
        self.state = MemberState.UNJOINED
        if should_reset_member_id:
            self.generation = NO_GENERATION
        else:
            self.generation = Generation(NO_GENERATION_ID, self.generation.member_id, None)
        # 2. requestRejoin.
        self.request_rejoin(f"encountered {error.name} from {api} response")

    # -- joining -------------------------------------------------------------------------------------

    async def ensure_active_group(self, deadline_ms: int) -> bool:
        """Mirrors AbstractCoordinator#ensureActiveGroup / joinGroupIfNeeded: rejoin until stable or out of time."""
        while self.rejoin_needed:
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline_ms):
                return False
            # 1. EAGER: give everything up before joining (onJoinPrepare).
            self._on_join_prepare()
            # 2. Join and sync; an error sends us round the loop (maybe after a backoff).
            retry_now = await self._join_group()
            if self.rejoin_needed and not retry_now and not await self._backoff(deadline_ms):
                return False
            if self.rejoin_needed and self.time.milliseconds() >= deadline_ms:
                return False
        return True

    def _on_join_prepare(self) -> None:
        """Mirrors ConsumerCoordinator#onJoinPrepare (EAGER, no auto-commit).

        1. A generation or member id that was reset (by an error answer) means the owned
        partitions may already be someone else's: they are *lost* (onPartitionsLost);
        2. otherwise EAGER revokes every owned partition (onPartitionsRevoked).
        """
        if not self.assignment:
            return
        partitions = set(self.assignment)
        self.assignment = set()
        # 1. Lost: the generation or member id was reset.
        # 2. EAGER otherwise: revoke everything.
        self._invoke_partitions_lost_or_revoked(
            partitions, self.generation.generation_id == NO_GENERATION_ID or not self.generation.has_member_id())

    def _join_protocols(self) -> tuple[JoinGroupRequestProtocol, ...]:
        """Mirrors ConsumerCoordinator#metadata: one protocol per assignor, all with this subscription."""
        metadata = ConsumerProtocol.serialize_subscription(Subscription(self.subscription))
        return tuple(JoinGroupRequestProtocol(name=a.name, metadata=metadata) for a in self.assignors)

    async def _join_group(self) -> bool:
        """Mirrors AbstractCoordinator#sendJoinGroupRequest and JoinGroupResponseHandler.

        Returns True when the next attempt should go at once (MEMBER_ID_REQUIRED).
        """
        # 0. A SyncGroup of this rebalance still waiting at the coordinator (a short poll ended
        #    meanwhile) is waited for, not replaced by a new JoinGroup: Kafka's joinFuture spans
        #    both requests.
        pending_sync = self._pending.get("sync")
        if pending_sync is not None:
            if pending_sync.dst == self.coordinator:
                await self._sync_group({})
                return False
            self._pending.pop("sync", None)
        sent_generation = self._sent_generations["join"] if "join" in self._pending else self.generation
        request = JoinGroupRequest(
            group_id=self.group_id, session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms, member_id=self.generation.member_id,
            group_instance_id=self.group_instance_id, protocol_type=PROTOCOL_TYPE, protocols=self._join_protocols(),
            reason="rebalance")
        # The JoinGroup may wait out a whole rebalance timeout at the coordinator.
        timeout = max(self.request_timeout_ms, self.rebalance_timeout_ms + 5000)
        self.state = MemberState.PREPARING_REBALANCE  # (initiateJoinGroup)
        response = await self._send_to_coordinator(request, timeout, resumable="join")
        if response is None:
            return False
        assert isinstance(response, JoinGroupResponse)
        error = Errors.for_code(response.error_code)
        # 1. Success, unless the coordinator speaks of another protocol type.
        if error is Errors.NONE and self._is_protocol_type_inconsistent(response.protocol_type):
            Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
        if error is Errors.NONE:
            self.state = MemberState.COMPLETING_REBALANCE
            self.generation = Generation(response.generation_id, response.member_id, response.protocol_name)
            self._log.info("joined_group", generation_id=response.generation_id, member_id=response.member_id,
                           leader=response.leader, protocol=response.protocol_name)
            if response.is_leader():
                assignment = await self._on_join_leader(response)
            else:
                assignment = {}
            await self._sync_group(assignment)
            return False
        if error is Errors.MEMBER_ID_REQUIRED:
            self.generation = Generation(NO_GENERATION_ID, response.member_id, None)
            return True
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            return False
        # 2. UNKNOWN_MEMBER_ID: forget the member id (if the generation did not move) and rejoin at once.
        if error is Errors.UNKNOWN_MEMBER_ID:
            if sent_generation == self.generation:
                self.reset_generation_on_response_error("JoinGroup", error)
            return True
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"JoinGroup answered {error.name}")
            return False
        if error is Errors.REBALANCE_IN_PROGRESS:
            return True
        # 3. Fatal errors surface with their own exception; anything else is unexpected.
        if error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        if error in (Errors.FENCED_INSTANCE_ID, Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT,
                     Errors.INVALID_GROUP_ID, Errors.GROUP_MAX_SIZE_REACHED, Errors.UNSUPPORTED_VERSION):
            error.maybe_raise()
        raise KafkaException(f"Unexpected error in join group response: {error.message}")

    def _is_protocol_type_inconsistent(self, protocol_type: str | None) -> bool:
        """Mirrors AbstractCoordinator#isProtocolTypeInconsistent (an absent type is not checked)."""
        return protocol_type is not None and protocol_type != PROTOCOL_TYPE

    async def _on_join_leader(self, response: JoinGroupResponse) -> dict[str, bytes]:
        """Mirrors ConsumerCoordinator#onLeaderElected: run the chosen assignor over every member's subscription."""
        subscriptions = {m.member_id: ConsumerProtocol.deserialize_subscription(m.metadata) for m in response.members}
        topics = {t for s in subscriptions.values() for t in s.topics}
        # 1. The leader needs partition counts for every topic anyone subscribes to.
        self.metadata.add_topics(topics)
        snapshot = self.metadata.fetch()
        if any(snapshot.partition_count(t) is None for t in topics):
            self.metadata.request_update()
            await self.client.maybe_update_metadata()
            snapshot = self.metadata.fetch()
        partitions_per_topic = {t: snapshot.partition_count(t) or 0 for t in topics}
        # 2. Assign with the protocol the coordinator chose.
        assignor = next(a for a in self.assignors if a.name == response.protocol_name)
        assignment = assignor.assign(partitions_per_topic, subscriptions)
        self._log.info("assignment_computed", assignor=assignor.name, generation_id=response.generation_id,
                       assignment={m: [str(tp) for tp in parts] for m, parts in sorted(assignment.items())})
        return {m: ConsumerProtocol.serialize_assignment(Assignment(tuple(parts))) for m, parts in assignment.items()}

    async def _sync_group(self, assignment: Mapping[str, bytes]) -> None:
        """Mirrors AbstractCoordinator#sendSyncGroupRequest and SyncGroupResponseHandler.

        A SyncGroup still pending from an earlier (cancelled) wait is waited for again; its
        answer is judged against the generation it was sent with.
        """
        generation = self._sent_generations["sync"] if "sync" in self._pending else self.generation
        request = SyncGroupRequest(
            group_id=self.group_id, generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id, protocol_type=PROTOCOL_TYPE, protocol_name=generation.protocol_name,
            assignments=tuple(SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignment.items()))
        response = await self._send_to_coordinator(request, max(self.request_timeout_ms, self.rebalance_timeout_ms + 5000),
                                                   resumable="sync")
        if response is None:
            return
        error = Errors.for_code(response.error_code)
        if error is Errors.NONE:
            # 1. Success, unless the coordinator names another protocol type or (for this
            #    generation) another protocol than the JoinGroup chose.
            if self._is_protocol_type_inconsistent(response.protocol_type):
                Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
            if self.generation.generation_id == NO_GENERATION_ID and self.generation.protocol_name is None:
                # The generation was reset meanwhile (hasGenerationReset): retry at once, as ILLEGAL_GENERATION.
                self.request_rejoin("generation reset before the SyncGroup answer")
                return
            if response.protocol_name is not None and response.protocol_name != generation.protocol_name:
                Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
            self._on_join_complete(generation, ConsumerProtocol.deserialize_assignment(response.assignment))
        elif error is Errors.REBALANCE_IN_PROGRESS:
            self.request_rejoin("group is rebalancing (SyncGroup)")
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            # 2. Reset (ILLEGAL_GENERATION keeps the member id) if the generation did not move.
            if generation == self.generation:
                self.reset_generation_on_response_error("SyncGroup", error, error is not Errors.ILLEGAL_GENERATION)
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"SyncGroup answered {error.name}")
        elif error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        elif error is Errors.FENCED_INSTANCE_ID:
            error.maybe_raise()
        else:
            raise KafkaException(f"Unexpected error from SyncGroup: {error.message}")

    def _on_join_complete(self, generation: Generation, assignment: Assignment) -> None:
        """Mirrors ConsumerCoordinator#onJoinComplete: take the assignment, start heartbeating."""
        self.state = MemberState.STABLE
        self.rejoin_needed = False
        self.rebalances += 1
        self._pending.pop("heartbeat", None)
        self.assignment = set(assignment.partitions)
        self.next_heartbeat_ms = self.time.milliseconds() + self.heartbeat_interval_ms
        self._log.info("partitions_assigned", generation_id=generation.generation_id,
                       partitions=sorted(str(tp) for tp in self.assignment))
        if self.on_partitions_assigned is not None:
            self.on_partitions_assigned(set(self.assignment))

    # -- offsets ---------------------------------------------------------------------------------------

    async def commit_offsets_sync(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], timeout_ms: float) -> None:
        """Mirrors ConsumerCoordinator#commitOffsetsSync: retry retriable errors until the timeout.

        UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION raise CommitFailedException (and reset the
        generation); REBALANCE_IN_PROGRESS raises RebalanceInProgressException (and rejoins).
        """
        if not offsets:
            return
        deadline = self.time.milliseconds() + int(timeout_ms)
        while True:
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before successfully committing offsets {dict(offsets)}")
            generation = self._generation_if_stable()
            # (The instance id goes only with a group-assigned member's generation: a manually
            #  assigned consumer commits as a "simple" consumer.)
            request = OffsetCommitRequest.build(
                self.group_id,
                {tp: (o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata) for tp, o in offsets.items()},
                generation_id=generation.generation_id, member_id=generation.member_id,
                group_instance_id=self.group_instance_id if self.subscription else None)
            response = await self._send_to_coordinator(request)
            if response is not None and self._handle_commit_response(response.partition_errors(), generation):
                self._log.info("offsets_committed", offsets={str(tp): o.offset for tp, o in offsets.items()})
                return
            if not await self._backoff(deadline):
                raise TimeoutException(f"Timeout of {int(timeout_ms)}ms expired before successfully committing offsets {dict(offsets)}")

    def _generation_if_stable(self) -> Generation:
        """The generation a commit carries (ConsumerCoordinator#sendOffsetCommitRequest's choice).

        Without a subscription (manual assignment) commits go as a "simple" consumer
        (generation -1). With one, the member must be STABLE (AbstractCoordinator#generationIfStable);
        otherwise the commit fails before it is sent: RebalanceInProgressException while a
        JoinGroup / SyncGroup is under way (#rebalanceInProgress), CommitFailedException when
        the member is not in the group at all.
        """
        if not self.subscription:
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

    def rebalance_in_progress(self) -> bool:
        """Mirrors AbstractCoordinator#rebalanceInProgress."""
        return self.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)

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

    def on_leave_prepare(self) -> None:
        """Mirrors ConsumerCoordinator#onLeavePrepare: give the partitions up before leaving the group.

        1. Only a group-assigned (subscribed) member with partitions has anything to give up;
        2. they are lost if the generation or member id was reset or a rebalance is under way,
        revoked otherwise; the assignment is emptied.
        """
        # 1. Anything to give up?
        if not self.subscription or not self.assignment:
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
        """Mirrors AbstractCoordinator#maybeLeaveGroup: LeaveGroup if a dynamic member (sent, not
        awaited: close is synchronous). A static member stays until its session times out, so a
        restart within it rejoins without a rebalance (KIP-345)."""
        generation = self.generation
        if self.coordinator is not None and generation.has_member_id() and self.group_instance_id is None:
            self._log.info("leaving_group", member_id=generation.member_id, reason=reason)
            self.client.post(self.coordinator, LeaveGroupRequest(
                group_id=self.group_id, members=(MemberIdentity(member_id=generation.member_id, reason=reason),)))
        # (resetGenerationOnLeaveGroup)
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION
        self.assignment = set()
        self.request_rejoin(reason)

    # -- the KafkaConsumer side -----------------------------------------------------------------------

    @classmethod
    def for_consumer(cls, consumer: Any, group_id: str, *, session_timeout_ms: int, heartbeat_interval_ms: int,
                     max_poll_interval_ms: int, partition_assignment_strategy: Iterable[str],
                     group_instance_id: str | None = None) -> "ConsumerCoordinator":
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
                   on_partitions_lost=revoked)

    async def poll_for_consumer(self, consumer: Any) -> None:
        """Mirrors the group part of KafkaConsumer#updateAssignmentMetadataIfNeeded.

        1. ConsumerCoordinator#poll (coordinator, membership, heartbeat); 2. positions of
        newly assigned partitions from the committed offsets (refreshCommittedOffsetsIfNeeded);
        partitions with no commit are left to ``auto_offset_reset``.
        """
        if not self.subscription:
            return
        await self.poll(consumer.default_api_timeout_ms)
        await self.refresh_committed_offsets_if_needed(consumer)

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

    @staticmethod
    def consumed_offsets(consumer: Any) -> dict[TopicPartition, OffsetAndMetadata]:
        """Mirrors SubscriptionState#allConsumed: the position of every assigned partition in a valid
        (FETCHING) state; one awaiting a reset or a validation is left out."""
        out = {}
        for tp in sorted(consumer.assignment()):
            state = consumer.subscriptions.assigned_state(tp)
            if state.has_valid_position():
                out[tp] = OffsetAndMetadata(state.position.offset, state.position.offset_epoch)
        return out
