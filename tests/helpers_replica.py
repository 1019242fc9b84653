"""Shared builders for the broker replica path tests (issue 3).

Plays the role of Kafka's AbstractPartitionTest / ReplicaManagerTest setup: a broker object that
is wired but not running (MockTime, no event loop), LeaderAndIsr / UpdateMetadata / StopReplica
builders, record helpers, follower/consumer fetch helpers, and MockAlterPartitionManager
(Kafka's kafka.utils.MockAlterPartitionManager: submissions queue up until the test answers).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import deque
from typing import Any, Iterable

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import FetchPartition
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrTopicState,
)
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaTopicState,
)
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.log.disk import Disk
from kafka_ref.log.fetch_data import FetchIsolation
from kafka_ref.network.network import Network
from kafka_ref.replica.fetch_params import FetchParams
from kafka_ref.server.kafka_broker import KafkaBroker
from kafka_ref.zk.zk_data import LeaderAndIsr

TOPIC = "t"
TP0 = TopicPartition(TOPIC, 0)
TP1 = TopicPartition(TOPIC, 1)
TOPIC_ID = Uuid(0x1234_5678_9ABC_DEF0, 0x0FED_CBA9_8765_4321)
OTHER_TOPIC_ID = Uuid(0x1111_2222_3333_4444, 0x5555_6666_7777_0000)
CONTROLLER_ID = 3000
LAG_MS = 30000


# ------------------------------------------------------------------------------ brokers


def make_broker(broker_id: int = 0, props: dict[str, Any] | None = None, time: MockTime | None = None,
                network: Network | None = None, disk: Disk | None = None) -> KafkaBroker:
    """A broker with every component wired (as KafkaServer#startup would) but nothing running."""
    config = KafkaConfig({"broker.id": broker_id, **(props or {})})
    return KafkaBroker(broker_id, config, network or Network(), disk or Disk(broker_id), time=time or MockTime())


def set_topic_config(broker: KafkaBroker, topic: str = TOPIC, **overrides: Any) -> None:
    """Per-topic overrides, e.g. ``set_topic_config(b, **{"min.insync.replicas": 2})``."""
    broker.log_manager.update_topic_config(topic, LogConfig.from_broker(broker.config, overrides))


# ------------------------------------------------------------------------------ controller requests


def lai_state(
    leader: int,
    leader_epoch: int,
    isr: Iterable[int],
    replicas: Iterable[int],
    *,
    topic: str = TOPIC,
    partition: int = 0,
    partition_epoch: int = 0,
    controller_epoch: int = 1,
    is_new: bool = True,
    adding: Iterable[int] = (),
    removing: Iterable[int] = (),
) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        topic_name=topic, partition_index=partition, controller_epoch=controller_epoch, leader=leader,
        leader_epoch=leader_epoch, isr=tuple(isr), partition_epoch=partition_epoch, replicas=tuple(replicas),
        adding_replicas=tuple(adding), removing_replicas=tuple(removing), is_new=is_new,
    )


def lai_request(
    states: Iterable[LeaderAndIsrPartitionState],
    *,
    controller_epoch: int = 1,
    topic_ids: dict[str, Uuid] | None = None,
    broker_epoch: int = -1,
    controller_id: int = CONTROLLER_ID,
) -> LeaderAndIsrRequest:
    by_topic: dict[str, list[LeaderAndIsrPartitionState]] = {}
    for s in states:
        by_topic.setdefault(s.topic_name, []).append(s)
    ids = {TOPIC: TOPIC_ID} if topic_ids is None else topic_ids
    return LeaderAndIsrRequest(
        controller_id=controller_id,
        controller_epoch=controller_epoch,
        broker_epoch=broker_epoch,
        topic_states=tuple(
            LeaderAndIsrTopicState(topic_name=t, topic_id=ids.get(t, ZERO_UUID), partition_states=tuple(ps))
            for t, ps in by_topic.items()
        ),
    )


def um_state(leader: int, leader_epoch: int, isr: Iterable[int], replicas: Iterable[int], *, topic: str = TOPIC,
             partition: int = 0, controller_epoch: int = 1, zk_version: int = 0) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(
        topic_name=topic, partition_index=partition, controller_epoch=controller_epoch, leader=leader,
        leader_epoch=leader_epoch, isr=tuple(isr), zk_version=zk_version, replicas=tuple(replicas),
    )


