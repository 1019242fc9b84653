"""SubscriptionState, case by case against Kafka 3.8's SubscriptionStateTest.

Each test re-enacts one case of clients/src/test/java/org/apache/kafka/clients/consumer/
internals/SubscriptionStateTest.java on kafka_ref.clients.subscription_state.SubscriptionState
(user assignment, positions, resets, KIP-320 validation, KIP-392 read replica lease, the
offsets a fetch reports). Broker 1 stands in for Kafka's ``new Node(1, "localhost", 9092)``.

Not ported:
- partitionAssignmentChangeOnTopicSubscription, testGroupSubscribe,
  partitionAssignmentChangeOnPatternSubscription, verifyAssignmentId, topicSubscription,
  invalidPositionUpdate, cantAssignPartitionForUnsubscribedTopics, patternSubscription,
  unsubscribeUserAssignment, unsubscribeUserSubscribe, unsubscription: the subscribed topics
  (those a pattern matched too), the group subscription and assignment ids live in kafka_ref's
  ConsumerCoordinator, not in SubscriptionState (the subscription type and the pattern do: the
  cantSubscribe* and cantAssignPartitionForUnmatchedPattern cases are ported).
- testMarkingPartitionPending, testAssignedPartitionsAwaitingCallback* (3): no pending
  revocation nor rebalance-callback states (no ConsumerRebalanceListener in kafka_ref).
- cantChangePositionForNonAssignedPartition: SubscriptionState#position(tp, position) (the
  fetcher's position update) is not a separate method here; the fetcher moves it in place.
- resetOffsetNoValidation's old-broker half and the old-API half of
  testMaybeValidatePositionForCurrentLeader: every kafka_ref broker speaks OffsetsForLeaderEpoch
  v3+, so there is no ApiVersions check (the new-API halves are ported).
"""

from __future__ import annotations

import re

import pytest

from kafka_ref.clients.client_metadata import LeaderAndEpoch
from kafka_ref.clients.subscription_state import FetchPosition, SubscriptionState, SubscriptionType
from kafka_ref.common.errors import IllegalStateException, KafkaException
from kafka_ref.common.topic_partition import TopicPartition

TP0 = TopicPartition("test", 0)
TP1 = TopicPartition("test", 1)
UNASSIGNED = TopicPartition("unassigned", 0)
BROKER1 = 1
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def state(strategy: str = "earliest") -> SubscriptionState:
    """Kafka's fixture: a SubscriptionState with the EARLIEST default unless told."""
    return SubscriptionState(strategy)


def awaiting_validation_at(offset: int = 10, offset_epoch: int = 5, leader_epoch: int = 10,
                           strategy: str = "earliest") -> tuple[SubscriptionState, FetchPosition]:
    """tp0 assigned and sought (unvalidated) to ``offset`` of epoch ``offset_epoch`` under broker 1's ``leader_epoch``."""
    subs = state(strategy)
    subs.assign_from_user([TP0])
    position = FetchPosition(offset, offset_epoch, LeaderAndEpoch(BROKER1, leader_epoch))
    subs.seek_unvalidated(TP0, position)
    assert subs.awaiting_validation(TP0)
    return subs, position


def test_partition_assignment() -> None:
    """Mirrors SubscriptionStateTest#partitionAssignment."""
    subs = state()
    subs.assign_from_user([TP0])
    assert subs.assigned_partitions() == {TP0}
    assert subs.num_assigned_partitions() == 1
    assert subs.has_all_fetch_positions() is False
    subs.seek(TP0, 1)
    assert subs.is_fetchable(TP0) is True
    assert subs.position(TP0).offset == 1
    subs.assign_from_user([])
    assert subs.assigned_partitions() == set()
    assert subs.num_assigned_partitions() == 0
    assert subs.is_assigned(TP0) is False
    assert subs.is_fetchable(TP0) is False


