"""Variable-length zig-zag integers, the encoding used inside v2 records.

Mirrors org.apache.kafka.common.utils.ByteUtils (readVarint, readVarlong, writeVarint,
writeVarlong, sizeOfVarint, sizeOfVarlong).

Each value is first zig-zag mapped (so small negative numbers stay small: 0→0, -1→1, 1→2,
-2→3, ...) and then written seven bits at a time, least significant group first, with the high
bit of every byte except the last set. A "varint" carries a Java ``int`` (at most 5 bytes) and
a "varlong" a Java ``long`` (at most 10 bytes). Readers return ``(value, next_position)`` so a
decoder can walk a buffer without creating views; writers append to a ``bytearray``.

Decoding errors raise ``ValueError`` (Kafka's IllegalArgumentException); the record decoder
turns that into the Kafka exception for a malformed record.
"""

from __future__ import annotations

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_MASK32 = 0xFFFF_FFFF
_MASK64 = 0xFFFF_FFFF_FFFF_FFFF


def zigzag_encode32(value: int) -> int:
    """Map a signed 32-bit int to an unsigned one so small magnitudes give small numbers."""
    return ((value << 1) ^ (value >> 31)) & _MASK32


def zigzag_encode64(value: int) -> int:
    """Map a signed 64-bit long to an unsigned one so small magnitudes give small numbers."""
    return ((value << 1) ^ (value >> 63)) & _MASK64


def zigzag_decode(raw: int) -> int:
    """Inverse of the zig-zag mapping (works for both widths once ``raw`` is masked)."""
    return (raw >> 1) ^ -(raw & 1)


def write_varint(value: int, out: bytearray) -> None:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#writeVarint.

    Appends the zig-zag varint form of a 32-bit ``value`` to ``out``.
    """
    # 1. Refuse what a Java int cannot hold (Kafka's type system makes this impossible there).
    if value < INT32_MIN or value > INT32_MAX:
        raise ValueError(f"Value {value} does not fit in a 32-bit varint")
    # 2. Zig-zag map, then emit 7-bit groups with a continuation bit on all but the last.
    raw = ((value << 1) ^ (value >> 31)) & _MASK32
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def write_varlong(value: int, out: bytearray) -> None:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#writeVarlong.

    Appends the zig-zag varlong form of a 64-bit ``value`` to ``out``.
    """
    # 1. Refuse what a Java long cannot hold.
    if value < INT64_MIN or value > INT64_MAX:
        raise ValueError(f"Value {value} does not fit in a 64-bit varlong")
    # 2. Zig-zag map, then emit 7-bit groups with a continuation bit on all but the last.
    raw = ((value << 1) ^ (value >> 63)) & _MASK64
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)


def encode_varint(value: int) -> bytes:
    """The varint bytes of ``value`` as a new ``bytes`` (convenience for tests and callers)."""
    out = bytearray()
    write_varint(value, out)
    return bytes(out)


def encode_varlong(value: int) -> bytes:
    """The varlong bytes of ``value`` as a new ``bytes``."""
    out = bytearray()
    write_varlong(value, out)
    return bytes(out)


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#readVarint.

    Reads a zig-zag varint starting at ``pos``; returns ``(value, position after it)``.
    Raises ``IndexError`` if the buffer ends first and ``ValueError`` if more than five bytes
    carry a continuation bit.
    """
    # 1. Fast path: one byte without the continuation bit.
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    # 2. Accumulate 7-bit groups, at most five bytes for a 32-bit value.
    raw = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            raise ValueError("Varint is too long, the most significant bit in the 5th byte is set")
    # 3. Keep the low 32 bits, as Java's int arithmetic would, and undo the zig-zag mapping.
    raw &= _MASK32
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#readVarlong.

    Reads a zig-zag varlong starting at ``pos``; returns ``(value, position after it)``.
    Raises ``IndexError`` if the buffer ends first and ``ValueError`` past ten bytes.
    """
    # 1. Fast path: one byte without the continuation bit.
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    # 2. Accumulate 7-bit groups, at most ten bytes for a 64-bit value.
    raw = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("Varlong is too long, most significant bit in the 10th byte is set")
    # 3. Keep the low 64 bits and undo the zig-zag mapping.
    raw &= _MASK64
    return (raw >> 1) ^ -(raw & 1), pos


def size_of_varint(value: int) -> int:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#sizeOfVarint: bytes needed for ``value``."""
    raw = ((value << 1) ^ (value >> 31)) & _MASK32
    size = 1
    while raw > 0x7F:
        raw >>= 7
        size += 1
    return size


def size_of_varlong(value: int) -> int:
    """Mirrors org.apache.kafka.common.utils.ByteUtils#sizeOfVarlong: bytes needed for ``value``."""
    raw = ((value << 1) ^ (value >> 63)) & _MASK64
    size = 1
    while raw > 0x7F:
        raw >>= 7
        size += 1
    return size
