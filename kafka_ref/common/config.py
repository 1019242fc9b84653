"""Broker and topic configuration with Kafka's dotted names and defaults.

Mirrors kafka.server.KafkaConfig, org.apache.kafka.common.config.ConfigDef and
org.apache.kafka.storage.internals.log.LogConfig: a table of typed keys with defaults and
validators. An unknown key or a value of the wrong type or range raises ``ConfigException``
naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, total_ordering
from typing import Any, Callable, Iterable, Mapping

from kafka_ref.common.errors import ConfigException


@total_ordering
@dataclass(frozen=True, slots=True)
class MetadataVersion:
    """Mirrors org.apache.kafka.server.common.MetadataVersion (the IBP part of it).

    ``inter.broker.protocol.version`` selects Kafka-era behaviour (docs/DESIGN.md §1.9). Accepts
    ``"0.10.2"``, ``"0.11.0"``, ``"2.0"``, ``"2.7-IV2"``, ``"3.8"``; compares by release.
    """

    release: tuple[int, ...]
    text: str
    # Answers of ``is_at_least`` by version text. Why it exists: era switches are read on every
    # append, fetch and HW check; each version text is compared once per MetadataVersion.
    _at_least: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Era switches used across the replication code (docs/DESIGN.md §1.9), plain attributes set
    # once when the version is made (they are read on every append, fetch and HW check):
    # KIP-101 (0.11): followers ask OffsetsForLeaderEpoch instead of truncating to HW.
    uses_leader_epoch_for_truncation: bool = field(init=False, repr=False, compare=False)
    # KIP-279 (2.0): OffsetsForLeaderEpoch answers carry the epoch; multi-round truncation.
    uses_kip279_truncation: bool = field(init=False, repr=False, compare=False)
    # KIP-320/595 (2.7): the fetch response's diverging epoch drives truncation.
    truncates_on_fetch: bool = field(init=False, repr=False, compare=False)
    # KAFKA-15583 (broker 3.7.0): the leader does not advance HW while the ISR is below the
    # effective min ISR. A rule of the broker's code, not of the IBP: read it from
    # ``KafkaConfig.broker_version``.
    no_hw_advance_below_min_isr: bool = field(init=False, repr=False, compare=False)
    # KAFKA-15583 (broker 3.7.0): Partition#effectiveMinIsr is min.insync.replicas capped at the
    # number of replicas. A rule of the broker's code: read it from ``broker_version``.
    caps_min_isr_at_replica_count: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, since in _ERA_SWITCHES:
            object.__setattr__(self, name, self.release >= since)

    @classmethod
    def parse(cls, text: str) -> "MetadataVersion":
        base = str(text).split("-", 1)[0]
        parts = base.split(".")
        if not 2 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"not an inter.broker.protocol.version: {text!r}")
        nums = tuple(int(p) for p in parts)
        if nums[0] == 0 and len(nums) == 2:
            raise ValueError(f"0.x versions need three parts, got {text!r}")
        # 0.x.y releases carry three parts, 1.x and later two: pad to three to compare.
        release = nums if nums[0] == 0 else (nums[0], nums[1], 0)
        return cls(release, str(text))

    def is_at_least(self, other: "str | MetadataVersion") -> bool:
        if isinstance(other, MetadataVersion):
            return self.release >= other.release
        answer = self._at_least.get(other)
        if answer is None:
            answer = self._at_least[other] = self.release >= _parse_cached(other).release
        return answer

    def __lt__(self, other: "MetadataVersion") -> bool:
        return self.release < other.release

    def is_topic_ids_supported(self) -> bool:
        """Mirrors MetadataVersion#isTopicIdsSupported: topics carry ids from IBP 2.8 (KIP-516)."""
        return self.is_at_least("2.8")

    def fetch_request_version(self) -> int:
        """Mirrors MetadataVersion#fetchRequestVersion: the Fetch version a follower sends at this
        IBP (by release; the IV steps within 3.5 are not told apart). Topic ids from 13 (3.1)."""
        for release, version in _FETCH_REQUEST_VERSIONS:
            if self.is_at_least(release):
                return version
        return 1

    def __str__(self) -> str:
        return self.text


_parse_cached = lru_cache(maxsize=64)(MetadataVersion.parse)
# Each era switch and the release (as ``parse`` pads it) it starts at.
_ERA_SWITCHES = (
    ("uses_leader_epoch_for_truncation", (0, 11, 0)),
    ("uses_kip279_truncation", (2, 0, 0)),
    ("truncates_on_fetch", (2, 7, 0)),
    ("no_hw_advance_below_min_isr", (3, 7, 0)),
    ("caps_min_isr_at_replica_count", (3, 7, 0)),
)

# MetadataVersion#fetchRequestVersion's table, newest first.
_FETCH_REQUEST_VERSIONS = (("3.7", 16), ("3.5", 15), ("3.1", 13), ("2.7", 12), ("2.3", 11), ("2.1", 10),
                           ("2.0", 8), ("1.1", 7), ("0.11.0", 5), ("0.10.1", 3), ("0.10.0", 2))

