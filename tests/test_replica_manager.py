"""ReplicaManager tests (issue 3), mirroring kafka.server.ReplicaManagerTest (Kafka 3.x, ZooKeeper paths).

Synchronous: a KafkaBroker is wired but not running, time is a MockTime and the purgatory
timer is advanced by hand (ReplicaManagerTest's MockTimer). The same paths on a running broker
in virtual time (isr-expiration, a DelayedProduce timeout, the HW checkpoint task) are in
test_replica_path_cluster.py.
"""

from __future__ import annotations

import logging

import pytest
import structlog

from helpers_replica import (
    OTHER_TOPIC_ID,
    TOPIC,
    TOPIC_ID,
    TP0,
    TP1,
    consumer_params,
    fetch_partition,
    follower_params,
    lai_request,
    lai_state,
    make_broker,
    metadata_for,
    new_partition,
    records,
    rm_fetch,
    rm_produce,
    seed_log_data,
    stop_states,
    um_request,
    um_state,
)
from kafka_ref.common.errors import ControllerMovedException, Errors
from kafka_ref.common.state_change import configure_logging
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.replica.replica_manager import EPOCH_DURING_DELETE, NO_EPOCH, OfflinePartition

ERR = {e.code: e for e in Errors}


def setup(props=None, alive=(0, 1, 2), partitions=((TOPIC, 0, 0), (TOPIC, 1, 0))):
    """A non-running broker 0 whose metadata cache knows the brokers in ``alive`` and ``partitions``."""
    broker = make_broker(0, props)
    states = [um_state(leader, 0, alive, alive, topic=t, partition=p) for t, p, leader in partitions]
    broker.replica_manager.maybe_update_metadata_cache(0, um_request(states, brokers=alive))
    return broker, broker.replica_manager


def lai(rm, *states, controller_epoch=1, topic_ids=None, on_change=None, correlation_id=0):
    response = rm.become_leader_or_follower(correlation_id, lai_request(states, controller_epoch=controller_epoch,
                                                                        topic_ids=topic_ids), on_change)
    return response


def errors_of(response, names=None):
    names = names or {TOPIC_ID: TOPIC, ZERO_UUID: TOPIC}
    return {tp: ERR[code] for tp, code in response.partition_errors(names).items()}


produce = rm_produce
fetch = rm_fetch


def result_of(collector, tp=TP0):
    assert collector.done
    return dict(collector.value)[tp]


def offsets(recs):
    return [(b.base_offset, b.last_offset) for b in recs]


def expire(broker, ms):
    """Advance the MockTime and run whatever purgatory timeouts fell due (MockTimer#advanceClock)."""
    broker.time.advance(ms)
    return broker.timer.advance_clock()


# ------------------------------------------------------------------------------ becomeLeaderOrFollower


def test_stale_controller_epoch_rejects_whole_request():
    """Mirrors ReplicaManager#becomeLeaderOrFollower step 1 (ReplicaManagerTest's stale controller epoch cases)."""
    broker, rm = setup()
    assert lai(rm, lai_state(0, 0, [0, 1], [0, 1]), controller_epoch=2).error_code == 0
    assert rm.controller_epoch == 2
    response = lai(rm, lai_state(0, 1, [0, 1], [0, 1]), lai_state(0, 0, [0, 1], [0, 1], partition=1), controller_epoch=1)
    assert response.error_code == Errors.STALE_CONTROLLER_EPOCH.code
    assert errors_of(response) == {TP0: Errors.STALE_CONTROLLER_EPOCH, TP1: Errors.STALE_CONTROLLER_EPOCH}
    assert rm.get_partition(TP1) is None
    assert rm.online_partition(TP0).leader_epoch == 0
    assert rm.controller_epoch == 2


def test_inconsistent_id_returns_error():
    """Mirrors ReplicaManagerTest#testInconsistentIdReturnsError (Kafka 3.7): same epoch or a newer
    one, a topic id unlike the log's answers INCONSISTENT_TOPIC_ID for that partition only."""
    broker, rm = setup()
    assert errors_of(lai(rm, lai_state(0, 0, [0, 1], [0, 1], is_new=True))) == {TP0: Errors.NONE}
    assert errors_of(lai(rm, lai_state(0, 1, [0, 1], [0, 1], is_new=True))) == {TP0: Errors.NONE}
    other = {OTHER_TOPIC_ID: TOPIC}
    for epoch in (1, 2):
        response = lai(rm, lai_state(0, epoch, [0, 1], [0, 1], is_new=True), topic_ids={TOPIC: OTHER_TOPIC_ID})
        assert (response.error_code, errors_of(response, other)) == (0, {TP0: Errors.INCONSISTENT_TOPIC_ID})
    partition = rm.online_partition(TP0)
    assert (partition.leader_epoch, partition.topic_id, partition.log.topic_id) == (1, TOPIC_ID, TOPIC_ID)


def test_inconsistent_id_of_a_log_loaded_from_disk():
    """Mirrors Partition#topicId's fallback to LogManager#getLog (ReplicaManager#becomeLeaderOrFollower's
    topic id check, Kafka 3.7): after a restart the log on disk carries topic id X and no Partition
    holds it yet; a LeaderAndIsr naming the topic with id Y answers INCONSISTENT_TOPIC_ID for that
    partition only, the other partition of the request proceeds, and the log keeps id X."""
    broker, rm = setup()
    broker.log_manager.get_or_create_log(TP0, topic_id=OTHER_TOPIC_ID)
    response = lai(rm, lai_state(0, 0, [0, 1], [0, 1]), lai_state(0, 0, [0, 1], [0, 1], partition=1))
    assert (response.error_code, errors_of(response)) == (0, {TP0: Errors.INCONSISTENT_TOPIC_ID, TP1: Errors.NONE})
    p0 = rm.online_partition(TP0)
    assert (p0.log, p0.leader_epoch, p0.leader_replica_id_opt, p0.topic_id) == (None, -1, None, OTHER_TOPIC_ID)
    assert broker.log_manager.get_log(TP0).topic_id == OTHER_TOPIC_ID
    assert rm.online_partition(TP1).is_leader and rm.online_partition(TP1).topic_id == TOPIC_ID


