"""A restarted broker whose log on disk belongs to another incarnation of the topic, end to end.

Mirrors Partition#topicId's fallback to the log manager's log and ReplicaManager#becomeLeaderOrFollower's
topic id check (Kafka 3.7; ReplicaManagerTest#testInconsistentIdReturnsError): the first LeaderAndIsr the
restarted broker receives names topic ``t`` with an id unlike its log's. It answers
INCONSISTENT_TOPIC_ID for that partition only, keeps its log and serves on; the controller's own
LeaderAndIsr, with the right id, then brings the replica back into the ISR.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrTopicState
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid

pytestmark = pytest.mark.anyio

T0, U0 = TopicPartition("t", 0), TopicPartition("u", 0)


def _state(topic: str, s: dict) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(topic_name=topic, partition_index=0, controller_epoch=s["controller_epoch"],
                                      leader=s["leader"], leader_epoch=s["leader_epoch"], isr=tuple(s["isr"]),
                                      partition_epoch=s["partition_epoch"], replicas=(0, 1, 2), is_new=False)


async def test_restarted_broker_answers_inconsistent_topic_id_for_that_partition_only():
    async with Cluster(brokers=3, metadata_mode="zk", seed=5) as cluster:
        for topic in ("t", "u"):
            await cluster.create_topic(topic, replica_assignment={0: [0, 1, 2]})
        controller = cluster.active_controller()
        ids = dict(controller.controller_context.topic_ids)
        stray_id = Uuid(77, 77)
        assert ids["t"] != stray_id
        # Broker 2 crashes; the controller cannot reach it when it comes back.
        ctrl = cluster.controller_id()
        assert ctrl != 2
        cluster.kill_broker(2)
        cluster.network.cut_link(ctrl, 2)
        broker = await cluster.restart_broker(2)
        assert broker.log_manager.get_log(T0).topic_id == ids["t"]
        assert broker.replica_manager.get_partition(T0) is None
        # A LeaderAndIsr names t with another id (and u with its own).
        states = {topic: cluster.partition_state(topic, 0) for topic in ("t", "u")}
        request = LeaderAndIsrRequest(
            controller_id=ctrl, controller_epoch=controller.epoch, broker_epoch=broker.broker_epoch,
            topic_states=(LeaderAndIsrTopicState(topic_name="t", topic_id=stray_id, partition_states=(_state("t", states["t"]),)),
                          LeaderAndIsrTopicState(topic_name="u", topic_id=ids["u"], partition_states=(_state("u", states["u"]),))))
        response = await cluster.send(2, request)
        errors = response.partition_errors({stray_id: "t", ids["u"]: "u"})
        assert (response.error_code, errors) == (0, {T0: Errors.INCONSISTENT_TOPIC_ID.code, U0: Errors.NONE.code})
        p = broker.replica_manager.online_partition(T0)
        assert (p.log, p.leader_epoch, p.topic_id) == (None, -1, ids["t"])
        # u-0 proceeds: its log is attached (its leader is not in this broker's metadata yet, so, as in
        # ReplicaManager#makeFollowers, the follower state waits for a later LeaderAndIsr).
        assert broker.replica_manager.online_partition(U0).log.topic_id == ids["u"]
        # The controller's own LeaderAndIsr (right id) arrives once the link heals: t-0 is a follower again.
        cluster.network.heal_link(ctrl, 2)
        await cluster.wait_until(lambda: sorted(cluster.partition_state("t", 0)["isr"]) == [0, 1, 2], 60000)
        p = broker.replica_manager.online_partition(T0)
        assert p.log is not None and p.log.topic_id == ids["t"]
        assert broker.is_running
