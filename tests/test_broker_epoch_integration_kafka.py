"""Ports of kafka.server.BrokerEpochIntegrationTest (Kafka 3.8.0, ZooKeeper mode).

Each broker's epoch is the czxid of its ephemeral /brokers/ids/<id> znode (KIP-380). Kafka's test
starts two brokers (auto leader rebalance off) against ZooKeeper and checks that the epoch each
broker's controller object holds, and the epochs the active controller caches, match
ZooKeeper's; then it plays a second controller (id 2, its own ControllerContext and
ControllerChannelManager) and sends broker 1 a LeaderAndIsr, an UpdateMetadata and a
StopReplica carrying broker 1's epoch, one less, or one more. A request with an older epoch
than the broker's is refused as a whole with STALE_BROKER_EPOCH; the current and a newer one
are applied.

Here ``Cluster(metadata_mode="zk")`` plays the brokers, a KafkaZkClient of the test's own is
QuorumTestHarness's zkClient, and the stand-in controller's ControllerChannelManager runs in
the test's task group on the cluster's network. Kafka's assertions only look for the error in
``errorCounts``; these also check the whole count map (LeaderAndIsr counts its top-level code
and the partition's, UpdateMetadata and StopReplica their top-level code alone).

Beyond Kafka's suite: a broker whose ZooKeeper session expires registers again with a new
epoch (KafkaController#processRegisterBrokerAndReelect), the controller takes it for a bounced
broker, and control requests carrying the old epoch are refused; a refused StopReplica still
lets idle replica fetchers go (KafkaApis#handleStopReplicaRequest shuts them down after either
branch). And the controller's own broker-epoch checks (KafkaController in 3.8.0): an
AlterPartition must carry the leader's current epoch exactly (-1 included: no exemption, unlike
the control requests), and a ControlledShutdown with an epoch from a broker the controller does
not know fails on the epoch lookup (UNKNOWN_SERVER_ERROR) before the BROKER_NOT_AVAILABLE check
that only an epoch-less request reaches.

Not ported: nothing (all six tests are here).
"""

from __future__ import annotations

import random
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.requests.controlled_shutdown import ControlledShutdownRequest
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
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
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_channel_manager import ControllerChannelManager
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.zk.admin_zk_client import AdminZkClient
from kafka_ref.zk.kafka_zk_client import KafkaZkClient

pytestmark = pytest.mark.anyio

BROKER_ID_1 = 0
BROKER_ID_2 = 1
STAND_IN_CONTROLLER_ID = 2
INITIAL_LEADER_EPOCH = 0  # LeaderAndIsr.InitialLeaderEpoch
INITIAL_PARTITION_EPOCH = 0  # LeaderAndIsr.InitialPartitionEpoch
PLAINTEXT = 0  # SecurityProtocol.PLAINTEXT.id
TP = TopicPartition("new-topic", 0)
NONE = Errors.NONE.code
STALE = Errors.STALE_BROKER_EPOCH.code


@asynccontextmanager
async def two_brokers(seed: int) -> AsyncIterator[tuple[Cluster, KafkaZkClient]]:
    """The test's setUp: brokers 0 and 1, auto leader rebalance off, and the harness's zkClient."""
    config = {"auto.leader.rebalance.enable": False}
    async with Cluster(brokers=2, metadata_mode="zk", config=config, seed=seed) as cluster:
        zk = KafkaZkClient(cluster.zookeeper, name="test-harness")
        async with anyio.create_task_group() as tg:
            tg.start_soon(zk.run)
            try:
                yield cluster, zk
            finally:
                tg.cancel_scope.cancel()
                zk.close()


def epochs_by_id(zk: KafkaZkClient) -> dict[int, int]:
    """zkClient.getAllBrokerAndEpochsInCluster, keyed by broker id."""
    return {info.broker_id: epoch for info, epoch in zk.get_all_broker_and_epochs_in_cluster().items()}


async def check_controller_broker_epochs_cache_matches_with_zk(cluster: Cluster, zk: KafkaZkClient,
                                                               context: ControllerContext) -> None:
    """Mirrors the test's checkControllerBrokerEpochsCacheMatchesWithZk: ZooKeeper is read once,
    then the controller's liveBrokerIdAndEpochs must come to equal it."""
    in_zk = epochs_by_id(zk)
    await cluster.wait_until(lambda: context.live_broker_id_and_epochs == in_zk, message="Broker epoch mismatches")


# ------------------------------------------------------------------------------ epochs in ZooKeeper


