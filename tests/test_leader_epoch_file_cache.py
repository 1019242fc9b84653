"""Tests for LeaderEpochFileCache and its checkpoint file.

Mirrors org.apache.kafka.storage.internals.epoch.LeaderEpochFileCacheTest (test names kept in
snake_case) and LeaderEpochCheckpointFileTest.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.errors import KafkaStorageException
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    Disk,
    EpochEntry,
    LeaderEpochCheckpointFile,
    LeaderEpochFileCache,
)

TP = TopicPartition("TestTopic", 5)
UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


@pytest.fixture
def checkpoint() -> LeaderEpochCheckpointFile:
    return LeaderEpochCheckpointFile("/kafka-logs-0/TestTopic-5/leader-epoch-checkpoint")


@pytest.fixture
def cache(checkpoint: LeaderEpochCheckpointFile) -> LeaderEpochFileCache:
    return LeaderEpochFileCache(TP, checkpoint)


def entries(*pairs: tuple[int, int]) -> list[EpochEntry]:
    return [EpochEntry(e, o) for e, o in pairs]


# -- assign -------------------------------------------------------------------------------------


def test_previous_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest#testPreviousEpoch."""
    assert cache.previous_epoch is None
    cache.assign(2, 10)
    assert cache.previous_epoch is None
    cache.assign(4, 15)
    assert cache.previous_epoch == 2
    cache.assign(10, 20)
    assert cache.previous_epoch == 4
    cache.truncate_from_end(18)
    assert cache.previous_epoch == 2


