"""The in-memory ZooKeeper: versions, zxids, sequential names, ephemerals, sessions, watches.

Synchronous tests drive the sans-I/O core with a MockTime; async tests run on trio with a
MockClock (autojump), so session timeouts of many seconds pass in no wall time.
Several mirror ZooKeeper/Kafka tests named in their docstrings (kafka.zookeeper.ZooKeeperClientTest).
"""

from __future__ import annotations

import anyio
import pytest
import trio.testing

from kafka_ref.common.time import EPOCH_ORIGIN_MS, MockTime
from kafka_ref.zk.zookeeper import (
    BadArgumentsException, BadVersionException, CheckOp, CheckResult, Code, CreateOp, CreateResult,
    DeleteOp, DeleteResult, ErrorResult, EventType, KeeperException, KeeperState,
    NoChildrenForEphemeralsException, NodeExistsException, NoNodeException, NotEmptyException,
    SessionExpiredException, SetDataOp, SetDataResult, Stat, WatchedEvent, ZooKeeper,
)

CONNECTED = WatchedEvent(EventType.NONE, None, KeeperState.SYNC_CONNECTED)


@pytest.fixture
def anyio_backend():
    return ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)})


@pytest.fixture
def time() -> MockTime:
    return MockTime()


@pytest.fixture
def zk(time: MockTime) -> ZooKeeper:
    return ZooKeeper(time)


class Recorder:
    """A watcher that records (name, event) so tests can check order across watchers."""

    def __init__(self, log: list | None = None, name: str = "w") -> None:
        self.log = [] if log is None else log
        self.name = name

    def __call__(self, event: WatchedEvent) -> None:
        self.log.append((self.name, event))


def node_event(event_type: EventType, path: str) -> WatchedEvent:
    return WatchedEvent(event_type, path, KeeperState.SYNC_CONNECTED)


# ---- data, stat and versions -------------------------------------------------------------

def test_create_sets_stat_and_parent_counters(zk: ZooKeeper, time: MockTime) -> None:
    """Mirrors ZooKeeperClientTest#testCreateAndGetData: data, versions, zxids, parent cversion."""
    assert zk.create("/a", b"xy") == "/a"
    time.advance(5)
    assert zk.create("/a/b", b"") == "/a/b"
    data, stat = zk.get_data("/a")
    assert data == b"xy"
    assert stat == Stat(czxid=1, mzxid=1, ctime=EPOCH_ORIGIN_MS, mtime=EPOCH_ORIGIN_MS, version=0,
                        cversion=1, aversion=0, ephemeral_owner=0, data_length=2, num_children=1, pzxid=2)
    assert zk.exists("/a/b") == Stat(2, 2, EPOCH_ORIGIN_MS + 5, EPOCH_ORIGIN_MS + 5, 0, 0, 0, 0, 0, 0, 2)
    assert zk.last_zxid == 2


def test_set_data_with_stale_version_is_bad_version(zk: ZooKeeper, time: MockTime) -> None:
    """Mirrors ZooKeeperClientTest#testSetDataExistingZNode plus a conditional write that loses."""
    zk.create("/n", b"v0")
    time.advance(10)
    stat = zk.set_data("/n", b"v1", version=0)
    assert (stat.version, stat.mzxid, stat.mtime, stat.czxid) == (1, 2, EPOCH_ORIGIN_MS + 10, 1)
    with pytest.raises(BadVersionException) as info:
        zk.set_data("/n", b"stale", version=0)
    assert info.value.code == Code.BADVERSION == -103
    assert info.value.path == "/n"
    assert zk.get_data("/n") == (b"v1", stat)
    assert zk.set_data("/n", b"any", version=-1).version == 2
    with pytest.raises(BadVersionException):
        zk.delete("/n", version=1)
    zk.delete("/n", version=2)
    assert zk.exists("/n") is None


def test_failed_write_still_uses_a_zxid(zk: ZooKeeper) -> None:
    """ZooKeeper logs a failed write as an error transaction, so the zxid advances."""
    zk.create("/a")
    with pytest.raises(NodeExistsException):
        zk.create("/a")
    assert zk.last_zxid == 2
    zk.create("/b")
    assert zk.exists("/b").czxid == 3


