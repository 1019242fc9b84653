"""Ports of kafka.server.FetchFromFollowerIntegrationTest (Kafka 3.8.0, KIP-392), in ZooKeeper and KRaft mode.

Kafka's harness: two brokers, each in a rack named after its id ("0", "1") with the
RackAwareReplicaSelector (TestUtils' ``enableFetchFromFollower``), controlled shutdown off,
``num.partitions`` 1, ``offsets.topic.replication.factor`` 2 and ``fetch.max.bytes`` Int.MaxValue
(BaseFetchRequestTest). The topic has one partition led by broker 0 with broker 1 following.
Kafka sends raw FetchRequests (the newest version, topic ids, a consumer's replica id) over a
socket; here they go over the in-process network with the client principal, and the answers
are read field by field as Kafka's test reads them (``errorCounts``, ``preferredReadReplica``).
``brokers(i).shutdown()`` with controlled shutdown off is ``Cluster.shutdown_broker`` (the
controlled step answers at once) and ``startup()`` again is ``Cluster.restart_broker``.
``TestUtils.generateAndProduceMessages`` is an acks=all producer sending fresh values.

testFollowerCompleteDelayedFetchesOnReplication also runs as Kafka's does, over a socket: a
Fetch encoded by kafka-python's protocol classes is written to the follower's listener, and the
answer is read back from the socket. Kafka sends its newest version (16, topic ids); the
listener speaks Fetch up to v12 (kafka_ref/wire/apis.py), so the request is v12, by topic name,
which still carries the consumer's rack (v11+) and so may be served by a follower.

The rolling-follower test runs a second time over the wire with kafka-python's consumer (a real
client: group membership, Fetch v11+ with ``client_rack``, following the preferred read
replica); the preferred-replica probe is still the in-process FetchRequest.

Not ported:
- testRackAwareRangeAssignor: @Disabled in Kafka 3.8.0, and kafka_ref's RangeAssignor has no
  rack awareness (KIP-881 rack-aware partition assignment is not modelled).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.clients import Consumer
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition

pytestmark = pytest.mark.anyio

NUM_NODES = 2
NUM_PARTS = 1
TOPIC = "test-fetch-from-follower"
LEADER_BROKER_ID = 0
FOLLOWER_BROKER_ID = 1
TP = TopicPartition(TOPIC, 0)
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
INT_MAX = 2**31 - 1
CLIENT_PRINCIPAL = "User:ANONYMOUS"
QUORUMS = pytest.mark.parametrize("quorum", ["zk", "kraft"])


def fetch_from_follower_cluster(quorum: str, seed: int) -> Cluster:
    """The test's generateConfigs: racks "0" and "1", the rack-aware selector, no controlled shutdown."""
    config = {
        "num.partitions": NUM_PARTS,
        "offsets.topic.replication.factor": NUM_NODES,
        "controlled.shutdown.enable": False,
        "replica.selector.class": RACK_AWARE,
        "fetch.max.bytes": INT_MAX,
    }
    return Cluster(brokers=NUM_NODES, metadata_mode=quorum, config=config, seed=seed,
                   racks={b: str(b) for b in range(NUM_NODES)})


async def create_topic(cluster: Cluster) -> None:
    """TestUtils.createTopicWithAdmin with replicaAssignment 0 -> [leader, follower]."""
    await cluster.create_topic(TOPIC, replica_assignment={0: [LEADER_BROKER_ID, FOLLOWER_BROKER_ID]})
    assert cluster.leader_for(TOPIC, 0) == LEADER_BROKER_ID


async def generate_and_produce_messages(cluster: Cluster, num_messages: int, produced: list[bytes]) -> None:
    """TestUtils.generateAndProduceMessages: fresh values, acks=all; ``produced`` collects them."""
    values = [b"message-%d" % (len(produced) + i) for i in range(num_messages)]
    async with cluster.producer(acks=-1) as producer:
        for value in values:
            await producer.send(TOPIC, value)
    produced.extend(values)


def create_consumer_fetch_request(cluster: Cluster, *, max_response_bytes: int, max_partition_bytes: int,
                                  offset: int, max_wait_ms: int, min_bytes: int, rack_id: str = "") -> FetchRequest:
    """BaseFetchRequestTest#createConsumerFetchRequest for TP (the newest version, with its topic id)."""
    key = TopicIdPartition(cluster.topic_id(TOPIC), TP)
    data = FetchPartition(partition=TP.partition, fetch_offset=offset, log_start_offset=0,
                          partition_max_bytes=max_partition_bytes)
    return FetchRequest.build(fetch_data={key: data}, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                              max_bytes=max_response_bytes, rack_id=rack_id)


