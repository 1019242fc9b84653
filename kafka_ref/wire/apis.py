"""Which APIs the wire listeners speak, at which versions, and the few per-API adapters.

Mirrors org.apache.kafka.server.ApiVersionManager (the table ApiVersions answers with) and the
version-dependent builders of org.apache.kafka.common.requests where an old version of a
message has another shape than our (newest) dataclass.

``WIRE_APIS`` maps an API key to its kafka-python message classes, our dataclasses and the
version range we advertise. A range is the intersection of what our handlers implement and
what the schemas allow, chosen so that kafka-python, aiokafka and confluent-kafka all find a
common version:

- Produce from v3 and Fetch from v4: our logs hold only v2 (magic 2) record batches and we do not
  down-convert, as Kafka 4.0 stopped doing; Produce up to v9 and Fetch up to v12 (topic names;
  v13+ address topics by id).
- ListOffsets, OffsetFetch and OffsetCommit from v1: v0 of each has semantics (multiple offsets,
  ZooKeeper-stored offsets) this broker does not model. OffsetCommit and OffsetFetch go up to v9
  (Kafka 3.8's newest), which the classic coordinator answers as it does v8 (the member epoch
  field is the generation).
- InitProducerId up to v4 for idempotent producers (the logs check producer epochs and
  sequences, kafka_ref/log/producer_state_manager.py); the transactional APIs are not
  advertised and a transactional id is answered UNSUPPORTED_VERSION.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from kafka.protocol.admin import AlterPartitionReassignmentsRequest as KAlterPartitionReassignmentsRequest
from kafka.protocol.admin import AlterPartitionReassignmentsResponse as KAlterPartitionReassignmentsResponse
from kafka.protocol.admin import CreateTopicsRequest as KCreateTopicsRequest
from kafka.protocol.admin import CreateTopicsResponse as KCreateTopicsResponse
from kafka.protocol.admin import DeleteTopicsRequest as KDeleteTopicsRequest
from kafka.protocol.admin import DescribeConfigsRequest as KDescribeConfigsRequest
from kafka.protocol.admin import DescribeConfigsResponse as KDescribeConfigsResponse
from kafka.protocol.admin import DescribeGroupsRequest as KDescribeGroupsRequest
from kafka.protocol.admin import DescribeGroupsResponse as KDescribeGroupsResponse
from kafka.protocol.admin import CreatePartitionsRequest as KCreatePartitionsRequest
from kafka.protocol.admin import CreatePartitionsResponse as KCreatePartitionsResponse
from kafka.protocol.admin import DeleteGroupsRequest as KDeleteGroupsRequest
from kafka.protocol.admin import DeleteRecordsRequest as KDeleteRecordsRequest
from kafka.protocol.admin import DeleteRecordsResponse as KDeleteRecordsResponse
from kafka.protocol.admin import DeleteGroupsResponse as KDeleteGroupsResponse
from kafka.protocol.admin import DescribeClusterRequest as KDescribeClusterRequest
from kafka.protocol.admin import ElectLeadersRequest as KElectLeadersRequest
from kafka.protocol.admin import ElectLeadersResponse as KElectLeadersResponse
from kafka.protocol.admin import DescribeClusterResponse as KDescribeClusterResponse
from kafka.protocol.admin import IncrementalAlterConfigsRequest as KIncrementalAlterConfigsRequest
from kafka.protocol.admin import IncrementalAlterConfigsResponse as KIncrementalAlterConfigsResponse
from kafka.protocol.admin import ListGroupsRequest as KListGroupsRequest
from kafka.protocol.admin import ListPartitionReassignmentsRequest as KListPartitionReassignmentsRequest
from kafka.protocol.admin import ListPartitionReassignmentsResponse as KListPartitionReassignmentsResponse
from kafka.protocol.admin import ListGroupsResponse as KListGroupsResponse
from kafka.protocol.admin import DeleteTopicsResponse as KDeleteTopicsResponse
from kafka.protocol.consumer import FetchRequest as KFetchRequest
from kafka.protocol.consumer import FetchResponse as KFetchResponse
from kafka.protocol.consumer import HeartbeatRequest as KHeartbeatRequest
from kafka.protocol.consumer import HeartbeatResponse as KHeartbeatResponse
from kafka.protocol.admin import AlterConfigsRequest as KAlterConfigsRequest
from kafka.protocol.admin import AlterConfigsResponse as KAlterConfigsResponse
from kafka.protocol.admin import DescribeLogDirsRequest as KDescribeLogDirsRequest
from kafka.protocol.admin import DescribeLogDirsResponse as KDescribeLogDirsResponse
from kafka.protocol.consumer import OffsetDeleteRequest as KOffsetDeleteRequest
from kafka.protocol.consumer import OffsetDeleteResponse as KOffsetDeleteResponse
from kafka.protocol.consumer import JoinGroupRequest as KJoinGroupRequest
from kafka.protocol.consumer import JoinGroupResponse as KJoinGroupResponse
from kafka.protocol.consumer import LeaveGroupRequest as KLeaveGroupRequest
from kafka.protocol.consumer import LeaveGroupResponse as KLeaveGroupResponse
from kafka.protocol.consumer import ListOffsetsRequest as KListOffsetsRequest
from kafka.protocol.consumer import ListOffsetsResponse as KListOffsetsResponse
from kafka.protocol.consumer import OffsetCommitRequest as KOffsetCommitRequest
from kafka.protocol.consumer import OffsetCommitResponse as KOffsetCommitResponse
from kafka.protocol.consumer import OffsetFetchRequest as KOffsetFetchRequest
from kafka.protocol.consumer import OffsetFetchResponse as KOffsetFetchResponse
from kafka.protocol.consumer import OffsetForLeaderEpochRequest as KOffsetForLeaderEpochRequest
from kafka.protocol.consumer import OffsetForLeaderEpochResponse as KOffsetForLeaderEpochResponse
from kafka.protocol.consumer import SyncGroupRequest as KSyncGroupRequest
from kafka.protocol.consumer import SyncGroupResponse as KSyncGroupResponse
from kafka.protocol.metadata import ApiVersionsRequest as KApiVersionsRequest
from kafka.protocol.metadata import ApiVersionsResponse as KApiVersionsResponse
from kafka.protocol.metadata import FindCoordinatorRequest as KFindCoordinatorRequest
from kafka.protocol.metadata import FindCoordinatorResponse as KFindCoordinatorResponse
from kafka.protocol.metadata import MetadataRequest as KMetadataRequest
from kafka.protocol.metadata import MetadataResponse as KMetadataResponse
from kafka.protocol.producer import InitProducerIdRequest as KInitProducerIdRequest
from kafka.protocol.producer import InitProducerIdResponse as KInitProducerIdResponse
from kafka.protocol.producer import ProduceRequest as KProduceRequest
from kafka.protocol.producer import ProduceResponse as KProduceResponse

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests import api_versions as av
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from kafka_ref.common.requests.create_topics import CreateTopicsRequest
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicState
from kafka_ref.common.requests.describe_configs import ConfigSource, DescribeConfigsRequest
from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest
from kafka_ref.common.requests.delete_groups import DeleteGroupsRequest
from kafka_ref.common.requests.delete_records import DeleteRecordsRequest
from kafka_ref.common.requests.describe_cluster import DescribeClusterRequest
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest
from kafka_ref.common.requests.incremental_alter_configs import IncrementalAlterConfigsRequest
from kafka_ref.common.requests.describe_groups import DescribeGroupsRequest
from kafka_ref.common.requests.list_groups import ListGroupsRequest
from kafka_ref.common.requests.list_partition_reassignments import ListPartitionReassignmentsRequest
from kafka_ref.common.requests.fetch import FetchRequest
from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka_ref.common.requests.heartbeat import HeartbeatRequest
from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest
from kafka_ref.common.requests.join_group import JoinGroupRequest
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, LeaveGroupResponse, MemberIdentity
from kafka_ref.common.requests.list_offsets import ListOffsetsRequest
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest
from kafka_ref.common.requests.offset_delete import OffsetDeleteRequest
from kafka_ref.common.requests.describe_log_dirs import DescribeLogDirsRequest
from kafka_ref.common.requests.alter_configs import AlterConfigsRequest
from kafka_ref.common.requests.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchResponse,
)
from kafka_ref.common.requests.offsets_for_leader_epoch import OffsetForLeaderEpochRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.requests.sync_group import SyncGroupRequest

# Where each broker's listener really is: {broker_id: (host, port)}; the Metadata and
# FindCoordinator adapters advertise these.
Addresses = dict[int, tuple[str, int]]


@dataclass(frozen=True)
class WireApi:
    """One API on the wire: schema classes, our dataclasses, advertised versions, adapters."""

    key: ApiKeys
    wire_request: Any
    wire_response: Any
    request_type: type
    min_version: int
    max_version: int
    # (wire message, version, our request) -> our request: old-version shapes.
    request_in: Callable[[Any, int, Any], Any] | None = None
    # (our response, version, wire message, addresses) -> None: fills old-version fields in place.
    response_out: Callable[[Any, int, Any, Addresses], None] | None = None

    @property
    def response_type(self) -> type:
        return self.request_type.RESPONSE_TYPE


# ---------------------------------------------------------------------------------- adapters


def _metadata_in(wire: Any, version: int, request: MetadataRequest) -> MetadataRequest:
    """Mirrors org.apache.kafka.common.requests.MetadataRequest#isAllTopics at version 0, where [] asks for all topics."""
    if version == 0 and not request.topics:
        return dataclasses.replace(request, topics=None)
    return request


