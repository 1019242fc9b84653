"""ZkReplicaStateMachine against the in-memory ZooKeeper and a recording request batch.

Mirrors kafka.controller.ReplicaStateMachineTest (Kafka 3.x); each test names the Kafka test it
follows. The OfflineReplica transition really rewrites the partition state znode (ISR shrink,
version check, retry), and the StopReplica / LeaderAndIsr / UpdateMetadata requests batched per
broker are compared exactly. Seed 001 §5.3.3 draws the same state diagram.
"""

from __future__ import annotations

from typing import Any

import pytest
import structlog

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import ControllerMovedException
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest
from kafka_ref.common.requests.stop_replica import StopReplicaRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.controller.replica_state_machine import (
    VALID_PREVIOUS_REPLICA_STATES,
    NewReplica,
    NonExistentReplica,
    OfflineReplica,
    OnlineReplica,
    PartitionAndReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
    ZkReplicaStateMachine,
)
from kafka_ref.zk import KafkaZkClient, ZooKeeper
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartitionStateZNode
from kafka_ref.zk.zk_data import BrokerInfo

BROKER_ID = 5  # the replica under test, as in ReplicaStateMachineTest
OTHER = 6
TP = TopicPartition("t", 0)
REPLICA = PartitionAndReplica(TP, BROKER_ID)


class Env:
    """Controller 1 elected (epoch 1, zkVersion 1), brokers 5 and 6 alive, topic t-0 on [5, 6]."""

    def __init__(self, live: tuple[int, ...] = (BROKER_ID, OTHER), replicas: tuple[int, ...] = (BROKER_ID, OTHER)) -> None:
        self.config = KafkaConfig({"broker.id": 1})
        self.zk = ZooKeeper(MockTime())
        self.client = KafkaZkClient(self.zk)
        self.client.create_top_level_paths()
        self.ctx = ControllerContext()
        self.ctx.epoch, self.ctx.epoch_zk_version = self.client.register_controller_and_increment_controller_epoch(1)
        self.ctx.set_live_brokers({BrokerInfo(b, f"host{b}", 9092): 100 + b for b in live})
        self.client.create_topic_assignment("t", None, {TP: replicas})
        self.ctx.all_topics.add("t")
        self.ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment(replicas))
        self.sent: list[tuple[int, Any]] = []
        logger = state_change_logger(controller_id=1)
        self.batch = ControllerBrokerRequestBatch(self.config, lambda b, r, cb: self.sent.append((b, r)), logger,
                                                  self.ctx)
        self.rsm = ZkReplicaStateMachine(self.config, logger, self.ctx, self.client, self.batch)

    def write_state(self, lai: LeaderAndIsr, controller_epoch: int = 1, cache: bool = True) -> None:
        info = LeaderIsrAndControllerEpoch(lai, controller_epoch)
        self.client.create_topic_partition_states_raw({TP: info})
        if cache:
            self.ctx.put_partition_leadership_info(TP, info)

    def znode(self) -> tuple[bytes, int]:
        data, stat = self.zk.get_data(TopicPartitionStateZNode.path(TP))
        return data, stat.version

    def summary(self) -> list[tuple[Any, ...]]:
        """(broker, kind, per-partition essentials) for every request sent, in order."""
        out: list[tuple[Any, ...]] = []
        for b, r in self.sent:
            if isinstance(r, LeaderAndIsrRequest):
                out.append((b, "LeaderAndIsr", [(str(s.topic_partition()), s.leader, s.leader_epoch, s.isr,
                                                 s.partition_epoch, s.is_new) for s in r.partition_states()]))
            elif isinstance(r, StopReplicaRequest):
                out.append((b, "StopReplica", [(str(tp), s.leader_epoch, s.delete_partition)
                                               for tp, s in r.partition_states().items()]))
            elif isinstance(r, UpdateMetadataRequest):
                out.append((b, "UpdateMetadata", [(str(s.topic_partition()), s.leader, s.leader_epoch, s.isr)
                                                  for s in r.partition_states()]))
        return out