def um_request(states: Iterable[UpdateMetadataPartitionState] = (), *, brokers: Iterable[int] = (0, 1, 2),
               controller_epoch: int = 1, topic_ids: dict[str, Uuid] | None = None,
               controller_id: int = CONTROLLER_ID) -> UpdateMetadataRequest:
    by_topic: dict[str, list[UpdateMetadataPartitionState]] = {}
    for s in states:
        by_topic.setdefault(s.topic_name, []).append(s)
    ids = {TOPIC: TOPIC_ID} if topic_ids is None else topic_ids
    return UpdateMetadataRequest(
        controller_id=controller_id,
        controller_epoch=controller_epoch,
        topic_states=tuple(
            UpdateMetadataTopicState(topic_name=t, topic_id=ids.get(t, ZERO_UUID), partition_states=tuple(ps))
            for t, ps in by_topic.items()
        ),
        live_brokers=tuple(
            UpdateMetadataBroker(id=b, endpoints=(UpdateMetadataEndpoint(host="localhost", port=9092 + b, listener="PLAINTEXT"),))
            for b in brokers
        ),
    )


def stop_request(states: dict[TopicPartition, tuple[int, bool]], *, controller_epoch: int = 1,
                 controller_id: int = CONTROLLER_ID, broker_epoch: int = -1) -> StopReplicaRequest:
    """``states`` maps a partition to (leader_epoch, delete_partition)."""
    by_topic: dict[str, list[StopReplicaPartitionState]] = {}
    for tp, (epoch, delete) in states.items():
        by_topic.setdefault(tp.topic, []).append(
            StopReplicaPartitionState(partition_index=tp.partition, leader_epoch=epoch, delete_partition=delete))
    return StopReplicaRequest(
        controller_id=controller_id, controller_epoch=controller_epoch, broker_epoch=broker_epoch,
        topic_states=tuple(StopReplicaTopicState(topic_name=t, partition_states=tuple(ps)) for t, ps in by_topic.items()),
    )


def stop_states(states: dict[TopicPartition, tuple[int, bool]]) -> dict[TopicPartition, StopReplicaPartitionState]:
    return stop_request(states).partition_states()


def metadata_for(broker: KafkaBroker, brokers: Iterable[int] = (0, 1, 2), states: Iterable[UpdateMetadataPartitionState] = (),
                 controller_epoch: int = 1) -> None:
    """Feed the broker's metadata cache (live brokers matter for make_followers and ISR eligibility)."""
    broker.replica_manager.maybe_update_metadata_cache(0, um_request(states, brokers=brokers, controller_epoch=controller_epoch))


# ------------------------------------------------------------------------------ records and logs


def records(count: int = 1, *, prefix: str = "v", leader_epoch: int = -1, size: int = 0) -> MemoryRecords:
    """One batch of ``count`` records (each value padded to ``size`` bytes when given)."""
    def value(i: int) -> bytes:
        raw = f"{prefix}{i}".encode()
        return raw.ljust(size, b"x") if size else raw
    return MemoryRecords.with_records([SimpleRecord(f"k{i}".encode(), value(i)) for i in range(count)],
                                      partition_leader_epoch=leader_epoch)


def seed_log_data(log: Any, num_records: int, leader_epoch: int) -> None:
    """Mirrors AbstractPartitionTest#seedLogData: one single-record batch per record, as leader."""
    for i in range(num_records):
        log.append_as_leader(
            MemoryRecords.with_records([SimpleRecord(f"k{i}".encode(), f"v{i}".encode())], partition_leader_epoch=leader_epoch),
            leader_epoch,
        )


def batch_offsets(recs: MemoryRecords) -> list[tuple[int, int]]:
    return [(b.base_offset, b.last_offset) for b in recs]


# ------------------------------------------------------------------------------ fetches


def fetch_partition(fetch_offset: int, *, current_leader_epoch: int = -1, last_fetched_epoch: int = -1,
                    log_start_offset: int = -1, max_bytes: int = 1048576, partition: int = 0) -> FetchPartition:
    return FetchPartition(partition=partition, current_leader_epoch=current_leader_epoch, fetch_offset=fetch_offset,
                          last_fetched_epoch=last_fetched_epoch, log_start_offset=log_start_offset,
                          partition_max_bytes=max_bytes)


