"""DelayedFetch tests ported from Kafka 3.8's kafka.server.DelayedFetchTest
(core/src/test/scala/integration/kafka/server/DelayedFetchTest.scala).

Kafka builds a DelayedFetch over Mockito mocks of ReplicaManager and Partition and calls
tryComplete() once. Each test is ported over small stand-ins for those mocks (MockReplicaManager
and MockPartition below answer exactly what Kafka's stubs answer, only for the arguments Kafka
stubs, and record readFromLog), and, where a real broker can reach the same state, once more over
a real broker's ReplicaManager and Partition (the ``_real_broker`` tests): MockTime, nothing
running, as tests/test_replica_manager_kafka.py wires it.

The positions DelayedFetch compares are LogOffsetMetadata's; its Kafka 3.8 rules (KAFKA-16452: a
bare offset is on no known segment) come from org.apache.kafka.storage.internals.log.LogOffsetMetadataTest,
ported at the end.

Not ported: nothing. (Kafka's stubs for ReplicaManager#isAddingReplica answer false and its
ReplicaQuota is a bare mock; kafka_ref has no replication quotas, and DelayedFetch#onComplete
hands the LogReadResults on as they are, the reassignment flag being added by the caller.)
"""

from __future__ import annotations

import pytest

from helpers_replica import (
    TP0,
    Collector,
    consumer_params,
    fetch_follower,
    fetch_partition,
    lai_request,
    lai_state,
    make_broker,
    rm_fetch,
    seed_log_data,
    um_request,
    um_state,
)
from kafka_ref.common.errors import (
    Errors,
    FencedLeaderEpochException,
    KafkaException,
    NotLeaderOrFollowerException,
    UnknownLeaderEpochException,
)
from kafka_ref.common.records import MemoryRecords
from kafka_ref.common.time import MockTime
from kafka_ref.common.requests.offsets_for_leader_epoch import EpochEndOffset as OffsetForLeaderEpochEndOffset
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import UNKNOWN_OFFSET_METADATA, FetchDataInfo, FetchIsolation, LogOffsetMetadata, LogOffsetSnapshot
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.read_info import LogReadResult
from kafka_ref.server.delayed_fetch import DelayedFetch, FetchPartitionStatus
from kafka_ref.server.delayed_operation import DelayedOperationPurgatory, TopicPartitionOperationKey
from kafka_ref.server.timer import SystemTimer

MAX_BYTES = 1024
TOPIC_PARTITION = TopicPartition("topic", 0)


def build_follower_fetch_params(replica_id: int, max_wait_ms: int, min_bytes: int = 1) -> FetchParams:
    """Mirrors DelayedFetchTest#buildFollowerFetchParams (replica epoch 1, read up to the log end)."""
    return FetchParams(replica_id=replica_id, replica_epoch=1, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                       max_bytes=MAX_BYTES, isolation=FetchIsolation.LOG_END)


def build_read_result(error: Errors) -> LogReadResult:
    """Mirrors DelayedFetchTest#buildReadResult: nothing read, every offset unknown."""
    return LogReadResult(
        info=FetchDataInfo(UNKNOWN_OFFSET_METADATA, MemoryRecords.EMPTY),
        diverging_epoch=None,
        high_watermark=-1,
        leader_log_start_offset=-1,
        leader_log_end_offset=-1,
        follower_log_start_offset=-1,
        fetch_time_ms=-1,
        last_stable_offset=-1,
        error=error,
        exception=error.exception() if error is not Errors.NONE else None,
    )


class MockPartition:
    """Stands for ``mock(classOf[Partition])`` with the stubs a DelayedFetchTest sets: the offset
    snapshot for (current epoch 10, leader only) and the end of epoch 9 asked with leader only off."""

    def __init__(self, snapshot: LogOffsetSnapshot | None = None, snapshot_error: Exception | None = None,
                 epoch_end: OffsetForLeaderEpochEndOffset | None = None) -> None:
        self.snapshot = snapshot
        self.snapshot_error = snapshot_error
        self.epoch_end = epoch_end

    def fetch_offset_snapshot(self, current_leader_epoch: int, fetch_only_from_leader: bool) -> LogOffsetSnapshot:
        assert (current_leader_epoch, fetch_only_from_leader) == (10, True), "not a stubbed call"
        if self.snapshot_error is not None:
            raise self.snapshot_error
        assert self.snapshot is not None, "not a stubbed call"
        return self.snapshot

    def last_offset_for_leader_epoch(self, current_leader_epoch: int, leader_epoch: int,
                                     fetch_only_from_leader: bool) -> OffsetForLeaderEpochEndOffset:
        assert (current_leader_epoch, leader_epoch, fetch_only_from_leader) == (10, 9, False), "not a stubbed call"
        assert self.epoch_end is not None, "not a stubbed call"
        return self.epoch_end


