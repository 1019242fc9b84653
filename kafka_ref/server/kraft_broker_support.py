"""The KRaft startup path of a broker (KafkaBroker#_start_kraft_support).

Mirrors the KRaft part of kafka.server.BrokerServer#startup (Kafka 3.3):

1. the Raft observer starts fetching ``__cluster_metadata`` from the quorum's leader (found by
   asking any voter), with the BrokerMetadataListener registered on it (commits accumulate,
   nothing published yet);
2. the BrokerLifecycleManager registers the broker (the broker epoch) and heartbeats;
3. wait until the controller says the broker has caught up with the log;
4. start publishing: the first publish applies everything loaded so far (cache, managers,
   ReplicaManager#applyDelta);
5. tell the lifecycle manager the broker is ready to be unfenced.

Controller-bound client requests a broker receives (CreateTopics, CreatePartitions, DeleteTopics, ElectLeaders,
AlterPartitionReassignments, ListPartitionReassignments, IncrementalAlterConfigs) are forwarded
to the controller, as KRaft brokers do (ForwardingManager).

The active controller is the Raft leader the observer knows (KRaftCachedControllerId): heartbeats,
AlterPartition and forwarded requests follow it when the quorum elects another controller, and a
NOT_CONTROLLER answer sends them to the next one.
"""

from __future__ import annotations

import functools
import random
from typing import Any, Hashable

import anyio

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from kafka_ref.common.requests.create_partitions import CreatePartitionsRequest
from kafka_ref.common.requests.create_topics import CreateTopicsRequest
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest
from kafka_ref.common.requests.elect_leaders import ElectLeadersRequest
from kafka_ref.common.requests.alter_configs import AlterConfigsRequest
from kafka_ref.common.requests.incremental_alter_configs import IncrementalAlterConfigsRequest
from kafka_ref.common.requests.list_partition_reassignments import ListPartitionReassignmentsRequest
from kafka_ref.server.broker_lifecycle_manager import BrokerLifecycleManager
from kafka_ref.server.config_admin import forward_incremental_alter_configs, forward_legacy_alter_configs
from kafka_ref.server.metadata.broker_metadata_listener import BrokerMetadataListener
from kafka_ref.server.metadata.broker_metadata_publisher import BrokerMetadataPublisher
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient
from kafka_ref.raft.network_channel import KafkaNetworkChannel
from kafka_ref.raft.quorum_state import QuorumConfig
from kafka_ref.raft.raft_client import BatchReader
from kafka_ref.network.network import INTER_BROKER_PRINCIPAL, DisconnectException, Envelope, NetworkTimeoutException


FORWARD_RETRY_BACKOFF_MS = 100
# Controller-bound admin requests a KRaft broker forwards instead of handling.
FORWARDED_REQUESTS = (CreateTopicsRequest, CreatePartitionsRequest, DeleteTopicsRequest, ElectLeadersRequest,
                      AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest)


class KRaftBrokerSupport:
    """The KRaft components of one broker: observer, listener, publisher, lifecycle manager."""

    def __init__(self, broker: Any, controller_nodes: Any) -> None:
        self.broker = broker
        voters = tuple(controller_nodes) if isinstance(controller_nodes, (tuple, list, set, frozenset)) else (controller_nodes,)
        self.voters = voters
        self.controller_node = voters[0]
        config = broker.config
        quorum_config = QuorumConfig.from_kafka_config(config, voters)
        channel = KafkaNetworkChannel(broker.network, broker.broker_id, quorum_config.request_timeout_ms)
        self.raft = KafkaRaftClient(broker.broker_id, voters, broker.time, channel=channel,
                                    rng=random.Random(broker.rng.getrandbits(64)), config=quorum_config)
        self.listener = BrokerMetadataListener(broker.broker_id, broker.time)
        self.publisher = BrokerMetadataPublisher(broker)
        self.lifecycle = BrokerLifecycleManager(
            broker.broker_id, broker.config, broker.network, self.active_controller,
            lambda: self.listener.highest_metadata_offset, broker.rng, on_broker_epoch=self._on_broker_epoch,
        )
        self.forwarding_manager = ForwardingManager(broker, self.active_controller)

    def active_controller(self) -> Hashable:
        """Mirrors kafka.server.RaftControllerNodeProvider#getControllerInfo: the Raft leader we know (else the first voter)."""
        leader = self.raft.leader_id
        return leader if leader >= 0 else self.controller_node

    def _leader_changed(self, leader_id: int, epoch: int) -> None:
        """The observer heard of a new leader: it is the active controller from now on."""
        if leader_id >= 0:
            self.broker.metadata_cache.controller_id = leader_id

    def _on_broker_epoch(self, epoch: int) -> None:
        self.broker.broker_epoch = epoch

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Mirrors BrokerServer#startup's KRaft steps (module docstring); returns after the first publish."""
        # The cache knows where the active controller is (KRaftCachedControllerId).
        self.broker.metadata_cache.controller_id = self.active_controller()
        # Controller-bound requests are forwarded; internal topic creation goes the same way.
        self.forwarding_manager.start(tg)
        for request_type in FORWARDED_REQUESTS:
            self.broker.apis.register(request_type, self.forwarding_manager.forward_request)
        # IncrementalAlterConfigs: checked and authorized here, the rest forwarded (kafka_ref/server/config_admin.py).
        self.broker.apis.register(IncrementalAlterConfigsRequest, functools.partial(
            forward_incremental_alter_configs, self.broker.apis.authorizer, self.forwarding_manager._send))
        # AlterConfigs (legacy): preprocessed here, authorized and applied by the controller.
        self.broker.apis.register(AlterConfigsRequest, functools.partial(
            forward_legacy_alter_configs, self.forwarding_manager._send))
        self.broker.admin_manager = self.forwarding_manager
        # 1. Metadata log observer with the listener registered.
        self.raft.register(self.listener)
        self.raft.register(_ControllerTracker(self._leader_changed))
        tg.start_soon(self.listener.run, name=f"broker-{self.broker.broker_id}-metadata-listener")
        await tg.start(self.raft.run, name=f"broker-{self.broker.broker_id}-raft-observer")
        # 2. Registration and heartbeats.
        tg.start_soon(self.lifecycle.run, name=f"broker-{self.broker.broker_id}-lifecycle")
        # 3. Caught up with the log as of our registration.
        await self.lifecycle.initial_catch_up.wait()
        # The listener must have loaded what the controller counted (its events run in order).
        # 4. The first publish.
        await self.listener.start_publishing(self.publisher).wait()
        # 5. Ready to be unfenced.
        self.lifecycle.set_ready_to_unfence()

    async def controlled_shutdown(self, timeout_ms: float | None = None) -> bool:
        """Mirrors BrokerServer#shutdown's controlled part: ask to shut down, wait for the controller's go.

        1. The replica manager learns it is in controlled shutdown (its followers that lose
        their leader or their ISR place stop from then on); 2. the lifecycle manager asks the
        controller; 3. wait (bounded) for the controller's answer.
        """
        # 1. Replica manager first, as BrokerServer#shutdown does.
        self.broker.replica_manager.begin_controlled_shutdown()
        # 2. Then the heartbeat asks for it.
        self.lifecycle.begin_controlled_shutdown()
        limit = timeout_ms if timeout_ms is not None else self.broker.config.get("broker.session.timeout.ms") * 4
        # 3. Wait for the controller's go.
        with anyio.move_on_after(limit / 1000):
            await self.lifecycle.controlled_shutdown_done.wait()
        return self.lifecycle.controlled_shutdown_done.is_set()


