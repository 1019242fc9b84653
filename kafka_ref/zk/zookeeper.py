"""An in-memory ZooKeeper: znodes, versions, ephemeral nodes, sessions and one-shot watches.

This is the ZooKeeper ensemble of a ZooKeeper-mode Kafka cluster, reduced to one process. It
models what Kafka relies on, with ZooKeeper's own rules:

* Every write is one transaction with its own zxid (a multi is one transaction for all its
  ops; a failed write still uses up a zxid, as ZooKeeper logs an error transaction). Each znode
  carries a ``Stat`` (czxid, mzxid, pzxid, ctime, mtime, version, cversion, aversion,
  ephemeral_owner, data_length, num_children). The broker epoch Kafka uses is a czxid.
* Conditional writes: ``set_data``/``delete``/``CheckOp`` take an expected version (-1 = any)
  and fail with ``BadVersionException``. A sequential create appends the parent's cversion as a
  10-digit number; the cversion counts child creations *and* deletions.
* Sessions: an ephemeral znode belongs to a session and is deleted when the session closes or
  expires. A session stays alive while its owner heartbeats; expiry is checked on the loop clock.
* Watches are one-shot. ``get_data``/``exists`` set a data watch (NodeCreated, NodeDataChanged,
  NodeDeleted), ``get_children`` a child watch (NodeChildrenChanged, NodeDeleted). The server
  keeps one watch per (session, path, kind); the client side of the session remembers which
  callbacks to call and hands each event to them, in order, through the session's queue.

Sans-I/O core, async edges: every operation is a synchronous method (one event loop means each
is atomic, where ZooKeeper serialises requests through its request processors). Event delivery
is asynchronous: each session has an anyio memory stream drained by ``run_event_delivery`` (or
by ``process_pending_events`` with no loop). Heartbeats and the expiry check are async loops on
the loop clock, so with trio's MockClock an 18 s session timeout costs nothing.
"""

from __future__ import annotations

from kafka_ref.common.errors import ControllerMovedException  # noqa: F401 (re-exported for KafkaZkClient)

import inspect
import math
from typing import Any, Callable, Iterable, Sequence

import anyio

from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.time import Time
from kafka_ref.zk.zookeeper_types import (  # noqa: F401  (re-exported: the ZooKeeper API in one place)
    CheckOp, CheckResult, Code, CreateOp, CreateResult, DeleteOp, DeleteResult, ErrorResult, EventType,
    KeeperState, Op, OpResult, SetDataOp, SetDataResult, Stat, WatchedEvent, Watcher, validate_path,
)


# The short text ZooKeeper prints for each code ("KeeperErrorCode = <text> for <path>").
_CODE_TEXT = {
    Code.OK: "ok", Code.SYSTEMERROR: "SystemError", Code.RUNTIMEINCONSISTENCY: "RuntimeInconsistency",
    Code.CONNECTIONLOSS: "ConnectionLoss", Code.BADARGUMENTS: "BadArguments", Code.APIERROR: "APIError",
    Code.NONODE: "NoNode", Code.BADVERSION: "BadVersion",
    Code.NOCHILDRENFOREPHEMERALS: "NoChildrenForEphemerals", Code.NODEEXISTS: "NodeExists",
    Code.NOTEMPTY: "Directory not empty", Code.SESSIONEXPIRED: "Session expired",
}


class KeeperException(Exception):
    """Mirrors org.apache.zookeeper.KeeperException.

    ``code`` is the ZooKeeper result code, ``path`` the path the caller asked about. When a
    multi fails, the exception is the failing op's and also carries ``failed_op_index``,
    ``failed_op`` and ``results`` (one ``ErrorResult`` per op, as ZooKeeper reports them).
    """

    code: Code = Code.SYSTEMERROR

    def __init__(self, path: str | None = None, detail: str | None = None) -> None:
        self.path = path
        self.results: list[OpResult] = []
        self.failed_op_index: int | None = None
        self.failed_op: Op | None = None
        text = f"KeeperErrorCode = {_CODE_TEXT[self.code]}"
        if path is not None:
            text += f" for {path}"
        if detail:
            text += f" ({detail})"
        super().__init__(text)

    @staticmethod
    def create(code: Code | int, path: str | None = None) -> "KeeperException":
        """Mirrors org.apache.zookeeper.KeeperException#create: the exception class for a code."""
        code = Code(code)
        if code == Code.OK:
            raise ValueError("Code.OK is not an error")
        return _EXCEPTION_BY_CODE[code](path)