async def get_preferred_replica(cluster: Cluster) -> int:
    """Mirrors the test's getPreferredReplica: a rack-"1" consumer fetch at the leader from offset 0."""
    request = create_consumer_fetch_request(cluster, max_response_bytes=1000, max_partition_bytes=1000, offset=0,
                                            max_wait_ms=500, min_bytes=1, rack_id=str(FOLLOWER_BROKER_ID))
    response: FetchResponse = await cluster.network.send("client", LEADER_BROKER_ID, request, 30000,
                                                         principal=CLIENT_PRINCIPAL)
    assert response.error_code == Errors.NONE.code
    assert response.error_counts() == {Errors.NONE.code: 2}
    assert len(response.responses) == 1
    topic_response = response.responses[0]
    assert len(topic_response.partitions) == 1
    return topic_response.partitions[0].preferred_read_replica


async def poll_until_at_least_num_records(cluster: Cluster, consumer: Consumer, num_records: int) -> list:
    """TestUtils.pollUntilAtLeastNumRecords (15 s of loop time)."""
    records: list = []
    with anyio.fail_after(15):
        while len(records) < num_records:
            records.extend(await consumer.poll(100))
    return records


@QUORUMS
async def test_follower_complete_delayed_fetches_on_replication(quorum: str):
    """Mirrors FetchFromFollowerIntegrationTest#testFollowerCompleteDelayedFetchesOnReplication:
    a consumer fetch parked at the follower (max wait 20 s, above the test's 15 s timeout) is
    completed by the follower's replication of the record, not by its timeout."""
    async with fetch_from_follower_cluster(quorum, seed=1) as cluster:
        await create_topic(cluster)
        request = create_consumer_fetch_request(cluster, max_response_bytes=1000, max_partition_bytes=1000, offset=0,
                                                max_wait_ms=20000, min_bytes=1)
        # 1. The fetch reaches the follower before there is anything to read: it waits in the purgatory.
        start = cluster.now_ms()
        envelope = cluster.network.post("client", FOLLOWER_BROKER_ID, request, principal=CLIENT_PRINCIPAL)
        purgatory = cluster.broker(FOLLOWER_BROKER_ID).replica_manager.delayed_fetch_purgatory
        await cluster.wait_until(lambda: envelope.answered or purgatory.watched() == 1, message="the fetch parked")
        assert not envelope.answered
        assert purgatory.watched() == 1
        # 2. One record produced at the leader; the follower replicates it and learns the high watermark.
        produced: list[bytes] = []
        await generate_and_produce_messages(cluster, 1, produced)
        response: FetchResponse = await cluster.network.wait(envelope, 15000)
        elapsed = cluster.now_ms() - start
        assert elapsed < 15000
        assert response.error_code == Errors.NONE.code
        assert response.error_counts() == {Errors.NONE.code: 2}
        partition = response.responses[0].partitions[0]
        assert (partition.error_code, partition.high_watermark, partition.preferred_read_replica) == (0, 1, -1)
        assert [r.value for batch in partition.records for r in batch] == produced
        assert cluster.replica_state(FOLLOWER_BROKER_ID, TOPIC, 0).high_watermark == 1


@QUORUMS
async def test_fetch_from_leader_while_preferred_read_replica_is_unavailable(quorum: str):
    """Mirrors FetchFromFollowerIntegrationTest#testFetchFromLeaderWhilePreferredReadReplicaIsUnavailable:
    once the follower is down and gone from the leader's metadata, the leader names no preferred
    read replica (-1) and serves the rack-"1" consumer itself."""
    async with fetch_from_follower_cluster(quorum, seed=2) as cluster:
        await create_topic(cluster)
        await generate_and_produce_messages(cluster, 10, [])
        assert await get_preferred_replica(cluster) == FOLLOWER_BROKER_ID

        await cluster.shutdown_broker(FOLLOWER_BROKER_ID)
        leader_cache = cluster.broker(LEADER_BROKER_ID).metadata_cache
        await cluster.wait_until(lambda: FOLLOWER_BROKER_ID not in leader_cache.get_partition_replica_endpoints(TP),
                                 message="follower is still reachable.")
        assert await get_preferred_replica(cluster) == -1