def follower_params(replica_id: int, *, max_wait_ms: int = 0, min_bytes: int = 1, max_bytes: int = 0x7FFFFFFF,
                    replica_epoch: int = -1) -> FetchParams:
    """Mirrors PartitionTest.followerFetchParams."""
    return FetchParams(replica_id=replica_id, replica_epoch=replica_epoch, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                       max_bytes=max_bytes, isolation=FetchIsolation.LOG_END)


def consumer_params(*, max_wait_ms: int = 0, min_bytes: int = 1, max_bytes: int = 0x7FFFFFFF) -> FetchParams:
    """Mirrors PartitionTest.consumerFetchParams (read-uncommitted: bounded by the HW)."""
    return FetchParams(replica_id=-1, replica_epoch=-1, max_wait_ms=max_wait_ms, min_bytes=min_bytes,
                       max_bytes=max_bytes, isolation=FetchIsolation.HIGH_WATERMARK)


def fetch_follower(partition: Any, replica_id: int, fetch_offset: int, *, leader_epoch: int = -1,
                   last_fetched_epoch: int = -1, log_start_offset: int = 0, fetch_time_ms: int | None = None,
                   replica_epoch: int = -1, max_bytes: int = 1048576) -> Any:
    """Mirrors AbstractPartitionTest#fetchFollower: Partition#fetchRecords for a follower."""
    return partition.fetch_records(
        replica_id=replica_id, fetch_only_leader=True, isolation=FetchIsolation.LOG_END, fetch_offset=fetch_offset,
        current_leader_epoch=leader_epoch, last_fetched_epoch=last_fetched_epoch, log_start_offset=log_start_offset,
        fetch_time_ms=partition.time.milliseconds() if fetch_time_ms is None else fetch_time_ms,
        max_bytes=max_bytes, min_one_message=True, update_fetch_state=True, replica_epoch=replica_epoch,
    )


def fetch_consumer(partition: Any, fetch_offset: int, *, leader_epoch: int = -1, max_bytes: int = 1048576) -> Any:
    """Mirrors AbstractPartitionTest#fetchConsumer (from the leader, HW-bounded)."""
    return partition.fetch_records(
        replica_id=-1, fetch_only_leader=True, isolation=FetchIsolation.HIGH_WATERMARK, fetch_offset=fetch_offset,
        current_leader_epoch=leader_epoch, last_fetched_epoch=-1, log_start_offset=-1,
        fetch_time_ms=partition.time.milliseconds(), max_bytes=max_bytes, min_one_message=True, update_fetch_state=True,
    )


class Collector:
    """Captures a response callback's argument(s); ``calls`` counts invocations."""

    def __init__(self) -> None:
        self.calls = 0
        self.value: Any = None

    def __call__(self, value: Any) -> None:
        self.calls += 1
        self.value = value

    @property
    def done(self) -> bool:
        return self.calls > 0


def rm_produce(rm: Any, recs: MemoryRecords, *, acks: int = -1, timeout: int = 1000, tp: TopicPartition = TP0,
               internal: bool = False) -> Collector:
    """ReplicaManager#appendRecords from a client; the Collector holds the per-partition answers."""
    collector = Collector()
    rm.append_records(timeout, acks, internal, "client", {tp: recs}, collector)
    return collector


def rm_fetch(rm: Any, params: FetchParams, *infos: tuple[TopicPartition, FetchPartition],
             topic_ids: dict[str, Uuid] | None = None) -> Collector:
    """ReplicaManager#fetchMessages; the Collector holds [(partition, LogReadResult)]."""
    collector = Collector()
    rm.fetch_messages(params, list(infos), collector, topic_ids)
    return collector


# ------------------------------------------------------------------------------ AlterPartition


@dataclasses.dataclass
class IsrUpdate:
    topic_partition: TopicPartition
    topic_id: Uuid | None
    leader_and_isr: LeaderAndIsr
    controller_epoch: int
    callback: Any
    # KRaft (KIP-903): the ISR members' broker epochs the partition sent along; None in ZooKeeper mode.
    isr_broker_epochs: dict[int, int] | None = None


