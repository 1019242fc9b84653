"""Mirrors org.apache.kafka.common.Uuid: a 128-bit id printed in URL-safe base64."""

from __future__ import annotations

import base64
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Uuid:
    """Mirrors org.apache.kafka.common.Uuid.

    Two signed 64-bit halves like Kafka's. ``ZERO_UUID`` means "no topic id" and
    ``METADATA_TOPIC_ID`` is reserved for ``__cluster_metadata``. Random ids come from a
    ``random.Random`` the caller passes, so a seeded cluster gets the same ids every run.
    """

    most_significant_bits: int
    least_significant_bits: int

    @classmethod
    def random_uuid(cls, rng: random.Random) -> "Uuid":
        """Mirrors org.apache.kafka.common.Uuid#randomUuid (seedable here)."""
        while True:
            value = rng.getrandbits(128)
            # Kafka sets the version (4) and variant bits like java.util.UUID.randomUUID.
            value &= ~(0xF << 76)
            value |= 0x4 << 76
            value &= ~(0x3 << 62)
            value |= 0x2 << 62
            uuid = cls._from_int(value)
            # Kafka re-draws ids that collide with a reserved id or start with '-'.
            if uuid not in (ZERO_UUID, METADATA_TOPIC_ID) and not str(uuid).startswith("-"):
                return uuid

    @classmethod
    def _from_int(cls, value: int) -> "Uuid":
        hi, lo = value >> 64, value & ((1 << 64) - 1)
        return cls(_signed64(hi), _signed64(lo))

    @classmethod
    def from_string(cls, text: str) -> "Uuid":
        """Mirrors org.apache.kafka.common.Uuid#fromString."""
        raw = base64.urlsafe_b64decode(text + "==")
        if len(raw) != 16:
            raise ValueError(f"Input string with prefix `{text[:6]}` is too long to be decoded as a base64 UUID")
        return cls._from_int(int.from_bytes(raw, "big"))

    def to_bytes(self) -> bytes:
        return (
            (self.most_significant_bits & (2**64 - 1)).to_bytes(8, "big")
            + (self.least_significant_bits & (2**64 - 1)).to_bytes(8, "big")
        )

    def __str__(self) -> str:
        return base64.urlsafe_b64encode(self.to_bytes()).decode().rstrip("=")

    def __repr__(self) -> str:
        return f"Uuid({self})"


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


ZERO_UUID = Uuid(0, 0)
METADATA_TOPIC_ID = Uuid(0, 1)
