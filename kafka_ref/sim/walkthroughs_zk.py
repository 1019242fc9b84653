"""The ZooKeeper-mode narrated walkthroughs: seeds 001 (controller, state machines), 002 (a
replica's life) and 000 (``__consumer_offsets`` moving between coordinators). See
kafka_ref/sim/narrated.py for how lines are produced and kafka_ref/sim/walkthroughs.py for the
manual-mode ones.
"""

from __future__ import annotations

from typing import Any

import anyio

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.find_coordinator import CoordinatorType, FindCoordinatorRequest
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL
from kafka_ref.sim.narrated import Narration, manager_line, wrap

TOPIC = "t"
ZK_CONFIG = {"zookeeper.session.timeout.ms": 6000, "offsets.topic.num.partitions": 3}


async def _zk_cluster(n: Narration, brokers: int = 3) -> Cluster:
    cluster = Cluster(brokers=brokers, metadata_mode="zk", config=ZK_CONFIG, seed=7)
    n.cluster = cluster
    return cluster


def _state(cluster: Cluster, tp: TopicPartition) -> str:
    s = cluster.partition_state(tp.topic, tp.partition)
    return "none" if s is None else f"leader {s['leader']}, leader epoch {s['leader_epoch']}, ISR {s['isr']}"


# ------------------------------------------------------------------------------ seed 001 §5.2


def _instrument_controller(n: Narration, cluster: Cluster, b: int) -> None:
    """Wrap one broker's controller so the failover and resignation steps print as they run."""
    broker = cluster.brokers[b]
    c = broker.controller
    phase = {"failover": False, "resigning": False}

    def start(name: str) -> Any:
        def before(*_: Any) -> None:
            phase[name] = True
        return before

    def stop(name: str) -> Any:
        def after(*_: Any) -> None:
            phase[name] = False
        return after

    def watch(handler: Any) -> None:
        if phase["failover"]:
            n.step("seed 001 §5.2 failover 2", f"controller {b}: watch {handler.path}")

    def unwatch(path: str) -> None:
        if phase["resigning"]:
            n.step("seed 001 §5.2 resignation 1/3", f"controller {b}: stop watching {path}")

    def context() -> None:
        n.step("seed 001 §5.2 failover 3", f"controller {b}: build the controller context from ZooKeeper "
               "(live brokers and their epochs, topics, assignments, every partition's leader and ISR)")

    def update_metadata(brokers: Any, partitions: Any) -> None:
        if phase["failover"]:
            n.step("seed 001 §5.2 failover 7", f"controller {b}: UpdateMetadata to live brokers {list(brokers)} "
                   "(Kafka 3.x sends it before starting the state machines, so brokers know who is alive first)")

    def replica_sm() -> None:
        n.step("seed 001 §5.2 failover 4", f"controller {b}: start the replica state machine (every replica on a "
               "live broker -> OnlineReplica)")

    def partition_sm() -> None:
        n.step("seed 001 §5.2 failover 4", f"controller {b}: start the partition state machine (partitions without "
               "a live leader get one)")

    def psm_stop() -> None:
        n.step("seed 001 §5.2 resignation 4", f"controller {b}: shut down the partition state machine")

    def rsm_stop() -> None:
        n.step("seed 001 §5.2 resignation 4", f"controller {b}: shut down the replica state machine")

    def channels() -> None:
        if phase["resigning"]:
            n.step("seed 001 §5.2 resignation 5", f"controller {b}: close the channels to every broker")

    def reset() -> None:
        if phase["resigning"]:
            n.step("seed 001 §5.2 resignation 6", f"controller {b}: reset the controller context (epoch forgotten)")

    def resigned(*_: Any) -> None:
        phase["resigning"] = False
        n.step("seed 001 §5.2 resignation 7", f"broker {b}: back to a plain broker (RunningAsBroker)")

    wrap(c, "on_controller_failover", before=start("failover"), after=stop("failover"))
    wrap(c, "on_controller_resignation", before=start("resigning"), after=resigned)
    wrap(c.zk_client, "register_znode_child_change_handler", before=watch)
    wrap(c.zk_client, "register_znode_change_handler_and_check_existence", before=watch)
    wrap(c.zk_client, "unregister_znode_child_change_handler", before=unwatch)
    wrap(c.zk_client, "unregister_znode_change_handler", before=unwatch)
    wrap(c, "initialize_controller_context", before=context)
    wrap(c, "send_update_metadata_request", before=update_metadata)
    wrap(c.replica_state_machine, "startup", before=replica_sm)
    wrap(c.partition_state_machine, "startup", before=partition_sm)
    wrap(c.partition_state_machine, "shutdown", before=psm_stop)
    wrap(c.replica_state_machine, "shutdown", before=rsm_stop)
    wrap(c.channel_manager, "shutdown", before=channels)
    wrap(c.controller_context, "reset_context", before=reset)


