"""The write path: turning records into one v2 batch.

Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder and
DefaultRecordBatch#writeHeader.

Records are appended one by one (each encoded as offset and timestamp deltas against the
first), the records section is compressed if asked, and the 61-byte header is written last,
once the counts, the last offset delta and the max timestamp are known; the CRC-32C over
attributes..end is computed over the final bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

from crc32c import crc32c

from kafka_ref.common.errors import InvalidTimestampException
from kafka_ref.common.records.compression import compress
from kafka_ref.common.records.constants import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    UINT32,
    CompressionType,
    TimestampType,
)
from kafka_ref.common.records.memory_records import MemoryRecords
from kafka_ref.common.records.record import Header, SimpleRecord, write_record
from kafka_ref.common.records.record_batch import RecordBatch
from kafka_ref.common.records.varint import INT32_MAX


def compute_attributes(
    compression: CompressionType,
    timestamp_type: TimestampType,
    is_transactional: bool,
    is_control: bool,
) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#computeAttributes."""
    # 1. v2 always records which clock the timestamps come from.
    if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("Timestamp type must be provided to compute attributes for message format v2")
    # 2. Set the flag bits, the codec id and the timestamp-type bit.
    attributes = TRANSACTIONAL_FLAG_MASK if is_transactional else 0
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    attributes |= compression.id & COMPRESSION_CODEC_MASK
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    return attributes


def write_header(
    buffer: bytearray,
    *,
    base_offset: int,
    last_offset_delta: int,
    compression: CompressionType,
    timestamp_type: TimestampType,
    first_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    is_transactional: bool,
    is_control_batch: bool,
    partition_leader_epoch: int,
    num_records: int,
) -> None:
    """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#writeHeader.

    Fills the first 61 bytes of ``buffer`` (which already holds the records section after
    them) and stamps the CRC over attributes..end.
    """
    # 1. Reject a first timestamp that is negative but not the "none" marker.
    if first_timestamp < 0 and first_timestamp != NO_TIMESTAMP:
        raise InvalidTimestampException(f"Invalid message timestamp {first_timestamp}")
    # 2. Lay out every header field, with a zero CRC for now.
    attributes = compute_attributes(compression, timestamp_type, is_transactional, is_control_batch)
    HEADER_STRUCT.pack_into(
        buffer,
        0,
        base_offset,
        len(buffer) - LOG_OVERHEAD,
        partition_leader_epoch,
        MAGIC_VALUE_V2,
        0,
        attributes,
        last_offset_delta,
        first_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        num_records,
    )
    # 3. The CRC covers everything from the attributes on, so it is computed last.
    crc = crc32c(memoryview(buffer)[ATTRIBUTES_OFFSET:])
    UINT32.pack_into(buffer, CRC_OFFSET, crc)


