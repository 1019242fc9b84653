"""Partition identities.

Mirrors org.apache.kafka.common.TopicPartition and TopicIdPartition.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.uuid import Uuid


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """Mirrors org.apache.kafka.common.TopicPartition.

    Printed as ``topic-partition`` like Kafka's ``toString``.
    """

    topic: str
    partition: int

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
