"""More of kafka.cluster.PartitionTest (Kafka 3.7): reads and their epoch checks, follower appends,
make_leader/make_follower edge cases and ISR changes with AlterPartition.

Synchronous, as tests/test_partition.py: a broker wired but not running, a MockTime, and ISR
changes going to a MockAlterPartitionManager that each test answers by hand. Kafka's broker 101
and its remote replica 102 are brokers 0 and 1 here.
"""

from __future__ import annotations

import random

import pytest

from helpers_replica import (
    LAG_MS,
    TP0,
    broker_with_mock_alter,
    fetch_follower,
    lai_state,
    new_partition,
    records,
    seed_log_data,
)
from kafka_ref.common.errors import (
    Errors,
    FencedLeaderEpochException,
    NotLeaderOrFollowerException,
    UnknownLeaderEpochException,
)
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.exceptions import UnexpectedAppendOffsetException
from kafka_ref.log.fetch_data import FetchIsolation
from kafka_ref.replica.partition_state import PendingExpandIsr, PendingShrinkIsr

BROKER = 0
REMOTE = 1
LATEST = -1
EARLIEST = -2
EARLIEST_LOCAL = -4
READ_UNCOMMITTED = 0


def setup(props: dict | None = None, alive=(0, 1, 2, 3)):
    broker, alter = broker_with_mock_alter(BROKER, props, alive=alive)
    return broker, alter, new_partition(broker)


def partition_with_role(leader_epoch: int, is_leader: bool):
    """Mirrors AbstractPartitionTest#setupPartitionWithMocks: replicas and ISR {0, 1}, partition epoch 1,
    this broker the leader or (broker 1 leading) a follower."""
    broker, alter, partition = setup()
    partition.create_log_if_not_exists(False, False, {}, None)
    leader = BROKER if is_leader else REMOTE
    state = lai_state(leader, leader_epoch, [0, 1], [0, 1], partition_epoch=1, controller_epoch=0)
    if is_leader:
        assert partition.make_leader(state, {}, None) is True
    else:
        assert partition.make_follower(state, {}, None) is True
        assert partition.leader_log_if_local() is None
    assert partition.get_leader_epoch() == leader_epoch
    return broker, alter, partition


def make_leader(partition, *, leader_epoch: int, isr, replicas, partition_epoch: int, is_new: bool = True,
                controller_epoch: int = 0, topic_id: Uuid | None = None) -> bool:
    """Mirrors PartitionTest#makeLeader: make_leader, then check the committed state it leaves."""
    partition.create_log_if_not_exists(is_new, False, {}, topic_id)
    new_leader = partition.make_leader(
        lai_state(BROKER, leader_epoch, isr, replicas, partition_epoch=partition_epoch, controller_epoch=controller_epoch,
                  is_new=is_new), {}, topic_id)
    assert partition.is_leader and not partition.partition_state.is_inflight
    assert partition.topic_id == topic_id
    assert partition.get_leader_epoch() == leader_epoch
    assert partition.partition_state.isr == set(isr) and partition.maximal_isr == set(isr)
    assert partition.get_partition_epoch() == partition_epoch
    return new_leader


def random_topic_id() -> Uuid:
    """Uuid.randomUuid, from a seeded generator."""
    return Uuid.random_uuid(_RNG)


_RNG = random.Random(20261125)


def error_of(call) -> Errors:
    """Errors.NONE when ``call`` returns, else the error its exception stands for."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the test classifies it
        return Errors.for_exception(exc)
    return Errors.NONE


def assert_replica_state(partition, replica_id, *, last_caught_up_time_ms, log_start_offset, log_end_offset,
                         broker_epoch=None):
    """Mirrors PartitionTest#assertReplicaState (the broker epoch only when given)."""
    state = partition.get_replica(replica_id).state_snapshot
    assert state.last_caught_up_time_ms == last_caught_up_time_ms
    assert state.log_end_offset == log_end_offset
    assert state.log_start_offset == log_start_offset
    if broker_epoch is not None:
        assert state.broker_epoch == broker_epoch


# ------------------------------------------------------------------------------ epoch validation of reads


def test_fetch_offset_snapshot_epoch_validation_for_leader():
    """Mirrors kafka.cluster.PartitionTest#testFetchOffsetSnapshotEpochValidationForLeader."""
    _, _, partition = partition_with_role(5, is_leader=True)
    answers = [error_of(lambda e=e: partition.fetch_offset_snapshot(e, True)) for e in (4, 6, 5, -1)]
    assert answers == [Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH, Errors.NONE, Errors.NONE]


