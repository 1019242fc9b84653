"""Tests for kafka_ref.common.requests: the request/response dataclasses and their helpers."""

from __future__ import annotations

import dataclasses

import pytest

from kafka_ref.common.errors import Errors, InvalidRequestException
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests import (
    REQUEST_TYPES,
    RESPONSE_TYPES,
    AbstractControlRequest,
    AbstractRequest,
    AbstractResponse,
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
    AlterPartitionTopicData,
    ApiKeys,
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    BrokerState,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ControlRequestType,
    Coordinator,
    CoordinatorType,
    CreatableTopic,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
    EpochEndOffset,
    FetchableTopicResponse,
    FetchEpochEndOffset,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    ForgottenTopic,
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    LeaderAndIsrTopicState,
    LeaderIdAndEpoch,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    PartitionData,
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    ReplicaState,
    RequestHeader,
    ResponseHeader,
    SnapshotId,
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
    TopicProduceData,
    TopicProduceResponse,
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    UpdateMetadataTopicState,
)
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

NOT_LEADER_OR_FOLLOWER = Errors.NOT_LEADER_OR_FOLLOWER.code  # 6
STALE_CONTROLLER_EPOCH = Errors.STALE_CONTROLLER_EPOCH.code  # 11
NOT_CONTROLLER = Errors.NOT_CONTROLLER.code  # 41
UNKNOWN_TOPIC_OR_PARTITION = Errors.UNKNOWN_TOPIC_OR_PARTITION.code  # 3

FOO_ID = Uuid(1, 1)
BAR_ID = Uuid(2, 2)

ALL_REQUESTS = sorted(REQUEST_TYPES.values(), key=lambda cls: cls.API_KEY)
ALL_RESPONSES = [cls.RESPONSE_TYPE for cls in ALL_REQUESTS]


def _records(*values: bytes) -> MemoryRecords:
    return MemoryRecords.with_records([SimpleRecord(value=v) for v in values])


# --------------------------------------------------------------------------------------------
# ApiKeys, header, type mappings
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "api_id", "api_name"),
    [
        (ApiKeys.PRODUCE, 0, "Produce"),
        (ApiKeys.FETCH, 1, "Fetch"),
        (ApiKeys.LIST_OFFSETS, 2, "ListOffsets"),
        (ApiKeys.METADATA, 3, "Metadata"),
        (ApiKeys.LEADER_AND_ISR, 4, "LeaderAndIsr"),
        (ApiKeys.STOP_REPLICA, 5, "StopReplica"),
        (ApiKeys.UPDATE_METADATA, 6, "UpdateMetadata"),
        (ApiKeys.CONTROLLED_SHUTDOWN, 7, "ControlledShutdown"),
        (ApiKeys.OFFSET_COMMIT, 8, "OffsetCommit"),
        (ApiKeys.OFFSET_FETCH, 9, "OffsetFetch"),
        (ApiKeys.FIND_COORDINATOR, 10, "FindCoordinator"),
        (ApiKeys.JOIN_GROUP, 11, "JoinGroup"),
        (ApiKeys.HEARTBEAT, 12, "Heartbeat"),
        (ApiKeys.LEAVE_GROUP, 13, "LeaveGroup"),
        (ApiKeys.SYNC_GROUP, 14, "SyncGroup"),
        (ApiKeys.API_VERSIONS, 18, "ApiVersions"),
        (ApiKeys.CREATE_TOPICS, 19, "CreateTopics"),
        (ApiKeys.DELETE_TOPICS, 20, "DeleteTopics"),
        (ApiKeys.OFFSET_FOR_LEADER_EPOCH, 23, "OffsetForLeaderEpoch"),
        (ApiKeys.ALTER_PARTITION, 56, "AlterPartition"),
        (ApiKeys.DESCRIBE_TOPIC_PARTITIONS, 75, "DescribeTopicPartitions"),
    ],
)
def test_api_key_ids(key: ApiKeys, api_id: int, api_name: str) -> None:
    """Kafka's permanent ids, looked up both ways."""
    assert key == api_id
    assert key.id == api_id
    assert key.api_name == api_name
    assert ApiKeys.for_id(api_id) is key
    assert ApiKeys.has_id(api_id)


def test_api_keys_are_dense_and_cluster_actions_marked() -> None:
    """Ids run 0..75 without gaps; the controller APIs are cluster actions."""
    assert [k.id for k in ApiKeys] == list(range(76))
    assert {k for k in ApiKeys if k.cluster_action} == {
        ApiKeys.LEADER_AND_ISR,
        ApiKeys.STOP_REPLICA,
        ApiKeys.UPDATE_METADATA,
        ApiKeys.CONTROLLED_SHUTDOWN,
        ApiKeys.WRITE_TXN_MARKERS,
        ApiKeys.VOTE,
        ApiKeys.BEGIN_QUORUM_EPOCH,
        ApiKeys.END_QUORUM_EPOCH,
        ApiKeys.DESCRIBE_QUORUM,
        ApiKeys.ALTER_PARTITION,
        ApiKeys.UPDATE_FEATURES,
        ApiKeys.ENVELOPE,
        ApiKeys.BROKER_REGISTRATION,
        ApiKeys.BROKER_HEARTBEAT,
        ApiKeys.ALLOCATE_PRODUCER_IDS,
    }
    assert not ApiKeys.FETCH.cluster_action


def test_api_keys_for_unknown_id() -> None:
    """Mirrors ApiKeysTest#testForIdWithInvalidIdLow / High."""
    with pytest.raises(ValueError, match="Unexpected api key: -1"):
        ApiKeys.for_id(-1)
    with pytest.raises(ValueError, match="Unexpected api key: 10000"):
        ApiKeys.for_id(10000)
    assert not ApiKeys.has_id(10000)


def test_request_header() -> None:
    header = RequestHeader(1, 16, 42, "consumer-1")
    assert header.api_key is ApiKeys.FETCH
    assert (header.api_version, header.correlation_id, header.client_id) == (16, 42, "consumer-1")
    assert header.to_response_header() == ResponseHeader(correlation_id=42)
    assert RequestHeader(ApiKeys.PRODUCE).client_id == ""
    with pytest.raises(InvalidRequestException, match="Unknown API key 999"):
        RequestHeader(999)
    with pytest.raises(dataclasses.FrozenInstanceError):
        header.correlation_id = 7  # type: ignore[misc]


