"""Client liveness under broker loss: every operation finishes while a live broker can answer.

The regression test replays the report of issue 17: with three brokers in ZooKeeper mode and a
topic of three partitions (RF 3, min.insync.replicas 2), each partition's leader in turn is
killed, records are sent to every partition, the old leader comes back and rejoins the ISR, and
more records are sent. Before the fix a send stalled in some trio schedules (schedules 4, 5 and
6 of 0..11): the producer's metadata named a dead broker as its lowest-id node, the reconnect
backoff (50 ms) ran out before the next refresh (100 ms), so every refresh went to the dead
broker and failed; the live brokers were never asked. Kafka's NetworkClient#leastLoadedNode
prefers a connected node, never picks one in reconnect backoff, and a disconnection requests a
metadata update (DefaultMetadataUpdater#handleServerDisconnect).
"""

from __future__ import annotations

import math
import random

import anyio
import pytest

from kafka_ref.clients import Admin, Consumer, NewTopic, Producer
from kafka_ref.clients.client_metadata import Metadata, MetadataSnapshot, Node
from kafka_ref.clients.cluster_connection_states import ClusterConnectionStates, ExponentialBackoff
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.cluster import Cluster
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Network

TOPIC = "orders"

@pytest.mark.anyio
@pytest.mark.kafka_ref_schedules(12)
async def test_producer_survives_leader_kill_and_restart_of_every_partition(anyio_backend) -> None:
    """Issue 17's reproduction: no send may stall (delivery.timeout.ms 120 s would expire it)."""
    async with Cluster(brokers=3, metadata_mode="zk") as cluster:
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3, config={"min.insync.replicas": "2"})
        async with cluster.producer(acks="all") as producer:
            # Without idempotence a retry after a lost answer may write a batch twice, so
            # offsets are checked to grow, and every send must finish.
            last = {0: -1, 1: -1, 2: -1}
            sends = 0

            async def send_round(prefix: bytes) -> None:
                nonlocal sends
                for i in range(30):
                    with anyio.fail_after(60):
                        meta = await producer.send(TOPIC, prefix + b"%d" % i, partition=i % 3)
                    assert meta.offset > last[i % 3]
                    last[i % 3] = meta.offset
                    sends += 1

            for p in range(3):
                leader = cluster.leader_for(TOPIC, p)
                cluster.kill_broker(leader)
                await send_round(b"v")
                await cluster.wait_until(lambda: cluster.leader_for(TOPIC, p) not in (-1, leader))
                await cluster.restart_broker(leader)
                await cluster.wait_until(lambda: len(cluster.partition_state(TOPIC, p)["isr"]) == 3, timeout_ms=120000)
                await send_round(b"w")
            assert sends == 180
            for p in range(3):
                log = cluster.broker(cluster.leader_for(TOPIC, p)).replica_manager.get_partition_or_exception(
                    TopicPartition(TOPIC, p)).log
                assert log.high_watermark == last[p] + 1


# --------------------------------------------------------------------------------------------
# Connection states and the least-loaded node (sans-I/O, MockTime)
# --------------------------------------------------------------------------------------------


def test_exponential_reconnect_backoff() -> None:
    """After ClusterConnectionStatesTest#testExponentialReconnectBackoff and #testMaxReconnectBackoff."""
    # 1. Without jitter: 50 ms doubling per failure up to 1000 ms.
    plain = ExponentialBackoff(50, 2, 1000, 0.0, random.Random(0))
    assert [plain.backoff(n) for n in range(7)] == [50, 100, 200, 400, 800, 1000, 1000]
    # 2. With Kafka's 20 % jitter: each value within its band, never above the maximum.
    states = ClusterConnectionStates(50, 1000, random.Random(7))
    time = MockTime()
    states.connecting(1, time.milliseconds())
    for failures in range(12):
        states.disconnected(1, time.milliseconds())
        delay = states.connection_delay(1, time.milliseconds())
        term = min(50 * 2 ** failures, 1000)
        assert int(0.8 * term) <= delay <= min(int(1.2 * term), 1000)
        assert states.is_blacked_out(1, time.milliseconds()) and not states.can_connect(1, time.milliseconds())
        time.advance(delay)
        assert states.can_connect(1, time.milliseconds()) and not states.is_blacked_out(1, time.milliseconds())
        states.connecting(1, time.milliseconds())
    # 3. A ready connection resets the count: the next failure backs off from 50 ms again.
    states.ready(1)
    assert states.connection_delay(1, time.milliseconds()) == math.inf
    states.disconnected(1, time.milliseconds())
    assert 40 <= states.connection_delay(1, time.milliseconds()) <= 60
    assert states.node_state[1].failed_attempts == 1


def _client(network: Network, nodes: list[int], bootstrap: list[int] | None = None) -> NetworkClient:
    metadata = Metadata(100, 300000)
    client = NetworkClient(network, "client-1", bootstrap or nodes, metadata, time=MockTime())
    metadata.snapshot = MetadataSnapshot(nodes={n: Node(n) for n in nodes})
    metadata.need_full_update = False
    return client


def test_least_loaded_node() -> None:
    """After NetworkClientTest#testLeastLoadedNode: a dropped connection's node is not chosen; a refresh is asked for."""
    network = Network()
    network.register(0)
    client = _client(network, [0])
    assert client.least_loaded_node() == 0
    assert client.ready(0) and client.least_loaded_node() == 0
    # 1. The broker goes away: the connection counts as dropped; no node is left.
    network.unregister(0)
    assert not client.ready(0)
    assert client.least_loaded_node() is None
    assert client.metadata.update_requested()


