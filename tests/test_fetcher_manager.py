"""Tests for the fetcher managers, ReplicaFetcherThread and RemoteLeaderEndPoint.

Mirrors core/src/test/scala/unit/kafka/server/AbstractFetcherManagerTest.scala and parts of
ReplicaFetcherThreadTest.scala (Kafka 3.8). The end-to-end tests run a follower's
ReplicaFetcherManager against a small leader broker over the in-process Network; both sides
keep real UnifiedLogs, and the leader serves Fetch through a real FetchManager (KIP-227).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

import anyio
import pytest
import trio.testing

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors, NotLeaderOrFollowerException
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.requests.fetch import EpochEndOffset as DivergingEpoch
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from kafka_ref.common.time import MockTime, Time
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.utils import java_string_hash
from kafka_ref.common.uuid import Uuid
from kafka_ref.log import Disk, UnifiedLog
from kafka_ref.network.network import Network, serve_inbox
from kafka_ref.replica.fetcher import (
    FETCHING,
    AbstractFetcherManager,
    AbstractFetcherThread,
    BrokerEndPoint,
    FailedPartitions,
    IllegalStateException,
    InitialFetchState,
    LeaderEndPoint,
    ReplicaFetcherManager,
    ReplicaFetch,
    ReplicaFetcherThread,
    ResultWithPartitions,
    fetcher_id_for,
)
from kafka_ref.server.fetch_session import FetchManager, FetchRequestPartitionData, FetchSessionCache

# =============================================================================================
# Fetcher ids: Utils.abs(31 * topic.hashCode() + partition) % num.replica.fetchers
# =============================================================================================

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def reference_string_hash(s: str) -> int:
    """java.lang.String#hashCode written out independently: h = 31*h + c over UTF-16 units, int32."""
    units = []
    for ch in s:
        cp = ord(ch)
        if cp > 0xFFFF:  # a supplementary character is two UTF-16 code units
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    h = 0
    for u in units:
        h = 31 * h + u
        h = (h + 2**31) % 2**32 - 2**31  # explicit two's-complement int32 wrap
    return h


def reference_fetcher_id(topic: str, partition: int, num_fetchers: int) -> int:
    raw = 31 * reference_string_hash(topic) + partition
    raw = (raw + 2**31) % 2**32 - 2**31  # the int multiplication and addition wrap too
    abs_value = 0 if raw == INT_MIN else abs(raw)  # Utils.abs maps Integer.MIN_VALUE to 0
    return abs_value % num_fetchers


# 30 topics x 10 partitions = 300 (topic, partition) pairs, with names that wrap the int32.
TOPICS = (
    ["topic", "__consumer_offsets", "orders", "payments", "clicks", "a", "Aa", "BB", "polygenelubricants",
     "GydZG_", "DESIGNING WORKHOUSES", "hello", "Hello World", "x" * 40, "événements", "日志", "emoji-🎉",
     "t-0", "t-1", "t.with.dots", "UPPER", "mixedCase_Topic", "123456", "zzzzzzzzzzzz", "metrics-v2",
     "_internal", "a-very-long-topic-name-that-overflows-the-int32-hash-many-times", "k", "kafka", "ref"]
)
PAIRS = [(topic, partition) for topic in TOPICS for partition in range(10)]


def test_reference_string_hash_known_values():
    """Literal String.hashCode values (as Java computes them) pin the reference implementation."""
    assert reference_string_hash("") == 0
    assert reference_string_hash("a") == 97
    assert reference_string_hash("hello") == 99162322
    assert reference_string_hash("Hello World") == -862545276
    assert reference_string_hash("Aa") == reference_string_hash("BB") == 2112
    assert reference_string_hash("polygenelubricants") == INT_MIN
    assert reference_string_hash("GydZG_") == INT_MIN
    assert reference_string_hash("DESIGNING WORKHOUSES") == INT_MIN
    # The project's helper agrees with the reference on all of them and on the table's topics.
    for topic in TOPICS + ["", "Hello World"]:
        assert java_string_hash(topic) == reference_string_hash(topic), topic


def test_fetcher_id_table():
    """300 (topic, partition) pairs x num.replica.fetchers 1..8, against the reference definition."""
    assert len(PAIRS) == 300
    mismatches = [
        (topic, partition, n)
        for topic, partition in PAIRS
        for n in range(1, 9)
        if fetcher_id_for(TopicPartition(topic, partition), n) != reference_fetcher_id(topic, partition, n)
    ]
    assert mismatches == []
    # Every id is in range and the ids are spread over all fetchers.
    for n in range(1, 9):
        ids = {fetcher_id_for(TopicPartition(t, p), n) for t, p in PAIRS}
        assert ids == set(range(n))


