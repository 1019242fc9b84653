"""Scripted brokers for the client tests: the part Kafka's MockClient plays in its client unit tests.

``MockBrokers`` registers nodes on an in-process Network. A MetadataRequest is answered at once
from ``leaders`` (each partition led by the node given, with ``leader_epoch``); every other
request is recorded in ``received`` and then either answered with the next prepared response
(``prepare_response``: MockClient#prepareResponse(matcher, response, disconnected)) or, when none
is prepared, kept in ``pending`` until the test answers it (``respond``) or drops the connection
(``disconnect``). A prepared response whose matcher rejects the request is still sent, and the
request is kept in ``mismatches`` for the test's teardown to report. ``topic_errors`` adds topics
the metadata names with an error only; ``internal_topics`` are marked internal.

Used by test_sender_kafka.py (and through it test_transaction_manager_kafka.py), which answers
held requests by hand, and test_consumer_coordinator_kafka.py / test_abstract_coordinator_kafka.py,
which prepare their answers.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

import anyio.abc

from kafka_ref.common.requests.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from kafka_ref.common.topic_partition import TopicPartition
from kafka_ref.network.network import DisconnectException, Envelope, Network, serve_inbox


class MockBrokers:
    """Nodes that answer metadata themselves and everything else as the test scripts it."""

    def __init__(self, network: Network, leaders: dict[TopicPartition, int], nodes: tuple[int, ...] = (0,),
                 cluster_id: str = "mock") -> None:
        self.network = network
        self.leaders = leaders
        self.nodes = nodes
        self.cluster_id = cluster_id
        self.leader_epoch = 0
        # Topics the metadata names with an error and no partitions, and those it marks internal.
        self.topic_errors: dict[str, Any] = {}
        self.internal_topics: set[str] = set()
        self.prepared: deque[tuple[Callable[[Any], bool] | None, Any, bool]] = deque()
        self.received: list[Any] = []
        self.pending: list[Envelope] = []
        self.mismatches: list[Any] = []
        # With a clock set, the arrival time (ms) of every request in ``received``.
        self.time: Any = None
        self.arrivals: list[tuple[int, Any]] = []

    def serve(self, tg: anyio.abc.TaskGroup) -> None:
        """Register every node on the network and answer its inbox in ``tg``."""
        for node in self.nodes:
            tg.start_soon(serve_inbox, self.network.register(node), self.handle)

    def metadata_response(self) -> MetadataResponse:
        topics: dict[str, list[MetadataResponsePartition]] = {}
        for tp, leader in sorted(self.leaders.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
            topics.setdefault(tp.topic, []).append(MetadataResponsePartition(
                partition_index=tp.partition, leader_id=leader, leader_epoch=self.leader_epoch,
                replica_nodes=(leader,), isr_nodes=(leader,)))
        return MetadataResponse(
            brokers=tuple(MetadataResponseBroker(node_id=n, host="localhost", port=9092 + n) for n in self.nodes),
            cluster_id=self.cluster_id, controller_id=self.nodes[0],
            topics=tuple(MetadataResponseTopic(name=name, partitions=tuple(parts), is_internal=name in self.internal_topics)
                         for name, parts in topics.items())
            + tuple(MetadataResponseTopic(name=name, error_code=error.code) for name, error in sorted(self.topic_errors.items())))

    def prepare_response(self, response: Any, matcher: Callable[[Any], bool] | None = None,
                         disconnected: bool = False) -> None:
        """MockClient#prepareResponse(matcher, response, disconnected): the answer to the next request."""
        self.prepared.append((matcher, response, disconnected))

    def handle(self, envelope: Envelope) -> None:
        request = envelope.request
        if isinstance(request, MetadataRequest):
            envelope.respond(self.metadata_response())
            return
        self.received.append(request)
        if self.time is not None:
            self.arrivals.append((self.time.milliseconds(), request))
        if not self.prepared:
            self.pending.append(envelope)
            return
        matcher, response, disconnected = self.prepared.popleft()
        if matcher is not None and not matcher(request):
            self.mismatches.append(request)
        if disconnected:
            envelope.fail(DisconnectException(f"node {envelope.dst} disconnected"))
        else:
            envelope.respond(response)

    # -- what the test sees and does --------------------------------------------------------

    def sent(self) -> list[str]:
        """The type names of the requests received, in order."""
        return [type(r).__name__ for r in self.received]

    def arrival_times(self, kind: type) -> list[int]:
        return [ms for ms, request in self.arrivals if isinstance(request, kind)]

    def waiting(self, kind: type) -> list[Envelope]:
        """The unanswered requests of the kind, oldest first."""
        return [e for e in self.pending if isinstance(e.request, kind)]

    def respond(self, response: Any, kind: type) -> Envelope:
        """Answer the oldest pending request of the kind."""
        envelope = self.waiting(kind)[0]
        self.pending.remove(envelope)
        envelope.respond(response)
        return envelope

    def disconnect(self, node: int) -> None:
        """Drop the connection: every pending request to ``node`` fails."""
        for envelope in [e for e in self.pending if e.dst == node]:
            self.pending.remove(envelope)
            envelope.fail(DisconnectException(f"node {node} disconnected"))
