"""ZkPartitionStateMachine against the in-memory ZooKeeper and a recording request batch.

Mirrors kafka.controller.PartitionStateMachineTest (Kafka 3.x); each test names the Kafka test it
follows. Kafka mocks KafkaZkClient; here the real client writes real znodes, so the znode bytes,
the zkVersions and the requests batched per broker are all checked. Seed 001 §5.3.2 adds the
0.10 selector flow at the end.
"""

from __future__ import annotations

from typing import Any

import pytest
import structlog

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import (
    ControllerMovedException,
    LeaderElectionNotNeededException,
    NoReplicaOnlineException,
    StateChangeFailedException,
)
from kafka_ref.common.requests.leader_and_isr import LeaderAndIsrRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.controller.controller_broker_request_batch import ControllerBrokerRequestBatch
from kafka_ref.controller.controller_context import (
    ControllerContext,
    IllegalStateException,
    PartitionAndReplica,
    reassign_to,
    remove_replica,
    target_replicas,
)
from kafka_ref.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
)
from kafka_ref.controller.leader_selectors import OfflinePartitionLeaderSelector, PreferredReplicaPartitionLeaderSelector
from kafka_ref.controller.partition_state_machine import (
    VALID_PREVIOUS_PARTITION_STATES,
    NewPartition,
    NonExistentPartition,
    OfflinePartition,
    OnlinePartition,
    PartitionState,
    ZkPartitionStateMachine,
)
from kafka_ref.zk import KafkaZkClient, NodeExistsException, ZooKeeper
from kafka_ref.zk.zk_data import (
    BrokerInfo,
    ConfigType,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
    ReplicaAssignment,
    TopicPartitionStateZNode,
)

BROKER_ID = 5  # the controller, as in PartitionStateMachineTest
TOPIC_ID = Uuid.from_string("zWE-MNjxSt-Rt1hKImWx9Q")
TP = TopicPartition("t", 0)


class Env:
    """ZooKeeper with controller 5 elected (epoch 1, zkVersion 1), live brokers, a context and the machine."""

    def __init__(self, live: tuple[int, ...] = (5, 6, 7), unclean: dict[str, bool] | None = None,
                 use_topic_config: bool = False, config: dict | None = None) -> None:
        self.config = KafkaConfig({"broker.id": BROKER_ID, **(config or {})})
        self.zk = ZooKeeper(MockTime())
        self.client = KafkaZkClient(self.zk)
        self.client.create_top_level_paths()
        epoch, epoch_zk_version = self.client.register_controller_and_increment_controller_epoch(BROKER_ID)
        self.ctx = ControllerContext()
        self.ctx.epoch, self.ctx.epoch_zk_version = epoch, epoch_zk_version
        self.ctx.set_live_brokers({BrokerInfo(b, f"host{b}", 9092): 100 + b for b in live})
        self.sent: list[tuple[int, Any]] = []
        logger = state_change_logger(controller_id=BROKER_ID)
        self.batch = ControllerBrokerRequestBatch(self.config, lambda b, r, cb: self.sent.append((b, r)),
                                                  logger, self.ctx)
        self.unclean = unclean or {}
        self.psm = ZkPartitionStateMachine(self.config, logger, self.ctx, self.client, self.batch,
                                           None if use_topic_config else (lambda topic: self.unclean.get(topic, False)))

    def add_topic(self, assignment: dict[TopicPartition, tuple[int, ...]], topic: str = "t") -> None:
        self.client.create_topic_assignment(topic, TOPIC_ID if topic == "t" else None, assignment)
        self.ctx.all_topics.add(topic)
        if topic == "t":
            self.ctx.add_topic_id(topic, TOPIC_ID)
        for tp, replicas in assignment.items():
            self.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))

    def write_state(self, tp: TopicPartition, lai: LeaderAndIsr, controller_epoch: int = 1,
                    cache: bool = True) -> LeaderIsrAndControllerEpoch:
        """A state znode as an earlier controller left it (and, if ``cache``, in the leader cache)."""
        info = LeaderIsrAndControllerEpoch(lai, controller_epoch)
        self.client.create_topic_partition_states_raw({tp: info})
        if cache:
            self.ctx.put_partition_leadership_info(tp, info)
        return info

    def znode(self, tp: TopicPartition) -> tuple[bytes, int]:
        data, stat = self.zk.get_data(TopicPartitionStateZNode.path(tp))
        return data, stat.version

    def leader_and_isr_sent(self) -> list[tuple[int, list[tuple[Any, ...]]]]:
        return [(b, [(s.topic_name, s.partition_index, s.leader, s.leader_epoch, s.isr, s.partition_epoch, s.is_new,
                      s.leader_recovery_state) for s in r.partition_states()])
                for b, r in self.sent if isinstance(r, LeaderAndIsrRequest)]

    def update_metadata_sent(self) -> list[tuple[int, list[tuple[Any, ...]]]]:
        return [(b, [(s.topic_name, s.partition_index, s.leader, s.leader_epoch, s.isr, s.zk_version)
                     for s in r.partition_states()])
                for b, r in self.sent if isinstance(r, UpdateMetadataRequest)]


