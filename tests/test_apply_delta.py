"""ReplicaManager#applyDelta tests (issue 10), mirroring the KRaft cases of kafka.server.ReplicaManagerTest
as of Kafka 3.7 (testDeltaFromLeaderToFollower, testDeltaFromFollowerToLeader, testDeltaFollowerWithNoChange,
testDeltaFollowerToNotReplica, testDeltaFollowerRemovedTopic, testDeltaLeaderToNotReplica,
testDeltaLeaderToRemovedTopic, testDeltaToFollowerCompletesProduce, testDeltaToFollowerCompletesFetch,
testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset,
testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath,
testDeltaToLeaderOrFollowerMarksPartitionOfflineIfLogCantBeCreated,
testReplicasAreStoppedWhileInControlledShutdownWithKRaft). The follower path follows Kafka 3.4–3.8
(always makeFollower, KAFKA-13790/13858); the 3.0–3.2 path is selected with
``kafka_ref.broker.version`` and tested beside it.

Each test wires a KRaft broker without running it (MockTime, purgatory timer advanced by hand), builds
metadata images by replaying records into MetadataDelta, and calls ``apply_delta`` the way
BrokerMetadataPublisher#publish does (seed 004 §2.2).
"""

from __future__ import annotations

import pytest

from helpers_replica import TOPIC, TOPIC_ID, TP0, Collector, consumer_params, fetch_partition, records, rm_produce
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.time import MockTime
from kafka_ref.log.disk import Disk
from kafka_ref.image.delta import MetadataDelta
from kafka_ref.image.image import EMPTY_IMAGE, MetadataImage, MetadataProvenance
from kafka_ref.server.metadata.kraft_metadata_cache import KRaftMetadataCache
from kafka_ref.image.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    PartitionChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafka_ref.network.network import Network
from kafka_ref.replica.replica_manager import OfflinePartition
from kafka_ref.server.kafka_broker import KafkaBroker

LOCAL = 0
OTHER = 1


class KRaftBroker:
    """A KRaft broker wired but not running, plus the image it has published so far."""

    def __init__(self, brokers: tuple[int, ...] = (0, 1, 2), broker_version: str | None = None) -> None:
        props = {"broker.id": LOCAL, "node.id": LOCAL}
        if broker_version is not None:
            props.update({"kafka_ref.broker.version": broker_version, "inter.broker.protocol.version": broker_version})
        config = KafkaConfig(props)
        self.broker = KafkaBroker(LOCAL, config, Network(), Disk(LOCAL), time=MockTime(), kraft_controller=3000)
        self.rm = self.broker.replica_manager
        assert isinstance(self.broker.metadata_cache, KRaftMetadataCache)
        self.image: MetadataImage = EMPTY_IMAGE
        self.offset = -1
        delta = self.delta()
        for b in brokers:
            delta.replay(RegisterBrokerRecord(broker_id=b, broker_epoch=b + 1,
                                              end_points=(BrokerEndpoint(host="localhost", port=9092 + b),)))
            delta.replay(BrokerRegistrationChangeRecord(broker_id=b, broker_epoch=b + 1, fenced=BrokerRegistrationFencingChange.UNFENCE))
        self.publish(delta)

    def delta(self) -> MetadataDelta:
        return MetadataDelta(self.image)

    def publish(self, delta: MetadataDelta):
        """What BrokerMetadataPublisher#publish does for topics: cache first, then applyDelta."""
        self.offset += max(delta.records_replayed, 1)
        self.image = delta.apply(MetadataProvenance(self.offset, 1, 0))
        self.broker.metadata_cache.set_image(self.image)
        if delta.topics_delta is None:
            return None
        return self.rm.apply_delta(delta.topics_delta, self.image)

    def apply(self, *metadata_records):
        delta = self.delta()
        for record in metadata_records:
            delta.replay(record)
        return self.publish(delta)


