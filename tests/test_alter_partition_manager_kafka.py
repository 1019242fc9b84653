"""The broker's AlterPartition sender (DefaultAlterPartitionManager), against a controller stand-in.

Ports of Kafka 3.8.0's ``AlterPartitionManagerTest``: broker 1 (epoch 2 unless a test says
otherwise) proposes ISR changes; Kafka captures the request from a mocked controller channel and
completes it by hand, here a "controller" node on the in-process network receives the request
and the test answers it. Metadata versions as Kafka's ``provideMetadataVersions``: 3.5 (broker
epochs in the ISR, KIP-903), 3.2 (leader recovery state, KIP-704) and 2.7 (AlterIsr by topic
name). tests/test_replica_path_cluster.py has testOneInFlight and the back-off timings.

Not ported: testZkBasic (ZooKeeper-era AlterIsr through znodes before 2.7 is not modelled),
testRetryOnAuthenticationFailure and testRetryOnUnsupportedVersionError (no authentication or
version negotiation between brokers and controller here).
"""

from __future__ import annotations

import anyio
import pytest

from kafka_ref.common.errors import Errors
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.network.network import Network
from kafka_ref.server.alter_partition_manager import AlterPartitionManager
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderRecoveryState

pytestmark = pytest.mark.anyio

BROKER_ID = 1
TOPIC = "test-topic"
TOPIC_ID = Uuid.from_string("Sl08ZXU2QW6uF5hIoSzc8w")
TP0, TP1, TP2 = (TopicPartition(TOPIC, p) for p in range(3))
VERSIONS = pytest.mark.parametrize("metadata_version", ["3.5", "3.2", "2.7"])


def _proposal(isr=(1, 2, 3), state=LeaderRecoveryState.RECOVERED) -> LeaderAndIsr:
    """LeaderAndIsr(leader 1, epoch 1, isr, state, partition epoch 10), Kafka's test values."""
    return LeaderAndIsr(1, 1, tuple(isr), state, 10)


class _Harness:
    """The manager, a controller inbox, and the results each submission got."""

    def __init__(self, metadata_version: str = "3.2", broker_epoch: int = 2) -> None:
        self.network = Network()
        self.inbox = self.network.register("controller")
        mv = MetadataVersion.parse(metadata_version)
        self.manager = AlterPartitionManager(BROKER_ID, self.network, lambda: "controller", lambda: broker_epoch,
                                             metadata_version_supplier=lambda: mv)
        self.results: dict[str, tuple[object, object]] = {}

    def submit(self, name: str, tp: TopicPartition, proposal: LeaderAndIsr, topic_id: Uuid | None = TOPIC_ID,
               isr_broker_epochs: dict[int, int] | None = None, callback=None) -> None:
        def done(leader_and_isr, error):
            self.results[name] = (leader_and_isr, error)
            if callback is not None:
                callback(leader_and_isr, error)
        self.manager.submit(tp, topic_id, proposal, 0, done, isr_broker_epochs)

    async def request(self):
        """The next request the controller receives (Kafka's captured sendRequest)."""
        with anyio.fail_after(1):
            return await self.inbox.receive()

    async def no_request(self) -> None:
        await anyio.sleep(0.01)
        with pytest.raises(anyio.WouldBlock):
            self.inbox.receive_nowait()


def _answer(envelope, *partitions: tuple[TopicPartition, Errors], error: Errors = Errors.NONE, isr=(1, 2, 3)) -> None:
    """AlterPartitionManagerTest#partitionResponse / #makeAlterPartition: one entry per partition,
    named by id from version 2, by name before."""
    request = envelope.request
    by_id = request.uses_topic_ids()
    topics: dict[str, list[AlterPartitionResponsePartitionData]] = {}
    for tp, perr in partitions:
        topics.setdefault(tp.topic, []).append(AlterPartitionResponsePartitionData(
            partition_index=tp.partition, error_code=perr.code, leader_id=1, leader_epoch=1, isr=tuple(isr),
            leader_recovery_state=0, partition_epoch=10))
    ids = {t.topic_name: t.topic_id for t in request.topics}
    envelope.respond(AlterPartitionResponse(error_code=error.code, topics=tuple(
        AlterPartitionResponseTopicData(topic_name="" if by_id else name, topic_id=ids[name] if by_id else ZERO_UUID,
                                        partitions=tuple(parts)) for name, parts in topics.items())))


