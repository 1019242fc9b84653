"""GroupCoordinator offsets, LeaveGroup (static members by instance id too), ListGroups/DescribeGroups/DeleteGroups
and KIP-134's initial delay, case by case after Kafka's GroupCoordinatorTest (Kafka 3.7).

The second half of tests/test_group_coordinator_kafka.py (same fixture, tests/helpers_group.py).
"""

from __future__ import annotations

import anyio
import pytest

from helpers_group import (
    DEAD_GROUP,
    FOLLOWER_INSTANCE_ID,
    GROUP,
    GROUP_INITIAL_REBALANCE_DELAY,
    LEADER_INSTANCE_ID,
    OTHER_GROUP,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    TOPIC0,
    offset_and_metadata,
    setup_group_with_pending_member,
    single_stable_member,
    started,
    static_members_join_and_rebalance,
    verify_leave_group_result,
)

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leave_group import MemberIdentity
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import OffsetConfig

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------------------------------ coordinator status

async def test_request_handling_while_loading_in_progress():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testRequestHandlingWhileLoadingInProgress."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        other_partition = f.manager.partition_for(OTHER_GROUP)
        assert other_partition != f.manager.partition_for(GROUP)
        f.manager.add_loading_partition(other_partition)
        assert f.manager.is_group_loading(OTHER_GROUP)
        dynamic = f.send_join("memberId", group_id=OTHER_GROUP, session=10000, rebalance=60000, require_known=True)
        assert dynamic.value.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
        static = f.send_join("memberId", instance_id="groupInstanceId", group_id=OTHER_GROUP, session=10000,
                             rebalance=60000)
        assert static.value.error is Errors.COORDINATOR_LOAD_IN_PROGRESS
        synced = f.send_sync("memberId", 1, protocol_type="consumer", protocol_name="range", group_id=OTHER_GROUP)
        assert synced.value.error is Errors.REBALANCE_IN_PROGRESS
        assert await f.commit("memberId", 1, {TOPIC0: offset_and_metadata(15)}, group_id=OTHER_GROUP) == \
            {TOPIC0: Errors.COORDINATOR_LOAD_IN_PROGRESS}
        assert f.heartbeat("memberId", 1, group_id=OTHER_GROUP) is Errors.NONE
        assert f.coordinator.handle_describe_group(OTHER_GROUP)[0] is Errors.COORDINATOR_LOAD_IN_PROGRESS
        assert f.coordinator.handle_list_groups(set())[0] is Errors.COORDINATOR_LOAD_IN_PROGRESS
        assert f.coordinator.handle_delete_groups([OTHER_GROUP]) == {OTHER_GROUP: Errors.COORDINATOR_LOAD_IN_PROGRESS}
        assert f.coordinator.handle_describe_group(GROUP)[0] is Errors.NONE       # other groups still served
        # Once loaded (nothing to read here: this broker has no log of that partition), it is served.
        tp = TopicPartition("__consumer_offsets", other_partition)
        f.manager.remove_groups_and_offsets(tp, 1, lambda group: None)
        await f.manager.load_groups_and_offsets(tp, 1, lambda group: None, 0)
        assert f.coordinator.handle_describe_group(OTHER_GROUP)[0] is Errors.NONE
        tg.cancel_scope.cancel()