class SystemErrorException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.SystemErrorException."""

    code = Code.SYSTEMERROR


class RuntimeInconsistencyException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.RuntimeInconsistencyException."""

    code = Code.RUNTIMEINCONSISTENCY


class ConnectionLossException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.ConnectionLossException."""

    code = Code.CONNECTIONLOSS


class BadArgumentsException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.BadArgumentsException."""

    code = Code.BADARGUMENTS


class APIErrorException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.APIErrorException."""

    code = Code.APIERROR


class NoNodeException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.NoNodeException."""

    code = Code.NONODE


class BadVersionException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.BadVersionException."""

    code = Code.BADVERSION


class NoChildrenForEphemeralsException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.NoChildrenForEphemeralsException."""

    code = Code.NOCHILDRENFOREPHEMERALS


class NodeExistsException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.NodeExistsException."""

    code = Code.NODEEXISTS


class NotEmptyException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.NotEmptyException."""

    code = Code.NOTEMPTY


class SessionExpiredException(KeeperException):
    """Mirrors org.apache.zookeeper.KeeperException.SessionExpiredException."""

    code = Code.SESSIONEXPIRED


_EXCEPTION_BY_CODE: dict[Code, type[KeeperException]] = {
    cls.code: cls
    for cls in (SystemErrorException, RuntimeInconsistencyException, ConnectionLossException,
                BadArgumentsException, APIErrorException, NoNodeException, BadVersionException,
                NoChildrenForEphemeralsException, NodeExistsException, NotEmptyException,
                SessionExpiredException)
}


class _ZNode:
    """Mirrors org.apache.zookeeper.server.DataNode: data, stat fields and child names."""

    __slots__ = ("data", "czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion",
                 "ephemeral_owner", "pzxid", "children")

    def __init__(self, data: bytes, zxid: int, now: int, ephemeral_owner: int) -> None:
        self.data = data
        self.czxid = self.mzxid = self.pzxid = zxid
        self.ctime = self.mtime = now
        self.version = self.cversion = self.aversion = 0
        self.ephemeral_owner = ephemeral_owner
        self.children: set[str] = set()

    def stat(self) -> Stat:
        """Mirrors org.apache.zookeeper.server.DataNode#copyStat: a snapshot of the stat."""
        return Stat(self.czxid, self.mzxid, self.ctime, self.mtime, self.version, self.cversion,
                    self.aversion, self.ephemeral_owner, len(self.data), len(self.children),
                    self.pzxid)


def _parent_of(path: str) -> str:
    return path[: path.rfind("/")] or "/"


class _Txn:
    """One transaction being applied: its zxid, an undo log and the watch triggers to fire."""

    __slots__ = ("zxid", "now", "undo", "triggers")

    def __init__(self, zxid: int, now: int) -> None:
        self.zxid = zxid
        self.now = now
        self.undo: list[Callable[[], None]] = []
        self.triggers: list[Callable[[], None]] = []


