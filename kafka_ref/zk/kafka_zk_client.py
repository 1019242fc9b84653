"""Kafka's typed operations on its znodes.

Mirrors kafka.zk.KafkaZkClient of Kafka 3.x (ZooKeeper mode): controller election, broker
registration, topic assignments, partition states and admin notifications, written the way
Kafka writes them. That includes the controller-epoch fencing: a write made "with an expected
controller epoch zkVersion" travels as a multi of CheckOp(/controller_epoch) + the write, and a
failed check raises ControllerMovedException, so a deposed controller cannot overwrite state.

It sits on ``ZooKeeperClient`` (kafka.zookeeper), whose responses carry ZooKeeper's result
codes, so the methods below match on codes like Kafka's do. There is no connection loss in one
process, so Kafka's "retry until connected" loops reduce to one round.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import Uuid
from kafka_ref.zk.zk_data import (  # noqa: F401  (LeaderAndIsr & co. are re-exported for the controller)
    PERSISTENT_ZK_PATHS, BrokerIdsZNode, BrokerIdZNode, BrokerInfo, BrokerSequenceIdZNode,
    ClusterIdZNode, ConfigEntityChangeNotificationSequenceZNode, ConfigEntityChangeNotificationZNode,
    ConfigEntityTypeZNode, ConfigEntityZNode, ConfigType, ControllerEpochZNode, ControllerZNode,
    DeleteTopicsTopicZNode, DeleteTopicsZNode, IsrChangeNotificationSequenceZNode,
    IsrChangeNotificationZNode, LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState,
    PreferredReplicaElectionZNode, ReassignPartitionsZNode, ReplicaAssignment, TopicIdReplicaAssignment,
    TopicPartitionsZNode, TopicPartitionStateZNode, TopicPartitionZNode, TopicsZNode, TopicZNode, ZkVersion,
)
from kafka_ref.zk.zookeeper import (
    CheckOp, Code, ControllerMovedException, CreateOp, CreateResult, DeleteOp, ErrorResult,
    KeeperException, NodeExistsException, Op, SetDataOp, SetDataResult, Stat, ZooKeeper,
)
from kafka_ref.zk.zookeeper_client import (  # noqa: F401  (handlers re-exported)
    AsyncRequest, CreateRequest, DeleteRequest, ExistsRequest, GetChildrenRequest, GetDataRequest,
    MultiRequest, SetDataRequest, StateChangeHandler, ZkResponse, ZNodeChangeHandler,
    ZNodeChildChangeHandler, ZooKeeperClient,
)

# Mirrors kafka.controller.KafkaController$ constants.
INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0
CONTROLLER_STATE_CHANGE_HANDLER = "controller-state-change-handler"  # StateChangeHandlers.ControllerHandler


@dataclass(frozen=True)
class UpdateLeaderAndIsrResult:
    """Mirrors kafka.zk.KafkaZkClient.UpdateLeaderAndIsrResult.

    ``finished_partitions`` maps each partition to its written LeaderAndIsr (with the new
    partition epoch) or to the exception that failed it; ``partitions_to_retry`` lists those
    whose write met a BadVersion (someone else wrote the znode since it was read).
    """

    finished_partitions: dict[TopicPartition, LeaderAndIsr | Exception]
    partitions_to_retry: list[TopicPartition]


class KafkaZkClient:
    """Mirrors kafka.zk.KafkaZkClient: Kafka's typed operations on its znodes.

    One ZooKeeperClient (one session at a time) underneath. ``time`` stamps the controller and
    broker registrations (default: the ZooKeeper's clock). Topic ids come from the caller.
    """

    def __init__(self, zookeeper: ZooKeeper, session_timeout_ms: int = 18_000,
                 time: Time | None = None, name: str = "", rearm_watches: bool = True) -> None:
        self.time = time if time is not None else zookeeper.time
        self.zoo_keeper_client = ZooKeeperClient(zookeeper, session_timeout_ms, name, rearm_watches)

    @property
    def session_id(self) -> int:
        """The current ZooKeeper session id (the owner of this client's ephemeral znodes)."""
        return self.zoo_keeper_client.session_id

    async def run(self) -> None:
        """Run the session machinery (heartbeats, watch delivery, re-initialisation)."""
        await self.zoo_keeper_client.run()

    def process_pending_events(self) -> int:
        """Deliver queued watch events synchronously (tests and REPL use, no event loop)."""
        return self.zoo_keeper_client.process_pending_events()

    def close(self) -> None:
        """Mirrors kafka.zk.KafkaZkClient#close."""
        self.zoo_keeper_client.close()

    # ---- controller election ---------------------------------------------------------
    def register_controller_and_increment_controller_epoch(self, controller_id: int) -> tuple[int, int]:
        """Mirrors kafka.zk.KafkaZkClient#registerControllerAndIncrementControllerEpoch.

        Returns (new controller epoch, its zkVersion). Raises ControllerMovedException when
        another broker got there first.
        """
        timestamp = self.time.milliseconds()
        # 1. read the current epoch and its zkVersion, creating /controller_epoch if missing
        current = self.get_controller_epoch()
        if current is not None:
            cur_epoch, cur_epoch_zk_version = current[0], current[1].version
        else:
            cur_epoch, cur_epoch_zk_version = self._maybe_create_controller_epoch_znode()
        # 2. atomically: create the ephemeral /controller and bump the epoch, conditional on
        #    the epoch znode still having the version just read
        new_controller_epoch = cur_epoch + 1
        response = self._retry_request_until_connected(MultiRequest((
            CreateOp(ControllerZNode.path(), ControllerZNode.encode(controller_id, timestamp), ephemeral=True),
            SetDataOp(ControllerEpochZNode.path(), ControllerEpochZNode.encode(new_controller_epoch),
                      cur_epoch_zk_version),
        )))
        if response.result_code == Code.OK:
            set_data_result = response.zk_op_results[1][1]
            assert isinstance(set_data_result, SetDataResult)
            return new_controller_epoch, set_data_result.stat.version
        # 3. on a lost race, check whether the winner was this broker after all
        if response.result_code in (Code.NODEEXISTS, Code.BADVERSION):
            return self._check_controller_and_epoch(controller_id, new_controller_epoch)
        raise KeeperException.create(response.result_code)

    def _check_controller_and_epoch(self, controller_id: int, new_controller_epoch: int) -> tuple[int, int]:
        # 1. the controller znode must exist and name this broker
        cur_controller_id = self.get_controller_id()
        if cur_controller_id is None:
            raise ControllerMovedException(
                f"The ephemeral node at {ControllerZNode.path()} went away while checking whether the "
                "controller election succeeds. Aborting controller startup procedure")
        # 2. and the epoch must be the one this broker tried to write
        if controller_id == cur_controller_id:
            current = self.get_controller_epoch()
            if current is None:
                raise RuntimeError(f"{ControllerEpochZNode.path()} existed before but went away while reading it")
            if current[0] == new_controller_epoch:
                return new_controller_epoch, current[1].version
        raise ControllerMovedException(
            f"Controller moved to broker {cur_controller_id}. Aborting controller startup procedure")

    def _maybe_create_controller_epoch_znode(self) -> tuple[int, int]:
        """Mirrors kafka.zk.KafkaZkClient#maybeCreateControllerEpochZNode."""
        response = self._retry_request_until_connected(CreateRequest(
            ControllerEpochZNode.path(), ControllerEpochZNode.encode(INITIAL_CONTROLLER_EPOCH)))
        if response.result_code == Code.OK:
            return INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION
        if response.result_code == Code.NODEEXISTS:
            current = self.get_controller_epoch()
            if current is None:
                raise RuntimeError(f"{ControllerEpochZNode.path()} existed before but went away while reading it")
            return current[0], current[1].version
        raise KeeperException.create(response.result_code)

    def get_controller_id(self) -> int | None:
        """Mirrors kafka.zk.KafkaZkClient#getControllerId."""
        response = self._retry_request_until_connected(GetDataRequest(ControllerZNode.path()))
        if response.result_code == Code.OK:
            return ControllerZNode.decode(response.data)
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def get_controller_epoch(self) -> tuple[int, Stat] | None:
        """Mirrors kafka.zk.KafkaZkClient#getControllerEpoch: (epoch, stat) or None."""
        response = self._retry_request_until_connected(GetDataRequest(ControllerEpochZNode.path()))
        if response.result_code == Code.OK:
            return ControllerEpochZNode.decode(response.data), response.stat
        if response.result_code == Code.NONODE:
            return None
        raise response.result_exception

    def delete_controller(self, expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deleteController (resignation)."""
        self._retry_request_until_connected(DeleteRequest(ControllerZNode.path(), ZkVersion.MATCH_ANY_VERSION),
                                            expected_controller_epoch_zk_version)

    # ---- brokers ---------------------------------------------------------------------
    def register_broker(self, broker_info: BrokerInfo) -> int:
        """Mirrors kafka.zk.KafkaZkClient#registerBroker: returns the broker epoch (the czxid)."""
        stat = self._checked_ephemeral_create(broker_info.path, broker_info.to_json_bytes(self.time.milliseconds()))
        return stat.czxid

    def update_broker_info(self, broker_info: BrokerInfo) -> None:
        """Mirrors kafka.zk.KafkaZkClient#updateBrokerInfo."""
        self._retry_request_until_connected(SetDataRequest(
            broker_info.path, broker_info.to_json_bytes(self.time.milliseconds()), ZkVersion.MATCH_ANY_VERSION)
        ).maybe_throw()

    def _checked_ephemeral_create(self, path: str, data: bytes) -> Stat:
        """Mirrors kafka.zk.KafkaZkClient.CheckedEphemeral#create.

        Kafka's KAFKA-7165 branch (an old session's node outliving it) cannot happen here:
        this ZooKeeper always deletes a dead session's ephemerals.
        """
        # 1. create empty, then set the data with version 0, in one multi
        response = self._retry_request_until_connected(MultiRequest((
            CreateOp(path, None, ephemeral=True), SetDataOp(path, data, 0))))
        if response.result_code == Code.OK:
            set_data_result = response.zk_op_results[1][1]
            assert isinstance(set_data_result, SetDataResult)
            return set_data_result.stat
        if response.result_code != Code.NODEEXISTS:
            raise KeeperException.create(response.result_code, path)
        # 2. it exists: fine if this session owns it, NodeExists otherwise, retry if it vanished
        get = self._retry_request_until_connected(GetDataRequest(path))
        if get.result_code == Code.OK:
            if get.stat.ephemeral_owner != self.session_id:
                raise NodeExistsException(path, f"owned by session 0x{get.stat.ephemeral_owner:x}")
            return get.stat
        if get.result_code == Code.NONODE:
            return self._checked_ephemeral_create(path, data)
        raise KeeperException.create(get.result_code, path)

    def get_all_brokers_in_cluster(self) -> list[BrokerInfo]:
        """Mirrors kafka.zk.KafkaZkClient#getAllBrokersInCluster (sorted by id)."""
        return list(self.get_all_broker_and_epochs_in_cluster())

    def get_all_broker_and_epochs_in_cluster(self) -> dict[BrokerInfo, int]:
        """Mirrors kafka.zk.KafkaZkClient#getAllBrokerAndEpochsInCluster: broker -> czxid."""
        broker_ids = self.get_sorted_broker_list()
        responses = self._retry_requests_until_connected(
            [GetDataRequest(BrokerIdZNode.path(b), ctx=b) for b in broker_ids])
        result: dict[BrokerInfo, int] = {}
        for response in responses:
            if response.result_code == Code.OK:
                result[BrokerIdZNode.decode(response.ctx, response.data)] = response.stat.czxid
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_broker(self, broker_id: int) -> BrokerInfo | None:
        """Mirrors kafka.zk.KafkaZkClient#getBroker."""
        data, _stat = self.get_data_and_stat(BrokerIdZNode.path(broker_id))
        return None if data is None else BrokerIdZNode.decode(broker_id, data)

    def get_sorted_broker_list(self) -> list[int]:
        """Mirrors kafka.zk.KafkaZkClient#getSortedBrokerList."""
        return sorted(int(child) for child in self.get_children(BrokerIdsZNode.path()))

    def generate_broker_sequence_id(self) -> int:
        """Mirrors kafka.zk.KafkaZkClient#generateBrokerSequenceId: the seqid znode's new version."""
        response = self._retry_request_until_connected(
            SetDataRequest(BrokerSequenceIdZNode.path(), b"", ZkVersion.MATCH_ANY_VERSION))
        if response.result_code == Code.OK:
            return response.stat.version
        if response.result_code == Code.NONODE:
            self.create_recursive(BrokerSequenceIdZNode.path(), b"", throw_if_path_exists=False)
            return self.generate_broker_sequence_id()
        raise response.result_exception

    # ---- topics ----------------------------------------------------------------------
    def get_all_topics_in_cluster(self, register_watch: bool = False) -> set[str]:
        """Mirrors kafka.zk.KafkaZkClient#getAllTopicsInCluster."""
        response = self._retry_request_until_connected(GetChildrenRequest(TopicsZNode.path(), register_watch))
        if response.result_code == Code.OK:
            return set(response.children)
        if response.result_code == Code.NONODE:
            return set()
        raise response.result_exception

    def get_all_topics(self, register_watch: bool = False) -> set[str]:
        """Short name for ``get_all_topics_in_cluster``."""
        return self.get_all_topics_in_cluster(register_watch)

    def topic_exists(self, topic: str) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#topicExists."""
        return self.path_exists(TopicZNode.path(topic))

    def create_topic_assignment(self, topic: str, topic_id: Uuid | None,
                                assignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createTopicAssignment (NodeExists if the topic exists)."""
        persisted = {tp: ReplicaAssignment(tuple(replicas)) for tp, replicas in assignment.items()}
        self.create_recursive(TopicZNode.path(topic), TopicZNode.encode(topic_id, persisted))

    def set_topic_assignment(self, topic: str, topic_id: Uuid | None,
                             assignment: Mapping[TopicPartition, ReplicaAssignment],
                             expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        """Mirrors kafka.zk.KafkaZkClient#setTopicAssignment."""
        self._retry_request_until_connected(
            SetDataRequest(TopicZNode.path(topic), TopicZNode.encode(topic_id, assignment), ZkVersion.MATCH_ANY_VERSION),
            expected_controller_epoch_zk_version).maybe_throw()

    def set_topic_ids(self, topic_id_replica_assignments: Iterable[TopicIdReplicaAssignment],
                      expected_controller_epoch_zk_version: int, rng: random.Random) -> list[TopicIdReplicaAssignment]:
        """Mirrors kafka.zk.KafkaZkClient#setTopicIds: give id-less topics a fresh id in their znode.

        1. Each assignment must lack an id (one that has one is an IllegalArgumentException);
        a random id is drawn for it (``rng`` stands for Kafka's Uuid.randomUuid). 2. Every topic
        znode is rewritten with its id, fenced by the controller epoch. Returns the assignments
        with their new ids.
        """
        # 1. A new id for each.
        updated = []
        for item in topic_id_replica_assignments:
            if item.topic_id is not None:
                raise ValueError(f"TopicIdReplicaAssignment for {item.topic} already contains a topic ID.")
            updated.append(TopicIdReplicaAssignment(item.topic, Uuid.random_uuid(rng), item.assignment))
        # 2. Written back, fenced.
        requests = [SetDataRequest(TopicZNode.path(item.topic), TopicZNode.encode(item.topic_id, item.assignment),
                                   ZkVersion.MATCH_ANY_VERSION) for item in updated]
        if requests:
            self._retry_requests_until_connected(requests, expected_controller_epoch_zk_version)
        return updated

    def get_replica_assignment_and_topic_id_for_topics(self, topics: Iterable[str]) -> list[TopicIdReplicaAssignment]:
        """Mirrors kafka.zk.KafkaZkClient#getReplicaAssignmentAndTopicIdForTopics."""
        result = []
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                result.append(TopicZNode.decode(response.ctx, response.data))
            else:
                result.append(TopicIdReplicaAssignment(response.ctx, None, {}))
        return result

    def get_full_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
        """Mirrors kafka.zk.KafkaZkClient#getFullReplicaAssignmentForTopics."""
        result: dict[TopicPartition, ReplicaAssignment] = {}
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                result.update(TopicZNode.decode(response.ctx, response.data).assignment)
        return result

    def get_replica_assignment_for_topics(self, topics: Iterable[str]) -> dict[TopicPartition, tuple[int, ...]]:
        """Mirrors kafka.zk.KafkaZkClient#getReplicaAssignmentForTopics (replicas only)."""
        return {tp: ra.replicas for tp, ra in self.get_full_replica_assignment_for_topics(topics).items()}

    def get_partitions_for_topics(self, topics: Iterable[str]) -> dict[str, list[int]]:
        """Mirrors kafka.zk.KafkaZkClient#getPartitionsForTopics."""
        result: dict[str, list[int]] = {}
        for tp in self.get_full_replica_assignment_for_topics(topics):
            result.setdefault(tp.topic, []).append(tp.partition)
        return {topic: sorted(parts) for topic, parts in result.items()}

    def get_topic_ids_for_topics(self, topics: Iterable[str]) -> dict[str, Uuid]:
        """Mirrors kafka.zk.KafkaZkClient#getTopicIdsForTopics (topics without an id left out)."""
        result = {}
        for response in self._get_topic_znodes(topics):
            if response.result_code == Code.OK:
                decoded = TopicZNode.decode(response.ctx, response.data)
                if decoded.topic_id is not None:
                    result[decoded.topic] = decoded.topic_id
        return result

    def get_topic_id(self, topic: str) -> Uuid | None:
        """One topic's id, or None (a one-topic ``get_topic_ids_for_topics``)."""
        return self.get_topic_ids_for_topics([topic]).get(topic)

    def get_all_partitions(self) -> set[TopicPartition]:
        """Mirrors kafka.zk.KafkaZkClient#getAllPartitions (from the partitions znodes)."""
        return {TopicPartition(topic, int(p)) for topic in self.get_children(TopicsZNode.path())
                for p in self.get_children(TopicPartitionsZNode.path(topic))}

    def _get_topic_znodes(self, topics: Iterable[str]) -> list[ZkResponse]:
        responses = self._retry_requests_until_connected([GetDataRequest(TopicZNode.path(t), ctx=t) for t in topics])
        for response in responses:
            if response.result_code not in (Code.OK, Code.NONODE):
                raise response.result_exception
        return responses

    # ---- partition states ------------------------------------------------------------
    def create_topic_partition_states_raw(
        self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
        expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
    ) -> dict[TopicPartition, ZkResponse]:
        """Mirrors kafka.zk.KafkaZkClient#createTopicPartitionStatesRaw: per-partition create results."""
        # 1. the partitions znode of each topic, then each partition's znode (NodeExists is fine)
        topics = list(dict.fromkeys(tp.topic for tp in leader_isr_and_controller_epochs))
        self._retry_requests_until_connected(
            [CreateRequest(TopicPartitionsZNode.path(t), None, ctx=t) for t in topics],
            expected_controller_epoch_zk_version)
        self._retry_requests_until_connected(
            [CreateRequest(TopicPartitionZNode.path(tp), None, ctx=tp) for tp in leader_isr_and_controller_epochs],
            expected_controller_epoch_zk_version)
        # 2. each partition's state znode
        responses = self._retry_requests_until_connected(
            [CreateRequest(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(value), ctx=tp)
             for tp, value in leader_isr_and_controller_epochs.items()],
            expected_controller_epoch_zk_version)
        return {response.ctx: response for response in responses}

    def create_topic_partition_states(
        self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
        expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION,
    ) -> dict[TopicPartition, ZkResponse]:
        """Short name for ``create_topic_partition_states_raw``."""
        return self.create_topic_partition_states_raw(leader_isr_and_controller_epochs,
                                                      expected_controller_epoch_zk_version)

    def set_topic_partition_states_raw(
        self, leader_isr_and_controller_epochs: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
        expected_controller_epoch_zk_version: int,
    ) -> list[ZkResponse]:
        """Mirrors kafka.zk.KafkaZkClient#setTopicPartitionStatesRaw: conditional on the partition epoch."""
        return self._retry_requests_until_connected(
            [SetDataRequest(TopicPartitionStateZNode.path(tp), TopicPartitionStateZNode.encode(value),
                            value.leader_and_isr.partition_epoch, ctx=tp)
             for tp, value in leader_isr_and_controller_epochs.items()],
            expected_controller_epoch_zk_version)

    def update_leader_and_isr(self, leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
                              expected_controller_epoch_zk_version: int) -> UpdateLeaderAndIsrResult:
        """Mirrors kafka.zk.KafkaZkClient#updateLeaderAndIsr.

        Each write names the partition epoch the caller read; a BadVersion puts the partition
        on the retry list. A failed controller-epoch check raises ControllerMovedException.
        """
        # 1. write every state with the caller's controller epoch, fenced by its zkVersion
        states = {tp: LeaderIsrAndControllerEpoch(lai, controller_epoch) for tp, lai in leader_and_isrs.items()}
        try:
            responses = self.set_topic_partition_states_raw(states, expected_controller_epoch_zk_version)
        except ControllerMovedException:
            raise
        except RUN_ENDING:
            raise
        except Exception as exc:
            return UpdateLeaderAndIsrResult({tp: exc for tp in leader_and_isrs}, [])
        # 2. sort the answers: written (with the new partition epoch), to retry, or failed
        finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        to_retry: list[TopicPartition] = []
        for response in responses:
            tp = response.ctx
            if response.result_code == Code.OK:
                finished[tp] = leader_and_isrs[tp].with_partition_epoch(response.stat.version)
            elif response.result_code == Code.BADVERSION:
                to_retry.append(tp)
            else:
                finished[tp] = response.result_exception
        return UpdateLeaderAndIsrResult(finished, to_retry)

    def get_topic_partition_states_raw(self, partitions: Sequence[TopicPartition]) -> list[ZkResponse]:
        """Mirrors kafka.zk.KafkaZkClient#getTopicPartitionStatesRaw."""
        return self._retry_requests_until_connected(
            [GetDataRequest(TopicPartitionStateZNode.path(tp), ctx=tp) for tp in partitions])

    def get_topic_partition_states(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Mirrors kafka.zk.KafkaZkClient#getTopicPartitionStates (missing partitions left out)."""
        result = {}
        for response in self.get_topic_partition_states_raw(partitions):
            if response.result_code == Code.OK:
                decoded = TopicPartitionStateZNode.decode(response.data, response.stat)
                if decoded is not None:
                    result[response.ctx] = decoded
            elif response.result_code != Code.NONODE:
                raise response.result_exception
        return result

    def get_topic_partition_state(self, partition: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """Mirrors kafka.zk.KafkaZkClient#getTopicPartitionState."""
        return self.get_topic_partition_states([partition]).get(partition)

    def get_leader_for_partition(self, partition: TopicPartition) -> int | None:
        """Mirrors kafka.zk.KafkaZkClient#getLeaderForPartition."""
        state = self.get_topic_partition_state(partition)
        return None if state is None else state.leader_and_isr.leader

    # ---- admin paths and notifications -----------------------------------------------
    def create_delete_topic_path(self, topic: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createDeleteTopicPath."""
        self.create_recursive(DeleteTopicsTopicZNode.path(topic))

    def is_topic_marked_for_deletion(self, topic: str) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#isTopicMarkedForDeletion."""
        return self.path_exists(DeleteTopicsTopicZNode.path(topic))

    def get_topic_deletions(self) -> list[str]:
        """Mirrors kafka.zk.KafkaZkClient#getTopicDeletions."""
        return self.get_children(DeleteTopicsZNode.path())

    def delete_topic_deletions(self, topics: Sequence[str], expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deleteTopicDeletions."""
        self._retry_requests_until_connected(
            [DeleteRequest(DeleteTopicsTopicZNode.path(t), ZkVersion.MATCH_ANY_VERSION) for t in topics],
            expected_controller_epoch_zk_version)

    def delete_topic_znode(self, topic: str, expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deleteTopicZNode (recursive)."""
        self.delete_recursive(TopicZNode.path(topic), expected_controller_epoch_zk_version)

    def delete_topic_configs(self, topics: Sequence[str], expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deleteTopicConfigs."""
        self._retry_requests_until_connected(
            [DeleteRequest(ConfigEntityZNode.path(ConfigType.TOPIC, t), ZkVersion.MATCH_ANY_VERSION) for t in topics],
            expected_controller_epoch_zk_version)

    def get_partition_reassignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        """Mirrors kafka.zk.KafkaZkClient#getPartitionReassignment (empty if the znode is absent)."""
        data, _stat = self.get_data_and_stat(ReassignPartitionsZNode.path())
        return {} if data is None else ReassignPartitionsZNode.decode(data)

    def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createPartitionReassignment."""
        self.create_recursive(ReassignPartitionsZNode.path(), ReassignPartitionsZNode.encode(reassignment))

    def delete_partition_reassignment(self, expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deletePartitionReassignment."""
        self.delete_recursive(ReassignPartitionsZNode.path(), expected_controller_epoch_zk_version)

    def reassign_partitions_in_progress(self) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#reassignPartitionsInProgress."""
        return self.path_exists(ReassignPartitionsZNode.path())

    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createPreferredReplicaElection."""
        self.create_recursive(PreferredReplicaElectionZNode.path(), PreferredReplicaElectionZNode.encode(partitions))

    def get_preferred_replica_election(self) -> set[TopicPartition]:
        """Mirrors kafka.zk.KafkaZkClient#getPreferredReplicaElection."""
        data, _stat = self.get_data_and_stat(PreferredReplicaElectionZNode.path())
        return set() if data is None else PreferredReplicaElectionZNode.decode(data)

    def delete_preferred_replica_election(self, expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deletePreferredReplicaElection."""
        self._retry_request_until_connected(
            DeleteRequest(PreferredReplicaElectionZNode.path(), ZkVersion.MATCH_ANY_VERSION),
            expected_controller_epoch_zk_version)

    def propagate_isr_changes(self, isr_change_set: Iterable[TopicPartition]) -> str:
        """Mirrors kafka.zk.KafkaZkClient#propagateIsrChanges: returns the sequential path."""
        return self.create_sequential_persistent_path(IsrChangeNotificationSequenceZNode.path(),
                                                      IsrChangeNotificationSequenceZNode.encode(isr_change_set))

    def get_all_isr_change_notifications(self) -> list[str]:
        """Mirrors kafka.zk.KafkaZkClient#getAllIsrChangeNotifications: sequence numbers."""
        return [IsrChangeNotificationSequenceZNode.sequence_number(c)
                for c in self.get_children(IsrChangeNotificationZNode.path())]

    def get_partitions_from_isr_change_notifications(self, sequence_numbers: Sequence[str]) -> list[TopicPartition]:
        """Mirrors kafka.zk.KafkaZkClient#getPartitionsFromIsrChangeNotifications."""
        result: list[TopicPartition] = []
        for seq in sequence_numbers:
            data, _stat = self.get_data_and_stat(IsrChangeNotificationSequenceZNode.path(seq))
            if data is not None:
                result.extend(sorted(IsrChangeNotificationSequenceZNode.decode(data)))
        return result

    def delete_isr_change_notifications(self, sequence_numbers: Sequence[str],
                                        expected_controller_epoch_zk_version: int) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deleteIsrChangeNotifications (given sequence numbers)."""
        self._retry_requests_until_connected(
            [DeleteRequest(IsrChangeNotificationSequenceZNode.path(s), ZkVersion.MATCH_ANY_VERSION)
             for s in sequence_numbers], expected_controller_epoch_zk_version)

    # ---- configs ---------------------------------------------------------------------
    def get_entity_configs(self, root_entity_type: str, sanitized_entity_name: str) -> dict[str, str]:
        """Mirrors kafka.zk.KafkaZkClient#getEntityConfigs (empty when absent)."""
        data, _stat = self.get_data_and_stat(ConfigEntityZNode.path(root_entity_type, sanitized_entity_name))
        return ConfigEntityZNode.decode(data)

    def set_or_create_entity_configs(self, root_entity_type: str, sanitized_entity_name: str,
                                     config: Mapping[str, str]) -> None:
        """Mirrors kafka.zk.KafkaZkClient#setOrCreateEntityConfigs (3.0-3.3: no controller check)."""
        path = ConfigEntityZNode.path(root_entity_type, sanitized_entity_name)
        data = ConfigEntityZNode.encode(config)
        # 1. set; 2. on NoNode create (recursively); a racing creator makes us set again
        response = self._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION))
        if response.result_code != Code.NONODE:
            response.maybe_throw()
            return
        try:
            self.create_recursive(path, data)
        except NodeExistsException:
            self._retry_request_until_connected(SetDataRequest(path, data, ZkVersion.MATCH_ANY_VERSION)).maybe_throw()

    def get_all_entities_with_config(self, entity_type: str) -> list[str]:
        """Mirrors kafka.zk.KafkaZkClient#getAllEntitiesWithConfig."""
        return self.get_children(ConfigEntityTypeZNode.path(entity_type))

    def create_config_change_notification(self, sanitized_entity_path: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createConfigChangeNotification."""
        self.make_sure_persistent_path_exists(ConfigEntityChangeNotificationZNode.path())
        self.create_sequential_persistent_path(ConfigEntityChangeNotificationSequenceZNode.create_path(),
                                               ConfigEntityChangeNotificationSequenceZNode.encode(sanitized_entity_path))

    def create_or_get_cluster_id(self, proposed_cluster_id: str) -> str:
        """Mirrors kafka.zk.KafkaZkClient#createOrGetClusterId."""
        try:
            self.create_recursive(ClusterIdZNode.path(), ClusterIdZNode.to_json(proposed_cluster_id))
            return proposed_cluster_id
        except NodeExistsException:
            data, _stat = self.get_data_and_stat(ClusterIdZNode.path())
            if data is None:
                raise RuntimeError("Failed to get cluster id from Zookeeper: /cluster/id went away") from None
            return ClusterIdZNode.from_json(data)

    # ---- watch handlers --------------------------------------------------------------
    def register_znode_change_handler_and_check_existence(self, handler: ZNodeChangeHandler) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#registerZNodeChangeHandlerAndCheckExistence.

        Registers the handler, then arms its watch with an exists (which works on a missing
        node too). Returns whether the node exists.
        """
        self.zoo_keeper_client.register_znode_change_handler(handler)
        response = self._retry_request_until_connected(ExistsRequest(handler.path))
        if response.result_code == Code.OK:
            return True
        if response.result_code == Code.NONODE:
            return False
        raise response.result_exception

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        """Mirrors kafka.zk.KafkaZkClient#registerZNodeChangeHandler (armed by the next read)."""
        self.zoo_keeper_client.register_znode_change_handler(handler)

    def unregister_znode_change_handler(self, path: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#unregisterZNodeChangeHandler."""
        self.zoo_keeper_client.unregister_znode_change_handler(path)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        """Mirrors kafka.zk.KafkaZkClient#registerZNodeChildChangeHandler (armed by the next get_children)."""
        self.zoo_keeper_client.register_znode_child_change_handler(handler)

    def unregister_znode_child_change_handler(self, path: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#unregisterZNodeChildChangeHandler."""
        self.zoo_keeper_client.unregister_znode_child_change_handler(path)

    def register_state_change_handler(self, handler: StateChangeHandler) -> None:
        """Mirrors kafka.zk.KafkaZkClient#registerStateChangeHandler."""
        self.zoo_keeper_client.register_state_change_handler(handler)

    def unregister_state_change_handler(self, name: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#unregisterStateChangeHandler."""
        self.zoo_keeper_client.unregister_state_change_handler(name)

    # ---- generic helpers -------------------------------------------------------------
    def create_sequential_persistent_path(self, path: str, data: bytes | None) -> str:
        """Mirrors kafka.zk.KafkaZkClient#createSequentialPersistentPath: the created path."""
        response = self._retry_request_until_connected(CreateRequest(path, data, sequential=True))
        response.maybe_throw()
        assert response.name is not None
        return response.name

    def get_data_and_stat(self, path: str) -> tuple[bytes | None, Stat | None]:
        """Mirrors kafka.zk.KafkaZkClient#getDataAndStat: (None, None) when absent."""
        response = self._retry_request_until_connected(GetDataRequest(path))
        if response.result_code == Code.OK:
            return response.data, response.stat
        if response.result_code == Code.NONODE:
            return None, None
        raise response.result_exception

    def get_data_and_version(self, path: str) -> tuple[bytes | None, int]:
        """Mirrors kafka.zk.KafkaZkClient#getDataAndVersion (UNKNOWN_VERSION when absent)."""
        data, stat = self.get_data_and_stat(path)
        return data, ZkVersion.UNKNOWN_VERSION if stat is None else stat.version

    def get_children(self, path: str) -> list[str]:
        """Mirrors kafka.zk.KafkaZkClient#getChildren: registers a watch if a handler wants one."""
        response = self._retry_request_until_connected(GetChildrenRequest(path, register_watch=True))
        if response.result_code == Code.OK:
            return response.children
        if response.result_code == Code.NONODE:
            return []
        raise response.result_exception

    def conditional_update_path(self, path: str, data: bytes, expect_version: int) -> tuple[bool, int]:
        """Mirrors kafka.zk.KafkaZkClient#conditionalUpdatePath: (True, new version) or (False, UNKNOWN)."""
        response = self._retry_request_until_connected(SetDataRequest(path, data, expect_version))
        if response.result_code == Code.OK:
            return True, response.stat.version
        if response.result_code in (Code.BADVERSION, Code.NONODE):
            return False, ZkVersion.UNKNOWN_VERSION
        raise response.result_exception

    def path_exists(self, path: str) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#pathExists."""
        response = self._retry_request_until_connected(ExistsRequest(path))
        if response.result_code in (Code.OK, Code.NONODE):
            return response.result_code == Code.OK
        raise response.result_exception

    def create_top_level_paths(self) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createTopLevelPaths."""
        for path in PERSISTENT_ZK_PATHS:
            self.make_sure_persistent_path_exists(path)

    def make_sure_persistent_path_exists(self, path: str) -> None:
        """Mirrors kafka.zk.KafkaZkClient#makeSurePersistentPathExists."""
        self.create_recursive(path, None, throw_if_path_exists=False)

    def create_recursive(self, path: str, data: bytes | None = None, throw_if_path_exists: bool = True) -> None:
        """Mirrors kafka.zk.KafkaZkClient#createRecursive: create, making missing parents first."""
        # 1. try the node itself
        response = self._retry_request_until_connected(CreateRequest(path, data))
        if response.result_code == Code.NODEEXISTS:
            if throw_if_path_exists:
                response.maybe_throw()
            return
        if response.result_code != Code.NONODE:
            response.maybe_throw()
            return
        # 2. a parent is missing: create the ancestors (empty), then the node again
        parent = path[: path.rfind("/")]
        if parent:
            self.create_recursive(parent, None, throw_if_path_exists=False)
        response = self._retry_request_until_connected(CreateRequest(path, data))
        if throw_if_path_exists or response.result_code != Code.NODEEXISTS:
            response.maybe_throw()

    def delete_recursive(self, path: str,
                         expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> bool:
        """Mirrors kafka.zk.KafkaZkClient#deleteRecursive: False if the path did not exist."""
        response = self._retry_request_until_connected(GetChildrenRequest(path, register_watch=True))
        if response.result_code == Code.NONODE:
            return False
        response.maybe_throw()
        for child in response.children:
            self.delete_recursive(f"{path}/{child}", expected_controller_epoch_zk_version)
        deleted = self._retry_request_until_connected(DeleteRequest(path, ZkVersion.MATCH_ANY_VERSION),
                                                      expected_controller_epoch_zk_version)
        if deleted.result_code not in (Code.OK, Code.NONODE):
            deleted.maybe_throw()
        return True

    def delete_path(self, path: str, expected_controller_epoch_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> None:
        """Mirrors kafka.zk.KafkaZkClient#deletePath (recursive)."""
        self.delete_recursive(path, expected_controller_epoch_zk_version)

    # ---- sending, with the controller-epoch fence ------------------------------------
    def _retry_request_until_connected(self, request: AsyncRequest,
                                       expected_controller_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> ZkResponse:
        """Mirrors kafka.zk.KafkaZkClient#retryRequestUntilConnected."""
        return self._retry_requests_until_connected([request], expected_controller_zk_version)[0]

    def _retry_requests_until_connected(self, requests: Sequence[AsyncRequest],
                                        expected_controller_zk_version: int = ZkVersion.MATCH_ANY_VERSION) -> list[ZkResponse]:
        """Mirrors kafka.zk.KafkaZkClient#retryRequestsUntilConnected.

        With an expected controller-epoch zkVersion, each write travels as a multi of
        CheckOp(/controller_epoch, version) + the write and is unwrapped on return.
        """
        # 1. no fence: plain requests
        if expected_controller_zk_version == ZkVersion.MATCH_ANY_VERSION:
            return self.zoo_keeper_client.handle_requests(requests)
        if expected_controller_zk_version < 0:
            raise ValueError(f"Expected controller epoch zkVersion {expected_controller_zk_version} should be "
                             f"non-negative or equal to {ZkVersion.MATCH_ANY_VERSION}")
        # 2. fenced: wrap, send, unwrap (a failed check raises ControllerMovedException)
        wrapped = [_wrap_request_with_controller_epoch_check(r, expected_controller_zk_version) for r in requests]
        return [_unwrap_response_with_controller_epoch_check(r) for r in self.zoo_keeper_client.handle_requests(wrapped)]


def _wrap_request_with_controller_epoch_check(request: AsyncRequest, expected_version: int) -> MultiRequest:
    """Mirrors kafka.zk.KafkaZkClient$#wrapRequestWithControllerEpochCheck."""
    check = CheckOp(ControllerEpochZNode.path(), expected_version)
    if isinstance(request, CreateRequest):
        op: Op = CreateOp(request.path, request.data, request.ephemeral, request.sequential)
    elif isinstance(request, DeleteRequest):
        op = DeleteOp(request.path, request.version)
    elif isinstance(request, SetDataRequest):
        op = SetDataOp(request.path, request.data, request.version)
    else:
        raise ValueError(f"{request!r} does not need controller epoch check")
    return MultiRequest((check, op), request.ctx)


def _unwrap_response_with_controller_epoch_check(response: ZkResponse) -> ZkResponse:
    """Mirrors kafka.zk.KafkaZkClient$#unwrapResponseWithControllerEpochCheck."""
    if response.zk_op_results is None:
        raise KeeperException.create(response.result_code)
    (check_op, check_result), (op, op_result) = response.zk_op_results
    # 1. the check on /controller_epoch failed: the controller moved (or the znode is gone)
    if isinstance(check_result, ErrorResult) and check_result.err != Code.OK:
        if check_result.err == Code.BADVERSION:
            raise ControllerMovedException(
                f"Controller epoch zkVersion check fails. Expected zkVersion = {check_op.version}")
        raise KeeperException.create(check_result.err, check_op.path)
    # 2. otherwise the answer is the wrapped op's, with the multi's code
    name = op_result.path if isinstance(op_result, CreateResult) else None
    stat = op_result.stat if isinstance(op_result, SetDataResult) else None
    return ZkResponse(response.result_code, op.path, response.ctx, stat=stat, name=name)
