"""CreateTopics limits in both metadata modes.

Mirrors KRaftClusterTest#testOverlyLargeCreateTopics and BoundedListTest (KAFKA-14996, Kafka 3.5.0+),
ReplicationControlManagerTest#testCreateTopics' invalid partition counts and replication factors, and
ZkAdminManager / AdminUtils#assignReplicasToBrokers' checks. Values no wire message could carry (an
int32 partition count beyond 2**31-1, an int16 replication factor of 70000) are INVALID_REQUEST where
the request enters a broker or the controller.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_ref.server.bounded_list import BoundedList, BoundedListTooLongException

pytestmark = pytest.mark.anyio

EXCESSIVE = "Unable to perform excessively large batch operation."


def test_bounded_list():
    """Mirrors BoundedListTest: adds up to the bound succeed, one more raises and changes nothing."""
    items = BoundedList(3, [1, 2])
    items.append(3)
    with pytest.raises(BoundedListTooLongException):
        items.append(4)
    with pytest.raises(BoundedListTooLongException):
        items.extend([4])
    with pytest.raises(BoundedListTooLongException):
        items.insert(0, 0)
    assert items == [1, 2, 3]
    with pytest.raises(ValueError):
        BoundedList(0)


async def _create(cluster: Cluster, *topics: CreatableTopic, to_broker: bool = False, validate_only: bool = False):
    request = CreateTopicsRequest(topics=topics, timeout_ms=5000, validate_only=validate_only)
    if to_broker:
        target = cluster.controller_id() if cluster.kraft is None else 0
        response = await cluster.network.send("admin", target, request, 10000, principal="User:ANONYMOUS")
    else:
        response = await cluster._send_to_controller(request, 5000)
    return [(Errors.for_code(t.error_code), t.error_message) for t in response.topics]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_create_topics_value_checks(mode):
    """Non-positive counts other than -1 are refused with Kafka's errors and messages; values outside the
    schema's int32/int16 are INVALID_REQUEST at the broker (and at the KRaft controller)."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=1) as cluster:
        partitions_msg = ("Number of partitions was set to an invalid non-positive value." if mode == "kraft"
                          else "Number of partitions must be larger than 0.")
        rf_msg = ("Replication factor must be larger than 0, or -1 to use the default value." if mode == "kraft"
                  else "Replication factor must be larger than 0.")
        for n in (0, -5):
            assert await _create(cluster, CreatableTopic(name="a", num_partitions=n, replication_factor=1)) == [
                (Errors.INVALID_PARTITIONS, partitions_msg)]
        for rf in (0, -2):
            assert await _create(cluster, CreatableTopic(name="a", num_partitions=1, replication_factor=rf)) == [
                (Errors.INVALID_REPLICATION_FACTOR, rf_msg)]
        for to_broker in (True, False):
            [(error, message)] = await _create(cluster, CreatableTopic(name="a", num_partitions=2 ** 40, replication_factor=1),
                                               to_broker=to_broker)
            assert error is Errors.INVALID_REQUEST
            if to_broker or mode == "kraft":
                assert message == ("CreateTopicsRequest.topics[0].num_partitions = 1099511627776 does not fit the "
                                   "schema type int32 [-2147483648, 2147483647]")
            [(error, _)] = await _create(cluster, CreatableTopic(name="a", num_partitions=1, replication_factor=70000),
                                         to_broker=to_broker)
            assert error is Errors.INVALID_REQUEST
        # Nothing was created, and the cluster still creates a sane topic.
        assert [e for e, _ in await _create(cluster, CreatableTopic(name="a", num_partitions=2, replication_factor=1))] == [Errors.NONE]


async def test_overly_large_create_topics_kraft():
    """Mirrors KRaftClusterTest#testOverlyLargeCreateTopics: more than MAX_RECORDS_PER_USER_OP (10,000) records
    in one CreateTopics fails the whole request with POLICY_VIOLATION, whether one absurd topic or two that
    only overflow together; the controller keeps serving."""
    async with Cluster(brokers=1, metadata_mode="kraft", seed=1) as cluster:
        assert await _create(cluster, CreatableTopic(name="huge", num_partitions=2 ** 31 - 1, replication_factor=1)) == [
            (Errors.POLICY_VIOLATION, EXCESSIVE)]
        both = await _create(cluster, CreatableTopic(name="x", num_partitions=6000, replication_factor=1),
                             CreatableTopic(name="y", num_partitions=6000, replication_factor=1))
        assert both == [(Errors.POLICY_VIOLATION, EXCESSIVE)] * 2
        # 9,999 partitions + the TopicRecord is exactly the bound (validated only: the brokers need not host them).
        created = await _create(cluster, CreatableTopic(name="z", num_partitions=9999, replication_factor=1), validate_only=True)
        assert [e for e, _ in created] == [Errors.NONE]
        assert await _create(cluster, CreatableTopic(name="z", num_partitions=10000, replication_factor=1), validate_only=True) == [
            (Errors.POLICY_VIOLATION, EXCESSIVE)]
        assert cluster.topic_assignment("x") is None and cluster.topic_assignment("z") is None
        assert [e for e, _ in await _create(cluster, CreatableTopic(name="w", num_partitions=2, replication_factor=1))] == [Errors.NONE]


async def test_overly_large_create_topics_zk():
    """ZooKeeper-mode Kafka had no bound here; kafka_ref refuses a topic of more than 9,999 partitions with
    POLICY_VIOLATION (its own guard, named in the message) instead of building the assignment."""
    async with Cluster(brokers=1, metadata_mode="zk", seed=1) as cluster:
        [(error, message)] = await _create(cluster, CreatableTopic(name="huge", num_partitions=2 ** 31 - 1, replication_factor=1))
        assert error is Errors.POLICY_VIOLATION and "kafka_ref refuses 2147483647 partitions" in message
        assert [e for e, _ in await _create(cluster, CreatableTopic(name="ok", num_partitions=3, replication_factor=1))] == [Errors.NONE]
