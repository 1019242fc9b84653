"""Ports of Kafka 3.8.0 KafkaConsumerTest (classic protocol): the auto-commit, committed-offset and pattern cases.

clients/src/test/java/org/apache/kafka/clients/consumer/KafkaConsumerTest.java drives a whole
KafkaConsumer over a MockClient. Here kafka_ref.clients.consumer.KafkaConsumer talks over the
in-process network to broker 0 of tests/mock_brokers.py (``MockBrokers``), which answers Metadata
by itself (topics ``test`` with two partitions and ``test2`` with one, all led by broker 0) and
every other request (FindCoordinator, JoinGroup, SyncGroup, OffsetFetch, OffsetCommit, ListOffsets,
Fetch) with the next prepared response, in order; a request with no prepared answer stays in
flight. The coordinator is broker 0 itself. auto.commit.interval.ms is the Kafka test's 500.

Where Kafka's consumer sends a commitAsync from ``assign`` at once (its network thread), kafka_ref
sends it at the next poll; the port polls before looking.

Not ported (of the tests about commits and close):
- testSubscriptionChangesWithAutoCommitEnabled / Disabled: kafka_ref's group consumer keeps the
  fetch responses it pipelines under a rebalance (no pending-revocation state), so the record
  counts the Kafka test asserts across the rebalance do not carry over.
- testGracefulClose, testCloseTimeout*, testCloseNoWait, testCloseInterrupt: they close fetch
  sessions (kafka_ref's consumer fetches without sessions) and interrupt threads; the close
  timings with auto-commit are ported from ConsumerCoordinatorTest in test_consumer_coordinator_kafka.py.
- testFetchStableOffsetThrowIn*: no API-version negotiation.
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mock_brokers import MockBrokers

from kafka_ref.clients.consumer import KafkaConsumer
from kafka_ref.clients.consumer_protocol import Assignment, ConsumerProtocol
from kafka_ref.clients.subscription_state import SubscriptionType
from kafka_ref.common.errors import Errors, InvalidConfigurationException, InvalidGroupIdException
from kafka_ref.common.records.memory_records import MemoryRecords
from kafka_ref.common.records.record import SimpleRecord
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.requests.find_coordinator import Coordinator, FindCoordinatorResponse
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupResponse
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest, OffsetCommitResponse
from kafka_ref.common.requests.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from kafka_ref.common.requests.sync_group import SyncGroupResponse
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Network

pytestmark = pytest.mark.anyio

TOPIC = "test"
TOPIC2 = "test2"
TP0 = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)
T2P0 = TopicPartition(TOPIC2, 0)
GROUP_ID = "mock-group"
MEMBER_ID = "memberId"
NODE = 0
AUTO_COMMIT_INTERVAL_MS = 500


@asynccontextmanager
async def harness(**config: Any):
    """A KafkaConsumer of group ``mock-group`` against the scripted broker 0 (KafkaConsumerTest#newConsumer)."""
    network = Network()
    broker = MockBrokers(network, {TP0: NODE, TP1: NODE, T2P0: NODE}, (NODE,), cluster_id="kafka-cluster")
    async with anyio.create_task_group() as tg:
        broker.serve(tg)
        settings = dict(client_id="consumer-1", group_id=GROUP_ID, auto_commit_interval_ms=AUTO_COMMIT_INTERVAL_MS,
                        session_timeout_ms=10000, heartbeat_interval_ms=3000, max_poll_interval_ms=300000,
                        auto_offset_reset="latest")
        settings.update(config)
        consumer = KafkaConsumer(network, [NODE], **settings)
        broker.time = consumer.time
        yield consumer, broker
        assert broker.mismatches == [], f"requests that did not match the prepared matcher: {broker.mismatches}"
        tg.cancel_scope.cancel()


# -- response builders (KafkaConsumerTest's private helpers) --------------------------------------


def prepare_find_coordinator(broker: MockBrokers) -> None:
    broker.prepare_response(FindCoordinatorResponse(coordinators=(Coordinator(
        key=GROUP_ID, node_id=NODE, host="localhost", port=9092, error_code=0),)))


def prepare_rebalance(broker: MockBrokers, partitions: list[TopicPartition]) -> None:
    """KafkaConsumerTest#prepareRebalance: coordinator found, joined as a follower, ``partitions`` assigned."""
    prepare_find_coordinator(broker)
    broker.prepare_response(JoinGroupResponse(error_code=0, generation_id=1, protocol_type="consumer",
                                              protocol_name="range", member_id=MEMBER_ID, leader="leader"))
    broker.prepare_response(SyncGroupResponse(error_code=0, protocol_type="consumer", protocol_name="range",
                                              assignment=ConsumerProtocol.serialize_assignment(Assignment(tuple(partitions)))))


def offset_response(offsets: dict[TopicPartition, int]) -> OffsetFetchResponse:
    """KafkaConsumerTest#offsetResponse: the committed offset of each partition (-1: none)."""
    topics: dict[str, list[OffsetFetchResponsePartitions]] = {}
    for tp, offset in offsets.items():
        topics.setdefault(tp.topic, []).append(OffsetFetchResponsePartitions(
            partition_index=tp.partition, committed_offset=offset, committed_leader_epoch=-1, metadata="", error_code=0))
    return OffsetFetchResponse(groups=(OffsetFetchResponseGroup(group_id=GROUP_ID, error_code=0, topics=tuple(
        OffsetFetchResponseTopics(name=t, partitions=tuple(ps)) for t, ps in topics.items())),))


def list_offsets_response(offsets: dict[TopicPartition, int]) -> ListOffsetsResponse:
    """KafkaConsumerTest#listOffsetsResponse."""
    topics: dict[str, list[ListOffsetsPartitionResponse]] = {}
    for tp, offset in offsets.items():
        topics.setdefault(tp.topic, []).append(ListOffsetsPartitionResponse(
            partition_index=tp.partition, error_code=0, timestamp=-1, offset=offset))
    return ListOffsetsResponse(topics=tuple(ListOffsetsTopicResponse(name=t, partitions=tuple(ps)) for t, ps in topics.items()))


def fetch_response(tp: TopicPartition, fetch_offset: int, count: int) -> FetchResponse:
    """KafkaConsumerTest#fetchResponse: ``count`` records from ``fetch_offset``, high watermark after them."""
    records = MemoryRecords.EMPTY if count == 0 else MemoryRecords.with_records(
        [SimpleRecord(b"key-%d" % i, b"value-%d" % i, (), 0) for i in range(count)], base_offset=fetch_offset)
    return FetchResponse.of(0, 0, FetchRequest.INVALID_SESSION_ID, {tp: PartitionData(
        partition_index=tp.partition, error_code=0, high_watermark=fetch_offset + count, last_stable_offset=-1,
        log_start_offset=0, records=records)})


def prepare_offset_commit(broker: MockBrokers, offsets: dict[TopicPartition, int]) -> None:
    """KafkaConsumerTest#prepareOffsetCommitResponse: the commit must carry exactly ``offsets``."""
    broker.prepare_response(OffsetCommitResponse.of({tp: 0 for tp in offsets}),
                            lambda r: isinstance(r, OffsetCommitRequest) and r.offsets() == offsets)


def commits(broker: MockBrokers) -> list[dict[TopicPartition, int]]:
    return [r.offsets() for r in broker.received if isinstance(r, OffsetCommitRequest)]


# --------------------------------------------------------------------------------------------
# Auto-commit
# --------------------------------------------------------------------------------------------


async def test_auto_commit_sent_before_position_update():
    """Mirrors KafkaConsumerTest#testAutoCommitSentBeforePositionUpdate: the auto-commit of a poll carries the
    positions before that poll's records are handed out (0, not 5)."""
    async with harness() as (consumer, broker):
        consumer.subscribe([TOPIC])
        prepare_rebalance(broker, [TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        # (KafkaConsumer#updateAssignmentMetadataIfNeeded(Long.MAX_VALUE), then poll(ZERO) sends the fetch.)
        await consumer._update_assignment_metadata_if_needed()
        assert await consumer.poll(0) == []
        assert consumer.assignment() == {TP0}
        # The outstanding fetch is answered: data for the next poll.
        broker.respond(fetch_response(TP0, 0, 5), FetchRequest)
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        prepare_offset_commit(broker, {TP0: 0})
        broker.prepare_response(fetch_response(TP0, 5, 0), lambda r: isinstance(r, FetchRequest))
        records = await consumer.poll(0)
        assert [r.offset for r in records] == [0, 1, 2, 3, 4]
        assert commits(broker) == [{TP0: 0}]
        assert await consumer.position(TP0) == 5
        # The commit went first; the next fetch (from 5) after the records were taken.
        await anyio.sleep(0.001)
        assert broker.sent()[-2:] == ["OffsetCommitRequest", "FetchRequest"]
        assert broker.received[-1].topics[0].partitions[0].fetch_offset == 5


async def test_poll_auto_commits_consumed_positions_every_interval():
    """LegacyKafkaConsumer#poll with ConsumerCoordinator#poll: a subscribed consumer polling in a loop commits
    the positions it has consumed once per auto.commit.interval.ms, on its own."""
    async with harness() as (consumer, broker):
        consumer.subscribe([TOPIC])
        prepare_rebalance(broker, [TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        # (KafkaConsumer#updateAssignmentMetadataIfNeeded(Long.MAX_VALUE), then poll(ZERO) sends the fetch.)
        await consumer._update_assignment_metadata_if_needed()
        assert await consumer.poll(0) == []
        joined_at = consumer.time.milliseconds()
        broker.respond(fetch_response(TP0, 0, 3), FetchRequest)
        assert len(await consumer.poll(0)) == 3
        # The pipelined fetch waits at the broker; the poll waiting for it commits once the interval is up
        # (its wait is bounded by ConsumerCoordinator#timeToNextPoll).
        await anyio.sleep(0.001)
        assert len(broker.waiting(FetchRequest)) == 1
        prepare_offset_commit(broker, {TP0: 3})
        assert await consumer.poll(AUTO_COMMIT_INTERVAL_MS) == []
        assert commits(broker) == [{TP0: 3}]
        assert broker.arrival_times(OffsetCommitRequest) == [joined_at + AUTO_COMMIT_INTERVAL_MS]


@pytest.mark.parametrize("interval_passed", [False, True])
async def test_manual_assignment_change_with_auto_commit_enabled(interval_passed):
    """Mirrors KafkaConsumerTest#testManualAssignmentChangeWithAutoCommitEnabled: a new manual assignment
    auto-commits the consumed position of the partition given up (11) when the interval has passed,
    and nothing before (Kafka's test, whose clock does not move, passes either way: its commitReceived
    flag starts true)."""
    async with harness() as (consumer, broker):
        prepare_find_coordinator(broker)
        consumer.assign([TP0])
        consumer.seek_to_beginning([TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP0]))[TP0].offset == 0
        assert consumer.assignment() == {TP0}
        # No coordinator lookup nor committed offsets: the start position, then the fetch.
        broker.prepare_response(list_offsets_response({TP0: 10}), lambda r: isinstance(r, ListOffsetsRequest))
        broker.prepare_response(fetch_response(TP0, 10, 1), lambda r: isinstance(r, FetchRequest))
        records = await consumer.poll(100)
        assert [r.offset for r in records] == [10]
        assert await consumer.position(TP0) == 11
        if interval_passed:
            await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
            prepare_offset_commit(broker, {TP0: 11})
        consumer.assign([T2P0])
        assert consumer.assignment() == {T2P0}
        await consumer.poll(0)
        assert commits(broker) == ([{TP0: 11}] if interval_passed else [])
        assert broker.sent()[:5] == ["FindCoordinatorRequest", "OffsetFetchRequest", "ListOffsetsRequest",
                                     "FetchRequest", "FetchRequest"]


async def test_manual_assignment_change_with_auto_commit_disabled():
    """Mirrors KafkaConsumerTest#testManualAssignmentChangeWithAutoCommitDisabled (with the interval passed)."""
    async with harness(enable_auto_commit=False) as (consumer, broker):
        prepare_find_coordinator(broker)
        consumer.assign([TP0])
        consumer.seek_to_beginning([TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP0]))[TP0].offset == 0
        broker.prepare_response(list_offsets_response({TP0: 10}), lambda r: isinstance(r, ListOffsetsRequest))
        broker.prepare_response(fetch_response(TP0, 10, 1), lambda r: isinstance(r, FetchRequest))
        assert len(await consumer.poll(1)) == 1
        assert await consumer.position(TP0) == 11
        await anyio.sleep(AUTO_COMMIT_INTERVAL_MS / 1000)
        consumer.assign([T2P0])
        assert consumer.assignment() == {T2P0}
        await consumer.poll(0)
        assert "OffsetCommitRequest" not in broker.sent()


async def test_commits_fetched_during_assign():
    """Mirrors KafkaConsumerTest#testCommitsFetchedDuringAssign."""
    async with harness() as (consumer, broker):
        consumer.assign([TP0])
        prepare_find_coordinator(broker)
        broker.prepare_response(offset_response({TP0: 10000}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP0]))[TP0].offset == 10000
        consumer.assign([TP0, TP1])
        broker.prepare_response(offset_response({TP0: 10000}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP0]))[TP0].offset == 10000
        broker.prepare_response(offset_response({TP1: 20000}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP1]))[TP1].offset == 20000
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetFetchRequest", "OffsetFetchRequest", "OffsetFetchRequest"]


