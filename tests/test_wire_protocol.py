"""The wire layer on its own: schema mapping, ApiVersions, unsupported requests, fuzzed frames.

Mirrors the intent of Kafka's SocketServerTest (a malformed or oversized request closes only
its own connection; the processor keeps serving others), ApiVersionsRequestTest (an
unsupported ApiVersions version is answered v0 with UNSUPPORTED_VERSION and the supported
range, KIP-511) and the generated-message round trips of MessageTest.
"""

from __future__ import annotations

import random
import struct

import anyio
import pytest
from kafka.protocol.metadata import ApiVersionsRequest as KApiVersionsRequest
from kafka.protocol.metadata import ApiVersionsResponse as KApiVersionsResponse
from kafka.protocol.metadata import MetadataRequest as KMetadataRequest
from kafka.protocol.metadata import MetadataResponse as KMetadataResponse
from kafka.protocol.producer import ProduceRequest as KProduceRequest
from kafka.record.memory_records import MemoryRecordsBuilder

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.wire.apis import WIRE_APIS, api_versions_response
from kafka_ref.wire.codec import from_wire, to_wire, unmapped_fields

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


# ------------------------------------------------------------------ mapping (no sockets)


@pytest.mark.parametrize("key", sorted(WIRE_APIS))
def test_every_dataclass_field_has_a_schema_field(key):
    """The dataclasses and the JSON schemas describe the same messages (names match, recursively)."""
    api = WIRE_APIS[key]
    assert unmapped_fields(api.request_type, api.wire_request._struct) == []
    assert unmapped_fields(api.response_type, api.wire_response._struct) == []


def test_produce_request_decodes_records_built_by_kafka_python():
    """kafka-python's record builder is an independent oracle for our batch parsing."""
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for i in range(3):
        builder.append(timestamp=1000 + i, key=None, value=b"v%d" % i, headers=[])
    builder.close()
    wire = KProduceRequest[9](transactional_id=None, acks=-1, timeout_ms=1500, topic_data=[
        KProduceRequest.TopicProduceData(name="t", partition_data=[
            KProduceRequest.TopicProduceData.PartitionProduceData(index=2, records=builder.buffer())])])
    decoded = KProduceRequest.decode(wire.encode(version=9), version=9)
    request = from_wire(decoded, ProduceRequest, 9)
    assert (request.acks, request.timeout_ms, request.transactional_id) == (-1, 1500, None)
    (tp, records), = request.partition_records().items()
    assert (tp.topic, tp.partition) == ("t", 2)
    assert [r.value for r in records.records()] == [b"v0", b"v1", b"v2"]
    # And back: our dataclass re-encodes to the same bytes kafka-python produced.
    assert to_wire(request, KProduceRequest, 9).encode(version=9) == wire.encode(version=9)


def test_api_versions_lists_exactly_the_wired_apis():
    response = api_versions_response()
    assert {v.api_key for v in response.api_keys} == {int(k) for k in WIRE_APIS}
    assert ApiKeys.ADD_PARTITIONS_TO_TXN not in {v.api_key for v in response.api_keys}
    produce = response.api_version(ApiKeys.PRODUCE)
    assert (produce.min_version, produce.max_version) == (3, 9)


# ------------------------------------------------------------------ over a socket


def _frame(message, version: int, correlation_id: int) -> bytes:
    message.API_VERSION = version
    message.with_header(correlation_id=correlation_id, client_id="fuzz")
    return message.encode(header=True, framed=True)


async def _read_response(stream, response_cls, version: int):
    size = struct.unpack(">i", await _receive_exactly(stream, 4))[0]
    return response_cls.decode(await _receive_exactly(stream, size), version=version, header=True)