async def controller_failover(n: Narration) -> None:
    """Seed 001 §5.2: the controller loses its ZooKeeper session, resigns; another broker takes over."""
    async with await _zk_cluster(n) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        old = cluster.controller_id()
        n.say(f"== three brokers; broker {old} is the controller (controller epoch {cluster.controller_epoch()})")
        for b in range(3):
            _instrument_controller(n, cluster, b)
        n.on("controller_resigning", lambda e: (
            "seed 001 §5.2 resignation", f"controller {e['controller_id']}: onControllerResignation (its session expired)"))
        n.on("controller_elected", lambda e: (
            "seed 001 §5.1 elect / §5.2 failover 1", f"broker {e['controller_id']} created /controller first and bumped "
            f"/controller_epoch to {e['controller_epoch']} in the same ZooKeeper transaction"))
        n.on("topic_deletion_manager_init", lambda e: (
            "seed 001 §5.2 failover 8", f"controller {e['controller_id']}: topic deletion manager initialised "
            f"(to delete: {e['topics_to_be_deleted']})"))
        n.on("controller_failover_complete", lambda e: (
            "seed 001 §5.2 failover 5", f"controller {e['controller_id']}: RunningAsController, epoch "
            f"{e['controller_epoch']}, live brokers {e['live_brokers']}"))
        n.on("preferred_replica_elections_pending", lambda e: (
            "seed 001 §5.2 failover 6", f"controller {e['controller_id']}: pending reassignments and preferred "
            f"elections resumed (preferred elections listed: {e['listed']})"))
        n.on("broker_change", lambda e: (
            "seed 001 §5.2 (BrokerChange watch)", f"controller {e['controller_id']}: brokers new {e['new']}, dead "
            f"{e['dead']}, bounced {e['bounced']}"))
        n.say(f"== ZooKeeper expires broker {old}'s session: its /controller znode goes away")
        cluster.zookeeper.expire_session(cluster.brokers[old].zk_client.session_id)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, old) and cluster.active_controller() is not None
                                 and cluster.active_controller().is_active)
        await anyio.sleep(1)
        new = cluster.controller_id()
        n.say(f"== broker {new} is the controller now, controller epoch {cluster.controller_epoch()}; "
              f"partition t-0: {_state(cluster, TopicPartition(TOPIC, 0))}")


# ------------------------------------------------------------------------------ seed 001 §5.3


_PARTITION_SECTIONS: dict[tuple[str, ...], tuple[str, str]] = {
    ("NonExistentPartition", "NewPartition"): ("seed 001 §5.3.2.1", "replicas assigned, no leader yet"),
    ("NewPartition", "OnlinePartition"): ("seed 001 §5.3.2.2 initializeLeaderAndIsrForPartition",
                                          "first live replica leads, live replicas are the ISR, written to ZooKeeper, "
                                          "LeaderAndIsr sent"),
    ("OnlinePartition", "OnlinePartition"): ("seed 001 §5.3.2.2 electLeaderForPartition", "a new leader elected"),
    ("OfflinePartition", "OnlinePartition"): ("seed 001 §5.3.2.2 electLeaderForPartition, §5.4.2",
                                              "OfflinePartitionLeaderSelector: first live ISR member leads"),
    ("OnlinePartition", "OfflinePartition"): ("seed 001 §5.3.2.3", "its leader died: only the state changes"),
    # The same transition in a topic deletion (TopicDeletionManager takes every partition offline first).
    ("OnlinePartition", "OfflinePartition", "deleting"): ("seed 001 §5.3.2.3",
                                                          "the topic is being deleted: offline first, only the state "
                                                          "changes"),
    ("NewPartition", "OfflinePartition"): ("seed 001 §5.3.2.3", "only the state changes"),
    ("OfflinePartition", "NonExistentPartition"): ("seed 001 §5.3.2.4", "deleted: only the state changes"),
}


