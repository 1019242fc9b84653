"""ReplicaManager tests ported from Kafka 3.8's kafka.server.ReplicaManagerTest (ZooKeeper request paths).

The tests already ported elsewhere (tests/test_replica_manager.py, test_apply_delta.py,
test_fetch_from_follower.py) are not repeated. Like Kafka's ``setupReplicaManagerWithMockedPurgatories``
each test wires broker 0 without running it: MockTime, the purgatory timer advanced by hand
(Kafka's MockTimer), brokers 0 and 1 alive in the metadata cache.
"""

from __future__ import annotations

from helpers_replica import (
    TOPIC,
    TOPIC_ID,
    TP0,
    consumer_params,
    fetch_partition,
    follower_params,
    lai_request,
    lai_state,
    make_broker,
    new_partition,
    records,
    rm_fetch,
    rm_produce,
    stop_states,
    um_request,
    um_state,
)
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.replica_selector import ClientMetadata
from kafka_ref.log.fetch_data import FetchIsolation
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.replica_manager import EPOCH_DURING_DELETE


def setup(props=None, alive=(0, 1), broker_id=0):
    """Mirrors ReplicaManagerTest#setupReplicaManagerWithMockedPurgatories: brokers ``alive`` are live."""
    broker = make_broker(broker_id, props)
    states = [um_state(alive[0], 0, alive, alive)]
    broker.replica_manager.maybe_update_metadata_cache(0, um_request(states, brokers=alive, controller_epoch=0))
    return broker, broker.replica_manager


def lai(rm, *states, correlation_id=0, topic_ids=None):
    return rm.become_leader_or_follower(correlation_id, lai_request(states, controller_epoch=0, topic_ids=topic_ids))


def become(rm, leader, epoch, replicas=(0, 1), *, is_new=True, correlation_id=0):
    """A LeaderAndIsr for t-0 with ISR = replicas, as Kafka's tests build them (controller epoch 0)."""
    return lai(rm, lai_state(leader, epoch, replicas, replicas, controller_epoch=0, is_new=is_new),
               correlation_id=correlation_id)


def create_log(broker, tp=TP0, topic_id=None):
    """Mirrors ``replicaManager.createPartition(tp).createLogIfNotExists(isNew = false, ...)``."""
    partition = new_partition(broker, tp)
    partition.create_log_if_not_exists(False, False, broker.replica_manager.high_watermark_checkpoints(), topic_id)
    return partition


def expire(broker, ms):
    """MockTimer#advanceClock after MockTime moved ``ms``."""
    broker.time.advance(ms)
    return broker.timer.advance_clock()


def only(collector, tp=TP0):
    """The single partition's answer of a fetch (Kafka's fetchPartition callback asserts there is one)."""
    assert collector.done
    assert [t for t, _ in collector.value] == [tp]
    return collector.value[0][1]


def client_metadata(rack=""):
    return ClientMetadata(rack, "", "", "User:ANONYMOUS", "")


def consumer_fetch(rm, fetch_offset, *, current_leader_epoch=-1, max_wait_ms=0, min_bytes=1, metadata=None,
                   max_bytes=100):
    """Mirrors ReplicaManagerTest#fetchPartitionAsConsumer (read-uncommitted)."""
    params = FetchParams(replica_id=-1, replica_epoch=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                         max_bytes=1024 * 1024, isolation=FetchIsolation.HIGH_WATERMARK, client_metadata=metadata)
    return rm_fetch(rm, params, (TP0, fetch_partition(fetch_offset, current_leader_epoch=current_leader_epoch,
                                                      log_start_offset=0, max_bytes=max_bytes)))


# ------------------------------------------------------------------------------ high watermark checkpoint


def test_high_water_mark_directory_mapping():
    """Mirrors ReplicaManagerTest#testHighWaterMarkDirectoryMapping.

    A partition with a log, then checkpointHighWatermarks: the log directory holds the
    replication-offset-checkpoint file, with the partition's HW (0).
    """
    broker, rm = setup()
    create_log(broker, tp=TP0.__class__(TOPIC, 1))
    rm.checkpoint_high_watermarks()
    path = f"{broker.disk.log_dir}/replication-offset-checkpoint"
    assert path in broker.disk.files()
    assert broker.disk.replication_offset_checkpoint.read() == {TP0.__class__(TOPIC, 1): 0}


# ------------------------------------------------------------------------------ appendRecords


def test_receive_out_of_order_sequence_exception_with_log_start_offset():
    """Mirrors ReplicaManagerTest#testReceiveOutOfOrderSequenceExceptionWithLogStartOffset.

    Three idempotent batches (sequences 0-2) succeed; a batch with sequence 13 answers
    OUT_OF_ORDER_SEQUENCE_NUMBER carrying the partition's log start offset (0), not -1.
    """
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 0)
    producer_id, epoch = 234, 5

    def idempotent(sequence):
        return MemoryRecords.with_records([SimpleRecord(None, f"message {sequence}".encode())], producer_id=producer_id,
                                          producer_epoch=epoch, base_sequence=sequence)

    for sequence in range(3):
        assert rm_produce(rm, idempotent(sequence), acks=1).value[TP0].error is Errors.NONE
    assert rm.online_partition(TP0).log.log_start_offset == 0
    response = rm_produce(rm, idempotent(3 + 10), acks=-1).value[TP0]
    assert (response.error, response.log_start_offset) == (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 0)


