"""Ports of Kafka 3.8.0 LogOffsetTest (core/src/test/scala/unit/kafka/server/LogOffsetTest.scala), and
the half of FetchRequestMaxBytesTest that its earlier port (tests/test_fetch_max_bytes.py: v12
fetches of batches the broker appended) left out: records from a producer client, fetched at v3.
(OffsetsForLeaderEpochRequestTest's KRaft half is the ``mode`` parameter of its ports in
tests/test_kafka_apis_kafka.py.)

LogOffsetTest runs one broker, writes to a partition's log directly (``appendAsLeader`` on the
broker's own UnifiedLog, so no high watermark moves unless the test moves it) and asks with
ListOffsets requests, most of them as broker 0 (``forReplica(0, 0)``: a replica reads up to the
log end, a consumer only up to the high watermark). Here the same: the log is
``cluster.broker(0).log_manager.get_log(tp)`` and the requests go to KafkaApis in process. Every
test runs in ZooKeeper and in KRaft mode, as Kafka's ``quorum`` parameter does. Kafka picks a
random partition in some tests; these use a fixed one.

kafka_ref answers ListOffsets at version 1 and later; Kafka's version-0 answer (a list of segment
base offsets, ``oldStyleOffsets``, from ``legacyFetchOffsetsBefore``) has no counterpart, so the
ports of tests built on it ask the same questions at the current version: where the log starts
and ends, and where a timestamp lookup lands.

Not ported:
- The version-0 half of testGetOffsetsAfterDeleteRecords, testGetOffsetsBeforeLatestTime,
  testGetOffsetsBeforeNow and testGetOffsetsBeforeEarliestTime (the lists of segment base offsets
  that ``legacyFetchOffsetsBefore`` builds from segment files and their modification times):
  ListOffsets v0, segment files and file times are not modelled (one in-memory "segment").
- testFetchOffsetsBeforeWithChangingSegmentSize, testFetchOffsetsBeforeWithChangingSegments:
  Mockito mocks of LogSegment racing ``legacyFetchOffsetsBefore`` (v0, segment files).
- Segment rolls at log.segment.bytes=140 (the config is accepted, nothing rolls) and
  log.flush.interval.messages (not a kafka_ref config; appends are durable at once): after
  DeleteRecords the ports check the offsets, not which segments remain.
"""

from __future__ import annotations

import pytest
from helpers_kafka_apis import only_partition, send_at

from kafka_ref import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse
from kafka_ref.common.requests.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.log.unified_log import EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["zk", "kraft"])
TOPIC = "kafka-"
TP = TopicPartition(TOPIC, 0)
BROKER_REPLICA = 0          # ListOffsetsRequest.Builder.forReplica(0, 0): broker 0 asking
CONSUMER = ListOffsetsRequest.CONSUMER_REPLICA_ID
# LogOffsetTest#brokerPropertyOverrides, but log.flush.interval.messages (every append is
# durable at once here). The segment size is accepted; one in-memory segment holds the log.
CONFIG = {"num.partitions": 20, "log.retention.hours": 10, "log.retention.check.interval.ms": 5 * 60 * 1000,
          "log.segment.bytes": 140}


def _cluster(mode: str) -> Cluster:
    return Cluster(brokers=1, metadata_mode=mode, config=CONFIG)


async def _topic_and_log(cluster: Cluster, topic: str = TOPIC, partitions: int = 1, partition: int = 0):
    """LogOffsetTest#createTopicAndGetLog: the topic, once broker 0 leads it, and the partition's log."""
    tp = TopicPartition(topic, partition)
    await cluster.create_topic(topic, partitions=partitions, replication_factor=1)
    await cluster.wait_until(lambda: cluster.leader_for(topic, partition) == 0
                             and cluster.broker(0).log_manager.get_log(tp) is not None, message="the log")
    return cluster.broker(0).log_manager.get_log(tp)


def _singleton(timestamp: int | None = None) -> MemoryRecords:
    """TestUtils#singletonRecords(value = "42"): one record, no key."""
    return MemoryRecords.with_records([SimpleRecord(None, b"42", timestamp=timestamp)])


def _append(log, count: int = 20) -> None:
    for _ in range(count):
        log.append_as_leader(_singleton(), 0)
    log.flush()


