"""The broker's cache of cluster metadata, fed by UpdateMetadata (ZooKeeper mode).

Mirrors kafka.server.metadata.ZkMetadataCache (Kafka 3.x).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.abstract import ControlRequestType
from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafka_ref.common.errors import Errors
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.node import Node
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.replica.fetcher.partition_fetch_state import BrokerEndPoint

LEADER_DURING_DELETE = -2
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
# LeaderAndIsr.duringDelete: the marker leader with both epochs at their initial value (0).
_INITIAL_LEADER_EPOCH = 0
_INITIAL_PARTITION_EPOCH = 0


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    """Mirrors org.apache.kafka.admin.BrokerMetadata: a live broker's id and rack."""

    id: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class MetadataSnapshot:
    """Mirrors kafka.server.metadata.MetadataSnapshot (the parts a full UpdateMetadata reads):
    topic -> partition -> state, and topic name -> id; ``topic_names`` is the reverse map."""

    partition_states: dict[str, dict[int, UpdateMetadataPartitionState]] = field(default_factory=dict)
    topic_ids: dict[str, Uuid] = field(default_factory=dict)

    @property
    def topic_names(self) -> dict[Uuid, str]:
        return {topic_id: name for name, topic_id in self.topic_ids.items()}


def create_deletion_entries(topic_name: str, topic_id: Uuid, partitions: Iterable[UpdateMetadataPartitionState],
                            request_controller_epoch: int) -> UpdateMetadataTopicState:
    """Mirrors kafka.server.metadata.ZkMetadataCache$#createDeletionEntries.

    1. One state per partition given, with the LeaderAndIsr.duringDelete marker (leader -2,
    leader epoch and znode version 0) over the partition's ISR; 2. the request's controller
    epoch; the replicas are kept and no offline replicas are listed.
    """
    states = []
    for partition in partitions:
        # 1. The deletion marker over the partition's ISR.
        # 2. Stamped with the request's controller epoch.
        states.append(UpdateMetadataPartitionState(
            topic_name=topic_name, partition_index=partition.partition_index, controller_epoch=request_controller_epoch,
            leader=LEADER_DURING_DELETE, leader_epoch=_INITIAL_LEADER_EPOCH, isr=tuple(partition.isr),
            zk_version=_INITIAL_PARTITION_EPOCH, replicas=tuple(partition.replicas),
        ))
    return UpdateMetadataTopicState(topic_name=topic_name, topic_id=topic_id, partition_states=tuple(states))


def transform_kraft_controller_full_metadata_request(
    current_metadata: MetadataSnapshot,
    request_controller_epoch: int,
    request_topic_states: tuple[UpdateMetadataTopicState, ...],
    handle_log_message: Callable[[str], None],
) -> tuple[UpdateMetadataTopicState, ...]:
    """Mirrors kafka.server.metadata.ZkMetadataCache$#transformKRaftControllerFullMetadataRequest.

    A full UpdateMetadata from a KRaft controller (ZooKeeper migration) lists every topic, so
    what it leaves out is gone. For each topic id the cache knows: 1. an id the request does
    not carry gets deletion entries for all the partitions cached under its name (a topic
    recreated under a new id is thus removed, then added again); 2. for an id the request
    carries, the partition indexes of the request that the cache does not hold get deletion
    entries (Kafka 3.8 takes them from the request's side, so they are deleted and then
    re-added by the request's own entries); 3. a name with no cached partition states is
    logged as an error; 4. with no deletion entries the request's topics are returned as they
    are, otherwise the deletion entries come first, then the request's topics.
    """
    new_by_id = {state.topic_id: state for state in request_topic_states}
    deletions: list[UpdateMetadataTopicState] = []
    for topic_id, name in current_metadata.topic_names.items():
        try:
            new_state = new_by_id.get(topic_id)
            current_states = current_metadata.partition_states.get(name)
            if current_states is None:
                # 3. Ids and partition states disagree.
                handle_log_message(f"Error: topic {name} appeared in currentMetadata.topicNames, "
                                   "but not in currentMetadata.partitionStates.")
            elif new_state is None:
                # 1. The topic (under this id) is not in the request: delete all of it.
                handle_log_message(f"Removing topic {name} with ID {topic_id} from the metadata cache since "
                                   "the full UMR did not include it.")
                deletions.append(create_deletion_entries(
                    name, topic_id, [current_states[i] for i in sorted(current_states)], request_controller_epoch))
            else:
                # 2. Request partitions the cache does not hold.
                index_to_state = {part.partition_index: part for part in new_state.partition_states}
                for index in current_states:
                    index_to_state.pop(index, None)
                if index_to_state:
                    handle_log_message(f"Removing {len(index_to_state)} partition(s) from topic {name} with "
                                       f"ID {topic_id} from the metadata cache since the full UMR did not include them.")
                    deletions.append(create_deletion_entries(name, topic_id, index_to_state.values(),
                                                             request_controller_epoch))
        except RUN_ENDING:
            raise
        except Exception as exc:
            handle_log_message(f"Error: {exc!r}")
    # 4. Deletions first.
    if not deletions:
        return tuple(request_topic_states)
    return tuple(deletions) + tuple(request_topic_states)


