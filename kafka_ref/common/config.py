"""Broker and topic configuration with Kafka's dotted names and defaults.

Mirrors kafka.server.KafkaConfig, org.apache.kafka.common.config.ConfigDef and
org.apache.kafka.storage.internals.log.LogConfig: a table of typed keys with defaults and
validators. A value of the wrong type or range raises ``ConfigException`` naming the key; a
broker key outside the table is kept but unused (as in Kafka), a topic config name outside it is
refused by ``LogConfig.validate``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from kafka_ref.common.errors import ConfigException, InvalidConfigurationException
from kafka_ref.common.metadata_version import LATEST_BROKER_VERSION, LATEST_IBP, MetadataVersion


_INT_RANGE = (-2**31, 2**31 - 1)
_LONG_RANGE = (-2**63, 2**63 - 1)
_SHORT_RANGE = (-2**15, 2**15 - 1)
# Integer.parseInt / Long.parseLong: an optional sign and decimal digits, nothing else.
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
# Double.parseDouble's decimal forms (no hex floats), with NaN and Infinity.
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)")
# ConfigDef's COMMA_WITH_WHITESPACE.
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")


def _java_class(value: Any) -> str:
    """The Java class name ConfigDef#parseType prints for a value of the wrong kind."""
    return {bool: "java.lang.Boolean", int: "java.lang.Long", float: "java.lang.Double", str: "java.lang.String",
            list: "java.util.ArrayList", tuple: "java.util.ArrayList"}.get(type(value), type(value).__name__)


def _integer(name: str, value: Any, bounds: tuple[int, int], type_name: str, wrong_kind: str) -> int:
    # ConfigDef#parseType for INT, LONG and SHORT: a number of the type as it is, a string
    # parsed as Java parses it (trimmed; a bad or out-of-range one is "Not a number of type").
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigException(name, value, f"Expected value to be a {wrong_kind}, but it was a {_java_class(value)}")
    number = value
    if isinstance(value, str):
        trimmed = value.strip()
        if not _JAVA_INTEGER.fullmatch(trimmed):
            raise ConfigException(name, value, f"Not a number of type {type_name}")
        number = int(trimmed)
    if not bounds[0] <= number <= bounds[1]:
        raise ConfigException(name, value, f"Not a number of type {type_name}")
    return number


def _to_int(name: str, value: Any) -> int:
    """ConfigDef.Type.INT."""
    return _integer(name, value, _INT_RANGE, "INT", "32-bit integer")


def _to_long(name: str, value: Any) -> int:
    """ConfigDef.Type.LONG."""
    return _integer(name, value, _LONG_RANGE, "LONG", "64-bit integer (long)")


def _to_short(name: str, value: Any) -> int:
    """ConfigDef.Type.SHORT."""
    return _integer(name, value, _SHORT_RANGE, "SHORT", "16-bit integer (short)")


def _to_double(name: str, value: Any) -> float:
    """ConfigDef.Type.DOUBLE: any number, or a string Double#parseDouble reads."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        trimmed = value.strip()
        if _JAVA_DOUBLE.fullmatch(trimmed):
            return float(trimmed.rstrip("fFdD").replace("Infinity", "inf"))
        raise ConfigException(name, value, "Not a number of type DOUBLE")
    raise ConfigException(name, value, f"Expected value to be a double, but it was a {_java_class(value)}")


def _to_bool(name: str, value: Any) -> bool:
    """ConfigDef.Type.BOOLEAN: true or false in any case, trimmed."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConfigException(name, value, "Expected value to be either true or false")


def _to_str(name: str, value: Any) -> str:
    """ConfigDef.Type.STRING: the string, trimmed."""
    if isinstance(value, str):
        return value.strip()
    raise ConfigException(name, value, f"Expected value to be a string, but it was a {_java_class(value)}")


def _to_list(name: str, value: Any) -> list[str]:
    """ConfigDef.Type.LIST: a list as it is; a string split at commas (and the blanks around them),
    an empty one (after trimming) the empty list."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        trimmed = value.strip()
        return [] if not trimmed else _COMMA_WITH_WHITESPACE.split(trimmed)
    raise ConfigException(name, value, "Expected a comma separated list.")


def _to_ibp(name: str, value: Any) -> MetadataVersion:
    """inter.broker.protocol.version (STRING with MetadataVersionValidator), kept parsed."""
    try:
        return MetadataVersion.parse(str(value).strip())
    except ValueError as exc:
        raise ConfigException(name, value, str(exc)) from None


def _metadata_version_string(name: str, value: Any) -> None:
    """Mirrors org.apache.kafka.server.common.MetadataVersionValidator#ensureValid (the value stays a string)."""
    try:
        MetadataVersion.parse(value)
    except ValueError as exc:
        raise ConfigException(name, value, str(exc)) from None


