"""KafkaApis request-level cases after Kafka 3.7's KafkaApisTest and the *RequestTest suites: ListOffsets,
OffsetForLeaderEpoch and Metadata.

Each test sends real requests to a running in-process cluster (as Kafka's BaseRequestTest
subclasses send them to real brokers) and asserts the error codes and values Kafka's test
asserts; tests/helpers_kafka_apis.py holds the helpers (``send_at`` reads a request at a wire
version). Produce, Fetch and the group requests are in tests/test_kafka_apis_produce_fetch_kafka.py,
CreateTopics and DeleteTopics in tests/test_kafka_apis_admin_kafka.py.
"""

from __future__ import annotations

import anyio
import pytest

from helpers_kafka_apis import (
    EARLIEST,
    LATEST,
    TOPIC,
    TP,
    epoch_request,
    leader_moved_away_from,
    list_offsets,
    new_id,
    only_epoch_end,
    only_partition,
    send_at,
)
from kafka_ref import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataRequestTopic
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------------------ ListOffsets


async def test_list_offsets_error_codes() -> None:
    """Mirrors kafka.server.ListOffsetsRequestTest#testListOffsetsErrorCodes: an unknown topic is
    UNKNOWN_TOPIC_OR_PARTITION for a consumer, a replica and the debugging id; on a follower the
    consumer and the replica get NOT_LEADER_OR_FOLLOWER and the debugging id (-2) is answered;
    a broker with no replica answers NOT_LEADER_OR_FOLLOWER to all three."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        consumer = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, current_leader_epoch=0)
        replica = list_offsets(0, current_leader_epoch=0)
        debug = list_offsets(ListOffsetsRequest.DEBUGGING_REPLICA_ID, current_leader_epoch=0)
        for request in (consumer, replica, debug):
            assert only_partition(await send_at(cluster, 0, request)).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2]})
        await cluster.wait_until(lambda: all(cluster.broker(b).metadata_cache.contains(TP) for b in (0, 1, 2)))
        expected = {
            2: (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_LEADER_OR_FOLLOWER, Errors.NONE),  # the follower
            0: (Errors.NOT_LEADER_OR_FOLLOWER,) * 3,  # no replica here
            1: (Errors.NONE,) * 3,  # the leader
        }
        for broker, errors in expected.items():
            got = [Errors.for_code(only_partition(await send_at(cluster, broker, r)).error_code)
                   for r in (consumer, replica, debug)]
            assert (broker, got) == (broker, list(errors))


async def test_list_offsets_current_epoch_validation() -> None:
    """Mirrors kafka.server.ListOffsetsRequestTest#testCurrentEpochValidation: after a leader change
    the new leader answers NONE without an epoch and for its epoch, FENCED_LEADER_EPOCH for an older
    one and UNKNOWN_LEADER_EPOCH for a newer one; a follower answers NOT_LEADER_OR_FOLLOWER without
    an epoch or with the current one, and the epoch errors otherwise."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        leader, epoch, follower = await leader_moved_away_from(cluster, 1)
        assert epoch > 0
        cases = [
            (leader, -1, Errors.NONE), (leader, epoch, Errors.NONE), (leader, epoch - 1, Errors.FENCED_LEADER_EPOCH),
            (leader, epoch + 1, Errors.UNKNOWN_LEADER_EPOCH),
            (follower, -1, Errors.NOT_LEADER_OR_FOLLOWER), (follower, epoch, Errors.NOT_LEADER_OR_FOLLOWER),
            (follower, epoch + 1, Errors.UNKNOWN_LEADER_EPOCH), (follower, epoch - 1, Errors.FENCED_LEADER_EPOCH),
        ]
        for broker, current, error in cases:
            request = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, current_leader_epoch=current)
            got = Errors.for_code(only_partition(await send_at(cluster, broker, request)).error_code)
            assert (broker, current, got) == (broker, current, error)


