"""The classic group APIs over a real socket, at every version: offsets, listing, describing, deleting.

Ports of Kafka 3.8.0's OffsetCommitRequestTest, OffsetFetchRequestTest, ListGroupsRequestTest,
DescribeGroupsRequestTest and DeleteGroupsRequestTest (helpers of GroupCoordinatorBaseRequestTest),
the "old consumer group protocol with the old group coordinator" variant of each, which Kafka
runs in ZooKeeper and KRaft mode: here ``zk`` and ``kraft``. Every request is a raw frame
built with kafka-python's protocol classes at the version under test and sent to
``kafka-ref serve``'s listener, so the version really reaches the broker (the wire adapters,
the version-gated fields, the handlers' version rules). The broker runs with one
``__consumer_offsets`` partition, replication factor 1 and no initial rebalance delay (as
TestUtils#createBrokerConfig sets it; the delay changes only how long a first join takes), and
the test creates the offsets topic itself, as Kafka's does. Versions are Kafka 3.8.0's: OffsetCommit v1-9, OffsetFetch v1-9
(all partitions from v2, several groups from v8), ListGroups v0-5 (states filter from v4, types
filter and group type from v5), DescribeGroups v0-5, DeleteGroups v0-2. One more test checks,
over the wire, the commit and expire timestamps GroupCoordinatorAdapterTest#testCommitOffsets
checks on the adapter (v1's explicit commit timestamp, v2-4's retention time).

Not ported:
- the "new consumer group protocol" and "new group coordinator" variants (KIP-848's
  ConsumerGroupHeartbeat and the group-coordinator module): kafka_ref models the classic
  GroupCoordinator only;
- OffsetCommit v0 and OffsetFetch v0 (offsets stored in ZooKeeper): Kafka's tests start at v1
  too;
- the unknown-member and stale-member-epoch OffsetFetch cases: they run only in the new-protocol
  variants (the classic coordinator ignores OffsetFetch v9's member id and epoch).
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from kafka.protocol.admin import DeleteGroupsRequest as KDeleteGroupsRequest
from kafka.protocol.admin import DescribeGroupsRequest as KDescribeGroupsRequest
from kafka.protocol.admin import ListGroupsRequest as KListGroupsRequest
from kafka.protocol.consumer import JoinGroupRequest as KJoinGroupRequest
from kafka.protocol.consumer import LeaveGroupRequest as KLeaveGroupRequest
from kafka.protocol.consumer import OffsetCommitRequest as KOffsetCommitRequest
from kafka.protocol.consumer import OffsetFetchRequest as KOffsetFetchRequest
from kafka.protocol.consumer import SyncGroupRequest as KSyncGroupRequest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.wire.apis import WIRE_APIS
from test_wire_protocol import _connect, _receive_exactly

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])

# Kafka 3.8.0's version ranges for the APIs under test (ApiKeys#latestVersion, no unstable APIs).
OFFSET_COMMIT_VERSIONS = range(1, 10)
OFFSET_FETCH_VERSIONS = range(1, 10)
LIST_GROUPS_VERSIONS = range(0, 6)
DESCRIBE_GROUPS_VERSIONS = range(0, 6)
DELETE_GROUPS_VERSIONS = range(0, 3)
JOIN_GROUP_VERSION, SYNC_GROUP_VERSION, LEAVE_GROUP_VERSION = 9, 5, 5

CLIENT_ID = "client-id"  # IntegrationTestUtils' request header client id
CONFIG = {"offsets.topic.num.partitions": 1, "offsets.topic.replication.factor": 1,
          "group.initial.rebalance.delay.ms": 0}
# DescribeGroups v3+ answers -2^31 (operations not asked for), which kafka-python decodes as None.
NO_AUTHORIZED_OPERATIONS = None


@pytest.fixture
def anyio_backend():
    return "asyncio"


_RESPONSE_OF = {api.wire_request: api.wire_response for api in WIRE_APIS.values()}


class WireClient:
    """GroupCoordinatorBaseRequestTest#connectAndReceive: one request at a chosen version, its answer decoded."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.correlation_id = 0

    async def send(self, request: Any, version: int) -> Any:
        self.correlation_id += 1
        request.API_VERSION = version
        request.with_header(correlation_id=self.correlation_id, client_id=CLIENT_ID)
        await self.stream.send(request.encode(header=True, framed=True))
        size = struct.unpack(">i", await _receive_exactly(self.stream, 4))[0]
        response = _RESPONSE_OF[type(request)].decode(await _receive_exactly(self.stream, size),
                                                       version=version, header=True)
        assert response.header.correlation_id == self.correlation_id
        return response

    # -- GroupCoordinatorBaseRequestTest's helpers ----------------------------------------------

    async def commit_offset(self, group_id: str, member_id: str, member_epoch: int, topic: str, partition: int,
                            offset: int, expected_error: Errors, version: int) -> None:
        """GroupCoordinatorBaseRequestTest#commitOffset: the whole answer is one topic, one partition, the error."""
        topic_cls = KOffsetCommitRequest.OffsetCommitRequestTopic
        request = KOffsetCommitRequest(
            group_id=group_id, member_id=member_id, generation_id_or_member_epoch=member_epoch,
            topics=[topic_cls(name=topic, partitions=[topic_cls.OffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset)])])
        response = await self.send(request, version)
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == \
            [(topic, [(partition, expected_error.code)])], f"v{version} {group_id!r} {member_id!r} {member_epoch}"

    async def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool,
                            version: int) -> tuple:
        """GroupCoordinatorBaseRequestTest#fetchOffsets (one group): the answer normalised to the v8+ group shape."""
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in partitions:
                by_topic.setdefault(topic, []).append(partition)
        if version >= 8:
            group_cls = KOffsetFetchRequest.OffsetFetchRequestGroup
            if partitions is not None:
                topics = [group_cls.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
            request = KOffsetFetchRequest(groups=[group_cls(group_id=group_id, topics=topics)],
                                          require_stable=require_stable)
            response = await self.send(request, version)
            assert [g.group_id for g in response.groups] == [group_id]
            return _group_shape(response.groups[0], version)
        if partitions is not None:
            topics = [KOffsetFetchRequest.OffsetFetchRequestTopic(name=t, partition_indexes=ps)
                      for t, ps in by_topic.items()]
        request = KOffsetFetchRequest(group_id=group_id, topics=topics, require_stable=require_stable)
        response = await self.send(request, version)
        error_code = response.error_code if version >= 2 else 0
        return group_id, error_code, _topics_shape(response.topics, version)

    async def fetch_offsets_of_groups(self, groups: dict[str, list[tuple[str, int]] | None], require_stable: bool,
                                      version: int) -> dict[str, tuple]:
        """GroupCoordinatorBaseRequestTest#fetchOffsets (several groups, v8+)."""
        group_cls = KOffsetFetchRequest.OffsetFetchRequestGroup
        wanted = []
        for group_id, partitions in groups.items():
            topics = None
            if partitions is not None:
                by_topic: dict[str, list[int]] = {}
                for topic, partition in partitions:
                    by_topic.setdefault(topic, []).append(partition)
                topics = [group_cls.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
            wanted.append(group_cls(group_id=group_id, topics=topics))
        response = await self.send(KOffsetFetchRequest(groups=wanted, require_stable=require_stable), version)
        assert len(response.groups) == len(groups)
        return {g.group_id: _group_shape(g, version)[1:] for g in response.groups}

    async def join(self, group_id: str, member_id: str = "", metadata: bytes = b"") -> Any:
        """GroupCoordinatorBaseRequestTest#sendJoinRequest at the newest JoinGroup version."""
        request = KJoinGroupRequest(
            group_id=group_id, session_timeout_ms=600000, rebalance_timeout_ms=5 * 50 * 1000, member_id=member_id,
            group_instance_id=None, protocol_type="consumer",
            protocols=[KJoinGroupRequest.JoinGroupRequestProtocol(name="consumer-range", metadata=metadata)])
        return await self.send(request, JOIN_GROUP_VERSION)

    async def sync(self, group_id: str, member_id: str, generation_id: int, assignment: bytes) -> None:
        """GroupCoordinatorBaseRequestTest#syncGroupWithOldProtocol (the leader hands itself ``assignment``)."""
        request = KSyncGroupRequest(
            group_id=group_id, generation_id=generation_id, member_id=member_id, group_instance_id=None,
            protocol_type="consumer", protocol_name="consumer-range",
            assignments=[KSyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)])
        response = await self.send(request, SYNC_GROUP_VERSION)
        assert (response.error_code, response.protocol_type, response.protocol_name, bytes(response.assignment)) == \
            (0, "consumer", "consumer-range", assignment)

    async def join_dynamic_consumer_group_with_old_protocol(self, group_id: str, metadata: bytes = b"",
                                                            assignment: bytes = b"",
                                                            complete_rebalance: bool = True) -> tuple[str, int]:
        """GroupCoordinatorBaseRequestTest#joinDynamicConsumerGroupWithOldProtocol."""
        first = await self.join(group_id, metadata=metadata)
        assert first.error_code == Errors.MEMBER_ID_REQUIRED.code
        second = await self.join(group_id, member_id=first.member_id, metadata=metadata)
        assert (second.error_code, second.member_id) == (0, first.member_id)
        if complete_rebalance:
            await self.sync(group_id, second.member_id, second.generation_id, assignment)
        return second.member_id, second.generation_id

    async def leave_group(self, group_id: str, member_id: str) -> None:
        """GroupCoordinatorBaseRequestTest#leaveGroupWithOldProtocol (one member, no errors expected)."""
        request = KLeaveGroupRequest(group_id=group_id, members=[
            KLeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=None)])
        response = await self.send(request, LEAVE_GROUP_VERSION)
        assert (response.error_code, [(m.member_id, m.group_instance_id, m.error_code) for m in response.members]) == \
            (0, [(member_id, None, 0)])

    async def list_groups(self, states_filter: list[str], types_filter: list[str], version: int) -> list[tuple]:
        """GroupCoordinatorBaseRequestTest#listGroups: (group id, protocol type, state, type) per group."""
        response = await self.send(KListGroupsRequest(states_filter=states_filter, types_filter=types_filter), version)
        assert response.error_code == 0
        return [(g.group_id, g.protocol_type, g.group_state if version >= 4 else "",
                 g.group_type if version >= 5 else "") for g in response.groups]

    async def describe_groups(self, group_ids: list[str], version: int) -> list[tuple]:
        """GroupCoordinatorBaseRequestTest#describeGroups: every field of every described group."""
        response = await self.send(KDescribeGroupsRequest(groups=group_ids, include_authorized_operations=False),
                                   version)
        return [(g.error_code, g.group_id, g.group_state, g.protocol_type, g.protocol_data,
                 [(m.member_id, m.group_instance_id if version >= 4 else None, m.client_id, m.client_host,
                   bytes(m.member_metadata), bytes(m.member_assignment)) for m in g.members],
                 g.authorized_operations if version >= 3 else None)
                for g in response.groups]

    async def delete_groups(self, group_ids: list[str], expected_errors: list[Errors], version: int) -> None:
        """GroupCoordinatorBaseRequestTest#deleteGroups: one result per group (order free)."""
        response = await self.send(KDeleteGroupsRequest(groups_names=group_ids), version)
        assert {(r.group_id, r.error_code) for r in response.results} == \
            {(g, e.code) for g, e in zip(group_ids, expected_errors)}
        assert len(response.results) == len(group_ids)


