"""How a fetcher talks to the leader it replicates from.

Mirrors kafka.server.LeaderEndPoint (the interface) and kafka.server.RemoteLeaderEndPoint
(Kafka 3.8): build the Fetch request through the KIP-227 fetch session, send Fetch,
OffsetsForLeaderEpoch and ListOffsets to the leader broker, and turn the answers into the
per-partition data the fetcher thread processes.

The wire versions Kafka picks from ``inter.broker.protocol.version`` decide which fields a
follower can send; our request dataclasses always have every field, so the era rules are
applied here by leaving a field at its "absent" value:

* current leader epoch in Fetch / ListOffsets / OffsetsForLeaderEpoch: from IBP 2.1 (KIP-320);
* last fetched epoch in Fetch (truncation on fetch): from IBP 2.7 (KIP-595);
* the leader epoch in the OffsetsForLeaderEpoch answer: from IBP 2.0 (KIP-279, request v1).
  Before that the v0 answer only has an end offset, so we drop the epoch from the answer.
"""

from __future__ import annotations

import abc
import structlog
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kafka_ref.common.errors import Errors, KafkaStorageException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    UNDEFINED_EPOCH,
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
)
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.network.network import DisconnectException
from kafka_ref.replica.partition import Partition
from kafka_ref.replica.fetcher.partition_fetch_state import (
    FETCHING,
    BrokerEndPoint,
    IllegalStateException,
    OffsetAndEpoch,
    PartitionFetchState,
)
from kafka_ref.server.fetch_session_handler import FetchRequestPartitionData, FetchSessionHandler

if TYPE_CHECKING:
    from kafka_ref.common.config import KafkaConfig
    from kafka_ref.network.network import Network

log = structlog.get_logger("kafka.server.RemoteLeaderEndPoint")


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class ResultWithPartitions:
    """Mirrors kafka.server.AbstractFetcherThread.ResultWithPartitions."""

    result: Any
    partitions_with_error: frozenset[TopicPartition] = frozenset()


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class ReplicaFetch:
    """Mirrors kafka.server.AbstractFetcherThread.ReplicaFetch.

    ``partition_data`` is every partition of the fetch session (sent or implied) with what we
    asked for it; the fetcher checks responses against it.
    """

    partition_data: dict[TopicPartition, FetchRequestPartitionData]
    fetch_request: Any


