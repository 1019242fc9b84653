"""The controller's state machines and TopicDeletionManager, the Kafka tests not ported elsewhere.

Mirrors the remaining tests of kafka.controller.PartitionStateMachineTest,
kafka.controller.ReplicaStateMachineTest and all of kafka.controller.TopicDeletionManagerTest
(Kafka 3.8). The invalid-transition tests of both state machine suites are the parametrized
``test_every_transition`` of tests/test_partition_state_machine.py and
tests/test_replica_state_machine.py. Kafka's TopicDeletionManagerTest drives mock state machines
that only move states in the context; here the real ZooKeeper-backed machines run against the
in-memory ZooKeeper, and the requests and metadata updates they send are recorded.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.requests.stop_replica import StopReplicaRequest
from kafka_ref.common.requests.update_metadata import UpdateMetadataRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_broker_request_batch import (
    ControllerBrokerRequestBatch,
)
from kafka_ref.controller.controller_context import ControllerContext
from kafka_ref.controller.partition_state_machine import (
    NewPartition,
    NonExistentPartition,
    OfflinePartition,
    ZkPartitionStateMachine,
)
from kafka_ref.controller.replica_state_machine import (
    NewReplica,
    OfflineReplica,
    PartitionAndReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ZkReplicaStateMachine,
)
from kafka_ref.controller.topic_deletion_manager import (
    DeletionClient,
    TopicDeletionManager,
)
from kafka_ref.zk import KafkaZkClient, ZooKeeper
from kafka_ref.zk.zk_data import (
    BrokerInfo,
    ReplicaAssignment,
)


class RecordingDeletionClient(DeletionClient):
    """Kafka's mocked DeletionClient: remembers each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        self.calls.append(("delete_topic", topic))

    def delete_topic_deletions(self, topics: list[str], epoch_zk_version: int) -> None:
        self.calls.append(("delete_topic_deletions", tuple(topics)))

    def mute_partition_modifications(self, topic: str) -> None:
        self.calls.append(("mute_partition_modifications", topic))

    def send_metadata_update(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("send_metadata_update", frozenset(partitions)))


