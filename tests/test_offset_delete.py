"""OffsetDelete: removing a consumer group's committed offsets for some partitions.

Mirrors Kafka's GroupCoordinatorTest offset-deletion cases (testDeleteOffsetOfNonExistingGroup,
testDeleteOffsetOfNonEmptyNonConsumerGroup, testDeleteOffsetOfEmptyNonConsumerGroup,
testDeleteOffsetOfConsumerGroupWithUnparsableProtocol, testDeleteOffsetOfDeadConsumerGroup,
testDeleteOffsetOfEmptyConsumerGroup, testDeleteOffsetOfStableConsumerGroup) on one broker, and
OffsetDeleteRequestTest (KafkaApis#handleOffsetDeleteRequest) plus
DeleteConsumerGroupOffsetsHandler's admin behaviour on a cluster.
"""

from __future__ import annotations

import anyio
import pytest

from test_group_coordinator import FOO0, GROUP, Answers, Fixture
from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients import Consumer
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata as ClientOffsetAndMetadata
from kafka_ref.clients.consumer_protocol import ConsumerProtocol, Subscription
from kafka_ref.common.errors import (
    GroupIdNotFoundException,
    GroupSubscribedToTopicException,
    RebalanceInProgressException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from kafka_ref.coordinator.group import schemas
from kafka_ref.coordinator.group.group_metadata import Dead, Empty, GroupMetadata, OffsetAndMetadata, Stable
from kafka_ref.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME

pytestmark = pytest.mark.anyio

BAR0 = TopicPartition("bar", 0)


def _commit(f: Fixture, member_id: str, generation: int, offsets: dict[TopicPartition, int]) -> dict:
    answers = Answers()
    f.coordinator.handle_commit_offsets(GROUP, member_id, None, generation,
                                        {tp: OffsetAndMetadata(o, None, "", 0) for tp, o in offsets.items()}, answers)
    return answers.value


def _committed(f: Fixture, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
    error, data = f.coordinator.handle_fetch_offsets(GROUP, False, partitions)
    assert error is Errors.NONE
    return {tp: d.committed_offset for tp, d in data.items()}


async def _empty_group_with_offsets(f: Fixture, protocol_type: str) -> None:
    """Join alone, sync, commit 37 on foo-0 and bar-0, leave: an Empty group of generation 2 holding two offsets."""
    member = await f.joined(f.join(protocol_type=protocol_type))
    synced = Answers()
    f.coordinator.handle_sync_group(GROUP, member.generation_id, member.member_id, protocol_type, "range", None,
                                    {member.member_id: b""}, synced)
    assert (await f.joined(synced)).error is Errors.NONE
    assert _commit(f, member.member_id, member.generation_id, {FOO0: 37, BAR0: 37}) == {FOO0: Errors.NONE,
                                                                                         BAR0: Errors.NONE}
    f.leave(member.member_id)
    assert f.group().current_state is Empty


def _tombstone_keys(f: Fixture) -> list[bytes]:
    """Keys of the null-valued records in the group's __consumer_offsets partition, in log order."""
    log = f.broker.replica_manager.get_log(TopicPartition(GROUP_METADATA_TOPIC_NAME, f.manager.partition_for(GROUP)))
    return [r.key for batch in log.read(0, 1 << 20).records for r in batch if r.value is None]


async def test_delete_offset_of_non_existing_group():
    """GroupCoordinatorTest#testDeleteOffsetOfNonExistingGroup."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.GROUP_ID_NOT_FOUND, {})
        tg.cancel_scope.cancel()


async def test_delete_offset_of_non_empty_non_consumer_group():
    """GroupCoordinatorTest#testDeleteOffsetOfNonEmptyNonConsumerGroup: a member of another protocol type is NON_EMPTY_GROUP."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        await f.joined(f.join(protocol_type="My Protocol"))
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.NON_EMPTY_GROUP, {})
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("protocol_type", ["My Protocol", "consumer"])
async def test_delete_offset_of_empty_group(protocol_type: str):
    """GroupCoordinatorTest#testDeleteOffsetOfEmptyNonConsumerGroup / #testDeleteOffsetOfEmptyConsumerGroup.

    Only the named offset goes (the other stays at 37) and one tombstone is written for it;
    deleting the last offset of the Empty group kills it and tombstones the group record too
    (GroupMetadataManager#cleanupGroupMetadata).
    """
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        await _empty_group_with_offsets(f, protocol_type)
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.NONE, {FOO0: Errors.NONE})
        assert _committed(f, [FOO0, BAR0]) == {FOO0: -1, BAR0: 37}
        assert _tombstone_keys(f) == [schemas.offset_commit_key(GROUP, FOO0)]
        group = f.group()
        assert f.coordinator.handle_delete_offsets(GROUP, [BAR0]) == (Errors.NONE, {BAR0: Errors.NONE})
        assert group.is_(Dead) and f.group() is None
        assert _tombstone_keys(f) == [schemas.offset_commit_key(GROUP, FOO0), schemas.offset_commit_key(GROUP, BAR0),
                                      schemas.group_metadata_key(GROUP)]
        assert f.coordinator.handle_delete_offsets(GROUP, [BAR0]) == (Errors.GROUP_ID_NOT_FOUND, {})
        tg.cancel_scope.cancel()


