"""kafka_ref's consumer end to end, manual assignment and offsets: poll, max.poll.records,
position and seek, commitSync, commitAsync and committed(), out-of-range resets, fetch sizes and records
larger than them, lead and lag.

Ports of Kafka 3.8.0's ``PlaintextConsumerPollTest``, ``PlaintextConsumerCommitTest``,
``PlaintextConsumerFetchTest`` and ``PlaintextConsumerAssignTest`` (the classic group protocol)
in ZooKeeper and KRaft mode, against kafka_ref's in-process ``Cluster`` set up as
``AbstractConsumerTest`` does: three brokers, controlled shutdown off, one ``__consumer_offsets``
partition with three replicas, group session timeouts between 100 ms and 60 s, a 10 ms initial
rebalance delay, and "topic" with two partitions on all three brokers; consumers in group
"my-test" with ``auto.offset.reset`` earliest, no auto-commit and ``metadata.max.age.ms`` 100;
producers with acks=all. Group subscriptions and rebalance listeners are in
``tests/test_plaintext_consumer_group_kafka.py``. Kafka reads the wall clock for record
timestamps; here ``cluster.now_ms()`` runs on the loop's virtual time, and Kafka's
``TestUtils.pollUntilTrue`` loops (wall-clock bounded) become loops bounded in virtual time.
Where Kafka asserts an exception's class, the class is asserted exactly. kafka_ref's commitAsync
goes out at the next poll (there is no background network thread), so the callbacks Kafka
awaits with ``pollUntilTrue`` come the same way.

Not ported:
- The group protocol parameter's "consumer" value (KIP-848's new consumer): kafka_ref models
  the classic protocol only; so PlaintextConsumerCommitTest#testCommitAsyncCompletedBeforeConsumerCloses
  and #testCommitAsyncCompletedBeforeCommitSyncReturns (new consumer only) are left out.
- Auto-commit (PlaintextConsumerCommitTest#testAutoCommitOnClose, #testAutoCommitOnCloseAfterWakeup,
  #testAutoCommitOnRebalance) and interceptors (#testAutoCommitIntercept): not modelled.
- PlaintextConsumerPollTest#testMaxPollIntervalMs, #testMaxPollIntervalMsDelayInRevocation,
  #testMaxPollIntervalMsDelayInAssignment and #testMaxPollIntervalMsShorterThanPollTimeout:
  max.poll.interval.ms (the heartbeat thread leaving the group) is not modelled.
- PlaintextConsumerPollTest#testDeprecatedPollBlocksForAssignment: the deprecated poll(long),
  which blocks until the group assigns partitions whatever the timeout, does not exist here.
- The metrics registry of PlaintextConsumerPollTest#testPerPartitionLeadWithMaxPollRecords and
  #testPerPartitionLagWithMaxPollRecords: there are no metrics; the two tests read the
  SubscriptionState values those metrics report.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster
from kafka_ref.clients.consumer import NoOffsetForPartitionException, RetriableCommitFailedException
from kafka_ref.clients.consumer_coordinator_offsets import OffsetAndMetadata
from kafka_ref.common.errors import IllegalStateException, OffsetOutOfRangeException
from kafka_ref.common.records import TimestampType
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

BROKER_COUNT = 3
TOPIC = "topic"
TP = TopicPartition(TOPIC, 0)
TP2 = TopicPartition(TOPIC, 1)
GROUP = "my-test"
BROKER_CONFIG = {"controlled.shutdown.enable": False, "offsets.topic.replication.factor": 3,
                 "offsets.topic.num.partitions": 1, "group.min.session.timeout.ms": 100,
                 "group.max.session.timeout.ms": 60000, "group.initial.rebalance.delay.ms": 10}
BOTH = pytest.mark.parametrize("mode", ["zk", "kraft"])


class ConsumerTest:
    """AbstractConsumerTest's harness: the cluster, "topic" with two partitions, and its clients."""

    def __init__(self, mode: str) -> None:
        self.cluster = Cluster(brokers=BROKER_COUNT, metadata_mode=mode, config=BROKER_CONFIG)

    async def __aenter__(self) -> ConsumerTest:
        await self.cluster.__aenter__()
        await self.cluster.create_topic(TOPIC, partitions=2, replication_factor=BROKER_COUNT)
        return self

    async def __aexit__(self, *exc_info) -> bool | None:
        return await self.cluster.__aexit__(*exc_info)

    def consumer(self, **overrides):
        """AbstractConsumerTest's consumerConfig (createConsumer)."""
        config = {"client_id": "ConsumerTestConsumer", "group_id": GROUP, "auto_offset_reset": "earliest",
                  "metadata_max_age_ms": 100, "max_poll_interval_ms": 6000}
        config.update(overrides)
        return self.cluster.consumer(**config)

    def producer(self, **overrides):
        return self.cluster.producer(acks=-1, client_id="ConsumerTestProducer", **overrides)