async def test_list_offsets_response_includes_leader_epoch_by_version() -> None:
    """Mirrors kafka.server.ListOffsetsRequestTest#testResponseIncludesLeaderEpoch and
    #testResponseDefaultOffsetAndLeaderEpochForAllVersions: ten records (the last one stamped
    10 ms later); timestamp 0 and EARLIEST find offset 0, LATEST 10, MAX_TIMESTAMP 9; the leader
    epoch is in the answer from version 4 on (-1 before). After a leader change the offsets stay
    and LATEST carries the new epoch, MAX_TIMESTAMP its record's (Kafka 3.8's assertion)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        from kafka_ref.common.records import MemoryRecords, SimpleRecord

        now = cluster.now_ms()
        records = [SimpleRecord(None, b"msg %d" % i, timestamp=now) for i in range(9)]
        records.append(SimpleRecord(None, b"test-10", timestamp=now + 10))
        from kafka_ref.common.requests.produce import ProduceRequest

        produced = await cluster.send(1, ProduceRequest.build(acks=-1, timeout_ms=30000,
                                                              records={TP: MemoryRecords.with_records(records)}))
        assert produced.responses_by_partition()[TP].error_code == 0

        async def offset_and_epoch(broker: int, timestamp: int, version: int | None) -> tuple[int, int, int]:
            request = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, timestamp=timestamp)
            p = only_partition(await send_at(cluster, broker, request, version))
            return p.offset, p.leader_epoch, p.error_code

        for version in range(1, 8):
            epoch = 0 if version >= 4 else -1
            assert await offset_and_epoch(1, 0, version) == (0, epoch, 0)
            assert await offset_and_epoch(1, EARLIEST, version) == (0, epoch, 0)
            assert await offset_and_epoch(1, LATEST, version) == (10, epoch, 0)
            if version >= 7:
                assert await offset_and_epoch(1, ListOffsetsRequest.MAX_TIMESTAMP, version) == (9, 0, 0)
        leader, epoch, _ = await leader_moved_away_from(cluster, 1)
        await cluster.wait_until(lambda: cluster.replica_state(leader, TOPIC, 0).high_watermark == 10)
        assert await offset_and_epoch(leader, 0, None) == (0, 0, 0)
        assert await offset_and_epoch(leader, EARLIEST, None) == (0, 0, 0)
        assert await offset_and_epoch(leader, LATEST, None) == (10, epoch, 0)
        # The record's own epoch, as Kafka 3.8's version of the test asserts (3.7 answered the latest
        # epoch of the cache here; KAFKA-16310 changed it).
        assert await offset_and_epoch(leader, ListOffsetsRequest.MAX_TIMESTAMP, None) == (9, 0, 0)


async def test_list_offsets_duplicates_and_authorization() -> None:
    """Mirrors KafkaApis#handleListOffsetRequestV1AndAbove: a partition named twice is
    INVALID_REQUEST (both entries, offsets -1) while the others are answered; a topic the
    principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED for every partition, after the
    authorized topics."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, partitions=2)
        await cluster.create_topic("secret", partitions=1)
        await cluster.produce(0, TOPIC, 1, [b"a", b"b"], acks=1)
        request = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, timestamp=LATEST, partitions=(0, 1, 0))
        [topic] = (await send_at(cluster, 0, request)).topics
        assert [(p.partition_index, p.error_code, p.offset, p.timestamp) for p in topic.partitions] == [
            (0, Errors.INVALID_REQUEST.code, -1, -1), (1, 0, 2, -1), (0, Errors.INVALID_REQUEST.code, -1, -1)]
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", "secret")
        request = ListOffsetsRequest(replica_id=-1, topics=(
            ListOffsetsTopic(name="secret", partitions=(ListOffsetsPartition(partition_index=0, timestamp=LATEST),)),
            ListOffsetsTopic(name=TOPIC, partitions=(ListOffsetsPartition(partition_index=1, timestamp=LATEST),))))
        response = await send_at(cluster, 0, request)
        assert [(t.name, [(p.partition_index, p.error_code, p.offset) for p in t.partitions]) for t in response.topics] == [
            (TOPIC, [(1, 0, 2)]), ("secret", [(0, Errors.TOPIC_AUTHORIZATION_FAILED.code, -1)])]