async def test_replica_manager_broker_epoch_matches_with_zk():
    """Mirrors BrokerEpochIntegrationTest#testReplicaManagerBrokerEpochMatchesWithZk."""
    async with two_brokers(seed=1) as (cluster, zk):
        in_zk = epochs_by_id(zk)
        assert sorted(in_zk) == [BROKER_ID_1, BROKER_ID_2]
        for broker_id, epoch in in_zk.items():
            assert cluster.broker(broker_id).controller.broker_epoch == epoch
            assert cluster.broker(broker_id).broker_epoch == epoch
        # Each epoch is its registration's czxid: two registrations, two different epochs.
        assert in_zk[BROKER_ID_1] != in_zk[BROKER_ID_2]
        for broker_id, epoch in in_zk.items():
            assert cluster.zookeeper.exists(f"/brokers/ids/{broker_id}").czxid == epoch


async def test_controller_broker_epoch_cache_matches_with_zk():
    """Mirrors BrokerEpochIntegrationTest#testControllerBrokerEpochCacheMatchesWithZk: steady
    state, after the other broker's shutdown (it leaves the cache), and after its restart (it
    comes back with a newer epoch)."""
    async with two_brokers(seed=2) as (cluster, zk):
        controller_id = cluster.controller_id()
        other = next(b for b in (BROKER_ID_1, BROKER_ID_2) if b != controller_id)
        context = cluster.broker(controller_id).controller.controller_context
        first = epochs_by_id(zk)

        await check_controller_broker_epochs_cache_matches_with_zk(cluster, zk, context)
        assert context.live_broker_id_and_epochs == first

        await cluster.shutdown_broker(other)
        await check_controller_broker_epochs_cache_matches_with_zk(cluster, zk, context)
        assert context.live_broker_id_and_epochs == {controller_id: first[controller_id]}

        restarted = await cluster.restart_broker(other)
        await check_controller_broker_epochs_cache_matches_with_zk(cluster, zk, context)
        epochs = context.live_broker_id_and_epochs
        assert sorted(epochs) == [BROKER_ID_1, BROKER_ID_2]
        assert epochs[controller_id] == first[controller_id]
        assert epochs[other] == restarted.broker_epoch == restarted.controller.broker_epoch
        assert epochs[other] > first[other]


# ------------------------------------------------------------------------------ control requests


class StandInController:
    """The second controller of testControlRequestWithBrokerEpoch: its own context and channels."""

    def __init__(self, cluster: Cluster, zk: KafkaZkClient, tg: anyio.abc.TaskGroup) -> None:
        self.cluster = cluster
        # 1. A context holding every live broker and its epoch (as ZooKeeper has them).
        self.broker_and_epochs = zk.get_all_broker_and_epochs_in_cluster()
        self.context = ControllerContext()
        self.context.set_live_brokers(self.broker_and_epochs)
        # 2. Channels to those brokers, on the cluster's network, as controller 2.
        config = cluster.broker_config(BROKER_ID_1)
        self.channel_manager = ControllerChannelManager(STAND_IN_CONTROLLER_ID, cluster.network,
                                                        config.get("controller.socket.timeout.ms"))
        self.channel_manager.startup(tg, sorted(self.context.live_or_shutting_down_broker_ids))

    async def send(self, request: Any) -> Any:
        """controllerChannelManager.sendRequest(brokerId2, ...): the response its callback gets."""
        responses: list[Any] = []
        self.channel_manager.send_request(BROKER_ID_2, request, responses.append)
        await self.cluster.wait_until(lambda: bool(responses), message=f"an answer to {type(request).__name__}")
        return responses[0]

    async def send_and_verify_stale_broker_epoch_in_response(self, request: Any, error_counts: dict[int, int]) -> None:
        """Mirrors the test's sendAndVerifyStaleBrokerEpochInResponse (and the exact counts)."""
        response = await self.send(request)
        assert STALE in response.error_counts(), "Stale broker epoch not detected by the broker"
        assert response.error_counts() == error_counts

    async def send_and_verify_successful_response(self, request: Any, error_counts: dict[int, int]) -> None:
        """Mirrors the test's sendAndVerifySuccessfulResponse (and the exact counts)."""
        response = await self.send(request)
        counts = response.error_counts()
        assert not counts or set(counts) == {NONE}, "Should receive response with no errors"
        assert counts == error_counts


