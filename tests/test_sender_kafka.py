"""Ports of Kafka 3.8.0 SenderTest
(clients/src/test/java/org/apache/kafka/clients/producer/internals/SenderTest.java).

Kafka's test drives the Sender with a MockClient and calls ``runOnce`` by hand. Here the
producer runs as usual (its Sender is a task) against ``MockBrokers`` (tests/mock_brokers.py,
seen here as ``SenderBrokers``): nodes registered on an in-process Network whose handler answers
MetadataRequest from a fixed partition map and keeps every other request (ProduceRequest,
InitProducerId) pending until the test answers or disconnects it, which is MockClient's
respond / disconnect. ``settle()`` lets every task run
without moving the virtual clock; ``anyio.sleep`` moves it. The Sender settings follow
SenderTest's: acks all, retry backoff 50 ms, request timeout 5000 ms, delivery timeout 1500 ms
(set on the accumulator, as the test builds it, below the config rule's linger + request timeout).

Differences that shape the ports: a retried batch waits a constant retry backoff (SenderTest's
accumulator has none, so its retried batches go in the next ``runOnce``; here a test sleeps
the backoff, and can look at the queue meanwhile); the Sender's next round follows a response
at once (Kafka's ``runOnce`` drains before it polls, so some of its intermediate states, one
round apart, are not observable here and the ports check the state after the round instead).

Not ported:
- testMessageFormatDownConversion, testDownConversionForMismatchedMagicValues,
  testUnsupportedForMessageFormatInProduceRequest, testUnsupportedVersionInProduceRequest: one
  record format and request version, no ApiVersions negotiation.
- testQuotaMetrics, testSenderMetricsTemplates, testNodeLatencyStats: no client metrics.
- testMetadataTopicExpiry, testResetNextBatchExpiry,
  testDoNotPollWhenNoRequestSent: check MockClient / poll internals (spied calls) kafka_ref has no counterpart for.
- testInitProducerIdWithMaxInFlightOne, testIdempotentInitProducerIdWithMaxInFlightOne,
  testNodeNotReady: MockClient's max-in-flight and delayReady / throttle switches.
- testSenderShouldCloseWhenTransactionManagerInErrorState, testUnresolvedSequencesAreNotFatal:
  transactional (their state comes from a transaction: aborted, or an abortable error).
- Every transactional test (testTransactional*, testRecordsFlushedImmediatelyOnTransactionCompletion,
  testAwaitPendingRecordsBeforeCommittingTransaction, testIncompleteTransactionAbortOnShutdown,
  testForceShutdownWithIncompleteTransaction, testTransactionAbortedExceptionOnAbortWithoutError,
  testReceiveFailedBatchTwiceWithTransactions, testInvalidTxnStateIsAnAbortableError,
  testTransactionAbortableExceptionIsAnAbortableError):
  transactions are not modelled.
- testIdempotentSplitBatchAndSend, testTooLargeBatchesAreSafelyRemoved: batches are never split.
- testNoDoubleDeallocation: no buffer-pool memory accounting.

The KIP-951 ports (testProducerBatchRetriesWhenPartitionLeaderChanges,
testWhenProduceResponseReturnsWithALeaderShipChangeError*) give the brokers per-partition leader
epochs, and their ``client.updateMetadata`` is a direct update of the producer's metadata with the
brokers' answer; new leaders named by a response (Kafka's nodes 9990 and 9991) are served by the
mock brokers but not listed in their metadata, so the retry can reach them.
"""

from __future__ import annotations

import dataclasses
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import anyio.lowlevel
import pytest
from mock_brokers import MockBrokers

from kafka_ref.clients.client_metadata import LeaderAndEpoch, Node
from kafka_ref.clients.producer import KafkaProducer
from kafka_ref.common.errors import (
    ClusterAuthorizationException,
    Errors,
    InvalidRecordException,
    InvalidRequestException,
    KafkaException,
    NetworkException,
    NotLeaderOrFollowerException,
    RecordTooLargeException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.records import SimpleRecord
from kafka_ref.common.requests.fetch import LeaderIdAndEpoch, NodeEndpoint
from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from kafka_ref.common.requests.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import Envelope, Network

CLIENT_ID = "clientId"
REQUEST_TIMEOUT = 5000
RETRY_BACKOFF_MS = 50
DELIVERY_TIMEOUT_MS = 1500
PRODUCER_ID = 343434
TP0, TP1 = TopicPartition("test", 0), TopicPartition("test", 1)


class SenderBrokers(MockBrokers):
    """SenderTest's view of the mock brokers: ``requests(kind)`` are the unanswered requests of a
    kind, ProduceRequest unless told. ``partition_epochs`` gives partitions their own leader epoch
    in the metadata, and ``listed_nodes`` (when set) are the only brokers the metadata names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.partition_epochs: dict[TopicPartition, int] = {}
        self.listed_nodes: tuple[int, ...] | None = None

    def metadata_response(self) -> Any:
        response = super().metadata_response()
        topics = tuple(dataclasses.replace(topic, partitions=tuple(
            dataclasses.replace(p, leader_epoch=self.partition_epochs.get(TopicPartition(topic.name, p.partition_index),
                                                                          p.leader_epoch))
            for p in topic.partitions)) for topic in response.topics)
        brokers = tuple(b for b in response.brokers if self.listed_nodes is None or b.node_id in self.listed_nodes)
        return dataclasses.replace(response, topics=topics, brokers=brokers)

    def requests(self, kind: type = ProduceRequest) -> list[Envelope]:
        return self.waiting(kind)

    def respond(self, response: Any, kind: type = ProduceRequest) -> Envelope:
        return super().respond(response, kind)

    @property
    def init_producer_id_times(self) -> list[int]:
        return self.arrival_times(InitProducerIdRequest)


def produce_response(tp: TopicPartition, offset: int, error: Errors = Errors.NONE, log_start_offset: int = -1,
                     error_message: str | None = None) -> ProduceResponse:
    return ProduceResponse.of({tp: PartitionProduceResponse(
        index=tp.partition, error_code=error.code, base_offset=offset, log_start_offset=log_start_offset,
        error_message=error_message)})


def init_producer_id_response(producer_id: int, epoch: int = 0, error: Errors = Errors.NONE) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=error.code, producer_id=producer_id, producer_epoch=epoch)


async def settle() -> None:
    """Let every runnable task run, without moving the virtual clock."""
    for _ in range(50):
        await anyio.lowlevel.checkpoint()


@asynccontextmanager
async def sender_env(leaders: dict[TopicPartition, int] | None = None, nodes: tuple[int, ...] = (0,),
                     epochs: dict[TopicPartition, int] | None = None, listed_nodes: tuple[int, ...] | None = None,
                     **config: Any) -> AsyncIterator[tuple[SenderBrokers, KafkaProducer]]:
    """A producer with SenderTest's settings against MockBrokers; unanswered requests fail at the end."""
    network = Network()
    brokers = SenderBrokers(network, leaders or {TP0: 0, TP1: 0}, nodes)
    brokers.partition_epochs = dict(epochs or {})
    brokers.listed_nodes = listed_nodes
    settings: dict[str, Any] = dict(client_id=CLIENT_ID, acks=-1, retry_backoff_ms=RETRY_BACKOFF_MS,
                                    request_timeout_ms=REQUEST_TIMEOUT, max_in_flight=5, enable_idempotence=False)
    settings.update(config)
    producer = KafkaProducer(network, [nodes[0]], **settings)
    producer.accumulator.delivery_timeout_ms = config.get("delivery_timeout_ms", DELIVERY_TIMEOUT_MS)
    brokers.time = producer.time
    async with anyio.create_task_group() as tg:
        brokers.serve(tg)
        async with producer:
            yield brokers, producer
            brokers.leaders = {}
            await producer.close(timeout_ms=0)
            for node in nodes:
                brokers.disconnect(node)
        tg.cancel_scope.cancel()


def in_flight_batches(producer: KafkaProducer, tp: TopicPartition) -> int:
    return len(producer.sender.in_flight_batches.get(tp, []))


def append(producer: KafkaProducer, tp: TopicPartition, key: bytes = b"key", value: bytes = b"value"):
    return producer.send_nowait(tp.topic, value, key=key, partition=tp.partition)


async def receive_producer_id(brokers: SenderBrokers, producer_id: int, epoch: int = 0,
                              error: Errors = Errors.NONE) -> None:
    """prepareAndReceiveInitProducerId: answer the pending InitProducerId."""
    await settle()
    brokers.respond(init_producer_id_response(producer_id, epoch, error), InitProducerIdRequest)
    await settle()


def batches_of(envelope: Envelope, tp: TopicPartition) -> list:
    return list(envelope.request.partition_records()[tp].batches)


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_simple() -> None:
    """Mirrors SenderTest#testSimple."""
    async with sender_env() as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        assert len(brokers.requests()) == 1
        assert producer.client.in_flight_request_count(0) == 1
        assert in_flight_batches(producer, TP0) == 1
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert producer.client.in_flight_request_count(0) == 0
        assert in_flight_batches(producer, TP0) == 0
        assert future.done()
        assert future.value().offset == 0


@pytest.mark.anyio
async def test_retries() -> None:
    """Mirrors SenderTest#testRetries: with retries=1 a disconnect is retried once, a second one fails the records."""
    async with sender_env(retries=1) as (brokers, producer):
        # 1. A successful retry.
        future = append(producer, TP0)
        await settle()
        assert producer.client.is_ready(0)
        assert in_flight_batches(producer, TP0) == 1
        brokers.disconnect(0)
        await settle()
        assert not producer.client.is_ready(0)
        assert in_flight_batches(producer, TP0) == 0
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)   # reconnect backoff and retry backoff
        await settle()
        assert len(brokers.requests()) == 1 and in_flight_batches(producer, TP0) == 1
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert future.value().offset == 0
        assert in_flight_batches(producer, TP0) == 0
        # 2. An unsuccessful retry.
        await anyio.sleep(1)   # past the reconnect backoff
        future = append(producer, TP0)
        await settle()
        assert in_flight_batches(producer, TP0) == 1
        for i in range(2):
            brokers.disconnect(0)
            await settle()
            assert in_flight_batches(producer, TP0) == 0
            await anyio.sleep(0.2)
            await settle()
            assert in_flight_batches(producer, TP0) == (1 if i == 0 else 0)
        assert future.done()
        assert isinstance(future.exception(), NetworkException)
        assert str(future.exception()) == "Disconnected from node 0"
        with pytest.raises(NetworkException):
            future.value()


