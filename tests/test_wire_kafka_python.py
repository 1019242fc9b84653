"""kafka-python (unmodified, from PyPI) against the in-process cluster over the wire protocol.

The shape follows Kafka's own client integration tests (e.g. kafka.api.ProducerFailureHandlingTest's
leader-failure case and kafka.api.PlaintextConsumerTest's group tests): create a topic with the
admin API, produce with acks=all, consume in a group with commits, crash the partition leader in
the middle and check that every acknowledged record is still there, at the offset it was
acknowledged at.
"""

from __future__ import annotations

import threading
import time

import pytest

from kafka_ref.common.topic_partition import TopicPartition as OurTopicPartition
from tests.wire_support import kill_leader, on_loop, run_with_cluster, wait_for_new_leader

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"  # a real clock: sockets and client threads


PRODUCER = dict(acks="all", request_timeout_ms=5000, metadata_max_age_ms=1000,
                retry_backoff_ms=100, linger_ms=0)
CONSUMER = dict(auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=3000,
                heartbeat_interval_ms=300, request_timeout_ms=5000, metadata_max_age_ms=1000, fetch_max_wait_ms=100,
                retry_backoff_ms=100)


def _produce(producer: KafkaProducer, topic: str, values: list[bytes]) -> dict[int, bytes]:
    futures = [(v, producer.send(topic, value=v, partition=0)) for v in values]
    producer.flush()
    return {f.get(timeout=30).offset: v for v, f in futures}


