"""KIP-392 over the wire: kafka-python's consumer with ``client_rack`` reads from its rack's follower.

The leader (rack a) answers kafka-python's Fetch (v11+, carrying the rack) with a preferred read
replica in the consumer's rack; kafka-python then fetches from that follower, which serves it
(ReplicaManagerTest#testPreferredReplicaAsFollower's behaviour, seen from a real client).
"""

from __future__ import annotations

import pytest

from kafka_ref.common.requests.fetch import FetchRequest
from tests.wire_support import on_loop, run_with_cluster

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_kafka_python_consumer_fetches_from_its_rack(mode):
    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        fetches: list[int] = []
        on_loop(cluster.network.observers.append, lambda e: fetches.append(e.dst) if isinstance(e.request, FetchRequest)
                and e.request.requesting_replica_id() == -1 else None)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        try:
            admin.create_topics([NewTopic("orders", replica_assignments={0: [0, 1, 2]})])
            for i in range(6):
                producer.send("orders", b"v%d" % i, partition=0).get(timeout=10)
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_rack="b", auto_offset_reset="earliest",
                                     enable_auto_commit=False, fetch_max_wait_ms=100)
            tp = TopicPartition("orders", 0)
            consumer.assign([tp])
            values: list[bytes] = []
            import time
            deadline = time.monotonic() + 30
            while len(values) < 6 and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    values.extend(r.value for r in records)
            # More records after the switch: these come from the follower.
            for i in range(6, 9):
                producer.send("orders", b"v%d" % i, partition=0).get(timeout=10)
            while len(values) < 9 and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    values.extend(r.value for r in records)
            consumer.close()
            seen["values"] = values
            seen["fetched_from"] = sorted(set(fetches))
        finally:
            producer.close()
            admin.close()

    await run_with_cluster(client, mode=mode, racks={0: "a", 1: "b", 2: "c"},
                           config={"replica.selector.class": RACK_AWARE})
    assert seen["values"] == [b"v%d" % i for i in range(9)]
    assert seen["fetched_from"] == [0, 1]