def test_offsets_retention_ms_integer_overflow():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testOffsetsRetentionMsIntegerOverflow."""
    config = KafkaConfig({"broker.id": 0, "offsets.retention.minutes": 2**31 - 1})
    assert OffsetConfig.from_kafka_config(config).offsets_retention_ms == (2**31 - 1) * 60 * 1000


# ------------------------------------------------------------------------------------------ OffsetCommit / OffsetFetch

async def test_offset_commit_dead_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testOffsetCommitDeadGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        f.manager.add_group(GroupMetadata(DEAD_GROUP, Dead, MockTime()))
        assert await f.commit("memberId", 1, {TOPIC0: offset_and_metadata(0)}, group_id=DEAD_GROUP) == \
            {TOPIC0: Errors.COORDINATOR_NOT_AVAILABLE}
        tg.cancel_scope.cancel()


async def test_commit_offset_from_unknown_group_and_with_default_generation():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCommitOffsetFromUnknownGroup / #testCommitOffsetWithDefaultGeneration."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert await f.commit("memberId", 1, {TOPIC0: offset_and_metadata(0)}) == {TOPIC0: Errors.ILLEGAL_GENERATION}
        assert await f.commit("", -1, {TOPIC0: offset_and_metadata(0)}) == {TOPIC0: Errors.NONE}
        tg.cancel_scope.cancel()


async def test_commit_offsets_after_group_is_empty():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCommitOffsetsAfterGroupIsEmpty."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        verify_leave_group_result(f.single_leave(joined.member_id))
        assert await f.commit("", -1, {TOPIC0: offset_and_metadata(0)}) == {TOPIC0: Errors.NONE}
        error, data = f.coordinator.handle_fetch_offsets(GROUP, True, [TOPIC0])
        assert (error, data[TOPIC0].committed_offset) == (Errors.NONE, 0)
        tg.cancel_scope.cancel()


async def test_fetch_offsets():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testFetchOffsets."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        committed = offset_and_metadata(97, leader_epoch=15, metadata="some metadata")
        assert await f.commit("", -1, {TOPIC0: committed}) == {TOPIC0: Errors.NONE}
        error, data = f.coordinator.handle_fetch_offsets(GROUP, True, [TOPIC0])
        assert error is Errors.NONE
        assert (data[TOPIC0].committed_offset, data[TOPIC0].metadata, data[TOPIC0].committed_leader_epoch) == \
            (97, "some metadata", 15)
        tg.cancel_scope.cancel()


async def test_commit_and_fetch_offsets_with_empty_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCommitAndFetchOffsetsWithEmptyGroup (group id "")."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert f.manager.partition_for("") == f.manager.partition_for(GROUP)     # this broker's partition
        assert await f.commit("", -1, {TOPIC0: offset_and_metadata(0)}, group_id="") == {TOPIC0: Errors.NONE}
        error, data = f.coordinator.handle_fetch_offsets("", True, [TOPIC0])
        assert (error, data[TOPIC0].committed_offset) == (Errors.NONE, 0)
        error, summary = f.coordinator.handle_describe_group("")
        assert (error, summary[0]) == (Errors.NONE, str(Empty))
        assert f.coordinator.handle_delete_groups([""]) == {"": Errors.NONE}
        await f.settle()
        error, data = f.coordinator.handle_fetch_offsets("", True, [TOPIC0])
        assert (error, data[TOPIC0].committed_offset) == (Errors.NONE, -1)
        tg.cancel_scope.cancel()


async def test_fetch_offset_for_unknown_partition_and_not_coordinator():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testFetchOffsetForUnknownPartition / #testFetchOffsetNotCoordinatorForGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        error, data = f.coordinator.handle_fetch_offsets(GROUP, True, [TOPIC0])
        assert (error, data[TOPIC0].committed_offset) == (Errors.NONE, -1)
        assert f.coordinator.handle_fetch_offsets(OTHER_GROUP, True, [TOPIC0]) == (Errors.NOT_COORDINATOR, {})
        tg.cancel_scope.cancel()


async def test_fetch_all_offsets():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testFetchAllOffsets."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        tp1, tp2, tp3 = TopicPartition("topic", 0), TopicPartition("topic", 1), TopicPartition("other-topic", 0)
        assert f.coordinator.handle_fetch_offsets(GROUP, True) == (Errors.NONE, {})
        offsets = {tp1: offset_and_metadata(15), tp2: offset_and_metadata(16), tp3: offset_and_metadata(17)}
        assert await f.commit("", -1, offsets) == {tp1: Errors.NONE, tp2: Errors.NONE, tp3: Errors.NONE}
        error, data = f.coordinator.handle_fetch_offsets(GROUP, True)
        assert error is Errors.NONE and len(data) == 3
        assert all(d.error_code == 0 for d in data.values())
        assert {tp: d.committed_offset for tp, d in data.items()} == {tp1: 15, tp2: 16, tp3: 17}
        tg.cancel_scope.cancel()


async def test_commit_offset_in_completing_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testCommitOffsetInCompletingRebalance /
    #testCommitOffsetInCompletingRebalanceFromUnknownMemberId / #testCommitOffsetInCompletingRebalanceFromIllegalGeneration."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        offsets = {TOPIC0: offset_and_metadata(0)}
        assert await f.commit(joined.member_id, joined.generation_id, offsets) == {TOPIC0: Errors.REBALANCE_IN_PROGRESS}
        assert await f.commit("", joined.generation_id, offsets) == {TOPIC0: Errors.UNKNOWN_MEMBER_ID}
        assert await f.commit(joined.member_id, joined.generation_id + 1, offsets) == {TOPIC0: Errors.ILLEGAL_GENERATION}
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ LeaveGroup

async def test_leave_group_wrong_coordinator_unknown_group_unknown_consumer():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaveGroupWrongCoordinator / #testLeaveGroupUnknownGroup /
    #testLeaveGroupUnknownConsumerExistingGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        verify_leave_group_result(f.single_leave("", group_id=OTHER_GROUP), Errors.NOT_COORDINATOR)
        verify_leave_group_result(f.single_leave("memberId"), Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])
        assert (await f.dynamic_join()).error is Errors.NONE
        verify_leave_group_result(f.single_leave("consumerId"), Errors.NONE, [Errors.UNKNOWN_MEMBER_ID])
        tg.cancel_scope.cancel()


async def test_single_and_batch_leave_dead_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testSingleLeaveDeadGroup / #testBatchLeaveDeadGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        f.manager.add_group(GroupMetadata(DEAD_GROUP, Dead, MockTime()))
        verify_leave_group_result(f.single_leave("memberId", group_id=DEAD_GROUP), Errors.COORDINATOR_NOT_AVAILABLE)
        result = f.batch_leave([MemberIdentity(member_id="memberId"), MemberIdentity(member_id="memberId")], DEAD_GROUP)
        verify_leave_group_result(result, Errors.COORDINATOR_NOT_AVAILABLE)
        assert result.member_responses == ()
        tg.cancel_scope.cancel()


async def test_valid_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testValidLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        verify_leave_group_result(f.single_leave(joined.member_id), Errors.NONE, [Errors.NONE])
        tg.cancel_scope.cancel()


async def test_pending_member_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testPendingMemberBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        pending = await setup_group_with_pending_member(f)
        result = f.batch_leave([MemberIdentity(group_instance_id="unknown-instance"),
                                MemberIdentity(member_id=pending.member_id)])
        verify_leave_group_result(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ ListGroups / DescribeGroups / DeleteGroups

async def test_list_groups_includes_stable_and_rebalancing_groups():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testListGroupsIncludesRebalancingGroups / #testListGroupsIncludesStableGroups."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        assert f.coordinator.handle_list_groups(set()) == (Errors.NONE, [(GROUP, "consumer", "CompletingRebalance", "classic")])
        assert (await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})).error is Errors.NONE
        assert f.coordinator.handle_list_groups(set()) == (Errors.NONE, [(GROUP, "consumer", "Stable", "classic")])
        tg.cancel_scope.cancel()


async def test_list_groups_with_states():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testListGroupsWithStates."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        all_states = {str(s) for s in (PreparingRebalance, CompletingRebalance, Stable, Dead, Empty)}

        def listed(states):
            error, groups = f.coordinator.handle_list_groups(states)
            assert error is Errors.NONE
            return len(groups)

        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        assert (listed({"CompletingRebalance"}), listed(all_states - {"CompletingRebalance"})) == (1, 0)
        assert (await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})).error is Errors.NONE
        assert (listed({"Stable"}), listed(all_states - {"Stable"})) == (1, 0)
        verify_leave_group_result(f.single_leave(joined.member_id))
        assert (listed({"Empty"}), listed(all_states - {"Empty"})) == (1, 0)
        tg.cancel_scope.cancel()


async def test_describe_group_wrong_coordinator_and_inactive_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDescribeGroupWrongCoordinator / #testDescribeGroupInactiveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert f.coordinator.handle_describe_group(OTHER_GROUP)[0] is Errors.NOT_COORDINATOR
        assert f.coordinator.handle_describe_group(GROUP) == (Errors.NONE, ("Dead", "", "", []))
        tg.cancel_scope.cancel()


async def test_describe_group_stable_for_dynamic_member():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDescribeGroupStableForDynamicMember."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await single_stable_member(f)
        error, (state, protocol_type, protocol, members) = f.coordinator.handle_describe_group(GROUP)
        assert (error, state, protocol_type, protocol) == (Errors.NONE, "Stable", PROTOCOL_TYPE, "range")
        assert [m[0] for m in members] == [joined.member_id]
        tg.cancel_scope.cancel()


async def test_describe_group_rebalancing():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDescribeGroupRebalancing."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert joined.error is Errors.NONE
        error, (state, protocol_type, protocol, members) = f.coordinator.handle_describe_group(GROUP)
        assert (error, protocol_type, protocol, state) == (Errors.NONE, PROTOCOL_TYPE, "", "CompletingRebalance")
        assert joined.member_id in [m[0] for m in members]
        assert all(m[4] == b"" and m[5] == b"" for m in members)
        tg.cancel_scope.cancel()


async def test_delete_groups():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDeleteNonEmptyGroup / #testDeleteGroupWithInvalidGroupId /
    #testDeleteGroupWithWrongCoordinator / #testDeleteEmptyGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.dynamic_join()
        assert f.coordinator.handle_delete_groups([GROUP]) == {GROUP: Errors.NON_EMPTY_GROUP}
        assert f.coordinator.handle_delete_groups([None]) == {None: Errors.INVALID_GROUP_ID}
        assert f.coordinator.handle_delete_groups([OTHER_GROUP]) == {OTHER_GROUP: Errors.NOT_COORDINATOR}
        verify_leave_group_result(f.single_leave(joined.member_id))
        assert f.coordinator.handle_delete_groups([GROUP]) == {GROUP: Errors.NONE}
        tg.cancel_scope.cancel()


async def test_delete_empty_group_with_stored_offsets():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDeleteEmptyGroupWithStoredOffsets."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await single_stable_member(f)
        assert await f.commit(joined.member_id, joined.generation_id, {TOPIC0: offset_and_metadata(0)}) == \
            {TOPIC0: Errors.NONE}
        error, (state, _, _, members) = f.coordinator.handle_describe_group(GROUP)
        assert (error, state, members[0][0]) == (Errors.NONE, "Stable", joined.member_id)
        verify_leave_group_result(f.single_leave(joined.member_id))
        assert f.coordinator.handle_delete_groups([GROUP]) == {GROUP: Errors.NONE}
        assert f.coordinator.handle_describe_group(GROUP)[1][0] == "Dead"
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ KIP-134's initial delay

async def test_should_delay_initial_rebalance_by_group_initial_rebalance_delay_on_empty_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#shouldDelayInitialRebalanceByGroupInitialRebalanceDelayOnEmptyGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        answers = f.send_join()
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY // 2)
        assert not answers.done
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
        assert (await f.result(answers)).error is Errors.NONE
        tg.cancel_scope.cancel()


async def test_should_reset_rebalance_delay_when_new_member_joins_group_in_initial_rebalance():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#shouldResetRebalanceDelayWhenNewMemberJoinsGroupInInitialRebalance."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        rebalance = GROUP_INITIAL_REBALANCE_DELAY * 3
        first = f.send_join(rebalance=rebalance)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY - 1)
        second = f.send_join(rebalance=rebalance)
        await f.advance(2)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY // 2 + 1)
        assert not first.done and not second.done
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY // 2)
        assert ((await f.result(first)).error, (await f.result(second)).error) == (Errors.NONE, Errors.NONE)
        tg.cancel_scope.cancel()


async def test_should_delay_rebalance_upto_rebalance_timeout():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#shouldDelayRebalanceUptoRebalanceTimeout."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        rebalance = GROUP_INITIAL_REBALANCE_DELAY * 2
        first, second = f.send_join(rebalance=rebalance), f.send_join(rebalance=rebalance)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY + 1)
        third = f.send_join(rebalance=rebalance)
        await f.advance(GROUP_INITIAL_REBALANCE_DELAY)
        assert not (first.done or second.done or third.done)
        await f.advance(1)
        assert [(await f.result(a)).error for a in (first, second, third)] == [Errors.NONE] * 3
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------------------ LeaveGroup by instance id

async def test_leave_group_with_fenced_instance_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaveGroupWithFencedInstanceId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.static_join("", LEADER_INSTANCE_ID, PROTOCOL_SUPERSET)).error is Errors.NONE
        verify_leave_group_result(f.single_leave("some_member", LEADER_INSTANCE_ID), Errors.NONE,
                                  [Errors.FENCED_INSTANCE_ID])
        tg.cancel_scope.cancel()


async def test_leave_group_static_member_with_unknown_member_id():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testLeaveGroupStaticMemberWithUnknownMemberId."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        assert (await f.static_join("", LEADER_INSTANCE_ID, PROTOCOL_SUPERSET)).error is Errors.NONE
        verify_leave_group_result(f.single_leave("", LEADER_INSTANCE_ID), Errors.NONE, [Errors.NONE])
        tg.cancel_scope.cancel()


async def test_static_members_valid_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersValidBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await static_members_join_and_rebalance(f)
        result = f.batch_leave([MemberIdentity(group_instance_id=LEADER_INSTANCE_ID),
                                MemberIdentity(group_instance_id=FOLLOWER_INSTANCE_ID)])
        verify_leave_group_result(result, Errors.NONE, [Errors.NONE, Errors.NONE])
        assert [(m.member_id, m.group_instance_id) for m in result.member_responses] == \
            [("", LEADER_INSTANCE_ID), ("", FOLLOWER_INSTANCE_ID)]
        tg.cancel_scope.cancel()


async def test_static_members_wrong_coordinator_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersWrongCoordinatorBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await static_members_join_and_rebalance(f)
        result = f.batch_leave([MemberIdentity(group_instance_id=LEADER_INSTANCE_ID),
                                MemberIdentity(group_instance_id=FOLLOWER_INSTANCE_ID)], OTHER_GROUP)
        verify_leave_group_result(result, Errors.NOT_COORDINATOR)
        tg.cancel_scope.cancel()


async def test_static_members_unknown_group_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersUnknownGroupBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        result = f.batch_leave([MemberIdentity(group_instance_id=LEADER_INSTANCE_ID),
                                MemberIdentity(group_instance_id=FOLLOWER_INSTANCE_ID)])
        verify_leave_group_result(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID])
        tg.cancel_scope.cancel()


async def test_static_members_fenced_instance_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersFencedInstanceBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await static_members_join_and_rebalance(f)
        result = f.batch_leave([MemberIdentity(group_instance_id=LEADER_INSTANCE_ID),
                                MemberIdentity(member_id="invalid-member", group_instance_id=FOLLOWER_INSTANCE_ID)])
        verify_leave_group_result(result, Errors.NONE, [Errors.NONE, Errors.FENCED_INSTANCE_ID])
        tg.cancel_scope.cancel()


async def test_static_members_unknown_instance_batch_leave_group():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testStaticMembersUnknownInstanceBatchLeaveGroup."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        await static_members_join_and_rebalance(f)
        result = f.batch_leave([MemberIdentity(group_instance_id="unknown-instance"),
                                MemberIdentity(group_instance_id=FOLLOWER_INSTANCE_ID)])
        verify_leave_group_result(result, Errors.NONE, [Errors.UNKNOWN_MEMBER_ID, Errors.NONE])
        tg.cancel_scope.cancel()


async def test_describe_group_stable_for_static_member():
    """Mirrors kafka.coordinator.group.GroupCoordinatorTest#testDescribeGroupStableForStaticMember."""
    async with anyio.create_task_group() as tg:
        f = await started(tg)
        joined = await f.static_join("", LEADER_INSTANCE_ID, PROTOCOLS)
        assert joined.error is Errors.NONE
        synced = await f.sync_leader(joined.member_id, joined.generation_id, {joined.member_id: b""})
        assert synced.error is Errors.NONE
        error, (state, protocol_type, protocol, members) = f.coordinator.handle_describe_group(GROUP)
        assert (error, state, protocol_type, protocol) == (Errors.NONE, "Stable", PROTOCOL_TYPE, "range")
        assert [m[0] for m in members] == [joined.member_id]
        assert [m[1] for m in members] == [LEADER_INSTANCE_ID]
        tg.cancel_scope.cancel()
