"""GroupMetadataManager: loading __consumer_offsets partitions, unloading them, and writing to them.

Mirrors kafka.coordinator.group.GroupMetadataManagerTest (Kafka 3.x): testLoadOffsetsWithoutGroup,
testLoadOffsetsWithTombstones, testLoadGroupWithTombstone, testLoadEmptyGroupWithOffsets,
testLoadGroupAndOffsetsWithCorruptedLog-style leadership loss, testLoadOffsetsAndGroupIgnored
(coordinator epochs), testUnloadOffsetsAndGroup, testStoreGroup*, testCommitOffset*; seed 000
§``__consumer_offset`` leader 切换处理 (loadGroupsForPartition, removeGroupsForPartition,
onGroupUnloaded).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import structlog

from helpers_replica import lai_request, lai_state, make_broker, metadata_for
from kafka_ref.common.config import LogConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.coordinator.group import schemas
from kafka_ref.coordinator.group.group_coordinator import JoinGroupResult, SyncGroupResult
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    IllegalStateException,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import GroupMetadataManager, OffsetConfig, partition_for
from kafka_ref.coordinator.group.member_metadata import MemberMetadata

pytestmark = pytest.mark.anyio

OFFSETS = "__consumer_offsets"
OFFSETS_ID = Uuid(0x0FF5E7, 0x0FF5E7)
N = 3
GROUP = "g"                         # java hashCode 103 -> partition 1 of 3
P = partition_for(GROUP, N)
OTP = TopicPartition(OFFSETS, P)
FOO0, FOO1, FOO2 = (TopicPartition("foo", i) for i in range(3))
TS = 1_704_067_200_000
_IBP = MetadataVersion.parse("3.8")


def test_group_under_test_lives_in_partition_1():
    assert P == 1


# ------------------------------------------------------------------------------------------ helpers

def offsets_broker(props: dict[str, Any] | None = None) -> Any:
    broker = make_broker(0, {"offsets.topic.num.partitions": N, "group.initial.rebalance.delay.ms": 0,
                             "group.min.session.timeout.ms": 1000, **(props or {})}, time=Time())
    metadata_for(broker, brokers=(0, 1, 2))
    return broker


def lead(broker: Any, partition: int = P, epoch: int = 0, isr=(0,), replicas=(0,)) -> None:
    """LeaderAndIsr making broker 0 the leader, with KafkaApis' onLeadershipChange callback."""
    request = lai_request([lai_state(0, epoch, isr, replicas, topic=OFFSETS, partition=partition)],
                          topic_ids={OFFSETS: OFFSETS_ID})
    broker.replica_manager.become_leader_or_follower(0, request, broker.on_leadership_change)


def follow(broker: Any, partition: int = P, epoch: int = 1, leader: int = 1, replicas=(0, 1)) -> None:
    request = lai_request([lai_state(leader, epoch, replicas, replicas, topic=OFFSETS, partition=partition, is_new=False)],
                          topic_ids={OFFSETS: OFFSETS_ID})
    broker.replica_manager.become_leader_or_follower(0, request, broker.on_leadership_change)


def append(broker: Any, *records: tuple[bytes, bytes | None]) -> None:
    """One batch with the given (key, value) records on the offsets partition (as the leader)."""
    partition = broker.replica_manager.online_partition(OTP)
    partition.append_records_to_leader(
        MemoryRecords.with_records([SimpleRecord(k, v, timestamp=TS) for k, v in records]), "coordinator", 1)


def commit(group: str, tp: TopicPartition, offset: int) -> tuple[bytes, bytes]:
    value = OffsetAndMetadata(offset=offset, leader_epoch=None, metadata="", commit_timestamp=TS)
    return schemas.offset_commit_key(group, tp), schemas.offset_commit_value(value, _IBP)


def offset_tombstone(group: str, tp: TopicPartition) -> tuple[bytes, None]:
    return schemas.offset_commit_key(group, tp), None