def test_create_and_delete_errors(zk: ZooKeeper) -> None:
    """Mirrors ZooKeeperClientTest#testCreateExistingZNode / testDeleteNonExistentZNode."""
    with pytest.raises(NoNodeException) as info:
        zk.create("/missing/child")
    assert str(info.value) == "KeeperErrorCode = NoNode for /missing/child"
    zk.create("/p")
    zk.create("/p/c")
    with pytest.raises(NodeExistsException) as exists:
        zk.create("/p")
    assert exists.value.code == -110
    with pytest.raises(NotEmptyException) as not_empty:
        zk.delete("/p")
    assert str(not_empty.value) == "KeeperErrorCode = Directory not empty for /p"
    with pytest.raises(NoNodeException):
        zk.delete("/nothing")
    with pytest.raises(NoNodeException):
        zk.get_data("/nothing")
    with pytest.raises(NoNodeException):
        zk.get_children("/nothing")
    with pytest.raises(BadArgumentsException):
        zk.delete("/zookeeper")


def test_make_parents_creates_empty_persistent_ancestors(zk: ZooKeeper) -> None:
    assert zk.create("/x/y/z", b"leaf", make_parents=True) == "/x/y/z"
    assert zk.get_data("/x")[0] == b"" and zk.get_data("/x/y")[0] == b""
    assert zk.get_data("/x/y/z")[0] == b"leaf"
    assert [zk.exists(p).czxid for p in ("/x", "/x/y", "/x/y/z")] == [1, 2, 3]


def test_invalid_paths_are_rejected(zk: ZooKeeper) -> None:
    for bad in ("", "a", "/a/", "//a", "/a/./b", "/a/../b"):
        with pytest.raises(ValueError):
            zk.create(bad)


def test_keeper_exception_create_maps_codes() -> None:
    assert type(KeeperException.create(Code.NONODE, "/x")) is NoNodeException
    assert type(KeeperException.create(-103)) is BadVersionException
    assert type(KeeperException.create(Code.SESSIONEXPIRED)) is SessionExpiredException
    assert str(KeeperException.create(Code.NODEEXISTS, "/x")) == "KeeperErrorCode = NodeExists for /x"
    with pytest.raises(ValueError):
        KeeperException.create(Code.OK)


# ---- sequential nodes and children ----------------------------------------------------

def test_sequential_names_come_from_parent_cversion(zk: ZooKeeper) -> None:
    """The suffix is the parent's cversion, which counts child creations and deletions."""
    zk.create("/q")
    assert zk.create("/q/item-", b"a", sequential=True) == "/q/item-0000000000"
    assert zk.create("/q/item-", b"b", sequential=True) == "/q/item-0000000001"
    zk.delete("/q/item-0000000000")
    assert zk.create("/q/other-", sequential=True) == "/q/other-0000000003"
    assert zk.create("/q/item-", sequential=True) == "/q/item-0000000004"
    assert zk.get_children("/q") == ["item-0000000001", "item-0000000004", "other-0000000003"]
    assert zk.exists("/q").cversion == 5


def test_children_are_sorted_and_counted(zk: ZooKeeper) -> None:
    """Mirrors ZooKeeperClientTest#testGetChildrenExistingZNodeWithChildren."""
    zk.create("/p")
    for name in ("b", "c", "a"):
        zk.create(f"/p/{name}")
    assert zk.get_children("/p") == ["a", "b", "c"]
    assert zk.exists("/p").num_children == 3
    assert zk.get_children("/") == ["p", "zookeeper"]
    assert zk.get_children("/zookeeper") == ["config", "quota"]


# ---- ephemeral nodes and sessions ------------------------------------------------------

def test_ephemeral_rules(zk: ZooKeeper) -> None:
    session = zk.open_session(18_000)
    assert session.session_id == 1
    with pytest.raises(BadArgumentsException):
        zk.create("/e", ephemeral=True)
    assert session.create("/e", b"me", ephemeral=True) == "/e"
    assert zk.exists("/e").ephemeral_owner == 1
    with pytest.raises(NoChildrenForEphemeralsException) as info:
        session.create("/e/child")
    assert info.value.code == -108
    assert zk.ephemerals(1) == {"/e"}


