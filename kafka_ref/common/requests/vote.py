"""Vote: a candidate asks a voter for its vote in a new epoch.

Mirrors org.apache.kafka.common.requests.VoteRequest / VoteResponse (Vote of KIP-595) for the one
partition of the metadata quorum, ``__cluster_metadata-0``. A voter grants its vote at most once per epoch, and only to a candidate whose log is at
least as up to date as its own (last epoch first, then end offset).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.message.VoteResponseData.

    ``error_code`` is the top-level error (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST),
    ``partition_error_code`` the partition's; ``leader_id``/``leader_epoch`` are what the
    responder knows of the current leader.
    ``vote_granted`` is the answer.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.VOTE
    API_NAME: ClassVar[str] = "Vote"
    error_code: int = 0
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = -1
    vote_granted: bool = False

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        return {self.error_code or self.partition_error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class VoteRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.message.VoteRequestData.

    ``candidate_epoch``/``candidate_id``: who asks, for which epoch; ``last_offset_epoch`` and
    ``last_offset`` the epoch of the candidate's last batch and its log end offset.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.VOTE
    API_NAME: ClassVar[str] = "Vote"
    RESPONSE_TYPE: ClassVar[type] = VoteResponse
    cluster_id: str = ""
    candidate_epoch: int = -1
    candidate_id: int = -1
    last_offset_epoch: int = -1
    last_offset: int = -1

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> VoteResponse:
        """Mirrors VoteRequest#getErrorResponse (top-level error)."""
        return VoteResponse(error_code=error_code)


VoteResponse.REQUEST_TYPE = VoteRequest
