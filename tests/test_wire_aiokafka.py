"""aiokafka (unmodified, from PyPI) against the in-process cluster over the wire protocol.

aiokafka runs on asyncio, so it shares the cluster's event loop (a real, wall-clock loop).
Same scenarios as tests/test_wire_kafka_python.py (after Kafka's ProducerFailureHandlingTest and
PlaintextConsumerTest).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.cluster import Cluster
from tests.wire_support import CLUSTER_CONFIG

aiokafka = pytest.importorskip("aiokafka")
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


PRODUCER = dict(acks="all", enable_idempotence=True, request_timeout_ms=5000, metadata_max_age_ms=1000, retry_backoff_ms=100)
CONSUMER = dict(auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=3000,
                heartbeat_interval_ms=300, request_timeout_ms=5000, metadata_max_age_ms=1000,
                fetch_max_wait_ms=100, retry_backoff_ms=100)


async def _create_topic(bootstrap: str, name: str, partitions: int, rf: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    await admin.start()
    try:
        response = await admin.create_topics([NewTopic(name, partitions, rf)])
        assert [(t[0], t[1]) for t in response.topic_errors] == [(name, 0)]
    finally:
        await admin.close()


async def _consume(consumer: AIOKafkaConsumer, count: int) -> list[tuple[int, bytes]]:
    seen: list[tuple[int, bytes]] = []
    with anyio.fail_after(30):
        while len(seen) < count:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                seen.extend((r.offset, r.value) for r in records)
    return seen


async def test_produce_consume_commit_survive_leader_kill():
    async with Cluster(brokers=3, metadata_mode="kraft", clock="wall", config=CLUSTER_CONFIG) as cluster, \
            cluster.serve() as bootstrap:
        await _create_topic(bootstrap, "orders", 1, 3)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **PRODUCER)
        consumer = AIOKafkaConsumer("orders", bootstrap_servers=bootstrap, group_id="billing", **CONSUMER)
        await producer.start()
        await consumer.start()
        try:
            tp = TopicPartition("orders", 0)
            # 1. Before the failure.
            acked = {}
            for i in range(100):
                md = await producer.send_and_wait("orders", b"a%03d" % i, partition=0)
                acked[md.offset] = b"a%03d" % i
            assert sorted(acked) == list(range(100))
            first = await _consume(consumer, 100)
            assert first == sorted(acked.items())
            await consumer.commit()
            assert await consumer.committed(tp) == 100
            # 2. Crash the leader; wait for the controller to elect another.
            old = cluster.leader_for("orders", 0)
            cluster.kill_broker(old)
            await cluster.wait_until(lambda: cluster.leader_for("orders", 0) not in (-1, old))
            # 3. Keep producing (pipelined this time): all acknowledged.
            futures = [(b"b%03d" % i, await producer.send("orders", b"b%03d" % i, partition=0)) for i in range(100)]
            acked2 = {}
            for value, future in futures:
                acked2[(await future).offset] = value
            assert len(acked2) == 100 and min(acked2) >= 100
            # 4. Keep consuming: every acknowledged record at its offset, none delivered twice.
            rest = await _consume(consumer, 100)
            offsets = [o for o, _ in rest]
            assert len(offsets) == len(set(offsets))
            got = dict(first + rest)
            assert all(got.get(o) == v for o, v in {**acked, **acked2}.items())
            await consumer.commit()
            assert await consumer.committed(tp) == max(acked2) + 1
        finally:
            await consumer.stop()
            await producer.stop()


async def test_member_leaving_triggers_rebalance():
    async with Cluster(brokers=3, metadata_mode="kraft", clock="wall", config=CLUSTER_CONFIG) as cluster, \
            cluster.serve() as bootstrap:
        await _create_topic(bootstrap, "events", 2, 2)
        a = AIOKafkaConsumer("events", bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
        b = AIOKafkaConsumer("events", bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
        await a.start()
        await b.start()
        try:
            with anyio.fail_after(30):
                while not (len(a.assignment()) == 1 and len(b.assignment()) == 1):
                    await a.getmany(timeout_ms=100)
                    await b.getmany(timeout_ms=100)
            assert a.assignment() | b.assignment() == {TopicPartition("events", 0), TopicPartition("events", 1)}
            await b.stop()  # LeaveGroup
            with anyio.fail_after(30):
                while len(a.assignment()) != 2:
                    await a.getmany(timeout_ms=100)
            assert a.assignment() == {TopicPartition("events", 0), TopicPartition("events", 1)}
        finally:
            await a.stop()


async def test_idempotent_producer_rides_through_isolation_controlled_shutdown_and_preferred_election():
    """Faults through the same Cluster methods while a real client keeps producing.

    The leader is isolated (its requests go unanswered until the controller fences it and
    elects another), then healed; the next leader is shut down with controlled shutdown and
    restarted; a preferred election moves leadership back. Every acknowledged record is in the
    log at its offset, and the idempotent producer's retries left no duplicate in the log.
    """
    async with Cluster(brokers=3, metadata_mode="kraft", clock="wall", config=CLUSTER_CONFIG) as cluster, \
            cluster.serve() as bootstrap:
        await _create_topic(bootstrap, "orders", 1, 3)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **{**PRODUCER, "request_timeout_ms": 3000})
        await producer.start()
        acked: dict[int, bytes] = {}

        async def produce(tag: str) -> None:
            futures = [(b"%s%02d" % (tag.encode(), i), await producer.send("orders", b"%s%02d" % (tag.encode(), i),
                                                                              partition=0)) for i in range(30)]
            with anyio.fail_after(30):
                for value, future in futures:
                    acked[(await future).offset] = value

        def leader() -> int:
            return cluster.leader_for("orders", 0)

        try:
            await produce("a")
            # 1. Isolate the leader: a new leader is elected; the producer follows it.
            first = leader()
            cluster.network.isolate(first)
            await cluster.wait_until(lambda: leader() not in (-1, first), timeout_ms=15000)
            await produce("b")
            cluster.network.heal_all()
            await cluster.wait_until(lambda: first in cluster.partition_state("orders", 0)["isr"], timeout_ms=15000)
            # 2. Controlled shutdown of the current leader, produce, restart it.
            second = leader()
            assert (await cluster.shutdown_broker(second)).succeeded is True
            assert leader() not in (-1, second)
            await produce("c")
            await cluster.restart_broker(second)
            await cluster.wait_until(lambda: len(cluster.partition_state("orders", 0)["isr"]) == 3, timeout_ms=15000)
            # 3. Preferred election: leadership back on the first replica of the assignment.
            await cluster.elect_preferred_leaders()
            await produce("d")
        finally:
            await producer.stop()
        assert len(acked) == 120
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False,
                                    fetch_max_wait_ms=100)
        await consumer.start()
        try:
            tp = TopicPartition("orders", 0)
            consumer.assign([tp])
            end = (await consumer.end_offsets([tp]))[tp]
            log = await _consume(consumer, end)
        finally:
            await consumer.stop()
        values = [v for _, v in log]
        assert len(values) == len(set(values)) == 120  # no duplicates: idempotence held across the faults
        assert all(dict(log)[o] == v for o, v in acked.items())
