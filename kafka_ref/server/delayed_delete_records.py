"""A DeleteRecords request waiting for every live replica's log start offset to catch up.

Mirrors kafka.server.DelayedDeleteRecords and DeleteRecordsPartitionStatus (Kafka 3.7).
"""

from __future__ import annotations

from typing import Any, Callable

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.delete_records import DeleteRecordsPartitionResult, DeleteRecordsResponse
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.replica.partition import Partition
from kafka_ref.server.delayed_operation import DelayedOperation


class DeleteRecordsPartitionStatus:
    """Mirrors kafka.server.DeleteRecordsPartitionStatus: the offset to reach and the answer so far."""

    __slots__ = ("required_offset", "response_status", "acks_pending")

    def __init__(self, required_offset: int, response_status: DeleteRecordsPartitionResult) -> None:
        self.required_offset = required_offset
        self.response_status = response_status
        self.acks_pending = False

    def __repr__(self) -> str:
        return (f"[acksPending: {self.acks_pending}, error: {Errors.for_code(self.response_status.error_code).name}, "
                f"lowWatermark: {self.response_status.low_watermark}, requiredOffset: {self.required_offset}]")


class DelayedDeleteRecords(DelayedOperation):
    """Mirrors kafka.server.DelayedDeleteRecords."""

    def __init__(
        self,
        delay_ms: int,
        delete_records_status: dict[TopicPartition, DeleteRecordsPartitionStatus],
        replica_manager: Any,
        response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None],
    ) -> None:
        super().__init__(delay_ms)
        self.delete_records_status = delete_records_status
        self.replica_manager = replica_manager
        self.response_callback = response_callback
        # A partition that succeeded on the leader waits for its replicas, answering
        # REQUEST_TIMED_OUT until its low watermark arrives; one that failed is settled.
        for status in delete_records_status.values():
            if status.response_status.error_code == Errors.NONE.code:
                status.acks_pending = True
                status.response_status = _with(status.response_status, error_code=Errors.REQUEST_TIMED_OUT.code)
            else:
                status.acks_pending = False

    def try_complete(self) -> bool:
        """Mirrors kafka.server.DelayedDeleteRecords#tryComplete.

        Each pending partition is settled when its low watermark reached the required offset
        or when it can no longer be answered here (not the leader, offline, gone); the request
        completes once none is pending.
        """
        # 1. Check each partition still waiting.
        for tp, status in self.delete_records_status.items():
            if not status.acks_pending:
                continue
            hosted = self.replica_manager.get_partition(tp)
            if isinstance(hosted, Partition):
                if hosted.leader_log_if_local() is not None:
                    low_watermark = hosted.low_watermark_if_leader()
                    reached, error = low_watermark >= status.required_offset, Errors.NONE
                else:
                    reached, error, low_watermark = False, Errors.NOT_LEADER_OR_FOLLOWER, DeleteRecordsResponse.INVALID_LOW_WATERMARK
            elif hosted is not None:  # HostedPartition.Offline
                reached, error, low_watermark = False, Errors.KAFKA_STORAGE_ERROR, DeleteRecordsResponse.INVALID_LOW_WATERMARK
            else:
                reached, error, low_watermark = False, Errors.UNKNOWN_TOPIC_OR_PARTITION, DeleteRecordsResponse.INVALID_LOW_WATERMARK
            if error is not Errors.NONE or reached:
                status.acks_pending = False
                status.response_status = _with(status.response_status, error_code=error.code, low_watermark=low_watermark)
        # 2. Complete when nothing is pending.
        if not any(status.acks_pending for status in self.delete_records_status.values()):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        """Mirrors kafka.server.DelayedDeleteRecords#onComplete: answer every partition's status."""
        self.response_callback({tp: status.response_status for tp, status in self.delete_records_status.items()})


def _with(result: DeleteRecordsPartitionResult, **changes: Any) -> DeleteRecordsPartitionResult:
    """The response status with some fields replaced (Kafka mutates its message object in place)."""
    return DeleteRecordsPartitionResult(
        partition_index=result.partition_index,
        low_watermark=changes.get("low_watermark", result.low_watermark),
        error_code=changes.get("error_code", result.error_code),
    )
