"""Produce: a producer appends record batches to partition leaders.

Mirrors org.apache.kafka.common.requests.ProduceRequest / ProduceResponse and the message
schemas ProduceRequest.json / ProduceResponse.json at versions 11 / 11 (Kafka 3.8; the
response's ``current_leader`` and ``node_endpoints`` come from KIP-951).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kafka_ref.common.errors import InvalidRecordException
from kafka_ref.common.records import MemoryRecords
from kafka_ref.common.records.constants import TRANSACTIONAL_FLAG_MASK
from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.fetch import LeaderIdAndEpoch, NodeEndpoint
from kafka_ref.common.topic_partition import TopicPartition

# --------------------------------------------------------------------------------------------
# Response
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchIndexAndErrorMessage:
    """Mirrors org.apache.kafka.common.message.ProduceResponseData.BatchIndexAndErrorMessage.

    Which record of the batch made the broker reject it (KIP-467), and why.
    """

    batch_index: int = 0
    batch_index_error_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionProduceResponse:
    """Mirrors org.apache.kafka.common.message.ProduceResponseData.PartitionProduceResponse.

    The result of appending to one partition: the offset given to the first record, the
    append time when the topic uses LogAppendTime (-1 otherwise), the log start offset, and
    for a rejected batch the offending records and a summary message.
    """

    index: int = 0
    error_code: int = 0
    base_offset: int = 0
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: tuple[BatchIndexAndErrorMessage, ...] = ()
    error_message: str | None = None
    current_leader: LeaderIdAndEpoch = LeaderIdAndEpoch()


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicProduceResponse:
    """Mirrors org.apache.kafka.common.message.ProduceResponseData.TopicProduceResponse."""

    name: str = ""
    partition_responses: tuple[PartitionProduceResponse, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProduceResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ProduceResponse.

    Per-partition append results grouped by topic, the throttle time, and the endpoints of
    any new leaders named in the results.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.PRODUCE
    API_NAME: ClassVar[str] = ApiKeys.PRODUCE.api_name

    INVALID_OFFSET: ClassVar[int] = -1

    responses: tuple[TopicProduceResponse, ...] = ()
    throttle_time_ms: int = 0
    node_endpoints: tuple[NodeEndpoint, ...] = ()

    @classmethod
    def of(
        cls,
        responses: Mapping[TopicPartition, PartitionProduceResponse],
        throttle_time_ms: int = 0,
        node_endpoints: Iterable[NodeEndpoint] = (),
    ) -> ProduceResponse:
        """Mirrors org.apache.kafka.common.requests.ProduceResponse#ProduceResponse(Map, int).

        Groups per-partition results by topic (first-seen topic order); the partition index
        comes from the map key.
        """
        # 1. Group by topic, taking each index from its TopicPartition.
        # (A topic's list is made with its first partition, and the entries by a list comprehension,
        #  not a generator: every produce response is built here.)
        grouped: dict[str, list[PartitionProduceResponse]] = {}
        for tp, response in responses.items():
            if response.index != tp.partition:
                response = dataclasses.replace(response, index=tp.partition)
            partitions = grouped.get(tp.topic)
            if partitions is None:
                grouped[tp.topic] = [response]
            else:
                partitions.append(response)
        # 2. Build the topic entries.
        return cls(
            responses=tuple([TopicProduceResponse(name=n, partition_responses=tuple(p)) for n, p in grouped.items()]),
            throttle_time_ms=throttle_time_ms,
            node_endpoints=tuple(node_endpoints),
        )

    def responses_by_partition(self) -> dict[TopicPartition, PartitionProduceResponse]:
        """Every partition result keyed by TopicPartition, in response order."""
        return {
            TopicPartition(topic.name, partition.index): partition
            for topic in self.responses
            for partition in topic.partition_responses
        }

    def partition_errors(self) -> dict[TopicPartition, int]:
        """The error code of every partition, keyed by TopicPartition."""
        return {tp: p.error_code for tp, p in self.responses_by_partition().items()}

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ProduceResponse#errorCounts."""
        return error_counts_of(p.error_code for t in self.responses for p in t.partition_responses)


