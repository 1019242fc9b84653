"""The ZooKeeper-era controller (kafka.controller)."""
