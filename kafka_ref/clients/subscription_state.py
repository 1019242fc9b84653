"""What the consumer consumes and from where: assigned partitions and their fetch positions.

Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState (Kafka 3.x): the
subscription type (user assignment or a group subscription, never both), and per partition the
fetch position (offset, the epoch of the record before it, and the leader to fetch from), a
pending offset reset, a retry backoff, and the offsets the last fetch reported. A pattern
subscription (AUTO_PATTERN) keeps its compiled ``re.Pattern`` here; the subscribed topics (those
the pattern matched too) and the group's assignment come from the ConsumerCoordinator (see
consumer.py). Python's ``re`` stands in for java.util.regex: whole-name matching (Matcher#matches
is ``fullmatch``) and the usual constructs (``.*``, classes, alternation, anchors) behave alike.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Iterable

from kafka_ref.clients.client_metadata import LeaderAndEpoch
from kafka_ref.common.errors import IllegalStateException, KafkaException
from kafka_ref.common.topic_partition import TopicPartition



@dataclass(frozen=True, slots=True)
class FetchPosition:
    """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState.FetchPosition.

    The next offset to fetch, the epoch of the record before it (None when unknown), and the
    leader (with its epoch) to fetch it from.
    """

    offset: int
    offset_epoch: int | None = None
    current_leader: LeaderAndEpoch = LeaderAndEpoch()


@dataclass(slots=True)
class TopicPartitionState:
    """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState.TopicPartitionState."""

    position: FetchPosition | None = None
    reset_strategy: str | None = None
    next_retry_time_ms: int = 0
    high_watermark: int | None = None
    log_start_offset: int | None = None
    last_stable_offset: int | None = None
    paused: bool = False
    # KIP-320: the position must be checked against the new leader's log (OffsetsForLeaderEpoch)
    # before fetching (Kafka's AWAIT_VALIDATION fetch state).
    awaiting_validation: bool = False
    # KIP-392: the replica the leader told us to read from, until this time (then the leader again).
    preferred_read_replica: int | None = None
    preferred_read_replica_expire_time_ms: int = 0

    def awaiting_reset(self) -> bool:
        """Mirrors SubscriptionState.TopicPartitionState#awaitingReset."""
        return self.reset_strategy is not None

    def has_valid_position(self) -> bool:
        """Mirrors SubscriptionState.TopicPartitionState#hasValidPosition: FETCHING (not awaiting a reset
        or a validation)."""
        return self.position is not None and self.reset_strategy is None and not self.awaiting_validation

    def validate_position(self, position: FetchPosition) -> None:
        """Mirrors SubscriptionState.TopicPartitionState#validatePosition: await validation when the
        position knows the epoch of the record before it and the leader's epoch is known, else fetch."""
        self.position = position
        self.reset_strategy = None
        self.next_retry_time_ms = 0
        self.awaiting_validation = position.offset_epoch is not None and position.current_leader.epoch is not None


class SubscriptionType(enum.Enum):
    """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState.SubscriptionType."""

    NONE = "NONE"
    AUTO_TOPICS = "AUTO_TOPICS"  # subscribe(topics): the group assigns partitions
    AUTO_PATTERN = "AUTO_PATTERN"  # subscribe(pattern): the topics it matches, the group assigns partitions
    USER_ASSIGNED = "USER_ASSIGNED"  # assign(partitions)


SUBSCRIPTION_EXCEPTION_MESSAGE = "Subscription to topics, partitions and pattern are mutually exclusive"