# ConfigDef.Type of each converter (what DescribeConfigs reports as the config's type).
CONFIG_TYPES = {_to_int: "INT", _to_long: "LONG", _to_short: "SHORT", _to_double: "DOUBLE", _to_bool: "BOOLEAN",
                _to_str: "STRING", _to_list: "LIST", _to_ibp: "STRING"}


def _at_least(minimum: int) -> Callable[[str, Any], None]:
    """Mirrors ConfigDef.Range#atLeast."""
    def check(name: str, value: Any) -> None:
        if value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")

    return check


def _between(minimum: int, maximum: int) -> Callable[[str, Any], None]:
    """Mirrors ConfigDef.Range#between."""
    def check(name: str, value: Any) -> None:
        if value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")
        if value > maximum:
            raise ConfigException(name, value, f"Value must be no more than {maximum}")

    return check


def _one_of(*choices: str) -> Callable[[str, Any], None]:
    """Mirrors ConfigDef.ValidString#in."""
    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise ConfigException(name, value, f"String must be one of: {', '.join(choices)}")

    return check


def _each_one_of(*choices: str) -> Callable[[str, Any], None]:
    """Mirrors ConfigDef.ValidList#in: every item of the list one of ``choices`` (an empty list passes)."""
    single = _one_of(*choices)

    def check(name: str, value: Any) -> None:
        for item in value:
            single(name, item)

    return check


def _gzip_level(name: str, value: Any) -> None:
    """Mirrors org.apache.kafka.common.compress.GzipCompression.LevelValidator: 1..9 or -1 (the default)."""
    if value > GZIP_MAX_LEVEL or (value < GZIP_MIN_LEVEL and value != GZIP_DEFAULT_LEVEL):
        raise ConfigException(name, value, f"Value must be between {GZIP_MIN_LEVEL} and {GZIP_MAX_LEVEL} "
                                           f"or equal to {GZIP_DEFAULT_LEVEL}")


_THROTTLED_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")


def throttled_replica_list_ensure_valid(name: str, value: Any) -> None:
    """Mirrors org.apache.kafka.storage.internals.log.ThrottledReplicaListValidator#ensureValid.

    1. Each item, trimmed, is empty or ``partition:broker``; 2. or the items together read ``*``.
    """
    proposed = [str(item).strip() for item in value]
    if not (all(_THROTTLED_REPLICA.fullmatch(p) for p in proposed) or "".join(proposed) == "*"):
        raise ConfigException(name, "[" + ", ".join(str(v) for v in value) + "]",
                              f"{name} must be the literal '*' or a list of replicas in the following format: "
                              "[partitionId]:[brokerId],[partitionId]:[brokerId],...")


def throttled_replica_list_ensure_valid_string(name: str, value: str) -> None:
    """Mirrors ThrottledReplicaListValidator#ensureValidString: split at commas as String#split does
    (trailing empty items dropped), then ``ensure_valid``."""
    items = value.split(",")
    while len(items) > 1 and items[-1] == "":
        items.pop()
    throttled_replica_list_ensure_valid(name, items)


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """Mirrors org.apache.kafka.common.config.ConfigDef.ConfigKey (name, type, default, validator)."""

    name: str
    convert: Callable[[str, Any], Any]
    default: Any
    validator: Callable[[str, Any], None] | None = None
    doc: str = ""

    @property
    def type(self) -> str:
        """The ConfigDef.Type name (INT, LONG, SHORT, DOUBLE, BOOLEAN, STRING, LIST)."""
        return CONFIG_TYPES.get(self.convert, "STRING")


