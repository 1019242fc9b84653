"""BeginQuorumEpoch: a new leader tells the voters it leads the epoch.

Mirrors org.apache.kafka.common.requests.BeginQuorumEpochRequest / BeginQuorumEpochResponse (BeginQuorumEpoch of KIP-595) for the one
partition of the metadata quorum, ``__cluster_metadata-0``. The leader sends it until each voter has answered or fetched from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class BeginQuorumEpochResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.message.BeginQuorumEpochResponseData.

    ``error_code`` is the top-level error (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST),
    ``partition_error_code`` the partition's; ``leader_id``/``leader_epoch`` are what the
    responder knows of the current leader.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BEGIN_QUORUM_EPOCH
    API_NAME: ClassVar[str] = "BeginQuorumEpoch"
    error_code: int = 0
    partition_error_code: int = 0
    leader_id: int = -1
    leader_epoch: int = -1

    def error_counts(self) -> dict[int, int]:
        """Mirrors AbstractResponse#errorCounts."""
        return {self.error_code or self.partition_error_code: 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class BeginQuorumEpochRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.message.BeginQuorumEpochRequestData.

    ``leader_id`` leads ``leader_epoch``.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.BEGIN_QUORUM_EPOCH
    API_NAME: ClassVar[str] = "BeginQuorumEpoch"
    RESPONSE_TYPE: ClassVar[type] = BeginQuorumEpochResponse
    cluster_id: str = ""
    leader_id: int = -1
    leader_epoch: int = -1

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> BeginQuorumEpochResponse:
        """Mirrors BeginQuorumEpochRequest#getErrorResponse (top-level error)."""
        return BeginQuorumEpochResponse(error_code=error_code)


BeginQuorumEpochResponse.REQUEST_TYPE = BeginQuorumEpochRequest