def test_offset_for_leader_epoch_validation_for_leader():
    """Mirrors kafka.cluster.PartitionTest#testOffsetForLeaderEpochValidationForLeader."""
    _, _, partition = partition_with_role(5, is_leader=True)
    codes = [partition.last_offset_for_leader_epoch(e, 0, fetch_only_from_leader=True).error_code for e in (-1, 5, 4, 6)]
    assert codes == [Errors.NONE.code, Errors.NONE.code, Errors.FENCED_LEADER_EPOCH.code, Errors.UNKNOWN_LEADER_EPOCH.code]


def test_leader_epoch_validation_on_follower():
    """Mirrors kafka.cluster.PartitionTest#testLeaderEpochValidationOnFollower.

    A consumer without client metadata may read only from the leader (fetchOnlyLeader); with it
    (KIP-392) the follower serves the read, and the epoch checks apply either way.
    """
    _, _, partition = partition_with_role(5, is_leader=False)

    def consumer_fetch(leader_epoch: int, with_client_metadata: bool):
        return partition.fetch_records(
            replica_id=-1, fetch_only_leader=not with_client_metadata, isolation=FetchIsolation.HIGH_WATERMARK,
            fetch_offset=0, current_leader_epoch=leader_epoch, last_fetched_epoch=-1, log_start_offset=-1,
            fetch_time_ms=partition.time.milliseconds(), max_bytes=0x7FFFFFFF, min_one_message=True,
            update_fetch_state=False)

    with pytest.raises(NotLeaderOrFollowerException):
        consumer_fetch(-1, False)
    with pytest.raises(NotLeaderOrFollowerException):
        consumer_fetch(5, False)
    with pytest.raises(FencedLeaderEpochException):
        consumer_fetch(4, False)
    with pytest.raises(UnknownLeaderEpochException):
        consumer_fetch(6, False)
    assert consumer_fetch(-1, True).log_end_offset == 0
    assert consumer_fetch(5, True).log_end_offset == 0
    with pytest.raises(FencedLeaderEpochException):
        consumer_fetch(4, True)
    with pytest.raises(UnknownLeaderEpochException):
        consumer_fetch(6, True)


def test_fetch_offset_for_timestamp_epoch_validation_for_leader():
    """Mirrors kafka.cluster.PartitionTest#testFetchOffsetForTimestampEpochValidationForLeader."""
    _, _, partition = partition_with_role(5, is_leader=True)
    answers = [error_of(lambda e=e: partition.fetch_offset_for_timestamp(0, None, e, True)) for e in (-1, 5, 4, 6)]
    assert answers == [Errors.NONE, Errors.NONE, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH]


def test_fetch_offset_for_timestamp_epoch_validation_for_follower():
    """Mirrors kafka.cluster.PartitionTest#testFetchOffsetForTimestampEpochValidationForFollower."""
    _, _, partition = partition_with_role(5, is_leader=False)

    def answers(only_leader: bool) -> list[Errors]:
        return [error_of(lambda e=e: partition.fetch_offset_for_timestamp(0, None, e, only_leader)) for e in (-1, 5, 4, 6)]

    assert answers(False) == [Errors.NONE, Errors.NONE, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH]
    assert answers(True) == [Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH,
                             Errors.UNKNOWN_LEADER_EPOCH]


def test_fetch_latest_offset_includes_leader_epoch():
    """Mirrors kafka.cluster.PartitionTest#testFetchLatestOffsetIncludesLeaderEpoch."""
    _, _, partition = partition_with_role(5, is_leader=True)
    found = partition.fetch_offset_for_timestamp(LATEST, None, -1, True)
    assert found is not None and found.leader_epoch == 5


