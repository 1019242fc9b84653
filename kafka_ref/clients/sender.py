"""The producer's I/O task: turn ready batches into ProduceRequests and complete them.

Mirrors org.apache.kafka.clients.producer.internals.Sender (Kafka 3.x: idempotence through the
TransactionManager, no transactions). An idempotent producer first gets its producer id with
InitProducerId (nothing is drained before). Each round finds ready leaders, drains their batches, fails batches past
``delivery_timeout_ms``, sends one ProduceRequest per leader and refreshes metadata when due.
A response completes each batch: success sets the offsets; a retriable error puts the batch
back at the head of its partition queue (and asks for fresh metadata when the error means the
cached leader is stale); any other error fails the batch's records with the Kafka exception.
A NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH answer that names the new leader and its epoch
(KIP-951's ``current_leader``, with the leaders' ``node_endpoints``) also updates those
partitions' leaders in the metadata at once (Metadata#updatePartitionLeadership); the full
refresh is still requested, as Kafka does, and the retried batch skips its retry backoff
because its partition's leader epoch moved on (record_accumulator.py).
Only ``max_in_flight`` 1 mutes a partition while its batch is in flight; an idempotent producer
with more keeps several batches of a partition in flight and relies on sequence numbers for
their order (the TransactionManager and the accumulator's drain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import anyio

from kafka_ref.clients.client_metadata import LeaderAndEpoch, client_logger
from kafka_ref.clients.record_accumulator import ProducerBatch
from kafka_ref.common.errors import (
    ClusterAuthorizationException,
    Errors,
    InvalidMetadataException,
    InvalidRecordException,
    KafkaException,
    NetworkException,
    RetriableException,
    TimeoutException,
    TopicAuthorizationException,
)
from kafka_ref.common.node import Node
from kafka_ref.common.requests.fetch import LeaderIdAndEpoch
from kafka_ref.common.requests.produce import BatchIndexAndErrorMessage, ProduceRequest, ProduceResponse
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import NetworkTimeoutException

if TYPE_CHECKING:
    from kafka_ref.clients.producer import KafkaProducer

# --------------------------------------------------------------------------------------------
# The sender task
# --------------------------------------------------------------------------------------------


class Sender:
    """Mirrors org.apache.kafka.clients.producer.internals.Sender (the producer's I/O task).

    Each round: find ready leaders, drain their batches, fail expired ones, send one
    ProduceRequest per leader (a task each; at most ``max_in_flight`` per leader), refresh
    metadata when due, then sleep until woken or until the next batch can become ready.
    """

    def __init__(self, producer: KafkaProducer) -> None:
        self.producer = producer
        self.client = producer.client
        self.metadata = producer.metadata
        self.accumulator = producer.accumulator
        self.time = producer.time
        self.transaction_manager = producer.transaction_manager
        # One batch in flight per partition only with max.in.flight 1 (KafkaProducer#newSender);
        # an idempotent producer otherwise keeps order by sequence numbers.
        self.guarantee_message_order = producer.max_in_flight == 1
        self.running = True
        self.forced_close = False
        # The next InitProducerId resends a failed one (TxnRequestHandler#isRetry).
        self.init_producer_id_is_retry = False
        # The wait for an InitProducerId answer, which a forced close ends (Kafka's runOnce
        # never blocks on it: it polls and comes back to check its running flags).
        self._init_producer_id_scope: anyio.CancelScope | None = None
        self.in_flight_requests: dict[int, int] = {}
        self.in_flight_batches: dict[TopicPartition, list[ProducerBatch]] = {}
        self.finished = anyio.Event()
        self._wakeup_flag = False
        self._wakeup_event = anyio.Event()
        self.client.metadata_listeners.append(self.wakeup)
        self._log = client_logger(client_id=producer.client_id)

    def wakeup(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#wakeup."""
        self._wakeup_flag = True
        self._wakeup_event.set()

    def initiate_close(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#initiateClose: send what is left, then stop."""
        self.accumulator.closed = True
        self.running = False
        self.wakeup()

    def force_close(self) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#forceClose: stop now (even while waiting for a producer id)."""
        self.forced_close = True
        if self._init_producer_id_scope is not None:
            self._init_producer_id_scope.cancel()
        self.initiate_close()

    async def run(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#run."""
        try:
            # 1. The main loop.
            while self.running:
                await self.run_once(task_group)
            # 2. Closing: keep sending until nothing is left (unless forced).
            while not self.forced_close and (self.accumulator.has_undrained() or sum(self.in_flight_requests.values()) > 0):
                await self.run_once(task_group)
            # 3. Forced: whatever is left fails.
            if self.forced_close:
                self.accumulator.abort_incomplete_batches(KafkaException("Producer is closed forcefully."))
        finally:
            self.finished.set()

    async def run_once(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#runOnce (with NetworkClient#poll's metadata step)."""
        now = self.time.milliseconds()
        tm = self.transaction_manager
        # 0. Partitions left unresolved by an expired batch, with nothing more in flight, are
        #    resolved now (or ask for an epoch bump).
        if tm is not None:
            tm.maybe_resolve_sequences()
        # 1. An idempotent producer in its fatal state sends nothing: every record fails with the error.
        if tm is not None and tm.has_fatal_error():
            if tm.last_error is not None and self.accumulator.has_incomplete():
                self.accumulator.abort_incomplete_batches(tm.last_error)
            await self._poll(self.producer.retry_backoff_ms)
            return
        # 2. Otherwise it makes a requested epoch bump first (an exhausted epoch forgets the
        #    id), and needs its producer id before anything is drained. Then send what is ready.
        if tm is not None:
            tm.bump_idempotent_epoch_and_reset_id_if_needed()
        if tm is not None and not tm.has_producer_id():
            poll_timeout = await self.maybe_send_and_poll_init_producer_id(now)
        else:
            poll_timeout = self.send_producer_data(now, task_group)
        # 3. Metadata: refresh when due (in its own task; it wakes us when done).
        if not self.client.metadata_fetch_in_progress:
            due_in = self.metadata.time_to_next_update(now)
            if due_in == 0:
                task_group.start_soon(self._update_metadata)
            else:
                poll_timeout = min(poll_timeout, due_in)
        # 4. Sleep until woken (append, response, metadata) or the next deadline.
        await self._poll(poll_timeout)

    async def maybe_send_and_poll_init_producer_id(self, now: int) -> float:
        """Mirrors Sender#maybeSendAndPollTransactionalRequest for an idempotent producer's InitProducerId.

        1. Ask the least loaded broker for a producer id and wait for the answer (the Sender's
        round waits, as Kafka's poll does); a request that is a retry first sleeps
        ``retry.backoff.ms`` (Kafka sleeps before resending a handler marked as a retry).
        2. An id ends the wait; a lost connection, a timeout or a retriable error makes the
        request a retry; any other error fails every batch waiting to be sent and is retried
        too. A forced close ends the wait at once. Returns the poll timeout.
        """
        from kafka_ref.common.requests.init_producer_id import InitProducerIdRequest

        backoff = self.producer.retry_backoff_ms
        # 1. A broker to ask; a retry waits out the backoff first.
        node = self.client.least_loaded_node(now)
        if node is None:
            self.metadata.request_update()
            return backoff
        response = None
        with anyio.CancelScope() as self._init_producer_id_scope:
            if self.init_producer_id_is_retry:
                await self.time.sleep(backoff)
            try:
                response = await self.client.send(node, InitProducerIdRequest(transactional_id=None,
                                                                                transaction_timeout_ms=2**31 - 1))
            except (NetworkException, TimeoutException):
                self.init_producer_id_is_retry = True
        self._init_producer_id_scope = None
        if response is None:
            return 0
        # 2. The answer.
        error = Errors.for_code(response.error_code)
        if error is Errors.NONE:
            self.init_producer_id_is_retry = False
            self.transaction_manager.set_producer_id_and_epoch(response.producer_id, response.producer_epoch)
            return 0
        exc = error.exception()
        if not isinstance(exc, RetriableException):
            self._log.error("init_producer_id_failed", node=node, error=error.name)
            self.accumulator.abort_incomplete_batches(exc)
        self.init_producer_id_is_retry = True
        return 0

    def send_producer_data(self, now: int, task_group: anyio.abc.TaskGroup) -> float:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#sendProducerData; returns the poll timeout."""
        cluster = self.metadata.fetch()
        # 1. Which leaders have sendable data?
        result = self.accumulator.ready(cluster, now)
        if result.unknown_leader_topics:
            self.metadata.add_topics(result.unknown_leader_topics)
            self.metadata.request_update()
        # 2. Leaders we cannot reach now (reconnect backoff; a refused connection puts them there
        #    and asks for metadata) wait, and so do leaders with a full in-flight window.
        not_ready_timeout = float("inf")
        ready_nodes: set[int] = set()
        for node in result.ready_nodes:
            if not self.client.ready(node, now):
                not_ready_timeout = min(not_ready_timeout, self.client.connection_delay(node, now))
            elif self.in_flight_requests.get(node, 0) < self.producer.max_in_flight:
                ready_nodes.add(node)
        # 3. Drain; keep partitions muted while a batch is in flight if ordering must hold.
        batches = self.accumulator.drain(cluster, sorted(ready_nodes), self.producer.max_request_size, now)
        for node_batches in batches.values():
            for batch in node_batches:
                self.in_flight_batches.setdefault(batch.topic_partition, []).append(batch)
                if self.guarantee_message_order:
                    self.accumulator.muted.add(batch.topic_partition)
        # 4. Expire batches past the delivery timeout, in flight or queued. An expired batch
        #    that had been sent before (it was in retry) leaves its partition's sequences
        #    unresolved: nothing new is drained there until the batches in flight settle it.
        self.accumulator.next_batch_expiry_time_ms = float("inf")
        expired_inflight = self.get_expired_inflight_batches(now)
        expired = self.accumulator.expired_batches(now) + expired_inflight
        for batch in expired:
            self.fail_batch(batch, TimeoutException(
                f"Expiring {batch.record_count} record(s) for {batch.topic_partition}:{now - batch.created_ms} ms "
                f"has passed since batch creation"), False)
            if self.transaction_manager is not None and batch.in_retry():
                self.transaction_manager.mark_sequence_unresolved(batch)
        # 5. Send one request per leader.
        for node, node_batches in batches.items():
            if node_batches:
                self.send_produce_request(node, node_batches, task_group)
        poll_timeout = min(result.next_ready_check_delay_ms, self.accumulator.next_batch_expiry_time_ms - now, not_ready_timeout)
        if any(batches.values()):
            poll_timeout = 0
        return max(poll_timeout, 0)

    def get_expired_inflight_batches(self, now: int) -> list[ProducerBatch]:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#getExpiredInflightBatches.

        Per partition, in the order the batches were sent: 1. those past the delivery timeout
        leave the in-flight list and are returned; 2. the first one that is not ends the walk
        and sets the next expiry time. (Partitions are walked in the order they were first
        sent to; Kafka walks a HashMap.)
        """
        expired: list[ProducerBatch] = []
        for batches in self.in_flight_batches.values():
            while batches:
                batch = batches[0]
                if not batch.has_reached_delivery_timeout(self.accumulator.delivery_timeout_ms, now):
                    self.accumulator.next_batch_expiry_time_ms = min(
                        self.accumulator.next_batch_expiry_time_ms, batch.created_ms + self.accumulator.delivery_timeout_ms)
                    break
                batches.pop(0)
                expired.append(batch)
        return expired

    def send_produce_request(self, node: int, batches: list[ProducerBatch], task_group: anyio.abc.TaskGroup) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#sendProduceRequest."""
        producer = self.producer
        # 1. One request for all the node's batches.
        request = ProduceRequest.build(
            acks=producer.acks, timeout_ms=producer.request_timeout_ms,
            records={b.topic_partition: b.records_for_request() for b in batches},
        )
        envelope = self.client.post(node, request)
        # 2. acks=0: nothing comes back; the batches are done once the request is out.
        if producer.acks == 0:
            now = self.time.milliseconds()
            for batch in batches:
                if envelope.error is not None:
                    self.complete_batch(batch, Errors.NETWORK_EXCEPTION, -1, -1, f"Disconnected from node {node}", now)
                else:
                    self.complete_batch(batch, Errors.NONE, -1, -1, None, now)
            return
        # 3. Otherwise a task waits for the response (or the disconnect / timeout).
        self.in_flight_requests[node] = self.in_flight_requests.get(node, 0) + 1
        task_group.start_soon(self._await_produce_response, node, envelope, batches)

    async def _await_produce_response(self, node: int, envelope: Any, batches: list[ProducerBatch]) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#handleProduceResponse."""
        try:
            try:
                response: ProduceResponse = await self.client.wait(envelope)
            except (NetworkException, TimeoutException) as exc:
                # 1. Lost connection or request timeout: every batch gets NETWORK_EXCEPTION.
                suffix = " due to timeout" if isinstance(exc, NetworkTimeoutException) else ""
                now = self.time.milliseconds()
                for batch in batches:
                    self.complete_batch(batch, Errors.NETWORK_EXCEPTION, -1, -1, f"Disconnected from node {node}{suffix}", now)
                return
            # 2. One partition result per batch; leaders named in NOT_LEADER_OR_FOLLOWER /
            #    FENCED_LEADER_EPOCH answers are collected (KIP-951).
            now = self.time.milliseconds()
            results = response.responses_by_partition()
            partitions_with_updated_leader_info: dict[TopicPartition, LeaderAndEpoch] = {}
            for batch in batches:
                r = results.get(batch.topic_partition)
                if r is None:
                    self.complete_batch(batch, Errors.UNKNOWN_SERVER_ERROR, -1, -1, "no result for the partition in the response", now)
                else:
                    self.complete_batch(batch, Errors.for_code(r.error_code), r.base_offset, r.log_append_time_ms, r.error_message, now,
                                        r.log_start_offset, r.record_errors, r.current_leader,
                                        partitions_with_updated_leader_info)
            # 3. The new leaders go into the metadata at once, with the endpoints the response
            #    gives (an endpoint equal to Node#noNode is dropped).
            if partitions_with_updated_leader_info:
                no_node = Node.no_node()
                leader_nodes = [node_ for node_ in (Node(e.node_id, e.host, e.port, e.rack) for e in response.node_endpoints)
                                if node_ != no_node]
                self.metadata.update_partition_leadership(partitions_with_updated_leader_info, leader_nodes)
        finally:
            self.in_flight_requests[node] -= 1
            self.wakeup()

    def complete_batch(self, batch: ProducerBatch, error: Errors, base_offset: int, log_append_time: int,
                       error_message: str | None, now: int, log_start_offset: int = -1,
                       record_errors: tuple[BatchIndexAndErrorMessage, ...] = (),
                       current_leader: LeaderIdAndEpoch | None = None,
                       partitions_with_updated_leader_info: dict[TopicPartition, LeaderAndEpoch] | None = None) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#completeBatch.

        ``partitions_with_updated_leader_info`` (None for a disconnection, a timeout or acks=0)
        collects the leader a NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH answer names, when it
        names both a leader and an epoch (KIP-951).
        """
        tp = batch.topic_partition
        if error is not Errors.NONE:
            exc = error.exception(error_message)
            # 1. Retriable and within budget: back to the head of the queue.
            if self.can_retry(batch, error, log_start_offset, now):
                self._log.warning("produce_retry", topic_partition=str(tp), error=error.name,
                                  attempts_left=self.producer.retries - batch.attempts - 1)
                self._remove_in_flight(batch)
                self.accumulator.reenqueue(batch, now)
            elif error is Errors.DUPLICATE_SEQUENCE_NUMBER:
                # 2. The leader already has this sequence but no longer the batch's offsets: the
                #    records are written; succeed with what the answer says (no offset, -1).
                self._succeed(batch, base_offset, log_append_time)
            else:
                # 3. Otherwise the records fail with the Kafka exception for the code (a batch
                #    that still had retries left leaves a sequence gap to repair).
                self.fail_batch_for_response(batch, error, error_message, record_errors,
                                             batch.attempts < self.producer.retries)
            # 4. Stale metadata behind the error: refresh it; a leadership error may name the new
            #    leader, which the caller puts into the metadata at once (KIP-951).
            if isinstance(exc, InvalidMetadataException):
                if (error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH)
                        and partitions_with_updated_leader_info is not None and current_leader is not None
                        and current_leader.leader_id != -1 and current_leader.leader_epoch != -1):
                    partitions_with_updated_leader_info[tp] = LeaderAndEpoch(current_leader.leader_id,
                                                                             current_leader.leader_epoch)
                self.metadata.request_update()
        else:
            # 5. Success.
            self._succeed(batch, base_offset, log_append_time)
        # 6. The partition may send its next batch.
        if self.guarantee_message_order:
            self.accumulator.muted.discard(tp)

    def _succeed(self, batch: ProducerBatch, base_offset: int, log_append_time: int) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#completeBatch(ProducerBatch, PartitionResponse).

        1. The TransactionManager records the acknowledged sequence. 2. The records' futures complete.
        """
        self._remove_in_flight(batch)
        if self.transaction_manager is not None:
            self.transaction_manager.handle_completed_batch(batch, base_offset)
        if batch.done(base_offset, log_append_time, None):
            self.accumulator.deallocate(batch)

    def can_retry(self, batch: ProducerBatch, error: Errors, log_start_offset: int, now: int) -> bool:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#canRetry.

        Within the delivery timeout and the retries, a batch not yet done retries a retriable
        error; an idempotent producer asks its TransactionManager, which also retries sequence
        errors under a bumped epoch.
        """
        if (batch.has_reached_delivery_timeout(self.accumulator.delivery_timeout_ms, now)
                or batch.attempts >= self.producer.retries or batch.is_done()):
            return False
        if self.transaction_manager is None:
            return isinstance(error.exception(), RetriableException)
        return self.transaction_manager.can_retry(error, log_start_offset, batch)

    def fail_batch_for_response(self, batch: ProducerBatch, error: Errors, error_message: str | None,
                                record_errors: tuple[BatchIndexAndErrorMessage, ...], adjust_sequence_numbers: bool) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#failBatch(ProducerBatch, PartitionResponse, boolean).

        1. The batch's exception: the code's, with Kafka's own wording for the authorization
        failures. 2. When the leader named the records it refused, each of those gets its
        message (one named record: the code's exception type; several: InvalidRecordException)
        and the other records a generic KafkaException.
        """
        tp = batch.topic_partition
        if error is Errors.TOPIC_AUTHORIZATION_FAILED:
            top_level: BaseException = TopicAuthorizationException(f"Not authorized to access topics: [{tp.topic}]")
        elif error is Errors.CLUSTER_AUTHORIZATION_FAILED:
            top_level = ClusterAuthorizationException("The producer is not authorized to do idempotent sends")
        else:
            top_level = error.exception(error_message)
        if not record_errors:
            self.fail_batch(batch, top_level, adjust_sequence_numbers)
            return
        per_record: dict[int, BaseException] = {}
        for record_error in record_errors:
            message = (record_error.batch_index_error_message if record_error.batch_index_error_message is not None
                       else error_message if error_message is not None else error.message)
            per_record[record_error.batch_index] = (error.exception(message) if len(record_errors) == 1
                                                    else InvalidRecordException(message))

        def record_exceptions(index: int) -> BaseException:
            found = per_record.get(index)
            if found is not None:
                return found
            return KafkaException("Failed to append record because it was part of a batch which had one more more "
                                  "invalid records")

        self.fail_batch(batch, top_level, adjust_sequence_numbers, record_exceptions)

    def fail_batch(self, batch: ProducerBatch, exc: BaseException, adjust_sequence_numbers: bool = False,
                   record_exceptions: Callable[[int], BaseException] | None = None) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#failBatch.

        The records fail; only a batch not completed before (say, expired) is reported to the
        TransactionManager.
        """
        self._remove_in_flight(batch)
        if batch.done(-1, -1, exc, record_exceptions):
            if self.transaction_manager is not None:
                self.transaction_manager.handle_failed_batch(batch, exc, adjust_sequence_numbers)
            self.accumulator.deallocate(batch)

    def _remove_in_flight(self, batch: ProducerBatch) -> None:
        """Mirrors org.apache.kafka.clients.producer.internals.Sender#maybeRemoveFromInflightBatches."""
        batches = self.in_flight_batches.get(batch.topic_partition)
        if batches is not None and batch in batches:
            batches.remove(batch)

    async def _update_metadata(self) -> None:
        await self.client.maybe_update_metadata()

    async def _poll(self, timeout_ms: float) -> None:
        """Mirrors the wait in org.apache.kafka.clients.NetworkClient#poll: until woken or ``timeout_ms`` passes."""
        if self._wakeup_flag:
            self._wakeup_flag = False
            await anyio.lowlevel.checkpoint()
            return
        self._wakeup_event = anyio.Event()
        with anyio.move_on_after(None if timeout_ms == float("inf") else timeout_ms / 1000.0):
            await self._wakeup_event.wait()
        self._wakeup_flag = False
