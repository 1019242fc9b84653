"""The classic group APIs at every version, over a real socket (`kafka-ref serve`'s listener).

Ports of Kafka 3.8.0's ``JoinGroupRequestTest``, ``SyncGroupRequestTest``, ``HeartbeatRequestTest``
and ``LeaveGroupRequestTest`` (their helpers live in ``GroupCoordinatorBaseRequestTest``). Each Kafka
test walks one group through joins, syncs, heartbeats and leaves once per version of the API under
test, so the requests go over the wire where the version reaches the broker as the envelope's
``api_version``: JoinGroup v0-v3 add a member id-less member at once while v4+ answer
MEMBER_ID_REQUIRED, protocol names are "" rather than null before JoinGroup v7, SyncGroup v5+
checks and echoes the protocol type and name, LeaveGroup before v3 carries one member and only a
top-level error. The helper requests Kafka sends at the latest version (DescribeGroups,
DeleteGroups, the joins of the SyncGroup and Heartbeat tests) go at kafka_ref's latest too.

Kafka runs each test against the classic coordinator and against KIP-848's new coordinator with
the classic protocol ("OldConsumerGroupProtocolAndNewGroupCoordinator"); both expect the same
answers and kafka_ref models only the classic coordinator, so each is ported once, in ZooKeeper and
KRaft mode. As in Kafka's test harness, group.initial.rebalance.delay.ms is 0 and the offsets topic
has one partition with one replica, created up front. One more port checks the whole JoinGroup
answer of KafkaApisTest#rejectJoinGroupRequestWhenStaticMembershipNotSupported at the versions that
carry a group instance id (that test itself only checks the error code).

Not ported:
- the base class's new-protocol helpers (ConsumerGroupHeartbeat, joinConsumerGroupWithNewProtocol,
  leaveGroupWithNewProtocol): KIP-848's consumer protocol is not modelled, and none of the four
  classic-protocol tests uses them.
"""

from __future__ import annotations

import struct
from typing import Any

import anyio
import pytest
from kafka.protocol.admin import DeleteGroupsRequest as KDeleteGroupsRequest
from kafka.protocol.admin import DeleteGroupsResponse as KDeleteGroupsResponse
from kafka.protocol.admin import DescribeGroupsRequest as KDescribeGroupsRequest
from kafka.protocol.admin import DescribeGroupsResponse as KDescribeGroupsResponse
from kafka.protocol.consumer import HeartbeatRequest as KHeartbeatRequest
from kafka.protocol.consumer import HeartbeatResponse as KHeartbeatResponse
from kafka.protocol.consumer import JoinGroupRequest as KJoinGroupRequest
from kafka.protocol.consumer import JoinGroupResponse as KJoinGroupResponse
from kafka.protocol.consumer import LeaveGroupRequest as KLeaveGroupRequest
from kafka.protocol.consumer import LeaveGroupResponse as KLeaveGroupResponse
from kafka.protocol.consumer import SyncGroupRequest as KSyncGroupRequest
from kafka.protocol.consumer import SyncGroupResponse as KSyncGroupResponse

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from test_wire_protocol import _connect, _frame, _read_response

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])

JOIN_GROUP_VERSIONS = range(0, 10)
SYNC_GROUP_VERSIONS = range(0, 6)
HEARTBEAT_VERSIONS = range(0, 5)
LEAVE_GROUP_VERSIONS = range(0, 6)
JOIN_LATEST, SYNC_LATEST, LEAVE_LATEST = 9, 5, 5
DESCRIBE_GROUPS_LATEST, DELETE_GROUPS_LATEST = 5, 2

CONFIG = {"offsets.topic.num.partitions": 1, "offsets.topic.replication.factor": 1,
          "group.initial.rebalance.delay.ms": 0}

# A consumer subscription to "foo" (ConsumerProtocol's v0 layout: version, topics, no user data);
# the broker only carries it around.
METADATA = struct.pack(">hih3si", 0, 1, 3, b"foo", -1)


@pytest.fixture
def anyio_backend():
    return "asyncio"


