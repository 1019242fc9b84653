"""The admin client's consumer-group and topic listings.

Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#listTopics, #listConsumerGroups,
#describeConsumerGroups, #listConsumerGroupOffsets, #alterConsumerGroupOffsets and #removeMembersFromConsumerGroup (Kafka 3.7, the classic group protocol) and
their result types. ``KafkaAdminClient`` (kafka_ref/clients/admin.py) calls these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from kafka_ref.clients.admin import _GroupCoordinatorProvider
from kafka_ref.clients.consumer_coordinator import PROTOCOL_TYPE
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata
from kafka_ref.clients.consumer_protocol import ConsumerProtocol
from kafka_ref.common.errors import Errors, InvalidGroupIdException, RetriableException, StaleMetadataException
from kafka_ref.common.requests.describe_groups import DescribeGroupsRequest
from kafka_ref.common.requests.list_groups import ListGroupsRequest
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.clients.admin import KafkaAdminClient

# Errors after which a group call asks again (the coordinator moved, is loading, or is not there yet).
_COORDINATOR_RETRY = (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE)


def _raise_for(error: Errors, message: str, retry: tuple[Errors, ...] = _COORDINATOR_RETRY) -> None:
    """A retriable group error raises its own exception (the admin call asks again); any other
    error raises with ``message``; NONE returns."""
    if error in retry:
        raise error.exception()
    error.maybe_raise(message)


@dataclass(frozen=True, slots=True)
class ConsumerGroupListing:
    """Mirrors org.apache.kafka.clients.admin.ConsumerGroupListing (state as the broker names it)."""

    group_id: str
    is_simple_consumer_group: bool
    state: str


@dataclass(frozen=True, slots=True)
class MemberDescription:
    """Mirrors org.apache.kafka.clients.admin.MemberDescription (assignment: the member's partitions)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: frozenset[TopicPartition]


@dataclass(frozen=True, slots=True)
class ConsumerGroupDescription:
    """Mirrors org.apache.kafka.clients.admin.ConsumerGroupDescription."""

    group_id: str
    is_simple_consumer_group: bool
    members: tuple[MemberDescription, ...]
    partition_assignor: str
    state: str
    coordinator: int


async def list_topics(admin: KafkaAdminClient, list_internal: bool = False,
                      timeout_ms: float | None = None) -> set[str]:
    """Mirrors KafkaAdminClient#listTopics (then ListTopicsResult#names): one Metadata request for
    every topic; internal topics only when asked (ListTopicsOptions#listInternal)."""

    async def attempt(node: int, remaining_ms: int) -> set[str]:
        response = await admin.client.send(node, MetadataRequest.all_topics(), remaining_ms)
        return {t.name for t in response.topics
                if t.error_code == Errors.NONE.code and (list_internal or not t.is_internal)}

    return await admin._run_call("listTopics", admin._least_loaded_node, attempt, timeout_ms)


async def list_consumer_groups(admin: KafkaAdminClient, timeout_ms: float | None = None,
                               states: Iterable[str] = ()) -> list[ConsumerGroupListing]:
    """Mirrors KafkaAdminClient#listConsumerGroups (then ListConsumerGroupsResult#all).

    1. The live brokers from Metadata (none listed: retried); 2. ListGroups to each (every broker coordinates some
    groups), carrying ListConsumerGroupsOptions#inStates as its states filter (empty: every
    state); a broker still loading is asked again, any other error fails the call; 3. the
    groups of the consumer protocol, or of none (simple groups, offsets only), sorted by id.
    """
    states = tuple(states)

    async def brokers(node: int, remaining_ms: int) -> list[int]:
        # 1. Who to ask; an answer without brokers is stale metadata (retried: findAllBrokers).
        response = await admin.client.send(node, MetadataRequest.for_topics([], allow_auto_topic_creation=False),
                                           remaining_ms)
        if not response.brokers:
            raise StaleMetadataException("Metadata fetch failed due to missing broker list")
        return sorted(b.node_id for b in response.brokers)

    listings: dict[str, ConsumerGroupListing] = {}
    for broker in await admin._run_call("findAllBrokers", admin._least_loaded_node, brokers, timeout_ms):
        async def fixed(deadline: int, broker: int = broker) -> int:
            return broker

        async def attempt(node: int, remaining_ms: int) -> list[ConsumerGroupListing]:
            # 2. One broker's groups.
            response = await admin.client.send(node, ListGroupsRequest(states_filter=states), remaining_ms)
            error = Errors.for_code(response.error_code)
            _raise_for(error, f"ListGroups failed on broker {node}")
            return [ConsumerGroupListing(g.group_id, g.protocol_type == "", g.group_state)
                    for g in response.groups if g.protocol_type in (PROTOCOL_TYPE, "")]

        for listing in await admin._run_call("listConsumerGroups", fixed, attempt, timeout_ms):
            listings[listing.group_id] = listing
    # 3. Every broker's consumer groups.
    return [listings[g] for g in sorted(listings)]


async def describe_consumer_groups(admin: KafkaAdminClient, group_ids: Iterable[str],
                                   timeout_ms: float | None = None) -> dict[str, ConsumerGroupDescription]:
    """Mirrors KafkaAdminClient#describeConsumerGroups (DescribeConsumerGroupsHandler; then #all).

    Per group: 1. its coordinator; 2. DescribeGroups there (loading or a moved coordinator: ask
    again); 3. a group of another protocol type is refused (ValueError, Kafka's
    IllegalArgumentException), any other error raises; members' assignments are decoded
    with the consumer protocol. A group that does not exist is described as Dead with no members,
    as the broker answers it.
    """
    groups = list(dict.fromkeys(group_ids))
    out: dict[str, ConsumerGroupDescription] = {}
    for group_id in groups:
        if not group_id:
            raise InvalidGroupIdException("The given group id '' cannot be null or empty.")

        # 1. The group's coordinator (kept while it answers, looked up again when it moved).
        coordinator = _GroupCoordinatorProvider(admin, group_id)

        async def attempt(node: int, remaining_ms: int, group_id: str = group_id) -> ConsumerGroupDescription:
            # 2. Ask it.
            response = await admin.client.send(node, DescribeGroupsRequest(groups=(group_id,)), remaining_ms)
            described = next(g for g in response.groups if g.group_id == group_id)
            error = Errors.for_code(described.error_code)
            _raise_for(error, f"DescribeGroups failed for group {group_id}")
            # 3. Only consumer groups (or simple ones) are described.
            if described.protocol_type not in (PROTOCOL_TYPE, ""):
                raise ValueError(f"GroupId {group_id} is not a consumer group ({described.protocol_type}).")
            members = tuple(
                MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                  frozenset(ConsumerProtocol.deserialize_assignment(m.member_assignment).partitions))
                for m in described.members)
            return ConsumerGroupDescription(group_id, described.protocol_type == "", members, described.protocol_data,
                                            described.group_state, node)

        out[group_id] = await admin._run_call("describeConsumerGroups", coordinator, attempt, timeout_ms)
    return out


