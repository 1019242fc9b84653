"""Validation of the batches in an append, and the leader's offset assignment.

Mirrors kafka.log.UnifiedLog#analyzeAndValidateRecords (every append, before any offset is
taken) and org.apache.kafka.storage.internals.log.LogValidator (a leader's append: batch and
record checks, offsets from the log end, the leader epoch, LogAppendTime and recompression).
Nothing here changes the log; UnifiedLog appends what LogValidator returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.errors import (
    CorruptRecordException,
    InvalidRecordException,
    InvalidTimestampException,
    RecordTooLargeException,
)
from kafka_ref.common.records import MAGIC_VALUE_V2, CompressionType, MemoryRecords, RecordBatch, SimpleRecord, TimestampType
from kafka_ref.common.records.constants import COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, TIMESTAMP_TYPE_MASK
from kafka_ref.common.time import Time
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
    # (Kept as a CompressionType member, as Kafka's sourceCompression is: the leader's append
    #  then needs no Enum call; a StrEnum member equals its name.)
    source_compression: CompressionType | str = CompressionType.NONE
    monotonic = True
    max_timestamp = NO_TIMESTAMP
    offset_of_max_timestamp = -1
    read_first_message = False
    last_offset_of_first_batch = -1
    tp = topic_partition
    # (A MemoryRecords' batch tuple is walked directly: no iterator call per append.)
    for batch in records.batches if records.__class__ is MemoryRecords else records:
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
        # (A RecordBatch without codec bits is uncompressed: its codec is only looked up when set.)
        if batch.__class__ is RecordBatch:
            if batch.attributes & COMPRESSION_CODEC_MASK:
                source_compression = batch.compression_type
        else:
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
    # 2. Clients may not write control batches. (A RecordBatch's flag is read from its attributes:
    #    this runs per produced batch.)
    if (batch.attributes & CONTROL_FLAG_MASK if batch.__class__ is RecordBatch
            else getattr(batch, "is_control_batch", False)):
        raise InvalidRecordException(f"Clients are not allowed to write control records in partition {tp}")
    # 3. An idempotent or transactional batch needs a sequence number.
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise InvalidRecordException(
            f"Invalid sequence number {batch.base_sequence} in record batch with producerId {batch.producer_id} "
            f"in topic partition {tp}"
        )


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


def validate_keys(batch: RecordBatch, topic_partition: TopicPartition) -> None:
    """Mirrors org.apache.kafka.storage.internals.log.LogValidator#validateKey over one batch's records.

    A compacted topic keeps the latest record per key, so a record without a key is refused
    (INVALID_RECORD). Raises for the first such record; Kafka lists each in recordErrors.
    """
    for index, record in enumerate(batch):
        if record.key is None:
            raise InvalidRecordException(
                f"Compacted topic cannot accept message without key in topic partition {topic_partition} "
                f"(record {index} of its batch)")


def target_compression(topic_compression_type: str) -> CompressionType | None:
    """Mirrors org.apache.kafka.common.record.BrokerCompressionType#targetCompression: the codec a
    topic's compression.type asks the leader to store (None: ``producer``, keep the producer's)."""
    if topic_compression_type == "producer":
        return None
    return CompressionType.NONE if topic_compression_type == "uncompressed" else CompressionType(topic_compression_type)


def recompress(batch: RecordBatch, target: CompressionType) -> RecordBatch:
    """The batch's records written again in ``target`` (LogValidator#build_records_and_assign_offsets).

    The records are written again with the target codec, at consecutive offsets from the
    batch's base, keeping their timestamps, keys, values and headers, and the batch's producer
    id, epoch, base sequence, transactional and control flags and leader epoch
    (LogValidatorTest#checkRecompression).
    """
    records = [SimpleRecord(r.key, r.value, r.headers, r.timestamp) for r in batch]
    return RecordBatch.build(
        records, base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
        compression=target, is_transactional=batch.is_transactional, is_control=batch.is_control_batch,
    )


class LongRef:
    """Mirrors org.apache.kafka.common.utils.PrimitiveRef.LongRef: the offset counter the validator moves on."""

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"LongRef({self.value})"


@dataclass
class ValidationResult:
    """Mirrors org.apache.kafka.storage.internals.log.LogValidator.ValidationResult.

    Kafka's recordValidationStats (conversion counts and times for metrics) is left out.
    """

    log_append_time_ms: int
    validated_records: MemoryRecords
    max_timestamp_ms: int
    shallow_offset_of_max_timestamp: int
    message_size_maybe_changed: bool


class LogValidator:
    """Mirrors org.apache.kafka.storage.internals.log.LogValidator (magic v2 only).

    The leader's check and rewrite of an append: each batch is validated, given offsets from
    the counter and the leader's epoch, stamped with the log append time when the topic asks
    for it, and written again when the topic's codec differs from the producer's. There is no
    format conversion (every batch is v2).

    Like Kafka, the compressed path reads every record (the codec has to be undone anyway);
    unlike Kafka, the uncompressed path reads the records only when there is a rule a record
    could break (LogAppendTime, a before/after timestamp bound, a compacted topic's keys): the
    header's max timestamp and record count are used otherwise, which is what the records say
    for any batch that passed validate_batch. Timestamp errors are looked for first, as Kafka
    reports INVALID_TIMESTAMP when a batch has both kinds of error.
    """

    def __init__(
        self,
        records: MemoryRecords,
        topic_partition: TopicPartition,
        time: Time,
        source_compression_type: CompressionType | str,
        target_compression: CompressionType | str,
        compacted_topic: bool,
        timestamp_type: TimestampType | str,
        timestamp_before_max_ms: int,
        timestamp_after_max_ms: int,
        partition_leader_epoch: int,
        origin: AppendOrigin | str,
    ) -> None:
        self.records = records
        self.topic_partition = topic_partition
        self.time = time
        # (Members are kept as they are, tested inline: an Enum call costs two Python calls per
        #  append, a helper one more.)
        self.source_compression_type = (source_compression_type if source_compression_type.__class__ is CompressionType
                                        else CompressionType(source_compression_type))
        self.target_compression = (target_compression if target_compression.__class__ is CompressionType
                                   else CompressionType(target_compression))
        self.compacted_topic = compacted_topic
        # The topic's message.timestamp.type, as LogConfig spells it ("CreateTime" / "LogAppendTime").
        if timestamp_type in (TimestampType.LOG_APPEND_TIME, "LogAppendTime"):
            self.timestamp_type = "LogAppendTime"
        else:
            self.timestamp_type = "CreateTime"
        self.timestamp_before_max_ms = timestamp_before_max_ms
        self.timestamp_after_max_ms = timestamp_after_max_ms
        self.partition_leader_epoch = partition_leader_epoch
        self.origin = origin if origin.__class__ is AppendOrigin else AppendOrigin(origin)

    @property
    def _checks_timestamps(self) -> bool:
        """Whether a record's timestamp can fail LogValidator#validateTimestamp under this config."""
        return (self.timestamp_type == "LogAppendTime" or self.timestamp_before_max_ms != NO_TIMESTAMP_BOUND
                or self.timestamp_after_max_ms != NO_TIMESTAMP_BOUND)

    def validate_messages_and_assign_offsets(self, offset_counter: LongRef) -> ValidationResult:
        """Mirrors org.apache.kafka.storage.internals.log.LogValidator#validateMessagesAndAssignOffsets.

        Uncompressed in and out: the batches are rewritten in place. Any codec on either side:
        the compressed path, which may write the records again.
        """
        if self.source_compression_type is CompressionType.NONE and self.target_compression is CompressionType.NONE:
            return self.assign_offsets_non_compressed(offset_counter)
        return self.validate_messages_and_assign_offsets_compressed(offset_counter)

    def _first_batch_and_maybe_validate_no_more_batches(self) -> RecordBatch:
        """Mirrors org.apache.kafka.storage.internals.log.LogValidator#getFirstBatchAndMaybeValidateNoMoreBatches."""
        batches = self.records.batches
        # 1. There must be a batch.
        if not batches:
            raise InvalidRecordException("Record batch has no batches at all")
        # 2. A v2 append carries exactly one batch.
        if len(batches) > 1:
            raise InvalidRecordException("Compressed outer record has more than one batch")
        return batches[0]

    def assign_offsets_non_compressed(self, offset_counter: LongRef) -> ValidationResult:
        """Mirrors org.apache.kafka.storage.internals.log.LogValidator#assignOffsetsNonCompressed.

        Only headers change: the last offset (so the base offset), the leader epoch and, under
        LogAppendTime, the timestamp type and max timestamp. The records keep their bytes.
        """
        now = self.time.milliseconds()
        max_timestamp, shallow_offset_of_max_timestamp = NO_TIMESTAMP, -1
        log_append_time = self.timestamp_type == "LogAppendTime"
        check_timestamps = self._checks_timestamps
        # 1. One batch, and only one.
        self._first_batch_and_maybe_validate_no_more_batches()
        validated: list[RecordBatch] = []
        for batch in self.records.batches:
            # 2. The batch's header (offset range, count, control flag, sequence).
            validate_batch(batch, self.topic_partition, self.origin)
            # 3. Its records' timestamps, when a rule could reject one, then their keys.
            if check_timestamps:
                validate_timestamps(batch, self.topic_partition, now, self.timestamp_type,
                                    self.timestamp_before_max_ms, self.timestamp_after_max_ms)
            if self.compacted_topic:
                validate_keys(batch, self.topic_partition)
            # 4. Offsets run on from the counter; the header's last offset moves with them.
            offset_counter.value += batch.record_count
            last_offset = offset_counter.value - 1
            stamped = batch.with_offset_and_epoch(last_offset - batch.last_offset_delta, self.partition_leader_epoch)
            # 5. The batch's max timestamp: the leader's clock, or the records' own (the
            #    type bit becomes CreateTime: a producer's LogAppendTime bit is not kept).
            if log_append_time:
                stamped = stamped.with_max_timestamp(TimestampType.LOG_APPEND_TIME, now)
            else:
                if stamped.max_timestamp > max_timestamp:
                    max_timestamp, shallow_offset_of_max_timestamp = stamped.max_timestamp, last_offset
                # (A batch already typed CreateTime keeps its header: setMaxTimestamp would hand
                #  the same batch back, so it is only called when the type bit is set.)
                if stamped.attributes & TIMESTAMP_TYPE_MASK:
                    stamped = stamped.with_max_timestamp(TimestampType.CREATE_TIME, stamped.max_timestamp)
            validated.append(stamped)
        # 6. Under LogAppendTime the append's max timestamp is the clock, at the last offset.
        if log_append_time:
            max_timestamp, shallow_offset_of_max_timestamp = now, offset_counter.value - 1
        # (The validated batches are RecordBatches and there is one: MemoryRecords is made directly,
        #  without MemoryRecords.of's checks.)
        return ValidationResult(now, MemoryRecords(tuple(validated)), max_timestamp, shallow_offset_of_max_timestamp,
                                False)

    def validate_messages_and_assign_offsets_compressed(self, offset_counter: LongRef) -> ValidationResult:
        """Mirrors org.apache.kafka.storage.internals.log.LogValidator#validateMessagesAndAssignOffsetsCompressed.

        Every record is read. The batch keeps its bytes (only the header changes) when the
        topic's codec is the producer's and the records' offsets run 0, 1, 2, ...; otherwise
        the records are written again in the topic's codec. An uncompressed control batch is
        never compressed.
        """
        now = self.time.milliseconds()
        # 1. In place only if the codec stays the same (or an uncompressed control batch).
        in_place_assignment = self.source_compression_type is self.target_compression
        first_batch = self._first_batch_and_maybe_validate_no_more_batches()
        if self.source_compression_type is CompressionType.NONE and first_batch.is_control_batch:
            in_place_assignment = True
        max_timestamp = NO_TIMESTAMP
        validated_records = []
        expected_inner_offset = 0
        for batch in self.records.batches:
            # 2. The batch's header.
            validate_batch(batch, self.topic_partition, self.origin)
            # 3. Each record: its timestamp, its key, and whether its offset is the one expected.
            if self._checks_timestamps:
                validate_timestamps(batch, self.topic_partition, now, self.timestamp_type,
                                    self.timestamp_before_max_ms, self.timestamp_after_max_ms)
            if self.compacted_topic:
                validate_keys(batch, self.topic_partition)
            for record in batch:
                if record.timestamp > max_timestamp:
                    max_timestamp = record.timestamp
                if record.offset != expected_inner_offset:
                    in_place_assignment = False
                expected_inner_offset += 1
                validated_records.append(record)
        # 4. Written again: new offsets, the topic's codec, the leader's epoch.
        if not in_place_assignment:
            return self._build_records_and_assign_offsets(offset_counter, now, first_batch, len(validated_records))
        # 5. In place: the counter moves past the records, and the header is stamped.
        offset_counter.value += len(validated_records)
        last_offset = offset_counter.value - 1
        if self.timestamp_type == "LogAppendTime":
            max_timestamp = now
            timestamp_type = TimestampType.LOG_APPEND_TIME
        else:
            timestamp_type = TimestampType.CREATE_TIME
        stamped = first_batch.with_offset_and_epoch(last_offset - first_batch.last_offset_delta,
                                                    self.partition_leader_epoch)
        stamped = stamped.with_max_timestamp(timestamp_type, max_timestamp)
        return ValidationResult(now, MemoryRecords.of((stamped,)), max_timestamp, last_offset, False)

    def _build_records_and_assign_offsets(self, offset_counter: LongRef, log_append_time: int,
                                          first_batch: RecordBatch, record_count: int) -> ValidationResult:
        """Mirrors org.apache.kafka.storage.internals.log.LogValidator#buildRecordsAndAssignOffsets.

        One new batch in the topic's codec at offsets from the counter, with the first batch's
        producer fields and the leader's epoch; the result's max timestamp and its offset are
        what MemoryRecordsBuilder#info reports for a v2 batch. (A control batch keeps its flag
        here; Kafka's builder would drop it, but only a compressed control batch could get here
        and brokers write theirs uncompressed.)
        """
        # 1. Write the records again at consecutive offsets from the counter.
        rebuilt = recompress(first_batch, self.target_compression).with_offset_and_epoch(
            offset_counter.value, self.partition_leader_epoch)
        offset_counter.value += record_count
        last_offset = offset_counter.value - 1
        # 2. LogAppendTime: the clock is the batch's max timestamp, at the last offset.
        if self.timestamp_type == "LogAppendTime":
            rebuilt = rebuilt.with_max_timestamp(TimestampType.LOG_APPEND_TIME, log_append_time)
            return ValidationResult(log_append_time, MemoryRecords.of((rebuilt,)), log_append_time, last_offset, True)
        # 3. CreateTime: the records' max, at the last offset (none at all: -1, -1).
        if rebuilt.max_timestamp == NO_TIMESTAMP:
            return ValidationResult(log_append_time, MemoryRecords.of((rebuilt,)), NO_TIMESTAMP, -1, True)
        return ValidationResult(log_append_time, MemoryRecords.of((rebuilt,)), rebuilt.max_timestamp, last_offset, True)
