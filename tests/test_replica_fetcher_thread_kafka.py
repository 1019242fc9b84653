"""kafka.server.ReplicaFetcherThreadTest (Kafka 3.8): the follower's fetcher over RemoteLeaderEndPoint.

Kafka mocks the ReplicaManager, the Partition and the UnifiedLog with Mockito and answers the
follower's requests with MockBlockingSender. Here the same stand-ins are small classes: one
StubLog and one StubPartition shared by every partition (as Kafka's ``stub`` wires them), whose
answers the test fixes and whose ``truncate_to`` calls are recorded, and a MockBlockingSender
that takes the Network's place under RemoteLeaderEndPoint and counts the requests it answers.
The thread runs on MockTime, so a back-off delay lasts until the test advances the clock.

Not ported:
- shouldSendLatestRequestVersionsByDefault: kafka_ref's MetadataVersion has no per-API request
  version table (only the Fetch version).
- shouldUpdateReassignmentBytesInMetrics, shouldNotUpdateReassignmentBytesInMetricsWhenNoReassignmentsInProgress:
  BrokerTopicStats' reassignment meters are not modelled.
- testLagIsUpdatedWhenNoRecords: ported in tests/test_abstract_fetcher_thread.py.
The request-version checks (lastUsedOffsetForLeaderEpochVersion) inside the ported tests are left
out for the same reason as the first item.
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors, NotLeaderOrFollowerException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import EpochEndOffset as DivergingEpoch
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.requests.list_offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopicResult,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.log.fetch_data import OffsetAndEpoch
from kafka_ref.replica.fetcher import (
    FETCHING,
    BrokerEndPoint,
    FailedPartitions,
    IllegalStateException,
    InitialFetchState,
    ReplicaFetcherThread,
)
from kafka_ref.replica.fetcher.leader_end_point import RemoteLeaderEndPoint
from kafka_ref.replica.fetcher.partition_fetch_state import TRUNCATING, PartitionFetchState
from kafka_ref.server.fetch_session_handler import FetchSessionHandler

T1P0 = TopicPartition("topic1", 0)
T1P1 = TopicPartition("topic1", 1)
T2P1 = TopicPartition("topic2", 1)
TOPIC_ID1 = Uuid(71, 1)
TOPIC_ID2 = Uuid(71, 2)
TOPIC_IDS = {"topic1": TOPIC_ID1, "topic2": TOPIC_ID2}
BROKER_END_POINT = BrokerEndPoint(0, "localhost", 1000)
BACKOFF_MS = 10


@pytest.fixture
def anyio_backend():
    return "asyncio"


def broker_config(ibp: str | None = None) -> KafkaConfig:
    """TestUtils.createBrokerConfig(1, ...), with ``inter.broker.protocol.version`` when given
    (kafkaConfigNoTruncateOnFetch is IBP 2.6) and a short fetch back-off."""
    props = {"broker.id": 1, "replica.fetch.backoff.ms": BACKOFF_MS}
    if ibp is not None:
        props["inter.broker.protocol.version"] = ibp
    return KafkaConfig(props)


def no_truncate_on_fetch_config() -> KafkaConfig:
    return broker_config("2.6")


def initial_fetch_state(topic_id: Uuid | None, fetch_offset: int, leader_epoch: int = 1) -> InitialFetchState:
    return InitialFetchState(topic_id, BrokerEndPoint(0, "localhost", 9092), leader_epoch, fetch_offset)


def epoch_result(tp: TopicPartition, leader_epoch: int, end_offset: int, error: Errors = Errors.NONE) -> EpochEndOffset:
    """ReplicaFetcherThreadTest#newOffsetForLeaderPartitionResult."""
    return EpochEndOffset(error_code=error.code, partition=tp.partition, leader_epoch=leader_epoch, end_offset=end_offset)