def state_of(env: Env, tp: TopicPartition = TP) -> PartitionState:
    return env.ctx.partition_state(tp)


# ---- the transition table ------------------------------------------------------------------

def test_valid_previous_states_table() -> None:
    """The table of kafka.controller.PartitionState#validPreviousStates."""
    assert VALID_PREVIOUS_PARTITION_STATES == {
        NewPartition: {NonExistentPartition},
        OnlinePartition: {NewPartition, OnlinePartition, OfflinePartition},
        OfflinePartition: {NewPartition, OnlinePartition, OfflinePartition},
        NonExistentPartition: {OfflinePartition},
    }
    assert [s.state for s in PartitionState] == [0, 1, 2, 3]


def _prepare(env: Env, from_state: PartitionState) -> None:
    env.add_topic({TP: (5, 6)})
    if from_state in (OnlinePartition, OfflinePartition):
        env.write_state(TP, LeaderAndIsr(5, 3, (5, 6)))
    if from_state != NonExistentPartition:
        env.ctx.put_partition_state(TP, from_state)


@pytest.mark.parametrize("target", list(PartitionState), ids=str)
@pytest.mark.parametrize("current", list(PartitionState), ids=str)
def test_every_transition(current: PartitionState, target: PartitionState) -> None:
    """Mirrors the PartitionStateMachineTest transition tests (testNonexistentPartitionToNewPartitionTransition,
    testInvalid*Transition, ...): every legal move happens, every illegal one is refused and logged."""
    env = Env()
    _prepare(env, current)
    with structlog.testing.capture_logs() as logs:
        env.psm.handle_state_changes([TP], target, OfflinePartitionLeaderElectionStrategy(False))
    errors = [e for e in logs if e["event"] == "partition_state_change_failed"]
    if current in target.valid_previous_states:
        assert state_of(env) == target
        assert errors == []
    else:
        assert state_of(env) == current
        valid = ",".join(str(s) for s in sorted(target.valid_previous_states, key=lambda s: s.value))
        [error] = errors
        assert error["error_type"] == "IllegalStateException"
        assert error["error"] == (f"Partition t-0 should be in one of {valid} states before moving to {target} state. "
                                  f"Instead it is in {current} state")
        assert (error["from_state"], error["to_state"], error["log_level"]) == (str(current), str(target), "error")


def test_nonexistent_partition_to_new_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testNonexistentPartitionToNewPartitionTransition."""
    env = Env()
    env.add_topic({TP: (5,)})
    assert env.psm.handle_state_changes([TP], NewPartition) == {}
    assert state_of(env) == NewPartition
    assert env.sent == []


def test_invalid_nonexistent_partition_to_online_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testInvalidNonexistentPartitionToOnlinePartitionTransition."""
    env = Env()
    assert env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False)) == {}
    assert state_of(env) == NonExistentPartition
    assert env.sent == []


# ---- NewPartition -> OnlinePartition ----------------------------------------------------------