def test_fetcher_id_int32_wrap_literals():
    """Cases where Java's overflow decides the fetcher (a plain Python abs would get them wrong)."""
    # 31 * Integer.MIN_VALUE wraps back to MIN_VALUE; Utils.abs(MIN_VALUE) == 0.
    assert [fetcher_id_for(TopicPartition("polygenelubricants", 0), n) for n in range(1, 9)] == [0] * 8
    # MIN_VALUE + 1 -> abs = Integer.MAX_VALUE = 2147483647.
    assert [fetcher_id_for(TopicPartition("polygenelubricants", 1), n) for n in range(1, 9)] == [0, 1, 1, 3, 2, 1, 1, 7]
    # "hello": 31 * 99162322 = 3074031982 wraps to -1220935314.
    assert [fetcher_id_for(TopicPartition("hello", 0), n) for n in range(1, 9)] == [
        1220935314 % n for n in range(1, 9)
    ]
    naive = [abs(31 * java_string_hash("hello") + 0) % n for n in range(1, 9)]
    assert naive != [fetcher_id_for(TopicPartition("hello", 0), n) for n in range(1, 9)]


# =============================================================================================
# AbstractFetcherManager with a minimal fetcher
# =============================================================================================


class IdleLeaderEndPoint(LeaderEndPoint):
    """A leader end point that never has anything to fetch (the manager tests need no data)."""

    def __init__(self, broker: BrokerEndPoint) -> None:
        self.broker = broker

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return True

    def broker_end_point(self) -> BrokerEndPoint:
        return self.broker

    async def fetch(self, fetch_request):
        return {}

    async def fetch_earliest_offset(self, tp, current_leader_epoch):
        raise NotLeaderOrFollowerException("idle")

    async def fetch_latest_offset(self, tp, current_leader_epoch):
        raise NotLeaderOrFollowerException("idle")

    async def fetch_epoch_end_offsets(self, partitions):
        return {}

    def build_fetch(self, partition_map):
        return ResultWithPartitions(None)


class IdleFetcherThread(AbstractFetcherThread):
    """A fetcher whose local logs all have epoch 0 and end offset 0."""

    def process_partition_data(self, tp, fetch_offset, partition_data):
        return None

    def truncate(self, tp, truncation_state):
        pass

    def truncate_fully_and_start_at(self, tp, offset):
        pass

    def latest_epoch(self, tp):
        return 0

    def log_start_offset(self, tp):
        return 0

    def log_end_offset(self, tp):
        return 0

    def end_offset_for_epoch(self, tp, epoch):
        return None


class FakeFetcherManager(AbstractFetcherManager[IdleFetcherThread]):
    def __init__(self, num_fetchers: int = 1, task_group=None) -> None:
        super().__init__("fetcher-manager", "fetcher-manager", num_fetchers, task_group)
        self.created: list[tuple[int, BrokerEndPoint]] = []

    def create_fetcher_thread(self, fetcher_id: int, source_broker: BrokerEndPoint) -> IdleFetcherThread:
        self.created.append((fetcher_id, source_broker))
        return IdleFetcherThread(f"fetcher-{fetcher_id}-{source_broker.id}", "client", IdleLeaderEndPoint(source_broker),
                                 self.failed_partitions, 10, MockTime())


BROKER1 = BrokerEndPoint(1, "host1", 9092)
TOPIC_ID = Uuid(11, 11)


def ifs(leader: BrokerEndPoint, offset: int = 0, epoch: int = 0) -> InitialFetchState:
    return InitialFetchState(TOPIC_ID, leader, epoch, offset)


def test_add_and_remove_partition():
    """Mirrors AbstractFetcherManagerTest#testAddAndRemovePartition."""
    manager = FakeFetcherManager()
    tp = TopicPartition("topic", 0)
    manager.add_fetcher_for_partitions({tp: ifs(BROKER1, offset=5, epoch=2)})
    fetcher = manager.get_fetcher(tp)
    assert fetcher is not None and manager.created == [(0, BROKER1)]
    state = fetcher.fetch_state(tp)
    assert (state.fetch_offset, state.current_leader_epoch, state.state, state.last_fetched_epoch) == (5, 2, FETCHING, 0)

    removed = manager.remove_fetcher_for_partitions({tp})
    assert removed == {tp: state}
    assert manager.get_fetcher(tp) is None
    # The idle fetcher stays until shutdown_idle_fetcher_threads.
    assert len(manager.fetcher_thread_map) == 1
    manager.shutdown_idle_fetcher_threads()
    assert manager.fetcher_thread_map == {}
    assert fetcher.is_running is False