async def _run(test):
    async with anyio.create_task_group() as tg:
        await test(tg)
        tg.cancel_scope.cancel()


@VERSIONS
async def test_basic(metadata_version: str):
    """Mirrors AlterPartitionManagerTest#testBasic: one submission, one request with its proposal."""
    h = _Harness(metadata_version)

    async def body(tg):
        h.manager.start(tg)
        h.submit("tp0", TP0, _proposal())
        request = (await h.request()).request
        assert (request.broker_id, request.broker_epoch) == (BROKER_ID, 2)
        assert request.request_version() == (3 if metadata_version != "2.7" else 1)
        [partition] = request.partitions_by_topic_partition({TOPIC_ID: TOPIC}).values()
        assert (partition.partition_index, partition.leader_epoch, partition.partition_epoch,
                [b.broker_id for b in partition.new_isr_with_epochs]) == (0, 1, 10, [1, 2, 3])
    await _run(body)


@VERSIONS
async def test_basic_with_broker_epoch(metadata_version: str):
    """Mirrors AlterPartitionManagerTest#testBasicWithBrokerEpoch: the ISR's broker epochs (101-103,
    this broker's own from its supplier) go in the request (KIP-903)."""
    h = _Harness(metadata_version, broker_epoch=101)

    async def body(tg):
        h.manager.start(tg)
        h.submit("tp0", TP0, _proposal(), isr_broker_epochs={2: 102, 3: 103})
        request = (await h.request()).request
        assert request.broker_epoch == 101
        [partition] = request.partitions_by_topic_partition({TOPIC_ID: TOPIC}).values()
        assert [(b.broker_id, b.broker_epoch) for b in partition.new_isr_with_epochs] == [(1, 101), (2, 102), (3, 103)]
    await _run(body)


@VERSIONS
@pytest.mark.parametrize("state", [LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING])
async def test_basic_sent_leader_recovery_state(metadata_version: str, state: int):
    """Mirrors AlterPartitionManagerTest#testBasicSentLeaderRecoveryState: before 3.2 the request
    says RECOVERED whatever the proposal says."""
    h = _Harness(metadata_version)

    async def body(tg):
        h.manager.start(tg)
        h.submit("tp0", TP0, _proposal((1,), state))
        [partition] = (await h.request()).request.partitions_by_topic_partition({TOPIC_ID: TOPIC}).values()
        expected = state if metadata_version != "2.7" else LeaderRecoveryState.RECOVERED
        assert partition.leader_recovery_state == expected
    await _run(body)


@VERSIONS
async def test_overwrite_within_batch(metadata_version: str):
    """Mirrors AlterPartitionManagerTest#testOverwriteWithinBatch: a second proposal for a pending
    partition is OPERATION_NOT_ATTEMPTED; once answered, the partition can propose again."""
    h = _Harness(metadata_version)

    async def body(tg):
        h.manager.start(tg)
        h.submit("first", TP0, _proposal((1, 2, 3)))
        h.submit("failed", TP0, _proposal((1, 2)))
        assert "first" not in h.results and h.results["failed"] == (None, Errors.OPERATION_NOT_ATTEMPTED)
        _answer(await h.request(), (TP0, Errors.NONE))
        await anyio.sleep(0.001)
        h.submit("again", TP0, _proposal((1,)))
        assert "again" not in h.results
        request = (await h.request()).request
        [partition] = request.partitions_by_topic_partition({TOPIC_ID: TOPIC}).values()
        assert len(request.topics) == 1 and [b.broker_id for b in partition.new_isr_with_epochs] == [1]
    await _run(body)


@VERSIONS
async def test_single_batch(metadata_version: str):
    """Mirrors AlterPartitionManagerTest#testSingleBatch: submissions made while a request is in
    flight wait; an answer that leaves partition 0 out sends all ten together next."""
    h = _Harness(metadata_version)
    partitions = [TopicPartition(TOPIC, p) for p in range(10)]

    async def body(tg):
        h.manager.start(tg)
        h.submit("p0", partitions[0], _proposal())
        first = await h.request()
        for i, tp in enumerate(partitions[1:], start=1):
            h.submit(f"p{i}", tp, _proposal())
        await h.no_request()
        _answer(first)   # no partition in the answer
        request = (await h.request()).request
        assert len(request.topics) == 1 and len(request.topics[0].partitions) == 10
    await _run(body)


