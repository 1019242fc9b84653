"""The per-partition state a fetcher keeps, and the small value types around it.

Mirrors the value classes of kafka.server.AbstractFetcherThread / AbstractFetcherManager in
Kafka 3.8: ``PartitionFetchState`` (where a follower is in a partition, and whether it is
truncating, fetching or backing off), ``InitialFetchState`` (what the ReplicaManager hands the
fetcher manager), ``OffsetTruncationState``, ``BrokerEndPoint``, ``FailedPartitions``, and
``PartitionStates`` (org.apache.kafka.common.internals.PartitionStates, the insertion-ordered
map whose order gives round-robin fairness between partitions), and IllegalStateException.
"""

from __future__ import annotations

from kafka_ref.common.errors import IllegalStateException  # noqa: F401 (re-exported)

import enum
from dataclasses import dataclass, replace
from typing import Generic, Iterable, Iterator, TypeVar

from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.fetch_data import OffsetAndEpoch  # noqa: F401  (re-exported for the fetcher)




@dataclass(frozen=True, slots=True)
class BrokerEndPoint:
    """Mirrors kafka.cluster.BrokerEndPoint: a broker id with the address to reach it.

    The manager compares whole end points: the same id at a new host/port means a new fetcher.
    """

    id: int
    host: str = "localhost"
    port: int = 9092

    def __str__(self) -> str:
        return f"BrokerEndPoint(id={self.id}, host={self.host}:{self.port})"


class ReplicaState(enum.Enum):
    """Mirrors kafka.server.ReplicaState (Truncating / Fetching)."""

    TRUNCATING = "Truncating"
    FETCHING = "Fetching"

    def __str__(self) -> str:
        return self.value


TRUNCATING = ReplicaState.TRUNCATING
FETCHING = ReplicaState.FETCHING


class DelayedItem:
    """Mirrors kafka.utils.DelayedItem: a deadline ``delay_ms`` from now on the given clock.

    With ``Time()`` the deadline is in loop time (virtual under a mock clock); with ``MockTime``
    it moves only when the test advances the clock.
    """

    __slots__ = ("time", "delay_ms", "due_ms")

    def __init__(self, delay_ms: int, time: Time) -> None:
        self.time = time
        self.delay_ms = delay_ms
        self.due_ms = time.milliseconds() + delay_ms

    def get_delay_ms(self) -> int:
        """Mirrors kafka.utils.DelayedItem#getDelay: milliseconds left (0 once due)."""
        return max(0, self.due_ms - self.time.milliseconds())

    def __repr__(self) -> str:
        return f"DelayedItem(delay_ms={self.delay_ms}, due_ms={self.due_ms})"


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class PartitionFetchState:
    """Mirrors kafka.server.PartitionFetchState.

    Immutable: every change makes a new value (``dataclasses.replace``), which is also how the
    fetcher notices that a partition changed while a request was in flight (the value it sent
    is no longer the value in the map).

    * ``fetch_offset``: the next offset to fetch (the follower's log end offset once fetching).
    * ``lag``: the leader's HW minus the next offset, learnt from the last response (None at start).
    * ``current_leader_epoch``: the epoch the follower knows; sent so the leader can fence.
    * ``delay``: set after an error; the partition sits out until the deadline passes.
    * ``state``: TRUNCATING (must reconcile its log with the leader first) or FETCHING.
    * ``last_fetched_epoch``: epoch of the last fetched batch (KIP-320/595, sent from IBP 2.7).
    """

    topic_id: Uuid | None
    fetch_offset: int
    lag: int | None
    current_leader_epoch: int
    delay: DelayedItem | None = None
    state: ReplicaState = FETCHING
    last_fetched_epoch: int | None = None

    @property
    def is_ready_for_fetch(self) -> bool:
        """Mirrors kafka.server.PartitionFetchState#isReadyForFetch (fetching and not delayed; the
        delay test written out: every partition of every fetch asks)."""
        return self.state is FETCHING and (self.delay is None or self.delay.get_delay_ms() <= 0)

    @property
    def is_replica_in_sync(self) -> bool:
        """Mirrors kafka.server.PartitionFetchState#isReplicaInSync (lag known and <= 0)."""
        return self.lag is not None and self.lag <= 0

    @property
    def is_truncating(self) -> bool:
        """Mirrors kafka.server.PartitionFetchState#isTruncating."""
        return self.state is TRUNCATING and not self.is_delayed

    @property
    def is_delayed(self) -> bool:
        """Mirrors kafka.server.PartitionFetchState#isDelayed (deadline not yet reached)."""
        return self.delay is not None and self.delay.get_delay_ms() > 0

    def update_topic_id(self, topic_id: Uuid | None) -> "PartitionFetchState":
        """Mirrors kafka.server.PartitionFetchState#updateTopicId."""
        return replace(self, topic_id=topic_id)

    def __str__(self) -> str:
        delay = self.delay.delay_ms if self.delay is not None else 0
        return (
            f"FetchState(topicId={self.topic_id}, fetchOffset={self.fetch_offset}, "
            f"currentLeaderEpoch={self.current_leader_epoch}, lastFetchedEpoch={self.last_fetched_epoch}, "
            f"state={self.state}, lag={self.lag}, delay={delay}ms)"
        )


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    """Mirrors kafka.server.InitialFetchState: where a new follower partition starts.

    ``init_offset`` is the ReplicaManager's initial fetch offset (the log end offset when the
    era truncates on fetch and the log has epochs, else the high watermark). A negative offset
    asks the fetcher to find one from the leader (see AbstractFetcherThread#add_partitions).
    """

    topic_id: Uuid | None
    leader: BrokerEndPoint
    current_leader_epoch: int
    init_offset: int


