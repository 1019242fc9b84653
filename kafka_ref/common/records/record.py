"""Single records: what a producer hands in (SimpleRecord) and what a batch yields (Record).

Mirrors org.apache.kafka.common.record.SimpleRecord and DefaultRecord (the v2 record codec).

Inside a batch a record is a length-prefixed body::

    length          varint   bytes of the body that follows
    attributes      int8     unused, always 0
    timestamp_delta varlong  timestamp minus the batch's base timestamp
    offset_delta    varint   offset minus the batch's base offset
    key             varint length (-1 = null) + bytes
    value           varint length (-1 = null) + bytes
    header_count    varint
    headers         (varint key length + UTF-8 key, varint value length (-1 = null) + bytes)*

Only deltas are stored, which is why a leader can move a whole batch to new offsets by
rewriting the 8-byte base offset in the header without touching (or re-checksumming) records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kafka_ref.common.errors import InvalidRecordException
from kafka_ref.common.records.constants import MAX_RECORD_OVERHEAD, NO_SEQUENCE
from kafka_ref.common.records.varint import (
    INT32_MAX,
    read_varint,
    read_varlong,
    size_of_varint,
    size_of_varlong,
    write_varint,
    write_varlong,
)

Header = tuple[str, bytes | None]
EMPTY_HEADERS: tuple[Header, ...] = ()


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """Mirrors org.apache.kafka.common.record.SimpleRecord.

    The content of one record before it has an offset: key, value, headers and an optional
    create timestamp. ``timestamp=None`` lets the batch builder supply its default. Headers are
    ``(key, value)`` pairs with a ``str`` key and ``bytes`` (or ``None``) value.
    """

    key: bytes | None = None
    value: bytes | None = None
    headers: tuple[Header, ...] = ()
    timestamp: int | None = None


class Record(NamedTuple):
    """Mirrors org.apache.kafka.common.record.DefaultRecord (a record read from a v2 batch).

    Produced lazily while iterating a RecordBatch; immutable. ``offset``, ``timestamp`` and
    ``sequence`` are absolute (the batch's base plus this record's delta); under
    LOG_APPEND_TIME every record reports the batch's max timestamp, as Kafka's reader does.
    ``size_in_bytes`` counts the length prefix and the body.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    sequence: int
    size_in_bytes: int
    offset_delta: int
    timestamp_delta: int
    attributes: int = 0

    def has_key(self) -> bool:
        """Mirrors org.apache.kafka.common.record.DefaultRecord#hasKey."""
        return self.key is not None

    def has_value(self) -> bool:
        """Mirrors org.apache.kafka.common.record.DefaultRecord#hasValue."""
        return self.value is not None

    def key_size(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecord#keySize (-1 for a null key)."""
        return -1 if self.key is None else len(self.key)

    def value_size(self) -> int:
        """Mirrors org.apache.kafka.common.record.DefaultRecord#valueSize (-1 for a null value)."""
        return -1 if self.value is None else len(self.value)

    def to_simple_record(self) -> SimpleRecord:
        """The content of this record without its position (for re-batching, e.g. compaction)."""
        return SimpleRecord(self.key, self.value, self.headers, self.timestamp)

    def __repr__(self) -> str:
        key = "null" if self.key is None else f"{len(self.key)} bytes"
        value = "null" if self.value is None else f"{len(self.value)} bytes"
        return f"Record(offset={self.offset}, timestamp={self.timestamp}, key={key}, value={value})"


def increment_sequence(sequence: int, increment: int) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#incrementSequence.

    Producer sequence numbers wrap from Integer.MAX_VALUE back to 0.
    """
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecordBatch#decrementSequence."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def _check_bytes(what: str, data: object) -> None:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidRecordException(f"Record {what} must be bytes or None, got {type(data).__name__}")


def write_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...],
) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecord#writeTo.

    Appends one record to ``out`` and returns the bytes written (length prefix included).
    """
    # 1. The body goes to a scratch buffer first so its length can prefix it; attributes are
    #    always zero in this format.
    body = bytearray(b"\x00")
    # 2. Timestamp delta (varlong), then offset delta (varint).
    write_varlong(timestamp_delta, body)
    write_varint(offset_delta, body)
    # 3. Key and value: length then bytes, or length -1 for null.
    if key is None:
        body.append(0x01)
    else:
        _check_bytes("key", key)
        write_varint(len(key), body)
        body += key
    if value is None:
        body.append(0x01)
    else:
        _check_bytes("value", value)
        write_varint(len(value), body)
        body += value
    # 4. Headers: a count, then each UTF-8 key (never null) and nullable value.
    write_varint(len(headers), body)
    for header_key, header_value in headers:
        if header_key is None:
            raise InvalidRecordException("Invalid null header key found in headers")
        encoded_key = header_key.encode("utf-8")
        write_varint(len(encoded_key), body)
        body += encoded_key
        if header_value is None:
            body.append(0x01)
        else:
            _check_bytes("header value", header_value)
            write_varint(len(header_value), body)
            body += header_value
    # 5. Length prefix, then the body.
    start = len(out)
    write_varint(len(body), out)
    out += body
    return len(out) - start


def size_of_body_in_bytes(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...],
) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecord#sizeOfBodyInBytes."""
    size = 1 + size_of_varint(offset_delta) + size_of_varlong(timestamp_delta)
    size += 1 if key is None else size_of_varint(len(key)) + len(key)
    size += 1 if value is None else size_of_varint(len(value)) + len(value)
    size += size_of_varint(len(headers))
    for header_key, header_value in headers:
        key_len = len(header_key.encode("utf-8"))
        size += size_of_varint(key_len) + key_len
        size += 1 if header_value is None else size_of_varint(len(header_value)) + len(header_value)
    return size