async def test_list_offsets_isolation_level_only_for_consumers() -> None:
    """Mirrors kafka.server.KafkaApisTest#testReadUncommittedConsumerListOffsetLatest and
    KafkaApis#handleListOffsetRequestV1AndAbove: a consumer's LATEST is bounded by the high
    watermark; a replica's and the debugging id's by the log end (no isolation level), whatever
    isolation level the request carries."""
    async with Cluster(brokers=2, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]})
        await cluster.produce(0, TOPIC, 0, [b"a", b"b"], acks=-1)
        cluster.network.cut_link(0, 1)
        assert (await cluster.produce(0, TOPIC, 0, [b"c"], acks=1)).error is Errors.NONE
        state = cluster.replica_state(0, TOPIC, 0)
        assert (state.high_watermark, state.log_end_offset) == (2, 3)
        for replica_id, expected in ((ListOffsetsRequest.CONSUMER_REPLICA_ID, 2),
                                     (ListOffsetsRequest.DEBUGGING_REPLICA_ID, 3), (1, 3)):
            for isolation in (0, 1):
                request = list_offsets(replica_id, timestamp=LATEST, isolation_level=isolation)
                p = only_partition(await send_at(cluster, 0, request))
                assert (replica_id, isolation, p.error_code, p.offset) == (replica_id, isolation, 0, expected)


