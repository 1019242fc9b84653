"""The Metadata request on a broker: topics by name or by id, authorization, auto-creation.

Mirrors kafka.server.KafkaApis#handleTopicMetadataRequest and #getTopicMetadata (Kafka 3.7),
split out of kafka_apis.py, which calls ``handle_topic_metadata_request`` for it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kafka_ref.common.errors import Errors, InvalidRequestException, InvalidTopicException
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponseTopic
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.network.network import Envelope
from kafka_ref.server.metadata_cache import INTERNAL_TOPICS
from kafka_ref.zk.admin_zk_client import validate_topic_name

# The newest Metadata version: an in-process request (no wire version) is read at it.
LATEST_METADATA_VERSION = 12


def handle_topic_metadata_request(apis: Any, envelope: Envelope) -> None:
    """Mirrors kafka.server.KafkaApis#handleTopicMetadataRequest.

    1. Before version 12 a topic must have a name and no id (INVALID_REQUEST for the whole
    request otherwise); 2. topics asked for by id are resolved to names, and an id the cache
    does not know answers UNKNOWN_TOPIC_ID with a null name; 3. the topics the principal may not
    DESCRIBE are set aside, and so are non-existing ones it may not CREATE when the request
    would auto-create them; 4. the metadata cache answers the rest (``get_topic_metadata``
    below: auto-creation or UNKNOWN_TOPIC_OR_PARTITION for names it does not know); 5. the
    answer lists the unknown ids, the topics, the ones refused creation
    (TOPIC_AUTHORIZATION_FAILED, no id) and the ones refused description (TOPIC_AUTHORIZATION_FAILED,
    without id when asked by name, without name when asked by id; left out of an all-topics
    answer), in that order. From version 8 a request that asks for them gets, for each topic the
    cache answered, the operations the principal may perform on it (AuthHelper#authorizedOperations).
    """
    request: MetadataRequest = envelope.request
    version = envelope.api_version if envelope.api_version is not None else LATEST_METADATA_VERSION
    principal = envelope.principal
    authorizer = apis.authorizer
    cache = apis.metadata_cache
    # 1. Names and ids by version.
    if not request.is_all_topics() and version < 12:
        for topic in request.topics:
            if topic.name is None:
                raise InvalidRequestException(f"Topic name can not be null for version {version}")
            if topic.topic_id != ZERO_UUID:
                raise InvalidRequestException(f"Topic IDs are not supported in requests for version {version}")
    # 2. Ids to names.
    topic_ids = list(dict.fromkeys(request.topic_ids()))
    use_topic_id = bool(topic_ids)
    unknown_ids = [MetadataResponseTopic(error_code=Errors.UNKNOWN_TOPIC_ID.code, name=None, topic_id=topic_id)
                   for topic_id in topic_ids if cache.get_topic_name(topic_id) is None]
    if request.is_all_topics():
        names = None
    elif use_topic_id:
        names = [n for n in (cache.get_topic_name(i) for i in topic_ids) if n is not None]
    else:
        names = list(dict.fromkeys(request.topic_names()))
    # 3. DESCRIBE, then CREATE for what would be auto-created.
    candidates = sorted(cache.get_all_topics()) if names is None else names
    refused_describe = [n for n in candidates if not authorizer.authorize_topic(principal, "DESCRIBE", n)]
    refused_create: list[str] = []
    allow_auto_creation = (apis.broker.config.get("auto.create.topics.enable") and request.allow_auto_topic_creation
                           and names is not None)
    if names is not None:
        names = [n for n in names if n not in refused_describe]
        if allow_auto_creation and not authorizer.authorize_cluster(principal, "CREATE"):
            refused_create = [n for n in names if not cache.contains_topic(n)
                              and not authorizer.authorize_topic(principal, "CREATE", n)]
            names = [n for n in names if n not in refused_create]
    # 4. The cache (and auto-creation); from version 8 the operations asked for.
    response = get_topic_metadata(apis, names, allow_auto_creation, set(refused_describe), version == 0, version >= 6)
    if request.include_topic_authorized_operations and version >= 8:
        response = dataclasses.replace(response, topics=tuple(
            dataclasses.replace(t, topic_authorized_operations=topic_authorized_operations(authorizer, principal, t.name))
            for t in response.topics))
    # 5. Everything in Kafka's order.
    refused_create_topics = tuple(MetadataResponseTopic(error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code, name=n,
                                                        is_internal=n in INTERNAL_TOPICS) for n in refused_create)
    if names is None:
        refused_describe_topics: tuple[MetadataResponseTopic, ...] = ()
    elif use_topic_id:
        refused_describe_topics = tuple(MetadataResponseTopic(error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code, name=None,
                                                              topic_id=cache.get_topic_id(n)) for n in refused_describe)
    else:
        refused_describe_topics = tuple(MetadataResponseTopic(error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code, name=n)
                                        for n in refused_describe)
    if unknown_ids or refused_create_topics or refused_describe_topics:
        response = dataclasses.replace(response, topics=tuple(unknown_ids) + response.topics + refused_create_topics
                                       + refused_describe_topics)
    envelope.respond(response)


def get_topic_metadata(apis: Any, names: list[str] | None, allow_auto_creation: bool, hidden: set[str],
                       error_unavailable_endpoints: bool = False, error_unavailable_listeners: bool = False) -> Any:
    """Mirrors kafka.server.KafkaApis#getTopicMetadata (with the brokers of the response).

    1. The metadata cache answers the topics it knows (every topic for an all-topics request,
    less ``hidden``: those the principal may not describe; a version 0 request,
    ``error_unavailable_endpoints``, sees only the replicas on alive brokers; from version 6,
    ``error_unavailable_listeners``, a leader without the listener is LISTENER_NOT_FOUND); 2. the names it does not know are
    auto-created when ``allow_auto_creation`` (DefaultAutoTopicCreationManager:
    LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION while the topic is made); otherwise each
    answers UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for a name no topic can have;
    3. known topics first, then the others, as Kafka concatenates them.
    """
    # 1. What the cache knows.
    response = apis.metadata_cache.get_topic_metadata(names, error_unavailable_endpoints, error_unavailable_listeners)
    if names is None:
        if hidden:
            response = dataclasses.replace(response, topics=tuple(t for t in response.topics if t.name not in hidden))
        return response
    if not names:
        return response
    known = response.topics
    known_names = {t.name for t in known}
    non_existing = [name for name in dict.fromkeys(names) if name not in known_names]
    if not non_existing:
        return response
    # 2. The others: created, or explained.
    creator = apis.auto_topic_creation_manager if allow_auto_creation else None
    if creator is not None and apis.broker.admin_manager is not None:
        others = creator.create_topics(non_existing)
    else:
        others = [MetadataResponseTopic(error_code=unknown_topic_error(name).code, name=name,
                                        is_internal=name in INTERNAL_TOPICS) for name in non_existing]
    # 3. Known first.
    return dataclasses.replace(response, topics=known + tuple(others))


# AclOperation codes of the operations a TOPIC resource supports (ResourceType.TOPIC).
TOPIC_OPERATIONS = {"READ": 3, "WRITE": 4, "CREATE": 5, "DELETE": 6, "ALTER": 7, "DESCRIBE": 8,
                    "DESCRIBE_CONFIGS": 10, "ALTER_CONFIGS": 11}


def topic_authorized_operations(authorizer: Any, principal: str, topic: str) -> int:
    """Mirrors kafka.server.AuthHelper#authorizedOperations for a topic: one bit per AclOperation
    code the principal is allowed on it (describe_cluster.py's operations_bit_field is the same
    method for the cluster resource, also claiming the name)."""
    return sum(1 << code for name, code in TOPIC_OPERATIONS.items() if authorizer.authorize_topic(principal, name, topic))


def unknown_topic_error(topic: str) -> Errors:
    """KafkaApis#getTopicMetadata without auto-creation: an unknown name is UNKNOWN_TOPIC_OR_PARTITION,
    or INVALID_TOPIC_EXCEPTION when Topic#validate refuses it."""
    try:
        validate_topic_name(topic)
    except InvalidTopicException:
        return Errors.INVALID_TOPIC_EXCEPTION
    return Errors.UNKNOWN_TOPIC_OR_PARTITION
