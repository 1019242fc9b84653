"""The consumer's Fetcher, case by case against Kafka 3.8's FetcherTest.

Each test re-enacts one case of clients/src/test/java/org/apache/kafka/clients/consumer/
internals/FetcherTest.java on kafka_ref.clients.fetcher (Fetcher with FetchCollector,
OffsetFetcher#validatePositionsOnMetadataChange) and checks what Kafka's test checks: records
handed out, positions and their epochs, resets, errors raised, paused partitions, the preferred
read replica (KIP-392), metadata updates requested.

Kafka drives the Fetcher through a MockClient; here ``MockClient`` below registers brokers 0-2
on an in-process Network and answers the requests the Fetcher posts, oldest first, with the
responses a test gives (``respond``) or with a disconnection (``disconnect``). Metadata is set
directly, as Kafka's ``client.updateMetadata`` does: topic "test" with four partitions led by
broker 0 in epoch 0, with a fixed topic id. ``send_fetches`` is Kafka's test helper (validate
positions against the metadata's leaders, then Fetcher#sendFetches); ``poll`` is
``consumerClient.poll(time.timer(0))``; ``fetch_records`` is Kafka's ``fetchRecords()`` (one
collectFetch, grouped by partition).

Not ported:
- testInflightFetchOnPendingPartitions, testFetchingPendingPartitions: no pending-revocation
  state in kafka_ref's SubscriptionState.
- testCloseShouldBeIdempotent, testFetcherCloseClosesFetchSessionsInBroker,
  testFetchWithNoTopicId, testFetchWithTopicId, testFetchForgetTopicIdWhenUnassigned,
  testFetchForgetTopicIdWhenReplaced, testFetchTopicIdUpgradeDowngrade,
  testConsumingViaIncrementalFetchRequests, testFetcherSessionEpochUpdate: the consumer sends
  sessionless full fetches (no client-side FetchSessionHandler; see
  tests/test_fetch_session_handler_kafka.py for the handler itself).
- testFetchedRecordsRaisesOnSerializationErrors, testParseCorruptedRecord,
  testInvalidDefaultRecordBatch, testParseInvalidRecordBatch: no deserializers, and batches are
  built valid by kafka_ref's record classes (no byte-level corruption of a response).
- testFetchRequestWhenRecordTooLarge, testFetchRequestInternalError, testCompletedFetchRemoval:
  a truncated (partial) batch cannot be put in a kafka_ref MemoryRecords.
- testQuotaMetrics, testFetcherMetrics, testFetcherLeadMetric, testReadCommittedLagMetric,
  testFetchResponseMetrics*, testFetcherMetricsTemplates: no client metrics.
- testFetchDuringEagerRebalance and testFetchDuringCooperativeRebalance are ported with user
  assignment standing in for SubscriptionState#assignFromSubscribed (group assignment lives in
  the ConsumerCoordinator); what they check, positions kept or cleared, is the same.
- testSkippingAbortedTransactions, testReturnCommittedTransactions,
  testReadCommittedWithCommittedAndAbortedTransactions, testMultipleAbortMarkers,
  testReadCommittedAbortMarkerWithNoData, testReadCommittedWithCompactedTopic,
  testReturnAbortedTransactionsInUncommittedMode,
  testConsumerPositionUpdatedWhenSkippingAbortedTransactions, testEmptyControlBatch: no
  aborted-transaction filtering for read_committed (consumer.py's module docstring).
- testFetcherConcurrency: no background network thread.
- testTruncationDetected: the OffsetFetcher's validation round trip is covered by
  tests/test_consumer_validation.py against brokers.
- testFetchCompletedBeforeHandlerAdded: MockClient wakeup hooks have no counterpart.
"""

from __future__ import annotations

from collections import deque

import anyio
import pytest

from kafka_ref.clients import Consumer
from kafka_ref.clients.client_metadata import LeaderAndEpoch, MetadataSnapshot, Node
from kafka_ref.clients.fetcher import ConsumerRecord
from kafka_ref.clients.subscription_state import FetchPosition
from kafka_ref.common.errors import Errors, KafkaException, OffsetOutOfRangeException, TopicAuthorizationException
from kafka_ref.common.records.builder import MemoryRecordsBuilder, write_header
from kafka_ref.common.records.compression import CompressionType
from kafka_ref.common.records.end_transaction_marker import (
    ControlRecordType,
    EndTransactionMarker,
    end_transaction_marker_batch,
)
from kafka_ref.common.records.memory_records import MemoryRecords
from kafka_ref.common.records.record import SimpleRecord
from kafka_ref.common.records.record_batch import RecordBatch, TimestampType
from kafka_ref.common.requests.fetch import FetchRequest, FetchResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData
from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import Envelope, Network

pytestmark = pytest.mark.anyio

TOPIC = "test"
TOPIC_ID = Uuid(0x7E57, 0x1D)
TP0, TP1, TP2, TP3 = (TopicPartition(TOPIC, p) for p in range(4))
VALID_LEADER_EPOCH = 0
METADATA_EXPIRE_MS = 5 * 60 * 1000


def tidp(tp: TopicPartition) -> TopicIdPartition:
    return TopicIdPartition(TOPIC_ID, tp)


def build_records(base_offset: int, count: int, first_key: int) -> MemoryRecords:
    """Kafka's buildRecords: ``count`` records from ``base_offset``, keys and values "key-N"/"value-N"."""
    return MemoryRecords.with_records(
        [SimpleRecord(b"key-%d" % i, b"value-%d" % i, (), 0) for i in range(first_key, first_key + count)],
        base_offset=base_offset)


RECORDS = build_records(1, 3, 1)        # offsets 1-3
NEXT_RECORDS = build_records(4, 2, 4)   # offsets 4-5
MORE_RECORDS = build_records(6, 3, 6)   # offsets 6-8
EMPTY_RECORDS = MemoryRecords.EMPTY