async def control_request_with_broker_epoch(epoch_in_request_diff_from_current_epoch: int, seed: int) -> None:
    """Mirrors BrokerEpochIntegrationTest#testControlRequestWithBrokerEpoch."""
    async with two_brokers(seed=seed) as (cluster, zk):
        # 1. new-topic: one partition, a replica on each broker (TestUtils.createTopic through ZooKeeper).
        AdminZkClient(zk, random.Random(7)).create_topic_with_assignment(TP.topic, {}, {0: [BROKER_ID_1, BROKER_ID_2]})
        await cluster.wait_until(lambda: all(cluster.broker(b).metadata_cache.get_partition_info(TP) is not None
                                             and cluster.broker(b).metadata_cache.get_partition_info(TP).leader >= 0
                                             for b in (BROKER_ID_1, BROKER_ID_2)),
                                 message="new-topic-0 in every broker's metadata")
        topic_ids = dict(cluster.active_controller().controller_context.topic_ids)
        controller_epoch = zk.get_controller_epoch()[0]
        broker2 = cluster.broker(BROKER_ID_2)
        epoch_in_request = broker2.controller.broker_epoch + epoch_in_request_diff_from_current_epoch
        stale = epoch_in_request_diff_from_current_epoch < 0

        async with anyio.create_task_group() as tg:
            stand_in = StandInController(cluster, zk, tg)
            nodes = [LeaderAndIsrLiveLeader(broker_id=info.broker_id, host_name=info.host, port=info.port)
                     for info in stand_in.broker_and_epochs]
            try:
                # 2. LeaderAndIsr: broker 1 leads at leader epoch 1.
                leader_and_isr = LeaderAndIsrRequest.build(
                    controller_id=STAND_IN_CONTROLLER_ID, controller_epoch=controller_epoch,
                    broker_epoch=epoch_in_request, topic_ids=topic_ids, live_leaders=nodes,
                    partition_states=[LeaderAndIsrPartitionState(
                        topic_name=TP.topic, partition_index=TP.partition, controller_epoch=controller_epoch,
                        leader=BROKER_ID_2, leader_epoch=INITIAL_LEADER_EPOCH + 1, isr=(BROKER_ID_1, BROKER_ID_2),
                        partition_epoch=INITIAL_PARTITION_EPOCH, replicas=(0, 1), is_new=False)])
                if stale:
                    await stand_in.send_and_verify_stale_broker_epoch_in_response(leader_and_isr, {STALE: 2})
                    partition = broker2.replica_manager.online_partition(TP)
                    assert (partition.leader_replica_id_opt, partition.get_leader_epoch()) == (BROKER_ID_1,
                                                                                               INITIAL_LEADER_EPOCH)
                else:
                    await stand_in.send_and_verify_successful_response(leader_and_isr, {NONE: 2})
                    # TestUtils.waitUntilLeaderIsKnown(Seq(broker2), tp)
                    await cluster.wait_until(lambda: broker2.replica_manager.online_partition(TP) is not None
                                             and broker2.replica_manager.online_partition(TP).is_leader,
                                             message="broker 1 leads new-topic-0")
                    partition = broker2.replica_manager.online_partition(TP)
                    assert (partition.leader_replica_id_opt, partition.get_leader_epoch()) == (BROKER_ID_2,
                                                                                               INITIAL_LEADER_EPOCH + 1)

                # 3. UpdateMetadata naming broker 1 the leader.
                update_metadata = UpdateMetadataRequest(
                    controller_id=STAND_IN_CONTROLLER_ID, controller_epoch=controller_epoch, broker_epoch=epoch_in_request,
                    topic_states=(UpdateMetadataTopicState(topic_name=TP.topic, topic_id=topic_ids[TP.topic], partition_states=(
                        UpdateMetadataPartitionState(
                            topic_name=TP.topic, partition_index=TP.partition, controller_epoch=controller_epoch,
                            leader=BROKER_ID_2, leader_epoch=INITIAL_LEADER_EPOCH + 1, isr=(BROKER_ID_1, BROKER_ID_2),
                            zk_version=INITIAL_PARTITION_EPOCH, replicas=(0, 1)),)),),
                    live_brokers=tuple(
                        UpdateMetadataBroker(id=info.broker_id, rack=info.rack, endpoints=(UpdateMetadataEndpoint(
                            host=info.host, port=info.port, security_protocol=PLAINTEXT, listener="PLAINTEXT"),))
                        for info in stand_in.broker_and_epochs))
                if stale:
                    await stand_in.send_and_verify_stale_broker_epoch_in_response(update_metadata, {STALE: 1})
                    assert broker2.metadata_cache.get_partition_info(TP).leader == BROKER_ID_1
                    assert broker2.metadata_cache.controller_id == cluster.controller_id()
                else:
                    await stand_in.send_and_verify_successful_response(update_metadata, {NONE: 1})
                    await cluster.wait_until(lambda: broker2.metadata_cache.get_partition_info(TP) is not None,
                                             message="new-topic-0 in broker 1's metadata")
                    info = broker2.metadata_cache.get_partition_info(TP)
                    assert (info.leader, info.leader_epoch) == (BROKER_ID_2, INITIAL_LEADER_EPOCH + 1)
                    # The broker's cache now names the sender as the controller (ZkMetadataCache).
                    assert broker2.metadata_cache.controller_id == STAND_IN_CONTROLLER_ID

                # 4. StopReplica deleting broker 1's replica.
                stop_replica = StopReplicaRequest(
                    controller_id=STAND_IN_CONTROLLER_ID, controller_epoch=controller_epoch, broker_epoch=epoch_in_request,
                    topic_states=(StopReplicaTopicState(topic_name=TP.topic, partition_states=(StopReplicaPartitionState(
                        partition_index=TP.partition, leader_epoch=INITIAL_LEADER_EPOCH + 2, delete_partition=True),)),))
                if stale:
                    await stand_in.send_and_verify_stale_broker_epoch_in_response(stop_replica, {STALE: 1})
                    assert broker2.replica_manager.get_partition(TP) is not None
                else:
                    await stand_in.send_and_verify_successful_response(stop_replica, {NONE: 2})
                    # HostedPartition.None
                    assert broker2.replica_manager.get_partition(TP) is None
            finally:
                stand_in.channel_manager.shutdown()
                tg.cancel_scope.cancel()