def test_fetchers_keyed_by_broker_and_fetcher_id():
    """Partitions go to fetcher (leader id, fetcher id); the same leader reuses its fetcher."""
    manager = FakeFetcherManager(num_fetchers=3)
    broker2 = BrokerEndPoint(2, "host2", 9092)
    tps = [TopicPartition("topic", p) for p in range(6)]
    manager.add_fetcher_for_partitions({tp: ifs(BROKER1 if tp.partition < 3 else broker2) for tp in tps})
    keys = {(k.broker_id, k.fetcher_id) for k in manager.fetcher_thread_map}
    expected = {(1 if tp.partition < 3 else 2, fetcher_id_for(tp, 3)) for tp in tps}
    assert keys == expected
    for tp in tps:
        fetcher = manager.get_fetcher(tp)
        assert fetcher.leader.broker_end_point().id == (1 if tp.partition < 3 else 2)
    created = len(manager.created)
    manager.add_fetcher_for_partitions({TopicPartition("topic", 9): ifs(BROKER1)})
    assert len(manager.created) == created + (0 if (1, fetcher_id_for(TopicPartition("topic", 9), 3)) in keys else 1)


def test_fetcher_replaced_when_leader_end_point_changes():
    """Mirrors AbstractFetcherManager#addFetcherForPartitions: a new host/port for the same id replaces the fetcher."""
    manager = FakeFetcherManager()
    tp0, tp1 = TopicPartition("topic", 0), TopicPartition("topic", 1)
    manager.add_fetcher_for_partitions({tp0: ifs(BROKER1)})
    old = manager.get_fetcher(tp0)
    moved = BrokerEndPoint(1, "host1-new", 9093)
    manager.add_fetcher_for_partitions({tp1: ifs(moved)})
    new = manager.get_fetcher(tp1)
    assert new is not old
    assert old.is_running is False
    assert new.leader.broker_end_point() == moved
    assert manager.created == [(0, BROKER1), (0, moved)]
    # Kafka does not migrate tp0: it was on the old fetcher, which is gone.
    assert manager.get_fetcher(tp0) is None


def test_metric_failed_partition_count():
    """Mirrors AbstractFetcherManagerTest#testMetricFailedPartitionCount."""
    manager = FakeFetcherManager()
    tp = TopicPartition("topic", 0)
    manager.add_failed_partition(tp)
    assert manager.failed_partitions_count == 1
    manager.add_failed_partition(tp)
    assert manager.failed_partitions_count == 1
    # Adding the partition to a fetcher (a new LeaderAndIsr) clears it.
    manager.add_fetcher_for_partitions({tp: ifs(BROKER1)})
    assert manager.failed_partitions_count == 0
    manager.add_failed_partition(tp)
    manager.remove_fetcher_for_partitions({tp})
    assert manager.failed_partitions_count == 0


def test_max_lag_and_dead_thread_count():
    """Mirrors the MaxLag and DeadThreadCount gauges of AbstractFetcherManager."""
    manager = FakeFetcherManager(num_fetchers=2)
    tps = [TopicPartition("topic", p) for p in range(4)]
    manager.add_fetcher_for_partitions({tp: ifs(BROKER1) for tp in tps})
    assert manager.max_lag() == 0
    for lag, tp in zip([3, 17, 5, 0], tps):
        manager.get_fetcher(tp).fetcher_lag_stats.get_and_maybe_put(tp).lag = lag
    assert manager.max_lag() == 17
    assert manager.dead_thread_count == 0
    manager.get_fetcher(tps[0])._thread_failed = True
    assert manager.dead_thread_count == 1


def test_maybe_update_topic_ids():
    """Mirrors AbstractFetcherManagerTest#testMaybeUpdateTopicIds."""
    manager = FakeFetcherManager()
    tp = TopicPartition("topic", 0)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(None, BROKER1, 0, 0)})
    assert manager.get_fetcher(tp).fetch_state(tp).topic_id is None
    manager.maybe_update_topic_ids({tp: 1}, lambda topic: TOPIC_ID)
    assert manager.get_fetcher(tp).fetch_state(tp).topic_id == TOPIC_ID


def test_resize_thread_pool():
    """Mirrors AbstractFetcherManagerTest#testExpandThreadPool / testShrinkThreadPool."""
    manager = FakeFetcherManager(num_fetchers=1)
    tps = [TopicPartition(f"topic-{i}", p) for i in range(4) for p in range(3)]
    manager.add_fetcher_for_partitions({tp: ifs(BROKER1, offset=tp.partition, epoch=4) for tp in tps})
    assert {k.fetcher_id for k in manager.fetcher_thread_map} == {0}

    manager.resize_thread_pool(4)
    assert {k.fetcher_id for k in manager.fetcher_thread_map} == {fetcher_id_for(tp, 4) for tp in tps}
    for tp in tps:
        fetcher = manager.get_fetcher(tp)
        assert next(k for k, f in manager.fetcher_thread_map.items() if f is fetcher).fetcher_id == fetcher_id_for(tp, 4)
        state = fetcher.fetch_state(tp)
        assert (state.fetch_offset, state.current_leader_epoch) == (tp.partition, 4)

    manager.resize_thread_pool(1)
    assert {k.fetcher_id for k in manager.fetcher_thread_map} == {0}
    assert sum(f.partition_count for f in manager.fetcher_thread_map.values()) == 12