def group_record(group: str, generation: int, members: tuple[str, ...] = ("m1",)) -> tuple[bytes, bytes]:
    value = schemas.GroupMetadataValue(
        protocol_type="consumer", generation=generation, protocol="range" if members else None,
        leader=members[0] if members else None, current_state_timestamp=TS,
        members=tuple(schemas.MemberMetadataValue(m, "client", "/host", 10000, b"sub", f"assignment-{m}".encode(), 20000)
                      for m in members))
    return schemas.group_metadata_key(group), schemas.to_version_prefixed_bytes(3, value)


def group_tombstone(group: str) -> tuple[bytes, None]:
    return schemas.group_metadata_key(group), None


async def load(manager: GroupMetadataManager, epoch: int = 0) -> list[GroupMetadata]:
    loaded: list[GroupMetadata] = []
    await manager.load_groups_and_offsets(OTP, epoch, loaded.append)
    return loaded


def offsets_of(group: GroupMetadata) -> dict[TopicPartition, int]:
    return {tp: o.offset for tp, o in group.all_offsets().items()}


class FlippingReplicaManager:
    """A stand-in ReplicaManager (as Kafka's test mocks getLogEndOffset): leader for the first ``leader_checks`` looks."""

    def __init__(self, real: Any, leader_checks: int) -> None:
        self.real = real
        self.leader_checks = leader_checks
        self.checks = 0

    def get_log(self, tp: TopicPartition) -> Any:
        return self.real.get_log(tp)

    def online_partition(self, tp: TopicPartition) -> Any:
        outer = self
        partition = self.real.online_partition(tp)

        class _Partition:
            def leader_log_if_local(self) -> Any:
                outer.checks += 1
                return partition.leader_log_if_local() if outer.checks <= outer.leader_checks else None

        return _Partition()


# ------------------------------------------------------------------------------------------ loading rules

async def test_load_offsets_without_group_makes_an_empty_group():
    """GroupMetadataManagerTest#testLoadOffsetsWithoutGroup."""
    broker = offsets_broker()
    lead(broker)
    append(broker, commit(GROUP, FOO0, 23), commit(GROUP, FOO1, 455))
    manager = broker.group_coordinator.group_manager
    loaded = await load(manager)
    group = manager.get_group(GROUP)
    assert loaded == [group]
    assert (group.current_state, group.generation_id, group.protocol_type, group.size) == (Empty, 0, None, 0)
    assert offsets_of(group) == {FOO0: 23, FOO1: 455}
    assert group.offset_with_record_metadata(FOO1).appended_batch_offset == 0


async def test_last_write_wins_per_key():
    """Replaying in log order: each key's last record is what the cache holds."""
    broker = offsets_broker()
    lead(broker)
    append(broker, commit(GROUP, FOO0, 10), group_record(GROUP, 1, ("m1",)))
    append(broker, commit(GROUP, FOO0, 20), commit(GROUP, FOO1, 5))
    append(broker, group_record(GROUP, 2, ("m1", "m2")), commit(GROUP, FOO0, 30))
    manager = broker.group_coordinator.group_manager
    await load(manager)
    group = manager.get_group(GROUP)
    assert offsets_of(group) == {FOO0: 30, FOO1: 5}
    assert (group.current_state, group.generation_id, group.leader_id, sorted(group.all_members())) == (
        Stable, 2, "m1", ["m1", "m2"])
    assert group.get("m2").assignment == b"assignment-m2"
    # The commit of FOO0 that won is in the third batch (offsets 4-5): its base offset is kept.
    assert group.offset_with_record_metadata(FOO0).appended_batch_offset == 4