def test_list_offset_isolation_levels():
    """Mirrors kafka.cluster.PartitionTest#testListOffsetIsolationLevels (its replica and read-uncommitted
    answers; kafka_ref holds no transactions, so its last stable offset is the HW and the read-committed
    answers, which rest on an open transaction, are not mirrored).

    Three records, HW 0: "latest" is the LEO (3) for a replica and the HW for a client; after the
    HW moves to 1 a client sees 1. Earliest and earliest-local are offset 0 for every isolation,
    also while the HW is still at the log start (Partition#fetchOffsetForTimestamp answers both
    without comparing them to the last fetchable offset).
    """
    _, _, partition = setup()
    partition.create_log_if_not_exists(False, False, {}, None)
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1, controller_epoch=0), {}, None)
    partition.append_records_to_leader(records(3), "client", 0)

    def offset_of(isolation, timestamp) -> int:
        found = partition.fetch_offset_for_timestamp(timestamp, isolation, -1, True)
        assert found is not None
        return found.offset

    assert [offset_of(iso, LATEST) for iso in (None, READ_UNCOMMITTED)] == [3, 0]
    assert [offset_of(iso, ts) for iso in (None, READ_UNCOMMITTED) for ts in (EARLIEST, EARLIEST_LOCAL)] == [0, 0, 0, 0]
    partition.log.update_high_watermark(1)
    assert [offset_of(iso, LATEST) for iso in (None, READ_UNCOMMITTED)] == [3, 1]
    assert [offset_of(iso, ts) for iso in (None, READ_UNCOMMITTED) for ts in (EARLIEST, EARLIEST_LOCAL)] == [0, 0, 0, 0]


# ------------------------------------------------------------------------------ follower appends


def batch_at(base_offset: int, count: int) -> MemoryRecords:
    """Mirrors PartitionTest#createRecords: ``count`` records from ``base_offset`` in one batch of leader epoch 0."""
    return MemoryRecords.with_records([SimpleRecord(f"k{i}".encode(), f"v{i}".encode()) for i in range(count)],
                                      base_offset=base_offset, partition_leader_epoch=0)


def test_append_records_as_follower_below_log_start_offset():
    """Mirrors kafka.cluster.PartitionTest#testAppendRecordsAsFollowerBelowLogStartOffset.

    An empty log starting at 5 refuses a batch wholly below 5, but takes one that straddles its
    start (3 records from 4): the log restarts at the batch's first offset. Once it holds data, a
    batch below its end is refused again.
    """
    _, _, partition = setup()
    partition.create_log_if_not_exists(False, False, {}, None)
    log = partition.local_log_or_exception
    partition.truncate_fully_and_start_at(5, False)
    assert (log.log_end_offset, log.log_start_offset) == (5, 5)
    with pytest.raises(UnexpectedAppendOffsetException):
        partition.append_records_to_follower_or_future_replica(batch_at(3, 1), False)
    assert log.log_end_offset == 5
    partition.append_records_to_follower_or_future_replica(batch_at(4, 3), False)
    assert (log.log_end_offset, log.log_start_offset) == (7, 4)
    partition.append_records_to_follower_or_future_replica(batch_at(7, 1), False)
    assert (log.log_end_offset, log.log_start_offset) == (8, 4)
    with pytest.raises(UnexpectedAppendOffsetException):
        partition.append_records_to_follower_or_future_replica(batch_at(3, 2), False)
    assert log.log_end_offset == 8
    partition.append_records_to_follower_or_future_replica(batch_at(8, 1), False)
    assert (log.log_end_offset, log.log_start_offset) == (9, 4)


# ------------------------------------------------------------------------------ make_leader / make_follower


def test_use_checkpoint_to_initialize_high_watermark():
    """Mirrors kafka.cluster.PartitionTest#testUseCheckpointToInitializeHighWatermark."""
    broker, _, partition = setup()
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 6, 5)
    partition.make_leader(lai_state(BROKER, 6, [0, 1], [0, 1], partition_epoch=1, controller_epoch=3, is_new=False),
                          {TP0: 4}, None)
    assert partition.local_log_or_exception.high_watermark == 4


