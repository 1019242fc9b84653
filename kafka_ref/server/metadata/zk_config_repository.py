"""The ZooKeeper-backed config repository a ZooKeeper-mode broker reads topic overrides from.

A topic's overrides (``min.insync.replicas``, ``max.message.bytes``, ...) live in ZooKeeper under
``/config/topics/<topic>``, written by AdminZkClient#createTopicWithAssignment before the
topic's assignment. A ZooKeeper-mode broker reads them when it creates a log and, at start-up,
for every log it loads (LogManager#fetchTopicConfigOverrides); KRaft brokers get them from the
metadata image instead (BrokerMetadataPublisher).
"""

from __future__ import annotations

from typing import Any

from kafka_ref.common.errors import InvalidRequestException
from kafka_ref.image.records import ConfigResource, ConfigResourceType
from kafka_ref.zk.zk_data import ConfigType
from kafka_ref.zk.zookeeper import KeeperException

# ZooKeeperInternals.DEFAULT_STRING: the znode name of the cluster-wide (default) entity.
DEFAULT_STRING = "<default>"


class ZkConfigRepository:
    """Mirrors kafka.server.metadata.ZkConfigRepository and the defaults of ConfigRepository."""

    def __init__(self, zk_client: Any) -> None:
        self.zk_client = zk_client

    def config(self, resource: ConfigResource) -> dict[str, str]:
        """Mirrors kafka.server.metadata.ZkConfigRepository#config.

        1. Only topics and brokers have configurations in ZooKeeper (client metrics exist only
        on KRaft clusters: InvalidRequestException; any other type: IllegalArgumentException,
        ValueError here); 2. the cluster-wide broker entity (an empty name) is "<default>";
        3. read the entity's znode (AdminZkClient#fetchEntityConfig; empty when absent).
        """
        # 1. The ZooKeeper entity type.
        if resource.type is ConfigResourceType.TOPIC:
            config_type = ConfigType.TOPIC
        elif resource.type is ConfigResourceType.BROKER:
            config_type = ConfigType.BROKER
        elif resource.type is ConfigResourceType.CLIENT_METRICS:
            raise InvalidRequestException("Config type client-metrics is only supported on KRaft clusters")
        else:
            raise ValueError(f"Unsupported config type: {resource.type.name}")
        # 2. The default broker entity.
        name = DEFAULT_STRING if resource.type is ConfigResourceType.BROKER and not resource.name else resource.name
        # 3. The znode's configuration.
        return self.zk_client.get_entity_configs(config_type, name)

    def broker_config(self, broker_id: int) -> dict[str, str]:
        """Mirrors kafka.server.metadata.ConfigRepository#brokerConfig."""
        return self.config(ConfigResource(ConfigResourceType.BROKER, str(broker_id)))

    def topic_config(self, topic: str) -> dict[str, str] | None:
        """Mirrors kafka.server.metadata.ConfigRepository#topicConfig: the overrides, {} when none.

        None when ZooKeeper cannot answer now (session expired or lost): Kafka's client would
        block until reconnected; here the caller keeps the config it already has.
        """
        # ZkConfigRepository#config reads the entity's znode through AdminZkClient#fetchEntityConfig.
        try:
            return self.zk_client.get_entity_configs(ConfigType.TOPIC, topic)
        except KeeperException:
            return None