def _consume_until(consumer: KafkaConsumer, count: int, deadline_s: float = 30) -> list[tuple[int, bytes]]:
    seen: list[tuple[int, bytes]] = []
    deadline = time.monotonic() + deadline_s
    while len(seen) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=200).values():
            seen.extend((r.offset, r.value) for r in records)
    return seen


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_produce_consume_commit_survive_leader_kill(mode):
    """Admin create, acks=all produce, group consume + commit; the leader dies mid-stream."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("orders", 1, 3)])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=bootstrap, **PRODUCER)
        consumer = KafkaConsumer("orders", bootstrap_servers=bootstrap, group_id="billing", **CONSUMER)
        # 1. Before the failure: offsets 0..99, consumed and committed.
        acked = _produce(producer, "orders", [b"a%03d" % i for i in range(100)])
        assert sorted(acked) == list(range(100))
        first = _consume_until(consumer, 100)
        assert first == sorted(acked.items())
        consumer.commit()
        tp = TopicPartition("orders", 0)
        assert consumer.committed(tp) == 100
        # 2. The leader crashes; a new one is elected from the ISR.
        old = kill_leader(cluster, "orders")
        new = wait_for_new_leader(cluster, "orders", old)
        assert new != old
        # 3. Producing goes on: every record is acknowledged (retries reach the new leader).
        acked2 = _produce(producer, "orders", [b"b%03d" % i for i in range(100)])
        assert len(acked2) == 100 and min(acked2) >= 100
        # 4. Consuming goes on from the committed position; every acknowledged record is at its
        #    acknowledged offset and no offset is delivered twice.
        rest = _consume_until(consumer, 100)
        offsets = [o for o, _ in rest]
        assert len(offsets) == len(set(offsets))
        got = dict(first + rest)
        for offset, value in {**acked, **acked2}.items():
            assert got.get(offset) == value
        consumer.commit()
        assert consumer.committed(tp) == max(acked2) + 1
        consumer.close()
        producer.close()
        # 5. kafka-python's default is an idempotent producer: one producer id whose sequences
        #    ran 0..199 across the failover, known to the new leader's log.
        log = on_loop(cluster.broker(new).replica_manager.get_log, OurTopicPartition("orders", 0))
        entries = list(log.producer_state_manager.producers.values())
        assert [(e.producer_epoch, e.last_seq) for e in entries] == [(0, 199)]
        return old, new

    old, new = await run_with_cluster(client, mode=mode)
    assert old != new


async def test_member_leaving_triggers_rebalance():
    """Two members share a two-partition topic; one leaves, the other takes both partitions."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("events", 2, 2)])
        admin.close()
        leave = threading.Event()
        b_assignments: list[set] = []

        def member_b() -> None:
            # Each member polls from its own thread, as applications do.
            b = KafkaConsumer("events", bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
            while not leave.is_set():
                b.poll(timeout_ms=100)
                b_assignments.append(set(b.assignment()))
            b.close()  # LeaveGroup

        thread = threading.Thread(target=member_b)
        thread.start()
        a = KafkaConsumer("events", bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (len(a.assignment()) == 1 and b_assignments
                                                    and len(b_assignments[-1]) == 1):
            a.poll(timeout_ms=100)
        shared = (set(a.assignment()), b_assignments[-1] if b_assignments else set())
        leave.set()
        thread.join()
        while time.monotonic() < deadline and len(a.assignment()) != 2:
            a.poll(timeout_ms=100)
        after = set(a.assignment())
        a.close()
        return shared, after

    (a_before, b_before), after = await run_with_cluster(client)
    assert len(a_before) == 1 and len(b_before) == 1 and a_before != b_before
    assert after == {TopicPartition("events", 0), TopicPartition("events", 1)}


async def test_static_member_restart_keeps_its_place():
    """Static membership (KIP-345) with kafka-python's ``group_instance_id``: a static consumer closes without a
    LeaveGroup and a new one with the same instance id rejoins the Stable group under a new member id, with the same
    partitions, in the same generation (no rebalance: GroupCoordinator#updateStaticMemberAndRebalance); DescribeGroups
    shows the instance id."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("events", 2, 2)])

        def assigned(consumer: KafkaConsumer) -> set:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and len(consumer.assignment()) != 2:
                consumer.poll(timeout_ms=100)
            return set(consumer.assignment())

        def generation() -> int:
            coordinator = cluster.broker(cluster.coordinator_for("sg")).group_coordinator
            return coordinator.group_manager.get_group("sg").generation_id

        first = KafkaConsumer("events", bootstrap_servers=bootstrap, group_id="sg", group_instance_id="app-a",
                              **CONSUMER)
        before = (assigned(first), admin.describe_groups(["sg"])["sg"], on_loop(generation))
        first.close()                                   # a static member does not leave
        second = KafkaConsumer("events", bootstrap_servers=bootstrap, group_id="sg", group_instance_id="app-a",
                               **CONSUMER)
        after = (assigned(second), admin.describe_groups(["sg"])["sg"], on_loop(generation))
        second.close()
        admin.close()
        return before, after

    (assigned_before, described_before, gen_before), (assigned_after, described_after, gen_after) = \
        await run_with_cluster(client)
    # (The first consumer may need a second generation if the topic's metadata arrived after its first
    #  join, as happens on a loaded machine; the restart itself must not add one.)
    assert gen_after == gen_before >= 1
    assert assigned_before == assigned_after == {TopicPartition("events", 0), TopicPartition("events", 1)}
    (member_before,), (member_after,) = described_before["members"], described_after["members"]
    assert member_before["group_instance_id"] == member_after["group_instance_id"] == "app-a"
    assert member_before["member_id"].startswith("app-a-") and member_after["member_id"].startswith("app-a-")
    assert member_before["member_id"] != member_after["member_id"]
    assert described_before["group_state"] == described_after["group_state"] == "Stable"


async def test_admin_lists_and_describes_groups_and_configs():
    """ListGroups, DescribeGroups, DescribeConfigs and DeleteTopics through kafka-python's admin client."""
    from kafka.admin import ConfigResource, ConfigResourceType

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("events", 2, 2, topic_configs={"retention.ms": "60000"})])
        consumer = KafkaConsumer("events", bootstrap_servers=bootstrap, group_id="g", client_id="app-1", **CONSUMER)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(consumer.assignment()) != 2:
            consumer.poll(timeout_ms=100)
        listed = admin.list_groups()
        described = admin.describe_groups(["g", "unknown-group"])
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "events",
                                                         ["retention.ms", "min.insync.replicas"])],
                                         config_filter="all")
        broker = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1", ["broker.id",
                                                                                      "min.insync.replicas"])],
                                        config_filter="all")
        consumer.close()
        # DeleteTopics: the topic disappears from the cluster's metadata.
        admin.delete_topics(["events"])
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "events" in admin.list_topics():
            time.sleep(0.05)
        remaining = admin.list_topics()
        admin.close()
        return listed, described, (configs, broker, remaining)

    listed, described, (configs, broker, remaining) = await run_with_cluster(client)
    # ListGroups v5 (Kafka 3.8): the group type too; every classic coordinator group is "classic".
    assert listed == [{"group_id": "g", "protocol_type": "consumer", "group_state": "Stable", "group_type": "classic"}]
    g = described["g"]
    assert (g["group_state"], g["protocol_type"], g["protocol_data"], g["error"]) == ("Stable", "consumer", "range", None)
    (member,) = g["members"]
    assert member["client_id"] == "app-1" and member["member_id"].startswith("app-1-")
    assert member["client_host"] == "/127.0.0.1"  # RequestContext#clientAddress: an InetAddress, no port
    assert sorted(p for a in member["member_assignment"]["assigned_partitions"] for p in a["partitions"]) == [0, 1]
    assert (described["unknown-group"]["group_state"], described["unknown-group"]["members"]) == ("Dead", [])
    topic = configs["topic"]["events"]
    assert (topic["retention.ms"]["value"], topic["retention.ms"]["config_source"]) == ("60000", "DYNAMIC_TOPIC_CONFIG")
    assert (topic["min.insync.replicas"]["value"], topic["min.insync.replicas"]["config_source"]) == ("1", "DEFAULT_CONFIG")
    assert (broker["broker"]["1"]["broker.id"]["value"], broker["broker"]["1"]["min.insync.replicas"]["value"]) == ("1", "1")
    assert "events" not in remaining


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_describe_cluster_over_the_wire_has_the_cluster_id(mode):
    """kafka-python's describe_cluster (Metadata v2+) gets the cluster id the brokers hold."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            return admin.describe_cluster()["cluster_id"]
        finally:
            admin.close()

    seen: dict[str, str | None] = {}

    def wrapped(cluster, bootstrap):
        seen["wire"] = client(cluster, bootstrap)
        seen["broker"] = on_loop(lambda: cluster.broker(0).cluster_id)

    await run_with_cluster(wrapped, mode=mode)
    assert seen["wire"] is not None and seen["wire"] == seen["broker"]


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_alter_and_describe_topic_configs_over_the_wire(mode):
    """kafka-python's alter_configs (IncrementalAlterConfigs: SET then DELETE) and describe_configs on a topic."""
    from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("orders", 1, 3)])
            resource = ConfigResource(ConfigResourceType.TOPIC, "orders",
                                      configs={"min.insync.replicas": (AlterConfigOp.SET, "2")})
            seen["set"] = admin.alter_configs([resource])
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and on_loop(lambda: {
                    cluster.broker(b).log_manager.fetch_log_config("orders").min_in_sync_replicas
                    for b in cluster.live_broker_ids()}) != {2}:
                time.sleep(0.05)
            described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "orders")])
            seen["described"] = described
            seen["brokers"] = on_loop(lambda: {cluster.broker(b).log_manager.fetch_log_config("orders").min_in_sync_replicas
                                               for b in cluster.live_broker_ids()})
        finally:
            admin.close()

    await run_with_cluster(client, mode=mode)
    assert seen["set"] == {"topic": {"orders": "OK"}}
    assert seen["brokers"] == {2}
    entry = seen["described"]["topic"]["orders"]["min.insync.replicas"]
    assert (entry["value"], entry["config_source"]) == ("2", "DYNAMIC_TOPIC_CONFIG")


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_create_partitions_over_the_wire(mode):
    """kafka-python's create_partitions (CreatePartitions): 1 → 3, then a producer writes to partition 2."""
    from kafka.admin import NewPartitions

    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("orders", 1, 3)])
            admin.create_partitions({"orders": NewPartitions(3)})
            try:
                admin.create_partitions({"orders": NewPartitions(2)})
            except Exception as exc:  # kafka-python raises the error code's class
                seen["shrink"] = type(exc).__name__
        finally:
            admin.close()
        producer = KafkaProducer(bootstrap_servers=bootstrap, **PRODUCER)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(producer.partitions_for("orders") or ()) < 3:
                time.sleep(0.1)
            seen["partitions"] = sorted(producer.partitions_for("orders"))
            seen["offset"] = producer.send("orders", b"v", partition=2).get(timeout=10).offset
        finally:
            producer.close()

    await run_with_cluster(client, mode=mode)
    assert seen == {"shrink": "InvalidPartitionsError", "partitions": [0, 1, 2], "offset": 0}


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_delete_groups_over_the_wire(mode):
    """kafka-python's delete_groups (DeleteGroups): an empty group with commits is deleted, its offsets gone."""
    from kafka.structs import OffsetAndMetadata

    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("orders", 1, 3)])
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
            tp = TopicPartition("orders", 0)
            consumer.assign([tp])
            consumer.commit({tp: OffsetAndMetadata(5, "", -1)})
            consumer.close()
            seen["before"] = admin.list_group_offsets({"g": [tp]})
            seen["deleted"] = admin.delete_groups(["g"])
            seen["after"] = admin.list_group_offsets({"g": [tp]})
        finally:
            admin.close()

    await run_with_cluster(client, mode=mode)
    tp = TopicPartition("orders", 0)
    assert seen["before"] == {"g": {tp: OffsetAndMetadata(5, "", -1)}}
    assert seen["deleted"] == {"g": "OK"}
    assert seen["after"] == {"g": {tp: OffsetAndMetadata(-1, "", -1)}}


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_delete_records_over_the_wire(mode):
    """kafka-python's delete_records (DeleteRecords v0-2): the low watermark comes back, a consumer
    starting from the earliest offset reads from there, and an offset past the HW is refused."""
    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        try:
            admin.create_topics([NewTopic("orders", 1, 3)])
            _produce(producer, "orders", [b"v%d" % i for i in range(6)])
            tp = TopicPartition("orders", 0)
            seen["deleted"] = admin.delete_records({tp: 4}, timeout_ms=10000)
            try:
                admin.delete_records({tp: 100}, timeout_ms=10000)
            except Exception as exc:  # noqa: BLE001 - the error class is kafka-python's
                seen["past_hw"] = type(exc).__name__
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, **CONSUMER)
            consumer.assign([tp])
            seen["beginning"] = consumer.beginning_offsets([tp])[tp]
            seen["read"] = [v for _, v in _consume_until(consumer, 2)]
            consumer.close()
        finally:
            producer.close()
            admin.close()

    await run_with_cluster(client, mode=mode)
    tp = TopicPartition("orders", 0)
    assert seen["deleted"][tp]["low_watermark"] == 4
    assert seen["past_hw"] == "OffsetOutOfRangeError"
    assert seen["beginning"] == 4
    assert seen["read"] == [b"v4", b"v5"]


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_producer_auto_creates_topic(mode):
    """kafka.api.ProducerSendTest#testAutoCreateTopic's shape over the wire: the producer asks Metadata
    for a topic nobody created, the broker creates it (auto.create.topics.enable, Kafka's default),
    the record lands at offset 0 of partition 0 and a consumer reads it back."""

    def client(cluster, bootstrap):
        producer = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=30000, **PRODUCER)
        try:
            metadata = producer.send("created-by-metadata", value=b"first").get(timeout=30)
        finally:
            producer.close()
        consumer = KafkaConsumer("created-by-metadata", bootstrap_servers=bootstrap, **CONSUMER)
        try:
            values = [value for _, value in _consume_until(consumer, 1)]
        finally:
            consumer.close()
        return metadata.partition, metadata.offset, values

    partition, offset, values = await run_with_cluster(client, mode=mode, config={"default.replication.factor": 3})
    assert (partition, offset, values) == (0, 0, [b"first"])


