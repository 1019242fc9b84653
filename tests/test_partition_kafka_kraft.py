"""kafka.cluster.PartitionTest (Kafka 3.7) cases whose leader reads a KRaft metadata cache: ISR
eligibility of fenced, shutting-down and re-registered brokers, broker epochs (KIP-903), and
the HW with such followers.

Kafka mocks KRaftMetadataCache; here a real one reads images built from registration records
(broker b registered with epoch b + 1 by test_apply_delta.KRaftBroker), and ISR changes go to a
MockAlterPartitionManager the test answers by hand. Kafka's broker 101 and its remote replicas
102, 103 are brokers 0, 1 and 2.
"""

from __future__ import annotations

import pytest

from helpers_replica import TP0, MockAlterPartitionManager, fetch_follower, lai_state, new_partition, seed_log_data
from kafka_ref.common.errors import Errors, NotLeaderOrFollowerException
from kafka_ref.common.requests.alter_partition import BrokerState
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    RegisterBrokerRecord,
)
from kafka_ref.log.fetch_data import LogOffsetMetadata
from kafka_ref.replica.replica import Replica
from kafka_ref.server.alter_partition_manager import AlterPartitionItem, AlterPartitionManager
from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache

BROKER = 0
REMOTE = 1
REMOTE2 = 2


def epoch_of(broker_id: int) -> int:
    """The broker epoch KRaftBroker registers ``broker_id`` with (Kafka's defaultBrokerEpoch)."""
    return broker_id + 1


def kraft_setup(brokers=(0, 1, 2)):
    """A KRaft broker (not running) whose new partition sends ISR changes to a MockAlterPartitionManager,
    with 10 records of leader epoch 4 in its log."""
    from test_apply_delta import KRaftBroker

    kb = KRaftBroker(brokers=brokers)
    alter = MockAlterPartitionManager()
    kb.rm.alter_partition_manager = alter
    kb.broker.alter_partition_manager = alter
    partition = new_partition(kb.broker)
    log = kb.broker.log_manager.get_or_create_log(TP0)
    seed_log_data(log, 10, 4)
    return kb, alter, partition, log


def fence(kb, broker_id: int, fenced: bool) -> None:
    change = BrokerRegistrationFencingChange.FENCE if fenced else BrokerRegistrationFencingChange.UNFENCE
    kb.apply(BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=epoch_of(broker_id), fenced=change))


def begin_controlled_shutdown(kb, broker_id: int) -> None:
    kb.apply(BrokerRegistrationChangeRecord(
        broker_id=broker_id, broker_epoch=epoch_of(broker_id),
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN))


def assert_replica_state(partition, replica_id, *, last_caught_up_time_ms, log_start_offset, log_end_offset,
                         broker_epoch=None):
    """Mirrors PartitionTest#assertReplicaState (the broker epoch only when given)."""
    state = partition.get_replica(replica_id).state_snapshot
    assert (state.last_caught_up_time_ms, state.log_end_offset, state.log_start_offset) == (
        last_caught_up_time_ms, log_end_offset, log_start_offset)
    if broker_epoch is not None:
        assert state.broker_epoch == broker_epoch


def sent_isr_with_epochs(item, local_broker_epoch: int) -> tuple[BrokerState, ...]:
    """What AlterPartitionManager puts on the wire for a captured change (LeaderAndIsr#isrWithBrokerEpoch)."""
    manager = AlterPartitionManager(BROKER, None, lambda: None, lambda: local_broker_epoch)
    request = manager.build_request([AlterPartitionItem(item.topic_partition, item.topic_id, item.leader_and_isr,
                                                        item.controller_epoch, item.callback, item.isr_broker_epochs)])
    return request.topics[0].partitions[0].new_isr_with_epochs


@pytest.mark.parametrize("broker_state", ["fenced", "shutdown", "unfenced"])
def test_high_watermark_increases_with_fenced_or_shutdown_follower(broker_state):
    """Mirrors kafka.cluster.PartitionTest#testHighWatermarkIncreasesWithFencedOrShutdownFollower.

    The controller shrinks the ISR to the leader while follower 1 is still caught up. A caught-up,
    ISR-eligible follower holds the HW back (it may join again); a fenced or shutting-down one is
    not eligible, so the HW moves to the leader's LEO.
    """
    kb, alter, partition, log = kraft_setup()
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1, controller_epoch=0,
                                           is_new=False), {}, None)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=kb.broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10)
    assert log.high_watermark == 10
    if broker_state == "fenced":
        fence(kb, REMOTE, True)
    elif broker_state == "shutdown":
        begin_controlled_shutdown(kb, REMOTE)
    seed_log_data(log, 10, 5)
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=2, controller_epoch=0,
                                           is_new=False), {}, None) is False
    assert partition.is_leader
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    assert partition.get_out_of_sync_replicas(partition.replica_lag_time_max_ms) == set()
    assert log.high_watermark == (10 if broker_state == "unfenced" else 20)


