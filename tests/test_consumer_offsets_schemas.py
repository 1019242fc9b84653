"""The binary keys and values of __consumer_offsets, byte for byte, and partitionFor.

The expected bytes are written out by hand from Kafka's schemas (group-coordinator
OffsetCommitKey/OffsetCommitValue/GroupMetadataKey/GroupMetadataValue.json of Kafka 3.x):
an int16 version, then the fields in schema order; int16 length + UTF-8 for a string (-1 for
null), int32 length for bytes and arrays, big-endian integers. Version 4 is flexible: compact
lengths (unsigned varint, length + 1) and an empty tagged-field section (0x00) per struct.
Mirrors GroupMetadataManagerTest#testSerde* / #testReadFromOldGroupMetadata and
GroupCoordinatorTest's partitionFor expectations.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group import schemas
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Empty,
    GroupMetadata,
    IllegalStateException,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import partition_for
from kafka_ref.coordinator.group.member_metadata import MemberMetadata

TS = 1_704_067_200_000          # 0x0000018CC251F400
TS_HEX = "0000018cc251f400"


def h(*parts: str) -> bytes:
    """Hex fragments (spaces allowed) joined into bytes."""
    return bytes.fromhex("".join(parts).replace(" ", ""))


# ------------------------------------------------------------------------------------------ keys

OFFSET_KEY_V1 = h(
    "0001",             # key version 1: an offset commit
    "0002 6731",        # group "g1"
    "0001 74",          # topic "t"
    "00000002",         # partition 2
)
GROUP_KEY_V2 = h(
    "0002",             # key version 2: group metadata
    "0002 6731",        # group "g1"
)


def test_offset_commit_key_bytes():
    assert schemas.offset_commit_key("g1", TopicPartition("t", 2)) == OFFSET_KEY_V1
    assert schemas.read_message_key(OFFSET_KEY_V1) == schemas.OffsetKey(
        1, schemas.GroupTopicPartition("g1", TopicPartition("t", 2)))
    # Key version 0 has the same body.
    assert schemas.read_message_key(h("0000", OFFSET_KEY_V1.hex()[4:])) == schemas.OffsetKey(
        0, schemas.GroupTopicPartition("g1", TopicPartition("t", 2)))


def test_group_metadata_key_bytes():
    assert schemas.group_metadata_key("g1") == GROUP_KEY_V2
    assert schemas.read_message_key(GROUP_KEY_V2) == schemas.GroupMetadataKey(2, "g1")


def test_unknown_key_version_is_reported_not_raised():
    assert schemas.read_message_key(h("0003 0002 6731")) == schemas.UnknownKey(3)


# ------------------------------------------------------------------------------------------ offset values

OFFSET_VALUE_V3 = h(
    "0003",                 # value version 3
    "0000000000000064",     # offset 100
    "00000005",             # leader epoch 5
    "0001 6d",              # metadata "m"
    TS_HEX,                 # commit timestamp
)
OFFSET_VALUE_V1 = h(
    "0001",
    "0000000000000064",     # offset 100
    "0001 6d",              # metadata "m"
    TS_HEX,                 # commit timestamp
    "ffffffffffffffff",     # expire timestamp -1 (none)
)
OFFSET_VALUE_V2 = h("0002", "0000000000000064", "0001 6d", TS_HEX)
OFFSET_VALUE_V0 = h("0000", "0000000000000064", "0001 6d", TS_HEX)
OFFSET_VALUE_V4 = h(
    "0004",
    "0000000000000064",     # offset 100
    "00000005",             # leader epoch 5
    "02 6d",                # compact string: length + 1 = 2, "m"
    TS_HEX,
    "00",                   # no tagged fields
)
COMMIT = OffsetAndMetadata(offset=100, leader_epoch=5, metadata="m", commit_timestamp=TS)


@pytest.mark.parametrize("ibp,expected", [
    ("3.8", OFFSET_VALUE_V3),
    ("2.1-IV1", OFFSET_VALUE_V3),
    ("2.1-IV0", OFFSET_VALUE_V2),
    ("2.0", OFFSET_VALUE_V1),
])
def test_offset_commit_value_bytes_by_ibp(ibp, expected):
    assert schemas.offset_commit_value(COMMIT, MetadataVersion.parse(ibp)) == expected


def test_offset_commit_value_with_expire_timestamp_uses_v1():
    commit = OffsetAndMetadata(offset=100, leader_epoch=5, metadata="m", commit_timestamp=TS, expire_timestamp=TS + 1234)
    assert schemas.offset_commit_value(commit, MetadataVersion.parse("3.8")) == h(
        "0001", "0000000000000064", "0001 6d", TS_HEX, "0000018cc251f8d2")


@pytest.mark.parametrize("data,expected", [
    (OFFSET_VALUE_V3, COMMIT),
    (OFFSET_VALUE_V4, COMMIT),
    (OFFSET_VALUE_V1, OffsetAndMetadata(100, None, "m", TS, None)),
    (OFFSET_VALUE_V2, OffsetAndMetadata(100, None, "m", TS, None)),
    (OFFSET_VALUE_V0, OffsetAndMetadata(100, None, "m", TS, None)),
])
def test_read_offset_values_of_every_version(data, expected):
    assert schemas.read_offset_message_value(data) == expected


def test_offset_value_v4_encoding():
    value = schemas.OffsetCommitValue(offset=100, leader_epoch=5, metadata="m", commit_timestamp=TS)
    assert schemas.to_version_prefixed_bytes(4, value) == OFFSET_VALUE_V4


def test_tombstones_decode_to_none():
    assert schemas.read_offset_message_value(None) is None
    assert schemas.read_group_message_value("g1", None, MockTime()) is None


def test_unknown_value_versions_raise():
    with pytest.raises(IllegalStateException, match="Unknown offset message version: 5"):
        schemas.read_offset_message_value(h("0005", OFFSET_VALUE_V3.hex()[4:]))
    with pytest.raises(IllegalStateException, match="Unknown group metadata message version: 9"):
        schemas.read_group_message_value("g1", h("0009"), MockTime())


# ------------------------------------------------------------------------------------------ group values

def _stable_group(time: MockTime) -> GroupMetadata:
    group = GroupMetadata("g1", Empty, time)
    member = MemberMetadata("m1", None, "c1", "/h", 10000, 6000, "consumer", [("range", b"\x01")])
    group.add(member)
    group.transition_to(PreparingRebalance)
    group.init_next_generation()          # generation 1, protocol "range", CompletingRebalance
    assert group.is_(CompletingRebalance)
    return group


GROUP_VALUE_V3 = h(
    "0003",
    "0008 636f6e73756d6572",    # protocol type "consumer"
    "00000001",                 # generation 1
    "0005 72616e6765",          # protocol "range"
    "0002 6d31",                # leader "m1"
    TS_HEX,                     # current state timestamp
    "00000001",                 # one member:
    "0002 6d31",                #   member id "m1"
    "ffff",                     #   group instance id null
    "0002 6331",                #   client id "c1"
    "0002 2f68",                #   client host "/h"
    "00002710",                 #   rebalance timeout 10000
    "00001770",                 #   session timeout 6000
    "00000001 01",              #   subscription
    "00000001 02",              #   assignment
)
GROUP_VALUE_V2 = h(
    "0002", "0008 636f6e73756d6572", "00000001", "0005 72616e6765", "0002 6d31", TS_HEX,
    "00000001", "0002 6d31", "0002 6331", "0002 2f68", "00002710", "00001770", "00000001 01", "00000001 02",
)
GROUP_VALUE_V1 = h(
    "0001", "0008 636f6e73756d6572", "00000001", "0005 72616e6765", "0002 6d31",
    "00000001", "0002 6d31", "0002 6331", "0002 2f68", "00002710", "00001770", "00000001 01", "00000001 02",
)
GROUP_VALUE_V0 = h(
    "0000", "0008 636f6e73756d6572", "00000001", "0005 72616e6765", "0002 6d31",
    "00000001", "0002 6d31", "0002 6331", "0002 2f68", "00001770", "00000001 01", "00000001 02",
)
EMPTY_GROUP_VALUE_V3 = h(
    "0003",
    "0008 636f6e73756d6572",    # protocol type "consumer"
    "00000002",                 # generation 2
    "ffff",                     # protocol null
    "ffff",                     # leader null
    TS_HEX,
    "00000000",                 # no members
)


@pytest.mark.parametrize("ibp,expected", [
    ("3.8", GROUP_VALUE_V3),
    ("2.2", GROUP_VALUE_V2),
    ("2.0", GROUP_VALUE_V1),
    ("0.10.0", GROUP_VALUE_V0),
])
def test_group_metadata_value_bytes_by_ibp(ibp, expected):
    group = _stable_group(MockTime(TS))
    assert schemas.group_metadata_value(group, {"m1": b"\x02"}, MetadataVersion.parse(ibp)) == expected


def test_empty_group_value_bytes():
    time = MockTime(TS)
    group = _stable_group(time)
    group.remove("m1")
    group.transition_to(PreparingRebalance)
    group.init_next_generation()          # no members: generation 2, Empty
    assert schemas.group_metadata_value(group, {}, MetadataVersion.parse("3.8")) == EMPTY_GROUP_VALUE_V3


def test_group_value_refuses_missing_assignment_or_protocol():
    group = _stable_group(MockTime(TS))
    with pytest.raises(IllegalStateException, match="Attempted to write member m1 of group g1 with no assignment."):
        schemas.group_metadata_value(group, {}, MetadataVersion.parse("3.8"))
    group.protocol_name = None
    with pytest.raises(IllegalStateException, match="no defined protocol"):
        schemas.group_metadata_value(group, {"m1": b""}, MetadataVersion.parse("3.8"))


@pytest.mark.parametrize("data,rebalance_timeout,ts", [
    (GROUP_VALUE_V3, 10000, TS), (GROUP_VALUE_V2, 10000, TS), (GROUP_VALUE_V1, 10000, None), (GROUP_VALUE_V0, 6000, None),
])
def test_read_group_values(data, rebalance_timeout, ts):
    group = schemas.read_group_message_value("g1", data, MockTime(TS))
    assert group.is_(Stable)
    assert (group.generation_id, group.protocol_type, group.protocol_name, group.leader_id) == (1, "consumer", "range", "m1")
    assert group.current_state_timestamp == ts
    member = group.get("m1")
    assert (member.client_id, member.client_host, member.session_timeout_ms, member.rebalance_timeout_ms) == (
        "c1", "/h", 6000, rebalance_timeout)
    assert member.supported_protocols == [("range", b"\x01")]
    assert member.assignment == b"\x02"


def test_read_empty_group_value():
    group = schemas.read_group_message_value("g1", EMPTY_GROUP_VALUE_V3, MockTime(TS))
    assert group.is_(Empty)
    assert (group.generation_id, group.protocol_name, group.leader_id, group.size) == (2, None, None, 0)


def test_group_value_v4_round_trip():
    value = schemas.GroupMetadataValue(
        protocol_type="consumer", generation=3, protocol="range", leader="m1", current_state_timestamp=TS,
        members=(schemas.MemberMetadataValue("m1", "c1", "/h", 6000, b"\x01", b"\x02", 10000, None),))
    data = schemas.to_version_prefixed_bytes(4, value)
    assert data == h(
        "0004", "09 636f6e73756d6572", "00000003", "06 72616e6765", "03 6d31", TS_HEX,
        "02",                                   # compact array: 1 member
        "03 6d31", "00", "03 6331", "03 2f68", "00002710", "00001770", "02 01", "02 02", "00",  # member + its tags
        "00",                                   # the value's tags
    )
    group = schemas.read_group_message_value("g1", data, MockTime(TS))
    assert (group.generation_id, group.get("m1").assignment) == (3, b"\x02")


_strings = st.text(max_size=20)


@given(offset=st.integers(0, 2**63 - 1), epoch=st.integers(-1, 2**31 - 1), metadata=_strings,
       ts=st.integers(0, 2**62), version=st.sampled_from([0, 1, 2, 3, 4]))
def test_offset_value_round_trip(offset, epoch, metadata, ts, version):
    value = schemas.OffsetCommitValue(offset, epoch if version >= 3 else -1, metadata, ts)
    r = schemas._Reader(schemas.to_version_prefixed_bytes(version, value), flexible=False)
    assert r.int16() == version
    r.flexible = version >= 4
    assert schemas.OffsetCommitValue.read(r, version) == value


@given(group=_strings, topic=_strings, partition=st.integers(0, 2**31 - 1))
def test_offset_key_round_trip(group, topic, partition):
    data = schemas.offset_commit_key(group, TopicPartition(topic, partition))
    assert schemas.read_message_key(data) == schemas.OffsetKey(1, schemas.GroupTopicPartition(group, TopicPartition(topic, partition)))


# ------------------------------------------------------------------------------------------ partitionFor

def java_string_hash_code(text: str) -> int:
    """An independent java.lang.String#hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, int32 overflow."""
    units = []
    for ch in text:
        cp = ord(ch)
        if cp >= 0x10000:                       # a surrogate pair in UTF-16
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    n = len(units)
    total = sum(u * pow(31, n - 1 - i) for i, u in enumerate(units))
    total %= 2**32
    return total - 2**32 if total >= 2**31 else total


