"""IncrementalAlterConfigs on a broker: request checks and the SET/DELETE/APPEND/SUBTRACT rules.

Mirrors kafka.server.ConfigAdminManager (the checks every broker makes before the change:
resource types, duplicates, authorization) and ZkAdminManager#prepareIncrementalConfigs /
#incrementalAlterConfigs (ZooKeeper mode: the broker that got the request writes
/config/topics/<topic> and a change notification; every broker's ZkConfigManager then reloads
the topic's config). KRaft mode uses the same checks on the controller
(QuorumController#incrementalAlterConfigs) and the same operation rules
(ConfigurationControlManager#incrementalAlterConfigResource), then writes ConfigRecords.

Only topic resources are modelled: a BROKER resource (dynamic broker configs) is answered
INVALID_REQUEST with a message saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kafka_ref.common.config import LOG_CONFIG_KEYS
from kafka_ref.common.errors import (
    ApiException,
    ConfigException,
    Errors,
    InvalidConfigurationException,
    InvalidRequestException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    OpType,
)
from kafka_ref.image.records import ConfigResourceType
from kafka_ref.zk.zk_data import ConfigType

# Topic keys of ConfigDef.Type.LIST (APPEND/SUBTRACT apply only to these).
LIST_TOPIC_KEYS = frozenset(k.name for k in LOG_CONFIG_KEYS if k.type == "LIST")
_DEFAULTS = {k.name: k.default for k in LOG_CONFIG_KEYS}


def topic_key_default(name: str) -> str:
    """A topic key's default as a config string (ConfigDef#convertToString)."""
    value = _DEFAULTS[name]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


def _response(resource: AlterConfigsResource, error: Errors, message: str | None = None) -> AlterConfigsResourceResponse:
    return AlterConfigsResourceResponse(error_code=error.code, error_message=message,
                                        resource_type=resource.resource_type, resource_name=resource.resource_name)


def preprocess(request: IncrementalAlterConfigsRequest,
               authorize: Callable[[int, str], bool]) -> dict[tuple[int, str], AlterConfigsResourceResponse]:
    """Mirrors kafka.server.ConfigAdminManager#preprocess (IncrementalAlterConfigs): the answers decided up front.

    1. A resource named twice: INVALID_REQUEST for it; 2. an unknown resource type:
    INVALID_REQUEST; 3. a config key named twice in one resource, or a null value for an
    operation other than DELETE: INVALID_REQUEST;
    4. not authorized (ALTER_CONFIGS): TOPIC_AUTHORIZATION_FAILED or CLUSTER_AUTHORIZATION_FAILED;
    5. a broker resource: INVALID_REQUEST (dynamic broker configs are not modelled). The
    resources left out of the result go on to the change itself.
    """
    answers: dict[tuple[int, str], AlterConfigsResourceResponse] = {}
    seen: dict[tuple[int, str], int] = {}
    for resource in request.resources:
        key = (resource.resource_type, resource.resource_name)
        seen[key] = seen.get(key, 0) + 1
    for resource in request.resources:
        key = (resource.resource_type, resource.resource_name)
        if key in answers:
            continue
        # 1. Each resource at most once.
        if seen[key] > 1:
            answers[key] = _response(resource, Errors.INVALID_REQUEST, "Each resource must appear at most once.")
            continue
        # 2. Known resource types only.
        if resource.resource_type not in (ConfigResourceType.TOPIC, ConfigResourceType.BROKER):
            answers[key] = _response(resource, Errors.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}")
            continue
        # 3. No duplicate keys within a resource, and a value for every operation but DELETE.
        names = [c.name for c in resource.configs]
        if len(set(names)) != len(names):
            answers[key] = _response(resource, Errors.INVALID_REQUEST, "Error due to duplicate config keys")
            continue
        null_updates = [c.name for c in resource.configs if c.config_operation != OpType.DELETE and c.value is None]
        if null_updates:
            answers[key] = _response(resource, Errors.INVALID_REQUEST,
                                     "Null value not supported for : " + ", ".join(null_updates))
            continue
        # 4. ALTER_CONFIGS on the topic (or the cluster, for a broker resource).
        if not authorize(resource.resource_type, resource.resource_name):
            error = (Errors.TOPIC_AUTHORIZATION_FAILED if resource.resource_type == ConfigResourceType.TOPIC
                     else Errors.CLUSTER_AUTHORIZATION_FAILED)
            answers[key] = _response(resource, error)
            continue
        # 5. Dynamic broker configs are not part of this model.
        if resource.resource_type == ConfigResourceType.BROKER:
            answers[key] = _response(resource, Errors.INVALID_REQUEST,
                                     "kafka_ref models topic configs only; dynamic broker configs are not supported")
    return answers


