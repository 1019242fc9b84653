"""The broker: KafkaBroker, KafkaApis, MetadataCache, purgatories, delayed operations."""
