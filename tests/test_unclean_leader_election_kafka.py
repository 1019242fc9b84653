"""unclean.leader.election.enable, broker-wide and per topic, on a two-broker ZooKeeper cluster.

Ports of Kafka 3.8.0's ``UncleanLeaderElectionTest`` (ZooKeeper mode only there too): brokers 0
and 1 with controlled shutdown on (one retry, 1 s back-off), a topic of one partition on both.
The follower stops; "second" is written to the leader alone; the leader stops and the follower
comes back. With unclean election the follower leads (the controller's unclean-election meter
counts 1) and "second" is lost; without it the partition stays leaderless, writes time out and
reads find nothing until the old leader returns. tests/examples/test_controller_examples.py has a
shorter crash-based variant of the first two.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.common.errors import ConfigException, TimeoutException
from kafka_ref.zk.admin_zk_client import AdminZkClient

pytestmark = pytest.mark.anyio

TOPIC = "topic"
TP = TopicPartition(TOPIC, 0)
BROKER_CONFIG = {"controlled.shutdown.enable": True, "controlled.shutdown.max.retries": 1,
                 "controlled.shutdown.retry.backoff.ms": 1000, "offsets.topic.replication.factor": 1}


def _cluster(**config) -> Cluster:
    return Cluster(brokers=2, metadata_mode="zk", seed=31, config={**BROKER_CONFIG, **config})


async def _produce(cluster: Cluster, value: str, **producer_config) -> None:
    """TestUtils#produceMessage: one record, waited for."""
    async with cluster.producer(acks=-1, **producer_config) as producer:
        await producer.send(TOPIC, value.encode(), partition=0)


async def _consume_all(cluster: Cluster, count: int) -> list[str]:
    """UncleanLeaderElectionTest#consumeAllMessages: assign, seek to 0, poll until ``count`` records
    (TestUtils#consumeRecords: polls of 100 ms, at most 15 s)."""
    consumer = cluster.consumer()   # no group: nothing is committed
    try:
        consumer.assign([TP])
        consumer.seek(TP, 0)
        values: list[str] = []
        with anyio.fail_after(15):
            while True:
                values += [r.value.decode() for r in await consumer.poll(100)]
                if len(values) >= count:
                    return values
    finally:
        consumer.close()


async def _leader(cluster: Cluster, expected: int | None = None) -> int:
    """TestUtils#waitUntilLeaderIsElectedOrChanged (with ``newLeaderOpt`` when ``expected`` is given; -1: none)."""
    def ok() -> bool:
        state = cluster.partition_state(TOPIC, 0)
        if state is None:
            return False
        return state["leader"] != -1 if expected is None else state["leader"] == expected
    await cluster.wait_until(ok, timeout_ms=60000, message=f"leader {expected}")
    return cluster.partition_state(TOPIC, 0)["leader"]


def _unclean_count(cluster: Cluster) -> int:
    return cluster.active_controller().controller_context.stats.unclean_leader_election_rate.count()


async def _first_and_second(cluster: Cluster) -> tuple[int, int]:
    """Both verify helpers' common start: "first" on both, the follower stops, "second" on the
    leader alone, the leader stops, the follower returns (and becomes the controller)."""
    leader = await _leader(cluster)
    assert leader in (0, 1)
    follower = 1 - leader
    await _produce(cluster, "first")
    assert await _consume_all(cluster, 1) == ["first"]
    await cluster.shutdown_broker(follower)
    await _produce(cluster, "second")
    assert await _consume_all(cluster, 2) == ["first", "second"]
    await cluster.shutdown_broker(leader)
    await cluster.restart_broker(follower)
    await cluster.wait_until(lambda: cluster.controller_id() == follower, message="the follower controls")
    return leader, follower


async def _verify_unclean_leader_election_enabled(cluster: Cluster) -> None:
    """UncleanLeaderElectionTest#verifyUncleanLeaderElectionEnabled."""
    _, follower = await _first_and_second(cluster)
    await _leader(cluster, follower)
    assert cluster.controller_id() == follower and _unclean_count(cluster) == 1
    await _produce(cluster, "third")
    # "second" was only on the old leader: lost to the unclean election.
    assert await _consume_all(cluster, 2) == ["first", "third"]


