"""The broker replica path end to end (issue 3): three brokers in manual mode, the test as controller.

Real ReplicaFetcherThreads replicate over the in-process network, AlterPartition requests reach
the cluster's ManualController (``cluster.controller.handler`` lets a test answer them), and
everything runs in virtual time on both backends. Mirrors the flows of seed 000/002 and the
end-to-end behaviour Kafka's ReplicaManager/Partition/AlterPartitionManager produce together.
The last tests run a single broker's periodic tasks and purgatory timer in virtual time
(ReplicaManagerTest's MockScheduler/MockTimer cases).
"""

from __future__ import annotations

import anyio
import pytest

from helpers_replica import (
    TOPIC,
    TOPIC_ID,
    TP0,
    TP1,
    fetch_partition,
    fetch_request,
    follower_params,
    lai_request,
    lai_state,
    produce_request,
    records,
    replicated_cluster,
    rm_fetch,
    rm_produce,
    um_request,
    um_state,
)
from kafka_ref.cluster import ManualController
from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
)
from kafka_ref.common.requests.fetch import FetchRequest
from kafka_ref.log.disk import Disk
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL, Network, serve_inbox
from kafka_ref.server.alter_partition_manager import AlterPartitionManager
from kafka_ref.server.kafka_broker import KafkaBroker
from kafka_ref.zk.zk_data import LeaderAndIsr

pytestmark = pytest.mark.anyio

FAST = {"replica.socket.timeout.ms": 2000, "replica.lag.time.max.ms": 2000}


def leader_partition(cluster, tp=TP0):
    return cluster.broker(0).replica_manager.online_partition(tp)


def follower_log(cluster, broker, tp=TP0):
    return cluster.broker(broker).replica_manager.online_partition(tp).log


async def wait_answered(envelope, limit_s=60.0):
    with anyio.fail_after(limit_s):
        while not envelope.answered:
            await anyio.sleep(0.001)
    return anyio.current_time()


def reject_with(error, also_top_level=None):
    """A ManualController handler answering every partition with ``error``."""
    def handler(request):
        if also_top_level is not None:
            return AlterPartitionResponse(error_code=also_top_level.code)
        return AlterPartitionResponse(topics=tuple(
            AlterPartitionResponseTopicData(topic_name=t.topic_name, topic_id=t.topic_id, partitions=tuple(
                AlterPartitionResponsePartitionData(partition_index=p.partition_index, error_code=error.code)
                for p in t.partitions))
            for t in request.topics))
    return handler


# ------------------------------------------------------------------------------ produce and consume


async def test_acks_all_produce_is_answered_only_after_both_followers_fetched_past_it():
    """Mirrors seed 000/004 §2.3: acks=-1 completes when the HW (min LEO of the ISR) passes the records,
    i.e. after both followers' fetches carried offsets beyond them; consumers never read past the HW."""
    async with replicated_cluster(FAST) as cluster:
        network = cluster.network
        fetch_times: dict[int, float] = {}

        def observe(envelope):
            request = envelope.request
            if isinstance(request, FetchRequest) and envelope.dst == 0 and request.requesting_replica_id() in (1, 2):
                for topic in request.topics:
                    for p in topic.partitions:
                        if p.fetch_offset >= 3:
                            fetch_times.setdefault(request.requesting_replica_id(), anyio.current_time())

        network.observers.append(observe)
        # Both followers have fetched (at offset 0); then follower 2 cannot reach the leader.
        await cluster.wait_until(lambda: leader_partition(cluster).get_replica(2).log_end_offset == 0)
        network.cut_link(0, 2)
        envelope = network.post("client", 0, produce_request(records(3), acks=-1), ANONYMOUS_PRINCIPAL)
        await anyio.sleep(1.5)
        partition = leader_partition(cluster)
        assert not envelope.answered
        assert partition.get_replica(1).log_end_offset == 3 and partition.get_replica(2).log_end_offset == 0
        assert (partition.log.log_end_offset, partition.log.high_watermark) == (3, 0)
        assert 1 in fetch_times and 2 not in fetch_times
        # A consumer sees nothing: everything is above the HW (an empty answer, not an error).
        data = (await network.send("client", 0, fetch_request(0), principal=ANONYMOUS_PRINCIPAL)).partition_data(TOPIC, 0)
        assert (data.error_code, data.high_watermark, data.records.size_in_bytes) == (0, 0, 0)
        network.heal_link(0, 2)
        answered_at = await wait_answered(envelope)
        assert 2 in fetch_times and answered_at >= max(fetch_times.values())
        status = envelope.response.responses_by_partition()[TP0]
        assert (status.error_code, status.base_offset) == (0, 0)
        assert partition.get_replica(1).log_end_offset >= 3 and partition.get_replica(2).log_end_offset >= 3
        assert partition.log.high_watermark == 3 and partition.in_sync_replica_ids == {0, 1, 2}
        assert follower_log(cluster, 1).log_end_offset == 3 and follower_log(cluster, 2).log_end_offset == 3
        data = (await network.send("client", 0, fetch_request(0), principal=ANONYMOUS_PRINCIPAL)).partition_data(TOPIC, 0)
        assert [(b.base_offset, b.last_offset) for b in data.records] == [(0, 2)] and data.high_watermark == 3