async def list_consumer_group_offsets(admin: KafkaAdminClient, group_id: str, partitions: Iterable[TopicPartition] | None,
                                      timeout_ms: float | None = None, require_stable: bool = False
                                      ) -> dict[TopicPartition, OffsetAndMetadata | None]:
    """Mirrors KafkaAdminClient#listConsumerGroupOffsets (ListConsumerGroupOffsetsHandler; then
    #partitionsToOffsetAndMetadata).

    1. The group's coordinator; 2. OffsetFetch for the group (every committed partition, or the
    ones given; ``require_stable``: ListConsumerGroupOffsetsOptions#requireStable); loading asks the coordinator again, a moved one is looked up again, a group
    error raises; 3. every partition answered maps to its offset, or to None when it has no
    committed offset (asked for by name); a partition error skips that partition.
    """
    wanted = None if partitions is None else list(partitions)

    # 1. The group's coordinator (kept while it answers, looked up again when it moved).
    coordinator = _GroupCoordinatorProvider(admin, group_id)

    async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, OffsetAndMetadata | None]:
        # 2. The group's offsets.
        response = await admin.client.send(node, OffsetFetchRequest.for_group(group_id, wanted, require_stable=require_stable),
                                           remaining_ms)
        group = response.group(group_id)
        error = Errors.for_code(group.error_code) if group is not None else Errors.UNKNOWN_SERVER_ERROR
        _raise_for(error, f"OffsetFetch failed for group {group_id}")
        # 3. Each partition answered: its offset, None when nothing is committed (a negative
        #    offset); a partition in error is skipped with a warning.
        result: dict[TopicPartition, OffsetAndMetadata | None] = {}
        for tp, data in group.partition_data().items():
            if data.error_code != Errors.NONE.code:
                admin._log.warning("list_consumer_group_offsets_skipped_partition", group=group_id, partition=str(tp),
                                   error=Errors.for_code(data.error_code).name)
                continue
            result[tp] = None if data.committed_offset < 0 else OffsetAndMetadata(
                data.committed_offset, None if data.committed_leader_epoch < 0 else data.committed_leader_epoch,
                data.metadata or "")
        return result

    return await admin._run_call("listConsumerGroupOffsets", coordinator, attempt, timeout_ms)


