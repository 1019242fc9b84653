"""Broker configuration: KafkaConfig's defaults, types, ranges and the combinations validateValues checks.

Ports the parts of Kafka 3.8's core/src/test/scala/unit/kafka/server/KafkaConfigTest.scala that
concern keys kafka_ref reads (kafka_ref.common.config.KafkaConfig). A key kafka_ref does not define is
accepted as Kafka's broker accepts it (kept in ``originals``, named by ``not_modelled``); only modelled
keys are checked here.
tests/test_common.py holds the earlier default checks.

Not ported:
- Listeners, advertised listeners, security protocols, control-plane and controller listener names,
  quorum voters and bootstrap servers (testAdvertise*, testDuplicateListeners, test*Listener*,
  testControllerQuorumVoter*, testParseQuorumBootstrapServers, testZookeeperConnect*): kafka_ref has
  an in-process network with no listeners.
- SSL, SASL, authorizer and password-encoder configs (testSaslJwksEndpointRetryDefaults,
  testInvalidAuthorizerClassName, testInvalidSecurityInterBrokerProtocol): not modelled.
- testDynamicLogConfigs, testSpecificProperties' dynamic parts: dynamic broker configs are not modelled.
- log.roll.* (testLogRollTime*), metadata log directories (testCustomMetadataLogDir,
  testDefaultMetadataLogDir), metadata snapshots (testMetadataMaxSnapshotInterval), ZooKeeper
  migration (testMigration*), JBOD and tiered storage (testSingleLogDirectoryWithRemoteLogStorage),
  the new group coordinator's consumer-group configs (testConsumerGroup*,
  testGroupCoordinatorRebalanceProtocols), early start listeners, max connections: not modelled.
- testInterBrokerVersionMessageFormatCompatibility: log.message.format.version is not a kafka_ref key.
- testIgnoreUserInterBrokerProtocolVersionKRaft / testInvalidInterBrokerProtocolVersionKRaft /
  testDefaultInterBrokerProtocolVersionKRaft: kafka_ref's KRaft controller bootstraps metadata.version
  from inter.broker.protocol.version instead of ignoring it.
- testFromPropsInvalid for keys kafka_ref does not define; for several modelled keys kafka_ref keeps
  a lower bound Kafka lacks (replica.lag.time.max.ms, replica.fetch.min.bytes, replica.fetch.wait.max.ms,
  num.replica.fetchers, replica.high.watermark.checkpoint.interval.ms, zookeeper.session.timeout.ms,
  default.replication.factor, request.timeout.ms, the quorum timeouts, broker session and heartbeat
  intervals) because a value below it would stop the model (no fetcher thread, a zero period);
  those keys are checked with Kafka's invalid values only.
"""

from __future__ import annotations

import pytest

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import ConfigException
from kafka_ref.common.metadata_version import MetadataVersion

HOUR_MS = 60 * 60 * 1000


def _valid(props: dict) -> bool:
    """KafkaConfigTest#isValidKafkaConfig: fromProps raises neither IllegalArgumentException nor ConfigException."""
    try:
        KafkaConfig(props)
        return True
    except (ValueError, ConfigException):
        return False


# ------------------------------------------------------------------ log retention


@pytest.mark.parametrize(("props", "expected"), [
    ({"log.retention.hours": "1"}, HOUR_MS),
    ({"log.retention.minutes": "30"}, 30 * 60 * 1000),
    ({"log.retention.ms": "1800000"}, 30 * 60 * 1000),
    ({}, 7 * 24 * HOUR_MS),
    ({"log.retention.minutes": "30", "log.retention.hours": "1"}, 30 * 60 * 1000),
    ({"log.retention.ms": "1800000", "log.retention.minutes": "10"}, 30 * 60 * 1000),
], ids=["HoursProvided", "MinutesProvided", "MsProvided", "NoConfigProvided", "BothMinutesAndHoursProvided",
        "BothMinutesAndMsProvided"])
