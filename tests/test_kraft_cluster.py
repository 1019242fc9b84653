"""A KRaft-mode cluster end to end (issue 10; seed 004 §2.1–2.2).

The QuorumController on node 3000 owns the one-voter ``__cluster_metadata`` log; brokers register, heartbeat,
fetch the log as observers and apply it. Mirrors, where named, QuorumControllerTest,
ReplicationControlManagerTest, ClusterControlManagerTest and BrokerLifecycleManagerTest (Kafka 3.4). The
broker-failure scenarios of tests/test_zk_cluster.py run in KRaft mode there (parametrized over both modes).
"""

from __future__ import annotations

import anyio
import pytest
import structlog

from kafka_ref.cluster import Cluster
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreateableTopicConfig,
    CreateTopicsRequest,
)
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.common.requests.broker_requests import BrokerHeartbeatRequest, BrokerRegistrationRequest, Listener
from kafka_ref.controller.quorum.quorum_controller import ControllerResult, QuorumController
from kafka_ref.image.records import (
    BrokerRegistrationChangeRecord,
    FeatureLevelRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
)

SESSION_TIMEOUT_MS = 9000  # broker.session.timeout.ms default
TP = TopicPartition("t", 0)


async def produce(cluster: Cluster, value: bytes, acks: int = -1):
    request = ProduceRequest.build(acks=acks, timeout_ms=30000,
                                   records={TP: MemoryRecords.with_records([SimpleRecord(None, value)])})
    response = await cluster.network.send("client", cluster.leader_for("t", 0), request, 31000, principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


def log_records(cluster: Cluster) -> list:
    return [(b.base_offset + i, r) for b in cluster.active_controller().raft_client.log.batches for i, r in enumerate(b.records)]


def registration(cluster: Cluster, broker_id: int):
    return cluster.active_controller().cluster_control.registration(broker_id)


# ------------------------------------------------------------------------------ start-up and the metadata path


@pytest.mark.anyio
async def test_kraft_cluster_starts_brokers_register_and_are_unfenced():
    """Mirrors QuorumControllerTest#testRegisterBrokerKRaftVersions / BrokerLifecycleManagerTest#testCreateStartAndClose:
    the log starts with the leader's LeaderChangeMessage (offset 0) and metadata.version, each broker's epoch is the offset of its RegisterBrokerRecord, and
    each broker is unfenced once it caught up with that record."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=1) as cluster:
        assert (cluster.controller_id(), cluster.controller_epoch()) == (3000, 1)
        records = log_records(cluster)
        first = cluster.kraft.metadata_log.batches[0]
        assert (first.base_offset, first.epoch, first.records) == (0, 1, ())
        assert first.control_records[0].leader_id == 3000 and first.control_records[0].voters == (3000,)
        assert records[0] == (1, FeatureLevelRecord(name="metadata.version", feature_level=20))
        registered = {r.broker_id: offset for offset, r in records if isinstance(r, RegisterBrokerRecord)}
        assert sorted(registered) == [0, 1, 2]
        for b in range(3):
            assert cluster.broker(b).broker_epoch == registered[b] == registration(cluster, b).epoch
            assert not registration(cluster, b).fenced
            # Each broker has published everything the controller committed.
            assert cluster.broker(b).kraft.listener.image.highest_offset == cluster.active_controller().last_committed_offset
            assert sorted(cluster.broker(b).metadata_cache.alive_brokers) == [0, 1, 2]
        unfenced = [r.broker_id for _o, r in records if isinstance(r, BrokerRegistrationChangeRecord) and r.fenced == -1]
        assert sorted(unfenced) == [0, 1, 2]


@pytest.mark.anyio
async def test_create_topic_follows_the_seed_path():
    """Seed 004 §2.1–2.2: CreateTopics writes TopicRecord + PartitionRecords; each broker's listener replays
    them (HandleCommitsEvent → loadBatches → MetadataDelta#replay), publishes, and
    ReplicaManager#applyDelta makes the local leader and followers; followers start fetchers."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=2) as cluster:
        state_change_logger()  # structlog configured before capture_logs takes over
        with structlog.testing.capture_logs() as logs:
            await cluster.create_topic("t", replica_assignment={0: [1, 2, 0]})
        written = [type(r).__name__ for _o, r in log_records(cluster)[-2:]]
        assert written == ["TopicRecord", "PartitionRecord"]
        topic_id = log_records(cluster)[-2][1].topic_id
        for b in range(3):
            events = [e for e in logs if e.get("broker_id") == b]
            names = [e["event"] for e in events]
            # The publish, then the local changes, then (followers) the fetchers.
            publish = names.index("metadata_publish")
            changes = names.index("apply_delta_local_changes")
            assert publish < changes
            local = events[changes]
            if b == 1:
                assert (local["leaders"], local["followers"]) == (["t-0"], [])
                assert "apply_delta_started_fetchers_for_followers" not in names
            else:
                assert (local["leaders"], local["followers"]) == ([], ["t-0"])
                started = events[names.index("apply_delta_started_fetchers_for_followers")]
                assert started["leaders"] == {"t-0": 1}
            partition = cluster.broker(b).replica_manager.online_partition(TP)
            assert (partition.leader_replica_id_opt, partition.get_leader_epoch(), partition.topic_id) == (1, 0, topic_id)
        r = await produce(cluster, b"v0")
        assert (r.error_code, r.base_offset) == (0, 0)


@pytest.mark.anyio
async def test_metadata_request_on_a_kraft_broker():
    """KRaftMetadataCache#getTopicMetadata: the image's partitions; the "controller" is an alive broker."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=3) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        response = await cluster.network.send("client", 2, MetadataRequest.for_topics(["t", "nope"]), 1000,
                                              principal="User:ANONYMOUS")
        by_name = {t.name: t for t in response.topics}
        assert by_name["nope"].error_code == Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        assert by_name["t"].partitions[0].leader_id == 0
        assert tuple(by_name["t"].partitions[0].isr_nodes) == (0, 1, 2)
        assert response.controller_id in (0, 1, 2)
        assert sorted(b.node_id for b in response.brokers) == [0, 1, 2]


# ------------------------------------------------------------------------------ fencing


@pytest.mark.anyio
async def test_broker_that_stops_heartbeating_is_fenced_and_loses_leadership():
    """Mirrors QuorumControllerTest#testFenceMultipleBrokers / BrokerHeartbeatManager#findOneStaleBroker:
    an isolated leader is fenced no later than broker.session.timeout.ms after its last heartbeat (and not
    earlier), leaves the ISR and loses leadership (leader epoch + 1); back on the network it heartbeats again,
    is unfenced (it is caught up past its registration) and rejoins as a follower."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=4) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        assert (await produce(cluster, b"before")).error_code == 0
        controller = cluster.active_controller()
        heartbeats = controller.cluster_control.heartbeat_manager
        state_change_logger()
        with structlog.testing.capture_logs() as logs:
            t0 = anyio.current_time()
            last_contact_s = heartbeats.brokers[0].last_contact_ns / 1e9
            cluster.network.isolate(0)
            await cluster.wait_until(lambda: registration(cluster, 0).fenced, timeout_ms=SESSION_TIMEOUT_MS + 1000, poll_ms=1)
            fenced_at = anyio.current_time()
            assert (fenced_at - t0) * 1000 <= SESSION_TIMEOUT_MS + 1
            assert (fenced_at - last_contact_s) * 1000 >= SESSION_TIMEOUT_MS
            # The fencing write is committed (so shown by partition_state) once the Raft leader's
            # accumulator drains, controller.quorum.append.linger.ms (25 ms) later.
            assert cluster.partition_state("t", 0)["leader"] == 0
            await cluster.wait_until(lambda: cluster.partition_state("t", 0)["leader"] != 0, timeout_ms=1000, poll_ms=1)
            assert (anyio.current_time() - fenced_at) * 1000 == pytest.approx(25, abs=1)
            state = cluster.partition_state("t", 0)
            assert (state["leader"], state["leader_epoch"], state["isr"]) == (1, 1, [1, 2])
            fence = [e for e in logs if e["event"] == "fencing_stale_broker"]
            assert [e["stale_broker"] for e in fence] == [0]
            # The others learn it; the isolated broker cannot.
            await cluster.wait_until(lambda: cluster.broker(1).replica_manager.online_partition(TP).is_leader)
            assert sorted(cluster.broker(1).metadata_cache.alive_brokers) == [1, 2]
            assert (await produce(cluster, b"after")).base_offset == 1
            # Back on the network.
            cluster.network.heal_node(0)
            await cluster.wait_until(lambda: not registration(cluster, 0).fenced, timeout_ms=SESSION_TIMEOUT_MS * 2)
        unfence = [e for e in logs if e["event"] == "broker_state_change" and e["heartbeat_broker"] == 0 and e["next"] == "UNFENCED"]
        assert len(unfence) == 1
        assert unfence[0]["broker_metadata_offset"] >= unfence[0]["register_broker_record_offset"]
        old_leader = cluster.broker(0).replica_manager.online_partition(TP)
        await cluster.wait_until(lambda: not old_leader.is_leader and old_leader.log.log_end_offset == 2, timeout_ms=30000)
        assert (old_leader.leader_replica_id_opt, old_leader.get_leader_epoch()) == (1, 1)
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [0, 1, 2], timeout_ms=30000)


@pytest.mark.anyio
async def test_restarted_broker_is_unfenced_only_after_catching_up():
    """Mirrors BrokerHeartbeatManager#calculateNextBrokerState (FENCED → UNFENCED): a restarted broker registers
    with a new incarnation and a new epoch; its heartbeats are answered fenced until it reports an offset at
    or past its RegisterBrokerRecord and asks to be unfenced (after its first publish)."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=5) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [2, 0, 1]})
        old_epoch = cluster.broker(2).broker_epoch
        old_incarnation = registration(cluster, 2).incarnation_id
        cluster.kill_broker(2)
        await cluster.wait_until(lambda: registration(cluster, 2).fenced, timeout_ms=SESSION_TIMEOUT_MS + 1000)
        state_change_logger()
        heartbeats: list[BrokerHeartbeatRequest] = []
        cluster.network.observers.append(
            lambda env: heartbeats.append(env.request) if isinstance(env.request, BrokerHeartbeatRequest) and env.src == 2 else None)
        with structlog.testing.capture_logs() as logs:
            await cluster.restart_broker(2)
            await cluster.wait_until(lambda: not registration(cluster, 2).fenced, timeout_ms=30000)
        new = registration(cluster, 2)
        assert new.epoch > old_epoch and new.incarnation_id != old_incarnation
        assert cluster.broker(2).broker_epoch == new.epoch
        # Every heartbeat before the one that unfenced it asked to stay fenced or was behind its registration.
        unfencing = [h for h in heartbeats if not h.want_fence and h.current_metadata_offset >= new.epoch]
        first = heartbeats.index(unfencing[0])
        assert first >= 1
        assert all(h.want_fence or h.current_metadata_offset < new.epoch for h in heartbeats[:first])
        changes = [e for e in logs if e["event"] == "broker_state_change" and e["heartbeat_broker"] == 2]
        assert [(e["current"], e["next"]) for e in changes] == [("FENCED", "UNFENCED")]
        # The partition it led was moved while it was fenced and it comes back as a follower.
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [0, 1, 2], timeout_ms=30000)
        assert cluster.leader_for("t", 0) == 0


@pytest.mark.anyio
async def test_duplicate_registration_refused_while_the_old_session_lives():
    """Mirrors ClusterControlManagerTest#testRegistrationWithIncorrectClusterId / QuorumControllerTest's duplicate
    registration: another incarnation of a live broker id gets DUPLICATE_BROKER_REGISTRATION."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=6) as cluster:
        request = BrokerRegistrationRequest(broker_id=1, incarnation_id=Uuid(42, 42), listeners=(Listener(port=9999),))
        response = await cluster.network.send("impostor", 3000, request, 1000)
        assert response.error_code == Errors.DUPLICATE_BROKER_REGISTRATION.code
        wrong_cluster = BrokerRegistrationRequest(broker_id=7, cluster_id="other", incarnation_id=Uuid(4, 4))
        response = await cluster.network.send("impostor", 3000, wrong_cluster, 1000)
        assert response.error_code == Errors.INCONSISTENT_CLUSTER_ID.code
        # A heartbeat with a stale broker epoch is refused.
        stale = BrokerHeartbeatRequest(broker_id=1, broker_epoch=cluster.broker(1).broker_epoch - 1, current_metadata_offset=0)
        response = await cluster.network.send("impostor", 3000, stale, 1000)
        assert response.error_code == Errors.STALE_BROKER_EPOCH.code


# ------------------------------------------------------------------------------ controlled shutdown


@pytest.mark.anyio
async def test_controlled_shutdown_through_heartbeats():
    """Mirrors QuorumControllerTest#testBrokerControlledShutdown / BrokerHeartbeatManagerTest#testCalculateNextBrokerState:
    want_shut_down moves leaderships away (the broker enters controlled shutdown), and the controller says
    should_shut_down once it leads nothing and the others caught up; the broker is fenced."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=7) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2], 1: [1, 0, 2]})
        assert (await cluster.shutdown_broker(0)).succeeded is True
        assert cluster.partition_state("t", 0)["leader"] == 1
        assert 0 not in cluster.partition_state("t", 0)["isr"] and 0 not in cluster.partition_state("t", 1)["isr"]
        assert registration(cluster, 0).fenced
        types = [type(r).__name__ for _o, r in log_records(cluster)]
        shutdown_marks = [r for _o, r in log_records(cluster)
                          if isinstance(r, BrokerRegistrationChangeRecord) and r.broker_id == 0 and r.in_controlled_shutdown == 1]
        assert len(shutdown_marks) == 1 and "PartitionChangeRecord" in types
        assert cluster.broker(0).kraft.lifecycle.state.name == "SHUTTING_DOWN"


# ------------------------------------------------------------------------------ topics


@pytest.mark.anyio
async def test_delete_topic_removes_every_replica():
    """QuorumController#deleteTopics → RemoveTopicRecord; every broker's TopicsDelta#localChanges deletes its replica."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=8) as cluster:
        await cluster.create_topic("t", partitions=2, replication_factor=2)
        holders = {b for b in range(3) for p in range(2)
                   if cluster.broker(b).replica_manager.online_partition(TopicPartition("t", p)) is not None}
        assert len(holders) >= 2
        await cluster.delete_topic("t")
        assert cluster.partition_state("t", 0) is None
        for b in range(3):
            rm = cluster.broker(b).replica_manager
            assert all(rm.get_partition(TopicPartition("t", p)) is None for p in range(2))
            assert all(cluster.broker(b).log_manager.get_log(TopicPartition("t", p)) is None for p in range(2))
            assert not cluster.broker(b).metadata_cache.contains_topic("t")


@pytest.mark.anyio
async def test_create_topics_forwarded_by_a_broker_and_errors():
    """ReplicationControlManagerTest#testCreateTopics / #testValidateBadTopicConfigs: a broker forwards
    CreateTopics to the controller; an existing name, a bad config and an impossible replication factor fail."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=9) as cluster:
        request = CreateTopicsRequest(topics=(
            CreatableTopic(name="a", num_partitions=3, replication_factor=2),
            CreatableTopic(name="b", num_partitions=1, replication_factor=4),
            CreatableTopic(name="c", num_partitions=-1, replication_factor=-1, assignments=(
                CreatableReplicaAssignment(partition_index=0, broker_ids=(0, 7)),)),
        ), timeout_ms=5000)
        response = await cluster.network.send("client", 1, request, 10000)
        errors = {t.name: Errors.for_code(t.error_code) for t in response.topics}
        assert errors == {"a": Errors.NONE, "b": Errors.INVALID_REPLICATION_FACTOR, "c": Errors.INVALID_REPLICA_ASSIGNMENT}
        assert {t.name: (t.num_partitions, t.replication_factor) for t in response.topics}["a"] == (3, 2)
        again = await cluster.network.send("client", 2, CreateTopicsRequest(topics=(
            CreatableTopic(name="a", num_partitions=1, replication_factor=1),
            CreatableTopic(name="d", num_partitions=1, replication_factor=1,
                           configs=(CreateableTopicConfig(name="min.insync.replicas", value="zero"),)),
        ), timeout_ms=5000), 10000)
        assert {t.name: Errors.for_code(t.error_code) for t in again.topics} == {
            "a": Errors.TOPIC_ALREADY_EXISTS, "d": Errors.INVALID_CONFIG}


@pytest.mark.anyio
async def test_topic_config_reaches_the_brokers_log_config():
    """ConfigRecord → BrokerMetadataPublisher (configuration delta) → LogManager#updateTopicConfig."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=10) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]}, config={"min.insync.replicas": "3"})
        for b in range(3):
            assert cluster.broker(b).log_manager.fetch_log_config("t").min_in_sync_replicas == 3
        assert cluster.broker(0).replica_manager.online_partition(TP).min_isr() == 3


@pytest.mark.anyio
async def test_consumer_offsets_partitions_reach_the_group_coordinator_hooks():
    """BrokerMetadataPublisher#publish, __consumer_offsets part: local leaders → onElection, followers →
    onResignation, through the broker's leadership hooks."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=11) as cluster:
        seen = {b: [] for b in range(3)}
        for b in range(3):
            cluster.broker(b).leadership_listeners.append(
                lambda leaders, followers, b=b: seen[b].append(
                    (sorted(str(p.topic_partition) for p in leaders), sorted(str(p.topic_partition) for p in followers))))
        await cluster.create_topic("__consumer_offsets", replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})
        assert seen[0] == [(["__consumer_offsets-0"], ["__consumer_offsets-1"])]
        assert seen[1] == [(["__consumer_offsets-1"], ["__consumer_offsets-0"])]
        assert seen[2] == [([], ["__consumer_offsets-0", "__consumer_offsets-1"])]


@pytest.mark.anyio
async def test_metadata_version_3_2_writes_fence_and_unfence_records():
    """MetadataVersion#isBrokerRegistrationChangeRecordSupported: before 3.3 fencing uses Fence/UnfenceBrokerRecord."""
    async with Cluster(brokers=2, metadata_mode="kraft", config={"inter.broker.protocol.version": "3.2"}, seed=12) as cluster:
        types = [type(r).__name__ for _o, r in log_records(cluster)]
        assert types.count("UnfenceBrokerRecord") == 2 and "BrokerRegistrationChangeRecord" not in types
        assert log_records(cluster)[0][1] == FeatureLevelRecord(name="metadata.version", feature_level=3)


# ------------------------------------------------------------------------------ the controller alone (no network)


class FakeEnvelope:
    """Just enough of network.Envelope for a handler called directly."""

    def __init__(self, request, principal: str = "User:kafka") -> None:
        self.request = request
        self.principal = principal
        self.response = None

    def respond(self, response) -> None:
        self.response = response


def handle(controller, envelope) -> None:
    """The request, then the Raft thread's poll: with no linger a lone voter writes and commits it."""
    controller.handle(envelope)
    controller.raft_client.poll()


def controller_with_topic(**config):
    """A QuorumController on MockTime with brokers 0–2 registered and unfenced and topic t = [0, 1, 2].

    Its Raft client lingers 0 ms and the test plays the Raft thread (``handle``); the first poll
    writes the LeaderChangeMessage, so the controller claims its epoch.
    """
    time = MockTime()
    controller = QuorumController(3000, KafkaConfig({"node.id": 3000, "process.roles": "controller",
                                                     "controller.quorum.append.linger.ms": 0, **config}), time)
    controller.raft_client.poll()
    epochs = {}
    for b in range(3):
        env = FakeEnvelope(BrokerRegistrationRequest(broker_id=b, incarnation_id=Uuid(9, b), listeners=(Listener(port=9092 + b),)))
        handle(controller, env)
        epochs[b] = env.response.broker_epoch
        env = FakeEnvelope(BrokerHeartbeatRequest(broker_id=b, broker_epoch=epochs[b], current_metadata_offset=epochs[b], want_fence=False))
        handle(controller, env)
        assert env.response.is_fenced is False
    env = FakeEnvelope(CreateTopicsRequest(topics=(CreatableTopic(name="t", num_partitions=-1, replication_factor=-1, assignments=(
        CreatableReplicaAssignment(partition_index=0, broker_ids=(0, 1, 2)),)),)))
    handle(controller, env)
    return controller, time, epochs, env.response.topics[0].topic_id


def alter(controller, epochs, topic_id, *, broker=0, leader_epoch=0, partition_epoch=0, isr=(0, 1), epoch_delta=0):
    request = AlterPartitionRequest(broker_id=broker, broker_epoch=epochs[broker] + epoch_delta, topics=(AlterPartitionTopicData(
        topic_name="t", topic_id=topic_id, partitions=(AlterPartitionPartitionData(
            partition_index=0, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
            new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in isr)),)),))
    env = FakeEnvelope(request)
    handle(controller, env)
    return env.response


