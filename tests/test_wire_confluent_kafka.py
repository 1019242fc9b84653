"""confluent-kafka (librdkafka, unmodified, from PyPI) against the in-process cluster over the wire.

librdkafka is a third, independent implementation of the client protocol (C, with its own
version negotiation). Same scenarios as tests/test_wire_kafka_python.py (after Kafka's
ProducerFailureHandlingTest and PlaintextConsumerTest). Clients run in a worker thread.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.wire_support import kill_leader, run_with_cluster, wait_for_new_leader

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _producer(bootstrap: str) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "retry.backoff.ms": 100,
                     "topic.metadata.refresh.interval.ms": 1000, "message.timeout.ms": 30000, "linger.ms": 0})


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "session.timeout.ms": 3000, "heartbeat.interval.ms": 300,
                     "topic.metadata.refresh.interval.ms": 1000, "fetch.wait.max.ms": 100})


def _create_topic(bootstrap: str, name: str, partitions: int, rf: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, rf)]).values():
        assert future.result(timeout=15) is None


def _produce(producer: Producer, topic: str, values: list[bytes]) -> dict[int, bytes]:
    acked: dict[int, bytes] = {}
    errors: list = []

    def on_delivery(err, msg) -> None:
        if err is not None:
            errors.append(err)
        else:
            acked[msg.offset()] = msg.value()

    for value in values:
        producer.produce(topic, value=value, partition=0, on_delivery=on_delivery)
    assert producer.flush(30) == 0
    assert errors == []
    return acked


def _consume(consumer: Consumer, count: int) -> list[tuple[int, bytes]]:
    seen: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + 30
    while len(seen) < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            seen.append((message.offset(), message.value()))
    return seen


async def test_produce_consume_commit_survive_leader_kill():
    def client(cluster, bootstrap):
        _create_topic(bootstrap, "orders", 1, 3)
        producer = _producer(bootstrap)
        consumer = _consumer(bootstrap, "billing")
        consumer.subscribe(["orders"])
        # 1. Before the failure.
        acked = _produce(producer, "orders", [b"a%03d" % i for i in range(100)])
        assert sorted(acked) == list(range(100))
        first = _consume(consumer, 100)
        assert first == sorted(acked.items())
        consumer.commit(asynchronous=False)
        assert [tp.offset for tp in consumer.committed([TopicPartition("orders", 0)], timeout=10)] == [100]
        # 2. Crash the leader.
        old = kill_leader(cluster, "orders")
        wait_for_new_leader(cluster, "orders", old)
        # 3. Keep producing: all acknowledged.
        acked2 = _produce(producer, "orders", [b"b%03d" % i for i in range(100)])
        assert len(acked2) == 100 and min(acked2) >= 100
        # 4. Keep consuming: every acknowledged record at its offset, none delivered twice.
        rest = _consume(consumer, 100)
        offsets = [o for o, _ in rest]
        assert len(offsets) == len(set(offsets))
        got = dict(first + rest)
        assert all(got.get(o) == v for o, v in {**acked, **acked2}.items())
        consumer.commit(asynchronous=False)
        assert [tp.offset for tp in consumer.committed([TopicPartition("orders", 0)], timeout=10)] == [max(acked2) + 1]
        consumer.close()

    await run_with_cluster(client)


async def test_member_leaving_triggers_rebalance():
    def client(cluster, bootstrap):
        _create_topic(bootstrap, "events", 2, 2)
        leave = threading.Event()
        b_assignment: list[list] = [[]]

        def member_b() -> None:
            b = _consumer(bootstrap, "g")
            b.subscribe(["events"])
            while not leave.is_set():
                b.poll(0.1)
                b_assignment[0] = b.assignment()
            b.close()  # LeaveGroup

        thread = threading.Thread(target=member_b)
        thread.start()
        a = _consumer(bootstrap, "g")
        a.subscribe(["events"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (len(a.assignment()) == 1 and len(b_assignment[0]) == 1):
            a.poll(0.1)
        shared = ({tp.partition for tp in a.assignment()}, {tp.partition for tp in b_assignment[0]})
        leave.set()
        thread.join()
        while time.monotonic() < deadline and len(a.assignment()) != 2:
            a.poll(0.1)
        after = {tp.partition for tp in a.assignment()}
        a.close()
        return shared, after

    (a_before, b_before), after = await run_with_cluster(client)
    assert len(a_before) == 1 and len(b_before) == 1 and a_before | b_before == {0, 1}
    assert after == {0, 1}


async def test_admin_groups_configs_and_delete_topics():
    """librdkafka's admin API: ListGroups, DescribeGroups, DescribeConfigs, DeleteTopics (v4: topic names)."""
    from confluent_kafka import ConsumerGroupState
    from confluent_kafka.admin import ConfigResource

    def client(cluster, bootstrap):
        _create_topic(bootstrap, "events", 2, 2)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        consumer = _consumer(bootstrap, "g")
        consumer.subscribe(["events"])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(consumer.assignment()) != 2:
            consumer.poll(0.1)
        listed = [(g.group_id, g.state) for g in admin.list_consumer_groups().result(10).valid]
        group = admin.describe_consumer_groups(["g"])["g"].result(10)
        described = (group.state, group.partition_assignor, [m.client_id for m in group.members])
        (configs,) = admin.describe_configs([ConfigResource("topic", "events")]).values()
        retention = configs.result(10)["retention.ms"]
        consumer.close()
        for future in admin.delete_topics(["events"], operation_timeout=10).values():
            assert future.result(15) is None
        remaining = set(admin.list_topics(timeout=10).topics)
        return listed, described, (retention.value, retention.is_default), remaining

    listed, described, retention, remaining = await run_with_cluster(client)
    assert listed == [("g", ConsumerGroupState.STABLE)]
    assert described == (ConsumerGroupState.STABLE, "range", ["rdkafka"])
    assert retention == ("604800000", True)
    assert "events" not in remaining


