"""Fetch names topics by id from version 13 (KIP-516), end to end through a Cluster.

Mirrors KafkaApisTest#testFetchRequestErroneousPartitions (Kafka 3.7): a partition whose topic id the
leader cannot resolve answers UNKNOWN_TOPIC_ID (100) with HW, LSO and log start offset -1, whatever
topic name the in-process dataclass carries beside the id; before version 13 the name is the topic and
the id is not on the wire at all.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

pytestmark = pytest.mark.anyio

STRAY = Uuid(42, 42)


def _request(follower: int, name: str, topic_id: Uuid, version: int | None) -> FetchRequest:
    key = TopicIdPartition(topic_id, TopicPartition(name, 0))
    return FetchRequest.build(fetch_data={key: FetchPartition(fetch_offset=0, partition_max_bytes=1 << 20)},
                              max_wait_ms=0, min_bytes=0, replica_id=follower, replica_epoch=-1,
                              session_epoch=-1, version=version)


@pytest.mark.parametrize("name, which_id, version, expected", [
    ("t", "stray", None, Errors.UNKNOWN_TOPIC_ID),
    ("t", "stray", 13, Errors.UNKNOWN_TOPIC_ID),
    ("x", "real", None, Errors.NONE),
    ("t", "stray", 12, Errors.NONE),
    ("x", "real", 12, Errors.UNKNOWN_TOPIC_OR_PARTITION),
])
async def test_fetch_request_erroneous_partitions(name, which_id, version, expected):
    async with Cluster(brokers=2, metadata_mode="zk", seed=4) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1]})
        real = cluster.active_controller().controller_context.topic_ids["t"]
        request = _request(1, name, real if which_id == "real" else STRAY, version)
        assert request.request_version() == (16 if version is None else version)
        response = await cluster.network.send(1, 0, request, 5000)
        assert response.error_code == 0
        partition = response.responses[0].partitions[0]
        assert Errors.for_code(partition.error_code) is expected
        if expected is not Errors.NONE:
            assert (partition.high_watermark, partition.last_stable_offset, partition.log_start_offset) == (-1, -1, -1)


def test_fetch_data_by_version():
    """Mirrors FetchRequest#fetchData: v13+ resolves ids through the broker's map ("" when unknown); v12 and
    older use the names and carry no id."""
    key = TopicIdPartition(STRAY, TopicPartition("t", 0))
    names = {Uuid(7, 7): "t"}
    v16 = _request(1, "t", STRAY, None)
    assert list(v16.fetch_data(names)) == [TopicIdPartition(STRAY, TopicPartition("", 0))]
    assert list(v16.fetch_data({STRAY: "u"})) == [TopicIdPartition(STRAY, TopicPartition("u", 0))]
    v12 = _request(1, "t", STRAY, 12)
    assert list(v12.fetch_data(names)) == [TopicIdPartition(ZERO_UUID, TopicPartition("t", 0))]
    # Kafka's builder picks v12 when a topic has no id.
    assert _request(1, "t", ZERO_UUID, None).request_version() == 12
    assert key.topic_id == STRAY