def java_utils_abs(n: int) -> int:
    return 0 if n == -(2**31) else abs(n)


@pytest.mark.parametrize("group_id", [
    "g", "g1", "my-group", "console-consumer-12345", "", "groupA", "😀x", "Hello World", "hello", "Aa", "BB",
    "polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES", "ünïcödé-grøup", "a" * 100,
])
@pytest.mark.parametrize("partitions", [1, 3, 50, 7])
def test_partition_for_matches_java(group_id, partitions):
    """GroupMetadataManager#partitionFor = Utils.abs(groupId.hashCode) % offsets.topic.num.partitions."""
    assert partition_for(group_id, partitions) == java_utils_abs(java_string_hash_code(group_id)) % partitions


@pytest.mark.parametrize("group_id,hash_code,partition_of_50", [
    ("hello", 99162322, 22),
    ("Hello World", -862545276, 26),
    ("Aa", 2112, 12),
    ("BB", 2112, 12),
    ("", 0, 0),
    ("polygenelubricants", -(2**31), 0),   # Integer.MIN_VALUE: Utils.abs maps it to 0
])
def test_partition_for_literal_java_values(group_id, hash_code, partition_of_50):
    assert java_string_hash_code(group_id) == hash_code
    assert partition_for(group_id, 50) == partition_of_50
