"""The narrated walkthroughs behind ``kafka-ref scenario NAME`` (machinery: kafka_ref/sim/narrated.py).

Each function drives a small cluster and prints the steps of one seed as they happen:

* ``leader_and_isr`` – seed 000's nine steps of becomeLeaderOrFollower (manual mode);
* ``controller_failover`` – seed 001 §5.2, onControllerResignation / onControllerFailover;
* ``partition_states`` / ``replica_states`` – seed 001 §5.3, the two state machines;
* ``replica_lifecycle`` – seed 002: created, made follower, StopReplica twice;
* ``fetch_hw`` – seed 004's four phases of HW and LEO movement;
* ``consumer_offsets_migration`` – seed 000's ``__consumer_offsets`` immigration / emigration.
"""

from __future__ import annotations

from typing import Any

import anyio

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState, LeaderAndIsrRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL
from kafka_ref.sim.narrated import Narration, manager_line, wrap

TOPIC = "t"
TP = TopicPartition(TOPIC, 0)
TOPIC_ID = Uuid(0x5EED_0000_0000_0001, 0x0000_0000_0000_0001)


# ------------------------------------------------------------------------------ helpers


def _lai(leader: int, epoch: int, isr: tuple, replicas: tuple, partition_epoch: int, is_new: bool = False) -> Any:
    return LeaderAndIsrPartitionState(topic_name=TOPIC, partition_index=0, controller_epoch=1, leader=leader,
                                      leader_epoch=epoch, isr=isr, partition_epoch=partition_epoch,
                                      replicas=replicas, is_new=is_new)


def _um(leader: int, epoch: int, isr: tuple, replicas: tuple, zk_version: int) -> Any:
    return UpdateMetadataPartitionState(topic_name=TOPIC, partition_index=0, controller_epoch=1, leader=leader,
                                        leader_epoch=epoch, isr=isr, zk_version=zk_version, replicas=replicas)


async def _produce(cluster: Cluster, broker: int, value: bytes, acks: int, tp: TopicPartition = TP) -> Any:
    request = ProduceRequest.build(acks=acks, timeout_ms=30000, records={tp: MemoryRecords.with_records([SimpleRecord(None, value)])})
    response = await cluster.network.send("producer", broker, request, 31000, principal=ANONYMOUS_PRINCIPAL)
    return response.responses[0].partition_responses[0]


def _replica(cluster: Cluster, b: int, tp: TopicPartition = TP) -> Any:
    broker = cluster.brokers[b]
    return broker.replica_manager.online_partition(tp) if broker.is_running else None


def _table(cluster: Cluster, brokers: list[int], tp: TopicPartition = TP) -> str:
    parts = []
    for b in brokers:
        p = _replica(cluster, b, tp)
        if p is None or p.log is None:
            parts.append(f"broker {b}: -")
        else:
            role = "leader" if p.is_leader else "follower"
            parts.append(f"broker {b} ({role}) LEO={p.log.log_end_offset} HW={p.log.high_watermark}")
    return "; ".join(parts)


def _errors(response: Any) -> str:
    codes = [response.error_code] + [p.error_code for t in getattr(response, "topics", ()) for p in t.partition_errors]
    return ", ".join(sorted({Errors.for_code(c).name for c in codes}))


# ------------------------------------------------------------------------------ seed 000: LeaderAndIsr


