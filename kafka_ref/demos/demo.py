"""``kafka-ref demo``: a narrated run of a three-broker ZooKeeper-mode cluster in virtual time.

Each printed line comes from the cluster's state-change events or its state, tagged with the
seed section it illustrates. Flow ``failover`` (the default): controller election, topic
creation, acks=all writes, the leader killed, a new leader elected from the ISR, the old
leader back as a follower that truncates and catches up.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import anyio
import structlog

from kafka_ref.common.layout import WIDTH, wrap
from kafka_ref.common.state_change import configure_logging
from kafka_ref.demos.demo_admin import FLOWS as ADMIN_FLOWS
from kafka_ref.demos.demo_admin import NARRATED_ADMIN
from kafka_ref.demos.coordinator_failover import FLOWS as GROUP_FLOWS
from kafka_ref.demos.coordinator_failover import NARRATED_GROUP

# Events worth a line, and the seed step each one illustrates.
NARRATED = {
    "controller_elected": "seed 001 §5.1 elect: won the race for /controller, epoch bumped",
    "controller_failover_complete": "seed 001 §5.2 onControllerFailover done",
    "controller_resigning": "seed 001 §5.2 onControllerResignation",
    "broker_change": "seed 001 §5.2 BrokerChange (ZooKeeper watch on /brokers/ids)",
    "new_partition_creation": "seed 001 §5.3.2.1 NonExistent → New → Online",
    "partition_state_change": "seed 001 §5.3.2 partition state machine",
    "become_leader": "seed 000 §makeLeaders / seed 002 §makeLeader",
    "become_follower": "seed 000 §makeFollowers",
    "shrinking_isr": "seed 004 §2.3 maybeShrinkIsr (replica.lag.time.max.ms)",
    "isr_expand_pending": "seed 004 §2.3 maybeExpandIsr → AlterPartition",
    "isr_updated": "AlterPartition committed by the controller",
    "truncating": "seed 000 §makeFollowers step 4 / seed 004 truncation",
    "broker_crashed": "broker process killed (its disk survives)",
    "broker_started": "broker process started",
}
NARRATED.update(NARRATED_ADMIN)  # deletion, reassignment, preferred-election, controlled-shutdown
NARRATED.update(NARRATED_GROUP)  # coordinator-failover: __consumer_offsets loading and unloading


class Narrator:
    """A structlog processor that prints chosen state-change events as readable lines.

    Each event is one logical line (time, who, event, fields, the seed step it shows), wrapped at
    ``width`` columns (None: whole). Every broker publishes every metadata offset (KRaft mode):
    the first ``metadata_publish`` of an offset gets its line, the other brokers' publishes of the
    same offset are summed up in one line before the next heading. ``say`` prints the demo's own
    lines, in order with the events.
    """

    SUMMARISED = "metadata_publish"

    def __init__(self, out: Callable[[str], None], clock: Callable[[], float], width: int | None = None) -> None:
        self.out = out
        self.clock = clock
        self.width = width
        self.count = 0
        self._published: dict[object, str] = {}  # metadata offset -> who printed it
        self._also: dict[object, list[str]] = {}  # metadata offset -> the other brokers that published it

    def say(self, text: str) -> None:
        self.flush()
        for line in wrap(text, self.width):
            self.out(line)

    def flush(self) -> None:
        """Print the summary of the publishes held back since the last heading."""
        if not self._also:
            return
        parts = [f"offset {offset} by broker{'s' if len(whos) > 1 else ''} {', '.join(whos)}"
                 for offset, whos in self._also.items()]
        self._also = {}
        self._emit(f"  (the other brokers published the same metadata offsets: {'; '.join(parts)})")

    def _emit(self, line: str) -> None:
        for part in wrap(line, self.width, indent=15):
            self.out(part)
        self.count += 1

    def __call__(self, _logger: Any, _name: str, event: dict) -> Any:
        name = event.get("event", "")
        for key, note in NARRATED.items():
            if name == key or name.startswith(key):
                if "broker_id" in event:
                    who = f"broker {event['broker_id']}"
                elif "controller_id" in event:
                    who = f"controller {event['controller_id']}"
                else:
                    who = "(log)"
                if name == self.SUMMARISED and "offset" in event:
                    first = self._published.setdefault(event["offset"], who)
                    if first != who:
                        self._also.setdefault(event["offset"], []).append(who.removeprefix("broker "))
                        break
                detail = {k: v for k, v in event.items() if k not in ("event", "broker_id", "controller_id", "log_level")}
                text = " ".join(f"{k}={v}" for k, v in detail.items())
                self._emit(f"  t={self.clock():8.3f}s  {who:<13} {name:<28} {text}   [{note}]")
                break
        raise structlog.DropEvent


def run_demo(flow: str = "failover", seed: int = 7, backend: str = "trio", out: Callable[[str], None] = print,
             mode: str = "zk", width: int | None = None) -> int:
    """Run one narrated flow; returns a process exit code. ``mode="kraft"`` runs the KRaft flows;
    lines are wrapped at ``width`` columns (None, the default: printed whole; the CLI wraps at 100)."""
    if mode == "kraft":
        from kafka_ref.demos.kraft_demo import run_kraft_demo

        return run_kraft_demo(flow, seed=seed, backend=backend, out=out, width=width)
    flows = {"failover": _failover, **ADMIN_FLOWS, **GROUP_FLOWS}
    if flow not in flows:
        out(f"unknown demo flow {flow!r}; available: {', '.join(sorted(flows))}")
        return 2
    configure_logging(logging.INFO)
    narrator = Narrator(out, lambda: anyio.current_time(), width)
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, narrator])

    async def main() -> None:
        await flows[flow](seed, narrator.say)

    try:
        run_seeded(main, backend, seed)
    finally:
        narrator.flush()
        configure_logging()
    return 0


def run_seeded(main: Callable[[], Any], backend: str, seed: int) -> Any:
    """Run ``main`` in virtual time with the schedule fixed by ``seed``, as the simulator does.

    On trio, runnable tasks are otherwise shuffled from an unseeded generator, so lines logged at
    the same virtual instant came out in a different order on each run. The asyncio virtual-time
    loop runs ready callbacks in FIFO order and needs nothing.
    """
    from kafka_ref.sim.simulate import deterministic_scheduling
    from kafka_ref.testing.virtual_time_loop import run_in_virtual_time

    if backend != "trio":
        return run_in_virtual_time(main, backend)
    with deterministic_scheduling(seed):
        return run_in_virtual_time(main, backend)


async def _produce(cluster: Any, topic: str, values: list[bytes], acks: int = -1) -> Any:
    from kafka_ref.common.records import MemoryRecords, SimpleRecord
    from kafka_ref.common.requests.produce import ProduceRequest
    from kafka_ref.common.topic_partition import TopicPartition

    records = MemoryRecords.with_records([SimpleRecord(None, v) for v in values])
    request = ProduceRequest.build(acks=acks, timeout_ms=30000, records={TopicPartition(topic, 0): records})
    response = await cluster.network.send("producer", cluster.leader_for(topic, 0), request, 31000, principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


def _replicas_line(cluster: Any, topic: str, roles: bool = False) -> str:
    """Partition 0 of ``topic`` on every broker: LEO and HW (and leader/follower with ``roles``)."""
    from kafka_ref.common.topic_partition import TopicPartition

    parts = []
    for b, broker in sorted(cluster.brokers.items()):
        p = broker.replica_manager.online_partition(TopicPartition(topic, 0)) if broker.is_running else None
        if p is None or p.log is None:
            parts.append(f"b{b}: -")
        else:
            role = ("leader " if p.is_leader else "follower ") if roles else ""
            parts.append(f"b{b}: {role}LEO={p.log.log_end_offset} HW={p.log.high_watermark}")
    return ", ".join(parts)


def _replicas_hw(cluster: Any, topic: str) -> set[int]:
    from kafka_ref.common.topic_partition import TopicPartition

    partitions = [broker.replica_manager.online_partition(TopicPartition(topic, 0))
                  for broker in cluster.brokers.values() if broker.is_running]
    return {p.log.high_watermark if p is not None and p.log is not None else -1 for p in partitions}


async def _failover(seed: int, out: Callable[[str], None]) -> None:
    from kafka_ref.cluster import Cluster

    out("kafka-ref demo: three brokers, ZooKeeper mode, virtual time")
    out("== 1. brokers start, register in ZooKeeper, one wins the controller election")
    async with Cluster(brokers=3, metadata_mode="zk", config={"min.insync.replicas": 2}, seed=seed) as cluster:
        out(f"  controller is broker {cluster.controller_id()} with controller epoch {cluster.controller_epoch()}")
        out("== 2. topic t: 1 partition, replication factor 3, min.insync.replicas=2")
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        state = cluster.partition_state("t", 0)
        out(f"  partition state in ZooKeeper: {state}")
        out("== 3. acks=all writes: acknowledged only once the ISR has them (HW moved past them)")
        for i in range(3):
            r = await _produce(cluster, "t", [f"record-{i}".encode()])
            out(f"  produce record-{i}: error={r.error_code} offset={r.base_offset}")
        await cluster.wait_until(lambda: _replicas_hw(cluster, "t") == {3}, message="every replica's HW at 3")
        await anyio.sleep(1)
        out(f"  replicas: {_replicas_line(cluster, 't')}")
        leader = cluster.leader_for("t", 0)
        followers = [b for b in sorted(cluster.brokers) if b != leader]
        out(f"== 4. the leader (broker {leader}) loses its links to the followers; two acks=1 writes reach it alone")
        for f in followers:
            cluster.network.cut_link(leader, f)
        for i in (3, 4):
            r = await _produce(cluster, "t", [f"unreplicated-{i}".encode()], acks=1)
            out(f"  produce unreplicated-{i} (acks=1): error={r.error_code} offset={r.base_offset}  "
                "(acknowledged by the leader alone)")
        out(f"  replicas: {_replicas_line(cluster, 't')}")
        out(f"== 5. kill the leader (broker {leader}); its ZooKeeper session expires after zookeeper.session.timeout.ms")
        cluster.kill_broker(leader)
        for f in followers:
            cluster.network.heal_link(leader, f)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) not in (-1, leader), timeout_ms=60000,
                                 message="a new leader")
        state = cluster.partition_state("t", 0)
        out(f"  new partition state: {state}  (leader elected from the ISR, leader epoch bumped)")
        r = await _produce(cluster, "t", [b"record-after-failover"])
        out(f"  produce record-after-failover: error={r.error_code} offset={r.base_offset}")
        out(f"== 6. restart broker {leader}: its log ends at 5, past the new leader's epoch start: it truncates "
            "the two unreplicated records, catches up, rejoins the ISR")
        await cluster.restart_broker(leader)
        await cluster.wait_until(lambda: leader in cluster.partition_state("t", 0)["isr"], timeout_ms=60000,
                                 message="old leader back in the ISR")
        await anyio.sleep(1)
        out(f"  partition state: {cluster.partition_state('t', 0)}")
        out(f"  replicas: {_replicas_line(cluster, 't')}")
        out(f"== done at t={anyio.current_time():.3f}s of virtual time")
