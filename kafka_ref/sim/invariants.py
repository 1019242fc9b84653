"""Safety invariants of Kafka replication, checked after every event of a simulated run.

Modelled on the checks of Kafka's RaftEventSimulationTest (its ``Invariant``s run after every
simulated event) and on Jepsen-style end-of-run checks. During the run, after every step of the
event loop that added events to the history (an atomic section: kafka_ref's synchronous methods
never interleave), ``InvariantChecker.check`` looks at the whole cluster:

* ``leader_in_isr`` – a partition with a leader has it in its ISR (in the controller's record,
  and in the leader's own committed ISR);
* ``leader_epoch_monotonic`` / ``controller_epoch_monotonic`` – epochs never go back (in
  the controller's record, and in each broker process);
* ``single_leader_per_epoch`` – no two brokers ever lead a partition in the same leader epoch;
* ``hw_monotonic_in_epoch`` – a leader's high watermark never drops within its epoch;
* ``hw_le_isr_leo`` – the leader's HW is at most the log end offset of every member of its
  committed ISR (what it acknowledged really is on every in-sync replica);
* ``consumer_below_hw`` / ``consumer_offsets_monotonic`` – a consumer only reads below the HW
  of the broker that served it, and its offsets only grow.

After the faults are healed and the cluster has converged (``converged_after_heal``),
``check_final`` compares the replica logs: ``replicas_identical`` (same batches, offsets,
epochs and bytes everywhere), ``acked_write_durable`` (every acks=all write acknowledged on a
partition that never had an unclean election is in every replica at its offset), and
``consumed_record_durable`` (what a consumer read is still there). Unclean elections are
recorded, and the acknowledged writes they lose are counted apart, not as violations.

"The controller's record" is ZooKeeper's partition state znodes and /controller_epoch in
ZooKeeper mode, and the QuorumController's partition registrations and metadata quorum epoch in
KRaft mode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.sim.simulate import SimContext

INVARIANTS = (
    "leader_in_isr",
    "leader_epoch_monotonic",
    "controller_epoch_monotonic",
    "single_leader_per_epoch",
    "hw_monotonic_in_epoch",
    "hw_le_isr_leo",
    "consumer_below_hw",
    "consumer_offsets_monotonic",
    "converged_after_heal",
    "replicas_identical",
    "acked_write_durable",
    "consumed_record_durable",
    "committed_offset_durable",
    "metadata_applied_without_fault",
)

# Kafka's KRaft broker logs a metadata record it cannot replay, or a publish step that throws,
# and carries on (its non-fatal fault handlers); in a simulation either one is a bug to report.
METADATA_FAULT_EVENTS = frozenset({"metadata_publishing_fault", "metadata_replay_error"})


@dataclass(slots=True)
class Violation:
    """One broken invariant: which, for which seed, at which history event, and the states seen."""

    invariant: str
    seed: int
    event_index: int
    message: str
    states: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        states = " ".join(f"{k}={v}" for k, v in self.states.items())
        return f"[{self.invariant}] seed={self.seed} event=#{self.event_index}: {self.message}" + (f" ({states})" if states else "")


@dataclass(slots=True)
class AckedWrite:
    """A produce the cluster acknowledged: where it went and how it was acknowledged."""

    tp: TopicPartition
    offset: int
    value: bytes
    acks: int
    leader: int
    epoch: int
    event_index: int


@dataclass(slots=True)
class ConsumedRecord:
    tp: TopicPartition
    offset: int
    value: bytes
    broker: int
    high_watermark: int
    event_index: int


_parsed: dict[bytes, Any] = {}


def _parse(data: bytes) -> Any:
    """json.loads with a small cache: the same znode content is read after every event."""
    value = _parsed.get(data)
    if value is None:
        if len(_parsed) > 4096:
            _parsed.clear()
        value = _parsed[data] = json.loads(data)
    return value


def zk_partition_state(ctx: "SimContext", tp: TopicPartition) -> dict[str, Any] | None:
    """leader, leader_epoch, isr and controller_epoch from the partition's state znode."""
    zk = ctx.cluster.zookeeper
    path = f"/brokers/topics/{tp.topic}/partitions/{tp.partition}/state"
    if zk is None or zk.exists(path) is None:
        return None
    data, _stat = zk.get_data(path)
    return _parse(data)


