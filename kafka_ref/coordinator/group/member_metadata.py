"""One member of a classic group, as the coordinator sees it.

Mirrors kafka.coordinator.group.MemberMetadata (Kafka 3.x).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from kafka_ref.coordinator.group.group_metadata import IllegalStateException


class MemberMetadata:
    """Mirrors kafka.coordinator.group.MemberMetadata.

    What the coordinator keeps per member: its ids, timeouts, the protocols it supports (name
    and metadata, in its order of preference), its current assignment, and the callbacks of a
    JoinGroup or SyncGroup it is waiting on. ``is_new`` marks a member added in the current
    rebalance: until its first JoinGroup answer it is expired by the new-member join timeout,
    not by its session timeout.
    """

    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        supported_protocols: Iterable[tuple[str, bytes]],
        assignment: bytes = b"",
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.supported_protocols: list[tuple[str, bytes]] = list(supported_protocols)
        self.assignment = assignment
        self.awaiting_join_callback: Callable[[Any], None] | None = None
        self.awaiting_sync_callback: Callable[[Any], None] | None = None
        self.is_new = False
        self.heartbeat_satisfied = False

    # -- state -----------------------------------------------------------------------------

    @property
    def is_static_member(self) -> bool:
        """Mirrors kafka.coordinator.group.MemberMetadata#isStaticMember."""
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        """Mirrors kafka.coordinator.group.MemberMetadata#isAwaitingJoin: a JoinGroup is parked."""
        return self.awaiting_join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        """Mirrors kafka.coordinator.group.MemberMetadata#isAwaitingSync: a SyncGroup is parked."""
        return self.awaiting_sync_callback is not None

    def has_satisfied_heartbeat(self) -> bool:
        """Mirrors kafka.coordinator.group.MemberMetadata#hasSatisfiedHeartbeat.

        A new member needs its heartbeat flag (it may expire while waiting to join); a member
        with a JoinGroup or SyncGroup parked counts as alive; anyone else needs a heartbeat.
        """
        # 1. New members first: they can expire while awaiting join.
        if self.is_new:
            return self.heartbeat_satisfied
        # 2. Parked requests stand for heartbeats.
        if self.is_awaiting_join or self.is_awaiting_sync:
            return True
        # 3. Otherwise the next heartbeat is required.
        return self.heartbeat_satisfied

    # -- protocols -------------------------------------------------------------------------

    def protocols(self) -> set[str]:
        """The names of the supported protocols (Kafka's ``plainProtocolSet`` of this member)."""
        return plain_protocol_set(self.supported_protocols)

    def metadata(self, protocol: str) -> bytes:
        """Mirrors kafka.coordinator.group.MemberMetadata#metadata: this member's metadata for ``protocol``."""
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise IllegalStateException(f"Member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Iterable[tuple[str, bytes]]) -> bool:
        """Mirrors kafka.coordinator.group.MemberMetadata#matches: same protocols, same order, same bytes."""
        protocols = list(protocols)
        if len(protocols) != len(self.supported_protocols):
            return False
        return all(a[0] == b[0] and bytes(a[1]) == bytes(b[1]) for a, b in zip(protocols, self.supported_protocols))

    def vote(self, candidates: set[str]) -> str:
        """Mirrors kafka.coordinator.group.MemberMetadata#vote: the first of my protocols that is a candidate."""
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise IllegalStateException(f"Member {self.member_id} does not support any of the candidate protocols")

    def summary(self, protocol: str) -> tuple[str, str | None, str, str, bytes, bytes]:
        """Mirrors kafka.coordinator.group.MemberMetadata#summary: id, instance id, client, host, metadata, assignment."""
        return (self.member_id, self.group_instance_id, self.client_id, self.client_host,
                self.metadata(protocol), self.assignment)

    def summary_no_metadata(self) -> tuple[str, str | None, str, str, bytes, bytes]:
        """Mirrors kafka.coordinator.group.MemberMetadata#summaryNoMetadata: the same without metadata or assignment."""
        return (self.member_id, self.group_instance_id, self.client_id, self.client_host, b"", b"")

    def __repr__(self) -> str:
        return (f"MemberMetadata(member_id={self.member_id}, client_id={self.client_id}, "
                f"session_timeout_ms={self.session_timeout_ms}, rebalance_timeout_ms={self.rebalance_timeout_ms}, "
                f"supported_protocols={[p for p, _ in self.supported_protocols]})")


def plain_protocol_set(supported_protocols: Iterable[tuple[str, bytes]]) -> set[str]:
    """Mirrors kafka.coordinator.group.MemberMetadata#plainProtocolSet: the protocol names."""
    return {name for name, _ in supported_protocols}
