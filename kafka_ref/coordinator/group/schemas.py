"""The binary keys and values of ``__consumer_offsets``.

Mirrors the generated messages org.apache.kafka.coordinator.group.generated.{OffsetCommitKey,
OffsetCommitValue, GroupMetadataKey, GroupMetadataValue} (the JSON schemas of Kafka 3.x's
group-coordinator module), org.apache.kafka.common.protocol.MessageUtil#toVersionPrefixedBytes,
and the record helpers of the kafka.coordinator.group.GroupMetadataManager companion object
(offsetCommitKey, groupMetadataKey, offsetCommitValue, groupMetadataValue, readMessageKey,
readOffsetMessageValue, readGroupMessageValue).

Every key and value is an int16 version followed by the fields in schema order:
int16/int32/int64 big-endian; a string is an int16 length and UTF-8 bytes (-1 for a null
nullable string); bytes are an int32 length and the bytes; an array is an int32 count and the
elements. Version 4 of both values is "flexible" (KIP-915; Kafka 3.x reads it but writes 3):
compact strings, bytes and arrays (unsigned varint length + 1, 0 for null) and an empty
tagged-field section after each struct.

The key's version says what the record is: 0 and 1 an offset commit (same body), 2 a group's
metadata. A record with a null value is a tombstone: the offset, or the whole group, is gone.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_metadata import (
    Empty,
    GroupMetadata,
    IllegalStateException,
    OffsetAndMetadata,
    Stable,
)

if TYPE_CHECKING:
    from kafka_ref.common.time import Time

OFFSET_COMMIT_KEY_VERSION = 1       # OffsetCommitKey.HIGHEST_SUPPORTED_VERSION in Kafka 3.x
GROUP_METADATA_KEY_VERSION = 2      # GroupMetadataKey: validVersions "2"
OFFSET_COMMIT_VALUE_VERSIONS = range(0, 5)
GROUP_METADATA_VALUE_VERSIONS = range(0, 5)
FLEXIBLE_VERSION = 4
NO_PARTITION_LEADER_EPOCH = -1      # RecordBatch.NO_PARTITION_LEADER_EPOCH
DEFAULT_TIMESTAMP = -1              # OffsetCommitRequest.DEFAULT_TIMESTAMP


# ---------------------------------------------------------------------------------------------
# Primitive encodings (org.apache.kafka.common.protocol.Writable / Readable)
# ---------------------------------------------------------------------------------------------


class _Writer:
    """Kafka's primitive types, appended to a buffer (``flexible`` selects the compact forms)."""

    def __init__(self, flexible: bool = False) -> None:
        self.buf = bytearray()
        self.flexible = flexible

    def int16(self, v: int) -> None:
        self.buf += struct.pack(">h", v)

    def int32(self, v: int) -> None:
        self.buf += struct.pack(">i", v)

    def int64(self, v: int) -> None:
        self.buf += struct.pack(">q", v)

    def uvarint(self, v: int) -> None:
        while v >= 0x80:
            self.buf.append((v & 0x7F) | 0x80)
            v >>= 7
        self.buf.append(v)

    def string(self, s: str | None, nullable: bool = False) -> None:
        if s is None:
            if not nullable:
                raise ValueError("non-nullable string field is null")
            if self.flexible:
                self.uvarint(0)
            else:
                self.int16(-1)
            return
        data = s.encode("utf-8")
        if self.flexible:
            self.uvarint(len(data) + 1)
        else:
            self.int16(len(data))
        self.buf += data

    def bytes_(self, b: bytes) -> None:
        if self.flexible:
            self.uvarint(len(b) + 1)
        else:
            self.int32(len(b))
        self.buf += b

    def array_len(self, n: int) -> None:
        if self.flexible:
            self.uvarint(n + 1)
        else:
            self.int32(n)

    def tagged_fields(self) -> None:
        if self.flexible:
            self.uvarint(0)


