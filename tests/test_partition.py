"""Partition unit tests (issue 3), mirroring kafka.cluster.PartitionTest (Kafka 3.x).

Synchronous: a broker is wired but not running, time is a MockTime, and ISR changes go to a
MockAlterPartitionManager the test answers by hand (as PartitionTest does).
"""

from __future__ import annotations

import pytest

from helpers_replica import (
    LAG_MS,
    TP0,
    MockAlterPartitionManager,
    broker_with_mock_alter,
    fetch_consumer,
    fetch_follower,
    lai_state,
    metadata_for,
    new_partition,
    records,
    seed_log_data,
)
from kafka_ref.common.errors import (
    Errors,
    FencedLeaderEpochException,
    NotEnoughReplicasException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    UnknownLeaderEpochException,
)
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.offsets_for_leader_epoch import EpochEndOffset
from kafka_ref.replica.partition_state import CommittedPartitionState, PendingExpandIsr, PendingShrinkIsr

BROKER = 0
REMOTE = 1
REMOTE2 = 2


def setup(props: dict | None = None, alive=(0, 1, 2)):
    broker, alter = broker_with_mock_alter(BROKER, props, alive=alive)
    partition = new_partition(broker)
    return broker, alter, partition


def leader_log_with(broker, num_records: int = 10, leader_epoch: int = 4):
    log = broker.log_manager.get_or_create_log(TP0)
    seed_log_data(log, num_records, leader_epoch)
    return log


def assert_replica_state(partition, replica_id, *, last_caught_up_time_ms, log_start_offset, log_end_offset):
    """Mirrors AbstractPartitionTest#assertReplicaState."""
    replica = partition.get_replica(replica_id)
    assert replica is not None
    assert replica.last_caught_up_time_ms == last_caught_up_time_ms
    assert replica.log_start_offset == log_start_offset
    assert replica.log_end_offset == log_end_offset


# ------------------------------------------------------------------------------ make_leader / make_follower


def test_make_leader_updates_epoch_cache():
    """Mirrors PartitionTest#testMakeLeaderUpdatesEpochCache."""
    broker, _, partition = setup()
    log = broker.log_manager.get_or_create_log(TP0)
    log.append_as_leader(records(2, leader_epoch=0), 0)
    log.append_as_leader(records(2, leader_epoch=5), 5)
    assert log.log_end_offset == 4
    assert partition.make_leader(lai_state(BROKER, 8, [0], [0, 1]), {}, None) is True
    assert partition.leader_log_if_local().log_end_offset == 4
    end = partition.last_offset_for_leader_epoch(8, 8, fetch_only_from_leader=True)
    assert (end.error_code, end.leader_epoch, end.end_offset) == (0, 8, 4)


def test_make_leader_return_values_and_state():
    """Mirrors PartitionTest#testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch (return values).

    True only when this broker was not the leader before; the epoch start offset is the LEO
    when the leader epoch grows; a same-epoch update changes assignment, ISR and partition
    epoch but not the epoch start offset.
    """
    broker, _, partition = setup()
    log = leader_log_with(broker)
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1, 2], partition_epoch=1, controller_epoch=3), {}, None)
    assert (partition.leader_epoch, partition.partition_epoch, partition.controller_epoch) == (5, 1, 3)
    assert partition.is_leader and partition.leader_replica_id_opt == BROKER
    assert partition.assignment == (0, 1, 2)
    assert sorted(partition.remote_replicas_map) == [1, 2]
    assert partition.leader_epoch_start_offset_opt == 10
    assert partition.in_sync_replica_ids == {0, 1}
    assert log.leader_epoch_cache.latest_epoch == 5
    # Same leader epoch, newer partition epoch: still the leader (False), new ISR, same epoch start.
    log.append_as_leader(records(3), 5)
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1, 2], [0, 1, 2], partition_epoch=2), {}, None) is False
    assert (partition.leader_epoch, partition.partition_epoch) == (5, 2)
    assert partition.in_sync_replica_ids == {0, 1, 2}
    assert partition.leader_epoch_start_offset_opt == 10
    # A newer leader epoch while already the leader: still False, but the epoch starts at the LEO.
    assert partition.make_leader(lai_state(BROKER, 6, [0, 1, 2], [0, 1, 2], partition_epoch=3), {}, None) is False
    assert partition.leader_epoch_start_offset_opt == 13
    # After becoming a follower, becoming the leader again is a leader change.
    assert partition.make_follower(lai_state(1, 7, [0, 1, 2], [0, 1, 2], partition_epoch=4), {}, None) is True
    assert partition.make_leader(lai_state(BROKER, 8, [0, 1, 2], [0, 1, 2], partition_epoch=5), {}, None) is True


def test_ignore_leader_partition_state_change_with_older_partition_epoch():
    """Mirrors PartitionTest#testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch."""
    broker, _, partition = setup()
    assert partition.make_leader(lai_state(BROKER, 1, [0, 1], [0, 1], partition_epoch=2), {}, None)
    assert partition.make_leader(lai_state(BROKER, 2, [0], [0, 1], partition_epoch=1), {}, None) is False
    assert (partition.leader_epoch, partition.partition_epoch, partition.in_sync_replica_ids) == (1, 2, {0, 1})


def test_ignore_follower_partition_state_change_with_older_partition_epoch():
    """Mirrors PartitionTest#testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch."""
    broker, _, partition = setup()
    assert partition.make_follower(lai_state(1, 1, [0, 1], [0, 1], partition_epoch=2), {}, None)
    assert partition.make_follower(lai_state(1, 2, [0, 1], [0, 1], partition_epoch=1), {}, None) is False
    assert (partition.leader_epoch, partition.partition_epoch) == (1, 2)


