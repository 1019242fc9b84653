"""KRaft's Raft (org.apache.kafka.raft): KafkaRaftClient, its listeners, the ``__cluster_metadata`` log."""