@pytest.mark.anyio
async def test_fetchers_start_in_the_task_group_given_later():
    """Fetchers created before start(task_group) start then; later ones start at once."""
    manager = FakeFetcherManager()
    manager.add_fetcher_for_partitions({TopicPartition("topic", 0): ifs(BROKER1)})
    fetcher = manager.get_fetcher(TopicPartition("topic", 0))
    assert fetcher.is_started is False
    async with anyio.create_task_group() as tg:
        manager.start(tg)
        assert fetcher.is_started is True
        await anyio.sleep(0.01)
        manager.close_all_fetchers()
        await fetcher.await_shutdown()
    assert fetcher.is_running is False and fetcher.is_thread_failed is False
    assert manager.fetcher_thread_map == {}


# =============================================================================================
# A leader broker and a follower ReplicaManager, both on real UnifiedLogs
# =============================================================================================


def mk_batch(base_offset: int, epoch: int, count: int = 1) -> RecordBatch:
    return RecordBatch.build([SimpleRecord(value=f"v{base_offset + i}".encode()) for i in range(count)],
                             base_offset=base_offset, partition_leader_epoch=epoch)


def make_log(tp: TopicPartition, broker_id: int, spec: list[tuple[int, int]], hw: int, topic_id: Uuid) -> UnifiedLog:
    """A log holding one-record batches (base offset, epoch), with the given high watermark."""
    log = UnifiedLog.create(tp, Disk(broker_id), time=MockTime(), topic_id=topic_id)
    for base, epoch in spec:
        log.append_as_follower(MemoryRecords.of([mk_batch(base, epoch)]))
    log.update_high_watermark(hw)
    return log


def log_offsets(log: UnifiedLog) -> list[tuple[int, int]]:
    return [(b.base_offset, b.partition_leader_epoch) for b in log.batches]


