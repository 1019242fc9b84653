"""The broker's replica layer: ReplicaManager, Partition, Replica and the fetchers."""