async def send_records(producer, num_records: int, tp: TopicPartition, starting_timestamp: int) -> list[tuple]:
    """AbstractConsumerTest#sendRecords: "key i" / "value i" with timestamps starting_timestamp + i, then flush."""
    records = []
    for i in range(num_records):
        key, value, timestamp = f"key {i}".encode(), f"value {i}".encode(), starting_timestamp + i
        producer.send_nowait(tp.topic, value, key=key, partition=tp.partition, timestamp=timestamp)
        records.append((tp.topic, tp.partition, key, value, timestamp))
    await producer.flush()
    return records


async def consume_records(consumer, num_records: int, max_poll_records: int | None = None,
                          timeout_ms: int = 60000) -> list:
    """AbstractConsumerTest#consumeRecords: poll until at least ``num_records`` arrived; no poll
    returns more than ``max_poll_records``."""
    records: list = []
    with anyio.fail_after(timeout_ms / 1000):
        while len(records) < num_records:
            polled = await consumer.poll(100)
            if max_poll_records is not None:
                assert len(polled) <= max_poll_records
            records.extend(polled)
    return records


async def consume_and_verify_records(consumer, num_records: int, starting_offset: int,
                                     starting_key_and_value_index: int = 0, starting_timestamp: int = 0,
                                     timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                                     tp: TopicPartition = TP, max_poll_records: int | None = None) -> None:
    """AbstractConsumerTest#consumeAndVerifyRecords: the next ``num_records`` records are the ones
    sent, in order, at offsets from ``starting_offset``."""
    records = (await consume_records(consumer, num_records, max_poll_records))[:num_records]
    expected = []
    for i in range(num_records):
        index = starting_key_and_value_index + i
        key, value = f"key {index}".encode(), f"value {index}".encode()
        expected.append((tp.topic, tp.partition, starting_offset + i, key, value, starting_timestamp + i, timestamp_type,
                         len(key), len(value)))
    assert [(r.topic, r.partition, r.offset, r.key, r.value, r.timestamp, r.timestamp_type,
             r.serialized_key_size, r.serialized_value_size) for r in records] == expected


async def await_non_empty_records(consumer, partition: TopicPartition, poll_timeout_ms: int = 100,
                                  timeout_ms: int = 15000) -> list:
    """AbstractConsumerTest#awaitNonEmptyRecords: the first poll that returns records of ``partition``."""
    with anyio.fail_after(timeout_ms / 1000):
        while True:
            polled = await consumer.poll(poll_timeout_ms)
            if any(r.topic == partition.topic and r.partition == partition.partition for r in polled):
                return polled
            if poll_timeout_ms == 0:
                await anyio.sleep(0.001)   # a real poll loop takes time; virtual time must move too


class CountConsumerCommitCallback:
    """AbstractConsumerTest.CountConsumerCommitCallback: successes, failures and the last error."""

    def __init__(self) -> None:
        self.success_count = 0
        self.fail_count = 0
        self.last_error: BaseException | None = None

    def __call__(self, offsets, exception) -> None:
        if exception is None:
            self.success_count += 1
        else:
            self.fail_count += 1
            self.last_error = exception


async def poll_until(consumer, condition, timeout_ms: int = 10000) -> None:
    """TestUtils.pollUntilTrue: poll(100) until ``condition()`` holds."""
    with anyio.fail_after(timeout_ms / 1000):
        while not condition():
            await consumer.poll(100)