class FakeLeaderBroker:
    """A leader answering Fetch (with a FetchManager), ListOffsets and OffsetsForLeaderEpoch.

    A simplified ReplicaManager#fetchMessages / Partition#fetchRecords: epoch fencing, the
    diverging-epoch check, a read with the follower's max bytes, and the HW raised to the
    follower's fetch offset (the follower is the only other ISR member).
    """

    def __init__(self, broker_id: int, slots: int = 1000, task_group=None) -> None:
        self.broker_id = broker_id
        self.task_group = task_group
        self.logs: dict[TopicPartition, UnifiedLog] = {}
        self.leader_epochs: dict[TopicPartition, int] = {}
        self.topic_ids: dict[str, Uuid] = {}
        self.fetch_manager = FetchManager(MockTime(), FetchSessionCache(slots, rng=random.Random(7)))
        self.received: list = []

    def add_partition(self, tp: TopicPartition, log: UnifiedLog, leader_epoch: int, topic_id: Uuid) -> None:
        self.logs[tp], self.leader_epochs[tp], self.topic_ids[tp.topic] = log, leader_epoch, topic_id

    def handle(self, envelope) -> None:
        request = envelope.request
        self.received.append(request)
        if isinstance(request, FetchRequest):
            response = self._fetch(request)
            if self.task_group is not None and response.error_code == 0 and response.records_size_in_bytes() == 0:
                # Like a DelayedFetch with min.bytes 1: an empty answer waits max_wait_ms.
                self.task_group.start_soon(self._respond_later, envelope, response, request.max_wait_ms)
            else:
                envelope.respond(response)
        elif isinstance(request, ListOffsetsRequest):
            envelope.respond(self._list_offsets(request))
        elif isinstance(request, OffsetForLeaderEpochRequest):
            envelope.respond(self._offsets_for_leader_epoch(request))
        else:
            raise AssertionError(f"unexpected request {request!r}")

    async def _respond_later(self, envelope, response: FetchResponse, max_wait_ms: int) -> None:
        await anyio.sleep(max_wait_ms / 1000)
        envelope.respond(response)

    def _epoch_error(self, tp: TopicPartition, current_leader_epoch: int) -> Errors | None:
        epoch = self.leader_epochs[tp]
        if current_leader_epoch == -1 or current_leader_epoch == epoch:
            return None
        return Errors.FENCED_LEADER_EPOCH if current_leader_epoch < epoch else Errors.UNKNOWN_LEADER_EPOCH

    def _fetch(self, request: FetchRequest) -> FetchResponse:
        names = {tid: topic for topic, tid in self.topic_ids.items()}
        context = self.fetch_manager.new_context_for_request(request, names)
        updates: dict[TopicIdPartition, PartitionData] = {}

        def read(tip: TopicIdPartition, fp) -> None:
            tp = tip.topic_partition
            log = self.logs[tp]
            error = self._epoch_error(tp, fp.current_leader_epoch)
            if error is None and not (log.log_start_offset <= fp.fetch_offset <= log.log_end_offset):
                error = Errors.OFFSET_OUT_OF_RANGE
            if error is not None:
                updates[tip] = FetchResponse.partition_response(tp.partition, error.code)
                return
            common = dict(partition_index=tp.partition, high_watermark=log.high_watermark,
                          last_stable_offset=log.high_watermark, log_start_offset=log.log_start_offset)
            if fp.last_fetched_epoch >= 0:
                end = log.end_offset_for_epoch(fp.last_fetched_epoch)
                if end is None:
                    updates[tip] = FetchResponse.partition_response(tp.partition, Errors.OFFSET_OUT_OF_RANGE.code)
                    return
                if end.epoch < fp.last_fetched_epoch or end.offset < fp.fetch_offset:
                    updates[tip] = PartitionData(diverging_epoch=DivergingEpoch(epoch=end.epoch, end_offset=end.offset), **common)
                    return
            info = log.read(fp.fetch_offset, fp.partition_max_bytes, min_one_message=True)
            updates[tip] = PartitionData(records=info.records, **common)
            if fp.fetch_offset > log.high_watermark:
                log.update_high_watermark(fp.fetch_offset)

        context.foreach_partition(read)
        return context.update_and_generate_response_data(updates)

    def _list_offsets(self, request: ListOffsetsRequest) -> ListOffsetsResponse:
        topics = []
        for topic in request.topics:
            parts = []
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                log, error = self.logs[tp], self._epoch_error(tp, p.current_leader_epoch)
                offset = log.log_start_offset if p.timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP else log.log_end_offset
                parts.append(ListOffsetsPartitionResponse(
                    partition_index=p.partition_index, error_code=(error or Errors.NONE).code,
                    offset=-1 if error else offset, leader_epoch=self.leader_epochs[tp]))
            topics.append(ListOffsetsTopicResponse(name=topic.name, partitions=tuple(parts)))
        return ListOffsetsResponse(topics=tuple(topics))

    def _offsets_for_leader_epoch(self, request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
        topics = []
        for topic in request.topics:
            parts = []
            for p in topic.partitions:
                tp = TopicPartition(topic.topic, p.partition)
                error = self._epoch_error(tp, p.current_leader_epoch)
                if error is not None:
                    parts.append(EpochEndOffset(error_code=error.code, partition=p.partition))
                    continue
                end = self.logs[tp].end_offset_for_epoch(p.leader_epoch)
                parts.append(EpochEndOffset(partition=p.partition, leader_epoch=end.epoch if end else -1,
                                            end_offset=end.offset if end else -1))
            topics.append(OffsetForLeaderTopicResult(topic=topic.topic, partitions=tuple(parts)))
        return OffsetForLeaderEpochResponse(topics=tuple(topics))

    def count(self, kind: type) -> int:
        return sum(1 for r in self.received if isinstance(r, kind))


class FollowerPartition:
    """The Partition contract the ReplicaFetcherThread uses, over a real UnifiedLog."""

    def __init__(self, log: UnifiedLog, leader_epoch: int) -> None:
        self.log = log
        self.leader_epoch = leader_epoch

    @property
    def local_log_or_exception(self) -> UnifiedLog:
        return self.log

    def get_leader_epoch(self) -> int:
        return self.leader_epoch

    def append_records_to_follower_or_future_replica(self, records, is_future=False):
        return self.log.append_as_follower(records)

    def truncate_to(self, offset, is_future=False):
        self.log.truncate_to(offset)

    def truncate_fully_and_start_at(self, offset, is_future=False):
        self.log.truncate_fully_and_start_at(offset)


class FollowerReplicaManager:
    """The ReplicaManager contract the ReplicaFetcherThread uses."""

    def __init__(self, broker_id: int, config: KafkaConfig, time: Time) -> None:
        self.local_broker_id = broker_id
        self.config = config
        self.time = time
        self.metadata_cache = None
        self.partitions: dict[TopicPartition, FollowerPartition] = {}
        self.completed_delayed_fetches: list[list[TopicPartition]] = []

    def get_partition_or_exception(self, tp: TopicPartition) -> FollowerPartition:
        partition = self.partitions.get(tp)
        if partition is None:
            raise NotLeaderOrFollowerException(f"no partition {tp} on broker {self.local_broker_id}")
        return partition

    def complete_delayed_fetch_requests(self, tps) -> None:
        self.completed_delayed_fetches.append(list(tps))


LEADER, FOLLOWER = 1, 2
LEADER_EP = BrokerEndPoint(LEADER, "leader", 9092)


@pytest.fixture(params=["asyncio", ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})],
                ids=["asyncio", "trio-virtual"])
def anyio_backend(request):
    return request.param


async def replicate_until(cond, tg, timeout_s: float = 10.0) -> None:
    with anyio.fail_after(timeout_s):
        while not cond():
            await anyio.sleep(0.001)