@pytest.mark.parametrize("as_leader", [True, False])
def test_topic_id_and_partition_metadata_file(as_leader):
    """Mirrors kafka.cluster.PartitionTest#testTopicIdAndPartitionMetadataFileForLeader and
    #testTopicIdAndPartitionMetadataFileForFollower.

    The topic id lands in the log and its partition.metadata file. A second Partition object for
    the same partition knows the id from the log manager before it has a log; a different id is
    refused (InconsistentTopicIdException) and no id keeps the log's.
    """
    from kafka_ref.common.errors import InconsistentTopicIdException

    broker, _, partition = setup()
    topic_id = random_topic_id()
    state = lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1, controller_epoch=3, is_new=False)

    def become(p, tid):
        return p.make_leader(state, {}, tid) if as_leader else p.make_follower(state, {}, tid)

    def check_topic_id(p):
        assert p.topic_id == topic_id
        assert p.log is not None and p.log.topic_id == topic_id
        assert p.log.local_log.partition_metadata_topic_id == topic_id

    become(partition, topic_id)
    check_topic_id(partition)
    partition2 = broker.replica_manager._new_partition(TP0)
    assert partition2.topic_id == topic_id and partition2.log is None
    with pytest.raises(InconsistentTopicIdException):
        become(partition2, random_topic_id())
    become(partition2, None)
    check_topic_id(partition2)


def test_under_replicated_partitions_correct_semantics():
    """Mirrors kafka.cluster.PartitionTest#testUnderReplicatedPartitionsCorrectSemantics."""
    _, _, partition = setup()
    partition.make_leader(lai_state(BROKER, 6, [0, 1], [0, 1, 2], partition_epoch=1, controller_epoch=3, is_new=False),
                          {}, None)
    assert partition.is_under_replicated()
    partition.make_leader(lai_state(BROKER, 6, [0, 1, 2], [0, 1, 2], partition_epoch=1, controller_epoch=3, is_new=False),
                          {}, None)
    assert not partition.is_under_replicated()


def test_update_assignment_and_isr():
    """Mirrors kafka.cluster.PartitionTest#testUpdateAssignmentAndIsr.

    With adding/removing replicas the assignment is an ongoing reassignment; a leader keeps a
    Replica per follower (new ones added, departed ones dropped); a follower keeps none.
    """
    from kafka_ref.replica.partition_state import RECOVERED

    _, _, partition = setup()
    partition.update_assignment_and_isr((0, 1, 2, 3), True, {0, 1, 2, 3}, (4, 5), (1, 2), RECOVERED)
    assert partition.is_reassigning()
    assert partition.assignment == (0, 1, 2, 3) and partition.partition_state.isr == {0, 1, 2, 3}
    assert (partition.adding_replicas, partition.removing_replicas) == ((4, 5), (1, 2))
    assert [r.broker_id for r in partition.remote_replicas] == [1, 2, 3]
    partition.update_assignment_and_isr((0, 3, 4, 5), True, {0, 3, 4, 5}, (), (), RECOVERED)
    assert not partition.is_reassigning()
    assert partition.assignment == (0, 3, 4, 5) and partition.partition_state.isr == {0, 3, 4, 5}
    assert [r.broker_id for r in partition.remote_replicas] == [3, 4, 5]
    partition.update_assignment_and_isr((1, 2, 3, 4), False, set(), (), (), RECOVERED)
    assert not partition.is_reassigning()
    assert partition.assignment == (1, 2, 3, 4) and partition.partition_state.isr == frozenset()
    assert partition.remote_replicas == []


def test_do_not_reset_replica_state_if_leader_epoch_is_not_bumped():
    """Mirrors kafka.cluster.PartitionTest#testDoNotResetReplicaStateIfLeaderEpochIsNotBumped.

    A same-epoch LeaderAndIsr with a newer partition epoch (a KRaft reassignment adds replicas
    without a new leader epoch) keeps what the followers reported.
    """
    broker, _, partition = setup()
    topic_id = random_topic_id()
    assert partition.make_leader(lai_state(BROKER, 8, [0], [0, 1], partition_epoch=1, controller_epoch=3), {}, topic_id)
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.partition_state.isr) == (1, 8, {0})
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=0, log_start_offset=-1, log_end_offset=-1)
    fetch_follower(partition, REMOTE, 0)
    now = broker.time.milliseconds()
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=now, log_start_offset=0, log_end_offset=0)
    assert partition.make_leader(
        lai_state(BROKER, 8, [0], [0, 1], partition_epoch=2, controller_epoch=3, is_new=False), {}, topic_id) is False
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.partition_state.isr) == (2, 8, {0})
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=now, log_start_offset=0, log_end_offset=0)


