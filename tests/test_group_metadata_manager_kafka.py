"""GroupMetadataManager against Kafka 3.8.0's GroupMetadataManagerTest, test by test.

Mirrors kafka.coordinator.group.GroupMetadataManagerTest (Kafka 3.8.0) for the tests that
tests/test_group_metadata_manager.py, tests/test_consumer_offsets_schemas.py and
tests/test_group_metadata.py do not already cover: loading (offsets, group records, tombstones,
chunks, unknown keys, control batches), unloading, storeGroup / storeOffsets and their error
mapping, and offset expiration (cleanupGroupMetadata). Transactional offset commits are not
modelled, so their tests are not here.

Kafka's test mocks ReplicaManager, UnifiedLog and Partition. Here small stand-ins answer the same
questions: ``FakeReplicaManager`` (getLog, which also answers getMagic; onlinePartition;
appendRecords, answering with a chosen error or holding the callback), ``FakeLog`` (log start
offset, reads by offset, log end offset) and ``FakePartition`` (the leader's log end offset and
appendRecordsToLeader). Same constants as Kafka's test: group "foo" in partition 0 of 2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import anyio
import pytest
import structlog

from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol, Subscription
from kafka_ref.common.errors import Errors, IllegalStateException
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.records.record_batch import RecordBatch
from kafka_ref.common.requests.offset_fetch import INVALID_OFFSET
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group import schemas
from kafka_ref.coordinator.group.group_metadata import (
    CommitRecordMetadataAndOffset,
    Dead,
    Empty,
    GroupMetadata,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import GroupMetadataManager, OffsetConfig
from kafka_ref.coordinator.group.member_metadata import MemberMetadata
from kafka_ref.log.fetch_data import FetchDataInfo, FetchIsolation, LogOffsetMetadata
from kafka_ref.server.delayed_produce import PartitionResponse
from kafka_ref.server.timer import KafkaScheduler

pytestmark = pytest.mark.anyio

GROUP_ID = "foo"
GROUP_INSTANCE_ID = "bar"
GROUP_PARTITION_ID = 0
GROUP_TOPIC_PARTITION = TopicPartition("__consumer_offsets", GROUP_PARTITION_ID)
PROTOCOL_TYPE = "protocolType"
REBALANCE_TIMEOUT = 60000
SESSION_TIMEOUT = 10000
DEFAULT_REQUIRE_STABLE = False
NUM_OFFSETS_PARTITIONS = 2
LATEST_TESTING = MetadataVersion.parse("3.8")
OFFSET_CONFIG = OffsetConfig()                      # KafkaConfig's defaults, as Kafka's test builds it
DEFAULT_OFFSET_RETENTION_MS = OFFSET_CONFIG.offsets_retention_ms
MAX_METADATA_SIZE = OFFSET_CONFIG.max_metadata_size
COMMITTED_OFFSETS = {TopicPartition("foo", 0): 23, TopicPartition("foo", 1): 455, TopicPartition("bar", 0): 8992}
# Every inter.broker.protocol.version Kafka 3.8.0 knows (MetadataVersion.VERSIONS).
ALL_METADATA_VERSIONS = [MetadataVersion.parse(v) for v in (
    "0.8.0 0.8.1 0.8.2 0.9.0 0.10.0-IV0 0.10.0-IV1 0.10.1-IV0 0.10.1-IV1 0.10.1-IV2 0.10.2-IV0 0.11.0-IV0 "
    "0.11.0-IV1 0.11.0-IV2 1.0-IV0 1.1-IV0 2.0-IV0 2.0-IV1 2.1-IV0 2.1-IV1 2.1-IV2 2.2-IV0 2.2-IV1 2.3-IV0 "
    "2.3-IV1 2.4-IV0 2.4-IV1 2.5-IV0 2.6-IV0 2.7-IV0 2.7-IV1 2.7-IV2 2.8-IV0 2.8-IV1 3.0-IV0 3.0-IV1 3.1-IV0 "
    "3.2-IV0 3.3-IV0 3.3-IV1 3.3-IV2 3.3-IV3 3.4-IV0 3.5-IV0 3.5-IV1 3.5-IV2 3.6-IV0 3.6-IV1 3.6-IV2 3.7-IV0 "
    "3.7-IV1 3.7-IV2 3.7-IV3 3.7-IV4 3.8-IV0").split()]


def test_group_under_test_lives_in_partition_0():
    """``"foo".hashCode`` is 101574: partition 0 of 2, as Kafka's test assumes."""
    manager, _, _ = new_manager()
    assert manager.partition_for(GROUP_ID) == GROUP_PARTITION_ID


# ------------------------------------------------------------------------------------------ stand-ins

class FakeLog:
    """Kafka's mocked UnifiedLog: a log start offset, the records each read returns, a log end offset.

    ``segments`` are MemoryRecords; a read at an offset returns the segment whose batches cover it
    (EMPTY when none does), as the mock's ``read`` stubs do.
    """

    def __init__(self, log_start_offset: int, segments: list[MemoryRecords], log_end_offset: int | None = None) -> None:
        self.log_start_offset = log_start_offset
        self.segments = segments
        if log_end_offset is None:
            log_end_offset = max((s.batches[-1].next_offset for s in segments if s.batches), default=log_start_offset)
        self.log_end_offset = log_end_offset
        self.high_watermark = log_end_offset
        self.reads: list[tuple[int, FetchIsolation, bool]] = []

    def read(self, offset: int, max_length: int, isolation: FetchIsolation, min_one_message: bool) -> FetchDataInfo:
        self.reads.append((offset, isolation, min_one_message))
        for segment in self.segments:
            if segment.batches and segment.batches[0].base_offset <= offset < segment.batches[-1].next_offset:
                return FetchDataInfo(LogOffsetMetadata(offset), segment)
        return FetchDataInfo(LogOffsetMetadata(offset), MemoryRecords.EMPTY)


class FakePartition:
    """Kafka's mocked Partition: the leader's log (for the log end offset) and appendRecordsToLeader."""

    def __init__(self, replica_manager: "FakeReplicaManager", tp: TopicPartition) -> None:
        self.replica_manager = replica_manager
        self.tp = tp
        self.log_end_offset_lookups = 0
        self.appended: list[tuple[MemoryRecords, str, int]] = []

    def leader_log_if_local(self) -> FakeLog | None:
        self.log_end_offset_lookups += 1
        return self.replica_manager.logs.get(self.tp)

    def append_records_to_leader(self, records: MemoryRecords, origin: str, required_acks: int) -> None:
        self.appended.append((records, origin, required_acks))


@dataclass
class Append:
    timeout_ms: int
    required_acks: int
    internal_topics_allowed: bool
    origin: str
    entries_per_partition: dict[TopicPartition, MemoryRecords]
    response_callback: Callable[[dict[TopicPartition, Any]], None]


class FakeReplicaManager:
    """Kafka's mocked ReplicaManager.

    ``get_log`` (getLog; GroupMetadataManager#getMagic asks it too: a local log means a record
    format, none means not the coordinator), ``online_partition`` (onlinePartition, counted per
    partition) and ``append_records`` (appendRecords: recorded; with ``append_error`` set it
    answers at once with that error at base offset 0, as ``expectAppendMessage`` does).
    """

    def __init__(self) -> None:
        self.logs: dict[TopicPartition, FakeLog] = {}
        self.partitions: dict[TopicPartition, FakePartition] = {}
        self.get_log_calls = 0
        self.online_partition_calls: dict[TopicPartition, int] = {}
        self.appends: list[Append] = []
        self.append_error: Errors | None = None

    def get_log(self, tp: TopicPartition) -> FakeLog | None:
        self.get_log_calls += 1
        return self.logs.get(tp)

    def online_partition(self, tp: TopicPartition) -> FakePartition | None:
        self.online_partition_calls[tp] = self.online_partition_calls.get(tp, 0) + 1
        return self.partitions.get(tp)

    def append_records(self, timeout_ms: int, required_acks: int, internal_topics_allowed: bool, origin: str,
                       entries_per_partition: dict[TopicPartition, MemoryRecords],
                       response_callback: Callable[[dict[TopicPartition, Any]], None]) -> None:
        self.appends.append(Append(timeout_ms, required_acks, internal_topics_allowed, origin,
                                   dict(entries_per_partition), response_callback))
        if self.append_error is not None:
            response_callback({GROUP_TOPIC_PARTITION: PartitionResponse(self.append_error, 0, -1, 0)})