def test_make_follower_with_no_leader_id_change():
    """Mirrors PartitionTest#testMakeFollowerWithNoLeaderIdChange.

    make_follower returns True whenever the leader epoch grows (fetchers restart), False for
    the same epoch; a follower keeps no ISR, no remote replicas and no epoch start offset.
    """
    broker, _, partition = setup()
    assert partition.make_follower(lai_state(1, 1, [0, 1, 2], [0, 1, 2], partition_epoch=1, is_new=False), {}, None) is True
    assert partition.make_follower(lai_state(1, 4, [0, 1, 2], [0, 1, 2], partition_epoch=1, is_new=False), {}, None) is True
    assert partition.make_follower(lai_state(1, 4, [0, 1, 2], [0, 1, 2], partition_epoch=1), {}, None) is False
    assert partition.leader_replica_id_opt == 1 and not partition.is_leader
    assert partition.in_sync_replica_ids == frozenset()
    assert partition.remote_replicas_map == {}
    assert partition.leader_epoch_start_offset_opt is None
    assert partition.log is not None


def test_make_leader_resets_remote_replica_state():
    """Mirrors ReplicaTest#testResetReplicaStateWhenLeaderIsReelected / WhenNewLeaderIsElected.

    A new leader forgets what followers told a previous incarnation; in-sync followers count
    as caught up now, the others get 0 ("never"). A re-elected leader keeps the followers'
    offsets and records its epoch start offset as their last-fetch leader end offset.
    """
    broker, _, partition = setup()
    leader_log_with(broker)
    t0 = broker.time.milliseconds()
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1, 2], partition_epoch=1), {}, None)
    assert_replica_state(partition, 1, last_caught_up_time_ms=t0, log_start_offset=-1, log_end_offset=-1)
    assert_replica_state(partition, 2, last_caught_up_time_ms=0, log_start_offset=-1, log_end_offset=-1)
    assert partition.get_replica(1).last_fetch_leader_log_end_offset == -1
    fetch_follower(partition, 1, 7)
    fetch_follower(partition, 2, 4)
    broker.time.advance(1000)
    t1 = broker.time.milliseconds()
    # Re-elected (already leader) with a new epoch and ISR {0, 2}.
    assert partition.make_leader(lai_state(BROKER, 6, [0, 2], [0, 1, 2], partition_epoch=2), {}, None) is False
    r1, r2 = partition.get_replica(1), partition.get_replica(2)
    assert (r1.log_end_offset, r1.last_caught_up_time_ms, r1.last_fetch_leader_log_end_offset, r1.last_fetch_time_ms) == (7, 0, 10, 0)
    assert (r2.log_end_offset, r2.last_caught_up_time_ms, r2.last_fetch_leader_log_end_offset, r2.last_fetch_time_ms) == (4, t1, 10, t1)


# ------------------------------------------------------------------------------ follower fetch state


def test_update_follower_fetch_state():
    """Mirrors PartitionTest#testUpdateFollowerFetchState."""
    broker, _, partition = setup()
    leader_log_with(broker, 6)
    init = broker.time.milliseconds()
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=init, log_start_offset=-1, log_end_offset=-1)
    broker.time.advance(500)
    fetch_follower(partition, REMOTE, 3)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=init, log_start_offset=0, log_end_offset=3)
    replica = partition.get_replica(REMOTE)
    assert replica.last_fetch_leader_log_end_offset == 6
    assert replica.last_fetch_time_ms == init + 500
    broker.time.advance(500)
    fetch_follower(partition, REMOTE, 6)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=init + 1000, log_start_offset=0, log_end_offset=6)
    assert partition.leader_log_if_local().high_watermark == 6


def test_fence_follower_fetch_with_stale_broker_epoch():
    """Mirrors PartitionTest#testFenceFollowerFetchWithStaleBrokerEpoch (Kafka 3.7, KRaft): a fetch carrying a
    broker epoch older than the metadata's epoch for that broker is refused and changes nothing; the same
    fetch with the current epoch is recorded. A ZooKeeper-mode leader does not check (Replica#updateFetchStateOrThrow)."""
    from test_apply_delta import KRaftBroker, create_topic

    kb = KRaftBroker()                                   # broker b registered with epoch b + 1
    create_topic(kb, leader=BROKER, replicas=(0, 1), isr=(0, 1))
    partition = kb.rm.online_partition(TP0)
    kb.rm.append_records(1000, 1, False, "client", {TP0: records(10)}, __import__("helpers_replica").Collector())
    with pytest.raises(NotLeaderOrFollowerException, match="broker epoch=1 vs expected=2"):
        fetch_follower(partition, REMOTE, 10, replica_epoch=1)
    assert partition.get_replica(REMOTE).state_snapshot.log_end_offset == -1   # unchanged: never fetched
    fetch_follower(partition, REMOTE, 10, replica_epoch=2)
    assert partition.get_replica(REMOTE).state_snapshot.broker_epoch == 2
    # ZooKeeper mode: no epoch check against the metadata.
    broker, _, zk_partition = setup()
    leader_log_with(broker)
    zk_partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(zk_partition, REMOTE, 10, replica_epoch=7)
    fetch_follower(zk_partition, REMOTE, 10, replica_epoch=6)
    assert zk_partition.get_replica(REMOTE).state_snapshot.broker_epoch == 6


def test_kraft_isr_eligibility_needs_the_current_broker_epoch():
    """Mirrors Partition#isReplicaIsrEligible / #isBrokerEpochIsrEligible (KIP-903, Kafka 3.5+) and
    KRaftMetadataCache#isBrokerFenced (an unregistered broker is not fenced, but has no alive epoch)."""
    from test_apply_delta import KRaftBroker, create_topic

    kb = KRaftBroker(brokers=(0, 1))
    create_topic(kb, leader=BROKER, replicas=(0, 1, 2), isr=(0,))
    partition = kb.rm.online_partition(TP0)
    cache = kb.broker.metadata_cache
    assert (cache.is_broker_fenced(2), cache.get_alive_broker_epoch(2), cache.get_alive_broker_epoch(1)) == (False, None, 2)
    # Replica 1 never fetched: no stored epoch, not eligible; after a fetch at epoch -1 or 2 it is.
    assert partition.is_replica_isr_eligible(REMOTE) is False
    fetch_follower(partition, REMOTE, 0, replica_epoch=-1)
    assert partition.is_replica_isr_eligible(REMOTE) is True
    # Replica 2 is not registered: never eligible.
    fetch_follower(partition, REMOTE2, 0, replica_epoch=-1)
    assert partition.is_replica_isr_eligible(REMOTE2) is False