def partition_data(tp: TopicPartition, records: MemoryRecords = MemoryRecords.EMPTY, error: Errors = Errors.NONE,
                   hw: int = 100, last_stable_offset: int = -1, log_start_offset: int = 0,
                   preferred_read_replica: int = -1) -> PartitionData:
    return PartitionData(partition_index=tp.partition, error_code=error.code, high_watermark=hw,
                         last_stable_offset=last_stable_offset, log_start_offset=log_start_offset,
                         preferred_read_replica=preferred_read_replica, records=records)


def full_fetch_response(tp: TopicPartition, records: MemoryRecords, error: Errors = Errors.NONE, hw: int = 100,
                        preferred_read_replica: int = -1) -> FetchResponse:
    """Kafka's fullFetchResponse: one partition, no last stable offset, log start 0."""
    return FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID,
                            {tidp(tp): partition_data(tp, records, error, hw,
                                                      preferred_read_replica=preferred_read_replica)})


def metadata_response(num_nodes: int = 3, partitions: int = 4, leader_epoch: int = VALID_LEADER_EPOCH,
                      spread: bool = False) -> MetadataResponse:
    """Kafka's RequestTestUtils#metadataUpdateWithIds: ``num_nodes`` brokers, the topic led by broker 0
    (with ``spread``, partition p by broker p % ``num_nodes``, as Kafka's helper itself does)."""
    nodes = tuple(range(num_nodes))
    return MetadataResponse(
        brokers=tuple(MetadataResponseBroker(node_id=n, host="localhost", port=1969 + n) for n in nodes),
        cluster_id="dummy", controller_id=0,
        topics=(MetadataResponseTopic(name=TOPIC, topic_id=TOPIC_ID, partitions=tuple(
            MetadataResponsePartition(partition_index=p, leader_id=p % num_nodes if spread else 0, leader_epoch=leader_epoch,
                                      replica_nodes=nodes, isr_nodes=nodes) for p in range(partitions))),))


class MockClient:
    """Kafka's MockClient for one consumer: brokers 0-2 on an in-process network whose requests
    the test answers in order."""

    def __init__(self, **consumer_config) -> None:
        self.network = Network()
        self.inboxes = {n: self.network.register(n) for n in range(3)}
        consumer_config.setdefault("fetch_max_wait_ms", 0)
        self.consumer = Consumer(self.network, [0], metadata_max_age_ms=METADATA_EXPIRE_MS, **consumer_config)
        self.fetcher = self.consumer.fetcher
        self.subscriptions = self.consumer.subscriptions
        self.metadata = self.consumer.metadata
        self.time = self.consumer.time
        self.in_flight: deque[Envelope] = deque()

    def update_metadata(self, response: MetadataResponse) -> None:
        """Kafka's client.updateMetadata: the consumer's view is replaced at once. Stamped one refresh
        backoff ago (Kafka's helpers stamp it at time 0 of a clock that has moved on), so a
        requested update is due at once."""
        self.metadata.topics = {TOPIC}
        self.metadata.update(self.metadata.request_version, response,
                             self.time.milliseconds() - self.metadata.refresh_backoff_ms)

    def assign_from_user(self, partitions: set[TopicPartition], num_nodes: int = 3) -> None:
        """Kafka's assignFromUser helper: assign, then metadata with epoch 0 for every partition."""
        self.subscriptions.assign_from_user(sorted(partitions))
        self.update_metadata(metadata_response(num_nodes))

    def send_fetches(self) -> int:
        """Kafka's sendFetches helper: positions take the current leaders, then Fetcher#sendFetches."""
        self.consumer.offset_fetcher.validate_positions_on_metadata_change()
        return self.fetcher.send_fetches()

    def requests(self) -> list[Envelope]:
        """Every request the brokers have received and not answered, oldest first."""
        for inbox in self.inboxes.values():
            while True:
                try:
                    self.in_flight.append(inbox.receive_nowait())
                except anyio.WouldBlock:
                    break
        return sorted(self.in_flight, key=lambda e: e.correlation_id)

    def _oldest(self) -> Envelope:
        envelope = self.requests()[0]
        self.in_flight.remove(envelope)
        return envelope

    def respond(self, response: FetchResponse) -> FetchRequest:
        """Kafka's prepareResponse then poll: answer the oldest request; returns it."""
        envelope = self._oldest()
        envelope.respond(response)
        return envelope.request

    def disconnect(self) -> int:
        """Kafka's prepareResponse(..., disconnected=true): the oldest request's connection drops."""
        envelope = self._oldest()
        self.network.unregister(envelope.dst)
        self.inboxes[envelope.dst] = self.network.register(envelope.dst)
        return envelope.dst

    async def poll(self) -> None:
        """Kafka's consumerClient.poll(time.timer(0)): handle whatever answers have arrived."""
        await self.fetcher.wait_for_fetches(0)

    def fetch_records(self) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Kafka's fetchRecords(): one collectFetch, records by partition."""
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        for record in self.fetcher.collect_fetch(self.consumer.max_poll_records):
            out.setdefault(TopicPartition(record.topic, record.partition), []).append(record)
        return out

    def assert_empty_fetch(self) -> None:
        """Kafka's assertEmptyFetch: no records, and no position advanced (a reset may drop one)."""
        before = {tp: self.subscriptions.position_or_null(tp) for tp in self.subscriptions.assigned_partitions()}
        assert self.fetch_records() == {}
        for tp, position in before.items():
            after = self.subscriptions.position_or_null(tp)
            assert after is None or after == position


def offsets(records: list[ConsumerRecord]) -> list[int]:
    return [r.offset for r in records]


async def fetched_once(client: MockClient, tp: TopicPartition, response: FetchResponse) -> None:
    """One fetch of ``tp`` answered with ``response``."""
    assert client.send_fetches() == 1
    client.respond(response)
    await client.poll()


