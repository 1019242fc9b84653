"""The admin client's leader elections: ElectLeaders at the controller.

Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#electLeaders and ElectLeadersResult
(Kafka 3.7, KIP-460). ``KafkaAdminClient.elect_leaders`` (kafka_ref/clients/admin.py) calls this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from kafka_ref.common.errors import ApiException, Errors
from kafka_ref.common.requests.elect_leaders import ElectionType, ElectLeadersRequest, ElectLeadersResponse
from kafka_ref.common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_ref.clients.admin import KafkaAdminClient


def elect_leaders_result(response: ElectLeadersResponse) -> dict[TopicPartition, ApiException | None]:
    """Mirrors org.apache.kafka.common.requests.ElectLeadersResponse#electLeadersResult: each partition's exception, or None."""
    return {TopicPartition(t.topic, p.partition_id):
            None if p.error_code == Errors.NONE.code else Errors.for_code(p.error_code).exception(p.error_message)
            for t in response.replica_election_results for p in t.partition_result}


async def elect_leaders(admin: KafkaAdminClient, election_type: ElectionType,
                        partitions: Iterable[TopicPartition] | None,
                        timeout_ms: float | None = None) -> dict[TopicPartition, ApiException | None]:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#electLeaders (then ElectLeadersResult#partitions).

    1. One ElectLeaders to the controller (None: every partition; the controller leaves those
    that need no election out); 2. a top-level error (v1+) raises; 3. otherwise each answered
    partition maps to None or its exception (ElectionNotNeededException when it already has
    the leader asked for). As in Kafka, a per-partition NOT_CONTROLLER is a result, not a retry.
    """
    wanted = None if partitions is None else list(partitions)

    async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, ApiException | None] | ApiException:
        # 1. To the controller.
        request = ElectLeadersRequest.of(wanted, election_type, timeout_ms=remaining_ms)
        # (The broker's wait and the client's are the same timeout, as KafkaAdminClient builds both from it.)
        response: ElectLeadersResponse = await admin.client.send(node, request, remaining_ms)
        # 2. The top level: any error (NOT_CONTROLLER and retriable ones too) fails the call as it is.
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            return error.exception()
        # 3. Per partition.
        return elect_leaders_result(response)

    result = await admin._run_call("electLeaders", admin._controller_node, attempt, timeout_ms)
    if isinstance(result, ApiException):
        raise result
    return result