class ConfigDef:
    """Mirrors org.apache.kafka.common.config.ConfigDef: parse a mapping against typed keys."""

    def __init__(self, keys: Iterable[ConfigKey]) -> None:
        self.keys = {k.name: k for k in keys}

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Mirrors ConfigDef#parse: each defined key's value (given, else its default) converted, then validated.

        A name the definition does not hold is passed over, as in Kafka (the caller keeps it
        among its originals).
        """
        values: dict[str, Any] = {}
        # 1. Convert each supplied value (or the default) and validate it.
        for name, key in self.keys.items():
            raw = props.get(name, key.default)
            value = key.convert(name, raw) if raw is not None else None
            if key.validator is not None and value is not None:
                key.validator(name, value)
            values[name] = value
        return values


def _k(name, convert, default, validator=None, doc=""):
    return ConfigKey(name, convert, default, validator, doc)


LONG_MAX = 2**63 - 1
# org.apache.kafka.common.compress.GzipCompression / Lz4Compression / ZstdCompression levels.
GZIP_MIN_LEVEL, GZIP_MAX_LEVEL, GZIP_DEFAULT_LEVEL = 1, 9, -1
LZ4_MIN_LEVEL, LZ4_MAX_LEVEL, LZ4_DEFAULT_LEVEL = 1, 17, 9
ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL, ZSTD_DEFAULT_LEVEL = -131072, 22, 3
# org.apache.kafka.server.record.BrokerCompressionType#names, in its order.
BROKER_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
# LogConfig.DEFAULT_LOCAL_RETENTION_MS / _BYTES: -2, "derive it from retention.ms / retention.bytes".
DEFAULT_LOCAL_RETENTION = -2

# Topic-level keys: LogConfig's definition in Kafka 3.8, in its order. Broker keys of the same
# meaning carry these as defaults. Only some of them change what kafka_ref does (see
# LogManager#_apply_config); the others are accepted, validated and described as Kafka does.
LOG_CONFIG_KEYS = [
    _k("segment.bytes", _to_int, 1073741824, _at_least(14)),
    _k("segment.ms", _to_long, 604800000, _at_least(1)),
    _k("segment.jitter.ms", _to_long, 0, _at_least(0)),
    _k("segment.index.bytes", _to_int, 10485760, _at_least(4)),
    _k("flush.messages", _to_long, LONG_MAX, _at_least(1)),
    _k("flush.ms", _to_long, LONG_MAX, _at_least(0)),
    _k("retention.bytes", _to_long, -1),
    _k("retention.ms", _to_long, 604800000, _at_least(-1)),
    _k("max.message.bytes", _to_int, 1048588, _at_least(0), "Largest record batch the log accepts."),
    _k("index.interval.bytes", _to_int, 4096, _at_least(0)),
    _k("delete.retention.ms", _to_long, 86400000, _at_least(0)),
    _k("min.compaction.lag.ms", _to_long, 0, _at_least(0)),
    _k("max.compaction.lag.ms", _to_long, LONG_MAX, _at_least(1)),
    _k("file.delete.delay.ms", _to_long, 60000, _at_least(0)),
    _k("min.cleanable.dirty.ratio", _to_double, 0.5, _between(0, 1)),
    _k("cleanup.policy", _to_list, "delete", _each_one_of("compact", "delete")),
    _k("unclean.leader.election.enable", _to_bool, False, None, "Allow an out-of-sync replica to lead."),
    _k("min.insync.replicas", _to_int, 1, _at_least(1), "Acks=all needs this many ISR members."),
    _k("compression.type", _to_str, "producer", _one_of(*BROKER_COMPRESSION_TYPES)),
    _k("compression.gzip.level", _to_int, GZIP_DEFAULT_LEVEL, _gzip_level),
    _k("compression.lz4.level", _to_int, LZ4_DEFAULT_LEVEL, _between(LZ4_MIN_LEVEL, LZ4_MAX_LEVEL)),
    _k("compression.zstd.level", _to_int, ZSTD_DEFAULT_LEVEL, _between(ZSTD_MIN_LEVEL, ZSTD_MAX_LEVEL)),
    _k("preallocate", _to_bool, False),
    _k("message.format.version", _to_str, "3.0-IV1", _metadata_version_string),
    _k("message.timestamp.type", _to_str, "CreateTime", _one_of("CreateTime", "LogAppendTime")),
    _k("message.timestamp.difference.max.ms", _to_long, LONG_MAX, _at_least(0)),
    _k("message.timestamp.before.max.ms", _to_long, LONG_MAX, _at_least(0)),
    _k("message.timestamp.after.max.ms", _to_long, LONG_MAX, _at_least(0)),
    _k("leader.replication.throttled.replicas", _to_list, "", throttled_replica_list_ensure_valid),
    _k("follower.replication.throttled.replicas", _to_list, "", throttled_replica_list_ensure_valid),
    _k("message.downconversion.enable", _to_bool, True),
    _k("remote.storage.enable", _to_bool, False),
    _k("local.retention.ms", _to_long, DEFAULT_LOCAL_RETENTION, _at_least(-2)),
    _k("local.retention.bytes", _to_long, DEFAULT_LOCAL_RETENTION, _at_least(-2)),
]

# Broker-level names of topic-level keys (ServerTopicConfigSynonyms), for the keys whose broker
# key kafka_ref defines. A topic key without one (segment.ms, flush.ms, message.format.version,
# the throttled-replica lists, remote.storage.enable) falls back to its LogConfig default.
_BROKER_NAME_FOR_TOPIC_KEY = {
    "segment.bytes": "log.segment.bytes",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "preallocate": "log.preallocate",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "message.downconversion.enable": "log.message.downconversion.enable",
    "local.retention.ms": "log.local.retention.ms",
    "local.retention.bytes": "log.local.retention.bytes",
}
_LOG_KEYS_BY_NAME = {k.name: k for k in LOG_CONFIG_KEYS}
# Broker keys whose definition differs from their topic key's (KafkaConfig's own define).
_BROKER_LOG_KEY_OVERRIDES = {
    # LONG without a default or validator: unset, log.retention.minutes or .hours decides
    # (KafkaConfig#logRetentionTimeMillis), and validateValues checks the result.
    "log.retention.ms": _k("log.retention.ms", _to_long, None),
    # ServerLogConfigs' flush-interval default; the topic key's range.
    "log.flush.interval.messages": _k("log.flush.interval.messages", _to_long, LONG_MAX, _at_least(1)),
}

KAFKA_CONFIG_KEYS = [
    _k("broker.id", _to_int, -1),
    _k("node.id", _to_int, -1),
    _k("process.roles", _to_list, "", _each_one_of("broker", "controller")),
    _k("reserved.broker.max.id", _to_int, 1000, _at_least(0)),
    _k("broker.id.generation.enable", _to_bool, True),
    _k("log.dir", _to_str, "/tmp/kafka-logs"),
    _k("inter.broker.protocol.version", _to_ibp, LATEST_IBP),
    # Not a Kafka key: Kafka's code-level rules come with its binary, so kafka_ref needs a switch
    # for "which release's broker code runs" beside the IBP (which only chooses wire formats and
    # the rules Kafka itself gates on the IBP). It may not be older than the IBP.
    _k("kafka_ref.broker.version", _to_ibp, LATEST_BROKER_VERSION, None,
       "The Kafka release whose broker code runs (kafka_ref's switch for code-version rules)."),
    # Replication (seed 004 §2.3; defaults from Kafka 3.x). kafka_ref keeps lower bounds where
    # Kafka has none and a value below them would stop the model (no fetchers, a zero period).
    _k("replica.lag.time.max.ms", _to_long, 30000, _at_least(1)),
    _k("replica.fetch.max.bytes", _to_int, 1048576, _at_least(0)),
    _k("replica.fetch.response.max.bytes", _to_int, 10485760, _at_least(0)),
    _k("replica.fetch.min.bytes", _to_int, 1, _at_least(1)),
    _k("replica.fetch.wait.max.ms", _to_int, 500, _at_least(0)),
    _k("replica.fetch.backoff.ms", _to_int, 1000, _at_least(0)),
    _k("replica.socket.timeout.ms", _to_int, 30000),
    _k("replica.high.watermark.checkpoint.interval.ms", _to_long, 5000, _at_least(1)),
    _k("num.replica.fetchers", _to_int, 1, _at_least(1)),
    # Racks and reading from the closest replica (KIP-36, KIP-392): none by default.
    _k("broker.rack", _to_str, None),
    _k("replica.selector.class", _to_str, None, _one_of("org.apache.kafka.common.replica.RackAwareReplicaSelector",
                                                         "org.apache.kafka.common.replica.LeaderSelector")),
    _k("max.incremental.fetch.session.cache.slots", _to_int, 1000, _at_least(0)),
    _k("fetch.max.bytes", _to_int, 57671680, _at_least(1024)),
    _k("producer.purgatory.purge.interval.requests", _to_int, 1000),
    _k("fetch.purgatory.purge.interval.requests", _to_int, 1000),
    _k("delete.records.purgatory.purge.interval.requests", _to_int, 1),
    _k("request.timeout.ms", _to_int, 30000, _at_least(0)),
    # Topic defaults.
    _k("num.partitions", _to_int, 1, _at_least(1)),
    _k("default.replication.factor", _to_int, 1, _at_least(1)),
    _k("auto.create.topics.enable", _to_bool, True),
    _k("delete.topic.enable", _to_bool, True),
    # Controller (seed 001).
    _k("zookeeper.session.timeout.ms", _to_int, 18000, _at_least(1)),
    _k("controller.socket.timeout.ms", _to_int, 30000),
    _k("auto.leader.rebalance.enable", _to_bool, True),
    _k("leader.imbalance.check.interval.seconds", _to_long, 300, _at_least(1)),
    _k("leader.imbalance.per.broker.percentage", _to_int, 10, _at_least(0)),
    _k("controlled.shutdown.enable", _to_bool, True),
    _k("controlled.shutdown.max.retries", _to_int, 3),
    _k("controlled.shutdown.retry.backoff.ms", _to_long, 5000),
    # KRaft.
    _k("broker.session.timeout.ms", _to_int, 9000, _at_least(1)),
    _k("broker.heartbeat.interval.ms", _to_int, 2000, _at_least(1)),
    # KRaft's Raft client (RaftConfig, KIP-595).
    _k("controller.quorum.election.timeout.ms", _to_int, 1000, _at_least(1)),
    _k("controller.quorum.fetch.timeout.ms", _to_int, 2000, _at_least(1)),
    _k("controller.quorum.election.backoff.max.ms", _to_int, 1000, _at_least(1)),
    _k("controller.quorum.request.timeout.ms", _to_int, 2000, _at_least(1)),
    _k("controller.quorum.retry.backoff.ms", _to_int, 20, _at_least(0)),
    _k("controller.quorum.append.linger.ms", _to_int, 25, _at_least(0)),
    # Group coordinator (seed 000).
    _k("offsets.topic.num.partitions", _to_int, 50, _at_least(1)),
    _k("offsets.topic.replication.factor", _to_short, 3, _at_least(1)),
    _k("offsets.load.buffer.size", _to_int, 5242880, _at_least(1)),
    _k("offsets.commit.timeout.ms", _to_int, 5000, _at_least(1)),
    _k("offsets.commit.required.acks", _to_short, -1),
    _k("offsets.retention.minutes", _to_int, 10080, _at_least(1)),
    _k("offsets.retention.check.interval.ms", _to_long, 600000, _at_least(1)),
    # Not a Kafka key: Kafka always schedules offset expiration (GroupCoordinator#startup), and so
    # does kafka_ref by default. The simulator turns it off (its runs last minutes while offsets
    # are kept for offsets.retention.minutes, a week by default, and the periodic task would
    # reorder every run's events, so seeds recorded before it existed would replay differently).
    _k("kafka_ref.offsets.expiration.enable", _to_bool, True, None,
       "Schedule offset expiration every offsets.retention.check.interval.ms (as Kafka does); off only in the simulator."),
    _k("group.min.session.timeout.ms", _to_int, 6000),
    _k("group.max.session.timeout.ms", _to_int, 1800000),
    _k("group.initial.rebalance.delay.ms", _to_int, 3000),
    _k("group.max.size", _to_int, 2**31 - 1, _at_least(1)),
] + [
    _BROKER_LOG_KEY_OVERRIDES.get(broker_name) or ConfigKey(broker_name, _LOG_KEYS_BY_NAME[topic_name].convert,
                                                            _LOG_KEYS_BY_NAME[topic_name].default,
                                                            _LOG_KEYS_BY_NAME[topic_name].validator,
                                                            _LOG_KEYS_BY_NAME[topic_name].doc)
    for topic_name, broker_name in _BROKER_NAME_FOR_TOPIC_KEY.items()
] + [
    _k("log.retention.hours", _to_int, 168),
    # Unset by default: log.retention.ms, else log.retention.minutes, else log.retention.hours
    # decides (KafkaConfig#logRetentionTimeMillis).
    _k("log.retention.minutes", _to_int, None),
    _k("log.retention.check.interval.ms", _to_long, 300000, _at_least(1)),
]

_KAFKA_DEF = ConfigDef(KAFKA_CONFIG_KEYS)
_LOG_DEF = ConfigDef(LOG_CONFIG_KEYS)


def _require(condition: bool, message: str) -> None:
    """Scala's ``require``: IllegalArgumentException("requirement failed: ..."), a ValueError here."""
    if not condition:
        raise ValueError(f"requirement failed: {message}")


