"""The read side of ReplicaManager: fetches, offsets by timestamp, epoch end offsets.

Mirrors kafka.server.ReplicaManager#fetchMessages, #readFromLog, #fetchOffsetForTimestamp and
#lastOffsetForLeaderEpoch. Kept apart from replica_manager.py only for size; these are
methods of ReplicaManager (a mixin), not a separate Kafka class.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from kafka_ref.common.node import Node
from kafka_ref.common.replica_selector import PartitionView, ReplicaView
from kafka_ref.common.errors import (
    ApiException,
    Errors,
    FencedLeaderEpochException,
    InconsistentTopicIdException,
    KafkaStorageException,
    NotLeaderOrFollowerException,
    OffsetOutOfRangeException,
    ReplicaNotAvailableException,
    UnknownLeaderEpochException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.common.records import MemoryRecords
from kafka_ref.log.fetch_data import FetchDataInfo, FetchIsolation, LogOffsetMetadata, UNKNOWN_OFFSET_METADATA
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.replica.partition import Partition
from kafka_ref.replica.read_info import EpochEndOffset, LogReadResult
from kafka_ref.server.delayed_fetch import DelayedFetch, FetchPartitionStatus
from kafka_ref.server.delayed_operation import TopicPartitionOperationKey

EMPTY_RECORDS = MemoryRecords.EMPTY

_EXPECTED_READ_ERRORS = (
    UnknownTopicOrPartitionException,
    NotLeaderOrFollowerException,
    UnknownLeaderEpochException,
    FencedLeaderEpochException,
    ReplicaNotAvailableException,
    KafkaStorageException,
    InconsistentTopicIdException,
)


class ReadPath:
    """Read-side methods of kafka.server.ReplicaManager."""

    def fetch_messages(
        self,
        params: FetchParams,
        fetch_infos: Sequence[tuple[TopicPartition, Any]],
        response_callback: Callable[[list[tuple[TopicPartition, LogReadResult]]], None],
        topic_ids: dict[str, Uuid] | None = None,
    ) -> None:
        """Mirrors kafka.server.ReplicaManager#fetchMessages.

        Read at once; answer now if the fetch does not want to wait, asked for nothing, has
        min bytes, hit an error, found a diverging epoch or names a preferred read replica;
        otherwise park a DelayedFetch keyed by its partitions.
        """
        # 1. Read (this updates follower fetch state on the leader).
        results = self.read_from_log(params, fetch_infos, read_from_purgatory=False, topic_ids=topic_ids)
        bytes_readable = 0
        error_reading = False
        has_diverging = False
        has_preferred_read_replica = False
        for _, result in results:
            if result.error is not Errors.NONE:
                error_reading = True
            if result.diverging_epoch is not None:
                has_diverging = True
            if result.preferred_read_replica is not None:
                has_preferred_read_replica = True
            # (LogReadResult#bytes written out: once per partition of every fetch.)
            info = result.info
            if info is not None:
                bytes_readable += info.records.size_in_bytes
        # 2. Answer at once when there is no reason to wait (a preferred read replica is one:
        #    the consumer should go there now).
        if (params.max_wait_ms <= 0 or not fetch_infos or bytes_readable >= params.min_bytes or error_reading
                or has_diverging or has_preferred_read_replica):
            response_callback(results)
            return
        # 3. Otherwise wait in the purgatory, keyed by partition.
        #    (read_from_log answers one result per fetch info, in order: paired by position.)
        statuses = []
        for (tp, info), (_, result) in zip(fetch_infos, results):
            if result.info is not None:
                statuses.append((tp, FetchPartitionStatus(result.info.fetch_offset_metadata, info)))
        op = DelayedFetch(params, statuses, self, response_callback)
        keys = TopicPartitionOperationKey.of_all([tp for tp, _ in statuses])
        if not keys:
            response_callback(results)
            return
        self.delayed_fetch_purgatory.try_complete_else_watch(op, keys)

    def read_from_log(
        self,
        params: FetchParams,
        fetch_infos: Sequence[tuple[TopicPartition, Any]],
        read_from_purgatory: bool,
        topic_ids: dict[str, Uuid] | None = None,
    ) -> list[tuple[TopicPartition, LogReadResult]]:
        """Mirrors kafka.server.ReplicaManager#readFromLog.

        The response budget ``max_bytes`` is shared across partitions in order; the first
        non-empty partition may exceed it (min one message) unless the limit is hard.
        """
        limit_bytes = params.max_bytes
        min_one_message = not params.hard_max_bytes_limit
        results: list[tuple[TopicPartition, LogReadResult]] = []
        # A follower reading the leader's log (the replication fetch) may take the hot-path
        # helper below for partitions where it has nothing to read; the rest take the full chain.
        at_log_end = self._follower_read_at_log_end if (
            params.fetch_only_leader and params.replica_id >= 0 and params.isolation is FetchIsolation.LOG_END) else None
        fetch_time_ms = self.time.milliseconds()
        append = results.append
        for tp, info in fetch_infos:
            if at_log_end is not None:
                result = at_log_end(params, tp, info, fetch_time_ms, not read_from_purgatory, topic_ids)
                if result is not None:
                    # An empty read: the budget and min-one-message are unchanged.
                    append((tp, result))
                    continue
            result = self._read(params, tp, info, limit_bytes, min_one_message, read_from_purgatory, topic_ids)
            size = result.bytes
            if size > 0:
                min_one_message = False
            limit_bytes = max(0, limit_bytes - size)
            append((tp, result))
        return results

    def _read(
        self,
        params: FetchParams,
        tp: TopicPartition,
        info: Any,
        limit_bytes: int,
        min_one_message: bool,
        read_from_purgatory: bool,
        topic_ids: dict[str, Uuid] | None,
    ) -> LogReadResult:
        """Mirrors the ``read`` closure inside kafka.server.ReplicaManager#readFromLog."""
        adjusted_max_bytes = min(info.partition_max_bytes, limit_bytes)
        fetch_time_ms = self.time.milliseconds()
        partition = None
        try:
            # 1. Hosting and topic id checks.
            partition = self.get_partition_or_exception(tp)
            request_topic_id = topic_ids.get(tp.topic) if topic_ids else None
            # (Identity first: the usual request carries the very Uuid the log has.)
            if request_topic_id is not None:
                log_topic_id = partition.topic_id
                if (log_topic_id is not None and request_topic_id is not log_topic_id
                        and request_topic_id != ZERO_UUID and request_topic_id != log_topic_id):
                    raise InconsistentTopicIdException("Topic ID in the fetch session did not match the topic ID in the log.")
            # 2. On the leader, a consumer may be sent to a closer replica (KIP-392): then
            #    nothing is read, the answer carries the offsets and the replica to go to.
            preferred_read_replica = None
            if params.client_metadata is not None and not params.is_from_follower:  # (followers: always None)
                preferred_read_replica = self.find_preferred_read_replica(
                    partition, params.client_metadata, params.replica_id, info.fetch_offset, fetch_time_ms)
            if preferred_read_replica is not None:
                snapshot = partition.fetch_offset_snapshot(info.current_leader_epoch, fetch_only_from_leader=False)
                return LogReadResult(
                    info=FetchDataInfo(UNKNOWN_OFFSET_METADATA, _empty()),
                    diverging_epoch=None,
                    high_watermark=snapshot.high_watermark.message_offset,
                    leader_log_start_offset=snapshot.log_start_offset,
                    leader_log_end_offset=snapshot.log_end_offset.message_offset,
                    follower_log_start_offset=info.log_start_offset,
                    fetch_time_ms=-1,
                    last_stable_offset=snapshot.last_stable_offset.message_offset,
                    preferred_read_replica=preferred_read_replica,
                )
            # 3. The read, with epoch validation and (for followers) fetch-state update.
            read_info = partition.fetch_records(
                replica_id=params.replica_id,
                fetch_only_leader=params.fetch_only_leader,
                isolation=params.isolation,
                fetch_offset=info.fetch_offset,
                current_leader_epoch=info.current_leader_epoch,
                last_fetched_epoch=info.last_fetched_epoch,
                log_start_offset=info.log_start_offset,
                fetch_time_ms=fetch_time_ms,
                max_bytes=adjusted_max_bytes,
                min_one_message=min_one_message,
                update_fetch_state=not read_from_purgatory,
                replica_epoch=params.replica_epoch,
            )
            return LogReadResult(
                info=read_info.fetched_data,
                diverging_epoch=read_info.diverging_epoch,
                high_watermark=read_info.high_watermark,
                leader_log_start_offset=read_info.log_start_offset,
                leader_log_end_offset=read_info.log_end_offset,
                follower_log_start_offset=info.log_start_offset,
                fetch_time_ms=fetch_time_ms,
                last_stable_offset=read_info.last_stable_offset,
            )
        except _EXPECTED_READ_ERRORS as exc:
            return _error_result(exc)
        except OffsetOutOfRangeException as exc:
            # 4. Out of range: the follower/consumer resolves it (reset or truncate).
            return self._handle_offset_out_of_range_error(tp, params, info, partition, fetch_time_ms, exc)
        except ApiException as exc:
            return _error_result(exc)

    def _follower_read_at_log_end(self, params: FetchParams, tp: TopicPartition, info: Any, fetch_time_ms: int,
                                  update_fetch_state: bool, topic_ids: dict[str, Uuid] | None) -> LogReadResult | None:
        """Hot-path helper: the ``read`` closure for a follower that is already at the leader's log end.

        It computes what the full chain (``_read`` → Partition#fetchRecords → #readRecords →
        UnifiedLog#read → LocalLog#read, then Partition#updateFollowerFetchState) computes for
        its commonest case, in a few attribute reads: on an idle cluster every follower fetch
        walks every partition of its session twice (on arrival and when the DelayedFetch
        completes), and almost every partition is in this case. Preconditions, each the branch
        the full chain would take: the partition is online and led here in the fetch's epoch
        (or no epoch given), the topic id is the log's (the same object), the log's handlers are
        open, the follower is a known replica, the fetch offset is the log end offset, and the
        last fetched epoch (when sent, KIP-320) is the leader's latest epoch under the KIP-279
        rules, so no divergence is possible. Then the read is empty at the log end's position and
        the offsets are taken before the follower's fetch state is recorded, as readRecords
        does. Any other case returns None and the caller runs the full chain.
        tests/test_read_fast_path.py checks both give the same result and state.
        """
        # 1. An online partition whose follower is at the log end (Partition#log_if_at_log_end).
        partition = self.all_partitions.get(tp)
        if partition.__class__ is not Partition:
            return None
        log = partition.log_if_at_log_end(info.fetch_offset, info.current_leader_epoch, info.last_fetched_epoch)
        if log is None:
            return None
        # 2. The log's own topic id, a known replica.
        if topic_ids:
            request_topic_id = topic_ids.get(tp.topic)
            # (``_topic_id`` is the field behind UnifiedLog#topicId, read without the property call.)
            if request_topic_id is not None and request_topic_id is not log._topic_id:
                return None
        replica = partition.remote_replicas_map.get(params.replica_id)
        if replica is None:
            return None
        leo = info.fetch_offset   # the log end offset (checked above)
        # 3. The offsets before the read, the empty read at the log end, then the fetch state.
        high_watermark = log.high_watermark
        log_start_offset = log.log_start_offset
        last_stable_offset = log.last_stable_offset
        # (The empty read at the log end is the same value until the end moves: the log keeps the
        #  last one made, so an idle partition's fetches share it instead of building one each.)
        end = log.local_log.log_end_offset_metadata
        fetched = log.empty_read_at_end
        if fetched is None or fetched.fetch_offset_metadata is not end:
            fetched = log.empty_read_at_end = FetchDataInfo(end, EMPTY_RECORDS)
        if update_fetch_state:
            try:
                # (Positional: replica, its fetch offset metadata, its log start offset, the fetch
                #  time, the leader's end offset, the broker epoch.)
                partition.update_follower_fetch_state(replica, fetched.fetch_offset_metadata, info.log_start_offset,
                                                      fetch_time_ms, leo, params.replica_epoch)
            except ApiException as exc:
                # As in ``_read``: a refused update (KRaft: a fetch from an older incarnation of
                # the broker) answers the partition with its error.
                return _error_result(exc)
        return LogReadResult(fetched, None, high_watermark, log_start_offset, leo, info.log_start_offset,
                             fetch_time_ms, last_stable_offset)

    def find_preferred_read_replica(self, partition: Any, client_metadata: Any, replica_id: int, fetch_offset: int,
                                    current_time_ms: int) -> int | None:
        """Mirrors kafka.server.ReplicaManager#findPreferredReadReplica (KIP-392).

        Only a leader with a replica selector answers, and only for consumers: 1. the candidates
        are the leader and each ISR follower whose log holds ``fetch_offset`` (a lagging or
        out-of-ISR follower could keep the consumer behind); 2. the selector picks one; 3. the
        leader itself is not sent back (None: read here).
        """
        # 1. Only a leader, only for a consumer, only with a selector.
        if not partition.is_leader or replica_id >= 0 or self.replica_selector is None:
            return None
        endpoints = self.metadata_cache.get_partition_replica_endpoints(partition.topic_partition)
        isr = partition.in_sync_replica_ids
        candidates = set()
        for replica in partition.remote_replicas_map.values():
            state = replica.state_snapshot
            if replica.broker_id in isr and state.log_end_offset >= fetch_offset and state.log_start_offset <= fetch_offset:
                candidates.add(ReplicaView(endpoints.get(replica.broker_id, Node.no_node()), state.log_end_offset,
                                           current_time_ms - state.last_caught_up_time_ms))
        leader = ReplicaView(endpoints.get(self.local_broker_id, Node.no_node()), partition.local_log_or_exception.log_end_offset, 0)
        candidates.add(leader)
        # 2. Ask the selector.
        selected = self.replica_selector.select(partition.topic_partition, client_metadata,
                                                PartitionView(frozenset(candidates), leader))
        # 3. A follower with an endpoint, never the leader itself.
        if selected is None or selected.endpoint.is_empty() or selected == leader:
            return None
        return selected.endpoint.id

    def _handle_offset_out_of_range_error(
        self, tp: TopicPartition, params: FetchParams, info: Any, partition: Any, fetch_time_ms: int, exc: Exception
    ) -> LogReadResult:
        """Mirrors kafka.server.ReplicaManager#handleOffsetOutOfRangeError.

        Only a tiered-storage log answers an out-of-range offset with data or offsets; without
        tiered storage (always, here) the result is Kafka's createLogReadResult(e): the error
        with unknown (-1) offsets. Followers and consumers then ask ListOffsets where to go.
        """
        return _error_result(exc)

    def fetch_offset_for_timestamp(
        self, tp: TopicPartition, timestamp: int, isolation_level: int | None, current_leader_epoch: int, fetch_only_from_leader: bool
    ) -> Any:
        """Mirrors kafka.server.ReplicaManager#fetchOffsetForTimestamp."""
        partition = self.get_partition_or_exception(tp)
        return partition.fetch_offset_for_timestamp(timestamp, isolation_level, current_leader_epoch, fetch_only_from_leader)

    def last_offset_for_leader_epoch(self, requested: dict[TopicPartition, tuple[int, int]]) -> dict[TopicPartition, EpochEndOffset]:
        """Mirrors kafka.server.ReplicaManager#lastOffsetForLeaderEpoch.

        ``requested`` maps a partition to (current_leader_epoch, leader_epoch).
        """
        out: dict[TopicPartition, EpochEndOffset] = {}
        for tp, (current_leader_epoch, leader_epoch) in requested.items():
            result = self.get_partition_or_error(tp)
            if isinstance(result, Errors):
                out[tp] = EpochEndOffset(error_code=result.code, partition=tp.partition, leader_epoch=-1, end_offset=-1)
            else:
                out[tp] = result.last_offset_for_leader_epoch(current_leader_epoch, leader_epoch, fetch_only_from_leader=True)
        return out


def _empty() -> Any:
    from kafka_ref.common.records import MemoryRecords

    return MemoryRecords.EMPTY


def _error_result(exc: BaseException) -> LogReadResult:
    """Mirrors kafka.server.ReplicaManager$#createLogReadResult(Throwable): every offset unknown (-1),
    the fetch time too (-1: no read happened), the error taken from the exception."""
    return LogReadResult(
        info=FetchDataInfo(UNKNOWN_OFFSET_METADATA, _empty()),
        diverging_epoch=None,
        high_watermark=-1,
        leader_log_start_offset=-1,
        leader_log_end_offset=-1,
        follower_log_start_offset=-1,
        fetch_time_ms=-1,
        last_stable_offset=-1,
        error=Errors.for_exception(exc),
        exception=exc,
    )


_ = LogOffsetMetadata