async def test_fetch_normal() -> None:
    """Mirrors FetcherTest#testFetchNormal."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    assert client.fetcher.has_completed_fetches() is False
    client.respond(full_fetch_response(TP0, RECORDS))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    records = client.fetch_records()
    assert offsets(records[TP0]) == [1, 2, 3]
    assert client.subscriptions.position(TP0).offset == 4


async def test_missing_leader_epoch_in_records() -> None:
    """Mirrors FetcherTest#testMissingLeaderEpochInRecords (a batch without a partition leader epoch)."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    records = MemoryRecords.with_records([SimpleRecord(b"key", b"1"), SimpleRecord(b"key", b"2")],
                                         partition_leader_epoch=-1)
    await fetched_once(client, TP0, full_fetch_response(TP0, records))
    fetched = client.fetch_records()[TP0]
    assert len(fetched) == 2
    assert [r.leader_epoch for r in fetched] == [None, None]


async def test_leader_epoch_in_consumer_record() -> None:
    """Mirrors FetcherTest#testLeaderEpochInConsumerRecord: each record carries its batch's epoch."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    batches = [RecordBatch.build([SimpleRecord(b"key", str(epoch).encode())] * count, base_offset=base,
                                 partition_leader_epoch=epoch)
               for base, count, epoch in ((0, 2, 1), (2, 1, 8), (3, 3, 13))]
    await fetched_once(client, TP0, full_fetch_response(TP0, MemoryRecords.of(batches)))
    fetched = client.fetch_records()[TP0]
    assert len(fetched) == 6
    assert [r.leader_epoch for r in fetched] == [int(r.value) for r in fetched] == [1, 1, 8, 13, 13, 13]


async def test_clear_buffered_data_for_topic_partitions() -> None:
    """Mirrors FetcherTest#testClearBufferedDataForTopicPartitions."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    assert client.fetcher.has_completed_fetches() is True
    client.fetcher.clear_buffered_data_for_unassigned_partitions({TP1})
    assert client.fetcher.has_completed_fetches() is False


async def test_fetcher_ignores_control_records() -> None:
    """Mirrors FetcherTest#testFetcherIgnoresControlRecords: an abort marker after one record is skipped."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    data = RecordBatch.build([SimpleRecord(b"key", None)], base_offset=0, producer_id=1, producer_epoch=0,
                             base_sequence=0)
    marker = end_transaction_marker_batch(1, client.time.milliseconds(), 0, 1, 0,
                                          EndTransactionMarker(ControlRecordType.ABORT, 0))
    await fetched_once(client, TP0, full_fetch_response(TP0, MemoryRecords.of([data, marker])))
    fetched = client.fetch_records()[TP0]
    assert len(fetched) == 1
    assert fetched[0].key == b"key"
    assert client.subscriptions.position(TP0).offset == 2


async def test_fetch_error() -> None:
    """Mirrors FetcherTest#testFetchError: a partition error hands out nothing."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, Errors.NOT_LEADER_OR_FOLLOWER))
    assert client.fetcher.has_completed_fetches() is True
    assert TP0 not in client.fetch_records()


async def test_headers() -> None:
    """Mirrors FetcherTest#testHeaders."""
    client = MockClient()
    builder = MemoryRecordsBuilder(base_offset=1)
    builder.append(SimpleRecord(b"key", b"value-1", (), 0))
    builder.append(SimpleRecord(b"key", b"value-2", (("headerKey", b"headerValue"),), 0))
    builder.append(SimpleRecord(b"key", b"value-3", (("headerKey", b"headerValue"), ("headerKey", b"headerValue2")), 0))
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 1)
    assert client.send_fetches() == 1
    request = client.respond(full_fetch_response(TP0, builder.build()))
    assert [p.fetch_offset for t in request.topics for p in t.partitions] == [1]
    await client.poll()
    fetched = client.fetch_records()[TP0]
    assert len(fetched) == 3
    last_header = [dict(r.headers).get("headerKey") for r in fetched]  # the last value per key wins
    assert last_header == [None, b"headerValue", b"headerValue2"]


async def test_fetch_max_poll_records() -> None:
    """Mirrors FetcherTest#testFetchMaxPollRecords."""
    client = MockClient(max_poll_records=2)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 1)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    fetched = client.fetch_records()[TP0]
    assert offsets(fetched) == [1, 2]
    assert client.subscriptions.position(TP0).offset == 3
    # Still one record buffered: no new fetch.
    assert client.send_fetches() == 0
    await client.poll()
    fetched = client.fetch_records()[TP0]
    assert offsets(fetched) == [3]
    assert client.subscriptions.position(TP0).offset == 4
    # Now the next fetch, from offset 4.
    assert client.send_fetches() == 1
    request = client.respond(full_fetch_response(TP0, NEXT_RECORDS))
    assert [p.fetch_offset for t in request.topics for p in t.partitions] == [4]
    await client.poll()
    fetched = client.fetch_records()[TP0]
    assert offsets(fetched) == [4, 5]
    assert client.subscriptions.position(TP0).offset == 6