class StubLog:
    """The UnifiedLog answers a test fixes. ``latest_epoch`` answers come from a list, the last
    one repeating (Mockito's consecutive stubbing); ``end_offset_for_epoch`` from a dict."""

    def __init__(self, log_end_offset: int = 0, high_watermark: int = 0, latest_epochs=(None,),
                 end_offsets: Mapping[int, OffsetAndEpoch] | None = None) -> None:
        self.log_end_offset = log_end_offset
        self.high_watermark = high_watermark
        self.log_start_offset = 0
        self.latest_epochs = list(latest_epochs)
        self.end_offsets = dict(end_offsets or {})
        self.high_watermark_updates: list[int] = []
        self.new_high_watermark: int | None = None

    @property
    def latest_epoch(self) -> int | None:
        return self.latest_epochs.pop(0) if len(self.latest_epochs) > 1 else self.latest_epochs[0]

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch | None:
        return self.end_offsets.get(epoch)

    def maybe_update_high_watermark(self, hw: int) -> int | None:
        self.high_watermark_updates.append(hw)
        return self.new_high_watermark

    def maybe_increment_log_start_offset(self, offset: int, reason) -> None:
        pass


class StubPartition:
    """The Partition a test's ReplicaManager hands out: every truncation is recorded."""

    def __init__(self, log: StubLog, append_info=None) -> None:
        self.log = log
        self.truncations: list[tuple[int, bool]] = []
        self.full_truncations: list[int] = []
        self.append_info = append_info
        self.appended: list[MemoryRecords] = []

    @property
    def local_log_or_exception(self) -> StubLog:
        return self.log

    def truncate_to(self, offset: int, is_future: bool = False) -> None:
        self.truncations.append((offset, is_future))

    def truncate_fully_and_start_at(self, offset: int, is_future: bool = False) -> None:
        self.full_truncations.append(offset)

    def append_records_to_follower_or_future_replica(self, records, is_future: bool = False):
        self.appended.append(records)
        return self.append_info

    @property
    def truncate_offsets(self) -> list[int]:
        return [offset for offset, _ in self.truncations]


class StubReplicaManager:
    """The ReplicaManager contract of ReplicaFetcherThread/RemoteLeaderEndPoint; ``stub`` in Kafka's
    test maps t1p0, t1p1 and t2p1 to the one partition."""

    def __init__(self, partition: StubPartition, config: KafkaConfig, partitions=(T1P0, T1P1, T2P1)) -> None:
        self.local_broker_id = config.get("broker.id")
        self.config = config
        self.time = MockTime()
        self.partitions = {tp: partition for tp in partitions}
        self.completed_delayed_fetches: list[list[TopicPartition]] = []

    def get_partition_or_exception(self, tp: TopicPartition) -> StubPartition:
        partition = self.partitions.get(tp)
        if partition is None:
            raise NotLeaderOrFollowerException(f"no partition {tp}")
        return partition

    def complete_delayed_fetch_requests(self, tps) -> None:
        self.completed_delayed_fetches.append(list(tps))


class MockBlockingSender:
    """Mirrors kafka.server.epoch.util.MockBlockingSender, in the Network's place.

    OffsetsForLeaderEpoch gets ``current_offsets`` (after the epoch-request callback); Fetch gets
    the partition data set for the next response (none by default: a sessionless empty answer);
    ListOffsets gets the answers set for it. ``error`` makes every send raise it.
    """

    def __init__(self, offsets: Mapping[TopicPartition, EpochEndOffset]) -> None:
        self.current_offsets = dict(offsets)
        self.fetch_count = 0
        self.epoch_fetch_count = 0
        self.list_offsets_count = 0
        self.callback = None
        self.fetch_partition_data: dict[TopicPartition, PartitionData] = {}
        self.topic_ids: dict[str, Uuid] = {}
        self.error: BaseException | None = None
        self.sent: list[object] = []

    def set_epoch_request_callback(self, callback) -> None:
        self.callback = callback

    def set_offsets_for_next_response(self, offsets: Mapping[TopicPartition, EpochEndOffset]) -> None:
        self.current_offsets = dict(offsets)

    def set_fetch_partition_data_for_next_response(self, data: Mapping[TopicPartition, PartitionData]) -> None:
        self.fetch_partition_data = dict(data)

    def set_ids_for_next_response(self, topic_ids: Mapping[str, Uuid]) -> None:
        self.topic_ids = dict(topic_ids)

    async def send(self, source: int, destination: int, request, timeout_ms: int | None = None):
        self.sent.append(request)
        if self.error is not None:
            raise self.error
        if isinstance(request, OffsetForLeaderEpochRequest):
            if self.callback is not None:
                self.callback()
            self.epoch_fetch_count += 1
            by_topic: dict[str, list[EpochEndOffset]] = {}
            for tp, answer in self.current_offsets.items():
                by_topic.setdefault(tp.topic, []).append(answer)
            return OffsetForLeaderEpochResponse(topics=tuple(
                OffsetForLeaderTopicResult(topic=topic, partitions=tuple(parts)) for topic, parts in by_topic.items()))
        if isinstance(request, FetchRequest):
            self.fetch_count += 1
            data = {TopicIdPartition(self.topic_ids.get(tp.topic, ZERO_UUID), tp): d
                    for tp, d in self.fetch_partition_data.items()}
            self.fetch_partition_data, self.topic_ids = {}, {}
            return FetchResponse.of(Errors.NONE.code, 0, 1 if data else 0, data)
        if isinstance(request, ListOffsetsRequest):
            self.list_offsets_count += 1
            return ListOffsetsResponse()
        raise NotImplementedError(type(request).__name__)


