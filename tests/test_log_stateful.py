"""Stateful (Hypothesis) tests of the log layer against simple models.

Three machines:

- ``LeaderEpochCacheMachine``: LeaderEpochFileCache against a naive list model (assign,
  truncations, clear, end_offset_for, reload from the checkpoint).
- ``UnifiedLogMachine``: one UnifiedLog driven by leader and follower appends, truncations,
  HW and log-start moves, retention and reads, checked against a model of batches and offsets.
- ``ReplicationMachine``: a leader and a follower log exchanging batches by fetch, with
  leadership swapping and the new follower truncating by OffsetsForLeaderEpoch (KIP-101/279);
  the follower's log must always be a prefix of the leader's.

There is no single Kafka test these mirror; they check the invariants UnifiedLog asserts
(log start <= HW <= LEO, batches in order, epoch cache increasing and within the log).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_ref.common.errors import OffsetOutOfRangeException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import (
    Disk,
    EpochEntry,
    FetchIsolation,
    LeaderEpochCheckpointFile,
    LeaderEpochFileCache,
    OffsetAndEpoch,
    UnexpectedAppendOffsetException,
    UnifiedLog,
)

TP = TopicPartition("stateful", 0)
SETTINGS = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def batch_records(n: int, *, base_offset: int = 0, epoch: int = -1, value_size: int = 8) -> MemoryRecords:
    return MemoryRecords.with_records(
        [SimpleRecord(b"k", bytes(value_size), timestamp=1000 + i) for i in range(n)],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
    )


# ------------------------------------------------------------------------------------------
# A naive model of the epoch cache (Kafka's rules, written as plain list scans).
# ------------------------------------------------------------------------------------------


class RefEpochCache:
    def __init__(self) -> None:
        self.entries: list[tuple[int, int]] = []

    def assign(self, epoch: int, start: int) -> None:
        if self.entries and self.entries[-1][0] == epoch and start >= self.entries[-1][1]:
            return
        self.entries = [(e, s) for e, s in self.entries if e < epoch and s < start] + [(epoch, start)]

    def truncate_from_end(self, end: int) -> None:
        if end >= 0:
            self.entries = [(e, s) for e, s in self.entries if s < end]

    def truncate_from_start(self, start: int) -> None:
        covered = [(e, s) for e, s in self.entries if s <= start]
        if covered:
            self.entries = [(covered[-1][0], start)] + [(e, s) for e, s in self.entries if s > start]

    def clear(self) -> None:
        self.entries = []

    def end_offset_for(self, requested: int, leo: int) -> tuple[int, int]:
        if requested == -1:
            return (-1, -1)
        if self.entries and self.entries[-1][0] == requested:
            return (requested, leo)
        higher = [(e, s) for e, s in self.entries if e > requested]
        lower = [(e, s) for e, s in self.entries if e <= requested]
        if not higher:
            return (-1, -1)
        if not lower:
            return (requested, higher[0][1])
        return (lower[-1][0], higher[0][1])


def check_cache_shape(entries: list[EpochEntry], leo: int | None = None) -> None:
    for earlier, later in zip(entries, entries[1:]):
        assert earlier.epoch < later.epoch and earlier.start_offset < later.start_offset, entries
    if leo is not None:
        assert all(e.start_offset <= leo for e in entries), (entries, leo)


class LeaderEpochCacheMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.checkpoint = LeaderEpochCheckpointFile("/kafka-logs-0/stateful-0/leader-epoch-checkpoint")
        self.cache = LeaderEpochFileCache(TP, self.checkpoint)
        self.model = RefEpochCache()

    @rule(epoch=st.integers(0, 8), start=st.integers(0, 30))
    def assign(self, epoch, start):
        self.cache.assign(epoch, start)
        self.model.assign(epoch, start)

    @rule(end=st.integers(-1, 31))
    def truncate_from_end(self, end):
        self.cache.truncate_from_end(end)
        self.model.truncate_from_end(end)

    @rule(start=st.integers(-1, 31))
    def truncate_from_start(self, start):
        self.cache.truncate_from_start(start)
        self.model.truncate_from_start(start)

    @rule()
    def clear_and_flush(self):
        self.cache.clear_and_flush()
        self.model.clear()

    @rule()
    def reload_from_checkpoint(self):
        self.cache = LeaderEpochFileCache(TP, self.checkpoint)

    @rule(leo_extra=st.integers(0, 5))
    def end_offsets_agree(self, leo_extra):
        leo = max((s for _, s in self.model.entries), default=0) + leo_extra
        for requested in range(-1, 10):
            assert self.cache.end_offset_for(requested, leo) == self.model.end_offset_for(requested, leo)

    @invariant()
    def entries_match_model(self):
        entries = self.cache.epoch_entries
        assert [(e.epoch, e.start_offset) for e in entries] == self.model.entries
        check_cache_shape(entries)
        if self.checkpoint.exists():
            assert self.checkpoint.read() == entries


# ------------------------------------------------------------------------------------------
# One log against a model of its batches and offsets.
# ------------------------------------------------------------------------------------------


@dataclass
class ModelBatch:
    base: int
    last: int
    epoch: int
    size: int


class UnifiedLogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.disk = Disk(0)
        self.log = UnifiedLog.create(TP, self.disk, time=MockTime())
        self.log.retention_ms = -1  # the model knows log-start and size retention; records are from 1970
        self.batches: list[ModelBatch] = []
        self.leo = self.lso = self.hw = self.first_segment = 0
        self.epoch = 0
        self.cache = RefEpochCache()

    # -- appends ---------------------------------------------------------------------------

    @rule(n=st.integers(1, 4), bump=st.booleans(), value_size=st.sampled_from([4, 40]))
    def leader_append(self, n, bump, value_size):
        if bump:
            self.epoch += 1
        records = batch_records(n, value_size=value_size)
        info = self.log.append_as_leader(records, self.epoch)
        assert (info.first_offset, info.last_offset) == (self.leo, self.leo + n - 1)
        self.batches.append(ModelBatch(self.leo, self.leo + n - 1, self.epoch, records.size_in_bytes))
        self.cache.assign(self.epoch, self.leo)
        self.leo += n

    @rule(n=st.integers(1, 4), bump=st.booleans(), gap=st.integers(0, 2))
    def follower_append(self, n, bump, gap):
        if bump:
            self.epoch += 1
        base = self.leo + gap
        records = batch_records(n, base_offset=base, epoch=self.epoch)
        info = self.log.append_as_follower(records)
        assert (info.first_offset, info.last_offset) == (base, base + n - 1)
        self.batches.append(ModelBatch(base, base + n - 1, self.epoch, records.size_in_bytes))
        self.cache.assign(self.epoch, base)
        self.leo = base + n

    @precondition(lambda self: self.leo > 0)
    @rule(back=st.integers(1, 3))
    def follower_append_below_leo_is_rejected(self, back):
        base = max(0, self.leo - back)
        with pytest.raises(UnexpectedAppendOffsetException):
            self.log.append_as_follower(batch_records(2, base_offset=base, epoch=self.epoch))

    @rule()
    def become_leader(self):
        # Partition#makeLeader records the new epoch at the LEO before any data is written.
        self.epoch += 1
        self.log.maybe_assign_epoch_start_offset(self.epoch, self.leo)
        self.cache.assign(self.epoch, self.leo)

    # -- offsets ---------------------------------------------------------------------------

    @rule(data=st.data())
    def update_high_watermark(self, data):
        value = data.draw(st.integers(0, self.leo + 2))
        result = self.log.update_high_watermark(value)
        self.hw = min(max(value, self.lso), self.leo)
        assert result == self.hw

    @rule(data=st.data())
    def maybe_increment_high_watermark(self, data):
        value = data.draw(st.integers(0, self.leo))
        old = self.log.maybe_increment_high_watermark(value)
        if value > self.hw:
            assert old is not None and old.message_offset == self.hw
            self.hw = value
        else:
            assert old is None

    @rule(k=st.integers(0, 4))
    def maybe_increment_log_start_offset(self, k):
        new = self.lso + k
        if new > self.hw:
            with pytest.raises(OffsetOutOfRangeException):
                self.log.maybe_increment_log_start_offset(new)
            return
        assert self.log.maybe_increment_log_start_offset(new) is (new > self.lso)
        if new > self.lso:
            self.lso = new
            self.cache.truncate_from_start(new)

    @rule()
    def delete_old_segments(self):
        limit = min(self.lso, self.hw)
        removed = 0
        while self.batches and self.batches[0].last + 1 <= limit:
            self.batches.pop(0)
            removed += 1
        if removed:
            self.first_segment = self.batches[0].base if self.batches else self.leo
        assert self.log.delete_old_segments() == removed

    # -- truncation ------------------------------------------------------------------------

    @rule(data=st.data())
    def truncate_to(self, data):
        target = data.draw(st.integers(0, self.leo + 1))
        truncated = self.log.truncate_to(target)
        if target >= self.leo:
            assert truncated is False
            self.cache.truncate_from_end(self.leo)
            return
        assert truncated is True
        if self.first_segment > target:
            self._truncate_fully(target)
            return
        self.batches = [b for b in self.batches if b.last < target]
        self.leo = target
        self.cache.truncate_from_end(target)
        self.lso = min(self.lso, target)
        self.hw = min(self.hw, self.leo)

    @rule(k=st.integers(0, 3))
    def truncate_fully_and_start_at(self, k):
        self.log.truncate_fully_and_start_at(self.leo + k)
        self._truncate_fully(self.leo + k)

    def _truncate_fully(self, offset: int) -> None:
        self.batches = []
        self.leo = self.lso = self.hw = self.first_segment = offset
        self.cache.clear()

    # -- reads -----------------------------------------------------------------------------

    @rule(
        data=st.data(),
        max_length=st.integers(0, 400),
        isolation=st.sampled_from(list(FetchIsolation)),
        min_one_message=st.booleans(),
    )
    def read(self, data, max_length, isolation, min_one_message):
        offset = data.draw(st.integers(max(0, self.lso - 1), self.leo + 1))
        if offset < self.lso or offset > self.leo:
            with pytest.raises(OffsetOutOfRangeException):
                self.log.read(offset, max_length, isolation, min_one_message)
            return
        info = self.log.read(offset, max_length, isolation, min_one_message)
        bound = self.leo if isolation is FetchIsolation.LOG_END else self.hw
        expected: list[ModelBatch] = []
        candidates = [b for b in self.batches if b.last >= offset]
        if offset < bound and candidates:
            first = candidates[0]
            limit = max(max_length, first.size) if min_one_message else max_length
            used = 0
            for batch in candidates:
                if batch.last >= bound or used + batch.size > limit:
                    break
                expected.append(batch)
                used += batch.size
        got = list(info.records)
        assert [(b.base_offset, b.last_offset) for b in got] == [(b.base, b.last) for b in expected]
        held = {b.base_offset: b for b in self.log.batches}
        assert all(b is held[b.base_offset] for b in got)  # references, never copies
        assert info.fetch_offset_metadata.message_offset in (offset, bound, self.leo)

    @rule(requested=st.integers(-1, 12))
    def end_offset_for_epoch(self, requested):
        epoch, offset = self.cache.end_offset_for(requested, self.leo)
        expected = None if offset == -1 else OffsetAndEpoch(offset, epoch)
        assert self.log.end_offset_for_epoch(requested) == expected

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def offsets_match_model(self):
        log = self.log
        assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (self.lso, self.hw, self.leo)
        assert log.log_start_offset <= log.high_watermark <= log.log_end_offset
        assert log.local_log.first_segment_base_offset == self.first_segment

    @invariant()
    def batches_match_model(self):
        got = [(b.base_offset, b.last_offset, b.partition_leader_epoch) for b in self.log.batches]
        assert got == [(b.base, b.last, b.epoch) for b in self.batches]
        for earlier, later in zip(self.log.batches, list(self.log.batches)[1:]):
            assert earlier.last_offset < later.base_offset
        assert all(b.last_offset < self.leo for b in self.log.batches)

    @invariant()
    def epoch_cache_matches_model_and_data(self):
        entries = self.log.leader_epoch_cache.epoch_entries
        assert [(e.epoch, e.start_offset) for e in entries] == self.cache.entries
        check_cache_shape(entries, self.leo)
        checkpoint = self.disk.logs[TP].leader_epoch_checkpoint
        if checkpoint.exists():
            assert checkpoint.read() == entries
        cache = self.log.leader_epoch_cache
        for batch in self.log.batches:
            if batch.base_offset >= self.lso:
                assert cache.epoch_for_offset(batch.base_offset) == batch.partition_leader_epoch


# ------------------------------------------------------------------------------------------
# Two replicas: leader and follower, with leadership swaps and epoch-based truncation.
# ------------------------------------------------------------------------------------------


class ReplicationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.leader = UnifiedLog.create(TP, Disk(0), time=MockTime())
        self.follower = UnifiedLog.create(TP, Disk(1), time=MockTime())
        self.epoch = 0
        self.leader.maybe_assign_epoch_start_offset(0, 0)

    @rule(n=st.integers(1, 4), value_size=st.sampled_from([4, 60]))
    def produce(self, n, value_size):
        self.leader.append_as_leader(batch_records(n, value_size=value_size), self.epoch)

    @rule(max_bytes=st.integers(1, 300))
    def fetch(self, max_bytes):
        """ReplicaFetcherThread#processPartitionData, then the leader's HW update."""
        leader, follower = self.leader, self.follower
        fetch_offset = follower.log_end_offset
        if fetch_offset < leader.log_start_offset:
            # Out of range below the leader's log start: start over there.
            follower.truncate_fully_and_start_at(leader.log_start_offset)
            fetch_offset = follower.log_end_offset
        records = leader.read(fetch_offset, max_bytes, FetchIsolation.LOG_END, min_one_message=True).records
        follower.append_as_follower(records)
        follower.maybe_update_high_watermark(leader.high_watermark)
        follower.maybe_increment_log_start_offset(leader.log_start_offset)
        leader.maybe_increment_high_watermark(min(follower.log_end_offset, leader.log_end_offset))

    @rule(k=st.integers(0, 3))
    def delete_records(self, k):
        leader = self.leader
        leader.maybe_increment_log_start_offset(min(leader.high_watermark, leader.log_start_offset + k))
        leader.delete_old_segments()

    @rule()
    def swap_leadership(self):
        """The follower becomes leader in a new epoch; the old leader truncates (KIP-279)."""
        self.epoch += 1
        new_leader, new_follower = self.follower, self.leader
        new_leader.maybe_assign_epoch_start_offset(self.epoch, new_leader.log_end_offset)
        self.leader, self.follower = new_leader, new_follower
        self._truncate_follower_by_epoch()

    def _truncate_follower_by_epoch(self) -> None:
        """AbstractFetcherThread#truncateToEpochEndOffsets with the leader's OffsetsForLeaderEpoch answer."""
        leader, follower = self.leader, self.follower
        follower_epoch = follower.latest_epoch
        if follower_epoch is None:
            follower.truncate_to(min(follower.high_watermark, leader.log_end_offset))
            return
        answer = leader.end_offset_for_epoch(follower_epoch)
        if answer is None:
            follower.truncate_fully_and_start_at(leader.log_start_offset)
            return
        if answer.epoch == follower_epoch:
            target = min(answer.offset, follower.log_end_offset)
        else:
            own = follower.end_offset_for_epoch(answer.epoch)
            target = min(answer.offset, own.offset) if own is not None else min(answer.offset, follower.log_end_offset)
        follower.truncate_to(target)

    @invariant()
    def follower_is_prefix_of_leader(self):
        leader, follower = self.leader, self.follower
        assert follower.log_end_offset <= leader.log_end_offset
        leader_batches = {b.base_offset: b for b in leader.batches}
        first_leader_base = leader.local_log.first_segment_base_offset
        for batch in follower.batches:
            if batch.base_offset >= first_leader_base:
                twin = leader_batches.get(batch.base_offset)
                assert twin is not None, (batch, list(leader.batches))
                assert (twin.last_offset, twin.partition_leader_epoch, twin.crc) == (
                    batch.last_offset,
                    batch.partition_leader_epoch,
                    batch.crc,
                )

    @invariant()
    def offsets_in_order(self):
        for log in (self.leader, self.follower):
            assert log.log_start_offset <= log.high_watermark <= log.log_end_offset
            check_cache_shape(log.leader_epoch_cache.epoch_entries, log.log_end_offset)
            for earlier, later in zip(log.batches, list(log.batches)[1:]):
                assert earlier.next_offset == later.base_offset


TestLeaderEpochCacheStateful = LeaderEpochCacheMachine.TestCase
TestLeaderEpochCacheStateful.settings = settings(SETTINGS, max_examples=60)
TestUnifiedLogStateful = UnifiedLogMachine.TestCase
TestUnifiedLogStateful.settings = SETTINGS
TestReplicationStateful = ReplicationMachine.TestCase
TestReplicationStateful.settings = SETTINGS