async def _receive_exactly(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        data += await stream.receive(n - len(data))
    return data


async def _closed_by_peer(stream) -> bool:
    with anyio.fail_after(5):
        try:
            await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return True
    return False


async def _connect(bootstrap: str):
    host, port = bootstrap.split(",")[0].split(":")
    return await anyio.connect_tcp(host, int(port))


async def test_unsupported_api_versions_version_gets_v0_error_with_range():
    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        async with await _connect(bootstrap) as stream:
            # ApiVersions v99: header says so, the body is whatever a future client would send.
            frame = struct.pack(">hhi", ApiKeys.API_VERSIONS, 99, 7) + struct.pack(">h", 4) + b"fuzz" + b"\x00"
            await stream.send(struct.pack(">i", len(frame)) + frame)
            response = await _read_response(stream, KApiVersionsResponse, 0)
            assert response.header.correlation_id == 7
            assert response.error_code == Errors.UNSUPPORTED_VERSION.code
            assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 3)]
            # The connection stays usable: the client retries at v3.
            await stream.send(_frame(KApiVersionsRequest(client_software_name="x", client_software_version="1"), 3, 8))
            response = await _read_response(stream, KApiVersionsResponse, 3)
            assert response.error_code == 0 and len(response.api_keys) == len(WIRE_APIS)


async def test_unadvertised_api_closes_only_that_connection():
    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        async with await _connect(bootstrap) as good, await _connect(bootstrap) as bad:
            # AddPartitionsToTxn (24) is not advertised: Kafka closes the connection.
            frame = struct.pack(">hhi", ApiKeys.ADD_PARTITIONS_TO_TXN, 0, 1) + struct.pack(">h", 0)
            await bad.send(struct.pack(">i", len(frame)) + frame)
            assert await _closed_by_peer(bad)
            await good.send(_frame(KMetadataRequest(topics=None, allow_auto_topic_creation=False), 12, 3))
            response = await _read_response(good, KMetadataResponse, 12)
            assert response.header.correlation_id == 3
            assert [(b.node_id, b.port) for b in response.brokers] == [(0, int(bootstrap.split(":")[1]))]


async def test_fuzzed_frames_close_their_connection_and_the_broker_keeps_serving():
    """Random sizes, random bodies after real headers, and truncated frames, 120 connections."""
    rng = random.Random(19)
    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        server = cluster.wire.servers[0]
        async with await _connect(bootstrap) as good:
            for i in range(120):
                kind = i % 4
                async with await _connect(bootstrap) as bad:
                    if kind == 0:  # a negative or oversized frame size
                        await bad.send(struct.pack(">i", rng.choice([-1, -(2**31), 2**31 - 1, 104_857_601])))
                        assert await _closed_by_peer(bad)
                    elif kind == 1:  # a real header of an advertised API, then garbage
                        api = WIRE_APIS[rng.choice(sorted(WIRE_APIS))]
                        header = struct.pack(">hhi", api.key, api.max_version, i) + struct.pack(">h", 1) + b"c"
                        body = header + rng.randbytes(rng.randrange(0, 64))
                        await bad.send(struct.pack(">i", len(body)) + body)
                        # Either it fails to decode (closed) or decodes to something harmless.
                        with anyio.move_on_after(2):
                            try:
                                await bad.receive()
                            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                                pass
                    elif kind == 2:  # completely random bytes
                        await bad.send(rng.randbytes(rng.randrange(1, 200)))
                    else:  # a valid request cut short, then the client goes away
                        frame = _frame(KMetadataRequest(topics=None), 12, i)
                        await bad.send(frame[: rng.randrange(1, len(frame))])
                # Between every bad connection, the good one still gets answers.
                if i % 10 == 0:
                    await good.send(_frame(KApiVersionsRequest(client_software_name="x",
                                                               client_software_version="1"), 3, i))
                    response = await _read_response(good, KApiVersionsResponse, 3)
                    assert (response.header.correlation_id, response.error_code) == (i, 0)
            assert cluster.broker(0).is_running
            assert server.closed_for_errors >= 30