def test_expire_session_deletes_ephemerals_and_fires_watches(zk: ZooKeeper) -> None:
    """Expiry on demand: ephemerals go (one zxid), others' watches fire, the owner hears Expired."""
    owner_log: list = []
    owner = zk.open_session(18_000, Recorder(owner_log, "default"))
    observer_log: list = []
    observer = zk.open_session(18_000, Recorder(observer_log, "default"))
    zk.create("/brokers")
    owner.create("/brokers/1", b"", ephemeral=True)
    owner.create("/brokers/2", b"", ephemeral=True)
    owner.get_data("/brokers", watch=Recorder(owner_log, "owner-data"))
    observer.exists("/brokers/1", watch=True)
    observer.get_children("/brokers", watch=True)
    zxid_before = zk.last_zxid

    zk.expire_session(owner.session_id)

    assert zk.get_children("/brokers") == []
    assert zk.last_zxid == zxid_before + 1
    assert zk.exists("/brokers").pzxid == zxid_before + 1
    assert owner.state == KeeperState.EXPIRED and not owner.is_alive
    observer.process_pending_events()
    assert observer_log == [
        ("default", CONNECTED),
        ("default", node_event(EventType.NODE_DELETED, "/brokers/1")),
        ("default", node_event(EventType.NODE_CHILDREN_CHANGED, "/brokers")),
    ]
    owner.process_pending_events()
    expired = WatchedEvent(EventType.NONE, None, KeeperState.EXPIRED)
    assert owner_log == [("default", CONNECTED), ("default", expired), ("owner-data", expired)]
    for call in (lambda: owner.create("/x"), lambda: owner.get_data("/brokers"), owner.heartbeat):
        with pytest.raises(SessionExpiredException):
            call()
    assert zk.watch_count() == 0


def test_close_session_is_clean(zk: ZooKeeper) -> None:
    log: list = []
    session = zk.open_session(18_000, Recorder(log))
    session.create("/e", ephemeral=True)
    session.close()
    assert zk.exists("/e") is None
    session.process_pending_events()
    assert log == [("w", CONNECTED), ("w", WatchedEvent(EventType.NONE, None, KeeperState.CLOSED))]
    with pytest.raises(SessionExpiredException):
        session.exists("/e")


def test_session_expires_after_timeout_without_heartbeat(zk: ZooKeeper, time: MockTime) -> None:
    session = zk.open_session(18_000)
    session.create("/e", ephemeral=True)
    time.advance(10_000)
    session.heartbeat()
    time.advance(17_999)
    assert zk.expire_due_sessions() == []
    time.advance(1)
    assert zk.expire_due_sessions() == [session.session_id]
    assert zk.exists("/e") is None


def test_any_request_keeps_a_session_alive(zk: ZooKeeper, time: MockTime) -> None:
    session = zk.open_session(1_000)
    for _ in range(5):
        time.advance(900)
        session.exists("/")
        assert zk.expire_due_sessions() == []


# ---- one-shot watches ------------------------------------------------------------------

def test_data_watch_fires_once_until_set_again(zk: ZooKeeper) -> None:
    """Watches are one-shot: two changes after one get_data give one event."""
    session = zk.open_session(18_000)
    log: list = []
    watcher = Recorder(log)
    zk.create("/n", b"0")
    session.get_data("/n", watch=watcher)
    zk.set_data("/n", b"1")
    zk.set_data("/n", b"2")
    session.process_pending_events()
    assert log == [("w", node_event(EventType.NODE_DATA_CHANGED, "/n"))]
    session.exists("/n", watch=watcher)
    zk.set_data("/n", b"3")
    session.process_pending_events()
    assert len(log) == 2
    zk.set_data("/n", b"4")
    session.process_pending_events()
    assert len(log) == 2


def test_exists_watch_on_missing_node_fires_created(zk: ZooKeeper) -> None:
    """Mirrors ZooKeeperClientTest#testZNodeChangeHandlerForCreation at the ZooKeeper level."""
    session = zk.open_session(18_000)
    log: list = []
    with pytest.raises(NoNodeException):
        session.get_data("/later", watch=Recorder(log, "get"))
    assert zk.watch_count() == 0
    assert session.exists("/later", watch=Recorder(log, "exists")) is None
    zk.create("/later")
    zk.delete("/later")
    session.process_pending_events()
    assert log == [("exists", node_event(EventType.NODE_CREATED, "/later"))]


def test_child_watch_only_sees_membership(zk: ZooKeeper) -> None:
    """A child watch fires on create/delete of a child, not on data changes of parent or child."""
    session = zk.open_session(18_000)
    log: list = []
    zk.create("/p")
    zk.create("/p/a")
    session.get_children("/p", watch=Recorder(log))
    zk.set_data("/p", b"x")
    zk.set_data("/p/a", b"x")
    session.process_pending_events()
    assert log == []
    zk.create("/p/b")
    session.process_pending_events()
    assert log == [("w", node_event(EventType.NODE_CHILDREN_CHANGED, "/p"))]