def test_partition_reset() -> None:
    """Mirrors SubscriptionStateTest#partitionReset: a requested reset drops the position."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek(TP0, 5)
    assert subs.position(TP0).offset == 5
    subs.request_offset_reset(TP0)
    assert subs.is_fetchable(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is True
    assert subs.position(TP0) is None
    # A seek ends the reset and makes the partition fetchable again.
    subs.seek(TP0, 0)
    assert subs.is_fetchable(TP0) is True
    assert subs.is_offset_reset_needed(TP0) is False


def test_partition_pause() -> None:
    """Mirrors SubscriptionStateTest#partitionPause."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek(TP0, 100)
    assert subs.is_fetchable(TP0) is True
    subs.pause(TP0)
    assert subs.is_fetchable(TP0) is False
    subs.resume(TP0)
    assert subs.is_fetchable(TP0) is True


def test_preferred_read_replica_lease() -> None:
    """Mirrors SubscriptionStateTest#testPreferredReadReplicaLease (the lease ends after its time)."""
    subs = state()
    subs.assign_from_user([TP0])
    assert subs.preferred_read_replica(TP0, 0) is None
    subs.update_preferred_read_replica(TP0, 42, 10)
    assert subs.preferred_read_replica(TP0, 9) == 42
    assert subs.preferred_read_replica(TP0, 10) == 42
    assert subs.preferred_read_replica(TP0, 11) is None
    # Cleared: gone at any time.
    subs.clear_preferred_read_replica(TP0)
    assert subs.preferred_read_replica(TP0, 9) is None
    assert subs.preferred_read_replica(TP0, 11) is None
    # A new replica with its own lease.
    subs.update_preferred_read_replica(TP0, 43, 20)
    assert subs.preferred_read_replica(TP0, 11) == 43
    assert subs.preferred_read_replica(TP0, 20) == 43
    assert subs.preferred_read_replica(TP0, 21) is None
    # Replaced without clearing first.
    subs.update_preferred_read_replica(TP0, 44, 30)
    assert subs.preferred_read_replica(TP0, 30) == 44
    assert subs.preferred_read_replica(TP0, 31) is None


def test_preferred_read_replica_same_replica_keeps_its_lease() -> None:
    """Mirrors SubscriptionState.TopicPartitionState#updatePreferredReadReplica (as used by
    SubscriptionStateTest#testPreferredReadReplicaLease): the same replica named again does not
    extend the lease; only a different replica starts a new one."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.update_preferred_read_replica(TP0, 42, 10)
    subs.update_preferred_read_replica(TP0, 42, 50)
    assert subs.preferred_read_replica(TP0, 10) == 42
    assert subs.preferred_read_replica(TP0, 11) is None


def test_seek_unvalidated_with_no_offset_epoch() -> None:
    """Mirrors SubscriptionStateTest#testSeekUnvalidatedWithNoOffsetEpoch."""
    subs = state()
    subs.assign_from_user([TP0])
    # No epoch for the record before the position: nothing to validate, whatever the leader.
    subs.seek_unvalidated(TP0, FetchPosition(0, None, LeaderAndEpoch(BROKER1, 5)))
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, None)) is False
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, 10)) is False
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False


def test_seek_unvalidated_with_no_epoch_clears_awaiting_validation() -> None:
    """Mirrors SubscriptionStateTest#testSeekUnvalidatedWithNoEpochClearsAwaitingValidation."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek_unvalidated(TP0, FetchPosition(0, 2, LeaderAndEpoch(BROKER1, 5)))
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is True
    subs.seek_unvalidated(TP0, FetchPosition(0, None, LeaderAndEpoch(BROKER1, 5)))
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False


def test_seek_unvalidated_with_offset_epoch() -> None:
    """Mirrors SubscriptionStateTest#testSeekUnvalidatedWithOffsetEpoch."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek_unvalidated(TP0, FetchPosition(0, 2, LeaderAndEpoch(BROKER1, 5)))
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is True
    # The same leader and epoch: still awaiting.
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, 5)) is True
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is True
    # A newer epoch: awaiting again, against it.
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, 15)) is True
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is True
    assert subs.position(TP0) == FetchPosition(0, 2, LeaderAndEpoch(BROKER1, 15))
    # A leader without an epoch: nothing to validate against, fetch.
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, None)) is False
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False


