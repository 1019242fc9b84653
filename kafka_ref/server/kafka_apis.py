"""Request dispatch and authorization on a broker.

Mirrors kafka.server.KafkaApis (Kafka 3.x, ZooKeeper mode). Each handler validates, calls the
ReplicaManager and answers through ``envelope.respond``; produce and fetch may answer later
from a purgatory. Any exception a handler lets escape is turned into the request's error
response (Kafka's ``handleError``): a broker never crashes on a request.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from kafka_ref.common.errors import ApiException, Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.replica_selector import ClientMetadata
from kafka_ref.common.requests.delete_records import DeleteRecordsRequest
from kafka_ref.common.requests.describe_cluster import DescribeClusterRequest
from kafka_ref.common.requests.describe_configs import DescribeConfigsRequest
from kafka_ref.common.requests.describe_log_dirs import DescribeLogDirsRequest
from kafka_ref.common.requests.fetch import (
    EpochEndOffset as DivergingEpoch,
    FetchRequest,
    FetchResponse,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest
from kafka_ref.common.requests.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from kafka_ref.common.requests.metadata import MetadataRequest
from kafka_ref.common.requests.offsets_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from kafka_ref.common.requests.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    has_transactional_records,
    validate_records,
)
from kafka_ref.common.requests.schema_ranges import validate_schema_ranges
from kafka_ref.common.requests.stop_replica import StopReplicaPartitionError, StopReplicaRequest, StopReplicaResponse
from kafka_ref.common.requests.update_metadata import UpdateMetadataRequest, UpdateMetadataResponse
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.log.fetch_data import AppendOrigin
from kafka_ref.network.network import DisconnectException, Envelope
from kafka_ref.server.authorizer import Authorizer
from kafka_ref.server.auto_topic_creation_manager import DefaultAutoTopicCreationManager
from kafka_ref.server.delayed_operation import TopicPartitionOperationKey
from kafka_ref.server.fetch_session import IncrementalFetchContext

OFFSETS_TOPIC = "__consumer_offsets"


class KafkaApis:
    """Mirrors kafka.server.KafkaApis."""

    def __init__(self, broker: Any, authorizer: Authorizer) -> None:
        self.broker = broker
        self.replica_manager = broker.replica_manager
        self.metadata_cache = broker.metadata_cache
        self.fetch_manager = broker.fetch_manager
        self.authorizer = authorizer
        self.broker_id = broker.broker_id
        self.extra_handlers: dict[type, Callable[[Envelope], None]] = {}
        # The newest Fetch version this broker's release speaks (kafka_ref.broker.version).
        self.max_fetch_version = broker.config.broker_version.fetch_request_version()
        self._handlers: dict[type, Callable[[Envelope], None]] = {
            LeaderAndIsrRequest: self.handle_leader_and_isr_request,
            StopReplicaRequest: self.handle_stop_replica_request,
            UpdateMetadataRequest: self.handle_update_metadata_request,
            ProduceRequest: self.handle_produce_request,
            FetchRequest: self.handle_fetch_request,
            ListOffsetsRequest: self.handle_list_offsets_request,
            OffsetForLeaderEpochRequest: self.handle_offset_for_leader_epoch_request,
            MetadataRequest: self.handle_topic_metadata_request,
            DescribeConfigsRequest: self.handle_describe_configs_request,
            DescribeClusterRequest: self.handle_describe_cluster,
            DeleteRecordsRequest: self.handle_delete_records_request,
            DescribeLogDirsRequest: self.handle_describe_log_dirs_request,
        }
        self._log = state_change_logger(broker_id=self.broker_id)
        self.auto_topic_creation_manager = DefaultAutoTopicCreationManager(broker)

    def enable_zk_apis(self, controller: Any, admin_manager: Any) -> None:
        """ZooKeeper mode: the controller APIs and topic administration are served here too."""
        from kafka_ref.common.requests.alter_partition import AlterPartitionRequest
        from kafka_ref.common.requests.controlled_shutdown import ControlledShutdownRequest
        from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest
        from kafka_ref.common.requests.create_topics import CreateTopicsRequest
        from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest
        from kafka_ref.common.requests.incremental_alter_configs import IncrementalAlterConfigsRequest
        from kafka_ref.common.requests.alter_configs import AlterConfigsRequest

        self.controller = controller
        self.admin_manager = admin_manager
        self._handlers[AlterPartitionRequest] = self.handle_alter_partition_request
        self._handlers[CreateTopicsRequest] = self.handle_create_topics_request
        self._handlers[CreatePartitionsRequest] = self.handle_create_partitions_request
        self._handlers[DeleteTopicsRequest] = self.handle_delete_topics_request
        self._handlers[ControlledShutdownRequest] = self.handle_controlled_shutdown_request
        self._handlers[IncrementalAlterConfigsRequest] = self.handle_incremental_alter_configs_request
        self._handlers[AlterConfigsRequest] = self.handle_alter_configs_request

    def register(self, request_type: type, handler: Callable[[Envelope], None]) -> None:
        """Let another component (the group coordinator, the controller) serve an API here."""
        self.extra_handlers[request_type] = handler

    def handle(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handle: dispatch by request type, answer errors.

        Before dispatch, a request other than Produce and Fetch (the hot paths, whose numbers
        the log checks where it uses them) has its integer fields checked against their schema
        types: a value no wire message could carry is INVALID_REQUEST, as a Kafka broker could
        not have read it (kafka_ref.common.requests.schema_ranges).
        """
        request = envelope.request
        request_type = type(request)
        handler = self._handlers.get(request_type) or self.extra_handlers.get(request_type)
        try:
            if handler is None:
                self._respond_error(envelope, Errors.UNSUPPORTED_VERSION)
                return
            if request_type is not ProduceRequest and request_type is not FetchRequest:
                validate_schema_ranges(request)
            handler(envelope)
        except ApiException as exc:
            self._respond_error(envelope, Errors.for_exception(exc), str(exc) or None)
        except RUN_ENDING:
            raise
        except Exception as exc:  # a bug or unexpected input: answer, keep serving
            self._log.error("request_handler_error", request=type(request).__name__, error=repr(exc))
            self._respond_error(envelope, Errors.UNKNOWN_SERVER_ERROR)

    def _respond_error(self, envelope: Envelope, error: Errors, message: str | None = None) -> None:
        """Mirrors kafka.server.KafkaApis#handleError (the request's own error response, with the
        exception's message where the response has a message field)."""
        builder = getattr(envelope.request, "get_error_response", None)
        if builder is None:
            envelope.respond(error)
            return
        if message is not None:
            try:
                envelope.respond(builder(error.code, error_message=message))
                return
            except TypeError:
                pass
        envelope.respond(builder(error.code))

    def _authorize_cluster_action(self, envelope: Envelope) -> bool:
        return self.authorizer.authorize_cluster_action(envelope.principal)

    def _is_broker_epoch_stale(self, broker_epoch_in_request: int) -> bool:
        """Mirrors kafka.server.KafkaApis#isBrokerEpochStale: -1 (old request versions) is never stale."""
        if broker_epoch_in_request == -1:
            return False
        return broker_epoch_in_request < self.broker.broker_epoch

    # ------------------------------------------------------------------ controller requests

    def handle_leader_and_isr_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleLeaderAndIsrRequest (seed 002)."""
        request: LeaderAndIsrRequest = envelope.request
        # 1. Only the controller (ClusterAction) may send it.
        if not self._authorize_cluster_action(envelope):
            envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
            return
        # 2. A request meant for an older incarnation of this broker is refused.
        if self._is_broker_epoch_stale(request.broker_epoch):
            envelope.respond(request.get_error_response(Errors.STALE_BROKER_EPOCH.code))
            return
        # 3. Become leader or follower; the coordinator hears about __consumer_offsets changes.
        response = self.replica_manager.become_leader_or_follower(
            envelope.correlation_id, request, self.broker.on_leadership_change
        )
        envelope.respond(response)

    def handle_stop_replica_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleStopReplicaRequest (seed 002 §StopReplicaRequest)."""
        request: StopReplicaRequest = envelope.request
        if not self._authorize_cluster_action(envelope):
            envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
            return
        if self._is_broker_epoch_stale(request.broker_epoch):
            # (Refused as a whole; idle fetchers still go, as after an applied request.)
            envelope.respond(StopReplicaResponse(error_code=Errors.STALE_BROKER_EPOCH.code))
            self.replica_manager.replica_fetcher_manager.shutdown_idle_fetcher_threads()
            return
        partition_states = request.partition_states()
        # 1. Stop (and maybe delete) the replicas.
        result, error = self.replica_manager.stop_replicas(
            envelope.correlation_id, request.controller_id, request.controller_epoch, partition_states
        )
        # 2. Deleted __consumer_offsets partitions: the coordinator resigns them.
        for tp, perror in result.items():
            state = partition_states[tp]
            if tp.topic == OFFSETS_TOPIC and state.delete_partition and perror is Errors.NONE:
                self.broker.on_offsets_partition_resignation(tp.partition, state.leader_epoch)
        # 3. Answer, then let idle fetchers go.
        envelope.respond(StopReplicaResponse(
            error_code=error.code,
            partition_errors=tuple(
                StopReplicaPartitionError(topic_name=tp.topic, partition_index=tp.partition, error_code=e.code)
                for tp, e in result.items()
            ),
        ))
        self.replica_manager.replica_fetcher_manager.shutdown_idle_fetcher_threads()

    def handle_update_metadata_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleUpdateMetadataRequest."""
        request: UpdateMetadataRequest = envelope.request
        if not self._authorize_cluster_action(envelope):
            envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
            return
        if self._is_broker_epoch_stale(request.broker_epoch):
            envelope.respond(UpdateMetadataResponse(error_code=Errors.STALE_BROKER_EPOCH.code))
            return
        deleted = self.replica_manager.maybe_update_metadata_cache(envelope.correlation_id, request)
        if deleted:
            self.broker.on_deleted_partitions(deleted)
        # Topic creations and deletions waiting for this metadata may complete now.
        admin_manager = getattr(self, "admin_manager", None)
        if admin_manager is not None:
            for topic in {s.topic_name for s in request.partition_states()}:
                admin_manager.try_complete_delayed_topic_operations(topic)
        # Elections waiting for these leaders may complete now (ReplicaManager#tryCompleteElection).
        elections = getattr(self, "delayed_elect_leader_purgatory", None)
        if elections is not None and elections.num_delayed():
            for state in request.partition_states():
                elections.check_and_complete(TopicPartitionOperationKey.of(TopicPartition(state.topic_name,
                                                                                          state.partition_index)))
        envelope.respond(UpdateMetadataResponse(error_code=Errors.NONE.code))

    # ------------------------------------------------------------------ client requests

    def handle_produce_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleProduceRequest.

        0. Transactional records need a transactional id the principal may WRITE: without one
        the whole request is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (no ACLs on transactional ids
        here, so an id is always allowed; kafka_ref has no transaction coordinator). From
        version 10 (KIP-951) a NOT_LEADER_OR_FOLLOWER partition names the leader this broker
        knows, and the response lists that leader's endpoint.
        """
        request: ProduceRequest = envelope.request
        # 0. Transactional records.
        if request.transactional_id is None and has_transactional_records(request):
            if request.acks == 0:
                envelope.fail(DisconnectException(f"broker {self.broker_id} closed the connection: transactional "
                                                  "records without a transactional id"))
            else:
                envelope.respond(request.get_error_response(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code))
            return
        unknown: dict[TopicPartition, PartitionProduceResponse] = {}
        authorized: dict[TopicPartition, Any] = {}
        # 1. Partitions the producer may not write (TOPIC_AUTHORIZATION_FAILED), unknown ones
        #    (UNKNOWN_TOPIC_OR_PARTITION) and malformed record sets (INVALID_RECORD) are answered
        #    without touching the logs.
        for tp, records in request.partition_records().items():
            if not self.authorizer.authorize_topic(envelope.principal, "WRITE", tp.topic):
                unknown[tp] = PartitionProduceResponse(index=tp.partition, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code, base_offset=-1)
                continue
            if not self.metadata_cache.contains(tp):
                unknown[tp] = PartitionProduceResponse(index=tp.partition, error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code, base_offset=-1)
                continue
            try:
                validate_records(records)
            except ApiException as exc:
                unknown[tp] = PartitionProduceResponse(index=tp.partition, error_code=Errors.for_exception(exc).code,
                                                       base_offset=-1, error_message=str(exc))
                continue
            authorized[tp] = records

        def send_response_callback(statuses: dict[TopicPartition, Any]) -> None:
            merged = dict(unknown)
            not_leader: list[TopicPartition] = []
            for tp, status in statuses.items():
                error = status.error
                merged[tp] = PartitionProduceResponse(
                    index=tp.partition,
                    error_code=error.code,
                    base_offset=status.base_offset,
                    log_append_time_ms=status.log_append_time_ms,
                    log_start_offset=status.log_start_offset,
                    error_message=status.error_message,
                )
                if error is Errors.NOT_LEADER_OR_FOLLOWER:
                    not_leader.append(tp)
            # KIP-951 (v10+): where the leader is, for partitions this broker does not lead.
            node_endpoints: dict[int, NodeEndpoint] = {}
            if not_leader and (envelope.api_version is None or envelope.api_version >= 10):
                for tp in not_leader:
                    leader_id, leader_epoch, node = self._get_current_leader(tp)
                    if node is not None:
                        node_endpoints[node.node_id] = node
                    merged[tp] = dataclasses.replace(merged[tp], current_leader=LeaderIdAndEpoch(
                        leader_id=leader_id, leader_epoch=leader_epoch))
            # acks=0: the producer reads no answer; on an error the broker closes the
            # connection so the producer notices and refreshes its metadata.
            if request.acks != 0:
                envelope.respond(ProduceResponse.of(merged, node_endpoints=node_endpoints.values()) if node_endpoints
                                 else ProduceResponse.of(merged))
            elif any(r.error_code != Errors.NONE.code for r in merged.values()):
                envelope.fail(DisconnectException(
                    f"broker {self.broker_id} closed the connection after a failed acks=0 produce"))

        # 2. Append (acks=-1 may wait in the produce purgatory).
        if not authorized:
            send_response_callback({})
            return
        self.replica_manager.append_records(
            timeout_ms=request.timeout_ms,
            required_acks=request.acks,
            internal_topics_allowed=False,
            origin=AppendOrigin.CLIENT,
            entries_per_partition=authorized,
            response_callback=send_response_callback,
        )

    def _get_current_leader(self, tp: TopicPartition) -> tuple[int, int, NodeEndpoint | None]:
        """Mirrors kafka.server.KafkaApis#getCurrentLeader: the leader id and epoch of the local
        partition, else of the metadata cache (-1, -1 when neither knows it), and the leader's
        endpoint when it is an alive broker."""
        partition = self.replica_manager.get_partition_or_error(tp)
        if not isinstance(partition, Errors):
            leader_id = partition.leader_replica_id_opt if partition.leader_replica_id_opt is not None else -1
            leader_epoch = partition.leader_epoch
        else:
            info = self.metadata_cache.get_partition_info(tp)
            leader_id, leader_epoch = (info.leader, info.leader_epoch) if info is not None else (-1, -1)
        # The alive leader as a node with its rack (a replica's node), else its bare endpoint.
        replica_node = self.metadata_cache.get_partition_replica_endpoints(tp).get(leader_id)
        if replica_node is not None:
            return leader_id, leader_epoch, NodeEndpoint(node_id=replica_node.id, host=replica_node.host,
                                                         port=replica_node.port, rack=replica_node.rack)
        broker = self.metadata_cache.get_alive_broker_node(leader_id) if leader_id >= 0 else None
        node = NodeEndpoint(node_id=broker.id, host=broker.host, port=broker.port) if broker is not None else None
        return leader_id, leader_epoch, node

    def handle_fetch_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleFetchRequest (with KIP-227 fetch sessions)."""
        request: FetchRequest = envelope.request
        topic_names = {tid: name for name, tid in self.metadata_cache.topic_ids.items()}
        # 1. The fetch context: full, incremental, sessionless, or a session error.
        context = self.fetch_manager.new_context_for_request(request, topic_names)
        erroneous: list[tuple[Any, PartitionData]] = []
        interesting: list[tuple[Any, Any]] = []
        is_from_follower = request.is_from_follower()
        # 2. Followers need ClusterAction (without it every partition answers
        #    TOPIC_AUTHORIZATION_FAILED), consumers READ on each topic; everyone needs partitions
        #    the cache knows.
        if is_from_follower and not self._authorize_cluster_action(envelope):
            context.foreach_partition(lambda tip, data: erroneous.append(
                (tip, FetchResponse.partition_response(tip.partition, Errors.TOPIC_AUTHORIZATION_FAILED.code))))
        else:
            def classify(tip: Any, data: Any) -> None:
                if not tip.topic:
                    if is_from_follower:
                        self._warn_follower_fetch_unknown_partition(tip, request.requesting_replica_id(), Errors.UNKNOWN_TOPIC_ID)
                    erroneous.append((tip, FetchResponse.partition_response(tip.partition, Errors.UNKNOWN_TOPIC_ID.code)))
                elif not is_from_follower and not self.authorizer.authorize_topic(envelope.principal, "READ", tip.topic):
                    erroneous.append((tip, FetchResponse.partition_response(tip.partition, Errors.TOPIC_AUTHORIZATION_FAILED.code)))
                elif not self.metadata_cache.contains(tip.topic_partition):
                    if is_from_follower:
                        self._warn_follower_fetch_unknown_partition(tip, request.requesting_replica_id(),
                                                                    Errors.UNKNOWN_TOPIC_OR_PARTITION)
                    erroneous.append((tip, FetchResponse.partition_response(tip.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION.code)))
                else:
                    interesting.append((tip, data))
            context.foreach_partition(classify)

        # An incremental context can say which partitions it would leave out unchanged: those
        # get no PartitionData at all (the response would drop them anyway).
        left_out = context.left_out if isinstance(context, IncrementalFetchContext) else None

        # Fetch v11+ carries the consumer's rack: Kafka builds the client metadata for every such
        # request (KIP-392), which also lets a follower answer a consumer. An in-process request
        # is read at the newest version both sides know (a broker of an older release, see
        # kafka_ref.broker.version, never sees v11).
        version = envelope.api_version if envelope.api_version is not None else min(
            request.request_version(), self.max_fetch_version)

        def process_response_callback(results: list[tuple[TopicPartition, Any]]) -> None:
            by_tp = dict(results)
            updates: dict[Any, PartitionData] = {}
            not_leader: list[Any] = []
            for tip, data in erroneous:
                updates[tip] = data
            for tip, _ in interesting:
                tp = tip.topic_partition
                r = by_tp[tp]
                if r.error is Errors.NOT_LEADER_OR_FOLLOWER or r.error is Errors.FENCED_LEADER_EPOCH:
                    not_leader.append(tip)
                if left_out is not None and r.diverging_epoch is None and r.preferred_read_replica is None:
                    records = r.info.records if r.info is not None else None
                    if left_out(tp, r.high_watermark, r.last_stable_offset, r.leader_log_start_offset,
                                records.size_in_bytes if records is not None else 0, r.error.code):
                        continue
                diverging = (
                    DivergingEpoch(epoch=r.diverging_epoch.leader_epoch, end_offset=r.diverging_epoch.end_offset)
                    if r.diverging_epoch is not None else DivergingEpoch()
                )
                updates[tip] = PartitionData(
                    partition_index=tip.partition,
                    error_code=r.error.code,
                    high_watermark=r.high_watermark,
                    last_stable_offset=r.last_stable_offset,
                    log_start_offset=r.leader_log_start_offset,
                    diverging_epoch=diverging,
                    records=r.info.records if r.info is not None else FetchResponse.partition_response(0, 0).records,
                    preferred_read_replica=r.preferred_read_replica if r.preferred_read_replica is not None
                    else FetchResponse.INVALID_PREFERRED_REPLICA_ID,
                )
            # KIP-951 (v16+): where the leader is, for partitions refused as not led or fenced here.
            node_endpoints: dict[int, NodeEndpoint] = {}
            if not_leader and version >= 16:
                for tip in not_leader:
                    leader_id, leader_epoch, node = self._get_current_leader(tip.topic_partition)
                    if node is not None:
                        node_endpoints[node.node_id] = node
                    if tip in updates:
                        updates[tip] = dataclasses.replace(updates[tip], current_leader=LeaderIdAndEpoch(
                            leader_id=leader_id, leader_epoch=leader_epoch))
            response = context.update_and_generate_response_data(updates)
            if node_endpoints:
                response = dataclasses.replace(response, node_endpoints=tuple(node_endpoints.values()))
            envelope.respond(response)

        # 3. Read (maybe waiting in the fetch purgatory).
        if not interesting:
            process_response_callback([])
            return
        client_metadata = (ClientMetadata(request.rack_id, str(envelope.src), "", envelope.principal, "PLAINTEXT")
                           if version >= 11 else None)
        params = self.replica_manager.fetch_params(request, client_metadata)
        topic_ids = {tip.topic: tip.topic_id for tip, _ in interesting}
        self.replica_manager.fetch_messages(
            params, [(tip.topic_partition, data) for tip, data in interesting], process_response_callback, topic_ids
        )

    def _warn_follower_fetch_unknown_partition(self, tip: Any, follower: int, error: Errors) -> None:
        """Say once per partition why a follower is refused: the metadata cache does not know it.

        Kafka's controller always sends UpdateMetadata with a LeaderAndIsr; a test playing the
        controller that sends only the LeaderAndIsr hits this (UNKNOWN_TOPIC_ID for a fetch by
        topic id, UNKNOWN_TOPIC_OR_PARTITION by name), and an acks=all append then waits for its
        timeout. Not on the hot path: only refused fetches reach here.
        """
        warned = self.__dict__.setdefault("_warned_unknown_follower_partitions", set())
        key = (tip.topic_id, tip.topic, tip.partition)
        if key in warned:
            return
        warned.add(key)
        name = tip.topic or next((p.topic for p in self.replica_manager.online_partitions()
                                  if p.topic_id == tip.topic_id), "") or str(tip.topic_id)
        self._log.warning("follower_fetch_refused_unknown_partition", topic_partition=f"{name}-{tip.partition}",
                          follower=follower, error=error.name,
                          hint="the metadata cache has no state for this partition: send UpdateMetadata with it "
                               "(as the controller does with every LeaderAndIsr)")

    def handle_list_offsets_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleListOffsetRequest (v1+: #handleListOffsetRequestV1AndAbove).

        1. A topic the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED for each of
        its partitions, after the other topics; 2. a partition named twice is INVALID_REQUEST
        (each time); 3. the others ask the replica manager: only a consumer (replica id -1) has an
        isolation level (a broker or the debugging id reads up to the log end), only the
        debugging id (-2) may ask a follower; the offset's leader epoch is answered from version
        4, and OFFSET_NOT_AVAILABLE is LEADER_NOT_AVAILABLE before version 5; any other failure
        is that partition's error.
        """
        request: ListOffsetsRequest = envelope.request
        version = envelope.api_version
        replica_id = request.replica_id
        isolation = request.isolation_level if replica_id == ListOffsetsRequest.CONSUMER_REPLICA_ID else None
        fetch_only_leader = replica_id != ListOffsetsRequest.DEBUGGING_REPLICA_ID
        duplicates = request.duplicate_partitions()
        authorized: list[ListOffsetsTopicResponse] = []
        refused: list[ListOffsetsTopicResponse] = []
        for topic in request.topics:
            # 1. DESCRIBE on the topic.
            if not self.authorizer.authorize_topic(envelope.principal, "DESCRIBE", topic.name):
                refused.append(ListOffsetsTopicResponse(name=topic.name, partitions=tuple(
                    ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                 error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code)
                    for p in topic.partitions)))
                continue
            responses = []
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                # 2. Duplicates.
                if tp in duplicates:
                    responses.append(ListOffsetsPartitionResponse(partition_index=tp.partition,
                                                                  error_code=Errors.INVALID_REQUEST.code))
                    continue
                # 3. The replica manager.
                try:
                    found = self.replica_manager.fetch_offset_for_timestamp(
                        tp, p.timestamp, isolation, p.current_leader_epoch, fetch_only_leader)
                    if found is None:
                        resp = ListOffsetsPartitionResponse(partition_index=tp.partition, error_code=Errors.NONE.code)
                    else:
                        epoch = found.leader_epoch if found.leader_epoch is not None and (version is None or version >= 4) else -1
                        resp = ListOffsetsPartitionResponse(partition_index=tp.partition, error_code=Errors.NONE.code,
                                                            timestamp=found.timestamp, offset=found.offset, leader_epoch=epoch)
                except RUN_ENDING:
                    raise
                except Exception as exc:  # Kafka answers every Throwable as the partition's error
                    if not isinstance(exc, ApiException):
                        self._log.error("list_offsets_error", topic_partition=str(tp), error=repr(exc))
                    error = Errors.for_exception(exc)
                    if error is Errors.OFFSET_NOT_AVAILABLE and version is not None and version < 5:
                        error = Errors.LEADER_NOT_AVAILABLE
                    resp = ListOffsetsPartitionResponse(partition_index=tp.partition, error_code=error.code)
                responses.append(resp)
            authorized.append(ListOffsetsTopicResponse(name=topic.name, partitions=tuple(responses)))
        envelope.respond(ListOffsetsResponse(topics=tuple(authorized + refused)))

    def handle_offset_for_leader_epoch_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleOffsetForLeaderEpochRequest."""
        request: OffsetForLeaderEpochRequest = envelope.request
        # 1. ClusterAction (brokers) covers every topic; otherwise (KIP-320 consumers) each
        #    topic needs DESCRIBE, and the others answer TOPIC_AUTHORIZATION_FAILED.
        cluster_action = self._authorize_cluster_action(envelope)
        requested: dict[TopicPartition, tuple[int, int]] = {}
        unauthorized: list[TopicPartition] = []
        for topic in request.topics:
            allowed = cluster_action or self.authorizer.authorize_topic(envelope.principal, "DESCRIBE", topic.topic)
            for p in topic.partitions:
                tp = TopicPartition(topic.topic, p.partition)
                if allowed:
                    requested[tp] = (p.current_leader_epoch, p.leader_epoch)
                else:
                    unauthorized.append(tp)
        # 2. End offsets from the leader's epoch cache.
        results = self.replica_manager.last_offset_for_leader_epoch(requested)
        for tp in unauthorized:
            results[tp] = _epoch_end_error(tp, Errors.TOPIC_AUTHORIZATION_FAILED)
        by_topic: dict[str, list[Any]] = {}
        for tp, r in results.items():
            by_topic.setdefault(tp.topic, []).append(r)
        envelope.respond(OffsetForLeaderEpochResponse(
            topics=tuple(OffsetForLeaderTopicResult(topic=t, partitions=tuple(ps)) for t, ps in by_topic.items())
        ))

    def handle_topic_metadata_request(self, envelope: Envelope) -> None:
        """Serves Metadata: ``handle_topic_metadata_request`` in kafka_ref/server/topic_metadata_request.py
        mirrors kafka.server.KafkaApis#handleTopicMetadataRequest."""
        from kafka_ref.server.topic_metadata_request import handle_topic_metadata_request

        handle_topic_metadata_request(self, envelope)

    def handle_describe_cluster(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDescribeCluster and AuthHelper#computeDescribeClusterResponse.

        1. A broker serves the BROKER endpoint type only: an unknown type is UNSUPPORTED_ENDPOINT_TYPE,
        the controller type MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST for both at version 0, which
        has no such errors); 2. the alive brokers, the cluster id and the controller id exactly as
        this broker's Metadata answer has them; an id not among the brokers becomes -1; 3. the
        authorized operations only when asked (no ACLs here: everything a CLUSTER resource
        supports, ClusterAction for super users only).
        """
        from kafka_ref.common.requests.describe_cluster import (
            AUTHORIZED_OPERATIONS_OMITTED,
            CLUSTER_OPERATIONS,
            ENDPOINT_TYPE_BROKER,
            ENDPOINT_TYPE_CONTROLLER,
            DescribeClusterBroker,
            DescribeClusterResponse,
            operations_bit_field,
        )

        request = envelope.request
        version = envelope.api_version
        # 1. The endpoint type.
        if request.endpoint_type not in (ENDPOINT_TYPE_BROKER, ENDPOINT_TYPE_CONTROLLER):
            envelope.respond(DescribeClusterResponse(
                error_code=(Errors.INVALID_REQUEST if version == 0 else Errors.UNSUPPORTED_ENDPOINT_TYPE).code,
                error_message=f"Unsupported endpoint type {request.endpoint_type}"))
            return
        if request.endpoint_type != ENDPOINT_TYPE_BROKER:
            envelope.respond(DescribeClusterResponse(
                error_code=(Errors.INVALID_REQUEST if version == 0 else Errors.MISMATCHED_ENDPOINT_TYPE).code,
                error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"))
            return
        # 2. What Metadata would say.
        metadata = self.metadata_cache.get_topic_metadata([])
        brokers = tuple(DescribeClusterBroker(broker_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
                        for b in metadata.brokers)
        controller_id = metadata.controller_id if any(b.broker_id == metadata.controller_id for b in brokers) else -1
        # 3. Authorized operations, if asked for (ClusterAction is the super users' only).
        operations = AUTHORIZED_OPERATIONS_OMITTED
        if request.include_cluster_authorized_operations:
            allowed = set(CLUSTER_OPERATIONS)
            if not self.authorizer.authorize_cluster_action(envelope.principal):
                allowed.discard("CLUSTER_ACTION")
            operations = operations_bit_field(allowed)
        envelope.respond(DescribeClusterResponse(cluster_id=metadata.cluster_id or "", controller_id=controller_id,
                                                 brokers=brokers, cluster_authorized_operations=operations))

    def handle_describe_log_dirs_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDescribeLogDirsRequest.

        1. The partitions asked for: a null topic list means every log this broker holds; 2. the
        broker's log directories as ReplicaManager#describeLogDirs sees them (DESCRIBE on the
        cluster is everyone's here: no ACLs, so CLUSTER_AUTHORIZATION_FAILED is never sent).
        """
        from kafka_ref.common.requests.describe_log_dirs import DescribeLogDirsResponse
        from kafka_ref.server.log_dirs import describe_log_dirs

        request: DescribeLogDirsRequest = envelope.request
        # 1. Which partitions.
        if request.is_all_topic_partitions():
            partitions = {log.topic_partition for log in self.replica_manager.log_manager.all_logs()}
        else:
            partitions = {TopicPartition(t.topic, p) for t in request.topics for p in t.partitions}
        # 2. The directories.
        envelope.respond(DescribeLogDirsResponse(error_code=Errors.NONE.code,
                                                 results=tuple(describe_log_dirs(self.replica_manager, partitions))))

    def handle_delete_records_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDeleteRecordsRequest (both metadata modes).

        1. Each partition: TOPIC_AUTHORIZATION_FAILED without DELETE on its topic,
        UNKNOWN_TOPIC_OR_PARTITION if the metadata cache does not know it; 2. the rest go to
        ReplicaManager#deleteRecords, which may wait up to the request's timeout for the
        replicas; 3. one response with every partition, unauthorized and unknown ones included.
        """
        from kafka_ref.common.requests.delete_records import DeleteRecordsPartitionResult, DeleteRecordsResponse

        request: DeleteRecordsRequest = envelope.request
        # 1. Sort the partitions.
        refused: dict[TopicPartition, DeleteRecordsPartitionResult] = {}
        authorized: dict[TopicPartition, int] = {}
        allowed = {t.name: self.authorizer.authorize_topic(envelope.principal, "DELETE", t.name) for t in request.topics}
        for tp, offset in request.offsets().items():
            if not allowed[tp.topic]:
                refused[tp] = DeleteRecordsPartitionResult(partition_index=tp.partition, error_code=Errors.TOPIC_AUTHORIZATION_FAILED.code,
                                                           low_watermark=DeleteRecordsResponse.INVALID_LOW_WATERMARK)
            elif not self.metadata_cache.contains(tp):
                refused[tp] = DeleteRecordsPartitionResult(partition_index=tp.partition, error_code=Errors.UNKNOWN_TOPIC_OR_PARTITION.code,
                                                           low_watermark=DeleteRecordsResponse.INVALID_LOW_WATERMARK)
            else:
                authorized[tp] = offset

        # 3. The response: the replica manager's answers, then the refused partitions.
        def send_response_callback(results: dict[TopicPartition, DeleteRecordsPartitionResult]) -> None:
            merged = {**results, **refused}
            for tp, status in merged.items():
                if status.error_code != Errors.NONE.code:
                    self._log.debug("delete_records_failed", topic_partition=str(tp),
                                    correlation_id=envelope.correlation_id, error=Errors.for_code(status.error_code).name)
            envelope.respond(DeleteRecordsResponse.of(merged))

        # 2. Delete (maybe waiting in the DeleteRecords purgatory).
        if not authorized:
            send_response_callback({})
        else:
            self.replica_manager.delete_records(request.timeout_ms, authorized, send_response_callback)

    # ------------------------------------------------------------------ ZooKeeper-mode controller APIs

    def handle_describe_configs_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleDescribeConfigsRequest (ConfigHelper#handleDescribeConfigsRequest in config_helper.py)."""
        from kafka_ref.server.config_helper import handle_describe_configs_request

        envelope.respond(handle_describe_configs_request(self.broker, envelope.request, self.authorizer, envelope.principal))

    def handle_alter_partition_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleAlterPartitionRequest: ClusterAction, then the controller."""
        request = envelope.request
        if not self._authorize_cluster_action(envelope):
            envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
            return
        self.controller.alter_partitions(request, envelope.respond)

    def handle_create_topics_request(self, envelope: Envelope) -> None:
        """Serves CreateTopics: ``handle_create_topics_request`` in kafka_ref/server/topic_admin_requests.py
        mirrors kafka.server.KafkaApis#handleCreateTopicsRequest (only the controller creates)."""
        from kafka_ref.server.topic_admin_requests import handle_create_topics_request

        handle_create_topics_request(self, envelope)

    def handle_create_partitions_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleCreatePartitionsRequest (ZooKeeper mode).

        1. Only the active controller adds partitions (NOT_CONTROLLER for every topic
        elsewhere); 2. a topic named twice is INVALID_REQUEST, one the principal may not ALTER
        is TOPIC_AUTHORIZATION_FAILED, one queued for deletion INVALID_TOPIC_EXCEPTION; 3. the
        rest go to ZkAdminManager#createPartitions, and the answer lists every topic.
        """
        from kafka_ref.common.requests.create_partitions import CreatePartitionsResponse, CreatePartitionsTopicResult

        request = envelope.request

        def send_response(results: dict[str, tuple[Errors, str | None]]) -> None:
            envelope.respond(CreatePartitionsResponse(results=tuple(
                CreatePartitionsTopicResult(name=topic, error_code=error.code, error_message=message)
                for topic, (error, message) in results.items())))

        # 1. The controller's job.
        if not self.controller.is_active:
            send_response({t.name: (Errors.NOT_CONTROLLER, None) for t in request.topics})
            return
        # 2. Duplicates, authorization, topics being deleted.
        names = [t.name for t in request.topics]
        dupes = {n for n in names if names.count(n) > 1}
        errors: dict[str, tuple[Errors, str | None]] = {n: (Errors.INVALID_REQUEST, "Duplicate topic in request.") for n in dupes}
        valid = []
        for topic in request.topics:
            if topic.name in dupes:
                continue
            if not self.authorizer.authorize_topic(envelope.principal, "ALTER", topic.name):
                errors[topic.name] = (Errors.TOPIC_AUTHORIZATION_FAILED, "The topic authorization is failed.")
            elif self.controller.controller_context.is_topic_queued_up_for_deletion(topic.name):
                errors[topic.name] = (Errors.INVALID_TOPIC_EXCEPTION, "The topic is queued for deletion.")
            else:
                valid.append(topic)
        # 3. The admin manager, then the errors added to its results.
        self.admin_manager.create_partitions(request.timeout_ms, valid, request.validate_only,
                                             lambda results: send_response({**results, **errors}))

    def handle_delete_topics_request(self, envelope: Envelope) -> None:
        """Serves DeleteTopics: ``handle_delete_topics_request`` in kafka_ref/server/topic_admin_requests.py
        mirrors kafka.server.KafkaApis#handleDeleteTopicsRequest (only the controller deletes)."""
        from kafka_ref.server.topic_admin_requests import handle_delete_topics_request

        handle_delete_topics_request(self, envelope)

    def handle_incremental_alter_configs_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleIncrementalAlterConfigsRequest (ZooKeeper mode: any broker)."""
        from kafka_ref.server.config_admin import zk_incremental_alter_configs

        envelope.respond(zk_incremental_alter_configs(self.broker, envelope.request, envelope.principal))

    def handle_alter_configs_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleAlterConfigsRequest (ZooKeeper mode: any broker; legacy, replaces the overrides)."""
        from kafka_ref.server.config_admin import zk_legacy_alter_configs

        envelope.respond(zk_legacy_alter_configs(self.broker, envelope.request, envelope.principal))

    def handle_controlled_shutdown_request(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.KafkaApis#handleControlledShutdownRequest."""
        from kafka_ref.common.requests.controlled_shutdown import ControlledShutdownResponse, RemainingPartition

        request = envelope.request
        if not self._authorize_cluster_action(envelope):
            envelope.respond(ControlledShutdownResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code))
            return

        def callback(result: Any) -> None:
            if isinstance(result, Errors):
                envelope.respond(ControlledShutdownResponse(error_code=result.code))
            else:
                envelope.respond(ControlledShutdownResponse(error_code=Errors.NONE.code, remaining_partitions=tuple(
                    RemainingPartition(topic_name=tp.topic, partition_index=tp.partition) for tp in result)))

        from kafka_ref.controller.controller_events import ControlledShutdown

        self.controller.event_manager.put(ControlledShutdown(request.broker_id, request.broker_epoch, callback))


def _epoch_end_error(tp: TopicPartition, error: Errors) -> Any:
    from kafka_ref.common.requests.offsets_for_leader_epoch import EpochEndOffset

    return EpochEndOffset(error_code=error.code, partition=tp.partition, leader_epoch=-1, end_offset=-1)