class GroupClient:
    """The request helpers of GroupCoordinatorBaseRequestTest, each request on a fresh connection
    (connectAndReceive)."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self._correlation_id = 0

    async def send(self, request: Any, response_cls: Any, version: int) -> Any:
        self._correlation_id += 1
        correlation_id = self._correlation_id
        async with await _connect(self.bootstrap) as stream:
            await stream.send(_frame(request, version, correlation_id))
            response = await _read_response(stream, response_cls, version)
        assert response.header.correlation_id == correlation_id
        return response

    async def join(self, group_id: str, version: int = JOIN_LATEST, member_id: str = "",
                   group_instance_id: str | None = None, protocol_type: str = "consumer",
                   protocol_name: str = "consumer-range", metadata: bytes = b"") -> Any:
        """GroupCoordinatorBaseRequestTest#sendJoinRequest."""
        request = KJoinGroupRequest(
            group_id=group_id, member_id=member_id, group_instance_id=group_instance_id,
            session_timeout_ms=600000, rebalance_timeout_ms=5 * 50 * 1000, protocol_type=protocol_type,
            protocols=[KJoinGroupRequest.JoinGroupRequestProtocol(name=protocol_name, metadata=metadata)],
            reason=None)
        return await self.send(request, KJoinGroupResponse, version)

    async def sync(self, group_id: str, member_id: str, generation_id: int, *, version: int = SYNC_LATEST,
                   protocol_type: str | None = "consumer", protocol_name: str | None = "consumer-range",
                   assignments: list[tuple[str, bytes]] = (), expected_protocol_type: str | None = "consumer",
                   expected_protocol_name: str | None = "consumer-range", expected_assignment: bytes = b"",
                   expected_error: Errors = Errors.NONE) -> Any:
        """GroupCoordinatorBaseRequestTest#syncGroupWithOldProtocol: the whole answer is checked (the
        protocol type and name exist from v5)."""
        request = KSyncGroupRequest(
            group_id=group_id, generation_id=generation_id, member_id=member_id, group_instance_id=None,
            protocol_type=protocol_type, protocol_name=protocol_name,
            assignments=[KSyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
                         for m, a in assignments])
        response = await self.send(request, KSyncGroupResponse, version)
        got = (response.error_code, bytes(response.assignment))
        assert got == (expected_error.code, expected_assignment)
        if version >= 1:
            assert response.throttle_time_ms == 0
        if version >= 5:
            assert (response.protocol_type, response.protocol_name) == (expected_protocol_type, expected_protocol_name)
        return response

    async def heartbeat(self, group_id: str, member_id: str, generation_id: int, version: int,
                        expected_error: Errors = Errors.NONE) -> None:
        """GroupCoordinatorBaseRequestTest#heartbeat."""
        request = KHeartbeatRequest(group_id=group_id, generation_id=generation_id, member_id=member_id,
                                    group_instance_id=None)
        response = await self.send(request, KHeartbeatResponse, version)
        assert response.error_code == expected_error.code

    async def leave(self, group_id: str, member_ids: list[str], *, version: int = LEAVE_LATEST,
                    group_instance_ids: list[str] | None = None, expected_error: Errors = Errors.NONE,
                    expected_member_errors: list[Errors] = ()) -> None:
        """GroupCoordinatorBaseRequestTest#leaveGroupWithOldProtocol: before v3 the request names one
        member at the top level and the answer has no member list."""
        instance_ids = group_instance_ids or [None] * len(member_ids)
        if version < 3:
            assert len(member_ids) == 1 and group_instance_ids is None
            request = KLeaveGroupRequest(group_id=group_id, member_id=member_ids[0], members=[])
        else:
            request = KLeaveGroupRequest(group_id=group_id, member_id="", members=[
                KLeaveGroupRequest.MemberIdentity(member_id=m, group_instance_id=i, reason=None)
                for m, i in zip(member_ids, instance_ids)])
        response = await self.send(request, KLeaveGroupResponse, version)
        assert response.error_code == expected_error.code
        if version >= 1:
            assert response.throttle_time_ms == 0
        if version >= 3:
            expected = [] if expected_error is not Errors.NONE else [
                (m, i, e.code) for m, i, e in zip(member_ids, instance_ids, expected_member_errors)]
            assert [(m.member_id, m.group_instance_id, m.error_code) for m in response.members] == expected

    async def leave_group(self, group_id: str, member_id: str) -> None:
        """GroupCoordinatorBaseRequestTest#leaveGroup (classic protocol, latest version)."""
        await self.leave(group_id, [member_id], expected_member_errors=[Errors.NONE])

    async def describe_state(self, group_id: str) -> str:
        """The state GroupCoordinatorBaseRequestTest#describeGroups reports for one group."""
        request = KDescribeGroupsRequest(groups=[group_id], include_authorized_operations=False)
        response = await self.send(request, KDescribeGroupsResponse, DESCRIBE_GROUPS_LATEST)
        return response.groups[0].group_state

    async def wait_for_state(self, group_id: str, state: str) -> None:
        """TestUtils.waitUntilTrue over describeGroups."""
        with anyio.fail_after(10):
            while await self.describe_state(group_id) != state:
                await anyio.sleep(0.01)

    async def delete_groups(self, group_ids: list[str], expected: list[Errors]) -> None:
        """GroupCoordinatorBaseRequestTest#deleteGroups."""
        response = await self.send(KDeleteGroupsRequest(groups_names=group_ids), KDeleteGroupsResponse,
                                   DELETE_GROUPS_LATEST)
        assert {(r.group_id, r.error_code) for r in response.results} == {
            (g, e.code) for g, e in zip(group_ids, expected)}

    async def join_dynamic(self, group_id: str, complete_rebalance: bool = True) -> tuple[str, int]:
        """GroupCoordinatorBaseRequestTest#joinDynamicConsumerGroupWithOldProtocol."""
        first = await self.join(group_id)
        assert first.error_code == Errors.MEMBER_ID_REQUIRED.code
        rejoin = await self.join(group_id, member_id=first.member_id)
        assert rejoin.error_code == Errors.NONE.code
        if complete_rebalance:
            await self.sync(group_id, rejoin.member_id, rejoin.generation_id, assignments=[(rejoin.member_id, b"")])
        return rejoin.member_id, rejoin.generation_id

    async def join_static(self, group_id: str, group_instance_id: str) -> tuple[str, int]:
        """GroupCoordinatorBaseRequestTest#joinStaticConsumerGroupWithOldProtocol."""
        joined = await self.join(group_id, group_instance_id=group_instance_id)
        await self.sync(group_id, joined.member_id, joined.generation_id)
        return joined.member_id, joined.generation_id


