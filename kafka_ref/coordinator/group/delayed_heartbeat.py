"""Failure detection for one member: a heartbeat expected within the session timeout.

Mirrors kafka.coordinator.group.DelayedHeartbeat and org.apache.kafka.server.purgatory.MemberKey.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_ref.server.delayed_operation import DelayedOperation


@dataclass(frozen=True, slots=True)
class MemberKey:
    """Mirrors org.apache.kafka.server.purgatory.MemberKey: the heartbeat purgatory watches per member."""

    group_id: str
    member_id: str

    @property
    def key_label(self) -> str:
        return f"{self.group_id}-{self.member_id}"


class DelayedHeartbeat(DelayedOperation):
    """Mirrors kafka.coordinator.group.DelayedHeartbeat.

    Completes (quietly) when the member heartbeats in time, leaves, or the group is unloaded;
    expires (the member is removed) otherwise. ``is_pending`` watches a member id handed out
    with MEMBER_ID_REQUIRED that has not come back to join yet.
    """

    def __init__(self, coordinator: Any, group: Any, member_id: str, is_pending: bool, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending

    def try_complete(self) -> bool:
        """Mirrors kafka.coordinator.group.DelayedHeartbeat#tryComplete."""
        return self.coordinator.try_complete_heartbeat(self.group, self.member_id, self.is_pending, self.force_complete)

    def on_expiration(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedHeartbeat#onExpiration."""
        self.coordinator.on_expire_heartbeat(self.group, self.member_id, self.is_pending)

    def on_complete(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedHeartbeat#onComplete: nothing to do."""
