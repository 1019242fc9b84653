"""Tests for AbstractFetcherThread (kafka_ref.replica.fetcher).

Mirrors core/src/test/scala/unit/kafka/server/AbstractFetcherThreadTest.scala (Kafka 3.8) with
its MockLeaderEndPoint / MockFetcherThread (defined below), driven by calling do_work()
directly. Tests run on asyncio and trio.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import anyio
import pytest
import trio.testing

from kafka_ref.common.errors import (
    Errors,
    FencedLeaderEpochException,
    KafkaException,
    KafkaStorageException,
    UnknownLeaderEpochException,
    UnknownTopicIdException,
)
from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord
from kafka_ref.common.requests.fetch import EpochEndOffset as DivergingEpoch
from kafka_ref.common.requests.fetch import FetchResponse, PartitionData
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    OffsetForLeaderPartition,
)
from kafka_ref.common.time import MockTime, Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.log.fetch_data import LogAppendInfo, OffsetAndEpoch
from kafka_ref.replica.fetcher.abstract_fetcher_thread import AbstractFetcherThread
from kafka_ref.replica.fetcher.fetcher_metrics import FetcherMetrics
from kafka_ref.replica.fetcher.leader_end_point import LeaderEndPoint, ReplicaFetch, ResultWithPartitions
from kafka_ref.replica.fetcher.partition_fetch_state import (
    FETCHING,
    TRUNCATING,
    BrokerEndPoint,
    FailedPartitions,
    IllegalStateException,
    InitialFetchState,
    OffsetTruncationState,
    PartitionFetchState,
)
from kafka_ref.server.fetch_session import FetchRequestPartitionData


def mk_batch(base_offset: int, leader_epoch: int, *values: bytes) -> RecordBatch:
    """Mirrors FetcherThreadTestUtils#mkBatch: one uncompressed batch."""
    return RecordBatch.build([SimpleRecord(value=v) for v in values], base_offset=base_offset,
                             partition_leader_epoch=leader_epoch)


def initial_fetch_state(topic_id: Uuid | None, fetch_offset: int, leader_epoch: int, leader_id: int = 1) -> InitialFetchState:
    """Mirrors FetcherThreadTestUtils#initialFetchState."""
    return InitialFetchState(topic_id, BrokerEndPoint(leader_id, "localhost", 9092), leader_epoch, fetch_offset)


@dataclass
class PartitionState:
    """Mirrors the PartitionState of MockLeaderEndPoint.scala: one replica's log and offsets."""

    log: list[RecordBatch] = field(default_factory=list)
    leader_epoch: int = 0
    log_start_offset: int = 0
    log_end_offset: int = 0
    high_watermark: int = 0

    @classmethod
    def of(cls, log: list[RecordBatch] | None = None, leader_epoch: int = 0, high_watermark: int = 0) -> "PartitionState":
        log = list(log or [])
        start = log[0].base_offset if log else 0
        end = log[-1].next_offset if log else 0
        return cls(log, leader_epoch, start, end, high_watermark)

    def offsets(self) -> list[tuple[int, int]]:
        """(base offset, epoch) of every batch: what tests compare."""
        return [(b.base_offset, b.partition_leader_epoch) for b in self.log]


