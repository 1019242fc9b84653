"""Tests for kafka_ref.common.records (the v2 record batch format, magic 2).

kafka-python's independent implementation (kafka.record.default_records) is the oracle: batches
we build must parse there with the same content and a valid CRC, and batches it builds must
parse here. Where a test follows one of Kafka's own tests, its docstring names it.
"""

from __future__ import annotations

import pickle
import struct
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # kafka-python's import-time importlib.resources deprecations
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch as KpBatch
    from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder
    from kafka.record.memory_records import MemoryRecords as KpMemoryRecords
    from kafka.record.util import encode_varint as kp_encode_varint

from kafka_ref.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
)
from kafka_ref.common.records import (
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    MemoryRecords,
    MemoryRecordsBuilder,
    Record,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    write_header,
)
from kafka_ref.common.records import varint
from kafka_ref.common.records.constants import HEADER_STRUCT
from kafka_ref.common.records.record import size_in_bytes as record_size_in_bytes

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
KP_GZIP = 1


# -- helpers ---------------------------------------------------------------------------------


def kp_parse(buffer: bytes) -> tuple[KpBatch, list[tuple]]:
    """Parse with kafka-python: CRC checked before iterating (its iterator forbids it after)."""
    batch = KpBatch(buffer)
    assert batch.validate_crc() is True
    records = [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in batch]
    return batch, records


def kp_build(
    entries: list[tuple[int, int, bytes | None, bytes | None, list]],
    *,
    compression: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
) -> bytes:
    builder = KpBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=is_transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 30,
    )
    for offset, timestamp, key, value, headers in entries:
        assert builder.append(offset, timestamp, key, value, headers) is not None
    return bytes(builder.build())


def ours(batch: RecordBatch) -> list[tuple]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in batch]


def with_count_and_crc(buffer: bytes, record_count: int) -> bytes:
    """Rewrite the record count and re-stamp a correct CRC (a well-checksummed lie)."""
    fields = list(HEADER_STRUCT.unpack_from(buffer))
    fields[12] = record_count
    out = bytearray(buffer)
    HEADER_STRUCT.pack_into(out, 0, *fields)
    return _restamp(out)


def _restamp(out: bytearray) -> bytes:
    import crc32c

    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def batch_from_body(body: bytes, record_count: int = 1) -> bytes:
    """A header (valid CRC) around a hand-made records section."""
    buffer = bytearray(RECORD_BATCH_OVERHEAD) + body
    write_header(
        buffer,
        base_offset=0,
        last_offset_delta=max(record_count - 1, 0),
        compression=CompressionType.NONE,
        timestamp_type=TimestampType.CREATE_TIME,
        first_timestamp=0,
        max_timestamp=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        is_transactional=False,
        is_control_batch=False,
        partition_leader_epoch=0,
        num_records=record_count,
    )
    return bytes(buffer)


SAMPLE = [
    SimpleRecord(b"k0", b"v0", (("h1", b"x"), ("h2", None)), 1000),
    SimpleRecord(None, b"value-only", (), 1005),
    SimpleRecord(b"key-only", None, (), 999),
    SimpleRecord(None, None, (("\u00e9t\u00e9", b""),), None),
]


# -- constants and varints ------------------------------------------------------------------