async def test_offset_tombstones_remove_offsets():
    """GroupMetadataManagerTest#testLoadOffsetsWithTombstones."""
    broker = offsets_broker()
    lead(broker)
    append(broker, commit(GROUP, FOO0, 23), commit(GROUP, FOO1, 455), commit(GROUP, FOO2, 7))
    append(broker, offset_tombstone(GROUP, FOO1))
    manager = broker.group_coordinator.group_manager
    await load(manager)
    assert offsets_of(manager.get_group(GROUP)) == {FOO0: 23, FOO2: 7}


async def test_group_tombstone_removes_the_group():
    """GroupMetadataManagerTest#testLoadGroupWithTombstone."""
    broker = offsets_broker()
    lead(broker)
    append(broker, group_record(GROUP, 1))
    append(broker, group_tombstone(GROUP))
    manager = broker.group_coordinator.group_manager
    loaded = await load(manager)
    assert loaded == [] and manager.get_group(GROUP) is None
    assert manager.is_partition_owned(P)


async def test_group_tombstone_with_offsets_leaves_an_offsets_only_group():
    """A removed group that still has offsets comes back Empty with them (testLoadEmptyGroupWithOffsets)."""
    broker = offsets_broker()
    lead(broker)
    append(broker, group_record(GROUP, 4), commit(GROUP, FOO0, 3))
    append(broker, group_tombstone(GROUP))
    manager = broker.group_coordinator.group_manager
    await load(manager)
    group = manager.get_group(GROUP)
    assert (group.current_state, group.generation_id, offsets_of(group)) == (Empty, 0, {FOO0: 3})


async def test_load_group_with_members_and_offsets_renews_sessions():
    """GroupMetadataManagerTest#testLoadGroupAndOffsets + GroupCoordinator#onGroupLoaded (a heartbeat expectation per member)."""
    broker = offsets_broker()
    lead(broker)
    append(broker, group_record(GROUP, 3, ("m1", "m2")), commit(GROUP, FOO0, 8), commit("other", FOO0, 1))
    coordinator = broker.group_coordinator
    await coordinator.group_manager.load_groups_and_offsets(OTP, 0, coordinator.on_group_loaded)
    group = coordinator.group_manager.get_group(GROUP)
    assert (group.current_state, group.generation_id, group.protocol_name, offsets_of(group)) == (Stable, 3, "range", {FOO0: 8})
    assert group.get("m1").supported_protocols == [("range", b"sub")]
    assert coordinator.heartbeat_purgatory.watched() == 2
    # "other" hashes to another partition, but it was in this partition's log: it is loaded too.
    assert offsets_of(coordinator.group_manager.get_group("other")) == {FOO0: 1}


async def test_removed_group_still_cached_is_an_error():
    """Seed 000: a group the log says was removed must not still be in the cache."""
    broker = offsets_broker()
    lead(broker)
    append(broker, group_record(GROUP, 1))
    append(broker, group_tombstone(GROUP))
    manager = broker.group_coordinator.group_manager
    manager.add_group(GroupMetadata(GROUP, Empty, broker.time))
    with pytest.raises(IllegalStateException, match="Unexpected unload of active group g while loading partition __consumer_offsets-1"):
        await manager.do_load_groups_and_offsets(OTP, lambda g: None)
    # Through the scheduled entry point the error is logged and the partition still ends up owned.
    with structlog.testing.capture_logs() as logs:
        await load(manager, epoch=1)
    failed = [e for e in logs if e["event"] == "offsets_partition_load_failed"]
    assert len(failed) == 1 and "Unexpected unload of active group g" in failed[0]["error"]
    assert manager.is_partition_owned(P) and not manager.is_partition_loading(P)


def _log_with_uncommitted_tail(broker: Any) -> None:
    """Offsets 0 (FOO0=1), 1-2 (one batch: FOO0=2, FOO1=9), 3 (the group record); HW 2."""
    lead(broker, isr=(0, 1), replicas=(0, 1))
    append(broker, commit(GROUP, FOO0, 1))                              # offset 0
    append(broker, commit(GROUP, FOO0, 2), commit(GROUP, FOO1, 9))     # offsets 1, 2 (one batch)
    append(broker, group_record(GROUP, 1))                              # offset 3
    broker.replica_manager.get_log(OTP).update_high_watermark(2)        # the follower has offsets 0 and 1