@pytest.mark.parametrize(("raised", "version", "answered"), [
    (Errors.FENCED_LEADER_EPOCH, None, Errors.FENCED_LEADER_EPOCH),
    (Errors.UNKNOWN_LEADER_EPOCH, None, Errors.UNKNOWN_LEADER_EPOCH),
    (Errors.NOT_LEADER_OR_FOLLOWER, None, Errors.NOT_LEADER_OR_FOLLOWER),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, None, Errors.UNKNOWN_TOPIC_OR_PARTITION),
    (Errors.OFFSET_NOT_AVAILABLE, 5, Errors.OFFSET_NOT_AVAILABLE),
    (Errors.OFFSET_NOT_AVAILABLE, 4, Errors.LEADER_NOT_AVAILABLE),
    (None, None, Errors.UNKNOWN_SERVER_ERROR),
])
async def test_list_offset_failed_get_leader_replica(raised: Errors | None, version: int | None, answered: Errors) -> None:
    """Mirrors kafka.server.KafkaApisTest#testLeaderReplicaIfLocalRaisesFencedLeaderEpoch,
    #...UnknownLeaderEpoch, #...NotLeaderOrFollower, #...UnknownTopicOrPartition
    (testListOffsetFailedGetLeaderReplica) and KafkaApis#handleListOffsetRequestV1AndAbove's other
    cases: the replica manager's error (stubbed, as Kafka's test mocks it) is that partition's
    answer with offset and timestamp -1; OFFSET_NOT_AVAILABLE reaches clients from version 5 and is
    LEADER_NOT_AVAILABLE before; any other failure is UNKNOWN_SERVER_ERROR for the partition alone,
    and the broker answers the next request."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        replica_manager = cluster.broker(0).replica_manager
        real = replica_manager.fetch_offset_for_timestamp

        def failing(tp: TopicPartition, *args: object) -> object:
            raise raised.exception("stubbed") if raised is not None else RuntimeError("a bug")

        replica_manager.fetch_offset_for_timestamp = failing
        request = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, current_leader_epoch=15)
        p = only_partition(await send_at(cluster, 0, request, version))
        assert (Errors.for_code(p.error_code), p.offset, p.timestamp) == (answered, -1, -1)
        replica_manager.fetch_offset_for_timestamp = real
        p = only_partition(await send_at(cluster, 0, list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID)))
        assert (p.error_code, p.offset) == (0, 0)


# ------------------------------------------------------------------------------ OffsetForLeaderEpoch


# ------------------------------------------------------------------------------ OffsetForLeaderEpoch


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_offsets_for_leader_epoch_error_codes(mode: str) -> None:
    """Mirrors kafka.server.OffsetsForLeaderEpochRequestTest#testOffsetsForLeaderEpochErrorCodes: a
    follower's request for an unknown topic is UNKNOWN_TOPIC_OR_PARTITION; sent to a follower or
    to a broker with no replica it is NOT_LEADER_OR_FOLLOWER."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        request = epoch_request()
        response = await cluster.send(0, request)
        assert only_epoch_end(response).error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2]})
        await cluster.wait_until(lambda: all(cluster.broker(b).metadata_cache.contains(TP) for b in (0, 1, 2))
                                 and cluster.leader_for(TOPIC, 0) == 1)
        for broker in (2, 0):
            end = only_epoch_end(await cluster.send(broker, request))
            assert (broker, end.error_code, end.leader_epoch, end.end_offset) == (
                broker, Errors.NOT_LEADER_OR_FOLLOWER.code, -1, -1)
        end = only_epoch_end(await cluster.send(1, request))
        assert (end.error_code, end.leader_epoch, end.end_offset) == (0, 0, 0)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_offsets_for_leader_epoch_current_epoch_validation(mode: str) -> None:
    """Mirrors kafka.server.OffsetsForLeaderEpochRequestTest#testCurrentEpochValidation: the same
    matrix as ListOffsets's after a leader change (NONE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH
    on the leader; NOT_LEADER_OR_FOLLOWER or the epoch errors on a follower)."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        await cluster.wait_until(lambda: cluster.leader_for(TOPIC, 0) == 1, message="broker 1 leading")
        leader, epoch, follower = await leader_moved_away_from(cluster, 1)
        cases = [
            (leader, -1, Errors.NONE), (leader, epoch, Errors.NONE), (leader, epoch - 1, Errors.FENCED_LEADER_EPOCH),
            (leader, epoch + 1, Errors.UNKNOWN_LEADER_EPOCH),
            (follower, -1, Errors.NOT_LEADER_OR_FOLLOWER), (follower, epoch, Errors.NOT_LEADER_OR_FOLLOWER),
            (follower, epoch + 1, Errors.UNKNOWN_LEADER_EPOCH), (follower, epoch - 1, Errors.FENCED_LEADER_EPOCH),
        ]
        for broker, current, error in cases:
            end = only_epoch_end(await cluster.send(broker, epoch_request(current_leader_epoch=current)))
            assert (broker, current, Errors.for_code(end.error_code)) == (broker, current, error)


async def test_offsets_for_leader_epoch_from_consumer_needs_describe() -> None:
    """Mirrors KafkaApis#handleOffsetForLeaderEpochRequest (KIP-320): a consumer (replica id -2,
    no ClusterAction) is answered for the topics it may DESCRIBE, TOPIC_AUTHORIZATION_FAILED
    (epoch and offset -1) for the others; a broker's principal (ClusterAction) is answered for all."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        await cluster.produce(0, TOPIC, 0, [b"a", b"b", b"c"], acks=1)
        consumer = epoch_request(replica_id=-2, current_leader_epoch=0)
        end = only_epoch_end(await send_at(cluster, 0, consumer))
        assert (end.error_code, end.leader_epoch, end.end_offset) == (0, 0, 3)
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", TOPIC)
        end = only_epoch_end(await send_at(cluster, 0, consumer))
        assert (end.error_code, end.leader_epoch, end.end_offset) == (Errors.TOPIC_AUTHORIZATION_FAILED.code, -1, -1)
        end = only_epoch_end(await cluster.send(0, consumer))
        assert (end.error_code, end.end_offset) == (0, 3)


# ------------------------------------------------------------------------------ Metadata


