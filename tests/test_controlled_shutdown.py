"""Controlled shutdown (seed 001 §5.4.5; KafkaServer#controlledShutdown and
KafkaController#doControlledShutdown), mirroring kafka.server.ServerShutdownTest and
kafka.controller.ControllerIntegrationTest#testControlledShutdown."""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.controlled_shutdown import ControlledShutdownRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

pytestmark = pytest.mark.anyio

RETRIABLE = {Errors.NOT_LEADER_OR_FOLLOWER.code, Errors.NOT_ENOUGH_REPLICAS.code,
             Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code, Errors.REQUEST_TIMED_OUT.code,
             Errors.LEADER_NOT_AVAILABLE.code}


class PartitionProducer:
    """acks=all raw ProduceRequests to the partition's current leader (from ZooKeeper), retrying."""

    def __init__(self, cluster: Cluster, tp: TopicPartition) -> None:
        self.cluster, self.tp = cluster, tp
        self.acked: list[tuple[int, bytes]] = []
        self.errors: list[int] = []
        self.disconnects = 0
        self.stopped = False

    async def run(self) -> None:
        n = 0
        while not self.stopped:
            value = f"{self.tp.partition}-{n}".encode()
            n += 1
            while not self.stopped:
                request = ProduceRequest.build(acks=-1, timeout_ms=30000,
                                               records={self.tp: MemoryRecords.with_records([SimpleRecord(None, value)])})
                try:
                    response = await self.cluster.network.send(
                        "producer", self.cluster.leader_for(self.tp.topic, self.tp.partition), request, 31000,
                        principal="User:ANONYMOUS")
                except (DisconnectException, NetworkTimeoutException):
                    self.disconnects += 1
                    await anyio.sleep(0.01)
                    continue
                r = response.responses[0].partition_responses[0]
                if r.error_code == 0:
                    self.acked.append((r.base_offset, value))
                    break
                self.errors.append(r.error_code)
                await anyio.sleep(0.01)
            await anyio.sleep(0.005)


class LeaderMonitor:
    """Every 2 ms of loop time: every partition has a leader in ZooKeeper and in every live broker's cache."""

    def __init__(self, cluster: Cluster, topic: str, partitions: int) -> None:
        self.cluster, self.topic, self.partitions = cluster, topic, partitions
        self.samples = 0
        self.leaderless: list[tuple[float, str]] = []
        self.stopped = False

    async def run(self) -> None:
        while not self.stopped:
            self.samples += 1
            for p in range(self.partitions):
                if self.cluster.leader_for(self.topic, p) < 0:
                    self.leaderless.append((anyio.current_time(), f"zk {self.topic}-{p}"))
                for b in self.cluster.live_broker_ids():
                    info = self.cluster.broker(b).metadata_cache.get_partition_info(TopicPartition(self.topic, p))
                    if info is None or info.leader < 0:
                        self.leaderless.append((anyio.current_time(), f"broker {b} cache {self.topic}-{p}"))
            await anyio.sleep(0.002)


def assignment_for(victim: int, brokers: list[int]) -> dict[int, list[int]]:
    """Six partitions, RF 3, each broker preferred leader of two: the victim leads a third."""
    out = {}
    for p in range(6):
        first = brokers[p % 3]
        out[p] = [first] + [b for b in brokers if b != first]
    return out