def test_read_records_returns_high_watermark_before_this_fetch():
    """Mirrors Partition#readRecords: offsets are captured before the fetch moves the HW."""
    broker, _, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    assert log.high_watermark == 0
    info = fetch_follower(partition, REMOTE, 10)
    assert (info.high_watermark, info.log_end_offset, info.log_start_offset) == (0, 10, 0)
    assert log.high_watermark == 10
    info = fetch_follower(partition, REMOTE, 10)
    assert info.high_watermark == 10


# ------------------------------------------------------------------------------ ISR expansion


def test_isr_expansion():
    """Mirrors PartitionTest#testIsrExpansion.

    A follower joins once its LEO reaches the HW and the leader epoch start offset; the
    maximal ISR counts it at once, the committed ISR only after the controller answers.
    """
    broker, alter, partition = setup()
    leader_log_with(broker)
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    assert partition.in_sync_replica_ids == {0}
    assert partition.get_replica(REMOTE).log_end_offset == -1
    assert partition.leader_log_if_local().high_watermark == 10
    fetch_follower(partition, REMOTE, 3)
    assert partition.in_sync_replica_ids == {0}
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=0, log_start_offset=0, log_end_offset=3)
    assert len(alter.isr_updates) == 0
    fetch_follower(partition, REMOTE, 10)
    assert len(alter.isr_updates) == 1
    item = alter.isr_updates[0]
    assert item.leader_and_isr.isr == (0, 1)
    assert (item.leader_and_isr.leader, item.leader_and_isr.leader_epoch, item.leader_and_isr.partition_epoch) == (0, 5, 1)
    assert isinstance(partition.partition_state, PendingExpandIsr)
    assert partition.partition_state.isr == {0}
    assert partition.maximal_isr == {0, 1}
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10)
    alter.complete_isr_update(2)
    assert partition.in_sync_replica_ids == {0, 1}
    assert partition.partition_epoch == 2
    assert (partition.isr_expand_count, partition.isr_shrink_count, partition.failed_alter_partition_count) == (1, 0, 0)


def test_follower_does_not_join_isr_until_caught_up_to_offset_within_current_leader_epoch():
    """Mirrors PartitionTest#testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch."""
    broker, alter, partition = setup()
    assert partition.make_leader(lai_state(BROKER, 8, [0, 2], [0, 1, 2], partition_epoch=1), {}, None)
    assert partition.leader_epoch == 8
    first = partition.append_records_to_leader(records(2), "client", 0)
    partition.append_records_to_leader(records(3), "client", 0)
    last_offset_of_first_batch = first.last_offset
    assert last_offset_of_first_batch == 1
    log = partition.leader_log_if_local()
    assert log.high_watermark == log.log_start_offset == 0
    fetch_follower(partition, REMOTE2, 0)
    fetch_follower(partition, REMOTE2, last_offset_of_first_batch)
    assert log.high_watermark == last_offset_of_first_batch
    # Leader -> follower -> leader again, no new records.
    partition.make_follower(lai_state(2, 9, [0, 2], [0, 1, 2], partition_epoch=1, is_new=False), {}, None)
    assert partition.make_leader(lai_state(BROKER, 10, [0, 2], [0, 1, 2], partition_epoch=1, is_new=False), {}, None)
    epoch_start = log.log_end_offset
    assert epoch_start == 5
    partition.append_records_to_leader(records(2), "client", 0)
    # Reaching the HW is not enough: the follower must reach the current epoch's start offset.
    fetch_follower(partition, REMOTE, 0)
    fetch_follower(partition, REMOTE, last_offset_of_first_batch)
    assert partition.in_sync_replica_ids == {0, 2} and len(alter.isr_updates) == 0
    fetch_follower(partition, REMOTE, epoch_start)
    assert partition.in_sync_replica_ids == {0, 2}
    assert partition.maximal_isr == {0, 1, 2}
    assert alter.isr_updates[0].leader_and_isr.isr == (0, 1, 2)


def test_isr_not_expanded_if_update_fails():
    """Mirrors PartitionTest#testIsrNotExpandedIfUpdateFails (INVALID_UPDATE_VERSION: wait for metadata)."""
    broker, alter, partition = setup()
    leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(partition, REMOTE, 10)
    assert partition.in_sync_replica_ids == {0} and partition.maximal_isr == {0, 1}
    assert len(alter.isr_updates) == 1
    alter.fail_isr_update(Errors.INVALID_UPDATE_VERSION)
    assert partition.in_sync_replica_ids == {0} and partition.maximal_isr == {0, 1}
    assert len(alter.isr_updates) == 0
    assert (partition.isr_expand_count, partition.isr_shrink_count, partition.failed_alter_partition_count) == (0, 0, 1)
    # Still pending: another fetch does not send anything.
    fetch_follower(partition, REMOTE, 10)
    assert len(alter.isr_updates) == 0 and alter.submitted == 1