async def test_fetch_max_poll_records_unaligned() -> None:
    """Mirrors FetcherTest#testFetchMaxPollRecordsUnaligned (KAFKA-15836): max.poll.records holds
    across partitions whose records do not line up with it."""
    client = MockClient(max_poll_records=2)
    client.assign_from_user({TP0, TP1})
    client.subscriptions.seek(TP0, 1)
    client.subscriptions.seek(TP1, 6)
    assert client.send_fetches() == 1
    client.respond(FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID, {
        tidp(TP0): partition_data(TP0, RECORDS), tidp(TP1): partition_data(TP1, MORE_RECORDS)}))
    await client.poll()
    polls = [client.fetch_records()]
    assert client.send_fetches() == 0
    await client.poll()
    polls.append(client.fetch_records())
    # tp0 is used up: it is fetched again (an empty answer); tp1 still has records buffered.
    assert client.send_fetches() == 1
    client.respond(full_fetch_response(TP0, EMPTY_RECORDS))
    await client.poll()
    polls.append(client.fetch_records())
    assert [sum(len(rs) for rs in poll.values()) for poll in polls] == [2, 2, 2]
    assert [[(r.partition, r.offset) for rs in poll.values() for r in rs] for poll in polls] == [
        [(0, 1), (0, 2)], [(0, 3), (1, 6)], [(1, 7), (1, 8)]]


async def test_fetch_after_partition_with_fetched_records_is_unassigned() -> None:
    """Mirrors FetcherTest#testFetchAfterPartitionWithFetchedRecordsIsUnassigned (KAFKA-5097)."""
    client = MockClient(max_poll_records=2)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 1)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    fetched = client.fetch_records()[TP0]
    assert offsets(fetched) == [1, 2]
    assert client.subscriptions.position(TP0).offset == 3
    # tp0 (one record still buffered) is replaced by tp1.
    client.assign_from_user({TP1})
    client.fetcher.clear_buffered_data_for_unassigned_partitions({TP1})
    client.subscriptions.seek(TP1, 4)
    assert client.send_fetches() == 1
    client.respond(full_fetch_response(TP1, NEXT_RECORDS))
    await client.poll()
    fetched = client.fetch_records()
    assert TP0 not in fetched
    assert offsets(fetched[TP1]) == [4, 5]
    assert client.subscriptions.position(TP1).offset == 6


async def test_fetch_non_continuous_records() -> None:
    """Mirrors FetcherTest#testFetchNonContinuousRecords: gaps of a compacted log move the position past the last record."""
    client = MockClient()
    builder = MemoryRecordsBuilder(base_offset=0)
    for offset, value in ((15, b"value-1"), (20, b"value-2"), (30, b"value-3")):
        builder.append_with_offset(offset, 0, b"key", value)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, builder.build()))
    fetched = client.fetch_records()[TP0]
    assert offsets(fetched) == [15, 20, 30]
    assert client.subscriptions.position(TP0).offset == 31


async def test_unauthorized_topic() -> None:
    """Mirrors FetcherTest#testUnauthorizedTopic."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, Errors.TOPIC_AUTHORIZATION_FAILED))
    with pytest.raises(TopicAuthorizationException, match=r"Not authorized to access topics: \[test\]"):
        client.fetch_records()


async def test_in_flight_fetch_on_paused_partition() -> None:
    """Mirrors FetcherTest#testInFlightFetchOnPausedPartition."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.subscriptions.pause(TP0)
    client.respond(full_fetch_response(TP0, RECORDS))
    await client.poll()
    assert TP0 not in client.fetch_records()


async def test_fetch_on_paused_partition() -> None:
    """Mirrors FetcherTest#testFetchOnPausedPartition: nothing is sent for a paused partition."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    client.subscriptions.pause(TP0)
    assert client.send_fetches() == 0
    assert client.requests() == []


async def test_fetch_on_completed_fetches_for_paused_and_resumed_partitions() -> None:
    """Mirrors FetcherTest#testFetchOnCompletedFetchesForPausedAndResumedPartitions."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.subscriptions.pause(TP0)
    client.respond(full_fetch_response(TP0, RECORDS))
    await client.poll()
    client.assert_empty_fetch()
    assert client.fetcher.has_completed_fetches() is True
    assert client.fetcher.has_available_fetches() is False
    assert client.send_fetches() == 0
    client.subscriptions.resume(TP0)
    assert client.fetcher.has_available_fetches() is True
    await client.poll()
    fetched = client.fetch_records()
    assert list(fetched) == [TP0]
    assert len(fetched[TP0]) == 3
    await client.poll()
    client.assert_empty_fetch()
    assert client.fetcher.has_completed_fetches() is False


async def _two_buffered_fetches(client: MockClient) -> None:
    """tp0 answered (offsets 1-3), then tp1 sought and its fetch answered (4-5), as two requests."""
    client.assign_from_user({TP0, TP1})
    client.subscriptions.seek_unvalidated(TP0, FetchPosition(1, None, client.metadata.current_leader(TP0)))
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    client.subscriptions.seek_unvalidated(TP1, FetchPosition(1, None, client.metadata.current_leader(TP1)))
    assert client.send_fetches() == 1
    client.respond(full_fetch_response(TP1, NEXT_RECORDS))


async def test_fetch_on_completed_fetches_for_some_paused_partitions() -> None:
    """Mirrors FetcherTest#testFetchOnCompletedFetchesForSomePausedPartitions."""
    client = MockClient()
    await _two_buffered_fetches(client)
    client.subscriptions.pause(TP0)
    await client.poll()
    fetched = client.fetch_records()
    assert list(fetched) == [TP1]
    assert client.fetcher.has_completed_fetches() is True
    client.assert_empty_fetch()
    assert client.fetcher.has_completed_fetches() is True


async def test_fetch_on_completed_fetches_for_all_paused_partitions() -> None:
    """Mirrors FetcherTest#testFetchOnCompletedFetchesForAllPausedPartitions."""
    client = MockClient()
    await _two_buffered_fetches(client)
    client.subscriptions.pause(TP0)
    client.subscriptions.pause(TP1)
    await client.poll()
    client.assert_empty_fetch()
    assert client.fetcher.has_completed_fetches() is True
    assert client.fetcher.has_available_fetches() is False


