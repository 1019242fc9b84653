"""Which ISR followers the leader counts as out of sync (Partition#getOutOfSyncReplicas).

Ports of Kafka 3.8.0's ``IsrExpirationTest``: brokers 0 (the leader) and 1, a partition created
by the ReplicaManager with every replica in the ISR, ``replica.lag.time.max.ms`` 100 and a leader
log end offset of 20. Kafka mocks the UnifiedLog to answer 20; here the leader's log holds 20
records. Kafka's createPartition then setLog and leaderReplicaIdOpt are done the same way.
"""

from __future__ import annotations

from helpers_replica import make_broker, new_partition, records
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import LogOffsetMetadata

REPLICA_LAG_TIME_MAX_MS = 100
REPLICA_FETCH_WAIT_MAX_MS = 100
LEADER_LOG_END_OFFSET = 20
TP = TopicPartition("foo", 0)


def _partition_with_all_replicas_in_isr(time: MockTime):
    """IsrExpirationTest#getPartitionWithAllReplicasInIsr."""
    broker = make_broker(0, {"replica.lag.time.max.ms": REPLICA_LAG_TIME_MAX_MS,
                             "replica.fetch.wait.max.ms": REPLICA_FETCH_WAIT_MAX_MS}, time=time)
    partition = new_partition(broker, TP)
    partition.log = broker.log_manager.get_or_create_log(TP, is_new=True)
    partition.log.append_as_leader(records(LEADER_LOG_END_OFFSET), leader_epoch=0)
    assert partition.log.log_end_offset == LEADER_LOG_END_OFFSET
    partition.update_assignment_and_isr(replicas=[0, 1], is_leader=True, isr=[0, 1], adding_replicas=[],
                                        removing_replicas=[], leader_recovery_state=0)
    # The followers' last caught-up time is now (a fetch at 0 while the leader's end was 0).
    for replica in partition.remote_replicas:
        replica.update_fetch_state_or_throw(LogOffsetMetadata(0), 0, time.milliseconds(), 0, 1)
    partition.leader_replica_id_opt = 0
    assert partition.in_sync_replica_ids == {0, 1}
    return partition


def _fetch(partition, time: MockTime, offset: int) -> None:
    for replica in partition.remote_replicas:
        replica.update_fetch_state_or_throw(LogOffsetMetadata(offset), 0, time.milliseconds(), LEADER_LOG_END_OFFSET, 1)


def test_isr_expiration_for_stuck_followers():
    """Mirrors IsrExpirationTest#testIsrExpirationForStuckFollowers: one short of the end, then silent."""
    time = MockTime()
    partition = _partition_with_all_replicas_in_isr(time)
    _fetch(partition, time, LEADER_LOG_END_OFFSET - 1)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()
    time.advance(150)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == {1}


def test_isr_expiration_if_no_fetch_request_made():
    """Mirrors IsrExpirationTest#testIsrExpirationIfNoFetchRequestMade."""
    time = MockTime()
    partition = _partition_with_all_replicas_in_isr(time)
    time.advance(150)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == {1}


def test_isr_expiration_for_slow_followers():
    """Mirrors IsrExpirationTest#testIsrExpirationForSlowFollowers: fetching but never reaching the
    end for more than the lag time is out of sync; one fetch to the end brings it back."""
    time = MockTime()
    partition = _partition_with_all_replicas_in_isr(time)
    _fetch(partition, time, LEADER_LOG_END_OFFSET - 2)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()
    time.advance(75)
    _fetch(partition, time, LEADER_LOG_END_OFFSET - 1)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()
    time.advance(75)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == {1}
    _fetch(partition, time, LEADER_LOG_END_OFFSET)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()


def test_isr_expiration_for_caught_up_followers():
    """Mirrors IsrExpirationTest#testIsrExpirationForCaughtUpFollowers: at the end, silence does not matter."""
    time = MockTime()
    partition = _partition_with_all_replicas_in_isr(time)
    _fetch(partition, time, LEADER_LOG_END_OFFSET)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()
    time.advance(150)
    assert partition.get_out_of_sync_replicas(REPLICA_LAG_TIME_MAX_MS) == set()