def end_offset_for_epoch(state: PartitionState, requested: int) -> tuple[int, int]:
    """(epoch, end offset) as LeaderEpochFileCache#endOffsetFor computes it over ``state.log``.

    * requested is the latest epoch: (requested, log end offset);
    * requested above the latest epoch (or no epochs): undefined (-1, -1);
    * requested below the first epoch: (requested, start offset of the first epoch);
    * otherwise: (largest epoch <= requested, start offset of the next larger epoch).
    """
    entries: list[tuple[int, int]] = []
    for batch in state.log:
        if not entries or batch.partition_leader_epoch > entries[-1][0]:
            entries.append((batch.partition_leader_epoch, batch.base_offset))
    if requested == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries[-1][0] == requested:
        return requested, state.log_end_offset
    higher = next((e for e in entries if e[0] > requested), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    floor = [e for e in entries if e[0] <= requested]
    if not floor:
        return requested, higher[1]
    return floor[-1][0], higher[1]


def _check_expected_leader_epoch(expected: int | None, state: PartitionState) -> Errors | None:
    if expected is None or expected == -1:
        return None
    if expected < state.leader_epoch:
        return Errors.FENCED_LEADER_EPOCH
    if expected > state.leader_epoch:
        return Errors.UNKNOWN_LEADER_EPOCH
    return None


class MockLeaderEndPoint(LeaderEndPoint):
    """Mirrors MockLeaderEndPoint.scala: a leader that answers from in-memory partition states.

    ``truncate_on_fetch`` selects the IBP >= 2.7 behaviour; ``epoch_in_epoch_response`` False
    strips the epoch from OffsetsForLeaderEpoch answers, as the v0 answers of IBP < 2.0 do.
    It fetches one batch at a time, like Kafka's mock.
    """

    def __init__(self, truncate_on_fetch: bool = True, epoch_in_epoch_response: bool = True,
                 source_broker: BrokerEndPoint | None = None) -> None:
        self.truncate_on_fetch = truncate_on_fetch
        self.epoch_in_epoch_response = epoch_in_epoch_response
        self.source_broker = source_broker or BrokerEndPoint(1, "localhost", 9092)
        self.leader_partition_states: dict[TopicPartition, PartitionState] = {}
        self.response_callback: Callable[[], None] = lambda: None
        self.replica_partition_state_callback: Callable[[TopicPartition], PartitionState] | None = None
        self.fetch_count = 0
        self.epoch_requests = 0

    @property
    def is_truncation_on_fetch_supported(self) -> bool:
        return self.truncate_on_fetch

    def broker_end_point(self) -> BrokerEndPoint:
        return self.source_broker

    def leader_partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.leader_partition_states[tp]

    def set_leader_state(self, tp: TopicPartition, state: PartitionState) -> None:
        self.leader_partition_states[tp] = state

    def set_response_callback(self, callback: Callable[[], None]) -> None:
        self.response_callback = callback

    def set_replica_partition_state_callback(self, callback: Callable[[TopicPartition], PartitionState]) -> None:
        self.replica_partition_state_callback = callback

    async def fetch(self, fetch_request: Mapping[TopicPartition, FetchRequestPartitionData]) -> dict[TopicPartition, PartitionData]:
        """Mirrors MockLeaderEndPoint#fetch."""
        self.fetch_count += 1
        result: dict[TopicPartition, PartitionData] = {}
        for tp, data in fetch_request.items():
            state = self.leader_partition_state(tp)
            epoch_error = _check_expected_leader_epoch(data.current_leader_epoch, state)
            diverging = self._diverging_epoch_and_offset(data.last_fetched_epoch, data.fetch_offset, state)
            records = MemoryRecords.EMPTY
            if epoch_error is not None:
                error = epoch_error
            elif data.fetch_offset > state.log_end_offset or data.fetch_offset < state.log_start_offset:
                error = Errors.OFFSET_OUT_OF_RANGE
            elif diverging is not None:
                error = Errors.NONE
            else:
                error = Errors.NONE
                batch = next((b for b in state.log if b.base_offset >= data.fetch_offset), None)
                if batch is not None:
                    records = MemoryRecords.of([batch])
            result[tp] = PartitionData(
                partition_index=tp.partition, error_code=error.code, high_watermark=state.high_watermark,
                last_stable_offset=state.high_watermark, log_start_offset=state.log_start_offset,
                diverging_epoch=diverging or DivergingEpoch(), records=records,
            )
        self.response_callback()
        return result

    def _diverging_epoch_and_offset(self, last_fetched_epoch: int | None, fetch_offset: int, state: PartitionState) -> DivergingEpoch | None:
        if last_fetched_epoch is None or not state.log:
            return None
        epoch, end_offset = end_offset_for_epoch(state, last_fetched_epoch)
        if epoch == UNDEFINED_EPOCH or end_offset == UNDEFINED_EPOCH_OFFSET:
            return None
        if epoch < last_fetched_epoch or end_offset < fetch_offset:
            return DivergingEpoch(epoch=epoch, end_offset=end_offset)
        return None

    async def fetch_earliest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        state = self.leader_partition_state(tp)
        error = _check_expected_leader_epoch(current_leader_epoch, state)
        if error is not None:
            raise error.exception()
        return OffsetAndEpoch(state.log_start_offset, state.leader_epoch)

    async def fetch_latest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> OffsetAndEpoch:
        state = self.leader_partition_state(tp)
        error = _check_expected_leader_epoch(current_leader_epoch, state)
        if error is not None:
            raise error.exception()
        return OffsetAndEpoch(state.log_end_offset, state.leader_epoch)

    def lookup_end_offset_for_epoch(self, tp: TopicPartition, epoch_data: OffsetForLeaderPartition, state: PartitionState) -> EpochEndOffset:
        """Mirrors MockLeaderEndPoint#lookupEndOffsetForEpoch (with the real cache's rules)."""
        error = _check_expected_leader_epoch(epoch_data.current_leader_epoch, state)
        if error is not None:
            return EpochEndOffset(error_code=error.code, partition=tp.partition)
        epoch, end_offset = end_offset_for_epoch(state, epoch_data.leader_epoch)
        return EpochEndOffset(error_code=Errors.NONE.code, partition=tp.partition, leader_epoch=epoch, end_offset=end_offset)

    async def fetch_epoch_end_offsets(self, partitions: Mapping[TopicPartition, OffsetForLeaderPartition]) -> dict[TopicPartition, EpochEndOffset]:
        self.epoch_requests += 1
        result = {}
        for tp, epoch_data in partitions.items():
            answer = self.lookup_end_offset_for_epoch(tp, epoch_data, self.leader_partition_state(tp))
            if not self.epoch_in_epoch_response:
                answer = EpochEndOffset(error_code=answer.error_code, partition=answer.partition,
                                        leader_epoch=UNDEFINED_EPOCH, end_offset=answer.end_offset)
            result[tp] = answer
        return result

    def build_fetch(self, partition_map: Mapping[TopicPartition, PartitionFetchState]) -> ResultWithPartitions:
        """Mirrors MockLeaderEndPoint#buildFetch: every ready partition, no session."""
        fetch_data: dict[TopicPartition, FetchRequestPartitionData] = {}
        for tp, state in partition_map.items():
            if state.is_ready_for_fetch:
                replica = self.replica_partition_state_callback(tp)
                fetch_data[tp] = FetchRequestPartitionData(
                    topic_id=state.topic_id or Uuid(0, 0), fetch_offset=state.fetch_offset,
                    log_start_offset=replica.log_start_offset, max_bytes=1024 * 1024,
                    current_leader_epoch=state.current_leader_epoch,
                    last_fetched_epoch=state.last_fetched_epoch if self.truncate_on_fetch else None,
                )
        if not fetch_data:
            return ResultWithPartitions(None)
        return ResultWithPartitions(ReplicaFetch(fetch_data, fetch_data))


class MockFetcherThread(AbstractFetcherThread):
    """Mirrors MockFetcherThread.scala: a follower whose logs are in-memory PartitionStates."""

    def __init__(self, mock_leader: MockLeaderEndPoint, fetch_back_off_ms: int = 0,
                 failed_partitions: FailedPartitions | None = None, time: MockTime | None = None,
                 offset_for_leader_epoch_supported: bool = True) -> None:
        super().__init__("mock-fetcher", "mock-fetcher", mock_leader, failed_partitions if failed_partitions is not None else FailedPartitions(),
                         fetch_back_off_ms, time if time is not None else MockTime())
        self.mock_leader = mock_leader
        self.replica_partition_states: dict[TopicPartition, PartitionState] = {}
        self.latest_epoch_default: int | None = 0
        self._offset_for_leader_epoch_supported = offset_for_leader_epoch_supported
        self.truncations: list[tuple[TopicPartition, OffsetTruncationState]] = []
        self.process_partition_data_calls = 0
        mock_leader.set_replica_partition_state_callback(self.replica_partition_state)

    @property
    def is_offset_for_leader_epoch_supported(self) -> bool:  # type: ignore[override]
        return self._offset_for_leader_epoch_supported

    def set_replica_state(self, tp: TopicPartition, state: PartitionState) -> None:
        self.replica_partition_states[tp] = state

    def replica_partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.replica_partition_states[tp]

    def add_partitions(self, initial_fetch_states, force_truncation: bool = False):  # type: ignore[override]
        """Mirrors MockFetcherThread#addPartitions: ``force_truncation`` hides the log's epoch."""
        self.latest_epoch_default = None if force_truncation else 0
        try:
            return super().add_partitions(initial_fetch_states)
        finally:
            self.latest_epoch_default = 0

    def process_partition_data(self, tp: TopicPartition, fetch_offset: int, partition_data: PartitionData) -> LogAppendInfo:
        """Mirrors MockFetcherThread#processPartitionData (follower HW = min(leader HW, LEO))."""
        self.process_partition_data_calls += 1
        state = self.replica_partition_state(tp)
        if self.leader.is_truncation_on_fetch_supported and FetchResponse.is_diverging_epoch(partition_data):
            raise AssertionError("process_partition_data called for a partition with a diverging epoch")
        if fetch_offset != state.log_end_offset:
            raise RuntimeError(f"Offset mismatch for partition {tp}: fetched offset = {fetch_offset}, "
                               f"log end offset = {state.log_end_offset}.")
        batches = list(FetchResponse.records_or_fail(partition_data))
        last_offset, last_epoch = state.log_end_offset, None
        for batch in batches:
            batch.ensure_valid()
            state.log.append(batch)
            state.log_end_offset = batch.next_offset
            last_offset, last_epoch = batch.last_offset, batch.partition_leader_epoch
        state.log_start_offset = partition_data.log_start_offset
        state.high_watermark = min(partition_data.high_watermark, state.log_end_offset)
        size = FetchResponse.records_size(partition_data)
        return LogAppendInfo(first_offset=fetch_offset, last_offset=last_offset, last_leader_epoch=last_epoch,
                             max_timestamp=-1, shallow_offset_of_max_timestamp=-1, log_append_time=-1,
                             log_start_offset=state.log_start_offset, source_compression="none", valid_bytes=size,
                             last_offset_of_first_batch=batches[0].last_offset if batches else -1)

    def truncate(self, tp: TopicPartition, truncation_state: OffsetTruncationState) -> None:
        self.truncations.append((tp, truncation_state))
        state = self.replica_partition_state(tp)
        state.log = [b for b in state.log if b.last_offset < truncation_state.offset]
        state.log_end_offset = state.log[-1].last_offset + 1 if state.log else state.log_start_offset
        state.high_watermark = min(state.high_watermark, state.log_end_offset)

    def truncate_fully_and_start_at(self, tp: TopicPartition, offset: int) -> None:
        state = self.replica_partition_state(tp)
        state.log.clear()
        state.log_start_offset = offset
        state.log_end_offset = offset
        state.high_watermark = offset

    def latest_epoch(self, tp: TopicPartition) -> int | None:
        state = self.replica_partition_state(tp)
        if state.log:
            return state.log[-1].partition_leader_epoch
        return self.latest_epoch_default

    def log_start_offset(self, tp: TopicPartition) -> int:
        return self.replica_partition_state(tp).log_start_offset

    def log_end_offset(self, tp: TopicPartition) -> int:
        return self.replica_partition_state(tp).log_end_offset

    def end_offset_for_epoch(self, tp: TopicPartition, epoch: int) -> OffsetAndEpoch | None:
        leader_epoch, end_offset = end_offset_for_epoch(self.replica_partition_state(tp), epoch)
        if end_offset == UNDEFINED_EPOCH_OFFSET:
            return None
        return OffsetAndEpoch(end_offset, leader_epoch)


# =============================================================================================
# Tests
# =============================================================================================

TOPIC_IDS = {"topic1": Uuid(1, 1), "topic2": Uuid(2, 2), "topic": Uuid(3, 3)}
PARTITION = TopicPartition("topic", 0)
PARTITION1 = TopicPartition("topic1", 0)
PARTITION2 = TopicPartition("topic2", 0)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


def new_fetcher(truncate_on_fetch: bool = True, epoch_in_epoch_response: bool = True, **kwargs) -> MockFetcherThread:
    leader = MockLeaderEndPoint(truncate_on_fetch=truncate_on_fetch, epoch_in_epoch_response=epoch_in_epoch_response)
    return MockFetcherThread(leader, **kwargs)


def add(fetcher: MockFetcherThread, tp: TopicPartition, fetch_offset: int, leader_epoch: int, force_truncation: bool = False) -> None:
    fetcher.add_partitions({tp: initial_fetch_state(TOPIC_IDS[tp.topic], fetch_offset, leader_epoch)}, force_truncation)


def batches(*spec: tuple[int, int]) -> list[RecordBatch]:
    """Batches of one record each: (base offset, epoch)."""
    return [mk_batch(base, epoch, f"r{base}".encode()) for base, epoch in spec]


async def work_until_logs_match(fetcher: MockFetcherThread, tp: TopicPartition, max_rounds: int = 20) -> int:
    """Call do_work until follower and leader logs are equal; return the number of rounds."""
    for rounds in range(1, max_rounds + 1):
        await fetcher.do_work()
        if fetcher.replica_partition_state(tp).log == fetcher.mock_leader.leader_partition_state(tp).log:
            return rounds
    raise AssertionError(f"logs did not converge: {fetcher.replica_partition_state(tp).offsets()} vs "
                         f"{fetcher.mock_leader.leader_partition_state(tp).offsets()}")


@pytest.mark.anyio
async def test_simple_fetch():
    """Mirrors AbstractFetcherThreadTest#testSimpleFetch."""
    fetcher = new_fetcher()
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    batch = mk_batch(0, 0, b"a", b"b")
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of([batch], leader_epoch=0, high_watermark=2))

    await fetcher.do_work()

    replica = fetcher.replica_partition_state(PARTITION)
    assert (replica.log_end_offset, replica.high_watermark) == (2, 2)
    state = fetcher.fetch_state(PARTITION)
    assert (state.fetch_offset, state.lag, state.state, state.last_fetched_epoch) == (2, 0, FETCHING, 0)
    assert fetcher.fetcher_stats.request_rate.count == 1
    assert fetcher.fetcher_stats.byte_rate.count == batch.size_in_bytes


