"""kafka.server.epoch.OffsetsForLeaderEpochTest (Kafka 3.8): ReplicaManager#lastOffsetForLeaderEpoch.

Kafka's first case mocks a UnifiedLog whose endOffsetForEpoch(5) answers (42, 5); here the
partition has a real log holding 42 records written at leader epoch 5, which answers the same.
Kafka's request and answer are lists of topics; kafka_ref's take a partition -> (current leader
epoch, leader epoch) map and answer partition -> EpochEndOffset.
"""

from __future__ import annotations

from helpers_replica import make_broker, new_partition, seed_log_data
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.offsets_for_leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, EpochEndOffset
from kafka_ref.common.topic_partition import TopicPartition

TP = TopicPartition("topic", 1)
NO_PARTITION_LEADER_EPOCH = -1
EPOCH_REQUESTED = 5


def test_should_get_epochs_from_replica():
    """Mirrors OffsetsForLeaderEpochTest#shouldGetEpochsFromReplica."""
    broker = make_broker(0)
    partition = new_partition(broker, TP)
    partition.create_log_if_not_exists(False, False, {}, None)
    seed_log_data(partition.log, 42, EPOCH_REQUESTED)
    partition.leader_replica_id_opt = 0

    response = broker.replica_manager.last_offset_for_leader_epoch({TP: (NO_PARTITION_LEADER_EPOCH, EPOCH_REQUESTED)})

    assert response == {TP: EpochEndOffset(error_code=Errors.NONE.code, partition=TP.partition, leader_epoch=5, end_offset=42)}


def test_should_return_no_leader_for_partition_if_thrown():
    """Mirrors OffsetsForLeaderEpochTest#shouldReturnNoLeaderForPartitionIfThrown."""
    broker = make_broker(0)
    # Hosted here, but with no replica and no leader.
    new_partition(broker, TP)

    response = broker.replica_manager.last_offset_for_leader_epoch({TP: (NO_PARTITION_LEADER_EPOCH, EPOCH_REQUESTED)})

    assert response == {TP: EpochEndOffset(error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, partition=TP.partition,
                                           leader_epoch=UNDEFINED_EPOCH, end_offset=UNDEFINED_EPOCH_OFFSET)}


def test_should_return_unknown_topic_or_partition_if_thrown():
    """Mirrors OffsetsForLeaderEpochTest#shouldReturnUnknownTopicOrPartitionIfThrown."""
    broker = make_broker(0)

    response = broker.replica_manager.last_offset_for_leader_epoch({TP: (NO_PARTITION_LEADER_EPOCH, EPOCH_REQUESTED)})

    assert response == {TP: EpochEndOffset(error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, partition=TP.partition,
                                           leader_epoch=UNDEFINED_EPOCH, end_offset=UNDEFINED_EPOCH_OFFSET)}
