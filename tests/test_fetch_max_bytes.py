"""The broker's fetch.max.bytes caps every fetch response (KIP-541).

Mirrors kafka.server.FetchRequestMaxBytesTest#testConsumeMultipleRecords: with fetch.max.bytes=1024
on the broker, a consumer fetch asking for Int.MaxValue bytes gets whole batches up to the cap,
and always at least its first batch however large (the first batch is never split).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

TP = TopicPartition("testTopic", 0)
MESSAGES = [bytes(i % 5 for i in range(length)) for length in (1, 500, 1040, 500, 50)]
INT_MAX = 2**31 - 1


async def _fetch_values(cluster: Cluster, fetch_offset: int) -> list[bytes]:
    request = FetchRequest.build(
        fetch_data={TP: FetchPartition(partition=0, fetch_offset=fetch_offset, partition_max_bytes=INT_MAX)},
        max_wait_ms=INT_MAX, min_bytes=0, max_bytes=INT_MAX, version=12)
    response = await cluster.send(0, request)
    data = response.response_data()[TP]
    assert data.error_code == Errors.NONE.code
    return [record.value for record in FetchResponse.records_or_fail(data).records()]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_consume_multiple_records(mode):
    async with Cluster(brokers=1, metadata_mode=mode, config={"fetch.max.bytes": 1024}) as cluster:
        await cluster.create_topic(TP.topic, partitions=1, replication_factor=1)
        for i, message in enumerate(MESSAGES):   # one batch each
            result = await cluster.produce(0, TP.topic, 0, [(bytes([i]), message)])
            assert result.error is Errors.NONE
        assert await _fetch_values(cluster, 0) == MESSAGES[0:2]
        assert await _fetch_values(cluster, 2) == MESSAGES[2:3]
        assert await _fetch_values(cluster, 3) == MESSAGES[3:5]
