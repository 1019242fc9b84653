"""A classic group: its state machine, members, generation, protocol and committed offsets.

Mirrors kafka.coordinator.group.GroupMetadata, GroupState (with the valid-previous-states
table), CommitRecordMetadataAndOffset and kafka.common.OffsetAndMetadata (Kafka 3.x; the
transactional offset-commit paths are not modelled).

The state machine (``VALID_PREVIOUS_STATES``, keyed by target state)::

    Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance
      ▲                 ▲      │                                   │        │
      │   no members    │      └─────────── (empty) ──▶ Empty      │ leader's SyncGroup
      └─────────────────┘ member change / failure ◀────────────────┤ stored
                        ▲                                          ▼
                        └──────────── member change / failure ── Stable
    any state ──unload / deletion──▶ Dead (final)

Kafka holds ``group.lock`` around every use; here one event loop runs everything, so a
synchronous method is atomic and no lock is needed.
"""

from __future__ import annotations

import enum
import random
import struct
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.errors import Errors, IllegalStateException  # noqa: F401 (re-exported)
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition

# Mirrors org.apache.kafka.clients.consumer.internals.ConsumerProtocol.PROTOCOL_TYPE.
CONSUMER_PROTOCOL_TYPE = "consumer"


class GroupState(enum.Enum):
    """Mirrors kafka.coordinator.group.GroupState and its five case objects.

    The value is the name Kafka prints (DescribeGroups, ListGroups, logs).
    """

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    def __str__(self) -> str:
        return self.value


# Mirrors org.apache.kafka.coordinator.group.Group.GroupType: the classic coordinator's groups
# are all "classic"; "consumer" groups belong to KIP-848's coordinator (not modelled).
CLASSIC_GROUP_TYPE = "classic"
CONSUMER_GROUP_TYPE = "consumer"
UNKNOWN_GROUP_TYPE = "unknown"


def parse_group_type(name: str | None) -> str:
    """Mirrors org.apache.kafka.coordinator.group.Group.GroupType#parse: case-insensitive, else "unknown"."""
    lowered = None if name is None else name.lower()
    return lowered if lowered in (CLASSIC_GROUP_TYPE, CONSUMER_GROUP_TYPE) else UNKNOWN_GROUP_TYPE


Empty = GroupState.EMPTY
PreparingRebalance = GroupState.PREPARING_REBALANCE
CompletingRebalance = GroupState.COMPLETING_REBALANCE
Stable = GroupState.STABLE
Dead = GroupState.DEAD

# Mirrors each GroupState's ``validPreviousStates``: target state -> states it may be entered from.
VALID_PREVIOUS_STATES: dict[GroupState, frozenset[GroupState]] = {
    Dead: frozenset({Stable, PreparingRebalance, CompletingRebalance, Empty, Dead}),
    CompletingRebalance: frozenset({PreparingRebalance}),
    Stable: frozenset({CompletingRebalance}),
    PreparingRebalance: frozenset({Stable, CompletingRebalance, Empty}),
    Empty: frozenset({PreparingRebalance}),
}


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """Mirrors kafka.common.OffsetAndMetadata (org.apache.kafka.coordinator.group.OffsetAndMetadata in 3.7+).

    A committed position: the next offset to consume, the leader epoch of the record before
    it (None when unknown), the client's metadata string, when it was committed, and (only
    for commits of the old v1 value format) an explicit expiry time.
    """

    offset: int
    leader_epoch: int | None = None
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class CommitRecordMetadataAndOffset:
    """Mirrors kafka.coordinator.group.CommitRecordMetadataAndOffset.

    A committed offset together with the log offset of the record that stored it, so the
    newer of two commits of the same partition can be told apart.
    """

    appended_batch_offset: int | None
    offset_and_metadata: OffsetAndMetadata

    def older_than(self, that: "CommitRecordMetadataAndOffset") -> bool:
        """Mirrors kafka.coordinator.group.CommitRecordMetadataAndOffset#olderThan."""
        assert self.appended_batch_offset is not None and that.appended_batch_offset is not None
        return self.appended_batch_offset < that.appended_batch_offset