async def test_delete_offset_of_consumer_group_with_unparsable_protocol():
    """GroupCoordinatorTest#testDeleteOffsetOfConsumerGroupWithUnparsableProtocol: unknown subscriptions protect every topic."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        member = await f.stable_member()                      # protocol metadata b"range-meta" is no Subscription
        assert f.group().subscribed_topics is None
        assert _commit(f, member.member_id, member.generation_id, {FOO0: 37}) == {FOO0: Errors.NONE}
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.NONE, {FOO0: Errors.GROUP_SUBSCRIBED_TO_TOPIC})
        assert _committed(f, [FOO0]) == {FOO0: 37}
        tg.cancel_scope.cancel()


async def test_delete_offset_of_dead_consumer_group():
    """GroupCoordinatorTest#testDeleteOffsetOfDeadConsumerGroup."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        group = GroupMetadata(GROUP, Dead, f.broker.time)
        group.protocol_type = "consumer"
        f.manager.add_group(group)
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.GROUP_ID_NOT_FOUND, {})
        tg.cancel_scope.cancel()


async def test_delete_offset_of_stable_consumer_group():
    """GroupCoordinatorTest#testDeleteOffsetOfStableConsumerGroup: the subscribed topic's offset stays, the other goes."""
    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        metadata = ConsumerProtocol.serialize_subscription(Subscription(("bar",)))
        member = await f.stable_member(protocols=[("range", metadata)])
        assert (f.group().current_state, f.group().subscribed_topics) == (Stable, {"bar"})
        assert _commit(f, member.member_id, member.generation_id, {FOO0: 37, BAR0: 37}) == {FOO0: Errors.NONE,
                                                                                             BAR0: Errors.NONE}
        error, partitions = f.coordinator.handle_delete_offsets(GROUP, [FOO0, BAR0])
        assert (error, partitions) == (Errors.NONE, {FOO0: Errors.NONE, BAR0: Errors.GROUP_SUBSCRIBED_TO_TOPIC})
        assert _committed(f, [FOO0, BAR0]) == {FOO0: -1, BAR0: 37}
        assert f.group().current_state is Stable
        tg.cancel_scope.cancel()


async def test_delete_offset_status_errors():
    """validateGroupStatus for OFFSET_DELETE: "" is INVALID_GROUP_ID (unlike DeleteGroups), a group owned elsewhere NOT_COORDINATOR, loading COORDINATOR_LOAD_IN_PROGRESS."""
    from test_group_coordinator import OTHER_GROUP, P

    async with anyio.create_task_group() as tg:
        f = await Fixture().start(tg)
        assert f.coordinator.handle_delete_offsets("", [FOO0]) == (Errors.INVALID_GROUP_ID, {})
        assert f.coordinator.handle_delete_offsets(OTHER_GROUP, [FOO0]) == (Errors.NOT_COORDINATOR, {})
        f.manager.owned_partitions.discard(P)
        f.manager.loading_partitions.add(P)
        assert f.coordinator.handle_delete_offsets(GROUP, [FOO0]) == (Errors.COORDINATOR_LOAD_IN_PROGRESS, {})
        tg.cancel_scope.cancel()


# ---------------------------------------------------------------------------- KafkaApis and the admin client

TOPIC = "foo"
FOO = [TopicPartition(TOPIC, p) for p in range(3)]


async def _member_with_commits(cluster: Cluster, group_id: str) -> Consumer:
    """A live member subscribed to foo that committed 100 + p on each partition p (left open)."""
    # (Auto-commit off: the test commits its own offsets, as OffsetDeleteRequestTest does with raw requests.)
    consumer = Consumer(cluster.network, cluster.live_broker_ids(), group_id=group_id, session_timeout_ms=10000,
                        heartbeat_interval_ms=1000, enable_auto_commit=False)
    consumer.subscribe([TOPIC])
    with anyio.fail_after(60):
        while True:
            await consumer.poll(200)
            try:
                await consumer.commit_sync({tp: ClientOffsetAndMetadata(100 + tp.partition) for tp in FOO})
                return consumer
            except RebalanceInProgressException:
                continue