class SubscriptionState:
    """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState.

    The subscription type says who owns the assignment: the user (``assign_from_user``) or the
    group (``subscribe`` then ``assign_from_subscribed``); mixing them is an IllegalStateException.
    The subscribed topics themselves live in the ConsumerCoordinator (consumer_coordinator.py).
    """

    def __init__(self, default_reset_strategy: str) -> None:
        self.default_reset_strategy = default_reset_strategy
        self.assignment: dict[TopicPartition, TopicPartitionState] = {}
        self.subscription_type = SubscriptionType.NONE
        # The pattern of subscribe(Pattern) (SubscriptionState#subscribedPattern).
        self.subscribed_pattern: re.Pattern[str] | None = None

    def set_subscription_type(self, subscription_type: SubscriptionType) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#setSubscriptionType.

        1. No subscription yet: take this one; 2. another kind already in use: IllegalStateException.
        """
        if self.subscription_type is SubscriptionType.NONE:
            self.subscription_type = subscription_type
        elif self.subscription_type is not subscription_type:
            raise IllegalStateException(SUBSCRIPTION_EXCEPTION_MESSAGE)

    def subscribe(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#subscribe(Set, listener)'s
        type check (the topics and the listener are kept by the consumer and its coordinator)."""
        self.set_subscription_type(SubscriptionType.AUTO_TOPICS)

    def subscribe_pattern(self, pattern: re.Pattern[str]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#subscribe(Pattern, listener).

        1. The subscription becomes AUTO_PATTERN (IllegalStateException after a topic subscription or
        ``assign``); 2. the pattern replaces any earlier one (the topics it matches are set by
        ConsumerCoordinator#updatePatternSubscription).
        """
        self.set_subscription_type(SubscriptionType.AUTO_PATTERN)
        self.subscribed_pattern = pattern

    def has_pattern_subscription(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#hasPatternSubscription."""
        return self.subscription_type is SubscriptionType.AUTO_PATTERN

    def matches_subscribed_pattern(self, topic: str) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#matchesSubscribedPattern:
        the whole name matches (Java's Matcher#matches), only under a pattern subscription."""
        pattern = self.subscribed_pattern
        if self.has_pattern_subscription() and pattern is not None:
            return pattern.fullmatch(topic) is not None
        return False

    def check_assignment_matched_subscription(self, assignments: Iterable[TopicPartition],
                                              subscription: Iterable[str]) -> bool:
        """Mirrors SubscriptionState#checkAssignmentMatchedSubscription (the subscribed topics passed in,
        as the ConsumerCoordinator keeps them): every assigned topic matches the pattern, or, without
        one, is subscribed."""
        subscribed = set(subscription)
        for tp in assignments:
            if self.subscribed_pattern is not None:
                if self.subscribed_pattern.fullmatch(tp.topic) is None:
                    return False
            elif tp.topic not in subscribed:
                return False
        return True

    def has_auto_assigned_partitions(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#hasAutoAssignedPartitions."""
        return self.subscription_type in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)

    def unsubscribe(self) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#unsubscribe: no
        assignment, no pattern and no subscription type."""
        self.assignment = {}
        self.subscribed_pattern = None
        self.subscription_type = SubscriptionType.NONE

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#assignFromUser.

        1. The subscription becomes USER_ASSIGNED (IllegalStateException while subscribed);
        2. kept partitions keep their state, new ones start without a position.
        """
        self.set_subscription_type(SubscriptionType.USER_ASSIGNED)
        partitions = list(dict.fromkeys(partitions))
        if set(partitions) == set(self.assignment):
            return False
        self.assignment = {tp: self.assignment.get(tp) or TopicPartitionState() for tp in partitions}
        return True

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#assignFromSubscribed.

        The group's assignment (only while subscribed): kept partitions keep their state.
        """
        if not self.has_auto_assigned_partitions():
            raise ValueError("Attempt to dynamically assign partitions while manual assignment in use")
        self.assignment = {tp: self.assignment.get(tp) or TopicPartitionState() for tp in dict.fromkeys(partitions)}

    def assigned_partitions(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#assignedPartitions."""
        return set(self.assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#isAssigned."""
        return tp in self.assignment

    def assigned_state(self, tp: TopicPartition) -> TopicPartitionState:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#assignedState."""
        state = self.assignment.get(tp)
        if state is None:
            raise KafkaException(f"No current assignment for partition {tp}")
        return state

    def pause(self, tp: TopicPartition) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#pause."""
        self.assigned_state(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#resume."""
        self.assigned_state(tp).paused = False

    def is_paused(self, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#isPaused (an unassigned partition is not)."""
        state = self.assignment.get(tp)
        return state is not None and state.paused

    def paused_partitions(self) -> set[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#pausedPartitions."""
        return {tp for tp, state in self.assignment.items() if state.paused}

    def seek_unvalidated(self, tp: TopicPartition, position: FetchPosition) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#seekUnvalidated
        (validated first if it carries epochs, see ``validate_position``)."""
        self.assigned_state(tp).validate_position(position)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Mirrors SubscriptionState#seek(TopicPartition, long): a validated position with no epochs."""
        self.seek_validated(tp, FetchPosition(offset))

    def seek_validated(self, tp: TopicPartition, position: FetchPosition) -> None:
        """Mirrors SubscriptionState.TopicPartitionState#seekValidated: fetch from here, no check."""
        state = self.assigned_state(tp)
        state.position = position
        state.reset_strategy = None
        state.next_retry_time_ms = 0
        state.awaiting_validation = False

    def maybe_seek_unvalidated(self, tp: TopicPartition, position: FetchPosition, requested_strategy: str) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#maybeSeekUnvalidated.

        Applies a reset result only if the partition still awaits that reset (a user seek
        in between wins).
        """
        state = self.assignment.get(tp)
        if state is not None and state.reset_strategy == requested_strategy:
            self.seek_unvalidated(tp, position)

    def position(self, tp: TopicPartition) -> FetchPosition | None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#position."""
        return self.assigned_state(tp).position

    def request_offset_reset(self, tp: TopicPartition, strategy: str | None = None) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#requestOffsetReset.

        (TopicPartitionState#reset: AWAIT_RESET needs no position, so the position is dropped.)
        """
        state = self.assigned_state(tp)
        # 1. Enter AWAIT_RESET with the strategy and no retry backoff.
        state.reset_strategy = strategy or self.default_reset_strategy
        state.next_retry_time_ms = 0
        state.awaiting_validation = False
        # 2. A state that requires no position clears it (TopicPartitionState#transitionState).
        state.position = None

    def request_offset_reset_if_partition_assigned(self, tp: TopicPartition) -> None:
        """Mirrors SubscriptionState#requestOffsetResetIfPartitionAssigned (the default strategy)."""
        if tp in self.assignment:
            self.request_offset_reset(tp)

    def is_offset_reset_needed(self, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#isOffsetResetNeeded."""
        return self.assigned_state(tp).awaiting_reset()

    def reset_strategy(self, tp: TopicPartition) -> str | None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#resetStrategy."""
        return self.assigned_state(tp).reset_strategy

    def has_valid_position(self, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#hasValidPosition."""
        return self.assigned_state(tp).has_valid_position()

    def awaiting_validation(self, tp: TopicPartition) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#awaitingValidation."""
        return self.assigned_state(tp).awaiting_validation

    def complete_validation(self, tp: TopicPartition) -> None:
        """Mirrors SubscriptionState#completeValidation (TopicPartitionState#completeValidation):
        a partition with a position stops awaiting validation and fetches."""
        state = self.assigned_state(tp)
        if state.position is not None:
            state.awaiting_validation = False
            state.next_retry_time_ms = 0

    def is_fetchable(self, tp: TopicPartition) -> bool:
        """Mirrors SubscriptionState#isFetchable: assigned, not paused, with a valid position."""
        state = self.assignment.get(tp)
        return state is not None and not state.paused and state.has_valid_position()

    def has_all_fetch_positions(self) -> bool:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#hasAllFetchPositions."""
        return all(state.has_valid_position() for state in self.assignment.values())

    def num_assigned_partitions(self) -> int:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#numAssignedPartitions."""
        return len(self.assignment)

    def position_or_null(self, tp: TopicPartition) -> FetchPosition | None:
        """Mirrors SubscriptionState#positionOrNull: None for an unassigned partition."""
        state = self.assignment.get(tp)
        return None if state is None else state.position

    def partition_end_offset(self, tp: TopicPartition, isolation_level: int) -> int | None:
        """Mirrors SubscriptionState#partitionEndOffset: the HW (read_uncommitted) or LSO (read_committed)."""
        state = self.assigned_state(tp)
        return state.high_watermark if isolation_level == 0 else state.last_stable_offset

    def partition_lag(self, tp: TopicPartition, isolation_level: int) -> int | None:
        """Mirrors SubscriptionState#partitionLag: end offset minus position (None without either)."""
        state = self.assigned_state(tp)
        end = self.partition_end_offset(tp, isolation_level)
        if state.position is None or end is None:
            return None
        return end - state.position.offset

    def partition_lead(self, tp: TopicPartition) -> int | None:
        """Mirrors SubscriptionState#partitionLead: position minus log start offset (None without it)."""
        state = self.assigned_state(tp)
        if state.log_start_offset is None or state.position is None:
            return None
        return state.position.offset - state.log_start_offset

    def try_updating_high_watermark(self, tp: TopicPartition, high_watermark: int) -> bool:
        """Mirrors SubscriptionState#tryUpdatingHighWatermark: False when ``tp`` is not assigned."""
        state = self.assignment.get(tp)
        if state is None:
            return False
        state.high_watermark = high_watermark
        return True

    def try_updating_log_start_offset(self, tp: TopicPartition, log_start_offset: int) -> bool:
        """Mirrors SubscriptionState#tryUpdatingLogStartOffset: False when ``tp`` is not assigned."""
        state = self.assignment.get(tp)
        if state is None:
            return False
        state.log_start_offset = log_start_offset
        return True

    def try_updating_last_stable_offset(self, tp: TopicPartition, last_stable_offset: int) -> bool:
        """Mirrors SubscriptionState#tryUpdatingLastStableOffset: False when ``tp`` is not assigned."""
        state = self.assignment.get(tp)
        if state is None:
            return False
        state.last_stable_offset = last_stable_offset
        return True

    def try_updating_preferred_read_replica(self, tp: TopicPartition, replica_id: int, expire_time_ms: int) -> bool:
        """Mirrors SubscriptionState#tryUpdatingPreferredReadReplica: False when ``tp`` is not assigned."""
        if tp not in self.assignment:
            return False
        self.update_preferred_read_replica(tp, replica_id, expire_time_ms)
        return True

    def reset_initializing_positions(self) -> list[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#resetInitializingPositions.

        Partitions with no position get the default reset strategy; with "none" they are
        returned so the caller can raise NoOffsetForPartitionException.
        """
        undefined: list[TopicPartition] = []
        for tp, state in self.assignment.items():
            if state.position is None and state.reset_strategy is None:
                if self.default_reset_strategy == "none":
                    undefined.append(tp)
                else:
                    state.reset_strategy = self.default_reset_strategy
        return undefined

    def partitions_needing_reset(self, now_ms: int) -> list[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#partitionsNeedingReset."""
        return [tp for tp, s in self.assignment.items() if s.awaiting_reset() and s.next_retry_time_ms <= now_ms]

    def preferred_read_replica(self, tp: TopicPartition, time_ms: int) -> int | None:
        """Mirrors SubscriptionState#preferredReadReplica: the replica to read from, if set and not expired."""
        state = self.assignment.get(tp)
        if state is None or state.preferred_read_replica is None:
            return None
        if time_ms > state.preferred_read_replica_expire_time_ms:
            state.preferred_read_replica = None
            return None
        return state.preferred_read_replica

    def update_preferred_read_replica(self, tp: TopicPartition, replica_id: int, expire_time_ms: int) -> None:
        """Mirrors SubscriptionState#updatePreferredReadReplica (TopicPartitionState#updatePreferredReadReplica).

        The lease starts when the replica is set or changes; the same replica named again
        does not extend it.
        """
        state = self.assignment.get(tp)
        if state is not None and state.preferred_read_replica != replica_id:
            state.preferred_read_replica = replica_id
            state.preferred_read_replica_expire_time_ms = expire_time_ms

    def clear_preferred_read_replica(self, tp: TopicPartition) -> int | None:
        """Mirrors SubscriptionState#clearPreferredReadReplica: the replica that was set, if any."""
        state = self.assignment.get(tp)
        if state is None or state.preferred_read_replica is None:
            return None
        cleared, state.preferred_read_replica = state.preferred_read_replica, None
        return cleared

    def request_failed(self, partitions: Iterable[TopicPartition], next_retry_time_ms: int) -> None:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#requestFailed."""
        for tp in partitions:
            state = self.assignment.get(tp)
            if state is not None:
                state.next_retry_time_ms = next_retry_time_ms

    def fetchable_partitions(self, now_ms: int) -> list[TopicPartition]:
        """Mirrors org.apache.kafka.clients.consumer.internals.SubscriptionState#fetchablePartitions."""
        return [tp for tp, s in self.assignment.items()
                if s.has_valid_position() and not s.paused and s.next_retry_time_ms <= now_ms]

    def maybe_validate_position_for_current_leader(self, tp: TopicPartition, leader: LeaderAndEpoch) -> bool:
        """Mirrors SubscriptionState#maybeValidatePositionForCurrentLeader (and TopicPartitionState#maybeValidatePosition).

        Every broker here speaks OffsetsForLeaderEpoch v3+, so: 1. nothing while a reset is due
        or the leader is unknown; 2. a position whose leader or epoch changed takes the new one
        and awaits validation if it knows its record's epoch (the preferred read replica is
        dropped); 3. True while awaiting validation.
        """
        state = self.assignment.get(tp)
        if state is None or state.awaiting_reset() or leader.leader is None:
            return False
        if state.position is not None and state.position.current_leader != leader:
            state.validate_position(FetchPosition(state.position.offset, state.position.offset_epoch, leader))
            state.preferred_read_replica = None
        return state.awaiting_validation

    def partitions_needing_validation(self, now_ms: int) -> list[TopicPartition]:
        """Mirrors SubscriptionState#partitionsNeedingValidation (not in retry backoff)."""
        return [tp for tp, s in self.assignment.items() if s.awaiting_validation and s.next_retry_time_ms <= now_ms]

    def maybe_complete_validation(self, tp: TopicPartition, request_position: FetchPosition, end_offset: int,
                                  leader_epoch: int) -> tuple[FetchPosition, int | None] | None:
        """Mirrors SubscriptionState#maybeCompleteValidation with the answer (``end_offset``,
        ``leader_epoch``) of OffsetsForLeaderEpoch for the position's epoch.

        1. Stale (unassigned, no longer validating, or moved since): ignore; 2. no end offset for
        that epoch: truncation, reset; 3. the epoch ends before the position: truncation, continue
        from the divergence point; 4. else the position is valid. With ``auto_offset_reset="none"``
        a truncation is returned (request position, divergent offset or None) for the caller to raise.
        """
        state = self.assignment.get(tp)
        if state is None or not state.awaiting_validation or state.position != request_position:
            return None
        position = state.position
        if end_offset == -1 or leader_epoch == -1:
            if self.default_reset_strategy != "none":
                self.request_offset_reset(tp)
                return None
            return request_position, None
        if end_offset < position.offset:
            if self.default_reset_strategy != "none":
                self.seek_validated(tp, FetchPosition(end_offset, leader_epoch, position.current_leader))
                return None
            return request_position, end_offset
        state.awaiting_validation = False
        state.next_retry_time_ms = 0
        return None
