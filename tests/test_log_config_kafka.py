"""Topic configuration: LogConfig's keys, types, ranges and validation, and how the admin APIs answer bad configs.

Ports Kafka 3.8's core/src/test/scala/unit/kafka/log/LogConfigTest.scala against
kafka_ref.common.config.LogConfig / KafkaConfig#extract_log_config_map, then checks CreateTopics,
IncrementalAlterConfigs and AlterConfigs (legacy) in both metadata modes: a bad topic config is
INVALID_CONFIG with Kafka's text (ZkAdminManager prefixes the alter paths with "Invalid config value
for resource ..."; the KRaft controller answers ConfigException's text alone), an unknown name is
LogConfig#validateNames' "Unknown topic config name", and nothing is written.

Not ported:
- testToHtmlTable, testToHtml, testToEnrichedRst, testToRst: documentation rendering of the ConfigDef.
- testGetConfigValue: ConfigDef's per-key header values ("Server Default Property"), not modelled.
- testOverriddenConfigsAsLoggableString: password redaction of logged overrides, not modelled.
- testValidateWithMetadataVersionJbodSupport: JBOD (several log directories) is not modelled.
- testKafkaConfigToProps' log.roll.hours / log.roll.jitter.hours and log.message.format.version:
  kafka_ref defines no broker keys for segment rolling or the message format (their topic keys keep
  LogConfig's defaults); the retention and local-retention parts are ported.
- Tiered storage itself is not modelled (RemoteLogManagerConfig#isRemoteStorageSystemEnabled is
  always false in a kafka_ref broker); the validation functions that take the switch as an argument
  are ported with it passed explicitly.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref import Cluster, Errors
from kafka_ref.common.config import (
    _BROKER_NAME_FOR_TOPIC_KEY,
    KAFKA_CONFIG_KEYS,
    LOG_CONFIG_KEYS,
    KafkaConfig,
    LogConfig,
    throttled_replica_list_ensure_valid_string,
)
from kafka_ref.common.errors import ConfigException, InvalidConfigurationException
from kafka_ref.common.requests.alter_configs import (
    AlterableConfig as LegacyAlterableConfig,
    AlterConfigsRequest,
    AlterConfigsResource as LegacyAlterConfigsResource,
)
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateableTopicConfig, CreateTopicsRequest
from kafka_ref.common.requests.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
    OpType,
)
from kafka_ref.image.records import ConfigResourceType

MODES = ["zk", "kraft"]
LONG_MAX = 2**63 - 1
DAY_MS = 24 * 60 * 60 * 1000
# Topic keys that have no broker counterpart in kafka_ref (their LogConfig default stands).
NO_BROKER_KEY = {"segment.ms", "segment.jitter.ms", "flush.ms", "message.format.version",
                 "leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
                 "remote.storage.enable"}


def _invalid(name: str, *values: str) -> None:
    for value in values:
        with pytest.raises(ConfigException):
            LogConfig({name: value})
        with pytest.raises(ConfigException):
            LogConfig.validate({name: value})


# ------------------------------------------------------------------ LogConfigTest


def test_ensure_no_static_initialization_order_dependency() -> None:
    """Mirrors LogConfigTest#ensureNoStaticInitializationOrderDependency: every topic key but the ones
    without a server default names a broker key, and that broker key is defined."""
    broker_keys = {k.name for k in KAFKA_CONFIG_KEYS}
    for key in LOG_CONFIG_KEYS:
        if key.name in NO_BROKER_KEY:
            assert key.name not in _BROKER_NAME_FOR_TOPIC_KEY
            continue
        assert _BROKER_NAME_FOR_TOPIC_KEY[key.name] in broker_keys, key.name
    assert len(LOG_CONFIG_KEYS) == 34


def test_kafka_config_to_props() -> None:
    """Mirrors LogConfigTest#testKafkaConfigToProps (the retention and local-retention parts):
    log.retention.hours and the broker's local retention become the topic defaults."""
    config = KafkaConfig({"broker.id": 0, "log.retention.hours": "960", "log.local.retention.ms": "2592000000",
                          "log.local.retention.bytes": "4294967296"})
    props = config.extract_log_config_map()
    assert props["retention.ms"] == 40 * DAY_MS
    assert props["local.retention.ms"] == 30 * DAY_MS
    assert props["local.retention.bytes"] == 4 * 1024 * 1024 * 1024
    # The message format version a topic gets when kafka_ref has no broker key for it: LogConfig's.
    assert props["message.format.version"] == "3.0-IV1"