def _join_view(response: Any, version: int) -> dict[str, Any]:
    """JoinGroupRequestTest#verifyJoinGroupResponseDataEquals's view: every field the version
    carries, members sorted by member id."""
    view = {"error": response.error_code, "generation_id": response.generation_id,
            "protocol_name": response.protocol_name, "leader": response.leader, "member_id": response.member_id,
            "members": sorted((m.member_id, m.group_instance_id if version >= 5 else None, bytes(m.metadata))
                              for m in response.members)}
    if version >= 2:
        view["throttle_time_ms"] = response.throttle_time_ms
    if version >= 7:
        view["protocol_type"] = response.protocol_type
    if version >= 9:
        view["skip_assignment"] = response.skip_assignment
    return view


def _expected_join(version: int, *, error: Errors = Errors.NONE, generation_id: int = -1,
                   protocol_type: str | None = None, protocol_name: str | None = "", leader: str = "",
                   member_id: str = "", members: list[tuple[str, str | None, bytes]] = ()) -> dict[str, Any]:
    """A JoinGroupResponseData as Kafka's test builds it (defaults: no throttling, generation -1,
    leader "", no protocol type, no members), in the same view as _join_view."""
    view = {"error": error.code, "generation_id": generation_id, "protocol_name": protocol_name,
            "leader": leader, "member_id": member_id,
            "members": sorted((m, i if version >= 5 else None, md) for m, i, md in members)}
    if version >= 2:
        view["throttle_time_ms"] = 0
    if version >= 7:
        view["protocol_type"] = protocol_type
    if version >= 9:
        view["skip_assignment"] = False
    return view