class Env:
    """Controller 1 (epoch 1) over the in-memory ZooKeeper; ``brokers`` live with epoch 1.

    Topics are assigned round-robin as TopicDeletionManagerTest#initContext does: partition i
    of the topics (in sorted order) starts its replica list ``i`` places further along the brokers.
    """

    def __init__(self, brokers: tuple[int, ...] = (1, 2, 3), topics: tuple[str, ...] = (), num_partitions: int = 2,
                 replication_factor: int = 3) -> None:
        self.config = KafkaConfig({"broker.id": 1})
        self.zk = ZooKeeper(MockTime())
        self.client = KafkaZkClient(self.zk)
        self.client.create_top_level_paths()
        self.ctx = ControllerContext()
        self.ctx.epoch, self.ctx.epoch_zk_version = self.client.register_controller_and_increment_controller_epoch(1)
        self.broker_infos = {b: BrokerInfo(b, "localhost", 9900 + b) for b in brokers}
        self.ctx.set_live_brokers({info: 1 for info in self.broker_infos.values()})
        leader_index = 0
        for topic in topics:
            assignment = {}
            for p in range(num_partitions):
                tp = TopicPartition(topic, p)
                replicas = tuple(brokers[(i + leader_index) % len(brokers)] for i in range(replication_factor))
                assignment[tp] = replicas
                self.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
                leader_index += 1
            self.client.create_topic_assignment(topic, None, assignment)
            self.ctx.all_topics.add(topic)
        self.sent: list[tuple[int, Any]] = []
        logger = state_change_logger(controller_id=1)
        self.rsm = ZkReplicaStateMachine(self.config, logger, self.ctx, self.client, self._batch(logger))
        self.psm = ZkPartitionStateMachine(self.config, logger, self.ctx, self.client, self._batch(logger),
                                           lambda topic: False)
        self.rsm_calls: Counter = Counter()
        self.psm_calls: Counter = Counter()
        self._count(self.rsm, self.rsm_calls)
        self._count(self.psm, self.psm_calls)
        self.deletion_client = RecordingDeletionClient()
        self.manager = TopicDeletionManager(self.config, self.ctx, self.rsm, self.psm, self.deletion_client, logger)

    def _batch(self, logger: Any) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self.config, lambda b, r, cb: self.sent.append((b, r)), logger, self.ctx)

    @staticmethod
    def _count(machine: Any, calls: Counter) -> None:
        """Count handle_state_changes calls per target state (MockReplicaStateMachine#stateChangesCalls).

        Only calls with something to change count: Kafka's mock also counts a call with an empty
        list, which the real machines ignore and the deletion manager here does not make.
        """
        real = machine.handle_state_changes

        def counting(items: Any, target: Any, *args: Any, **kwargs: Any) -> Any:
            if items:
                calls[target] += 1
            return real(items, target, *args, **kwargs)

        machine.handle_state_changes = counting

    def startup(self) -> None:
        self.rsm.startup()
        self.psm.startup()
        self.sent.clear()
        self.rsm_calls.clear()
        self.psm_calls.clear()

    def replicas_of(self, topic: str) -> set[PartitionAndReplica]:
        return set(self.ctx.replicas_for_partition(self.ctx.partitions_for_topic(topic)))

    def replicas_in(self, topic: str, state: Any) -> set[PartitionAndReplica]:
        return set(self.ctx.replicas_in_state(topic, state))

    def stop_replicas_sent(self) -> list[tuple[int, list[tuple[str, int, bool]]]]:
        return [(b, [(str(tp), s.leader_epoch, s.delete_partition) for tp, s in r.partition_states().items()])
                for b, r in self.sent if isinstance(r, StopReplicaRequest)]


# ---- PartitionStateMachineTest --------------------------------------------------------------------

def test_updating_offline_partitions_count_during_topic_deletion() -> None:
    """Mirrors PartitionStateMachineTest#testUpdatingOfflinePartitionsCountDuringTopicDeletion.

    Four offline partitions count as offline until their topic is queued for deletion.
    """
    env = Env(brokers=(1,), topics=("test",), num_partitions=4, replication_factor=1)
    partitions = [TopicPartition("test", p) for p in range(4)]
    env.psm.handle_state_changes(partitions, NewPartition)
    env.psm.handle_state_changes(partitions, OfflinePartition)
    for tp in partitions:
        env.ctx.put_replica_state(PartitionAndReplica(tp, 1), OfflineReplica)
    assert env.ctx.offline_partition_count == 4
    env.manager.enqueue_topics_for_deletion({"test"})
    assert env.ctx.offline_partition_count == 0
    assert {tp: env.ctx.partition_state(tp) for tp in partitions} == {tp: NonExistentPartition for tp in partitions}


# ---- ReplicaStateMachineTest ----------------------------------------------------------------------

def test_new_replica_to_offline_replica_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testNewReplicaToOfflineReplicaTransition.

    A NewReplica without leadership information goes offline with a StopReplica (no delete) to
    its broker and an UpdateMetadata of the partition, which is left out because it has no leader.
    """
    env = Env(brokers=(5,))
    tp = TopicPartition("t", 0)
    env.ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((5,)))
    replica = PartitionAndReplica(tp, 5)
    env.ctx.put_replica_state(replica, NewReplica)
    env.rsm.handle_state_changes([replica], OfflineReplica)
    assert env.ctx.replica_states[replica] == OfflineReplica
    assert env.stop_replicas_sent() == [(5, [("t-0", -1, False)])]
    [(b, update)] = [(b, r) for b, r in env.sent if isinstance(r, UpdateMetadataRequest)]
    assert (b, update.topic_states, [x.id for x in update.live_brokers]) == (5, (), [5])


def test_offline_replica_to_replica_deletion_ineligible_transition() -> None:
    """Mirrors ReplicaStateMachineTest#testOfflineReplicaToReplicaDeletionIneligibleTransition: nothing is sent."""
    env = Env(brokers=(5,))
    replica = PartitionAndReplica(TopicPartition("t", 0), 5)
    env.ctx.put_replica_state(replica, OfflineReplica)
    env.rsm.handle_state_changes([replica], ReplicaDeletionIneligible)
    assert env.ctx.replica_states[replica] == ReplicaDeletionIneligible
    assert env.sent == []