def create_replica_fetcher_thread(name: str, config: KafkaConfig, replica_mgr: StubReplicaManager,
                                  sender: MockBlockingSender, failed: FailedPartitions | None = None,
                                  thread_class: type[ReplicaFetcherThread] = ReplicaFetcherThread,
                                  leader_class: type[RemoteLeaderEndPoint] = RemoteLeaderEndPoint) -> ReplicaFetcherThread:
    """ReplicaFetcherThreadTest#createReplicaFetcherThread: a RemoteLeaderEndPoint on the sender."""
    prefix = f"[ReplicaFetcher replicaId={config.get('broker.id')}, leaderId={BROKER_END_POINT.id}, fetcherId=0] "
    leader = leader_class(prefix, sender, BROKER_END_POINT, FetchSessionHandler(BROKER_END_POINT.id, prefix),
                                  config, replica_mgr, broker_epoch_supplier=lambda: 1)
    return thread_class(name, leader, config, failed if failed is not None else FailedPartitions(), replica_mgr, prefix)


def assert_partition_states(thread: ReplicaFetcherThread, ready_for_fetch: bool, truncating: bool, delayed: bool) -> None:
    """ReplicaFetcherThreadTest#assertPartitionStates over t1p0, t1p1 and t2p1."""
    for tp in (T1P0, T1P1, T2P1):
        state = thread.fetch_state(tp)
        assert state is not None
        assert state.is_ready_for_fetch is ready_for_fetch
        assert (state.state is TRUNCATING and not state.is_delayed) is truncating
        assert state.is_delayed is delayed


@pytest.mark.anyio
async def test_fetch_leader_epoch_request_if_last_epoch_defined_for_some_partitions():
    """Mirrors ReplicaFetcherThreadTest#testFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions."""
    config = no_truncate_on_fetch_config()
    leader_epoch = 5
    # t1p0 and t1p1 see epoch 5 in the log; t2p1 sees none.
    log = StubLog(log_end_offset=0, high_watermark=0, latest_epochs=[leader_epoch, leader_epoch, None],
                  end_offsets={leader_epoch: OffsetAndEpoch(0, leader_epoch)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, leader_epoch, 1), T1P1: epoch_result(T1P1, leader_epoch, 1)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID2, 0),
                           T2P1: initial_fetch_state(TOPIC_ID2, 0)})
    assert_partition_states(thread, ready_for_fetch=False, truncating=True, delayed=False)

    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 1)
    assert_partition_states(thread, ready_for_fetch=True, truncating=False, delayed=False)

    # No more epoch requests.
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 2)
    assert_partition_states(thread, ready_for_fetch=True, truncating=False, delayed=False)
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 3)
    assert_partition_states(thread, ready_for_fetch=True, truncating=False, delayed=False)

    # Each partition truncated once: to min(leader 1, follower 0) = 0 by epoch, t2p1 to its HW 0.
    assert partition.truncations == [(0, False), (0, False), (0, False)]