# ------------------------------------------------------------------------------ DelayedFetch and leadership


def test_become_follower_while_old_client_fetch_in_purgatory():
    """Mirrors ReplicaManagerTest#testBecomeFollowerWhileOldClientFetchInPurgatory.

    A consumer fetch without a leader epoch or client metadata waits; becoming follower
    completes it at once with NOT_LEADER_OR_FOLLOWER.
    """
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    result = consumer_fetch(rm, 0, max_wait_ms=10)
    assert not result.done
    become(rm, 1, 2)
    assert only(result).error is Errors.NOT_LEADER_OR_FOLLOWER


def test_become_follower_while_new_client_fetch_in_purgatory():
    """Mirrors ReplicaManagerTest#testBecomeFollowerWhileNewClientFetchInPurgatory.

    A consumer with client metadata (may read from a follower) and leader epoch 1 waits;
    the new leader epoch 2 completes it with FENCED_LEADER_EPOCH.
    """
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    result = consumer_fetch(rm, 0, current_leader_epoch=1, max_wait_ms=10, metadata=client_metadata())
    assert not result.done
    become(rm, 1, 2)
    assert only(result).error is Errors.FENCED_LEADER_EPOCH


def test_fetch_from_leader_always_allowed():
    """Mirrors ReplicaManagerTest#testFetchFromLeaderAlwaysAllowed: with client metadata, with or without an epoch."""
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    assert only(consumer_fetch(rm, 0, current_leader_epoch=1, metadata=client_metadata())).error is Errors.NONE
    assert only(consumer_fetch(rm, 0, metadata=client_metadata())).error is Errors.NONE


def test_clear_fetch_purgatory_on_stop_replica():
    """Mirrors ReplicaManagerTest#testClearFetchPurgatoryOnStopReplica: a StopReplica (delete, EpochDuringDelete)
    answers the waiting fetch with NOT_LEADER_OR_FOLLOWER at once."""
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    result = consumer_fetch(rm, 0, current_leader_epoch=1, max_wait_ms=10)
    assert not result.done
    rm.stop_replicas(2, 0, 0, stop_states({TP0: (EPOCH_DURING_DELETE, True)}))
    assert only(result).error is Errors.NOT_LEADER_OR_FOLLOWER


def test_clear_produce_purgatory_on_stop_replica():
    """Mirrors ReplicaManagerTest#testClearProducePurgatoryOnStopReplica (sendProducerAppend: 3 records, acks=-1, timeout 10)."""
    broker, rm = setup()
    create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    result = rm_produce(rm, records(3), acks=-1, timeout=10)
    assert not result.done
    rm.stop_replicas(2, 0, 0, stop_states({TP0: (EPOCH_DURING_DELETE, True)}))
    assert result.value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_follower_fetch_with_default_selector_no_forced_hw_propagation():
    """Mirrors ReplicaManagerTest#testFollowerFetchWithDefaultSelectorNoForcedHwPropagation.

    The leader appends two records (acks=-1); follower 1 fetching at offset 2 gets the HW from
    before its fetch (0) and acks the produce. Its next fetch at 2 waits (min bytes 1000) and,
    when the timer expires it, carries the HW 2.
    """
    broker, rm = setup()
    become(rm, 0, 1, is_new=False, correlation_id=1)
    produced = rm_produce(rm, MemoryRecords.with_records([SimpleRecord(None, b"a"), SimpleRecord(None, b"b")]), acks=-1)
    first = rm_fetch(rm, follower_params(1, min_bytes=0), (TP0, fetch_partition(2, log_start_offset=0, max_bytes=100000)))
    assert only(first).high_watermark == 0
    assert produced.done and produced.value[TP0].error is Errors.NONE
    second = rm_fetch(rm, follower_params(1, min_bytes=1000, max_wait_ms=1000),
                      (TP0, fetch_partition(2, log_start_offset=0, max_bytes=100000)))
    assert not second.done
    expire(broker, 1001)
    assert only(second).high_watermark == 2


def test_replica_selector():
    """Mirrors ReplicaManagerTest#testReplicaSelector: without replica.selector.class the leader answers
    (findPreferredReadReplica gives None)."""
    broker, rm = setup(alive=(0, 1))
    partition = create_log(broker)
    partition.make_leader(lai_state(0, 1, [0, 1], [0, 1], controller_epoch=0, is_new=False), {}, None)
    metadata = client_metadata("rack-a")
    assert rm.find_preferred_read_replica(partition, metadata, -1, 1, broker.time.milliseconds()) is None