def test_log_retention_time(props: dict, expected: int) -> None:
    """Mirrors KafkaConfigTest#testLogRetentionTime{HoursProvided,MinutesProvided,MsProvided,
    NoConfigProvided,BothMinutesAndHoursProvided,BothMinutesAndMsProvided}: ms, else minutes, else hours."""
    config = KafkaConfig({"broker.id": 0, **props})
    assert config.log_retention_time_millis() == expected
    assert config.get("log.retention.ms") == expected
    assert config.extract_log_config_map()["retention.ms"] == expected


def test_log_retention_unlimited() -> None:
    """Mirrors KafkaConfigTest#testLogRetentionUnlimited: -1 at any unit is unlimited, ms wins over
    minutes, and 0 ms is refused (IllegalArgumentException)."""
    for key in ("log.retention.ms", "log.retention.minutes", "log.retention.hours"):
        assert KafkaConfig({"broker.id": 0, key: "-1"}).get("log.retention.ms") == -1
    assert KafkaConfig({"broker.id": 0, "log.retention.ms": "-1", "log.retention.minutes": "30"}).get("log.retention.ms") == -1
    # Any negative number is unlimited.
    assert KafkaConfig({"broker.id": 0, "log.retention.ms": "-5"}).get("log.retention.ms") == -1
    with pytest.raises(ValueError, match="log.retention.ms must be unlimited"):
        KafkaConfig({"broker.id": 0, "log.retention.ms": "0"})


@pytest.mark.parametrize("key", ["log.retention.ms", "log.retention.minutes", "log.retention.hours"])
def test_log_retention_valid(key: str) -> None:
    """Mirrors KafkaConfigTest#testLogRetentionValid: a zero retention at any unit is refused."""
    with pytest.raises(ValueError) as info:
        KafkaConfig({"broker.id": 0, key: "0"})
    assert str(info.value) == "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1"


# ------------------------------------------------------------------ inter.broker.protocol.version


def test_version_configuration() -> None:
    """Mirrors KafkaConfigTest#testVersionConfiguration: the default is the latest production version
    (3.8); 0.8.2.0 and 0.8.2.1 both read as 0.8.2; the latest is at least that."""
    assert KafkaConfig({"broker.id": 1}).inter_broker_protocol_version == MetadataVersion.parse("3.8")
    conf2 = KafkaConfig({"broker.id": 1, "inter.broker.protocol.version": "0.8.2.0"})
    conf3 = KafkaConfig({"broker.id": 1, "inter.broker.protocol.version": "0.8.2.1"})
    assert conf2.inter_broker_protocol_version == conf3.inter_broker_protocol_version == MetadataVersion.parse("0.8.2")
    assert str(conf3.inter_broker_protocol_version) == "0.8.2"
    assert MetadataVersion.parse("3.8").is_at_least(conf3.inter_broker_protocol_version)


@pytest.mark.parametrize(("text", "release"), [
    ("3.8", (3, 8, 0)), ("3.8-IV0", (3, 8, 0)), ("3.8.0", (3, 8, 0)), ("2.7-IV2", (2, 7, 0)),
    ("0.10.2", (0, 10, 2)), ("0.10.2-IV0", (0, 10, 2)), ("0.11.0.3", (0, 11, 0)), ("1.0", (1, 0, 0)),
    ("3.9-IV0", (3, 9, 0)),
])
def test_metadata_version_from_version_string(text: str, release: tuple[int, ...]) -> None:
    """MetadataVersion#fromVersionString (KafkaConfigTest#testVersionConfiguration's parsing): three
    parts for 0.x, two otherwise; a release alone or with one of its IVs."""
    assert MetadataVersion.parse(text).release == release


@pytest.mark.parametrize("text", ["banana", "", "3.9", "3.10", "0.10", "2.7-IV3", "3.8-IV1", "4.0", "0.8.3"])
def test_invalid_inter_broker_protocol_versions(text: str) -> None:
    """MetadataVersionValidator: a version Kafka 3.8 does not know (3.9 is not production, so only
    3.9-IV0 names it) is a ConfigException with fromVersionString's text."""
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"broker.id": 0, "inter.broker.protocol.version": text})
    assert str(info.value) == (f"Invalid value {text} for configuration inter.broker.protocol.version: "
                               f"Version {text} is not a valid version")