@dataclass(frozen=True, slots=True)
class OffsetTruncationState:
    """Mirrors kafka.server.OffsetTruncationState: truncate to ``offset``; final or not.

    ``truncation_completed`` False means another OffsetsForLeaderEpoch round follows (KIP-279).
    """

    offset: int
    truncation_completed: bool = True

    def __str__(self) -> str:
        return f"TruncationState(offset={self.offset}, completed={self.truncation_completed})"


@dataclass(frozen=True, slots=True)
class BrokerIdAndFetcherId:
    """Mirrors kafka.server.BrokerIdAndFetcherId: the key of the manager's fetcher map."""

    broker_id: int
    fetcher_id: int


@dataclass(frozen=True, slots=True)
class BrokerAndFetcherId:
    """Mirrors kafka.server.BrokerAndFetcherId: the grouping key of add_fetcher_for_partitions."""

    broker: BrokerEndPoint
    fetcher_id: int


class FailedPartitions:
    """Mirrors kafka.server.FailedPartitions.

    Partitions a fetcher gave up on (storage error, fenced epoch, unexpected error). They stay
    out of fetching until the ReplicaManager re-adds them (a new LeaderAndIsr / metadata delta).
    """

    def __init__(self) -> None:
        self._set: set[TopicPartition] = set()

    @property
    def size(self) -> int:
        """Mirrors FailedPartitions#size."""
        return len(self._set)

    def __len__(self) -> int:
        return len(self._set)

    def add(self, topic_partition: TopicPartition) -> None:
        """Mirrors FailedPartitions#add."""
        self._set.add(topic_partition)

    def remove_all(self, topic_partitions: Iterable[TopicPartition]) -> None:
        """Mirrors FailedPartitions#removeAll."""
        self._set.difference_update(topic_partitions)

    def contains(self, topic_partition: TopicPartition) -> bool:
        """Mirrors FailedPartitions#contains."""
        return topic_partition in self._set

    __contains__ = contains

    def partitions(self) -> set[TopicPartition]:
        """Mirrors FailedPartitions#partitions."""
        return set(self._set)


S = TypeVar("S")


class PartitionStates(Generic[S]):
    """Mirrors org.apache.kafka.common.internals.PartitionStates.

    An insertion-ordered map from partition to state. ``update_and_move_to_end`` re-inserts a
    partition at the back, so a partition that just got data is considered after the others
    next time (fairness when a response has a size limit).
    """

    def __init__(self) -> None:
        self._map: dict[TopicPartition, S] = {}

    def move_to_end(self, topic_partition: TopicPartition) -> None:
        """Mirrors PartitionStates#moveToEnd."""
        state = self._map.pop(topic_partition, None)
        if state is not None:
            self._map[topic_partition] = state

    def update_and_move_to_end(self, topic_partition: TopicPartition, state: S) -> None:
        """Mirrors PartitionStates#updateAndMoveToEnd."""
        self._map.pop(topic_partition, None)
        self._map[topic_partition] = state

    def update(self, topic_partition: TopicPartition, state: S) -> None:
        """Mirrors PartitionStates#update: replace the state in place (keeps its position)."""
        self._map[topic_partition] = state

    def remove(self, topic_partition: TopicPartition) -> None:
        """Mirrors PartitionStates#remove."""
        self._map.pop(topic_partition, None)

    def partition_set(self) -> set[TopicPartition]:
        """Mirrors PartitionStates#partitionSet."""
        return set(self._map)

    def clear(self) -> None:
        """Mirrors PartitionStates#clear."""
        self._map.clear()

    def contains(self, topic_partition: TopicPartition) -> bool:
        """Mirrors PartitionStates#contains."""
        return topic_partition in self._map

    __contains__ = contains

    def state_value(self, topic_partition: TopicPartition) -> S | None:
        """Mirrors PartitionStates#stateValue (None when absent)."""
        return self._map.get(topic_partition)

    def partition_state_map(self) -> dict[TopicPartition, S]:
        """Mirrors PartitionStates#partitionStateMap: a snapshot copy, in order."""
        return dict(self._map)

    def set(self, states: dict[TopicPartition, S]) -> None:
        """Mirrors PartitionStates#set: replace everything, grouping partitions by topic.

        Kafka groups partitions of one topic together (topics in first-seen order) so a fetch
        request lists each topic once; we keep the same order.
        """
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in states:
            by_topic.setdefault(tp.topic, []).append(tp)
        self._map = {tp: states[tp] for tps in by_topic.values() for tp in tps}

    @property
    def size(self) -> int:
        """Mirrors PartitionStates#size."""
        return len(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __iter__(self) -> Iterator[TopicPartition]:
        return iter(list(self._map))