async def test_partial_fetch_with_paused_partitions() -> None:
    """Mirrors FetcherTest#testPartialFetchWithPausedPartitions: a half-used fetch waits out a pause."""
    client = MockClient(max_poll_records=2)
    client.assign_from_user({TP0, TP1})
    client.subscriptions.seek(TP0, 1)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    assert len(client.fetch_records()[TP0]) == 2
    # (Kafka keeps the half-used fetch as "next in line", outside the queue; here it stays queued.)
    client.subscriptions.pause(TP0)
    await client.poll()
    client.assert_empty_fetch()
    assert client.fetcher.has_completed_fetches() is True
    assert client.fetcher.has_available_fetches() is False
    client.subscriptions.resume(TP0)
    await client.poll()
    assert offsets(client.fetch_records()[TP0]) == [3]
    assert client.fetcher.has_completed_fetches() is False


async def test_fetch_discarded_after_paused_partition_resumed_and_sought_to_new_offset() -> None:
    """Mirrors FetcherTest#testFetchDiscardedAfterPausedPartitionResumedAndSoughtToNewOffset."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.subscriptions.pause(TP0)
    client.respond(full_fetch_response(TP0, RECORDS))
    client.subscriptions.seek(TP0, 3)
    client.subscriptions.resume(TP0)
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    assert client.fetch_records() == {}
    assert client.subscriptions.position(TP0).offset == 3
    assert client.fetcher.has_completed_fetches() is False


@pytest.mark.parametrize("error,hw,top_level,metadata_update", [
    (Errors.NOT_LEADER_OR_FOLLOWER, 100, False, True),
    (Errors.UNKNOWN_TOPIC_OR_PARTITION, 100, False, True),
    (Errors.UNKNOWN_TOPIC_ID, -1, False, True),
    (Errors.FETCH_SESSION_TOPIC_ID_ERROR, -1, True, True),
    (Errors.INCONSISTENT_TOPIC_ID, -1, False, True),
    (Errors.FENCED_LEADER_EPOCH, 100, False, True),
    (Errors.UNKNOWN_LEADER_EPOCH, 100, False, False),
])
async def test_handle_fetch_response_error(error: Errors, hw: int, top_level: bool, metadata_update: bool) -> None:
    """Mirrors FetcherTest#testHandleFetchResponseError (each case of handleFetchResponseErrorSupplier)."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    if top_level:
        response = FetchResponse.of(error.code, 0, FetchRequest.INVALID_SESSION_ID, {})
    else:
        response = full_fetch_response(TP0, RECORDS, error, hw)
    client.respond(response)
    await client.poll()
    client.assert_empty_fetch()
    time_to_next_update = client.metadata.time_to_next_update(client.time.milliseconds())
    if metadata_update:
        assert time_to_next_update == 0
    else:
        assert time_to_next_update == METADATA_EXPIRE_MS - client.metadata.refresh_backoff_ms


async def test_epoch_set_in_fetch_request() -> None:
    """Mirrors FetcherTest#testEpochSetInFetchRequest: the metadata's leader epoch goes out as current_leader_epoch."""
    client = MockClient()
    client.subscriptions.assign_from_user([TP0])
    client.update_metadata(metadata_response(num_nodes=1, leader_epoch=99))
    client.subscriptions.seek(TP0, 10)
    assert client.send_fetches() == 1
    request = client.respond(full_fetch_response(TP0, RECORDS))
    assert [(p.fetch_offset, p.current_leader_epoch) for t in request.topics for p in t.partitions] == [(10, 99)]
    await client.poll()
    assert client.fetcher.pending == {}


async def test_fetch_offset_out_of_range() -> None:
    """Mirrors FetcherTest#testFetchOffsetOutOfRange: the default policy resets, and the position is gone."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, Errors.OFFSET_OUT_OF_RANGE))
    client.assert_empty_fetch()
    assert client.subscriptions.is_offset_reset_needed(TP0) is True
    assert client.subscriptions.has_valid_position(TP0) is False
    assert client.subscriptions.position(TP0) is None


async def test_stale_out_of_range_error() -> None:
    """Mirrors FetcherTest#testStaleOutOfRangeError: out of range for an offset left by a seek is ignored."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.respond(full_fetch_response(TP0, RECORDS, Errors.OFFSET_OUT_OF_RANGE))
    client.subscriptions.seek(TP0, 1)
    await client.poll()
    client.assert_empty_fetch()
    assert client.subscriptions.is_offset_reset_needed(TP0) is False
    assert client.subscriptions.position(TP0).offset == 1


async def test_fetched_records_after_seek() -> None:
    """Mirrors FetcherTest#testFetchedRecordsAfterSeek: a seek before collection makes the error stale."""
    client = MockClient(auto_offset_reset="none", max_poll_records=2)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, Errors.OFFSET_OUT_OF_RANGE))
    assert client.subscriptions.is_offset_reset_needed(TP0) is False
    client.subscriptions.seek(TP0, 2)
    client.assert_empty_fetch()


async def test_fetch_offset_out_of_range_exception() -> None:
    """Mirrors FetcherTest#testFetchOffsetOutOfRangeException: with no reset policy it raises, on every collection."""
    client = MockClient(auto_offset_reset="none", max_poll_records=2)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, Errors.OFFSET_OUT_OF_RANGE))
    assert client.subscriptions.is_offset_reset_needed(TP0) is False
    for _ in range(2):
        with pytest.raises(OffsetOutOfRangeException) as raised:
            client.fetch_records()
        assert raised.value.offset_out_of_range_partitions == {TP0: 0}


