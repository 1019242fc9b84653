"""Ports of PlaintextAdminIntegrationTest's IncrementalAlterConfigs and null-config cases (Kafka 3.8.0).

Split from tests/test_admin_integration_kafka.py (same harness: three brokers, both metadata
modes, virtual time) because these cases name topic configs (flush.ms,
min.cleanable.dirty.ratio, leader.replication.throttled.replicas) and the null-config check of
ZkAdminManager#createTopics that kafka_ref's LogConfig gains with the "cfgs" helper's branch
(every LogConfig key with Kafka's types, 7121d73) and its ConfigAdminManager#preprocess null-value
check (29860a9): they pass once that branch is in.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import TopicPartition
from kafka_ref.clients.admin import AlterConfigOp, NewTopic
from kafka_ref.common.errors import InvalidConfigurationException, InvalidRequestException

from test_admin_integration_kafka import MODES, TOPIC, _cluster, _wait_for_topics

pytestmark = pytest.mark.anyio


def _op(name: str, value: str | None, op_type: str = "SET") -> AlterConfigOp:
    return AlterConfigOp(name, value, op_type)


@pytest.mark.parametrize("mode", MODES)
async def test_valid_incremental_alter_configs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testValidIncrementalAlterConfigs: SET, APPEND, DELETE, SUBTRACT
    (also from an empty list and down to nothing), validate-only, and an invalid value under validate-only."""
    topic1, topic2 = "incremental-alter-configs-topic-1", "incremental-alter-configs-topic-2"
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic1, config={"retention.ms": "60000000", "cleanup.policy": "compact"})
        await cluster.create_topic(topic2)
        async with cluster.admin() as admin:
            # 1. SET, APPEND to an override, DELETE; SET and APPEND on keys never set.
            await admin.incremental_alter_configs({
                topic1: [_op("flush.ms", "1000"), _op("cleanup.policy", "delete", "APPEND"), _op("retention.ms", "", "DELETE")],
                topic2: [_op("min.cleanable.dirty.ratio", "0.9"), _op("compression.type", "lz4"),
                         _op("cleanup.policy", "compact", "APPEND")]})
            await cluster.wait_until(lambda: all(
                cluster.broker(b).log_manager.fetch_log_config(topic2).get("compression.type") == "lz4" for b in (0, 1, 2)))
            configs = await admin.describe_topic_configs([topic1, topic2])
            assert [configs[topic1][k] for k in ("flush.ms", "cleanup.policy", "retention.ms")] == [
                "1000", "compact,delete", "604800000"]
            assert [configs[topic2][k] for k in ("min.cleanable.dirty.ratio", "compression.type", "cleanup.policy")] == [
                "0.9", "lz4", "delete,compact"]
            # 2. SUBTRACT, also from an empty list and down to an empty list.
            await admin.incremental_alter_configs({
                topic1: [_op("cleanup.policy", "compact", "SUBTRACT"),
                         _op("leader.replication.throttled.replicas", "0", "SUBTRACT")],
                topic2: [_op("cleanup.policy", "compact,delete", "SUBTRACT")]})
            await cluster.wait_until(lambda: all(
                cluster.broker(b).log_manager.fetch_log_config(topic2).overrides.get("cleanup.policy") == "" for b in (0, 1, 2)))
            configs = await admin.describe_topic_configs([topic1, topic2])
            assert [configs[topic1][k] for k in ("cleanup.policy", "flush.ms", "leader.replication.throttled.replicas")] == [
                "delete", "1000", ""]
            assert configs[topic2]["cleanup.policy"] == ""
            # 3. Validate-only changes nothing.
            await admin.incremental_alter_configs({topic1: [_op("cleanup.policy", "compact", "APPEND")]}, validate_only=True)
            assert (await admin.describe_topic_configs([topic1]))[topic1]["cleanup.policy"] == "delete"
            # 4. An invalid value fails even when only validating.
            with pytest.raises(InvalidConfigurationException) as info:
                await admin.incremental_alter_configs({topic1: [_op("compression.type", "zip")]}, validate_only=True)
            assert ("Invalid value zip for configuration compression.type" if mode == "kraft"
                    else "Invalid config value for resource") in str(info.value)