async def send_and_await_async_commit(consumer, offsets=None) -> None:
    """AbstractConsumerTest#sendAndAwaitAsyncCommit: commitAsync, again after a RetriableCommitFailedException,
    polling until the callback reported the end; it must be a success."""
    outcome: list = []

    def callback(committed, exception):
        if isinstance(exception, RetriableCommitFailedException):
            consumer.commit_async(offsets, callback)
        else:
            outcome.append(exception)

    consumer.commit_async(offsets, callback)
    await poll_until(consumer, lambda: bool(outcome))
    assert outcome == [None]


# --------------------------------------------------------------------------------------------
# PlaintextConsumerPollTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_max_poll_records(mode: str):
    """Mirrors PlaintextConsumerPollTest#testMaxPollRecords: 10,000 records read two per poll."""
    async with ConsumerTest(mode) as t:
        max_poll_records, num_records = 2, 10000
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer(max_poll_records=max_poll_records) as consumer:
            consumer.assign([TP])
            await consume_and_verify_records(consumer, num_records, 0, max_poll_records=max_poll_records,
                                             starting_timestamp=starting_timestamp)


@BOTH
async def test_per_partition_lead_with_max_poll_records(mode: str):
    """Mirrors PlaintextConsumerPollTest#testPerPartitionLeadWithMaxPollRecords: after the first
    ten records the lead (position minus log start offset, the records-lead metric) is 10."""
    async with ConsumerTest(mode) as t:
        num_messages, max_poll_records = 1000, 10
        async with t.producer() as producer:
            await send_records(producer, num_messages, TP, t.cluster.now_ms())
        async with t.consumer(group_id="testPerPartitionLeadWithMaxPollRecords",
                              client_id="testPerPartitionLeadWithMaxPollRecords",
                              max_poll_records=max_poll_records) as consumer:
            consumer.assign([TP])
            records = await await_non_empty_records(consumer, TP)
            assert len(records) == max_poll_records
            assert consumer.subscriptions.partition_lead(TP) == max_poll_records


@BOTH
async def test_per_partition_lag_with_max_poll_records(mode: str):
    """Mirrors PlaintextConsumerPollTest#testPerPartitionLagWithMaxPollRecords: the lag (high
    watermark minus position, the records-lag metric) is what is left after the first poll."""
    async with ConsumerTest(mode) as t:
        num_messages, max_poll_records = 1000, 10
        async with t.producer() as producer:
            await send_records(producer, num_messages, TP, t.cluster.now_ms())
        async with t.consumer(group_id="testPerPartitionLagWithMaxPollRecords",
                              client_id="testPerPartitionLagWithMaxPollRecords",
                              max_poll_records=max_poll_records) as consumer:
            consumer.assign([TP])
            records = await await_non_empty_records(consumer, TP)
            assert consumer.subscriptions.partition_lag(TP, 0) == num_messages - len(records) == 990


async def _run_multi_consumer_session_timeout_test(t: ConsumerTest, close_consumer: bool) -> None:
    """PlaintextConsumerPollTest#runMultiConsumerSessionTimeoutTest: three members polling "topic"
    and "topic1" (6 partitions) share the 8 partitions; one stops polling (and is closed, or not)
    and the other two share all 8 once it left (LeaveGroup) or its session expired."""
    cluster = t.cluster
    async with t.producer() as producer:
        await send_records(producer, 100, TP, cluster.now_ms())
        await send_records(producer, 100, TP2, cluster.now_ms())
        topic1 = "topic1"
        await cluster.create_topic(topic1, partitions=6, replication_factor=BROKER_COUNT)
        for p in range(6):
            await send_records(producer, 100, TopicPartition(topic1, p), cluster.now_ms())
    subscriptions = {TP, TP2} | {TopicPartition(topic1, p) for p in range(6)}
    consumers = [t.consumer(client_id=f"consumer-{i}") for i in range(3)]
    for consumer in consumers:
        assert consumer.assignment() == set()
        consumer.subscribe([TOPIC, topic1])
    stopped: set[int] = set()

    async def poller(index: int) -> None:
        # AbstractConsumerTest.ConsumerAssignmentPoller#doWork: poll(50) until shut down.
        while index not in stopped:
            await consumers[index].poll(50)

    def assignment_valid(members: list) -> bool:
        # AbstractConsumerTest#isPartitionAssignmentValid.
        assignments = [m.assignment() for m in members]
        return (all(assignments) and sum(len(a) for a in assignments) == len(subscriptions)
                and set().union(*assignments) == subscriptions)

    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(poller, i)
        await cluster.wait_until(lambda: assignment_valid(consumers), timeout_ms=10000, message="initial assignment")
        stopped.add(2)
        await anyio.sleep(0.1)   # the poller's last poll(50) returns
        if close_consumer:
            consumers[2].close()
        left = cluster.now_ms()
        await cluster.wait_until(lambda: assignment_valid(consumers[:2]), timeout_ms=3 * 60000,
                                 message="assignment after one consumer left")
        # Closing sends LeaveGroup (a rebalance at once); a silent member is removed when its 45 s
        # session, counted from its last heartbeat (at most heartbeat.interval.ms 3 s before it
        # stopped), expires.
        if close_consumer:
            assert cluster.now_ms() - left < 3000
        else:
            assert 45000 - 3000 <= cluster.now_ms() - left < 45000 + 3000
        stopped.update((0, 1))
    for consumer in consumers:
        consumer.close()


