"""The broker's metadata cache in KRaft mode: a window onto the latest published MetadataImage.

Mirrors kafka.server.metadata.KRaftMetadataCache (Kafka 3.4). It offers the same queries as the
ZooKeeper-mode cache (kafka_ref/server/metadata_cache.py), so ReplicaManager, Partition and
KafkaApis use either unchanged. "Alive" means registered and not fenced; a broker in
controlled shutdown is alive but may not join an ISR.
"""

from __future__ import annotations

import random

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.node import Node
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.image.image import EMPTY_IMAGE, MetadataImage
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint
from kafka_ref.server.metadata_cache import BrokerMetadata

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
LISTENER = "PLAINTEXT"


class KRaftMetadataCache:
    """Mirrors kafka.server.metadata.KRaftMetadataCache."""

    def __init__(self, broker_id: int, rng: random.Random | None = None) -> None:
        self.broker_id = broker_id
        self._image: MetadataImage = EMPTY_IMAGE
        # KRaft brokers know the active controller from the Raft client (KRaftCachedControllerId).
        self.controller_id: int | None = None
        # The cluster id (meta.properties in Kafka), answered in Metadata v2+.
        self.cluster_id: str | None = None
        self.rng = rng or random.Random(broker_id)

    # -- the image ---------------------------------------------------------------------------

    def set_image(self, image: MetadataImage) -> None:
        """Mirrors KRaftMetadataCache#setImage: one reference swap, so readers see one image or the next."""
        self._image = image

    def current_image(self) -> MetadataImage:
        """Mirrors KRaftMetadataCache#currentImage."""
        return self._image

    # -- brokers -----------------------------------------------------------------------------

    @property
    def alive_brokers(self) -> dict[int, BrokerEndPoint]:
        """Unfenced brokers and their end points (the ZooKeeper cache's ``alive_brokers``)."""
        out = {}
        for broker_id in sorted(self._image.cluster.brokers):
            registration = self._image.cluster.brokers[broker_id]
            node = registration.node(LISTENER)
            if not registration.fenced and node is not None:
                out[broker_id] = node
        return out

    def has_alive_broker(self, broker_id: int) -> bool:
        """Mirrors KRaftMetadataCache#hasAliveBroker: registered and not fenced."""
        registration = self._image.cluster.broker(broker_id)
        return registration is not None and not registration.fenced

    def is_broker_fenced(self, broker_id: int) -> bool:
        """Mirrors KRaftMetadataCache#isBrokerFenced: a registered broker marked fenced (a broker
        with no registration is not fenced; it has no alive broker epoch either, which keeps it
        out of the ISR, see ``is_replica_isr_eligible``)."""
        registration = self._image.cluster.broker(broker_id)
        return registration is not None and registration.fenced

    def get_alive_broker_epoch(self, broker_id: int) -> int | None:
        """Mirrors KRaftMetadataCache#getAliveBrokerEpoch: the epoch of a registered, unfenced broker."""
        registration = self._image.cluster.broker(broker_id)
        return registration.epoch if registration is not None and not registration.fenced else None

    def is_broker_shutting_down(self, broker_id: int) -> bool:
        """Mirrors KRaftMetadataCache#isBrokerShuttingDown."""
        registration = self._image.cluster.broker(broker_id)
        return registration is not None and registration.in_controlled_shutdown

    def is_replica_isr_eligible(self, broker_id: int, stored_broker_epoch: int | None = -1) -> bool:
        """Mirrors Partition#isReplicaIsrEligible in KRaft mode (Kafka 3.5+, KIP-903): not fenced, not
        shutting down, and the broker epoch the follower last fetched with (``stored_broker_epoch``;
        None when it never fetched) is -1 or the one the metadata holds (isBrokerEpochIsrEligible)."""
        cached = self.get_alive_broker_epoch(broker_id)
        return (not self.is_broker_fenced(broker_id) and not self.is_broker_shutting_down(broker_id)
                and stored_broker_epoch is not None and cached is not None
                and (stored_broker_epoch == -1 or stored_broker_epoch == cached))

    def get_partition_replica_endpoints(self, tp: TopicPartition) -> dict[int, Node]:
        """Mirrors KRaftMetadataCache#getPartitionReplicaEndpoints: the partition's replicas on
        registered, unfenced brokers, as nodes with their racks."""
        state = self.get_partition_info(tp)
        if state is None:
            return {}
        out: dict[int, Node] = {}
        for replica_id in state.replicas:
            registration = self._image.cluster.broker(replica_id)
            endpoint = registration.node(LISTENER) if registration is not None and not registration.fenced else None
            if endpoint is not None:
                out[replica_id] = Node(replica_id, endpoint.host, endpoint.port, registration.rack)
        return out

    def get_alive_broker_node(self, broker_id: int | None, listener_name: str = LISTENER) -> BrokerEndPoint | None:
        """Mirrors KRaftMetadataCache#getAliveBrokerNode: the end point on ``listener_name`` of an unfenced broker."""
        if broker_id is None or not self.has_alive_broker(broker_id):
            return None
        return self._image.cluster.broker(broker_id).node(listener_name)

    def get_alive_brokers(self) -> list[BrokerMetadata]:
        """Mirrors KRaftMetadataCache#getAliveBrokers: the unfenced brokers' ids and racks, whatever their listeners."""
        return [BrokerMetadata(broker_id, registration.rack)
                for broker_id, registration in sorted(self._image.cluster.brokers.items()) if not registration.fenced]

    def get_alive_broker_nodes(self, listener_name: str = LISTENER) -> list[BrokerEndPoint]:
        """Mirrors KRaftMetadataCache#getAliveBrokerNodes: each unfenced broker's end point on the listener."""
        nodes = []
        for _, registration in sorted(self._image.cluster.brokers.items()):
            node = registration.node(listener_name) if not registration.fenced else None
            if node is not None:
                nodes.append(node)
        return nodes

    def get_random_alive_broker_id(self) -> int | None:
        """Mirrors KRaftMetadataCache#getRandomAliveBrokerId (seeded here): any unfenced broker."""
        alive = [b.id for b in self.get_alive_brokers()]
        return self.rng.choice(alive) if alive else None

    # -- topics ------------------------------------------------------------------------------

    @property
    def topic_ids(self) -> dict[str, Uuid]:
        """Topic name → id (the ZooKeeper cache's ``topic_ids``)."""
        return {name: t.id for name, t in self._image.topics.topics_by_name.items()}

    def contains(self, tp: TopicPartition) -> bool:
        """Mirrors KRaftMetadataCache#contains(TopicPartition)."""
        topic = self._image.topics.get_topic(tp.topic)
        return topic is not None and tp.partition in topic.partitions

    def contains_topic(self, topic: str) -> bool:
        """Mirrors KRaftMetadataCache#contains(String)."""
        return self._image.topics.get_topic(topic) is not None

    def get_partition_info(self, tp: TopicPartition) -> UpdateMetadataPartitionState | None:
        """Mirrors KRaftMetadataCache#getPartitionInfo (in the ZooKeeper cache's shape)."""
        topic = self._image.topics.get_topic(tp.topic)
        partition = topic.partitions.get(tp.partition) if topic is not None else None
        if partition is None:
            return None
        return UpdateMetadataPartitionState(
            topic_name=tp.topic, partition_index=tp.partition, controller_epoch=-1, leader=partition.leader,
            leader_epoch=partition.leader_epoch, isr=partition.isr, zk_version=partition.partition_epoch,
            replicas=partition.replicas,
        )

    def get_all_topics(self) -> set[str]:
        """Mirrors KRaftMetadataCache#getAllTopics."""
        return set(self._image.topics.topics_by_name)

    def get_topic_id(self, topic: str) -> Uuid:
        """Mirrors KRaftMetadataCache#getTopicId (ZERO_UUID when unknown)."""
        image = self._image.topics.get_topic(topic)
        return image.id if image is not None else ZERO_UUID

    def get_topic_name(self, topic_id: Uuid) -> str | None:
        """Mirrors KRaftMetadataCache#getTopicName."""
        image = self._image.topics.get_topic(topic_id)
        return image.name if image is not None else None

    def get_topic_partitions(self, topic: str) -> list[TopicPartition]:
        """Mirrors KRaftMetadataCache#getTopicPartitions."""
        image = self._image.topics.get_topic(topic)
        return image.topic_partitions() if image is not None else []

    def get_partition_leader_endpoint(self, tp: TopicPartition) -> BrokerEndPoint | None:
        """Mirrors KRaftMetadataCache#getPartitionLeaderEndpoint."""
        info = self.get_partition_info(tp)
        return self.get_alive_broker_node(info.leader) if info is not None else None

    def get_topic_metadata(self, topics: list[str] | None, error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False, listener_name: str = LISTENER) -> MetadataResponse:
        """Mirrors KRaftMetadataCache#getTopicMetadata and #getPartitionMetadata (+ the brokers and controller of the response).

        1. A topic the image does not hold is left out (KafkaApis answers for it); 2. per
        partition, the replicas and ISR in full, or only those on registered, unfenced brokers
        with ``listener_name`` when ``error_unavailable_endpoints`` (Metadata version 0,
        maybeFilterAliveReplicas); 3. offline: replicas not registered, fenced or without the
        listener (getOfflineReplicas); 4. a leader with no endpoint on the listener (not
        registered, or registered without it; fencing does not matter) has leader -1 and
        LEADER_NOT_AVAILABLE, or LISTENER_NOT_FOUND when it is registered and
        ``error_unavailable_listeners``; otherwise a replica or ISR member left out gives
        REPLICA_NOT_AVAILABLE, so from version 1 a partition with a replica down answers NONE.
        Clients never talk to a KRaft controller: the response names a random alive broker as
        "controller", which forwards controller requests.
        """
        image = self._image
        names = sorted(image.topics.topics_by_name) if topics is None else topics

        def has_alive_endpoint(broker_id: int) -> bool:
            broker = image.cluster.broker(broker_id)
            return broker is not None and not broker.fenced and broker.node(listener_name) is not None

        out_topics = []
        for name in names:
            # 1. The topic.
            topic = image.topics.get_topic(name)
            if topic is None:
                continue
            partitions = []
            for index in sorted(topic.partitions):
                p = topic.partitions[index]
                # 2. Replicas and ISR, maybe limited to alive endpoints.
                replicas, isr = tuple(p.replicas), tuple(p.isr)
                if error_unavailable_endpoints:
                    replicas = tuple(r for r in replicas if has_alive_endpoint(r))
                    isr = tuple(r for r in isr if has_alive_endpoint(r))
                # 3. Offline replicas.
                offline = tuple(r for r in p.replicas if not has_alive_endpoint(r))
                # 4. The leader and the error.
                leader_registration = image.cluster.broker(p.leader)
                maybe_leader = leader_registration.node(listener_name) if leader_registration is not None else None
                if maybe_leader is None:
                    if leader_registration is None or not error_unavailable_listeners:
                        error = Errors.LEADER_NOT_AVAILABLE
                    else:
                        error = Errors.LISTENER_NOT_FOUND
                elif len(replicas) < len(p.replicas) or len(isr) < len(p.isr):
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                partitions.append(MetadataResponsePartition(
                    error_code=error.code, partition_index=index,
                    leader_id=maybe_leader.id if maybe_leader is not None else -1,
                    leader_epoch=p.leader_epoch, replica_nodes=replicas, isr_nodes=isr,
                    offline_replicas=offline,
                ))
            out_topics.append(MetadataResponseTopic(
                error_code=Errors.NONE.code, name=name, topic_id=topic.id, is_internal=name in INTERNAL_TOPICS,
                partitions=tuple(partitions),
            ))
        controller = self.get_random_alive_broker_id()
        return MetadataResponse(
            brokers=tuple(MetadataResponseBroker(node_id=b.id, host=b.host, port=b.port, rack=self._image.cluster.broker(b.id).rack)
                          for b in self.get_alive_broker_nodes(listener_name)),
            controller_id=controller if controller is not None else -1,
            cluster_id=self.cluster_id,
            topics=tuple(out_topics),
        )