def test_request_and_response_types_are_linked() -> None:
    assert len(REQUEST_TYPES) == 22
    for api_key, request_type in REQUEST_TYPES.items():
        response_type = RESPONSE_TYPES[api_key]
        assert request_type.API_KEY is api_key
        assert response_type.API_KEY is api_key
        assert request_type.API_NAME == response_type.API_NAME == api_key.api_name
        assert request_type.RESPONSE_TYPE is response_type
        assert response_type.REQUEST_TYPE is request_type
        assert issubclass(request_type, AbstractRequest)
        assert issubclass(response_type, AbstractResponse)
    assert RESPONSE_TYPES[ApiKeys.LEADER_AND_ISR] is LeaderAndIsrResponse
    assert issubclass(LeaderAndIsrRequest, AbstractControlRequest)
    assert issubclass(StopReplicaRequest, AbstractControlRequest)
    assert issubclass(UpdateMetadataRequest, AbstractControlRequest)
    assert OffsetsForLeaderEpochRequest is OffsetForLeaderEpochRequest


@pytest.mark.parametrize("cls", ALL_REQUESTS + ALL_RESPONSES, ids=lambda c: c.__name__)
def test_messages_are_frozen_keyword_only_and_slotted(cls: type) -> None:
    message = cls()
    first_field = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(message, first_field, 1)
    with pytest.raises(TypeError):
        cls(1)
    assert not hasattr(message, "__dict__")
    assert message == cls()
    assert hash(message) == hash(cls())


@pytest.mark.parametrize("cls", ALL_REQUESTS, ids=lambda c: c.__name__)
def test_error_response_of_empty_request(cls: type) -> None:
    """Every request answers with its own response type (ProduceRequest with acks=0: none)."""
    response = cls().get_error_response(NOT_CONTROLLER)
    if cls is ProduceRequest:
        assert response is None
        response = ProduceRequest(acks=1).get_error_response(NOT_CONTROLLER)
    assert type(response) is cls.RESPONSE_TYPE
    assert isinstance(response.error_counts(), dict)


def test_defaults_follow_kafka_schemas() -> None:
    """A sample of defaults from the 3.8 JSON schemas (unstated ints default to 0)."""
    fetch = FetchRequest()
    assert (fetch.replica_id, fetch.max_bytes, fetch.isolation_level) == (-1, 0x7FFFFFFF, 0)
    assert (fetch.session_id, fetch.session_epoch, fetch.rack_id, fetch.cluster_id) == (0, -1, "", None)
    assert fetch.replica_state == ReplicaState(replica_id=-1, replica_epoch=-1)
    part = FetchPartition()
    assert (part.current_leader_epoch, part.last_fetched_epoch, part.log_start_offset) == (-1, -1, -1)
    assert (part.fetch_offset, part.partition_max_bytes) == (0, 0)
    data = PartitionData()
    assert (data.high_watermark, data.last_stable_offset, data.log_start_offset) == (0, -1, -1)
    assert data.diverging_epoch == FetchEpochEndOffset(epoch=-1, end_offset=-1)
    assert data.current_leader == LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)
    assert data.snapshot_id == SnapshotId(end_offset=-1, epoch=-1)
    assert (data.preferred_read_replica, data.aborted_transactions) == (-1, ())
    assert data.records is MemoryRecords.EMPTY
    assert FetchResponse().session_id == 0

    state = LeaderAndIsrPartitionState()
    assert (state.is_new, state.leader_recovery_state, state.adding_replicas) == (False, 0, ())
    assert (LeaderAndIsrRequest().broker_epoch, LeaderAndIsrRequest().type) == (-1, 0)
    assert LeaderAndIsrRequest().is_kraft_controller is False
    assert LeaderAndIsrTopicState().topic_id == ZERO_UUID
    assert StopReplicaPartitionState().leader_epoch == -1
    assert StopReplicaRequest().broker_epoch == -1
    assert UpdateMetadataRequest().broker_epoch == -1
    assert UpdateMetadataBroker().rack == ""

    produced = PartitionProduceResponse()
    assert (produced.log_append_time_ms, produced.log_start_offset, produced.error_message) == (-1, -1, None)
    assert ProduceRequest().transactional_id is None
    assert PartitionProduceData().records is MemoryRecords.EMPTY

    assert ListOffsetsPartition().current_leader_epoch == -1
    offsets = ListOffsetsPartitionResponse()
    assert (offsets.timestamp, offsets.offset, offsets.leader_epoch) == (-1, -1, -1)
    assert OffsetForLeaderEpochRequest().replica_id == -2
    assert OffsetForLeaderPartition().current_leader_epoch == -1
    assert (EpochEndOffset().leader_epoch, EpochEndOffset().end_offset) == (-1, -1)

    assert MetadataRequest().allow_auto_topic_creation is True
    assert MetadataRequest().topics == ()
    metadata = MetadataResponse()
    assert (metadata.controller_id, metadata.cluster_id) == (-1, None)
    assert MetadataResponseTopic().topic_authorized_operations == -2147483648
    assert MetadataResponsePartition().leader_epoch == -1
    assert MetadataResponseBroker().rack is None

    assert (AlterPartitionRequest().broker_epoch, BrokerState().broker_epoch) == (-1, -1)
    assert AlterPartitionPartitionData().leader_recovery_state == 0
    assert ControlledShutdownRequest().broker_epoch == -1
    assert (CreateTopicsRequest().timeout_ms, CreateTopicsRequest().validate_only) == (60000, False)
    result = CreatableTopicResult()
    assert (result.num_partitions, result.replication_factor, result.error_message) == (-1, -1, "")
    assert DeleteTopicState().name is None
    assert DeletableTopicResult().error_message is None
    assert FindCoordinatorRequest().key_type == CoordinatorType.GROUP == 0
    versions = ApiVersionsResponse()
    assert (versions.finalized_features_epoch, versions.zk_migration_ready) == (-1, False)


# --------------------------------------------------------------------------------------------
# LeaderAndIsr
# --------------------------------------------------------------------------------------------