class GroupMetadata:
    """Mirrors kafka.coordinator.group.GroupMetadata.

    Membership (members, pending members, leader, the protocol votes), the generation and
    state, and the committed offsets (plus commits still being written: ``pending_offset_commits``).
    """

    def __init__(self, group_id: str, initial_state: GroupState, time: Time, broker_id: int | None = None) -> None:
        self.group_id = group_id
        self.time = time
        self.state = initial_state
        self.current_state_timestamp: int | None = time.milliseconds()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, Any] = {}
        # Static membership (KIP-345): group instance id -> the member id currently holding it.
        self.static_members: dict[str, str] = {}
        self.pending_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        self.offsets: dict[TopicPartition, CommitRecordMetadataAndOffset] = {}
        self.pending_offset_commits: dict[TopicPartition, OffsetAndMetadata] = {}
        self.pending_sync_members: set[str] = set()
        self.new_member_added = False
        # Topics the members subscribe to (consumer protocol only; None: not known).
        self.subscribed_topics: set[str] | None = None
        context = {"group_id": group_id} if broker_id is None else {"broker_id": broker_id, "group_id": group_id}
        self._log = state_change_logger(**context)

    # -- simple queries ---------------------------------------------------------------------

    def summary(self) -> tuple[str, str, str, list[tuple[str, str | None, str, str, bytes, bytes]]]:
        """Mirrors kafka.coordinator.group.GroupMetadata#summary: (state, protocol type, protocol, members).

        Only a Stable group shows its protocol and each member's metadata and assignment.
        """
        # 1. Stable: the chosen protocol and full member summaries.
        if self.is_(GroupState.STABLE):
            if self.protocol_name is None:
                raise IllegalStateException("Invalid null group protocol for stable group")
            members = [m.summary(self.protocol_name) for m in self.members.values()]
            return str(self.state), self.protocol_type or "", self.protocol_name, members
        # 2. Otherwise no protocol and members without metadata.
        return str(self.state), self.protocol_type or "", "", [m.summary_no_metadata() for m in self.members.values()]

    def overview(self) -> tuple[str, str, str, str]:
        """Mirrors kafka.coordinator.group.GroupMetadata#overview: (group id, protocol type, state, type).

        Every group of this coordinator is a classic group (Group.GroupType.CLASSIC, "classic").
        """
        return self.group_id, self.protocol_type or "", str(self.state), CLASSIC_GROUP_TYPE

    def is_in_states(self, states: Iterable[str]) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#isInStates: ``states`` are lower-case names."""
        return str(self.state).lower() in states

    def is_(self, state: GroupState) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#is (``is`` is a Python keyword)."""
        return self.state is state

    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> Any:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def current_state(self) -> GroupState:
        return self.state

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def leader_or_null(self) -> str | None:
        return self.leader_id

    def current_state_timestamp_or_default(self) -> int:
        return -1 if self.current_state_timestamp is None else self.current_state_timestamp

    def all_members(self) -> set[str]:
        return set(self.members)

    def all_member_metadata(self) -> list[Any]:
        return list(self.members.values())

    @property
    def num_pending(self) -> int:
        return len(self.pending_members)

    @property
    def num_awaiting(self) -> int:
        return self.num_members_awaiting_join

    def rebalance_timeout_ms(self) -> int:
        """Mirrors kafka.coordinator.group.GroupMetadata#rebalanceTimeoutMs: the largest of the members'."""
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def not_yet_rejoined_members(self) -> dict[str, Any]:
        """Mirrors kafka.coordinator.group.GroupMetadata#notYetRejoinedMembers."""
        return {mid: m for mid, m in self.members.items() if not m.is_awaiting_join}

    def has_all_members_joined(self) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#hasAllMembersJoined."""
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    # -- membership -------------------------------------------------------------------------

    def add(self, member: Any, callback: Callable[[Any], None] | None = None) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#add.

        A static member's instance id is mapped to its member id (one member per instance id);
        the first member fixes the protocol type and becomes leader; the member's protocols
        gain a vote each.
        """
        # 0. A static member claims its group instance id.
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalStateException(f"Static member with groupInstanceId={member.group_instance_id} "
                                            f"cannot be added to group {self.group_id} since it is already a member")
            self.static_members[member.group_instance_id] = member.member_id
        # 1. The first member sets the group's protocol type.
        if not self.members:
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type, (self.protocol_type, member.protocol_type)
        assert self.supports_protocols(member.protocol_type, member.protocols()), member
        # 2. No leader yet: this member leads.
        if self.leader_id is None:
            self.leader_id = member.member_id
        # 3. Register it and count its protocol votes.
        self.members[member.member_id] = member
        for name, _ in member.supported_protocols:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        member.awaiting_join_callback = callback
        if member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        # 4. A pending member (KIP-394) that joins is pending no more.
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#remove: drop votes; a removed leader is replaced."""
        # 1. Take the member, its votes and its instance id out.
        member = self.members.pop(member_id, None)
        if member is not None:
            for name, _ in member.supported_protocols:
                self.supported_protocols[name] -= 1
            if member.is_awaiting_join:
                self.num_members_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        # 2. A leaving leader hands over to any remaining member (the first one here).
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        # 3. It is neither pending a join nor a sync any more.
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#maybeElectNewJoinedLeader.

        If the leader did not rejoin, any member that did takes over. False when the group
        has no leader or nobody rejoined.
        """
        if self.leader_id is None:
            return False
        current = self.members[self.leader_id]
        if current.is_awaiting_join:
            return True
        for member_id, member in self.members.items():
            if member.is_awaiting_join:
                self.leader_id = member_id
                self._log.info("group_leader_replaced", old_leader=current.member_id, new_leader=member_id)
                return True
        return False

    def replace_static_member(self, group_instance_id: str, old_member_id: str, new_member_id: str) -> Any:
        """Mirrors kafka.coordinator.group.GroupMetadata#replaceStaticMember.

        1. The member leaves under its old id (IllegalArgumentException if there is none); 2. a
        JoinGroup or SyncGroup it has parked (a duplicate instance) is answered FENCED_INSTANCE_ID;
        3. it comes back under the new id, as leader if it led; 4. the instance id maps to the new id.
        """
        from kafka_ref.coordinator.group.rebalance import JoinGroupResult, SyncGroupResult

        # 1. Out under the old id.
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        # 2. Fence whoever waits under the old id.
        self.maybe_invoke_join_callback(member, JoinGroupResult.of_error(old_member_id, Errors.FENCED_INSTANCE_ID))
        self.maybe_invoke_sync_callback(member, SyncGroupResult.of_error(Errors.FENCED_INSTANCE_ID))
        # 3. In under the new id.
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        # 4. The instance id follows.
        self.static_members[group_instance_id] = new_member_id
        return member

    def has_static_member(self, group_instance_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#hasStaticMember."""
        return group_instance_id in self.static_members

    def current_static_member_id(self, group_instance_id: str) -> str | None:
        """Mirrors kafka.coordinator.group.GroupMetadata#currentStaticMemberId."""
        return self.static_members.get(group_instance_id)

    def all_static_members(self) -> set[str]:
        """Mirrors kafka.coordinator.group.GroupMetadata#allStaticMembers: the group instance ids."""
        return set(self.static_members)

    def all_dynamic_members(self) -> set[str]:
        """Mirrors kafka.coordinator.group.GroupMetadata#allDynamicMembers: member ids without an instance id."""
        return set(self.members) - set(self.static_members.values())

    def is_static_member_fenced(self, group_instance_id: str, member_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#isStaticMemberFenced: the instance id is held by another member id."""
        current = self.static_members.get(group_instance_id)
        return current is not None and current != member_id

    def is_pending_member(self, member_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#isPendingMember (KIP-394)."""
        return member_id in self.pending_members and not self.has(member_id)

    def add_pending_member(self, member_id: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#addPendingMember: never for a member already in the group."""
        if self.has(member_id):
            raise IllegalStateException(f"Attempt to add pending member {member_id} which is already a stable member "
                                        f"of the group")
        added = member_id not in self.pending_members
        self.pending_members.add(member_id)
        return added

    def remove_pending_member(self, member_id: str) -> bool:
        removed = member_id in self.pending_members
        self.pending_members.discard(member_id)
        return removed

    def generate_member_id(self, client_id: str, group_instance_id: str | None, rng: random.Random) -> str:
        """Mirrors kafka.coordinator.group.GroupMetadata#generateMemberId: ``<client or instance id>-<uuid4>``."""
        prefix = client_id if group_instance_id is None else group_instance_id
        return f"{prefix}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"

    def update_member(self, member: Any, protocols: Iterable[tuple[str, bytes]], rebalance_timeout_ms: int,
                      session_timeout_ms: int, callback: Callable[[Any], None] | None) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#updateMember: new protocols, timeouts and join callback."""
        protocols = list(protocols)
        # 1. Move the votes from the old protocols to the new ones.
        for name, _ in member.supported_protocols:
            self.supported_protocols[name] -= 1
        for name, _ in protocols:
            self.supported_protocols[name] = self.supported_protocols.get(name, 0) + 1
        member.supported_protocols = protocols
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        # 2. Keep the count of parked JoinGroups right.
        if callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.awaiting_join_callback = callback

    def maybe_invoke_join_callback(self, member: Any, join_group_result: Any) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#maybeInvokeJoinCallback: answer a parked JoinGroup."""
        if member.is_awaiting_join:
            callback = member.awaiting_join_callback
            member.awaiting_join_callback = None
            self.num_members_awaiting_join -= 1
            callback(join_group_result)

    def maybe_invoke_sync_callback(self, member: Any, sync_group_result: Any) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#maybeInvokeSyncCallback; True if one was answered."""
        if member.is_awaiting_sync:
            callback = member.awaiting_sync_callback
            member.awaiting_sync_callback = None
            callback(sync_group_result)
            return True
        return False

    # -- pending SyncGroups (KAFKA-13127) ------------------------------------------------------

    def add_pending_sync_member(self, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#addPendingSyncMember: members only."""
        if not self.has(member_id):
            raise IllegalStateException(f"Attempt to add a pending sync for member {member_id} which is not a member "
                                        f"of the group")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#removePendingSyncMember: members only."""
        if not self.has(member_id):
            raise IllegalStateException(f"Attempt to remove a pending sync for member {member_id} which is not a "
                                        f"member of the group")
        self.pending_sync_members.discard(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def all_pending_sync_members(self) -> set[str]:
        return set(self.pending_sync_members)

    def clear_pending_sync_members(self) -> None:
        self.pending_sync_members.clear()

    # -- state machine ------------------------------------------------------------------------

    def can_rebalance(self) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#canRebalance: PreparingRebalance may be entered from here."""
        return self.state in VALID_PREVIOUS_STATES[PreparingRebalance]

    def transition_to(self, group_state: GroupState) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#transitionTo: checked against the table, timestamped."""
        # 1. Refuse transitions the table does not allow.
        self.assert_valid_transition(group_state)
        previous = self.state
        # 2. Move and stamp the time (offset expiration measures from here).
        self.state = group_state
        self.current_state_timestamp = self.time.milliseconds()
        self._log.info("group_state_change", from_state=str(previous), to_state=str(group_state),
                       generation_id=self.generation_id)

    def assert_valid_transition(self, target_state: GroupState) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#assertValidTransition."""
        allowed = VALID_PREVIOUS_STATES[target_state]
        if self.state not in allowed:
            raise IllegalStateException(
                f"Group {self.group_id} should be in the {','.join(sorted(str(s) for s in allowed))} states before "
                f"moving to {target_state} state. Instead it is in {self.state} state")

    # -- protocol selection -------------------------------------------------------------------

    def candidate_protocols(self) -> set[str]:
        """Mirrors kafka.coordinator.group.GroupMetadata#candidateProtocols: protocols every member supports."""
        n = len(self.members)
        return {name for name, votes in self.supported_protocols.items() if votes == n}

    def select_protocol(self) -> str:
        """Mirrors kafka.coordinator.group.GroupMetadata#selectProtocol.

        Each member votes for its most preferred candidate; the most votes win (ties go to
        the candidate that reached that count first in member order).
        """
        # 1. An empty group has nothing to choose.
        if not self.members:
            raise IllegalStateException("Cannot select protocol for empty group")
        # 2. Candidates: protocols all members support; 3. vote; 4. most votes wins.
        candidates = self.candidate_protocols()
        tally: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            tally[choice] = tally.get(choice, 0) + 1
        return max(tally, key=lambda name: tally[name])

    def supports_protocols(self, member_protocol_type: str, member_protocols: set[str]) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#supportsProtocols.

        An Empty group takes any non-empty protocol type with at least one protocol; otherwise
        the type must match and one of the member's protocols must be supported by everyone.
        """
        if self.is_(Empty):
            return bool(member_protocol_type) and bool(member_protocols)
        return (self.protocol_type == member_protocol_type
                and any(self.supported_protocols.get(p, 0) == len(self.members) for p in member_protocols))

    def init_next_generation(self) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#initNextGeneration.

        Generation + 1; with members the protocol is chosen and the group awaits the leader's
        assignment (CompletingRebalance), without members it becomes Empty. No SyncGroup of the
        old generation is awaited any more.
        """
        if self.members:
            self.generation_id += 1
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(CompletingRebalance)
        else:
            self.generation_id += 1
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(Empty)
        self.clear_pending_sync_members()

    def is_consumer_group(self) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#isConsumerGroup: the protocol type is "consumer"."""
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Mirrors kafka.coordinator.group.GroupMetadata#isSubscribedToTopic: unknown subscriptions count as subscribed."""
        return True if self.subscribed_topics is None else topic in self.subscribed_topics

    def compute_subscribed_topics(self) -> set[str] | None:
        """Mirrors kafka.coordinator.group.GroupMetadata#computeSubscribedTopics.

        1. A consumer group with members and a chosen protocol: the union of the topics in each
        member's subscription, read as the version-0 prefix every version shares; metadata that
        does not parse makes the subscriptions unknown (None). 2. A consumer group without
        members subscribes to nothing. 3. Any other group: unknown.
        """
        from kafka_ref.clients.consumer_protocol import ConsumerProtocol

        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        # 2. No members.
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        # 1. The union of the members' subscriptions.
        topics: set[str] = set()
        try:
            for member in self.members.values():
                topics.update(ConsumerProtocol.deserialize_subscription(member.metadata(self.protocol_name)).topics)
        except (struct.error, ValueError, TypeError, IndexError, UnicodeDecodeError) as exc:
            self._log.warning("subscribed_topics_unparsable", protocol_name=self.protocol_name, error=repr(exc))
            return None
        return topics

    def current_member_metadata(self) -> list[tuple[str, str | None, bytes]]:
        """Mirrors kafka.coordinator.group.GroupMetadata#currentMemberMetadata: (member id, instance id, metadata) for the leader."""
        if self.is_(Dead) or self.is_(PreparingRebalance):
            raise IllegalStateException(f"Cannot obtain member metadata for group in state {self.state}")
        assert self.protocol_name is not None
        return [(mid, m.group_instance_id, m.metadata(self.protocol_name)) for mid, m in self.members.items()]

    # -- offsets ------------------------------------------------------------------------------

    def initialize_offsets(self, offsets: Mapping[TopicPartition, CommitRecordMetadataAndOffset]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#initializeOffsets (loading)."""
        self.offsets.update(offsets)

    def on_offset_commit_append(self, tp: TopicPartition, record: CommitRecordMetadataAndOffset) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#onOffsetCommitAppend: a written commit becomes visible.

        Only a commit still pending is applied, and only if it is newer than the cached one.
        """
        # 1. Apply a pending commit unless a newer record is already cached.
        if tp in self.pending_offset_commits:
            if record.appended_batch_offset is None:
                raise IllegalStateException("Cannot complete offset commit write without providing the metadata of the record in the log.")
            current = self.offsets.get(tp)
            if current is None or current.older_than(record):
                self.offsets[tp] = record
        # 2. It is no longer pending if it is the commit we staged.
        if self.pending_offset_commits.get(tp) == record.offset_and_metadata:
            del self.pending_offset_commits[tp]

    def fail_pending_offset_write(self, tp: TopicPartition, offset: OffsetAndMetadata) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#failPendingOffsetWrite."""
        if self.pending_offset_commits.get(tp) == offset:
            del self.pending_offset_commits[tp]

    def prepare_offset_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        """Mirrors kafka.coordinator.group.GroupMetadata#prepareOffsetCommit: stage before the append."""
        self.pending_offset_commits.update(offsets)

    def has_pending_offset_commits_for_topic_partition(self, tp: TopicPartition) -> bool:
        return tp in self.pending_offset_commits

    def all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: r.offset_and_metadata for tp, r in self.offsets.items()}

    def offset(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        record = self.offsets.get(tp)
        return None if record is None else record.offset_and_metadata

    def offset_with_record_metadata(self, tp: TopicPartition) -> CommitRecordMetadataAndOffset | None:
        return self.offsets.get(tp)

    @property
    def num_offsets(self) -> int:
        return len(self.offsets)

    def has_offsets(self) -> bool:
        return bool(self.offsets) or bool(self.pending_offset_commits)

    def remove_offsets(self, topic_partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """Mirrors kafka.coordinator.group.GroupMetadata#removeOffsets: drop staged and committed offsets, return the removed."""
        removed = {}
        for tp in topic_partitions:
            self.pending_offset_commits.pop(tp, None)
            record = self.offsets.pop(tp, None)
            if record is not None:
                removed[tp] = record.offset_and_metadata
        return removed

    def remove_all_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Mirrors kafka.coordinator.group.GroupMetadata#removeAllOffsets."""
        return self.remove_offsets(list(self.offsets))

    def remove_expired_offsets(self, current_timestamp: int, offset_retention_ms: int) -> dict[TopicPartition, OffsetAndMetadata]:
        """Mirrors kafka.coordinator.group.GroupMetadata#removeExpiredOffsets.

        Drops and returns the committed offsets whose retention has run out. An offset with a
        commit still being written is never expired. An offset stored with an explicit expire
        timestamp (value version 1, old clients) expires once ``current_timestamp`` reaches it;
        any other expires ``offset_retention_ms`` after a base time that depends on the group:
        1. a group with a protocol type that is Empty: the time it became Empty (its state
        timestamp; the commit time when an old group record had none); 2. a Stable consumer
        group that knows its members' subscriptions: the commit time, and only offsets of topics
        nobody subscribes to any more; 3. a group with no protocol type (a "simple" consumer
        that only stores offsets): the commit time; 4. any other group: nothing expires.
        """
        def expired_offsets(base_timestamp: Callable[[CommitRecordMetadataAndOffset], int],
                            subscribed_topics: set[str] | frozenset[str] = frozenset()) -> dict[TopicPartition, OffsetAndMetadata]:
            expired: dict[TopicPartition, OffsetAndMetadata] = {}
            for tp, record in self.offsets.items():
                if tp.topic in subscribed_topics or tp in self.pending_offset_commits:
                    continue
                committed = record.offset_and_metadata
                if committed.expire_timestamp is None:
                    if current_timestamp - base_timestamp(record) >= offset_retention_ms:
                        expired[tp] = committed
                elif current_timestamp >= committed.expire_timestamp:
                    expired[tp] = committed
            return expired

        if self.protocol_type is not None and self.is_(Empty):
            # 1. Empty since its state timestamp (or, without one, since each commit).
            state_timestamp = self.current_state_timestamp
            expired = expired_offsets(lambda r: state_timestamp if state_timestamp is not None
                                      else r.offset_and_metadata.commit_timestamp)
        elif (self.protocol_type == CONSUMER_PROTOCOL_TYPE and self.subscribed_topics is not None
              and self.is_(Stable)):
            # 2. Active consumers: unsubscribed topics only, from their commit time.
            expired = expired_offsets(lambda r: r.offset_and_metadata.commit_timestamp, self.subscribed_topics)
        elif self.protocol_type is None:
            # 3. A simple consumer's offsets, from their commit time.
            expired = expired_offsets(lambda r: r.offset_and_metadata.commit_timestamp)
        else:
            # 4. Rebalancing, or members whose subscriptions are unknown.
            expired = {}
        for tp in expired:
            del self.offsets[tp]
        return expired

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def load_group(cls, group_id: str, initial_state: GroupState, generation_id: int, protocol_type: str | None,
                   protocol_name: str | None, leader_id: str | None, current_state_timestamp: int | None,
                   members: Iterable[Any], time: Time, broker_id: int | None = None) -> "GroupMetadata":
        """Mirrors kafka.coordinator.group.GroupMetadata#loadGroup: rebuild a group from its stored record."""
        group = cls(group_id, initial_state, time, broker_id)
        group.generation_id = generation_id
        group.protocol_type = protocol_type or None
        group.protocol_name = protocol_name
        group.leader_id = leader_id
        group.current_state_timestamp = current_state_timestamp
        for member in members:
            group.add(member, None)
        group.subscribed_topics = group.compute_subscribed_topics()
        return group

    def __repr__(self) -> str:
        return (f"GroupMetadata(group_id={self.group_id}, generation={self.generation_id}, "
                f"protocol_type={self.protocol_type}, current_state={self.state}, members={list(self.members)})")
