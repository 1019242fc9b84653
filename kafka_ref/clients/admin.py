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
from typing import Any, Awaitable, Callable, Iterable, Mapping

from kafka_ref.clients.client_metadata import Metadata, Node, client_logger
from kafka_ref.clients.cluster_connection_states import ExponentialBackoff
from kafka_ref.clients.network_client import NetworkClient
from kafka_ref.common.errors import (
    ApiException,
    CoordinatorNotAvailableException,
    Errors,
    InvalidTopicException,
    KafkaException,
    NetworkException,
    NotControllerException,
    NotCoordinatorException,
    RetriableException,
    ThrottlingQuotaExceededException,
    TimeoutException,
    UnknownTopicIdException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.create_topics import CreateTopicsRequest, CreateTopicsResponse
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse, DeleteTopicState
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid
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


class KafkaAdminClient:
    """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient.

    No background task: each method runs its call to completion in the caller's task.
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

    # -- topics ----------------------------------------------------------------------------

    async def _run_topic_calls(self, call_name: str, attempt: Callable[[int, int, list[str]], Awaitable[list[str]]],
                               names: list[str], results: dict[str, Any], retry_on_quota_violation: bool,
                               timeout_ms: float | None) -> None:
        """Mirrors the chain of Calls KafkaAdminClient#createTopics, #deleteTopics and #createPartitions
        make at the controller (getCreateTopicsCall and its siblings, maybeCompleteQuotaExceededException).

        ``attempt(node, remaining_ms, batch)`` sends one request for ``batch``, records each
        answered topic in ``results`` and returns the topics the controller throttled
        (THROTTLING_QUOTA_EXCEEDED, only when ``retry_on_quota_violation``); their exceptions are
        stored in ``results`` meanwhile and replaced by the next answer. 1. One call for the batch;
        2. throttled topics go to a new call, at once, within the same deadline; 3. a call that
        fails gives its failure to every topic without a result, except that on a timeout a
        throttled topic gets its ThrottlingQuotaExceededException back, its throttle time reduced
        by the time since that call started.
        """
        timeout_ms = self.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.time.milliseconds() + timeout_ms
        batch = list(names)
        throttled: dict[str, ApiException] = {}
        while True:
            started = self.time.milliseconds()

            async def one(node: int, remaining_ms: int) -> list[str]:
                return await attempt(node, remaining_ms, batch)

            try:
                # 1. One call for the batch.
                if deadline - started <= 0:
                    raise TimeoutException(f"Timed out waiting for a node assignment. Call: {call_name}")
                retry = await self._run_call(call_name, self._controller_node, one, deadline - started)
            except ApiException as exc:
                # 3. handleFailure (and maybeCompleteQuotaExceededException on a timeout).
                if retry_on_quota_violation and isinstance(exc, TimeoutException):
                    elapsed = self.time.milliseconds() - started
                    for name, quota in throttled.items():
                        results[name] = ThrottlingQuotaExceededException(
                            str(quota), max(0, getattr(quota, "throttle_time_ms", 0) - elapsed))
                for name in names:
                    if name not in results or name in throttled:
                        results.setdefault(name, exc)
                return
            # 2. Throttled topics go again in a new call.
            throttled = {name: results.pop(name) for name in retry}
            if not retry:
                return
            batch = list(retry)

    async def create_topics(self, new_topics: Iterable[NewTopic], *, validate_only: bool = False,
                            retry_on_quota_violation: bool = True,
                            timeout_ms: float | None = None) -> dict[str, TopicMetadataAndConfig]:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#createTopics (then CreateTopicsResult#all).

        Sends CreateTopics to the controller; returns each topic's id, partitions,
        replication factor and configs, or raises the first topic's error. Topics the controller
        throttles are sent again (CreateTopicsOptions#retryOnQuotaViolation, on by default).
        """
        # 1. Names the request cannot carry fail at once.
        topics: dict[str, NewTopic] = {}
        for topic in new_topics:
            if not topic.name:
                raise InvalidTopicException(f"The given topic name '{topic.name}' cannot be represented in a request.")
            topics.setdefault(topic.name, topic)
        results: dict[str, TopicMetadataAndConfig | ApiException] = {}

        async def attempt(node: int, remaining_ms: int, batch: list[str]) -> list[str]:
            request = CreateTopicsRequest(topics=tuple(topics[name].to_creatable_topic() for name in batch),
                                          timeout_ms=remaining_ms, validate_only=validate_only)
            response: CreateTopicsResponse = await self.client.send(node, request, remaining_ms)
            # 2. A controller move anywhere in the answer retries the call (handleNotControllerError).
            if any(r.error_code == Errors.NOT_CONTROLLER.code for r in response.topics):
                raise NotControllerException(f"Broker {node} is not the controller")
            # 3. Per topic: the error, or what was created; a throttled topic is retried when asked.
            for r in response.topics:
                if r.name not in topics:
                    self._log.warning("create_topics_unknown_topic_in_response", topic=r.name)
            # 4. Nothing to retry: a topic the answer left out fails (completeUnrealizedFutures).
            return _topic_outcomes(response.topics, topics, results, response.throttle_time_ms, retry_on_quota_violation,
                                   lambda r: TopicMetadataAndConfig(r.topic_id, r.num_partitions, r.replication_factor,
                                                                    {c.name: c.value for c in (r.configs or ())}))

        await self._run_topic_calls("createTopics", attempt, list(topics), results, retry_on_quota_violation, timeout_ms)
        return _all(results, topics)

    async def create_partitions(self, new_partitions: dict[str, NewPartitions], *, validate_only: bool = False,
                                retry_on_quota_violation: bool = True, timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#createPartitions (then CreatePartitionsResult#all).

        1. Sent to the controller; 2. NOT_CONTROLLER for any topic looks the controller up again
        and retries the call, a throttled topic is sent again (retryOnQuotaViolation); 3. the
        first topic's error raises (e.g. InvalidPartitionsException when the count would not grow).
        """
        from kafka_ref.common.requests.create_partitions import (
            CreatePartitionsAssignment,
            CreatePartitionsRequest,
            CreatePartitionsResponse,
            CreatePartitionsTopic,
        )

        topics = dict(new_partitions)
        results: dict[str, None | ApiException] = {}

        async def attempt(node: int, remaining_ms: int, batch: list[str]) -> list[str]:
            # 1. The topics of this call.
            request = CreatePartitionsRequest(topics=tuple(
                CreatePartitionsTopic(name=name, count=topics[name].total_count,
                                      assignments=None if topics[name].new_assignments is None
                                      else tuple(CreatePartitionsAssignment(broker_ids=tuple(a))
                                                 for a in topics[name].new_assignments))
                for name in batch), timeout_ms=remaining_ms, validate_only=validate_only)
            response: CreatePartitionsResponse = await self.client.send(node, request, remaining_ms)
            # 2. Controller moved: retry.
            if any(r.error_code == Errors.NOT_CONTROLLER.code for r in response.results):
                raise NotControllerException(f"Broker {node} is not the controller")
            # 3. Per topic; a throttled topic is retried when asked.
            return _topic_outcomes(response.results, topics, results, response.throttle_time_ms,
                                   retry_on_quota_violation, lambda r: None)

        await self._run_topic_calls("createPartitions", attempt, list(topics), results, retry_on_quota_violation,
                                    timeout_ms)
        _all(results, topics)

    async def delete_topics(self, names: Iterable[str], *, retry_on_quota_violation: bool = True,
                            timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#deleteTopics (by name; then DeleteTopicsResult#all).

        Throttled topics are sent again (DeleteTopicsOptions#retryOnQuotaViolation, on by default).
        1. A name the request cannot carry fails alone (handleDeleteTopicsUsingNames); the other
        topics are still sent; 2. the first failure in request order raises.
        """
        names = list(dict.fromkeys(names))
        results: dict[str, None | ApiException] = {}
        # 1. Unrepresentable names fail without being sent.
        for name in names:
            if not name:
                results[name] = InvalidTopicException(f"The given topic name '{name}' cannot be represented in a request.")
        valid = [name for name in names if name not in results]

        async def attempt(node: int, remaining_ms: int, batch: list[str]) -> list[str]:
            request = DeleteTopicsRequest.for_topic_names(batch, remaining_ms)
            response: DeleteTopicsResponse = await self.client.send(node, request, remaining_ms)
            # 1. Controller moved: retry the call.
            if any(r.error_code == Errors.NOT_CONTROLLER.code for r in response.responses):
                raise NotControllerException(f"Broker {node} is not the controller")
            # 2. Per topic; a throttled topic is retried when asked.
            return _topic_outcomes(response.responses, valid, results, response.throttle_time_ms,
                                   retry_on_quota_violation, lambda r: None)

        if valid:
            await self._run_topic_calls("deleteTopics", attempt, valid, results, retry_on_quota_violation, timeout_ms)
        # 2. DeleteTopicsResult#all.
        _all(results, names)

    async def delete_topics_by_ids(self, topic_ids: Iterable[Uuid], *, retry_on_quota_violation: bool = True,
                                   timeout_ms: float | None = None) -> None:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#handleDeleteTopicsUsingIds (deleteTopics with
        TopicCollection.ofTopicIds; getDeleteTopicsWithIdsCall; then DeleteTopicsResult#all).

        1. The zero id cannot be sent: it fails alone (InvalidTopicException), the other ids are
        still sent; 2. DeleteTopics naming the topics by id goes to the controller (NOT_CONTROLLER
        retries there, throttled topics are sent again); 3. the first failure in request order
        raises (UnknownTopicIdException for an id no topic has).
        """
        # 1. Ids a request can carry; the zero id fails without being sent.
        ids = list(dict.fromkeys(topic_ids))
        results: dict[Uuid, None | ApiException] = {}
        for topic_id in ids:
            if topic_id == ZERO_UUID:
                results[topic_id] = InvalidTopicException(
                    f"The given topic ID '{topic_id}' cannot be represented in a request.")
        valid = [topic_id for topic_id in ids if topic_id not in results]

        async def attempt(node: int, remaining_ms: int, batch: list[Uuid]) -> list[Uuid]:
            # 2. By id, to the controller.
            request = DeleteTopicsRequest(topics=tuple(DeleteTopicState(topic_id=t) for t in batch), timeout_ms=remaining_ms)
            response: DeleteTopicsResponse = await self.client.send(node, request, remaining_ms)
            if any(r.error_code == Errors.NOT_CONTROLLER.code for r in response.responses):
                raise NotControllerException(f"Broker {node} is not the controller")
            # 3. Per topic id.
            return _topic_outcomes(response.responses, valid, results, response.throttle_time_ms,
                                   retry_on_quota_violation, lambda r: None, key=lambda r: r.topic_id)

        if valid:
            await self._run_topic_calls("deleteTopics", attempt, valid, results, retry_on_quota_violation, timeout_ms)
        # 3. DeleteTopicsResult#all.
        _all(results, ids)

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

    async def describe_topics(self, names: Iterable[str], *, timeout_ms: float | None = None) -> dict[str, TopicDescription]:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#describeTopics (then allTopicNames).

        An unrepresentable name fails alone, the others are still asked for
        (handleDescribeTopicsByNames); the first failure in request order raises.
        """
        names = list(dict.fromkeys(names))
        invalid: dict[str, TopicDescription | ApiException] = {
            name: InvalidTopicException(f"The given topic name '{name}' cannot be represented in a request.")
            for name in names if not name}
        valid = [name for name in names if name not in invalid]

        async def attempt(node: int, remaining_ms: int) -> dict[str, TopicDescription | ApiException]:
            response: MetadataResponse = await self.client.send(
                node, MetadataRequest.for_topics(valid, allow_auto_topic_creation=False), remaining_ms)
            out: dict[str, TopicDescription | ApiException] = {}
            for name in valid:
                topic = response.topic(name)
                # 1. Missing or in error: that topic's exception.
                if topic is None:
                    out[name] = UnknownTopicOrPartitionException(f"Topic {name} not found.")
                    continue
                error = Errors.for_code(topic.error_code)
                if error is not Errors.NONE:
                    out[name] = error.exception()
                    continue
                # 2. Partitions sorted by index; a leader that is not a live broker is None.
                live = {b.node_id for b in response.brokers}
                out[name] = TopicDescription(
                    name=name, topic_id=topic.topic_id, internal=topic.is_internal,
                    partitions=tuple(
                        TopicPartitionInfo(p.partition_index, p.leader_id if p.leader_id in live else None,
                                           tuple(p.replica_nodes), tuple(p.isr_nodes))
                        for p in sorted(topic.partitions, key=lambda p: p.partition_index)),
                )
            return out

        if valid:
            try:
                invalid.update(await self._run_call("describeTopics", self._least_loaded_node, attempt, timeout_ms))
            except ApiException as exc:
                # handleFailure: every name asked for fails with the call's failure.
                invalid.update(dict.fromkeys(valid, exc))
        return _all(invalid, names)

    async def describe_topics_by_ids(self, topic_ids: Iterable[Uuid], *,
                                     timeout_ms: float | None = None) -> dict[Uuid, TopicDescription]:
        """Mirrors org.apache.kafka.clients.admin.KafkaAdminClient#handleDescribeTopicsByIds (describeTopics with
        TopicCollection.ofTopicIds; then DescribeTopicsResult#allTopicIds).

        1. The zero id cannot be sent: it fails alone (InvalidTopicException), the other ids are
        still asked for; 2. one Metadata request by id to the least-loaded broker; 3. per id: no
        topic of that id in the answer is UnknownTopicIdException("TopicId <id> not found."), a
        topic error its exception, otherwise its description. The first failure in request order raises.
        """
        # 1. Ids a request can carry; the zero id fails without being sent.
        ids = list(dict.fromkeys(topic_ids))
        results: dict[Uuid, TopicDescription | ApiException] = {
            topic_id: InvalidTopicException(f"The given topic id '{topic_id}' cannot be represented in a request.")
            for topic_id in ids if topic_id == ZERO_UUID}
        valid = [topic_id for topic_id in ids if topic_id not in results]

        async def attempt(node: int, remaining_ms: int) -> dict[Uuid, TopicDescription | ApiException]:
            # 2. Metadata by id.
            request = MetadataRequest(topics=tuple(MetadataRequestTopic(topic_id=t, name=None) for t in valid),
                                      allow_auto_topic_creation=False)
            response: MetadataResponse = await self.client.send(node, request, remaining_ms)
            live = {b.node_id for b in response.brokers}
            out: dict[Uuid, TopicDescription | ApiException] = {}
            for topic_id in valid:
                # 3. The id's topic, by the name the answer gives it.
                topic = next((t for t in response.topics if t.topic_id == topic_id and t.name), None)
                if topic is None:
                    out[topic_id] = UnknownTopicIdException(f"TopicId {topic_id} not found.")
                    continue
                error = Errors.for_code(topic.error_code)
                if error is not Errors.NONE:
                    out[topic_id] = error.exception()
                    continue
                out[topic_id] = TopicDescription(
                    name=topic.name, topic_id=topic_id, internal=topic.is_internal,
                    partitions=tuple(
                        TopicPartitionInfo(p.partition_index, p.leader_id if p.leader_id in live else None,
                                           tuple(p.replica_nodes), tuple(p.isr_nodes))
                        for p in sorted(topic.partitions, key=lambda p: p.partition_index)))
            return out

        if valid:
            try:
                results.update(await self._run_call("describeTopicsWithIds", self._least_loaded_node, attempt,
                                                    timeout_ms))
            except ApiException as exc:
                # handleFailure: every id asked for fails with the call's failure.
                results.update(dict.fromkeys(valid, exc))
        return _all(results, ids)

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



def _topic_outcomes(entries: Iterable[Any], wanted: Iterable[Any] | Mapping[Any, Any], results: dict[Any, Any],
                    throttle_time_ms: int, retry_on_quota_violation: bool, success: Callable[[Any], Any],
                    key: Callable[[Any], Any] = lambda r: r.name) -> list[Any]:
    """The per-topic answer handling CreateTopics, CreatePartitions and DeleteTopics share in
    KafkaAdminClient: 1. a throttled topic (THROTTLING_QUOTA_EXCEEDED) keeps a
    ThrottlingQuotaExceededException and is sent again when ``retry_on_quota_violation``; 2. any
    other error is its exception; 3. success is ``success(entry)``; 4. when nothing is sent again,
    a wanted topic the answer left out fails (completeUnrealizedFutures). Returns the topics to retry.
    Topics are keyed by name, or by ``key`` (the topic id, for deletions by id)."""
    ordered = list(wanted)
    wanted_set = set(ordered)
    retry: list[Any] = []
    for r in entries:
        name = key(r)
        if name not in wanted_set:
            continue
        error = Errors.for_code(r.error_code)
        if error is Errors.THROTTLING_QUOTA_EXCEEDED:
            results[name] = ThrottlingQuotaExceededException(r.error_message or error.message, throttle_time_ms)
            if retry_on_quota_violation:
                retry.append(name)
        elif error is not Errors.NONE:
            results[name] = error.exception(r.error_message or None)
        else:
            results[name] = success(r)
    if not retry:
        for name in ordered:
            results.setdefault(name, ApiException(f"The controller response did not contain a result for topic {name}"))
    return retry

# KafkaAdminClient#configSource: DescribeConfigsResponse.ConfigSource ids to ConfigEntry.ConfigSource names.
_CONFIG_ENTRY_SOURCES = {1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
                         4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG",
                         7: "DYNAMIC_CLIENT_METRICS_CONFIG"}


def _all(results: dict, order: Iterable) -> dict:
    """Mirrors KafkaFuture#allOf as the *Result#all methods use it: the first failure (in request order) raises."""
    for key in order:
        value = results.get(key)
        if isinstance(value, BaseException):
            raise value
    return {key: results[key] for key in order}


def _without_controller(snapshot: Any) -> Any:
    """Mirrors AdminMetadataManager#clearController: forget the controller until the next metadata."""
    return dataclasses.replace(snapshot, controller_id=None)


__all__ = [
    "Admin", "AlterConfigOp", "ClusterDescription", "ConfigEntry", "ConfigResource", "DeletedRecords", "KafkaAdminClient", "ListOffsetsResultInfo",
    "LogDirDescription", "NewTopic", "OffsetSpec", "RecordsToDelete", "ReplicaInfo", "TopicDescription", "TopicMetadataAndConfig", "TopicPartitionInfo",
]
