"""DeleteGroups: an admin client removes empty consumer groups and their committed offsets.

Mirrors org.apache.kafka.common.requests.DeleteGroupsRequest / DeleteGroupsResponse and the
message schemas DeleteGroupsRequest.json / DeleteGroupsResponse.json (versions 0-2). Each group
goes to its coordinator; the answer has one result per group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletableGroupResult:
    """Mirrors org.apache.kafka.common.message.DeleteGroupsResponseData.DeletableGroupResult."""

    group_id: str = ""
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroupsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.DeleteGroupsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_GROUPS.api_name

    throttle_time_ms: int = 0
    results: tuple[DeletableGroupResult, ...] = ()

    def errors(self) -> dict[str, int]:
        """Mirrors DeleteGroupsResponse#errors: each group's error code."""
        return {r.group_id: r.error_code for r in self.results}

    def error_counts(self) -> dict[int, int]:
        """Mirrors DeleteGroupsResponse#errorCounts."""
        return error_counts_of(r.error_code for r in self.results)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroupsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.DeleteGroupsRequest."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.DELETE_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.DELETE_GROUPS.api_name
    RESPONSE_TYPE: ClassVar[type[DeleteGroupsResponse]] = DeleteGroupsResponse

    groups_names: tuple[str, ...] = ()

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> DeleteGroupsResponse:
        """Mirrors DeleteGroupsRequest#getErrorResponse: every group gets the error."""
        return DeleteGroupsResponse(throttle_time_ms=throttle_time_ms, results=tuple(
            DeletableGroupResult(group_id=g, error_code=error_code) for g in self.groups_names))


DeleteGroupsResponse.REQUEST_TYPE = DeleteGroupsRequest
