"""The broker's KRaft metadata path (kafka.server.metadata): listener, publisher, KRaftMetadataCache."""
