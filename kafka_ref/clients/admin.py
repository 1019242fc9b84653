"""The admin client: create, delete and describe topics; describe the cluster; list offsets.

Mirrors org.apache.kafka.clients.admin.Admin / KafkaAdminClient (Kafka 3.x, ZooKeeper-mode
brokers). Each operation is one *call* (KafkaAdminClient.Call): pick a node (the controller for
CreateTopics/DeleteTopics, the least-loaded broker otherwise), send the request, and retry
retriable failures after ``retry_backoff_ms`` until the operation's deadline
(``default_api_timeout_ms`` unless a timeout is given). NOT_CONTROLLER from a broker that lost
(or never had) the controllership clears the cached controller, refreshes metadata and retries
at the new controller. The backoff grows exponentially per retry (KIP-580) up to
``retry_backoff_max_ms``.

Kafka returns futures per topic and ``all()`` raises the first failure. Here each method
awaits the whole operation and then raises the first per-topic error, in request order, as its
Kafka exception (TopicExistsException, InvalidReplicationFactorException,
UnknownTopicOrPartitionException, ...); topics that succeeded in the same call stay created or
deleted.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Awaitable, Callable, Iterable

from kafka_ref.clients.admin_topics import AdminTopicsMixin
from kafka_ref.clients.client_metadata import Metadata, Node, client_logger
from kafka_ref.clients.cluster_connection_states import ExponentialBackoff
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.common.errors import (
    ApiException,
    CoordinatorNotAvailableException,
    Errors,
    KafkaException,
    NetworkException,
    NotControllerException,
    NotCoordinatorException,
    RetriableException,
    TimeoutException,
)
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataResponse
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.image.records import ConfigResource
from kafka_ref.network.network import Network
from kafka_ref.clients.admin_types import (  # noqa: F401  (re-exported: the names users import from here)
    AlterConfigOp,
    ClusterDescription,
    ConfigEntry,
    DeletedRecords,
    ListOffsetsResultInfo,
    LogDirDescription,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    RecordsToDelete,
    ReplicaInfo,
    TopicDescription,
    TopicMetadataAndConfig,
    TopicPartitionInfo,
)
from kafka_ref.clients.admin_types import _all

# CommonClientConfigs#RETRY_BACKOFF_EXP_BASE and #RETRY_BACKOFF_JITTER.
RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2

# --------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------


class _GroupCoordinatorProvider:
    """Mirrors org.apache.kafka.clients.admin.internals.CoordinatorStrategy as AdminApiDriver uses it for one group.

    The coordinator found by FindCoordinator is kept for the rest of the call: a retry after
    COORDINATOR_LOAD_IN_PROGRESS (or any other retriable error) goes back to the same broker; only
    NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a lost connection unmaps the group so the next
    attempt looks the coordinator up again (the handlers' ``unmapped`` keys, AdminApiDriver#onFailure).
    """

    def __init__(self, admin: KafkaAdminClient, group_id: str) -> None:
        self.admin = admin
        self.group_id = group_id
        self.node: int | None = None

    async def __call__(self, deadline: int) -> int:
        # 1. A group still mapped keeps its coordinator; 2. else FindCoordinator.
        if self.node is None:
            self.node = await self.admin._find_group_coordinator(self.group_id, deadline)
        return self.node

    def on_retriable(self, exc: RetriableException) -> None:
        """Unmap the group when the failure says the coordinator moved or went away."""
        if isinstance(exc, (NotCoordinatorException, CoordinatorNotAvailableException, NetworkException)):
            self.node = None


class KafkaAdminClient(AdminTopicsMixin):
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient.

    No background task: each method runs its call to completion in the caller's task. The topic
    calls (create, delete and describe topics; create partitions) are in admin_topics.py.
    """

    def __init__(
        self,
        network: Network,
        bootstrap_brokers: Iterable[int],
        request_timeout_ms: int = 30000,
        *,
        client_id: str = "adminclient-1",
        default_api_timeout_ms: int = 60000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1000,
        retries: int = 2**31 - 1,
        metadata_max_age_ms: int = 300000,
        time: Time | None = None,
    ) -> None:
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.default_api_timeout_ms = max(default_api_timeout_ms, request_timeout_ms)
        self.retry_backoff_ms = retry_backoff_ms
        # Call#fail's backoff (KIP-580): exponential from retry.backoff.ms (base 2, jitter 0.2) up
        # to retry.backoff.max.ms, its jitter drawn from a stream seeded by the client id.
        self.retry_backoff = ExponentialBackoff(retry_backoff_ms, RETRY_BACKOFF_EXP_BASE, retry_backoff_max_ms,
                                                RETRY_BACKOFF_JITTER, random.Random(f"admin-retry/{client_id}"))
        self.retries = retries
        self.time = time or Time()
        # AdminMetadataManager: brokers and the controller only (topics are asked for per call);
        # its refresh backoff is the constant retry.backoff.ms (no KIP-580 there in Kafka 3.8).
        self.metadata = Metadata(retry_backoff_ms, metadata_max_age_ms, topics=(), refresh_backoff_max_ms=None)
        self.client = NetworkClient(network, client_id, bootstrap_brokers, self.metadata, time=self.time,
                                    request_timeout_ms=request_timeout_ms)
        self._log = client_logger(client_id=client_id)

    async def __aenter__(self) -> KafkaAdminClient:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#close (nothing runs in the background)."""

    # -- the call machinery ----------------------------------------------------------------

    async def _run_call(self, call_name: str, node_provider: Callable[[int], Awaitable[int]],
                        attempt: Callable[[int, int], Awaitable[Any]], timeout_ms: float | None) -> Any:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient.Call (send, fail, retry).

        ``attempt(node, remaining_ms)`` sends one request and returns the call's result, or
        raises a retriable exception to try again (NotControllerException refreshes the
        controller first). Non-retriable exceptions propagate. Past the deadline, or after more
        than ``retries`` retries, a retriable failure fails the call with TimeoutException (the
        failure itself when it already is one), as Call#fail does; past the deadline a
        non-retriable one does too.
        """
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.time.milliseconds() + timeout_ms
        tries = 0
        while True:
            tries += 1
            try:
                # 1. A node for this attempt, then the request.
                node = await node_provider(deadline)
                remaining = max(deadline - self.time.milliseconds(), 0)
                return await attempt(node, int(min(remaining, self.request_timeout_ms)))
            except RetriableException as exc:
                # 2. Retriable: refresh what it says is stale, back off, try again.
                if isinstance(node_provider, _GroupCoordinatorProvider):
                    node_provider.on_retriable(exc)
                #    (Only a controller move refreshes the admin's own metadata here, as
                #    handleNotControllerError does; a lost connection already asked for an update
                #    through the network client, and a stale partition leader is looked up again by
                #    the call's own Metadata request.)
                if isinstance(exc, NotControllerException):
                    self.metadata.snapshot = _without_controller(self.metadata.snapshot)
                    self.metadata.request_update()
                # 3. Past the deadline, or out of retries: the call times out (handleTimeoutFailure:
                #    a TimeoutException cause fails the call as it is, anything else is wrapped).
                now = self.time.milliseconds()
                if now >= deadline or tries > self.retries:
                    if isinstance(exc, TimeoutException):
                        raise
                    raise TimeoutException(f"Call(callName={call_name}, deadlineMs={deadline}, tries={tries}) "
                                           f"timed out at {now} after {tries} attempt(s): {exc}") from exc
                self._log.debug("admin_call_retry", call=call_name, tries=tries, error=repr(exc))
                await self.time.sleep(min(self.retry_backoff.backoff(tries - 1), deadline - now))
            except ApiException as exc:
                # 4. Not retriable: the call fails with it, unless its deadline has already passed
                #    (Call#fail looks at the deadline first).
                now = self.time.milliseconds()
                if now >= deadline:
                    raise TimeoutException(f"Call(callName={call_name}, deadlineMs={deadline}, tries={tries}) "
                                           f"timed out at {now} after {tries} attempt(s): {exc}") from exc
                raise

    async def _controller_node(self, deadline: int) -> int:
        """Mirrors KafkaAdminClient.ControllerNodeProvider: the controller, after a metadata refresh if unknown."""
        while True:
            await self.client.poll_metadata()
            controller = self.metadata.fetch().controller_id
            if controller is not None:
                return controller
            if self.time.milliseconds() >= deadline:
                raise TimeoutException("Timed out waiting for a controller to be known")
            await self.client.await_metadata_update(deadline)

    async def _least_loaded_node(self, deadline: int) -> int:
        """Mirrors KafkaAdminClient.LeastLoadedNodeProvider.

        When every broker is in reconnect backoff the call waits (refreshing metadata) for one
        to become usable, until its deadline.
        """
        while True:
            await self.client.poll_metadata()
            node = self.client.least_loaded_node()
            if node is not None:
                return node
            if self.time.milliseconds() >= deadline:
                raise TimeoutException("Timed out waiting for a node assignment: no broker is available")
            await self.client.await_metadata_update(deadline)

    # -- configs ---------------------------------------------------------------------------

    async def incremental_alter_configs(self, configs: dict[str, Iterable[AlterConfigOp]], *, validate_only: bool = False,
                                        timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#incrementalAlterConfigs for topic resources.

        ``configs`` maps a topic name to its operations. Topic resources go to the least-loaded
        broker (a ZooKeeper-mode broker writes the change itself; a KRaft broker forwards it to
        the controller); the first per-topic error raises, in request order
        (AlterConfigsResult#all), e.g. InvalidConfigurationException or
        UnknownTopicOrPartitionException.
        """
        from kafka_ref.common.requests.incremental_alter_configs import (
            AlterableConfig,
            AlterConfigsResource,
            IncrementalAlterConfigsRequest,
            IncrementalAlterConfigsResponse,
            OpType,
        )
        from kafka_ref.image.records import ConfigResourceType

        topics = list(configs)
        resources = tuple(AlterConfigsResource(
            resource_type=ConfigResourceType.TOPIC, resource_name=topic,
            configs=tuple(AlterableConfig(name=op.name, config_operation=OpType[op.op_type], value=op.value)
                          for op in configs[topic])) for topic in topics)
        results: dict[str, None | ApiException] = {}

        async def attempt(node: int, remaining_ms: int) -> None:
            request = IncrementalAlterConfigsRequest(resources=resources, validate_only=validate_only)
            response: IncrementalAlterConfigsResponse = await self.client.send(node, request, remaining_ms)
            for r in response.responses:
                error = Errors.for_code(r.error_code)
                results[r.resource_name] = None if error is Errors.NONE else error.exception(r.error_message or None)
            for topic in topics:
                results.setdefault(topic, KafkaException(f"The response did not contain a result for topic {topic}"))

        await self._run_call("incrementalAlterConfigs", self._least_loaded_node, attempt, timeout_ms)
        _all(results, topics)

    async def describe_topic_configs(self, topics: Iterable[str], *, timeout_ms: float | None = None) -> dict[str, dict[str, str | None]]:
        """Mirrors KafkaAdminClient#describeConfigs for topic resources: each topic's effective config by key (values
        only; ``describe_configs`` also takes broker resources and returns whole entries)."""
        from kafka_ref.common.requests.describe_configs import (
            DescribeConfigsRequest,
            DescribeConfigsResource,
            DescribeConfigsResponse,
        )
        from kafka_ref.image.records import ConfigResourceType

        names = list(dict.fromkeys(topics))
        results: dict[str, dict[str, str | None] | ApiException] = {}

        async def attempt(node: int, remaining_ms: int) -> None:
            request = DescribeConfigsRequest(resources=tuple(
                DescribeConfigsResource(resource_type=ConfigResourceType.TOPIC, resource_name=n) for n in names))
            response: DescribeConfigsResponse = await self.client.send(node, request, remaining_ms)
            # 1. Each requested resource's configs or error (an unrequested one is only logged).
            for r in response.results:
                if r.resource_name not in names:
                    self._log.warning("describe_configs_unrequested_resource", resource=r.resource_name, node=node)
                    continue
                error = Errors.for_code(r.error_code)
                results[r.resource_name] = ({c.name: c.value for c in r.configs} if error is Errors.NONE
                                            else error.exception(r.error_message or None))
            # 2. completeUnrealizedFutures: a resource the broker left out fails with ApiException.
            for n in names:
                results.setdefault(n, ApiException("The node response did not contain a result for config resource "
                                                   f"ConfigResource(type=TOPIC, name='{n}')"))

        await self._run_call("describeConfigs", self._least_loaded_node, attempt, timeout_ms)
        return _all(results, names)

    async def describe_configs(self, resources: Iterable[ConfigResource], *,
                               timeout_ms: float | None = None) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#describeConfigs (then DescribeConfigsResult#all): each
        resource's config entries by name. (``describe_topic_configs`` is also this call, for topic values only.)

        1. Resources are grouped by the node that must answer them (KafkaAdminClient#nodeFor: a
        broker resource with a broker id goes to that broker, anything else to the least-loaded
        broker); 2. one DescribeConfigs per group, every key; 3. each resource's error as its
        exception (the broker's message), or its entries (the response's source mapped to
        ConfigEntry.ConfigSource); a resource the answer left out fails. The first failure in
        request order raises.
        """
        from kafka_ref.common.requests.describe_configs import (
            DescribeConfigsRequest,
            DescribeConfigsResource,
            DescribeConfigsResponse,
        )
        from kafka_ref.image.records import ConfigResourceType

        wanted = list(dict.fromkeys(resources))
        # 1. By node (None: any broker).
        by_node: dict[int | None, list[ConfigResource]] = {}
        for resource in wanted:
            node = int(resource.name) if resource.type == ConfigResourceType.BROKER and resource.name else None
            by_node.setdefault(node, []).append(resource)
        results: dict[ConfigResource, dict[str, ConfigEntry] | ApiException] = {}
        for node, group in by_node.items():
            async def fixed(deadline: int, node: int | None = node) -> int:
                return node if node is not None else await self._least_loaded_node(deadline)

            async def attempt(target: int, remaining_ms: int, group: list[ConfigResource] = group) -> None:
                # 2. One request for the group.
                request = DescribeConfigsRequest(resources=tuple(
                    DescribeConfigsResource(resource_type=int(r.type), resource_name=r.name) for r in group))
                response: DescribeConfigsResponse = await self.client.send(target, request, remaining_ms)
                # 3. Per resource.
                for r in response.results:
                    resource = ConfigResource(ConfigResourceType(r.resource_type), r.resource_name)
                    if resource not in group:
                        self._log.warning("describe_configs_unrequested_resource", resource=r.resource_name, node=target)
                        continue
                    error = Errors.for_code(r.error_code)
                    results[resource] = (error.exception(r.error_message or None) if error is not Errors.NONE else
                                         {c.name: ConfigEntry(c.name, c.value, _CONFIG_ENTRY_SOURCES.get(int(c.config_source),
                                                                                                           "UNKNOWN"),
                                                              c.is_sensitive, c.read_only) for c in r.configs})
                for resource in group:
                    results.setdefault(resource, ApiException(
                        "The node response did not contain a result for config resource "
                        f"ConfigResource(type={resource.type.name}, name='{resource.name}')"))

            try:
                await self._run_call("describeConfigs", fixed, attempt, timeout_ms)
            except ApiException as exc:
                for resource in group:
                    results.setdefault(resource, exc)
        return _all(results, wanted)

    async def describe_cluster(self, *, timeout_ms: float | None = None) -> ClusterDescription:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#describeCluster (DescribeCluster, KIP-700).

        1. DescribeCluster to the least-loaded broker; a broker that does not support it (here:
        one answering UNSUPPORTED_VERSION, where Kafka's client learns it from ApiVersions) is
        asked with Metadata instead, from then on (handleUnsupportedVersionException); 2. a
        top-level error fails the call with the broker's message, without a retry
        (handleFailure); 3. the brokers, the controller among them (None when it is not listed)
        and the cluster id.
        """
        from kafka_ref.common.requests.describe_cluster import DescribeClusterRequest, DescribeClusterResponse

        use_metadata_request = False

        async def attempt(node: int, remaining_ms: int) -> ClusterDescription | ApiException:
            nonlocal use_metadata_request
            # 1. Ask one broker.
            if not use_metadata_request:
                response: DescribeClusterResponse = await self.client.send(node, DescribeClusterRequest(), remaining_ms)
                error = Errors.for_code(response.error_code)
                if error is Errors.UNSUPPORTED_VERSION:
                    use_metadata_request = True
                # 2. Its error, as the call's result.
                elif error is not Errors.NONE:
                    return error.exception(response.error_message or None)
            if use_metadata_request:
                metadata: MetadataResponse = await self.client.send(node, MetadataRequest.for_topics([]), remaining_ms)
                nodes = tuple(Node(b.node_id, b.host, b.port, b.rack) for b in sorted(metadata.brokers, key=lambda b: b.node_id))
                controller = next((n for n in nodes if n.id == metadata.controller_id), None)
                return ClusterDescription(metadata.cluster_id, controller, nodes)
            # 3. The description.
            nodes = tuple(Node(b.broker_id, b.host, b.port, b.rack) for b in sorted(response.brokers, key=lambda b: b.broker_id))
            controller = next((n for n in nodes if n.id == response.controller_id), None)
            return ClusterDescription(response.cluster_id, controller, nodes)

        result = await self._run_call("describeCluster", self._least_loaded_node, attempt, timeout_ms)
        if isinstance(result, ApiException):
            raise result
        return result

    # -- groups ----------------------------------------------------------------------------

    async def _find_group_coordinator(self, group_id: str, deadline: int) -> int:
        """Mirrors the admin client's CoordinatorStrategy lookup: FindCoordinator for one group, via the least-loaded node."""
        from kafka_ref.common.requests.find_coordinator import FindCoordinatorRequest

        node = await self._least_loaded_node(deadline)
        remaining = max(deadline - self.time.milliseconds(), 0)
        response = await self.client.send(node, FindCoordinatorRequest(key_type=0, coordinator_keys=(group_id,)),
                                          int(min(remaining, self.request_timeout_ms)))
        found = response.coordinator(group_id)
        error = Errors.for_code(found.error_code) if found is not None else Errors.COORDINATOR_NOT_AVAILABLE
        if error is not Errors.NONE:
            raise error.exception(found.error_message if found is not None else None)
        return found.node_id

    async def delete_consumer_groups(self, group_ids: Iterable[str], *, timeout_ms: float | None = None) -> None:
        """Mirrors KafkaAdminClient#deleteConsumerGroups (DeleteConsumerGroupsHandler; then DeleteConsumerGroupsResult#all).

        Per group: 1. find its coordinator; 2. send DeleteGroups there; COORDINATOR_LOAD_IN_PROGRESS
        retries, NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE look the coordinator up again; 3. any
        other error fails that group (GroupIdNotFoundException, GroupNotEmptyException); the first
        failure in request order raises.
        """
        from kafka_ref.common.requests.delete_groups import DeleteGroupsRequest

        groups = list(dict.fromkeys(group_ids))
        results: dict[str, None | ApiException] = {}
        for group_id in groups:
            coordinator = _GroupCoordinatorProvider(self, group_id)

            async def attempt(node: int, remaining_ms: int, group_id: str = group_id) -> None | ApiException:
                response = await self.client.send(node, DeleteGroupsRequest(groups_names=(group_id,)), remaining_ms)
                error = Errors.for_code(response.errors().get(group_id, Errors.UNKNOWN_SERVER_ERROR.code))
                if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE):
                    raise error.exception()
                return None if error is Errors.NONE else error.exception()

            try:
                results[group_id] = await self._run_call("deleteConsumerGroups", coordinator, attempt, timeout_ms)
            except ApiException as exc:
                results[group_id] = exc
        _all(results, groups)

    # -- offsets ---------------------------------------------------------------------------

    # -- partition-leader calls (kafka_ref/clients/admin_partitions.py) ------------------------

    async def list_offsets(self, topic_partition_offsets: dict[TopicPartition, OffsetSpec], *, isolation_level: int = 0,
                           timeout_ms: float | None = None) -> dict[TopicPartition, ListOffsetsResultInfo]:
        """KafkaAdminClient#listOffsets (then ListOffsetsResult#all): each partition's offset for its spec."""
        from kafka_ref.clients.admin_partitions import list_offsets

        return await list_offsets(self, topic_partition_offsets, isolation_level=isolation_level, timeout_ms=timeout_ms)

    async def delete_records(self, records_to_delete: dict[TopicPartition, RecordsToDelete | int], *,
                             timeout_ms: float | None = None) -> dict[TopicPartition, DeletedRecords]:
        """KafkaAdminClient#deleteRecords (then DeleteRecordsResult#all): each partition's new low watermark."""
        from kafka_ref.clients.admin_partitions import delete_records

        return await delete_records(self, records_to_delete, timeout_ms=timeout_ms)

    # -- reassignments (kafka_ref/clients/admin_reassignments.py) --------------------------

    async def alter_partition_reassignments(self, reassignments: dict[TopicPartition, Iterable[int] | None], *,
                                            timeout_ms: float | None = None) -> dict[TopicPartition, None]:
        """KafkaAdminClient#alterPartitionReassignments: move replicas (a target of None cancels); the first error raises."""
        from kafka_ref.clients.admin_reassignments import alter_partition_reassignments

        return await alter_partition_reassignments(self, reassignments, timeout_ms)

    async def list_partition_reassignments(self, partitions: Iterable[TopicPartition] | None = None, *,
                                           timeout_ms: float | None = None) -> dict[TopicPartition, Any]:
        """KafkaAdminClient#listPartitionReassignments: the reassignments in progress (all when None)."""
        from kafka_ref.clients.admin_reassignments import list_partition_reassignments

        return await list_partition_reassignments(self, partitions, timeout_ms)

    # -- listings (kafka_ref/clients/admin_groups.py) ------------------------------------------

    async def list_topics(self, *, list_internal: bool = False, timeout_ms: float | None = None) -> set[str]:
        """KafkaAdminClient#listTopics: the topic names (internal ones only with ``list_internal``)."""
        from kafka_ref.clients.admin_groups import list_topics

        return await list_topics(self, list_internal, timeout_ms)

    async def list_consumer_groups(self, *, states: Iterable[str] = (),
                                   timeout_ms: float | None = None) -> list[Any]:
        """KafkaAdminClient#listConsumerGroups: every broker's consumer (and simple) groups, only those in
        ``states`` when given (ListConsumerGroupsOptions#inStates, e.g. ``["Stable"]``)."""
        from kafka_ref.clients.admin_groups import list_consumer_groups

        return await list_consumer_groups(self, timeout_ms, states)

    async def describe_consumer_groups(self, group_ids: Iterable[str], *, timeout_ms: float | None = None) -> dict[str, Any]:
        """KafkaAdminClient#describeConsumerGroups: state, assignor, members and their partitions."""
        from kafka_ref.clients.admin_groups import describe_consumer_groups

        return await describe_consumer_groups(self, group_ids, timeout_ms)

    async def list_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition] | None = None, *,
                                          require_stable: bool = False,
                                          timeout_ms: float | None = None) -> dict[TopicPartition, Any]:
        """KafkaAdminClient#listConsumerGroupOffsets: the group's committed offsets (None: a partition named without one)."""
        from kafka_ref.clients.admin_groups import list_consumer_group_offsets

        return await list_consumer_group_offsets(self, group_id, partitions, timeout_ms, require_stable)

    async def alter_consumer_group_offsets(self, group_id: str, offsets: dict[TopicPartition, Any], *,
                                           timeout_ms: float | None = None) -> None:
        """KafkaAdminClient#alterConsumerGroupOffsets: set an Empty group's committed offsets."""
        from kafka_ref.clients.admin_groups import alter_consumer_group_offsets

        await alter_consumer_group_offsets(self, group_id, offsets, timeout_ms)

    async def remove_members_from_consumer_group(self, group_id: str, group_instance_ids: Iterable[str] | None = None, *,
                                                 reason: str | None = None, timeout_ms: float | None = None) -> None:
        """KafkaAdminClient#removeMembersFromConsumerGroup: static members by instance id (None: every member), with
        the options' reason (default "member was removed by an admin")."""
        from kafka_ref.clients.admin_groups import remove_members_from_consumer_group

        await remove_members_from_consumer_group(self, group_id, group_instance_ids, timeout_ms, reason)

    async def elect_leaders(self, election_type: Any, partitions: Iterable[TopicPartition] | None = None, *,
                            timeout_ms: float | None = None) -> dict[TopicPartition, ApiException | None]:
        """KafkaAdminClient#electLeaders (kafka_ref/clients/admin_elections.py): per partition None or its exception."""
        from kafka_ref.clients.admin_elections import elect_leaders

        return await elect_leaders(self, election_type, partitions, timeout_ms)

    async def delete_consumer_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition], *,
                                            timeout_ms: float | None = None) -> None:
        """Mirrors KafkaAdminClient#deleteConsumerGroupOffsets (DeleteConsumerGroupOffsetsHandler; then DeleteConsumerGroupOffsetsResult#all).

        1. Find the group's coordinator; 2. send OffsetDelete there; a group-level
        COORDINATOR_LOAD_IN_PROGRESS retries, NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE look the
        coordinator up again, any other group error (GroupIdNotFoundException,
        GroupNotEmptyException) raises; 3. the first partition error in request order raises
        (GroupSubscribedToTopicException, UnknownTopicOrPartitionException, ...).
        """
        from kafka_ref.common.requests.offset_delete import OffsetDeleteRequest, OffsetDeleteResponse

        wanted = list(dict.fromkeys(partitions))

        coordinator = _GroupCoordinatorProvider(self, group_id)

        async def attempt(node: int, remaining_ms: int) -> dict[TopicPartition, int]:
            response: OffsetDeleteResponse = await self.client.send(node, OffsetDeleteRequest.of(group_id, wanted),
                                                                    remaining_ms)
            error = Errors.for_code(response.error_code)
            if error is not Errors.NONE:
                raise error.exception()
            return response.partition_errors()

        errors = await self._run_call("deleteConsumerGroupOffsets", coordinator, attempt, timeout_ms)
        results: dict[TopicPartition, None | ApiException] = {}
        for tp in wanted:
            code = errors.get(tp)
            if code is None:
                results[tp] = ApiException(f"The response did not contain a result for partition {tp}")
            else:
                results[tp] = None if code == Errors.NONE.code else Errors.for_code(code).exception()
        _all(results, wanted)


    async def describe_log_dirs(self, broker_ids: Iterable[int], *,
                                timeout_ms: float | None = None) -> dict[int, dict[str, LogDirDescription]]:
        """Mirrors KafkaAdminClient#describeLogDirs (then DescribeLogDirsResult#allDescriptions).

        Per broker: 1. DescribeLogDirs for every partition (a null topic list) sent to that
        broker; 2. each log directory's description: its error as an exception (None when NONE),
        its replicas, and total/usable bytes (None when the broker does not know them); 3. an
        answer with no directories fails that broker with its top-level error (v3+), or with
        ClusterAuthorizationException when that is NONE. The first failure in request order raises.
        """
        from kafka_ref.common.requests.describe_log_dirs import (
            UNKNOWN_VOLUME_BYTES,
            DescribeLogDirsRequest,
            DescribeLogDirsResponse,
        )

        brokers = list(dict.fromkeys(broker_ids))
        results: dict[int, dict[str, LogDirDescription] | ApiException] = {}
        for broker_id in brokers:
            async def node(deadline: int, broker_id: int = broker_id) -> int:
                return broker_id

            async def attempt(node_id: int, remaining_ms: int) -> dict[str, LogDirDescription] | ApiException:
                # 1. Everything this broker holds.
                response: DescribeLogDirsResponse = await self.client.send(node_id, DescribeLogDirsRequest(topics=None),
                                                                           remaining_ms)
                # 2. One description per directory.
                descriptions = {r.log_dir: LogDirDescription(
                    error=None if r.error_code == Errors.NONE.code else Errors.for_code(r.error_code).exception(),
                    replica_infos={TopicPartition(t.name, p.partition_index): ReplicaInfo(p.partition_size, p.offset_lag,
                                                                                          p.is_future_key)
                                   for t in r.topics for p in t.partitions},
                    total_bytes=None if r.total_bytes == UNKNOWN_VOLUME_BYTES else r.total_bytes,
                    usable_bytes=None if r.usable_bytes == UNKNOWN_VOLUME_BYTES else r.usable_bytes)
                    for r in response.results}
                if descriptions:
                    return descriptions
                # 3. No directories: the top-level error (v3+), or, when it is NONE (before v3 the
                #    field did not exist), an authorization failure. Not retried.
                error = Errors.for_code(response.error_code)
                return (Errors.CLUSTER_AUTHORIZATION_FAILED if error is Errors.NONE else error).exception()

            try:
                results[broker_id] = await self._run_call("describeLogDirs", node, attempt, timeout_ms)
            except ApiException as exc:
                results[broker_id] = exc
        return _all(results, brokers)


    async def alter_configs(self, configs: dict[str, dict[str, str]], *, validate_only: bool = False,
                            timeout_ms: float | None = None) -> None:
        """Mirrors KafkaAdminClient#alterConfigs (the deprecated, non-incremental call) for topic resources.

        ``configs`` maps a topic to its complete new override set: every override not named goes
        back to its default. Sent to the least-loaded broker like incremental_alter_configs; the
        first per-topic error raises, in request order (AlterConfigsResult#all).
        """
        from kafka_ref.common.requests.alter_configs import AlterConfigsRequest, AlterConfigsResponse

        topics = list(configs)
        request = AlterConfigsRequest.for_topics({t: dict(configs[t]) for t in topics}, validate_only=validate_only)
        results: dict[str, None | ApiException] = {}

        async def attempt(node: int, remaining_ms: int) -> None:
            response: AlterConfigsResponse = await self.client.send(node, request, remaining_ms)
            for r in response.responses:
                error = Errors.for_code(r.error_code)
                results[r.resource_name] = None if error is Errors.NONE else error.exception(r.error_message or None)
            for topic in topics:
                results.setdefault(topic, KafkaException(f"The response did not contain a result for topic {topic}"))

        await self._run_call("alterConfigs", self._least_loaded_node, attempt, timeout_ms)
        _all(results, topics)


Admin = KafkaAdminClient


# KafkaAdminClient#configSource: DescribeConfigsResponse.ConfigSource ids to ConfigEntry.ConfigSource names.
_CONFIG_ENTRY_SOURCES = {1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                         4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
                         7: "DYNAMIC_CLIENT_METRICS_CONFIG"}


def _without_controller(snapshot: Any) -> Any:
    """Mirrors AdminMetadataManager#clearController: forget the controller until the next metadata."""
    return dataclasses.replace(snapshot, controller_id=None)


__all__ = [
    "Admin", "AlterConfigOp", "ClusterDescription", "ConfigEntry", "ConfigResource", "DeletedRecords", "KafkaAdminClient", "ListOffsetsResultInfo",
    "LogDirDescription", "NewTopic", "OffsetSpec", "RecordsToDelete", "ReplicaInfo", "TopicDescription", "TopicMetadataAndConfig", "TopicPartitionInfo",
]