def new_manager(time: MockTime | None = None) -> tuple[GroupMetadataManager, FakeReplicaManager, MockTime]:
    """Kafka's setUp: a manager on partition count 2 with offset expiration off (startup(_, false))."""
    time = time or MockTime()
    replica_manager = FakeReplicaManager()
    manager = GroupMetadataManager(0, LATEST_TESTING, OFFSET_CONFIG, replica_manager, KafkaScheduler(time), time)
    manager.startup(lambda: NUM_OFFSETS_PARTITIONS, False)
    return manager, replica_manager, time


def expect_group_metadata_load(replica_manager: FakeReplicaManager, start_offset: int, records: MemoryRecords,
                               tp: TopicPartition = GROUP_TOPIC_PARTITION) -> FakeLog:
    """Kafka's expectGroupMetadataLoad: the log holds ``records`` from ``start_offset``; the log end
    offset is the start offset plus the number of records."""
    log = FakeLog(start_offset, [records], start_offset + sum(1 for _ in records.records()))
    replica_manager.logs[tp] = log
    replica_manager.partitions[tp] = FakePartition(replica_manager, tp)
    return log


def expect_append_message(replica_manager: FakeReplicaManager, error: Errors) -> None:
    """Kafka's expectAppendMessage: the offsets partition's log is local (getMagic answers) and
    appendRecords answers ``error`` at once."""
    replica_manager.logs.setdefault(GROUP_TOPIC_PARTITION, FakeLog(0, []))
    replica_manager.append_error = error


def mock_get_partition(replica_manager: FakeReplicaManager) -> FakePartition:
    """Kafka's mockGetPartition: onlinePartition(__consumer_offsets-0) is a (mocked) partition."""
    partition = FakePartition(replica_manager, GROUP_TOPIC_PARTITION)
    replica_manager.partitions[GROUP_TOPIC_PARTITION] = partition
    return partition


def create_committed_offset_records(time: MockTime, committed_offsets: dict[TopicPartition, int],
                                    group_id: str = GROUP_ID, metadata_version: MetadataVersion = LATEST_TESTING,
                                    retention_time_ms: int | None = None) -> list[SimpleRecord]:
    """Kafka's createCommittedOffsetRecords: one commit record per partition, committed now."""
    records = []
    for tp, offset in committed_offsets.items():
        commit_timestamp = time.milliseconds()
        expire = None if retention_time_ms is None else commit_timestamp + retention_time_ms
        value = OffsetAndMetadata(offset, None, "", commit_timestamp, expire)
        records.append(SimpleRecord(schemas.offset_commit_key(group_id, tp), schemas.offset_commit_value(value, metadata_version)))
    return records


def build_stable_group_record_with_member(time: MockTime, generation: int, protocol_type: str, protocol: str, member_id: str,
                                          assignment_bytes: bytes = b"",
                                          metadata_version: MetadataVersion = LATEST_TESTING) -> SimpleRecord:
    """Kafka's buildStableGroupRecordWithMember: a Stable group of one static member."""
    member = MemberMetadata(member_id, GROUP_INSTANCE_ID, "clientId", "clientHost", 30000, 10000, protocol_type,
                            [(protocol, b"")])
    state_timestamp = time.milliseconds() if metadata_version.is_at_least("2.1") else None
    group = GroupMetadata.load_group(GROUP_ID, Stable, generation, protocol_type, protocol, member_id, state_timestamp,
                                     [member], time)
    return SimpleRecord(schemas.group_metadata_key(GROUP_ID),
                        schemas.group_metadata_value(group, {member_id: assignment_bytes}, metadata_version))


def build_empty_group_record(time: MockTime, generation: int, protocol_type: str) -> SimpleRecord:
    """Kafka's buildEmptyGroupRecord."""
    group = GroupMetadata.load_group(GROUP_ID, Empty, generation, protocol_type, None, None, None, [], time)
    return SimpleRecord(schemas.group_metadata_key(GROUP_ID), schemas.group_metadata_value(group, {}, LATEST_TESTING))


def with_records(start_offset: int, records: list[SimpleRecord]) -> MemoryRecords:
    """MemoryRecords.withRecords(startOffset, NONE, records: _*): one batch from ``start_offset``."""
    return MemoryRecords.with_records(records, base_offset=start_offset)


async def load_groups_and_offsets(manager: GroupMetadataManager, epoch: int,
                                  tp: TopicPartition = GROUP_TOPIC_PARTITION) -> None:
    await manager.load_groups_and_offsets(tp, epoch, lambda group: None, 0)


def offsets_of(group: GroupMetadata) -> dict[TopicPartition, int]:
    return {tp: o.offset for tp, o in group.all_offsets().items()}


def fetched_offsets(manager: GroupMetadataManager, *tps: TopicPartition,
                    require_stable: bool = DEFAULT_REQUIRE_STABLE) -> dict[TopicPartition, int]:
    return {tp: data.committed_offset for tp, data in manager.get_offsets(GROUP_ID, require_stable, list(tps)).items()}


class Answers:
    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> None:
        self.values.append(value)


def consumer_member(member_id: str, topics: list[str], protocol_type: str = PROTOCOL_TYPE) -> MemberMetadata:
    subscription = ConsumerProtocol.serialize_subscription(Subscription(tuple(topics)))
    return MemberMetadata(member_id, GROUP_INSTANCE_ID, "clientId", "localhost", REBALANCE_TIMEOUT, SESSION_TIMEOUT,
                          protocol_type, [("protocol", subscription)])


# ------------------------------------------------------------------------------------------ cleanup logging

def test_log_info_from_cleanup_group_metadata():
    """Mirrors GroupMetadataManagerTest#testLogInfoFromCleanupGroupMetadata: the expiration pass logs only
    when it removed offsets."""
    expired_offsets = [0]

    class CountingManager(GroupMetadataManager):
        def cleanup_group_metadata(self, groups, selector):  # type: ignore[override]
            return expired_offsets[0]

    time = MockTime()
    manager = CountingManager(0, LATEST_TESTING, OFFSET_CONFIG, FakeReplicaManager(), KafkaScheduler(time), time)
    manager.startup(lambda: NUM_OFFSETS_PARTITIONS, False)
    with structlog.testing.capture_logs() as logs:
        manager.cleanup_expired_group_metadata()
    assert [e for e in logs if e["event"] == "expired_offsets_removed"] == []
    expired_offsets[0] = 100
    with structlog.testing.capture_logs() as logs:
        manager.cleanup_expired_group_metadata()
    assert [e["offsets"] for e in logs if e["event"] == "expired_offsets_removed"] == [100]


# ------------------------------------------------------------------------------------------ loading

async def test_load_empty_group_with_offsets():
    """Mirrors GroupMetadataManagerTest#testLoadEmptyGroupWithOffsets."""
    manager, replica_manager, time = new_manager()
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS)
                           + [build_empty_group_record(time, 15, "consumer")])
    expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state, group.generation_id, group.protocol_type) == (GROUP_ID, Empty, 15, "consumer")
    assert group.leader_or_null() is None and group.protocol_name is None
    assert offsets_of(group) == COMMITTED_OFFSETS


async def test_group_not_exists():
    """Mirrors GroupMetadataManagerTest#testGroupNotExists."""
    manager, _, time = new_manager()
    assert not manager.group_not_exists(GROUP_ID)           # not owned
    manager.add_owned_partition(GROUP_PARTITION_ID)
    assert manager.group_not_exists(GROUP_ID)               # owned, no group yet
    group = GroupMetadata(GROUP_ID, Empty, time)
    manager.add_group(group)
    assert not manager.group_not_exists(GROUP_ID)           # owned, not Dead
    group.transition_to(Dead)
    assert manager.group_not_exists(GROUP_ID)               # owned and Dead