def test_alter_partition_validation():
    """Mirrors ReplicationControlManagerTest#testAlterPartitionHandleUnknownTopicIdOrName,
    #testInvalidAlterPartitionRequests, #testAlterPartitionShouldRejectFencedBrokers and the happy path."""
    controller, _time, epochs, topic_id = controller_with_topic()

    def error(**kw):
        response = alter(controller, epochs, topic_id, **kw)
        if response.error_code:
            return Errors.for_code(response.error_code)
        return Errors.for_code(response.topics[0].partitions[0].error_code)

    assert error(epoch_delta=-1) is Errors.STALE_BROKER_EPOCH
    assert Errors.for_code(alter(controller, epochs, Uuid(3, 3)).topics[0].partitions[0].error_code) is Errors.UNKNOWN_TOPIC_ID
    assert error(broker=1) is Errors.INVALID_REQUEST
    assert error(leader_epoch=1) is Errors.NOT_CONTROLLER
    assert error(isr=(0, 5)) is Errors.INVALID_REQUEST
    assert error(isr=(1, 2)) is Errors.INVALID_REQUEST
    # The happy path: the ISR shrinks, the partition epoch moves, the leader epoch stays (metadata.version 3.8).
    response = alter(controller, epochs, topic_id, isr=(0, 1))
    p = response.topics[0].partitions[0]
    assert (p.error_code, p.leader_id, p.leader_epoch, tuple(p.isr), p.partition_epoch) == (0, 0, 0, (0, 1), 1)
    assert error(partition_epoch=0, isr=(0, 1, 2)) is Errors.INVALID_UPDATE_VERSION
    # A fenced broker cannot join the ISR.
    records: list = []
    controller.replication_control.handle_broker_fenced(2, records)
    controller._write("fence", ControllerResult(records, None), lambda _r: None)
    controller.raft_client.poll()
    state = controller.partition_state("t", 0)
    assert error(partition_epoch=state["partition_epoch"], isr=(0, 1, 2)) is Errors.INELIGIBLE_REPLICA


