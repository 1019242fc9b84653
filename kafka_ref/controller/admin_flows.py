"""Install the admin flows on a KafkaController: reassignment, topic deletion, preferred election
and auto-rebalance, controlled shutdown.

Kafka keeps all of these inside kafka.controller.KafkaController; here each lives in its own
module and plugs into the controller's ``extensions`` list, whose hooks the controller calls at
the points Kafka calls the corresponding code (failover, resignation, broker start-up, replicas
going offline, AlterPartition, and the events TopicDeletion, ZkPartitionReassignment,
ReplicaLeaderElection, AutoPreferredReplicaLeaderElection,
TopicDeletionStopReplicaResponseReceived, ControlledShutdown).

The order of the list is Kafka's order of those steps: in onControllerFailover reassignments
resume before deletions, then preferred elections and the rebalance task; in onBrokerStartup
reassignments resume before deletions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest
from kafka_ref.common.requests.list_partition_reassignments import ListPartitionReassignmentsRequest
from kafka_ref.controller.admin_requests import (
    handle_elect_leaders_request,
    handle_list_partition_reassignments_request,
    new_elect_leader_purgatory,
)
from kafka_ref.controller.controlled_shutdown import ControlledShutdownFlow
from kafka_ref.controller.preferred_election import PreferredReplicaElectionFlow
from kafka_ref.controller.reassignment import ApiError, PartitionReassignmentFlow
from kafka_ref.controller.topic_deletion_manager import TopicDeletionFlow

if TYPE_CHECKING:
    from kafka_ref.controller.kafka_controller import KafkaController
    from kafka_ref.network.network import Envelope


def install_admin_flows(controller: "KafkaController") -> None:
    """Attach the four admin flows to ``controller`` (and the AlterPartitionReassignments API to its broker).

    Afterwards ``controller.topic_deletion_manager`` is the TopicDeletionManager,
    ``controller.partition_reassignment``, ``controller.preferred_replica_election`` and
    ``controller.controlled_shutdown_flow`` the flows.
    """
    # 1. The flows, in Kafka's order.
    reassignment = PartitionReassignmentFlow()
    deletion = TopicDeletionFlow(controller)
    preferred = PreferredReplicaElectionFlow()
    shutdown = ControlledShutdownFlow()
    controller.extensions.extend([reassignment, deletion, preferred, shutdown])
    # 2. Handles for the other flows and for tests.
    controller.topic_deletion_manager = deletion.manager
    controller.partition_reassignment = reassignment
    controller.preferred_replica_election = preferred
    controller.controlled_shutdown_flow = shutdown
    # 3. The broker serves AlterPartitionReassignments, ListPartitionReassignments and ElectLeaders through its controller
    # (kafka_ref/controller/admin_requests.py); elections wait in the broker's ElectLeader purgatory.
    apis = getattr(controller.broker, "apis", None)
    if apis is not None:
        apis.register(AlterPartitionReassignmentsRequest,
                      lambda envelope: handle_alter_partition_reassignments_request(controller, envelope))
        apis.register(ListPartitionReassignmentsRequest,
                      lambda envelope: handle_list_partition_reassignments_request(controller, envelope))
        purgatory = new_elect_leader_purgatory(controller.broker)
        apis.delayed_elect_leader_purgatory = purgatory
        apis.register(ElectLeadersRequest,
                      lambda envelope: handle_elect_leaders_request(controller, purgatory, envelope))


def handle_alter_partition_reassignments_request(controller: "KafkaController", envelope: "Envelope") -> None:
    """Mirrors kafka.server.KafkaApis#handleAlterPartitionReassignmentsRequest (ZooKeeper mode).

    ALTER on the cluster is required (everyone has it unless denied). The controller answers either one top-level error (NOT_CONTROLLER) or an
    error per partition.
    """
    request: AlterPartitionReassignmentsRequest = envelope.request
    # 1. Authorization.
    apis = controller.broker.apis
    if not apis.authorizer.authorize_cluster(envelope.principal, "ALTER"):
        envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
        return

    def send_response_callback(result: Any) -> None:
        # 3. Either a top-level error or one per partition.
        if isinstance(result, ApiError):
            envelope.respond(AlterPartitionReassignmentsResponse(error_code=result.error.code,
                                                                 error_message=result.message))
            return
        by_topic: dict[str, list[ReassignablePartitionResponse]] = {}
        for tp, error in result.items():
            by_topic.setdefault(tp.topic, []).append(ReassignablePartitionResponse(
                partition_index=tp.partition, error_code=error.error.code, error_message=error.message))
        envelope.respond(AlterPartitionReassignmentsResponse(responses=tuple(
            ReassignableTopicResponse(name=t, partitions=tuple(ps)) for t, ps in by_topic.items())))

    # 2. Hand it to the controller's event queue (None replicas = cancel).
    controller.partition_reassignment.alter_partition_reassignments(controller, request.reassignments(),
                                                                      send_response_callback)