async def load_offsets_and_group(manager: GroupMetadataManager, replica_manager: FakeReplicaManager, time: MockTime,
                                 group_epoch: int) -> GroupMetadata:
    """Kafka's loadOffsetsAndGroup: three commits then a Stable group record of generation 935."""
    member_id = "98098230493"
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS)
                           + [build_stable_group_record_with_member(time, 935, "consumer", "range", member_id)])
    expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, group_epoch)
    group = manager.get_group(GROUP_ID)
    assert group is not None, "Group was not loaded into the cache"
    assert (group.group_id, group.current_state, group.leader_or_null(), group.generation_id) == (
        GROUP_ID, Stable, member_id, 935)
    assert (group.protocol_type, group.protocol_name, group.all_members()) == ("consumer", "range", {member_id})
    assert offsets_of(group) == COMMITTED_OFFSETS
    assert all(o.expire_timestamp is None for o in group.all_offsets().values())
    return group


async def test_load_offsets_and_group():
    """Mirrors GroupMetadataManagerTest#testLoadOffsetsAndGroup."""
    manager, replica_manager, time = new_manager()
    await load_offsets_and_group(manager, replica_manager, time, 2)
    assert manager.is_partition_owned(GROUP_PARTITION_ID) and not manager.is_partition_loading(GROUP_PARTITION_ID)


async def test_load_offsets_and_group_ignored():
    """Mirrors GroupMetadataManagerTest#testLoadOffsetsAndGroupIgnored: a load of an older epoch after
    the unload is skipped."""
    manager, replica_manager, time = new_manager()
    await load_offsets_and_group(manager, replica_manager, time, 2)
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2
    manager.remove_groups_and_offsets(GROUP_TOPIC_PARTITION, 2, lambda group: None)
    assert manager.get_group(GROUP_ID) is None, "Removed group remained in cache"
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2
    await load_groups_and_offsets(manager, 1)
    assert manager.get_group(GROUP_ID) is None, "Removed group remained in cache"
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2


async def test_unload_offsets_and_group():
    """Mirrors GroupMetadataManagerTest#testUnloadOffsetsAndGroup."""
    manager, replica_manager, time = new_manager()
    await load_offsets_and_group(manager, replica_manager, time, 2)
    manager.remove_groups_and_offsets(GROUP_TOPIC_PARTITION, 2, lambda group: None)
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2
    assert manager.get_group(GROUP_ID) is None, "Removed group remained in cache"


def assert_same_group(initially_loaded: GroupMetadata, group: GroupMetadata) -> None:
    assert (group.group_id, group.current_state, group.leader_or_null(), group.generation_id) == (
        initially_loaded.group_id, initially_loaded.current_state, initially_loaded.leader_or_null(),
        initially_loaded.generation_id)
    assert (group.protocol_type, group.protocol_name, group.all_members()) == (
        initially_loaded.protocol_type, initially_loaded.protocol_name, initially_loaded.all_members())
    assert group.all_offsets() == initially_loaded.all_offsets()
    assert all(o.expire_timestamp is None for o in group.all_offsets().values())


async def test_unload_offsets_and_group_ignored():
    """Mirrors GroupMetadataManagerTest#testUnloadOffsetsAndGroupIgnored: an unload of an older epoch leaves
    the group as loaded."""
    manager, replica_manager, time = new_manager()
    initially_loaded = await load_offsets_and_group(manager, replica_manager, time, 2)
    manager.remove_groups_and_offsets(GROUP_TOPIC_PARTITION, 1, lambda group: None)
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2
    group = manager.get_group(GROUP_ID)
    assert group is initially_loaded
    assert_same_group(initially_loaded, group)


async def test_unload_offsets_and_group_ignored_after_stop_replica():
    """Mirrors GroupMetadataManagerTest#testUnloadOffsetsAndGroupIgnoredAfterStopReplica: an unload without
    an epoch (StopReplica) removes the group and keeps the epoch; a load of the next epoch brings it back."""
    manager, replica_manager, time = new_manager()
    initially_loaded = await load_offsets_and_group(manager, replica_manager, time, 2)
    manager.remove_groups_and_offsets(GROUP_TOPIC_PARTITION, None, lambda group: None)
    assert manager.get_group(GROUP_ID) is None, "Removed group remained in cache"
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 2, "Replica which was stopped still in epochForPartitionId"
    await load_offsets_and_group(manager, replica_manager, time, 3)
    group = manager.get_group(GROUP_ID)
    assert group is not initially_loaded
    assert_same_group(initially_loaded, group)
    assert manager.epoch_for_partition_id[GROUP_PARTITION_ID] == 3


async def test_load_group_with_large_group_metadata_record():
    """Mirrors GroupMetadataManagerTest#testLoadGroupWithLargeGroupMetadataRecord: a group record larger than
    offsets.load.buffer.size is still read (minOneMessage)."""
    manager, replica_manager, time = new_manager()
    assignment_size = OFFSET_CONFIG.load_buffer_size + 16
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS) + [
        build_stable_group_record_with_member(time, 15, "consumer", "range", "98098230493", bytes(assignment_size))])
    assert records.size_in_bytes > OFFSET_CONFIG.load_buffer_size
    log = expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert offsets_of(group) == COMMITTED_OFFSETS
    assert group.get("98098230493").assignment == bytes(assignment_size)
    assert log.reads == [(15, FetchIsolation.LOG_END, True)]


async def test_load_group_and_offsets_with_corrupted_log():
    """Mirrors GroupMetadataManagerTest#testLoadGroupAndOffsetsWithCorruptedLog: log start 0 below log end 10
    but nothing to read; the load reads once, stops, and the partition is not left loading."""
    manager, replica_manager, _ = new_manager()
    log = FakeLog(0, [], log_end_offset=10)
    replica_manager.logs[GROUP_TOPIC_PARTITION] = log
    partition = replica_manager.partitions[GROUP_TOPIC_PARTITION] = FakePartition(replica_manager, GROUP_TOPIC_PARTITION)
    await load_groups_and_offsets(manager, 2)
    assert log.reads == [(0, FetchIsolation.LOG_END, True)]
    assert replica_manager.get_log_calls == 1
    assert partition.log_end_offset_lookups == 2
    assert not manager.is_partition_loading(GROUP_PARTITION_ID)
    assert manager.is_partition_owned(GROUP_PARTITION_ID)


async def test_offset_write_after_group_removed():
    """Mirrors GroupMetadataManagerTest#testOffsetWriteAfterGroupRemoved: a group record, its tombstone, then
    commits of a "simple" consumer under the same id: an Empty group with the offsets."""
    manager, replica_manager, time = new_manager()
    records = with_records(15, [
        build_stable_group_record_with_member(time, 293, "consumer", "range", "98098230493"),
        SimpleRecord(schemas.group_metadata_key(GROUP_ID), None),
    ] + create_committed_offset_records(time, COMMITTED_OFFSETS))
    expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state) == (GROUP_ID, Empty)
    assert offsets_of(group) == COMMITTED_OFFSETS


async def test_load_group_and_offsets_from_different_segments():
    """Mirrors GroupMetadataManagerTest#testLoadGroupAndOffsetsFromDifferentSegments: two reads, the second
    segment's group record and offsets win over the first's."""
    manager, replica_manager, time = new_manager()
    tp0, tp1, tp2, tp3 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0), TopicPartition("xxx", 0)
    segment1_offsets = {tp0: 23, tp1: 455, tp3: 42}
    segment1 = with_records(15, create_committed_offset_records(time, segment1_offsets) + [
        build_stable_group_record_with_member(time, 293, "consumer", "range", "a")])
    segment1_end = 15 + sum(1 for _ in segment1.records())
    segment2_offsets = {tp0: 33, tp2: 8992, tp3: 10}
    segment2 = with_records(segment1_end, create_committed_offset_records(time, segment2_offsets) + [
        build_stable_group_record_with_member(time, 293, "consumer", "range", "b")])
    segment2_end = segment1_end + sum(1 for _ in segment2.records())
    log = FakeLog(15, [segment1, segment2], log_end_offset=segment2_end)
    replica_manager.logs[GROUP_TOPIC_PARTITION] = log
    replica_manager.partitions[GROUP_TOPIC_PARTITION] = FakePartition(replica_manager, GROUP_TOPIC_PARTITION)
    await load_groups_and_offsets(manager, 2)
    assert [offset for offset, _, _ in log.reads] == [15, segment1_end]
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state) == (GROUP_ID, Stable)
    assert group.leader_or_null() == "b", "segment2 group record member should be elected"
    assert group.all_members() == {"b"}, "segment2 group record member should be only member"
    assert offsets_of(group) == {**segment1_offsets, **segment2_offsets}
    assert offsets_of(group) == {tp0: 33, tp1: 455, tp2: 8992, tp3: 10}