def state_of(env: Env, replica: PartitionAndReplica = REPLICA) -> ReplicaState | None:
    return env.ctx.replica_states.get(replica)


# ---- the transition table ------------------------------------------------------------------

def test_valid_previous_states_table() -> None:
    """The table of kafka.controller.ReplicaState#validPreviousStates (seed §5.3.3 diagram)."""
    assert VALID_PREVIOUS_REPLICA_STATES == {
        NewReplica: {NonExistentReplica},
        OnlineReplica: {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
        OfflineReplica: {NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionIneligible},
        ReplicaDeletionStarted: {OfflineReplica},
        ReplicaDeletionSuccessful: {ReplicaDeletionStarted},
        ReplicaDeletionIneligible: {OfflineReplica, ReplicaDeletionStarted},
        NonExistentReplica: {ReplicaDeletionSuccessful},
    }
    assert [s.state for s in ReplicaState] == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("target", list(ReplicaState), ids=str)
@pytest.mark.parametrize("current", list(ReplicaState), ids=str)
def test_every_transition(current: ReplicaState, target: ReplicaState) -> None:
    """Mirrors the ReplicaStateMachineTest transition tests (testNonexistentReplicaToNewReplicaTransition,
    testInvalid*Transition, ...): every legal move happens, every illegal one is refused and logged."""
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 3, (BROKER_ID, OTHER)))
    if current != NonExistentReplica:
        env.ctx.put_replica_state(REPLICA, current)
    with structlog.testing.capture_logs() as logs:
        env.rsm.handle_state_changes([REPLICA], target)
    errors = [e for e in logs if e["event"] == "replica_state_change_failed"]
    if current in target.valid_previous_states:
        assert errors == []
        assert state_of(env) == (None if target == NonExistentReplica else target)
    else:
        assert state_of(env) == current
        valid = ",".join(str(s) for s in sorted(target.valid_previous_states, key=lambda s: s.value))
        [error] = errors
        assert error["error_type"] == "IllegalStateException"
        assert error["error"] == (f"Replica [Topic=t,Partition=0,Replica=5] should be in the {valid} states before "
                                  f"moving to {target} state. Instead it is in {current} state")
        assert env.sent == []


# ---- startup ------------------------------------------------------------------------------------

def test_startup_online_partition() -> None:
    """Mirrors ReplicaStateMachineTest#testStartupOnlinePartition."""
    env = Env(live=(BROKER_ID,), replicas=(BROKER_ID,))
    env.write_state(LeaderAndIsr(BROKER_ID, 0, (BROKER_ID,)))
    env.rsm.startup()
    assert state_of(env) == OnlineReplica
    assert env.summary() == [(5, "LeaderAndIsr", [("t-0", 5, 0, (5,), 0, False)]),
                             (5, "UpdateMetadata", [("t-0", 5, 0, (5,))])]


def test_startup_offline_partition() -> None:
    """Mirrors ReplicaStateMachineTest#testStartupOfflinePartition: a dead broker's replica ends OfflineReplica."""
    env = Env(live=(OTHER,), replicas=(BROKER_ID,))
    env.write_state(LeaderAndIsr(BROKER_ID, 0, (BROKER_ID,)))
    env.rsm.initialize_replica_state()
    assert state_of(env) == ReplicaDeletionIneligible
    env.rsm.startup()
    assert state_of(env) == OfflineReplica
    # The sole ISR member stays in the ISR; the partition loses its leader.
    assert env.znode() == (b'{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":1,"isr":[5]}', 1)
    assert env.summary() == [(6, "UpdateMetadata", [("t-0", -1, 1, (5,))])]


def test_startup_with_replica_without_leader() -> None:
    """Mirrors ReplicaStateMachineTest#testStartupWithReplicaWithoutLeader."""
    env = Env(live=(BROKER_ID,), replicas=(BROKER_ID,))
    env.rsm.startup()
    assert state_of(env) == OnlineReplica
    assert env.sent == []


