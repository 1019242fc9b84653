"""Validation of the batches in an append.

Mirrors kafka.log.UnifiedLog#analyzeAndValidateRecords and the batch checks of
org.apache.kafka.storage.internals.log.LogValidator#validateBatch. UnifiedLog calls these before
it takes any offset; nothing here changes the log.
"""

from __future__ import annotations

from kafka_ref.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
    RecordTooLargeException,
)
from kafka_ref.common.records import MAGIC_VALUE_V2, CompressionType, MemoryRecords, RecordBatch, SimpleRecord, TimestampType
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.exceptions import OffsetsOutOfOrderException
from kafka_ref.log.fetch_data import NO_TIMESTAMP, UNIFIED_LOG_UNKNOWN_OFFSET, AppendOrigin, LogAppendInfo


def analyze_and_validate_records(
    records: MemoryRecords,
    topic_partition: TopicPartition,
    origin: AppendOrigin,
    ignore_record_size: bool,
    require_offsets_monotonic: bool,
    leader_epoch: int,
    max_message_bytes: int,
    log_start_offset: int,
) -> LogAppendInfo:
    """Mirrors kafka.log.UnifiedLog#analyzeAndValidateRecords.

    Checks every batch (format, size, CRC) and, for a follower, that offsets only grow.
    This model keeps only v2 batches, so any other magic is rejected as corrupt. It is also
    stricter than Kafka about overlap: each batch must start after the previous one ended.
    """
    valid_bytes = 0
    first_offset = UNIFIED_LOG_UNKNOWN_OFFSET
    last_offset = -1
    last_leader_epoch: int | None = None
    source_compression = "none"
    monotonic = True
    max_timestamp = NO_TIMESTAMP
    offset_of_max_timestamp = -1
    read_first_message = False
    last_offset_of_first_batch = -1
    tp = topic_partition
    for batch in records:
        # 1. A raft leader must already have stamped its epoch.
        if origin == AppendOrigin.RAFT_LEADER and batch.partition_leader_epoch != leader_epoch:
            raise InvalidRecordException("Append from Raft leader did not set the batch epoch correctly")
        # 2. Only magic v2 exists in this model.
        if batch.magic != MAGIC_VALUE_V2:
            raise CorruptRecordException(
                f"Invalid magic {batch.magic} in the append to {tp}: only record batches of "
                f"magic {MAGIC_VALUE_V2} are supported"
            )
        # 3. A client's v2 batch comes with base offset 0.
        if origin == AppendOrigin.CLIENT and batch.base_offset != 0:
            raise InvalidRecordException(
                f"The baseOffset of the record batch in the append to {tp} should be 0, but it is {batch.base_offset}"
            )
        # 4. Remember where the first batch starts and ends.
        if not read_first_message:
            first_offset = batch.base_offset
            last_offset_of_first_batch = batch.last_offset
            read_first_message = True
        # 5. Offsets must increase from batch to batch.
        if last_offset >= batch.last_offset or (valid_bytes > 0 and batch.base_offset <= last_offset):
            monotonic = False
        last_offset = batch.last_offset
        last_leader_epoch = batch.partition_leader_epoch if batch.partition_leader_epoch >= 0 else None
        # 6. Size limit (the follower skips it: the leader already accepted the batch).
        batch_size = batch.size_in_bytes
        if not ignore_record_size and batch_size > max_message_bytes:
            raise RecordTooLargeException(
                f"The record batch size in the append to {tp} is {batch_size} bytes which exceeds "
                f"the maximum configured value of {max_message_bytes}."
            )
        # 7. CRC.
        if not batch.is_valid():
            raise CorruptRecordException(f"Record is corrupt (stored crc = {batch.checksum}) in topic partition {tp}.")
        # 8. Track the maximum timestamp and the batch holding it.
        if batch.max_timestamp > max_timestamp:
            max_timestamp = batch.max_timestamp
            offset_of_max_timestamp = last_offset
        valid_bytes += batch_size
        compression = str(getattr(batch, "compression_type", "none"))
        if compression != "none":
            source_compression = compression
    # 9. A follower append must carry increasing offsets.
    if require_offsets_monotonic and not monotonic:
        ranges = [(batch.base_offset, batch.last_offset) for batch in records]
        raise OffsetsOutOfOrderException(f"Out of order offsets found in append to {tp}: {ranges}")
    return LogAppendInfo(
        first_offset=first_offset,
        last_offset=last_offset,
        last_leader_epoch=last_leader_epoch,
        max_timestamp=max_timestamp,
        shallow_offset_of_max_timestamp=offset_of_max_timestamp,
        log_append_time=NO_TIMESTAMP,
        log_start_offset=log_start_offset,
        source_compression=source_compression,
        valid_bytes=valid_bytes,
        last_offset_of_first_batch=last_offset_of_first_batch,
    )