async def test_fetch_position_after_exception() -> None:
    """Mirrors FetcherTest#testFetchPositionAfterException: records collected before the error are
    returned; the error comes on the next collection; positions stay."""
    client = MockClient(auto_offset_reset="none")
    client.assign_from_user({TP0, TP1})
    client.subscriptions.seek(TP0, 1)
    client.subscriptions.seek(TP1, 1)
    assert client.send_fetches() == 1
    client.respond(FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID, {
        tidp(TP1): partition_data(TP1, RECORDS, log_start_offset=-1),
        tidp(TP0): partition_data(TP0, error=Errors.OFFSET_OUT_OF_RANGE, log_start_offset=-1)}))
    await client.poll()
    all_fetched = [r for rs in client.fetch_records().values() for r in rs]
    assert client.subscriptions.position(TP0).offset == 1
    assert client.subscriptions.position(TP1).offset == 4
    assert len(all_fetched) == 3
    with pytest.raises(OffsetOutOfRangeException) as raised:
        client.fetch_records()
    assert raised.value.offset_out_of_range_partitions == {TP0: 1}
    assert client.subscriptions.position(TP0).offset == 1
    assert client.subscriptions.position(TP1).offset == 4


async def test_seek_before_exception() -> None:
    """Mirrors FetcherTest#testSeekBeforeException: a seek makes a buffered out-of-range answer stale."""
    client = MockClient(auto_offset_reset="none", max_poll_records=2)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 1)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS))
    assert len(client.fetch_records()[TP0]) == 2
    client.subscriptions.assign_from_user([TP0, TP1])
    client.subscriptions.seek_unvalidated(TP1, FetchPosition(1, None, client.metadata.current_leader(TP1)))
    assert client.send_fetches() == 1
    client.respond(FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID, {
        tidp(TP1): partition_data(TP1, error=Errors.OFFSET_OUT_OF_RANGE, log_start_offset=-1)}))
    await client.poll()
    assert len(client.fetch_records()[TP0]) == 1
    client.subscriptions.seek(TP1, 10)
    client.assert_empty_fetch()


async def test_fetch_disconnected() -> None:
    """Mirrors FetcherTest#testFetchDisconnected: a lost connection leaves the subscription as it was."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.disconnect()
    await client.poll()
    client.assert_empty_fetch()
    assert client.subscriptions.is_offset_reset_needed(TP0) is False
    assert client.subscriptions.is_fetchable(TP0) is True
    assert client.subscriptions.position(TP0).offset == 0


async def test_update_position_with_last_record_missing_from_batch() -> None:
    """Mirrors FetcherTest#testUpdatePositionWithLastRecordMissingFromBatch: compaction removed the
    batch's last record; the position still moves past the batch."""
    client = MockClient()
    full = RecordBatch.build([SimpleRecord(b"0", b"v"), SimpleRecord(b"1", b"v"), SimpleRecord(b"2", b"v"),
                              SimpleRecord(None, b"value")])
    builder = MemoryRecordsBuilder(base_offset=0)
    for record in list(full)[:3]:
        builder.append_with_offset(record.offset, record.timestamp, record.key, record.value)
    kept = builder.build_batch()
    # As Kafka's MemoryRecords#filterTo writes it: the kept records under the original batch's last offset.
    buffer = bytearray(kept.buffer)
    write_header(buffer, base_offset=0, last_offset_delta=full.last_offset_delta, compression=CompressionType.NONE,
                 timestamp_type=kept.timestamp_type, first_timestamp=kept.base_timestamp,
                 max_timestamp=kept.max_timestamp, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                 is_transactional=False, is_control_batch=False,
                 partition_leader_epoch=kept.partition_leader_epoch, num_records=3)
    compacted = RecordBatch(bytes(buffer))
    assert (compacted.base_offset, compacted.last_offset) == (0, 3)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, MemoryRecords.of([compacted])))
    assert client.fetcher.has_completed_fetches() is True
    fetched = client.fetch_records()[TP0]
    assert [r.key for r in fetched] == [b"0", b"1", b"2"]
    assert client.subscriptions.position(TP0).offset == 4


async def test_subscription_position_updated_with_epoch() -> None:
    """Mirrors FetcherTest#testSubscriptionPositionUpdatedWithEpoch: the position takes the last batch's epoch."""
    client = MockClient()
    records = MemoryRecords.with_records([SimpleRecord(b"key", b"value-%d" % i, (), 0) for i in (1, 2, 3)],
                                         partition_leader_epoch=1)
    client.assign_from_user({TP0})
    client.update_metadata(metadata_response(num_nodes=1, leader_epoch=1))
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    assert client.fetcher.has_completed_fetches() is False
    client.respond(full_fetch_response(TP0, records))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    assert TP0 in client.fetch_records()
    assert client.subscriptions.position(TP0).offset == 3
    assert client.subscriptions.position(TP0).offset_epoch == 1


async def _reading_from_replica_1(client: MockClient) -> None:
    """tp0 fetched once from leader 0, which names replica 1 (two brokers in the metadata)."""
    client.subscriptions.assign_from_user([TP0])
    client.update_metadata(metadata_response(num_nodes=2))
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, RECORDS, preferred_read_replica=1))
    assert client.fetcher.has_completed_fetches() is True
    client.fetch_records()
    now = client.time.milliseconds()
    assert client.fetcher.select_read_replica(TP0, 0, now) == 1


async def test_preferred_read_replica() -> None:
    """Mirrors FetcherTest#testPreferredReadReplica: the leader's pick is used; a pick that is not
    a live broker is dropped (kafka_ref then waits a retry backoff before asking the leader, see
    Fetcher#select_read_replica, where Kafka returns the leader at once)."""
    client = MockClient(isolation_level=1)
    client.subscriptions.assign_from_user([TP0])
    client.update_metadata(metadata_response(num_nodes=2))
    client.subscriptions.seek(TP0, 0)
    assert client.fetcher.select_read_replica(TP0, 0, client.time.milliseconds()) == 0
    await _reading_from_replica_1(client)
    # The next fetch goes to replica 1, which names broker 2 (not in the metadata).
    assert client.send_fetches() == 1
    assert client.requests()[0].dst == 1
    client.respond(full_fetch_response(TP0, RECORDS, preferred_read_replica=2))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    client.fetch_records()
    now = client.time.milliseconds()
    assert client.fetcher.select_read_replica(TP0, 0, now) is None
    assert client.subscriptions.preferred_read_replica(TP0, now) is None
    assert client.fetcher.select_read_replica(TP0, 0, now) == 0


