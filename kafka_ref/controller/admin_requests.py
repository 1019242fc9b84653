"""The ZooKeeper-mode broker side of two controller admin APIs: ElectLeaders and ListPartitionReassignments.

Mirrors kafka.server.KafkaApis#handleElectLeaders with kafka.server.ReplicaManager#electLeaders and
kafka.server.DelayedElectLeader, and KafkaApis#handleListPartitionReassignmentsRequest with
KafkaController#listPartitionReassignments (Kafka 3.7). Every ZooKeeper-mode broker serves them
through its own KafkaController object: on a broker whose controller is not active the answer is
NOT_CONTROLLER, and clients send these requests to the controller named in Metadata.

An election's answer waits, in a per-broker ElectLeader purgatory, until this broker's metadata
cache shows each elected leader (the UpdateMetadata handler wakes it, as
ReplicaManager#tryCompleteElection does) or the request's timeout passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.elect_leaders import (
    ElectionType,
    ElectLeadersRequest,
    ElectLeadersResponse,
    PartitionResult,
    ReplicaElectionResult,
)
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller import controller_events as ev
from kafka_ref.controller.reassignment import ApiError
from kafka_ref.server.delayed_operation import (
    DelayedOperation,
    DelayedOperationPurgatory,
    TopicPartitionOperationKey,
)

if TYPE_CHECKING:
    from kafka_ref.controller.kafka_controller import KafkaController
    from kafka_ref.network.network import Envelope
    from kafka_ref.zk.zk_data import ReplicaAssignment

ElectionResults = dict[TopicPartition, ApiError]
ListReassignmentsCallback = Callable[["dict[TopicPartition, ReplicaAssignment] | ApiError"], None]


class DelayedElectLeader(DelayedOperation):
    """Mirrors kafka.server.DelayedElectLeader: an election answer waiting for the new leaders to be known here."""

    def __init__(self, delay_ms: int, expected_leaders: dict[TopicPartition, int], results: ElectionResults,
                 metadata_cache: Any, response_callback: Callable[[ElectionResults], None]) -> None:
        super().__init__(delay_ms)
        self.waiting_partitions = dict(expected_leaders)
        self.full_results = dict(results)
        self.metadata_cache = metadata_cache
        self.response_callback = response_callback

    def on_expiration(self) -> None:
        """Mirrors kafka.server.DelayedElectLeader#onExpiration: nothing beyond on_complete."""

    def on_complete(self) -> None:
        """Mirrors kafka.server.DelayedElectLeader#onComplete.

        1. A last look at the cache; 2. partitions still waiting time out (REQUEST_TIMED_OUT);
        3. answer with those and every settled result.
        """
        # 1. Maybe more leaders arrived since the last check.
        self._update_waiting()
        # 2. Whatever is still waiting has timed out.
        timed_out = {tp: ApiError(Errors.REQUEST_TIMED_OUT) for tp in self.waiting_partitions}
        # 3. The answer.
        self.response_callback({**timed_out, **self.full_results})

    def try_complete(self) -> bool:
        """Mirrors kafka.server.DelayedElectLeader#tryComplete: done once every expected leader is in the cache."""
        self._update_waiting()
        return not self.waiting_partitions and self.force_complete()

    def _update_waiting(self) -> None:
        """Mirrors kafka.server.DelayedElectLeader#updateWaiting: partitions whose cached leader is the elected one settle as NONE."""
        for tp, leader in list(self.waiting_partitions.items()):
            info = self.metadata_cache.get_partition_info(tp)
            if info is not None and info.leader == leader:
                del self.waiting_partitions[tp]
                self.full_results[tp] = ApiError(Errors.NONE)


def new_elect_leader_purgatory(broker: Any) -> DelayedOperationPurgatory:
    """The broker's ElectLeader purgatory (ReplicaManager#delayedElectLeaderPurgatory)."""
    return DelayedOperationPurgatory("ElectLeader", broker.timer, broker.broker_id)


def elect_leaders(controller: "KafkaController", purgatory: DelayedOperationPurgatory, partitions: set[TopicPartition],
                  election_type: ElectionType, response_callback: Callable[[ElectionResults], None],
                  request_timeout_ms: int) -> None:
    """Mirrors kafka.server.ReplicaManager#electLeaders.

    1. The deadline is fixed now; 2. the controller elects (an event on its queue); 3. when it
    answers, partitions that got a new leader wait in the purgatory until the cache shows it,
    the failures are settled; with nothing elected the answer goes at once.
    """
    broker = controller.broker
    # 1. The deadline.
    deadline = broker.time.milliseconds() + request_timeout_ms

    def election_callback(results: dict[TopicPartition, Any]) -> None:
        # 3. Split the controller's answer into expected leaders and failures.
        expected_leaders = {tp: r for tp, r in results.items() if not isinstance(r, ApiError)}
        failures = {tp: r for tp, r in results.items() if isinstance(r, ApiError)}
        if expected_leaders:
            operation = DelayedElectLeader(max(0, deadline - broker.time.milliseconds()), expected_leaders,
                                           failures, broker.metadata_cache, response_callback)
            purgatory.try_complete_else_watch(operation, [TopicPartitionOperationKey.of(tp)
                                                          for tp in expected_leaders])
        else:
            response_callback(failures)

    # 2. The controller's part.
    controller.preferred_replica_election.elect_leaders(controller, partitions, election_type, election_callback)