ERA_CASES = [
    # (IBP, expected follower log, OffsetsForLeaderEpoch requests, ListOffsets requests)
    ("0.10.2", [(0, 0), (1, 3), (2, 5)], 0),   # truncate to HW (1), then fetch: offset 0 keeps epoch 0
    ("1.1", [(0, 0), (1, 2), (2, 5)], 1),      # KIP-101: one round, only the end offset (2)
    ("2.0", [(0, 1), (1, 3), (2, 5)], 3),      # KIP-279: three rounds, converges
    ("2.6", [(0, 1), (1, 3), (2, 5)], 3),
    ("2.7", [(0, 1), (1, 3), (2, 5)], 0),      # truncation on fetch: diverging epochs, no epoch request
    ("3.8", [(0, 1), (1, 3), (2, 5)], 0),
]


@pytest.mark.anyio
@pytest.mark.parametrize("ibp,expected,epoch_requests", ERA_CASES, ids=[c[0] for c in ERA_CASES])
async def test_replica_fetcher_truncation_by_era(ibp, expected, epoch_requests):
    """The same divergent follower, replicated under each era's rule (ReplicaFetcherThreadTest cases).

    Follower: offsets 0,1,2 with epochs 0,2,4 and HW 1. Leader (epoch 5): epochs 1,3,5, HW 2.
    """
    tp = TopicPartition("topic", 0)
    topic_id = Uuid(5, 5)
    config = KafkaConfig({"broker.id": FOLLOWER, "inter.broker.protocol.version": ibp, "replica.fetch.backoff.ms": 50,
                          "replica.fetch.wait.max.ms": 20})
    leader = FakeLeaderBroker(LEADER)
    leader_log = make_log(tp, LEADER, [(0, 1), (1, 3), (2, 5)], 2, topic_id)
    leader.add_partition(tp, leader_log, 5, topic_id)
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, Time())
    follower_log = make_log(tp, FOLLOWER, [(0, 0), (1, 2), (2, 4)], 1, topic_id)
    replica_mgr.partitions[tp] = FollowerPartition(follower_log, 5)
    # ReplicaManager#initialFetchOffset: the LEO when the era truncates on fetch and the log has epochs, else the HW.
    init_offset = follower_log.log_end_offset if config.inter_broker_protocol_version.truncates_on_fetch else follower_log.high_watermark

    network = Network()
    async with anyio.create_task_group() as tg:
        leader.task_group = tg
        tg.start_soon(serve_inbox, network.register(LEADER), leader.handle)
        manager = ReplicaFetcherManager(config, replica_mgr, network, tg)
        manager.add_fetcher_for_partitions({tp: InitialFetchState(topic_id, LEADER_EP, 5, init_offset)})
        await replicate_until(lambda: follower_log.log_end_offset == 3 and manager.get_fetcher(tp).fetch_state(tp).fetch_offset == 3
                              and follower_log.high_watermark == 2, tg)
        manager.shutdown()
        tg.cancel_scope.cancel()

    assert log_offsets(follower_log) == expected
    assert leader.count(OffsetForLeaderEpochRequest) == epoch_requests
    assert leader.count(ListOffsetsRequest) == 0
    assert (follower_log.log_end_offset, follower_log.high_watermark) == (3, 2)


