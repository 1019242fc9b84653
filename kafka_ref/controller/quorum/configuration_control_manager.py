"""The controller's configuration, feature and producer-id state.

Mirrors org.apache.kafka.controller.ConfigurationControlManager, FeatureControlManager and
ProducerIdControlManager (Kafka 3.4), as far as topic creation, unclean election, the
metadata.version bootstrap and producer-id blocks need them.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from kafka_ref.common.config import KafkaConfig, LogConfig
from kafka_ref.common.errors import (
    ApiException,
    ConfigException,
    InvalidConfigurationException,
    InvalidRequestException,
    UnknownServerException,
)
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.incremental_alter_configs import OpType
from kafka_ref.image.records import (
    ConfigRecord,
    ConfigResource,
    ConfigResourceType,
    FeatureLevelRecord,
    ProducerIdsRecord,
)

METADATA_VERSION_FEATURE = "metadata.version"
# metadata.version feature levels of the last IV of each release (MetadataVersion#featureLevel).
_FEATURE_LEVELS = {(3, 0): 1, (3, 1): 2, (3, 2): 3, (3, 3): 7, (3, 4): 8, (3, 5): 11, (3, 6): 14, (3, 7): 19, (3, 8): 20}
PRODUCER_ID_BLOCK_SIZE = 1000


def metadata_version_feature_level(ibp: MetadataVersion) -> int:
    """The metadata.version feature level for an inter.broker.protocol.version (KRaft needs 3.0+)."""
    major_minor = ibp.release[:2]
    if major_minor < (3, 0):
        raise ConfigException("inter.broker.protocol.version", str(ibp), "KRaft mode needs metadata.version 3.0 or later")
    return _FEATURE_LEVELS.get(major_minor, max(_FEATURE_LEVELS.values()))


class FeatureControlManager:
    """Mirrors org.apache.kafka.controller.FeatureControlManager: finalized features, metadata.version first.

    The era switches KRaft code asks about are read from the metadata.version the log holds
    (bootstrapped from ``inter.broker.protocol.version``).
    """

    def __init__(self, ibp: MetadataVersion) -> None:
        self.bootstrap_level = metadata_version_feature_level(ibp)
        self.finalized_versions: dict[str, int] = {}

    def bootstrap_records(self) -> list[FeatureLevelRecord]:
        """Mirrors BootstrapMetadata#records: the metadata.version the new cluster starts at."""
        return [FeatureLevelRecord(name=METADATA_VERSION_FEATURE, feature_level=self.bootstrap_level)]

    def replay(self, record: FeatureLevelRecord) -> None:
        """Mirrors FeatureControlManager#replay(FeatureLevelRecord)."""
        if record.feature_level == 0:
            self.finalized_versions.pop(record.name, None)
        else:
            self.finalized_versions[record.name] = record.feature_level

    @property
    def metadata_version_level(self) -> int:
        """Mirrors FeatureControlManager#metadataVersion (as a feature level)."""
        return self.finalized_versions.get(METADATA_VERSION_FEATURE, self.bootstrap_level)

    def finalized_features(self) -> dict[str, int]:
        """Mirrors FeatureControlManager#finalizedFeatures: every finalized feature level, metadata.version included."""
        return {**self.finalized_versions, METADATA_VERSION_FEATURE: self.metadata_version_level}

    # MetadataVersion#is*Supported switches, by feature level.
    def is_leader_recovery_supported(self) -> bool:
        """Mirrors MetadataVersion#isLeaderRecoverySupported (3.2-IV0)."""
        return self.metadata_version_level >= 3  # 3.2-IV0

    def is_broker_registration_change_record_supported(self) -> bool:
        """Mirrors MetadataVersion#isBrokerRegistrationChangeRecordSupported (3.3-IV2)."""
        return self.metadata_version_level >= 6  # 3.3-IV2

    def is_in_controlled_shutdown_state_supported(self) -> bool:
        """Mirrors MetadataVersion#isInControlledShutdownStateSupported (3.3-IV3)."""
        return self.metadata_version_level >= 7  # 3.3-IV3

    def is_leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        """Mirrors MetadataVersion#isLeaderEpochBumpRequiredOnIsrShrink (before 3.6-IV0)."""
        return self.metadata_version_level < 12  # before 3.6-IV0 (KAFKA-15021)