async def test_fetch_disconnected_should_clear_preferred_read_replica() -> None:
    """Mirrors FetcherTest#testFetchDisconnectedShouldClearPreferredReadReplica."""
    client = MockClient(isolation_level=1)
    await _reading_from_replica_1(client)
    assert client.send_fetches() == 1
    assert client.fetcher.has_completed_fetches() is False
    assert client.disconnect() == 1
    await client.poll()
    assert client.fetcher.has_completed_fetches() is False
    client.fetch_records()
    assert client.fetcher.select_read_replica(TP0, 0, client.time.milliseconds()) == 0


async def test_fetch_disconnected_should_not_clear_preferred_read_replica_if_unassigned() -> None:
    """Mirrors FetcherTest#testFetchDisconnectedShouldNotClearPreferredReadReplicaIfUnassigned:
    the partition left the assignment before the failure; nothing is read from it any more."""
    client = MockClient(isolation_level=1)
    await _reading_from_replica_1(client)
    assert client.send_fetches() == 1
    client.subscriptions.assign_from_user([])
    assert client.disconnect() == 1
    await client.poll()
    assert client.fetcher.has_completed_fetches() is False
    client.fetch_records()
    assert client.fetcher.select_read_replica(TP0, 0, client.time.milliseconds()) == 0


async def test_fetch_error_should_clear_preferred_read_replica() -> None:
    """Mirrors FetcherTest#testFetchErrorShouldClearPreferredReadReplica."""
    client = MockClient(isolation_level=1)
    await _reading_from_replica_1(client)
    assert client.send_fetches() == 1
    assert client.fetcher.has_completed_fetches() is False
    client.respond(full_fetch_response(TP0, MemoryRecords.EMPTY, Errors.NOT_LEADER_OR_FOLLOWER, hw=-1,
                                       preferred_read_replica=1))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    client.fetch_records()
    assert client.fetcher.select_read_replica(TP0, 0, client.time.milliseconds()) == 0


async def test_preferred_read_replica_offset_error() -> None:
    """Mirrors FetcherTest#testPreferredReadReplicaOffsetError: out of range on the replica sends the
    consumer back to the leader, without a reset."""
    client = MockClient(isolation_level=1)
    await _reading_from_replica_1(client)
    assert client.send_fetches() == 1
    client.respond(full_fetch_response(TP0, RECORDS, Errors.OFFSET_OUT_OF_RANGE))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    client.fetch_records()
    assert client.fetcher.select_read_replica(TP0, 0, client.time.milliseconds()) == 0
    assert client.subscriptions.is_offset_reset_needed(TP0) is False