def _metadata_out(response: MetadataResponse, version: int, wire: Any, addresses: Addresses) -> None:
    """Advertise every broker at its real listener address (the advertised listener)."""
    for broker in wire.brokers:
        if broker.node_id in addresses:
            broker.host, broker.port = addresses[broker.node_id]


def _describe_cluster_out(response: Any, version: int, wire: Any, addresses: Addresses) -> None:
    """Advertise every broker at its real listener address, as Metadata does."""
    for broker in wire.brokers:
        if broker.broker_id in addresses:
            broker.host, broker.port = addresses[broker.broker_id]


def _find_coordinator_in(wire: Any, version: int, request: FindCoordinatorRequest) -> FindCoordinatorRequest:
    """Mirrors org.apache.kafka.common.requests.FindCoordinatorRequest at versions before 4: one ``key``, not ``coordinator_keys``."""
    if version < 4:
        return dataclasses.replace(request, coordinator_keys=(wire.key,))
    return request


def _find_coordinator_out(response: FindCoordinatorResponse, version: int, wire: Any, addresses: Addresses) -> None:
    """Mirrors org.apache.kafka.common.requests.FindCoordinatorResponse at versions before 4 (one coordinator at top level).

    Every version advertises the coordinator at its real listener port.
    """
    entries = wire.coordinators if version >= 4 else []
    for entry in entries:
        if entry.node_id in addresses:
            entry.host, entry.port = addresses[entry.node_id]
    if version < 4:
        first = response.coordinators[0]
        wire.error_code = first.error_code
        wire.error_message = first.error_message
        wire.node_id = first.node_id
        wire.host, wire.port = addresses.get(first.node_id, (first.host, first.port))


