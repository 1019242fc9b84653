"""Group membership and offset management for the groups whose offsets partition this broker leads.

Mirrors kafka.coordinator.group.GroupCoordinator (Kafka 3.x, the classic protocol) and
kafka.coordinator.group.GroupConfig, JoinGroupResult, SyncGroupResult, LeaveGroupResult.

A rebalance, as the state machine in group_metadata.py runs it: a JoinGroup from a new member
(or a changed one, or the leader, or a member failure) moves the group to PreparingRebalance
and parks every member's JoinGroup in the rebalance purgatory (DelayedJoin); when all known
members have rejoined, or the rebalance timeout passes, the next generation starts: protocol
chosen, JoinGroup answered (the leader gets every member's subscription), state
CompletingRebalance. The leader's SyncGroup brings the assignment; once it is stored in
``__consumer_offsets`` (acks=-1) every parked SyncGroup is answered and the group is Stable.
Each member must then heartbeat within its session timeout (DelayedHeartbeat) or be removed,
which starts another rebalance.

The methods the delayed operations call back into (rebalance, heartbeat expiry, pending
syncs) are in rebalance.py, and OffsetCommit / OffsetFetch / OffsetDelete are in
group_offsets.py; this class inherits both.

Static members (KIP-345) carry a group instance id: a restarted one rejoins without its member
id and takes its old place under a new id (often without a rebalance), a stale instance is
fenced (FENCED_INSTANCE_ID), and one that misses a rebalance stays until its session ends.

Not modelled: transactional offset commits. Offset expiration (GroupMetadataManager's
``cleanup_expired_group_metadata``) is modelled but not scheduled by default. Every method is synchronous:
Kafka's ``group.inLock`` is the single event loop here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.join_group import UNKNOWN_MEMBER_ID
from kafka_ref.common.requests.leave_group import MemberIdentity, MemberResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.coordinator.group.delayed_heartbeat import MemberKey
from kafka_ref.coordinator.group.delayed_join import GroupJoinKey
from kafka_ref.coordinator.group.group_metadata import (
    CLASSIC_GROUP_TYPE,
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    IllegalStateException,
    PreparingRebalance,
    Stable,
    parse_group_type,
)
from kafka_ref.coordinator.group.group_metadata_manager import GroupMetadataManager
from kafka_ref.coordinator.group.group_offsets import GroupOffsets
from kafka_ref.coordinator.group.member_metadata import plain_protocol_set
from kafka_ref.coordinator.group.rebalance import GroupRebalance, JoinGroupResult, SyncGroupResult
from kafka_ref.server.delayed_operation import DelayedOperationPurgatory

JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """Mirrors kafka.coordinator.group.GroupConfig (group.min/max.session.timeout.ms, group.max.size, KIP-134 delay)."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_max_size: int = 2**31 - 1
    group_initial_rebalance_delay_ms: int = 3000

    @classmethod
    def from_kafka_config(cls, config: Any) -> "GroupConfig":
        """The broker's group.* settings."""
        return cls(
            group_min_session_timeout_ms=config.get("group.min.session.timeout.ms"),
            group_max_session_timeout_ms=config.get("group.max.session.timeout.ms"),
            group_max_size=config.get("group.max.size"),
            group_initial_rebalance_delay_ms=config.get("group.initial.rebalance.delay.ms"),
        )


@dataclass(frozen=True, slots=True)
class LeaveGroupResult:
    """Mirrors kafka.coordinator.group.LeaveGroupResult."""

    top_level_error: Errors
    member_responses: tuple[MemberResponse, ...] = field(default=())


