"""Tests for KIP-227 fetch sessions (kafka_ref.server.fetch_session).

Mirrors clients/src/test/java/org/apache/kafka/clients/FetchSessionHandlerTest.java and
core/src/test/scala/unit/kafka/server/FetchSessionTest.scala (Kafka 3.8) where named. The
headline case: with 10,000 partitions of which 5 changed, the incremental request and the
incremental response carry only those 5.
"""

from __future__ import annotations

import random
from dataclasses import replace

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.requests.fetch import EpochEndOffset as DivergingEpoch
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.replica.fetcher import BrokerEndPoint, PartitionFetchState, RemoteLeaderEndPoint
from kafka_ref.replica.fetcher.partition_fetch_state import FETCHING, TRUNCATING
from kafka_ref.server.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchManager,
    FetchMetadata,
    FetchRequestPartitionData,
    FetchSessionCache,
    FetchSessionHandler,
    FullFetchContext,
    IncrementalFetchContext,
    SessionErrorContext,
    SessionlessFetchContext,
)

TOPIC_ID = Uuid(42, 42)
BATCH = RecordBatch.build([SimpleRecord(value=b"x")], base_offset=0, partition_leader_epoch=0)


def request_partitions(request: FetchRequest) -> list[tuple[str, int, int]]:
    return [(t.topic, p.partition, p.fetch_offset) for t in request.topics for p in t.partitions]


def response_partitions(response: FetchResponse) -> list[tuple[str, int]]:
    return [(t.topic, p.partition_index) for t in response.responses for p in t.partitions]


# -- FetchMetadata -------------------------------------------------------------------------------

def test_fetch_metadata_epochs():
    """Mirrors FetchMetadata: full at epochs 0 and -1; epochs wrap from Integer.MAX_VALUE to 1."""
    assert FetchMetadata.INITIAL == FetchMetadata(0, 0) and FetchMetadata.INITIAL.is_full
    assert FetchMetadata(7, FINAL_EPOCH).is_full and not FetchMetadata(7, 1).is_full
    assert FetchMetadata.next_epoch(INITIAL_EPOCH) == 1
    assert FetchMetadata.next_epoch(41) == 42
    assert FetchMetadata.next_epoch(2**31 - 1) == 1
    assert FetchMetadata.next_epoch(FINAL_EPOCH) == FINAL_EPOCH
    assert FetchMetadata.new_incremental(9) == FetchMetadata(9, 1)
    assert FetchMetadata(9, 5).next_close_existing_attempt_new() == FetchMetadata(9, 0)
    assert FetchMetadata(9, 5).next_close_existing() == FetchMetadata(9, -1)


# -- the follower side over RemoteLeaderEndPoint ------------------------------------------------

class _Log:
    log_start_offset = 0


class _Partition:
    local_log_or_exception = _Log()


class _ReplicaManager:
    local_broker_id = 2

    def get_partition_or_exception(self, tp):
        return _Partition()


def end_point(ibp: str = "3.8") -> RemoteLeaderEndPoint:
    config = KafkaConfig({"broker.id": 2, "inter.broker.protocol.version": ibp})
    return RemoteLeaderEndPoint("[test] ", None, BrokerEndPoint(1), FetchSessionHandler(1), config, _ReplicaManager())


def fetch_states(n: int, offset=lambda p: 100) -> dict[TopicPartition, PartitionFetchState]:
    return {TopicPartition("t", p): PartitionFetchState(TOPIC_ID, offset(p), None, 3, None, FETCHING, 2) for p in range(n)}


def leader_updates(context, data_for=lambda tip, req: PartitionData(high_watermark=100, last_stable_offset=100, log_start_offset=0)):
    updates = {}
    context.foreach_partition(lambda tip, req: updates.__setitem__(tip, data_for(tip, req)))
    return updates


