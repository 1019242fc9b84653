"""Kafka's pipelined ZooKeeper client: requests, responses, watch handlers, session handling.

Mirrors the kafka.zookeeper package of Kafka 3.x: ZooKeeperClient sends requests on the
current session, arms watches for paths that have a registered handler, dispatches watch
events to those handlers, and on session expiry tells the StateChangeHandlers and opens a new
session. Requests answer with a ``ZkResponse`` carrying ZooKeeper's result code, so callers
match on codes like Kafka does. There is no connection loss in one process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from kafka_ref.zk.zookeeper import (
    Code, EventType, KeeperException, KeeperState, Op, OpResult, Stat, WatchedEvent, ZkSession, ZooKeeper,
)


# ---- requests and responses (kafka.zookeeper.AsyncRequest / AsyncResponse) ---------------
@dataclass(frozen=True)
class CreateRequest:
    """Mirrors kafka.zookeeper.CreateRequest (CreateMode as two flags)."""

    path: str
    data: bytes | None
    ephemeral: bool = False
    sequential: bool = False
    ctx: Any = None


@dataclass(frozen=True)
class DeleteRequest:
    """Mirrors kafka.zookeeper.DeleteRequest."""

    path: str
    version: int
    ctx: Any = None


@dataclass(frozen=True)
class ExistsRequest:
    """Mirrors kafka.zookeeper.ExistsRequest."""

    path: str
    ctx: Any = None


@dataclass(frozen=True)
class GetDataRequest:
    """Mirrors kafka.zookeeper.GetDataRequest."""

    path: str
    ctx: Any = None


@dataclass(frozen=True)
class SetDataRequest:
    """Mirrors kafka.zookeeper.SetDataRequest."""

    path: str
    data: bytes | None
    version: int
    ctx: Any = None


@dataclass(frozen=True)
class GetChildrenRequest:
    """Mirrors kafka.zookeeper.GetChildrenRequest."""

    path: str
    register_watch: bool
    ctx: Any = None


@dataclass(frozen=True)
class MultiRequest:
    """Mirrors kafka.zookeeper.MultiRequest."""

    zk_ops: tuple[Op, ...]
    ctx: Any = None

    @property
    def path(self) -> None:
        return None


AsyncRequest = (CreateRequest | DeleteRequest | ExistsRequest | GetDataRequest | SetDataRequest
                | GetChildrenRequest | MultiRequest)


@dataclass
class ZkResponse:
    """Mirrors kafka.zookeeper.AsyncResponse (one class for all response kinds).

    ``name`` is set by a create, ``data`` by a get, ``stat`` by get/exists/set, ``children`` by
    get-children and ``zk_op_results`` (op, result) pairs by a multi.
    """

    result_code: Code
    path: str | None
    ctx: Any = None
    data: bytes | None = None
    stat: Stat | None = None
    name: str | None = None
    children: list[str] = field(default_factory=list)
    zk_op_results: list[tuple[Op, OpResult]] | None = None

    @property
    def result_exception(self) -> KeeperException | None:
        """Mirrors kafka.zookeeper.AsyncResponse#resultException."""
        return None if self.result_code == Code.OK else KeeperException.create(self.result_code, self.path)

    def maybe_throw(self) -> None:
        """Mirrors kafka.zookeeper.AsyncResponse#maybeThrow."""
        if self.result_code != Code.OK:
            raise KeeperException.create(self.result_code, self.path)


# ---- handlers (kafka.zookeeper.*Handler traits; the default bodies do nothing) ------------
class StateChangeHandler:
    """Mirrors kafka.zookeeper.StateChangeHandler: told around a session re-initialisation."""

    name: str = ""

    def before_initializing_session(self) -> None:
        """Mirrors kafka.zookeeper.StateChangeHandler#beforeInitializingSession.

        Called before the expired session is replaced. Default: nothing to do.
        """

    def after_initializing_session(self) -> None:
        """Mirrors kafka.zookeeper.StateChangeHandler#afterInitializingSession.

        Called once the new session is open. Default: nothing to do.
        """

    def on_auth_failure(self) -> None:
        """Mirrors kafka.zookeeper.StateChangeHandler#onAuthFailure.

        Called on an authentication failure. Default: nothing to do.
        """


