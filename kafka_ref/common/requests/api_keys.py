"""The numeric identifiers of Kafka's APIs.

Mirrors org.apache.kafka.common.protocol.ApiKeys as of Kafka 3.8 (ids 0 .. 75).
"""

from __future__ import annotations

import enum


class ApiKeys(enum.IntEnum):
    """Mirrors org.apache.kafka.common.protocol.ApiKeys.

    Each member's integer value is the API's permanent id on the wire, so
    ``ApiKeys.FETCH == 1``. ``api_name`` is the message name Kafka uses in metrics and in
    request logs ("Fetch", "LeaderAndIsr"); ``cluster_action`` is true for the APIs only
    brokers and controllers may call (Kafka's ``clusterAction`` flag, checked with the
    CLUSTER_ACTION ACL).
    """

    api_name: str
    cluster_action: bool

    def __new__(cls, api_id: int, api_name: str, cluster_action: bool = False) -> ApiKeys:
        member = int.__new__(cls, api_id)
        member._value_ = api_id
        member.api_name = api_name
        member.cluster_action = cluster_action
        return member

    PRODUCE = (0, "Produce")
    FETCH = (1, "Fetch")
    LIST_OFFSETS = (2, "ListOffsets")
    METADATA = (3, "Metadata")
    LEADER_AND_ISR = (4, "LeaderAndIsr", True)
    STOP_REPLICA = (5, "StopReplica", True)
    UPDATE_METADATA = (6, "UpdateMetadata", True)
    CONTROLLED_SHUTDOWN = (7, "ControlledShutdown", True)
    OFFSET_COMMIT = (8, "OffsetCommit")
    OFFSET_FETCH = (9, "OffsetFetch")
    FIND_COORDINATOR = (10, "FindCoordinator")
    JOIN_GROUP = (11, "JoinGroup")
    HEARTBEAT = (12, "Heartbeat")
    LEAVE_GROUP = (13, "LeaveGroup")
    SYNC_GROUP = (14, "SyncGroup")
    DESCRIBE_GROUPS = (15, "DescribeGroups")
    LIST_GROUPS = (16, "ListGroups")
    SASL_HANDSHAKE = (17, "SaslHandshake")
    API_VERSIONS = (18, "ApiVersions")
    CREATE_TOPICS = (19, "CreateTopics")
    DELETE_TOPICS = (20, "DeleteTopics")
    DELETE_RECORDS = (21, "DeleteRecords")
    INIT_PRODUCER_ID = (22, "InitProducerId")
    OFFSET_FOR_LEADER_EPOCH = (23, "OffsetForLeaderEpoch")
    ADD_PARTITIONS_TO_TXN = (24, "AddPartitionsToTxn")
    ADD_OFFSETS_TO_TXN = (25, "AddOffsetsToTxn")
    END_TXN = (26, "EndTxn")
    WRITE_TXN_MARKERS = (27, "WriteTxnMarkers", True)
    TXN_OFFSET_COMMIT = (28, "TxnOffsetCommit")
    DESCRIBE_ACLS = (29, "DescribeAcls")
    CREATE_ACLS = (30, "CreateAcls")
    DELETE_ACLS = (31, "DeleteAcls")
    DESCRIBE_CONFIGS = (32, "DescribeConfigs")
    ALTER_CONFIGS = (33, "AlterConfigs")
    ALTER_REPLICA_LOG_DIRS = (34, "AlterReplicaLogDirs")
    DESCRIBE_LOG_DIRS = (35, "DescribeLogDirs")
    SASL_AUTHENTICATE = (36, "SaslAuthenticate")
    CREATE_PARTITIONS = (37, "CreatePartitions")
    CREATE_DELEGATION_TOKEN = (38, "CreateDelegationToken")
    RENEW_DELEGATION_TOKEN = (39, "RenewDelegationToken")
    EXPIRE_DELEGATION_TOKEN = (40, "ExpireDelegationToken")
    DESCRIBE_DELEGATION_TOKEN = (41, "DescribeDelegationToken")
    DELETE_GROUPS = (42, "DeleteGroups")
    ELECT_LEADERS = (43, "ElectLeaders")
    INCREMENTAL_ALTER_CONFIGS = (44, "IncrementalAlterConfigs")
    ALTER_PARTITION_REASSIGNMENTS = (45, "AlterPartitionReassignments")
    LIST_PARTITION_REASSIGNMENTS = (46, "ListPartitionReassignments")
    OFFSET_DELETE = (47, "OffsetDelete")
    DESCRIBE_CLIENT_QUOTAS = (48, "DescribeClientQuotas")
    ALTER_CLIENT_QUOTAS = (49, "AlterClientQuotas")
    DESCRIBE_USER_SCRAM_CREDENTIALS = (50, "DescribeUserScramCredentials")
    ALTER_USER_SCRAM_CREDENTIALS = (51, "AlterUserScramCredentials")
    VOTE = (52, "Vote", True)
    BEGIN_QUORUM_EPOCH = (53, "BeginQuorumEpoch", True)
    END_QUORUM_EPOCH = (54, "EndQuorumEpoch", True)
    DESCRIBE_QUORUM = (55, "DescribeQuorum", True)
    ALTER_PARTITION = (56, "AlterPartition", True)
    UPDATE_FEATURES = (57, "UpdateFeatures", True)
    ENVELOPE = (58, "Envelope", True)
    FETCH_SNAPSHOT = (59, "FetchSnapshot")
    DESCRIBE_CLUSTER = (60, "DescribeCluster")
    DESCRIBE_PRODUCERS = (61, "DescribeProducers")
    BROKER_REGISTRATION = (62, "BrokerRegistration", True)
    BROKER_HEARTBEAT = (63, "BrokerHeartbeat", True)
    UNREGISTER_BROKER = (64, "UnregisterBroker")
    DESCRIBE_TRANSACTIONS = (65, "DescribeTransactions")
    LIST_TRANSACTIONS = (66, "ListTransactions")
    ALLOCATE_PRODUCER_IDS = (67, "AllocateProducerIds", True)
    CONSUMER_GROUP_HEARTBEAT = (68, "ConsumerGroupHeartbeat")
    CONSUMER_GROUP_DESCRIBE = (69, "ConsumerGroupDescribe")
    CONTROLLER_REGISTRATION = (70, "ControllerRegistration")
    GET_TELEMETRY_SUBSCRIPTIONS = (71, "GetTelemetrySubscriptions")
    PUSH_TELEMETRY = (72, "PushTelemetry")
    ASSIGN_REPLICAS_TO_DIRS = (73, "AssignReplicasToDirs")
    LIST_CLIENT_METRICS_RESOURCES = (74, "ListClientMetricsResources")
    DESCRIBE_TOPIC_PARTITIONS = (75, "DescribeTopicPartitions")

    @property
    def id(self) -> int:
        """The API's numeric id (Kafka's ``ApiKeys.id`` field)."""
        return self._value_

    @classmethod
    def for_id(cls, api_id: int) -> ApiKeys:
        """Mirrors org.apache.kafka.common.protocol.ApiKeys#forId.

        Looks an API up by its numeric id. An id no member has is a programming error in
        Kafka (IllegalArgumentException); here it is a ValueError naming the id.
        """
        # 1. Find the member with that id; 2. refuse unknown ids.
        member = cls._value2member_map_.get(api_id)
        if member is None:
            raise ValueError(f"Unexpected api key: {api_id}")
        return member

    @classmethod
    def has_id(cls, api_id: int) -> bool:
        """Mirrors org.apache.kafka.common.protocol.ApiKeys#hasId."""
        return api_id in cls._value2member_map_

    def __repr__(self) -> str:
        return f"<ApiKeys.{self.name}: {self._value_}>"