def test_from_props_invalid() -> None:
    """Mirrors LogConfigTest#testFromPropsInvalid: every LogConfig key refuses its invalid values."""
    special = {
        "unclean.leader.election.enable": ("not a boolean",),
        "retention.bytes": ("not_a_number",),
        "retention.ms": ("not_a_number",),
        "cleanup.policy": ("true", "foobar"),
        "min.cleanable.dirty.ratio": ("not_a_number", "-0.1", "1.2"),
        "min.insync.replicas": ("not_a_number", "0", "-1"),
        "message.format.version": ("",),
        "remote.storage.enable": ("not_a_boolean",),
        "local.retention.ms": ("not_a_number", "-3"),
        "local.retention.bytes": ("not_a_number", "-3"),
        "compression.gzip.level": ("not_a_number", "-2"),
        "compression.lz4.level": ("not_a_number", "-1"),
        "compression.zstd.level": ("not_a_number", "-0.1"),
    }
    for key in LOG_CONFIG_KEYS:
        _invalid(key.name, *special.get(key.name, ("not_a_number", "-1")))


@pytest.mark.parametrize(("name", "value", "message"), [
    ("retention.ms", "not_a_number", "Not a number of type LONG"),
    ("segment.bytes", "2147483648", "Not a number of type INT"),
    ("segment.bytes", "13", "Value must be at least 14"),
    ("min.insync.replicas", "0", "Value must be at least 1"),
    ("min.cleanable.dirty.ratio", "1.2", "Value must be no more than 1"),
    ("cleanup.policy", "compact,foobar", "String must be one of: compact, delete"),
    ("compression.type", "none", "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("compression.gzip.level", "-2", "Value must be between 1 and 9 or equal to -1"),
    ("compression.lz4.level", "18", "Value must be no more than 17"),
    ("message.timestamp.type", "NoTime", "String must be one of: CreateTime, LogAppendTime"),
    ("message.timestamp.before.max.ms", "-1", "Value must be at least 0"),
    ("message.timestamp.after.max.ms", "-1", "Value must be at least 0"),
    ("unclean.leader.election.enable", "yes", "Expected value to be either true or false"),
    ("message.format.version", "", "Version  is not a valid version"),
])
def test_invalid_values_are_named_with_kafkas_text(name: str, value: str, message: str) -> None:
    """LogConfigTest#testFromPropsInvalid's cases with ConfigDef's texts (ConfigDef#parseType,
    Range, ValidString, ValidList, GzipCompression.LevelValidator, MetadataVersionValidator)."""
    shown = value.split(",")[-1] if name == "cleanup.policy" else value
    with pytest.raises(ConfigException) as info:
        LogConfig.validate({name: value})
    assert str(info.value) == f"Invalid value {shown} for configuration {name}: {message}"


def test_values_parse_as_configdef_types() -> None:
    """ConfigDef#parseType as LogConfigTest relies on it: trimmed strings, LIST split at commas with
    blanks, an empty list, booleans in any case, longs beyond 32 bits, doubles."""
    config = LogConfig({"cleanup.policy": " compact , delete ", "retention.bytes": " 5000000000 ",
                        "unclean.leader.election.enable": "TRUE", "min.cleanable.dirty.ratio": "0.25",
                        "compression.type": " zstd ", "leader.replication.throttled.replicas": "0:1, 1:2"})
    assert config.get("cleanup.policy") == ["compact", "delete"]
    assert config.get("retention.bytes") == 5_000_000_000
    assert config.get("unclean.leader.election.enable") is True
    assert config.get("min.cleanable.dirty.ratio") == 0.25
    assert config.get("compression.type") == "zstd"
    assert config.get("leader.replication.throttled.replicas") == ["0:1", "1:2"]
    # ValidList lets an empty list through (Kafka 3.8), and a repeated policy.
    assert LogConfig({"cleanup.policy": ""}).get("cleanup.policy") == []
    assert LogConfig({"cleanup.policy": "delete,delete"}).get("cleanup.policy") == ["delete", "delete"]
    defaults = LogConfig()
    assert (defaults.get("segment.bytes"), defaults.get("retention.ms"), defaults.get("max.message.bytes"),
            defaults.get("cleanup.policy"), defaults.get("compression.type"), defaults.get("min.insync.replicas"),
            defaults.get("message.timestamp.before.max.ms"), defaults.get("local.retention.ms")) == (
        1073741824, 604800000, 1048588, ["delete"], "producer", 1, LONG_MAX, -2)


def test_unknown_names() -> None:
    """LogConfig#validateNames: an unknown name is InvalidConfigurationException (an ApiException, not a
    ConfigException); constructing a LogConfig ignores it, as Kafka's AbstractConfig does."""
    with pytest.raises(InvalidConfigurationException) as info:
        LogConfig.validate({"retention.ms": "1000", "no.such.config": "1"})
    assert str(info.value) == "Unknown topic config name: no.such.config"
    # A broker key is not a topic key.
    with pytest.raises(InvalidConfigurationException, match="Unknown topic config name: log.retention.ms"):
        LogConfig.validate({"log.retention.ms": "1000"})
    assert LogConfig({"no.such.config": "1", "retention.ms": "5"}).get("retention.ms") == 5


def test_invalid_compaction_lag_config() -> None:
    """Mirrors LogConfigTest#testInvalidCompactionLagConfig."""
    with pytest.raises(InvalidConfigurationException) as info:
        LogConfig.validate({"max.compaction.lag.ms": "100", "min.compaction.lag.ms": "200"})
    assert str(info.value) == "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"
    LogConfig.validate({"max.compaction.lag.ms": "200", "min.compaction.lag.ms": "200"})


def _throttle_valid(value: str) -> bool:
    try:
        throttled_replica_list_ensure_valid_string("", value)
        return True
    except ConfigException:
        return False


def test_should_validate_throttled_replicas_config() -> None:
    """Mirrors LogConfigTest#shouldValidateThrottledReplicasConfig."""
    for value in ("*", "* ", "", " ", "100:10", "100:10,12:10", "100:10,12:10,15:1", "100:10,12:10,15:1  ", "100:0,"):
        assert _throttle_valid(value), value
    for value in ("100", "100:", "100:0,10", "100:0,10:", "100:0,10:   ", "100 :0,10:   ", "100: 0,10:   ",
                  "100:0,10 :   ", "*,100:10", "* ,100:10"):
        assert not _throttle_valid(value), value


def test_local_log_retention_derived_props() -> None:
    """Mirrors LogConfigTest#testLocalLogRetentionDerivedProps."""
    config = LogConfig({"retention.bytes": "1024", "retention.ms": "1000"})
    assert (config.local_retention_ms, config.local_retention_bytes) == (1000, 1024)


def test_local_log_retention_derived_default_props() -> None:
    """Mirrors LogConfigTest#testLocalLogRetentionDerivedDefaultProps."""
    config = LogConfig()
    assert (config.local_retention_ms, config.local_retention_bytes) == (604800000, -1)


def test_local_log_retention_props() -> None:
    """Mirrors LogConfigTest#testLocalLogRetentionProps."""
    config = LogConfig({"retention.bytes": "2000", "retention.ms": "1000", "local.retention.ms": "500",
                        "local.retention.bytes": "1000"})
    assert (config.local_retention_ms, config.local_retention_bytes) == (500, 1000)


@pytest.mark.parametrize(("local_ms", "local_bytes", "retention_bytes", "retention_ms", "key"), [
    (-3, 10, 2, 500, "local.retention.ms"),
    (500, -3, 2, 1000, "local.retention.bytes"),
    (2000, 2, 100, 1000, "local.retention.ms"),
    (500, 200, 100, 1000, "local.retention.bytes"),
    (-1, 200, 100, 1000, "local.retention.bytes"),
    (2000, -1, 100, 1000, "local.retention.bytes"),
])
def test_invalid_local_log_retention_props(local_ms: int, local_bytes: int, retention_bytes: int, retention_ms: int,
                                           key: str) -> None:
    """Mirrors LogConfigTest#testInvalidLocalLogRetentionProps (tiered storage on, passed explicitly)."""
    broker = KafkaConfig({"broker.id": 0})
    props = {"remote.storage.enable": "true", "retention.bytes": str(retention_bytes), "retention.ms": str(retention_ms),
             "local.retention.ms": str(local_ms), "local.retention.bytes": str(local_bytes)}
    with pytest.raises(ConfigException) as info:
        LogConfig.validate(props, broker.extract_log_config_map(), True)
    assert key in str(info.value)


def test_enable_remote_log_storage_on_compacted_topic() -> None:
    """Mirrors LogConfigTest#testEnableRemoteLogStorageOnCompactedTopic."""
    defaults = KafkaConfig({"broker.id": 0}).extract_log_config_map()
    props = {"cleanup.policy": "delete", "remote.storage.enable": "true"}
    LogConfig.validate(props, defaults, True)
    for policy in ("compact", "delete,compact", "compact,delete"):
        with pytest.raises(ConfigException, match="^Remote log storage is unsupported for the compacted topics$"):
            LogConfig.validate({**props, "cleanup.policy": policy}, defaults, True)


@pytest.mark.parametrize("system_enabled", [True, False])
def test_enable_remote_log_storage(system_enabled: bool) -> None:
    """Mirrors LogConfigTest#testEnableRemoteLogStorage."""
    defaults = KafkaConfig({"broker.id": 0}).extract_log_config_map()
    if system_enabled:
        LogConfig.validate({"remote.storage.enable": "true"}, defaults, True)
    else:
        with pytest.raises(ConfigException, match="Tiered Storage functionality is disabled in the broker"):
            LogConfig.validate({"remote.storage.enable": "true"}, defaults, False)


@pytest.mark.parametrize("system_enabled", [True, False])
def test_topic_creation_with_invalid_retention_time(system_enabled: bool) -> None:
    """Mirrors LogConfigTest#testTopicCreationWithInvalidRetentionTime: the broker's local retention
    (900 ms) exceeds the topic's retention.ms (500)."""
    defaults = KafkaConfig({"broker.id": 0, "log.retention.ms": "1000",
                            "log.local.retention.ms": "900"}).extract_log_config_map()
    props = {"remote.storage.enable": str(system_enabled).lower(), "retention.ms": "500"}
    if system_enabled:
        with pytest.raises(ConfigException) as info:
            LogConfig.validate(props, defaults, True)
        assert str(info.value) == ("Invalid value 900 for configuration local.retention.ms: Value must not be more "
                                   "than retention.ms property value: 500")
    else:
        LogConfig.validate(props, defaults, False)


@pytest.mark.parametrize("system_enabled", [True, False])
def test_topic_creation_with_invalid_retention_size(system_enabled: bool) -> None:
    """Mirrors LogConfigTest#testTopicCreationWithInvalidRetentionSize."""
    defaults = KafkaConfig({"broker.id": 0, "log.retention.bytes": "1024",
                            "log.local.retention.bytes": "512"}).extract_log_config_map()
    props = {"remote.storage.enable": str(system_enabled).lower(), "retention.bytes": "128"}
    if system_enabled:
        with pytest.raises(ConfigException) as info:
            LogConfig.validate(props, defaults, True)
        assert str(info.value) == ("Invalid value 512 for configuration local.retention.bytes: Value must not be more "
                                   "than retention.bytes property value: 128")
    else:
        LogConfig.validate(props, defaults, False)


@pytest.mark.parametrize("system_enabled", [True, False])
def test_validate_broker_log_configs(system_enabled: bool) -> None:
    """Mirrors LogConfigTest#testValidateBrokerLogConfigs."""
    config = KafkaConfig({"broker.id": 0, "log.retention.bytes": "1024", "log.local.retention.bytes": "2048"})
    values = LogConfig(config.extract_log_config_map()).as_dict()
    if system_enabled:
        with pytest.raises(ConfigException, match="local.retention.bytes"):
            LogConfig.validate_broker_log_config_values(values, True)
    else:
        LogConfig.validate_broker_log_config_values(values, False)


def test_timestamp_before_max_ms_uses_deprecated_config() -> None:
    """Mirrors LogConfigTest#testTimestampBeforeMaxMsUsesDeprecatedConfig (KIP-937): with the new bounds
    at their default, the deprecated difference bound is what topics get for both."""
    config = KafkaConfig({"broker.id": 0, "log.message.timestamp.before.max.ms": str(LONG_MAX),
                          "log.message.timestamp.after.max.ms": str(LONG_MAX),
                          "log.message.timestamp.difference.max.ms": str(DAY_MS)})
    props = config.extract_log_config_map()
    assert (props["message.timestamp.before.max.ms"], props["message.timestamp.after.max.ms"]) == (DAY_MS, DAY_MS)
    # A bound set on its own wins over the deprecated one.
    config = KafkaConfig({"broker.id": 0, "log.message.timestamp.before.max.ms": "5",
                          "log.message.timestamp.difference.max.ms": str(DAY_MS)})
    props = config.extract_log_config_map()
    assert (props["message.timestamp.before.max.ms"], props["message.timestamp.after.max.ms"]) == (5, DAY_MS)


def test_topic_overrides_fall_back_to_broker_defaults() -> None:
    """LogConfig#fromProps(KafkaConfig#extractLogConfigMap, overrides): unset keys take the broker's
    values, set ones override; the broker's own key names are not topic names."""
    broker = KafkaConfig({"broker.id": 0, "log.cleanup.policy": "compact", "min.insync.replicas": "2",
                          "compression.type": "lz4", "log.segment.bytes": "1048576", "log.retention.minutes": "30"})
    topic = LogConfig.from_broker(broker, {"compression.type": "gzip"})
    assert (topic.get("cleanup.policy"), topic.min_in_sync_replicas, topic.get("compression.type"),
            topic.get("segment.bytes"), topic.get("retention.ms")) == (["compact"], 2, "gzip", 1048576, 1800000)
    assert topic.overrides == {"compression.type": "gzip"}


# ------------------------------------------------------------------ the admin APIs


async def _create(cluster: Cluster, configs: dict[str, str | None], name: str = "t", validate_only: bool = False):
    topic = CreatableTopic(name=name, num_partitions=1, replication_factor=1,
                           configs=tuple(CreateableTopicConfig(name=k, value=v) for k, v in configs.items()))
    response = await cluster.send(0, CreateTopicsRequest(topics=(topic,), timeout_ms=5000, validate_only=validate_only))
    [result] = response.topics
    return Errors.for_code(result.error_code), result.error_message


# (configs, the ConfigException or InvalidConfigurationException text)
BAD_TOPIC_CONFIGS = [
    ({"min.insync.replicas": "0"}, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    ({"retention.ms": "abc"}, "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ({"compression.type": "none"}, "Invalid value none for configuration compression.type: String must be one of: "
                                   "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ({"cleanup.policy": "compact,shred"}, "Invalid value shred for configuration cleanup.policy: String must be one "
                                          "of: compact, delete"),
    ({"message.timestamp.type": "Wall"}, "Invalid value Wall for configuration message.timestamp.type: String must be "
                                         "one of: CreateTime, LogAppendTime"),
    ({"message.timestamp.after.max.ms": "-1"}, "Invalid value -1 for configuration message.timestamp.after.max.ms: "
                                               "Value must be at least 0"),
    ({"segment.bytes": "10"}, "Invalid value 10 for configuration segment.bytes: Value must be at least 14"),
    ({"min.compaction.lag.ms": "200", "max.compaction.lag.ms": "100"},
     "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)"),
    ({"remote.storage.enable": "true"}, "Tiered Storage functionality is disabled in the broker. Topic cannot be "
                                        "configured with remote log storage."),
    ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_create_topics_answers_invalid_configs(mode: str) -> None:
    """ZkAdminManager#createTopics (ConfigException as InvalidConfigurationException with its text) and
    ReplicationControlManager#createTopics (ConfigurationControlManager#validateAlterConfig): every bad
    topic config is INVALID_CONFIG with Kafka's text and no topic; null values are refused first."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=3) as cluster:
        for configs, message in BAD_TOPIC_CONFIGS:
            for validate_only in (True, False):
                assert await _create(cluster, configs, validate_only=validate_only) == (Errors.INVALID_CONFIG, message)
        assert await _create(cluster, {"retention.ms": None, "cleanup.policy": None}) == (
            Errors.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms,cleanup.policy")
        assert "t" not in cluster.broker(0).metadata_cache.get_all_topics()
        # Values Kafka accepts that kafka_ref used to refuse, and the topic they make.
        good = {"cleanup.policy": "compact, delete", "compression.type": "uncompressed", "segment.ms": "3600000",
                "min.cleanable.dirty.ratio": "0.1", "message.timestamp.before.max.ms": "3600000",
                "retention.bytes": "5000000000"}
        assert await _create(cluster, good) == (Errors.NONE, None)
        await cluster.wait_until(lambda: "segment.ms" in cluster.broker(0).log_manager.fetch_log_config("t").overrides)
        config = cluster.broker(0).log_manager.fetch_log_config("t")
        assert (config.get("cleanup.policy"), config.get("compression.type"), config.get("segment.ms"),
                config.get("retention.bytes")) == (["compact", "delete"], "uncompressed", 3600000, 5000000000)


def _ops(*ops: tuple[str, int, str | None]) -> tuple[AlterableConfig, ...]:
    return tuple(AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops)


async def _incremental(cluster: Cluster, *ops: tuple[str, int, str | None], topic: str = "t"):
    request = IncrementalAlterConfigsRequest(resources=(AlterConfigsResource(
        resource_type=ConfigResourceType.TOPIC, resource_name=topic, configs=_ops(*ops)),))
    [result] = (await cluster.send(0, request)).responses
    return Errors.for_code(result.error_code), result.error_message


async def _legacy(cluster: Cluster, configs: dict[str, str], topic: str = "t"):
    request = AlterConfigsRequest(resources=(LegacyAlterConfigsResource(
        resource_type=ConfigResourceType.TOPIC, resource_name=topic,
        configs=tuple(LegacyAlterableConfig(name=k, value=v) for k, v in configs.items())),))
    [result] = (await cluster.send(0, request)).responses
    return Errors.for_code(result.error_code), result.error_message


def _prefixed(mode: str, message: str) -> str:
    """ZkAdminManager#incrementalAlterConfigs / #alterConfigs prefix a ConfigException's text with the resource."""
    if mode == "zk" and not message.startswith(("Unknown topic config name", "conflict topic config")):
        return f"Invalid config value for resource ConfigResource(type=TOPIC, name='t'): {message}"
    return message


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_alter_configs_answer_invalid_configs(mode: str) -> None:
    """IncrementalAlterConfigs and AlterConfigs: each bad config is INVALID_CONFIG, with ZkAdminManager's
    "Invalid config value for resource ..." prefix on a ConfigException in ZooKeeper mode and the
    controller's bare text in KRaft mode (an InvalidConfigurationException keeps its own text in both);
    the topic's overrides stay as they were; a missing topic is checked before the config in ZooKeeper
    mode and after it in KRaft mode."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=4) as cluster:
        assert await _create(cluster, {"retention.ms": "60000"}) == (Errors.NONE, None)
        await cluster.wait_until(lambda: cluster.broker(0).log_manager.fetch_log_config("t").overrides == {"retention.ms": "60000"})
        for configs, message in BAD_TOPIC_CONFIGS:
            ops = [(k, OpType.SET, v) for k, v in configs.items()]
            assert await _incremental(cluster, *ops) == (Errors.INVALID_CONFIG, _prefixed(mode, message)), configs
            assert await _legacy(cluster, configs) == (Errors.INVALID_CONFIG, _prefixed(mode, message)), configs
        await anyio.sleep(1)
        assert cluster.broker(0).log_manager.fetch_log_config("t").overrides == {"retention.ms": "60000"}
        # A missing topic: ZkAdminManager#alterTopicConfigs checks the metadata cache first; the KRaft
        # controller validates the config first (ConfigurationControlManager#validateAlterConfig) and
        # checks existence after.
        missing = (Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist.")
        bad_config = missing if mode == "zk" else (
            Errors.INVALID_CONFIG, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1")
        assert await _incremental(cluster, ("min.insync.replicas", OpType.SET, "0"), topic="missing") == bad_config
        assert await _legacy(cluster, {"min.insync.replicas": "0"}, topic="missing") == bad_config
        assert await _incremental(cluster, ("min.insync.replicas", OpType.SET, "2"), topic="missing") == missing
        assert await _legacy(cluster, {"min.insync.replicas": "2"}, topic="missing") == missing


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_incremental_list_operations(mode: str) -> None:
    """ConfigAdminManager#prepareIncrementalConfigs (ZooKeeper) and
    ConfigurationControlManager#incrementalAlterConfigResource (KRaft): APPEND / SUBTRACT only on LIST
    keys (INVALID_CONFIG, each mode with its own text); SUBTRACT from an unset key starts from the
    default; an unknown key under APPEND fails ZooKeeper's map lookup (UNKNOWN_SERVER_ERROR, no
    message) and is "not LIST" for the controller."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=5) as cluster:
        assert await _create(cluster, {}) == (Errors.NONE, None)
        expected = ("Config value append is not allowed for config key: retention.ms" if mode == "zk"
                    else "Can't APPEND to key retention.ms because its type is not LIST.")
        assert await _incremental(cluster, ("retention.ms", OpType.APPEND, "5")) == (Errors.INVALID_CONFIG, expected)
        expected = ("Config value subtract is not allowed for config key: retention.ms" if mode == "zk"
                    else "Can't SUBTRACT to key retention.ms because its type is not LIST.")
        assert await _incremental(cluster, ("retention.ms", OpType.SUBTRACT, "5")) == (Errors.INVALID_CONFIG, expected)
        unknown = (Errors.UNKNOWN_SERVER_ERROR, None) if mode == "zk" else (
            Errors.INVALID_CONFIG, "Can't APPEND to key no.such.config because its type is not LIST.")
        assert await _incremental(cluster, ("no.such.config", OpType.APPEND, "x")) == unknown

        def policy() -> list[str]:
            return cluster.broker(0).log_manager.fetch_log_config("t").get("cleanup.policy")

        # SUBTRACT of an item the default does not hold keeps the default's items.
        assert await _incremental(cluster, ("cleanup.policy", OpType.SUBTRACT, "compact")) == (Errors.NONE, None)
        await cluster.wait_until(lambda: "cleanup.policy" in cluster.broker(0).log_manager.fetch_log_config("t").overrides)
        assert policy() == ["delete"]
        assert await _incremental(cluster, ("cleanup.policy", OpType.APPEND, "compact")) == (Errors.NONE, None)
        await cluster.wait_until(lambda: policy() == ["delete", "compact"])
        # A list item the validator refuses.
        assert await _incremental(cluster, ("cleanup.policy", OpType.APPEND, "shred")) == (
            Errors.INVALID_CONFIG, _prefixed(mode, "Invalid value shred for configuration cleanup.policy: String must "
                                                   "be one of: compact, delete"))
        assert policy() == ["delete", "compact"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_incremental_null_values_are_refused_up_front(mode: str) -> None:
    """ConfigAdminManager#preprocess (IncrementalAlterConfigs): a null value for any operation but DELETE
    is INVALID_REQUEST naming the keys; DELETE takes no value."""
    async with Cluster(brokers=1, metadata_mode=mode, seed=6) as cluster:
        assert await _create(cluster, {"retention.ms": "60000"}) == (Errors.NONE, None)
        assert await _incremental(cluster, ("retention.ms", OpType.SET, None), ("cleanup.policy", OpType.APPEND, None)) == (
            Errors.INVALID_REQUEST, "Null value not supported for : retention.ms, cleanup.policy")
        assert await _incremental(cluster, ("retention.ms", OpType.DELETE, None)) == (Errors.NONE, None)
        await cluster.wait_until(lambda: cluster.broker(0).log_manager.fetch_log_config("t").overrides == {})


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_describe_configs_reports_configdef_types(mode: str) -> None:
    """ConfigHelper#describeConfigs (createTopicConfigEntry): every LogConfig key with its ConfigDef type and
    ConfigDef#convertToString value; overrides are TOPIC_CONFIG, the rest DEFAULT_CONFIG."""
    from kafka_ref.common.requests.describe_configs import (
        ConfigSource,
        ConfigType,
        DescribeConfigsRequest,
        DescribeConfigsResource,
    )

    async with Cluster(brokers=1, metadata_mode=mode, seed=8) as cluster:
        assert await _create(cluster, {"cleanup.policy": "compact , delete", "min.cleanable.dirty.ratio": "0.25"}) == (
            Errors.NONE, None)
        await cluster.wait_until(lambda: "cleanup.policy" in cluster.broker(0).log_manager.fetch_log_config("t").overrides)
        request = DescribeConfigsRequest(resources=(DescribeConfigsResource(
            resource_type=ConfigResourceType.TOPIC, resource_name="t"),))
        [result] = (await cluster.send(0, request)).results
        entries = {c.name: (c.value, ConfigType(c.config_type), ConfigSource(c.config_source)) for c in result.configs}
        assert len(entries) == 34
        assert entries["cleanup.policy"] == ("compact,delete", ConfigType.LIST, ConfigSource.TOPIC_CONFIG)
        assert entries["min.cleanable.dirty.ratio"] == ("0.25", ConfigType.DOUBLE, ConfigSource.TOPIC_CONFIG)
        assert entries["retention.ms"] == ("604800000", ConfigType.LONG, ConfigSource.DEFAULT_CONFIG)
        assert entries["segment.bytes"] == ("1073741824", ConfigType.INT, ConfigSource.DEFAULT_CONFIG)
        assert entries["min.insync.replicas"] == ("1", ConfigType.INT, ConfigSource.DEFAULT_CONFIG)
        assert entries["unclean.leader.election.enable"] == ("false", ConfigType.BOOLEAN, ConfigSource.DEFAULT_CONFIG)
        assert entries["compression.type"] == ("producer", ConfigType.STRING, ConfigSource.DEFAULT_CONFIG)
        assert entries["leader.replication.throttled.replicas"] == ("", ConfigType.LIST, ConfigSource.DEFAULT_CONFIG)
        assert entries["message.timestamp.after.max.ms"] == (str(LONG_MAX), ConfigType.LONG, ConfigSource.DEFAULT_CONFIG)