def test_new_partition_to_online_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testNewPartitionToOnlinePartitionTransition."""
    env = Env(live=(5, 6))
    env.add_topic({TP: (6, 7, 5)})  # 7 is not alive
    env.ctx.put_partition_state(TP, NewPartition)
    assert env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False)) == {}
    assert state_of(env) == OnlinePartition
    # Leader = first live assigned replica, ISR = the live assigned replicas, written with our epoch.
    assert env.znode(TP) == (b'{"controller_epoch":1,"leader":6,"version":1,"leader_epoch":0,"isr":[6,5]}', 0)
    assert env.ctx.partition_leadership_info[TP] == LeaderIsrAndControllerEpoch(LeaderAndIsr(6, 0, (6, 5)), 1)
    # LeaderAndIsr (is_new) to the ISR, UpdateMetadata to every live broker.
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 6, 0, (6, 5), 0, True, 0)]),
                                         (6, [("t", 0, 6, 0, (6, 5), 0, True, 0)])]
    assert env.update_metadata_sent() == [(5, [("t", 0, 6, 0, (6, 5), 0)]), (6, [("t", 0, 6, 0, (6, 5), 0)])]
    assert [r.topic_ids() for _, r in env.sent] == [{"t": TOPIC_ID}] * 4
    assert [(b, r.broker_epoch, r.controller_epoch, r.controller_id) for b, r in env.sent] == [
        (5, 105, 1, 5), (6, 106, 1, 5), (5, 105, 1, 5), (6, 106, 1, 5)]


def test_new_partition_to_online_partition_no_live_replica() -> None:
    """A New partition whose replicas are all down stays New (initializeLeaderAndIsrForPartitions)."""
    env = Env(live=(5,))
    env.add_topic({TP: (6, 7)})
    env.ctx.put_partition_state(TP, NewPartition)
    with structlog.testing.capture_logs() as logs:
        env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert state_of(env) == NewPartition
    [error] = [e for e in logs if e["event"] == "partition_state_change_failed"]
    assert error["error_type"] == "StateChangeFailedException"
    assert error["error"] == ("Controller 5 epoch 1 encountered error during state change of partition t-0 from New to "
                              "Online, assigned replicas are [6,7], live brokers are [5]. No assigned replica is alive.")
    assert not env.zk.exists(TopicPartitionStateZNode.path(TP))
    assert env.sent == []


def test_new_partition_to_online_partition_error_code_from_create_states() -> None:
    """Mirrors PartitionStateMachineTest#testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.write_state(TP, LeaderAndIsr(5, 4, (5,)), cache=False)  # someone initialised it already
    env.ctx.put_partition_state(TP, NewPartition)
    with structlog.testing.capture_logs() as logs:
        env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert state_of(env) == NewPartition
    assert [e["error_type"] for e in logs if e["event"] == "partition_state_change_failed"] == ["NodeExistsException"]
    assert TP not in env.ctx.partition_leadership_info
    assert env.sent == []


def test_new_partition_to_online_partition_zookeeper_exception_from_create_states(monkeypatch) -> None:
    """Mirrors PartitionStateMachineTest#testNewPartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromCreateStates."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.ctx.put_partition_state(TP, NewPartition)

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise NodeExistsException("test")

    monkeypatch.setattr(env.client, "create_topic_partition_states_raw", boom)
    env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert state_of(env) == NewPartition
    assert env.sent == []


def test_new_partition_to_online_partition_controller_moved() -> None:
    """A deposed controller's create fails the /controller_epoch check: ControllerMovedException propagates."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.ctx.put_partition_state(TP, NewPartition)
    env.zk.set_data("/controller_epoch", b"2")  # another controller took over (zkVersion 2)
    with pytest.raises(ControllerMovedException):
        env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert state_of(env) == NewPartition
    assert not env.zk.exists(TopicPartitionStateZNode.path(TP))
    assert env.sent == []


def test_new_partition_to_offline_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testNewPartitionToOfflinePartitionTransition."""
    env = Env()
    env.ctx.put_partition_state(TP, NewPartition)
    env.psm.handle_state_changes([TP], OfflinePartition)
    assert state_of(env) == OfflinePartition


# ---- Online/Offline -> OnlinePartition: elections ---------------------------------------------

def test_online_partition_to_online_transition_preferred() -> None:
    """Mirrors PartitionStateMachineTest#testOnlinePartitionToOnlineTransition (preferred election)."""
    env = Env()
    env.add_topic({TP: (5, 6)})
    env.write_state(TP, LeaderAndIsr(6, 3, (6, 5)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, PreferredReplicaPartitionLeaderElectionStrategy)
    new = LeaderAndIsr(5, 4, (6, 5), LeaderRecoveryState.RECOVERED, 1)
    assert results == {TP: new}
    assert state_of(env) == OnlinePartition
    assert env.znode(TP) == (b'{"controller_epoch":1,"leader":5,"version":1,"leader_epoch":4,"isr":[6,5]}', 1)
    assert env.ctx.partition_leadership_info[TP] == LeaderIsrAndControllerEpoch(new, 1)
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 5, 4, (6, 5), 1, False, 0)]),
                                         (6, [("t", 0, 5, 4, (6, 5), 1, False, 0)])]
    assert [b for b, _ in env.update_metadata_sent()] == [5, 6, 7]