def _leader_and_isr_request() -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        controller_id=1,
        controller_epoch=3,
        broker_epoch=77,
        topic_states=(
            LeaderAndIsrTopicState(
                topic_name="foo",
                topic_id=FOO_ID,
                partition_states=(
                    LeaderAndIsrPartitionState(partition_index=0, leader=1, leader_epoch=5, isr=(1, 2), replicas=(1, 2)),
                    LeaderAndIsrPartitionState(partition_index=1, leader=2, leader_epoch=6, isr=(2,), replicas=(1, 2)),
                ),
            ),
            LeaderAndIsrTopicState(
                topic_name="bar",
                topic_id=BAR_ID,
                partition_states=(LeaderAndIsrPartitionState(partition_index=0, leader=2, is_new=True),),
            ),
        ),
        live_leaders=(
            LeaderAndIsrLiveLeader(broker_id=1, host_name="h1", port=9092),
            LeaderAndIsrLiveLeader(broker_id=2, host_name="h2", port=9093),
        ),
    )


def test_leader_and_isr_partition_states_are_flattened_with_topic_names() -> None:
    """Mirrors LeaderAndIsrRequestTest#testVersionLogic (topic names in the flat view)."""
    request = _leader_and_isr_request()
    states = list(request.partition_states())
    assert [(s.topic_name, s.partition_index, s.leader, s.leader_epoch) for s in states] == [
        ("foo", 0, 1, 5),
        ("foo", 1, 2, 6),
        ("bar", 0, 2, 0),
    ]
    assert states[1].isr == (2,)
    assert states[2].is_new is True
    assert states[0].topic_partition() == TopicPartition("foo", 0)
    # The nested messages keep Kafka's shape: names live on the topic state.
    assert request.topic_states[0].partition_states[0].topic_name == ""
    assert request.topic_ids() == {"foo": FOO_ID, "bar": BAR_ID}
    assert request.request_type() is ControlRequestType.UNKNOWN


def test_leader_and_isr_build_groups_by_topic() -> None:
    request = LeaderAndIsrRequest.build(
        controller_id=1,
        controller_epoch=3,
        broker_epoch=77,
        partition_states=[
            LeaderAndIsrPartitionState(topic_name="foo", partition_index=0),
            LeaderAndIsrPartitionState(topic_name="bar", partition_index=0),
            LeaderAndIsrPartitionState(topic_name="foo", partition_index=1),
        ],
        topic_ids={"foo": FOO_ID},
        live_leaders=[LeaderAndIsrLiveLeader(broker_id=1, host_name="h1", port=9092)],
        type=ControlRequestType.FULL,
    )
    assert [(t.topic_name, t.topic_id, [p.partition_index for p in t.partition_states]) for t in request.topic_states] == [
        ("foo", FOO_ID, [0, 1]),
        ("bar", ZERO_UUID, [0]),
    ]
    assert request.type == 2 and type(request.type) is int
    assert request.live_leaders == (LeaderAndIsrLiveLeader(broker_id=1, host_name="h1", port=9092),)


def test_leader_and_isr_error_response_covers_every_partition() -> None:
    """Mirrors LeaderAndIsrRequestTest#testGetErrorResponse."""
    request = _leader_and_isr_request()
    response = request.get_error_response(STALE_CONTROLLER_EPOCH)
    assert response == LeaderAndIsrResponse(
        error_code=STALE_CONTROLLER_EPOCH,
        topics=(
            LeaderAndIsrTopicError(
                topic_id=FOO_ID,
                partition_errors=(
                    LeaderAndIsrPartitionError(partition_index=0, error_code=STALE_CONTROLLER_EPOCH),
                    LeaderAndIsrPartitionError(partition_index=1, error_code=STALE_CONTROLLER_EPOCH),
                ),
            ),
            LeaderAndIsrTopicError(
                topic_id=BAR_ID,
                partition_errors=(LeaderAndIsrPartitionError(partition_index=0, error_code=STALE_CONTROLLER_EPOCH),),
            ),
        ),
    )
    names = {topic_id: name for name, topic_id in request.topic_ids().items()}
    assert response.partition_errors(names) == {
        TopicPartition("foo", 0): STALE_CONTROLLER_EPOCH,
        TopicPartition("foo", 1): STALE_CONTROLLER_EPOCH,
        TopicPartition("bar", 0): STALE_CONTROLLER_EPOCH,
    }
    # Mirrors LeaderAndIsrResponseTest#testErrorCountsFromGetErrorResponse: 3 partitions + top level.
    assert response.error_counts() == {STALE_CONTROLLER_EPOCH: 4}
    # A topic id the caller cannot name is left out.
    assert response.partition_errors({FOO_ID: "foo"}) == {
        TopicPartition("foo", 0): STALE_CONTROLLER_EPOCH,
        TopicPartition("foo", 1): STALE_CONTROLLER_EPOCH,
    }


def test_leader_and_isr_response_error_counts_without_top_level_error() -> None:
    """Mirrors LeaderAndIsrResponseTest#testErrorCountsWithTopLevelError / NoTopLevelError."""
    response = LeaderAndIsrResponse(
        error_code=0,
        topics=(
            LeaderAndIsrTopicError(
                topic_id=FOO_ID,
                partition_errors=(
                    LeaderAndIsrPartitionError(partition_index=0, error_code=0),
                    LeaderAndIsrPartitionError(partition_index=1, error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code),
                ),
            ),
        ),
    )
    assert response.error_counts() == {0: 2, Errors.CLUSTER_AUTHORIZATION_FAILED.code: 1}


# --------------------------------------------------------------------------------------------
# StopReplica and UpdateMetadata
# --------------------------------------------------------------------------------------------


