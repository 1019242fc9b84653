"""The fetching side of KIP-227 fetch sessions, case by case against Kafka's FetchSessionHandlerTest.

Each test re-enacts one case of clients/src/test/java/org/apache/kafka/clients/
FetchSessionHandlerTest.java (Kafka 3.7) on kafka_ref.server.fetch_session.FetchSessionHandler
and checks what Kafka's test checks: the partitions to send, to forget and to replace and
their order, the session's partitions and topic names, the next request's session id and
epoch, whether topic ids can be used, and the verdicts on responses. testIncrementals,
which tests/test_fetch_session.py re-enacts at one version, is followed here at both.

Kafka's cases that loop over request versions 12 (names) and the latest (ids) are
parametrized by version; fixed topic ids stand in for Kafka's random ones.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import Errors, IllegalStateException
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.server.fetch_session import (
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchMetadata,
    FetchRequestPartitionData,
    FetchSessionHandler,
)

LATEST = FetchRequest.LATEST_VERSION
VERSIONS = [12, LATEST]
IDS = {"foo": Uuid(0xF00, 1), "bar": Uuid(0xBA4, 2), "extra2": Uuid(0xE2, 3), "unknown": Uuid(0x404, 4)}


def topic_id(name: str, version: int) -> Uuid:
    """Kafka's addTopicId: topics have ids only from version 13."""
    return IDS[name] if version >= FetchRequest.TOPIC_ID_VERSION else ZERO_UUID


def topic_names(version: int) -> dict[Uuid, str]:
    return {tid: name for name, tid in IDS.items()} if version >= FetchRequest.TOPIC_ID_VERSION else {}


def data(tid: Uuid, fetch_offset: int, log_start_offset: int, max_bytes: int) -> FetchRequestPartitionData:
    """Kafka's FetchRequest.PartitionData(topicId, fetchOffset, logStartOffset, maxBytes, empty epoch)."""
    return FetchRequestPartitionData(tid, fetch_offset, log_start_offset, max_bytes)


def entries(*rows: tuple[str, Uuid, int, int, int, int]) -> list[tuple[TopicPartition, FetchRequestPartitionData]]:
    """Kafka's reqMap of ReqEntry(topic, topicId, partition, fetchOffset, logStartOffset, maxBytes), in order."""
    return [(TopicPartition(t, p), data(tid, off, lso, mb)) for t, tid, p, off, lso, mb in rows]


def resp_map(*rows: tuple[str, int, Uuid, int, int]) -> dict[TopicIdPartition, PartitionData]:
    """Kafka's respMap of RespEntry(topic, partition, topicId, highWatermark, lastStableOffset)."""
    return {TopicIdPartition(tid, TopicPartition(t, p)): PartitionData(partition_index=p, high_watermark=hw,
                                                                       last_stable_offset=lso, log_start_offset=0)
            for t, p, tid, hw, lso in rows}


def response(error: Errors, session_id: int, parts: dict[TopicIdPartition, PartitionData]) -> FetchResponse:
    return FetchResponse.of(error.code, 0, session_id, parts)


