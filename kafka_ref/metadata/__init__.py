"""KRaft mode: the __cluster_metadata log, the QuorumController and the broker's metadata path.

Seed 004 §2.1–2.2: the controller writes metadata records to a Raft log; every broker fetches
that log, replays committed records into a MetadataDelta, publishes the next MetadataImage and
lets ReplicaManager#applyDelta turn the topic changes into local leader/follower transitions.
"""