class MetadataCache:
    """Mirrors kafka.server.metadata.ZkMetadataCache."""

    def __init__(self, broker_id: int, zk_migration_enabled: bool = False) -> None:
        self.broker_id = broker_id
        self.zk_migration_enabled = zk_migration_enabled
        self.alive_brokers: dict[int, BrokerEndPoint] = {}
        self.alive_broker_racks: dict[int, str | None] = {}
        # Broker id -> listener name -> node (MetadataSnapshot#aliveNodes).
        self.alive_nodes: dict[int, dict[str, Node]] = {}
        self.partition_states: dict[str, dict[int, UpdateMetadataPartitionState]] = {}
        self.topic_ids: dict[str, Uuid] = {}
        self.controller_id: int | None = None
        # The cluster id the broker got from ZooKeeper (/cluster/id), answered in Metadata v2+.
        self.cluster_id: str | None = None
        self._log = state_change_logger(broker_id=broker_id)

    def update_metadata(self, correlation_id: int, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#updateMetadata; returns deleted partitions.

        1. A full request (type FULL) from a KRaft controller, at version 8 and with ZooKeeper
        migration enabled, first gets deletion entries for what it leaves out
        (``transform_kraft_controller_full_metadata_request``); otherwise such a request is
        logged as an error and applied as it is; 2. replace the live brokers (with their
        nodes per listener) and controller; 3. topic ids: the request's non-zero ids are
        recorded and a topic it sends with the zero id loses its id; 4. apply partition states,
        removing those whose leader is LeaderDuringDelete (-2); a partition deleted and then
        re-added by the same request is not reported as deleted.
        """
        # 1. A KRaft controller's full request.
        if request.is_kraft_controller and request.update_type() == ControlRequestType.FULL:
            if request.version < 8:
                self._log.error("full_update_metadata_below_version_8", version=request.version)
            elif not self.zk_migration_enabled:
                self._log.error("full_update_metadata_without_zk_migration")
            else:
                def log_message(message: str) -> None:
                    if message.startswith("Error"):
                        self._log.error("full_update_metadata_transform", message=message)
                    else:
                        self._log.info("full_update_metadata_transform", message=message)
                new_topic_states = transform_kraft_controller_full_metadata_request(
                    self.metadata_snapshot(), request.controller_epoch, request.topic_states, log_message)
                request = dataclasses.replace(request, topic_states=new_topic_states)
        # 2. Live brokers and controller.
        self.alive_brokers = {
            b.id: BrokerEndPoint(b.id, b.endpoints[0].host if b.endpoints else "localhost",
                                 b.endpoints[0].port if b.endpoints else 9092)
            for b in request.live_brokers
        }
        self.alive_broker_racks = {b.id: b.rack or None for b in request.live_brokers}
        self.alive_nodes = {b.id: {ep.listener: Node(b.id, ep.host, ep.port, b.rack) for ep in b.endpoints}
                            for b in request.live_brokers}
        self.controller_id = request.controller_id if request.controller_id >= 0 else None
        # 3. Topic ids: zero ids remove, the others are recorded.
        for name, topic_id in request.topic_ids().items():
            if topic_id == ZERO_UUID:
                self.topic_ids.pop(name, None)
        for name, topic_id in request.topic_ids().items():
            if topic_id != ZERO_UUID:
                self.topic_ids[name] = topic_id
        # 4. Partition states.
        deleted: dict[TopicPartition, None] = {}
        for state in request.partition_states():
            tp = state.topic_partition()
            if state.leader == LEADER_DURING_DELETE:
                topic_states = self.partition_states.get(tp.topic)
                if topic_states is not None:
                    topic_states.pop(tp.partition, None)
                    if not topic_states:
                        del self.partition_states[tp.topic]
                        self.topic_ids.pop(tp.topic, None)
                deleted[tp] = None
            else:
                self.partition_states.setdefault(tp.topic, {})[tp.partition] = state
                deleted.pop(tp, None)
        self._log.info("metadata_cache_updated", correlation_id=correlation_id, live_brokers=sorted(self.alive_brokers),
                       deleted=len(deleted))
        return list(deleted)

    def metadata_snapshot(self) -> MetadataSnapshot:
        """The cache's partition states and topic ids, copied (Kafka's MetadataSnapshot is immutable)."""
        return MetadataSnapshot({topic: dict(states) for topic, states in self.partition_states.items()},
                                dict(self.topic_ids))

    def topic_names_to_ids(self) -> dict[str, Uuid]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#topicNamesToIds."""
        return dict(self.topic_ids)

    def topic_ids_to_names(self) -> dict[Uuid, str]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#topicIdsToNames."""
        return {topic_id: name for name, topic_id in self.topic_ids.items()}

    # -- queries ---------------------------------------------------------------------------

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self.alive_brokers

    def is_replica_isr_eligible(self, broker_id: int) -> bool:
        """ZooKeeper mode: eligible when alive (the controller refuses shutting-down brokers)."""
        return self.has_alive_broker(broker_id)

    def get_alive_broker_node(self, broker_id: int | None) -> BrokerEndPoint | None:
        return self.alive_brokers.get(broker_id) if broker_id is not None else None

    def get_alive_brokers(self) -> list[BrokerMetadata]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#getAliveBrokers: the live brokers' ids and racks."""
        return [BrokerMetadata(b, self.alive_broker_racks.get(b)) for b in sorted(self.alive_brokers)]

    def get_alive_broker_nodes(self, listener_name: str = "PLAINTEXT") -> list[Node]:
        """Mirrors kafka.server.metadata.ZkMetadataCache#getAliveBrokerNodes: each live broker's node on the listener."""
        return [self.alive_nodes[b][listener_name] for b in sorted(self.alive_nodes) if listener_name in self.alive_nodes[b]]

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

    def get_topic_metadata(self, topics: list[str] | None, error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False, listener_name: str = "PLAINTEXT") -> MetadataResponse:
        """Mirrors kafka.server.metadata.ZkMetadataCache#getTopicMetadata and #getPartitionMetadata (+ the brokers list).

        1. A topic the cache does not hold is left out (KafkaApis answers for it); 2. per
        partition, the replicas and ISR are listed in full, or only those alive with an endpoint
        on ``listener_name`` when ``error_unavailable_endpoints`` (Metadata version 0,
        maybeFilterAliveReplicas); 3. a leader with no alive endpoint on the listener has leader
        -1 and LEADER_NOT_AVAILABLE, or LISTENER_NOT_FOUND when the leader is alive without that
        listener and ``error_unavailable_listeners`` (Metadata version 6+); otherwise a replica or
        ISR member left out in step 2 gives REPLICA_NOT_AVAILABLE, so from version 1 a partition
        with a replica down answers NONE; the offline replicas are the controller's (UpdateMetadata).
        """
        names = sorted(self.partition_states) if topics is None else topics

        def has_alive_endpoint(broker_id: int) -> bool:
            return listener_name in self.alive_nodes.get(broker_id, {})

        out_topics = []
        for name in names:
            # 1. The topic.
            states = self.partition_states.get(name)
            if states is None:
                continue
            partitions = []
            for index in sorted(states):
                s = states[index]
                # 2. Replicas and ISR, maybe limited to alive endpoints.
                replicas, isr = tuple(s.replicas), tuple(s.isr)
                if error_unavailable_endpoints:
                    replicas = tuple(r for r in replicas if has_alive_endpoint(r))
                    isr = tuple(r for r in isr if has_alive_endpoint(r))
                # 3. The leader and the error.
                maybe_leader = self.alive_nodes.get(s.leader, {}).get(listener_name)
                if maybe_leader is None:
                    if s.leader not in self.alive_brokers or not error_unavailable_listeners:
                        error = Errors.LEADER_NOT_AVAILABLE
                    else:
                        error = Errors.LISTENER_NOT_FOUND
                elif len(replicas) < len(s.replicas) or len(isr) < len(s.isr):
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                partitions.append(MetadataResponsePartition(
                    error_code=error.code,
                    partition_index=index,
                    leader_id=maybe_leader.id if maybe_leader is not None else -1,
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
            brokers=tuple(MetadataResponseBroker(node_id=n.id, host=n.host, port=n.port, rack=self.alive_broker_racks.get(n.id))
                          for n in self.get_alive_broker_nodes(listener_name)),
            controller_id=self.controller_id if self.controller_id is not None else -1,
            cluster_id=self.cluster_id,
            topics=tuple(out_topics),
        )
