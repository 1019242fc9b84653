"""AlterPartition: a partition leader asks the controller to change the ISR (formerly AlterIsr).

Mirrors org.apache.kafka.common.requests.AlterPartitionRequest / AlterPartitionResponse and
the message schemas AlterPartitionRequest.json / AlterPartitionResponse.json (version 3,
KIP-903 broker epochs in the new ISR). The topic name of versions 0-1 is kept beside the
topic id, and the request carries its version: versions 0-1 name a topic by its name, 2+ by its
id (an unknown id is UNKNOWN_TOPIC_ID), and the controller's answer to an ineligible replica
depends on it (OPERATION_NOT_ATTEMPTED before 2, INELIGIBLE_REPLICA from 2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import REQUEST_HEADER_FIELD, AbstractRequest, AbstractResponse, update_error_counts
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionResponsePartitionData:
    """Mirrors org.apache.kafka.common.message.AlterPartitionResponseData.PartitionData.

    The partition state the controller committed (or its error): leader, leader epoch, ISR,
    recovery state and the new partition epoch the leader must use next time.
    """

    partition_index: int = 0
    error_code: int = 0
    leader_id: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    leader_recovery_state: int = 0
    partition_epoch: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionResponseTopicData:
    """Mirrors org.apache.kafka.common.message.AlterPartitionResponseData.TopicData."""

    topic_name: str = ""
    topic_id: Uuid = ZERO_UUID
    partitions: tuple[AlterPartitionResponsePartitionData, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.AlterPartitionResponse.

    A top-level error (e.g. NOT_CONTROLLER, STALE_BROKER_EPOCH) or per-partition results.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_PARTITION
    API_NAME: ClassVar[str] = ApiKeys.ALTER_PARTITION.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    topics: tuple[AlterPartitionResponseTopicData, ...] = ()

    def partitions_by_topic_partition(
        self, topic_names: Mapping[Uuid, str] | None = None
    ) -> dict[TopicPartition, AlterPartitionResponsePartitionData]:
        """Every partition result keyed by TopicPartition. A topic sent only by id is named
        through ``topic_names``; one that cannot be named is left out."""
        results: dict[TopicPartition, AlterPartitionResponsePartitionData] = {}
        for topic in self.topics:
            name = _name_of(topic.topic_name, topic.topic_id, topic_names)
            if name is None:
                continue
            for partition in topic.partitions:
                results[TopicPartition(name, partition.partition_index)] = partition
        return results

    def partition_errors(self, topic_names: Mapping[Uuid, str] | None = None) -> dict[TopicPartition, int]:
        """The error code of every nameable partition, keyed by TopicPartition."""
        return {tp: p.error_code for tp, p in self.partitions_by_topic_partition(topic_names).items()}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.AlterPartitionResponse#errorCounts.

        The top-level code once, then each partition's code.
        """
        counts: dict[int, int] = {}
        update_error_counts(counts, self.error_code)
        for topic in self.topics:
            for partition in topic.partitions:
                update_error_counts(counts, partition.error_code)
        return counts


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerState:
    """Mirrors org.apache.kafka.common.message.AlterPartitionRequestData.BrokerState.

    One member of the proposed ISR with the broker epoch the leader saw it fetch with
    (-1 when the epoch check is not supported).
    """

    broker_id: int = 0
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionPartitionData:
    """Mirrors org.apache.kafka.common.message.AlterPartitionRequestData.PartitionData.

    The leader's proposal for one partition: its leader epoch, the new ISR, the recovery
    state, and the partition epoch it believes current (the controller rejects a stale one).
    """

    partition_index: int = 0
    leader_epoch: int = 0
    new_isr_with_epochs: tuple[BrokerState, ...] = ()
    leader_recovery_state: int = 0
    partition_epoch: int = 0

    def new_isr(self) -> tuple[int, ...]:
        """The broker ids of the proposed ISR (Kafka's deprecated NewIsr field)."""
        return tuple(state.broker_id for state in self.new_isr_with_epochs)


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionTopicData:
    """Mirrors org.apache.kafka.common.message.AlterPartitionRequestData.TopicData."""

    topic_name: str = ""
    topic_id: Uuid = ZERO_UUID
    partitions: tuple[AlterPartitionPartitionData, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterPartitionRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.AlterPartitionRequest.

    Sent by a partition leader (``broker_id`` at ``broker_epoch``) to the controller.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.ALTER_PARTITION
    API_NAME: ClassVar[str] = ApiKeys.ALTER_PARTITION.api_name
    RESPONSE_TYPE: ClassVar[type[AlterPartitionResponse]] = AlterPartitionResponse

    # Kafka 3.7-3.8 speak AlterPartition up to v3; v2 (KIP-841) named topics by id.
    LATEST_VERSION: ClassVar[int] = 3
    TOPIC_ID_VERSION: ClassVar[int] = 2

    broker_id: int = 0
    broker_epoch: int = -1
    topics: tuple[AlterPartitionTopicData, ...] = ()
    # The version the sender chose; None: what Kafka's builder would choose (``request_version``).
    version: int | None = dataclasses.field(default=None, metadata=REQUEST_HEADER_FIELD)

    def request_version(self) -> int:
        """Mirrors AlterPartitionRequest.Builder's choice: the latest version when every topic
        has an id (``canUseTopicIds``), else version 1 (topics by name); ``version`` when set."""
        if self.version is not None:
            return self.version
        return self.LATEST_VERSION if all(t.topic_id != ZERO_UUID for t in self.topics) else self.TOPIC_ID_VERSION - 1

    def uses_topic_ids(self) -> bool:
        """Versions 2+ name topics by id."""
        return self.request_version() >= self.TOPIC_ID_VERSION

    def partitions_by_topic_partition(
        self, topic_names: Mapping[Uuid, str] | None = None
    ) -> dict[TopicPartition, AlterPartitionPartitionData]:
        """Every proposal keyed by TopicPartition. A topic sent only by id is named through
        ``topic_names``; one that cannot be named is left out."""
        proposals: dict[TopicPartition, AlterPartitionPartitionData] = {}
        for topic in self.topics:
            name = _name_of(topic.topic_name, topic.topic_id, topic_names)
            if name is None:
                continue
            for partition in topic.partitions:
                proposals[TopicPartition(name, partition.partition_index)] = partition
        return proposals

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> AlterPartitionResponse:
        """Mirrors org.apache.kafka.common.requests.AlterPartitionRequest#getErrorResponse.

        As in Kafka, only the top-level error is set; no partition is listed (the sender
        treats a top-level error as the answer for every partition it proposed).
        """
        return AlterPartitionResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


AlterPartitionResponse.REQUEST_TYPE = AlterPartitionRequest


def _name_of(topic_name: str, topic_id: Uuid, topic_names: Mapping[Uuid, str] | None) -> str | None:
    """The topic's name: its own field, else the name ``topic_names`` has for its id."""
    if topic_name:
        return topic_name
    if topic_names is None:
        return None
    return topic_names.get(topic_id)