def test_isr_not_expanded_if_replica_is_not_alive():
    """Mirrors PartitionTest#testIsrNotExpandedIfReplicaIsFencedOrShutdown (the "zk" case).

    In ZooKeeper mode a follower is ISR-eligible only while the metadata cache has it alive;
    the controller's INELIGIBLE_REPLICA resets the leader to the committed ISR.
    """
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(partition, REMOTE, log.log_end_offset)
    assert partition.maximal_isr == {0, 1} and len(alter.isr_updates) == 1
    alter.fail_isr_update(Errors.INELIGIBLE_REPLICA)
    assert partition.partition_state == CommittedPartitionState(frozenset({0}))
    assert partition.maximal_isr == {0} and not partition.partition_state.is_inflight
    metadata_for(broker, brokers=(0,))
    fetch_follower(partition, REMOTE, log.log_end_offset)
    assert partition.maximal_isr == {0} and len(alter.isr_updates) == 0
    metadata_for(broker, brokers=(0, 1))
    fetch_follower(partition, REMOTE, log.log_end_offset)
    assert partition.maximal_isr == {0, 1} and partition.partition_state.is_inflight
    alter.complete_isr_update(1)
    assert partition.in_sync_replica_ids == {0, 1} and not partition.partition_state.is_inflight


# ------------------------------------------------------------------------------ ISR shrink


def test_maybe_shrink_isr():
    """Mirrors PartitionTest#testMaybeShrinkIsr: the shrink keeps the old ISR as maximal until committed."""
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    init = broker.time.milliseconds()
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1, 2], [0, 1, 2], partition_epoch=1), {}, None)
    assert log.high_watermark == 0
    fetch_follower(partition, REMOTE, log.log_end_offset)
    assert_replica_state(partition, REMOTE2, last_caught_up_time_ms=init, log_start_offset=-1, log_end_offset=-1)
    partition.maybe_shrink_isr()
    assert len(alter.isr_updates) == 0 and partition.in_sync_replica_ids == {0, 1, 2}
    broker.time.advance(partition.replica_lag_time_max_ms + 1)
    partition.maybe_shrink_isr()
    assert partition.isr_shrink_count == 0
    assert len(alter.isr_updates) == 1 and alter.isr_updates[0].leader_and_isr.isr == (0, 1)
    assert isinstance(partition.partition_state, PendingShrinkIsr)
    assert partition.in_sync_replica_ids == {0, 1, 2} and partition.maximal_isr == {0, 1, 2}
    assert log.high_watermark == 0
    alter.complete_isr_update(2)
    assert partition.isr_shrink_count == 1 and partition.partition_epoch == 2
    assert partition.in_sync_replica_ids == {0, 1} and partition.maximal_isr == {0, 1}
    assert log.high_watermark == 10


def test_should_not_shrink_isr_if_previous_fetch_is_caught_up():
    """Mirrors PartitionTest#testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp.

    The out-of-sync rule uses the leader's LEO at the follower's previous fetch: reaching it
    makes the follower caught up as of that previous fetch.
    """
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    init = broker.time.milliseconds()
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    assert log.high_watermark == 0
    broker.time.advance(5000)
    first_fetch = broker.time.milliseconds()
    fetch_follower(partition, REMOTE, 5, fetch_time_ms=first_fetch)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=init, log_start_offset=0, log_end_offset=5)
    assert partition.get_replica(REMOTE).last_fetch_leader_log_end_offset == 10
    assert log.high_watermark == 5
    broker.time.advance(5001)
    seed_log_data(log, 5, 5)
    fetch_follower(partition, REMOTE, 10, fetch_time_ms=broker.time.milliseconds())
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=first_fetch, log_start_offset=0, log_end_offset=10)
    assert log.high_watermark == 10
    # 10001 ms after init (> lag from init, but the follower was caught up as of the first fetch).
    broker.time.advance(LAG_MS - 5001 - 1)
    partition.maybe_shrink_isr()
    assert partition.in_sync_replica_ids == {0, 1} and len(alter.isr_updates) == 0
    # Once lag has passed since that previous fetch, it is out.
    broker.time.advance(2)
    partition.maybe_shrink_isr()
    assert len(alter.isr_updates) == 1 and alter.isr_updates[0].leader_and_isr.isr == (0,)


def test_should_not_shrink_isr_if_follower_caught_up_to_log_end():
    """Mirrors PartitionTest#testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd."""
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(partition, REMOTE, 10)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10)
    assert log.high_watermark == 10
    broker.time.advance(30001)
    partition.maybe_shrink_isr()
    assert partition.in_sync_replica_ids == {0, 1} and len(alter.isr_updates) == 0


def test_isr_not_shrunk_if_update_fails():
    """Mirrors PartitionTest#testIsrNotShrunkIfUpdateFails."""
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    broker.time.advance(30001)
    partition.maybe_shrink_isr()
    assert partition.in_sync_replica_ids == {0, 1} and len(alter.isr_updates) == 1
    assert log.high_watermark == 0
    alter.fail_isr_update(Errors.INVALID_UPDATE_VERSION)
    assert isinstance(partition.partition_state, PendingShrinkIsr)
    assert partition.in_sync_replica_ids == {0, 1} and len(alter.isr_updates) == 0
    assert log.high_watermark == 0


def test_alter_isr_leader_and_isr_race():
    """Mirrors PartitionTest#testAlterIsrLeaderAndIsrRace: an answer for a replaced state is ignored."""
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    broker.time.advance(LAG_MS + 1)
    partition.maybe_shrink_isr()
    assert partition.partition_state.is_inflight
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=2, is_new=False), {}, None) is False
    assert log.high_watermark == 0
    assert not partition.partition_state.is_inflight
    # The manager still holds the old change: a new one is not attempted (OPERATION_NOT_ATTEMPTED resets).
    broker.time.advance(LAG_MS + 1)
    partition.maybe_shrink_isr()
    assert not partition.partition_state.is_inflight
    alter.complete_isr_update(10)
    assert partition.partition_epoch == 2 and partition.in_sync_replica_ids == {0, 1}
    partition.maybe_shrink_isr()
    assert partition.partition_state.is_inflight


