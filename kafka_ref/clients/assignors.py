"""The classic consumer partition assignors: range and round robin.

Mirrors org.apache.kafka.clients.consumer.RangeAssignor and RoundRobinAssignor (no rack
awareness); the group leader runs one of them over every member's subscription.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_ref.clients.consumer_protocol import Subscription
from kafka_ref.common.topic_partition import TopicPartition


class RangeAssignor:
    """Mirrors org.apache.kafka.clients.consumer.RangeAssignor ("range").

    Per topic: the members subscribed to it, sorted by member id, get consecutive ranges of
    partitions; the first ``partitions % members`` members get one extra.
    """

    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, int],
               subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
        """Mirrors RangeAssignor#assign (without rack awareness)."""
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        # 1. Members per topic.
        consumers_per_topic: dict[str, list[str]] = {}
        for member_id, subscription in subscriptions.items():
            for topic in subscription.topics:
                consumers_per_topic.setdefault(topic, []).append(member_id)
        # 2. Ranges per topic.
        for topic, members in consumers_per_topic.items():
            n_partitions = partitions_per_topic.get(topic)
            if not n_partitions:
                continue
            members = sorted(members)
            per_consumer, extra = divmod(n_partitions, len(members))
            for i, member_id in enumerate(members):
                start = per_consumer * i + min(i, extra)
                length = per_consumer + (1 if i < extra else 0)
                assignment[member_id].extend(TopicPartition(topic, p) for p in range(start, start + length))
        return assignment


class RoundRobinAssignor:
    """Mirrors org.apache.kafka.clients.consumer.RoundRobinAssignor ("roundrobin").

    All partitions of all subscribed topics (topics sorted) are dealt one by one to the
    members (sorted by member id) in a circle, skipping members not subscribed to the topic.
    """

    name = "roundrobin"

    def assign(self, partitions_per_topic: Mapping[str, int],
               subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
        """Mirrors RoundRobinAssignor#assign."""
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        members = sorted(subscriptions)
        if not members:
            return assignment
        topics = sorted({t for s in subscriptions.values() for t in s.topics if partitions_per_topic.get(t)})
        cursor = 0
        for topic in topics:
            for p in range(partitions_per_topic[topic]):
                # Next member in the circle that subscribes to this topic.
                while topic not in subscriptions[members[cursor % len(members)]].topics:
                    cursor += 1
                assignment[members[cursor % len(members)]].append(TopicPartition(topic, p))
                cursor += 1
        return assignment


ASSIGNORS: dict[str, type] = {RangeAssignor.name: RangeAssignor, RoundRobinAssignor.name: RoundRobinAssignor}
