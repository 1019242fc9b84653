"""One immutable v2 record batch over its own bytes.

Mirrors org.apache.kafka.common.record.DefaultRecordBatch.

A RecordBatch is the unit the log, replication and fetch move around: it wraps the exact bytes
of one batch and never changes them. The 61-byte header is decoded once, with a single
``struct.unpack_from``, when the object is made, so reading ``base_offset`` or ``last_offset``
is a plain attribute load. Records are decoded only when someone iterates.

The fields a broker has to stamp on an incoming batch -- the base offset (it assigns offsets)
and the partition leader epoch -- lie before the CRC-covered range, so ``with_base_offset`` /
``with_partition_leader_epoch`` produce a new batch by splicing those bytes in front of the
untouched remainder: no record is re-encoded and the stored CRC stays right.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from crc32c import crc32c

from kafka_ref.common.errors import CorruptRecordException, InvalidRecordException
from kafka_ref.common.records.compression import decompress
from kafka_ref.common.records.constants import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_COVERED_HEADER,
    CRC_OFFSET,
    HEADER_STRUCT,
    INT32,
    INT64,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    OFFSET_LENGTH_EPOCH,
    RECORD_BATCH_OVERHEAD,
    RECORDS_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    UINT32,
    CompressionType,
    TimestampType,
)
from kafka_ref.common.records.record import Record, increment_sequence, read_record

if TYPE_CHECKING:
    from kafka_ref.common.records.record import SimpleRecord

_unpack_header = HEADER_STRUCT.unpack_from
_CODECS = (
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
)


class RecordBatch:
    """Mirrors org.apache.kafka.common.record.DefaultRecordBatch.

    An immutable magic-2 batch. Construction checks only what is needed to trust the header
    (enough bytes, magic 2, declared length equal to the buffer's); the CRC is checked by
    ``ensure_valid`` where Kafka checks it (on produce and on the follower's append).
    """

    __slots__ = (
        "buffer",
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "record_count",
        "last_offset",
        "size_in_bytes",
    )

    buffer: bytes
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    last_offset: int
    size_in_bytes: int

    def __init__(self, buffer: bytes) -> None:
        # 1. Own an immutable copy if handed a mutable buffer; bytes are shared as they are.
        if type(buffer) is not bytes:
            buffer = bytes(buffer)
        size = len(buffer)
        # 2. The fixed header must be there before any field can be trusted.
        if size < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordException(
                f"Record batch is corrupt (the size {size} is smaller than the minimum allowed "
                f"overhead {RECORD_BATCH_OVERHEAD})"
            )
        (
            base_offset,
            batch_length,
            partition_leader_epoch,
            magic,
            crc,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            record_count,
        ) = _unpack_header(buffer)
        # 3. Only the v2 layout is understood here.
        if magic != MAGIC_VALUE_V2:
            raise CorruptRecordException(
                f"Invalid magic found in record batch: {magic} (only magic {MAGIC_VALUE_V2} is supported)"
            )
        # 4. The length field must describe exactly this buffer (a truncated batch fails here).
        if batch_length + LOG_OVERHEAD != size:
            raise CorruptRecordException(
                f"Record batch is corrupt (declared length {batch_length} + log overhead "
                f"{LOG_OVERHEAD} != buffer size {size})"
            )
        # 5. Fill the read-only slots once, through their descriptors (__setattr__ refuses).
        _set_buffer(self, buffer)
        _set_base_offset(self, base_offset)
        _set_batch_length(self, batch_length)
        _set_partition_leader_epoch(self, partition_leader_epoch)
        _set_magic(self, magic)
        _set_crc(self, crc)
        _set_attributes(self, attributes)
        _set_last_offset_delta(self, last_offset_delta)
        _set_base_timestamp(self, base_timestamp)
        _set_max_timestamp(self, max_timestamp)
        _set_producer_id(self, producer_id)
        _set_producer_epoch(self, producer_epoch)
        _set_base_sequence(self, base_sequence)
        _set_record_count(self, record_count)
        _set_last_offset(self, base_offset + last_offset_delta)
        _set_size_in_bytes(self, size)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            f"RecordBatch is immutable (cannot set {name}); use with_base_offset, "
            "with_partition_leader_epoch or with_offset_and_epoch for a rewritten copy"
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"RecordBatch is immutable (cannot delete {name})")

    # -- header-derived properties ---------------------------------------------------------

    @property
    def next_offset(self) -> int:
        """Mirrors org.apache.kafka.common.record.AbstractRecordBatch#nextOffset."""
        return self.last_offset + 1

    @property
    def first_timestamp(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#firstTimestamp (= base_timestamp)."""
        return self.base_timestamp

    @property
    def compression_type(self) -> CompressionType:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#compressionType."""
        codec_id = self.attributes & COMPRESSION_CODEC_MASK
        if codec_id >= len(_CODECS):
            raise CorruptRecordException(f"Unknown compression type id {codec_id} in record batch attributes")
        return _CODECS[codec_id]

    def is_compressed(self) -> bool:
        """Mirrors org.apache.kafka.common.record.AbstractRecordBatch#isCompressed."""
        return self.attributes & COMPRESSION_CODEC_MASK != 0

    @property
    def timestamp_type(self) -> TimestampType:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#timestampType."""
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#isTransactional."""
        return self.attributes & TRANSACTIONAL_FLAG_MASK != 0

    @property
    def is_control_batch(self) -> bool:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#isControlBatch."""
        return self.attributes & CONTROL_FLAG_MASK != 0

    @property
    def has_producer_id(self) -> bool:
        """Mirrors org.apache.kafka.common.record.AbstractRecordBatch#hasProducerId."""
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#lastSequence (wraps at 2^31-1)."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def checksum(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#checksum (the stored CRC)."""
        return self.crc

    # -- validation ------------------------------------------------------------------------

    def compute_checksum(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#computeChecksum.

        CRC-32C over everything from the attributes field to the end of the batch.
        """
        return crc32c(memoryview(self.buffer)[ATTRIBUTES_OFFSET:])

    def is_valid(self) -> bool:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#isValid."""
        # (computeChecksum written out: every appended batch, leader's and followers', is checked.)
        return (self.size_in_bytes >= RECORD_BATCH_OVERHEAD
                and self.crc == crc32c(memoryview(self.buffer)[ATTRIBUTES_OFFSET:]))

    def ensure_valid(self) -> None:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#ensureValid.

        Raises CorruptRecordException if the batch is too small, its CRC does not match its
        bytes, or it declares a negative record count.
        """
        # 1. A batch smaller than its own header cannot be checked at all.
        if self.size_in_bytes < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordException(
                f"Record batch is corrupt (the size {self.size_in_bytes} is smaller than the "
                f"minimum allowed overhead {RECORD_BATCH_OVERHEAD})"
            )
        # 2. The stored CRC must match the one computed over attributes..end.
        computed = self.compute_checksum()
        if computed != self.crc:
            raise CorruptRecordException(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {computed})"
            )
        # 3. A checksummed header can still declare nonsense (Kafka finds this on iteration).
        if self.record_count < 0:
            raise CorruptRecordException(
                f"Record batch is corrupt (invalid record count {self.record_count} in magic "
                f"v{self.magic} batch)"
            )

    # -- records ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Record]:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#iterator.

        Yields the records one at a time. A compressed batch is inflated once, up front, as
        Kafka's plain iterator does; an uncompressed one is read in place.
        """
        # 1. An empty batch has nothing to read (possible after compaction).
        count = self.record_count
        if count == 0:
            return
        if count < 0:
            raise InvalidRecordException(f"Found invalid record count {count} in magic v{self.magic} batch")
        # 2. Pick the bytes to read: the buffer itself, or the inflated records section.
        if self.attributes & COMPRESSION_CODEC_MASK:
            data: bytes | memoryview = decompress(self.compression_type, memoryview(self.buffer)[RECORDS_OFFSET:])
            pos = 0
        else:
            data = self.buffer
            pos = RECORDS_OFFSET
        # 3. Capture what every record is relative to; log-append batches use max_timestamp.
        base_offset = self.base_offset
        base_timestamp = self.base_timestamp
        base_sequence = self.base_sequence
        log_append_time = self.max_timestamp if self.attributes & TIMESTAMP_TYPE_MASK else None
        end = len(data)
        # 4. Read exactly `count` records; running out early means the header lied.
        for _ in range(count):
            if pos >= end:
                raise InvalidRecordException("Incorrect declared batch size, premature EOF reached")
            try:
                record, pos = read_record(data, pos, base_offset, base_timestamp, base_sequence, log_append_time)
            except IndexError as exc:
                raise InvalidRecordException("Incorrect declared batch size, premature EOF reached") from exc
            yield record
        # 5. And nothing may follow the last record.
        if pos != end:
            raise InvalidRecordException("Incorrect declared batch size, records still remaining in file")

    def records(self) -> list[Record]:
        """All records of the batch, decoded now."""
        return list(self)

    # -- rewriting the fields outside the CRC ----------------------------------------------

    def with_base_offset(self, base_offset: int) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#setLastOffset.

        A copy moved to start at ``base_offset`` (the leader's offset assignment). Only the
        first eight bytes change; the records and the CRC are kept.
        """
        # 1. Splice the new base offset in front of the untouched remainder (one copy).
        buffer = b"".join((INT64.pack(base_offset), memoryview(self.buffer)[8:]))
        # 2. Re-wrap; every other header field is unchanged.
        return RecordBatch(buffer)

    def with_last_offset(self, last_offset: int) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#setLastOffset (by last offset)."""
        return self.with_base_offset(last_offset - self.last_offset_delta)

    def with_partition_leader_epoch(self, partition_leader_epoch: int) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#setPartitionLeaderEpoch.

        A copy stamped with the leader epoch under which it was appended; the field lies
        before the CRC-covered range, so the CRC is kept.
        """
        # 1. Keep base offset and length, replace the epoch, keep the rest (one copy).
        view = memoryview(self.buffer)
        buffer = b"".join((view[:12], INT32.pack(partition_leader_epoch), view[16:]))
        # 2. Re-wrap.
        return RecordBatch(buffer)

    def with_offset_and_epoch(self, base_offset: int, partition_leader_epoch: int) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.MutableRecordBatch#setLastOffset and #setPartitionLeaderEpoch.

        Both stamps a leader puts on a batch it appends (offsets, then its epoch), in one copy.
        """
        # 1. Rewrite the first 16 bytes (base offset, same length, new epoch).
        head = OFFSET_LENGTH_EPOCH.pack(base_offset, self.batch_length, partition_leader_epoch)
        buffer = b"".join((head, memoryview(self.buffer)[16:]))
        # 2. Re-wrap.
        return RecordBatch(buffer)

    def with_max_timestamp(self, timestamp_type: TimestampType | str, max_timestamp: int) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#setMaxTimestamp.

        A copy with a new timestamp type bit and max timestamp (how a leader applies
        LOG_APPEND_TIME). These bytes are CRC-covered, so the CRC is recomputed.
        """
        if timestamp_type.__class__ is not TimestampType:
            timestamp_type = TimestampType(timestamp_type)
        # 1. Nothing to do if both already match (Kafka skips the CRC work too).
        if self.timestamp_type is timestamp_type and self.max_timestamp == max_timestamp:
            return self
        # 2. Recompute the attributes with the requested timestamp type bit.
        attributes = self.attributes & ~TIMESTAMP_TYPE_MASK
        if timestamp_type is TimestampType.LOG_APPEND_TIME:
            attributes |= TIMESTAMP_TYPE_MASK
        # 3. Write the CRC-covered header with the new values, then a fresh CRC.
        covered = CRC_COVERED_HEADER.pack(
            attributes,
            self.last_offset_delta,
            self.base_timestamp,
            max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        )
        records = memoryview(self.buffer)[RECORDS_OFFSET:]
        crc = crc32c(records, crc32c(covered))
        buffer = b"".join((memoryview(self.buffer)[:CRC_OFFSET], UINT32.pack(crc), covered, records))
        return RecordBatch(buffer)

    # -- building --------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        records: Iterable[SimpleRecord],
        *,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        timestamp: int | None = None,
        compression: CompressionType | str = "none",
        is_transactional: bool = False,
        is_control: bool = False,
        timestamp_type: TimestampType | str = "create",
        log_append_time: int | None = None,
    ) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.MemoryRecords#withRecords (one v2 batch).

        Encodes ``records`` at consecutive offsets from ``base_offset``. A record without a
        timestamp gets ``timestamp`` (NO_TIMESTAMP, -1, when that is None too: Kafka's SimpleRecord
        default). With
        ``timestamp_type="log_append"`` the batch's max timestamp is ``log_append_time``
        (default: the largest record timestamp). No records give an empty batch header.
        """
        # Imported here: the builder depends on this module, not the other way around.
        from kafka_ref.common.records.builder import MemoryRecordsBuilder

        builder = MemoryRecordsBuilder(
            base_offset=base_offset,
            compression=compression,
            timestamp_type=timestamp_type,
            log_append_time=log_append_time,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            is_transactional=is_transactional,
            is_control_batch=is_control,
            partition_leader_epoch=partition_leader_epoch,
            default_timestamp=NO_TIMESTAMP if timestamp is None else timestamp,
        )
        for record in records:
            builder.append(record)
        return builder.build_batch()

    # -- identity --------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return self.buffer == other.buffer

    def __hash__(self) -> int:
        return hash(self.buffer)

    def __repr__(self) -> str:
        codec = self.attributes & COMPRESSION_CODEC_MASK
        codec_name = _CODECS[codec].value if codec < len(_CODECS) else f"id{codec}"
        return (
            f"RecordBatch(offsets=[{self.base_offset}, {self.last_offset}], count={self.record_count}, "
            f"epoch={self.partition_leader_epoch}, size={self.size_in_bytes}, compression={codec_name}, "
            f"pid={self.producer_id}, seq={self.base_sequence}, crc={self.crc})"
        )

    def __reduce__(self):  # pickling (e.g. shipping batches to Spark workers) keeps the bytes only
        return (RecordBatch, (self.buffer,))


# Slot setters used once by RecordBatch.__init__ (the instance's own __setattr__ refuses writes).
_set_buffer = RecordBatch.buffer.__set__  # type: ignore[attr-defined]
_set_base_offset = RecordBatch.base_offset.__set__  # type: ignore[attr-defined]
_set_batch_length = RecordBatch.batch_length.__set__  # type: ignore[attr-defined]
_set_partition_leader_epoch = RecordBatch.partition_leader_epoch.__set__  # type: ignore[attr-defined]
_set_magic = RecordBatch.magic.__set__  # type: ignore[attr-defined]
_set_crc = RecordBatch.crc.__set__  # type: ignore[attr-defined]
_set_attributes = RecordBatch.attributes.__set__  # type: ignore[attr-defined]
_set_last_offset_delta = RecordBatch.last_offset_delta.__set__  # type: ignore[attr-defined]
_set_base_timestamp = RecordBatch.base_timestamp.__set__  # type: ignore[attr-defined]
_set_max_timestamp = RecordBatch.max_timestamp.__set__  # type: ignore[attr-defined]
_set_producer_id = RecordBatch.producer_id.__set__  # type: ignore[attr-defined]
_set_producer_epoch = RecordBatch.producer_epoch.__set__  # type: ignore[attr-defined]
_set_base_sequence = RecordBatch.base_sequence.__set__  # type: ignore[attr-defined]
_set_record_count = RecordBatch.record_count.__set__  # type: ignore[attr-defined]
_set_last_offset = RecordBatch.last_offset.__set__  # type: ignore[attr-defined]
_set_size_in_bytes = RecordBatch.size_in_bytes.__set__  # type: ignore[attr-defined]