def test_constants_match_kafka_layout():
    """Mirrors DefaultRecordBatch's static offsets: a 61-byte header, magic 2, -1 markers."""
    assert RECORD_BATCH_OVERHEAD == 61
    assert HEADER_STRUCT.size == 61
    assert MAGIC_VALUE_V2 == 2
    assert NO_PRODUCER_ID == -1
    assert NO_PARTITION_LEADER_EPOCH == -1
    assert NO_TIMESTAMP == -1


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (63, "7e"),
        (-64, "7f"),
        (64, "8001"),
        (-65, "8101"),
        (8191, "fe7f"),
        (-8192, "ff7f"),
        (8192, "808001"),
        (-8193, "818001"),
        (1048575, "feff7f"),
        (-1048576, "ffff7f"),
        (1048576, "80808001"),
        (INT32_MAX, "feffffff0f"),
        (INT32_MIN, "ffffffff0f"),
    ],
)
def test_varint_known_encodings(value, encoded):
    """Mirrors org.apache.kafka.common.utils.ByteUtilsTest#testVarintSerde."""
    assert varint.encode_varint(value).hex() == encoded
    assert varint.size_of_varint(value) == len(encoded) // 2
    assert varint.read_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (INT64_MAX, "feffffffffffffffff01"),
        (INT64_MIN, "ffffffffffffffffff01"),
    ],
)
def test_varlong_known_encodings(value, encoded):
    """Mirrors org.apache.kafka.common.utils.ByteUtilsTest#testVarlongSerde."""
    assert varint.encode_varlong(value).hex() == encoded
    assert varint.size_of_varlong(value) == len(encoded) // 2
    assert varint.read_varlong(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


def test_varint_too_long_and_out_of_range():
    """Mirrors ByteUtilsTest#testInvalidVarint / #testInvalidVarlong."""
    with pytest.raises(ValueError, match="Varint is too long"):
        varint.read_varint(bytes.fromhex("ffffffffff01"), 0)
    with pytest.raises(ValueError, match="Varlong is too long"):
        varint.read_varlong(bytes.fromhex("ffffffffffffffffffff01"), 0)
    with pytest.raises(ValueError):
        varint.encode_varint(INT32_MAX + 1)
    with pytest.raises(ValueError):
        varint.encode_varlong(INT64_MIN - 1)
    with pytest.raises(IndexError):
        varint.read_varint(bytes.fromhex("80"), 0)


@given(st.integers(INT32_MIN, INT32_MAX), st.integers(INT64_MIN, INT64_MAX))
def test_varints_round_trip(int_value, long_value):
    """Varints round-trip and agree with kafka-python's (64-bit zig-zag) encoder in range."""
    out = bytearray()
    kp_encode_varint(int_value, out.append)
    assert varint.encode_varint(int_value) == bytes(out)
    data = b"\xaa" + varint.encode_varint(int_value) + varint.encode_varlong(long_value)
    value, pos = varint.read_varint(data, 1)
    assert value == int_value
    value, pos = varint.read_varlong(data, pos)
    assert (value, pos) == (long_value, len(data))


# -- our batches parsed by kafka-python ------------------------------------------------------


def test_built_batch_parses_with_kafka_python():
    """Ours → kafka-python: same offsets, keys, values, headers, timestamps; valid CRC."""
    batch = RecordBatch.build(SAMPLE, base_offset=42, partition_leader_epoch=7, timestamp=777)
    batch.ensure_valid()
    kp, records = kp_parse(batch.buffer)
    assert records == [
        (42, 1000, b"k0", b"v0", [("h1", b"x"), ("h2", None)]),
        (43, 1005, None, b"value-only", []),
        (44, 999, b"key-only", None, []),
        (45, 777, None, None, [("\u00e9t\u00e9", b"")]),
    ]
    assert kp.base_offset == 42
    assert kp.leader_epoch == 7
    assert kp.magic == 2
    assert kp.last_offset_delta == 3
    assert kp.first_timestamp == 1000
    assert kp.max_timestamp == 1005
    assert kp.records_count == 4
    assert kp.producer_id == -1
    assert kp.compression_type == 0
    assert kp.crc == batch.crc
    assert ours(batch) == records


def test_header_fields_of_built_batch():
    """Mirrors DefaultRecordBatchTest#buildDefaultRecordBatch: every header field as set."""
    batch = RecordBatch.build(
        SAMPLE[:2],
        base_offset=100,
        partition_leader_epoch=3,
        producer_id=5000,
        producer_epoch=2,
        base_sequence=17,
        is_transactional=True,
    )
    assert batch.base_offset == 100
    assert batch.batch_length == batch.size_in_bytes - 12
    assert batch.size_in_bytes == len(batch.buffer)
    assert batch.partition_leader_epoch == 3
    assert batch.magic == 2
    assert batch.attributes == 0x10
    assert batch.last_offset_delta == 1
    assert batch.last_offset == 101
    assert batch.next_offset == 102
    assert batch.base_timestamp == 1000
    assert batch.first_timestamp == 1000
    assert batch.max_timestamp == 1005
    assert batch.producer_id == 5000
    assert batch.producer_epoch == 2
    assert batch.base_sequence == 17
    assert batch.last_sequence == 18
    assert batch.record_count == 2
    assert batch.compression_type == CompressionType.NONE == "none"
    assert batch.timestamp_type == TimestampType.CREATE_TIME == "create"
    assert batch.is_transactional is True
    assert batch.is_control_batch is False
    assert batch.has_producer_id is True
    assert [r.sequence for r in batch] == [17, 18]
    kp, _ = kp_parse(batch.buffer)
    assert (kp.producer_id, kp.producer_epoch, kp.base_sequence) == (5000, 2, 17)
    assert kp.is_transactional is True
    assert kp.last_sequence == 18


def test_record_fields_and_sizes():
    """Mirrors DefaultRecordTest#testBasicSerde: deltas, sizes and absolute values of records."""
    batch = RecordBatch.build(SAMPLE, base_offset=10, timestamp=2000)
    records = batch.records()
    assert [r.offset_delta for r in records] == [0, 1, 2, 3]
    assert [r.timestamp_delta for r in records] == [0, 5, -1, 1000]
    assert [r.timestamp for r in records] == [1000, 1005, 999, 2000]
    assert [r.sequence for r in records] == [-1, -1, -1, -1]
    for record, simple in zip(records, SAMPLE):
        assert isinstance(record, Record)
        assert record.size_in_bytes == record_size_in_bytes(
            record.offset_delta, record.timestamp_delta, simple.key, simple.value, simple.headers
        )
    assert sum(r.size_in_bytes for r in records) == batch.size_in_bytes - RECORD_BATCH_OVERHEAD
    assert records[0].has_key() and records[0].key_size() == 2
    assert not records[1].has_key() and records[1].key_size() == -1
    assert not records[2].has_value() and records[2].value_size() == -1
    assert records[3].to_simple_record() == SimpleRecord(None, None, (("\u00e9t\u00e9", b""),), 2000)


def test_default_timestamp_is_no_timestamp_when_none():
    """Records without a timestamp carry NO_TIMESTAMP (-1), as Kafka's SimpleRecord(value) does."""
    batch = RecordBatch.build([SimpleRecord(b"a"), SimpleRecord(b"b")])
    assert (batch.base_timestamp, batch.max_timestamp) == (-1, -1)
    assert [r.timestamp for r in batch] == [-1, -1]
    _, records = kp_parse(batch.buffer)
    assert [r[1] for r in records] == [-1, -1]


def test_null_key_value_and_empty_headers():
    """Mirrors DefaultRecordTest#testBasicSerdeNullKeyAndValue style: nulls survive both ways."""
    batch = RecordBatch.build([SimpleRecord(None, None, (), 5)])
    (record,) = batch.records()
    assert (record.key, record.value, record.headers) == (None, None, ())
    _, records = kp_parse(batch.buffer)
    assert records == [(0, 5, None, None, [])]
    kp_buffer = kp_build([(0, 5, None, None, [])])
    assert ours(RecordBatch(kp_buffer)) == [(0, 5, None, None, [])]


def test_many_records_parse_with_kafka_python():
    simple = [SimpleRecord(f"key-{i}".encode(), f"value-{i}".encode() * (i % 7), (), 10_000 + i) for i in range(5000)]
    batch = RecordBatch.build(simple, base_offset=1_000_000)
    assert batch.record_count == 5000
    assert batch.last_offset == 1_004_999
    _, records = kp_parse(batch.buffer)
    assert records == ours(batch)
    assert records[4999] == (1_004_999, 14_999, b"key-4999", b"value-4999" * (4999 % 7), [])


def test_gzip_round_trip_and_kafka_python_reads_it():
    simple = [SimpleRecord(b"key", b"payload " * 50, (("h", b"v"),), 1_700_000_000_000 + i) for i in range(100)]
    batch = RecordBatch.build(simple, compression="gzip", base_offset=5)
    batch.ensure_valid()
    assert batch.compression_type == CompressionType.GZIP
    assert batch.is_compressed()
    assert batch.attributes & 0x07 == 1
    plain = RecordBatch.build(simple, base_offset=5)
    assert batch.size_in_bytes < plain.size_in_bytes
    assert ours(batch) == ours(plain)
    kp, records = kp_parse(batch.buffer)
    assert kp.compression_type == KP_GZIP
    assert records == ours(plain)
    # Deterministic output: equal inputs give equal bytes.
    assert RecordBatch.build(simple, compression="gzip", base_offset=5) == batch


@pytest.mark.parametrize(("codec", "kp_codec"), [("snappy", 2), ("lz4", 3), ("zstd", 4)])
def test_snappy_lz4_zstd_round_trip_and_kafka_python_reads_them(codec, kp_codec):
    """Mirrors DefaultRecordBatchTest#testCompressionTypes-style round trips for Kafka's other codecs:
    the batch names its codec in the attributes, reads back the same records, and kafka-python
    (whose codecs follow Kafka's stream formats: xerial snappy, LZ4 frame, zstd frame) reads it too;
    our reader reads kafka-python's batches of each codec."""
    simple = [SimpleRecord(b"key", b"payload " * 50, (("h", b"v"),), 1_700_000_000_000 + i) for i in range(100)]
    batch = RecordBatch.build(simple, compression=codec, base_offset=5)
    batch.ensure_valid()
    assert (batch.compression_type, batch.attributes & 0x07) == (codec, kp_codec)
    plain = RecordBatch.build(simple, base_offset=5)
    assert batch.size_in_bytes < plain.size_in_bytes
    assert ours(batch) == ours(plain)
    kp, records = kp_parse(batch.buffer)
    assert kp.compression_type == kp_codec
    assert records == ours(plain)
    theirs = RecordBatch(kp_build([(i, r.timestamp, r.key, r.value, list(r.headers)) for i, r in enumerate(simple)],
                                  compression=kp_codec))
    assert [(r.key, r.value) for r in theirs] == [(r.key, r.value) for r in simple]


# -- kafka-python batches parsed by us ------------------------------------------------------


def test_kafka_python_batch_parses_with_ours():
    """kafka-python → ours: same fields, ensure_valid passes."""
    entries = [
        (0, 1_600_000_000_000, b"k1", b"v1", [("a", b"1")]),
        (1, 1_600_000_000_010, None, b"v2", []),
        (2, 1_599_999_999_990, b"k3", None, [("b", None), ("c", b"")]),
    ]
    buffer = kp_build(entries, producer_id=99, producer_epoch=1, base_sequence=40)
    batch = RecordBatch(buffer)
    batch.ensure_valid()
    assert batch.is_valid()
    assert ours(batch) == [(o, t, k, v, h) for o, t, k, v, h in entries]
    assert batch.base_offset == 0
    assert batch.last_offset_delta == 2
    assert batch.record_count == 3
    assert batch.base_timestamp == 1_600_000_000_000
    assert batch.max_timestamp == 1_600_000_000_010
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (99, 1, 40)
    assert [r.sequence for r in batch] == [40, 41, 42]
    assert batch.compression_type == "none"
    assert batch.timestamp_type == "create"
    # Rebuilding the same content with ours gives the same bytes, save the epoch kafka-python zeroes.
    rebuilt = RecordBatch.build(
        [SimpleRecord(k, v, tuple(h), t) for _, t, k, v, h in entries],
        partition_leader_epoch=0,
        producer_id=99,
        producer_epoch=1,
        base_sequence=40,
    )
    assert rebuilt.buffer == buffer


def test_kafka_python_gzip_batch_parses_with_ours():
    entries = [(i, 1000 + i, b"key%d" % i, b"abcdefgh" * 40, []) for i in range(50)]
    buffer = kp_build(entries, compression=KP_GZIP)
    batch = RecordBatch(buffer)
    batch.ensure_valid()
    assert batch.compression_type == CompressionType.GZIP
    assert ours(batch) == [(o, t, k, v, h) for o, t, k, v, h in entries]


def test_memory_records_interoperate_with_kafka_python():
    """Mirrors MemoryRecordsTest#testIterator: several batches back to back, both readers."""
    first = RecordBatch.build(SAMPLE[:2], base_offset=0)
    second = RecordBatch.build(SAMPLE[2:], base_offset=2, compression="gzip")
    memory = MemoryRecords.of([first, second])
    kp_batches = list(KpMemoryRecords(memory.to_bytes()))
    assert [b.base_offset for b in kp_batches] == [0, 2]
    kp_records = []
    for kp in kp_batches:
        assert kp.validate_crc()
        kp_records += [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in kp]
    assert kp_records == [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in memory.records()]
    # kafka-python buffers concatenated, split by ours.
    raw = kp_build([(0, 1, b"a", b"b", [])]) + kp_build([(0, 2, b"c", b"d", []), (1, 3, None, b"e", [])])
    parsed = MemoryRecords.from_bytes(raw)
    assert len(parsed) == 2
    assert [(r.key, r.value) for r in parsed.records()] == [(b"a", b"b"), (b"c", b"d"), (None, b"e")]
    assert parsed.size_in_bytes == len(raw)


# -- rewriting the fields outside the CRC ---------------------------------------------------


def test_with_base_offset_keeps_crc_and_records():
    """Mirrors DefaultRecordBatchTest#testSetLastOffset."""
    batch = RecordBatch.build(SAMPLE, base_offset=0, timestamp=3)
    moved = batch.with_base_offset(1000)
    assert moved is not batch and moved != batch
    assert moved.base_offset == 1000
    assert moved.last_offset == 1003
    assert moved.crc == batch.crc
    assert moved.is_valid()
    moved.ensure_valid()
    assert moved.buffer[8:] == batch.buffer[8:]
    assert [r.offset for r in moved] == [1000, 1001, 1002, 1003]
    assert [r[1:] for r in ours(moved)] == [r[1:] for r in ours(batch)]
    assert batch.with_last_offset(1003) == moved
    _, records = kp_parse(moved.buffer)
    assert records == ours(moved)


def test_with_partition_leader_epoch_keeps_crc():
    """Mirrors DefaultRecordBatchTest#testSetPartitionLeaderEpoch."""
    batch = RecordBatch.build(SAMPLE, base_offset=7)
    stamped = batch.with_partition_leader_epoch(15)
    assert stamped.partition_leader_epoch == 15
    assert batch.partition_leader_epoch == -1
    assert stamped.crc == batch.crc
    stamped.ensure_valid()
    assert stamped.buffer[:12] == batch.buffer[:12] and stamped.buffer[16:] == batch.buffer[16:]
    assert ours(stamped) == ours(batch)
    kp, _ = kp_parse(stamped.buffer)
    assert kp.leader_epoch == 15


def test_with_offset_and_epoch_on_compressed_batch():
    simple = [SimpleRecord(b"k", b"v" * 100, (), 50 + i) for i in range(20)]
    batch = RecordBatch.build(simple, compression="gzip")
    stamped = batch.with_offset_and_epoch(500, 4)
    assert (stamped.base_offset, stamped.partition_leader_epoch, stamped.last_offset) == (500, 4, 519)
    assert stamped.crc == batch.crc
    assert stamped.buffer[16:] == batch.buffer[16:]
    stamped.ensure_valid()
    assert [r.offset for r in stamped] == list(range(500, 520))
    assert [r.value for r in stamped] == [b"v" * 100] * 20
    kp, records = kp_parse(stamped.buffer)
    assert (kp.base_offset, kp.leader_epoch) == (500, 4)
    assert records == ours(stamped)


def test_with_max_timestamp_log_append_time():
    """Mirrors DefaultRecordBatchTest#testSetLogAppendTime: type bit and max timestamp, new CRC."""
    batch = RecordBatch.build(SAMPLE[:3], base_offset=0)
    stamped = batch.with_max_timestamp("log_append", 9_999)
    assert stamped.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert stamped.max_timestamp == 9_999
    assert stamped.base_timestamp == batch.base_timestamp
    assert stamped.crc != batch.crc
    stamped.ensure_valid()
    assert [r.timestamp for r in stamped] == [9_999, 9_999, 9_999]
    kp, records = kp_parse(stamped.buffer)
    assert kp.timestamp_type == 1
    assert [r[1] for r in records] == [9_999, 9_999, 9_999]
    assert stamped.with_max_timestamp(TimestampType.LOG_APPEND_TIME, 9_999) is stamped


def test_build_with_log_append_time():
    batch = RecordBatch.build(SAMPLE[:2], timestamp_type="log_append", log_append_time=123_456)
    assert batch.timestamp_type == "log_append"
    assert batch.attributes & 0x08
    assert batch.max_timestamp == 123_456
    assert batch.base_timestamp == 1000
    assert [r.timestamp for r in batch] == [123_456, 123_456]
    assert [r.timestamp_delta for r in batch] == [0, 5]


# -- corruption and bad input --------------------------------------------------------------


def test_flipped_byte_in_records_fails_crc():
    """Mirrors DefaultRecordBatchTest#testInvalidCrc."""
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    corrupted = bytearray(batch.buffer)
    corrupted[RECORD_BATCH_OVERHEAD + 5] ^= 0xFF
    bad = RecordBatch(bytes(corrupted))
    assert bad.is_valid() is False
    with pytest.raises(CorruptRecordException, match=r"Record is corrupt \(stored crc = \d+, computed crc = \d+\)"):
        bad.ensure_valid()
    assert KpBatch(bytes(corrupted)).validate_crc() is False


def test_flipped_byte_in_crc_covered_header_fails_but_epoch_does_not():
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    attributes_flip = bytearray(batch.buffer)
    attributes_flip[22] ^= 0x10  # the transactional bit
    with pytest.raises(CorruptRecordException):
        RecordBatch(bytes(attributes_flip)).ensure_valid()
    epoch_flip = bytearray(batch.buffer)
    epoch_flip[15] ^= 0x01  # partition leader epoch lies outside the CRC
    RecordBatch(bytes(epoch_flip)).ensure_valid()


def test_wrong_magic_raises():
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    for magic in (0, 1, 3, 0xFF):
        raw = bytearray(batch.buffer)
        raw[16] = magic
        with pytest.raises(CorruptRecordException, match="Invalid magic"):
            RecordBatch(bytes(raw))
    legacy = bytearray(batch.buffer)
    legacy[16] = 1
    with pytest.raises(CorruptRecordException, match="unsupported magic 1"):
        MemoryRecords.from_bytes(bytes(legacy))
    future = bytearray(batch.buffer)
    future[16] = 7
    with pytest.raises(CorruptRecordException, match="Invalid magic found in record: 7"):
        MemoryRecords.from_bytes(bytes(future))


def test_truncated_buffer_raises():
    """Mirrors DefaultRecordBatchTest#testSizeInBytes / ByteBufferLogInputStreamTest#iteratorRaisesOnTooSmallRecords."""
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    with pytest.raises(CorruptRecordException, match="declared length"):
        RecordBatch(batch.buffer[:-1])
    with pytest.raises(CorruptRecordException, match="smaller than the minimum allowed overhead 61"):
        RecordBatch(batch.buffer[:40])
    with pytest.raises(CorruptRecordException, match="Truncated record batch"):
        MemoryRecords.from_bytes(batch.buffer[:-3])
    with pytest.raises(CorruptRecordException, match="Truncated record batch"):
        MemoryRecords.from_bytes(batch.buffer + batch.buffer[:5])
    too_small = bytearray(batch.buffer)
    struct.pack_into(">i", too_small, 8, 10)
    with pytest.raises(CorruptRecordException, match="less than the minimum record overhead"):
        MemoryRecords.from_bytes(bytes(too_small))
    with pytest.raises(CorruptRecordException, match="exceeds the largest allowable message size"):
        MemoryRecords.from_bytes(batch.buffer, max_message_size=50)


def test_partial_trailing_batch_dropped_when_allowed():
    """Mirrors the fetch reader (ByteBufferLogInputStream#nextBatch) stopping at a partial batch."""
    first = RecordBatch.build(SAMPLE[:2], base_offset=0)
    second = RecordBatch.build(SAMPLE[2:], base_offset=2)
    raw = first.buffer + second.buffer
    for cut in (1, 10, second.size_in_bytes - 1):
        parsed = MemoryRecords.from_bytes(raw[:-cut], allow_partial_trailing=True)
        assert parsed.batches == (first,)
        assert parsed.size_in_bytes == first.size_in_bytes
    assert MemoryRecords.from_bytes(raw[:5], allow_partial_trailing=True) is MemoryRecords.EMPTY


def test_negative_record_count_fails_validation():
    """Mirrors DefaultRecordBatchTest#testInvalidRecordCountTooManyNonCompressedV2 (count side)."""
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    bad = RecordBatch(with_count_and_crc(batch.buffer, -1))
    assert bad.is_valid()  # the CRC itself is right
    with pytest.raises(CorruptRecordException, match="invalid record count -1"):
        bad.ensure_valid()
    with pytest.raises(InvalidRecordException, match="Found invalid record count -1"):
        bad.records()


def test_record_count_disagreeing_with_records():
    """Mirrors DefaultRecordBatchTest#testInvalidRecordCountTooManyNonCompressedV2 / TooLittle."""
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    too_many = RecordBatch(with_count_and_crc(batch.buffer, 5))
    too_many.ensure_valid()
    with pytest.raises(InvalidRecordException, match="premature EOF"):
        too_many.records()
    too_few = RecordBatch(with_count_and_crc(batch.buffer, 3))
    with pytest.raises(InvalidRecordException, match="records still remaining"):
        too_few.records()
    gz = RecordBatch.build(SAMPLE, base_offset=0, compression="gzip")
    with pytest.raises(InvalidRecordException, match="premature EOF"):
        RecordBatch(with_count_and_crc(gz.buffer, 6)).records()


def _with_attributes(buffer: bytes, attributes: int) -> bytes:
    out = bytearray(buffer)
    struct.pack_into(">h", out, 21, attributes)
    return _restamp(out)


def test_mislabelled_and_unknown_codecs():
    """Mirrors CompressionType#forId: a header naming snappy/lz4/zstd over a section that is not in
    that format parses but its records are corrupt; ids 5-7 are unknown."""
    batch = RecordBatch.build(SAMPLE, base_offset=0)
    for codec_id, name in ((2, "snappy"), (3, "lz4"), (4, "zstd")):
        other = RecordBatch(_with_attributes(batch.buffer, codec_id))
        other.ensure_valid()
        assert other.compression_type == name
        assert other.last_offset == 3
        with pytest.raises(CorruptRecordException, match=f"Failed to decompress record stream \\({name}\\)"):
            other.records()
    unknown = RecordBatch(_with_attributes(batch.buffer, 6))
    with pytest.raises(CorruptRecordException, match="Unknown compression type id 6"):
        unknown.compression_type
    assert "compression=id6" in repr(unknown)


def test_damaged_gzip_stream_raises_corrupt_record():
    batch = RecordBatch.build(SAMPLE, base_offset=0, compression="gzip")
    out = bytearray(batch.buffer)
    out[RECORD_BATCH_OVERHEAD + 12] ^= 0xFF  # inside the deflate stream
    damaged = RecordBatch(_restamp(out))
    damaged.ensure_valid()  # the CRC was re-stamped: only decompression can notice
    with pytest.raises(CorruptRecordException, match="Failed to decompress record stream"):
        damaged.records()


def _body(*parts: bytes) -> bytes:
    payload = b"".join(parts)
    return varint.encode_varint(len(payload)) + payload


def test_invalid_record_structures():
    """Mirrors DefaultRecordTest#testInvalidKeySize, #testInvalidNumHeaders, #testInvalidHeaderKey,
    #testInvalidValueSize and #testUnderflowReadingVarlong."""
    v = varint.encode_varint
    head = b"\x00" + varint.encode_varlong(0) + v(0)  # attributes, timestamp delta, offset delta
    cases = {
        "key larger than record": _body(head, v(100), b"k"),
        "negative header count": _body(head, v(-1), v(-1), v(-1)),
        "header count too large": _body(head, v(-1), v(-1), v(50)),
        "negative header key": _body(head, v(-1), v(-1), v(1), v(-2), v(-1)),
        "bad utf-8 key": _body(head, v(-1), v(-1), v(1), v(1), b"\xff", v(-1)),
        "size larger than read": _body(head, v(-1), v(-1), v(0), b"\x00\x00"),
    }
    for name, body in cases.items():
        batch = RecordBatch(batch_from_body(body))
        batch.ensure_valid()
        with pytest.raises(InvalidRecordException):
            batch.records()
        assert name  # for the failure message
    declared_too_long = v(200) + head
    with pytest.raises(InvalidRecordException, match="Invalid record size: expected 200 bytes"):
        RecordBatch(batch_from_body(declared_too_long)).records()


def test_build_rejects_bad_producer_state_and_timestamps():
    """Mirrors MemoryRecordsBuilderTest#testWriteTransactionalWithInvalidPID and friends."""
    with pytest.raises(ValueError, match="transactional messages without a valid producer ID"):
        RecordBatch.build(SAMPLE, is_transactional=True)
    with pytest.raises(ValueError, match="Invalid negative producer epoch"):
        RecordBatch.build(SAMPLE, producer_id=1)
    with pytest.raises(ValueError, match="Invalid negative sequence number"):
        RecordBatch.build(SAMPLE, producer_id=1, producer_epoch=0)
    with pytest.raises(InvalidTimestampException, match="Invalid negative timestamp -5"):
        RecordBatch.build([SimpleRecord(b"k", b"v", (), -5)])
    with pytest.raises(InvalidRecordException, match="null header key"):
        RecordBatch.build([SimpleRecord(b"k", b"v", ((None, b"x"),))])  # type: ignore[arg-type]
    with pytest.raises(InvalidRecordException, match="key must be bytes"):
        RecordBatch.build([SimpleRecord("text", b"v")])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RecordBatch.build(SAMPLE, compression="brotli")
    builder = MemoryRecordsBuilder(base_offset=10)
    builder.append_with_offset(12, 0, b"a", b"b")
    with pytest.raises(ValueError, match="offsets must increase"):
        builder.append_with_offset(12, 0, b"a", b"b")


def test_control_batch_and_idempotent_sequences():
    """Mirrors DefaultRecordBatchTest#testReadAndWriteControlBatch and #testIncrementSequence."""
    marker = SimpleRecord(struct.pack(">hh", 0, 1), b"\x00\x00\x00\x00\x00\x05", (), 50)
    control = RecordBatch.build(
        [marker], producer_id=8, producer_epoch=0, is_transactional=True, is_control=True
    )
    assert control.is_control_batch and control.is_transactional
    assert control.attributes == 0x30
    assert control.base_sequence == -1 and control.last_sequence == -1
    kp = KpBatch(control.buffer)
    assert kp.validate_crc() and kp.is_control_batch
    (kp_marker,) = list(kp)
    assert kp_marker.commit
    wrapping = RecordBatch.build(
        [SimpleRecord(b"x")] * 3, producer_id=1, producer_epoch=0, base_sequence=INT32_MAX - 1
    )
    assert [r.sequence for r in wrapping] == [INT32_MAX - 1, INT32_MAX, 0]
    assert wrapping.last_sequence == 0


def test_empty_batch_header():
    """Mirrors DefaultRecordBatchTest#testWriteEmptyHeader: a record-less batch stays valid."""
    empty = RecordBatch.build([], base_offset=15, producer_id=3, producer_epoch=1, base_sequence=10)
    empty.ensure_valid()
    assert empty.size_in_bytes == RECORD_BATCH_OVERHEAD
    assert empty.record_count == 0
    assert empty.base_timestamp == NO_TIMESTAMP
    assert empty.max_timestamp == NO_TIMESTAMP
    assert empty.records() == []
    assert KpBatch(empty.buffer).validate_crc()


# -- MemoryRecords ------------------------------------------------------------------------


def test_memory_records_basics():
    """Mirrors MemoryRecordsTest#testHasRoomForMethod-free basics: sizes, order, round trip."""
    assert len(MemoryRecords.EMPTY) == 0
    assert MemoryRecords.EMPTY.size_in_bytes == 0
    assert MemoryRecords.EMPTY.to_bytes() == b""
    assert MemoryRecords.EMPTY.first_batch is None and MemoryRecords.EMPTY.last_batch is None
    assert MemoryRecords.from_bytes(b"") is MemoryRecords.EMPTY
    assert MemoryRecords.with_records([]) is MemoryRecords.EMPTY
    a = RecordBatch.build(SAMPLE[:1], base_offset=0)
    b = RecordBatch.build(SAMPLE[1:], base_offset=1, compression="gzip")
    memory = MemoryRecords.of([a, b])
    assert len(memory) == 2
    assert list(memory) == [a, b]
    assert memory[0] is a and memory[-1] is b
    assert memory[1:] == MemoryRecords.of([b])
    assert memory.first_batch is a and memory.last_batch is b
    assert memory.size_in_bytes == a.size_in_bytes + b.size_in_bytes
    assert memory.to_bytes() == a.buffer + b.buffer
    assert MemoryRecords.from_bytes(memory.to_bytes()) == memory
    assert [r.offset for r in memory.records()] == [0, 1, 2, 3]
    single = MemoryRecords.with_records(SAMPLE, base_offset=9, partition_leader_epoch=2)
    assert len(single) == 1
    assert single.first_batch.partition_leader_epoch == 2
    assert single.to_bytes() is single.first_batch.buffer
    assert MemoryRecords.from_bytes(single.to_bytes()).first_batch.buffer is single.first_batch.buffer
    assert repr(memory) == f"MemoryRecords(batches=2, offsets=[0, 3], size={memory.size_in_bytes})"
    assert pickle.loads(pickle.dumps(memory)) == memory
    with pytest.raises(TypeError):
        MemoryRecords.of([b"raw bytes"])  # type: ignore[list-item]


def test_memory_records_builder_with_offset_gaps():
    """Mirrors MemoryRecordsBuilderTest#testAppendAtInvalidOffset's valid side: gaps allowed."""
    builder = MemoryRecordsBuilder(base_offset=100, default_timestamp=5)
    builder.append_with_offset(100, None, b"a", b"1")
    builder.append_with_offset(103, 7, b"b", b"2", (("h", b"v"),))
    memory = builder.build()
    (batch,) = memory.batches
    assert batch.last_offset_delta == 3
    assert [(r.offset, r.timestamp) for r in batch] == [(100, 5), (103, 7)]
    _, records = kp_parse(batch.buffer)
    assert records == ours(batch)
    assert MemoryRecordsBuilder().build() is MemoryRecords.EMPTY


def test_batch_identity_repr_and_copies():
    batch = RecordBatch.build(SAMPLE, base_offset=3)
    assert RecordBatch(bytearray(batch.buffer)) == batch
    assert RecordBatch(memoryview(batch.buffer)) == batch
    assert hash(RecordBatch(batch.buffer)) == hash(batch)
    assert pickle.loads(pickle.dumps(batch)) == batch
    assert repr(batch) == (
        f"RecordBatch(offsets=[3, 6], count=4, epoch=-1, size={batch.size_in_bytes}, "
        f"compression=none, pid=-1, seq=-1, crc={batch.crc})"
    )
    with pytest.raises(AttributeError):
        batch.base_offset = 5  # type: ignore[misc]
    with pytest.raises(Exception):
        SAMPLE[0].key = b"x"  # type: ignore[misc]


# -- property -----------------------------------------------------------------------------

headers_st = st.lists(
    st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3
).map(tuple)
record_st = st.builds(
    SimpleRecord,
    key=st.none() | st.binary(max_size=40),
    value=st.none() | st.binary(max_size=200),
    headers=headers_st,
    timestamp=st.none() | st.integers(0, 2**45),
)


@settings(max_examples=150, deadline=None)
@given(
    records=st.lists(record_st, min_size=1, max_size=25),
    base_offset=st.integers(0, 2**62),
    epoch=st.integers(-1, INT32_MAX),
    default_ts=st.none() | st.integers(0, 2**45),
    compression=st.sampled_from(["none", "gzip"]),
)
def test_build_parse_round_trip_property(records, base_offset, epoch, default_ts, compression):
    """Build → parse round-trips arbitrary records, here and in kafka-python."""
    batch = RecordBatch.build(
        records,
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        timestamp=default_ts,
        compression=compression,
    )
    batch.ensure_valid()
    fallback = -1 if default_ts is None else default_ts  # NO_TIMESTAMP, Kafka's SimpleRecord default
    expected = [
        (base_offset + i, fallback if r.timestamp is None else r.timestamp, r.key, r.value, list(r.headers))
        for i, r in enumerate(records)
    ]
    assert ours(batch) == expected
    assert batch.max_timestamp == max(e[1] for e in expected)
    assert batch.record_count == len(records)
    assert RecordBatch(batch.buffer) == batch
    _, kp_records = kp_parse(batch.buffer)
    assert kp_records == expected
    moved = batch.with_offset_and_epoch(0, 0)
    moved.ensure_valid()
    assert [r[1:] for r in ours(moved)] == [e[1:] for e in expected]