async def test_control_request_with_correct_broker_epoch():
    """Mirrors BrokerEpochIntegrationTest#testControlRequestWithCorrectBrokerEpoch."""
    await control_request_with_broker_epoch(0, seed=3)


async def test_control_request_with_stale_broker_epoch():
    """Mirrors BrokerEpochIntegrationTest#testControlRequestWithStaleBrokerEpoch."""
    await control_request_with_broker_epoch(-1, seed=4)


async def test_control_request_with_newer_broker_epoch():
    """Mirrors BrokerEpochIntegrationTest#testControlRequestWithNewerBrokerEpoch."""
    await control_request_with_broker_epoch(1, seed=5)


# ------------------------------------------------------------------------------ beyond Kafka's suite


async def test_alter_partition_needs_the_leaders_exact_broker_epoch():
    """KafkaController#tryProcessAlterPartition: the request's broker epoch must equal the one the
    controller caches for the leader; an older one, a newer one and the unknown -1 are all
    STALE_BROKER_EPOCH for the whole request, and the partition state stays as it was."""
    async with two_brokers(seed=6) as (cluster, zk):
        await cluster.create_topic(TP.topic, replica_assignment={0: [BROKER_ID_1, BROKER_ID_2]})
        controller_id = cluster.controller_id()
        state = cluster.partition_state(TP.topic, 0)
        leader = state["leader"]
        leader_epoch = cluster.active_controller().controller_context.live_broker_id_and_epochs[leader]

        def request(broker_epoch: int) -> AlterPartitionRequest:
            # Propose the ISR it already has (every field current but the broker epoch).
            return AlterPartitionRequest(broker_id=leader, broker_epoch=broker_epoch, version=1, topics=(
                AlterPartitionTopicData(topic_name=TP.topic, partitions=(AlterPartitionPartitionData(
                    partition_index=0, leader_epoch=state["leader_epoch"], partition_epoch=state["partition_epoch"],
                    new_isr_with_epochs=tuple(BrokerState(broker_id=b) for b in state["isr"])),)),))

        for epoch in (-1, leader_epoch - 1, leader_epoch + 1):
            response = await cluster.send(controller_id, request(epoch))
            assert (response.error_code, response.topics) == (STALE, ())
        assert cluster.partition_state(TP.topic, 0) == state
        response = await cluster.send(controller_id, request(leader_epoch))
        assert response.error_code == NONE
        assert [(p.error_code, p.leader_id, tuple(p.isr)) for t in response.topics for p in t.partitions] == [
            (NONE, leader, tuple(state["isr"]))]


