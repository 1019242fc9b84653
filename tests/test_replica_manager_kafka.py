"""ReplicaManager tests ported from Kafka 3.8's kafka.server.ReplicaManagerTest (ZooKeeper request paths).

The tests already ported elsewhere (tests/test_replica_manager.py, test_apply_delta.py) are not
repeated. test_fetch_from_follower.py walks the KIP-392 flows end to end on a cluster; the
preferred-read-replica tests below are Kafka's own, on the ReplicaManager. Like Kafka's
``setupReplicaManagerWithMockedPurgatories`` each test wires broker 0 without running it:
MockTime, the purgatory timer advanced by hand (Kafka's MockTimer), brokers 0 and 1 alive in
the metadata cache.

Not ported (kafka_ref does not model what they test):
- testMaybeAddLogDirFetchersWithoutEpochCache, testMaybeAddLogDirFetchersPausingCleaning,
  testFencedErrorCausedByBecomeLeader, testReplicaNotAvailable, testReplicaAlterLogDirsWithAndWithoutIds:
  AlterReplicaLogDirs and the ReplicaAlterLogDirs fetchers (JBOD) are not modelled.
- testProducerIdCountMetrics, testPartitionsWithLateTransactionsCount, testFetchRequestRateMetrics,
  testOldLeaderLosesMetricsWhenReassignPartitions, testOldFollowerLosesMetricsWhenReassignPartitions:
  no Yammer/BrokerTopicStats metrics.
- testReadCommittedFetchLimitedAtLSO, testDelayedFetchIncludesAbortedTransactions and the
  transaction verification tests (testVerificationForTransactionalPartitionsOnly, testTransactionVerificationFlow,
  ...BlocksOutOfOrderSequence, ...GuardOnMultiplePartitions, testExceptionWhenUnverifiedTransactionHasMultipleProducerIds,
  ...WhenNotLeader, testDisabledTransactionVerification, ...DynamicDisablement, testVerificationErrorConversions,
  testPreVerificationError): transactions and AddPartitionsToTxnManager are not modelled.
- testFullLeaderAndIsrStrayPartitions, testUpdateStrayLogs, testFullLairDuringKRaftMigration*,
  testMetadataLogDirFailureInZkShouldNotHaltBroker: ZooKeeper-to-KRaft migration and several log dirs.
- testOffsetOutOfRangeExceptionWhenFetchMessages, testRemoteLogReaderMetrics, testRemoteFetchExpiresPerSecMetric,
  the *BuildRemoteLogAuxState* tests, testNotCallStopPartitionsForNonTieredTopics, testRemoteReadQuota*:
  tiered storage (testOffsetOutOfRangeExceptionWhenReadFromLog is in test_replica_manager.py without it).
- testActiveProducerState: DescribeProducers is not modelled.
- testPartitionListener: Partition listeners (maybeAddListener) are not modelled.
- testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate(Ibp26): Kafka checks truncation through
  a mocked log and a running fetcher; test_replica_manager.py covers the initial fetch offset rule.
- testGetOrCreatePartition*, testApplyDelta*, testDelta*, the KRaft variants: KRaft deltas, in
  tests/test_replica_manager_kafka_kraft.py and test_apply_delta.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from helpers_replica import (
    OTHER_TOPIC_ID,
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
    seed_log_data,
    stop_states,
    um_request,
    um_state,
)
from kafka_ref.common.errors import ConfigException, Errors
from kafka_ref.common.node import Node
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.replica_selector import ClientMetadata, ReplicaSelector, ReplicaView
from kafka_ref.common.requests.describe_log_dirs import DescribeLogDirsPartition, DescribeLogDirsTopic
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.log.disk import Disk
from kafka_ref.log.fetch_data import FetchIsolation, LogStartOffsetIncrementReason
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.fetcher.partition_fetch_state import InitialFetchState
from kafka_ref.replica.replica_manager import EPOCH_DURING_DELETE, OfflinePartition
from kafka_ref.server.log_dirs import describe_log_dirs


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


def test_highwater_mark_relative_directory_mapping():
    """Mirrors ReplicaManagerTest#testHighwaterMarkRelativeDirectoryMapping.

    The broker's log directory is a relative path ("data"): checkpointHighWatermarks still
    writes replication-offset-checkpoint inside it, with the partition's HW (0).
    """
    broker = make_broker(0, disk=Disk(0, log_dir="data"))
    tp = TopicPartition(TOPIC, 1)
    create_log(broker, tp=tp)
    broker.replica_manager.checkpoint_high_watermarks()
    assert "data/replication-offset-checkpoint" in broker.disk.files()
    assert broker.disk.replication_offset_checkpoint.read() == {tp: 0}


def test_checkpoint_hw_on_shutdown():
    """Mirrors ReplicaManagerTest#testCheckpointHwOnShutdown: shutdown(checkpointHW = true) calls
    checkpointHighWatermarks once (here with one log, whose HW 0 lands in the file)."""
    broker, rm = setup()
    create_log(broker)
    calls = []
    checkpoint = rm.checkpoint_high_watermarks

    def spy():
        calls.append("checkpoint")
        checkpoint()

    rm.checkpoint_high_watermarks = spy
    rm.shutdown(checkpoint_hw=True)
    assert calls == ["checkpoint"]
    assert broker.disk.replication_offset_checkpoint.read() == {TP0: 0}


# ------------------------------------------------------------------------------ KIP-392 read replica selection


RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


class MockReplicaSelector(ReplicaSelector):
    """Mirrors kafka.server.MockReplicaSelector (ReplicaManagerTest's helper): counts its
    selections, keeps the last partition view it was given, and always picks the leader."""

    def __init__(self):
        self.selection_count = 0
        self.partition_view = None

    def select(self, topic_partition, client_metadata, partition_view):
        self.selection_count += 1
        self.partition_view = partition_view
        return partition_view.leader


def setup_with_racks(props=None):
    """setupReplicaManagerWithMockedPurgatories plus the test's getPartitionReplicaEndpoints stub:
    broker 0 (the leader here) in rack-a, broker 1 in rack-b, both replicas of t-0."""
    broker = make_broker(0, props)
    request = um_request([um_state(0, 0, (0, 1), (0, 1))], brokers=(0, 1), controller_epoch=0)
    racks = {0: "rack-a", 1: "rack-b"}
    request = dataclasses.replace(
        request, live_brokers=tuple(dataclasses.replace(b, rack=racks[b.id]) for b in request.live_brokers))
    broker.replica_manager.maybe_update_metadata_cache(0, request)
    return broker, broker.replica_manager


def test_preferred_replica_as_follower():
    """Mirrors ReplicaManagerTest#testPreferredReplicaAsFollower.

    Broker 0 follows broker 1; a consumer with client metadata (v11+) reads from it at once,
    and the answer names no preferred read replica: only a leader computes one.
    """
    broker, rm = setup()
    become(rm, 1, 1, is_new=False, correlation_id=1)
    result = consumer_fetch(rm, 0, metadata=client_metadata("rack-a"), max_bytes=100000)
    answer = only(result)
    assert (answer.error, answer.preferred_read_replica, answer.high_watermark) == (Errors.NONE, None, 0)


def test_preferred_replica_as_leader():
    """Mirrors ReplicaManagerTest#testPreferredReplicaAsLeader: without a replica selector the leader
    answers the consumer itself (no preferred read replica)."""
    broker, rm = setup()
    become(rm, 0, 1, is_new=False, correlation_id=1)
    result = consumer_fetch(rm, 0, metadata=client_metadata("rack-a"), max_bytes=100000)
    answer = only(result)
    assert (answer.error, answer.preferred_read_replica) == (Errors.NONE, None)


def test_preferred_replica_as_leader_when_same_rack_follower_is_out_of_isr():
    """Mirrors ReplicaManagerTest#testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr.

    Leader 0 with ISR {0}; follower 1 (rack-b) fetched once, so its state is known. A rack-b
    consumer's fetch hands the selector only the leader's view (LEO 1, caught up 0 ms ago):
    a follower outside the ISR is never a candidate.
    """
    broker, rm = setup_with_racks()
    selector = rm.replica_selector = MockReplicaSelector()
    lai(rm, lai_state(0, 1, [0], [0, 1], controller_epoch=0, is_new=False), correlation_id=2)
    produced = rm_produce(rm, MemoryRecords.with_records([SimpleRecord(None, b"message")]), acks=-1)
    assert produced.value[TP0].error is Errors.NONE
    rm_fetch(rm, follower_params(1), (TP0, fetch_partition(0, log_start_offset=0, max_bytes=100000)))
    result = consumer_fetch(rm, 0, metadata=client_metadata("rack-b"), max_bytes=100000)
    assert only(result).error is Errors.NONE
    leader_node = Node(0, "localhost", 9092, "rack-a")
    assert selector.selection_count == 1
    assert selector.partition_view.replicas == frozenset({ReplicaView(leader_node, 1, 0)})


def test_fetch_from_follower_should_not_run_prefer_leader_select():
    """Mirrors ReplicaManagerTest#testFetchFromFollowerShouldNotRunPreferLeaderSelect: a follower
    answers a consumer without asking its selector (count 0) and names no preferred replica."""
    broker, rm = setup()
    selector = rm.replica_selector = MockReplicaSelector()
    become(rm, 1, 1, is_new=False, correlation_id=1)
    answer = only(consumer_fetch(rm, 0, metadata=client_metadata("rack-a"), max_bytes=100000))
    assert answer.error is Errors.NONE
    assert selector.selection_count == 0
    assert answer.preferred_read_replica is None


def test_fetch_should_return_immediately_when_preferred_read_replica_is_defined():
    """Mirrors ReplicaManagerTest#testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined.

    With the rack-aware selector, after follower 1 (rack-b) has fetched at offset 0, a rack-b
    consumer asking for min bytes 1 with a 5 s wait is answered at once with broker 1 as its
    preferred read replica; nothing is parked in the fetch purgatory.
    """
    broker, rm = setup_with_racks({"replica.selector.class": RACK_AWARE})
    lai(rm, lai_state(0, 1, [0, 1], [0, 1], controller_epoch=0, is_new=False), correlation_id=1)
    follower = rm_fetch(rm, follower_params(1), (TP0, fetch_partition(0, current_leader_epoch=1, log_start_offset=0,
                                                                       max_bytes=0x7FFFFFFF)))
    assert only(follower).error is Errors.NONE
    result = consumer_fetch(rm, 0, min_bytes=1, max_wait_ms=5000, metadata=client_metadata("rack-b"), max_bytes=100000)
    assert result.done
    assert rm.delayed_fetch_purgatory.watched() == 0
    assert (only(result).error, only(result).preferred_read_replica) == (Errors.NONE, 1)


def test_unknown_replica_selector():
    """Mirrors ReplicaManagerTest#testUnknownReplicaSelector: a replica.selector.class that names no
    selector stops the broker from being built (Kafka: ClassNotFoundException; here the config
    validation refuses it)."""
    with pytest.raises(ConfigException, match="replica.selector.class"):
        make_broker(0, {"replica.selector.class": "non-a-class"})


def test_default_replica_selector():
    """Mirrors ReplicaManagerTest#testDefaultReplicaSelector: no replica.selector.class, no selector."""
    broker, rm = setup()
    assert rm.replica_selector is None


def test_fetch_follower_not_allowed_for_older_clients():
    """Mirrors ReplicaManagerTest#testFetchFollowerNotAllowedForOlderClients.

    Broker 0 follows broker 1 at leader epoch 0. A consumer with client metadata (v11+) may
    read from it; one without (an older request) is answered NOT_LEADER_OR_FOLLOWER.
    """
    broker, rm = setup()
    create_log(broker)
    become(rm, 1, 0)
    metadata = ClientMetadata("", "", "", "User:ANONYMOUS", "")
    assert only(consumer_fetch(rm, 0, current_leader_epoch=0, metadata=metadata)).error is Errors.NONE
    refused = only(consumer_fetch(rm, 0, current_leader_epoch=0))
    # (createLogReadResult: every offset and the fetch time unknown.)
    assert (refused.error, refused.high_watermark, refused.leader_log_end_offset, refused.fetch_time_ms) == (
        Errors.NOT_LEADER_OR_FOLLOWER, -1, -1, -1)


# ------------------------------------------------------------------------------ topic ids and partition.metadata


def partition_metadata_topic_id(broker, tp=TP0):
    """What the partition.metadata file of the partition's directory records (None: no file)."""
    return broker.disk.logs[tp].partition_metadata_topic_id


def test_partition_metadata_file():
    """Mirrors ReplicaManagerTest#testPartitionMetadataFile: becoming leader with a topic id
    writes it to the new log's partition.metadata."""
    broker, rm = setup()
    response = lai(rm, lai_state(0, 0, [0, 1], [0, 1], controller_epoch=0))
    assert response.partition_errors({TOPIC_ID: TOPIC}) == {TP0: Errors.NONE.code}
    log = rm.online_partition(TP0).log
    assert log is not None and log.topic_id == TOPIC_ID
    assert partition_metadata_topic_id(broker) == TOPIC_ID


def test_partition_metadata_file_created_with_existing_log():
    """Mirrors ReplicaManagerTest#testPartitionMetadataFileCreatedWithExistingLog: a log created
    without an id has no partition.metadata; the first LeaderAndIsr with an id assigns it."""
    broker, rm = setup()
    log = broker.log_manager.get_or_create_log(TP0, is_new=True)
    assert rm.get_log(TP0) is log
    assert log.topic_id is None and partition_metadata_topic_id(broker) is None
    response = lai(rm, lai_state(0, 0, [0, 1], [0, 1], controller_epoch=0))
    assert response.partition_errors({TOPIC_ID: TOPIC}) == {TP0: Errors.NONE.code}
    assert rm.online_partition(TP0).log is log
    assert log.topic_id == TOPIC_ID and partition_metadata_topic_id(broker) == TOPIC_ID


def test_partition_metadata_file_not_created():
    """Mirrors ReplicaManagerTest#testPartitionMetadataFileNotCreated.

    No partition.metadata when the topic has no id in the request, when its id is the zero
    UUID, or when the request is older than version 5 (it carries no topic ids: the broker
    reads them as zero).
    """
    broker, rm = setup()
    fake, foo = TopicPartition("fakeTopic", 0), TopicPartition("foo", 0)
    ids = {TOPIC: ZERO_UUID, "foo": OTHER_TOPIC_ID}

    def request(epoch, name, version):
        return LeaderAndIsrRequest.build(
            controller_id=0, controller_epoch=0, broker_epoch=0,
            partition_states=[lai_state(0, epoch, [0, 1], [0, 1], topic=name, controller_epoch=0)],
            topic_ids=ids if version >= 5 else {}, live_leaders=(), version=version)

    for epoch, tp, version in ((0, fake, 7), (0, TP0, 7), (0, foo, 0), (1, foo, 4)):
        response = rm.become_leader_or_follower(0, request(epoch, tp.topic, version))
        assert response.partition_errors({ZERO_UUID: tp.topic}) == {tp: Errors.NONE.code}
        log = rm.online_partition(tp).log
        assert log is not None and log.topic_id is None
        assert partition_metadata_topic_id(broker, tp) is None
    assert rm.online_partition(foo).get_leader_epoch() == 1


@pytest.mark.parametrize("become_leader", [True, False])
def test_partition_marked_offline_if_log_cant_be_created(become_leader):
    """Mirrors ReplicaManagerTest#testPartitionMarkedOfflineIfLogCantBeCreated.

    The log directory breaks under the broker (Kafka deletes it; here its
    replication-offset-checkpoint becomes unreadable): the log is created, but reading its HW
    from the checkpoint fails, so the partition, to be leader or follower, is answered
    KAFKA_STORAGE_ERROR and hosted Offline. The Offline marker keeps the Partition, whose
    topic id is the request's (the log manager still holds the new log).
    """
    broker, rm = setup()
    broker.disk.replication_offset_checkpoint.content = "not a checkpoint\n"
    response = lai(rm, lai_state(0 if become_leader else 1, 0, [0, 1], [0, 1], controller_epoch=0))
    assert response.partition_errors({TOPIC_ID: TOPIC}) == {TP0: Errors.KAFKA_STORAGE_ERROR.code}
    hosted = rm.get_partition(TP0)
    assert isinstance(hosted, OfflinePartition)
    assert hosted.partition is not None and hosted.partition.topic_id == TOPIC_ID


FOO_UUID = Uuid(0x7C52_41C7_438E_406F, 0xA9E6_93E9_A692_C00A)


def test_fetcher_are_not_restarted_if_leader_epoch_is_not_bumped_with_zk_path():
    """Mirrors ReplicaManagerTest#testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithZkPath.

    Broker 0 follows 1 (leader epoch 0): its fetcher is removed then added at offset 0. A
    request that only bumps the partition epoch is fenced by the leader epoch on the ZK path:
    partition epoch stays 0 and the fetchers are not touched. A new leader epoch (leader 2)
    moves the fetcher again.
    """
    broker, rm = setup(alive=(0, 1, 2))
    foo = TopicPartition("foo", 0)
    fetchers = rm.replica_fetcher_manager
    calls = []
    remove, add = fetchers.remove_fetcher_for_partitions, fetchers.add_fetcher_for_partitions

    def record_remove(partitions):
        calls.append(("remove", set(partitions)))
        return remove(partitions)

    def record_add(states):
        calls.append(("add", dict(states)))
        return add(states)

    fetchers.remove_fetcher_for_partitions = record_remove
    fetchers.add_fetcher_for_partitions = record_add

    def request(replicas, leader, leader_epoch, isr, partition_epoch):
        state = lai_state(leader, leader_epoch, isr, replicas, topic="foo", partition_epoch=partition_epoch,
                          controller_epoch=0)
        return lai_request([state], controller_epoch=0, topic_ids={"foo": FOO_UUID})

    rm.become_leader_or_follower(0, request((0, 1), 1, 0, (0, 1), 0))
    partition = rm.online_partition(foo)
    assert (partition.is_leader, partition.get_leader_epoch(), partition.get_partition_epoch()) == (False, 0, 0)
    endpoint = broker.metadata_cache.get_alive_broker_node
    assert calls == [("remove", {foo}), ("add", {foo: InitialFetchState(FOO_UUID, endpoint(1), 0, 0)})]
    calls.clear()

    rm.become_leader_or_follower(0, request((0, 1, 2), 1, 0, (0, 1), 1))
    assert (partition.is_leader, partition.get_leader_epoch(), partition.get_partition_epoch()) == (False, 0, 0)
    assert calls == []

    rm.become_leader_or_follower(0, request((0, 1, 2), 2, 1, (0, 1, 2), 2))
    assert (partition.is_leader, partition.get_leader_epoch(), partition.get_partition_epoch()) == (False, 1, 2)
    assert calls == [("remove", {foo}), ("add", {foo: InitialFetchState(FOO_UUID, endpoint(2), 1, 0)})]


@pytest.mark.parametrize("starts_with_topic_id", [True, False])
def test_partition_fetch_state_updates_with_topic_id_changes(starts_with_topic_id):
    """Mirrors ReplicaManagerTest#testPartitionFetchStateUpdatesWithTopicIdChanges.

    Broker 0 follows 1; a second LeaderAndIsr at the same leader epoch that adds (or drops)
    the topic id updates the follower's fetch state to match.
    """
    broker, rm = setup()
    starting, ending = (TOPIC_ID, ZERO_UUID) if starts_with_topic_id else (ZERO_UUID, TOPIC_ID)
    for topic_id in (starting, ending):
        response = lai(rm, lai_state(1, 0, [0, 1], [0, 1], controller_epoch=0), topic_ids={TOPIC: topic_id})
        assert response.error_code == Errors.NONE.code
        fetcher = rm.replica_fetcher_manager.get_fetcher(TP0)
        assert fetcher is not None
        assert fetcher.fetch_state(TP0).topic_id == (None if topic_id == ZERO_UUID else TOPIC_ID)


# ------------------------------------------------------------------------------ DescribeLogDirs


def described_log(broker):
    """A follower-side log of t-0 with ten records, as prepareReplicaManagerAndLogManager's log."""
    partition = create_log(broker, topic_id=TOPIC_ID)
    seed_log_data(partition.log, 10, 3)
    return partition.log


def test_describe_log_dirs():
    """Mirrors ReplicaManagerTest#testDescribeLogDirs.

    One result per live log directory (one here), no error, the asked-for partition listed
    with its size. Kafka asserts total bytes > 0 and usable bytes >= 0 from the file store;
    an in-memory directory reports both as unknown (-1).
    """
    broker, rm = setup()
    log = described_log(broker)
    results = describe_log_dirs(rm, {TP0})
    assert len(results) == len(broker.log_manager.live_log_dirs) == 1
    [result] = results
    assert (result.error_code, result.log_dir, result.total_bytes, result.usable_bytes) == (
        Errors.NONE.code, broker.disk.log_dir, -1, -1)
    assert log.size > 0
    assert result.topics == (DescribeLogDirsTopic(name=TOPIC, partitions=(
        DescribeLogDirsPartition(partition_index=0, partition_size=log.size, offset_lag=0, is_future_key=False),)),)


def test_describe_log_dirs_without_any_partition_topic():
    """Mirrors ReplicaManagerTest#testDescribeLogDirsWithoutAnyPartitionTopic (KAFKA-16807, 3.8.0):
    asking only for a partition of a topic with no log here lists no topics at all; t, which has
    a log but none of whose partitions was asked for, is left out rather than listed empty."""
    broker, rm = setup()
    described_log(broker)
    [result] = describe_log_dirs(rm, {TopicPartition("none-topic", 0)})
    assert (result.error_code, result.topics) == (Errors.NONE.code, ())


# ------------------------------------------------------------------------------ StopReplica


def test_stop_replica_with_delete_partition_and_existing_partition_and_newer_leader_epoch_and_io_exception():
    """Mirrors ReplicaManagerTest#testStopReplicaWithDeletePartitionAndExistingPartitionAndNewerLeaderEpochAndIOException.

    Leader of t-0 at epoch 1 with two records, HW 2, log start offset 1, both checkpointed.
    Kafka then makes the log's partition.metadata flush fail; here the log's directory fails
    (the same KafkaStorageException while the log is renamed for deletion). A StopReplica
    with a newer epoch (2) and delete answers KAFKA_STORAGE_ERROR for the partition, NONE
    for the request; the partition is no longer hosted.
    """
    broker, rm = setup()
    partition = create_log(broker)
    become(rm, 0, 1, correlation_id=1)
    batch = MemoryRecords.with_records([SimpleRecord(b"k1", b"v1", timestamp=10), SimpleRecord(b"k2", b"v2", timestamp=11)])
    partition.append_records_to_leader(batch, "client", 0)
    log = partition.log
    log.update_high_watermark(2)
    log.maybe_increment_log_start_offset(1, LogStartOffsetIncrementReason.LEADER_OFFSET_INCREMENTED)
    broker.log_manager.checkpoint_recovery_offsets()
    broker.log_manager.checkpoint_log_start_offsets()
    assert broker.disk.recovery_point_checkpoint.read().get(TP0) == 1
    assert broker.disk.log_start_offset_checkpoint.read().get(TP0) == 1
    broker.disk.mark_offline("partition.metadata flush failed")
    result = rm.stop_replicas(1, 0, 0, stop_states({TP0: (2, True)}))
    assert result == ({TP0: Errors.KAFKA_STORAGE_ERROR}, Errors.NONE)
    assert rm.get_partition(TP0) is None
    assert broker.log_manager.get_log(TP0) is None
