"""Truncation: the part of AbstractFetcherThread that cuts a follower's log back to the leader's.

Mirrors kafka.server.AbstractFetcherThread#maybeTruncate and the paths it and the fetch response
take: #truncateToEpochEndOffsets (an OffsetsForLeaderEpoch round), #truncateOnFetchResponse (a
diverging epoch in a fetch answer, KIP-320/595), #truncateToHighWatermark (the pre-KIP-101 rule),
#maybeTruncateToEpochEndOffsets, #getOffsetTruncationState and
#updateFetchOffsetAndMaybeMarkTruncationComplete. A mixin of ``AbstractFetcherThread``
(kafka_ref/replica/fetcher/abstract_fetcher_thread.py, which describes the era switches), kept
apart to keep that module within the project's size rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import structlog

from kafka_ref.common.errors import Errors, IllegalStateException, KafkaStorageException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    OffsetForLeaderPartition,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.replica.fetcher.partition_fetch_state import (FETCHING, TRUNCATING, OffsetTruncationState,
                                                             PartitionFetchState)

log = structlog.get_logger("kafka.server.AbstractFetcherThread")


class AbstractFetcherThreadTruncation:
    """AbstractFetcherThread's truncation methods (``self`` is the AbstractFetcherThread)."""

    def _fetch_truncating_partitions(self) -> tuple[dict[TopicPartition, OffsetForLeaderPartition], set[TopicPartition]]:
        """Mirrors kafka.server.AbstractFetcherThread#fetchTruncatingPartitions.

        Splits the truncating partitions into those we can ask the leader about (the log has
        an epoch and the era has OffsetsForLeaderEpoch) and those that truncate to HW.
        """
        with_epochs: dict[TopicPartition, OffsetForLeaderPartition] = {}
        without_epochs: set[TopicPartition] = set()
        for tp, state in self.partition_states.partition_state_map().items():
            # (isTruncating written out for the usual fetching partition: every partition of
            #  every round of the fetcher's loop comes through here.)
            if state.state is not TRUNCATING or state.is_delayed or tp in self._pending_offset_resets:
                continue
            epoch = self.latest_epoch(tp)
            if epoch is not None and self.is_offset_for_leader_epoch_supported:
                with_epochs[tp] = OffsetForLeaderPartition(
                    partition=tp.partition, current_leader_epoch=state.current_leader_epoch, leader_epoch=epoch
                )
            else:
                without_epochs.add(tp)
        return with_epochs, without_epochs

    async def maybe_truncate(self) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#maybeTruncate."""
        # 0. Partitions added with an unknown (negative) offset first ask the leader for one.
        await self._resolve_pending_offset_resets()
        # 1. Split the truncating partitions by whether they can use leader epochs.
        with_epochs, without_epochs = self._fetch_truncating_partitions()
        # 2. Epoch-based truncation (one OffsetsForLeaderEpoch round).
        if with_epochs:
            await self.truncate_to_epoch_end_offsets(with_epochs)
        # 3. Everything else truncates to its high watermark.
        if without_epochs:
            self.truncate_to_high_watermark(without_epochs)

    def _do_truncate(self, topic_partition: TopicPartition, truncation_state: OffsetTruncationState) -> bool:
        """Mirrors kafka.server.AbstractFetcherThread#doTruncate: a failure fails only this partition."""
        try:
            self.truncate(topic_partition, truncation_state)
            return True
        except KafkaStorageException:
            log.error("truncation_failed", fetcher=self.name, topic_partition=str(topic_partition), offset=truncation_state.offset)
            self.mark_partition_failed(topic_partition)
            return False
        except RUN_ENDING:
            raise
        except Exception:
            log.exception("truncation_error", fetcher=self.name, topic_partition=str(topic_partition), offset=truncation_state.offset)
            self.mark_partition_failed(topic_partition)
            return False

    async def truncate_to_epoch_end_offsets(self, latest_epochs_for_partitions: Mapping[TopicPartition, OffsetForLeaderPartition]) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#truncateToEpochEndOffsets.

        One OffsetsForLeaderEpoch round trip. The answer is applied only to partitions whose
        current leader epoch is still the one we asked with: if a LeaderAndIsr bumped the epoch
        while the request was in flight, that partition's answer is dropped and it asks again.
        """
        # 1. Ask the leader (an interleaving point: the partition map may change meanwhile).
        end_offsets = await self.leader.fetch_epoch_end_offsets(latest_epochs_for_partitions)
        # 2. Keep answers for partitions still here with the epoch we asked under.
        epoch_end_offsets: dict[TopicPartition, EpochEndOffset] = {}
        for tp, epoch_end_offset in end_offsets.items():
            request = latest_epochs_for_partitions.get(tp)
            if request is None:
                raise IllegalStateException(
                    f"Leader replied with partition {tp} not requested in OffsetsForLeaderEpoch request"
                )
            current = self.partition_states.state_value(tp)
            if current is not None and request.current_leader_epoch == current.current_leader_epoch:
                epoch_end_offsets[tp] = epoch_end_offset
        # 3. Truncate, back off failed partitions, and move the survivors on.
        fetch_offsets, partitions_with_error = self._maybe_truncate_to_epoch_end_offsets(
            epoch_end_offsets, latest_epochs_for_partitions
        )
        self.handle_partitions_with_errors(partitions_with_error, "truncateToEpochEndOffsets")
        self._update_fetch_offset_and_maybe_mark_truncation_complete(fetch_offsets)

    def truncate_on_fetch_response(self, epoch_end_offsets: Mapping[TopicPartition, EpochEndOffset]) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#truncateOnFetchResponse (KIP-320/595)."""
        # 1. The diverging epochs are handled like an OffsetsForLeaderEpoch answer.
        fetch_offsets, partitions_with_error = self._maybe_truncate_to_epoch_end_offsets(epoch_end_offsets, {})
        self.handle_partitions_with_errors(partitions_with_error, "truncateOnFetchResponse")
        # 2. The truncated partitions continue fetching from their new offsets.
        self._update_fetch_offset_and_maybe_mark_truncation_complete(fetch_offsets)

    def truncate_to_high_watermark(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#truncateToHighWatermark.

        The pre-KIP-101 rule: a truncating partition's fetch offset is its high watermark;
        cut the log there and start fetching.
        """
        fetch_offsets: dict[TopicPartition, OffsetTruncationState] = {}
        for tp in partitions:
            state = self.partition_states.state_value(tp)
            if state is None:
                continue
            # 1. The initial fetch offset of a truncating partition is its high watermark.
            truncation_state = OffsetTruncationState(state.fetch_offset, truncation_completed=True)
            log.info("truncating_to_high_watermark", fetcher=self.name, topic_partition=str(tp), truncation_state=str(truncation_state))
            # 2. Truncate; only a successful truncation moves the partition on.
            if self._do_truncate(tp, truncation_state):
                fetch_offsets[tp] = truncation_state
        self._update_fetch_offset_and_maybe_mark_truncation_complete(fetch_offsets)

    def _maybe_truncate_to_epoch_end_offsets(
        self,
        fetched_epochs: Mapping[TopicPartition, EpochEndOffset],
        latest_epochs_for_partitions: Mapping[TopicPartition, OffsetForLeaderPartition],
    ) -> tuple[dict[TopicPartition, OffsetTruncationState], set[TopicPartition]]:
        """Mirrors kafka.server.AbstractFetcherThread#maybeTruncateToEpochEndOffsets."""
        fetch_offsets: dict[TopicPartition, OffsetTruncationState] = {}
        partitions_with_error: set[TopicPartition] = set()
        for tp, leader_epoch_offset in fetched_epochs.items():
            # 1. A partition removed meanwhile is left alone.
            if tp not in self.partition_states:
                continue
            error = Errors.for_code(leader_epoch_offset.error_code)
            if error is Errors.NONE:
                # 2. Work out where to truncate and do it.
                truncation_state = self._get_offset_truncation_state(tp, leader_epoch_offset)
                log.info("truncating_to_leader_epoch_end_offset", fetcher=self.name, topic_partition=str(tp), truncation_state=str(truncation_state),
                         leader_epoch_offset=str(leader_epoch_offset))
                if self._do_truncate(tp, truncation_state):
                    fetch_offsets[tp] = truncation_state
            elif error is Errors.FENCED_LEADER_EPOCH:
                # 3. The leader has a newer epoch than the one we asked with.
                request = latest_epochs_for_partitions.get(tp)
                request_epoch = request.current_leader_epoch if request is not None else None
                if self._on_partition_fenced(tp, request_epoch):
                    partitions_with_error.add(tp)
            else:
                # 4. Anything else: retry after the back-off.
                log.info("offsets_for_leader_epoch_retry", fetcher=self.name, topic_partition=str(tp), error=error.name)
                partitions_with_error.add(tp)
        return fetch_offsets, partitions_with_error

    def _update_fetch_offset_and_maybe_mark_truncation_complete(self, fetch_offsets: Mapping[TopicPartition, OffsetTruncationState]) -> None:
        """Mirrors kafka.server.AbstractFetcherThread#updateFetchOffsetAndMaybeMarkTruncationComplete."""
        new_states: dict[TopicPartition, PartitionFetchState] = {}
        for tp, current in self.partition_states.partition_state_map().items():
            truncation_state = fetch_offsets.get(tp)
            if truncation_state is None:
                new_states[tp] = current
                continue
            # 1. A finished truncation (or any truncation once the era truncates on fetch)
            #    moves the partition to FETCHING; an intermediate KIP-279 round stays TRUNCATING.
            last_fetched_epoch = self.latest_epoch(tp)
            state = FETCHING if (self.leader.is_truncation_on_fetch_supported or truncation_state.truncation_completed) else TRUNCATING
            new_states[tp] = PartitionFetchState(
                current.topic_id, truncation_state.offset, current.lag, current.current_leader_epoch,
                current.delay, state, last_fetched_epoch,
            )
        self.partition_states.set(new_states)

    def _get_offset_truncation_state(self, tp: TopicPartition, leader_epoch_offset: EpochEndOffset) -> OffsetTruncationState:
        """Mirrors kafka.server.AbstractFetcherThread#getOffsetTruncationState.

        Where to cut, given the leader's (epoch, end offset) for the follower's latest epoch:

        * unknown end offset: fall back to the initial fetch offset (the high watermark);
        * no epoch in the answer (OffsetsForLeaderEpoch v0, IBP < 2.0 -- KIP-101): cut at
          min(leader end offset, our log end offset) and stop;
        * an epoch we do not have (KIP-279): cut at the end of our largest smaller epoch and
          ask again with that epoch (truncation not complete);
        * an epoch we have: cut at min(our end offset for it, the leader's, our log end offset);
        * an epoch below all of ours: cut at min(leader end offset, our log end offset).
        """
        current = self.partition_states.state_value(tp)
        # 1. The leader does not know the epoch's end: use the high watermark.
        if leader_epoch_offset.end_offset == UNDEFINED_EPOCH_OFFSET:
            log.warning("leader_epoch_end_offset_unknown_truncating_to_fetch_offset", fetcher=self.name, topic_partition=str(tp),
                        fetch_offset=current.fetch_offset)
            return OffsetTruncationState(current.fetch_offset, truncation_completed=True)
        # 2. Old protocol: only the leader's end offset is known.
        if leader_epoch_offset.leader_epoch == UNDEFINED_EPOCH:
            return OffsetTruncationState(min(leader_epoch_offset.end_offset, self.log_end_offset(tp)), truncation_completed=True)
        replica_end_offset = self.log_end_offset(tp)
        # 3. Our end offset for the largest epoch <= the leader's epoch.
        follower = self.end_offset_for_epoch(tp, leader_epoch_offset.leader_epoch)
        if follower is not None:
            if follower.leader_epoch != leader_epoch_offset.leader_epoch:
                # 3a. We never had the leader's epoch: cut to the end of our smaller one, ask again.
                return OffsetTruncationState(min(follower.offset, replica_end_offset), truncation_completed=False)
            # 3b. Both know the epoch: the smaller end wins.
            offset_to_truncate_to = min(follower.offset, leader_epoch_offset.end_offset)
            return OffsetTruncationState(min(offset_to_truncate_to, replica_end_offset), truncation_completed=True)
        # 4. The leader's epoch is below every epoch we track: its end offset is safe.
        return OffsetTruncationState(min(leader_epoch_offset.end_offset, replica_end_offset), truncation_completed=True)