def _leave_group_in(wire: Any, version: int, request: LeaveGroupRequest) -> LeaveGroupRequest:
    """Mirrors org.apache.kafka.common.requests.LeaveGroupRequest at versions before 3: one ``member_id``, not a member list."""
    if version < 3:
        return dataclasses.replace(request, members=(MemberIdentity(member_id=wire.member_id),))
    return request


def _leave_group_out(response: LeaveGroupResponse, version: int, wire: Any, addresses: Addresses) -> None:
    """Mirrors the constructor LeaveGroupResponse(data, version) before v3: only a top-level error, the
    group's if it failed, else its one member's (the request named exactly one)."""
    if version < 3:
        if response.error_code != 0 or len(response.members) != 1:
            wire.error_code = response.error_code
        else:
            wire.error_code = response.members[0].error_code


def _offset_fetch_in(wire: Any, version: int, request: OffsetFetchRequest) -> OffsetFetchRequest:
    """Mirrors org.apache.kafka.common.requests.OffsetFetchRequest at versions before 8: one group (``group_id`` + ``topics``)."""
    if version < 8:
        topics = None
        if wire.topics is not None:
            from kafka_ref.common.requests.offset_fetch import OffsetFetchRequestTopics

            topics = tuple(OffsetFetchRequestTopics(name=t.name, partition_indexes=tuple(t.partition_indexes))
                           for t in wire.topics)
        return dataclasses.replace(request, groups=(OffsetFetchRequestGroup(group_id=wire.group_id, topics=topics),))
    return request


