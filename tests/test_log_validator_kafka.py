"""Ports of kafka.log.LogValidatorTest (Kafka 3.8.0): the leader's validation and offset assignment.

Each test names the Kafka test it mirrors and drives kafka_ref's LogValidator
(kafka_ref/log/log_validator.py) the way Kafka's test drives its own: records, the source and
target codecs, the topic's timestamp type and bounds, the leader epoch and the origin, then
``validate_messages_and_assign_offsets`` with an offset counter. kafka_ref has only magic v2
batches, so only the V2 form of a Kafka test is ported. Kafka's test reads the wall clock; here a
MockTime stands in, and its ``now`` plays the part of ``System.currentTimeMillis()``.

Not ported:
- testAllowMultiBatch, testMisMatchMagic, testLogAppendTimeNonCompressedV0, testLogAppendTimeNonCompressedV1,
  testLogAppendTimeWithRecompressionV1, testLogAppendTimeWithoutRecompressionV1,
  testNonCompressedV1, testRecompressionV1, testCompressedV1, testInvalidCreateTimeNonCompressedV1,
  testInvalidCreateTimeCompressedV1, testRelativeOffsetAssignmentNonCompressedV1,
  testRelativeOffsetAssignmentCompressedV1, testAbsoluteOffsetAssignmentNonCompressed,
  testAbsoluteOffsetAssignmentCompressed:
  magic v0/v1 batches, which kafka_ref does not model.
- testCreateTimeUpConversionV0ToV1, testCreateTimeUpConversionV0ToV2, testCreateTimeUpConversionV1ToV2,
  and the twelve testOffsetAssignmentAfterUpConversion* / testOffsetAssignmentAfterDownConversion*
  tests (V0ToV1, V0ToV2, V1ToV2, V1ToV0, V2ToV1, V2ToV0, each NonCompressed and Compressed): format
  conversion between magic versions (no v0/v1 here).
- testDownConversionOfTransactionalRecordsNotPermitted, testDownConversionOfIdempotentRecordsNotPermitted:
  a topic message format below v2 (not modelled).
- testZStdCompressedWithUnavailableIBPVersion: inter.broker.protocol.version below 2.1 is not modelled.
- testInvalidTimestampExceptionHasBatchIndex, testInvalidRecordExceptionHasBatchIndex: per-record
  errors (RecordValidationException's recordErrors) are not modelled (kafka_ref raises the first
  error), and they ask for magic v1 or carry v0/v1 records. testBatchWithInvalidRecordsAndInvalidTimestamp is ported for
  its rule only (a timestamp error wins over a record error), in a v2 batch whose record error is a
  missing key on a compacted topic (Kafka's is a v0 record inside a v1 batch).
- testRecompressionV2: ported in tests/test_recompression.py (through UnifiedLog).
- testRecordWithPastTimestampIsRejected, testRecordWithFutureTimestampIsRejected: ported in
  tests/test_timestamp_bounds.py.

Two tests mirror no Kafka test: they pin Kafka rules no LogValidatorTest case reaches in a v2
batch (UnifiedLog#append's size re-check after a rewrite; LogValidator#validateBatch's sequence
rule). test_compacted_topic_constraints mirrors UnifiedLogTest#testCompactedTopicConstraints, the
one Kafka test of LogValidator#validateKey.
"""

from __future__ import annotations

import struct

import pytest

from kafka_ref.common.errors import InvalidRecordException, InvalidTimestampException, RecordTooLargeException
from kafka_ref.common.records import (
    NO_TIMESTAMP,
    CompressionType,
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    write_header,
)
from kafka_ref.common.records.builder import MemoryRecordsBuilder
from kafka_ref.common.records.compression import compress
from kafka_ref.common.records.constants import LAST_OFFSET_DELTA_OFFSET, RECORDS_COUNT_OFFSET, RECORD_BATCH_OVERHEAD
from kafka_ref.common.records.record import write_record
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import AppendOrigin, Disk, UnifiedLog
from kafka_ref.log.log_validator import LogValidator, LongRef

