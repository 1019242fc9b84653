"""kafka-python's leader-election and reassignment admin calls over the wire, in both metadata modes.

ElectLeaders (API 43) follows kafka.admin.LeaderElectionCommandTest#testPreferredReplicaElection
(PreferredReplicaElectionCommandTest in the ZooKeeper era): the preferred replica dies, another
takes over, the preferred one comes back into the ISR, and a preferred election moves leadership
back; asking again answers ELECTION_NOT_NEEDED.
"""

from __future__ import annotations

import time

import anyio
import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from tests.wire_support import CLUSTER_CONFIG, on_loop, on_loop_async, wait_for_new_leader

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio

# No automatic rebalance: the elections in these tests are the admin's. A fetch sent over a cut
# link gives up after 2 s instead of 30, so a healed follower fetches again soon; a follower
# that cannot fetch leaves the ISR after 1 s.
CONFIG = {**CLUSTER_CONFIG, "auto.leader.rebalance.enable": False, "replica.socket.timeout.ms": 2000,
          "replica.lag.time.max.ms": 1000}


@pytest.fixture
def anyio_backend():
    return "asyncio"  # a real clock: sockets and client threads


async def _run(client, mode: str, brokers: int = 3):
    async with Cluster(brokers=brokers, metadata_mode=mode, clock="wall", config=CONFIG) as cluster, \
            cluster.serve() as bootstrap:
        with anyio.fail_after(90):
            return await anyio.to_thread.run_sync(client, cluster, bootstrap)


def _wait(predicate, what: str, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _non_controller_brokers(cluster: Cluster) -> list[int]:
    controller = on_loop(cluster.controller_id)
    return [b for b in sorted(on_loop(cluster.live_broker_ids)) if b != controller]


def _errors(response) -> dict[tuple[str, int], int]:
    return {(r.topic, p.partition_id): p.error_code for r in response.replica_election_results
            for p in r.partition_result}


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_elect_leaders_preferred_after_the_preferred_replica_returns(mode):
    """LeaderElectionCommandTest#testPreferredReplicaElection over the wire: NONE and the preferred
    replica leads again; a second election is ELECTION_NOT_NEEDED, also when kafka-python
    names every partition of every topic itself (its ``topic_partitions=None``)."""
    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        preferred, other = _non_controller_brokers(cluster)[:2]
        third = next(b for b in on_loop(cluster.live_broker_ids) if b not in (preferred, other))
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        try:
            admin.create_topics([NewTopic("t", replica_assignments={0: [preferred, other, third]})])
            _wait(lambda: on_loop(cluster.leader_for, "t", 0) == preferred, "the first leader")
            # The preferred replica dies; another takes over.
            on_loop(cluster.kill_broker, preferred)
            seen["interim"] = wait_for_new_leader(cluster, "t", preferred)
            # It comes back and catches up into the ISR, still a follower.
            on_loop_async(cluster.restart_broker, preferred)
            _wait(lambda: preferred in on_loop(cluster.partition_state, "t", 0)["isr"], "the ISR")
            seen["before"] = on_loop(cluster.leader_for, "t", 0)
            seen["first"] = _errors(admin.elect_leaders(0, {"t": [0]}))
            _wait(lambda: on_loop(cluster.leader_for, "t", 0) == preferred, "the preferred leader")
            seen["after"] = on_loop(cluster.leader_for, "t", 0)
            seen["second"] = _errors(admin.elect_leaders(0, {"t": [0]}))
            seen["all"] = _errors(admin.elect_leaders(0, None))
            seen["preferred"] = preferred
        finally:
            admin.close()

    await _run(client, mode)
    assert seen["interim"] != seen["preferred"]
    assert seen["before"] == seen["interim"]
    assert seen["first"] == {("t", 0): 0}
    assert seen["after"] == seen["preferred"]
    assert seen["second"] == {("t", 0): 84}  # ELECTION_NOT_NEEDED
    assert seen["all"] == {("t", 0): 84}


@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_elect_leaders_unclean_when_only_an_out_of_sync_replica_is_left(mode):
    """LeaderElectionCommandTest's unclean case (KIP-460): the follower falls out of the ISR, the
    leader dies and the partition has no leader; a preferred election cannot help
    (PREFERRED_LEADER_NOT_AVAILABLE), an unclean one makes the out-of-sync follower the leader."""
    seen: dict[str, object] = {}

    def client(cluster, bootstrap):
        from kafka import KafkaProducer

        leader, follower = _non_controller_brokers(cluster)[:2]
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1)
        try:
            admin.create_topics([NewTopic("t", replica_assignments={0: [leader, follower]})])
            _wait(lambda: on_loop(cluster.leader_for, "t", 0) == leader, "the first leader")
            # The follower cannot fetch a record written now: after replica.lag.time.max.ms it
            # leaves the ISR (a follower already at the log end would stay).
            on_loop(cluster.network.cut_link, follower, leader)
            producer.send("t", value=b"only-on-the-leader", partition=0).get(timeout=30)
            _wait(lambda: on_loop(cluster.partition_state, "t", 0)["isr"] == [leader], "the ISR to shrink")
            on_loop(cluster.kill_broker, leader)
            on_loop(cluster.network.heal_link, follower, leader)
            _wait(lambda: on_loop(cluster.leader_for, "t", 0) == -1, "the partition to go offline")
            # A new admin client: the first one may have cached the dead broker as the controller
            # (KRaft brokers name a live broker in Metadata; kafka-python only re-asks on NOT_CONTROLLER).
            admin.close()
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
            seen["preferred"] = _errors(admin.elect_leaders(0, {"t": [0]}, raise_errors=False))
            seen["unclean"] = _errors(admin.elect_leaders(1, {"t": [0]}, raise_errors=False))
            _wait(lambda: on_loop(cluster.leader_for, "t", 0) == follower, "the unclean leader")
            seen["state"] = on_loop(cluster.partition_state, "t", 0)
            seen["follower"] = follower
        finally:
            producer.close()
            admin.close()

    await _run(client, mode)
    assert seen["preferred"] == {("t", 0): 80}  # PREFERRED_LEADER_NOT_AVAILABLE
    assert seen["unclean"] == {("t", 0): 0}
    assert (seen["state"]["leader"], seen["state"]["isr"]) == (seen["follower"], [seen["follower"]])