async def test_corrupt_message_error() -> None:
    """Mirrors FetcherTest#testCorruptMessageError."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, build_records(1, 1, 1), Errors.CORRUPT_MESSAGE))
    assert client.fetcher.has_completed_fetches() is True
    with pytest.raises(KafkaException, match="Encountered corrupt message when fetching offset 0 for topic-partition test-0"):
        client.fetch_records()


async def test_fetch_skips_blacked_out_nodes() -> None:
    """Mirrors FetcherTest#testFetchSkipsBlackedOutNodes: no fetch to a leader in reconnect backoff.

    (Kafka's MockClient#backoff stands for a refused connection; here broker 0 refuses one.)
    """
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    network_client = client.consumer.client
    client.network.unregister(0)
    assert network_client.ready(0) is False
    client.inboxes[0] = client.network.register(0)
    assert client.send_fetches() == 0
    await client.time.sleep(network_client.connection_delay(0, client.time.milliseconds()))
    assert client.send_fetches() == 1
    assert [e.dst for e in client.requests()] == [0]


async def test_fetch_during_eager_rebalance() -> None:
    """Mirrors FetcherTest#testFetchDuringEagerRebalance: the partition is revoked and reassigned
    while its fetch is in flight; the position is gone, so the answer is ignored."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.subscriptions.assign_from_user([])
    client.subscriptions.assign_from_user([TP0])
    client.respond(full_fetch_response(TP0, RECORDS))
    await client.poll()
    assert client.fetch_records() == {}


async def test_fetch_during_cooperative_rebalance() -> None:
    """Mirrors FetcherTest#testFetchDuringCooperativeRebalance: a partition kept through the
    rebalance keeps its position, so the answer in flight is used."""
    client = MockClient()
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    assert client.send_fetches() == 1
    client.subscriptions.assign_from_user([TP0])
    client.respond(full_fetch_response(TP0, RECORDS))
    await client.poll()
    fetched = client.fetch_records()
    assert list(fetched) == [TP0]
    assert len(fetched[TP0]) == 3


async def test_update_position_on_empty_batch() -> None:
    """Mirrors FetcherTest#testUpdatePositionOnEmptyBatch: a batch emptied by compaction (37-54,
    no records) moves the position past it without returning records."""
    client = MockClient()
    buffer = bytearray(RecordBatch.build([]).buffer)
    write_header(buffer, base_offset=37, last_offset_delta=54 - 37, compression=CompressionType.NONE,
                 timestamp_type=TimestampType.CREATE_TIME, first_timestamp=client.time.milliseconds(),
                 max_timestamp=client.time.milliseconds(), producer_id=1, producer_epoch=0, base_sequence=1,
                 is_transactional=False, is_control_batch=False, partition_leader_epoch=7, num_records=0)
    empty_batch = RecordBatch(bytes(buffer))
    assert (empty_batch.base_offset, empty_batch.last_offset, empty_batch.record_count) == (37, 54, 0)
    client.assign_from_user({TP0})
    client.subscriptions.seek(TP0, 0)
    await fetched_once(client, TP0, full_fetch_response(TP0, MemoryRecords.of([empty_batch])))
    assert client.fetcher.has_completed_fetches() is True
    assert client.fetch_records() == {}
    assert client.subscriptions.position(TP0).offset == 55


# --------------------------------------------------------------------------------------------
# Leader changes named by fetch responses (KIP-951)
# --------------------------------------------------------------------------------------------


async def _two_partitions_reading_from_node_0() -> tuple[MockClient, MetadataSnapshot]:
    """The common start of the KIP-951 tests: tp0 led by node 0 and tp1 by node 1 (epoch 0), both
    fetched once and told to read from node 0; the next fetch of both is in flight to node 0.
    Returns the client and the metadata view before the leadership error."""
    client = MockClient(auto_offset_reset="earliest")
    client.subscriptions.assign_from_user([TP0, TP1])
    client.update_metadata(metadata_response(num_nodes=2, spread=True))
    starting = client.metadata.fetch()
    assert (starting.leader_for(TP0), starting.leader_for(TP1)) == (0, 1)
    client.subscriptions.seek(TP0, 0)
    client.subscriptions.seek(TP1, 0)
    # 1. One fetch per leader; each names node 0 as the preferred read replica.
    assert client.send_fetches() == 2
    assert client.fetcher.has_completed_fetches() is False
    assert [e.dst for e in client.requests()] == [0, 1]
    client.respond(full_fetch_response(TP0, RECORDS, preferred_read_replica=0))
    client.respond(full_fetch_response(TP1, RECORDS, preferred_read_replica=0))
    await client.poll()
    assert client.fetcher.has_completed_fetches() is True
    assert sorted(client.fetch_records(), key=str) == [TP0, TP1]
    now = client.time.milliseconds()
    assert client.fetcher.select_read_replica(TP0, -1, now) == 0
    assert client.fetcher.select_read_replica(TP1, -1, now) == 0
    # 2. The next fetch: both partitions in one request to node 0; no metadata update wanted yet.
    assert client.send_fetches() == 1
    assert client.fetcher.has_completed_fetches() is False
    assert client.metadata.update_requested() is False
    return client, starting


@pytest.mark.parametrize("error", [Errors.FENCED_LEADER_EPOCH, Errors.NOT_LEADER_OR_FOLLOWER])
async def test_when_fetch_response_returns_a_leader_ship_change_error_but_no_new_leader_information(error: Errors) -> None:
    """Mirrors FetcherTest#testWhenFetchResponseReturnsALeaderShipChangeErrorButNoNewLeaderInformation:
    without a named leader the metadata is left as it was; an update is requested and tp0 forgets its
    preferred read replica."""
    client, starting = await _two_partitions_reading_from_node_0()
    client.respond(FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID, {
        tidp(TP0): PartitionData(partition_index=0, error_code=error.code),
        tidp(TP1): partition_data(TP1, NEXT_RECORDS)}))
    await client.poll()
    records = client.fetch_records()
    assert TP0 not in records and offsets(records[TP1]) == [4, 5]
    assert client.metadata.fetch() == starting
    assert client.metadata.update_requested() is True
    now = client.time.milliseconds()
    assert client.subscriptions.preferred_read_replica(TP0, now) is None
    assert client.subscriptions.preferred_read_replica(TP1, now) == 0
    # tp0 still reads from its old leader.
    assert client.subscriptions.is_fetchable(TP0) is True
    assert client.subscriptions.position(TP0).current_leader == LeaderAndEpoch(0, VALID_LEADER_EPOCH)
    assert client.subscriptions.is_fetchable(TP1) is True


@pytest.mark.parametrize("error", [Errors.FENCED_LEADER_EPOCH, Errors.NOT_LEADER_OR_FOLLOWER])
async def test_when_fetch_response_returns_a_leader_ship_change_error_and_new_leader_information(error: Errors) -> None:
    """Mirrors FetcherTest#testWhenFetchResponseReturnsALeaderShipChangeErrorAndNewLeaderInformation:
    the leader the response names (node 999, epoch 100, with its endpoint) goes into the metadata and
    becomes tp0's position's leader at once; the full update is still requested."""
    client, starting = await _two_partitions_reading_from_node_0()
    new_node = Node(999, "newnode", 999, "newrack")
    new_epoch = VALID_LEADER_EPOCH + 100
    client.respond(FetchResponse.of(Errors.NONE.code, 0, FetchRequest.INVALID_SESSION_ID, {
        tidp(TP0): PartitionData(partition_index=0, error_code=error.code,
                                 current_leader=LeaderIdAndEpoch(leader_id=new_node.id, leader_epoch=new_epoch)),
        tidp(TP1): partition_data(TP1, NEXT_RECORDS)},
        node_endpoints=[NodeEndpoint(node_id=999, host="newnode", port=999, rack="newrack")]))
    await client.poll()
    records = client.fetch_records()
    assert TP0 not in records and offsets(records[TP1]) == [4, 5]
    # The metadata has the new node and names it tp0's leader.
    assert client.metadata.fetch() != starting
    assert client.metadata.fetch().node_by_id(999) == new_node
    assert client.metadata.current_leader(TP0) == LeaderAndEpoch(999, new_epoch)
    assert client.metadata.update_requested() is True
    now = client.time.milliseconds()
    assert client.subscriptions.preferred_read_replica(TP0, now) is None
    assert client.subscriptions.preferred_read_replica(TP1, now) == 0
    # tp0's position points at the new leader.
    assert client.subscriptions.is_fetchable(TP0) is True
    assert client.subscriptions.position(TP0).current_leader == LeaderAndEpoch(999, new_epoch)
    assert client.subscriptions.is_fetchable(TP1) is True