def _java_split(text: str) -> list[str]:
    """String#split(","): the pieces, trailing empty ones dropped (a lone "" stays)."""
    if text == "":
        return [""]
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def prepare_incremental_configs(ops: Iterable[AlterableConfig], config_props: dict[str, str]) -> None:
    """Mirrors kafka.server.ConfigAdminManager$#prepareIncrementalConfigs (topic keys): apply the operations to ``config_props``.

    1. SET puts the value, DELETE removes the override (back to the broker default);
    2. APPEND and SUBTRACT need a LIST key (InvalidConfigurationException otherwise). Kafka looks
    the key up in a Scala map, so an unknown key fails there with a NoSuchElementException (a
    KeyError here, answered UNKNOWN_SERVER_ERROR); 3. APPEND adds the items not yet present to the
    current value, or to the default when the key is unset; SUBTRACT removes items from the
    current value or the default.
    """
    for op in ops:
        name = op.name
        # 1. SET / DELETE.
        if op.config_operation == OpType.SET:
            config_props[name] = op.value if op.value is not None else ""
        elif op.config_operation == OpType.DELETE:
            config_props.pop(name, None)
        elif op.config_operation in (OpType.APPEND, OpType.SUBTRACT):
            verb = "append" if op.config_operation == OpType.APPEND else "subtract"
            # 2. A LIST key (the map lookup fails first for an unknown one).
            if name not in _DEFAULTS:
                raise KeyError(f"key not found: {name}")
            if name not in LIST_TOPIC_KEYS:
                raise InvalidConfigurationException(f"Config value {verb} is not allowed for config key: {name}")
            # 3. The current list (or the default's), changed.
            current = config_props.get(name)
            if current is None:
                current = topic_key_default(name)
            items = _java_split(op.value or "")
            if op.config_operation == OpType.APPEND:
                old = _java_split(current) if current else []
                new = old + [v for v in items if v not in old]
            else:
                old = _java_split(current)
                new = list(old)
                for v in items:
                    if v in new:
                        new.remove(v)
            config_props[name] = ",".join(new)
        else:
            raise InvalidRequestException(f"Unknown config operation {op.config_operation} for config key: {name}")


def zk_incremental_alter_configs(broker: Any, request: IncrementalAlterConfigsRequest,
                                 principal: str) -> IncrementalAlterConfigsResponse:
    """Mirrors the ZooKeeper-mode branch of kafka.server.KafkaApis#handleIncrementalAlterConfigsRequest.

    Any broker serves it (not only the controller): ConfigAdminManager#preprocess, then
    ZkAdminManager#incrementalAlterConfigs for each topic left: 1. the topic's current
    overrides from ZooKeeper; 2. the operations applied; 3. the topic must be known to this
    broker's metadata cache and the result must validate (AdminZkClient#validateTopicConfig);
    4. unless ``validate_only``, AdminZkClient#changeTopicConfig writes the overrides and a change
    notification. A ConfigException is INVALID_CONFIG ("Invalid config value for resource ...").
    """
    authorizer = broker.apis.authorizer
    answers = preprocess(request, lambda rtype, name: authorize_alter_configs(authorizer, principal, rtype, name))
    admin_zk_client = broker.admin_manager.admin_zk_client
    out = []
    for resource in request.resources:
        key = (resource.resource_type, resource.resource_name)
        if key in answers:
            out.append(answers[key])
            continue
        topic = resource.resource_name
        try:
            if not topic:
                raise InvalidRequestException("Default topic resources are not allowed.")
            # 1.-2. The current overrides, changed by the operations.
            config_props = dict(admin_zk_client.fetch_entity_config(ConfigType.TOPIC, topic))
            prepare_incremental_configs(resource.configs, config_props)
            # 3. A topic this broker knows, and a valid result.
            if not broker.metadata_cache.contains_topic(topic):
                raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
            admin_zk_client.validate_topic_config(topic, config_props)
            # 4. Write it (every broker reloads on the change notification).
            if not request.validate_only:
                broker.apis._log.info("topic_config_update", topic=topic, config=dict(sorted(config_props.items())))
                admin_zk_client.change_topic_config(topic, config_props)
            out.append(_response(resource, Errors.NONE))
        except (ConfigException, ValueError) as exc:  # ConfigException or IllegalArgumentException
            out.append(_response(resource, Errors.INVALID_CONFIG, f"Invalid config value for resource {resource_text(resource)}: {exc}"))
        except ApiException as exc:
            out.append(_response(resource, Errors.for_exception(exc), str(exc) or None))
        except RUN_ENDING:
            raise
        except Exception:  # ApiError#fromThrowable: UNKNOWN_SERVER_ERROR, no message
            out.append(_response(resource, Errors.UNKNOWN_SERVER_ERROR))
    return IncrementalAlterConfigsResponse(responses=tuple(out))


