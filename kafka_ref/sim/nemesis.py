"""Faults for the simulator: named nemeses with rates, and the network fault model.

Each nemesis is a task that sleeps an exponentially distributed time (its rate is per minute of
simulated time), then injects its fault, all drawn from its own random stream derived from the
seed. Faults are recorded in the history with their kind, which the summary counts:

========================  ==============================================================
kind                      what happens
========================  ==============================================================
crash_restart             a broker is killed (memory lost, disk kept) and restarted later
hw_checkpoint_loss        the same, and the last write of its replication-offset-checkpoint
                          is lost too (the file as it was one checkpoint interval earlier)
clean_shutdown            a broker shuts down cleanly (checkpoints written, session closed)
controller_kill           the active controller's broker is killed, restarted later (KRaft
                          mode: the controller node, which comes back in a new epoch)
                          (``--controllers N``: a voter, mostly the active one; another
                          voter is elected while it is down)
controller_isolated / controller_cut_from_voters
                          ``--controllers N`` only, instead of a kill: a voter loses every
                          link, or its links to the other voters, and is healed later
zk_session_expiry         ZooKeeper expires a broker's session (it re-registers)
broker_heartbeats_lost    KRaft mode's form of the same failure: the broker's heartbeats do
                          not reach the controller for longer than broker.session.timeout.ms
                          (it is fenced, then unfenced once back and caught up)
partition_leader_isolated a leader loses every network link (optionally its ZooKeeper
                          session too), healed later
partition_split           the brokers split into a majority and a minority side
slow_follower             a follower's fetches are delayed by seconds
leader_and_isr_dropped    the next LeaderAndIsr requests are lost (the controller resends)
leader_and_isr_duplicated the next LeaderAndIsr requests arrive twice, the copy late
metadata_fetch_dropped / metadata_fetch_duplicated
                          KRaft mode's form: a broker's next fetches of the metadata log are
                          lost (it retries after the request timeout) or arrive twice
back_to_back              a leader is killed, then the leader elected after it, quickly
leader_kill_cycle         each partition's leader in turn is killed, kept down, restarted, and
                          the ISR refills before the next (client-failover's pattern)
msg_delayed / msg_duplicated / msg_dropped
                          inter-broker requests delayed, duplicated or lost by the
                          network fault model (duplicates and delays also reorder)
========================  ==============================================================
"""

from __future__ import annotations

import abc
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import anyio

from kafka_ref.network.network import INTER_BROKER_PRINCIPAL, DisconnectException, Envelope, NetworkTimeoutException
from kafka_ref.sim.history import Event

if TYPE_CHECKING:
    from kafka_ref.sim.simulate import SimContext


# ---------------------------------------------------------------------------------------------
# the network fault model


@dataclass(frozen=True, slots=True)
class NetworkNoise:
    """Background faults on every inter-broker request."""

    delay_prob: float = 0.2
    max_delay_ms: float = 20.0
    duplicate_prob: float = 0.01
    drop_prob: float = 0.0


