"""The admin client's consumer-group and topic listings.

Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#listTopics, #listConsumerGroups,
#describeConsumerGroups, #listConsumerGroupOffsets, #alterConsumerGroupOffsets and #removeMembersFromConsumerGroup (Kafka 3.7, the classic group protocol) and
their result types. ``KafkaAdminClient`` (kafka_ref/clients/admin.py) calls these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from kafka_ref.clients.consumer_coordinator import PROTOCOL_TYPE, OffsetAndMetadata
from kafka_ref.clients.consumer_protocol import ConsumerProtocol
from kafka_ref.common.errors import Errors, InvalidGroupIdException
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


async def list_consumer_groups(admin: KafkaAdminClient, timeout_ms: float | None = None) -> list[ConsumerGroupListing]:
    """Mirrors KafkaAdminClient#listConsumerGroups (then ListConsumerGroupsResult#all).

    1. The live brokers from Metadata; 2. ListGroups to each (every broker coordinates some
    groups); a broker still loading is asked again, any other error fails the call; 3. the
    groups of the consumer protocol, or of none (simple groups, offsets only), sorted by id.
    """

    async def brokers(node: int, remaining_ms: int) -> list[int]:
        # 1. Who to ask.
        response = await admin.client.send(node, MetadataRequest.for_topics([], allow_auto_topic_creation=False),
                                           remaining_ms)
        return sorted(b.node_id for b in response.brokers)

    listings: dict[str, ConsumerGroupListing] = {}
    for broker in await admin._run_call("findAllBrokers", admin._least_loaded_node, brokers, timeout_ms):
        async def fixed(deadline: int, broker: int = broker) -> int:
            return broker

        async def attempt(node: int, remaining_ms: int) -> list[ConsumerGroupListing]:
            # 2. One broker's groups.
            response = await admin.client.send(node, ListGroupsRequest(), remaining_ms)
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
    again); 3. a group of another protocol type is refused (IllegalArgumentException in Kafka,
    here InvalidGroupIdException), any other error raises; members' assignments are decoded
    with the consumer protocol. A group that does not exist is described as Dead with no members,
    as the broker answers it.
    """
    groups = list(dict.fromkeys(group_ids))
    out: dict[str, ConsumerGroupDescription] = {}
    for group_id in groups:
        if not group_id:
            raise InvalidGroupIdException("The given group id '' cannot be null or empty.")

        async def coordinator(deadline: int, group_id: str = group_id) -> int:
            # 1. The group's coordinator.
            return await admin._find_group_coordinator(group_id, deadline)

        async def attempt(node: int, remaining_ms: int, group_id: str = group_id) -> ConsumerGroupDescription:
            # 2. Ask it.
            response = await admin.client.send(node, DescribeGroupsRequest(groups=(group_id,)), remaining_ms)
            described = next(g for g in response.groups if g.group_id == group_id)
            error = Errors.for_code(described.error_code)
            _raise_for(error, f"DescribeGroups failed for group {group_id}")
            # 3. Only consumer groups (or simple ones) are described.
            if described.protocol_type not in (PROTOCOL_TYPE, ""):
                raise InvalidGroupIdException(f"Group {group_id} is not a consumer group "
                                              f"(protocol type {described.protocol_type!r})")
            members = tuple(
                MemberDescription(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                  frozenset(ConsumerProtocol.deserialize_assignment(m.member_assignment).partitions))
                for m in described.members)
            return ConsumerGroupDescription(group_id, described.protocol_type == "", members, described.protocol_data,
                                            described.group_state, node)

        out[group_id] = await admin._run_call("describeConsumerGroups", coordinator, attempt, timeout_ms)
    return out


async def list_consumer_group_offsets(admin: KafkaAdminClient, group_id: str, partitions: Iterable[TopicPartition] | None,
                                      timeout_ms: float | None = None) -> dict[TopicPartition, OffsetAndMetadata]:
    """Mirrors KafkaAdminClient#listConsumerGroupOffsets (ListConsumerGroupOffsetsHandler; then
    #partitionsToOffsetAndMetadata).

    1. The group's coordinator; 2. OffsetFetch for the group (every committed partition, or the
    ones given); loading or a moved coordinator asks again, a group error raises; 3. partitions
    without a committed offset are left out, a partition error raises.
    """
    wanted = None if partitions is None else list(partitions)

    async def coordinator(deadline: int) -> int:
        # 1. The group's coordinator.
        return await admin._find_group_coordinator(group_id, deadline)

    async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, OffsetAndMetadata]:
        # 2. The group's offsets.
        response = await admin.client.send(node, OffsetFetchRequest.for_group(group_id, wanted), remaining_ms)
        group = response.group(group_id)
        error = Errors.for_code(group.error_code) if group is not None else Errors.UNKNOWN_SERVER_ERROR
        _raise_for(error, f"OffsetFetch failed for group {group_id}")
        # 3. Only committed partitions.
        result: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, data in group.partition_data().items():
            Errors.for_code(data.error_code).maybe_raise(f"OffsetFetch failed for partition {tp}")
            if data.committed_offset >= 0:
                result[tp] = OffsetAndMetadata(
                    data.committed_offset, None if data.committed_leader_epoch < 0 else data.committed_leader_epoch,
                    data.metadata or "")
        return result

    return await admin._run_call("listConsumerGroupOffsets", coordinator, attempt, timeout_ms)


