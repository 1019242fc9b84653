"""Compressing and decompressing the records section of a batch.

Mirrors org.apache.kafka.common.record.CompressionType#wrapForOutput / #wrapForInput, for the
codecs this project carries: ``none`` and ``gzip`` (from the standard library). A batch that
names snappy, lz4 or zstd still parses (its header is plain), but its records cannot be read
here and asking for them raises UnsupportedCompressionTypeException.

With gzip the whole records section (everything after the 61-byte header) is one gzip stream;
the header, including ``record_count``, stays uncompressed so brokers can route and validate
batches without inflating them. Output is deterministic (mtime 0) so equal inputs give equal
batches and equal CRCs.
"""

from __future__ import annotations

import gzip
import zlib

from kafka_ref.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_ref.common.records.constants import CompressionType

# java.util.zip.Deflater.DEFAULT_COMPRESSION maps to zlib level 6, which Kafka's gzip uses.
GZIP_LEVEL = 6


def compress(compression: CompressionType, data: bytes) -> bytes:
    """Mirrors org.apache.kafka.common.record.CompressionType#wrapForOutput.

    Returns the records section encoded with ``compression``.
    """
    # 1. No codec: the section is written as is.
    if compression is CompressionType.NONE:
        return data
    # 2. gzip: one deterministic member over the whole section.
    if compression is CompressionType.GZIP:
        return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)
    # 3. Codecs whose libraries this project does not carry.
    raise UnsupportedCompressionTypeException(
        f"Compression type {compression.value} is not supported by kafka_ref (only none and gzip)"
    )


def decompress(compression: CompressionType, data: bytes | memoryview) -> bytes | memoryview:
    """Mirrors org.apache.kafka.common.record.CompressionType#wrapForInput.

    Returns the plain records section; raises CorruptRecordException if the stream is damaged.
    """
    # 1. No codec: hand the section back untouched (no copy).
    if compression is CompressionType.NONE:
        return data
    # 2. gzip: inflate every member; a damaged stream means a corrupt batch.
    if compression is CompressionType.GZIP:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise CorruptRecordException(f"Failed to decompress record stream (gzip): {exc}") from exc
    # 3. Codecs whose libraries this project does not carry.
    raise UnsupportedCompressionTypeException(
        f"Cannot read records compressed with {compression.value}: kafka_ref supports none and gzip"
    )