# ------------------------------------------------------------------ unclean election, compression


def test_unclean_leader_election() -> None:
    """Mirrors KafkaConfigTest#testUncleanLeaderElectionDefault / #testUncleanElectionDisabled /
    #testUncleanElectionEnabled / #testUncleanElectionInvalid."""
    assert KafkaConfig({"broker.id": 0}).get("unclean.leader.election.enable") is False
    assert KafkaConfig({"broker.id": 0, "unclean.leader.election.enable": "false"}).get("unclean.leader.election.enable") is False
    assert KafkaConfig({"broker.id": 0, "unclean.leader.election.enable": "true"}).get("unclean.leader.election.enable") is True
    with pytest.raises(ConfigException):
        KafkaConfig({"broker.id": 0, "unclean.leader.election.enable": "invalid"})


def test_compression_type() -> None:
    """Mirrors KafkaConfigTest#testDefaultCompressionType / #testValidCompressionType /
    #testInvalidCompressionType: BrokerCompressionType's names only."""
    assert KafkaConfig({"broker.id": 0}).get("compression.type") == "producer"
    assert KafkaConfig({"broker.id": 0, "compression.type": "gzip"}).get("compression.type") == "gzip"
    for bad in ("abc", "none"):
        with pytest.raises(ConfigException) as info:
            KafkaConfig({"broker.id": 0, "compression.type": bad})
        assert str(info.value) == (f"Invalid value {bad} for configuration compression.type: String must be one of: "
                                   "uncompressed, zstd, lz4, snappy, gzip, producer")


@pytest.mark.parametrize(("codec", "key", "level"), [
    ("gzip", "compression.gzip.level", 10), ("lz4", "compression.lz4.level", 18), ("zstd", "compression.zstd.level", 23),
], ids=["Gzip", "Lz4", "Zstd"])
def test_invalid_compression_level(codec: str, key: str, level: int) -> None:
    """Mirrors KafkaConfigTest#testInvalid{Gzip,Lz4,Zstd}CompressionLevel: one past the codec's maximum."""
    with pytest.raises(ConfigException, match=key):
        KafkaConfig({"broker.id": 0, "compression.type": codec, key: str(level)})
    config = KafkaConfig({"broker.id": 0, "compression.type": codec, key: str(level - 1)})
    assert config.extract_log_config_map()[key] == level - 1


# ------------------------------------------------------------------ testFromPropsInvalid