@pytest.mark.parametrize(
    "error, retried, reset",
    [
        (Errors.NEW_LEADER_ELECTED, False, False),
        (Errors.UNKNOWN_TOPIC_OR_PARTITION, False, False),
        (Errors.UNKNOWN_TOPIC_ID, False, False),
        (Errors.FENCED_LEADER_EPOCH, False, False),
        (Errors.INVALID_UPDATE_VERSION, False, False),
        (Errors.INVALID_REQUEST, False, False),
        (Errors.UNKNOWN_SERVER_ERROR, True, False),
        (Errors.NETWORK_EXCEPTION, True, False),
        (Errors.OPERATION_NOT_ATTEMPTED, False, True),
        (Errors.INELIGIBLE_REPLICA, False, True),
    ],
)
def test_handle_alter_isr_failure(error, retried, reset):
    """Mirrors PartitionTest#handleAlterIsrFailure (testAlterIsrNewLeaderElected, testAlterIsrUnknownTopic,
    testAlterIsrInvalidVersion, testAlterIsrUnexpectedError, testInvalidAlterPartitionRequestsAreNotRetried).

    Partition#handleAlterPartitionError's three classes: reset to the committed ISR, wait
    (stay pending) for new metadata, or retry the same proposal.
    """
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    assert log.high_watermark == 10
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=0, log_start_offset=-1, log_end_offset=-1)
    first_fetch = broker.time.milliseconds()
    fetch_follower(partition, REMOTE, 10, fetch_time_ms=first_fetch)
    assert partition.in_sync_replica_ids == {0} and partition.maximal_isr == {0, 1}
    assert len(alter.isr_updates) == 1
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=first_fetch, log_start_offset=0, log_end_offset=10)
    alter.fail_isr_update(error)
    assert partition.failed_alter_partition_count == 1
    assert partition.in_sync_replica_ids == {0}
    assert partition.maximal_isr == ({0} if reset else {0, 1})
    assert len(alter.isr_updates) == (1 if retried else 0)
    assert partition.partition_state.is_inflight is (not reset)
    if retried:
        assert alter.isr_updates[0].leader_and_isr.isr == (0, 1)


def test_alter_isr_answer_for_another_leader_epoch_is_ignored():
    """Mirrors Partition#handleAlterPartitionUpdate: a different leader epoch or older partition epoch is ignored."""
    broker, alter, partition = setup()
    leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=3), {}, None)
    fetch_follower(partition, REMOTE, 10)
    item = alter.isr_updates.popleft()
    alter.in_flight_partitions.clear()
    import dataclasses
    item.callback(dataclasses.replace(item.leader_and_isr, leader_epoch=4, partition_epoch=4), None)
    assert partition.partition_state.is_inflight and partition.failed_alter_partition_count == 1
    item.callback(dataclasses.replace(item.leader_and_isr, partition_epoch=2), None)
    assert partition.partition_state.is_inflight and partition.failed_alter_partition_count == 2
    item.callback(dataclasses.replace(item.leader_and_isr, partition_epoch=4), None)
    assert partition.in_sync_replica_ids == {0, 1} and partition.partition_epoch == 4


# ------------------------------------------------------------------------------ high watermark


def test_high_watermark_waits_for_maximal_isr_and_caught_up_replicas():
    """Mirrors PartitionTest#testHighWatermarkIncreasesWithFencedOrShutdownFollower (the HW rule).

    The HW is the smallest LEO among the leader, the maximal ISR (a pending new member
    included), and followers caught up within replica.lag.time.max.ms that may join.
    """
    broker, alter, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1, 2], partition_epoch=1), {}, None)
    assert log.high_watermark == 10
    fetch_follower(partition, REMOTE, 10)
    assert partition.maximal_isr == {0, 1} and len(alter.isr_updates) == 1
    # Follower 2 is caught up but cannot join while the expansion of 1 is in flight.
    fetch_follower(partition, REMOTE2, 10)
    assert partition.maximal_isr == {0, 1} and len(alter.isr_updates) == 1
    partition.append_records_to_leader(records(5), "client", 1)
    assert (log.log_end_offset, log.high_watermark) == (15, 10)
    fetch_follower(partition, REMOTE, 15)
    assert log.high_watermark == 10  # held by the caught-up follower 2
    broker.time.advance(LAG_MS + 1)
    partition.append_records_to_leader(records(1), "client", 1)
    assert log.high_watermark == 15  # follower 2 no longer counts; follower 1 (maximal ISR) holds it at 15
    fetch_follower(partition, REMOTE, 16)
    assert log.high_watermark == 16


@pytest.mark.parametrize("props, hw_after_first_fetch", [
    ({}, 0),
    # The rule is in the 3.7.0 broker's code, not behind the IBP: a 3.8 broker at IBP 3.6 applies it.
    ({"inter.broker.protocol.version": "3.6"}, 0),
    ({"inter.broker.protocol.version": "3.6", "kafka_ref.broker.version": "3.6"}, 10),
])
def test_high_watermark_advance_should_not_advance_when_under_min_isr(props, hw_after_first_fetch):
    """Mirrors PartitionTest#testHighWatermarkAdvanceShouldNotAdvanceWhenUnderMinISR (KAFKA-15583, 3.7.0).

    A 3.7.0+ broker keeps the HW while the committed ISR is below the effective min ISR, at any
    IBP; a 3.6 broker (``kafka_ref.broker.version``) advances it.
    """
    broker, alter, partition = setup({**props, "min.insync.replicas": 3})
    log = leader_log_with(broker)
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1, 2], partition_epoch=1), {}, None)
    assert partition.is_under_min_isr()
    assert log.high_watermark == 0
    fetch_follower(partition, REMOTE, 10)
    assert log.high_watermark == hw_after_first_fetch
    fetch_follower(partition, REMOTE2, 10)
    assert log.high_watermark == hw_after_first_fetch
    assert len(partition.maximal_isr) == 3 and len(alter.isr_updates) == 1
    alter.complete_isr_update(2)
    assert not partition.is_under_min_isr()
    assert log.high_watermark == 10