def _offset_fetch_out(response: OffsetFetchResponse, version: int, wire: Any, addresses: Addresses) -> None:
    """Mirrors org.apache.kafka.common.requests.OffsetFetchResponse at versions before 8: one group's error and topics at top level."""
    if version < 8 and response.groups:
        from kafka_ref.wire.codec import to_wire

        group = response.groups[0]
        wire.error_code = group.error_code
        topics_field = KOffsetFetchResponse.fields["topics"]
        wire.topics = [to_wire(t, topics_field.data_class, version, topics_field) for t in group.topics]


def _delete_topics_in(wire: Any, version: int, request: DeleteTopicsRequest) -> DeleteTopicsRequest:
    """Mirrors org.apache.kafka.common.requests.DeleteTopicsRequest#topicNames at versions before 6 (``topic_names``)."""
    if version < 6:
        return dataclasses.replace(request, topics=tuple(DeleteTopicState(name=n) for n in wire.topic_names))
    return request


def _describe_configs_out(response: Any, version: int, wire: Any, addresses: Addresses) -> None:
    """Mirrors org.apache.kafka.common.requests.DescribeConfigsResponse at version 0: ``is_default`` per entry."""
    if version == 0:
        for ours, result in zip(response.results, wire.results):
            for our_entry, entry in zip(ours.configs, result.configs):
                entry.is_default = our_entry.config_source == ConfigSource.DEFAULT_CONFIG


WIRE_APIS: dict[int, WireApi] = {api.key: api for api in (
    WireApi(ApiKeys.PRODUCE, KProduceRequest, KProduceResponse, ProduceRequest, 3, 9),
    WireApi(ApiKeys.FETCH, KFetchRequest, KFetchResponse, FetchRequest, 4, 12),
    WireApi(ApiKeys.LIST_OFFSETS, KListOffsetsRequest, KListOffsetsResponse, ListOffsetsRequest, 1, 7),
    WireApi(ApiKeys.METADATA, KMetadataRequest, KMetadataResponse, MetadataRequest, 0, 12,
            _metadata_in, _metadata_out),
    WireApi(ApiKeys.OFFSET_COMMIT, KOffsetCommitRequest, KOffsetCommitResponse, OffsetCommitRequest, 1, 9),
    WireApi(ApiKeys.OFFSET_FETCH, KOffsetFetchRequest, KOffsetFetchResponse, OffsetFetchRequest, 1, 9,
            _offset_fetch_in, _offset_fetch_out),
    WireApi(ApiKeys.FIND_COORDINATOR, KFindCoordinatorRequest, KFindCoordinatorResponse, FindCoordinatorRequest,
            0, 4, _find_coordinator_in, _find_coordinator_out),
    WireApi(ApiKeys.JOIN_GROUP, KJoinGroupRequest, KJoinGroupResponse, JoinGroupRequest, 0, 9),
    WireApi(ApiKeys.HEARTBEAT, KHeartbeatRequest, KHeartbeatResponse, HeartbeatRequest, 0, 4),
    WireApi(ApiKeys.LEAVE_GROUP, KLeaveGroupRequest, KLeaveGroupResponse, LeaveGroupRequest, 0, 5,
            _leave_group_in, _leave_group_out),
    WireApi(ApiKeys.SYNC_GROUP, KSyncGroupRequest, KSyncGroupResponse, SyncGroupRequest, 0, 5),
    WireApi(ApiKeys.API_VERSIONS, KApiVersionsRequest, KApiVersionsResponse, av.ApiVersionsRequest,
            av.API_VERSIONS_OLDEST_VERSION, av.API_VERSIONS_LATEST_VERSION),
    WireApi(ApiKeys.CREATE_TOPICS, KCreateTopicsRequest, KCreateTopicsResponse, CreateTopicsRequest, 0, 7),
    WireApi(ApiKeys.DELETE_TOPICS, KDeleteTopicsRequest, KDeleteTopicsResponse, DeleteTopicsRequest, 0, 6,
            _delete_topics_in),
    WireApi(ApiKeys.OFFSET_FOR_LEADER_EPOCH, KOffsetForLeaderEpochRequest, KOffsetForLeaderEpochResponse,
            OffsetForLeaderEpochRequest, 2, 4),
    WireApi(ApiKeys.LIST_GROUPS, KListGroupsRequest, KListGroupsResponse, ListGroupsRequest, 0, 5),
    WireApi(ApiKeys.DESCRIBE_GROUPS, KDescribeGroupsRequest, KDescribeGroupsResponse, DescribeGroupsRequest, 0, 5),
    WireApi(ApiKeys.DESCRIBE_CONFIGS, KDescribeConfigsRequest, KDescribeConfigsResponse, DescribeConfigsRequest, 0, 4,
            None, _describe_configs_out),
    WireApi(ApiKeys.INIT_PRODUCER_ID, KInitProducerIdRequest, KInitProducerIdResponse, InitProducerIdRequest, 0, 4),
    WireApi(ApiKeys.INCREMENTAL_ALTER_CONFIGS, KIncrementalAlterConfigsRequest, KIncrementalAlterConfigsResponse,
            IncrementalAlterConfigsRequest, 0, 1),
    WireApi(ApiKeys.CREATE_PARTITIONS, KCreatePartitionsRequest, KCreatePartitionsResponse, CreatePartitionsRequest, 0, 3),
    WireApi(ApiKeys.DELETE_GROUPS, KDeleteGroupsRequest, KDeleteGroupsResponse, DeleteGroupsRequest, 0, 2),
    WireApi(ApiKeys.DELETE_RECORDS, KDeleteRecordsRequest, KDeleteRecordsResponse, DeleteRecordsRequest, 0, 2),
    WireApi(ApiKeys.ELECT_LEADERS, KElectLeadersRequest, KElectLeadersResponse, ElectLeadersRequest, 0, 2),
    WireApi(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, KAlterPartitionReassignmentsRequest,
            KAlterPartitionReassignmentsResponse, AlterPartitionReassignmentsRequest, 0, 0),
    WireApi(ApiKeys.LIST_PARTITION_REASSIGNMENTS, KListPartitionReassignmentsRequest,
            KListPartitionReassignmentsResponse, ListPartitionReassignmentsRequest, 0, 0),
    WireApi(ApiKeys.DESCRIBE_CLUSTER, KDescribeClusterRequest, KDescribeClusterResponse, DescribeClusterRequest, 0, 1,
            None, _describe_cluster_out),
    WireApi(ApiKeys.OFFSET_DELETE, KOffsetDeleteRequest, KOffsetDeleteResponse, OffsetDeleteRequest, 0, 0),
    WireApi(ApiKeys.DESCRIBE_LOG_DIRS, KDescribeLogDirsRequest, KDescribeLogDirsResponse, DescribeLogDirsRequest, 1, 4),
    WireApi(ApiKeys.ALTER_CONFIGS, KAlterConfigsRequest, KAlterConfigsResponse, AlterConfigsRequest, 0, 2),
)}