@pytest.mark.anyio
async def test_consumer_lag_tracked_and_removed_with_partition():
    """Mirrors AbstractFetcherThreadTest#testConsumerLagRemovedWithPartition (with exact lags)."""
    fetcher = new_fetcher()
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0), (1, 0), (2, 0)), 0, high_watermark=3))

    await fetcher.do_work()
    assert fetcher.fetcher_lag_stats.stats[PARTITION].lag == 2  # HW 3 - next offset 1
    await fetcher.do_work()
    assert fetcher.fetcher_lag_stats.stats[PARTITION].lag == 1
    await fetcher.do_work()
    assert fetcher.fetcher_lag_stats.stats[PARTITION].lag == 0
    assert fetcher.fetch_state(PARTITION).is_replica_in_sync

    removed = fetcher.remove_partitions({PARTITION})
    assert removed[PARTITION].fetch_offset == 3
    assert PARTITION not in fetcher.fetcher_lag_stats.stats


@pytest.mark.anyio
async def test_delay_after_fetch_failure():
    """Mirrors AbstractFetcherThreadTest#testDelay: a failed fetch backs every partition off."""
    time = MockTime()
    fetcher = new_fetcher(fetch_back_off_ms=250, time=time)

    async def failing_fetch(request):
        raise UnknownTopicIdException("Topic ID was unknown as expected for this test")

    fetcher.mock_leader.fetch = failing_fetch
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of([mk_batch(0, 0, b"a")], 0, 1))

    await fetcher.do_work()

    state = fetcher.fetch_state(PARTITION)
    assert state.is_delayed and not state.is_ready_for_fetch
    assert state.delay.due_ms == time.milliseconds() + 250
    time.advance(249)
    assert fetcher.fetch_state(PARTITION).is_delayed
    time.advance(1)
    assert fetcher.fetch_state(PARTITION).is_ready_for_fetch


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})])
async def test_back_off_wait_uses_loop_time():
    """With no partition ready, do_work waits replica.fetch.backoff.ms of loop time (virtual here)."""
    fetcher = MockFetcherThread(MockLeaderEndPoint(), fetch_back_off_ms=250, time=Time())
    before = anyio.current_time()
    await fetcher.do_work()
    assert anyio.current_time() - before == pytest.approx(0.25)


@pytest.mark.anyio
async def test_partitions_in_error():
    """Mirrors AbstractFetcherThreadTest#testPartitionsInError: only failed partitions back off."""
    partition3 = TopicPartition("topic3", 0)
    fetcher = new_fetcher(fetch_back_off_ms=250)

    async def fetch(request):
        return {
            PARTITION1: PartitionData(error_code=Errors.UNKNOWN_TOPIC_ID.code),
            PARTITION2: PartitionData(error_code=Errors.INCONSISTENT_TOPIC_ID.code),
            partition3: PartitionData(error_code=Errors.NONE.code),
        }

    fetcher.mock_leader.fetch = fetch
    for tp in (PARTITION1, PARTITION2, partition3):
        fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=0))
        fetcher.add_partitions({tp: initial_fetch_state(Uuid(9, tp.topic.__len__()), 0, 0)})

    await fetcher.do_work()

    assert fetcher.fetch_state(PARTITION1).is_delayed
    assert fetcher.fetch_state(PARTITION2).is_delayed
    assert not fetcher.fetch_state(partition3).is_delayed


# -- the error table of processFetchRequest ----------------------------------------------------