# ---- single transitions -------------------------------------------------------------------------

def test_nonexistent_replica_to_new_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testNonexistentReplicaToNewReplicaTransition."""
    env = Env()
    env.rsm.handle_state_changes([REPLICA], NewReplica)
    assert state_of(env) == NewReplica
    assert env.sent == []


def test_nonexistent_replica_to_new_replica_with_leader_sends_is_new() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 2, (OTHER,)))
    env.rsm.handle_state_changes([REPLICA], NewReplica)
    assert state_of(env) == NewReplica
    assert env.summary() == [(5, "LeaderAndIsr", [("t-0", 6, 2, (6,), 0, True)]),
                             (5, "UpdateMetadata", [("t-0", 6, 2, (6,))]),
                             (6, "UpdateMetadata", [("t-0", 6, 2, (6,))])]


def test_nonexistent_replica_to_new_replica_refused_for_leader() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 2, (BROKER_ID,)))
    with structlog.testing.capture_logs() as logs:
        env.rsm.handle_state_changes([REPLICA], NewReplica)
    assert state_of(env) == NonExistentReplica
    [error] = [e for e in logs if e["event"] == "replica_state_change_failed"]
    assert error["error"] == ("Replica 5 for partition t-0 cannot be moved to NewReplica state as it is being "
                              "requested to become leader")
    assert env.sent == []


def test_new_replica_to_online_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testNewReplicaToOnlineReplicaTransition: joins the assignment if missing."""
    env = Env(replicas=(OTHER,))
    env.ctx.put_replica_state(REPLICA, NewReplica)
    env.rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert state_of(env) == OnlineReplica
    assert env.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((OTHER, BROKER_ID))
    assert env.sent == []


def test_online_replica_to_online_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testOnlineReplicaToOnlineReplicaTransition."""
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 4, (BROKER_ID, OTHER)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert env.summary() == [(5, "LeaderAndIsr", [("t-0", 5, 4, (5, 6), 0, False)]),
                             (5, "UpdateMetadata", [("t-0", 5, 4, (5, 6))]),
                             (6, "UpdateMetadata", [("t-0", 5, 4, (5, 6))])]


def test_online_replica_to_offline_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testOnlineReplicaToOfflineReplicaTransition.

    The leader goes offline: StopReplica(delete=False) to it, the ISR shrinks in ZooKeeper with
    no leader, and the other replica gets the new LeaderAndIsr.
    """
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 4, (BROKER_ID, OTHER)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OfflineReplica
    assert env.znode() == (b'{"controller_epoch":1,"leader":-1,"version":1,"leader_epoch":5,"isr":[6]}', 1)
    assert env.ctx.partition_leadership_info[TP] == LeaderIsrAndControllerEpoch(
        LeaderAndIsr(-1, 5, (6,), partition_epoch=1), 1)
    assert env.summary() == [(6, "LeaderAndIsr", [("t-0", -1, 5, (6,), 1, False)]),
                             (5, "UpdateMetadata", [("t-0", -1, 5, (6,))]),
                             (6, "UpdateMetadata", [("t-0", -1, 5, (6,))]),
                             # queued before the ISR shrink, so it carries the epoch the replica knew
                             (5, "StopReplica", [("t-0", 4, False)])]


def test_follower_offline_keeps_leader() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER, BROKER_ID)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert env.znode() == (b'{"controller_epoch":1,"leader":6,"version":1,"leader_epoch":5,"isr":[6]}', 1)


def test_offline_replica_not_in_isr_is_not_written() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER,)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OfflineReplica
    assert env.znode()[1] == 0
    # The other replica is told the (unchanged) state; the replica is stopped.
    assert env.summary()[0] == (6, "LeaderAndIsr", [("t-0", 6, 4, (6,), 0, False)])
    assert env.summary()[-1] == (5, "StopReplica", [("t-0", 4, False)])