def authorize_alter_configs(authorizer: Any, principal: str, resource_type: int, name: str) -> bool:
    """ALTER_CONFIGS on the topic; a broker resource (cluster ALTER_CONFIGS) has no ACLs here, so it is allowed."""
    if resource_type == ConfigResourceType.TOPIC:
        return authorizer.authorize_topic(principal, "ALTER_CONFIGS", name)
    return True


def resource_text(resource: AlterConfigsResource) -> str:
    """ConfigResource#toString: ``ConfigResource(type=TOPIC, name='t')``."""
    try:
        type_name = ConfigResourceType(resource.resource_type).name
    except ValueError:
        type_name = str(resource.resource_type)
    return f"ConfigResource(type={type_name}, name='{resource.resource_name}')"


def forward_incremental_alter_configs(authorizer: Any, send: Callable[[Any, Callable[[Any], None]], None],
                                      envelope: Any) -> None:
    """Mirrors the KRaft-broker branch of kafka.server.KafkaApis#handleIncrementalAlterConfigsRequest.

    1. ConfigAdminManager#preprocess answers what it can (with the client's principal);
    2. the remaining resources go to the active controller (ForwardingManager), which checks
    existence, applies the operations and writes ConfigRecords; 3. both parts make one answer,
    in the request's resource order.
    """
    request: IncrementalAlterConfigsRequest = envelope.request
    answers = preprocess(request, lambda rtype, name: authorize_alter_configs(authorizer, envelope.principal, rtype, name))
    remaining = tuple(r for r in request.resources if (r.resource_type, r.resource_name) not in answers)

    def merge(response: IncrementalAlterConfigsResponse) -> None:
        by_key = dict(answers)
        for r in response.responses:
            by_key[(r.resource_type, r.resource_name)] = r
        envelope.respond(IncrementalAlterConfigsResponse(throttle_time_ms=response.throttle_time_ms, responses=tuple(
            by_key[(r.resource_type, r.resource_name)] for r in request.resources)))

    if not remaining:
        merge(IncrementalAlterConfigsResponse())
        return
    send(IncrementalAlterConfigsRequest(resources=remaining, validate_only=request.validate_only), merge)


# ------------------------------------------------------------------------- AlterConfigs (legacy)


def _legacy_response(resource: Any, error: Errors, message: str | None = None) -> Any:
    from kafka_ref.common.requests.alter_configs import AlterConfigsResourceResponse as LegacyResourceResponse

    return LegacyResourceResponse(error_code=error.code, error_message=message,
                                  resource_type=resource.resource_type, resource_name=resource.resource_name)


def preprocess_legacy(request: Any) -> dict[int, Any]:
    """Mirrors kafka.server.ConfigAdminManager#preprocess(AlterConfigsRequestData): the answers decided up front.

    Keyed by the resource's index in the request (Kafka keys them by identity). 1. A resource
    named more than once: INVALID_REQUEST for every copy; 2. a config key named twice: INVALID_REQUEST;
    3. a null value (the legacy API cannot delete a key by naming it): INVALID_REQUEST naming the
    keys; 4. a broker resource: INVALID_REQUEST (dynamic broker configs are not modelled); an unknown
    resource type: INVALID_REQUEST. No authorization here: the legacy API checks it later.
    """
    answers: dict[int, Any] = {}
    first: dict[tuple[int, str], int] = {}
    for i, resource in enumerate(request.resources):
        key = (resource.resource_type, resource.resource_name)
        # 1. Each resource at most once (both copies are refused).
        if key in first:
            for j in (first[key], i):
                answers[j] = _legacy_response(request.resources[j], Errors.INVALID_REQUEST,
                                              "Each resource must appear at most once.")
        else:
            first[key] = i
    for i, resource in enumerate(request.resources):
        if i in answers:
            continue
        names = [c.name for c in resource.configs]
        # 2. Duplicate keys.
        if len(set(names)) != len(names):
            answers[i] = _legacy_response(resource, Errors.INVALID_REQUEST, "Error due to duplicate config keys")
            continue
        # 3. Null values.
        null_updates = [c.name for c in resource.configs if c.value is None]
        if null_updates:
            answers[i] = _legacy_response(resource, Errors.INVALID_REQUEST,
                                          "Null value not supported for : " + ", ".join(null_updates))
            continue
        # 4. Resource types.
        if resource.resource_type == ConfigResourceType.BROKER:
            answers[i] = _legacy_response(resource, Errors.INVALID_REQUEST,
                                          "kafka_ref models topic configs only; dynamic broker configs are not supported")
        elif resource.resource_type != ConfigResourceType.TOPIC:
            answers[i] = _legacy_response(resource, Errors.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}")
    return answers