class NetworkFaultModel:
    """The object installed with ``Network.set_fault_model``: seeded delays, duplicates, drops.

    Only inter-broker requests (broker to broker, controller to broker) are touched; client
    traffic goes through unchanged. Slow followers and LeaderAndIsr faults are switched on by
    the nemeses below.

    Each link (source, destination) stays first-in first-out, as a TCP connection is: a
    delayed request holds back the requests sent after it on the same link, and a duplicate
    (a resend) arrives right behind its original. Requests on different links overtake each
    other freely, which is the reordering a cluster really sees (a follower's fetch against
    the controller's LeaderAndIsr, an AlterPartition against an UpdateMetadata). Without this,
    a late copy of an old UpdateMetadata could land after a newer one, which Kafka's
    one-connection-per-broker controller channel never allows.
    """

    def __init__(self, ctx: "SimContext", noise: NetworkNoise) -> None:
        self.ctx = ctx
        self.noise = noise
        self.rng = ctx.sub_rng("network")
        self.slow: dict[int, tuple[float, float]] = {}
        self.leader_and_isr_actions: list[str] = []
        kraft = ctx.config.metadata_mode == "kraft"
        self.metadata_request = "MetadataFetchRequest" if kraft else "LeaderAndIsrRequest"
        self.metadata_fault = "metadata_fetch" if kraft else "leader_and_isr"
        self._last_arrival: dict[tuple[int, int], float] = {}

    def _in_order(self, src: int, dst: int, delays: Sequence[float]) -> Sequence[float]:
        """Stretch ``delays`` so nothing overtakes what was sent earlier on this link."""
        now = anyio.current_time()
        last = self._last_arrival.get((src, dst), -1.0)
        result = []
        for delay in delays:
            arrival = max(now + delay, last + 1e-6) if last >= now else now + delay
            last = arrival
            result.append(arrival - now)
        self._last_arrival[(src, dst)] = last
        return tuple(result)

    def deliveries(self, envelope: Envelope) -> Sequence[float]:
        src, dst = envelope.src, envelope.dst
        if envelope.principal != INTER_BROKER_PRINCIPAL or not isinstance(src, int) or not isinstance(dst, int):
            return (0.0,)
        delays = self._choose(envelope)
        return self._in_order(src, dst, delays) if delays else delays

    def _choose(self, envelope: Envelope) -> Sequence[float]:
        src, dst = envelope.src, envelope.dst
        rng, noise = self.rng, self.noise
        kind = type(envelope.request).__name__
        # 1. Armed faults take the next requests that carry metadata to brokers: LeaderAndIsr
        #    from a ZooKeeper-mode controller, a broker's metadata log fetch in KRaft mode.
        if kind == self.metadata_request and self.leader_and_isr_actions:
            action = self.leader_and_isr_actions.pop(0)
            if action == "drop":
                self.ctx.record_fault(f"{self.metadata_fault}_dropped", src=src, dst=dst)
                return ()
            late = rng.uniform(0.05, 2.0)
            self.ctx.record_fault(f"{self.metadata_fault}_duplicated", src=src, dst=dst, copy_after_ms=round(late * 1000))
            return (0.0, late)
        # 2. Background loss, delay and duplication.
        if noise.drop_prob and rng.random() < noise.drop_prob:
            self.ctx.count_fault("msg_dropped")
            return ()
        delay = 0.0
        if rng.random() < noise.delay_prob:
            delay = rng.uniform(0.0, noise.max_delay_ms) / 1000.0
            self.ctx.count_fault("msg_delayed")
        # 3. A slow follower's replication requests (fetches, epoch queries) wait much longer.
        if src in self.slow and kind in _REPLICATION_REQUESTS:
            delay += rng.uniform(*self.slow[src]) / 1000.0
        if noise.duplicate_prob and rng.random() < noise.duplicate_prob:
            self.ctx.count_fault("msg_duplicated")
            return (delay, delay + rng.uniform(0.0, max(noise.max_delay_ms, 1.0)) / 1000.0)
        return (delay,)

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> None:
        self.ctx.spawn(_call_later, delay_s, callback)


_REPLICATION_REQUESTS = frozenset({"FetchRequest", "OffsetForLeaderEpochRequest"})


async def _call_later(delay_s: float, callback: Callable[[], None]) -> None:
    await anyio.sleep(delay_s)
    callback()


# ---------------------------------------------------------------------------------------------
# nemeses


class Nemesis(abc.ABC):
    """A fault injected at random times: ``rate`` per minute of simulated time."""

    kind = "nemesis"

    def __init__(self, rate: float, **params: Any) -> None:
        self.rate = rate
        self.params = params
        self.rng: random.Random = random.Random(0)

    def describe(self) -> str:
        return f"{self.kind} ({self.rate:g}/min)"

    async def run(self, ctx: "SimContext") -> None:
        self.rng = ctx.sub_rng(f"nemesis-{self.kind}")
        if self.rate <= 0:
            return
        first = self.params.get("start_after_s", 2.0)
        await anyio.sleep(first)
        while not ctx.stopping:
            await anyio.sleep(self.rng.expovariate(self.rate / 60.0))
            if ctx.stopping:
                return
            await self.inject(ctx)

    @abc.abstractmethod
    async def inject(self, ctx: "SimContext") -> None:
        """Inject the fault once."""

    def down_for(self) -> float:
        lo, hi = self.params.get("down_s", (2.0, 20.0))
        return self.rng.uniform(lo, hi)