@BOTH
async def test_multi_consumer_session_timeout_on_stop_polling(mode: str):
    """Mirrors PlaintextConsumerPollTest#testMultiConsumerSessionTimeoutOnStopPolling."""
    async with ConsumerTest(mode) as t:
        await _run_multi_consumer_session_timeout_test(t, close_consumer=False)


@BOTH
async def test_multi_consumer_session_timeout_on_close(mode: str):
    """Mirrors PlaintextConsumerPollTest#testMultiConsumerSessionTimeoutOnClose."""
    async with ConsumerTest(mode) as t:
        await _run_multi_consumer_session_timeout_test(t, close_consumer=True)


@BOTH
async def test_poll_eventually_returns_records_with_zero_timeout(mode: str):
    """Mirrors PlaintextConsumerPollTest#testPollEventuallyReturnsRecordsWithZeroTimeout: a
    subscribed consumer polling with timeout 0 joins, and one poll returns all 100 records."""
    async with ConsumerTest(mode) as t:
        num_messages = 100
        async with t.producer() as producer:
            await send_records(producer, num_messages, TP, t.cluster.now_ms())
        async with t.consumer() as consumer:
            consumer.subscribe([TOPIC])
            records = await await_non_empty_records(consumer, TP, poll_timeout_ms=0)
            assert len(records) == num_messages


@BOTH
async def test_no_offset_for_partition_exception_on_poll_zero(mode: str):
    """Mirrors PlaintextConsumerPollTest#testNoOffsetForPartitionExceptionOnPollZero: with
    auto.offset.reset none and nothing committed, poll(0) ends in NoOffsetForPartitionException."""
    async with ConsumerTest(mode) as t:
        async with t.consumer(auto_offset_reset="none") as consumer:
            consumer.assign([TP])
            with anyio.fail_after(15):
                while True:
                    try:
                        await consumer.poll(0)
                    except NoOffsetForPartitionException as exc:
                        assert str(exc) == "Undefined offset with no reset policy for partitions: [topic-0]"
                        break
                    await anyio.sleep(0.001)


# --------------------------------------------------------------------------------------------
# PlaintextConsumerCommitTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_commit_metadata(mode: str):
    """Mirrors PlaintextConsumerCommitTest#testCommitMetadata: offset, leader epoch and metadata come
    back from committed(), by commitSync and by commitAsync; Kafka's null metadata is stored as ""."""
    async with ConsumerTest(mode) as t:
        async with t.consumer() as consumer:
            consumer.assign([TP])
            sync_metadata = OffsetAndMetadata(5, 15, "foo")
            await consumer.commit_sync({TP: sync_metadata})
            assert (await consumer.committed({TP}))[TP] == sync_metadata
            async_metadata = OffsetAndMetadata(10, None, "bar")
            await send_and_await_async_commit(consumer, {TP: async_metadata})
            assert (await consumer.committed({TP}))[TP] == async_metadata
            null_metadata = OffsetAndMetadata(5, None, "")
            await consumer.commit_sync({TP: null_metadata})
            assert (await consumer.committed({TP}))[TP] == null_metadata