TP = TopicPartition("topic", 0)
VALUES = (b"hello", b"there", b"beautiful")
# The producer fields checkNonCompressed / checkCompressed give their v2 batch.
PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE, PARTITION_LEADER_EPOCH = 1324, 10, 984, 40


def create_records(timestamp: int = NO_TIMESTAMP, codec: str = "none", values=VALUES) -> MemoryRecords:
    """LogValidatorTest#createRecords: one v2 batch of ``values`` at offsets 0.., all at ``timestamp``."""
    builder = MemoryRecordsBuilder(compression=codec)
    for offset, value in enumerate(values):
        builder.append_with_offset(offset, timestamp, None, value)
    return builder.build()


def validate(records: MemoryRecords, source: str, target: str, *, time: MockTime | None = None,
             timestamp_type: TimestampType = TimestampType.CREATE_TIME, before_ms: int = 1000, after_ms: int = 1000,
             epoch: int = -1, origin: AppendOrigin = AppendOrigin.CLIENT, offset_counter: LongRef | None = None,
             compacted: bool = False):
    """``new LogValidator(...).validateMessagesAndAssignOffsets(counter, ...)`` with Kafka's test defaults."""
    validator = LogValidator(records, TP, time or MockTime(), source, target, compacted, timestamp_type, before_ms,
                             after_ms, epoch, origin)
    return validator.validate_messages_and_assign_offsets(offset_counter if offset_counter is not None else LongRef(0))


def producer_records(timestamps: list[int], codec: str) -> MemoryRecords:
    """The batch of checkNonCompressed / checkCompressed: a transactional v2 batch with producer fields."""
    return MemoryRecords.with_records(
        [SimpleRecord(None, value, (), ts) for value, ts in zip(VALUES, timestamps)], compression=codec,
        producer_id=PRODUCER_ID, producer_epoch=PRODUCER_EPOCH, base_sequence=BASE_SEQUENCE, is_transactional=True,
        partition_leader_epoch=PARTITION_LEADER_EPOCH)


def two_batches(codec: str) -> MemoryRecords:
    """LogValidatorTest#createTwoBatchedRecords: a batch at 0 and a batch of two at 1."""
    first = RecordBatch.build([SimpleRecord(b"1", b"a", (), 10)], base_offset=0, compression=codec)
    second = RecordBatch.build([SimpleRecord(b"2", b"b", (), 11), SimpleRecord(b"3", b"c", (), 12)], base_offset=1,
                               compression=codec)
    return MemoryRecords.of([first, second])


def with_header_ints(records: MemoryRecords, **fields: int) -> MemoryRecords:
    """The batch with header fields overwritten in place (ByteBuffer#putInt); the CRC is left stale."""
    buffer = bytearray(records.batches[0].buffer)
    positions = {"count": RECORDS_COUNT_OFFSET, "last_offset_delta": LAST_OFFSET_DELTA_OFFSET}
    for name, value in fields.items():
        struct.pack_into(">i", buffer, positions[name], value)
    return MemoryRecords.of([RecordBatch(bytes(buffer))])


def assert_offsets(records: MemoryRecords, base_offset: int) -> None:
    """LogValidatorTest#checkOffsets: records at consecutive offsets from ``base_offset``."""
    offsets = [record.offset for record in records.records()]
    assert offsets == list(range(base_offset, base_offset + len(VALUES)))


def assert_log_append_time(batch: RecordBatch, now: int, base_timestamp: int) -> None:
    """LogValidatorTest#validateLogAppendTime for a v2 batch."""
    assert batch.is_valid()
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == now
    assert batch.base_timestamp == base_timestamp
    assert [record.timestamp for record in batch] == [now] * batch.record_count


@pytest.mark.parametrize(("source", "target"), [("gzip", "gzip"), ("gzip", "none"), ("none", "none"), ("none", "gzip")])
def test_only_one_batch(source, target):
    """Mirrors LogValidatorTest#testOnlyOneBatch (the magic v2 cases)."""
    with pytest.raises(InvalidRecordException, match="more than one batch"):
        validate(two_batches(source), source, target)