@pytest.mark.anyio
async def test_replica_fetcher_manager_end_to_end_with_fetch_session():
    """Three partitions replicate through one fetcher and one KIP-227 session; requests list only changes."""
    config = KafkaConfig({"broker.id": FOLLOWER, "replica.fetch.backoff.ms": 50, "replica.fetch.wait.max.ms": 20})
    leader = FakeLeaderBroker(LEADER)
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, Time())
    tps = [TopicPartition("t", p) for p in range(3)]
    topic_id = Uuid(9, 9)
    for tp in tps:
        leader.add_partition(tp, make_log(tp, LEADER, [(i, 0) for i in range(tp.partition + 1)], 0, topic_id), 0, topic_id)
        replica_mgr.partitions[tp] = FollowerPartition(make_log(tp, FOLLOWER, [], 0, topic_id), 0)

    network = Network()
    async with anyio.create_task_group() as tg:
        leader.task_group = tg
        tg.start_soon(serve_inbox, network.register(LEADER), leader.handle)
        manager = ReplicaFetcherManager(config, replica_mgr, network, tg)
        manager.add_fetcher_for_partitions({tp: InitialFetchState(topic_id, LEADER_EP, 0, 0) for tp in tps})
        logs = {tp: replica_mgr.partitions[tp].log for tp in tps}
        await replicate_until(lambda: all(logs[tp].log_end_offset == tp.partition + 1 and
                                          logs[tp].high_watermark == tp.partition + 1 for tp in tps), tg)
        # New data on one partition only.
        leader.logs[tps[1]].append_as_leader(MemoryRecords.with_records([SimpleRecord(value=b"new")]), 0)
        await replicate_until(lambda: logs[tps[1]].log_end_offset == 3 and logs[tps[1]].high_watermark == 3, tg)
        manager.shutdown()
        tg.cancel_scope.cancel()

    fetches = [r for r in leader.received if isinstance(r, FetchRequest)]
    # The first fetch is full (epoch 0) and lists all three partitions.
    assert (fetches[0].session_id, fetches[0].session_epoch) == (0, 0)
    assert sorted(p.partition for t in fetches[0].topics for p in t.partitions) == [0, 1, 2]
    # Then one session, epochs 1, 2, 3, ... and each request lists only partitions whose request changed.
    session_id = fetches[1].session_id
    assert session_id != 0
    assert [f.session_epoch for f in fetches[1:]] == list(range(1, len(fetches)))
    last_offset = {p.partition: p.fetch_offset for t in fetches[0].topics for p in t.partitions}
    for f in fetches[1:]:
        assert f.session_id == session_id
        for t in f.topics:
            for p in t.partitions:
                assert p.fetch_offset != last_offset[p.partition]
                last_offset[p.partition] = p.fetch_offset
    assert any(not f.topics for f in fetches[1:])  # steady state: nothing to list
    assert replica_mgr.completed_delayed_fetches  # follower HW moves woke delayed fetches
    assert [log_offsets(replica_mgr.partitions[tp].log) for tp in tps] == [[(0, 0)], [(0, 0), (1, 0), (2, 0)], [(0, 0), (1, 0), (2, 0)]]


# =============================================================================================
# ReplicaFetcherThread on its own
# =============================================================================================


class ScriptedLeader(LeaderEndPoint):
    """A leader end point whose fetch answers are scripted by the test."""

    def __init__(self) -> None:
        self.answers: list[Mapping[TopicPartition, PartitionData]] = []

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return True

    def broker_end_point(self) -> BrokerEndPoint:
        return LEADER_EP

    async def fetch(self, fetch_request):
        return self.answers.pop(0)

    async def fetch_earliest_offset(self, tp, current_leader_epoch):
        raise NotLeaderOrFollowerException("scripted")

    async def fetch_latest_offset(self, tp, current_leader_epoch):
        raise NotLeaderOrFollowerException("scripted")

    async def fetch_epoch_end_offsets(self, partitions):
        return {}

    def build_fetch(self, partition_map):
        data = {tp: FetchRequestPartitionData(Uuid(5, 5), s.fetch_offset, 0, 1 << 20, s.current_leader_epoch, s.last_fetched_epoch)
                for tp, s in partition_map.items() if s.is_ready_for_fetch}
        return ResultWithPartitions(ReplicaFetch(data, data) if data else None)


@pytest.mark.anyio
async def test_replica_fetcher_thread_follower_hw_and_log_start():
    """Mirrors ReplicaFetcherThreadTest: HW = min(leader HW, LEO), log start follows the leader."""
    tp = TopicPartition("topic", 0)
    config = KafkaConfig({"broker.id": FOLLOWER})
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, MockTime())
    log = make_log(tp, FOLLOWER, [], 0, Uuid(5, 5))
    replica_mgr.partitions[tp] = FollowerPartition(log, 0)
    leader = ScriptedLeader()
    failed = FailedPartitions()
    thread = ReplicaFetcherThread("ReplicaFetcherThread-0-1", leader, config, failed, replica_mgr)
    thread.add_partitions({tp: InitialFetchState(Uuid(5, 5), LEADER_EP, 0, 0)})

    # Leader HW 10 is ahead of what we hold: our HW stops at our LEO (3).
    leader.answers.append({tp: PartitionData(high_watermark=10, log_start_offset=0,
                                             records=MemoryRecords.of([mk_batch(0, 0, count=3)]))})
    await thread.do_work()
    assert (log.log_end_offset, log.high_watermark, log.log_start_offset) == (3, 3, 0)
    assert replica_mgr.completed_delayed_fetches == [[tp]]
    assert thread.fetcher_lag_stats.stats[tp].lag == 7

    # No new data, but the leader's HW and log start moved (retention on the leader).
    leader.answers.append({tp: PartitionData(high_watermark=3, log_start_offset=2)})
    await thread.do_work()
    assert (log.log_end_offset, log.high_watermark, log.log_start_offset) == (3, 3, 2)
    assert replica_mgr.completed_delayed_fetches == [[tp]]  # HW did not move: nothing to wake
    assert failed.size == 0