LATEST_IBP = "3.8"
# The Kafka release whose broker code kafka_ref runs unless ``kafka_ref.broker.version`` says otherwise.
LATEST_BROKER_VERSION = "3.8"


def _to_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigException(name, value, "Expected value to be a 32-bit integer, but it was a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ConfigException(name, value, "Expected value to be an integer")


def _to_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ConfigException(name, value, "Expected value to be either true or false")


def _to_str(name: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ConfigException(name, value, "Expected value to be a string")


def _to_ibp(name: str, value: Any) -> MetadataVersion:
    try:
        return MetadataVersion.parse(str(value))
    except ValueError as exc:
        raise ConfigException(name, value, str(exc)) from None


def _at_least(minimum: int) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")

    return check


def _one_of(*choices: str) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value not in choices:
            raise ConfigException(name, value, f"String must be one of: {', '.join(choices)}")

    return check


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """Mirrors org.apache.kafka.common.config.ConfigDef.ConfigKey (name, type, default, validator)."""

    name: str
    convert: Callable[[str, Any], Any]
    default: Any
    validator: Callable[[str, Any], None] | None = None
    doc: str = ""


class ConfigDef:
    """Mirrors org.apache.kafka.common.config.ConfigDef: parse a mapping against typed keys."""

    def __init__(self, keys: Iterable[ConfigKey]) -> None:
        self.keys = {k.name: k for k in keys}

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        # 1. Reject keys this definition does not know.
        for name in props:
            if name not in self.keys:
                raise ConfigException(name, props[name], "Unknown configuration")
        values: dict[str, Any] = {}
        # 2. Convert each supplied value (or the default) and validate it.
        for name, key in self.keys.items():
            raw = props.get(name, key.default)
            value = key.convert(name, raw) if raw is not None else None
            if key.validator is not None and value is not None:
                key.validator(name, value)
            values[name] = value
        return values


def _k(name, convert, default, validator=None, doc=""):
    return ConfigKey(name, convert, default, validator, doc)


# Topic-level keys (LogConfig). Broker keys of the same meaning carry these as defaults.
LOG_CONFIG_KEYS = [
    _k("min.insync.replicas", _to_int, 1, _at_least(1), "Acks=all needs this many ISR members."),
    _k("unclean.leader.election.enable", _to_bool, False, None, "Allow an out-of-sync replica to lead."),
    _k("max.message.bytes", _to_int, 1048588, _at_least(0), "Largest record batch the log accepts."),
    _k("retention.ms", _to_int, 604800000, _at_least(-1)),
    _k("retention.bytes", _to_int, -1),
    _k("segment.bytes", _to_int, 1073741824, _at_least(14)),
    _k("cleanup.policy", _to_str, "delete", _one_of("delete", "compact", "compact,delete", "delete,compact")),
    _k("message.timestamp.type", _to_str, "CreateTime", _one_of("CreateTime", "LogAppendTime")),
    _k("message.timestamp.difference.max.ms", _to_int, 2**63 - 1, _at_least(0)),
    _k("message.timestamp.before.max.ms", _to_int, 2**63 - 1, _at_least(0)),
    _k("message.timestamp.after.max.ms", _to_int, 2**63 - 1, _at_least(0)),
    _k("compression.type", _to_str, "producer", _one_of("producer", "none", "gzip", "snappy", "lz4", "zstd", "uncompressed")),
]

# Broker-level names of topic-level keys (KafkaConfig's names differ for some).
_BROKER_NAME_FOR_TOPIC_KEY = {
    "max.message.bytes": "message.max.bytes",
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "segment.bytes": "log.segment.bytes",
    "cleanup.policy": "log.cleanup.policy",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
}

KAFKA_CONFIG_KEYS = [
    _k("broker.id", _to_int, -1, _at_least(-1)),
    _k("node.id", _to_int, -1, _at_least(-1)),
    _k("process.roles", _to_str, ""),
    _k("log.dir", _to_str, "/tmp/kafka-logs"),
    _k("inter.broker.protocol.version", _to_ibp, LATEST_IBP),
    # Not a Kafka key: Kafka's code-level rules come with its binary, so kafka_ref needs a switch
    # for "which release's broker code runs" beside the IBP (which only chooses wire formats and
    # the rules Kafka itself gates on the IBP). It may not be older than the IBP.
    _k("kafka_ref.broker.version", _to_ibp, LATEST_BROKER_VERSION, None,
       "The Kafka release whose broker code runs (kafka_ref's switch for code-version rules)."),
    # Replication (seed 004 §2.3; defaults from Kafka 3.x).
    _k("replica.lag.time.max.ms", _to_int, 30000, _at_least(1)),
    _k("replica.fetch.max.bytes", _to_int, 1048576, _at_least(0)),
    _k("replica.fetch.response.max.bytes", _to_int, 10485760, _at_least(0)),
    _k("replica.fetch.min.bytes", _to_int, 1, _at_least(1)),
    _k("replica.fetch.wait.max.ms", _to_int, 500, _at_least(0)),
    _k("replica.fetch.backoff.ms", _to_int, 1000, _at_least(0)),
    _k("replica.socket.timeout.ms", _to_int, 30000),
    _k("replica.high.watermark.checkpoint.interval.ms", _to_int, 5000, _at_least(1)),
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
    _k("leader.imbalance.check.interval.seconds", _to_int, 300, _at_least(1)),
    _k("leader.imbalance.per.broker.percentage", _to_int, 10, _at_least(0)),
    _k("controlled.shutdown.enable", _to_bool, True),
    _k("controlled.shutdown.max.retries", _to_int, 3),
    _k("controlled.shutdown.retry.backoff.ms", _to_int, 5000),
    # KRaft.
    _k("broker.session.timeout.ms", _to_int, 9000, _at_least(1)),
    _k("broker.heartbeat.interval.ms", _to_int, 2000, _at_least(1)),
    # KRaft's Raft client (RaftConfig, KIP-595).
    _k("controller.quorum.election.timeout.ms", _to_int, 1000, _at_least(1)),
    _k("controller.quorum.fetch.timeout.ms", _to_int, 2000, _at_least(1)),
    _k("controller.quorum.election.backoff.max.ms", _to_int, 1000, _at_least(1)),
    _k("controller.quorum.request.timeout.ms", _to_int, 2000, _at_least(1)),
    _k("controller.quorum.retry.backoff.ms", _to_int, 20, _at_least(0)),
    # Group coordinator (seed 000).
    _k("offsets.topic.num.partitions", _to_int, 50, _at_least(1)),
    _k("offsets.topic.replication.factor", _to_int, 3, _at_least(1)),
    _k("offsets.load.buffer.size", _to_int, 5242880, _at_least(1)),
    _k("offsets.commit.timeout.ms", _to_int, 5000, _at_least(1)),
    _k("offsets.commit.required.acks", _to_int, -1),
    _k("offsets.retention.minutes", _to_int, 10080, _at_least(1)),
    _k("offsets.retention.check.interval.ms", _to_int, 600000, _at_least(1)),
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
    ConfigKey(_BROKER_NAME_FOR_TOPIC_KEY.get(k.name, k.name), k.convert, k.default, k.validator, k.doc)
    for k in LOG_CONFIG_KEYS
] + [
    _k("log.retention.hours", _to_int, 168),
    # Unset by default: log.retention.ms, else log.retention.minutes, else log.retention.hours
    # decides (KafkaConfig#logRetentionTimeMillis).
    _k("log.retention.minutes", _to_int, None),
    _k("log.retention.check.interval.ms", _to_int, 300000, _at_least(1)),
]

_KAFKA_DEF = ConfigDef(KAFKA_CONFIG_KEYS)
_LOG_DEF = ConfigDef(LOG_CONFIG_KEYS)


class _Typed:
    _values: dict[str, Any]

    def get(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise ConfigException(name, None, "Unknown configuration") from None

    __getitem__ = get

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


class KafkaConfig(_Typed):
    """Mirrors kafka.server.KafkaConfig: the broker's typed configuration.

    ``KafkaConfig({"broker.id": 1, "replica.lag.time.max.ms": 10000})``; read values with
    ``config.get("replica.lag.time.max.ms")`` or the snake_case properties for hot keys.
    """

    def __init__(self, props: Mapping[str, Any] | None = None) -> None:
        self.originals = dict(props or {})
        self._values = _KAFKA_DEF.parse(self.originals)
        # KafkaConfig#logRetentionTimeMillis: log.retention.ms if set, else minutes, else hours
        # (-1 and other negatives mean no time limit).
        if "log.retention.ms" not in self.originals:
            minutes = self._values["log.retention.minutes"]
            self._values["log.retention.ms"] = (minutes * 60_000 if minutes is not None
                                                else self._values["log.retention.hours"] * 3_600_000)
        # A broker cannot speak an inter-broker protocol newer than its own code.
        ibp, version = self._values["inter.broker.protocol.version"], self._values["kafka_ref.broker.version"]
        if version < ibp:
            raise ConfigException("inter.broker.protocol.version", str(ibp),
                                  f"The broker runs Kafka {version} code (kafka_ref.broker.version) and cannot use a newer IBP")

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

    def log_config_defaults(self) -> dict[str, Any]:
        """The broker's defaults for topic-level keys (what an unset topic key falls back to)."""
        return {k.name: self._values[_BROKER_NAME_FOR_TOPIC_KEY.get(k.name, k.name)] for k in LOG_CONFIG_KEYS}


class LogConfig(_Typed):
    """Mirrors org.apache.kafka.storage.internals.log.LogConfig: per-topic overrides on broker defaults."""

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

    @staticmethod
    def validate(overrides: Mapping[str, Any]) -> None:
        """Mirrors LogConfig#validate: raise ConfigException for an unknown key or bad value."""
        _LOG_DEF.parse(overrides)