@pytest.mark.parametrize("broker_version, effective, under, acks_all_ok", [("3.7", 2, False, True), ("3.6", 3, True, False)])
def test_effective_min_isr_caps_at_replica_count(broker_version, effective, under, acks_all_ok):
    """Mirrors Partition#effectiveMinIsr (KAFKA-15583, 3.7.0; the test ProducerFailureHandlingTest lost then):
    RF 2 with min.insync.replicas=3 and a full ISR is not under min ISR on a 3.7+ broker, so acks=all is
    accepted and the HW advances; a 3.6 broker refuses acks=all with NOT_ENOUGH_REPLICAS."""
    broker, _, partition = setup({"min.insync.replicas": 3, "kafka_ref.broker.version": broker_version,
                                  "inter.broker.protocol.version": "3.6"})
    partition.make_leader(lai_state(BROKER, 1, [0, 1], [0, 1], partition_epoch=1), {}, None)
    log = partition.leader_log_if_local()
    assert (partition.effective_min_isr(), partition.is_under_min_isr(), partition.is_at_min_isr()) == (
        effective, under, not under)
    if acks_all_ok:
        info = partition.append_records_to_leader(records(3), "client", -1)
        assert (info.first_offset, info.last_offset) == (0, 2)
        fetch_follower(partition, REMOTE, 3)
        assert log.high_watermark == 3
        assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NONE)
    else:
        with pytest.raises(NotEnoughReplicasException):
            partition.append_records_to_leader(records(3), "client", -1)
        assert log.log_end_offset == 0


def test_at_min_isr_and_under_min_isr():
    """Mirrors PartitionTest#testAtMinIsr and #testIsUnderMinIsr."""
    broker, _, partition = setup()
    assert not partition.is_at_min_isr()
    partition.make_leader(lai_state(BROKER, 8, [0], [0, 1, 2], partition_epoch=1), {}, None)
    assert partition.is_at_min_isr()
    broker2, _, partition2 = setup({"min.insync.replicas": 2})
    partition2.make_leader(lai_state(BROKER, 0, [0, 1], [0, 1], partition_epoch=1), {}, None)
    assert not partition2.is_under_min_isr()
    partition2.make_leader(lai_state(BROKER, 1, [0], [0, 1], partition_epoch=2, is_new=False), {}, None)
    assert partition2.is_under_min_isr()


# ------------------------------------------------------------------------------ appends


def test_append_records_to_leader_refuses_acks_all_under_min_isr():
    """Mirrors Partition#appendRecordsToLeader: NOT_ENOUGH_REPLICAS before writing (acks=-1 only)."""
    broker, _, partition = setup({"min.insync.replicas": 2})
    partition.make_leader(lai_state(BROKER, 1, [0], [0, 1], partition_epoch=1), {}, None)
    log = partition.leader_log_if_local()
    with pytest.raises(NotEnoughReplicasException):
        partition.append_records_to_leader(records(3), "client", -1)
    assert log.log_end_offset == 0
    info = partition.append_records_to_leader(records(3), "client", 1)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 2, 3)
    with pytest.raises(NotLeaderOrFollowerException):
        partition.make_follower(lai_state(1, 2, [1], [0, 1], partition_epoch=2), {}, None)
        partition.append_records_to_leader(records(1), "client", 1)