def test_seek_validated_should_clear_awaiting_validation() -> None:
    """Mirrors SubscriptionStateTest#testSeekValidatedShouldClearAwaitingValidation."""
    subs, _ = awaiting_validation_at(10, 5, 10)
    assert subs.has_valid_position(TP0) is False
    assert subs.position(TP0).offset == 10
    subs.seek_validated(TP0, FetchPosition(8, 4, LeaderAndEpoch(BROKER1, 10)))
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False
    assert subs.position(TP0).offset == 8


def test_complete_validation_should_clear_awaiting_validation() -> None:
    """Mirrors SubscriptionStateTest#testCompleteValidationShouldClearAwaitingValidation."""
    subs, _ = awaiting_validation_at(10, 5, 10)
    assert subs.has_valid_position(TP0) is False
    subs.complete_validation(TP0)
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False
    assert subs.position(TP0).offset == 10


def test_offset_reset_while_awaiting_validation() -> None:
    """Mirrors SubscriptionStateTest#testOffsetResetWhileAwaitingValidation."""
    subs, _ = awaiting_validation_at(10, 5, 10)
    subs.request_offset_reset(TP0, "earliest")
    assert subs.awaiting_validation(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is True


def test_maybe_complete_validation() -> None:
    """Mirrors SubscriptionStateTest#testMaybeCompleteValidation: the epoch ends past the position."""
    subs, initial = awaiting_validation_at(10, 5, 10)
    assert subs.maybe_complete_validation(TP0, initial, 15, 5) is None
    assert subs.awaiting_validation(TP0) is False
    assert subs.position(TP0) == initial


def test_maybe_validate_position_for_current_leader() -> None:
    """Mirrors SubscriptionStateTest#testMaybeValidatePositionForCurrentLeader (brokers with a usable
    OffsetsForLeaderEpoch; an unassigned partition is skipped)."""
    subs, _ = awaiting_validation_at(10, 5, 10)
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, 10)) is True
    assert subs.has_valid_position(TP0) is False
    assert subs.maybe_validate_position_for_current_leader(TP1, LeaderAndEpoch(BROKER1, 10)) is False
    assert TP1 not in subs.assigned_partitions()


def test_maybe_complete_validation_after_position_change() -> None:
    """Mirrors SubscriptionStateTest#testMaybeCompleteValidationAfterPositionChange: a stale answer is ignored."""
    subs, initial = awaiting_validation_at(10, 5, 10)
    update = FetchPosition(20, 8, LeaderAndEpoch(BROKER1, 10))
    subs.seek_unvalidated(TP0, update)
    assert subs.maybe_complete_validation(TP0, initial, 15, 5) is None
    assert subs.awaiting_validation(TP0) is True
    assert subs.position(TP0) == update