def test_become_leader_or_follower_validation_matrix():
    """Mirrors ReplicaManager#becomeLeaderOrFollower step 2 and ReplicaManagerTest#testInconsistentIdReturnsError.

    Per partition: a topic id unlike the log's -> INCONSISTENT_TOPIC_ID; a leader epoch not
    newer -> STALE_CONTROLLER_EPOCH; this broker not a replica -> UNKNOWN_TOPIC_OR_PARTITION;
    an offline log dir -> KAFKA_STORAGE_ERROR; otherwise NONE.
    """
    broker, rm = setup()
    tps = [TopicPartition(TOPIC, i) for i in range(7)]
    # t-0's log already belongs to another incarnation of the topic.
    p0 = new_partition(broker, tps[0])
    p0.create_log_if_not_exists(True, False, {}, OTHER_TOPIC_ID)
    # t-1 and t-2 are at leader epoch 3 already.
    lai(rm, lai_state(0, 3, [0, 1], [0, 1], partition=1), lai_state(1, 3, [0, 1], [0, 1], partition=2))
    rm.mark_partition_offline(tps[4])
    response = lai(
        rm,
        lai_state(0, 5, [0, 1], [0, 1], partition=0),
        lai_state(0, 3, [0, 1], [0, 1], partition=1),
        lai_state(0, 2, [0, 1], [0, 1], partition=2),
        lai_state(1, 5, [1, 2], [1, 2], partition=3),
        lai_state(0, 5, [0, 1], [0, 1], partition=4),
        lai_state(0, 5, [0, 1], [0, 1], partition=5),
        lai_state(1, 5, [0, 1], [0, 1], partition=6),
    )
    assert response.error_code == 0
    assert errors_of(response) == {
        tps[0]: Errors.INCONSISTENT_TOPIC_ID,
        tps[1]: Errors.STALE_CONTROLLER_EPOCH,
        tps[2]: Errors.STALE_CONTROLLER_EPOCH,
        tps[3]: Errors.UNKNOWN_TOPIC_OR_PARTITION,
        tps[4]: Errors.KAFKA_STORAGE_ERROR,
        tps[5]: Errors.NONE,
        tps[6]: Errors.NONE,
    }
    assert p0.leader_epoch == -1 and p0.log.topic_id == OTHER_TOPIC_ID
    assert rm.online_partition(tps[1]).leader_epoch == 3
    assert rm.online_partition(tps[2]).leader_replica_id_opt == 1
    # Not a replica: a Partition object exists (created in step 2) but it has no log and no role.
    assert rm.online_partition(tps[3]).log is None and rm.online_partition(tps[3]).leader_epoch == -1
    assert isinstance(rm.get_partition(tps[4]), OfflinePartition)
    assert rm.online_partition(tps[5]).is_leader and rm.online_partition(tps[5]).topic_id == TOPIC_ID
    assert rm.online_partition(tps[6]).leader_replica_id_opt == 1


def test_same_leader_epoch_assigns_topic_id():
    """Mirrors ReplicaManagerTest#testPartitionMetadataFileCreatedAfterPreviousRequestWithoutIds."""
    broker, rm = setup()
    assert errors_of(lai(rm, lai_state(0, 0, [0, 1], [0, 1]), topic_ids={})) == {TP0: Errors.NONE}
    assert rm.online_partition(TP0).topic_id is None
    assert errors_of(lai(rm, lai_state(0, 0, [0, 1], [0, 1]))) == {TP0: Errors.NONE}
    assert rm.online_partition(TP0).topic_id == TOPIC_ID
    assert broker.log_manager.get_log(TP0).topic_id == TOPIC_ID
    # Same epoch again, the id is known now: nothing to do.
    assert errors_of(lai(rm, lai_state(0, 0, [0, 1], [0, 1]))) == {TP0: Errors.STALE_CONTROLLER_EPOCH}


def test_make_followers_leader_not_alive_creates_log_only():
    """Mirrors ReplicaManager#makeFollowers (KAFKA-1647): no transition without a live leader, but the log exists."""
    broker, rm = setup(alive=(0, 1))
    changes = []
    response = lai(rm, lai_state(2, 4, [0, 2], [0, 2]), on_change=lambda l, f: changes.append((set(l), set(f))))
    assert errors_of(response) == {TP0: Errors.NONE}
    partition = rm.online_partition(TP0)
    assert partition.leader_replica_id_opt is None and partition.leader_epoch == -1
    assert partition.log is not None and broker.log_manager.get_log(TP0) is partition.log
    assert rm.replica_fetcher_manager.get_fetcher(TP0) is None
    assert changes == [(set(), set())]