async def _list_offset(cluster: Cluster, timestamp: int, replica_id: int = BROKER_REPLICA, tp: TopicPartition = TP):
    """One partition's ListOffsets answer from broker 0 (LogOffsetTest#sendListOffsetsRequest)."""
    request = ListOffsetsRequest(replica_id=replica_id, topics=(ListOffsetsTopic(
        name=tp.topic, partitions=(ListOffsetsPartition(partition_index=tp.partition, timestamp=timestamp),)),))
    answer = only_partition(await send_at(cluster, 0, request))
    assert answer.partition_index == tp.partition
    return answer


@MODES
async def test_get_offsets_for_unknown_topic(mode: str):
    """Mirrors LogOffsetTest#testGetOffsetsForUnknownTopic: LATEST for a topic nobody created is
    UNKNOWN_TOPIC_OR_PARTITION, with no offset. So is a partition beyond an existing topic's
    (ReplicaManager#getPartitionOrException: not hosted and not in the metadata), while the
    topic's real partition in the same request is answered."""
    async with _cluster(mode) as cluster:
        answer = await _list_offset(cluster, LATEST_TIMESTAMP, CONSUMER, TopicPartition("foo", 0))
        assert (Errors.for_code(answer.error_code), answer.offset, answer.timestamp) == (
            Errors.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
        await _topic_and_log(cluster)
        request = ListOffsetsRequest(replica_id=CONSUMER, topics=(ListOffsetsTopic(name=TOPIC, partitions=tuple(
            ListOffsetsPartition(partition_index=p, timestamp=LATEST_TIMESTAMP) for p in (3, 0))),))
        [topic] = (await send_at(cluster, 0, request)).topics
        assert [(p.partition_index, Errors.for_code(p.error_code), p.offset) for p in topic.partitions] == [
            (3, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1), (0, Errors.NONE, 0)]


@MODES
async def test_get_offsets_after_delete_records(mode: str):
    """Mirrors LogOffsetTest#testGetOffsetsAfterDeleteRecords: twenty records, the high watermark at
    the log end, the log start raised to 3 and the batches below it deleted. The log now starts at
    3 and still ends at 20, for the log and for a replica's ListOffsets (Kafka's v0 list, from 20
    down to 3, ends on the same two offsets)."""
    async with _cluster(mode) as cluster:
        log = await _topic_and_log(cluster)
        _append(log)
        log.update_high_watermark(log.log_end_offset)
        assert log.maybe_increment_log_start_offset(3)
        assert log.delete_old_segments() == 3
        assert (log.log_start_offset, log.log_end_offset, log.batches[0].base_offset) == (3, 20, 3)
        assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP).offset == 3
        assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP).offset == 20
        for replica_id in (BROKER_REPLICA, CONSUMER):
            earliest = await _list_offset(cluster, EARLIEST_TIMESTAMP, replica_id)
            latest = await _list_offset(cluster, LATEST_TIMESTAMP, replica_id)
            assert (earliest.error_code, earliest.offset, earliest.leader_epoch) == (0, 3, 0)
            assert (latest.error_code, latest.offset, latest.leader_epoch) == (0, 20, 0)


@MODES
async def test_fetch_offset_by_timestamp_for_max_timestamp_after_truncate(mode: str):
    """Mirrors LogOffsetTest#testFetchOffsetByTimestampForMaxTimestampAfterTruncate: records stamped
    0 to 19; the largest timestamp is the last record's (offset 19, timestamp 19); once the log is
    truncated to 0 there is none."""
    async with _cluster(mode) as cluster:
        log = await _topic_and_log(cluster)
        for timestamp in range(20):
            log.append_as_leader(_singleton(timestamp), 0)
        log.flush()
        log.update_high_watermark(log.log_end_offset)
        found = log.fetch_offset_by_timestamp(MAX_TIMESTAMP)
        assert (found.offset, found.timestamp) == (19, 19)
        # (A lookup by timestamp lands on the first record stamped at or after it.)
        by_time = await _list_offset(cluster, 7, CONSUMER)
        assert (by_time.error_code, by_time.offset, by_time.timestamp, by_time.leader_epoch) == (0, 7, 7, 0)
        log.truncate_to(0)
        assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) is None
        assert (await _list_offset(cluster, MAX_TIMESTAMP)).offset == -1