@BOTH
async def test_commit_specified_offsets(mode: str):
    """Mirrors PlaintextConsumerCommitTest#testCommitSpecifiedOffsets: committing explicit offsets
    leaves the positions alone; an uncommitted partition reads None; commitAsync's offset shows once
    its callback ran."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            await send_records(producer, 5, TP, t.cluster.now_ms())
            await send_records(producer, 7, TP2, t.cluster.now_ms())
        async with t.consumer() as consumer:
            consumer.assign([TP, TP2])
            pos1, pos2 = await consumer.position(TP), await consumer.position(TP2)
            await consumer.commit_sync({TP: OffsetAndMetadata(3)})
            assert (await consumer.committed({TP}))[TP].offset == 3
            assert (await consumer.committed({TP2}))[TP2] is None
            assert (await consumer.position(TP), await consumer.position(TP2)) == (pos1, pos2) == (0, 0)
            await consumer.commit_sync({TP2: OffsetAndMetadata(5)})
            assert (await consumer.committed({TP}))[TP].offset == 3
            assert (await consumer.committed({TP2}))[TP2].offset == 5
            await send_and_await_async_commit(consumer, {TP2: OffsetAndMetadata(7)})
            assert (await consumer.committed({TP2}))[TP2].offset == 7


@BOTH
async def test_async_commit(mode: str):
    """Mirrors PlaintextConsumerCommitTest#testAsyncCommit: five commitAsync calls all succeed, in
    order: the last one (offset 5) is what stays committed."""
    async with ConsumerTest(mode) as t:
        async with t.consumer() as consumer:
            consumer.assign([TP])
            callback = CountConsumerCommitCallback()
            count = 5
            for i in range(1, count + 1):
                consumer.commit_async({TP: OffsetAndMetadata(i)}, callback)
            assert callback.success_count == 0   # sent by the next poll
            await poll_until(consumer, lambda: callback.success_count >= count or callback.last_error is not None)
            assert (callback.last_error, callback.success_count) == (None, count)
            assert (await consumer.committed({TP}))[TP] == OffsetAndMetadata(count)


@BOTH
async def test_subscribe_and_commit_sync(mode: str):
    """Mirrors PlaintextConsumerCommitTest#testSubscribeAndCommitSync: the member id and generation
    from the join go with the commit (it would fail with UNKNOWN_MEMBER_ID otherwise)."""
    async with ConsumerTest(mode) as t:
        async with t.consumer() as consumer:
            assert consumer.assignment() == set()
            consumer.subscribe([TOPIC])
            with anyio.fail_after(15):
                while consumer.assignment() != {TP, TP2}:
                    await consumer.poll(100)
            consumer.seek(TP, 0)
            await consumer.commit_sync()
            assert (await consumer.committed({TP}))[TP].offset == 0


@BOTH
async def test_position_and_commit(mode: str):
    """Mirrors PlaintextConsumerCommitTest#testPositionAndCommit: position() of an unassigned
    partition is an IllegalStateException; of an assigned one it resets to 0; commits follow the
    consumed position, and another member of the group starts from it."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            starting_timestamp = t.cluster.now_ms()
            await send_records(producer, 5, TP, starting_timestamp)
            topic_partition = TopicPartition(TOPIC, 15)
            async with t.consumer() as consumer:
                assert (await consumer.committed({topic_partition}))[topic_partition] is None
                with pytest.raises(IllegalStateException):
                    await consumer.position(topic_partition)
                consumer.assign([TP])
                assert await consumer.position(TP) == 0
                await consumer.commit_sync()
                assert (await consumer.committed({TP}))[TP].offset == 0
                await consume_and_verify_records(consumer, 5, 0, starting_timestamp=starting_timestamp)
                assert await consumer.position(TP) == 5
                await consumer.commit_sync()
                assert (await consumer.committed({TP}))[TP].offset == 5
            starting_timestamp = t.cluster.now_ms()
            await send_records(producer, 1, TP, starting_timestamp)
        async with t.consumer() as other_consumer:
            other_consumer.assign([TP])
            await consume_and_verify_records(other_consumer, 1, 5, starting_key_and_value_index=0,
                                             starting_timestamp=starting_timestamp)