async def test_controlled_shutdown_from_an_unknown_broker():
    """KafkaController#doControlledShutdown: with a broker epoch the cached epoch is looked up
    first, so a broker the controller does not know gets UNKNOWN_SERVER_ERROR (Kafka's
    NoSuchElementException); without one (-1) it gets BROKER_NOT_AVAILABLE. A known broker
    asking with an older epoch gets STALE_BROKER_EPOCH and is not marked shutting down."""
    async with two_brokers(seed=7) as (cluster, zk):
        controller_id = cluster.controller_id()
        context = cluster.active_controller().controller_context
        other = next(b for b in (BROKER_ID_1, BROKER_ID_2) if b != controller_id)

        async def controlled_shutdown(broker_id: int, broker_epoch: int) -> int:
            response = await cluster.network.send(broker_id, controller_id, ControlledShutdownRequest(
                broker_id=broker_id, broker_epoch=broker_epoch), 30000)
            return response.error_code

        assert await controlled_shutdown(7, 5) == Errors.UNKNOWN_SERVER_ERROR.code
        assert await controlled_shutdown(7, -1) == Errors.BROKER_NOT_AVAILABLE.code
        other_epoch = context.live_broker_id_and_epochs[other]
        assert await controlled_shutdown(other, other_epoch - 1) == STALE
        assert context.shutting_down_broker_ids == set()


async def test_session_expiry_gives_the_broker_a_new_epoch():
    """After broker 1's ZooKeeper session expires it registers again (RegisterBrokerAndReelect):
    a newer epoch in ZooKeeper, in its controller object and in the active controller's cache;
    a LeaderAndIsr carrying the old epoch is now STALE_BROKER_EPOCH, one with the new epoch is applied."""
    async with two_brokers(seed=8) as (cluster, zk):
        await cluster.create_topic(TP.topic, replica_assignment={0: [BROKER_ID_1, BROKER_ID_2]})
        broker2 = cluster.broker(BROKER_ID_2)
        old_epoch = broker2.controller.broker_epoch
        assert epochs_by_id(zk)[BROKER_ID_2] == old_epoch

        cluster.zookeeper.expire_session(broker2.zk_client.session_id)
        await cluster.wait_until(lambda: broker2.controller.broker_epoch > old_epoch, message="broker 1 registered again")
        new_epoch = broker2.controller.broker_epoch
        assert epochs_by_id(zk)[BROKER_ID_2] == new_epoch == broker2.broker_epoch
        await cluster.wait_until(lambda: cluster.active_controller() is not None and cluster.active_controller()
                                 .controller_context.live_broker_id_and_epochs.get(BROKER_ID_2) == new_epoch,
                                 message="the controller caches the new epoch")

        state = cluster.partition_state(TP.topic, 0)
        controller_epoch = cluster.controller_epoch()

        def leader_and_isr(broker_epoch: int, leader_epoch: int) -> LeaderAndIsrRequest:
            return cluster.leader_and_isr_request([LeaderAndIsrPartitionState(
                topic_name=TP.topic, partition_index=TP.partition, controller_epoch=controller_epoch,
                leader=state["leader"], leader_epoch=leader_epoch, isr=tuple(state["isr"]),
                partition_epoch=state["partition_epoch"] + 1, replicas=(0, 1))], broker_epoch=broker_epoch)

        assert await cluster.send_leader_and_isr(BROKER_ID_2, leader_and_isr(old_epoch, state["leader_epoch"] + 1)) == {
            TP: Errors.STALE_BROKER_EPOCH}
        assert broker2.replica_manager.online_partition(TP).get_leader_epoch() == state["leader_epoch"]
        assert await cluster.send_leader_and_isr(BROKER_ID_2, leader_and_isr(new_epoch, state["leader_epoch"] + 1)) == {
            TP: Errors.NONE}
        assert broker2.replica_manager.online_partition(TP).get_leader_epoch() == state["leader_epoch"] + 1


async def test_stale_stop_replica_still_shuts_down_idle_fetchers():
    """KafkaApis#handleStopReplicaRequest: the STALE_BROKER_EPOCH answer leaves every replica as it
    was, and the fetcher threads left without partitions are shut down all the same."""
    async with two_brokers(seed=9) as (cluster, zk):
        await cluster.create_topic(TP.topic, replica_assignment={0: [BROKER_ID_1, BROKER_ID_2]})
        broker2 = cluster.broker(BROKER_ID_2)
        manager = broker2.replica_manager.replica_fetcher_manager
        assert len(manager.fetcher_thread_map) == 1
        # The fetcher to broker 0 loses its only partition: idle, but still there.
        manager.remove_fetcher_for_partitions([TP])
        assert [f.partition_count for f in manager.fetcher_thread_map.values()] == [0]
        stale = cluster.stop_replica_request({TP: (INITIAL_LEADER_EPOCH + 1, True)},
                                             broker_epoch=broker2.broker_epoch - 1)
        assert await cluster.send_stop_replica(BROKER_ID_2, stale) == {TP: Errors.STALE_BROKER_EPOCH}
        assert broker2.replica_manager.online_partition(TP) is not None
        assert manager.fetcher_thread_map == {}
