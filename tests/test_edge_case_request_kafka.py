"""Requests with unusual headers, over a real socket (`kafka-ref serve`'s listener).

Ports of Kafka 3.8.0's ``EdgeCaseRequestTest`` in ZooKeeper and KRaft mode: a produce request with
an empty client id and correlation id -1 is answered normally (the answer parses to its end and
echoes the correlation id); a frame holding only a header, an api key of -1, an api version of -1,
or a header cut after the api key and version closes that connection, and the broker keeps
serving. Kafka's test sends Produce at its latest version; kafka_ref's wire speaks Produce up to
v9, its latest here. Kafka's header-only case uses Produce v1, which kafka_ref's listener does not
advertise (v3 and later), so that frame is refused as an unsupported version, which also closes
the connection in Kafka.
"""

from __future__ import annotations

import struct

import pytest
from kafka.protocol.metadata import ApiVersionsRequest as KApiVersionsRequest
from kafka.protocol.metadata import ApiVersionsResponse as KApiVersionsResponse
from kafka.protocol.producer import ProduceRequest as KProduceRequest
from kafka.protocol.producer import ProduceResponse as KProduceResponse
from kafka.record.memory_records import MemoryRecordsBuilder

from kafka_ref.cluster import Cluster
from kafka_ref.common.requests.api_keys import ApiKeys
from test_wire_protocol import _closed_by_peer, _connect, _read_response, _receive_exactly

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])
PRODUCE_VERSION = 9


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _request_header_bytes(api_key: int, api_version: int, client_id: str = "", correlation_id: int = -1) -> bytes:
    """EdgeCaseRequestTest#requestHeaderBytes: key, version, correlation id, client id (and the
    empty tagged fields of a flexible header: Produce v9 uses header v2)."""
    header = struct.pack(">hhi", api_key, api_version, correlation_id)
    header += struct.pack(">h", len(client_id)) + client_id.encode()
    flexible = api_key == ApiKeys.PRODUCE and api_version >= 9
    return header + (b"\x00" if flexible else b"")


async def _verify_disconnect(bootstrap: str, frame_body: bytes) -> None:
    """EdgeCaseRequestTest#verifyDisconnect, then a second connection still works. (Kafka's helper
    sends an api-key -1 header whatever frame it is given; this one sends the frame given.)"""
    async with await _connect(bootstrap) as stream:
        await stream.send(struct.pack(">i", len(frame_body)) + frame_body)
        assert await _closed_by_peer(stream)
    async with await _connect(bootstrap) as good:
        request = KApiVersionsRequest(client_software_name="x", client_software_version="1")
        request.API_VERSION = 3
        request.with_header(correlation_id=5, client_id="edge")
        await good.send(request.encode(header=True, framed=True))
        response = await _read_response(good, KApiVersionsResponse, 3)
        assert (response.header.correlation_id, response.error_code) == (5, 0)


@BOTH
async def test_produce_request_with_null_client_id(mode: str):
    """Mirrors EdgeCaseRequestTest#testProduceRequestWithNullClientId."""
    async with Cluster(brokers=1, metadata_mode=mode, clock="wall") as cluster, cluster.serve() as bootstrap:
        await cluster.create_topic("topic", 1, 1)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.append(timestamp=1000, key=None, value=b"message", headers=[])
        builder.close()
        body = KProduceRequest(transactional_id=None, acks=1, timeout_ms=10000, topic_data=[
            KProduceRequest.TopicProduceData(name="topic", partition_data=[
                KProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=bytes(builder.buffer()))])])
        body.API_VERSION = PRODUCE_VERSION
        frame = _request_header_bytes(ApiKeys.PRODUCE, PRODUCE_VERSION, "", -1) + body.encode(header=False)
        async with await _connect(bootstrap) as stream:
            await stream.send(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", await _receive_exactly(stream, 4))[0]
            raw = await _receive_exactly(stream, size)
        response = KProduceResponse.decode(raw, version=PRODUCE_VERSION, header=True)
        assert response.header.correlation_id == -1
        assert len(response.responses) == 1 and len(response.responses[0].partition_responses) == 1
        assert response.responses[0].partition_responses[0].error_code == 0


@BOTH
async def test_header_only_request(mode: str):
    """Mirrors EdgeCaseRequestTest#testHeaderOnlyRequest."""
    async with Cluster(brokers=1, metadata_mode=mode, clock="wall") as cluster, cluster.serve() as bootstrap:
        await _verify_disconnect(bootstrap, _request_header_bytes(ApiKeys.PRODUCE, 1))


@BOTH
async def test_invalid_api_key_request(mode: str):
    """Mirrors EdgeCaseRequestTest#testInvalidApiKeyRequest."""
    async with Cluster(brokers=1, metadata_mode=mode, clock="wall") as cluster, cluster.serve() as bootstrap:
        await _verify_disconnect(bootstrap, _request_header_bytes(-1, 0))


@BOTH
async def test_invalid_api_version_request(mode: str):
    """Mirrors EdgeCaseRequestTest#testInvalidApiVersionRequest."""
    async with Cluster(brokers=1, metadata_mode=mode, clock="wall") as cluster, cluster.serve() as bootstrap:
        await _verify_disconnect(bootstrap, _request_header_bytes(ApiKeys.PRODUCE, -1))


@BOTH
async def test_malformed_header_request(mode: str):
    """Mirrors EdgeCaseRequestTest#testMalformedHeaderRequest: only the api key and version."""
    async with Cluster(brokers=1, metadata_mode=mode, clock="wall") as cluster, cluster.serve() as bootstrap:
        await _verify_disconnect(bootstrap, struct.pack(">hh", ApiKeys.PRODUCE, 1))