def test_make_leaders_and_make_followers_results():
    """Mirrors ReplicaManager#makeLeaders/#makeFollowers results as passed to onLeadershipChange."""
    broker, rm = setup()
    changes = []

    def on_change(leaders, followers):
        changes.append(({p.topic_partition for p in leaders}, {p.topic_partition for p in followers}))

    lai(rm, lai_state(0, 1, [0, 1], [0, 1]), lai_state(1, 1, [0, 1], [0, 1], partition=1), on_change=on_change)
    # Leader again at a new epoch (not a new leader) and follower at a new epoch (fetchers restart).
    lai(rm, lai_state(0, 2, [0, 1], [0, 1]), lai_state(1, 2, [0, 1], [0, 1], partition=1), on_change=on_change)
    # Leadership moves: t-0 to broker 1, t-1 to us.
    lai(rm, lai_state(1, 3, [0, 1], [0, 1]), lai_state(0, 3, [0, 1], [0, 1], partition=1), on_change=on_change)
    assert changes == [({TP0}, {TP1}), (set(), {TP1}), ({TP1}, {TP0})]


def test_become_follower_adds_fetcher_at_initial_fetch_offset():
    """Mirrors ReplicaManagerTest#testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate and
    ReplicaManager#initialFetchOffset (LEO with truncation on fetch, IBP >= 2.7; HW before)."""
    for ibp, expected in (("3.8", 6), ("2.6", 2)):
        broker, rm = setup({"inter.broker.protocol.version": ibp})
        partition = new_partition(broker)
        partition.create_log_if_not_exists(True, False, {}, None)
        seed_log_data(partition.log, 6, 0)
        partition.log.update_high_watermark(2)
        lai(rm, lai_state(1, 1, [0, 1], [0, 1]))
        state = rm.replica_fetcher_manager.get_fetcher(TP0).fetch_state(TP0)
        assert (state.fetch_offset, state.current_leader_epoch) == (expected, 1)
        # Same leader, but we missed an epoch: the fetcher restarts at the new epoch.
        lai(rm, lai_state(1, 3, [0, 1], [0, 1]))
        state = rm.replica_fetcher_manager.get_fetcher(TP0).fetch_state(TP0)
        assert state.current_leader_epoch == 3
        # Becoming leader removes the fetcher; step 8 shuts down the idle fetcher.
        lai(rm, lai_state(0, 4, [0, 1], [0, 1]))
        assert rm.replica_fetcher_manager.get_fetcher(TP0) is None
        assert rm.replica_fetcher_manager.fetcher_thread_map == {}


def test_high_watermark_checkpoint_task_starts_after_first_leader_and_isr():
    """Mirrors ReplicaManager#startHighWatermarkCheckPointThread (step 7: once, after the first LeaderAndIsr)."""
    broker, rm = setup()
    assert "highwatermark-checkpoint" not in broker.scheduler.scheduled
    lai(rm, lai_state(0, 0, [0], [0]))
    assert broker.scheduler.scheduled.count("highwatermark-checkpoint") == 1
    assert rm.hw_thread_initialized
    lai(rm, lai_state(0, 1, [0], [0]))
    assert broker.scheduler.scheduled.count("highwatermark-checkpoint") == 1
    # A stale request (refused whole) still counts as "a first LeaderAndIsr"? No: Kafka starts it only on success.
    broker2, rm2 = setup()
    lai(rm2, lai_state(0, 0, [0], [0]), controller_epoch=-1)
    assert "highwatermark-checkpoint" not in broker2.scheduler.scheduled


def test_become_leader_or_follower_walks_the_nine_steps():
    """Mirrors seed 000 §becomeLeaderOrFollower: the nine numbered steps, in order, with their effects.

    1 controller epoch check; 2 Partition objects created and checked (topic id, leader
    epoch, replica set); 3/4 split into leaders and followers; 5 makeLeaders (stop fetchers,
    become leader); 6 makeFollowers (become follower, stop fetchers, complete delayed
    requests, add fetchers); 7 HW checkpoint task; 8 idle fetchers shut down; 9
    onLeadershipChange.
    """
    configure_logging(logging.INFO)
    broker, rm = setup(partitions=[(TOPIC, i, 0) for i in range(4)])
    fm = rm.replica_fetcher_manager
    lai(rm, lai_state(0, 5, [0, 1], [0, 1], partition=3))  # t-3 is at leader epoch 5 already
    log = structlog.get_logger("test")

    def marker(name, fn):
        def wrapped(*args, **kwargs):
            log.info(name)
            return fn(*args, **kwargs)
        return wrapped

    fm.remove_fetcher_for_partitions = marker("remove_fetchers", fm.remove_fetcher_for_partitions)
    fm.add_fetcher_for_partitions = marker("add_fetchers", fm.add_fetcher_for_partitions)
    fm.shutdown_idle_fetcher_threads = marker("step8_shutdown_idle_fetchers", fm.shutdown_idle_fetcher_threads)
    broker.scheduler.schedule = marker("step7_schedule", broker.scheduler.schedule)
    rm.hw_thread_initialized = False
    seen = {}

    def on_change(leaders, followers):
        log.info("step9_on_leadership_change")
        seen["leaders"] = {p.topic_partition for p in leaders}
        seen["followers"] = {p.topic_partition for p in followers}
        # By step 9 the fetcher for the new follower exists and the checkpoint task is scheduled.
        seen["fetcher"] = fm.get_fetcher(TopicPartition(TOPIC, 1)) is not None
        seen["hw_task"] = rm.hw_thread_initialized

    with structlog.testing.capture_logs() as events:
        response = rm.become_leader_or_follower(7, lai_request([
            lai_state(0, 1, [0, 1], [0, 1], partition=0),
            lai_state(1, 1, [0, 1], [0, 1], partition=1),
            lai_state(1, 1, [1, 2], [1, 2], partition=2),
            lai_state(0, 5, [0, 1], [0, 1], partition=3),
        ], controller_epoch=3), on_change)
    names = [e["event"] for e in events]
    wanted = ["leader_and_isr_received", "leader_and_isr_not_in_replicas", "leader_and_isr_same_leader_epoch",
              "remove_fetchers", "stopped_fetchers_for_become_leader", "become_leader", "become_follower",
              "remove_fetchers", "stopped_fetchers_for_become_follower", "add_fetchers", "step7_schedule",
              "step8_shutdown_idle_fetchers", "step9_on_leadership_change", "leader_and_isr_finished"]
    assert [n for n in names if n in set(wanted)] == wanted
    # Step 1: the controller epoch was adopted.
    assert rm.controller_epoch == 3
    # Step 2: every partition now has a Partition object; the per-partition checks answered.
    assert errors_of(response) == {TopicPartition(TOPIC, 0): Errors.NONE, TopicPartition(TOPIC, 1): Errors.NONE,
                                   TopicPartition(TOPIC, 2): Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                   TopicPartition(TOPIC, 3): Errors.STALE_CONTROLLER_EPOCH}
    assert all(rm.online_partition(TopicPartition(TOPIC, i)) is not None for i in range(4))
    # Steps 3-6: roles.
    assert rm.online_partition(TopicPartition(TOPIC, 0)).is_leader
    assert rm.online_partition(TopicPartition(TOPIC, 1)).leader_replica_id_opt == 1
    # Steps 7 and 9.
    assert seen == {"leaders": {TopicPartition(TOPIC, 0)}, "followers": {TopicPartition(TOPIC, 1)},
                    "fetcher": True, "hw_task": True}
    state_events = [e for e in events if e["event"] in ("become_leader", "become_follower")]
    assert [(e["event"], e["topic_partition"], e["leader_epoch"]) for e in state_events] == [
        ("become_leader", "t-0", 1), ("become_follower", "t-1", 1)]
    received = next(e for e in events if e["event"] == "leader_and_isr_received")
    assert (received["controller_epoch"], received["correlation_id"], received["broker_id"]) == (3, 7, 0)