class ZkSession:
    """Mirrors org.apache.zookeeper.ZooKeeper (a client handle) with the server's session record.

    Operations take ``watch``: False/None for none, True for the session's default watcher (as
    ZooKeeper's ``boolean watch`` overloads), or a callable. The client-side watch tables mirror
    ZooKeeper's ZKWatchManager (data, exist and child watches); ``_materialize`` picks the
    callbacks an event goes to and removes them (one-shot). Events wait in an unbounded anyio
    memory stream, delivered in order by ``run_event_delivery`` or ``process_pending_events``.
    A callback that raises does not stop delivery (ZooKeeper's event thread logs and goes on);
    the exception is kept in ``callback_errors``.
    """

    def __init__(self, zookeeper: "ZooKeeper", session_id: int, timeout_ms: int,
                 watcher: Watcher | None, now_ms: int) -> None:
        self.zookeeper = zookeeper
        self.session_id = session_id
        self.timeout_ms = timeout_ms
        self.watcher = watcher
        self.state = KeeperState.SYNC_CONNECTED
        self.last_heard_ms = now_ms
        self.callback_errors: list[BaseException] = []
        self._data_watches: dict[str, dict[Watcher, None]] = {}
        self._exist_watches: dict[str, dict[Watcher, None]] = {}
        self._child_watches: dict[str, dict[Watcher, None]] = {}
        self._send, self._receive = anyio.create_memory_object_stream[tuple[Watcher, WatchedEvent]](math.inf)

    def __repr__(self) -> str:
        return f"ZkSession(0x{self.session_id:x}, {self.state.name})"

    @property
    def is_alive(self) -> bool:
        """Mirrors org.apache.zookeeper.ZooKeeper.States#isAlive: not closed, expired or failed."""
        return self.state not in (KeeperState.CLOSED, KeeperState.EXPIRED, KeeperState.AUTH_FAILED)

    # ---- keep-alive -------------------------------------------------------------------
    def heartbeat(self) -> None:
        """Mirrors org.apache.zookeeper.ClientCnxn.SendThread#sendPing: touch the session."""
        if not self.is_alive:
            raise SessionExpiredException(detail=f"session 0x{self.session_id:x} is {self.state.name}")
        self.zookeeper._touch(self.session_id)

    async def run_heartbeat(self) -> None:
        """Mirrors the ping loop of ClientCnxn.SendThread: ping every timeout/3 while alive.

        The owner runs this in its task group; when the owner crashes the loop stops and the
        server expires the session ``timeout_ms`` after the last ping.
        """
        interval_s = self.timeout_ms / 3 / 1000
        while self.is_alive:
            self.heartbeat()
            await anyio.sleep(interval_s)

    async def run_event_delivery(self) -> None:
        """Mirrors org.apache.zookeeper.ClientCnxn.EventThread: call watchers in queue order.

        Callbacks may be plain functions or coroutine functions. Returns once the session has
        ended and its last (Expired/Closed) event has been delivered.
        """
        try:
            async for watcher, event in self._receive:
                try:
                    result = watcher(event)
                    if inspect.isawaitable(result):
                        await result
                except RUN_ENDING:
                    raise
                except Exception as exc:  # ZooKeeper's event thread logs and carries on
                    self.callback_errors.append(exc)
        except anyio.ClosedResourceError:  # already drained to the end before
            return
        self._receive.close()

    def process_pending_events(self) -> int:
        """Deliver queued events now, synchronously (for code running without an event loop)."""
        delivered = 0
        while True:
            try:
                watcher, event = self._receive.receive_nowait()
            except (anyio.WouldBlock, anyio.ClosedResourceError):
                return delivered
            except anyio.EndOfStream:
                self._receive.close()
                return delivered
            delivered += 1
            try:
                result = watcher(event)
            except RUN_ENDING:
                raise
            except Exception as exc:
                self.callback_errors.append(exc)
                continue
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise TypeError(f"watcher {watcher!r} is async: deliver with run_event_delivery()")

    async def run(self) -> None:
        """Run the heartbeat and the event delivery until the session ends."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.run_heartbeat)
            await self.run_event_delivery()
            tg.cancel_scope.cancel()

    def close(self) -> None:
        """Mirrors org.apache.zookeeper.ZooKeeper#close: end the session cleanly."""
        self.zookeeper.close_session(self.session_id)

    # ---- operations (delegate to the server with this session) --------------------------
    def create(self, path: str, data: bytes | None = b"", ephemeral: bool = False,
               sequential: bool = False, make_parents: bool = False) -> str:
        """Mirrors org.apache.zookeeper.ZooKeeper#create."""
        return self.zookeeper.create(path, data, session_id=self.session_id, ephemeral=ephemeral,
                                     sequential=sequential, make_parents=make_parents)

    def get_data(self, path: str, watch: bool | Watcher | None = None) -> tuple[bytes, Stat]:
        """Mirrors org.apache.zookeeper.ZooKeeper#getData."""
        return self.zookeeper.get_data(path, self._watcher_for(watch), session_id=self.session_id)

    def exists(self, path: str, watch: bool | Watcher | None = None) -> Stat | None:
        """Mirrors org.apache.zookeeper.ZooKeeper#exists."""
        return self.zookeeper.exists(path, self._watcher_for(watch), session_id=self.session_id)

    def get_children(self, path: str, watch: bool | Watcher | None = None) -> list[str]:
        """Mirrors org.apache.zookeeper.ZooKeeper#getChildren."""
        return self.zookeeper.get_children(path, self._watcher_for(watch), session_id=self.session_id)

    def set_data(self, path: str, data: bytes | None, version: int = -1) -> Stat:
        """Mirrors org.apache.zookeeper.ZooKeeper#setData."""
        return self.zookeeper.set_data(path, data, version, session_id=self.session_id)

    def delete(self, path: str, version: int = -1) -> None:
        """Mirrors org.apache.zookeeper.ZooKeeper#delete."""
        self.zookeeper.delete(path, version, session_id=self.session_id)

    def multi(self, ops: Sequence[Op]) -> list[OpResult]:
        """Mirrors org.apache.zookeeper.ZooKeeper#multi."""
        return self.zookeeper.multi(ops, session_id=self.session_id)

    # ---- client-side watch bookkeeping (ZKWatchManager) ---------------------------------
    def _watcher_for(self, watch: bool | Watcher | None) -> Watcher | None:
        if watch is None or watch is False:
            return None
        if watch is True:
            if self.watcher is None:
                raise ValueError("watch=True needs the session's default watcher")
            return self.watcher
        return watch

    def _add_watch(self, table: dict[str, dict[Watcher, None]], path: str, watcher: Watcher) -> None:
        table.setdefault(path, {})[watcher] = None

    def _materialize(self, event: WatchedEvent) -> list[Watcher]:
        """Mirrors org.apache.zookeeper.ZKWatchManager#materialize: who gets this event."""
        result: dict[Watcher, None] = {}
        if event.type == EventType.NONE:
            # 1. a state change goes to the default watcher and to every registered watcher;
            #    once the session is no longer connected the registrations are forgotten
            if self.watcher is not None:
                result[self.watcher] = None
            for table in (self._data_watches, self._exist_watches, self._child_watches):
                for watchers in table.values():
                    result.update(watchers)
                if event.state != KeeperState.SYNC_CONNECTED:
                    table.clear()
            return list(result)
        path = event.path
        assert path is not None
        # 2. a node event removes the watches its type consumes (one-shot)
        if event.type in (EventType.NODE_CREATED, EventType.NODE_DATA_CHANGED, EventType.NODE_DELETED):
            result.update(self._data_watches.pop(path, {}))
            result.update(self._exist_watches.pop(path, {}))
        if event.type in (EventType.NODE_CHILDREN_CHANGED, EventType.NODE_DELETED):
            result.update(self._child_watches.pop(path, {}))
        return list(result)

    def _queue_event(self, event: WatchedEvent) -> None:
        for watcher in self._materialize(event):
            self._send.send_nowait((watcher, event))


