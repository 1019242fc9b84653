"""The ZooKeeper-era cluster end to end: controller election and failover, broker failure,
unclean leader election (seed 001 §5.1, §5.2, §5.4.2)."""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

ZK_TIMEOUT_MS = 18000
# The broker-failure scenarios run in both metadata modes (KRaft: tests/test_kraft_cluster.py has the rest).
MODES = ["zk", "kraft"]


async def produce(cluster: Cluster, topic: str, value: bytes, acks: int = -1):
    request = ProduceRequest.build(
        acks=acks, timeout_ms=30000,
        records={TopicPartition(topic, 0): MemoryRecords.with_records([SimpleRecord(None, value)])},
    )
    response = await cluster.network.send("client", cluster.leader_for(topic, 0), request, 31000, principal="User:ANONYMOUS")
    return response.responses[0].partition_responses[0]


async def test_controller_elected_and_topic_created():
    """The first broker to create /controller wins with controller epoch 1; a new topic gets
    leader = first replica, leader epoch 0, ISR = all replicas, partition epoch 0
    (mirrors ControllerIntegrationTest#testTopicCreation)."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=1) as cluster:
        assert cluster.controller_epoch() == 1
        controller = cluster.active_controller()
        assert controller.is_active and controller.epoch == 1
        await cluster.create_topic("t", partitions=2, replication_factor=3)
        for p in range(2):
            state = cluster.partition_state("t", p)
            replicas = controller.controller_context.partition_replica_assignment(TopicPartition("t", p))
            assert state["leader"] == replicas[0]
            assert state["leader_epoch"] == 0
            assert sorted(state["isr"]) == [0, 1, 2]
            assert state["partition_epoch"] == 0
            # Every broker hosts the partition in the role the controller chose.
            for b in range(3):
                partition = cluster.broker(b).replica_manager.online_partition(TopicPartition("t", p))
                assert partition is not None
                assert partition.leader_replica_id_opt == replicas[0]
                assert partition.get_leader_epoch() == 0


async def test_controller_failover_bumps_epoch_and_old_epoch_is_fenced():
    """Kill the controller's broker: another broker becomes controller with epoch + 1 within
    zookeeper.session.timeout.ms of loop time; a request carrying the old controller epoch is
    refused with STALE_CONTROLLER_EPOCH (ControllerIntegrationTest#testControllerMoveOnActiveControllerFailure)."""
    import anyio

    async with Cluster(brokers=3, metadata_mode="zk", seed=2) as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        old_controller = cluster.controller_id()
        old_epoch = cluster.controller_epoch()
        start = anyio.current_time()
        cluster.kill_broker(old_controller)
        await cluster.wait_until(lambda: cluster.controller_id() not in (None, old_controller), timeout_ms=ZK_TIMEOUT_MS + 1000)
        elapsed_ms = (anyio.current_time() - start) * 1000
        assert elapsed_ms <= ZK_TIMEOUT_MS + 200
        assert cluster.controller_epoch() == old_epoch + 1
        new_controller = cluster.active_controller()
        assert new_controller.epoch == old_epoch + 1
        # A LeaderAndIsr from the deposed controller's epoch is refused as a whole.
        survivor = next(b for b in cluster.live_broker_ids())
        stale = cluster.leader_and_isr_request([LeaderAndIsrPartitionState(
            topic_name="t", partition_index=0, controller_epoch=old_epoch, leader=survivor, leader_epoch=99,
            isr=(survivor,), partition_epoch=99, replicas=(0, 1, 2))])
        stale = type(stale)(controller_id=old_controller, controller_epoch=old_epoch, topic_states=stale.topic_states)
        # Let the new controller's requests land first so the broker knows the new epoch.
        await cluster.wait_until(lambda: cluster.broker(survivor).replica_manager.controller_epoch == old_epoch + 1)
        response = await cluster.send(survivor, stale)
        assert response.error_code == Errors.STALE_CONTROLLER_EPOCH.code


@pytest.mark.kafka_ref_schedules(20, only={"mode": "zk"})
@pytest.mark.parametrize("mode", MODES)
async def test_leader_failure_elects_from_isr_and_old_leader_rejoins(mode):
    """Kill the leader: the controller elects the next live ISR member with leader epoch + 1;
    acknowledged acks=all writes survive; the old leader comes back as a follower, catches up
    and rejoins the ISR (seed 001 §5.4.2 OfflinePartitionLeaderSelector)."""
    async with Cluster(brokers=3, metadata_mode=mode, config={"min.insync.replicas": 2}, seed=3) as cluster:
        await cluster.create_topic("t", partitions=1, replication_factor=3)
        acked = []
        for i in range(5):
            r = await produce(cluster, "t", f"v{i}".encode())
            assert r.error_code == 0
            acked.append(r.base_offset)
        assert acked == [0, 1, 2, 3, 4]
        before = cluster.partition_state("t", 0)
        leader = before["leader"]
        cluster.kill_broker(leader)
        await cluster.wait_until(lambda: cluster.leader_for("t", 0) not in (-1, leader), timeout_ms=ZK_TIMEOUT_MS * 2)
        after = cluster.partition_state("t", 0)
        assert after["leader_epoch"] == before["leader_epoch"] + 1
        assert after["leader"] in before["isr"] and after["leader"] != leader
        new_leader_log = cluster.broker(after["leader"]).replica_manager.online_partition(TopicPartition("t", 0)).log
        assert new_leader_log.log_end_offset >= 5
        r = await produce(cluster, "t", b"after")
        assert r.error_code == 0 and r.base_offset == 5
        await cluster.restart_broker(leader)
        await cluster.wait_until(lambda: leader in cluster.partition_state("t", 0)["isr"], timeout_ms=60000)
        rejoined = cluster.broker(leader).replica_manager.online_partition(TopicPartition("t", 0))
        await cluster.wait_until(lambda: rejoined.log.log_end_offset == 6)
        assert rejoined.leader_replica_id_opt == after["leader"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("unclean", [False, True])
async def test_entire_isr_offline(unclean, mode):
    """With the whole ISR offline the partition stays offline (leader -1) without unclean
    election; with unclean.leader.election.enable a live out-of-sync replica leads
    (seed 001 §5.4.2; PartitionLeaderElectionAlgorithms#offlinePartitionLeaderElection)."""
    config = {"unclean.leader.election.enable": unclean, "replica.lag.time.max.ms": 1000}
    async with Cluster(brokers=3, metadata_mode=mode, config=config, seed=4) as cluster:
        # Keep the controller out of the partition so cutting leader<->follower leaves AlterPartition alone.
        leader, follower = [b for b in range(3) if b != cluster.controller_id()][:2]
        await cluster.create_topic("t", replica_assignment={0: [leader, follower]})
        assert cluster.partition_state("t", 0)["isr"] == [leader, follower]
        # The follower stops fetching (cut off from the leader) and falls out of the ISR.
        cluster.network.cut_link(follower, leader)
        await produce(cluster, "t", b"x", acks=1)
        await cluster.wait_until(lambda: cluster.partition_state("t", 0)["isr"] == [leader], timeout_ms=30000)
        cluster.network.heal_link(follower, leader)
        # Now the only ISR member dies.
        cluster.kill_broker(leader)
        if unclean:
            await cluster.wait_until(lambda: cluster.leader_for("t", 0) == follower, timeout_ms=ZK_TIMEOUT_MS * 2)
            assert cluster.partition_state("t", 0)["isr"] == [follower]
        else:
            await cluster.wait_until(lambda: cluster.leader_for("t", 0) == -1, timeout_ms=ZK_TIMEOUT_MS * 2)
            assert cluster.partition_state("t", 0)["isr"] == [leader]
            # The ISR member returns: it leads again.
            await cluster.restart_broker(leader)
            await cluster.wait_until(lambda: cluster.leader_for("t", 0) == leader, timeout_ms=60000)


@pytest.mark.parametrize("mode", MODES)
async def test_broker_failure_end_to_end_every_acked_record_survives(mode):
    """RF 3, min.insync.replicas 2, acks=all under a steady producer: kill the leader of every
    partition in turn; every acknowledged record is read back at the offset it was acknowledged
    with; each killed broker comes back, truncates, and rejoins the ISR
    (mirrors the spirit of Kafka's ReplicationTest / UncleanLeaderElectionTest with clean elections)."""
    import anyio

    config = {"min.insync.replicas": 2, "replica.lag.time.max.ms": 10000}
    async with Cluster(brokers=3, metadata_mode=mode, config=config, seed=5) as cluster:
        await cluster.create_topic("t", partitions=3, replication_factor=3)
        acked: dict[tuple[int, int], bytes] = {}
        errors: list[BaseException] = []
        stop = anyio.Event()

        async with cluster.producer(acks=-1, request_timeout_ms=5000, delivery_timeout_ms=120000) as producer:
            async def produce_steadily() -> None:
                i = 0
                while not stop.is_set():
                    value = f"v{i}".encode()
                    try:
                        md = await producer.send("t", value, partition=i % 3)
                        acked[(md.partition, md.offset)] = value
                    except Exception as exc:  # a non-retriable failure would fail the test below
                        errors.append(exc)
                    i += 1
                    await anyio.sleep(0.05)

            async with anyio.create_task_group() as tg:
                tg.start_soon(produce_steadily)
                for p in range(3):
                    await anyio.sleep(1)
                    leader = cluster.leader_for("t", p)
                    cluster.kill_broker(leader)
                    await cluster.wait_until(lambda: cluster.leader_for("t", p) not in (-1, leader), timeout_ms=60000)
                    await anyio.sleep(1)
                    await cluster.restart_broker(leader)
                    await cluster.wait_until(
                        lambda: all(len(cluster.partition_state("t", q)["isr"]) == 3 for q in range(3)), timeout_ms=60000)
                stop.set()
        assert errors == []
        # (Each kill stalls the sequential producer until the controller moves the leader and the
        # client's next metadata refresh, paced by its reconnect backoff to the dead broker, sees it.)
        assert len(acked) > 35
        # Every acknowledged record is in the log at its acknowledged offset.
        consumer = cluster.consumer(auto_offset_reset="earliest")
        consumer.assign([TopicPartition("t", p) for p in range(3)])
        seen: dict[tuple[int, int], bytes] = {}
        with anyio.fail_after(60):
            while not all(k in seen for k in acked):
                for r in await consumer.poll(1000):
                    seen[(r.partition, r.offset)] = r.value
        for key, value in acked.items():
            assert seen[key] == value
        # All three replicas of each partition hold identical logs.
        for p in range(3):
            logs = [cluster.broker(b).replica_manager.online_partition(TopicPartition("t", p)).log for b in range(3)]
            await cluster.wait_until(lambda: len({log.log_end_offset for log in logs}) == 1)
            batches = [[(bt.base_offset, bt.partition_leader_epoch, bt.buffer) for bt in log.batches] for log in logs]
            assert batches[0] == batches[1] == batches[2]


@pytest.mark.parametrize("mode", MODES)
async def test_cluster_accepts_a_kafka_server_properties(mode):
    """A config copied from a Kafka server.properties starts a cluster: the keys kafka_ref does not
    model (listeners, log.dirs, zookeeper.connect...) are accepted, as Kafka's broker accepts them,
    and each broker names them once at start-up (``broker_config_not_modelled``); the modelled
    ones take effect (min.insync.replicas=2 becomes the topic's log config)."""
    import logging

    from structlog.testing import capture_logs

    from kafka_ref.common.state_change import configure_logging

    props = {"listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs", "zookeeper.connect": "localhost:2181",
             "num.network.threads": "3", "min.insync.replicas": "2"}
    configure_logging(logging.INFO)
    try:
        with capture_logs() as logs:
            async with Cluster(brokers=3, metadata_mode=mode, config=props, seed=1) as cluster:
                await cluster.create_topic("t", partitions=1, replication_factor=3)
                assert cluster.broker(0).config.get("min.insync.replicas") == 2
                leader = cluster.broker(cluster.leader_for("t", 0))
                assert leader.log_manager.fetch_log_config("t").min_in_sync_replicas == 2
                answer = await produce(cluster, "t", b"v")
                assert (answer.error_code, answer.base_offset) == (Errors.NONE.code, 0)
    finally:
        configure_logging()
    named = sorted(entry["broker_id"] for entry in logs if entry["event"] == "broker_config_not_modelled")
    assert named == [0, 1, 2]
    keys = {tuple(entry["keys"]) for entry in logs if entry["event"] == "broker_config_not_modelled"}
    assert keys == {("listeners", "log.dirs", "num.network.threads", "zookeeper.connect")}
