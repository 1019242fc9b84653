"""Deterministic simulation of a whole cluster: one seed decides everything.

Modelled on Kafka's RaftEventSimulationTest and on FoundationDB-style simulation. ``simulate``
runs a ``Cluster`` (ZooKeeper mode, or KRaft mode with ``SimConfig(metadata_mode="kraft")``) on
trio with a ``MockClock`` (virtual time: a minute of cluster time costs a fraction of a second)
and draws every choice from ``random.Random(seed)``:

* trio's scheduler runs in its deterministic mode, its shuffle of each batch of runnable tasks
  seeded from the seed, so the interleaving of brokers, fetchers and controller is chosen by
  the seed and replays exactly;
* the workload (which partition, acks, which broker to hit, when), the fault times and targets,
  and the network fault model (delay, duplicate, reorder, drop of inter-broker requests) each
  draw from their own stream derived from the seed (``SimContext.sub_rng``);
* the cluster's own randomness (topic ids, fetch session ids) comes from ``Cluster(seed=...)``.

Every event (workload, faults, the brokers' and controller's state-change log) is recorded in a
``History``; after every step of the event loop that added events, the ``InvariantChecker`` looks
at the cluster. At the end faults are healed, the cluster converges, and the replica logs are
compared. The same seed gives the same history byte for byte (``SimResult.digest``), in any
process, whatever PYTHONHASHSEED is; a failing seed prints the command that replays it.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import anyio
import structlog
import trio
import trio.testing

from kafka_ref.cluster import Cluster
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.state_change import configure_logging
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.sim.client_workload import ClientWorkload
from kafka_ref.sim.history import SOURCE_FAULT, SOURCE_SIM, Event, History
from kafka_ref.sim.invariants import METADATA_FAULT_EVENTS, InvariantChecker, Violation, metadata_partition_state
from kafka_ref.sim.nemesis import NetworkFaultModel
from kafka_ref.sim.scenarios import BASE_BROKER_CONFIG, Scenario, get_scenario, normalize_ibp
from kafka_ref.sim.timeline_svg import TimelineRecorder
from kafka_ref.sim.workload import Workload

TOPIC = "sim"
RESTART_TIMEOUT_S = 60.0
OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(frozen=True)
class SimConfig:
    """How to run a scenario: the era, the metadata mode, and optional overrides."""

    ibp: str | None = None
    metadata_mode: str = "zk"
    duration_s: float | None = None
    heal_timeout_s: float = 120.0
    max_violations_per_invariant: int = 5
    keep_history: bool = False
    # KRaft mode: the controller quorum's voters; more than one adds the quorum's faults and Raft invariants.
    controllers: int = 1


@dataclass
class SimResult:
    """What one seed did: its history digest, violations, faults and workload counts."""

    seed: int
    scenario: str
    ibp: str | None
    metadata_mode: str
    digest: str
    events: int
    violations: list[Violation]
    violation_counts: dict[str, int]
    faults: dict[str, int]
    simulated_s: float
    workload: dict[str, int]
    unclean_elections: int = 0
    unclean_losses: int = 0
    acks1_losses: int = 0
    checks: int = 0
    history: History | None = field(default=None, repr=False)
    controllers: int = 1

    @property
    def ok(self) -> bool:
        return not self.violations

    def replay_command(self, trace: bool = True) -> str:
        era = f" --ibp {self.ibp}" if self.ibp else ""
        mode = f" --metadata-mode {self.metadata_mode}" if self.metadata_mode != "zk" else ""
        if self.controllers != 1:
            mode += f" --controllers {self.controllers}"
        return f"kafka-ref sim --scenario {self.scenario} --seed {self.seed}{era}{mode}" + (" --trace" if trace else "")


class SimContext:
    """One simulated run: the cluster, its history, checker, workload, faults and helpers."""

    def __init__(self, seed: int, scenario: Scenario, config: SimConfig) -> None:
        self.seed = seed
        self.scenario = scenario
        self.config = config
        self.ibp = normalize_ibp(config.ibp)
        self.master = random.Random(seed)
        self.cluster_seed = self.master.getrandbits(64)
        self.scheduler_seed = self.master.getrandbits(64)
        self.history = History()
        self.checker = InvariantChecker(self, config.max_violations_per_invariant)
        self.history.listeners.append(self._on_event)
        self.cluster: Cluster = None  # type: ignore[assignment]  # set in main()
        self.partitions: list[TopicPartition] = [TopicPartition(TOPIC, p) for p in range(scenario.partitions)]
        self.replicas: dict[TopicPartition, list[int]] = {}
        self._incarnations: dict[Any, int] = {}
        self.down: set[int] = set()
        self.partitioned = False
        self.stopping = False
        self.faults: Counter[str] = Counter()
        self.fault_model: NetworkFaultModel = None  # type: ignore[assignment]
        self.workload: Workload = None  # type: ignore[assignment]
        self.clients: ClientWorkload | None = None
        self.final_stats: dict[str, int] = {}
        self._dirty = False
        self._waiters: list[tuple[Callable[[Event], bool], anyio.Event, list[Event]]] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._restarts: anyio.abc.TaskGroup | None = None
        self._stop_event: anyio.Event | None = None
        self._previous_hw_checkpoint: dict[int, str | None] = {}
        self._offsets_partitions: list[TopicPartition] = []
        self.simulated_s = 0.0
        self.controller_down = False
        self._heartbeat_rng = self.sub_rng("heartbeats")
        # --controllers N > 1: the Raft invariants of kafka_ref/sim/raft_sim.py, checked after every step.
        self.raft_checker: Any = None
        self.controller_partitioned = False

    # -- randomness -------------------------------------------------------------------------

    def sub_rng(self, name: str) -> random.Random:
        """An independent stream for one purpose, derived from the seed (stable across processes)."""
        return random.Random(f"{self.seed}/{name}")

    # -- events -----------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        self._dirty = True
        if event.name in METADATA_FAULT_EVENTS:
            self.checker.violate("metadata_applied_without_fault", f"{event.who}: {event.name}", **event.fields)
        if self._waiters:
            for waiter in list(self._waiters):
                predicate, done, holder = waiter
                if predicate(event):
                    holder.append(event)
                    done.set()
                    self._waiters.remove(waiter)

    def after_step(self) -> None:
        """Called after each step of the event loop: check the invariants if anything happened."""
        if self._dirty and self.cluster is not None:
            self._dirty = False
            self.checker.check()
        if self.raft_checker is not None:
            self.raft_checker.check_if_changed()

    async def wait_event(self, predicate: Callable[[Event], bool], timeout_s: float) -> Event | None:
        """The next history event matching ``predicate``, or None after ``timeout_s``."""
        done = anyio.Event()
        holder: list[Event] = []
        waiter = (predicate, done, holder)
        self._waiters.append(waiter)
        with anyio.move_on_after(timeout_s):
            await done.wait()
        if waiter in self._waiters:
            self._waiters.remove(waiter)
        return holder[0] if holder else None

    async def wait_until(self, predicate: Callable[[], bool], timeout_s: float, poll_s: float = 0.05) -> bool:
        with anyio.move_on_after(timeout_s):
            while not predicate():
                await anyio.sleep(poll_s)
            return True
        return False

    def record_fault(self, kind: str, **fields: Any) -> None:
        self.faults[kind] += 1
        self.history.append(SOURCE_FAULT, kind, **fields)

    def count_fault(self, kind: str) -> None:
        """Count a fault without an event (per-message network faults)."""
        self.faults[kind] += 1

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start a task in the run's task group (ignored once the run is stopping)."""
        assert self._tg is not None
        if not self.stopping:
            self._tg.start_soon(fn, *args)

    # -- views of the cluster -----------------------------------------------------------------

    def incarnation(self, broker_id: int) -> int:
        """Which process of this broker is running now (0, 1, ... in order of first sight)."""
        broker = self.cluster.brokers[broker_id]
        number = self._incarnations.get(broker)
        if number is None:
            number = self._incarnations[broker] = len(self._incarnations)
        return number

    def live_brokers(self) -> list[int]:
        return [b for b, broker in sorted(self.cluster.brokers.items()) if broker.is_running and b not in self.down]

    @property
    def kraft(self) -> bool:
        return self.config.metadata_mode == "kraft"

    def partition_state(self, tp: TopicPartition) -> dict[str, Any] | None:
        """The controller's record of ``tp`` (a ZooKeeper znode or a KRaft partition registration)."""
        return metadata_partition_state(self, tp)

    def leader_of(self, tp: TopicPartition) -> int:
        state = metadata_partition_state(self, tp)
        return state["leader"] if state else -1

    def isr_of(self, tp: TopicPartition) -> list[int]:
        state = metadata_partition_state(self, tp)
        return sorted(state["isr"]) if state else []

    def checked_partitions(self) -> list[TopicPartition]:
        """The workload's partitions, then the group coordinator's once it has created them."""
        if len(self._offsets_partitions) == 0 and self.cluster is not None:
            if self.cluster.zookeeper is not None:
                assignment = self.cluster.topic_assignment(OFFSETS_TOPIC)
                replicas = {int(p): list(info["replicas"]) for p, info in (assignment or {}).items()}
            elif self.cluster.kraft is not None:
                replicas = self._kraft_topic_replicas(OFFSETS_TOPIC)
            else:
                replicas = {}
            for p, assigned in sorted(replicas.items()):
                tp = TopicPartition(OFFSETS_TOPIC, p)
                self.replicas[tp] = assigned
                self._offsets_partitions.append(tp)
        return self.partitions + self._offsets_partitions

    def _kraft_topic_replicas(self, topic: str) -> dict[int, list[int]]:
        replicas: dict[int, list[int]] = {}
        while (state := self.cluster.kraft.partition_state(topic, len(replicas))) is not None:
            replicas[len(replicas)] = list(state["replicas"])
        return replicas

    def all_isr_full(self) -> bool:
        for tp in self.checked_partitions():
            state = metadata_partition_state(self, tp)
            if state is None or state["leader"] < 0 or sorted(state["isr"]) != sorted(self.replicas[tp]):
                return False
        return True

    def converged(self) -> bool:
        """Every broker up, full ISRs, the leader's HW at its LEO, and every replica at that LEO.

        A follower's HW may stay one fetch behind: after truncating on a diverging epoch it
        learns the HW only when the leader's HW moves again (the leader's fetch session already
        sent that HW in the diverging response, which the follower does not apply), as in Kafka.
        """
        if any(not broker.is_running for broker in self.cluster.brokers.values()) or not self.all_isr_full():
            return False
        if self.cluster.kraft is not None and not self.cluster.kraft.converged():
            return False
        for tp in self.checked_partitions():
            leader = self.leader_of(tp)
            leader_partition = self.cluster.brokers[leader].replica_manager.online_partition(tp)
            if leader_partition is None or not leader_partition.is_leader or leader_partition.log is None:
                return False
            leo = leader_partition.log.log_end_offset
            if leader_partition.log.high_watermark != leo:
                return False
            for r in self.replicas[tp]:
                p = self.cluster.brokers[r].replica_manager.online_partition(tp)
                if p is None or p.log is None or p.log.log_end_offset != leo or p.log.high_watermark > leo:
                    return False
        return True

    def replica_states(self) -> dict[str, dict[int, str]]:
        """Each replica's role, leader epoch, LEO and HW, for violation reports."""
        states: dict[str, dict[int, str]] = {}
        for tp in self.partitions:
            states[str(tp)] = {}
            for r in self.replicas[tp]:
                broker = self.cluster.brokers[r]
                p = broker.replica_manager.online_partition(tp) if broker.is_running else None
                if p is None or p.log is None:
                    states[str(tp)][r] = "down" if not broker.is_running else "no log"
                else:
                    role = "leader" if p.is_leader else f"follower of {p.leader_replica_id_opt}"
                    states[str(tp)][r] = (f"{role} epoch {p.leader_epoch} LEO {p.log.log_end_offset} "
                                          f"HW {p.log.high_watermark}")
        return states

    def may_take_down(self, count: int = 1) -> bool:
        return len(self.down) + count <= self.scenario.max_down and not self.stopping

    # -- faults -----------------------------------------------------------------------------

    def crash(self, broker_id: int, kind: str | None, lose_last_hw_checkpoint: bool = False) -> None:
        """Kill a broker process; optionally its last HW checkpoint write is lost as well."""
        if kind is not None:
            self.record_fault(kind, broker=broker_id)
        self.down.add(broker_id)
        self.cluster.kill_broker(broker_id)
        if lose_last_hw_checkpoint:
            checkpoint = self.cluster.disks[broker_id].replication_offset_checkpoint
            checkpoint.content = self._previous_hw_checkpoint.get(broker_id)
            self.history.append(SOURCE_FAULT, "hw_checkpoint_rolled_back", broker=broker_id)

    async def shutdown(self, broker_id: int, controlled: bool) -> None:
        """Kafka's clean shutdown: controlled (leaderships moved away first) or a plain clean stop."""
        self.record_fault("controlled_shutdown" if controlled else "clean_shutdown", broker=broker_id)
        self.down.add(broker_id)
        if controlled:
            await self.cluster.shutdown_broker(broker_id)
        else:
            self.cluster.shutdown_broker_uncontrolled(broker_id)

    def expire_session(self, broker_id: int, kind: str | None) -> None:
        """ZooKeeper mode: ZooKeeper expires the broker's session. KRaft mode, the same failure
        seen by a KRaft controller: the broker's heartbeats stop reaching it (the link between
        them is cut) for longer than broker.session.timeout.ms, so the controller fences the
        broker; when the link is back the broker catches up with the metadata log and is
        unfenced."""
        broker = self.cluster.brokers[broker_id]
        if self.cluster.kraft is not None:
            if kind is not None:
                self.record_fault("broker_heartbeats_lost" if kind == "zk_session_expiry" else kind, broker=broker_id)
            session_s = self.cluster.broker_config(broker_id).get("broker.session.timeout.ms") / 1000
            lost_s = session_s + self._heartbeat_rng.uniform(0.5, 3.0)
            # Cut from every controller voter: whichever is active then or later, none hears it.
            voters = self.cluster.kraft.voters
            for controller in voters:
                self.cluster.network.cut_link(broker_id, controller)
            self.spawn(self._restore_heartbeats, broker_id, voters, lost_s)
            return
        if broker.zk_client is None:
            return
        if kind is not None:
            self.record_fault(kind, broker=broker_id)
        self.cluster.zookeeper.expire_session(broker.zk_client.session_id)

    async def _restore_heartbeats(self, broker_id: int, voters: tuple[int, ...], after_s: float) -> None:
        await anyio.sleep(after_s)
        for controller in voters:
            self.cluster.network.heal_link(broker_id, controller)
        self.history.append(SOURCE_FAULT, "broker_heartbeats_restored", broker=broker_id)

    # -- the KRaft controller node ------------------------------------------------------------

    def kill_controller(self, kind: str, node_id: int | None = None) -> None:
        """KRaft mode: a controller process dies (its metadata log survives on its disk): ``node_id``,
        or the active one (with one voter: the controller node)."""
        kraft = self.cluster.kraft
        if node_id is None and len(kraft.voters) > 1:
            active = kraft.active_node()
            node_id = active.node_id if active is not None else None
        self.record_fault(kind, controller=kraft.controller_node if node_id is None else node_id)
        self.controller_down = True
        kraft.kill_controller(node_id)

    def restart_controller_after(self, delay_s: float) -> None:
        """Restart the KRaft controller node after ``delay_s`` (at once if the run is stopping).

        Runs in the restarts task group, which outlives the cancellation of the faults."""
        assert self._restarts is not None
        self._restarts.start_soon(self._restart_controller_later, delay_s)

    async def _restart_controller_later(self, delay_s: float) -> None:
        assert self._stop_event is not None
        with anyio.move_on_after(delay_s):
            await self._stop_event.wait()
        await self._restart_controller()

    async def _restart_controller(self) -> None:
        if not self.controller_down:
            return
        self.controller_down = False
        await self.cluster.kraft.restart_controller()
        self.history.append(SOURCE_FAULT, "controller_restarted", epoch=self.cluster.kraft.controller_epoch())

    def heal_network(self) -> None:
        self.cluster.network.heal_all()
        self.partitioned = False
        self.history.append(SOURCE_FAULT, "network_healed")

    async def restart_after(self, broker_id: int, delay_s: float) -> None:
        """Restart a downed broker after ``delay_s`` (at once if the run is stopping)."""
        done = anyio.Event()
        assert self._restarts is not None
        self._restarts.start_soon(self._restart, broker_id, delay_s, done)
        await done.wait()

    async def _restart(self, broker_id: int, delay_s: float, done: anyio.Event) -> None:
        try:
            assert self._stop_event is not None
            with anyio.move_on_after(delay_s):
                await self._stop_event.wait()
            if not self.cluster.brokers[broker_id].is_running:
                await self.restart_broker(broker_id)
        finally:
            done.set()

    async def restart_broker(self, broker_id: int) -> None:
        """Start a new process of the broker and record it (``restart_failed`` if it is not up
        within RESTART_TIMEOUT_S of loop time).

        (A KRaft broker starts only once it has registered and caught up with the metadata log;
        a run must never wait for that forever.)"""
        try:
            with anyio.fail_after(RESTART_TIMEOUT_S):
                await self.cluster.restart_broker(broker_id)
        except TimeoutError:
            self.history.append(SOURCE_SIM, "restart_failed", broker=broker_id,
                                error=f"broker {broker_id} did not start within {RESTART_TIMEOUT_S:g} s of loop time")
            return
        self.down.discard(broker_id)
        self._watch_hw_checkpoint(broker_id)
        self.history.append(SOURCE_FAULT, "broker_restarted", broker=broker_id)

    def _watch_hw_checkpoint(self, broker_id: int) -> None:
        """Remember each replication-offset-checkpoint's content before every write (for HW-loss faults)."""
        checkpoint = self.cluster.disks[broker_id].replication_offset_checkpoint
        if getattr(checkpoint, "_sim_watched", False):
            return
        original = checkpoint.write

        def write(offsets: Any) -> None:
            self._previous_hw_checkpoint[broker_id] = checkpoint.content
            original(offsets)

        checkpoint.write = write  # type: ignore[method-assign]
        checkpoint._sim_watched = True  # type: ignore[attr-defined]

    # -- the run ------------------------------------------------------------------------------

    def cluster_config(self) -> dict[str, Any]:
        config = {**BASE_BROKER_CONFIG, "offsets.topic.replication.factor": min(3, self.scenario.brokers),
                  **self.scenario.broker_config}
        if self.ibp is not None:
            # An era is a cluster of that release: its IBP and its broker code.
            config["inter.broker.protocol.version"] = self.ibp
            config["kafka_ref.broker.version"] = self.ibp
        return config

    async def main(self) -> None:
        trio.lowlevel.add_instrument(_CheckAfterEachStep(self))
        self.history.start_clock()
        scenario = self.scenario
        rng = self.sub_rng("setup")
        brokers = list(range(scenario.brokers))
        for tp in self.partitions:
            self.replicas[tp] = rng.sample(brokers, scenario.replication_factor)
        unclean = rng.random() < scenario.unclean_prob
        topic_config = {"min.insync.replicas": scenario.min_insync_replicas,
                        "unclean.leader.election.enable": "true" if unclean else "false"}
        quorum = {"controllers": self.config.controllers} if self.config.controllers != 1 else {}
        async with Cluster(brokers=scenario.brokers, metadata_mode=self.config.metadata_mode,
                           config=self.cluster_config(), seed=self.cluster_seed, racks=scenario.racks, **quorum) as cluster:
            self.cluster = cluster
            if self.config.controllers > 1:
                self._start_raft_checker()
            for b in brokers:
                self._watch_hw_checkpoint(b)
            self.history.append(SOURCE_SIM, "sim_started", seed=self.seed, scenario=scenario.name,
                                ibp=self.ibp or "default", replicas={str(tp): r for tp, r in self.replicas.items()},
                                unclean_leader_election=unclean)
            await cluster.create_topic(TOPIC, replica_assignment={tp.partition: r for tp, r in self.replicas.items()},
                                       config=topic_config)
            self.fault_model = NetworkFaultModel(self, scenario.noise)
            self.workload = Workload(self)
            self.clients = ClientWorkload(self) if scenario.clients else None
            self._stop_event = anyio.Event()
            duration = self.config.duration_s if self.config.duration_s is not None else scenario.duration_s
            async with anyio.create_task_group() as clients_tg:
                # The real clients (client scenarios) outlive the faults: they are checked after healing.
                if self.clients is not None:
                    await clients_tg.start(self.clients.run)
                async with anyio.create_task_group() as restarts:
                    self._restarts = restarts
                    async with anyio.create_task_group() as tg:
                        self._tg = tg
                        cluster.network.set_fault_model(self.fault_model)
                        for p in range(scenario.producers):
                            tg.start_soon(self.workload.run_producer, p)
                        tg.start_soon(self.workload.run_consumer)
                        if scenario.commit_offsets:
                            tg.start_soon(self.workload.run_committer)
                        for nemesis in scenario.nemeses():
                            tg.start_soon(nemesis.run, self)
                        await anyio.sleep(duration)
                        # Stop: no more faults or writes; pending restarts happen now.
                        self.stopping = True
                        cluster.network.set_fault_model(None)
                        self.workload.producing = False
                        self._stop_event.set()
                        self.history.append(SOURCE_SIM, "faults_stopped")
                        tg.cancel_scope.cancel()
                await self._heal_and_check()
            self.simulated_s = anyio.current_time()

    def _start_raft_checker(self) -> None:
        from kafka_ref.sim.raft_sim import QuorumSimResult, RaftInvariants

        def report(invariant: str, message: str) -> None:
            self.checker.violate(f"raft_{invariant}", message)

        self.raft_checker = RaftInvariants(self.cluster.kraft, QuorumSimResult(self.seed, self.scenario.name), report)
        self.raft_checker.check()

    async def _heal_and_check(self) -> None:
        cluster = self.cluster
        # 1. Heal: no network faults, the KRaft controller and every broker running.
        cluster.network.set_fault_model(None)
        self.heal_network()
        if self.cluster.kraft is not None:
            await self._restart_controller()
        for b in sorted(cluster.brokers):
            if cluster.brokers[b].is_running and b in self.down:
                # A clean shutdown the end of the faults interrupted (its nemesis was cancelled in
                # the middle of a controlled shutdown, which takes heartbeats in KRaft mode): the
                # broker has stopped its fetchers and would exit next, so finish it with the clean
                # stop and restart it like any other broker that is down.
                self.history.append(SOURCE_SIM, "interrupted_shutdown_finished", broker=b)
                cluster.shutdown_broker_uncontrolled(b)
            if not cluster.brokers[b].is_running:
                await self.restart_broker(b)
        # 2. Converge: full ISRs, every replica at the leader's LEO and HW.
        if not await self.wait_until(self.converged, self.config.heal_timeout_s, poll_s=0.1):
            self.checker.violate("converged_after_heal", "the cluster did not converge after healing",
                                 isr={str(tp): self.isr_of(tp) for tp in self.partitions},
                                 leaders={str(tp): self.leader_of(tp) for tp in self.partitions},
                                 running=[b for b, x in sorted(cluster.brokers.items()) if x.is_running],
                                 replicas=self.replica_states())
        self.history.append(SOURCE_SIM, "healed", converged=self.converged())
        # 3. The real clients (client scenarios) must make progress again (client_workload.py).
        if self.clients is not None:
            await self.clients.finish_after_heal()
        # 4. The consumer reads everything committed; then the final comparison.
        await self.workload.drain()
        committed = await self.workload.fetch_committed() if self.workload.committed else {}
        self.checker.check()
        self.final_stats = self.checker.check_final(self.workload.acked, self.workload.consumed)
        self.checker.check_commits(self.workload.committed, committed, self.workload.commits_in_doubt)
        self.history.append(SOURCE_SIM, "sim_finished", violations=len(self.checker.violations), **self.final_stats)

    def result(self) -> SimResult:
        return SimResult(
            seed=self.seed, scenario=self.scenario.name, ibp=self.ibp, metadata_mode=self.config.metadata_mode,
            digest=self.history.digest(), events=len(self.history), violations=list(self.checker.violations),
            violation_counts=dict(self.checker.counts), faults=dict(sorted(self.faults.items())),
            simulated_s=self.simulated_s,
            workload={**(self.workload.details() if self.workload else {}), **(self.clients.details() if self.clients else {})},
            unclean_elections=self.checker.unclean_elections,
            unclean_losses=self.final_stats.get("unclean_losses", 0),
            acks1_losses=self.final_stats.get("acks1_losses", 0),
            checks=self.checker.checks,
            history=self.history if self.config.keep_history else None,
            controllers=self.config.controllers,
        )


