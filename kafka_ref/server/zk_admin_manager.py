"""Topic creation, partition addition and deletion requests on a ZooKeeper-mode broker.

Mirrors kafka.server.ZkAdminManager#createTopics / #createPartitions / #deleteTopics and
kafka.server.DelayedCreatePartitions / DelayedDeleteTopics. The controller broker writes the topic to ZooKeeper, then the request
waits in the topic purgatory until this broker's metadata cache shows a leader for every
partition (or the topics are gone), or the request's timeout passes.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Callable

from kafka_ref.common.errors import ApiException, ConfigException, Errors, InvalidConfigurationException
from kafka_ref.common.fatal import RUN_ENDING
from kafka_ref.common.requests.create_partitions import CreatePartitionsTopic
from kafka_ref.common.requests.create_topics import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.server.delayed_operation import DelayedOperation, DelayedOperationPurgatory
from kafka_ref.zk.admin_zk_client import AdminOperationException, AdminZkClient


class DelayedTopicOperation(DelayedOperation):
    """Mirrors kafka.server.DelayedCreatePartitions / DelayedDeleteTopics: wait for metadata."""

    def __init__(self, delay_ms: int, pending: dict[str, Any], done: Callable[[str], bool],
                 respond: Callable[[dict[str, Any], set[str]], None]) -> None:
        super().__init__(delay_ms)
        self.pending = pending
        self.done = done
        self.respond = respond
        self.timed_out: set[str] = set()

    def try_complete(self) -> bool:
        if all(self.done(topic) for topic in self.pending):
            return self.force_complete()
        return False

    def on_expiration(self) -> None:
        return None

    def on_complete(self) -> None:
        unfinished = {t for t in self.pending if not self.done(t)}
        self.respond(self.pending, unfinished)


# kafka_ref's bound on partitions per created topic in ZooKeeper mode (Kafka had none there): the
# KRaft controller's MAX_RECORDS_PER_USER_OP less the TopicRecord.
MAX_PARTITIONS_PER_TOPIC = 10000 - 1


class ZkAdminManager:
    """Mirrors kafka.server.ZkAdminManager."""

    def __init__(self, broker: Any, admin_zk_client: AdminZkClient, purgatory: DelayedOperationPurgatory) -> None:
        self.broker = broker
        self.admin_zk_client = admin_zk_client
        self.topic_purgatory = purgatory
        self._log = state_change_logger(broker_id=broker.broker_id)

    def _partitions_ready(self, topic: str, expected: int) -> bool:
        cache = self.broker.metadata_cache
        parts = cache.partition_states.get(topic, {})
        return len(parts) >= expected and all(s.leader >= 0 for s in parts.values())

    def create_topics(self, request: CreateTopicsRequest, respond: Callable[[CreateTopicsResponse], None],
                      include_configs_and_metadata: set[str] | None = None) -> None:
        """Mirrors kafka.server.ZkAdminManager#createTopics.

        A topic in ``include_configs_and_metadata`` (None: every topic, for the broker's own
        requests) is answered with its partition count, replication factor and configs
        (ZkAdminManager#maybePopulateMetadataAndConfigs; KafkaApis passes the topics the
        principal may DESCRIBE_CONFIGS). With a timeout of 0 or less the written topics answer
        REQUEST_TIMED_OUT at once (nothing waits for their leaders); validate-only answers NONE.
        The values are range-checked at the broker's door (KafkaApis#handle: int32 partitions,
        int16 replication factor); AdminUtils#assignReplicasToBrokers refuses non-positive ones.
        ZooKeeper-era Kafka put no bound on how many partitions one request may create (it
        would build the whole assignment, however large); kafka_ref refuses a topic of more
        than MAX_PARTITIONS_PER_TOPIC partitions with POLICY_VIOLATION so a request cannot
        exhaust the process. The bound is the KRaft controller's record limit (10,000 records
        per user operation, KAFKA-14996), not a Kafka rule in this mode.
        """
        config = self.broker.config
        results: dict[str, CreatableTopicResult] = {}
        waiting: dict[str, Any] = {}
        for topic in request.topics:
            try:
                # 1. A topic this broker's metadata already has exists, whatever else the request
                #    says (checked before the counts are resolved); no null config values; then
                #    resolve the assignment: explicit, or assigned over the live brokers.
                if self.broker.metadata_cache.contains_topic(topic.name):
                    raise Errors.TOPIC_ALREADY_EXISTS.exception(f"Topic '{topic.name}' already exists.")
                null_configs = [c.name for c in topic.configs if c.value is None]
                if null_configs:
                    raise InvalidConfigurationException(
                        f"Null value not supported for topic configs: {','.join(null_configs)}")
                if topic.assignments:
                    if topic.num_partitions != -1 or topic.replication_factor != -1:
                        raise Errors.INVALID_REQUEST.exception(
                            "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
                    assignment = {a.partition_index: list(a.broker_ids) for a in topic.assignments}
                else:
                    n = topic.num_partitions if topic.num_partitions != -1 else config.get("num.partitions")
                    rf = topic.replication_factor if topic.replication_factor != -1 else config.get("default.replication.factor")
                    if n > MAX_PARTITIONS_PER_TOPIC:  # kafka_ref's guard (see the docstring)
                        raise Errors.POLICY_VIOLATION.exception(
                            f"kafka_ref refuses {n} partitions in one topic (more than {MAX_PARTITIONS_PER_TOPIC}); "
                            "ZooKeeper-mode Kafka has no such limit.")
                    from kafka_ref.zk.admin_zk_client import assign_replicas_to_brokers

                    cache = self.broker.metadata_cache
                    brokers = sorted(cache.alive_brokers) or self.admin_zk_client.zk_client.get_sorted_broker_list()
                    racks = cache.alive_broker_racks if cache.alive_brokers else self.admin_zk_client.get_broker_metadatas()
                    assignment = assign_replicas_to_brokers(brokers, n, rf, self.admin_zk_client.rng, racks=racks)
                configs = {c.name: c.value for c in topic.configs}
                # 2. Validate; write unless validate-only; metadata and configs where asked for.
                self.admin_zk_client.validate_topic_create(topic.name, assignment, configs)
                result = CreatableTopicResult(name=topic.name, error_message=None)
                if include_configs_and_metadata is None or topic.name in include_configs_and_metadata:
                    result = dataclasses.replace(result, num_partitions=len(assignment),
                                                 replication_factor=len(next(iter(assignment.values()))),
                                                 configs=self._topic_configs(configs))
                if request.validate_only:
                    results[topic.name] = result
                    continue
                topic_id = self.admin_zk_client.create_topic_with_assignment(topic.name, configs, assignment,
                                                                             uses_topic_id=config.uses_topic_id)
                # Kafka's populateIds: the id goes into the answer when the topic has one.
                if topic_id is not None and (include_configs_and_metadata is None
                                             or topic.name in include_configs_and_metadata):
                    result = dataclasses.replace(result, topic_id=topic_id)
                results[topic.name] = result
                waiting[topic.name] = len(assignment)
                self._log.info("topic_created_in_zk", topic=topic.name, assignment={p: r for p, r in assignment.items()})
            except ApiException as exc:
                results[topic.name] = CreatableTopicResult(name=topic.name, error_code=Errors.for_exception(exc).code,
                                                           error_message=str(exc))
            except RUN_ENDING:
                raise
            except AdminOperationException:  # some brokers have racks, some not: not an ApiException,
                # so ApiError#fromThrowable gives UNKNOWN_SERVER_ERROR without a message.
                results[topic.name] = CreatableTopicResult(name=topic.name, error_code=Errors.UNKNOWN_SERVER_ERROR.code,
                                                           error_message=None)
            except ConfigException as exc:  # as an InvalidConfigurationException with its text
                results[topic.name] = CreatableTopicResult(name=topic.name, error_code=Errors.INVALID_CONFIG.code,
                                                           error_message=str(exc))
            except Exception:  # ApiError#fromThrowable: UNKNOWN_SERVER_ERROR, no message
                results[topic.name] = CreatableTopicResult(name=topic.name, error_code=Errors.UNKNOWN_SERVER_ERROR.code,
                                                           error_message=None)

        def answer(pending: dict[str, Any], unfinished: set[str]) -> None:
            out = []
            for name, result in results.items():
                if name in unfinished:
                    out.append(dataclasses.replace(result, error_code=Errors.REQUEST_TIMED_OUT.code, error_message=None))
                else:
                    out.append(result)
            respond(CreateTopicsResponse(topics=tuple(out)))

        # 3. Answer now if nothing waits (a zero timeout: the written topics time out), else wait
        #    for leaders in the metadata cache.
        if not waiting or request.timeout_ms <= 0:
            answer({}, set(waiting))
            return
        op = DelayedTopicOperation(request.timeout_ms, waiting, lambda t: self._partitions_ready(t, waiting[t]), answer)
        self.topic_purgatory.try_complete_else_watch(op, list(waiting))

    def create_partitions(self, timeout_ms: int, new_partitions: list[CreatePartitionsTopic], validate_only: bool,
                          callback: Callable[[dict[str, tuple[Errors, str | None]]], None]) -> None:
        """Mirrors kafka.server.ZkAdminManager#createPartitions.

        1. Per topic: its current assignment (UNKNOWN_TOPIC_OR_PARTITION if none; a partition
        being reassigned refuses the change with REASSIGNMENT_IN_PROGRESS), the new count must
        be an increase, a given assignment must name registered brokers and one replica list per
        added partition; AdminZkClient places or validates the new partitions and, unless
        validate-only, writes the combined assignment. 2. With a non-positive timeout,
        validate-only or no success, answer at once (a written topic then answers
        REQUEST_TIMED_OUT, as Kafka does). 3. Otherwise wait in the topic purgatory until this
        broker's metadata cache shows a leader for every partition of the written topics.
        """
        all_brokers = self.admin_zk_client.zk_client.get_sorted_broker_list()
        results: dict[str, tuple[Errors, str | None]] = {}
        expected: dict[str, int] = {}
        for new_partition in new_partitions:
            topic = new_partition.name
            try:
                # 1. The current assignment.
                existing: dict[int, Any] = {}
                for tp, assignment in self.admin_zk_client.zk_client.get_full_replica_assignment_for_topics([topic]).items():
                    if assignment.adding_replicas or assignment.removing_replicas:
                        raise Errors.REASSIGNMENT_IN_PROGRESS.exception(
                            f"A partition reassignment is in progress for the topic '{topic}'.")
                    existing[tp.partition] = assignment
                if not existing:
                    raise Errors.UNKNOWN_TOPIC_OR_PARTITION.exception(f"The topic '{topic}' does not exist.")
                increment = new_partition.count - len(existing)
                if increment < 0:
                    raise Errors.INVALID_PARTITIONS.exception(
                        f"Topic currently has {len(existing)} partitions, which is higher than the requested "
                        f"{new_partition.count}.")
                if increment == 0:
                    raise Errors.INVALID_PARTITIONS.exception(f"Topic already has {len(existing)} partitions.")
                proposed = None
                if new_partition.assignments is not None:
                    lists = [list(a.broker_ids) for a in new_partition.assignments]
                    unknown = sorted({b for replicas in lists for b in replicas} - set(all_brokers))
                    if unknown:
                        raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                            f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
                    if len(lists) != increment:
                        raise Errors.INVALID_REPLICA_ASSIGNMENT.exception(
                            f"Increasing the number of partitions by {increment} but {len(lists)} assignments provided.")
                    proposed = {len(existing) + i: replicas for i, replicas in enumerate(lists)}
                new_assignment = self.admin_zk_client.create_new_partitions_assignment(
                    topic, existing, all_brokers, new_partition.count, proposed)
                if not validate_only:
                    self.admin_zk_client.create_partitions_with_assignment(topic, existing, new_assignment)
                    self._log.info("partitions_added_in_zk", topic=topic,
                                   assignment={p: list(a.replicas) for p, a in new_assignment.items()})
                    expected[topic] = new_partition.count
                results[topic] = (Errors.NONE, None)
            except ApiException as exc:
                results[topic] = (Errors.for_exception(exc), str(exc) or None)
        # 2. Nothing to wait for.
        if timeout_ms <= 0 or validate_only or not expected:
            callback({t: (Errors.REQUEST_TIMED_OUT, None) if t in expected else r for t, r in results.items()})
            return

        # 3. Wait until every written topic's partitions have leaders here.
        def answer(pending: dict[str, Any], unfinished: set[str]) -> None:
            callback({t: (Errors.REQUEST_TIMED_OUT, None) if t in unfinished else r for t, r in results.items()})

        op = DelayedTopicOperation(timeout_ms, expected, lambda t: self._partitions_ready(t, expected[t]), answer)
        self.topic_purgatory.try_complete_else_watch(op, list(expected))

    def delete_topics(self, timeout_ms: int, topics: list[str], callback: Callable[[dict[str, Errors]], None]) -> None:
        """Mirrors kafka.server.ZkAdminManager#deleteTopics: mark for deletion, wait until gone.

        1. Each topic is marked under /admin/delete_topics (one already marked counts as
        marked); 2. with a timeout of 0 or less, or nothing marked, answer at once (a marked
        topic REQUEST_TIMED_OUT); 3. otherwise wait in the topic purgatory until this broker's
        metadata cache no longer has the topics, or the timeout (REQUEST_TIMED_OUT).
        """
        # 1. Mark.
        results: dict[str, Errors] = {}
        for name in topics:
            try:
                self.admin_zk_client.delete_topic(name)
                results[name] = Errors.NONE
            except ApiException as exc:
                results[name] = Errors.for_exception(exc)
        waiting = {n: True for n, e in results.items() if e is Errors.NONE}

        def answer(pending: dict[str, Any], unfinished: set[str]) -> None:
            callback({n: Errors.REQUEST_TIMED_OUT if n in unfinished else e for n, e in results.items()})

        # 2. Nothing to wait for.
        if not waiting or timeout_ms <= 0:
            answer({}, set(waiting))
            return
        # 3. Wait until the topics are gone here.
        op = DelayedTopicOperation(timeout_ms, waiting, lambda t: not self.broker.metadata_cache.contains_topic(t), answer)
        self.topic_purgatory.try_complete_else_watch(op, list(waiting))

    def _topic_configs(self, overrides: dict[str, Any]) -> tuple[CreatableTopicConfigs, ...]:
        """ZkAdminManager#maybePopulateMetadataAndConfigs: every config of the new topic, its overrides as TOPIC_CONFIG."""
        from kafka_ref.common.config import LogConfig
        from kafka_ref.server.config_helper import describe_entries

        config = LogConfig.from_broker(self.broker.config, overrides)
        return tuple(CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only,
                                           config_source=int(e.config_source), is_sensitive=e.is_sensitive)
                     for e in describe_entries(config))

    def try_complete_delayed_topic_operations(self, topic: str) -> None:
        """Mirrors kafka.server.ZkAdminManager#tryCompleteDelayedTopicOperations."""
        self.topic_purgatory.check_and_complete(topic)


def new_admin_manager(broker: Any, rng: random.Random) -> ZkAdminManager:
    return ZkAdminManager(broker, AdminZkClient(broker.zk_client, rng, broker.config),
                          DelayedOperationPurgatory("topic", broker.timer, broker.broker_id))