class _Reader:
    """Kafka's primitive types, read from a buffer; running off the end is a SchemaException-like ValueError."""

    def __init__(self, data: bytes, pos: int = 0, flexible: bool = False) -> None:
        self.data = bytes(data)
        self.pos = pos
        self.flexible = flexible

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"buffer underflow reading {n} bytes at {self.pos} of {len(self.data)}")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def int32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def int64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def uvarint(self) -> int:
        shift = value = 0
        while True:
            b = self._take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def string(self, nullable: bool = False) -> str | None:
        n = self.uvarint() - 1 if self.flexible else self.int16()
        if n < 0:
            if not nullable:
                raise ValueError("non-nullable string field was null")
            return None
        return self._take(n).decode("utf-8")

    def bytes_(self) -> bytes:
        n = self.uvarint() - 1 if self.flexible else self.int32()
        return self._take(n)

    def array_len(self) -> int:
        return self.uvarint() - 1 if self.flexible else self.int32()

    def tagged_fields(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()                  # tag
                self._take(self.uvarint())      # unknown tagged field: skipped


# ---------------------------------------------------------------------------------------------
# The four generated messages
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """Mirrors org.apache.kafka.coordinator.group.generated.OffsetCommitKey (versions 0-1): group, topic, partition."""

    group: str
    topic: str
    partition: int

    def write(self, w: _Writer) -> None:
        w.string(self.group)
        w.string(self.topic)
        w.int32(self.partition)

    @classmethod
    def read(cls, r: _Reader) -> "OffsetCommitKey":
        return cls(r.string(), r.string(), r.int32())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class GroupMetadataKeyData:
    """Mirrors org.apache.kafka.coordinator.group.generated.GroupMetadataKey (version 2): the group id."""

    group: str

    def write(self, w: _Writer) -> None:
        w.string(self.group)

    @classmethod
    def read(cls, r: _Reader) -> "GroupMetadataKeyData":
        return cls(r.string())  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """Mirrors org.apache.kafka.coordinator.group.generated.OffsetCommitValue (versions 0-4).

    v0: offset, metadata, commit_timestamp; v1 adds expire_timestamp (v1 only); v2 drops it;
    v3 adds leader_epoch after the offset; v4 is v3, flexible.
    """

    offset: int
    leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    metadata: str = ""
    commit_timestamp: int = 0
    expire_timestamp: int = DEFAULT_TIMESTAMP

    def write(self, w: _Writer, version: int) -> None:
        w.int64(self.offset)
        if version >= 3:
            w.int32(self.leader_epoch)
        w.string(self.metadata)
        w.int64(self.commit_timestamp)
        if version == 1:
            w.int64(self.expire_timestamp)
        w.tagged_fields()

    @classmethod
    def read(cls, r: _Reader, version: int) -> "OffsetCommitValue":
        offset = r.int64()
        leader_epoch = r.int32() if version >= 3 else NO_PARTITION_LEADER_EPOCH
        metadata = r.string()
        commit_timestamp = r.int64()
        expire_timestamp = r.int64() if version == 1 else DEFAULT_TIMESTAMP
        r.tagged_fields()
        return cls(offset, leader_epoch, metadata or "", commit_timestamp, expire_timestamp)


@dataclass(frozen=True, slots=True)
class MemberMetadataValue:
    """Mirrors org.apache.kafka.coordinator.group.generated.GroupMetadataValue.MemberMetadata.

    group_instance_id from v3 (nullable), rebalance_timeout from v1.
    """

    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    rebalance_timeout: int = 0
    group_instance_id: str | None = None

    def write(self, w: _Writer, version: int) -> None:
        w.string(self.member_id)
        if version >= 3:
            w.string(self.group_instance_id, nullable=True)
        w.string(self.client_id)
        w.string(self.client_host)
        if version >= 1:
            w.int32(self.rebalance_timeout)
        w.int32(self.session_timeout)
        w.bytes_(self.subscription)
        w.bytes_(self.assignment)
        w.tagged_fields()

    @classmethod
    def read(cls, r: _Reader, version: int) -> "MemberMetadataValue":
        member_id = r.string()
        group_instance_id = r.string(nullable=True) if version >= 3 else None
        client_id = r.string()
        client_host = r.string()
        rebalance_timeout = r.int32() if version >= 1 else 0
        session_timeout = r.int32()
        subscription = r.bytes_()
        assignment = r.bytes_()
        r.tagged_fields()
        return cls(member_id, client_id, client_host, session_timeout, subscription, assignment,  # type: ignore[arg-type]
                   rebalance_timeout, group_instance_id)


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """Mirrors org.apache.kafka.coordinator.group.generated.GroupMetadataValue (versions 0-4).

    protocol_type, generation, protocol (nullable), leader (nullable), current_state_timestamp
    (v2+), members.
    """

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[MemberMetadataValue, ...] = field(default=())
    current_state_timestamp: int = -1

    def write(self, w: _Writer, version: int) -> None:
        w.string(self.protocol_type)
        w.int32(self.generation)
        w.string(self.protocol, nullable=True)
        w.string(self.leader, nullable=True)
        if version >= 2:
            w.int64(self.current_state_timestamp)
        w.array_len(len(self.members))
        for member in self.members:
            member.write(w, version)
        w.tagged_fields()

    @classmethod
    def read(cls, r: _Reader, version: int) -> "GroupMetadataValue":
        protocol_type = r.string()
        generation = r.int32()
        protocol = r.string(nullable=True)
        leader = r.string(nullable=True)
        current_state_timestamp = r.int64() if version >= 2 else -1
        members = tuple(MemberMetadataValue.read(r, version) for _ in range(r.array_len()))
        r.tagged_fields()
        return cls(protocol_type, generation, protocol, leader, members, current_state_timestamp)  # type: ignore[arg-type]


def to_version_prefixed_bytes(version: int, message: Any) -> bytes:
    """Mirrors org.apache.kafka.common.protocol.MessageUtil#toVersionPrefixedBytes: int16 version, then the message."""
    w = _Writer(flexible=version >= FLEXIBLE_VERSION and not isinstance(message, (OffsetCommitKey, GroupMetadataKeyData)))
    w.int16(version)
    if isinstance(message, (OffsetCommitKey, GroupMetadataKeyData)):
        message.write(w)
    else:
        message.write(w, version)
    return bytes(w.buf)


# ---------------------------------------------------------------------------------------------
# The record keys as GroupMetadataManager reads them (kafka.coordinator.group.BaseKey)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupTopicPartition:
    """Mirrors kafka.coordinator.group.GroupTopicPartition."""

    group: str
    topic_partition: TopicPartition


@dataclass(frozen=True, slots=True)
class OffsetKey:
    """Mirrors kafka.coordinator.group.OffsetKey: an offset-commit record's key."""

    version: int
    key: GroupTopicPartition


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """Mirrors kafka.coordinator.group.GroupMetadataKey: a group-metadata record's key."""

    version: int
    key: str


@dataclass(frozen=True, slots=True)
class UnknownKey:
    """Mirrors kafka.coordinator.group.UnknownKey: a key version this broker does not know (ignored when loading)."""

    version: int


# ---------------------------------------------------------------------------------------------
# GroupMetadataManager's record helpers
# ---------------------------------------------------------------------------------------------


def offset_commit_key(group_id: str, tp: TopicPartition) -> bytes:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#offsetCommitKey (key version 1)."""
    return to_version_prefixed_bytes(OFFSET_COMMIT_KEY_VERSION, OffsetCommitKey(group_id, tp.topic, tp.partition))


def group_metadata_key(group_id: str) -> bytes:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#groupMetadataKey (key version 2)."""
    return to_version_prefixed_bytes(GROUP_METADATA_KEY_VERSION, GroupMetadataKeyData(group_id))


def offset_commit_value_version(metadata_version: MetadataVersion, has_expire_timestamp: bool) -> int:
    """The value version offsetCommitValue writes: 1 before IBP 2.1 or with an expiry, 2 at 2.1-IV0, else 3."""
    if not metadata_version.is_at_least("2.1") or has_expire_timestamp:
        return 1
    if metadata_version.release == (2, 1, 0) and metadata_version.text.upper().endswith("IV0"):
        return 2
    return 3


def group_metadata_value_version(metadata_version: MetadataVersion) -> int:
    """The value version groupMetadataValue writes: 0 before IBP 0.10.1, 1 before 2.1, 2 before 2.3, else 3."""
    if not metadata_version.is_at_least("0.10.1"):
        return 0
    if not metadata_version.is_at_least("2.1"):
        return 1
    if not metadata_version.is_at_least("2.3"):
        return 2
    return 3


def offset_commit_value(offset_and_metadata: OffsetAndMetadata, metadata_version: MetadataVersion) -> bytes:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#offsetCommitValue.

    The highest non-flexible version the IBP allows (3 from IBP 2.1-IV1), or 1 when the commit
    carries an explicit expire timestamp.
    """
    # 1. Pick the version; 2. fill the fields that version has; 3. prefix the version.
    version = offset_commit_value_version(metadata_version, offset_and_metadata.expire_timestamp is not None)
    value = OffsetCommitValue(
        offset=offset_and_metadata.offset,
        leader_epoch=NO_PARTITION_LEADER_EPOCH if offset_and_metadata.leader_epoch is None else offset_and_metadata.leader_epoch,
        metadata=offset_and_metadata.metadata,
        commit_timestamp=offset_and_metadata.commit_timestamp,
        expire_timestamp=DEFAULT_TIMESTAMP if offset_and_metadata.expire_timestamp is None else offset_and_metadata.expire_timestamp,
    )
    return to_version_prefixed_bytes(version, value)


def group_metadata_value(group: GroupMetadata, assignment: Mapping[str, bytes], metadata_version: MetadataVersion) -> bytes:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#groupMetadataValue.

    A non-empty group must have a protocol (each member's subscription is its metadata for
    it) and an assignment for every member, or IllegalStateException.
    """
    # 1. Version by IBP.
    version = group_metadata_value_version(metadata_version)
    # 2. One entry per member: subscription for the chosen protocol, and its assignment.
    members = []
    for member in group.all_member_metadata():
        if group.protocol_name is None:
            raise IllegalStateException("Attempted to write non-empty group metadata with no defined protocol.")
        if member.member_id not in assignment:
            raise IllegalStateException(
                f"Attempted to write member {member.member_id} of group {group.group_id} with no assignment.")
        members.append(MemberMetadataValue(
            member_id=member.member_id, client_id=member.client_id, client_host=member.client_host,
            session_timeout=member.session_timeout_ms, subscription=member.metadata(group.protocol_name),
            assignment=assignment[member.member_id], rebalance_timeout=member.rebalance_timeout_ms,
            group_instance_id=member.group_instance_id,
        ))
    # 3. The group's own fields, then the version prefix.
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=group.protocol_name,
        leader=group.leader_or_null(), members=tuple(members),
        current_state_timestamp=group.current_state_timestamp_or_default(),
    )
    return to_version_prefixed_bytes(version, value)