# ------------------------------------------------------------------------------ StopReplica


def test_stop_replica_with_stale_controller_epoch():
    """Mirrors ReplicaManagerTest#testStopReplicaWithStaleControllerEpoch."""
    broker, rm = setup()
    lai(rm, lai_state(0, 1, [0, 1], [0, 1]), controller_epoch=5)
    assert rm.stop_replicas(0, 3000, 4, stop_states({TP0: (2, True)})) == ({}, Errors.STALE_CONTROLLER_EPOCH)
    assert rm.online_partition(TP0) is not None


def test_stop_replica_with_offline_partition():
    """Mirrors ReplicaManagerTest#testStopReplicaWithOfflinePartition."""
    broker, rm = setup()
    lai(rm, lai_state(0, 1, [0, 1], [0, 1]))
    rm.mark_partition_offline(TP0)
    assert rm.stop_replicas(0, 3000, 1, stop_states({TP0: (2, True)})) == ({TP0: Errors.KAFKA_STORAGE_ERROR}, Errors.NONE)


@pytest.mark.parametrize("delete, io_error, expected", [
    (False, False, Errors.NONE), (True, False, Errors.NONE), (True, True, Errors.KAFKA_STORAGE_ERROR)])
def test_stop_replica_with_inexistent_partition(delete, io_error, expected):
    """Mirrors ReplicaManagerTest#testStopReplicaWithInexistentPartition and
    #testStopReplicaWithInexistentPartitionAndPartitionsDeleteAndIOException.

    A log left over from a topic deleted while the broker was down is deleted although no
    Partition hosts it. When its directory has failed (Kafka replaces it with a file) the
    rename for deletion fails: KAFKA_STORAGE_ERROR, and the log manager has forgotten the log.
    """
    broker, rm = setup()
    broker.log_manager.get_or_create_log(TP0)
    if io_error:
        broker.disk.mark_offline("test")
    result = rm.stop_replicas(0, 3000, 1, stop_states({TP0: (EPOCH_DURING_DELETE, delete)}))
    assert result == ({TP0: expected}, Errors.NONE)
    if not io_error:
        assert (broker.log_manager.get_log(TP0) is None) is delete
        assert (TP0 in broker.disk.logs) is not delete
    else:
        assert broker.log_manager.get_log(TP0) is None


@pytest.mark.parametrize("leader_epoch, delete, expected", [
    (2, False, Errors.NONE), (2, True, Errors.NONE),
    (0, False, Errors.FENCED_LEADER_EPOCH), (0, True, Errors.FENCED_LEADER_EPOCH),
    (1, False, Errors.NONE), (1, True, Errors.NONE),
    (EPOCH_DURING_DELETE, False, Errors.NONE), (EPOCH_DURING_DELETE, True, Errors.NONE),
    (NO_EPOCH, False, Errors.NONE), (NO_EPOCH, True, Errors.NONE),
])
def test_stop_replica_with_existing_partition(leader_epoch, delete, expected):
    """Mirrors ReplicaManagerTest#testStopReplicaWithExistingPartitionAnd{NewerLeaderEpoch, OlderLeaderEpoch,
    EqualLeaderEpoch, DeleteSentinel, LeaderEpochNotProvided}.

    Kafka 3.x stops the replica when the request's epoch is the -2 (EpochDuringDelete) or -1
    (NoEpoch) sentinel or >= the current one (an equal epoch is accepted since 3.x), and
    answers FENCED_LEADER_EPOCH for an older one.
    """
    broker, rm = setup()
    lai(rm, lai_state(1, 1, [0, 1], [0, 1]))
    partition = rm.online_partition(TP0)
    seed_log_data(partition.log, 3, 1)
    rm.checkpoint_high_watermarks()
    broker.log_manager.checkpoint_recovery_offsets()
    assert rm.replica_fetcher_manager.get_fetcher(TP0) is not None
    result = rm.stop_replicas(0, 3000, 1, stop_states({TP0: (leader_epoch, delete)}))
    assert result == ({TP0: expected}, Errors.NONE)
    if expected is Errors.NONE:
        assert rm.replica_fetcher_manager.get_fetcher(TP0) is None
        if delete:
            assert rm.get_partition(TP0) is None
            assert broker.log_manager.get_log(TP0) is None and TP0 not in broker.disk.logs
            assert TP0 not in broker.disk.recovery_point_checkpoint.read()
            assert TP0 not in broker.disk.log_start_offset_checkpoint.read()
        else:
            assert rm.online_partition(TP0) is partition and partition.log is not None
    else:
        assert rm.online_partition(TP0) is partition
        assert rm.replica_fetcher_manager.get_fetcher(TP0) is not None


