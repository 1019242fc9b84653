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
from tests.wire_support import CLUSTER_CONFIG, on_loop, on_loop_async, wait_for_new_leader

kafka = pytest.importorskip("kafka")
from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

pytestmark = pytest.mark.anyio

# No automatic rebalance: the elections in these tests are the admin's.
CONFIG = {**CLUSTER_CONFIG, "auto.leader.rebalance.enable": False}


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