def _topics_shape(topics: Any, version: int) -> list[tuple]:
    """Topics sorted by name, partitions by index (GroupCoordinatorBaseRequestTest#sortTopicPartitions)."""
    return sorted((t.name, sorted((p.partition_index, p.committed_offset,
                                   p.committed_leader_epoch if version >= 5 else -1, p.metadata, p.error_code)
                                  for p in t.partitions)) for t in topics)


def _group_shape(group: Any, version: int) -> tuple:
    return group.group_id, group.error_code, _topics_shape(group.topics, version)


def _partitions(*offsets: tuple[int, int]) -> list[tuple]:
    """Expected partitions: (index, committed offset), no leader epoch, no metadata, no error."""
    return [(index, offset, -1, "", 0) for index, offset in offsets]


async def _setup(cluster: Cluster) -> None:
    """GroupCoordinatorBaseRequestTest#createOffsetsTopic, then the topic ``foo`` with three partitions."""
    await cluster.create_topic("__consumer_offsets", 1, 1)
    await cluster.create_topic("foo", 3, 1)
    await cluster.wait_until(lambda: cluster.broker(0).group_coordinator.group_manager.is_partition_owned(0))


def _cluster(mode: str) -> Cluster:
    return Cluster(brokers=1, metadata_mode=mode, clock="wall", config=dict(CONFIG))