class ZNodeChangeHandler:
    """Mirrors kafka.zookeeper.ZNodeChangeHandler: creation, deletion, data change of ``path``."""

    path: str = ""

    def handle_creation(self) -> None:
        """Mirrors kafka.zookeeper.ZNodeChangeHandler#handleCreation. Default: nothing to do."""

    def handle_deletion(self) -> None:
        """Mirrors kafka.zookeeper.ZNodeChangeHandler#handleDeletion. Default: nothing to do."""

    def handle_data_change(self) -> None:
        """Mirrors kafka.zookeeper.ZNodeChangeHandler#handleDataChange. Default: nothing to do."""


class ZNodeChildChangeHandler:
    """Mirrors kafka.zookeeper.ZNodeChildChangeHandler: the children of ``path`` changed."""

    path: str = ""

    def handle_child_change(self) -> None:
        """Mirrors kafka.zookeeper.ZNodeChildChangeHandler#handleChildChange. Default: nothing to do."""


class ZooKeeperClient:
    """Mirrors kafka.zookeeper.ZooKeeperClient over the in-memory ZooKeeper.

    A watch is armed only for a path with a registered handler, by the reads that can arm it
    (exists/get-data for a ZNodeChangeHandler, get-children with register_watch for a
    ZNodeChildChangeHandler), exactly as Kafka's ``shouldWatch`` decides.

    Re-arming: ZooKeeper watches are one-shot, and Kafka re-arms them through the reads its
    controller does while handling the event. With ``rearm_watches`` (the default) this client
    also re-arms a fired handler's watch itself, before calling the handler, so a handler fires
    for every later change even if its owner reads nothing. That is safe because the server
    keeps at most one watch per session, path and kind: Kafka's own re-reads add nothing.
    """

    def __init__(self, zookeeper: ZooKeeper, session_timeout_ms: int = 18_000, name: str = "",
                 rearm_watches: bool = True) -> None:
        self.zookeeper = zookeeper
        self.session_timeout_ms = session_timeout_ms
        self.name = name
        self.rearm_watches = rearm_watches
        self.znode_change_handlers: dict[str, ZNodeChangeHandler] = {}
        self.znode_child_change_handlers: dict[str, ZNodeChildChangeHandler] = {}
        self.state_change_handlers: dict[str, StateChangeHandler] = {}
        self._closed = False
        self._session: ZkSession = zookeeper.open_session(session_timeout_ms, self._process)

    @property
    def session(self) -> ZkSession:
        """The current session (a new one after each expiry)."""
        return self._session

    @property
    def session_id(self) -> int:
        """Mirrors kafka.zookeeper.ZooKeeperClient#sessionId."""
        return self._session.session_id

    def connection_state(self) -> KeeperState:
        """Mirrors kafka.zookeeper.ZooKeeperClient#connectionState."""
        return self._session.state

    def handle_request(self, request: AsyncRequest) -> ZkResponse:
        """Mirrors kafka.zookeeper.ZooKeeperClient#handleRequest."""
        return self._send(request)

    def handle_requests(self, requests: Sequence[AsyncRequest]) -> list[ZkResponse]:
        """Mirrors kafka.zookeeper.ZooKeeperClient#handleRequests: responses in request order."""
        return [self._send(request) for request in requests]

    def _send(self, request: AsyncRequest) -> ZkResponse:
        """Mirrors kafka.zookeeper.ZooKeeperClient#send: one request on the current session."""
        session = self._session
        path = request.path
        try:
            if isinstance(request, ExistsRequest):
                stat = session.exists(path, self._should_watch(request))
                code = Code.OK if stat is not None else Code.NONODE
                return ZkResponse(code, path, request.ctx, stat=stat)
            if isinstance(request, GetDataRequest):
                data, stat = session.get_data(path, self._should_watch(request))
                return ZkResponse(Code.OK, path, request.ctx, data=data, stat=stat)
            if isinstance(request, GetChildrenRequest):
                children = session.get_children(path, self._should_watch(request))
                stat = self.zookeeper.exists(path)
                return ZkResponse(Code.OK, path, request.ctx, children=children, stat=stat)
            if isinstance(request, CreateRequest):
                name = session.create(path, request.data, request.ephemeral, request.sequential)
                return ZkResponse(Code.OK, path, request.ctx, name=name)
            if isinstance(request, SetDataRequest):
                stat = session.set_data(path, request.data, request.version)
                return ZkResponse(Code.OK, path, request.ctx, stat=stat)
            if isinstance(request, DeleteRequest):
                session.delete(path, request.version)
                return ZkResponse(Code.OK, path, request.ctx)
            if isinstance(request, MultiRequest):
                results = session.multi(request.zk_ops)
                return ZkResponse(Code.OK, None, request.ctx, zk_op_results=list(zip(request.zk_ops, results)))
        except KeeperException as exc:
            op_results = None
            if isinstance(request, MultiRequest) and exc.results:
                op_results = list(zip(request.zk_ops, exc.results))
            return ZkResponse(exc.code, path, request.ctx, zk_op_results=op_results)
        raise TypeError(f"not a ZooKeeper request: {request!r}")

    def _should_watch(self, request: AsyncRequest) -> bool:
        """Mirrors kafka.zookeeper.ZooKeeperClient#shouldWatch."""
        if isinstance(request, GetChildrenRequest):
            return request.register_watch and request.path in self.znode_child_change_handlers
        return request.path in self.znode_change_handlers

    def register_znode_change_handler(self, handler: ZNodeChangeHandler) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#registerZNodeChangeHandler (local only)."""
        self.znode_change_handlers[handler.path] = handler

    def unregister_znode_change_handler(self, path: str) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#unregisterZNodeChangeHandler."""
        self.znode_change_handlers.pop(path, None)

    def register_znode_child_change_handler(self, handler: ZNodeChildChangeHandler) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#registerZNodeChildChangeHandler (local only)."""
        self.znode_child_change_handlers[handler.path] = handler

    def unregister_znode_child_change_handler(self, path: str) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#unregisterZNodeChildChangeHandler."""
        self.znode_child_change_handlers.pop(path, None)

    def register_state_change_handler(self, handler: StateChangeHandler) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#registerStateChangeHandler."""
        self.state_change_handlers[handler.name] = handler

    def unregister_state_change_handler(self, name: str) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#unregisterStateChangeHandler."""
        self.state_change_handlers.pop(name, None)

    def _process(self, event: WatchedEvent) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient.ZooKeeperClientWatcher#process."""
        # 1. a state event: auth failure goes to the handlers, expiry re-initialises
        if event.path is None:
            if event.state == KeeperState.AUTH_FAILED:
                for handler in list(self.state_change_handlers.values()):
                    handler.on_auth_failure()
            elif event.state == KeeperState.EXPIRED and not self._closed:
                self._session_expiry_handler()
            return
        # 2. a node event goes to the handler registered for its path and kind
        if event.type == EventType.NODE_CHILDREN_CHANGED:
            child_handler = self.znode_child_change_handlers.get(event.path)
            if child_handler is not None:
                self._rearm(GetChildrenRequest(event.path, register_watch=True))
                child_handler.handle_child_change()
            return
        handler = self.znode_change_handlers.get(event.path)
        if handler is None:
            return
        self._rearm(ExistsRequest(event.path))
        if event.type == EventType.NODE_CREATED:
            handler.handle_creation()
        elif event.type == EventType.NODE_DELETED:
            handler.handle_deletion()
        elif event.type == EventType.NODE_DATA_CHANGED:
            handler.handle_data_change()

    def _rearm(self, request: AsyncRequest) -> None:
        if self.rearm_watches and self._session.is_alive:
            self._send(request)

    def _session_expiry_handler(self) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#scheduleSessionExpiryHandler's task.

        Kafka runs this on its expiry scheduler; here it runs in the old session's event
        delivery, right after the Expired event.
        """
        # 1. the handlers learn the session is about to be replaced
        for handler in list(self.state_change_handlers.values()):
            handler.before_initializing_session()
        # 2. initialize: a new session (its watches are gone; handlers stay registered)
        self._session = self.zookeeper.open_session(self.session_timeout_ms, self._process)
        # 3. the handlers re-register what they need on the new session
        for handler in list(self.state_change_handlers.values()):
            handler.after_initializing_session()

    async def run(self) -> None:
        """The client's threads: heartbeats and event delivery, session after session.

        Run it in the owner's task group. If the owner crashes, the heartbeats stop and the
        server expires the session after its timeout.
        """
        while not self._closed:
            session = self._session
            await session.run()
            if self._session is session:
                return

    def process_pending_events(self) -> int:
        """Deliver queued watch events synchronously (no event loop), across a re-initialisation."""
        delivered = 0
        while True:
            session = self._session
            delivered += session.process_pending_events()
            if self._session is session:
                return delivered

    def close(self) -> None:
        """Mirrors kafka.zookeeper.ZooKeeperClient#close: forget handlers, close the session."""
        self._closed = True
        self.znode_change_handlers.clear()
        self.znode_child_change_handlers.clear()
        self.state_change_handlers.clear()
        self._session.close()