async def partition_states(n: Narration) -> None:
    """Seed 001 §5.3: create a topic, kill a leader, delete the topic; every partition transition."""
    watched = TopicPartition(TOPIC, 0)
    phase = {"deleting": False}  # the explanation of a transition depends on what caused it

    def transition(e: dict) -> tuple[str, str] | None:
        if e.get("topic_partition") != str(watched):
            return None
        key: tuple[str, ...] = (e["from_state"], e["to_state"])
        if phase["deleting"] and key + ("deleting",) in _PARTITION_SECTIONS:
            key += ("deleting",)
        ref, what = _PARTITION_SECTIONS.get(key, ("seed 001 §5.3.2", ""))
        extra = f" ({e['leader_and_isr']})" if "leader_and_isr" in e else ""
        return ref, f"controller {e['controller_id']}: {watched} {e['from_state']} -> {e['to_state']}: {what}{extra}"

    n.on("partition_state_changed", transition)
    async with await _zk_cluster(n) as cluster:
        n.say(f"== create topic {TOPIC} (2 partitions, replication factor 3); following {watched}")
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        await anyio.sleep(1)
        leader = cluster.leader_for(TOPIC, 0)
        n.say(f"== kill broker {leader}, the leader of {watched}; the controller notices when its session expires")
        cluster.kill_broker(leader)
        await cluster.wait_until(lambda: cluster.leader_for(TOPIC, 0) not in (-1, leader), timeout_ms=20000)
        n.say(f"   {watched}: {_state(cluster, watched)}")
        await cluster.restart_broker(leader)
        await cluster.wait_until(lambda: len(cluster.partition_state(TOPIC, 0)["isr"]) == 3, timeout_ms=30000)
        n.say(f"== broker {leader} is back in the ISR; delete topic {TOPIC}")
        phase["deleting"] = True
        await cluster.delete_topic(TOPIC)
        await cluster.wait_until(lambda: cluster.zookeeper.exists(f"/brokers/topics/{TOPIC}") is None, timeout_ms=30000)
        n.say(f"== topic {TOPIC} is gone from ZooKeeper")


_REPLICA_SECTIONS = {
    ("NonExistentReplica", "NewReplica"): "LeaderAndIsr with the current leader and ISR to the new replica",
    ("NewReplica", "OnlineReplica"): "added to the assigned replicas; part of the partition from now on",
    ("OnlineReplica", "OfflineReplica"): "StopReplica (no deletion) to it; removed from the ISR, LeaderAndIsr to the leader",
    ("OfflineReplica", "OnlineReplica"): "LeaderAndIsr with the current leader and ISR to the replica",
    ("OnlineReplica", "OnlineReplica"): "LeaderAndIsr with the current leader and ISR to the replica",
    ("OfflineReplica", "ReplicaDeletionStarted"): "StopReplica with deletion to it",
    ("ReplicaDeletionStarted", "ReplicaDeletionSuccessful"): "its broker deleted the log",
    ("ReplicaDeletionStarted", "ReplicaDeletionIneligible"): "deletion failed; it waits",
    ("ReplicaDeletionSuccessful", "NonExistentReplica"): "removed from the assignment cache",
}


