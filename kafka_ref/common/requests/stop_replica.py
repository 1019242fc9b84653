"""StopReplica: the controller tells a broker to stop (and maybe delete) replicas.

Mirrors org.apache.kafka.common.requests.StopReplicaRequest / StopReplicaResponse and the
message schemas StopReplicaRequest.json (version 4) / StopReplicaResponse.json (version 4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import (
    REQUEST_HEADER_FIELD,
    AbstractControlRequest,
    AbstractResponse,
    error_counts_of,
    update_error_counts,
)
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class StopReplicaPartitionState:
    """Mirrors org.apache.kafka.common.message.StopReplicaRequestData.StopReplicaPartitionState.

    One partition to stop. ``leader_epoch`` fences stale requests (KIP-570): -1 means "no
    epoch given", -2 (EpochDuringDelete) marks a replica being deleted with its topic.
    ``delete_partition`` also deletes the local log.
    """

    partition_index: int = 0
    leader_epoch: int = -1
    delete_partition: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class StopReplicaTopicState:
    """Mirrors org.apache.kafka.common.message.StopReplicaRequestData.StopReplicaTopicState."""

    topic_name: str = ""
    partition_states: tuple[StopReplicaPartitionState, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StopReplicaPartitionError:
    """Mirrors org.apache.kafka.common.message.StopReplicaResponseData.StopReplicaPartitionError."""

    topic_name: str = ""
    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class StopReplicaResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.StopReplicaResponse.

    A top-level error applies to every partition; otherwise each partition has its own code.
    The dict view of the per-partition codes is ``partition_error_map()`` because Kafka's
    field already owns the name ``partition_errors``.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.STOP_REPLICA
    API_NAME: ClassVar[str] = ApiKeys.STOP_REPLICA.api_name

    error_code: int = 0
    partition_errors: tuple[StopReplicaPartitionError, ...] = ()

    def partition_error_map(self) -> dict[TopicPartition, int]:
        """The error code of each partition, keyed by TopicPartition."""
        return {TopicPartition(p.topic_name, p.partition_index): p.error_code for p in self.partition_errors}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.StopReplicaResponse#errorCounts.

        A top-level error counts once for itself and once per partition; otherwise each
        partition's code is counted and the top-level code once more.
        """
        # 1. A top-level error stands for every partition.
        if self.error_code != 0:
            return {self.error_code: len(self.partition_errors) + 1}
        # 2. Otherwise count each partition, then the top-level code.
        counts = error_counts_of(p.error_code for p in self.partition_errors)
        update_error_counts(counts, self.error_code)
        return counts


@dataclass(frozen=True, slots=True, kw_only=True)
class StopReplicaRequest(AbstractControlRequest):
    """Mirrors org.apache.kafka.common.requests.StopReplicaRequest.

    Sent by the controller when a broker should stop serving replicas: after a reassignment
    moved them away, when a topic is deleted, or during controlled shutdown (stop following
    without deleting). Partitions are grouped by topic.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.STOP_REPLICA
    API_NAME: ClassVar[str] = ApiKeys.STOP_REPLICA.api_name
    RESPONSE_TYPE: ClassVar[type[StopReplicaResponse]] = StopReplicaResponse

    controller_id: int = 0
    is_kraft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    topic_states: tuple[StopReplicaTopicState, ...] = ()
    # The version the controller sent it at (its IBP picks it; 4 from IBP 3.4). Versions 0-2
    # carry one delete flag for the whole request and no leader epochs: the sender then sends
    # the partitions to delete and the others in separate requests, each partition state with
    # the request's flag and leader epoch -1, which is how Kafka's partitionStates() reads them.
    version: int = dataclasses.field(default=4, metadata=REQUEST_HEADER_FIELD)

    def partition_states(self) -> dict[TopicPartition, StopReplicaPartitionState]:
        """Mirrors org.apache.kafka.common.requests.StopReplicaRequest#partitionStates.

        Every partition state keyed by its TopicPartition, in request order.
        """
        return {
            TopicPartition(topic.topic_name, state.partition_index): state
            for topic in self.topic_states
            for state in topic.partition_states
        }

    def topic_partitions(self) -> Iterator[TopicPartition]:
        """Every TopicPartition named in the request, in request order."""
        for topic in self.topic_states:
            for state in topic.partition_states:
                yield TopicPartition(topic.topic_name, state.partition_index)

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> StopReplicaResponse:
        """Mirrors org.apache.kafka.common.requests.StopReplicaRequest#getErrorResponse.

        The same error at the top level and for every partition. (No throttle time in this
        response.)
        """
        # 1. One partition error per partition state, topic name included.
        partition_errors = tuple(
            StopReplicaPartitionError(
                topic_name=topic.topic_name,
                partition_index=state.partition_index,
                error_code=error_code,
            )
            for topic in self.topic_states
            for state in topic.partition_states
        )
        # 2. The top-level error is the same code.
        return StopReplicaResponse(error_code=error_code, partition_errors=partition_errors)


StopReplicaResponse.REQUEST_TYPE = StopReplicaRequest
