"""The follower's fetcher: AbstractFetcherThread with the local side wired to the ReplicaManager.

Mirrors kafka.server.ReplicaFetcherThread (Kafka 3.8). It reaches the local replica only
through this contract:

* ``replica_mgr.get_partition_or_exception(tp)`` -> Partition;
* ``partition.local_log_or_exception`` -> UnifiedLog;
* ``partition.append_records_to_follower_or_future_replica(records, is_future=False)``;
* ``partition.truncate_to(offset, is_future=False)`` and
  ``partition.truncate_fully_and_start_at(offset, is_future=False)``;
* ``log.log_end_offset``, ``log.log_start_offset``, ``log.high_watermark``, ``log.latest_epoch``,
  ``log.end_offset_for_epoch(epoch)``, ``log.maybe_update_high_watermark(hw)``,
  ``log.maybe_increment_log_start_offset(offset, reason)``;
* ``replica_mgr.complete_delayed_fetch_requests(tps)``, ``replica_mgr.config``,
  ``replica_mgr.time``.
"""

from __future__ import annotations

import structlog
from typing import TYPE_CHECKING, Any

from kafka_ref.common.errors import IllegalStateException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.fetch import FetchResponse, PartitionData
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import LogStartOffsetIncrementReason
from kafka_ref.replica.fetcher.abstract_fetcher_thread import AbstractFetcherThread
from kafka_ref.replica.fetcher.partition_fetch_state import FailedPartitions, OffsetAndEpoch, OffsetTruncationState

if TYPE_CHECKING:
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.log.fetch_data import LogAppendInfo
    from kafka_ref.replica.fetcher.leader_end_point import LeaderEndPoint

log = structlog.get_logger("kafka.server.ReplicaFetcherThread")


