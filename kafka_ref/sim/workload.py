"""The simulated clients: producers with acks=all / acks=1 and a consumer, all seeded.

Producers send raw ProduceRequests (one record per request, each value unique, no retries: a
failed or timed-out send is simply recorded as not acknowledged). Which partition, which acks,
which broker to hit and when all come from the workload's random stream: mostly the leader
named by a random live broker's metadata cache (possibly stale, as a real client's would be),
sometimes ZooKeeper's leader, sometimes a random broker (which answers NOT_LEADER_OR_FOLLOWER).
The consumer fetches each partition from its leader with FetchRequest (replica id -1, so the
leader serves only below its high watermark) and reports every record to the checker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.records import MemoryRecords, SimpleRecord
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest
from kafka_ref.common.requests.produce import ProduceRequest
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import ANONYMOUS_PRINCIPAL
from kafka_ref.sim.history import SOURCE_CLIENT
from kafka_ref.sim.invariants import AckedWrite, ConsumedRecord, record_at

if TYPE_CHECKING:
    from kafka_ref.sim.simulate import SimContext

PRODUCE_TIMEOUT_MS = 5000
REQUEST_TIMEOUT_MS = 8000


class Workload:
    """Producers and a consumer driven by one seeded random stream."""

    def __init__(self, ctx: "SimContext") -> None:
        self.ctx = ctx
        self.rng = ctx.sub_rng("workload")
        self.scenario = ctx.scenario
        self.acked: list[AckedWrite] = []
        self.consumed: list[ConsumedRecord] = []
        self.produced = 0
        self.acked_all = 0
        self.acked_one = 0
        self.positions: dict[TopicPartition, int] = {tp: 0 for tp in ctx.partitions}
        self._sequence = 0
        self.producing = True

    # -- helpers ---------------------------------------------------------------------------

    def choose_broker(self, tp: TopicPartition) -> int | None:
        """Which broker a client sends to: metadata (maybe stale), ZooKeeper's view, or any."""
        ctx = self.ctx
        live = ctx.live_brokers()
        if not live:
            return None
        roll = self.rng.random()
        if roll < 0.05:
            return self.rng.choice(sorted(ctx.cluster.brokers))
        if roll < 0.2:
            leader = ctx.zk_leader(tp)
            return leader if leader >= 0 else None
        informant = ctx.cluster.brokers[self.rng.choice(live)]
        info = informant.metadata_cache.get_partition_info(tp)
        if info is None or info.leader < 0:
            return None
        return info.leader

    # -- producing ----------------------------------------------------------------------------

    async def run_producer(self, producer_id: int) -> None:
        scenario = self.scenario
        while self.producing:
            await anyio.sleep(self.rng.uniform(*scenario.produce_interval_ms) / 1000)
            if not self.producing:
                return
            tp = self.rng.choice(self.ctx.partitions)
            acks = -1 if self.rng.random() < scenario.acks_all_ratio else 1
            broker = self.choose_broker(tp)
            await self.produce_once(producer_id, tp, acks, broker)

    async def produce_once(self, producer_id: int, tp: TopicPartition, acks: int, broker: int | None) -> None:
        ctx = self.ctx
        self._sequence += 1
        n = self._sequence
        value = b"p%d-%d" % (producer_id, n)
        if broker is None:
            ctx.history.append(SOURCE_CLIENT, "produce_skipped", producer=producer_id, n=n, topic_partition=str(tp),
                               reason="no leader known")
            return
        self.produced += 1
        request = ProduceRequest.build(acks=acks, timeout_ms=PRODUCE_TIMEOUT_MS,
                                       records={tp: MemoryRecords.with_records([SimpleRecord(None, value)])})
        ctx.history.append(SOURCE_CLIENT, "produce", producer=producer_id, n=n, topic_partition=str(tp), acks=acks,
                           broker=broker)
        try:
            response = await ctx.cluster.network.send(f"producer-{producer_id}", broker, request, REQUEST_TIMEOUT_MS,
                                                      principal=ANONYMOUS_PRINCIPAL)
        except Exception as exc:  # the network said no: not acknowledged
            ctx.history.append(SOURCE_CLIENT, "produce_failed", producer=producer_id, n=n, error=type(exc).__name__)
            return
        result = response.responses[0].partition_responses[0]
        error = Errors.for_code(result.error_code)
        if error is not Errors.NONE:
            ctx.history.append(SOURCE_CLIENT, "produce_error", producer=producer_id, n=n, error=error.name)
            return
        epoch = self._epoch_of(broker, tp, result.base_offset)
        event = ctx.history.append(SOURCE_CLIENT, "produce_ack", producer=producer_id, n=n, topic_partition=str(tp),
                                   acks=acks, broker=broker, offset=result.base_offset, epoch=epoch)
        self.acked.append(AckedWrite(tp, result.base_offset, value, acks, broker, epoch, event.index))
        if acks == -1:
            self.acked_all += 1
        else:
            self.acked_one += 1

    def _epoch_of(self, broker_id: int, tp: TopicPartition, offset: int) -> int:
        """The leader epoch of the batch the leader holds at ``offset`` now (-1 if it is gone)."""
        broker = self.ctx.cluster.brokers.get(broker_id)
        partition = broker.replica_manager.online_partition(tp) if broker is not None and broker.is_running else None
        if partition is None or partition.log is None:
            return -1
        found = record_at(list(partition.log.local_log.batches), offset)
        return found[0] if found is not None else -1

    # -- consuming ----------------------------------------------------------------------------

    async def run_consumer(self) -> None:
        scenario = self.scenario
        while True:
            await anyio.sleep(self.rng.uniform(*scenario.consume_interval_ms) / 1000)
            tp = self.rng.choice(self.ctx.partitions)
            await self.consume_once(tp, self.choose_broker(tp))

    async def consume_once(self, tp: TopicPartition, broker: int | None) -> int:
        """One fetch of ``tp`` from ``broker`` at the consumer's position; returns records read."""
        ctx = self.ctx
        if broker is None:
            return 0
        position = self.positions[tp]
        request = FetchRequest.for_consumer(
            max_wait_ms=int(self.rng.uniform(0, 200)), min_bytes=1,
            fetch_data={tp: FetchPartition(partition=tp.partition, fetch_offset=position, partition_max_bytes=1 << 16)},
        )
        try:
            response = await ctx.cluster.network.send("consumer", broker, request, REQUEST_TIMEOUT_MS,
                                                      principal=ANONYMOUS_PRINCIPAL)
        except Exception:
            return 0
        data = response.partition_data(tp.topic, tp.partition)
        if data is None:
            return 0
        error = Errors.for_code(data.error_code)
        if error is Errors.OFFSET_OUT_OF_RANGE:
            self._reset(tp, broker, position)
            return 0
        if error is not Errors.NONE:
            return 0
        read = 0
        for batch in data.records:
            for record in batch:
                if record.offset < self.positions[tp]:
                    continue
                event = ctx.history.append(SOURCE_CLIENT, "consume", topic_partition=str(tp), broker=broker,
                                           offset=record.offset, value=record.value, high_watermark=data.high_watermark)
                consumed = ConsumedRecord(tp, record.offset, record.value or b"", broker, data.high_watermark, event.index)
                self.consumed.append(consumed)
                ctx.checker.on_consumed(consumed)
                self.positions[tp] = record.offset + 1
                read += 1
        return read

    def _reset(self, tp: TopicPartition, broker: int, position: int) -> None:
        """Out of range: restart from the serving leader's high watermark (auto.offset.reset=latest)."""
        b = self.ctx.cluster.brokers.get(broker)
        partition = b.replica_manager.online_partition(tp) if b is not None and b.is_running else None
        new = partition.log.high_watermark if partition is not None and partition.log is not None else position
        self.ctx.history.append(SOURCE_CLIENT, "consumer_reset", topic_partition=str(tp), broker=broker, old=position, new=new)
        self.ctx.checker.on_consumer_reset(tp, position, new, broker)
        self.positions[tp] = new

    async def drain(self, timeout_s: float = 30.0) -> None:
        """After healing: read every partition up to its leader's HW."""
        with anyio.move_on_after(timeout_s):
            for tp in self.ctx.partitions:
                while True:
                    leader = self.ctx.zk_leader(tp)
                    if leader < 0:
                        break
                    partition = self.ctx.cluster.brokers[leader].replica_manager.online_partition(tp)
                    if partition is None or partition.log is None or self.positions[tp] >= partition.log.high_watermark:
                        break
                    if await self.consume_once(tp, leader) == 0:
                        await anyio.sleep(0.05)

    def details(self) -> dict[str, Any]:
        return {"produced": self.produced, "acked_all": self.acked_all, "acked_one": self.acked_one,
                "consumed": len(self.consumed)}