async def test_static_member_restart_keeps_its_partitions_without_a_rebalance():
    """Static membership (KIP-345, ``group.instance.id``) end to end with librdkafka: a static member closes (no
    LeaveGroup, as a static member does) and a new consumer with the same instance id takes its partition back under
    a new member id, while the other member sees no rebalance (GroupCoordinator#updateStaticMemberAndRebalance)."""
    def client(cluster, bootstrap):
        _create_topic(bootstrap, "static", 2, 2)
        events: dict[str, list] = {"a": [], "b": [], "b2": []}

        def consumer(name: str, instance_id: str) -> Consumer:
            c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sg", "group.instance.id": instance_id,
                          "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000,
                          "heartbeat.interval.ms": 300, "topic.metadata.refresh.interval.ms": 1000})
            c.subscribe(["static"],
                        on_assign=lambda _c, ps: events[name].append(("assign", sorted(p.partition for p in ps))),
                        on_revoke=lambda _c, ps: events[name].append(("revoke", sorted(p.partition for p in ps))))
            return c

        def poll_until(condition, *consumers) -> None:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not condition():
                for c in consumers:
                    c.poll(0.05)
            assert condition()

        a, b = consumer("a", "instance-a"), consumer("b", "instance-b")
        poll_until(lambda: len(a.assignment()) == 1 and len(b.assignment()) == 1, a, b)
        a_before, b_partitions = list(events["a"]), sorted(tp.partition for tp in b.assignment())
        b.close()
        b2 = consumer("b2", "instance-b")
        poll_until(lambda: len(b2.assignment()) == 1, a, b2)
        end = time.monotonic() + 2
        while time.monotonic() < end:
            a.poll(0.05)
            b2.poll(0.05)
        result = (a_before, list(events["a"]), b_partitions, sorted(tp.partition for tp in b2.assignment()),
                  sorted(tp.partition for tp in a.assignment()))
        a.close()
        b2.close()
        return result

    a_before, a_after, b_partitions, b2_partitions, a_partitions = await run_with_cluster(client)
    assert a_after == a_before                       # the other member saw no rebalance
    assert b2_partitions == b_partitions and sorted(a_partitions + b2_partitions) == [0, 1]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_compressed_batches_round_trip(codec):
    """librdkafka producing with each of Kafka's codecs (its own snappy, LZ4-frame and zstd writers):
    the broker validates the batches, a librdkafka consumer reads every value back."""

    def client(cluster, bootstrap):
        _create_topic(bootstrap, "zipped", 1, 2)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "compression.type": codec,
                             "message.timeout.ms": 30000, "linger.ms": 5})
        values = [f"value-{i}".encode() * 20 for i in range(20)]
        acked = _produce(producer, "zipped", values)
        consumer = _consumer(bootstrap, "zipped-readers")
        consumer.subscribe(["zipped"])
        try:
            seen = _consume(consumer, 20)
        finally:
            consumer.close()
        return values, acked, seen

    values, acked, seen = await run_with_cluster(client, mode="zk")
    assert sorted(acked) == list(range(20))
    assert [v for _, v in sorted(seen)] == values
