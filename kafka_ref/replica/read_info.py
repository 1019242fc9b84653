"""Results of reads on the leader.

Mirrors org.apache.kafka.storage.internals.log.LogReadInfo, kafka.server.LogReadResult and the
EpochEndOffset of OffsetForLeaderEpoch / the fetch response's diverging epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.offsets_for_leader_epoch import EpochEndOffset
from kafka_ref.log.fetch_data import FetchDataInfo


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class LogReadInfo:
    """Mirrors org.apache.kafka.storage.internals.log.LogReadInfo: a read plus the offsets before it."""

    fetched_data: FetchDataInfo
    diverging_epoch: EpochEndOffset | None
    high_watermark: int
    log_start_offset: int
    log_end_offset: int
    last_stable_offset: int


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class LogReadResult:
    """Mirrors kafka.server.LogReadResult: one partition's outcome in ReplicaManager#readFromLog."""

    info: FetchDataInfo | None
    diverging_epoch: EpochEndOffset | None
    high_watermark: int
    leader_log_start_offset: int
    leader_log_end_offset: int
    follower_log_start_offset: int
    fetch_time_ms: int
    last_stable_offset: int
    error: Errors = Errors.NONE
    exception: BaseException | None = None
    # The replica the leader's replica selector sends a consumer to (KIP-392); None: read here.
    preferred_read_replica: int | None = None

    @property
    def bytes(self) -> int:
        return self.info.records.size_in_bytes if self.info is not None else 0

__all__ = ["EpochEndOffset", "LogReadInfo", "LogReadResult"]
