"""kafka.cluster.ReplicaTest and kafka.cluster.AssignmentStateTest (Kafka 3.7).

ReplicaTest drives one Replica (the leader's record of a follower) directly; the KRaft cache it
consults for the follower's broker epoch is a real KRaftMetadataCache fed a registration with
epoch 1 (Kafka mocks it). AssignmentStateTest makes a Partition the leader with and without a
reassignment in progress.
"""

from __future__ import annotations

import pytest

from helpers_replica import broker_with_mock_alter, lai_state, new_partition
from kafka_ref.common.errors import NotLeaderOrFollowerException
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.image.delta import MetadataDelta
from kafka_ref.image.image import EMPTY_IMAGE, MetadataProvenance
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    RegisterBrokerRecord,
)
from kafka_ref.log.fetch_data import LogOffsetMetadata
from kafka_ref.replica.replica import UNKNOWN_OFFSET, Replica
from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_ref.server.metadata_cache import MetadataCache

BROKER_ID = 0
PARTITION = TopicPartition("foo", 0)
REPLICA_LAG_TIME_MAX_MS = 30000


def kraft_cache(broker_epoch: int) -> KRaftMetadataCache:
    """A KRaft cache holding broker 0, registered and unfenced with ``broker_epoch``."""
    delta = MetadataDelta(EMPTY_IMAGE)
    delta.replay(RegisterBrokerRecord(broker_id=BROKER_ID, broker_epoch=broker_epoch,
                                      end_points=(BrokerEndpoint(host="localhost", port=9092),)))
    delta.replay(BrokerRegistrationChangeRecord(broker_id=BROKER_ID, broker_epoch=broker_epoch,
                                                fenced=BrokerRegistrationFencingChange.UNFENCE))
    cache = KRaftMetadataCache(99)
    cache.set_image(delta.apply(MetadataProvenance(1, 1, 0)))
    return cache


class ReplicaHarness:
    """ReplicaTest's fixture: a Replica for broker 0, a MockTime, and a KRaft cache answering epoch 1."""

    def __init__(self) -> None:
        self.time = MockTime()
        self.cache = kraft_cache(1)
        self.replica = Replica(BROKER_ID, PARTITION)

    def update_fetch_state(self, follower_fetch_offset: int, follower_start_offset: int, leader_end_offset: int) -> int:
        now = self.time.milliseconds()
        self.replica.update_fetch_state_or_throw(LogOffsetMetadata(follower_fetch_offset), follower_start_offset, now,
                                                 leader_end_offset, 1, self.cache)
        return now

    def reset_replica_state(self, leader_end_offset: int, is_new_leader: bool, is_follower_in_sync: bool) -> int:
        now = self.time.milliseconds()
        self.replica.reset_replica_state(now, leader_end_offset, is_new_leader, is_follower_in_sync)
        return now

    def is_caught_up(self, leader_end_offset: int) -> bool:
        return self.replica.state_snapshot.is_caught_up(leader_end_offset, self.time.milliseconds(),
                                                        REPLICA_LAG_TIME_MAX_MS)

    def assert_state(self, *, log_start_offset, log_end_offset, last_caught_up_time_ms, last_fetch_leader_log_end_offset,
                     last_fetch_time_ms, broker_epoch=1):
        """Mirrors ReplicaTest#assertReplicaState."""
        s = self.replica.state_snapshot
        assert (s.log_start_offset, s.log_end_offset, s.last_caught_up_time_ms, s.last_fetch_leader_log_end_offset,
                s.last_fetch_time_ms, s.broker_epoch) == (log_start_offset, log_end_offset, last_caught_up_time_ms,
                                                          last_fetch_leader_log_end_offset, last_fetch_time_ms,
                                                          broker_epoch)


def test_initial_state():
    """Mirrors kafka.cluster.ReplicaTest#testInitialState (ReplicaState.Empty: the last fetch's leader LEO is 0)."""
    h = ReplicaHarness()
    h.assert_state(log_start_offset=UNKNOWN_OFFSET, log_end_offset=UNKNOWN_OFFSET, last_caught_up_time_ms=0,
                   last_fetch_leader_log_end_offset=0, last_fetch_time_ms=0, broker_epoch=None)


