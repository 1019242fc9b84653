"""``kafka-ref demo [flow] --mode kraft``: seed 004's metadata path narrated on a KRaft cluster.

Flow ``failover`` (the default): brokers register with the QuorumController and are unfenced
once caught up; a topic is created (TopicRecord + PartitionRecord written to
``__cluster_metadata``); each broker's listener replays the records into a MetadataDelta,
publishes the next image, and ReplicaManager#applyDelta turns its local changes into a leader
and followers whose fetchers start (seed 004 §2.1–2.2); acks=all writes; the leader's process
dies, stops heartbeating and is fenced after broker.session.timeout.ms; it comes back, is
unfenced once caught up, and rejoins as a follower. The admin flows in their KRaft form:
``deletion`` (a RemoveTopicRecord), ``preferred-election`` (ElectLeaders), ``controlled-shutdown``
(through heartbeats), ``reassignment`` (AlterPartitionReassignments: the merged replica set,
completed by the ISR expansion) and ``coordinator-failover`` (``__consumer_offsets`` leadership
from the topics delta). ``controller-failover`` runs three controllers: the active one dies, a
standby's fetch timeout expires, it stands in the next epoch, the survivor grants its vote (its log
is as up to date), the winner writes its LeaderChangeMessage, claims, and the brokers follow it.
"""

from __future__ import annotations

from typing import Any, Callable

import anyio

from kafka_ref.demos.coordinator_failover import NARRATED_GROUP

# Events worth a line in KRaft mode, and what they illustrate.
NARRATED_KRAFT = {
    "controller_activated": "QuorumController claims leadership of __cluster_metadata (metadata.version bootstrapped)",
    "broker_registration_accepted": "ClusterControlManager#registerBroker: RegisterBrokerRecord, epoch = its offset",
    "broker_registered": "BrokerLifecycleManager: registered, now heartbeating (fenced)",
    "broker_caught_up": "heartbeat answer isCaughtUp: the broker may publish its first image",
    "broker_state_change": "BrokerHeartbeatManager#calculateNextBrokerState (heartbeat)",
    "controller_write": "QuorumController: records replayed, appended, committed",
    "metadata_publish": "seed 004 §2.1 HandleCommitsEvent → loadBatches → MetadataDelta#replay → publish",
    "apply_delta_local_changes": "seed 004 §2.2 ReplicaManager#applyDelta: TopicsDelta#localChanges",
    "apply_delta_started_fetchers_for_followers": "seed 004 §2.2 applyLocalFollowersDelta → addFetcherForPartitions",
    "become_leader": "seed 004 §2.2 applyLocalLeadersDelta → Partition#makeLeader",
    "become_follower": "seed 004 §2.2 applyLocalFollowersDelta → Partition#makeFollower",
    "fencing_stale_broker": "maybeFenceStaleBroker: no heartbeat for broker.session.timeout.ms",
    "isr_updated": "AlterPartition committed by the KRaft controller (PartitionChangeRecord)",
    "apply_delta_deleting_partitions": "seed 004 §2.2 applyDelta: deletes first (stopPartitions, logs deleted)",
    "broker_begin_controlled_shutdown": "BrokerLifecycleManager#beginControlledShutdown: heartbeat want_shut_down",
    "broker_controlled_shutdown_complete": "heartbeat answer should_shut_down: nothing led any more",
    "broker_crashed": "broker process killed (its disk survives)",
    "broker_started": "broker process started",
}


# The Raft events of the controller-failover flow (KIP-595's election, narrated).
NARRATED_QUORUM = {
    "raft_fetch_timeout": "FollowerState: no fetch answer from the leader for quorum.fetch.timeout.ms",
    "raft_candidate": "QuorumState#transitionToCandidate: next epoch, vote for itself (stored)",
    "raft_vote_request": "KafkaRaftClient#handleVoteRequest: one vote per epoch, log at least as up to date",
    "raft_voted": "QuorumState#transitionToVoted: the vote is stored before the answer leaves",
    "raft_leader_elected": "CandidateState#isVoteGranted: a majority; LeaderChangeMessage at the epoch start",
    "raft_election_lost": "CandidateState#isVoteRejected: back off, stand again",
    "raft_leader_resigning": "LeaderState: check quorum expired or resign requested",
    "raft_initialized": "QuorumState#initialize: the state the quorum-state store says we left",
    "controller_renounced": "QuorumController#renounce: waiting writes fail, state back to the last commit",
    "controller_killed": "controller process killed (its log and quorum-state survive)",
    "controller_restarted": "controller process restarted on its disk",
}


