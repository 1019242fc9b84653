"""Which replica a consumer should read from (KIP-392, fetch from the closest replica).

Mirrors org.apache.kafka.common.replica: ClientMetadata, ReplicaView, PartitionView,
ReplicaSelector and the two selectors Kafka ships, LeaderSelector and RackAwareReplicaSelector.
A broker uses one only when ``replica.selector.class`` names it; then the leader answers a
consumer's fetch with the replica the selector prefers, and the consumer fetches from there.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.node import Node
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(slots=True, unsafe_hash=True)  # made per fetch: never mutated, not frozen (docs/DESIGN.md)
class ClientMetadata:
    """Mirrors org.apache.kafka.common.replica.ClientMetadata.DefaultClientMetadata: who is fetching.

    Kafka builds it for every Fetch of version 11 or later (the version that carries ``rack_id``).
    """

    rack_id: str
    client_id: str
    client_address: str
    principal: str
    listener_name: str


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """Mirrors org.apache.kafka.common.replica.ReplicaView.DefaultReplicaView: one replica's endpoint and progress."""

    endpoint: Node
    log_end_offset: int
    time_since_last_caught_up_ms: int


@dataclass(frozen=True, slots=True)
class PartitionView:
    """Mirrors org.apache.kafka.common.replica.PartitionView.DefaultPartitionView: the candidates and the leader."""

    replicas: frozenset[ReplicaView]
    leader: ReplicaView


class ReplicaSelector:
    """Mirrors org.apache.kafka.common.replica.ReplicaSelector."""

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> ReplicaView | None:
        raise TypeError(f"{type(self).__name__} must override select()")


class LeaderSelector(ReplicaSelector):
    """Mirrors org.apache.kafka.common.replica.LeaderSelector: always the leader."""

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> ReplicaView | None:
        return partition_view.leader


class RackAwareReplicaSelector(ReplicaSelector):
    """Mirrors org.apache.kafka.common.replica.RackAwareReplicaSelector."""

    def select(self, topic_partition: TopicPartition, client_metadata: ClientMetadata,
               partition_view: PartitionView) -> ReplicaView | None:
        """Mirrors RackAwareReplicaSelector#select.

        1. A client without a rack reads from the leader; 2. so does one whose rack holds no
        candidate, or holds the leader; 3. otherwise the most caught-up replica of its rack:
        the highest log end offset, then the most recently caught up (ReplicaView#comparator;
        kafka_ref breaks a remaining tie by the lower broker id, Kafka's set order is arbitrary).
        """
        rack = client_metadata.rack_id
        # 1. No rack: the leader.
        if not rack:
            return partition_view.leader
        # 2. The candidates in the client's rack.
        same_rack = [r for r in partition_view.replicas if r.endpoint.rack == rack]
        if not same_rack or partition_view.leader in same_rack:
            return partition_view.leader
        # 3. The most caught up of them.
        return max(same_rack, key=lambda r: (r.log_end_offset, -r.time_since_last_caught_up_ms, -r.endpoint.id))


# The class names ``replica.selector.class`` accepts (Kafka loads any class on its class path; an
# unknown one fails its start-up, here the config's validation refuses it).
REPLICA_SELECTORS: dict[str, type[ReplicaSelector]] = {
    "org.apache.kafka.common.replica.RackAwareReplicaSelector": RackAwareReplicaSelector,
    "org.apache.kafka.common.replica.LeaderSelector": LeaderSelector,
}


def create_replica_selector(class_name: str | None) -> ReplicaSelector | None:
    """Mirrors ReplicaManager#createReplicaSelector: None when ``replica.selector.class`` is unset."""
    if not class_name:
        return None
    return REPLICA_SELECTORS[class_name]()
