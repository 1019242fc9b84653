"""GroupMetadata's state machine, membership, protocol selection and offset staging; MemberMetadata.

Mirrors kafka.coordinator.group.GroupMetadataTest and MemberMetadataTest (Kafka 3.x).
"""

from __future__ import annotations

import itertools
import random

import pytest

from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_metadata import (
    VALID_PREVIOUS_STATES,
    CommitRecordMetadataAndOffset,
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    GroupState,
    IllegalStateException,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.member_metadata import MemberMetadata

TP = TopicPartition("foo", 0)


def member(member_id: str, protocols=(("range", b"r"), ("roundrobin", b"rr")), protocol_type: str = "consumer") -> MemberMetadata:
    return MemberMetadata(member_id, None, "client", "/host", 10000, 6000, protocol_type, list(protocols))


@pytest.fixture
def group() -> GroupMetadata:
    return GroupMetadata("groupId", Empty, MockTime())


def move(group: GroupMetadata, *states: GroupState) -> None:
    for state in states:
        group.transition_to(state)


# ------------------------------------------------------------------------------------------ transitions

def test_valid_previous_states_table_is_kafkas():
    """The table of GroupState#validPreviousStates (Kafka 3.x)."""
    assert VALID_PREVIOUS_STATES == {
        Dead: {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
        CompletingRebalance: {PreparingRebalance},
        Stable: {CompletingRebalance},
        PreparingRebalance: {Stable, CompletingRebalance, Empty},
        Empty: {PreparingRebalance},
    }


# A path from Empty to each state through legal transitions only.
PATH_TO = {
    Empty: (),
    PreparingRebalance: (PreparingRebalance,),
    CompletingRebalance: (PreparingRebalance, CompletingRebalance),
    Stable: (PreparingRebalance, CompletingRebalance, Stable),
    Dead: (Dead,),
}


@pytest.mark.parametrize("source,target", list(itertools.product(list(GroupState), list(GroupState))))
def test_every_transition_is_allowed_exactly_when_the_table_says(group, source, target):
    """GroupMetadataTest#testCannot*Transition / #test*To*Transition, for all 25 pairs."""
    move(group, *PATH_TO[source])
    assert group.current_state is source
    if source in VALID_PREVIOUS_STATES[target]:
        group.transition_to(target)
        assert group.current_state is target
    else:
        with pytest.raises(IllegalStateException) as info:
            group.transition_to(target)
        assert f"before moving to {target} state. Instead it is in {source} state" in str(info.value)
        assert group.current_state is source


def test_illegal_transition_message_names_the_allowed_states(group):
    with pytest.raises(IllegalStateException,
                       match="Group groupId should be in the PreparingRebalance states before moving to "
                             "CompletingRebalance state. Instead it is in Empty state"):
        group.transition_to(CompletingRebalance)


@pytest.mark.parametrize("state,can", [(Empty, True), (PreparingRebalance, False), (CompletingRebalance, True),
                                       (Stable, True), (Dead, False)])
def test_can_rebalance(group, state, can):
    """GroupMetadataTest#testCanRebalanceWhen*."""
    move(group, *PATH_TO[state])
    assert group.can_rebalance() is can


def test_transition_stamps_the_state_time():
    time = MockTime(1000)
    group = GroupMetadata("g", Empty, time)
    time.advance(500)
    group.transition_to(PreparingRebalance)
    assert group.current_state_timestamp == 1500


# ------------------------------------------------------------------------------------------ protocols

def test_select_protocol(group):
    """GroupMetadataTest#testSelectProtocol: the most preferred among common protocols wins."""
    group.add(member("memberId"))
    assert group.select_protocol() == "range"
    group.add(member("otherMemberId", (("roundrobin", b""), ("range", b""))))
    assert group.select_protocol() in {"range", "roundrobin"}
    group.add(member("lastMemberId", (("roundrobin", b""), ("range", b""))))
    assert group.select_protocol() == "roundrobin"


def test_select_protocol_raises_if_no_members(group):
    """GroupMetadataTest#testSelectProtocolRaisesIfNoMembers."""
    with pytest.raises(IllegalStateException, match="Cannot select protocol for empty group"):
        group.select_protocol()


def test_select_protocol_chooses_compatible_protocol(group):
    """GroupMetadataTest#testSelectProtocolChoosesCompatibleProtocol."""
    group.add(member("memberId"))
    move(group, PreparingRebalance)
    group.add(member("otherMemberId", (("roundrobin", b""), ("blah", b""))))
    assert group.candidate_protocols() == {"roundrobin"}
    assert group.select_protocol() == "roundrobin"


def test_supports_protocols(group):
    """GroupMetadataTest#testSupportsProtocols."""
    # An Empty group accepts any non-empty protocol type with protocols.
    assert group.supports_protocols("consumer", {"range", "roundrobin"})
    assert not group.supports_protocols("", {"range"})
    assert not group.supports_protocols("consumer", set())
    group.add(member("memberId"))
    move(group, PreparingRebalance)
    assert group.supports_protocols("consumer", {"roundrobin", "foo"})
    assert not group.supports_protocols("consumer", {"foo", "bar"})
    assert not group.supports_protocols("invalid_type", {"roundrobin"})
    group.add(member("otherMemberId", (("roundrobin", b""),)))
    assert not group.supports_protocols("consumer", {"range", "foo"})


def test_update_member_moves_votes_and_join_count(group):
    m = member("m1")
    group.add(m, callback=lambda result: None)
    assert (group.num_awaiting, group.supported_protocols) == (1, {"range": 1, "roundrobin": 1})
    group.update_member(m, [("sticky", b"s")], 20000, 7000, None)
    assert (group.num_awaiting, group.supported_protocols) == (0, {"range": 0, "roundrobin": 0, "sticky": 1})
    assert (m.rebalance_timeout_ms, m.session_timeout_ms) == (20000, 7000)


def test_init_next_generation(group):
    """GroupMetadataTest#testInitNextGeneration / #testInitNextGenerationEmptyGroup."""
    group.add(member("memberId"))
    move(group, PreparingRebalance)
    group.init_next_generation()
    assert (group.generation_id, group.protocol_name, group.current_state) == (1, "range", CompletingRebalance)
    group.remove("memberId")
    move(group, PreparingRebalance)
    group.init_next_generation()
    assert (group.generation_id, group.protocol_name, group.current_state) == (2, None, Empty)


# ------------------------------------------------------------------------------------------ membership

def test_first_member_leads_and_leader_moves_on_removal(group):
    group.add(member("a"))
    group.add(member("b"))
    assert group.leader_or_null() == "a"
    group.remove("a")
    assert group.leader_or_null() == "b"
    group.remove("b")
    assert group.leader_or_null() is None


def test_maybe_elect_new_joined_leader(group):
    """GroupMetadataTest#testElectNewJoinedLeader / #testMaybeElectNewJoinedLeaderChooseExisting."""
    leader, follower = member("leader"), member("follower")
    group.add(leader)
    group.add(follower, callback=lambda r: None)
    assert group.maybe_elect_new_joined_leader() is True
    assert group.leader_or_null() == "follower"
    # Nobody awaiting join: no leader can be chosen.
    group.update_member(follower, follower.supported_protocols, 10000, 6000, None)
    assert group.maybe_elect_new_joined_leader() is False


def test_has_all_members_joined_counts_pending_members(group):
    m = member("m1")
    group.add(m, callback=lambda r: None)
    assert group.has_all_members_joined()
    group.add_pending_member("pending-1")
    assert group.is_pending_member("pending-1")
    assert not group.has_all_members_joined()
    group.add(member("pending-1"), callback=lambda r: None)
    assert not group.is_pending_member("pending-1")
    assert group.has_all_members_joined()


def test_invoke_join_and_sync_callbacks_once(group):
    answers = []
    m = member("m1")
    group.add(m, callback=answers.append)
    group.maybe_invoke_join_callback(m, "joined")
    group.maybe_invoke_join_callback(m, "again")
    assert answers == ["joined"] and group.num_awaiting == 0
    m.awaiting_sync_callback = answers.append
    assert group.maybe_invoke_sync_callback(m, "synced") is True
    assert group.maybe_invoke_sync_callback(m, "again") is False
    assert answers == ["joined", "synced"]


def test_generate_member_id_is_client_id_and_uuid(group):
    member_id = group.generate_member_id("consumer-1", None, random.Random(1))
    assert member_id.startswith("consumer-1-")
    assert len(member_id) == len("consumer-1-") + 36
    assert group.generate_member_id("consumer-1", None, random.Random(1)) == member_id


def test_current_member_metadata_requires_a_generation(group):
    group.add(member("m1"))
    move(group, PreparingRebalance)
    with pytest.raises(IllegalStateException, match="Cannot obtain member metadata for group in state PreparingRebalance"):
        group.current_member_metadata()
    group.init_next_generation()
    assert group.current_member_metadata() == [("m1", None, b"r")]


# ------------------------------------------------------------------------------------------ offsets

def test_offset_commit(group):
    """GroupMetadataTest#testOffsetCommit."""
    offset = OffsetAndMetadata(37, None, "", 1000)
    group.prepare_offset_commit({TP: offset})
    assert group.has_offsets() and group.offset(TP) is None
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(15, offset))
    assert group.offset(TP) == offset
    assert not group.has_pending_offset_commits_for_topic_partition(TP)


def test_offset_commit_failure(group):
    """GroupMetadataTest#testOffsetCommitFailure."""
    committed = OffsetAndMetadata(37, None, "", 1000)
    group.prepare_offset_commit({TP: committed})
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(3, committed))
    failed = OffsetAndMetadata(58, None, "", 2000)
    group.prepare_offset_commit({TP: failed})
    group.fail_pending_offset_write(TP, failed)
    assert group.offset(TP) == committed
    assert not group.has_pending_offset_commits_for_topic_partition(TP)