@pytest.mark.anyio
async def test_should_handle_exception_from_blocking_send():
    """Mirrors ReplicaFetcherThreadTest#shouldHandleExceptionFromBlockingSend."""
    config = broker_config()
    sender = MockBlockingSender({})
    sender.error = RuntimeError("the send blew up")
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(StubPartition(StubLog()), config), sender)

    result = await thread.leader.fetch_epoch_end_offsets({
        T1P0: OffsetForLeaderPartition(partition=T1P0.partition, leader_epoch=0),
        T1P1: OffsetForLeaderPartition(partition=T1P1.partition, leader_epoch=0),
    })

    # Every partition gets the error, with undefined epoch and offset.
    assert result == {
        T1P0: epoch_result(T1P0, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Errors.UNKNOWN_SERVER_ERROR),
        T1P1: epoch_result(T1P1, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Errors.UNKNOWN_SERVER_ERROR),
    }
    assert len(sender.sent) == 1


async def verify_fetch_leader_epoch_on_first_fetch(ibp: str | None, epoch_fetch_count: int) -> None:
    """ReplicaFetcherThreadTest#verifyFetchLeaderEpochOnFirstFetch."""
    config = broker_config(ibp)
    leader_epoch = 5
    log = StubLog(high_watermark=0, latest_epochs=[leader_epoch], end_offsets={leader_epoch: OffsetAndEpoch(0, leader_epoch)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, leader_epoch, 1), T1P1: epoch_result(T1P1, leader_epoch, 1)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})

    for fetches in (1, 2, 3):
        await thread.do_work()
        assert (sender.epoch_fetch_count, sender.fetch_count) == (epoch_fetch_count, fetches)


@pytest.mark.anyio
async def test_should_fetch_leader_epoch_on_first_fetch_only_if_leader_epoch_known_to_both_ibp26():
    """Mirrors ReplicaFetcherThreadTest#shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBothIbp26."""
    await verify_fetch_leader_epoch_on_first_fetch("2.6", epoch_fetch_count=1)


@pytest.mark.anyio
async def test_should_not_fetch_leader_epoch_on_first_fetch_with_truncate_on_fetch():
    """Mirrors ReplicaFetcherThreadTest#shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch."""
    await verify_fetch_leader_epoch_on_first_fetch(None, epoch_fetch_count=0)


@pytest.mark.anyio
async def test_should_truncate_to_offset_specified_in_epoch_offset_response():
    """Mirrors ReplicaFetcherThreadTest#shouldTruncateToOffsetSpecifiedInEpochOffsetResponse."""
    config = no_truncate_on_fetch_config()
    leader_epoch, initial_leo = 5, 200
    log = StubLog(log_end_offset=initial_leo, high_watermark=initial_leo - 1, latest_epochs=[leader_epoch],
                  end_offsets={leader_epoch: OffsetAndEpoch(initial_leo, leader_epoch)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, leader_epoch, 156), T2P1: epoch_result(T2P1, leader_epoch, 172)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T2P1: initial_fetch_state(TOPIC_ID2, 0)})

    await thread.do_work()

    # The leader's end offsets are below ours: truncate to them.
    assert sorted(partition.truncate_offsets) == [156, 172]


@pytest.mark.anyio
async def test_should_truncate_to_offset_specified_in_epoch_offset_response_if_follower_has_no_more_epochs():
    """Mirrors ReplicaFetcherThreadTest#shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs."""
    config = no_truncate_on_fetch_config()
    epoch_at_follower, epoch_at_leader, initial_leo = 5, 4, 200
    log = StubLog(log_end_offset=initial_leo, high_watermark=initial_leo - 3, latest_epochs=[epoch_at_follower])
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, epoch_at_leader, 156),
                                 T2P1: epoch_result(T2P1, epoch_at_leader, 202)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T2P1: initial_fetch_state(TOPIC_ID2, 0)})

    await thread.do_work()

    # The follower does not know epoch 4: min(leader's end offset, our LEO) = 156 and 200.
    assert sorted(partition.truncate_offsets) == [156, initial_leo]