# ------------------------------------------------------------------ OffsetCommitRequestTest


@BOTH
async def test_offset_commit_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors OffsetCommitRequestTest#testOffsetCommitWithOldConsumerGroupProtocolAndOldGroupCoordinator."""
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            member_id, generation = await client.join_dynamic_consumer_group_with_old_protocol("grp")
            assert generation == 1
            for version in OFFSET_COMMIT_VERSIONS:
                # 1. The member commits.
                await client.commit_offset("grp", member_id, generation, "foo", 0, 100, Errors.NONE, version)
                # 2. A group the coordinator does not know, with a generation: ILLEGAL_GENERATION.
                await client.commit_offset("unknown", member_id, generation, "foo", 0, 100,
                                           Errors.ILLEGAL_GENERATION, version)
                # 3. The empty group id is a valid id for OffsetCommit: the same answer.
                await client.commit_offset("", member_id, generation, "foo", 0, 100,
                                           Errors.ILLEGAL_GENERATION, version)
                # 4. No member id with a generation: UNKNOWN_MEMBER_ID.
                await client.commit_offset("grp", "", generation, "foo", 0, 100, Errors.UNKNOWN_MEMBER_ID, version)
                # 5. A stale (here: future) generation.
                await client.commit_offset("grp", member_id, generation + 1, "foo", 0, 100,
                                           Errors.ILLEGAL_GENERATION, version)
                # 6. No member id and generation -1 (the admin client): accepted for a new group.
                await client.commit_offset("other-grp", "", -1, "foo", 0, 100, Errors.NONE, version)