# KafkaConfigTest#testFromPropsInvalid's values for the keys kafka_ref defines.
INVALID_VALUES = {
    "zookeeper.session.timeout.ms": ("not_a_number",),
    "broker.id": ("not_a_number",),
    "request.timeout.ms": ("not_a_number",),
    "broker.heartbeat.interval.ms": ("not_a_number",),
    "broker.session.timeout.ms": ("not_a_number",),
    "node.id": ("not_a_number",),
    "num.partitions": ("not_a_number", "0"),
    "log.segment.bytes": ("not_a_number", "11"),
    "log.retention.ms": ("not_a_number", "0"),
    "log.retention.minutes": ("not_a_number", "0"),
    "log.retention.hours": ("not_a_number", "0"),
    "log.retention.bytes": ("not_a_number",),
    "log.retention.check.interval.ms": ("not_a_number", "0"),
    "log.cleanup.policy": ("unknown_policy", "0"),
    "log.cleaner.delete.retention.ms": ("not_a_number",),
    "log.cleaner.min.compaction.lag.ms": ("not_a_number",),
    "log.cleaner.max.compaction.lag.ms": ("not_a_number",),
    "log.cleaner.min.cleanable.ratio": ("not_a_number",),
    "log.index.size.max.bytes": ("not_a_number", "3"),
    "log.flush.interval.messages": ("not_a_number", "0"),
    "log.message.timestamp.difference.max.ms": ("not_a_number",),
    "log.message.timestamp.before.max.ms": ("not_a_number",),
    "log.message.timestamp.after.max.ms": ("not_a_number",),
    "auto.create.topics.enable": ("not_a_boolean", "0"),
    "min.insync.replicas": ("not_a_number", "0"),
    "controller.socket.timeout.ms": ("not_a_number",),
    "default.replication.factor": ("not_a_number",),
    "replica.lag.time.max.ms": ("not_a_number",),
    "replica.socket.timeout.ms": ("not_a_number", "-2"),
    "replica.fetch.max.bytes": ("not_a_number",),
    "replica.fetch.wait.max.ms": ("not_a_number",),
    "replica.fetch.min.bytes": ("not_a_number",),
    "replica.fetch.response.max.bytes": ("not_a_number",),
    "num.replica.fetchers": ("not_a_number",),
    "replica.high.watermark.checkpoint.interval.ms": ("not_a_number",),
    "fetch.purgatory.purge.interval.requests": ("not_a_number",),
    "producer.purgatory.purge.interval.requests": ("not_a_number",),
    "delete.records.purgatory.purge.interval.requests": ("not_a_number",),
    "auto.leader.rebalance.enable": ("not_a_boolean", "0"),
    "leader.imbalance.per.broker.percentage": ("not_a_number",),
    "leader.imbalance.check.interval.seconds": ("not_a_number",),
    "unclean.leader.election.enable": ("not_a_boolean", "0"),
    "controlled.shutdown.max.retries": ("not_a_number",),
    "controlled.shutdown.retry.backoff.ms": ("not_a_number",),
    "controlled.shutdown.enable": ("not_a_boolean", "0"),
    "group.min.session.timeout.ms": ("not_a_number",),
    "group.max.session.timeout.ms": ("not_a_number",),
    "group.initial.rebalance.delay.ms": ("not_a_number",),
    "group.max.size": ("not_a_number", "0", "-1"),
    "offsets.load.buffer.size": ("not_a_number", "0"),
    "offsets.topic.replication.factor": ("not_a_number", "0"),
    "offsets.topic.num.partitions": ("not_a_number", "0"),
    "offsets.retention.minutes": ("not_a_number", "0"),
    "offsets.retention.check.interval.ms": ("not_a_number", "0"),
    "offsets.commit.timeout.ms": ("not_a_number", "0"),
    "offsets.commit.required.acks": ("not_a_number", "-2"),
    "delete.topic.enable": ("not_a_boolean", "0"),
    "compression.gzip.level": ("not_a_number", "0"),
    "compression.lz4.level": ("not_a_number", "0"),
    "compression.zstd.level": ("not_a_number", "23"),
    "controller.quorum.election.timeout.ms": ("not_a_number",),
    "controller.quorum.fetch.timeout.ms": ("not_a_number",),
    "controller.quorum.election.backoff.max.ms": ("not_a_number",),
    "controller.quorum.request.timeout.ms": ("not_a_number",),
    "controller.quorum.retry.backoff.ms": ("not_a_number",),
    "log.local.retention.ms": ("not_a_number", "-3"),
    "log.local.retention.bytes": ("not_a_number", "-3"),
    # The default case: "not_a_number" and "-1".
    "message.max.bytes": ("not_a_number", "-1"),
    "replica.fetch.backoff.ms": ("not_a_number", "-1"),
    "max.incremental.fetch.session.cache.slots": ("not_a_number", "-1"),
    "fetch.max.bytes": ("not_a_number", "-1"),
    "log.index.interval.bytes": ("not_a_number", "-1"),
    "log.delete.delay.ms": ("not_a_number", "-1"),
}


@pytest.mark.parametrize("key", sorted(INVALID_VALUES))
def test_from_props_invalid(key: str) -> None:
    """Mirrors KafkaConfigTest#testFromPropsInvalid (KafkaConfigTest#assertPropertyInvalid) for the keys
    kafka_ref defines: each listed value fails KafkaConfig#fromProps."""
    assert _valid({"broker.id": 0})
    for value in INVALID_VALUES[key]:
        props = {"broker.id": 0, key: value}
        if key in ("broker.id", "node.id"):
            props = {key: value}
        assert not _valid(props), (key, value)