@QUORUMS
async def test_fetch_from_follower_with_roll(quorum: str):
    """Mirrors FetchFromFollowerIntegrationTest#testFetchFromFollowerWithRoll: a group consumer in
    rack "1" keeps reading while its preferred replica (the follower) stops and starts again."""
    async with fetch_from_follower_cluster(quorum, seed=3) as cluster:
        await create_topic(cluster)
        # (Beyond Kafka's test: where the consumer's fetches go in each phase.)
        fetched_from: list[int] = []
        cluster.network.observers.append(lambda e: fetched_from.append(e.dst) if e.src == "consumer-test-group"
                                         and isinstance(e.request, FetchRequest) else None)
        consumer = Consumer(cluster.network, cluster.live_broker_ids(), client_id="consumer-test-group",
                            group_id="test-group", auto_offset_reset="earliest", client_rack=str(FOLLOWER_BROKER_ID))
        produced: list[bytes] = []
        consumed: list[bytes] = []
        try:
            consumer.subscribe([TOPIC])

            # 1. The leader sends rack-"1" consumers to the follower.
            await wait_until_preferred_replica_is(cluster, FOLLOWER_BROKER_ID)

            # 2. Produce and consume: the consumer was sent to the follower and reads there.
            await generate_and_produce_messages(cluster, 1, produced)
            consumed += [r.value for r in await poll_until_at_least_num_records(cluster, consumer, 1)]
            assert consumed == produced[:1]
            assert fetched_from[0] == LEADER_BROKER_ID and fetched_from[-1] == FOLLOWER_BROKER_ID

            # 3. The follower stops: produce and consume still work (back at the leader).
            await cluster.shutdown_broker(FOLLOWER_BROKER_ID)
            fetched_from.clear()
            await generate_and_produce_messages(cluster, 1, produced)
            consumed += [r.value for r in await poll_until_at_least_num_records(cluster, consumer, 1)]
            assert consumed == produced[:2]
            assert fetched_from[-1] == LEADER_BROKER_ID

            # 4. The follower starts again and becomes the preferred replica once more.
            await cluster.restart_broker(FOLLOWER_BROKER_ID)
            await wait_until_preferred_replica_is(cluster, FOLLOWER_BROKER_ID)

            # 5. Produce and consume still work, at the follower again.
            fetched_from.clear()
            await generate_and_produce_messages(cluster, 1, produced)
            consumed += [r.value for r in await poll_until_at_least_num_records(cluster, consumer, 1)]
            assert consumed == produced
            assert fetched_from[-1] == FOLLOWER_BROKER_ID
        finally:
            consumer.close()


async def wait_until_preferred_replica_is(cluster: Cluster, broker_id: int) -> None:
    """TestUtils.waitUntilTrue(() => getPreferredReplica == broker_id, "Preferred replica is not set")."""
    with anyio.fail_after(15):
        while await get_preferred_replica(cluster) != broker_id:
            await anyio.sleep(0.1)


@QUORUMS
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a real clock: sockets and a client thread
async def test_fetch_from_follower_with_roll_kafka_python(quorum: str):
    """Mirrors FetchFromFollowerIntegrationTest#testFetchFromFollowerWithRoll with kafka-python's
    KafkaConsumer (client_rack "1", group "test-group") over the wire."""
    pytest.importorskip("kafka")
    import time

    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
    from kafka.admin import NewTopic

    from tests.wire_support import on_loop, on_loop_async, run_with_cluster

    outcome: dict[str, object] = {}

    def client(cluster: Cluster, bootstrap: str) -> None:
        fetched_from: list[int] = []
        on_loop(cluster.network.observers.append, lambda e: fetched_from.append(e.dst) if e.src != "client"
                and isinstance(e.request, FetchRequest) and e.request.requesting_replica_id() == -1 else None)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=5000,
                                 metadata_max_age_ms=1000, retry_backoff_ms=100)
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="test-group", auto_offset_reset="earliest",
                                 client_rack=str(FOLLOWER_BROKER_ID), enable_auto_commit=False,
                                 session_timeout_ms=6000, heartbeat_interval_ms=300, request_timeout_ms=5000,
                                 metadata_max_age_ms=1000, fetch_max_wait_ms=100, retry_backoff_ms=100)
        consumed: list[bytes] = []
        produced: list[bytes] = []
        phases: list[list[int]] = []

        def wait_for_preferred_replica() -> None:
            deadline = time.monotonic() + 30
            while on_loop_async(get_preferred_replica, cluster) != FOLLOWER_BROKER_ID:
                assert time.monotonic() < deadline, "Preferred replica is not set"
                time.sleep(0.1)

        def produce_one() -> None:
            value = b"message-%d" % len(produced)
            producer.send(TOPIC, value=value, partition=0).get(timeout=30)
            produced.append(value)

        def poll_until_at_least(count: int) -> None:
            deadline = time.monotonic() + 30
            while len(consumed) < count and time.monotonic() < deadline:
                for records in consumer.poll(timeout_ms=200).values():
                    consumed.extend(r.value for r in records)

        try:
            admin.create_topics([NewTopic(TOPIC, replica_assignments={0: [LEADER_BROKER_ID, FOLLOWER_BROKER_ID]})])
            consumer.subscribe([TOPIC])
            # 1. The leader sends rack-"1" consumers to the follower; 2. produce and consume there.
            wait_for_preferred_replica()
            produce_one()
            poll_until_at_least(1)
            phases.append(list(fetched_from))
            # 3. The follower stops: produce and consume still work.
            on_loop_async(cluster.shutdown_broker, FOLLOWER_BROKER_ID)
            fetched_from.clear()
            produce_one()
            poll_until_at_least(2)
            phases.append(list(fetched_from))
            # 4. The follower starts again; 5. produce and consume still work.
            on_loop_async(cluster.restart_broker, FOLLOWER_BROKER_ID)
            wait_for_preferred_replica()
            fetched_from.clear()
            produce_one()
            poll_until_at_least(3)
            phases.append(list(fetched_from))
        finally:
            consumer.close()
            producer.close()
            admin.close()
        outcome.update(consumed=consumed, produced=produced, phases=phases)

    await run_with_cluster(client, mode=quorum, brokers=NUM_NODES, racks={b: str(b) for b in range(NUM_NODES)},
                           config={"num.partitions": NUM_PARTS, "offsets.topic.replication.factor": NUM_NODES,
                                   "controlled.shutdown.enable": False, "replica.selector.class": RACK_AWARE,
                                   "fetch.max.bytes": INT_MAX})
    assert outcome["consumed"] == outcome["produced"] == [b"message-0", b"message-1", b"message-2"]
    first, during, after = outcome["phases"]
    assert first[0] == LEADER_BROKER_ID and first[-1] == FOLLOWER_BROKER_ID
    assert during[-1] == LEADER_BROKER_ID
    assert after[-1] == FOLLOWER_BROKER_ID