ERROR_TABLE = [
    # (error, request carries the epoch, expected outcome)
    (Errors.UNKNOWN_LEADER_EPOCH, True, "delayed"),
    (Errors.FENCED_LEADER_EPOCH, True, "failed"),
    (Errors.FENCED_LEADER_EPOCH, False, "delayed"),
    (Errors.NOT_LEADER_OR_FOLLOWER, True, "delayed"),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, True, "delayed"),
    (Errors.UNKNOWN_TOPIC_ID, True, "delayed"),
    (Errors.INCONSISTENT_TOPIC_ID, True, "delayed"),
    (Errors.CORRUPT_MESSAGE, True, "delayed"),
    (Errors.KAFKA_STORAGE_ERROR, True, "delayed"),
    (Errors.UNKNOWN_SERVER_ERROR, True, "delayed"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("error,with_epoch,outcome", ERROR_TABLE, ids=[f"{e.name}-{w}" for e, w, _ in ERROR_TABLE])
async def test_fetch_error_table(error, with_epoch, outcome):
    """Every partition-level error branch of processFetchRequest, with the other partition unharmed."""
    time = MockTime()
    failed = FailedPartitions()
    fetcher = new_fetcher(fetch_back_off_ms=100, time=time, failed_partitions=failed)
    real_fetch, real_build = fetcher.mock_leader.fetch, fetcher.mock_leader.build_fetch

    def build_fetch(partition_map):
        # Before IBP 2.1 (KIP-320) a fetch carries no current leader epoch.
        result = real_build(partition_map)
        if with_epoch or result.result is None:
            return result
        data = {tp: replace(d, current_leader_epoch=None) for tp, d in result.result.partition_data.items()}
        return ResultWithPartitions(ReplicaFetch(data, data))

    async def fetch(request):
        answers = await real_fetch(request)
        answers[PARTITION1] = PartitionData(error_code=error.code, high_watermark=-1)
        return answers

    fetcher.mock_leader.fetch = fetch
    fetcher.mock_leader.build_fetch = build_fetch
    for tp in (PARTITION1, PARTITION2):
        fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=0))
        add(fetcher, tp, 0, 0)
        fetcher.mock_leader.set_leader_state(tp, PartitionState.of([mk_batch(0, 0, b"a", b"b")], 0, 2))

    await fetcher.do_work()

    # The healthy partition always progresses.
    assert fetcher.replica_partition_state(PARTITION2).log_end_offset == 2
    assert fetcher.fetch_state(PARTITION2).fetch_offset == 2
    # The failing one made no progress and either backs off or is given up.
    assert fetcher.replica_partition_state(PARTITION1).log_end_offset == 0
    if outcome == "failed":
        assert fetcher.fetch_state(PARTITION1) is None
        assert PARTITION1 in failed
    else:
        state = fetcher.fetch_state(PARTITION1)
        assert (state.fetch_offset, state.is_delayed, state.delay.due_ms) == (0, True, time.milliseconds() + 100)
        assert PARTITION1 not in failed


@pytest.mark.anyio
async def test_corrupt_message_isolated_to_its_partition():
    """Mirrors AbstractFetcherThreadTest#testCorruptMessage, with a second, healthy partition."""
    time = MockTime()
    fetcher = new_fetcher(fetch_back_off_ms=100, time=time)
    real_fetch = fetcher.mock_leader.fetch
    corrupted_once = []

    async def fetch(request):
        answers = await real_fetch(request)
        if not corrupted_once and PARTITION1 in answers:
            good = answers[PARTITION1].records.batches[0]
            buf = bytearray(good.buffer)
            buf[30:34] = bytes(b ^ 0x5A for b in buf[30:34])  # inside the CRC-covered header
            answers[PARTITION1] = replace(answers[PARTITION1], records=MemoryRecords.of([RecordBatch(bytes(buf))]))
            corrupted_once.append(True)
        return answers

    fetcher.mock_leader.fetch = fetch
    for tp in (PARTITION1, PARTITION2):
        fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=0))
        add(fetcher, tp, 0, 0)
        fetcher.mock_leader.set_leader_state(tp, PartitionState.of([mk_batch(0, 0, b"a", b"b")], 0, 2))

    await fetcher.do_work()  # partition1 fails with a corrupt record, partition2 appends
    assert fetcher.replica_partition_state(PARTITION1).log_end_offset == 0
    assert fetcher.replica_partition_state(PARTITION2).log_end_offset == 2
    assert fetcher.fetch_state(PARTITION1).is_delayed

    time.advance(100)
    await fetcher.do_work()  # retried after the back-off: succeeds
    assert fetcher.replica_partition_state(PARTITION1).log_end_offset == 2
    assert fetcher.fetch_state(PARTITION1).fetch_offset == 2


@pytest.mark.anyio
@pytest.mark.parametrize("failure", ["storage", "unexpected"])
async def test_fetcher_thread_handling_partition_failure_during_appending(failure):
    """Mirrors AbstractFetcherThreadTest#testFetcherThreadHandlingPartitionFailureDuringAppending."""
    failed = FailedPartitions()
    fetcher = new_fetcher(failed_partitions=failed)
    real = fetcher.process_partition_data

    def process(tp, fetch_offset, partition_data):
        if tp == PARTITION1:
            raise KafkaStorageException("disk gone") if failure == "storage" else KafkaException("boom")
        return real(tp, fetch_offset, partition_data)

    fetcher.process_partition_data = process
    await _verify_fetcher_thread_handling_partition_failure(fetcher, failed)


@pytest.mark.anyio
async def test_fetcher_thread_handling_partition_failure_during_truncation():
    """Mirrors AbstractFetcherThreadTest#testFetcherThreadHandlingPartitionFailureDuringTruncation."""
    failed = FailedPartitions()
    fetcher = new_fetcher(failed_partitions=failed)
    real = fetcher.truncate

    def truncate(tp, truncation_state):
        if tp == PARTITION1:
            raise RuntimeError("truncation failed")
        real(tp, truncation_state)

    fetcher.truncate = truncate
    await _verify_fetcher_thread_handling_partition_failure(fetcher, failed)


async def _verify_fetcher_thread_handling_partition_failure(fetcher: MockFetcherThread, failed: FailedPartitions) -> None:
    for tp in (PARTITION1, PARTITION2):
        fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=0))
        add(fetcher, tp, 0, 0, force_truncation=True)
        fetcher.mock_leader.set_leader_state(tp, PartitionState.of([mk_batch(0, 0, b"a")], 0, 1))

    await fetcher.do_work()
    assert PARTITION1 in failed
    assert fetcher.fetch_state(PARTITION1) is None

    await fetcher.do_work()
    assert fetcher.fetch_state(PARTITION2).state is FETCHING
    assert PARTITION2 not in failed
    assert fetcher.replica_partition_state(PARTITION2).log_end_offset == 1

    # A leader change re-adds the partition: it is no longer failed.
    fetcher.remove_partitions({PARTITION1})
    failed.remove_all({PARTITION1})
    add(fetcher, PARTITION1, 0, 1, force_truncation=True)
    assert fetcher.fetch_state(PARTITION1).state is TRUNCATING
    assert PARTITION1 not in failed


# -- fencing and unknown epochs ----------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("truncate_on_fetch", [True, False])
async def test_fenced_truncation(truncate_on_fetch):
    """Mirrors AbstractFetcherThreadTest#testFencedTruncation (both truncation eras)."""
    failed = FailedPartitions()
    fetcher = new_fetcher(truncate_on_fetch, failed_partitions=failed)
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of([mk_batch(0, 1, b"a", b"b")], 1, 2))

    await fetcher.do_work()

    replica = fetcher.replica_partition_state(PARTITION)
    assert (replica.log_end_offset, replica.high_watermark) == (0, 0)
    assert fetcher.fetch_state(PARTITION) is None
    assert PARTITION in failed
    # Before 2.7 it was the OffsetsForLeaderEpoch answer that fenced us; after, the fetch.
    assert fetcher.mock_leader.epoch_requests == (0 if truncate_on_fetch else 1)
    assert fetcher.mock_leader.fetch_count == (1 if truncate_on_fetch else 0)