# ------------------------------------------------------------------ OffsetFetchRequestTest


async def _join_and_commit(client: WireClient, group_id: str) -> None:
    member_id, generation = await client.join_dynamic_consumer_group_with_old_protocol(group_id)
    for partition in range(3):
        await client.commit_offset(group_id, member_id, generation, "foo", partition, 100 + partition, Errors.NONE,
                                   OFFSET_COMMIT_VERSIONS[-1])


@BOTH
async def test_single_group_offset_fetch_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors OffsetFetchRequestTest#testSingleGroupOffsetFetchWithOldConsumerGroupProtocolAndOldGroupCoordinator."""
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            await _join_and_commit(client, "grp")
            for version in OFFSET_FETCH_VERSIONS:
                # 1. Known partitions and one that does not exist (foo-5).
                assert await client.fetch_offsets("grp", [("foo", 0), ("foo", 1), ("foo", 5)], True, version) == \
                    ("grp", 0, [("foo", _partitions((0, 100), (1, 101), (5, -1)))])
                # 2. An unknown group: no offsets, no error.
                assert await client.fetch_offsets("unknown", [("foo", 0), ("foo", 1), ("foo", 5)], True, version) == \
                    ("unknown", 0, [("foo", _partitions((0, -1), (1, -1), (5, -1)))])
                # 3. An unknown group, an unknown topic and a partition that does not exist.
                assert await client.fetch_offsets("unknown", [("foo", 0), ("foo-unknown", 1), ("foo", 5)], True,
                                                  version) == \
                    ("unknown", 0, [("foo", _partitions((0, -1), (5, -1))), ("foo-unknown", _partitions((1, -1)))])


@BOTH
async def test_single_group_all_offset_fetch_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors OffsetFetchRequestTest#testSingleGroupAllOffsetFetchWithOldConsumerGroupProtocolAndOldGroupCoordinator.

    All partitions (null topics) can be asked for from v2.
    """
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            await _join_and_commit(client, "grp")
            for version in range(2, OFFSET_FETCH_VERSIONS[-1] + 1):
                assert await client.fetch_offsets("grp", None, True, version) == \
                    ("grp", 0, [("foo", _partitions((0, 100), (1, 101), (2, 102)))])
                assert await client.fetch_offsets("unknown", None, True, version) == ("unknown", 0, [])


@BOTH
async def test_multi_groups_offset_fetch_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors OffsetFetchRequestTest#testMultiGroupsOffsetFetchWithOldConsumerGroupProtocolAndOldGroupCoordinator.

    Several groups in one request from v8.
    """
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            for group_id in ("grp-0", "grp-1", "grp-2"):
                await _join_and_commit(client, group_id)
            for version in range(8, OFFSET_FETCH_VERSIONS[-1] + 1):
                assert await client.fetch_offsets_of_groups({
                    "grp-0": [("foo", 0), ("foo", 1), ("foo", 5)],
                    "grp-1": None,
                    "grp-2": [],
                    "grp-3": [("foo", 0)],
                    "grp-4": [("foo-unknown", 0), ("foo", 5)],
                }, True, version) == {
                    "grp-0": (0, [("foo", _partitions((0, 100), (1, 101), (5, -1)))]),
                    "grp-1": (0, [("foo", _partitions((0, 100), (1, 101), (2, 102)))]),
                    "grp-2": (0, []),
                    "grp-3": (0, [("foo", _partitions((0, -1)))]),
                    "grp-4": (0, [("foo", _partitions((5, -1))), ("foo-unknown", _partitions((0, -1)))]),
                }