class ZooKeeper:
    """Mirrors org.apache.zookeeper.server.ZooKeeperServer with its DataTree and SessionTracker.

    The synchronous methods are the whole server: call them from a REPL or a test with no event
    loop (give it a ``MockTime`` then). ``run`` is the session tracker's expiry loop; start it
    in a task group when the clock is the event loop's.
    """

    # ZooKeeper's own nodes, present in every tree and never deletable.
    SPECIAL_PATHS = ("/zookeeper", "/zookeeper/config", "/zookeeper/quota")

    def __init__(self, time: Time | None = None) -> None:
        self.time = time if time is not None else Time()
        self.last_zxid = 0
        self._nodes: dict[str, _ZNode] = {"/": _ZNode(b"", 0, 0, 0)}
        for path in self.SPECIAL_PATHS:
            self._nodes[path] = _ZNode(b"", 0, 0, 0)
            self._nodes[_parent_of(path)].children.add(path.rsplit("/", 1)[1])
        self._data_watches: dict[str, dict[int, None]] = {}
        self._child_watches: dict[str, dict[int, None]] = {}
        self._sessions: dict[int, ZkSession] = {}
        self._ephemerals: dict[int, set[str]] = {}
        self._next_session_id = 1
        self._session_added: anyio.Event | None = None

    # ---- sessions ----------------------------------------------------------------------
    def open_session(self, timeout_ms: int, watcher: Watcher | None = None) -> ZkSession:
        """Mirrors org.apache.zookeeper.server.SessionTrackerImpl#createSession.

        Creating a session is a transaction (it uses a zxid). The default watcher first gets
        a SyncConnected state event, as a ZooKeeper client does on connecting.
        """
        if timeout_ms <= 0:
            raise ValueError(f"session timeout must be positive, got {timeout_ms}")
        # 1. allocate the session id and log the createSession transaction
        session_id = self._next_session_id
        self._next_session_id += 1
        self.last_zxid += 1
        # 2. track it from now, and wake the expiry loop (a new deadline may be the nearest)
        session = ZkSession(self, session_id, timeout_ms, watcher, self._now())
        self._sessions[session_id] = session
        if self._session_added is not None:
            self._session_added.set()
        # 3. the client hears it is connected
        session._queue_event(WatchedEvent(EventType.NONE, None, KeeperState.SYNC_CONNECTED))
        return session

    def session(self, session_id: int) -> ZkSession | None:
        """The live session with this id, or None."""
        return self._sessions.get(session_id)

    def close_session(self, session_id: int) -> None:
        """Mirrors org.apache.zookeeper.server.ZooKeeperServer#closeSession (a clean close)."""
        self._end_session(session_id, KeeperState.CLOSED)

    def expire_session(self, session_id: int) -> None:
        """Mirrors org.apache.zookeeper.server.ZooKeeperServer#expire: expire a session now."""
        self._end_session(session_id, KeeperState.EXPIRED)

    def expire_due_sessions(self, now_ms: int | None = None) -> list[int]:
        """Mirrors org.apache.zookeeper.server.SessionTrackerImpl#run (one pass).

        Expires every session not heard from for its whole timeout; returns their ids.
        """
        now = self._now() if now_ms is None else now_ms
        due = [sid for sid, s in self._sessions.items() if now >= s.last_heard_ms + s.timeout_ms]
        for session_id in due:
            self.expire_session(session_id)
        return due

    async def run(self) -> None:
        """Mirrors the SessionTrackerImpl thread: expire sessions on the loop clock, forever."""
        while True:
            # 1. expire whatever is due
            self.expire_due_sessions()
            # 2. sleep until the nearest deadline, or until a new session arrives
            wakeup = anyio.Event()
            self._session_added = wakeup
            deadlines = [s.last_heard_ms + s.timeout_ms for s in self._sessions.values()]
            if deadlines:
                delay_ms = max(min(deadlines) - self._now(), 1)
                with anyio.move_on_after(delay_ms / 1000):
                    await wakeup.wait()
            else:
                await wakeup.wait()

    def _end_session(self, session_id: int, state: KeeperState) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return
        # 1. the session is gone: later requests with it fail with SessionExpired
        session.state = state
        # 2. its connection goes away, and with it its server-side watches
        for table in (self._data_watches, self._child_watches):
            for path in [p for p, sids in table.items() if session_id in sids]:
                del table[path][session_id]
                if not table[path]:
                    del table[path]
        # 3. the closeSession transaction deletes its ephemeral nodes (one zxid for all),
        #    firing the watches other sessions hold on them and on their parents
        self.last_zxid += 1
        txn = _Txn(self.last_zxid, self._now())
        for path in sorted(self._ephemerals.pop(session_id, set())):
            self._do_delete(txn, path, -1)
        for fire in txn.triggers:
            fire()
        # 4. the client learns it is expired (or closed); then its event queue ends
        session._queue_event(WatchedEvent(EventType.NONE, None, state))
        session._send.close()

    def _touch(self, session_id: int) -> None:
        self._sessions[session_id].last_heard_ms = self._now()

    def _check_session(self, session_id: int | None, path: str | None) -> None:
        """Mirrors SessionTrackerImpl#checkSession: a request of a dead session is refused."""
        if session_id is None:
            return
        session = self._sessions.get(session_id)
        if session is None or not session.is_alive:
            raise SessionExpiredException(path, f"session 0x{session_id:x}")
        session.last_heard_ms = self._now()

    def _now(self) -> int:
        return self.time.milliseconds()

    # ---- reads -------------------------------------------------------------------------
    def get_data(self, path: str, watch: Watcher | None = None,
                 session_id: int | None = None) -> tuple[bytes, Stat]:
        """Mirrors org.apache.zookeeper.server.DataTree#getData (with the request's watch)."""
        validate_path(path)
        self._check_session(session_id, path)
        node = self._nodes.get(path)
        # 1. a missing node is NoNode, and no watch is left behind
        if node is None:
            raise NoNodeException(path)
        # 2. read the data and stat, then leave a data watch
        if watch is not None:
            session = self._watching_session(session_id)
            self._data_watches.setdefault(path, {})[session.session_id] = None
            session._add_watch(session._data_watches, path, watch)
        return node.data, node.stat()

    def exists(self, path: str, watch: Watcher | None = None, session_id: int | None = None) -> Stat | None:
        """Mirrors org.apache.zookeeper.server.DataTree#statNode (exists with a watch).

        Unlike get_data, a watch is left even when the node is missing: it fires NodeCreated.
        """
        validate_path(path)
        self._check_session(session_id, path)
        node = self._nodes.get(path)
        if watch is not None:
            # 1. the server keeps the watch in its data-watch table either way
            session = self._watching_session(session_id)
            self._data_watches.setdefault(path, {})[session.session_id] = None
            # 2. the client files it as a data watch or, for a missing node, an exist watch
            table = session._data_watches if node is not None else session._exist_watches
            session._add_watch(table, path, watch)
        return None if node is None else node.stat()

    def get_children(self, path: str, watch: Watcher | None = None,
                     session_id: int | None = None) -> list[str]:
        """Mirrors org.apache.zookeeper.server.DataTree#getChildren (names sorted here)."""
        validate_path(path)
        self._check_session(session_id, path)
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeException(path)
        if watch is not None:
            session = self._watching_session(session_id)
            self._child_watches.setdefault(path, {})[session.session_id] = None
            session._add_watch(session._child_watches, path, watch)
        return sorted(node.children)

    def _watching_session(self, session_id: int | None) -> ZkSession:
        if session_id is None:
            raise ValueError("a watch needs a session to deliver its events")
        return self._sessions[session_id]

    # ---- writes ------------------------------------------------------------------------
    def create(self, path: str, data: bytes | None = b"", session_id: int | None = None,
               ephemeral: bool = False, sequential: bool = False, make_parents: bool = False) -> str:
        """Mirrors org.apache.zookeeper.server.PrepRequestProcessor (create) + DataTree#createNode.

        Returns the actual path (with the sequence suffix for a sequential node).
        ``make_parents`` first creates missing ancestors as empty persistent nodes, each in
        its own transaction (what Kafka's ``createRecursive`` does with several requests).
        """
        validate_path(path, sequential)
        if ephemeral and session_id is None:
            raise BadArgumentsException(path, "an ephemeral node needs a session")
        if make_parents:
            ancestors = []
            parent = _parent_of(path)
            while parent != "/" and parent not in self._nodes:
                ancestors.append(parent)
                parent = _parent_of(parent)
            for ancestor in reversed(ancestors):
                try:
                    self._write(session_id, ancestor, lambda txn, p=ancestor: self._do_create(txn, p, b"", 0, False))
                except NodeExistsException:
                    pass
        owner = session_id if ephemeral else 0
        return self._write(session_id, path, lambda txn: self._do_create(txn, path, data, owner, sequential))

    def set_data(self, path: str, data: bytes | None, version: int = -1, session_id: int | None = None) -> Stat:
        """Mirrors org.apache.zookeeper.server.DataTree#setData with the version check."""
        validate_path(path)
        return self._write(session_id, path, lambda txn: self._do_set_data(txn, path, data, version))

    def delete(self, path: str, version: int = -1, session_id: int | None = None) -> None:
        """Mirrors org.apache.zookeeper.server.DataTree#deleteNode with the version check."""
        validate_path(path)
        self._write(session_id, path, lambda txn: self._do_delete(txn, path, version))

    def multi(self, ops: Sequence[Op], session_id: int | None = None) -> list[OpResult]:
        """Mirrors org.apache.zookeeper.ZooKeeper#multi: all ops or none, in one transaction.

        On failure nothing is applied, no watch fires, and the failing op's exception is raised
        with ``results`` as ZooKeeper reports them: OK for the ops before it, its own code, and
        RuntimeInconsistency for the ops after it.
        """
        ops = list(ops)
        # 1. the client validates every path before sending
        for op in ops:
            validate_path(op.path, isinstance(op, CreateOp) and op.sequential)
            if isinstance(op, CreateOp) and op.ephemeral and session_id is None:
                raise BadArgumentsException(op.path, "an ephemeral node needs a session")
        # 2. one session check and one zxid for the whole transaction
        self._check_session(session_id, None)
        self.last_zxid += 1
        txn = _Txn(self.last_zxid, self._now())
        results: list[OpResult] = []
        for index, op in enumerate(ops):
            try:
                results.append(self._apply_op(txn, op, session_id))
            except KeeperException as exc:
                # 3. a failed op rolls back every op before it
                for undo in reversed(txn.undo):
                    undo()
                exc.failed_op_index = index
                exc.failed_op = op
                exc.results = ([ErrorResult(Code.OK)] * index + [ErrorResult(exc.code)]
                               + [ErrorResult(Code.RUNTIMEINCONSISTENCY)] * (len(ops) - index - 1))
                exc.args = (f"{exc.args[0]} in multi op {index} of {len(ops)}: {op!r}",)
                raise
        # 4. committed: fire the watches in op order
        for fire in txn.triggers:
            fire()
        return results

    def _apply_op(self, txn: _Txn, op: Op, session_id: int | None) -> OpResult:
        if isinstance(op, CreateOp):
            owner = session_id if op.ephemeral else 0
            return CreateResult(self._do_create(txn, op.path, op.data, owner or 0, op.sequential))
        if isinstance(op, DeleteOp):
            self._do_delete(txn, op.path, op.version)
            return DeleteResult()
        if isinstance(op, SetDataOp):
            return SetDataResult(self._do_set_data(txn, op.path, op.data, op.version))
        if isinstance(op, CheckOp):
            node = self._nodes.get(op.path)
            if node is None:
                raise NoNodeException(op.path)
            if op.version != -1 and op.version != node.version:
                raise BadVersionException(op.path, f"expected version {op.version}, found {node.version}")
            return CheckResult()
        raise TypeError(f"not a multi op: {op!r}")

    def _write(self, session_id: int | None, path: str, apply: Callable[[_Txn], Any]) -> Any:
        """One single-op transaction: a zxid (used up even on failure), then apply or undo."""
        self._check_session(session_id, path)
        self.last_zxid += 1
        txn = _Txn(self.last_zxid, self._now())
        try:
            result = apply(txn)
        except KeeperException:
            for undo in reversed(txn.undo):
                undo()
            raise
        for fire in txn.triggers:
            fire()
        return result

    def _do_create(self, txn: _Txn, path: str, data: bytes | None, owner: int, sequential: bool) -> str:
        # 1. the parent must exist
        parent_path = _parent_of(path)
        parent = self._nodes.get(parent_path)
        if parent is None:
            raise NoNodeException(path)
        # 2. a sequential name takes the parent's cversion as a 10-digit suffix
        if sequential:
            path = f"{path}{parent.cversion:010d}"
        # 3. the node must not exist, and the parent must not be ephemeral
        if path in self._nodes:
            raise NodeExistsException(path)
        if parent.ephemeral_owner != 0:
            raise NoChildrenForEphemeralsException(path)
        # 4. add it; the parent's cversion and pzxid move
        name = path.rsplit("/", 1)[1]
        saved = (parent.cversion, parent.pzxid)
        self._nodes[path] = _ZNode(bytes(data or b""), txn.zxid, txn.now, owner)
        parent.children.add(name)
        parent.cversion += 1
        parent.pzxid = txn.zxid
        if owner:
            self._ephemerals.setdefault(owner, set()).add(path)

        def undo() -> None:
            del self._nodes[path]
            parent.children.discard(name)
            parent.cversion, parent.pzxid = saved
            if owner:
                self._ephemerals[owner].discard(path)

        txn.undo.append(undo)
        # 5. watches: NodeCreated on the path, NodeChildrenChanged on the parent
        txn.triggers.append(lambda: self._trigger(self._data_watches, path, EventType.NODE_CREATED))
        txn.triggers.append(lambda: self._trigger(self._child_watches, parent_path, EventType.NODE_CHILDREN_CHANGED))
        return path

    def _do_delete(self, txn: _Txn, path: str, version: int) -> None:
        # 1. ZooKeeper's own nodes and the root cannot go
        if path == "/" or path in self.SPECIAL_PATHS:
            raise BadArgumentsException(path, "cannot delete a ZooKeeper system node")
        # 2. the node must exist, the version match, and it must have no children
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeException(path)
        if version != -1 and version != node.version:
            raise BadVersionException(path, f"expected version {version}, found {node.version}")
        if node.children:
            raise NotEmptyException(path)
        # 3. remove it; the parent's cversion and pzxid move
        parent_path = _parent_of(path)
        parent = self._nodes[parent_path]
        name = path.rsplit("/", 1)[1]
        saved = (parent.cversion, parent.pzxid)
        del self._nodes[path]
        parent.children.discard(name)
        parent.cversion += 1
        parent.pzxid = txn.zxid
        owned = self._ephemerals.get(node.ephemeral_owner)
        if owned is not None:
            owned.discard(path)

        def undo() -> None:
            self._nodes[path] = node
            parent.children.add(name)
            parent.cversion, parent.pzxid = saved
            if owned is not None:
                owned.add(path)

        txn.undo.append(undo)

        # 4. watches: NodeDeleted to data watchers, then to child watchers not told already,
        #    then NodeChildrenChanged on the parent
        def fire() -> None:
            told = self._trigger(self._data_watches, path, EventType.NODE_DELETED)
            self._trigger(self._child_watches, path, EventType.NODE_DELETED, told)
            self._trigger(self._child_watches, parent_path, EventType.NODE_CHILDREN_CHANGED)

        txn.triggers.append(fire)

    def _do_set_data(self, txn: _Txn, path: str, data: bytes | None, version: int) -> Stat:
        # 1. the node must exist and the version match
        node = self._nodes.get(path)
        if node is None:
            raise NoNodeException(path)
        if version != -1 and version != node.version:
            raise BadVersionException(path, f"expected version {version}, found {node.version}")
        # 2. new data, version + 1, mzxid and mtime move
        saved = (node.data, node.version, node.mzxid, node.mtime)
        node.data = bytes(data or b"")
        node.version += 1
        node.mzxid = txn.zxid
        node.mtime = txn.now

        def undo() -> None:
            node.data, node.version, node.mzxid, node.mtime = saved

        txn.undo.append(undo)
        # 3. watches: NodeDataChanged on the path
        txn.triggers.append(lambda: self._trigger(self._data_watches, path, EventType.NODE_DATA_CHANGED))
        return node.stat()

    def _trigger(self, table: dict[str, dict[int, None]], path: str, event_type: EventType,
                 suppress: Iterable[int] = ()) -> set[int]:
        """Mirrors org.apache.zookeeper.server.WatchManager#triggerWatch: one-shot delivery."""
        sessions = table.pop(path, None)
        if not sessions:
            return set()
        skip = set(suppress)
        event = WatchedEvent(event_type, path)
        for session_id in sessions:
            session = self._sessions.get(session_id)
            if session_id not in skip and session is not None:
                session._queue_event(event)
        return set(sessions)

    # ---- inspection --------------------------------------------------------------------
    def ephemerals(self, session_id: int) -> set[str]:
        """Mirrors org.apache.zookeeper.server.DataTree#getEphemerals: paths a session owns."""
        return set(self._ephemerals.get(session_id, ()))

    def watch_count(self) -> int:
        """Server-side watches outstanding (data + child), as ZooKeeper's 'wchc' counts them."""
        return sum(len(s) for s in self._data_watches.values()) + sum(len(s) for s in self._child_watches.values())
