"""SyncGroup: members of a new generation collect their assignment; the leader brings it.

Mirrors org.apache.kafka.common.requests.SyncGroupRequest / SyncGroupResponse and the message
schemas SyncGroupRequest.json / SyncGroupResponse.json at version 5 (Kafka 3.8; v5 adds the
protocol type and name for KIP-559's consistency checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.SyncGroupResponse: this member's assignment."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.SYNC_GROUP
    API_NAME: ClassVar[str] = ApiKeys.SYNC_GROUP.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.SyncGroupResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupRequestAssignment:
    """Mirrors org.apache.kafka.common.message.SyncGroupRequestData.SyncGroupRequestAssignment."""

    member_id: str = ""
    assignment: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.SyncGroupRequest.

    Followers send no assignments; the leader sends one per member.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.SYNC_GROUP
    API_NAME: ClassVar[str] = ApiKeys.SYNC_GROUP.api_name
    RESPONSE_TYPE: ClassVar[type[SyncGroupResponse]] = SyncGroupResponse

    group_id: str = ""
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[SyncGroupRequestAssignment, ...] = ()

    def group_assignment(self) -> dict[str, bytes]:
        """Mirrors org.apache.kafka.common.requests.SyncGroupRequest#groupAssignment."""
        return {a.member_id: a.assignment for a in self.assignments}

    def are_mandatory_protocol_type_and_name_defined(self, version: int = 5) -> bool:
        """Mirrors org.apache.kafka.common.requests.SyncGroupRequest#areMandatoryProtocolTypeAndNamePresent.

        From version 5 both must be present.
        """
        if version >= 5:
            return self.protocol_type is not None and self.protocol_name is not None
        return True

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> SyncGroupResponse:
        """Mirrors org.apache.kafka.common.requests.SyncGroupRequest#getErrorResponse (empty assignment)."""
        return SyncGroupResponse(throttle_time_ms=throttle_time_ms, error_code=error_code, assignment=b"")


SyncGroupResponse.REQUEST_TYPE = SyncGroupRequest