class _CheckAfterEachStep(trio.abc.Instrument):
    """A trio instrument: after every task step (an atomic section), run the invariant checks."""

    def __init__(self, ctx: SimContext) -> None:
        self.ctx = ctx

    def after_task_step(self, task: Any) -> None:
        try:
            self.ctx.after_step()
        except RUN_ENDING:
            raise
        except Exception as exc:  # a checker bug must not stop the run silently
            self.ctx.checker.violate("checker_error", f"the invariant checker raised {exc!r}")


@contextlib.contextmanager
def deterministic_scheduling(seed: int) -> Iterator[None]:
    """Put trio's scheduler in its deterministic mode with its shuffles seeded from ``seed``.

    trio normally reverses each batch of runnable tasks at random (from an unseeded generator);
    in deterministic mode (the switch Hypothesis uses) it sorts the batch by task creation
    order and shuffles it with its module generator, which we seed.
    """
    import trio._core._run as trio_run

    saved_flag = trio_run._ALLOW_DETERMINISTIC_SCHEDULING
    saved_state = trio_run._r.getstate()
    trio_run._ALLOW_DETERMINISTIC_SCHEDULING = True  # type: ignore[misc]
    trio_run._r.seed(seed)
    try:
        yield
    finally:
        trio_run._ALLOW_DETERMINISTIC_SCHEDULING = saved_flag  # type: ignore[misc]
        trio_run._r.setstate(saved_state)