def test_delete_event_types_and_order(zk: ZooKeeper) -> None:
    """Deleting a node: NodeDeleted (once per watcher, even with data and child watches), then
    NodeChildrenChanged on the parent."""
    session = zk.open_session(18_000)
    log: list = []
    same = Recorder(log, "same")
    zk.create("/p")
    zk.create("/p/c")
    session.get_data("/p/c", watch=same)
    session.get_children("/p/c", watch=same)
    session.get_children("/p", watch=Recorder(log, "parent"))
    zk.delete("/p/c")
    session.process_pending_events()
    assert log == [("same", node_event(EventType.NODE_DELETED, "/p/c")),
                   ("parent", node_event(EventType.NODE_CHILDREN_CHANGED, "/p"))]


def test_every_callback_on_a_path_gets_the_event(zk: ZooKeeper) -> None:
    session = zk.open_session(18_000)
    log: list = []
    zk.create("/n")
    session.get_data("/n", watch=Recorder(log, "one"))
    session.exists("/n", watch=Recorder(log, "two"))
    other = zk.open_session(18_000)
    other.get_data("/n", watch=Recorder(log, "other"))
    zk.set_data("/n", b"x")
    session.process_pending_events()
    other.process_pending_events()
    changed = node_event(EventType.NODE_DATA_CHANGED, "/n")
    assert log == [("one", changed), ("two", changed), ("other", changed)]


def test_async_watcher_needs_async_delivery(zk: ZooKeeper) -> None:
    session = zk.open_session(18_000)

    async def watcher(event: WatchedEvent) -> None:
        pass

    session.exists("/n", watch=watcher)
    zk.create("/n")
    with pytest.raises(TypeError):
        session.process_pending_events()


def test_failing_watcher_is_logged_and_delivery_continues(zk: ZooKeeper) -> None:
    session = zk.open_session(18_000)
    log: list = []

    def broken(event: WatchedEvent) -> None:
        raise RuntimeError("boom")

    session.exists("/n", watch=broken)
    session.exists("/n", watch=Recorder(log))
    zk.create("/n")
    assert session.process_pending_events() == 2  # no default watcher: no SyncConnected event
    assert [type(e) for e in session.callback_errors] == [RuntimeError]
    assert log == [("w", node_event(EventType.NODE_CREATED, "/n"))]


# ---- multi -----------------------------------------------------------------------------

def test_multi_is_all_or_nothing(zk: ZooKeeper) -> None:
    """A failing op rolls back the ops before it; nothing fires; the error names the op."""
    session = zk.open_session(18_000)
    log: list = []
    zk.create("/m", b"v0")
    session.exists("/m/a", watch=Recorder(log))
    session.get_children("/m", watch=Recorder(log, "children"))
    stat_before = zk.exists("/m")
    ops = [CreateOp("/m/a", b"a"), SetDataOp("/m", b"v1", version=5), CreateOp("/m/b")]
    with pytest.raises(BadVersionException) as info:
        session.multi(ops)
    exc = info.value
    assert exc.failed_op_index == 1 and exc.failed_op == ops[1]
    assert exc.results == [ErrorResult(Code.OK), ErrorResult(Code.BADVERSION),
                           ErrorResult(Code.RUNTIMEINCONSISTENCY)]
    assert "multi op 1 of 3" in str(exc)
    assert zk.exists("/m/a") is None and zk.get_data("/m") == (b"v0", stat_before)
    session.process_pending_events()
    assert log == []
    # the watches are still armed: they fire on the next real change
    zk.create("/m/a")
    session.process_pending_events()
    assert [entry[1].type for entry in log] == [EventType.NODE_CREATED, EventType.NODE_CHILDREN_CHANGED]