@pytest.mark.anyio
async def test_should_fetch_leader_epoch_second_time_if_leader_replies_with_epoch_not_known_to_follower():
    """Mirrors ReplicaFetcherThreadTest#shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower."""
    config = no_truncate_on_fetch_config()
    initial_leo = 200
    log = StubLog(log_end_offset=initial_leo, high_watermark=initial_leo - 2, latest_epochs=[5],
                  end_offsets={4: OffsetAndEpoch(120, 3), 3: OffsetAndEpoch(120, 3)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, 4, 155), T1P1: epoch_result(T1P1, 4, 143)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})

    # Loop 1: the leader answers epoch 4, which the follower does not have: truncate to the end
    # of its epoch 3 (120) and ask again; nothing is fetched.
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 0)

    # Loop 2: asked about epoch 3, the leader ends it at 101 / 102.
    sender.set_offsets_for_next_response({T1P0: epoch_result(T1P0, 3, 101), T1P1: epoch_result(T1P1, 3, 102)})
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (2, 1)

    # Loop 3: no more epoch requests.
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (2, 2)

    assert partition.truncate_offsets == [120, 120, 101, 102]


class NoProcessingReplicaFetcherThread(ReplicaFetcherThread):
    """The ReplicaFetcherThread of Kafka's test whose processPartitionData returns None."""

    def process_partition_data(self, topic_partition, fetch_offset, partition_data):
        return None


def diverging(partition: int, epoch: int, end_offset: int, high_watermark: int = 0) -> PartitionData:
    return PartitionData(partition_index=partition, last_stable_offset=0, log_start_offset=0, high_watermark=high_watermark,
                         diverging_epoch=DivergingEpoch(epoch=epoch, end_offset=end_offset))


@pytest.mark.anyio
async def test_should_truncate_if_leader_replies_with_diverging_epoch_not_known_to_follower():
    """Mirrors ReplicaFetcherThreadTest#shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower."""
    config = broker_config()
    initial_leo = 200
    log = StubLog(log_end_offset=initial_leo, high_watermark=115, latest_epochs=[5],
                  end_offsets={4: OffsetAndEpoch(149, 4), 3: OffsetAndEpoch(129, 2), 2: OffsetAndEpoch(119, 1)})
    partition = StubPartition(log)
    sender = MockBlockingSender({})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender,
                                           thread_class=NoProcessingReplicaFetcherThread)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, initial_leo), T1P1: initial_fetch_state(TOPIC_ID1, initial_leo)})
    partitions = (T1P0, T1P1)

    # Loop 1: no epoch request, a fetch at once (truncation comes with fetch responses).
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (0, 1)
    assert all(thread.fetch_state(tp).state is FETCHING for tp in partitions)

    # Loop 2: diverging at epoch 4, which the follower has: truncate to the leader's offsets.
    sender.set_fetch_partition_data_for_next_response({T1P0: diverging(0, 4, 140), T1P1: diverging(1, 4, 141)})
    sender.set_ids_for_next_response(TOPIC_IDS)
    log.latest_epochs = [4]
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (0, 2)
    assert partition.truncate_offsets == [140, 141]
    assert all(thread.fetch_state(tp).state is FETCHING for tp in partitions)

    # Loop 3: diverging at epoch 3, which the follower ends at 129 (its epoch 2): truncate
    # there, truncation not complete, still fetching.
    sender.set_fetch_partition_data_for_next_response({T1P0: diverging(0, 3, 130), T1P1: diverging(1, 3, 131)})
    sender.set_ids_for_next_response(TOPIC_IDS)
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (0, 3)
    assert partition.truncate_offsets == [140, 141, 129, 129]
    assert all(thread.fetch_state(tp).state is FETCHING for tp in partitions)

    # Loop 4: diverging at epoch 2 (follower ends it at 119); the log has no latest epoch now.
    sender.set_fetch_partition_data_for_next_response({T1P0: diverging(0, 2, 120), T1P1: diverging(1, 2, 121)})
    sender.set_ids_for_next_response(TOPIC_IDS)
    log.latest_epochs = [None]
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (0, 4)
    assert partition.truncate_offsets == [140, 141, 129, 129, 119, 119]
    assert all(thread.fetch_state(tp).state is FETCHING for tp in partitions)