# --------------------------------------------------------------------------------------------
# Request
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionProduceData:
    """Mirrors org.apache.kafka.common.message.ProduceRequestData.PartitionProduceData.

    The batches to append to one partition (MemoryRecords.EMPTY stands for Kafka's null).
    """

    index: int = 0
    records: MemoryRecords = MemoryRecords.EMPTY


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicProduceData:
    """Mirrors org.apache.kafka.common.message.ProduceRequestData.TopicProduceData."""

    name: str = ""
    partition_data: tuple[PartitionProduceData, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProduceRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ProduceRequest.

    ``acks`` is 0 (no response at all), 1 (the leader's append) or -1 (the whole ISR);
    ``timeout_ms`` bounds the wait for acks=-1. ``transactional_id`` is None outside
    transactions.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.PRODUCE
    API_NAME: ClassVar[str] = ApiKeys.PRODUCE.api_name
    RESPONSE_TYPE: ClassVar[type[ProduceResponse]] = ProduceResponse

    transactional_id: str | None = None
    acks: int = 0
    timeout_ms: int = 0
    topic_data: tuple[TopicProduceData, ...] = ()

    @classmethod
    def build(
        cls,
        *,
        acks: int,
        timeout_ms: int,
        records: Mapping[TopicPartition, MemoryRecords],
        transactional_id: str | None = None,
    ) -> ProduceRequest:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#sendProduceRequest.

        Builds the request a producer sends to one leader: the records per partition,
        grouped by topic in first-seen topic order.
        """
        # 1. Group partitions by topic.
        grouped: dict[str, list[PartitionProduceData]] = {}
        for tp, data in records.items():
            grouped.setdefault(tp.topic, []).append(PartitionProduceData(index=tp.partition, records=data))
        # 2. Build the message.
        return cls(
            transactional_id=transactional_id,
            acks=acks,
            timeout_ms=timeout_ms,
            topic_data=tuple(TopicProduceData(name=n, partition_data=tuple(p)) for n, p in grouped.items()),
        )

    def partition_records(self) -> dict[TopicPartition, MemoryRecords]:
        """The records to append to each partition, keyed by TopicPartition, in request order."""
        return {
            TopicPartition(topic.name, partition.index): partition.records
            for topic in self.topic_data
            for partition in topic.partition_data
        }

    def partition_sizes(self) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.common.requests.ProduceRequest#partitionSizes.

        The byte size of each partition's records; a partition listed twice adds up.
        """
        sizes: dict[TopicPartition, int] = {}
        for topic in self.topic_data:
            for partition in topic.partition_data:
                tp = TopicPartition(topic.name, partition.index)
                size = 0 if partition.records is None else partition.records.size_in_bytes
                sizes[tp] = sizes.get(tp, 0) + size
        return sizes

    def get_error_response(
        self, error_code: int, throttle_time_ms: int = 0, error_message: str | None = None
    ) -> ProduceResponse | None:
        """Mirrors org.apache.kafka.common.requests.ProduceRequest#getErrorResponse.

        None when acks=0 (the producer expects no response). Otherwise every partition gets
        the error with base offset and log start offset -1 and no append time.
        ``error_message`` is the text of the exception when it differs from the code's
        default (Kafka's ApiError message); None otherwise.
        """
        # 1. A producer with acks=0 gets no response.
        if self.acks == 0:
            return None
        # 2. One error result per partition, grouped by topic.
        results = {
            tp: PartitionProduceResponse(
                index=tp.partition,
                error_code=error_code,
                base_offset=ProduceResponse.INVALID_OFFSET,
                log_append_time_ms=-1,
                log_start_offset=ProduceResponse.INVALID_OFFSET,
                record_errors=(),
                error_message=error_message,
            )
            for tp in self.partition_sizes()
        }
        return ProduceResponse.of(results, throttle_time_ms)


ProduceResponse.REQUEST_TYPE = ProduceRequest


def has_transactional_records(request: "ProduceRequest") -> bool:
    """Mirrors org.apache.kafka.common.requests.RequestUtils#hasTransactionalRecords: does any
    partition's first batch carry the transactional flag? (Attributes read directly: one pass
    over the partitions, no call per partition.)"""
    for topic in request.topic_data:
        for partition in topic.partition_data:
            batches = partition.records.batches
            if batches and batches[0].attributes & TRANSACTIONAL_FLAG_MASK:
                return True
    return False


def validate_records(records: Any) -> None:
    """Mirrors org.apache.kafka.common.requests.ProduceRequest#validateRecords (v3+ requests).

    A produce request carries exactly one v2 record batch per partition: none, or more than
    one, is INVALID_RECORD.
    """
    # 1. At least one batch; 2. no more than one.
    # (A MemoryRecords' own batch tuple is read as it is: no list built per produced partition.)
    if records.__class__ is MemoryRecords:
        batches = records.batches
    else:
        batches = list(records) if records is not None else []
    if not batches:
        raise InvalidRecordException("Produce requests must have at least one record batch per partition")
    if len(batches) > 1:
        raise InvalidRecordException("Produce requests are only allowed to contain exactly one record batch per partition")
