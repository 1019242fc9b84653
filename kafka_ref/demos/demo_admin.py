"""``kafka-ref demo deletion | reassignment | preferred-election | controlled-shutdown``.

Four narrated runs of the ZooKeeper-era controller's admin flows, in virtual time (each a few
seconds of wall time). The narration lines come from the state-change events listed in
``NARRATED_ADMIN`` (merged into ``kafka_ref.demos.demo.NARRATED``); the ``==`` lines and the state
dumps come from the cluster itself.
"""

from __future__ import annotations

from typing import Any, Callable

import anyio

from kafka_ref.common.topic_partition import TopicPartition

Out = Callable[[str], None]

NARRATED_ADMIN = {
    # topic deletion (TopicDeletionManager; seed 001 §5.3.3, seed 002 StopReplica)
    "topic_deletion_requested": "TopicDeletion: child watch on /admin/delete_topics fired",
    "topic_deletion_enqueued": "TopicDeletionManager#enqueueTopicsForDeletion",
    "topic_deletion_started": "onTopicDeletion: partitions Offline → NonExistent, UpdateMetadata leader=-2",
    "deletion_replica_states": "seed 001 §5.3.3 replica state machine (deletion)",
    "topic_deletion_halted": "markTopicIneligibleForDeletion",
    "replica_deletion_successful": "StopReplica(delete) answered: ReplicaDeletionSuccessful",
    "replica_deletion_failed": "failReplicaDeletion: ReplicaDeletionIneligible",
    "topic_deletion_retry": "retryDeletionForIneligibleReplicas",
    "topic_deletion_resumed": "resumeDeletionForTopics",
    "topic_deletion_completed": "completeDeleteTopic: znodes removed, context forgets the topic",
    "stop_replica_received": "seed 002 broker handles StopReplica",
    # reassignment (KafkaController#onPartitionReassignment; seed 001 §5.4.3)
    "reassignment_requested_in_zk": "ZkPartitionReassignment: /admin/reassign_partitions created",
    "reassignment_assignment_updated": "U1/U2: RS = ORS+TRS, AR, RR written to ZooKeeper then memory",
    "reassignment_phase_a": "phase A: TRS not yet in the ISR",
    "reassignment_leader_epoch_bumped": "updateLeaderEpoch: same leader and ISR, epoch + 1",
    "reassignment_replica_states": "seed 001 §5.3.3 replica state machine (reassignment)",
    "reassignment_targets_in_isr": "maybeCompleteReassignment after AlterPartition",
    "reassignment_phase_b": "phase B: TRS in the ISR",
    "reassignment_leader_not_in_target": "B3: ReassignPartitionLeaderElectionStrategy (seed 001 §5.4.3)",
    "partition_isr_shrunk_for_offline_replica": "OfflineReplica: out of the ISR, LeaderAndIsr to the rest",
    "reassignment_zk_request_updated": "B7: /admin/reassign_partitions updated",
    "reassignment_completed": "B6-B8: RS = TRS in ZooKeeper, UpdateMetadata",
    # preferred election and auto-rebalance (seed 001 §5.4.4)
    "preferred_replica_elections_pending": "failover: pending /admin/preferred_replica_election",
    "leader_imbalance_above_threshold": "checkAndTriggerAutoLeaderRebalance: ratio above the threshold",
    "preferred_replica_election_completed": "seed 001 §5.4.4 preferred replica leads again",
    # controlled shutdown (seed 001 §5.4.5)
    "controlled_shutdown_starting": "KafkaServer#controlledShutdown",
    "controlled_shutdown_started": "doControlledShutdown: broker marked shutting down",
    "controlled_shutdown_partitions": "doControlledShutdown: partitions led / followed",
    "controlled_shutdown_answered": "doControlledShutdown: partitions still led",
    "controlled_shutdown_succeeded": "ControlledShutdownResponse with nothing remaining",
    "broker_shutting_down": "KafkaServer#shutdown (clean)",
}


def _leaders(cluster: Any, topic: str, partitions: int) -> str:
    parts = []
    for p in range(partitions):
        s = cluster.partition_state(topic, p)
        parts.append(f"p{p}: leader={s['leader']} epoch={s['leader_epoch']} isr={s['isr']}" if s else f"p{p}: -")
    return "; ".join(parts)


