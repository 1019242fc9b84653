"""DeleteRecords in ReplicaManager: delete on the local leaders, then wait for the replicas.

Mirrors kafka.server.ReplicaManager#deleteRecords, #deleteRecordsOnLocalLog and
#delayedDeleteRecordsRequired (Kafka 3.7). Methods of ReplicaManager (a mixin); the split only
keeps each module readable.
"""

from __future__ import annotations

from typing import Callable, Mapping

from kafka_ref.common.errors import (
    Errors,
    KafkaStorageException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    PolicyViolationException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.delete_records import DeleteRecordsPartitionResult
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.replica.partition_deletes import LogDeleteRecordsResult
from kafka_ref.server.delayed_delete_records import DeleteRecordsPartitionStatus, DelayedDeleteRecords
from kafka_ref.server.delayed_operation import TopicPartitionOperationKey

# Mirrors org.apache.kafka.common.internals.Topic#isInternal.
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

_EXPECTED_DELETE_ERRORS = (UnknownTopicOrPartitionException, NotLeaderOrFollowerException, OffsetOutOfRangeException,
                           PolicyViolationException, KafkaStorageException)


class DeleteRecordsPath:
    """DeleteRecords methods of kafka.server.ReplicaManager."""

    def delete_records_on_local_log(self, offset_per_partition: Mapping[TopicPartition, int]) -> dict[TopicPartition, LogDeleteRecordsResult]:
        """Mirrors kafka.server.ReplicaManager#deleteRecordsOnLocalLog: each partition on its local leader."""
        results: dict[TopicPartition, LogDeleteRecordsResult] = {}
        for tp, requested_offset in offset_per_partition.items():
            # 1. Internal topics are refused.
            if tp.topic in _INTERNAL_TOPICS:
                results[tp] = LogDeleteRecordsResult(-1, -1, Errors.INVALID_TOPIC_EXCEPTION.exception(
                    f"Cannot delete records of internal topic {tp.topic}"))
                continue
            # 2. Delete on the leader; the expected errors answer the partition, anything else too
            #    (logged: Kafka's `case t: Throwable`).
            try:
                partition = self.get_partition_or_exception(tp)
                results[tp] = partition.delete_records_on_leader(requested_offset)
            except _EXPECTED_DELETE_ERRORS as exc:
                results[tp] = LogDeleteRecordsResult(-1, -1, exc)
            except RUN_ENDING:
                raise
            except Exception as exc:
                self._log.error("delete_records_failed", topic_partition=str(tp), error=repr(exc))
                results[tp] = LogDeleteRecordsResult(-1, -1, exc)
        return results

    @staticmethod
    def delayed_delete_records_required(local_results: Mapping[TopicPartition, LogDeleteRecordsResult]) -> bool:
        """Mirrors kafka.server.ReplicaManager#delayedDeleteRecordsRequired: some partition succeeded
        on the leader but its low watermark is still below the offset asked for."""
        return any(r.exception is None and r.low_watermark < r.requested_offset for r in local_results.values())

    def delete_records(self, timeout_ms: int, offset_per_partition: Mapping[TopicPartition, int],
                       response_callback: Callable[[dict[TopicPartition, DeleteRecordsPartitionResult]], None]) -> None:
        """Mirrors kafka.server.ReplicaManager#deleteRecords.

        1. Delete on the local leaders; 2. build each partition's status; 3. answer now unless a
        partition's low watermark has to catch up, in which case wait in the DeleteRecords
        purgatory (keyed by partition) until it does or the timeout passes.
        """
        # 1. Local deletes.
        local_results = self.delete_records_on_local_log(offset_per_partition)
        # 2. Statuses (the error code of each partition's exception, NONE if it succeeded).
        statuses = {
            tp: DeleteRecordsPartitionStatus(result.requested_offset, DeleteRecordsPartitionResult(
                partition_index=tp.partition, low_watermark=result.low_watermark,
                error_code=Errors.NONE.code if result.exception is None else Errors.for_exception(result.exception).code))
            for tp, result in local_results.items()
        }
        # 3. Wait for the replicas, or answer now.
        if self.delayed_delete_records_required(local_results):
            op = DelayedDeleteRecords(timeout_ms, statuses, self, response_callback)
            keys = [TopicPartitionOperationKey.of(tp) for tp in offset_per_partition]
            self.delayed_delete_records_purgatory.try_complete_else_watch(op, keys)
        else:
            response_callback({tp: status.response_status for tp, status in statuses.items()})

    def complete_delayed_delete_records_requests(self, tp: TopicPartition) -> None:
        """The DeleteRecords part of DelayedOperations#checkAndCompleteAll for one partition."""
        purgatory = self.delayed_delete_records_purgatory
        if purgatory.num_delayed():
            purgatory.check_and_complete(TopicPartitionOperationKey.of(tp))