class LeaderEndPoint(abc.ABC):
    """Mirrors kafka.server.LeaderEndPoint: what a fetcher needs from its leader."""

    @property
    @abc.abstractmethod
    def is_truncation_on_fetch_supported(self) -> bool:
        """Mirrors LeaderEndPoint#isTruncationOnFetchSupported (IBP >= 2.7)."""

    def initiate_close(self) -> None:
        """Mirrors LeaderEndPoint#initiateClose."""

    def close(self) -> None:
        """Mirrors LeaderEndPoint#close."""

    @abc.abstractmethod
    def broker_end_point(self) -> BrokerEndPoint:
        """Mirrors LeaderEndPoint#brokerEndPoint: the leader this end point reaches."""

    @abc.abstractmethod
    async def fetch(self, fetch_request: Any) -> Mapping[TopicPartition, PartitionData]:
        """Mirrors LeaderEndPoint#fetch: send a fetch, return each partition's answer."""

    @abc.abstractmethod
    async def fetch_earliest_offset(self, topic_partition: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        """Mirrors LeaderEndPoint#fetchEarliestOffset: the leader's log start offset."""

    @abc.abstractmethod
    async def fetch_latest_offset(self, topic_partition: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        """Mirrors LeaderEndPoint#fetchLatestOffset: the leader's log end offset."""

    @abc.abstractmethod
    async def fetch_epoch_end_offsets(
        self, partitions: Mapping[TopicPartition, OffsetForLeaderPartition]
    ) -> dict[TopicPartition, EpochEndOffset]:
        """Mirrors LeaderEndPoint#fetchEpochEndOffsets: one OffsetsForLeaderEpoch round trip."""

    @abc.abstractmethod
    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        """Mirrors LeaderEndPoint#buildFetch: a ReplicaFetch (or None) plus partitions in error."""


class RemoteLeaderEndPoint(LeaderEndPoint):
    """Mirrors kafka.server.RemoteLeaderEndPoint: the leader is another broker on the network.

    ``replica_manager`` is used for ``local_broker_id`` and, when building a fetch, for the
    follower's log start offset (``get_partition_or_exception(tp).local_log_or_exception``).
    """

    def __init__(
        self,
        log_prefix: str,
        network: Network,
        source_broker: BrokerEndPoint,
        fetch_session_handler: FetchSessionHandler,
        broker_config: KafkaConfig,
        replica_manager: Any,
        metadata_version_supplier: Callable[[], MetadataVersion] | None = None,
        broker_epoch_supplier: Callable[[], int] | None = None,
    ) -> None:
        self.log_prefix = log_prefix
        self.network = network
        self.source_broker = source_broker
        self.fetch_session_handler = fetch_session_handler
        self.broker_config = broker_config
        self.replica_manager = replica_manager
        self.metadata_version_supplier = metadata_version_supplier or (lambda: broker_config.inter_broker_protocol_version)
        self.broker_epoch_supplier = broker_epoch_supplier or (lambda: -1)
        self.max_wait = broker_config.get("replica.fetch.wait.max.ms")
        self.min_bytes = broker_config.get("replica.fetch.min.bytes")
        self.max_bytes = broker_config.get("replica.fetch.response.max.bytes")
        self.fetch_size = broker_config.get("replica.fetch.max.bytes")
        self.socket_timeout_ms = broker_config.get("replica.socket.timeout.ms")
        self._closed = False

    # -- era switches ----------------------------------------------------------------------

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        """Mirrors RemoteLeaderEndPoint#isTruncationOnFetchSupported (IBP >= 2.7)."""
        return self.metadata_version_supplier().truncates_on_fetch

    @property
    def _sends_current_leader_epoch(self) -> bool:
        # KIP-320 (IBP 2.1): Fetch v9, ListOffsets v4, OffsetsForLeaderEpoch v2 carry it.
        return self.metadata_version_supplier().is_at_least("2.1")

    @property
    def _epoch_in_epoch_response(self) -> bool:
        # KIP-279 (IBP 2.0): OffsetsForLeaderEpoch v1 answers with the epoch as well.
        return self.metadata_version_supplier().uses_kip279_truncation

    # -- plumbing --------------------------------------------------------------------------

    def initiate_close(self) -> None:
        """Mirrors RemoteLeaderEndPoint#initiateClose: no request is sent after this."""
        self._closed = True

    def close(self) -> None:
        """Mirrors RemoteLeaderEndPoint#close."""
        self._closed = True

    def broker_end_point(self) -> BrokerEndPoint:
        """Mirrors RemoteLeaderEndPoint#brokerEndPoint."""
        return self.source_broker

    async def _send(self, request: Any) -> Any:
        """Mirrors BlockingSend#sendRequest: one request to the leader, waiting for its answer."""
        if self._closed:
            raise DisconnectException(f"{self.log_prefix}end point to broker {self.source_broker.id} is closed")
        local_id = self.replica_manager.local_broker_id
        return await self.network.send(local_id, self.source_broker.id, request, timeout_ms=self.socket_timeout_ms)

    # -- Fetch -----------------------------------------------------------------------------

    async def fetch(self, fetch_request: FetchRequest) -> dict[TopicPartition, PartitionData]:
        """Mirrors RemoteLeaderEndPoint#fetch."""
        # 1. Send; a failure ends the session (the next fetch is full).
        try:
            response: FetchResponse = await self._send(fetch_request)
        except RUN_ENDING:
            raise
        except Exception as exc:
            self.fetch_session_handler.handle_error(exc)
            raise
        # 2. A response the session cannot use yields nothing (or the topic id error).
        version = fetch_request.version  # (build_fetch always sets it)
        if not self.fetch_session_handler.handle_response(
                response, version if version is not None else fetch_request.request_version()):
            if response.error_code == Errors.FETCH_SESSION_TOPIC_ID_ERROR.code:
                raise Errors.FETCH_SESSION_TOPIC_ID_ERROR.exception()
            return {}
        # 3. Each partition's answer, named through the session's topic ids.
        return response.response_data(self.fetch_session_handler.session_topic_names)

    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        """Mirrors RemoteLeaderEndPoint#buildFetch.

        Lists every ready partition in the session builder (which keeps only the changed
        ones in an incremental request), asking ``replica.fetch.max.bytes`` per partition.
        """
        partitions_with_error: set[TopicPartition] = set()
        builder = self.fetch_session_handler.new_builder(len(partition_map), False)
        send_epoch = self._sends_current_leader_epoch
        truncation_on_fetch = self.is_truncation_on_fetch_supported
        fetch_size = self.fetch_size
        replica_manager = self.replica_manager
        hosted = getattr(replica_manager, "all_partitions", None) or {}  # (a test's stand-in may have none)
        # 1. One entry per partition ready to fetch (not truncating, not backing off).
        for tp, fetch_state in partition_map.items():
            # (isReadyForFetch's usual case, fetching with no back-off delay, read as two
            #  attributes: every partition of every fetch asks; any other state asks the property.)
            if (fetch_state.state is not FETCHING or fetch_state.delay is not None) and not fetch_state.is_ready_for_fetch:
                continue
            # (An online partition with its log, the usual case, is read directly: this runs for
            #  every partition of every fetch. Any other goes through getPartitionOrException and
            #  localLogOrException, which raise as Kafka's do.)
            partition = hosted.get(tp)
            log = partition.log if partition.__class__ is Partition else None
            if log is not None:
                log_start_offset = log.log_start_offset
            else:
                try:
                    log_start_offset = replica_manager.get_partition_or_exception(tp).local_log_or_exception.log_start_offset
                except KafkaStorageException:
                    # The log directory is offline; ReplicaManager will remove the partition.
                    partitions_with_error.add(tp)
                    continue
            # (Positional, in the field order topic id, fetch offset, log start offset, max bytes,
            #  current leader epoch, last fetched epoch: one per partition per fetch.)
            topic_id = fetch_state.topic_id
            builder.add(tp, FetchRequestPartitionData(
                topic_id if topic_id is not None else ZERO_UUID,
                fetch_state.fetch_offset,
                log_start_offset,
                fetch_size,
                fetch_state.current_leader_epoch if send_epoch else None,
                fetch_state.last_fetched_epoch if truncation_on_fetch else None,
            ))
        # 2. Let the session decide what to send.
        fetch_data = builder.build()
        if not fetch_data.session_partitions and not fetch_data.to_forget:
            return ResultWithPartitions(None, frozenset(partitions_with_error))
        # 3. The request: session id and epoch, only the listed partitions, and the forgotten ones,
        #    at the IBP's Fetch version (12 when a partition has no topic id: v13+ names by id).
        metadata = fetch_data.metadata
        version = self.metadata_version_supplier().fetch_request_version()
        if version >= FetchRequest.TOPIC_ID_VERSION and not fetch_data.can_use_topic_ids:
            version = FetchRequest.TOPIC_ID_VERSION - 1
        request = FetchRequest.build(
            fetch_data={
                TopicIdPartition(data.topic_id, tp): data.to_fetch_partition(tp.partition)
                for tp, data in fetch_data.to_send.items()
            },
            max_wait_ms=self.max_wait,
            min_bytes=self.min_bytes,
            replica_id=self.replica_manager.local_broker_id,
            replica_epoch=self.broker_epoch_supplier(),
            max_bytes=self.max_bytes,
            session_id=metadata.session_id,
            session_epoch=metadata.epoch,
            # Before v13 a partition replaced by one of the same name (another topic id) is not
            # forgotten: that would drop the new one (FetchRequest.Builder#build).
            to_forget=list(fetch_data.to_forget) + (list(fetch_data.to_replace) if version >= FetchRequest.TOPIC_ID_VERSION else []),
            version=version,
        )
        return ResultWithPartitions(ReplicaFetch(fetch_data.session_partitions, request), frozenset(partitions_with_error))

    # -- ListOffsets -----------------------------------------------------------------------

    async def fetch_earliest_offset(self, topic_partition: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        """Mirrors RemoteLeaderEndPoint#fetchEarliestOffset."""
        return await self._fetch_offset(topic_partition, current_leader_epoch, ListOffsetsRequest.EARLIEST_TIMESTAMP)

    async def fetch_latest_offset(self, topic_partition: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        """Mirrors RemoteLeaderEndPoint#fetchLatestOffset."""
        return await self._fetch_offset(topic_partition, current_leader_epoch, ListOffsetsRequest.LATEST_TIMESTAMP)

    async def _fetch_offset(self, tp: TopicPartition, current_leader_epoch: int, timestamp: int) -> OffsetAndEpoch:
        """Mirrors RemoteLeaderEndPoint#fetchOffset: one ListOffsets for one partition."""
        # 1. Ask as a replica (replica id = our broker id).
        request = ListOffsetsRequest(
            replica_id=self.replica_manager.local_broker_id,
            topics=(ListOffsetsTopic(name=tp.topic, partitions=(ListOffsetsPartition(
                partition_index=tp.partition,
                current_leader_epoch=current_leader_epoch if self._sends_current_leader_epoch else -1,
                timestamp=timestamp,
            ),)),),
        )
        response: ListOffsetsResponse = await self._send(request)
        # 2. Find our partition's answer; an error becomes its exception.
        answer = response.responses_by_partition().get(tp)
        if answer is None:
            raise IllegalStateException(f"ListOffsets response from broker {self.source_broker.id} has no answer for {tp}")
        error = Errors.for_code(answer.error_code)
        if error is not Errors.NONE:
            raise error.exception()
        return OffsetAndEpoch(answer.offset, answer.leader_epoch)

    # -- OffsetsForLeaderEpoch -------------------------------------------------------------

    async def fetch_epoch_end_offsets(
        self, partitions: Mapping[TopicPartition, OffsetForLeaderPartition]
    ) -> dict[TopicPartition, EpochEndOffset]:
        """Mirrors RemoteLeaderEndPoint#fetchEpochEndOffsets.

        A failed round trip is not raised: every partition gets the error's code, so each
        one backs off and retries.
        """
        # 1. Nothing to ask.
        if not partitions:
            return {}
        if not self._sends_current_leader_epoch:
            partitions = {tp: replace(p, current_leader_epoch=-1) for tp, p in partitions.items()}
        request = OffsetForLeaderEpochRequest.for_follower(self.replica_manager.local_broker_id, partitions)
        try:
            response: OffsetForLeaderEpochResponse = await self._send(request)
        except RUN_ENDING:
            raise
        except Exception as exc:
            # 2. Any failure marks every partition with the matching error code.
            log.warning("offsets_for_leader_epoch_request_failed", fetcher=self.log_prefix.strip(" []"),
                        partitions=sorted(map(str, partitions)), error=repr(exc))
            error = Errors.for_exception(exc)
            return {tp: EpochEndOffset(error_code=error.code, partition=tp.partition) for tp in partitions}
        result = response.epoch_end_offsets()
        # 3. Before KIP-279 the answer carries only the end offset.
        if not self._epoch_in_epoch_response:
            result = {tp: replace(eo, leader_epoch=UNDEFINED_EPOCH) for tp, eo in result.items()}
        return result

    def __repr__(self) -> str:
        return f"RemoteLeaderEndPoint(leader={self.source_broker})"
