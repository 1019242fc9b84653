"""The controller quorum under faults, checked against Raft's invariants (after RaftEventSimulationTest).

``simulate_quorum(seed, scenario)`` runs ``Cluster(metadata_mode="kraft", controllers=3)`` in
virtual time with a topic-creation workload and a scenario's nemesis on the controller nodes, and
checks, after every fault and every ``CHECK_INTERVAL_S`` of loop time:

- **election safety**: at most one leader per epoch (every node's leader for each epoch agrees);
- **log matching**: two voters' batches with the same offset and epoch are equal, as is everything before;
- **leader completeness**: the leader of a later epoch holds every batch committed in earlier epochs
  (a deposed leader that has not heard of the new epoch may lack them);
- **committed never lost**: every voter's log up to its HW equals the committed history;
- **HW monotonic**: no voter's high watermark ever goes back (it is kept on the node's disk);
- **state machine safety**: two controllers that applied the log to the same offset hold the same image.

Scenarios mirror RaftEventSimulationTest: ``initial-election``, ``leader-failure`` (kill the
active, restart), ``leader-partition`` (isolate the leader, heal), ``partition-recovery`` (cut a
voter off from the others, heal), ``majority-returns`` (kill two, bring them back), and
``drops`` (random loss and delay of controller traffic). A run that breaks an invariant returns its
violations with the loop time and the event that preceded them.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import anyio

SCENARIOS = ("initial-election", "leader-failure", "leader-partition", "partition-recovery", "majority-returns", "drops")
CHECK_INTERVAL_S = 0.05
RUN_S = 40.0


@dataclass
class QuorumSimResult:
    seed: int
    scenario: str
    events: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    elections: int = 0
    committed_batches: int = 0
    topics_created: int = 0


class RaftInvariants:
    """The checker: state kept across checks (committed history, HWs, leaders per epoch, images per offset).

    A violation goes to ``report(invariant, message)`` when one is given (``kafka-ref sim
    --controllers 3`` files them with its own checker), otherwise into ``result.violations``.
    """

    def __init__(self, kraft: Any, result: QuorumSimResult,
                 report: Callable[[str, str], None] | None = None) -> None:
        self.kraft = kraft
        self.result = result
        self.report = report
        self.leaders: dict[int, int] = {}
        self.committed: dict[int, Any] = {}  # base offset → batch
        self.commit_epochs: dict[int, int] = {}  # base offset → the highest epoch known when first seen committed
        self.high_watermarks: dict[int, int] = {}
        self.images: dict[int, tuple[int, Any]] = {}  # committed offset → (node, fingerprint)
        self._signature: Any = None

    def _fail(self, now: float, invariant: str, what: str) -> None:
        if self.report is not None:
            self.report(invariant, what)
            return
        last = self.result.events[-1] if self.result.events else "start"
        self.result.violations.append(f"t={now:.3f}s after {last}: {what}")

    def check(self) -> None:
        now = anyio.current_time()
        nodes = list(self.kraft.nodes.values())
        # Election safety: one leader per epoch, whoever reports it.
        for node in nodes:
            raft = node.raft_client
            if raft is None:
                continue
            leader, epoch = raft.leader_and_epoch()
            if node.is_running and leader >= 0:
                known = self.leaders.setdefault(epoch, leader)
                if known != leader:
                    self._fail(now, "election_safety", f"election safety: epoch {epoch} has leaders {known} and {leader}")
        self.result.elections = len(self.leaders)
        # HW monotonic, committed history, committed never lost.
        for node in nodes:
            log = node.metadata_log
            previous = self.high_watermarks.get(node.node_id, 0)
            if log.high_watermark < previous:
                self._fail(now, "hw_monotonic", f"HW of {node.node_id} went back from {previous} to {log.high_watermark}")
            self.high_watermarks[node.node_id] = log.high_watermark
            for batch in log.batches:
                if batch.last_offset >= log.high_watermark:
                    break
                if batch.base_offset not in self.committed:
                    self.commit_epochs[batch.base_offset] = max(self.leaders, default=0)
                seen = self.committed.setdefault(batch.base_offset, batch)
                if seen != batch:
                    self._fail(now, "committed_never_lost", f"committed batch at {batch.base_offset} differs on {node.node_id}: "
                                    f"epoch {batch.epoch} vs {seen.epoch}")
        self.result.committed_batches = len(self.committed)
        # Log matching: the same (offset, epoch) means the same prefix.
        for i, a in enumerate(nodes):
            for b in nodes[i + 1:]:
                self._check_log_matching(now, a, b)
        # Leader completeness: a running leader holds every batch committed in an earlier epoch.
        for node in nodes:
            raft = node.raft_client
            if node.is_running and raft is not None and raft.quorum.is_leader():
                by_offset = {batch.base_offset: batch for batch in node.metadata_log.batches}
                for offset, batch in self.committed.items():
                    if self.commit_epochs[offset] < raft.epoch and by_offset.get(offset) != batch:
                        self._fail(now, "leader_completeness", f"leader completeness: leader {node.node_id} (epoch {raft.epoch}) lacks "
                                        f"committed batch {offset}")
                        break
        # State machine safety: same committed offset → same image (standbys, or an active one with nothing pending).
        for node in nodes:
            controller = node.controller
            if controller is None or not node.is_running:
                continue
            if controller.is_active and controller.write_offset != controller.last_committed_offset:
                continue
            offset = controller.last_committed_offset
            fingerprint = _fingerprint(controller)
            seen = self.images.setdefault(offset, (node.node_id, fingerprint))
            if seen[1] != fingerprint:
                self._fail(now, "state_machine_safety", f"state machine safety: at offset {offset} controllers {seen[0]} and {node.node_id} differ")

    def check_if_changed(self) -> None:
        """Check again if any voter's process, epoch, leader, log end, HW or applied offset moved
        since the last check (``kafka-ref sim --controllers N`` calls this after every step)."""
        signature = tuple(
            (node.is_running, node.metadata_log.end_offset, node.metadata_log.high_watermark,
             node.raft_client.leader_and_epoch() if node.raft_client is not None else None,
             (node.controller.last_committed_offset, node.controller.write_offset, node.controller.is_active)
             if node.controller is not None else None)
            for node in self.kraft.nodes.values())
        if signature != self._signature:
            self._signature = signature
            self.check()

    def _check_log_matching(self, now: float, a: Any, b: Any) -> None:
        mine = {batch.base_offset: batch for batch in a.metadata_log.batches}
        last_common = None
        for batch in b.metadata_log.batches:
            other = mine.get(batch.base_offset)
            if other is not None and other.epoch == batch.epoch:
                last_common = batch.base_offset
        if last_common is None:
            return
        ours = [x for x in a.metadata_log.batches if x.base_offset <= last_common]
        theirs = [x for x in b.metadata_log.batches if x.base_offset <= last_common]
        if ours != theirs:
            self._fail(now, "log_matching", f"log matching: {a.node_id} and {b.node_id} agree at offset {last_common} but not before")


def _fingerprint(controller: Any) -> Any:
    """What a controller's image holds: topics with their partitions, and broker registrations."""
    control = controller.replication_control
    topics = []
    for topic_id, info in control.topics.items():
        parts = tuple(sorted((p, r.leader, r.leader_epoch, tuple(r.isr), r.partition_epoch)
                             for p, r in info.parts.items()))
        topics.append((info.name, topic_id, parts))  # Uuid compares by value; names are unique
    topics.sort(key=lambda topic: topic[0])
    brokers = tuple(sorted((b, r.epoch, r.fenced) for b, r in controller.cluster_control.broker_registrations.items()))
    return tuple(topics), brokers


