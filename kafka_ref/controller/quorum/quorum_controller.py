"""The KRaft controller: every controller node runs one; the active one is the Raft leader.

Mirrors org.apache.kafka.controller.QuorumController (Kafka 3.4) with its control managers
(cluster, replication, configuration, features, producer ids) and kafka.server.ControllerApis
(the requests it serves; the admin requests' handlers are in controller_admin_handlers.py).
Every write follows QuorumController's ControllerWriteEvent:

1. the operation computes records and an answer from the current in-memory state;
2. the active controller replays the records at once (its state runs ahead of the commit);
3. the records go to the Raft log as one atomic batch;
4. the answer is deferred until the batch is committed (a majority of the voters has it).

Standby controllers (the other voters) replay every committed batch. The Raft leader's
controller claims leadership once it has replayed everything before its epoch; when the
leadership moves on it renounces: the writes it was waiting on fail with NOT_CONTROLLER and its
in-memory state goes back to the last committed offset.

A background task fences brokers whose session expired (``broker.session.timeout.ms`` of loop
time without a heartbeat): QuorumController's ``maybeFenceReplicas`` event, rescheduled after
every heartbeat and registration.
"""

from __future__ import annotations

import enum

import random
from typing import Any, Callable

import anyio

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import ApiException, Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.schema_ranges import validate_schema_ranges
from kafka_ref.server.bounded_list import BoundedListTooLongException
from kafka_ref.common.requests.alter_partition import AlterPartitionRequest
from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest
from kafka_ref.common.requests.create_topics import CreateTopicsRequest
from kafka_ref.common.requests.alter_configs import AlterConfigsRequest
from kafka_ref.common.requests.incremental_alter_configs import IncrementalAlterConfigsRequest
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest
from kafka_ref.common.requests.list_partition_reassignments import ListPartitionReassignmentsRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.common.requests.broker_requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from kafka_ref.controller.quorum.cluster_control_manager import ClusterControlManager
from kafka_ref.controller.quorum.configuration_control_manager import (
    ConfigurationControlManager,
    FeatureControlManager,
    ProducerIdControlManager,
)
from kafka_ref.controller.quorum.controller_admin_handlers import ControllerAdminHandlers
from kafka_ref.controller.quorum.controller_result import ControllerResult
from kafka_ref.common.requests.begin_quorum_epoch import BeginQuorumEpochRequest
from kafka_ref.common.requests.end_quorum_epoch import EndQuorumEpochRequest
from kafka_ref.common.requests.metadata_fetch import MetadataFetchRequest
from kafka_ref.common.requests.vote import VoteRequest
from kafka_ref.controller.quorum.committed_view import CommittedPartitionView
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient, NotLeaderException
from kafka_ref.raft.quorum_state import QuorumConfig
from kafka_ref.raft.raft_client import BatchReader
from kafka_ref.image.records import MetadataRecordType
from kafka_ref.controller.quorum.replication_control_manager import MAX_RECORDS_PER_USER_OP, ReplicationControlManager  # noqa: F401
from kafka_ref.network.network import Envelope
from kafka_ref.server.authorizer import Authorizer

# The KRaft cluster's id, fixed: a Uuid in Kafka's base64 form, as `kafka-storage random-uuid` makes
# one (MetadataRequestTest#testClusterIdIsValid); the 16 bytes spell "KafkaRefKRaftClu".
CLUSTER_ID = "S2Fma2FSZWZLUmFmdENsdQ"
# Requests the node's Raft client answers (KafkaRaftClient#handleRequest), not the controller.
RAFT_REQUESTS = (MetadataFetchRequest, VoteRequest, BeginQuorumEpochRequest, EndQuorumEpochRequest)
# Admin requests and the operation on the Cluster resource each needs (ControllerApis#handleElectLeaders,
# #handleAlterPartitionReassignments, #handleListPartitionReassignments).
CLUSTER_OPERATIONS = {ElectLeadersRequest: "ALTER", AlterPartitionReassignmentsRequest: "ALTER",
                      ListPartitionReassignmentsRequest: "DESCRIBE"}


EXCESSIVELY_LARGE_BATCH = "Unable to perform excessively large batch operation."


def _error_response(request: Any, error: Errors, message: str | None) -> Any:
    """The request's whole-request error response, with ``message`` where the response carries one."""
    if message is not None:
        try:
            return request.get_error_response(error.code, error_message=message)
        except TypeError:
            pass
    return request.get_error_response(error.code)