class _ControllerTracker:
    """A Raft listener that only follows leader changes (the broker's controller node provider)."""

    def __init__(self, on_leader_change: Any) -> None:
        self._on_leader_change = on_leader_change

    def handle_commit(self, reader: BatchReader) -> None:
        """Commits are the metadata listener's business."""

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        self._on_leader_change(leader_id, epoch)


class ForwardingManager:
    """Mirrors kafka.server.ForwardingManager (and DefaultAutoTopicCreationManager's use of it).

    A KRaft broker cannot create or delete topics itself: it sends the request to the
    controller and answers with the controller's answer. ``create_topics(request, respond)``
    has the ZooKeeper admin manager's shape, so the group coordinator can ask for
    ``__consumer_offsets`` the same way in both modes.
    """

    def __init__(self, broker: Any, controller_node_provider: Any) -> None:
        self.broker = broker
        self.controller_node_provider = controller_node_provider
        self._task_group: anyio.abc.TaskGroup | None = None

    def start(self, tg: anyio.abc.TaskGroup) -> None:
        self._task_group = tg

    def forward_request(self, envelope: Envelope) -> None:
        """Mirrors ForwardingManager#forwardRequest: the client's request goes on to the controller.

        It travels as the client's principal and at the client's version, as Kafka's
        EnvelopeRequest carries both, so the controller authorizes the client (ControllerApis'
        checks) and answers as that version would.
        """
        self._send(envelope.request, envelope.respond, envelope.principal, envelope.api_version)

    def create_topics(self, request: CreateTopicsRequest, respond: Any) -> None:
        """Send a CreateTopics the broker makes itself (auto-creation, the group coordinator's topic)
        to the controller; the answer goes to ``respond``, as the admin manager's does."""
        self._send(request, respond)

    def delete_topics(self, request: DeleteTopicsRequest, respond: Any) -> None:
        self._send(request, respond)

    def _send(self, request: Any, respond: Any, principal: str = INTER_BROKER_PRINCIPAL,
              api_version: int | None = None) -> None:
        assert self._task_group is not None, "ForwardingManager used before start()"
        self._task_group.start_soon(self._forward, request, respond, principal, api_version)

    async def _forward(self, request: Any, respond: Any, principal: str = INTER_BROKER_PRINCIPAL,
                       api_version: int | None = None) -> None:
        """The forwarding channel (BrokerToControllerChannelManager) behind ForwardingManager#forwardRequest.

        1. send to the active controller; 2. NOT_CONTROLLER or no answer: look up the
        controller again and retry until the request's time is up; 3. answer with the
        controller's response, or REQUEST_TIMED_OUT.
        """
        timeout_ms = getattr(request, "timeout_ms", 0) + self.broker.config.get("request.timeout.ms")
        deadline = anyio.current_time() + timeout_ms / 1000
        response = request.get_error_response(Errors.REQUEST_TIMED_OUT.code)
        while (remaining_ms := (deadline - anyio.current_time()) * 1000) > 0:
            # 1. The controller we know now.
            try:
                network = self.broker.network
                forwarded = network.post(self.broker.broker_id, self.controller_node_provider(), request, principal)
                forwarded.api_version = api_version
                answer = await network.wait(forwarded, remaining_ms)
            except (DisconnectException, NetworkTimeoutException):
                answer = None
            # 2. Another controller may be active: retry after a short back-off.
            # (NOT_CONTROLLER may be top-level or per topic/resource: error_counts sees both.)
            if answer is not None and Errors.NOT_CONTROLLER.code not in answer.error_counts():
                response = answer
                break
            await anyio.sleep(min(FORWARD_RETRY_BACKOFF_MS / 1000, max(0.0, deadline - anyio.current_time())))
        # 3. The answer.
        respond(response)