@pytest.mark.parametrize("buffer, loaded", [
    # One read of 5 MiB covers the whole log: everything is replayed, past the HW too.
    (5242880, (Stable, 1, {FOO0: 2, FOO1: 9})),
    # One batch per read: batch 0 (below HW 2), batch 1-2 (1 < 2), then 3 >= 2 stops; the group record is not read.
    (1, (Empty, 0, {FOO0: 2, FOO1: 9})),
])
async def test_kafka_0_10_bound_reads_chunks_while_below_the_high_watermark(buffer, loaded):
    """Mirrors GroupMetadataManager#loadGroupsAndOffsets as Kafka 0.10.2 had it (getHighWatermark): another
    chunk is read while the current offset is below the HW, and every record of a chunk is replayed."""
    broker = offsets_broker({"inter.broker.protocol.version": "0.10.2", "kafka_ref.broker.version": "0.10.2",
                             "offsets.load.buffer.size": buffer})
    _log_with_uncommitted_tail(broker)
    manager = broker.group_coordinator.group_manager
    assert manager.load_bound == "high_watermark"
    await load(manager)
    group = manager.get_group(GROUP)
    assert (group.current_state, group.generation_id, offsets_of(group)) == loaded


async def test_kafka_0_10_bound_loads_nothing_while_the_high_watermark_is_at_the_log_start():
    """Kafka 0.10.2: a just-elected leader whose HW has not moved past its log start reads no chunk at all,
    so the acknowledged commits in its log are not in the cache."""
    broker = offsets_broker({"inter.broker.protocol.version": "0.10.2", "kafka_ref.broker.version": "0.10.2"})
    _log_with_uncommitted_tail(broker)
    broker.replica_manager.get_log(OTP).update_high_watermark(0)
    manager = broker.group_coordinator.group_manager
    await load(manager)
    assert manager.get_group(GROUP) is None


@pytest.mark.parametrize("version", ["0.11.0", "3.8"])
async def test_kafka_0_11_bound_loads_up_to_the_log_end(version):
    """Mirrors GroupMetadataManagerTest#testLoadOffsetsAndGroup's bound (Kafka 0.11.0.0+, KAFKA-5059:
    getLogEndOffset behind a helper still called highWaterMark): the leader replays its whole log, chunk
    by chunk, whatever its HW; an offset's record metadata is the offset of the first record of its batch."""
    broker = offsets_broker({"inter.broker.protocol.version": version, "kafka_ref.broker.version": version,
                             "offsets.load.buffer.size": 1})
    _log_with_uncommitted_tail(broker)
    manager = broker.group_coordinator.group_manager
    assert manager.load_bound == "log_end_offset"
    await load(manager)
    group = manager.get_group(GROUP)
    assert (group.current_state, group.generation_id, offsets_of(group)) == (Stable, 1, {FOO0: 2, FOO1: 9})
    assert (group.offsets[FOO0].appended_batch_offset, group.offsets[FOO1].appended_batch_offset) == (1, 1)