class MemoryRecordsBuilder:
    """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder (magic 2 only).

    Accumulates records for one batch. ``append`` assigns the next offset; ``append_with_offset``
    takes an explicit one (offsets must increase; gaps are allowed, as after compaction).
    ``build_batch`` returns the RecordBatch (an empty batch header if nothing was appended);
    ``build`` returns MemoryRecords (EMPTY if nothing was appended, as Kafka does).
    """

    def __init__(
        self,
        *,
        base_offset: int = 0,
        compression: CompressionType | str = CompressionType.NONE,
        timestamp_type: TimestampType | str = TimestampType.CREATE_TIME,
        log_append_time: int | None = None,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        base_sequence: int = NO_SEQUENCE,
        is_transactional: bool = False,
        is_control_batch: bool = False,
        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
        default_timestamp: int = 0,
    ) -> None:
        # 1. Normalise the enumerations; an unknown name is a caller error.
        try:
            self.compression = CompressionType(compression)
            self.timestamp_type = TimestampType(timestamp_type)
        except ValueError as exc:
            raise ValueError(f"Invalid batch option: {exc}") from None
        if self.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("TimestampType must be set for magic >= 1")
        # 2. Remember the header fields known up front.
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control_batch = is_control_batch
        self.partition_leader_epoch = partition_leader_epoch
        self.default_timestamp = default_timestamp
        # 3. Running state: the records section (uncompressed), counts, timestamps.
        self._records = bytearray()
        self.num_records = 0
        self.last_offset: int | None = None
        self.first_timestamp: int | None = None
        self.max_timestamp = NO_TIMESTAMP
        self._built: RecordBatch | None = None

    def append(self, record: SimpleRecord) -> int:
        """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder#append (next offset)."""
        offset = self.base_offset if self.last_offset is None else self.last_offset + 1
        self.append_with_offset(offset, record.timestamp, record.key, record.value, record.headers)
        return offset

    def append_all(self, records: Iterable[SimpleRecord]) -> None:
        """Append every record in order at consecutive offsets."""
        for record in records:
            self.append(record)

    def append_with_offset(
        self,
        offset: int,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...] = (),
    ) -> None:
        """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder#appendWithOffset.

        Encodes one record at ``offset``; ``timestamp=None`` takes the builder's default.
        """
        # 1. A built batch is closed for appends.
        if self._built is not None:
            raise ValueError(
                "Tried to append a record, but MemoryRecordsBuilder is closed for record appends"
            )
        # 2. Offsets strictly increase and the delta must fit the 32-bit field.
        if self.last_offset is not None and offset <= self.last_offset:
            raise ValueError(
                f"Illegal offset {offset} following previous offset {self.last_offset} "
                "(offsets must increase)"
            )
        offset_delta = offset - self.base_offset
        if offset_delta < 0 or offset_delta > INT32_MAX:
            raise ValueError(
                f"Offset {offset} is outside the range of base offset {self.base_offset} for a v2 batch"
            )
        # 3. Timestamps must be real times or the "none" marker.
        if timestamp is None:
            timestamp = self.default_timestamp
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise InvalidTimestampException(f"Invalid negative timestamp {timestamp}")
        # 4. The first record fixes the base timestamp; the others are stored as deltas.
        if self.first_timestamp is None:
            self.first_timestamp = timestamp
        write_record(self._records, offset_delta, timestamp - self.first_timestamp, key, value, headers)
        # 5. Track what the header will need.
        self.num_records += 1
        self.last_offset = offset
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp

    def _validate_producer_state(self) -> None:
        """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder#validateProducerState."""
        # 1. A transaction needs a producer id.
        if self.is_transactional and self.producer_id == NO_PRODUCER_ID:
            raise ValueError("Cannot write transactional messages without a valid producer ID")
        # 2. An idempotent producer needs an epoch and (except for control batches) a sequence.
        if self.producer_id != NO_PRODUCER_ID:
            if self.producer_epoch == NO_PRODUCER_EPOCH:
                raise ValueError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control_batch:
                raise ValueError("Invalid negative sequence number used")

    def build_batch(self) -> RecordBatch:
        """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder#close (one RecordBatch).

        Compresses the records section if asked, writes the header and CRC, and returns the
        batch. Calling it again returns the same batch.
        """
        if self._built is not None:
            return self._built
        # 1. Producer fields must be consistent before anything is written.
        self._validate_producer_state()
        # 2. Compress the records section.
        section = compress(self.compression, self._records)
        # 3. Work out the header values (an empty batch keeps NO_TIMESTAMP as first timestamp).
        last_offset_delta = 0 if self.last_offset is None else self.last_offset - self.base_offset
        first_timestamp = NO_TIMESTAMP if self.first_timestamp is None else self.first_timestamp
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            max_timestamp = self.log_append_time
            if max_timestamp is None:
                max_timestamp = self.max_timestamp if self.num_records else self.default_timestamp
        else:
            max_timestamp = self.max_timestamp
        # 4. Header then section in one buffer; the header and CRC are written last.
        buffer = bytearray(RECORD_BATCH_OVERHEAD)
        buffer += section
        write_header(
            buffer,
            base_offset=self.base_offset,
            last_offset_delta=last_offset_delta,
            compression=self.compression,
            timestamp_type=self.timestamp_type,
            first_timestamp=first_timestamp,
            max_timestamp=max_timestamp,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
            is_transactional=self.is_transactional,
            is_control_batch=self.is_control_batch,
            partition_leader_epoch=self.partition_leader_epoch,
            num_records=self.num_records,
        )
        self._built = RecordBatch(bytes(buffer))
        return self._built

    def build(self) -> MemoryRecords:
        """Mirrors org.apache.kafka.common.record.MemoryRecordsBuilder#build.

        MemoryRecords holding the batch, or MemoryRecords.EMPTY when no record was appended.
        """
        if self.num_records == 0:
            self._validate_producer_state()
            return MemoryRecords.EMPTY
        return MemoryRecords.of((self.build_batch(),))