def test_update_fetch_state():
    """Mirrors kafka.cluster.ReplicaTest#testUpdateFetchState.

    Reaching the leader's LEO of the previous fetch makes the follower caught up as of that
    fetch; reaching the current LEO, as of this one.
    """
    h = ReplicaHarness()
    t1 = h.update_fetch_state(5, 1, 10)
    h.assert_state(log_start_offset=1, log_end_offset=5, last_caught_up_time_ms=0, last_fetch_leader_log_end_offset=10,
                   last_fetch_time_ms=t1)
    t2 = h.update_fetch_state(10, 2, 15)
    h.assert_state(log_start_offset=2, log_end_offset=10, last_caught_up_time_ms=t1,
                   last_fetch_leader_log_end_offset=15, last_fetch_time_ms=t2)
    t3 = h.update_fetch_state(15, 3, 15)
    h.assert_state(log_start_offset=3, log_end_offset=15, last_caught_up_time_ms=t3,
                   last_fetch_leader_log_end_offset=15, last_fetch_time_ms=t3)


@pytest.mark.parametrize("in_sync", [True, False])
def test_reset_replica_state_when_leader_is_reelected(in_sync):
    """Mirrors kafka.cluster.ReplicaTest#testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsInSync and
    #testResetReplicaStateWhenLeaderIsReelectedAndReplicaIsNotInSync: the offsets stay, the last fetch's
    leader LEO becomes the new epoch's start, and the times are now (in sync) or 0."""
    h = ReplicaHarness()
    h.update_fetch_state(10, 1, 10)
    reset_at = h.reset_replica_state(11, is_new_leader=False, is_follower_in_sync=in_sync)
    expected_time = reset_at if in_sync else 0
    h.assert_state(log_start_offset=1, log_end_offset=10, last_caught_up_time_ms=expected_time,
                   last_fetch_leader_log_end_offset=11, last_fetch_time_ms=expected_time)


@pytest.mark.parametrize("in_sync", [True, False])
def test_reset_replica_state_when_new_leader_is_elected(in_sync):
    """Mirrors kafka.cluster.ReplicaTest#testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIsInSync and
    #testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIsNotInSync: everything known is forgotten
    (offsets and the last fetch's leader LEO unknown, no broker epoch); caught up now (in sync) or never."""
    h = ReplicaHarness()
    h.update_fetch_state(10, 1, 10)
    reset_at = h.reset_replica_state(11, is_new_leader=True, is_follower_in_sync=in_sync)
    h.assert_state(log_start_offset=UNKNOWN_OFFSET, log_end_offset=UNKNOWN_OFFSET,
                   last_caught_up_time_ms=reset_at if in_sync else 0, last_fetch_leader_log_end_offset=UNKNOWN_OFFSET,
                   last_fetch_time_ms=0, broker_epoch=None)


def test_is_caught_up_when_replica_is_caught_up_to_log_end():
    """Mirrors kafka.cluster.ReplicaTest#testIsCaughtUpWhenReplicaIsCaughtUpToLogEnd: at the leader's LEO it
    stays caught up however long ago it fetched."""
    h = ReplicaHarness()
    assert not h.is_caught_up(10)
    h.update_fetch_state(10, 1, 10)
    assert h.is_caught_up(10)
    h.time.advance(REPLICA_LAG_TIME_MAX_MS + 1)
    assert h.is_caught_up(10)


def test_is_caught_up_when_replica_is_not_caught_up_to_log_end():
    """Mirrors kafka.cluster.ReplicaTest#testIsCaughtUpWhenReplicaIsNotCaughtUpToLogEnd: behind the leader's
    LEO it is caught up only within replica.lag.time.max.ms of its last caught-up time."""
    h = ReplicaHarness()
    assert not h.is_caught_up(10)
    h.update_fetch_state(5, 1, 10)
    assert not h.is_caught_up(10)
    h.update_fetch_state(10, 1, 15)
    assert h.is_caught_up(16)
    h.time.advance(REPLICA_LAG_TIME_MAX_MS + 1)
    assert not h.is_caught_up(16)