def test_stop_replica_request_and_error_response() -> None:
    """Mirrors StopReplicaRequestTest#testGetErrorResponse and StopReplicaResponseTest#testErrorCountsWithTopLevelError."""
    request = StopReplicaRequest(
        controller_id=0,
        controller_epoch=2,
        broker_epoch=10,
        topic_states=(
            StopReplicaTopicState(
                topic_name="foo",
                partition_states=(
                    StopReplicaPartitionState(partition_index=0, leader_epoch=4, delete_partition=True),
                    StopReplicaPartitionState(partition_index=1, leader_epoch=-2, delete_partition=True),
                ),
            ),
            StopReplicaTopicState(topic_name="bar", partition_states=(StopReplicaPartitionState(partition_index=3),)),
        ),
    )
    assert request.partition_states() == {
        TopicPartition("foo", 0): StopReplicaPartitionState(partition_index=0, leader_epoch=4, delete_partition=True),
        TopicPartition("foo", 1): StopReplicaPartitionState(partition_index=1, leader_epoch=-2, delete_partition=True),
        TopicPartition("bar", 3): StopReplicaPartitionState(partition_index=3, leader_epoch=-1, delete_partition=False),
    }
    assert list(request.topic_partitions()) == [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 3)]

    response = request.get_error_response(STALE_CONTROLLER_EPOCH)
    assert response.error_code == STALE_CONTROLLER_EPOCH
    assert response.partition_errors == (
        StopReplicaPartitionError(topic_name="foo", partition_index=0, error_code=STALE_CONTROLLER_EPOCH),
        StopReplicaPartitionError(topic_name="foo", partition_index=1, error_code=STALE_CONTROLLER_EPOCH),
        StopReplicaPartitionError(topic_name="bar", partition_index=3, error_code=STALE_CONTROLLER_EPOCH),
    )
    assert response.partition_error_map() == {
        TopicPartition("foo", 0): STALE_CONTROLLER_EPOCH,
        TopicPartition("foo", 1): STALE_CONTROLLER_EPOCH,
        TopicPartition("bar", 3): STALE_CONTROLLER_EPOCH,
    }
    assert response.error_counts() == {STALE_CONTROLLER_EPOCH: 4}
    ok = StopReplicaResponse(
        partition_errors=(
            StopReplicaPartitionError(topic_name="foo", partition_index=0),
            StopReplicaPartitionError(topic_name="foo", partition_index=1, error_code=Errors.KAFKA_STORAGE_ERROR.code),
        )
    )
    assert ok.error_counts() == {0: 2, Errors.KAFKA_STORAGE_ERROR.code: 1}


def test_update_metadata_flattened_partition_states() -> None:
    """Mirrors UpdateMetadataRequestTest#testVersionLogic (flattened view with topic names)."""
    request = UpdateMetadataRequest(
        controller_id=1,
        controller_epoch=1,
        broker_epoch=5,
        topic_states=(
            UpdateMetadataTopicState(
                topic_name="foo",
                topic_id=FOO_ID,
                partition_states=(
                    UpdateMetadataPartitionState(partition_index=0, leader=1, isr=(1, 2), replicas=(1, 2, 3), offline_replicas=(3,)),
                    UpdateMetadataPartitionState(partition_index=1, leader=-2),
                ),
            ),
        ),
        live_brokers=(
            UpdateMetadataBroker(id=1, endpoints=(UpdateMetadataEndpoint(port=9092, host="h1", listener="PLAINTEXT"),), rack=None),
        ),
    )
    states = list(request.partition_states())
    assert [(s.topic_name, s.partition_index, s.leader, s.offline_replicas) for s in states] == [
        ("foo", 0, 1, (3,)),
        ("foo", 1, -2, ()),
    ]
    assert states[0].topic_partition() == TopicPartition("foo", 0)
    assert request.topic_ids() == {"foo": FOO_ID}
    assert request.topic_states_by_name()["foo"].topic_id == FOO_ID
    assert request.update_type() is ControlRequestType.UNKNOWN
    response = request.get_error_response(STALE_CONTROLLER_EPOCH)
    assert response == UpdateMetadataResponse(error_code=STALE_CONTROLLER_EPOCH)
    assert response.error_counts() == {STALE_CONTROLLER_EPOCH: 1}


# --------------------------------------------------------------------------------------------
# Produce
# --------------------------------------------------------------------------------------------


def test_produce_request_build_sizes_and_error_response() -> None:
    """Mirrors ProduceRequestTest#testPartitionSize; the error response covers every partition."""
    one = _records(b"abc")
    two = _records(b"x", b"yz")
    request = ProduceRequest.build(
        acks=-1,
        timeout_ms=30000,
        records={TopicPartition("foo", 0): one, TopicPartition("bar", 1): two, TopicPartition("foo", 2): MemoryRecords.EMPTY},
    )
    assert request.topic_data == (
        TopicProduceData(
            name="foo",
            partition_data=(PartitionProduceData(index=0, records=one), PartitionProduceData(index=2, records=MemoryRecords.EMPTY)),
        ),
        TopicProduceData(name="bar", partition_data=(PartitionProduceData(index=1, records=two),)),
    )
    assert request.partition_records() == {
        TopicPartition("foo", 0): one,
        TopicPartition("foo", 2): MemoryRecords.EMPTY,
        TopicPartition("bar", 1): two,
    }
    # 61-byte batch header + one 10-byte record; 61 + two records of 8 and 9 bytes.
    assert request.partition_sizes() == {
        TopicPartition("foo", 0): 71,
        TopicPartition("foo", 2): 0,
        TopicPartition("bar", 1): 78,
    }

    response = request.get_error_response(NOT_LEADER_OR_FOLLOWER, throttle_time_ms=5)
    error = PartitionProduceResponse(
        error_code=NOT_LEADER_OR_FOLLOWER, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1, error_message=None
    )
    assert response == ProduceResponse(
        responses=(
            TopicProduceResponse(
                name="foo",
                partition_responses=(dataclasses.replace(error, index=0), dataclasses.replace(error, index=2)),
            ),
            TopicProduceResponse(name="bar", partition_responses=(dataclasses.replace(error, index=1),)),
        ),
        throttle_time_ms=5,
    )
    assert response.partition_errors() == {
        TopicPartition("foo", 0): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("foo", 2): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("bar", 1): NOT_LEADER_OR_FOLLOWER,
    }
    assert response.error_counts() == {NOT_LEADER_OR_FOLLOWER: 3}
    assert dataclasses.replace(request, acks=0).get_error_response(NOT_LEADER_OR_FOLLOWER) is None