def kraft_partition_state(ctx: "SimContext", tp: TopicPartition) -> dict[str, Any] | None:
    """leader, leader_epoch and isr from the KRaft controller's partition registration."""
    return ctx.cluster.kraft.partition_state(tp.topic, tp.partition)


def metadata_partition_state(ctx: "SimContext", tp: TopicPartition) -> dict[str, Any] | None:
    """The controller's record of a partition (its leader, leader epoch and ISR), in either mode."""
    if ctx.cluster.kraft is not None:
        return kraft_partition_state(ctx, tp)
    return zk_partition_state(ctx, tp)


def metadata_version(ctx: "SimContext") -> tuple[int, int]:
    """Changes whenever the controller's metadata may have: ZooKeeper's last zxid, or the KRaft
    controller's epoch and last written offset."""
    cluster = ctx.cluster
    if cluster.kraft is not None:
        return cluster.kraft.controller_epoch(), cluster.kraft.metadata_version()
    return 0, (cluster.zookeeper.last_zxid if cluster.zookeeper is not None else 0)


def controller_epoch_of(ctx: "SimContext") -> int:
    """The /controller_epoch znode, or the KRaft metadata quorum's leader epoch."""
    if ctx.cluster.kraft is not None:
        return ctx.cluster.kraft.controller_epoch()
    return zk_controller_epoch(ctx)


def zk_controller_epoch(ctx: "SimContext") -> int:
    zk = ctx.cluster.zookeeper
    if zk is None or zk.exists("/controller_epoch") is None:
        return 0
    data, _stat = zk.get_data("/controller_epoch")
    return int(_parse(data)) if data else 0


def batches_of(ctx: "SimContext", broker_id: int, tp: TopicPartition) -> list[Any]:
    """The batches of a replica's log as its Disk holds them (alive or not)."""
    local_log = ctx.cluster.disks[broker_id].get_local_log(tp)
    return list(local_log.batches) if local_log is not None else []


def log_end_offset_on_disk(ctx: "SimContext", broker_id: int, tp: TopicPartition) -> int | None:
    local_log = ctx.cluster.disks[broker_id].get_local_log(tp)
    return local_log.log_end_offset if local_log is not None else None


def record_at(batches: list[Any], offset: int) -> tuple[int, bytes | None] | None:
    """(batch leader epoch, value) of the record at ``offset``, or None if absent."""
    lo, hi = 0, len(batches)
    while lo < hi:
        mid = (lo + hi) // 2
        if batches[mid].last_offset < offset:
            lo = mid + 1
        else:
            hi = mid
    if lo == len(batches) or batches[lo].base_offset > offset:
        return None
    for record in batches[lo]:
        if record.offset == offset:
            return batches[lo].partition_leader_epoch, record.value
    return None