def test_add_group():
    """Mirrors GroupMetadataManagerTest#testAddGroup: the first group added for an id stays."""
    manager, _, time = new_manager()
    group = GroupMetadata("foo", Empty, time)
    assert manager.add_group(group) is group
    assert manager.add_group(GroupMetadata("foo", Empty, time)) is group


def test_load_consumer_group():
    """Mirrors GroupMetadataManagerTest#testLoadConsumerGroup: the subscribed topics come from the members."""
    time = MockTime()
    member = consumer_member("member1", ["foo"], protocol_type="consumer")
    group = GroupMetadata.load_group(GROUP_ID, Stable, 27, "consumer", "protocol", None, None, [member], time)
    assert group.is_(Stable)
    assert (group.generation_id, group.protocol_type, group.protocol_name) == (27, "consumer", "protocol")
    assert group.subscribed_topics == {"foo"}
    assert group.has("member1")


def test_load_empty_consumer_group():
    """Mirrors GroupMetadataManagerTest#testLoadEmptyConsumerGroup: no members, no subscribed topics."""
    group = GroupMetadata.load_group(GROUP_ID, Empty, 27, "consumer", None, None, None, [], MockTime())
    assert group.is_(Empty)
    assert (group.generation_id, group.protocol_type, group.protocol_name) == (27, "consumer", None)
    assert group.subscribed_topics == set()


def test_load_consumer_group_with_faulty_consumer_protocol():
    """Mirrors GroupMetadataManagerTest#testLoadConsumerGroupWithFaultyConsumerProtocol: metadata that is no
    subscription leaves the subscribed topics unknown."""
    member = MemberMetadata("member1", GROUP_INSTANCE_ID, "", "", REBALANCE_TIMEOUT, SESSION_TIMEOUT, "consumer",
                            [("protocol", b"")])
    group = GroupMetadata.load_group(GROUP_ID, Stable, 27, "consumer", "protocol", None, None, [member], MockTime())
    assert group.is_(Stable)
    assert (group.generation_id, group.protocol_type, group.protocol_name) == (27, "consumer", "protocol")
    assert group.subscribed_topics is None
    assert group.has("member1")


def test_should_throw_exception_for_unsupported_group_metadata_version():
    """Mirrors GroupMetadataManagerTest#testShouldThrowExceptionForUnsupportedGroupMetadataVersion."""
    time = MockTime()
    value = build_stable_group_record_with_member(time, 1, PROTOCOL_TYPE, "range", "memberId").value
    unsupported = (-32768).to_bytes(2, "big", signed=True) + value[2:]        # Short.MinValue as the version
    with pytest.raises(IllegalStateException) as err:
        schemas.read_group_message_value(GROUP_ID, unsupported, time)
    assert str(err.value) == "Unknown group metadata message version: -32768"


def test_current_state_timestamp_for_all_group_metadata_versions():
    """Mirrors GroupMetadataManagerTest#testCurrentStateTimestampForAllGroupMetadataVersions: value version 2
    and later (IBP 2.1+) carry the state timestamp, older ones none."""
    time = MockTime()
    for metadata_version in ALL_METADATA_VERSIONS:
        record = build_stable_group_record_with_member(time, 1, PROTOCOL_TYPE, "range", "memberId",
                                                       metadata_version=metadata_version)
        group = schemas.read_group_message_value(GROUP_ID, record.value, time)
        expected = time.milliseconds() if metadata_version.is_at_least("2.1") else None
        assert group.current_state_timestamp == expected, str(metadata_version.text)


def test_store_empty_group():
    """Mirrors GroupMetadataManagerTest#testStoreEmptyGroup: one group record, Empty, generation and protocol type kept."""
    manager, replica_manager, time = new_manager()
    group = GroupMetadata.load_group(GROUP_ID, Empty, 27, "consumer", None, None, None, [], time)
    manager.add_group(group)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_group(group, {}, answers)
    assert answers.values == [Errors.NONE]
    records = list(replica_manager.appends[0].entries_per_partition[GROUP_TOPIC_PARTITION].records())
    assert len(records) == 1
    stored = schemas.read_group_message_value(GROUP_ID, records[0].value, time)
    assert stored.is_(Empty)
    assert (stored.generation_id, stored.protocol_type) == (27, "consumer")


def test_store_empty_simple_group():
    """Mirrors GroupMetadataManagerTest#testStoreEmptySimpleGroup: a group with no protocol type stores
    generation 0 and reads back without one."""
    manager, replica_manager, time = new_manager()
    group = GroupMetadata(GROUP_ID, Empty, time)
    manager.add_group(group)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_group(group, {}, answers)
    assert answers.values == [Errors.NONE]
    records = list(replica_manager.appends[0].entries_per_partition[GROUP_TOPIC_PARTITION].records())
    assert len(records) == 1
    stored = schemas.read_group_message_value(GROUP_ID, records[0].value, time)
    assert stored.is_(Empty)
    assert (stored.generation_id, stored.protocol_type) == (0, None)


@pytest.mark.parametrize("append_error, expected", [
    (Errors.NONE, Errors.NONE),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    (Errors.MESSAGE_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.RECORD_LIST_TOO_LARGE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.INVALID_FETCH_SIZE, Errors.UNKNOWN_SERVER_ERROR),
    (Errors.CORRUPT_MESSAGE, Errors.CORRUPT_MESSAGE),
])
def test_store_group_error_mapping(append_error, expected):
    """Mirrors GroupMetadataManagerTest#testStoreGroupErrorMapping (assertStoreGroupErrorMapping per error)."""
    manager, replica_manager, time = new_manager()
    group = GroupMetadata(GROUP_ID, Empty, time)
    manager.add_group(group)
    expect_append_message(replica_manager, append_error)
    answers = Answers()
    manager.store_group(group, {}, answers)
    assert answers.values == [expected]
    assert len(replica_manager.appends) == 1
    assert replica_manager.get_log_calls == 1                  # getMagic, once


def _rebalanced_group(time: MockTime, member_id: str = "memberId") -> GroupMetadata:
    group = GroupMetadata(GROUP_ID, Empty, time)
    member = MemberMetadata(member_id, GROUP_INSTANCE_ID, "clientId", "localhost", REBALANCE_TIMEOUT, SESSION_TIMEOUT,
                            PROTOCOL_TYPE, [("protocol", b"")])
    group.add(member, lambda result: None)
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    return group


def test_store_non_empty_group():
    """Mirrors GroupMetadataManagerTest#testStoreNonEmptyGroup: appended with acks=-1 as the coordinator."""
    manager, replica_manager, time = new_manager()
    group = _rebalanced_group(time)
    manager.add_group(group)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_group(group, {"memberId": b""}, answers)
    assert answers.values == [Errors.NONE]
    assert len(replica_manager.appends) == 1
    append = replica_manager.appends[0]
    assert (append.timeout_ms, append.required_acks, append.internal_topics_allowed, append.origin) == (
        OFFSET_CONFIG.offset_commit_timeout_ms, OFFSET_CONFIG.offset_commit_required_acks, True, "coordinator")
    assert replica_manager.get_log_calls == 1


def test_store_non_empty_group_when_coordinator_has_moved():
    """Mirrors GroupMetadataManagerTest#testStoreNonEmptyGroupWhenCoordinatorHasMoved: no local log, NOT_COORDINATOR."""
    manager, replica_manager, time = new_manager()
    group = _rebalanced_group(time)
    answers = Answers()
    manager.store_group(group, {"memberId": b""}, answers)
    assert answers.values == [Errors.NOT_COORDINATOR]
    assert replica_manager.appends == []
    assert replica_manager.get_log_calls == 1


