"""Sends the leader's ISR changes to the controller, at most one request in flight.

Mirrors kafka.server.DefaultAlterPartitionManager (KIP-497, Kafka 3.x). Partitions submit a
proposed LeaderAndIsr; at most one pending change per partition, from submission until the
controller answers it (a second one gets OPERATION_NOT_ATTEMPTED); pending changes are batched
into one AlterPartitionRequest; while one is in flight, new ones wait. Partitions without an
answer (a timeout, a disconnect, a top-level error) stay pending and are sent again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    BrokerState,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.network.network import DisconnectException, NetworkTimeoutException
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderRecoveryState

Callback = Callable[[LeaderAndIsr | None, Errors | None], None]
RETRY_BACKOFF_MS = 50


@dataclass(slots=True)
class AlterPartitionItem:
    """Mirrors kafka.server.AlterPartitionItem: one proposed change and who waits for it."""

    topic_partition: TopicPartition
    topic_id: Uuid | None
    leader_and_isr: LeaderAndIsr
    controller_epoch: int
    callback: Callback
    # KRaft (KIP-903): the broker epoch each remote ISR member last fetched with; None in ZooKeeper mode.
    isr_broker_epochs: dict[int, int] | None = None


class AlterPartitionManager:
    """Mirrors kafka.server.DefaultAlterPartitionManager."""

    def __init__(
        self,
        broker_id: int,
        network: Any,
        controller_node_provider: Callable[[], Hashable | None],
        broker_epoch_supplier: Callable[[], int],
        request_timeout_ms: int = 30000,
        metadata_version_supplier: Callable[[], Any] | None = None,
    ) -> None:
        self.broker_id = broker_id
        # The broker's IBP (Kafka's metadataVersionSupplier); None: the latest.
        self.metadata_version_supplier = metadata_version_supplier
        self.network = network
        self.controller_node_provider = controller_node_provider
        self.broker_epoch_supplier = broker_epoch_supplier
        self.request_timeout_ms = request_timeout_ms
        self.unsent_isr_updates: dict[TopicPartition, AlterPartitionItem] = {}
        self.in_flight = False
        self.requests_sent = 0
        self._task_group: anyio.abc.TaskGroup | None = None
        self._log = state_change_logger(broker_id=broker_id)

    def start(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        self.maybe_propagate_isr_changes()

    def submit(
        self, tp: TopicPartition, topic_id: Uuid | None, leader_and_isr: LeaderAndIsr, controller_epoch: int, callback: Callback,
        isr_broker_epochs: dict[int, int] | None = None,
    ) -> None:
        """Mirrors kafka.server.DefaultAlterPartitionManager#submit.

        A partition with a change already queued gets OPERATION_NOT_ATTEMPTED for the new one.
        ``isr_broker_epochs`` (KRaft, KIP-903) carries the remote ISR members' broker epochs.
        """
        if tp in self.unsent_isr_updates:
            callback(None, Errors.OPERATION_NOT_ATTEMPTED)
            return
        self.unsent_isr_updates[tp] = AlterPartitionItem(tp, topic_id, leader_and_isr, controller_epoch, callback,
                                                         isr_broker_epochs)
        self.maybe_propagate_isr_changes()

    def maybe_propagate_isr_changes(self) -> None:
        """Mirrors kafka.server.DefaultAlterPartitionManager#maybePropagateIsrChanges.

        Send every pending change if no request is in flight. The changes stay in
        ``unsent_isr_updates`` until their answer arrives, so a partition cannot queue a
        second change meanwhile.
        """
        if self.in_flight or not self.unsent_isr_updates or self._task_group is None:
            return
        self.in_flight = True
        items = list(self.unsent_isr_updates.values())
        self._task_group.start_soon(self._send_request, items)

    def build_request(self, items: list[AlterPartitionItem]) -> AlterPartitionRequest:
        """Mirrors kafka.server.DefaultAlterPartitionManager#buildRequest.

        Both the name and the id of each topic go in; the version then names topics by id only
        when the IBP supports topic ids (2.8+) and every topic has one, else version 1 by name
        (AlterPartitionRequest.Builder's canUseTopicIds). The leader recovery state goes in from
        IBP 3.2 (KIP-704); before, every proposal says RECOVERED.
        """
        metadata_version = self.metadata_version_supplier() if self.metadata_version_supplier is not None else None
        can_use_topic_ids = metadata_version is None or metadata_version.is_topic_ids_supported()
        # MetadataVersion#isLeaderRecoverySupported (3.2, KIP-704): before it the field is left
        # at its default, RECOVERED, whatever the proposal says.
        sends_recovery_state = metadata_version is None or metadata_version.is_at_least("3.2")
        by_topic: dict[str, list[AlterPartitionItem]] = {}
        for item in items:
            by_topic.setdefault(item.topic_partition.topic, []).append(item)
        topics = []
        for topic, topic_items in by_topic.items():
            topic_id = topic_items[0].topic_id or ZERO_UUID
            topics.append(AlterPartitionTopicData(
                topic_name=topic,
                topic_id=topic_id,
                partitions=tuple(
                    AlterPartitionPartitionData(
                        partition_index=i.topic_partition.partition,
                        leader_epoch=i.leader_and_isr.leader_epoch,
                        new_isr_with_epochs=self._isr_with_epochs(i),
                        leader_recovery_state=(i.leader_and_isr.leader_recovery_state if sends_recovery_state
                                               else LeaderRecoveryState.RECOVERED),
                        partition_epoch=i.leader_and_isr.partition_epoch,
                    )
                    for i in topic_items
                ),
            ))
        return AlterPartitionRequest(broker_id=self.broker_id, broker_epoch=self.broker_epoch_supplier(), topics=tuple(topics),
                                     version=None if can_use_topic_ids else AlterPartitionRequest.TOPIC_ID_VERSION - 1)

    def _isr_with_epochs(self, item: AlterPartitionItem) -> tuple[BrokerState, ...]:
        """The proposal's ISR as BrokerStates, as DefaultAlterPartitionManager#buildRequest puts it in the
        request (Kafka 3.5+, KIP-903). Partition#addBrokerEpochToIsr took each remote member's epoch
        when it prepared the change (-1 when it had not fetched since this leader took over); this
        broker's own epoch comes from the manager's supplier; in ZooKeeper mode every epoch is -1."""
        epochs = item.isr_broker_epochs
        if epochs is None:
            return tuple(BrokerState(broker_id=b, broker_epoch=-1) for b in item.leader_and_isr.isr)
        return tuple(BrokerState(broker_id=b, broker_epoch=self.broker_epoch_supplier() if b == self.broker_id
                                 else epochs.get(b, -1)) for b in item.leader_and_isr.isr)

    async def _send_request(self, items: list[AlterPartitionItem]) -> None:
        """Mirrors kafka.server.DefaultAlterPartitionManager#sendRequest and its completion handler."""
        answered: dict[TopicPartition, tuple[LeaderAndIsr | None, Errors | None]] = {}
        error = Errors.NONE
        controller = self.controller_node_provider()
        # 1. Send the batch; a missing controller, a disconnect or a timeout answers nothing.
        try:
            if controller is None:
                raise DisconnectException("no controller known")
            self.requests_sent += 1
            request = self.build_request(items)
            topic_names_by_ids = {t.topic_id: t.topic_name for t in request.topics}
            response = await self.network.send(self.broker_id, controller, request, self.request_timeout_ms)
            error = Errors.for_code(response.error_code)
            answered = self.handle_alter_partition_response(response, request.request_version(), topic_names_by_ids)
        except (DisconnectException, NetworkTimeoutException) as exc:
            self._log.info("alter_partition_no_response_retrying", reason=str(exc))
            error = Errors.NETWORK_EXCEPTION
        # 2. Answered partitions leave the pending map first (a callback may submit again),
        #    then hear their result; unanswered ones stay pending.
        try:
            for item in items:
                result = answered.get(item.topic_partition)
                if result is not None:
                    self.unsent_isr_updates.pop(item.topic_partition, None)
                    item.callback(*result)
        finally:
            self.in_flight = False
        # 3. Send what is pending now, or after a short back-off when the request failed.
        if error is not Errors.NONE:
            await anyio.sleep(RETRY_BACKOFF_MS / 1000)
        self.maybe_propagate_isr_changes()

    def handle_alter_partition_response(
        self, response: AlterPartitionResponse, api_version: int, topic_names_by_ids: dict[Uuid, str],
    ) -> dict[TopicPartition, tuple[LeaderAndIsr | None, Errors | None]]:
        """Mirrors kafka.server.DefaultAlterPartitionManager#handleAlterPartitionResponse.

        1. A top-level error answers nothing (the items are retried). 2. From version 2 the
        response names topics by id only: the names come from the ids this request sent
        (``topic_names_by_ids``); a topic it cannot name is logged and skipped. 3. Each
        partition's new LeaderAndIsr, or its error; a leader recovery state the broker does not
        know is UNKNOWN_SERVER_ERROR.
        """
        # 1. Top-level error.
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            # STALE_BROKER_EPOCH, NOT_CONTROLLER, CLUSTER_AUTHORIZATION_FAILED...: nothing answered; retry.
            self._log.warning("alter_partition_top_level_error", error=error.name)
            return {}
        out: dict[TopicPartition, tuple[LeaderAndIsr | None, Errors | None]] = {}
        for topic in response.topics:
            # 2. The topic's name, by id from version 2.
            name = topic_names_by_ids.get(topic.topic_id) if api_version > 1 else topic.topic_name
            if not name:
                self._log.error("alter_partition_unexpected_topic", topic_id=str(topic.topic_id), topic=topic.topic_name)
                continue
            # 3. Per partition.
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                perr = Errors.for_code(p.error_code)
                if perr is not Errors.NONE:
                    out[tp] = (None, perr)
                elif p.leader_recovery_state not in (LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING):
                    self._log.error("alter_partition_invalid_leader_recovery_state", topic_partition=str(tp),
                                    leader_recovery_state=p.leader_recovery_state)
                    out[tp] = (None, Errors.UNKNOWN_SERVER_ERROR)
                else:
                    out[tp] = (LeaderAndIsr(p.leader_id, p.leader_epoch, tuple(p.isr), p.leader_recovery_state, p.partition_epoch), None)
        return out