async def _verify_unclean_leader_election_disabled(cluster: Cluster) -> None:
    """UncleanLeaderElectionTest#verifyUncleanLeaderElectionDisabled."""
    leader, follower = await _first_and_second(cluster)
    await _leader(cluster, -1)
    assert _unclean_count(cluster) == 0
    with pytest.raises(TimeoutException):
        await _produce(cluster, "third", delivery_timeout_ms=1000, request_timeout_ms=1000, linger_ms=0)
    assert await _consume_all(cluster, 0) == []
    # The old leader comes back: it leads again, and the follower rejoins the ISR.
    await cluster.restart_broker(leader)
    await _leader(cluster, leader)
    await _produce(cluster, "third")
    await cluster.wait_until(lambda: follower in getattr(cluster.broker(follower).metadata_cache.get_partition_info(TP),
                                                         "isr", ()), timeout_ms=60000, message="the follower in the ISR")
    # A clean move to the in-sync follower keeps every record.
    await cluster.shutdown_broker(leader)
    await _leader(cluster, follower)
    assert await _consume_all(cluster, 3) == ["first", "second", "third"]


async def test_unclean_leader_election_enabled():
    """Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionEnabled."""
    async with _cluster(**{"unclean.leader.election.enable": True}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]})
        await _verify_unclean_leader_election_enabled(cluster)


async def test_unclean_leader_election_disabled():
    """Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionDisabled (the broker default)."""
    async with _cluster() as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]})
        await _verify_unclean_leader_election_disabled(cluster)


async def test_unclean_leader_election_enabled_by_topic_override():
    """Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionEnabledByTopicOverride."""
    async with _cluster(**{"unclean.leader.election.enable": False}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]},
                                   config={"unclean.leader.election.enable": "true"})
        await _verify_unclean_leader_election_enabled(cluster)


async def test_unclean_leader_election_disabled_by_topic_override():
    """Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionDisabledByTopicOverride."""
    async with _cluster(**{"unclean.leader.election.enable": True}) as cluster:
        await cluster.create_topic(TOPIC, replica_assignment={0: [0, 1]},
                                   config={"unclean.leader.election.enable": "false"})
        await _verify_unclean_leader_election_disabled(cluster)


async def test_unclean_leader_election_invalid_topic_override():
    """Mirrors UncleanLeaderElectionTest#testUncleanLeaderElectionInvalidTopicOverride: creating the
    topic in ZooKeeper with "invalid" as the value is a ConfigException, and nothing is written."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=31, config=BROKER_CONFIG) as cluster:
        admin_zk = AdminZkClient(cluster.broker(0).zk_client, cluster.broker(0).rng)
        with pytest.raises(ConfigException):
            admin_zk.create_topic_with_assignment(TOPIC, {"unclean.leader.election.enable": "invalid"}, {0: [0]})
        assert cluster.zookeeper.exists(f"/brokers/topics/{TOPIC}") is None


async def test_topic_unclean_leader_election_enable():
    """Mirrors UncleanLeaderElectionTest#testTopicUncleanLeaderElectionEnable: leaderless until the
    topic's config turns unclean election on (AlterConfigs); then the out-of-sync follower leads."""
    async with _cluster() as cluster:
        AdminZkClient(cluster.broker(0).zk_client, cluster.broker(0).rng).create_topic_with_assignment(
            TOPIC, {}, {0: [0, 1]})
        leader, follower = await _first_and_second(cluster)
        assert _unclean_count(cluster) == 0
        with pytest.raises(TimeoutException):
            await _produce(cluster, "third", delivery_timeout_ms=1000, request_timeout_ms=1000, linger_ms=0)
        assert await _consume_all(cluster, 0) == []
        async with cluster.admin() as admin:
            await admin.alter_configs({TOPIC: {"unclean.leader.election.enable": "true"}})
        await _leader(cluster, follower)
        assert _unclean_count(cluster) == 1
        await _produce(cluster, "third")
        assert await _consume_all(cluster, 2) == ["first", "third"]
