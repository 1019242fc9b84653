"""ReplicaManager's hosted-partition map (HostedPartitions) and the delayed operations that cache
the Partition objects they resolved from it.

DelayedProduce and DelayedFetch walk every partition of their request on each wake-up; they keep
the Partition objects and resolve again only when the map's ``version`` moved. These tests check
that a partition replaced or removed after an operation was parked is seen on its next walk, as
Kafka's getPartitionOrException per walk would see it.
"""

from __future__ import annotations

from helpers_replica import (
    TOPIC,
    TP0,
    TP1,
    consumer_params,
    fetch_partition,
    follower_params,
    lai_request,
    lai_state,
    make_broker,
    records,
    rm_fetch,
    rm_produce,
    um_request,
    um_state,
)
from kafka_ref.common.errors import Errors
from kafka_ref.replica.hosted_partitions import HostedPartitions
from kafka_ref.replica.replica_manager import OfflinePartition


def _leader_rm():
    """Broker 0 leading TP0 and TP1 (epoch 0) with ISR {0, 1, 2}."""
    broker = make_broker(0)
    alive = (0, 1, 2)
    states = [um_state(0, 0, alive, alive, topic=TOPIC, partition=p) for p in (0, 1)]
    rm = broker.replica_manager
    rm.maybe_update_metadata_cache(0, um_request(states, brokers=alive))
    rm.become_leader_or_follower(0, lai_request([lai_state(0, 0, alive, alive, partition=p) for p in (0, 1)]), None)
    return rm


def test_version_counts_every_change():
    hosted = HostedPartitions()
    assert hosted.version == 0
    hosted["a"] = 1
    hosted["a"] = 2          # a replacement counts too
    assert (hosted.version, hosted["a"], hosted.get("b")) == (2, 2, None)
    hosted.setdefault("b", 3)
    hosted.update({"c": 4})
    hosted |= {"d": 5}
    assert hosted.version == 5
    del hosted["a"]
    assert hosted.pop("b") == 3
    hosted.popitem()
    hosted.clear()
    assert (hosted.version, dict(hosted)) == (9, {})


def test_replica_manager_uses_the_counting_map():
    rm = _leader_rm()
    assert isinstance(rm.all_partitions, HostedPartitions)
    assert rm.all_partitions.version == 2   # TP0 and TP1 created by the LeaderAndIsr


def test_delayed_produce_sees_a_partition_gone_offline_after_it_was_parked():
    """A waiting acks=all produce over two partitions: TP1's log directory fails (the partition
    becomes an OfflinePartition) after the operation resolved it; the next HW move of TP0 walks
    the request again and answers TP1 with KAFKA_STORAGE_ERROR, as getPartitionOrError would."""
    rm = _leader_rm()
    answers = []
    rm.append_records(30000, -1, False, "client", {TP0: records(2), TP1: records(3)}, answers.append)
    assert not answers and rm.delayed_produce_purgatory.num_delayed() == 1
    rm.all_partitions[TP1] = OfflinePartition(TP1)
    # Both followers reach TP0's end: its HW moves to 2 and the operation is tried again.
    for follower in (1, 2):
        rm_fetch(rm, follower_params(follower), (TP0, fetch_partition(2, current_leader_epoch=0, log_start_offset=0)))
    assert rm.online_partition(TP0).log.high_watermark == 2
    assert len(answers) == 1
    assert (answers[0][TP0].error, answers[0][TP0].base_offset) == (Errors.NONE, 0)
    assert answers[0][TP1].error is Errors.KAFKA_STORAGE_ERROR


def test_delayed_produce_unchanged_map_keeps_waiting_then_completes():
    """The cached walk answers as the uncached one: one follower is not enough, both are."""
    rm = _leader_rm()
    waiting = rm_produce(rm, records(3), acks=-1)
    version = rm.all_partitions.version
    rm_fetch(rm, follower_params(1), (TP0, fetch_partition(3, current_leader_epoch=0, log_start_offset=0)))
    assert not waiting.done and rm.all_partitions.version == version
    rm_fetch(rm, follower_params(2), (TP0, fetch_partition(3, current_leader_epoch=0, log_start_offset=0)))
    assert waiting.calls == 1 and waiting.value[TP0].error is Errors.NONE and waiting.value[TP0].base_offset == 0


def test_delayed_fetch_sees_a_removed_partition():
    """A consumer's long poll on TP0 and TP1 parked; TP1 is then removed from the broker (as a
    StopReplica with delete does); the next wake-up (a produce to TP0 of too few bytes) walks the
    fetch again and completes it at once (DelayedFetch case B: the partition is no longer here)."""
    rm = _leader_rm()
    waiting = rm_fetch(rm, consumer_params(max_wait_ms=30000, min_bytes=1_000_000),
                       (TP0, fetch_partition(0)), (TP1, fetch_partition(0)))
    assert not waiting.done and rm.delayed_fetch_purgatory.num_delayed() == 1
    del rm.all_partitions[TP1]
    rm_produce(rm, records(1), acks=1)
    rm.online_partition(TP0).log.update_high_watermark(1)
    rm.complete_delayed_fetch_or_produce_requests(TP0)
    assert waiting.calls == 1
    by_tp = dict(waiting.value)
    assert by_tp[TP0].error is Errors.NONE
    # (The metadata cache still knows TP1: not hosted here means "not the leader or a follower".)
    assert by_tp[TP1].error is Errors.NOT_LEADER_OR_FOLLOWER