def test_incremental_fetch_lists_only_changed_partitions_10000():
    """10,000 partitions, 5 changed: the incremental request and response carry exactly those 5."""
    ep = end_point()
    manager = FetchManager(MockTime(), FetchSessionCache(1000, rng=random.Random(1)))
    states = fetch_states(10_000)

    # 1. The first fetch is full: no session, epoch 0, every partition, asking replica.fetch.max.bytes each.
    fetch = ep.build_fetch(states).result
    request = fetch.fetch_request
    assert (request.session_id, request.session_epoch) == (INVALID_SESSION_ID, INITIAL_EPOCH)
    assert len(request_partitions(request)) == 10_000
    assert len(fetch.partition_data) == 10_000
    first = request.topics[0].partitions[0]
    assert (first.fetch_offset, first.partition_max_bytes, first.current_leader_epoch, first.last_fetched_epoch,
            first.log_start_offset) == (100, 1048576, 3, 2, 0)
    assert (request.replica_id, request.max_wait_ms, request.min_bytes, request.max_bytes) == (2, 500, 1, 10485760)

    # 2. The leader opens a session and answers every partition.
    context = manager.new_context_for_request(request)
    assert isinstance(context, FullFetchContext)
    response = context.update_and_generate_response_data(leader_updates(context))
    assert response.session_id != INVALID_SESSION_ID
    assert len(response_partitions(response)) == 10_000
    assert ep.fetch_session_handler.handle_response(response)
    session_id = response.session_id
    assert ep.fetch_session_handler.next_metadata == FetchMetadata(session_id, 1)

    # 3. Five partitions advanced: the incremental request lists only them.
    changed = {17, 123, 4096, 7777, 9999}
    states = fetch_states(10_000, lambda p: 101 if p in changed else 100)
    fetch = ep.build_fetch(states).result
    request = fetch.fetch_request
    assert (request.session_id, request.session_epoch) == (session_id, 1)
    assert request_partitions(request) == [("t", p, 101) for p in sorted(changed)]
    assert request.forgotten_topics_data == ()
    assert len(fetch.partition_data) == 10_000  # the session still covers everything

    # 4. The leader reads all 10,000 (the session implies them) but answers only the 5 with data.
    context = manager.new_context_for_request(request)
    assert isinstance(context, IncrementalFetchContext)
    seen = []

    def data(tip, req):
        seen.append(req.fetch_offset)
        if tip.partition in changed:
            return PartitionData(high_watermark=100, last_stable_offset=100, log_start_offset=0,
                                 records=MemoryRecords.of([BATCH]))
        return PartitionData(high_watermark=100, last_stable_offset=100, log_start_offset=0)

    response = context.update_and_generate_response_data(leader_updates(context, data))
    assert len(seen) == 10_000 and seen.count(101) == 5
    assert response.session_id == session_id
    assert response_partitions(response) == [("t", p) for p in sorted(changed)]
    assert ep.fetch_session_handler.handle_response(response)
    assert ep.fetch_session_handler.next_metadata == FetchMetadata(session_id, 2)

    # 5. Nothing changed: an empty incremental request; two partitions dropped: only forgotten.
    request = ep.build_fetch(states).result.fetch_request
    assert (request.session_epoch, request.topics) == (2, ())
    del states[TopicPartition("t", 5)], states[TopicPartition("t", 6)]
    fetch = ep.build_fetch(states).result
    assert fetch.fetch_request.topics == ()
    assert [(f.topic, f.partitions) for f in fetch.fetch_request.forgotten_topics_data] == [("t", (5, 6))]
    assert len(fetch.partition_data) == 9_998


def test_fetch_request_fields_by_era():
    """current_leader_epoch from IBP 2.1 (KIP-320); last_fetched_epoch from IBP 2.7 (KIP-595)."""
    def first(ibp):
        return end_point(ibp).build_fetch(fetch_states(1)).result.fetch_request.topics[0].partitions[0]

    assert (first("2.0").current_leader_epoch, first("2.0").last_fetched_epoch) == (-1, -1)
    assert (first("2.1").current_leader_epoch, first("2.1").last_fetched_epoch) == (3, -1)
    assert (first("2.7").current_leader_epoch, first("2.7").last_fetched_epoch) == (3, 2)


def test_build_fetch_skips_partitions_not_ready():
    ep = end_point()
    states = fetch_states(3)
    states[TopicPartition("t", 1)] = PartitionFetchState(TOPIC_ID, 5, None, 3, None, TRUNCATING, None)
    fetch = ep.build_fetch(states).result
    assert [p for _, p, _ in request_partitions(fetch.fetch_request)] == [0, 2]
    assert ep.build_fetch({}).result is None


# -- FetchSessionHandler on its own (FetchSessionHandlerTest) -----------------------------------

def pd(offset: int, topic_id: Uuid = TOPIC_ID) -> FetchRequestPartitionData:
    return FetchRequestPartitionData(topic_id, offset, 0, 100, 1, None)


def response(session_id: int, *parts: str, error: Errors = Errors.NONE) -> FetchResponse:
    data = {TopicIdPartition(TOPIC_ID, TopicPartition.parse(p)): PartitionData(high_watermark=10) for p in parts}
    return FetchResponse.of(error.code, 0, session_id, data)