def test_isr_not_expanded_if_replica_is_fenced():
    """Mirrors kafka.cluster.PartitionTest#testIsrNotExpandedIfReplicaIsFencedOrShutdown (the "kraft" case;
    tests/test_partition.py mirrors the "zk" one).

    The controller refuses the expansion (INELIGIBLE_REPLICA) and the leader goes back to the
    committed ISR; while the leader's metadata has the follower fenced it does not try again; once
    unfenced, the next fetch expands the ISR.
    """
    kb, alter, partition, log = kraft_setup()
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1, controller_epoch=0), {}, None)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=kb.broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0, 1} and len(alter.isr_updates) == 1
    alter.fail_isr_update(Errors.INELIGIBLE_REPLICA)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    assert not partition.partition_state.is_inflight and len(alter.isr_updates) == 0
    fence(kb, REMOTE, True)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    assert not partition.partition_state.is_inflight and len(alter.isr_updates) == 0
    fence(kb, REMOTE, False)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0, 1}
    assert partition.partition_state.is_inflight and len(alter.isr_updates) == 1
    alter.complete_isr_update(1)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    assert not partition.partition_state.is_inflight and len(alter.isr_updates) == 0


def test_isr_not_expanded_if_replica_is_in_controlled_shutdown():
    """Mirrors kafka.cluster.PartitionTest#testIsrNotExpandedIfReplicaIsInControlledShutdown.

    As for a fenced follower, but the follower is in controlled shutdown. Kafka's mock simply
    stops saying "shutting down"; in a KRaft image a broker leaves controlled shutdown by
    registering again after its restart, with a new broker epoch (here 12), and fetches with it.
    """
    kb, alter, partition, log = kraft_setup()
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1, controller_epoch=0), {}, None)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=kb.broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0, 1} and len(alter.isr_updates) == 1
    alter.fail_isr_update(Errors.INELIGIBLE_REPLICA)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0}
    assert not partition.partition_state.is_inflight and len(alter.isr_updates) == 0
    begin_controlled_shutdown(kb, REMOTE)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert partition.maximal_isr == {0} and not partition.partition_state.is_inflight and len(alter.isr_updates) == 0
    kb.apply(RegisterBrokerRecord(broker_id=REMOTE, broker_epoch=12, fenced=False,
                                  end_points=(BrokerEndpoint(host="localhost", port=9093),)))
    assert not kb.broker.metadata_cache.is_broker_shutting_down(REMOTE)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=12)
    assert partition.partition_state.isr == {0} and partition.maximal_isr == {0, 1}
    assert partition.partition_state.is_inflight and len(alter.isr_updates) == 1
    alter.complete_isr_update(1)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    assert not partition.partition_state.is_inflight and len(alter.isr_updates) == 0


class _FirstEpochAnswerStale(KRaftMetadataCache):
    """A KRaft cache whose first answer for one broker's alive epoch is an older epoch: the race in which the
    broker re-registers right after its fetch passed the stale-epoch check (Kafka's test scripts its mock)."""

    def __init__(self, broker_id: int, image, stale_broker: int, stale_epoch: int) -> None:
        super().__init__(broker_id)
        self.set_image(image)
        self._stale = {stale_broker: stale_epoch}

    def get_alive_broker_epoch(self, broker_id: int) -> int | None:
        stale = self._stale.pop(broker_id, None)
        return stale if stale is not None else super().get_alive_broker_epoch(broker_id)


def test_isr_can_expanded_if_broker_epochs_match_with_kraft_metadata_cache():
    """Mirrors kafka.cluster.PartitionTest#testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache.

    A fetch with an epoch one below the registered one is recorded (the cache still answered that
    epoch when the fetch was checked) but does not make the follower ISR-eligible; the next fetch
    with the registered epoch does. The AlterPartition carries each member's broker epoch: this
    broker's own, follower 1's, and -1 for follower 2, which has not fetched from this leader.
    """
    kb, alter, partition, log = kraft_setup()
    wrong_epoch = epoch_of(REMOTE) - 1
    partition.metadata_cache = _FirstEpochAnswerStale(BROKER, kb.image, REMOTE, wrong_epoch)
    assert partition.make_leader(lai_state(BROKER, 5, [0, 2], [0, 1, 2], partition_epoch=1, controller_epoch=0), {}, None)
    assert partition.partition_state.isr == {0, 2} and partition.maximal_isr == {0, 2}
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=wrong_epoch)
    now = kb.broker.time.milliseconds()
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=now, log_start_offset=0, log_end_offset=10,
                         broker_epoch=wrong_epoch)
    assert partition.partition_state.isr == {0, 2} and partition.maximal_isr == {0, 2} and len(alter.isr_updates) == 0
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=now, log_start_offset=0, log_end_offset=10)
    assert partition.partition_state.isr == {0, 2} and partition.maximal_isr == {0, 1, 2} and len(alter.isr_updates) == 1
    assert sent_isr_with_epochs(alter.isr_updates[0], epoch_of(BROKER)) == (
        BrokerState(broker_id=BROKER, broker_epoch=epoch_of(BROKER)),
        BrokerState(broker_id=REMOTE, broker_epoch=epoch_of(REMOTE)),
        BrokerState(broker_id=REMOTE2, broker_epoch=-1))