# --------------------------------------------------------------------------------------------
# PlaintextConsumerFetchTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_fetch_invalid_offset(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchInvalidOffset: auto.offset.reset none gives
    NoOffsetForPartitionException without a committed offset, and OffsetOutOfRangeException naming
    the partition and offset after a seek past the end."""
    async with ConsumerTest(mode) as t:
        total_records = 2
        async with t.producer() as producer:
            await send_records(producer, total_records, TP, t.cluster.now_ms())
        async with t.consumer(auto_offset_reset="none") as consumer:
            consumer.assign([TP])
            with pytest.raises(NoOffsetForPartitionException):
                await consumer.poll(15000)
            out_of_range_pos = total_records + 1
            consumer.seek(TP, out_of_range_pos)
            with pytest.raises(OffsetOutOfRangeException) as caught:
                await consumer.poll(20000)
            assert type(caught.value) is OffsetOutOfRangeException
            assert caught.value.offset_out_of_range_partitions == {TP: out_of_range_pos}


@BOTH
async def test_fetch_out_of_range_offset_reset_config_earliest(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchOutOfRangeOffsetResetConfigEarliest: a position
    past the end resets to the beginning."""
    async with ConsumerTest(mode) as t:
        total_records = 10
        async with t.producer() as producer:
            await send_records(producer, total_records, TP, 0)
        async with t.consumer(auto_offset_reset="earliest", fetch_max_wait_ms=0) as consumer:
            consumer.assign([TP])
            await consume_and_verify_records(consumer, total_records, 0)
            consumer.seek(TP, total_records + 1)
            await consume_and_verify_records(consumer, 1, 0)


