"""A broker: its components wired together and run as one anyio task group.

Mirrors kafka.server.KafkaServer (the ZooKeeper-mode broker) and BrokerServer's life cycle in
the parts replication needs. ``run`` starts the request loop, the purgatory timer, the
scheduler, the fetchers and the AlterPartition sender inside one task group. ``crash`` cancels
that group at once (all memory state is lost; the ``Disk`` object survives, as files would);
``shutdown`` is the clean path: HW and recovery checkpoints are written first.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Hashable, Iterable

import anyio

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.disk import Disk
from kafka_ref.log.log_manager import LogManager
from kafka_ref.network.network import Network, serve_inbox
from kafka_ref.replica.fetcher.replica_fetcher_manager import ReplicaFetcherManager
from kafka_ref.replica.replica_manager import ReplicaManager
from kafka_ref.server.alter_partition_manager import AlterPartitionManager
from kafka_ref.server.authorizer import Authorizer
from kafka_ref.server.fetch_session import FetchManager, FetchSessionCache
from kafka_ref.server.kafka_apis import KafkaApis
from kafka_ref.server.metadata_cache import MetadataCache
from kafka_ref.server.timer import KafkaScheduler, SystemTimer


class KafkaBroker:
    """Mirrors kafka.server.KafkaServer: one broker on the in-process network."""

    def __init__(
        self,
        broker_id: int,
        config: KafkaConfig,
        network: Network,
        disk: Disk,
        *,
        controller_node_provider: Callable[[], Hashable | None] | None = None,
        authorizer: Authorizer | None = None,
        time: Time | None = None,
        zookeeper: Any = None,
        rng: random.Random | None = None,
        kraft_controller: Hashable | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.config = config if config.broker_id == broker_id else config.copy_with({"broker.id": broker_id})
        self.network = network
        self.disk = disk
        self.time = time or Time()
        self.broker_epoch = -1
        self.is_running = False
        self.leadership_listeners: list[Callable[[Iterable[Any], Iterable[Any]], None]] = []
        self.resignation_listeners: list[Callable[[int, int], None]] = []
        self.deleted_partition_listeners: list[Callable[[list[TopicPartition]], None]] = []
        self._cancel_scope: anyio.CancelScope | None = None
        # ZooKeeper mode (kafka.server.ZkSupport): the session, the controller, the admin manager.
        self.zookeeper = zookeeper
        self.rng = rng or random.Random(broker_id)
        self.zk_client: Any = None
        self.cluster_id: str | None = None
        self.controller: Any = None
        self.admin_manager: Any = None
        self.config_manager: Any = None
        # KRaft mode (kafka.server.BrokerServer): the controller node, and the metadata-log components.
        self.kraft_controller = kraft_controller
        self.kraft: Any = None
        self._log = state_change_logger(broker_id=broker_id)
        # Components (rebuilt on every start: memory state does not survive a crash).
        self.metadata_cache = MetadataCache(broker_id) if kraft_controller is None else _kraft_metadata_cache(broker_id)
        self.scheduler = KafkaScheduler(self.time)
        self.timer = SystemTimer(self.time)
        self.log_manager = LogManager(disk, self.time, default_config=LogConfig.from_broker(self.config),
                                      scheduler=self.scheduler,
                                      retention_check_ms=self.config.get("log.retention.check.interval.ms"))
        self.alter_partition_manager = AlterPartitionManager(
            broker_id,
            network,
            controller_node_provider or (lambda: self.metadata_cache.controller_id),
            lambda: self.broker_epoch,
            request_timeout_ms=self.config.get("request.timeout.ms"),
            metadata_version_supplier=lambda: self.config.inter_broker_protocol_version,
        )
        self.replica_manager = ReplicaManager(
            config=self.config,
            time=self.time,
            log_manager=self.log_manager,
            metadata_cache=self.metadata_cache,
            alter_partition_manager=self.alter_partition_manager,
            scheduler=self.scheduler,
            timer=self.timer,
            disk=disk,
            replica_fetcher_manager_factory=lambda rm: ReplicaFetcherManager(
                self.config, rm, network,
                metadata_version_supplier=lambda: self.config.inter_broker_protocol_version,
                broker_epoch_supplier=lambda: self.broker_epoch,
            ),
        )
        self.fetch_manager = FetchManager(
            self.time, FetchSessionCache(self.config.get("max.incremental.fetch.session.cache.slots"), 120000)
        )
        self.apis = KafkaApis(self, authorizer or Authorizer())
        # Group coordinator (seed 000 §__consumer_offsets leader change): FindCoordinator and the group APIs
        # registered with KafkaApis; __consumer_offsets leadership and resignation hooks.
        from kafka_ref.coordinator.group.group_apis import install_group_coordinator

        self.group_coordinator = install_group_coordinator(self)
        # Transaction coordinator: InitProducerId for idempotent producers (no transactions).
        from kafka_ref.coordinator.transaction.transaction_coordinator import install_transaction_coordinator

        install_transaction_coordinator(self)

    # ------------------------------------------------------------------ hooks for other components

    def on_leadership_change(self, leaders: Iterable[Any], followers: Iterable[Any]) -> None:
        """The ``onLeadershipChange`` callback KafkaApis hands to becomeLeaderOrFollower (seed 000 step 9)."""
        leaders, followers = list(leaders), list(followers)
        for listener in self.leadership_listeners:
            listener(leaders, followers)

    def on_offsets_partition_resignation(self, partition: int, leader_epoch: int) -> None:
        for listener in self.resignation_listeners:
            listener(partition, leader_epoch)

    def on_deleted_partitions(self, partitions: list[TopicPartition]) -> None:
        for listener in self.deleted_partition_listeners:
            listener(partitions)

    # ------------------------------------------------------------------ life cycle

    async def run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        """Mirrors kafka.server.KafkaServer#startup; runs until shut down or crashed."""
        with anyio.CancelScope() as scope:
            self._cancel_scope = scope
            async with anyio.create_task_group() as tg:
                # 1. Logs from disk (HWs from the checkpoint).
                self.log_manager.startup()
                # 2. Timers, scheduler, ISR expiration, fetchers, AlterPartition sender.
                tg.start_soon(self.timer.run, name=f"broker-{self.broker_id}-timer")
                self.scheduler.startup(tg)
                self.replica_manager.startup()
                self.replica_manager.replica_fetcher_manager.start(tg)
                self.alter_partition_manager.start(tg)
                # 3. Open for requests.
                inbox = self.network.register(self.broker_id)
                tg.start_soon(serve_inbox, inbox, self.apis.handle, name=f"broker-{self.broker_id}-requests")
                # 4. ZooKeeper mode: session, registration (broker epoch), controller, admin manager.
                if self.zookeeper is not None:
                    self._start_zk_support(tg)
                # 5. KRaft mode: register, fetch the metadata log, publish once caught up.
                if self.kraft_controller is not None:
                    await self._start_kraft_support(tg)
                self.is_running = True
                if self.config.not_modelled:
                    # Kafka keys kafka_ref accepts but has no use for (or a misspelt key).
                    self._log.info("broker_config_not_modelled", keys=self.config.not_modelled)
                self._log.info("broker_started", broker_epoch=self.broker_epoch)
                task_status.started(self)
        self.is_running = False

    def _start_zk_support(self, tg: anyio.abc.TaskGroup) -> None:
        """Mirrors the ZooKeeper part of kafka.server.KafkaServer#startup."""
        from kafka_ref.controller.kafka_controller import KafkaController
        from kafka_ref.server.metadata.zk_config_repository import ZkConfigRepository
        from kafka_ref.server.zk_config_manager import ZkConfigManager
        from kafka_ref.server.zk_admin_manager import new_admin_manager
        from kafka_ref.zk.kafka_zk_client import KafkaZkClient

        self.zk_client = KafkaZkClient(
            self.zookeeper, session_timeout_ms=self.config.get("zookeeper.session.timeout.ms"),
            time=self.time, name=f"broker-{self.broker_id}",
        )
        tg.start_soon(self.zk_client.run, name=f"broker-{self.broker_id}-zk-session")
        self.zk_client.create_top_level_paths()
        # The cluster id (KafkaServer#getOrGenerateClusterId): the first broker's proposal wins.
        # Proposed from a generator of its own, so the broker's seeded RNG sees no extra draw.
        proposed = str(Uuid.random_uuid(random.Random(f"cluster-id/{self.broker_id}")))
        self.cluster_id = self.zk_client.create_or_get_cluster_id(proposed)
        self.metadata_cache.cluster_id = self.cluster_id
        # Topic overrides come from ZooKeeper: read for each log created (LogManager#getOrCreateLog).
        self.log_manager.config_repository = ZkConfigRepository(self.zk_client)
        self.register_broker_in_zk()
        self.admin_manager = new_admin_manager(self, self.rng)
        self.controller = KafkaController(self.config, self.zk_client, self.network, self)
        self.apis.enable_zk_apis(self.controller, self.admin_manager)
        self.controller.startup(tg)
        # Dynamic topic configs (ZkConfigManager, started last as in KafkaServer#startup): every
        # topic's overrides now, each /config/changes notification later.
        self.config_manager = ZkConfigManager(self, self.zk_client)
        self.config_manager.startup()

    async def _start_kraft_support(self, tg: anyio.abc.TaskGroup) -> None:
        """Mirrors the KRaft part of kafka.server.BrokerServer#startup (kafka_ref/server/kraft_broker_support.py)."""
        from kafka_ref.server.kraft_broker_support import KRaftBrokerSupport

        from kafka_ref.controller.quorum.quorum_controller import CLUSTER_ID

        self.cluster_id = self.metadata_cache.cluster_id = CLUSTER_ID
        self.kraft = KRaftBrokerSupport(self, self.kraft_controller)
        await self.kraft.start(tg)

    def register_broker_in_zk(self) -> int:
        """Mirrors KafkaZkClient#registerBroker from KafkaServer: the ephemeral's czxid is the broker epoch."""
        from kafka_ref.zk.zk_data import BrokerInfo

        self.broker_epoch = self.zk_client.register_broker(BrokerInfo(self.broker_id, "localhost", 9092 + self.broker_id,
                                                                      rack=self.config.get("broker.rack")))
        self._log.info("broker_registered", broker_epoch=self.broker_epoch)
        return self.broker_epoch

    def crash(self) -> None:
        """Kill the broker at once: no checkpoints, tasks cancelled, in-flight requests fail."""
        self._log.info("broker_crashed")
        self.network.unregister(self.broker_id)
        self.is_running = False
        if self._cancel_scope is not None:
            self._cancel_scope.cancel()

    async def controlled_shutdown(self) -> bool:
        """Mirrors kafka.server.KafkaServer#controlledShutdown: ask the controller to move leadership away.

        The first step of Kafka's shutdown; call ``shutdown()`` after it (kafka_ref.controller.controlled_shutdown).
        """
        if self.kraft is not None:
            # KRaft (BrokerServer#shutdown): heartbeats ask to shut down until the controller agrees.
            return self.config.get("controlled.shutdown.enable") and await self.kraft.controlled_shutdown()
        from kafka_ref.controller.controlled_shutdown import broker_controlled_shutdown

        return await broker_controlled_shutdown(self)

    def shutdown(self) -> None:
        """Mirrors kafka.server.KafkaServer#shutdown (the clean path, after any controlled shutdown)."""
        self._log.info("broker_shutting_down")
        if self.controller is not None:
            self.controller.shutdown()
        self.network.unregister(self.broker_id)
        self.replica_manager.shutdown(checkpoint_hw=True)
        self.log_manager.shutdown()
        if self.zk_client is not None:
            self.zk_client.close()
        self.is_running = False
        if self._cancel_scope is not None:
            self._cancel_scope.cancel()


def _kraft_metadata_cache(broker_id: int) -> Any:
    """KRaft mode: the cache is a view of the published MetadataImage (KRaftMetadataCache)."""
    from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache

    return KRaftMetadataCache(broker_id)