async def test_consumer_fetch_never_returns_data_at_or_above_the_high_watermark():
    """Mirrors ReplicaManager#readFromLog with FetchIsolation.HIGH_WATERMARK for replica_id -1, under load,
    with one follower lagging so the HW trails the LEO."""
    async with replicated_cluster(FAST) as cluster:
        network = cluster.network
        seen_hw_below_leo = False
        delivered = []

        async def producer():
            for i in range(40):
                network.post("client", 0, produce_request(records(2, prefix=f"b{i}-"), acks=1), ANONYMOUS_PRINCIPAL)
                await anyio.sleep(0.05)
                if i == 5:
                    network.cut_link(0, 2)
                if i == 30:
                    network.heal_link(0, 2)

        async with anyio.create_task_group() as tg:
            tg.start_soon(producer)
            position = 0
            for _ in range(120):
                await anyio.sleep(0.03)
                response = await network.send("client", 0, fetch_request(position), principal=ANONYMOUS_PRINCIPAL)
                data = response.partition_data(TOPIC, 0)
                assert data.error_code == 0
                log = leader_partition(cluster).log
                seen_hw_below_leo |= log.high_watermark < log.log_end_offset
                for batch in data.records:
                    assert batch.last_offset < data.high_watermark
                    delivered.append((batch.base_offset, batch.last_offset))
                    position = batch.last_offset + 1
        assert seen_hw_below_leo
        assert delivered == [(2 * i, 2 * i + 1) for i in range(len(delivered))]
        await cluster.wait_until(lambda: leader_partition(cluster).log.high_watermark == 80)


# ------------------------------------------------------------------------------ ISR changes through AlterPartition


async def test_isr_shrinks_when_a_follower_stops_and_expands_when_it_catches_up():
    """Mirrors Partition#maybeShrinkIsr/#maybeExpandIsr + DefaultAlterPartitionManager with the controller
    committing each change (partition epoch +1); a waiting acks=-1 produce completes after the shrink."""
    async with replicated_cluster(FAST) as cluster:
        network = cluster.network
        partition = leader_partition(cluster)
        network.cut_link(0, 2)
        started = anyio.current_time()
        envelope = network.post("client", 0, produce_request(records(2), acks=-1), ANONYMOUS_PRINCIPAL)
        answered_at = await wait_answered(envelope)
        status = envelope.response.responses_by_partition()[TP0]
        assert (status.error_code, status.base_offset) == (0, 0)
        assert partition.in_sync_replica_ids == {0, 1} and partition.partition_epoch == 1
        # Out of sync after replica.lag.time.max.ms, found by the task running every lag/2.
        assert 2.0 < answered_at - started <= 3.0 + 0.1
        shrink = cluster.controller.alter_partition_requests[0].partitions_by_topic_partition()[TP0]
        assert (shrink.new_isr(), shrink.leader_epoch, shrink.partition_epoch) == ((0, 1), 0, 0)
        assert partition.log.high_watermark == 2
        network.heal_link(0, 2)
        await cluster.wait_until(lambda: partition.in_sync_replica_ids == {0, 1, 2})
        assert partition.partition_epoch == 2
        expand = cluster.controller.alter_partition_requests[1].partitions_by_topic_partition()[TP0]
        assert (expand.new_isr(), expand.partition_epoch) == ((0, 1, 2), 1)
        assert len(cluster.controller.alter_partition_requests) == 2
        assert follower_log(cluster, 2).log_end_offset == 2
        assert (partition.isr_shrink_count, partition.isr_expand_count) == (1, 1)