async def test_controlled_shutdown_moves_leadership_without_leaderless_moments():
    """The broker leading a third of the partitions shuts down cleanly: the controller elects a
    new leader from the rest of the ISR for each (leader epoch + 1, the broker leaves the ISR),
    stops its follower replicas, and answers with nothing left; at no sampled moment is a
    partition without a leader, and acks=all producers see only retriable errors and lose
    nothing (ControllerIntegrationTest#testControlledShutdown)."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"min.insync.replicas": 2}, seed=41) as cluster:
        controller_id = cluster.controller_id()
        victim = next(b for b in range(3) if b != controller_id)
        await cluster.create_topic("t", replica_assignment=assignment_for(victim, [0, 1, 2]))
        tps = [TopicPartition("t", p) for p in range(6)]
        led = [tp for tp in tps if cluster.leader_for("t", tp.partition) == victim]
        assert len(led) == 2
        epochs_before = {tp: cluster.partition_state("t", tp.partition)["leader_epoch"] for tp in tps}
        producers = [PartitionProducer(cluster, tp) for tp in tps]
        monitor = LeaderMonitor(cluster, "t", 6)
        ctx = cluster.active_controller().controller_context
        async with anyio.create_task_group() as tg:
            for producer in producers:
                tg.start_soon(producer.run)
            tg.start_soon(monitor.run)
            await cluster.wait_until(lambda: all(len(p.acked) >= 10 for p in producers))
            assert (await cluster.shutdown_broker(victim)).succeeded is True
            await cluster.wait_until(lambda: victim not in ctx.live_or_shutting_down_broker_ids)
            counts = [len(p.acked) for p in producers]
            await cluster.wait_until(lambda: all(len(p.acked) >= c + 10 for p, c in zip(producers, counts)))
            for producer in producers:
                producer.stopped = True
            monitor.stopped = True

        assert monitor.samples > 100 and monitor.leaderless == []
        assert victim not in ctx.shutting_down_broker_ids  # forgotten once its registration went away
        for tp in tps:
            state = cluster.partition_state("t", tp.partition)
            assert state["leader"] != victim and victim not in state["isr"]
            if tp in led:
                assert state["leader_epoch"] == epochs_before[tp] + 1  # one controlled-shutdown election
                assert state["leader"] == [b for b in assignment_for(victim, [0, 1, 2])[tp.partition] if b != victim][0]
        for producer in producers:
            assert set(producer.errors) <= RETRIABLE
            leader = cluster.leader_for("t", producer.tp.partition)
            log = cluster.broker(leader).replica_manager.online_partition(producer.tp).log
            values = {r.offset: r.value for r in log.read(log.log_start_offset, 1 << 30).records.records()}
            assert all(values[offset] == value for offset, value in producer.acked)


async def test_controlled_shutdown_answer_lists_partitions_that_cannot_move_and_broker_retries():
    """A partition whose ISR is only the shutting-down broker cannot move: the controller
    answers NONE with it as remaining; the broker retries controlled.shutdown.max.retries times,
    controlled.shutdown.retry.backoff.ms apart in loop time, then stops anyway
    (KafkaServer#controlledShutdown's retry loop)."""
    config = {"replica.lag.time.max.ms": 1000, "controlled.shutdown.max.retries": 3,
              "controlled.shutdown.retry.backoff.ms": 2000}
    async with Cluster(brokers=3, metadata_mode="zk", config=config, seed=42) as cluster:
        controller_id = cluster.controller_id()
        victim, other = [b for b in range(3) if b != controller_id]
        await cluster.create_topic("t", replica_assignment={0: [victim, other]})
        cluster.network.cut_link(other, victim)  # the follower stops fetching and leaves the ISR
        tp = TopicPartition("t", 0)
        request = ProduceRequest.build(acks=1, timeout_ms=1000, records={tp: MemoryRecords.with_records([SimpleRecord(None, b"x")])})
        await cluster.network.send("client", victim, request, 2000, principal="User:ANONYMOUS")
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [victim], timeout_ms=30000)
        # One request by hand: the answer names the partition still led by the victim.
        broker = cluster.broker(victim)
        response = await cluster.network.send(victim, controller_id, ControlledShutdownRequest(
            broker_id=victim, broker_epoch=broker.broker_epoch), 30000)
        assert response.error_code == Errors.NONE.code and response.remaining_topic_partitions() == {tp}
        assert victim in cluster.active_controller().controller_context.shutting_down_broker_ids
        # The broker's own loop: three attempts, two back-offs of 2 s, then it gives up.
        start = anyio.current_time()
        assert await broker.controlled_shutdown() is False
        assert anyio.current_time() - start == pytest.approx(4.0, abs=0.05)
        # A stale broker epoch is refused.
        stale = await cluster.network.send(victim, controller_id, ControlledShutdownRequest(
            broker_id=victim, broker_epoch=broker.broker_epoch - 1), 30000)
        assert stale.error_code == Errors.STALE_BROKER_EPOCH.code


async def test_controlled_shutdown_disabled_skips_the_request():
    """controlled.shutdown.enable=false: the broker sends no ControlledShutdownRequest; its
    partitions move only when the controller sees it gone (ServerShutdownTest#testCleanShutdownWithZkUnavailable's
    opposite: the plain clean path)."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"controlled.shutdown.enable": False}, seed=43) as cluster:
        controller_id = cluster.controller_id()
        victim = next(b for b in range(3) if b != controller_id)
        await cluster.create_topic("t", replica_assignment={0: [victim, controller_id]})
        sent = []
        cluster.network.observers.append(lambda env: sent.append(type(env.request).__name__))
        assert (await cluster.shutdown_broker(victim)).succeeded is False
        assert "ControlledShutdownRequest" not in sent
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == controller_id)
        assert "ControlledShutdown" not in cluster.active_controller().event_manager.processed


@pytest.mark.kafka_ref_schedules(20)
async def test_controlled_shutdown_of_the_controller_broker():
    """The controller's own broker shuts down cleanly: it moves its leaderships away first, then
    resigns; another broker becomes controller and no partition is ever without a leader."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"min.insync.replicas": 2}, seed=44) as cluster:
        controller_id = cluster.controller_id()
        await cluster.create_topic("t", replica_assignment=assignment_for(controller_id, [0, 1, 2]))
        monitor = LeaderMonitor(cluster, "t", 6)
        async with anyio.create_task_group() as tg:
            tg.start_soon(monitor.run)
            await anyio.sleep(0.05)
            assert (await cluster.shutdown_broker(controller_id)).succeeded is True
            await cluster.wait_until(lambda: cluster.controller_id() not in (None, controller_id), timeout_ms=30000)
            await anyio.sleep(0.5)
            monitor.stopped = True
        assert monitor.samples > 100 and monitor.leaderless == []
        assert all(cluster.leader_for("t", p) != controller_id for p in range(6))


def test_demo_controlled_shutdown():
    """``kafka-ref demo controlled-shutdown``: request, leadership moved, followers out of the
    ISR, empty answer, clean stop; afterwards the broker leads nothing."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("controlled-shutdown", out=lines.append) == 0
    order = ["controlled_shutdown_starting", "controlled_shutdown_started", "controlled_shutdown_partitions",
             "to_state=OnlinePartition", "partition_isr_shrunk_for_offline_replica", "controlled_shutdown_answered",
             "controlled_shutdown_succeeded", "broker_shutting_down", "controlled shutdown confirmed: True",
             "== 2. after the clean stop: p0: leader=0 epoch=1 isr=[0, 2]; p1: leader=0 epoch=1 isr=[0, 2]; "
             "p2: leader=2 epoch=1 isr=[2, 0]"]
    position = 0
    for needle in order:
        position = next(i for i, line in enumerate(lines) if i >= position and needle in line)
