"""KafkaApis request-level cases after Kafka 3.7's KafkaApisTest and the *RequestTest suites: Produce,
Fetch, OffsetCommit, OffsetFetch, SyncGroup and malformed requests.

Each test sends real requests to a running in-process cluster and asserts the error codes and
values Kafka's test asserts (tests/helpers_kafka_apis.py holds the helpers). ListOffsets,
OffsetForLeaderEpoch and Metadata are in tests/test_kafka_apis_kafka.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from helpers_kafka_apis import (
    TOPIC,
    TP,
    coordinator_ready,
    leader_moved_away_from,
    list_offsets,
    one_batch,
    only_epoch_end,
    only_partition,
    only_produce,
    produce_request,
    send_at,
)
from kafka_ref import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.list_offsets import ListOffsetsRequest
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL

pytestmark = pytest.mark.anyio


# ------------------------------------------------------------------------------ Produce


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_simple_produce_request(mode: str) -> None:
    """Mirrors kafka.server.ProduceRequestTest#testSimpleProduceRequest: one uncompressed record at
    offset 0, then two gzip records at offset 1; NONE, no append time, no record errors."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC, replication_factor=2)
        leader = cluster.leader_for(TOPIC, 0)
        now = cluster.now_ms()
        for records, offset in ((one_batch(b"value", timestamp=now), 0),
                                (one_batch(b"value1", b"value2", timestamp=now, compression="gzip"), 1)):
            p = only_produce(await send_at(cluster, leader, produce_request(records)))
            assert (p.index, p.error_code, p.base_offset, p.log_append_time_ms, p.record_errors) == (0, 0, offset, -1, ())


@pytest.mark.parametrize("config", ["message.timestamp.difference.max.ms", "message.timestamp.before.max.ms",
                                    "message.timestamp.after.max.ms"])
async def test_produce_with_invalid_timestamp(config: str) -> None:
    """Mirrors kafka.server.ProduceRequestTest#testProduceWithInvalidTimestamp in part: with the
    topic's bound at 1000 ms, three gzip records stamped five hours off are INVALID_TIMESTAMP with
    base offset -1, and nothing is written. Kafka also lists one record error per record and answers
    "One or more records have been rejected due to invalid timestamp"; kafka_ref's LogValidator
    stops at the first record (record_errors empty, that record's message), so those assertions are
    left out."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, config={config: "1000"})
        five_hours = 5 * 60 * 60 * 1000
        off = five_hours if config == "message.timestamp.after.max.ms" else -five_hours
        records = one_batch(b"hello", b"there", b"beautiful", timestamp=cluster.now_ms() + off, compression="gzip")
        p = only_produce(await send_at(cluster, 0, produce_request(records)))
        assert (Errors.for_code(p.error_code), p.base_offset) == (Errors.INVALID_TIMESTAMP, -1)
        assert cluster.replica_state(0, TOPIC, 0).log_end_offset == 0


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_produce_to_non_replica(mode: str) -> None:
    """Mirrors kafka.server.ProduceRequestTest#testProduceToNonReplica: a broker without a replica
    answers NOT_LEADER_OR_FOLLOWER."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1]})
        await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.contains(TP))
        p = only_produce(await send_at(cluster, 0, produce_request(one_batch(b"value"))))
        assert p.error_code == Errors.NOT_LEADER_OR_FOLLOWER.code