def test_stop_replica_completes_delayed_operations():
    """Mirrors ReplicaManager#stopPartitions step 3: waiting produce and fetch requests complete at once."""
    broker, rm = setup()
    lai(rm, lai_state(0, 1, [0, 1], [0, 1]))
    waiting_produce = produce(rm, records(2), acks=-1, timeout=30000)
    waiting_fetch = fetch(rm, consumer_params(max_wait_ms=30000, min_bytes=100000), (TP0, fetch_partition(0)))
    assert not waiting_produce.done and not waiting_fetch.done
    assert rm.delayed_produce_purgatory.num_delayed() == 1 and rm.delayed_fetch_purgatory.num_delayed() == 1
    rm.stop_replicas(0, 3000, 1, stop_states({TP0: (EPOCH_DURING_DELETE, True)}))
    assert waiting_produce.value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert waiting_produce.value[TP0].base_offset == 0
    assert result_of(waiting_fetch).error is Errors.NOT_LEADER_OR_FOLLOWER
    assert rm.delayed_produce_purgatory.num_delayed() == 0 and rm.delayed_fetch_purgatory.num_delayed() == 0


# ------------------------------------------------------------------------------ UpdateMetadata


def test_update_metadata_from_old_controller_is_refused():
    """Mirrors ReplicaManager#maybeUpdateMetadataCache (ControllerMovedException = STALE_CONTROLLER_EPOCH)."""
    broker, rm = setup()
    rm.maybe_update_metadata_cache(1, um_request([], controller_epoch=4))
    with pytest.raises(ControllerMovedException):
        rm.maybe_update_metadata_cache(2, um_request([], brokers=(0,), controller_epoch=3))
    assert sorted(broker.metadata_cache.alive_brokers) == [0, 1, 2]


# ------------------------------------------------------------------------------ appendRecords


def test_illegal_required_acks():
    """Mirrors ReplicaManagerTest#testIllegalRequiredAcks."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0], [0]))
    result = produce(rm, records(1), acks=3)
    assert result.value[TP0].error is Errors.INVALID_REQUIRED_ACKS
    assert rm.online_partition(TP0).log.log_end_offset == 0


def test_append_with_acks_zero_and_one_answers_at_once():
    """Mirrors ReplicaManager#appendRecords: acks 0 and 1 answer after the local append."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    first = produce(rm, records(3), acks=1)
    second = produce(rm, records(2), acks=0)
    assert (first.value[TP0].error, first.value[TP0].base_offset, first.value[TP0].log_start_offset) == (Errors.NONE, 0, 0)
    assert (second.value[TP0].error, second.value[TP0].base_offset) == (Errors.NONE, 3)
    log = rm.online_partition(TP0).log
    assert (log.log_end_offset, log.high_watermark) == (5, 0)
    assert rm.delayed_produce_purgatory.num_delayed() == 0


def test_acks_all_waits_for_the_isr():
    """Mirrors ReplicaManager#appendRecords + DelayedProduce: acks=-1 answers once the HW passes the records."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1, 2], [0, 1, 2]))
    waiting = produce(rm, records(3), acks=-1)
    assert not waiting.done and rm.delayed_produce_purgatory.num_delayed() == 1
    fetch(rm, follower_params(1), (TP0, fetch_partition(3, current_leader_epoch=0, log_start_offset=0)))
    assert not waiting.done and rm.online_partition(TP0).log.high_watermark == 0
    fetch(rm, follower_params(2), (TP0, fetch_partition(2, current_leader_epoch=0, log_start_offset=0)))
    assert not waiting.done and rm.online_partition(TP0).log.high_watermark == 2
    fetch(rm, follower_params(2), (TP0, fetch_partition(3, current_leader_epoch=0, log_start_offset=0)))
    assert waiting.calls == 1
    assert (waiting.value[TP0].error, waiting.value[TP0].base_offset) == (Errors.NONE, 0)
    assert rm.online_partition(TP0).log.high_watermark == 3


def test_not_enough_replicas_before_append():
    """Mirrors Partition#appendRecordsToLeader via ReplicaManager: NOT_ENOUGH_REPLICAS, nothing written."""
    broker, rm = setup({"min.insync.replicas": 2})
    lai(rm, lai_state(0, 0, [0], [0, 1]))
    result = produce(rm, records(3), acks=-1)
    assert result.value[TP0].error is Errors.NOT_ENOUGH_REPLICAS and result.value[TP0].base_offset == -1
    assert rm.online_partition(TP0).log.log_end_offset == 0
    assert rm.delayed_produce_purgatory.num_delayed() == 0
    assert produce(rm, records(3), acks=1).value[TP0].error is Errors.NONE