class InvariantChecker:
    """Checks the invariants above against a running simulated cluster."""

    def __init__(self, ctx: "SimContext", max_per_invariant: int = 5) -> None:
        self.ctx = ctx
        self.max_per_invariant = max_per_invariant
        self.violations: list[Violation] = []
        self.counts: dict[str, int] = {}
        self.checks = 0
        # Observed state, for the "only grows" invariants.
        self._metadata: dict[TopicPartition, dict[str, Any]] = {}
        self._controller_epoch = 0
        self._broker_controller_epoch: dict[tuple[int, int], int] = {}
        self._broker_leader_epoch: dict[tuple[int, int, TopicPartition], int] = {}
        self._epoch_leader: dict[tuple[TopicPartition, int], int] = {}
        self._leader_hw: dict[tuple[int, int, TopicPartition, int], int] = {}
        self._consumer_position: dict[TopicPartition, int] = {}
        self._seen_metadata_version: tuple[int, int] = (-1, -1)
        self.unclean_partitions: set[TopicPartition] = set()
        self.unclean_elections = 0

    # -- reporting --------------------------------------------------------------------------

    def violate(self, invariant: str, message: str, **states: Any) -> None:
        self.counts[invariant] = self.counts.get(invariant, 0) + 1
        if self.counts[invariant] <= self.max_per_invariant:
            event_index = self.ctx.history.last_index
            self.violations.append(Violation(invariant, self.ctx.seed, event_index, message, states))

    # -- after every event ------------------------------------------------------------------

    def check(self) -> None:
        """All the during-run invariants, against the cluster as it is now."""
        self.checks += 1
        ctx = self.ctx
        cluster = ctx.cluster
        # 1. The controller's view, ZooKeeper or the KRaft controller (only when something was
        #    written there since the last check).
        version = metadata_version(ctx)
        if version != self._seen_metadata_version:
            self._seen_metadata_version = version
            controller_epoch = controller_epoch_of(ctx)
            if controller_epoch < self._controller_epoch:
                self.violate("controller_epoch_monotonic", f"the controller epoch in {self._where()} went back",
                             previous=self._controller_epoch, now=controller_epoch)
            self._controller_epoch = max(self._controller_epoch, controller_epoch)
            for tp in ctx.checked_partitions():
                self._check_metadata_state(tp)
        live = [(b, broker) for b, broker in sorted(cluster.brokers.items()) if broker.is_running]
        # 2. Each broker process's controller epoch only grows.
        for b, broker in live:
            key = (b, ctx.incarnation(b))
            epoch = broker.replica_manager.controller_epoch
            if epoch < self._broker_controller_epoch.get(key, -1):
                self.violate("controller_epoch_monotonic", f"broker {b} accepted an older controller epoch",
                             broker=b, previous=self._broker_controller_epoch[key], now=epoch)
            self._broker_controller_epoch[key] = max(epoch, self._broker_controller_epoch.get(key, -1))
        for tp in ctx.checked_partitions():
            for b, broker in live:
                partition = broker.replica_manager.online_partition(tp)
                if partition is not None and partition.log is not None:
                    self._check_replica(tp, b, partition)

    def _where(self) -> str:
        return "the KRaft controller" if self.ctx.cluster.kraft is not None else "ZooKeeper"

    def _check_metadata_state(self, tp: TopicPartition) -> None:
        state = metadata_partition_state(self.ctx, tp)
        if state is None:
            return
        leader, epoch, isr = state["leader"], state["leader_epoch"], list(state["isr"])
        # 3. Leader in ISR, in the controller's record.
        if leader >= 0 and leader not in isr:
            self.violate("leader_in_isr", f"{tp}: {self._where()} names leader {leader} outside its ISR",
                         leader=leader, leader_epoch=epoch, isr=isr)
        previous = self._metadata.get(tp)
        if previous is not None:
            # 4. The controller's leader epoch only grows.
            if epoch < previous["leader_epoch"]:
                self.violate("leader_epoch_monotonic", f"{tp}: the leader epoch in {self._where()} went back",
                             previous=previous["leader_epoch"], now=epoch)
            # 5. An elected leader from outside the previous ISR is an unclean election.
            if epoch > previous["leader_epoch"] and leader >= 0 and leader != previous["leader"] \
                    and leader not in previous["isr"]:
                self.unclean_elections += 1
                self.unclean_partitions.add(tp)
                self.ctx.history.append("sim", "unclean_election_observed", topic_partition=str(tp), leader=leader,
                                        leader_epoch=epoch, previous_isr=previous["isr"])
        if previous is None or epoch >= previous["leader_epoch"]:
            self._metadata[tp] = {"leader": leader, "leader_epoch": epoch, "isr": isr}

    def _check_replica(self, tp: TopicPartition, b: int, partition: Any) -> None:
        ctx = self.ctx
        incarnation = ctx.incarnation(b)
        epoch = partition.leader_epoch
        # 6. Each broker process's leader epoch for a partition only grows.
        key = (b, incarnation, tp)
        if epoch < self._broker_leader_epoch.get(key, -1):
            self.violate("leader_epoch_monotonic", f"{tp}: broker {b} went back to an older leader epoch",
                         broker=b, previous=self._broker_leader_epoch[key], now=epoch)
        self._broker_leader_epoch[key] = max(epoch, self._broker_leader_epoch.get(key, -1))
        if not partition.is_leader:
            return
        # 7. One leader per leader epoch.
        owner = self._epoch_leader.setdefault((tp, epoch), b)
        if owner != b:
            self.violate("single_leader_per_epoch", f"{tp}: brokers {owner} and {b} both led epoch {epoch}",
                         leader_epoch=epoch, first=owner, second=b)
        log = partition.log
        hw = log.high_watermark
        isr = sorted(partition.partition_state.isr)
        # 8. The leader is in its own committed ISR.
        if b not in isr:
            self.violate("leader_in_isr", f"{tp}: leader {b} is not in its own ISR", leader=b, leader_epoch=epoch, isr=isr)
        # 9. HW only grows within the epoch.
        hw_key = (b, incarnation, tp, epoch)
        previous_hw = self._leader_hw.get(hw_key)
        if previous_hw is not None and hw < previous_hw:
            self.violate("hw_monotonic_in_epoch", f"{tp}: leader {b} HW went from {previous_hw} to {hw} in epoch {epoch}",
                         leader=b, leader_epoch=epoch, previous=previous_hw, now=hw)
        if previous_hw is None or hw > previous_hw:
            self._leader_hw[hw_key] = hw
        # 10. HW at most the LEO of every committed ISR member (their logs on disk).
        for r in isr:
            leo = log.log_end_offset if r == b else log_end_offset_on_disk(ctx, r, tp)
            if leo is not None and hw > leo:
                self.violate("hw_le_isr_leo", f"{tp}: leader {b} HW {hw} is above ISR member {r}'s LEO {leo}",
                             leader=b, leader_epoch=epoch, high_watermark=hw, isr=isr, member=r, member_leo=leo)

    # -- consumer ---------------------------------------------------------------------------

    def on_consumed(self, record: ConsumedRecord) -> None:
        """A consumer read ``record``: below the serving broker's HW, and past its last offset."""
        tp = record.tp
        if record.offset >= record.high_watermark:
            self.violate("consumer_below_hw", f"{tp}: consumer read offset {record.offset} at or above HW {record.high_watermark}",
                         broker=record.broker, offset=record.offset, high_watermark=record.high_watermark)
        last = self._consumer_position.get(tp, -1)
        if record.offset <= last:
            self.violate("consumer_offsets_monotonic", f"{tp}: consumer read offset {record.offset} after {last}",
                         broker=record.broker, offset=record.offset, previous=last)
        self._consumer_position[tp] = max(last, record.offset)

    def on_consumer_reset(self, tp: TopicPartition, old: int, new: int, broker: int) -> None:
        """The consumer's position was out of range and moved: only legitimate after unclean elections."""
        if new < old and tp not in self.unclean_partitions:
            self.violate("consumer_offsets_monotonic", f"{tp}: consumer reset from {old} back to {new}",
                         broker=broker, previous=old, now=new)
        self._consumer_position[tp] = new - 1

    # -- at the end -------------------------------------------------------------------------

    def check_final(self, acked: list[AckedWrite], consumed: list[ConsumedRecord]) -> dict[str, int]:
        """Compare the replica logs after healing; returns loss counts (unclean, acks=1)."""
        ctx = self.ctx
        stats = {"unclean_losses": 0, "acks1_losses": 0}
        logs: dict[TopicPartition, dict[int, list[Any]]] = {}
        for tp in ctx.checked_partitions():
            replicas = ctx.replicas[tp]
            logs[tp] = {r: batches_of(ctx, r, tp) for r in replicas}
            # 1. Every replica log is the same: offsets, epochs and bytes of every batch.
            reference_id = replicas[0]
            reference = [(x.base_offset, x.last_offset, x.partition_leader_epoch, x.buffer) for x in logs[tp][reference_id]]
            for r in replicas[1:]:
                other = [(x.base_offset, x.last_offset, x.partition_leader_epoch, x.buffer) for x in logs[tp][r]]
                if other != reference:
                    offset, detail = _first_difference(reference, other)
                    self.violate("replicas_identical",
                                 f"{tp}: replicas {reference_id} and {r} differ from offset {offset}",
                                 offset=offset, **{f"replica_{reference_id}": detail[0], f"replica_{r}": detail[1]},
                                 **{f"leo_{reference_id}": _end(reference), f"leo_{r}": _end(other)})
        # 2. Acknowledged writes are in every replica at their offset.
        for write in acked:
            replicas = ctx.replicas[write.tp]
            missing = []
            for r in replicas:
                found = record_at(logs[write.tp][r], write.offset)
                if found is None or found[1] != write.value or (write.epoch >= 0 and found[0] != write.epoch):
                    missing.append((r, found))
            if not missing:
                continue
            if write.acks != -1:
                stats["acks1_losses"] += 1
            elif write.tp in self.unclean_partitions:
                stats["unclean_losses"] += 1
            else:
                self.violate("acked_write_durable",
                             f"{write.tp}: acks=all write {write.value!r} acknowledged at offset {write.offset} "
                             f"(epoch {write.epoch}, leader {write.leader}, event #{write.event_index}) is not on every replica",
                             offset=write.offset, acked_epoch=write.epoch,
                             found={r: (f"epoch {f[0]} value {f[1]!r}" if f else "absent") for r, f in missing})
        # 3. What consumers read is still there.
        for record in consumed:
            if record.tp in self.unclean_partitions:
                continue
            leader_log = logs[record.tp][ctx.replicas[record.tp][0]]
            found = record_at(leader_log, record.offset)
            if found is None or found[1] != record.value:
                self.violate("consumed_record_durable",
                             f"{record.tp}: consumed record {record.value!r} at offset {record.offset} "
                             f"(from broker {record.broker}, event #{record.event_index}) is gone",
                             offset=record.offset, now=(f"epoch {found[0]} value {found[1]!r}" if found else "absent"))
        return stats

    def check_commits(self, acknowledged: dict[TopicPartition, int], fetched: dict[TopicPartition, int] | None,
                      in_doubt: dict[TopicPartition, set[int]] | None = None) -> None:
        """``committed_offset_durable``: the group coordinator still has the last acknowledged commit.

        The offset fetched after healing must be at least the last acknowledged commit of each
        partition, or one of the commits sent after it whose answer never came (``in_doubt``:
        such a commit may have been written). The last, not the largest: the consumer's position
        goes back when an unclean election truncates the log below it, and its next commit then
        rightly replaces a larger one.
        """
        if not acknowledged:
            return
        if fetched is None:
            self.violate("committed_offset_durable", "the group's committed offsets could not be fetched after healing",
                         acknowledged={str(tp): o for tp, o in acknowledged.items()})
            return
        for tp, offset in sorted(acknowledged.items()):
            now = fetched.get(tp, -1)
            if now < offset and now not in (in_doubt or {}).get(tp, ()):
                self.violate("committed_offset_durable",
                             f"{tp}: commit of offset {offset} was acknowledged, the coordinator now returns {now}",
                             acknowledged=offset, fetched=now)


def _end(batches: list[tuple]) -> int:
    return batches[-1][1] + 1 if batches else 0


def _first_difference(a: list[tuple], b: list[tuple]) -> tuple[int, tuple[str, str]]:
    """The first offset where two batch lists differ, and what each holds there."""
    for x, y in zip(a, b):
        if x != y:
            return min(x[0], y[0]), (_describe_batch(x), _describe_batch(y))
    if len(a) > len(b):
        return a[len(b)][0], (_describe_batch(a[len(b)]), "absent")
    return b[len(a)][0], ("absent", _describe_batch(b[len(a)]))


def _describe_batch(batch: tuple) -> str:
    from kafka_ref.common.records.record_batch import RecordBatch

    values = [r.value for r in RecordBatch(batch[3])]
    return f"offsets {batch[0]}..{batch[1]} epoch {batch[2]} values {values}"
