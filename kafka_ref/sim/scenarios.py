"""The simulator's scenarios: a cluster shape, a workload, and the faults to throw at it.

Every scenario runs under any era (``inter.broker.protocol.version``); ``ERAS`` lists the ones
the README table covers. Two scenarios are built to provoke the historical anomalies:

* ``kip101`` – acks=all traffic, then a leader killed right after an acknowledgement and the
  leader elected next killed within tens of milliseconds, before the third replica has caught
  up with it. Before KIP-101 (IBP 0.10.2) that third replica, on becoming a follower, cut its
  log back to its own high watermark, which trails the leader's by one fetch round; elected
  next, it no longer has writes the first leader acknowledged (``acked_write_durable``).
* ``kip279`` – mostly acks=1 traffic so replicas hold different unreplicated suffixes, then the
  same fast double failover. With KIP-101 as first shipped (IBP 0.11), a follower asking for an
  epoch the new leader never saw is answered with the start of the leader's next epoch and keeps
  a suffix the leader does not have: the replicas diverge (``replicas_identical``). KIP-279
  (IBP 2.0) answers with the epoch and the follower truncates correctly.

In ZooKeeper mode the controller removes a dead broker from the ISR, so the two-replica form of
KIP-101's example (a follower restarting inside the ISR) cannot occur; the three-replica form
(two leaders failing in quick succession) is what these scenarios use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from kafka_ref.sim.nemesis import (
    BackToBack,
    CleanShutdown,
    ControllerKill,
    CrashRestart,
    LastReplicaStanding,
    LeaderKillCycle,
    LeaderAndIsrFault,
    Nemesis,
    NetworkNoise,
    NetworkPartition,
    PreferredElection,
    RollingRestart,
    SlowFollower,
    ZkSessionExpiry,
)

# Older Kafka defaults for the timeouts, so a minute of simulated time sees several failovers.
BASE_BROKER_CONFIG: dict[str, Any] = {
    "zookeeper.session.timeout.ms": 6000,
    "replica.lag.time.max.ms": 10000,
    "controller.socket.timeout.ms": 10000,
    "replica.socket.timeout.ms": 10000,
    "request.timeout.ms": 10000,
    "auto.leader.rebalance.enable": False,
    "offsets.topic.num.partitions": 1,
    # Offsets are kept a week; a run lasts minutes. Without the periodic expiration task the
    # event order of every recorded seed stays as it was before expiration was modelled.
    "kafka_ref.offsets.expiration.enable": False,
}

# inter.broker.protocol.version per era (None: the default, the latest).
ERAS: dict[str, str | None] = {"0.10.2": "0.10.2", "0.11": "0.11.0", "2.0": "2.0", "default": None}


def normalize_ibp(ibp: str | None) -> str | None:
    """Accept the era names of ``ERAS`` ("0.11") as well as full versions ("0.11.0")."""
    if ibp is None or ibp == "default":
        return None
    return ERAS.get(ibp, ibp)


@dataclass(frozen=True)
class Scenario:
    """A cluster shape, a workload and a fault plan; ``nemeses()`` builds fresh nemeses per run."""

    name: str
    description: str
    nemeses: Callable[[], list[Nemesis]]
    brokers: int = 3
    partitions: int = 1
    replication_factor: int = 3
    min_insync_replicas: int = 2
    unclean_prob: float = 0.0
    broker_config: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 60.0
    producers: int = 2
    produce_interval_ms: tuple[float, float] = (50.0, 250.0)
    acks_all_ratio: float = 0.8
    consume_interval_ms: tuple[float, float] = (100.0, 400.0)
    max_down: int = 1
    noise: NetworkNoise = NetworkNoise()
    commit_offsets: bool = True
    # Run the project's Producer, group Consumer and Admin too, held to the liveness invariants.
    clients: bool = False
    # Each broker's rack (broker.rack), and the rack the real consumer says it is in (client.rack).
    racks: dict[int, str] = field(default_factory=dict)
    client_rack: str = ""
    expect_violation: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        faults = ", ".join(n.describe() for n in self.nemeses())
        return (f"{self.name}: {self.brokers} brokers, {self.partitions} partition(s) RF {self.replication_factor} "
                f"min.insync.replicas {self.min_insync_replicas}, {self.duration_s:g}s; faults: {faults}")


SCENARIOS: dict[str, Scenario] = {}


def _register(scenario: Scenario) -> Scenario:
    SCENARIOS[scenario.name] = scenario
    return scenario


_register(Scenario(
    name="leader-failover",
    description="Leaders crash (some losing their last HW checkpoint) or shut down cleanly and come back; "
                "preferred-leader elections move leadership back.",
    nemeses=lambda: [
        CrashRestart(4.0, target="leader", down_s=(2.0, 15.0), hw_loss_prob=0.3),
        CleanShutdown(1.5, target="leader", down_s=(2.0, 10.0), controlled_prob=0.5),
        PreferredElection(2.0),
    ],
    partitions=2,
))

_register(Scenario(
    name="back-to-back-failures",
    description="A leader dies, then the leader elected after it dies within 0-3 s.",
    nemeses=lambda: [BackToBack(2.0, gap_ms=(0.0, 3000.0), after_ack_prob=0.5, down_s=(5.0, 20.0))],
    duration_s=90.0,
    max_down=2,
))

_register(Scenario(
    name="partition-leader-away",
    description="A leader is cut off (maybe losing its ZooKeeper session) or the brokers split; slow followers.",
    nemeses=lambda: [
        NetworkPartition(3.0, isolate_prob=0.5, expire_zk_prob=0.5, duration_s=(3.0, 20.0)),
        SlowFollower(1.0, delay_ms=(500.0, 4000.0), duration_s=(5.0, 25.0)),
    ],
    duration_s=90.0,
))

_register(Scenario(
    name="controller-failover",
    description="The controller is killed, ZooKeeper sessions expire, LeaderAndIsr requests are lost or duplicated.",
    nemeses=lambda: [
        ControllerKill(3.0, down_s=(2.0, 15.0)),
        ZkSessionExpiry(2.0),
        LeaderAndIsrFault(3.0, drop_prob=0.5),
    ],
    partitions=2,
))

_register(Scenario(
    name="rolling-restart",
    description="Every broker restarts once (clean shutdown or crash), waiting for a full ISR in between.",
    nemeses=lambda: [RollingRestart(start_after_s=(3.0, 8.0), crash_prob=0.3, down_s=(1.0, 8.0))],
    partitions=2,
    duration_s=90.0,
))

_register(Scenario(
    name="kip101",
    description="acks=all writes; a leader killed right after an ack, its successor killed within 40 ms.",
    nemeses=lambda: [BackToBack(3.0, gap_ms=(0.0, 40.0), after_ack_prob=1.0, down_s=(8.0, 20.0))],
    brokers=4,
    acks_all_ratio=1.0,
    produce_interval_ms=(20.0, 80.0),
    max_down=2,
    noise=NetworkNoise(delay_prob=0.5, max_delay_ms=30.0, duplicate_prob=0.0),
    expect_violation={"0.10.2": "acked_write_durable"},
))

_register(Scenario(
    name="kip279",
    description="Mostly acks=1 writes; a leader killed at random, its successor killed within 60 ms.",
    nemeses=lambda: [BackToBack(3.0, gap_ms=(0.0, 30.0), after_ack_prob=0.0, down_s=(8.0, 20.0),
                                second_after="first_write", slow_followers_ms=(20.0, 200.0), slow_s=8.0,
                                lag_successor_ms=(30.0, 150.0), lag_for_s=(0.3, 1.5))],
    brokers=4,
    min_insync_replicas=1,
    acks_all_ratio=0.3,
    produce_interval_ms=(10.0, 40.0),
    max_down=2,
    noise=NetworkNoise(delay_prob=0.5, max_delay_ms=30.0, duplicate_prob=0.0),
    expect_violation={"0.11": "replicas_identical"},
))

_register(Scenario(
    name="last-replica-standing",
    description="Followers cut off until the ISR is the leader alone, then the leader dies (unclean election in half the seeds).",
    nemeses=lambda: [LastReplicaStanding(start_after_s=(3.0, 10.0))],
    min_insync_replicas=1,
    unclean_prob=0.5,
    duration_s=90.0,
))

_register(Scenario(
    name="client-failover",
    description="The project's Producer, group Consumer and Admin, bootstrapped from every broker, while each "
                "partition's leader in turn is killed, kept down 15-40 s and restarted (issue 17's pattern), with "
                "preferred-leader elections moving leaders between live brokers; brokers in racks a, b, c and the "
                "consumer in rack b (read from the closest replica, KIP-392); every client call must end within "
                "its timeout, must not fail while its partition is available, and the same clients must make "
                "progress after healing.",
    nemeses=lambda: [
        LeaderKillCycle(start_after_s=(2.0, 6.0), down_s=(15.0, 40.0)),
        PreferredElection(4.0),
    ],
    partitions=3,
    producers=1,
    clients=True,
    duration_s=90.0,
    # Racks and the rack-aware replica selector: the group consumer (rack b) is sent to broker 1's
    # replicas when another broker leads (KIP-392), so follower reads are under the faults too.
    racks={0: "a", 1: "b", 2: "c"},
    client_rack="b",
    broker_config={"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"},
))


def get_scenario(name: "str | Scenario") -> Scenario:
    if isinstance(name, Scenario):
        return name
    try:
        return SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; available: {', '.join(SCENARIOS)}") from None
