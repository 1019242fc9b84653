"""Seed 000's ``__consumer_offsets`` leader change, end to end: the coordinator dies, another loads the group.

A runnable scenario used by ``kafka-ref demo coordinator-failover`` and by
tests/test_coordinator_failover.py. A ZooKeeper-mode cluster of three brokers; a group of
three consumers commits offsets to its ``__consumer_offsets`` partition (acks=all); the broker
leading that partition is killed, and one consumer dies with it (no LeaveGroup). The controller
elects a new leader from the ISR; its LeaderAndIsr makes that broker load the partition
(``onLeadershipChange`` → ``onElection`` → ``loadGroupsAndOffsets`` up to the HW: loading →
owned). The group comes back Stable with all three members and their sessions renewed; the
dead consumer's session expires there, the survivors rebalance (EAGER: every partition is
revoked) and resume from the committed offsets. Records consumed after the last commit may be
consumed again (at least once); nothing before it is, and nothing is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import anyio

from kafka_ref.clients.consumer_coordinator_offsets import CommitFailedException
from kafka_ref.common.errors import RebalanceInProgressException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, partition_for

TOPIC = "events"
PARTITIONS = 6
RECORDS_PER_PARTITION = 10
OFFSETS_PARTITIONS = 3


@dataclass
class FailoverReport:
    """What the scenario observed, for the narration and the test's exact checks."""

    group_id: str
    offsets_partition: int = -1
    old_coordinator: int = -1
    new_coordinator: int = -1
    coordinator_epoch: int = -1
    crashed_consumer: str = ""
    committed_before_kill: dict[TopicPartition, int] = field(default_factory=dict)
    uncommitted_before_kill: list[tuple[str, TopicPartition, int]] = field(default_factory=list)
    loaded_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    loaded_generation: int = -1
    loaded_members: int = 0
    loaded_state: str = ""
    # (sequence number, consumer, generation, partition, offset) per record consumed
    consumed: list[tuple[int, str, int, TopicPartition, int]] = field(default_factory=list)
    # (sequence number, partition, offset) per acknowledged commit
    commits: list[tuple[int, TopicPartition, int]] = field(default_factory=list)
    final_generation: int = -1
    final_assignment: dict[str, list[TopicPartition]] = field(default_factory=dict)

    def committed_at(self, tp: TopicPartition, seq: int) -> int:
        """The partition's last acknowledged commit before ``seq`` (0 when none)."""
        last = 0
        for s, p, offset in self.commits:
            if s < seq and p == tp:
                last = offset
        return last

    def duplicates(self) -> list[tuple[TopicPartition, int]]:
        """Records consumed more than once, in consumption order of their second time."""
        seen: set[tuple[TopicPartition, int]] = set()
        out = []
        for _s, _c, _g, tp, offset in self.consumed:
            if (tp, offset) in seen:
                out.append((tp, offset))
            seen.add((tp, offset))
        return out


class _Member:
    """One consumer of the group and the bookkeeping the report needs."""

    def __init__(self, cluster: Any, name: str, group_id: str, report: FailoverReport, seq: list[int]) -> None:
        self.name = name
        self.report = report
        self.seq = seq
        self.consumer = cluster.consumer(client_id=name, group_id=group_id, max_poll_records=2, session_timeout_ms=10000,
                                         heartbeat_interval_ms=1000, max_poll_interval_ms=10000)
        self.consumer.subscribe([TOPIC])

    @property
    def generation(self) -> int:
        return self.consumer.coordinator.generation.generation_id

    def _next(self) -> int:
        self.seq[0] += 1
        return self.seq[0]

    async def poll_once(self) -> list[Any]:
        records = await self.consumer.poll(500)
        for r in records:
            self.report.consumed.append((self._next(), self.name, self.generation, TopicPartition(r.topic, r.partition), r.offset))
        return records

    async def commit(self) -> None:
        """commit_sync of the consumed positions; a rebalance under way just skips this commit."""
        offsets = self.consumer.coordinator.consumed_offsets(self.consumer)
        try:
            await self.consumer.commit_sync(offsets)
        except (RebalanceInProgressException, CommitFailedException):
            return
        seq = self._next()
        self.report.commits.extend((seq, tp, o.offset) for tp, o in offsets.items())

    async def poll_and_commit(self, rounds: int) -> None:
        for _ in range(rounds):
            await self.poll_once()
            await self.commit()

    def caught_up(self) -> bool:
        states = self.consumer.subscriptions.assignment
        return all(s.position is not None and s.position.offset == RECORDS_PER_PARTITION for s in states.values())