async def _workload(cluster: Any, result: QuorumSimResult, rng: random.Random) -> None:
    """Create a topic every so often through a broker (forwarded to whichever controller is active)."""
    from kafka_ref.common.requests.create_topics import CreatableTopic, CreateTopicsRequest
    from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

    n = 0
    while True:
        await anyio.sleep(rng.uniform(0.3, 1.2))
        n += 1
        live = cluster.live_broker_ids()
        if not live:
            continue
        request = CreateTopicsRequest(topics=(CreatableTopic(name=f"t{n}", num_partitions=1, replication_factor=3),),
                                      timeout_ms=3000)
        try:
            answer = await cluster.network.send("admin", rng.choice(live), request, 8000)
        except (DisconnectException, NetworkTimeoutException):
            continue  # a lost request is part of the run
        if answer.topics and answer.topics[0].error_code == 0:
            result.topics_created += 1


async def _nemesis(cluster: Any, scenario: str, result: QuorumSimResult, rng: random.Random, checker: RaftInvariants) -> None:
    kraft = cluster.kraft
    network = cluster.network

    def event(text: str) -> None:
        result.events.append(f"{anyio.current_time():.3f}s {text}")
        checker.check()

    async def wait_leader(limit_s: float = 15.0) -> int | None:
        with anyio.move_on_after(limit_s):
            while kraft.active_node() is None:
                await anyio.sleep(CHECK_INTERVAL_S)
        active = kraft.active_node()
        return active.node_id if active is not None else None

    voters = list(kraft.voters)
    for _round in range(3):
        await anyio.sleep(rng.uniform(2.0, 5.0))
        leader = await wait_leader()
        if scenario == "initial-election":
            if leader is None:
                result.violations.append("no leader elected within 15 s")
            return
        if scenario == "leader-failure" and leader is not None:
            kraft.kill_controller(leader)
            event(f"killed leader {leader}")
            await anyio.sleep(rng.uniform(0.5, 6.0))
            await kraft.restart_controller(leader)
            event(f"restarted {leader}")
        elif scenario == "leader-partition" and leader is not None:
            network.isolate(leader)
            event(f"isolated leader {leader}")
            await anyio.sleep(rng.uniform(1.0, 8.0))
            network.heal_node(leader)
            event(f"healed {leader}")
        elif scenario == "partition-recovery":
            victim = rng.choice(voters)
            for other in voters:
                if other != victim:
                    network.cut_link(victim, other)
            event(f"cut voter {victim} off from the other voters")
            await anyio.sleep(rng.uniform(1.0, 8.0))
            for other in voters:
                if other != victim:
                    network.heal_link(victim, other)
            event(f"healed voter {victim}")
        elif scenario == "majority-returns":
            down = rng.sample(voters, 2)
            for node in down:
                kraft.kill_controller(node)
            event(f"killed {down}: no majority")
            await anyio.sleep(rng.uniform(1.0, 6.0))
            for node in down:
                await kraft.restart_controller(node)
                event(f"restarted {node}")
        elif scenario == "drops":
            for _ in range(rng.randint(3, 10)):
                a, b = rng.sample(voters, 2)
                network.drop_next(a, b, rng.randint(1, 5))
            event("dropped some controller requests")