def test_do_not_update_epoch_start_offset_if_leader_epoch_is_not_bumped():
    """Mirrors kafka.cluster.PartitionTest#testDoNotUpdateEpochStartOffsetIfLeaderEpochIsNotBumped."""
    _, _, partition = setup()
    topic_id = random_topic_id()
    assert partition.make_leader(lai_state(BROKER, 8, [0], [0, 1], partition_epoch=1, controller_epoch=3), {}, topic_id)
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.partition_state.isr) == (1, 8, {0})
    assert partition.leader_epoch_start_offset_opt == 0
    leader_log = partition.local_log_or_exception
    latest = leader_log.leader_epoch_cache.latest_entry
    assert (latest.epoch, latest.start_offset) == (8, 0)
    leader_log.append_as_leader(MemoryRecords.with_records(
        [SimpleRecord(b"k1", b"v1"), SimpleRecord(b"k1", b"v1")], partition_leader_epoch=8), 8)
    assert partition.make_leader(
        lai_state(BROKER, 8, [0], [0, 1], partition_epoch=2, controller_epoch=3, is_new=False), {}, topic_id) is False
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.partition_state.isr) == (2, 8, {0})
    assert partition.leader_epoch_start_offset_opt == 0
    latest = leader_log.leader_epoch_cache.latest_entry
    assert (latest.epoch, latest.start_offset) == (8, 0)


def test_follower_should_not_have_any_remote_replica_states():
    """Mirrors kafka.cluster.PartitionTest#testFollowerShouldNotHaveAnyRemoteReplicaStates."""
    _, _, partition = setup()
    topic_id = random_topic_id()
    assert partition.make_leader(lai_state(BROKER, 1, [0, 1, 2], [0, 1, 2], partition_epoch=1, controller_epoch=3),
                                 {}, topic_id)
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.leader_replica_id_opt) == (1, 1, 0)
    assert partition.partition_state.isr == {0, 1, 2}
    assert [r.broker_id for r in partition.remote_replicas] == [1, 2]
    assert partition.assignment == (0, 1, 2)
    assert partition.make_follower(lai_state(1, 2, [0, 1, 2], [0, 1, 2], partition_epoch=2, controller_epoch=3,
                                             is_new=False), {}, topic_id)
    assert (partition.get_partition_epoch(), partition.get_leader_epoch(), partition.leader_replica_id_opt) == (2, 2, 1)
    assert partition.partition_state.isr == frozenset()
    assert partition.remote_replicas == []
    assert partition.assignment == (0, 1, 2)


# ------------------------------------------------------------------------------ ISR changes (ZooKeeper-mode cache)


def test_retry_shrink_isr():
    """Mirrors kafka.cluster.PartitionTest#testRetryShrinkIsr.

    A shrink answered with a retriable error (NETWORK_EXCEPTION) is sent again unchanged and
    stays pending (maximal ISR still the old ISR, HW held); once accepted, the ISR shrinks and
    the HW jumps to the leader's LEO.
    """
    broker, alter, partition = setup()
    log = broker.log_manager.get_or_create_log(TP0)
    seed_log_data(log, 10, 4)
    topic_id = random_topic_id()
    assert make_leader(partition, leader_epoch=5, isr=[0, 1], replicas=[0, 1], partition_epoch=1, topic_id=topic_id)
    assert log.high_watermark == 0
    broker.time.advance(partition.replica_lag_time_max_ms + 1)
    partition.maybe_shrink_isr()
    assert len(alter.isr_updates) == 1 and alter.isr_updates[0].leader_and_isr.isr == (0,)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    alter.fail_isr_update(Errors.NETWORK_EXCEPTION)
    assert (partition.isr_shrink_count, partition.failed_alter_partition_count) == (0, 1)
    assert partition.get_partition_epoch() == 1
    assert len(alter.isr_updates) == 1 and alter.isr_updates[0].leader_and_isr.isr == (0,)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    assert log.high_watermark == 0
    alter.complete_isr_update(2)
    assert (partition.isr_shrink_count, partition.get_partition_epoch(), len(alter.isr_updates)) == (1, 2, 0)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    assert log.high_watermark == log.log_end_offset == 10


def test_single_in_flight_alter_isr():
    """Mirrors kafka.cluster.PartitionTest#testSingleInFlightAlterIsr: while an expansion is pending, a
    shrink is not even prepared."""
    broker, alter, partition = setup()
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 10, 4)
    assert make_leader(partition, leader_epoch=5, isr=[0, 1, 2], replicas=[0, 1, 2, 3], partition_epoch=1)
    assert partition.local_log_or_exception.high_watermark == 0
    fetch_follower(partition, 3, 10)
    assert partition.partition_state.isr == {0, 1, 2} and partition.maximal_isr == {0, 1, 2, 3}
    assert len(alter.isr_updates) == 1
    broker.time.advance(partition.replica_lag_time_max_ms + 1)
    partition.maybe_shrink_isr()
    assert len(alter.isr_updates) == 1 and alter.submitted == 1
    assert isinstance(partition.partition_state, PendingExpandIsr)


