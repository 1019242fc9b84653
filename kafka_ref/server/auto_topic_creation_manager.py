"""Creating a topic because a client asked for its metadata (auto.create.topics.enable).

Mirrors kafka.server.DefaultAutoTopicCreationManager (Kafka 3.7). KafkaApis#handleTopicMetadataRequest
hands it the names a Metadata request asked for that the broker does not know, when the request
allows auto-creation and the broker's ``auto.create.topics.enable`` is on (Kafka's default). It
answers at once with a MetadataResponseTopic per name and never waits for the topic:

- ZooKeeper mode: the broker writes the topic to ZooKeeper itself through its admin manager with
  a zero timeout (the controller then elects leaders); a written topic answers
  LEADER_NOT_AVAILABLE, so the client asks again shortly.
- KRaft mode: the broker sends a CreateTopics request to the active controller (the forwarding
  channel) and answers UNKNOWN_TOPIC_OR_PARTITION until the topic reaches its metadata.

New topics get ``num.partitions`` partitions and ``default.replication.factor`` replicas; the
group coordinator's topic gets its own settings. Manual mode (no controller) creates nothing.
"""

from __future__ import annotations

from typing import Any

import structlog

from kafka_ref.common.errors import Errors, InvalidTopicException
from kafka_ref.common.requests.create_topics import CreatableTopic, CreateableTopicConfig, CreateTopicsRequest
from kafka_ref.common.requests.metadata import MetadataResponseTopic
from kafka_ref.server.metadata_cache import INTERNAL_TOPICS
from kafka_ref.zk.admin_zk_client import validate_topic_name

log = structlog.get_logger("kafka_ref.server.auto_topic_creation_manager")

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"


def _topic_response(error: Errors, topic: str) -> MetadataResponseTopic:
    return MetadataResponseTopic(error_code=error.code, name=topic, is_internal=topic in INTERNAL_TOPICS)