def handle_elect_leaders_request(controller: "KafkaController", purgatory: DelayedOperationPurgatory,
                                 envelope: "Envelope") -> None:
    """Mirrors kafka.server.KafkaApis#handleElectLeaders (ZooKeeper mode).

    1. Without ALTER on the cluster every named partition gets CLUSTER_AUTHORIZATION_FAILED
    (and so does the top level); 2. a null partition list means every partition in the
    metadata cache; 3. the election (ReplicaManager#electLeaders); 4. the answer groups the
    results by topic, leaving out ELECTION_NOT_NEEDED when all partitions were asked for.
    """
    request: ElectLeadersRequest = envelope.request
    apis = controller.broker.apis

    def send_response_callback(error: ApiError, results: ElectionResults) -> None:
        # 4. The answer, per topic.
        if request.topic_partitions is None:
            results = {tp: e for tp, e in results.items() if e.error != Errors.ELECTION_NOT_NEEDED}
        by_topic: dict[str, list[PartitionResult]] = {}
        for tp, e in results.items():
            by_topic.setdefault(tp.topic, []).append(PartitionResult(
                partition_id=tp.partition, error_code=e.error.code, error_message=e.message))
        envelope.respond(ElectLeadersResponse(error_code=error.error.code, replica_election_results=tuple(
            ReplicaElectionResult(topic=topic, partition_result=tuple(ps)) for topic, ps in by_topic.items())))

    named = [TopicPartition(t.topic, p) for t in request.topic_partitions or () for p in t.partitions]
    # 1. Authorization.
    if not apis.authorizer.authorize_cluster(envelope.principal, "ALTER"):
        error = ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED)
        send_response_callback(error, {tp: error for tp in named})
        return
    # 2. Which partitions.
    if request.topic_partitions is None:
        cache = controller.broker.metadata_cache
        partitions = {tp for topic in cache.get_all_topics() for tp in cache.get_topic_partitions(topic)}
    else:
        partitions = set(named)
    # 3. Elect.
    elect_leaders(controller, purgatory, partitions, ElectionType(request.election_type),
                  lambda results: send_response_callback(ApiError(Errors.NONE), results), request.timeout_ms)


# ---------------------------------------------------------------------- ListPartitionReassignments


@dataclass
class ListPartitionReassignments(ev.ControllerEvent):
    """Mirrors kafka.controller.ListPartitionReassignments: a ListPartitionReassignments request, queued."""

    partitions: list[TopicPartition] | None
    callback: ListReassignmentsCallback
    name: str = field(default="ListPartitionReassignments")
    state = ev.ControllerState.LIST_PARTITION_REASSIGNMENT

    def process(self, controller: Any) -> None:
        """KafkaController#processListPartitionReassignments: its active-controller check here, the listing in reassignment.py.

        1. Not the active controller: NOT_CONTROLLER; 2. otherwise each partition asked for (all
        being reassigned when None) whose full assignment has replicas being added or removed.
        """
        # 1. Only the active controller knows.
        if not controller.is_active:
            self.callback(ApiError(Errors.NOT_CONTROLLER))
            return
        # 2. The reassignments in progress.
        self.callback(controller.partition_reassignment.list_partition_reassignments(controller, self.partitions))

    def preempt(self) -> None:
        """Mirrors ListPartitionReassignments#preempt: NOT_CONTROLLER."""
        self.callback(ApiError(Errors.NOT_CONTROLLER))


def list_partition_reassignments(c: "KafkaController", partitions: list[TopicPartition] | None,
                                 callback: ListReassignmentsCallback) -> None:
    """Mirrors kafka.controller.KafkaController#listPartitionReassignments: queue the request as an event."""
    c.event_manager.put(ListPartitionReassignments(partitions, callback))


def handle_list_partition_reassignments_request(controller: "KafkaController", envelope: "Envelope") -> None:
    """Mirrors kafka.server.KafkaApis#handleListPartitionReassignmentsRequest (ZooKeeper mode).

    1. DESCRIBE on the cluster is required (CLUSTER_AUTHORIZATION_FAILED); 2. the partitions
    asked for (None: all) go to the controller's event queue; 3. the answer is either one
    top-level error or the reassignments in progress, grouped by topic.
    """
    request: ListPartitionReassignmentsRequest = envelope.request
    # 1. Authorization.
    if not controller.broker.apis.authorizer.authorize_cluster(envelope.principal, "DESCRIBE"):
        envelope.respond(request.get_error_response(Errors.CLUSTER_AUTHORIZATION_FAILED.code))
        return

    def send_response_callback(result: "dict[TopicPartition, ReplicaAssignment] | ApiError") -> None:
        # 3. A top-level error, or the reassignments per topic.
        if isinstance(result, ApiError):
            envelope.respond(ListPartitionReassignmentsResponse(error_code=result.error.code,
                                                                error_message=result.message))
            return
        by_topic: dict[str, list[OngoingPartitionReassignment]] = {}
        for tp, assignment in result.items():
            by_topic.setdefault(tp.topic, []).append(OngoingPartitionReassignment(
                partition_index=tp.partition, replicas=assignment.replicas,
                adding_replicas=assignment.adding_replicas, removing_replicas=assignment.removing_replicas))
        envelope.respond(ListPartitionReassignmentsResponse(topics=tuple(
            OngoingTopicReassignment(name=topic, partitions=tuple(ps)) for topic, ps in by_topic.items())))

    # 2. The controller's part.
    list_partition_reassignments(controller, request.partitions(), send_response_callback)