def test_from_props_messages() -> None:
    """ConfigDef#parseType's texts for the kinds testFromPropsInvalid feeds it."""
    cases = [
        ({"num.partitions": "not_a_number"}, "Invalid value not_a_number for configuration num.partitions: "
                                             "Not a number of type INT"),
        ({"replica.lag.time.max.ms": "not_a_number"}, "Invalid value not_a_number for configuration "
                                                      "replica.lag.time.max.ms: Not a number of type LONG"),
        ({"offsets.topic.replication.factor": "40000"}, "Invalid value 40000 for configuration "
                                                        "offsets.topic.replication.factor: Not a number of type SHORT"),
        ({"auto.create.topics.enable": "0"}, "Invalid value 0 for configuration auto.create.topics.enable: "
                                             "Expected value to be either true or false"),
        ({"log.cleanup.policy": "unknown_policy"}, "Invalid value unknown_policy for configuration log.cleanup.policy: "
                                                   "String must be one of: compact, delete"),
        ({"log.cleaner.min.cleanable.ratio": "1.5"}, "Invalid value 1.5 for configuration "
                                                     "log.cleaner.min.cleanable.ratio: Value must be no more than 1"),
        ({"group.max.size": "0"}, "Invalid value 0 for configuration group.max.size: Value must be at least 1"),
    ]
    for props, message in cases:
        with pytest.raises(ConfigException) as info:
            KafkaConfig({"broker.id": 0, **props})
        assert str(info.value) == message


def test_properties_files_parse_like_java() -> None:
    """ConfigDef#parseType on strings: trimmed, a sign allowed, booleans in any case, lists split at commas."""
    config = KafkaConfig({"broker.id": " 3 ", "num.replica.fetchers": "+2", "auto.create.topics.enable": "FALSE",
                          "log.cleanup.policy": "compact , delete", "log.retention.bytes": "10000000000"})
    assert (config.broker_id, config.num_replica_fetchers, config.get("auto.create.topics.enable"),
            config.get("log.cleanup.policy"), config.get("log.retention.bytes")) == (
        3, 2, False, ["compact", "delete"], 10_000_000_000)


def test_keys_kafka_ref_does_not_model_are_accepted() -> None:
    """A server.properties of Kafka's keys parses: the names kafka_ref has no use for are kept, not refused.

    Kafka's KafkaConfig defines listeners, log.dirs, zookeeper.connect and the rest; AbstractConfig
    keeps every supplied name in originals and AbstractConfig#get of a name outside the ConfigDef
    is ConfigException "Unknown configuration '<name>'".
    """
    props = {"broker.id": 1, "listeners": "PLAINTEXT://:9092", "log.dirs": "/tmp/kafka-logs",
             "zookeeper.connect": "localhost:2181", "num.network.threads": 3, "min.insync.replicas": 2,
             "replica.lag.time.maxx.ms": 1}
    config = KafkaConfig(props)
    assert config.not_modelled == ["listeners", "log.dirs", "num.network.threads", "replica.lag.time.maxx.ms",
                                   "zookeeper.connect"]
    assert config.originals["log.dirs"] == "/tmp/kafka-logs"
    assert (config.get("min.insync.replicas"), config.get("replica.lag.time.max.ms")) == (2, 30000)
    with pytest.raises(ConfigException) as info:
        config.get("listeners")
    assert str(info.value) == "Unknown configuration 'listeners'"
    # copy_with keeps them (each broker's config is the cluster's with its broker.id).
    assert config.copy_with({"broker.id": 2}).not_modelled == config.not_modelled
    assert KafkaConfig({"broker.id": 1}).not_modelled == []


# ------------------------------------------------------------------ validateValues


