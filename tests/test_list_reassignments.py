"""ListPartitionReassignments (API 46) and the admin client's reassignment calls, in both metadata modes.

Mirrors the listing cases of kafka.admin.ReassignPartitionsIntegrationTest (testReassignment,
testCancellation: a move held back shows up with its adding and removing replicas, and is gone
once cancelled) and of ReplicationControlManagerTest#testReassignPartitions (all reassignments
when no topics are named; named partitions that are not moving, and unknown topics, are left
out), plus the ZooKeeper-mode handler's NOT_CONTROLLER and authorization answers
(KafkaApis#handleListPartitionReassignmentsRequest).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.clients.admin_reassignments import PartitionReassignment
from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors, InvalidTopicException, UnknownTopicOrPartitionException
from kafka_ref.common.requests.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_ref.common.topic_partition import TopicPartition

pytestmark = pytest.mark.anyio

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def test_error_response_echoes_the_partitions_asked_for():
    """ListPartitionReassignmentsRequest#getErrorResponse: top-level error, each named partition with empty lists."""
    request = ListPartitionReassignmentsRequest.of([T0, T1, U0], timeout_ms=5)
    assert request.partitions() == [T0, T1, U0]
    response = request.get_error_response(Errors.NOT_CONTROLLER.code)
    assert response.error_code == Errors.NOT_CONTROLLER.code
    assert response.topics == (
        OngoingTopicReassignment(name="t", partitions=(OngoingPartitionReassignment(partition_index=0),
                                                       OngoingPartitionReassignment(partition_index=1))),
        OngoingTopicReassignment(name="u", partitions=(OngoingPartitionReassignment(partition_index=0),)))
    assert response.error_counts() == {Errors.NOT_CONTROLLER.code: 1}
    assert ListPartitionReassignmentsRequest.of(None).partitions() is None
    assert ListPartitionReassignmentsRequest.of(None).get_error_response(Errors.NOT_CONTROLLER.code).topics == ()


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_a_held_back_move_is_listed_until_cancelled(mode):
    """ReassignPartitionsIntegrationTest#testCancellation with ReplicationControlManagerTest's listing:
    broker 3 cannot reach t-0's leader, so the move [1, 2, 0] -> [3, 2, 0] stays in progress
    (replicas [3, 2, 0, 1], adding [3], removing [1]); listing everything, or t-0 among partitions
    that are not moving and a topic that does not exist, shows exactly that; cancelling clears it."""
    async with Cluster(brokers=4, metadata_mode=mode, seed=7) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [1, 2, 0], 1: [1, 2, 0]})
        await cluster.create_topic("u", replica_assignment={0: [2, 0, 1]})
        cluster.network.cut_link(3, 1)
        admin = cluster.admin()
        assert await admin.list_partition_reassignments() == {}
        assert await admin.alter_partition_reassignments({T0: [3, 2, 0]}) == {T0: None}
        moving = {T0: PartitionReassignment(replicas=(3, 2, 0, 1), adding_replicas=(3,), removing_replicas=(1,))}
        assert await admin.list_partition_reassignments() == moving
        assert await admin.list_partition_reassignments([T1, T0, U0, TopicPartition("nope", 0)]) == moving
        assert await admin.list_partition_reassignments([T1, U0]) == {}
        # Still held back a while later (broker 3 never got into the ISR).
        await anyio.sleep(5)
        assert await admin.list_partition_reassignments() == moving
        # Cancel: the original replicas (the merged list without the adding ones, so in the merged
        # list's order, as both Kafka controllers compute it), nothing listed.
        assert await admin.alter_partition_reassignments({T0: None}) == {T0: None}
        assert await admin.list_partition_reassignments() == {}
        assert cluster.partition_state("t", 0)["replicas"] == [2, 0, 1]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_admin_reassignment_errors(mode):
    """KafkaAdminClient#alterPartitionReassignments / #listPartitionReassignments: unrepresentable
    partitions fail before any request (InvalidTopicException); the controller's per-partition
    errors raise (UnknownTopicOrPartitionException); cancelling a partition that is not moving is
    NO_REASSIGNMENT_IN_PROGRESS."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=8) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        admin = cluster.admin()
        with pytest.raises(InvalidTopicException, match="cannot be represented"):
            await admin.alter_partition_reassignments({TopicPartition("", 0): [0]})
        with pytest.raises(InvalidTopicException, match="partition index -1 is not valid"):
            await admin.list_partition_reassignments([TopicPartition("t", -1)])
        with pytest.raises(UnknownTopicOrPartitionException):
            await admin.alter_partition_reassignments({TopicPartition("nope", 0): [0, 1]})
        with pytest.raises(Errors.NO_REASSIGNMENT_IN_PROGRESS.exception_class):
            await admin.alter_partition_reassignments({T0: None})


async def test_zk_handler_not_controller_and_authorization():
    """KafkaApis#handleListPartitionReassignmentsRequest (ZooKeeper mode): a broker whose controller is
    not active answers NOT_CONTROLLER at the top level; without DESCRIBE on the cluster the answer is
    CLUSTER_AUTHORIZATION_FAILED with the partitions asked for echoed back."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=9) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        controller = cluster.controller_id()
        other = next(b for b in cluster.live_broker_ids() if b != controller)
        request = ListPartitionReassignmentsRequest.of([T0])
        answer: ListPartitionReassignmentsResponse = await cluster.network.send(
            "client", other, request, 5000, principal="User:ANONYMOUS")
        assert (answer.error_code, answer.topics) == (Errors.NOT_CONTROLLER.code, ())
        answer = await cluster.network.send("client", controller, request, 5000, principal="User:ANONYMOUS")
        assert (answer.error_code, answer.topics) == (Errors.NONE.code, ())
        cluster.broker(controller).apis.authorizer.deny_cluster("User:ANONYMOUS", "DESCRIBE")
        answer = await cluster.network.send("client", controller, request, 5000, principal="User:ANONYMOUS")
        assert answer.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
        assert answer.reassignments() == {T0: OngoingPartitionReassignment(partition_index=0)}


async def test_kraft_controller_authorizes_the_forwarded_client():
    """ControllerApis#handleListPartitionReassignments / #handleAlterPartitionReassignments /
    #handleElectLeaders: the broker forwards the client's request with the client's principal
    (EnvelopeRequest), and the controller refuses it without DESCRIBE / ALTER on the cluster."""
    from kafka_ref.common.errors import ClusterAuthorizationException
    from kafka_ref.common.requests.elect_leaders import ElectionType

    async with Cluster(brokers=3, metadata_mode="kraft", seed=10) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        admin = cluster.admin()
        assert await admin.list_partition_reassignments() == {}
        authorizer = cluster.active_controller().authorizer
        authorizer.deny_cluster("User:ANONYMOUS", "DESCRIBE")
        with pytest.raises(ClusterAuthorizationException):
            await admin.list_partition_reassignments()
        # ALTER is still allowed: a reassignment to the same replicas is accepted.
        assert await admin.alter_partition_reassignments({T0: [0, 1, 2]}) == {T0: None}
        authorizer.deny_cluster("User:ANONYMOUS", "ALTER")
        with pytest.raises(ClusterAuthorizationException):
            await admin.alter_partition_reassignments({T0: [0, 1, 2]})
        with pytest.raises(ClusterAuthorizationException):
            await admin.elect_leaders(ElectionType.PREFERRED, [T0])