async def alter_consumer_group_offsets(admin: KafkaAdminClient, group_id: str,
                                       offsets: dict[TopicPartition, OffsetAndMetadata],
                                       timeout_ms: float | None = None) -> None:
    """Mirrors KafkaAdminClient#alterConsumerGroupOffsets (AlterConsumerGroupOffsetsHandler; then #all).

    1. The group's coordinator; 2. one OffsetCommit without a generation or member (what an
    Empty group accepts; a group with members answers UNKNOWN_MEMBER_ID); loading or a rebalance
    asks the same coordinator again, a moved or missing one is looked up again; 3. any other
    partition error is that partition's result (not retried) and the first, in the order given,
    raises.
    """
    from kafka_ref.common.requests.offset_commit import OffsetCommitRequest

    # 1. The group's coordinator (kept while it answers, looked up again when it moved).
    coordinator = _GroupCoordinatorProvider(admin, group_id)

    async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, int]:
        # 2. The commit, as a group that only stores offsets.
        request = OffsetCommitRequest.build(group_id, {
            tp: (o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata) for tp, o in offsets.items()})
        errors = (await admin.client.send(node, request, remaining_ms)).partition_errors()
        # A moved or missing coordinator is looked up again; a loading one or a rebalance is
        # asked again as it is (the handler's groupsToUnmap / groupsToRetry).
        for code in errors.values():
            error = Errors.for_code(code)
            if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS):
                raise error.exception()
            if error is Errors.REBALANCE_IN_PROGRESS:
                raise RetriableException(f"OffsetCommit for group {group_id} met a rebalance; retrying")
        return errors

    errors = await admin._run_call("alterConsumerGroupOffsets", coordinator, attempt, timeout_ms)
    # 3. The first failed partition raises (each error is that partition's result, never retried).
    for tp in offsets:
        Errors.for_code(errors.get(tp, Errors.UNKNOWN_SERVER_ERROR.code)).maybe_raise(
            f"OffsetCommit failed for group {group_id} partition {tp}")


# KafkaAdminClient#DEFAULT_LEAVE_GROUP_REASON.
DEFAULT_LEAVE_GROUP_REASON = "member was removed by an admin"


async def remove_members_from_consumer_group(admin: KafkaAdminClient, group_id: str,
                                             group_instance_ids: Iterable[str] | None,
                                             timeout_ms: float | None = None, reason: str | None = None) -> None:
    """Mirrors KafkaAdminClient#removeMembersFromConsumerGroup (RemoveMembersFromConsumerGroupHandler; then
    RemoveMembersFromConsumerGroupResult#all).

    1. No instance ids given ("remove all"): every member describeConsumerGroups lists (a static
    member by its instance id, a dynamic one by its member id; a failed describe raises
    KafkaException with it as the cause); 2. one LeaveGroup (v3+, batched) at the group's
    coordinator, asked again while it loads or moves; a group error raises; 3. per member: when
    removing all, the first member error raises as the cause of a KafkaException; otherwise, in
    the order given, a member the response leaves out raises ValueError (Kafka's
    IllegalArgumentException) and a member error raises (UNKNOWN_MEMBER_ID for an instance id
    the group does not have).
    """
    from kafka_ref.common.errors import KafkaException
    from kafka_ref.common.requests.join_group import JoinGroupRequest
    from kafka_ref.common.requests.leave_group import LeaveGroupRequest, MemberIdentity

    # The options' reason, cut to 255 characters; none or an empty one: the default.
    reason = DEFAULT_LEAVE_GROUP_REASON if not reason else JoinGroupRequest.maybe_truncate_reason(reason)
    remove_all = group_instance_ids is None
    # 1. Who leaves.
    if remove_all:
        try:
            described = (await describe_consumer_groups(admin, [group_id], timeout_ms))[group_id]
        except KafkaException as exc:
            raise KafkaException(f"Encounter exception when trying to get members from group: {group_id}") from exc
        members = tuple(MemberIdentity(member_id="" if m.group_instance_id else m.member_id,
                                       group_instance_id=m.group_instance_id, reason=reason)
                        for m in described.members)
        if not members:
            return
    else:
        members = tuple(MemberIdentity(member_id="", group_instance_id=i, reason=reason) for i in group_instance_ids)
    coordinator = _GroupCoordinatorProvider(admin, group_id)

    async def attempt(node: int, remaining_ms: int) -> dict[tuple[str, str | None], int]:
        # 2. One batched LeaveGroup.
        response = await admin.client.send(node, LeaveGroupRequest(group_id=group_id, members=members), remaining_ms)
        error = Errors.for_code(response.error_code)
        _raise_for(error, f"LeaveGroup failed for group {group_id}")
        return {(m.member_id, m.group_instance_id): m.error_code for m in response.members}

    member_errors = await admin._run_call("removeMembersFromConsumerGroup", coordinator, attempt, timeout_ms)
    # 3. Each member's answer.
    if remove_all:
        for (member_id, instance_id), code in member_errors.items():
            exception = Errors.for_code(code).exception() if code != Errors.NONE.code else None
            if exception is not None:
                raise KafkaException(f"Encounter exception when trying to remove: MemberIdentity(memberId='{member_id}', "
                                     f"groupInstanceId='{instance_id}')") from exception
        return
    for member in members:
        code = member_errors.get((member.member_id, member.group_instance_id))
        if code is None:
            raise ValueError(f"Member \"MemberIdentity(memberId='{member.member_id}', groupInstanceId="
                             f"'{member.group_instance_id}')\" was not included in the removal response")
        Errors.for_code(code).maybe_raise(f"Member {member.group_instance_id} could not leave group {group_id}")


__all__ = ["remove_members_from_consumer_group", "alter_consumer_group_offsets", "ConsumerGroupDescription", "ConsumerGroupListing", "MemberDescription", "describe_consumer_groups",
           "list_consumer_group_offsets", "list_consumer_groups", "list_topics"]