async def test_load_stops_when_leadership_moves():
    """The bound is read before every chunk; once this broker is no longer leader (-1) the load ends.

    offsets.load.buffer.size=1 makes each read return exactly one batch (minOneMessage).
    """
    broker = offsets_broker({"offsets.load.buffer.size": 1})
    lead(broker)
    for offset in range(5):
        append(broker, commit(GROUP, FOO0, offset * 10))
    real = broker.group_coordinator.group_manager
    flipping = FlippingReplicaManager(broker.replica_manager, leader_checks=3)
    manager = GroupMetadataManager(0, real.metadata_version, real.config, flipping, broker.scheduler, broker.time)
    manager.startup(lambda: N)
    with structlog.testing.capture_logs() as logs:
        await load(manager)
    # Bound checks: before chunk 1, before chunk 2, before chunk 3 (leader), then -1: three batches replayed.
    assert offsets_of(manager.get_group(GROUP)) == {FOO0: 20}
    assert flipping.checks == 4
    loaded = [e for e in logs if e["event"] == "offsets_partition_loaded"]
    assert (loaded[0]["groups"], loaded[0]["offsets"]) == (1, 1)
    assert [e["event"] for e in logs if e["event"].startswith("offsets_partition_")] == [
        "offsets_partition_loading", "offsets_partition_loaded", "offsets_partition_owned"]


async def test_second_load_while_one_runs_is_skipped():
    """A load request for a partition already loading does nothing (seed 000's loadingPartitions check)."""
    broker = offsets_broker({"offsets.load.buffer.size": 1})
    lead(broker)
    for offset in range(5):
        append(broker, commit(GROUP, FOO0, offset))
    manager = broker.group_coordinator.group_manager
    first: list[GroupMetadata] = []
    second: list[GroupMetadata] = []
    with structlog.testing.capture_logs() as logs:
        async with anyio.create_task_group() as tg:
            tg.start_soon(manager.load_groups_and_offsets, OTP, 0, first.append)
            while not manager.is_partition_loading(P):
                await anyio.sleep(0)
            # COORDINATOR_LOAD_IN_PROGRESS territory: the group's partition is loading.
            assert manager.is_group_loading(GROUP) and not manager.is_group_local(GROUP)
            await manager.load_groups_and_offsets(OTP, 0, second.append)
    assert len(first) == 1 and second == []
    skipped = [e for e in logs if e["event"] == "offsets_partition_load_skipped"]
    assert [e["reason"] for e in skipped] == ["already loading or loaded"]
    assert [e["event"] for e in logs if e["event"] in ("offsets_partition_loading", "offsets_partition_owned")] == [
        "offsets_partition_loading", "offsets_partition_owned"]


async def test_scheduled_loads_run_in_order_and_a_loaded_partition_is_not_reloaded():
    """onElection → scheduleLoadGroupAndOffsets on the manager's single scheduler thread (Kafka 3.x)."""
    broker = offsets_broker()
    append_later = [commit(GROUP, FOO0, 5)]
    async with anyio.create_task_group() as tg:
        broker.scheduler.startup(tg)
        with structlog.testing.capture_logs() as logs:
            lead(broker)                                    # on_leadership_change → on_election(P, 0)
            append(broker, *append_later)
            broker.group_coordinator.on_election(P, 0)      # a duplicate election for the same epoch
            manager = broker.group_coordinator.group_manager
            while not manager.is_partition_owned(P) or manager.has_pending_jobs():
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    events = [(e["event"], e.get("reason")) for e in logs
              if e.get("topic_partition") == str(OTP) and e["event"].startswith("offsets_partition_")]
    assert events == [
        ("offsets_partition_load_scheduled", None),
        ("offsets_partition_load_scheduled", None),
        ("offsets_partition_loading", None),
        ("offsets_partition_loaded", None),
        ("offsets_partition_owned", None),
        ("offsets_partition_load_skipped", "already loading or loaded"),
    ]
    assert offsets_of(manager.get_group(GROUP)) == {FOO0: 5}


