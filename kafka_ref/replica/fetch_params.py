"""Mirrors org.apache.kafka.server.storage.log.FetchParams: who fetches and how long to wait."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafka_ref.log.fetch_data import FetchIsolation


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class FetchParams:
    """Mirrors org.apache.kafka.server.storage.log.FetchParams."""

    replica_id: int
    replica_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation: FetchIsolation
    hard_max_bytes_limit: bool = False
    # The consumer's rack and identity (Fetch v11+, KIP-392); None for older requests.
    client_metadata: Any = None
    # Who is asking, set once per request (read for every partition of the fetch):
    # a follower (replica id >= 0), a consumer (-1), and whether only the leader may answer
    # (followers, and consumers whose request carries no client metadata: before v11).
    is_from_follower: bool = field(init=False, repr=False, compare=False)
    is_from_consumer: bool = field(init=False, repr=False, compare=False)
    fetch_only_leader: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.is_from_follower = self.replica_id >= 0
        self.is_from_consumer = self.replica_id == -1
        self.fetch_only_leader = self.is_from_follower or (self.is_from_consumer and self.client_metadata is None)
