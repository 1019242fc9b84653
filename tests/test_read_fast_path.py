"""The leader's hot-path read helper gives exactly what Kafka's full read chain gives.

ReplicaManager._follower_read_at_log_end stands for the ``read`` closure of
ReplicaManager#readFromLog → Partition#fetchRecords → #readRecords → UnifiedLog#read →
LocalLog#read → Partition#updateFollowerFetchState when a follower fetches at the leader's log end.
Over many partition and fetch states (hypothesis), two identically built brokers take the fetch,
one through the helper and one through the full chain (``_read``): whenever the helper answers,
the LogReadResult, the follower's replica state, the ISR, the HW and the AlterPartition
submissions must be the same; when it declines (returns None) it must have changed nothing.
The cases it declines are the ones it must decline (checked against the preconditions).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_ref.common.time import MockTime
from tests.helpers_replica import (
    OTHER_TOPIC_ID,
    TOPIC_ID,
    TP0,
    broker_with_mock_alter,
    fetch_follower,
    fetch_partition,
    follower_params,
    lai_request,
    lai_state,
    seed_log_data,
)

LEADER_EPOCH = 5

cases = st.fixed_dictionaries({
    "leader": st.sampled_from([0, 2]),                   # 2: this broker follows (the helper must decline)
    "records": st.integers(0, 4),
    "in_isr": st.booleans(),
    "prior_fetch": st.one_of(st.none(), st.integers(0, 4)),
    "advance_ms": st.sampled_from([0, 1000, 45000]),
    "fetch_offset": st.integers(0, 5),
    "current_epoch": st.sampled_from([-1, 4, 5, 6]),
    "last_fetched_epoch": st.sampled_from([-1, 3, 5]),
    "topic_id": st.sampled_from(["same", "none", "other"]),
    "follower": st.sampled_from([1, 7]),                  # 7: not a replica
    "update_state": st.booleans(),
})


def _build(case: dict):
    time = MockTime()
    broker, alter = broker_with_mock_alter(0, time=time)
    isr = [0, 1, 2] if case["in_isr"] else [0, 2]
    rm = broker.replica_manager
    rm.become_leader_or_follower(1, lai_request([lai_state(0, LEADER_EPOCH, isr, [0, 1, 2])]), lambda *a: None)
    partition = rm.online_partition(TP0)
    seed_log_data(partition.log, case["records"], LEADER_EPOCH)
    if case["prior_fetch"] is not None and case["prior_fetch"] <= case["records"]:
        fetch_follower(partition, 1, case["prior_fetch"], leader_epoch=LEADER_EPOCH)
    time.advance(case["advance_ms"])
    if case["leader"] != 0:
        rm.become_leader_or_follower(2, lai_request([lai_state(case["leader"], LEADER_EPOCH + 1, isr, [0, 1, 2])]),
                                     lambda *a: None)
    return broker, alter, rm


def _state(broker, alter, rm):
    partition = rm.online_partition(TP0)
    replica = partition.remote_replicas_map.get(1)
    return (
        replica.state_snapshot if replica is not None else None,
        sorted(partition.partition_state.isr), sorted(partition.partition_state.maximal_isr),
        partition.log.high_watermark if partition.log is not None else None,
        alter.submitted,
        [(u.topic_partition, u.leader_and_isr) for u in alter.isr_updates],
    )


@settings(max_examples=300, deadline=None)
@given(cases)
def test_helper_matches_the_full_read_chain(case: dict) -> None:
    topic_ids = {"same": {TP0.topic: TOPIC_ID}, "none": None, "other": {TP0.topic: OTHER_TOPIC_ID}}[case["topic_id"]]
    info = fetch_partition(case["fetch_offset"], current_leader_epoch=case["current_epoch"],
                           last_fetched_epoch=case["last_fetched_epoch"], log_start_offset=0)
    params = follower_params(case["follower"])
    fast_broker, fast_alter, fast_rm = _build(case)
    full_broker, full_alter, full_rm = _build(case)
    now = fast_rm.time.milliseconds()
    before = _state(fast_broker, fast_alter, fast_rm)
    fast = fast_rm._follower_read_at_log_end(params, TP0, info, now, case["update_state"], topic_ids)
    partition = fast_rm.online_partition(TP0)
    log = partition.log
    eligible = (
        case["leader"] == 0 and case["fetch_offset"] == case["records"] and case["follower"] == 1
        and case["current_epoch"] in (-1, LEADER_EPOCH) and case["topic_id"] != "other"
        and case["last_fetched_epoch"] in (-1, log.leader_epoch_cache.latest_epoch)
    )
    # (A topic id equal to the log's but not the same object would also decline; the request
    # ids here are the very object the log holds.)
    assert (fast is not None) == eligible, case
    if fast is None:
        assert _state(fast_broker, fast_alter, fast_rm) == before
        return
    full = full_rm._read(params, TP0, info, 0x7FFFFFFF, True, not case["update_state"], topic_ids)
    assert fast == full
    assert _state(fast_broker, fast_alter, fast_rm) == _state(full_broker, full_alter, full_rm)


def test_a_follower_at_the_log_end_takes_the_helper_in_read_from_log() -> None:
    """read_from_log uses the helper for the follower case (and so gives the same budgeted list)."""
    case = {"leader": 0, "records": 3, "in_isr": True, "prior_fetch": 1, "advance_ms": 0, "fetch_offset": 3,
            "current_epoch": LEADER_EPOCH, "last_fetched_epoch": LEADER_EPOCH, "topic_id": "same", "follower": 1,
            "update_state": True}
    broker, alter, rm = _build(case)
    calls = []
    original = rm._read
    rm._read = lambda *a, **k: calls.append(a) or original(*a, **k)
    info = fetch_partition(3, current_leader_epoch=LEADER_EPOCH, last_fetched_epoch=LEADER_EPOCH, log_start_offset=0)
    [(tp, result)] = rm.read_from_log(follower_params(1), [(TP0, info)], read_from_purgatory=False,
                                      topic_ids={TP0.topic: TOPIC_ID})
    assert calls == []
    assert (tp, result.leader_log_end_offset, result.high_watermark, result.bytes) == (TP0, 3, 0, 0)  # HW before the fetch
    assert rm.online_partition(TP0).remote_replicas_map[1].state_snapshot.log_end_offset == 3
    # A fetch below the log end goes through the full chain.
    rm.read_from_log(follower_params(1), [(TP0, fetch_partition(1, log_start_offset=0))], read_from_purgatory=False)
    assert len(calls) == 1


@settings(max_examples=300, deadline=None)
@given(cases, st.integers(0, 3))
def test_delayed_fetch_helper_agrees_with_the_loop_body(case: dict, appended: int) -> None:
    """DelayedFetch's ``_still_at_log_end`` says "nothing here" only where ``_check_partition``
    (Kafka's tryComplete loop body) finds neither a reason to complete nor bytes; ``appended``
    records arrive after the read started, as they would while the fetch waits."""
    from kafka_ref.server.delayed_fetch import DelayedFetch, FetchPartitionStatus, _still_at_log_end

    broker, alter, rm = _build(case)
    partition = rm.online_partition(TP0)
    log = partition.log
    offset = min(case["fetch_offset"], log.log_end_offset) if log is not None else case["fetch_offset"]
    start = log.local_log.convert_to_offset_metadata_or_throw(offset) if log is not None else None
    if start is None:
        return
    if case["leader"] == 0 and appended:
        seed_log_data(log, appended, LEADER_EPOCH)
    info = fetch_partition(offset, current_leader_epoch=case["current_epoch"],
                           last_fetched_epoch=case["last_fetched_epoch"], log_start_offset=0)
    status = FetchPartitionStatus(start, info)
    op = DelayedFetch(follower_params(case["follower"], max_wait_ms=500), [(TP0, status)], rm, lambda r: None)
    helper = _still_at_log_end(partition, status)
    try:
        full = op._check_partition(partition, status)
    except Exception as exc:  # cases A-E
        full = type(exc).__name__
    if helper:
        assert full == (False, 0), (case, appended, full)
    expected = (case["leader"] == 0 and appended == 0 and offset == log.log_end_offset
                and case["current_epoch"] in (-1, LEADER_EPOCH)
                and case["last_fetched_epoch"] in (-1, log.leader_epoch_cache.latest_epoch))
    assert helper == expected, (case, appended)


def test_a_stale_broker_epoch_is_the_same_error_through_the_helper_and_the_full_chain() -> None:
    """KRaft (KIP-903): a fetch from an older incarnation of the follower is refused when its
    fetch state is recorded; both paths answer the partition NOT_LEADER_OR_FOLLOWER and leave the
    replica state as it was."""
    from kafka_ref.common.errors import Errors

    class KRaftCache:  # what Replica#updateFetchStateOrThrow asks a KRaft metadata cache
        def __init__(self, inner):
            self.inner = inner

        def get_alive_broker_epoch(self, broker_id):
            return 9

        def __getattr__(self, name):
            return getattr(self.inner, name)

    case = {"leader": 0, "records": 2, "in_isr": True, "prior_fetch": 2, "advance_ms": 0, "fetch_offset": 2,
            "current_epoch": LEADER_EPOCH, "last_fetched_epoch": -1, "topic_id": "same", "follower": 1,
            "update_state": True}
    info = fetch_partition(2, current_leader_epoch=LEADER_EPOCH, log_start_offset=0)
    params = follower_params(1, replica_epoch=4)
    results = []
    for path in ("helper", "full"):
        broker, alter, rm = _build(case)
        partition = rm.online_partition(TP0)
        partition.metadata_cache = KRaftCache(partition.metadata_cache)
        before = _state(broker, alter, rm)
        now = rm.time.milliseconds()
        if path == "helper":
            result = rm._follower_read_at_log_end(params, TP0, info, now, True, {TP0.topic: TOPIC_ID})
        else:
            result = rm._read(params, TP0, info, 0x7FFFFFFF, True, False, {TP0.topic: TOPIC_ID})
        assert result.error is Errors.NOT_LEADER_OR_FOLLOWER
        assert _state(broker, alter, rm) == before
        results.append((result.error, result.high_watermark, result.leader_log_end_offset, result.fetch_time_ms))
    assert results[0] == results[1]