def test_online_partition_to_online_transition_for_controlled_shutdown() -> None:
    """Mirrors PartitionStateMachineTest#testOnlinePartitionToOnlineTransitionForControlledShutdown."""
    env = Env(live=(5, 6))
    env.ctx.shutting_down_broker_ids.add(5)
    env.add_topic({TP: (5, 6)})
    env.write_state(TP, LeaderAndIsr(5, 3, (5, 6)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, ControlledShutdownPartitionLeaderElectionStrategy)
    assert results == {TP: LeaderAndIsr(6, 4, (6,), LeaderRecoveryState.RECOVERED, 1)}
    # The LeaderAndIsr goes to both brokers, the shutting-down one included.
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 6, 4, (6,), 1, False, 0)]), (6, [("t", 0, 6, 4, (6,), 1, False, 0)])]


def test_online_partition_to_online_transition_for_reassignment() -> None:
    env = Env(live=(5, 6, 7))
    env.add_topic({TP: (5, 6)})
    env.ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((7, 5, 6), (7,), (5, 6)))
    env.write_state(TP, LeaderAndIsr(5, 3, (5, 6, 7)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, ReassignPartitionLeaderElectionStrategy)
    assert results == {TP: LeaderAndIsr(7, 4, (5, 6, 7), LeaderRecoveryState.RECOVERED, 1)}
    assert env.leader_and_isr_sent() == [(7, [("t", 0, 7, 4, (5, 6, 7), 1, False, 0)])]


def test_offline_partition_to_online_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testOfflinePartitionToOnlinePartitionTransition."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.write_state(TP, LeaderAndIsr(LeaderAndIsr.NO_LEADER, 3, (5,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert results == {TP: LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERED, 1)}
    assert state_of(env) == OnlinePartition
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 5, 4, (5,), 1, False, 0)])]


def test_offline_partition_to_unclean_online_partition_transition() -> None:
    """Mirrors PartitionStateMachineTest#testOfflinePartitionToUncleanOnlinePartitionTransition.

    Leader 6, ISR [6], replicas [6, 5], only 5 alive: the forced unclean election makes 5 the
    leader alone in the ISR, RECOVERING (IBP 3.2+).
    """
    env = Env(live=(5,))
    env.add_topic({TP: (6, 5)})
    env.write_state(TP, LeaderAndIsr(6, 3, (6,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(True))
    assert results == {TP: LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERING, 1)}
    assert env.znode(TP) == (b'{"controller_epoch":1,"leader":5,"version":1,"leader_recovery_state":1,'
                             b'"leader_epoch":4,"isr":[5]}', 1)
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 5, 4, (5,), 1, False, 1)])]
    assert env.ctx.stats.unclean_leader_election_rate.count() == 1


