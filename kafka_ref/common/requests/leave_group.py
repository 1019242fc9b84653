"""LeaveGroup: members leave a group without waiting for their session to expire.

Mirrors org.apache.kafka.common.requests.LeaveGroupRequest / LeaveGroupResponse and the
message schemas LeaveGroupRequest.json / LeaveGroupResponse.json at version 5 (Kafka 3.8;
batched members since v3 for KIP-345, a reason per member since v5 for KIP-800).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberResponse:
    """Mirrors org.apache.kafka.common.message.LeaveGroupResponseData.MemberResponse."""

    member_id: str = ""
    group_instance_id: str | None = None
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.LeaveGroupResponse: a group error and one result per member."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LEAVE_GROUP
    API_NAME: ClassVar[str] = ApiKeys.LEAVE_GROUP.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    members: tuple[MemberResponse, ...] = ()

    def top_level_error(self) -> int:
        """Mirrors org.apache.kafka.common.requests.LeaveGroupResponse#topLevelError: the group-level error alone."""
        return self.error_code

    def error(self) -> int:
        """Mirrors org.apache.kafka.common.requests.LeaveGroupResponse#error (its getError).

        The group error if there is one, else the first member error, else NONE.
        """
        # 1. The group-level error wins; 2. otherwise the first failing member.
        if self.error_code != 0:
            return self.error_code
        for member in self.members:
            if member.error_code != 0:
                return member.error_code
        return 0

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.LeaveGroupResponse#errorCounts."""
        return error_counts_of([self.error_code, *(m.error_code for m in self.members)])


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberIdentity:
    """Mirrors org.apache.kafka.common.message.LeaveGroupRequestData.MemberIdentity."""

    member_id: str = ""
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.LeaveGroupRequest (the batched form)."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LEAVE_GROUP
    API_NAME: ClassVar[str] = ApiKeys.LEAVE_GROUP.api_name
    RESPONSE_TYPE: ClassVar[type[LeaveGroupResponse]] = LeaveGroupResponse

    group_id: str = ""
    members: tuple[MemberIdentity, ...] = ()

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> LeaveGroupResponse:
        """Mirrors org.apache.kafka.common.requests.LeaveGroupRequest#getErrorResponse (group error, no members)."""
        return LeaveGroupResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


LeaveGroupResponse.REQUEST_TYPE = LeaveGroupRequest