def test_validation_of_batches_with_non_sequential_inner_offsets():
    """Mirrors LogValidatorTest#testValidationOfBatchesWithNonSequentialInnerOffsets (magic v2: rejected)."""
    # Twenty records all written at offset 0 (appendUncheckedWithOffset), gzip, so the header
    # says one offset but twenty records.
    section = bytearray()
    for i in range(20):
        write_record(section, 0, 0, None, str(i).encode(), ())
    buffer = bytearray(RECORD_BATCH_OVERHEAD) + compress(CompressionType.GZIP, bytes(section))
    write_header(buffer, base_offset=0, last_offset_delta=0, compression=CompressionType.GZIP,
                 timestamp_type=TimestampType.CREATE_TIME, first_timestamp=NO_TIMESTAMP, max_timestamp=NO_TIMESTAMP,
                 producer_id=-1, producer_epoch=-1, base_sequence=-1, is_transactional=False,
                 is_control_batch=False, partition_leader_epoch=-1, num_records=20)
    records = MemoryRecords.of([RecordBatch(bytes(buffer))])
    with pytest.raises(InvalidRecordException, match=r"Inconsistent batch offset range \[0, 0\] and count of records 20"):
        validate(records, "gzip", "gzip")


def test_log_append_time_non_compressed_v2():
    """Mirrors LogValidatorTest#testLogAppendTimeNonCompressedV2."""
    time = MockTime()
    records = create_records(timestamp=1234)
    counter = LongRef(0)
    result = validate(records, "none", "none", time=time, timestamp_type=TimestampType.LOG_APPEND_TIME,
                      offset_counter=counter)
    assert counter.value == 3
    assert len(list(result.validated_records.records())) == 3
    now = time.milliseconds()
    for batch in result.validated_records:
        assert_log_append_time(batch, now, 1234)
    assert result.max_timestamp_ms == now
    assert result.message_size_maybe_changed is False
    assert result.shallow_offset_of_max_timestamp == 2


