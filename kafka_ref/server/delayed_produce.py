"""An acks=all produce waiting for the HW to reach its records.

Mirrors kafka.server.DelayedProduce (and kafka.server.ProducePartitionStatus).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from kafka_ref.common.errors import Errors
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.replica.hosted_partitions import HostedPartitions
from kafka_ref.replica.partition import Partition
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
            return cls(-1, PartitionResponse(result.error, log_start_offset=result.log_start_offset,
                                             error_message=result.error_message))
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
        # The Partition of each entry of produce_status (None: not online here), as resolved
        # at the hosted map's ``_partitions_version`` (see try_complete).
        self._partitions: list[Any] = []
        self._partitions_version = -1
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
        # (This walk runs on every HW move of any of the request's partitions, so each step must
        #  be a few attribute reads: the Partition objects are resolved once and again only when
        #  the broker's hosted partitions changed since (HostedPartitions#version). A replica
        #  manager without that map resolves every time; the map's version is read without getattr.)
        hosted = replica_manager.all_partitions
        version = hosted.version if hosted.__class__ is HostedPartitions else getattr(hosted, "version", None)
        if version is None or version != self._partitions_version:
            self._partitions = [p if p.__class__ is Partition else None
                                for p in map(hosted.get, self.produce_status)]
            self._partitions_version = -1 if version is None else version
        pending = 0
        # 1. Each partition still waiting for acks.
        for (tp, status), partition in zip(self.produce_status.items(), self._partitions):
            if not status.acks_pending:
                continue
            # 2. Ask the partition whether the HW reached the required offset (a partition not
            #    online here answers getPartitionOrError's error).
            if partition is None:
                result = replica_manager.get_partition_or_error(tp)
                if isinstance(result, Errors):
                    has_enough, error = False, result
                else:
                    has_enough, error = result.check_enough_replicas_reach_offset(status.required_offset)
            else:
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
        # (A loop, not a comprehension: one call fewer per completed produce.)
        statuses: dict[TopicPartition, PartitionResponse] = {}
        for tp, status in self.produce_status.items():
            statuses[tp] = status.response_status
        self.response_callback(statuses)