def test_alter_isr_answer_with_same_partition_epoch_commits():
    """Mirrors Partition#handleAlterPartitionUpdate's second case (no Kafka test of its own): an answer with the
    partition epoch we already have means the controller found nothing to change; the proposal is
    committed all the same so that later changes can go out."""
    broker, alter, partition = setup()
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 10, 4)
    assert make_leader(partition, leader_epoch=5, isr=[0, 1], replicas=[0, 1], partition_epoch=3)
    broker.time.advance(LAG_MS + 1)
    partition.maybe_shrink_isr()
    assert isinstance(partition.partition_state, PendingShrinkIsr)
    alter.complete_isr_update(3)
    assert partition.partition_state.isr == {0} and not partition.partition_state.is_inflight
    assert (partition.get_partition_epoch(), partition.isr_shrink_count) == (3, 1)


@pytest.mark.anyio
async def test_partition_should_retry_alter_partition_request():
    """Mirrors kafka.cluster.PartitionTest#testPartitionShouldRetryAlterPartitionRequest.

    With the real AlterPartitionManager: the controller answers the expansion of follower 3 with
    UNKNOWN_SERVER_ERROR, the partition submits the same proposal again, the second request is
    accepted with partition epoch 2, and the ISR is committed: two requests in all.
    """
    import anyio

    from kafka_ref.common.requests.alter_partition import (
        AlterPartitionResponse,
        AlterPartitionResponsePartitionData,
        AlterPartitionResponseTopicData,
    )
    from kafka_ref.network.network import Network
    from kafka_ref.server.alter_partition_manager import AlterPartitionManager

    broker, _ = broker_with_mock_alter(BROKER, alive=(0, 1, 2, 3))
    network = Network()
    inbox = network.register("controller")
    manager = AlterPartitionManager(BROKER, network, lambda: "controller", lambda: 0)
    broker.replica_manager.alter_partition_manager = manager
    partition = new_partition(broker)
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 10, 4)

    def answer(error: Errors, isr=(), leader_epoch=0, partition_epoch=0) -> AlterPartitionResponse:
        return AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
            topic_name=TP0.topic, partitions=(AlterPartitionResponsePartitionData(
                partition_index=0, error_code=error.code, leader_id=BROKER if isr else 0, leader_epoch=leader_epoch,
                isr=tuple(isr), partition_epoch=partition_epoch),)),))

    async with anyio.create_task_group() as tg:
        manager.start(tg)
        assert make_leader(partition, leader_epoch=5, isr=[0, 1, 2], replicas=[0, 1, 2, 3], partition_epoch=1)
        assert partition.local_log_or_exception.high_watermark == 0
        fetch_follower(partition, 3, 10)
        await anyio.sleep(0.001)
        first = inbox.receive_nowait()
        assert first.request.topics[0].partitions[0].new_isr_with_epochs[-1].broker_id == 3
        first.respond(answer(Errors.UNKNOWN_SERVER_ERROR))
        await anyio.sleep(0.001)
        second = inbox.receive_nowait()
        assert second.request.topics[0].partitions[0] == first.request.topics[0].partitions[0]
        second.respond(answer(Errors.NONE, [0, 1, 2, 3], 5, 2))
        await anyio.sleep(0.001)
        assert partition.partition_state.isr == {0, 1, 2, 3}
        assert partition.get_partition_epoch() == 2
        assert manager.requests_sent == 2
        assert not partition.partition_state.is_inflight
        tg.cancel_scope.cancel()


