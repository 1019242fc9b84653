"""The group-membership half of the consumer's coordinator: discovery, join / sync, heartbeats, leave.

Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator (Kafka 3.x, the classic
group protocol): the part of the client's group membership that knows nothing of partitions or
offsets. ConsumerCoordinator (consumer_coordinator.py) extends it with the assignment, offset
commit / fetch and the rebalance callbacks, through the hooks Kafka leaves abstract
(protocolType, metadata, onJoinPrepare, onLeaderElected, onJoinComplete).

Life of a member: FindCoordinator (any broker) → JoinGroup (first without a member id: the
coordinator hands one out with MEMBER_ID_REQUIRED, KIP-394) → the leader computes the assignment
(the subclass's onLeaderElected) → SyncGroup (the leader sends the assignment, followers an empty
one) → the assignment arrives (onJoinComplete) → heartbeats every ``heartbeat_interval_ms``.

The member's state follows MemberState (UNJOINED → PREPARING_REBALANCE when the JoinGroup goes out
→ COMPLETING_REBALANCE when it is answered → STABLE after the SyncGroup). A JoinGroup and its
SyncGroup are one pending operation: a poll that runs out while either waits resumes it next time.

Errors that send the member back: REBALANCE_IN_PROGRESS (rejoin with the same member id),
UNKNOWN_MEMBER_ID (reset the generation and member id, rejoin), ILLEGAL_GENERATION (reset the
generation, keep the member id, rejoin) — answers about an older generation are ignored; from a
JoinGroup or SyncGroup these three (and MEMBER_ID_REQUIRED) send the next JoinGroup at once.
NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE or a lost connection (find the coordinator again; a
parked JoinGroup or SyncGroup is retried there) and COORDINATOR_LOAD_IN_PROGRESS retry after
``retry_backoff_ms``. Each JoinGroup carries the reason of the last rejoin request (KIP-800's
rejoinReason: "rebalance failed due to <exception>" after a failed attempt).

There is no heartbeat thread: network work happens inside the consumer's ``poll`` (and the
blocking calls), so a member must be polled at least every session timeout; the Heartbeat timer
is the deadline ``next_heartbeat_ms`` kept here. Static membership (group.instance.id, KIP-345)
is modelled. Not modelled: exponential retry backoff with jitter (KIP-580: the backoff is the
constant ``retry_backoff_ms``), the Heartbeat's session and poll timers (no client-side session
expiry, and max.poll.interval.ms does not make the member leave: without a heartbeat thread, a
member that is not polled simply stops heartbeating), and awaiting the LeaveGroup answer.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from kafka_ref.clients.client_metadata import client_logger
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.common.errors import (
    Errors,
    KafkaException,
    NetworkException,
    RetriableException,
    TimeoutException,
)
from kafka_ref.common.requests.find_coordinator import CoordinatorType, FindCoordinatorRequest
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, MemberIdentity
from kafka_ref.common.requests.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from kafka_ref.common.time import Time

NO_GENERATION_ID = -1
UNKNOWN_MEMBER_ID = ""
#: ApiKeys names, as a rejoin reason spells the API whose answer reset the generation.
_API_KEY_NAMES = {"Heartbeat": "HEARTBEAT", "JoinGroup": "JOIN_GROUP", "SyncGroup": "SYNC_GROUP",
                  "OffsetCommit": "OFFSET_COMMIT"}


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


class AbstractCoordinator(ABC):
    """Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator.

    Subclasses give the protocol type and the JoinGroup protocols, and act on the join's steps
    (``_on_join_prepare``, ``_on_join_leader``, ``_on_join_complete``).
    """

    def __init__(
        self,
        client: NetworkClient,
        group_id: str,
        *,
        time: Time | None = None,
        session_timeout_ms: int = 45000,
        rebalance_timeout_ms: int = 300000,
        heartbeat_interval_ms: int = 3000,
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 30000,
        group_instance_id: str | None = None,
    ) -> None:
        if not group_id:
            raise Errors.INVALID_GROUP_ID.exception("The configured group.id should not be empty")
        if group_instance_id is not None:
            JoinGroupRequest.validate_group_instance_id(group_instance_id)
        self.client = client
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
        self.coordinator: int | None = None
        self.generation = NO_GENERATION
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        # Whether the next rebalance still has to call onJoinPrepare (AbstractCoordinator#needsJoinPrepare):
        # once per rebalance, again after a completed join or a reset of the generation.
        self._needs_join_prepare = True
        # The reason the next JoinGroup carries: the last requestRejoin's, emptied by a completed rebalance.
        self.rejoin_reason = ""
        # The Heartbeat timer: when the next heartbeat is due.
        self.next_heartbeat_ms = 0
        self._pending: dict[str, Any] = {}
        # The generation each pending resumable request went out with (its handler's sentGeneration).
        self._sent_generations: dict[str, Generation] = {}
        self._heartbeat_generation = NO_GENERATION
        self._log = client_logger(client_id=client.client_id, group_id=group_id)

    # -- what the subclass provides (Kafka's abstract methods) ----------------------------------------

    @abstractmethod
    def protocol_type(self) -> str:
        """The group's protocol type (AbstractCoordinator#protocolType, abstract)."""

    @abstractmethod
    def _join_protocols(self) -> tuple[JoinGroupRequestProtocol, ...]:
        """The protocols a JoinGroup offers (AbstractCoordinator#metadata, abstract)."""

    @abstractmethod
    async def _on_join_prepare(self, deadline_ms: int, generation_id: int, member_id: str) -> bool:
        """Called before a rebalance's first JoinGroup, with the generation of that moment; False
        while it is not done yet, e.g. waiting for an offset commit (AbstractCoordinator#onJoinPrepare, abstract)."""

    @abstractmethod
    async def _on_join_leader(self, response: JoinGroupResponse) -> dict[str, bytes]:
        """The leader's assignment, member id to bytes (AbstractCoordinator#onLeaderElected, abstract)."""

    @abstractmethod
    def _on_join_complete(self, generation: Generation, assignment: bytes) -> None:
        """Called with this member's assignment once the SyncGroup succeeds (AbstractCoordinator#onJoinComplete, abstract)."""

    def request_rejoin(self, reason: str, full_reason: str | None = None) -> None:
        """Mirrors AbstractCoordinator#requestRejoin: ``reason`` (the short one) goes with the next
        JoinGroup; ``full_reason`` (default: the same) is what is logged."""
        if not self.rejoin_needed:
            self._log.info("rejoin_requested", reason=full_reason or reason)
        self.rejoin_reason = reason
        self.rejoin_needed = True

    def rejoin_needed_or_pending(self) -> bool:
        """Mirrors AbstractCoordinator#rejoinNeededOrPending: a rejoin was asked for (a JoinGroup or
        SyncGroup still pending here keeps ``rejoin_needed`` set, as Kafka's joinFuture counts)."""
        return self.rejoin_needed

    def request_rejoin_if_necessary(self, reason: str, full_reason: str | None = None) -> None:
        """Mirrors AbstractCoordinator#requestRejoinIfNecessary: a rejoin already pending keeps its reason."""
        if not self.rejoin_needed:
            self.request_rejoin(reason, full_reason)

    def _rebalance_failed(self, exception_name: str) -> None:
        """The rejoin joinGroupIfNeeded requests when a JoinGroup / SyncGroup fails: its reason names the failure."""
        self.request_rejoin(f"rebalance failed due to {exception_name}")

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

    # -- heartbeats ---------------------------------------------------------------------------------

    def time_to_next_heartbeat(self, now: int) -> float:
        """Mirrors org.apache.kafka.clients.consumer.internals.AbstractCoordinator#timeToNextHeartbeat.

        1. A member that has not joined (UNJOINED, or its JoinGroup still out) sends no heartbeat:
        no bound; 2. otherwise the time until the next one is due (0 when it already is).
        """
        # 1. Nothing to heartbeat for.
        if self.state in (MemberState.UNJOINED, MemberState.PREPARING_REBALANCE):
            return float("inf")
        # 2. Until the next heartbeat.
        return max(self.next_heartbeat_ms - now, 0)

    async def maybe_heartbeat(self) -> None:
        """Mirrors AbstractCoordinator.HeartbeatThread's loop body (run from poll here).

        A heartbeat whose answer a short poll did not wait for is waited for next time.

        1. Nothing to do without a coordinator, while a rejoin is pending or before a member id;
        2. a heartbeat is due heartbeat.interval.ms after the previous one went out (Heartbeat#sentHeartbeat);
        3. a failed one (lost connection, or an error answer other than REBALANCE_IN_PROGRESS,
        FENCED_INSTANCE_ID or one about an older generation) makes the next one due
        retry.backoff.ms after the failure (Heartbeat#failHeartbeat; constant, no KIP-580 jitter);
        4. the answer is handled (HeartbeatResponseHandler).
        """
        # 1. Anyone to heartbeat to, as a member?
        now = self.time.milliseconds()
        if self.coordinator is None or self.rejoin_needed or not self.generation.has_member_id():
            return
        # 2. Due? (A pending heartbeat is waited for again.)
        if "heartbeat" not in self._pending:
            if now < self.next_heartbeat_ms:
                return
            self.next_heartbeat_ms = now + self.heartbeat_interval_ms
            self._heartbeat_generation = self.generation
        generation = self._heartbeat_generation
        response = await self._send_to_coordinator(HeartbeatRequest(
            group_id=self.group_id, generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id), resumable="heartbeat")
        # 3. A failure backs off.
        if response is None:
            self.next_heartbeat_ms = self.time.milliseconds() + self.retry_backoff_ms
            return
        error = Errors.for_code(response.error_code)
        stale = (error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID)
                 and generation != self.generation)
        if error not in (Errors.NONE, Errors.REBALANCE_IN_PROGRESS, Errors.FENCED_INSTANCE_ID) and not stale:
            self.next_heartbeat_ms = self.time.milliseconds() + self.retry_backoff_ms
        # 4. The answer.
        self._handle_heartbeat_error(error, generation)

    def _handle_heartbeat_error(self, error: Errors, generation: Generation) -> None:
        """Mirrors AbstractCoordinator.HeartbeatResponseHandler#handle."""
        if error is Errors.NONE:
            return
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"heartbeat answered {error.name}")
        elif error is Errors.REBALANCE_IN_PROGRESS:
            # Only a stable member rejoins; during a rebalance the answer is expected and ignored.
            if self.state is MemberState.STABLE:
                self.request_rejoin("group is already rebalancing", "group is rebalancing (heartbeat)")
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
        # 2. requestRejoin; the next rebalance prepares again (resetStateAndRejoin's needsJoinPrepare).
        self.request_rejoin(f"encountered {error.name} from {_API_KEY_NAMES.get(api, api)} response",
                            f"encountered {error.name} from {api} response")
        self._needs_join_prepare = True

    # -- joining -------------------------------------------------------------------------------------

    async def ensure_active_group(self, deadline_ms: int) -> bool:
        """Mirrors AbstractCoordinator#ensureActiveGroup / joinGroupIfNeeded: rejoin until stable or out of time."""
        while self.rejoin_needed_or_pending():
            if self.coordinator is None and not await self.ensure_coordinator_ready(deadline_ms):
                return False
            # 1. EAGER: give everything up before the rebalance's first JoinGroup (onJoinPrepare, once:
            #    the flag is cleared first, so a retried JoinGroup does not call it again). An
            #    onJoinPrepare still waiting for its auto-commit answers False: no JoinGroup yet, and it
            #    is called again next time (so is one whose wait the caller's deadline cut short).
            if self._needs_join_prepare:
                self._needs_join_prepare = False
                try:
                    prepared = await self._on_join_prepare(deadline_ms, self.generation.generation_id,
                                                           self.generation.member_id)
                except anyio.get_cancelled_exc_class():
                    self._needs_join_prepare = True
                    raise
                if not prepared:
                    self._needs_join_prepare = True
                    return False
            # 2. Join and sync; an error sends us round the loop (maybe after a backoff). A fatal
            #    one is raised, the next JoinGroup's reason naming it.
            try:
                retry_now = await self._join_group()
            except KafkaException as exc:
                self._rebalance_failed(type(exc).__name__)
                raise
            if self.rejoin_needed and not retry_now and not await self._backoff(deadline_ms):
                return False
            if self.rejoin_needed and self.time.milliseconds() >= deadline_ms:
                return False
        return True

    async def _join_group(self) -> bool:
        """Mirrors AbstractCoordinator#sendJoinGroupRequest and JoinGroupResponseHandler.

        Returns True when the next attempt should go at once (joinGroupIfNeeded's rule: MEMBER_ID_REQUIRED,
        UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS from the JoinGroup or its SyncGroup).
        """
        # 0. A SyncGroup of this rebalance still waiting at the coordinator (a short poll ended
        #    meanwhile) is waited for, not replaced by a new JoinGroup: Kafka's joinFuture spans
        #    both requests.
        pending_sync = self._pending.get("sync")
        if pending_sync is not None:
            if pending_sync.dst == self.coordinator:
                return await self._sync_group({})
            self._pending.pop("sync", None)
        sent_generation = self._sent_generations["join"] if "join" in self._pending else self.generation
        request = JoinGroupRequest(
            group_id=self.group_id, session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms, member_id=self.generation.member_id,
            group_instance_id=self.group_instance_id, protocol_type=self.protocol_type(), protocols=self._join_protocols(),
            reason=JoinGroupRequest.maybe_truncate_reason(self.rejoin_reason))
        # The JoinGroup may wait out a whole rebalance timeout at the coordinator.
        timeout = max(self.request_timeout_ms, self.rebalance_timeout_ms + 5000)
        # (initiateJoinGroup: a new JoinGroup makes the member PREPARING_REBALANCE; one still
        #  pending is waited for as it is, whatever happened to the member meanwhile.)
        pending_join = self._pending.get("join")
        if pending_join is None or pending_join.dst != self.coordinator:
            self.state = MemberState.PREPARING_REBALANCE
        response = await self._send_to_coordinator(request, timeout, resumable="join")
        if response is None:
            self._rebalance_failed("DisconnectException")
            return False
        assert isinstance(response, JoinGroupResponse)
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE and error is not Errors.MEMBER_ID_REQUIRED:
            self._rebalance_failed(type(error.exception()).__name__)
        # 1. Success, unless the coordinator speaks of another protocol type.
        if error is Errors.NONE and self._is_protocol_type_inconsistent(response.protocol_type):
            Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
        if error is Errors.NONE and self.state is not MemberState.PREPARING_REBALANCE:
            # The member left the group while the JoinGroup was out: no SyncGroup for it
            # (UnjoinedGroupException, retriable: a new JoinGroup after the backoff).
            self._rebalance_failed("UnjoinedGroupException")
            return False
        if error is Errors.NONE:
            self.state = MemberState.COMPLETING_REBALANCE
            self.generation = Generation(response.generation_id, response.member_id, response.protocol_name)
            self._log.info("joined_group", generation_id=response.generation_id, member_id=response.member_id,
                           leader=response.leader, protocol=response.protocol_name)
            if response.is_leader():
                assignment = await self._on_join_leader(response)
            else:
                assignment = {}
            return await self._sync_group(assignment)
        if error is Errors.MEMBER_ID_REQUIRED:
            self.generation = Generation(NO_GENERATION_ID, response.member_id, None)
            self.request_rejoin(f"need to re-join with the given member-id: {response.member_id}")
            return True
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            return False
        # 2. UNKNOWN_MEMBER_ID: forget the member id (if the generation did not move) and rejoin at once.
        if error is Errors.UNKNOWN_MEMBER_ID:
            if sent_generation == self.generation:
                self.reset_generation_on_response_error("JoinGroup", error)
            self._rebalance_failed(type(error.exception()).__name__)
            return True
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"JoinGroup answered {error.name}")
            return False
        if error is Errors.REBALANCE_IN_PROGRESS:
            return True
        # 3. Fatal errors surface with their own exception; anything else is unexpected.
        if error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        if error is Errors.GROUP_MAX_SIZE_REACHED:
            error.maybe_raise(f"Consumer group {self.group_id} already has the configured maximum number of members.")
        if error in (Errors.FENCED_INSTANCE_ID, Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT,
                     Errors.INVALID_GROUP_ID, Errors.UNSUPPORTED_VERSION):
            error.maybe_raise()
        raise KafkaException(f"Unexpected error in join group response: {error.message}")

    def _is_protocol_type_inconsistent(self, protocol_type: str | None) -> bool:
        """Mirrors AbstractCoordinator#isProtocolTypeInconsistent (an absent type is not checked)."""
        return protocol_type is not None and protocol_type != self.protocol_type()

    async def _sync_group(self, assignment: Mapping[str, bytes]) -> bool:
        """Mirrors AbstractCoordinator#sendSyncGroupRequest and SyncGroupResponseHandler.

        A SyncGroup still pending from an earlier (cancelled) wait is waited for again; its
        answer is judged against the generation it was sent with. Returns True when the next
        JoinGroup should go at once: joinGroupIfNeeded retries REBALANCE_IN_PROGRESS,
        UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION (also the one raised for a generation reset
        meanwhile) without retry.backoff.ms.
        """
        generation = self._sent_generations["sync"] if "sync" in self._pending else self.generation
        request = SyncGroupRequest(
            group_id=self.group_id, generation_id=generation.generation_id, member_id=generation.member_id,
            group_instance_id=self.group_instance_id, protocol_type=self.protocol_type(), protocol_name=generation.protocol_name,
            assignments=tuple(SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in assignment.items()))
        response = await self._send_to_coordinator(request, max(self.request_timeout_ms, self.rebalance_timeout_ms + 5000),
                                                   resumable="sync")
        if response is None:
            self._rebalance_failed("DisconnectException")
            return False
        error = Errors.for_code(response.error_code)
        if error is Errors.NONE:
            # 1. Success, unless the coordinator names another protocol type or (for this
            #    generation) another protocol than the JoinGroup chose.
            if self._is_protocol_type_inconsistent(response.protocol_type):
                Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
            if ((self.generation.generation_id == NO_GENERATION_ID and self.generation.protocol_name is None)
                    or self.state is not MemberState.COMPLETING_REBALANCE):
                # The generation or state was reset meanwhile (hasGenerationReset): the protocol name is
                # not checked, and the rebalance is retried at once, as for ILLEGAL_GENERATION.
                self._rebalance_failed("IllegalGenerationException")
                return True
            if response.protocol_name is not None and response.protocol_name != generation.protocol_name:
                Errors.INCONSISTENT_GROUP_PROTOCOL.maybe_raise()
            # 2. A member of a stable generation: heartbeats start over, then the subclass takes
            #    the assignment (onJoinComplete).
            self.state = MemberState.STABLE
            self.rejoin_needed = False
            self._pending.pop("heartbeat", None)
            self.next_heartbeat_ms = self.time.milliseconds() + self.heartbeat_interval_ms
            self.rejoin_reason = ""
            self._on_join_complete(generation, response.assignment)
            # (joinGroupIfNeeded: the next rebalance prepares again.)
            self._needs_join_prepare = True
            return False
        # 3. Errors. A rebalance under way or a stale generation: rejoin at once.
        if error is Errors.REBALANCE_IN_PROGRESS:
            self._rebalance_failed(type(error.exception()).__name__)
            return True
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            # Reset (ILLEGAL_GENERATION keeps the member id) if the generation did not move.
            if generation == self.generation:
                self.reset_generation_on_response_error("SyncGroup", error, error is not Errors.ILLEGAL_GENERATION)
            self._rebalance_failed(type(error.exception()).__name__)
            return True
        # 4. The coordinator moved (retriable, after the backoff); anything else is fatal.
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"SyncGroup answered {error.name}")
            self._rebalance_failed(type(error.exception()).__name__)
            return False
        if error is Errors.GROUP_AUTHORIZATION_FAILED:
            error.maybe_raise(f"Not authorized to access group: {self.group_id}")
        elif error is Errors.FENCED_INSTANCE_ID:
            error.maybe_raise()
        raise KafkaException(f"Unexpected error from SyncGroup: {error.message}")

    def rebalance_in_progress(self) -> bool:
        """Mirrors AbstractCoordinator#rebalanceInProgress."""
        return self.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)

    def maybe_leave_group_nowait(self, reason: str = "the consumer is being closed") -> None:
        """Mirrors AbstractCoordinator#maybeLeaveGroup: LeaveGroup if a dynamic member (sent, not
        awaited: close is synchronous). A static member stays until its session times out, so a
        restart within it rejoins without a rebalance (KIP-345).

        1. Only a dynamic member with a known coordinator, a member id and a state other than
        UNJOINED (an error answer that reset the generation left it out already) sends LeaveGroup;
        2. the generation and member id are forgotten either way.
        """
        generation = self.generation
        # 1. LeaveGroup, if there is anything to leave.
        if (self.group_instance_id is None and self.coordinator is not None
                and self.state is not MemberState.UNJOINED and generation.has_member_id()):
            self._log.info("leaving_group", member_id=generation.member_id, reason=reason)
            self.client.post(self.coordinator, LeaveGroupRequest(
                group_id=self.group_id, members=(MemberIdentity(
                    member_id=generation.member_id, reason=JoinGroupRequest.maybe_truncate_reason(reason)),)))
        # 2. resetGenerationOnLeaveGroup.
        self.reset_generation_on_leave_group(reason)

    def reset_generation_on_leave_group(self, log_reason: str | None = None) -> None:
        """Mirrors AbstractCoordinator#resetGenerationOnLeaveGroup: unjoined, no generation nor member id, rejoin
        (logged with ``log_reason`` when given, e.g. why the member left); the next rebalance prepares
        again (resetStateAndRejoin's needsJoinPrepare)."""
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION
        self.request_rejoin("consumer pro-actively leaving the group", log_reason)
        self._needs_join_prepare = True

