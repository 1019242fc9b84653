"""Collect the controller's LeaderAndIsr, UpdateMetadata and StopReplica decisions, then send them.

Mirrors kafka.controller.AbstractControllerBrokerRequestBatch and ControllerBrokerRequestBatch
(Kafka 3.8). The controller's IBP picks each request's version (IBP 3.4+: LeaderAndIsr v7,
UpdateMetadata v8, StopReplica v4); older versions leave out what their message cannot carry.
A state machine opens a batch (``new_batch``), adds per-partition decisions for brokers while it
changes states, and sends once (``send_requests_to_brokers``): one request of each kind per
broker, built from the controller context as it is at send time (broker epochs, topic ids,
live brokers). Every LeaderAndIsr decision also schedules an UpdateMetadata of that partition to
every live-or-shutting-down broker. Correlation ids belong to the channel.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kafka_ref.common.config import KafkaConfig
from kafka_ref.common.errors import Errors
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.metadata_version import MetadataVersion
from kafka_ref.common.requests.abstract import ControlRequestType
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
)
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
)
from kafka_ref.common.requests.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID
from kafka_ref.controller.controller_context import IllegalStateException
from kafka_ref.zk.zk_data import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment

if TYPE_CHECKING:
    from kafka_ref.controller.controller_context import ControllerContext

SendRequest = Callable[[int, Any, "Callable[[Any], None] | None"], None]
PLAINTEXT_SECURITY_PROTOCOL_ID = 0  # org.apache.kafka.common.security.auth.SecurityProtocol.PLAINTEXT


def _ordered(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """Sets iterate in hash order, which varies between runs: sort them; keep a sequence's order."""
    if isinstance(partitions, (set, frozenset)):
        return sorted(partitions)
    return list(dict.fromkeys(partitions))


# The request versions of sendLeaderAndIsrRequest / sendUpdateMetadataRequests /
# sendStopReplicaRequests, newest first: (lowest IBP, version). The IBP is compared by release, so
# "2.4" and "2.8" stand for their last IV (2.4-IV1, 2.8-IV1), as those version strings do in Kafka.
_LEADER_AND_ISR_VERSIONS = (("3.4", 7), ("3.2", 6), ("2.8", 5), ("2.4", 4), ("2.2", 2), ("1.0", 1))
_UPDATE_METADATA_VERSIONS = (("3.4", 8), ("2.8", 7), ("2.4", 6), ("2.2", 5), ("1.0", 4), ("0.10.2", 3),
                             ("0.10.0", 2), ("0.9.0", 1))
_STOP_REPLICA_VERSIONS = (("3.4", 4), ("2.6", 3), ("2.4", 2), ("2.2", 1))


def request_version(table: tuple[tuple[str, int], ...], metadata_version: MetadataVersion) -> int:
    """The version a control request is sent at under ``metadata_version`` (0 below the table)."""
    for since, version in table:
        if metadata_version.is_at_least(since):
            return version
    return 0


def _hook_callback(hook: Callable[[Any, int], None] | None, broker_id: int) -> Callable[[Any], None] | None:
    """The per-request callback that hands the response and the broker id to a hook (None: no hook)."""
    if hook is None:
        return None
    return lambda response: hook(response, broker_id)


