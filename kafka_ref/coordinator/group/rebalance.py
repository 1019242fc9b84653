"""The rebalance and failure-detection half of the group coordinator.

Mirrors the methods of kafka.coordinator.group.GroupCoordinator (Kafka 3.x) that the delayed
operations call back into — DelayedJoin / InitialDelayedJoin (``try_complete_join``,
``on_complete_join``), DelayedSync (``try_complete_pending_sync``, ``on_expire_pending_sync``),
DelayedHeartbeat (``try_complete_heartbeat``, ``on_expire_heartbeat``) — with the helpers that
start a rebalance and propagate an assignment, and kafka.coordinator.group.JoinGroupResult /
SyncGroupResult. ``GroupCoordinator`` (group_coordinator.py) inherits them: Kafka has one
class, split here only to keep modules small.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.join_group import UNKNOWN_MEMBER_ID, JoinGroupResponseMember
from kafka_ref.coordinator.group.delayed_heartbeat import DelayedHeartbeat, MemberKey
from kafka_ref.coordinator.group.delayed_join import DelayedJoin, DelayedSync, GroupJoinKey, GroupSyncKey, InitialDelayedJoin
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    IllegalStateException,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.member_metadata import MemberMetadata

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # GroupCoordinator.NewMemberJoinTimeoutMs
NO_GENERATION = -1
NO_LEADER = ""

JoinCallback = Callable[["JoinGroupResult"], None]


@dataclass(frozen=True, slots=True)
class JoinGroupResult:
    """Mirrors kafka.coordinator.group.JoinGroupResult: what a parked JoinGroup is answered with."""

    members: tuple[JoinGroupResponseMember, ...]
    member_id: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str
    skip_assignment: bool
    error: Errors

    @classmethod
    def of_error(cls, member_id: str, error: Errors) -> "JoinGroupResult":
        """Mirrors JoinGroupResult.apply(memberId, error): no generation, protocol or leader."""
        return cls((), member_id, NO_GENERATION, None, None, NO_LEADER, False, error)


@dataclass(frozen=True, slots=True)
class SyncGroupResult:
    """Mirrors kafka.coordinator.group.SyncGroupResult."""

    protocol_type: str | None
    protocol_name: str | None
    member_assignment: bytes
    error: Errors

    @classmethod
    def of_error(cls, error: Errors) -> "SyncGroupResult":
        return cls(None, None, b"", error)


class GroupRebalance:
    """Mirrors the rebalance, heartbeat and pending-sync methods of kafka.coordinator.group.GroupCoordinator.

    Expects ``group_config``, ``group_manager``, ``heartbeat_purgatory``, ``rebalance_purgatory``
    and ``_log`` on the concrete coordinator.
    """

    group_config: Any
    group_manager: Any
    heartbeat_purgatory: Any
    rebalance_purgatory: Any
    _log: Any

    def partition_for(self, group_id: str) -> int:
        return self.group_manager.partition_for(group_id)

    def _join_result(self, group: GroupMetadata, member_id: str, include_members: bool = True) -> JoinGroupResult:
        """The JoinGroup answer of the current generation (every member's metadata for the leader only)."""
        members: tuple[JoinGroupResponseMember, ...] = ()
        if include_members and group.is_leader(member_id):
            members = tuple(JoinGroupResponseMember(member_id=mid, group_instance_id=iid, metadata=md)
                            for mid, iid, md in group.current_member_metadata())
        return JoinGroupResult(members, member_id, group.generation_id, group.protocol_type, group.protocol_name,
                               group.leader_or_null() or NO_LEADER, False, Errors.NONE)

    # -- assignment propagation -----------------------------------------------------------------

    def _set_and_propagate_assignment(self, group: GroupMetadata, assignment: Mapping[str, bytes]) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#setAndPropagateAssignment."""
        assert group.is_(CompletingRebalance)
        for member in group.all_member_metadata():
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, Errors.NONE)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Errors) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#resetAndPropagateAssignmentError."""
        assert group.is_(CompletingRebalance)
        for member in group.all_member_metadata():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: Errors) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#propagateAssignment: answer parked SyncGroups, renew sessions."""
        protocol_type, protocol_name = (group.protocol_type, group.protocol_name) if error is Errors.NONE else (None, None)
        for member in group.all_member_metadata():
            if group.maybe_invoke_sync_callback(member, SyncGroupResult(protocol_type, protocol_name, member.assignment, error)):
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    # -- heartbeats -------------------------------------------------------------------------------

    def _complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#completeAndScheduleNextHeartbeatExpiration."""
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#completeAndScheduleNextExpiration.

        1. The expected heartbeat arrived: complete the current DelayedHeartbeat. 2. Expect
        the next one within ``timeout_ms``.
        """
        key = MemberKey(group.group_id, member.member_id)
        member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member.member_id, False, timeout_ms), [key])

    def _add_pending_member_expiration(self, group: GroupMetadata, pending_member_id: str, timeout_ms: int) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#addPendingMemberExpiration."""
        key = MemberKey(group.group_id, pending_member_id)
        self.heartbeat_purgatory.try_complete_else_watch(DelayedHeartbeat(self, group, pending_member_id, True, timeout_ms), [key])

    def _remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#removeHeartbeatForLeavingMember."""
        self.heartbeat_purgatory.check_and_complete(MemberKey(group.group_id, member_id))

    def try_complete_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool,
                               force_complete: Callable[[], bool]) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#tryCompleteHeartbeat."""
        if group.is_(Dead):
            return force_complete()
        if is_pending:
            return force_complete() if group.has(member_id) else False
        if self.should_complete_non_pending_heartbeat(group, member_id):
            return force_complete()
        return False

    @staticmethod
    def should_complete_non_pending_heartbeat(group: GroupMetadata, member_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#shouldCompleteNonPendingHeartbeat."""
        if group.has(member_id):
            return group.get(member_id).has_satisfied_heartbeat()
        return True

    def on_expire_heartbeat(self, group: GroupMetadata, member_id: str, is_pending: bool) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onExpireHeartbeat: a silent member is removed."""
        if group.is_(Dead):
            return
        if is_pending:
            self._log.info("pending_member_expired", group_id=group.group_id, member_id=member_id)
            self._remove_pending_member_and_update_group(group, member_id)
        elif group.has(member_id):
            member = group.get(member_id)
            if not member.has_satisfied_heartbeat():
                self._log.info("member_session_expired", group_id=group.group_id, member_id=member_id,
                               generation_id=group.generation_id)
                self._remove_member_and_update_group(group, member, f"removing member {member_id} on heartbeat expiration")

    # -- rebalancing ------------------------------------------------------------------------------

    def _add_member_and_rebalance(self, rebalance_timeout_ms: int, session_timeout_ms: int, member_id: str,
                                  group_instance_id: str | None, client_id: str, client_host: str, protocol_type: str,
                                  protocols: list[tuple[str, bytes]], group: GroupMetadata,
                                  callback: JoinCallback, reason: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#addMemberAndRebalance.

        The new member (static when it has a group instance id) is parked with its JoinGroup
        and expires after the new-member join timeout (5 minutes) if the rebalance never
        answers it.
        """
        member = MemberMetadata(member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms,
                                session_timeout_ms, protocol_type, protocols)
        member.is_new = True
        # A member arriving during the first rebalance extends KIP-134's initial delay.
        if group.is_(PreparingRebalance) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        self._complete_and_schedule_next_expiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance(group, f"Adding new member {member_id}; client reason: {reason}")

    def _update_static_member_and_rebalance(self, group: GroupMetadata, old_member_id: str, new_member_id: str,
                                            group_instance_id: str, protocols: list[tuple[str, bytes]],
                                            rebalance_timeout_ms: int, session_timeout_ms: int,
                                            response_callback: JoinCallback, reason: str,
                                            support_skipping_assignment: bool) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#updateStaticMemberAndRebalance.

        A known static member rejoins without its member id (a restart, KIP-345): 1. it takes a
        new member id (whoever waits under the old one is fenced) and a session under it; 2.
        its protocols and timeouts are updated and its JoinGroup parked. 3. Stable: if the
        protocol the group would select is unchanged, the group is stored (so the new member id
        survives a coordinator move) and the member gets the current generation back without a
        rebalance -- on a failed write the update is undone (Kafka reads the "old" protocols
        after updating them, so those stay) and the answer is the write's error; JoinGroup v9+
        tells a leader it leads with skip_assignment, older versions name the previous leader
        id so that the member does not assign. A changed selection rebalances.
        CompletingRebalance: always rebalance (the leader may be assigning to the old id).
        PreparingRebalance: nothing more, it is parked. Empty or Dead cannot happen here.
        """
        # 1. The new member id, the fence, and a session under the new id.
        current_leader = group.leader_or_null()
        member = group.replace_static_member(group_instance_id, old_member_id, new_member_id)
        self._complete_and_schedule_next_heartbeat_expiration(group, member)
        # 2. Update it (Kafka takes the "old" protocols after the update: they are the new ones).
        old_rebalance_timeout_ms, old_session_timeout_ms = member.rebalance_timeout_ms, member.session_timeout_ms
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, response_callback)
        old_protocols = member.supported_protocols
        # 3. By state.
        state = group.current_state
        if state is Stable:
            if group.protocol_name == group.select_protocol():
                self._log.info("static_member_rejoined_without_rebalance", group_id=group.group_id,
                               member_id=new_member_id, group_instance_id=group_instance_id)
                assignment = {m.member_id: m.assignment for m in group.all_member_metadata()}

                def on_stored(error: Errors) -> None:
                    if error is not Errors.NONE:
                        self._log.warning("static_member_persist_failed", group_id=group.group_id, error=error.name)
                        group.update_member(member, old_protocols, old_rebalance_timeout_ms, old_session_timeout_ms, None)
                        old_member = group.replace_static_member(group_instance_id, new_member_id, old_member_id)
                        self._complete_and_schedule_next_heartbeat_expiration(group, old_member)
                        response_callback(JoinGroupResult((), UNKNOWN_MEMBER_ID, group.generation_id, group.protocol_type,
                                                          group.protocol_name, current_leader or NO_LEADER, False, error))
                    elif support_skipping_assignment:
                        is_leader = group.is_leader(new_member_id)
                        members = self._join_result(group, new_member_id).members if is_leader else ()
                        group.maybe_invoke_join_callback(member, JoinGroupResult(
                            members, new_member_id, group.generation_id, group.protocol_type, group.protocol_name,
                            group.leader_or_null() or NO_LEADER, is_leader, Errors.NONE))
                    else:
                        group.maybe_invoke_join_callback(member, JoinGroupResult(
                            (), new_member_id, group.generation_id, group.protocol_type, group.protocol_name,
                            current_leader or NO_LEADER, False, Errors.NONE))

                self.group_manager.store_group(group, assignment, on_stored)
            else:
                self._maybe_prepare_rebalance(group, f"Group's selectedProtocol will change because static member "
                                                     f"{new_member_id} with instance id {group_instance_id} joined with "
                                                     f"change of protocol; client reason: {reason}")
        elif state is CompletingRebalance:
            self.prepare_rebalance(group, f"Updating metadata for static member {new_member_id} with instance id "
                                          f"{group_instance_id}; client reason: {reason}")
        elif state in (Empty, Dead):
            raise IllegalStateException(f"Group {group.group_id} was not supposed to be in the state {state} when "
                                        f"the unknown static member {group_instance_id} rejoins.")

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata,
                                     protocols: list[tuple[str, bytes]], rebalance_timeout_ms: int,
                                     session_timeout_ms: int, reason: str, callback: JoinCallback) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#updateMemberAndRebalance."""
        group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, callback)
        self._maybe_prepare_rebalance(group, reason)

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#maybePrepareRebalance."""
        if group.can_rebalance():
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#prepareRebalance.

        1. Members waiting in SyncGroup are sent back (REBALANCE_IN_PROGRESS); 2. no pending
        sync expiration; 3. an Empty group waits the initial delay, others wait for members
        up to the rebalance timeout; 4. PreparingRebalance.
        """
        if group.is_(CompletingRebalance):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        delay = self.group_config.group_initial_rebalance_delay_ms
        if group.is_(Empty):
            delayed: DelayedJoin = InitialDelayedJoin(self, self.rebalance_purgatory, group, delay, delay,
                                                      max(group.rebalance_timeout_ms() - delay, 0))
        else:
            delayed = DelayedJoin(self, group, group.rebalance_timeout_ms())
        group.transition_to(PreparingRebalance)
        self._log.info("group_preparing_rebalance", group_id=group.group_id, generation_id=group.generation_id,
                       partition=self.partition_for(group.group_id), reason=reason)
        self.rebalance_purgatory.try_complete_else_watch(delayed, [GroupJoinKey(group.group_id)])

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#removeMemberAndUpdateGroup.

        A parked JoinGroup of the member is answered UNKNOWN_MEMBER_ID first; then the group
        rebalances (Stable/CompletingRebalance) or may finish its rebalance (PreparingRebalance).
        """
        group.maybe_invoke_join_callback(member, JoinGroupResult.of_error(UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        state = group.current_state
        if state in (Stable, CompletingRebalance):
            self._maybe_prepare_rebalance(group, reason)
        elif state is PreparingRebalance:
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#removePendingMemberAndUpdateGroup."""
        group.remove(member_id)
        group.remove_pending_member(member_id)
        if group.is_(PreparingRebalance):
            self.rebalance_purgatory.check_and_complete(GroupJoinKey(group.group_id))

    def try_complete_join(self, group: GroupMetadata, force_complete: Callable[[], bool]) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#tryCompleteJoin: done when everyone has rejoined."""
        return force_complete() if group.has_all_members_joined() else False

    def on_complete_join(self, group: GroupMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onCompleteJoin.

        1. Dynamic members that did not rejoin are removed. 2. Dead: nothing to do. 3. Nobody rejoined
        but members remain: wait another rebalance timeout. 4. Otherwise the next generation:
        Empty (stored) or CompletingRebalance, every parked JoinGroup answered, sessions
        started, and each member expected to SyncGroup within the rebalance timeout.
        """
        # 1. Drop dynamic members that did not rejoin in time (static ones stay until their session ends).
        for failed in [m for m in group.not_yet_rejoined_members().values() if not m.is_static_member]:
            group.remove(failed.member_id)
            self._remove_heartbeat_for_leaving_member(group, failed.member_id)
            self._log.info("member_removed_not_rejoined", group_id=group.group_id, member_id=failed.member_id)
        # 2./3./4.
        if group.is_(Dead):
            self._log.info("group_dead_skipping_rebalance", group_id=group.group_id)
        elif not group.maybe_elect_new_joined_leader() and group.members:
            self._log.error("group_rebalance_no_member_rejoined", group_id=group.group_id)
            self.rebalance_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.rebalance_timeout_ms()), [GroupJoinKey(group.group_id)])
        else:
            group.init_next_generation()
            if group.is_(Empty):
                self._log.info("group_empty", group_id=group.group_id, generation_id=group.generation_id)

                def on_stored(error: Errors) -> None:
                    if error is not Errors.NONE:
                        self._log.warning("empty_group_metadata_write_failed", group_id=group.group_id, error=error.name)

                self.group_manager.store_group(group, {}, on_stored)
            else:
                self._log.info("group_stabilized", group_id=group.group_id, generation_id=group.generation_id,
                               members=group.size, leader=group.leader_or_null(), protocol=group.protocol_name)
                for member in group.all_member_metadata():
                    group.maybe_invoke_join_callback(member, self._join_result(group, member.member_id))
                    self._complete_and_schedule_next_heartbeat_expiration(group, member)
                    member.is_new = False
                    group.add_pending_sync_member(member.member_id)
                self._schedule_pending_sync(group)

    # -- pending SyncGroups -------------------------------------------------------------------------

    def _remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#removePendingSyncMember."""
        group.remove_pending_sync_member(member_id)
        self.rebalance_purgatory.check_and_complete(GroupSyncKey(group.group_id))

    def _remove_sync_expiration(self, group: GroupMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#removeSyncExpiration."""
        group.clear_pending_sync_members()
        self.rebalance_purgatory.check_and_complete(GroupSyncKey(group.group_id))

    def _schedule_pending_sync(self, group: GroupMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#schedulePendingSync."""
        self.rebalance_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms()), [GroupSyncKey(group.group_id)])

    def try_complete_pending_sync(self, group: GroupMetadata, generation_id: int, force_complete: Callable[[], bool]) -> bool:
        """Mirrors kafka.coordinator.group.GroupCoordinator#tryCompletePendingSync."""
        if generation_id != group.generation_id:
            return force_complete()
        if group.current_state in (Dead, Empty, PreparingRebalance):
            return force_complete()
        return force_complete() if group.has_received_sync_from_all_members() else False

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#onExpirePendingSync: members that never synced are removed."""
        if generation_id != group.generation_id or group.current_state in (Dead, Empty, PreparingRebalance):
            self._log.error("unexpected_sync_expiration", group_id=group.group_id, generation_id=generation_id,
                            state=str(group.current_state))
            return
        if not group.has_received_sync_from_all_members():
            pending = group.all_pending_sync_members()
            for member_id in pending:
                group.remove(member_id)
                self._remove_heartbeat_for_leaving_member(group, member_id)
            self.prepare_rebalance(group, f"Removing {sorted(pending)} on pending sync request expiration")