@pytest.mark.anyio
async def test_fenced_fetch():
    """Mirrors AbstractFetcherThreadTest#testFencedFetch."""
    failed = FailedPartitions()
    fetcher = new_fetcher(failed_partitions=failed)
    replica = PartitionState.of(leader_epoch=0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of([mk_batch(0, 0, b"a", b"b")], 0, 2))

    await fetcher.do_work()
    assert replica.log_end_offset == 2

    fetcher.mock_leader.leader_partition_state(PARTITION).leader_epoch += 1
    await fetcher.do_work()
    assert fetcher.fetch_state(PARTITION) is None
    assert PARTITION in failed


@pytest.mark.anyio
async def test_unknown_leader_epoch_in_truncation():
    """Mirrors AbstractFetcherThreadTest#testUnknownLeaderEpochInTruncation."""
    fetcher = new_fetcher()
    replica = PartitionState.of(leader_epoch=1)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 1, force_truncation=True)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of([mk_batch(0, 0, b"a")], 0, 2))

    await fetcher.do_work()
    assert replica.log_end_offset == 0
    assert fetcher.fetch_state(PARTITION).state is TRUNCATING

    fetcher.mock_leader.leader_partition_state(PARTITION).leader_epoch += 1
    await fetcher.do_work()
    assert replica.log_end_offset == 1
    assert fetcher.fetch_state(PARTITION).state is FETCHING


@pytest.mark.anyio
async def test_unknown_leader_epoch_while_fetching():
    """Mirrors AbstractFetcherThreadTest#testUnknownLeaderEpochWhileFetching."""
    fetcher = new_fetcher()
    replica = PartitionState.of(leader_epoch=1)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 1)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0), (1, 0)), 1, 2))

    await fetcher.do_work()
    assert (replica.log_end_offset, fetcher.fetch_state(PARTITION).state) == (1, FETCHING)

    fetcher.mock_leader.leader_partition_state(PARTITION).leader_epoch = 0
    await fetcher.do_work()
    assert (replica.log_end_offset, fetcher.fetch_state(PARTITION).state) == (1, FETCHING)
    assert fetcher.fetch_state(PARTITION).is_delayed is False  # back-off 0 ms

    fetcher.mock_leader.leader_partition_state(PARTITION).leader_epoch = 1
    await fetcher.do_work()
    assert (replica.log_end_offset, fetcher.fetch_state(PARTITION).state) == (2, FETCHING)


# -- truncation, era by era ---------------------------------------------------------------------

REPLICA_LOG = [(0, 0), (1, 2), (2, 4)]
LEADER_LOG = [(0, 1), (1, 3), (2, 5)]


def truncation_setup(truncate_on_fetch: bool, epoch_in_epoch_response: bool = True, init_offset: int = 3,
                     replica_hw: int = 0, **kwargs) -> MockFetcherThread:
    fetcher = new_fetcher(truncate_on_fetch, epoch_in_epoch_response, **kwargs)
    fetcher.set_replica_state(PARTITION, PartitionState.of(batches(*REPLICA_LOG), 5, replica_hw))
    add(fetcher, PARTITION, init_offset, 5)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches(*LEADER_LOG), 5, 2))
    return fetcher


@pytest.mark.anyio
async def test_truncation_kip279_multiple_rounds_converge():
    """Mirrors AbstractFetcherThreadTest#testTruncation at IBP 2.0-2.6 (KIP-279), round by round."""
    fetcher = truncation_setup(truncate_on_fetch=False)
    replica = fetcher.replica_partition_state(PARTITION)
    assert fetcher.fetch_state(PARTITION).state is TRUNCATING

    # Round 1: our latest epoch 4; the leader answers (3, 2); we never had epoch 3, so we cut
    # to the end of our epoch 2 (offset 2) and ask again.
    await fetcher.do_work()
    assert replica.offsets() == [(0, 0), (1, 2)]
    assert (fetcher.fetch_state(PARTITION).state, fetcher.fetch_state(PARTITION).fetch_offset) == (TRUNCATING, 2)
    # Round 2: epoch 2 -> leader (1, 1); our end of epoch 0 is 1.
    await fetcher.do_work()
    assert replica.offsets() == [(0, 0)]
    assert fetcher.fetch_state(PARTITION).fetch_offset == 1
    # Round 3: epoch 0 -> leader (0, 0); both know epoch 0: cut to 0, done; then fetch offset 0.
    await fetcher.do_work()
    assert [(t.offset, t.truncation_completed) for _, t in fetcher.truncations] == [(2, False), (1, False), (0, True)]
    assert replica.offsets() == [(0, 1)]
    assert fetcher.mock_leader.epoch_requests == 3
    # Two more fetches converge on the leader's log.
    assert await work_until_logs_match(fetcher, PARTITION) == 2
    assert (replica.log_start_offset, replica.log_end_offset, replica.high_watermark) == (0, 3, 2)


@pytest.mark.anyio
async def test_truncation_kip101_single_round_keeps_divergent_suffix():
    """IBP 0.11-1.1 (KIP-101): one round with only the leader's end offset.

    The leader's answer for our epoch 4 ends at 2, so we cut to 2 and fetch on: offsets 0-1
    keep epochs 0 and 2 while the leader has 1 and 3 -- the divergence KIP-279 fixed.
    """
    fetcher = truncation_setup(truncate_on_fetch=False, epoch_in_epoch_response=False)
    replica = fetcher.replica_partition_state(PARTITION)

    await fetcher.do_work()
    assert [(t.offset, t.truncation_completed) for _, t in fetcher.truncations] == [(2, True)]
    assert fetcher.mock_leader.epoch_requests == 1
    assert replica.offsets() == [(0, 0), (1, 2), (2, 5)]  # truncated to 2, then fetched [2]
    await fetcher.do_work()
    assert replica.offsets() == [(0, 0), (1, 2), (2, 5)]
    assert fetcher.mock_leader.epoch_requests == 1
    assert (replica.log_end_offset, replica.high_watermark) == (3, 2)


@pytest.mark.anyio
async def test_truncate_to_high_watermark_if_leader_epoch_request_not_supported():
    """Mirrors AbstractFetcherThreadTest#testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported (IBP < 0.11)."""
    fetcher = truncation_setup(truncate_on_fetch=False, init_offset=2, replica_hw=2,
                               offset_for_leader_epoch_supported=False)

    async def no_epochs(partitions):
        raise AssertionError("no OffsetsForLeaderEpoch before 0.11")

    fetcher.mock_leader.fetch_epoch_end_offsets = no_epochs
    replica = fetcher.replica_partition_state(PARTITION)

    await fetcher.do_work()
    assert [(t.offset, t.truncation_completed) for _, t in fetcher.truncations] == [(2, True)]
    assert fetcher.fetch_state(PARTITION).is_ready_for_fetch
    # The fetch after truncation appends the leader's offset 2 after our old 0-1.
    assert replica.offsets() == [(0, 0), (1, 2), (2, 5)]
    assert fetcher.fetch_state(PARTITION).fetch_offset == 3


