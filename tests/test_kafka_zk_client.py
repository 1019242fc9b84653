"""KafkaZkClient over the in-memory ZooKeeper: elections, broker epochs, fenced writes, formats.

Mirrors parts of kafka.zk.KafkaZkClientTest and kafka.zookeeper.ZooKeeperClientTest (named per
test). JSON payloads are asserted byte for byte in Kafka's key order.
"""

from __future__ import annotations

import anyio
import pytest
import trio.testing

from kafka_ref.common.time import EPOCH_ORIGIN_MS, MockTime
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.zk import (
    BrokerInfo, ControllerMovedException, KafkaZkClient, LeaderAndIsr, LeaderIsrAndControllerEpoch,
    LeaderRecoveryState, NodeExistsException, NoNodeException, ReplicaAssignment, StateChangeHandler,
    ZNodeChangeHandler, ZNodeChildChangeHandler, ZooKeeper,
)
from kafka_ref.zk.zk_data import ConfigType, scala_mutable_hash_map_order
from kafka_ref.zk.zookeeper import Code

TOPIC_ID = Uuid.from_string("zWE-MNjxSt-Rt1hKImWx9Q")
T0 = TopicPartition("foo", 0)
T1 = TopicPartition("foo", 1)


@pytest.fixture
def anyio_backend():
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def zk(time: MockTime) -> ZooKeeper:
    return ZooKeeper(time)


@pytest.fixture
def client(zk: ZooKeeper) -> KafkaZkClient:
    c = KafkaZkClient(zk)
    c.create_top_level_paths()
    return c


def state(leader: int, epoch: int, isr: list[int], controller_epoch: int = 1, partition_epoch: int = 0):
    return LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, epoch, tuple(isr), 0, partition_epoch), controller_epoch)


# ---- controller election ------------------------------------------------------------------

