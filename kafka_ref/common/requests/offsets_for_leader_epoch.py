"""OffsetForLeaderEpoch: where did a leader epoch end on the leader? (KIP-101)

Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest /
OffsetsForLeaderEpochResponse and the message schemas OffsetForLeaderEpochRequest.json /
OffsetForLeaderEpochResponse.json (version 4). A follower asks this before truncating so it
keeps every record the leader also has; consumers use it to detect log truncation.
Kafka's Java wrapper classes spell the name with "Offsets"; both spellings are exported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EpochEndOffset:
    """Mirrors org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.EpochEndOffset.

    The leader's answer for one partition: the largest epoch it has that is not greater than
    the one asked about, and the offset where that epoch ends (-1 / -1 when it has none).
    """

    error_code: int = 0
    partition: int = 0
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetForLeaderTopicResult:
    """Mirrors org.apache.kafka.common.message.OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult."""

    topic: str = ""
    partitions: tuple[EpochEndOffset, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetForLeaderEpochResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_FOR_LEADER_EPOCH
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_FOR_LEADER_EPOCH.api_name

    throttle_time_ms: int = 0
    topics: tuple[OffsetForLeaderTopicResult, ...] = ()

    def epoch_end_offsets(self) -> dict[TopicPartition, EpochEndOffset]:
        """Every partition's answer keyed by TopicPartition, in response order."""
        return {TopicPartition(t.topic, p.partition): p for t in self.topics for p in t.partitions}

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition, keyed by TopicPartition."""
        return {tp: p.error_code for tp, p in self.epoch_end_offsets().items()}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochResponse#errorCounts."""
        return error_counts_of(p.error_code for t in self.topics for p in t.partitions)


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetForLeaderPartition:
    """Mirrors org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition.

    ``leader_epoch`` is the epoch to look up; ``current_leader_epoch`` fences a requester
    whose view of the leader is stale (-1: no fencing).
    """

    partition: int = 0
    current_leader_epoch: int = -1
    leader_epoch: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetForLeaderTopic:
    """Mirrors org.apache.kafka.common.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic."""

    topic: str = ""
    partitions: tuple[OffsetForLeaderPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetForLeaderEpochRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest.

    ``replica_id`` is the follower's broker id, -1 for a consumer, or -2 (the default) for a
    debugging client allowed to see past the high watermark.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.OFFSET_FOR_LEADER_EPOCH
    API_NAME: ClassVar[str] = ApiKeys.OFFSET_FOR_LEADER_EPOCH.api_name
    RESPONSE_TYPE: ClassVar[type[OffsetForLeaderEpochResponse]] = OffsetForLeaderEpochResponse

    CONSUMER_REPLICA_ID: ClassVar[int] = -1
    DEBUGGING_REPLICA_ID: ClassVar[int] = -2

    replica_id: int = -2
    topics: tuple[OffsetForLeaderTopic, ...] = ()

    @classmethod
    def for_follower(
        cls, replica_id: int, epochs_by_partition: Mapping[TopicPartition, OffsetForLeaderPartition]
    ) -> OffsetForLeaderEpochRequest:
        """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest.Builder#forFollower.

        Groups the per-partition lookups by topic (first-seen topic order).
        """
        return cls(replica_id=replica_id, topics=_group(epochs_by_partition))

    @classmethod
    def for_consumer(
        cls, epochs_by_partition: Mapping[TopicPartition, OffsetForLeaderPartition]
    ) -> OffsetForLeaderEpochRequest:
        """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest.Builder#forConsumer."""
        return cls(replica_id=cls.CONSUMER_REPLICA_ID, topics=_group(epochs_by_partition))

    def epochs_by_partition(self) -> dict[TopicPartition, OffsetForLeaderPartition]:
        """Every lookup keyed by TopicPartition, in request order."""
        return {TopicPartition(t.topic, p.partition): p for t in self.topics for p in t.partitions}

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> OffsetForLeaderEpochResponse:
        """Mirrors org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest#getErrorResponse.

        Every partition gets the error with an undefined epoch and end offset.
        """
        # 1. One error answer per requested partition, topic by topic.
        topics = tuple(
            OffsetForLeaderTopicResult(
                topic=topic.topic,
                partitions=tuple(
                    EpochEndOffset(
                        error_code=error_code,
                        partition=p.partition,
                        leader_epoch=UNDEFINED_EPOCH,
                        end_offset=UNDEFINED_EPOCH_OFFSET,
                    )
                    for p in topic.partitions
                ),
            )
            for topic in self.topics
        )
        return OffsetForLeaderEpochResponse(throttle_time_ms=throttle_time_ms, topics=topics)


OffsetForLeaderEpochResponse.REQUEST_TYPE = OffsetForLeaderEpochRequest

# Kafka's Java wrappers are named with "Offsets".
OffsetsForLeaderEpochRequest = OffsetForLeaderEpochRequest
OffsetsForLeaderEpochResponse = OffsetForLeaderEpochResponse


def _group(epochs_by_partition: Mapping[TopicPartition, OffsetForLeaderPartition]) -> tuple[OffsetForLeaderTopic, ...]:
    """Group per-partition lookups by topic, the partition index taken from the key."""
    grouped: dict[str, list[OffsetForLeaderPartition]] = {}
    for tp, partition in epochs_by_partition.items():
        if partition.partition != tp.partition:
            partition = OffsetForLeaderPartition(
                partition=tp.partition,
                current_leader_epoch=partition.current_leader_epoch,
                leader_epoch=partition.leader_epoch,
            )
        grouped.setdefault(tp.topic, []).append(partition)
    return tuple(OffsetForLeaderTopic(topic=name, partitions=tuple(parts)) for name, parts in grouped.items())
