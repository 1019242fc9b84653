"""KafkaApis tests (issue 3): authorization, malformed requests, and the broker keeps serving.

Mirrors kafka.server.KafkaApisTest where it has a case, otherwise the handler in
kafka.server.KafkaApis (Kafka 3.x, ZooKeeper mode). Every request travels over the in-process
network of a three-broker manual-mode cluster, in virtual time on both backends.
"""

from __future__ import annotations

import dataclasses

import pytest

from helpers_replica import (
    TOPIC,
    TOPIC_ID,
    TP0,
    corrupt,
    fetch_request,
    lai_state,
    produce_request,
    records,
    replicated_cluster,
    stop_request,
    um_state,
)
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, DisconnectException, NetworkTimeoutException

pytestmark = pytest.mark.anyio

ANON = ANONYMOUS_PRINCIPAL


async def client(cluster, broker, request, principal=ANON, timeout_ms=30000):
    return await cluster.network.send("client", broker, request, timeout_ms, principal)


async def produce(cluster, recs, broker=0, **kwargs):
    response = await client(cluster, broker, produce_request(recs, **kwargs))
    tp = kwargs.get("tp", TP0)
    return response.responses_by_partition()[tp]


async def consume(cluster, offset, broker=0, **kwargs):
    response = await client(cluster, broker, fetch_request(offset, **kwargs))
    tp = kwargs.get("tp", TP0)
    return response.partition_data(tp.topic, tp.partition)


def leader_log(cluster):
    return cluster.broker(0).replica_manager.online_partition(TP0).log


# ------------------------------------------------------------------------------ authorization


async def test_controller_requests_need_cluster_action():
    """Mirrors KafkaApis#handleLeaderAndIsrRequest / #handleStopReplicaRequest / #handleUpdateMetadataRequest
    (authHelper.authorizeClusterOperation(CLUSTER_ACTION) -> CLUSTER_AUTHORIZATION_FAILED)."""
    async with replicated_cluster() as cluster:
        new_tp = TopicPartition(TOPIC, 1)
        cache = cluster.broker(0).metadata_cache
        rm = cluster.broker(0).replica_manager
        # UpdateMetadata as a client: refused, the cache is untouched.
        um = cluster.update_metadata_request([um_state(0, 0, [0, 1, 2], [0, 1, 2], partition=1)], {TOPIC: TOPIC_ID})
        response = await client(cluster, 0, um)
        assert response.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
        assert not cache.contains(new_tp)
        # LeaderAndIsr as a client: refused for the whole request and every partition.
        lai = cluster.leader_and_isr_request([lai_state(0, 0, [0, 1, 2], [0, 1, 2], partition=1)], {TOPIC: TOPIC_ID})
        response = await client(cluster, 0, lai)
        assert response.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
        assert response.partition_errors({TOPIC_ID: TOPIC}) == {new_tp: Errors.CLUSTER_AUTHORIZATION_FAILED.code}
        assert rm.get_partition(new_tp) is None
        # StopReplica as a client: refused; t-0 is still led here.
        stop = stop_request({TP0: (-2, True)})
        response = await client(cluster, 0, stop)
        assert response.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
        assert response.partition_error_map() == {TP0: Errors.CLUSTER_AUTHORIZATION_FAILED.code}
        assert rm.online_partition(TP0).is_leader
        # The same requests from the controller succeed.
        assert (await cluster.send(0, um)).error_code == 0 and cache.contains(new_tp)
        response = await cluster.send(0, lai)
        assert response.error_code == 0 and rm.online_partition(new_tp).is_leader
        response = await cluster.send(0, stop)
        assert response.error_code == 0 and response.partition_error_map() == {TP0: 0}
        assert rm.get_partition(TP0) is None


