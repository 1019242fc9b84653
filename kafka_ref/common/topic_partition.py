"""Partition identities.

Mirrors org.apache.kafka.common.TopicPartition and TopicIdPartition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_ref.common.utils import java_int, java_string_hash
from kafka_ref.common.uuid import Uuid


# Interned partitions: (topic, partition) -> its one TopicPartition object. Why it exists: the
# request path turns a request's (topic name, partition index) pairs into TopicPartitions and
# looks them up in several dicts per request; with one object per partition, a lookup hits on
# identity (no field-by-field equality) and the Java-style hash is computed once per partition
# for the life of the process, not once per request.
_INTERNED: dict[tuple[str, int], "TopicPartition"] = {}
# Java String#hashCode per topic name (the same names recur in every request).
_TOPIC_HASH: dict[str, int] = {}


class TopicPartition(int):
    """Mirrors org.apache.kafka.common.TopicPartition.

    Immutable, compared and ordered by (topic, partition), printed as ``topic-partition`` like
    Kafka's ``toString``. Its hash is Kafka's ``hashCode`` (31 * (31 + partition) + the topic's
    Java string hash): unlike Python's string hash it does not change with PYTHONHASHSEED, so
    sets and dicts of partitions iterate in the same order in every process and a simulated run
    replays byte for byte. ``TopicPartition(topic, partition)`` returns the one interned object
    for that pair (Kafka allocates a new one per request; equality and hashing are the same).

    Why an ``int`` subclass whose value is that hash: every dict and set operation on a
    partition hashes it, dozens of times per replicated batch and once per partition per fetch
    on an idle cluster; an int's hash is computed in C, a ``__hash__`` method is a Python call
    each time. Nothing else of ``int`` is part of the type: equality is (topic, partition) and
    never equal to a number, order is (topic, partition), and it is always true.
    """

    __match_args__ = ("topic", "partition")

    topic: str
    partition: int

    def __new__(cls, topic: str, partition: int) -> "TopicPartition":
        tp = _INTERNED.get((topic, partition))
        if tp is not None:
            return tp
        topic_hash = _TOPIC_HASH.get(topic)
        if topic_hash is None:
            topic_hash = _TOPIC_HASH[topic] = java_string_hash(topic)
        tp = int.__new__(cls, java_int(31 * (31 + partition) + topic_hash))
        object.__setattr__(tp, "topic", topic)
        object.__setattr__(tp, "partition", partition)
        _INTERNED[(topic, partition)] = tp
        return tp

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"TopicPartition is immutable: cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"TopicPartition is immutable: cannot delete field {name!r}")

    def __reduce__(self) -> tuple:
        return (TopicPartition, (self.topic, self.partition))

    def __copy__(self) -> "TopicPartition":
        return self

    def __deepcopy__(self, memo: dict) -> "TopicPartition":
        return self

    # int's hash (the Java hashCode held as the value) is inherited: computed in C.
    __hash__ = int.__hash__

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not TopicPartition:
            return False
        return self.topic == other.topic and self.partition == other.partition  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __bool__(self) -> bool:
        return True

    def _key(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    def __lt__(self, other: "TopicPartition") -> bool:
        if other.__class__ is not TopicPartition:
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: "TopicPartition") -> bool:
        if other.__class__ is not TopicPartition:
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: "TopicPartition") -> bool:
        if other.__class__ is not TopicPartition:
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: "TopicPartition") -> bool:
        if other.__class__ is not TopicPartition:
            return NotImplemented
        return self._key() >= other._key()

    def __repr__(self) -> str:
        return f"TopicPartition(topic={self.topic!r}, partition={self.partition!r})"

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> "TopicPartition":
        """Parse ``topic-N`` (the topic may itself contain dashes)."""
        topic, _, part = text.rpartition("-")
        if not topic or not part.lstrip("-").isdigit():
            raise ValueError(f"not a topic-partition: {text!r}")
        return cls(topic, int(part))


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class TopicIdPartition:
    """Mirrors org.apache.kafka.common.TopicIdPartition (``topic`` and ``partition`` copied from the
    TopicPartition once: fetch sessions read them for every partition of every fetch)."""

    topic_id: Uuid
    topic_partition: TopicPartition
    topic: str = field(init=False, repr=False, compare=False)
    partition: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.topic = self.topic_partition.topic
        self.partition = self.topic_partition.partition

    def __str__(self) -> str:
        return f"{self.topic_id}:{self.topic_partition}"