def test_should_add_epoch_and_message_offset_to_cache(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldAddEpochAndMessageOffsetToCache."""
    cache.assign(2, 10)
    assert cache.latest_epoch == 2
    assert cache.epoch_entries == entries((2, 10))
    assert cache.end_offset_for(2, 11) == (2, 11)


def test_should_return_log_end_offset_if_latest_epoch_requested(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnLogEndOffsetIfLatestEpochRequested."""
    cache.assign(2, 11)
    cache.assign(2, 12)
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_should_return_undefined_offset_if_undefined_epoch_requested(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnUndefinedOffsetIfUndefinedEpochRequested."""
    cache.assign(2, 11)
    cache.assign(3, 12)
    assert cache.end_offset_for(UNDEFINED_EPOCH, 0) == UNDEFINED


def test_should_not_overwrite_log_end_offset_for_a_leader_epoch_once_it_has_been_assigned(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned."""
    cache.assign(2, 9)
    cache.assign(2, 10)
    assert cache.epoch_entries == entries((2, 9))


def test_should_enforce_monotonically_increasing_start_offsets(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldEnforceMonotonicallyIncreasingStartOffsets."""
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.epoch_entries == entries((3, 9))


def test_should_not_overwrite_offset_for_a_leader_epoch_once_it_has_been_assigned(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned."""
    cache.assign(2, 6)
    cache.assign(2, 10)
    assert cache.epoch_entries[0].start_offset == 6


def test_should_return_unsupported_if_no_epoch_recorded(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnUnsupportedIfNoEpochRecorded."""
    assert cache.end_offset_for(0, 0) == UNDEFINED


def test_should_return_unsupported_if_no_epoch_recorded_and_undefined_epoch_requested(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested."""
    assert cache.end_offset_for(UNDEFINED_EPOCH, 73) == UNDEFINED


def test_should_return_first_epoch_if_requested_epoch_less_than_first_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch."""
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_should_truncate_if_matching_epoch_but_earlier_starting_offset(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldTruncateIfMatchingEpochButEarlierStartingOffset."""
    cache.assign(5, 11)
    cache.assign(6, 12)
    cache.assign(7, 13)
    # Epoch 7 again at 12: both 6@12 and 7@13 conflict and go.
    cache.assign(7, 12)
    assert cache.epoch_entries == entries((5, 11), (7, 12))
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_should_get_first_offset_of_subsequent_epoch_when_offset_requested_for_previous_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch."""
    for epoch, offset in ((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)):
        cache.assign(epoch, offset)
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_should_return_next_available_epoch_if_there_is_no_exact_epoch_for_the_one_requested(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested."""
    cache.assign(0, 10)
    cache.assign(2, 13)
    cache.assign(4, 17)
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


def test_should_not_update_epoch_and_start_offset_if_it_did_not_change(cache, checkpoint):
    """Mirrors LeaderEpochFileCacheTest#shouldNotUpdateEpochAndStartOffsetIfItDidNotChange."""
    cache.assign(2, 6)
    writes = checkpoint.write_count
    cache.assign(2, 7)
    assert cache.epoch_entries == entries((2, 6))
    assert checkpoint.write_count == writes  # a no-op assign does not rewrite the file


def test_should_return_invalid_offset_if_epoch_is_requested_which_is_not_currently_tracked(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked."""
    cache.assign(2, 100)
    assert cache.end_offset_for(3, 100) == UNDEFINED


def test_should_support_epochs_that_do_not_start_from_zero(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldSupportEpochsThatDoNotStartFromZero."""
    cache.assign(2, 6)
    assert cache.end_offset_for(2, 7) == (2, 7)
    assert cache.epoch_entries == entries((2, 6))


def test_should_persist_epochs_between_instances(checkpoint):
    """Mirrors LeaderEpochFileCacheTest#shouldPersistEpochsBetweenInstances."""
    LeaderEpochFileCache(TP, checkpoint).assign(2, 6)
    reloaded = LeaderEpochCheckpointFile(checkpoint.path)
    reloaded.content = checkpoint.content
    assert LeaderEpochFileCache(TP, reloaded).epoch_entries == entries((2, 6))


def test_should_enforce_monotonically_increasing_epochs(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldEnforceMonotonicallyIncreasingEpochs."""
    cache.assign(1, 5)
    cache.assign(2, 6)
    cache.assign(1, 7)
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == UNDEFINED
    assert cache.epoch_entries == entries((1, 7))


def test_should_enforce_offsets_increase_monotonically(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldEnforceOffsetsIncreaseMonotonically."""
    cache.assign(2, 6)
    cache.assign(3, 5)
    assert cache.epoch_entries == entries((3, 5))


def test_should_increase_and_track_epochs_as_leaders_change_many_times(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes."""
    cache.assign(0, 0)
    cache.assign(1, 0)
    assert cache.latest_epoch == 1
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(0, 0) == (0, 0)
    assert cache.end_offset_for(1, 5) == (1, 5)
    assert cache.end_offset_for(0, 5) == (0, 0)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_should_increase_and_track_epochs_as_follower_receives_many_messages(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages."""
    for offset in range(3):
        cache.assign(0, offset)
    assert cache.latest_epoch == 0
    assert cache.end_offset_for(0, 3) == (0, 3)
    for offset in range(3, 6):
        cache.assign(1, offset)
    assert cache.end_offset_for(1, 6) == (1, 6)
    for offset in range(6, 9):
        cache.assign(2, offset)
    assert cache.latest_epoch == 2
    assert cache.end_offset_for(2, 9) == (2, 9)
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)
    assert cache.epoch_entries == entries((0, 0), (1, 3), (2, 6))


@pytest.mark.parametrize(
    ("epoch", "offset"),
    [(-1, 0), (0, -1)],
)
def test_assign_rejects_negative_epoch_or_offset(cache, epoch, offset):
    """Kafka's assign throws IllegalArgumentException for a negative epoch or offset."""
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(epoch, offset)


# -- truncation ---------------------------------------------------------------------------------


@pytest.fixture
def three_epochs(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    return cache


def test_should_drop_entries_on_epoch_boundary_when_removing_latest_entries(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries."""
    three_epochs.truncate_from_end(8)
    assert three_epochs.epoch_entries == entries((2, 6))


def test_should_preserve_reset_offset_on_clear_earliest_if_one_exists(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldPreserveResetOffsetOnClearEarliestIfOneExists."""
    three_epochs.truncate_from_start(8)
    assert three_epochs.epoch_entries == entries((3, 8), (4, 11))


def test_should_not_clear_anything_if_offset_too_early(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldNotClearAnythingIfOffsetToEarly."""
    three_epochs.truncate_from_start(1)
    assert three_epochs.epoch_entries == entries((2, 6), (3, 8), (4, 11))


def test_should_not_clear_anything_if_offset_is_first_offset(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldNotClearAnythingIfOffsetToFirstOffset."""
    three_epochs.truncate_from_start(6)
    assert three_epochs.epoch_entries == entries((2, 6), (3, 8), (4, 11))


def test_should_retain_latest_epoch_on_clear_all_earliest(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldRetainLatestEpochOnClearAllEarliest."""
    three_epochs.truncate_from_start(11)
    assert three_epochs.epoch_entries == entries((4, 11))


def test_should_update_offset_between_epoch_boundaries_on_clear_earliest(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest."""
    three_epochs.truncate_from_start(9)
    assert three_epochs.epoch_entries == entries((3, 9), (4, 11))


def test_should_update_saved_offset_when_offset_to_clear_to_is_between_epochs(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs: epoch 3
    stays, starting at 9 now that offset 8 is gone."""
    three_epochs.truncate_from_start(9)
    assert three_epochs.epoch_entries == entries((3, 9), (4, 11))


def test_should_update_offset_between_first_two_epoch_boundaries_on_clear_earliest(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2."""
    cache.assign(0, 0)
    cache.assign(1, 7)
    cache.assign(2, 10)
    cache.truncate_from_start(5)
    assert cache.epoch_entries == entries((0, 5), (1, 7), (2, 10))


def test_should_retain_latest_epoch_on_clear_all_earliest_and_update_its_offset(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset."""
    three_epochs.truncate_from_start(15)
    assert three_epochs.epoch_entries == entries((4, 15))


def test_should_drop_entries_between_epoch_boundary_when_removing_newest(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest."""
    three_epochs.truncate_from_end(9)
    assert three_epochs.latest_epoch == 3
    assert three_epochs.epoch_entries == entries((2, 6), (3, 8))


def test_should_clear_all_entries(three_epochs, checkpoint):
    """Mirrors LeaderEpochFileCacheTest#shouldClearAllEntries."""
    three_epochs.clear_and_flush()
    assert three_epochs.epoch_entries == []
    assert checkpoint.read() == []


def test_should_not_reset_epoch_history_head_if_undefined_passed(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldNotResetEpochHistoryHeadIfUndefinedPassed."""
    three_epochs.truncate_from_start(UNDEFINED_EPOCH_OFFSET)
    assert len(three_epochs.epoch_entries) == 3


def test_should_not_reset_epoch_history_tail_if_undefined_passed(three_epochs):
    """Mirrors LeaderEpochFileCacheTest#shouldNotResetEpochHistoryTailIfUndefinedPassed."""
    three_epochs.truncate_from_end(UNDEFINED_EPOCH_OFFSET)
    assert len(three_epochs.epoch_entries) == 3


def test_should_fetch_latest_epoch_of_empty_cache(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldFetchLatestEpochOfEmptyCache."""
    assert cache.latest_epoch is None
    assert cache.latest_entry is None
    assert cache.earliest_entry is None


def test_should_fetch_end_offset_of_empty_cache(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldFetchEndOffsetOfEmptyCache."""
    assert cache.end_offset_for(7, 0) == UNDEFINED


def test_should_clear_earliest_and_latest_on_empty_cache(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldClearEarliestOnEmptyCache and #shouldClearLatestOnEmptyCache."""
    cache.truncate_from_start(7)
    cache.truncate_from_end(7)
    assert cache.epoch_entries == []


def test_find_previous_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest#testFindPreviousEpoch."""
    assert cache.previous_epoch_of(2) is None
    cache.assign(2, 10)
    assert cache.previous_epoch_of(2) is None
    cache.assign(4, 15)
    assert cache.previous_epoch_of(4) == 2
    cache.assign(10, 20)
    assert cache.previous_epoch_of(10) == 4
    cache.truncate_from_end(18)
    assert cache.previous_epoch_of(cache.latest_epoch) == 2


def test_find_previous_entry(cache):
    """Mirrors LeaderEpochFileCacheTest#testFindPreviousEntry."""
    assert cache.previous_entry(2) is None
    cache.assign(2, 10)
    cache.assign(4, 15)
    assert cache.previous_entry(4) == EpochEntry(2, 10)
    cache.assign(10, 20)
    assert cache.previous_entry(10) == EpochEntry(4, 15)


def test_find_next_epoch(cache):
    """Mirrors LeaderEpochFileCacheTest#testFindNextEpoch."""
    cache.assign(0, 0)
    cache.assign(1, 100)
    cache.assign(2, 200)
    assert [cache.next_epoch(e) for e in (-1, 0, 1, 2, 100)] == [0, 1, 2, None, None]


def test_get_epoch_entry(cache):
    """Mirrors LeaderEpochFileCacheTest#testGetEpochEntry."""
    cache.assign(2, 100)
    cache.assign(3, 500)
    cache.assign(5, 1000)
    assert cache.epoch_entry(3) == EpochEntry(3, 500)
    assert cache.epoch_entry(4) is None


def test_should_fetch_epoch_for_given_offset(cache):
    """Mirrors LeaderEpochFileCacheTest#shouldFetchEpochForGivenOffset."""
    cache.assign(0, 10)
    cache.assign(1, 20)
    cache.assign(5, 30)
    assert [cache.epoch_for_offset(o) for o in (25, 20, 30, 50, 5)] == [1, 1, 5, 5, None]


def test_should_write_checkpoint_on_truncation(three_epochs, checkpoint):
    """Mirrors LeaderEpochFileCacheTest#shouldWriteCheckpointOnTruncation."""
    three_epochs.truncate_from_end(11)
    three_epochs.truncate_from_start(8)
    assert checkpoint.read() == entries((3, 8))
    assert checkpoint.content == "0\n1\n3 8\n"


# -- the checkpoint file --------------------------------------------------------------------------


def test_checkpoint_text_format_round_trips(checkpoint):
    """Mirrors LeaderEpochCheckpointFileTest#shouldPersistAndOverwriteAndReloadFile."""
    assert checkpoint.read() == []  # no file yet reads as empty
    checkpoint.write(entries((0, 0), (1, 7)))
    assert checkpoint.content == "0\n2\n0 0\n1 7\n"
    assert checkpoint.read() == entries((0, 0), (1, 7))
    checkpoint.write(entries((2, 9)))
    assert checkpoint.read() == entries((2, 9))


@pytest.mark.parametrize(
    "text",
    ["1\n1\n0 0\n", "0\n2\n0 0\n", "0\n1\nzero 0\n", "0\n1\n0 0 0\n"],
    ids=["bad-version", "short-count", "not-a-number", "extra-field"],
)
def test_malformed_checkpoint_takes_the_log_dir_offline(text):
    """Mirrors CheckpointFileWithFailureHandler#read: an unreadable file fails its log directory."""
    disk = Disk(0)
    checkpoint = LeaderEpochCheckpointFile("/kafka-logs-0/t-0/leader-epoch-checkpoint", disk)
    checkpoint.content = text
    with pytest.raises(KafkaStorageException, match="Error while reading checkpoint file"):
        checkpoint.read()
    assert disk.offline


def test_cache_reloads_through_assign_rules():
    """Loading re-applies assign: a checkpoint with a non-monotonic tail is repaired on load."""
    checkpoint = LeaderEpochCheckpointFile("/x/leader-epoch-checkpoint")
    checkpoint.content = "0\n3\n1 0\n2 5\n3 4\n"
    assert LeaderEpochFileCache(TP, checkpoint).epoch_entries == entries((1, 0), (3, 4))