def record_size_upper_bound(key: bytes | None, value: bytes | None, headers: tuple[Header, ...]) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecord#recordSizeUpperBound.

    The most a record can take in a v2 batch whatever its offset and timestamp deltas:
    MAX_RECORD_OVERHEAD (length, attributes and the deltas at their widest) plus the key,
    value and headers with their length varints.
    """
    # 1. The body without its attributes byte and two deltas (1 + 1 + 1 bytes at delta 0) ...
    payload = size_of_body_in_bytes(0, 0, key, value, headers) - 3
    # 2. ... plus the widest record header.
    return MAX_RECORD_OVERHEAD + payload


def size_in_bytes(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...],
) -> int:
    """Mirrors org.apache.kafka.common.record.DefaultRecord#sizeInBytes (prefix + body)."""
    body = size_of_body_in_bytes(offset_delta, timestamp_delta, key, value, headers)
    return body + size_of_varint(body)


def read_record(
    buf: bytes | memoryview,
    pos: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
) -> tuple[Record, int]:
    """Mirrors org.apache.kafka.common.record.DefaultRecord#readFrom.

    Decodes the record starting at ``pos`` of ``buf`` (which ends where the records end) and
    returns it with the position just past it. A malformed record raises
    InvalidRecordException; running off the end of ``buf`` raises IndexError, which the batch
    iterator reports as a premature end of the batch.
    """
    # 1. The body length, and whether the buffer still holds that many bytes.
    body_size, pos = read_varint(buf, pos)
    remaining = len(buf) - pos
    if remaining < body_size:
        raise InvalidRecordException(
            f"Invalid record size: expected {body_size} bytes in record payload, but instead the "
            f"buffer has only {remaining} remaining bytes."
        )
    start = pos
    try:
        # 2. Attributes (unused), timestamp delta; log-append batches report their max timestamp.
        attributes = buf[pos]
        timestamp_delta, pos = read_varlong(buf, pos + 1)
        timestamp = base_timestamp + timestamp_delta if log_append_time is None else log_append_time
        # 3. Offset delta, and the producer sequence it implies (none without a base sequence).
        offset_delta, pos = read_varint(buf, pos)
        sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else NO_SEQUENCE
        # 4. Key and value: a negative length means null.
        key_size, pos = read_varint(buf, pos)
        if key_size < 0:
            key = None
        else:
            key = bytes(buf[pos : pos + key_size])
            pos += key_size
        value_size, pos = read_varint(buf, pos)
        if value_size < 0:
            value = None
        else:
            value = bytes(buf[pos : pos + value_size])
            pos += value_size
        # 5. Headers: the count must be sane before we loop on it.
        num_headers, pos = read_varint(buf, pos)
        if num_headers < 0:
            raise InvalidRecordException(f"Found invalid number of record headers {num_headers}")
        if num_headers > len(buf) - pos:
            raise InvalidRecordException(
                f"Found invalid number of record headers. {num_headers} is larger than the "
                "remaining size of the buffer"
            )
        if num_headers == 0:
            headers: tuple[Header, ...] = EMPTY_HEADERS
        else:
            header_list = []
            for _ in range(num_headers):
                header_key_size, pos = read_varint(buf, pos)
                if header_key_size < 0:
                    raise InvalidRecordException(f"Invalid negative header key size {header_key_size}")
                header_key = bytes(buf[pos : pos + header_key_size]).decode("utf-8")
                pos += header_key_size
                header_value_size, pos = read_varint(buf, pos)
                if header_value_size < 0:
                    header_value = None
                else:
                    header_value = bytes(buf[pos : pos + header_value_size])
                    pos += header_value_size
                header_list.append((header_key, header_value))
            headers = tuple(header_list)
    except (IndexError, ValueError) as exc:
        # UnicodeDecodeError is a ValueError too: a header key that is not UTF-8.
        raise InvalidRecordException(f"Found invalid record structure: {exc}") from exc
    # 6. Everything declared in the length prefix, and nothing more, must have been consumed.
    if pos - start != body_size:
        raise InvalidRecordException(
            f"Invalid record size: expected to read {body_size} bytes in record payload, but "
            f"instead read {pos - start}"
        )
    total_size = size_of_varint(body_size) + body_size
    record = Record(
        base_offset + offset_delta,
        timestamp,
        key,
        value,
        headers,
        sequence,
        total_size,
        offset_delta,
        timestamp_delta,
        attributes,
    )
    return record, pos


__all__ = [
    "EMPTY_HEADERS",
    "Header",
    "Record",
    "SimpleRecord",
    "decrement_sequence",
    "increment_sequence",
    "read_record",
    "size_in_bytes",
    "size_of_body_in_bytes",
    "write_record",
]