@pytest.mark.anyio
async def test_truncate_to_high_watermark_if_leader_epoch_info_not_available():
    """Mirrors AbstractFetcherThreadTest#testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable."""
    fetcher = truncation_setup(truncate_on_fetch=True, init_offset=2, replica_hw=2)
    fetcher.latest_epoch = lambda tp: None
    fetcher.remove_partitions({PARTITION})
    add(fetcher, PARTITION, 2, 5)
    assert fetcher.fetch_state(PARTITION).state is TRUNCATING  # no epoch: cannot truncate on fetch

    await fetcher.do_work()
    assert [(t.offset, t.truncation_completed) for _, t in fetcher.truncations] == [(2, True)]
    assert fetcher.mock_leader.epoch_requests == 0
    assert fetcher.fetch_state(PARTITION).fetch_offset == 3  # truncated to 2, fetched offset 2


@pytest.mark.anyio
async def test_truncate_to_high_watermark_during_remove_partitions():
    """Mirrors AbstractFetcherThreadTest#testTruncateToHighWatermarkDuringRemovePartitions."""
    fetcher = truncation_setup(truncate_on_fetch=True, init_offset=2, replica_hw=2)
    fetcher.latest_epoch = lambda tp: None
    fetcher.remove_partitions({PARTITION})
    add(fetcher, PARTITION, 2, 5)
    real = fetcher.truncate_to_high_watermark

    def remove_then_truncate(partitions):
        fetcher.remove_partitions({PARTITION})
        real(partitions)

    fetcher.truncate_to_high_watermark = remove_then_truncate
    await fetcher.do_work()
    assert fetcher.replica_partition_state(PARTITION).log_end_offset == 3
    assert fetcher.fetch_state(PARTITION) is None


@pytest.mark.anyio
async def test_truncation_on_fetch_diverging_epochs():
    """Mirrors AbstractFetcherThreadTest#testTruncation at IBP >= 2.7: diverging epochs drive it."""
    fetcher = truncation_setup(truncate_on_fetch=True)
    replica = fetcher.replica_partition_state(PARTITION)
    state = fetcher.fetch_state(PARTITION)
    assert (state.state, state.fetch_offset, state.last_fetched_epoch) == (FETCHING, 3, 4)

    await fetcher.do_work()  # diverging (3, 2): cut to our end of epoch 2
    assert replica.offsets() == [(0, 0), (1, 2)]
    assert (fetcher.fetch_state(PARTITION).fetch_offset, fetcher.fetch_state(PARTITION).last_fetched_epoch) == (2, 2)
    await fetcher.do_work()  # diverging (1, 1): cut to our end of epoch 0
    assert replica.offsets() == [(0, 0)]
    await fetcher.do_work()  # diverging (0, 0): cut everything
    assert replica.offsets() == []
    assert [(t.offset, t.truncation_completed) for _, t in fetcher.truncations] == [(2, False), (1, False), (0, True)]
    assert fetcher.mock_leader.epoch_requests == 0
    assert fetcher.process_partition_data_calls == 0
    assert await work_until_logs_match(fetcher, PARTITION) == 3
    assert (replica.log_end_offset, replica.high_watermark) == (3, 2)
    assert fetcher.fetch_state(PARTITION).last_fetched_epoch == 5


@pytest.mark.anyio
async def test_diverging_epochs():
    """Mirrors AbstractFetcherThreadTest#testDivergingEpochs."""
    fetcher = new_fetcher()
    replica = PartitionState.of(batches((0, 0), (1, 2), (2, 4)), 5, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 5)
    assert replica.log_end_offset == 3
    assert fetcher.fetch_state(PARTITION).last_fetched_epoch == 4
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0), (1, 2), (2, 5)), 5, 2))

    await fetcher.do_work()  # diverging (2, 2): our epoch 2 also ends at 2
    assert replica.offsets() == [(0, 0), (1, 2)]
    assert fetcher.fetch_state(PARTITION).last_fetched_epoch == 2
    assert await work_until_logs_match(fetcher, PARTITION) == 1
    assert fetcher.fetch_state(PARTITION).last_fetched_epoch == 5


@pytest.mark.anyio
async def test_truncate_on_fetch_does_not_process_partition_data():
    """Mirrors AbstractFetcherThreadTest#testTruncateOnFetchDoesNotProcessPartitionData."""
    fetcher = new_fetcher()
    replica = PartitionState.of(batches((0, 0), (1, 0), (2, 2), (3, 4), (4, 4), (5, 4)), 5, 1)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 5)
    assert replica.log_end_offset == 6
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0), (1, 0), (2, 2), (3, 5), (4, 5)), 5, 4))

    await fetcher.do_work()
    assert len(fetcher.truncations) == 1
    assert fetcher.process_partition_data_calls == 0
    assert (replica.log_end_offset, replica.high_watermark) == (3, 1)

    assert await work_until_logs_match(fetcher, PARTITION) == 2
    assert len(fetcher.truncations) == 1
    assert fetcher.process_partition_data_calls == 2
    assert (replica.log_end_offset, replica.high_watermark) == (5, 4)
    assert fetcher.fetch_state(PARTITION).last_fetched_epoch == 5


@pytest.mark.anyio
async def test_truncation_skipped_if_no_epoch_change():
    """Mirrors AbstractFetcherThreadTest#testTruncationSkippedIfNoEpochChange: re-adding keeps state."""
    fetcher = new_fetcher()
    replica = PartitionState.of(leader_epoch=5)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 5, force_truncation=True)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 1), (1, 3), (2, 5)), 5, 2))

    await fetcher.do_work()
    assert replica.log_end_offset == 1
    assert len(fetcher.truncations) == 1
    before = fetcher.fetch_state(PARTITION)

    # Same epoch, different (stale) offset: the existing state is kept as is.
    add(fetcher, PARTITION, 3, 5)
    assert fetcher.fetch_state(PARTITION) is before
    await fetcher.do_work()
    assert len(fetcher.truncations) == 1
    assert replica.log_end_offset == 2

    # A new epoch replaces the state (and, with an epoch in the log, fetches at once).
    add(fetcher, PARTITION, 2, 6)
    assert (fetcher.fetch_state(PARTITION).current_leader_epoch, fetcher.fetch_state(PARTITION).fetch_offset) == (6, 2)


@pytest.mark.anyio
async def test_truncation_on_fetch_skipped_if_partition_removed():
    """Mirrors AbstractFetcherThreadTest#testTruncationOnFetchSkippedIfPartitionRemoved."""
    fetcher = new_fetcher()
    fetcher.set_replica_state(PARTITION, PartitionState.of(batches((0, 0), (1, 2), (2, 4)), 5, 2))
    fetcher.add_partitions({PARTITION: initial_fetch_state(Uuid(7, 7), 6, 4)})

    fetcher.truncate_on_fetch_response({PARTITION: EpochEndOffset(partition=0, leader_epoch=4, end_offset=3)})
    assert len(fetcher.truncations) == 1

    offsets = fetcher.remove_partitions({PARTITION})
    assert set(offsets) == {PARTITION}
    assert offsets[PARTITION].fetch_offset == 3
    fetcher.truncate_on_fetch_response({PARTITION: EpochEndOffset(partition=0, leader_epoch=4, end_offset=2)})
    assert len(fetcher.truncations) == 1