@pytest.mark.parametrize("error", [Errors.INELIGIBLE_REPLICA, Errors.OPERATION_NOT_ATTEMPTED])
async def test_alter_partition_rejected_resets_to_committed_isr(error):
    """Mirrors Partition#handleAlterPartitionError (reset class): back to the committed ISR; the
    next follower fetch proposes the expansion again."""
    async with replicated_cluster(FAST, isr=(0, 1)) as cluster:
        partition = leader_partition(cluster)
        answers = iter([reject_with(error), reject_with(error)])

        def handler(request):
            return next(answers, cluster.controller.accept)(request)

        cluster.controller.handler = handler
        await cluster.wait_until(lambda: partition.in_sync_replica_ids == {0, 1, 2})
        requests = cluster.controller.alter_partition_requests
        assert len(requests) == 3
        assert [r.partitions_by_topic_partition()[TP0].new_isr() for r in requests] == [(0, 1, 2)] * 3
        assert [r.partitions_by_topic_partition()[TP0].partition_epoch for r in requests] == [0, 0, 0]
        assert partition.failed_alter_partition_count == 2 and partition.partition_epoch == 1


@pytest.mark.parametrize("error", [Errors.FENCED_LEADER_EPOCH, Errors.INVALID_UPDATE_VERSION,
                                   Errors.UNKNOWN_TOPIC_OR_PARTITION])
async def test_alter_partition_stale_metadata_waits_for_leader_and_isr(error):
    """Mirrors Partition#handleAlterPartitionError (wait class): the change stays pending, nothing is
    resent however often the follower fetches, until a LeaderAndIsr replaces the state."""
    async with replicated_cluster(FAST, isr=(0, 1)) as cluster:
        partition = leader_partition(cluster)
        cluster.controller.handler = reject_with(error)
        await cluster.wait_until(lambda: len(cluster.controller.alter_partition_requests) == 1)
        await anyio.sleep(5)
        assert len(cluster.controller.alter_partition_requests) == 1
        assert partition.partition_state.is_inflight
        assert partition.in_sync_replica_ids == {0, 1} and partition.maximal_isr == {0, 1, 2}
        # The controller's new state arrives; the next expansion is accepted.
        cluster.controller.handler = None
        request = cluster.leader_and_isr_request([lai_state(0, 1, (0, 1), (0, 1, 2), partition_epoch=3)], {TOPIC: TOPIC_ID})
        for b in range(3):
            assert (await cluster.send(b, request)).error_code == 0
        await cluster.wait_until(lambda: partition.in_sync_replica_ids == {0, 1, 2})
        last = cluster.controller.alter_partition_requests[-1].partitions_by_topic_partition()[TP0]
        assert (last.leader_epoch, last.partition_epoch) == (1, 3)
        assert partition.partition_epoch == 4


async def test_alter_partition_unexpected_error_is_retried():
    """Mirrors Partition#handleAlterPartitionError (retry class) and the manager's top-level-error retry."""
    async with replicated_cluster(FAST, isr=(0, 1)) as cluster:
        partition = leader_partition(cluster)
        times = []
        answers = iter([reject_with(Errors.UNKNOWN_SERVER_ERROR),
                        reject_with(None, also_top_level=Errors.NOT_CONTROLLER)])

        def handler(request):
            times.append(anyio.current_time())
            return next(answers, cluster.controller.accept)(request)

        cluster.controller.handler = handler
        await cluster.wait_until(lambda: partition.in_sync_replica_ids == {0, 1, 2})
        assert len(times) == 3
        # The partition-level error is resent at once; the top-level one after the 50 ms back-off.
        assert times[1] - times[0] == pytest.approx(0, abs=1e-6)
        assert times[2] - times[1] == pytest.approx(0.05, abs=1e-3)
        assert partition.failed_alter_partition_count == 1 and partition.partition_epoch == 1


# ------------------------------------------------------------------------------ DefaultAlterPartitionManager


