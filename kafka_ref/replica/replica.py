"""The leader's view of one follower.

Mirrors kafka.cluster.Replica (Kafka 3.x). The leader keeps, per remote replica, what the
follower told it in its last fetch: its log start and end offsets, when it last fetched, the
leader's LEO at that fetch, and the last time the follower was caught up. ``is_caught_up``
is the rule both ISR shrink and HW advance use.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, replace

from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import UNKNOWN_OFFSET_METADATA, LogOffsetMetadata

UNKNOWN_OFFSET = -1


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class ReplicaState:
    """Mirrors kafka.cluster.ReplicaState: an immutable snapshot of a follower's progress."""

    log_start_offset: int = UNKNOWN_OFFSET
    log_end_offset_metadata: LogOffsetMetadata = UNKNOWN_OFFSET_METADATA
    # ReplicaState.Empty starts it at 0; a new leader's reset sets it to UNKNOWN_OFFSET.
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = 0
    broker_epoch: int | None = None

    @property
    def log_end_offset(self) -> int:
        return self.log_end_offset_metadata.message_offset

    def is_caught_up(self, leader_end_offset: int, current_time_ms: int, replica_max_lag_ms: int) -> bool:
        """Mirrors kafka.cluster.ReplicaState#isCaughtUp.

        Caught up means: at the leader's LEO right now, or caught up at some point within the
        last ``replica.lag.time.max.ms``. ``last_caught_up_time_ms = 0`` means never.
        """
        return (
            leader_end_offset == self.log_end_offset
            or current_time_ms - self.last_caught_up_time_ms <= replica_max_lag_ms
        )


class Replica:
    """Mirrors kafka.cluster.Replica: one remote replica of a partition this broker leads."""

    def __init__(self, broker_id: int, topic_partition: TopicPartition) -> None:
        self.broker_id = broker_id
        self.topic_partition = topic_partition
        # Mirrors kafka.cluster.Replica#stateSnapshot: the current immutable ReplicaState, replaced
        # whole on every change (a plain attribute: every follower fetch of every partition reads it).
        self.state_snapshot = ReplicaState()

    # Convenience read-outs named after the state fields (for assertions and the demo).
    @property
    def log_end_offset(self) -> int:
        return self.state_snapshot.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.state_snapshot.log_start_offset

    @property
    def last_caught_up_time_ms(self) -> int:
        return self.state_snapshot.last_caught_up_time_ms

    @property
    def last_fetch_leader_log_end_offset(self) -> int:
        return self.state_snapshot.last_fetch_leader_log_end_offset

    @property
    def last_fetch_time_ms(self) -> int:
        return self.state_snapshot.last_fetch_time_ms

    def update_fetch_state_or_throw(
        self,
        follower_fetch_offset_metadata: LogOffsetMetadata,
        follower_start_offset: int,
        follower_fetch_time_ms: int,
        leader_end_offset: int,
        broker_epoch: int = -1,
        metadata_cache: Any = None,
    ) -> None:
        """Mirrors kafka.cluster.Replica#updateFetchStateOrThrow (Kafka 3.7).

        In KRaft mode a fetch carrying a broker epoch older than the metadata's epoch for that
        (alive) broker is refused (ZooKeeper mode does not check). If the follower fetched at
        or beyond the leader's current LEO it is caught up as of this fetch; if it fetched at
        or beyond the leader's LEO at its *previous* fetch, it was caught up as of that
        previous fetch. Otherwise the caught-up time stays. The leader LEO remembered for the
        next fetch never goes back.
        """
        current = self.state_snapshot
        # 1. KRaft: a fetch from an older incarnation of the broker is refused (only a KRaft
        #    metadata cache knows alive brokers' epochs).
        if broker_epoch != -1:
            get_alive_broker_epoch = getattr(metadata_cache, "get_alive_broker_epoch", None)
            cached = get_alive_broker_epoch(self.broker_id) if get_alive_broker_epoch is not None else None
            if cached is not None and cached > broker_epoch:
                from kafka_ref.common.errors import NotLeaderOrFollowerException

                raise NotLeaderOrFollowerException(
                    f"Received stale fetch state update. broker epoch={broker_epoch} vs expected={cached}")
        # 2. Work out the new last caught-up time (the max of two times, written out: every
        #    follower fetch of every partition comes through here).
        follower_offset = follower_fetch_offset_metadata.message_offset
        last_caught_up = current.last_caught_up_time_ms
        if follower_offset >= leader_end_offset:
            if follower_fetch_time_ms > last_caught_up:
                last_caught_up = follower_fetch_time_ms
        elif follower_offset >= current.last_fetch_leader_log_end_offset:
            if current.last_fetch_time_ms > last_caught_up:
                last_caught_up = current.last_fetch_time_ms
        # 3. Record this fetch (fields in ReplicaState's order: log start, log end, leader LEO
        #    at this fetch, fetch time, caught-up time, broker epoch).
        previous_leader_end = current.last_fetch_leader_log_end_offset
        self.state_snapshot = ReplicaState(
            follower_start_offset, follower_fetch_offset_metadata,
            leader_end_offset if leader_end_offset > previous_leader_end else previous_leader_end,
            follower_fetch_time_ms, last_caught_up, broker_epoch,
        )

    def reset_replica_state(
        self, current_time_ms: int, leader_end_offset: int, is_new_leader: bool, is_follower_in_sync: bool
    ) -> None:
        """Mirrors kafka.cluster.Replica#resetReplicaState (on a new leader epoch).

        An in-sync follower counts as caught up now; one outside the ISR gets 0 ("never") so
        it cannot hold the HW back. A brand-new leader forgets everything else it knew.
        """
        last_caught_up = current_time_ms if is_follower_in_sync else 0
        if is_new_leader:
            self.state_snapshot = ReplicaState(last_fetch_leader_log_end_offset=UNKNOWN_OFFSET,
                                               last_caught_up_time_ms=last_caught_up)
        else:
            self.state_snapshot = replace(
                self.state_snapshot,
                last_fetch_leader_log_end_offset=leader_end_offset,
                last_fetch_time_ms=current_time_ms if is_follower_in_sync else 0,
                last_caught_up_time_ms=last_caught_up,
            )

    def __repr__(self) -> str:
        s = self.state_snapshot
        return (
            f"Replica(broker_id={self.broker_id}, tp={self.topic_partition}, leo={s.log_end_offset}, "
            f"log_start={s.log_start_offset}, last_caught_up_ms={s.last_caught_up_time_ms})"
        )
