"""Follower fetchers: the managers, the fetcher threads, their leader end points and fetch state.

Mirrors kafka.server.{AbstractFetcherManager, ReplicaFetcherManager, AbstractFetcherThread,
ReplicaFetcherThread, LeaderEndPoint, RemoteLeaderEndPoint, PartitionFetchState}.
"""

from kafka_ref.replica.fetcher.abstract_fetcher_manager import AbstractFetcherManager, fetcher_id_for
from kafka_ref.replica.fetcher.abstract_fetcher_thread import AbstractFetcherThread
from kafka_ref.replica.fetcher.fetcher_metrics import FetcherLagStats, FetcherStats
from kafka_ref.replica.fetcher.leader_end_point import (
    LeaderEndPoint,
    RemoteLeaderEndPoint,
    ReplicaFetch,
    ResultWithPartitions,
)
from kafka_ref.replica.fetcher.partition_fetch_state import (
    FETCHING,
    TRUNCATING,
    BrokerEndPoint,
    FailedPartitions,
    IllegalStateException,
    InitialFetchState,
    OffsetTruncationState,
    PartitionFetchState,
    ReplicaState,
)
from kafka_ref.replica.fetcher.replica_fetcher_manager import ReplicaFetcherManager
from kafka_ref.replica.fetcher.replica_fetcher_thread import ReplicaFetcherThread

__all__ = [
    "FETCHING",
    "TRUNCATING",
    "AbstractFetcherManager",
    "AbstractFetcherThread",
    "BrokerEndPoint",
    "FailedPartitions",
    "FetcherLagStats",
    "FetcherStats",
    "IllegalStateException",
    "InitialFetchState",
    "LeaderEndPoint",
    "OffsetTruncationState",
    "PartitionFetchState",
    "RemoteLeaderEndPoint",
    "ReplicaFetch",
    "ReplicaFetcherManager",
    "ReplicaFetcherThread",
    "ReplicaState",
    "ResultWithPartitions",
    "fetcher_id_for",
]
