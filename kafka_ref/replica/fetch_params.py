"""Mirrors org.apache.kafka.server.storage.log.FetchParams: who fetches and how long to wait."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_ref.log.fetch_data import FetchIsolation


@dataclass(frozen=True, slots=True)
class FetchParams:
    """Mirrors org.apache.kafka.server.storage.log.FetchParams."""

    replica_id: int
    replica_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation: FetchIsolation
    hard_max_bytes_limit: bool = False

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0

    @property
    def is_from_consumer(self) -> bool:
        return self.replica_id == -1

    @property
    def fetch_only_leader(self) -> bool:
        """Followers and (rack-unaware) consumers must read from the leader (no KIP-392 here)."""
        return self.is_from_follower or self.is_from_consumer