def test_check_enough_replicas_reach_offset():
    """Mirrors Partition#checkEnoughReplicasReachOffset (acks=all completion and NOT_ENOUGH_REPLICAS_AFTER_APPEND)."""
    broker, _, partition = setup({"min.insync.replicas": 2})
    partition.make_leader(lai_state(BROKER, 1, [0, 1], [0, 1], partition_epoch=1), {}, None)
    partition.append_records_to_leader(records(3), "client", -1)
    assert partition.check_enough_replicas_reach_offset(3) == (False, Errors.NONE)
    fetch_follower(partition, REMOTE, 3)
    assert partition.leader_log_if_local().high_watermark == 3
    assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NONE)
    partition.make_leader(lai_state(BROKER, 1, [0], [0, 1], partition_epoch=2, is_new=False), {}, None)
    assert partition.check_enough_replicas_reach_offset(3) == (True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    partition.make_follower(lai_state(1, 2, [1], [0, 1], partition_epoch=3), {}, None)
    assert partition.check_enough_replicas_reach_offset(3) == (False, Errors.NOT_LEADER_OR_FOLLOWER)


def test_get_replica_and_append_to_follower_with_no_replica():
    """Mirrors PartitionTest#testGetReplica and #testAppendRecordsToFollowerWithNoReplicaThrowsException."""
    broker, _, partition = setup()
    assert partition.log is None
    with pytest.raises(NotLeaderOrFollowerException):
        partition.local_log_or_exception
    with pytest.raises(NotLeaderOrFollowerException):
        partition.append_records_to_follower_or_future_replica(records(1))


# ------------------------------------------------------------------------------ reads: epoch validation and divergence


def test_leader_epoch_validation_on_leader():
    """Mirrors PartitionTest#testLeaderEpochValidationOnLeader."""
    broker, _, partition = setup()
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    assert fetch_follower(partition, REMOTE, 0).log_end_offset == 0
    assert fetch_follower(partition, REMOTE, 0, leader_epoch=5).log_end_offset == 0
    with pytest.raises(FencedLeaderEpochException):
        fetch_follower(partition, REMOTE, 0, leader_epoch=4)
    with pytest.raises(UnknownLeaderEpochException):
        fetch_follower(partition, REMOTE, 0, leader_epoch=6)
    assert partition.check_current_leader_epoch(4) is Errors.FENCED_LEADER_EPOCH
    assert partition.check_current_leader_epoch(6) is Errors.UNKNOWN_LEADER_EPOCH
    assert partition.check_current_leader_epoch(-1) is Errors.NONE


def test_replica_fetch_to_follower():
    """Mirrors PartitionTest#testReplicaFetchToFollower: a follower answers fetches with the epoch errors."""
    broker, _, partition = setup()
    assert partition.make_follower(lai_state(2, 8, [0, 1, 2], [0, 1, 2], partition_epoch=1, controller_epoch=3), {}, None)
    with pytest.raises(NotLeaderOrFollowerException):
        fetch_follower(partition, REMOTE, 0)
    with pytest.raises(NotLeaderOrFollowerException):
        fetch_follower(partition, REMOTE, 0, leader_epoch=8)
    with pytest.raises(UnknownLeaderEpochException):
        fetch_follower(partition, REMOTE, 0, leader_epoch=9)
    with pytest.raises(FencedLeaderEpochException):
        fetch_follower(partition, REMOTE, 0, leader_epoch=7)
    with pytest.raises(NotLeaderOrFollowerException):
        fetch_consumer(partition, 0)


def test_fetch_from_unrecognized_follower():
    """Mirrors PartitionTest#testFetchFromUnrecognizedFollower."""
    broker, _, partition = setup(alive=(0, 1, 2, 3))
    assert partition.make_leader(lai_state(BROKER, 8, [0, 1], [0, 1], partition_epoch=1), {}, None)
    with pytest.raises(UnknownLeaderEpochException):
        fetch_follower(partition, 2, 0, leader_epoch=8)
    assert partition.get_replica(2) is None
    with pytest.raises(NotLeaderOrFollowerException):
        fetch_follower(partition, 3, 0)
    assert partition.make_leader(
        lai_state(BROKER, 8, [0, 1], [0, 1, 2, 3], partition_epoch=2, adding=[2, 3]), {}, None) is False
    assert fetch_follower(partition, 2, 0, leader_epoch=8).log_end_offset == 0
    assert partition.get_replica(2).log_end_offset == 0
    assert fetch_follower(partition, 3, 0).log_end_offset == 0
    assert partition.get_replica(3).log_end_offset == 0
    assert partition.is_adding_replica(2)


def test_offset_snapshot_and_last_offset_epoch_validation_for_follower():
    """Mirrors PartitionTest#testFetchOffsetSnapshotEpochValidationForFollower and
    #testOffsetForLeaderEpochValidationForFollower."""
    broker, _, partition = setup()
    partition.make_follower(lai_state(1, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)

    def snapshot_error(epoch, only_leader):
        try:
            partition.fetch_offset_snapshot(epoch, only_leader)
            return Errors.NONE
        except Exception as exc:  # noqa: BLE001 - the test classifies it
            return Errors.for_exception(exc)

    assert [snapshot_error(e, False) for e in (5, -1, 4, 6)] == [
        Errors.NONE, Errors.NONE, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH]
    assert [snapshot_error(e, True) for e in (5, -1, 4, 6)] == [
        Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH,
        Errors.UNKNOWN_LEADER_EPOCH]
    codes = [partition.last_offset_for_leader_epoch(e, 0, True).error_code for e in (-1, 5, 4, 6)]
    assert codes == [Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.NOT_LEADER_OR_FOLLOWER.code,
                     Errors.FENCED_LEADER_EPOCH.code, Errors.UNKNOWN_LEADER_EPOCH.code]


def test_last_fetched_offset_validation():
    """Mirrors PartitionTest#testLastFetchedOffsetValidation: diverging-epoch detection from last_fetched_epoch."""
    broker, _, partition = setup()
    log = broker.log_manager.get_or_create_log(TP0)

    def append(leader_epoch, count):
        log.append_as_leader(
            MemoryRecords.with_records([SimpleRecord(None, str(i).encode()) for i in range(1, count + 1)],
                                       partition_leader_epoch=leader_epoch), leader_epoch)

    append(0, 2)   # 0
    append(3, 3)   # 2
    append(3, 3)   # 5
    append(4, 5)   # 8
    append(7, 1)   # 13
    append(9, 3)   # 14
    assert log.log_end_offset == 17
    leader_epoch = 10
    partition.make_leader(lai_state(BROKER, leader_epoch, [0, 1], [0, 1], partition_epoch=1), {}, None)

    def read(last_fetched_epoch, fetch_offset):
        return fetch_follower(partition, REMOTE, fetch_offset, leader_epoch=leader_epoch,
                              last_fetched_epoch=last_fetched_epoch, log_start_offset=0)

    def diverging(epoch, end_offset):
        return EpochEndOffset(error_code=0, partition=0, leader_epoch=epoch, end_offset=end_offset)

    def assert_divergence(expected, info):
        assert info.diverging_epoch == expected
        assert info.fetched_data.records.size_in_bytes == 0

    assert_divergence(diverging(0, 2), read(2, 5))
    assert_divergence(diverging(0, 2), read(0, 4))
    assert_divergence(diverging(4, 13), read(6, 6))
    assert_divergence(diverging(4, 13), read(5, 9))
    assert_divergence(diverging(10, 17), read(10, 18))
    assert read(0, 2).diverging_epoch is None
    assert read(7, 14).diverging_epoch is None
    assert read(9, 17).diverging_epoch is None
    assert read(10, 17).diverging_epoch is None
    with pytest.raises(OffsetOutOfRangeException):
        read(11, 5)
    # Move the log start offset into the middle of epoch 3.
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert_divergence(diverging(2, 5), read(2, 8))
    assert read(0, 5).diverging_epoch is None
    assert read(3, 5).diverging_epoch is None
    with pytest.raises(OffsetOutOfRangeException):
        read(0, 0)
    log.maybe_increment_log_start_offset(10)
    with pytest.raises(OffsetOutOfRangeException):
        read(5, 6)
    with pytest.raises(OffsetOutOfRangeException):
        read(3, 6)


def test_diverging_fetch_does_not_update_follower_state():
    """Mirrors Partition#fetchRecords: a read that found a diverging epoch leaves the follower's state alone."""
    broker, alter, partition = setup()
    log = leader_log_with(broker, 4, 2)
    partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    seed_log_data(log, 2, 5)
    fetch_follower(partition, REMOTE, 2, leader_epoch=5)
    assert partition.get_replica(REMOTE).log_end_offset == 2
    info = fetch_follower(partition, REMOTE, 6, leader_epoch=5, last_fetched_epoch=3)
    assert info.diverging_epoch == EpochEndOffset(error_code=0, partition=0, leader_epoch=2, end_offset=4)
    assert partition.get_replica(REMOTE).log_end_offset == 2
    assert len(alter.isr_updates) == 0


def test_consumer_fetch_is_bounded_by_high_watermark():
    """Mirrors PartitionTest#testReadRecordEpochValidationForLeader's HW bound (consumer reads stop at HW)."""
    broker, _, partition = setup()
    log = leader_log_with(broker)
    partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(partition, REMOTE, 4)
    assert log.high_watermark == 4
    info = fetch_consumer(partition, 0)
    assert [b.last_offset for b in info.fetched_data.records] == [0, 1, 2, 3]
    info = fetch_consumer(partition, 4)
    assert info.fetched_data.records.size_in_bytes == 0
    with pytest.raises(FencedLeaderEpochException):
        fetch_consumer(partition, 0, leader_epoch=4)


def test_mock_alter_partition_manager_refuses_second_change():
    """Mirrors MockAlterPartitionManager: one pending change per partition (OPERATION_NOT_ATTEMPTED)."""
    alter = MockAlterPartitionManager()
    answers = []
    alter.submit(TP0, None, None, 1, lambda r, e: answers.append(e))
    alter.submit(TP0, None, None, 1, lambda r, e: answers.append(e))
    assert answers == [Errors.OPERATION_NOT_ATTEMPTED] and len(alter.isr_updates) == 1



def test_monotonic_offsets_after_leader_change():
    """Mirrors PartitionTest#testMonotonicOffsetsAfterLeaderChange (Kafka 3.7): records at timestamps 10, 11
    (offsets 0-1) and 20, 21, 22 (offsets 2-4), HW 2. Back as leader at a new epoch starting at 5, the HW lags:
    "latest" for a client is OFFSET_NOT_AVAILABLE, for a replica the LEO; earliest is 0; a timestamp whose
    match is below the last fetchable offset (11 -> offset 1) is answered; one with no such match (30) is
    OFFSET_NOT_AVAILABLE."""
    from kafka_ref.common.errors import OffsetNotAvailableException

    broker, alter, partition = setup()
    log = broker.log_manager.get_or_create_log(TP0)
    partition.make_leader(lai_state(BROKER, 5, [0, 2], [0, 1, 2], partition_epoch=1), {}, None)
    batch1 = MemoryRecords.with_records([SimpleRecord(b"k", b"a", timestamp=10), SimpleRecord(b"k", b"b", timestamp=11)])
    batch2 = MemoryRecords.with_records([SimpleRecord(b"k", b"c", timestamp=20), SimpleRecord(b"k", b"d", timestamp=21),
                                         SimpleRecord(b"k", b"e", timestamp=22)])
    partition.append_records_to_leader(batch1, "client", 0)
    partition.append_records_to_leader(batch2, "client", 0)
    fetch_follower(partition, REMOTE2, 2)
    assert log.high_watermark == 2

    def offsets_for(timestamp, isolation):
        return partition.fetch_offset_for_timestamp(timestamp, isolation, -1, True)

    assert offsets_for(-1, None).offset == 5 and offsets_for(-1, 0).offset == 2
    assert offsets_for(30, 0) is None
    # Follower at epoch 6, then leader again at epoch 7: the epoch starts at 5 and the HW (2) lags it.
    partition.make_follower(lai_state(1, 6, [1, 2], [0, 1, 2], partition_epoch=2, is_new=False), {}, None)
    partition.make_leader(lai_state(BROKER, 7, [0, 1, 2], [0, 1, 2], partition_epoch=3, is_new=False), {}, None)
    assert (partition.leader_epoch_start_offset_opt, log.high_watermark) == (5, 2)
    with pytest.raises(OffsetNotAvailableException):
        offsets_for(-1, 0)
    assert offsets_for(-1, None).offset == 5
    assert offsets_for(-2, 0).offset == 0
    found = offsets_for(11, 0)
    assert (found.offset, found.timestamp) == (1, 11)
    with pytest.raises(OffsetNotAvailableException):
        offsets_for(30, 0)


def test_alter_partition_carries_isr_broker_epochs_in_kraft():
    """Mirrors Partition#addBrokerEpochToIsr (KIP-903, Kafka 3.5+): in KRaft mode an ISR expansion names each
    member with the broker epoch it fetched with (this broker: its own epoch); ZooKeeper mode sends -1."""
    from test_apply_delta import KRaftBroker, create_topic

    from kafka_ref.common.requests.alter_partition import BrokerState

    kb = KRaftBroker()
    create_topic(kb, leader=BROKER, replicas=(0, 1), isr=(0,))
    partition = kb.rm.online_partition(TP0)
    fetch_follower(partition, REMOTE, 0, replica_epoch=2)
    manager = kb.rm.alter_partition_manager
    (item,) = manager.unsent_isr_updates.values()
    request = manager.build_request([item])
    assert request.topics[0].partitions[0].new_isr_with_epochs == (
        BrokerState(broker_id=0, broker_epoch=manager.broker_epoch_supplier()), BrokerState(broker_id=1, broker_epoch=2))
    # ZooKeeper mode: every member at -1.
    broker, alter, zk_partition = setup()
    leader_log_with(broker)
    zk_partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1), {}, None)
    fetch_follower(zk_partition, REMOTE, 10, replica_epoch=7)
    assert len(alter.isr_updates) == 1