async def test_produce_response_contains_new_leader_on_not_leader_or_follower() -> None:
    """Mirrors kafka.server.KafkaApisTest#testProduceResponseContainsNewLeaderOnNotLeaderOrFollower and
    #testProduceResponseReplicaManagerLookupErrorOnNotLeaderOrFollower (KIP-951): from version 10 a
    NOT_LEADER_OR_FOLLOWER partition names the leader and its epoch, from the follower's own
    partition or, on a broker without a replica, from the metadata cache, and the response lists
    the leader's endpoint once; version 9 carries neither."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2]})
        await cluster.wait_until(lambda: all(cluster.broker(b).metadata_cache.contains(TP) for b in (0, 1, 2)))
        epoch = cluster.partition_state(TOPIC, 0)["leader_epoch"]
        leader_node = cluster.broker(0).metadata_cache.get_alive_broker_node(1)
        for broker in (2, 0):  # the follower, then a broker without a replica
            for version in (10, 11, None):
                response = await send_at(cluster, broker, produce_request(one_batch(b"test"), acks=1), version)
                p = only_produce(response)
                assert (broker, p.error_code, p.current_leader.leader_id, p.current_leader.leader_epoch) == (
                    broker, Errors.NOT_LEADER_OR_FOLLOWER.code, 1, epoch)
                assert [(n.node_id, n.host, n.port) for n in response.node_endpoints] == [
                    (1, leader_node.host, leader_node.port)]
            response = await send_at(cluster, broker, produce_request(one_batch(b"test"), acks=1), 9)
            p = only_produce(response)
            assert (p.error_code, p.current_leader.leader_id, p.current_leader.leader_epoch, response.node_endpoints) == (
                Errors.NOT_LEADER_OR_FOLLOWER.code, -1, -1, ())


@pytest.mark.parametrize("acks", [0, 1, -1])
async def test_transactional_records_need_a_transactional_id(acks: int) -> None:
    """Mirrors KafkaApis#handleProduceRequest (RequestUtils#hasTransactionalRecords): transactional
    records without a transactional id fail the whole request with
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED (base offset -1 for every partition, the plain partition
    too), nothing is written; with acks=0 the broker closes the connection instead."""
    from kafka_ref.common.requests.produce import ProduceRequest
    from kafka_ref.network.network import DisconnectException

    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        await cluster.create_topic("plain")
        txn = one_batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
        request = ProduceRequest.build(acks=acks, timeout_ms=3000, records={
            TopicPartition("plain", 0): one_batch(b"b"), TP: txn})
        if acks == 0:
            with pytest.raises(DisconnectException):
                await send_at(cluster, 0, request)
        else:
            response = await send_at(cluster, 0, request)
            assert {tp: (p.error_code, p.base_offset) for tp, p in response.responses_by_partition().items()} == {
                TopicPartition("plain", 0): (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code, -1),
                TP: (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code, -1)}
        assert [cluster.replica_state(0, t, 0).log_end_offset for t in (TOPIC, "plain")] == [0, 0]


async def test_produce_with_invalid_required_acks() -> None:
    """Mirrors ReplicaManager#appendRecords as KafkaApis reaches it: acks other than -1, 0 and 1 are
    INVALID_REQUIRED_ACKS for every partition (base offset -1), nothing is written, and the
    broker serves the next request."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        for acks in (2, -2, 5):
            p = only_produce(await send_at(cluster, 0, produce_request(one_batch(b"x"), acks=acks)))
            assert (acks, p.error_code, p.base_offset) == (acks, Errors.INVALID_REQUIRED_ACKS.code, -1)
        assert cluster.replica_state(0, TOPIC, 0).log_end_offset == 0
        p = only_produce(await send_at(cluster, 0, produce_request(one_batch(b"x"), acks=1)))
        assert (p.error_code, p.base_offset) == (0, 0)