class ImbalanceSchedule(enum.Enum):
    """Mirrors QuorumController.ImbalanceSchedule: where the next leader-balancing run stands."""

    SCHEDULED = "scheduled"  # a run is waiting for its deadline
    DEFERRED = "deferred"  # the next run waits a whole check interval
    IMMEDIATELY = "immediately"  # the last run stopped at its election bound: the next goes at once


class QuorumController(ControllerAdminHandlers):
    """Mirrors org.apache.kafka.controller.QuorumController (active on the Raft leader, standby elsewhere)."""

    def __init__(self, node_id: int, config: KafkaConfig, time: Time | None = None, rng: random.Random | None = None,
                 raft_client: KafkaRaftClient | None = None, authorizer: Authorizer | None = None) -> None:
        self.node_id = node_id
        self.config = config
        self.time = time or Time()
        self.rng = rng or random.Random(node_id)
        self.authorizer = authorizer or Authorizer()
        self.cluster_id = CLUSTER_ID
        self._create_managers()
        # The log and where we stand in it.
        self.raft_client = raft_client or KafkaRaftClient(node_id, (node_id,), self.time,
                                                          config=QuorumConfig.from_kafka_config(config, (node_id,)))
        self.write_offset = -1
        self.last_committed_offset = -1
        # The partitions as committed (Cluster#partition_state reads them, as Kafka's read events do).
        self.committed_view = CommittedPartitionView()
        self.cur_claim_epoch = -1
        self.deferred: list[tuple[int, Callable[[], None], Callable[[], None]]] = []
        self._fence_check: anyio.Event | None = None
        # QuorumController#leaderImbalanceCheckIntervalNs (ControllerServer: set only with
        # auto.leader.rebalance.enable) and the balancing schedule.
        self.leader_imbalance_check_interval_ns: int | None = (
            config.get("leader.imbalance.check.interval.seconds") * 1_000_000_000
            if config.get("auto.leader.rebalance.enable") else None)
        self.imbalanced_scheduled = ImbalanceSchedule.DEFERRED
        self._balance_deadline_ns: int | None = None
        self._balance_check: anyio.Event | None = None
        self._log = state_change_logger(controller_id=node_id)
        self.raft_client.register(QuorumMetaLogListener(self))
        # A restarted (or new) voter replays what its log already holds as committed; a lone voter leads at once.
        if not self.raft_client.initialized:
            self.raft_client.initialize()

    def _create_managers(self) -> None:
        """The control managers, empty (a new controller, or a renounced one rebuilding from the log)."""
        config = self.config
        node_id = self.node_id
        self.feature_control = FeatureControlManager(config.inter_broker_protocol_version)
        self.configuration_control = ConfigurationControlManager(config)
        self.cluster_control = ClusterControlManager(self.time, config.get("broker.session.timeout.ms"), self.rng,
                                                     self.feature_control, node_id, cluster_id=self.cluster_id)
        self.replication_control = ReplicationControlManager(
            self.cluster_control, self.configuration_control, self.feature_control, self.rng, node_id,
            default_num_partitions=config.get("num.partitions"),
            default_replication_factor=config.get("default.replication.factor"),
            delete_topic_enable=config.get("delete.topic.enable"),
        )
        self.producer_id_control = ProducerIdControlManager(self.cluster_control)

    # ------------------------------------------------------------------ life cycle

    @property
    def is_active(self) -> bool:
        """Mirrors QuorumController#isActive: this node claimed the metadata log's leadership."""
        return self.cur_claim_epoch >= 0

    async def run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the controller's background work: the fencing timer (active only)."""
        task_status.started(self)
        if self.leader_imbalance_check_interval_ns is None:
            await self._maybe_fence_replicas_loop()
            return
        # Leader balancing runs beside the fencing timer (only when it is enabled, so a run
        # without it schedules exactly the tasks it did before).
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._maybe_balance_partition_leaders_loop)
            await self._maybe_fence_replicas_loop()

    async def _maybe_fence_replicas_loop(self) -> None:
        """Mirrors QuorumController#rescheduleMaybeFenceStaleBrokers and its MAYBE_FENCE_REPLICAS event.

        Sleep until the oldest unfenced session expires (woken early by any heartbeat or
        registration), then fence stale brokers one write at a time.
        """
        while True:
            heartbeat_manager = self.cluster_control.heartbeat_manager
            next_check_ns = heartbeat_manager.next_check_time_ns() if self.is_active else None
            self._fence_check = anyio.Event()
            if next_check_ns is None:
                await self._fence_check.wait()
                continue
            delay_ns = next_check_ns - self.time.nanoseconds()
            if delay_ns > 0:
                with anyio.move_on_after(delay_ns / 1e9):
                    await self._fence_check.wait()
                continue
            # 1. Fence one stale broker per write, as Kafka does, until none is left.
            records = self.replication_control.maybe_fence_one_stale_broker()
            if records:
                self._write("maybeFenceReplicas", ControllerResult(records, None), lambda _r: None)
            else:
                # Exactly at the deadline the session still counts as valid: look again a moment later.
                await anyio.sleep(1e-6)

    def _reschedule_maybe_fence_stale_brokers(self) -> None:
        if self._fence_check is not None:
            self._fence_check.set()

    def _maybe_schedule_next_balance_partition_leaders(self) -> None:
        """Mirrors QuorumController#maybeScheduleNextBalancePartitionLeaders.

        On the active controller, with balancing enabled and some leader not its partition's
        preferred replica, and no run already waiting: a run a check interval from now
        (DEFERRED), or 10 ms from now when the last one stopped at its bound (IMMEDIATELY).
        """
        if (self.imbalanced_scheduled is ImbalanceSchedule.SCHEDULED or self.leader_imbalance_check_interval_ns is None
                or not self.is_active or not self.replication_control.are_partition_leaders_imbalanced()):
            return
        delay_ns = (self.leader_imbalance_check_interval_ns if self.imbalanced_scheduled is ImbalanceSchedule.DEFERRED
                    else 10_000_000)
        self._balance_deadline_ns = self.time.nanoseconds() + delay_ns
        self.imbalanced_scheduled = ImbalanceSchedule.SCHEDULED
        if self._balance_check is not None:
            self._balance_check.set()

    def _cancel_maybe_balance_partition_leaders(self) -> None:
        """Mirrors QuorumController#cancelMaybeBalancePartitionLeaders."""
        self.imbalanced_scheduled = ImbalanceSchedule.DEFERRED
        self._balance_deadline_ns = None
        if self._balance_check is not None:
            self._balance_check.set()

    async def _maybe_balance_partition_leaders_loop(self) -> None:
        """The deferred MAYBE_BALANCE_PARTITION_LEADERS event: wait for the scheduled deadline, then run it."""
        while True:
            self._balance_check = anyio.Event()
            deadline_ns = self._balance_deadline_ns
            if deadline_ns is None or not self.is_active:
                await self._balance_check.wait()
                continue
            delay_ns = deadline_ns - self.time.nanoseconds()
            if delay_ns > 0:
                with anyio.move_on_after(delay_ns / 1e9):
                    await self._balance_check.wait()
                continue
            self._balance_deadline_ns = None
            self.maybe_balance_partition_leaders()

    def maybe_balance_partition_leaders(self) -> None:
        """The MAYBE_BALANCE_PARTITION_LEADERS write event (QuorumController#maybeScheduleNextBalancePartitionLeaders).

        1. Preferred elections for the imbalanced partitions; 2. the next run goes at once if
        this one stopped at its bound, else a check interval later; 3. written like any other
        write, which schedules that next run if some leader is still not preferred.
        """
        # 1. The elections.
        records, reschedule_immediately = self.replication_control.maybe_balance_partition_leaders()
        # 2. The next run's pace.
        self.imbalanced_scheduled = ImbalanceSchedule.IMMEDIATELY if reschedule_immediately else ImbalanceSchedule.DEFERRED
        # 3. The write.
        self._write("maybeBalancePartitionLeaders", ControllerResult(records, reschedule_immediately), lambda _r: None)

    # ------------------------------------------------------------------ writes

    def _write(self, name: str, result: ControllerResult, respond: Callable[[Any], None],
               process_batch_end_offset: Callable[[int], None] | None = None, request: Any = None) -> None:
        """Mirrors QuorumController.ControllerWriteEvent#run: replay, append, answer once committed.

        ``request`` is the caller's request: if leadership is lost before the commit, it is
        answered with NOT_CONTROLLER (ControllerPurgatory#failAll on renounce).
        """

        def fail() -> None:
            if request is not None:
                respond(request.get_error_response(Errors.NOT_CONTROLLER.code))

        if not self.is_active:
            fail()
            return
        offset = self.write_offset
        if result.records:
            # 1. Replay at once, each record at the offset it will have.
            for i, record in enumerate(result.records):
                self.replay(record, self.write_offset + 1 + i)
            offset = self.write_offset + len(result.records)
            self.committed_view.stage(offset, CommittedPartitionView.capture(self.replication_control, result.records))
            # 2. The answer waits for the commit of the whole batch.
            self.deferred.append((offset, lambda: respond(result.response), fail))
            # 3. Append atomically (one voter: committed right away; else once a majority has it).
            try:
                last = self.raft_client.schedule_atomic_append(self.cur_claim_epoch, result.records)
            except NotLeaderException:
                # The Raft leadership is gone (resigned): give up the claim, fail the waiting writes.
                self.renounce()
                return
            self.write_offset = last
            self._log.info("controller_write", operation=name, records=len(result.records), last_offset=last,
                           types=sorted({type(r).__name__ for r in result.records}))
            if process_batch_end_offset is not None:
                process_batch_end_offset(last)
        else:
            # 4. Nothing written: answer once everything written so far is committed.
            self.deferred.append((offset, lambda: respond(result.response), fail))
            self._complete_deferred()
        # 5. After every write, a leader-balancing run if some leader is not its preferred replica.
        self._maybe_schedule_next_balance_partition_leaders()

    def _complete_deferred(self) -> None:
        """Mirrors ControllerPurgatory#completeUpTo: answer every write at or below the committed offset."""
        ready = [d for d in self.deferred if d[0] <= self.last_committed_offset]
        self.deferred = [d for d in self.deferred if d[0] > self.last_committed_offset]
        for _offset, complete, _fail in ready:
            complete()

    def replay(self, record: Any, offset: int) -> None:
        """Mirrors QuorumController#replay: hand the record to the manager that owns it."""
        match record.API_KEY:
            case MetadataRecordType.REGISTER_BROKER_RECORD:
                self.cluster_control.replay_register(record, offset)
            case MetadataRecordType.UNREGISTER_BROKER_RECORD:
                self.cluster_control.replay_unregister(record)
            case MetadataRecordType.TOPIC_RECORD:
                self.replication_control.replay_topic(record)
            case MetadataRecordType.PARTITION_RECORD:
                self.replication_control.replay_partition(record)
            case MetadataRecordType.CONFIG_RECORD:
                self.configuration_control.replay(record)
            case MetadataRecordType.PARTITION_CHANGE_RECORD:
                self.replication_control.replay_partition_change(record)
            case (MetadataRecordType.FENCE_BROKER_RECORD | MetadataRecordType.UNFENCE_BROKER_RECORD
                  | MetadataRecordType.BROKER_REGISTRATION_CHANGE_RECORD):
                self.cluster_control.replay_fencing(record)
            case MetadataRecordType.REMOVE_TOPIC_RECORD:
                self.replication_control.replay_remove_topic(record)
            case MetadataRecordType.FEATURE_LEVEL_RECORD:
                self.feature_control.replay(record)
            case MetadataRecordType.PRODUCER_IDS_RECORD:
                self.producer_id_control.replay(record)
            case _:
                raise RuntimeError(f"Unhandled record type {type(record).__name__}")

    # ------------------------------------------------------------------ Raft callbacks

    def claim(self, epoch: int) -> None:
        """Mirrors QuorumController.QuorumMetaLogListener#handleLeaderChange → claim: become active.

        A brand-new log gets the bootstrap records first (metadata.version).
        """
        self.cur_claim_epoch = epoch
        self.write_offset = self.raft_client.log.end_offset - 1
        # ClusterControlManager#activate: broker sessions start now, on this controller.
        self.cluster_control.activate()
        self._log.info("controller_activated", epoch=epoch, metadata_version_level=self.feature_control.bootstrap_level)
        if not self._bootstrapped():
            self._write("bootstrap", ControllerResult(list(self.feature_control.bootstrap_records()), None), lambda _r: None)
        self._reschedule_maybe_fence_stale_brokers()
        # CompleteActivationEvent#processBatchEndOffset: the periodic tasks start on the active controller.
        self._maybe_schedule_next_balance_partition_leaders()

    def _bootstrapped(self) -> bool:
        """Whether the log already holds the bootstrap records (a data record anywhere before our epoch)."""
        return any(batch.records for batch in self.raft_client.log.batches)

    def renounce(self) -> None:
        """Mirrors QuorumController#renounce: no longer active; back to the last committed state.

        1. drop the claim; 2. fail every write still waiting for its commit (NOT_CONTROLLER);
        3. rebuild the in-memory state from the committed log (SnapshotRegistry#revertToSnapshot
        at the last committed offset); 4. stop the fencing timer's work.
        """
        if not self.is_active:
            return
        epoch = self.cur_claim_epoch
        # 1. Not active.
        self.cur_claim_epoch = -1
        # 2. Waiting writes fail.
        waiting, self.deferred = self.deferred, []
        for _offset, _complete, fail in waiting:
            fail()
        # 3. Revert to what is committed.
        self.committed_view.discard_pending()
        self._create_managers()
        for batch in self.raft_client.log.read(0, max_offset=self.last_committed_offset + 1, max_batches=1 << 30):
            for i, record in enumerate(batch.records):
                self.replay(record, batch.base_offset + i)
        self.write_offset = -1
        self._log.info("controller_renounced", epoch=epoch, last_committed_offset=self.last_committed_offset,
                       failed_writes=len(waiting))
        # 4. The fencing loop sees we are no longer active; no leader balancing either.
        self._reschedule_maybe_fence_stale_brokers()
        self._cancel_maybe_balance_partition_leaders()

    def handle_commit(self, reader: BatchReader) -> None:
        """Mirrors QuorumController.QuorumMetaLogListener#handleCommit.

        1. Active: the records were replayed when they were written; only the writes waiting
           for this commit are answered.
        2. Not active (a standby, or a restarted controller catching up before it claims):
           every committed record is replayed here, at its offset.
        """
        last = reader.last_offset
        if last is None:
            return
        if not self.is_active:
            for batch in reader:
                for i, record in enumerate(batch.records):
                    self.replay(record, batch.base_offset + i)
                self.committed_view.apply(CommittedPartitionView.capture(self.replication_control, batch.records))
        self.last_committed_offset = last
        self.committed_view.commit_up_to(last)
        self._complete_deferred()

    # ------------------------------------------------------------------ ControllerApis

    def handle(self, envelope: Envelope) -> None:
        """Mirrors kafka.server.ControllerApis#handle: dispatch by request type; errors answer the request.

        0. An admin request whose principal lacks its Cluster operation (``CLUSTER_OPERATIONS``;
        forwarded requests carry the client's principal) is CLUSTER_AUTHORIZATION_FAILED.
        1. Integer fields outside their schema types are INVALID_REQUEST (schema_ranges). 2. The
        handler runs; an ApiException answers the request with its code. 3. An operation that
        would write more than MAX_RECORDS_PER_USER_OP records (BoundedListTooLongException) is
        POLICY_VIOLATION "Unable to perform excessively large batch operation." (KAFKA-14996,
        Kafka 3.5.0+). 4. Anything else is UNKNOWN_SERVER_ERROR and the controller keeps
        serving (QuorumController#handleEventException; Kafka also renounces leadership there,
        a failover kafka_ref does not make: one controller node answers the next request).
        """
        request = envelope.request
        if type(request) in RAFT_REQUESTS:
            self.raft_client.handle_request(envelope)
            return
        handlers: dict[type, Callable[[Envelope], None]] = {
            BrokerRegistrationRequest: self.handle_broker_registration,
            BrokerHeartbeatRequest: self.handle_broker_heartbeat,
            AlterPartitionRequest: self.handle_alter_partition,
            CreateTopicsRequest: self.handle_create_topics,
            CreatePartitionsRequest: self.handle_create_partitions,
            DeleteTopicsRequest: self.handle_delete_topics,
            ElectLeadersRequest: self.handle_elect_leaders,
            AlterPartitionReassignmentsRequest: self.handle_alter_partition_reassignments,
            ListPartitionReassignmentsRequest: self.handle_list_partition_reassignments,
            IncrementalAlterConfigsRequest: self.handle_incremental_alter_configs,
            AlterConfigsRequest: self.handle_legacy_alter_configs,
        }
        handler = handlers.get(type(request))
        try:
            if handler is None:
                envelope.respond(request.get_error_response(Errors.UNSUPPORTED_VERSION.code))
                return
            # The cluster operation an admin request needs (ControllerApis' authorizeClusterOperation).
            operation = CLUSTER_OPERATIONS.get(type(request))
            if operation is not None and not self.authorizer.authorize_cluster(envelope.principal, operation):
                envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
                return
            # Only the active controller serves the broker and admin requests (ControllerApis answers NOT_CONTROLLER).
            if not self.is_active:
                envelope.respond(request.get_error_response(Errors.NOT_CONTROLLER.code))
                return
            if type(request) in (BrokerRegistrationRequest, BrokerHeartbeatRequest, AlterPartitionRequest) \
                    and not self.authorizer.authorize_cluster_action(envelope.principal):
                envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
                return
            # 1. Schema ranges.
            validate_schema_ranges(request)
            # 2. The operation.
            handler(envelope)
        except ApiException as exc:
            envelope.respond(_error_response(request, Errors.for_exception(exc), str(exc) or None))
        except BoundedListTooLongException as exc:
            # 3. Too many records for one atomic batch.
            self._log.info("controller_operation_too_large", request=type(request).__name__, error=str(exc))
            envelope.respond(_error_response(request, Errors.POLICY_VIOLATION, EXCESSIVELY_LARGE_BATCH))
        except RUN_ENDING:
            raise
        except Exception as exc:
            # 4. A bug or input the controller cannot handle: answer, keep serving.
            self._log.error("controller_operation_failed", request=type(request).__name__, error=repr(exc))
            envelope.respond(request.get_error_response(Errors.UNKNOWN_SERVER_ERROR.code))

    def handle_broker_registration(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#registerBroker: the broker epoch is the offset of its RegisterBrokerRecord."""
        request: BrokerRegistrationRequest = envelope.request
        # 1. The record goes at the next offset (ClusterControlManager#registerBroker checks the
        # cluster id: InconsistentClusterIdException answers INCONSISTENT_CLUSTER_ID).
        records, epoch = self.cluster_control.register_broker(request, self.write_offset + 1)
        self._reschedule_maybe_fence_stale_brokers()
        self._write("registerBroker", ControllerResult(records, BrokerRegistrationResponse(broker_epoch=epoch)),
                    envelope.respond, request=envelope.request)

    def unregister_broker(self, broker_id: int, respond: Callable[[Any], None]) -> None:
        """Mirrors QuorumController#unregisterBroker: ReplicationControlManager#unregisterBroker, written.

        kafka_ref's brokers never send UnregisterBroker (KIP-500 decommissioning); the
        operation is here for the controller's own use and its tests. ``respond`` gets None
        once the records are committed.
        """
        self._write("unregisterBroker", ControllerResult(self.replication_control.unregister_broker(broker_id), None),
                    respond)

    def handle_broker_heartbeat(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#processBrokerHeartbeat (and ControllerApis' reply)."""
        request: BrokerHeartbeatRequest = envelope.request
        # 1. Only a registered broker heartbeats.
        register_offset = self.cluster_control.register_broker_record_offsets.get(request.broker_id)
        if register_offset is None:
            envelope.respond(request.get_error_response(Errors.STALE_BROKER_EPOCH.code))
            return
        # 2. Decide, write, remember the controlled-shutdown offset once the batch has one.
        records, reply = self.replication_control.process_broker_heartbeat(request, register_offset)
        self._reschedule_maybe_fence_stale_brokers()
        response = BrokerHeartbeatResponse(is_caught_up=reply.is_caught_up, is_fenced=reply.is_fenced,
                                           should_shut_down=reply.should_shut_down)

        def batch_end(offset: int) -> None:
            if reply.in_controlled_shutdown:
                self.cluster_control.heartbeat_manager.maybe_update_controlled_shutdown_offset(request.broker_id, offset)

        self._write("processBrokerHeartbeat", ControllerResult(records, response), envelope.respond, batch_end,
                    request=envelope.request)
        if not records and reply.in_controlled_shutdown:
            batch_end(self.write_offset)

    def handle_alter_partition(self, envelope: Envelope) -> None:
        """Mirrors QuorumController#alterPartition."""
        records, response = self.replication_control.alter_partition(envelope.request)
        self._write("alterPartition", ControllerResult(records, response), envelope.respond, request=envelope.request)

    # ------------------------------------------------------------------ views for the harness

    def partition_state(self, topic: str, partition: int) -> dict[str, Any] | None:
        """The partition's committed registration as a dict (Cluster#partition_state in KRaft mode)."""
        return self.committed_view.partition_state(topic, partition)


class QuorumMetaLogListener:
    """Mirrors QuorumController.QuorumMetaLogListener: the controller's RaftClient listener."""

    def __init__(self, controller: QuorumController) -> None:
        self.controller = controller

    def handle_commit(self, reader: BatchReader) -> None:
        self.controller.handle_commit(reader)

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        """Mirrors QuorumMetaLogListener#handleLeaderChange: claim when we lead; renounce when the leadership moved."""
        controller = self.controller
        if leader_id == controller.node_id and epoch != controller.cur_claim_epoch:
            controller.renounce()
            controller.claim(epoch)
        elif leader_id != controller.node_id and controller.is_active:
            controller.renounce()
