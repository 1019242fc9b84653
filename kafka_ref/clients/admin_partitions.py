"""The admin client's partition-leader calls: listOffsets and deleteRecords.

Mirrors the partition-leader parts of org.apache.kafka.clients.admin.KafkaAdminClient (Kafka 3.8:
ListOffsetsHandler and DeleteRecordsHandler with PartitionLeaderStrategy): each partition's leader
is looked up with a MetadataRequest, then one request goes to each leader, and partitions whose
lookup or answer asks for it are tried again. KafkaAdminClient's methods of the same names call these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from kafka_ref.clients.admin_types import DeletedRecords, ListOffsetsResultInfo, OffsetSpec, RecordsToDelete, _all
from kafka_ref.common.errors import ApiException, Errors, InvalidMetadataException, RetriableException
from kafka_ref.common.requests.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsResponse
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.clients.admin import KafkaAdminClient

async def list_offsets(admin: KafkaAdminClient, topic_partition_offsets: dict[TopicPartition, OffsetSpec], *, isolation_level: int = 0,
                       timeout_ms: float | None = None) -> dict[TopicPartition, ListOffsetsResultInfo]:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#listOffsets (then ListOffsetsResult#all).

    Finds each partition's leader with a MetadataRequest (an unknown topic fails at once, a
    leader not yet known is looked up again), then asks the leaders: NOT_LEADER_OR_FOLLOWER
    and LEADER_NOT_AVAILABLE look the leader up again, other retriable errors ask the same
    leader again, any other error fails the partition, and a partition the leader left out
    fails with ApiException. A partition keeps its leader until the leader says it moved.
    """
    specs = dict(topic_partition_offsets)
    results: dict[TopicPartition, ListOffsetsResultInfo | ApiException] = {}

    # The partitions mapped to a leader (AdminApiDriver's lookup stage), kept across attempts.
    leaders: dict[TopicPartition, int] = {}

    async def attempt(node: int, remaining_ms: int) -> None:
        # 1. Leaders of the unanswered partitions not mapped yet (PartitionLeaderStrategy, an
        #    unknown topic failing at once).
        unmapped_partitions = [tp for tp in specs if tp not in results and tp not in leaders]
        if unmapped_partitions:
            response: MetadataResponse = await admin.client.send(node, MetadataRequest.for_topics(
                sorted({tp.topic for tp in unmapped_partitions}), allow_auto_topic_creation=False), remaining_ms)
            found, failed = _partition_leaders(response, unmapped_partitions, tolerate_unknown_topics=False)
            results.update(failed)
            leaders.update(found)
        by_leader: dict[int, dict[TopicPartition, ListOffsetsPartition]] = {}
        for tp, leader in leaders.items():
            if tp in results:
                continue
            by_leader.setdefault(leader, {})[tp] = ListOffsetsPartition(
                partition_index=tp.partition, current_leader_epoch=-1, timestamp=specs[tp].timestamp)
        # 2. One ListOffsets per leader (ListOffsetsHandler#handleResponse).
        for leader, partitions in by_leader.items():
            request = ListOffsetsRequest(replica_id=ListOffsetsRequest.CONSUMER_REPLICA_ID, isolation_level=isolation_level,
                                         topics=ListOffsetsRequest.to_list_offsets_topics(partitions))
            answer: ListOffsetsResponse = await admin.client.send(leader, request, remaining_ms)
            unmapped = False
            retriable: set[TopicPartition] = set()
            for tp, r in answer.responses_by_partition().items():
                error = Errors.for_code(r.error_code)
                if tp not in partitions:
                    admin._log.warning("list_offsets_unknown_partition_in_response", partition=str(tp), broker=leader)
                elif error is Errors.NONE:
                    results[tp] = ListOffsetsResultInfo(r.offset, r.timestamp, None if r.leader_epoch == -1 else r.leader_epoch)
                elif error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE):
                    unmapped = True  # the leader moved: look it up again
                    leaders.pop(tp, None)
                elif isinstance(error.exception(), RetriableException):
                    retriable.add(tp)
                else:
                    results[tp] = error.exception()
            # 3. A leader that left a partition out (and moved none) fails it.
            if not unmapped:
                _fail_partitions_left_out(results, partitions, retriable, leader)
        # 4. Anything left (no leader yet, leader moved, retriable error) retries the call.
        missing = [tp for tp in specs if tp not in results]
        if missing:
            raise Errors.LEADER_NOT_AVAILABLE.exception(f"No offsets yet for {', '.join(map(str, missing))}; retrying")

    await admin._run_call("listOffsets", admin._least_loaded_node, attempt, timeout_ms)
    return _all(results, specs)