async def run_quorum(seed: int, scenario: str, run_s: float = RUN_S) -> QuorumSimResult:
    """One run: a 3-controller KRaft cluster, the workload, the scenario's faults, the checker.

    A node that refuses to go on (a follower told to truncate below its high watermark raises,
    as KafkaRaftClient does) ends the run; that is reported as a violation of "committed never lost".
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario {scenario!r}: choose one of {', '.join(SCENARIOS)}")
    result = QuorumSimResult(seed, scenario)
    try:
        await _run(seed, scenario, run_s, result)
    except* (ValueError, RuntimeError) as group:
        for exc in _leaves(group):
            result.violations.append(f"t={anyio.current_time():.3f}s committed never lost: a node stopped: {exc}")
    return result


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def _run(seed: int, scenario: str, run_s: float, result: QuorumSimResult) -> None:
    from kafka_ref.cluster import Cluster

    rng = random.Random(seed)
    async with Cluster(brokers=3, metadata_mode="kraft", controllers=3, seed=seed) as cluster:
        checker = RaftInvariants(cluster.kraft, result)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_workload, cluster, result, random.Random(rng.getrandbits(64)))
            tg.start_soon(_nemesis, cluster, scenario, result, random.Random(rng.getrandbits(64)), checker)
            with anyio.move_on_after(run_s):
                while True:
                    checker.check()
                    await anyio.sleep(CHECK_INTERVAL_S)
            # Heal everything and let the quorum settle, then check once more.
            cluster.network.heal_all()
            for node_id, node in cluster.kraft.nodes.items():
                if not node.is_running:
                    await cluster.kraft.restart_controller(node_id)
            with anyio.move_on_after(15):
                while cluster.kraft.active_node() is None:
                    await anyio.sleep(CHECK_INTERVAL_S)
            if cluster.kraft.active_node() is None:
                result.violations.append("no leader 15 s after every fault was healed")
            checker.check()
            tg.cancel_scope.cancel()


def simulate_quorum(seed: int, scenario: str, run_s: float = RUN_S) -> QuorumSimResult:
    """Run one seed in virtual time (trio's MockClock)."""
    import trio
    import trio.testing

    async def main() -> QuorumSimResult:
        return await run_quorum(seed, scenario, run_s)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kafka_ref.sim.raft_sim``: the same command as ``kafka-ref raft-sim``."""
    from kafka_ref.cli import main as cli_main

    return cli_main(["raft-sim", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    raise SystemExit(main())