def _instrument_leader_and_isr(n: Narration, cluster: Cluster, b: int) -> None:
    """Wrappers on one broker's ReplicaManager for the steps that log no event of their own."""
    broker = cluster.brokers[b]
    rm = broker.replica_manager

    def new_partition(tp: TopicPartition) -> None:
        n.step("seed 000 step 2", f"broker {b}: no Partition object for {tp} yet: create it (its log comes later)")

    def before_make_leaders(controller_id: int, controller_epoch: int, states: dict, *args: Any) -> None:
        for partition, state in states.items():
            n.step("seed 000 step 2", f"broker {b}: {partition.topic_partition} kept: leader epoch {state.leader_epoch} "
                   f"is newer than this broker's {partition.get_leader_epoch()}")
        n.step("seed 000 step 3", f"broker {b}: the request names this broker leader of "
               f"{sorted(str(p.topic_partition) for p in states)}: partitionsToBeLeader")
        n.step("seed 000 step 5", f"broker {b}: makeLeaders")

    def before_make_followers(controller_id: int, controller_epoch: int, states: dict, *args: Any) -> None:
        for partition, state in states.items():
            n.step("seed 000 step 2", f"broker {b}: {partition.topic_partition} kept: leader epoch {state.leader_epoch} "
                   f"is newer than this broker's {partition.get_leader_epoch()}")
        n.step("seed 000 step 4", f"broker {b}: the request names another leader for "
               f"{sorted(str(p.topic_partition) for p in states)}: partitionsToBeFollower")
        n.step("seed 000 step 6", f"broker {b}: makeFollowers")

    def hw_thread() -> None:
        state = "already running" if rm.hw_thread_initialized else "not started yet: start it now"
        n.step("seed 000 step 7", f"broker {b}: the high-watermark checkpoint task is {state}")

    fetchers_before: list[int] = []

    def before_idle() -> None:
        fetchers_before[:] = [len(rm.replica_fetcher_manager.fetcher_thread_map)]

    def after_idle(_result: Any) -> None:
        left = len(rm.replica_fetcher_manager.fetcher_thread_map)
        n.step("seed 000 step 8", f"broker {b}: fetcher threads with no partition left are shut down "
               f"({fetchers_before[0]} before, {left} after)")

    def on_leadership_change(leaders: Any, followers: Any) -> None:
        n.step("seed 000 step 9", f"broker {b}: onLeadershipChange(leaders={[str(p.topic_partition) for p in leaders]}, "
               f"followers={[str(p.topic_partition) for p in followers]}): a __consumer_offsets partition here "
               "would be loaded or unloaded by the group coordinator")

    wrap(rm, "_new_partition", before=new_partition)
    wrap(rm, "make_leaders", before=before_make_leaders)
    wrap(rm, "make_followers", before=before_make_followers)
    wrap(rm, "start_high_watermark_check_point_thread", before=hw_thread)
    wrap(rm.replica_fetcher_manager, "shutdown_idle_fetcher_threads", before=before_idle, after=after_idle)
    broker.leadership_listeners.append(on_leadership_change)


def _route_leader_and_isr_events(n: Narration) -> None:
    def received(e: dict) -> tuple[str, str]:
        known = n.cluster.brokers[e["broker_id"]].replica_manager.controller_epoch
        verdict = "not older: go on" if e["controller_epoch"] >= known else "older"
        return ("seed 000 step 1", f"broker {e['broker_id']}: LeaderAndIsr from controller {e['controller_id']}: "
                f"its controller epoch {e['controller_epoch']} against the latest seen here ({known}): {verdict}")

    n.on("leader_and_isr_received", received)
    n.on("leader_and_isr_stale_controller_epoch", lambda e: (
        "seed 000 step 1", f"broker {e['broker_id']}: older than {e['latest_controller_epoch']}: the whole request is "
        "refused with STALE_CONTROLLER_EPOCH"))
    n.on("leader_and_isr_same_leader_epoch", lambda e: (
        "seed 000 step 2", f"broker {e['broker_id']}: {e['topic_partition']} skipped: leader epoch {e['leader_epoch']} "
        "is not newer than the one this broker has"))
    n.on("leader_and_isr_stale_leader_epoch", lambda e: (
        "seed 000 step 2", f"broker {e['broker_id']}: {e['topic_partition']} skipped: leader epoch "
        f"{e['request_leader_epoch']} is older than {e['current_leader_epoch']}"))
    n.on("stopped_fetchers_for_become_leader", lambda e: (
        "seed 000 §makeLeaders 1", f"broker {e['broker_id']}: remove the fetchers of these partitions"))
    n.on("become_leader", lambda e: (
        "seed 000 §makeLeaders 2 (Partition#makeLeader 1-5)", f"broker {e['broker_id']}: {e['topic_partition']} leader at epoch "
        f"{e['leader_epoch']}, ISR {e['isr']}, the epoch starts at offset {e['epoch_start_offset']}, HW "
        f"{e['high_watermark']}; followers' fetch state reset"))
    n.on("become_follower", lambda e: (
        "seed 000 §makeFollowers 1-2", f"broker {e['broker_id']}: leader {e['leader']} is alive: "
        f"{e['topic_partition']} follows it at epoch {e['leader_epoch']} (LEO {e['log_end_offset']}, HW {e['high_watermark']})"))
    n.on("stopped_fetchers_for_become_follower", lambda e: (
        "seed 000 §makeFollowers 3", f"broker {e['broker_id']}: remove the fetchers of the partitions that changed "
        "leader epoch; their delayed produce/fetch requests complete (§makeFollowers 5)"))
    n.on("fetcher_added", lambda e: ("seed 000 §makeFollowers 6", manager_line(e)))
    n.on("truncating_log", lambda e: (
        "seed 000 §makeFollowers 4", f"{e['topic_partition']} truncated to offset {e['target_offset']} (Kafka 3.x: by "
        "the fetcher, once the leader reports where the logs diverge; 0.10 truncated to the HW here)"))


