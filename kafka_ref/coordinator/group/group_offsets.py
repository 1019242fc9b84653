"""The offsets half of the group coordinator: OffsetCommit, OffsetFetch and OffsetDelete.

Mirrors the offset methods of kafka.coordinator.group.GroupCoordinator (Kafka 3.x, the classic
protocol, non-transactional commits): #handleCommitOffsets with #validateOffsetCommit and
#doCommitOffsets, #handleFetchOffsets and #handleDeleteOffsets. The offsets themselves live in
GroupMetadata and ``__consumer_offsets`` (group_metadata_manager.py). ``GroupCoordinator``
(group_coordinator.py) inherits them, as it does the rebalance methods (rebalance.py): Kafka has
one class, split here only to keep modules small.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.join_group import UNKNOWN_MEMBER_ID
from kafka_ref.common.requests.offset_fetch import OffsetFetchResponsePartitions
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_metadata import (
    CompletingRebalance,
    Dead,
    Empty,
    GroupMetadata,
    IllegalStateException,
    OffsetAndMetadata,
    PreparingRebalance,
    Stable,
)
from kafka_ref.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME


class GroupOffsets:
    """GroupCoordinator's offset methods (``self`` is the GroupCoordinator)."""

    def handle_commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int,
                              offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                              response_callback: Callable[[dict[TopicPartition, Errors]], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleCommitOffsets.

        An unknown group is created (Empty) for a commit with generation -1 (a consumer not
        using group management); a member commit to an unknown group is ILLEGAL_GENERATION.
        """
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_COMMIT)
        if error is not None:
            response_callback({tp: error for tp in offset_metadata})
            return
        group = self.group_manager.get_group(group_id)
        if group is None:
            if generation_id < 0:
                self._log.info("simple_consumer_group_created", group_id=group_id)
                group = self.group_manager.add_group(GroupMetadata(group_id, Empty, self.time, self.broker_id))
            else:
                response_callback({tp: Errors.ILLEGAL_GENERATION for tp in offset_metadata})
                return
        self._do_commit_offsets(group, member_id, group_instance_id, generation_id, offset_metadata, response_callback)

    def _validate_offset_commit(self, group: GroupMetadata, generation_id: int, member_id: str,
                                group_instance_id: str | None) -> Errors | None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#validateOffsetCommit (non-transactional)."""
        if group.is_(Dead):
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.is_(Empty):
            return None
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self._validate_current_member(group, member_id, group_instance_id, "offset-commit")
            if error is not None:
                return error
            return Errors.ILLEGAL_GENERATION if generation_id != group.generation_id else None
        if not group.is_(Empty):
            return Errors.UNKNOWN_MEMBER_ID
        return None

    def _do_commit_offsets(self, group: GroupMetadata, member_id: str, group_instance_id: str | None, generation_id: int,
                           offset_metadata: Mapping[TopicPartition, OffsetAndMetadata],
                           response_callback: Callable[[dict[TopicPartition, Errors]], None]) -> None:
        """Mirrors kafka.coordinator.group.GroupCoordinator#doCommitOffsets.

        Commits are accepted when Empty, Stable or PreparingRebalance (a commit renews the
        member's session); CompletingRebalance answers REBALANCE_IN_PROGRESS.
        """
        error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            response_callback({tp: error for tp in offset_metadata})
            return
        offset_tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, self.partition_for(group.group_id))
        state = group.current_state
        if state is Empty:
            self.group_manager.store_offsets(group, member_id, offset_tp, offset_metadata, response_callback)
        elif state in (Stable, PreparingRebalance):
            self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
            self.group_manager.store_offsets(group, member_id, offset_tp, offset_metadata, response_callback)
        elif state is CompletingRebalance:
            response_callback({tp: Errors.REBALANCE_IN_PROGRESS for tp in offset_metadata})
        else:
            raise IllegalStateException(f"Logic error: unexpected group state {state}")

    def handle_fetch_offsets(self, group_id: str, require_stable: bool, partitions: Iterable[TopicPartition] | None = None
                             ) -> tuple[Errors, dict[TopicPartition, OffsetFetchResponsePartitions]]:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleFetchOffsets: answered from the cache, any state."""
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_FETCH)
        if error is not None:
            return error, {}
        return Errors.NONE, self.group_manager.get_offsets(group_id, require_stable,
                                                           None if partitions is None else list(partitions))

    def handle_delete_offsets(self, group_id: str,
                              partitions: Iterable[TopicPartition]) -> tuple[Errors, dict[TopicPartition, Errors]]:
        """Mirrors kafka.coordinator.group.GroupCoordinator#handleDeleteOffsets.

        1. The group's status error (INVALID_GROUP_ID, NOT_COORDINATOR, loading, ...). 2. An
        unknown or Dead group is GROUP_ID_NOT_FOUND where this broker owns its partition, else
        NOT_COORDINATOR. 3. Empty: every partition may go; a consumer group with members (any
        state but Dead and Empty): partitions of topics it subscribes to are
        GROUP_SUBSCRIBED_TO_TOPIC, the others may go; any other group with members is
        NON_EMPTY_GROUP. 4. The eligible offsets are removed with tombstones and answer NONE.
        A group error comes with no partition errors.
        """
        partitions = list(partitions)
        partition_errors: dict[TopicPartition, Errors] = {}
        # 1. Status.
        error = self._validate_group_status(group_id, ApiKeys.OFFSET_DELETE)
        if error is not None:
            return error, {}
        # 2. Unknown or dead.
        group = self.group_manager.get_group(group_id)
        if group is None or group.is_(Dead):
            return (Errors.GROUP_ID_NOT_FOUND if self.group_manager.group_not_exists(group_id)
                    else Errors.NOT_COORDINATOR), {}
        # 3. Which partitions may go.
        if group.is_(Empty):
            eligible = partitions
        elif group.is_consumer_group():
            eligible = [tp for tp in partitions if not group.is_subscribed_to_topic(tp.topic)]
            partition_errors.update({tp: Errors.GROUP_SUBSCRIBED_TO_TOPIC for tp in partitions
                                     if group.is_subscribed_to_topic(tp.topic)})
        else:
            return Errors.NON_EMPTY_GROUP, {}
        # 4. Remove them, tombstones written.
        if eligible:
            removed = self.group_manager.cleanup_group_metadata([group], lambda g: g.remove_offsets(eligible))
            partition_errors.update({tp: Errors.NONE for tp in eligible})
            self._log.info("offsets_deleted", group_id=group_id, partitions=[str(tp) for tp in eligible],
                           offsets_removed=removed)
        return Errors.NONE, partition_errors
