"""Compressing and decompressing the records section of a batch.

Mirrors org.apache.kafka.common.record.CompressionType#wrapForOutput / #wrapForInput for Kafka's
four codecs, in the stream formats Kafka's clients and brokers use:

- ``gzip``: one gzip member over the whole records section (the standard library; output is
  deterministic, mtime 0, so equal inputs give equal batches and CRCs).
- ``snappy``: the xerial "snappy-java" framing (SnappyOutputStream): an 8-byte magic, two version
  words, then blocks of a 4-byte length and a raw snappy block. Reading also accepts a bare
  snappy block, as librdkafka and kafka-python do.
- ``lz4``: the LZ4 frame format (KafkaLZ4BlockOutputStream: independent 64 KiB blocks, no
  checksums beyond the header's).
- ``zstd``: one zstd frame (ZstdOutputStream); read as a stream, so frames without a content size
  work.

The header, including ``record_count``, stays uncompressed so brokers can route and validate
batches without inflating them. snappy, lz4 and zstd come from the ``python-snappy``, ``lz4`` and
``zstandard`` packages (project dependencies).
"""

from __future__ import annotations

import gzip
import struct
import zlib

from kafka_ref.common.errors import CorruptRecordException, UnsupportedCompressionTypeException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.records.constants import CompressionType

# java.util.zip.Deflater.DEFAULT_COMPRESSION maps to zlib level 6, which Kafka's gzip uses.
GZIP_LEVEL = 6


# The xerial snappy-java stream header: magic, then the format version and the minimum compatible one.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024   # snappy-java's default block size


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
    # 3. snappy: xerial framing, one length-prefixed raw block per 32 KiB of input.
    if compression is CompressionType.SNAPPY:
        import snappy

        out = [XERIAL_HEADER]
        for i in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = snappy.compress(bytes(data[i:i + XERIAL_BLOCK_SIZE]))
            out.append(struct.pack(">i", len(block)))
            out.append(block)
        return b"".join(out)
    # 4. lz4: one frame of independent 64 KiB blocks (Kafka's writer).
    if compression is CompressionType.LZ4:
        import lz4.frame

        return lz4.frame.compress(bytes(data), block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                  content_checksum=False, store_size=False)
    # 5. zstd: one frame (level 3, zstd's and Kafka's default).
    if compression is CompressionType.ZSTD:
        import zstandard

        return zstandard.ZstdCompressor(level=3).compress(bytes(data))
    raise UnsupportedCompressionTypeException(f"Unknown compression type {compression!r}")


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
    raw = bytes(data)
    try:
        # 3. snappy: xerial blocks, or one bare block.
        if compression is CompressionType.SNAPPY:
            import snappy

            if not raw.startswith(XERIAL_MAGIC):
                return snappy.decompress(raw)
            out, pos = [], len(XERIAL_HEADER)
            while pos < len(raw):
                (length,) = struct.unpack_from(">i", raw, pos)
                pos += 4
                if length < 0 or pos + length > len(raw):
                    raise ValueError(f"snappy block of {length} bytes overruns the stream")
                out.append(snappy.decompress(raw[pos:pos + length]))
                pos += length
            return b"".join(out)
        # 4. lz4: the frame format.
        if compression is CompressionType.LZ4:
            import lz4.frame

            return lz4.frame.decompress(raw)
        # 5. zstd: read as a stream (the frame may not record its content size).
        if compression is CompressionType.ZSTD:
            import zstandard

            return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    except RUN_ENDING:
        raise
    except UnsupportedCompressionTypeException:
        raise
    except Exception as exc:   # each library raises its own error type for a damaged stream
        raise CorruptRecordException(f"Failed to decompress record stream ({compression.value}): {exc}") from exc
    raise UnsupportedCompressionTypeException(f"Unknown compression type {compression!r}")