@MODES
async def test_fetch_offset_by_timestamp_for_max_timestamp_with_unordered_timestamps(mode: str):
    """Mirrors LogOffsetTest#testFetchOffsetByTimestampForMaxTimestampWithUnorderedTimestamps:
    timestamps 0, 1, 2, 3, 4, 6, 5: the largest (6) is at offset 5, not at the log's last offset.
    Through ListOffsets (Partition#fetchOffsetForTimestamp) a replica is answered from the whole
    log, a consumer only below the high watermark: nothing while it is 0, offset 5 once it is 7."""
    async with _cluster(mode) as cluster:
        log = await _topic_and_log(cluster)
        for timestamp in (0, 1, 2, 3, 4, 6, 5):
            log.append_as_leader(_singleton(timestamp), 0)
        log.flush()
        as_replica = await _list_offset(cluster, MAX_TIMESTAMP, BROKER_REPLICA)
        assert (as_replica.error_code, as_replica.offset, as_replica.timestamp) == (0, 5, 6)
        before_hw = await _list_offset(cluster, MAX_TIMESTAMP, CONSUMER)
        assert (before_hw.error_code, before_hw.offset, before_hw.timestamp) == (0, -1, -1)
        log.update_high_watermark(log.log_end_offset)
        found = log.fetch_offset_by_timestamp(MAX_TIMESTAMP)
        assert (log.log_end_offset, found.offset, found.timestamp) == (7, 5, 6)
        answer = await _list_offset(cluster, MAX_TIMESTAMP, CONSUMER)
        assert (answer.error_code, answer.offset, answer.timestamp, answer.leader_epoch) == (0, 5, 6, 0)


@MODES
async def test_get_offsets_before_latest_time(mode: str):
    """Mirrors LogOffsetTest#testGetOffsetsBeforeLatestTime: twenty records written to the log
    directly (the high watermark stays 0). Broker 0 asking LATEST as a replica gets the log end, 20
    (the head of Kafka's v0 list), where a consumer gets the high watermark; a consumer's fetch from
    offset 20 returns no batch."""
    async with _cluster(mode) as cluster:
        log = await _topic_and_log(cluster)
        _append(log)
        assert (log.log_end_offset, log.high_watermark) == (20, 0)
        latest = await _list_offset(cluster, LATEST_TIMESTAMP, BROKER_REPLICA)
        assert (latest.error_code, latest.offset, latest.timestamp, latest.leader_epoch) == (0, 20, -1, 0)
        as_consumer = await _list_offset(cluster, LATEST_TIMESTAMP, CONSUMER)
        assert (as_consumer.error_code, as_consumer.offset) == (0, 0)
        topic_id = cluster.broker(0).metadata_cache.get_topic_id(TOPIC)
        fetch = FetchRequest.build(fetch_data={TopicIdPartition(topic_id, TP): FetchPartition(
            partition=0, fetch_offset=latest.offset, partition_max_bytes=300 * 1024)}, max_wait_ms=0, min_bytes=1)
        data = (await send_at(cluster, 0, fetch)).response_data({topic_id: TOPIC})[TP]
        assert data.error_code == Errors.NONE.code
        assert list(FetchResponse.records_or_fail(data).batches) == []


@MODES
async def test_empty_logs_get_offsets(mode: str):
    """Mirrors LogOffsetTest#testEmptyLogsGetOffsets: EARLIEST on a new, empty partition, asked
    fourteen times, is always 0 (never 1), and LATEST is 0 too."""
    async with _cluster(mode) as cluster:
        await _topic_and_log(cluster)
        answers = [await _list_offset(cluster, EARLIEST_TIMESTAMP) for _ in range(14)]
        # (Epoch 0: becoming leader put (epoch 0, offset 0) in the epoch cache.)
        assert {(a.error_code, a.offset, a.leader_epoch) for a in answers} == {(0, 0, 0)}
        latest = await _list_offset(cluster, LATEST_TIMESTAMP)
        assert (latest.error_code, latest.offset, latest.leader_epoch) == (0, 0, 0)


@MODES
async def test_fetch_offset_by_timestamp_for_max_timestamp_with_empty_log(mode: str):
    """Mirrors LogOffsetTest#testFetchOffsetByTimestampForMaxTimestampWithEmptyLog: an empty log has
    no largest timestamp; the request answers no offset."""
    async with _cluster(mode) as cluster:
        log = await _topic_and_log(cluster)
        log.update_high_watermark(log.log_end_offset)
        assert log.log_end_offset == 0
        assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) is None
        answer = await _list_offset(cluster, MAX_TIMESTAMP, CONSUMER)
        assert (answer.error_code, answer.offset, answer.timestamp) == (0, -1, -1)