def build(handler: FetchSessionHandler, parts: dict[str, int]):
    builder = handler.new_builder()
    for name, offset in parts.items():
        builder.add(TopicPartition.parse(name), pd(offset))
    return builder.build()


def test_session_handler_incremental_adds_alters_and_removes():
    """Mirrors FetchSessionHandlerTest#testIncrementals."""
    handler = FetchSessionHandler(1)
    data = build(handler, {"foo-0": 0, "foo-1": 10})
    assert data.metadata == FetchMetadata.INITIAL and list(map(str, data.to_send)) == ["foo-0", "foo-1"]
    assert handler.handle_response(response(123, "foo-0", "foo-1"))

    data = build(handler, {"foo-0": 0, "foo-1": 11, "bar-0": 20})
    assert data.metadata == FetchMetadata(123, 1)
    assert list(map(str, data.to_send)) == ["bar-0", "foo-1"]  # the new one, then the altered one
    assert data.to_forget == []
    assert list(map(str, data.session_partitions)) == ["foo-0", "foo-1", "bar-0"]
    assert handler.handle_response(response(123, "foo-1"))

    data = build(handler, {"foo-1": 11})
    assert data.metadata == FetchMetadata(123, 2)
    assert data.to_send == {}
    assert sorted(map(str, (t.topic_partition for t in data.to_forget))) == ["bar-0", "foo-0"]


def test_session_handler_errors_reset_to_full_fetch():
    """Mirrors FetchSessionHandlerTest: session errors and send failures lead to a full fetch."""
    handler = FetchSessionHandler(1)
    build(handler, {"foo-0": 0})
    assert handler.handle_response(response(123, "foo-0"))
    # 1. Unknown session: start over with no session id.
    build(handler, {"foo-0": 1})
    assert not handler.handle_response(response(0, error=Errors.FETCH_SESSION_ID_NOT_FOUND))
    assert handler.next_metadata == FetchMetadata.INITIAL
    data = build(handler, {"foo-0": 1})
    assert data.metadata.is_full and list(map(str, data.to_send)) == ["foo-0"]
    assert handler.handle_response(response(456, "foo-0"))
    # 2. Wrong epoch: close this session and open a new one in the same (full) request.
    build(handler, {"foo-0": 2})
    assert not handler.handle_response(response(456, error=Errors.INVALID_FETCH_SESSION_EPOCH))
    assert handler.next_metadata == FetchMetadata(456, INITIAL_EPOCH)
    assert build(handler, {"foo-0": 2}).metadata.is_full
    # 3. A network error does the same.
    assert handler.handle_response(response(789, "foo-0"))
    handler.handle_error(ConnectionError("lost"))
    assert handler.next_metadata == FetchMetadata(789, INITIAL_EPOCH)
    # 4. A full response missing a partition is rejected; an incremental one with an extra too.
    build(handler, {"foo-0": 2, "foo-1": 0})
    assert not handler.handle_response(response(5, "foo-0"))
    assert handler.next_metadata == FetchMetadata.INITIAL
    build(handler, {"foo-0": 2, "foo-1": 0})
    assert handler.handle_response(response(5, "foo-0", "foo-1"))
    build(handler, {"foo-0": 2, "foo-1": 0})
    assert not handler.handle_response(response(5, "bar-0"))
    assert handler.next_metadata == FetchMetadata(5, INITIAL_EPOCH)


def test_session_handler_full_response_without_session_stays_sessionless():
    """With no session id in the answer (the leader kept none), every request stays full."""
    handler = FetchSessionHandler(1)
    build(handler, {"foo-0": 0})
    assert handler.handle_response(response(INVALID_SESSION_ID, "foo-0"))
    assert build(handler, {"foo-0": 1}).metadata == FetchMetadata.INITIAL


def test_session_handler_topic_id_replaced():
    """A partition whose topic id changed is re-sent and the old id forgotten (toReplace)."""
    handler = FetchSessionHandler(1)
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), pd(0, Uuid(1, 1)))
    builder.build()
    assert handler.handle_response(FetchResponse.of(0, 0, 9, {TopicIdPartition(Uuid(1, 1), TopicPartition("foo", 0)): PartitionData()}))
    builder = handler.new_builder()
    builder.add(TopicPartition("foo", 0), pd(0, Uuid(2, 2)))
    data = builder.build()
    assert list(data.to_send) == [TopicPartition("foo", 0)]
    assert data.to_replace == [TopicIdPartition(Uuid(1, 1), TopicPartition("foo", 0))]