# ------------------------------------------------------------------------------------------ offset commits

FOO0, FOO1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
OFFSET = 37


def _owned_empty_group(manager: GroupMetadataManager, time: MockTime) -> GroupMetadata:
    manager.add_owned_partition(GROUP_PARTITION_ID)
    group = GroupMetadata(GROUP_ID, Empty, time)
    manager.add_group(group)
    return group


def _offset_topic_partition(manager: GroupMetadataManager, group: GroupMetadata) -> TopicPartition:
    return TopicPartition("__consumer_offsets", manager.partition_for(group.group_id))


def test_commit_offset_when_coordinator_has_moved():
    """Mirrors GroupMetadataManagerTest#testCommitOffsetWhenCoordinatorHasMoved."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group),
                          {FOO0: OffsetAndMetadata(OFFSET, None, "", time.milliseconds())}, answers)
    assert answers.values == [{FOO0: Errors.NOT_COORDINATOR}]
    assert replica_manager.get_log_calls == 1
    assert not group.has_offsets()


@pytest.mark.parametrize("append_error, expected", [
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.COORDINATOR_NOT_AVAILABLE),
    (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_COORDINATOR),
    (Errors.MESSAGE_TOO_LARGE, Errors.INVALID_COMMIT_OFFSET_SIZE),
    (Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_COMMIT_OFFSET_SIZE),
    (Errors.INVALID_FETCH_SIZE, Errors.INVALID_COMMIT_OFFSET_SIZE),
    (Errors.CORRUPT_MESSAGE, Errors.CORRUPT_MESSAGE),
])
def test_commit_offset_failure(append_error, expected):
    """Mirrors GroupMetadataManagerTest#testCommitOffsetFailure (assertCommitOffsetErrorMapping per error): the
    commit is pending until the append answers; a failed append drops it."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    replica_manager.logs[GROUP_TOPIC_PARTITION] = FakeLog(0, [])        # getMagic answers
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group),
                          {FOO0: OffsetAndMetadata(OFFSET, None, "", time.milliseconds())}, answers)
    assert group.has_offsets()
    assert answers.values == []
    [append] = replica_manager.appends
    append.response_callback({GROUP_TOPIC_PARTITION: PartitionResponse(append_error, 0, -1, 0)})
    assert answers.values == [{FOO0: expected}]
    assert not group.has_offsets()
    assert fetched_offsets(manager, FOO0) == {FOO0: INVALID_OFFSET}
    assert replica_manager.get_log_calls == 1


def test_commit_offset_partial_failure():
    """Mirrors GroupMetadataManagerTest#testCommitOffsetPartialFailure: too much metadata fails one partition,
    the other is written and cached."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    replica_manager.logs[GROUP_TOPIC_PARTITION] = FakeLog(0, [])
    offsets = {FOO0: OffsetAndMetadata(OFFSET, None, "", time.milliseconds()),
               FOO1: OffsetAndMetadata(OFFSET, None, "s" * (MAX_METADATA_SIZE + 1), time.milliseconds())}
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group), offsets, answers)
    assert group.has_offsets()
    [append] = replica_manager.appends
    # Only the valid commit is in the batch.
    keys = [schemas.read_message_key(r.key).key.topic_partition
            for r in append.entries_per_partition[GROUP_TOPIC_PARTITION].records()]
    assert keys == [FOO0]
    append.response_callback({GROUP_TOPIC_PARTITION: PartitionResponse(Errors.NONE, 0, -1, 0)})
    assert answers.values == [{FOO0: Errors.NONE, FOO1: Errors.OFFSET_METADATA_TOO_LARGE}]
    assert group.has_offsets()
    assert fetched_offsets(manager, FOO0, FOO1) == {FOO0: OFFSET, FOO1: INVALID_OFFSET}
    assert replica_manager.get_log_calls == 1


def test_offset_metadata_too_large():
    """Mirrors GroupMetadataManagerTest#testOffsetMetadataTooLarge: nothing valid, nothing appended."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group),
                          {FOO0: OffsetAndMetadata(OFFSET, None, "s" * (MAX_METADATA_SIZE + 1), time.milliseconds())},
                          answers)
    assert not group.has_offsets()
    assert answers.values == [{FOO0: Errors.OFFSET_METADATA_TOO_LARGE}]
    assert fetched_offsets(manager, FOO0) == {FOO0: INVALID_OFFSET}
    assert replica_manager.appends == []


def test_offset_metadata_too_large_partial_failure():
    """Mirrors GroupMetadataManagerTest#testOffsetMetadataTooLargePartialFailure: the refused partition reads
    back INVALID_OFFSET without error even with requireStable; the valid one is committed."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group), {
        FOO0: OffsetAndMetadata(OFFSET, None, "s" * (MAX_METADATA_SIZE + 1), time.milliseconds()),
        FOO1: OffsetAndMetadata(OFFSET, None, "", time.milliseconds()),
    }, answers)
    assert group.has_offsets()
    assert answers.values == [{FOO0: Errors.OFFSET_METADATA_TOO_LARGE, FOO1: Errors.NONE}]
    fetched = manager.get_offsets(GROUP_ID, True, [FOO0, FOO1])
    assert (fetched[FOO0].committed_offset, fetched[FOO0].error_code) == (INVALID_OFFSET, Errors.NONE.code)
    assert fetched[FOO1].committed_offset == OFFSET


# ------------------------------------------------------------------------------------------ offset expiration

def _tombstone_keys(records: MemoryRecords) -> list[Any]:
    keys = []
    for record in records.records():
        assert record.key is not None and record.value is None
        keys.append(schemas.read_message_key(record.key))
    return keys


def test_expire_offset():
    """Mirrors GroupMetadataManagerTest#testExpireOffset: a simple consumer's offset with an explicit expire
    timestamp goes once it is reached; the other stays, and so does the group."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    start_ms = time.milliseconds()
    offsets = {FOO0: OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 1),
               FOO1: OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 3)}
    partition = mock_get_partition(replica_manager)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group), offsets, answers)
    assert group.has_offsets()
    assert answers.values == [{FOO0: Errors.NONE, FOO1: Errors.NONE}]
    time.advance(2)                                     # only FOO0 has expired
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert group.offset(FOO0) is None
    assert group.offset(FOO1).offset == OFFSET
    assert fetched_offsets(manager, FOO0, FOO1) == {FOO0: INVALID_OFFSET, FOO1: OFFSET}
    assert len(replica_manager.appends) == 1
    assert replica_manager.get_log_calls == 2           # getMagic: the commit and the cleanup
    [(tombstones, origin, required_acks)] = partition.appended
    assert (_tombstone_keys(tombstones), origin, required_acks) == (
        [schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP_ID, FOO0))], "coordinator", 0)


