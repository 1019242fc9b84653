"""The admin client's topic calls: createTopics, createPartitions, deleteTopics and describeTopics.

Mirrors the topic parts of org.apache.kafka.clients.admin.KafkaAdminClient (Kafka 3.8): CreateTopics,
CreatePartitions and DeleteTopics (by name or by id) go to the controller as a chain of calls that
sends throttled topics again (retryOnQuotaViolation); describeTopics (by name or by id) asks the
least-loaded broker for metadata. KafkaAdminClient (admin.py) inherits these methods from
``AdminTopicsMixin``, which uses its ``_run_call``, ``_controller_node``, ``_least_loaded_node``,
``client``, ``time``, ``default_api_timeout_ms`` and ``_log``.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable, Mapping

from kafka_ref.clients.admin_types import (
    NewPartitions,
    NewTopic,
    TopicDescription,
    TopicMetadataAndConfig,
    TopicPartitionInfo,
    _all,
)
from kafka_ref.common.errors import (
    ApiException,
    Errors,
    InvalidTopicException,
    NotControllerException,
    ThrottlingQuotaExceededException,
    TimeoutException,
    UnknownTopicIdException,
    UnknownTopicOrPartitionException,
)
from kafka_ref.common.requests.create_topics import CreateTopicsRequest, CreateTopicsResponse
from kafka_ref.common.requests.delete_topics import DeleteTopicsRequest, DeleteTopicsResponse, DeleteTopicState
from kafka_ref.common.requests.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from kafka_ref.common.uuid import ZERO_UUID, Uuid


class AdminTopicsMixin:
    """KafkaAdminClient's topic methods (create, delete and describe topics; create partitions)."""

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