async def test_alter_partition_manager_keeps_at_most_one_request_in_flight():
    """Mirrors AlterPartitionManagerTest#testOneInFlight, #testOverwriteWithinBatch,
    #testPartitionMissingInResponse and #testStaleBrokerEpoch: one request in flight; changes
    submitted meanwhile wait for the next one; a partition whose change is pending (queued or in
    flight) gets OPERATION_NOT_ATTEMPTED; unanswered partitions are sent again (at once after a
    partial answer, after the back-off after a top-level error, after the timeout otherwise)."""
    network = Network()
    inbox = network.register("controller")
    manager = AlterPartitionManager(0, network, lambda: "controller", lambda: 7, request_timeout_ms=10000)
    results: list[tuple[str, object, object]] = []

    def cb(name):
        return lambda leader_and_isr, error: results.append((name, leader_and_isr, error))

    def proposal(isr, epoch=0):
        return LeaderAndIsr(leader=0, leader_epoch=epoch, isr=isr, leader_recovery_state=0, partition_epoch=0)

    async with anyio.create_task_group() as tg:
        manager.start(tg)
        manager.submit(TP0, TOPIC_ID, proposal((0, 1)), 1, cb("t0"))
        await anyio.sleep(0.001)
        first = inbox.receive_nowait()
        assert first.request.broker_epoch == 7
        assert list(first.request.partitions_by_topic_partition()) == [TP0]
        manager.submit(TP1, TOPIC_ID, proposal((0, 2)), 1, cb("t1"))
        manager.submit(TP0, TOPIC_ID, proposal((0,)), 1, cb("t0-again"))
        await anyio.sleep(0.5)
        with pytest.raises(anyio.WouldBlock):
            inbox.receive_nowait()
        assert manager.requests_sent == 1 and manager.in_flight
        assert results == [("t0-again", None, Errors.OPERATION_NOT_ATTEMPTED)]
        # The controller answers t-0 only: t-1 goes in the next request.
        first.respond(AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
            topic_name=TOPIC, topic_id=TOPIC_ID, partitions=(AlterPartitionResponsePartitionData(
                partition_index=0, leader_id=0, leader_epoch=0, isr=(0, 1), partition_epoch=1),)),)))
        await anyio.sleep(0.01)
        assert results[1] == ("t0", LeaderAndIsr(0, 0, (0, 1), 0, 1), None)
        second = inbox.receive_nowait()
        assert list(second.request.partitions_by_topic_partition()) == [TP1]
        # No answer at all: after the request timeout the same change is sent again.
        await anyio.sleep(10.2)
        third = inbox.receive_nowait()
        assert list(third.request.partitions_by_topic_partition()) == [TP1] and manager.requests_sent == 3
        third.respond(third.request.get_error_response(Errors.STALE_BROKER_EPOCH.code))
        await anyio.sleep(0.01)
        with pytest.raises(anyio.WouldBlock):
            inbox.receive_nowait()
        await anyio.sleep(0.05)
        fourth = inbox.receive_nowait()
        fourth.respond(AlterPartitionResponse(topics=(AlterPartitionResponseTopicData(
            topic_name=TOPIC, topic_id=TOPIC_ID, partitions=(AlterPartitionResponsePartitionData(
                partition_index=1, error_code=Errors.FENCED_LEADER_EPOCH.code),)),)))
        await anyio.sleep(0.01)
        assert results[2] == ("t1", None, Errors.FENCED_LEADER_EPOCH)
        assert manager.unsent_isr_updates == {} and not manager.in_flight
        tg.cancel_scope.cancel()


# ------------------------------------------------------------------------------ one running broker, virtual time


