"""Replication in a manual-mode cluster: the test plays the controller, real fetchers replicate.

``Cluster(metadata_mode="manual")`` has no controller: the test sends UpdateMetadata and
LeaderAndIsr itself (``elect`` below) and the brokers' ReplicaFetcherThreads, fetch sessions,
purgatories and AlterPartition requests do the rest in virtual time. Faults come from the
in-process network (isolate, cut_link, an observer that drops chosen requests) and from
crashing brokers (the Disk survives).

The helpers here are shared with tests/test_truncation_eras.py.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import pytest
import trio.testing

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import FetchRequest
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataPartitionState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.network.network import Envelope

pytestmark = pytest.mark.anyio

TOPIC = "t"
TP = TopicPartition(TOPIC, 0)
TOPIC_ID = Uuid(0x1111222233334444, 0x5555666677778888)
CLIENT_PRINCIPAL = "User:ANONYMOUS"


# ---------------------------------------------------------------------- the test as controller

# The last partition epoch each cluster's test-controller handed out, per topic.
_PARTITION_EPOCHS: "weakref.WeakKeyDictionary[Cluster, dict[str, int]]" = weakref.WeakKeyDictionary()


def next_partition_epoch(cluster: Cluster, topic: str, topic_id: Uuid) -> int:
    """A partition epoch newer than any the brokers know: the controller bumps it on every
    leader change, and the harness controller also bumped it for each AlterPartition it
    accepted (a LeaderAndIsr with an older partition epoch is skipped by Partition#makeLeader)."""
    bumped = [
        p.partition_epoch + 1
        for r in cluster.controller.alter_partition_requests
        for t in r.topics if t.topic_name == topic or t.topic_id == topic_id
        for p in t.partitions
    ]
    epochs_by_topic = _PARTITION_EPOCHS.setdefault(cluster, {})
    epochs_by_topic[topic] = max([epochs_by_topic.get(topic, -1), *bumped]) + 1
    return epochs_by_topic[topic]


async def elect(
    cluster: Cluster,
    *,
    leader: int,
    leader_epoch: int,
    isr: Iterable[int],
    replicas: Iterable[int],
    to: Iterable[int] | None = None,
    metadata_to: Iterable[int] | None = None,
    is_new: bool = False,
    topic: str = TOPIC,
    partitions: Iterable[int] = (0,),
    topic_id: Uuid = TOPIC_ID,
) -> None:
    """Play the controller: UpdateMetadata to ``metadata_to`` (default: every live broker, as
    Kafka's controller does), then LeaderAndIsr to ``to`` (default: every live replica).

    Every partition of ``partitions`` gets the same leader, epoch, ISR and replicas and a new
    partition epoch, in one request per broker. The answers must carry no error. The live broker list in
    UpdateMetadata is every running broker, so a restarted broker becomes ISR-eligible again.
    """
    isr, replicas = tuple(isr), tuple(replicas)
    live = cluster.live_broker_ids()
    targets = [b for b in (replicas if to is None else to) if b in live]
    metadata_targets = live if metadata_to is None else [b for b in metadata_to if b in live]
    partition_epoch = next_partition_epoch(cluster, topic, topic_id)
    metadata = [
        UpdateMetadataPartitionState(topic_name=topic, partition_index=p, controller_epoch=1, leader=leader,
                                     leader_epoch=leader_epoch, isr=isr, zk_version=partition_epoch, replicas=replicas)
        for p in partitions
    ]
    for broker, response in (await cluster.update_metadata(metadata, {topic: topic_id}, brokers=metadata_targets)).items():
        assert response.error_code == Errors.NONE.code, (broker, response)
    request = cluster.leader_and_isr_request([
        LeaderAndIsrPartitionState(topic_name=topic, partition_index=p, controller_epoch=1, leader=leader,
                                   leader_epoch=leader_epoch, isr=isr, partition_epoch=partition_epoch,
                                   replicas=replicas, is_new=is_new)
        for p in partitions
    ], {topic: topic_id})
    for broker in targets:
        response = await cluster.send(broker, request)
        assert response.error_code == Errors.NONE.code, (broker, response)
        assert {e.error_code for t in response.topics for e in t.partition_errors} == {Errors.NONE.code}, (broker, response)


async def produce(cluster: Cluster, broker: int, *values: bytes, acks: int, tp: TopicPartition = TP, key: bytes | None = None) -> Any:
    """Send one batch of ``values`` to ``broker`` as a client; returns the partition's answer."""
    request = ProduceRequest.build(
        acks=acks, timeout_ms=30000,
        records={tp: MemoryRecords.with_records([SimpleRecord(key, v) for v in values])},
    )
    response = await cluster.network.send("client", broker, request, 31000, principal=CLIENT_PRINCIPAL)
    return response.responses[0].partition_responses[0]


async def produce_to_many(cluster: Cluster, broker: int, tps: Iterable[TopicPartition], value: bytes, acks: int) -> list[Any]:
    """One ProduceRequest carrying one single-record batch for each of ``tps``."""
    request = ProduceRequest.build(
        acks=acks, timeout_ms=30000,
        records={tp: MemoryRecords.with_records([SimpleRecord(None, value)]) for tp in tps},
    )
    response = await cluster.network.send("client", broker, request, 31000, principal=CLIENT_PRINCIPAL)
    return [p for t in response.responses for p in t.partition_responses]


# ---------------------------------------------------------------------- looking at replicas


def partition_of(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> Any:
    partition = cluster.broker(broker).replica_manager.online_partition(tp)
    assert partition is not None, f"broker {broker} does not host {tp}"
    return partition


def log_of(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> Any:
    return partition_of(cluster, broker, tp).log


def batches(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> list[tuple[int, int, list[tuple[bytes | None, bytes | None]]]]:
    """Every batch of the replica's log as (base offset, partition leader epoch, [(key, value)])."""
    return [(b.base_offset, b.partition_leader_epoch, [(r.key, r.value) for r in b]) for b in log_of(cluster, broker, tp).batches]


def epochs(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> list[tuple[int, int]]:
    """The replica's leader-epoch cache as (epoch, start offset) pairs."""
    return [(e.epoch, e.start_offset) for e in log_of(cluster, broker, tp).leader_epoch_cache.epoch_entries]


def fetch_state(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> Any:
    """The follower's PartitionFetchState for ``tp`` (None when no fetcher has it)."""
    fetcher = cluster.broker(broker).replica_manager.replica_fetcher_manager.get_fetcher(tp)
    return fetcher.fetch_state(tp) if fetcher is not None else None


def fetching(cluster: Cluster, broker: int, tp: TopicPartition = TP) -> bool:
    """True once the follower finished truncating and fetches ``tp``."""
    state = fetch_state(cluster, broker, tp)
    return state is not None and not state.is_truncating


def isr_of(cluster: Cluster, leader: int, tp: TopicPartition = TP) -> set[int]:
    return set(partition_of(cluster, leader, tp).in_sync_replica_ids)


class RequestRecorder:
    """A network observer: remembers the type of every request between brokers (not client or controller)."""

    def __init__(self, cluster: Cluster) -> None:
        self.brokers = set(range(cluster.num_brokers))
        self.seen: list[tuple[int, int, str, Any]] = []
        cluster.network.observers.append(self)

    def __call__(self, envelope: Envelope) -> None:
        if envelope.src in self.brokers and envelope.dst in self.brokers:
            self.seen.append((envelope.src, envelope.dst, type(envelope.request).__name__, envelope.request))

    def clear(self) -> None:
        self.seen.clear()

    def kinds(self, src: int, dst: int) -> list[str]:
        """Request type names from ``src`` to ``dst`` in order, repeated Fetches collapsed into one."""
        out: list[str] = []
        for s, d, kind, _ in self.seen:
            if (s, d) == (src, dst) and not (kind == "FetchRequest" and out and out[-1] == kind):
                out.append(kind)
        return out

    def of_kind(self, src: int, dst: int, kind: str) -> list[Any]:
        return [r for s, d, k, r in self.seen if (s, d, k) == (src, dst, kind)]


class DropFetches:
    """A network observer that silently drops every Fetch from ``src`` to ``dst`` while installed.

    Other requests (OffsetsForLeaderEpoch, ListOffsets) get through: the leader looks alive to
    the follower's truncation step but never answers its fetches -- a leader that dies before
    answering.
    """

    def __init__(self, cluster: Cluster, src: int, dst: int) -> None:
        self.cluster, self.src, self.dst = cluster, src, dst
        self.dropped = 0
        cluster.network.observers.append(self)

    def __call__(self, envelope: Envelope) -> None:
        if (envelope.src, envelope.dst) == (self.src, self.dst) and isinstance(envelope.request, FetchRequest):
            self.dropped += 1
            self.cluster.network.drop_next(self.src, self.dst)

    def remove(self) -> None:
        self.cluster.network.observers.remove(self)


def ibp_config(ibp: str | None, **extra: Any) -> dict[str, Any]:
    """Broker config with ``inter.broker.protocol.version`` (None: Kafka's default, the latest)."""
    config = {k.replace("_", "."): v for k, v in extra.items()}
    if ibp is not None:
        config["inter.broker.protocol.version"] = ibp
    return config


ALL_ERAS = ["0.10.2", "0.11.0", "2.0", "2.7", None]


# ---------------------------------------------------------------------- three brokers, RF 3


@pytest.mark.parametrize("ibp", ALL_ERAS, ids=lambda v: f"ibp-{v or 'default'}")
async def test_old_leader_truncates_unreplicated_records_after_leader_change(ibp):
    """Three brokers, RF 3. The leader (0) is cut off from its followers and appends two batches
    with acks=1 that nobody replicates; broker 1 becomes leader in epoch 1 and takes three new
    batches; when 0 comes back as a follower it truncates its two epoch-0 batches and the three
    logs end up identical batch for batch (offsets, partition leader epochs, keys and values).
    The default IBP truncates on the fetch response's diverging epoch; the parametrised older
    eras reach the same logs by HW truncation (0.10.2) or OffsetsForLeaderEpoch (0.11, 2.0).
    (In the spirit of EpochDrivenReplicationProtocolAcceptanceTest#shouldFollowLeaderEpochBasicWorkflow.)"""
    async with Cluster(brokers=3, metadata_mode="manual", config=ibp_config(ibp)) as cluster:
        # 1. Broker 0 leads epoch 0 with everyone in sync; three committed batches.
        await elect(cluster, leader=0, leader_epoch=0, isr=[0, 1, 2], replicas=[0, 1, 2], is_new=True)
        for i in range(3):
            response = await produce(cluster, 0, b"c%d" % i, acks=-1, key=b"k%d" % i)
            assert (response.error_code, response.base_offset) == (Errors.NONE.code, i)
        await cluster.wait_until(lambda: all(log_of(cluster, b).high_watermark == 3 for b in range(3)),
                                 message="every replica learned HW 3")
        # 2. Cut 0 off from both followers; it appends two batches no follower sees.
        cluster.network.cut_link(0, 1)
        cluster.network.cut_link(0, 2)
        for i, value in enumerate((b"lost-a", b"lost-b")):
            response = await produce(cluster, 0, value, acks=1, key=b"x")
            assert (response.error_code, response.base_offset) == (Errors.NONE.code, 3 + i)
        assert log_of(cluster, 0).log_end_offset == 5
        assert [log_of(cluster, b).log_end_offset for b in (1, 2)] == [3, 3]
        # 3. Broker 1 becomes leader with a higher epoch and takes three batches with 2 in sync.
        await elect(cluster, leader=1, leader_epoch=1, isr=[1, 2], replicas=[0, 1, 2], to=[1, 2])
        for i in range(3):
            response = await produce(cluster, 1, b"n%d" % i, acks=-1, key=b"k%d" % (3 + i))
            assert (response.error_code, response.base_offset) == (Errors.NONE.code, 3 + i)
        # 4. The links heal and the old leader learns it is a follower of epoch 1.
        cluster.network.heal_link(0, 1)
        cluster.network.heal_link(0, 2)
        await elect(cluster, leader=1, leader_epoch=1, isr=[1, 2], replicas=[0, 1, 2], to=[0])
        await cluster.wait_until(lambda: isr_of(cluster, 1) == {0, 1, 2}, message="broker 0 back in the ISR")
        await cluster.wait_until(lambda: all(log_of(cluster, b).high_watermark == 6 for b in range(3)),
                                 message="every replica learned HW 6")
        # 5. Identical logs: the epoch-0 records 0 never replicated are gone everywhere.
        expected = (
            [(i, 0, [(b"k%d" % i, b"c%d" % i)]) for i in range(3)]
            + [(3 + i, 1, [(b"k%d" % (3 + i), b"n%d" % i)]) for i in range(3)]
        )
        for broker in range(3):
            assert batches(cluster, broker) == expected, broker
            assert epochs(cluster, broker) == [(0, 0), (1, 3)], broker
            assert log_of(cluster, broker).log_end_offset == 6


# ---------------------------------------------------------------------- fetch sessions (KIP-227)

NUM_PARTITIONS = 10_000
BIG_TOPIC = "big"
BIG_TOPIC_ID = Uuid(0x0102030405060708, 0x1112131415161718)
ACTIVE = [TopicPartition(BIG_TOPIC, p) for p in (0, 2500, 5000, 7500, 9999)]
# 10,000 partitions cost ~0.5 s of wall time per fetch round; one backend is enough here.
TRIO_ONLY = pytest.mark.parametrize("anyio_backend", [pytest.param(("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}), id="trio")])


class FetchSizes:
    """Observer: (session id, session epoch, partitions listed, partitions forgotten) of each Fetch 1 -> 0."""

    def __init__(self, cluster: Cluster) -> None:
        self.requests: list[tuple[int, int, int, int]] = []
        cluster.network.observers.append(self)

    def __call__(self, envelope: Envelope) -> None:
        request = envelope.request
        if isinstance(request, FetchRequest) and (envelope.src, envelope.dst) == (1, 0):
            self.requests.append((
                request.session_id, request.session_epoch,
                sum(len(t.partitions) for t in request.topics),
                sum(len(t.partitions) for t in request.forgotten_topics_data),
            ))

    def listed(self) -> list[int]:
        return [n for _, _, n, _ in self.requests]


async def _follower_of_10000_partitions(cluster: Cluster, sizes: FetchSizes) -> None:
    """Leader 0 and follower 1 for 10,000 partitions (one UpdateMetadata and one LeaderAndIsr per
    broker); then 5 of them get one record each, all in one produce with acks=-1."""
    # 1. Create everything in one request per broker.
    await elect(cluster, leader=0, leader_epoch=0, isr=[0, 1], replicas=[0, 1], is_new=True,
                topic=BIG_TOPIC, partitions=range(NUM_PARTITIONS), topic_id=BIG_TOPIC_ID)
    # 2. The follower's first fetch (every partition) waits in the leader's purgatory: nothing to read.
    await cluster.wait_until(lambda: len(sizes.requests) >= 1, message="the first fetch")
    # 3. Five partitions become active; acks=-1 returns once the follower fetched past the records.
    responses = await produce_to_many(cluster, 0, ACTIVE, b"v", acks=-1)
    assert [(r.error_code, r.base_offset) for r in responses] == [(Errors.NONE.code, 0)] * 5
    assert len(sizes.requests) == 2
    # 4. One more round: the follower learns the new high watermarks, nothing else moves.
    await cluster.wait_until(lambda: len(sizes.requests) >= 3, message="the third fetch")
    await cluster.wait_until(lambda: all(log_of(cluster, 1, tp).high_watermark == 1 for tp in ACTIVE),
                             message="the follower learned the HW of the active partitions")


@TRIO_ONLY
async def test_incremental_fetch_sends_only_changed_partitions():
    """With fetch sessions on (max.incremental.fetch.session.cache.slots at its default 1000), the
    follower's first fetch is a full one listing all 10,000 partitions (session id 0, epoch 0);
    the leader opens a session and every later fetch is incremental: after a produce to 5
    partitions it lists exactly those 5 (their fetch offsets changed), then nothing while
    nothing moves (KIP-227; FetchSessionTest#testIncrementalFetchSession at cluster level)."""
    async with Cluster(brokers=2, metadata_mode="manual") as cluster:
        sizes = FetchSizes(cluster)
        await _follower_of_10000_partitions(cluster, sizes)
        first_session, first_epoch, first_listed, _ = sizes.requests[0]
        assert (first_session, first_epoch, first_listed) == (0, 0, NUM_PARTITIONS)
        session_id = sizes.requests[1][0]
        assert session_id != 0
        # Incremental fetches: same session, epochs 1, 2, 3, ... and no forgotten partitions.
        assert [(s, e, f) for s, e, _, f in sizes.requests[1:]] == [(session_id, i, 0) for i in range(1, len(sizes.requests))]
        assert sizes.listed()[:3] == [NUM_PARTITIONS, 5, 0]
        assert set(sizes.listed()[3:]) <= {0}
        # Every replica of the 5 active partitions holds the record.
        for tp in ACTIVE:
            assert log_of(cluster, 1, tp).log_end_offset == 1
        # The leader keeps exactly one session, for the follower, holding every partition.
        cache = cluster.broker(0).fetch_manager.cache
        assert cache.size == 1
        assert cache.total_partitions == NUM_PARTITIONS


@TRIO_ONLY
async def test_without_session_slots_every_fetch_is_full():
    """With max.incremental.fetch.session.cache.slots=0 the leader never opens a session
    (it answers session id 0), so every follower fetch is a full one listing all 10,000
    partitions, idle or not."""
    async with Cluster(brokers=2, metadata_mode="manual", config={"max.incremental.fetch.session.cache.slots": 0}) as cluster:
        sizes = FetchSizes(cluster)
        await _follower_of_10000_partitions(cluster, sizes)
        assert len(sizes.requests) >= 3
        assert set(sizes.requests) == {(0, 0, NUM_PARTITIONS, 0)}
        for tp in ACTIVE:
            assert log_of(cluster, 1, tp).log_end_offset == 1
        assert cluster.broker(0).fetch_manager.cache.size == 0