@pytest.mark.anyio
async def test_replica_fetcher_thread_offset_mismatch_fails_partition():
    """processPartitionData requires fetch offset == LEO (IllegalStateException): the partition fails."""
    tp = TopicPartition("topic", 0)
    config = KafkaConfig({"broker.id": FOLLOWER})
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, MockTime())
    log = make_log(tp, FOLLOWER, [(0, 0), (1, 0)], 0, Uuid(5, 5))
    replica_mgr.partitions[tp] = FollowerPartition(log, 0)
    leader = ScriptedLeader()
    failed = FailedPartitions()
    thread = ReplicaFetcherThread("f", leader, config, failed, replica_mgr)
    with pytest.raises(IllegalStateException, match="Offset mismatch"):
        thread.process_partition_data(tp, 5, PartitionData(high_watermark=0))
    thread.add_partitions({tp: InitialFetchState(Uuid(5, 5), LEADER_EP, 0, 1)})  # 1 != LEO 2
    leader.answers.append({tp: PartitionData(high_watermark=2, records=MemoryRecords.of([mk_batch(1, 0)]))})
    await thread.do_work()
    assert tp in failed and thread.fetch_state(tp) is None
    assert log.log_end_offset == 2


async def run_follower(leader: FakeLeaderBroker, replica_mgr: FollowerReplicaManager, config: KafkaConfig,
                       initial: dict[TopicPartition, InitialFetchState], done) -> None:
    network = Network()
    async with anyio.create_task_group() as tg:
        leader.task_group = tg
        tg.start_soon(serve_inbox, network.register(LEADER), leader.handle)
        manager = ReplicaFetcherManager(config, replica_mgr, network, tg)
        manager.add_fetcher_for_partitions(initial)
        await replicate_until(done, tg)
        manager.shutdown()
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_out_of_range_high_over_the_network():
    """IBP 0.10.2, after an unclean election: our HW (5) is past the new leader's end (3).

    Fetch at 5 -> OFFSET_OUT_OF_RANGE -> ListOffsets(latest) = 3 -> truncate to 3 and go on.
    """
    tp, topic_id = TopicPartition("topic", 0), Uuid(5, 5)
    config = KafkaConfig({"broker.id": FOLLOWER, "inter.broker.protocol.version": "0.10.2", "replica.fetch.wait.max.ms": 20})
    leader = FakeLeaderBroker(LEADER)
    leader_log = make_log(tp, LEADER, [(0, 0), (1, 0), (2, 1), (3, 1)], 0, topic_id)
    leader.add_partition(tp, leader_log, 1, topic_id)
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, Time())
    follower_log = make_log(tp, FOLLOWER, [(i, 0) for i in range(5)], 5, topic_id)
    replica_mgr.partitions[tp] = FollowerPartition(follower_log, 1)
    leader_log.truncate_to(3)  # the unclean leader only has offsets 0-2

    await run_follower(leader, replica_mgr, config, {tp: InitialFetchState(topic_id, LEADER_EP, 1, 5)},
                       lambda: follower_log.log_end_offset == 3 and follower_log.high_watermark == 3)
    assert log_offsets(follower_log) == [(0, 0), (1, 0), (2, 0)]  # offset 2 keeps our epoch 0: not reconciled
    assert [r.topics[0].partitions[0].timestamp for r in leader.received if isinstance(r, ListOffsetsRequest)] == [-1]


@pytest.mark.anyio
async def test_out_of_range_low_over_the_network():
    """IBP 3.8: the leader deleted old data (log start 10); we are at 2.

    Fetch at 2 -> OFFSET_OUT_OF_RANGE -> ListOffsets(latest) = 12 >= 2, ListOffsets(earliest) = 10
    -> truncate fully and start at 10, then fetch 10 and 11.
    """
    tp, topic_id = TopicPartition("topic", 0), Uuid(5, 5)
    config = KafkaConfig({"broker.id": FOLLOWER, "replica.fetch.wait.max.ms": 20})
    leader = FakeLeaderBroker(LEADER)
    leader_log = UnifiedLog.create(tp, Disk(LEADER), time=MockTime(), topic_id=topic_id)
    leader_log.truncate_fully_and_start_at(10)
    leader_log.append_as_follower(MemoryRecords.of([mk_batch(10, 0), mk_batch(11, 0)]))
    leader_log.update_high_watermark(11)
    leader.add_partition(tp, leader_log, 0, topic_id)
    replica_mgr = FollowerReplicaManager(FOLLOWER, config, Time())
    follower_log = make_log(tp, FOLLOWER, [(0, 0), (1, 0)], 2, topic_id)
    replica_mgr.partitions[tp] = FollowerPartition(follower_log, 0)

    await run_follower(leader, replica_mgr, config, {tp: InitialFetchState(topic_id, LEADER_EP, 0, 2)},
                       lambda: follower_log.log_end_offset == 12 and follower_log.high_watermark == 12)
    assert log_offsets(follower_log) == [(10, 0), (11, 0)]
    assert follower_log.log_start_offset == 10
    assert [r.topics[0].partitions[0].timestamp for r in leader.received if isinstance(r, ListOffsetsRequest)] == [-1, -2]
