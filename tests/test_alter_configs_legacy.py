"""AlterConfigs (legacy, API 33): a topic's named configs replace its whole override set.

After Kafka's PlaintextAdminIntegrationTest#checkValidAlterConfigs / #checkInvalidAlterConfigs (two
topics altered at once, validate-only changes nothing, an invalid value fails only its resource,
a broker resource is INVALID_REQUEST) and ConfigurationControlManagerTest#testLegacyAlterConfigs
(a key left out is deleted), in both metadata modes; ConfigAdminManager#preprocess's legacy checks
(repeated resource, duplicate key, null value) and the ALTER_CONFIGS authorization.
(tests/test_alter_configs.py holds the IncrementalAlterConfigs tests.)
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors
from kafka_ref.clients import Admin, AlterConfigOp
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import InvalidConfigurationException, UnknownTopicOrPartitionException
from kafka_ref.common.requests.alter_configs import AlterableConfig, AlterConfigsRequest, AlterConfigsResource
from kafka_ref.controller.quorum.configuration_control_manager import ConfigurationControlManager
from kafka_ref.image.records import ConfigRecord, ConfigResource, ConfigResourceType

pytestmark = pytest.mark.anyio
MODES = ["zk", "kraft"]
TOPIC = int(ConfigResourceType.TOPIC)


def _overrides(cluster: Cluster, topic: str) -> dict[str, str]:
    """The topic's overrides as every live broker's LogManager holds them (one dict when they agree)."""
    configs = [cluster.broker(b).log_manager.topic_configs.get(topic) for b in cluster.live_broker_ids()]
    seen = [{k: str(v) for k, v in c.overrides.items()} if c is not None else {} for c in configs]
    return seen[0] if all(s == seen[0] for s in seen) else {"<disagree>": repr(seen)}


async def test_legacy_alter_config_resource_records():
    """ConfigurationControlManagerTest#testLegacyAlterConfigs: two keys set; then naming one deletes the other."""
    manager = ConfigurationControlManager(KafkaConfig({}))
    mytopic = ConfigResource(ConfigResourceType.TOPIC, "mytopic")
    records, error = manager.legacy_alter_config_resource(mytopic, {"retention.ms": "456", "segment.bytes": "90100"})
    assert error is None
    assert records == [ConfigRecord(resource_type=TOPIC, resource_name="mytopic", name="retention.ms", value="456"),
                       ConfigRecord(resource_type=TOPIC, resource_name="mytopic", name="segment.bytes", value="90100")]
    for record in records:
        manager.replay(record)
    records, error = manager.legacy_alter_config_resource(mytopic, {"segment.bytes": "90100"})
    assert (records, error) == ([ConfigRecord(resource_type=TOPIC, resource_name="mytopic", name="retention.ms",
                                              value=None)], None)
    records, error = manager.legacy_alter_config_resource(mytopic, {"min.insync.replicas": "0"})
    assert records == [] and isinstance(error, InvalidConfigurationException)