async def test_produce_with_a_bad_crc_gets_corrupt_message_and_the_connection_stays():
    """LogValidator's CRC check (LogValidatorTest#testInvalidCrc): CORRUPT_MESSAGE for that partition."""
    from kafka.protocol.producer import ProduceResponse as KProduceResponse

    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        await cluster.create_topic("t", 1, 1)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.append(timestamp=1000, key=None, value=b"payload", headers=[])
        builder.close()
        good = bytes(builder.buffer())
        bad = good[:-1] + bytes([good[-1] ^ 0xFF])  # flip the last value byte: the CRC no longer matches

        def produce(records: bytes, correlation_id: int) -> bytes:
            return _frame(KProduceRequest(transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
                KProduceRequest.TopicProduceData(name="t", partition_data=[
                    KProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=records)])]), 9, correlation_id)

        async with await _connect(bootstrap) as stream:
            await stream.send(produce(bad, 1))
            response = await _read_response(stream, KProduceResponse, 9)
            partition = response.responses[0].partition_responses[0]
            assert (partition.error_code, partition.base_offset) == (Errors.CORRUPT_MESSAGE.code, -1)
            await stream.send(produce(good, 2))
            response = await _read_response(stream, KProduceResponse, 9)
            partition = response.responses[0].partition_responses[0]
            assert (response.header.correlation_id, partition.error_code, partition.base_offset) == (2, 0, 0)


async def test_produce_with_unparsable_records_gets_a_partition_error_and_the_connection_stays():
    """ProduceRequest#validateRecords on bytes that do not parse: that partition's error, not a closed connection.

    After ProduceRequestTest#testCorruptLz4ProduceRequest (CORRUPT_MESSAGE for the partition, the
    connection open): a truncated batch (declared size past the end) is CORRUPT_MESSAGE; a magic-1
    message set in a v9 request is INVALID_RECORD (validateRecords' magic rule). The other
    partition of the same request is appended.
    """
    from kafka.protocol.producer import ProduceResponse as KProduceResponse

    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        await cluster.create_topic("t", 2, 1)

        def records(magic: int) -> bytes:
            builder = MemoryRecordsBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
            builder.append(timestamp=1000, key=None, value=b"payload", headers=[])
            builder.close()
            return bytes(builder.buffer())

        good, truncated, old_magic = records(2), records(2)[:-5], records(1)

        def produce(bad: bytes, correlation_id: int) -> bytes:
            data = KProduceRequest.TopicProduceData.PartitionProduceData
            return _frame(KProduceRequest(transactional_id=None, acks=1, timeout_ms=1000, topic_data=[
                KProduceRequest.TopicProduceData(name="t", partition_data=[data(index=0, records=bad),
                                                                          data(index=1, records=good)])]),
                9, correlation_id)

        async with await _connect(bootstrap) as stream:
            for correlation_id, (bad, error) in enumerate(
                    [(truncated, Errors.CORRUPT_MESSAGE), (old_magic, Errors.INVALID_RECORD)], start=1):
                await stream.send(produce(bad, correlation_id))
                response = await _read_response(stream, KProduceResponse, 9)
                by_partition = {p.index: p for p in response.responses[0].partition_responses}
                assert response.header.correlation_id == correlation_id
                assert (by_partition[0].error_code, by_partition[0].base_offset) == (error.code, -1)
                assert (by_partition[1].error_code, by_partition[1].base_offset) == (0, correlation_id - 1)
        assert cluster.broker(0).is_running


# Schema fields of advertised versions that no dataclass field carries, each handled by the
# API's adapter in kafka_ref/wire/apis.py (or deliberately left at its default).
ADAPTED_FIELDS = {
    "Metadata.req.include_cluster_authorized_operations",  # v8-10: no ACLs; the answer omits them
    "Metadata.resp.authorized_operations",                 # v8-10: omitted (null)
    "OffsetFetch.req.group_id", "OffsetFetch.req.topics",  # v1-7: one group (_offset_fetch_in)
    "OffsetFetch.resp.topics", "OffsetFetch.resp.error_code",  # v1-7 (_offset_fetch_out)
    "FindCoordinator.req.key",                             # v0-3 (_find_coordinator_in)
    "FindCoordinator.resp.error_code", "FindCoordinator.resp.error_message", "FindCoordinator.resp.node_id",
    "FindCoordinator.resp.host", "FindCoordinator.resp.port",  # v0-3 (_find_coordinator_out)
    "LeaveGroup.req.member_id",                            # v0-2 (_leave_group_in)
    "DeleteTopics.req.topic_names",                        # v0-5 (_delete_topics_in)
    "DescribeConfigs.resp.results.configs.is_default",     # v0 (_describe_configs_out)
}