# ---- TopicDeletionManagerTest ---------------------------------------------------------------------

def test_initialization() -> None:
    """Mirrors TopicDeletionManagerTest#testInitialization: only queued topics stay ineligible."""
    env = Env(topics=("bar", "baz", "foo"))
    env.startup()
    assert env.manager.is_delete_topic_enabled
    env.manager.init({"foo", "bar"}, {"bar", "baz"})
    assert env.ctx.topics_to_be_deleted == {"foo", "bar"}
    assert env.ctx.topics_ineligible_for_deletion == {"bar"}


def test_basic_deletion() -> None:
    """Mirrors TopicDeletionManagerTest#testBasicDeletion."""
    env = Env(topics=("bar", "foo"))
    env.startup()
    env.manager.init(set(), set())
    foo_partitions, bar_partitions = env.ctx.partitions_for_topic("foo"), env.ctx.partitions_for_topic("bar")
    foo_replicas, bar_replicas = env.replicas_of("foo"), env.replicas_of("bar")
    # Queue both topics for deletion.
    env.manager.enqueue_topics_for_deletion({"foo", "bar"})
    assert env.ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert env.replicas_in("foo", ReplicaDeletionStarted) == foo_replicas
    assert env.ctx.partitions_in_state(NonExistentPartition, "bar") == bar_partitions
    assert env.replicas_in("bar", ReplicaDeletionStarted) == bar_replicas
    assert env.deletion_client.calls == [("send_metadata_update", frozenset(foo_partitions | bar_partitions))]
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo", "bar"}, {"foo", "bar"}, set())
    # Every broker was told to stop, then to delete, each of its four replicas (epoch -2: being deleted).
    assert env.stop_replicas_sent() == [
        (b, [(f"{t}-{p}", -2, delete) for t in ("bar", "foo") for p in (0, 1)])
        for delete in (False, True) for b in (1, 2, 3)]
    # Complete the deletion.
    env.manager.complete_replica_deletion(foo_replicas | bar_replicas)
    for topic in ("foo", "bar"):
        assert env.ctx.partitions_for_topic(topic) == set()
        assert {r for r in env.ctx.replica_states if r.topic == topic} == set()
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == (set(), set(), set())
    assert [c for c in env.deletion_client.calls if c[0] == "delete_topic"] == [("delete_topic", "bar"),
                                                                                ("delete_topic", "foo")]
    assert (env.psm_calls[OfflinePartition], env.psm_calls[NonExistentPartition]) == (1, 1)
    # No replica was dead, so ReplicaDeletionIneligible had nothing to change (Kafka's mock counts its empty call).
    assert (env.rsm_calls[ReplicaDeletionIneligible], env.rsm_calls[OfflineReplica],
            env.rsm_calls[ReplicaDeletionStarted], env.rsm_calls[ReplicaDeletionSuccessful]) == (0, 1, 1, 1)