@contextlib.contextmanager
def recording_state_changes(history: History) -> Iterator[None]:
    """Route every structlog event (DEBUG and up) into ``history`` for the duration."""
    configure_logging(logging.DEBUG)
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, history.processor],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        cache_logger_on_first_use=False,
    )
    try:
        yield
    finally:
        configure_logging()


#: (major, minor) of every Kafka release line whose inter.broker.protocol.version the simulator accepts.
KAFKA_RELEASES = frozenset({(0, 10), (0, 11), (1, 0), (1, 1), *((2, m) for m in range(9)), *((3, m) for m in range(9))})


def check_ibp(ibp: str) -> None:
    """ValueError unless ``ibp`` is the version of a Kafka release from 0.10.0 to 3.8 (what Kafka
    3.8's MetadataVersion#fromVersionString knows; 3.9 is there only as the unstable 3.9-IV0)."""
    from kafka_ref.sim.scenarios import ERAS

    eras = ", ".join(ERAS)
    try:
        version = MetadataVersion.parse(ibp)
    except ValueError:
        raise ValueError(f"inter.broker.protocol.version {ibp!r} is not a version; use an era ({eras}) "
                         "or a Kafka release such as 2.8 or 0.10.1") from None
    release = version.release
    if (release[0], release[1]) not in KAFKA_RELEASES or (release[0] == 0 and release[2] > (2 if release[1] == 10 else 0)):
        raise ValueError(f"inter.broker.protocol.version {ibp!r} is outside the releases the simulator runs (0.10.0 to 3.8); "
                         f"use an era ({eras}) or one of those versions")


