"""The idempotent producer (enable.idempotence, Kafka's default since 3.0).

The producer gets a producer id with InitProducerId before it sends, stamps each batch with the
id, epoch 0 and the partition's next sequence, and keeps that stamp when it retries; the leader
answers a batch it already wrote with the first write's offsets (ProducerStateManager's
duplicate check), so a produce request delivered twice leaves one copy in the log. Without
idempotence the same fault writes the record twice. Config rules after ProducerConfigTest's
idempotence cases (ProducerConfig#postProcessAndValidateIdempotenceConfigs).
"""

from __future__ import annotations

import pytest

from kafka_ref import Cluster, TopicPartition
from kafka_ref.clients import Producer
from kafka_ref.clients.record_accumulator import ProducerBatch
from kafka_ref.clients.transaction_manager import TransactionManager
from kafka_ref.common.records import SimpleRecord
from kafka_ref.common.errors import ConfigException, OutOfOrderSequenceException, UnknownProducerIdException
from kafka_ref.network import Network

TP = TopicPartition("t", 0)


class _DuplicateFirstProduce:
    """A fault model that delivers the first ProduceRequest twice (the first answer is lost)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.done = False

    def deliveries(self, envelope):
        if not self.done and type(envelope.request).__name__ == "ProduceRequest":
            self.done = True
            return (0.0, 0.0)
        return (0.0,)

    def call_later(self, delay_s, callback):   # every delay here is 0
        callback()


def _leader_batches(cluster: Cluster):
    log = cluster.broker(cluster.leader_for("t", 0)).log_manager.get_log(TP)
    return list(log.batches)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["zk", "kraft"])
async def test_default_producer_is_idempotent_and_numbers_its_batches(mode: str):
    """Three sends, three batches: one producer id, epoch 0, base sequences 0, 1 and 3 (the second batch held two records)."""
    async with Cluster(brokers=3, metadata_mode=mode, seed=3) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        async with cluster.producer() as producer:
            assert producer.enable_idempotence
            await producer.send("t", b"a", partition=0)
            futures = [producer.send_nowait("t", v, partition=0) for v in (b"b", b"c")]
            await producer.flush()
            for f in futures:
                await f
            await producer.send("t", b"d", partition=0)
            producer_id = producer.transaction_manager.producer_id
        batches = _leader_batches(cluster)
        assert producer_id >= 0
        assert [(b.producer_id, b.producer_epoch, b.base_sequence, b.base_offset) for b in batches] == [
            (producer_id, 0, 0, 0), (producer_id, 0, 1, 1), (producer_id, 0, 3, 3)]


@pytest.mark.anyio
@pytest.mark.parametrize("idempotent, copies", [(True, 1), (False, 2)])
async def test_a_produce_request_delivered_twice_is_written_once_when_idempotent(idempotent: bool, copies: int):
    """The first ProduceRequest reaches the leader twice: the idempotent producer's second copy is
    the duplicate of the first (same offset in the answer); without idempotence both are written."""
    async with Cluster(brokers=3, metadata_mode="zk", seed=5) as cluster:
        await cluster.create_topic("t", replica_assignment={0: [0, 1, 2]})
        async with cluster.producer(enable_idempotence=idempotent) as producer:
            await producer.send("t", b"warm-up", partition=0)   # metadata and producer id first
            cluster.network.set_fault_model(_DuplicateFirstProduce(cluster))
            metadata = await producer.send("t", b"once", partition=0)
            cluster.network.set_fault_model(None)
        values = [r.value for b in _leader_batches(cluster) for r in b]
        assert values == [b"warm-up"] + [b"once"] * copies
        assert metadata.offset == copies   # idempotent: the first write's offset 1; else the second copy's 2


def test_idempotence_rules():
    """ProducerConfig's rules: unset, a conflicting setting turns idempotence off; asked for, it is a ConfigException naming the setting."""
    network = Network()
    assert Producer(network, [0]).enable_idempotence is True
    assert Producer(network, [0], acks=1).enable_idempotence is False
    assert Producer(network, [0], retries=0).enable_idempotence is False
    assert Producer(network, [0], max_in_flight=6).enable_idempotence is False
    assert Producer(network, [0], enable_idempotence=False).transaction_manager is None
    for kwargs, key in (({"acks": 1}, "acks"), ({"retries": 0}, "retries"),
                        ({"max_in_flight": 6}, "max.in.flight.requests.per.connection")):
        with pytest.raises(ConfigException, match=key):
            Producer(network, [0], enable_idempotence=True, **kwargs)


def test_transaction_manager_sequences_and_epoch_bump():
    """TransactionManager: sequences per partition from 0, wrapping at Integer.MAX_VALUE; an
    out-of-order or unknown-producer failure bumps the epoch locally (same producer id, sequences
    from 0 again, KIP-360), and an exhausted epoch forgets the id."""
    tm = TransactionManager("p")
    tm.set_producer_id_and_epoch(7, 0)
    tm.increment_sequence_number(TP, 3)
    assert tm.sequence_number(TP) == 3 and tm.sequence_number(TopicPartition("t", 1)) == 0
    tm.get_or_create(TP).next_sequence = 2**31 - 1
    tm.increment_sequence_number(TP, 2)
    assert tm.sequence_number(TP) == 1
    batch = ProducerBatch(TP, 1024, 0)
    batch.try_append(SimpleRecord(b"k", b"v", (), 0), None, 0)
    batch.set_producer_state(7, 0, 1)
    tm.handle_failed_batch(batch, ConfigException("x", 1, "not a sequence error"), False)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert (tm.producer_id, tm.producer_epoch, tm.sequence_number(TP)) == (7, 0, 1)
    tm.handle_failed_batch(batch, OutOfOrderSequenceException("gap"), False)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert (tm.producer_id, tm.producer_epoch, tm.sequence_number(TP)) == (7, 1, 0)
    tm.increment_sequence_number(TP, 4)
    tm.handle_failed_batch(batch, UnknownProducerIdException("gone"), False)   # an OutOfOrderSequenceException too
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert (tm.producer_id, tm.producer_epoch, tm.sequence_number(TP)) == (7, 2, 0)
    tm.set_producer_id_and_epoch(7, 32767)
    tm.handle_failed_batch(batch, OutOfOrderSequenceException("gap"), False)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert (tm.has_producer_id(), tm.sequence_number(TP)) == (False, 0)
