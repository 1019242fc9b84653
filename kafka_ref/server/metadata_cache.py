"""The broker's cache of cluster metadata, fed by UpdateMetadata (ZooKeeper mode).

Mirrors kafka.server.metadata.ZkMetadataCache (Kafka 3.x).
"""

from __future__ import annotations

from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState, UpdateMetadataRequest
from kafka_ref.common.errors import Errors
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.node import Node
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint

LEADER_DURING_DELETE = -2
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class MetadataCache:
    """Mirrors kafka.server.metadata.ZkMetadataCache."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.alive_brokers: dict[int, BrokerEndPoint] = {}
        self.alive_broker_racks: dict[int, str | None] = {}
        self.partition_states: dict[str, dict[int, UpdateMetadataPartitionState]] = {}
        self.topic_ids: dict[str, Uuid] = {}
        self.controller_id: int | None = None
        # The cluster id the broker got from ZooKeeper (/cluster/id), answered in Metadata v2+.
        self.cluster_id: str | None = None
        self._log = state_change_logger(broker_id=broker_id)

    def update_metadata(self, correlation_id: int, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#updateMetadata; returns deleted partitions.

        1. Replace the live brokers and controller; 2. record topic ids; 3. apply partition
        states, removing those whose leader is LeaderDuringDelete (-2).
        """
        # 1. Live brokers and controller.
        self.alive_brokers = {
            b.id: BrokerEndPoint(b.id, b.endpoints[0].host if b.endpoints else "localhost",
                                 b.endpoints[0].port if b.endpoints else 9092)
            for b in request.live_brokers
        }
        self.alive_broker_racks = {b.id: b.rack or None for b in request.live_brokers}
        self.controller_id = request.controller_id if request.controller_id >= 0 else None
        # 2. Topic ids.
        for name, topic_id in request.topic_ids().items():
            if topic_id != ZERO_UUID:
                self.topic_ids[name] = topic_id
        # 3. Partition states.
        deleted: list[TopicPartition] = []
        for state in request.partition_states():
            tp = state.topic_partition()
            if state.leader == LEADER_DURING_DELETE:
                topic_states = self.partition_states.get(tp.topic)
                if topic_states is not None:
                    topic_states.pop(tp.partition, None)
                    if not topic_states:
                        del self.partition_states[tp.topic]
                        self.topic_ids.pop(tp.topic, None)
                deleted.append(tp)
            else:
                self.partition_states.setdefault(tp.topic, {})[tp.partition] = state
        self._log.info("metadata_cache_updated", correlation_id=correlation_id, live_brokers=sorted(self.alive_brokers),
                       deleted=len(deleted))
        return deleted

    # -- queries ---------------------------------------------------------------------------

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self.alive_brokers

    def is_replica_isr_eligible(self, broker_id: int) -> bool:
        """ZooKeeper mode: eligible when alive (the controller refuses shutting-down brokers)."""
        return self.has_alive_broker(broker_id)

    def get_alive_broker_node(self, broker_id: int | None) -> BrokerEndPoint | None:
        return self.alive_brokers.get(broker_id) if broker_id is not None else None

    def get_alive_brokers(self) -> list[BrokerEndPoint]:
        return [self.alive_brokers[b] for b in sorted(self.alive_brokers)]

    def contains(self, tp: TopicPartition) -> bool:
        return tp.partition in self.partition_states.get(tp.topic, {})

    def get_partition_replica_endpoints(self, tp: TopicPartition) -> dict[int, Node]:
        """Mirrors ZkMetadataCache#getPartitionReplicaEndpoints: the partition's replicas on live
        brokers, as nodes with their racks (one listener here)."""
        state = self.get_partition_info(tp)
        if state is None:
            return {}
        out: dict[int, Node] = {}
        for replica_id in state.replicas:
            endpoint = self.alive_brokers.get(replica_id)
            if endpoint is not None:
                out[replica_id] = Node(replica_id, endpoint.host, endpoint.port, self.alive_broker_racks.get(replica_id))
        return out

    def contains_topic(self, topic: str) -> bool:
        return topic in self.partition_states

    def get_partition_info(self, tp: TopicPartition) -> UpdateMetadataPartitionState | None:
        return self.partition_states.get(tp.topic, {}).get(tp.partition)

    def get_all_topics(self) -> set[str]:
        return set(self.partition_states)

    def get_topic_id(self, topic: str) -> Uuid:
        return self.topic_ids.get(topic, ZERO_UUID)

    def get_topic_name(self, topic_id: Uuid) -> str | None:
        """Mirrors kafka.server.metadata.ZkMetadataCache#getTopicName (None when no topic has the id)."""
        return next((name for name, tid in self.topic_ids.items() if tid == topic_id), None)

    def get_topic_partitions(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in sorted(self.partition_states.get(topic, {}))]

    def get_partition_leader_endpoint(self, tp: TopicPartition) -> BrokerEndPoint | None:
        state = self.get_partition_info(tp)
        return self.alive_brokers.get(state.leader) if state is not None else None

    def get_topic_metadata(self, topics: list[str] | None, error_unavailable_endpoints: bool = False) -> MetadataResponse:
        """Mirrors kafka.server.metadata.ZkMetadataCache#getTopicMetadata and #getPartitionMetadata (+ the brokers list).

        1. An unknown topic gives UNKNOWN_TOPIC_OR_PARTITION; 2. per partition, the replicas and
        ISR are listed in full, or only those on alive brokers when ``error_unavailable_endpoints``
        (Metadata version 0); 3. a leader that is not alive is LEADER_NOT_AVAILABLE (leader -1),
        otherwise a replica or ISR member left out in step 2 gives REPLICA_NOT_AVAILABLE, so from
        version 1 a partition with a replica down answers NONE; the offline replicas are the
        controller's (UpdateMetadata).
        """
        names = sorted(self.partition_states) if topics is None else topics
        alive = self.alive_brokers
        out_topics = []
        for name in names:
            # 1. The topic.
            states = self.partition_states.get(name)
            if states is None:
                out_topics.append(MetadataResponseTopic(error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, name=name))
                continue
            partitions = []
            for index in sorted(states):
                s = states[index]
                # 2. Replicas and ISR, maybe limited to alive brokers.
                replicas, isr = tuple(s.replicas), tuple(s.isr)
                if error_unavailable_endpoints:
                    replicas = tuple(r for r in replicas if r in alive)
                    isr = tuple(r for r in isr if r in alive)
                # 3. The error.
                if s.leader not in alive:
                    error = Errors.LEADER_NOT_AVAILABLE
                elif len(replicas) < len(s.replicas) or len(isr) < len(s.isr):
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                partitions.append(MetadataResponsePartition(
                    error_code=error.code,
                    partition_index=index,
                    leader_id=s.leader if s.leader in alive else -1,
                    leader_epoch=s.leader_epoch,
                    replica_nodes=replicas,
                    isr_nodes=isr,
                    offline_replicas=tuple(s.offline_replicas),
                ))
            out_topics.append(MetadataResponseTopic(
                error_code=Errors.NONE.code, name=name, topic_id=self.get_topic_id(name),
                is_internal=name in INTERNAL_TOPICS, partitions=tuple(partitions),
            ))
        return MetadataResponse(
            brokers=tuple(MetadataResponseBroker(node_id=b.id, host=b.host, port=b.port, rack=self.alive_broker_racks.get(b.id))
                          for b in self.get_alive_brokers()),
            controller_id=self.controller_id if self.controller_id is not None else -1,
            cluster_id=self.cluster_id,
            topics=tuple(out_topics),
        )