def read_message_key(data: bytes) -> OffsetKey | GroupMetadataKey | UnknownKey:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#readMessageKey: the version says which key."""
    r = _Reader(data)
    version = r.int16()
    # 1. Versions 0 and 1: offset commit; 2. version 2: group metadata; 3. anything else: unknown.
    if version in (0, 1):
        key = OffsetCommitKey.read(r)
        return OffsetKey(version, GroupTopicPartition(key.group, TopicPartition(key.topic, key.partition)))
    if version == GROUP_METADATA_KEY_VERSION:
        return GroupMetadataKey(version, GroupMetadataKeyData.read(r).group)
    return UnknownKey(version)


def read_offset_message_value(data: bytes | None) -> OffsetAndMetadata | None:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#readOffsetMessageValue (None for a tombstone)."""
    if data is None:
        return None
    r = _Reader(data)
    version = r.int16()
    if version not in OFFSET_COMMIT_VALUE_VERSIONS:
        raise IllegalStateException(f"Unknown offset message version: {version}")
    r.flexible = version >= FLEXIBLE_VERSION
    value = OffsetCommitValue.read(r, version)
    return OffsetAndMetadata(
        offset=value.offset,
        leader_epoch=None if value.leader_epoch == NO_PARTITION_LEADER_EPOCH else value.leader_epoch,
        metadata=value.metadata,
        commit_timestamp=value.commit_timestamp,
        expire_timestamp=None if value.expire_timestamp == DEFAULT_TIMESTAMP else value.expire_timestamp,
    )


