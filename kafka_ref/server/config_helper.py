"""Answers DescribeConfigs for topics and this broker.

Mirrors kafka.server.ConfigHelper#describeConfigs (Kafka 3.7), reading the effective
configuration the broker itself uses: a topic's LogConfig (its overrides on the broker's
defaults, kafka_ref.common.config.LogConfig) and the broker's KafkaConfig. Sources follow
Kafka's: a topic override is TOPIC_CONFIG, a key set in the broker's properties is
STATIC_BROKER_CONFIG, anything else DEFAULT_CONFIG. Dynamic configs, synonyms and documentation
are not modelled (empty synonym lists, null documentation). ``config_type`` is the key's
ConfigDef.Type (kafka_ref.common.config.ConfigKey#type).
"""

from __future__ import annotations

from typing import Any

from kafka_ref.common.config import KAFKA_CONFIG_KEYS, LOG_CONFIG_KEYS, LogConfig
from kafka_ref.common.errors import Errors, InvalidRequestException, InvalidTopicException
from kafka_ref.common.requests.describe_configs import (
    ConfigSource,
    ConfigType,
    DescribeConfigsRequest,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
)
from kafka_ref.image.records import ConfigResourceType
from kafka_ref.zk.admin_zk_client import validate_topic_name


def _as_string(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _config_type(name: str, value: Any) -> ConfigType:
    # The key's ConfigDef.Type when kafka_ref defines it (ConfigHelper#configType), else from the value.
    key_type = _KEY_TYPES.get(name)
    if key_type is not None:
        return ConfigType[key_type]
    if isinstance(value, bool):
        return ConfigType.BOOLEAN
    if isinstance(value, int):
        return ConfigType.LONG if name.endswith((".ms", ".bytes")) or abs(value) > 2**31 - 1 else ConfigType.INT
    if isinstance(value, float):
        return ConfigType.DOUBLE
    if isinstance(value, (list, tuple)):
        return ConfigType.LIST
    return ConfigType.STRING


_KEY_TYPES = {k.name: k.type for k in (*KAFKA_CONFIG_KEYS, *LOG_CONFIG_KEYS)}


def _entries(values: dict[str, Any], explicit: set[str], explicit_source: ConfigSource,
             keys: tuple[str, ...] | None) -> tuple[DescribeConfigsResourceResult, ...]:
    names = sorted(values) if keys is None else [k for k in keys if k in values]
    return tuple(
        DescribeConfigsResourceResult(
            name=name, value=_as_string(values[name]), read_only=False,
            config_source=(explicit_source if name in explicit else ConfigSource.DEFAULT_CONFIG),
            is_sensitive=False, config_type=_config_type(name, values[name]), documentation=None)
        for name in names)


def describe_entries(config: Any) -> tuple[DescribeConfigsResourceResult, ...]:
    """Every entry of a topic's LogConfig, its overrides as TOPIC_CONFIG (ConfigHelper#allConfigs with createTopicConfigEntry)."""
    return _entries(dict(config._values), set(config.overrides), ConfigSource.TOPIC_CONFIG, None)


# ConfigResource.Type.BROKER_LOGGER: authorized as a cluster resource; kafka_ref has no loggers to describe.
BROKER_LOGGER = 8


def handle_describe_configs_request(broker: Any, request: DescribeConfigsRequest, authorizer: Any,
                                    principal: str) -> DescribeConfigsResponse:
    """Mirrors kafka.server.ConfigHelper#handleDescribeConfigsRequest.

    1. A broker or broker-logger resource needs DESCRIBE_CONFIGS on the cluster
    (CLUSTER_AUTHORIZATION_FAILED), a topic DESCRIBE_CONFIGS on the topic
    (TOPIC_AUTHORIZATION_FAILED), each refused one with the error's message and no configs; any
    other resource type fails the request (INVALID_REQUEST); 2. the authorized resources are
    described (``describe_configs``) and listed first.
    """
    # 1. Authorization by resource type.
    authorized, refused = [], []
    for resource in request.resources:
        rtype = resource.resource_type
        if rtype in (ConfigResourceType.BROKER, BROKER_LOGGER):
            allowed, error = authorizer.authorize_cluster(principal, "DESCRIBE_CONFIGS"), Errors.CLUSTER_AUTHORIZATION_FAILED
        elif rtype == ConfigResourceType.TOPIC:
            allowed = authorizer.authorize_topic(principal, "DESCRIBE_CONFIGS", resource.resource_name)
            error = Errors.TOPIC_AUTHORIZATION_FAILED
        else:
            raise InvalidRequestException(f"Unexpected resource type {rtype} for resource {resource.resource_name}")
        if allowed:
            authorized.append(resource)
        else:
            refused.append(DescribeConfigsResult(error_code=error.code, error_message=error.message, resource_type=rtype,
                                                 resource_name=resource.resource_name, configs=()))
    # 2. The others, described.
    described = describe_configs(broker, DescribeConfigsRequest(resources=tuple(authorized))).results if authorized else ()
    return DescribeConfigsResponse(results=tuple(described) + tuple(refused))


def describe_configs(broker: Any, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    """Mirrors kafka.server.ConfigHelper#describeConfigs: one result per resource asked for.

    1. A topic: INVALID_TOPIC_EXCEPTION for a name no topic can have (Topic#validate),
       UNKNOWN_TOPIC_OR_PARTITION unless the metadata cache knows it, else its LogConfig; 2. a
       broker: only this broker's id (or "" for the cluster default) is answered here,
       anything else INVALID_REQUEST; 3. other resource types INVALID_REQUEST.
    """
    results = []
    for resource in request.resources:
        rtype, name = resource.resource_type, resource.resource_name
        error, message, configs = Errors.NONE, None, ()
        # 1. Topics.
        if rtype == ConfigResourceType.TOPIC:
            try:
                validate_topic_name(name)
                invalid = None
            except InvalidTopicException as exc:
                invalid = exc
            if invalid is not None:
                error, message = Errors.INVALID_TOPIC_EXCEPTION, str(invalid)
            elif not broker.metadata_cache.contains_topic(name):
                error, message = Errors.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist"
            else:
                # The topic's overrides from the config repository (ZooKeeper: read from the znode, so
                # a broker without a replica of the topic answers too), over this broker's defaults.
                repository = broker.log_manager.config_repository
                overrides = repository.topic_config(name) if repository is not None else None
                config = (LogConfig.from_broker(broker.config, overrides) if overrides is not None
                          else broker.log_manager.fetch_log_config(name))
                configs = _entries(dict(config._values), set(config.overrides), ConfigSource.TOPIC_CONFIG,
                                   resource.configuration_keys)
        # 2. This broker.
        elif rtype == ConfigResourceType.BROKER:
            if name not in ("", str(broker.broker_id)):
                error = Errors.INVALID_REQUEST
                message = f"Unexpected broker id, expected {broker.broker_id} or empty string, but received {name}"
            else:
                config = broker.config
                configs = _entries(dict(config._values), set(config.originals), ConfigSource.STATIC_BROKER_CONFIG,
                                   resource.configuration_keys)
        # 3. Anything else.
        else:
            error, message = Errors.INVALID_REQUEST, f"Unsupported resource type {rtype}"
        results.append(DescribeConfigsResult(error_code=error.code, error_message=message, resource_type=rtype,
                                             resource_name=name, configs=configs))
    return DescribeConfigsResponse(results=tuple(results))
