"""The ZooKeeper-backed config repository a ZooKeeper-mode broker reads topic overrides from.

A topic's overrides (``min.insync.replicas``, ``max.message.bytes``, ...) live in ZooKeeper under
``/config/topics/<topic>``, written by AdminZkClient#createTopicWithAssignment before the
topic's assignment. A ZooKeeper-mode broker reads them when it creates a log and, at start-up,
for every log it loads (LogManager#fetchTopicConfigOverrides); KRaft brokers get them from the
metadata image instead (BrokerMetadataPublisher).
"""

from __future__ import annotations

from typing import Any

from kafka_ref.zk.zk_data import ConfigType
from kafka_ref.zk.zookeeper import KeeperException


class ZkConfigRepository:
    """Mirrors kafka.server.metadata.ZkConfigRepository (the topic part of ConfigRepository)."""

    def __init__(self, zk_client: Any) -> None:
        self.zk_client = zk_client

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
