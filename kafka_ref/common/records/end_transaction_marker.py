"""Transaction markers: the one record of a COMMIT or ABORT control batch.

Mirrors org.apache.kafka.common.record.ControlRecordType and EndTransactionMarker (Kafka 3.8).
The transaction coordinator writes a marker into every partition a transaction touched; the
partition's ProducerStateManager then closes the producer's ongoing transaction. The record key
holds a version (int16) and the control type (int16); the value a version (int16) and the
coordinator epoch (int32).
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from kafka_ref.common.records.record import Record, SimpleRecord
from kafka_ref.common.records.record_batch import RecordBatch

CURRENT_CONTROL_RECORD_KEY_VERSION = 0
CURRENT_END_TXN_MARKER_VALUE_VERSION = 0
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class ControlRecordType(enum.IntEnum):
    """Mirrors org.apache.kafka.common.record.ControlRecordType (the types a 3.8 broker writes for transactions)."""

    ABORT = 0
    COMMIT = 1

    @classmethod
    def parse(cls, key: bytes | None) -> "ControlRecordType | None":
        """Mirrors org.apache.kafka.common.record.ControlRecordType#parse: None for a type this model does not know."""
        # 1. The key must hold at least the version and the type.
        if key is None or len(key) < _KEY.size:
            raise ValueError("Invalid control record key: too short to hold a version and a type")
        _version, type_id = _KEY.unpack_from(key)
        # 2. Known types map to the enum; others (Kafka's UNKNOWN and KRaft's own types) to None.
        try:
            return cls(type_id)
        except ValueError:
            return None

    def record_key(self) -> bytes:
        """Mirrors org.apache.kafka.common.record.ControlRecordType#recordKey."""
        return _KEY.pack(CURRENT_CONTROL_RECORD_KEY_VERSION, int(self))


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """Mirrors org.apache.kafka.common.record.EndTransactionMarker."""

    control_type: ControlRecordType
    coordinator_epoch: int

    def serialize_value(self) -> bytes:
        """Mirrors org.apache.kafka.common.record.EndTransactionMarker#serializeValue."""
        return _VALUE.pack(CURRENT_END_TXN_MARKER_VALUE_VERSION, self.coordinator_epoch)

    @classmethod
    def deserialize(cls, record: Record) -> "EndTransactionMarker":
        """Mirrors org.apache.kafka.common.record.EndTransactionMarker#deserialize."""
        # 1. Only COMMIT and ABORT records are transaction markers.
        control_type = ControlRecordType.parse(record.key)
        if control_type is None:
            raise ValueError(f"Invalid record type for end transaction marker: {record.key!r}")
        # 2. The value holds the coordinator epoch after its version.
        if record.value is None or len(record.value) < _VALUE.size:
            raise ValueError("Invalid end transaction marker value: too short")
        _version, coordinator_epoch = _VALUE.unpack_from(record.value)
        return cls(control_type, coordinator_epoch)


def end_transaction_marker_batch(
    base_offset: int,
    timestamp: int,
    partition_leader_epoch: int,
    producer_id: int,
    producer_epoch: int,
    marker: EndTransactionMarker,
) -> RecordBatch:
    """Mirrors org.apache.kafka.common.record.MemoryRecords#withEndTransactionMarker: a one-record transactional control batch."""
    record = SimpleRecord(marker.control_type.record_key(), marker.serialize_value(), (), timestamp)
    return RecordBatch.build([record], base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
                             producer_id=producer_id, producer_epoch=producer_epoch, timestamp=timestamp,
                             is_transactional=True, is_control=True)