def test_find_missing():
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testFindMissing."""
    foo0, foo1 = TopicPartition("foo", 0), TopicPartition("foo", 1)
    bar0, bar1 = TopicPartition("bar", 0), TopicPartition("bar", 1)
    baz0, baz1 = TopicPartition("baz", 0), TopicPartition("baz", 1)
    find = FetchSessionHandler.find_missing
    assert find([foo0], {foo0}) == []
    assert find([foo0], {foo1}) == [foo0]
    assert find([foo0, foo1], {baz0}) == [foo0, foo1]
    assert find([foo0, foo1, bar0, bar1], {bar0, baz0, baz1}) == [foo0, foo1, bar1]
    assert find([foo0, foo1, bar0, bar1, baz1], {foo0, foo1, bar0, bar1, baz0, baz1}) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_sessionless(version):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testSessionless."""
    handler = FetchSessionHandler(1)
    foo_id = topic_id("foo", version)
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(foo_id, 0, 100, 200))
    builder.add(TopicPartition("foo", 1), data(foo_id, 10, 110, 210))
    request = builder.build()
    expected = entries(("foo", foo_id, 0, 0, 100, 200), ("foo", foo_id, 1, 10, 110, 210))
    assert list(request.to_send.items()) == expected
    assert list(request.session_partitions.items()) == expected
    assert (request.metadata.session_id, request.metadata.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)

    # The leader keeps no session: the next request is full again, listing only what it asks for.
    handler.handle_response(response(Errors.NONE, INVALID_SESSION_ID,
                                     resp_map(("foo", 0, foo_id, 0, 0), ("foo", 1, foo_id, 0, 0))), version)
    builder2 = handler.new_builder()
    builder2.add(TopicPartition("foo", 0), data(foo_id, 0, 100, 200))
    request2 = builder2.build()
    assert (request2.metadata.session_id, request2.metadata.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    expected2 = entries(("foo", foo_id, 0, 0, 100, 200))
    assert list(request2.to_send.items()) == expected2
    assert list(request2.session_partitions.items()) == expected2


def test_double_build():
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testDoubleBuild."""
    builder = FetchSessionHandler(1).new_builder()
    builder.add(TopicPartition("foo", 0), data(Uuid(0xAB, 0xCD), 0, 100, 200))
    builder.build()
    with pytest.raises(IllegalStateException):
        builder.build()


@pytest.mark.parametrize("version", VERSIONS)
def test_incremental_partition_removal(version):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testIncrementalPartitionRemoval."""
    handler = FetchSessionHandler(1)
    foo_id, bar_id = topic_id("foo", version), topic_id("bar", version)
    foo0, foo1, bar0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
    builder = handler.new_builder()
    builder.add(foo0, data(foo_id, 0, 100, 200))
    builder.add(foo1, data(foo_id, 10, 110, 210))
    builder.add(bar0, data(bar_id, 20, 120, 220))
    request = builder.build()
    expected = entries(("foo", foo_id, 0, 0, 100, 200), ("foo", foo_id, 1, 10, 110, 210), ("bar", bar_id, 0, 20, 120, 220))
    assert list(request.to_send.items()) == expected
    assert list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    handler.handle_response(response(Errors.NONE, 123, resp_map(
        ("foo", 0, foo_id, 10, 20), ("foo", 1, foo_id, 10, 20), ("bar", 0, bar_id, 10, 20))), version)

    # 1. Keep foo-1 unchanged: nothing to send, foo-0 and bar-0 to forget.
    builder2 = handler.new_builder()
    builder2.add(foo1, data(foo_id, 10, 110, 210))
    request2 = builder2.build()
    assert not request2.metadata.is_full
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert list(request2.session_partitions.items()) == entries(("foo", foo_id, 1, 10, 110, 210))
    assert request2.to_send == {}
    assert sorted(map(str, request2.to_forget)) == sorted(map(str, [TopicIdPartition(foo_id, foo0),
                                                                      TopicIdPartition(bar_id, bar0)]))

    # 2. FETCH_SESSION_ID_NOT_FOUND: the next request opens a new session, full.
    handler.handle_response(response(Errors.FETCH_SESSION_ID_NOT_FOUND, INVALID_SESSION_ID, {}), version)
    builder3 = handler.new_builder()
    builder3.add(foo0, data(foo_id, 0, 100, 200))
    request3 = builder3.build()
    assert request3.metadata.is_full
    assert (request3.metadata.session_id, request3.metadata.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    expected3 = entries(("foo", foo_id, 0, 0, 100, 200))
    assert list(request3.session_partitions.items()) == expected3
    assert list(request3.to_send.items()) == expected3


@pytest.mark.parametrize("partition", [0, 1])
def test_topic_id_usage_granted_on_id_upgrade(partition):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testTopicIdUsageGrantedOnIdUpgrade.

    Partition 0 is already in the session (it gains an id); partition 1 is new.
    """
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(ZERO_UUID, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", ZERO_UUID, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert not request.can_use_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, ZERO_UUID, 10, 20))), 12)

    builder2 = handler.new_builder()
    builder2.add(TopicPartition("foo", partition), data(Uuid(0x1D, 7), 10, 110, 210))
    request2 = builder2.build()
    # Same session, next epoch; ids only when every partition left has one (foo-0 updated).
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert request2.can_use_topic_ids is (partition == 0)


@pytest.mark.parametrize("partition", [0, 1])
def test_id_usage_revoked_on_id_downgrade(partition):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testIdUsageRevokedOnIdDowngrade.

    Partition 0 is already in the session (it loses its id); partition 1 is new, without an id.
    """
    foo_id = Uuid(0xF00, 9)
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(foo_id, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", foo_id, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert request.can_use_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, foo_id, 10, 20))), LATEST)

    builder2 = handler.new_builder()
    builder2.add(TopicPartition("foo", partition), data(ZERO_UUID, 10, 110, 210))
    request2 = builder2.build()
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert not request2.can_use_topic_ids


@pytest.mark.parametrize("starts_with_topic_ids, ends_with_topic_ids",
                         [(True, True), (True, False), (False, True), (False, False)])
def test_topic_id_replaced(starts_with_topic_ids, ends_with_topic_ids):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testTopicIdReplaced."""
    tp = TopicPartition("foo", 0)
    handler = FetchSessionHandler(1)
    topic_id1 = Uuid(0x1D, 1) if starts_with_topic_ids else ZERO_UUID
    builder = handler.new_builder()
    builder.add(tp, data(topic_id1, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", topic_id1, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert request.can_use_topic_ids is starts_with_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, topic_id1, 10, 20))),
                            LATEST if starts_with_topic_ids else 12)

    # The same request but for the topic id.
    topic_id2 = Uuid(0x1D, 2) if ends_with_topic_ids else ZERO_UUID
    builder2 = handler.new_builder()
    builder2.add(tp, data(topic_id2, 0, 100, 200))
    request2 = builder2.build()
    expected2 = entries(("foo", topic_id2, 0, 0, 100, 200))
    if starts_with_topic_ids and ends_with_topic_ids:
        # 1. One id for another: the old one is replaced, the partition sent again.
        assert request2.to_replace == [TopicIdPartition(topic_id1, tp)]
        assert list(request2.to_send.items()) == expected2
        assert list(request2.session_partitions.items()) == expected2
        assert handler.session_topic_names == {topic_id2: "foo"}
    elif starts_with_topic_ids or ends_with_topic_ids:
        # 2. Gaining or losing an id is a change (sent), not a replacement: the leader will
        #    close the session for the change of request kind.
        assert request2.to_replace == []
        assert list(request2.to_send.items()) == expected2
        assert list(request2.session_partitions.items()) == expected2
        assert handler.session_topic_names == ({topic_id2: "foo"} if ends_with_topic_ids else {})
    else:
        # 3. No ids before or after, same data: nothing to send.
        assert request2.to_replace == []
        assert request2.to_send == {}
        assert list(request2.session_partitions.items()) == expected2
        assert handler.session_topic_names == {}
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert request2.can_use_topic_ids is ends_with_topic_ids


@pytest.mark.parametrize("starts_with_topic_ids", [True, False])
def test_session_epoch_when_mixed_usage_of_topic_ids(starts_with_topic_ids):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testSessionEpochWhenMixedUsageOfTopicIDs."""
    foo_id = Uuid(0xF00, 5) if starts_with_topic_ids else ZERO_UUID
    bar_id = ZERO_UUID if starts_with_topic_ids else Uuid(0xBA4, 5)
    tp0, tp1 = TopicPartition("foo", 0), TopicPartition("bar", 1)
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(tp0, data(foo_id, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", foo_id, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert request.can_use_topic_ids is starts_with_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, foo_id, 10, 20))),
                            LATEST if starts_with_topic_ids else 12)

    # Change foo-0 and add a partition whose id usage is the opposite: same session, next
    # epoch, no ids (the leader closes the session for it).
    builder2 = handler.new_builder()
    builder2.add(tp0, data(foo_id, 10, 110, 210))
    builder2.add(tp1, data(bar_id, 0, 100, 200))
    request2 = builder2.build()
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert not request2.can_use_topic_ids


@pytest.mark.parametrize("use_topic_ids", [True, False])
def test_id_usage_with_all_forgotten_partitions(use_topic_ids):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testIdUsageWithAllForgottenPartitions."""
    foo0 = TopicPartition("foo", 0)
    tid = Uuid(0xF00, 6) if use_topic_ids else ZERO_UUID
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(foo0, data(tid, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", tid, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert request.can_use_topic_ids is use_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, tid, 10, 20))), LATEST if use_topic_ids else 12)

    # Nothing wanted any more: foo-0 forgotten, same session, next epoch, same id usage.
    request2 = handler.new_builder().build()
    assert request2.to_forget == [TopicIdPartition(tid, foo0)]
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, 1)
    assert request2.can_use_topic_ids is use_topic_ids


def test_ok_to_add_new_id_after_topic_removed_from_session():
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testOkToAddNewIdAfterTopicRemovedFromSession."""
    tid = Uuid(0xF00, 8)
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(tid, 0, 100, 200))
    request = builder.build()
    expected = entries(("foo", tid, 0, 0, 100, 200))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert request.metadata.is_full
    assert request.can_use_topic_ids
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, tid, 10, 20))), LATEST)

    # 1. Drop the partition; the leader keeps the (now empty) session open.
    request2 = handler.new_builder().build()
    assert request2.to_send == {} and request2.session_partitions == {}
    handler.handle_response(response(Errors.NONE, 123, {}), LATEST)
    # 2. The topic, recreated with a new id, joins the same session at epoch 2.
    builder3 = handler.new_builder()
    builder3.add(TopicPartition("foo", 0), data(Uuid(0xF00, 9), 0, 100, 200))
    request3 = builder3.build()
    assert (request3.metadata.session_id, request3.metadata.epoch) == (123, 2)
    assert request3.can_use_topic_ids