class GroupPurgatory(DelayedOperationPurgatory):
    """A DelayedOperationPurgatory whose check_and_complete tolerates re-entrant watches.

    Completing a DelayedJoin can watch a new DelayedJoin under the same GroupJoinKey (no
    member rejoined: wait another rebalance timeout). Kafka's Watchers keep such an operation;
    this subclass merges it back instead of overwriting the key's list.
    """

    def check_and_complete(self, key: Any) -> int:
        """Mirrors kafka.server.DelayedOperationPurgatory#checkAndComplete."""
        watchers = self._watchers.pop(key, None)
        if not watchers:
            return 0
        completed = 0
        remaining = []
        for op in watchers:
            if op.is_completed:
                continue
            if op.safe_try_complete():
                completed += 1
            else:
                remaining.append(op)
        added = [op for op in self._watchers.pop(key, []) if not op.is_completed]
        merged = [op for op in remaining if not op.is_completed] + added
        if merged:
            self._watchers[key] = merged
        self.completed_count += completed
        return completed


class GroupCoordinator(GroupRebalance, GroupOffsets):
    """Mirrors kafka.coordinator.group.GroupCoordinator."""

    def __init__(
        self,
        broker_id: int,
        group_config: GroupConfig,
        group_manager: GroupMetadataManager,
        heartbeat_purgatory: DelayedOperationPurgatory,
        rebalance_purgatory: DelayedOperationPurgatory,
        time: Time,
        rng: Any,
    ) -> None:
        self.broker_id = broker_id
        self.group_config = group_config
        self.group_manager = group_manager
        self.heartbeat_purgatory = heartbeat_purgatory
        self.rebalance_purgatory = rebalance_purgatory
        self.time = time
        self.rng = rng
        self.is_active = False
        self._log = state_change_logger(broker_id=broker_id)

    @classmethod
    def from_broker(cls, broker: Any, *, load_bound: str = "log_end_offset") -> "GroupCoordinator":
        """Mirrors kafka.coordinator.group.GroupCoordinator.apply: purgatories on the broker's timer, the manager."""
        from kafka_ref.coordinator.group.group_metadata_manager import OffsetConfig, new_rng

        config = broker.config
        manager = GroupMetadataManager(broker.broker_id, config.inter_broker_protocol_version,
                                       OffsetConfig.from_kafka_config(config), broker.replica_manager,
                                       broker.scheduler, broker.time, load_bound=load_bound)
        return cls(
            broker.broker_id, GroupConfig.from_kafka_config(config), manager,
            GroupPurgatory("Heartbeat", broker.timer, broker.broker_id),
            GroupPurgatory("Rebalance", broker.timer, broker.broker_id),
            broker.time, new_rng(broker.broker_id),
        )

    # -- life cycle --------------------------------------------------------------------------

    def startup(self, retrieve_group_metadata_topic_partition_count: Callable[[], int],
                enable_metadata_expiration: bool = False) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#startup: the manager, then active.

        Brokers pass ``kafka_ref.offsets.expiration.enable`` (on by default, as in Kafka; the
        simulator turns it off so its recorded seeds keep their event order).
        """
        self.group_manager.startup(retrieve_group_metadata_topic_partition_count, enable_metadata_expiration)
        self.is_active = True
        self._log.info("group_coordinator_started", offsets_partitions=self.group_manager.group_metadata_topic_partition_count)

    def shutdown(self) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#shutdown."""
        self.is_active = False
        self.group_manager.shutdown()

    # -- validation ---------------------------------------------------------------------------

    @staticmethod
    def _is_valid_group_id(group_id: str | None, api: ApiKeys) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#isValidGroupId: "" only for the offset/describe APIs."""
        if api in (ApiKeys.OFFSET_COMMIT, ApiKeys.OFFSET_FETCH, ApiKeys.DESCRIBE_GROUPS, ApiKeys.DELETE_GROUPS):
            return group_id is not None
        return bool(group_id)

    def _validate_group_status(self, group_id: str, api: ApiKeys) -> Errors | None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#validateGroupStatus.

        INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE (not started), COORDINATOR_LOAD_IN_PROGRESS
        (its partition is loading), NOT_COORDINATOR (its partition is not owned here).
        """
        if not self._is_valid_group_id(group_id, api):
            return Errors.INVALID_GROUP_ID
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if self.group_manager.is_group_loading(group_id):
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        if not self.group_manager.is_group_local(group_id):
            return Errors.NOT_COORDINATOR
        return None

    def _validate_current_member(self, group: GroupMetadata, member_id: str, group_instance_id: str | None,
                                 operation: str) -> Errors | None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#validateCurrentMember.

        1. With a group instance id: it must be known (else UNKNOWN_MEMBER_ID) and held by this
        very member id (else FENCED_INSTANCE_ID); 2. the member id must be in the group.
        """
        # 1. The instance id, if any.
        if group_instance_id is not None:
            current = group.current_static_member_id(group_instance_id)
            if current is None:
                return Errors.UNKNOWN_MEMBER_ID
            if current != member_id:
                self._log.info("static_member_fenced", group_id=group.group_id, member_id=member_id,
                               group_instance_id=group_instance_id, current_member_id=current, operation=operation)
                return Errors.FENCED_INSTANCE_ID
            return None
        # 2. The member id.
        return None if group.has(member_id) else Errors.UNKNOWN_MEMBER_ID

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#acceptJoiningMember (group.max.size)."""
        if group.is_(Empty) or group.is_(Dead):
            return True
        if group.is_(PreparingRebalance):
            return (group.has(member_id) and group.get(member_id).is_awaiting_join) or \
                group.num_awaiting < self.group_config.group_max_size
        return group.has(member_id) or group.size < self.group_config.group_max_size

    # -- JoinGroup ------------------------------------------------------------------------------

    def handle_join_group(
        self, group_id: str, member_id: str, group_instance_id: str | None, require_known_member_id: bool,
        support_skipping_assignment: bool, client_id: str, client_host: str, rebalance_timeout_ms: int,
        session_timeout_ms: int, protocol_type: str, protocols: list[tuple[str, bytes]],
        response_callback: JoinCallback, reason: str | None = None,
    ) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleJoinGroup.

        1. group status; 2. session timeout within the broker's bounds; 3. the group (created
        Empty for a new member); 4. max size; 5. new member or known member; 6. a group
        preparing a rebalance may now have everyone.
        """
        # 1. Coordinator checks.
        error = self._validate_group_status(group_id, ApiKeys.JOIN_GROUP)
        if error is not None:
            response_callback(JoinGroupResult.of_error(member_id, error))
            return
        # 2. Session timeout bounds.
        if not (self.group_config.group_min_session_timeout_ms <= session_timeout_ms
                <= self.group_config.group_max_session_timeout_ms):
            response_callback(JoinGroupResult.of_error(member_id, Errors.INVALID_SESSION_TIMEOUT))
            return
        # 3. The group: created only for a member without an id.
        is_unknown_member = member_id == UNKNOWN_MEMBER_ID
        group = self.group_manager.get_or_maybe_create_group(group_id, is_unknown_member)
        if group is None:
            response_callback(JoinGroupResult.of_error(member_id, Errors.UNKNOWN_MEMBER_ID))
            return
        join_reason = reason or "not provided"
        # 4./5. Capacity, then the new- or known-member path.
        if not self._accept_joining_member(group, member_id):
            group.remove(member_id)
            response_callback(JoinGroupResult.of_error(UNKNOWN_MEMBER_ID, Errors.GROUP_MAX_SIZE_REACHED))
        elif is_unknown_member:
            self._do_new_member_join_group(group, group_instance_id, require_known_member_id,
                                           support_skipping_assignment, client_id, client_host,
                                           rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                                           response_callback, join_reason)
        else:
            self._do_current_member_join_group(group, member_id, group_instance_id, client_id, client_host,
                                               rebalance_timeout_ms, session_timeout_ms, protocol_type, protocols,
                                               response_callback, join_reason)
        # 6. Maybe everyone is in now.
        if group.is_(PreparingRebalance):
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    def _do_new_member_join_group(self, group: GroupMetadata, group_instance_id: str | None,
                                  require_known_member_id: bool, support_skipping_assignment: bool, client_id: str,
                                  client_host: str, rebalance_timeout_ms: int, session_timeout_ms: int,
                                  protocol_type: str, protocols: list[tuple[str, bytes]],
                                  response_callback: JoinCallback, reason: str) -> None:
        """Mirrors GroupCoordinator#doNewMemberJoinGroup, #doStaticNewMemberJoinGroup and #doDynamicNewMemberJoinGroup.

        A member id is generated (prefixed by the group instance id of a static member, else
        the client id). Static: a known instance id takes its old place under the new id
        (updateStaticMemberAndRebalance), an unknown one joins as a new member. Dynamic: with
        ``require_known_member_id`` (JoinGroup v4+, KIP-394) the id is only handed back with
        MEMBER_ID_REQUIRED and kept pending until the member rejoins with it (or its session
        timeout passes); otherwise the member joins at once.
        """
        if group.is_(Dead):
            response_callback(JoinGroupResult.of_error(UNKNOWN_MEMBER_ID, Errors.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, plain_protocol_set(protocols)):
            response_callback(JoinGroupResult.of_error(UNKNOWN_MEMBER_ID, Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_member_id = group.generate_member_id(client_id, group_instance_id, self.rng)
        while group.has(new_member_id) or new_member_id in group.pending_members:   # a seeded generator may repeat
            new_member_id = group.generate_member_id(client_id, group_instance_id, self.rng)
        if group_instance_id is not None:
            old_member_id = group.current_static_member_id(group_instance_id)
            if old_member_id is not None:
                self._log.info("static_member_replaced", group_id=group.group_id, group_instance_id=group_instance_id,
                               old_member_id=old_member_id, new_member_id=new_member_id, state=str(group.current_state))
                self._update_static_member_and_rebalance(group, old_member_id, new_member_id, group_instance_id,
                                                         protocols, rebalance_timeout_ms, session_timeout_ms,
                                                         response_callback, reason, support_skipping_assignment)
            else:
                self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id,
                                               group_instance_id, client_id, client_host, protocol_type, protocols,
                                               group, response_callback, reason)
        elif require_known_member_id:
            group.add_pending_member(new_member_id)
            self._add_pending_member_expiration(group, new_member_id, session_timeout_ms)
            response_callback(JoinGroupResult.of_error(new_member_id, Errors.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, new_member_id, None, client_id,
                                           client_host, protocol_type, protocols, group, response_callback, reason)

    def _do_current_member_join_group(self, group: GroupMetadata, member_id: str, group_instance_id: str | None,
                                      client_id: str, client_host: str,
                                      rebalance_timeout_ms: int, session_timeout_ms: int, protocol_type: str,
                                      protocols: list[tuple[str, bytes]], response_callback: JoinCallback,
                                      reason: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#doCurrentMemberJoinGroup.

        A pending member is added (it cannot be static); the member (and its instance id, if
        static) must be current; a known member rejoining during PreparingRebalance is
        updated and parked; in CompletingRebalance or Stable an unchanged follower just gets
        the current generation back, while the leader or a changed member forces a rebalance.
        """
        if group.is_(Dead):
            response_callback(JoinGroupResult.of_error(member_id, Errors.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(protocol_type, plain_protocol_set(protocols)):
            response_callback(JoinGroupResult.of_error(member_id, Errors.INCONSISTENT_GROUP_PROTOCOL))
            return
        if group.is_pending_member(member_id):
            if group_instance_id is not None:
                raise IllegalStateException(f"Received unexpected JoinGroup with groupInstanceId={group_instance_id} "
                                            f"for pending member with memberId={member_id}")
            self._add_member_and_rebalance(rebalance_timeout_ms, session_timeout_ms, member_id, None, client_id,
                                           client_host, protocol_type, protocols, group, response_callback, reason)
            return
        error = self._validate_current_member(group, member_id, group_instance_id, "join-group")
        if error is not None:
            response_callback(JoinGroupResult.of_error(member_id, error))
            return
        member = group.get(member_id)
        state = group.current_state
        if state is PreparingRebalance:
            self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                              f"Member {member_id} joining group during {state}; client reason: {reason}",
                                              response_callback)
        elif state is CompletingRebalance:
            if member.matches(protocols):
                # The member lost the JoinGroup answer: give it the current generation again.
                response_callback(self._join_result(group, member_id))
            else:
                self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                                  f"Updating metadata for member {member_id} during {state}; "
                                                  f"client reason: {reason}", response_callback)
        elif state is Stable:
            if group.is_leader(member_id):
                self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                                  f"Leader {member_id} re-joining group during {state}; "
                                                  f"client reason: {reason}", response_callback)
            elif not member.matches(protocols):
                self._update_member_and_rebalance(group, member, protocols, rebalance_timeout_ms, session_timeout_ms,
                                                  f"Updating metadata for member {member_id} during {state}; "
                                                  f"client reason: {reason}", response_callback)
            else:
                response_callback(self._join_result(group, member_id, include_members=False))
        else:
            self._log.warning("join_group_unexpected_state", group_id=group.group_id, member_id=member_id, state=str(state))
            response_callback(JoinGroupResult.of_error(member_id, Errors.UNKNOWN_MEMBER_ID))

    # -- SyncGroup ------------------------------------------------------------------------------

    def handle_sync_group(self, group_id: str, generation: int, member_id: str, protocol_type: str | None,
                          protocol_name: str | None, group_instance_id: str | None,
                          group_assignment: Mapping[str, bytes], response_callback: SyncCallback) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleSyncGroup.

        While the partition loads the rebalance state is lost: REBALANCE_IN_PROGRESS sends
        the member back to JoinGroup (older clients do not know COORDINATOR_LOAD_IN_PROGRESS here).
        """
        error = self._validate_group_status(group_id, ApiKeys.SYNC_GROUP)
        if error is Errors.COORDINATOR_LOAD_IN_PROGRESS:
            response_callback(SyncGroupResult.of_error(Errors.REBALANCE_IN_PROGRESS))
        elif error is not None:
            response_callback(SyncGroupResult.of_error(error))
        else:
            group = self.group_manager.get_group(group_id)
            if group is None:
                response_callback(SyncGroupResult.of_error(Errors.UNKNOWN_MEMBER_ID))
            else:
                self._do_sync_group(group, generation, member_id, protocol_type, protocol_name, group_instance_id,
                                    group_assignment, response_callback)

    def _validate_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str,
                             protocol_type: str | None, protocol_name: str | None,
                             group_instance_id: str | None) -> Errors | None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#validateSyncGroup."""
        if group.is_(Dead):
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self._validate_current_member(group, member_id, group_instance_id, "sync-group")
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if protocol_type is not None and group.protocol_type != protocol_type:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and group.protocol_name != protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _do_sync_group(self, group: GroupMetadata, generation_id: int, member_id: str, protocol_type: str | None,
                       protocol_name: str | None, group_instance_id: str | None, group_assignment: Mapping[str, bytes],
                       response_callback: SyncCallback) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#doSyncGroup.

        CompletingRebalance: park the SyncGroup; the leader's assignment (missing members get
        an empty one) is stored, and when the write succeeds for this very generation every
        member is answered and the group becomes Stable. Stable: the current assignment.
        """
        error = self._validate_sync_group(group, generation_id, member_id, protocol_type, protocol_name, group_instance_id)
        if error is not None:
            response_callback(SyncGroupResult.of_error(error))
            return
        state = group.current_state
        if state is Empty:
            response_callback(SyncGroupResult.of_error(Errors.UNKNOWN_MEMBER_ID))
        elif state is PreparingRebalance:
            response_callback(SyncGroupResult.of_error(Errors.REBALANCE_IN_PROGRESS))
        elif state is CompletingRebalance:
            group.get(member_id).awaiting_sync_callback = response_callback
            self._remove_pending_sync_member(group, member_id)
            if group.is_leader(member_id):
                # 1. Fill in members the leader left out.
                assignment = dict(group_assignment)
                for missing in group.all_members() - set(assignment):
                    assignment[missing] = b""
                self._log.info("group_assignment_received", group_id=group.group_id, generation_id=group.generation_id,
                               leader=member_id, members=group.size)

                # 2. Store it; answer when the write is acknowledged (if nothing moved meanwhile).
                def on_stored(store_error: Errors) -> None:
                    if group.is_(CompletingRebalance) and generation_id == group.generation_id:
                        if store_error is not Errors.NONE:
                            self._reset_and_propagate_assignment_error(group, store_error)
                            self._maybe_prepare_rebalance(
                                group, f"Error {store_error.name} when storing group assignment during SyncGroup "
                                       f"(member: {member_id})")
                        else:
                            self._set_and_propagate_assignment(group, assignment)
                            group.transition_to(Stable)

                self.group_manager.store_group(group, assignment, on_stored)
        elif state is Stable:
            self._remove_pending_sync_member(group, member_id)
            member = group.get(member_id)
            response_callback(SyncGroupResult(group.protocol_type, group.protocol_name, member.assignment, Errors.NONE))
            self._complete_and_schedule_next_heartbeat_expiration(group, member)
        else:
            raise IllegalStateException(f"Reached unexpected condition for Dead group {group.group_id}")

    # -- LeaveGroup -----------------------------------------------------------------------------

    def handle_leave_group(self, group_id: str, leaving_members: Iterable[MemberIdentity],
                           response_callback: Callable[[LeaveGroupResult], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleLeaveGroup: an answer per leaving member.

        Each leaving member is named by member id, or (an administrative removal, KIP-345) by
        group instance id alone; a static member named by both must still hold its instance id.
        """
        leaving_members = list(leaving_members)

        def member_error(m: MemberIdentity, error: Errors) -> MemberResponse:
            return MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=error.code)

        error = self._validate_group_status(group_id, ApiKeys.LEAVE_GROUP)
        if error is not None:
            response_callback(LeaveGroupResult(error))
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(LeaveGroupResult(Errors.NONE, tuple(member_error(m, Errors.UNKNOWN_MEMBER_ID)
                                                                  for m in leaving_members)))
            return
        if group.is_(Dead):
            response_callback(LeaveGroupResult(Errors.COORDINATOR_NOT_AVAILABLE))
            return
        results = []
        for leaving in leaving_members:
            member_id = leaving.member_id
            if member_id == UNKNOWN_MEMBER_ID:
                current = None if leaving.group_instance_id is None else \
                    group.current_static_member_id(leaving.group_instance_id)
                if current is None:
                    results.append(member_error(leaving, Errors.UNKNOWN_MEMBER_ID))
                else:
                    self._remove_current_member_from_group(group, current, leaving.reason)
                    results.append(member_error(leaving, Errors.NONE))
            elif group.is_pending_member(member_id):
                self._remove_pending_member_and_update_group(group, member_id)
                self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member_id))
                results.append(member_error(leaving, Errors.NONE))
            elif (validation := self._validate_current_member(group, member_id, leaving.group_instance_id,
                                                              "leave-group")) is not None:
                results.append(member_error(leaving, validation))
            else:
                self._remove_current_member_from_group(group, member_id, leaving.reason)
                results.append(member_error(leaving, Errors.NONE))
        response_callback(LeaveGroupResult(Errors.NONE, tuple(results)))

    def _remove_current_member_from_group(self, group: GroupMetadata, member_id: str, reason: str | None) -> None:
        """Mirrors the removeCurrentMemberFromGroup step of GroupCoordinator#handleLeaveGroup."""
        member = group.get(member_id)
        self._remove_member_and_update_group(
            group, member, f"Removing member {member_id} on LeaveGroup; client reason: {reason or 'not provided'}")
        self._remove_heartbeat_for_leaving_member(group, member_id)
        self._log.info("member_left_group", group_id=group.group_id, member_id=member_id)

    # -- Heartbeat ------------------------------------------------------------------------------

    def _validate_heartbeat(self, group: GroupMetadata, generation_id: int, member_id: str,
                            group_instance_id: str | None) -> Errors | None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#validateHeartbeat."""
        if group.is_(Dead):
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = self._validate_current_member(group, member_id, group_instance_id, "heartbeat")
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        return None

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                         response_callback: Callable[[Errors], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleHeartbeat.

        While loading the answer is NONE (blindly); PreparingRebalance answers
        REBALANCE_IN_PROGRESS (the signal to rejoin); a live member's session is renewed.
        """
        error = self._validate_group_status(group_id, ApiKeys.HEARTBEAT)
        if error is not None:
            response_callback(Errors.NONE if error is Errors.COORDINATOR_LOAD_IN_PROGRESS else error)
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            response_callback(Errors.UNKNOWN_MEMBER_ID)
            return
        error = self._validate_heartbeat(group, generation_id, member_id, group_instance_id)
        if error is not None:
            response_callback(error)
            return
        state = group.current_state
        if state is Empty:
            response_callback(Errors.UNKNOWN_MEMBER_ID)
        elif state in (CompletingRebalance, Stable):
            self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
            response_callback(Errors.NONE)
        elif state is PreparingRebalance:
            self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
            response_callback(Errors.REBALANCE_IN_PROGRESS)
        else:
            raise IllegalStateException(f"Reached unexpected condition for Dead group {group_id}")

    # -- __consumer_offsets leadership (seed 000, seed 002 §handleStopReplicaRequest) ----------------

    def on_election(self, offset_topic_partition_id: int, coordinator_epoch: int) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onElection (seed 000's handleGroupImmigration)."""
        self._log.info("group_coordinator_elected", partition=offset_topic_partition_id, coordinator_epoch=coordinator_epoch)
        self.group_manager.schedule_load_group_and_offsets(offset_topic_partition_id, coordinator_epoch, self.on_group_loaded)

    def on_resignation(self, offset_topic_partition_id: int, coordinator_epoch: int | None) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onResignation (seed 000's handleGroupEmigration)."""
        self._log.info("group_coordinator_resigned", partition=offset_topic_partition_id, coordinator_epoch=coordinator_epoch)
        self.group_manager.remove_groups_for_partition(offset_topic_partition_id, coordinator_epoch, self.on_group_unloaded)

    def handle_list_groups(self, states: Iterable[str] = (),
                           group_types: Iterable[str] = ()) -> tuple[Errors, list[tuple[str, str, str, str]]]:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleListGroups.

        1. Not started: COORDINATOR_NOT_AVAILABLE and no groups; 2. the groups this broker
        coordinates, with COORDINATOR_LOAD_IN_PROGRESS while some partition is still loading:
        only the given states when any (compared in lower case), and, when types are given, all
        groups if "classic" is among them (in any case) and none otherwise (every group here is a
        classic group).
        """
        # 1. Not active.
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        # 2. Local groups, filtered by state and type.
        error = Errors.COORDINATOR_LOAD_IN_PROGRESS if self.group_manager.is_loading() else Errors.NONE
        wanted_states = {s.lower() for s in states}
        wanted_types = {parse_group_type(t) for t in group_types}
        groups = [g for g in self.group_manager.current_groups()
                  if (not wanted_states or g.is_in_states(wanted_states))
                  and (not wanted_types or CLASSIC_GROUP_TYPE in wanted_types)]
        return error, [g.overview() for g in groups]

    def handle_delete_groups(self, group_ids: Iterable[str]) -> dict[str, Errors]:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleDeleteGroups.

        Per group: 1. its status error (INVALID_GROUP_ID, NOT_COORDINATOR, loading, ...); 2. an
        unknown or Dead group is GROUP_ID_NOT_FOUND when this broker owns its partition (else
        NOT_COORDINATOR); 3. an Empty group turns Dead and is deleted; a group with members is
        NON_EMPTY_GROUP. 4. The deleted groups lose every offset (tombstones written) and answer NONE.
        """
        errors: dict[str, Errors] = {}
        eligible: list[GroupMetadata] = []
        for group_id in group_ids:
            # 1. Status.
            error = self._validate_group_status(group_id, ApiKeys.DELETE_GROUPS)
            if error is not None:
                errors[group_id] = error
                continue
            group = self.group_manager.get_group(group_id)
            # 2. Unknown or dead.
            if group is None or group.is_(Dead):
                errors[group_id] = (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                                    else Errors.NOT_COORDINATOR)
            # 3. Only an empty group goes.
            elif group.is_(Empty):
                group.transition_to(Dead)
                eligible.append(group)
            else:
                errors[group_id] = Errors.NON_EMPTY_GROUP
        # 4. Tombstones for the deleted groups.
        if eligible:
            removed = self.group_manager.cleanup_group_metadata(eligible, lambda g: g.remove_all_offsets())
            for group in eligible:
                errors[group.group_id] = Errors.NONE
            self._log.info("groups_deleted", groups=[g.group_id for g in eligible], offsets_removed=removed)
        return errors

    def handle_describe_group(self, group_id: str) -> tuple[Errors, tuple[str, str, str, list]]:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleDescribeGroup.

        1. The group's status error (not coordinator, loading, ...) with an empty summary;
        2. an unknown group is described as Dead; 3. otherwise its summary.
        """
        # 1. Status.
        error = self._validate_group_status(group_id, ApiKeys.DESCRIBE_GROUPS)
        if error is not None:
            return error, ("", "", "", [])
        # 2. Unknown: Dead, no protocol, no members.
        group = self.group_manager.get_group(group_id)
        if group is None:
            return Errors.NONE, (str(Dead), "", "", [])
        # 3. The summary.
        return Errors.NONE, group.summary()

    def handle_group_immigration(self, offset_topic_partition_id: int, coordinator_epoch: int = 0) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleGroupImmigration (0.10/0.11; seed 000)."""
        self.on_election(offset_topic_partition_id, coordinator_epoch)

    def handle_group_emigration(self, offset_topic_partition_id: int, coordinator_epoch: int | None = None) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleGroupEmigration (0.10/0.11; seed 000)."""
        self.on_resignation(offset_topic_partition_id, coordinator_epoch)

    def on_group_unloaded(self, group: GroupMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onGroupUnloaded.

        The group dies; parked JoinGroups (PreparingRebalance) and SyncGroups (Stable,
        CompletingRebalance) are answered NOT_COORDINATOR so the members find the new one.
        """
        self._log.info("group_unloaded", group_id=group.group_id, generation_id=group.generation_id)
        previous = group.current_state
        group.transition_to(Dead)
        if previous is PreparingRebalance:
            for member in group.all_member_metadata():
                group.maybe_invoke_join_callback(member, JoinGroupResult.of_error(member.member_id, Errors.NOT_COORDINATOR))
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))
        elif previous in (Stable, CompletingRebalance):
            for member in group.all_member_metadata():
                group.maybe_invoke_sync_callback(member, SyncGroupResult.of_error(Errors.NOT_COORDINATOR))
                self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member.member_id))
        self._remove_sync_expiration(group)

    def on_group_loaded(self, group: GroupMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onGroupLoaded: every loaded member gets a session."""
        self._log.info("group_loaded", group_id=group.group_id, generation_id=group.generation_id,
                       state=str(group.current_state), members=group.size, offsets=group.num_offsets)
        assert group.is_(Stable) or group.is_(Empty), group
        if group.size > self.group_config.group_max_size:
            self.prepare_rebalance(group, f"Freshly-loaded group is over capacity ({self.group_config.group_max_size})")
        for member in group.all_member_metadata():
            self._complete_and_schedule_next_heartbeat_expiration(group, member)