def test_is_replica_isr_eligible_with_empty_replica_map():
    """Mirrors kafka.cluster.PartitionTest#testIsReplicaIsrEligibleWithEmptyReplicaMap.

    The topic is deleted while a follower's fetch is being handled: recording that fetch for a
    Replica the (now empty) partition no longer holds neither fails nor proposes an ISR change.
    """
    kb, alter, partition, log = kraft_setup(brokers=(0, 1))
    init = kb.broker.time.milliseconds()
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1, controller_epoch=0,
                                           is_new=False), {}, None)
    partition.delete()
    replica = Replica(REMOTE, TP0)
    partition.update_follower_fetch_state(replica, LogOffsetMetadata(0), 0, init, 0, epoch_of(REMOTE))
    assert partition.is_replica_isr_eligible(REMOTE) is False
    assert len(alter.isr_updates) == 0 and alter.submitted == 0
    assert partition.partition_state.isr == frozenset() and partition.log is None


def test_retried_alter_partition_keeps_the_broker_epochs_it_was_prepared_with():
    """Mirrors Partition#prepareIsrExpand and #addBrokerEpochToIsr (Kafka 3.5+, KIP-903): the members' broker
    epochs are taken when the change is prepared and travel in its LeaderAndIsr, so a retried change
    (after a retriable error) carries the same epochs even if a member fetched with a new one meanwhile.

    Follower 2, in the ISR but not yet heard from, counts as -1 when follower 1's expansion is
    prepared; its later fetch at epoch 3 does not change the retried request.
    """
    kb, alter, partition, log = kraft_setup()
    assert partition.make_leader(lai_state(BROKER, 5, [0, 2], [0, 1, 2], partition_epoch=1, controller_epoch=0), {}, None)
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    assert len(alter.isr_updates) == 1
    assert alter.isr_updates[0].isr_broker_epochs == {BROKER: -1, REMOTE: epoch_of(REMOTE), REMOTE2: -1}
    fetch_follower(partition, REMOTE2, 0, replica_epoch=epoch_of(REMOTE2))
    assert partition.get_replica(REMOTE2).state_snapshot.broker_epoch == epoch_of(REMOTE2)
    alter.fail_isr_update(Errors.UNKNOWN_SERVER_ERROR)
    assert len(alter.isr_updates) == 1 and alter.submitted == 2
    retried = alter.isr_updates[0]
    assert retried.leader_and_isr.isr == (0, 1, 2)
    assert sent_isr_with_epochs(retried, epoch_of(BROKER)) == (
        BrokerState(broker_id=BROKER, broker_epoch=epoch_of(BROKER)),
        BrokerState(broker_id=REMOTE, broker_epoch=epoch_of(REMOTE)),
        BrokerState(broker_id=REMOTE2, broker_epoch=-1))


def test_fence_follower_fetch_with_stale_broker_epoch_keeps_state():
    """Mirrors kafka.cluster.PartitionTest#testFenceFollowerFetchWithStaleBrokerEpoch with its assertions
    (tests/test_partition.py covers the never-fetched case and ZooKeeper mode): after a fetch at the
    registered epoch, one at an older epoch is refused and the follower's state stays as the first
    fetch left it, epoch included."""
    kb, _, partition, log = kraft_setup(brokers=(0, 1))
    assert partition.make_leader(lai_state(BROKER, 5, [0, 1], [0, 1], partition_epoch=1, controller_epoch=0), {}, None)
    assert partition.partition_state.isr == {0, 1} and partition.maximal_isr == {0, 1}
    fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE))
    with pytest.raises(NotLeaderOrFollowerException):
        fetch_follower(partition, REMOTE, log.log_end_offset, replica_epoch=epoch_of(REMOTE) - 1)
    assert_replica_state(partition, REMOTE, last_caught_up_time_ms=kb.broker.time.milliseconds(), log_start_offset=0,
                         log_end_offset=10, broker_epoch=epoch_of(REMOTE))


def test_zk_mode_isr_expansion_sends_no_broker_epochs():
    """Mirrors the ZooKeeper-mode check in kafka.cluster.PartitionTest#testIsrExpansion: with a ZooKeeper
    metadata cache every member of the proposed ISR goes out with broker epoch -1."""
    from helpers_replica import broker_with_mock_alter

    broker, alter = broker_with_mock_alter(BROKER)
    partition = new_partition(broker)
    seed_log_data(broker.log_manager.get_or_create_log(TP0), 10, 4)
    assert partition.make_leader(lai_state(BROKER, 5, [0], [0, 1], partition_epoch=1, controller_epoch=0), {}, None)
    fetch_follower(partition, REMOTE, 10, replica_epoch=epoch_of(REMOTE))
    (item,) = alter.isr_updates
    assert item.leader_and_isr.isr == (0, 1) and item.isr_broker_epochs is None
    assert sent_isr_with_epochs(item, 7) == (BrokerState(broker_id=0, broker_epoch=-1),
                                              BrokerState(broker_id=1, broker_epoch=-1))
