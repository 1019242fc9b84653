"""The DeleteRecords side of a Partition: the low watermark and deleting records on the leader.

Mirrors kafka.cluster.Partition#lowWatermarkIfLeader and #deleteRecordsOnLeader (Kafka 3.7).
They are methods of Partition (a mixin); the split only keeps each module readable. The leader
moves its own log start offset at once; each follower moves its own when a fetch response
carries the leader's (ReplicaFetcherThread#processPartitionData), and the next fetch reports it
back, which is what raises the low watermark.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.errors import NotLeaderOrFollowerException, OffsetOutOfRangeException, PolicyViolationException
from kafka_ref.log.fetch_data import LogStartOffsetIncrementReason

# Mirrors DeleteRecordsRequest.HIGH_WATERMARK.
HIGH_WATERMARK = -1


@dataclass(frozen=True, slots=True)
class LogDeleteRecordsResult:
    """Mirrors kafka.server.LogDeleteRecordsResult: the offset asked for and the low watermark after."""

    requested_offset: int
    low_watermark: int
    exception: BaseException | None = None


class PartitionDeletes:
    """DeleteRecords methods of kafka.cluster.Partition."""

    def low_watermark_if_leader(self) -> int:
        """Mirrors kafka.cluster.Partition#lowWatermarkIfLeader.

        The smallest log start offset among the leader and its remote replicas on live brokers
        (a replica on a dead broker does not hold the watermark back). Only the leader knows it.
        """
        # 1. Only on the leader.
        if not self.is_leader:
            raise NotLeaderOrFollowerException(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
        # 2. Start from the leader's own log start offset; each live follower may lower it.
        low_watermark = self.local_log_or_exception.log_start_offset
        for replica in self.remote_replicas_map.values():
            log_start_offset = replica.state_snapshot.log_start_offset
            if log_start_offset < low_watermark and self.metadata_cache.has_alive_broker(replica.broker_id):
                low_watermark = log_start_offset
        # 3. No future logs (AlterReplicaLogDirs) in kafka_ref, so nothing else counts.
        return low_watermark

    def num_delayed_delete(self) -> int:
        """Mirrors kafka.cluster.DelayedOperations#numDelayedDelete: DeleteRecords requests waiting on this broker."""
        purgatory = self.replica_manager.delayed_delete_records_purgatory
        # (No watch list at all, the usual case, counts 0 without the count's own call: every
        #  follower fetch of every partition asks, and DeleteRecords requests are rare.)
        return purgatory.num_delayed() if purgatory._watchers else 0

    def delete_records_on_leader(self, offset: int) -> LogDeleteRecordsResult:
        """Mirrors kafka.cluster.Partition#deleteRecordsOnLeader.

        Move the leader's log start offset to ``offset`` (-1: the high watermark) and answer the
        low watermark as it now stands.
        """
        # 1. Only the leader deletes.
        leader_log = self.leader_log_if_local()
        if leader_log is None:
            raise NotLeaderOrFollowerException(
                f"Leader not local for partition {self.topic_partition} on broker {self.local_broker_id}")
        # 2. The topic's cleanup policy must include "delete".
        config = self.log_manager.fetch_log_config(self.topic)
        if config is not None and not config.delete:
            raise PolicyViolationException(
                f"Records of partition {self.topic_partition} can not be deleted due to the configured policy")
        # 3. -1 means the high watermark; a negative offset is out of range.
        converted_offset = leader_log.high_watermark if offset == HIGH_WATERMARK else offset
        if converted_offset < 0:
            raise OffsetOutOfRangeException(f"The offset {converted_offset} for partition {self.topic_partition} is not valid")
        # 4. Move the log start offset (OFFSET_OUT_OF_RANGE beyond the high watermark).
        leader_log.maybe_increment_log_start_offset(converted_offset, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
        # 5. The low watermark after the move.
        return LogDeleteRecordsResult(requested_offset=converted_offset, low_watermark=self.low_watermark_if_leader())