class MockReplicaManager:
    """Stands for ``mock(classOf[ReplicaManager])``: getPartitionOrException answers the partition
    (or throws), readFromLog answers the stubbed result and records how it was asked."""

    def __init__(self, partition: MockPartition | None = None, error: Exception | None = None) -> None:
        self.all_partitions: dict = {}  # nothing online: DelayedFetch asks getPartitionOrException
        self.partition = partition
        self.error = error
        self.read_result: LogReadResult | None = None
        self.reads: list = []

    def get_partition_or_exception(self, tp: TopicPartition) -> MockPartition:
        assert tp == TOPIC_PARTITION
        if self.error is not None:
            raise self.error
        assert self.partition is not None
        return self.partition

    def expect_read_from_replica(self, error: Errors) -> None:
        """Mirrors DelayedFetchTest#expectReadFromReplica."""
        self.read_result = build_read_result(error)

    def read_from_log(self, params, fetch_infos, read_from_purgatory):
        self.reads.append((params, list(fetch_infos), read_from_purgatory))
        assert self.read_result is not None, "not a stubbed call"
        return [(TOPIC_PARTITION, self.read_result)]


def delayed_fetch(replica_manager, fetch_offset: int, *, log_start_offset: int = 0, last_fetched_epoch: int = -1,
                  start: LogOffsetMetadata | None = None, tp: TopicPartition = TOPIC_PARTITION):
    """The DelayedFetch each Kafka test builds: one partition, a follower (replica 1) fetching with
    current leader epoch 10 and at most 500 ms of wait; returns it with its callback's collector."""
    fetch_status = FetchPartitionStatus(
        start if start is not None else LogOffsetMetadata(fetch_offset),
        fetch_partition(fetch_offset, current_leader_epoch=10, last_fetched_epoch=last_fetched_epoch,
                        log_start_offset=log_start_offset, max_bytes=MAX_BYTES, partition=tp.partition),
    )
    params = build_follower_fetch_params(1, max_wait_ms=500)
    callback = Collector()
    op = DelayedFetch(params=params, fetch_partition_status=[(tp, fetch_status)], replica_manager=replica_manager,
                      response_callback=callback)
    return op, params, fetch_status, callback


def single_result(callback: Collector, tp: TopicPartition = TOPIC_PARTITION) -> LogReadResult:
    assert callback.calls == 1
    [(answered, result)] = callback.value
    assert answered == tp
    return result


# ------------------------------------------------------------------------------ Kafka's tests (mocks)


def test_fetch_with_fenced_epoch():
    """Mirrors DelayedFetchTest#testFetchWithFencedEpoch."""
    partition = MockPartition(snapshot_error=FencedLeaderEpochException("Requested epoch has been fenced"))
    rm = MockReplicaManager(partition)
    op, params, status, callback = delayed_fetch(rm, 500)
    rm.expect_read_from_replica(Errors.FENCED_LEADER_EPOCH)

    assert op.try_complete() is True
    assert op.is_completed
    assert single_result(callback).error is Errors.FENCED_LEADER_EPOCH
    assert rm.reads == [(params, [(TOPIC_PARTITION, status.fetch_info)], True)]


def test_not_leader_or_follower():
    """Mirrors DelayedFetchTest#testNotLeaderOrFollower."""
    rm = MockReplicaManager(error=NotLeaderOrFollowerException(f"Replica for {TOPIC_PARTITION} not available"))
    op, params, status, callback = delayed_fetch(rm, 500)
    rm.expect_read_from_replica(Errors.NOT_LEADER_OR_FOLLOWER)

    assert op.try_complete() is True
    assert op.is_completed
    assert single_result(callback).error is Errors.NOT_LEADER_OR_FOLLOWER
    assert rm.reads == [(params, [(TOPIC_PARTITION, status.fetch_info)], True)]


