"""The admin client's reassignment calls: AlterPartitionReassignments and ListPartitionReassignments.

Mirrors the reassignment part of org.apache.kafka.clients.admin.KafkaAdminClient (Kafka 3.7,
KIP-455). Both calls go to the controller (ControllerNodeProvider) and retry there when it moved
(NOT_CONTROLLER); ``KafkaAdminClient.alter_partition_reassignments`` and
``list_partition_reassignments`` (kafka_ref/clients/admin.py) call these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from kafka_ref.clients.admin_types import _all
from kafka_ref.common.errors import (
    ApiException,
    Errors,
    InvalidTopicException,
    NotControllerException,
    UnknownServerException,
)
from kafka_ref.common.requests.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.clients.admin import KafkaAdminClient


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """Mirrors org.apache.kafka.clients.admin.PartitionReassignment: a reassignment in progress."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


async def alter_partition_reassignments(admin: KafkaAdminClient, reassignments: dict[TopicPartition, Iterable[int] | None],
                                        timeout_ms: float | None = None) -> dict[TopicPartition, None]:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#alterPartitionReassignments (then AlterPartitionReassignmentsResult#all).

    1. A partition whose topic cannot be named in a request or whose index is negative fails
    at once (InvalidTopicException); 2. the rest go to the controller, topics and partitions
    in sorted order; 3. a top-level NOT_CONTROLLER retries at the new controller, another
    top-level error fails every partition answered, else each partition has its own error;
    a count of answers that differs from the request's is UnknownServerException. A target of
    None cancels the partition's reassignment.
    """
    results: dict[TopicPartition, None | ApiException] = {}
    targets: dict[TopicPartition, tuple[int, ...] | None] = {}
    # 1. Partitions no request can carry.
    for tp, replicas in reassignments.items():
        if not tp.topic:
            results[tp] = InvalidTopicException(f"The given topic name '{tp.topic}' cannot be represented in a request.")
        elif tp.partition < 0:
            results[tp] = InvalidTopicException(f"The given partition index {tp.partition} is not valid.")
        else:
            targets[tp] = None if replicas is None else tuple(replicas)
    ordered = dict(sorted(targets.items(), key=lambda item: (item[0].topic, item[0].partition)))

    async def attempt(node: int, remaining_ms: int) -> None:
        # 2. To the controller.
        request = AlterPartitionReassignmentsRequest.of(ordered, timeout_ms=remaining_ms)
        response: AlterPartitionReassignmentsResponse = await admin.client.send(node, request, remaining_ms)
        top_level = Errors.for_code(response.error_code)
        # 3. The answer.
        if top_level is Errors.NOT_CONTROLLER:
            raise NotControllerException(f"Broker {node} is not the controller")
        answered = response.partition_errors()
        errors: dict[TopicPartition, None | ApiException] = {}
        for t in response.responses:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if top_level is not Errors.NONE:
                    errors[tp] = top_level.exception(response.error_message or None)
                else:
                    error = Errors.for_code(p.error_code)
                    errors[tp] = None if error is Errors.NONE else error.exception(p.error_message or None)
        if all(e is None for e in errors.values()) and len(answered) != len(ordered):
            quantifier = "many" if len(answered) > len(ordered) else "less"
            raise UnknownServerException(f"The server returned too {quantifier} results.Expected "
                                         f"{len(ordered)} but received {len(answered)}")
        results.update(errors)

    if ordered:
        await admin._run_call("alterPartitionReassignments", admin._controller_node, attempt, timeout_ms)
    return _all(results, reassignments)


async def list_partition_reassignments(admin: KafkaAdminClient, partitions: Iterable[TopicPartition] | None = None,
                                       timeout_ms: float | None = None) -> dict[TopicPartition, PartitionReassignment]:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#listPartitionReassignments (then ListPartitionReassignmentsResult#reassignments).

    1. A partition that cannot be named in a request fails the call at once
    (InvalidTopicException); 2. the controller answers the reassignments in progress among
    the partitions given (all when None); 3. NOT_CONTROLLER retries at the new controller,
    another top-level error raises without a retry.
    """
    wanted = None if partitions is None else list(partitions)
    # 1. Unrepresentable partitions.
    for tp in wanted or ():
        if not tp.topic:
            raise InvalidTopicException(f"The given topic name '{tp.topic}' cannot be represented in a request.")
        if tp.partition < 0:
            raise InvalidTopicException(f"The given partition index {tp.partition} is not valid.")

    async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, PartitionReassignment] | ApiException:
        # 2. Ask the controller.
        request = ListPartitionReassignmentsRequest.of(wanted, timeout_ms=remaining_ms)
        response: ListPartitionReassignmentsResponse = await admin.client.send(node, request, remaining_ms)
        # 3. Top-level errors: NOT_CONTROLLER retries; any other fails the call as it is (not
        #    retried, even when retriable).
        error = Errors.for_code(response.error_code)
        if error is Errors.NOT_CONTROLLER:
            raise NotControllerException(f"Broker {node} is not the controller")
        if error is not Errors.NONE:
            return error.exception(response.error_message or None)
        return {tp: PartitionReassignment(r.replicas, r.adding_replicas, r.removing_replicas)
                for tp, r in response.reassignments().items()}

    result = await admin._run_call("listPartitionReassignments", admin._controller_node, attempt, timeout_ms)
    if isinstance(result, ApiException):
        raise result
    return result