async def replica_states(n: Narration) -> None:
    """Seed 001 §5.3.3: one replica through New, Online, Offline, Online again, and deletion."""
    watched = TopicPartition(TOPIC, 0)
    follow = {"replica": -1}

    def transition(e: dict) -> tuple[str, str] | None:
        if e.get("topic_partition") != str(watched) or e.get("replica") != follow["replica"]:
            return None
        what = _REPLICA_SECTIONS.get((e["from_state"], e["to_state"]), "")
        return ("seed 001 §5.3.3 handleStateChange", f"controller {e['controller_id']}: replica {e['replica']} of "
                f"{watched}: {e['from_state']} -> {e['to_state']}: {what}")

    n.on("replica_state_changed", transition)
    async with await _zk_cluster(n) as cluster:
        controller = cluster.controller_id()
        follow["replica"] = next(b for b in range(3) if b != controller)
        b = follow["replica"]
        n.say(f"== following the replica of {watched} on broker {b} (the controller is broker {controller})")
        n.say(f"== create topic {TOPIC}")
        await cluster.create_topic(TOPIC, partitions=1, replication_factor=3)
        await anyio.sleep(1)
        n.say(f"== kill broker {b}; its session expires")
        cluster.kill_broker(b)
        await cluster.wait_until(lambda: b not in cluster.partition_state(TOPIC, 0)["isr"], timeout_ms=20000)
        n.say(f"== restart broker {b}")
        await cluster.restart_broker(b)
        await cluster.wait_until(lambda: b in cluster.partition_state(TOPIC, 0)["isr"], timeout_ms=30000)
        n.say(f"== delete topic {TOPIC}")
        await cluster.delete_topic(TOPIC)
        await cluster.wait_until(lambda: cluster.zookeeper.exists(f"/brokers/topics/{TOPIC}") is None, timeout_ms=30000)
        await anyio.sleep(1)


# ------------------------------------------------------------------------------ seed 002


async def replica_lifecycle(n: Narration) -> None:
    """Seed 002: a replica is created by LeaderAndIsr, becomes a follower, and is stopped twice."""
    tp = TopicPartition(TOPIC, 0)
    follow = {"broker": -1}

    def mine(e: dict) -> bool:
        return e.get("broker_id") == follow["broker"]

    n.on("leader_and_isr_received", lambda e: (
        "seed 002 §handleLeaderAndIsrRequest", f"broker {e['broker_id']}: LeaderAndIsr from controller "
        f"{e['controller_id']} (controller epoch {e['controller_epoch']})") if mine(e) else None)
    n.on("log_loaded", lambda e: (
        "seed 002 §makeLeader 2 / §makeFollowers 2", f"broker {e['broker_id']}: {e['topic_partition']} has no local "
        f"log yet: create it (HW from the checkpoint: {e['initial_high_watermark']})") if mine(e) else None)
    n.on("become_leader", lambda e: (
        "seed 002 §makeLeader 1-6", f"broker {e['broker_id']}: assignment and ISR {e['isr']} updated, leader epoch "
        f"{e['leader_epoch']} starts at offset {e['epoch_start_offset']}, followers' fetch state reset, HW "
        f"{e['high_watermark']}") if mine(e) else None)
    n.on("become_follower", lambda e: (
        "seed 002 §makeFollowers 1-2", f"broker {e['broker_id']}: leader {e['leader']} is online; follow it at "
        f"leader epoch {e['leader_epoch']} (LEO {e['log_end_offset']})") if mine(e) else None)
    n.on("stopped_fetchers_for_become_follower", lambda e: (
        "seed 002 §makeFollowers 3-4", f"broker {e['broker_id']}: its fetchers stopped; delayed requests on the "
        "partition completed") if mine(e) else None)
    n.on("fetcher_added", lambda e: (
        "seed 002 §makeFollowers 5", manager_line(e))
        if str(e.get("manager", "")).endswith(f"on broker {follow['broker']}") else None)
    n.on("stop_replica_received", lambda e: (
        "seed 002 §handleStopReplicaRequest", f"broker {e['broker_id']}: StopReplica from controller "
        f"{e['controller_id']}") if mine(e) else None)
    n.on("stopped_partitions_deleted", lambda e: (
        "seed 002 §stopPartitions", f"broker {e['broker_id']}: {e['partitions']} removed; LogManager.asyncDelete "
        "deletes the log") if mine(e) else None)

    async with await _zk_cluster(n) as cluster:
        controller = cluster.controller_id()
        follow["broker"] = b = next(x for x in range(3) if x != controller)
        rm = cluster.brokers[b].replica_manager

        def stop_partitions(partitions: Any) -> None:
            for stop in partitions:
                n.step("seed 002 §stopReplicas", f"broker {b}: {stop.topic_partition}: controller and leader epochs "
                       f"valid; deletePartition={stop.delete_local_log}: "
                       + ("stop fetching, complete its delayed requests, keep the log" if not stop.delete_local_log
                          else "forget the partition and delete its log"))

        wrap(rm, "stop_partitions", before=stop_partitions)
        assignment = {0: [b] + [x for x in range(3) if x != b]}
        n.say(f"== create topic {TOPIC} with broker {b} as preferred leader of {tp}; following broker {b}")
        await cluster.create_topic(TOPIC, replica_assignment=assignment)
        await anyio.sleep(1)
        n.say(f"== broker {b}'s ZooKeeper session expires: the controller moves leadership away, then the "
              "re-registered broker gets its replica back as a follower")
        cluster.zookeeper.expire_session(cluster.brokers[b].zk_client.session_id)
        await cluster.wait_until(lambda: cluster.leader_for(TOPIC, 0) not in (-1, b), timeout_ms=20000)
        await cluster.wait_until(lambda: b in cluster.partition_state(TOPIC, 0)["isr"], timeout_ms=30000)
        n.say(f"   {tp}: {_state(cluster, tp)}")
        n.say(f"== delete topic {TOPIC}: the controller sends StopReplica twice (OfflineReplica, then "
              "ReplicaDeletionStarted)")
        await cluster.delete_topic(TOPIC)
        await cluster.wait_until(lambda: cluster.zookeeper.exists(f"/brokers/topics/{TOPIC}") is None, timeout_ms=30000)
        await anyio.sleep(1)
        n.say(f"== broker {b} hosts {tp}: {rm.online_partition(tp) is not None}; log on disk: "
              f"{cluster.disks[b].get_local_log(tp) is not None}")