def test_multi_commits_in_one_transaction_and_fires_in_op_order(zk: ZooKeeper) -> None:
    session = zk.open_session(18_000)
    log: list = []
    zk.create("/m")
    session.exists("/m/y", watch=Recorder(log))
    session.exists("/m/x", watch=Recorder(log))
    results = session.multi([CheckOp("/m", 0), CreateOp("/m/y", b"y"), CreateOp("/m/x", b"x"),
                             SetDataOp("/m", b"new", 0), DeleteOp("/m/y", 0)])
    zxid = zk.last_zxid
    assert zxid == 3  # 1: the session, 2: /m, 3: the whole multi
    # each result is as of its op: the SetData stat still counts /m/y among the children
    assert results == [CheckResult(), CreateResult("/m/y"), CreateResult("/m/x"),
                       SetDataResult(Stat(2, 3, EPOCH_ORIGIN_MS, EPOCH_ORIGIN_MS, 1, 2, 0, 0, 3, 2, 3)),
                       DeleteResult()]
    assert zk.exists("/m/x").czxid == zxid == zk.exists("/m").mzxid
    assert zk.exists("/m").cversion == 3
    session.process_pending_events()
    # /m/y's watch was used up by its creation, so its deletion in the same multi is not seen
    assert [e[1] for e in log] == [node_event(EventType.NODE_CREATED, "/m/y"),
                                   node_event(EventType.NODE_CREATED, "/m/x")]


def test_multi_check_op_failures(zk: ZooKeeper) -> None:
    zk.create("/c", b"")
    with pytest.raises(BadVersionException):
        zk.multi([CheckOp("/c", 1), CreateOp("/d")])
    with pytest.raises(NoNodeException) as info:
        zk.multi([CreateOp("/d"), CheckOp("/absent", 0)])
    assert info.value.results == [ErrorResult(Code.OK), ErrorResult(Code.NONODE)]
    assert zk.exists("/d") is None
    assert zk.multi([]) == []


# ---- async: delivery and expiry on the loop clock ----------------------------------------

@pytest.mark.anyio
async def test_async_delivery_keeps_per_session_order() -> None:
    """A slow async callback does not let later events overtake it."""
    zk = ZooKeeper()
    session = zk.open_session(18_000)
    seen: list = []

    async def slow(event: WatchedEvent) -> None:
        await anyio.sleep(5)
        seen.append(("slow", event.path, anyio.current_time()))

    def fast(event: WatchedEvent) -> None:
        seen.append(("fast", event.path, anyio.current_time()))

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run_event_delivery)
        session.exists("/a", watch=slow)
        session.exists("/b", watch=fast)
        zk.create("/a")
        zk.create("/b")
        await anyio.sleep(10)
        session.close()
    assert seen == [("slow", "/a", 5.0), ("fast", "/b", 5.0)]


@pytest.mark.anyio
async def test_heartbeats_keep_session_and_crash_expires_it() -> None:
    """The owner's heartbeat loop keeps its ephemeral alive for 40 s of an 18 s timeout; after
    the owner crashes (its task is cancelled) the node goes 18 s after the last ping."""
    zk = ZooKeeper()
    deleted: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(zk.run)
        observer = zk.open_session(18_000)
        tg.start_soon(observer.run)
        owner = zk.open_session(18_000)
        owner.create("/e", b"", ephemeral=True)
        observer.exists("/e", watch=lambda ev: deleted.append((ev, zk.time.milliseconds() - EPOCH_ORIGIN_MS)))
        owner_scope = anyio.CancelScope()

        async def owner_task() -> None:
            with owner_scope:
                await owner.run()

        tg.start_soon(owner_task)
        await anyio.sleep(40)  # pings at 0, 6, ..., 36 s
        assert zk.exists("/e") is not None and owner.is_alive
        owner_scope.cancel()  # the owner crashes
        await anyio.sleep(30)
        assert owner.state == KeeperState.EXPIRED
        assert deleted == [(node_event(EventType.NODE_DELETED, "/e"), 54_000)]
        assert observer.is_alive
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_expiry_loop_wakes_for_a_shorter_new_session() -> None:
    zk = ZooKeeper()
    expired_at: list = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(zk.run)
        zk.open_session(60_000)
        await anyio.sleep(1)
        short = zk.open_session(5_000, lambda ev: expired_at.append((ev.state, anyio.current_time())))
        tg.start_soon(short.run_event_delivery)
        await anyio.sleep(10)
        assert expired_at == [(KeeperState.SYNC_CONNECTED, 1.0), (KeeperState.EXPIRED, 6.0)]
        tg.cancel_scope.cancel()


def test_draining_an_ended_session_twice_is_harmless(zk: ZooKeeper) -> None:
    log: list = []
    session = zk.open_session(18_000, Recorder(log))
    session.close()
    assert session.process_pending_events() == 2
    assert session.process_pending_events() == 0
    assert [e[1].state for e in log] == [KeeperState.SYNC_CONNECTED, KeeperState.CLOSED]