# -- out of range -------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_follower_fetch_out_of_range_high():
    """Mirrors AbstractFetcherThreadTest#testFollowerFetchOutOfRangeHigh: the leader is behind us."""
    fetcher = new_fetcher()
    replica = PartitionState.of(batches((0, 0), (1, 2), (2, 4)), 4, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 4)
    leader = PartitionState.of(batches((0, 0), (1, 2), (2, 4)), 4, 2)
    fetcher.mock_leader.set_leader_state(PARTITION, leader)

    await fetcher.do_work()
    assert (replica.log_end_offset, fetcher.fetch_state(PARTITION).state) == (3, FETCHING)

    # The leader's log goes away without us going through truncation.
    leader.log.clear()
    leader.log_end_offset = leader.log_start_offset = leader.high_watermark = 0

    await fetcher.do_work()
    assert (replica.log_end_offset, replica.log_start_offset, replica.high_watermark) == (0, 0, 0)
    state = fetcher.fetch_state(PARTITION)
    assert (state.fetch_offset, state.lag, state.state) == (0, 0, FETCHING)
    assert fetcher.truncations[-1][1] == OffsetTruncationState(0, True)


@pytest.mark.anyio
async def test_follower_fetch_out_of_range_low():
    """Mirrors AbstractFetcherThreadTest#testFollowerFetchOutOfRangeLow: we are below the leader's start."""
    fetcher = new_fetcher()
    replica = PartitionState.of(batches((0, 0)), 0, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 0)
    leader = PartitionState.of(batches((2, 4)), 0, 2)
    fetcher.mock_leader.set_leader_state(PARTITION, leader)

    await fetcher.do_work()  # diverging (0, 2): our epoch 0 ends at 1: fetch from 1
    assert fetcher.fetch_state(PARTITION).fetch_offset == 1
    await fetcher.do_work()  # 1 < leader start 2: OFFSET_OUT_OF_RANGE: start over at 2
    state = fetcher.fetch_state(PARTITION)
    assert (state.state, state.fetch_offset, state.lag) == (FETCHING, 2, 1)
    assert (replica.log_start_offset, replica.log) == (2, [])

    assert await work_until_logs_match(fetcher, PARTITION) == 1
    assert (replica.log_start_offset, replica.log_end_offset, replica.high_watermark) == (2, 3, 2)


@pytest.mark.anyio
async def test_fenced_offset_reset_after_out_of_range():
    """Mirrors AbstractFetcherThreadTest#testFencedOffsetResetAfterOutOfRange."""
    failed = FailedPartitions()
    fetcher = new_fetcher(failed_partitions=failed)
    asked = []

    async def fenced(tp, epoch):
        asked.append(epoch)
        raise FencedLeaderEpochException(f"Epoch {epoch} is fenced")

    fetcher.mock_leader.fetch_earliest_offset = fenced
    replica = PartitionState.of([], 4, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 4)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((1, 2), (2, 4)), 4, 2))

    await fetcher.do_work()
    assert replica.log_end_offset == 0
    assert asked == [4]
    assert fetcher.fetch_state(PARTITION) is None
    assert PARTITION in failed


@pytest.mark.anyio
async def test_retry_after_unknown_leader_epoch_in_latest_offset_fetch():
    """Mirrors AbstractFetcherThreadTest#testRetryAfterUnknownLeaderEpochInLatestOffsetFetch."""
    fetcher = new_fetcher()
    real = fetcher.mock_leader.fetch_latest_offset
    tries = []

    async def flaky(tp, epoch):
        tries.append(epoch)
        if len(tries) == 1:
            raise UnknownLeaderEpochException("Unexpected leader epoch")
        return await real(tp, epoch)

    fetcher.mock_leader.fetch_latest_offset = flaky
    replica = PartitionState.of(batches((0, 0)), 0, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((2, 4)), 0, 2))

    await fetcher.do_work()  # diverging: to offset 1
    await fetcher.do_work()  # out of range; ListOffsets fails with UNKNOWN_LEADER_EPOCH: back off
    assert len(tries) == 1
    assert fetcher.fetch_state(PARTITION).fetch_offset == 1
    assert fetcher.fetch_state(PARTITION).state is FETCHING
    assert await work_until_logs_match(fetcher, PARTITION) == 2
    assert len(tries) == 2
    assert (replica.log_start_offset, replica.log_end_offset, replica.high_watermark) == (2, 3, 2)


@pytest.mark.anyio
async def test_negative_initial_offset_is_resolved_from_the_leader():
    """addPartitions with a negative initial offset: the next round asks the leader (fetchOffsetAndTruncate)."""
    fetcher = new_fetcher()
    replica = PartitionState.of([], 0, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, -1, 0)
    assert (fetcher.fetch_state(PARTITION).fetch_offset, fetcher.fetch_state(PARTITION).state) == (-1, TRUNCATING)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((5, 0), (6, 0)), 0, 7))

    await fetcher.do_work()  # leader LEO 7 >= ours 0; its start 5 > 0: start at 5, then fetch [5]
    assert (replica.log_start_offset, replica.offsets()) == (5, [(5, 0)])
    assert fetcher.fetch_state(PARTITION).fetch_offset == 6


# -- epoch changes while a request is in flight --------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("leader_epoch_on_leader", [1, 0], ids=["fenced", "successful"])
async def test_leader_epoch_change_during_fetch_epochs_from_leader(leader_epoch_on_leader):
    """Mirrors AbstractFetcherThreadTest#testLeaderEpochChangeDuringFencedFetchEpochsFromLeader and
    AbstractFetcherThreadTest#testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader (their shared
    body, AbstractFetcherThreadTest#testLeaderEpochChangeDuringFetchEpochsFromLeader, parametrized)."""
    tp = TopicPartition("topic", 1)
    fetcher = new_fetcher(truncate_on_fetch=False)
    real = fetcher.mock_leader.fetch_epoch_end_offsets
    once = []

    async def fetch_epochs(partitions):
        answer = await real(partitions)
        if not once:
            once.append(True)
            # Meanwhile a LeaderAndIsr moves the follower to epoch 1.
            fetcher.remove_partitions({tp})
            fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=1))
            fetcher.add_partitions({tp: initial_fetch_state(TOPIC_IDS["topic"], 0, 1)}, force_truncation=True)
        return answer

    fetcher.mock_leader.fetch_epoch_end_offsets = fetch_epochs
    fetcher.set_replica_state(tp, PartitionState.of(leader_epoch=0))
    fetcher.add_partitions({tp: initial_fetch_state(TOPIC_IDS["topic"], 0, 0)}, force_truncation=True)
    leader_log = batches((0, 0))
    fetcher.mock_leader.set_leader_state(tp, PartitionState.of(leader_log, leader_epoch_on_leader, 0))

    await fetcher.do_work()
    # The answer was for epoch 0 and is dropped: still truncating, at epoch 1.
    state = fetcher.fetch_state(tp)
    assert (state.state, state.current_leader_epoch) == (TRUNCATING, 1)
    assert fetcher.truncations == []

    if leader_epoch_on_leader < 1:
        fetcher.mock_leader.set_leader_state(tp, PartitionState.of(leader_log, 1, 0))
    await fetcher.do_work()
    assert fetcher.replica_partition_state(tp).log == leader_log


@pytest.mark.anyio
async def test_truncate_to_epoch_end_offsets_during_remove_partitions():
    """Mirrors AbstractFetcherThreadTest#testTruncateToEpochEndOffsetsDuringRemovePartitions."""
    fetcher = new_fetcher(truncate_on_fetch=False)
    real = fetcher.mock_leader.fetch_epoch_end_offsets

    async def fetch_epochs(partitions):
        answer = await real(partitions)
        fetcher.remove_partitions({PARTITION})
        fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=1))
        return answer

    fetcher.mock_leader.fetch_epoch_end_offsets = fetch_epochs
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0)), 0, 0))

    await fetcher.do_work()
    assert fetcher.fetch_state(PARTITION) is None
    assert fetcher.truncations == []
    await fetcher.do_work()
    assert fetcher.replica_partition_state(PARTITION).log == []