# ------------------------------------------------------------------------------ seed 000, __consumer_offsets


async def consumer_offsets_migration(n: Narration) -> None:
    """Seed 000: the coordinator's __consumer_offsets partition changes leader; groups move with it."""
    group = "narrated-group"
    events = [
        ("group_coordinator_elected", "seed 000 §becoming leader (onElection)", lambda e: (
            f"broker {e['broker_id']}: leads __consumer_offsets-{e['partition']} now (coordinator epoch "
            f"{e['coordinator_epoch']}): load it")),
        ("offsets_partition_load_scheduled", "seed 000 §becoming leader 1", lambda e: (
            f"broker {e['broker_id']}: {e['topic_partition']} scheduled for loading (loadingPartitions)")),
        ("offsets_partition_loading", "seed 000 §loadGroupsAndOffsets 1-3", lambda e: (
            f"broker {e['broker_id']}: read {e['topic_partition']} from its first record up to its "
            f"{_bound(n, e['broker_id'])}; later records of a key replace earlier ones")),
        ("group_loaded", "seed 000 §loadGroupsAndOffsets 4 (loadGroup)", lambda e: (
            f"broker {e['broker_id']}: group {e['group_id']} into the cache: state {e['state']}, "
            f"{e['offsets']} committed offsets")),
        ("offsets_partition_loaded", "seed 000 §becoming leader 2", lambda e: (
            f"broker {e['broker_id']}: {e['topic_partition']} loaded: {e['groups']} group(s), {e['offsets']} offset(s)")),
        ("offsets_partition_owned", "seed 000 §becoming leader 2", lambda e: (
            f"broker {e['broker_id']}: {e['topic_partition']} moves from loadingPartitions to ownedPartitions")),
        ("group_coordinator_resigned", "seed 000 §becoming follower (onResignation)", lambda e: (
            f"broker {e['broker_id']}: follows __consumer_offsets-{e['partition']} now: unload its groups")),
        ("group_unloaded", "seed 000 §becoming follower 1 (onGroupUnloaded)", lambda e: (
            f"broker {e['broker_id']}: group {e['group_id']} -> Dead; waiting JoinGroup/SyncGroup answered "
            "NOT_COORDINATOR so members look for the new coordinator")),
        ("offsets_partition_unloaded", "seed 000 §becoming follower 2", lambda e: (
            f"broker {e['broker_id']}: {e['topic_partition']}'s groups removed from the cache ({e['groups']} group(s), "
            f"{e['offsets']} offset(s))")),
    ]
    from kafka_ref.coordinator.group.group_metadata_manager import partition_for

    offsets_partition = partition_for(group, ZK_CONFIG["offsets.topic.num.partitions"])

    def ours(e: dict) -> bool:
        """Events about the group's own __consumer_offsets partition."""
        if "partition" in e:
            return e["partition"] == offsets_partition
        return str(e.get("topic_partition", f"__consumer_offsets-{offsets_partition}")) == \
            f"__consumer_offsets-{offsets_partition}"

    for name, ref, text in events:
        n.on(name, lambda e, ref=ref, text=text: (ref, text(e)) if ours(e) else None)

    async with await _zk_cluster(n) as cluster:
        await cluster.create_topic(TOPIC, partitions=2, replication_factor=3)
        n.say(f"== group {group!r} lives in __consumer_offsets partition abs(hashCode) % "
              f"{ZK_CONFIG['offsets.topic.num.partitions']} = {offsets_partition}")
        coordinator = await _find_coordinator(cluster, group)
        n.say(f"== FindCoordinator created __consumer_offsets; the coordinator is broker {coordinator}")
        commit = {TopicPartition(TOPIC, 0): 42, TopicPartition(TOPIC, 1): 7}
        error = await _commit(cluster, coordinator, group, commit)
        n.say(f"== OffsetCommit {dict((str(k), v) for k, v in commit.items())} to broker {coordinator}: {error}")
        n.say(f"== broker {coordinator}'s ZooKeeper session expires: the controller moves the partition's leadership "
              "away (immigration elsewhere), then gives the re-registered broker its replica back as a follower "
              "(emigration)")
        cluster.zookeeper.expire_session(cluster.brokers[coordinator].zk_client.session_id)
        otp = TopicPartition("__consumer_offsets", offsets_partition)
        await cluster.wait_until(lambda: cluster.leader_for(otp.topic, otp.partition) not in (-1, coordinator))
        await cluster.wait_until(lambda: coordinator in cluster.partition_state(otp.topic, otp.partition)["isr"],
                                 timeout_ms=30000)
        await anyio.sleep(1)
        new = await _find_coordinator(cluster, group)
        fetched = await _fetch(cluster, new, group, list(commit))
        n.say(f"== the coordinator is broker {new}; OffsetFetch there: {fetched}")
        error = await _commit(cluster, coordinator, group, commit)
        n.say(f"== an OffsetCommit sent to the old coordinator, broker {coordinator}: {error}")