def _schema_fields_without_dataclass_field(dc, struct, lo, hi, path):
    from kafka_ref.wire.codec import _dataclass_in, _fields, _hints, _struct_name, wire_field_name

    ours = {wire_field_name(_struct_name(struct), f.name): f for f in _fields(dc)}
    for name, field in struct.fields.items():
        if not any(field.for_version_q(v) for v in range(lo, hi + 1)):
            continue
        if name not in ours:
            yield f"{path}.{name}"
        elif field.is_struct() or field.is_struct_array():
            yield from _schema_fields_without_dataclass_field(
                _dataclass_in(_hints(dc)[ours[name].name]), field, lo, hi, f"{path}.{name}")


def test_no_schema_field_of_an_advertised_version_is_silently_dropped():
    """The reverse of the mapping test: what old versions carry reaches our dataclasses or an adapter."""
    found = set()
    for api in WIRE_APIS.values():
        for side, dc, wire in (("req", api.request_type, api.wire_request), ("resp", api.response_type, api.wire_response)):
            found |= set(_schema_fields_without_dataclass_field(
                dc, wire._struct, api.min_version, api.max_version, f"{api.key.api_name}.{side}"))
    assert found == ADAPTED_FIELDS


@pytest.mark.parametrize("version", [0, 4, 6])
def test_delete_topics_names_reach_the_request_at_every_version(version):
    from kafka.protocol.admin import DeleteTopicsRequest as KDeleteTopicsRequest

    if version < 6:
        wire = KDeleteTopicsRequest(topic_names=["a", "b"], timeout_ms=5)
    else:
        wire = KDeleteTopicsRequest(topics=[KDeleteTopicsRequest.DeleteTopicState(name="a"),
                                            KDeleteTopicsRequest.DeleteTopicState(name="b")], timeout_ms=5)
    api = WIRE_APIS[ApiKeys.DELETE_TOPICS]
    decoded = api.wire_request.decode(wire.encode(version=version), version=version)
    request = api.request_in(decoded, version, from_wire(decoded, api.request_type, version))
    assert (request.topic_names(), request.timeout_ms) == (["a", "b"], 5)


async def test_acks0_produce_gets_no_answer_and_a_failed_one_closes_the_connection():
    """KafkaApis#handleProduceRequest with acks=0: no response; on an error the broker closes the connection."""
    async with Cluster(brokers=1, metadata_mode="kraft", clock="wall") as cluster, cluster.serve() as bootstrap:
        await cluster.create_topic("t", 1, 1)
        builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
        builder.append(timestamp=1000, key=None, value=b"fire-and-forget", headers=[])
        builder.close()

        def produce(partition: int, correlation_id: int) -> bytes:
            return _frame(KProduceRequest(transactional_id=None, acks=0, timeout_ms=1000, topic_data=[
                KProduceRequest.TopicProduceData(name="t", partition_data=[
                    KProduceRequest.TopicProduceData.PartitionProduceData(index=partition,
                                                                          records=builder.buffer())])]),
                9, correlation_id)

        async with await _connect(bootstrap) as stream:
            # 1. A good acks=0 produce: nothing comes back; the next request is answered next.
            await stream.send(produce(0, 1))
            await stream.send(_frame(KMetadataRequest(topics=None), 12, 2))
            response = await _read_response(stream, KMetadataResponse, 12)
            assert response.header.correlation_id == 2
            # 2. acks=0 to a partition that does not exist: the broker closes the connection.
            await stream.send(produce(7, 3))
            await anyio.sleep(0.2)
            try:
                await stream.send(_frame(KMetadataRequest(topics=None), 12, 4))
            except (anyio.BrokenResourceError, ConnectionResetError):
                pass
            assert await _closed_by_peer(stream)
        assert cluster.broker(0).replica_manager.get_log(TopicPartition("t", 0)).log_end_offset == 1
