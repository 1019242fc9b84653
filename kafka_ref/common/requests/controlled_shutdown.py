"""ControlledShutdown: a broker asks the controller to move leadership away before it stops.

Mirrors org.apache.kafka.common.requests.ControlledShutdownRequest /
ControlledShutdownResponse and the message schemas ControlledShutdownRequest.json /
ControlledShutdownResponse.json (version 3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True, kw_only=True)
class RemainingPartition:
    """Mirrors org.apache.kafka.common.message.ControlledShutdownResponseData.RemainingPartition.

    A partition the broker still leads, so it should retry before shutting down.
    """

    topic_name: str = ""
    partition_index: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlledShutdownResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ControlledShutdownResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CONTROLLED_SHUTDOWN
    API_NAME: ClassVar[str] = ApiKeys.CONTROLLED_SHUTDOWN.api_name

    error_code: int = 0
    remaining_partitions: tuple[RemainingPartition, ...] = ()

    @classmethod
    def prepare_response(cls, error_code: int, partitions: Iterable[TopicPartition]) -> ControlledShutdownResponse:
        """Mirrors org.apache.kafka.common.requests.ControlledShutdownResponse#prepareResponse."""
        return cls(
            error_code=error_code,
            remaining_partitions=tuple(
                RemainingPartition(topic_name=tp.topic, partition_index=tp.partition) for tp in partitions
            ),
        )

    def remaining_topic_partitions(self) -> set[TopicPartition]:
        """The partitions still led by the broker, as TopicPartitions."""
        return {TopicPartition(p.topic_name, p.partition_index) for p in self.remaining_partitions}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ControlledShutdownResponse#errorCounts."""
        return {self.error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlledShutdownRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ControlledShutdownRequest.

    The broker shutting down names itself and its broker epoch (-1 when unknown).
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.CONTROLLED_SHUTDOWN
    API_NAME: ClassVar[str] = ApiKeys.CONTROLLED_SHUTDOWN.api_name
    RESPONSE_TYPE: ClassVar[type[ControlledShutdownResponse]] = ControlledShutdownResponse

    broker_id: int = 0
    broker_epoch: int = -1

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> ControlledShutdownResponse:
        """Mirrors org.apache.kafka.common.requests.ControlledShutdownRequest#getErrorResponse.

        Only the error; no remaining partitions and no throttle time.
        """
        return ControlledShutdownResponse(error_code=error_code)


ControlledShutdownResponse.REQUEST_TYPE = ControlledShutdownRequest