async def test_coordinator_epochs_fence_stale_loads_and_unloads():
    """GroupMetadataManagerTest#testLoadOffsetsAndGroupIgnored / #testUnloadOffsetsAndGroupIgnored."""
    broker = offsets_broker()
    lead(broker)
    append(broker, commit(GROUP, FOO0, 5))
    manager = broker.group_coordinator.group_manager
    await load(manager, epoch=2)
    assert manager.epoch_for_partition_id[P] == 2
    # An unload from an older epoch is ignored; one without an epoch (topic deletion) is not.
    manager.remove_groups_and_offsets(OTP, 1, broker.group_coordinator.on_group_unloaded)
    assert manager.is_partition_owned(P) and manager.get_group(GROUP) is not None
    manager.remove_groups_and_offsets(OTP, 3, broker.group_coordinator.on_group_unloaded)
    assert not manager.is_partition_owned(P) and manager.get_group(GROUP) is None
    # A load from an epoch older than the unload is stale.
    with structlog.testing.capture_logs() as logs:
        await load(manager, epoch=2)
    assert not manager.is_partition_owned(P)
    assert [e["reason"] for e in logs if e["event"] == "offsets_partition_load_skipped"] == ["stale coordinator epoch"]


# ------------------------------------------------------------------------------------------ unloading

class Answers:
    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> None:
        self.values.append(value)


async def test_unload_answers_parked_joins_not_coordinator_and_kills_the_group():
    """Seed 000 onGroupUnloaded, PreparingRebalance: parked JoinGroups get NOT_COORDINATOR; the group is Dead."""
    broker = offsets_broker({"group.initial.rebalance.delay.ms": 3000})
    coordinator = broker.group_coordinator
    async with anyio.create_task_group() as tg:
        tg.start_soon(broker.timer.run)
        lead(broker)
        await load(coordinator.group_manager)
        a, b = Answers(), Answers()
        for answers, client in ((a, "c1"), (b, "c2")):
            coordinator.handle_join_group(GROUP, "", None, False, True, client, "/h", 10000, 6000, "consumer",
                                          [("range", b"")], answers)
        group = coordinator.group_manager.get_group(GROUP)
        assert group.current_state is PreparingRebalance and a.values == [] and b.values == []
        with structlog.testing.capture_logs() as logs:
            coordinator.group_manager.remove_groups_and_offsets(OTP, 1, coordinator.on_group_unloaded)
        tg.cancel_scope.cancel()
    for answers in (a, b):
        assert [r.error for r in answers.values] == [Errors.NOT_COORDINATOR]
        assert isinstance(answers.values[0], JoinGroupResult)
    assert group.current_state is Dead
    assert coordinator.group_manager.get_group(GROUP) is None and not coordinator.group_manager.is_partition_owned(P)
    assert [(e["from_state"], e["to_state"]) for e in logs if e["event"] == "group_state_change"] == [("PreparingRebalance", "Dead")]
    unloaded = [e for e in logs if e["event"] == "offsets_partition_unloaded"]
    assert (unloaded[0]["groups"], unloaded[0]["coordinator_epoch"]) == (1, 1)
    # The next JoinGroup is refused: this broker no longer owns the partition.
    again = Answers()
    coordinator.handle_join_group(GROUP, "", None, False, True, "c1", "/h", 10000, 6000, "consumer", [("range", b"")], again)
    assert again.values[0].error is Errors.NOT_COORDINATOR


async def test_unload_answers_parked_sync_not_coordinator():
    """Seed 000 onGroupUnloaded, CompletingRebalance: a parked SyncGroup gets NOT_COORDINATOR."""
    broker = offsets_broker()
    coordinator = broker.group_coordinator
    async with anyio.create_task_group() as tg:
        tg.start_soon(broker.timer.run)
        broker.scheduler.startup(tg)
        lead(broker)
        while not coordinator.group_manager.is_partition_owned(P):
            await anyio.sleep(0.01)
        a, b = Answers(), Answers()
        for answers, client in ((a, "c1"), (b, "c2")):
            coordinator.handle_join_group(GROUP, "", None, False, True, client, "/h", 10000, 6000, "consumer",
                                          [("range", b"")], answers)
        while not a.values or not b.values:
            await anyio.sleep(0.01)             # the initial delay (0 ms here) completes the join
        group = coordinator.group_manager.get_group(GROUP)
        assert group.current_state is CompletingRebalance
        follower = a.values[0] if a.values[0].member_id != group.leader_id else b.values[0]
        synced = Answers()
        coordinator.handle_sync_group(GROUP, follower.generation_id, follower.member_id, "consumer", "range", None, {}, synced)
        assert synced.values == []               # parked until the leader's assignment is stored
        follow(broker)                          # LeaderAndIsr: broker 1 leads now → onResignation(P, 1)
        while coordinator.group_manager.is_partition_owned(P):
            await anyio.sleep(0.01)             # the unload job runs on the scheduler
        tg.cancel_scope.cancel()
    assert [type(r) for r in synced.values] == [SyncGroupResult]
    assert synced.values[0].error is Errors.NOT_COORDINATOR
    assert group.current_state is Dead


