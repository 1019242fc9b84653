"""Where a new partition's replicas go in KRaft mode.

Mirrors org.apache.kafka.metadata.placement.StripedReplicaPlacer (Kafka 3.x): brokers grouped
by rack, each rack's fenced and unfenced brokers kept apart; partitions are striped across
racks and brokers from a random start, the first replica (the leader) always on an unfenced
broker, and the lists reshuffled once every unfenced broker has led one partition. The random
choices come from a seeded ``random.Random``, so they are reproducible here but not equal to
Java's ``java.util.Random`` sequence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from kafka_ref.common.errors import InvalidReplicationFactorException
from kafka_ref.common.utils import java_string_hash


@dataclass(frozen=True, slots=True)
class UsableBroker:
    """Mirrors org.apache.kafka.metadata.placement.UsableBroker."""

    id: int
    rack: str | None
    fenced: bool


class BrokerList:
    """Mirrors StripedReplicaPlacer.BrokerList: brokers taken in turn from a moving offset."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: random.Random) -> None:
        """Mirrors BrokerList#initialize: sorted, with a random start."""
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def shuffle(self, rng: random.Random) -> None:
        rng.shuffle(self.brokers)

    def next(self, epoch: int) -> int:
        """Mirrors BrokerList#next: the next broker of this iteration epoch, or -1 when exhausted."""
        if not self.brokers:
            return -1
        # 1. A new epoch restarts the iteration one position further on.
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        # 2. Each broker at most once per epoch.
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class Rack:
    """Mirrors StripedReplicaPlacer.Rack: its fenced and unfenced brokers."""

    def __init__(self) -> None:
        self.fenced = BrokerList()
        self.unfenced = BrokerList()

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        """Unfenced brokers first, fenced ones only when no unfenced one is left."""
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


class RackList:
    """Mirrors StripedReplicaPlacer.RackList."""

    def __init__(self, rng: random.Random, usable: Iterable[UsableBroker]) -> None:
        self.rng = rng
        self.racks: dict[str | None, Rack] = {}
        self.rack_names: list[str | None] = []
        self.num_total_brokers = 0
        self.num_unfenced_brokers = 0
        for broker in usable:
            rack = self.racks.get(broker.rack)
            if rack is None:
                rack = self.racks[broker.rack] = Rack()
                self.rack_names.append(broker.rack)
            if broker.fenced:
                rack.fenced.brokers.append(broker.id)
            else:
                self.num_unfenced_brokers += 1
                rack.unfenced.brokers.append(broker.id)
            self.num_total_brokers += 1
        # Kafka walks its HashMap of racks: that order decides which rack draws which random number.
        for name in _java_hash_map_order(self.rack_names):
            self.racks[name].fenced.initialize(rng)
            self.racks[name].unfenced.initialize(rng)
        self.rack_names.sort(key=lambda name: (name is not None, name or ""))
        self.epoch = 0
        self.offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> list[int]:
        """Mirrors RackList#place: one partition's replicas, the first from an unfenced broker.

        0. A positive factor, no more than the brokers, some broker unfenced (in Kafka's order of
        these checks); 1. once every unfenced broker had its turn, reshuffle (the rack names, then
        each rack in HashMap order); 2. the first replica from the next unfenced broker; 3. the
        others round-robin over the racks.
        """
        # 0. The checks.
        _check_positive(replication_factor)
        _check_enough_brokers(replication_factor, self.num_total_brokers)
        _check_some_unfenced(self.num_unfenced_brokers)
        # 1. Once every unfenced broker had its turn, reshuffle to vary the assignments.
        if self.epoch == self.num_unfenced_brokers and self.num_unfenced_brokers > 1:
            self.rng.shuffle(self.rack_names)
            for name in _java_hash_map_order(self.racks):
                self.racks[name].fenced.shuffle(self.rng)
                self.racks[name].unfenced.shuffle(self.rng)
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        # 2. The first replica: the next unfenced broker, starting at the offset rack.
        brokers: list[int] = []
        first_rack_index = self.offset
        while True:
            result = self.racks[self.rack_names[first_rack_index]].next_unfenced(self.epoch)
            if result >= 0:
                brokers.append(result)
                break
            first_rack_index = (first_rack_index + 1) % len(self.rack_names)
        # 3. The others round-robin over racks (the first replica's rack skipped once).
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1
                else:
                    result = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % len(self.rack_names)
            brokers.append(result)
        self.epoch += 1
        self.offset += 1
        return brokers


def _check_positive(replication_factor: int) -> None:
    """Mirrors StripedReplicaPlacer#throwInvalidReplicationFactorIfNonPositive."""
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(
            f"Invalid replication factor {replication_factor}: the replication factor must be positive.")


def _check_some_unfenced(unfenced: int) -> None:
    """Mirrors StripedReplicaPlacer#throwInvalidReplicationFactorIfZero."""
    if unfenced == 0:
        raise InvalidReplicationFactorException("All brokers are currently fenced.")


def _check_enough_brokers(replication_factor: int, total: int) -> None:
    """Mirrors StripedReplicaPlacer#throwInvalidReplicationFactorIfTooFewBrokers."""
    if replication_factor > total:
        raise InvalidReplicationFactorException(
            f"The target replication factor of {replication_factor} cannot be reached because only {total} "
            "broker(s) are registered.")


def _check(replication_factor: int, total: int, unfenced: int) -> None:
    # StripedReplicaPlacer#place's order: positive, some broker unfenced, enough brokers.
    _check_positive(replication_factor)
    _check_some_unfenced(unfenced)
    _check_enough_brokers(replication_factor, total)


def _java_hash_map_order(keys: Iterable[str | None]) -> list[str | None]:
    """Iteration order of a java.util.HashMap<Optional<String>, _> after inserting ``keys`` in order.

    Optional#hashCode is the string's hashCode (0 when empty); HashMap spreads it (h ^ h >>> 16)
    into a table of 16 buckets that doubles past a 0.75 load; it iterates bucket by bucket,
    keeping insertion order within a bucket (a resize keeps that relative order).
    """
    ordered = list(keys)
    capacity = 16
    while len(ordered) > capacity * 0.75:
        capacity *= 2

    def bucket(name: str | None) -> int:
        h = java_string_hash(name) & 0xFFFFFFFF if name is not None else 0
        return (h ^ (h >> 16)) & (capacity - 1)

    return [name for _, name in sorted(enumerate(ordered), key=lambda item: (bucket(item[1]), item[0]))]


class StripedReplicaPlacer:
    """Mirrors org.apache.kafka.metadata.placement.StripedReplicaPlacer."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def place(self, start_partition: int, num_partitions: int, num_replicas: int,
              usable_brokers: Iterable[UsableBroker]) -> list[list[int]]:
        """Mirrors StripedReplicaPlacer#place: one replica list per new partition."""
        rack_list = RackList(self.rng, usable_brokers)
        _check(num_replicas, rack_list.num_total_brokers, rack_list.num_unfenced_brokers)
        return [rack_list.place(num_replicas) for _ in range(num_partitions)]
