"""The rebalance purgatory's operations: waiting for members to (re)join, and for them to sync.

Mirrors kafka.coordinator.group.DelayedRebalance, DelayedJoin, InitialDelayedJoin and
DelayedSync, with org.apache.kafka.server.purgatory.GroupJoinKey / GroupSyncKey.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_ref.server.delayed_operation import DelayedOperation


@dataclass(frozen=True, slots=True)
class GroupJoinKey:
    """Mirrors org.apache.kafka.server.purgatory.GroupJoinKey."""

    group_id: str

    @property
    def key_label(self) -> str:
        return f"join-{self.group_id}"


@dataclass(frozen=True, slots=True)
class GroupSyncKey:
    """Mirrors org.apache.kafka.server.purgatory.GroupSyncKey."""

    group_id: str

    @property
    def key_label(self) -> str:
        return f"sync-{self.group_id}"


class DelayedJoin(DelayedOperation):
    """Mirrors kafka.coordinator.group.DelayedJoin.

    The PreparingRebalance phase: completes as soon as every known member has rejoined, or
    when the rebalance timeout (the largest of the members') runs out; completing starts the
    next generation (``GroupCoordinator.on_complete_join``).
    """

    def __init__(self, coordinator: Any, group: Any, rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        """Mirrors kafka.coordinator.group.DelayedJoin#tryComplete."""
        return self.coordinator.try_complete_join(self.group, self.force_complete)

    def on_expiration(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedJoin#onExpiration (the completion already ran)."""

    def on_complete(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedJoin#onComplete."""
        self.coordinator.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    """Mirrors kafka.coordinator.group.InitialDelayedJoin (KIP-134, group.initial.rebalance.delay.ms).

    The first rebalance of an Empty group waits ``delay_ms``; if more members arrived in that
    time it waits again (by at most the configured delay) until the rebalance timeout is used
    up, so that a group starting many consumers at once does one rebalance instead of many.
    It never completes early.
    """

    def __init__(self, coordinator: Any, purgatory: Any, group: Any, configured_rebalance_delay: int,
                 delay_ms: int, remaining_ms: int) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.purgatory = purgatory
        self.configured_rebalance_delay = configured_rebalance_delay
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        """Mirrors kafka.coordinator.group.InitialDelayedJoin#tryComplete: only the timer completes it."""
        return False

    def on_complete(self) -> None:
        """Mirrors kafka.coordinator.group.InitialDelayedJoin#onComplete.

        1. New members arrived and time remains: wait another round; 2. otherwise complete the join.
        """
        if self.group.new_member_added and self.remaining_ms != 0:
            self.group.new_member_added = False
            delay = min(self.configured_rebalance_delay, self.remaining_ms)
            remaining = max(self.remaining_ms - self.delay_ms, 0)
            self.purgatory.try_complete_else_watch(
                InitialDelayedJoin(self.coordinator, self.purgatory, self.group, self.configured_rebalance_delay,
                                   delay, remaining),
                [GroupJoinKey(self.group.group_id)],
            )
        else:
            self.coordinator.on_complete_join(self.group)


class DelayedSync(DelayedOperation):
    """Mirrors kafka.coordinator.group.DelayedSync (KAFKA-13127).

    After a generation starts, every member must send SyncGroup within the rebalance timeout;
    those that do not are removed and the group rebalances again.
    """

    def __init__(self, coordinator: Any, group: Any, generation_id: int, rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        """Mirrors kafka.coordinator.group.DelayedSync#tryComplete."""
        return self.coordinator.try_complete_pending_sync(self.group, self.generation_id, self.force_complete)

    def on_expiration(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedSync#onExpiration."""
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)

    def on_complete(self) -> None:
        """Mirrors kafka.coordinator.group.DelayedSync#onComplete: nothing to do."""
