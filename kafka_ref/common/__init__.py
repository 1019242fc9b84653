"""Kafka's common vocabulary: errors, partitions, ids, records, time, config, requests."""