@pytest.mark.parametrize("mode", ["kraft", "zk"])
async def test_alter_then_list_partition_reassignments_until_done(mode):
    """ReassignPartitionsIntegrationTest#testReassignment over the wire: kafka-python's
    alter_partition_reassignments moves t-0 from [1, 2, 0] to [3, 2, 0]; list_partition_reassignments
    shows the move (adding [3], removing [1]) while broker 3 is held back, then nothing once it caught
    up; the new replica holds every record. Unknown partitions and cancelling a finished move are
    answered per partition."""
    from kafka import KafkaProducer, TopicPartition
    from kafka.errors import NoReassignmentInProgressError, UnknownTopicOrPartitionError

    seen: dict[str, object] = {}
    tp = TopicPartition("t", 0)

    def client(cluster, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        try:
            admin.create_topics([NewTopic("t", replica_assignments={0: [1, 2, 0]})])
            for i in range(5):
                producer.send("t", value=b"v%d" % i, partition=0)
            producer.flush()
            seen["before"] = admin.list_partition_reassignments()
            # Broker 3 cannot fetch from the leader (1) until the link heals.
            on_loop(cluster.network.cut_link, 3, 1)
            seen["altered"] = admin.alter_partition_reassignments(
                {tp: [3, 2, 0], TopicPartition("nope", 0): [0, 1]})
            seen["moving"] = admin.list_partition_reassignments()
            seen["moving_named"] = admin.list_partition_reassignments([tp, TopicPartition("t", 7)])
            on_loop(cluster.network.heal_link, 3, 1)
            _wait(lambda: admin.list_partition_reassignments() == {}, "the move to finish")
            seen["state"] = on_loop(cluster.partition_state, "t", 0)
            _wait(lambda: on_loop(lambda: cluster.broker(3).replica_manager.online_partition(
                _our_tp()).log.log_end_offset) == 5, "broker 3's log")
            seen["cancel_done"] = admin.alter_partition_reassignments({tp: None})
        finally:
            producer.close()
            admin.close()

    await _run(client, mode, brokers=4)
    assert seen["before"] == {}
    assert seen["altered"] == {tp: None, TopicPartition("nope", 0): UnknownTopicOrPartitionError}
    moving = {tp: {"replicas": [3, 2, 0, 1], "adding_replicas": [3], "removing_replicas": [1]}}
    assert seen["moving"] == moving
    assert seen["moving_named"] == moving
    assert seen["state"]["replicas"] == [3, 2, 0]
    assert sorted(seen["state"]["isr"]) == [0, 2, 3]
    assert seen["cancel_done"] == {tp: NoReassignmentInProgressError}


def _our_tp():
    from kafka_ref.common.topic_partition import TopicPartition as OurTopicPartition

    return OurTopicPartition("t", 0)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_leaders_every_advertised_version_round_trips(version):
    """ElectLeadersRequest/Response at v0-2: v0 carries no election type (preferred is meant, the
    default) and no top-level error; v1+ carry both; nullable topic_partitions (all) stays None."""
    from kafka.protocol.admin import ElectLeadersRequest as KElectLeadersRequest

    from kafka_ref.common.requests.api_keys import ApiKeys
    from kafka_ref.common.requests.elect_leaders import (
        ElectLeadersResponse,
        PartitionResult,
        ReplicaElectionResult,
    )
    from kafka_ref.wire.apis import WIRE_APIS
    from kafka_ref.wire.codec import from_wire, to_wire

    api = WIRE_APIS[ApiKeys.ELECT_LEADERS]
    fields = dict(topic_partitions=[KElectLeadersRequest.TopicPartitions(topic="t", partitions=[0, 2])], timeout_ms=7)
    if version >= 1:
        fields["election_type"] = 1
    wire = KElectLeadersRequest(**fields)
    request = from_wire(api.wire_request.decode(wire.encode(version=version), version=version), api.request_type, version)
    assert (request.election_type, request.timeout_ms) == (1 if version >= 1 else 0, 7)
    assert [(t.topic, t.partitions) for t in request.topic_partitions] == [("t", (0, 2))]
    everything = KElectLeadersRequest(topic_partitions=None, timeout_ms=7, **({"election_type": 0} if version else {}))
    assert from_wire(api.wire_request.decode(everything.encode(version=version), version=version),
                     api.request_type, version).topic_partitions is None
    response = ElectLeadersResponse(error_code=Errors.CLUSTER_AUTHORIZATION_FAILED.code, replica_election_results=(
        ReplicaElectionResult(topic="t", partition_result=(PartitionResult(partition_id=2, error_code=84),)),))
    decoded = api.wire_response.decode(to_wire(response, api.wire_response, version).encode(version=version), version=version)
    assert [(r.topic, [(p.partition_id, p.error_code) for p in r.partition_result])
            for r in decoded.replica_election_results] == [("t", [(2, 84)])]
    if version >= 1:
        assert decoded.error_code == Errors.CLUSTER_AUTHORIZATION_FAILED.code
