"""ListGroups: which consumer groups does this broker coordinate?

Mirrors org.apache.kafka.common.requests.ListGroupsRequest / ListGroupsResponse and the message
schemas ListGroupsRequest.json / ListGroupsResponse.json at version 5 (states filter from v4,
types filter and group type from v5; Kafka 3.8's classic groups are all of type "classic"). Each broker answers only for the groups whose ``__consumer_offsets`` partition it leads;
admin clients ask every broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedGroup:
    """Mirrors org.apache.kafka.common.message.ListGroupsResponseData.ListedGroup."""

    group_id: str = ""
    protocol_type: str = ""
    group_state: str = ""
    group_type: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroupsResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.ListGroupsResponse."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.LIST_GROUPS.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    groups: tuple[ListedGroup, ...] = ()

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.ListGroupsResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroupsRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.ListGroupsRequest (a filter left empty: no filter)."""

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LIST_GROUPS
    API_NAME: ClassVar[str] = ApiKeys.LIST_GROUPS.api_name
    RESPONSE_TYPE: ClassVar[type[ListGroupsResponse]] = ListGroupsResponse

    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> ListGroupsResponse:
        """Mirrors org.apache.kafka.common.requests.ListGroupsRequest#getErrorResponse."""
        return ListGroupsResponse(throttle_time_ms=throttle_time_ms, error_code=error_code)


ListGroupsResponse.REQUEST_TYPE = ListGroupsRequest
