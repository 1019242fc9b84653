"""The ZooKeeper-era controller (kafka.controller); the KRaft QuorumController is in the quorum/ sub-package."""