async def test_submit_from_callback():
    """Mirrors AlterPartitionManagerTest#testSubmitFromCallback: a callback that resubmits on a
    partition error gets its retry sent, and the retry's answer completes it."""
    h = _Harness("3.2")

    def retry(leader_and_isr, error):
        if error is not None:
            h.submit("retry", TP0, _proposal())

    async def body(tg):
        h.manager.start(tg)
        h.submit("first", TP0, _proposal(), callback=retry)
        _answer(await h.request(), (TP0, Errors.UNKNOWN_SERVER_ERROR))
        _answer(await h.request(), (TP0, Errors.NONE))
        await anyio.sleep(0.001)
        assert h.results["first"] == (None, Errors.UNKNOWN_SERVER_ERROR)
        assert h.results["retry"] == (_proposal(), None)
        assert TP0 not in h.manager.unsent_isr_updates
    await _run(body)


@pytest.mark.parametrize("error", [Errors.CLUSTER_AUTHORIZATION_FAILED, Errors.STALE_BROKER_EPOCH,
                                   Errors.UNKNOWN_SERVER_ERROR])
async def test_retry_on_top_level_error(error: Errors):
    """Mirrors AlterPartitionManagerTest#testAuthorizationFailed, #testStaleBrokerEpoch and
    #testUnknownServer (#testRetryOnTopLevelError): nothing leaves the pending map; after the
    back-off the change is sent again and its answer clears it."""
    h = _Harness("3.2")

    async def body(tg):
        h.manager.start(tg)
        h.submit("tp0", TP0, _proposal())
        _answer(await h.request(), error=error)
        await anyio.sleep(0.001)
        assert TP0 in h.manager.unsent_isr_updates and "tp0" not in h.results
        await anyio.sleep(0.1)
        _answer(await h.request(), (TP0, Errors.NONE))
        await anyio.sleep(0.001)
        assert TP0 not in h.manager.unsent_isr_updates and h.results["tp0"] == (_proposal(), None)
    await _run(body)


@pytest.mark.parametrize("error", [Errors.INVALID_UPDATE_VERSION, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                   Errors.NOT_LEADER_OR_FOLLOWER, Errors.INVALID_REQUEST])
async def test_partition_error(error: Errors):
    """Mirrors AlterPartitionManagerTest#testInvalidUpdateVersion, #testUnknownTopicPartition,
    #testNotLeaderOrFollower and #testInvalidRequest (#checkPartitionError): the proposal fails
    with the error and leaves the pending map, so a new one is accepted and waits."""
    h = _Harness("3.2")

    async def body(tg):
        h.manager.start(tg)
        h.submit("tp0", TP0, _proposal())
        _answer(await h.request(), (TP0, error))
        await anyio.sleep(0.001)
        assert h.results["tp0"] == (None, error)
        h.submit("again", TP0, _proposal())
        assert "again" not in h.results
    await _run(body)


@VERSIONS
async def test_partial_topic_ids(metadata_version: str):
    """Mirrors AlterPartitionManagerTest#testPartialTopicIds: the latest version only when every
    topic of the request has an id (and the IBP has ids); a topic without one sends version 1."""
    h = _Harness(metadata_version)
    foo, bar, zar = TopicPartition("foo", 0), TopicPartition("bar", 0), TopicPartition("zar", 0)
    can_use_topic_ids = metadata_version != "2.7"

    async def body(tg):
        h.manager.start(tg)
        h.submit("zar", zar, _proposal(), topic_id=Uuid.from_string("YS9owjv5TG2OlsvBM0Qw6g"))
        first = await h.request()
        assert first.request.request_version() == (3 if can_use_topic_ids else 1)
        h.submit("foo", foo, _proposal(), topic_id=ZERO_UUID)
        h.submit("bar", bar, _proposal(), topic_id=Uuid.from_string("69O438ZkTSeqqclTtZO2KA"))
        _answer(first, (zar, Errors.NONE))
        second = await h.request()
        assert "zar" in h.results and "foo" not in h.results and "bar" not in h.results
        assert second.request.request_version() == 1
        assert sorted(second.request.partitions_by_topic_partition()) == sorted([foo, bar])
        _answer(second, (foo, Errors.NONE), (bar, Errors.NONE))
        await anyio.sleep(0.001)
        assert {"zar", "foo", "bar"} <= set(h.results)
    await _run(body)