def test_least_loaded_node_prefers_connected_then_oldest_attempt_and_skips_backoff() -> None:
    """The stall of issue 17: the dead lowest-id node past its backoff must not win over a live one."""
    network = Network()
    network.register(2)
    client = _client(network, [1, 2])
    time: MockTime = client.time  # type: ignore[assignment]
    # 1. Broker 1 (down) refuses a connection; broker 2 is connected.
    assert not client.ready(1) and client.ready(2)
    assert client.least_loaded_node() == 2
    # 2. Past broker 1's backoff the connected broker still wins, also with a request in flight.
    time.advance(1000)
    client.in_flight[2] = 1
    assert client.least_loaded_node() == 2
    # 3. Connected brokers are gone: among those we may connect to, the least recently tried.
    network.unregister(2)
    time.advance(1000)
    assert client.connection_states.can_connect(1, time.milliseconds())
    assert client.least_loaded_node() == 1  # 2's failed attempt (just now) is newer than 1's
    # 4. Both blacked out: none.
    assert not client.ready(1)
    assert client.least_loaded_node() is None


def test_least_loaded_node_rotates_over_disconnected_nodes() -> None:
    """After NetworkClientTest#testLeastLoadedNodeProvideDisconnectedNodesPrioritizedByLastConnectionTimestamp."""
    client = _client(Network(), [0, 1, 2])
    time: MockTime = client.time  # type: ignore[assignment]
    provided: set[int] = set()
    for i in range(30):
        node = client.least_loaded_node()
        assert node is not None
        provided.add(node)
        assert not client.ready(node)  # nobody is up: the attempt fails at once
        time.advance(1201)  # past the largest backoff (1000 ms + jitter)
        if (i + 1) % 3 == 0:
            assert provided == {0, 1, 2}
            provided.clear()


def test_disconnect_requests_metadata_update_and_backs_off_a_due_refresh() -> None:
    """After DefaultMetadataUpdater#handleServerDisconnect: a due refresh counts as failed, an update is requested."""
    network = Network()
    client = _client(network, [0])
    now = client.time.milliseconds()
    client.metadata.request_update()
    client.metadata.last_refresh_ms = now - 1000
    assert client.is_update_due(now)
    assert not client.ready(0)
    assert client.metadata.last_refresh_ms == now
    assert client.metadata.update_requested()
    # The first failed attempt's backoff: retry.backoff.ms 100 with KIP-580's ±20 % jitter.
    assert client.metadata.attempts == 1
    assert 80 <= client.metadata.time_to_next_update(now) <= 120


# --------------------------------------------------------------------------------------------
# Producer, Consumer (group) and Admin with dead brokers in the bootstrap list
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.kafka_ref_schedules(3)
async def test_clients_with_dead_bootstrap_brokers_and_coordinator_move(anyio_backend) -> None:
    """Bootstrap lists that start with a dead broker; then the group coordinator's broker dies."""
    async with Cluster(brokers=3, metadata_mode="zk", config={"offsets.topic.num.partitions": 1}) as cluster:
        # min.insync.replicas stays 1: two of the three brokers die below, and with 2 Kafka would
        # (rightly) refuse the acks=all sends that follow with NOT_ENOUGH_REPLICAS.
        await cluster.create_topic(TOPIC, partitions=3, replication_factor=3)
        cluster.kill_broker(0)
        await cluster.wait_until(lambda: all(cluster.leader_for(TOPIC, p) in (1, 2) for p in range(3)))
        bootstrap = [0, 1, 2]
        # 1. Admin: least-loaded calls and controller calls finish.
        async with Admin(cluster.network, bootstrap, default_api_timeout_ms=30000) as admin:
            with anyio.fail_after(30):
                description = await admin.describe_cluster()
                assert sorted(n.id for n in description.nodes) == [1, 2]
                await admin.create_topics([NewTopic("audit", 1, 2)])
        # 2. Producer and a group consumer.
        async with Producer(cluster.network, bootstrap, acks="all") as producer:
            with anyio.fail_after(30):
                for i in range(9):
                    await producer.send(TOPIC, b"a%d" % i, partition=i % 3)
            async with Consumer(cluster.network, bootstrap, group_id="g", session_timeout_ms=10000,
                                heartbeat_interval_ms=1000) as consumer:
                consumer.subscribe([TOPIC])
                seen: list[bytes] = []
                with anyio.fail_after(60):
                    while len(seen) < 9:
                        seen.extend(r.value for r in await consumer.poll(500))
                    await consumer.commit_sync()
                assert sorted(seen) == sorted(b"a%d" % i for i in range(9))
                # 3. The coordinator's broker dies: the consumer finds the new one and keeps going.
                coordinator = consumer.coordinator.coordinator
                assert coordinator in (1, 2)
                cluster.kill_broker(coordinator)
                with anyio.fail_after(60):
                    for i in range(6):
                        await producer.send(TOPIC, b"b%d" % i, partition=i % 3)
                    while len(seen) < 15:
                        seen.extend(r.value for r in await consumer.poll(500))
                    await consumer.commit_sync()
                assert consumer.coordinator.coordinator not in (None, coordinator)
                committed = await consumer.committed([TopicPartition(TOPIC, p) for p in range(3)])
                assert {tp.partition: c.offset for tp, c in committed.items()} == {0: 5, 1: 5, 2: 5}