@pytest.mark.parametrize("internal", ["__consumer_offsets", "__transaction_state"])
async def test_produce_to_internal_topic_is_refused(internal: str) -> None:
    """Mirrors ReplicaManager#appendToLocalLog as KafkaApis#handleProduceRequest reaches it (internal
    topics only for the admin client id, never for a producer): an append to an internal topic is
    INVALID_TOPIC_EXCEPTION and nothing is written."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(internal, config={"cleanup.policy": "compact"})
        p = only_produce(await send_at(cluster, 0, produce_request(one_batch(b"x"), acks=1, topic=internal)))
        assert (p.error_code, p.base_offset) == (Errors.INVALID_TOPIC_EXCEPTION.code, -1)
        assert cluster.replica_state(0, internal, 0).log_end_offset == 0


# ------------------------------------------------------------------------------ Fetch


def consumer_fetch(cluster: Cluster, broker: int, fetch_offset: int = 0, current_leader_epoch: int = -1,
                   last_fetched_epoch: int = -1, by_id: bool = True) -> Any:
    """FetchRequest.Builder#forConsumer for topic-0 (max wait 0, min bytes 1): by topic id at the
    newest version, or by name (v12)."""
    from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest
    from kafka_ref.common.topic_partition import TopicIdPartition

    key: Any = TP
    if by_id:
        key = TopicIdPartition(cluster.broker(broker).metadata_cache.get_topic_id(TOPIC), TP)
    return FetchRequest.for_consumer(0, 1, {key: FetchPartition(
        partition=0, fetch_offset=fetch_offset, current_leader_epoch=current_leader_epoch,
        last_fetched_epoch=last_fetched_epoch, partition_max_bytes=1024)})


def fetched(cluster: Cluster, broker: int, response: Any) -> Any:
    names = {tid: name for name, tid in cluster.broker(broker).metadata_cache.topic_ids.items()}
    return response.response_data(names)[TP]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_fetch_request_to_non_replica(mode: str) -> None:
    """Mirrors kafka.server.FetchRequestTest#testFetchRequestToNonReplica: a broker without a replica
    answers NOT_LEADER_OR_FOLLOWER, by topic id (the newest version) and by name (v12)."""
    async with Cluster(brokers=2, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1]})
        await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.contains(TP))
        for by_id in (True, False):
            data = fetched(cluster, 0, await send_at(cluster, 0, consumer_fetch(cluster, 0, by_id=by_id)))
            assert (by_id, data.error_code) == (by_id, Errors.NOT_LEADER_OR_FOLLOWER.code)


@pytest.mark.parametrize("by_id", [True, False])
async def test_fetch_current_epoch_validation(by_id: bool) -> None:
    """Mirrors kafka.server.FetchRequestTest#testCurrentEpochValidation (and ...V12, by name): after
    a leader change the leader answers NONE without an epoch or with its own, FENCED_LEADER_EPOCH
    for an older and UNKNOWN_LEADER_EPOCH for a newer one; a follower serves a consumer of this
    version (KIP-392) with the same answers."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        leader, epoch, follower = await leader_moved_away_from(cluster, 1)
        for broker in (leader, follower):
            for current, error in ((-1, Errors.NONE), (epoch, Errors.NONE), (epoch - 1, Errors.FENCED_LEADER_EPOCH),
                                   (epoch + 1, Errors.UNKNOWN_LEADER_EPOCH)):
                request = consumer_fetch(cluster, broker, current_leader_epoch=current, by_id=by_id)
                data = fetched(cluster, broker, await send_at(cluster, broker, request))
                assert (broker, current, Errors.for_code(data.error_code)) == (broker, current, error)


@pytest.mark.parametrize("by_id", [True, False])
async def test_fetch_last_fetched_epoch_validation(by_id: bool) -> None:
    """Mirrors kafka.server.FetchRequestTest#testLastFetchedEpochValidation (and ...V12): ten records
    in the first epoch, a leader change, ten more; a fetch in the middle of the second epoch that
    says it last fetched the first epoch is answered NONE with no records and the diverging epoch
    (the first epoch, ending where the second began)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        first_epoch = cluster.partition_state(TOPIC, 0)["leader_epoch"]
        assert (await cluster.produce(1, TOPIC, 0, [b"first %d" % i for i in range(10)], acks=-1)).error is Errors.NONE
        first_end = 10
        leader, second_epoch, _ = await leader_moved_away_from(cluster, 1)
        assert (await cluster.produce(leader, TOPIC, 0, [b"second %d" % i for i in range(10)], acks=-1)).error is Errors.NONE
        second_end = 20
        request = consumer_fetch(cluster, leader, fetch_offset=second_end + (second_end - first_end) // 2,
                                 current_leader_epoch=second_epoch, last_fetched_epoch=first_epoch, by_id=by_id)
        data = fetched(cluster, leader, await send_at(cluster, leader, request))
        assert (data.error_code, data.records.size_in_bytes) == (0, 0)
        assert (data.diverging_epoch.epoch, data.diverging_epoch.end_offset) == (first_epoch, first_end)


async def test_fetch_response_contains_new_leader_on_not_leader_or_follower() -> None:
    """Mirrors kafka.server.KafkaApisTest#testFetchResponseContainsNewLeaderOnNotLeaderOrFollower
    (KIP-951): from version 16 a partition refused with NOT_LEADER_OR_FOLLOWER (a broker without a
    replica, answering from its metadata cache) or FENCED_LEADER_EPOCH (the follower's own
    partition, or the leader's) names the leader and its epoch, and the response lists the
    leader's endpoint; version 15 carries neither."""
    async with Cluster(brokers=4, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 3]})
        await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.contains(TP))
        leader, epoch, follower = await leader_moved_away_from(cluster, 1)
        await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.get_partition_info(TP).leader == leader)
        node = cluster.broker(follower).metadata_cache.get_alive_broker_node(leader)
        for broker, current, error in ((0, -1, Errors.NOT_LEADER_OR_FOLLOWER),
                                       (follower, epoch - 1, Errors.FENCED_LEADER_EPOCH),
                                       (leader, epoch - 1, Errors.FENCED_LEADER_EPOCH)):
            request = consumer_fetch(cluster, broker, current_leader_epoch=current)
            response = await send_at(cluster, broker, request, 16)
            data = fetched(cluster, broker, response)
            assert (broker, data.error_code, data.current_leader.leader_id, data.current_leader.leader_epoch) == (
                broker, error.code, leader, epoch)
            assert [(n.node_id, n.host, n.port) for n in response.node_endpoints] == [(leader, node.host, node.port)]
            response = await send_at(cluster, broker, request, 15)
            data = fetched(cluster, broker, response)
            assert (data.error_code, data.current_leader.leader_id, response.node_endpoints) == (error.code, -1, ())


