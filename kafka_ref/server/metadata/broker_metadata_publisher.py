"""Applies each published metadata image and delta to a KRaft broker.

Mirrors kafka.server.metadata.BrokerMetadataPublisher#publish (Kafka 3.3; seed 004 §2.2 step 1):
the metadata cache takes the new image; the first publish initialises the managers; the topics
delta goes to ReplicaManager#applyDelta; the group coordinator hears about __consumer_offsets
partitions it now leads, follows or lost; deleted topics are reported; topic configuration
changes reach the log manager; the first publish finishes initialising the replica manager.

The group coordinator is reached through the broker's hooks, the same ones the ZooKeeper path
uses: ``on_leadership_change(leaders, followers)`` with the Partition objects (onElection /
onResignation with a leader epoch), ``on_offsets_partition_resignation(partition, epoch)``
(-1 standing for Kafka's "no epoch" when the partition is deleted) and
``on_deleted_partitions``.
"""

from __future__ import annotations

from typing import Any

from kafka_ref.common.config import LogConfig
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.image.delta import MetadataDelta, TopicDelta
from kafka_ref.image.image import MetadataImage
from kafka_ref.image.records import ConfigResourceType

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
NO_EPOCH = -1


def get_topic_delta(topic_name: str, new_image: MetadataImage, delta: MetadataDelta) -> TopicDelta | None:
    """Mirrors BrokerMetadataPublisher.getTopicDelta: the delta of a topic that exists in the new image."""
    topic = new_image.topics.get_topic(topic_name)
    if topic is None or delta.topics_delta is None:
        return None
    return delta.topics_delta.get_topic(topic.id)


class FatalFaultError(RuntimeError):
    """What the broker's fatal fault handler (ProcessExitingFaultHandler) stands for: the broker stops."""