class ConfigurationControlManager:
    """Mirrors org.apache.kafka.controller.ConfigurationControlManager: dynamic configs by resource."""

    def __init__(self, static_config: KafkaConfig, *, empty_config_schema: bool = False) -> None:
        self.static_config = static_config
        # Builder#setKafkaConfigSchema: the real schema describes every topic config; Kafka's unit
        # tests leave KafkaConfigSchema.EMPTY, which describes none.
        self.empty_config_schema = empty_config_schema
        self.config_data: dict[ConfigResource, dict[str, str]] = {}

    def validate_alter_config(self, resource: ConfigResource, all_configs: Mapping[str, str],
                              existence_checker: Callable[[ConfigResource], None] | None = None) -> Exception | None:
        """Mirrors ConfigurationControlManager#validateAlterConfig with
        kafka.server.ControllerConfigurationValidator#validate for a topic.

        1. A topic's resulting configs validate on the broker's defaults (LogConfig#validate with
        KafkaConfig#extractLogConfigMap); 2. then the resource must exist (``existence_checker``,
        QuorumController's ConfigResourceExistenceChecker; None for a resource being created), so
        a bad config on a missing topic is INVALID_CONFIG; 3. a ConfigException is INVALID_CONFIG
        with its text, another ApiException (an unknown name's InvalidConfigurationException, the
        checker's UnknownTopicOrPartitionException) its own error. Returns the error, or None.
        """
        try:
            # 1. On the static broker defaults.
            if resource.type is ConfigResourceType.TOPIC:
                LogConfig.validate(dict(all_configs), self.static_config.extract_log_config_map(),
                                   self.static_config.is_remote_storage_system_enabled)
            # 2. An existing resource.
            if existence_checker is not None:
                existence_checker(resource)
        except ConfigException as exc:
            # 3. Kafka answers ApiError(INVALID_CONFIG, e.getMessage()).
            return InvalidConfigurationException(str(exc))
        except ApiException as exc:
            # 3. Its own error.
            return exc
        return None

    def incremental_alter_configs(
        self, changes: Mapping[ConfigResource, Mapping[str, str]]
    ) -> tuple[list[ConfigRecord], dict[ConfigResource, Exception]]:
        """Mirrors ConfigurationControlManager#incrementalAlterConfigs (SET operations only).

        Topic keys are validated like LogConfig#validate; a bad key or value fails that
        resource with INVALID_CONFIG and writes nothing for it.
        """
        records: list[ConfigRecord] = []
        errors: dict[ConfigResource, Exception] = {}
        for resource, keys in changes.items():
            # 1. Validate the resulting topic configuration.
            error = self.validate_alter_config(resource, {**self.config_data.get(resource, {}), **keys})
            if error is not None:
                errors[resource] = error
                continue
            # 2. One ConfigRecord per key.
            for name, value in keys.items():
                records.append(ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=name, value=value))
        return records, errors

    def incremental_alter_config_resource(
        self, resource: ConfigResource, ops: Sequence[tuple[str, int, str | None]],
        existence_checker: Callable[[ConfigResource], None] | None = None,
    ) -> tuple[list[ConfigRecord], Exception | None]:
        """Mirrors ConfigurationControlManager#incrementalAlterConfigResource: one resource's operations.

        1. Each (key, op, value) against the key's current value: SET, DELETE (a null value),
        APPEND / SUBTRACT on list keys only (INVALID_CONFIG otherwise), APPEND starting from the
        default when the key is unset; 2. a ConfigRecord only for a key whose value changes;
        3. the resulting topic config must validate (INVALID_CONFIG), then the resource must exist
        (validateAlterConfig with ``existence_checker``), else nothing is written.
        """
        from kafka_ref.server.config_admin import LIST_TOPIC_KEYS, topic_key_default

        current = self.config_data.get(resource, {})
        records: list[ConfigRecord] = []
        result = dict(current)
        for name, op, value in ops:
            old = current.get(name)
            new = old
            # 1. The operation.
            if op == OpType.SET:
                new = value
            elif op == OpType.DELETE:
                new = None
            elif op in (OpType.APPEND, OpType.SUBTRACT):
                verb = OpType(op).name
                if name not in LIST_TOPIC_KEYS:
                    return [], InvalidConfigurationException(f"Can't {verb} to key {name} because its type is not LIST.")
                base = new if new is not None else topic_key_default(name)
                parts = [v for v in (base or "").split(",") if v]
                items = [v for v in (value or "").split(",") if v]
                parts = parts + [v for v in items if v not in parts] if op == OpType.APPEND else [v for v in parts if v not in items]
                new = ",".join(parts)
            else:
                return [], InvalidRequestException(f"Unknown config operation {op} for key {name}.")
            # 2. A record only for a change.
            if new != old:
                records.append(ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=name, value=new))
            if new is None:
                result.pop(name, None)
            else:
                result[name] = new
        # 3. The topic's resulting config must be valid, and the topic must exist.
        error = self.validate_alter_config(resource, result, existence_checker)
        if error is not None:
            return [], error
        return records, None

    def legacy_alter_config_resource(
        self, resource: ConfigResource, new_configs: Mapping[str, str],
        existence_checker: Callable[[ConfigResource], None] | None = None,
    ) -> tuple[list[ConfigRecord], Exception | None]:
        """Mirrors ConfigurationControlManager#legacyAlterConfigResource: ``new_configs`` becomes the whole override set.

        1. A ConfigRecord for each named key whose value changes; 2. a deleting ConfigRecord (null
        value) for each current key not named; 3. the resulting topic config must validate
        (INVALID_CONFIG) and the resource exist (``existence_checker``), else nothing is written.
        """
        current = self.config_data.get(resource, {})
        # 1. Keys set to a new value.
        altered = [ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=name, value=value)
                   for name, value in new_configs.items() if current.get(name) != value]
        # 2. Keys left out go back to their defaults.
        deleted = [ConfigRecord(resource_type=int(resource.type), resource_name=resource.name, name=name, value=None)
                   for name in current if name not in new_configs]
        # 3. Validation of the result, then existence.
        error = self.validate_alter_config(resource, dict(new_configs), existence_checker)
        if error is not None:
            return [], error
        return altered + deleted, None

    def replay(self, record: ConfigRecord) -> None:
        """Mirrors ConfigurationControlManager#replay(ConfigRecord)."""
        resource = ConfigResource(ConfigResourceType(record.resource_type), record.resource_name)
        keys = self.config_data.setdefault(resource, {})
        if record.value is None:
            keys.pop(record.name, None)
        else:
            keys[record.name] = record.value
        if not keys:
            del self.config_data[resource]

    def delete_topic_configs(self, name: str) -> None:
        """Mirrors ConfigurationControlManager#deleteTopicConfigs."""
        self.config_data.pop(ConfigResource(ConfigResourceType.TOPIC, name), None)

    def compute_effective_topic_configs(self, creation_configs: Mapping[str, str]) -> tuple[Any, ...]:
        """Mirrors ConfigurationControlManager#computeEffectiveTopicConfigs: a new topic's every config, by name.

        1. The controller's static config supplies the defaults, the creation configs override
        them (as TOPIC_CONFIG); 2. the entries come back sorted by name, as
        ReplicationControlManager#createTopic lists them in the CreateTopics answer.
        """
        from kafka_ref.server.config_helper import describe_entries

        # 1. Defaults and overrides (KafkaConfigSchema.EMPTY knows no config).
        if self.empty_config_schema:
            return ()
        config = LogConfig.from_broker(self.static_config, dict(creation_configs))
        # 2. Sorted by name.
        return tuple(sorted(describe_entries(config), key=lambda e: e.name))

    def topic_configs(self, name: str) -> dict[str, str]:
        """Mirrors ConfigurationControlManager#currentTopicConfig."""
        return dict(self.config_data.get(ConfigResource(ConfigResourceType.TOPIC, name), {}))

    def unclean_leader_election_enabled_for_topic(self, name: str) -> bool:
        """Mirrors ConfigurationControlManager#uncleanLeaderElectionEnabledForTopic: topic key, else the static default."""
        value = self.topic_configs(name).get("unclean.leader.election.enable")
        if value is not None:
            return LogConfig({"unclean.leader.election.enable": value}).unclean_leader_election_enable
        return bool(self.static_config.get("unclean.leader.election.enable"))


