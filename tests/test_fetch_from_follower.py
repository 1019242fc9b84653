"""Fetching from the closest replica (KIP-392): client metadata, replica selectors, preferred read replicas.

After Kafka's ReplicaManagerTest (testPreferredReplicaAsFollower, testPreferredReplicaAsLeader,
testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr, testFetchFromFollowerShouldNotRunPreferLeaderSelect,
testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined, testFetchFollowerNotAllowedForOlderClients,
testDefaultReplicaSelector, testUnknownReplicaSelector), RackAwareReplicaSelectorTest, and the
consumer side of FetchRequestManagerTest/FetcherTest (testFetchFromPreferredReplica...: the consumer
follows the preferred read replica and falls back to the leader on an error).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients import Consumer
from kafka_ref.common.errors import ConfigException
from kafka_ref.common.node import Node
from kafka_ref.common.replica_selector import (
    ClientMetadata,
    LeaderSelector,
    PartitionView,
    RackAwareReplicaSelector,
    ReplicaView,
)
from kafka_ref.common.requests.fetch import FetchRequest
from kafka_ref.common.requests.metadata import MetadataRequest

pytestmark = pytest.mark.anyio
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
TP = TopicPartition("t", 0)


def _view(broker: int, rack: str | None, leo: int, since_caught_up: int = 0) -> ReplicaView:
    return ReplicaView(Node(broker, "localhost", 9092 + broker, rack), leo, since_caught_up)


def _client(rack: str) -> ClientMetadata:
    return ClientMetadata(rack, "client-id", "127.0.0.1", "User:ANONYMOUS", "PLAINTEXT")


def test_rack_aware_selector_rules() -> None:
    """RackAwareReplicaSelectorTest: same-rack replicas are preferred, the leader when it is in the
    rack (or no replica is, or the client has no rack), else the most caught up of the rack."""
    leader = _view(0, "a", 10)
    b_behind, b_ahead, b_tie_older = _view(1, "b", 8), _view(2, "b", 10, 50), _view(3, "b", 10, 500)
    view = PartitionView(frozenset({leader, b_behind, b_ahead, b_tie_older}), leader)
    selector = RackAwareReplicaSelector()
    assert selector.select(TP, _client("b"), view) == b_ahead  # highest LEO, then most recently caught up
    assert selector.select(TP, _client("a"), view) == leader  # the leader is in the client's rack
    assert selector.select(TP, _client("z"), view) == leader  # nobody in that rack
    assert selector.select(TP, _client(""), view) == leader  # no rack
    assert LeaderSelector().select(TP, _client("b"), view) == leader


def test_replica_selector_config() -> None:
    """testDefaultReplicaSelector / testUnknownReplicaSelector: none by default; an unknown class is refused."""
    with pytest.raises(ConfigException, match="replica.selector.class"):
        Cluster(brokers=1, config={"replica.selector.class": "non-a-class"})
    with pytest.raises(ValueError, match=r"racks names brokers \[5\]"):
        Cluster(brokers=2, racks={5: "a"})


async def _manual(selector: bool) -> Cluster:
    config = {"replica.selector.class": RACK_AWARE} if selector else {}
    return Cluster(brokers=2, metadata_mode="manual", config=config, racks={0: "rack-a", 1: "rack-b"})


async def test_fetch_from_follower_and_leader_without_a_selector() -> None:
    """testPreferredReplicaAsFollower / testPreferredReplicaAsLeader / testFetchFollowerNotAllowedForOlderClients:
    a v11+ consumer fetch is served by a follower too; no broker names a preferred replica without
    a selector; before v11 only the leader serves consumers."""
    async with await _manual(False) as cluster:
        await cluster.set_partition_state("t", leader=0, leader_epoch=1, isr=[0, 1], replicas=[0, 1], is_new=True)
        await cluster.produce(0, "t", 0, [b"a", b"b"], acks=-1)
        await cluster.wait_until(lambda: cluster.replica_state(1, "t", 0).high_watermark == 2, message="follower HW")
        for broker in (0, 1):
            fetched = await cluster.fetch(broker, "t", 0, 0, rack_id="rack-a")
            assert (fetched.error, fetched.values, fetched.preferred_read_replica) == (Errors.NONE, [b"a", b"b"], None)
        assert (await cluster.fetch(1, "t", 0, 0, version=10)).error == Errors.NOT_LEADER_OR_FOLLOWER
        assert (await cluster.fetch(0, "t", 0, 0, version=10)).error == Errors.NONE


async def test_leader_names_the_same_rack_follower_and_answers_at_once() -> None:
    """testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined: with the rack-aware selector,
    a rack-b consumer asking the rack-a leader is sent to the rack-b follower at once (min bytes and
    max wait notwithstanding, nothing parked), with the partition's offsets and no records; a rack-a
    consumer reads at the leader; the follower itself never runs the selector
    (testFetchFromFollowerShouldNotRunPreferLeaderSelect)."""
    async with await _manual(True) as cluster:
        await cluster.set_partition_state("t", leader=0, leader_epoch=1, isr=[0, 1], replicas=[0, 1], is_new=True)
        await cluster.produce(0, "t", 0, [b"a"], acks=-1)
        await cluster.wait_until(lambda: cluster.replica_state(0, "t", 0).remote_replicas[1].log_end_offset == 1,
                                 message="leader knows the follower's LEO")
        purgatory = cluster.broker(0).replica_manager.delayed_fetch_purgatory
        start, parked = cluster.now_ms(), purgatory.watched()  # (the follower's own long poll may be parked)
        sent = await cluster.fetch(0, "t", 0, 1, rack_id="rack-b", min_bytes=1, max_wait_ms=5000)
        assert cluster.now_ms() == start
        assert (sent.error, sent.preferred_read_replica, sent.records, sent.high_watermark) == (Errors.NONE, 1, (), 1)
        assert purgatory.watched() == parked
        here = await cluster.fetch(0, "t", 0, 0, rack_id="rack-a")
        assert (here.preferred_read_replica, here.values) == (None, [b"a"])
        await cluster.wait_until(lambda: cluster.replica_state(1, "t", 0).high_watermark == 1, message="follower HW")
        at_follower = await cluster.fetch(1, "t", 0, 0, rack_id="rack-b")
        assert (at_follower.error, at_follower.preferred_read_replica, at_follower.values) == (Errors.NONE, None, [b"a"])


async def test_out_of_isr_same_rack_follower_is_not_a_candidate() -> None:
    """testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr: a rack-b follower outside the ISR
    is not offered; the rack-b consumer reads at the leader."""
    async with await _manual(True) as cluster:
        # The controller refuses to add the follower back, so it stays out of the committed ISR.
        cluster.controller.handler = lambda request: request.get_error_response(Errors.NOT_CONTROLLER.code)
        await cluster.set_partition_state("t", leader=0, leader_epoch=1, isr=[0], replicas=[0, 1], is_new=True)
        await cluster.produce(0, "t", 0, [b"a"], acks=1)
        await cluster.wait_until(lambda: cluster.replica_state(0, "t", 0).remote_replicas[1].log_end_offset == 1,
                                 message="the leader knows the follower caught up")
        assert cluster.replica_state(0, "t", 0).isr == frozenset({0})
        fetched = await cluster.fetch(0, "t", 0, 0, rack_id="rack-b")
        assert (fetched.error, fetched.preferred_read_replica) == (Errors.NONE, None)
        partition = cluster.broker(0).replica_manager.online_partition(TP)
        assert cluster.broker(0).replica_manager.find_preferred_read_replica(partition, _client("rack-b"), -1, 0, cluster.now_ms()) is None


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_consumer_reads_from_its_rack_and_falls_back_to_the_leader(mode: str) -> None:
    """A Consumer with client_rack="b" is sent by the rack-a leader to the rack-b follower and
    fetches there; Metadata names every broker's rack. When that follower dies the consumer drops
    the preference and reads at the leader again."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=4, racks={0: "a", 1: "b", 2: "c"},
                       config={"replica.selector.class": RACK_AWARE}) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        fetches_to: list[int] = []
        cluster.network.observers.append(
            lambda e: fetches_to.append(e.dst) if e.src == "rack-b-consumer" and isinstance(e.request, FetchRequest) else None)
        async with cluster.producer(acks="all") as producer:
            for i in range(4):
                await producer.send("t", b"v%d" % i, partition=0)
        consumer = Consumer(cluster.network, cluster.live_broker_ids(), client_id="rack-b-consumer", client_rack="b")
        consumer.assign([TP])
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(got) < 4:
                got += [r.value for r in await consumer.poll(500)]
        assert got == [b"v0", b"v1", b"v2", b"v3"]
        assert fetches_to[0] == 0 and 1 in fetches_to and set(fetches_to[fetches_to.index(1):]) == {1}
        metadata = await cluster.network.send("x", 0, MetadataRequest.for_topics([]), 5000)
        racks = {b.node_id: b.rack for b in metadata.brokers}
        assert racks == {0: "a", 1: "b", 2: "c"}
        # The preferred replica dies: back to the leader.
        cluster.kill_broker(1)
        async with cluster.producer(acks=1) as producer:
            await producer.send("t", b"v4", partition=0)
        fetches_to.clear()
        with anyio.fail_after(60):
            while len(got) < 5:
                got += [r.value for r in await consumer.poll(500)]
        assert got[-1] == b"v4" and 0 in fetches_to
        consumer.close()