def check_config(config: SimConfig) -> None:
    """ValueError for a configuration the simulator cannot run (an unknown mode, a pre-KRaft era in KRaft mode)."""
    if config.metadata_mode not in ("zk", "kraft"):
        raise ValueError(f"metadata_mode {config.metadata_mode!r}: the simulator runs 'zk' or 'kraft' clusters")
    ibp = normalize_ibp(config.ibp)
    if ibp is not None:
        check_ibp(ibp)
    if config.duration_s is not None and not config.duration_s > 0:
        raise ValueError(f"duration {config.duration_s!r}: give a positive number of simulated seconds")
    if isinstance(config.controllers, bool) or not isinstance(config.controllers, int) or config.controllers < 1:
        raise ValueError(f"controllers {config.controllers!r}: give a whole number of voters, at least 1")
    if config.controllers != 1 and config.metadata_mode != "kraft":
        raise ValueError(f"controllers {config.controllers}: a controller quorum runs in metadata_mode 'kraft' only")
    if config.metadata_mode == "kraft" and ibp is not None and not MetadataVersion.parse(ibp).is_at_least("3.0"):
        raise ValueError(f"inter.broker.protocol.version {ibp} predates KRaft (3.0): its eras run in 'zk' mode only")


def simulate(seed: int, scenario: "str | Scenario" = "leader-failover", config: SimConfig | None = None,
             recorder: "TimelineRecorder | None" = None) -> SimResult:
    """Run ``scenario`` for ``seed`` in virtual time and check every invariant.

    The same (seed, scenario, config) gives the same ``SimResult.digest`` every time. A
    ``recorder`` (kafka_ref/sim/timeline_svg.py) sees every event and reads the replicas' state
    then; it changes nothing in the run.
    """
    config = config or SimConfig()
    check_config(config)
    ctx = SimContext(seed, get_scenario(scenario), config)
    if recorder is not None:
        ctx.history.listeners.append(
            lambda e: recorder.observe(e.time_ms / 1000.0, e.name, e.fields, e.source, ctx.cluster))
    with deterministic_scheduling(ctx.scheduler_seed), recording_state_changes(ctx.history):
        anyio.run(ctx.main, backend="trio",
                  backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
    result = ctx.result()
    if recorder is not None:
        for violation in result.violations:
            event = ctx.history.events[min(violation.event_index, len(ctx.history.events) - 1)]
            recorder.violation(event.time_ms / 1000.0, violation.describe())
    return result