async def alter_consumer_group_offsets(admin: KafkaAdminClient, group_id: str,
                                       offsets: dict[TopicPartition, OffsetAndMetadata],
                                       timeout_ms: float | None = None) -> None:
    """Mirrors KafkaAdminClient#alterConsumerGroupOffsets (AlterConsumerGroupOffsetsHandler; then #all).

    1. The group's coordinator; 2. one OffsetCommit without a generation or member (what an
    Empty group accepts; a group with members answers UNKNOWN_MEMBER_ID); loading, a rebalance
    or a moved coordinator asks again; 3. any partition's error raises, the first in the order
    given.
    """
    from kafka_ref.common.requests.offset_commit import OffsetCommitRequest

    retry = (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.REBALANCE_IN_PROGRESS, Errors.NOT_COORDINATOR,
             Errors.COORDINATOR_NOT_AVAILABLE)

    async def coordinator(deadline: int) -> int:
        # 1. The group's coordinator.
        return await admin._find_group_coordinator(group_id, deadline)

    async def attempt(node: int, remaining_ms: int) -> None:
        # 2. The commit, as a group that only stores offsets.
        request = OffsetCommitRequest.build(group_id, {
            tp: (o.offset, -1 if o.leader_epoch is None else o.leader_epoch, o.metadata) for tp, o in offsets.items()})
        errors = (await admin.client.send(node, request, remaining_ms)).partition_errors()
        for code in errors.values():
            if Errors.for_code(code) in retry:
                raise Errors.for_code(code).exception()
        # 3. The first failed partition raises.
        for tp in offsets:
            Errors.for_code(errors.get(tp, Errors.UNKNOWN_SERVER_ERROR.code)).maybe_raise(
                f"OffsetCommit failed for group {group_id} partition {tp}")

    await admin._run_call("alterConsumerGroupOffsets", coordinator, attempt, timeout_ms)


async def remove_members_from_consumer_group(admin: KafkaAdminClient, group_id: str,
                                             group_instance_ids: Iterable[str] | None,
                                             timeout_ms: float | None = None) -> None:
    """Mirrors KafkaAdminClient#removeMembersFromConsumerGroup (RemoveMembersFromConsumerGroupHandler; then #all).

    1. No instance ids given: every member of the group, as DescribeGroups lists it (a static
    member by its instance id, a dynamic one by its member id: the options' "remove all"); 2. one
    LeaveGroup (v3+, batched) at the group's coordinator, asked again while it loads or moves; a
    group error raises; 3. the first member error raises (UNKNOWN_MEMBER_ID for an instance id
    the group does not have).
    """
    from kafka_ref.common.requests.leave_group import LeaveGroupRequest, MemberIdentity

    reason = "member was removed by an admin"

    async def coordinator(deadline: int) -> int:
        return await admin._find_group_coordinator(group_id, deadline)

    async def attempt(node: int, remaining_ms: int) -> None:
        # 1. Who leaves.
        if group_instance_ids is None:
            described = (await admin.client.send(node, DescribeGroupsRequest(groups=(group_id,)), remaining_ms)).groups[0]
            error = Errors.for_code(described.error_code)
            _raise_for(error, f"DescribeGroups failed for group {group_id}")
            members = tuple(MemberIdentity(member_id="" if m.group_instance_id else m.member_id,
                                           group_instance_id=m.group_instance_id, reason=reason)
                            for m in described.members)
            if not members:
                return
        else:
            members = tuple(MemberIdentity(member_id="", group_instance_id=i, reason=reason) for i in group_instance_ids)
        # 2. One batched LeaveGroup.
        response = await admin.client.send(node, LeaveGroupRequest(group_id=group_id, members=members), remaining_ms)
        error = Errors.for_code(response.error_code)
        _raise_for(error, f"LeaveGroup failed for group {group_id}")
        # 3. Each member's answer.
        for member in response.members:
            Errors.for_code(member.error_code).maybe_raise(
                f"Member {member.group_instance_id or member.member_id} could not leave group {group_id}")

    await admin._run_call("removeMembersFromConsumerGroup", coordinator, attempt, timeout_ms)


__all__ = ["remove_members_from_consumer_group", "alter_consumer_group_offsets", "ConsumerGroupDescription", "ConsumerGroupListing", "MemberDescription", "describe_consumer_groups",
           "list_consumer_group_offsets", "list_consumer_groups", "list_topics"]