async def test_log_append_time_topic():
    """message.timestamp.type=LogAppendTime over the wire (BaseProducerSendTest#sendAndVerifyTimestamp's
    shape): kafka-python's RecordMetadata takes the broker's append time from the produce response,
    and its consumer reads the batch's LogAppendTime bit (timestamp_type 1) and that time."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("stamped", 1, 2, topic_configs={"message.timestamp.type": "LogAppendTime"})])
        admin.close()
        start = int(time.time() * 1000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, **PRODUCER)
        try:
            metadata = producer.send("stamped", value=b"v", partition=0, timestamp_ms=123456).get(timeout=30)
        finally:
            producer.close()
        consumer = KafkaConsumer("stamped", bootstrap_servers=bootstrap, **CONSUMER)
        try:
            deadline = time.monotonic() + 30
            records = []
            while not records and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=200).values():
                    records.extend(batch)
        finally:
            consumer.close()
        return start, metadata.timestamp, [(r.offset, r.timestamp, r.timestamp_type) for r in records]

    start, stamped, records = await run_with_cluster(client, mode="kraft")
    assert stamped >= start
    assert records == [(0, stamped, 1)]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_compressed_batches_round_trip(codec):
    """A kafka-python producer compressing with each of Kafka's codecs: the broker validates and stores
    the batch as sent (compression.type=producer), followers copy it, a consumer reads the values."""

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        admin.create_topics([NewTopic("zipped", 1, 2)])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, **PRODUCER)
        try:
            offsets = _produce(producer, "zipped", [f"value-{i}".encode() * 20 for i in range(20)])
        finally:
            producer.close()
        consumer = KafkaConsumer("zipped", bootstrap_servers=bootstrap, **CONSUMER)
        try:
            seen = _consume_until(consumer, 20)
        finally:
            consumer.close()
        codecs = {b.compression_type for b in on_loop(
            lambda: list(cluster.broker(cluster.leader_for("zipped", 0)).replica_manager.get_partition(
                OurTopicPartition("zipped", 0)).log.local_log.batches))}
        return offsets, seen, codecs

    offsets, seen, codecs = await run_with_cluster(client, mode="kraft")
    assert sorted(offsets) == list(range(20))
    assert [v for _, v in sorted(seen)] == [f"value-{i}".encode() * 20 for i in range(20)]
    assert {str(c) for c in codecs} == {codec}