class DefaultAutoTopicCreationManager:
    """Mirrors kafka.server.DefaultAutoTopicCreationManager."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        # Mirrors inflightTopics: names whose creation this broker has started and not yet seen
        # answered (a second Metadata request meanwhile does not ask again).
        self.inflight_topics: set[str] = set()

    def create_topics(self, topics: list[str]) -> list[MetadataResponseTopic]:
        """Mirrors DefaultAutoTopicCreationManager#createTopics.

        1. Sort the names into creatable ones and ones answered at once (an invalid name, or one
        already being created); 2. create the rest, in ZooKeeper here or through the controller;
        3. the answers, uncreatable names first.
        """
        # 1. Validate and mark in flight.
        creatable, uncreatable = self.filter_creatable_topics(topics)
        # 2. Create, the way this broker's mode does it.
        if not creatable:
            created: list[MetadataResponseTopic] = []
        elif self._in_zk_mode():
            created = self.create_topics_in_zk(creatable)
        else:
            created = self.send_create_topic_request(creatable)
        # 3. Both kinds of answer.
        return uncreatable + created

    def _in_zk_mode(self) -> bool:
        # A ZooKeeper-mode broker has a controller of its own (active or not) and writes the
        # topic itself; a KRaft broker's admin manager is its forwarding channel.
        return getattr(self.broker, "controller", None) is not None and hasattr(self.broker.admin_manager, "admin_zk_client")

    def create_topics_in_zk(self, creatable: dict[str, CreatableTopic]) -> list[MetadataResponseTopic]:
        """Mirrors DefaultAutoTopicCreationManager#createTopicsInZk.

        1. The admin manager writes the topics with a zero timeout, so it answers before any
        leader exists; 2. a written topic (REQUEST_TIMED_OUT: not waited for) or one another
        broker wrote first (TOPIC_ALREADY_EXISTS) answers LEADER_NOT_AVAILABLE, any other error
        as it is; no answer at all is UNKNOWN_TOPIC_OR_PARTITION; 3. the names leave the
        in-flight set either way.
        """
        answers: dict[str, Errors] = {}

        def on_response(response: Any) -> None:
            for result in response.topics:
                answers[result.name] = Errors.for_code(result.error_code)

        try:
            # 1. Write now, answer now.
            request = CreateTopicsRequest(timeout_ms=0, topics=tuple(creatable.values()))
            self.broker.admin_manager.create_topics(request, on_response)
            # 2. What each name answers.
            out = []
            for topic in creatable:
                error = answers.get(topic, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                if error in (Errors.NONE, Errors.TOPIC_ALREADY_EXISTS, Errors.REQUEST_TIMED_OUT):
                    error = Errors.LEADER_NOT_AVAILABLE
                out.append(_topic_response(error, topic))
            log.info("auto_topic_creation", broker=self.broker.broker_id, mode="zk",
                     topics={t: answers.get(t, Errors.UNKNOWN_TOPIC_OR_PARTITION).name for t in creatable})
            return out
        finally:
            # 3. Done, whatever happened.
            self.clear_inflight_requests(creatable)

    def send_create_topic_request(self, creatable: dict[str, CreatableTopic]) -> list[MetadataResponseTopic]:
        """Mirrors DefaultAutoTopicCreationManager#sendCreateTopicRequest.

        1. One CreateTopics request (timeout ``request.timeout.ms``) goes to the active
        controller; its answer, or its timeout, only clears the in-flight names; 2. meanwhile
        every name answers UNKNOWN_TOPIC_OR_PARTITION.
        """
        # 1. To the controller.
        request = CreateTopicsRequest(timeout_ms=self.broker.config.get("request.timeout.ms"),
                                      topics=tuple(creatable.values()))

        def on_complete(response: Any) -> None:
            self.clear_inflight_requests(creatable)
            log.info("auto_topic_creation", broker=self.broker.broker_id, mode="kraft",
                     topics={r.name: Errors.for_code(r.error_code).name for r in response.topics})

        self.broker.admin_manager.create_topics(request, on_complete)
        # 2. Not there yet.
        return [_topic_response(Errors.UNKNOWN_TOPIC_OR_PARTITION, topic) for topic in creatable]

    def clear_inflight_requests(self, creatable: dict[str, CreatableTopic]) -> None:
        """Mirrors DefaultAutoTopicCreationManager#clearInflightRequests."""
        for topic in creatable:
            self.inflight_topics.discard(topic)

    def creatable_topic(self, topic: str) -> CreatableTopic:
        """Mirrors DefaultAutoTopicCreationManager#creatableTopic.

        The group coordinator's topic has its partitions, replication factor and configs
        (compacted); any other topic the broker defaults. (No transaction coordinator here, so
        ``__transaction_state`` takes the defaults too.)
        """
        config = self.broker.config
        if topic == GROUP_METADATA_TOPIC_NAME:
            group_manager = self.broker.group_coordinator.group_manager
            configs = (
                CreateableTopicConfig(name="cleanup.policy", value="compact"),
                CreateableTopicConfig(name="segment.bytes", value=str(group_manager.config.offsets_topic_segment_bytes)),
                CreateableTopicConfig(name="compression.type", value="producer"),
            )
            return CreatableTopic(name=topic, num_partitions=config.get("offsets.topic.num.partitions"),
                                  replication_factor=config.get("offsets.topic.replication.factor"), configs=configs)
        return CreatableTopic(name=topic, num_partitions=config.get("num.partitions"),
                              replication_factor=config.get("default.replication.factor"))

    def filter_creatable_topics(self, topics: list[str]) -> tuple[dict[str, CreatableTopic], list[MetadataResponseTopic]]:
        """Mirrors DefaultAutoTopicCreationManager#filterCreatableTopics.

        An invalid name answers INVALID_TOPIC_EXCEPTION; one already in flight
        UNKNOWN_TOPIC_OR_PARTITION; the others are marked in flight and will be created.
        """
        creatable: dict[str, CreatableTopic] = {}
        uncreatable: list[MetadataResponseTopic] = []
        for topic in topics:
            try:
                validate_topic_name(topic)
            except InvalidTopicException:
                uncreatable.append(_topic_response(Errors.INVALID_TOPIC_EXCEPTION, topic))
                continue
            if topic in self.inflight_topics:
                uncreatable.append(_topic_response(Errors.UNKNOWN_TOPIC_OR_PARTITION, topic))
                continue
            self.inflight_topics.add(topic)
            creatable[topic] = self.creatable_topic(topic)
        return creatable, uncreatable