@pytest.mark.parametrize("mode", MODES)
async def test_append_already_exists_configs_and_subtract_not_exists_configs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testAppendAlreadyExistsConfigsAndSubtractNotExistsConfigs."""
    topic = "incremental-alter-configs-topic"
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic, config={"leader.replication.throttled.replicas": "0:0"})
        async with cluster.admin() as admin:
            await admin.incremental_alter_configs({topic: [_op("leader.replication.throttled.replicas", "0:0", "APPEND")]})
            await admin.incremental_alter_configs({topic: [_op("leader.replication.throttled.replicas", "0:1,0:2", "SUBTRACT")]})
            await anyio.sleep(1)
            configs = await admin.describe_topic_configs([topic])
            assert configs[topic]["leader.replication.throttled.replicas"] == "0:0"


@pytest.mark.parametrize("mode", MODES)
async def test_invalid_incremental_alter_configs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testInvalidIncrementalAlterConfigs: duplicate keys fail only
    their resource; APPEND / SUBTRACT on a non-list key; a value out of range."""
    kraft = mode == "kraft"
    topic1, topic2 = "incremental-alter-configs-topic-1", "incremental-alter-configs-topic-2"
    async with _cluster(mode) as cluster:
        await cluster.create_topic(topic1)
        await cluster.create_topic(topic2)
        async with cluster.admin() as admin:
            # 1. Duplicate keys: INVALID_REQUEST for topic1 alone; topic2 changes.
            with pytest.raises(InvalidRequestException) as info:
                await admin.incremental_alter_configs({
                    topic1: [_op("min.cleanable.dirty.ratio", "0.75"), _op("min.cleanable.dirty.ratio", "0.65"),
                             _op("compression.type", "gzip")],
                    topic2: [_op("min.cleanable.dirty.ratio", "0.9")]})
            assert str(info.value) == "Error due to duplicate config keys"
            await cluster.wait_until(lambda: all(
                cluster.broker(b).log_manager.fetch_log_config(topic2).get("min.cleanable.dirty.ratio") == 0.9
                for b in (0, 1, 2)))
            configs = await admin.describe_topic_configs([topic1, topic2])
            assert (configs[topic1]["min.cleanable.dirty.ratio"], configs[topic1]["compression.type"],
                    configs[topic2]["min.cleanable.dirty.ratio"]) == ("0.5", "producer", "0.9")
            # 2. APPEND and SUBTRACT need a list key (each resource fails on its own).
            with pytest.raises(InvalidConfigurationException) as info:
                await admin.incremental_alter_configs({topic1: [_op("compression.type", "gzip", "APPEND")]})
            assert ("Can't APPEND to key compression.type because its type is not LIST." if kraft
                    else "Config value append is not allowed for config") in str(info.value)
            with pytest.raises(InvalidConfigurationException) as info:
                await admin.incremental_alter_configs({topic2: [_op("compression.type", "snappy", "SUBTRACT")]})
            assert ("Can't SUBTRACT to key compression.type because its type is not LIST." if kraft
                    else "Config value subtract is not allowed for config") in str(info.value)
            # 3. A value out of range.
            with pytest.raises(InvalidConfigurationException) as info:
                await admin.incremental_alter_configs({topic1: [_op("min.cleanable.dirty.ratio", "1.1")]})
            assert ("Invalid value 1.1 for configuration min.cleanable.dirty.ratio: Value must be no more than 1" if kraft
                    else "Invalid config value for resource") in str(info.value)


@pytest.mark.parametrize("mode", MODES)
async def test_null_configs(mode):
    """Mirrors PlaintextAdminIntegrationTest#testNullConfigs: a null value fails CreateTopics
    (INVALID_CONFIG) and IncrementalAlterConfigs (INVALID_REQUEST), and nothing changes."""
    async with _cluster(mode) as cluster:

        def check_log_config(compression_type: str) -> None:
            for b in cluster.live_broker_ids():
                config = cluster.broker(b).log_manager.fetch_log_config(TOPIC)
                assert config.overrides.get("compression.type") == compression_type
                assert "retention.bytes" not in config.overrides
                assert config.get("retention.bytes") == -1

        async with cluster.admin() as admin:
            with pytest.raises(InvalidConfigurationException) as info:
                await admin.create_topics([NewTopic(TOPIC, 2, 3, configs={"retention.bytes": None,
                                                                           "compression.type": "producer"})])
            assert str(info.value) == "Null value not supported for topic configs: retention.bytes"
            await admin.create_topics([NewTopic(TOPIC, 2, 3, configs={"compression.type": "producer"})])
            await _wait_for_topics(cluster, admin, [TOPIC], [])
            await cluster.wait_until(lambda: all(cluster.broker(b).log_manager.get_log(TopicPartition(TOPIC, 0)) is not None
                                                 or cluster.replica_state(b, TOPIC, 0) is not None for b in (0, 1, 2)))
            check_log_config("producer")
            with pytest.raises(InvalidRequestException) as info:
                await admin.incremental_alter_configs({TOPIC: [_op("retention.bytes", None), _op("compression.type", "lz4")]})
            assert str(info.value) == "Null value not supported for : retention.bytes"
            check_log_config("producer")


async def _append_config(mode: str, create_configs: dict[str, str], append: str, expected: str) -> None:
    """PlaintextAdminIntegrationTest#testAppendConfig: APPEND to leader.replication.throttled.replicas, then describe."""
    async with _cluster(mode) as cluster:
        await cluster.create_topic(TOPIC, config=create_configs)
        async with cluster.admin() as admin:
            await admin.incremental_alter_configs({TOPIC: [AlterConfigOp("leader.replication.throttled.replicas", append,
                                                                         "APPEND")]})
            with anyio.fail_after(15):
                while (await admin.describe_topic_configs([TOPIC]))[TOPIC]["leader.replication.throttled.replicas"] != expected:
                    await anyio.sleep(0.1)
            assert (await admin.describe_topic_configs([TOPIC]))[TOPIC]["leader.replication.throttled.replicas"] == expected


@pytest.mark.parametrize("mode", MODES)
async def test_append_config_to_empty_default_value(mode):
    """Mirrors PlaintextAdminIntegrationTest#testAppendConfigToEmptyDefaultValue."""
    await _append_config(mode, {}, "0:0", "0:0")


@pytest.mark.parametrize("mode", MODES)
async def test_append_config_to_existent_value(mode):
    """Mirrors PlaintextAdminIntegrationTest#testAppendConfigToExistentValue."""
    await _append_config(mode, {"leader.replication.throttled.replicas": "1:1"}, "0:0", "1:1,0:0")