async def _offset_delete(cluster: Cluster, group_id: str, partitions: list[TopicPartition]) -> OffsetDeleteResponse:
    node = cluster.coordinator_for(group_id) if group_id else cluster.live_broker_ids()[0]
    return await cluster.network.send("admin", node, OffsetDeleteRequest.of(group_id, partitions), 5000)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_offset_delete_request(mode: str):
    """OffsetDeleteRequestTest#testOffsetDeleteWithOldConsumerGroupProtocolAndOldGroupCoordinator, step by step."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=7,
                       config={"group.initial.rebalance.delay.ms": 0, "offsets.topic.replication.factor": 3}) as cluster:
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
        consumer = await _member_with_commits(cluster, "grp")
        # Subscribed: the offset stays.
        response = await _offset_delete(cluster, "grp", [FOO[0]])
        assert (response.error_code, response.partition_errors()) == (0, {FOO[0]: Errors.GROUP_SUBSCRIBED_TO_TOPIC.code})
        # The member leaves: deletable.
        consumer.close()
        manager = cluster.broker(cluster.coordinator_for("grp")).group_coordinator.group_manager
        await cluster.wait_until(lambda: manager.get_group("grp").is_(Empty), message="member left")
        response = await _offset_delete(cluster, "grp", FOO[:2])
        assert (response.error_code, response.partition_errors()) == (0, {FOO[0]: 0, FOO[1]: 0})
        assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: -1, FOO[1]: -1, FOO[2]: 102}
        # A partition the topic does not have; an unknown topic.
        response = await _offset_delete(cluster, "grp", [TopicPartition(TOPIC, 5), TopicPartition("nope", 0)])
        assert (response.error_code, response.partition_errors()) == (0, {
            TopicPartition(TOPIC, 5): Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
            TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code})
        # Group-level errors come without topics, even next to an unknown topic or partition.
        for group_id, partitions, error in [("grp-unknown", [FOO[2]], Errors.GROUP_ID_NOT_FOUND),
                                            ("", [FOO[2]], Errors.INVALID_GROUP_ID),
                                            ("", [TopicPartition("foo-unknown", 2)], Errors.INVALID_GROUP_ID),
                                            ("", [TopicPartition(TOPIC, 5)], Errors.INVALID_GROUP_ID)]:
            response = await _offset_delete(cluster, group_id, partitions)
            assert (response.error_code, response.topics) == (error.code, ())
        assert await cluster.committed_offsets("grp", [FOO[2]]) == {FOO[2]: 102}


async def test_offset_delete_request_refuses_unreadable_topic():
    """KafkaApis#handleOffsetDeleteRequest: a topic the principal may not READ is TOPIC_AUTHORIZATION_FAILED, the offset kept."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=7, config={"offsets.topic.replication.factor": 1}) as cluster:
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=1)
        assert await cluster.commit_offsets("g", {FOO[0]: 4}) == {FOO[0]: Errors.NONE}
        broker = cluster.broker(cluster.coordinator_for("g"))
        broker.apis.authorizer.deny_topic("User:eve", "READ", TOPIC)
        response = await cluster.network.send("admin", broker.broker_id, OffsetDeleteRequest.of("g", [FOO[0]]), 5000,
                                              principal="User:eve")
        assert (response.error_code, response.partition_errors()) == (0, {FOO[0]: Errors.TOPIC_AUTHORIZATION_FAILED.code})
        assert await cluster.committed_offsets("g", [FOO[0]]) == {FOO[0]: 4}


async def test_admin_delete_consumer_group_offsets():
    """Admin#deleteConsumerGroupOffsets: the first partition error raises, a group error raises, success removes the offsets."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=3,
                       config={"group.initial.rebalance.delay.ms": 0, "offsets.topic.replication.factor": 3}) as cluster:
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
        consumer = await _member_with_commits(cluster, "grp")
        async with cluster.admin() as admin:
            with pytest.raises(GroupSubscribedToTopicException):
                await admin.delete_consumer_group_offsets("grp", [FOO[1]])
            with pytest.raises(GroupIdNotFoundException):
                await admin.delete_consumer_group_offsets("other", [FOO[1]])
            consumer.close()
            manager = cluster.broker(cluster.coordinator_for("grp")).group_coordinator.group_manager
            await cluster.wait_until(lambda: manager.get_group("grp").is_(Empty), message="member left")
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.delete_consumer_group_offsets("grp", [FOO[1], TopicPartition(TOPIC, 9)])
            # The valid partition of that request was deleted all the same (as in Kafka).
            assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: 100, FOO[1]: -1, FOO[2]: 102}
            assert await admin.delete_consumer_group_offsets("grp", [FOO[0], FOO[2]]) is None
            assert await cluster.committed_offsets("grp", FOO) == {FOO[0]: -1, FOO[1]: -1, FOO[2]: -1}
            # The Empty group lost its last offset: it is gone.
            assert manager.get_group("grp") is None