# ------------------------------------------------------------------------------------------ writes

async def test_store_offsets_appends_and_caches_after_the_write():
    """GroupMetadataManagerTest#testCommitOffset: the record reaches the log, the cache follows the append."""
    broker = offsets_broker()
    manager = broker.group_coordinator.group_manager
    lead(broker)
    await load(manager)
    group = manager.add_group(GroupMetadata(GROUP, Empty, broker.time))
    answers = Answers()
    manager.store_offsets(group, "", OTP, {FOO0: OffsetAndMetadata(37, 4, "meta", TS)}, answers)
    assert answers.values == [{FOO0: Errors.NONE}]
    assert group.offset(FOO0) == OffsetAndMetadata(37, 4, "meta", TS)
    batch = list(broker.replica_manager.get_log(OTP).read(0, 1 << 20).records)[0]
    record = list(batch)[0]
    assert schemas.read_message_key(record.key) == schemas.OffsetKey(1, schemas.GroupTopicPartition(GROUP, FOO0))
    assert schemas.read_offset_message_value(record.value) == OffsetAndMetadata(37, 4, "meta", TS)


async def test_store_offsets_errors():
    """testCommitOffsetWhenCoordinatorHasMoved (NOT_COORDINATOR) and testOffsetMetadataTooLarge."""
    broker = offsets_broker()
    manager = broker.group_coordinator.group_manager
    group = manager.add_group(GroupMetadata(GROUP, Empty, broker.time))
    answers = Answers()
    manager.store_offsets(group, "", OTP, {FOO0: OffsetAndMetadata(1)}, answers)
    assert answers.values == [{FOO0: Errors.NOT_COORDINATOR}]      # no local log for the partition
    lead(broker)
    too_big = OffsetAndMetadata(1, None, "x" * (OffsetConfig().max_metadata_size + 1))
    manager.store_offsets(group, "", OTP, {FOO0: too_big}, answers)
    assert answers.values[-1] == {FOO0: Errors.OFFSET_METADATA_TOO_LARGE}
    manager.store_offsets(group, "", OTP, {FOO0: too_big, FOO1: OffsetAndMetadata(2)}, answers)
    assert answers.values[-1] == {FOO0: Errors.OFFSET_METADATA_TOO_LARGE, FOO1: Errors.NONE}


async def test_store_offsets_failure_is_translated_and_not_cached():
    """NOT_ENOUGH_REPLICAS from the append becomes COORDINATOR_NOT_AVAILABLE; nothing reaches the cache.

    Three replicas with only the leader in the ISR: the effective min ISR is min(2, 3) = 2, so the
    acks=all append is refused (with a single replica the cap would make it 1 and the append pass).
    """
    broker = offsets_broker()
    manager = broker.group_coordinator.group_manager
    lead(broker, isr=(0,), replicas=(0, 1, 2))
    broker.log_manager.update_topic_config(OFFSETS, LogConfig.from_broker(broker.config, {"min.insync.replicas": 2}))
    group = manager.add_group(GroupMetadata(GROUP, Empty, broker.time))
    answers = Answers()
    manager.store_offsets(group, "", OTP, {FOO0: OffsetAndMetadata(1)}, answers)
    assert answers.values == [{FOO0: Errors.COORDINATOR_NOT_AVAILABLE}]
    assert group.offset(FOO0) is None and not group.has_pending_offset_commits_for_topic_partition(FOO0)