@QUORUMS
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # a real clock: sockets
async def test_follower_complete_delayed_fetches_on_replication_over_a_socket(quorum: str):
    """Mirrors FetchFromFollowerIntegrationTest#testFollowerCompleteDelayedFetchesOnReplication over a
    socket: Fetch v12 to the follower's listener, max wait 20 s (above the test's 15 s timeout);
    the record's replication completes it."""
    pytest.importorskip("kafka")
    import struct
    import time

    from kafka.protocol.consumer import FetchRequest as KFetchRequest
    from kafka.protocol.consumer import FetchResponse as KFetchResponse

    version = 12
    config = {"num.partitions": NUM_PARTS, "offsets.topic.replication.factor": NUM_NODES,
              "controlled.shutdown.enable": False, "replica.selector.class": RACK_AWARE, "fetch.max.bytes": INT_MAX}
    async with Cluster(brokers=NUM_NODES, metadata_mode=quorum, config=config, clock="wall",
                       racks={b: str(b) for b in range(NUM_NODES)}) as cluster, cluster.serve() as bootstrap:
        await create_topic(cluster)
        request = KFetchRequest(
            replica_id=-1, max_wait_ms=20000, min_bytes=1, max_bytes=1000, isolation_level=0, session_id=0,
            session_epoch=-1, rack_id="", forgotten_topics_data=[], topics=[KFetchRequest.FetchTopic(
                topic=TOPIC, partitions=[KFetchRequest.FetchTopic.FetchPartition(
                    partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=0,
                    partition_max_bytes=1000)])])
        request.API_VERSION = version
        request.with_header(correlation_id=1, client_id="fetch-from-follower")
        host, port = bootstrap.split(",")[FOLLOWER_BROKER_ID].split(":")
        async with await anyio.connect_tcp(host, int(port)) as socket:
            start = time.monotonic()
            await socket.send(request.encode(header=True, framed=True))
            produced: list[bytes] = []
            await generate_and_produce_messages(cluster, 1, produced)
            with anyio.fail_after(15):
                size = struct.unpack(">i", await receive_exactly(socket, 4))[0]
                response = KFetchResponse.decode(await receive_exactly(socket, size), version=version, header=True)
            assert time.monotonic() - start < 15
        assert response.header.correlation_id == 1
        assert response.error_code == Errors.NONE.code
        [topic_response] = response.responses
        [partition] = topic_response.partitions
        # errorCounts {NONE: 2}: the top-level code and the partition's.
        assert (response.error_code, partition.error_code) == (0, 0)
        assert (partition.high_watermark, partition.preferred_read_replica) == (1, -1)
        from kafka_ref.common.records import MemoryRecords

        assert [r.value for batch in MemoryRecords.from_bytes(bytes(partition.records)) for r in batch] == produced


async def receive_exactly(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        data += await stream.receive(n - len(data))
    return data