async def leader_and_isr(n: Narration) -> None:
    """Seed 000: the nine steps of ReplicaManager.becomeLeaderOrFollower, on three brokers."""
    async with Cluster(brokers=3, metadata_mode="manual", seed=7) as cluster:
        n.cluster = cluster
        for b in range(3):
            _instrument_leader_and_isr(n, cluster, b)
        _route_leader_and_isr_events(n)
        n.say("== 1. New partition t-0: broker 0 leads (leader epoch 0), brokers 1 and 2 follow. "
              "This narration plays the controller (id 3000, controller epoch 1).")
        await cluster.update_metadata([_um(0, 0, (0, 1, 2), (0, 1, 2), 0)], {TOPIC: TOPIC_ID})
        request = cluster.leader_and_isr_request([_lai(0, 0, (0, 1, 2), (0, 1, 2), 0, is_new=True)], {TOPIC: TOPIC_ID})
        for b in (0, 1):
            n.say(f"-- LeaderAndIsr reaches broker {b}")
            n.say(f"   answer: {_errors(await cluster.send(b, request))}")
        n.muted = True
        await cluster.send(2, request)
        n.muted = False
        n.say("-- (broker 2 goes through the same steps as broker 1)")
        for i in range(2):
            await _produce(cluster, 0, b"record-%d" % i, acks=-1)
        await cluster.wait_until(lambda: all(_replica(cluster, b).log.high_watermark == 2 for b in range(3)))
        n.say(f"   after two acks=all writes: {_table(cluster, [0, 1, 2])}")
        n.say("== 2. A LeaderAndIsr from an older controller (controller epoch 0)")
        stale = LeaderAndIsrRequest(controller_id=2999, controller_epoch=0, topic_states=request.topic_states)
        n.say(f"   answer: {_errors(await cluster.send(1, stale))}")
        n.say("== 3. The first request again: nothing newer in it")
        n.say(f"   answer: {_errors(await cluster.send(1, request))}")
        n.say("== 4. Broker 0 takes a write its followers never see (cut off, acks=1); then leadership moves "
              "to broker 1 at leader epoch 1")
        for f in (1, 2):
            cluster.network.cut_link(0, f)
        result = await _produce(cluster, 0, b"only-on-broker-0", acks=1)
        n.say(f"   acks=1 write on broker 0 at offset {result.base_offset}: {_table(cluster, [0, 1, 2])}")
        await cluster.update_metadata([_um(1, 1, (1, 2), (0, 1, 2), 5)], {TOPIC: TOPIC_ID})
        moved = cluster.leader_and_isr_request([_lai(1, 1, (1, 2), (0, 1, 2), 5)], {TOPIC: TOPIC_ID})
        n.say("-- LeaderAndIsr (leader epoch 1) reaches broker 1")
        n.say(f"   answer: {_errors(await cluster.send(1, moved))}")
        n.muted = True
        await cluster.send(2, moved)
        n.muted = False
        n.say("-- (broker 2 follows broker 1 now); the links of broker 0 heal and the request reaches it")
        for f in (1, 2):
            cluster.network.heal_link(0, f)
        n.say(f"   answer: {_errors(await cluster.send(0, moved))}")
        await cluster.wait_until(lambda: _replica(cluster, 0).log.log_end_offset == _replica(cluster, 1).log.log_end_offset)
        await anyio.sleep(1)
        n.say(f"   broker 0 now follows broker 1: {_table(cluster, [0, 1, 2])}")