def test_produce_response_of_groups_by_topic() -> None:
    response = ProduceResponse.of(
        {
            TopicPartition("foo", 1): PartitionProduceResponse(base_offset=10, log_start_offset=0),
            TopicPartition("bar", 0): PartitionProduceResponse(error_code=UNKNOWN_TOPIC_OR_PARTITION, base_offset=-1),
            TopicPartition("foo", 0): PartitionProduceResponse(base_offset=3, log_append_time_ms=1000),
        },
        throttle_time_ms=0,
    )
    assert [(t.name, [(p.index, p.base_offset) for p in t.partition_responses]) for t in response.responses] == [
        ("foo", [(1, 10), (0, 3)]),
        ("bar", [(0, -1)]),
    ]
    assert response.responses_by_partition()[TopicPartition("foo", 0)].log_append_time_ms == 1000
    assert response.error_counts() == {0: 2, UNKNOWN_TOPIC_OR_PARTITION: 1}


# --------------------------------------------------------------------------------------------
# Fetch
# --------------------------------------------------------------------------------------------


def test_fetch_request_build_for_replica() -> None:
    """Mirrors FetchRequestTest#testFetchData (order kept, consecutive topics grouped)."""
    foo0 = TopicIdPartition(FOO_ID, TopicPartition("foo", 0))
    bar0 = TopicIdPartition(BAR_ID, TopicPartition("bar", 0))
    foo1 = TopicIdPartition(FOO_ID, TopicPartition("foo", 1))
    request = FetchRequest.for_replica(
        3,
        21,
        500,
        1,
        {
            foo0: FetchPartition(fetch_offset=10, current_leader_epoch=4, last_fetched_epoch=3, log_start_offset=0, partition_max_bytes=1 << 20),
            bar0: FetchPartition(fetch_offset=7, partition_max_bytes=1 << 20),
            foo1: FetchPartition(partition=99, fetch_offset=0, partition_max_bytes=1 << 20),
        },
    )
    assert (request.replica_id, request.replica_state) == (3, ReplicaState(replica_id=3, replica_epoch=21))
    assert (request.max_wait_ms, request.min_bytes, request.max_bytes) == (500, 1, 0x7FFFFFFF)
    assert [(t.topic, t.topic_id, [p.partition for p in t.partitions]) for t in request.topics] == [
        ("foo", FOO_ID, [0]),
        ("bar", BAR_ID, [0]),
        ("foo", FOO_ID, [1]),
    ]
    assert request.requesting_replica_id() == 3
    assert request.is_from_follower()
    data = request.fetch_data()
    assert list(data) == [foo0, bar0, foo1]
    assert data[foo0].fetch_offset == 10 and data[foo0].last_fetched_epoch == 3
    assert data[foo1].partition == 1

    consumer = FetchRequest.for_consumer(100, 1, {TopicPartition("foo", 0): FetchPartition(fetch_offset=5)})
    assert consumer.requesting_replica_id() == -1
    assert not consumer.is_from_follower()
    assert consumer.topics == (FetchTopic(topic="foo", topic_id=ZERO_UUID, partitions=(FetchPartition(partition=0, fetch_offset=5),)),)
    # Only the v15+ replica state set: still read as that replica.
    assert FetchRequest(replica_state=ReplicaState(replica_id=2, replica_epoch=1)).requesting_replica_id() == 2


def test_fetch_request_sessions_and_forgotten_topics() -> None:
    request = FetchRequest.build(
        fetch_data={},
        max_wait_ms=500,
        min_bytes=1,
        replica_id=1,
        session_id=123,
        session_epoch=4,
        to_forget=[
            TopicIdPartition(FOO_ID, TopicPartition("foo", 0)),
            TopicIdPartition(BAR_ID, TopicPartition("bar", 2)),
            TopicIdPartition(FOO_ID, TopicPartition("foo", 3)),
        ],
    )
    assert (request.session_id, request.session_epoch) == (123, 4)
    assert request.forgotten_topics_data == (
        ForgottenTopic(topic="foo", topic_id=FOO_ID, partitions=(0, 3)),
        ForgottenTopic(topic="bar", topic_id=BAR_ID, partitions=(2,)),
    )
    assert request.forgotten_topics() == [
        TopicIdPartition(FOO_ID, TopicPartition("foo", 0)),
        TopicIdPartition(FOO_ID, TopicPartition("foo", 3)),
        TopicIdPartition(BAR_ID, TopicPartition("bar", 2)),
    ]
    # Topics sent only by id are named through the caller's map.
    by_id = FetchRequest(topics=(FetchTopic(topic_id=BAR_ID, partitions=(FetchPartition(partition=4),)),))
    assert list(by_id.fetch_data({BAR_ID: "bar"})) == [TopicIdPartition(BAR_ID, TopicPartition("bar", 4))]
    assert list(by_id.fetch_data()) == [TopicIdPartition(BAR_ID, TopicPartition("", 4))]


def test_fetch_error_response_covers_every_partition() -> None:
    """The error reaches the top level and every requested partition (FetchRequest#getErrorResponse)."""
    request = FetchRequest(
        session_id=9,
        topics=(
            FetchTopic(topic="foo", topic_id=FOO_ID, partitions=(FetchPartition(partition=0), FetchPartition(partition=1))),
            FetchTopic(topic="bar", topic_id=BAR_ID, partitions=(FetchPartition(partition=2),)),
        ),
    )
    response = request.get_error_response(NOT_LEADER_OR_FOLLOWER, throttle_time_ms=7)
    assert (response.error_code, response.throttle_time_ms, response.session_id) == (NOT_LEADER_OR_FOLLOWER, 7, 9)
    error = PartitionData(error_code=NOT_LEADER_OR_FOLLOWER, high_watermark=-1)
    assert response.responses == (
        FetchableTopicResponse(
            topic="foo",
            topic_id=FOO_ID,
            partitions=(dataclasses.replace(error, partition_index=0), dataclasses.replace(error, partition_index=1)),
        ),
        FetchableTopicResponse(topic="bar", topic_id=BAR_ID, partitions=(dataclasses.replace(error, partition_index=2),)),
    )
    assert response.partition_errors() == {
        TopicPartition("foo", 0): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("foo", 1): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("bar", 2): NOT_LEADER_OR_FOLLOWER,
    }
    assert response.error_counts() == {NOT_LEADER_OR_FOLLOWER: 4}