@pytest.mark.anyio
async def test_truncation_throws_exception_if_leader_returns_partitions_not_requested_in_fetch_epochs():
    """Mirrors AbstractFetcherThreadTest#testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs."""
    fetcher = new_fetcher()
    real = fetcher.mock_leader.fetch_epoch_end_offsets

    async def fetch_epochs(partitions):
        answer = await real(partitions)
        answer[TopicPartition("topic2", 0)] = EpochEndOffset(partition=0, leader_epoch=0, end_offset=0)
        return answer

    fetcher.mock_leader.fetch_epoch_end_offsets = fetch_epochs
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0, force_truncation=True)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(leader_epoch=0))

    with pytest.raises(IllegalStateException):
        await fetcher.do_work()


@pytest.mark.anyio
@pytest.mark.parametrize("change, used", [("offset", False), ("removed", False), ("epoch", True)])
async def test_fetch_response_ignored_when_fetch_state_changed_in_flight(change, used):
    """Mirrors AbstractFetcherThread#processFetchRequest's guard (Kafka 3.7): an answer is used only if the
    partition is still ready and at the offset it was asked with; a new leader epoch at the same offset
    does not discard it (Kafka compares no epoch there)."""
    fetcher = new_fetcher()
    replica = PartitionState.of(leader_epoch=0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0), (1, 0)), 0, 2))

    def meanwhile():
        current = fetcher.fetch_state(PARTITION)
        if change == "offset":
            fetcher.partition_states.update(PARTITION, replace(current, fetch_offset=1))
        elif change == "epoch":
            fetcher.partition_states.update(PARTITION, replace(current, current_leader_epoch=1))
        else:
            fetcher.remove_partitions({PARTITION})

    fetcher.mock_leader.set_response_callback(meanwhile)
    await fetcher.do_work()
    if used:
        assert (replica.log_end_offset, fetcher.process_partition_data_calls) == (1, 1)
        state = fetcher.fetch_state(PARTITION)
        assert (state.fetch_offset, state.current_leader_epoch, state.lag) == (1, 1, 1)
    else:
        assert replica.log_end_offset == 0
        assert fetcher.process_partition_data_calls == 0


@pytest.mark.anyio
async def test_lag_is_updated_when_no_records():
    """Mirrors ReplicaFetcherThreadTest#testLagIsUpdatedWhenNoRecords (KAFKA-15080, Kafka 3.6.0): an empty
    answer for a partition whose lag was never known sets it (0 here), so the idle replica counts as in
    sync; later empty answers leave the state alone."""
    fetcher = new_fetcher()
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(leader_epoch=0, high_watermark=0))
    assert fetcher.fetch_state(PARTITION).lag is None
    await fetcher.do_work()
    state = fetcher.fetch_state(PARTITION)
    assert (state.fetch_offset, state.lag, state.state, state.is_replica_in_sync) == (0, 0, FETCHING, True)
    assert fetcher.fetcher_stats.byte_rate.count == 0
    await fetcher.do_work()
    assert fetcher.fetch_state(PARTITION) is state


@pytest.mark.anyio
async def test_out_of_range_reset_dropped_if_partition_changes_while_asking_leader():
    """The out-of-range reset awaits the leader; if the partition moved meanwhile nothing is truncated."""
    fetcher = new_fetcher()
    replica = PartitionState.of(batches((0, 0), (1, 0), (2, 0)), 0, 0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 3, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches((0, 0)), 0, 1))
    real = fetcher.mock_leader.fetch_latest_offset

    async def latest(tp, epoch):
        answer = await real(tp, epoch)
        fetcher.add_partitions({PARTITION: initial_fetch_state(TOPIC_IDS["topic"], 3, 1)})  # epoch bump
        return answer

    fetcher.mock_leader.fetch_latest_offset = latest
    await fetcher.do_work()
    assert fetcher.truncations == []
    assert replica.log_end_offset == 3
    state = fetcher.fetch_state(PARTITION)
    assert (state.current_leader_epoch, state.fetch_offset, state.is_delayed) == (1, 3, False)


# -- the task loop ------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_run_loop_replicates_then_shuts_down():
    """The fetcher as an anyio task: it replicates until caught up and stops on shutdown."""
    fetcher = MockFetcherThread(MockLeaderEndPoint(), fetch_back_off_ms=10, time=Time())
    replica = PartitionState.of(leader_epoch=0)
    fetcher.set_replica_state(PARTITION, replica)
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(batches(*[(i, 0) for i in range(5)]), 0, 5))

    async with anyio.create_task_group() as tg:
        fetcher.start(tg)
        with anyio.fail_after(5):
            while replica.log_end_offset < 5:
                await anyio.sleep(0)
        fetcher.shutdown()
        await fetcher.await_shutdown()
    assert replica.offsets() == [(i, 0) for i in range(5)]
    assert fetcher.is_running is False
    assert fetcher.is_thread_failed is False


# -- metrics on shutdown, topic ids -------------------------------------------------------------

@pytest.mark.anyio
async def test_metrics_removed_on_shutdown():
    """Mirrors AbstractFetcherThreadTest#testMetricsRemovedOnShutdown.

    kafka_ref has no Yammer registry nor BrokerTopicStats in the fetcher: the fetcher's own
    metrics (``metric_names`` of its FetcherStats and FetcherLagStats) must all be present while
    it runs and all gone after shutdown.
    """
    fetcher_metrics = {FetcherMetrics.BYTES_PER_SEC, FetcherMetrics.REQUESTS_PER_SEC, FetcherMetrics.CONSUMER_LAG}
    fetcher = MockFetcherThread(MockLeaderEndPoint(), fetch_back_off_ms=10, time=Time())
    fetcher.set_replica_state(PARTITION, PartitionState.of(leader_epoch=0))
    add(fetcher, PARTITION, 0, 0)
    fetcher.mock_leader.set_leader_state(PARTITION, PartitionState.of(leader_epoch=0))

    def metric_names() -> set[str]:
        return fetcher.fetcher_stats.metric_names() | fetcher.fetcher_lag_stats.metric_names()

    async with anyio.create_task_group() as tg:
        fetcher.start(tg)
        with anyio.fail_after(5):
            while metric_names() != fetcher_metrics:
                await anyio.sleep(0)
        fetcher.shutdown()
        await fetcher.await_shutdown()
    assert metric_names() == set()
    assert fetcher.fetcher_lag_stats.stats == {}
    assert fetcher.fetcher_stats.request_rate.count >= 1


@pytest.mark.anyio
async def test_maybe_update_topic_ids():
    """Mirrors AbstractFetcherThreadTest#testMaybeUpdateTopicIds."""
    fetcher = new_fetcher()
    fetcher.set_replica_state(PARTITION1, PartitionState.of(leader_epoch=0))
    # No topic id to start with.
    fetcher.add_partitions({PARTITION1: initial_fetch_state(None, 0, 0)})
    assert fetcher.fetch_state(PARTITION1) is not None
    assert fetcher.fetch_state(PARTITION1).topic_id is None

    fetcher.maybe_update_topic_ids({PARTITION1}, TOPIC_IDS.get)
    assert fetcher.fetch_state(PARTITION1).topic_id == TOPIC_IDS["topic1"]

    # A partition the fetcher does not have stays unknown.
    unknown = TopicPartition("unknown", 0)
    fetcher.maybe_update_topic_ids({unknown}, TOPIC_IDS.get)
    assert fetcher.fetch_state(unknown) is None