def _assignment_line(members: list[_Member]) -> str:
    return ", ".join(f"{m.name} → [{', '.join(str(tp) for tp in sorted(m.consumer.assignment()))}]" for m in members)


def _offsets_line(offsets: dict[TopicPartition, int]) -> str:
    return " ".join(f"{tp}={o}" for tp, o in sorted(offsets.items()))


async def run_coordinator_failover(seed: int = 7, out: Callable[[str], None] = lambda line: None,
                                   group_id: str = "orders", metadata_mode: str = "zk") -> FailoverReport:
    """Run the scenario in the current event loop (virtual time expected) and return its report."""
    from kafka_ref.cluster import Cluster

    report = FailoverReport(group_id)
    seq = [0]
    config = {"offsets.topic.num.partitions": OFFSETS_PARTITIONS, "offsets.topic.replication.factor": 3}
    mode_name = "ZooKeeper" if metadata_mode == "zk" else "KRaft"
    out(f"kafka-ref demo coordinator-failover: three brokers ({mode_name} mode), a group of three consumers, virtual time")
    async with Cluster(brokers=3, metadata_mode=metadata_mode, config=config, seed=seed) as cluster:
        # 1. Data to consume.
        out(f"== 1. topic {TOPIC}: {PARTITIONS} partitions, replication factor 3; "
            f"{PARTITIONS * RECORDS_PER_PARTITION} records, {RECORDS_PER_PARTITION} per partition")
        await cluster.create_topic(TOPIC, partitions=PARTITIONS, replication_factor=3)
        async with cluster.producer() as producer:
            for i in range(PARTITIONS * RECORDS_PER_PARTITION):
                await producer.send(TOPIC, f"record-{i}".encode(), partition=i % PARTITIONS)
        # 2. The group forms; FindCoordinator creates __consumer_offsets on first use.
        report.offsets_partition = partition_for(group_id, OFFSETS_PARTITIONS)
        otp = TopicPartition(GROUP_METADATA_TOPIC_NAME, report.offsets_partition)
        out(f"== 2. consumers c1, c2, c3 subscribe as group '{group_id}'; the first FindCoordinator creates "
            f"{GROUP_METADATA_TOPIC_NAME} ({OFFSETS_PARTITIONS} partitions, replication factor 3)")
        members = [_Member(cluster, f"c{i}", group_id, report, seq) for i in (1, 2, 3)]

        def formed() -> bool:
            gens = {m.generation for m in members}
            return len(gens) == 1 and min(gens) >= 1 and all(not m.consumer.coordinator.rejoin_needed for m in members)

        async def join_then_consume(m: _Member) -> None:
            while not formed():
                await m.poll_once()
                await m.commit()
            await m.poll_and_commit(2)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for m in members:
                    tg.start_soon(join_then_consume, m)
        report.old_coordinator = cluster.leader_for(GROUP_METADATA_TOPIC_NAME, report.offsets_partition)
        out(f"  group '{group_id}' lives in {otp} (Utils.abs(hashCode) % {OFFSETS_PARTITIONS}); its leader, "
            f"broker {report.old_coordinator}, is the group coordinator")
        out(f"  generation {members[0].generation}: {_assignment_line(members)}")
        # 3. One more poll each, not committed.
        out(f"== 3. consume and commit (OffsetCommit → acks=all append to {otp}); then one more poll without a commit")
        mark = len(report.consumed)
        for m in members:
            while not await m.poll_once():
                pass
        for _s, tp, _offset in report.commits:
            report.committed_before_kill[tp] = report.committed_at(tp, seq[0] + 1)
        report.uncommitted_before_kill = [(c, tp, o) for _s, c, _g, tp, o in report.consumed[mark:]]
        out(f"  committed offsets: {_offsets_line(report.committed_before_kill)}")
        out("  consumed after the last commit: " + ", ".join(f"{c} {tp}@{o}" for c, tp, o in report.uncommitted_before_kill))
        # 4. Followers learn the HW on their next fetch: then every replica has the commits below its HW.
        def replicated() -> bool:
            logs = [cluster.broker(b).replica_manager.get_log(otp) for b in cluster.live_broker_ids()]
            leader_log = cluster.broker(report.old_coordinator).replica_manager.get_log(otp)
            return all(log is not None and log.high_watermark == leader_log.log_end_offset for log in logs)

        await cluster.wait_until(replicated, message="commits replicated with the HW")
        out(f"== 4. every replica of {otp} has the commits below its HW: "
            + ", ".join(f"b{b}: HW={cluster.broker(b).replica_manager.get_log(otp).high_watermark}"
                        for b in cluster.live_broker_ids()))
        # 5. The coordinator's broker dies, and c3 with it.
        crashed = members[2]
        report.crashed_consumer = crashed.name
        out(f"== 5. kill broker {report.old_coordinator} (the coordinator); consumer {crashed.name} dies with it (no LeaveGroup)")
        cluster.kill_broker(report.old_coordinator)
        await cluster.wait_until(
            lambda: cluster.leader_for(GROUP_METADATA_TOPIC_NAME, report.offsets_partition) not in (-1, report.old_coordinator),
            timeout_ms=60000, message="a new leader for the offsets partition")
        state = cluster.partition_state(GROUP_METADATA_TOPIC_NAME, report.offsets_partition)
        report.new_coordinator, report.coordinator_epoch = state["leader"], state["leader_epoch"]
        manager = cluster.broker(report.new_coordinator).group_coordinator.group_manager
        await cluster.wait_until(lambda: manager.is_partition_owned(report.offsets_partition), message="the load")
        group = manager.get_group(group_id)
        report.loaded_offsets = {tp: o.offset for tp, o in group.all_offsets().items()}
        report.loaded_generation, report.loaded_members, report.loaded_state = group.generation_id, group.size, str(group.current_state)
        out(f"  new leader of {otp}: broker {report.new_coordinator}, leader epoch {report.coordinator_epoch} "
            f"(the coordinator epoch); it loaded the partition up to its HW")
        out(f"  loaded group '{group_id}': generation {report.loaded_generation}, {report.loaded_members} members, "
            f"{report.loaded_state}; offsets {_offsets_line(report.loaded_offsets)}")
        # 6. The survivors find the new coordinator; c3's session expires there; rebalance.
        out(f"== 6. c1 and c2 find broker {report.new_coordinator}; {crashed.name}'s session expires there; "
            "they rebalance and resume from the committed offsets")
        survivors = members[:2]

        def settled() -> bool:
            gens = {m.generation for m in survivors}
            assigned = set().union(*(m.consumer.assignment() for m in survivors))
            return (len(gens) == 1 and min(gens) > report.loaded_generation and len(assigned) == PARTITIONS
                    and all(not m.consumer.coordinator.rejoin_needed and m.caught_up() for m in survivors))

        async def drive(m: _Member) -> None:
            while not settled():
                await m.poll_once()
                await m.commit()

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for m in survivors:
                    tg.start_soon(drive, m)
        report.final_generation = survivors[0].generation
        report.final_assignment = {m.name: sorted(m.consumer.assignment()) for m in survivors}
        out(f"  generation {report.final_generation}: {_assignment_line(survivors)}")
        # 7. The outcome.
        duplicates = report.duplicates()
        out(f"== 7. {len({(tp, o) for _s, _c, _g, tp, o in report.consumed})} distinct records consumed of "
            f"{PARTITIONS * RECORDS_PER_PARTITION}; consumed twice: "
            + (", ".join(f"{tp}@{o}" for tp, o in duplicates) or "none")
            + " (only records after their partition's last commit)")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")
    return report


