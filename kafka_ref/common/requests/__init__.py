"""Kafka's requests and responses as frozen dataclasses, one module per API.

Mirrors the package org.apache.kafka.common.requests together with the generated message
classes of org.apache.kafka.common.message. Each message keeps the field names (in
snake_case), nesting and defaults of Kafka's JSON schema at its newest Kafka 3.8 version;
arrays are tuples and error codes are plain ints (see kafka_ref.common.errors.Errors).

Every request class has ``API_KEY``, ``API_NAME``, ``RESPONSE_TYPE`` and
``get_error_response(error_code, throttle_time_ms=0)``; every response has ``API_KEY``,
``API_NAME``, ``REQUEST_TYPE`` and ``error_counts()``. ``REQUEST_TYPES`` / ``RESPONSE_TYPES``
map an ApiKeys member to the classes defined here.

Two Kafka messages each define a struct named EpochEndOffset. The OffsetForLeaderEpoch one is
exported as ``EpochEndOffset``; the Fetch one (a fetch's diverging epoch) as
``FetchEpochEndOffset`` (it is ``kafka_ref.common.requests.fetch.EpochEndOffset``).
"""

from kafka_ref.common.requests.abstract import (
    AbstractControlRequest,
    AbstractRequest,
    AbstractResponse,
    ControlRequestType,
    error_counts_of,
    update_error_counts,
)
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.requests.api_keys import ApiKeys
from kafka_ref.common.requests.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)
from kafka_ref.common.requests.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    RemainingPartition,
)
from kafka_ref.common.requests.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateableTopicConfig,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from kafka_ref.common.requests.delete_topics import (
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)
from kafka_ref.common.requests.fetch import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    ForgottenTopic,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
    ReplicaState,
    SnapshotId,
)
from kafka_ref.common.requests.fetch import EpochEndOffset as FetchEpochEndOffset
from kafka_ref.common.requests.find_coordinator import (
    Coordinator,
    CoordinatorType,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka_ref.common.requests.header import RequestHeader, ResponseHeader
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    LeaderAndIsrTopicState,
)
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
)
from kafka_ref.common.requests.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafka_ref.common.requests.produce import (
    BatchIndexAndErrorMessage,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
)
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    UpdateMetadataTopicState,
)

from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest  # noqa: E402
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest, ElectLeadersResponse, ElectionType  # noqa: E402
from kafka_ref.common.requests.heartbeat import HeartbeatRequest  # noqa: E402
from kafka_ref.common.requests.join_group import JoinGroupRequest  # noqa: E402
from kafka_ref.common.requests.leave_group import LeaveGroupRequest  # noqa: E402
from kafka_ref.common.requests.offset_commit import OffsetCommitRequest  # noqa: E402
from kafka_ref.common.requests.offset_fetch import OffsetFetchRequest  # noqa: E402
from kafka_ref.common.requests.sync_group import SyncGroupRequest  # noqa: E402

_REQUEST_CLASSES: tuple[type[AbstractRequest], ...] = (
    ProduceRequest,
    FetchRequest,
    ListOffsetsRequest,
    MetadataRequest,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
    ControlledShutdownRequest,
    FindCoordinatorRequest,
    ApiVersionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    OffsetForLeaderEpochRequest,
    AlterPartitionRequest,
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    AlterPartitionReassignmentsRequest,
    ElectLeadersRequest,
)

REQUEST_TYPES: dict[ApiKeys, type[AbstractRequest]] = {cls.API_KEY: cls for cls in _REQUEST_CLASSES}
RESPONSE_TYPES: dict[ApiKeys, type[AbstractResponse]] = {cls.API_KEY: cls.RESPONSE_TYPE for cls in _REQUEST_CLASSES}

__all__ = [
    "AbortedTransaction",
    "AbstractControlRequest",
    "AbstractRequest",
    "AbstractResponse",
    "AlterPartitionPartitionData",
    "AlterPartitionRequest",
    "AlterPartitionResponse",
    "AlterPartitionResponsePartitionData",
    "AlterPartitionResponseTopicData",
    "AlterPartitionTopicData",
    "ApiKeys",
    "ApiVersion",
    "ApiVersionsRequest",
    "ApiVersionsResponse",
    "BatchIndexAndErrorMessage",
    "BrokerState",
    "ControlRequestType",
    "ControlledShutdownRequest",
    "ControlledShutdownResponse",
    "Coordinator",
    "CoordinatorType",
    "CreatableReplicaAssignment",
    "CreatableTopic",
    "CreatableTopicConfigs",
    "CreatableTopicResult",
    "CreateTopicsRequest",
    "CreateTopicsResponse",
    "CreateableTopicConfig",
    "DeletableTopicResult",
    "DeleteTopicState",
    "DeleteTopicsRequest",
    "DeleteTopicsResponse",
    "EpochEndOffset",
    "FetchEpochEndOffset",
    "FetchPartition",
    "FetchRequest",
    "FetchResponse",
    "FetchTopic",
    "FetchableTopicResponse",
    "FinalizedFeatureKey",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "ForgottenTopic",
    "LeaderAndIsrLiveLeader",
    "LeaderAndIsrPartitionError",
    "LeaderAndIsrPartitionState",
    "LeaderAndIsrRequest",
    "LeaderAndIsrResponse",
    "LeaderAndIsrTopicError",
    "LeaderAndIsrTopicState",
    "LeaderIdAndEpoch",
    "ListOffsetsPartition",
    "ListOffsetsPartitionResponse",
    "ListOffsetsRequest",
    "ListOffsetsResponse",
    "ListOffsetsTopic",
    "ListOffsetsTopicResponse",
    "MetadataRequest",
    "MetadataRequestTopic",
    "MetadataResponse",
    "MetadataResponseBroker",
    "MetadataResponsePartition",
    "MetadataResponseTopic",
    "NodeEndpoint",
    "OffsetForLeaderEpochRequest",
    "OffsetForLeaderEpochResponse",
    "OffsetForLeaderPartition",
    "OffsetForLeaderTopic",
    "OffsetForLeaderTopicResult",
    "OffsetsForLeaderEpochRequest",
    "OffsetsForLeaderEpochResponse",
    "PartitionData",
    "PartitionProduceData",
    "PartitionProduceResponse",
    "ProduceRequest",
    "ProduceResponse",
    "AlterPartitionReassignmentsRequest",
    "ElectLeadersRequest",
    "ElectLeadersResponse",
    "ElectionType",
    "HeartbeatRequest",
    "JoinGroupRequest",
    "LeaveGroupRequest",
    "OffsetCommitRequest",
    "OffsetFetchRequest",
    "REQUEST_TYPES",
    "SyncGroupRequest",
    "RESPONSE_TYPES",
    "RemainingPartition",
    "ReplicaState",
    "RequestHeader",
    "ResponseHeader",
    "SnapshotId",
    "StopReplicaPartitionError",
    "StopReplicaPartitionState",
    "StopReplicaRequest",
    "StopReplicaResponse",
    "StopReplicaTopicState",
    "SupportedFeatureKey",
    "TopicProduceData",
    "TopicProduceResponse",
    "UpdateMetadataBroker",
    "UpdateMetadataEndpoint",
    "UpdateMetadataPartitionState",
    "UpdateMetadataRequest",
    "UpdateMetadataResponse",
    "UpdateMetadataTopicState",
    "error_counts_of",
    "update_error_counts",
]
