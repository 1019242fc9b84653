"""The broker's manager of follower fetchers.

Mirrors kafka.server.ReplicaFetcherManager (Kafka 3.8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kafka_ref.replica.fetcher.abstract_fetcher_manager import AbstractFetcherManager
from kafka_ref.replica.fetcher.leader_end_point import RemoteLeaderEndPoint
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint
from kafka_ref.replica.fetcher.replica_fetcher_thread import ReplicaFetcherThread
from kafka_ref.server.fetch_session_handler import FetchSessionHandler

if TYPE_CHECKING:
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.common.metadata_version import MetadataVersion
    from kafka_ref.network.network import Network


class ReplicaFetcherManager(AbstractFetcherManager[ReplicaFetcherThread]):
    """Mirrors kafka.server.ReplicaFetcherManager.

    ``num.replica.fetchers`` fetchers per leader broker; each is a ReplicaFetcherThread with a
    RemoteLeaderEndPoint (and its own fetch session) to that leader over ``network``.
    """

    def __init__(
        self,
        broker_config: KafkaConfig,
        replica_manager: Any,
        network: Network,
        task_group=None,
        thread_name_prefix: str | None = None,
        metadata_version_supplier: Callable[[], MetadataVersion] | None = None,
        broker_epoch_supplier: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(
            name=f"ReplicaFetcherManager on broker {broker_config.broker_id}",
            client_id="Replica",
            num_fetchers=broker_config.num_replica_fetchers,
            task_group=task_group,
        )
        self.broker_config = broker_config
        self.replica_manager = replica_manager
        self.network = network
        self.thread_name_prefix = thread_name_prefix
        self.metadata_version_supplier = metadata_version_supplier
        self.broker_epoch_supplier = broker_epoch_supplier

    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> ReplicaFetcherThread:
        """Mirrors ReplicaFetcherManager#createFetcherThread."""
        # 1. Kafka's thread name and log prefix.
        prefix = f"{self.thread_name_prefix}:" if self.thread_name_prefix else ""
        thread_name = f"{prefix}ReplicaFetcherThread-{fetcher_id}-{source_broker.id}"
        log_prefix = f"[ReplicaFetcher replicaId={self.broker_config.broker_id}, leaderId={source_broker.id}, fetcherId={fetcher_id}] "
        # 2. A leader end point with its own fetch session to that broker.
        end_point = RemoteLeaderEndPoint(
            log_prefix,
            self.network,
            source_broker,
            FetchSessionHandler(source_broker.id, log_prefix),
            self.broker_config,
            self.replica_manager,
            self.metadata_version_supplier,
            self.broker_epoch_supplier,
        )
        # 3. The fetcher.
        return ReplicaFetcherThread(thread_name, end_point, self.broker_config, self.failed_partitions,
                                    self.replica_manager, log_prefix)

    def shutdown(self) -> None:
        """Mirrors ReplicaFetcherManager#shutdown: stop every fetcher."""
        self.close_all_fetchers()
