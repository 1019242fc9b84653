"""The classic group coordinator and the ``__consumer_offsets`` topic it owns.

Mirrors the package kafka.coordinator.group (Kafka 3.x, before KIP-848's new coordinator):

- ``GroupMetadata`` and its state machine table, ``MemberMetadata`` (group_metadata.py,
  member_metadata.py);
- ``GroupMetadataManager``: the group cache, ``__consumer_offsets`` reads (loading) and
  writes (group metadata and offset commits), ownership of offsets partitions
  (group_metadata_manager.py);
- ``GroupCoordinator``: JoinGroup / SyncGroup / Heartbeat / LeaveGroup (group_coordinator.py),
  OffsetCommit / OffsetFetch / OffsetDelete (group_offsets.py), rebalances and failure
  detection through delayed operations (rebalance.py, delayed_join.py, delayed_heartbeat.py);
- the binary key and value formats of ``__consumer_offsets`` (schemas.py);
- the KafkaApis handlers of the group APIs and FindCoordinator, and the broker wiring
  (group_apis.py);

Seed 000's coordinator failover as a runnable scenario lives with the other demos
(kafka_ref/demos/coordinator_failover.py, ``kafka-ref demo coordinator-failover``).
"""

from kafka_ref.coordinator.group.group_coordinator import GroupConfig, GroupCoordinator, JoinGroupResult, SyncGroupResult
from kafka_ref.coordinator.group.group_metadata import (
    CommitRecordMetadataAndOffset,
    GroupMetadata,
    GroupState,
    IllegalStateException,
    OffsetAndMetadata,
)
from kafka_ref.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, GroupMetadataManager, OffsetConfig
from kafka_ref.coordinator.group.member_metadata import MemberMetadata

__all__ = [
    "CommitRecordMetadataAndOffset",
    "GROUP_METADATA_TOPIC_NAME",
    "GroupConfig",
    "GroupCoordinator",
    "GroupMetadata",
    "GroupMetadataManager",
    "GroupState",
    "IllegalStateException",
    "JoinGroupResult",
    "MemberMetadata",
    "OffsetAndMetadata",
    "OffsetConfig",
    "SyncGroupResult",
]