def _no_protocol(version: int) -> str | None:
    """The protocol name of an error answer: null from v7, "" before (not nullable there)."""
    return None if version >= 7 else ""


def _consumer(version: int) -> str | None:
    """The protocol type a successful JoinGroup answer carries (the field exists from v7)."""
    return "consumer" if version >= 7 else None


async def _setup(cluster: Cluster) -> None:
    """GroupCoordinatorBaseRequestTest#createOffsetsTopic and createTopic("foo", 3)."""
    await cluster.create_topic("__consumer_offsets", partitions=1, replication_factor=1)
    await cluster.create_topic("foo", partitions=3, replication_factor=1)


@BOTH
async def test_join_group(mode: str):
    """Mirrors JoinGroupRequestTest#testJoinGroupWithOldConsumerGroupProtocolAndOldGroupCoordinator
    (and ...AndNewGroupCoordinator, which expects the same)."""
    async with Cluster(brokers=1, metadata_mode=mode, config=CONFIG, clock="wall") as cluster, \
            cluster.serve() as bootstrap:
        await _setup(cluster)
        client = GroupClient(bootstrap)
        for version in JOIN_GROUP_VERSIONS:
            # A dynamic member without a member id: v4+ must come back with the id it is given.
            joined = await client.join("grp", version, metadata=METADATA)
            leader_id = joined.member_id
            if version >= 4:
                assert _join_view(joined, version) == _expected_join(
                    version, error=Errors.MEMBER_ID_REQUIRED, member_id=leader_id, protocol_name=_no_protocol(version))
                rejoined = await client.join("grp", version, member_id=leader_id, metadata=METADATA)
                assert _join_view(rejoined, version) == _expected_join(
                    version, generation_id=1, member_id=leader_id, protocol_name="consumer-range",
                    protocol_type=_consumer(version), leader=leader_id, members=[(leader_id, None, METADATA)])
            else:
                # Before v4 the member is added at once (the protocol type field does not exist yet).
                assert _join_view(joined, version) == _expected_join(
                    version, generation_id=1, leader=leader_id, member_id=leader_id, protocol_name="consumer-range",
                    members=[(leader_id, None, METADATA)])
            await client.sync("grp", leader_id, 1, assignments=[(leader_id, b"\x01")], expected_assignment=b"\x01")

            # An unknown member id, then an inconsistent protocol type.
            unknown = await client.join("grp", version, member_id="member-id-unknown")
            assert _join_view(unknown, version) == _expected_join(
                version, error=Errors.UNKNOWN_MEMBER_ID, member_id="member-id-unknown",
                protocol_name=_no_protocol(version))
            inconsistent = await client.join("grp", version, protocol_type="connect")
            assert _join_view(inconsistent, version) == _expected_join(
                version, error=Errors.INCONSISTENT_GROUP_PROTOCOL, protocol_name=_no_protocol(version))

            # A second member: static from v5; at v4 a dynamic one needs its member id first.
            follower_first_id = ""
            if version == 4:
                follower_first_id = (await client.join("grp", version, metadata=METADATA)).member_id
            instance_id = "group-instance-id" if version >= 5 else None
            follower_answer: dict[str, Any] = {}
            async with anyio.create_task_group() as tg:
                async def join_follower() -> None:
                    follower_answer["r"] = await client.join("grp", version, member_id=follower_first_id,
                                                             group_instance_id=instance_id, metadata=METADATA)

                tg.start_soon(join_follower)
                await client.wait_for_state("grp", "PreparingRebalance")
                # The leader rejoins, which completes the join phase.
                leader_rejoin = await client.join("grp", version, member_id=leader_id, metadata=METADATA)
            follower = follower_answer["r"]
            follower_id = follower.member_id
            assert _join_view(follower, version) == _expected_join(
                version, generation_id=2, protocol_type=_consumer(version), protocol_name="consumer-range",
                leader=leader_id, member_id=follower_id)
            assert _join_view(leader_rejoin, version) == _expected_join(
                version, generation_id=2, protocol_type=_consumer(version), protocol_name="consumer-range",
                leader=leader_id, member_id=leader_id,
                members=[(leader_id, None, METADATA), (follower_id, instance_id, METADATA)])

            await client.sync("grp", leader_id, leader_rejoin.generation_id,
                              assignments=[(leader_id, b"\x01"), (follower_id, b"\x02")], expected_assignment=b"\x01")
            await client.sync("grp", follower_id, follower.generation_id, expected_assignment=b"\x02")

            # An unchanged follower rejoining does not start a rebalance.
            again = await client.join("grp", version, member_id=follower_id, group_instance_id=instance_id,
                                      metadata=METADATA)
            assert _join_view(again, version) == _expected_join(
                version, generation_id=2, protocol_type=_consumer(version), protocol_name="consumer-range",
                leader=leader_id, member_id=follower_id)

            if version >= 5:
                follower_id = await _fenced_static_group(client, leader_id, follower_id, version)

            await client.leave_group("grp", leader_id)
            await client.leave_group("grp", follower_id)
            await client.delete_groups(["grp"], [Errors.NONE])