def test_log_append_time_with_recompression_v2():
    """Mirrors LogValidatorTest#testLogAppendTimeWithRecompressionV2.

    Kafka's batch is rewritten because it comes as magic v0; here, because the topic's codec (lz4)
    differs from the producer's (gzip). The records carry no timestamp, as v0 records do.
    """
    time = MockTime()
    records = create_records(codec="gzip")
    result = validate(records, "gzip", "lz4", time=time, timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert len(list(result.validated_records.records())) == 3
    now = time.milliseconds()
    [batch] = result.validated_records.batches
    assert batch.compression_type is CompressionType.LZ4
    assert_log_append_time(batch, now, NO_TIMESTAMP)
    assert result.max_timestamp_ms == now
    assert result.shallow_offset_of_max_timestamp == 2
    assert result.message_size_maybe_changed is True


def test_log_append_time_without_recompression_v2():
    """Mirrors LogValidatorTest#testLogAppendTimeWithoutRecompressionV2."""
    time = MockTime()
    records = create_records(timestamp=1234, codec="gzip")
    result = validate(records, "gzip", "gzip", time=time, timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert len(list(result.validated_records.records())) == 3
    now = time.milliseconds()
    [batch] = result.validated_records.batches
    assert batch.compression_type is CompressionType.GZIP
    assert_log_append_time(batch, now, 1234)
    assert result.max_timestamp_ms == now
    assert result.shallow_offset_of_max_timestamp == 2
    assert result.message_size_maybe_changed is False


@pytest.mark.parametrize(("last_offset_delta", "count"), [
    (0, 3), (15, 3), (-3, 3), (2, -3), (2, 6), (2, 0), (-3, -2),  # inconsistent or invalid
    (5, 6), (1, 2),  # consistent, but not the number of records the batch holds
])
def test_invalid_offset_range_and_record_count(last_offset_delta, count):
    """Mirrors LogValidatorTest#testInvalidOffsetRangeAndRecordCount (assertInvalidBatchCountOverrides)."""
    records = with_header_ints(create_records(timestamp=1234), count=count, last_offset_delta=last_offset_delta)
    with pytest.raises(InvalidRecordException):
        validate(records, "gzip", "gzip", timestamp_type=TimestampType.LOG_APPEND_TIME)


def test_valid_offset_range_and_record_count():
    """Mirrors LogValidatorTest#testInvalidOffsetRangeAndRecordCount (validateRecordBatchWithCountOverrides(2, 3))."""
    time = MockTime()
    records = with_header_ints(create_records(timestamp=1234), count=3, last_offset_delta=2)
    result = validate(records, "gzip", "gzip", time=time, timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert [r.offset for r in result.validated_records.records()] == [0, 1, 2]
    assert result.max_timestamp_ms == time.milliseconds()


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_create_time_batch_keeps_producer_fields(codec):
    """Mirrors LogValidatorTest#testNonCompressedV2 (codec none) and #testCompressedV2 (codec gzip)."""
    time = MockTime()
    now = time.milliseconds()
    timestamps = [now - 1, now + 1, now]  # the record at offset 1 has the max timestamp
    records = producer_records(timestamps, codec)
    counter = LongRef(0)
    result = validate(records, codec, codec, time=time, epoch=PARTITION_LEADER_EPOCH, offset_counter=counter)
    [batch] = result.validated_records.batches
    assert batch.is_valid()
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    assert batch.base_timestamp == now - 1
    assert batch.max_timestamp == now + 1
    assert (batch.producer_epoch, batch.producer_id, batch.base_sequence, batch.is_transactional,
            batch.partition_leader_epoch) == (PRODUCER_EPOCH, PRODUCER_ID, BASE_SEQUENCE, True, PARTITION_LEADER_EPOCH)
    assert [record.timestamp for record in batch] == timestamps
    assert counter.value == 3
    assert result.max_timestamp_ms == now + 1
    assert len(records.batches) == 1
    assert result.shallow_offset_of_max_timestamp == 2
    assert result.message_size_maybe_changed is False
    # In place: the producer's bytes after the header fields a leader stamps.
    assert batch.buffer[16:] == records.batches[0].buffer[16:]


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_invalid_create_time(codec):
    """Mirrors LogValidatorTest#testInvalidCreateTimeNonCompressedV2 (none) and #testInvalidCreateTimeCompressedV2 (gzip)."""
    time = MockTime()
    records = create_records(timestamp=time.milliseconds() - 1001, codec=codec)
    with pytest.raises(InvalidTimestampException, match="is out of range"):
        validate(records, codec, codec, time=time)


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_relative_offset_assignment(codec):
    """Mirrors LogValidatorTest#testRelativeOffsetAssignmentNonCompressedV2 (none) and
    #testRelativeOffsetAssignmentCompressedV2 (gzip)."""
    time = MockTime()
    records = create_records(timestamp=time.milliseconds(), codec=codec)
    offset = 1234567
    assert_offsets(records, 0)
    counter = LongRef(offset)
    result = validate(records, codec, codec, time=time, before_ms=5000, after_ms=5000, offset_counter=counter)
    assert_offsets(result.validated_records, offset)
    assert counter.value == offset + 3


def control_batch() -> MemoryRecords:
    """MemoryRecords#withEndTransactionMarker(23423, 5, COMMIT with coordinator epoch 0): one control record."""
    key = struct.pack(">hh", 0, 1)       # version 0, ControlRecordType.COMMIT
    value = struct.pack(">hi", 0, 0)     # version 0, coordinator epoch 0
    return MemoryRecords.with_records([SimpleRecord(key, value)], producer_id=23423, producer_epoch=5,
                                      is_transactional=True, is_control=True)


def test_control_records_not_allowed_from_clients():
    """Mirrors LogValidatorTest#testControlRecordsNotAllowedFromClients."""
    with pytest.raises(InvalidRecordException, match="Clients are not allowed to write control records"):
        validate(control_batch(), "none", "none", before_ms=5000, after_ms=5000, offset_counter=LongRef(1234567))


def test_control_records_not_compressed():
    """Mirrors LogValidatorTest#testControlRecordsNotCompressed: the topic's snappy is not applied."""
    records = control_batch()
    result = validate(records, "none", "snappy", before_ms=5000, after_ms=5000, origin=AppendOrigin.COORDINATOR,
                      offset_counter=LongRef(1234567))
    [batch] = result.validated_records.batches
    assert not batch.is_compressed()
    assert batch.is_control_batch
    assert batch.base_offset == 1234567
    assert result.message_size_maybe_changed is False


def test_non_increasing_offset_record_batch_is_rejected():
    """Mirrors LogValidatorTest#testNonIncreasingOffsetRecordBatchHasMetricsLogged (without the meter)."""
    builder = MemoryRecordsBuilder()
    for offset, value in zip((0, 2, 3), VALUES):
        builder.append_with_offset(offset, NO_TIMESTAMP, None, value)
    # setLastOffset(2) on a batch whose last offset delta is 3: the base offset becomes -1.
    records = MemoryRecords.of([builder.build_batch().with_last_offset(2)])
    with pytest.raises(InvalidRecordException, match=r"Inconsistent batch offset range \[-1, 2\] and count of records 3"):
        validate(records, "gzip", "gzip", before_ms=5000, after_ms=5000)


@pytest.mark.parametrize(("source", "target"), [("gzip", "gzip"), ("none", "none"), ("none", "gzip")])
def test_batch_without_records_not_allowed(source, target):
    """Mirrors LogValidatorTest#testCompressedBatchWithoutRecordsNotAllowed (gzip, gzip),
    #testUncompressedBatchWithoutRecordsNotAllowed (none, none) and
    #testRecompressedBatchWithoutRecordsNotAllowed (none, gzip)."""
    # DefaultRecordBatch#writeEmptyHeader: offsets 0..5 claimed, no records.
    buffer = bytearray(RECORD_BATCH_OVERHEAD)
    write_header(buffer, base_offset=0, last_offset_delta=5, compression=CompressionType.NONE,
                 timestamp_type=TimestampType.CREATE_TIME, first_timestamp=MockTime().milliseconds(),
                 max_timestamp=MockTime().milliseconds(), producer_id=PRODUCER_ID, producer_epoch=PRODUCER_EPOCH,
                 base_sequence=BASE_SEQUENCE, is_transactional=True, is_control_batch=False,
                 partition_leader_epoch=PARTITION_LEADER_EPOCH, num_records=0)
    records = MemoryRecords.of([RecordBatch(bytes(buffer))])
    with pytest.raises(InvalidRecordException, match="Invalid reported count for record batch: 0"):
        validate(records, source, target, before_ms=5000, after_ms=5000, offset_counter=LongRef(1234567))


LARGE_VALUES = (b"some" * 256, b"data" * 256)


def test_same_codec_does_not_cause_recompression():
    """Mirrors LogValidatorTest#testDifferentLevelDoesNotCauseRecompression.

    kafka_ref has no compression levels; what is kept is the rule behind the test: the same codec
    means the producer's batch is stored as it came, byte for byte.
    """
    records = create_records(codec="gzip", values=LARGE_VALUES)
    result = validate(records, "gzip", "gzip", before_ms=5000, after_ms=5000)
    assert result.validated_records == records
    assert result.message_size_maybe_changed is False


def test_different_codec_causes_recompression():
    """Mirrors LogValidatorTest#testDifferentCodecCausesRecompression."""
    records = create_records(codec="gzip", values=LARGE_VALUES)
    result = validate(records, "gzip", "lz4", before_ms=5000, after_ms=5000)
    assert result.validated_records == create_records(codec="lz4", values=LARGE_VALUES)
    assert result.message_size_maybe_changed is True
    # No record has a timestamp: MemoryRecordsBuilder#info reports none, at offset -1.
    assert (result.max_timestamp_ms, result.shallow_offset_of_max_timestamp) == (NO_TIMESTAMP, -1)


def test_recompressed_batch_too_large_is_rejected_by_the_log():
    """No Kafka test: UnifiedLog#append re-checks max.message.bytes after LogValidator wrote a batch again
    (messageSizeMaybeChanged), so a batch that grows past it is refused."""
    values = tuple(bytes([i]) * 4000 for i in range(3))
    records = create_records(codec="gzip", values=values)
    log = UnifiedLog.create(TP, Disk(0), time=MockTime(), max_message_bytes=records.batches[0].size_in_bytes + 100)
    log.compression_type = "uncompressed"
    with pytest.raises(RecordTooLargeException, match="Message batch size is"):
        log.append_as_leader(records, 0)
    assert log.log_end_offset == 0
    # The same batch is accepted when the topic keeps the producer's codec.
    log.compression_type = "producer"
    info = log.append_as_leader(records, 0)
    assert (info.first_offset, info.last_offset, log.log_end_offset) == (0, 2, 3)


def test_idempotent_batch_without_sequence_is_rejected():
    """No Kafka test: LogValidator#validateBatch refuses a client batch with a producer id but no base
    sequence (INVALID_RECORD); other origins are not checked."""
    records = MemoryRecords.of([RecordBatch.build([SimpleRecord(None, b"v")], producer_id=7, producer_epoch=0,
                                                  base_sequence=0)])
    raw = bytearray(records.batches[0].buffer)
    struct.pack_into(">i", raw, 53, -1)  # base sequence field
    bad = MemoryRecords.of([RecordBatch(bytes(raw))])
    with pytest.raises(InvalidRecordException, match="Invalid sequence number -1 in record batch with producerId 7"):
        validate(bad, "none", "none")
    # The same batch from a coordinator is not checked.
    result = validate(bad, "none", "none", origin=AppendOrigin.COORDINATOR, offset_counter=LongRef(5))
    assert result.validated_records.batches[0].base_offset == 5


def test_compacted_topic_constraints():
    """Mirrors UnifiedLogTest#testCompactedTopicConstraints (LogValidator#validateKey, through the leader's append).

    Kafka's RecordValidationException lists each keyless record; kafka_ref raises InvalidRecordException
    naming the first one's index in its batch.
    """
    keyed = SimpleRecord(b"and here it is", b"this message has a key")
    another_keyed = SimpleRecord(b"another key", b"this message also has a key")
    unkeyed = SimpleRecord(None, b"this message does not have a key")
    log = UnifiedLog.create(TP, Disk(0), time=MockTime())
    log.compact = True
    for records, index in (
        (MemoryRecords.with_records([unkeyed, keyed]), 0),
        (MemoryRecords.with_records([unkeyed]), 0),
        (MemoryRecords.with_records([keyed, unkeyed], compression="gzip"), 1),
    ):
        with pytest.raises(InvalidRecordException,
                           match=rf"^Compacted topic cannot accept message without key .*\(record {index} of its batch\)"):
            log.append_as_leader(records, 0)
    assert log.log_end_offset == 0
    log.append_as_leader(MemoryRecords.with_records([keyed]), 0)
    log.append_as_leader(MemoryRecords.with_records([keyed, another_keyed]), 0)
    log.append_as_leader(MemoryRecords.with_records([keyed], compression="gzip"), 0)
    assert log.log_end_offset == 4


def test_timestamp_error_takes_precedence_over_a_missing_key():
    """Mirrors LogValidatorTest#testBatchWithInvalidRecordsAndInvalidTimestamp's precedence rule in a v2 batch:
    a batch with both a record error and a timestamp error is refused for its timestamp."""
    time = MockTime()
    now = time.milliseconds()
    records = MemoryRecords.with_records([SimpleRecord(None, b"no key", (), now),
                                          SimpleRecord(b"k", b"too old", (), now - 1001)])
    for codec in ("none", "gzip"):
        with pytest.raises(InvalidTimestampException):
            validate(records, codec, codec, time=time, compacted=True)
    # Without the timestamp bound the missing key is what is refused.
    with pytest.raises(InvalidRecordException, match="Compacted topic cannot accept message without key"):
        validate(records, "none", "none", time=time, compacted=True, before_ms=2**63 - 1, after_ms=2**63 - 1)
