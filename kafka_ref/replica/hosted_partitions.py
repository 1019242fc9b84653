"""ReplicaManager's map of hosted partitions, counting its changes.

Mirrors the ``allPartitions`` pool of kafka.server.ReplicaManager (a map from partition to
HostedPartition). Why a dict subclass: a DelayedProduce or DelayedFetch walks every partition
of its request each time any of them changes (Kafka's tryComplete asks getPartitionOrException
per partition per walk). Those walks keep the Partition objects they resolved and re-resolve
only when ``version`` says a partition was added, replaced or removed since, so each step of a
walk is an attribute read instead of two map lookups. Reads are plain dict reads.
"""

from __future__ import annotations

from typing import Any


class HostedPartitions(dict):
    """A dict whose ``version`` grows on every insertion, replacement and removal."""

    __slots__ = ("version",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version = 0

    def __setitem__(self, key: Any, value: Any) -> None:
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self.version += 1
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:
        self.version += 1
        return super().pop(*args)

    def popitem(self) -> Any:
        self.version += 1
        return super().popitem()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self.version += 1
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.version += 1
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.version += 1
        super().clear()

    def __ior__(self, other: Any) -> "HostedPartitions":
        self.update(other)
        return self