@BOTH
async def test_fetch_out_of_range_offset_reset_config_latest(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchOutOfRangeOffsetResetConfigLatest: a position
    past the end resets to the end as it was then; the next record read is at offset 10."""
    async with ConsumerTest(mode) as t:
        total_records = 10
        async with t.producer() as producer:
            await send_records(producer, total_records, TP, 0)
            async with t.consumer(auto_offset_reset="latest", fetch_max_wait_ms=0) as consumer:
                consumer.assign([TP])
                consumer.seek(TP, 0)
                await consume_and_verify_records(consumer, total_records // 2, 0)
                consumer.seek(TP, total_records + 17)
                assert await consumer.poll(50) == []
                await send_records(producer, total_records, TP, total_records)
                next_record = (await consumer.poll(50))[0]
                assert next_record.offset == total_records


async def _check_large_record(t: ConsumerTest, producer_record_size: int, **consumer_config) -> None:
    """PlaintextConsumerFetchTest#checkLargeRecord: a record larger than the fetch limit still comes
    back (KIP-74: the first batch of the first partition is always returned whole)."""
    async with t.consumer(**consumer_config) as consumer, t.producer() as producer:
        value = bytes(producer_record_size)
        producer.send_nowait(TOPIC, value, key=b"key", partition=0)
        consumer.assign([TP])
        records = await consumer.poll(20000)
        assert [(r.offset, r.topic, r.partition, r.key, r.value) for r in records] == [(0, TOPIC, 0, b"key", value)]


async def _check_fetch_honours_size_if_large_record_not_first(t: ConsumerTest, large_size: int, **consumer_config) -> None:
    """PlaintextConsumerFetchTest#checkFetchHonoursSizeIfLargeRecordNotFirst: behind a small record,
    a record over the limit waits for the next fetch; the first poll returns the small one alone."""
    async with t.consumer(**consumer_config) as consumer, t.producer() as producer:
        await producer.send(TOPIC, b"value", key=b"small", partition=0)
        await producer.send(TOPIC, bytes(large_size), key=b"large", partition=0)
        consumer.assign([TP])
        records = await consumer.poll(20000)
        assert [(r.offset, r.topic, r.partition, r.key, r.value) for r in records] == [(0, TOPIC, 0, b"small", b"value")]


@BOTH
async def test_fetch_record_larger_than_fetch_max_bytes(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchRecordLargerThanFetchMaxBytes (fetch.max.bytes 10 KiB)."""
    async with ConsumerTest(mode) as t:
        await _check_large_record(t, 10 * 1024 + 1, fetch_max_bytes=10 * 1024)


@BOTH
async def test_fetch_honours_fetch_size_if_large_record_not_first(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchHonoursFetchSizeIfLargeRecordNotFirst."""
    async with ConsumerTest(mode) as t:
        await _check_fetch_honours_size_if_large_record_not_first(t, 10 * 1024, fetch_max_bytes=10 * 1024)


@BOTH
async def test_fetch_honours_max_partition_fetch_bytes_if_large_record_not_first(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchHonoursMaxPartitionFetchBytesIfLargeRecordNotFirst."""
    async with ConsumerTest(mode) as t:
        await _check_fetch_honours_size_if_large_record_not_first(t, 10 * 1024, max_partition_fetch_bytes=10 * 1024)


@BOTH
async def test_fetch_record_larger_than_max_partition_fetch_bytes(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testFetchRecordLargerThanMaxPartitionFetchBytes."""
    async with ConsumerTest(mode) as t:
        await _check_large_record(t, 10 * 1024 + 1, max_partition_fetch_bytes=10 * 1024)


@BOTH
async def test_low_max_fetch_size_for_request_and_partition(mode: str):
    """Mirrors PlaintextConsumerFetchTest#testLowMaxFetchSizeForRequestAndPartition: with
    fetch.max.bytes 500 and max.partition.fetch.bytes 100 a subscribed consumer still reads
    every record of 3 topics x 30 partitions x 30 records."""
    async with ConsumerTest(mode) as t:
        topics = ["topic1", "topic2", "topic3"]
        partition_count = 30
        for name in topics:
            await t.cluster.create_topic(name, partitions=partition_count, replication_factor=BROKER_COUNT)
        partitions = [TopicPartition(name, p) for name in topics for p in range(partition_count)]
        async with t.consumer(fetch_max_bytes=500, max_partition_fetch_bytes=100, max_poll_interval_ms=20000) as consumer:
            assert consumer.assignment() == set()
            consumer.subscribe(topics)
            with anyio.fail_after(15):
                while consumer.assignment() != set(partitions):
                    await consumer.poll(100)
            async with t.producer() as producer:
                produced = []
                for tp in partitions:
                    produced.extend(await send_records(producer, partition_count, tp, t.cluster.now_ms()))
            records = await consume_records(consumer, len(produced))
        assert len(records) == len(produced) == 2700
        assert {(r.topic, r.partition, r.key, r.value, r.timestamp) for r in records} == set(produced)


# --------------------------------------------------------------------------------------------
# PlaintextConsumerAssignTest
# --------------------------------------------------------------------------------------------


@BOTH
async def test_assign_and_commit_async_not_committed(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndCommitAsyncNotCommitted: without a position
    commitAsync commits nothing for the partition, yet its callback reports success."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            await send_records(producer, 10000, TP, t.cluster.now_ms())
        async with t.consumer() as consumer:
            callback = CountConsumerCommitCallback()
            consumer.assign([TP])
            consumer.commit_async(callback=callback)
            await poll_until(consumer, lambda: callback.success_count >= 1 or callback.last_error is not None)
            assert (callback.success_count, callback.last_error) == (1, None)
            assert await consumer.committed({TP}) == {TP: None}
            assert TP in consumer.assignment()


@BOTH
async def test_assign_and_commit_sync_not_committed(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndCommitSyncNotCommitted: without a poll there
    is no position, so commitSync commits nothing for the partition."""
    async with ConsumerTest(mode) as t:
        async with t.producer() as producer:
            await send_records(producer, 10000, TP, t.cluster.now_ms())
        async with t.consumer() as consumer:
            consumer.assign([TP])
            await consumer.commit_sync()
            assert await consumer.committed({TP}) == {TP: None}
            assert TP in consumer.assignment()


@BOTH
async def test_assign_and_commit_sync_all_consumed(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndCommitSyncAllConsumed: 10,000 records read,
    commitSync commits offset 10,000."""
    async with ConsumerTest(mode) as t:
        num_records = 10000
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer() as consumer:
            consumer.assign([TP])
            consumer.seek(TP, 0)
            await consume_and_verify_records(consumer, num_records, 0, starting_timestamp=starting_timestamp)
            await consumer.commit_sync()
            assert (await consumer.committed({TP}))[TP].offset == num_records


@BOTH
async def test_assign_and_consume(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndConsume: no group.id; position 10 after 10 records."""
    async with ConsumerTest(mode) as t:
        num_records = 10
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer(group_id=None) as consumer:
            consumer.assign([TP])
            await consume_and_verify_records(consumer, num_records, 0, starting_timestamp=starting_timestamp)
            assert await consumer.position(TP) == num_records


@BOTH
async def test_assign_and_consume_skipping_position(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndConsumeSkippingPosition: seek(1) skips record 0."""
    async with ConsumerTest(mode) as t:
        num_records = 10
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer(group_id=None) as consumer:
            consumer.assign([TP])
            offset = 1
            consumer.seek(TP, offset)
            await consume_and_verify_records(consumer, num_records - offset, offset, starting_key_and_value_index=offset,
                                             starting_timestamp=starting_timestamp + offset)
            assert await consumer.position(TP) == num_records


async def test_assign_and_consume_with_leader_change_validating_positions():
    """Mirrors PlaintextConsumerAssignTest#testAssignAndConsumeWithLeaderChangeValidatingPositions
    (zk only, as in Kafka): the leader restarts (a clean stop, controlled shutdown off), its
    partition's epoch moves on, and the consumer validates its position and reads on from 10."""
    async with ConsumerTest("zk") as t:
        num_records = 10
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
            async with t.consumer(group_id=None) as consumer:
                consumer.assign([TP])
                await consume_and_verify_records(consumer, num_records, 0, starting_timestamp=starting_timestamp)
                leader = t.cluster.leader_for(TOPIC, 0)
                epoch = t.cluster.partition_state(TOPIC, 0)["leader_epoch"]
                # (KafkaServer#shutdown returns once the broker is down; the controller has moved its
                #  leadership by the time it starts again.)
                t.cluster.shutdown_broker_uncontrolled(leader)
                await t.cluster.wait_broker_gone(leader)
                assert t.cluster.partition_state(TOPIC, 0)["leader_epoch"] > epoch
                await t.cluster.restart_broker(leader)
                await send_records(producer, num_records, TP, starting_timestamp)
                await consume_and_verify_records(consumer, num_records, 10, starting_timestamp=starting_timestamp)


@BOTH
async def test_assign_and_fetch_committed_offsets(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndFetchCommittedOffsets: another consumer of the
    group sees the committed 100."""
    async with ConsumerTest(mode) as t:
        num_records = 100
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer() as consumer:
            consumer.assign([TP])
            consumer.seek(TP, 0)
            await consume_and_verify_records(consumer, num_records, 0, starting_timestamp=starting_timestamp)
            await consumer.commit_sync()
            assert (await consumer.committed({TP}))[TP].offset == num_records
            async with t.consumer() as another_consumer:
                another_consumer.assign([TP])
                assert (await another_consumer.committed({TP}))[TP].offset == num_records


@BOTH
async def test_assign_and_consume_from_committed_offsets(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndConsumeFromCommittedOffsets: a manually
    assigned consumer of group1 starts from the group's committed offset 10, not the reset."""
    async with ConsumerTest(mode) as t:
        num_records = 100
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        offset = 10
        async with t.consumer(group_id="group1") as consumer:
            consumer.assign([TP])
            await consumer.commit_sync({TP: OffsetAndMetadata(offset)})
            assert (await consumer.committed({TP}))[TP].offset == offset
        async with t.consumer(group_id="group1") as another_consumer:
            assert (await another_consumer.committed({TP}))[TP].offset == offset
            another_consumer.assign([TP])
            await consume_and_verify_records(another_consumer, num_records - offset, offset,
                                             starting_key_and_value_index=offset,
                                             starting_timestamp=starting_timestamp + offset)


@BOTH
async def test_assign_and_retrieving_committed_offsets_multiple_times(mode: str):
    """Mirrors PlaintextConsumerAssignTest#testAssignAndRetrievingCommittedOffsetsMultipleTimes."""
    async with ConsumerTest(mode) as t:
        num_records = 100
        starting_timestamp = t.cluster.now_ms()
        async with t.producer() as producer:
            await send_records(producer, num_records, TP, starting_timestamp)
        async with t.consumer() as consumer:
            consumer.assign([TP])
            consumer.seek(TP, 0)
            await consume_and_verify_records(consumer, num_records, 0, starting_timestamp=starting_timestamp)
            await consumer.commit_sync()
            assert (await consumer.committed({TP}))[TP].offset == num_records
            assert (await consumer.committed({TP}))[TP].offset == num_records