def test_offset_commit_with_another_pending(group):
    """GroupMetadataTest#testOffsetCommitWithAnotherPending: the newer log record wins."""
    first, second = OffsetAndMetadata(37, None, "", 1000), OffsetAndMetadata(57, None, "", 2000)
    group.prepare_offset_commit({TP: first})
    group.prepare_offset_commit({TP: second})
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(4, first))
    assert group.offset(TP) == first
    assert group.has_pending_offset_commits_for_topic_partition(TP)   # the second is still staged
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(5, second))
    assert group.offset(TP) == second
    # An older record arriving late does not win.
    group.prepare_offset_commit({TP: first})
    group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(4, first))
    assert group.offset(TP) == second


def test_completing_a_commit_needs_its_log_offset(group):
    offset = OffsetAndMetadata(1)
    group.prepare_offset_commit({TP: offset})
    with pytest.raises(IllegalStateException, match="without providing the metadata of the record"):
        group.on_offset_commit_append(TP, CommitRecordMetadataAndOffset(None, offset))


# ------------------------------------------------------------------------------------------ MemberMetadata

def test_member_matches_and_metadata():
    """MemberMetadataTest#testMatchesSupportedProtocols / #testMetadata / #testVote."""
    m = member("m1")
    assert m.matches([("range", b"r"), ("roundrobin", b"rr")])
    assert not m.matches([("roundrobin", b"rr"), ("range", b"r")])
    assert not m.matches([("range", b"x"), ("roundrobin", b"rr")])
    assert not m.matches([("range", b"r")])
    assert m.metadata("roundrobin") == b"rr"
    with pytest.raises(IllegalStateException):
        m.metadata("blah")
    assert m.vote({"roundrobin", "blah"}) == "roundrobin"
    with pytest.raises(IllegalStateException):
        m.vote({"blah"})