async def _fenced_static_group(client: GroupClient, leader_id: str, follower_id: str, version: int) -> str:
    """JoinGroupRequestTest#testFencedStaticGroup: a new member with the follower's instance id
    replaces it mid-rebalance; the old member id is then fenced."""
    leader_answer: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        async def rejoin_leader() -> None:
            leader_answer["r"] = await client.join("grp", version, member_id=leader_id, metadata=METADATA)

        # The leader rejoins (a rebalance starts).
        tg.start_soon(rejoin_leader)
        await client.wait_for_state("grp", "PreparingRebalance")
        # A new member with the same instance id joins: it takes the follower's place.
        new_follower = await client.join("grp", version, group_instance_id="group-instance-id", metadata=METADATA)
        await client.wait_for_state("grp", "CompletingRebalance")
        # The old follower's rejoin is fenced.
        fenced = await client.join("grp", version, member_id=follower_id, group_instance_id="group-instance-id",
                                   metadata=METADATA)
    new_follower_id = new_follower.member_id
    assert _join_view(leader_answer["r"], version) == _expected_join(
        version, generation_id=3, protocol_type=_consumer(version), protocol_name="consumer-range",
        leader=leader_id, member_id=leader_id,
        members=[(leader_id, None, METADATA), (new_follower_id, "group-instance-id", METADATA)])
    assert _join_view(new_follower, version) == _expected_join(
        version, generation_id=3, protocol_type=_consumer(version), protocol_name="consumer-range",
        leader=leader_id, member_id=new_follower_id)
    assert _join_view(fenced, version) == _expected_join(
        version, error=Errors.FENCED_INSTANCE_ID, member_id=follower_id, protocol_name=_no_protocol(version))
    return new_follower_id


