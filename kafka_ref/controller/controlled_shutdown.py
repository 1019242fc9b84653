"""Controlled shutdown: a broker hands its leaderships over before it stops.

Two halves, as in Kafka 3.x (ZooKeeper mode):

* the broker, kafka.server.KafkaServer#controlledShutdown: send ControlledShutdownRequest to
  the controller named in the metadata cache, up to ``controlled.shutdown.max.retries`` times
  with ``controlled.shutdown.retry.backoff.ms`` between attempts, until the controller answers
  without error and with no partition left to move (skipped when
  ``controlled.shutdown.enable=false``);
* the controller, kafka.controller.KafkaController#processControlledShutdown /
  doControlledShutdown: mark the broker shutting down, elect a new leader for every
  partition it leads (seed 001 §5.4.5, ``ControlledShutdownPartitionLeaderElectionStrategy``:
  first ISR member not shutting down; the shutting-down brokers leave the ISR), stop its
  follower replicas (StopReplica without delete, OfflineReplica: out of the ISR) and answer
  with the partitions it still leads.

A shutting-down broker stays in ``live_or_shutting_down_broker_ids`` (it still gets
LeaderAndIsr and UpdateMetadata) but leaves ``live_broker_ids``: it cannot be elected, and the
controller refuses to add it back to an ISR (AlterPartition answers INELIGIBLE_REPLICA).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import anyio

from kafka_ref.common.errors import (
    BrokerNotAvailableException,
    ControllerMovedException,
    Errors,
    StaleBrokerEpochException,
)
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.abstract import AbstractControlRequest
from kafka_ref.common.requests.controlled_shutdown import ControlledShutdownRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.controller.controller_context import IllegalStateException, OfflineReplica, OnlinePartition, PartitionAndReplica
from kafka_ref.controller.controller_extension import ControllerExtension
from kafka_ref.controller.election import ControlledShutdownPartitionLeaderElectionStrategy
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException

if TYPE_CHECKING:
    from kafka_ref.controller.kafka_controller import KafkaController


class ControlledShutdownFlow(ControllerExtension):
    """Mirrors the controlled-shutdown part of kafka.controller.KafkaController, as a controller extension."""

    def process_controlled_shutdown(self, c: "KafkaController", broker_id: int, broker_epoch: int,
                                    callback: Callable[[Any], None]) -> None:
        """Mirrors kafka.controller.KafkaController#processControlledShutdown.

        The callback gets the set of partitions still led by the broker, or the Errors value
        of the exception that stopped the attempt (KafkaApis turns either into the response).
        """
        try:
            remaining = self.do_controlled_shutdown(c, broker_id, broker_epoch)
        except RUN_ENDING:
            raise
        except Exception as exc:  # Kafka's Try: any failure becomes the error of the answer
            c.state_change_logger.warning("controlled_shutdown_failed", broker=broker_id, error=repr(exc))
            callback(Errors.for_exception(exc))
            return
        callback(remaining)

    def do_controlled_shutdown(self, c: "KafkaController", broker_id: int, broker_epoch: int) -> set[TopicPartition]:
        """Mirrors kafka.controller.KafkaController#doControlledShutdown.

        Returns the partitions the broker still leads (those with no other ISR member).
        """
        ctx = c.controller_context
        log = c.state_change_logger.bind(controller_epoch=ctx.epoch)
        # 1. Only the active controller; 2. not from an older incarnation of the broker.
        if not c.is_active:
            raise ControllerMovedException("Controller moved to another broker. Aborting controlled shutdown")
        if broker_epoch != AbstractControlRequest.UNKNOWN_BROKER_EPOCH:
            # (Kafka reads liveBrokerIdAndEpochs(id) with Map#apply: a broker the controller does
            # not know fails here with NoSuchElementException, answered UNKNOWN_SERVER_ERROR,
            # before the BROKER_NOT_AVAILABLE check below, which only an epoch-less request reaches.)
            epochs = ctx.live_broker_id_and_epochs
            if broker_id not in epochs:
                raise KeyError(f"key not found: {broker_id}")
            cached = epochs[broker_id]
            if broker_epoch < cached:
                raise StaleBrokerEpochException(
                    f"Received controlled shutdown request from an old broker epoch {broker_epoch} for broker "
                    f"{broker_id}. Current broker epoch is {cached}.")
        # 3. A broker we know of.
        if broker_id not in ctx.live_or_shutting_down_broker_ids:
            raise BrokerNotAvailableException(f"Broker id {broker_id} does not exist.")
        # 4. From now on it cannot lead or rejoin an ISR.
        ctx.shutting_down_broker_ids.add(broker_id)
        log.info("controlled_shutdown_started", broker=broker_id,
                 shutting_down=sorted(ctx.shutting_down_broker_ids), live=sorted(ctx.live_broker_ids))
        # 5. Partitions with other replicas, a leader, and a topic not being deleted.
        deletion = getattr(c, "topic_deletion_manager", None)
        to_act_on = sorted(
            tp for tp in ctx.partitions_on_broker(broker_id)
            if len(ctx.partition_replica_assignment(tp)) > 1 and tp in ctx.partition_leadership_info
            and not (deletion is not None and deletion.is_topic_queued_up_for_deletion(tp.topic)))
        led = [tp for tp in to_act_on if ctx.partition_leadership_info[tp].leader_and_isr.leader == broker_id]
        followed = [tp for tp in to_act_on if tp not in led]
        log.info("controlled_shutdown_partitions", broker=broker_id, led=[str(tp) for tp in led],
                 followed=[str(tp) for tp in followed])
        # 6. Move leadership away (controlled-shutdown election).
        c.partition_state_machine.handle_state_changes(led, OnlinePartition, ControlledShutdownPartitionLeaderElectionStrategy)
        # 7. The broker stops fetching as a follower.
        batch = c.request_batch
        try:
            batch.new_batch()
            for tp in followed:
                batch.add_stop_replica_request_for_brokers([broker_id], tp, delete_partition=False)
            batch.send_requests_to_brokers(ctx.epoch)
        except IllegalStateException as e:
            c.handle_illegal_state(e)
        # 8. Its follower replicas leave the ISRs (the leaders are told).
        c.replica_state_machine.handle_state_changes([PartitionAndReplica(tp, broker_id) for tp in followed],
                                                     OfflineReplica)
        # 9. What it still leads.
        remaining = ctx.partition_leaders_on_broker(broker_id)
        log.info("controlled_shutdown_answered", broker=broker_id, remaining=sorted(str(tp) for tp in remaining))
        return remaining


@dataclass
class ControlledShutdownOutcome:
    """The broker side's record of one controlled shutdown: requests sent, partitions the last answer listed."""

    attempts: int = 0
    remaining_partitions: set[TopicPartition] = field(default_factory=set)