def test_replica_fetch_wait_max_ms_bounds() -> None:
    """KafkaConfig#validateValues: replica.fetch.wait.max.ms may not exceed replica.socket.timeout.ms
    nor replica.lag.time.max.ms (KafkaConfigTest#testSpecificProperties sets them consistently)."""
    with pytest.raises(ValueError) as info:
        KafkaConfig({"broker.id": 0, "replica.fetch.wait.max.ms": "600", "replica.socket.timeout.ms": "500"})
    assert str(info.value) == ("requirement failed: replica.socket.timeout.ms should always be at least "
                               "replica.fetch.wait.max.ms to prevent unnecessary socket timeouts")
    with pytest.raises(ValueError) as info:
        KafkaConfig({"broker.id": 0, "replica.fetch.wait.max.ms": "600", "replica.lag.time.max.ms": "500"})
    assert str(info.value) == ("requirement failed: replica.fetch.wait.max.ms should always be less than or equal "
                               "to replica.lag.time.max.ms to prevent frequent changes in ISR")
    config = KafkaConfig({"broker.id": 0, "replica.fetch.wait.max.ms": "500", "replica.lag.time.max.ms": "500",
                          "replica.socket.timeout.ms": "500"})
    assert config.replica_lag_time_max_ms == 500


def test_replica_fetch_max_bytes_is_not_bounded_by_message_max_bytes() -> None:
    """KafkaConfig#validateValues has no rule tying replica.fetch.max.bytes to message.max.bytes (KIP-74
    made the fetch size a soft limit): a smaller fetch size is accepted as given."""
    config = KafkaConfig({"broker.id": 0, "replica.fetch.max.bytes": "1024", "message.max.bytes": "2000000"})
    assert (config.get("replica.fetch.max.bytes"), config.get("message.max.bytes")) == (1024, 2000000)
    assert config.extract_log_config_map()["max.message.bytes"] == 2000000


def test_offsets_commit_required_acks_bounds() -> None:
    """KafkaConfig#validateValues: offsets.commit.required.acks in [-1, offsets.topic.replication.factor]."""
    assert KafkaConfig({"broker.id": 0, "offsets.commit.required.acks": "3"}).get("offsets.commit.required.acks") == 3
    for acks, rf in (("4", "3"), ("2", "1"), ("-2", "3")):
        with pytest.raises(ValueError, match="offsets.commit.required.acks must be greater or equal -1"):
            KafkaConfig({"broker.id": 0, "offsets.commit.required.acks": acks, "offsets.topic.replication.factor": rf})


def test_min_insync_replicas_is_a_broker_default_for_topics() -> None:
    """ServerLogConfigs.MIN_IN_SYNC_REPLICAS_CONFIG (INT, at least 1): the broker value becomes every
    topic's default (KafkaConfig#extractLogConfigMap); nothing ties it to default.replication.factor."""
    config = KafkaConfig({"broker.id": 0, "min.insync.replicas": "3", "default.replication.factor": "1"})
    assert config.extract_log_config_map()["min.insync.replicas"] == 3
    with pytest.raises(ConfigException, match="^Invalid value 0 for configuration min.insync.replicas: Value must be at least 1$"):
        KafkaConfig({"broker.id": 0, "min.insync.replicas": "0"})


# ------------------------------------------------------------------ node.id / broker.id / process.roles


def test_accepts_large_node_id_for_raft_based_case() -> None:
    """Mirrors KafkaConfigTest#testAcceptsLargeNodeIdForRaftBasedCase: id generation does not apply in KRaft."""
    config = KafkaConfig({"process.roles": "broker", "node.id": "2000"})
    assert (config.broker_id, config.get("node.id"), config.process_roles) == (2000, 2000, frozenset({"broker"}))


@pytest.mark.parametrize("role", ["broker", "controller"])
def test_rejects_negative_node_id_for_raft_based_case_with_auto_gen_enabled(role: str) -> None:
    """Mirrors KafkaConfigTest#testRejectsNegativeNodeIdForRaftBasedBrokerCaseWithAutoGenEnabled and
    #testRejectsNegativeNodeIdForRaftBasedControllerCaseWithAutoGenEnabled."""
    assert not _valid({"process.roles": role})


def test_rejects_negative_node_id_for_raft_based_case_with_auto_gen_disabled() -> None:
    """Mirrors KafkaConfigTest#testRejectsNegativeNodeIdForRaftBasedCaseWithAutoGenDisabled."""
    assert not _valid({"process.roles": "broker", "broker.id.generation.enable": "false"})