def test_unclean_election_before_ibp_3_2_does_not_mark_recovering() -> None:
    env = Env(live=(5,), config={"inter.broker.protocol.version": "3.1"})
    env.add_topic({TP: (6, 5)})
    env.write_state(TP, LeaderAndIsr(6, 3, (6,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(True))
    assert results == {TP: LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERED, 1)}


@pytest.mark.parametrize("enabled", [True, False])
def test_unclean_election_follows_topic_config(enabled: bool) -> None:
    """unclean.leader.election.enable read from the topic's config znode (collectUncleanLeaderElectionState)."""
    env = Env(live=(5,), use_topic_config=True)
    env.client.set_or_create_entity_configs(ConfigType.TOPIC, "t", {"unclean.leader.election.enable": str(enabled).lower()})
    env.add_topic({TP: (6, 5)})
    env.write_state(TP, LeaderAndIsr(6, 3, (6,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    if enabled:
        assert results == {TP: LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERING, 1)}
        assert state_of(env) == OnlinePartition
    else:
        [error] = results.values()
        assert isinstance(error, StateChangeFailedException)
        assert str(error) == ("Failed to elect leader for partition t-0 under strategy "
                              "OfflinePartitionLeaderElectionStrategy(allow_unclean=False)")
        assert state_of(env) == OfflinePartition
        assert env.znode(TP)[1] == 0  # nothing written
        assert env.sent == []


def test_unclean_election_per_topic_with_injected_setting() -> None:
    a0, b0 = TopicPartition("a", 0), TopicPartition("b", 0)
    env = Env(live=(5,), unclean={"a": True})
    env.add_topic({a0: (6, 5)}, topic="a")
    env.add_topic({b0: (6, 5)}, topic="b")
    for tp in (a0, b0):
        env.write_state(tp, LeaderAndIsr(6, 3, (6,)))
        env.ctx.put_partition_state(tp, OfflinePartition)
    results = env.psm.handle_state_changes([a0, b0], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert results[a0] == LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERING, 1)
    assert isinstance(results[b0], StateChangeFailedException)
    assert (state_of(env, a0), state_of(env, b0)) == (OnlinePartition, OfflinePartition)


def test_offline_partition_to_online_partition_error_code_from_state_lookup() -> None:
    """Mirrors PartitionStateMachineTest#testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.ctx.put_partition_state(TP, OfflinePartition)  # no state znode in ZooKeeper
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    [error] = results.values()
    assert isinstance(error, StateChangeFailedException)
    assert str(error) == "LeaderAndIsr information doesn't exist for partition t-0 in OfflinePartition state"
    assert state_of(env) == OfflinePartition


def test_offline_partition_zookeeper_exception_from_state_lookup(monkeypatch) -> None:
    """Mirrors PartitionStateMachineTest#testOfflinePartitionToOnlinePartitionTransitionZooKeeperClientExceptionFromStateLookup."""
    env = Env()
    env.add_topic({TP: (5,)})
    env.write_state(TP, LeaderAndIsr(-1, 3, (5,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    failure = NodeExistsException("lookup")

    def boom(partitions: Any) -> Any:
        raise failure

    monkeypatch.setattr(env.client, "get_topic_partition_states_raw", boom)
    assert env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False)) == {
        TP: failure}
    assert state_of(env) == OfflinePartition


def test_preferred_leader_election_with_in_flight_isr_shrink(monkeypatch) -> None:
    """Mirrors PartitionStateMachineTest#testPreferredLeaderElectionWithInFlightIsrShrink.

    Between the controller's read and its write the leader shrinks the ISR (a new zkVersion):
    the write meets BadVersion, the partition is retried, re-read and elected on the new ISR.
    """
    env = Env(live=(5, 6, 7))
    env.add_topic({TP: (7, 5, 6)})
    env.write_state(TP, LeaderAndIsr(5, 1, (5, 6, 7)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    real_update = env.client.update_leader_and_isr
    attempts: list[dict] = []

    def racing_update(leader_and_isrs: Any, controller_epoch: int, zk_version: int) -> Any:
        attempts.append(dict(leader_and_isrs))
        if len(attempts) == 1:  # the leader's AlterPartition lands first
            env.zk.set_data(TopicPartitionStateZNode.path(TP), TopicPartitionStateZNode.encode(
                LeaderIsrAndControllerEpoch(LeaderAndIsr(5, 1, (5, 7)), 1)), 0)
        return real_update(leader_and_isrs, controller_epoch, zk_version)

    monkeypatch.setattr(env.client, "update_leader_and_isr", racing_update)
    results = env.psm.handle_state_changes([TP], OnlinePartition, PreferredReplicaPartitionLeaderElectionStrategy)
    assert attempts == [{TP: LeaderAndIsr(7, 2, (5, 6, 7), partition_epoch=0)},
                        {TP: LeaderAndIsr(7, 2, (5, 7), partition_epoch=1)}]
    assert results == {TP: LeaderAndIsr(7, 2, (5, 7), LeaderRecoveryState.RECOVERED, 2)}
    assert env.znode(TP) == (b'{"controller_epoch":1,"leader":7,"version":1,"leader_epoch":2,"isr":[5,7]}', 2)
    assert env.ctx.partition_leadership_info[TP].leader_and_isr == results[TP]
    assert env.leader_and_isr_sent() == [(b, [("t", 0, 7, 2, (5, 7), 2, False, 0)]) for b in (5, 6, 7)]


def test_election_aborted_when_newer_controller_wrote_state() -> None:
    """The znode carries a newer controller epoch: this controller must not elect (doElectLeaderForPartitions)."""
    env = Env()
    env.add_topic({TP: (5, 6)})
    env.write_state(TP, LeaderAndIsr(-1, 3, (5, 6)), controller_epoch=2)
    env.ctx.put_partition_state(TP, OfflinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    [error] = results.values()
    assert isinstance(error, StateChangeFailedException)
    assert str(error) == ("Aborted leader election for partition t-0 since the LeaderAndIsr path was already written "
                          "by another controller. This probably means that the current controller 5 went through a soft "
                          "failure and another controller was elected with epoch 2.")
    assert state_of(env) == OfflinePartition
    assert env.znode(TP)[1] == 0
    assert env.sent == []


def test_election_by_deposed_controller_raises_controller_moved() -> None:
    env = Env()
    env.add_topic({TP: (5, 6)})
    env.write_state(TP, LeaderAndIsr(-1, 3, (5, 6)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    env.zk.set_data("/controller_epoch", b"2")
    with pytest.raises(ControllerMovedException):
        env.psm.handle_state_changes([TP], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert state_of(env) == OfflinePartition
    assert env.znode(TP)[1] == 0


def test_online_without_strategy_fails_every_partition() -> None:
    env = Env()
    env.add_topic({TP: (5,)})
    env.write_state(TP, LeaderAndIsr(5, 3, (5,)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    results = env.psm.handle_state_changes([TP], OnlinePartition)
    [error] = results.values()
    assert isinstance(error, ValueError)
    assert str(error) == "Election strategy is a required field when the target state is OnlinePartition"


def test_batched_requests_for_several_partitions() -> None:
    """Elections of two partitions go out as one LeaderAndIsr per broker and one UpdateMetadata per broker."""
    t1 = TopicPartition("t", 1)
    env = Env(live=(5, 6))
    env.add_topic({TP: (5, 6), t1: (6, 5)})
    env.write_state(TP, LeaderAndIsr(-1, 3, (5, 6)))
    env.write_state(t1, LeaderAndIsr(-1, 8, (6,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    env.ctx.put_partition_state(t1, OfflinePartition)
    env.psm.handle_state_changes([TP, t1], OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert env.leader_and_isr_sent() == [
        (5, [("t", 0, 5, 4, (5, 6), 1, False, 0), ("t", 1, 6, 9, (6,), 1, False, 0)]),
        (6, [("t", 0, 5, 4, (5, 6), 1, False, 0), ("t", 1, 6, 9, (6,), 1, False, 0)]),
    ]
    assert env.update_metadata_sent() == [
        (b, [("t", 0, 5, 4, (5, 6), 1), ("t", 1, 6, 9, (6,), 1)]) for b in (5, 6)]


# ---- offline partition count -----------------------------------------------------------------

def test_updating_offline_partitions_count() -> None:
    """Mirrors PartitionStateMachineTest#testUpdatingOfflinePartitionsCount."""
    env = Env(live=(5,))
    partitions = [TopicPartition("t", p) for p in range(4)]
    env.add_topic({tp: (5,) for tp in partitions})
    for tp in partitions:
        env.write_state(tp, LeaderAndIsr(5, 0, (5,)))
    env.psm.handle_state_changes(partitions, NewPartition)
    env.psm.handle_state_changes(partitions, OfflinePartition)
    assert env.ctx.offline_partition_count == 4
    env.psm.handle_state_changes(partitions, OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
    assert env.ctx.offline_partition_count == 0


def test_no_offline_partitions_change_for_topics_being_deleted() -> None:
    """Mirrors PartitionStateMachineTest#testNoOfflinePartitionsChangeForTopicsBeingDeleted."""
    env = Env()
    partitions = [TopicPartition("t", p) for p in range(4)]
    env.ctx.topics_to_be_deleted.add("t")
    env.ctx.topics_with_deletion_started.add("t")
    env.psm.handle_state_changes(partitions, NewPartition)
    env.psm.handle_state_changes(partitions, OfflinePartition)
    assert env.ctx.offline_partition_count == 0


# ---- startup ------------------------------------------------------------------------------------

def test_startup_initializes_states_and_brings_partitions_online() -> None:
    """PartitionStateMachine#startup: New/Online/Offline from the leader cache, then the online trigger."""
    t_new, t_online, t_offline, t_dead = (TopicPartition("t", p) for p in range(4))
    env = Env(live=(5, 6))
    env.add_topic({t_new: (5, 6), t_online: (6, 5), t_offline: (7, 5), t_dead: (7,)})
    env.write_state(t_online, LeaderAndIsr(6, 2, (6, 5)))
    env.write_state(t_offline, LeaderAndIsr(7, 2, (7, 5)))
    env.write_state(t_dead, LeaderAndIsr(7, 2, (7,)))
    env.psm.startup()
    assert {tp: state_of(env, tp) for tp in (t_new, t_online, t_offline, t_dead)} == {
        t_new: OnlinePartition, t_online: OnlinePartition, t_offline: OnlinePartition, t_dead: OfflinePartition}
    assert env.ctx.partition_leadership_info[t_new].leader_and_isr == LeaderAndIsr(5, 0, (5, 6))
    assert env.ctx.partition_leadership_info[t_offline].leader_and_isr == LeaderAndIsr(5, 3, (5,), partition_epoch=1)
    assert env.ctx.offline_partition_count == 1
    # One batch: both brokers hear about the two partitions that changed.
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 5, 0, (5, 6), 0, True, 0), ("t", 2, 5, 3, (5,), 1, False, 0)]),
                                         (6, [("t", 0, 5, 0, (5, 6), 0, True, 0)])]


def test_trigger_online_partition_state_change_skips_topics_queued_for_deletion() -> None:
    env = Env()
    env.add_topic({TP: (5,)})
    env.write_state(TP, LeaderAndIsr(-1, 2, (5,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    env.ctx.queue_topic_deletion({"t"})
    assert env.psm.trigger_online_partition_state_change() == {}
    assert state_of(env) == OfflinePartition
    env.ctx.topics_to_be_deleted.clear()
    assert env.psm.trigger_online_partition_state_change("t") == {
        TP: LeaderAndIsr(5, 3, (5,), LeaderRecoveryState.RECOVERED, 1)}


# ---- seed 001 §5.3.2: the 0.10 selector flow -----------------------------------------------------

def test_election_with_seed_offline_selector() -> None:
    """electLeaderForPartition with OfflinePartitionLeaderSelector (seed §5.3.2.2 / §5.4.2)."""
    env = Env(live=(5,))
    env.add_topic({TP: (6, 5)})
    env.write_state(TP, LeaderAndIsr(6, 3, (6,)))
    env.ctx.put_partition_state(TP, OfflinePartition)
    selector = OfflinePartitionLeaderSelector(env.ctx, lambda topic: False)
    results = env.psm.handle_state_changes([TP], OnlinePartition, selector)
    [error] = results.values()
    assert isinstance(error, NoReplicaOnlineException)
    assert str(error) == "No broker in ISR for partition t-0 is alive. Live brokers are: [5], ISR brokers are: [6]"
    assert state_of(env) == OfflinePartition
    selector.unclean_leader_election_enabled = lambda topic: True
    results = env.psm.handle_state_changes([TP], OnlinePartition, selector)
    assert results == {TP: LeaderAndIsr(5, 4, (5,), LeaderRecoveryState.RECOVERING, 1)}
    assert state_of(env) == OnlinePartition
    assert env.leader_and_isr_sent() == [(5, [("t", 0, 5, 4, (5,), 1, False, 1)])]


def test_election_with_seed_preferred_selector_not_needed() -> None:
    """LeaderElectionNotNeededException is swallowed by the seed: nothing written, nothing sent."""
    env = Env()
    env.add_topic({TP: (5, 6)})
    env.write_state(TP, LeaderAndIsr(5, 3, (5, 6)))
    env.ctx.put_partition_state(TP, OnlinePartition)
    with structlog.testing.capture_logs() as logs:
        results = env.psm.handle_state_changes([TP], OnlinePartition, PreferredReplicaPartitionLeaderSelector(env.ctx))
    [outcome] = results.values()
    assert isinstance(outcome, LeaderElectionNotNeededException)
    assert [e for e in logs if e["event"] == "partition_state_change_failed"] == []
    assert state_of(env) == OnlinePartition
    assert env.znode(TP)[1] == 0
    assert env.sent == []


# ---- ControllerContext (the state the machines share) -------------------------------------------

def test_context_full_replica_assignment_defaults_and_updates() -> None:
    """Mirrors ControllerContextTest#testPartitionFullReplicaAssignmentReturnsEmptyAssignmentIfTopicOrPartitionDoesNotExist
    and #testUpdatePartitionFullReplicaAssignmentUpdatesReplicaAssignment."""
    ctx = ControllerContext()
    assert ctx.partition_full_replica_assignment(TP) == ReplicaAssignment(())
    assert ctx.partition_replica_assignment(TP) == ()
    ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((1, 2, 3), (3,), ()))
    assert ctx.partition_replica_assignment(TP) == (1, 2, 3)
    assert ctx.partition_full_replica_assignment_for_topic("t") == {TP: ReplicaAssignment((1, 2, 3), (3,), ())}
    assert ctx.all_partitions == {TP}
    assert ctx.replicas_for_topic("t") == {PartitionAndReplica(TP, r) for r in (1, 2, 3)}
    assert ctx.partitions_on_broker(2) == {TP} and ctx.partitions_on_broker(4) == set()


def test_context_reassign_to() -> None:
    """Mirrors ControllerContextTest#testReassignTo, #testReassignToIdempotence and #testReassignToWithOverlap."""
    a = ReplicaAssignment((1, 2, 3))
    assert reassign_to(a, (1, 2, 3)) == a
    assert reassign_to(a, (4, 5, 6)) == ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    moving = reassign_to(a, (4, 2, 3))
    assert moving == ReplicaAssignment((4, 2, 3, 1), (4,), (1,))
    assert target_replicas(moving) == (4, 2, 3)
    assert remove_replica(moving, 1) == ReplicaAssignment((4, 2, 3), (4,), ())


def test_context_topic_ids_must_agree() -> None:
    ctx = ControllerContext()
    with pytest.raises(IllegalStateException, match="topic t is not contained in all topics."):
        ctx.add_topic_id("t", TOPIC_ID)
    ctx.set_all_topics({"t", "u"})
    ctx.add_topic_id("t", TOPIC_ID)
    ctx.add_topic_id("t", TOPIC_ID)
    with pytest.raises(IllegalStateException, match="topic ID map already contained ID for topic t"):
        ctx.add_topic_id("t", Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAQ"))
    with pytest.raises(IllegalStateException, match="topic name map already contained ID"):
        ctx.add_topic_id("u", TOPIC_ID)
    assert ctx.topic_name(TOPIC_ID) == "t"


def test_context_live_brokers_and_online_replicas() -> None:
    ctx = ControllerContext()
    ctx.set_live_brokers({BrokerInfo(1, "h1", 1): 11, 2: 12})
    ctx.add_live_brokers({BrokerInfo(3, "h3", 3): 13})
    ctx.shutting_down_broker_ids.add(2)
    assert (ctx.live_broker_ids, ctx.live_or_shutting_down_broker_ids) == ({1, 3}, {1, 2, 3})
    assert ctx.live_broker_id_and_epochs == {1: 11, 2: 12, 3: 13}
    assert [b.broker_id for b in ctx.live_or_shutting_down_brokers] == [1, 3]
    ctx.replicas_on_offline_dirs[3] = {TP}
    assert [ctx.is_replica_online(b, TP) for b in (1, 2, 3, 4)] == [True, False, False, False]
    assert ctx.is_replica_online(2, TP, include_shutting_down_brokers=True)
    ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((1, 2, 3)))
    online, offline = ctx.online_and_offline_replicas()
    assert (online, offline) == ({PartitionAndReplica(TP, 1)}, {PartitionAndReplica(TP, 2), PartitionAndReplica(TP, 3)})
    ctx.remove_live_brokers({1})
    assert ctx.live_or_shutting_down_broker_ids == {2, 3}


def test_context_leadership_queries_and_preferred_replica_imbalance() -> None:
    """Mirrors ControllerContextTest#testPreferredReplicaImbalanceMetric (and the leadership queries)."""
    t1 = TopicPartition("t", 1)
    ctx = ControllerContext()
    ctx.set_live_brokers({1: 11, 2: 12})
    ctx.update_partition_full_replica_assignment(TP, ReplicaAssignment((1, 2)))
    ctx.update_partition_full_replica_assignment(t1, ReplicaAssignment((2, 3)))
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2)), 1))
    ctx.put_partition_leadership_info(t1, LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 0, (3,)), 1))
    assert ctx.preferred_replica_imbalance_count == 1  # t-1 is led by 3, not its preferred 2
    assert ctx.partitions_with_offline_leader() == {t1}
    assert ctx.partition_leaders_on_broker(1) == {TP}
    ctx.put_partition_leadership_info(t1, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2,)), 1))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.put_partition_leadership_info(TP, LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2,)), 1))
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.queue_topic_deletion({"t"})  # a topic being deleted no longer counts
    assert ctx.preferred_replica_imbalance_count == 0
    assert ctx.partitions_with_leaders() == set() and ctx.leader_epoch(TP) == LeaderAndIsr.EPOCH_DURING_DELETE
    ctx.remove_topic("t")
    assert (ctx.all_partitions, ctx.partition_leadership_info, ctx.topics_to_be_deleted) == (set(), {}, set())


def test_context_reset() -> None:
    env = Env()
    env.add_topic({TP: (5,)})
    env.ctx.put_partition_state(TP, OfflinePartition)
    env.ctx.shutting_down_broker_ids.add(5)
    env.ctx.reset_context()
    assert (env.ctx.epoch, env.ctx.epoch_zk_version, env.ctx.offline_partition_count) == (0, 0, 0)
    assert (env.ctx.all_topics, env.ctx.partition_states, env.ctx.live_or_shutting_down_broker_ids,
            env.ctx.shutting_down_broker_ids, env.ctx.topic_ids) == (set(), {}, set(), set(), {})