class _Typed:
    _values: dict[str, Any]

    def get(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise ConfigException.from_message(f"Unknown configuration '{name}'") from None

    __getitem__ = get

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


class KafkaConfig(_Typed):
    """Mirrors kafka.server.KafkaConfig: the broker's typed configuration.

    ``KafkaConfig({"broker.id": 1, "replica.lag.time.max.ms": 10000})``; read values with
    ``config.get("replica.lag.time.max.ms")`` or the snake_case properties for hot keys.
    A key kafka_ref does not define is accepted and kept in ``originals``, as Kafka's broker
    accepts any key (``listeners``, ``log.dirs``, ``zookeeper.connect``... are Kafka keys that
    kafka_ref has no use for); ``not_modelled`` names them and the cluster logs them once
    (``broker_config_not_modelled``), so a misspelt key is visible. ``get`` of such a key
    raises ConfigException "Unknown configuration", as AbstractConfig#get does for a name
    its ConfigDef lacks.
    """

    def __init__(self, props: Mapping[str, Any] | None = None) -> None:
        self.originals = dict(props or {})
        self._values = _KAFKA_DEF.parse(self.populate_synonyms(self.originals))
        self.process_roles = self.parse_process_roles()
        # The supplied names kafka_ref does not define (accepted, unused).
        self.not_modelled = sorted(name for name in self.originals if name not in _KAFKA_DEF.keys)
        # KafkaConfig#logRetentionTimeMillis: log.retention.ms if set, else minutes, else hours
        # (-1 and other negatives mean no time limit).
        self._values["log.retention.ms"] = self.log_retention_time_millis()
        self.validate_values()
        # A broker cannot speak an inter-broker protocol newer than its own code.
        ibp, version = self._values["inter.broker.protocol.version"], self._values["kafka_ref.broker.version"]
        if version < ibp:
            raise ConfigException("inter.broker.protocol.version", str(ibp),
                                  f"The broker runs Kafka {version} code (kafka_ref.broker.version) and cannot use a newer IBP")

    @staticmethod
    def populate_synonyms(props: Mapping[str, Any]) -> dict[str, Any]:
        """Mirrors kafka.server.KafkaConfig$#populateSynonyms: node.id and broker.id stand in for each other.

        1. Only broker.id given: node.id takes its value; 2. only node.id given: broker.id takes it.
        """
        output = dict(props)
        broker_id, node_id = output.get("broker.id"), output.get("node.id")
        # 1.-2. Whichever is missing copies the other.
        if broker_id is None and node_id is not None:
            output["broker.id"] = node_id
        elif broker_id is not None and node_id is None:
            output["node.id"] = broker_id
        return output

    def parse_process_roles(self) -> frozenset[str]:
        """Mirrors KafkaConfig#parseProcessRoles: the roles, each at most once (ConfigException otherwise)."""
        roles = self._values["process.roles"]
        if len(set(roles)) != len(roles):
            raise ConfigException.from_message(f"Duplicate role names found in `process.roles`: {roles}")
        return frozenset(roles)

    def log_retention_time_millis(self) -> int:
        """Mirrors KafkaConfig#logRetentionTimeMillis: ms, else minutes, else hours; any negative is -1."""
        millis = self._values["log.retention.ms"]
        if millis is None:
            minutes = self._values["log.retention.minutes"]
            millis = minutes * 60_000 if minutes is not None else self._values["log.retention.hours"] * 3_600_000
        return -1 if millis < 0 else millis

    def validate_values(self) -> None:
        """Mirrors KafkaConfig#validateValues, for the keys kafka_ref defines.

        1. node.id and broker.id agree; 2. ZooKeeper mode (no process.roles): broker.id in
        [-1, reserved.broker.max.id] with id generation on, else at least 0; KRaft mode:
        node.id set; 3. log retention unlimited (-1) or at least 1 ms; 4. replica.fetch.wait.max.ms
        within replica.socket.timeout.ms and replica.lag.time.max.ms; 5. offsets.commit.required.acks
        between -1 and offsets.topic.replication.factor. Range failures are ValueError (Kafka's
        IllegalArgumentException from ``require``).
        """
        v = self._values
        # 1. One id.
        if v["node.id"] != v["broker.id"]:
            raise ConfigException.from_message("You must set `node.id` to the same value as `broker.id`.")
        # 2. By mode.
        if not self.process_roles:
            if v["broker.id.generation.enable"]:
                _require(-1 <= v["broker.id"] <= v["reserved.broker.max.id"],
                         "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id")
            else:
                _require(v["broker.id"] >= 0, "broker.id must be greater than or equal to 0")
        elif v["node.id"] < 0:
            raise ConfigException.from_message(
                "Missing configuration `node.id` which is required when `process.roles` is defined "
                "(i.e. when running in KRaft mode).")
        # 3. Retention.
        retention = v["log.retention.ms"]
        _require(retention >= 1 or retention == -1, "log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
        # 4. The follower's fetch wait against the socket timeout and the ISR lag bound.
        _require(v["replica.fetch.wait.max.ms"] <= v["replica.socket.timeout.ms"],
                 "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent "
                 "unnecessary socket timeouts")
        _require(v["replica.fetch.wait.max.ms"] <= v["replica.lag.time.max.ms"],
                 "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to "
                 "prevent frequent changes in ISR")
        # 5. The offsets topic's acks.
        _require(-1 <= v["offsets.commit.required.acks"] <= v["offsets.topic.replication.factor"],
                 "offsets.commit.required.acks must be greater or equal -1 and less or equal to "
                 "offsets.topic.replication.factor")

    def copy_with(self, props: Mapping[str, Any]) -> "KafkaConfig":
        merged = dict(self.originals)
        merged.update(props)
        return KafkaConfig(merged)

    @property
    def broker_id(self) -> int:
        return self._values["broker.id"]

    @property
    def inter_broker_protocol_version(self) -> MetadataVersion:
        return self._values["inter.broker.protocol.version"]

    @property
    def broker_version(self) -> MetadataVersion:
        """The Kafka release whose broker code runs (``kafka_ref.broker.version``, default 3.8).

        Rules Kafka changed in its code without an IBP gate (KAFKA-15583's effective min ISR
        and HW rule, the coordinator's load bound) follow this, not the IBP.
        """
        return self._values["kafka_ref.broker.version"]

    @property
    def uses_topic_id(self) -> bool:
        """Mirrors KafkaConfig#usesTopicId: the IBP supports topic ids (2.8 and later)."""
        return self.inter_broker_protocol_version.is_topic_ids_supported()

    @property
    def replica_lag_time_max_ms(self) -> int:
        return self._values["replica.lag.time.max.ms"]

    @property
    def num_replica_fetchers(self) -> int:
        return self._values["num.replica.fetchers"]

    @property
    def offsets_topic_partitions(self) -> int:
        return self._values["offsets.topic.num.partitions"]

    @property
    def is_remote_storage_system_enabled(self) -> bool:
        """RemoteLogManagerConfig#isRemoteStorageSystemEnabled: tiered storage is not modelled, so never."""
        return False

    def log_message_timestamp_before_max_ms(self) -> int:
        """Mirrors KafkaConfig#logMessageTimestampBeforeMaxMs: the broker key when changed from its
        default, else the deprecated log.message.timestamp.difference.max.ms (KIP-937)."""
        before = self._values["log.message.timestamp.before.max.ms"]
        return before if before != LONG_MAX else self._values["log.message.timestamp.difference.max.ms"]

    def log_message_timestamp_after_max_ms(self) -> int:
        """Mirrors KafkaConfig#logMessageTimestampAfterMaxMs (as the before bound, for the future side)."""
        after = self._values["log.message.timestamp.after.max.ms"]
        return after if after != LONG_MAX else self._values["log.message.timestamp.difference.max.ms"]

    def extract_log_config_map(self) -> dict[str, Any]:
        """Mirrors KafkaConfig#extractLogConfigMap: the broker's defaults for topic-level keys.

        1. Each topic key with a broker key takes the broker's value (retention.ms the derived
        one); 2. the timestamp bounds fall back to the deprecated difference bound (KIP-937);
        3. a topic key kafka_ref gives no broker key keeps its LogConfig default.
        """
        out: dict[str, Any] = {}
        for key in LOG_CONFIG_KEYS:
            broker_name = _BROKER_NAME_FOR_TOPIC_KEY.get(key.name)
            # 1. / 3. The broker's value, else the topic default.
            out[key.name] = self._values[broker_name] if broker_name is not None else _LOG_DEF_DEFAULTS[key.name]
        # 2. KIP-937's fallback.
        out["message.timestamp.before.max.ms"] = self.log_message_timestamp_before_max_ms()
        out["message.timestamp.after.max.ms"] = self.log_message_timestamp_after_max_ms()
        return out

    def log_config_defaults(self) -> dict[str, Any]:
        """The broker's defaults for topic-level keys (what an unset topic key falls back to)."""
        return self.extract_log_config_map()


class LogConfig(_Typed):
    """Mirrors org.apache.kafka.storage.internals.log.LogConfig: per-topic overrides on broker defaults.

    As in Kafka, a name LogConfig does not define is ignored here (``validate`` refuses it).
    """

    def __init__(self, overrides: Mapping[str, Any] | None = None, defaults: Mapping[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self.defaults = dict(defaults or {})
        merged = dict(self.defaults)
        merged.update(self.overrides)
        self._values = _LOG_DEF.parse(merged)

    @classmethod
    def from_broker(cls, config: KafkaConfig, overrides: Mapping[str, Any] | None = None) -> "LogConfig":
        return cls(overrides, config.log_config_defaults())

    @property
    def min_in_sync_replicas(self) -> int:
        return self._values["min.insync.replicas"]

    @property
    def unclean_leader_election_enable(self) -> bool:
        return self._values["unclean.leader.election.enable"]

    @property
    def max_message_size(self) -> int:
        return self._values["max.message.bytes"]

    @property
    def compact(self) -> bool:
        """Mirrors LogConfig#compact: cleanup.policy includes "compact"."""
        return "compact" in self._values["cleanup.policy"]

    @property
    def delete(self) -> bool:
        """Mirrors LogConfig#delete: cleanup.policy includes "delete"."""
        return "delete" in self._values["cleanup.policy"]

    @property
    def local_retention_ms(self) -> int:
        """Mirrors LogConfig#localRetentionMs: local.retention.ms, or retention.ms when it is -2."""
        local = self._values["local.retention.ms"]
        return self._values["retention.ms"] if local == DEFAULT_LOCAL_RETENTION else local

    @property
    def local_retention_bytes(self) -> int:
        """Mirrors LogConfig#localRetentionBytes: local.retention.bytes, or retention.bytes when it is -2."""
        local = self._values["local.retention.bytes"]
        return self._values["retention.bytes"] if local == DEFAULT_LOCAL_RETENTION else local

    @staticmethod
    def validate_names(props: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validateNames: every name a topic config (InvalidConfigurationException)."""
        for name in props:
            if name not in _LOG_DEF.keys:
                raise InvalidConfigurationException(f"Unknown topic config name: {name}")

    @staticmethod
    def validate_values(values: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validateValues: min.compaction.lag.ms may not exceed max.compaction.lag.ms."""
        min_lag, max_lag = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
        if min_lag > max_lag:
            raise InvalidConfigurationException(
                f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})")

    @staticmethod
    def validate_topic_log_config_values(values: Mapping[str, Any], is_remote_log_storage_system_enabled: bool) -> None:
        """Mirrors LogConfig#validateTopicLogConfigValues: the value rules, then, for a topic with
        remote.storage.enable, the tiered-storage rules (the broker must have it on; no compaction;
        local retention within retention)."""
        LogConfig.validate_values(values)
        if values["remote.storage.enable"]:
            LogConfig.validate_remote_storage_only_if_system_enabled(values, is_remote_log_storage_system_enabled, False)
            LogConfig.validate_no_remote_storage_for_compacted_topic(values)
            LogConfig.validate_remote_storage_retention_size(values)
            LogConfig.validate_remote_storage_retention_time(values)

    @staticmethod
    def validate_remote_storage_only_if_system_enabled(values: Mapping[str, Any], system_enabled: bool,
                                                       is_receiving_config_from_store: bool) -> None:
        """Mirrors LogConfig#validateRemoteStorageOnlyIfSystemEnabled."""
        if values["remote.storage.enable"] and not system_enabled:
            if is_receiving_config_from_store:
                raise ConfigException.from_message("You have to delete all topics with the property "
                                                   "remote.storage.enable=true before disabling tiered storage cluster-wide")
            raise ConfigException.from_message("Tiered Storage functionality is disabled in the broker. "
                                               "Topic cannot be configured with remote log storage.")

    @staticmethod
    def validate_no_remote_storage_for_compacted_topic(values: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validateNoRemoteStorageForCompactedTopic."""
        if "compact" in ",".join(values["cleanup.policy"]).lower():
            raise ConfigException.from_message("Remote log storage is unsupported for the compacted topics")

    @staticmethod
    def validate_remote_storage_retention_size(values: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validateRemoteStorageRetentionSize: with a size bound, local.retention.bytes
        (unless -2, "derive it") is neither -1 nor more than retention.bytes."""
        retention, local = values["retention.bytes"], values["local.retention.bytes"]
        if retention > -1 and local != DEFAULT_LOCAL_RETENTION:
            if local == -1:
                raise ConfigException("local.retention.bytes", local,
                                      f"Value must not be -1 as retention.bytes value is set as {retention}.")
            if local > retention:
                raise ConfigException("local.retention.bytes", local,
                                      f"Value must not be more than retention.bytes property value: {retention}")

    @staticmethod
    def validate_remote_storage_retention_time(values: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validateRemoteStorageRetentionTime (as the size rule, for retention.ms)."""
        retention, local = values["retention.ms"], values["local.retention.ms"]
        if retention != -1 and local != DEFAULT_LOCAL_RETENTION:
            if local == -1:
                raise ConfigException("local.retention.ms", local,
                                      f"Value must not be -1 as retention.ms value is set as {retention}.")
            if local > retention:
                raise ConfigException("local.retention.ms", local,
                                      f"Value must not be more than retention.ms property value: {retention}")

    @staticmethod
    def validate_broker_log_config_values(values: Mapping[str, Any], is_remote_log_storage_system_enabled: bool) -> None:
        """Mirrors LogConfig#validateBrokerLogConfigValues: the broker's own defaults."""
        LogConfig.validate_values(values)
        if is_remote_log_storage_system_enabled:
            LogConfig.validate_remote_storage_retention_size(values)
            LogConfig.validate_remote_storage_retention_time(values)

    @staticmethod
    def validate(props: Mapping[str, Any], configured_props: Mapping[str, Any] | None = None,
                 is_remote_log_storage_system_enabled: bool = False) -> None:
        """Mirrors LogConfig#validate: the topic overrides ``props`` are valid.

        1. Every name a topic config (InvalidConfigurationException "Unknown topic config name");
        2. without broker defaults: every value parses and passes its validator (ConfigException),
        then validateValues; 3. with the broker's defaults (``configured_props``, what
        KafkaConfig#extractLogConfigMap gives): the overrides on them parse, then
        validateTopicLogConfigValues (tiered-storage rules included).
        """
        # 1. Names.
        LogConfig.validate_names(props)
        # 2. Alone.
        if not configured_props:
            LogConfig.validate_values(_LOG_DEF.parse(props))
            return
        # 3. On the broker's defaults.
        combined = dict(configured_props)
        combined.update(props)
        LogConfig.validate_topic_log_config_values(_LOG_DEF.parse(combined), is_remote_log_storage_system_enabled)


_LOG_DEF_DEFAULTS = {k.name: k.default for k in LOG_CONFIG_KEYS}
