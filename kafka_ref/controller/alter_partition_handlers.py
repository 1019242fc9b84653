"""KafkaController's AlterPartition handling: ISR changes proposed by partition leaders.

Mirrors the AlterPartition methods of kafka.controller.KafkaController (Kafka 3.7, KIP-497,
KIP-704, KIP-841): alterPartitions queues the request as a controller event,
processAlterPartition answers it and lets a completed ISR expansion finish a reassignment, and
tryProcessAlterPartition validates each proposal against the controller context, writes the
accepted ones to ZooKeeper and sends UpdateMetadata. ``AlterPartitionHandlers`` is a mixin of
``KafkaController`` (kafka_ref/controller/kafka_controller.py), which uses its ``is_active``,
``controller_context``, ``zk_client``, ``epoch``, ``event_manager``, ``extensions``,
``update_leader_and_isr_cache``, ``send_update_metadata_request`` and ``_log``; kept apart, as
QuorumController's admin handlers are (kafka_ref/controller/quorum/controller_admin_handlers.py),
to keep that module within the project's size rule.
"""

from __future__ import annotations

from typing import Any, Callable

from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionResponsePartitionData,
    AlterPartitionResponseTopicData,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.controller import controller_events as ev
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderRecoveryState


class AlterPartitionHandlers:
    """KafkaController's AlterPartition handlers (``self`` is the KafkaController)."""

    def alter_partitions(self, request: AlterPartitionRequest, callback: Callable[[AlterPartitionResponse], None]) -> None:
        """Mirrors KafkaController#alterPartitions: queue the request as an event."""
        self.event_manager.put(ev.AlterPartitionReceived(request, callback))

    def process_alter_partition(self, request: AlterPartitionRequest, callback: Callable[[AlterPartitionResponse], None]) -> None:
        """Mirrors KafkaController#processAlterPartition (Kafka 3.7).

        1. Run ``try_process_alter_partition``; anything it raises (a request carrying a value
           the controller cannot decode, such as an unknown leader recovery state) is answered
           with a top-level UNKNOWN_SERVER_ERROR and the controller carries on.
        2. A successful ISR change may complete a reassignment (the extensions' hook).
        """
        # 1. The request itself may be malformed: answer it, never fail the event.
        try:
            responses = self.try_process_alter_partition(request, callback)
        except RUN_ENDING:
            raise
        except Exception as exc:
            self._log.error("alter_partition_failed", broker=request.broker_id, error=repr(exc))
            callback(AlterPartitionResponse(error_code=Errors.UNKNOWN_SERVER_ERROR.code))
            responses = {}
        # 2. After answering, see whether a successful ISR expansion completes a reassignment.
        applied = [tp for tp, r in responses.items() if isinstance(r, LeaderAndIsr)]
        for ext in self.extensions:
            hook = getattr(ext, "on_alter_partition_applied", None)
            if hook is not None:
                hook(self, applied)

    def try_process_alter_partition(self, request: AlterPartitionRequest,
                                    callback: Callable[[AlterPartitionResponse], None]) -> dict[TopicPartition, Any]:
        """Mirrors KafkaController#tryProcessAlterPartition (KIP-497, KIP-704, KIP-841; Kafka 3.7).

        Returns each partition's outcome (an ``Errors`` or the committed ``LeaderAndIsr``);
        a short circuit answers the whole request and returns nothing.
        """
        ctx = self.controller_context
        # 1. Short circuits: not controller; unknown or stale broker epoch.
        if not self.is_active:
            callback(AlterPartitionResponse(error_code=Errors.NOT_CONTROLLER.code))
            return {}
        #    (Unlike the control requests and ControlledShutdown, an AlterPartition without a
        #    broker epoch, -1, is not let through: it matches no live broker's epoch.)
        broker_epoch = ctx.live_broker_id_and_epochs.get(request.broker_id)
        if broker_epoch is None or broker_epoch != request.broker_epoch:
            callback(AlterPartitionResponse(error_code=Errors.STALE_BROKER_EPOCH.code))
            return {}
        responses: dict[TopicPartition, Errors | LeaderAndIsr] = {}
        to_alter: dict[TopicPartition, LeaderAndIsr] = {}
        topic_names: dict[TopicPartition, Any] = {}
        unknown_topic_ids: list[AlterPartitionResponseTopicData] = []
        use_topic_ids = request.uses_topic_ids()
        # 2. Decode the proposals: versions 2+ name topics by id (an unknown id answers
        #    UNKNOWN_TOPIC_ID for each of its partitions), 0-1 by name.
        for topic in request.topics:
            name = ctx.topic_name(topic.topic_id) if use_topic_ids else topic.topic_name
            if name is None:
                unknown_topic_ids.append(AlterPartitionResponseTopicData(topic_id=topic.topic_id, partitions=tuple(
                    AlterPartitionResponsePartitionData(partition_index=p.partition_index, error_code=Errors.UNKNOWN_TOPIC_ID.code)
                    for p in topic.partitions)))
                continue
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                topic_names[tp] = topic.topic_id
                # An unknown recovery state raises here, before anything is written (LeaderRecoveryState.of).
                to_alter[tp] = LeaderAndIsr(request.broker_id, p.leader_epoch, tuple(p.new_isr()),
                                            LeaderRecoveryState.of(p.leader_recovery_state), p.partition_epoch)
        # 3. Validate each against the controller's view.
        adjusted: dict[TopicPartition, LeaderAndIsr] = {}
        for tp, new in to_alter.items():
            info = ctx.partition_leadership_info.get(tp)
            if info is None:
                responses[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            current = info.leader_and_isr
            if new.partition_epoch > current.partition_epoch or new.leader_epoch > current.leader_epoch:
                responses[tp] = Errors.NOT_CONTROLLER
            elif new.leader_epoch < current.leader_epoch:
                responses[tp] = Errors.FENCED_LEADER_EPOCH
            elif new.equals_allow_stale_partition_epoch(current):
                responses[tp] = current
            elif new.partition_epoch < current.partition_epoch:
                responses[tp] = Errors.INVALID_UPDATE_VERSION
            elif new.leader_recovery_state == LeaderRecoveryState.RECOVERING and len(new.isr) > 1:
                responses[tp] = Errors.INVALID_REQUEST
            elif current.leader_recovery_state == LeaderRecoveryState.RECOVERED and new.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                responses[tp] = Errors.INVALID_REQUEST
            else:
                ineligible = set(new.isr) - set(ctx.live_broker_ids)
                if ineligible:
                    # KIP-841: the error code depends on the request version.
                    responses[tp] = Errors.INELIGIBLE_REPLICA if use_topic_ids else Errors.OPERATION_NOT_ATTEMPTED
                else:
                    adjusted[tp] = new
        # 4. Write the accepted ones to ZooKeeper (fenced by our controller epoch).
        if adjusted:
            result = self.zk_client.update_leader_and_isr(adjusted, self.epoch, ctx.epoch_zk_version)
            successful = []
            for tp, outcome in result.finished_partitions.items():
                if isinstance(outcome, BaseException):
                    responses[tp] = Errors.for_exception(outcome)
                else:
                    responses[tp] = outcome
                    successful.append(tp)
            for tp in result.partitions_to_retry:
                responses[tp] = Errors.INVALID_UPDATE_VERSION
            # 5. Cache and propagate.
            self.update_leader_and_isr_cache(successful)
            self._log.info("alter_partition_applied", partitions={str(tp): list(adjusted[tp].isr) for tp in successful})
        self.send_update_metadata_request(sorted(ctx.live_or_shutting_down_broker_ids), set(to_alter))
        # 6. Answer per partition (topics by id from version 2, by name before).
        response = _alter_partition_response(responses, topic_names if use_topic_ids else None)
        if unknown_topic_ids:
            response = AlterPartitionResponse(topics=response.topics + tuple(unknown_topic_ids))
        callback(response)
        return responses


def _alter_partition_response(responses: dict[TopicPartition, Any], topic_ids: dict[TopicPartition, Any] | None) -> AlterPartitionResponse:
    """The per-partition answer grouped by topic; ``topic_ids`` None (versions 0-1) names topics only by name."""
    by_topic: dict[str, list[AlterPartitionResponsePartitionData]] = {}
    for tp, r in responses.items():
        if isinstance(r, Errors):
            data = AlterPartitionResponsePartitionData(partition_index=tp.partition, error_code=r.code)
        else:
            data = AlterPartitionResponsePartitionData(
                partition_index=tp.partition, error_code=Errors.NONE.code, leader_id=r.leader, leader_epoch=r.leader_epoch,
                isr=tuple(r.isr), leader_recovery_state=r.leader_recovery_state, partition_epoch=r.partition_epoch,
            )
        by_topic.setdefault(tp.topic, []).append(data)
    # Versions 2+ name a topic by id only (KafkaController#tryProcessAlterPartition sets no name then).
    return AlterPartitionResponse(topics=tuple(
        AlterPartitionResponseTopicData(topic_name=t if topic_ids is None else "",
                                        topic_id=(topic_ids[TopicPartition(t, ps[0].partition_index)]
                                                                if topic_ids is not None else ZERO_UUID), partitions=tuple(ps))
        for t, ps in by_topic.items()
    ))
