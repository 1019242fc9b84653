"""The bytes inside JoinGroup / SyncGroup for the "consumer" protocol type: subscriptions and assignments.

Mirrors org.apache.kafka.clients.consumer.internals.ConsumerProtocol with the Subscription and
Assignment value classes of ConsumerPartitionAssignor.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_ref.common.topic_partition import TopicPartition

NO_GENERATION_ID = -1  # AbstractCoordinator.Generation.NO_GENERATION's id


@dataclass(frozen=True, slots=True)
class Subscription:
    """Mirrors org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = NO_GENERATION_ID


@dataclass(frozen=True, slots=True)
class Assignment:
    """Mirrors org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None


def _put_string(out: bytearray, s: str) -> None:
    data = s.encode("utf-8")
    out += struct.pack(">h", len(data)) + data


def _put_nullable_bytes(out: bytearray, b: bytes | None) -> None:
    out += struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b


def _put_topic_partitions(out: bytearray, partitions: Iterable[TopicPartition]) -> None:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    out += struct.pack(">i", len(by_topic))
    for topic, parts in by_topic.items():
        _put_string(out, topic)
        out += struct.pack(f">i{len(parts)}i", len(parts), *parts)


class _Cursor:
    """Reads Kafka's primitive types from a buffer."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    def unpack(self, fmt: str) -> int:
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def _take(self, n: int) -> bytes | None:
        if n < 0:
            return None
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def string(self) -> str:
        return (self._take(self.unpack(">h")) or b"").decode("utf-8")

    def nullable_bytes(self) -> bytes | None:
        return self._take(self.unpack(">i"))

    def topic_partitions(self) -> tuple[TopicPartition, ...]:
        out = []
        for _ in range(self.unpack(">i")):
            topic = self.string()
            out.extend(TopicPartition(topic, self.unpack(">i")) for _ in range(self.unpack(">i")))
        return tuple(out)

    def remaining(self) -> int:
        return len(self.data) - self.pos


class ConsumerProtocol:
    """Mirrors org.apache.kafka.clients.consumer.internals.ConsumerProtocol (messages ConsumerProtocolSubscription/Assignment).

    Subscription v0: int16 version, topics (int32 count, strings), user data (nullable
    bytes); v1 adds owned partitions, v2 the generation, v3 a rack id. Assignment: int16
    version, (topic, partitions) pairs, user data. This client writes version 0 (EAGER needs
    nothing more) and reads any version's v0 prefix plus the fields it knows.
    """

    SUBSCRIPTION_VERSION = 0
    ASSIGNMENT_VERSION = 0

    @staticmethod
    def serialize_subscription(subscription: Subscription) -> bytes:
        """Mirrors ConsumerProtocol#serializeSubscription (version 0)."""
        out = bytearray(struct.pack(">h", ConsumerProtocol.SUBSCRIPTION_VERSION))
        out += struct.pack(">i", len(subscription.topics))
        for topic in subscription.topics:
            _put_string(out, topic)
        _put_nullable_bytes(out, subscription.user_data)
        return bytes(out)

    @staticmethod
    def deserialize_subscription(data: bytes) -> Subscription:
        """Mirrors ConsumerProtocol#deserializeSubscription."""
        c = _Cursor(data)
        version = c.unpack(">h")
        topics = tuple(c.string() for _ in range(c.unpack(">i")))
        user_data = c.nullable_bytes()
        owned: tuple[TopicPartition, ...] = ()
        generation = NO_GENERATION_ID
        if version >= 1 and c.remaining():
            owned = c.topic_partitions()
        if version >= 2 and c.remaining():
            generation = c.unpack(">i")
        return Subscription(topics, user_data, owned, generation)

    @staticmethod
    def serialize_assignment(assignment: Assignment) -> bytes:
        """Mirrors ConsumerProtocol#serializeAssignment (version 0)."""
        out = bytearray(struct.pack(">h", ConsumerProtocol.ASSIGNMENT_VERSION))
        _put_topic_partitions(out, assignment.partitions)
        _put_nullable_bytes(out, assignment.user_data)
        return bytes(out)

    @staticmethod
    def deserialize_assignment(data: bytes) -> Assignment:
        """Mirrors ConsumerProtocol#deserializeAssignment; an empty buffer is an empty assignment."""
        if not data:
            return Assignment(())
        c = _Cursor(data)
        c.unpack(">h")
        partitions = c.topic_partitions()
        user_data = c.nullable_bytes() if c.remaining() else None
        return Assignment(partitions, user_data)