def test_fetch_response_of_keeps_unknown_topic_ids_apart() -> None:
    """FetchResponse#toMessage's matchingTopic: entries join the previous topic by id when it has one.

    A leader answering UNKNOWN_TOPIC_ID for two topics it cannot name holds both under the name
    "". Grouped by name they merged into one entry carrying the first id, so the follower read
    the second topic's partitions as the first's, judged the full response invalid, reset its
    session and fetched again at once, forever (a zero-time livelock found by the simulator:
    controller-failover, ZooKeeper mode, `--seed=143`).
    """
    unknown_a = TopicIdPartition(FOO_ID, TopicPartition("", 0))
    unknown_b0 = TopicIdPartition(BAR_ID, TopicPartition("", 0))
    unknown_b1 = TopicIdPartition(BAR_ID, TopicPartition("", 1))
    error = FetchResponse.partition_response(0, Errors.UNKNOWN_TOPIC_ID.code)
    response = FetchResponse.of(0, 0, 0, {unknown_a: error, unknown_b0: error, unknown_b1: error})
    assert [(t.topic_id, [p.partition_index for p in t.partitions]) for t in response.responses] == [
        (FOO_ID, [0]), (BAR_ID, [0, 1])]
    assert list(response.response_data({FOO_ID: "foo", BAR_ID: "bar"})) == [
        TopicPartition("foo", 0), TopicPartition("bar", 0), TopicPartition("bar", 1)]


def test_fetch_response_of_and_lookups() -> None:
    """FetchResponse.of keeps the partition order; the helpers read partition results."""
    records = _records(b"abc")
    foo0 = TopicIdPartition(FOO_ID, TopicPartition("foo", 0))
    bar0 = TopicIdPartition(BAR_ID, TopicPartition("bar", 0))
    foo1 = TopicIdPartition(FOO_ID, TopicPartition("foo", 1))
    response = FetchResponse.of(
        0,
        0,
        55,
        {
            foo0: PartitionData(high_watermark=10, log_start_offset=0, records=records),
            bar0: PartitionData(error_code=NOT_LEADER_OR_FOLLOWER, high_watermark=-1, current_leader=LeaderIdAndEpoch(leader_id=2, leader_epoch=8)),
            foo1: PartitionData(partition_index=42, high_watermark=4, diverging_epoch=FetchEpochEndOffset(epoch=3, end_offset=2)),
        },
    )
    assert response.session_id == 55
    assert [(t.topic, [p.partition_index for p in t.partitions]) for t in response.responses] == [
        ("foo", [0]),
        ("bar", [0]),
        ("foo", [1]),
    ]
    assert response.partition_data("foo", 0).records is records
    assert response.partition_data("foo", 1).high_watermark == 4
    assert response.partition_data("bar", 0).current_leader == LeaderIdAndEpoch(leader_id=2, leader_epoch=8)
    assert response.partition_data("baz", 0) is None
    assert list(response.response_data()) == [TopicPartition("foo", 0), TopicPartition("bar", 0), TopicPartition("foo", 1)]
    assert response.error_counts() == {0: 3, NOT_LEADER_OR_FOLLOWER: 1}
    assert response.records_size_in_bytes() == 71
    assert FetchResponse.records_size(response.partition_data("foo", 0)) == 71
    assert FetchResponse.records_or_fail(response.partition_data("bar", 0)) is MemoryRecords.EMPTY
    assert FetchResponse.is_diverging_epoch(response.partition_data("foo", 1))
    assert not FetchResponse.is_diverging_epoch(response.partition_data("foo", 0))
    assert not FetchResponse.is_preferred_replica(response.partition_data("foo", 0))
    assert FetchResponse.is_preferred_replica(PartitionData(preferred_read_replica=2))

    by_id = FetchResponse(responses=(FetchableTopicResponse(topic_id=BAR_ID, partitions=(PartitionData(partition_index=1),)),))
    assert by_id.response_data() == {}
    assert by_id.response_data({BAR_ID: "bar"}) == {TopicPartition("bar", 1): PartitionData(partition_index=1)}


# --------------------------------------------------------------------------------------------
# ListOffsets and OffsetForLeaderEpoch
# --------------------------------------------------------------------------------------------


def test_list_offsets_request_and_error_response() -> None:
    """Mirrors ListOffsetsRequestTest#testGetErrorResponse and #testDuplicatePartitions."""
    topics = ListOffsetsRequest.to_list_offsets_topics(
        {
            TopicPartition("foo", 0): ListOffsetsPartition(partition_index=0, timestamp=ListOffsetsRequest.LATEST_TIMESTAMP),
            TopicPartition("bar", 1): ListOffsetsPartition(partition_index=1, current_leader_epoch=3, timestamp=1000),
            TopicPartition("foo", 2): ListOffsetsPartition(partition_index=2, timestamp=ListOffsetsRequest.EARLIEST_TIMESTAMP),
        }
    )
    request = ListOffsetsRequest(replica_id=ListOffsetsRequest.CONSUMER_REPLICA_ID, isolation_level=1, topics=topics)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in request.topics] == [("foo", [0, 2]), ("bar", [1])]
    assert request.partition_timestamps()[TopicPartition("foo", 2)].timestamp == -2
    assert request.duplicate_partitions() == set()
    dup = ListOffsetsRequest(topics=(ListOffsetsTopic(name="foo", partitions=(ListOffsetsPartition(), ListOffsetsPartition())),))
    assert dup.duplicate_partitions() == {TopicPartition("foo", 0)}

    response = request.get_error_response(NOT_LEADER_OR_FOLLOWER, throttle_time_ms=3)
    error = ListOffsetsPartitionResponse(error_code=NOT_LEADER_OR_FOLLOWER, timestamp=-1, offset=-1)
    assert response == ListOffsetsResponse(
        throttle_time_ms=3,
        topics=(
            ListOffsetsTopicResponse(
                name="foo",
                partitions=(dataclasses.replace(error, partition_index=0), dataclasses.replace(error, partition_index=2)),
            ),
            ListOffsetsTopicResponse(name="bar", partitions=(dataclasses.replace(error, partition_index=1),)),
        ),
    )
    assert response.partition_errors() == {
        TopicPartition("foo", 0): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("foo", 2): NOT_LEADER_OR_FOLLOWER,
        TopicPartition("bar", 1): NOT_LEADER_OR_FOLLOWER,
    }
    assert response.error_counts() == {NOT_LEADER_OR_FOLLOWER: 3}


