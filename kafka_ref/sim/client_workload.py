"""The simulator's real clients, and the liveness invariants they are held to.

Scenarios with ``clients=True`` run, beside the raw-request workload, the project's own
``Producer``, a ``Consumer`` in a group and an ``Admin``, each bootstrapped from *every* broker
(so the bootstrap lists name brokers the nemesis kills). Every call a client makes is one
*operation*: its kind, when it started, the timeout its configuration gives it, when it ended
and how (acknowledged, or the error). Two invariants hold them to Kafka's promises:

* ``client_op_bounded`` – every operation completes, successfully or with an error, within its
  configured timeout (a send within ``max.block.ms + delivery.timeout.ms``, a commit or an Admin
  call within ``default.api.timeout.ms``, a poll within its own timeout), plus
  ``BOUND_SLACK_S`` for the client's own poll granularity;
* ``client_op_while_available`` – a send does not fail while its partition is available, nor an
  offset commit with a timeout while the group's ``__consumer_offsets`` partition is: for the
  last ``AVAILABLE_WINDOW_S`` before the call gave up, the controller's record named a running
  leader whose ISR (every member running) met ``min.insync.replicas``. That window is a
  request timeout plus a few reconnect backoffs and metadata refreshes, so a client that looks
  for the new leader the way Kafka's does finds it in time; one that keeps asking a dead broker
  for metadata does not;
* ``client_progress_after_heal`` – once the faults are healed and the cluster has converged, the
  same client instances (with whatever state the faults left them in) make progress: a record sent
  to every partition is acknowledged, the group consumer reads each of them and commits, and the
  Admin describes the cluster, each within its timeout.

A client stuck on a dead broker (the producer stall of issue 17: metadata requests always sent
to a broker that is down) breaks the second even though each of its calls ends, with an error,
on time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import anyio

from kafka_ref.clients import Admin, Consumer, Producer
from kafka_ref.common.errors import TimeoutException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.coordinator.group.group_metadata_manager import partition_for
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.sim.history import SOURCE_CLIENT

if TYPE_CHECKING:
    from kafka_ref.sim.simulate import SimContext

CLIENT_INVARIANTS = ("client_op_bounded", "client_op_while_available", "client_progress_after_heal")

# Client configuration (scaled to the simulator's minute-long runs; Kafka's names).
REQUEST_TIMEOUT_MS = 10000
DELIVERY_TIMEOUT_MS = 30000
MAX_BLOCK_MS = 20000
API_TIMEOUT_MS = 30000
POLL_TIMEOUT_MS = 1000
SESSION_TIMEOUT_MS = 10000
HEARTBEAT_INTERVAL_MS = 1000
BOUND_SLACK_S = 1.0
AVAILABLE_WINDOW_S = (REQUEST_TIMEOUT_MS + 2000) / 1000
AVAILABILITY_SAMPLE_S = 0.1
# How long after healing the group consumer may take to read the post-heal records.
PROGRESS_TIMEOUT_S = 60.0
GROUP_ID = "sim-clients"
OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(slots=True)
class ClientOperation:
    """One client call: what, when, its timeout, and how it ended (None while running)."""

    client: str
    kind: str
    started_s: float
    timeout_s: float
    ended_s: float | None = None
    outcome: str | None = None


class ClientWorkload:
    """A Producer, a group Consumer and an Admin, driven by one seeded stream, every call bounded."""

    def __init__(self, ctx: "SimContext") -> None:
        self.ctx = ctx
        self.rng = ctx.sub_rng("clients")
        self.operations: list[ClientOperation] = []
        self.running = True
        self._healed = anyio.Event()
        self._finished = anyio.Event()
        self._pending: set[int] = set()
        self._idle = anyio.Event()
        self._idle.set()
        self.post_heal_ok = False
        # When each watched partition was last seen unavailable (loop time; never seen: 0).
        self._unavailable_at: dict[TopicPartition, float] = {}
        self.producer: Producer = None  # type: ignore[assignment]
        self.consumer: Consumer = None  # type: ignore[assignment]
        self.admin: Admin = None  # type: ignore[assignment]

    # -- operations ---------------------------------------------------------------------------

    async def operation(self, client: str, kind: str, timeout_s: float, call: Callable[[], Awaitable[Any]],
                        after_heal: bool = False) -> tuple[bool, Any, ClientOperation]:
        """Run one client call and hold it to its bound; (succeeded, result or error, the operation)."""
        ctx = self.ctx
        op = ClientOperation(client, kind, anyio.current_time(), timeout_s)
        index = len(self.operations)
        self.operations.append(op)
        self._pending.add(index)
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        result: Any = None
        ok = False
        try:
            with anyio.move_on_after(timeout_s + BOUND_SLACK_S) as scope:
                try:
                    result = await call()
                    ok = True
                    op.outcome = "ok"
                except RUN_ENDING:
                    raise
                except Exception as exc:
                    result = exc
                    op.outcome = type(exc).__name__
            op.ended_s = anyio.current_time()
            if scope.cancelled_caught:
                op.outcome = "unbounded"
                ctx.checker.violate("client_op_bounded",
                                    f"{client} {kind} did not complete within its timeout of {timeout_s:g} s",
                                    client=client, operation=kind, started_s=round(op.started_s, 3),
                                    timeout_s=timeout_s, after_heal=after_heal)
            if after_heal and not ok:
                ctx.checker.violate("client_progress_after_heal",
                                    f"{client} {kind} after healing ended with {op.outcome}: {result!r}"[:400],
                                    client=client, operation=kind, started_s=round(op.started_s, 3))
            ctx.history.append(SOURCE_CLIENT, "client_op", client=client, kind=kind, outcome=op.outcome,
                               took_ms=round((op.ended_s - op.started_s) * 1000, 3))
            return ok, result, op
        finally:
            self._pending.discard(index)
            if not self._pending:
                self._idle.set()

    # -- the run --------------------------------------------------------------------------------

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the clients, run their loops until healed, then check progress after healing."""
        ctx = self.ctx
        network = ctx.cluster.network
        bootstrap = sorted(ctx.cluster.brokers)
        producer = Producer(network, bootstrap, client_id="sim-producer", acks="all",
                            request_timeout_ms=REQUEST_TIMEOUT_MS, delivery_timeout_ms=DELIVERY_TIMEOUT_MS,
                            max_block_ms=MAX_BLOCK_MS,
                            # Recorded seeds predate the idempotent producer and the five
                            # requests in flight (Kafka's defaults): without them they replay
                            # as they were recorded.
                            enable_idempotence=False, max_in_flight=1)
        consumer = Consumer(network, bootstrap, client_id="sim-consumer", group_id=GROUP_ID,
                            request_timeout_ms=REQUEST_TIMEOUT_MS, default_api_timeout_ms=API_TIMEOUT_MS,
                            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
                            client_rack=ctx.scenario.client_rack,
                            # It commits on its own schedule (commit_sync); recorded seeds predate auto-commit.
                            enable_auto_commit=False)
        admin = Admin(network, bootstrap, client_id="sim-admin", request_timeout_ms=REQUEST_TIMEOUT_MS,
                      default_api_timeout_ms=API_TIMEOUT_MS)
        self.producer, self.consumer, self.admin = producer, consumer, admin
        async with producer, consumer, admin:
            consumer.subscribe(sorted({tp.topic for tp in ctx.partitions}))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._produce_loop)
                tg.start_soon(self._consume_loop)
                tg.start_soon(self._admin_loop)
                tg.start_soon(self._watch_availability)
                task_status.started()
                await self._healed.wait()
                # 1. No new operations; those in flight finish (each within its own bound).
                self.running = False
                await self._idle.wait()
                tg.cancel_scope.cancel()
            # 2. After healing the same clients must make progress.
            self.post_heal_ok = await self._progress_after_heal()
        self._finished.set()

    async def finish_after_heal(self) -> None:
        """Called by the simulator once the cluster has converged: run the post-heal checks."""
        self._healed.set()
        await self._finished.wait()

    # -- availability ---------------------------------------------------------------------------

    def partition_available(self, tp: TopicPartition) -> bool:
        """The controller names a running leader, and an ISR of running brokers meeting min.insync.replicas."""
        ctx = self.ctx
        state = ctx.partition_state(tp)
        if state is None or state["leader"] < 0:
            return False
        brokers = ctx.cluster.brokers
        running = [b for b in state["isr"] if b in brokers and brokers[b].is_running and b not in ctx.down]
        min_isr = ctx.scenario.min_insync_replicas if tp.topic != OFFSETS_TOPIC else 1
        return state["leader"] in running and len(running) == len(state["isr"]) >= min_isr

    def _watched(self) -> list[TopicPartition]:
        count = self.ctx.cluster.broker_config(0).get("offsets.topic.num.partitions")
        return self.ctx.partitions + [TopicPartition(OFFSETS_TOPIC, partition_for(GROUP_ID, count))]

    async def _watch_availability(self) -> None:
        watched = self._watched()
        while True:
            now = anyio.current_time()
            for tp in watched:
                if not self.partition_available(tp):
                    self._unavailable_at[tp] = now
            await anyio.sleep(AVAILABILITY_SAMPLE_S)

    def _check_failed_while_available(self, tp: TopicPartition, op: ClientOperation, error: BaseException,
                                      **states: Any) -> None:
        """``client_op_while_available``: a call that failed although ``tp`` had been available long enough."""
        if op.ended_s is None or not self.partition_available(tp):
            return
        available_for = op.ended_s - self._unavailable_at.get(tp, 0.0)
        if available_for > AVAILABLE_WINDOW_S:
            self.ctx.checker.violate(
                "client_op_while_available",
                f"{op.client} {op.kind} failed with {error!r} although {tp} had been available for "
                f"{available_for:.1f} s"[:400],
                topic_partition=str(tp), started_s=round(op.started_s, 3), ended_s=round(op.ended_s, 3), **states)

    async def _send(self, tp: TopicPartition, value: bytes, after_heal: bool = False) -> bool:
        ok, result, op = await self.operation("producer", "send", self._send_bound_s(),
                                              lambda: self.producer.send(tp.topic, value, partition=tp.partition),
                                              after_heal=after_heal)
        if not ok and isinstance(result, BaseException):
            self._check_failed_while_available(tp, op, result,
                                               client_leader=self.producer.metadata.current_leader(tp).leader,
                                               known_brokers=sorted(self.producer.metadata.fetch().nodes))
        return ok

    async def _commit(self, after_heal: bool = False) -> bool:
        ok, result, op = await self.operation("consumer", "commit", API_TIMEOUT_MS / 1000,
                                              lambda: self.consumer.commit_sync(timeout_ms=API_TIMEOUT_MS),
                                              after_heal=after_heal)
        if not ok and isinstance(result, TimeoutException):
            self._check_failed_while_available(self._watched()[-1], op, result,
                                               coordinator=self.consumer.coordinator.coordinator,
                                               known_brokers=sorted(self.consumer.metadata.fetch().nodes))
        return ok

    # -- loops during the faults ----------------------------------------------------------------

    def _send_bound_s(self) -> float:
        return (MAX_BLOCK_MS + DELIVERY_TIMEOUT_MS) / 1000

    @property
    def _active(self) -> bool:
        """New operations are started while the faults last (those in flight may run on)."""
        return self.running and not self.ctx.stopping

    async def _produce_loop(self) -> None:
        n = 0
        while self._active:
            await anyio.sleep(self.rng.uniform(0.05, 0.3))
            if not self._active:
                return
            tp = self.rng.choice(self.ctx.partitions)
            n += 1
            await self._send(tp, b"c-%d" % n)

    async def _consume_loop(self) -> None:
        while self._active:
            await self.operation("consumer", "poll", POLL_TIMEOUT_MS / 1000, lambda: self.consumer.poll(POLL_TIMEOUT_MS))
            if self._active and self.rng.random() < 0.2:
                await self._commit()
            await anyio.sleep(self.rng.uniform(0.0, 0.2))

    async def _admin_loop(self) -> None:
        while self._active:
            await anyio.sleep(self.rng.uniform(1.0, 4.0))
            if not self._active:
                return
            if self.rng.random() < 0.5:
                await self.operation("admin", "describe_cluster", API_TIMEOUT_MS / 1000,
                                     lambda: self.admin.describe_cluster(timeout_ms=API_TIMEOUT_MS))
            else:
                topics = [self.ctx.partitions[0].topic]
                await self.operation("admin", "describe_topics", API_TIMEOUT_MS / 1000,
                                     lambda: self.admin.describe_topics(topics, timeout_ms=API_TIMEOUT_MS))

    # -- after healing ------------------------------------------------------------------------------

    async def _progress_after_heal(self) -> bool:
        """Every client does useful work again: send to every partition, read it back in the group, commit, describe."""
        ctx = self.ctx
        ok = True
        sent: dict[TopicPartition, bytes] = {}
        # 1. The producer: one record per partition, each acknowledged.
        for tp in ctx.partitions:
            value = b"after-heal-%d" % tp.partition
            done = await self._send(tp, value, after_heal=True)
            ok &= done
            if done:
                sent[tp] = value
        # 2. The group consumer reads them (polls, each within its timeout) and commits.
        seen: set[bytes] = set()
        deadline = anyio.current_time() + PROGRESS_TIMEOUT_S
        while not set(sent.values()) <= seen and anyio.current_time() < deadline:
            done, records, _ = await self.operation("consumer", "poll", POLL_TIMEOUT_MS / 1000,
                                                 lambda: self.consumer.poll(POLL_TIMEOUT_MS), after_heal=True)
            ok &= done
            if done:
                seen.update(r.value for r in records if r.value is not None)
        missing = sorted(v.decode() for v in set(sent.values()) - seen)
        if missing:
            ok = False
            ctx.checker.violate("client_progress_after_heal",
                                f"the group consumer did not read {missing} within {PROGRESS_TIMEOUT_S:g} s after healing",
                                assignment=sorted(str(tp) for tp in self.consumer.assignment()))
        ok &= await self._commit(after_heal=True)
        # 3. The Admin.
        done, _, _ = await self.operation("admin", "describe_cluster", API_TIMEOUT_MS / 1000,
                                       lambda: self.admin.describe_cluster(timeout_ms=API_TIMEOUT_MS), after_heal=True)
        ok &= done
        return ok

    def details(self) -> dict[str, int]:
        """Counts for the run summary."""
        ended = [op for op in self.operations if op.ended_s is not None]
        return {
            "client_ops": len(self.operations),
            "client_ops_ok": sum(op.outcome == "ok" for op in ended),
            "client_ops_failed": sum(op.outcome not in ("ok", "unbounded") for op in ended),
        }
