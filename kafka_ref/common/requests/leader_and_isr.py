"""LeaderAndIsr: the controller tells a broker which partitions it leads or follows.

Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest / LeaderAndIsrResponse and the
message schemas LeaderAndIsrRequest.json (version 7) / LeaderAndIsrResponse.json (version 7).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

from kafka_ref.common.requests.abstract import (
    REQUEST_HEADER_FIELD,
    AbstractControlRequest,
    AbstractResponse,
    ControlRequestType,
    error_counts_of,
    update_error_counts,
)
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrPartitionState:
    """Mirrors org.apache.kafka.common.message.LeaderAndIsrRequestData.LeaderAndIsrPartitionState.

    The controller's decision for one partition: leader, leader epoch, ISR and replica set,
    plus the partition epoch (the ZooKeeper version of the partition-state znode, which the
    leader must quote back in AlterPartition). ``topic_name`` is filled in when the request
    is read in its flattened form (``LeaderAndIsrRequest.partition_states()``).
    ``leader_recovery_state`` is 1 while a leader elected uncleanly is still recovering.
    """

    topic_name: str = ""
    partition_index: int = 0
    controller_epoch: int = 0
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    partition_epoch: int = 0
    replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False
    leader_recovery_state: int = 0

    def topic_partition(self) -> TopicPartition:
        """The TopicPartition this state is for (needs ``topic_name`` to be set)."""
        return TopicPartition(self.topic_name, self.partition_index)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrTopicState:
    """Mirrors org.apache.kafka.common.message.LeaderAndIsrRequestData.LeaderAndIsrTopicState.

    The partition states of one topic, sent once per topic with its name and id.
    """

    topic_name: str = ""
    topic_id: Uuid = ZERO_UUID
    partition_states: tuple[LeaderAndIsrPartitionState, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrLiveLeader:
    """Mirrors org.apache.kafka.common.message.LeaderAndIsrRequestData.LeaderAndIsrLiveLeader.

    Where to reach one of the leaders named in the request.
    """

    broker_id: int = 0
    host_name: str = ""
    port: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrPartitionError:
    """Mirrors org.apache.kafka.common.message.LeaderAndIsrResponseData.LeaderAndIsrPartitionError."""

    partition_index: int = 0
    error_code: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrTopicError:
    """Mirrors org.apache.kafka.common.message.LeaderAndIsrResponseData.LeaderAndIsrTopicError.

    Per-partition results of one topic, keyed by topic id (names left the response in v5).
    """

    topic_id: Uuid = ZERO_UUID
    partition_errors: tuple[LeaderAndIsrPartitionError, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrResponse(AbstractResponse):
    """Mirrors org.apache.kafka.common.requests.LeaderAndIsrResponse.

    A top-level error (for example STALE_CONTROLLER_EPOCH) applies to the whole request;
    otherwise each partition carries its own error code.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LEADER_AND_ISR
    API_NAME: ClassVar[str] = ApiKeys.LEADER_AND_ISR.api_name

    error_code: int = 0
    topics: tuple[LeaderAndIsrTopicError, ...] = ()

    def partition_errors(self, topic_names: Mapping[Uuid, str]) -> dict[TopicPartition, int]:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrResponse#partitionErrors.

        The error code of each partition, keyed by TopicPartition. The response names topics
        only by id, so the caller passes the id-to-name map it knows; topics missing from it
        are left out.
        """
        # 1. Resolve every topic id to a name; 2. skip ids the caller cannot name.
        errors: dict[TopicPartition, int] = {}
        for topic in self.topics:
            name = topic_names.get(topic.topic_id)
            if name is None:
                continue
            for partition in topic.partition_errors:
                errors[TopicPartition(name, partition.partition_index)] = partition.error_code
        return errors

    def error_counts(self) -> dict[int, int]:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrResponse#errorCounts.

        A top-level error counts once for itself and once per partition; otherwise each
        partition's code is counted and the top-level NONE once more.
        """
        # 1. A top-level error stands for every partition.
        partition_count = sum(len(topic.partition_errors) for topic in self.topics)
        if self.error_code != 0:
            return {self.error_code: partition_count + 1}
        # 2. Otherwise count each partition's code, then the top-level code.
        counts = error_counts_of(p.error_code for t in self.topics for p in t.partition_errors)
        update_error_counts(counts, 0)
        return counts


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaderAndIsrRequest(AbstractControlRequest):
    """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest.

    Sent by the controller to a broker with the leader and ISR of the partitions the broker
    hosts, grouped by topic, plus the endpoints of the leaders it names. ``type`` is a
    ControlRequestType; ``is_kraft_controller`` marks requests from a KRaft controller
    during a ZooKeeper migration.
    """

    API_KEY: ClassVar[ApiKeys] = ApiKeys.LEADER_AND_ISR
    API_NAME: ClassVar[str] = ApiKeys.LEADER_AND_ISR.api_name
    RESPONSE_TYPE: ClassVar[type[LeaderAndIsrResponse]] = LeaderAndIsrResponse

    controller_id: int = 0
    is_kraft_controller: bool = False
    controller_epoch: int = 0
    broker_epoch: int = -1
    type: int = 0
    topic_states: tuple[LeaderAndIsrTopicState, ...] = ()
    live_leaders: tuple[LeaderAndIsrLiveLeader, ...] = ()
    # The version the controller sent it at (its IBP picks it; 7 from IBP 3.4). Below 5 the
    # message has no topic ids, below 6 no leader recovery state: the sender leaves them at
    # their defaults, as the broker would read them off the wire.
    version: int = dataclasses.field(default=7, metadata=REQUEST_HEADER_FIELD)

    @classmethod
    def build(
        cls,
        *,
        controller_id: int,
        controller_epoch: int,
        broker_epoch: int,
        partition_states: Iterable[LeaderAndIsrPartitionState],
        topic_ids: Mapping[str, Uuid],
        live_leaders: Iterable[LeaderAndIsrLiveLeader],
        is_kraft_controller: bool = False,
        type: int = 0,
        version: int = 7,
    ) -> LeaderAndIsrRequest:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest.Builder#build.

        Takes the flat list of partition states (each naming its topic) and groups them by
        topic in first-seen order, attaching each topic's id (ZERO_UUID when unknown).
        """
        # 1. Group partition states by topic name, keeping first-seen topic order.
        grouped: dict[str, list[LeaderAndIsrPartitionState]] = {}
        for state in partition_states:
            grouped.setdefault(state.topic_name, []).append(state)
        # 2. One topic state per topic, carrying its id.
        topic_states = tuple(
            LeaderAndIsrTopicState(
                topic_name=name,
                topic_id=topic_ids.get(name, ZERO_UUID),
                partition_states=tuple(states),
            )
            for name, states in grouped.items()
        )
        return cls(
            controller_id=controller_id,
            is_kraft_controller=is_kraft_controller,
            controller_epoch=controller_epoch,
            broker_epoch=broker_epoch,
            type=int(type),
            topic_states=topic_states,
            live_leaders=tuple(live_leaders),
            version=version,
        )

    def partition_states(self) -> Iterator[LeaderAndIsrPartitionState]:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest#partitionStates.

        Every partition state of every topic, in request order, each with ``topic_name`` set
        to its topic (Kafka fills the name in when it reads the request, so callers always
        see the flat view).
        """
        for topic_state in self.topic_states:
            name = topic_state.topic_name
            for state in topic_state.partition_states:
                yield state if state.topic_name == name else dataclasses.replace(state, topic_name=name)

    def topic_ids(self) -> dict[str, Uuid]:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest#topicIds."""
        return {t.topic_name: t.topic_id for t in self.topic_states}

    def request_type(self) -> ControlRequestType:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest#requestType."""
        return ControlRequestType(self.type)

    def get_error_response(self, error_code: int, throttle_time_ms: int = 0) -> LeaderAndIsrResponse:
        """Mirrors org.apache.kafka.common.requests.LeaderAndIsrRequest#getErrorResponse.

        The same error at the top level and for every partition, grouped by topic id.
        (LeaderAndIsr responses carry no throttle time.)
        """
        # 1. Per topic, one partition error per partition state.
        topics = tuple(
            LeaderAndIsrTopicError(
                topic_id=topic_state.topic_id,
                partition_errors=tuple(
                    LeaderAndIsrPartitionError(partition_index=p.partition_index, error_code=error_code)
                    for p in topic_state.partition_states
                ),
            )
            for topic_state in self.topic_states
        )
        # 2. The top-level error is the same code.
        return LeaderAndIsrResponse(error_code=error_code, topics=topics)


LeaderAndIsrResponse.REQUEST_TYPE = LeaderAndIsrRequest