@pytest.mark.anyio
async def test_truncate_on_fetch_does_not_update_high_watermark():
    """Mirrors ReplicaFetcherThreadTest#testTruncateOnFetchDoesNotUpdateHighWatermark."""
    config = broker_config()
    log_end_offset, high_watermark = 150, 130
    log = StubLog(log_end_offset=log_end_offset, high_watermark=high_watermark, latest_epochs=[5],
                  end_offsets={4: OffsetAndEpoch(149, 4)})
    partition = StubPartition(log)
    sender = MockBlockingSender({})
    thread = create_replica_fetcher_thread("fetcher-thread", config, StubReplicaManager(partition, config, (T1P0,)), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, log_end_offset)})

    # The leader's HW (160) is above ours, but the answer diverges at epoch 4 (ends at 140).
    sender.set_fetch_partition_data_for_next_response({T1P0: diverging(0, 4, 140, high_watermark=160)})
    sender.set_ids_for_next_response(TOPIC_IDS)
    await thread.do_work()

    assert sender.fetch_count == 1
    assert partition.truncations == [(140, False)]
    assert log.high_watermark_updates == []


@pytest.mark.anyio
async def test_should_use_leader_end_offset_if_inter_broker_version_below20():
    """Mirrors ReplicaFetcherThreadTest#shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20."""
    config = broker_config("0.11.0")
    initial_leo = 200
    log = StubLog(log_end_offset=initial_leo, high_watermark=initial_leo - 2, latest_epochs=[5],
                  end_offsets={4: OffsetAndEpoch(120, 3), 3: OffsetAndEpoch(120, 3)})
    partition = StubPartition(log)
    # Before IBP 2.0 the answer has no epoch.
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, UNDEFINED_EPOCH, 155),
                                 T1P1: epoch_result(T1P1, UNDEFINED_EPOCH, 143)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})

    # Loop 1: both truncate to the leader's offset though they cannot match epochs.
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 1)
    # Loop 2: no more epoch requests.
    await thread.do_work()
    assert (sender.epoch_fetch_count, sender.fetch_count) == (1, 2)
    assert partition.truncate_offsets == [155, 143]


@pytest.mark.anyio
async def test_should_truncate_to_initial_fetch_offset_if_leader_returns_undefined_offset():
    """Mirrors ReplicaFetcherThreadTest#shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset."""
    config = no_truncate_on_fetch_config()
    initial_fetch_offset = 100
    log = StubLog(high_watermark=initial_fetch_offset, latest_epochs=[5])
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, initial_fetch_offset)})

    await thread.do_work()

    assert partition.truncations == [(initial_fetch_offset, False)]


@pytest.mark.anyio
async def test_should_poll_indefinitely_if_leader_returns_any_exception():
    """Mirrors ReplicaFetcherThreadTest#shouldPollIndefinitelyIfLeaderReturnsAnyException.

    Kafka's loops wait out the 1 s back-off on the wall clock; here MockTime is moved past it
    before each loop.
    """
    config = no_truncate_on_fetch_config()
    leader_epoch, high_watermark, initial_leo = 5, 100, 300
    log = StubLog(log_end_offset=initial_leo, high_watermark=high_watermark, latest_epochs=[leader_epoch],
                  end_offsets={leader_epoch: OffsetAndEpoch(initial_leo, leader_epoch)})
    partition = StubPartition(log)
    replica_mgr = StubReplicaManager(partition, config)
    sender = MockBlockingSender({
        T1P0: epoch_result(T1P0, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Errors.NOT_LEADER_OR_FOLLOWER),
        T1P1: epoch_result(T1P1, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, Errors.UNKNOWN_SERVER_ERROR),
    })
    thread = create_replica_fetcher_thread("bob", config, replica_mgr, sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})

    for _ in range(4):
        await thread.do_work()
        replica_mgr.time.advance(BACKOFF_MS)
    # No leader to answer: asked every round, never truncated.
    assert sender.epoch_fetch_count == 4
    assert partition.truncations == []

    # A new leader answers for t1p0.
    sender.current_offsets[T1P0] = epoch_result(T1P0, leader_epoch, 156)
    await thread.do_work()
    assert partition.truncations == [(156, False)]


