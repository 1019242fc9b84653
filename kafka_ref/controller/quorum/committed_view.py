"""The partitions as the KRaft controller has committed them: what ``Cluster.partition_state`` shows.

Kafka's QuorumController answers its read events from its timeline data structures as of the last
committed offset (SnapshotRegistry at ``lastCommittedOffset``), never from writes still waiting
for the quorum. kafka_ref's managers keep only the latest state, so the controller records here,
after each write's replay, the state of every partition the write touched, and makes it visible
once the write's last offset is committed. With ``controller.quorum.append.linger.ms`` a write
is in the log 25 ms after it was made; a test that waits for ``leader_for`` to change then sees
what the brokers are being told at that moment, as in ZooKeeper mode, where the view reads the
znodes the controller wrote before telling the brokers.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable

from kafka_ref.common.uuid import Uuid
from kafka_ref.image.records import PartitionChangeRecord, PartitionRecord, RemoveTopicRecord, TopicRecord

# One change to the view: ("topic", name, topic id), ("partition", (topic id, partition), state or
# None), ("remove", topic id, None).
Update = tuple[str, Any, Any]


def partition_state_of(registration: Any) -> dict[str, Any]:
    """A PartitionRegistration as ``Cluster.partition_state`` shows it in KRaft mode."""
    return {"leader": registration.leader, "leader_epoch": registration.leader_epoch, "isr": list(registration.isr),
            "controller_epoch": -1, "partition_epoch": registration.partition_epoch,
            "replicas": list(registration.replicas), "leader_recovery_state": int(registration.leader_recovery_state),
            "adding_replicas": list(registration.adding_replicas),
            "removing_replicas": list(registration.removing_replicas)}


class CommittedPartitionView:
    """Topic names and partition states as of the last committed offset, plus the writes still waiting."""

    def __init__(self) -> None:
        self.topic_ids: dict[str, Uuid] = {}
        self.partitions: dict[tuple[Uuid, int], dict[str, Any]] = {}
        self._pending: deque[tuple[int, list[Update]]] = deque()

    @staticmethod
    def capture(replication_control: Any, records: Iterable[Any]) -> list[Update]:
        """What a write (already replayed) changed: each topic it named, each partition's state after it."""
        updates: list[Update] = []
        for record in records:
            if isinstance(record, TopicRecord):
                updates.append(("topic", record.name, record.topic_id))
            elif isinstance(record, (PartitionRecord, PartitionChangeRecord)):
                registration = replication_control.get_partition(record.topic_id, record.partition_id)
                state = partition_state_of(registration) if registration is not None else None
                updates.append(("partition", (record.topic_id, record.partition_id), state))
            elif isinstance(record, RemoveTopicRecord):
                updates.append(("remove", record.topic_id, None))
        return updates

    def stage(self, last_offset: int, updates: list[Update]) -> None:
        """An active controller's write: visible once ``last_offset`` is committed."""
        if updates:
            self._pending.append((last_offset, updates))

    def commit_up_to(self, committed_offset: int) -> None:
        """The quorum committed through ``committed_offset``: the writes up to it become visible, in order."""
        pending = self._pending
        while pending and pending[0][0] <= committed_offset:
            self.apply(pending.popleft()[1])

    def discard_pending(self) -> None:
        """The controller renounced: writes never committed are gone with its in-memory state."""
        self._pending.clear()

    def apply(self, updates: list[Update]) -> None:
        for kind, key, value in updates:
            if kind == "topic":
                self.topic_ids[key] = value
            elif kind == "partition":
                if value is None:
                    self.partitions.pop(key, None)
                else:
                    self.partitions[key] = value
            else:
                for name in [n for n, topic_id in self.topic_ids.items() if topic_id == key]:
                    del self.topic_ids[name]
                for partition_key in [k for k in self.partitions if k[0] == key]:
                    del self.partitions[partition_key]

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The committed state of one partition (a copy), or None when it does not exist."""
        topic_id = self.topic_ids.get(topic)
        state = self.partitions.get((topic_id, partition)) if topic_id is not None else None
        return {k: list(v) if isinstance(v, list) else v for k, v in state.items()} if state is not None else None