def test_deletion_with_broker_offline() -> None:
    """Mirrors TopicDeletionManagerTest#testDeletionWithBrokerOffline."""
    env = Env(topics=("bar", "foo"))
    env.startup()
    env.manager.init(set(), set())
    foo_partitions = env.ctx.partitions_for_topic("foo")
    foo_replicas = env.replicas_of("foo")
    # Broker 2 is taken offline.
    offline_broker, last_epoch = env.broker_infos[2], env.ctx.live_broker_id_and_epochs[2]
    env.ctx.remove_live_brokers({2})
    assert env.ctx.live_broker_ids == {1, 3}
    offline_replicas = {r for r in foo_replicas if r.replica == 2}
    online_replicas = foo_replicas - offline_replicas
    env.rsm.handle_state_changes(sorted(offline_replicas, key=str), OfflineReplica)
    # Start the deletion.
    env.manager.enqueue_topics_for_deletion({"foo"})
    assert env.ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert env.deletion_client.calls == [("send_metadata_update", frozenset(foo_partitions))]
    assert env.replicas_in("foo", ReplicaDeletionStarted) == online_replicas
    assert env.replicas_in("foo", ReplicaDeletionIneligible) == offline_replicas
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo"}, {"foo"}, {"foo"})
    # Deletion succeeds for the online replicas.
    env.manager.complete_replica_deletion(online_replicas)
    assert env.ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo"}, {"foo"}, {"foo"})
    assert env.replicas_in("foo", ReplicaDeletionSuccessful) == online_replicas
    assert env.replicas_in("foo", OfflineReplica) == offline_replicas
    # Broker 2 comes back with a new epoch and the deletion resumes.
    env.ctx.add_live_brokers({offline_broker: last_epoch + 1})
    env.manager.resume_deletion_for_topics({"foo"})
    assert env.replicas_in("foo", ReplicaDeletionSuccessful) == online_replicas
    assert env.replicas_in("foo", ReplicaDeletionStarted) == offline_replicas
    env.manager.complete_replica_deletion(offline_replicas)
    assert env.ctx.partitions_for_topic("foo") == set()
    assert {r for r in env.ctx.replica_states if r.topic == "foo"} == set()
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == (set(), set(), set())


def test_broker_failure_after_deletion_started() -> None:
    """Mirrors TopicDeletionManagerTest#testBrokerFailureAfterDeletionStarted."""
    env = Env(topics=("bar", "foo"))
    env.startup()
    env.manager.init(set(), set())
    foo_partitions = env.ctx.partitions_for_topic("foo")
    foo_replicas = env.replicas_of("foo")
    env.manager.enqueue_topics_for_deletion({"foo"})
    assert env.ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert env.replicas_in("foo", ReplicaDeletionStarted) == foo_replicas
    # Broker 2 fails.
    offline_broker, last_epoch = env.broker_infos[2], env.ctx.live_broker_id_and_epochs[2]
    env.ctx.remove_live_brokers({2})
    assert env.ctx.live_broker_ids == {1, 3}
    offline_replicas = {r for r in foo_replicas if r.replica == 2}
    online_replicas = foo_replicas - offline_replicas
    # Its replicas' deletion fails.
    env.manager.fail_replica_deletion(offline_replicas)
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo"}, {"foo"}, {"foo"})
    assert env.replicas_in("foo", ReplicaDeletionIneligible) == offline_replicas
    assert env.replicas_in("foo", ReplicaDeletionStarted) == online_replicas
    # Broker 2 restarts: the topic is eligible again, but its replicas stay ineligible.
    env.ctx.add_live_brokers({offline_broker: last_epoch + 1})
    env.manager.resume_deletion_for_topics({"foo"})
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo"}, {"foo"}, set())
    assert env.replicas_in("foo", ReplicaDeletionStarted) == online_replicas
    assert env.replicas_in("foo", ReplicaDeletionIneligible) == offline_replicas
    # Once the started ones complete, deletion begins for the remaining ones.
    env.manager.complete_replica_deletion(online_replicas)
    assert (env.ctx.topics_to_be_deleted, env.ctx.topics_with_deletion_started,
            env.ctx.topics_ineligible_for_deletion) == ({"foo"}, {"foo"}, set())
    assert env.replicas_in("foo", ReplicaDeletionSuccessful) == online_replicas
    assert env.replicas_in("foo", ReplicaDeletionStarted) == offline_replicas