@pytest.mark.parametrize("version, expected", [("3.6", Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND), ("3.7", Errors.REQUEST_TIMED_OUT)])
def test_not_enough_replicas_after_append(version, expected):
    """Mirrors DelayedProduce#tryComplete / Partition#checkEnoughReplicasReachOffset.

    The ISR shrinks below min.insync.replicas while acks=-1 records wait. A broker before 3.7.0
    lets the leader alone move the HW and the produce answers NOT_ENOUGH_REPLICAS_AFTER_APPEND;
    a 3.7.0+ broker (KAFKA-15583, ``kafka_ref.broker.version``) keeps the HW and the produce times out.
    """
    broker, rm = setup({"min.insync.replicas": 2, "inter.broker.protocol.version": "3.6", "kafka_ref.broker.version": version})
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    waiting = produce(rm, records(3), acks=-1, timeout=1000)
    assert not waiting.done
    # The controller removes follower 1 from the ISR (ZooKeeper mode bumps the leader epoch).
    lai(rm, lai_state(0, 1, [0], [0, 1], partition_epoch=1))
    if expected is Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        assert waiting.value[TP0].error is expected and waiting.value[TP0].base_offset == 0
        assert rm.online_partition(TP0).log.high_watermark == 3
    else:
        assert not waiting.done and rm.online_partition(TP0).log.high_watermark == 0
        assert expire(broker, 1000) == 1
        assert waiting.value[TP0].error is expected


def test_delayed_produce_times_out_with_request_timed_out():
    """Mirrors DelayedProduce#onExpiration: still-pending partitions answer REQUEST_TIMED_OUT."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    waiting = produce(rm, records(2), acks=-1, timeout=500)
    assert expire(broker, 499) == 0 and not waiting.done
    assert expire(broker, 1) == 1
    status = waiting.value[TP0]
    assert (status.error, status.base_offset) == (Errors.REQUEST_TIMED_OUT, 0)
    assert rm.online_partition(TP0).log.log_end_offset == 2
    assert rm.delayed_produce_purgatory.num_delayed() == 0


def test_append_errors_per_partition():
    """Mirrors ReplicaManager#appendToLocalLog: internal topics, unknown and non-leader partitions answer errors."""
    broker, rm = setup()
    lai(rm, lai_state(1, 0, [0, 1], [0, 1]))
    assert produce(rm, records(1), acks=1, tp=TopicPartition("__consumer_offsets", 0)).value[
        TopicPartition("__consumer_offsets", 0)].error is Errors.INVALID_TOPIC_EXCEPTION
    assert produce(rm, records(1), acks=1).value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert produce(rm, records(1), acks=1, tp=TP1).value[TP1].error is Errors.NOT_LEADER_OR_FOLLOWER
    unknown = TopicPartition("nope", 0)
    assert produce(rm, records(1), acks=-1, tp=unknown).value[unknown].error is Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_clear_purgatory_on_becoming_follower():
    """Mirrors ReplicaManagerTest#testClearPurgatoryOnBecomingFollower."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    waiting_produce = produce(rm, records(1), acks=-1, timeout=30000)
    waiting_fetch = fetch(rm, consumer_params(max_wait_ms=1000, min_bytes=100000), (TP0, fetch_partition(0)))
    assert not waiting_produce.done and not waiting_fetch.done
    lai(rm, lai_state(1, 1, [0, 1], [0, 1]))
    assert waiting_produce.value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert result_of(waiting_fetch).error is Errors.NOT_LEADER_OR_FOLLOWER


# ------------------------------------------------------------------------------ fetchMessages


def test_fetch_beyond_high_watermark():
    """Mirrors ReplicaManagerTest#testFetchBeyondHighWatermark: consumers get an empty result, not an error."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1, 2], [0, 1, 2]))
    for _ in range(2):
        assert produce(rm, records(1), acks=1).value[TP0].error is Errors.NONE
    follower = result_of(fetch(rm, follower_params(1), (TP0, fetch_partition(1))))
    assert follower.error is Errors.NONE and offsets(follower.info.records) == [(1, 1)]
    consumer = result_of(fetch(rm, consumer_params(), (TP0, fetch_partition(1))))
    assert consumer.error is Errors.NONE and consumer.info.records.size_in_bytes == 0
    assert consumer.high_watermark == 0


