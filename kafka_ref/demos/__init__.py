"""``kafka-ref demo``: narrated flows (ZooKeeper failover, admin operations, KRaft, coordinator failover)."""
