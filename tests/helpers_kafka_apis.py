"""Shared helpers of the KafkaApis request tests after Kafka 3.7 (tests/test_kafka_apis_*kafka.py).

Requests go to a running in-process cluster as a client's would; ``send_at`` stamps an envelope with
a wire version, as the socket listener does, for answers that depend on the request version.
"""

from __future__ import annotations

import random
from typing import Any

import anyio

from kafka_ref import Cluster
from kafka_ref.common.requests.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL

TOPIC = "topic"
TP = TopicPartition(TOPIC, 0)
EARLIEST = ListOffsetsRequest.EARLIEST_TIMESTAMP
LATEST = ListOffsetsRequest.LATEST_TIMESTAMP


async def send_at(cluster: Cluster, broker: int, request: Any, version: int | None = None,
                  principal: str = ANONYMOUS_PRINCIPAL) -> Any:
    """A client request to ``broker``, read at wire ``version`` (None: the newest, as in process)."""
    envelope = cluster.network.post("client", broker, request, principal)
    envelope.api_version = version
    return await cluster.network.wait(envelope, 30000)


_RNG = random.Random(7)


def new_id() -> Uuid:
    return Uuid.random_uuid(_RNG)


def list_offsets(replica_id: int, timestamp: int = EARLIEST, current_leader_epoch: int = -1,
                 isolation_level: int = 0, partitions: tuple[int, ...] = (0,), topic: str = TOPIC) -> ListOffsetsRequest:
    return ListOffsetsRequest(replica_id=replica_id, isolation_level=isolation_level, topics=(ListOffsetsTopic(
        name=topic, partitions=tuple(ListOffsetsPartition(partition_index=p, timestamp=timestamp,
                                                          current_leader_epoch=current_leader_epoch)
                                     for p in partitions)),))


def only_partition(response: Any) -> Any:
    [topic] = response.topics
    [partition] = topic.partitions
    return partition


async def coordinator_ready(cluster: Cluster, group: str) -> None:
    """FindCoordinator until broker 0 answers for ``group`` (COORDINATOR_NOT_AVAILABLE while
    __consumer_offsets is made and loaded)."""
    from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest

    find = FindCoordinatorRequest(key_type=0, coordinator_keys=(group,))
    for _ in range(100):
        if (await send_at(cluster, 0, find)).coordinators[0].error_code == 0:
            return
        await anyio.sleep(0.1)
    raise AssertionError(f"no coordinator for {group}")


async def leader_moved_away_from(cluster: Cluster, first: int) -> tuple[int, int, int]:
    """Kill ``first`` (the leader of topic-0), wait for another leader; (leader, its epoch, a live follower)."""
    cluster.kill_broker(first)
    await cluster.wait_until(lambda: cluster.leader_for(TOPIC, 0) not in (-1, first), timeout_ms=60000,
                             message="a new leader")
    leader = cluster.leader_for(TOPIC, 0)
    epoch = cluster.partition_state(TOPIC, 0)["leader_epoch"]
    replicas = cluster.partition_state(TOPIC, 0)["replicas"]
    follower = next(b for b in cluster.live_broker_ids() if b != leader and b in replicas)
    await cluster.wait_until(lambda: all(
        (s := cluster.replica_state(b, TOPIC, 0)) is not None and s.leader_epoch == epoch for b in (leader, follower)),
        message="both replicas at the new epoch")
    return leader, epoch, follower


def epoch_request(leader_epoch: int = 0, current_leader_epoch: int = -1, replica_id: int = 1) -> OffsetForLeaderEpochRequest:
    return OffsetForLeaderEpochRequest(replica_id=replica_id, topics=(OffsetForLeaderTopic(topic=TOPIC, partitions=(
        OffsetForLeaderPartition(partition=0, leader_epoch=leader_epoch, current_leader_epoch=current_leader_epoch),)),))


def only_epoch_end(response: Any) -> Any:
    [topic] = response.topics
    [partition] = topic.partitions
    return partition


def produce_request(records: Any, acks: int = -1, transactional_id: str | None = None, topic: str = TOPIC) -> Any:
    from kafka_ref.common.requests.produce import ProduceRequest

    return ProduceRequest.build(acks=acks, timeout_ms=3000, records={TopicPartition(topic, 0): records},
                                transactional_id=transactional_id)


def one_batch(*values: bytes, timestamp: int | None = None, compression: str = "none", **build: Any) -> Any:
    from kafka_ref.common.records import MemoryRecords, RecordBatch, SimpleRecord

    return MemoryRecords((RecordBatch.build([SimpleRecord(b"key", v, timestamp=timestamp) for v in values],
                                            compression=compression, **build),))


def only_produce(response: Any) -> Any:
    [topic] = response.responses
    [partition] = topic.partition_responses
    return partition
