"""Ports of Kafka 3.8.0 ConsumerMetadataTest against kafka_ref.clients.client_metadata.ConsumerMetadata.

clients/src/test/java/org/apache/kafka/clients/consumer/internals/ConsumerMetadataTest.java builds a
ConsumerMetadata (retry.backoff.ms 50, metadata.max.age.ms 50000) over a SubscriptionState and reads
the request it builds and the topics a response leaves in its cluster. Node 0 is Kafka's
``new Node(1, "localhost", 9092)`` renumbered; every partition has leader epoch 5.

Not ported:
- testUserAssignment, testNormalSubscription: the topics a non-pattern consumer asks for are
  kept by ConsumerMetadata itself (``topics``: subscribed, assigned or looked-up topics, added by
  the consumer and its coordinator), not read from SubscriptionState#metadataTopics.
- testTransientTopics: no transient topics (ConsumerMetadata#addTransientTopics); offset lookups add
  their topics to ``topics`` for good.
"""

from __future__ import annotations

import re

import pytest

from kafka_ref.clients.client_metadata import ConsumerMetadata
from kafka_ref.clients.subscription_state import SubscriptionState
from kafka_ref.common.requests.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

NODE = 0


def topic_metadata(topic: str, is_internal: bool) -> MetadataResponseTopic:
    """ConsumerMetadataTest#topicMetadata: one partition led by the node, epoch 5."""
    return MetadataResponseTopic(name=topic, is_internal=is_internal, partitions=(MetadataResponsePartition(
        partition_index=0, leader_id=NODE, leader_epoch=5, replica_nodes=(NODE,), isr_nodes=(NODE,),
        offline_replicas=(NODE,)),))


def new_consumer_metadata(subscriptions: SubscriptionState, include_internal_topics: bool) -> ConsumerMetadata:
    """ConsumerMetadataTest#newConsumerMetadata (allow.auto.create.topics false)."""
    return ConsumerMetadata(50, 50000, refresh_backoff_max_ms=50, topics=(), allow_auto_topic_creation=False,
                            subscriptions=subscriptions, include_internal_topics=include_internal_topics)


@pytest.mark.parametrize("include_internal_topics", [False, True])
def test_pattern_subscription(include_internal_topics: bool) -> None:
    """Mirrors ConsumerMetadataTest#testPatternSubscriptionNoInternalTopics (False) and
    #testPatternSubscriptionIncludeInternalTopics (True): a pattern asks for every topic and keeps
    those it matches, the internal ones only when included."""
    subscriptions = SubscriptionState("latest")
    subscriptions.subscribe_pattern(re.compile("__.*"))
    metadata = new_consumer_metadata(subscriptions, include_internal_topics)
    assert metadata.new_metadata_request_and_version(0).request.is_all_topics()
    response = MetadataResponse(
        brokers=(MetadataResponseBroker(node_id=NODE, host="localhost", port=9092),), cluster_id="clusterId",
        controller_id=NODE, topics=(topic_metadata("__consumer_offsets", True), topic_metadata("__matching_topic", False),
                                    topic_metadata("non_matching_topic", False)))
    metadata.update_with_current_request_version(response, 0)
    expected = {"__matching_topic", "__consumer_offsets"} if include_internal_topics else {"__matching_topic"}
    assert metadata.fetch().topics() == expected