@pytest.mark.anyio
async def test_send_in_order() -> None:
    """Mirrors SenderTest#testSendInOrder: with max.in.flight 1 a second batch of the partition
    waits for the first's answer, even after the partition's leader moves."""
    async with sender_env(leaders={TP0: 0, TP1: 1}, nodes=(0, 1), retries=1, max_in_flight=1) as (brokers, producer):
        append(producer, TP1, b"key1", b"value1")
        await settle()
        [first] = brokers.requests()
        assert first.dst == 1 and in_flight_batches(producer, TP1) == 1
        await anyio.sleep(0.9)
        append(producer, TP1, b"key2", b"value2")
        # The partition moves to node 0 before node 1 answers.
        brokers.leaders = {TP0: 0, TP1: 0}
        producer.metadata.request_update()
        producer.sender.wakeup()
        await settle()
        assert len(brokers.requests()) == 1 and in_flight_batches(producer, TP1) == 1
        brokers.respond(produce_response(TP1, 0))
        await settle()
        [second] = brokers.requests()
        assert second.dst == 0 and in_flight_batches(producer, TP1) == 1
        assert [r.value for b in batches_of(second, TP1) for r in b] == [b"value2"]


@pytest.mark.anyio
async def test_init_producer_id_request() -> None:
    """Mirrors SenderTest#testInitProducerIdRequest."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await settle()
        [request] = brokers.requests(InitProducerIdRequest)
        assert (request.request.transactional_id, request.request.transaction_timeout_ms) == (None, 2**31 - 1)
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.has_producer_id()
        assert (tm.producer_id, tm.producer_epoch) == (PRODUCER_ID, 0)


@pytest.mark.anyio
async def test_cluster_authorization_exception_in_init_producer_id_request() -> None:
    """Mirrors SenderTest#testClusterAuthorizationExceptionInInitProducerIdRequest: the waiting
    records fail with it, the producer asks again after the backoff and later sends succeed."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        failed = append(producer, TP0)
        await receive_producer_id(brokers, PRODUCER_ID, error=Errors.CLUSTER_AUTHORIZATION_FAILED)
        assert not tm.has_producer_id()
        assert tm.producer_epoch == -1
        assert isinstance(failed.exception(), ClusterAuthorizationException)
        assert brokers.requests() == []
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.has_producer_id() and tm.producer_epoch == 0
        future = append(producer, TP0)
        await settle()
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert future.value().offset == 0


@pytest.mark.anyio
async def test_can_retry_without_idempotence() -> None:
    """Mirrors SenderTest#testCanRetryWithoutIdempotence: no producer id in the batch, and
    TOPIC_AUTHORIZATION_FAILED fails the records with TopicAuthorizationException."""
    async with sender_env() as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        [request] = brokers.requests()
        assert producer.client.is_ready(0) and in_flight_batches(producer, TP0) == 1
        assert not future.done()
        [batch] = batches_of(request, TP0)
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
        brokers.respond(produce_response(TP0, -1, Errors.TOPIC_AUTHORIZATION_FAILED))
        await settle()
        assert future.done()
        assert isinstance(future.exception(), TopicAuthorizationException)


@pytest.mark.anyio
async def test_sequence_number_increment() -> None:
    """Mirrors SenderTest#testSequenceNumberIncrement."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        future = append(producer, TP0)
        await settle()
        [request] = brokers.requests()
        [batch] = batches_of(request, TP0)
        assert (batch.base_sequence, batch.producer_id, batch.producer_epoch) == (0, PRODUCER_ID, 0)
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert future.done()
        assert tm.last_acked_sequence(TP0) == 0
        assert tm.sequence_number(TP0) == 1


@pytest.mark.anyio
async def test_bump_epoch_when_out_of_order_sequence_received() -> None:
    """Mirrors SenderTest#testBumpEpochWhenOutOfOrderSequenceReceived: the batch is not failed but
    retried under epoch 1 of the same producer id, renumbered from sequence 0."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        future = append(producer, TP0)
        await settle()
        assert len(brokers.requests()) == 1 and in_flight_batches(producer, TP0) == 1
        brokers.respond(produce_response(TP0, 0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER))
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        assert not future.done()
        assert in_flight_batches(producer, TP0) == 1
        assert (tm.producer_id, tm.producer_epoch) == (PRODUCER_ID, 1)
        assert brokers.requests(InitProducerIdRequest) == []
        [retry] = brokers.requests()
        [batch] = batches_of(retry, TP0)
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (PRODUCER_ID, 1, 0)
        assert tm.sequence_number(TP0) == 1
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert future.value().offset == 0
        assert tm.last_acked_sequence(TP0) == 0


@pytest.mark.anyio
async def test_unknown_producer_error_should_be_retried_when_log_start_offset_is_unknown() -> None:
    """Mirrors SenderTest#testUnknownProducerErrorShouldBeRetriedWhenLogStartOffsetIsUnknown."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.sequence_number(TP0) == 0
        request1 = append(producer, TP0)
        await settle()
        assert len(brokers.requests()) == 1
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (1, None)
        brokers.respond(produce_response(TP0, 1000, log_start_offset=10))
        await settle()
        assert request1.value().offset == 1000
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (0, 1000)
        request2 = append(producer, TP0)
        await settle()
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (2, 0)
        assert not request2.done()
        # The log start offset is unknown: retry as is, without touching the sequences.
        brokers.respond(produce_response(TP0, -1, Errors.UNKNOWN_PRODUCER_ID, log_start_offset=-1))
        await settle()
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0)) == (0, 2)
        assert not request2.done()
        assert brokers.requests() == []
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        [retry] = brokers.requests()
        [batch] = batches_of(retry, TP0)
        assert (batch.producer_epoch, batch.base_sequence) == (0, 1)
        brokers.respond(produce_response(TP0, 1011, log_start_offset=1010))
        await settle()
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0)) == (1, 2)
        assert request2.value().offset == 1011
        assert tm.last_acked_offset(TP0) == 1011


@pytest.mark.anyio
async def test_idempotent_unknown_producer_handling_when_retention_limit_reached() -> None:
    """Mirrors SenderTest#testIdempotentUnknownProducerHandlingWhenRetentionLimitReached: the leader
    lost the producer's state because retention removed its records (last acknowledged offset
    below the log start offset): epoch bump, the two-record batch is resent as sequence 0."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.sequence_number(TP0) == 0
        request1 = append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (1, None)
        brokers.respond(produce_response(TP0, 1000, log_start_offset=10))
        await settle()
        assert request1.value().offset == 1000
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (0, 1000)
        # One batch of two records.
        append(producer, TP0)
        request2 = append(producer, TP0)
        await settle()
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (3, 0)
        assert not request2.done()
        [request] = brokers.requests()
        [batch] = batches_of(request, TP0)
        assert batch.base_sequence == 1
        brokers.respond(produce_response(TP0, -1, Errors.UNKNOWN_PRODUCER_ID, log_start_offset=1010))
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0)) == (None, 2)
        assert not request2.done()
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.producer_id, tm.producer_epoch) == (PRODUCER_ID, 1)
        [retry] = brokers.requests()
        [batch] = batches_of(retry, TP0)
        assert (batch.producer_epoch, batch.base_sequence) == (1, 0)
        brokers.respond(produce_response(TP0, 1011, log_start_offset=1010))
        await settle()
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0)) == (1, 2)
        assert producer.client.in_flight_request_count(0) == 0
        assert request2.value().offset == 1012
        assert tm.last_acked_offset(TP0) == 1012


@pytest.mark.anyio
async def test_inflight_batches_expire_on_delivery_timeout() -> None:
    """Mirrors SenderTest#testInflightBatchesExpireOnDeliveryTimeout: an answer after the delivery
    timeout comes too late; the records already failed with TimeoutException."""
    async with sender_env(max_in_flight=1) as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1 and in_flight_batches(producer, TP0) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 1000)
        await settle()
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert in_flight_batches(producer, TP0) == 0
        assert isinstance(future.exception(), TimeoutException)


@pytest.mark.anyio
async def test_when_first_batch_expire_no_send_second_batch_if_guarantee_order() -> None:
    """Mirrors SenderTest#testWhenFirstBatchExpireNoSendSecondBatchIfGuaranteeOrder."""
    async with sender_env(max_in_flight=1) as (brokers, producer):
        first = append(producer, TP0)
        await settle()
        assert len(brokers.requests()) == 1 and in_flight_batches(producer, TP0) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 2000)
        second = append(producer, TP0)
        await settle()
        # The partition is muted while the first batch is in flight.
        assert len(brokers.requests()) == 1 and in_flight_batches(producer, TP0) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 2000)   # the first batch expires
        await settle()
        assert isinstance(first.exception(), TimeoutException)
        assert len(brokers.requests()) == 1 and not second.done()
        brokers.respond(produce_response(TP0, 0))
        await settle()
        # Only now is the second batch drained.
        [request] = brokers.requests()
        assert producer.client.in_flight_request_count(0) == 1 and in_flight_batches(producer, TP0) == 1
        assert [r.value for b in batches_of(request, TP0) for r in b] == [b"value"]


@pytest.mark.anyio
async def test_expired_batch_does_not_retry() -> None:
    """Mirrors SenderTest#testExpiredBatchDoesNotRetry: a retriable error after the delivery timeout is not retried."""
    async with sender_env() as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 1000)
        await settle()
        assert future.done() and isinstance(future.exception(), TimeoutException)
        brokers.respond(produce_response(TP0, -1, Errors.NOT_LEADER_OR_FOLLOWER))
        await anyio.sleep(0.5)
        await settle()
        assert producer.client.in_flight_request_count(0) == 0
        assert in_flight_batches(producer, TP0) == 0
        assert brokers.requests() == []
        assert not producer.accumulator.has_undrained()


@pytest.mark.anyio
async def test_expired_batches_in_multiple_partitions() -> None:
    """Mirrors SenderTest#testExpiredBatchesInMultiplePartitions."""
    async with sender_env(max_in_flight=1) as (brokers, producer):
        request1 = append(producer, TP0, b"k1", b"v1")
        request2 = append(producer, TP1, b"k2", b"v2")
        await settle()
        [request] = brokers.requests()
        assert set(request.request.partition_records()) == {TP0, TP1}
        assert in_flight_batches(producer, TP0) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 1000)
        await settle()
        brokers.respond(ProduceResponse.of({TP0: PartitionProduceResponse(index=0, base_offset=0)}))
        await settle()
        assert in_flight_batches(producer, TP0) == 0
        assert isinstance(request1.exception(), TimeoutException)
        assert isinstance(request2.exception(), TimeoutException)


@pytest.mark.anyio
@pytest.mark.parametrize("message, expected", [(None, Errors.INVALID_REQUEST.message), ("testCustomErrorMessage", "testCustomErrorMessage")])
async def test_error_message(message: str | None, expected: str) -> None:
    """Mirrors SenderTest#testDefaultErrorMessage and #testCustomErrorMessage."""
    async with sender_env() as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        brokers.respond(produce_response(TP0, 0, Errors.INVALID_REQUEST, error_message=message))
        await settle()
        exc = future.exception()
        assert type(exc) is InvalidRequestException
        assert str(exc) == expected


@pytest.mark.anyio
async def test_sender_should_retry_with_backoff_on_retriable_error() -> None:
    """Mirrors SenderTest#testSenderShouldRetryWithBackoffOnRetriableError: InitProducerId answered
    COORDINATOR_LOAD_IN_PROGRESS is asked again after the retry backoff each time."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        start = producer.time.milliseconds()
        for error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_LOAD_IN_PROGRESS):
            await receive_producer_id(brokers, PRODUCER_ID, -1, error)
            await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await receive_producer_id(brokers, PRODUCER_ID)
        times = brokers.init_producer_id_times
        assert [t - start for t in times] == [0, RETRY_BACKOFF_MS, 2 * RETRY_BACKOFF_MS]
        assert producer.transaction_manager.producer_id == PRODUCER_ID


@pytest.mark.anyio
async def test_record_error_propagated_to_application() -> None:
    """Mirrors SenderTest#testRecordErrorPropagatedToApplication: records the leader named get
    InvalidRecordException with their message (or the code's), the others a plain KafkaException."""
    async with sender_env() as (brokers, producer):
        futures = [append(producer, TP0) for _ in range(5)]
        await settle()
        assert producer.client.in_flight_request_count(0) == 1 and in_flight_batches(producer, TP0) == 1
        brokers.respond(ProduceResponse.of({TP0: PartitionProduceResponse(
            index=0, error_code=Errors.INVALID_RECORD.code, base_offset=-1, record_errors=(
                BatchIndexAndErrorMessage(batch_index=0, batch_index_error_message="0"),
                BatchIndexAndErrorMessage(batch_index=2, batch_index_error_message="2"),
                BatchIndexAndErrorMessage(batch_index=3)))}))
        await settle()
        errors = [f.exception() for f in futures]
        assert all(f.done() for f in futures)
        assert [(type(e), str(e)) for e in errors] == [
            (InvalidRecordException, "0"),
            (KafkaException, "Failed to append record because it was part of a batch which had one more more invalid records"),
            (InvalidRecordException, "2"),
            (InvalidRecordException, Errors.INVALID_RECORD.message),
            (KafkaException, "Failed to append record because it was part of a batch which had one more more invalid records"),
        ]
        with pytest.raises(InvalidRecordException, match="^2$"):
            futures[2].value()


@pytest.mark.anyio
async def test_append_in_expiry_callback() -> None:
    """Mirrors SenderTest#testAppendInExpiryCallback: callbacks of expiring records may append
    to the accumulator; the new records form a fresh batch that stays queued."""
    async with sender_env() as (brokers, producer):
        await settle()
        warm_up = append(producer, TP0)       # metadata and a connection first
        await settle()
        brokers.respond(produce_response(TP0, 0))
        await settle()
        assert warm_up.value().offset == 0
        brokers.network.unregister(0)         # the leader is gone: nothing can be sent
        expired: list[BaseException] = []
        unexpected: list[BaseException] = []

        def callback(metadata, exc) -> None:
            if isinstance(exc, TimeoutException):
                expired.append(exc)
                producer.accumulator.append(TP1, SimpleRecord(b"key", b"value", (), 0), None, producer.time.milliseconds())
            elif exc is not None:
                unexpected.append(exc)

        now = producer.time.milliseconds()
        for _ in range(10):
            producer.accumulator.append(TP1, SimpleRecord(b"key", b"value", (), 0), callback, now)
        producer.sender.wakeup()
        await anyio.sleep((DELIVERY_TIMEOUT_MS + 100) / 1000)
        assert len(expired) == 10
        assert unexpected == []
        dq = producer.accumulator.get_deque(TP1)
        assert len(dq) == 1 and dq[0].record_count == 10


@pytest.mark.anyio
async def test_expired_batch_does_not_split_on_message_too_large_error() -> None:
    """Mirrors SenderTest#testExpiredBatchDoesNotSplitOnMessageTooLargeError: MESSAGE_TOO_LARGE for
    a batch already expired neither splits nor resends it."""
    async with sender_env() as (brokers, producer):
        request1 = append(producer, TP0)
        request2 = append(producer, TP0)
        await settle()
        assert len(brokers.requests()) == 1
        await anyio.sleep(DELIVERY_TIMEOUT_MS / 1000)
        await settle()
        brokers.respond(produce_response(TP0, -1, Errors.MESSAGE_TOO_LARGE))
        await settle()
        assert request1.done() and request2.done()
        assert isinstance(request1.exception(), TimeoutException) and isinstance(request2.exception(), TimeoutException)
        assert producer.client.in_flight_request_count(0) == 0 and in_flight_batches(producer, TP0) == 0
        await anyio.sleep(0.5)
        await settle()
        assert brokers.requests() == [] and not producer.accumulator.has_undrained()


@pytest.mark.anyio
async def test_retry_when_producer_id_changes() -> None:
    """Mirrors SenderTest#testRetryWhenProducerIdChanges: a batch retried after a disconnect keeps
    its stamp (producer id, the exhausted epoch, sequence 0); the partition's next sequence stays 1."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, 32767)
        future = append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1 and producer.client.is_ready(0)
        brokers.disconnect(0)
        await settle()
        assert not producer.client.is_ready(0)
        await anyio.sleep(0.2)   # past the reconnect and retry backoffs
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        [retry] = brokers.requests()
        [batch] = batches_of(retry, TP0)
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (PRODUCER_ID, 32767, 0)
        assert brokers.requests(InitProducerIdRequest) == []
        assert not future.done()
        assert tm.sequence_number(TP0) == 1


@pytest.mark.anyio
async def test_reset_of_producer_state_should_allow_queued_batches_to_drain() -> None:
    """Mirrors SenderTest#testResetOfProducerStateShouldAllowQueuedBatchesToDrain: an out-of-order
    answer with the epoch exhausted makes the producer get a new producer id; the other
    partition's retried batch still drains and succeeds, and its sequences move on from it."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, 32767)
        append(producer, TP0)
        successful = append(producer, TP1)
        await settle()
        [request] = brokers.requests()
        assert set(request.request.partition_records()) == {TP0, TP1}
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, base_offset=-1),
            TP0: PartitionProduceResponse(index=0, error_code=Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code, base_offset=-1)}))
        await settle()
        # The epoch cannot go up: the id is reset and asked for again.
        assert not tm.has_producer_id()
        await receive_producer_id(brokers, PRODUCER_ID + 1)
        assert tm.producer_id == PRODUCER_ID + 1
        assert not successful.done()
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        [resend] = brokers.requests()
        [batch] = batches_of(resend, TP1)
        assert (batch.producer_id, batch.base_sequence) == (PRODUCER_ID, 0)   # a retried batch keeps its stamp
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, base_offset=10),
            TP0: PartitionProduceResponse(index=0, base_offset=0)}))
        await settle()
        assert successful.value().offset == 10
        assert tm.sequence_number(TP1) == 1


@pytest.mark.anyio
async def test_expiry_of_unsent_batches_should_not_cause_unresolved_sequences() -> None:
    """Mirrors SenderTest#testExpiryOfUnsentBatchesShouldNotCauseUnresolvedSequences: a batch that
    expires before it was ever sent fails with TimeoutException and leaves the sequences alone."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.sequence_number(TP0) == 0
        brokers.network.unregister(0)
        request1 = append(producer, TP0)
        await anyio.sleep((DELIVERY_TIMEOUT_MS + 100) / 1000)
        assert isinstance(request1.exception(), TimeoutException)
        assert (tm.epoch_bump_required, tm.producer_epoch, tm.sequence_number(TP0)) == (False, 0, 0)


@pytest.mark.anyio
async def test_correct_handling_of_duplicate_sequence_error() -> None:
    """Mirrors SenderTest#testCorrectHandlingOfDuplicateSequenceError: the second batch is
    acknowledged first (offset 1000); the first then gets DUPLICATE_SEQUENCE_NUMBER, which means
    its records are written but their offsets are unknown: its future succeeds with offset -1
    and the last acknowledged sequence and offset stay the second batch's."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = append(producer, TP0)
        await settle()
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (1, 1)
        assert tm.last_acked_sequence(TP0) is None
        request2 = append(producer, TP0)
        await settle()
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (2, 2)
        assert tm.last_acked_sequence(TP0) is None
        assert not request1.done() and not request2.done()
        first, second = brokers.requests()
        brokers.pending.remove(second)
        second.respond(produce_response(TP0, 1000, log_start_offset=0))
        await settle()
        assert (tm.last_acked_offset(TP0), tm.last_acked_sequence(TP0)) == (1000, 1)
        brokers.pending.remove(first)
        first.respond(produce_response(TP0, ProduceResponse.INVALID_OFFSET, Errors.DUPLICATE_SEQUENCE_NUMBER,
                                       log_start_offset=0))
        await settle()
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (1, 1000)
        assert producer.client.in_flight_request_count(0) == 0
        metadata = request1.value()
        assert metadata.offset == -1
        assert request2.value().offset == 1000


@pytest.mark.anyio
async def test_cluster_authorization_exception_in_produce_request() -> None:
    """Mirrors SenderTest#testClusterAuthorizationExceptionInProduceRequest: CLUSTER_AUTHORIZATION_FAILED
    on a produce is fatal for an idempotent producer; later records fail with it too."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        future = append(producer, TP0)
        await settle()
        [request] = brokers.requests()
        assert batches_of(request, TP0)[0].producer_id == PRODUCER_ID
        brokers.respond(produce_response(TP0, -1, Errors.CLUSTER_AUTHORIZATION_FAILED))
        await settle()
        exc = future.exception()
        assert type(exc) is ClusterAuthorizationException
        assert str(exc) == "The producer is not authorized to do idempotent sends"
        assert tm.has_fatal_error()
        later = append(producer, TP0)
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        assert later.exception() is exc
        assert brokers.requests() == []


@pytest.mark.anyio
async def test_cancel_in_flight_request_after_fatal_error() -> None:
    """Mirrors SenderTest#testCancelInFlightRequestAfterFatalError: once fatal, a batch still in
    flight fails with the fatal error, and its late answer is harmless."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        future1 = append(producer, TP0)
        await settle()
        future2 = append(producer, TP1)
        await settle()
        assert [set(e.request.partition_records()) for e in brokers.requests()] == [{TP0}, {TP1}]
        brokers.respond(produce_response(TP0, -1, Errors.CLUSTER_AUTHORIZATION_FAILED))
        await settle()
        assert tm.has_fatal_error()
        assert isinstance(future1.exception(), ClusterAuthorizationException)
        await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        await settle()
        assert future2.exception() is future1.exception()
        brokers.respond(produce_response(TP1, 0))
        await settle()
        assert future2.exception() is future1.exception()
        assert producer.client.in_flight_request_count(0) == 0


# --------------------------------------------------------------------------------------------
# Idempotence with several batches of a partition in flight
# --------------------------------------------------------------------------------------------


def respond_to(brokers: SenderBrokers, envelope: Envelope, response: Any) -> None:
    """MockClient#respondToRequest: answer this pending request, whatever its place in the queue."""
    brokers.pending.remove(envelope)
    envelope.respond(response)


def stamp(envelope: Envelope, tp: TopicPartition) -> tuple[int, int, int]:
    """The (producer id, epoch, base sequence) of the one batch ``envelope`` carries for ``tp``."""
    [batch] = batches_of(envelope, tp)
    return (batch.producer_id, batch.producer_epoch, batch.base_sequence)


def respond_idempotent(brokers: SenderBrokers, expected_sequence: int, tp: TopicPartition, error: Errors, offset: int,
                       log_start_offset: int = -1, expected_epoch: int = -1) -> None:
    """SenderTest#sendIdempotentProducerResponse: answer the oldest pending produce request after
    checking it carries one idempotent batch for ``tp`` with the expected sequence (and epoch)."""
    envelope = brokers.requests()[0]
    producer_id, epoch, sequence = stamp(envelope, tp)
    assert producer_id != -1
    assert sequence == expected_sequence
    if expected_epoch > -1:
        assert epoch == expected_epoch
    respond_to(brokers, envelope, produce_response(tp, offset, error, log_start_offset))


def partition_state(producer: KafkaProducer, tp: TopicPartition) -> tuple[int, int, int, int | None]:
    """SenderTest#assertPartitionState's values: the partition's producer id and epoch, next sequence, last acknowledged sequence."""
    tm = producer.transaction_manager
    producer_id, epoch = tm.producer_id_and_epoch(tp)
    return (producer_id, epoch, tm.sequence_number(tp), tm.last_acked_sequence(tp))


async def send_one(producer: KafkaProducer, tp: TopicPartition):
    """appendToAccumulator then runOnce: one record, drained into its own request."""
    future = append(producer, tp)
    await settle()
    return future


async def past_retry_backoff() -> None:
    await anyio.sleep(RETRY_BACKOFF_MS / 1000)
    await settle()


@pytest.mark.anyio
async def test_idempotence_with_multiple_inflights() -> None:
    """Mirrors SenderTest#testIdempotenceWithMultipleInflights: two batches of one partition in
    flight at once (sequences 0 and 1), acknowledged in order."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.has_producer_id() and tm.sequence_number(TP0) == 0
        request1 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (1, None)
        request2 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 2
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (2, None)
        assert not request1.done() and not request2.done()
        assert producer.client.is_ready(0)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        assert tm.last_acked_sequence(TP0) == 0
        assert request1.value().offset == 0
        assert not request2.done()
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 1)
        await settle()
        assert tm.last_acked_sequence(TP0) == 1
        assert producer.client.in_flight_request_count(0) == 0
        assert in_flight_batches(producer, TP0) == 0
        assert request2.value().offset == 1


@pytest.mark.anyio
async def test_idempotence_with_multiple_inflights_retried_in_order() -> None:
    """Mirrors SenderTest#testIdempotenceWithMultipleInflightsRetriedInOrder: three batches in
    flight all come back for a retry (the first with LEADER_NOT_AVAILABLE, the others with
    OUT_OF_ORDER_SEQUENCE_NUMBER, which for a batch that is not the next one just retries); they
    go again one at a time in sequence order, and a fourth batch waits until they are done."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (1, 1)
        request2 = await send_one(producer, TP0)
        request3 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (3, 3)
        assert tm.last_acked_sequence(TP0) is None
        assert not any(f.done() for f in (request1, request2, request3))
        respond_idempotent(brokers, 0, TP0, Errors.LEADER_NOT_AVAILABLE, -1)
        await settle()
        # The fourth batch queues behind the retried first one.
        request4 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 2
        assert tm.last_acked_sequence(TP0) is None
        respond_idempotent(brokers, 1, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        await settle()
        respond_idempotent(brokers, 2, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        await settle()
        assert (tm.producer_epoch, tm.epoch_bump_required) == (0, False)   # no gap: no epoch bump
        assert [b.base_sequence for b in producer.accumulator.get_deque(TP0)] == [0, 1, 2, -1]
        assert producer.client.in_flight_request_count(0) == 0
        # Once the backoff is over only the first one goes: one in flight while retrying.
        await past_retry_backoff()
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (3, None)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0)
        await settle()
        assert tm.last_acked_sequence(TP0) == 0
        assert request1.value().offset == 0
        # The second goes as soon as the first is acknowledged.
        assert producer.client.in_flight_request_count(0) == 1 and in_flight_batches(producer, TP0) == 1
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 1)
        await settle()
        assert tm.last_acked_sequence(TP0) == 1
        assert request2.value().offset == 1
        # The third goes, the last retried one; then the fourth is at the head of the queue and
        # gets its sequence (Kafka's runOnce drains it in the round after; here the Sender's
        # next round follows at once).
        assert producer.client.in_flight_request_count(0) == 2 and in_flight_batches(producer, TP0) == 2
        assert [stamp(e, TP0)[2] for e in brokers.requests()] == [2, 3]
        respond_idempotent(brokers, 2, TP0, Errors.NONE, 2)
        await settle()
        assert tm.last_acked_sequence(TP0) == 2
        assert request3.value().offset == 2
        assert producer.client.in_flight_request_count(0) == 1 and in_flight_batches(producer, TP0) == 1
        respond_idempotent(brokers, 3, TP0, Errors.NONE, 3)
        await settle()
        assert tm.last_acked_sequence(TP0) == 3
        assert request4.value().offset == 3


@pytest.mark.anyio
async def test_idempotence_with_multiple_inflights_where_first_fails_fatally() -> None:
    """Mirrors SenderTest#testIdempotenceWithMultipleInflightsWhereFirstFailsFatallyAndSequenceOfFutureBatchesIsAdjusted:
    the first batch fails for good (MESSAGE_TOO_LARGE) with retries left, which bumps the epoch;
    the second, answered OUT_OF_ORDER_SEQUENCE_NUMBER, is resent as sequence 0 of the new epoch."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        request2 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (2, 2)
        respond_idempotent(brokers, 0, TP0, Errors.MESSAGE_TOO_LARGE, -1)
        await settle()
        assert isinstance(request1.exception(), RecordTooLargeException)
        assert producer.client.in_flight_request_count(0) == 1
        assert tm.last_acked_sequence(TP0) is None
        # The epoch bump renumbered the batch still in flight.
        assert (tm.producer_epoch, tm.sequence_number(TP0)) == (1, 1)
        respond_idempotent(brokers, 1, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, expected_epoch=0)
        await settle()
        assert tm.last_acked_sequence(TP0) is None
        assert producer.client.in_flight_request_count(0) == 0
        await past_retry_backoff()
        assert producer.client.in_flight_request_count(0) == 1
        assert stamp(brokers.requests()[0], TP0) == (PRODUCER_ID, 1, 0)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0, expected_epoch=1)
        await settle()
        assert tm.last_acked_sequence(TP0) == 0
        assert producer.client.in_flight_request_count(0) == 0
        assert request2.value().offset == 0


@pytest.mark.anyio
async def test_epoch_bump_on_out_of_order_sequence_for_next_batch() -> None:
    """Mirrors SenderTest#testEpochBumpOnOutOfOrderSequenceForNextBatch: OUT_OF_ORDER_SEQUENCE_NUMBER
    for the batch right after the last acknowledged one is a real gap: epoch bump, sequences from 0."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = append(producer, TP0)
        append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        # A batch of two records takes two sequences.
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (2, None)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0)
        await settle()
        request2 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (3, 1)
        assert request1.value().offset == 0
        assert not request2.done()
        respond_idempotent(brokers, 2, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
        await settle()
        assert tm.producer_epoch == 1
        assert tm.sequence_number(TP0) == 1
        assert tm.first_in_flight_sequence(TP0) == 0


@pytest.mark.anyio
async def test_epoch_bump_on_out_of_order_sequence_for_next_batch_when_there_is_no_batch_in_flight() -> None:
    """Mirrors SenderTest#testEpochBumpOnOutOfOrderSequenceForNextBatchWhenThereIsNoBatchInFlight:
    the bump renumbers the failing partition at once; another partition, with nothing in
    flight, moves to the new epoch (from sequence 0) when its next batch is drained."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.producer_id_and_epoch() == (PRODUCER_ID, 0)
        await send_one(producer, TP0)
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 1, None)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0, expected_epoch=0)
        await settle()
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 1, 0)
        await send_one(producer, TP1)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 1, None)
        respond_idempotent(brokers, 0, TP1, Errors.NONE, 0, expected_epoch=0)
        await settle()
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 1, 0)
        await send_one(producer, TP0)
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 2, 0)
        respond_idempotent(brokers, 1, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, expected_epoch=0)
        await past_retry_backoff()
        assert tm.producer_epoch == 1
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 1, None)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 1, 0)
        assert tm.has_stale_producer_id_and_epoch(TP1)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 1, expected_epoch=1)
        await settle()
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 1, 0)
        await send_one(producer, TP1)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 1, 1, None)
        assert not tm.has_stale_producer_id_and_epoch(TP1)
        respond_idempotent(brokers, 0, TP1, Errors.NONE, 1, expected_epoch=1)
        await settle()
        assert partition_state(producer, TP1) == (PRODUCER_ID, 1, 1, 0)


@pytest.mark.anyio
async def test_epoch_bump_on_out_of_order_sequence_for_next_batch_when_batch_in_flight_fails() -> None:
    """Mirrors SenderTest#testEpochBumpOnOutOfOrderSequenceForNextBatchWhenBatchInFlightFails (retries=1):
    a partition whose batch under the old epoch is still in flight keeps that epoch while it
    retries and when it fails for good; its next batch starts over at sequence 0 of the new epoch."""
    async with sender_env(enable_idempotence=True, retries=1) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        assert tm.producer_id_and_epoch() == (PRODUCER_ID, 0)
        await send_one(producer, TP0)
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 1, None)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0, expected_epoch=0)
        await settle()
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 1, 0)
        await send_one(producer, TP1)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 1, None)
        respond_idempotent(brokers, 0, TP1, Errors.NONE, 0, expected_epoch=0)
        await settle()
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 1, 0)
        await send_one(producer, TP0)
        assert partition_state(producer, TP0) == (PRODUCER_ID, 0, 2, 0)
        tp1_second = await send_one(producer, TP1)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 2, 0)
        # Partition 0: OUT_OF_ORDER_SEQUENCE_NUMBER for the next batch: epoch bump and retry.
        respond_idempotent(brokers, 1, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, -1, expected_epoch=0)
        await past_retry_backoff()
        assert tm.producer_epoch == 1
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 1, None)
        # Partition 1 keeps the old epoch while its batch is in flight.
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 2, 0)
        assert tm.has_stale_producer_id_and_epoch(TP1)
        respond_idempotent(brokers, 1, TP1, Errors.NOT_LEADER_OR_FOLLOWER, -1, expected_epoch=0)
        await settle()
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 2, 0)
        assert tm.has_stale_producer_id_and_epoch(TP1)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 1, expected_epoch=1)
        await settle()
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 1, 0)
        # Partition 1's retry, still under epoch 0, fails again: out of retries.
        await past_retry_backoff()
        respond_idempotent(brokers, 1, TP1, Errors.NOT_LEADER_OR_FOLLOWER, -1, expected_epoch=0)
        await settle()
        assert isinstance(tp1_second.exception(), NotLeaderOrFollowerException)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 0, 2, 0)
        assert tm.has_stale_producer_id_and_epoch(TP1)
        # Its next batch moves it to the new epoch, from sequence 0.
        await send_one(producer, TP1)
        assert partition_state(producer, TP1) == (PRODUCER_ID, 1, 1, None)
        assert not tm.has_stale_producer_id_and_epoch(TP1)
        respond_idempotent(brokers, 0, TP1, Errors.NONE, 0, expected_epoch=1)
        await settle()
        assert partition_state(producer, TP1) == (PRODUCER_ID, 1, 1, 0)
        await send_one(producer, TP0)
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 2, 0)
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 0, expected_epoch=1)
        await settle()
        assert partition_state(producer, TP0) == (PRODUCER_ID, 1, 2, 1)


@pytest.mark.anyio
async def test_correct_handling_of_out_of_order_responses() -> None:
    """Mirrors SenderTest#testCorrectHandlingOfOutOfOrderResponses: the second request is answered
    first (OUT_OF_ORDER_SEQUENCE_NUMBER), then the first (NOT_LEADER_OR_FOLLOWER); both batches
    go back to the queue in sequence order and are resent one at a time."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (1, 1)
        request2 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (2, 2)
        assert tm.last_acked_sequence(TP0) is None
        assert not request1.done() and not request2.done()
        first, second = brokers.requests()
        respond_to(brokers, second, produce_response(TP0, -1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER))
        await settle()
        queued = producer.accumulator.get_deque(TP0)
        assert [b.base_sequence for b in queued] == [1]
        assert producer.client.in_flight_request_count(0) == 1
        assert tm.last_acked_sequence(TP0) is None
        respond_to(brokers, first, produce_response(TP0, -1, Errors.NOT_LEADER_OR_FOLLOWER))
        await settle()
        assert [b.base_sequence for b in queued] == [0, 1]
        assert tm.last_acked_sequence(TP0) is None
        assert producer.client.in_flight_request_count(0) == 0
        assert not request1.done() and not request2.done()
        # Resent in order, one at a time.
        await past_retry_backoff()
        assert producer.client.in_flight_request_count(0) == 1
        assert tm.last_acked_sequence(TP0) is None
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0)
        await settle()
        assert tm.last_acked_sequence(TP0) == 0
        assert request1.value().offset == 0
        assert producer.client.in_flight_request_count(0) == 1
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 1)
        await settle()
        assert producer.client.in_flight_request_count(0) == 0
        assert tm.last_acked_sequence(TP0) == 1
        assert request2.value().offset == 1


@pytest.mark.anyio
async def test_correct_handling_of_out_of_order_responses_when_second_succeeds() -> None:
    """Mirrors SenderTest#testCorrectHandlingOfOutOfOrderResponsesWhenSecondSucceeds: the second
    batch is acknowledged first; the first, retried after REQUEST_TIMED_OUT, succeeds later and
    the last acknowledged sequence stays 1."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        request2 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 2
        assert not request1.done() and not request2.done()
        first, second = brokers.requests()
        respond_to(brokers, second, produce_response(TP0, 1, Errors.NONE, log_start_offset=1))
        await settle()
        assert request2.value().offset == 1
        assert not request1.done()
        queued = producer.accumulator.get_deque(TP0)
        assert len(queued) == 0
        assert producer.client.in_flight_request_count(0) == 1
        assert tm.last_acked_sequence(TP0) == 1
        respond_to(brokers, first, produce_response(TP0, -1, Errors.REQUEST_TIMED_OUT))
        await settle()
        assert [b.base_sequence for b in queued] == [0]
        assert tm.last_acked_sequence(TP0) == 1
        assert producer.client.in_flight_request_count(0) == 0
        await past_retry_backoff()
        assert producer.client.in_flight_request_count(0) == 1
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 0)
        await settle()
        assert len(queued) == 0
        assert tm.last_acked_sequence(TP0) == 1
        assert producer.client.in_flight_request_count(0) == 0
        assert request1.value().offset == 0


@pytest.mark.anyio
async def test_expiry_of_first_batch_should_not_cause_unresolved_sequences_if_future_batches_succeed() -> None:
    """Mirrors SenderTest#testExpiryOfFirstBatchShouldNotCauseUnresolvedSequencesIfFutureBatchesSucceed:
    the first batch, sent once then waiting to be retried, expires: the partition is unresolved
    and a new batch is held back; the second batch's success resolves it and the new batch goes
    with the next sequence. (Kafka keeps the first batch queued by disconnecting the node; here
    its error comes 40 ms before its delivery timeout, inside the retry backoff.)"""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        start = producer.time.milliseconds()
        request1 = await send_one(producer, TP0)
        await anyio.sleep(1)
        request2 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 2 and in_flight_batches(producer, TP0) == 2
        await anyio.sleep((DELIVERY_TIMEOUT_MS - 40) / 1000 - 1)
        respond_idempotent(brokers, 0, TP0, Errors.REQUEST_TIMED_OUT, -1)
        await settle()
        assert in_flight_batches(producer, TP0) == 1
        await anyio.sleep(0.04)   # the first batch expires, still backing off
        await settle()
        assert producer.time.milliseconds() - start == DELIVERY_TIMEOUT_MS
        assert isinstance(request1.exception(), TimeoutException)
        assert tm.has_unresolved_sequence(TP0)
        assert tm.partitions_with_unresolved_sequences == {TP0: 1}
        # A new batch is not drained while the partition is unresolved.
        request3 = await send_one(producer, TP0)
        await anyio.sleep(0.02)
        await settle()
        assert not request2.done()
        assert producer.client.in_flight_request_count(0) == 1
        assert [b.has_sequence() for b in producer.accumulator.get_deque(TP0)] == [False]
        # The second batch succeeds: the expired one was written; resolved, the third goes.
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 1)
        await settle()
        assert request2.value().offset == 1
        assert not tm.has_unresolved_sequence(TP0)
        assert tm.has_producer_id() and tm.producer_epoch == 0
        assert len(producer.accumulator.get_deque(TP0)) == 0
        assert producer.client.in_flight_request_count(0) == 1
        assert stamp(brokers.requests()[0], TP0) == (PRODUCER_ID, 0, 2)
        assert not request3.done()
        assert in_flight_batches(producer, TP0) == 1


@pytest.mark.anyio
async def test_expiry_of_first_batch_should_cause_epoch_bump_if_future_batches_fail() -> None:
    """Mirrors SenderTest#testExpiryOfFirstBatchShouldCauseEpochBumpIfFutureBatchesFail: after the
    first batch expires unresolved, OUT_OF_ORDER_SEQUENCE_NUMBER for the batch right after it
    means it was not written: epoch bump, the second batch renumbered to 0, resolved."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        await anyio.sleep(1)
        request2 = await send_one(producer, TP0)
        assert producer.client.in_flight_request_count(0) == 2
        await anyio.sleep((DELIVERY_TIMEOUT_MS - 40) / 1000 - 1)
        respond_idempotent(brokers, 0, TP0, Errors.NOT_LEADER_OR_FOLLOWER, -1)
        await settle()
        await anyio.sleep(0.04)   # the first batch expires
        await settle()
        assert isinstance(request1.exception(), TimeoutException)
        assert tm.has_unresolved_sequence(TP0)
        append(producer, TP0)
        await anyio.sleep(0.02)
        await settle()
        assert not request2.done()
        respond_idempotent(brokers, 1, TP0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 1)
        await settle()
        # Retried under a bumped epoch, back in the queue ahead of the new batch.
        assert len(producer.accumulator.get_deque(TP0)) == 2
        assert tm.producer_epoch == 1
        assert tm.sequence_number(TP0) == 1
        assert not tm.has_unresolved_sequence(TP0)
        assert [b.base_sequence for b in producer.accumulator.get_deque(TP0)] == [0, -1]


@pytest.mark.anyio
async def test_expiry_of_all_sent_batches_should_cause_unresolved_sequences() -> None:
    """Mirrors SenderTest#testExpiryOfAllSentBatchesShouldCauseUnresolvedSequences: the only batch,
    sent once, expires: unresolved until the Sender's next round, which finds nothing in flight
    and the sequences with a gap, so bumps the epoch."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        await anyio.sleep((DELIVERY_TIMEOUT_MS - 40) / 1000)
        respond_idempotent(brokers, 0, TP0, Errors.NOT_LEADER_OR_FOLLOWER, -1)
        await settle()
        assert tm.sequence_number(TP0) == 1
        await anyio.sleep(0.04)   # the batch expires
        await settle()
        assert isinstance(request1.exception(), TimeoutException)
        assert tm.has_unresolved_sequence(TP0)
        assert producer.client.in_flight_request_count(0) == 0
        assert len(producer.accumulator.get_deque(TP0)) == 0
        assert tm.producer_id_and_epoch() == (PRODUCER_ID, 0)
        # The next round bumps the epoch and clears the unresolved sequence.
        producer.sender.wakeup()
        await settle()
        assert tm.producer_id_and_epoch() == (PRODUCER_ID, 1)
        assert not tm.has_unresolved_sequence(TP0)


@pytest.mark.anyio
async def test_batches_drained_with_old_producer_id_should_succeed_on_subsequent_retry() -> None:
    """Mirrors SenderTest#testBatchesDrainedWithOldProducerIdShouldSucceedOnSubsequentRetry: a
    partition's batch keeps its old epoch across retries after another partition bumped the
    epoch, and succeeds; its sequences move to the new epoch only with its next batch. (Kafka's
    second answer names partition 1 only; here partition 0's resent batch is acknowledged in it.)"""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        out_of_order = append(producer, TP0)
        successful = append(producer, TP1)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, base_offset=-1),
            TP0: PartitionProduceResponse(index=0, error_code=Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code, base_offset=-1)}))
        await settle()
        assert not out_of_order.done()
        assert tm.producer_epoch == 1
        await past_retry_backoff()
        [resend] = brokers.requests()
        assert stamp(resend, TP1) == (PRODUCER_ID, 0, 0)
        assert stamp(resend, TP0) == (PRODUCER_ID, 1, 0)
        assert not successful.done()
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, base_offset=0),
            TP0: PartitionProduceResponse(index=0, base_offset=0)}))
        await settle()
        assert not successful.done()
        assert out_of_order.value().offset == 0
        await past_retry_backoff()
        [retry] = brokers.requests()
        assert stamp(retry, TP1) == (PRODUCER_ID, 0, 0)
        brokers.respond(produce_response(TP1, 0))
        await settle()
        assert successful.value().offset == 0
        assert tm.sequence_number(TP1) == 1
        assert tm.producer_id_and_epoch(TP1) == (PRODUCER_ID, 0)


@pytest.mark.anyio
async def test_unknown_producer_error_should_be_retried_for_future_batches_when_first_fails() -> None:
    """Mirrors SenderTest#testUnknownProducerErrorShouldBeRetriedForFutureBatchesWhenFirstFails:
    UNKNOWN_PRODUCER_ID past the log start offset bumps the epoch and renumbers both batches in
    flight; the second one's own UNKNOWN_PRODUCER_ID (it was renumbered since) just retries."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        assert (producer.client.in_flight_request_count(0), tm.sequence_number(TP0)) == (1, 1)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 1000, log_start_offset=10)
        await settle()
        assert request1.value().offset == 1000
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (0, 1000)
        request2 = await send_one(producer, TP0)
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (2, 0)
        request3 = await send_one(producer, TP0)
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (3, 0)
        assert not request2.done() and not request3.done()
        assert producer.client.in_flight_request_count(0) == 2
        respond_idempotent(brokers, 1, TP0, Errors.UNKNOWN_PRODUCER_ID, -1, log_start_offset=1010)
        await past_retry_backoff()
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0)) == (None, 2)
        assert not request2.done() and not request3.done()
        assert producer.client.in_flight_request_count(0) == 2
        assert tm.producer_epoch == 1
        # The third batch's first answer: its request still carries sequence 2.
        respond_idempotent(brokers, 2, TP0, Errors.UNKNOWN_PRODUCER_ID, -1, log_start_offset=1010, expected_epoch=0)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        assert (tm.last_acked_sequence(TP0), tm.sequence_number(TP0), tm.producer_epoch) == (None, 2, 1)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 1011, log_start_offset=1010, expected_epoch=1)
        await settle()
        assert request2.value().offset == 1011
        assert not request3.done()
        assert producer.client.in_flight_request_count(0) == 0
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (0, 1011)
        await past_retry_backoff()
        assert producer.client.in_flight_request_count(0) == 1
        respond_idempotent(brokers, 1, TP0, Errors.NONE, 1012, log_start_offset=1010, expected_epoch=1)
        await settle()
        assert producer.client.in_flight_request_count(0) == 0
        assert request3.value().offset == 1012
        assert tm.last_acked_offset(TP0) == 1012


@pytest.mark.anyio
async def test_should_raise_out_of_order_sequence_exception_to_user_if_log_was_not_truncated() -> None:
    """Mirrors SenderTest#testShouldRaiseOutOfOrderSequenceExceptionToUserIfLogWasNotTruncated (its
    3.8 content): UNKNOWN_PRODUCER_ID although the log start offset is below the last acknowledged
    offset still makes an idempotent producer bump its epoch and retry."""
    async with sender_env(enable_idempotence=True) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID)
        request1 = await send_one(producer, TP0)
        respond_idempotent(brokers, 0, TP0, Errors.NONE, 1000, log_start_offset=10)
        await settle()
        assert request1.value().offset == 1000
        assert (tm.last_acked_sequence(TP0), tm.last_acked_offset(TP0)) == (0, 1000)
        request2 = await send_one(producer, TP0)
        assert (tm.sequence_number(TP0), tm.last_acked_sequence(TP0)) == (2, 0)
        respond_idempotent(brokers, 1, TP0, Errors.UNKNOWN_PRODUCER_ID, -1, log_start_offset=10)
        await settle()
        assert tm.producer_epoch == 1
        assert tm.last_acked_sequence(TP0) is None
        assert not request2.done()


@pytest.mark.anyio
async def test_close_with_producer_id_reset() -> None:
    """Mirrors SenderTest#testCloseWithProducerIdReset: a close begun while the producer must get a
    new producer id (exhausted epoch) still drains every queued batch once the id arrives."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, PRODUCER_ID, 32767)
        append(producer, TP0)
        append(producer, TP1)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, base_offset=-1),
            TP0: PartitionProduceResponse(index=0, error_code=Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code, base_offset=-1)}))
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer.close)
            await settle()
            assert not tm.has_producer_id()
            assert producer.accumulator.has_undrained()
            await receive_producer_id(brokers, PRODUCER_ID + 1, 1)
            await past_retry_backoff()
            assert not producer.accumulator.has_undrained()
            [resend] = brokers.requests()
            assert set(resend.request.partition_records()) == {TP0, TP1}
            brokers.respond(ProduceResponse.of({TP0: PartitionProduceResponse(index=0, base_offset=0),
                                                TP1: PartitionProduceResponse(index=1, base_offset=0)}))
            await settle()
            assert producer.sender.finished.is_set()



@pytest.mark.anyio
async def test_force_close_with_producer_id_reset() -> None:
    """Mirrors SenderTest#testForceCloseWithProducerIdReset: a forced close while the producer
    waits for a new producer id (exhausted epoch) does not wait for it: every pending record
    fails at once and nothing stays queued."""
    async with sender_env(enable_idempotence=True, retries=10) as (brokers, producer):
        tm = producer.transaction_manager
        await receive_producer_id(brokers, 1, 32767)
        failed = append(producer, TP0)
        successful = append(producer, TP1)
        await settle()
        assert producer.client.in_flight_request_count(0) == 1
        brokers.respond(ProduceResponse.of({
            TP1: PartitionProduceResponse(index=1, error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, base_offset=-1),
            TP0: PartitionProduceResponse(index=0, error_code=Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code, base_offset=-1)}))
        await settle()
        assert not tm.has_producer_id()
        assert len(brokers.requests(InitProducerIdRequest)) == 1
        producer.sender.force_close()
        await settle()
        assert producer.sender.finished.is_set()
        assert not producer.accumulator.has_undrained()
        assert successful.done() and failed.done()
        assert str(successful.exception()) == "Producer is closed forcefully."
        assert producer.client.in_flight_request_count(0) == 0


# --------------------------------------------------------------------------------------------
# Leader changes (KIP-951)
# --------------------------------------------------------------------------------------------

TP2 = TopicPartition("test", 2)


def update_metadata(brokers: SenderBrokers, producer: KafkaProducer) -> None:
    """Kafka's client.updateMetadata: the producer's metadata takes the brokers' answer now."""
    producer.metadata.update(producer.metadata.request_version, brokers.metadata_response(), producer.time.milliseconds())
    producer.sender.wakeup()


def leadership_response(errors: dict[TopicPartition, tuple[int, Errors]],
                        leaders: dict[TopicPartition, tuple[int, int]] | None = None,
                        nodes: list[Node] | None = None) -> ProduceResponse:
    """SenderTest's produceResponse(responses, partitionLeaderInfo, nodes): per-partition offset and
    error, the current leader (id, epoch) of some, and the endpoints of the new leaders."""
    leaders = leaders or {}
    return ProduceResponse.of(
        {tp: PartitionProduceResponse(index=tp.partition, error_code=error.code, base_offset=offset,
                                      current_leader=LeaderIdAndEpoch(leader_id=leaders[tp][0], leader_epoch=leaders[tp][1])
                                      if tp in leaders else LeaderIdAndEpoch())
         for tp, (offset, error) in errors.items()},
        node_endpoints=[NodeEndpoint(node_id=n.id, host=n.host, port=n.port, rack=n.rack) for n in nodes or []])


@pytest.mark.anyio
async def test_producer_batch_retries_when_partition_leader_changes() -> None:
    """Mirrors SenderTest#testProducerBatchRetriesWhenPartitionLeaderChanges: a retried batch goes
    at once when the partition's leader epoch moved on, and waits the backoff otherwise."""
    async with sender_env(epochs={TP0: 100, TP1: 0}, linger_ms=0, retries=10) as (brokers, producer):
        future = append(producer, TP0)
        await settle()
        assert producer.client.in_flight_request_count() == 1 and in_flight_batches(producer, TP0) == 1
        brokers.respond(produce_response(TP0, -1, Errors.NOT_LEADER_OR_FOLLOWER))
        await settle()
        assert not future.done()
        assert in_flight_batches(producer, TP0) == 0 and brokers.requests() == []
        # 1. Epoch 101 for tp0 arrives: the retry goes now, within the backoff.
        brokers.partition_epochs[TP0] = 101
        update_metadata(brokers, producer)
        await settle()
        assert in_flight_batches(producer, TP0) == 1 and len(brokers.requests()) == 1
        assert producer.accumulator.retry_backoff_ms == RETRY_BACKOFF_MS
        brokers.respond(produce_response(TP0, -1, Errors.NOT_LEADER_OR_FOLLOWER))
        await settle()
        assert not future.done()
        # 2. Another retry to the same epoch waits the backoff.
        assert in_flight_batches(producer, TP0) == 0
        assert producer.client.has_in_flight_requests() is False and brokers.requests() == []
        # 3. After it, the batch is sent again.
        await anyio.sleep(2 * RETRY_BACKOFF_MS / 1000)
        await settle()
        assert in_flight_batches(producer, TP0) == 1 and len(brokers.requests()) == 1
        brokers.respond(produce_response(TP0, 999))
        await settle()
        assert future.done()
        assert future.value().offset == 999


@pytest.mark.anyio
async def test_when_produce_response_returns_with_a_leader_ship_change_error_but_no_new_leader_information() -> None:
    """Mirrors SenderTest#testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation:
    the metadata stays as it was (an update is requested) and the retries wait the backoff."""
    leaders = {TP0: 0, TP1: 0, TP2: 0}
    async with sender_env(leaders, epochs={TP0: 100, TP1: 200, TP2: 300}, linger_ms=0, retries=10) as (brokers, producer):
        futures = [append(producer, tp) for tp in (TP0, TP1, TP2)]
        await settle()
        assert [in_flight_batches(producer, tp) for tp in (TP0, TP1, TP2)] == [1, 1, 1]
        assert producer.client.has_in_flight_requests() is True
        starting = producer.metadata.fetch()
        assert [starting.leader_epoch_for(tp) for tp in (TP0, TP1, TP2)] == [100, 200, 300]
        brokers.respond(leadership_response({TP0: (-1, Errors.NOT_LEADER_OR_FOLLOWER),
                                             TP1: (-1, Errors.NOT_LEADER_OR_FOLLOWER), TP2: (100, Errors.NONE)}))
        await settle()
        assert [f.done() for f in futures] == [False, False, True]
        assert futures[2].value().offset == 100
        assert producer.metadata.fetch() == starting
        assert producer.metadata.update_requested() is True
        # The retries wait the backoff: nothing in flight.
        assert in_flight_batches(producer, TP0) == 0 and in_flight_batches(producer, TP1) == 0
        assert producer.client.has_in_flight_requests() is False and brokers.requests() == []


@pytest.mark.anyio
async def test_when_produce_response_returns_with_a_leader_ship_change_error_and_new_leader_information() -> None:
    """Mirrors SenderTest#testWhenProduceResponseReturnsWithALeaderShipChangeErrorAndNewLeaderInformation:
    the leaders the response names (with their endpoints) go into the metadata at once, an update is
    still requested, and the retries skip the backoff to the new leaders."""
    leaders = {TP0: 0, TP1: 0, TP2: 0}
    async with sender_env(leaders, nodes=(0, 9990, 9991), listed_nodes=(0,), epochs={TP0: 100, TP1: 200, TP2: 300},
                          linger_ms=0, retries=10) as (brokers, producer):
        futures = [append(producer, tp) for tp in (TP0, TP1, TP2)]
        await settle()
        assert [in_flight_batches(producer, tp) for tp in (TP0, TP1, TP2)] == [1, 1, 1]
        assert producer.client.has_in_flight_requests() is True
        starting = producer.metadata.fetch()
        assert sorted(starting.nodes) == [0]
        new_tp0 = Node(9990, "newhost9990", 9990, "newrack9990")
        new_tp1 = Node(9991, "newhost9991", 9991, "newrack9991")
        brokers.respond(leadership_response(
            {TP0: (-1, Errors.NOT_LEADER_OR_FOLLOWER), TP1: (-1, Errors.NOT_LEADER_OR_FOLLOWER), TP2: (100, Errors.NONE)},
            {TP0: (new_tp0.id, 101), TP1: (new_tp1.id, 201)}, [new_tp0, new_tp1]))
        await settle()
        assert [f.done() for f in futures] == [False, False, True]
        # The metadata names the new leaders, with the endpoints the response gave.
        metadata = producer.metadata
        assert metadata.fetch() != starting
        assert metadata.current_leader(TP0) == LeaderAndEpoch(9990, 101)
        assert metadata.current_leader(TP1) == LeaderAndEpoch(9991, 201)
        assert metadata.current_leader(TP2) == LeaderAndEpoch(0, 300)
        assert metadata.fetch().node_by_id(9990) == new_tp0 and metadata.fetch().node_by_id(9991) == new_tp1
        assert metadata.update_requested() is True
        # The retries went at once, each to its new leader.
        assert in_flight_batches(producer, TP0) == 1 and in_flight_batches(producer, TP1) == 1
        assert producer.client.has_in_flight_requests() is True
        assert sorted((e.dst, sorted(map(str, e.request.partition_records()))) for e in brokers.requests()) == [
            (9990, ["test-0"]), (9991, ["test-1"])]
