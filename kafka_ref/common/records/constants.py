"""The fixed layout of a v2 record batch header and the small enumerations stored in it.

Mirrors the constants of org.apache.kafka.common.record.RecordBatch, Records,
DefaultRecordBatch, TimestampType and CompressionType (ids only).

Byte layout of the 61-byte header (big-endian, offsets from the start of the batch)::

    0  base_offset             int64   ┐ log overhead (12 bytes): offset + length,
    8  batch_length            int32   ┘ length counts every byte after this field
    12 partition_leader_epoch  int32     outside the CRC: the leader stamps it on append
    16 magic                   int8      2 for this format
    17 crc                     uint32    CRC-32C of bytes [21, end)
    21 attributes              int16     bits 0-2 codec, 3 timestamp type, 4 txn, 5 control
    23 last_offset_delta       int32
    27 base_timestamp          int64     Kafka's "first timestamp"
    35 max_timestamp           int64
    43 producer_id             int64
    51 producer_epoch          int16
    53 base_sequence           int32
    57 record_count            int32
    61 records ...
"""

from __future__ import annotations

import enum
import struct

# Magic values: v0/v1 are the legacy message sets, v2 is the record batch format kept here.
MAGIC_VALUE_V0 = 0
MAGIC_VALUE_V1 = 1
MAGIC_VALUE_V2 = 2
CURRENT_MAGIC_VALUE = MAGIC_VALUE_V2

# "No value" markers shared with Kafka.
NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

# Field offsets inside the header.
BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
LAST_OFFSET_DELTA_OFFSET = 23
BASE_TIMESTAMP_OFFSET = 27
MAX_TIMESTAMP_OFFSET = 35
PRODUCER_ID_OFFSET = 43
PRODUCER_EPOCH_OFFSET = 51
BASE_SEQUENCE_OFFSET = 53
RECORDS_COUNT_OFFSET = 57
RECORDS_OFFSET = 61

# Records#LOG_OVERHEAD: the base offset and the length field that precede every batch.
LOG_OVERHEAD = 12
# DefaultRecordBatch#RECORD_BATCH_OVERHEAD: header size, i.e. the size of an empty batch.
RECORD_BATCH_OVERHEAD = RECORDS_OFFSET
# LegacyRecord#RECORD_OVERHEAD_V0: the smallest length any magic can declare.
RECORD_OVERHEAD_V0 = 14
# DefaultRecord#MAX_RECORD_OVERHEAD: length + attributes + deltas without key, value, headers.
MAX_RECORD_OVERHEAD = 21

# Attribute bits.
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20

# The whole header as one struct (61 bytes), and the pieces rewritten outside the CRC.
HEADER_STRUCT = struct.Struct(">qiibIhiqqqhii")
assert HEADER_STRUCT.size == RECORD_BATCH_OVERHEAD
INT64 = struct.Struct(">q")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT16 = struct.Struct(">h")
# base_offset, batch_length, partition_leader_epoch: the first 16 bytes, all outside the CRC.
OFFSET_LENGTH_EPOCH = struct.Struct(">qii")
# attributes .. record_count: everything the CRC covers in the header.
CRC_COVERED_HEADER = struct.Struct(">hiqqqhii")


class CompressionType(enum.StrEnum):
    """Mirrors org.apache.kafka.common.record.CompressionType.

    The codec stored in the low three attribute bits. The members compare equal to their
    lower-case names, so ``batch.compression_type == "gzip"`` works. ``id`` is the attribute
    value Kafka uses.
    """

    NONE = "none"
    GZIP = "gzip"
    SNAPPY = "snappy"
    LZ4 = "lz4"
    ZSTD = "zstd"

    @property
    def id(self) -> int:
        return _COMPRESSION_IDS[self]

    @classmethod
    def for_id(cls, codec_id: int) -> CompressionType:
        """Mirrors org.apache.kafka.common.record.CompressionType#forId."""
        try:
            return _COMPRESSION_BY_ID[codec_id]
        except KeyError:
            raise ValueError(f"Unknown compression type id: {codec_id}") from None


_COMPRESSION_BY_ID = {
    0: CompressionType.NONE,
    1: CompressionType.GZIP,
    2: CompressionType.SNAPPY,
    3: CompressionType.LZ4,
    4: CompressionType.ZSTD,
}
_COMPRESSION_IDS = {member: codec_id for codec_id, member in _COMPRESSION_BY_ID.items()}


class TimestampType(enum.StrEnum):
    """Mirrors org.apache.kafka.common.record.TimestampType.

    Which clock a batch's timestamps come from: the producer's (``create``) or the leader's at
    append (``log_append``). Attribute bit 3 selects it; ``NO_TIMESTAMP_TYPE`` only describes
    legacy v0 data and is never written by this format.
    """

    NO_TIMESTAMP_TYPE = "no_timestamp_type"
    CREATE_TIME = "create"
    LOG_APPEND_TIME = "log_append"

    @property
    def id(self) -> int:
        return {"no_timestamp_type": -1, "create": 0, "log_append": 1}[self.value]
