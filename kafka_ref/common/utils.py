"""Java-compatible hashing, so placement decisions match what Kafka would choose.

Mirrors org.apache.kafka.common.utils.Utils (abs, murmur2, toPositive) and
java.lang.String#hashCode.
"""

from __future__ import annotations

_MASK32 = 0xFFFFFFFF


def _to_int32(value: int) -> int:
    value &= _MASK32
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def java_string_hash(text: str) -> int:
    """java.lang.String#hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, as a signed int32."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _MASK32
    return _to_int32(h)


def java_int(value: int) -> int:
    """Wrap an arbitrary Python int to Java's signed 32-bit int."""
    return _to_int32(value)


def utils_abs(n: int) -> int:
    """Mirrors org.apache.kafka.common.utils.Utils#abs: Integer.MIN_VALUE maps to 0, not itself."""
    return 0 if n == -0x8000_0000 else abs(n)


def to_positive(n: int) -> int:
    """Mirrors org.apache.kafka.common.utils.Utils#toPositive (clear the sign bit)."""
    return n & 0x7FFF_FFFF


def murmur2(data: bytes) -> int:
    """Mirrors org.apache.kafka.common.utils.Utils#murmur2 (seed 0x9747b28c), as a signed int32."""
    length = len(data)
    seed = 0x9747B28C
    m = 0x5BD1E995
    r = 24
    h = (seed ^ length) & _MASK32
    length4 = length // 4
    for i in range(length4):
        i4 = i * 4
        k = (data[i4] & 0xFF) | ((data[i4 + 1] & 0xFF) << 8) | ((data[i4 + 2] & 0xFF) << 16) | ((data[i4 + 3] & 0xFF) << 24)
        k = (k * m) & _MASK32
        k ^= k >> r
        k = (k * m) & _MASK32
        h = (h * m) & _MASK32
        h ^= k
    rest = length % 4
    tail = length & ~3
    if rest == 3:
        h ^= (data[tail + 2] & 0xFF) << 16
    if rest >= 2:
        h ^= (data[tail + 1] & 0xFF) << 8
    if rest >= 1:
        h ^= data[tail] & 0xFF
        h = (h * m) & _MASK32
    h ^= h >> 13
    h = (h * m) & _MASK32
    h ^= h >> 15
    return _to_int32(h)