class ProducerIdControlManager:
    """Mirrors org.apache.kafka.controller.ProducerIdControlManager: blocks of producer ids for brokers."""

    def __init__(self, cluster_control: object) -> None:
        self.cluster_control = cluster_control
        self.next_producer_id = 0

    def generate_next_producer_id(self, broker_id: int, broker_epoch: int) -> tuple[list[ProducerIdsRecord], tuple[int, int]]:
        """Mirrors ProducerIdControlManager#generateNextProducerId; returns (records, (first id, block size))."""
        # 1. Only a registered broker at its current epoch gets a block.
        self.cluster_control.check_broker_epoch(broker_id, broker_epoch)  # type: ignore[attr-defined]
        first = self.next_producer_id
        if first > 2**63 - 1 - PRODUCER_ID_BLOCK_SIZE:
            raise UnknownServerException("Exhausted all producerIds as the next block's end producerId would exceed the long range")
        # 2. The record moves the next free id past this block.
        record = ProducerIdsRecord(broker_id=broker_id, broker_epoch=broker_epoch, next_producer_id=first + PRODUCER_ID_BLOCK_SIZE)
        return [record], (first, PRODUCER_ID_BLOCK_SIZE)

    def replay(self, record: ProducerIdsRecord) -> None:
        """Mirrors ProducerIdControlManager#replay."""
        self.next_producer_id = record.next_producer_id
