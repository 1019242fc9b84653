"""Kafka's v2 record batch format (magic 2): records, batches and sequences of batches.

Mirrors the package org.apache.kafka.common.record (DefaultRecord, DefaultRecordBatch,
MemoryRecords, MemoryRecordsBuilder, SimpleRecord) for the one format brokers have written
since Kafka 0.11.

- ``SimpleRecord``: what a producer sends (key, value, headers, optional timestamp).
- ``RecordBatch``: one immutable batch over its bytes; header decoded once; records lazily.
- ``Record``: one record read from a batch, with its absolute offset and timestamp.
- ``MemoryRecords``: an immutable sequence of batches (a produce payload, a fetch result).
- ``MemoryRecordsBuilder``: the incremental write path behind ``RecordBatch.build``.
"""

from kafka_ref.common.records.builder import MemoryRecordsBuilder, compute_attributes, write_header
from kafka_ref.common.records.constants import (
    CURRENT_MAGIC_VALUE,
    LOG_OVERHEAD,
    MAGIC_VALUE_V0,
    MAGIC_VALUE_V1,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    TimestampType,
)
from kafka_ref.common.records.memory_records import MemoryRecords
from kafka_ref.common.records.record import (
    Header,
    Record,
    SimpleRecord,
    decrement_sequence,
    increment_sequence,
)
from kafka_ref.common.records.record_batch import RecordBatch

__all__ = [
    "CURRENT_MAGIC_VALUE",
    "CompressionType",
    "Header",
    "LOG_OVERHEAD",
    "MAGIC_VALUE_V0",
    "MAGIC_VALUE_V1",
    "MAGIC_VALUE_V2",
    "MemoryRecords",
    "MemoryRecordsBuilder",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "RECORD_BATCH_OVERHEAD",
    "Record",
    "RecordBatch",
    "SimpleRecord",
    "TimestampType",
    "compute_attributes",
    "decrement_sequence",
    "increment_sequence",
    "write_header",
]
