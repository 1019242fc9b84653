"""In-process Kafka clients speaking the request dataclasses over the in-process network.

Mirrors the Java clients of org.apache.kafka.clients (Kafka 3.x), compactly:

- ``Producer`` / ``KafkaProducer`` (producer.py): RecordAccumulator, Sender, batching by
  ``linger_ms`` / ``batch_size``, retries with metadata refresh, acks -1/1/0;
- ``Consumer`` / ``KafkaConsumer`` (consumer.py): manual assignment, Fetcher with leader
  epochs, offset resets through ListOffsets;
- ``Admin`` / ``KafkaAdminClient`` (admin.py): CreateTopics / DeleteTopics at the controller,
  topic and cluster descriptions, ListOffsets, DeleteRecords, topic configs
  (IncrementalAlterConfigs, legacy AlterConfigs, DescribeConfigs), consumer group and offset
  deletion (DeleteGroups, OffsetDelete), log directories (DescribeLogDirs);
- ``Metadata`` (client_metadata.py): the client's view of the cluster; ``NetworkClient``
  (network_client.py): its connections to brokers;
- ``DefaultPartitioner`` / ``BuiltInPartitioner`` (partitioner.py): where a record goes.

Every client addresses brokers by id and sends as ``User:ANONYMOUS``; its ``client_id`` is its
node id on the network (so faults can isolate it).
"""

from kafka_ref.clients.admin import (
    Admin,
    AlterConfigOp,
    ClusterDescription,
    DeletedRecords,
    KafkaAdminClient,
    ListOffsetsResultInfo,
    LogDirDescription,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    RecordsToDelete,
    ReplicaInfo,
    TopicDescription,
    TopicMetadataAndConfig,
    TopicPartitionInfo,
)
from kafka_ref.clients.client_metadata import LeaderAndEpoch, Metadata, MetadataSnapshot, Node
from kafka_ref.clients.consumer import (
    Consumer,
    LogTruncationException,
    ConsumerRecord,
    KafkaConsumer,
    NoOffsetForPartitionException,
    OffsetAndTimestamp,
)
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.clients.partitioner import BuiltInPartitioner, DefaultPartitioner, partition_for_key
from kafka_ref.clients.producer import FutureRecordMetadata, KafkaProducer, Producer, RecordMetadata

__all__ = [
    "Admin",
    "AlterConfigOp",
    "NewPartitions",
    "BuiltInPartitioner",
    "ClusterDescription",
    "Consumer",
    "DeletedRecords",
    "ConsumerRecord",
    "DefaultPartitioner",
    "FutureRecordMetadata",
    "KafkaAdminClient",
    "LogDirDescription",
    "ReplicaInfo",
    "KafkaConsumer",
    "KafkaProducer",
    "LeaderAndEpoch",
    "ListOffsetsResultInfo",
    "LogTruncationException",
    "Metadata",
    "MetadataSnapshot",
    "NetworkClient",
    "RecordsToDelete",
    "NewTopic",
    "Node",
    "NoOffsetForPartitionException",
    "OffsetAndTimestamp",
    "OffsetSpec",
    "Producer",
    "RecordMetadata",
    "TopicDescription",
    "TopicMetadataAndConfig",
    "TopicPartitionInfo",
    "partition_for_key",
]