async def test_offset_of_paused_partitions():
    """Mirrors KafkaConsumerTest#testOffsetOfPausedPartitions: paused partitions awaiting a reset to the end
    take their position from ListOffsets, not from the committed offsets."""
    async with harness() as (consumer, broker):
        prepare_find_coordinator(broker)
        partitions = {TP0, TP1}
        consumer.assign(sorted(partitions))
        assert consumer.assignment() == partitions
        consumer.pause(partitions)
        consumer.seek_to_end(partitions)
        broker.prepare_response(offset_response({TP0: 0, TP1: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP0]))[TP0].offset == 0
        broker.prepare_response(offset_response({TP1: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        assert (await consumer.committed([TP1]))[TP1].offset == 0
        broker.prepare_response(list_offsets_response({TP0: 3, TP1: 3}), lambda r: isinstance(r, ListOffsetsRequest))
        assert await consumer.position(TP0) == 3
        assert await consumer.position(TP1) == 3
        assert broker.sent() == ["FindCoordinatorRequest", "OffsetFetchRequest", "OffsetFetchRequest", "ListOffsetsRequest"]
        consumer.unsubscribe()
        assert consumer.assignment() == set()


# --------------------------------------------------------------------------------------------
# enable.auto.commit without a group id
# --------------------------------------------------------------------------------------------


async def test_operations_by_subscribing_consumer_with_default_group_id():
    """Mirrors KafkaConsumerTest#testOperationsBySubscribingConsumerWithDefaultGroupId: enable.auto.commit=true
    needs a group id (ConsumerConfig#maybeOverrideEnableAutoCommit); without one it defaults to false and
    the group operations are refused."""
    network = Network()
    with pytest.raises(InvalidConfigurationException,
                       match="enable.auto.commit cannot be set to true when default group id"):
        KafkaConsumer(network, [NODE], enable_auto_commit=True)
    consumer = KafkaConsumer(network, [NODE])
    assert consumer.enable_auto_commit is False and consumer.coordinator is None
    with pytest.raises(InvalidGroupIdException):
        consumer.subscribe([TOPIC])
    with pytest.raises(InvalidGroupIdException):
        await consumer.committed([TP0])
    with pytest.raises(InvalidGroupIdException):
        consumer.commit_async()
    with pytest.raises(InvalidGroupIdException):
        await consumer.commit_sync()


async def test_operations_by_assigning_consumer_with_default_group_id():
    """Mirrors KafkaConsumerTest#testOperationsByAssigningConsumerWithDefaultGroupId."""
    consumer = KafkaConsumer(Network(), [NODE], enable_auto_commit=False)
    consumer.assign([TP0])
    with pytest.raises(InvalidGroupIdException):
        await consumer.committed([TP0])
    with pytest.raises(InvalidGroupIdException):
        consumer.commit_async()
    with pytest.raises(InvalidGroupIdException):
        await consumer.commit_sync()


async def test_auto_commit_defaults():
    """ConsumerConfig: enable.auto.commit defaults to true and auto.commit.interval.ms to 5000 for a group
    consumer; a negative interval is refused."""
    from kafka_ref.common.errors import ConfigException

    consumer = KafkaConsumer(Network(), [NODE], group_id=GROUP_ID)
    assert consumer.enable_auto_commit is True
    assert (consumer.coordinator.auto_commit_enabled, consumer.coordinator.auto_commit_interval_ms) == (True, 5000)
    assert KafkaConsumer(Network(), [NODE], group_id=GROUP_ID, enable_auto_commit=False).coordinator.auto_commit_enabled is False
    with pytest.raises(ConfigException, match="auto.commit.interval.ms"):
        KafkaConsumer(Network(), [NODE], group_id=GROUP_ID, auto_commit_interval_ms=-1)
    # KafkaConsumer#close(Duration): a negative timeout is refused (IllegalArgumentException).
    with pytest.raises(ValueError, match="The timeout cannot be negative"):
        await consumer.aclose(-1)


# --------------------------------------------------------------------------------------------
# Pattern subscriptions
# --------------------------------------------------------------------------------------------


def joined_topics(join: JoinGroupRequest) -> set[str]:
    """The topics of a JoinGroup's first protocol (prepareRebalance's matcher reads them)."""
    return set(ConsumerProtocol.deserialize_subscription(join.protocols[0].metadata).topics)


@pytest.mark.parametrize("pattern", [None, ""])
async def test_subscription_on_null_or_empty_pattern(pattern):
    """Mirrors KafkaConsumerTest#testSubscriptionOnNullPattern (None) and #testSubscriptionOnEmptyPattern
    (Java's IllegalArgumentException is ValueError)."""
    consumer = KafkaConsumer(Network(), [NODE], group_id=GROUP_ID)
    with pytest.raises(ValueError, match="Topic pattern to subscribe to cannot be " + ("null" if pattern is None else "empty")):
        consumer.subscribe_pattern(None if pattern is None else re.compile(pattern))
    assert consumer.subscriptions.subscription_type is SubscriptionType.NONE


async def test_regex_subscription():
    """Mirrors KafkaConsumerTest#testRegexSubscription: the pattern "test" matches the topic "test" and,
    matched whole, neither "unmatched" nor "test2"."""
    unmatched = TopicPartition("unmatched", 0)
    async with harness(enable_auto_commit=True) as (consumer, broker):
        broker.leaders = {TP0: NODE, unmatched: NODE, T2P0: NODE}
        prepare_rebalance(broker, [TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        consumer.subscribe(re.compile(TOPIC))
        await consumer._update_assignment_metadata_if_needed()
        assert consumer.subscription() == {TOPIC}
        assert consumer.assignment() == {TP0}
        join = next(r for r in broker.received if isinstance(r, JoinGroupRequest))
        assert joined_topics(join) == {TOPIC}


async def test_changing_regex_subscription():
    """Mirrors KafkaConsumerTest#testChangingRegexSubscription: a new pattern replaces the old one; the
    next poll joins with the topics it matches."""
    other = TopicPartition("other", 0)
    async with harness(enable_auto_commit=False) as (consumer, broker):
        broker.leaders = {TP0: NODE, other: NODE}
        prepare_rebalance(broker, [TP0])
        broker.prepare_response(offset_response({TP0: 0}), lambda r: isinstance(r, OffsetFetchRequest))
        consumer.subscribe(re.compile(TOPIC))
        await consumer._update_assignment_metadata_if_needed()
        await consumer.poll(0)
        assert consumer.subscription() == {TOPIC}
        consumer.subscribe(re.compile("other"))
        broker.prepare_response(JoinGroupResponse(error_code=0, generation_id=1, protocol_type="consumer",
                                                  protocol_name="range", member_id=MEMBER_ID, leader="leader"),
                                lambda r: isinstance(r, JoinGroupRequest) and joined_topics(r) == {"other"})
        broker.prepare_response(SyncGroupResponse(error_code=0, protocol_type="consumer", protocol_name="range",
                                                  assignment=ConsumerProtocol.serialize_assignment(Assignment((other,)))))
        await consumer.poll(0)
        assert consumer.subscription() == {"other"}
        assert broker.sent().count("JoinGroupRequest") == 2