class ControllerBrokerRequestBatch:
    """Mirrors kafka.controller.ControllerBrokerRequestBatch (with AbstractControllerBrokerRequestBatch).

    ``send_request(broker_id, request, callback)`` hands a request to the channel manager.
    ``metadata_version_provider`` gives the IBP (default: the config's
    ``inter.broker.protocol.version``); below 3.2 the LeaderAndIsr partition states carry no
    leader recovery state. The response hooks stand for Kafka's handle*Response overrides;
    when a hook is None no callback is passed and the channel decides what to do with the answer:

    * ``leader_and_isr_response_callback(response, broker_id)``
    * ``update_metadata_response_callback(response, broker_id)``
    * ``stop_replica_response_callback(response, broker_id, partition_errors_for_deleting_topics)``:
      only for StopReplica(delete=True) partitions of topics whose deletion has started, and only
      when there are such partitions (the topic deletion manager's hook).
    """

    def __init__(
        self,
        config: KafkaConfig,
        send_request: SendRequest,
        state_change_logger: Any,
        controller_context: "ControllerContext",
        metadata_version_provider: Callable[[], MetadataVersion] | None = None,
        *,
        leader_and_isr_response_callback: Callable[[Any, int], None] | None = None,
        update_metadata_response_callback: Callable[[Any, int], None] | None = None,
        stop_replica_response_callback: Callable[[StopReplicaResponse, int, dict[TopicPartition, Errors]], None]
        | None = None,
    ) -> None:
        self.config = config
        self.controller_id = config.broker_id
        self.send_request = send_request
        self.state_change_logger = state_change_logger
        self.controller_context = controller_context
        self.metadata_version_provider = metadata_version_provider or (lambda: config.inter_broker_protocol_version)
        self.leader_and_isr_response_callback = leader_and_isr_response_callback
        self.update_metadata_response_callback = update_metadata_response_callback
        self.stop_replica_response_callback = stop_replica_response_callback
        self.leader_and_isr_request_map: dict[int, dict[TopicPartition, LeaderAndIsrPartitionState]] = {}
        self.stop_replica_request_map: dict[int, dict[TopicPartition, StopReplicaPartitionState]] = {}
        self.update_metadata_request_broker_set: set[int] = set()
        self.update_metadata_request_partition_info_map: dict[TopicPartition, UpdateMetadataPartitionState] = {}
        self.update_type = ControlRequestType.UNKNOWN

    # ---- batch life cycle --------------------------------------------------------------------
    def new_batch(self) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#newBatch: refuse to drop unsent decisions."""
        if self.leader_and_isr_request_map:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some LeaderAndIsr state changes {self._describe(self.leader_and_isr_request_map)} might be lost ")
        if self.stop_replica_request_map:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some StopReplica state changes {self._describe(self.stop_replica_request_map)} might be lost ")
        if self.update_metadata_request_broker_set:
            raise IllegalStateException(
                "Controller to broker state change requests batch is not empty while creating a new one. "
                f"Some UpdateMetadata state changes to brokers {sorted(self.update_metadata_request_broker_set)} "
                f"with partition info {[str(tp) for tp in self.update_metadata_request_partition_info_map]} "
                "might be lost ")

    @staticmethod
    def _describe(request_map: dict[int, dict[TopicPartition, Any]]) -> dict[int, list[str]]:
        return {b: [str(tp) for tp in states] for b, states in request_map.items()}

    def set_update_type(self, update_type: ControlRequestType) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#setUpdateType (KRaft migration only)."""
        self.update_type = update_type

    def clear(self) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#clear: forget everything unsent."""
        self.leader_and_isr_request_map.clear()
        self.stop_replica_request_map.clear()
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()
        self.update_type = ControlRequestType.UNKNOWN

    # ---- adding decisions --------------------------------------------------------------------
    def add_leader_and_isr_request_for_brokers(self, broker_ids: Iterable[int], topic_partition: TopicPartition,
                                               leader_isr_and_controller_epoch: LeaderIsrAndControllerEpoch,
                                               replica_assignment: ReplicaAssignment, is_new: bool) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#addLeaderAndIsrRequestForBrokers.

        One partition state per broker (the latest wins; ``is_new`` sticks once set), then the
        partition's UpdateMetadata to every live-or-shutting-down broker.
        """
        lai = leader_isr_and_controller_epoch.leader_and_isr
        with_recovery = self.metadata_version_provider().is_at_least("3.2")
        for broker_id in broker_ids:
            # 1. Negative ids (no leader, leader during delete) are never recipients.
            if broker_id < 0:
                continue
            states = self.leader_and_isr_request_map.setdefault(broker_id, {})
            previous = states.get(topic_partition)
            already_new = previous is not None and previous.is_new
            # 2. The partition state, with the leader recovery state from IBP 3.2 on.
            states[topic_partition] = LeaderAndIsrPartitionState(
                topic_name=topic_partition.topic,
                partition_index=topic_partition.partition,
                controller_epoch=leader_isr_and_controller_epoch.controller_epoch,
                leader=lai.leader,
                leader_epoch=lai.leader_epoch,
                isr=tuple(lai.isr),
                partition_epoch=lai.partition_epoch,
                replicas=tuple(replica_assignment.replicas),
                adding_replicas=tuple(replica_assignment.adding_replicas),
                removing_replicas=tuple(replica_assignment.removing_replicas),
                is_new=is_new or already_new,
                leader_recovery_state=int(lai.leader_recovery_state) if with_recovery else 0,
            )
        # 3. Every broker learns the partition's new state.
        self.add_update_metadata_request_for_brokers(sorted(self.controller_context.live_or_shutting_down_broker_ids),
                                                     [topic_partition])

    def add_stop_replica_request_for_brokers(self, broker_ids: Iterable[int], topic_partition: TopicPartition,
                                             delete_partition: bool) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#addStopReplicaRequestForBrokers.

        The leader epoch is EpochDuringDelete (-2) when the topic is queued for deletion, else
        the cached leader epoch (or -1); ``delete_partition`` sticks once set.
        """
        # 1. The epoch fences the request on the broker (KIP-570).
        leader_epoch = self.controller_context.leader_epoch(topic_partition)
        for broker_id in broker_ids:
            if broker_id < 0:
                continue
            # 2. One state per partition per broker.
            states = self.stop_replica_request_map.setdefault(broker_id, {})
            previous = states.get(topic_partition)
            already_delete = previous is not None and previous.delete_partition
            states[topic_partition] = StopReplicaPartitionState(
                partition_index=topic_partition.partition, leader_epoch=leader_epoch,
                delete_partition=already_delete or delete_partition)

    def add_update_metadata_request_for_brokers(self, broker_ids: Iterable[int],
                                                partitions: Iterable[TopicPartition] = ()) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#addUpdateMetadataRequestForBrokers.

        Adds the brokers to the UpdateMetadata recipients and, for each partition with a known
        leader, its state now (LeaderDuringDelete when its topic is queued for deletion, and the
        replicas that are offline). Partitions without a leader yet are skipped.
        """
        ctx = self.controller_context
        self.update_metadata_request_broker_set.update(b for b in broker_ids if b >= 0)
        for partition in _ordered(partitions):
            # 1. No leader yet: nothing to say about it.
            info = ctx.partition_leadership_info.get(partition)
            if info is None:
                self.state_change_logger.info("update_metadata_skipped_no_leader", topic_partition=str(partition))
                continue
            # 2. The state, marked as being deleted where it is.
            replicas = ctx.partition_replica_assignment(partition)
            offline_replicas = tuple(r for r in replicas if not ctx.is_replica_online(r, partition))
            lai = info.leader_and_isr
            if ctx.is_topic_queued_up_for_deletion(partition.topic):
                lai = LeaderAndIsr.during_delete(lai.isr)
            self.update_metadata_request_partition_info_map[partition] = UpdateMetadataPartitionState(
                topic_name=partition.topic, partition_index=partition.partition,
                controller_epoch=info.controller_epoch, leader=lai.leader, leader_epoch=lai.leader_epoch,
                isr=tuple(lai.isr), zk_version=lai.partition_epoch, replicas=tuple(replicas),
                offline_replicas=offline_replicas)

    # ---- sending -----------------------------------------------------------------------------
    def send_requests_to_brokers(self, controller_epoch: int) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#sendRequestsToBrokers.

        LeaderAndIsr first, then UpdateMetadata, then StopReplica. Any failure is logged with
        what was left unsent and rethrown as IllegalStateException.
        """
        log = self.state_change_logger.bind(controller_epoch=controller_epoch)
        try:
            self._send_leader_and_isr_request(controller_epoch, log)
            self._send_update_metadata_requests(controller_epoch, log)
            self._send_stop_replica_requests(controller_epoch, log)
        except RUN_ENDING:
            raise
        except Exception as exc:
            log.error("send_requests_to_brokers_failed", error=repr(exc),
                      leader_and_isr=self._describe(self.leader_and_isr_request_map),
                      update_metadata_brokers=sorted(self.update_metadata_request_broker_set),
                      stop_replica=self._describe(self.stop_replica_request_map))
            raise IllegalStateException(repr(exc)) from exc

    def _send_leader_and_isr_request(self, controller_epoch: int, log: Any) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#sendLeaderAndIsrRequest."""
        ctx = self.controller_context
        epochs = ctx.live_broker_id_and_epochs
        version = request_version(_LEADER_AND_ISR_VERSIONS, self.metadata_version_provider())
        for broker in sorted(self.leader_and_isr_request_map):
            states = self.leader_and_isr_request_map[broker]
            # 1. Only brokers still alive (or shutting down) get it.
            if broker not in epochs:
                continue
            # 2. Count become-leader vs become-follower for the log; collect the leaders named.
            leader_ids = {s.leader for s in states.values()}
            num_become_leaders = sum(1 for s in states.values() if s.leader == broker)
            log.info("sending_leader_and_isr_request", broker=broker, become_leader=num_become_leaders,
                     become_follower=len(states) - num_become_leaders)
            live_leaders = tuple(
                LeaderAndIsrLiveLeader(broker_id=b, host_name=info.host if info else "", port=info.port if info else 0)
                for b in sorted(leader_ids & set(epochs))
                for info in [ctx.live_or_shutting_down_broker(b)])
            # 3. Topic ids of every topic in the request (ZERO_UUID when unknown; versions
            #    before 5 carry none, so the broker reads ZERO_UUID).
            topic_ids = {tp.topic: ctx.topic_ids.get(tp.topic, ZERO_UUID) if version >= 5 else ZERO_UUID
                         for tp in states}
            request = LeaderAndIsrRequest.build(
                controller_id=self.controller_id, controller_epoch=controller_epoch, broker_epoch=epochs[broker],
                partition_states=list(states.values()), topic_ids=topic_ids, live_leaders=live_leaders,
                type=self.update_type, version=version)
            self.send_request(broker, request, _hook_callback(self.leader_and_isr_response_callback, broker))
        self.leader_and_isr_request_map.clear()
        self.update_type = ControlRequestType.UNKNOWN

    def _send_update_metadata_requests(self, controller_epoch: int, log: Any) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#sendUpdateMetadataRequests."""
        ctx = self.controller_context
        if not self.update_metadata_request_broker_set:
            self.update_metadata_request_partition_info_map.clear()
            return
        log.info("sending_update_metadata_request", brokers=sorted(self.update_metadata_request_broker_set),
                 partitions=len(self.update_metadata_request_partition_info_map))
        # 1. The partition states, grouped by topic in first-seen order, with topic ids (versions
        #    before 7 carry none: ZERO_UUID).
        version = request_version(_UPDATE_METADATA_VERSIONS, self.metadata_version_provider())
        grouped: dict[str, list[UpdateMetadataPartitionState]] = {}
        for state in self.update_metadata_request_partition_info_map.values():
            grouped.setdefault(state.topic_name, []).append(state)
        topic_states = tuple(UpdateMetadataTopicState(topic_name=t,
                                                      topic_id=ctx.topic_ids.get(t, ZERO_UUID) if version >= 7 else ZERO_UUID,
                                                      partition_states=tuple(ps)) for t, ps in grouped.items())
        # 2. Every live or shutting-down broker with its endpoint.
        live_brokers = tuple(
            UpdateMetadataBroker(
                id=info.broker_id,
                endpoints=(UpdateMetadataEndpoint(port=info.port, host=info.host, listener="PLAINTEXT",
                                                  security_protocol=PLAINTEXT_SECURITY_PROTOCOL_ID),),
                rack=info.rack)
            for info in ctx.live_or_shutting_down_brokers)
        # 3. One request per recipient that is still alive, with its broker epoch.
        epochs = ctx.live_broker_id_and_epochs
        for broker in sorted(self.update_metadata_request_broker_set & set(epochs)):
            request = UpdateMetadataRequest(
                controller_id=self.controller_id, type=int(self.update_type), controller_epoch=controller_epoch,
                broker_epoch=epochs[broker], topic_states=topic_states, live_brokers=live_brokers, version=version)
            self.send_request(broker, request, _hook_callback(self.update_metadata_response_callback, broker))
        self.update_metadata_request_broker_set.clear()
        self.update_metadata_request_partition_info_map.clear()

    def _send_stop_replica_requests(self, controller_epoch: int, log: Any) -> None:
        """Mirrors AbstractControllerBrokerRequestBatch#sendStopReplicaRequests.

        From version 3 (IBP 2.6) one request per broker carries every partition with its own
        delete flag and leader epoch; before, the partitions to delete and the others go in two
        requests (delete first), each with one flag for all and no leader epochs.
        """
        ctx = self.controller_context
        epochs = ctx.live_broker_id_and_epochs
        version = request_version(_STOP_REPLICA_VERSIONS, self.metadata_version_provider())
        for broker in sorted(self.stop_replica_request_map):
            states = self.stop_replica_request_map[broker]
            if broker not in epochs:
                continue
            if version >= 3:
                # 1. One request; the deletion manager hears about the deleted partitions of
                #    topics being deleted.
                log.info("sending_stop_replica_request", broker=broker, replicas=len(states))
                deleted = {tp for tp, s in states.items() if s.delete_partition}
                self.send_request(broker, self._stop_replica_request(controller_epoch, epochs[broker], version, states),
                                  self._stop_replica_response_callback(broker, deleted))
                continue
            # 2. Before version 3: the partitions to delete, then the others (no callback).
            with_delete = {tp: dataclasses.replace(s, leader_epoch=-1) for tp, s in states.items() if s.delete_partition}
            without_delete = {tp: dataclasses.replace(s, leader_epoch=-1) for tp, s in states.items()
                              if not s.delete_partition}
            if with_delete:
                log.info("sending_stop_replica_request", broker=broker, replicas=len(with_delete), delete=True)
                self.send_request(broker, self._stop_replica_request(controller_epoch, epochs[broker], version, with_delete),
                                  self._stop_replica_response_callback(broker, set(with_delete)))
            if without_delete:
                log.info("sending_stop_replica_request", broker=broker, replicas=len(without_delete), delete=False)
                self.send_request(broker, self._stop_replica_request(controller_epoch, epochs[broker], version,
                                                                     without_delete), None)
        self.stop_replica_request_map.clear()

    def _stop_replica_request(self, controller_epoch: int, broker_epoch: int, version: int,
                              states: dict[TopicPartition, StopReplicaPartitionState]) -> StopReplicaRequest:
        """A StopReplica request of the given partition states, grouped by topic in first-seen order."""
        grouped: dict[str, list[StopReplicaPartitionState]] = {}
        for tp, state in states.items():
            grouped.setdefault(tp.topic, []).append(state)
        return StopReplicaRequest(
            controller_id=self.controller_id, controller_epoch=controller_epoch, broker_epoch=broker_epoch,
            topic_states=tuple(StopReplicaTopicState(topic_name=t, partition_states=tuple(ps)) for t, ps in grouped.items()),
            version=version)

    def _stop_replica_response_callback(self, broker_id: int,
                                        deleted_partitions: set[TopicPartition]) -> Callable[[Any], None] | None:
        """Mirrors the responseCallback inside AbstractControllerBrokerRequestBatch#sendStopReplicaRequests.

        None when there is no hook (the channel then decides what to do with the answer).
        """
        hook = self.stop_replica_response_callback
        if hook is None:
            return None
        ctx = self.controller_context

        def callback(response: Any) -> None:
            errors: dict[TopicPartition, Errors] = {}
            for pe in response.partition_errors:
                tp = TopicPartition(pe.topic_name, pe.partition_index)
                if ctx.is_topic_deletion_in_progress(pe.topic_name) and tp in deleted_partitions:
                    errors[tp] = Errors.for_code(pe.error_code)
            if errors:
                hook(response, broker_id, errors)

        return callback