@pytest.mark.anyio
async def test_should_move_partitions_out_of_truncating_log_state():
    """Mirrors ReplicaFetcherThreadTest#shouldMovePartitionsOutOfTruncatingLogState."""
    config = no_truncate_on_fetch_config()
    leader_epoch = 4
    log = StubLog(high_watermark=0, latest_epochs=[leader_epoch], end_offsets={leader_epoch: OffsetAndEpoch(0, leader_epoch)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, leader_epoch, 1), T1P1: epoch_result(T1P1, leader_epoch, 1)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})
    assert (thread.fetch_state(T1P0).state, thread.fetch_state(T1P1).state) == (TRUNCATING, TRUNCATING)

    await thread.do_work()

    assert (thread.fetch_state(T1P0).state, thread.fetch_state(T1P1).state) == (FETCHING, FETCHING)
    assert partition.truncations == [(0, False), (0, False)]


@pytest.mark.anyio
async def test_should_filter_partitions_made_leader_during_leader_epoch_request():
    """Mirrors ReplicaFetcherThreadTest#shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest."""
    config = no_truncate_on_fetch_config()
    initial_leo = 100
    log = StubLog(log_end_offset=initial_leo, high_watermark=initial_leo - 2, latest_epochs=[5],
                  end_offsets={5: OffsetAndEpoch(initial_leo, 5)})
    partition = StubPartition(log)
    sender = MockBlockingSender({T1P0: epoch_result(T1P0, 5, 52), T1P1: epoch_result(T1P1, 5, 49)})
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(partition, config), sender)
    thread.add_partitions({T1P0: initial_fetch_state(TOPIC_ID1, 0), T1P1: initial_fetch_state(TOPIC_ID1, 0)})
    # While the epoch request is out, t1p0 becomes leader here (removed from the fetcher).
    sender.set_epoch_request_callback(lambda: thread.remove_partitions({T1P0}))

    await thread.do_work()

    # Only t1p1 truncates.
    assert partition.truncations == [(49, False)]


@pytest.mark.anyio
async def test_build_fetch():
    """Mirrors ReplicaFetcherThreadTest#testBuildFetch."""
    config = broker_config()
    log = StubLog()
    replica_mgr = StubReplicaManager(StubPartition(log), config)
    thread = create_replica_fetcher_thread("bob", config, replica_mgr, MockBlockingSender({}))
    leader_epoch = 1

    def state(topic_id: Uuid, offset: int) -> PartitionFetchState:
        return PartitionFetchState(topic_id, offset, None, leader_epoch, None, FETCHING, None)

    partition_map = {T1P0: state(TOPIC_ID1, 150), T1P1: state(TOPIC_ID1, 155), T2P1: state(TOPIC_ID2, 160)}
    result = thread.leader.build_fetch(partition_map)
    assert result.result is not None
    request = result.result.fetch_request
    max_bytes = config.get("replica.fetch.max.bytes")
    # Every partition: its id, fetch offset, log start 0, replica.fetch.max.bytes, the leader epoch, no last fetched epoch.
    sent = {tp: (data.topic_id, data.fetch_offset, data.log_start_offset, data.max_bytes, data.current_leader_epoch,
                 data.last_fetched_epoch) for tp, data in result.result.partition_data.items()}
    assert sent == {tp: (s.topic_id, s.fetch_offset, 0, max_bytes, leader_epoch, None) for tp, s in partition_map.items()}
    assert request.forgotten_topics_data == ()

    thread.leader.fetch_session_handler.handle_response(FetchResponse.of(Errors.NONE.code, 0, 123, {
        TopicIdPartition(TOPIC_ID1, T1P0): PartitionData(), TopicIdPartition(TOPIC_ID1, T1P1): PartitionData(),
        TopicIdPartition(TOPIC_ID2, T2P1): PartitionData(),
    }), request.version)

    # t1p0 goes, t2p1 gets a new topic id, t1p1 stays the same.
    new_topic_id = Uuid(71, 3)
    partition_map2 = {T1P1: state(TOPIC_ID1, 155), T2P1: state(new_topic_id, 160)}
    result2 = thread.leader.build_fetch(partition_map2)
    assert result2.result is not None
    request2 = result2.result.fetch_request
    # Only t2p1 is sent (t1p1 did not change); t2p1's old id is replaced and t1p0 removed.
    assert [(TopicIdPartition(t.topic_id, TopicPartition(t.topic, p.partition)), p.fetch_offset)
            for t in request2.topics for p in t.partitions] == [(TopicIdPartition(new_topic_id, T2P1), 160)]
    forgotten = {TopicIdPartition(t.topic_id, TopicPartition(t.topic, p)) for t in request2.forgotten_topics_data
                 for p in t.partitions}
    assert forgotten == {TopicIdPartition(TOPIC_ID1, T1P0), TopicIdPartition(TOPIC_ID2, T2P1)}


