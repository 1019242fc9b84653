"""ZooKeeper's data types: result codes, Stat, watch events, multi ops and their results.

Mirrors the parts of the org.apache.zookeeper client API that requests and answers are made
of (KeeperException.Code, data.Stat, WatchedEvent, Watcher.Event, Op, OpResult, PathUtils).
The server and sessions that use them live in ``kafka_ref.zk.zookeeper``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Callable


class Code(IntEnum):
    """Mirrors org.apache.zookeeper.KeeperException.Code (the values ZooKeeper sends)."""

    OK = 0
    SYSTEMERROR = -1
    RUNTIMEINCONSISTENCY = -2
    CONNECTIONLOSS = -4
    BADARGUMENTS = -8
    APIERROR = -100
    NONODE = -101
    BADVERSION = -103
    NOCHILDRENFOREPHEMERALS = -108
    NODEEXISTS = -110
    NOTEMPTY = -111
    SESSIONEXPIRED = -112


@dataclass(frozen=True, slots=True)
class Stat:
    """Mirrors org.apache.zookeeper.data.Stat: a znode's metadata at the time it was read."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int


class EventType(IntEnum):
    """Mirrors org.apache.zookeeper.Watcher.Event.EventType (ZooKeeper's integer values)."""

    NONE = -1
    NODE_CREATED = 1
    NODE_DELETED = 2
    NODE_DATA_CHANGED = 3
    NODE_CHILDREN_CHANGED = 4


class KeeperState(IntEnum):
    """Mirrors org.apache.zookeeper.Watcher.Event.KeeperState (ZooKeeper's integer values)."""

    DISCONNECTED = 0
    SYNC_CONNECTED = 3
    AUTH_FAILED = 4
    CLOSED = 7
    EXPIRED = -112


@dataclass(frozen=True, slots=True)
class WatchedEvent:
    """Mirrors org.apache.zookeeper.WatchedEvent: a node event (path set) or a state event."""

    type: EventType
    path: str | None
    state: KeeperState = KeeperState.SYNC_CONNECTED


Watcher = Callable[[WatchedEvent], Any]


@dataclass(frozen=True, slots=True)
class CreateOp:
    """Mirrors org.apache.zookeeper.Op.Create (CreateMode given as two flags)."""

    path: str
    data: bytes | None = b""
    ephemeral: bool = False
    sequential: bool = False


@dataclass(frozen=True, slots=True)
class DeleteOp:
    """Mirrors org.apache.zookeeper.Op.Delete."""

    path: str
    version: int = -1


@dataclass(frozen=True, slots=True)
class SetDataOp:
    """Mirrors org.apache.zookeeper.Op.SetData."""

    path: str
    data: bytes | None
    version: int = -1


@dataclass(frozen=True, slots=True)
class CheckOp:
    """Mirrors org.apache.zookeeper.Op.Check: fails the multi unless the version matches."""

    path: str
    version: int


Op = CreateOp | DeleteOp | SetDataOp | CheckOp


@dataclass(frozen=True, slots=True)
class CreateResult:
    """Mirrors org.apache.zookeeper.OpResult.CreateResult (the actual path created)."""

    path: str


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """Mirrors org.apache.zookeeper.OpResult.DeleteResult."""


@dataclass(frozen=True, slots=True)
class SetDataResult:
    """Mirrors org.apache.zookeeper.OpResult.SetDataResult (the stat after the write)."""

    stat: Stat


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Mirrors org.apache.zookeeper.OpResult.CheckResult."""


@dataclass(frozen=True, slots=True)
class ErrorResult:
    """Mirrors org.apache.zookeeper.OpResult.ErrorResult: one op's code in a failed multi."""

    err: Code


OpResult = CreateResult | DeleteResult | SetDataResult | CheckResult | ErrorResult


def validate_path(path: str, sequential: bool = False) -> None:
    """Mirrors org.apache.zookeeper.common.PathUtils#validatePath (client-side check)."""
    if sequential:
        path = path + "1"
    if not isinstance(path, str) or not path:
        raise ValueError("Path length must be > 0")
    if path[0] != "/":
        raise ValueError(f"Path must start with / character: {path!r}")
    if path == "/":
        return
    if path.endswith("/"):
        raise ValueError(f"Path must not end with / character: {path!r}")
    for name in path[1:].split("/"):
        if name in ("", ".", "..") or "\x00" in name:
            raise ValueError(f"Invalid path string {path!r}: bad node name {name!r}")