async def test_follower_fetch_without_cluster_action_is_topic_authorization_failed():
    """Mirrors KafkaApis#handleFetchRequest: a follower fetch without ClusterAction answers
    TOPIC_AUTHORIZATION_FAILED for every partition (Kafka 3.x), and updates nothing."""
    async with replicated_cluster() as cluster:
        await produce(cluster, records(2), acks=1)
        partition = cluster.broker(0).replica_manager.online_partition(TP0)
        await cluster.wait_until(lambda: partition.get_replica(1).log_end_offset == 2)
        # Pretending to be follower 1 at offset 1: refused, so the leader's view of 1 stays at 2.
        response = await client(cluster, 0, fetch_request(1, replica_id=1, current_leader_epoch=0, log_start_offset=0))
        data = response.partition_data(TOPIC, 0)
        assert (data.error_code, data.high_watermark, data.records.size_in_bytes) == (
            Errors.TOPIC_AUTHORIZATION_FAILED.code, -1, 0)
        assert partition.get_replica(1).log_end_offset == 2
        # With the broker's principal the same fetch is served (and moves the leader's view of 1).
        response = await client(cluster, 0, fetch_request(1, replica_id=1, current_leader_epoch=0, log_start_offset=0),
                                principal="User:kafka")
        data = response.partition_data(TOPIC, 0)
        assert data.error_code == 0 and [(b.base_offset, b.last_offset) for b in data.records] == [(0, 1)]


async def test_topic_acls_for_clients():
    """Mirrors KafkaApis#handleProduceRequest (WRITE), #handleFetchRequest (READ) and
    #handleOffsetForLeaderEpochRequest (ClusterAction, else DESCRIBE; KIP-320)."""
    async with replicated_cluster() as cluster:
        authorizer = cluster.broker(0).apis.authorizer
        await produce(cluster, records(1), acks=1)
        epoch_request = OffsetForLeaderEpochRequest(replica_id=1, topics=(
            OffsetForLeaderTopic(topic=TOPIC, partitions=(OffsetForLeaderPartition(partition=0, leader_epoch=0),)),))
        # Without ClusterAction, DESCRIBE on the topic is enough (everyone has it here).
        ends = (await client(cluster, 0, epoch_request)).epoch_end_offsets()[TP0]
        assert (ends.error_code, ends.leader_epoch, ends.end_offset) == (0, 0, 1)
        authorizer.deny_topic(ANON, "DESCRIBE", TOPIC)
        authorizer.deny_topic(ANON, "WRITE", TOPIC)
        authorizer.deny_topic(ANON, "READ", TOPIC)
        ends = (await client(cluster, 0, epoch_request)).epoch_end_offsets()[TP0]
        assert ends.error_code == Errors.TOPIC_AUTHORIZATION_FAILED.code
        assert (await produce(cluster, records(1), acks=1)).error_code == Errors.TOPIC_AUTHORIZATION_FAILED.code
        assert leader_log(cluster).log_end_offset == 1
        assert (await consume(cluster, 0)).error_code == Errors.TOPIC_AUTHORIZATION_FAILED.code
        # The broker principal is a super user.
        ends = (await client(cluster, 0, epoch_request, principal="User:kafka")).epoch_end_offsets()[TP0]
        assert ends.error_code == 0


@pytest.mark.parametrize("kind", ["leader_and_isr", "update_metadata", "stop_replica"])
async def test_control_request_with_stale_broker_epoch_is_rejected(kind):
    """Mirrors KafkaApisTest#testLeaderAndIsrRequestWithStaleBrokerEpochIsRejected,
    #testUpdateMetadataRequestWithStaleBrokerEpochIsRejected, #testStopReplicaRequestWithStaleBrokerEpochIsRejected
    (and the ...WithCurrentBrokerEpoch / ...WithNewerBrokerEpochIsValid cases)."""
    async with replicated_cluster() as cluster:
        broker = cluster.broker(0)
        broker.broker_epoch = 10
        if kind == "leader_and_isr":
            base = cluster.leader_and_isr_request([lai_state(0, 1, [0, 1, 2], [0, 1, 2])], {TOPIC: TOPIC_ID})
        elif kind == "update_metadata":
            base = cluster.update_metadata_request([um_state(0, 1, [0, 1, 2], [0, 1, 2])], {TOPIC: TOPIC_ID})
        else:
            base = stop_request({TP0: (1, False)})
        response = await cluster.send(0, dataclasses.replace(base, broker_epoch=9))
        assert response.error_code == Errors.STALE_BROKER_EPOCH.code
        assert broker.replica_manager.online_partition(TP0).leader_epoch == 0
        for epoch in (10, 11, -1):
            response = await cluster.send(0, dataclasses.replace(base, broker_epoch=epoch))
            assert response.error_code == 0