def register_extra_api(api: WireApi) -> None:
    """Add an API to the table (used by modules that bring their own dataclasses and handler)."""
    WIRE_APIS[api.key] = api


def api_versions_response(error_code: int = 0) -> av.ApiVersionsResponse:
    """The ApiVersions answer: exactly the table above (our ApiVersionManager#apiVersionResponse)."""
    return av.ApiVersionsResponse(error_code=error_code, api_keys=tuple(
        av.ApiVersion(api_key=int(api.key), min_version=api.min_version, max_version=api.max_version)
        for api in sorted(WIRE_APIS.values(), key=lambda a: int(a.key))))


def handle_api_versions_request(envelope: Any) -> None:
    """Mirrors kafka.server.KafkaApis#handleApiVersionsRequest.

    Follows Kafka 3.7. 1. A request whose version the broker does not know was parsed as v0 by
    the listener and is answered UNSUPPORTED_VERSION with the ApiVersions range (KIP-511);
    2. a v3+ request with an invalid client software name or version gets INVALID_REQUEST;
    3. otherwise the supported APIs.
    """
    request: av.ApiVersionsRequest = envelope.request
    version = getattr(envelope, "api_version", None)
    # 1. Unknown version: the listener flags it by version -1.
    if version == -1:
        envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
    # 2. KIP-511 names must be valid from v3.
    elif version is not None and version >= 3 and not request.is_valid():
        envelope.respond(request.get_error_response(Errors.INVALID_REQUEST.code))
    # 3. The table.
    else:
        envelope.respond(api_versions_response())
