"""Follower truncation across Kafka's three eras, reproduced on a manual-mode cluster.

``inter.broker.protocol.version`` selects the rule a follower uses to cut its log before it
fetches (docs/DESIGN.md §1.9):

* before 0.11: truncate to the local high watermark (what KIP-101 calls the HW problem);
* 0.11 – 1.1 (KIP-101 as first shipped): one OffsetsForLeaderEpoch round; the leader answers
  only an offset (the start of the first epoch after the one asked for);
* 2.0 – 2.6 (KIP-279): the answer carries the epoch; rounds repeat until the follower reaches
  an epoch both logs have;
* 2.7 and later (KIP-320/595): the follower fetches at once with its last fetched epoch and the
  leader answers a divergent fetch with the diverging epoch.

The test plays the controller (helpers in test_replication_manual_cluster.py); the brokers'
real fetchers replicate in virtual time. Every step is fixed: no randomness, no timed
assertions.
"""

from __future__ import annotations

import pytest

from kafka_ref.cluster import Cluster
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.offsets_for_leader_epoch import OffsetForLeaderEpochRequest, OffsetForLeaderPartition

from test_replication_manual_cluster import (
    TP,
    DropFetches,
    RequestRecorder,
    batches,
    elect,
    epochs,
    fetching,
    ibp_config,
    isr_of,
    log_of,
    produce,
)

pytestmark = pytest.mark.anyio

A, B = 0, 1


# ---------------------------------------------------------------------- KIP-101, scenario 1

KIP101_ERAS = [
    # ibp, record kept, requests the restarted follower sends to the leader
    pytest.param("0.10.2", False, ["FetchRequest"], id="ibp-0.10.2"),
    pytest.param("0.11.0", True, ["OffsetForLeaderEpochRequest", "FetchRequest"], id="ibp-0.11.0"),
    pytest.param("2.0", True, ["OffsetForLeaderEpochRequest", "FetchRequest"], id="ibp-2.0"),
    pytest.param("2.7", True, ["FetchRequest"], id="ibp-2.7"),
    pytest.param(None, True, ["FetchRequest"], id="ibp-default"),
]