async def broker_controlled_shutdown(broker: Any) -> bool:
    """Mirrors kafka.server.KafkaServer#controlledShutdown (with its inner doControlledShutdown).

    Returns True when the controller confirmed that nothing is left to move; False when
    controlled shutdown is disabled or every attempt failed (the broker then stops anyway,
    as Kafka's "unclean shutdown").
    """
    config = broker.config
    log = state_change_logger(broker_id=broker.broker_id)
    # 1. Disabled: nothing to do.
    if not config.get("controlled.shutdown.enable"):
        log.info("controlled_shutdown_disabled")
        return False
    log.info("controlled_shutdown_starting")
    retries = config.get("controlled.shutdown.max.retries")
    backoff_ms = config.get("controlled.shutdown.retry.backoff.ms")
    timeout_ms = config.get("controller.socket.timeout.ms")
    remaining_retries = retries
    prev_controller: int | None = None
    succeeded = False
    # What the last answer still listed, and how many requests went out (Cluster#shutdown_broker reports both).
    outcome = ControlledShutdownOutcome()
    broker.last_controlled_shutdown = outcome
    while not succeeded and remaining_retries > 0:
        remaining_retries -= 1
        # 2. Find the controller in the metadata cache.
        controller_id = broker.metadata_cache.controller_id
        if controller_id is not None and broker.metadata_cache.get_alive_broker_node(controller_id) is not None:
            prev_controller = controller_id
        else:
            log.info("controlled_shutdown_no_controller_known", controller_id=controller_id)
        # 3. Ask it.
        if prev_controller is not None:
            request = ControlledShutdownRequest(broker_id=broker.broker_id, broker_epoch=broker.broker_epoch)
            outcome.attempts += 1
            try:
                response = await broker.network.send(broker.broker_id, prev_controller, request, timeout_ms)
            except (DisconnectException, NetworkTimeoutException) as exc:
                log.warning("controlled_shutdown_io_error", controller=prev_controller, error=str(exc))
            else:
                if response.error_code != Errors.NONE.code:
                    log.info("controlled_shutdown_error_response", controller=prev_controller,
                             error=Errors.for_code(response.error_code).name)
                elif not response.remaining_partitions:
                    outcome.remaining_partitions = set()
                    succeeded = True
                    log.info("controlled_shutdown_succeeded", controller=prev_controller)
                else:
                    outcome.remaining_partitions = set(response.remaining_topic_partitions())
                    log.info("controlled_shutdown_partitions_remaining", controller=prev_controller,
                             remaining=sorted(str(tp) for tp in response.remaining_topic_partitions()))
        # 4. Back off and retry.
        if not succeeded and remaining_retries > 0:
            await anyio.sleep(backoff_ms / 1000)
            log.info("controlled_shutdown_retrying", remaining_retries=remaining_retries)
    if not succeeded:
        log.warning("controlled_shutdown_gave_up")
    return succeeded