def test_diverging_epoch():
    """Mirrors DelayedFetchTest#testDivergingEpoch: the log end is the fetch offset (no bytes, no
    case F), but epoch 9 ends at 499, below the fetch offset 500: case H."""
    end_offset_metadata = LogOffsetMetadata(500, 0, 500)
    partition = MockPartition(
        snapshot=LogOffsetSnapshot(0, end_offset_metadata, end_offset_metadata, end_offset_metadata),
        epoch_end=OffsetForLeaderEpochEndOffset(partition=0, error_code=Errors.NONE.code, leader_epoch=9, end_offset=499),
    )
    rm = MockReplicaManager(partition)
    op, params, status, callback = delayed_fetch(rm, 500, last_fetched_epoch=9)
    rm.expect_read_from_replica(Errors.NONE)

    assert op.try_complete() is True
    assert op.is_completed
    assert single_result(callback).error is Errors.NONE
    assert rm.reads == [(params, [(TOPIC_PARTITION, status.fetch_info)], True)]


@pytest.mark.parametrize("end_offset", [0, 500])
def test_delayed_fetch_with_message_only_high_watermark(end_offset):
    """Mirrors DelayedFetchTest#testDelayedFetchWithMessageOnlyHighWatermark (Kafka 3.8, KAFKA-16452):
    the bound is known only as a bare offset. Below the fetch offset (0: a truncation) the fetch
    answers at once (case F); above it (500) there is no position to count bytes from, so it waits."""
    end_offset_metadata = LogOffsetMetadata(end_offset, -1, -1)
    partition = MockPartition(snapshot=LogOffsetSnapshot(0, end_offset_metadata, end_offset_metadata, end_offset_metadata))
    rm = MockReplicaManager(partition)
    op, params, status, callback = delayed_fetch(rm, 450, log_start_offset=5)
    rm.expect_read_from_replica(Errors.NONE)

    expected = end_offset == 0
    assert op.try_complete() is expected
    assert op.is_completed is expected
    assert callback.done is expected
    if expected:
        assert single_result(callback).error is Errors.NONE
        assert rm.reads == [(params, [(TOPIC_PARTITION, status.fetch_info)], True)]
    else:
        assert rm.reads == []


# ------------------------------------------------------------------------------ the same, on a real broker


def broker_leading(leader_epoch: int = 10, *, host: bool = True):
    """Broker 0 knowing t-0 (replicas 0 and 1, both alive); with ``host``, leading it at ``leader_epoch``."""
    broker = make_broker(0)
    rm = broker.replica_manager
    rm.maybe_update_metadata_cache(0, um_request([um_state(0, leader_epoch, [0, 1], [0, 1])], brokers=[0, 1],
                                                 controller_epoch=0))
    if host:
        rm.become_leader_or_follower(0, lai_request([lai_state(0, leader_epoch, [0, 1], [0, 1], controller_epoch=0)],
                                                    controller_epoch=0), lambda *a: None)
    return broker, rm


def test_fetch_with_fenced_epoch_real_broker():
    """DelayedFetchTest#testFetchWithFencedEpoch on a real broker: a follower's fetch parked at the
    log end in epoch 10 is answered FENCED_LEADER_EPOCH once the leader moves to epoch 11."""
    broker, rm = broker_leading(10)
    partition = rm.online_partition(TP0)
    seed_log_data(partition.log, 3, 10)
    fetch_follower(partition, 1, 3, leader_epoch=10)
    params = build_follower_fetch_params(1, max_wait_ms=500)
    callback = rm_fetch(rm, params, (TP0, fetch_partition(3, current_leader_epoch=10, log_start_offset=0,
                                                          max_bytes=MAX_BYTES)))
    assert not callback.done
    assert rm.delayed_fetch_purgatory.num_delayed() == 1
    rm.become_leader_or_follower(1, lai_request([lai_state(0, 11, [0, 1], [0, 1], controller_epoch=0, is_new=False)],
                                                controller_epoch=0), lambda *a: None)
    rm.delayed_fetch_purgatory.check_and_complete(TopicPartitionOperationKey.of(TP0))
    result = single_result(callback, TP0)
    assert result.error is Errors.FENCED_LEADER_EPOCH
    assert (result.high_watermark, result.leader_log_end_offset, result.bytes) == (-1, -1, 0)
    assert rm.delayed_fetch_purgatory.num_delayed() == 0