def test_offline_replica_without_leadership_sends_update_metadata_only() -> None:
    env = Env()
    env.ctx.put_replica_state(REPLICA, NewReplica)
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OfflineReplica
    assert env.summary() == [(5, "UpdateMetadata", []), (6, "UpdateMetadata", []),
                             (5, "StopReplica", [("t-0", -1, False)])]


def test_offline_replica_of_topic_queued_for_deletion_tells_nobody() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 4, (BROKER_ID, OTHER)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.ctx.queue_topic_deletion({"t"})
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OfflineReplica
    assert env.znode()[1] == 1
    assert env.summary() == [(5, "StopReplica", [("t-0", -2, False)])]


def test_offline_replica_retries_after_bad_zk_version(monkeypatch) -> None:
    """removeReplicasFromIsr: a version race (the leader changed the ISR meanwhile) is retried on fresh state."""
    env = Env(live=(BROKER_ID, OTHER, 7), replicas=(BROKER_ID, OTHER, 7))
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER, BROKER_ID, 7)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    real_update = env.client.update_leader_and_isr
    attempts: list[dict] = []

    def racing_update(leader_and_isrs: Any, controller_epoch: int, zk_version: int) -> Any:
        attempts.append(dict(leader_and_isrs))
        if len(attempts) == 1:
            env.zk.set_data(TopicPartitionStateZNode.path(TP), TopicPartitionStateZNode.encode(
                LeaderIsrAndControllerEpoch(LeaderAndIsr(OTHER, 4, (OTHER, BROKER_ID)), 1)), 0)
        return real_update(leader_and_isrs, controller_epoch, zk_version)

    monkeypatch.setattr(env.client, "update_leader_and_isr", racing_update)
    env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert attempts == [{TP: LeaderAndIsr(6, 5, (6, 7), partition_epoch=0)},
                        {TP: LeaderAndIsr(6, 5, (6,), partition_epoch=1)}]
    assert env.znode() == (b'{"controller_epoch":1,"leader":6,"version":1,"leader_epoch":5,"isr":[6]}', 2)
    assert state_of(env) == OfflineReplica
    assert env.summary()[:2] == [(6, "LeaderAndIsr", [("t-0", 6, 5, (6,), 2, False)]),
                                 (7, "LeaderAndIsr", [("t-0", 6, 5, (6,), 2, False)])]


def test_offline_replica_aborted_when_newer_controller_wrote_state() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 4, (BROKER_ID, OTHER)), controller_epoch=2)
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    with structlog.testing.capture_logs() as logs:
        env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OnlineReplica
    [error] = [e for e in logs if e["event"] == "replica_state_change_failed"]
    assert error["error"] == ("Leader and isr path written by another controller. This probably means the current "
                              "controller with epoch 1 went through a soft failure and another controller was elected "
                              "with epoch 2. Aborting state change by this controller")
    assert env.znode()[1] == 0
    assert env.summary() == [(5, "StopReplica", [("t-0", 4, False)])]


def test_offline_replica_missing_state_znode_fails() -> None:
    env = Env()
    env.ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(BROKER_ID, 4, (5, 6)), 1))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    with structlog.testing.capture_logs() as logs:
        env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OnlineReplica
    [error] = [e for e in logs if e["event"] == "replica_state_change_failed"]
    assert error["error"] == ("Failed to change state of replica 5 for partition t-0 since the leader and isr path in "
                              "zookeeper is empty")


def test_offline_replica_by_deposed_controller_raises_controller_moved() -> None:
    env = Env()
    env.write_state(LeaderAndIsr(BROKER_ID, 4, (BROKER_ID, OTHER)))
    env.ctx.put_replica_state(REPLICA, OnlineReplica)
    env.zk.set_data("/controller_epoch", b"2")
    with pytest.raises(ControllerMovedException):
        env.rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert state_of(env) == OnlineReplica
    assert env.znode()[1] == 0