# ------------------------------------------------------------------------------ malformed requests


async def test_malformed_requests_get_kafka_error_codes_and_the_broker_keeps_serving():
    """Mirrors KafkaApis#handleProduceRequest / #handleFetchRequest error paths (ProduceRequest#validateRecords,
    ReplicaManager#appendToLocalLog, LogValidator) and KafkaApis#handleError: each bad request
    gets Kafka's code, nothing is written, and a good request right after still works."""
    async with replicated_cluster({"message.max.bytes": 2000}) as cluster:
        offset = 0

        async def good_requests_still_work():
            nonlocal offset
            result = await produce(cluster, records(1), acks=1)
            assert (result.error_code, result.base_offset) == (0, offset)
            offset += 1
            assert leader_log(cluster).log_end_offset == offset
            # A consumer waits (DelayedFetch) until the followers have moved the HW past it.
            fetched = await consume(cluster, offset - 1, max_wait_ms=5000, min_bytes=1)
            assert fetched.error_code == 0 and fetched.records.last_batch.last_offset == offset - 1
            assert fetched.high_watermark == offset

        two_batches = MemoryRecords((records(1)[0], records(1)[0].with_base_offset(1)))
        offset_five = MemoryRecords((RecordBatch.build([SimpleRecord(b"k", b"v")], base_offset=5),))
        bad_produces = [
            ("unknown topic", dict(recs=records(1), tp=TopicPartition("nope", 0)), Errors.UNKNOWN_TOPIC_OR_PARTITION),
            ("acks=3", dict(recs=records(1), acks=3), Errors.INVALID_REQUIRED_ACKS),
            ("oversize batch", dict(recs=records(1, size=3000)), Errors.MESSAGE_TOO_LARGE),
            ("corrupt batch", dict(recs=corrupt(records(2))), Errors.CORRUPT_MESSAGE),
            ("two batches", dict(recs=two_batches), Errors.INVALID_RECORD),
            ("no batch", dict(recs=MemoryRecords.EMPTY), Errors.INVALID_RECORD),
            ("base offset 5", dict(recs=offset_five), Errors.INVALID_RECORD),
            ("not the leader", dict(recs=records(1), broker=1), Errors.NOT_LEADER_OR_FOLLOWER),
        ]
        await good_requests_still_work()
        for name, kwargs, expected in bad_produces:
            recs = kwargs.pop("recs")
            result = await produce(cluster, recs, **kwargs)
            assert (name, result.error_code, result.base_offset) == (name, expected.code, -1)
            assert leader_log(cluster).log_end_offset == offset
            await good_requests_still_work()
        bad_fetches = [
            ("negative offset", dict(fetch_offset=-1), Errors.OFFSET_OUT_OF_RANGE),
            ("beyond the LEO", dict(fetch_offset=1000), Errors.OFFSET_OUT_OF_RANGE),
            ("unknown topic", dict(fetch_offset=0, tp=TopicPartition("nope", 0)), Errors.UNKNOWN_TOPIC_OR_PARTITION),
            ("newer epoch", dict(fetch_offset=0, current_leader_epoch=3), Errors.UNKNOWN_LEADER_EPOCH),
            # Before Fetch v11 (no client metadata) only the leader serves a consumer.
            ("follower asked (v10)", dict(fetch_offset=0, broker=2, version=10), Errors.NOT_LEADER_OR_FOLLOWER),
        ]
        for name, kwargs, expected in bad_fetches:
            offset_arg = kwargs.pop("fetch_offset")
            data = await consume(cluster, offset_arg, **kwargs)
            assert (name, data.error_code) == (name, expected.code)
            await good_requests_still_work()
        # Controller requests from an older controller: STALE_CONTROLLER_EPOCH.
        old = dataclasses.replace(cluster.leader_and_isr_request([lai_state(0, 1, [0], [0, 1, 2])], {TOPIC: TOPIC_ID}),
                                  controller_epoch=0)
        assert (await cluster.send(0, old)).error_code == Errors.STALE_CONTROLLER_EPOCH.code
        old_um = dataclasses.replace(cluster.update_metadata_request([], {TOPIC: TOPIC_ID}), controller_epoch=0)
        assert (await cluster.send(0, old_um)).error_code == Errors.STALE_CONTROLLER_EPOCH.code
        assert cluster.broker(0).replica_manager.online_partition(TP0).leader_epoch == 0
        await good_requests_still_work()


