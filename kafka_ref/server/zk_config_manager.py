"""How a ZooKeeper-mode broker learns of topic config changes: /config/changes notifications.

Mirrors kafka.server.ZkConfigManager with kafka.common.ZkNodeChangeNotificationListener and the
topic part of kafka.server.TopicConfigHandler. An IncrementalAlterConfigs (on any broker) writes
the new overrides to /config/topics/<topic> and then a sequential
/config/changes/config_change_N naming ``topics/<topic>``; every broker watches
/config/changes, processes each notification newer than the last one it executed by reading
the entity's overrides afresh, and purges notifications older than 15 minutes.
"""

from __future__ import annotations

import json
from typing import Any

from kafka_ref.common.state_change import state_change_logger
from kafka_ref.zk.zk_data import ConfigEntityChangeNotificationSequenceZNode, ConfigEntityChangeNotificationZNode, ConfigType
from kafka_ref.zk.zookeeper import KeeperException
from kafka_ref.zk.zookeeper_client import ZNodeChildChangeHandler

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # ZkNodeChangeNotificationListener's changeExpirationMs default


class TopicConfigHandler:
    """Mirrors kafka.server.TopicConfigHandler (log configs and the controller's unclean-election trigger)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker

    def process_config_changes(self, topic: str, topic_config: dict[str, str]) -> None:
        """Mirrors TopicConfigHandler#processConfigChanges.

        1. The topic's logs take the new config (LogManager#updateTopicConfig); 2. turning
        unclean.leader.election.enable on makes the active controller retry the topic's offline
        partitions (KafkaController#enableTopicUncleanLeaderElection).
        """
        self.broker.log_manager.update_topic_overrides(topic, topic_config)
        if topic_config.get("unclean.leader.election.enable", "").strip().lower() == "true":
            controller = self.broker.controller
            if controller is not None:
                controller.enable_topic_unclean_leader_election(topic)


class ZkConfigManager(ZNodeChildChangeHandler):
    """Mirrors kafka.server.ZkConfigManager and its ZkNodeChangeNotificationListener (topics only)."""

    path = ConfigEntityChangeNotificationZNode.path()

    def __init__(self, broker: Any, zk_client: Any) -> None:
        self.broker = broker
        self.zk_client = zk_client
        self.handlers = {ConfigType.TOPIC: TopicConfigHandler(broker)}
        self.last_executed_change = -1
        self._log = state_change_logger(broker_id=broker.broker_id)

    def startup(self) -> None:
        """Mirrors ZkConfigManager#startup: watch the notifications, then apply every topic's current overrides."""
        # 1. The listener: register the child handler and process what is there (arming the watch).
        self.zk_client.register_znode_child_change_handler(self)
        self.process_notifications()
        # 2. Bootstrap: every entity with a config znode, through its handler.
        for config_type, handler in self.handlers.items():
            for name in self.zk_client.get_all_entities_with_config(config_type):
                handler.process_config_changes(name, self.zk_client.get_entity_configs(config_type, name))

    def handle_child_change(self) -> None:
        """Mirrors ZkNodeChangeNotificationListener.ChangeNotificationHandler#handleChildChange."""
        self.process_notifications()

    def process_notifications(self) -> None:
        """Mirrors ZkNodeChangeNotificationListener#processNotifications.

        1. The notifications, sorted; 2. each one newer than the last executed is processed;
        3. the expired ones are purged. A ZooKeeper error leaves them for the next change.
        """
        try:
            notifications = sorted(self.zk_client.get_children(self.path))
            if not notifications:
                return
            now = self.broker.time.milliseconds()
            for notification in notifications:
                change_id = _change_number(notification)
                if change_id > self.last_executed_change:
                    self.process_notification(notification)
                    self.last_executed_change = change_id
            self.purge_obsolete_notifications(now, notifications)
        except KeeperException as exc:
            self._log.info("config_change_notifications_failed", error=repr(exc))

    def process_notification(self, notification: str) -> None:
        """Mirrors ZkNodeChangeNotificationListener#processNotification with ConfigChangedNotificationHandler (version 2)."""
        data, _stat = self.zk_client.get_data_and_stat(f"{self.path}/{notification}")
        if data is None:
            return
        try:
            entity_path = json.loads(data)["entity_path"]
            root_entity_type, _, name = entity_path.partition("/")
        except (ValueError, KeyError, TypeError, AttributeError):
            self._log.info("config_change_notification_unreadable", notification=notification)
            return
        handler = self.handlers.get(root_entity_type)
        if handler is None or not name:
            return
        config = self.zk_client.get_entity_configs(root_entity_type, name)
        self._log.info("config_change_processed", entity_path=entity_path, config=dict(sorted(config.items())))
        handler.process_config_changes(name, config)

    def purge_obsolete_notifications(self, now: int, notifications: list[str]) -> None:
        """Mirrors ZkNodeChangeNotificationListener#purgeObsoleteNotifications (older than 15 minutes)."""
        for notification in notifications:
            path = f"{self.path}/{notification}"
            data, stat = self.zk_client.get_data_and_stat(path)
            if data is not None and stat is not None and now - stat.ctime > CHANGE_EXPIRATION_MS:
                self.zk_client.delete_path(path)


def _change_number(notification: str) -> int:
    return int(notification[len(ConfigEntityChangeNotificationSequenceZNode.SEQUENCE_NUMBER_PREFIX):])