def test_offline_replica_to_online_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testOfflineReplicaToOnlineReplicaTransition."""
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER,)))
    env.ctx.put_replica_state(REPLICA, OfflineReplica)
    env.rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert state_of(env) == OnlineReplica
    assert env.summary()[0] == (5, "LeaderAndIsr", [("t-0", 6, 4, (6,), 0, False)])


def test_offline_replica_to_replica_deletion_started_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testOfflineReplicaToReplicaDeletionStartedTransition."""
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER,)))
    env.ctx.queue_topic_deletion({"t"})
    env.ctx.put_replica_state(REPLICA, OfflineReplica)
    env.rsm.handle_state_changes([REPLICA], ReplicaDeletionStarted)
    assert state_of(env) == ReplicaDeletionStarted
    assert env.summary() == [(5, "StopReplica", [("t-0", -2, True)])]


def test_replica_deletion_started_to_successful_and_ineligible() -> None:
    """Mirrors ReplicaStateMachineTest#testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition and
    #testReplicaDeletionStartedToReplicaDeletionIneligibleTransition."""
    for target in (ReplicaDeletionSuccessful, ReplicaDeletionIneligible):
        env = Env()
        env.ctx.put_replica_state(REPLICA, ReplicaDeletionStarted)
        env.rsm.handle_state_changes([REPLICA], target)
        assert state_of(env) == target
        assert env.sent == []


def test_replica_deletion_successful_to_nonexistent_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testReplicaDeletionSuccessfulToNonexistentReplicaTransition."""
    env = Env()
    env.ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((5, 6), adding_replicas=(5,)))
    env.ctx.put_replica_state(REPLICA, ReplicaDeletionSuccessful)
    env.rsm.handle_state_changes([REPLICA], NonExistentReplica)
    assert REPLICA not in env.ctx.replica_states
    assert env.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((6,))


def test_replica_deletion_ineligible_to_online_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testReplicaDeletionIneligibleToOnlineReplicaTransition."""
    env = Env()
    env.write_state(LeaderAndIsr(OTHER, 4, (OTHER,)))
    env.ctx.put_replica_state(REPLICA, ReplicaDeletionIneligible)
    env.rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert state_of(env) == OnlineReplica
    assert env.summary()[0] == (5, "LeaderAndIsr", [("t-0", 6, 4, (6,), 0, False)])


def test_replicas_of_several_brokers_in_one_batch() -> None:
    """handleStateChanges groups replicas by broker but sends one batch."""
    t1 = TopicPartition("t", 1)
    env = Env()
    env.client.set_topic_assignment("t", None, {TP: ReplicaAssignment((5, 6)), t1: ReplicaAssignment((6, 5))})
    env.ctx.update_partition_full_replica_assignment(t1, ReplicaAssignment((6, 5)))
    info0 = LeaderIsrAndControllerEpoch(LeaderAndIsr(5, 1, (5, 6)), 1)
    info1 = LeaderIsrAndControllerEpoch(LeaderAndIsr(6, 2, (6, 5)), 1)
    env.ctx.put_partition_leadership_info(TP, info0)
    env.ctx.put_partition_leadership_info(t1, info1)
    replicas = [PartitionAndReplica(TP, 5), PartitionAndReplica(TP, 6), PartitionAndReplica(t1, 6),
                PartitionAndReplica(t1, 5)]
    for r in replicas:
        env.ctx.put_replica_state(r, OfflineReplica)
    env.rsm.handle_state_changes(replicas, OnlineReplica)
    assert [r for r in replicas if state_of(env, r) != OnlineReplica] == []
    assert env.summary() == [
        (5, "LeaderAndIsr", [("t-0", 5, 1, (5, 6), 0, False), ("t-1", 6, 2, (6, 5), 0, False)]),
        (6, "LeaderAndIsr", [("t-0", 5, 1, (5, 6), 0, False), ("t-1", 6, 2, (6, 5), 0, False)]),
        (5, "UpdateMetadata", [("t-0", 5, 1, (5, 6)), ("t-1", 6, 2, (6, 5))]),
        (6, "UpdateMetadata", [("t-0", 5, 1, (5, 6)), ("t-1", 6, 2, (6, 5))]),
    ]