@pytest.mark.parametrize("variant", ["create_time", "log_append_time"])
def test_group_metadata_removal(variant):
    """Mirrors GroupMetadataManagerTest#testGroupMetadataRemoval and #testGroupMetadataRemovalWithLogAppendTime
    (the same steps): an Empty group of generation 5 without offsets dies; one group tombstone, CREATE_TIME,
    timestamped now."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    group.generation_id = 5
    replica_manager.logs[GROUP_TOPIC_PARTITION] = FakeLog(0, [])
    partition = mock_get_partition(replica_manager)
    manager.cleanup_expired_group_metadata()
    [(tombstones, origin, _)] = partition.appended
    assert origin == "coordinator"
    for batch in tombstones:
        assert batch.magic == 2
        assert batch.timestamp_type.name == "CREATE_TIME"
    records = list(tombstones.records())
    assert len(records) == 1
    assert records[0].key is not None and records[0].value is None
    assert records[0].timestamp == time.milliseconds() > 0
    assert schemas.read_message_key(records[0].key) == schemas.GroupMetadataKey(2, GROUP_ID)
    assert manager.get_group(GROUP_ID) is None
    assert group.is_(Dead)
    assert fetched_offsets(manager, FOO0, FOO1) == {FOO0: INVALID_OFFSET, FOO1: INVALID_OFFSET}


def test_expire_group_with_offsets_only():
    """Mirrors GroupMetadataManagerTest#testExpireGroupWithOffsetsOnly: when every offset of a generation-0
    group expires, the group goes but no group tombstone is written (it only ever stored offsets)."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    start_ms = time.milliseconds()
    offsets = {FOO0: OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 1),
               FOO1: OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 3)}
    partition = mock_get_partition(replica_manager)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "", _offset_topic_partition(manager, group), offsets, answers)
    assert group.has_offsets()
    assert answers.values == [{FOO0: Errors.NONE, FOO1: Errors.NONE}]
    time.advance(4)                                     # both expired
    manager.cleanup_expired_group_metadata()
    [(tombstones, _, _)] = partition.appended
    keys = _tombstone_keys(tombstones)
    assert len(keys) == 2
    for key in keys:
        assert isinstance(key, schemas.OffsetKey)
        assert (key.key.group, key.key.topic_partition.topic) == (GROUP_ID, "foo")
    assert manager.get_group(GROUP_ID) is None
    assert fetched_offsets(manager, FOO0, FOO1) == {FOO0: INVALID_OFFSET, FOO1: INVALID_OFFSET}
    assert replica_manager.online_partition_calls == {GROUP_TOPIC_PARTITION: 1}


def test_offset_expiration_semantics():
    """Mirrors GroupMetadataManagerTest#testOffsetExpirationSemantics: nothing expires while the group is
    rebalancing; once Empty, explicit expire timestamps apply first, then the rest expire together
    offsets.retention.minutes after the group became Empty, and the group dies."""
    manager, replica_manager, time = new_manager()
    tp1, tp2, tp3 = (TopicPartition("foo", i) for i in range(3))
    group = _owned_empty_group(manager, time)
    member = consumer_member("memberId", ["foo"])
    group.add(member, lambda result: None)
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    start_ms = time.milliseconds()
    tp1_offset = OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 1)     # old clients: explicit expiry
    tp2_offset = OffsetAndMetadata(OFFSET, None, "", start_ms, start_ms + 3)
    tp3_offset = OffsetAndMetadata(OFFSET, None, "", start_ms)                   # new clients: group retention
    partition = mock_get_partition(replica_manager)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "memberId", _offset_topic_partition(manager, group),
                          {tp1: tp1_offset, tp2: tp2_offset, tp3: tp3_offset}, answers)
    assert group.has_offsets()
    assert answers.values[0][tp1] is Errors.NONE
    # 1. CompletingRebalance: nothing expires although tp1's expire timestamp has passed.
    time.advance(2)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert (group.offset(tp1), group.offset(tp2), group.offset(tp3)) == (tp1_offset, tp2_offset, tp3_offset)
    assert fetched_offsets(manager, tp1, tp2, tp3) == {tp1: OFFSET, tp2: OFFSET, tp3: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 1
    assert partition.appended == []
    # 2. Empty: tp1's explicit expiry applies.
    group.transition_to(PreparingRebalance)
    group.transition_to(Empty)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert (group.offset(tp1), group.offset(tp2), group.offset(tp3)) == (None, tp2_offset, tp3_offset)
    assert fetched_offsets(manager, tp1, tp2, tp3) == {tp1: INVALID_OFFSET, tp2: OFFSET, tp3: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 2
    # 3. Then tp2's.
    time.advance(2)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert (group.offset(tp1), group.offset(tp2), group.offset(tp3)) == (None, None, tp3_offset)
    assert fetched_offsets(manager, tp1, tp2, tp3) == {tp1: INVALID_OFFSET, tp2: INVALID_OFFSET, tp3: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 3
    # 4. One millisecond before the retention since the group became Empty: tp3 stays.
    time.advance(group.current_state_timestamp + DEFAULT_OFFSET_RETENTION_MS - time.milliseconds() - 1)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert (group.offset(tp1), group.offset(tp2), group.offset(tp3)) == (None, None, tp3_offset)
    assert fetched_offsets(manager, tp1, tp2, tp3) == {tp1: INVALID_OFFSET, tp2: INVALID_OFFSET, tp3: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 4
    # 5. Past it: tp3 goes and the group with it.
    time.advance(2)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is None
    assert (group.offset(tp1), group.offset(tp2), group.offset(tp3)) == (None, None, None)
    assert fetched_offsets(manager, tp1, tp2, tp3) == {tp1: INVALID_OFFSET, tp2: INVALID_OFFSET, tp3: INVALID_OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 5
    assert group.is_(Dead)
    # The tombstones of steps 2, 3 and 5; step 5 adds the group's own (generation 1).
    assert [_tombstone_keys(records) for records, _, _ in partition.appended] == [
        [schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP_ID, tp1))],
        [schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP_ID, tp2))],
        [schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP_ID, tp3)), schemas.GroupMetadataKey(2, GROUP_ID)],
    ]


def test_offset_expiration_of_simple_consumer():
    """Mirrors GroupMetadataManagerTest#testOffsetExpirationOfSimpleConsumer: without a protocol type an offset
    expires offsets.retention.minutes after its commit, and the group with it."""
    manager, replica_manager, time = new_manager()
    group = _owned_empty_group(manager, time)
    tp1_offset = OffsetAndMetadata(OFFSET, None, "", time.milliseconds())
    mock_get_partition(replica_manager)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "memberId", _offset_topic_partition(manager, group), {FOO0: tp1_offset}, answers)
    assert group.has_offsets()
    assert answers.values == [{FOO0: Errors.NONE}]
    # One millisecond before the retention since the commit: kept.
    expiry_timestamp = tp1_offset.commit_timestamp + DEFAULT_OFFSET_RETENTION_MS
    time.advance(expiry_timestamp - time.milliseconds() - 1)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group
    assert group.offset(FOO0) == tp1_offset
    assert fetched_offsets(manager, FOO0) == {FOO0: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 1
    # Past it: gone, with the group.
    time.advance(2)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is None
    assert group.offset(FOO0) is None
    assert fetched_offsets(manager, FOO0) == {FOO0: INVALID_OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 2
    assert group.is_(Dead)


def test_offset_expiration_of_active_group_semantics():
    """Mirrors GroupMetadataManagerTest#testOffsetExpirationOfActiveGroupSemantics: a Stable consumer group
    keeps the offsets of topics it subscribes to however old; once it stops subscribing to a topic,
    that topic's old offsets expire."""
    manager, replica_manager, time = new_manager()
    t1p0, t1p1, t2p0, t2p1 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0), TopicPartition("bar", 1)
    group = _owned_empty_group(manager, time)
    member = consumer_member("memberId", ["foo", "bar"], protocol_type="consumer")
    group.add(member, lambda result: None)
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    group.transition_to(Stable)
    committed = OffsetAndMetadata(OFFSET, None, "", time.milliseconds())
    partition = mock_get_partition(replica_manager)
    expect_append_message(replica_manager, Errors.NONE)
    answers = Answers()
    manager.store_offsets(group, "memberId", _offset_topic_partition(manager, group),
                          {t1p0: committed, t1p1: committed, t2p0: committed, t2p1: committed}, answers)
    assert group.has_offsets()
    assert answers.values[0][t1p0] is Errors.NONE
    # Past the retention, but every topic is subscribed to: nothing expires.
    time.advance(DEFAULT_OFFSET_RETENTION_MS + 2)
    manager.cleanup_expired_group_metadata()
    assert manager.get_group(GROUP_ID) is group and group.is_(Stable)
    assert [group.offset(tp) for tp in (t1p0, t1p1, t2p0, t2p1)] == [committed] * 4
    assert fetched_offsets(manager, t1p0, t1p1, t2p0, t2p1) == {t1p0: OFFSET, t1p1: OFFSET, t2p0: OFFSET, t2p1: OFFSET}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 1
    # The member now subscribes to "foo" only: "bar"'s offsets expire.
    group.transition_to(PreparingRebalance)
    group.update_member(member, [("protocol", ConsumerProtocol.serialize_subscription(Subscription(("foo",))))],
                        member.rebalance_timeout_ms, member.session_timeout_ms, None)
    group.init_next_generation()
    group.transition_to(Stable)
    manager.cleanup_expired_group_metadata()
    assert len(partition.appended) == 1
    assert sorted(k.key.topic_partition.partition for k in _tombstone_keys(partition.appended[0][0])) == [0, 1]
    assert {k.key.topic_partition.topic for k in _tombstone_keys(partition.appended[0][0])} == {"bar"}
    assert replica_manager.online_partition_calls[GROUP_TOPIC_PARTITION] == 2
    assert manager.get_group(GROUP_ID) is group and group.is_(Stable)
    assert [group.offset(tp) for tp in (t1p0, t1p1, t2p0, t2p1)] == [committed, committed, None, None]
    assert fetched_offsets(manager, t1p0, t1p1, t2p0, t2p1) == {
        t1p0: OFFSET, t1p1: OFFSET, t2p0: INVALID_OFFSET, t2p1: INVALID_OFFSET}


# ------------------------------------------------------------------------------------------ loading: versions and keys

async def test_load_offset_from_old_commit():
    """Mirrors GroupMetadataManagerTest#testLoadOffsetFromOldCommit: IBP 1.1 records (offset value v1 with an
    expire timestamp, group value v1) load, and the offsets keep their expire timestamps."""
    manager, replica_manager, time = new_manager()
    metadata_version = MetadataVersion.parse("1.1-IV0")
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS, metadata_version=metadata_version,
                                                               retention_time_ms=100)
                           + [build_stable_group_record_with_member(time, 935, "consumer", "range", "98098230493",
                                                                    metadata_version=metadata_version)])
    expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state, group.leader_or_null(), group.generation_id) == (
        GROUP_ID, Stable, "98098230493", 935)
    assert (group.protocol_type, group.protocol_name, group.all_members()) == ("consumer", "range", {"98098230493"})
    assert offsets_of(group) == COMMITTED_OFFSETS
    assert {o.expire_timestamp for o in group.all_offsets().values()} == {time.milliseconds() + 100}
    assert group.current_state_timestamp is None