def read_group_message_value(group_id: str, data: bytes | None, time: "Time", broker_id: int | None = None) -> GroupMetadata | None:
    """Mirrors kafka.coordinator.group.GroupMetadataManager#readGroupMessageValue (None for a tombstone).

    A group with members comes back Stable, one without Empty; version 0 has no rebalance
    timeout, so the session timeout stands in for it.
    """
    from kafka_ref.coordinator.group.member_metadata import MemberMetadata

    if data is None:
        return None
    r = _Reader(data)
    version = r.int16()
    if version not in GROUP_METADATA_VALUE_VERSIONS:
        raise IllegalStateException(f"Unknown group metadata message version: {version}")
    r.flexible = version >= FLEXIBLE_VERSION
    value = GroupMetadataValue.read(r, version)
    members = [
        MemberMetadata(
            member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.session_timeout if version == 0 else m.rebalance_timeout,
            session_timeout_ms=m.session_timeout, protocol_type=value.protocol_type,
            supported_protocols=[(value.protocol or "", m.subscription)], assignment=m.assignment,
        )
        for m in value.members
    ]
    return GroupMetadata.load_group(
        group_id=group_id, initial_state=Empty if not members else Stable, generation_id=value.generation,
        protocol_type=value.protocol_type, protocol_name=value.protocol, leader_id=value.leader,
        current_state_timestamp=None if value.current_state_timestamp == -1 else value.current_state_timestamp,
        members=members, time=time, broker_id=broker_id,
    )
