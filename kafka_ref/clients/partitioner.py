"""How a producer picks the partition of a record.

Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner (Kafka 3.3+, KIP-794)
and org.apache.kafka.clients.producer.internals.DefaultPartitioner as it was up to Kafka 2.3.

Both hash a keyed record the same way: ``to_positive(murmur2(key)) % num_partitions`` over
*all* partitions of the topic (available or not), so a key always lands on the same partition
while the partition count stays the same. They differ for records without a key:

- ``DefaultPartitioner`` (Kafka ≤ 2.3, the producer's default here): round robin over the
  partitions that currently have a leader, one counter per topic; if none has a leader, round
  robin over all partitions. Deterministic, so simulations and tests can predict placement.
- ``BuiltInPartitioner`` (Kafka ≥ 3.3, ``partitioner="sticky"``): stick to one partition until
  ``batch_size`` bytes went to it, then switch to another partition with a leader, chosen at
  random (a seeded ``random.Random``, so runs repeat). Kafka 2.4–3.2 stuck to a partition until
  a new batch was created (KIP-480); KIP-794 made the switch depend on bytes produced. The
  adaptive part of KIP-794 (weighting partitions by queue sizes,
  ``partitioner.adaptive.partitioning.enable``) is not modelled: the next partition is uniform.

An explicit partition on the record bypasses both (see KafkaProducer#partition).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from kafka_ref.common.errors import KafkaException
from kafka_ref.common.utils import murmur2, to_positive


class PartitionView(Protocol):
    """What a partitioner needs to know about a topic (the client's Cluster view)."""

    def partition_count(self, topic: str) -> int: ...

    def available_partitions(self, topic: str) -> list[int]: ...


def partition_for_key(serialized_key: bytes, num_partitions: int) -> int:
    """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner#partitionForKey.

    Java's murmur2 of the key bytes with the sign bit cleared, modulo the partition count.
    """
    # 1. A topic always has at least one partition; anything else is a caller bug.
    if num_partitions < 1:
        raise KafkaException(f"cannot pick a partition among {num_partitions} partitions")
    # 2. Clear the sign bit (not Math.abs: abs(Integer.MIN_VALUE) stays negative in Java).
    return to_positive(murmur2(serialized_key)) % num_partitions


class DefaultPartitioner:
    """Mirrors org.apache.kafka.clients.producer.internals.DefaultPartitioner (Kafka 0.9 – 2.3).

    Keyed records hash to a partition; records without a key go round robin over the
    partitions that have a leader. Kafka seeded each topic's counter with a random int; here
    it starts at ``initial_counter`` (0) so placement is reproducible.
    """

    def __init__(self, initial_counter: int = 0) -> None:
        self.initial_counter = initial_counter
        self.topic_counters: dict[str, int] = {}

    def partition(self, topic: str, key: bytes | None, cluster: PartitionView) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.DefaultPartitioner#partition (2.3)."""
        num_partitions = cluster.partition_count(topic)
        # 1. A key decides the partition among all partitions.
        if key is not None:
            return partition_for_key(key, num_partitions)
        # 2. No key: the next value of this topic's counter...
        next_value = self.next_value(topic)
        available = cluster.available_partitions(topic)
        # 3. ...picks among partitions with a leader, or among all when none has one.
        if available:
            return available[to_positive(next_value) % len(available)]
        return to_positive(next_value) % num_partitions

    def next_value(self, topic: str) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.DefaultPartitioner#nextValue.

        Get-and-increment of the topic's counter, wrapping like a Java int.
        """
        value = self.topic_counters.get(topic, self.initial_counter)
        incremented = (value + 1) & 0xFFFF_FFFF
        self.topic_counters[topic] = incremented - 0x1_0000_0000 if incremented & 0x8000_0000 else incremented
        return value

    def on_append(self, topic: str, partition: int, appended_bytes: int, cluster: PartitionView) -> None:
        """The round-robin partitioner keeps no per-partition byte count."""


@dataclass(slots=True)
class StickyPartitionInfo:
    """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner.StickyPartitionInfo."""

    index: int
    produced_bytes: int = 0


class BuiltInPartitioner:
    """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner (uniform sticky).

    One sticky partition per topic for records without a key; ``on_append`` counts the bytes
    appended to it and switches once ``sticky_batch_size`` bytes went there (Kafka's
    ``batch.size``). The producer calls ``partition`` and ``on_append`` back to back with no
    await in between, which is the atomicity Kafka gets from the partition's deque lock.
    """

    def __init__(self, sticky_batch_size: int, rng: random.Random | None = None) -> None:
        if sticky_batch_size < 1:
            raise KafkaException(f"sticky_batch_size must be >= 1 but got {sticky_batch_size}")
        self.sticky_batch_size = sticky_batch_size
        self.rng = rng or random.Random(0)
        self.sticky: dict[str, StickyPartitionInfo] = {}

    def partition(self, topic: str, key: bytes | None, cluster: PartitionView) -> int:
        """Mirrors KafkaProducer#partition with the built-in partitioner (keyed hash or sticky)."""
        # 1. Keyed records hash, exactly as before KIP-794.
        if key is not None:
            return partition_for_key(key, cluster.partition_count(topic))
        # 2. Unkeyed: the topic's sticky partition, picked now if there is none yet.
        return self.peek_current_partition_info(topic, cluster).index

    def peek_current_partition_info(self, topic: str, cluster: PartitionView) -> StickyPartitionInfo:
        """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner#peekCurrentPartitionInfo."""
        info = self.sticky.get(topic)
        if info is None:
            info = StickyPartitionInfo(self.next_partition(topic, cluster))
            self.sticky[topic] = info
        return info

    def next_partition(self, topic: str, cluster: PartitionView) -> int:
        """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner#nextPartition.

        A uniformly random partition with a leader (all partitions when none has one). The
        load-statistics branch of KIP-794 is not modelled.
        """
        # 1. A random non-negative int, as Utils.toPositive(ThreadLocalRandom.nextInt()).
        value = self.rng.getrandbits(31)
        # 2. Pick among available partitions, else among all.
        available = cluster.available_partitions(topic)
        if available:
            return available[value % len(available)]
        return value % cluster.partition_count(topic)

    def on_append(self, topic: str, partition: int, appended_bytes: int, cluster: PartitionView) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.BuiltInPartitioner#updatePartitionInfo.

        Adds the bytes appended to the sticky partition and switches to a new one once
        ``sticky_batch_size`` bytes were produced to it. Appends to other partitions (keyed
        records, explicit partitions) do not count.
        """
        info = self.sticky.get(topic)
        # 1. Only appends to the current sticky partition count.
        if info is None or info.index != partition:
            return
        info.produced_bytes += appended_bytes
        # 2. Enough bytes: pick the next sticky partition.
        if info.produced_bytes >= self.sticky_batch_size:
            self.sticky[topic] = StickyPartitionInfo(self.next_partition(topic, cluster))
