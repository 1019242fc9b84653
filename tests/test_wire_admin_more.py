"""kafka-python's admin calls for OffsetDelete, DescribeLogDirs and AlterConfigs, over the wire.

The same set-up as tests/test_wire_kafka_python.py: the in-process cluster listens on
127.0.0.1 and an unmodified kafka-python client runs in a thread against it.
"""

from __future__ import annotations

import time

import pytest

from tests.wire_support import run_with_cluster

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"  # a real clock: sockets and client threads


CONSUMER = dict(auto_offset_reset="earliest", enable_auto_commit=False, session_timeout_ms=3000,
                heartbeat_interval_ms=300, request_timeout_ms=5000, metadata_max_age_ms=1000, fetch_max_wait_ms=100,
                retry_backoff_ms=100)


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_delete_group_offsets_over_the_wire(mode):
    """kafka-python's delete_group_offsets (OffsetDelete v0): refused for a subscribed topic, then done once the member left."""
    seen: dict[str, object] = {}
    tp0, tp1 = TopicPartition("orders", 0), TopicPartition("orders", 1)

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("orders", 2, 3)])
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g", **CONSUMER)
            consumer.subscribe(["orders"])
            deadline = time.monotonic() + 30
            while not consumer.assignment() and time.monotonic() < deadline:
                consumer.poll(timeout_ms=200)
            consumer.commit({tp0: OffsetAndMetadata(5, "", -1), tp1: OffsetAndMetadata(6, "", -1)})
            seen["subscribed"] = admin.delete_group_offsets("g", [tp0])
            consumer.close()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # until the coordinator has seen the LeaveGroup
                seen["deleted"] = admin.delete_group_offsets("g", [tp0, TopicPartition("orders", 7)])
                if seen["deleted"][tp0].__name__ != "GroupSubscribedToTopicError":
                    break
                time.sleep(0.1)
            seen["after"] = admin.list_group_offsets({"g": [tp0, tp1]})
            try:
                admin.delete_group_offsets("nope", [tp0])
            except Exception as exc:  # noqa: BLE001 - the error class is what is checked
                seen["unknown"] = type(exc).__name__
        finally:
            admin.close()

    await run_with_cluster(client, mode=mode)
    assert {tp: e.__name__ for tp, e in seen["subscribed"].items()} == {tp0: "GroupSubscribedToTopicError"}
    assert {tp: e.__name__ for tp, e in seen["deleted"].items()} == {
        tp0: "NoError", TopicPartition("orders", 7): "UnknownTopicOrPartitionError"}
    assert seen["after"] == {"g": {tp0: OffsetAndMetadata(-1, "", -1), tp1: OffsetAndMetadata(6, "", -1)}}
    assert seen["unknown"] == "GroupIdNotFoundError"


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_describe_log_dirs_over_the_wire(mode):
    """kafka-python's describe_log_dirs (DescribeLogDirs v4): each broker's directory, its partitions' sizes and lags."""
    from kafka import KafkaProducer

    from kafka_ref.common.topic_partition import TopicPartition as OurTopicPartition
    from tests.wire_support import on_loop

    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=5000, linger_ms=0)
        try:
            admin.create_topics([NewTopic("orders", 2, 3)])
            for i in range(5):
                producer.send("orders", value=b"v%d" % i, partition=0)
            producer.flush()
            leader = on_loop(cluster.leader_for, "orders", 0)
            seen["size"] = on_loop(lambda: cluster.broker(leader).log_manager.get_log(OurTopicPartition("orders", 0)).size)
            seen["leader"] = leader
            seen["all"] = admin.describe_log_dirs(brokers=[leader])
            seen["filtered"] = admin.describe_log_dirs({"orders": [1]}, brokers=[leader])
        finally:
            producer.close()
            admin.close()

    await run_with_cluster(client, mode=mode)
    leader = seen["leader"]
    [answer] = seen["all"]
    assert answer["broker"] == leader
    [log_dir] = answer["log_dirs"]
    assert (log_dir["error_code"], log_dir["log_dir"], log_dir["total_bytes"], log_dir["usable_bytes"]) == (
        0, f"/kafka-logs-{leader}", -1, -1)
    orders = {p["partition_index"]: p for t in log_dir["topics"] if t["name"] == "orders" for p in t["partitions"]}
    assert orders[0] == {"partition_index": 0, "partition_size": seen["size"], "offset_lag": 0, "is_future_key": False}
    assert seen["size"] > 0 and orders[1]["partition_size"] == 0
    [filtered] = seen["filtered"][0]["log_dirs"]
    assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in filtered["topics"]
            if t["name"] == "orders"] == [("orders", [1])]


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_alter_configs_legacy_over_the_wire(mode):
    """kafka-python's alter_configs / reset_configs with incremental=False (AlterConfigs v2): a reset leaves the key out,
    which the broker reads as "back to the default"; an invalid value is InvalidConfigurationError."""
    from kafka.admin import ConfigResource

    from tests.wire_support import on_loop

    seen: dict[str, object] = {}

    def overrides(cluster):
        def read():
            return [{k: str(v) for k, v in c.overrides.items()} if (c := cluster.broker(b).log_manager.topic_configs.get("orders"))
                    else {} for b in cluster.live_broker_ids()]
        return on_loop(read)

    def wait_for(cluster, expected):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and overrides(cluster) != [expected] * 3:
            time.sleep(0.05)
        return overrides(cluster)

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("orders", 1, 3)])
            seen["set"] = admin.alter_configs(
                [ConfigResource("TOPIC", "orders", {"retention.ms": "5000", "cleanup.policy": "compact"})],
                incremental=False, raise_on_unknown=False)
            seen["after_set"] = wait_for(cluster, {"retention.ms": "5000", "cleanup.policy": "compact"})
            seen["reset"] = admin.reset_configs([ConfigResource("TOPIC", "orders", ["retention.ms"])],
                                                incremental=False, raise_on_unknown=False)
            seen["after_reset"] = wait_for(cluster, {"cleanup.policy": "compact"})
            seen["invalid"] = admin.alter_configs([ConfigResource("TOPIC", "orders", {"min.insync.replicas": "0"})],
                                                  incremental=False, raise_on_unknown=False)
            seen["after_invalid"] = overrides(cluster)
        finally:
            admin.close()

    await run_with_cluster(client, mode=mode)
    assert seen["set"] == {"topic": {"orders": "OK"}} and seen["reset"] == {"topic": {"orders": "OK"}}
    assert seen["after_set"] == [{"retention.ms": "5000", "cleanup.policy": "compact"}] * 3
    assert seen["after_reset"] == [{"cleanup.policy": "compact"}] * 3
    assert seen["invalid"]["topic"]["orders"].startswith("[Error 40] InvalidConfigurationError")
    assert seen["after_invalid"] == [{"cleanup.policy": "compact"}] * 3