class BrokerMetadataPublisher:
    """Mirrors kafka.server.metadata.BrokerMetadataPublisher.

    Failures while publishing go to the metadata publishing fault handler, which on a broker is
    not fatal (SharedServer#metadataPublishingFaultHandler): the fault is logged
    (``metadata_publishing_fault``) and counted (BrokerServerMetrics#metadataApplyErrorCount,
    ``metadata_apply_error_count``) and the rest of the publish goes on. Only a failure to start
    the managers on the first publish is fatal (``FatalFaultError`` ends the broker).
    """

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.broker_id = broker.broker_id
        self.metadata_cache = broker.metadata_cache
        self.replica_manager = broker.replica_manager
        self.first_publish = True
        self.last_local_changes: Any = None
        self.metadata_apply_error_count = 0
        self._log = state_change_logger(broker_id=broker.broker_id)

    def handle_publishing_fault(self, message: str, exc: BaseException) -> None:
        """The broker's metadataPublishingFaultHandler (non-fatal): log and count the fault."""
        self.metadata_apply_error_count += 1
        self._log.error("metadata_publishing_fault", message=message, error=repr(exc))

    def publish(self, delta: MetadataDelta, new_image: MetadataImage) -> None:
        """Mirrors BrokerMetadataPublisher#publish (Kafka 3.8's onMetadataUpdate).

        Each step that Kafka guards with the publishing fault handler is guarded here the same
        way (applying the topics delta, updating the group coordinator, reporting deleted
        partitions, each topic's configuration, the replica manager's last start step), and so
        is the whole; a fatal fault (starting the managers) still ends the broker.
        """
        offset = new_image.highest_offset
        delta_name = (f"initial MetadataDelta up to {offset}" if self.first_publish
                      else f"MetadataDelta up to {offset}")
        try:
            # 1. The metadata cache serves the new image from now on.
            self.metadata_cache.set_image(new_image)
            # 2. The first publish starts the managers.
            if self.first_publish:
                self._log.info("metadata_publish_initial", offset=offset)
                self.initialize_managers(new_image)
            # 3. Features: nothing on the broker depends on them beyond the image.
            # 4. Topics: the replica manager, then the group coordinator and deleted partitions.
            topics_delta = delta.topics_delta
            if topics_delta is not None:
                try:
                    self.last_local_changes = self.replica_manager.apply_delta(topics_delta, new_image)
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    self.handle_publishing_fault(f"Error applying topics delta in {delta_name}", exc)
                try:
                    self.update_coordinator(new_image, delta)
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    self.handle_publishing_fault(
                        f"Error updating group coordinator with local changes in {delta_name}", exc)
                try:
                    deleted: list[TopicPartition] = []
                    for topic_id in sorted(topics_delta.deleted_topic_ids, key=str):
                        deleted.extend(topics_delta.image.get_topic(topic_id).topic_partitions())
                    if deleted:
                        self.broker.on_deleted_partitions(deleted)
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    self.handle_publishing_fault(
                        f"Error updating group coordinator with deleted partitions in {delta_name}", exc)
            # 5. Topic configuration changes reach the log manager (DynamicConfigPublisher#onMetadataUpdate).
            if delta.configs_delta is not None:
                for resource in delta.configs_delta.changes:
                    if resource.type is ConfigResourceType.TOPIC:
                        try:
                            props = new_image.configs.config_properties(resource)
                            self.broker.log_manager.update_topic_config(
                                resource.name, LogConfig.from_broker(self.broker.config, props))
                        except RUN_ENDING:
                            raise
                        except Exception as exc:
                            self.handle_publishing_fault(
                                f"Error updating topic {resource.name} with new configuration", exc)
            # 6. The first publish finishes the replica manager's start.
            if self.first_publish:
                try:
                    self.finish_initializing_replica_manager(new_image)
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    self.handle_publishing_fault("Error starting high watermark checkpoint thread during startup", exc)
        except RUN_ENDING:
            raise
        except FatalFaultError:
            raise
        except Exception as exc:
            self.handle_publishing_fault(f"Uncaught exception while publishing broker metadata from {delta_name}", exc)
        finally:
            self.first_publish = False

    def update_coordinator(self, new_image: MetadataImage, delta: MetadataDelta) -> None:
        """Mirrors kafka.server.metadata.BrokerMetadataPublisher#updateCoordinator for __consumer_offsets (seed 004 §2.2 step 1).

        1. The offsets topic was deleted: resign, at its leader epoch, every partition led here;
        2. its local changes: a replica deleted here resigns without an epoch, a partition
        elected here is an election, one followed here a resignation at the new leader epoch.
        From Kafka 3.8 (KAFKA-15468) only a partition whose leader epoch moved here
        (LocalReplicaChanges#electedLeaders) is an election: a leader seeing only an ISR or
        replica change keeps its loaded groups. Before 3.8 every local leader change was one.
        """
        topics_delta = delta.topics_delta
        if topics_delta is None:
            return
        # 1. The whole offsets topic was deleted: resign from the partitions we led.
        if topics_delta.topic_was_deleted(GROUP_METADATA_TOPIC_NAME):
            old = topics_delta.image.get_topic(GROUP_METADATA_TOPIC_NAME)
            for partition_id, registration in sorted(old.partitions.items()):
                if registration.leader == self.broker_id:
                    self.broker.on_offsets_partition_resignation(partition_id, registration.leader_epoch)
        # 2. Local changes of the offsets topic: deletes resign, leaders are elected, followers resign.
        topic_delta = get_topic_delta(GROUP_METADATA_TOPIC_NAME, new_image, delta)
        if topic_delta is None:
            return
        changes = topic_delta.local_changes(self.broker_id)
        for tp in sorted(changes.deletes, key=lambda t: t.partition):
            self.broker.on_offsets_partition_resignation(tp.partition, NO_EPOCH)
        # The coordinator epoch is the registration's leader epoch (as BrokerMetadataPublisher#updateCoordinator
        # takes it), whatever the local Partition made of the change (an offline one included).
        elected = changes.elected_leaders if self.broker.config.broker_version.is_at_least("3.8") else changes.leaders
        leaders = [_CoordinatorChange(tp, info.partition.leader_epoch) for tp, info in sorted(elected.items(), key=lambda kv: str(kv[0]))]
        followers = [_CoordinatorChange(tp, info.partition.leader_epoch) for tp, info in sorted(changes.followers.items(), key=lambda kv: str(kv[0]))]
        if leaders or followers:
            self.broker.on_leadership_change(leaders, followers)

    def initialize_managers(self, new_image: MetadataImage) -> None:
        """Mirrors BrokerMetadataPublisher#initializeManagers.

        KafkaBroker#run already started the log manager, the replica manager's ISR task and the
        fetchers (the ZooKeeper-era order); what KRaft defers to the first publish here is
        recorded, so the order of events matches the seed. 1. Kafka's LogManager#startup here
        passes ``isStray`` (LogManager#isStrayKraftReplica against the first image): the logs
        already loaded get that test now, and a replica of a topic deleted (or moved away)
        while this broker was down is set aside before the replica manager sees the image.
        """
        # 1. Stray replicas, as the log manager's start-up would find them (a failure is fatal).
        log_manager = self.broker.log_manager
        try:
            log_manager.set_aside_stray_logs(
                lambda log: log_manager.is_stray_kraft_replica(self.broker_id, new_image.topics, log))
        except RUN_ENDING:
            raise
        except Exception as exc:
            raise FatalFaultError("Error starting LogManager") from exc
        self._log.info("broker_managers_initialized", log_manager_started=log_manager.started)

    def finish_initializing_replica_manager(self, new_image: MetadataImage) -> None:
        """Mirrors BrokerMetadataPublisher#finishInitializingReplicaManager: start the HW checkpoint task."""
        self.replica_manager.start_high_watermark_check_point_thread()


class _CoordinatorChange:
    """A __consumer_offsets partition led or followed after a delta, with the leader epoch of its
    registration: what the leadership hooks read (``topic_partition``, ``get_leader_epoch()``)."""

    __slots__ = ("topic_partition", "leader_epoch")

    def __init__(self, topic_partition: Any, leader_epoch: int) -> None:
        self.topic_partition = topic_partition
        self.leader_epoch = leader_epoch

    def get_leader_epoch(self) -> int:
        return self.leader_epoch