async def delete_records(admin: KafkaAdminClient, records_to_delete: dict[TopicPartition, RecordsToDelete | int], *,
                         timeout_ms: float | None = None) -> dict[TopicPartition, DeletedRecords]:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#deleteRecords (DeleteRecordsHandler,
    Kafka 3.6+; then DeleteRecordsResult#all as a map of low watermarks).

    1. Look up each partition's leader (Metadata, PartitionLeaderStrategy tolerating unknown
    topics: those and partitions without a leader are looked up again, an authorization or
    other unexpected error fails them); 2. one DeleteRecords per leader; 3. per
    partition: NONE gives its low watermark, an invalid-metadata error (the leader moved) looks
    the leader up again, another retriable error (REQUEST_TIMED_OUT: the replicas did not catch
    up in time) retries, anything else fails that partition (the first failure raises).
    """
    from kafka_ref.common.requests.delete_records import DeleteRecordsRequest, DeleteRecordsResponse

    offsets = {tp: spec.before_offset if isinstance(spec, RecordsToDelete) else int(spec)
               for tp, spec in records_to_delete.items()}
    results: dict[TopicPartition, DeletedRecords | ApiException] = {}
    # The brokers may wait this long for the replicas (DeleteRecordsHandler's timeout: the
    # options' timeout, else default.api.timeout.ms); the client waits for each answer as
    # long as the call's attempt allows.
    server_timeout_ms = int(admin.default_api_timeout_ms if timeout_ms is None else timeout_ms)

    # The partitions mapped to a leader (AdminApiDriver's lookup stage), kept across attempts.
    leaders: dict[TopicPartition, int] = {}

    async def attempt(node: int, remaining_ms: int) -> None:
        # 1. Leaders of the unanswered partitions not mapped yet (PartitionLeaderStrategy,
        #    unknown topics looked up again).
        unmapped_partitions = [tp for tp in offsets if tp not in results and tp not in leaders]
        if unmapped_partitions:
            response: MetadataResponse = await admin.client.send(node, MetadataRequest.for_topics(
                sorted({tp.topic for tp in unmapped_partitions}), allow_auto_topic_creation=False), remaining_ms)
            found, failed = _partition_leaders(response, unmapped_partitions, tolerate_unknown_topics=True)
            results.update(failed)
            leaders.update(found)
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        for tp, leader in leaders.items():
            if tp not in results:
                by_leader.setdefault(leader, {})[tp] = offsets[tp]
        # 2. One DeleteRecords per leader (it may wait for the replicas up to its timeout);
        #    DeleteRecordsHandler#handleResponse per partition.
        for leader, partitions in by_leader.items():
            answer: DeleteRecordsResponse = await admin.client.send(
                leader, DeleteRecordsRequest.of(partitions, timeout_ms=server_timeout_ms), remaining_ms)
            answered = answer.results_by_partition()
            unmapped = False
            retriable: set[TopicPartition] = set()
            for tp, r in answered.items():
                if tp not in partitions:
                    continue
                error = Errors.for_code(r.error_code)
                if error is Errors.NONE:
                    results[tp] = DeletedRecords(r.low_watermark)
                elif isinstance(error.exception(), InvalidMetadataException):
                    unmapped = True  # the leader moved: look it up again
                    leaders.pop(tp, None)
                elif isinstance(error.exception(), RetriableException):
                    retriable.add(tp)
                else:
                    results[tp] = error.exception()
            # A leader that left a partition out (and moved none) fails it.
            if not unmapped:
                _fail_partitions_left_out(results, partitions, retriable, leader)
        # 3. Anything left (no leader, leader moved, timed out) retries the call.
        missing = [tp for tp in offsets if tp not in results]
        if missing:
            raise Errors.LEADER_NOT_AVAILABLE.exception(f"Records not yet deleted for {', '.join(map(str, missing))}; retrying")

    await admin._run_call("deleteRecords", admin._least_loaded_node, attempt, timeout_ms)
    return _all(results, offsets)


def _fail_partitions_left_out(results: dict[TopicPartition, Any], partitions: Iterable[TopicPartition],
                              retriable: set[TopicPartition], leader: int) -> None:
    """A per-leader answer that says nothing of a partition it was asked about fails that
    partition (ListOffsetsHandler / DeleteRecordsHandler#handleResponse, both callers here)."""
    for tp in partitions:
        if tp not in results and tp not in retriable:
            results[tp] = ApiException(f"The response from broker {leader} did not contain a result "
                                       f"for topic partition {tp}")


def _partition_leaders(response: MetadataResponse, partitions: Iterable[TopicPartition], *,
                       tolerate_unknown_topics: bool) -> tuple[dict[TopicPartition, int], dict[TopicPartition, ApiException]]:
    """Mirrors org.apache.kafka.clients.admin.internals.PartitionLeaderStrategy#handleResponse.

    Returns the partitions mapped to their leader and those that failed; the rest (leader not
    known yet, a retriable error) are looked up again on the next attempt.
    """
    wanted = list(dict.fromkeys(partitions))
    mapped: dict[TopicPartition, int] = {}
    failed: dict[TopicPartition, ApiException] = {}
    retry_partition = (Errors.NOT_LEADER_OR_FOLLOWER, Errors.REPLICA_NOT_AVAILABLE, Errors.LEADER_NOT_AVAILABLE,
                       Errors.BROKER_NOT_AVAILABLE, Errors.KAFKA_STORAGE_ERROR, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    for topic in response.topics:
        error = Errors.for_code(topic.error_code)
        # 1. A topic-level error: retry (leader or broker not available; an unknown topic when
        #    tolerated) or fail every wanted partition of the topic.
        if error is not Errors.NONE:
            mine = [tp for tp in wanted if tp.topic == topic.name]
            if error is Errors.UNKNOWN_TOPIC_OR_PARTITION and not tolerate_unknown_topics:
                failed.update((tp, error.exception(f"Failed to fetch metadata for partition {tp} because metadata for "
                                                   f"topic `{topic.name}` could not be found")) for tp in mine)
            elif error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.LEADER_NOT_AVAILABLE, Errors.BROKER_NOT_AVAILABLE):
                pass
            elif error is Errors.TOPIC_AUTHORIZATION_FAILED:
                failed.update((tp, error.exception(f"Failed to fetch metadata for partition {tp} due to topic "
                                                   "authorization failure")) for tp in mine)
            elif error is Errors.INVALID_TOPIC_EXCEPTION:
                failed.update((tp, error.exception(f"Failed to fetch metadata for partition {tp} due to invalid topic "
                                                   f"`{topic.name}`")) for tp in mine)
            else:
                failed.update((tp, error.exception(f"Failed to fetch metadata for partition {tp} due to unexpected error "
                                                   f"for topic `{topic.name}`")) for tp in mine)
            continue
        # 2. Per wanted partition: a retriable error or no leader retries, another error fails.
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if tp not in wanted:
                continue
            partition_error = Errors.for_code(p.error_code)
            if partition_error is not Errors.NONE:
                if partition_error not in retry_partition:
                    failed[tp] = partition_error.exception(f"Unexpected error during metadata lookup for {tp}")
                continue
            if p.leader_id >= 0:
                mapped[tp] = p.leader_id
    return mapped, failed

