"""Fetch of ``__cluster_metadata`` as KRaft's Raft client sends and answers it.

Mirrors org.apache.kafka.common.requests.FetchRequest / FetchResponse in the shape
org.apache.kafka.raft.KafkaRaftClient uses for the metadata partition (one topic, one partition).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.uuid import METADATA_TOPIC_ID, Uuid
from kafka_ref.image.records import Batch

# KafkaRaftClient's fetch long-poll (FETCH_MAX_WAIT_MS).
FETCH_MAX_WAIT_MS = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataFetchResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.message.FetchResponseData as KafkaRaftClient answers for __cluster_metadata.

    One partition (``__cluster_metadata-0``): the batches from the fetch offset, the leader's
    high watermark, and who leads at which epoch (``leader_id``/``leader_epoch``: the partition's
    currentLeader, also set on an error so a fetcher can find the new leader).
    ``error_code`` is the top-level error, ``partition_error_code`` the partition's
    (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER). When the fetcher's log
    has diverged from the leader's, ``diverging_epoch``/``diverging_end_offset`` say where the
    fetcher's last epoch ends on the leader (FetchResponseData.EpochEndOffset) and no batches come.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FETCH
    API_NAME: ClassVar[str] = "Fetch"
    error_code: int = 0
    partition_error_code: int = 0
    high_watermark: int = -1
    log_start_offset: int = 0
    leader_id: int = -1
    leader_epoch: int = -1
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    batches: tuple[Batch, ...] = ()

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        if self.error_code:
            return {self.error_code: 1}
        return {self.partition_error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataFetchRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.message.FetchRequestData as a KRaft observer sends it for __cluster_metadata.

    ``replica_id`` is the fetching node (a voter, or a broker: an observer); ``fetch_offset``
    its log end; ``last_fetched_epoch`` the epoch of its last batch; ``max_wait_ms`` how long
    the leader may hold the request when it has nothing new.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.FETCH
    API_NAME: ClassVar[str] = "Fetch"
    RESPONSE_TYPE: ClassVar[type] = MetadataFetchResponse
    cluster_id: str = ""
    replica_id: int = -1
    topic_id: Uuid = METADATA_TOPIC_ID
    current_leader_epoch: int = -1
    fetch_offset: int = 0
    last_fetched_epoch: int = -1
    max_wait_ms: int = FETCH_MAX_WAIT_MS

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> MetadataFetchResponse:
        """Mirrors FetchRequest#getErrorResponse (top-level error)."""
        return MetadataFetchResponse(error_code=error_code)


MetadataFetchResponse.REQUEST_TYPE = MetadataFetchRequest