@pytest.mark.parametrize("ibp, kept, follower_requests", KIP101_ERAS)
async def test_kip101_hw_truncation_followed_by_immediate_leader_election(ibp, kept, follower_requests):
    """KIP-101 "Scenario 1: High Watermark Truncation followed by Immediate Leader Election".

    A leads, B follows, min.insync.replicas=1. m1 is committed and checkpointed everywhere.
    m2 is produced with acks=-1 and acknowledged: B has it, but B learns the new HW only on
    its next fetch, and B's HW checkpoint (written every 5 s) still says 1. B crashes and
    restarts. Under IBP 0.10.2 it cuts its log to the checkpointed HW 1, dropping m2; its next
    fetch never gets an answer because A dies. B becomes leader (epoch 1); A comes back as
    its follower and truncates to match B: the acknowledged m2 is gone from both logs and
    offset 1 is reused by m3. From IBP 0.11 B asks the leader instead (OffsetsForLeaderEpoch,
    or from 2.7 a fetch carrying its last fetched epoch) and keeps m2; so does A.
    (Kafka's EpochDrivenReplicationProtocolAcceptanceTest#shouldSurviveFastLeaderChange checks
    that no data is lost across such bounces but, as its comment says, could not reproduce the
    pre-KIP-101 failure deterministically; fixed steps in virtual time can.)"""
    config = ibp_config(ibp, **{"min.insync.replicas": 1})
    async with Cluster(brokers=2, metadata_mode="manual", config=config) as cluster:
        recorder = RequestRecorder(cluster)
        # 1. A leads epoch 0; m1 is committed on both and B's HW checkpoint records it.
        await elect(cluster, leader=A, leader_epoch=0, isr=[A, B], replicas=[A, B], is_new=True)
        response = await produce(cluster, A, b"m1", acks=-1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, 0)
        await cluster.wait_until(lambda: cluster.disks[B].replication_offset_checkpoint.read() == {TP: 1},
                                 message="B's HW checkpoint says 1")
        # 2. m2 is acknowledged to an acks=-1 producer: B fetched it, A's HW moved to 2.
        response = await produce(cluster, A, b"m2", acks=-1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, 1)
        assert (log_of(cluster, A).log_end_offset, log_of(cluster, A).high_watermark) == (2, 2)
        # ... but B learns HW 2 only with its next fetch response.
        assert (log_of(cluster, B).log_end_offset, log_of(cluster, B).high_watermark) == (2, 1)
        # 3. B crashes. Its disk keeps both records and a checkpointed HW of 1.
        cluster.kill_broker(B)
        assert cluster.disks[B].replication_offset_checkpoint.read() == {TP: 1}
        # 4. B restarts and is told to follow A again; A never answers B's fetches (it is
        #    about to die), so whatever B holds now comes from its own truncation step.
        dropper = DropFetches(cluster, B, A)
        recorder.clear()
        await cluster.restart_broker(B)
        assert cluster.disks[B].logs[TP].log_end_offset == 2
        await elect(cluster, leader=A, leader_epoch=0, isr=[A, B], replicas=[A, B], to=[B])
        await cluster.wait_until(lambda: fetching(cluster, B) and dropper.dropped >= 1, message="B truncated and fetches")
        assert recorder.kinds(B, A) == follower_requests
        assert log_of(cluster, B).log_end_offset == (2 if kept else 1)
        assert log_of(cluster, B).high_watermark == 1
        # 5. A dies; B becomes the leader of epoch 1 on its own.
        cluster.kill_broker(A)
        dropper.remove()
        a_checkpoint = cluster.disks[A].replication_offset_checkpoint.read()
        assert a_checkpoint == {TP: 1}
        await elect(cluster, leader=B, leader_epoch=1, isr=[B], replicas=[A, B], to=[B])
        b_end = 2 if kept else 1
        assert epochs(cluster, B) == [(0, 0), (1, b_end)]
        # 6. A comes back (its disk still has m2) and follows B.
        await cluster.restart_broker(A)
        assert cluster.disks[A].logs[TP].log_end_offset == 2
        await elect(cluster, leader=B, leader_epoch=1, isr=[B], replicas=[A, B], to=[A])
        await cluster.wait_until(lambda: isr_of(cluster, B) == {A, B}, message="A back in B's ISR")
        # 7. m3 is produced to B and committed on both.
        response = await produce(cluster, B, b"m3", acks=-1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, b_end)
        await cluster.wait_until(lambda: log_of(cluster, A).high_watermark == b_end + 1, message="A learned the HW")
        # 8. The logs agree; m2, acknowledged at offset 1, survives only from IBP 0.11 on.
        if kept:
            expected = [(0, 0, [(None, b"m1")]), (1, 0, [(None, b"m2")]), (2, 1, [(None, b"m3")])]
        else:
            expected = [(0, 0, [(None, b"m1")]), (1, 1, [(None, b"m3")])]
        assert batches(cluster, A) == expected
        assert batches(cluster, B) == expected
        assert epochs(cluster, A) == epochs(cluster, B) == [(0, 0), (1, b_end)]


# ---------------------------------------------------------------------- KIP-279


async def _alternate_leaders(cluster: Cluster, leaders_and_values: list[tuple[int, bytes]], first_epoch: int) -> None:
    """Fast leader changes between A and B: each new leader is elected alone (the other replica
    is isolated, so it hears nothing) and appends one record with acks=1."""
    for epoch, (leader, value) in enumerate(leaders_and_values, start=first_epoch):
        other = B if leader == A else A
        cluster.network.heal_node(leader)
        cluster.network.isolate(other)
        await elect(cluster, leader=leader, leader_epoch=epoch, isr=[leader], replicas=[A, B], to=[leader], metadata_to=[leader])
        response = await produce(cluster, leader, value, acks=1)
        assert response.error_code == Errors.NONE.code


KIP279_ERAS = [
    # ibp, logs converge, OffsetsForLeaderEpoch rounds B sends
    pytest.param("0.11.0", False, 1, id="ibp-0.11.0"),
    pytest.param("2.0", True, 1, id="ibp-2.0"),
    pytest.param("2.7", True, 0, id="ibp-2.7"),
    pytest.param(None, True, 0, id="ibp-default"),
]