# ------------------------------------------------------------------------------ OffsetCommit


async def test_handle_offset_commit_request_topics_and_partitions_validation() -> None:
    """Mirrors kafka.server.KafkaApisTest#testHandleOffsetCommitRequestTopicsAndPartitionsValidation
    and #testOffsetCommitWithInvalidPartition: foo has two partitions, bar two, zar none; foo-2
    and both zar partitions are UNKNOWN_TOPIC_OR_PARTITION and are listed first (foo-2 before
    foo-0 and foo-1, zar before bar), the others are committed (a simple commit: no member, no
    generation); a negative partition is UNKNOWN_TOPIC_OR_PARTITION too."""
    from kafka_ref.common.requests.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )

    async with Cluster(brokers=1, metadata_mode="zk", config={"offsets.topic.num.partitions": 1}, seed=3) as cluster:
        for name in ("foo", "bar"):
            await cluster.create_topic(name, partitions=2)
        await coordinator_ready(cluster, "group")

        def topic(name: str, offsets: dict[int, int]) -> OffsetCommitRequestTopic:
            return OffsetCommitRequestTopic(name=name, partitions=tuple(
                OffsetCommitRequestPartition(partition_index=p, committed_offset=o) for p, o in offsets.items()))

        request = OffsetCommitRequest(group_id="group", topics=(
            topic("foo", {0: 10, 1: 20, 2: 30}), topic("bar", {0: 40, 1: 50}), topic("zar", {0: 60, 1: 70})))
        response = await send_at(cluster, 0, request)
        unknown = Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
            ("foo", [(2, unknown), (0, 0), (1, 0)]), ("zar", [(0, unknown), (1, unknown)]), ("bar", [(0, 0), (1, 0)])]
        response = await send_at(cluster, 0, OffsetCommitRequest(group_id="group", topics=(topic("foo", {-1: 5}),)))
        assert response.partition_errors() == {TopicPartition("foo", -1): unknown}


# ------------------------------------------------------------------------------ OffsetFetch