@MODES
async def test_get_offsets_before_now(mode: str):
    """Mirrors LogOffsetTest#testGetOffsetsBeforeNow: twenty records in one partition of a
    three-partition topic, then a lookup by a timestamp 30 s in the future. Kafka's v0 answer lists
    segment starts older than that time; from v1 on the question is the first record stamped at or
    after it, and there is none (no offset, no error)."""
    async with _cluster(mode) as cluster:
        tp = TopicPartition(TOPIC, 2)
        log = await _topic_and_log(cluster, partitions=3, partition=2)
        _append(log)
        later = cluster.now_ms() + 30000
        assert log.fetch_offset_by_timestamp(later) is None
        answer = await _list_offset(cluster, later, BROKER_REPLICA, tp)
        assert (answer.error_code, answer.offset, answer.timestamp) == (0, -1, -1)
        latest = await _list_offset(cluster, LATEST_TIMESTAMP, BROKER_REPLICA, tp)
        assert (latest.error_code, latest.offset) == (0, 20)


@MODES
async def test_get_offsets_before_earliest_time(mode: str):
    """Mirrors LogOffsetTest#testGetOffsetsBeforeEarliestTime: twenty records in one partition of a
    three-partition topic; EARLIEST and EARLIEST_LOCAL both find offset 0 (with epoch 0), in the log
    and through a replica's ListOffsets."""
    async with _cluster(mode) as cluster:
        tp = TopicPartition(TOPIC, 1)
        log = await _topic_and_log(cluster, partitions=3, partition=1)
        _append(log)
        for timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            found = log.fetch_offset_by_timestamp(timestamp)
            assert (timestamp, found.offset, found.leader_epoch) == (timestamp, 0, 0)
            answer = await _list_offset(cluster, timestamp, BROKER_REPLICA, tp)
            assert (timestamp, answer.error_code, answer.offset, answer.leader_epoch) == (timestamp, 0, 0, 0)


# ---------------------------------------------------- FetchRequestMaxBytesTest (producer, version 3)

MAX_BYTES_TP = TopicPartition("testTopic", 0)
MESSAGES = [bytes(i % 5 for i in range(length)) for length in (1, 500, 1040, 500, 50)]
INT_MAX = 2**31 - 1


@MODES
async def test_consume_multiple_records_produced_by_client_at_fetch_v3(mode: str):
    """Mirrors kafka.server.FetchRequestMaxBytesTest#testConsumeMultipleRecords as Kafka runs it: the
    five records sent by a producer client, each flushed and acknowledged before the next (one
    batch each), then consumer fetches at version 3 (by topic name, the first with a response
    size limit) asking Int.MaxValue bytes from a broker with fetch.max.bytes 1024: offsets 0 and 1
    together, then 2 alone (1040 bytes, more than the cap, but a first batch is never held back),
    then 3 and 4."""
    config = {"fetch.max.bytes": 1024, "min.insync.replicas": 1}
    async with Cluster(brokers=1, metadata_mode=mode, config=config) as cluster:
        await cluster.create_topic(MAX_BYTES_TP.topic, partitions=1, replication_factor=1)
        async with cluster.producer() as producer:
            for i, message in enumerate(MESSAGES):
                await producer.send(MAX_BYTES_TP.topic, message, key=bytes([i]), partition=0)
        log = cluster.broker(0).log_manager.get_log(MAX_BYTES_TP)
        assert [b.base_offset for b in log.batches] == [0, 1, 2, 3, 4]

        async def values_from(offset: int) -> list[bytes]:
            request = FetchRequest.build(
                fetch_data={MAX_BYTES_TP: FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=INT_MAX)},
                max_wait_ms=INT_MAX, min_bytes=0, max_bytes=INT_MAX, version=3)
            data = (await send_at(cluster, 0, request, version=3)).response_data()[MAX_BYTES_TP]
            assert data.error_code == Errors.NONE.code
            return [record.value for record in FetchResponse.records_or_fail(data).records()]

        assert await values_from(0) == MESSAGES[0:2]
        assert await values_from(2) == MESSAGES[2:3]
        assert await values_from(3) == MESSAGES[3:5]
