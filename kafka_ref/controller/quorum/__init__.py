"""The KRaft controller (org.apache.kafka.controller): QuorumController and its control managers.

Also PartitionChangeBuilder and the replica placer (org.apache.kafka.metadata.placement).
"""