def _bound(n: Narration, broker_id: int) -> str:
    bound = n.cluster.brokers[broker_id].group_coordinator.group_manager.load_bound
    if bound == "log_end_offset":
        return "log end offset (Kafka 0.11.0 onwards; seed 000's 0.10 read only while below the HW)"
    return "high watermark (seed 000, Kafka 0.10.x)"


async def _find_coordinator(cluster: Cluster, group: str) -> int:
    request = FindCoordinatorRequest(key_type=CoordinatorType.GROUP, coordinator_keys=(group,))
    with anyio.fail_after(30):
        while True:
            response = await cluster.network.send("client", cluster.live_broker_ids()[0], request, 5000,
                                                  principal=ANONYMOUS_PRINCIPAL)
            found = response.coordinator(group)
            if found is not None and found.error_code == Errors.NONE.code:
                return found.node_id
            await anyio.sleep(0.2)


async def _commit(cluster: Cluster, broker: int, group: str, offsets: dict[TopicPartition, int]) -> str:
    request = OffsetCommitRequest.build(group, {tp: (o, -1, "") for tp, o in offsets.items()})
    response = await cluster.network.send("client", broker, request, 5000, principal=ANONYMOUS_PRINCIPAL)
    return ", ".join(sorted({Errors.for_code(c).name for c in response.partition_errors().values()}))


async def _fetch(cluster: Cluster, broker: int, group: str, partitions: list[TopicPartition]) -> dict[str, int]:
    request = OffsetFetchRequest.for_group(group, partitions)
    response = await cluster.network.send("client", broker, request, 5000, principal=ANONYMOUS_PRINCIPAL)
    data = response.group(group).partition_data()
    return {str(tp): d.committed_offset for tp, d in sorted(data.items(), key=lambda x: x[0].partition)}
