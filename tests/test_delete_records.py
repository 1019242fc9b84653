"""DeleteRecords: moving log start offsets forward on the leader and waiting for the low watermark.

After Kafka's DeleteRecordsRequestTest (testDeleteRecordsHappyCase: NONE and the low watermark
equal to the offset; testErrorWhenDeletingRecordsWithInvalidOffset: OFFSET_OUT_OF_RANGE with
INVALID_LOW_WATERMARK and the log start offset unchanged; testErrorWhenDeletingRecordsWithInvalidTopic:
UNKNOWN_TOPIC_OR_PARTITION), PartitionTest's low watermark cases (a replica on a dead broker does
not hold it back) and PlaintextAdminIntegrationTest's deleteRecords cases (the earliest offset
and a consumer positioned below it see the new log start offset).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients.admin import DeletedRecords, OffsetSpec, RecordsToDelete
from kafka_ref.common.errors import OffsetOutOfRangeException, PolicyViolationException
from kafka_ref.common.requests.delete_records import DeleteRecordsRequest, DeleteRecordsResponse
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest
from kafka_ref.common.topic_partition import TopicIdPartition

pytestmark = pytest.mark.anyio
TOPIC = "topic-1"
TP = TopicPartition(TOPIC, 0)
TIMEOUT_MS = 1000
MESSAGES = 10


async def _topic_with_records(cluster: Cluster, config: dict[str, str] | None = None) -> int:
    """Topic-1 on brokers 0 (leader), 1, 2 with ten records every replica holds; returns the leader."""
    await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1, 2]}, config=config)
    # (Keyed: a compacted topic refuses records without a key, LogValidator#validateKey.)
    result = await cluster.produce(0, TOPIC, 0, [(b"key %d" % i, b"value %d" % i) for i in range(MESSAGES)], acks=-1)
    assert result.error is Errors.NONE
    await cluster.wait_until(lambda: all(cluster.replica_state(b, TOPIC, 0).high_watermark == MESSAGES for b in (0, 1, 2)),
                             message="every replica has the HW")
    return 0


def _result(response: DeleteRecordsResponse, tp: TopicPartition = TP):
    return response.results_by_partition()[tp]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_records_happy_case(mode: str) -> None:
    """DeleteRecordsRequestTest#testDeleteRecordsHappyCase: NONE, low watermark 2, every replica starts at 2."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        leader = await _topic_with_records(cluster)
        response = await cluster.network.send("admin", leader, DeleteRecordsRequest.of({TP: 2}, timeout_ms=TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.NONE.code, 2)
        # The answer waited for the followers (the low watermark is theirs too).
        assert [cluster.replica_state(b, TOPIC, 0).log_start_offset for b in (0, 1, 2)] == [2, 2, 2]
        assert {r.log_start_offset for r in cluster.replica_state(leader, TOPIC, 0).remote_replicas.values()} == {2}
        assert cluster.replica_state(leader, TOPIC, 0).log_end_offset == MESSAGES


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_records_with_invalid_offset(mode: str) -> None:
    """DeleteRecordsRequestTest#testErrorWhenDeletingRecordsWithInvalidOffset: beyond the HW is
    OFFSET_OUT_OF_RANGE with INVALID_LOW_WATERMARK, and nothing is deleted."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        leader = await _topic_with_records(cluster)
        response = await cluster.network.send("admin", leader, DeleteRecordsRequest.of({TP: MESSAGES + 5}, TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (
            Errors.OFFSET_OUT_OF_RANGE.code, DeleteRecordsResponse.INVALID_LOW_WATERMARK)
        assert cluster.replica_state(leader, TOPIC, 0).log_start_offset == 0
        response = await cluster.network.send("admin", leader, DeleteRecordsRequest.of({TP: -7}, TIMEOUT_MS), 5000)
        assert _result(response).error_code == Errors.OFFSET_OUT_OF_RANGE.code


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_records_with_invalid_topic(mode: str) -> None:
    """DeleteRecordsRequestTest#testErrorWhenDeletingRecordsWithInvalidTopic: UNKNOWN_TOPIC_OR_PARTITION."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        missing = TopicPartition("invalid-topic", 0)
        response = await cluster.network.send("admin", 1, DeleteRecordsRequest.of({missing: 1}, TIMEOUT_MS), 5000)
        assert (_result(response, missing).error_code, _result(response, missing).low_watermark) == (
            Errors.UNKNOWN_TOPIC_OR_PARTITION.code, -1)


async def test_delete_records_errors_per_partition() -> None:
    """-1 deletes up to the HW; a follower answers NOT_LEADER_OR_FOLLOWER; a compacted topic
    POLICY_VIOLATION; a partition without DELETE permission TOPIC_AUTHORIZATION_FAILED."""
    async with Cluster(brokers=3, seed=3) as cluster:
        leader = await _topic_with_records(cluster)
        await cluster.create_topic("compacted", replica_assignment={0: [0, 1, 2]}, config={"cleanup.policy": "compact"})
        compacted = TopicPartition("compacted", 0)
        response = await cluster.network.send(
            "admin", leader, DeleteRecordsRequest.of({TP: DeleteRecordsRequest.HIGH_WATERMARK, compacted: 0}, TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.NONE.code, MESSAGES)
        assert _result(response, compacted).error_code == Errors.POLICY_VIOLATION.code
        response = await cluster.network.send("admin", 1, DeleteRecordsRequest.of({TP: MESSAGES}, TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.NOT_LEADER_OR_FOLLOWER.code, -1)
        cluster.broker(leader).apis.authorizer.denied.add(("User:eve", "DELETE", TOPIC))
        response = await cluster.network.send("eve", leader, DeleteRecordsRequest.of({TP: MESSAGES}, TIMEOUT_MS), 5000,
                                              principal="User:eve")
        assert _result(response).error_code == Errors.TOPIC_AUTHORIZATION_FAILED.code


async def test_cut_off_follower_holds_the_low_watermark_until_the_timeout() -> None:
    """A follower that cannot fetch (link to the leader cut, broker alive) keeps the low watermark at
    its log start offset: REQUEST_TIMED_OUT after the request's timeout, with the low watermark the
    leader had when it deleted. Once the link heals the follower catches up."""
    async with Cluster(brokers=3, seed=3) as cluster:
        leader = await _topic_with_records(cluster)
        cluster.network.cut_link(leader, 2)
        start = cluster.now_ms()
        response = await cluster.network.send("admin", leader, DeleteRecordsRequest.of({TP: 4}, TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.REQUEST_TIMED_OUT.code, 0)
        assert cluster.now_ms() - start == TIMEOUT_MS
        assert cluster.replica_state(leader, TOPIC, 0).log_start_offset == 4
        assert cluster.replica_state(2, TOPIC, 0).log_start_offset == 0
        # (Its fetch lost on the cut link times out first: replica.socket.timeout.ms, 30 s.)
        cluster.network.heal_link(leader, 2)
        await cluster.wait_until(lambda: cluster.replica_state(2, TOPIC, 0).log_start_offset == 4, timeout_ms=60000,
                                 message="follower caught up")


async def test_low_watermark_ignores_replicas_on_dead_brokers() -> None:
    """Partition#lowWatermarkIfLeader counts only replicas on live brokers: with one follower's broker
    dead, the low watermark is the live follower's log start offset."""
    async with Cluster(brokers=3, seed=3) as cluster:
        leader = await _topic_with_records(cluster)
        partition = cluster.broker(leader).replica_manager.online_partition(TP)
        cluster.kill_broker(2)
        await cluster.wait_until(lambda: not cluster.broker(leader).metadata_cache.has_alive_broker(2), message="2 is dead")
        # (Longer than TIMEOUT_MS: broker 1 may be backing off after the ISR change's new epoch.)
        response = await cluster.network.send("admin", leader, DeleteRecordsRequest.of({TP: 3}, 5000), 10000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.NONE.code, 3)
        assert partition.remote_replicas_map[2].log_start_offset == 0
        assert partition.low_watermark_if_leader() == 3


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_admin_delete_records_then_earliest_offset_and_out_of_range_fetch(mode: str) -> None:
    """Admin#deleteRecords gives each partition's low watermark; ListOffsets EARLIEST answers the new
    log start offset and a fetch below it is OFFSET_OUT_OF_RANGE; a bad offset raises its exception."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        await _topic_with_records(cluster)
        async with cluster.admin() as admin:
            deleted = await admin.delete_records({TP: RecordsToDelete.before(6)})
            assert deleted == {TP: DeletedRecords(6)}
            earliest = await admin.list_offsets({TP: OffsetSpec.earliest()})
            assert earliest[TP].offset == 6
            with pytest.raises(OffsetOutOfRangeException):
                await admin.delete_records({TP: RecordsToDelete.before(MESSAGES + 1)})
        topic_id = cluster.broker(0).metadata_cache.topic_ids.get(TOPIC)
        fetch = FetchRequest.build(fetch_data={TopicIdPartition(topic_id, TP): FetchPartition(partition=0, fetch_offset=2)},
                                   replica_id=-1, max_wait_ms=0, min_bytes=1, version=12)
        response = await cluster.network.send("consumer", 0, fetch, 5000)
        assert response.partition_data(TOPIC, 0).error_code == Errors.OFFSET_OUT_OF_RANGE.code


async def test_admin_delete_records_on_compacted_topic_raises_policy_violation() -> None:
    async with Cluster(brokers=3, seed=3) as cluster:
        await _topic_with_records(cluster, config={"cleanup.policy": "compact"})
        async with cluster.admin() as admin:
            with pytest.raises(PolicyViolationException):
                await admin.delete_records({TP: 1})


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_new_replica_joins_after_log_start_moved_into_a_batch(mode: str) -> None:
    """Partition#appendRecordsToFollowerOrFutureReplica's recovery, end to end: DeleteRecords moves the
    leader's log start to 5, inside the one batch holding offsets 0-9. A replica added by a
    reassignment starts empty, is told its fetch offset is out of range, restarts its log at the
    leader's log start (5) and fetches from there; the leader answers with the whole batch (base
    offset 0). The follower's log, still empty, restarts at the batch's base offset and takes it
    (then moves its log start to the leader's, 5, as every fetch response allows), so the new
    replica catches up and joins the ISR."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]})
        result = await cluster.produce(0, TOPIC, 0, [b"value %d" % i for i in range(MESSAGES)], acks=-1)
        assert result.error is Errors.NONE
        response = await cluster.network.send("admin", 0, DeleteRecordsRequest.of({TP: 5}, timeout_ms=TIMEOUT_MS), 5000)
        assert (_result(response).error_code, _result(response).low_watermark) == (Errors.NONE.code, 5)
        await cluster.reassign_partitions({TP: [0, 1, 2]}, via="api")
        await cluster.wait_until(lambda: sorted(cluster.replica_state(0, TOPIC, 0).isr) == [0, 1, 2], timeout_ms=60000,
                                 message="the new replica joined the ISR")
        state = cluster.replica_state(2, TOPIC, 0)
        assert (state.log_start_offset, state.log_end_offset) == (5, MESSAGES)