def test_offset_for_leader_epoch_request_and_error_response() -> None:
    """Grouping by topic (Builder#forFollower) and an error for every partition (getErrorResponse)."""
    request = OffsetForLeaderEpochRequest.for_follower(
        2,
        {
            TopicPartition("foo", 0): OffsetForLeaderPartition(current_leader_epoch=5, leader_epoch=4),
            TopicPartition("foo", 1): OffsetForLeaderPartition(partition=1, current_leader_epoch=5, leader_epoch=2),
            TopicPartition("bar", 0): OffsetForLeaderPartition(leader_epoch=0),
        },
    )
    assert request.replica_id == 2
    assert request.topics == (
        OffsetForLeaderTopic(
            topic="foo",
            partitions=(
                OffsetForLeaderPartition(partition=0, current_leader_epoch=5, leader_epoch=4),
                OffsetForLeaderPartition(partition=1, current_leader_epoch=5, leader_epoch=2),
            ),
        ),
        OffsetForLeaderTopic(topic="bar", partitions=(OffsetForLeaderPartition(partition=0, leader_epoch=0),)),
    )
    assert request.epochs_by_partition()[TopicPartition("foo", 1)].leader_epoch == 2
    assert OffsetForLeaderEpochRequest.for_consumer({}).replica_id == -1

    response = request.get_error_response(Errors.FENCED_LEADER_EPOCH.code)
    fenced = Errors.FENCED_LEADER_EPOCH.code
    assert response.topics == (
        OffsetForLeaderTopicResult(
            topic="foo",
            partitions=(
                EpochEndOffset(error_code=fenced, partition=0, leader_epoch=-1, end_offset=-1),
                EpochEndOffset(error_code=fenced, partition=1, leader_epoch=-1, end_offset=-1),
            ),
        ),
        OffsetForLeaderTopicResult(topic="bar", partitions=(EpochEndOffset(error_code=fenced, partition=0),)),
    )
    assert response.partition_errors() == {
        TopicPartition("foo", 0): fenced,
        TopicPartition("foo", 1): fenced,
        TopicPartition("bar", 0): fenced,
    }
    assert response.error_counts() == {fenced: 3}
    ok = OffsetForLeaderEpochResponse(
        topics=(OffsetForLeaderTopicResult(topic="foo", partitions=(EpochEndOffset(partition=0, leader_epoch=4, end_offset=120),)),)
    )
    assert ok.epoch_end_offsets() == {TopicPartition("foo", 0): EpochEndOffset(error_code=0, partition=0, leader_epoch=4, end_offset=120)}


# --------------------------------------------------------------------------------------------
# Metadata and AlterPartition
# --------------------------------------------------------------------------------------------


def test_metadata_request_and_response() -> None:
    """None means all topics (MetadataRequestTest#testEmptyMeansEmptyForVersionsAboveV0); errors and lookups."""
    assert MetadataRequest.all_topics().is_all_topics()
    assert MetadataRequest.all_topics().topic_names() is None
    request = MetadataRequest.for_topics(["foo", "bar"], allow_auto_topic_creation=False)
    assert not request.is_all_topics()
    assert request.topic_names() == ["foo", "bar"]
    assert request.allow_auto_topic_creation is False
    assert MetadataRequest(topics=(MetadataRequestTopic(topic_id=FOO_ID, name=None),)).topic_ids() == [FOO_ID]

    error_response = request.get_error_response(Errors.TOPIC_AUTHORIZATION_FAILED.code)
    failed = Errors.TOPIC_AUTHORIZATION_FAILED.code
    assert error_response.topics == (
        MetadataResponseTopic(name="foo", error_code=failed),
        MetadataResponseTopic(name="bar", error_code=failed),
    )
    assert error_response.errors() == {"foo": failed, "bar": failed}
    assert MetadataRequest.all_topics().get_error_response(failed).topics == ()

    response = MetadataResponse(
        brokers=(MetadataResponseBroker(node_id=1, host="h1", port=9092), MetadataResponseBroker(node_id=2, host="h2", port=9092, rack="r2")),
        cluster_id="cluster",
        controller_id=1,
        topics=(
            MetadataResponseTopic(
                name="foo",
                topic_id=FOO_ID,
                partitions=(
                    MetadataResponsePartition(partition_index=0, leader_id=1, leader_epoch=3, replica_nodes=(1, 2), isr_nodes=(1, 2)),
                    MetadataResponsePartition(
                        error_code=Errors.LEADER_NOT_AVAILABLE.code, partition_index=1, leader_id=-1, replica_nodes=(1, 2), offline_replicas=(1, 2)
                    ),
                ),
            ),
            MetadataResponseTopic(name="gone", error_code=UNKNOWN_TOPIC_OR_PARTITION),
        ),
    )
    assert response.broker(2).rack == "r2"
    assert response.broker(3) is None
    assert response.topic("foo").partitions[0].leader_epoch == 3
    assert response.topic("nope") is None
    assert response.errors() == {"gone": UNKNOWN_TOPIC_OR_PARTITION}
    assert response.topic_ids() == {"foo": FOO_ID}
    assert response.partition_errors() == {TopicPartition("foo", 0): 0, TopicPartition("foo", 1): Errors.LEADER_NOT_AVAILABLE.code}
    # Kafka counts partition codes and topic codes.
    assert response.error_counts() == {0: 2, Errors.LEADER_NOT_AVAILABLE.code: 1, UNKNOWN_TOPIC_OR_PARTITION: 1}