async def test_offline_preferred_replica_backs_the_partition_off() -> None:
    """AbstractFetch#selectReadReplica with a preferred replica missing from the consumer's metadata:
    the preference is dropped and metadata refreshed, and (the in-process network answering in
    zero time) the partition waits retry_backoff_ms before asking the leader again, instead of
    trading "go to 1" / "1 is offline" with a leader whose metadata is older, forever at one
    instant (the client-failover simulator scenario did, with broker 1 killed, before this)."""
    async with Cluster(brokers=2, metadata_mode="manual") as cluster:
        await cluster.set_partition_state("t", leader=0, leader_epoch=1, isr=[0, 1], replicas=[0, 1], is_new=True)
        consumer = Consumer(cluster.network, [0], client_id="c", client_rack="b", retry_backoff_ms=100)
        consumer.assign([TP])
        await consumer.poll(0)
        now = cluster.now_ms()
        consumer.subscriptions.update_preferred_read_replica(TP, 7, now + 60000)  # no broker 7 in the metadata
        assert consumer.fetcher.select_read_replica(TP, 0, now) is None
        assert consumer.subscriptions.preferred_read_replica(TP, now) is None
        assert consumer.subscriptions.assignment[TP].next_retry_time_ms == now + 100
        assert consumer.metadata.update_requested()
        assert consumer.fetcher.select_read_replica(TP, 0, now) == 0
        consumer.close()