async def _run_single_broker(props, body):
    network = Network()
    controller = ManualController()
    broker = KafkaBroker(0, KafkaConfig({"broker.id": 0, **props}), network, Disk(0),
                         controller_node_provider=lambda: "controller")
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_inbox, network.register("controller"), controller.handle)
        await tg.start(broker.run)
        t0 = anyio.current_time()
        await network.send("controller", 0, um_request([um_state(0, 0, [0, 1, 2], [0, 1, 2])], brokers=(0, 1, 2)))
        await body(broker, controller, network, t0)
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_isr_expiration_task_shrinks_isr_in_virtual_time():
    """Mirrors ReplicaManager#startup's isr-expiration task (every replica.lag.time.max.ms / 2) and
    Partition#maybeShrinkIsr's out-of-sync rule, in virtual time.

    Follower 1 always reaches the leader's LEO of its previous fetch and stays in the ISR;
    follower 2 fetched once and stopped: it leaves at the first task run more than
    replica.lag.time.max.ms after it was last caught up.
    """
    lag = 10000

    async def body(broker, controller, network, t0):
        rm = broker.replica_manager
        await network.send("controller", 0, lai_request([lai_state(0, 0, [0, 1, 2], [0, 1, 2])]))
        partition = rm.online_partition(TP0)
        follower1_offset = 0
        for second in range(1, 31):
            await anyio.sleep(1)
            rm_produce(rm, records(1), acks=1)
            rm_fetch(rm, follower_params(1), (TP0, fetch_partition(follower1_offset, current_leader_epoch=0, log_start_offset=0)))
            if second == 1:
                rm_fetch(rm, follower_params(2), (TP0, fetch_partition(0, current_leader_epoch=0, log_start_offset=0)))
            # The follower appends what it got: next time it fetches from the leader's LEO of this fetch.
            follower1_offset = partition.log.log_end_offset
            if second == 14:
                assert partition.in_sync_replica_ids == {0, 1, 2}
        assert partition.in_sync_replica_ids == {0, 1}
        assert partition.partition_epoch == 1
        assert len(controller.alter_partition_requests) == 1
        sent = controller.alter_partition_requests[0].topics[0].partitions[0]
        assert (tuple(sent.new_isr()), sent.leader_epoch, sent.partition_epoch) == ((0, 1), 0, 0)
        replica2 = partition.get_replica(2)
        assert (replica2.log_end_offset, replica2.last_caught_up_time_ms) == (0, broker.time.milliseconds() - 30000)

    await _run_single_broker({"replica.lag.time.max.ms": lag}, body)


@pytest.mark.anyio
async def test_isr_shrink_happens_at_first_task_run_after_lag():
    """Mirrors ReplicaManager#maybeShrinkIsr timing: runs at 0, lag/2, lag, 3*lag/2...; out of sync after lag."""
    lag = 10000
    seen = {}

    async def body(broker, controller, network, t0):
        rm = broker.replica_manager
        await network.send("controller", 0, lai_request([lai_state(0, 0, [0, 1], [0, 1])]))
        partition = rm.online_partition(TP0)
        t_lai = anyio.current_time()
        while partition.in_sync_replica_ids == {0, 1}:
            await anyio.sleep(0.1)
        seen["shrunk_after"] = anyio.current_time() - t_lai
        seen["started_at"] = t_lai - t0

    await _run_single_broker({"replica.lag.time.max.ms": lag}, body)
    assert seen["started_at"] == pytest.approx(0, abs=0.01)
    # Caught up at LeaderAndIsr time; still in sync at 10 s (<= lag), out at the 15 s run.
    assert seen["shrunk_after"] == pytest.approx(15.0, abs=0.11)


@pytest.mark.anyio
async def test_delayed_produce_request_timed_out_in_virtual_time():
    """Mirrors DelayedProduce expiring in the purgatory's timer (REQUEST_TIMED_OUT) in virtual time."""
    async def body(broker, controller, network, t0):
        rm = broker.replica_manager
        await network.send("controller", 0, lai_request([lai_state(0, 0, [0, 1], [0, 1])]))
        start = anyio.current_time()
        waiting = rm_produce(rm, records(2), acks=-1, timeout=2500)
        while not waiting.done:
            await anyio.sleep(0.05)
        assert anyio.current_time() - start == pytest.approx(2.5, abs=0.06)
        assert (waiting.value[TP0].error, waiting.value[TP0].base_offset) == (Errors.REQUEST_TIMED_OUT, 0)

    await _run_single_broker({}, body)


@pytest.mark.anyio
async def test_high_watermark_checkpoint_written_after_first_leader_and_isr():
    """Mirrors ReplicaManager#startHighWatermarkCheckPointThread (delay 0, every replica.high.watermark.checkpoint.interval.ms)."""
    async def body(broker, controller, network, t0):
        rm = broker.replica_manager
        checkpoint = broker.disk.replication_offset_checkpoint
        await anyio.sleep(1)
        assert checkpoint.read() == {}
        await network.send("controller", 0, lai_request([lai_state(0, 0, [0], [0, 1])]))
        await anyio.sleep(0.01)
        assert checkpoint.read() == {TP0: 0}
        rm_produce(rm, records(4), acks=1)
        assert rm.online_partition(TP0).log.high_watermark == 4
        await anyio.sleep(0.5)
        assert checkpoint.read() == {TP0: 0}
        await anyio.sleep(0.5)
        assert checkpoint.read() == {TP0: 4}

    await _run_single_broker({"replica.high.watermark.checkpoint.interval.ms": 1000}, body)