@pytest.mark.parametrize("version", VERSIONS)
def test_verify_full_fetch_response_partitions(version):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testVerifyFullFetchResponsePartitions."""
    handler = FetchSessionHandler(1)
    names = topic_names(version)
    foo_id, bar_id = topic_id("foo", version), topic_id("bar", version)
    foo0, foo1, bar0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)

    def verify(resp: FetchResponse) -> str | None:
        return handler.verify_full_fetch_response_partitions(resp.response_data(names).keys(), resp.topic_ids(), version)

    three = resp_map(("foo", 0, foo_id, 10, 20), ("foo", 1, foo_id, 10, 20), ("bar", 0, bar_id, 10, 20))
    # 1. An empty session: every partition of the response is extra.
    issue = verify(response(Errors.NONE, INVALID_SESSION_ID, three))
    assert "extraPartitions=" in issue and "omittedPartitions=" not in issue
    builder = handler.new_builder()
    builder.add(foo0, data(foo_id, 0, 100, 200))
    builder.add(foo1, data(foo_id, 10, 110, 210))
    builder.add(bar0, data(bar_id, 20, 120, 220))
    builder.build()
    # 2. Exactly the session's partitions.
    assert verify(response(Errors.NONE, INVALID_SESSION_ID, three)) is None
    # 3. bar-0 left out.
    issue3 = verify(response(Errors.NONE, INVALID_SESSION_ID,
                             resp_map(("foo", 0, foo_id, 10, 20), ("foo", 1, foo_id, 10, 20))))
    assert "extraPartitions=" not in issue3 and "omittedPartitions=" in issue3
    assert issue3 == "omittedPartitions=(bar-0), response=(foo-0, foo-1)"


def test_verify_full_fetch_response_partitions_with_topic_ids():
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testVerifyFullFetchResponsePartitionsWithTopicIds."""
    handler = FetchSessionHandler(1)
    names = topic_names(LATEST)

    def verify(resp: FetchResponse) -> str | None:
        return handler.verify_full_fetch_response_partitions(resp.response_data(names).keys(), resp.topic_ids(), LATEST)

    with_extra = resp_map(("foo", 0, IDS["foo"], 10, 20), ("extra2", 1, IDS["extra2"], 10, 20),
                          ("bar", 0, IDS["bar"], 10, 20))
    issue = verify(response(Errors.NONE, INVALID_SESSION_ID, with_extra))
    assert "extraPartitions=" in issue and "omittedPartitions=" not in issue
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(IDS["foo"], 0, 100, 200))
    builder.add(TopicPartition("bar", 0), data(IDS["bar"], 20, 120, 220))
    builder.build()
    # 1. A partition (and a topic id) the session does not have.
    issue2 = verify(response(Errors.NONE, INVALID_SESSION_ID, with_extra))
    assert "extraPartitions=" in issue2 and "omittedPartitions=" not in issue2
    assert issue2 == f"extraPartitions=(extra2-1), extraIds=({IDS['extra2']}), response=(foo-0, extra2-1, bar-0)"
    # 2. Exactly the session.
    assert verify(response(Errors.NONE, INVALID_SESSION_ID,
                           resp_map(("foo", 0, IDS["foo"], 10, 20), ("bar", 0, IDS["bar"], 10, 20)))) is None