def test_zk_based_node_ids() -> None:
    """Mirrors KafkaConfigTest#testRejectsLargeNodeIdForZkBasedCaseWithAutoGenEnabled,
    #testAcceptsNegativeOneNodeIdForZkBasedCaseWithAutoGenEnabled,
    #testRejectsNegativeTwoNodeIdForZkBasedCaseWithAutoGenEnabled,
    #testAcceptsLargeNodeIdForZkBasedCaseWithAutoGenDisabled and
    #testRejectsNegativeNodeIdForZkBasedCaseWithAutoGenDisabled."""
    with pytest.raises(ValueError) as info:
        KafkaConfig({"broker.id": 2000})
    assert str(info.value) == ("requirement failed: broker.id must be greater than or equal to -1 and not greater "
                               "than reserved.broker.max.id")
    assert KafkaConfig({"broker.id": -1}).broker_id == -1
    assert not _valid({"broker.id": -2, "node.id": -2})
    assert KafkaConfig({"broker.id": 2000, "broker.id.generation.enable": "false"}).broker_id == 2000
    with pytest.raises(ValueError, match="^requirement failed: broker.id must be greater than or equal to 0$"):
        KafkaConfig({"broker.id": -1, "broker.id.generation.enable": "false"})
    # reserved.broker.max.id moves the bound.
    assert KafkaConfig({"broker.id": 2000, "reserved.broker.max.id": "5000"}).broker_id == 2000


def test_populate_synonyms() -> None:
    """Mirrors KafkaConfigTest#testPopulateSynonymsOnEmptyMap, #testPopulateSynonymsOnMapWithoutNodeId
    and #testPopulateSynonymsOnMapWithoutBrokerId."""
    assert KafkaConfig.populate_synonyms({}) == {}
    assert KafkaConfig.populate_synonyms({"broker.id": "4"}) == {"broker.id": "4", "node.id": "4"}
    assert KafkaConfig.populate_synonyms({"node.id": "4"}) == {"broker.id": "4", "node.id": "4"}
    assert KafkaConfig.populate_synonyms({"broker.id": "4", "node.id": "5"}) == {"broker.id": "4", "node.id": "5"}


def test_node_id_must_not_be_different_than_broker_id() -> None:
    """Mirrors KafkaConfigTest#testNodeIdMustNotBeDifferentThanBrokerId."""
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"broker.id": "1", "node.id": "2"})
    assert str(info.value) == "You must set `node.id` to the same value as `broker.id`."


def test_node_id_or_broker_id_must_be_set_with_kraft() -> None:
    """Mirrors KafkaConfigTest#testNodeIdOrBrokerIdMustBeSetWithKraft."""
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"process.roles": "broker"})
    assert str(info.value) == ("Missing configuration `node.id` which is required when `process.roles` is defined "
                               "(i.e. when running in KRaft mode).")


@pytest.mark.parametrize("key", ["broker.id", "node.id"])
def test_ids_inferred_from_each_other_with_kraft(key: str) -> None:
    """Mirrors KafkaConfigTest#testNodeIdIsInferredByBrokerIdWithKraft and
    #testBrokerIdIsInferredByNodeIdWithKraft (kafka_ref's ``originals`` are the caller's props, so the
    synonym shows in the parsed values)."""
    config = KafkaConfig({"process.roles": "broker", key: "3"})
    assert (config.broker_id, config.get("node.id")) == (3, 3)


def test_process_roles() -> None:
    """KafkaConfig's process.roles: a LIST of broker and controller (ValidList), each at most once
    (KafkaConfig#parseProcessRoles)."""
    assert KafkaConfig({"process.roles": "broker,controller", "node.id": 1}).process_roles == frozenset({"broker", "controller"})
    assert KafkaConfig({"broker.id": 1}).process_roles == frozenset()
    with pytest.raises(ConfigException) as info:
        KafkaConfig({"process.roles": "broker,observer", "node.id": 1})
    assert str(info.value) == "Invalid value observer for configuration process.roles: String must be one of: broker, controller"
    with pytest.raises(ConfigException, match="^Duplicate role names found in `process.roles`"):
        KafkaConfig({"process.roles": "broker,broker", "node.id": 1})