def test_monotonic_offsets_after_leader_change_exact():
    """Mirrors kafka.cluster.PartitionTest#testMonotonicOffsetsAfterLeaderChange (KIP-207), with its values
    (tests/test_partition.py has a shorter variant).

    Five records (timestamps 10, 11, none, 20, 21) at leader epoch 8; followers 1 and 2 fetch
    two, so the HW is 2. After follower and leader again (epoch 10, starting at offset 5), a
    client's "latest" and a lookup past the HW are OFFSET_NOT_AVAILABLE until the HW reaches the
    epoch start; a replica's "latest", earliest, earliest-local and a match below the HW answer.
    """
    from kafka_ref.common.errors import OffsetNotAvailableException

    _, alter, partition = setup()
    replicas, isr = [0, 1, 2], [0, 2]
    assert partition.make_leader(lai_state(BROKER, 8, isr, replicas, partition_epoch=1, controller_epoch=3), {}, None)
    assert partition.get_leader_epoch() == 8 and partition.partition_state.isr == {0, 2}
    batch1 = MemoryRecords.with_records([SimpleRecord(b"k1", b"v1", timestamp=10), SimpleRecord(b"k2", b"v2", timestamp=11)])
    batch2 = MemoryRecords.with_records([SimpleRecord(b"k3", b"v1"), SimpleRecord(b"k4", b"v2", timestamp=20),
                                         SimpleRecord(b"k5", b"v3", timestamp=21)])
    partition.append_records_to_leader(batch1, "client", 0)
    partition.append_records_to_leader(batch2, "client", 0)
    log = partition.local_log_or_exception
    assert log.log_start_offset == log.high_watermark == 0

    def offsets_for(timestamp: int, isolation):
        try:
            return partition.fetch_offset_for_timestamp(timestamp, isolation, partition.get_leader_epoch(), True)
        except OffsetNotAvailableException as exc:
            return exc

    for follower in (1, 2):
        fetch_follower(partition, follower, 0)
        fetch_follower(partition, follower, 2)
    alter.complete_isr_update(2)
    assert log.high_watermark == 2
    assert offsets_for(LATEST, None).offset == 5
    assert offsets_for(LATEST, READ_UNCOMMITTED).offset == 2
    assert offsets_for(30, READ_UNCOMMITTED) is None
    assert partition.make_follower(lai_state(2, 9, isr, replicas, partition_epoch=4, controller_epoch=3, is_new=False),
                                   {}, None)
    assert partition.make_leader(lai_state(BROKER, 10, isr, replicas, partition_epoch=5, controller_epoch=3,
                                           is_new=False), {}, None)
    assert isinstance(offsets_for(LATEST, READ_UNCOMMITTED), OffsetNotAvailableException)
    assert offsets_for(LATEST, None).offset == 5
    assert offsets_for(EARLIEST, READ_UNCOMMITTED).offset == 0
    assert offsets_for(EARLIEST_LOCAL, READ_UNCOMMITTED).offset == 0
    found = offsets_for(11, READ_UNCOMMITTED)
    assert (found.offset, found.timestamp) == (1, 11)
    assert isinstance(offsets_for(100, READ_UNCOMMITTED), OffsetNotAvailableException)
    fetch_follower(partition, 1, 5)
    fetch_follower(partition, 2, 5)
    alter.complete_isr_update(6)
    assert offsets_for(LATEST, READ_UNCOMMITTED).offset == 5
    assert offsets_for(100, READ_UNCOMMITTED) is None


def test_leader_recovery_state_after_unclean_election():
    """Mirrors kafka.cluster.Partition#makeLeader and #makeFollower on leaderRecoveryState (KIP-704, no Kafka test
    of its own): a leader elected uncleanly is told RECOVERING; becoming leader it marks the partition
    RECOVERED at once, and its next AlterPartition says so (which is how the controller learns the
    recovery is over). A follower keeps the state it was given."""
    import dataclasses

    from kafka_ref.replica.partition_state import RECOVERED, RECOVERING

    broker, alter, partition = setup()
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 10, 4)
    follower_state = dataclasses.replace(lai_state(REMOTE, 4, [1], [0, 1], partition_epoch=1), leader_recovery_state=RECOVERING)
    assert partition.make_follower(follower_state, {}, None)
    assert partition.partition_state.leader_recovery_state == RECOVERING
    leader_state = dataclasses.replace(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=2), leader_recovery_state=RECOVERING)
    assert partition.make_leader(leader_state, {}, None)
    assert partition.partition_state.leader_recovery_state == RECOVERED
    fetch_follower(partition, REMOTE, 10)
    (item,) = alter.isr_updates
    assert (item.leader_and_isr.isr, item.leader_and_isr.leader_recovery_state) == ((0, 1), RECOVERED)
