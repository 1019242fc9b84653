"""One fetcher per (leader broker, fetcher id): who fetches which partition.

Mirrors kafka.server.AbstractFetcherManager (Kafka 3.8). A partition goes to fetcher
``Utils.abs(31 * topic.hashCode() + partition) % num.replica.fetchers`` of its leader, with
Java's 32-bit ``String.hashCode`` and int overflow, so the assignment is the one Kafka makes.

Fetchers are anyio tasks. The manager is given the task group to start them in, either at
construction or later with ``start(task_group)`` (fetchers created before that start then).
All methods are synchronous: the ReplicaManager calls them from synchronous code, and one
event loop makes each call atomic (Kafka holds the manager's lock).
"""

from __future__ import annotations

import abc
import structlog
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, TypeVar

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.utils import java_int, java_string_hash, utils_abs
from kafka_ref.common.uuid import Uuid
from kafka_ref.replica.fetcher.abstract_fetcher_thread import AbstractFetcherThread
from kafka_ref.replica.fetcher.partition_fetch_state import (
    BrokerAndFetcherId,
    BrokerEndPoint,
    BrokerIdAndFetcherId,
    FailedPartitions,
    InitialFetchState,
    PartitionFetchState,
)

log = structlog.get_logger("kafka.server.AbstractFetcherManager")

T = TypeVar("T", bound=AbstractFetcherThread)


def fetcher_id_for(topic_partition: TopicPartition, num_fetchers: int) -> int:
    """Mirrors AbstractFetcherManager#getFetcherId: Utils.abs(31 * hashCode + partition) % n (int32)."""
    return utils_abs(java_int(31 * java_string_hash(topic_partition.topic) + topic_partition.partition)) % num_fetchers


