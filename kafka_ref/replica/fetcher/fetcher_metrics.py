"""The fetcher's metrics: fetch requests, bytes, and per-partition lag.

Mirrors kafka.server.FetcherStats, FetcherLagStats and FetcherLagMetrics (defined in
AbstractFetcherThread.scala). Kafka registers Yammer gauges and meters; here they are plain
counters and values the tests, the managers' MaxLag gauge and the benchmarks read directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.common.topic_partition import TopicPartition


class Meter:
    """Mirrors com.yammer.metrics.core.Meter, counting only: ``count`` of marks.

    Rates would need a clock per mark; the benchmarks compute rates from counts and loop time.
    """

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def mark(self, n: int = 1) -> None:
        """Mirrors com.yammer.metrics.core.Meter#mark."""
        self.count += n


class FetcherMetrics:
    """Mirrors kafka.server.FetcherMetrics: the names of the fetcher's metrics."""

    CONSUMER_LAG = "ConsumerLag"
    REQUESTS_PER_SEC = "RequestsPerSec"
    BYTES_PER_SEC = "BytesPerSec"


class FetcherStats:
    """Mirrors kafka.server.FetcherStats: fetch requests sent and bytes appended.

    ``metric_names`` stands in for the Yammer registry: the two meters are registered until
    ``unregister``.
    """

    def __init__(self) -> None:
        self.request_rate = Meter()
        self.byte_rate = Meter()
        self._registered = True

    def metric_names(self) -> set[str]:
        """The names of this fetcher's meters still registered."""
        return {FetcherMetrics.REQUESTS_PER_SEC, FetcherMetrics.BYTES_PER_SEC} if self._registered else set()

    def unregister(self) -> None:
        """Mirrors kafka.server.FetcherStats#unregister: remove both meters from the registry."""
        self._registered = False


@dataclass(slots=True)
class FetcherLagMetrics:
    """Mirrors kafka.server.FetcherLagMetrics: the ConsumerLag gauge of one partition (-1 unknown)."""

    lag: int = -1


class FetcherLagStats:
    """Mirrors kafka.server.FetcherLagStats: one lag gauge per partition of this fetcher."""

    def __init__(self) -> None:
        self.stats: dict[TopicPartition, FetcherLagMetrics] = {}

    def get_and_maybe_put(self, topic_partition: TopicPartition) -> FetcherLagMetrics:
        """Mirrors FetcherLagStats#getAndMaybePut."""
        metrics = self.stats.get(topic_partition)
        if metrics is None:
            metrics = self.stats[topic_partition] = FetcherLagMetrics()
        return metrics

    def unregister(self, topic_partition: TopicPartition | None = None) -> None:
        """Mirrors FetcherLagStats#unregister: one partition's gauge, or all without an argument."""
        if topic_partition is None:
            self.stats.clear()
        else:
            self.stats.pop(topic_partition, None)

    def metric_names(self) -> set[str]:
        """The names of the lag gauges still registered (one ConsumerLag per partition, tagged by partition)."""
        return {FetcherMetrics.CONSUMER_LAG} if self.stats else set()