# ------------------------------------------------------------------------------ seed 004: HW and LEO


async def fetch_hw(n: Narration) -> None:
    """Seed 004 §1: initial state, a write, the first fetch round, the second fetch round."""
    async with Cluster(brokers=3, metadata_mode="manual", seed=7) as cluster:
        n.cluster = cluster
        brokers = [0, 1, 2]
        await cluster.update_metadata([_um(0, 0, (0, 1, 2), (0, 1, 2), 0)], {TOPIC: TOPIC_ID})
        request = cluster.leader_and_isr_request([_lai(0, 0, (0, 1, 2), (0, 1, 2), 0, is_new=True)], {TOPIC: TOPIC_ID})
        for b in brokers:
            await cluster.send(b, request)
        await _produce(cluster, 0, b"m0", acks=-1)
        await cluster.wait_until(lambda: all(_replica(cluster, b).log.high_watermark == 1 for b in brokers))
        n.say("== leader broker 0, followers 1 and 2 (replica.fetch.wait.max.ms=500: a follower's fetch waits at the "
              "leader until data arrives)")
        n.step("seed 004 phase 1", f"initial state, every replica holds offset 0: {_table(cluster, brokers)}")
        state = {"watching": False}

        def instrument(b: int) -> None:
            # processPartitionData runs once per partition of every fetch response (records or not):
            # the follower appends what came and takes the leader's HW from the response.
            for thread in cluster.brokers[b].replica_manager.replica_fetcher_manager.fetcher_thread_map.values():
                def after(_result: Any, tp: TopicPartition, fetch_offset: int, data: Any, b: int = b) -> None:
                    if not state["watching"] or tp != TP:
                        return
                    phase = "seed 004 phase 3" if fetch_offset == 1 else "seed 004 phase 4"
                    n.step(phase, f"follower {b}'s fetch at offset {fetch_offset} (its LEO when it asked) comes back "
                           f"with {len(data.records)} batch(es) and the leader's HW {data.high_watermark}: "
                           f"{_table(cluster, brokers)}")
                    if all(_replica(cluster, x).log.high_watermark == 2 for x in brokers):
                        state["watching"] = False

                wrap(thread, "process_partition_data", after=after)

        for b in (1, 2):
            instrument(b)
        n.on("high_watermark_updated", lambda e: (
            ("seed 004 phase 4", f"leader broker {e['broker_id']}: maybeIncrementLeaderHW moves the HW "
             f"{e['old']} -> {e['new']} (the smallest LEO of the ISR is now {e['new']})")
            if state["watching"] else None))

        def appended(info: Any, *_: Any) -> None:
            if state["watching"]:
                n.step("seed 004 phase 2", f"the leader appends m1 at offset {info.first_offset}: its LEO moves, "
                       f"maybeIncrementLeaderHW finds the followers' LEO still at 1, the HW stays: "
                       f"{_table(cluster, brokers)}")

        wrap(_replica(cluster, 0), "append_records_to_leader", after=appended)
        state["watching"] = True
        await _produce(cluster, 0, b"m1", acks=1)
        await cluster.wait_until(lambda: all(_replica(cluster, b).log.high_watermark == 2 for b in brokers),
                                 timeout_ms=10000)
        n.say(f"== every replica: HW = LEO = 2 ({_table(cluster, brokers)})")


from kafka_ref.sim.walkthroughs_zk import (  # noqa: E402 - the ZooKeeper-mode walkthroughs
    consumer_offsets_migration,
    controller_failover,
    partition_states,
    replica_lifecycle,
    replica_states,
)

__all__ = ["consumer_offsets_migration", "controller_failover", "fetch_hw", "leader_and_isr", "partition_states",
           "replica_lifecycle", "replica_states"]