async def test_load_offset_with_explicit_retention():
    """Mirrors GroupMetadataManagerTest#testLoadOffsetWithExplicitRetention: commits with an explicit retention
    are written as value version 1 whatever the IBP, and load with their expire timestamps."""
    manager, replica_manager, time = new_manager()
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS, retention_time_ms=100)
                           + [build_stable_group_record_with_member(time, 935, "consumer", "range", "98098230493")])
    assert {r.value[:2] for r in records.records() if isinstance(schemas.read_message_key(r.key), schemas.OffsetKey)} == {b"\x00\x01"}
    expect_group_metadata_load(replica_manager, 15, records)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert (group.current_state, group.leader_or_null(), group.generation_id) == (Stable, "98098230493", 935)
    assert (group.protocol_type, group.protocol_name, group.all_members()) == ("consumer", "range", {"98098230493"})
    assert offsets_of(group) == COMMITTED_OFFSETS
    assert {o.expire_timestamp for o in group.all_offsets().values()} == {time.milliseconds() + 100}


async def test_load_offsets_with_empty_control_batch():
    """Mirrors GroupMetadataManagerTest#testLoadOffsetsWithEmptyControlBatch: an empty transactional control
    batch before the records does not stop the load."""
    manager, replica_manager, time = new_manager()
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS)
                           + [build_empty_group_record(time, 15, PROTOCOL_TYPE)])
    empty_control = RecordBatch.build([], base_offset=15, is_transactional=True, is_control=True, producer_id=1,
                                      producer_epoch=0)
    assert empty_control.is_control_batch and list(empty_control) == []
    log = FakeLog(15, [MemoryRecords.of([empty_control, *records.batches])], log_end_offset=18)
    replica_manager.logs[GROUP_TOPIC_PARTITION] = log
    replica_manager.partitions[GROUP_TOPIC_PARTITION] = FakePartition(replica_manager, GROUP_TOPIC_PARTITION)
    await load_groups_and_offsets(manager, 2)
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state, group.generation_id, group.protocol_type) == (GROUP_ID, Empty, 15, PROTOCOL_TYPE)
    assert group.leader_or_null() is None and group.protocol_name is None
    assert offsets_of(group) == COMMITTED_OFFSETS


def test_read_message_key_can_read_unknown_message():
    """Mirrors GroupMetadataManagerTest#testReadMessageKeyCanReadUnknownMessage: version Short.MaxValue."""
    unknown = schemas.to_version_prefixed_bytes(32767, schemas.GroupMetadataKeyData(""))
    assert schemas.read_message_key(unknown) == schemas.UnknownKey(32767)


async def test_load_groups_and_offsets_will_ignore_unknown_message():
    """Mirrors GroupMetadataManagerTest#testLoadGroupsAndOffsetsWillIgnoreUnknownMessage: records with key
    versions 32767 and 3 (one past GroupMetadataKey's highest) are skipped."""
    manager, replica_manager, time = new_manager()
    unknown1 = schemas.to_version_prefixed_bytes(32767, schemas.GroupMetadataKeyData(""))
    unknown2 = schemas.to_version_prefixed_bytes(schemas.GROUP_METADATA_KEY_VERSION + 1, schemas.GroupMetadataKeyData(""))
    records = with_records(15, create_committed_offset_records(time, COMMITTED_OFFSETS)
                           + [SimpleRecord(unknown1, unknown1), SimpleRecord(unknown2, unknown2)]
                           + [build_stable_group_record_with_member(time, 935, "consumer", "range", "98098230493")])
    expect_group_metadata_load(replica_manager, 15, records)
    with structlog.testing.capture_logs() as logs:
        await load_groups_and_offsets(manager, 1)
    assert [e["version"] for e in logs if e["event"] == "offsets_partition_unknown_key"] == [32767, 3]
    group = manager.get_group(GROUP_ID)
    assert (group.group_id, group.current_state, group.leader_or_null(), group.generation_id) == (
        GROUP_ID, Stable, "98098230493", 935)
    assert (group.protocol_type, group.protocol_name, group.all_members()) == ("consumer", "range", {"98098230493"})
    assert offsets_of(group) == COMMITTED_OFFSETS
    assert all(o.expire_timestamp is None for o in group.all_offsets().values())


# ------------------------------------------------------------------------------------------ record schema versions

def test_serde_offset_commit_value():
    """Mirrors GroupMetadataManagerTest#testSerdeOffsetCommitValue: value version 1 before IBP 2.1-IV0, 2 at
    2.1-IV0, 3 after; the leader epoch survives only from version 3."""
    time = MockTime()
    committed = OffsetAndMetadata(537, 15, "metadata", time.milliseconds(), None)
    for metadata_version in ALL_METADATA_VERSIONS:
        if not metadata_version.is_at_least("2.1"):
            expected_version = 1
        elif metadata_version.text == "2.1-IV0":
            expected_version = 2
        else:
            expected_version = 3
        data = schemas.offset_commit_value(committed, metadata_version)
        assert int.from_bytes(data[:2], "big") == expected_version, metadata_version.text
        read = schemas.read_offset_message_value(data)
        assert (read.offset, read.metadata, read.commit_timestamp) == (537, "metadata", committed.commit_timestamp)
        assert read.leader_epoch == (15 if expected_version >= 3 else None)


def test_serde_offset_commit_value_with_expire_timestamp():
    """Mirrors GroupMetadataManagerTest#testSerdeOffsetCommitValueWithExpireTimestamp: always value version 1."""
    time = MockTime()
    committed = OffsetAndMetadata(537, None, "metadata", time.milliseconds(), time.milliseconds() + 1000)
    for metadata_version in ALL_METADATA_VERSIONS:
        data = schemas.offset_commit_value(committed, metadata_version)
        assert int.from_bytes(data[:2], "big") == 1, metadata_version.text
        assert schemas.read_offset_message_value(data) == committed