@pytest.mark.parametrize("mode", MODES)
async def test_alter_configs_replaces_the_overrides(mode: str):
    """checkValidAlterConfigs: two topics at once, the named keys become the overrides; validate-only changes nothing."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=21) as cluster:
        await cluster.create_topic("t1", replication_factor=3)
        await cluster.create_topic("t2", replication_factor=3)
        async with Admin(cluster.network, [0, 1, 2]) as admin:
            await admin.incremental_alter_configs({"t1": [AlterConfigOp("retention.ms", "5000"),
                                                          AlterConfigOp("cleanup.policy", "compact")]})
            await cluster.wait_until(lambda: _overrides(cluster, "t1") == {"retention.ms": "5000",
                                                                           "cleanup.policy": "compact"})
            await admin.alter_configs({"t1": {"max.message.bytes": "2000"},
                                       "t2": {"compression.type": "lz4", "retention.bytes": "900"}})
            # t1's retention.ms and cleanup.policy went back to their defaults.
            await cluster.wait_until(lambda: (_overrides(cluster, "t1"), _overrides(cluster, "t2")) == (
                {"max.message.bytes": "2000"}, {"compression.type": "lz4", "retention.bytes": "900"}))
            described = await admin.describe_topic_configs(["t1", "t2"])
            assert (described["t1"]["retention.ms"], described["t1"]["cleanup.policy"],
                    described["t1"]["max.message.bytes"]) == ("604800000", "delete", "2000")
            assert (described["t2"]["compression.type"], described["t2"]["retention.bytes"]) == ("lz4", "900")
            config = cluster.broker(0).log_manager.fetch_log_config("t1")
            assert (config.get("retention.ms"), config.get("max.message.bytes")) == (604800000, 2000)
            # validate_only: accepted, nothing changes.
            await admin.alter_configs({"t1": {"max.message.bytes": "10"}, "t2": {}}, validate_only=True)
            await anyio.sleep(1)   # long enough for any change to reach every broker
            assert (_overrides(cluster, "t1"), _overrides(cluster, "t2")) == (
                {"max.message.bytes": "2000"}, {"compression.type": "lz4", "retention.bytes": "900"})
            # An empty set removes every override.
            await admin.alter_configs({"t2": {}})
            await cluster.wait_until(lambda: _overrides(cluster, "t2") == {})


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_alter_configs_fail_per_resource(mode: str):
    """checkInvalidAlterConfigs and the legacy preprocessing: each bad resource fails alone, the good one applies."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=22) as cluster:
        await cluster.create_topic("t1")
        await cluster.create_topic("t2")
        await cluster.create_topic("t3")

        def resource(name: str, *pairs: tuple[str, str | None], rtype: int = TOPIC) -> AlterConfigsResource:
            return AlterConfigsResource(resource_type=rtype, resource_name=name,
                                        configs=tuple(AlterableConfig(name=k, value=v) for k, v in pairs))

        request = AlterConfigsRequest(resources=(
            resource("t1", ("min.insync.replicas", "0"), ("compression.type", "lz4")),     # invalid value
            resource("t2", ("compression.type", "snappy")),                                 # valid
            resource("0", ("compression.type", "gzip"), rtype=int(ConfigResourceType.BROKER)),
            resource("t3", ("retention.ms", "1"), ("retention.ms", "2")),                   # duplicate key
            resource("missing", ("retention.ms", "1")),
            resource("t1", ("retention.ms", "3")),                                         # t1 again
            resource("", ("retention.ms", "1")),
        ))
        response = await cluster.send(0, request)
        assert [(r.resource_name, Errors.for_code(r.error_code)) for r in response.responses] == [
            ("t1", Errors.INVALID_REQUEST), ("t2", Errors.NONE), ("0", Errors.INVALID_REQUEST),
            ("t3", Errors.INVALID_REQUEST), ("missing", Errors.UNKNOWN_TOPIC_OR_PARTITION),
            ("t1", Errors.INVALID_REQUEST), ("", Errors.INVALID_REQUEST)]
        messages = [r.error_message for r in response.responses]
        assert messages[0] == messages[5] == "Each resource must appear at most once."
        assert messages[3] == "Error due to duplicate config keys"
        assert messages[6] == "Default topic resources are not allowed."
        await cluster.wait_until(lambda: _overrides(cluster, "t2") == {"compression.type": "snappy"})
        # A null value; an invalid value on its own.
        response = await cluster.send(0, AlterConfigsRequest(resources=(
            resource("t3", ("retention.ms", None), ("segment.bytes", None)),
            resource("t1", ("min.insync.replicas", "0"), ("compression.type", "lz4")))))
        assert [(Errors.for_code(r.error_code), r.error_message) for r in response.responses][0] == (
            Errors.INVALID_REQUEST, "Null value not supported for : retention.ms, segment.bytes")
        assert Errors.for_code(response.responses[1].error_code) is Errors.INVALID_CONFIG
        assert (_overrides(cluster, "t1"), _overrides(cluster, "t3")) == ({}, {})
        async with Admin(cluster.network, [0]) as admin:
            with pytest.raises(UnknownTopicOrPartitionException):
                await admin.alter_configs({"t2": {"retention.ms": "7"}, "missing": {"retention.ms": "7"}})
            with pytest.raises(InvalidConfigurationException):
                await admin.alter_configs({"t2": {"no.such.key": "1"}})
        # t2 in the first admin call was valid and applied.
        await cluster.wait_until(lambda: _overrides(cluster, "t2") == {"retention.ms": "7"})


@pytest.mark.parametrize("mode", MODES)
async def test_alter_configs_needs_alter_configs_on_the_topic(mode: str):
    """KafkaApis#processLegacyAlterConfigsRequest / ControllerApis#handleLegacyAlterConfigs: TOPIC_AUTHORIZATION_FAILED."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=23) as cluster:
        await cluster.create_topic("t1")
        await cluster.create_topic("t2")
        # ZooKeeper: the broker decides; KRaft: the active controller, as the forwarded client principal.
        authorizer = (cluster.broker(0).apis.authorizer if mode == "zk"
                      else cluster.active_controller().authorizer)
        authorizer.deny_topic("User:eve", "ALTER_CONFIGS", "t1")
        request = AlterConfigsRequest.for_topics({"t1": {"retention.ms": "1"}, "t2": {"retention.ms": "2"}})
        response = await cluster.network.send("eve", 0, request, 10000, principal="User:eve")
        assert [(r.resource_name, Errors.for_code(r.error_code)) for r in response.responses] == [
            ("t1", Errors.TOPIC_AUTHORIZATION_FAILED), ("t2", Errors.NONE)]
        await cluster.wait_until(lambda: _overrides(cluster, "t2") == {"retention.ms": "2"})
        assert _overrides(cluster, "t1") == {}