def validate_batch(batch: RecordBatch, topic_partition: TopicPartition, origin: AppendOrigin) -> None:
    """Mirrors org.apache.kafka.storage.internals.log.LogValidator#validateBatch (client checks)."""
    if origin != AppendOrigin.CLIENT:
        return
    tp = topic_partition
    # 1. The offset range the header claims must be positive and match the record count.
    count_from_offsets = batch.last_offset - batch.base_offset + 1
    if count_from_offsets <= 0:
        raise InvalidRecordException(
            f"Batch has an invalid offset range: [{batch.base_offset}, {batch.last_offset}] in partition {tp}"
        )
    if batch.record_count <= 0:
        raise InvalidRecordException(f"Invalid reported count for record batch: {batch.record_count} in partition {tp}")
    if count_from_offsets != batch.record_count:
        raise InvalidRecordException(
            f"Inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] and count of "
            f"records {batch.record_count} in partition {tp}"
        )
    # 2. Clients may not write control batches.
    if getattr(batch, "is_control_batch", False):
        raise InvalidRecordException(f"Clients are not allowed to write control records in partition {tp}")


# Long.MAX_VALUE: message.timestamp.before.max.ms / after.max.ms unset (no bound).
NO_TIMESTAMP_BOUND = 2**63 - 1


def validate_timestamps(batch: RecordBatch, topic_partition: TopicPartition, now: int, timestamp_type: str,
                        before_max_ms: int, after_max_ms: int) -> None:
    """Mirrors LogValidator#validateTimestamp over one batch's records (Kafka 3.7, KIP-937).

    On a CreateTime topic a record's timestamp must lie within [now - before, now + after]
    (records without a timestamp are not checked); on a LogAppendTime topic a producer may not
    send a batch already typed LogAppendTime. Raises InvalidTimestampException (INVALID_TIMESTAMP)
    for the first offending record; Kafka also lists each record's error in the produce
    response (recordErrors), which kafka_ref leaves out. Only called when a bound is set or the
    topic is LogAppendTime: the record loop costs a decode per record.
    """
    for index, record in enumerate(batch):
        if timestamp_type == "CreateTime" and record.timestamp != NO_TIMESTAMP:
            # 1. CreateTime: within the bounds around the broker's clock.
            diff = now - record.timestamp
            if diff > before_max_ms or -diff > after_max_ms:
                raise InvalidTimestampException(
                    f"Timestamp {record.timestamp} of message with offset {record.offset} in {topic_partition} is out "
                    f"of range. The timestamp should be within [{now - before_max_ms}, {now + after_max_ms}] "
                    f"(record {index} of its batch)")
        elif batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
            # 2. A producer does not stamp LogAppendTime itself.
            raise InvalidTimestampException(
                f"Invalid timestamp type in message {record.offset} of {topic_partition}. Producer should not set "
                "timestamp type to LogAppendTime.")


def target_compression(topic_compression_type: str) -> CompressionType | None:
    """Mirrors org.apache.kafka.common.record.BrokerCompressionType#targetCompression: the codec a
    topic's compression.type asks the leader to store (None: ``producer``, keep the producer's)."""
    if topic_compression_type == "producer":
        return None
    return CompressionType.NONE if topic_compression_type == "uncompressed" else CompressionType(topic_compression_type)


def recompress(batch: RecordBatch, target: CompressionType) -> RecordBatch:
    """Mirrors LogValidator#buildRecordsAndAssignOffsets for a batch whose codec is not the topic's.

    The records are written again with the target codec, keeping their offsets (the batch's
    base), timestamps, keys, values and headers, and the batch's producer id, epoch, base
    sequence, transactional and control flags and leader epoch (LogValidatorTest#checkRecompression).
    """
    records = [SimpleRecord(r.key, r.value, r.headers, r.timestamp) for r in batch]
    return RecordBatch.build(
        records, base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
        compression=target, is_transactional=batch.is_transactional, is_control=batch.is_control_batch,
    )
