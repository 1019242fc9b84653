"""The broker's request handlers for FindCoordinator and the group APIs.

Mirrors the group part of kafka.server.KafkaApis (Kafka 3.x, ZooKeeper mode):
handleFindCoordinatorRequest (with getOrCreateInternalTopic / the auto topic creation of
``__consumer_offsets``), handleJoinGroupRequest, handleSyncGroupRequest, handleHeartbeatRequest,
handleLeaveGroupRequest, handleOffsetCommitRequest and handleOffsetFetchRequest, and the
``onLeadershipChange`` callback of handleLeaderAndIsrRequest for ``__consumer_offsets``
(seed 000 step 9) plus the resignation of handleStopReplicaRequest (seed 002).

``install_group_coordinator(broker)`` builds the coordinator and plugs all of this into a
KafkaBroker through its extension points (``apis.register``, ``leadership_listeners``,
``resignation_listeners``).
"""

from __future__ import annotations

import dataclasses

from typing import Any, Iterable

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.delete_groups import DeletableGroupResult, DeleteGroupsRequest, DeleteGroupsResponse
from kafka_ref.common.requests.describe_groups import (
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
from kafka_ref.common.requests.list_groups import ListedGroup, ListGroupsRequest, ListGroupsResponse
from kafka_ref.common.requests.find_coordinator import (
    Coordinator,
    CoordinatorType,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from kafka_ref.common.requests.heartbeat import HeartbeatRequest, HeartbeatResponse
from kafka_ref.common.requests.join_group import JoinGroupRequest, JoinGroupResponse
from kafka_ref.common.requests.leave_group import LeaveGroupRequest, LeaveGroupResponse
from kafka_ref.common.requests.offset_commit import (
    DEFAULT_RETENTION_TIME,
    DEFAULT_TIMESTAMP,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from kafka_ref.common.requests.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse
from kafka_ref.common.requests.offset_fetch import (
    INVALID_OFFSET,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopics,
)
from kafka_ref.common.requests.sync_group import SyncGroupRequest, SyncGroupResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.coordinator.group.group_coordinator import GroupCoordinator, JoinGroupResult, LeaveGroupResult, SyncGroupResult
from kafka_ref.coordinator.group.group_metadata import OffsetAndMetadata
from kafka_ref.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME
from kafka_ref.network.network import Envelope


def install_group_coordinator(broker: Any, *, load_bound: str | None = None) -> GroupCoordinator:
    """Create the broker's GroupCoordinator and wire it in (KafkaServer#startup's group coordinator part).

    1. The coordinator, started with offsets.topic.num.partitions (offset expiration scheduled
    unless ``kafka_ref.offsets.expiration.enable`` is off, as only the simulator sets it); 2. its request handlers
    registered with KafkaApis; 3. the ``__consumer_offsets`` leadership and resignation hooks.
    ``load_bound`` left out follows the broker's code version (``kafka_ref.broker.version``; no
    IBP gate in Kafka): a 0.10.x coordinator reads chunks of its partition while below the HW
    (seed 000), 0.11.0.0 and later while below the log end offset (KAFKA-5059). See
    GroupMetadataManager's module doc for what each bound does and does not load.
    """
    if load_bound is None:
        load_bound = ("log_end_offset" if broker.config.broker_version.is_at_least("0.11.0")
                      else "high_watermark")
    # 1. Build and start.
    coordinator = GroupCoordinator.from_broker(broker, load_bound=load_bound)
    coordinator.startup(lambda: broker.config.get("offsets.topic.num.partitions"),
                        broker.config.get("kafka_ref.offsets.expiration.enable"))
    # 2. Handlers.
    apis = GroupApis(broker, coordinator)
    for request_type, handler in apis.handlers().items():
        broker.apis.register(request_type, handler)
    # 3. Hooks.
    broker.leadership_listeners.append(apis.on_leadership_change)
    broker.resignation_listeners.append(apis.on_resignation)
    broker.group_apis = apis
    return coordinator


class GroupApis:
    """Mirrors the group-coordinator handlers of kafka.server.KafkaApis."""

    def __init__(self, broker: Any, coordinator: GroupCoordinator) -> None:
        self.broker = broker
        self.coordinator = coordinator
        self.config = broker.config
        self._offsets_topic_creation_requested = False
        self._log = state_change_logger(broker_id=broker.broker_id)

    def handlers(self) -> dict[type, Any]:
        return {
            FindCoordinatorRequest: self.handle_find_coordinator_request,
            JoinGroupRequest: self.handle_join_group_request,
            SyncGroupRequest: self.handle_sync_group_request,
            HeartbeatRequest: self.handle_heartbeat_request,
            LeaveGroupRequest: self.handle_leave_group_request,
            OffsetCommitRequest: self.handle_offset_commit_request,
            OffsetFetchRequest: self.handle_offset_fetch_request,
            ListGroupsRequest: self.handle_list_groups_request,
            DescribeGroupsRequest: self.handle_describe_groups_request,
            DeleteGroupsRequest: self.handle_delete_groups_request,
            OffsetDeleteRequest: self.handle_offset_delete_request,
        }

    @property
    def metadata_cache(self) -> Any:
        return self.broker.metadata_cache

    @property
    def authorizer(self) -> Any:
        return self.broker.apis.authorizer

    # -- leadership hooks ----------------------------------------------------------------------

    def on_leadership_change(self, updated_leaders: Iterable[Any], updated_followers: Iterable[Any]) -> None:
        """Mirrors the ``onLeadershipChange`` closure of KafkaApis#handleLeaderAndIsrRequest (seed 000 step 9).

        A ``__consumer_offsets`` partition led here now is loaded (the coordinator epoch is
        its leader epoch); one followed now is unloaded.
        """
        for partition in updated_leaders:
            if partition.topic_partition.topic == GROUP_METADATA_TOPIC_NAME:
                self.coordinator.on_election(partition.topic_partition.partition, partition.get_leader_epoch())
        for partition in updated_followers:
            if partition.topic_partition.topic == GROUP_METADATA_TOPIC_NAME:
                self.coordinator.on_resignation(partition.topic_partition.partition, partition.get_leader_epoch())

    def on_resignation(self, partition: int, leader_epoch: int) -> None:
        """Mirrors the ``__consumer_offsets`` branch of KafkaApis#handleStopReplicaRequest (seed 002): a deleted replica resigns."""
        self.coordinator.on_resignation(partition, leader_epoch if leader_epoch >= 0 else None)

    # -- FindCoordinator ---------------------------------------------------------------------

    def handle_find_coordinator_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleFindCoordinatorRequest (v4: batched keys)."""
        request: FindCoordinatorRequest = envelope.request
        if request.key_type != CoordinatorType.GROUP:
            # Transaction coordinators are not modelled.
            envelope.respond(request.get_error_response(Errors.INVALID_REQUEST.code))
            return
        coordinators = []
        for key in request.coordinator_keys:
            error, node = self.get_coordinator(envelope, key)
            if node is None:
                coordinators.append(Coordinator(key=key, node_id=-1, host="", port=-1, error_code=error.code,
                                                error_message=error.message))
            else:
                coordinators.append(Coordinator(key=key, node_id=node.id, host=node.host, port=node.port,
                                                error_code=Errors.NONE.code, error_message=None))
        envelope.respond(FindCoordinatorResponse(coordinators=tuple(coordinators)))

    def get_coordinator(self, envelope: Envelope, key: str) -> tuple[Errors, Any]:
        """Mirrors kafka.server.KafkaApis#getCoordinator (group keys).

        1. The group's offsets partition; 2. no ``__consumer_offsets`` topic yet: ask for it
        to be created and answer COORDINATOR_NOT_AVAILABLE; 3. otherwise the partition's
        leader, if it is alive, else COORDINATOR_NOT_AVAILABLE.
        """
        # 1. Which partition.
        partition = self.coordinator.partition_for(key)
        # 2. Create the topic on first use.
        if not self.metadata_cache.contains_topic(GROUP_METADATA_TOPIC_NAME):
            self.maybe_create_offsets_topic()
            return Errors.COORDINATOR_NOT_AVAILABLE, None
        # 3. The leader of the group's partition.
        state = self.metadata_cache.get_partition_info(TopicPartition(GROUP_METADATA_TOPIC_NAME, partition))
        if state is None or state.leader < 0:
            return Errors.COORDINATOR_NOT_AVAILABLE, None
        node = self.metadata_cache.get_alive_broker_node(state.leader)
        if node is None:
            return Errors.COORDINATOR_NOT_AVAILABLE, None
        return Errors.NONE, node

    def maybe_create_offsets_topic(self) -> None:
        """Mirrors kafka.server.DefaultAutoTopicCreationManager#createTopics for ``__consumer_offsets``.

        The broker that got the request asks its admin manager: in ZooKeeper mode it writes the
        topic to ZooKeeper (AdminZkClient) and the controller elects leaders; in KRaft mode the
        request is forwarded to the controller. offsets.topic.num.partitions
        partitions, offsets.topic.replication.factor replicas capped at the live brokers (the
        rule of Kafka's createInternalTopic before 1.0; newer brokers refuse instead), and the
        internal topic's configs (compacted, 100 MiB segments). Without a controller (manual
        mode) nothing can create it.
        """
        admin_manager = getattr(self.broker, "admin_manager", None)
        if admin_manager is None or self._offsets_topic_creation_requested:
            return
        from kafka_ref.common.requests.create_topics import CreatableTopic, CreateableTopicConfig, CreateTopicsRequest

        alive = len(self.metadata_cache.alive_brokers)
        replication_factor = min(self.config.get("offsets.topic.replication.factor"), max(alive, 1))
        offsets_config = self.coordinator.group_manager.config
        configs = (
            CreateableTopicConfig(name="cleanup.policy", value="compact"),
            CreateableTopicConfig(name="segment.bytes", value=str(offsets_config.offsets_topic_segment_bytes)),
            CreateableTopicConfig(name="compression.type", value="producer"),
        )
        request = CreateTopicsRequest(timeout_ms=0, topics=(CreatableTopic(
            name=GROUP_METADATA_TOPIC_NAME, num_partitions=self.config.get("offsets.topic.num.partitions"),
            replication_factor=replication_factor, configs=configs),))
        self._offsets_topic_creation_requested = True

        def on_created(response: Any) -> None:
            result = response.topics[0]
            error = Errors.for_code(result.error_code)
            # Written (the zero timeout answers REQUEST_TIMED_OUT: nothing waited for its leaders) or
            # created by another broker meanwhile: no need to ask again.
            self._offsets_topic_creation_requested = error in (Errors.NONE, Errors.TOPIC_ALREADY_EXISTS,
                                                               Errors.REQUEST_TIMED_OUT)
            self._log.info("offsets_topic_creation", error=error.name,
                           partitions=result.num_partitions, replication_factor=replication_factor)

        admin_manager.create_topics(request, on_created)

    # -- JoinGroup / SyncGroup / Heartbeat / LeaveGroup ------------------------------------------

    def handle_join_group_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleJoinGroupRequest.

        Static members (a group instance id) get UNSUPPORTED_VERSION below IBP 2.3 (an older
        coordinator loading the group would drop the instance ids); v4+ dynamic members must
        first obtain a member id (MEMBER_ID_REQUIRED, GroupCoordinatorAdapter#joinGroup); v9+
        lets a static leader skip assigning; a missing rebalance timeout (v0) is the session
        timeout. Every answer takes the version's shape of the protocol name ("" before v7,
        null from v7), as the constructor JoinGroupResponse(data, version) gives it.

        1. A static member below IBP 2.3: JoinGroupRequest's error response (no member id,
        generation, protocol or leader); 2. otherwise the coordinator answers.
        """
        request: JoinGroupRequest = envelope.request

        def respond(response: JoinGroupResponse) -> None:
            # JoinGroupResponse(data, version): not nullable before v7, "" means none from v7.
            if not _at_least(envelope, 7) and response.protocol_name is None:
                response = dataclasses.replace(response, protocol_name="")
            elif _at_least(envelope, 7) and response.protocol_name == "":
                response = dataclasses.replace(response, protocol_name=None)
            envelope.respond(response)

        def send_response(result: JoinGroupResult) -> None:
            respond(JoinGroupResponse(
                error_code=result.error.code, generation_id=result.generation_id, protocol_type=result.protocol_type,
                protocol_name=result.protocol_name, leader=result.leader_id, skip_assignment=result.skip_assignment,
                member_id=result.member_id, members=result.members))

        # 1. Static membership needs IBP 2.3.
        if not self._supports_static_member(request.group_instance_id):
            respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
            return
        # 2. The coordinator.
        rebalance_timeout_ms = request.session_timeout_ms if request.rebalance_timeout_ms == -1 else request.rebalance_timeout_ms
        self.coordinator.handle_join_group(
            request.group_id, request.member_id, request.group_instance_id,
            _at_least(envelope, 4) and request.group_instance_id is None, _at_least(envelope, 9),
            getattr(envelope.src, "client_id", str(envelope.src)),
            getattr(envelope.src, "client_host", f"/{envelope.src}"),
            rebalance_timeout_ms, request.session_timeout_ms, request.protocol_type,
            [(p.name, p.metadata) for p in request.protocols], send_response, request.reason)

    def _supports_static_member(self, group_instance_id: str | None) -> bool:
        """KafkaApis' guard on the group APIs: a group instance id needs IBP 2.3 (IBP_2_3_IV0) or newer."""
        return group_instance_id is None or self.config.inter_broker_protocol_version.is_at_least("2.3")

    def handle_sync_group_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleSyncGroupRequest.

        A group instance id below IBP 2.3 is UNSUPPORTED_VERSION; from v5 protocol type and
        name are mandatory.
        """
        request: SyncGroupRequest = envelope.request

        def send_response(result: SyncGroupResult) -> None:
            envelope.respond(SyncGroupResponse(error_code=result.error.code, protocol_type=result.protocol_type,
                                               protocol_name=result.protocol_name, assignment=result.member_assignment))

        if not self._supports_static_member(request.group_instance_id):
            send_response(SyncGroupResult.of_error(Errors.UNSUPPORTED_VERSION))
        elif not request.are_mandatory_protocol_type_and_name_defined(
                5 if envelope.api_version is None else envelope.api_version):
            send_response(SyncGroupResult.of_error(Errors.INCONSISTENT_GROUP_PROTOCOL))
        else:
            self.coordinator.handle_sync_group(request.group_id, request.generation_id, request.member_id,
                                               request.protocol_type, request.protocol_name, request.group_instance_id,
                                               request.group_assignment(), send_response)

    def handle_heartbeat_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleHeartbeatRequest (a group instance id needs IBP 2.3)."""
        request: HeartbeatRequest = envelope.request
        if not self._supports_static_member(request.group_instance_id):
            envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
            return
        self.coordinator.handle_heartbeat(request.group_id, request.member_id, request.group_instance_id,
                                          request.generation_id,
                                          lambda error: envelope.respond(HeartbeatResponse(error_code=error.code)))

    def handle_leave_group_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleLeaveGroupRequest."""
        request: LeaveGroupRequest = envelope.request

        def send_response(result: LeaveGroupResult) -> None:
            envelope.respond(LeaveGroupResponse(error_code=result.top_level_error.code, members=result.member_responses))

        self.coordinator.handle_leave_group(request.group_id, request.members, send_response)

    # -- OffsetCommit / OffsetFetch ------------------------------------------------------------

    def handle_offset_commit_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleOffsetCommitRequest (a group instance id needs IBP 2.3).

        Partitions of topics the principal may not read get TOPIC_AUTHORIZATION_FAILED,
        unknown ones UNKNOWN_TOPIC_OR_PARTITION; the rest go to the coordinator with the
        offsets GroupCoordinatorAdapter#commitOffsets builds: the commit time is the broker's now
        unless the request names one (v1's per-partition commit timestamp), and a retention time
        (v2-4) sets an expire timestamp of now plus that retention (otherwise none: the broker's
        offsets.retention.minutes applies).
        """
        request: OffsetCommitRequest = envelope.request
        if not self._supports_static_member(request.group_instance_id):
            envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
            return
        errors: dict[TopicPartition, int] = {}
        authorized: dict[TopicPartition, OffsetAndMetadata] = {}
        current_time_ms = self.broker.time.milliseconds()
        expire_timestamp = (None if request.retention_time_ms == DEFAULT_RETENTION_TIME
                            else current_time_ms + request.retention_time_ms)
        # 1. Per-partition checks.
        for topic in request.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                if not self.authorizer.authorize_topic(envelope.principal, "READ", topic.name):
                    errors[tp] = Errors.TOPIC_AUTHORIZATION_FAILED.code
                elif not self.metadata_cache.contains(tp):
                    errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION.code
                else:
                    authorized[tp] = OffsetAndMetadata(
                        offset=p.committed_offset,
                        leader_epoch=None if p.committed_leader_epoch < 0 else p.committed_leader_epoch,
                        metadata="" if p.committed_metadata is None else p.committed_metadata,
                        commit_timestamp=current_time_ms if p.commit_timestamp == DEFAULT_TIMESTAMP
                        else p.commit_timestamp,
                        expire_timestamp=expire_timestamp)

        def send_response(results: dict[TopicPartition, Errors]) -> None:
            merged = dict(errors)
            merged.update({tp: e.code for tp, e in results.items()})
            envelope.respond(OffsetCommitResponse.of(merged))

        # 2. The coordinator (or an answer right away).
        if not authorized:
            send_response({})
            return
        self.coordinator.handle_commit_offsets(request.group_id, request.member_id, request.group_instance_id,
                                               request.generation_id_or_member_epoch, authorized, send_response)

    def handle_list_groups_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleListGroupsRequest (every group is listed: no ACLs on groups here).

        The states (v4+) and types (v5+) filters go to the coordinator as GroupCoordinatorAdapter#listGroups
        passes them; older versions carry neither (empty: no filter) and drop the state and type
        from the answer on the wire.
        """
        request: ListGroupsRequest = envelope.request
        error, overviews = self.coordinator.handle_list_groups(request.states_filter, request.types_filter)
        envelope.respond(ListGroupsResponse(error_code=error.code, groups=tuple(
            ListedGroup(group_id=g, protocol_type=t, group_state=s, group_type=k) for g, t, s, k in overviews)))

    def handle_delete_groups_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDeleteGroupsRequest (no ACLs on groups here): one result per group."""
        request: DeleteGroupsRequest = envelope.request
        errors = self.coordinator.handle_delete_groups(dict.fromkeys(request.groups_names))
        envelope.respond(DeleteGroupsResponse(results=tuple(
            DeletableGroupResult(group_id=g, error_code=e.code) for g, e in errors.items())))

    def handle_offset_delete_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleOffsetDeleteRequest (no ACLs on groups here; the adapter is GroupCoordinatorAdapter#deleteOffsets).

        1. Per topic: one the principal may not read gets TOPIC_AUTHORIZATION_FAILED on all its
        partitions, an unknown one UNKNOWN_TOPIC_OR_PARTITION; of a known topic each partition the
        metadata does not hold is UNKNOWN_TOPIC_OR_PARTITION. 2. The rest go to the coordinator.
        3. A group-level error answers with that error alone (the partition errors are dropped);
        otherwise the coordinator's partition errors are merged into step 1's.
        """
        request: OffsetDeleteRequest = envelope.request
        errors: dict[TopicPartition, int] = {}
        valid: list[TopicPartition] = []
        # 1. Topic and partition checks.
        for topic in request.topics:
            if not self.authorizer.authorize_topic(envelope.principal, "READ", topic.name):
                errors.update({TopicPartition(topic.name, p.partition_index): Errors.TOPIC_AUTHORIZATION_FAILED.code
                               for p in topic.partitions})
            elif not self.metadata_cache.contains_topic(topic.name):
                errors.update({TopicPartition(topic.name, p.partition_index): Errors.UNKNOWN_TOPIC_OR_PARTITION.code
                               for p in topic.partitions})
            else:
                for p in topic.partitions:
                    tp = TopicPartition(topic.name, p.partition_index)
                    if self.metadata_cache.contains(tp):
                        valid.append(tp)
                    else:
                        errors[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION.code
        # 2. The coordinator.
        group_error, partition_errors = self.coordinator.handle_delete_offsets(request.group_id, valid)
        # 3. The answer.
        if group_error is not Errors.NONE:
            envelope.respond(request.get_error_response(group_error.code))
            return
        errors.update({tp: e.code for tp, e in partition_errors.items()})
        envelope.respond(OffsetDeleteResponse.of(errors))

    def handle_describe_groups_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDescribeGroupsRequest: one summary per group asked for."""
        request: DescribeGroupsRequest = envelope.request
        described = []
        for group_id in request.groups:
            error, (state, protocol_type, protocol, members) = self.coordinator.handle_describe_group(group_id)
            described.append(DescribedGroup(
                error_code=error.code, group_id=group_id, group_state=state, protocol_type=protocol_type,
                protocol_data=protocol, members=tuple(
                    DescribedGroupMember(member_id=m, group_instance_id=i, client_id=c, client_host=h,
                                         member_metadata=md, member_assignment=a)
                    for m, i, c, h, md, a in members)))
        envelope.respond(DescribeGroupsResponse(groups=tuple(described)))

    def handle_offset_fetch_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleOffsetFetchRequest (v8+: per group)."""
        request: OffsetFetchRequest = envelope.request
        groups = []
        for group_request in request.groups:
            partitions = group_request.partitions()
            unauthorized: list[TopicPartition] = []
            if partitions is not None:
                unauthorized = [tp for tp in partitions
                                if not self.authorizer.authorize_topic(envelope.principal, "DESCRIBE", tp.topic)]
                partitions = [tp for tp in partitions if tp not in unauthorized]
            error, data = self.coordinator.handle_fetch_offsets(group_request.group_id, request.require_stable, partitions)
            if error is not Errors.NONE:
                groups.append(OffsetFetchResponseGroup(group_id=group_request.group_id, error_code=error.code))
                continue
            if partitions is None:
                data = {tp: d for tp, d in data.items()
                        if self.authorizer.authorize_topic(envelope.principal, "DESCRIBE", tp.topic)}
            for tp in unauthorized:
                data[tp] = OffsetFetchResponsePartitions(partition_index=tp.partition, committed_offset=INVALID_OFFSET,
                                                         error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
            by_topic: dict[str, list[OffsetFetchResponsePartitions]] = {}
            for tp, d in data.items():
                by_topic.setdefault(tp.topic, []).append(d)
            groups.append(OffsetFetchResponseGroup(group_id=group_request.group_id, topics=tuple(
                OffsetFetchResponseTopics(name=t, partitions=tuple(ps)) for t, ps in by_topic.items())))
        envelope.respond(OffsetFetchResponse(groups=tuple(groups)))


def _at_least(envelope: Envelope, version: int) -> bool:
    """Whether the request came at ``version`` or newer (in-process requests are the newest)."""
    return envelope.api_version is None or envelope.api_version >= version