def test_serde_offset_commit_value_with_none_expire_timestamp():
    """Mirrors GroupMetadataManagerTest#testSerdeOffsetCommitValueWithNoneExpireTimestamp."""
    time = MockTime()
    committed = OffsetAndMetadata(537, None, "metadata", time.milliseconds(), None)
    for metadata_version in ALL_METADATA_VERSIONS:
        data = schemas.offset_commit_value(committed, metadata_version)
        version = int.from_bytes(data[:2], "big")
        if not metadata_version.is_at_least("2.1"):
            assert version == 1, metadata_version.text
        elif metadata_version.text == "2.1-IV0":
            assert version == 2
        else:
            assert version == 3, metadata_version.text
        assert schemas.read_offset_message_value(data) == committed


def test_serialize_group_metadata_value_to_highest_non_flexible_version():
    """Mirrors GroupMetadataManagerTest#testSerializeGroupMetadataValueToHighestNonFlexibleVersion."""
    time = MockTime()
    assignment = ConsumerProtocol.serialize_assignment(Assignment((TopicPartition("topic", 0),)))
    record = build_stable_group_record_with_member(time, 935, "consumer", "range", "98098230493", assignment)
    assert int.from_bytes(record.value[:2], "big") == 3


def test_serialize_offset_commit_value_to_highest_non_flexible_version():
    """Mirrors GroupMetadataManagerTest#testSerializeOffsetCommitValueToHighestNonFlexibleVersion."""
    records = create_committed_offset_records(MockTime(), {FOO0: 23, FOO1: 455})
    assert [int.from_bytes(r.value[:2], "big") for r in records] == [3, 3]


def test_deserialize_highest_supported_group_metadata_value_version():
    """Mirrors GroupMetadataManagerTest#testDeserializeHighestSupportedGroupMetadataValueVersion (value version 4)."""
    member = schemas.MemberMetadataValue("member", "client", "host", 0, b"", b"", 0)
    value = schemas.GroupMetadataValue(protocol_type="consumer", generation=935, protocol="range", leader="leader",
                                       current_state_timestamp=-1, members=(member,))
    group = schemas.read_group_message_value("groupId", schemas.to_version_prefixed_bytes(4, value), MockTime())
    assert (group.generation_id, group.protocol_type, group.protocol_name, group.leader_or_null()) == (
        935, "consumer", "range", "leader")
    [read] = group.all_member_metadata()
    assert (read.member_id, read.client_id, read.client_host) == ("member", "client", "host")


def test_deserialize_highest_supported_offset_commit_value_version():
    """Mirrors GroupMetadataManagerTest#testDeserializeHighestSupportedOffsetCommitValueVersion (value version 4)."""
    value = schemas.OffsetCommitValue(offset=1000, leader_epoch=1, metadata="metadata", commit_timestamp=1500)
    read = schemas.read_offset_message_value(schemas.to_version_prefixed_bytes(4, value))
    assert (read.offset, read.metadata, read.commit_timestamp, read.leader_epoch) == (1000, "metadata", 1500, 1)


def _tagged_fields() -> bytes:
    """Two unknown tagged fields, as Kafka's test adds them: tag 0 a STRING "foo", tag 1 an INT32 4000."""
    foo = (3).to_bytes(2, "big") + b"foo"
    return bytes([2, 0, len(foo)]) + foo + bytes([1, 4]) + (4000).to_bytes(4, "big")


def _compact_string(s: str) -> bytes:
    data = s.encode()
    return bytes([len(data) + 1]) + data


def test_deserialize_future_offset_commit_value():
    """Mirrors GroupMetadataManagerTest#testDeserializeFutureOffsetCommitValue: version 4 with unknown tagged
    fields reads, the fields ignored."""
    data = ((4).to_bytes(2, "big") + (1000).to_bytes(8, "big") + (100).to_bytes(4, "big") + _compact_string("metadata")
            + (2000).to_bytes(8, "big") + _tagged_fields())
    read = schemas.read_offset_message_value(data)
    assert (read.offset, read.leader_epoch, read.metadata, read.commit_timestamp) == (1000, 100, "metadata", 2000)


def test_deserialize_future_group_metadata_value():
    """Mirrors GroupMetadataManagerTest#testDeserializeFutureGroupMetadataValue: version 4 with unknown tagged
    fields in the group and in its member reads, the fields ignored."""
    member = (_compact_string("member_id") + _compact_string("group_instance_id") + _compact_string("client_id")
              + _compact_string("client_host") + (1).to_bytes(4, "big") + (2).to_bytes(4, "big")
              + bytes([1]) + bytes([1]) + _tagged_fields())        # empty compact subscription and assignment
    data = ((4).to_bytes(2, "big") + _compact_string("consumer") + (10).to_bytes(4, "big") + _compact_string("range")
            + _compact_string("leader") + (1000).to_bytes(8, "big") + bytes([2]) + member + _tagged_fields())
    group = schemas.read_group_message_value("group", data, MockTime())
    assert (group.protocol_type, group.leader_or_null()) == ("consumer", "leader")
    assert "member_id" in group.all_members()
    assert group.get("member_id").group_instance_id == "group_instance_id"
    assert (group.generation_id, group.protocol_name, group.current_state_timestamp) == (10, "range", 1000)


# ------------------------------------------------------------------------------------------ the expiration task

async def test_startup_schedules_offset_expiration_on_the_managers_thread():
    """GroupMetadataManager#startup(_, enableMetadataExpiration = true): "delete-expired-group-metadata" runs
    at once and then every offsets.retention.check.interval.ms, as a job of the manager's scheduler."""
    time = MockTime()
    replica_manager = FakeReplicaManager()
    scheduler = KafkaScheduler(time)
    config = replace(OFFSET_CONFIG, offsets_retention_check_interval_ms=1)
    manager = GroupMetadataManager(0, LATEST_TESTING, config, replica_manager, scheduler, time)
    manager.add_owned_partition(GROUP_PARTITION_ID)
    group = GroupMetadata(GROUP_ID, Empty, time)
    manager.add_group(group)
    group.initialize_offsets({FOO0: CommitRecordMetadataAndOffset(0, OffsetAndMetadata(OFFSET, None, "", time.milliseconds()))})
    replica_manager.logs[GROUP_TOPIC_PARTITION] = FakeLog(0, [])
    partition = mock_get_partition(replica_manager)
    async with anyio.create_task_group() as tg:
        scheduler.startup(tg)
        manager.startup(lambda: NUM_OFFSETS_PARTITIONS, True)
        assert scheduler.scheduled == ["group-metadata-manager-delete-expired-group-metadata"]
        while not replica_manager.online_partition_calls:
            await anyio.sleep(0.001)
        assert manager.get_group(GROUP_ID) is group          # the first runs: nothing is old enough
        time.advance(DEFAULT_OFFSET_RETENTION_MS)
        with anyio.fail_after(5):
            while manager.get_group(GROUP_ID) is not None:
                await anyio.sleep(0.001)
        tg.cancel_scope.cancel()
    assert group.is_(Dead) and group.offset(FOO0) is None
    assert [_tombstone_keys(r) for r, _, _ in partition.appended] == [
        [schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP_ID, FOO0))]]


def test_brokers_schedule_offset_expiration_unless_turned_off():
    """Brokers schedule offset expiration as Kafka's GroupCoordinator#startup always does, every
    offsets.retention.check.interval.ms; kafka_ref.offsets.expiration.enable (not a Kafka key, set
    off by the simulator) leaves it out."""
    from helpers_replica import make_broker
    from kafka_ref.sim.scenarios import BASE_BROKER_CONFIG

    off = make_broker(0, {"offsets.topic.num.partitions": NUM_OFFSETS_PARTITIONS,
                          "kafka_ref.offsets.expiration.enable": False})
    assert "group-metadata-manager-delete-expired-group-metadata" not in off.scheduler.scheduled
    assert BASE_BROKER_CONFIG["kafka_ref.offsets.expiration.enable"] is False
    on = make_broker(0, {"offsets.topic.num.partitions": NUM_OFFSETS_PARTITIONS,
                         "offsets.retention.check.interval.ms": 1234})
    assert on.scheduler.scheduled.count("group-metadata-manager-delete-expired-group-metadata") == 1
    assert on.group_coordinator.group_manager.config.offsets_retention_check_interval_ms == 1234