@pytest.mark.parametrize("version", [10, 11])
async def test_invalid_metadata_request_returns_error(version: int) -> None:
    """Mirrors kafka.server.KafkaApisTest#testInvalidMetadataRequestReturnsError: before version 12
    a topic without a name or with a topic id makes the whole request INVALID_REQUEST; the one
    topic entry of the answer has a name ("" for a null one), never None."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        topics = [MetadataRequestTopic(name=None, topic_id=new_id()), MetadataRequestTopic(name=None),
                  MetadataRequestTopic(topic_id=new_id()), MetadataRequestTopic(name="topic1", topic_id=new_id())]
        for topic in topics:
            response = await send_at(cluster, 0, MetadataRequest(topics=(topic,)), version)
            assert len(response.topics) == 1
            assert response.error_counts() == {Errors.INVALID_REQUEST.code: 1}
            assert response.topics[0].name is not None


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_metadata_by_topic_id(mode: str) -> None:
    """Mirrors kafka.server.MetadataRequestTest#testTopicIdsInResponse and KafkaApis#handleTopicMetadataRequest
    at version 12: topics asked for by id come back with their names and ids; an id nobody has is
    UNKNOWN_TOPIC_ID with a null name, listed first; asked for by name the answer carries the id."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic("t1", partitions=2, replication_factor=2)
        await cluster.create_topic("t2", partitions=1)
        await cluster.wait_until(lambda: {"t1", "t2"} <= cluster.broker(1).metadata_cache.get_all_topics())
        ids = {name: cluster.broker(1).metadata_cache.get_topic_id(name) for name in ("t1", "t2")}
        assert ZERO_UUID not in ids.values()
        by_name = await send_at(cluster, 1, MetadataRequest.for_topics(["t1", "t2"], allow_auto_topic_creation=False), 12)
        assert {t.name: t.topic_id for t in by_name.topics} == ids
        missing = new_id()
        request = MetadataRequest(topics=(MetadataRequestTopic(topic_id=ids["t1"], name=None),
                                          MetadataRequestTopic(topic_id=missing, name=None)),
                                  allow_auto_topic_creation=False)
        response = await send_at(cluster, 1, request, 12)
        assert [(t.name, t.topic_id, t.error_code, len(t.partitions)) for t in response.topics] == [
            (None, missing, Errors.UNKNOWN_TOPIC_ID.code, 0), ("t1", ids["t1"], 0, 2)]


