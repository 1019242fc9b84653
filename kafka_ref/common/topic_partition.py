"""Partition identities.

Mirrors org.apache.kafka.common.TopicPartition and TopicIdPartition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_ref.common.utils import java_int, java_string_hash
from kafka_ref.common.uuid import Uuid


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """Mirrors org.apache.kafka.common.TopicPartition.

    Printed as ``topic-partition`` like Kafka's ``toString``. Its hash is Kafka's ``hashCode``
    (31 * (31 + partition) + the topic's Java string hash), computed once: unlike Python's
    string hash it does not change with PYTHONHASHSEED, so sets and dicts of partitions iterate
    in the same order in every process and a simulated run replays byte for byte.
    """

    topic: str
    partition: int
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", java_int(31 * (31 + self.partition) + java_string_hash(self.topic)))

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> "TopicPartition":
        """Parse ``topic-N`` (the topic may itself contain dashes)."""
        topic, _, part = text.rpartition("-")
        if not topic or not part.lstrip("-").isdigit():
            raise ValueError(f"not a topic-partition: {text!r}")
        return cls(topic, int(part))


@dataclass(frozen=True, slots=True)
class TopicIdPartition:
    """Mirrors org.apache.kafka.common.TopicIdPartition."""

    topic_id: Uuid
    topic_partition: TopicPartition

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition

    def __str__(self) -> str:
        return f"{self.topic_id}:{self.topic_partition}"