def test_consumer_reads_up_to_hw_and_follower_up_to_leo():
    """Mirrors ReplicaManager#readFromLog with FetchIsolation HIGH_WATERMARK (consumer) and LOG_END (follower)."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    for n in (2, 3, 1):
        produce(rm, records(n), acks=1)
    fetch(rm, follower_params(1), (TP0, fetch_partition(2)))
    log = rm.online_partition(TP0).log
    assert (log.log_end_offset, log.high_watermark) == (6, 2)
    consumer = result_of(fetch(rm, consumer_params(), (TP0, fetch_partition(0))))
    assert offsets(consumer.info.records) == [(0, 1)] and consumer.high_watermark == 2
    follower = result_of(fetch(rm, follower_params(1), (TP0, fetch_partition(0))))
    assert offsets(follower.info.records) == [(0, 1), (2, 4), (5, 5)]


def test_fetch_messages_when_not_follower_for_one_partition():
    """Mirrors ReplicaManagerTest#testFetchMessagesWhenNotFollowerForOnePartition.

    The response carries the HW from before this fetch moved it; the partition this follower
    does not replicate answers UNKNOWN_LEADER_EPOCH without disturbing the other.
    """
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]), lai_state(0, 0, [0, 2], [0, 2], partition=1))
    for _ in range(2):
        produce(rm, records(1), acks=1, tp=TP0)
        produce(rm, records(1), acks=1, tp=TP1)
    result = fetch(rm, follower_params(1, max_wait_ms=1000, min_bytes=0),
                   (TP0, fetch_partition(1, current_leader_epoch=0, log_start_offset=0)),
                   (TP1, fetch_partition(1, current_leader_epoch=0, log_start_offset=0, partition=1)))
    by_tp = dict(result.value)
    assert set(by_tp) == {TP0, TP1}
    assert (by_tp[TP0].high_watermark, by_tp[TP0].last_stable_offset, by_tp[TP0].error) == (0, 0, Errors.NONE)
    assert offsets(by_tp[TP0].info.records) == [(1, 1)]
    assert by_tp[TP1].error is Errors.UNKNOWN_LEADER_EPOCH
    assert rm.online_partition(TP0).log.high_watermark == 1
    assert rm.online_partition(TP1).log.high_watermark == 0


def test_follower_state_not_updated_if_log_read_fails():
    """Mirrors ReplicaManagerTest#testFollowerStateNotUpdatedIfLogReadFails."""
    broker, rm = setup(alive=(0, 1))
    lai(rm, lai_state(0, 5, [0, 1], [0, 1]))
    follower = rm.online_partition(TP0).get_replica(1)
    assert (follower.log_start_offset, follower.log_end_offset) == (-1, -1)
    for _ in range(5):
        assert produce(rm, records(1), acks=1).value[TP0].error is Errors.NONE
    valid = result_of(fetch(rm, follower_params(1), (TP0, fetch_partition(0, current_leader_epoch=5, log_start_offset=0))))
    assert valid.error is Errors.NONE
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)
    fenced = result_of(fetch(rm, follower_params(1), (TP0, fetch_partition(3, current_leader_epoch=4, log_start_offset=0))))
    assert fenced.error is Errors.FENCED_LEADER_EPOCH
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)
    diverging = result_of(fetch(rm, follower_params(1, max_wait_ms=1000), (
        TP0, fetch_partition(3, current_leader_epoch=5, last_fetched_epoch=4, log_start_offset=0))))
    assert diverging.error is Errors.NONE and diverging.diverging_epoch is not None
    # Epoch 4 is older than anything the leader has: it ends where epoch 5 starts.
    assert (diverging.diverging_epoch.leader_epoch, diverging.diverging_epoch.end_offset) == (4, 0)
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)


def test_fetch_messages_with_inconsistent_topic_id():
    """Mirrors ReplicaManagerTest#testFetchMessagesWithInconsistentTopicId."""
    broker, rm = setup(alive=(0, 1))
    lai(rm, lai_state(0, 5, [0, 1], [0, 1]))
    info = (TP0, fetch_partition(0, current_leader_epoch=5, log_start_offset=0))
    assert result_of(fetch(rm, follower_params(1), info, topic_ids={TOPIC: OTHER_TOPIC_ID})).error is Errors.INCONSISTENT_TOPIC_ID
    assert result_of(fetch(rm, follower_params(1), info, topic_ids={TOPIC: ZERO_UUID})).error is Errors.NONE
    assert result_of(fetch(rm, follower_params(1), info, topic_ids={TOPIC: TOPIC_ID})).error is Errors.NONE
    # A log without a topic id accepts any.
    tp = TopicPartition("noIdTopic", 0)
    metadata_for(broker, brokers=(0, 1), states=[um_state(0, 5, [0, 1], [0, 1], topic="noIdTopic")])
    lai(rm, lai_state(0, 5, [0, 1], [0, 1], topic="noIdTopic"), topic_ids={})
    assert rm.online_partition(tp).topic_id is None
    info2 = (tp, fetch_partition(0, current_leader_epoch=5, log_start_offset=0))
    assert result_of(fetch(rm, follower_params(1), info2, topic_ids={"noIdTopic": OTHER_TOPIC_ID}), tp).error is Errors.NONE


def test_fetch_offset_out_of_range():
    """Mirrors ReplicaManagerTest#testOffsetOutOfRangeExceptionWhenReadFromLog (no tiered storage):
    ReplicaManager#handleOffsetOutOfRangeError answers createLogReadResult(e), offsets unknown (-1)."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    produce(rm, records(2), acks=1)
    for offset in (3, -1, 100):
        for params in (consumer_params(), follower_params(1)):
            result = result_of(fetch(rm, params, (TP0, fetch_partition(offset))))
            assert result.error is Errors.OFFSET_OUT_OF_RANGE
            assert (result.high_watermark, result.leader_log_start_offset, result.leader_log_end_offset,
                    result.last_stable_offset, result.info.records.size_in_bytes) == (-1, -1, -1, -1, 0)
    # The follower's state is not touched by a failed read.
    assert rm.online_partition(TP0).get_replica(1).log_end_offset == -1


def test_delayed_fetch_min_bytes_and_max_wait():
    """Mirrors ReplicaManager#fetchMessages + DelayedFetch: wait for min bytes, up to max wait."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    produce(rm, records(3), acks=1)
    # A consumer at the HW with min bytes 1 waits: nothing below the HW to read.
    waiting = fetch(rm, consumer_params(max_wait_ms=500, min_bytes=1), (TP0, fetch_partition(0)))
    assert not waiting.done and rm.delayed_fetch_purgatory.num_delayed() == 1
    assert expire(broker, 499) == 0 and not waiting.done
    # The follower's fetch moves the HW, which completes the consumer's fetch.
    fetch(rm, follower_params(1), (TP0, fetch_partition(3)))
    result = result_of(waiting)
    assert result.error is Errors.NONE and offsets(result.info.records) == [(0, 2)] and result.high_watermark == 3
    # No new data: the wait ends after max wait with an empty answer.
    waiting = fetch(rm, consumer_params(max_wait_ms=500, min_bytes=1), (TP0, fetch_partition(3)))
    assert not waiting.done
    assert expire(broker, 500) == 1
    result = result_of(waiting)
    assert result.error is Errors.NONE and result.info.records.size_in_bytes == 0 and result.high_watermark == 3
    # min bytes larger than what arrives keeps waiting until the timeout, then returns what there is.
    waiting = fetch(rm, consumer_params(max_wait_ms=500, min_bytes=10**6), (TP0, fetch_partition(3)))
    produce(rm, records(2), acks=1)
    fetch(rm, follower_params(1), (TP0, fetch_partition(5)))
    assert not waiting.done
    expire(broker, 500)
    assert offsets(result_of(waiting).info.records) == [(3, 4)]


