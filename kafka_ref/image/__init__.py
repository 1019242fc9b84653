"""KRaft metadata: records, registrations, MetadataImage and MetadataDelta.

Mirrors org.apache.kafka.common.metadata (the record types), org.apache.kafka.metadata
(registrations) and org.apache.kafka.image (MetadataImage, MetadataDelta, TopicsDelta). Seed 004
§2.1–2.2: the controller writes metadata records to a Raft log; every broker fetches that log,
replays committed records into a MetadataDelta, publishes the next MetadataImage and lets
ReplicaManager#applyDelta turn the topic changes into local leader/follower transitions.
"""