class ReplicaFetcherThread(AbstractFetcherThread):
    """Mirrors kafka.server.ReplicaFetcherThread.

    Appends what the leader sends to the local follower log, moves the follower's high
    watermark to min(leader HW, local log end offset) and its log start offset up to the
    leader's, and after each round wakes delayed fetches of partitions whose HW moved
    (consumers reading from this follower).
    """

    def __init__(
        self,
        name: str,
        leader: LeaderEndPoint,
        broker_config: KafkaConfig,
        failed_partitions: FailedPartitions,
        replica_mgr: Any,
        log_prefix: str = "",
    ) -> None:
        super().__init__(
            name=name,
            client_id=name,
            leader=leader,
            failed_partitions=failed_partitions,
            fetch_back_off_ms=broker_config.get("replica.fetch.backoff.ms"),
            time=replica_mgr.time,
        )
        self.broker_config = broker_config
        self.replica_mgr = replica_mgr
        self.log_prefix = log_prefix
        # Partitions whose follower HW moved in this round (their delayed fetches may complete).
        self.partitions_with_new_high_watermark: list[TopicPartition] = []

    @property
    def is_offset_for_leader_epoch_supported(self) -> bool:  # type: ignore[override]
        """Mirrors ReplicaFetcherThread#isOffsetForLeaderEpochSupported (IBP >= 0.11, KIP-101)."""
        return self.broker_config.inter_broker_protocol_version.uses_leader_epoch_for_truncation

    def _local_log(self, tp: TopicPartition) -> Any:
        return self.replica_mgr.get_partition_or_exception(tp).local_log_or_exception

    # -- the local replica -----------------------------------------------------------------

    def latest_epoch(self, topic_partition: TopicPartition) -> int | None:
        """Mirrors ReplicaFetcherThread#latestEpoch."""
        return self._local_log(topic_partition).latest_epoch

    def log_start_offset(self, topic_partition: TopicPartition) -> int:
        """Mirrors ReplicaFetcherThread#logStartOffset."""
        return self._local_log(topic_partition).log_start_offset

    def log_end_offset(self, topic_partition: TopicPartition) -> int:
        """Mirrors ReplicaFetcherThread#logEndOffset."""
        return self._local_log(topic_partition).log_end_offset

    def end_offset_for_epoch(self, topic_partition: TopicPartition, epoch: int) -> OffsetAndEpoch | None:
        """Mirrors ReplicaFetcherThread#endOffsetForEpoch."""
        return self._local_log(topic_partition).end_offset_for_epoch(epoch)

    # -- lifecycle -------------------------------------------------------------------------

    def initiate_shutdown(self) -> bool:
        """Mirrors ReplicaFetcherThread#initiateShutdown: also stop the leader end point.

        1. Stop the loop; 2. if this call stopped it, start closing the leader end point; an
        error there is logged, not raised (the end point is closed again after the loop ends).
        """
        # 1. Stop the loop.
        just_shutdown = super().initiate_shutdown()
        # 2. Start closing the end point.
        if just_shutdown:
            try:
                self.leader.initiate_close()
            except RUN_ENDING:
                raise
            except Exception:
                log.exception("leader_initiate_close_failed", fetcher=self.name, leader=str(self.leader.broker_end_point()))
        return just_shutdown

    async def await_shutdown(self) -> None:
        """Mirrors ReplicaFetcherThread#awaitShutdown.

        1. Wait for the loop to end; 2. close the leader end point, logging (not raising) an
        error: the thread is done and will not use the end point again.
        """
        # 1. Wait.
        await super().await_shutdown()
        # 2. Close.
        try:
            self.leader.close()
        except RUN_ENDING:
            raise
        except Exception:
            log.exception("leader_close_failed", fetcher=self.name, leader=str(self.leader.broker_end_point()))

    async def do_work(self) -> None:
        """Mirrors ReplicaFetcherThread#doWork: a round, then complete delayed fetches."""
        await super().do_work()
        self._complete_delayed_fetch_requests()

    def _complete_delayed_fetch_requests(self) -> None:
        """Mirrors ReplicaFetcherThread#completeDelayedFetchRequests."""
        if self.partitions_with_new_high_watermark:
            self.replica_mgr.complete_delayed_fetch_requests(list(self.partitions_with_new_high_watermark))
            self.partitions_with_new_high_watermark.clear()

    # -- data ------------------------------------------------------------------------------

    def process_partition_data(self, topic_partition: TopicPartition, fetch_offset: int, partition_data: PartitionData) -> LogAppendInfo | None:
        """Mirrors ReplicaFetcherThread#processPartitionData."""
        # 1. The local replica and the fetched records.
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        log_ = partition.local_log_or_exception
        records = FetchResponse.records_or_fail(partition_data)
        # 2. We must be appending exactly at our log end.
        if fetch_offset != log_.log_end_offset:
            raise IllegalStateException(
                f"Offset mismatch for partition {topic_partition}: fetched offset = {fetch_offset}, "
                f"log end offset = {log_.log_end_offset}."
            )
        # 3. Append with the leader's offsets and epochs.
        log_append_info = partition.append_records_to_follower_or_future_replica(records, is_future=False)
        # 4. Follower HW = min(leader HW, our log end offset); remember partitions where it moved.
        if log_.maybe_update_high_watermark(partition_data.high_watermark) is not None:
            self.partitions_with_new_high_watermark.append(topic_partition)
        # 5. Follow the leader's log start offset (retention / DeleteRecords on the leader).
        log_.maybe_increment_log_start_offset(partition_data.log_start_offset,
                                              LogStartOffsetIncrementReason.LEADER_OFFSET_INCREMENTED)
        return log_append_info

    def truncate(self, tp: TopicPartition, offset_truncation_state: OffsetTruncationState) -> None:
        """Mirrors ReplicaFetcherThread#truncate."""
        # 1. Cut the local log.
        partition = self.replica_mgr.get_partition_or_exception(tp)
        log_ = partition.local_log_or_exception
        partition.truncate_to(offset_truncation_state.offset, is_future=False)
        # 2. Cutting below the HW loses committed data: say so (an unclean election, or pre-KIP-101).
        if offset_truncation_state.offset < log_.high_watermark:
            log.warning("truncating_below_high_watermark", fetcher=self.log_prefix.strip(" []"), topic_partition=str(tp),
                        offset=offset_truncation_state.offset, high_watermark=log_.high_watermark)

    def truncate_fully_and_start_at(self, topic_partition: TopicPartition, offset: int) -> None:
        """Mirrors ReplicaFetcherThread#truncateFullyAndStartAt."""
        partition = self.replica_mgr.get_partition_or_exception(topic_partition)
        partition.truncate_fully_and_start_at(offset, is_future=False)