# -- the leader side (FetchSessionTest) -------------------------------------------------------

def fetch_partition(offset: int) -> FetchPartition:
    return FetchPartition(fetch_offset=offset, partition_max_bytes=100, current_leader_epoch=0)


def tip(p: int, topic: str = "foo") -> TopicIdPartition:
    return TopicIdPartition(TOPIC_ID, TopicPartition(topic, p))


def full_context(manager: FetchManager, offsets: dict[int, int], follower: bool = True, session: int = 0):
    return manager.new_context(FetchMetadata(session, INITIAL_EPOCH), {tip(p): fetch_partition(o) for p, o in offsets.items()},
                               [], follower)


def test_incremental_response_includes_only_changed_partitions():
    """Mirrors FetchSessionTest#testIncrementalFetchSession: what makes a partition come back."""
    manager = FetchManager(MockTime(), FetchSessionCache(10, rng=random.Random(3)))
    base = PartitionData(high_watermark=10, last_stable_offset=10, log_start_offset=0)
    ctx = full_context(manager, {p: 0 for p in range(7)})
    resp = ctx.update_and_generate_response_data({tip(p): base for p in range(7)})
    session_id = resp.session_id

    def incremental(epoch: int, changes: dict[int, PartitionData]) -> list[int]:
        ctx = manager.new_context(FetchMetadata(session_id, epoch), {}, [], True)
        assert isinstance(ctx, IncrementalFetchContext)
        updates = {tip(p): changes.get(p, base) for p in range(7)}
        return [p.partition_index for t in ctx.update_and_generate_response_data(updates).responses for p in t.partitions]

    assert incremental(1, {}) == []
    assert incremental(2, {
        0: replace(base, records=MemoryRecords.of([BATCH])),          # new data
        1: replace(base, high_watermark=11),                          # HW moved
        2: replace(base, log_start_offset=1),                         # log start moved
        3: replace(base, last_stable_offset=9),                       # LSO moved
        4: replace(base, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code),  # an error
        5: replace(base, diverging_epoch=DivergingEpoch(epoch=0, end_offset=5)),  # truncate!
    }) == [0, 1, 2, 3, 4, 5]
    # The same values again: only the diverging epoch repeats; the errored partition comes back
    # once it is healthy (its cached HW was reset to -1).
    assert incremental(3, {1: replace(base, high_watermark=11), 2: replace(base, log_start_offset=1),
                           3: replace(base, last_stable_offset=9),
                           5: replace(base, diverging_epoch=DivergingEpoch(epoch=0, end_offset=5))}) == [4, 5]


def test_session_errors_and_epochs():
    """Mirrors FetchSessionTest#testFetchRequests: unknown id, wrong epoch, duplicate requests."""
    manager = FetchManager(MockTime(), FetchSessionCache(10, rng=random.Random(3)))
    ctx = full_context(manager, {0: 0, 1: 0})
    session_id = ctx.update_and_generate_response_data({tip(0): PartitionData(), tip(1): PartitionData()}).session_id
    assert manager.cache.get(session_id).epoch == 1

    ctx = manager.new_context(FetchMetadata(session_id + 1, 1), {}, [], True)
    assert isinstance(ctx, SessionErrorContext) and ctx.error is Errors.FETCH_SESSION_ID_NOT_FOUND
    assert ctx.update_and_generate_response_data({}).error_code == Errors.FETCH_SESSION_ID_NOT_FOUND.code
    ctx = manager.new_context(FetchMetadata(session_id, 5), {}, [], True)
    assert isinstance(ctx, SessionErrorContext) and ctx.error is Errors.INVALID_FETCH_SESSION_EPOCH

    # Two requests at epochs 1 and 2 in flight; answering the first after the second began fails.
    first = manager.new_context(FetchMetadata(session_id, 1), {}, [], True)
    second = manager.new_context(FetchMetadata(session_id, 2), {}, [], True)
    assert manager.cache.get(session_id).epoch == 3
    assert first.update_and_generate_response_data({}).error_code == Errors.INVALID_FETCH_SESSION_EPOCH.code
    assert second.update_and_generate_response_data({}).error_code == Errors.NONE.code

    # A full request naming the session closes it; FINAL_EPOCH asks for no session at all.
    ctx = full_context(manager, {0: 0}, session=session_id)
    assert manager.cache.get(session_id) is None
    assert isinstance(ctx, FullFetchContext)
    ctx = manager.new_context(FetchMetadata(INVALID_SESSION_ID, FINAL_EPOCH), {tip(0): fetch_partition(0)}, [], True)
    assert isinstance(ctx, SessionlessFetchContext)
    assert ctx.update_and_generate_response_data({tip(0): PartitionData()}).session_id == INVALID_SESSION_ID