@pytest.mark.parametrize("ibp, converge, epoch_rounds", KIP279_ERAS)
async def test_kip279_fast_leader_change_divergence(ibp, converge, epoch_rounds):
    """KIP-279 / KAFKA-6361: log divergence after two fast leader changes with KIP-101 as
    shipped in 0.11.

    A leads epoch 0 and appends a1 at offset 1 that B never gets. B is elected (epoch 1) and
    appends b1 at offset 1; before anyone follows it, A is elected again (epoch 2, so A never
    had epoch 1) and appends a2 at offset 2. B then follows A and asks about its latest epoch,
    1. Under 0.11 A answers with the start of its next epoch (2): B keeps b1 and fetches a2 —
    same offsets, different records and epochs at offset 1, and B is even taken back into
    the ISR. From 2.0 A answers (epoch 0, end offset 2), B cuts at the end of its epoch 0
    (offset 1) and the logs are identical; from 2.7 the same answer comes as the diverging
    epoch of B's first fetch, with no OffsetsForLeaderEpoch at all. (The alternating-leader
    pattern of EpochDrivenReplicationProtocolAcceptanceTest#logsShouldNotDivergeOnUncleanLeaderElections.)"""
    async with Cluster(brokers=2, metadata_mode="manual", config=ibp_config(ibp)) as cluster:
        recorder = RequestRecorder(cluster)
        # 1. A leads epoch 0; m0 is on both replicas.
        await elect(cluster, leader=A, leader_epoch=0, isr=[A, B], replicas=[A, B], is_new=True)
        response = await produce(cluster, A, b"m0", acks=-1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, 0)
        # 2. B is cut off; A appends a1 (epoch 0) alone.
        cluster.network.isolate(B)
        response = await produce(cluster, A, b"a1", acks=1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, 1)
        # 3. Two fast leader changes: B leads epoch 1 (b1 at 1), A leads epoch 2 (a2 at 2).
        await _alternate_leaders(cluster, [(B, b"b1"), (A, b"a2")], first_epoch=1)
        assert batches(cluster, A) == [(0, 0, [(None, b"m0")]), (1, 0, [(None, b"a1")]), (2, 2, [(None, b"a2")])]
        assert batches(cluster, B) == [(0, 0, [(None, b"m0")]), (1, 1, [(None, b"b1")])]
        assert epochs(cluster, A) == [(0, 0), (2, 2)]
        assert epochs(cluster, B) == [(0, 0), (1, 1)]
        # 4. B comes back and follows A in epoch 2.
        cluster.network.heal_all()
        recorder.clear()
        await elect(cluster, leader=A, leader_epoch=2, isr=[A], replicas=[A, B], to=[B])
        await cluster.wait_until(lambda: isr_of(cluster, A) == {A, B}, message="B in A's ISR")
        await cluster.wait_until(lambda: log_of(cluster, B).high_watermark == 3, message="B learned HW 3")
        # 5. How B found its truncation point.
        asked = recorder.of_kind(B, A, "OffsetForLeaderEpochRequest")
        assert len(asked) == epoch_rounds
        assert [p.leader_epoch for r in asked for t in r.topics for p in t.partitions] == [1] * epoch_rounds
        # 6. Divergence under 0.11, identical logs from 2.0.
        leader_log = [(0, 0, [(None, b"m0")]), (1, 0, [(None, b"a1")]), (2, 2, [(None, b"a2")])]
        assert batches(cluster, A) == leader_log
        assert log_of(cluster, B).log_end_offset == log_of(cluster, A).log_end_offset == 3
        if converge:
            assert batches(cluster, B) == leader_log
            assert epochs(cluster, B) == [(0, 0), (2, 2)]
        else:
            assert batches(cluster, B) == [(0, 0, [(None, b"m0")]), (1, 1, [(None, b"b1")]), (2, 2, [(None, b"a2")])]
            assert epochs(cluster, B) == [(0, 0), (1, 1), (2, 2)]


KIP279_MULTI_ROUND_ERAS = [
    # ibp, logs converge, the epochs B asks about, round by round
    pytest.param("0.11.0", False, [3], id="ibp-0.11.0"),
    pytest.param("2.0", True, [3, 1], id="ibp-2.0"),
    pytest.param("2.7", True, [], id="ibp-2.7"),
    pytest.param(None, True, [], id="ibp-default"),
]