async def test_handle_offset_fetch_with_unauthorized_topic_and_top_level_error() -> None:
    """Mirrors kafka.server.KafkaApisTest#testHandleOffsetFetchWithUnauthorizedTopicAndTopLevelError
    and KafkaApis#fetchOffsetsForGroup: two groups asking for foo-0 (DESCRIBE denied) and bar-0;
    while the coordinator cannot answer each group answers its top-level error alone, without the
    unauthorized topic (Kafka's mock says COORDINATOR_NOT_AVAILABLE; a real broker before
    __consumer_offsets exists says NOT_COORDINATOR, GroupCoordinator#validateGroupStatus); once it can, foo-0 is TOPIC_AUTHORIZATION_FAILED (offset -1),
    listed after the coordinator's answer for bar-0 (committed offset 5 for group-1, -1 for
    group-2, which committed nothing)."""
    from kafka_ref.common.requests.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from kafka_ref.common.requests.offset_fetch import (
        OffsetFetchRequest,
        OffsetFetchRequestGroup,
        OffsetFetchRequestTopics,
    )

    async with Cluster(brokers=1, metadata_mode="zk", config={"offsets.topic.num.partitions": 1}, seed=3) as cluster:
        for name in ("foo", "bar"):
            await cluster.create_topic(name)
        cluster.broker(0).apis.authorizer.deny_topic(ANONYMOUS_PRINCIPAL, "DESCRIBE", "foo")
        request = OffsetFetchRequest(groups=tuple(OffsetFetchRequestGroup(group_id=g, topics=(
            OffsetFetchRequestTopics(name="foo", partition_indexes=(0,)),
            OffsetFetchRequestTopics(name="bar", partition_indexes=(0,)))) for g in ("group-1", "group-2")))
        response = await send_at(cluster, 0, request)
        assert [(g.group_id, g.error_code, g.topics) for g in response.groups] == [
            ("group-1", Errors.NOT_COORDINATOR.code, ()), ("group-2", Errors.NOT_COORDINATOR.code, ())]
        await coordinator_ready(cluster, "group-1")
        commit = OffsetCommitRequest(group_id="group-1", topics=(OffsetCommitRequestTopic(
            name="bar", partitions=(OffsetCommitRequestPartition(partition_index=0, committed_offset=5),)),))
        assert (await send_at(cluster, 0, commit)).partition_errors() == {TopicPartition("bar", 0): 0}
        response = await send_at(cluster, 0, request)
        assert [(g.group_id, g.error_code, [(t.name, [(p.partition_index, p.committed_offset, p.error_code)
                                                      for p in t.partitions]) for t in g.topics])
                for g in response.groups] == [
            (g, 0, [("bar", [(0, offset, 0)]), ("foo", [(0, -1, Errors.TOPIC_AUTHORIZATION_FAILED.code)])])
            for g, offset in (("group-1", 5), ("group-2", -1))]


# ------------------------------------------------------------------------------ SyncGroup


@pytest.mark.parametrize("version", [3, 4, 5])
async def test_sync_group_protocol_type_and_name_are_mandatory_since_v5(version: int) -> None:
    """Mirrors kafka.server.KafkaApisTest#testSyncGroupProtocolTypeAndNameAreMandatorySinceV5: a
    SyncGroup without protocol type and name is INCONSISTENT_GROUP_PROTOCOL from version 5; before,
    it goes to the coordinator (which, for a member of no group, answers UNKNOWN_MEMBER_ID where
    Kafka's mock answers NONE)."""
    from kafka_ref.common.requests.sync_group import SyncGroupRequest

    async with Cluster(brokers=1, metadata_mode="zk", config={"offsets.topic.num.partitions": 1}, seed=3) as cluster:
        await coordinator_ready(cluster, "group")
        response = await send_at(cluster, 0, SyncGroupRequest(group_id="group", member_id="member"), version)
        expected = Errors.INCONSISTENT_GROUP_PROTOCOL if version >= 5 else Errors.UNKNOWN_MEMBER_ID
        assert Errors.for_code(response.error_code) is expected