def test_maybe_complete_validation_after_offset_reset() -> None:
    """Mirrors SubscriptionStateTest#testMaybeCompleteValidationAfterOffsetReset."""
    subs, initial = awaiting_validation_at(10, 5, 10)
    subs.request_offset_reset(TP0)
    assert subs.maybe_complete_validation(TP0, initial, 15, 5) is None
    assert subs.awaiting_validation(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is True
    assert subs.position(TP0) is None


def test_truncation_detection_with_reset_policy() -> None:
    """Mirrors SubscriptionStateTest#testTruncationDetectionWithResetPolicy: back to the divergence point."""
    subs, initial = awaiting_validation_at(10, 5, 10)
    assert subs.maybe_complete_validation(TP0, initial, 5, 7) is None
    assert subs.awaiting_validation(TP0) is False
    assert subs.position(TP0) == FetchPosition(5, 7, LeaderAndEpoch(BROKER1, 10))


def test_truncation_detection_without_reset_policy() -> None:
    """Mirrors SubscriptionStateTest#testTruncationDetectionWithoutResetPolicy: the truncation is
    reported (request position, divergent offset) and the partition keeps awaiting validation."""
    subs, initial = awaiting_validation_at(10, 5, 10, strategy="none")
    assert subs.maybe_complete_validation(TP0, initial, 5, 7) == (initial, 5)
    assert subs.awaiting_validation(TP0) is True
    assert subs.position(TP0) == initial


def test_truncation_detection_unknown_divergent_offset_with_reset_policy() -> None:
    """Mirrors SubscriptionStateTest#testTruncationDetectionUnknownDivergentOffsetWithResetPolicy."""
    subs, initial = awaiting_validation_at(10, 5, 10, strategy="earliest")
    assert subs.maybe_complete_validation(TP0, initial, -1, -1) is None
    assert subs.awaiting_validation(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is True
    assert subs.reset_strategy(TP0) == "earliest"


def test_truncation_detection_unknown_divergent_offset_without_reset_policy() -> None:
    """Mirrors SubscriptionStateTest#testTruncationDetectionUnknownDivergentOffsetWithoutResetPolicy."""
    subs, initial = awaiting_validation_at(10, 5, 10, strategy="none")
    assert subs.maybe_complete_validation(TP0, initial, -1, -1) == (initial, None)
    assert subs.awaiting_validation(TP0) is True


def test_reset_offset_no_validation() -> None:
    """Mirrors SubscriptionStateTest#resetOffsetNoValidation (the parts that do not depend on an old
    broker): a reset waits for no validation; a seek with epochs after a reset awaits one."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.request_offset_reset(TP0, "earliest")
    # While a reset is due, a leader update validates nothing.
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(BROKER1, None)) is False
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is True
    # The reset completes through an unvalidated seek without epochs.
    subs.seek_unvalidated(TP0, FetchPosition(10))
    assert subs.has_valid_position(TP0) is True
    assert subs.awaiting_validation(TP0) is False
    assert subs.is_offset_reset_needed(TP0) is False
    # Reset again and complete it with a position that carries epochs: AWAIT_VALIDATION.
    subs.request_offset_reset(TP0, "earliest")
    subs.seek_unvalidated(TP0, FetchPosition(10, 10, LeaderAndEpoch(BROKER1, 2)))
    assert subs.has_valid_position(TP0) is False
    assert subs.awaiting_validation(TP0) is True
    assert subs.is_offset_reset_needed(TP0) is False


def test_null_position_lag_on_no_position() -> None:
    """Mirrors SubscriptionStateTest#nullPositionLagOnNoPosition."""
    subs = state()
    subs.assign_from_user([TP0])
    assert subs.partition_lag(TP0, READ_UNCOMMITTED) is None
    assert subs.partition_lag(TP0, READ_COMMITTED) is None
    subs.try_updating_high_watermark(TP0, 1)
    subs.try_updating_last_stable_offset(TP0, 1)
    assert subs.partition_lag(TP0, READ_UNCOMMITTED) is None
    assert subs.partition_lag(TP0, READ_COMMITTED) is None


def test_position_or_null() -> None:
    """Mirrors SubscriptionStateTest#testPositionOrNull."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek(TP0, 5)
    assert subs.position_or_null(TP0).offset == 5
    assert subs.position_or_null(UNASSIGNED) is None


def test_try_updating_high_watermark() -> None:
    """Mirrors SubscriptionStateTest#testTryUpdatingHighWatermark."""
    subs = state()
    subs.assign_from_user([TP0])
    assert subs.try_updating_high_watermark(TP0, 10) is True
    assert subs.partition_end_offset(TP0, READ_UNCOMMITTED) == 10
    assert subs.try_updating_high_watermark(UNASSIGNED, 10) is False


def test_try_updating_log_start_offset() -> None:
    """Mirrors SubscriptionStateTest#testTryUpdatingLogStartOffset."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.seek(TP0, 25)
    assert subs.try_updating_log_start_offset(TP0, 10) is True
    assert subs.partition_lead(TP0) == 15
    assert subs.try_updating_log_start_offset(UNASSIGNED, 10) is False


def test_try_updating_last_stable_offset() -> None:
    """Mirrors SubscriptionStateTest#testTryUpdatingLastStableOffset."""
    subs = state()
    subs.assign_from_user([TP0])
    assert subs.try_updating_last_stable_offset(TP0, 10) is True
    assert subs.partition_end_offset(TP0, READ_COMMITTED) == 10
    assert subs.try_updating_last_stable_offset(UNASSIGNED, 10) is False


def test_try_updating_preferred_read_replica() -> None:
    """Mirrors SubscriptionStateTest#testTryUpdatingPreferredReadReplica."""
    subs = state()
    subs.assign_from_user([TP0])
    now = 1_000
    assert subs.try_updating_preferred_read_replica(TP0, 10, now + 60000) is True
    assert subs.preferred_read_replica(TP0, now) == 10
    assert subs.try_updating_preferred_read_replica(UNASSIGNED, 10, now + 60000) is False
    assert subs.preferred_read_replica(UNASSIGNED, now) is None


def test_request_offset_reset_if_partition_assigned() -> None:
    """Mirrors SubscriptionStateTest#testRequestOffsetResetIfPartitionAssigned (an unassigned
    partition is left alone; asking about it fails)."""
    subs = state()
    subs.assign_from_user([TP0])
    subs.request_offset_reset_if_partition_assigned(TP0)
    assert subs.is_offset_reset_needed(TP0) is True
    subs.request_offset_reset_if_partition_assigned(UNASSIGNED)
    with pytest.raises(KafkaException, match="No current assignment for partition unassigned-0"):
        subs.is_offset_reset_needed(UNASSIGNED)


# -- pattern subscriptions (the type and the pattern live here; the matched topics in ConsumerCoordinator) --


def test_cant_subscribe_topic_and_pattern() -> None:
    """Mirrors SubscriptionStateTest#cantSubscribeTopicAndPattern."""
    subs = state()
    subs.subscribe()
    with pytest.raises(IllegalStateException):
        subs.subscribe_pattern(re.compile(".*"))


def test_cant_subscribe_partition_and_pattern() -> None:
    """Mirrors SubscriptionStateTest#cantSubscribePartitionAndPattern."""
    subs = state()
    subs.assign_from_user([TP0])
    with pytest.raises(IllegalStateException):
        subs.subscribe_pattern(re.compile(".*"))


def test_cant_subscribe_pattern_and_topic() -> None:
    """Mirrors SubscriptionStateTest#cantSubscribePatternAndTopic."""
    subs = state()
    subs.subscribe_pattern(re.compile(".*"))
    with pytest.raises(IllegalStateException):
        subs.subscribe()


def test_cant_subscribe_pattern_and_partition() -> None:
    """Mirrors SubscriptionStateTest#cantSubscribePatternAndPartition."""
    subs = state()
    subs.subscribe_pattern(re.compile(".*"))
    with pytest.raises(IllegalStateException):
        subs.assign_from_user([TP0])


def test_cant_assign_partition_for_unmatched_pattern() -> None:
    """Mirrors SubscriptionStateTest#cantAssignPartitionForUnmatchedPattern (the subscribed topics passed
    in, as ConsumerCoordinator keeps them): "t1" does not match ".*t" whole; "test" does."""
    subs = state()
    subs.subscribe_pattern(re.compile(".*t"))
    assert not subs.check_assignment_matched_subscription([TopicPartition("t1", 0)], ["test"])
    assert subs.check_assignment_matched_subscription([TP0], ["test"])
    assert subs.has_pattern_subscription() and subs.has_auto_assigned_partitions()
    subs.unsubscribe()
    assert (subs.subscription_type, subs.subscribed_pattern) == (SubscriptionType.NONE, None)
