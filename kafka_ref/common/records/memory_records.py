"""A sequence of record batches, as a produce request carries and a fetch returns.

Mirrors org.apache.kafka.common.record.MemoryRecords and ByteBufferLogInputStream.

Kafka keeps these as one ByteBuffer and slices batches out on demand. Here the batches are
kept as a tuple of immutable RecordBatch objects (references, never copies, when they come
from a log) and the bytes are produced only when asked for with ``to_bytes``. The total size
is computed once, so fetch-size accounting is O(1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import overload

from kafka_ref.common.errors import CorruptRecordException
from kafka_ref.common.records.constants import (
    CURRENT_MAGIC_VALUE,
    INT32,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAGIC_VALUE_V2,
    RECORD_OVERHEAD_V0,
)
from kafka_ref.common.records.record import Record, SimpleRecord
from kafka_ref.common.records.record_batch import RecordBatch

_unpack_int32 = INT32.unpack_from


class UnsupportedMagicException(CorruptRecordException):
    """A well-formed batch of magic 0 or 1, which kafka_ref does not read (a produce request gets INVALID_RECORD)."""


class MemoryRecords:
    """Mirrors org.apache.kafka.common.record.MemoryRecords.

    An immutable sequence of v2 RecordBatch objects. ``len()`` is the number of batches;
    iteration yields batches; ``records()`` walks every record of every batch.
    """

    __slots__ = ("batches", "size_in_bytes")

    EMPTY: MemoryRecords

    batches: tuple[RecordBatch, ...]
    size_in_bytes: int

    def __init__(self, batches: tuple[RecordBatch, ...] = ()) -> None:
        self.batches = batches
        # (A plain loop, not sum() over a generator: a MemoryRecords is made per append and per
        #  fetched partition, mostly over one batch.)
        size = 0
        for batch in batches:
            size += batch.size_in_bytes
        self.size_in_bytes = size

    @classmethod
    def of(cls, batches: Iterable[RecordBatch]) -> MemoryRecords:
        """MemoryRecords over existing batches (kept by reference)."""
        batches = tuple(batches)
        if not batches:
            return cls.EMPTY
        for batch in batches:
            if not isinstance(batch, RecordBatch):
                raise TypeError(f"MemoryRecords holds RecordBatch objects, got {type(batch).__name__}")
        return cls(batches)

    @classmethod
    def from_bytes(
        cls,
        buf: bytes | bytearray | memoryview,
        *,
        allow_partial_trailing: bool = False,
        max_message_size: int | None = None,
    ) -> MemoryRecords:
        """Mirrors org.apache.kafka.common.record.ByteBufferLogInputStream#nextBatch (all of them).

        Splits ``buf`` into batches by their length fields. A truncated batch at the end (as a
        size-limited fetch can return) is dropped when ``allow_partial_trailing`` is true and
        raises CorruptRecordException otherwise. A batch of another magic raises too.
        """
        if type(buf) is not bytes:
            buf = bytes(buf)
        total = len(buf)
        batches: list[RecordBatch] = []
        pos = 0
        while pos < total:
            remaining = total - pos
            # 1. Not even an offset and a length left: a partial trailing batch.
            if remaining < LOG_OVERHEAD:
                if allow_partial_trailing:
                    break
                raise CorruptRecordException(
                    f"Truncated record batch at position {pos}: only {remaining} bytes remain, "
                    f"fewer than the log overhead {LOG_OVERHEAD}"
                )
            # 2. The declared length must be plausible for any magic, and not over the limit.
            record_size = _unpack_int32(buf, pos + LENGTH_OFFSET)[0]
            if record_size < RECORD_OVERHEAD_V0:
                raise CorruptRecordException(
                    f"Record size {record_size} is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                )
            if max_message_size is not None and record_size > max_message_size:
                raise CorruptRecordException(
                    f"Record size {record_size} exceeds the largest allowable message size ({max_message_size})."
                )
            # 3. The whole batch must be present, or it is a partial trailing batch.
            batch_size = record_size + LOG_OVERHEAD
            if remaining < batch_size:
                if allow_partial_trailing:
                    break
                raise CorruptRecordException(
                    f"Truncated record batch at position {pos}: declared size {batch_size} but only "
                    f"{remaining} bytes remain"
                )
            # 4. Only magic 2 is understood; anything else is reported, never guessed at.
            magic = buf[pos + MAGIC_OFFSET]
            if magic > 127:
                magic -= 256
            if magic < 0 or magic > CURRENT_MAGIC_VALUE:
                raise CorruptRecordException(f"Invalid magic found in record: {magic}")
            if magic != MAGIC_VALUE_V2:
                raise UnsupportedMagicException(
                    f"Record batch at position {pos} has unsupported magic {magic} "
                    f"(kafka_ref reads only magic {MAGIC_VALUE_V2})"
                )
            # 5. Slice the batch out (no copy when it is the whole buffer) and wrap it.
            if pos == 0 and batch_size == total:
                batches.append(RecordBatch(buf))
            else:
                batches.append(RecordBatch(buf[pos : pos + batch_size]))
            pos += batch_size
        return cls.of(batches)

    @classmethod
    def with_records(cls, records: Iterable[SimpleRecord], **build_kwargs) -> MemoryRecords:
        """Mirrors org.apache.kafka.common.record.MemoryRecords#withRecords.

        One batch holding ``records`` (see RecordBatch.build for the options); EMPTY when
        there are no records.
        """
        records = tuple(records)
        if not records:
            return cls.EMPTY
        return cls((RecordBatch.build(records, **build_kwargs),))

    def to_bytes(self) -> bytes:
        """Mirrors org.apache.kafka.common.record.MemoryRecords#buffer: the batches back to back."""
        batches = self.batches
        if len(batches) == 1:
            return batches[0].buffer
        return b"".join(batch.buffer for batch in batches)

    def records(self) -> Iterator[Record]:
        """Mirrors org.apache.kafka.common.record.AbstractRecords#records: every record, in order."""
        for batch in self.batches:
            yield from batch

    @property
    def first_batch(self) -> RecordBatch | None:
        """Mirrors org.apache.kafka.common.record.MemoryRecords#firstBatch (None when empty)."""
        return self.batches[0] if self.batches else None

    @property
    def last_batch(self) -> RecordBatch | None:
        """The last batch, or None when empty."""
        return self.batches[-1] if self.batches else None

    def __len__(self) -> int:
        return len(self.batches)

    def __iter__(self) -> Iterator[RecordBatch]:
        return iter(self.batches)

    @overload
    def __getitem__(self, index: int) -> RecordBatch: ...

    @overload
    def __getitem__(self, index: slice) -> MemoryRecords: ...

    def __getitem__(self, index: int | slice) -> RecordBatch | MemoryRecords:
        if isinstance(index, slice):
            return MemoryRecords.of(self.batches[index])
        return self.batches[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryRecords):
            return NotImplemented
        return self.batches == other.batches

    def __hash__(self) -> int:
        return hash(self.batches)

    def __repr__(self) -> str:
        if not self.batches:
            return "MemoryRecords(EMPTY)"
        first, last = self.batches[0], self.batches[-1]
        return (
            f"MemoryRecords(batches={len(self.batches)}, offsets=[{first.base_offset}, "
            f"{last.last_offset}], size={self.size_in_bytes})"
        )

    def __reduce__(self):
        return (MemoryRecords.of, (self.batches,))


MemoryRecords.EMPTY = MemoryRecords(())


class UnparsableRecords(MemoryRecords):
    """A produce request's record set whose batches do not parse, kept as its raw bytes.

    Kafka wraps a request's records without parsing them (MemoryRecords#readableRecords) and
    meets a bad batch only when it iterates them, in ProduceRequest#validateRecords or
    LogValidator, which answers that partition alone with the error. The wire codec builds one of
    these instead of failing the whole request: iterating it raises ``error`` (an ApiException),
    so KafkaApis answers CORRUPT_MESSAGE or INVALID_RECORD for the partition and the connection
    stays open.
    """

    __slots__ = ("raw", "error")

    def __init__(self, raw: bytes, error: Exception) -> None:
        super().__init__(())
        self.raw = raw
        self.error = error
        self.size_in_bytes = len(raw)

    def to_bytes(self) -> bytes:
        return self.raw

    def __iter__(self) -> Iterator[RecordBatch]:
        raise self.error

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnparsableRecords) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"UnparsableRecords({len(self.raw)} bytes: {self.error})"

    def __reduce__(self):
        return (UnparsableRecords, (self.raw, self.error))