def test_alter_partition_bumps_leader_epoch_on_shrink_before_3_6():
    """PartitionChangeBuilder#triggerLeaderEpochBumpIfNeeded through AlterPartition: with metadata.version 3.5
    the shrink also bumps the leader epoch, so the leader hears a new leader epoch."""
    controller, _time, epochs, topic_id = controller_with_topic(**{"inter.broker.protocol.version": "3.5"})
    p = alter(controller, epochs, topic_id, isr=(0, 1)).topics[0].partitions[0]
    assert (p.error_code, p.leader_epoch, p.partition_epoch) == (0, 1, 1)


def test_session_expiry_with_mock_time():
    """Mirrors BrokerHeartbeatManagerTest#testFindOneStaleBroker: sessions expire strictly after the timeout,
    oldest first; fencing removes the broker from ISRs and leadership in the same write."""
    controller, time, epochs, topic_id = controller_with_topic()
    heartbeat = controller.cluster_control.heartbeat_manager
    time.advance(SESSION_TIMEOUT_MS)
    assert heartbeat.find_one_stale_broker() is None
    for b in (1, 2):
        handle(controller, FakeEnvelope(BrokerHeartbeatRequest(broker_id=b, broker_epoch=epochs[b], current_metadata_offset=9,
                                                              want_fence=False)))
    time.advance(1)
    assert heartbeat.find_one_stale_broker() == 0
    records = controller.replication_control.maybe_fence_one_stale_broker()
    assert [type(r).__name__ for r in records] == ["PartitionChangeRecord", "BrokerRegistrationChangeRecord"]
    assert (records[0].leader, records[0].isr) == (1, (1, 2))
    assert heartbeat.find_one_stale_broker() is None
    assert heartbeat.next_check_time_ns() == heartbeat.brokers[1].last_contact_ns + SESSION_TIMEOUT_MS * 1_000_000


