"""Dynamic topic configs: IncrementalAlterConfigs in both metadata modes, and the brokers applying them.

After Kafka's PlaintextAdminIntegrationTest#testIncrementalAlterConfigsForTopic (SET, DELETE,
APPEND, SUBTRACT on a topic, validate-only, errors per resource), DynamicConfigChangeTest
(ZooKeeper: every broker picks the change up from /config/changes) and
UncleanLeaderElectionTest#testTopicUncleanLeaderElectionEnableWithAlterTopicConfigs (turning
unclean.leader.election.enable on elects an out-of-sync replica for an offline partition).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors, TopicPartition
from kafka_ref.clients import Admin, AlterConfigOp
from kafka_ref.common.errors import (
    InvalidConfigurationException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
    OpType,
)
from kafka_ref.image.records import ConfigResourceType

TP = TopicPartition("orders", 0)
MODES = ["zk", "kraft"]


def _min_isr_everywhere(cluster: Cluster) -> set[int]:
    return {cluster.broker(b).log_manager.fetch_log_config("orders").min_in_sync_replicas
            for b in cluster.live_broker_ids()}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_set_and_delete_min_insync_replicas_reach_every_broker(mode: str) -> None:
    """SET min.insync.replicas=3: acks=all below it gets NOT_ENOUGH_REPLICAS; DELETE: back to the default 1."""
    async with Cluster(brokers=3, metadata_mode=mode, config={"replica.lag.time.max.ms": 1000}, seed=11) as cluster:
        await cluster.create_topic("orders", replica_assignment={0: [0, 1, 2]})
        async with Admin(cluster.network, [0, 1, 2]) as admin:
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("min.insync.replicas", "3")]})
            await cluster.wait_until(lambda: _min_isr_everywhere(cluster) == {3}, message="min ISR 3 everywhere")
            assert (await admin.describe_topic_configs(["orders"]))["orders"]["min.insync.replicas"] == "3"
            leader = cluster.leader_for("orders", 0)
            follower = next(b for b in (0, 1, 2) if b != leader)
            cluster.kill_broker(follower)
            partition = cluster.broker(leader).replica_manager.get_partition(TP)
            await cluster.wait_until(lambda: len(partition.partition_state.isr) == 2, message="ISR shrink")
            assert (await cluster.produce(leader, "orders", 0, [b"a"], acks=-1)).error == Errors.NOT_ENOUGH_REPLICAS
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("min.insync.replicas", op_type="DELETE")]})
            await cluster.wait_until(lambda: _min_isr_everywhere(cluster) == {1}, message="min ISR back to 1")
            assert (await cluster.produce(leader, "orders", 0, [b"b"], acks=-1)).error == Errors.NONE
            assert (await admin.describe_topic_configs(["orders"]))["orders"]["min.insync.replicas"] == "1"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_append_subtract_validate_only_and_errors(mode: str) -> None:
    """APPEND/SUBTRACT on the list key cleanup.policy; validate-only changes nothing; errors per resource."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=12) as cluster:
        await cluster.create_topic("orders")

        def policy() -> str:
            return ",".join(cluster.broker(0).log_manager.fetch_log_config("orders").get("cleanup.policy"))

        async with Admin(cluster.network, [0]) as admin:
            # APPEND starts from the default "delete"; SUBTRACT removes an item.
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("cleanup.policy", "compact", "APPEND")]})
            await cluster.wait_until(lambda: policy() == "delete,compact")
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("cleanup.policy", "delete", "SUBTRACT")]})
            await cluster.wait_until(lambda: policy() == "compact")
            # validate_only: accepted, not applied.
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("retention.ms", "1000")]}, validate_only=True)
            await anyio.sleep(1)
            assert cluster.broker(0).log_manager.fetch_log_config("orders").get("retention.ms") == 604800000
            # Errors: a bad value, an unknown key, an unknown topic.
            with pytest.raises(InvalidConfigurationException):
                await admin.incremental_alter_configs({"orders": [AlterConfigOp("min.insync.replicas", "0")]})
            with pytest.raises(InvalidConfigurationException):
                await admin.incremental_alter_configs({"orders": [AlterConfigOp("no.such.key", "1")]})
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.incremental_alter_configs({"missing": [AlterConfigOp("retention.ms", "1000")]})
            # APPEND on a key that is not a list: INVALID_CONFIG in both modes, as in Kafka 3.8.
            with pytest.raises(InvalidConfigurationException):
                await admin.incremental_alter_configs({"orders": [AlterConfigOp("retention.ms", "5", "APPEND")]})
        assert policy() == "compact"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_request_checks_answer_per_resource(mode: str) -> None:
    """ConfigAdminManager#preprocess: a duplicate key, a repeated resource, a broker resource; the rest applies."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=13) as cluster:
        await cluster.create_topic("orders")
        await cluster.create_topic("audit")
        topic = ConfigResourceType.TOPIC

        def resource(name: str, *configs: AlterableConfig, rtype: int = topic) -> AlterConfigsResource:
            return AlterConfigsResource(resource_type=rtype, resource_name=name, configs=configs)

        set_ms = AlterableConfig(name="retention.ms", config_operation=OpType.SET, value="1000")
        request = IncrementalAlterConfigsRequest(resources=(
            resource("orders", set_ms, set_ms),
            resource("0", set_ms, rtype=ConfigResourceType.BROKER),
            resource("audit", set_ms),
        ))
        response = await cluster.send(0, request)
        codes = [(r.resource_name, r.error_code) for r in response.responses]
        assert codes == [("orders", Errors.INVALID_REQUEST.code), ("0", Errors.INVALID_REQUEST.code), ("audit", 0)]
        assert response.responses[0].error_message == "Error due to duplicate config keys"
        await cluster.wait_until(lambda: cluster.broker(0).log_manager.fetch_log_config("audit").get("retention.ms") == 1000)
        assert cluster.broker(0).log_manager.fetch_log_config("orders").get("retention.ms") == 604800000


@pytest.mark.anyio
async def test_dynamic_config_survives_a_broker_restart() -> None:
    """ZooKeeper: a restarted broker reads every topic's overrides at start-up (ZkConfigManager#startup)."""
    async with Cluster(brokers=2, metadata_mode="zk", seed=14) as cluster:
        await cluster.create_topic("orders", replica_assignment={0: [0, 1]})
        async with Admin(cluster.network, [0, 1]) as admin:
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("max.message.bytes", "5000")]})
        await cluster.wait_until(lambda: cluster.broker(1).log_manager.get_log(TP).max_message_bytes == 5000)
        await cluster.restart_broker(1)
        await cluster.wait_until(lambda: cluster.broker(1).log_manager.get_log(TP) is not None)
        assert cluster.broker(1).log_manager.get_log(TP).max_message_bytes == 5000
        assert cluster.broker(1).log_manager.fetch_log_config("orders").max_message_size == 5000