# ------------------------------------------------------------------ ListGroupsRequestTest


@BOTH
async def test_list_groups_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors ListGroupsRequestTest#testListGroupsWithOldConsumerGroupProtocolAndOldGroupCoordinator."""
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            for version in LIST_GROUPS_VERSIONS:
                def listed(group_id: str, state: str) -> tuple:
                    return (group_id, "consumer", state if version >= 4 else "", "classic" if version >= 5 else "")

                # 1. grp-1 Stable, grp-2 CompletingRebalance (no SyncGroup), grp-3 Empty (its member left).
                member_1, _ = await client.join_dynamic_consumer_group_with_old_protocol("grp-1")
                member_2, _ = await client.join_dynamic_consumer_group_with_old_protocol("grp-2",
                                                                                         complete_rebalance=False)
                member_3, _ = await client.join_dynamic_consumer_group_with_old_protocol("grp-3")
                await client.leave_group("grp-3", member_3)
                group_1, group_2, group_3 = (listed("grp-1", "Stable"), listed("grp-2", "CompletingRebalance"),
                                             listed("grp-3", "Empty"))
                # 2. No filter: all three.
                assert set(await client.list_groups([], [], version)) == {group_1, group_2, group_3}
                # 3. State filters (v4+), matched without regard to case.
                if version >= 4:
                    assert await client.list_groups(["Stable"], [], version) == [group_1]
                    assert set(await client.list_groups(["CompletingRebalance", "Reconciling"], [], version)) == \
                        {group_2}
                    assert set(await client.list_groups(["Stable", "Empty", "Empty"], [], version)) == \
                        {group_1, group_3}
                    assert await client.list_groups(["Assigning"], [], version) == []
                    # (Beyond Kafka's test: GroupMetadata#isInStates compares lower-case names.)
                    assert await client.list_groups(["sTABLE"], [], version) == [group_1]
                # 4. Type filters (v5+): every group of the classic coordinator is "classic".
                if version >= 5:
                    assert await client.list_groups(["Stable"], ["consumer"], version) == []
                    assert await client.list_groups([], ["consumer"], version) == []
                    assert set(await client.list_groups([], ["classic"], version)) == {group_1, group_2, group_3}
                    # (Beyond Kafka's test: Group.GroupType#parse ignores case; an unknown type lists nothing.)
                    assert set(await client.list_groups([], ["Classic", "bogus"], version)) == {group_1, group_2, group_3}
                    assert await client.list_groups([], ["bogus"], version) == []
                # 5. Both members leave, all three groups are deleted: nothing is listed.
                await client.leave_group("grp-1", member_1)
                await client.leave_group("grp-2", member_2)
                await client.delete_groups(["grp-1", "grp-2", "grp-3"], [Errors.NONE] * 3, DELETE_GROUPS_VERSIONS[-1])
                assert await client.list_groups([], [], version) == []


# ------------------------------------------------------------------ DescribeGroupsRequestTest