# ------------------------------------------------------------------------------ Malformed requests


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_malformed_requests_get_kafka_errors_and_the_broker_keeps_serving(mode: str) -> None:
    """KafkaApis' rule that no request takes a broker down, for the request types above: negative or
    missing partitions and a DeleteTopics entry with neither name nor id get Kafka's codes
    (UNKNOWN_TOPIC_OR_PARTITION; for the nameless entry TOPIC_AUTHORIZATION_FAILED in ZooKeeper
    mode, where KafkaApis authorizes only named topics, INVALID_REQUEST in KRaft mode,
    ControllerApis#deleteTopics), and the broker answers a good request after each."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        good_offset = 0

        async def still_serving() -> None:
            nonlocal good_offset
            p = only_produce(await send_at(cluster, 0, produce_request(one_batch(b"ok"), acks=1)))
            assert (p.error_code, p.base_offset) == (0, good_offset)
            good_offset += 1

        await still_serving()
        unknown = Errors.UNKNOWN_TOPIC_OR_PARTITION
        for partition in (-1, 7):
            request = list_offsets(ListOffsetsRequest.CONSUMER_REPLICA_ID, partitions=(partition,))
            assert Errors.for_code(only_partition(await send_at(cluster, 0, request)).error_code) is unknown
            await still_serving()
            request = OffsetForLeaderEpochRequest(replica_id=-2, topics=(OffsetForLeaderTopic(topic=TOPIC, partitions=(
                OffsetForLeaderPartition(partition=partition, leader_epoch=0),)),))
            assert Errors.for_code(only_epoch_end(await send_at(cluster, 0, request)).error_code) is unknown
            await still_serving()
            from kafka_ref.common.requests.produce import ProduceRequest

            request = ProduceRequest.build(acks=1, timeout_ms=1000, records={TopicPartition(TOPIC, partition): one_batch(b"x")})
            assert Errors.for_code(only_produce(await send_at(cluster, 0, request)).error_code) is unknown
            await still_serving()
        from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicState

        response = await send_at(cluster, 0, DeleteTopicsRequest(topics=(DeleteTopicState(),), timeout_ms=1000))
        expected = Errors.TOPIC_AUTHORIZATION_FAILED if mode == "zk" else Errors.INVALID_REQUEST
        assert [(r.name, Errors.for_code(r.error_code)) for r in response.responses] == [(None, expected)]
        await still_serving()
        assert cluster.broker(0).metadata_cache.contains_topic(TOPIC)


def session_fetch(fetch_data: dict[Any, Any], session_id: int, session_epoch: int, version: int | None = None) -> Any:
    """FetchRequest.Builder#forConsumer(...).metadata(FetchMetadata(session_id, session_epoch))."""
    from kafka_ref.common.requests.fetch import FetchRequest

    return FetchRequest.build(fetch_data=fetch_data, max_wait_ms=0, min_bytes=1, session_id=session_id,
                              session_epoch=session_epoch, version=version)


@pytest.mark.parametrize("by_id", [True, False])
async def test_epoch_validation_within_fetch_session(by_id: bool) -> None:
    """Mirrors kafka.server.FetchRequestTest#testEpochValidationWithinFetchSession (and ...V12): after a
    leader change, a consumer opens a session with the current epoch on the leader and on a
    follower; the next fetches of the session with an older epoch are FENCED_LEADER_EPOCH, with a
    newer one UNKNOWN_LEADER_EPOCH."""
    from kafka_ref.common.requests.fetch import FetchPartition
    from kafka_ref.common.topic_partition import TopicIdPartition

    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [1, 2, 0]})
        leader, epoch, follower = await leader_moved_away_from(cluster, 1)
        for broker in (leader, follower):
            key: Any = TopicIdPartition(cluster.broker(broker).metadata_cache.get_topic_id(TOPIC), TP) if by_id else TP

            def data(current: int) -> dict[Any, Any]:
                return {key: FetchPartition(partition=0, fetch_offset=0, current_leader_epoch=current,
                                            partition_max_bytes=1024)}

            first = await send_at(cluster, broker, session_fetch(data(epoch), 0, 0))
            assert first.error_code == 0 and first.session_id > 0
            for session_epoch, current, error in ((1, epoch - 1, Errors.FENCED_LEADER_EPOCH),
                                                  (2, epoch + 1, Errors.UNKNOWN_LEADER_EPOCH)):
                response = await send_at(cluster, broker, session_fetch(data(current), first.session_id, session_epoch))
                assert (broker, Errors.for_code(fetched(cluster, broker, response).error_code)) == (broker, error)