def test_top_level_error_resets_metadata():
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testTopLevelErrorResetsMetadata."""
    handler = FetchSessionHandler(1)
    foo_id = IDS["foo"]
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), data(foo_id, 0, 100, 200))
    builder.add(TopicPartition("foo", 1), data(foo_id, 10, 110, 210))
    request = builder.build()
    assert (request.metadata.session_id, request.metadata.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, foo_id, 10, 20), ("foo", 1, foo_id, 10, 20))),
                            LATEST)

    # 1. An incremental request adding a topic the leader does not know.
    builder2 = handler.new_builder()
    builder2.add(TopicPartition("unknown", 0), data(IDS["unknown"], 0, 100, 200))
    request2 = builder2.build()
    assert not request2.metadata.is_full
    assert (request2.metadata.session_id, request2.metadata.epoch) == (123, FetchMetadata.next_epoch(INITIAL_EPOCH))
    # 2. A top-level error: the response is refused ...
    error_part = {TopicIdPartition(Uuid(0x404, 99), TopicPartition("unknown", 0)):
                  FetchResponse.partition_response(0, Errors.UNKNOWN_TOPIC_ID.code)}
    assert not handler.handle_response(response(Errors.UNKNOWN_TOPIC_ID, 123, error_part), LATEST)
    # 3. ... and the next request closes the session and opens a new one (epoch 0).
    request3 = handler.new_builder().build()
    assert (request3.metadata.session_id, request3.metadata.epoch) == (123, INITIAL_EPOCH)


@pytest.mark.parametrize("version", VERSIONS)
def test_incrementals(version):
    """Mirrors org.apache.kafka.clients.FetchSessionHandlerTest#testIncrementals (step by step; the
    looser re-enactment in tests/test_fetch_session.py checks the same flow at one version)."""
    handler = FetchSessionHandler(1)
    foo_id, bar_id = topic_id("foo", version), topic_id("bar", version)
    foo0, foo1, bar0 = TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 0)
    builder = handler.new_builder()
    builder.add(foo0, data(foo_id, 0, 100, 200))
    builder.add(foo1, data(foo_id, 10, 110, 210))
    request = builder.build()
    expected = entries(("foo", foo_id, 0, 0, 100, 200), ("foo", foo_id, 1, 10, 110, 210))
    assert list(request.to_send.items()) == expected and list(request.session_partitions.items()) == expected
    assert (request.metadata.session_id, request.metadata.epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 0, foo_id, 10, 20), ("foo", 1, foo_id, 10, 20))),
                            version)

    # 1. Add bar-0, change foo-1: the new one first, then the changed one.
    builder2 = handler.new_builder()
    builder2.add(foo0, data(foo_id, 0, 100, 200))
    builder2.add(foo1, data(foo_id, 10, 120, 210))
    builder2.add(bar0, data(bar_id, 20, 200, 200))
    request2 = builder2.build()
    assert not request2.metadata.is_full
    assert list(request2.session_partitions.items()) == entries(
        ("foo", foo_id, 0, 0, 100, 200), ("foo", foo_id, 1, 10, 120, 210), ("bar", bar_id, 0, 20, 200, 200))
    assert list(request2.to_send.items()) == entries(("bar", bar_id, 0, 20, 200, 200), ("foo", foo_id, 1, 10, 120, 210))
    handler.handle_response(response(Errors.NONE, 123, resp_map(("foo", 1, foo_id, 20, 20))), version)

    # 2. INVALID_FETCH_SESSION_EPOCH: the next request closes the session and opens a new one,
    #    listing the whole session.
    handler.handle_response(response(Errors.INVALID_FETCH_SESSION_EPOCH, INVALID_SESSION_ID, {}), version)
    builder4 = handler.new_builder()
    builder4.add(foo0, data(foo_id, 0, 100, 200))
    builder4.add(foo1, data(foo_id, 10, 120, 210))
    builder4.add(bar0, data(bar_id, 20, 200, 200))
    request4 = builder4.build()
    assert request4.metadata.is_full
    assert request4.metadata.session_id == request2.metadata.session_id
    assert request4.metadata.epoch == INITIAL_EPOCH
    expected4 = entries(("foo", foo_id, 0, 0, 100, 200), ("foo", foo_id, 1, 10, 120, 210), ("bar", bar_id, 0, 20, 200, 200))
    assert list(request4.session_partitions.items()) == expected4
    assert list(request4.to_send.items()) == expected4
