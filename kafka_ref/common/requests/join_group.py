"""JoinGroup: a member asks the group coordinator to take part in the next generation.

Mirrors org.apache.kafka.common.requests.JoinGroupRequest / JoinGroupResponse and the message
schemas JoinGroupRequest.json / JoinGroupResponse.json at version 9 (Kafka 3.8): the reason
of KIP-800 (v8), flexible encoding from v6, ``skip_assignment`` of KIP-814 (v9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.errors import InvalidGroupIdException
from kafka_ref.common.requests.abstract import AbstractRequest, AbstractResponse, error_counts_of
from kafka_ref.common.requests.api_keys import ApiKeys

# Mirrors org.apache.kafka.common.requests.JoinGroupRequest.UNKNOWN_MEMBER_ID and friends.
UNKNOWN_MEMBER_ID = ""
UNKNOWN_GENERATION_ID = -1
UNKNOWN_PROTOCOL_NAME = ""
MAX_GROUP_INSTANCE_ID_LENGTH = 249


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupResponseMember:
    """Mirrors org.apache.kafka.common.message.JoinGroupResponseData.JoinGroupResponseMember.

    One member's subscription metadata for the chosen protocol (sent to the leader only).
    """

    member_id: str = ""
    group_instance_id: str | None = None
    metadata: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.JoinGroupResponse.

    The generation the member joined, the protocol the coordinator selected, who leads, the
    member's (maybe newly assigned) id, and for the leader every member's metadata.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.JOIN_GROUP
    API_NAME: ClassVar[str] = ApiKeys.JOIN_GROUP.api_name

    throttle_time_ms: int = 0
    error_code: int = 0
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = ""
    members: tuple[JoinGroupResponseMember, ...] = ()

    def is_leader(self) -> bool:
        """Mirrors org.apache.kafka.common.requests.JoinGroupResponse#isLeader."""
        return self.member_id == self.leader

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.JoinGroupResponse#errorCounts."""
        return error_counts_of([self.error_code])


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupRequestProtocol:
    """Mirrors org.apache.kafka.common.message.JoinGroupRequestData.JoinGroupRequestProtocol.

    One protocol the member supports (for consumers: an assignor name) with its metadata
    (for consumers: the serialized subscription).
    """

    name: str = ""
    metadata: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupRequest(AbstractRequest):
    """Mirrors org.apache.kafka.common.requests.JoinGroupRequest.

    ``member_id`` is "" for a member joining for the first time; ``protocols`` are listed in
    the member's order of preference.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.JOIN_GROUP
    API_NAME: ClassVar[str] = ApiKeys.JOIN_GROUP.api_name
    RESPONSE_TYPE: ClassVar[type[JoinGroupResponse]] = JoinGroupResponse

    group_id: str = ""
    session_timeout_ms: int = 0
    rebalance_timeout_ms: int = -1
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    protocol_type: str = ""
    protocols: tuple[JoinGroupRequestProtocol, ...] = ()
    reason: str | None = None

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> JoinGroupResponse:
        """Mirrors org.apache.kafka.common.requests.JoinGroupRequest#getErrorResponse.

        The error with the unknown generation, no protocol, no leader and the unknown member id.
        """
        return JoinGroupResponse(
            throttle_time_ms=throttle_time_ms, error_code=error_code, generation_id=UNKNOWN_GENERATION_ID,
            protocol_name=UNKNOWN_PROTOCOL_NAME, leader=UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID,
        )

    @staticmethod
    def maybe_truncate_reason(reason: str) -> str:
        """Mirrors org.apache.kafka.common.requests.JoinGroupRequest#maybeTruncateReason: at most 255 characters."""
        return reason[:255] if len(reason) > 255 else reason

    @staticmethod
    def validate_group_instance_id(group_instance_id: str) -> None:
        """Mirrors org.apache.kafka.common.requests.JoinGroupRequest#validateGroupInstanceId.

        The same rule as topic names: 1..249 characters from [a-zA-Z0-9._-], not "." or "..".
        """
        # 1. Length; 2. the reserved names; 3. the legal characters.
        if not group_instance_id:
            raise InvalidGroupIdException("Group instance id must be non-empty string")
        if group_instance_id in (".", ".."):
            raise InvalidGroupIdException(f"Group instance id cannot be \"{group_instance_id}\"")
        if len(group_instance_id) > MAX_GROUP_INSTANCE_ID_LENGTH:
            raise InvalidGroupIdException(
                f"Group instance id can't be longer than {MAX_GROUP_INSTANCE_ID_LENGTH} characters: {group_instance_id}")
        if any(not (c.isascii() and (c.isalnum() or c in "._-")) for c in group_instance_id):
            raise InvalidGroupIdException(
                f"Group instance id \"{group_instance_id}\" is illegal, it contains a character other than "
                "ASCII alphanumerics, '.', '_' and '-'")


JoinGroupResponse.REQUEST_TYPE = JoinGroupRequest
