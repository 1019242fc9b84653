"""The read side of a Partition: epoch validation, record reads, epoch end offsets.

Mirrors the read methods of kafka.cluster.Partition (Kafka 3.x): checkCurrentLeaderEpoch,
getLocalLog, localLogWithEpochOrThrow, followerReplicaOrThrow, fetchRecords, readRecords,
lastOffsetForLeaderEpoch, fetchOffsetSnapshot, fetchOffsetForTimestamp. They are methods of
Partition (a mixin); the split only keeps each module readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_ref.common.errors import Errors, OffsetOutOfRangeException
from kafka_ref.log.fetch_data import FetchDataInfo, FetchIsolation, LogOffsetMetadata, TimestampAndOffset
from kafka_ref.replica.read_info import EpochEndOffset, LogReadInfo
from kafka_ref.replica.replica import Replica

if TYPE_CHECKING:
    from kafka_ref.log.unified_log import UnifiedLog

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
EARLIEST_LOCAL_TIMESTAMP = -4


class PartitionReads:
    """Read-side methods of kafka.cluster.Partition."""

    # ------------------------------------------------------------------ reads

    def check_current_leader_epoch(self, remote_leader_epoch: int) -> Errors:
        """Mirrors kafka.cluster.Partition#checkCurrentLeaderEpoch (-1 = not given)."""
        if remote_leader_epoch < 0:
            return Errors.NONE
        if self.leader_epoch > remote_leader_epoch:
            return Errors.FENCED_LEADER_EPOCH
        if self.leader_epoch < remote_leader_epoch:
            return Errors.UNKNOWN_LEADER_EPOCH
        return Errors.NONE

    def get_local_log(self, current_leader_epoch: int, require_leader: bool) -> "UnifiedLog | Errors":
        """Mirrors kafka.cluster.Partition#getLocalLog: the log, or the error explaining why not."""
        # 1. The epoch check (checkCurrentLeaderEpoch), called only when an epoch was given and
        #    differs: every fetched partition passes through here, usually with the current epoch.
        if current_leader_epoch >= 0 and current_leader_epoch != self.leader_epoch:
            return self.check_current_leader_epoch(current_leader_epoch)
        # 2. Leadership when asked for, then the log itself.
        if require_leader and self.leader_replica_id_opt != self.local_broker_id:
            return Errors.NOT_LEADER_OR_FOLLOWER
        if self.log is None:
            return Errors.NOT_LEADER_OR_FOLLOWER
        return self.log

    def local_log_with_epoch_or_throw(self, current_leader_epoch: int, require_leader: bool) -> "UnifiedLog":
        """Mirrors kafka.cluster.Partition#localLogWithEpochOrThrow."""
        result = self.get_local_log(current_leader_epoch, require_leader)
        if result.__class__ is Errors:
            raise result.exception(
                f"Failed to find {'leader' if require_leader else ''} log for partition {self.topic_partition} "
                f"with leader epoch {current_leader_epoch}. The current leader is {self.leader_replica_id_opt} "
                f"and the current epoch {self.leader_epoch}"
            )
        return result

    def follower_replica_or_throw(self, replica_id: int, current_leader_epoch: int, fetch_offset: int) -> Replica:
        """Mirrors kafka.cluster.Partition#followerReplicaOrThrow."""
        replica = self.get_replica(replica_id)
        if replica is not None:
            return replica
        error = Errors.UNKNOWN_LEADER_EPOCH if current_leader_epoch >= 0 else Errors.NOT_LEADER_OR_FOLLOWER
        raise error.exception(
            f"Replica {replica_id} is not recognized as a valid replica of {self.topic_partition} in leader "
            f"epoch {self.leader_epoch} with partition epoch {self.partition_epoch}"
        )

    def log_if_at_log_end(self, offset: int, current_leader_epoch: int, last_fetched_epoch: int) -> "UnifiedLog | None":
        """Hot-path test shared by the leader's two follower-fetch helpers (ReplicaManager's read
        helper and DelayedFetch's): this partition's log when a follower at ``offset`` is at its
        end with nothing to read and no divergence possible, else None.

        The branches the full chain would take, as attribute reads: led here, in the fetch's
        epoch (or none given; getLocalLog), an open log whose end is ``offset`` (LocalLog#read
        at its bound), and a last fetched epoch (when sent) that is the latest epoch under the
        KIP-279 rules (readRecords' divergence check passes).
        """
        log = self.log
        if log is None or self.leader_replica_id_opt != self.local_broker_id:
            return None
        if current_leader_epoch >= 0 and current_leader_epoch != self.leader_epoch:
            return None
        local_log = log.local_log
        if local_log._next_offset != offset or local_log.is_memory_mapped_buffer_closed:
            return None
        if last_fetched_epoch >= 0 and (last_fetched_epoch != log.leader_epoch_cache.latest_epoch
                                        or not self.inter_broker_protocol_version.uses_kip279_truncation):
            return None
        return log

    def fetch_records(
        self,
        *,
        replica_id: int,
        fetch_only_leader: bool,
        isolation: FetchIsolation,
        fetch_offset: int,
        current_leader_epoch: int,
        last_fetched_epoch: int,
        log_start_offset: int,
        fetch_time_ms: int,
        max_bytes: int,
        min_one_message: bool,
        update_fetch_state: bool,
        replica_epoch: int = -1,
    ) -> LogReadInfo:
        """Mirrors kafka.cluster.Partition#fetchRecords.

        For a follower: validate epoch and replica, read, then (unless the read found a
        diverging epoch) record the follower's fetch state — which can expand the ISR and move
        the HW. For a consumer: validate and read.
        """
        is_from_follower = replica_id >= 0
        if is_from_follower:
            # 1. Validate, resolve the follower, read.
            local_log = self.local_log_with_epoch_or_throw(current_leader_epoch, fetch_only_leader)
            replica = self.follower_replica_or_throw(replica_id, current_leader_epoch, fetch_offset)
            info = self.read_records(local_log, last_fetched_epoch, fetch_offset, current_leader_epoch, max_bytes, isolation, min_one_message)
            # 2. Record where the follower is (its fetch offset is its LEO).
            if update_fetch_state and info.diverging_epoch is None:
                self.update_follower_fetch_state(
                    replica,
                    follower_fetch_offset_metadata=info.fetched_data.fetch_offset_metadata,
                    follower_start_offset=log_start_offset,
                    follower_fetch_time_ms=fetch_time_ms,
                    leader_end_offset=info.log_end_offset,
                    broker_epoch=replica_epoch,
                )
            return info
        local_log = self.local_log_with_epoch_or_throw(current_leader_epoch, fetch_only_leader)
        return self.read_records(local_log, last_fetched_epoch, fetch_offset, current_leader_epoch, max_bytes, isolation, min_one_message)

    def read_records(
        self,
        local_log: "UnifiedLog",
        last_fetched_epoch: int,
        fetch_offset: int,
        current_leader_epoch: int,
        max_bytes: int,
        fetch_isolation: FetchIsolation,
        min_one_message: bool,
    ) -> LogReadInfo:
        """Mirrors kafka.cluster.Partition#readRecords.

        Offsets are captured before the read, so the response carries the HW as it was before
        this fetch moved anything. With ``last_fetched_epoch`` (KIP-320, IBP ≥ 2.7 followers)
        the leader checks for divergence first and answers with the diverging epoch instead of
        records.
        """
        # 1. Snapshot offsets before the read.
        initial_hw = local_log.high_watermark
        initial_log_start = local_log.log_start_offset
        initial_leo = local_log.log_end_offset
        initial_lso = local_log.last_stable_offset
        # 2. Diverging-epoch check (only when the fetcher sent its last fetched epoch).
        if last_fetched_epoch >= 0:
            epoch_end = self.last_offset_for_leader_epoch(current_leader_epoch, last_fetched_epoch, fetch_only_from_leader=False)
            error = Errors.for_code(epoch_end.error_code)
            if error is not Errors.NONE:
                raise error.exception()
            if epoch_end.end_offset == UNDEFINED_EPOCH_OFFSET or epoch_end.leader_epoch == UNDEFINED_EPOCH:
                raise OffsetOutOfRangeException(
                    f"Could not determine the end offset of the last fetched epoch {last_fetched_epoch} from the request"
                )
            if fetch_offset < initial_log_start:
                raise OffsetOutOfRangeException(
                    f"Received request for offset {fetch_offset} for partition {self.topic_partition}, but we only "
                    f"have log segments in the range {initial_log_start} to {initial_leo}."
                )
            if epoch_end.leader_epoch < last_fetched_epoch or epoch_end.end_offset < fetch_offset:
                return LogReadInfo(
                    fetched_data=FetchDataInfo(LogOffsetMetadata(fetch_offset), _empty_records()),
                    diverging_epoch=EpochEndOffset(error_code=Errors.NONE.code, partition=self.partition_id, leader_epoch=epoch_end.leader_epoch, end_offset=epoch_end.end_offset),
                    high_watermark=initial_hw,
                    log_start_offset=initial_log_start,
                    log_end_offset=initial_leo,
                    last_stable_offset=initial_lso,
                )
        # 3. Read whole batches.
        fetched = local_log.read(fetch_offset, max_bytes, fetch_isolation, min_one_message)
        return LogReadInfo(fetched, None, initial_hw, initial_log_start, initial_leo, initial_lso)

    def last_offset_for_leader_epoch(
        self, current_leader_epoch: int, leader_epoch: int, fetch_only_from_leader: bool
    ) -> EpochEndOffset:
        """Mirrors kafka.cluster.Partition#lastOffsetForLeaderEpoch (the OffsetsForLeaderEpoch answer).

        Era switch (docs/DESIGN.md §1.9): from IBP 2.0 (KIP-279) the answer is the largest epoch ≤
        the requested one with its end offset. Before (KIP-101 as shipped in 0.11) the leader
        answered only an offset — the start of the first epoch *after* the requested one, or
        its LEO for its latest epoch — and no epoch, which is what lets logs diverge after two
        fast leader changes.
        """
        result = self.get_local_log(current_leader_epoch, fetch_only_from_leader)
        if isinstance(result, Errors):
            return EpochEndOffset(error_code=result.code, partition=self.partition_id, leader_epoch=UNDEFINED_EPOCH, end_offset=UNDEFINED_EPOCH_OFFSET)
        log = result
        if not self.inter_broker_protocol_version.uses_kip279_truncation:
            end = _kip101_end_offset_for(log, leader_epoch)
            return EpochEndOffset(error_code=Errors.NONE.code, partition=self.partition_id, leader_epoch=UNDEFINED_EPOCH, end_offset=end)
        found = log.end_offset_for_epoch(leader_epoch)
        if found is None:
            return EpochEndOffset(error_code=Errors.NONE.code, partition=self.partition_id, leader_epoch=UNDEFINED_EPOCH, end_offset=UNDEFINED_EPOCH_OFFSET)
        return EpochEndOffset(error_code=Errors.NONE.code, partition=self.partition_id, leader_epoch=found.leader_epoch, end_offset=found.offset)

    def fetch_offset_snapshot(self, current_leader_epoch: int, fetch_only_from_leader: bool) -> Any:
        """Mirrors kafka.cluster.Partition#fetchOffsetSnapshot."""
        return self.local_log_with_epoch_or_throw(current_leader_epoch, fetch_only_from_leader).fetch_offset_snapshot()

    def fetch_offset_for_timestamp(
        self, timestamp: int, isolation_level: int | None, current_leader_epoch: int, fetch_only_from_leader: bool
    ) -> TimestampAndOffset | None:
        """Mirrors kafka.cluster.Partition#fetchOffsetForTimestamp (ListOffsets, Kafka 3.7).

        ``isolation_level`` None means a replica asking (bounded by LEO); 0/1 a consumer
        (bounded by HW / LSO). A new leader whose HW still lags its epoch start answers
        OFFSET_NOT_AVAILABLE to clients for "latest", and for a timestamp lookup only when no
        offset below the last fetchable one matches (a match below it is returned). Earliest and
        earliest-local are answered as the log finds them, whatever the last fetchable offset.
        """
        # 1. Resolve the log with epoch validation.
        local_log = self.local_log_with_epoch_or_throw(current_leader_epoch, fetch_only_from_leader)
        if isolation_level == 1:
            last_fetchable = local_log.last_stable_offset
        elif isolation_level == 0:
            last_fetchable = local_log.high_watermark
        else:
            last_fetchable = local_log.log_end_offset
        # 2. The lagging-HW-after-election case.
        lagging = (
            isolation_level is not None
            and self.leader_epoch_start_offset_opt is not None
            and self.leader_epoch_start_offset_opt > local_log.high_watermark
        )
        if timestamp == LATEST_TIMESTAMP:
            if lagging:
                raise Errors.OFFSET_NOT_AVAILABLE.exception(
                    f"Failed to fetch offsets for partition {self.topic_partition} with leader epoch "
                    f"{self.leader_epoch} as this partition's high watermark ({local_log.high_watermark}) is "
                    f"lagging behind the start offset from the beginning of this epoch ({self.leader_epoch_start_offset_opt})."
                )
            return TimestampAndOffset(-1, last_fetchable, self.leader_epoch)
        # 3. Earliest and earliest-local: whatever the log finds.
        found = local_log.fetch_offset_by_timestamp(timestamp)
        if timestamp == EARLIEST_TIMESTAMP or timestamp == EARLIEST_LOCAL_TIMESTAMP:
            return found
        # 4. By timestamp: a match below the last fetchable offset; else, with a lagging HW, the error.
        if found is not None and found.offset < last_fetchable:
            return found
        if lagging:
            raise Errors.OFFSET_NOT_AVAILABLE.exception(
                f"Failed to fetch offsets for partition {self.topic_partition} with leader epoch {self.leader_epoch} "
                f"as this partition's high watermark ({local_log.high_watermark}) is lagging behind the start offset "
                f"from the beginning of this epoch ({self.leader_epoch_start_offset_opt}).")
        return None


