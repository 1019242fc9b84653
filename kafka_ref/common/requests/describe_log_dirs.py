"""DescribeLogDirs: an admin client asks a broker which partitions its log directories hold, and how big.

Mirrors org.apache.kafka.common.requests.DescribeLogDirsRequest / DescribeLogDirsResponse and the
message schemas DescribeLogDirsRequest.json / DescribeLogDirsResponse.json (versions 1-4 on the
wire: kafka-python's schemas start at 1, and v5's cordoned flag is Kafka 4). The request names
partitions per topic, or null for every partition; the answer has one result per log directory,
each with its partitions' sizes and offset lags, and from v3 a top-level error, from v4 the
volume's total and usable bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition

# Mirrors DescribeLogDirsResponse.INVALID_OFFSET_LAG: the lag of a replica with no online log here.
INVALID_OFFSET_LAG = -1
# Mirrors DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES: total/usable bytes not known.
UNKNOWN_VOLUME_BYTES = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeLogDirsPartition:
    """Mirrors org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsPartition."""

    partition_index: int = 0
    partition_size: int = 0
    offset_lag: int = 0
    is_future_key: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeLogDirsTopic:
    """Mirrors org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsTopic."""

    name: str = ""
    partitions: tuple[DescribeLogDirsPartition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeLogDirsResult:
    """Mirrors org.apache.kafka.common.message.DescribeLogDirsResponseData.DescribeLogDirsResult."""

    error_code: int = 0
    log_dir: str = ""
    topics: tuple[DescribeLogDirsTopic, ...] = ()
    total_bytes: int = UNKNOWN_VOLUME_BYTES
    usable_bytes: int = UNKNOWN_VOLUME_BYTES


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeLogDirsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DescribeLogDirsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_LOG_DIRS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_LOG_DIRS.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    results: tuple[DescribeLogDirsResult, ...] = ()

    def partitions_by_dir(self) -> dict[str, dict[TopicPartition, DescribeLogDirsPartition]]:
        """Each log directory's partitions, keyed by TopicPartition."""
        return {r.log_dir: {TopicPartition(t.name, p.partition_index): p for t in r.topics for p in t.partitions}
                for r in self.results}

    def error_counts(self) -> dict[int, int]:
        """Mirrors DescribeLogDirsResponse#errorCounts: the top-level error and each directory's."""
        return error_counts_of([self.error_code, *(r.error_code for r in self.results)])


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribableLogDirTopic:
    """Mirrors org.apache.kafka.common.message.DescribeLogDirsRequestData.DescribableLogDirTopic."""

    topic: str = ""
    partitions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeLogDirsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DescribeLogDirsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_LOG_DIRS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_LOG_DIRS.api_name
    RESPONSE_TYPE: ClassVar[type[DescribeLogDirsResponse]] = DescribeLogDirsResponse

    topics: tuple[DescribableLogDirTopic, ...] | None = None

    @classmethod
    def of(cls, partitions: list[TopicPartition] | None) -> "DescribeLogDirsRequest":
        """Build the request (None: every partition), grouped by topic in the order first seen."""
        if partitions is None:
            return cls(topics=None)
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return cls(topics=tuple(DescribableLogDirTopic(topic=t, partitions=tuple(ps)) for t, ps in by_topic.items()))

    def is_all_topic_partitions(self) -> bool:
        """Mirrors DescribeLogDirsRequest#isAllTopicPartitions: a null topic list asks for everything."""
        return self.topics is None

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DescribeLogDirsResponse:
        """Mirrors DescribeLogDirsRequest#getErrorResponse: the top-level error, no directories."""
        return DescribeLogDirsResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


DescribeLogDirsResponse.REQUEST_TYPE = DescribeLogDirsRequest