@BOTH
async def test_sync_group(mode: str):
    """Mirrors SyncGroupRequestTest#testSyncGroupWithOldConsumerGroupProtocolAndOldGroupCoordinator
    (and ...AndNewGroupCoordinator, which expects the same)."""
    async with Cluster(brokers=1, metadata_mode=mode, config=CONFIG, clock="wall") as cluster, \
            cluster.serve() as bootstrap:
        await _setup(cluster)
        client = GroupClient(bootstrap)
        for version in SYNC_GROUP_VERSIONS:
            failed = {"expected_protocol_type": None, "expected_protocol_name": None, "version": version}
            # An unknown group.
            await client.sync("grp-unknown", "member-id", -1, expected_error=Errors.UNKNOWN_MEMBER_ID, **failed)

            first = await client.join("grp", metadata=METADATA)
            leader_id = first.member_id
            await client.join("grp", member_id=leader_id, metadata=METADATA)

            if version >= 5:
                # From v5 a protocol name or type the group does not use is refused.
                await client.sync("grp", leader_id, 1, protocol_name="unmatched", assignments=[(leader_id, b"\x01")],
                                  expected_error=Errors.INCONSISTENT_GROUP_PROTOCOL, **failed)
                await client.sync("grp", leader_id, 1, protocol_type="unmatched", assignments=[(leader_id, b"\x01")],
                                  expected_error=Errors.INCONSISTENT_GROUP_PROTOCOL, **failed)

            # An unknown member, then a generation the group is not at.
            await client.sync("grp", "member-id-unknown", -1, expected_error=Errors.UNKNOWN_MEMBER_ID, **failed)
            await client.sync("grp", leader_id, 2, expected_error=Errors.ILLEGAL_GENERATION, **failed)

            # The leader syncs; before v5 without protocol type and name.
            await client.sync("grp", leader_id, 1, version=version,
                              protocol_type=None if version < 5 else "consumer",
                              protocol_name=None if version < 5 else "consumer-range",
                              assignments=[(leader_id, b"\x01")], expected_assignment=b"\x01")

            # A second (static) member joins; the leader rejoins.
            follower_answer: dict[str, Any] = {}
            async with anyio.create_task_group() as tg:
                async def join_follower() -> None:
                    follower_answer["r"] = await client.join("grp", group_instance_id="group-instance-id",
                                                             metadata=METADATA)

                tg.start_soon(join_follower)
                await client.wait_for_state("grp", "PreparingRebalance")
                leader_rejoin = await client.join("grp", member_id=leader_id, metadata=METADATA)
            follower = follower_answer["r"]
            follower_id = follower.member_id

            both = [(leader_id, b"\x01"), (follower_id, b"\x02")]
            # The leader syncs ahead of the follower.
            await client.sync("grp", leader_id, leader_rejoin.generation_id, version=version, assignments=both,
                              expected_assignment=b"\x01")
            await client.sync("grp", follower_id, follower.generation_id, version=version, expected_assignment=b"\x02")

            # The follower syncs ahead of the leader (its answer waits for the assignment).
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.sync("grp", follower_id, 2, version=version, expected_assignment=b"\x02"))
                await client.sync("grp", leader_id, 2, version=version, assignments=both, expected_assignment=b"\x01")

            await client.leave_group("grp", leader_id)
            await client.leave_group("grp", follower_id)
            await client.delete_groups(["grp"], [Errors.NONE])


@BOTH
async def test_heartbeat(mode: str):
    """Mirrors HeartbeatRequestTest#testHeartbeatWithOldConsumerGroupProtocolAndOldGroupCoordinator
    (and ...AndNewGroupCoordinator, which expects the same)."""
    async with Cluster(brokers=1, metadata_mode=mode, config=CONFIG, clock="wall") as cluster, \
            cluster.serve() as bootstrap:
        await _setup(cluster)
        client = GroupClient(bootstrap)
        for version in HEARTBEAT_VERSIONS:
            leader_id, leader_epoch = await client.join_dynamic("grp", complete_rebalance=False)

            # Unknown group (with an unknown or a known member id), unknown member, wrong generation.
            await client.heartbeat("grp-unknown", "member-id-unknown", -1, version, Errors.UNKNOWN_MEMBER_ID)
            await client.heartbeat("grp-unknown", leader_id, -1, version, Errors.UNKNOWN_MEMBER_ID)
            await client.heartbeat("grp", "member-id-unknown", -1, version, Errors.UNKNOWN_MEMBER_ID)
            await client.heartbeat("grp", leader_id, -1, version, Errors.ILLEGAL_GENERATION)

            # CompletingRebalance, then Stable.
            await client.heartbeat("grp", leader_id, leader_epoch, version)
            await client.sync("grp", leader_id, leader_epoch, assignments=[(leader_id, b"\x01")],
                              expected_assignment=b"\x01")
            await client.heartbeat("grp", leader_id, leader_epoch, version)

            # A second member joins: PreparingRebalance until the leader rejoins.
            follower_id = (await client.join("grp", metadata=METADATA)).member_id
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: client.join("grp", member_id=follower_id, metadata=METADATA))
                await client.wait_for_state("grp", "PreparingRebalance")
                await client.heartbeat("grp", leader_id, leader_epoch, version, Errors.REBALANCE_IN_PROGRESS)
                await client.join("grp", member_id=leader_id, metadata=METADATA)

            await client.leave_group("grp", leader_id)
            await client.leave_group("grp", follower_id)
            # The group is empty.
            await client.heartbeat("grp", leader_id, -1, version, Errors.UNKNOWN_MEMBER_ID)