class AbstractFetcherManager(abc.ABC, Generic[T]):
    """Mirrors kafka.server.AbstractFetcherManager."""

    def __init__(self, name: str, client_id: str, num_fetchers: int, task_group=None) -> None:
        self.name = name
        self.client_id = client_id
        self.num_fetchers_per_broker = num_fetchers
        self.fetcher_thread_map: dict[BrokerIdAndFetcherId, T] = {}
        self.failed_partitions = FailedPartitions()
        self.task_group = task_group

    # -- subclass hook ---------------------------------------------------------------------

    @abc.abstractmethod
    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> T:
        """Mirrors AbstractFetcherManager#createFetcherThread."""

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, task_group) -> None:
        """Start fetchers in ``task_group`` (Kafka starts each thread in addFetcherForPartitions).

        Fetchers created before the manager had a task group start now; later ones at once.
        """
        self.task_group = task_group
        for fetcher in self.fetcher_thread_map.values():
            if not fetcher.is_started and fetcher.is_running:
                fetcher.start(task_group)

    def _start_fetcher(self, fetcher: T) -> None:
        if self.task_group is not None:
            fetcher.start(self.task_group)

    # -- metrics ---------------------------------------------------------------------------

    def max_lag(self) -> int:
        """Mirrors the MaxLag gauge: the largest lag over every fetcher and partition (0 if none)."""
        return max((m.lag for f in self.fetcher_thread_map.values() for m in f.fetcher_lag_stats.stats.values()), default=0)

    @property
    def dead_thread_count(self) -> int:
        """Mirrors the DeadThreadCount gauge."""
        return sum(1 for f in self.fetcher_thread_map.values() if f.is_thread_failed)

    @property
    def failed_partitions_count(self) -> int:
        """Mirrors the FailedPartitionsCount gauge."""
        return self.failed_partitions.size

    # -- assignment ------------------------------------------------------------------------

    def get_fetcher_id(self, topic_partition: TopicPartition) -> int:
        """Mirrors AbstractFetcherManager#getFetcherId."""
        return fetcher_id_for(topic_partition, self.num_fetchers_per_broker)

    def get_fetcher(self, topic_partition: TopicPartition) -> T | None:
        """Mirrors AbstractFetcherManager#getFetcher: the fetcher holding this partition."""
        for fetcher in self.fetcher_thread_map.values():
            if fetcher.fetch_state(topic_partition) is not None:
                return fetcher
        return None

    def add_fetcher_for_partitions(self, partition_and_offsets: Mapping[TopicPartition, InitialFetchState]) -> None:
        """Mirrors AbstractFetcherManager#addFetcherForPartitions.

        Groups partitions by (leader end point, fetcher id). The fetcher for that leader id is
        reused when it talks to the same end point, replaced (shut down, new one created)
        when the leader's end point changed, and created when there is none.
        """
        # 1. Group by leader end point and fetcher id.
        partitions_per_fetcher: dict[BrokerAndFetcherId, dict[TopicPartition, InitialFetchState]] = {}
        for tp, initial in partition_and_offsets.items():
            key = BrokerAndFetcherId(initial.leader, self.get_fetcher_id(tp))
            partitions_per_fetcher.setdefault(key, {})[tp] = initial

        def add_and_start_fetcher_thread(broker_and_fetcher_id: BrokerAndFetcherId, broker_id_and_fetcher_id: BrokerIdAndFetcherId) -> T:
            """Mirrors addFetcherForPartitions#addAndStartFetcherThread."""
            fetcher = self.create_fetcher_thread(broker_and_fetcher_id.fetcher_id, broker_and_fetcher_id.broker)
            self.fetcher_thread_map[broker_id_and_fetcher_id] = fetcher
            self._start_fetcher(fetcher)
            return fetcher

        for broker_and_fetcher_id, initial_fetch_offsets in partitions_per_fetcher.items():
            broker_id_and_fetcher_id = BrokerIdAndFetcherId(broker_and_fetcher_id.broker.id, broker_and_fetcher_id.fetcher_id)
            current = self.fetcher_thread_map.get(broker_id_and_fetcher_id)
            # 2. Reuse, replace or create the fetcher.
            if current is not None and current.leader.broker_end_point() == broker_and_fetcher_id.broker:
                fetcher = current
            else:
                if current is not None:
                    current.shutdown()
                fetcher = add_and_start_fetcher_thread(broker_and_fetcher_id, broker_id_and_fetcher_id)
            # 3. Hand it the partitions (re-added partitions stop being failed).
            self.add_partitions_to_fetcher_thread(fetcher, initial_fetch_offsets)

    def add_partitions_to_fetcher_thread(self, fetcher: T, initial_offset_and_epochs: Mapping[TopicPartition, InitialFetchState]) -> None:
        """Mirrors AbstractFetcherManager#addPartitionsToFetcherThread."""
        fetcher.add_partitions(initial_offset_and_epochs)
        log.info("fetcher_added", manager=self.name, leader=fetcher.leader.broker_end_point().id,
                 partitions=sorted(map(str, initial_offset_and_epochs)))

    def add_failed_partition(self, topic_partition: TopicPartition) -> None:
        """Mirrors AbstractFetcherManager#addFailedPartition."""
        self.failed_partitions.add(topic_partition)

    def maybe_update_topic_ids(self, partitions_to_update: Mapping[TopicPartition, int], topic_ids: Callable[[str], Uuid | None]) -> None:
        """Mirrors AbstractFetcherManager#maybeUpdateTopicIds (partition -> leader id)."""
        per_fetcher: dict[BrokerIdAndFetcherId, set[TopicPartition]] = {}
        for tp, leader_id in partitions_to_update.items():
            per_fetcher.setdefault(BrokerIdAndFetcherId(leader_id, self.get_fetcher_id(tp)), set()).add(tp)
        for key, partitions in per_fetcher.items():
            fetcher = self.fetcher_thread_map.get(key)
            if fetcher is not None:
                fetcher.maybe_update_topic_ids(partitions, topic_ids)

    def remove_fetcher_for_partitions(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        """Mirrors AbstractFetcherManager#removeFetcherForPartitions: returns their last fetch states."""
        partitions = set(partitions)
        fetch_states: dict[TopicPartition, PartitionFetchState] = {}
        for fetcher in self.fetcher_thread_map.values():
            fetch_states.update(fetcher.remove_partitions(partitions))
        self.failed_partitions.remove_all(partitions)
        if partitions:
            log.info("fetcher_removed", manager=self.name, partitions=sorted(map(str, partitions)))
        return fetch_states

    def resize_thread_pool(self, new_size: int) -> None:
        """Mirrors AbstractFetcherManager#resizeThreadPool: re-spread every partition over ``new_size`` fetchers."""
        current_size = self.num_fetchers_per_broker
        self.num_fetchers_per_broker = new_size
        if new_size != current_size:
            # 1. Take every partition out (keeping where it was), stop fetchers beyond the new size.
            removed: dict[TopicPartition, InitialFetchState] = {}
            for key, fetcher in list(self.fetcher_thread_map.items()):
                states = fetcher.remove_all_partitions()
                if key.fetcher_id >= new_size:
                    fetcher.shutdown()
                for tp, state in states.items():
                    removed[tp] = InitialFetchState(state.topic_id, fetcher.leader.broker_end_point(),
                                                    state.current_leader_epoch, state.fetch_offset)
            # 2. Put them back under the new hash.
            self.add_fetcher_for_partitions(removed)
        self.shutdown_idle_fetcher_threads()

    def shutdown_idle_fetcher_threads(self) -> None:
        """Mirrors AbstractFetcherManager#shutdownIdleFetcherThreads: stop fetchers with no partitions."""
        for key, fetcher in list(self.fetcher_thread_map.items()):
            if fetcher.partition_count <= 0:
                fetcher.shutdown()
                del self.fetcher_thread_map[key]

    def close_all_fetchers(self) -> None:
        """Mirrors AbstractFetcherManager#closeAllFetchers."""
        for fetcher in self.fetcher_thread_map.values():
            fetcher.initiate_shutdown()
        for fetcher in self.fetcher_thread_map.values():
            fetcher.shutdown()
        self.fetcher_thread_map.clear()