def test_controller_election_first_wins_second_gets_controller_moved(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testControllerManagementMethods (election and epoch)."""
    other = KafkaZkClient(zk)
    assert client.register_controller_and_increment_controller_epoch(1) == (1, 1)
    with pytest.raises(ControllerMovedException, match="Controller moved to broker 1"):
        other.register_controller_and_increment_controller_epoch(2)
    assert zk.get_data("/controller")[0] == b'{"version":1,"brokerid":1,"timestamp":"1704067200000"}'
    assert zk.exists("/controller").ephemeral_owner == client.session_id
    data, stat = zk.get_data("/controller_epoch")
    assert (data, stat.version) == (b"1", 1)
    assert client.get_controller_id() == 1
    assert client.get_controller_epoch()[0] == 1


def test_controller_race_lost_between_read_and_write(zk: ZooKeeper, client: KafkaZkClient,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The loser read epoch 0 / zkVersion 0, then the winner committed: the loser's multi fails
    on /controller (NodeExists) and nothing of it is applied."""
    loser = KafkaZkClient(zk)
    client.register_controller_and_increment_controller_epoch(1)
    client.delete_controller(expected_controller_epoch_zk_version=1)  # broker 1 resigns
    read = loser.get_controller_epoch
    interleaved: list = []

    def read_then_lose():
        result = read()
        if not interleaved:
            interleaved.append(client.register_controller_and_increment_controller_epoch(1))
        return result

    monkeypatch.setattr(loser, "get_controller_epoch", read_then_lose)
    with pytest.raises(ControllerMovedException):
        loser.register_controller_and_increment_controller_epoch(2)
    assert interleaved == [(2, 2)]
    assert client.get_controller_id() == 1 and zk.get_data("/controller_epoch")[0] == b"2"


def test_controller_race_with_bumped_epoch_and_no_controller(zk: ZooKeeper, client: KafkaZkClient,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The winner bumped the epoch and died before the loser wrote: the loser's create of
    /controller succeeds but its epoch write is BadVersion, so the multi rolls back and the
    loser is told the controller went away."""
    loser = KafkaZkClient(zk)
    client.make_sure_persistent_path_exists("/controller_epoch")
    zk.set_data("/controller_epoch", b"0")
    read = loser.get_controller_epoch

    def read_then_lose():
        result = read()
        if zk.exists("/controller") is None and zk.get_data("/controller_epoch")[0] == b"0":
            client.register_controller_and_increment_controller_epoch(1)
            zk.expire_session(client.session_id)
        return result

    monkeypatch.setattr(loser, "get_controller_epoch", read_then_lose)
    with pytest.raises(ControllerMovedException, match="went away"):
        loser.register_controller_and_increment_controller_epoch(2)
    assert zk.exists("/controller") is None
    assert zk.get_data("/controller_epoch")[0] == b"1"


def test_re_election_after_controller_session_expires(zk: ZooKeeper, client: KafkaZkClient) -> None:
    other = KafkaZkClient(zk)
    assert client.register_controller_and_increment_controller_epoch(1) == (1, 1)
    zk.expire_session(client.session_id)
    assert other.get_controller_id() is None
    assert other.register_controller_and_increment_controller_epoch(2) == (2, 2)


# ---- brokers --------------------------------------------------------------------------------

def test_broker_epoch_is_the_czxid_of_the_registration(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testRegisterBrokerInfo."""
    other = KafkaZkClient(zk)
    epoch1 = client.register_broker(BrokerInfo(1, "host1", 9092))
    epoch2 = other.register_broker(BrokerInfo(2, "host2", 9093, rack="r2"))
    stat1, stat2 = zk.exists("/brokers/ids/1"), zk.exists("/brokers/ids/2")
    assert (epoch1, epoch2) == (stat1.czxid, stat2.czxid)
    assert epoch1 < epoch2
    assert stat1.version == 1  # created empty, then its data set at version 0, in one multi
    assert stat1.ephemeral_owner == client.session_id
    assert client.register_broker(BrokerInfo(1, "host1", 9092)) == epoch1  # same session: same node
    with pytest.raises(NodeExistsException):
        other.register_broker(BrokerInfo(1, "host1", 9092))
    assert client.get_sorted_broker_list() == [1, 2]
    assert client.get_all_broker_and_epochs_in_cluster() == {
        BrokerInfo(1, "host1", 9092): epoch1, BrokerInfo(2, "host2", 9093, rack="r2"): epoch2}
    assert client.get_all_brokers_in_cluster() == [BrokerInfo(1, "host1", 9092), BrokerInfo(2, "host2", 9093, rack="r2")]
    assert client.get_broker(3) is None
    zk.expire_session(other.session_id)
    assert client.get_sorted_broker_list() == [1]


def test_broker_registration_json_is_kafkas(zk: ZooKeeper, client: KafkaZkClient, time: MockTime) -> None:
    time.advance(42)
    client.register_broker(BrokerInfo(1, "localhost", 9092))
    client.register_broker(BrokerInfo(2, "localhost", 9093, rack="rack-a"))
    assert zk.get_data("/brokers/ids/1")[0] == (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://localhost:9092"],"jmx_port":-1,"port":9092,"host":"localhost",'
        b'"version":5,"timestamp":"1704067200042"}')
    assert zk.get_data("/brokers/ids/2")[0] == (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://localhost:9093"],"rack":"rack-a","jmx_port":-1,"port":9093,'
        b'"host":"localhost","version":5,"timestamp":"1704067200042"}')


def test_broker_sequence_id(client: KafkaZkClient, zk: ZooKeeper) -> None:
    """Mirrors KafkaZkClientTest#testBrokerSequenceIdMethods."""
    zk.delete("/brokers/seqid")
    assert [client.generate_broker_sequence_id() for _ in range(3)] == [1, 2, 3]


# ---- topics and partition states ----------------------------------------------------------

def test_topic_assignment_json_and_reads(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testTopicAssignmentMethods."""
    client.create_topic_assignment("foo", TOPIC_ID, {T0: [1, 2], T1: [2, 1]})
    assert zk.get_data("/brokers/topics/foo")[0] == (
        b'{"partitions":{"0":[1,2],"1":[2,1]},"topic_id":"zWE-MNjxSt-Rt1hKImWx9Q",'
        b'"adding_replicas":{},"removing_replicas":{},"version":3}')
    with pytest.raises(NodeExistsException):
        client.create_topic_assignment("foo", TOPIC_ID, {T0: [1]})
    client.create_topic_assignment("bar", None, {TopicPartition("bar", 0): [3]})
    assert zk.get_data("/brokers/topics/bar")[0] == (
        b'{"partitions":{"0":[3]},"adding_replicas":{},"removing_replicas":{},"version":3}')
    assert client.get_all_topics() == {"foo", "bar"}
    assert client.get_topic_id("foo") == TOPIC_ID and client.get_topic_id("bar") is None
    assert client.get_replica_assignment_for_topics(["foo", "missing"]) == {T0: (1, 2), T1: (2, 1)}
    assert client.get_partitions_for_topics(["foo"]) == {"foo": [0, 1]}
    assert client.topic_exists("foo") and not client.topic_exists("missing")

    client.set_topic_assignment("foo", TOPIC_ID, {T0: ReplicaAssignment((1, 2, 3), (3,), (1,)),
                                                  T1: ReplicaAssignment((2, 1))})
    assert zk.get_data("/brokers/topics/foo")[0] == (
        b'{"partitions":{"0":[1,2,3],"1":[2,1]},"topic_id":"zWE-MNjxSt-Rt1hKImWx9Q",'
        b'"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]},"version":3}')
    assert client.get_full_replica_assignment_for_topics(["foo"])[T0] == ReplicaAssignment((1, 2, 3), (3,), (1,))


def test_partition_keys_follow_scala_hash_map_order(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """With 12 partitions Kafka's mutable.HashMap has grown to 32 buckets: "11" comes first."""
    client.create_topic_assignment("many", None, {TopicPartition("many", p): [p] for p in range(12)})
    data = zk.get_data("/brokers/topics/many")[0]
    assert data.startswith(b'{"partitions":{"11":[11],"0":[0],"1":[1],"2":[2],"3":[3],"4":[4],"5":[5],'
                           b'"6":[6],"7":[7],"8":[8],"9":[9],"10":[10]},')
    assert scala_mutable_hash_map_order(["version", "partitions", "adding_replicas", "removing_replicas",
                                         "topic_id"], initial_capacity=6) == [
        "partitions", "topic_id", "adding_replicas", "removing_replicas", "version"]


def test_partition_state_json_and_decode(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testGetTopicPartitionStates."""
    missing_topic = client.create_topic_partition_states({TopicPartition("nope", 0): state(1, 0, [1])})
    assert missing_topic[TopicPartition("nope", 0)].result_code == Code.NONODE  # topic znode first
    client.create_topic_assignment("foo", TOPIC_ID, {T0: [1, 2], T1: [2, 1]})
    responses = client.create_topic_partition_states({T0: state(1, 0, [1, 2]), T1: LeaderIsrAndControllerEpoch(
        LeaderAndIsr(2, 5, (2,), LeaderRecoveryState.RECOVERING, 0), 3)})
    assert {tp: r.result_code for tp, r in responses.items()} == {T0: Code.OK, T1: Code.OK}
    assert zk.get_data("/brokers/topics/foo/partitions/0/state")[0] == \
        b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'
    assert zk.get_data("/brokers/topics/foo/partitions/1/state")[0] == \
        b'{"controller_epoch":3,"leader":2,"version":1,"leader_recovery_state":1,"leader_epoch":5,"isr":[2]}'
    assert client.get_topic_partition_states([T0, T1, TopicPartition("foo", 9)]) == {
        T0: state(1, 0, [1, 2]),
        T1: LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 5, (2,), LeaderRecoveryState.RECOVERING, 0), 3)}
    again = client.create_topic_partition_states({T0: state(1, 0, [1, 2])})
    assert again[T0].result_code == Code.NODEEXISTS
    assert client.get_all_partitions() == {T0, T1}
    assert client.get_leader_for_partition(T1) == 2


def test_update_leader_and_isr_stale_partition_epoch_goes_to_retry(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testUpdateLeaderAndIsr: a conditional write per partition,
    fenced by the controller epoch's zkVersion."""
    _epoch, epoch_zk_version = client.register_controller_and_increment_controller_epoch(1)
    client.create_topic_assignment("foo", TOPIC_ID, {T0: [1, 2], T1: [2, 1]})
    client.create_topic_partition_states({T0: state(1, 0, [1, 2]), T1: state(2, 0, [2, 1])}, epoch_zk_version)
    zk.set_data("/brokers/topics/foo/partitions/1/state", zk.get_data("/brokers/topics/foo/partitions/1/state")[0])
    current = client.get_topic_partition_states([T0, T1])
    stale_t1 = LeaderAndIsr(2, 1, (2,), 0, partition_epoch=0)  # read before the write above
    result = client.update_leader_and_isr(
        {T0: current[T0].leader_and_isr.new_leader_and_isr(2, [2]), T1: stale_t1,
         TopicPartition("foo", 7): LeaderAndIsr.initial(1, [1])}, 1, epoch_zk_version)
    assert result.partitions_to_retry == [T1]
    assert result.finished_partitions[T0] == LeaderAndIsr(2, 1, (2,), 0, partition_epoch=1)
    assert isinstance(result.finished_partitions[TopicPartition("foo", 7)], NoNodeException)
    assert client.get_topic_partition_state(T0) == LeaderIsrAndControllerEpoch(LeaderAndIsr(2, 1, (2,), 0, 1), 1)
    assert zk.exists("/brokers/topics/foo/partitions/1/state").version == 1

    retried = client.update_leader_and_isr({T1: stale_t1.with_partition_epoch(1)}, 1, epoch_zk_version)
    assert retried.finished_partitions == {T1: LeaderAndIsr(2, 1, (2,), 0, partition_epoch=2)}
    with pytest.raises(ControllerMovedException, match="Expected zkVersion = 0"):
        client.update_leader_and_isr({T0: LeaderAndIsr(2, 2, (2,), 0, 1)}, 1, epoch_zk_version - 1)
    assert client.get_topic_partition_state(T0).leader_and_isr.leader_epoch == 1


def test_leader_and_isr_helpers() -> None:
    lai = LeaderAndIsr.initial(1, [1, 2, 3])
    assert lai == LeaderAndIsr(1, 0, (1, 2, 3), 0, 0)
    assert (LeaderAndIsr.NO_LEADER, LeaderAndIsr.NO_EPOCH, LeaderAndIsr.EPOCH_DURING_DELETE,
            LeaderAndIsr.INITIAL_LEADER_EPOCH, LeaderAndIsr.INITIAL_PARTITION_EPOCH) == (-1, -1, -2, 0, 0)
    assert (LeaderAndIsr.NoLeader, LeaderAndIsr.NoEpoch, LeaderAndIsr.EpochDuringDelete,
            LeaderAndIsr.InitialLeaderEpoch, LeaderAndIsr.InitialPartitionEpoch) == (-1, -1, -2, 0, 0)
    assert lai.new_leader(2) == LeaderAndIsr(2, 1, (1, 2, 3), 0, 0)
    assert lai.new_epoch() == LeaderAndIsr(1, 1, (1, 2, 3), 0, 0)
    assert lai.new_leader_and_isr(3, [3]) == LeaderAndIsr(3, 1, (3,), 0, 0)
    recovering = lai.new_recovering_leader_and_isr(3, [3])
    assert recovering.leader_recovery_state == LeaderRecoveryState.RECOVERING and recovering.leader_epoch == 1
    assert recovering.new_recovery_state(LeaderRecoveryState.RECOVERED) == LeaderAndIsr(3, 1, (3,), 0, 0)
    assert LeaderAndIsr.during_delete([1]).leader == -2
    assert LeaderAndIsr(-1, 0, ()).leader_opt() is None
    assert lai.equals_allow_stale_partition_epoch(lai.with_partition_epoch(4))
    assert not lai.with_partition_epoch(4).equals_allow_stale_partition_epoch(lai)


# ---- admin znodes and notifications -------------------------------------------------------

def test_admin_and_notification_znodes(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors KafkaZkClientTest#testDeleteTopicPathMethods, #testPropagateIsrChanges and
    #testEntityConfigManagementMethods."""
    _epoch, v = client.register_controller_and_increment_controller_epoch(1)
    client.create_delete_topic_path("foo")
    assert client.is_topic_marked_for_deletion("foo") and client.get_topic_deletions() == ["foo"]
    client.delete_topic_deletions(["foo"], v)
    assert client.get_topic_deletions() == []

    assert client.propagate_isr_changes([T0]) == "/isr_change_notification/isr_change_0000000000"
    assert client.propagate_isr_changes([T1]) == "/isr_change_notification/isr_change_0000000001"
    assert zk.get_data("/isr_change_notification/isr_change_0000000000")[0] == \
        b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert client.get_all_isr_change_notifications() == ["0000000000", "0000000001"]
    assert client.get_partitions_from_isr_change_notifications(["0000000000", "0000000001"]) == [T0, T1]
    client.delete_isr_change_notifications(["0000000000", "0000000001"], v)
    assert client.get_all_isr_change_notifications() == []

    client.create_partition_reassignment({T0: [3, 1]})
    assert zk.get_data("/admin/reassign_partitions")[0] == \
        b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[3,1]}]}'
    assert client.reassign_partitions_in_progress() and client.get_partition_reassignment() == {T0: (3, 1)}
    client.delete_partition_reassignment(v)
    assert not client.reassign_partitions_in_progress()

    client.create_preferred_replica_election([T0])
    assert zk.get_data("/admin/preferred_replica_election")[0] == \
        b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert client.get_preferred_replica_election() == {T0}
    client.delete_preferred_replica_election(v)
    assert client.get_preferred_replica_election() == set()

    client.set_or_create_entity_configs(ConfigType.TOPIC, "foo", {"retention.ms": "1000", "cleanup.policy": "compact"})
    assert zk.get_data("/config/topics/foo")[0] == \
        b'{"version":1,"config":{"cleanup.policy":"compact","retention.ms":"1000"}}'
    client.set_or_create_entity_configs(ConfigType.TOPIC, "foo", {"retention.ms": "5"})
    assert client.get_entity_configs(ConfigType.TOPIC, "foo") == {"retention.ms": "5"}
    assert client.get_entity_configs(ConfigType.TOPIC, "absent") == {}
    client.create_config_change_notification("topics/foo")
    assert zk.get_data("/config/changes/config_change_0000000000")[0] == b'{"version":2,"entity_path":"topics/foo"}'
    assert client.create_or_get_cluster_id("abc") == "abc" and client.create_or_get_cluster_id("xyz") == "abc"
    assert zk.get_data("/cluster/id")[0] == b'{"version":"1","id":"abc"}'


def test_fenced_write_needs_non_negative_version(client: KafkaZkClient) -> None:
    with pytest.raises(ValueError):
        client.delete_topic_deletions(["foo"], -5)


# ---- watch handlers and session re-initialisation ----------------------------------------

class ChildHandler(ZNodeChildChangeHandler):
    def __init__(self, path: str, log: list) -> None:
        self.path = path
        self.log = log

    def handle_child_change(self) -> None:
        self.log.append(("child_change", self.path))


class NodeHandler(ZNodeChangeHandler):
    def __init__(self, path: str, log: list) -> None:
        self.path = path
        self.log = log

    def handle_creation(self) -> None:
        self.log.append(("creation", self.path))

    def handle_deletion(self) -> None:
        self.log.append(("deletion", self.path))

    def handle_data_change(self) -> None:
        self.log.append(("data_change", self.path))


@pytest.mark.parametrize("rearm", [True, False])
def test_child_change_handler_fires_per_change(zk: ZooKeeper, rearm: bool) -> None:
    """Mirrors ZooKeeperClientTest#testZNodeChildChangeHandlerForChildChange; with re-arming
    the handler sees every later change, without it only the first (one-shot watch)."""
    controller = KafkaZkClient(zk, rearm_watches=rearm)
    controller.create_top_level_paths()
    log: list = []
    controller.register_znode_child_change_handler(ChildHandler("/brokers/ids", log))
    assert controller.get_sorted_broker_list() == []  # arms the child watch
    KafkaZkClient(zk).register_broker(BrokerInfo(1, "h", 1))
    controller.process_pending_events()
    KafkaZkClient(zk).register_broker(BrokerInfo(2, "h", 2))
    controller.process_pending_events()
    assert log == [("child_change", "/brokers/ids")] * (2 if rearm else 1)


def test_znode_change_handler_and_check_existence(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors ZooKeeperClientTest#testZNodeChangeHandlerForCreation / ForDeletion / ForDataChange."""
    log: list = []
    assert client.register_znode_change_handler_and_check_existence(NodeHandler("/controller", log)) is False
    other = KafkaZkClient(zk)
    other.register_controller_and_increment_controller_epoch(7)
    client.process_pending_events()
    zk.set_data("/controller", b'{"version":1,"brokerid":8,"timestamp":"0"}')
    client.process_pending_events()
    zk.expire_session(other.session_id)
    client.process_pending_events()
    assert log == [("creation", "/controller"), ("data_change", "/controller"), ("deletion", "/controller")]
    client.unregister_znode_change_handler("/controller")
    other2 = KafkaZkClient(zk)
    other2.register_controller_and_increment_controller_epoch(9)
    client.process_pending_events()
    assert len(log) == 3


def test_state_change_handler_around_session_expiry(zk: ZooKeeper, client: KafkaZkClient) -> None:
    """Mirrors ZooKeeperClientTest#testSessionExpiry: before/after handlers, a new session,
    ephemerals of the old session gone, registrations redone in after_initializing_session."""
    log: list = []

    class Handler(StateChangeHandler):
        name = "controller-state-change-handler"

        def before_initializing_session(self) -> None:
            log.append(("before", client.zoo_keeper_client.session.state))

        def after_initializing_session(self) -> None:
            log.append(("after", client.session_id))
            client.register_broker(BrokerInfo(1, "h", 1))

    client.register_state_change_handler(Handler())
    old_epoch = client.register_broker(BrokerInfo(1, "h", 1))
    old_session = client.session_id
    zk.expire_session(old_session)
    assert zk.exists("/brokers/ids/1") is None
    client.process_pending_events()
    new_session = client.session_id
    assert new_session != old_session
    assert log[0][0] == "before" and log[1] == ("after", new_session)
    stat = zk.exists("/brokers/ids/1")
    assert stat.ephemeral_owner == new_session and stat.czxid > old_epoch


# ---- async: a crashed broker disappears after the session timeout ------------------------

@pytest.mark.anyio
async def test_crashed_broker_is_noticed_after_session_timeout() -> None:
    """The controller's broker-change handler fires 18 s (zookeeper.session.timeout.ms) after the
    broker's last heartbeat, in virtual time."""
    zk = ZooKeeper()
    seen: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(zk.run)
        controller = KafkaZkClient(zk)
        controller.create_top_level_paths()
        tg.start_soon(controller.run)
        broker = KafkaZkClient(zk)
        broker_epoch = broker.register_broker(BrokerInfo(1, "h", 9092))

        class BrokerChange(ZNodeChildChangeHandler):
            path = "/brokers/ids"

            def handle_child_change(self) -> None:
                seen.append((anyio.current_time(), controller.get_sorted_broker_list()))

        controller.register_znode_child_change_handler(BrokerChange())
        assert controller.get_all_broker_and_epochs_in_cluster() == {BrokerInfo(1, "h", 9092): broker_epoch}
        with anyio.move_on_after(20):  # the broker runs for 20 s, then crashes
            await broker.run()
        assert seen == []
        await anyio.sleep(60)
        assert seen == [(36.0, [])]  # last ping at 18 s (every 6 s) + 18 s timeout
        assert controller.zoo_keeper_client.session.is_alive
        tg.cancel_scope.cancel()
    assert EPOCH_ORIGIN_MS == zk.time.origin_ms