async def test_store_group_writes_the_group_record():
    """GroupMetadataManagerTest#testStoreNonEmptyGroup / #testStoreGroupErrorMapping (NOT_COORDINATOR)."""
    broker = offsets_broker()
    manager = broker.group_coordinator.group_manager
    group = GroupMetadata(GROUP, Empty, broker.time)
    group.add(MemberMetadata("m1", None, "c1", "/h", 10000, 6000, "consumer", [("range", b"sub")]))
    group.transition_to(PreparingRebalance)
    group.init_next_generation()
    answers = Answers()
    manager.store_group(group, {"m1": b"asg"}, answers)
    assert answers.values == [Errors.NOT_COORDINATOR]
    lead(broker)
    manager.store_group(group, {"m1": b"asg"}, answers)
    assert answers.values[-1] is Errors.NONE
    record = list(list(broker.replica_manager.get_log(OTP).read(0, 1 << 20).records)[0])[0]
    loaded = schemas.read_group_message_value(GROUP, record.value, broker.time)
    assert (loaded.generation_id, loaded.protocol_name, loaded.get("m1").assignment) == (1, "range", b"asg")


async def test_get_offsets():
    """GroupMetadataManagerTest#testGetOffsets*: INVALID_OFFSET for unknown, UNSTABLE_OFFSET_COMMIT while pending."""
    broker = offsets_broker()
    manager = broker.group_coordinator.group_manager
    assert {tp: d.committed_offset for tp, d in manager.get_offsets("nope", False, [FOO0]).items()} == {FOO0: -1}
    group = manager.add_group(GroupMetadata(GROUP, Empty, broker.time))
    group.prepare_offset_commit({FOO0: OffsetAndMetadata(3)})
    result = manager.get_offsets(GROUP, True, [FOO0, FOO1])
    assert (result[FOO0].error_code, result[FOO0].committed_offset) == (Errors.UNSTABLE_OFFSET_COMMIT.code, -1)
    assert (result[FOO1].error_code, result[FOO1].committed_offset) == (0, -1)
    assert manager.get_offsets(GROUP, False, None) == {}


async def test_stop_replica_delete_resigns_the_partition():
    """Seed 002 §handleStopReplicaRequest: a deleted __consumer_offsets replica → onResignation(partition, leader epoch)."""
    from helpers_replica import stop_request
    from kafka_ref.network.network import INTER_BROKER_PRINCIPAL, Envelope, Network

    broker = offsets_broker()
    coordinator = broker.group_coordinator
    async with anyio.create_task_group() as tg:
        broker.scheduler.startup(tg)
        lead(broker)
        append(broker, commit(GROUP, FOO0, 5))
        while not coordinator.group_manager.is_partition_owned(P):
            await anyio.sleep(0.01)
        assert coordinator.group_manager.get_group(GROUP) is not None
        with structlog.testing.capture_logs() as logs:
            envelope = Envelope("controller", 0, 1, stop_request({OTP: (3, True)}), INTER_BROKER_PRINCIPAL, Network())
            broker.apis.handle(envelope)
            while coordinator.group_manager.is_partition_owned(P) or coordinator.group_manager.has_pending_jobs():
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    assert envelope.response.error_code == 0
    assert coordinator.group_manager.get_group(GROUP) is None
    resigned = [e for e in logs if e["event"] == "group_coordinator_resigned"]
    assert [(e["partition"], e["coordinator_epoch"]) for e in resigned] == [(P, 3)]
    assert coordinator.group_manager.epoch_for_partition_id[P] == 3