def _hosting(cluster: Any, tp: TopicPartition) -> str:
    parts = []
    for b, broker in sorted(cluster.brokers.items()):
        log = broker.disk.get_local_log(tp)
        parts.append(f"b{b}: {'log' if log is not None else '-'}")
    return ", ".join(parts)


async def _produce(cluster: Any, tp: TopicPartition, count: int) -> int:
    from kafka_ref.common.records import MemoryRecords, SimpleRecord
    from kafka_ref.common.requests.produce import ProduceRequest

    acked = 0
    for i in range(count):
        request = ProduceRequest.build(acks=-1, timeout_ms=30000,
                                       records={tp: MemoryRecords.with_records([SimpleRecord(None, f"r{i}".encode())])})
        response = await cluster.network.send("producer", cluster.leader_for(tp.topic, tp.partition), request, 31000,
                                              principal="User:ANONYMOUS")
        acked += response.responses[0].partition_responses[0].error_code == 0
    return acked


async def deletion(seed: int, out: Out) -> None:
    """Delete a topic while one of its brokers is down; the deletion finishes when it returns."""
    from kafka_ref.cluster import Cluster

    out("kafka-ref demo deletion: three brokers, topic t (2 partitions, RF 3), one broker down during the deletion")
    async with Cluster(brokers=3, metadata_mode="zk", seed=seed) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        tps = [TopicPartition("t", p) for p in range(2)]
        for tp in tps:
            await _produce(cluster, tp, 3)
        await anyio.sleep(0.1)
        victim = next(b for b in range(3) if b != cluster.controller_id())
        out(f"  logs of t-0 on disk: {_hosting(cluster, tps[0])}")
        out(f"== 1. kill broker {victim}; the controller notices when its ZooKeeper session expires")
        cluster.kill_broker(victim)
        ctx = cluster.active_controller().controller_context
        await cluster.wait_until(lambda: victim not in ctx.live_or_shutting_down_broker_ids, timeout_ms=60000)
        out("== 2. DeleteTopics t: marker /admin/delete_topics/t; live replicas deleted, the dead one halts the topic")
        await cluster.delete_topic("t")
        await cluster.wait_until(lambda: not ctx.is_any_replica_in_state("t", _state("ReplicaDeletionStarted")))
        out(f"  ZooKeeper still has /brokers/topics/t: {cluster.zookeeper.exists('/brokers/topics/t') is not None}; "
            f"ineligible topics: {sorted(ctx.topics_ineligible_for_deletion)}")
        out(f"  logs of t-0 on disk: {_hosting(cluster, tps[0])}")
        out(f"== 3. restart broker {victim}: its replicas come back online, the deletion resumes and completes")
        await cluster.restart_broker(victim)
        await cluster.wait_until(lambda: cluster.zookeeper.exists("/brokers/topics/t") is None, timeout_ms=60000)
        await anyio.sleep(0.1)
        out(f"  logs of t-0 on disk: {_hosting(cluster, tps[0])}; ZooKeeper: /brokers/topics/t, /config/topics/t and "
            "/admin/delete_topics/t gone")
        out("== 4. create t again: new topic id, empty partitions")
        await recreate_topic(cluster, out)