async def test_create_incremental_fetch_with_partitions_in_error_v12() -> None:
    """Mirrors kafka.server.FetchRequestTest#testCreateIncrementalFetchWithPartitionsInErrorV12: a v12
    session over foo-0, foo-1 and bar-0 (no such topic) answers NONE, NONE and
    UNKNOWN_TOPIC_OR_PARTITION; the next incremental fetch leaves the unchanged foo partitions out
    and repeats bar-0's error; once bar exists bar-0 is answered NONE, and after that nothing has
    changed and no partition is listed."""
    from kafka_ref.common.requests.fetch import FetchPartition

    async with Cluster(brokers=3, metadata_mode="zk", seed=3) as cluster:
        await cluster.create_topic("foo", replica_assignment={0: [0, 1], 1: [0, 2]})
        foo0, foo1, bar0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
        data = {tp: FetchPartition(partition=tp.partition, fetch_offset=0, partition_max_bytes=2**31 - 1)
                for tp in (foo0, foo1, bar0)}
        resp1 = await send_at(cluster, 0, session_fetch(data, 0, 0, version=12))
        assert resp1.error_code == 0 and resp1.session_id > 0
        assert {tp: p.error_code for tp, p in resp1.response_data({}).items()} == {
            foo0: 0, foo1: 0, bar0: Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        resp2 = await send_at(cluster, 0, session_fetch({}, resp1.session_id, 1, version=12))
        assert (resp2.error_code, resp2.session_id) == (0, resp1.session_id)
        assert {tp: p.error_code for tp, p in resp2.response_data({}).items()} == {bar0: Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        await cluster.create_topic("bar", replica_assignment={0: [0, 1]})
        await cluster.wait_until(lambda: cluster.broker(0).metadata_cache.contains(bar0)
                                 and cluster.replica_state(0, "bar", 0) is not None)
        resp3 = await send_at(cluster, 0, session_fetch({}, resp1.session_id, 2, version=12))
        assert resp3.error_code == 0
        assert {tp: p.error_code for tp, p in resp3.response_data({}).items()} == {bar0: 0}
        resp4 = await send_at(cluster, 0, session_fetch({}, resp1.session_id, 3, version=12))
        assert (resp4.error_code, resp4.response_data({})) == (0, {})


@pytest.mark.parametrize("version", [3, 6, 7, 9])
async def test_join_group_protocol_name_backward_compatibility(version: int) -> None:
    """Mirrors kafka.server.KafkaApisTest#testJoinGroupProtocolNameBackwardCompatibility: a JoinGroup
    with a protocol type and no protocols is INCONSISTENT_GROUP_PROTOCOL (timeouts within the
    broker's bounds and a new member, as the real coordinator checks those first where Kafka's test
    mocks it); the answer's protocol name
    is null from version 7 and "" before (not nullable there; a null would not decode in an old
    client)."""
    from kafka_ref.common.requests.join_group import JoinGroupRequest

    async with Cluster(brokers=1, metadata_mode="zk", config={"offsets.topic.num.partitions": 1}, seed=3) as cluster:
        await coordinator_ready(cluster, "group")
        request = JoinGroupRequest(group_id="group", member_id="", protocol_type="consumer",
                                   rebalance_timeout_ms=10000, session_timeout_ms=10000)
        response = await send_at(cluster, 0, request, version)
        assert (Errors.for_code(response.error_code), response.protocol_name) == (
            Errors.INCONSISTENT_GROUP_PROTOCOL, None if version >= 7 else "")


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_fetch_request_v4_with_read_committed(mode: str) -> None:
    """Mirrors kafka.server.FetchRequestTest#testFetchRequestV4WithReadCommitted: one record larger
    than the 200-byte partition limit, fetched at version 4 with READ_COMMITTED: NONE, a last
    stable offset above 0 and the record all the same (the first batch is returned whole, KIP-74)."""
    from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest

    async with Cluster(brokers=1, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC)
        p = only_produce(await send_at(cluster, 0, produce_request(one_batch(bytes(201)), acks=-1)))
        assert p.error_code == 0
        request = FetchRequest.build(fetch_data={TP: FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=200)},
                                     max_wait_ms=2**31 - 1, min_bytes=0, isolation_level=1, version=4)
        data = (await send_at(cluster, 0, request, 4)).response_data()[TP]
        assert data.error_code == 0 and data.last_stable_offset > 0
        assert data.records.size_in_bytes > 200