@BOTH
async def test_leave_group(mode: str):
    """Mirrors LeaveGroupRequestTest#testLeaveGroupWithOldConsumerGroupProtocolAndOldGroupCoordinator
    (and ...AndNewGroupCoordinator, which expects the same)."""
    async with Cluster(brokers=1, metadata_mode=mode, config=CONFIG, clock="wall") as cluster, \
            cluster.serve() as bootstrap:
        await _setup(cluster)
        client = GroupClient(bootstrap)
        for version in LEAVE_GROUP_VERSIONS:
            member_id1, _ = await client.join_dynamic("grp-1")
            if version >= 3:
                await client.join_static("grp-2", "group-instance-id")

            # An empty group id is INVALID_GROUP_ID, whichever member is named.
            await client.leave("", [member_id1], version=version, expected_error=Errors.INVALID_GROUP_ID)
            await client.leave("", ["member-id-unknown"], version=version, expected_error=Errors.INVALID_GROUP_ID)

            # An unknown group: per member from v3, at the top level before.
            if version >= 3:
                await client.leave("grp-unknown", [member_id1], version=version,
                                   expected_member_errors=[Errors.UNKNOWN_MEMBER_ID])
                await client.leave("grp-1", ["unknown-member-id", ""], version=version,
                                   expected_member_errors=[Errors.UNKNOWN_MEMBER_ID, Errors.UNKNOWN_MEMBER_ID])
            else:
                await client.leave("grp-unknown", [member_id1], version=version, expected_error=Errors.UNKNOWN_MEMBER_ID)
                await client.leave("grp-1", ["unknown-member-id"], version=version,
                                   expected_error=Errors.UNKNOWN_MEMBER_ID)

            # The member leaves; the group is empty.
            await client.leave("grp-1", [member_id1], version=version, expected_member_errors=[Errors.NONE])
            assert await client.describe_state("grp-1") == "Empty"

            if version >= 3:
                # A fenced instance id, then an unknown member id with the right instance id.
                await client.leave("grp-2", ["member-id-fenced"], version=version,
                                   group_instance_ids=["group-instance-id"],
                                   expected_member_errors=[Errors.FENCED_INSTANCE_ID])
                await client.leave("grp-2", [""], version=version, group_instance_ids=["group-instance-id"],
                                   expected_member_errors=[Errors.NONE])
                assert await client.describe_state("grp-2") == "Empty"


@pytest.mark.parametrize("version", [5, 6, 7, 9])
async def test_join_group_static_member_refused_below_ibp_2_3(version: int):
    """Mirrors KafkaApisTest#rejectJoinGroupRequestWhenStaticMembershipNotSupported, over the wire
    at the versions that carry a group instance id: the whole answer is JoinGroupRequest's error
    response (no member id, generation or leader; the protocol name "" before v7, null from v7)."""
    config = {**CONFIG, "inter.broker.protocol.version": "2.2"}
    async with Cluster(brokers=1, metadata_mode="zk", config=config, clock="wall") as cluster, \
            cluster.serve() as bootstrap:
        await _setup(cluster)
        client = GroupClient(bootstrap)
        refused = await client.join("test", version, member_id="test", group_instance_id="instanceId",
                                    metadata=METADATA)
        assert _join_view(refused, version) == _expected_join(
            version, error=Errors.UNSUPPORTED_VERSION, protocol_name=_no_protocol(version))