@pytest.mark.anyio
@pytest.mark.parametrize("high_watermark_updated", [True, False])
async def test_local_fetch_completion_if_high_watermark_updated(high_watermark_updated: bool):
    """Mirrors ReplicaFetcherThreadTest#testLocalFetchCompletionIfHighWatermarkUpdated."""
    config = broker_config()
    hw_from_leader = 100
    log = StubLog()
    log.new_high_watermark = hw_from_leader if high_watermark_updated else None
    partition = StubPartition(log, append_info=object())
    tp0, tp1 = TopicPartition("testTopic", 0), TopicPartition("testTopic", 1)
    replica_mgr = StubReplicaManager(partition, config, (tp0, tp1))
    thread = create_replica_fetcher_thread("replica-fetcher", config, replica_mgr, MockBlockingSender({}))
    records = MemoryRecords.with_records([SimpleRecord(value=b"foo", timestamp=1000)])

    thread.process_partition_data(tp0, 0, PartitionData(partition_index=0, records=records, high_watermark=hw_from_leader))
    thread.process_partition_data(tp1, 0, PartitionData(partition_index=1, records=records, high_watermark=hw_from_leader))
    assert replica_mgr.completed_delayed_fetches == []

    await thread.do_work()
    if high_watermark_updated:
        assert replica_mgr.completed_delayed_fetches == [[tp0, tp1]]
    else:
        assert replica_mgr.completed_delayed_fetches == []
    assert thread.partitions_with_new_high_watermark == []


@pytest.mark.anyio
async def test_should_catch_exception_from_blocking_send_when_shutting_down_replica_fetcher_thread():
    """Mirrors ReplicaFetcherThreadTest#shouldCatchExceptionFromBlockingSendWhenShuttingDownReplicaFetcherThread.

    Kafka's BlockingSend throws from initiateClose and close; kafka_ref's RemoteLeaderEndPoint has
    no BlockingSend of its own, so the end point's own initiate_close and close throw here.
    """
    calls: list[str] = []

    class FailingCloseLeaderEndPoint(RemoteLeaderEndPoint):
        def initiate_close(self) -> None:
            calls.append("initiate_close")
            raise ValueError("initiate_close failed")  # Kafka's IllegalArgumentException

        def close(self) -> None:
            calls.append("close")
            raise IllegalStateException("close failed")

    config = broker_config()
    thread = create_replica_fetcher_thread("bob", config, StubReplicaManager(StubPartition(StubLog()), config),
                                           MockBlockingSender({}), leader_class=FailingCloseLeaderEndPoint)
    async with anyio.create_task_group() as tg:
        thread.start(tg)
        await anyio.sleep(0)
        # Neither error reaches the caller, and close runs although initiate_close failed.
        assert thread.initiate_shutdown() is True
        await thread.await_shutdown()
    assert calls == ["initiate_close", "close"]
    assert thread.is_running is False
