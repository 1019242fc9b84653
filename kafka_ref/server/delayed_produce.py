"""An acks=all produce waiting for the HW to reach its records.

Mirrors kafka.server.DelayedProduce (and kafka.server.ProducePartitionStatus).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kafka_ref.common.errors import Errors
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.server.delayed_operation import DelayedOperation


@dataclass(slots=True)
class PartitionResponse:
    """Mirrors org.apache.kafka.common.requests.ProduceResponse.PartitionResponse."""

    error: Errors
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    error_message: str | None = None


def produce_response_status(error: Errors, message: str | None = None) -> PartitionResponse:
    return PartitionResponse(error, error_message=message)


@dataclass(slots=True)
class ProducePartitionStatus:
    """Mirrors kafka.server.ProducePartitionStatus: the offset acks=all waits for, and the answer."""

    required_offset: int
    response_status: PartitionResponse
    acks_pending: bool = False

    @classmethod
    def from_result(cls, result: Any) -> "ProducePartitionStatus":
        info = result.info
        if info is None:
            return cls(-1, PartitionResponse(result.error, error_message=result.error_message))
        return cls(
            info.last_offset + 1,
            PartitionResponse(Errors.NONE, info.first_offset, info.log_append_time, info.log_start_offset),
        )


class DelayedProduce(DelayedOperation):
    """Mirrors kafka.server.DelayedProduce.

    Completes when every partition without an error either reached its required offset
    (HW ≥ last offset + 1) or failed; on timeout the still-pending partitions answer
    REQUEST_TIMED_OUT.
    """

    def __init__(
        self,
        delay_ms: int,
        produce_status: dict[TopicPartition, ProducePartitionStatus],
        replica_manager: Any,
        response_callback: Callable[[dict[TopicPartition, PartitionResponse]], None],
    ) -> None:
        super().__init__(delay_ms)
        self.produce_status = produce_status
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        self._resolved: dict[TopicPartition, Any] = {}
        # 1. Partitions appended without error wait for acks; pre-set their error to a timeout.
        for status in produce_status.values():
            if status.response_status.error is Errors.NONE:
                status.acks_pending = True
                status.response_status.error = Errors.REQUEST_TIMED_OUT
            else:
                status.acks_pending = False

    def try_complete(self) -> bool:
        """Mirrors kafka.server.DelayedProduce#tryComplete."""
        replica_manager = self.replica_manager
        hosted = replica_manager.all_partitions
        resolved = self._resolved
        pending = 0
        for tp, status in self.produce_status.items():
            if not status.acks_pending:
                continue
            # 2. Ask the partition whether the HW reached the required offset. The Partition
            #    object is resolved once per operation and reused while the broker still hosts
            #    that same object: this walk runs on every HW move of any of the request's
            #    partitions, so each step must be a few attribute reads.
            partition = resolved.get(tp)
            if partition is None or hosted.get(tp) is not partition:
                result = replica_manager.get_partition_or_error(tp)
                if isinstance(result, Errors):
                    partition = None
                    has_enough, error = False, result
                else:
                    resolved[tp] = partition = result
            if partition is not None:
                has_enough, error = partition.check_enough_replicas_reach_offset(status.required_offset)
            # 3. An error or enough acks settles this partition.
            if error is not Errors.NONE:
                status.acks_pending = False
                status.response_status.error = error
            elif has_enough:
                status.acks_pending = False
                status.response_status.error = Errors.NONE
            else:
                pending += 1
        # 4. Done when nothing is pending.
        if not pending:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.response_callback({tp: s.response_status for tp, s in self.produce_status.items()})