def create_topic(kb: KRaftBroker, leader: int, replicas=(0, 1, 2), isr=None, leader_epoch=0, partition_epoch=0):
    return kb.apply(
        TopicRecord(name=TOPIC, topic_id=TOPIC_ID),
        PartitionRecord(partition_id=0, topic_id=TOPIC_ID, replicas=tuple(replicas), isr=tuple(isr or replicas),
                        leader=leader, leader_epoch=leader_epoch, partition_epoch=partition_epoch),
    )


def change(**fields) -> PartitionChangeRecord:
    return PartitionChangeRecord(topic_id=TOPIC_ID, partition_id=0, **fields)


def fetch_state(kb: KRaftBroker):
    fetcher = kb.rm.replica_fetcher_manager.get_fetcher(TP0)
    return None if fetcher is None else (fetcher.leader.broker_end_point().id, fetcher.fetch_state(TP0))


# ------------------------------------------------------------------------------ leader <-> follower


def test_delta_new_topic_as_leader_and_as_follower():
    """Seed 004 §2.2 steps 3–6: a new partition led here becomes a local leader; followed here, a follower
    with a fetcher to the leader at the initial fetch offset."""
    kb = KRaftBroker()
    changes = create_topic(kb, leader=LOCAL)
    assert {str(tp) for tp in changes.leaders} == {"t-0"} and not changes.followers
    partition = kb.rm.online_partition(TP0)
    assert partition.is_leader and partition.get_leader_epoch() == 0 and sorted(partition.in_sync_replica_ids) == [0, 1, 2]
    assert partition.topic_id == TOPIC_ID and partition.controller_epoch == -1
    assert fetch_state(kb) is None
    kb2 = KRaftBroker()
    create_topic(kb2, leader=OTHER)
    leader_id, state = fetch_state(kb2)
    assert (leader_id, state.current_leader_epoch, state.fetch_offset, state.topic_id) == (OTHER, 0, 0, TOPIC_ID)
    assert kb2.rm.online_partition(TP0).leader_replica_id_opt == OTHER


def test_delta_from_leader_to_follower():
    """Mirrors ReplicaManagerTest#testDeltaFromLeaderToFollower: a new leader elsewhere (leader epoch + 1)
    turns the local leader into a follower fetching from it."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    kb.rm.append_records(1000, 1, False, "client", {TP0: records(3)}, Collector())
    changes = kb.apply(change(leader=OTHER, isr=(1, 2)))
    assert {str(tp) for tp in changes.followers} == {"t-0"} and not changes.leaders
    partition = kb.rm.online_partition(TP0)
    assert not partition.is_leader and partition.leader_replica_id_opt == OTHER
    assert (partition.get_leader_epoch(), partition.get_partition_epoch()) == (1, 1)
    leader_id, state = fetch_state(kb)
    # The log has epochs, so the follower starts at its log end (truncation on fetch).
    assert (leader_id, state.current_leader_epoch, state.fetch_offset) == (OTHER, 1, 3)


def test_delta_from_follower_to_leader():
    """Mirrors ReplicaManagerTest#testDeltaFromFollowerToLeader: the fetcher goes, the partition leads."""
    kb = KRaftBroker()
    create_topic(kb, leader=OTHER)
    assert fetch_state(kb) is not None
    changes = kb.apply(change(leader=LOCAL))
    assert {str(tp) for tp in changes.leaders} == {"t-0"}
    partition = kb.rm.online_partition(TP0)
    assert partition.is_leader and partition.get_leader_epoch() == 1
    assert fetch_state(kb) is None
    # Idle fetchers were shut down.
    assert kb.rm.replica_fetcher_manager.fetcher_thread_map == {}