@pytest.mark.parametrize("ibp, converge, asked_epochs", KIP279_MULTI_ROUND_ERAS)
async def test_kip279_multi_round_truncation_after_alternating_leaders(ibp, converge, asked_epochs):
    """Four fast leader changes between A and B, each new leader appending one record alone:
    B ends with epochs {0, 1, 3} and A (the leader) with {0, 2, 4}; neither has the other's.

    KIP-279 needs two rounds here: B asks for epoch 3, A answers (2, 2); B has no epoch 2 so
    it cuts to the end of its epoch 1 (offset 2) and asks again for epoch 1; A answers (0, 1),
    which B has, and B cuts to 1. From 2.7 the same two steps ride on the diverging epochs of
    B's fetches. Under 0.11 the single answer (the start of A's epoch 4, offset 2) leaves B's
    b1 at offset 1 where A has a1. (Mirrors EpochDrivenReplicationProtocolAcceptanceTest#
    logsShouldNotDivergeOnUncleanLeaderElections, which alternates the leader the same way.)"""
    async with Cluster(brokers=2, metadata_mode="manual", config=ibp_config(ibp)) as cluster:
        recorder = RequestRecorder(cluster)
        # 1. m0 committed on both in epoch 0.
        await elect(cluster, leader=A, leader_epoch=0, isr=[A, B], replicas=[A, B], is_new=True)
        response = await produce(cluster, A, b"m0", acks=-1)
        assert (response.error_code, response.base_offset) == (Errors.NONE.code, 0)
        # 2. Epochs 1..4 alternate B, A, B, A.
        await _alternate_leaders(cluster, [(B, b"b1"), (A, b"a1"), (B, b"b2"), (A, b"a2")], first_epoch=1)
        assert epochs(cluster, A) == [(0, 0), (2, 1), (4, 2)]
        assert epochs(cluster, B) == [(0, 0), (1, 1), (3, 2)]
        # 3. B follows A in epoch 4.
        cluster.network.heal_all()
        recorder.clear()
        await elect(cluster, leader=A, leader_epoch=4, isr=[A], replicas=[A, B], to=[B])
        await cluster.wait_until(lambda: isr_of(cluster, A) == {A, B}, message="B in A's ISR")
        await cluster.wait_until(lambda: log_of(cluster, B).high_watermark == 3, message="B learned HW 3")
        asked = recorder.of_kind(B, A, "OffsetForLeaderEpochRequest")
        assert [p.leader_epoch for r in asked for t in r.topics for p in t.partitions] == asked_epochs
        leader_log = [(0, 0, [(None, b"m0")]), (1, 2, [(None, b"a1")]), (2, 4, [(None, b"a2")])]
        assert batches(cluster, A) == leader_log
        if converge:
            assert batches(cluster, B) == leader_log
            assert epochs(cluster, B) == [(0, 0), (2, 1), (4, 2)]
        else:
            assert batches(cluster, B) == [(0, 0, [(None, b"m0")]), (1, 1, [(None, b"b1")]), (2, 4, [(None, b"a2")])]
            assert epochs(cluster, B) == [(0, 0), (1, 1), (4, 2)]


# ---------------------------------------------------------------------- the leader's answer


LEADER_ANSWER_ERAS = [
    # ibp, answers for epochs 0..5 as (leader epoch, end offset); leader epochs {1: 0, 3: 2}, LEO 4
    pytest.param("0.11.0", [(-1, -1), (-1, 2), (-1, 2), (-1, 4), (-1, -1), (-1, -1)], id="ibp-0.11.0"),
    pytest.param("2.1", [(0, 0), (1, 2), (1, 2), (3, 4), (-1, -1), (-1, -1)], id="ibp-2.1"),
    pytest.param(None, [(0, 0), (1, 2), (1, 2), (3, 4), (-1, -1), (-1, -1)], id="ibp-default"),
]


@pytest.mark.parametrize("ibp, answers", LEADER_ANSWER_ERAS)
async def test_offsets_for_leader_epoch_answer_by_era(ibp, answers):
    """The leader's OffsetsForLeaderEpoch answer, asked by a follower over the network.

    The leader's epoch cache is {1: 0, 3: 2} with LEO 4. Before KIP-279 the answer is an
    offset only: the LEO for the latest epoch, the start of the next epoch for an older one,
    and undefined for an epoch below the first cached one (0.11's LeaderEpochFileCache#endOffsetFor,
    which sends the follower back to its high watermark) or above the latest. From KIP-279 it
    is the largest epoch not above the request with that epoch's end offset; an epoch below
    the first cached one gets the requested epoch and the first start offset (KAFKA-7415,
    which is why this checks 2.1 rather than 2.0)."""
    async with Cluster(brokers=2, metadata_mode="manual", config=ibp_config(ibp)) as cluster:
        # 1. A leads epoch 1 (two records), then epoch 3 (two more); B is not told anything.
        await elect(cluster, leader=A, leader_epoch=1, isr=[A], replicas=[A, B], to=[A], is_new=True)
        for value in (b"x0", b"x1"):
            await produce(cluster, A, value, acks=1)
        await elect(cluster, leader=A, leader_epoch=3, isr=[A], replicas=[A, B], to=[A])
        for value in (b"x2", b"x3"):
            await produce(cluster, A, value, acks=1)
        assert epochs(cluster, A) == [(1, 0), (3, 2)]
        # 2. Ask as follower B for each epoch 0..5 (no current-epoch fencing).
        got = []
        for epoch in range(6):
            request = OffsetForLeaderEpochRequest.for_follower(
                B, {TP: OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=epoch)})
            response = await cluster.network.send(B, A, request)
            answer = response.epoch_end_offsets()[TP]
            assert answer.error_code == Errors.NONE.code
            got.append((answer.leader_epoch, answer.end_offset))
        assert got == answers
