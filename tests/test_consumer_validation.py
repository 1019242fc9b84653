"""KIP-320 on the consumer: a position is validated against a new leader's log before fetching.

After Kafka's OffsetFetcherTest / FetcherTest validation cases (testOffsetValidationTriggerLogTruncation
with and without a reset policy, testOffsetValidationCompleted when the epoch ends past the
position) and SubscriptionStateTest (testMaybeCompleteValidation, testMaybeValidatePositionForCurrentLeader).

The scenario: the consumer reads offsets 0-4 written in epoch 0 on broker 0, while broker 1 (cut
off after offset 3) falls out of the ISR; broker 1 then becomes leader in epoch 1 with only
offsets 0-2 and takes new writes at 3 and 4. Without validation the consumer's position 5 equals
the new log end and it silently skips the new offsets 3 and 4; with validation the new leader says
epoch 0 ends at 3, and the consumer continues from there.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.clients import Consumer, LogTruncationException
from kafka_ref.clients.client_metadata import LeaderAndEpoch
from kafka_ref.clients.subscription_state import FetchPosition, SubscriptionState

pytestmark = pytest.mark.anyio
TP = TopicPartition("t", 0)


def test_subscription_state_validation_rules() -> None:
    """SubscriptionStateTest: a new leader epoch puts a position with a known record epoch into
    validation; the answer keeps it (epoch ends at or past it), moves it back to the divergence
    point, or resets it when the leader has no end for that epoch."""
    subs = SubscriptionState("earliest")
    subs.assign_from_user([TP])
    subs.seek_validated(TP, FetchPosition(5, 0, LeaderAndEpoch(0, 0)))
    assert not subs.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(0, 0))  # unchanged
    assert subs.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(1, 1))
    assert subs.partitions_needing_validation(0) == [TP] and subs.fetchable_partitions(0) == []
    request = subs.position(TP)
    assert subs.maybe_complete_validation(TP, FetchPosition(4, 0, LeaderAndEpoch(1, 1)), 3, 0) is None  # stale: ignored
    assert subs.partitions_needing_validation(0) == [TP]
    assert subs.maybe_complete_validation(TP, request, 3, 0) is None
    assert subs.position(TP) == FetchPosition(3, 0, LeaderAndEpoch(1, 1)) and subs.fetchable_partitions(0) == [TP]
    # The epoch ends past the position: valid as it is.
    subs.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(2, 2))
    assert subs.maybe_complete_validation(TP, subs.position(TP), 7, 0) is None and subs.position(TP).offset == 3
    # No end offset for the epoch: reset; a position without a record epoch is not validated.
    subs.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(0, 3))
    subs.maybe_complete_validation(TP, subs.position(TP), -1, -1)
    assert subs.assignment[TP].reset_strategy == "earliest"
    subs.seek_unvalidated(TP, FetchPosition(2, None, LeaderAndEpoch(0, 3)))
    assert not subs.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(1, 4))
    none_policy = SubscriptionState("none")
    none_policy.assign_from_user([TP])
    none_policy.seek_validated(TP, FetchPosition(5, 0, LeaderAndEpoch(0, 0)))
    none_policy.maybe_validate_position_for_current_leader(TP, LeaderAndEpoch(1, 1))
    assert none_policy.maybe_complete_validation(TP, none_policy.position(TP), 3, 0) == (none_policy.position(TP), 3)


async def _truncated_leader_change(cluster: Cluster, consumer: Consumer) -> None:
    """Epoch 0 on broker 0 (offsets 0-4 read by the consumer), then broker 1 leads epoch 1 with 0-2 and new 3-4."""
    await cluster.set_partition_state("t", leader=0, leader_epoch=0, isr=[0, 1], replicas=[0, 1], is_new=True)
    await cluster.produce(0, "t", 0, [b"e0-%d" % i for i in range(3)], acks=-1)
    await cluster.wait_until(lambda: cluster.replica_state(1, "t", 0).log_end_offset == 3, message="follower has 0-2")
    cluster.network.cut_link(0, 1)
    await cluster.produce(0, "t", 0, [b"e0-3", b"e0-4"], acks=1)
    # The leader drops the silent follower from the ISR after replica.lag.time.max.ms; then HW = 5.
    await cluster.wait_until(lambda: cluster.replica_state(0, "t", 0).high_watermark == 5, timeout_ms=60000,
                             message="ISR shrank, HW 5")
    consumer.assign([TP])
    got: list[bytes] = []
    with anyio.fail_after(30):
        while len(got) < 5:
            got += [r.value for r in await consumer.poll(200)]
    assert got == [b"e0-%d" % i for i in range(5)]
    # Broker 1 leads epoch 1 without offsets 3-4 and takes two new writes there.
    await cluster.set_partition_state("t", leader=1, leader_epoch=1, isr=[1], replicas=[0, 1])
    result = await cluster.produce(1, "t", 0, [b"e1-3", b"e1-4"], acks=1)
    assert result.base_offset == 3


async def test_consumer_moves_back_to_the_divergence_point() -> None:
    """testOffsetValidationTriggerLogTruncation with a reset policy: the consumer reads the new
    leader's offsets 3 and 4 instead of skipping them."""
    async with Cluster(brokers=2, metadata_mode="manual", config={"replica.lag.time.max.ms": 10000}) as cluster:
        consumer = Consumer(cluster.network, [0, 1], client_id="validating", auto_offset_reset="earliest",
                            metadata_max_age_ms=1000)
        await _truncated_leader_change(cluster, consumer)
        got: list[tuple[int, bytes]] = []
        with anyio.fail_after(30):
            while len(got) < 2:
                got += [(r.offset, r.value) for r in await consumer.poll(200)]
        assert got == [(3, b"e1-3"), (4, b"e1-4")]
        assert consumer.subscriptions.position(TP).offset == 5
        consumer.close()


async def test_consumer_without_reset_policy_raises_log_truncation() -> None:
    """testOffsetValidationTriggerLogTruncation without a reset policy: LogTruncationException
    names the partition and the divergent offset 3."""
    async with Cluster(brokers=2, metadata_mode="manual", config={"replica.lag.time.max.ms": 10000}) as cluster:
        consumer = Consumer(cluster.network, [0, 1], client_id="strict", auto_offset_reset="none", metadata_max_age_ms=1000)
        consumer.assign([TP])
        consumer.seek(TP, 0)
        await _truncated_leader_change(cluster, consumer)
        with pytest.raises(LogTruncationException) as info:
            with anyio.fail_after(30):
                while True:
                    await consumer.poll(200)
        assert info.value.divergent_offsets == {TP: 3}
        consumer.close()