def test_delta_follower_with_no_change_keeps_the_fetcher():
    """Mirrors ReplicaManagerTest#testDeltaFollowerWithNoChange and
    #testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath: an ISR change bumps only the partition
    epoch; the partition is re-applied as follower but its fetcher is not restarted. A leader epoch bump
    (same leader) restarts it."""
    kb = KRaftBroker()
    create_topic(kb, leader=OTHER)
    fetcher = kb.rm.replica_fetcher_manager.get_fetcher(TP0)
    before = fetcher.fetch_state(TP0)
    changes = kb.apply(change(isr=(1, 0)))
    assert {str(tp) for tp in changes.followers} == {"t-0"}
    assert kb.rm.online_partition(TP0).get_partition_epoch() == 1
    assert kb.rm.replica_fetcher_manager.get_fetcher(TP0) is fetcher
    assert fetcher.fetch_state(TP0) is before
    # Same leader, new leader epoch: the fetch state is replaced with the new epoch.
    kb.apply(change(leader=OTHER))
    after = kb.rm.replica_fetcher_manager.get_fetcher(TP0).fetch_state(TP0)
    assert after is not before and after.current_leader_epoch == 1
    # A delta that does not touch the partition at all leaves it out of the local changes.
    untouched = kb.apply(TopicRecord(name="other", topic_id=OTHER_ID),
                         PartitionRecord(partition_id=0, topic_id=OTHER_ID, replicas=(1, 2), isr=(1, 2), leader=1))
    assert untouched.followers == {} and untouched.leaders == {} and untouched.deletes == set()


OTHER_ID = TOPIC_ID.__class__(5, 5)


def test_delta_follower_stops_fetcher_before_creating_initial_fetch_offset():
    """Mirrors ReplicaManagerTest#testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset: the old
    fetcher is removed before the initial offset is computed and the new one added."""
    kb = KRaftBroker()
    create_topic(kb, leader=OTHER)
    calls = []
    manager = kb.rm.replica_fetcher_manager
    real_remove, real_add = manager.remove_fetcher_for_partitions, manager.add_fetcher_for_partitions

    def remove(partitions):
        calls.append(("remove", sorted(map(str, partitions))))
        return real_remove(partitions)

    def add(states):
        calls.append(("add", {str(tp): (s.leader.id, s.init_offset, s.current_leader_epoch) for tp, s in states.items()}))
        return real_add(states)

    manager.remove_fetcher_for_partitions, manager.add_fetcher_for_partitions = remove, add
    kb.apply(change(leader=2, isr=(2, 0)))
    assert calls == [("remove", ["t-0"]), ("add", {"t-0": (2, 0, 1)})]


@pytest.mark.parametrize("broker_version, leader, fetcher", [(None, OTHER, False), ("3.2", None, False)])
def test_follower_of_an_unregistered_leader(broker_version, leader, fetcher):
    """ReplicaManager#applyLocalFollowersDelta with no registration for the leader: from 3.3 the partition
    still becomes a follower of that leader (makeFollower always runs, KAFKA-13790) but no fetcher starts;
    3.0–3.2 only created the log (its HW is checkpointed, KAFKA-1647)."""
    kb = KRaftBroker(brokers=(0, 2), broker_version=broker_version)
    create_topic(kb, leader=OTHER)
    partition = kb.rm.online_partition(TP0)
    assert partition.log is not None and partition.leader_replica_id_opt == leader
    assert partition.get_leader_epoch() == (0 if leader is not None else -1)
    assert (fetch_state(kb) is not None) == fetcher


@pytest.mark.parametrize("broker_version, still_leads", [(None, False), ("3.2", True)])
def test_leader_steps_down_when_its_partition_loses_its_leader(broker_version, still_leads):
    """ReplicaManager#applyLocalFollowersDelta (KAFKA-13858, 3.3.0): a PartitionChangeRecord(leader=-1) makes
    the local leader a follower of no one at the next leader epoch, so an acks=1 write is refused with
    NOT_LEADER_OR_FOLLOWER; a 3.0–3.2 broker kept leading at its old epoch and took the write."""
    kb = KRaftBroker(broker_version=broker_version)
    create_topic(kb, leader=LOCAL, replicas=(0, 1), isr=(0,))
    changes = kb.apply(change(leader=-1, isr=(0,)))
    assert {str(tp) for tp in changes.followers} == {"t-0"}
    partition = kb.rm.online_partition(TP0)
    answer = rm_produce(kb.rm, records(1), acks=1).value[TP0]
    if still_leads:
        assert (partition.is_leader, partition.get_leader_epoch(), answer.error) == (True, 0, Errors.NONE)
    else:
        assert (partition.is_leader, partition.leader_replica_id_opt, partition.get_leader_epoch()) == (False, -1, 1)
        assert answer.error is Errors.NOT_LEADER_OR_FOLLOWER
        assert partition.log.log_end_offset == 0
    assert fetch_state(kb) is None