async def test_unauthorized_topic_metadata_request() -> None:
    """Mirrors kafka.server.KafkaApisTest#testUnauthorizedTopicMetadataRequest: a topic the
    principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED; asked for by id the answer keeps the
    id but no name, asked for by name it keeps the name but no id; the authorized topic is
    answered in full. An all-topics request leaves the unauthorized topic out."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic("authorized-topic")
        await cluster.create_topic("unauthorized-topic")
        cache = cluster.broker(0).metadata_cache
        ids = {n: cache.get_topic_id(n) for n in ("authorized-topic", "unauthorized-topic")}
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", "unauthorized-topic")
        request = MetadataRequest(topics=tuple(MetadataRequestTopic(topic_id=ids[n], name=None)
                                               for n in ("authorized-topic", "unauthorized-topic")))
        response = await send_at(cluster, 0, request, 12)
        by_id = {t.topic_id: t for t in response.topics}
        assert (by_id[ids["unauthorized-topic"]].error_code, by_id[ids["unauthorized-topic"]].name) == (
            Errors.TOPIC_AUTHORIZATION_FAILED.code, None)
        assert (by_id[ids["authorized-topic"]].error_code, by_id[ids["authorized-topic"]].name) == (0, "authorized-topic")
        response = await send_at(cluster, 0, MetadataRequest.for_topics(["authorized-topic", "unauthorized-topic"], False))
        by_name = {t.name: t for t in response.topics}
        assert (by_name["unauthorized-topic"].error_code, by_name["unauthorized-topic"].topic_id,
                by_name["unauthorized-topic"].partitions) == (Errors.TOPIC_AUTHORIZATION_FAILED.code, ZERO_UUID, ())
        assert (by_name["authorized-topic"].error_code, by_name["authorized-topic"].topic_id) == (
            0, ids["authorized-topic"])
        response = await send_at(cluster, 0, MetadataRequest.all_topics())
        assert [t.name for t in response.topics] == ["authorized-topic"]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_metadata_cluster_id_rack_internal_and_preferred_replica(mode: str) -> None:
    """Mirrors kafka.server.MetadataRequestTest#testClusterIdIsValid, #testRack, #testIsInternal,
    #testNoTopicsRequest, #testAllTopicsRequest and #testPreferredReplica: a 22-character base64
    cluster id; each broker with its rack; __consumer_offsets internal, a user topic not; an empty
    topic list (v1+) asks for no topics, a null one for all; on two brokers every partition lists
    its assigned replicas in order, the first one leading, all in sync."""
    import re

    racks = {b: f"rack/{b}" for b in range(3)}
    async with Cluster(brokers=3, metadata_mode=mode, racks=racks, seed=3) as cluster:
        await cluster.create_topic("__consumer_offsets", partitions=3, replication_factor=2,
                                   config={"cleanup.policy": "compact"})
        await cluster.create_topic("notInternal", partitions=3, replication_factor=2)
        assignment = {0: [1, 2, 0], 1: [2, 0, 1]}
        await cluster.create_topic("t1", replica_assignment=assignment)
        await cluster.wait_until(lambda: all({"t1", "notInternal", "__consumer_offsets"}
                                             <= cluster.broker(b).metadata_cache.get_all_topics() for b in (0, 1)))
        response = await send_at(cluster, 0, MetadataRequest.all_topics(), 2)
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", response.cluster_id)
        assert {b.node_id: b.rack for b in response.brokers} == racks
        assert response.errors() == {}
        assert {t.name: t.is_internal for t in response.topics} == {"__consumer_offsets": True, "notInternal": False,
                                                                    "t1": False}
        response = await send_at(cluster, 0, MetadataRequest(topics=()), 1)
        assert (response.errors(), response.topics) == ({}, ())
        for broker in (0, 1):
            [t1] = (await send_at(cluster, broker, MetadataRequest.for_topics(["t1"]))).topics
            assert t1.error_code == 0
            assert {p.partition_index: (p.replica_nodes, p.isr_nodes, p.leader_id) for p in t1.partitions} == {
                p: (tuple(r), tuple(r), r[0]) for p, r in assignment.items()}


async def test_metadata_controller_id() -> None:
    """Mirrors kafka.server.MetadataRequestTest#testControllerId (ZooKeeper mode): the answer names
    the active controller; after it fails over, the new one."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.wait_until(lambda: cluster.controller_id() is not None)
        first = cluster.controller_id()
        other = next(b for b in cluster.live_broker_ids() if b != first)
        assert (await send_at(cluster, other, MetadataRequest.all_topics(), 1)).controller_id == first
        cluster.kill_broker(first)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, first), timeout_ms=60000)
        second = cluster.controller_id()
        await cluster.wait_until(lambda: cluster.broker(other).metadata_cache.controller_id == second)
        assert (await send_at(cluster, other, MetadataRequest.all_topics(), 1)).controller_id == second


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_metadata_replica_down_response(mode: str) -> None:
    """Mirrors kafka.server.MetadataRequestTest#testReplicaDownResponse: with a follower's broker down
    (and gone from the brokers list), version 0 leaves it out of the replicas with
    REPLICA_NOT_AVAILABLE, version 1 and later list all three replicas with no error."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic("replicaDown", replica_assignment={0: [0, 1, 2]})
        down = 2 if mode == "kraft" or cluster.controller_id() != 2 else 1
        cluster.kill_broker(down)

        async def brokers_listed() -> set[int]:
            return {b.node_id for b in (await send_at(cluster, 0, MetadataRequest.for_topics(["replicaDown"]))).brokers}

        for _ in range(600):
            if down not in await brokers_listed():
                break
            await anyio.sleep(0.1)
        assert down not in await brokers_listed()
        for version, error, replicas in ((0, Errors.REPLICA_NOT_AVAILABLE, 2), (1, Errors.NONE, 3), (None, Errors.NONE, 3)):
            request = MetadataRequest.for_topics(["replicaDown"])
            response = await send_at(cluster, 0, request, version)
            assert response.errors() == {}
            assert down not in {b.node_id for b in response.brokers}
            [partition] = response.topics[0].partitions
            assert (version, Errors.for_code(partition.error_code), len(partition.replica_nodes)) == (version, error, replicas)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_auto_create_topic_with_invalid_replication_factor(mode: str) -> None:
    """Mirrors kafka.server.MetadataRequestTest#testAutoCreateTopicWithInvalidReplicationFactor: with
    fewer live brokers than default.replication.factor, auto-creation answers
    INVALID_REPLICATION_FACTOR in ZooKeeper mode (the broker tried and failed) and
    UNKNOWN_TOPIC_OR_PARTITION in KRaft mode (sent to the controller), with no partitions."""
    async with Cluster(brokers=3, metadata_mode=mode, config={"default.replication.factor": 3}, seed=3) as cluster:
        await cluster.wait_until(lambda: cluster.controller_id() is not None)
        keep = cluster.controller_id() if mode == "zk" else 0
        for b in cluster.live_broker_ids():
            if b != keep:
                cluster.kill_broker(b)
        await cluster.wait_until(lambda: len(cluster.broker(keep).metadata_cache.get_alive_brokers()) == 1,
                                 timeout_ms=60000)
        response = await send_at(cluster, keep, MetadataRequest.for_topics(["testAutoCreateTopic"]))
        [topic] = response.topics
        expected = Errors.INVALID_REPLICATION_FACTOR if mode == "zk" else Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert (topic.name, Errors.for_code(topic.error_code), topic.partitions) == ("testAutoCreateTopic", expected, ())


async def test_auto_create_of_colliding_topics() -> None:
    """Mirrors kafka.server.MetadataRequestTest#testAutoCreateOfCollidingTopics (ZooKeeper mode): two
    names that differ only in '.' and '_' asked for together: one is created (LEADER_NOT_AVAILABLE
    at first, then one partition of two replicas with a leader), the other is
    INVALID_TOPIC_EXCEPTION."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"default.replication.factor": 2}, seed=3) as cluster:
        names = ["testAutoCreate.Topic", "testAutoCreate_Topic"]
        response = await send_at(cluster, 0, MetadataRequest.for_topics(names))
        errors = {t.name: Errors.for_code(t.error_code) for t in response.topics}
        assert set(errors) == set(names)
        assert set(errors.values()) == {Errors.LEADER_NOT_AVAILABLE, Errors.INVALID_TOPIC_EXCEPTION}
        created = next(n for n, e in errors.items() if e is Errors.LEADER_NOT_AVAILABLE)
        await cluster.wait_until(lambda: cluster.leader_for(created, 0) >= 0
                                 and cluster.broker(0).metadata_cache.contains(TopicPartition(created, 0)))
        [topic] = (await send_at(cluster, 0, MetadataRequest.for_topics([created]))).topics
        assert (topic.error_code, [p.error_code for p in topic.partitions]) == (0, [0])
        [partition] = topic.partitions
        assert (partition.partition_index, len(partition.replica_nodes)) == (0, 2) and partition.leader_id >= 0


async def test_metadata_topic_authorized_operations() -> None:
    """Mirrors KafkaApis#handleTopicMetadataRequest's includeTopicAuthorizedOperations (version 8+,
    AuthHelper#authorizedOperations): asked for, each topic carries one bit per AclOperation the
    principal may perform on it (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
    DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11), a denied one cleared; not asked for, or before
    version 8, the field keeps its omitted value (-2147483648)."""
    from kafka_ref.common.requests.metadata import AUTHORIZED_OPERATIONS_OMITTED

    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DELETE", TOPIC)
        request = MetadataRequest(topics=(MetadataRequestTopic(name=TOPIC),), include_topic_authorized_operations=True)
        everything = sum(1 << c for c in (3, 4, 5, 6, 7, 8, 10, 11))
        [topic] = (await send_at(cluster, 0, request, 8)).topics
        assert topic.topic_authorized_operations == everything & ~(1 << 6)
        [topic] = (await send_at(cluster, 0, request, 7)).topics
        assert topic.topic_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED
        [topic] = (await send_at(cluster, 0, MetadataRequest(topics=(MetadataRequestTopic(name=TOPIC),)))).topics
        assert topic.topic_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED
