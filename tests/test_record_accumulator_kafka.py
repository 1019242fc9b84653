"""Ports of Kafka 3.8.0 RecordAccumulatorTest
(clients/src/test/java/org/apache/kafka/clients/producer/internals/RecordAccumulatorTest.java).

The accumulator is driven directly, as Kafka's test does: appends with a fixed timestamp 0,
``ready`` / ``drain`` / ``expired_batches`` against a MetadataSnapshot in which partitions 0 and
1 of "test" are led by node 0 and partition 2 by node 1, and a clock that is just a number.

Not ported:
- testSplitAndReenqueue, testSplitBatchOffAccumulator, testSplitFrequency: kafka_ref keeps no
  per-topic compression-ratio estimate and never splits a batch (MESSAGE_TOO_LARGE fails it).
- testAppendLargeOldMessageFormat*, testIdempotenceWithOldMagic: only the v2 record format is modelled.
- testStressfulSituation: exercises thread safety; one event loop has no concurrent appenders.
- testExponentialRetryBackoff, testExponentialRetryBackoffLeaderChange: kafka_ref's retry backoff
  is the constant retry.backoff.ms (no KIP-580 growth towards retry.backoff.max.ms, no jitter).
  The KIP-951 leader-change shortcut of the backoff is ported
  (testReadyAndDrainWhenABatchIsBeingRetried, whose waits fall on the same side of either backoff).
- testAbortUnsentBatches, testRecordsDrainedWhenTransactionCompleting: transactions are not modelled.
- testStickyBatches, testUniformBuiltInPartitioner, testAdaptiveBuiltInPartitioner,
  testBuiltInPartitionerFractionalBatches: the partition choice lives in the producer
  (partitioner.py), not in RecordAccumulator#append, and there are no per-node queue-size stats.
- Buffer-pool memory accounting (BufferPool, buffer.memory) and metrics are not modelled.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.clients.client_metadata import MetadataSnapshot, Node, PartitionMetadata
from kafka_ref.clients.record_accumulator import RecordAccumulator
from kafka_ref.common.errors import Errors, KafkaException
from kafka_ref.common.records import RECORD_BATCH_OVERHEAD, SimpleRecord
from kafka_ref.common.records.constants import CompressionType
from kafka_ref.common.records.record import size_in_bytes
from kafka_ref.common.topic_partition import TopicPartition

TOPIC = "test"
NODE1, NODE2 = 0, 1
TP1, TP2, TP3 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1), TopicPartition(TOPIC, 2)
KEY, VALUE = b"key", b"value"
MSG_SIZE = size_in_bytes(0, 0, KEY, VALUE, ())
INT_MAX = 2**31 - 1


def snapshot(leaders: dict[TopicPartition, int], nodes: tuple[int, ...] = (NODE1, NODE2),
             epochs: dict[TopicPartition, int] | None = None) -> MetadataSnapshot:
    """A metadata view with the given partition leaders (and leader epochs, none unless told), in the given order."""
    epochs = epochs or {}
    return MetadataSnapshot(nodes={n: Node(n) for n in nodes},
                            partitions={tp: PartitionMetadata(Errors.NONE, tp, leader, epochs.get(tp))
                                        for tp, leader in leaders.items()})


CLUSTER = snapshot({TP1: NODE1, TP2: NODE1, TP3: NODE2})


def accumulator(batch_size: int, linger_ms: int, delivery_timeout_ms: int = 3200,
                retry_backoff_ms: int = 100) -> RecordAccumulator:
    """createTestRecordAccumulator: retry backoff 100 ms, delivery timeout 3200 ms unless told."""
    return RecordAccumulator(batch_size, linger_ms, retry_backoff_ms, delivery_timeout_ms)


def append(accum: RecordAccumulator, tp: TopicPartition, now: int, value: bytes = VALUE, callback=None):
    return accum.append(tp, SimpleRecord(KEY, value, (), 0), callback, now)


def expected_num_appends(batch_size: int) -> int:
    """How many key/value records fit in ``batch_size`` bytes of record data."""
    size = offset_delta = 0
    while True:
        record_size = size_in_bytes(offset_delta, 0, KEY, VALUE, ())
        if size + record_size > batch_size:
            return offset_delta
        offset_delta += 1
        size += record_size


def drained_partitions(batches: dict[int, list]) -> list[TopicPartition]:
    return [b.topic_partition for node in sorted(batches) for b in batches[node]]


def test_drain_batches() -> None:
    """Mirrors RecordAccumulatorTest#testDrainBatches."""
    tp4 = TopicPartition(TOPIC, 3)
    cluster = snapshot({TP1: NODE1, TP2: NODE1, TP3: NODE2, tp4: NODE2})
    batch_size = len(VALUE) + RECORD_BATCH_OVERHEAD
    accum = accumulator(batch_size, INT_MAX)
    for tp in (TP1, TP2, TP3, tp4):
        append(accum, tp, 0)
    # One batch fills a request: node 0 sends tp1, node 1 sends tp3.
    assert drained_partitions(accum.drain(cluster, [NODE1, NODE2], batch_size, 0)) == [TP1, TP3]
    append(accum, TP1, 0)
    append(accum, TP3, 0)
    # Each node carries on from the partition where it stopped.
    assert drained_partitions(accum.drain(cluster, [NODE1, NODE2], batch_size, 0)) == [TP2, tp4]
    assert drained_partitions(accum.drain(cluster, [NODE1, NODE2], batch_size, 0)) == [TP1, TP3]
    for tp in (TP2, TP3, tp4):
        append(accum, tp, 0)
    accum.mute_partition(tp4)
    assert drained_partitions(accum.drain(cluster, [NODE1, NODE2], batch_size, 0)) == [TP2, TP3]
    for tp in (TP1, TP2, TP3):
        append(accum, tp, 0)
    accum.unmute_partition(tp4)
    assert drained_partitions(accum.drain(cluster, [NODE1, NODE2], INT_MAX, 0)) == [TP1, TP2, TP3, tp4]


def test_full() -> None:
    """Mirrors RecordAccumulatorTest#testFull."""
    batch_size = 1025
    accum = accumulator(batch_size + RECORD_BATCH_OVERHEAD, 10)
    appends = expected_num_appends(batch_size)
    for _ in range(appends):
        append(accum, TP1, 0)
        dq = accum.get_deque(TP1)
        assert len(dq) == 1
        assert not dq[0].is_full() and not dq[0].closed_for_appends
        assert accum.ready(CLUSTER, 0).ready_nodes == set()
    # The next record does not fit: a second batch, the first one is sendable.
    result = append(accum, TP1, 0)
    assert (result.new_batch_created, result.batch_is_full) == (True, True)
    dq = accum.get_deque(TP1)
    assert len(dq) == 2 and dq[0].record_count == appends and dq[1].record_count == 1
    assert accum.ready(CLUSTER, 0).ready_nodes == {NODE1}
    batches = accum.drain(CLUSTER, [NODE1], INT_MAX, 0)[NODE1]
    assert len(batches) == 1
    records = list(batches[0].records_for_request().records())
    assert [(r.offset, r.key, r.value) for r in records] == [(i, KEY, VALUE) for i in range(appends)]


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.GZIP])
def test_append_large(compression: CompressionType) -> None:
    """Mirrors RecordAccumulatorTest#testAppendLargeNonCompressed and #testAppendLargeCompressed."""
    batch_size = 512
    value = bytes(2 * batch_size)
    accum = RecordAccumulator(batch_size + RECORD_BATCH_OVERHEAD, 0, 100, 3200, compression)
    append(accum, TP1, 0, value=value)
    assert accum.ready(CLUSTER, 0).ready_nodes == {NODE1}
    dq = accum.get_deque(TP1)
    assert len(dq) == 1
    built = list(dq[0].records_for_request().batches)
    assert len(built) == 1 and built[0].base_offset == 0
    assert built[0].compression_type == compression
    records = list(built[0])
    assert [(r.offset, r.key, r.value, r.timestamp) for r in records] == [(0, KEY, value, 0)]


def test_linger() -> None:
    """Mirrors RecordAccumulatorTest#testLinger."""
    linger_ms = 10
    accum = accumulator(1024 + RECORD_BATCH_OVERHEAD, linger_ms)
    append(accum, TP1, 0)
    assert accum.ready(CLUSTER, 0).ready_nodes == set()
    assert accum.ready(CLUSTER, 10).ready_nodes == {NODE1}
    batches = accum.drain(CLUSTER, [NODE1], INT_MAX, 10)[NODE1]
    assert len(batches) == 1
    assert [(r.key, r.value) for r in batches[0].records_for_request().records()] == [(KEY, VALUE)]


def test_partial_drain() -> None:
    """Mirrors RecordAccumulatorTest#testPartialDrain."""
    accum = accumulator(1024 + RECORD_BATCH_OVERHEAD, 10)
    appends = 1024 // MSG_SIZE + 1
    for tp in (TP1, TP2):
        for _ in range(appends):
            append(accum, tp, 0)
    assert accum.ready(CLUSTER, 0).ready_nodes == {NODE1}
    # The size bound lets only one partition's batch into the request.
    assert len(accum.drain(CLUSTER, [NODE1], 1024, 0)[NODE1]) == 1


def test_next_ready_check_delay() -> None:
    """Mirrors RecordAccumulatorTest#testNextReadyCheckDelay."""
    linger_ms = 10
    batch_size = 1025
    accum = accumulator(batch_size + RECORD_BATCH_OVERHEAD, linger_ms)
    appends = expected_num_appends(batch_size)
    for _ in range(appends):
        append(accum, TP1, 0)
    result = accum.ready(CLUSTER, 0)
    assert (result.ready_nodes, result.next_ready_check_delay_ms) == (set(), linger_ms)
    now = linger_ms // 2
    for _ in range(appends):
        append(accum, TP3, now)
    result = accum.ready(CLUSTER, now)
    assert (result.ready_nodes, result.next_ready_check_delay_ms) == (set(), linger_ms // 2)
    for _ in range(appends + 1):
        append(accum, TP2, now)
    result = accum.ready(CLUSTER, now)
    assert result.ready_nodes == {NODE1}
    assert result.next_ready_check_delay_ms <= linger_ms


def test_retry_backoff() -> None:
    """Mirrors RecordAccumulatorTest#testRetryBackoff (constant backoff: no jitter bound to add)."""
    linger_ms = INT_MAX // 16
    retry_backoff_ms = INT_MAX // 8
    accum = accumulator(1024 + RECORD_BATCH_OVERHEAD, linger_ms, delivery_timeout_ms=INT_MAX,
                        retry_backoff_ms=retry_backoff_ms)
    append(accum, TP1, 0)
    result = accum.ready(CLUSTER, linger_ms + 1)
    assert result.ready_nodes == {NODE1}
    batches = accum.drain(CLUSTER, result.ready_nodes, INT_MAX, linger_ms + 1)
    assert list(batches) == [NODE1] and len(batches[NODE1]) == 1
    # Back to the head of its queue at time 0; tp2 gets a fresh record.
    accum.reenqueue(batches[NODE1][0], 0)
    append(accum, TP2, 0)
    result = accum.ready(CLUSTER, linger_ms + 1)
    assert result.ready_nodes == {NODE1}
    # tp1 is still backing off; tp2 goes.
    batches = accum.drain(CLUSTER, result.ready_nodes, INT_MAX, linger_ms + 1)
    assert drained_partitions(batches) == [TP2]
    # After the backoff tp1 goes.
    result = accum.ready(CLUSTER, retry_backoff_ms + 1)
    assert result.ready_nodes == {NODE1}
    batches = accum.drain(CLUSTER, result.ready_nodes, INT_MAX, retry_backoff_ms + 1)
    assert drained_partitions(batches) == [TP1]
    assert batches[NODE1][0].attempts == 1


@pytest.mark.anyio
async def test_flush() -> None:
    """Mirrors RecordAccumulatorTest#testFlush."""
    accum = accumulator(4 * 1024 + RECORD_BATCH_OVERHEAD, INT_MAX)
    tps = (TP1, TP2, TP3)
    for i in range(100):
        append(accum, tps[i % 3], 0)
        assert accum.has_incomplete()
    assert accum.ready(CLUSTER, 0).ready_nodes == set()
    accum.begin_flush()
    result = accum.ready(CLUSTER, 0)
    assert result.ready_nodes == {NODE1, NODE2}
    drained = accum.drain(CLUSTER, sorted(result.ready_nodes), INT_MAX, 0)
    assert accum.has_incomplete()
    assert sorted(b.record_count for batches in drained.values() for b in batches) == [33, 33, 34]
    for batches in drained.values():
        for batch in batches:
            batch.done(0, -1, None)
            accum.deallocate(batch)
    await accum.await_flush_completion()
    assert not accum.has_undrained()
    assert not accum.has_incomplete()
    assert not accum.flush_in_progress()


@pytest.mark.anyio
async def test_await_flush_complete() -> None:
    """Mirrors RecordAccumulatorTest#testAwaitFlushComplete: an interrupted wait (a cancelled one
    here) still ends the flush."""
    accum = accumulator(4 * 1024 + RECORD_BATCH_OVERHEAD, INT_MAX)
    append(accum, TP1, 0)
    accum.begin_flush()
    assert accum.flush_in_progress()
    with anyio.move_on_after(1.0) as scope:
        await accum.await_flush_completion()
    assert scope.cancelled_caught
    assert not accum.flush_in_progress()


def test_abort_incomplete_batches() -> None:
    """Mirrors RecordAccumulatorTest#testAbortIncompleteBatches."""
    num_records = 100
    errors: list[str] = []

    def callback(metadata, exc) -> None:
        assert metadata is None
        errors.append(str(exc))

    accum = accumulator(128 + RECORD_BATCH_OVERHEAD, INT_MAX)
    tps = (TP1, TP2, TP3)
    for i in range(num_records):
        accum.append(tps[i % 3], SimpleRecord(KEY, VALUE, (), 0), callback, 0)
    result = accum.ready(CLUSTER, 0)
    assert result.ready_nodes
    drained = accum.drain(CLUSTER, sorted(result.ready_nodes), INT_MAX, 0)
    assert accum.has_undrained() and accum.has_incomplete()
    drained_records = 0
    for batches in drained.values():
        for batch in batches:
            assert batch.closed_for_appends
            assert not batch.produce_future.completed
            drained_records += batch.record_count
    assert 0 < drained_records < num_records
    accum.abort_incomplete_batches(KafkaException("Producer is closed forcefully."))
    assert errors == ["Producer is closed forcefully."] * num_records
    assert not accum.has_undrained()
    assert not accum.has_incomplete()


@pytest.mark.parametrize("delivery_timeout_ms", [3200, INT_MAX])
def test_expired_batch_single(delivery_timeout_ms: int) -> None:
    """Mirrors RecordAccumulatorTest#testExpiredBatchSingle and #testExpiredBatchSingleMaxValue."""
    linger_ms = 300
    accum = accumulator(1025 + RECORD_BATCH_OVERHEAD, linger_ms, delivery_timeout_ms=delivery_timeout_ms)
    now = 0
    for mute in (False, True):
        append(accum, TP1, now)
        assert accum.ready(CLUSTER, now).ready_nodes == set()
        now += linger_ms
        assert accum.ready(CLUSTER, now).ready_nodes == {NODE1}
        assert accum.expired_batches(now) == []
        if mute:
            accum.mute_partition(TP1)
        else:
            accum.unmute_partition(TP1)
        # A muted partition's queued batch expires too.
        now += delivery_timeout_ms - linger_ms
        expired = accum.expired_batches(now)
        assert len(expired) == 1 and expired[0].closed_for_appends
        assert accum.ready(CLUSTER, now).ready_nodes == set()


def test_expired_batches() -> None:
    """Mirrors RecordAccumulatorTest#testExpiredBatches."""
    retry_backoff_ms, linger_ms, request_timeout, delivery_timeout_ms = 100, 30, 60, 3200
    batch_size = 1025
    accum = accumulator(batch_size + RECORD_BATCH_OVERHEAD, linger_ms, delivery_timeout_ms=delivery_timeout_ms)
    appends = expected_num_appends(batch_size)
    now = 0
    # 1. Batches not in retry: a full one and the next; both expire, muted or not.
    for _ in range(appends):
        append(accum, TP1, now)
        assert accum.ready(CLUSTER, now).ready_nodes == set()
    append(accum, TP1, now)
    assert accum.ready(CLUSTER, now).ready_nodes == {NODE1}
    now += delivery_timeout_ms + 1
    accum.mute_partition(TP1)
    assert [b.record_count for b in accum.expired_batches(now)] == [appends, 1]
    accum.unmute_partition(TP1)
    assert accum.expired_batches(now) == []
    assert accum.ready(CLUSTER, now).ready_nodes == set()
    now += linger_ms + request_timeout + 1
    accum.mute_partition(TP1)
    assert accum.expired_batches(now) == []
    accum.unmute_partition(TP1)
    assert accum.expired_batches(now) == []
    assert accum.ready(CLUSTER, now).ready_nodes == set()
    # 2. A retried batch: far from its delivery timeout, it does not expire, muted or not.
    append(accum, TP1, now)
    created = now
    now += linger_ms
    ready = accum.ready(CLUSTER, now).ready_nodes
    assert ready == {NODE1}
    drained = accum.drain(CLUSTER, ready, INT_MAX, now)
    assert len(drained[NODE1]) == 1
    now += 1000
    accum.reenqueue(drained[NODE1][0], now)
    now += request_timeout + retry_backoff_ms
    assert accum.expired_batches(now) == []
    now += 1
    accum.mute_partition(TP1)
    assert accum.expired_batches(now) == []
    accum.unmute_partition(TP1)
    assert accum.expired_batches(now) == []
    # (its expiry counts from its creation, not from the retry)
    assert accum.next_batch_expiry_time_ms == created + delivery_timeout_ms
    assert len(accum.expired_batches(created + delivery_timeout_ms)) == 1
    # 3. A batch whose partition is muted (throttled) is not expired before its time either.
    now = created + delivery_timeout_ms
    append(accum, TP1, now)
    now += linger_ms
    assert accum.ready(CLUSTER, now).ready_nodes == {NODE1}
    now += request_timeout + 1
    accum.mute_partition(TP1)
    assert accum.expired_batches(now) == []
    accum.unmute_partition(TP1)
    assert accum.expired_batches(now) == []
    now += 100
    assert accum.expired_batches(now) == []
    assert accum.ready(CLUSTER, now).ready_nodes == {NODE1}


def test_muted_partitions() -> None:
    """Mirrors RecordAccumulatorTest#testMutedPartitions."""
    batch_size = 1025
    accum = accumulator(batch_size + RECORD_BATCH_OVERHEAD, 10)
    for _ in range(expected_num_appends(batch_size)):
        append(accum, TP1, 0)
        assert accum.ready(CLUSTER, 0).ready_nodes == set()
    now = 2000
    accum.mute_partition(TP1)
    assert accum.ready(CLUSTER, now).ready_nodes == set()
    accum.unmute_partition(TP1)
    result = accum.ready(CLUSTER, now)
    assert result.ready_nodes == {NODE1}
    accum.mute_partition(TP1)
    assert accum.drain(CLUSTER, result.ready_nodes, INT_MAX, now)[NODE1] == []
    accum.unmute_partition(TP1)
    assert drained_partitions(accum.drain(CLUSTER, result.ready_nodes, INT_MAX, now)) == [TP1]


def test_soon_to_expire_batches_are_picked_up_for_expiry() -> None:
    """Mirrors RecordAccumulatorTest#testSoonToExpireBatchesArePickedUpForExpiry."""
    linger_ms = 500
    accum = accumulator(1025 + RECORD_BATCH_OVERHEAD, linger_ms)
    append(accum, TP1, 0)
    ready = accum.ready(CLUSTER, 0).ready_nodes
    assert accum.drain(CLUSTER, ready, INT_MAX, 0) == {}
    now = linger_ms + 1
    ready = accum.ready(CLUSTER, now).ready_nodes
    assert drained_partitions(accum.drain(CLUSTER, ready, INT_MAX, now)) == [TP1]
    append(accum, TP2, now)
    now += linger_ms * 4
    ready = accum.ready(CLUSTER, now).ready_nodes
    assert drained_partitions(accum.drain(CLUSTER, ready, INT_MAX, now)) == [TP2]


def test_expired_batches_retry() -> None:
    """Mirrors RecordAccumulatorTest#testExpiredBatchesRetry."""
    linger_ms, rtt, delivery_timeout_ms = 3000, 1000, 3200
    accum = accumulator(1025 + RECORD_BATCH_OVERHEAD, linger_ms)
    now = 0
    for mute in (False, True):
        append(accum, TP1, now)
        now += linger_ms
        ready = accum.ready(CLUSTER, now).ready_nodes
        assert ready == {NODE1}
        drained = accum.drain(CLUSTER, ready, INT_MAX, now)
        assert len(drained[NODE1]) == 1
        now += rtt
        accum.reenqueue(drained[NODE1][0], now)
        if mute:
            accum.mute_partition(TP1)
        else:
            accum.unmute_partition(TP1)
        now += delivery_timeout_ms - rtt
        # Unmuted, the retried batch is drained again before it can expire; muted, it stays and expires.
        accum.drain(CLUSTER, [NODE1], INT_MAX, now)
        assert len(accum.expired_batches(now)) == (1 if mute else 0)


def test_drain_with_a_node_that_doesnt_host_any_partitions() -> None:
    """Mirrors RecordAccumulatorTest#testDrainWithANodeThatDoesntHostAnyPartitions."""
    accum = accumulator(10, 10)
    cluster = snapshot({TP1: NODE1})
    assert accum.drain(cluster, [NODE2], 999999, 0) == {NODE2: []}


def test_ready_and_drain_when_a_batch_is_being_retried() -> None:
    """Mirrors RecordAccumulatorTest#testReadyAndDrainWhenABatchIsBeingRetried (KIP-951).

    A retried batch backs off unless its partition's leader epoch moved on since its last attempt.
    Kafka's backoff here grows from 100 ms towards 1000 ms; kafka_ref's stays at 100 ms, and the
    waits below (1 ms, 2000 ms) are on the same side of both.
    """
    linger_ms, retry_backoff_ms, retry_backoff_max_ms = 10, 100, 1000
    accum = accumulator(10, linger_ms, delivery_timeout_ms=INT_MAX, retry_backoff_ms=retry_backoff_ms)
    epoch = 100

    def cluster() -> MetadataSnapshot:
        return snapshot({TP1: NODE1}, epochs={TP1: epoch})

    now = 0
    append(accum, TP1, now)
    # 1. First attempt: ready and drained; the batch learns epoch 100 at attempt 0.
    now += linger_ms + 1
    result = accum.ready(cluster(), now)
    assert NODE1 in result.ready_nodes
    batches = accum.drain(cluster(), result.ready_nodes, 999999, now)
    [batch] = batches[NODE1]
    assert (batch.current_leader_epoch, batch.attempts_when_leader_last_changed) == (100, 0)
    accum.reenqueue(batch, now)
    # 2. Retry within the backoff, same leader epoch: backs off; nothing drained.
    now += 1
    assert NODE1 not in accum.ready(cluster(), now).ready_nodes
    assert accum.drain(cluster(), {NODE1}, 999999, now) == {NODE1: []}
    # 3. Retry within the backoff, new leader epoch: no backoff.
    now += 1
    epoch += 1
    result = accum.ready(cluster(), now)
    assert NODE1 in result.ready_nodes
    [batch] = accum.drain(cluster(), result.ready_nodes, 999999, now)[NODE1]
    assert (batch.current_leader_epoch, batch.attempts_when_leader_last_changed) == (101, 1)
    accum.reenqueue(batch, now)
    # 4. Retry after the backoff, same epoch: no backoff; the epoch's attempt stays 1.
    now += 2 * retry_backoff_max_ms
    result = accum.ready(cluster(), now)
    assert NODE1 in result.ready_nodes
    [batch] = accum.drain(cluster(), result.ready_nodes, 999999, now)[NODE1]
    assert (batch.current_leader_epoch, batch.attempts_when_leader_last_changed) == (101, 1)
    accum.reenqueue(batch, now)
    # 5. Retry after the backoff, new epoch: no backoff; the epoch changed at attempt 3.
    now += 2 * retry_backoff_max_ms
    epoch += 1
    result = accum.ready(cluster(), now)
    assert NODE1 in result.ready_nodes
    [batch] = accum.drain(cluster(), result.ready_nodes, 999999, now)[NODE1]
    assert (batch.current_leader_epoch, batch.attempts_when_leader_last_changed) == (102, 3)
    accum.reenqueue(batch, now)
    assert batch.attempts == 4