def test_replicas_are_stopped_while_in_controlled_shutdown_with_kraft():
    """Mirrors ReplicaManagerTest#testReplicasAreStoppedWhileInControlledShutdownWithKRaft (Kafka 3.3+):
    foo-0 follows in the ISR, foo-1 leads alone, foo-2 follows outside the ISR. In controlled shutdown the
    controller shrinks foo-0's ISR and sets foo-1's leader to -1: both become followers at leader epoch 1 and
    stop fetching (their logs stay); foo-2, untouched by the delta, keeps its epoch and its fetcher."""
    kb = KRaftBroker()
    foo = [TopicPartition("foo", p) for p in range(3)]
    kb.apply(TopicRecord(name="foo", topic_id=OTHER_ID),
             PartitionRecord(partition_id=0, topic_id=OTHER_ID, replicas=(0, 1), isr=(0, 1), leader=1),
             PartitionRecord(partition_id=1, topic_id=OTHER_ID, replicas=(0, 1), isr=(0,), leader=0),
             PartitionRecord(partition_id=2, topic_id=OTHER_ID, replicas=(0, 1), isr=(1,), leader=1))
    parts = [kb.rm.online_partition(tp) for tp in foo]
    assert [(p.is_leader, p.get_leader_epoch(), p.get_partition_epoch()) for p in parts] == [
        (False, 0, 0), (True, 0, 0), (False, 0, 0)]
    manager = kb.rm.replica_fetcher_manager
    assert manager.get_fetcher(foo[0]) is not None and manager.get_fetcher(foo[2]) is not None
    kb.rm.is_shutting_down = True  # the broker is SHUTTING_DOWN too: no effect in KRaft mode from 3.4
    kb.rm.begin_controlled_shutdown()
    kb.apply(PartitionChangeRecord(topic_id=OTHER_ID, partition_id=0, isr=(1,), leader=1),
             PartitionChangeRecord(topic_id=OTHER_ID, partition_id=1, isr=(0,), leader=-1))
    assert [(p.is_leader, p.get_leader_epoch(), p.get_partition_epoch()) for p in parts] == [
        (False, 1, 1), (False, 1, 1), (False, 0, 0)]
    assert [kb.rm.online_partition(tp) is p for tp, p in zip(foo, parts)] == [True, True, True]
    assert (manager.get_fetcher(foo[0]), manager.get_fetcher(foo[1])) == (None, None)
    assert manager.get_fetcher(foo[2]) is not None
    assert all(kb.broker.log_manager.get_log(tp) is not None for tp in foo)


# ------------------------------------------------------------------------------ removal and deletion


def test_delta_follower_to_not_replica():
    """Mirrors ReplicaManagerTest#testDeltaFollowerToNotReplica: removed from the replica set → stopped and deleted."""
    kb = KRaftBroker()
    create_topic(kb, leader=OTHER)
    changes = kb.apply(change(replicas=(1, 2), isr=(1, 2)))
    assert {str(tp) for tp in changes.deletes} == {"t-0"}
    assert kb.rm.get_partition(TP0) is None
    assert kb.broker.log_manager.get_log(TP0) is None
    assert fetch_state(kb) is None


def test_delta_follower_removed_topic():
    """Mirrors ReplicaManagerTest#testDeltaFollowerRemovedTopic."""
    kb = KRaftBroker()
    create_topic(kb, leader=OTHER)
    changes = kb.apply(RemoveTopicRecord(topic_id=TOPIC_ID))
    assert {str(tp) for tp in changes.deletes} == {"t-0"}
    assert kb.rm.get_partition(TP0) is None and kb.broker.log_manager.get_log(TP0) is None
    assert not kb.broker.metadata_cache.contains(TP0)