@pytest.mark.parametrize("known", [True, False])
def test_not_leader_or_follower_real_broker(known):
    """DelayedFetchTest#testNotLeaderOrFollower on a real broker: the partition is not hosted here.
    ReplicaManager#getPartitionOrException throws NotLeaderOrFollower when the metadata cache knows
    the partition (Case A/B) and UnknownTopicOrPartition when it does not (Case C); both complete."""
    broker, rm = broker_leading(host=False)
    tp = TP0 if known else TopicPartition("unknown", 0)
    op, params, status, callback = delayed_fetch(rm, 500, tp=tp)
    assert op.try_complete() is True
    assert op.is_completed
    expected = Errors.NOT_LEADER_OR_FOLLOWER if known else Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert single_result(callback, tp).error is expected


def test_diverging_epoch_real_broker():
    """DelayedFetchTest#testDivergingEpoch on a real broker: the leader (epoch 10) holds offsets 0-3
    in epoch 9 and 4 in epoch 10; a follower at the log end (5) whose last fetched epoch is 9 must
    truncate to 4: the fetch completes and its read carries the diverging epoch, without error."""
    broker, rm = broker_leading(10)
    log = rm.online_partition(TP0).log
    seed_log_data(log, 4, 9)
    seed_log_data(log, 1, 10)
    assert (log.log_end_offset, log.leader_epoch_cache.latest_epoch) == (5, 10)
    op, params, status, callback = delayed_fetch(rm, 5, last_fetched_epoch=9, tp=TP0)
    assert op.try_complete() is True
    assert op.is_completed
    result = single_result(callback, TP0)
    assert result.error is Errors.NONE
    assert (result.diverging_epoch.leader_epoch, result.diverging_epoch.end_offset) == (9, 4)
    assert result.bytes == 0


def test_no_divergence_at_the_log_end_keeps_waiting_real_broker():
    """The counterpart of testDivergingEpoch: a follower at the log end whose last fetched epoch is
    the leader's latest has nothing to read and nothing to truncate, so tryComplete keeps it waiting
    (and readFromLog is not called)."""
    broker, rm = broker_leading(10)
    log = rm.online_partition(TP0).log
    seed_log_data(log, 4, 9)
    seed_log_data(log, 1, 10)
    start = log.local_log.log_end_offset_metadata
    op, params, status, callback = delayed_fetch(rm, 5, last_fetched_epoch=10, start=start, tp=TP0)
    assert op.try_complete() is False
    assert not op.is_completed and not callback.done
    # One more record: case G (1 byte wanted) completes it with that record.
    seed_log_data(log, 1, 10)
    assert op.try_complete() is True
    result = single_result(callback, TP0)
    assert (result.error, result.diverging_epoch, result.leader_log_end_offset) == (Errors.NONE, None, 6)
    assert [(b.base_offset, b.last_offset) for b in result.info.records] == [(5, 5)]


def test_consumer_above_a_lagging_high_watermark_waits_real_broker():
    """kafka_ref deviation (see DelayedFetch#_check_partition): a consumer fetching above the HW on
    the HW's own segment. Kafka 3.8 answers such a fetch at once (case F, fetch offset past the
    bound), and the consumer fetches again; on the simulator's zero-latency network that loop would
    never let time pass. Here it waits for the HW like any fetch: when a follower's fetch moves the
    HW past it, the consumer gets the record that became visible."""
    broker, rm = broker_leading(10)
    partition = rm.online_partition(TP0)
    seed_log_data(partition.log, 5, 10)
    fetch_follower(partition, 1, 3, leader_epoch=10)
    assert partition.log.high_watermark == 3
    callback = rm_fetch(rm, consumer_params(max_wait_ms=500), (TP0, fetch_partition(4, current_leader_epoch=10)))
    assert not callback.done
    # The follower catches up: the HW moves to 5 and the parked consumer fetch reads offset 4.
    rm.fetch_messages(build_follower_fetch_params(1, max_wait_ms=0),
                      [(TP0, fetch_partition(5, current_leader_epoch=10, log_start_offset=0))], lambda r: None)
    assert partition.log.high_watermark == 5
    result = single_result(callback, TP0)
    assert (result.error, result.high_watermark) == (Errors.NONE, 5)
    assert [(b.base_offset, b.last_offset) for b in result.info.records] == [(4, 4)]