def test_topic_creation_records_and_placement():
    """ReplicationControlManagerTest#testCreateTopics: TopicRecord then one PartitionRecord per partition,
    leader = first active replica, ISR = the active replicas, every broker used as a first replica."""
    controller, _time, epochs, _topic_id = controller_with_topic()
    env = FakeEnvelope(CreateTopicsRequest(topics=(CreatableTopic(name="s", num_partitions=3, replication_factor=3),)))
    handle(controller, env)
    batch = controller.raft_client.log.batches[-1]
    assert [type(r).__name__ for r in batch.records] == ["TopicRecord"] + ["PartitionRecord"] * 3
    assert isinstance(batch.records[0], TopicRecord) and batch.records[0].topic_id == env.response.topics[0].topic_id
    parts = [r for r in batch.records if isinstance(r, PartitionRecord)]
    assert all(sorted(r.replicas) == [0, 1, 2] and r.isr == r.replicas and r.leader == r.replicas[0] for r in parts)
    assert sorted(r.leader for r in parts) == [0, 1, 2]


def test_demo_kraft_narrates_the_seed_path():
    """``kafka-ref demo --mode kraft``: record replayed → delta → local changes → fetcher started, then fencing."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo("failover", seed=7, out=lines.append, mode="kraft") == 0
    text = "\n".join(lines)
    assert lines[0].startswith("kafka-ref demo --mode kraft")
    create = text.index("== 2. CreateTopics")
    order = [text.index(fragment, create) for fragment in (
        "operation=createTopics records=2", "metadata_publish", "apply_delta_local_changes",
        "apply_delta_started_fetchers_for_followers", "TopicRecord(name='t'", "== 3.")]
    assert order == sorted(order)
    kill = text.index("== 4. kill the leader")
    assert kill < text.index("fencing_stale_broker", kill) < text.index("become_leader", kill)
    assert "current=FENCED next=UNFENCED" in text[text.index("== 5."):]
    assert lines[-1].startswith("== done at t=")


@pytest.mark.parametrize("flow,fragments", [
    ("deletion", ["== 1. DeleteTopics t", "apply_delta_deleting_partitions partitions=2", "RemoveTopicRecord(",
                  "logs of t-0 on disk: b0: -, b1: -, b2: -", "t-0 log end offset 0"]),
    ("preferred-election", ["== 1. kill broker 0", "fencing_stale_broker", "== 3. ElectLeaders PREFERRED",
                            "answer: t-0: error 0, t-1: error 0", "leader=0, replicas=None",
                            "p0: leader=0 epoch=2 isr=[0, 1, 2]; p1: leader=0 epoch=2 isr=[0, 1, 2]"]),
    ("controlled-shutdown", ["broker_begin_controlled_shutdown", "broker_controlled_shutdown_complete",
                             "the controller answered should_shut_down: True", "p1: leader=0 epoch=1 isr=[0, 2]"]),
    ("reassignment", ["20 records acknowledged", "== 1. AlterPartitionReassignments", "answer: t-0: error 0",
                      "adding_replicas=(3, 4, 5)", "replicas=(3, 4, 5)", "p0: leader=3 epoch=1 isr=[",
                      "logs of t-0 on disk: b0: -, b1: -, b2: -, b3: log, b4: log, b5: log", "log end offset 20"]),
    ("coordinator-failover", ["offsets_partition_loaded", "group_stabilized", "group_loaded",
                              "60 distinct records consumed of 60"]),
])
def test_demo_kraft_admin_flows(flow, fragments):
    """``kafka-ref demo FLOW --mode kraft``: the admin flows in their KRaft form, key lines in order."""
    from kafka_ref.demos.demo import run_demo

    lines: list[str] = []
    assert run_demo(flow, seed=7, out=lines.append, mode="kraft") == 0
    text = "\n".join(lines)
    positions = [text.find(fragment) for fragment in fragments]
    assert -1 not in positions, [f for f, p in zip(fragments, positions) if p == -1]
    assert positions == sorted(positions)
    # (Brokers may still log a publish at the same instant the flow ends.)
    assert sum(line.startswith("== done at t=") for line in lines) == 1


# ------------------------------------------------------------------------------ controller failover


@pytest.mark.anyio
async def test_controller_restart_replays_the_log_and_leads_in_the_next_epoch():
    """The one-voter form of a KRaft controller failover (KRaftClusterTest's controller restarts,
    QuorumMetaLogListener#handleCommit for a controller that is not active yet): while the
    controller node is down brokers keep serving and nobody is fenced; the restarted process
    replays the surviving log to the same state, claims epoch 2, keeps every broker session
    alive from the claim on, and its next writes (a fencing, a leader change) reach the brokers."""
    async with Cluster(brokers=3, metadata_mode="kraft", seed=7) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        assert (await produce(cluster, b"v0")).base_offset == 0
        before = cluster.active_controller()
        state_before = cluster.partition_state("t", 0)
        epochs_before = {b: registration(cluster, b).epoch for b in range(3)}
        log_end = cluster.kraft.metadata_version()
        # 1. Down: requests to the node are refused, the replicas carry on without it.
        cluster.kraft.kill_controller()
        assert not cluster.kraft.is_running and not cluster.network.is_up(3000)
        assert (await produce(cluster, b"v1")).base_offset == 1
        await anyio.sleep(SESSION_TIMEOUT_MS * 2 / 1000)
        assert cluster.kraft.metadata_version() == log_end
        assert not cluster.kraft.converged()
        # 2. Back: same state from the log, next epoch, no broker fenced for the downtime.
        await cluster.kraft.restart_controller()
        after = cluster.active_controller()
        assert after is not before and after.is_active
        assert cluster.controller_epoch() == 2 and after.cur_claim_epoch == 2
        assert cluster.partition_state("t", 0) == state_before
        assert {b: registration(cluster, b).epoch for b in range(3)} == epochs_before
        # Epoch 2 opens with the new leader's LeaderChangeMessage at the old log end.
        assert after.last_committed_offset == after.write_offset == log_end
        assert cluster.kraft.metadata_log.batches[-1].control_records[0].leader_id == 3000
        await anyio.sleep(SESSION_TIMEOUT_MS / 1000 / 2)
        assert not any(registration(cluster, b).fenced for b in range(3))
        await cluster.wait_until(cluster.kraft.converged)
        assert all(cluster.broker(b).kraft.raft.leader_epoch == 2 for b in range(3))
        # 3. Its writes carry epoch 2 and drive the brokers: broker 0 dies, is fenced, loses leadership.
        cluster.kill_broker(0)
        await cluster.wait_until(lambda: registration(cluster, 0).fenced, timeout_ms=SESSION_TIMEOUT_MS + 1000)
        # (partition_state shows the fencing once the write is committed, a linger later.)
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["leader"] != 0, timeout_ms=1000)
        state = cluster.partition_state("t", 0)
        assert (state["leader"], state["leader_epoch"], state["isr"]) == (1, 1, [1, 2])
        assert cluster.kraft.metadata_log.batches[-1].epoch == 2
        await cluster.wait_until(lambda: cluster.broker(1).replica_manager.online_partition(TP).is_leader)
        assert (await produce(cluster, b"v2")).base_offset == 2


# ------------------------------------------------------------------------------ ElectLeaders


@pytest.mark.anyio
async def test_elect_leaders_preferred_and_unclean_through_the_quorum_controller():
    """Mirrors ReplicationControlManagerTest#testElectPreferredLeaders and #testElectUncleanLeaders_WithoutElr:
    PREFERRED moves leadership back to the first replica once it is in the ISR (leader epoch + 1,
    ISR unchanged); a named partition that needs nothing answers ELECTION_NOT_NEEDED, an
    unknown one UNKNOWN_TOPIC_OR_PARTITION, and with no partitions named the ones that need
    nothing are left out; a preferred replica outside the ISR answers PREFERRED_LEADER_NOT_AVAILABLE;
    UNCLEAN elects a live replica outside the ISR of an offline partition."""
    from kafka_ref.common.requests.elect_leaders import ElectionType, ElectLeadersRequest

    config = {"broker.session.timeout.ms": SESSION_TIMEOUT_MS}
    async with Cluster(brokers=3, metadata_mode="kraft", seed=8, config=config) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2], 1: [1, 2, 0]})
        t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
        # Broker 0 dies and comes back: partition 0's leadership moved to 1 and stays there.
        cluster.kill_broker(0)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) == 1, timeout_ms=SESSION_TIMEOUT_MS + 1000)
        await cluster.restart_broker(0)
        await cluster.wait_until(lambda: sorted(cluster.partition_state("t", 0)["isr"]) == [0, 1, 2], timeout_ms=30000)
        before = cluster.partition_state("t", 0)
        assert (before["leader"], before["leader_epoch"]) == (1, 1)
        # PREFERRED for named partitions.
        errors = await cluster.elect_preferred_leaders([t0, t1, TopicPartition("nope", 0)])
        assert errors == {t0: Errors.NONE.code, t1: Errors.ELECTION_NOT_NEEDED.code,
                          TopicPartition("nope", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION.code}
        after = cluster.partition_state("t", 0)
        assert (after["leader"], after["leader_epoch"], after["isr"]) == (0, 2, before["isr"])
        await cluster.wait_until(lambda: cluster.broker(0).replica_manager.online_partition(t0).is_leader)
        # No partitions named: nothing needs an election, nothing is answered.
        assert await cluster.elect_preferred_leaders(None) == {}
        # An empty list asks for nothing.
        response = await cluster.network.send("admin", 3000, ElectLeadersRequest.of([]), 1000)
        assert response.replica_election_results == ()
        # The preferred replica outside the ISR: not available.
        cluster.network.isolate(1)
        await cluster.wait_until(lambda: cluster.leader_for("t", 1) == 2, timeout_ms=SESSION_TIMEOUT_MS + 1000)
        cluster.network.heal_node(1)
        cluster.kill_broker(1)
        assert await cluster.elect_preferred_leaders([t1]) == {t1: Errors.PREFERRED_LEADER_NOT_AVAILABLE.code}
        # UNCLEAN: partition 1's ISR dies with broker 2 and 0 ... only broker 1 (outside the ISR) returns.
        cluster.kill_broker(2)
        await cluster.wait_until(lambda: cluster.partition_state("t", 1)["leader"] in (0, -1), timeout_ms=SESSION_TIMEOUT_MS + 1000)
        cluster.kill_broker(0)
        await cluster.wait_until(lambda: cluster.partition_state("t", 1)["leader"] == -1, timeout_ms=SESSION_TIMEOUT_MS + 1000)
        isr = cluster.partition_state("t", 1)["isr"]
        assert 1 not in isr
        await cluster.restart_broker(1)
        await cluster.wait_until(lambda: not registration(cluster, 1).fenced)
        unclean = ElectLeadersRequest.of([t1], ElectionType.UNCLEAN)
        response = await cluster.network.send("admin", 3000, unclean, 1000)
        assert response.partition_errors() == {t1: Errors.NONE.code}
        state = cluster.partition_state("t", 1)
        assert (state["leader"], state["isr"]) == (1, [1])
        # A second UNCLEAN finds a leader: not needed.
        response = await cluster.network.send("admin", 3000, unclean, 1000)
        assert response.partition_errors() == {t1: Errors.ELECTION_NOT_NEEDED.code}
        # An unknown election type is a malformed request.
        bad = await cluster.network.send("admin", 3000, ElectLeadersRequest(election_type=7, topic_partitions=()), 1000)
        assert bad.error_code == Errors.NONE.code  # empty list: answered before the type is looked at, as in Kafka
        bad = await cluster.network.send("admin", 3000, ElectLeadersRequest(election_type=7), 1000)
        assert bad.error_code == Errors.INVALID_REQUEST.code