def _empty_records() -> Any:
    from kafka_ref.common.records import MemoryRecords

    return MemoryRecords.EMPTY


def _kip101_end_offset_for(log: "UnifiedLog", requested_epoch: int) -> int:
    """The leader's answer under KIP-101 as first shipped (0.11 – 1.1).

    Mirrors kafka.server.epoch.LeaderEpochFileCache#endOffsetFor as of 0.11–1.1. For its
    latest epoch the leader answers its LEO; for an older epoch, the start offset of the first
    epoch greater than the requested one. Undefined when nothing is greater, and also when the
    requested epoch (or -1) is below every cached epoch: the follower then falls back to its
    high watermark (the message-format upgrade case of that era).
    """
    cache = log.leader_epoch_cache
    entries = cache.epoch_entries() if callable(cache.epoch_entries) else cache.epoch_entries
    # 1. No epochs, or an epoch older than any we cached: nothing to say.
    if not entries or requested_epoch < entries[0].epoch:
        return UNDEFINED_EPOCH_OFFSET
    # 2. The current epoch is still open: it ends at the LEO.
    if requested_epoch == entries[-1].epoch:
        return log.log_end_offset
    # 3. An older epoch ends where the next greater one starts.
    for entry in entries:
        if entry.epoch > requested_epoch:
            return entry.start_offset
    return UNDEFINED_EPOCH_OFFSET