@pytest.mark.anyio
async def test_enabling_unclean_election_elects_an_out_of_sync_replica() -> None:
    """UncleanLeaderElectionTest#testTopicUncleanLeaderElectionEnableWithAlterTopicConfigs (ZooKeeper mode).

    Broker 1 falls out of the ISR, then the leader 0 dies: the partition is offline (no clean
    candidate). Broker 1 comes back, still offline. Turning unclean.leader.election.enable on
    makes the controller elect broker 1.
    """
    async with Cluster(brokers=3, metadata_mode="zk", config={"replica.lag.time.max.ms": 1000}, seed=15) as cluster:
        # The two replicas are the brokers that are not the controller, so the controller survives.
        await cluster.wait_until(lambda: cluster.controller_id() is not None)
        leader, follower = sorted({0, 1, 2} - {cluster.controller_id()})
        await cluster.create_topic("orders", replica_assignment={0: [leader, follower]},
                                   config={"unclean.leader.election.enable": "false"})
        assert cluster.leader_for("orders", 0) == leader
        cluster.kill_broker(follower)
        partition = cluster.broker(leader).replica_manager.get_partition(TP)
        await cluster.wait_until(lambda: partition.partition_state.isr == frozenset({leader}), message="ISR shrink")
        assert (await cluster.produce(leader, "orders", 0, [b"only-on-leader"], acks=-1)).error == Errors.NONE
        cluster.kill_broker(leader)
        await cluster.restart_broker(follower)
        # The controller notices the crash when the leader's ZooKeeper session expires: offline, no leader.
        await cluster.wait_until(lambda: cluster.leader_for("orders", 0) == -1, timeout_ms=60000, message="offline")
        await anyio.sleep(5)
        assert cluster.leader_for("orders", 0) == -1
        async with Admin(cluster.network, [follower, cluster.controller_id()]) as admin:
            await admin.incremental_alter_configs({"orders": [AlterConfigOp("unclean.leader.election.enable", "true")]})
        await cluster.wait_until(lambda: cluster.leader_for("orders", 0) == follower, message="unclean leader")
