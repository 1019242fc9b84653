"""UpdateMetadata: the controller pushes cluster metadata into every broker's cache.

Mirrors org.apache.kafka.common.requests.UpdateMetadataRequest / UpdateMetadataResponse and
the message schemas UpdateMetadataRequest.json (version 8) / UpdateMetadataResponse.json.
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
    ControlRequestType,
)
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataPartitionState:
    """Mirrors org.apache.kafka.common.message.UpdateMetadataRequestData.UpdateMetadataPartitionState.

    What the metadata cache learns about one partition: leader, epochs, ISR, replicas and
    the replicas that are offline. ``topic_name`` is filled in by the flattened view
    (``UpdateMetadataRequest.partition_states()``). A leader of -2 (LeaderDuringDelete)
    marks a partition whose topic is being deleted.
    """

    topic_name: str = ""
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    zk_version: int = 0
    replicas: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()

    def topic_partition(self) -> TopicPartition:
        """The TopicPartition this state is for (needs ``topic_name`` to be set)."""
        return TopicPartition(self.topic_name, self.partition_index)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataTopicState:
    """Mirrors org.apache.kafka.common.message.UpdateMetadataRequestData.UpdateMetadataTopicState."""

    topic_name: str = ""
    topic_id: Uuid = ZERO_UUID
    partition_states: tuple[UpdateMetadataPartitionState, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataEndpoint:
    """Mirrors org.apache.kafka.common.message.UpdateMetadataRequestData.UpdateMetadataEndpoint.

    One listener of a live broker. ``security_protocol`` is Kafka's SecurityProtocol id
    (0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL).
    """

    port: int = 0
    host: str = ""
    listener: str = ""
    security_protocol: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataBroker:
    """Mirrors org.apache.kafka.common.message.UpdateMetadataRequestData.UpdateMetadataBroker.

    A live broker and its endpoints. ``rack`` is nullable; Kafka's default is "".
    """

    id: int = 0
    endpoints: tuple[UpdateMetadataEndpoint, ...] = ()
    rack: str | None = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.UpdateMetadataResponse.

    Only a top-level error code.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.UPDATE_METADATA
    API_NAME: ClassVar[str] = ApiKeys.UPDATE_METADATA.api_name

    error_code: int = 0

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.UpdateMetadataResponse#errorCounts."""
        return {self.error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateMetadataRequest(AbstractControlRequest):
    """Mirrors org.apache.kafka.common.requests.UpdateMetadataRequest.

    Sent by the controller to every live broker: the state of (some or all) partitions,
    grouped by topic, and the full list of live brokers with their endpoints.
    ``type`` is a ControlRequestType (set only by a migrating KRaft controller).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.UPDATE_METADATA
    API_NAME: ClassVar[str] = ApiKeys.UPDATE_METADATA.api_name
    RESPONSE_TYPE: ClassVar[type[UpdateMetadataResponse]] = UpdateMetadataResponse

    controller_id: int = 0
    is_kraft_controller: bool = False
    type: int = 0
    controller_epoch: int = 0
    broker_epoch: int = -1
    topic_states: tuple[UpdateMetadataTopicState, ...] = ()
    live_brokers: tuple[UpdateMetadataBroker, ...] = ()
    # The version the controller sent it at (its IBP picks it; 8 from IBP 3.4). Below 7 the
    # message has no topic ids: the sender leaves them ZERO_UUID, as the broker would read them.
    version: int = dataclasses.field(default=8, metadata=REQUEST_HEADER_FIELD)

    def partition_states(self) -> Iterator[UpdateMetadataPartitionState]:
        """Mirrors org.apache.kafka.common.requests.UpdateMetadataRequest#partitionStates.

        Every partition state in request order, each with ``topic_name`` set to its topic.
        """
        for topic_state in self.topic_states:
            name = topic_state.topic_name
            for state in topic_state.partition_states:
                yield state if state.topic_name == name else dataclasses.replace(state, topic_name=name)

    def topic_states_by_name(self) -> dict[str, UpdateMetadataTopicState]:
        """Each topic state keyed by topic name."""
        return {t.topic_name: t for t in self.topic_states}

    def topic_ids(self) -> dict[str, Uuid]:
        """Topic name to topic id for every topic in the request."""
        return {t.topic_name: t.topic_id for t in self.topic_states}

    def update_type(self) -> ControlRequestType:
        """Mirrors org.apache.kafka.common.requests.UpdateMetadataRequest#updateType."""
        return ControlRequestType(self.type)

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> UpdateMetadataResponse:
        """Mirrors org.apache.kafka.common.requests.UpdateMetadataRequest#getErrorResponse.

        The response has only a top-level error; throttle time is not part of it.
        """
        return UpdateMetadataResponse(error_code=error_code)


UpdateMetadataResponse.REQUEST_TYPE = UpdateMetadataRequest