def _reassemble_legacy(request: Any, answers: dict[int, Any], processed: Any) -> Any:
    """Mirrors kafka.server.ConfigAdminManager#reassembleLegacyResponse: one answer per resource, in request order.

    A resource the processing step did not answer is an UNKNOWN_SERVER_ERROR, as in Kafka.
    """
    from kafka_ref.common.requests.alter_configs import AlterConfigsResponse

    by_key = {(r.resource_type, r.resource_name): r for r in processed.responses}
    out = []
    for i, resource in enumerate(request.resources):
        if i in answers:
            out.append(answers[i])
        else:
            out.append(by_key.get((resource.resource_type, resource.resource_name)) or _legacy_response(
                resource, Errors.UNKNOWN_SERVER_ERROR, "Unable to find a response for this resource"))
    return AlterConfigsResponse(throttle_time_ms=processed.throttle_time_ms, responses=tuple(out))


def _remaining_legacy(request: Any, answers: dict[int, Any]) -> Any:
    """Mirrors kafka.server.ConfigAdminManager#copyWithoutPreprocessed(AlterConfigsRequestData)."""
    import dataclasses

    return dataclasses.replace(request, resources=tuple(r for i, r in enumerate(request.resources) if i not in answers))


def zk_legacy_alter_configs(broker: Any, request: Any, principal: str) -> Any:
    """Mirrors the ZooKeeper-mode branch of kafka.server.KafkaApis#handleAlterConfigsRequest
    (#processLegacyAlterConfigsRequest with ZkAdminManager#alterConfigs / #alterTopicConfigs).

    Any broker serves it. 1. ConfigAdminManager's legacy preprocessing; 2. per topic left:
    ALTER_CONFIGS on the topic (else TOPIC_AUTHORIZATION_FAILED); the topic must be named and
    known to this broker's metadata cache; the named keys, and only they, are the new overrides,
    which must validate (a ConfigException is INVALID_CONFIG, "Invalid config value for resource
    ..."); unless ``validate_only`` they replace /config/topics/<topic> with a change notification;
    3. one answer per resource in request order.
    """
    from kafka_ref.common.requests.alter_configs import AlterConfigsResponse

    # 1. Preprocessing.
    answers = preprocess_legacy(request)
    remaining = _remaining_legacy(request, answers)
    authorizer = broker.apis.authorizer
    admin_zk_client = broker.admin_manager.admin_zk_client
    out = []
    # 2. Each topic.
    for resource in remaining.resources:
        topic = resource.resource_name
        if not authorizer.authorize_topic(principal, "ALTER_CONFIGS", topic):
            out.append(_legacy_response(resource, Errors.TOPIC_AUTHORIZATION_FAILED))
            continue
        config_props = {c.name: c.value for c in resource.configs if c.value is not None}
        try:
            if not topic:
                raise InvalidRequestException("Default topic resources are not allowed.")
            if not broker.metadata_cache.contains_topic(topic):
                raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
            admin_zk_client.validate_topic_config(topic, config_props)
            if not remaining.validate_only:
                broker.apis._log.info("topic_config_replace", topic=topic, config=dict(sorted(config_props.items())))
                admin_zk_client.change_topic_config(topic, config_props)
            out.append(_legacy_response(resource, Errors.NONE))
        except (ConfigException, ValueError) as exc:  # ConfigException or IllegalArgumentException
            out.append(_legacy_response(resource, Errors.INVALID_CONFIG,
                                        f"Invalid config value for resource {resource_text(resource)}: {exc}"))
        except ApiException as exc:
            out.append(_legacy_response(resource, Errors.for_exception(exc), str(exc) or None))
        except RUN_ENDING:
            raise
    # 3. Reassembled in request order.
    return _reassemble_legacy(request, answers, AlterConfigsResponse(responses=tuple(out)))


def forward_legacy_alter_configs(send: Callable[[Any, Callable[[Any], None], str], None], envelope: Any) -> None:
    """Mirrors the KRaft-broker branch of kafka.server.KafkaApis#handleAlterConfigsRequest.

    1. ConfigAdminManager's legacy preprocessing; 2. the remaining resources go to the active
    controller as the client's principal (ForwardingManager), which authorizes, checks existence
    and replaces the overrides with ConfigRecords (QuorumController#legacyAlterConfigs); 3. both
    parts make one answer, in request order.
    """
    from kafka_ref.common.requests.alter_configs import AlterConfigsResponse

    request = envelope.request
    answers = preprocess_legacy(request)
    remaining = _remaining_legacy(request, answers)
    if not remaining.resources:
        envelope.respond(_reassemble_legacy(request, answers, AlterConfigsResponse()))
        return
    send(remaining, lambda response: envelope.respond(_reassemble_legacy(request, answers, response)), envelope.principal)
