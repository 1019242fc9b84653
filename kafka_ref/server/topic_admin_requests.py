"""CreateTopics and DeleteTopics on a ZooKeeper-mode broker.

Mirrors kafka.server.KafkaApis#handleCreateTopicsRequest and #handleDeleteTopicsRequest (Kafka
3.7), split out of kafka_apis.py, which calls these for them: the checks Kafka makes before
ZkAdminManager (controller, duplicates, the cluster metadata topic, authorization, topic ids),
then the admin manager's results merged into one answer in request order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kafka_ref.common.errors import Errors, InvalidRequestException
from kafka_ref.common.requests.create_topics import CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse
from kafka_ref.common.requests.delete_topics import DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.network.network import Envelope

# org.apache.kafka.common.internals.Topic#CLUSTER_METADATA_TOPIC_NAME: KRaft's log, never a user topic.
CLUSTER_METADATA_TOPIC_NAME = "__cluster_metadata"


def handle_create_topics_request(apis: Any, envelope: Envelope) -> None:
    """Mirrors kafka.server.KafkaApis#handleCreateTopicsRequest (ZooKeeper mode).

    1. Only the active controller creates (NOT_CONTROLLER for every topic elsewhere); 2. a name
    given twice is INVALID_REQUEST ("Found multiple entries for this topic.") for each entry;
    without CREATE on the cluster, a topic the principal may not CREATE is
    TOPIC_AUTHORIZATION_FAILED ("Authorization failed."), and __cluster_metadata always is; a
    topic whose configs it may not DESCRIBE_CONFIGS gets TOPIC_AUTHORIZATION_FAILED as its
    config error and no configs; 3. ZkAdminManager#createTopics creates the rest, and a topic
    it fails reports no configs and -1 partitions and replication factor.
    """
    request: CreateTopicsRequest = envelope.request
    principal = envelope.principal
    authorizer = apis.authorizer
    # 1. The controller's job.
    if not apis.controller.is_active:
        envelope.respond(CreateTopicsResponse(topics=tuple(
            CreatableTopicResult(name=t.name, error_code=Errors.NOT_CONTROLLER.code) for t in request.topics)))
        return
    # 2. Duplicates, the metadata topic, CREATE and DESCRIBE_CONFIGS.
    names = [t.name for t in request.topics]
    allowed = set(names) - {CLUSTER_METADATA_TOPIC_NAME}
    if authorizer.authorize_cluster(principal, "CREATE"):
        authorized = allowed
    else:
        authorized = {n for n in allowed if authorizer.authorize_topic(principal, "CREATE", n)}
    describable_configs = {n for n in allowed if authorizer.authorize_topic(principal, "DESCRIBE_CONFIGS", n)}
    results: list[CreatableTopicResult] = []
    for name in names:
        result = CreatableTopicResult(name=name, error_message=None)
        if names.count(name) > 1:
            result = dataclasses.replace(result, error_code=Errors.INVALID_REQUEST.code,
                                         error_message="Found multiple entries for this topic.")
        elif name not in authorized:
            result = dataclasses.replace(result, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                         error_message="Authorization failed.")
        if name not in describable_configs:
            result = dataclasses.replace(result, topic_config_error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
        results.append(result)
    to_create = tuple(t for t, r in zip(request.topics, results) if r.error_code == Errors.NONE.code)

    # 3. The admin manager's answers, in request order.
    def handle_create_topics_results(response: CreateTopicsResponse) -> None:
        created = {r.name: r for r in response.topics}
        merged = []
        for result in results:
            outcome = created.get(result.name)
            if outcome is not None:
                if outcome.error_code != Errors.NONE.code:
                    outcome = dataclasses.replace(outcome, configs=(), num_partitions=-1, replication_factor=-1,
                                                  topic_config_error_code=Errors.NONE.code)
                else:
                    outcome = dataclasses.replace(outcome, topic_config_error_code=result.topic_config_error_code)
                result = outcome
            merged.append(result)
        envelope.respond(CreateTopicsResponse(topics=tuple(merged)))

    apis.admin_manager.create_topics(dataclasses.replace(request, topics=to_create), handle_create_topics_results,
                                     include_configs_and_metadata=describable_configs)


def handle_delete_topics_request(apis: Any, envelope: Envelope) -> None:
    """Mirrors kafka.server.KafkaApis#handleDeleteTopicsRequest (ZooKeeper mode).

    1. Only the active controller deletes (NOT_CONTROLLER elsewhere); with delete.topic.enable
    off every topic is TOPIC_DELETION_DISABLED (INVALID_REQUEST before version 3, which has no
    such error); 2. a topic given by name and id at once fails the whole request
    (INVALID_REQUEST); ids are resolved through the controller context; 3. per topic: an id no
    topic has is UNKNOWN_TOPIC_ID; one asked for by id that the principal may not DESCRIBE is
    TOPIC_AUTHORIZATION_FAILED without its name; one it may not DELETE is
    TOPIC_AUTHORIZATION_FAILED; one the metadata cache does not know UNKNOWN_TOPIC_OR_PARTITION;
    4. ZkAdminManager#deleteTopics deletes the rest and its errors complete the answer.
    """
    request: DeleteTopicsRequest = envelope.request
    principal = envelope.principal
    authorizer = apis.authorizer
    version = envelope.api_version
    # 1. The controller's job, if deletion is on at all.
    error = None
    if not apis.controller.is_active:
        error = Errors.NOT_CONTROLLER
    elif not apis.broker.config.get("delete.topic.enable"):
        error = Errors.INVALID_REQUEST if version is not None and version < 3 else Errors.TOPIC_DELETION_DISABLED
    if error is not None:
        envelope.respond(DeleteTopicsResponse(responses=tuple(
            DeletableTopicResult(name=t.name, topic_id=t.topic_id, error_code=error.code) for t in request.topics)))
        return
    # 2. Names and ids.
    ids_from_request = set(request.topic_ids())
    results: list[DeletableTopicResult] = []
    for topic in request.topics:
        if topic.name is not None and topic.topic_id != ZERO_UUID:
            raise InvalidRequestException("Topic name and topic ID can not both be specified.")
        name = topic.name if topic.topic_id == ZERO_UUID else apis.controller.controller_context.topic_name(topic.topic_id)
        results.append(DeletableTopicResult(name=name, topic_id=topic.topic_id))
    # 3. Per topic.
    to_delete: list[str] = []
    for i, result in enumerate(results):
        name = result.name
        if result.topic_id != ZERO_UUID and name is None:
            results[i] = dataclasses.replace(result, error_code=Errors.UNKNOWN_TOPIC_ID.code)
        elif result.topic_id in ids_from_request and not authorizer.authorize_topic(principal, "DESCRIBE", name):
            results[i] = dataclasses.replace(result, name=None, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
        elif name is None or not authorizer.authorize_topic(principal, "DELETE", name):  # a null name is never authorized
            results[i] = dataclasses.replace(result, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
        elif not apis.metadata_cache.contains_topic(name):
            results[i] = dataclasses.replace(result, error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code)
        elif name not in to_delete:
            to_delete.append(name)

    # 4. The admin manager's errors complete the answer.
    def handle_delete_topics_results(errors: dict[str, Errors]) -> None:
        envelope.respond(DeleteTopicsResponse(responses=tuple(
            dataclasses.replace(r, error_code=errors[r.name].code) if r.name in errors and r.error_code == 0 else r
            for r in results)))

    if not to_delete:
        handle_delete_topics_results({})
    else:
        apis.admin_manager.delete_topics(request.timeout_ms, to_delete, handle_delete_topics_results)