async def recreate_topic(cluster: Any, out: Out) -> None:
    """Create t (2 partitions, RF 3) again after its deletion and show that it starts empty."""
    result = await cluster.create_topic("t", partitions=2, replication_factor=3)
    leader = cluster.leader_for("t", 0)
    log = cluster.broker(leader).replica_manager.online_partition(TopicPartition("t", 0)).log
    out(f"  topic id {result.topic_id}, t-0 log end offset {log.log_end_offset}")
    out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def reassignment(seed: int, out: Out) -> None:
    """Move t-0 from [0,1,2] to [3,4,5] through /admin/reassign_partitions."""
    from kafka_ref.cluster import Cluster

    out("kafka-ref demo reassignment: six brokers, t-0 on [0,1,2] moves to [3,4,5] (RS/AR/RR phases)")
    config = {"auto.leader.rebalance.enable": False}
    async with Cluster(brokers=6, metadata_mode="zk", config=config, seed=seed) as cluster:
        tp = TopicPartition("t", 0)
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        acked = await _produce(cluster, tp, 20)
        out(f"  {acked} records acknowledged (acks=all); {_leaders(cluster, 't', 1)}")
        out("== 1. write /admin/reassign_partitions {t-0: [3,4,5]}")
        await cluster.reassign_partitions({tp: [3, 4, 5]})
        await cluster.wait_until(lambda: cluster.topic_assignment("t")[0]["replicas"] == [3, 4, 5], timeout_ms=30000)
        await anyio.sleep(0.1)
        out("== 2. done")
        out(f"  topic znode: {cluster.topic_assignment('t')}; {_leaders(cluster, 't', 1)}")
        out(f"  logs of t-0 on disk: {_hosting(cluster, tp)}")
        log = cluster.broker(3).replica_manager.online_partition(tp).log
        out(f"  new leader's log end offset {log.log_end_offset} (every acknowledged record moved)")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def preferred_election(seed: int, out: Out) -> None:
    """Leadership back to the preferred replica: by request (t-0) and by the auto-rebalance check (t-1)."""
    from kafka_ref.cluster import Cluster

    out("kafka-ref demo preferred-election: three brokers, preferred replica bounced, then led again")
    config = {"leader.imbalance.check.interval.seconds": 10}
    async with Cluster(brokers=3, metadata_mode="zk", config=config, seed=seed) as cluster:
        controller = cluster.controller_id()
        preferred, second = [b for b in range(3) if b != controller]
        await cluster.create_topic("t", replica_assignment={0: [preferred, second, controller],
                                                           1: [preferred, controller, second]})
        out(f"  {_leaders(cluster, 't', 2)}")
        out(f"== 1. kill broker {preferred} (preferred replica of t-0 and t-1); leadership fails over")
        cluster.kill_broker(preferred)
        await cluster.wait_until(lambda: all(cluster.leader_for("t", p) not in (-1, preferred) for p in range(2)),
                                 timeout_ms=60000)
        out(f"  {_leaders(cluster, 't', 2)}")
        out(f"== 2. restart broker {preferred}: it rejoins the ISRs as a follower")
        await cluster.restart_broker(preferred)
        await cluster.wait_until(lambda: all(preferred in cluster.partition_state("t", p)["isr"] for p in range(2)),
                                 timeout_ms=60000, poll_ms=1)
        out(f"  t={anyio.current_time():.3f}s {_leaders(cluster, 't', 2)}")
        out("== 3. write /admin/preferred_replica_election {t-0}: elected at once")
        await cluster.elect_preferred_leaders([TopicPartition("t", 0)])
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == preferred, poll_ms=1)
        out(f"  t={anyio.current_time():.3f}s {_leaders(cluster, 't', 2)}")
        out("== 4. t-1 waits for the next auto-rebalance check (every 10 s): ratio 1/2 > 10%")
        await cluster.wait_until(lambda: cluster.leader_for("t", 1) == preferred, timeout_ms=30000, poll_ms=1)
        out(f"  t={anyio.current_time():.3f}s {_leaders(cluster, 't', 2)}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def controlled_shutdown(seed: int, out: Out) -> None:
    """A broker leading a third of the partitions shuts down cleanly."""
    from kafka_ref.cluster import Cluster

    out("kafka-ref demo controlled-shutdown: three brokers, 3 partitions RF 3, one broker shuts down cleanly")
    async with Cluster(brokers=3, metadata_mode="zk", config={"min.insync.replicas": 2}, seed=seed) as cluster:
        controller = cluster.controller_id()
        victim = next(b for b in range(3) if b != controller)
        await cluster.create_topic("t", replica_assignment={p: [p] + [b for b in range(3) if b != p] for p in range(3)})
        out(f"  {_leaders(cluster, 't', 3)}")
        out(f"== 1. broker {victim} asks the controller (broker {controller}) for a controlled shutdown")
        succeeded = (await cluster.shutdown_broker(victim)).succeeded
        out(f"  controlled shutdown confirmed: {succeeded}")
        await cluster.wait_until(lambda: victim not in cluster.active_controller().controller_context.live_or_shutting_down_broker_ids)
        out(f"== 2. after the clean stop: {_leaders(cluster, 't', 3)}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


def _state(name: str) -> Any:
    from kafka_ref.controller.controller_context import ReplicaState

    return ReplicaState[name]


FLOWS = {
    "deletion": deletion,
    "reassignment": reassignment,
    "preferred-election": preferred_election,
    "controlled-shutdown": controlled_shutdown,
}
