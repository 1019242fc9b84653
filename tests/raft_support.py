"""Test doubles for the Raft client: a recording network channel, an envelope, a listener (RaftClientTestContext's role)."""

from __future__ import annotations

import random
from typing import Any

from kafka_ref.common.time import MockTime
from kafka_ref.image.records import FeatureLevelRecord
from kafka_ref.raft.kafka_raft_client import KafkaRaftClient
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumStateStore
from kafka_ref.raft.replicated_log import MetadataLog

CLUSTER = "test-cluster"
RECORD = FeatureLevelRecord(name="metadata.version", feature_level=20)


class MockChannel:
    """Mirrors MockNetworkChannel: requests are recorded; the test answers them."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, int, Any]] = []

    def start(self, task_group: Any, on_response: Any) -> None:
        """Nothing to start: the test calls handle_response itself."""

    def stop(self) -> None:
        """Nothing to stop."""

    def send(self, destination: int, correlation_id: int, request: Any) -> None:
        self.sent.append((destination, correlation_id, request))

    def drain(self, request_type: type | None = None) -> list[tuple[int, int, Any]]:
        """Take the sent requests (of one type), oldest first."""
        taken = [s for s in self.sent if request_type is None or isinstance(s[2], request_type)]
        self.sent = [s for s in self.sent if s not in taken]
        return taken


class Envelope:
    """Just enough of network.Envelope for an inbound request."""

    def __init__(self, request: Any) -> None:
        self.request = request
        self.response: Any = None

    def respond(self, response: Any) -> None:
        self.response = response


class RecordingListener:
    """A RaftClient.Listener that records what it hears."""

    def __init__(self) -> None:
        self.commits: list[tuple[int, int]] = []  # (base offset, last offset) per batch
        self.leader_changes: list[tuple[int, int]] = []

    def handle_commit(self, reader: Any) -> None:
        for batch in reader:
            pass
        self.commits.extend((b.base_offset, b.last_offset) for b in reader._batches)

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        self.leader_changes.append((leader_id, epoch))


def client(local_id: int = 1, voters: tuple[int, ...] = (1, 2, 3), *, store: QuorumStateStore | None = None,
           log: MetadataLog | None = None, seed: int = 0, time: MockTime | None = None, initialize: bool = True,
           config: QuorumConfig | None = None):
    """A KafkaRaftClient on MockTime with a MockChannel and a RecordingListener."""
    time = time or MockTime()
    channel = MockChannel()
    # (Linger 0, as RaftClientTestContext's default: an append is written on the next poll.)
    raft = KafkaRaftClient(local_id, voters, time, log=log, store=store, channel=channel, rng=random.Random(seed),
                           cluster_id=CLUSTER, config=config or QuorumConfig(append_linger_ms=0))
    listener = RecordingListener()
    raft.register(listener)
    if initialize:
        raft.initialize()
    return raft, time, channel, listener


def elect_local_leader(raft: KafkaRaftClient, time: MockTime, channel: MockChannel) -> None:
    """Run the local voter's election: its timeout expires, one other voter grants the vote."""
    from kafka_ref.common.requests.vote import VoteRequest, VoteResponse

    time.advance(2000)
    raft.poll()
    assert raft.quorum.is_candidate()
    raft.poll()
    votes = channel.drain(VoteRequest)
    destination, correlation, _request = votes[0]
    raft.handle_response(destination, correlation, votes[0][2],
                         VoteResponse(leader_epoch=raft.epoch, vote_granted=True))
    assert raft.quorum.is_leader()
    # The leader's next poll writes its LeaderChangeMessage (the accumulator drains at once).
    raft.poll()