class MockAlterPartitionManager:
    """Mirrors kafka.utils.MockAlterPartitionManager (test code): nothing is sent; the test answers.

    Like the real manager, a partition with a change already queued gets OPERATION_NOT_ATTEMPTED.
    """

    def __init__(self) -> None:
        self.isr_updates: deque[IsrUpdate] = deque()
        self.in_flight_partitions: set[TopicPartition] = set()
        self.submitted = 0

    def start(self, task_group: Any) -> None:
        """Nothing runs in the background."""

    def submit(self, tp: TopicPartition, topic_id: Uuid | None, leader_and_isr: LeaderAndIsr, controller_epoch: int,
               callback: Any, isr_broker_epochs: dict[int, int] | None = None) -> None:
        self.submitted += 1
        if tp in self.in_flight_partitions:
            callback(None, Errors.OPERATION_NOT_ATTEMPTED)
            return
        self.in_flight_partitions.add(tp)
        self.isr_updates.append(IsrUpdate(tp, topic_id, leader_and_isr, controller_epoch, callback, isr_broker_epochs))

    def complete_isr_update(self, new_partition_epoch: int) -> None:
        """The controller accepts the oldest queued change with ``new_partition_epoch``."""
        item = self.isr_updates.popleft()
        self.in_flight_partitions.discard(item.topic_partition)
        item.callback(dataclasses.replace(item.leader_and_isr, partition_epoch=new_partition_epoch), None)

    def fail_isr_update(self, error: Errors) -> None:
        """The controller answers the oldest queued change with ``error``."""
        item = self.isr_updates.popleft()
        self.in_flight_partitions.discard(item.topic_partition)
        item.callback(None, error)


def broker_with_mock_alter(broker_id: int = 0, props: dict[str, Any] | None = None, time: MockTime | None = None,
                           alive: Iterable[int] = (0, 1, 2)) -> tuple[KafkaBroker, MockAlterPartitionManager]:
    """A non-running broker whose partitions submit ISR changes to a MockAlterPartitionManager."""
    broker = make_broker(broker_id, props, time)
    mock = MockAlterPartitionManager()
    broker.replica_manager.alter_partition_manager = mock
    broker.alter_partition_manager = mock
    metadata_for(broker, brokers=alive)
    return broker, mock


def new_partition(broker: KafkaBroker, tp: TopicPartition = TP0) -> Any:
    """Mirrors ReplicaManager#createPartition (the partition is hosted online, no log yet)."""
    rm = broker.replica_manager
    partition = rm._new_partition(tp)
    rm.all_partitions[tp] = partition
    return partition


# ------------------------------------------------------------------------------ a manual-mode cluster


def corrupt(recs: MemoryRecords) -> MemoryRecords:
    """The same batch with its last byte flipped: the CRC no longer matches."""
    raw = bytearray(recs.to_bytes())
    raw[-1] ^= 0xFF
    return MemoryRecords.from_bytes(bytes(raw))


@contextlib.asynccontextmanager
async def replicated_cluster(config: dict[str, Any] | None = None, *, isr: Iterable[int] = (0, 1, 2),
                             partitions: int = 1, leader: int = 0):
    """Mirrors the seed's cluster walk-through: three brokers, the test as the controller.

    Every broker learns the live brokers and ``t``'s partitions (UpdateMetadata), then gets
    the LeaderAndIsr that makes ``leader`` the leader of each partition with RF 3.
    """
    from kafka_ref.cluster import Cluster

    async with Cluster(brokers=3, metadata_mode="manual", config=config) as cluster:
        isr = tuple(isr)
        await cluster.update_metadata([um_state(leader, 0, isr, (0, 1, 2), partition=p) for p in range(partitions)],
                                      {TOPIC: TOPIC_ID})
        request = cluster.leader_and_isr_request(
            [lai_state(leader, 0, isr, (0, 1, 2), partition=p) for p in range(partitions)], {TOPIC: TOPIC_ID})
        for b in range(3):
            response = await cluster.send(b, request)
            assert response.error_code == 0
        yield cluster


def produce_request(recs: MemoryRecords, *, acks: int = -1, timeout_ms: int = 30000, tp: TopicPartition = TP0) -> Any:
    from kafka_ref.common.requests.produce import ProduceRequest

    return ProduceRequest.build(acks=acks, timeout_ms=timeout_ms, records={tp: recs})


def fetch_request(fetch_offset: int, *, replica_id: int = -1, max_wait_ms: int = 0, min_bytes: int = 1,
                  tp: TopicPartition = TP0, version: int | None = None, **partition_kwargs: Any) -> Any:
    from kafka_ref.common.requests.fetch import FetchRequest

    return FetchRequest.build(
        fetch_data={tp: fetch_partition(fetch_offset, partition=tp.partition, **partition_kwargs)},
        max_wait_ms=max_wait_ms, min_bytes=min_bytes, replica_id=replica_id, version=version,
    )