def test_alter_partition_request_and_responses() -> None:
    """new_isr derived from the epochs; top-level-only error response; errorCounts counts every level."""
    request = AlterPartitionRequest(
        broker_id=1,
        broker_epoch=100,
        topics=(
            AlterPartitionTopicData(
                topic_id=FOO_ID,
                partitions=(
                    AlterPartitionPartitionData(
                        partition_index=0,
                        leader_epoch=5,
                        new_isr_with_epochs=(BrokerState(broker_id=1, broker_epoch=100), BrokerState(broker_id=2, broker_epoch=200)),
                        partition_epoch=7,
                    ),
                ),
            ),
        ),
    )
    proposal = request.partitions_by_topic_partition({FOO_ID: "foo"})[TopicPartition("foo", 0)]
    assert proposal.new_isr() == (1, 2)
    assert request.partitions_by_topic_partition() == {}
    # As in Kafka, the error response carries only the top-level error.
    error_response = request.get_error_response(NOT_CONTROLLER, throttle_time_ms=1)
    assert error_response == AlterPartitionResponse(throttle_time_ms=1, error_code=NOT_CONTROLLER, topics=())
    assert error_response.error_counts() == {NOT_CONTROLLER: 1}

    response = AlterPartitionResponse(
        topics=(
            AlterPartitionResponseTopicData(
                topic_id=FOO_ID,
                partitions=(
                    AlterPartitionResponsePartitionData(partition_index=0, leader_id=1, leader_epoch=5, isr=(1, 2), partition_epoch=8),
                    AlterPartitionResponsePartitionData(partition_index=1, error_code=Errors.INVALID_UPDATE_VERSION.code),
                ),
            ),
            AlterPartitionResponseTopicData(
                topic_name="bar", partitions=(AlterPartitionResponsePartitionData(partition_index=0, error_code=Errors.FENCED_LEADER_EPOCH.code),)
            ),
        )
    )
    assert response.partition_errors({FOO_ID: "foo"}) == {
        TopicPartition("foo", 0): 0,
        TopicPartition("foo", 1): Errors.INVALID_UPDATE_VERSION.code,
        TopicPartition("bar", 0): Errors.FENCED_LEADER_EPOCH.code,
    }
    assert response.partitions_by_topic_partition({FOO_ID: "foo"})[TopicPartition("foo", 0)].partition_epoch == 8
    assert response.error_counts() == {0: 2, Errors.INVALID_UPDATE_VERSION.code: 1, Errors.FENCED_LEADER_EPOCH.code: 1}


# --------------------------------------------------------------------------------------------
# ControlledShutdown, CreateTopics, DeleteTopics, FindCoordinator, ApiVersions
# --------------------------------------------------------------------------------------------


def test_controlled_shutdown() -> None:
    request = ControlledShutdownRequest(broker_id=3, broker_epoch=12)
    assert request.get_error_response(Errors.STALE_BROKER_EPOCH.code) == ControlledShutdownResponse(
        error_code=Errors.STALE_BROKER_EPOCH.code, remaining_partitions=()
    )
    response = ControlledShutdownResponse.prepare_response(0, [TopicPartition("foo", 1), TopicPartition("bar", 0)])
    assert response.remaining_topic_partitions() == {TopicPartition("foo", 1), TopicPartition("bar", 0)}
    assert response.remaining_partitions[0].topic_name == "foo"
    assert response.error_counts() == {0: 1}


def test_create_and_delete_topics_error_responses() -> None:
    create = CreateTopicsRequest(topics=(CreatableTopic(name="a", num_partitions=3, replication_factor=2), CreatableTopic(name="b")))
    response = create.get_error_response(NOT_CONTROLLER, throttle_time_ms=2)
    assert response == CreateTopicsResponse(
        throttle_time_ms=2,
        topics=(
            CreatableTopicResult(name="a", error_code=NOT_CONTROLLER, error_message=None),
            CreatableTopicResult(name="b", error_code=NOT_CONTROLLER, error_message=None),
        ),
    )
    assert response.topic_errors() == {"a": NOT_CONTROLLER, "b": NOT_CONTROLLER}
    assert response.error_counts() == {NOT_CONTROLLER: 2}

    delete = DeleteTopicsRequest(topics=(DeleteTopicState(name="a"), DeleteTopicState(topic_id=BAR_ID)), timeout_ms=1000)
    assert delete.topic_names() == ["a"]
    assert delete.topic_ids() == [BAR_ID]
    assert DeleteTopicsRequest.for_topic_names(["x"], 5).topics == (DeleteTopicState(name="x"),)
    deleted = delete.get_error_response(NOT_CONTROLLER)
    assert deleted == DeleteTopicsResponse(
        responses=(
            DeletableTopicResult(name="a", topic_id=ZERO_UUID, error_code=NOT_CONTROLLER),
            DeletableTopicResult(name=None, topic_id=BAR_ID, error_code=NOT_CONTROLLER),
        )
    )
    assert deleted.topic_errors() == {"a": NOT_CONTROLLER}
    assert deleted.error_counts() == {NOT_CONTROLLER: 2}


def test_find_coordinator_error_response_covers_every_key() -> None:
    request = FindCoordinatorRequest(key_type=CoordinatorType.TRANSACTION, coordinator_keys=("txn-a", "txn-b"))
    unavailable = Errors.COORDINATOR_NOT_AVAILABLE
    response = request.get_error_response(unavailable.code, throttle_time_ms=4)
    assert response == FindCoordinatorResponse(
        throttle_time_ms=4,
        coordinators=tuple(
            Coordinator(key=k, node_id=-1, host="", port=-1, error_code=unavailable.code, error_message=unavailable.message)
            for k in ("txn-a", "txn-b")
        ),
    )
    assert response.coordinator("txn-b").error_code == unavailable.code
    assert response.coordinator("txn-c") is None
    assert response.error_counts() == {unavailable.code: 2}


def test_api_versions() -> None:
    """Software name validation; UNSUPPORTED_VERSION lists the ApiVersions range
    (mirrors ApiVersionsRequestTest#testApiVersionsRequestWithUnsupportedVersion)."""
    assert ApiVersionsRequest(client_software_name="kafka-ref", client_software_version="0.1.0").is_valid()
    assert not ApiVersionsRequest(client_software_name="kafka ref", client_software_version="1").is_valid()
    assert not ApiVersionsRequest(client_software_name="-bad", client_software_version="1").is_valid()
    assert not ApiVersionsRequest().is_valid()

    unsupported = ApiVersionsRequest().get_error_response(Errors.UNSUPPORTED_VERSION.code, throttle_time_ms=9)
    assert unsupported == ApiVersionsResponse(
        error_code=35, api_keys=(ApiVersion(api_key=18, min_version=0, max_version=3),), throttle_time_ms=9
    )
    assert unsupported.api_version(ApiKeys.API_VERSIONS) == ApiVersion(api_key=18, min_version=0, max_version=3)
    assert unsupported.api_version(ApiKeys.FETCH) is None
    other = ApiVersionsRequest().get_error_response(Errors.INVALID_REQUEST.code)
    assert other.api_keys == ()
    assert other.error_counts() == {Errors.INVALID_REQUEST.code: 1}