def test_member_has_satisfied_heartbeat():
    """MemberMetadataTest#testHasSatisfiedHeartbeat*."""
    m = member("m1")
    assert m.has_satisfied_heartbeat() is False
    m.awaiting_join_callback = lambda r: None
    assert m.has_satisfied_heartbeat() is True          # a parked JoinGroup counts as alive
    m.is_new = True
    assert m.has_satisfied_heartbeat() is False         # ... but not for a new member
    m.heartbeat_satisfied = True
    assert m.has_satisfied_heartbeat() is True


# ------------------------------------------------------------------------------------------ static members, pending members and syncs

def static_member(member_id: str = "memberId", protocols=(("range", b""), ("roundrobin", b""))) -> MemberMetadata:
    return MemberMetadata(member_id, "groupInstanceId", "clientId", "clientHost", 60000, 10000, "consumer", list(protocols))


def test_replace_group_instance(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testReplaceGroupInstance."""
    from kafka_ref.common.errors import Errors

    m = static_member()
    fenced = {}
    group.add(m, lambda result: fenced.setdefault("join", result.error))
    m.awaiting_sync_callback = lambda result: fenced.setdefault("sync", result.error)
    assert group.is_leader("memberId") and group.current_static_member_id("groupInstanceId") == "memberId"
    group.replace_static_member("groupInstanceId", "memberId", "newMemberId")
    assert group.is_leader("newMemberId") and group.current_static_member_id("groupInstanceId") == "newMemberId"
    assert fenced == {"join": Errors.FENCED_INSTANCE_ID, "sync": Errors.FENCED_INSTANCE_ID}
    assert not m.is_awaiting_join and not m.is_awaiting_sync


def test_replace_group_instance_with_non_existing_member(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testReplaceGroupInstanceWithNonExistingMember (IllegalArgumentException)."""
    with pytest.raises(ValueError):
        group.replace_static_member("groupInstanceId", "memberId", "newMemberId")


def test_cannot_add_static_member_if_already_present(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testCannotAddStaticMemberIfAlreadyPresent."""
    m = static_member(protocols=(("range", b""),))
    group.add(m)
    assert group.has("memberId") and group.has_static_member("groupInstanceId")
    with pytest.raises(IllegalStateException):
        group.add(m)


def test_cannot_add_pending_member_if_stable(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testCannotAddPendingMemberIfStable."""
    group.add(MemberMetadata("memberId", None, "clientId", "clientHost", 60000, 10000, "consumer", [("range", b"")]))
    with pytest.raises(IllegalStateException):
        group.add_pending_member("memberId")


def test_removal_from_pending_when_member_is_removed(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testRemovalFromPendingWhenMemberIsRemoved."""
    group.add_pending_member("memberId")
    assert not group.has("memberId") and group.is_pending_member("memberId")
    group.remove("memberId")
    assert not group.has("memberId") and not group.is_pending_member("memberId")


def test_can_add_and_remove_pending_sync_member(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testCanAddAndRemovePendingSyncMember."""
    group.add(static_member(protocols=(("range", b""),)))
    group.add_pending_sync_member("memberId")
    assert group.all_pending_sync_members() == {"memberId"}
    group.remove_pending_sync_member("memberId")
    assert group.all_pending_sync_members() == set()


def test_cannot_add_or_remove_pending_sync_of_unknown_member(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testCannotAddPendingSyncOfUnknownMember /
    #testCannotRemovePendingSyncOfUnknownMember."""
    with pytest.raises(IllegalStateException):
        group.add_pending_sync_member("memberId")
    with pytest.raises(IllegalStateException):
        group.remove_pending_sync_member("memberId")


def test_removal_from_pending_sync_when_member_is_removed(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testRemovalFromPendingSyncWhenMemberIsRemoved."""
    group.add(static_member(protocols=(("range", b""),)))
    group.add_pending_sync_member("memberId")
    group.remove("memberId")
    assert group.all_pending_sync_members() == set()
    assert not group.has_static_member("groupInstanceId")


def test_new_generation_clears_pending_sync_members(group):
    """Mirrors kafka.coordinator.group.GroupMetadataTest#testNewGenerationClearsPendingSyncMembers."""
    group.add(static_member(protocols=(("range", b""),)))
    group.transition_to(PreparingRebalance)
    group.add_pending_sync_member("memberId")
    assert group.all_pending_sync_members() == {"memberId"}
    group.init_next_generation()
    assert group.all_pending_sync_members() == set()


def test_load_group_with_static_member():
    """Mirrors kafka.coordinator.group.GroupMetadataManagerTest#testloadGroupWithStaticMember (GroupMetadata#loadGroup)."""
    static = MemberMetadata("staticMemberId", "bar", "", "", 60000, 10000, "consumer", [("protocol", b"")])
    dynamic = MemberMetadata("dynamicMemberId", None, "", "", 60000, 10000, "consumer", [("protocol", b"")])
    group = GroupMetadata.load_group("groupId", Empty, 27, "consumer", None, None, None, [static, dynamic], MockTime())
    assert group.is_(Empty) and group.generation_id == 27 and group.protocol_type == "consumer"
    assert group.has("staticMemberId") and group.has("dynamicMemberId")
    assert group.has_static_member("bar") and group.current_static_member_id("bar") == "staticMemberId"
