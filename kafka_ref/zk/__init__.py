"""ZooKeeper for the ZooKeeper-era controller: an in-memory ensemble and Kafka's clients of it.

* ``zookeeper``: the server model (znodes, zxids, versions, ephemerals, sessions, one-shot
  watches) with ZooKeeper's exceptions; ``zookeeper_types``: its codes, Stat, events and ops.
* ``zookeeper_client``: kafka.zookeeper.ZooKeeperClient (requests, watch handlers, re-init).
* ``zk_data``: kafka.zk.ZkData (znode paths and byte-exact JSON) and LeaderAndIsr & co.
* ``kafka_zk_client``: kafka.zk.KafkaZkClient (Kafka's typed znode operations).
"""

from kafka_ref.zk.kafka_zk_client import (
    INITIAL_CONTROLLER_EPOCH, INITIAL_CONTROLLER_EPOCH_ZK_VERSION, KafkaZkClient, UpdateLeaderAndIsrResult,
)
from kafka_ref.zk.zk_data import (
    BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, LeaderRecoveryState, ReplicaAssignment,
    TopicIdReplicaAssignment, ZkVersion,
)
from kafka_ref.zk.zookeeper import (
    BadArgumentsException, BadVersionException, ControllerMovedException, KeeperException,
    NoChildrenForEphemeralsException, NodeExistsException, NoNodeException, NotEmptyException,
    SessionExpiredException, ZkSession, ZooKeeper,
)
from kafka_ref.zk.zookeeper_client import (
    StateChangeHandler, ZkResponse, ZNodeChangeHandler, ZNodeChildChangeHandler, ZooKeeperClient,
)
from kafka_ref.zk.zookeeper_types import (
    CheckOp, Code, CreateOp, DeleteOp, EventType, KeeperState, SetDataOp, Stat, WatchedEvent,
)

__all__ = [
    "INITIAL_CONTROLLER_EPOCH", "INITIAL_CONTROLLER_EPOCH_ZK_VERSION", "BadArgumentsException",
    "BadVersionException", "BrokerInfo", "CheckOp", "Code", "ControllerMovedException", "CreateOp",
    "DeleteOp", "EventType", "KafkaZkClient", "KeeperException", "KeeperState", "LeaderAndIsr",
    "LeaderIsrAndControllerEpoch", "LeaderRecoveryState", "NoChildrenForEphemeralsException",
    "NoNodeException", "NodeExistsException", "NotEmptyException", "ReplicaAssignment",
    "SessionExpiredException", "SetDataOp", "Stat", "StateChangeHandler", "TopicIdReplicaAssignment",
    "UpdateLeaderAndIsrResult", "WatchedEvent", "ZNodeChangeHandler", "ZNodeChildChangeHandler",
    "ZkResponse", "ZkSession", "ZkVersion", "ZooKeeper", "ZooKeeperClient",
]