# Events of this flow worth a line in ``kafka-ref demo`` (see kafka_ref/demos/demo.py's Narrator).
NARRATED_GROUP = {
    "offsets_topic_creation": "KafkaApis#getCoordinator: __consumer_offsets created on first use",
    "group_coordinator_elected": "seed 000 step 9: onLeadershipChange → onElection (handleGroupImmigration)",
    "offsets_partition_loading": "seed 000 §becoming leader: loadGroupsForPartition → loading",
    "offsets_partition_loaded": "seed 000 loadGroupsAndOffsets: replayed from log start to the HW",
    "offsets_partition_owned": "seed 000: loading → owned",
    "offsets_partition_unloaded": "seed 000 §becoming follower: removeGroupsForPartition",
    "group_loaded": "seed 000 onGroupLoaded: members get a new session",
    "group_unloaded": "seed 000 onGroupUnloaded: Dead, parked requests get NOT_COORDINATOR",
    "group_preparing_rebalance": "GroupCoordinator#prepareRebalance",
    "group_stabilized": "GroupCoordinator#onCompleteJoin: a new generation",
    "member_session_expired": "DelayedHeartbeat expired (session.timeout.ms)",
}


async def _coordinator_failover_flow(seed: int, out: Callable[[str], None]) -> None:
    await run_coordinator_failover(seed=seed, out=out)


FLOWS = {"coordinator-failover": _coordinator_failover_flow}