def test_delta_leader_to_not_replica():
    """Mirrors ReplicaManagerTest#testDeltaLeaderToNotReplica: a waiting acks=all produce completes on removal."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    waiting = Collector()
    kb.rm.append_records(30000, -1, False, "client", {TP0: records(1)}, waiting)
    assert not waiting.done
    changes = kb.apply(change(leader=OTHER, replicas=(1, 2), isr=(1, 2)))
    assert {str(tp) for tp in changes.deletes} == {"t-0"}
    assert kb.rm.get_partition(TP0) is None and kb.broker.log_manager.get_log(TP0) is None
    assert waiting.value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_delta_leader_to_removed_topic():
    """Mirrors ReplicaManagerTest#testDeltaLeaderToRemovedTopic."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    changes = kb.apply(RemoveTopicRecord(topic_id=TOPIC_ID))
    assert {str(tp) for tp in changes.deletes} == {"t-0"} and changes.leaders == {}
    assert kb.rm.get_partition(TP0) is None and kb.broker.log_manager.get_log(TP0) is None


def test_deleted_topic_recreated_with_same_name_in_one_delta():
    """ReplicaManager#applyDelta deletes first, because a new topic may reuse the deleted partitions' names."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    kb.rm.append_records(1000, 1, False, "client", {TP0: records(2)}, Collector())
    old_log = kb.rm.online_partition(TP0).log
    new_id = TOPIC_ID.__class__(9, 9)
    changes = kb.apply(
        RemoveTopicRecord(topic_id=TOPIC_ID), TopicRecord(name=TOPIC, topic_id=new_id),
        PartitionRecord(partition_id=0, topic_id=new_id, replicas=(0, 1), isr=(0, 1), leader=LOCAL))
    assert {str(tp) for tp in changes.deletes} == {"t-0"} and {str(tp) for tp in changes.leaders} == {"t-0"}
    partition = kb.rm.online_partition(TP0)
    assert partition.topic_id == new_id and partition.log is not old_log and partition.log.log_end_offset == 0


# ------------------------------------------------------------------------------ delayed operations


def test_delta_to_follower_completes_produce():
    """Mirrors ReplicaManagerTest#testDeltaToFollowerCompletesProduce: leader → follower answers a parked
    acks=all produce with NOT_LEADER_OR_FOLLOWER instead of letting it time out."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    waiting = Collector()
    kb.rm.append_records(30000, -1, False, "client", {TP0: records(1)}, waiting)
    assert not waiting.done and kb.rm.delayed_produce_purgatory.num_delayed() == 1
    kb.apply(change(leader=OTHER, isr=(1, 2)))
    assert waiting.value[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER
    assert kb.rm.delayed_produce_purgatory.num_delayed() == 0


def test_delta_to_follower_completes_fetch():
    """Mirrors ReplicaManagerTest#testDeltaToFollowerCompletesFetch: a consumer fetch parked on the leader
    completes when the partition becomes a follower."""
    kb = KRaftBroker()
    create_topic(kb, leader=LOCAL)
    waiting = Collector()
    kb.rm.fetch_messages(consumer_params(max_wait_ms=1000, min_bytes=100000), [(TP0, fetch_partition(0))], waiting, None)
    assert not waiting.done
    kb.apply(change(leader=OTHER, isr=(1, 2)))
    assert dict(waiting.value)[TP0].error is Errors.NOT_LEADER_OR_FOLLOWER


def test_delta_marks_partition_offline_if_log_cannot_be_created():
    """Mirrors ReplicaManagerTest#testDeltaToLeaderOrFollowerMarksPartitionOfflineIfLogCantBeCreated."""
    kb = KRaftBroker()
    kb.broker.disk.mark_offline("disk failure")
    create_topic(kb, leader=LOCAL)
    assert isinstance(kb.rm.get_partition(TP0), OfflinePartition)
    # Later deltas skip it (getOrCreatePartition answers None for an offline partition).
    kb.apply(change(leader=OTHER))
    assert isinstance(kb.rm.get_partition(TP0), OfflinePartition)
    assert fetch_state(kb) is None