def _quorum_line(cluster: Any) -> str:
    parts = []
    for node_id, node in sorted(cluster.kraft.nodes.items()):
        raft = node.raft_client
        state = raft.quorum.state.name if node.is_running else "down"
        parts.append(f"{node_id}: {state} epoch {raft.epoch} LEO={node.metadata_log.end_offset} "
                     f"HW={node.metadata_log.high_watermark}")
    return "; ".join(parts)


async def _kraft_controller_failover(seed: int, out: Callable[[str], None]) -> None:
    """Three controllers; the active one dies; the vote; the brokers follow the new leader."""
    from kafka_ref.cluster import Cluster

    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=seed) as cluster:
        kraft = cluster.kraft
        out(f"== three voters {list(kraft.voters)}; controller {cluster.controller_id()} leads epoch "
            f"{cluster.controller_epoch()}")
        out(f"  {_quorum_line(cluster)}")
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        old = cluster.controller_id()
        out(f"== killing the active controller {old}")
        start = anyio.current_time()
        kraft.kill_controller()
        await cluster.wait_until(lambda: kraft.active_node() is not None, timeout_ms=20000)
        new = cluster.controller_id()
        out(f"== controller {new} is active in epoch {cluster.controller_epoch()}, "
            f"{(anyio.current_time() - start) * 1000:.0f} ms after the kill")
        out(f"  {_quorum_line(cluster)}")
        await cluster.create_topic("u", replica_assignment={0: [1, 2, 0]})
        await cluster.wait_until(lambda: all(cluster.broker(b).kraft.raft.leader_id == new for b in range(3)))
        out(f"  topic u created through {new}; brokers' observers follow "
            f"{sorted({cluster.broker(b).kraft.raft.leader_id for b in range(3)})}")
        out(f"== restarting {old}")
        await kraft.restart_controller(old)
        await cluster.wait_until(lambda: kraft.nodes[old].metadata_log.high_watermark
                                 == kraft.nodes[new].metadata_log.high_watermark)
        out(f"  {_quorum_line(cluster)}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


def _replicas_line(cluster: Any, topic: str) -> str:
    from kafka_ref.demos.demo import _replicas_line as line

    return line(cluster, topic, roles=True)


def _log_tail(cluster: Any, since: int) -> list[str]:
    out = []
    for batch in cluster.active_controller().raft_client.log.batches:
        for i, record in enumerate(batch.records):
            if batch.base_offset + i >= since:
                out.append(f"    offset {batch.base_offset + i}: {record}")
    return out


async def _kraft_failover(seed: int, out: Callable[[str], None]) -> None:
    from kafka_ref.cluster import Cluster
    from kafka_ref.demos.demo import _produce

    out("kafka-ref demo --mode kraft: a KRaft controller (node 3000) and three brokers, virtual time")
    out("== 1. brokers register (RegisterBrokerRecord), heartbeat, catch up with __cluster_metadata, get unfenced")
    async with Cluster(brokers=3, metadata_mode="kraft", config={"min.insync.replicas": 2}, seed=seed) as cluster:
        controller = cluster.active_controller()
        out(f"  controller {cluster.controller_id()} leads the metadata log at epoch {cluster.controller_epoch()}; "
            f"broker epochs: {', '.join(f'b{b}={cluster.broker(b).broker_epoch}' for b in range(3))}")
        mark = controller.raft_client.log.end_offset
        out("== 2. CreateTopics t (RF 3): the controller writes the records; every broker replays and applies them")
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        for line in _log_tail(cluster, mark):
            out(line)
        out(f"  replicas: {_replicas_line(cluster, 't')}")
        out("== 3. acks=all writes")
        for i in range(3):
            r = await _produce(cluster, "t", [f"record-{i}".encode()])
            out(f"  produce record-{i}: error={r.error_code} offset={r.base_offset}")
        await anyio.sleep(1)
        leader = cluster.leader_for("t", 0)
        out(f"== 4. kill the leader (broker {leader}): no more heartbeats; fenced after broker.session.timeout.ms")
        cluster.kill_broker(leader)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) not in (-1, leader), timeout_ms=60000, message="a new leader")
        out(f"  partition state: {cluster.partition_state('t', 0)}")
        r = await _produce(cluster, "t", [b"record-after-failover"])
        out(f"  produce record-after-failover: error={r.error_code} offset={r.base_offset}")
        out(f"== 5. restart broker {leader}: new registration, fenced until caught up, then a follower that rejoins the ISR")
        await cluster.restart_broker(leader)
        await cluster.wait_until(lambda: leader in cluster.partition_state("t", 0)["isr"], timeout_ms=60000,
                                 message="old leader back in the ISR")
        await anyio.sleep(1)
        out(f"  partition state: {cluster.partition_state('t', 0)}")
        out(f"  replicas: {_replicas_line(cluster, 't')}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def _kraft_deletion(seed: int, out: Callable[[str], None]) -> None:
    """DeleteTopics in KRaft mode: one RemoveTopicRecord; each broker's applyDelta deletes its replicas."""
    from kafka_ref.cluster import Cluster
    from kafka_ref.common.topic_partition import TopicPartition
    from kafka_ref.demos.demo_admin import _hosting, _produce, recreate_topic

    out("kafka-ref demo deletion --mode kraft: three brokers, topic t (2 partitions, RF 3) deleted and created again")
    async with Cluster(brokers=3, metadata_mode="kraft", seed=seed) as cluster:
        created = await cluster.create_topic("t", partitions=2, replication_factor=3)
        tps = [TopicPartition("t", p) for p in range(2)]
        for tp in tps:
            await _produce(cluster, tp, 3)
        out(f"  topic id {created.topic_id}; logs of t-0 on disk: {_hosting(cluster, tps[0])}")
        mark = cluster.active_controller().raft_client.log.end_offset
        out("== 1. DeleteTopics t: the controller writes one RemoveTopicRecord; no StopReplica, no deletion states")
        await cluster.delete_topic("t")
        for line in _log_tail(cluster, mark):
            out(line)
        await anyio.sleep(0.1)
        out(f"  logs of t-0 on disk: {_hosting(cluster, tps[0])} (TopicsDelta#localChanges put them in 'deletes')")
        out("== 2. create t again: a new topic id, empty partitions")
        await recreate_topic(cluster, out)


async def _kraft_preferred_election(seed: int, out: Callable[[str], None]) -> None:
    """ElectLeaders (PREFERRED) to the QuorumController: one PartitionChangeRecord per moved leader."""
    from kafka_ref.cluster import Cluster
    from kafka_ref.common.topic_partition import TopicPartition
    from kafka_ref.demos.demo_admin import _leaders

    out("kafka-ref demo preferred-election --mode kraft: the preferred replica bounced, then elected again")
    async with Cluster(brokers=3, metadata_mode="kraft", seed=seed) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2], 1: [0, 2, 1]})
        out(f"  {_leaders(cluster, 't', 2)}")
        out("== 1. kill broker 0 (preferred replica of t-0 and t-1): fenced after broker.session.timeout.ms, leaders move")
        cluster.kill_broker(0)
        await cluster.wait_until(lambda: all(cluster.leader_for("t", p) not in (-1, 0) for p in range(2)), timeout_ms=60000)
        out(f"  {_leaders(cluster, 't', 2)}")
        out("== 2. restart broker 0: registered, unfenced once caught up, back in the ISRs as a follower")
        await cluster.restart_broker(0)
        await cluster.wait_until(lambda: all(0 in cluster.partition_state("t", p)["isr"] for p in range(2)),
                                 timeout_ms=60000, poll_ms=1)
        out(f"  {_leaders(cluster, 't', 2)}")
        mark = cluster.active_controller().raft_client.log.end_offset
        out("== 3. ElectLeaders PREFERRED for t-0 and t-1")
        errors = await cluster.elect_preferred_leaders([TopicPartition("t", 0), TopicPartition("t", 1)])
        out(f"  answer: {', '.join(f'{tp}: error {code}' for tp, code in errors.items())}")
        for line in _log_tail(cluster, mark):
            out(line)
        out(f"  {_leaders(cluster, 't', 2)}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def _kraft_controlled_shutdown(seed: int, out: Callable[[str], None]) -> None:
    """Controlled shutdown through heartbeats: want_shut_down, leaders moved, should_shut_down."""
    from kafka_ref.cluster import Cluster
    from kafka_ref.demos.demo_admin import _leaders

    out("kafka-ref demo controlled-shutdown --mode kraft: three brokers, 3 partitions RF 3, broker 1 shuts down cleanly")
    async with Cluster(brokers=3, metadata_mode="kraft", config={"min.insync.replicas": 2}, seed=seed) as cluster:
        await cluster.create_topic("t", replica_assignment={p: [p] + [b for b in range(3) if b != p] for p in range(3)})
        out(f"  {_leaders(cluster, 't', 3)}")
        out("== 1. broker 1 heartbeats with want_shut_down; the controller moves its leaderships and ISR memberships")
        succeeded = (await cluster.shutdown_broker(1)).succeeded
        out(f"  the controller answered should_shut_down: {succeeded}")
        out(f"== 2. after the clean stop: {_leaders(cluster, 't', 3)}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def _kraft_reassignment(seed: int, out: Callable[[str], None]) -> None:
    """AlterPartitionReassignments to the QuorumController: two PartitionChangeRecords move t-0."""
    from kafka_ref.cluster import Cluster
    from kafka_ref.common.topic_partition import TopicPartition
    from kafka_ref.demos.demo_admin import _hosting, _leaders, _produce

    out("kafka-ref demo reassignment --mode kraft: six brokers, t-0 on [0,1,2] moves to [3,4,5]")
    async with Cluster(brokers=6, metadata_mode="kraft", seed=seed) as cluster:
        tp = TopicPartition("t", 0)
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        acked = await _produce(cluster, tp, 20)
        out(f"  {acked} records acknowledged (acks=all); {_leaders(cluster, 't', 1)}")
        mark = cluster.active_controller().raft_client.log.end_offset
        out("== 1. AlterPartitionReassignments {t-0: [3,4,5]}: replicas [3,4,5,0,1,2], adding [3,4,5], removing [0,1,2]")
        errors = await cluster.reassign_partitions({tp: [3, 4, 5]}, via="api")
        out(f"  answer: {', '.join(f'{p}: error {code}' for p, code in errors.items())}")
        out("== 2. the new replicas catch up; the leader's AlterPartition that completes the ISR also completes the move")
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["replicas"] == [3, 4, 5], timeout_ms=30000)
        await cluster.wait_until(lambda: all(cluster.disks[b].get_local_log(tp) is None for b in (0, 1, 2)), timeout_ms=30000)
        for line in _log_tail(cluster, mark):
            out(line)
        out(f"  {_leaders(cluster, 't', 1)}; logs of t-0 on disk: {_hosting(cluster, tp)}")
        log = cluster.broker(cluster.leader_for("t", 0)).replica_manager.online_partition(tp).log
        out(f"  new leader's log end offset {log.log_end_offset} (every acknowledged record moved)")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")


async def _kraft_coordinator_failover(seed: int, out: Callable[[str], None]) -> None:
    from kafka_ref.demos.coordinator_failover import run_coordinator_failover

    await run_coordinator_failover(seed, out, metadata_mode="kraft")


FLOWS = {
    "failover": _kraft_failover,
    "deletion": _kraft_deletion,
    "reassignment": _kraft_reassignment,
    "preferred-election": _kraft_preferred_election,
    "controlled-shutdown": _kraft_controlled_shutdown,
    "coordinator-failover": _kraft_coordinator_failover,
    "controller-failover": _kraft_controller_failover,
}


def run_kraft_demo(flow: str = "failover", seed: int = 7, backend: str = "trio", out: Callable[[str], None] = print,
                   width: int | None = None) -> int:
    """Run one narrated KRaft flow in virtual time with the KRaft events narrated; returns an exit code."""
    import logging

    import structlog

    from kafka_ref.demos import demo
    from kafka_ref.common.state_change import configure_logging

    if flow not in FLOWS:
        out(f"unknown demo flow {flow!r} for --mode kraft; available: {', '.join(sorted(FLOWS))}")
        return 2
    # The narrator reads demo.NARRATED: narrate the KRaft events for this run only.
    saved = dict(demo.NARRATED)
    demo.NARRATED.clear()
    demo.NARRATED.update(NARRATED_KRAFT)
    demo.NARRATED.update(NARRATED_GROUP)  # coordinator-failover: __consumer_offsets loading and unloading
    if flow == "controller-failover":
        demo.NARRATED.update(NARRATED_QUORUM)
    try:
        configure_logging(logging.INFO)
        narrator = demo.Narrator(out, lambda: anyio.current_time(), width)
        structlog.configure(processors=[structlog.contextvars.merge_contextvars, narrator])

        async def main() -> None:
            await FLOWS[flow](seed, narrator.say)

        try:
            demo.run_seeded(main, backend, seed)
        finally:
            narrator.flush()
    finally:
        demo.NARRATED.clear()
        demo.NARRATED.update(saved)
        configure_logging()
    return 0
