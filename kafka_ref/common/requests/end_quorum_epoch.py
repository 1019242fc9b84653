"""EndQuorumEpoch: a resigning leader asks the voters to elect a successor now.

Mirrors org.apache.kafka.common.requests.EndQuorumEpochRequest / EndQuorumEpochResponse (EndQuorumEpoch of KIP-595) for the one
partition of the metadata quorum, ``__cluster_metadata-0``. A follower of that leader stops waiting for its fetch timeout: the first preferred successor
becomes a candidate at once, the others after a backoff that grows with their position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class EndQuorumEpochResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.message.EndQuorumEpochResponseData.

    ``error_code`` is the top-level error (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST),
    ``partition_error_code`` the partition's; ``leader_id``/``leader_epoch`` are what the
    responder knows of the current leader.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.END_QUORUM_EPOCH
    API_NAME: ClassVar[str] = "EndQuorumEpoch"
    error_code: int = 0
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = -1

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        return {self.error_code or self.partition_error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class EndQuorumEpochRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.message.EndQuorumEpochRequestData.

    ``leader_id`` resigns ``leader_epoch``; ``preferred_successors`` are the other voters, the
    most caught up first.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.END_QUORUM_EPOCH
    API_NAME: ClassVar[str] = "EndQuorumEpoch"
    RESPONSE_TYPE: ClassVar[type] = EndQuorumEpochResponse
    cluster_id: str = ""
    leader_id: int = -1
    leader_epoch: int = -1
    preferred_successors: tuple[int, ...] = ()

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> EndQuorumEpochResponse:
        """Mirrors EndQuorumEpochRequest#getErrorResponse (top-level error)."""
        return EndQuorumEpochResponse(error_code=error_code)


EndQuorumEpochResponse.REQUEST_TYPE = EndQuorumEpochRequest