@BOTH
async def test_describe_groups_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors DescribeGroupsRequestTest#testDescribeGroupsWithOldConsumerGroupProtocolAndOldGroupCoordinator."""
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            # 1. grp-1 Stable with member metadata and assignment; grp-2 left in CompletingRebalance.
            member_1, _ = await client.join_dynamic_consumer_group_with_old_protocol(
                "grp-1", metadata=bytes([1, 2, 3]), assignment=bytes([4, 5, 6]))
            member_2, _ = await client.join_dynamic_consumer_group_with_old_protocol(
                "grp-2", metadata=bytes([1, 2, 3]), complete_rebalance=False)
            for version in DESCRIBE_GROUPS_VERSIONS:
                # 2. A Stable group shows its protocol and its members' metadata and assignments; a
                #    rebalancing one neither; an unknown group is Dead without an error.
                assert await client.describe_groups(["grp-1", "grp-2", "grp-unknown"], version) == [
                    (0, "grp-1", "Stable", "consumer", "consumer-range",
                     [(member_1, None, CLIENT_ID, "/127.0.0.1", bytes([1, 2, 3]), bytes([4, 5, 6]))],
                     NO_AUTHORIZED_OPERATIONS),
                    (0, "grp-2", "CompletingRebalance", "consumer", "",
                     [(member_2, None, CLIENT_ID, "/127.0.0.1", b"", b"")], NO_AUTHORIZED_OPERATIONS),
                    (0, "grp-unknown", "Dead", "", "", [], NO_AUTHORIZED_OPERATIONS),
                ]


# ------------------------------------------------------------------ DeleteGroupsRequestTest


@BOTH
async def test_delete_groups_with_old_consumer_group_protocol_and_old_group_coordinator(mode: str):
    """Mirrors DeleteGroupsRequestTest#testDeleteGroupsWithOldConsumerGroupProtocolAndOldGroupCoordinator."""
    async with _cluster(mode) as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            # 1. A group that keeps its member.
            await client.join_dynamic_consumer_group_with_old_protocol("grp-non-empty")
            for version in DELETE_GROUPS_VERSIONS:
                # 2. grp gets a member that leaves again: Empty, deletable.
                member_id, _ = await client.join_dynamic_consumer_group_with_old_protocol("grp")
                await client.leave_group("grp", member_id)
                # 3. One request for both: NON_EMPTY_GROUP and NONE.
                await client.delete_groups(["grp-non-empty", "grp"], [Errors.NON_EMPTY_GROUP, Errors.NONE], version)
                # 4. grp is gone: described as Dead.
                assert await client.describe_groups(["grp"], DESCRIBE_GROUPS_VERSIONS[-1]) == \
                    [(0, "grp", "Dead", "", "", [], NO_AUTHORIZED_OPERATIONS)]


# ------------------------------------------------------------------ GroupCoordinatorAdapterTest


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 8, 9])
async def test_commit_offsets_timestamps_by_version(version: int):
    """Mirrors GroupCoordinatorAdapterTest#testCommitOffsets (the OffsetAndMetadata handed to the coordinator).

    Kafka's test sets a commit timestamp and a retention of 1000 ms on the request data at every
    version; on the wire each lives only where its version carries it: v1's explicit commit
    timestamp is kept as sent, v2-4's retention makes the expire timestamp now + 1000, later
    versions are stamped now without an expire timestamp. Checked in the group's stored offsets.
    """
    async with _cluster("kraft") as cluster, cluster.serve() as bootstrap:
        await _setup(cluster)
        broker = cluster.broker(0)
        async with await _connect(bootstrap) as stream:
            client = WireClient(stream)
            topic_cls = KOffsetCommitRequest.OffsetCommitRequestTopic
            explicit_timestamp = 1_234_567
            request = KOffsetCommitRequest(
                group_id="group", member_id="", generation_id_or_member_epoch=-1,
                retention_time_ms=1000 if 2 <= version <= 4 else -1,
                topics=[topic_cls(name="foo", partitions=[topic_cls.OffsetCommitRequestPartition(
                    partition_index=0, committed_offset=100, committed_leader_epoch=1,
                    commit_timestamp=explicit_timestamp if version == 1 else -1)])])
            before = broker.time.milliseconds()
            response = await client.send(request, version)
            after = broker.time.milliseconds()
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == \
            [("foo", [(0, 0)])]
        stored = broker.group_coordinator.group_manager.get_group("group").offset(TopicPartition("foo", 0))
        # (The leader epoch is on the wire from v6.)
        assert (stored.offset, stored.leader_epoch, stored.metadata) == (100, 1 if version >= 6 else None, "")
        if version == 1:
            assert (stored.commit_timestamp, stored.expire_timestamp) == (explicit_timestamp, None)
        elif version <= 4:
            assert before <= stored.commit_timestamp <= after
            assert stored.expire_timestamp == stored.commit_timestamp + 1000
        else:
            assert before <= stored.commit_timestamp <= after
            assert stored.expire_timestamp is None