def _pick_target(ctx: "SimContext", rng: random.Random, target: str) -> int | None:
    """A live broker: the leader or a follower of a random partition, the controller, or any."""
    live = ctx.live_brokers()
    if not live:
        return None
    if target == "controller":
        controller = ctx.cluster.controller_id()
        return controller if controller in live else None
    if target in ("leader", "follower"):
        tp = rng.choice(ctx.partitions)
        leader = ctx.leader_of(tp)
        if target == "leader":
            return leader if leader in live else None
        followers = [r for r in ctx.replicas[tp] if r != leader and r in live]
        return rng.choice(followers) if followers else None
    return rng.choice(live)


class CrashRestart(Nemesis):
    """Kill a broker (leader, follower, controller or any), restart it ``down_s`` later."""

    kind = "crash_restart"

    async def inject(self, ctx: "SimContext") -> None:
        if not ctx.may_take_down():
            return
        target = _pick_target(ctx, self.rng, self.params.get("target", "any"))
        if target is None:
            return
        lose_hw = self.rng.random() < self.params.get("hw_loss_prob", 0.0)
        ctx.crash(target, kind="hw_checkpoint_loss" if lose_hw else self.kind, lose_last_hw_checkpoint=lose_hw)
        ctx.spawn(ctx.restart_after, target, self.down_for())


class CleanShutdown(Nemesis):
    """Shut a broker down cleanly, restart it later.

    With probability ``controlled_prob`` it is Kafka's full clean shutdown (controlled shutdown
    first: the controller moves its leaderships away), otherwise a clean stop without it
    (checkpoints written, ZooKeeper session closed).
    """

    kind = "clean_shutdown"

    async def inject(self, ctx: "SimContext") -> None:
        if not ctx.may_take_down():
            return
        target = _pick_target(ctx, self.rng, self.params.get("target", "any"))
        if target is None:
            return
        controlled = self.rng.random() < self.params.get("controlled_prob", 0.5)
        await ctx.shutdown(target, controlled)
        ctx.spawn(ctx.restart_after, target, self.down_for())


class PreferredElection(Nemesis):
    """Ask the controller to move leadership back to the preferred replicas (leaders change, ISR stays)."""

    kind = "preferred_election"

    async def inject(self, ctx: "SimContext") -> None:
        # ZooKeeper mode: one election znode at a time. KRaft mode: ElectLeaders to the
        # controller node (nothing to ask while it is down).
        zookeeper = ctx.cluster.zookeeper
        if zookeeper is not None and zookeeper.exists("/admin/preferred_replica_election") is not None:
            return
        if ctx.kraft and ctx.controller_down:
            return
        ctx.record_fault(self.kind, leaders={str(tp): ctx.leader_of(tp) for tp in ctx.partitions})
        try:
            await ctx.cluster.elect_preferred_leaders(ctx.partitions)
        except (TimeoutError, DisconnectException, NetworkTimeoutException):
            # The controller died meanwhile or brokers lag behind: the elections may or may not have happened.
            ctx.history.append("sim", "preferred_election_unconfirmed")


class ControllerKill(Nemesis):
    """Kill the active controller's broker, restart it later."""

    kind = "controller_kill"

    async def inject(self, ctx: "SimContext") -> None:
        if ctx.cluster.kraft is not None and len(ctx.cluster.kraft.voters) > 1:
            self._inject_quorum(ctx)
            return
        if ctx.cluster.kraft is not None:
            # KRaft mode: the controller is its own node, not a broker.
            if not ctx.controller_down and not ctx.stopping:
                ctx.kill_controller(self.kind)
                ctx.restart_controller_after(self.down_for())
            return
        if not ctx.may_take_down():
            return
        target = _pick_target(ctx, self.rng, "controller")
        if target is None:
            return
        ctx.crash(target, kind=self.kind)
        ctx.spawn(ctx.restart_after, target, self.down_for())


    def _inject_quorum(self, ctx: "SimContext") -> None:
        """A controller quorum (``--controllers N``): one voter at a time, the active one more often
        than not, is killed and restarted later (another voter is elected meanwhile), or cut off from
        the other voters, or from every node, and healed later. A partitioned leader resigns once a
        majority has not fetched from it for 1.5 fetch timeouts (check quorum)."""
        kraft = ctx.cluster.kraft
        if ctx.controller_down or ctx.stopping or ctx.controller_partitioned:
            return
        active = kraft.active_node()
        running = [v for v in kraft.voters if kraft.nodes[v].is_running]
        if active is not None and self.rng.random() < 0.7:
            target = active.node_id
        else:
            target = self.rng.choice(running)
        roll = self.rng.random()
        if roll < 0.5:
            ctx.kill_controller(self.kind, target)
            ctx.restart_controller_after(self.down_for())
            return
        others = [v for v in kraft.voters if v != target]
        whole = roll >= 0.75
        network = ctx.cluster.network
        if whole:
            network.isolate(target)
        else:
            for other in others:
                network.cut_link(target, other)
        ctx.controller_partitioned = True
        ctx.record_fault("controller_isolated" if whole else "controller_cut_from_voters", controller=target,
                         active=active.node_id if active is not None else -1)

        def heal() -> None:
            if whole:
                network.heal_node(target)
            else:
                for other in others:
                    network.heal_link(target, other)
            ctx.controller_partitioned = False
            ctx.history.append("fault", "controller_healed", controller=target)

        ctx.spawn(_call_later, self.down_for(), heal)


