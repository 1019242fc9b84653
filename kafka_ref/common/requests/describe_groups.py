"""DescribeGroups: state, protocol and members of consumer groups.

Mirrors org.apache.kafka.common.requests.DescribeGroupsRequest / DescribeGroupsResponse and the
message schemas DescribeGroupsRequest.json / DescribeGroupsResponse.json at version 5 (Kafka 3.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys

AUTHORIZED_OPERATIONS_OMITTED = -2147483648


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedGroupMember:
    """Mirrors org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroupMember."""

    member_id: str = ""
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    member_metadata: bytes = b""
    member_assignment: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedGroup:
    """Mirrors org.apache.kafka.common.message.DescribeGroupsResponseData.DescribedGroup.

    ``protocol_data`` is the chosen protocol (assignor) name; members carry metadata and
    assignment only while the group is Stable.
    """

    error_code: int = 0
    group_id: str = ""
    group_state: str = ""
    protocol_type: str = ""
    protocol_data: str = ""
    members: tuple[DescribedGroupMember, ...] = ()
    authorized_operations: int = AUTHORIZED_OPERATIONS_OMITTED


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroupsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DescribeGroupsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_GROUPS.api_name

    throttle_time_ms: int = 0
    groups: tuple[DescribedGroup, ...] = ()

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.DescribeGroupsResponse#errorCounts."""
        return error_counts_of(g.error_code for g in self.groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroupsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DescribeGroupsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DESCRIBE_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.DESCRIBE_GROUPS.api_name
    RESPONSE_TYPE: ClassVar[type[DescribeGroupsResponse]] = DescribeGroupsResponse

    groups: tuple[str, ...] = ()
    include_authorized_operations: bool = False

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DescribeGroupsResponse:
        """Mirrors org.apache.kafka.common.requests.DescribeGroupsRequest#getErrorResponse (every group, the error)."""
        return DescribeGroupsResponse(throttle_time_ms=throttle_time_ms, groups=tuple(
            DescribedGroup(error_code=error_code, group_id=g) for g in self.groups))


DescribeGroupsResponse.REQUEST_TYPE = DescribeGroupsRequest