def test_forgetting_every_partition_closes_the_session():
    """Mirrors FetchSessionTest#testZeroSizeFetchSession."""
    manager = FetchManager(MockTime(), FetchSessionCache(10, rng=random.Random(3)))
    session_id = full_context(manager, {0: 0, 1: 0}).update_and_generate_response_data(
        {tip(0): PartitionData(), tip(1): PartitionData()}).session_id
    ctx = manager.new_context(FetchMetadata(session_id, 1), {}, [tip(0), tip(1)], True)
    assert isinstance(ctx, SessionlessFetchContext)
    assert manager.cache.size == 0 and manager.cache.total_partitions == 0


def test_incremental_request_updates_cached_request():
    """Mirrors FetchSessionTest#testCachedLeaderEpoch: listed partitions update the cache, others are implied."""
    manager = FetchManager(MockTime(), FetchSessionCache(10, rng=random.Random(3)))
    session_id = full_context(manager, {0: 0, 1: 5}).update_and_generate_response_data(
        {tip(0): PartitionData(), tip(1): PartitionData()}).session_id
    ctx = manager.new_context(FetchMetadata(session_id, 1), {tip(0): fetch_partition(7), tip(2, "bar"): fetch_partition(3)}, [], True)
    listed = []
    ctx.foreach_partition(lambda t, r: listed.append((str(t.topic_partition), r.fetch_offset)))
    assert listed == [("foo-0", 7), ("foo-1", 5), ("bar-2", 3)]
    assert ctx.get_fetch_offset(TopicPartition("foo", 1)) == 5
    assert manager.cache.total_partitions == 3


def test_zero_cache_slots_means_no_sessions():
    """max.incremental.fetch.session.cache.slots = 0: every fetch is sessionless."""
    manager = FetchManager(MockTime(), FetchSessionCache(0))
    resp = full_context(manager, {0: 0}).update_and_generate_response_data({tip(0): PartitionData()})
    assert resp.session_id == INVALID_SESSION_ID
    assert manager.cache.size == 0


def test_privileged_session_handling_and_eviction():
    """Mirrors FetchSessionTest#testPrivilegedSessionHandling and #testFetchSessionExpiration."""
    time = MockTime()
    cache = FetchSessionCache(2, eviction_ms=1000, rng=random.Random(5))
    manager = FetchManager(time, cache)

    def open_session(size: int, follower: bool) -> int:
        ctx = full_context(manager, {p: 0 for p in range(size)}, follower)
        return ctx.update_and_generate_response_data({tip(p): PartitionData() for p in range(size)}).session_id

    consumer = open_session(3, follower=False)
    follower1 = open_session(1, follower=True)
    assert cache.size == 2
    # 1. Full cache: a new consumer session cannot evict young sessions.
    assert open_session(5, follower=False) == INVALID_SESSION_ID
    # 2. A follower (privileged) evicts the consumer session even though it is young.
    follower2 = open_session(1, follower=True)
    assert follower2 != INVALID_SESSION_ID
    assert cache.get(consumer) is None and cache.get(follower1) is not None
    assert cache.evictions == 1
    # 3. Young privileged sessions cannot be evicted by anyone.
    assert open_session(9, follower=True) == INVALID_SESSION_ID
    # 4. Stale sessions (unused > eviction_ms) go first, regardless of value.
    time.advance(500)
    manager.new_context(FetchMetadata(follower2, 1), {}, [], True)  # touches follower2
    time.advance(501)
    new = open_session(1, follower=False)
    assert new != INVALID_SESSION_ID
    assert cache.get(follower1) is None and cache.get(follower2) is not None
    assert cache.evictions == 2
    assert cache.total_partitions == 2


def test_new_session_ids_are_positive_unique_and_seeded():
    """Mirrors FetchSessionTest#testNewSessionId."""
    a = FetchSessionCache(100, rng=random.Random(11))
    b = FetchSessionCache(100, rng=random.Random(11))
    ids_a = [a.maybe_create_session(0, True, 1, dict) for _ in range(50)]
    ids_b = [b.maybe_create_session(0, True, 1, dict) for _ in range(50)]
    assert ids_a == ids_b
    assert len(set(ids_a)) == 50 and all(0 < i < 2**31 - 1 for i in ids_a)