def test_delayed_fetch_follower_woken_by_append():
    """Mirrors ReplicaManager#appendRecords step 3: a follower fetch parked at the LEO completes on append."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0, 1], [0, 1]))
    waiting = fetch(rm, follower_params(1, max_wait_ms=500, min_bytes=1), (TP0, fetch_partition(0, current_leader_epoch=0)))
    assert not waiting.done
    produce(rm, records(2), acks=1)
    result = result_of(waiting)
    assert result.error is Errors.NONE and offsets(result.info.records) == [(0, 1)]
    # The purgatory's re-read does not update follower state (Kafka: updateFetchState=false).
    assert rm.online_partition(TP0).get_replica(1).log_end_offset == 0


def test_diverging_epoch_answers_without_waiting():
    """Mirrors ReplicaManager#fetchMessages: a diverging epoch is returned at once, max wait or not."""
    broker, rm = setup()
    lai(rm, lai_state(0, 1, [0, 1], [0, 1]))
    produce(rm, records(2), acks=1)
    lai(rm, lai_state(0, 3, [0, 1], [0, 1]))
    produce(rm, records(2), acks=1)
    result = fetch(rm, follower_params(1, max_wait_ms=5000, min_bytes=10**6),
                   (TP0, fetch_partition(4, current_leader_epoch=3, last_fetched_epoch=2, log_start_offset=0)))
    res = result_of(result)
    assert (res.diverging_epoch.leader_epoch, res.diverging_epoch.end_offset) == (1, 2)
    assert rm.delayed_fetch_purgatory.num_delayed() == 0


def test_checkpoint_high_watermarks_survives_an_offline_log_dir():
    """Mirrors ReplicaManager#checkpointHighWatermarks: a KafkaStorageException while writing is logged, not thrown."""
    broker, rm = setup()
    lai(rm, lai_state(0, 0, [0], [0]))
    produce(rm, records(2), acks=1)
    rm.checkpoint_high_watermarks()
    assert broker.disk.replication_offset_checkpoint.read() == {TP0: 2}
    broker.disk.mark_offline("test")
    rm.checkpoint_high_watermarks()


def test_same_leader_epoch_topic_id_change_reaches_follower_fetchers():
    """Mirrors ReplicaManager#becomeLeaderOrFollower's same-epoch topic id branch and #updateTopicIdForFollowers."""
    broker, rm = setup()
    lai(rm, lai_state(1, 0, [0, 1], [0, 1]), topic_ids={})
    fetcher = rm.replica_fetcher_manager.get_fetcher(TP0)
    assert fetcher.fetch_state(TP0).topic_id is None
    # The controller upgrades to topic ids without a new leader epoch.
    assert errors_of(lai(rm, lai_state(1, 0, [0, 1], [0, 1]))) == {TP0: Errors.NONE}
    assert rm.online_partition(TP0).topic_id == TOPIC_ID
    assert fetcher.fetch_state(TP0).topic_id == TOPIC_ID
    # And a downgrade (no id in the request) removes it from the fetch state, the log keeps it.
    assert errors_of(lai(rm, lai_state(1, 0, [0, 1], [0, 1]), topic_ids={})) == {TP0: Errors.NONE}
    assert fetcher.fetch_state(TP0).topic_id is None
    assert rm.online_partition(TP0).topic_id == TOPIC_ID


def test_storage_error_while_creating_the_log_marks_the_partition_offline():
    """Mirrors ReplicaManager#makeLeaders/#makeFollowers: a KafkaStorageException from createLogIfNotExists
    answers KAFKA_STORAGE_ERROR and the partition becomes Offline (markPartitionOffline)."""
    broker, rm = setup()
    broker.disk.mark_offline("disk failure")
    response = lai(rm, lai_state(0, 0, [0, 1], [0, 1]), lai_state(1, 0, [0, 1], [0, 1], partition=1))
    assert errors_of(response) == {TP0: Errors.KAFKA_STORAGE_ERROR, TP1: Errors.KAFKA_STORAGE_ERROR}
    assert isinstance(rm.get_partition(TP0), OfflinePartition) and isinstance(rm.get_partition(TP1), OfflinePartition)
    assert rm.replica_fetcher_manager.get_fetcher(TP1) is None
    # Later requests for them answer KAFKA_STORAGE_ERROR at step 2.
    assert errors_of(lai(rm, lai_state(0, 1, [0, 1], [0, 1]))) == {TP0: Errors.KAFKA_STORAGE_ERROR}
    assert produce(rm, records(1), acks=1).value[TP0].error is Errors.KAFKA_STORAGE_ERROR
