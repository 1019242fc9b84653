"""A broker as clients and replica selectors see it: id, address and rack."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Node:
    """Mirrors org.apache.kafka.common.Node: a broker as the client knows it (rack None: not set)."""

    id: int
    host: str = ""
    port: int = -1
    rack: str | None = None

    @classmethod
    def no_node(cls) -> "Node":
        """Mirrors Node#noNode: the stand-in for a broker without an endpoint (id -1)."""
        return cls(-1, "", -1)

    def is_empty(self) -> bool:
        """Mirrors Node#isEmpty."""
        return self.host == "" or self.port < 0