# ------------------------------------------------------------------------------ LogOffsetMetadataTest


def test_on_older_segment():
    """Mirrors LogOffsetMetadataTest#testOnOlderSegment."""
    metadata1 = LogOffsetMetadata(1, 0, 1)
    metadata2 = LogOffsetMetadata(5, 4, 2)
    message_only_metadata = LogOffsetMetadata(1)
    assert UNKNOWN_OFFSET_METADATA.on_older_segment(UNKNOWN_OFFSET_METADATA) is False
    assert metadata1.on_older_segment(message_only_metadata) is False
    assert message_only_metadata.on_older_segment(metadata1) is False
    assert metadata1.on_older_segment(metadata1) is False
    assert metadata2.on_older_segment(metadata1) is False
    assert metadata1.on_older_segment(metadata2) is True


def test_position_diff():
    """Mirrors LogOffsetMetadataTest#testPositionDiff."""
    metadata1 = LogOffsetMetadata(1)
    metadata2 = LogOffsetMetadata(5, 0, 5)
    with pytest.raises(KafkaException) as info:
        metadata1.position_diff(metadata2)
    assert str(info.value).endswith("since it only has message offset info")
    with pytest.raises(KafkaException) as info:
        metadata2.position_diff(metadata1)
    assert str(info.value).endswith("since it only has message offset info")
    metadata3 = LogOffsetMetadata(15, 10, 5)
    with pytest.raises(KafkaException) as info:
        metadata3.position_diff(metadata2)
    assert str(info.value).endswith("since they are not on the same segment")
    metadata4 = LogOffsetMetadata(40, 10, 100)
    assert metadata4.position_diff(metadata3) == 95


def test_message_offset_only():
    """Mirrors LogOffsetMetadataTest#testMessageOffsetOnly."""
    assert UNKNOWN_OFFSET_METADATA.message_offset_only() is True
    assert LogOffsetMetadata(1, 0, 1).message_offset_only() is False
    assert LogOffsetMetadata(1).message_offset_only() is True
    assert (UNKNOWN_OFFSET_METADATA.message_offset, UNKNOWN_OFFSET_METADATA.segment_base_offset,
            UNKNOWN_OFFSET_METADATA.relative_position_in_segment) == (-1, -1, -1)


def test_on_same_segment():
    """Mirrors LogOffsetMetadataTest#testOnSameSegment."""
    metadata1 = LogOffsetMetadata(1, 0, 1)
    metadata2 = LogOffsetMetadata(5, 4, 2)
    metadata3 = LogOffsetMetadata(10, 4, 200)
    assert metadata1.on_same_segment(metadata2) is False
    assert metadata2.on_same_segment(metadata3) is True
    assert LogOffsetMetadata(50).on_same_segment(LogOffsetMetadata(100)) is False


def test_unknown_leader_epoch_is_not_a_reason_to_complete():
    """Mirrors DelayedFetch#tryComplete's catch list (cases A–E): UnknownLeaderEpochException is not
    in it. A parked fetch whose epoch (10) the partition does not know yet stays parked; on expiry
    it answers whatever the read then gives."""
    partition = MockPartition(snapshot_error=UnknownLeaderEpochException("epoch 10 is newer than the leader's"))
    rm = MockReplicaManager(partition)
    op, params, status, callback = delayed_fetch(rm, 500)
    rm.expect_read_from_replica(Errors.UNKNOWN_LEADER_EPOCH)
    time = MockTime()
    timer = SystemTimer(time)
    purgatory = DelayedOperationPurgatory("Fetch", timer)
    key = TopicPartitionOperationKey.of(TOPIC_PARTITION)
    assert purgatory.try_complete_else_watch(op, [key]) is False
    assert purgatory.check_and_complete(key) == 0
    assert (op.is_completed, callback.done, rm.reads) == (False, False, [])
    time.advance(499)
    assert timer.advance_clock() == 0
    time.advance(1)
    assert timer.advance_clock() == 1
    assert single_result(callback).error is Errors.UNKNOWN_LEADER_EPOCH
    assert rm.reads == [(params, [(TOPIC_PARTITION, status.fetch_info)], True)]
