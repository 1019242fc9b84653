"""Tests for kafka_ref.clients.partitioner.

Mirrors clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java#testMurmur2,
clients/src/test/java/org/apache/kafka/clients/producer/internals/DefaultPartitionerTest.java
(Kafka 2.3: round robin over available partitions) and BuiltInPartitionerTest.java
(testStickyPartitioning, unavailablePartitionsTest, testStickyBatchSizeMoreThatZero). Keyed placement is cross-checked against kafka-python's DefaultPartitioner, an
independent port of the Java client's murmur2 placement.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass

import pytest

with warnings.catch_warnings():
    # kafka-python loads its protocol schemas with a deprecated importlib.resources call.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.partitioner.default import DefaultPartitioner as KafkaPythonDefaultPartitioner

from kafka_ref.clients.partitioner import BuiltInPartitioner, DefaultPartitioner, partition_for_key
from kafka_ref.common.errors import KafkaException
from kafka_ref.common.utils import murmur2


@dataclass
class View:
    """A topic with ``count`` partitions of which ``available`` have a leader."""

    count: int
    available: list[int]

    def partition_count(self, topic: str) -> int:
        return self.count

    def available_partitions(self, topic: str) -> list[int]:
        return list(self.available)


class KafkaPythonCluster:
    """The slice of kafka-python's ClusterMetadata its DefaultPartitioner reads."""

    def __init__(self, topic: str, count: int) -> None:
        self.topic, self.count = topic, count

    def topics(self) -> set[str]:
        return {self.topic}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.count))

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.count))


def test_murmur2_java_values() -> None:
    """Mirrors UtilsTest#testMurmur2: the hashes Java computes for these byte strings."""
    cases = {
        b"21": -973932308,
        b"foobar": -790332482,
        b"a-little-bit-long-string": -985981536,
        b"a-little-bit-longer-string": -1486304829,
        b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
        b"abc": 479470107,
    }
    assert {k: murmur2(k) for k in cases} == cases


def test_partition_for_key_literal_table() -> None:
    """to_positive(murmur2(key)) % n for fixed keys (values computed with Java semantics)."""
    assert [partition_for_key(b"key-%d" % i, 3) for i in range(10)] == [1, 0, 2, 2, 0, 2, 2, 1, 1, 0]
    assert [partition_for_key(b"key-%d" % i, 7) for i in range(10)] == [0, 5, 4, 4, 5, 4, 5, 3, 4, 2]
    assert [partition_for_key(k, 12) for k in (b"", b"a", b"ab", b"abc", b"abcd", b"abcde")] == [9, 4, 2, 3, 8, 1]
    # The sign bit is cleared, not negated: murmur2(b"21") is negative.
    assert partition_for_key(b"21", 1000) == (-973932308 & 0x7FFFFFFF) % 1000 == 340


@pytest.mark.parametrize("num_partitions", [1, 2, 3, 7, 12, 50, 1000])
def test_keyed_partition_matches_kafka_python(num_partitions: int) -> None:
    """The keyed placement agrees with kafka-python's murmur2 DefaultPartitioner for 500 keys."""
    theirs = KafkaPythonDefaultPartitioner()
    cluster = KafkaPythonCluster("t", num_partitions)
    rng = random.Random(num_partitions)
    keys = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40))) for _ in range(500)]
    ours = DefaultPartitioner()
    view = View(num_partitions, list(range(num_partitions)))
    for key in keys:
        expected = theirs.partition("t", key, key, None, None, cluster)
        assert ours.partition("t", key, view) == expected
        assert partition_for_key(key, num_partitions) == expected


def test_keyed_partition_ignores_availability() -> None:
    """Mirrors DefaultPartitionerTest#testKeyPartitionIsStable: a key maps over all partitions, led or not."""
    partitioner = DefaultPartitioner()
    assert partitioner.partition("t", b"key-0", View(3, [])) == 1
    assert partitioner.partition("t", b"key-0", View(3, [0, 2])) == 1
    assert BuiltInPartitioner(16384).partition("t", b"key-0", View(3, [0])) == 1


def test_round_robin_over_available_partitions() -> None:
    """Mirrors DefaultPartitionerTest#testRoundRobinWithUnavailablePartitions (Kafka 2.3)."""
    partitioner = DefaultPartitioner()
    view = View(3, [0, 2])
    assert [partitioner.partition("t", None, view) for _ in range(6)] == [0, 2, 0, 2, 0, 2]
    # One counter per topic.
    assert [partitioner.partition("u", None, View(3, [0, 1, 2])) for _ in range(4)] == [0, 1, 2, 0]
    # No partition has a leader: round robin over all of them, same counter.
    assert [partitioner.partition("t", None, View(3, [])) for _ in range(3)] == [0, 1, 2]


def test_round_robin_counter_wraps_like_java_int() -> None:
    """The counter is a Java int: after Integer.MAX_VALUE comes MIN_VALUE, whose positive form is 0."""
    partitioner = DefaultPartitioner(initial_counter=2**31 - 2)
    view = View(5, [0, 1, 2, 3, 4])
    assert [partitioner.partition("t", None, view) for _ in range(4)] == [
        (2**31 - 2) % 5, (2**31 - 1) % 5, 0, 1]
    assert partitioner.topic_counters["t"] == -2**31 + 2


def test_sticky_partition_switches_after_batch_size_bytes() -> None:
    """Mirrors BuiltInPartitionerTest#testStickyPartitioning: stick until batch.size bytes, then switch."""
    view = View(4, [0, 1, 2, 3])
    partitioner = BuiltInPartitioner(100, random.Random(7))
    expected = random.Random(7)
    first = expected.getrandbits(31) % 4
    second = expected.getrandbits(31) % 4
    assert partitioner.partition("t", None, view) == first
    partitioner.on_append("t", first, 60, view)
    assert partitioner.partition("t", None, view) == first
    # Appends to another partition (keyed records) do not count.
    partitioner.on_append("t", (first + 1) % 4, 60, view)
    assert partitioner.partition("t", None, view) == first
    partitioner.on_append("t", first, 40, view)
    assert partitioner.partition("t", None, view) == second
    assert partitioner.sticky["t"].produced_bytes == 0
    # Switching works with a single partition too.
    single = BuiltInPartitioner(1)
    for _ in range(10):
        assert single.partition("b", None, View(1, [0])) == 0
        single.on_append("b", 0, 1, View(1, [0]))


def test_sticky_partition_prefers_available_partitions() -> None:
    """Mirrors BuiltInPartitionerTest#unavailablePartitionsTest: only partitions with a leader, unless none has one."""
    for seed in range(20):
        partitioner = BuiltInPartitioner(1, random.Random(seed))
        assert partitioner.partition("t", None, View(5, [3])) == 3
        partitioner.on_append("t", 3, 1, View(5, [3]))
        assert partitioner.partition("t", None, View(5, [3])) == 3
    partitioner = BuiltInPartitioner(1, random.Random(1))
    assert partitioner.partition("t", None, View(5, [])) == random.Random(1).getrandbits(31) % 5


def test_invalid_arguments() -> None:
    """Mirrors BuiltInPartitionerTest#testStickyBatchSizeMoreThatZero."""
    with pytest.raises(KafkaException, match="sticky_batch_size must be >= 1 but got 0"):
        BuiltInPartitioner(0)
    with pytest.raises(KafkaException, match="cannot pick a partition among 0 partitions"):
        partition_for_key(b"k", 0)