class ZkSessionExpiry(Nemesis):
    """ZooKeeper expires a live broker's session; the broker re-registers with a new one."""

    kind = "zk_session_expiry"

    async def inject(self, ctx: "SimContext") -> None:
        target = _pick_target(ctx, self.rng, self.params.get("target", "any"))
        if target is not None:
            ctx.expire_session(target, kind=self.kind)


class NetworkPartition(Nemesis):
    """Isolate a leader, or split the brokers into majority and minority, for a while.

    ``expire_zk_prob``: chance that the cut-off side also loses its ZooKeeper sessions (the
    controller then moves leadership away; the cut-off brokers re-register at once, as a broker
    that kept its ZooKeeper link but lost its peers would).
    """

    kind = "network_partition"

    async def inject(self, ctx: "SimContext") -> None:
        live = ctx.live_brokers()
        if len(live) < 2 or ctx.partitioned:
            return
        duration = self.rng.uniform(*self.params.get("duration_s", (3.0, 20.0)))
        expire = self.rng.random() < self.params.get("expire_zk_prob", 0.5)
        if self.rng.random() < self.params.get("isolate_prob", 0.5):
            leader = _pick_target(ctx, self.rng, "leader")
            if leader is None:
                return
            minority = [leader]
            ctx.partitioned = True
            ctx.cluster.network.isolate(leader)
            ctx.record_fault("partition_leader_isolated", broker=leader, duration_ms=round(duration * 1000), zk_expired=expire)
        else:
            shuffled = list(ctx.cluster.brokers)
            self.rng.shuffle(shuffled)
            size = self.rng.randint(1, (len(shuffled) - 1) // 2 or 1)
            minority = sorted(shuffled[:size])
            majority = sorted(shuffled[size:])
            ctx.partitioned = True
            for a in minority:
                for b in majority:
                    ctx.cluster.network.cut_link(a, b)
            ctx.record_fault("partition_split", minority=minority, majority=majority,
                             duration_ms=round(duration * 1000), zk_expired=expire)
        if expire:
            for b in minority:
                if b in ctx.live_brokers():
                    ctx.expire_session(b, kind=None)
        await anyio.sleep(duration)
        ctx.heal_network()


class SlowFollower(Nemesis):
    """Delay one follower's fetch requests by ``delay_ms`` for ``duration_s``."""

    kind = "slow_follower"

    async def inject(self, ctx: "SimContext") -> None:
        target = _pick_target(ctx, self.rng, "follower")
        if target is None or target in ctx.fault_model.slow:
            return
        delay = self.params.get("delay_ms", (500.0, 4000.0))
        duration = self.rng.uniform(*self.params.get("duration_s", (5.0, 25.0)))
        ctx.fault_model.slow[target] = delay
        ctx.record_fault(self.kind, broker=target, delay_ms=list(delay), duration_ms=round(duration * 1000))
        await anyio.sleep(duration)
        ctx.fault_model.slow.pop(target, None)
        ctx.history.append("fault", "slow_follower_healed", broker=target)


class LeaderAndIsrFault(Nemesis):
    """Arm the network to drop or duplicate the next one to three LeaderAndIsr requests."""

    kind = "leader_and_isr_fault"

    async def inject(self, ctx: "SimContext") -> None:
        action = "drop" if self.rng.random() < self.params.get("drop_prob", 0.5) else "duplicate"
        ctx.fault_model.leader_and_isr_actions.extend([action] * self.rng.randint(1, 3))


def _is_leader_change(ctx: "SimContext", tp: Any, old_leader: int) -> Callable[[Event], bool]:
    """The controller's state-change event after it wrote a new leader (not ``old_leader``)."""

    def match(event: Event) -> bool:
        if ctx.kraft:
            # The QuorumController's write of the PartitionChangeRecord.
            return event.name == "controller_write" and ctx.leader_of(tp) not in (-1, old_leader)
        if event.name != "partition_state_changed" or event.fields.get("topic_partition") != str(tp):
            return False
        return ctx.leader_of(tp) not in (-1, old_leader)
    return match


class ScriptedNemesis(Nemesis):
    """A nemesis that plays one scripted sequence instead of firing at a rate."""

    def __init__(self, **params: Any) -> None:
        super().__init__(0.0, **params)

    def describe(self) -> str:
        return f"{self.kind} (scripted)"

    async def run(self, ctx: "SimContext") -> None:
        self.rng = ctx.sub_rng(f"nemesis-{self.kind}")
        await anyio.sleep(self.rng.uniform(*self.params.get("start_after_s", (3.0, 10.0))))
        if not ctx.stopping:
            await self.inject(ctx)


class BackToBack(Nemesis):
    """Kill a leader; as soon as the controller elects the next one, kill it too (after ``gap_ms``).

    ``after_ack_prob``: chance to strike right after an acks=all acknowledgement (the followers'
    high watermarks then trail the leader's by one fetch round). ``second_after``: kill the
    second leader ``gap_ms`` after its election ("elected"), or after it acknowledged its first
    write in its new epoch ("first_write"). ``slow_followers_ms``: meanwhile the surviving
    replicas' fetch and epoch requests are slow (a delay range), for ``slow_s`` seconds.
    ``lag_successor_ms``: before the first kill, the replica the controller will elect next (the
    first other live ISR member in assignment order) fetches slowly for ``lag_for_s`` seconds,
    so the third replica holds records the successor lacks.
    """

    kind = "back_to_back"

    async def inject(self, ctx: "SimContext") -> None:
        if not ctx.may_take_down(2):
            return
        if self.rng.random() < self.params.get("after_ack_prob", 0.5):
            await ctx.wait_event(lambda e: e.name == "produce_ack" and e.fields.get("acks") == -1, 10.0)
        tp = self.rng.choice(ctx.partitions)
        first = ctx.leader_of(tp)
        if first not in ctx.live_brokers() or not ctx.may_take_down(2):
            return
        lag = self.params.get("lag_successor_ms")
        if lag is not None:
            isr = ctx.isr_of(tp)
            successor = next((r for r in ctx.replicas[tp] if r != first and r in isr and r in ctx.live_brokers()), None)
            if successor is not None:
                ctx.fault_model.slow[successor] = lag
                await anyio.sleep(self.rng.uniform(*self.params.get("lag_for_s", (0.5, 2.0))))
                ctx.fault_model.slow.pop(successor, None)
            if first not in ctx.live_brokers() or ctx.leader_of(tp) != first or not ctx.may_take_down(2):
                return
        ctx.record_fault(self.kind, topic_partition=str(tp), first=first)
        ctx.crash(first, kind=None)
        slow = self.params.get("slow_followers_ms")
        if slow is not None:
            survivors = [r for r in ctx.replicas[tp] if r != first]
            for r in survivors:
                ctx.fault_model.slow[r] = slow
            ctx.spawn(_heal_slow, ctx, survivors, self.params.get("slow_s", 10.0))
        event = await ctx.wait_event(_is_leader_change(ctx, tp, first), 60.0)
        second = ctx.leader_of(tp)
        if event is not None and second >= 0 and second != first and second in ctx.live_brokers():
            if self.params.get("second_after", "elected") == "first_write":
                epoch = (ctx.partition_state(tp) or {}).get("leader_epoch", -1)
                await ctx.wait_event(lambda e: e.name == "produce_ack" and e.fields.get("broker") == second
                                     and e.fields.get("epoch") == epoch, 10.0)
            gap = self.rng.uniform(*self.params.get("gap_ms", (0.0, 50.0))) / 1000.0
            await anyio.sleep(gap)
            if second in ctx.live_brokers() and ctx.leader_of(tp) == second:
                ctx.crash(second, kind=None)
                ctx.history.append("fault", "back_to_back_second", topic_partition=str(tp), second=second,
                                   gap_ms=round(gap * 1000, 3))
                ctx.spawn(ctx.restart_after, second, self.down_for())
        ctx.spawn(ctx.restart_after, first, self.down_for())


async def _heal_slow(ctx: "SimContext", brokers: list[int], after_s: float) -> None:
    await anyio.sleep(after_s)
    for b in brokers:
        ctx.fault_model.slow.pop(b, None)


class RollingRestart(ScriptedNemesis):
    """Restart every broker once, one at a time, waiting for the ISR to fill up in between."""

    kind = "rolling_restart"

    async def inject(self, ctx: "SimContext") -> None:
        order = sorted(ctx.cluster.brokers)
        self.rng.shuffle(order)
        for broker in order:
            if ctx.stopping:
                return
            roll = self.rng.random()
            if roll < self.params.get("crash_prob", 0.3):
                ctx.crash(broker, kind="crash_restart", lose_last_hw_checkpoint=self.rng.random() < 0.3)
            else:
                await ctx.shutdown(broker, controlled=self.rng.random() < 0.7)
            await ctx.restart_after(broker, self.rng.uniform(*self.params.get("down_s", (1.0, 8.0))))
            await ctx.wait_until(ctx.all_isr_full, 60.0)
            await anyio.sleep(self.rng.uniform(1.0, 5.0))


class LeaderKillCycle(ScriptedNemesis):
    """For each partition in turn: kill its leader, keep it down a while, restart it, wait for a full ISR.

    The pattern of issue 17's report (a producer stalled behind a dead broker): the brokers that
    stay up can serve every partition the whole time, so a client that finds the new leaders the way
    Kafka's does keeps working while the old leader is down.
    """

    kind = "leader_kill_cycle"

    async def inject(self, ctx: "SimContext") -> None:
        for tp in ctx.partitions:
            if ctx.stopping or not ctx.may_take_down():
                return
            leader = ctx.leader_of(tp)
            if leader < 0 or not ctx.cluster.brokers[leader].is_running:
                continue
            ctx.crash(leader, kind=self.kind)
            await ctx.restart_after(leader, self.rng.uniform(*self.params.get("down_s", (15.0, 40.0))))
            await ctx.wait_until(ctx.all_isr_full, 60.0)
            await anyio.sleep(self.rng.uniform(1.0, 5.0))


class LastReplicaStanding(ScriptedNemesis):
    """Shrink the ISR to the leader alone (its followers' fetches stalled), then kill the leader.

    With unclean.leader.election.enable the controller elects a cut-off follower (an unclean
    election, whose losses are counted apart); without it the partition stays offline until the
    last in-sync replica returns.
    """

    kind = "last_replica_standing"

    async def inject(self, ctx: "SimContext") -> None:
        tp = self.rng.choice(ctx.partitions)
        leader = ctx.leader_of(tp)
        if leader < 0:
            return
        followers = [r for r in ctx.replicas[tp] if r != leader]
        ctx.record_fault(self.kind, topic_partition=str(tp), leader=leader, followers=followers)
        # 1. Stall the followers' fetches (longer than replica.lag.time.max.ms): the leader
        #    shrinks the ISR to itself through the controller, and keeps taking writes.
        for f in followers:
            ctx.fault_model.slow[f] = (25000.0, 30000.0)
        await ctx.wait_until(lambda: ctx.isr_of(tp) == [leader], 60.0)
        await anyio.sleep(self.rng.uniform(0.5, 5.0))
        # 2. Kill the last replica standing; the survivors fetch normally again.
        ctx.crash(leader, kind="crash_restart")
        for f in followers:
            ctx.fault_model.slow.pop(f, None)
        # 3. Bring it back later (with unclean election it returns as a follower and truncates).
        await ctx.restart_after(leader, self.rng.uniform(5.0, 20.0))