@pytest.mark.parametrize("is_kraft", [True, False])
def test_fence_stale_updates(is_kraft):
    """Mirrors kafka.cluster.ReplicaTest#testFenceStaleUpdates: with a KRaft cache holding epoch 2, a fetch at
    epoch 1 is refused (NOT_LEADER_OR_FOLLOWER) and changes nothing; a ZooKeeper cache checks nothing;
    epoch -1 (an older fetch version) is never refused."""
    cache = kraft_cache(2) if is_kraft else MetadataCache(BROKER_ID)
    replica = Replica(BROKER_ID, PARTITION)
    replica.update_fetch_state_or_throw(LogOffsetMetadata(5), 1, 1, 10, 2, cache)
    if is_kraft:
        with pytest.raises(NotLeaderOrFollowerException):
            replica.update_fetch_state_or_throw(LogOffsetMetadata(5), 2, 3, 10, 1, cache)
        assert (replica.log_start_offset, replica.last_fetch_time_ms, replica.state_snapshot.broker_epoch) == (1, 1, 2)
    else:
        replica.update_fetch_state_or_throw(LogOffsetMetadata(5), 2, 3, 10, 1, cache)
        assert replica.state_snapshot.broker_epoch == 1
    replica.update_fetch_state_or_throw(LogOffsetMetadata(5), 2, 4, 10, -1, cache)
    assert (replica.log_start_offset, replica.last_fetch_time_ms, replica.state_snapshot.broker_epoch) == (2, 4, -1)


# ------------------------------------------------------------------------------ AssignmentStateTest

B = 0  # AssignmentStateTest's brokerId (101 in Kafka)


@pytest.mark.parametrize("isr, replicas, adding, removing, is_under_replicated", [
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [], [], False),
    ([B, B + 1], [B, B + 1, B + 2], [], [], True),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [B + 3, B + 4], [B + 1], False),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [B + 3, B + 4], [], False),
    ([B, B + 1, B + 2], [B, B + 1, B + 2], [], [B + 1], False),
    ([B + 1, B + 2], [B + 1, B + 2], [B], [], False),
    ([B + 2, B + 3, B + 4], [B, B + 1, B + 2], [B + 3, B + 4, B + 5], [], False),
    ([B + 2, B + 3, B + 4], [B, B + 1, B + 2], [B + 3, B + 4, B + 5], [], False),
    ([B + 2, B + 3], [B, B + 1, B + 2], [B + 3, B + 4, B + 5], [], True),
    # A reassignment as a controller sends it (replicas include the ones being added): the
    # replication factor is that of the original replicas.
    ([B, B + 1, B + 2], [B, B + 1, B + 2, B + 3, B + 4, B + 5], [B + 3, B + 4, B + 5], [B, B + 1, B + 2], False),
    ([B, B + 1], [B, B + 1, B + 2, B + 3], [B + 3], [B + 2], True),
])
def test_partition_assignment_status(isr, replicas, adding, removing, is_under_replicated):
    """Mirrors kafka.cluster.AssignmentStateTest#testPartitionAssignmentStatus (its nine cases, then two with
    the adding replicas inside the replica list). A reassignment is in progress when replicas are
    being added or removed; the replication factor leaves out the replicas being added
    (OngoingReassignmentState#replicationFactor), so they do not make the partition under-replicated."""
    broker, _ = broker_with_mock_alter(B, alive=range(6))
    partition = new_partition(broker)
    partition.make_leader(lai_state(B, 6, isr, replicas, partition_epoch=1, controller_epoch=3, is_new=False,
                                    adding=adding, removing=removing), {}, None)
    assert partition.is_reassigning() == bool(adding or removing)
    assert all(partition.is_adding_replica(r) for r in adding)
    assert partition.is_adding_local_replica() == (B in adding)
    assert partition.is_under_replicated() == is_under_replicated