async def test_fenced_leader_epoch_on_consumer_fetch():
    """Mirrors ReplicaManager#readFromLog: a consumer quoting an older leader epoch gets FENCED_LEADER_EPOCH."""
    async with replicated_cluster() as cluster:
        request = cluster.leader_and_isr_request([lai_state(0, 2, [0, 1, 2], [0, 1, 2])], {TOPIC: TOPIC_ID})
        for b in range(3):
            await cluster.send(b, request)
        assert (await consume(cluster, 0, current_leader_epoch=1)).error_code == Errors.FENCED_LEADER_EPOCH.code
        assert (await consume(cluster, 0, current_leader_epoch=2)).error_code == 0


async def test_acks_zero_gets_no_response_and_a_closed_connection_on_error():
    """Mirrors KafkaApis#handleProduceRequest for acks=0: no response; on an error the
    connection is closed so the producer notices."""
    async with replicated_cluster() as cluster:
        envelope = cluster.network.post("client", 0, produce_request(records(3), acks=0), ANON)
        with pytest.raises(NetworkTimeoutException):
            await cluster.network.wait(envelope, 1000)
        assert leader_log(cluster).log_end_offset == 3
        with pytest.raises(DisconnectException):
            await client(cluster, 0, produce_request(records(1), acks=0, tp=TopicPartition("nope", 0)))
        with pytest.raises(DisconnectException):
            await client(cluster, 1, produce_request(records(1), acks=0))
        assert leader_log(cluster).log_end_offset == 3


# ------------------------------------------------------------------------------ callbacks to the coordinator


async def test_leader_and_isr_and_stop_replica_notify_the_group_coordinator():
    """Mirrors KafkaApis#handleLeaderAndIsrRequest (onLeadershipChange) and #handleStopReplicaRequest
    (onResignation for deleted __consumer_offsets partitions)."""
    async with replicated_cluster() as cluster:
        broker = cluster.broker(0)
        changes, resignations = [], []
        broker.leadership_listeners.append(
            lambda leaders, followers: changes.append(([str(p.topic_partition) for p in leaders],
                                                       [str(p.topic_partition) for p in followers])))
        broker.resignation_listeners.append(lambda partition, epoch: resignations.append((partition, epoch)))
        offsets = "__consumer_offsets"
        await cluster.update_metadata([um_state(0, 0, [0, 1, 2], [0, 1, 2], topic=offsets, partition=p) for p in (0, 1)])
        response = await cluster.send(0, cluster.leader_and_isr_request(
            [lai_state(0, 0, [0, 1, 2], [0, 1, 2], topic=offsets), lai_state(1, 0, [0, 1, 2], [0, 1, 2], topic=offsets, partition=1)]))
        assert response.error_code == 0
        assert changes == [(["__consumer_offsets-0"], ["__consumer_offsets-1"])]
        response = await cluster.send(0, stop_request({TopicPartition(offsets, 0): (3, True),
                                                       TopicPartition(offsets, 1): (-2, False)}))
        assert response.partition_error_map() == {TopicPartition(offsets, 0): 0, TopicPartition(offsets, 1): 0}
        assert resignations == [(0, 3)]


async def test_update_metadata_then_metadata_request():
    """Mirrors KafkaApis#handleUpdateMetadataRequest feeding ZkMetadataCache, read back by handleTopicMetadataRequest."""
    from kafka_ref.common.requests.metadata import MetadataRequest, MetadataRequestTopic

    async with replicated_cluster() as cluster:
        request = MetadataRequest(topics=(MetadataRequestTopic(name=TOPIC), MetadataRequestTopic(name="nope")))
        response = await client(cluster, 1, request)
        by_name = {t.name: t for t in response.topics}
        assert by_name["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        t = by_name[TOPIC]
        assert (t.error_code, t.topic_id, t.partitions[0].leader_id, tuple(t.partitions[0].isr_nodes)) == (
            0, TOPIC_ID, 0, (0, 1, 2))
        assert sorted(b.node_id for b in response.brokers) == [0, 1, 2]
