"""The admin requests the KRaft controller serves: topics, partitions, configs, elections, reassignments.

Mirrors the admin half of kafka.server.ControllerApis with the QuorumController operations it
calls (Kafka 3.4; the topic handlers as of 3.7): CreateTopics, CreatePartitions, DeleteTopics,
IncrementalAlterConfigs and the legacy AlterConfigs, ElectLeaders, AlterPartitionReassignments
and ListPartitionReassignments. Each handler computes its records and answer and hands them to
QuorumController's write (answered once committed). ``ControllerAdminHandlers`` is a mixin of
``QuorumController`` (kafka_ref/controller/quorum/quorum_controller.py), which dispatches to it
from ``handle``; kept apart to keep that module within the project's size rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_configs import AlterConfigsRequest
from kafka_ref.common.requests.delete_topics import DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest, ElectLeadersResponse
from kafka_ref.common.requests.incremental_alter_configs import IncrementalAlterConfigsRequest
from kafka_ref.common.requests.list_partition_reassignments import ListPartitionReassignmentsRequest
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.controller.quorum.controller_result import ControllerResult
from kafka_ref.controller.reassignment import ApiError
from kafka_ref.network.network import Envelope


class ControllerAdminHandlers:
    """QuorumController's admin request handlers (``self`` is the QuorumController)."""

    def _config_resource_existence_checker(self, resource: Any) -> None:
        """Mirrors QuorumController.ConfigResourceExistenceChecker#accept for a topic: UNKNOWN_TOPIC_OR_PARTITION
        unless the topic exists."""
        from kafka_ref.common.errors import UnknownTopicOrPartitionException

        if self.replication_control.get_topic_id(resource.name) is None:
            raise UnknownTopicOrPartitionException(f"The topic '{resource.name}' does not exist.")

    @staticmethod
    def _named_topic_resource_error(resource: Any) -> Exception | None:
        """The config resource checks both AlterConfigs paths share: kafka_ref models topic configs
        only (a broker resource is INVALID_REQUEST), and a topic resource must be named."""
        from kafka_ref.common.errors import InvalidRequestException
        from kafka_ref.image.records import ConfigResourceType

        if resource.resource_type != ConfigResourceType.TOPIC:
            return InvalidRequestException("kafka_ref models topic configs only; dynamic broker configs are not supported")
        if not resource.resource_name:
            return InvalidRequestException("Default topic resources are not allowed.")
        return None

    def handle_incremental_alter_configs(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#incrementalAlterConfigs (ControllerApis#incrementalAlterConfigs).

        The broker already ran ConfigAdminManager's checks. Per resource: 1. a topic must be named
        (INVALID_REQUEST), a broker resource is not modelled (INVALID_REQUEST);
        2. ConfigurationControlManager#incrementalAlterConfigResource gives its records or its error
        (the operations, the resulting config, then the topic's existence:
        UNKNOWN_TOPIC_OR_PARTITION); 3. ``validate_only`` writes nothing; the answer comes once the
        records are committed.
        """
        from kafka_ref.common.requests.incremental_alter_configs import AlterConfigsResourceResponse, IncrementalAlterConfigsResponse
        from kafka_ref.image.records import ConfigResource, ConfigResourceType

        request: IncrementalAlterConfigsRequest = envelope.request
        records: list[Any] = []
        responses = []
        for resource in request.resources:
            error: Exception | None = None
            resource_records: list[Any] = []
            # 1. The resource must be a named topic.
            error = self._named_topic_resource_error(resource)
            if error is None:
                # 2. The operations; existence is checked after the config (validateAlterConfig).
                config_resource = ConfigResource(ConfigResourceType.TOPIC, resource.resource_name)
                resource_records, error = self.configuration_control.incremental_alter_config_resource(
                    config_resource, [(c.name, c.config_operation, c.value) for c in resource.configs],
                    self._config_resource_existence_checker)
            if error is None:
                records.extend(resource_records)
                responses.append(AlterConfigsResourceResponse(resource_type=resource.resource_type,
                                                              resource_name=resource.resource_name))
            else:
                responses.append(AlterConfigsResourceResponse(
                    error_code=Errors.for_exception(error).code, error_message=str(error) or None,
                    resource_type=resource.resource_type, resource_name=resource.resource_name))
        # 3. Validation only: nothing to write.
        response = IncrementalAlterConfigsResponse(responses=tuple(responses))
        self._write("incrementalAlterConfigs", ControllerResult([] if request.validate_only else records, response),
                    envelope.respond, request=envelope.request)

    def handle_legacy_alter_configs(self, envelope: Envelope) -> None:
        """Mirrors ControllerApis#handleLegacyAlterConfigs and QuorumController#legacyAlterConfigs.

        1. An unknown resource type is UNSUPPORTED_VERSION, a resource named twice INVALID_REQUEST;
        2. ALTER_CONFIGS on the topic, as the client's principal (TOPIC_AUTHORIZATION_FAILED); 3. per
        resource left, as for IncrementalAlterConfigs: a named topic (a broker resource is not
        modelled: INVALID_REQUEST), then ConfigurationControlManager#legacyAlterConfigResource's
        records (the named keys replace every override) or its error (a bad config before a missing
        topic); 4. all records in one atomic
        batch (none when ``validate_only``); the answer comes once they are committed.
        """
        from kafka_ref.common.requests.alter_configs import AlterConfigsResourceResponse, AlterConfigsResponse
        from kafka_ref.image.records import ConfigResource, ConfigResourceType

        request: AlterConfigsRequest = envelope.request

        def answer(resource: Any, error: Errors, message: str | None = None) -> AlterConfigsResourceResponse:
            return AlterConfigsResourceResponse(error_code=error.code, error_message=message,
                                                resource_type=resource.resource_type, resource_name=resource.resource_name)

        responses: list[AlterConfigsResourceResponse] = []
        changes: dict[tuple[int, str], Any] = {}
        duplicates: set[tuple[int, str]] = set()
        # 1. Known types, each resource once.
        for resource in request.resources:
            key = (resource.resource_type, resource.resource_name)
            if resource.resource_type not in (ConfigResourceType.TOPIC, ConfigResourceType.BROKER):
                responses.append(answer(resource, Errors.UNSUPPORTED_VERSION, f"Unknown resource type {resource.resource_type}."))
            elif key not in duplicates:
                if key in changes:
                    duplicates.add(key)
                    del changes[key]
                    responses.append(answer(resource, Errors.INVALID_REQUEST, "Duplicate resource."))
                else:
                    changes[key] = resource
        # 2. Authorization.
        for key, resource in list(changes.items()):
            if resource.resource_type == ConfigResourceType.TOPIC and \
                    not self.authorizer.authorize_topic(envelope.principal, "ALTER_CONFIGS", resource.resource_name):
                responses.append(answer(resource, Errors.TOPIC_AUTHORIZATION_FAILED))
                del changes[key]
        # 3. Each resource's records.
        records: list[Any] = []
        for resource in changes.values():
            error: Exception | None = None
            resource_records: list[Any] = []
            error = self._named_topic_resource_error(resource)
            if error is None:
                resource_records, error = self.configuration_control.legacy_alter_config_resource(
                    ConfigResource(ConfigResourceType.TOPIC, resource.resource_name),
                    {c.name: c.value for c in resource.configs}, self._config_resource_existence_checker)
            if error is None:
                records.extend(resource_records)
                responses.append(answer(resource, Errors.NONE))
            else:
                responses.append(answer(resource, Errors.for_exception(error), str(error) or None))
        # 4. One atomic batch.
        response = AlterConfigsResponse(responses=tuple(responses))
        self._write("legacyAlterConfigs", ControllerResult([] if request.validate_only else records, response),
                    envelope.respond, request=envelope.request)

    def handle_create_topics(self, envelope: Envelope) -> None:
        """Mirrors ControllerApis#createTopics and QuorumController#createTopics (Kafka 3.7).

        1. A name given twice is left out and answered once, INVALID_REQUEST ("Duplicate topic
        name."); __cluster_metadata is never created, and without CREATE on the cluster neither
        is a topic the principal may not CREATE: TOPIC_AUTHORIZATION_FAILED ("Authorization
        failed."), and only topics it may DESCRIBE_CONFIGS are answered with their configs;
        2. ReplicationControlManager#createTopics makes the rest; the answer lists its
        results, then the duplicates, then the refused topics.
        """
        from kafka_ref.common.requests.create_topics import CreatableTopicResult, CreateTopicsResponse

        request = envelope.request
        principal = envelope.principal
        # 1. Duplicates, the metadata topic, authorization.
        names = [t.name for t in request.topics]
        unique = list(dict.fromkeys(n for n in names if names.count(n) == 1))
        duplicates = list(dict.fromkeys(n for n in names if names.count(n) > 1))
        allowed = [n for n in unique if n != "__cluster_metadata"]
        if self.authorizer.authorize_cluster(principal, "CREATE"):
            authorized = set(allowed)
        else:
            authorized = {n for n in allowed if self.authorizer.authorize_topic(principal, "CREATE", n)}
        effective = dataclasses.replace(request, topics=tuple(t for t in request.topics if t.name in authorized))
        #    The topics whose configs the answer may show (DESCRIBE_CONFIGS).
        describable = {n for n in authorized if self.authorizer.authorize_topic(principal, "DESCRIBE_CONFIGS", n)}
        # 2. The controller's results, then the refused names.
        records, response = self.replication_control.create_topics(effective, describable)
        refused = [CreatableTopicResult(name=n, error_code=Errors.INVALID_REQUEST.code, error_message="Duplicate topic name.")
                   for n in duplicates]
        refused += [CreatableTopicResult(name=n, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                         error_message="Authorization failed.") for n in unique if n not in authorized]
        if refused:
            response = CreateTopicsResponse(throttle_time_ms=response.throttle_time_ms,
                                            topics=response.topics + tuple(refused))
        self._write("createTopics", ControllerResult(records, response), envelope.respond, request=envelope.request)

    def handle_create_partitions(self, envelope: Envelope) -> None:
        """Mirrors ControllerApis#createPartitions and QuorumController#createPartitions.

        1. A topic named twice is INVALID_REQUEST, one the principal may not ALTER
        TOPIC_AUTHORIZATION_FAILED; 2. ReplicationControlManager#createPartitions for the rest
        (one atomic batch; validate-only writes nothing); the answer lists the refused topics
        first, then the others, once the records are committed.
        """
        from kafka_ref.common.requests.create_partitions import CreatePartitionsResponse, CreatePartitionsTopicResult

        request = envelope.request
        # 1. Duplicates, then authorization.
        names = [t.name for t in request.topics]
        dupes = sorted({n for n in names if names.count(n) > 1})
        refused = [CreatePartitionsTopicResult(name=n, error_code=Errors.INVALID_REQUEST.code,
                                               error_message="Duplicate topic name.") for n in dupes]
        topics = []
        for topic in request.topics:
            if topic.name in dupes:
                continue
            if self.authorizer.authorize_topic(envelope.principal, "ALTER", topic.name):
                topics.append(topic)
            else:
                refused.append(CreatePartitionsTopicResult(name=topic.name, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code))
        # 2. The new partitions.
        records, results = self.replication_control.create_partitions(topics) if topics else ([], [])
        response = CreatePartitionsResponse(results=tuple(refused + results))
        self._write("createPartitions", ControllerResult([] if request.validate_only else records, response),
                    envelope.respond, request=request)

    def handle_elect_leaders(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#electLeaders: an empty partition list needs no write; None means all."""
        request: ElectLeadersRequest = envelope.request
        if request.topic_partitions is not None and not request.topic_partitions:
            envelope.respond(ElectLeadersResponse())
            return
        records, response = self.replication_control.elect_leaders(request)
        self._write("electLeaders", ControllerResult(records, response), envelope.respond, request=envelope.request)

    def handle_alter_partition_reassignments(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#alterPartitionReassignments (ControllerApis: answered when committed)."""
        records, response = self.replication_control.alter_partition_reassignments(envelope.request)
        self._write("alterPartitionReassignments", ControllerResult(records, response), envelope.respond,
                    request=envelope.request)

    def handle_list_partition_reassignments(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#listPartitionReassignments (ControllerApis#handleListPartitionReassignments).

        1. DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED, checked in ``handle``); 2. a read: Kafka answers from
        the state as of the last committed offset; here the in-memory state is read and the
        answer waits until every write before it is committed, so no uncommitted change is seen
        by the client.
        """
        request: ListPartitionReassignmentsRequest = envelope.request
        # (1. DESCRIBE on the cluster was checked in handle.)
        # 2. The read, answered once what came before is committed.
        response = self.replication_control.list_partition_reassignments(request.topics)
        self._write("listPartitionReassignments", ControllerResult([], response), envelope.respond, request=request)

    def handle_delete_topics(self, envelope: Envelope) -> None:
        """Mirrors ControllerApis#deleteTopics and QuorumController#deleteTopics (Kafka 3.7).

        1. With delete.topic.enable off every topic is TOPIC_DELETION_DISABLED (INVALID_REQUEST
        before version 3); 2. an entry with neither name nor id, or with both, is INVALID_REQUEST,
        and so is a name or an id given twice; 3. ids are resolved (UNKNOWN_TOPIC_ID when no topic
        has one); without DELETE on the cluster, a topic the principal may not DELETE is
        TOPIC_AUTHORIZATION_FAILED (asked by id, its name is shown only if it may DESCRIBE it), a
        name it may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED and an unknown name
        UNKNOWN_TOPIC_OR_PARTITION; a name that maps to an id already given is INVALID_REQUEST;
        4. the rest go in one RemoveTopicRecord batch. The answer lists the entries in the order
        of these steps (Kafka shuffles it so positions tell nothing; kafka_ref keeps runs
        deterministic).
        """
        request: DeleteTopicsRequest = envelope.request
        principal = envelope.principal
        rc = self.replication_control
        # 1. Deletion off: the whole request.
        if not rc.delete_topic_enable:
            version = envelope.api_version
            error = Errors.INVALID_REQUEST if version is not None and version < 3 else Errors.TOPIC_DELETION_DISABLED
            envelope.respond(request.get_error_response(error.code))
            return
        responses: list[DeletableTopicResult] = []

        def answer(name: str | None, topic_id: Uuid, error: Errors, message: str | None = None) -> None:
            # ControllerApis#appendResponse sends ApiError#message: an error made from its code alone
            # (ApiError(Errors)) carries the code's default text.
            if message is None and error is not Errors.NONE:
                message = error.message
            responses.append(DeletableTopicResult(name=name, topic_id=topic_id, error_code=error.code,
                                                  error_message=message))

        # 2. Invalid entries and duplicates.
        names: list[str] = []
        ids: list[Uuid] = []
        for topic in request.topics:
            if topic.name is None and topic.topic_id == ZERO_UUID:
                answer(None, ZERO_UUID, Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")
            elif topic.name is not None and topic.topic_id != ZERO_UUID:
                answer(topic.name, topic.topic_id, Errors.INVALID_REQUEST, "You may not specify both topic name and topic id.")
            elif topic.name is not None:
                names.append(topic.name)
            else:
                ids.append(topic.topic_id)
        duplicate_names = list(dict.fromkeys(n for n in names if names.count(n) > 1))
        duplicate_ids = list(dict.fromkeys(i for i in ids if ids.count(i) > 1))
        for name in duplicate_names:
            answer(name, ZERO_UUID, Errors.INVALID_REQUEST, "Duplicate topic name.")
        for topic_id in duplicate_ids:
            answer(None, topic_id, Errors.INVALID_REQUEST, "Duplicate topic id.")
        names = [n for n in dict.fromkeys(names) if n not in duplicate_names]
        ids = [i for i in dict.fromkeys(ids) if i not in duplicate_ids]
        # 3. Resolve, authorize.
        id_to_name: dict[Uuid, str] = {}
        for topic_id, name_or_error in rc.find_topic_names(ids).items():
            if isinstance(name_or_error, ApiError):
                answer(None, topic_id, name_or_error.error, name_or_error.message)
            else:
                id_to_name[topic_id] = name_or_error
        cluster_delete = self.authorizer.authorize_cluster(principal, "DELETE")

        def may(operation: str, name: str) -> bool:
            return cluster_delete or self.authorizer.authorize_topic(principal, operation, name)

        for topic_id, name in list(id_to_name.items()):
            if not may("DELETE", name):
                answer(name if may("DESCRIBE", name) else None, topic_id, Errors.TOPIC_AUTHORIZATION_FAILED)
                del id_to_name[topic_id]
        for name, id_or_error in rc.find_topic_ids(names).items():
            topic_id = None if isinstance(id_or_error, ApiError) else id_or_error
            if not may("DESCRIBE", name):
                answer(name, ZERO_UUID, Errors.TOPIC_AUTHORIZATION_FAILED)
            elif isinstance(id_or_error, ApiError):
                answer(name, ZERO_UUID, id_or_error.error, id_or_error.message)
            elif not may("DELETE", name):
                answer(name, ZERO_UUID, Errors.TOPIC_AUTHORIZATION_FAILED)
            elif topic_id in id_to_name:
                del id_to_name[topic_id]
                answer(name, topic_id, Errors.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied.")
            else:
                id_to_name[topic_id] = name
        # 4. Remove the rest.
        records, by_id = rc.delete_topics(list(id_to_name))
        for topic_id, name in id_to_name.items():
            # ReplicationControlManager#deleteTopics answers through ApiError#fromThrowable: no text.
            responses.append(DeletableTopicResult(name=name, topic_id=topic_id, error_code=by_id[topic_id].code))
        self._write("deleteTopics", ControllerResult(records, DeleteTopicsResponse(responses=tuple(responses))),
                    envelope.respond, request=envelope.request)
