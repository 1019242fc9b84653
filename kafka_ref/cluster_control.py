"""Playing the controller from a test: control-request builders and senders that return values.

``Cluster`` mixes in :class:`ClusterControl`. The builders take the controller id, controller
epoch, broker epoch and topic ids a test wants to send (defaults: the cluster's own — in manual
mode the stand-in controller's id 3000 and epoch 1, and a topic id the cluster assigns per
topic and keeps). The senders answer ``{TopicPartition: Errors}``: LeaderAndIsr responses name
topics by id only, so the sender maps them back with the ids it sent; a top-level error (for
example STALE_CONTROLLER_EPOCH) is reported for every partition of the request, as Kafka's
error response does.

In manual mode ``set_partition_state`` sends what Kafka's controller always sends together: an
UpdateMetadata with the partition's state to every live broker, then the LeaderAndIsr to its
replicas. A LeaderAndIsr alone leaves the leader's metadata cache without the partition, and
the leader then refuses its followers' fetches with UNKNOWN_TOPIC_ID (the broker logs
``follower_fetch_refused_unknown_partition`` the first time): send the raw requests only to
test that trap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.leader_and_isr import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrTopicState,
)
from kafka_ref.common.requests.stop_replica import (
    StopReplicaPartitionState,
    StopReplicaRequest,
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
from kafka_ref.common.uuid import Uuid

if TYPE_CHECKING:
    from kafka_ref.server.kafka_broker import KafkaBroker

ZERO_UUID = Uuid(0, 0)


class ClusterControl:
    """Control requests every ``Cluster`` can build and send (mixed into ``kafka_ref.cluster.Cluster``)."""

    # Provided by Cluster and the other mixins.
    metadata_mode: str
    brokers: dict[int, "KafkaBroker"]
    controller: Any
    live_broker_ids: Callable[[], list[int]]
    send: Callable[..., Any]
    topic_id: Callable[[str], Any]
    controller_id: Callable[[], int | None]
    controller_epoch: Callable[[], int | None]

    # ------------------------------------------------------------------ defaults

    def _control_ids(self, controller_id: int | None, controller_epoch: int | None) -> tuple[int, int]:
        if controller_id is None:
            controller_id = self.controller_id()
        if controller_epoch is None:
            controller_epoch = self.controller_epoch()
        return (-1 if controller_id is None else controller_id), (0 if controller_epoch is None else controller_epoch)

    def _topic_ids(self, topics: Iterable[str], topic_ids: Mapping[str, Uuid] | None) -> dict[str, Uuid]:
        given = dict(topic_ids or {})
        return {t: given[t] if t in given else (self.topic_id(t) or ZERO_UUID) for t in topics}

    # ------------------------------------------------------------------ builders

    def leader_and_isr_request(
        self,
        states: Iterable[LeaderAndIsrPartitionState],
        topic_ids: Mapping[str, Uuid] | None = None,
        *,
        controller_id: int | None = None,
        controller_epoch: int | None = None,
        broker_epoch: int = -1,
    ) -> LeaderAndIsrRequest:
        """A LeaderAndIsr request carrying ``states`` grouped by topic.

        Topic ids default to the cluster's (``Cluster.topic_id``); controller id and epoch to
        the active controller's (manual mode: the stand-in's). ``broker_epoch=-1`` skips the
        broker-epoch check; pass the target broker's epoch to test stale-epoch fencing.
        """
        by_topic: dict[str, list[LeaderAndIsrPartitionState]] = {}
        for s in states:
            by_topic.setdefault(s.topic_name, []).append(s)
        ids = self._topic_ids(by_topic, topic_ids)
        cid, cepoch = self._control_ids(controller_id, controller_epoch)
        return LeaderAndIsrRequest(
            controller_id=cid, controller_epoch=cepoch, broker_epoch=broker_epoch,
            topic_states=tuple(LeaderAndIsrTopicState(topic_name=t, topic_id=ids[t], partition_states=tuple(ps))
                               for t, ps in by_topic.items()),
        )

    def update_metadata_request(
        self,
        partition_states: Iterable[UpdateMetadataPartitionState] = (),
        topic_ids: Mapping[str, Uuid] | None = None,
        live_brokers: Iterable[int] | None = None,
        *,
        controller_id: int | None = None,
        controller_epoch: int | None = None,
        broker_epoch: int = -1,
    ) -> UpdateMetadataRequest:
        """An UpdateMetadata request: ``partition_states`` grouped by topic and the live brokers
        (default: every running broker). Defaults as for ``leader_and_isr_request``."""
        by_topic: dict[str, list[UpdateMetadataPartitionState]] = {}
        for s in partition_states:
            by_topic.setdefault(s.topic_name, []).append(s)
        ids = self._topic_ids(by_topic, topic_ids)
        cid, cepoch = self._control_ids(controller_id, controller_epoch)
        brokers = self.live_broker_ids() if live_brokers is None else list(live_brokers)
        return UpdateMetadataRequest(
            controller_id=cid, controller_epoch=cepoch, broker_epoch=broker_epoch,
            topic_states=tuple(UpdateMetadataTopicState(topic_name=t, topic_id=ids[t], partition_states=tuple(ps))
                               for t, ps in by_topic.items()),
            live_brokers=tuple(
                UpdateMetadataBroker(id=b, endpoints=(UpdateMetadataEndpoint(host="localhost", port=9092 + b, listener="PLAINTEXT"),),
                                     rack=self.racks.get(b))
                for b in brokers),
        )

    def stop_replica_request(
        self,
        partitions: Mapping[TopicPartition, tuple[int, bool]],
        *,
        controller_id: int | None = None,
        controller_epoch: int | None = None,
        broker_epoch: int = -1,
    ) -> StopReplicaRequest:
        """A StopReplica request; ``partitions`` maps each partition to (leader_epoch, delete_partition)."""
        by_topic: dict[str, list[StopReplicaPartitionState]] = {}
        for tp, (epoch, delete) in partitions.items():
            by_topic.setdefault(tp.topic, []).append(
                StopReplicaPartitionState(partition_index=tp.partition, leader_epoch=epoch, delete_partition=delete))
        cid, cepoch = self._control_ids(controller_id, controller_epoch)
        return StopReplicaRequest(
            controller_id=cid, controller_epoch=cepoch, broker_epoch=broker_epoch,
            topic_states=tuple(StopReplicaTopicState(topic_name=t, partition_states=tuple(ps)) for t, ps in by_topic.items()),
        )

    # ------------------------------------------------------------------ senders that answer {tp: Errors}

    async def send_leader_and_isr(self, broker_id: int, request: LeaderAndIsrRequest) -> dict[TopicPartition, Errors]:
        """Deliver a LeaderAndIsr request to ``broker_id`` as the controller; each partition's error."""
        response = await self.send(broker_id, request)
        names = {t.topic_id: t.topic_name for t in request.topic_states}
        requested = [TopicPartition(t.topic_name, p.partition_index) for t in request.topic_states for p in t.partition_states]
        return _partition_errors(response.error_code, response.partition_errors(names), requested)

    async def send_update_metadata(self, broker_id: int, request: UpdateMetadataRequest) -> Errors:
        """Deliver an UpdateMetadata request to ``broker_id``; its (request-level) error."""
        response = await self.send(broker_id, request)
        return Errors.for_code(response.error_code)

    async def send_stop_replica(self, broker_id: int, request: StopReplicaRequest) -> dict[TopicPartition, Errors]:
        """Deliver a StopReplica request to ``broker_id``; each partition's error."""
        response = await self.send(broker_id, request)
        return _partition_errors(response.error_code, response.partition_error_map(), list(request.topic_partitions()))

    async def update_metadata(self, partition_states: Iterable[UpdateMetadataPartitionState] = (),
                              topic_ids: Mapping[str, Uuid] | None = None, brokers: Iterable[int] | None = None) -> dict[int, Any]:
        """Send the same UpdateMetadata to every live broker (or ``brokers``); the raw responses by broker."""
        request = self.update_metadata_request(partition_states, topic_ids)
        targets = self.live_broker_ids() if brokers is None else list(brokers)
        return {b: await self.send(b, request) for b in targets}

    # ------------------------------------------------------------------ manual mode: the controller's pair

    def next_partition_epoch(self, tp: TopicPartition) -> int:
        """Manual mode: a partition epoch newer than any the brokers know for ``tp``.

        Newer than every epoch ``set_partition_state`` sent and every epoch the stand-in
        controller handed out when it accepted an AlterPartition (Partition#makeLeader skips a
        LeaderAndIsr whose partition epoch is not newer).
        """
        used: dict[TopicPartition, int] = self.__dict__.setdefault("_partition_epochs", {})
        bumped = [p.partition_epoch + 1 for r in self.controller.alter_partition_requests for t in r.topics
                  if t.topic_name == tp.topic for p in t.partitions if p.partition_index == tp.partition]
        used[tp] = max([used.get(tp, -1), *bumped]) + 1
        return used[tp]

    async def set_partition_state(
        self,
        topic: str,
        partitions: int | Iterable[int] = 0,
        *,
        leader: int,
        leader_epoch: int,
        isr: Iterable[int],
        replicas: Iterable[int],
        adding_replicas: Iterable[int] = (),
        removing_replicas: Iterable[int] = (),
        partition_epoch: int | None = None,
        is_new: bool = False,
        to: Iterable[int] | None = None,
    ) -> dict[int, dict[TopicPartition, Errors]]:
        """Manual mode: act as the controller for ``topic``'s ``partitions``, as Kafka's does.

        1. UpdateMetadata with the new state to every live broker (so leaders know the
           partition and its followers); 2. LeaderAndIsr to each live replica (or ``to``).
        ``partition_epoch`` defaults to ``next_partition_epoch``. Returns each LeaderAndIsr
        target's ``{TopicPartition: Errors}``; an UpdateMetadata error raises.
        """
        if self.metadata_mode != "manual":
            raise ValueError(f"set_partition_state plays the controller and needs metadata_mode='manual' "
                             f"(this Cluster runs {self.metadata_mode!r}, whose controller decides leaders)")
        parts = [partitions] if isinstance(partitions, int) else list(partitions)
        isr, replicas = tuple(isr), tuple(replicas)
        epochs = {p: partition_epoch if partition_epoch is not None else self.next_partition_epoch(TopicPartition(topic, p))
                  for p in parts}
        _cid, cepoch = self._control_ids(None, None)
        live = self.live_broker_ids()
        # 1. Metadata first, to every live broker.
        metadata = self.update_metadata_request([
            UpdateMetadataPartitionState(topic_name=topic, partition_index=p, controller_epoch=cepoch, leader=leader,
                                         leader_epoch=leader_epoch, isr=isr, zk_version=epochs[p], replicas=replicas,
                                         offline_replicas=tuple(r for r in replicas if r not in live))
            for p in parts])
        for b in live:
            (await self.send_update_metadata(b, metadata)).maybe_raise(f"UpdateMetadata to broker {b}")
        # 2. Then the decision, to the replicas that are up.
        request = self.leader_and_isr_request([
            LeaderAndIsrPartitionState(topic_name=topic, partition_index=p, controller_epoch=cepoch, leader=leader,
                                       leader_epoch=leader_epoch, isr=isr, partition_epoch=epochs[p], replicas=replicas,
                                       adding_replicas=tuple(adding_replicas), removing_replicas=tuple(removing_replicas),
                                       is_new=is_new)
            for p in parts])
        targets = [b for b in (replicas if to is None else to) if b in live]
        return {b: await self.send_leader_and_isr(b, request) for b in targets}


def _partition_errors(top_level: int, per_partition: Mapping[TopicPartition, int],
                      requested: list[TopicPartition]) -> dict[TopicPartition, Errors]:
    """Per-partition errors; a top-level error stands for every requested partition it does not list."""
    out = {tp: Errors.for_code(code) for tp, code in per_partition.items()}
    if top_level != Errors.NONE.code:
        for tp in requested:
            out.setdefault(tp, Errors.for_code(top_level))
    return out
