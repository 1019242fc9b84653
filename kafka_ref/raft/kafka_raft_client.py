"""KRaft's Raft client: elections and replication of the ``__cluster_metadata`` log (KIP-595).

Mirrors org.apache.kafka.raft.KafkaRaftClient for voters and observers (Kafka 3.8 with a static
voter set; the voter-set check on Vote/BeginQuorumEpoch/EndQuorumEpoch is still 3.7's, since 3.8
dropped it only to prepare KIP-853's dynamic voters):

- every controller node is a **voter**: it starts Unattached, becomes a Candidate when its
  randomized election timeout expires, asks the other voters for votes (Vote), and as
  **leader** appends a LeaderChangeMessage, tells the voters (BeginQuorumEpoch), answers their
  Fetch requests (with a diverging epoch when a follower's log went its own way) and moves the
  high watermark to the largest offset a majority holds. A follower that hears nothing from
  its leader for ``quorum.fetch.timeout.ms`` stands for election; a leader that a majority has
  not fetched from for 1.5 times that resigns (check quorum) and tells the voters
  (EndQuorumEpoch);
- every broker is an **observer**: it fetches from the leader (or any voter, when it does not
  know the leader or the leader does not answer: the answer names the leader), never votes, and
  hands committed batches to its listeners (BrokerMetadataListener#handleCommit, seed 004 §2.1 step 1).

``shutdown`` starts a graceful shutdown (a leader resigns first and tells its successors);
``resign`` gives up the leadership at the next poll.

The request and response handlers (Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum and the
leader's Fetch path with its purgatory) are the mixin KafkaRaftClientHandlers in
kafka_ref/raft/kafka_raft_handlers.py.

As in Kafka, the client is a poll loop: ``poll`` does whatever the current state's timers ask
and returns how long it may sleep; requests and responses are handled as they arrive and wake
the loop. Listeners hear commits up to the high watermark, and the local leader's own
leadership only once they have read past the start of its epoch (its LeaderChangeMessage committed).
"""

from __future__ import annotations

import random
from typing import Any, Iterable

import anyio

from kafka_ref.common.errors import Errors, IllegalStateException
from kafka_ref.common.requests.begin_quorum_epoch import BeginQuorumEpochRequest
from kafka_ref.common.requests.end_quorum_epoch import EndQuorumEpochRequest
from kafka_ref.common.requests.metadata_fetch import FETCH_MAX_WAIT_MS, MetadataFetchRequest
from kafka_ref.common.requests.vote import VoteRequest
from kafka_ref.common.state_change import state_change_logger
from kafka_ref.common.time import Time
from kafka_ref.image.records import MetadataRecord
from kafka_ref.raft.batch_accumulator import BatchAccumulator, CompletedBatch
from kafka_ref.raft.epoch_states import NO_TIMEOUT, CandidateState, FollowerState, ResignedState, UnattachedState, VotedState
from kafka_ref.raft.kafka_raft_handlers import KafkaRaftClientHandlers, _ParkedFetch
from kafka_ref.raft.leader_state import LeaderState
from kafka_ref.raft.network_channel import NetworkChannel
from kafka_ref.raft.quorum_state import QuorumConfig, QuorumState, QuorumStateStore
from kafka_ref.raft.raft_client import ListenerContext, NotLeaderException, RaftListener
from kafka_ref.raft.replicated_log import MetadataLog
from kafka_ref.raft.request_manager import RequestManager

# The quorum.* client defaults (RaftConfig) and KafkaRaftClient's constants.
QUORUM_REQUEST_TIMEOUT_MS = 2000
QUORUM_RETRY_BACKOFF_MS = 20
RETRY_BACKOFF_BASE_MS = 100


class GracefulShutdown:
    """Mirrors org.apache.kafka.raft.KafkaRaftClient.GracefulShutdown: a deadline and how the shutdown ended.

    ``error`` is None after a completed shutdown and a TimeoutError when the deadline passed
    first (Kafka completes its future exceptionally with a TimeoutException).
    """

    def __init__(self, time: Time, timeout_ms: float) -> None:
        self.time = time
        self.deadline_ms = time.milliseconds() + timeout_ms
        self.finished = False
        self.error: BaseException | None = None

    def remaining_ms(self) -> float:
        return max(0.0, self.deadline_ms - self.time.milliseconds())

    def has_timed_out(self) -> bool:
        return self.time.milliseconds() >= self.deadline_ms

    def is_finished(self) -> bool:
        return self.finished

    def fail_with_timeout(self) -> None:
        self.finished = True
        self.error = TimeoutError("Timeout expired before graceful shutdown completed")

    def complete(self) -> None:
        self.finished = True


class KafkaRaftClient(KafkaRaftClientHandlers):
    """Mirrors org.apache.kafka.raft.KafkaRaftClient: one node of the metadata quorum (voter or observer)."""

    def __init__(self, node_id: int, voters: Iterable[int], time: Time, log: MetadataLog | None = None,
                 store: QuorumStateStore | None = None, channel: NetworkChannel | None = None,
                 rng: random.Random | None = None, config: QuorumConfig | None = None, cluster_id: str = "") -> None:
        self.node_id = node_id
        self.time = time
        self.log = log if log is not None else MetadataLog()
        self.store = store if store is not None else QuorumStateStore()
        self.channel = channel
        self.rng = rng or random.Random(node_id)
        self.config = config or QuorumConfig()
        self.cluster_id = cluster_id
        self.quorum = QuorumState(node_id, voters, self.config, self.store, time, self.rng)
        # KafkaRaftClient#initialize: without controller.quorum.bootstrap.servers the voters are the bootstrap list.
        self.request_manager = RequestManager(time, self.config.retry_backoff_ms, self.config.request_timeout_ms,
                                              sorted(self.quorum.voters), self.rng)
        self.listeners: list[ListenerContext] = []
        self.fetch_purgatory: list[_ParkedFetch] = []
        self.initialized = False
        self.fetches_sent = 0
        self._correlation = 0
        self._wakeup: anyio.Event | None = None
        self._running = False
        self.graceful_shutdown: GracefulShutdown | None = None
        role = "controller_id" if self.quorum.is_voter() else "broker_id"
        self._log = state_change_logger(**{role: node_id})

    # ------------------------------------------------------------------ reads

    @property
    def voters(self) -> frozenset[int]:
        return self.quorum.voters

    @property
    def epoch(self) -> int:
        return self.quorum.epoch

    @property
    def leader_id(self) -> int:
        return self.quorum.leader_id()

    @property
    def leader_epoch(self) -> int:
        return self.quorum.epoch

    @property
    def high_watermark(self) -> int:
        """Mirrors RaftClient#highWatermark (the log's, which a restarted node keeps)."""
        return self.log.high_watermark

    def leader_and_epoch(self) -> tuple[int, int]:
        """Mirrors RaftClient#leaderAndEpoch."""
        return self.quorum.leader_and_epoch()

    def is_leader(self) -> bool:
        return self.quorum.is_leader()

    # ------------------------------------------------------------------ life cycle

    def initialize(self) -> None:
        """Mirrors KafkaRaftClient#initialize: restore the quorum state; a lone voter elects itself at once."""
        self.initialized = True
        self.quorum.initialize(self.log.last_fetched_epoch)
        self._log.info("raft_initialized", state=self.quorum.state.name, epoch=self.epoch,
                       log_end_offset=self.log.end_offset, high_watermark=self.log.high_watermark)
        if self.quorum.is_voter() and self.quorum.is_only_voter() and not self.quorum.is_candidate():
            self.transition_to_candidate()
        elif self.quorum.is_candidate():
            self._on_become_candidate()
        self._poll_listeners()

    def register(self, listener: RaftListener) -> None:
        """Mirrors KafkaRaftClient#register: the listener will hear every commit from offset 0, then the leader."""
        self.listeners.append(ListenerContext(listener))

    def unregister(self, listener: RaftListener) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#unregister: the listener hears nothing more.

        Kafka queues (un)registrations for the next pollListeners; kafka_ref's register takes
        effect at once, and so does this. A listener never registered is ignored (Kafka logs it).
        """
        self.listeners = [context for context in self.listeners if context.listener is not listener]

    async def run(self, *, task_status: anyio.abc.TaskStatus = anyio.TASK_STATUS_IGNORED) -> None:
        """The Raft thread: poll, sleep until the next timer or a wake-up, repeat (KafkaRaftClient#poll)."""
        if not self.initialized:
            self.initialize()
        async with anyio.create_task_group() as tg:
            if self.channel is not None:
                self.channel.start(tg, self.handle_response)
            self._running = True
            task_status.started(self)
            try:
                while self.is_running():
                    timeout_ms = self.poll()
                    self._wakeup = anyio.Event()
                    if timeout_ms > 0:
                        with anyio.move_on_after(min(timeout_ms, 3_600_000) / 1000):
                            await self._wakeup.wait()
                    else:
                        await anyio.sleep(0)
            finally:
                self._running = False
                if self.channel is not None:
                    self.channel.stop()

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    # ------------------------------------------------------------------ appends (leader)

    def schedule_atomic_append(self, epoch: int, records: Iterable[MetadataRecord],
                               required_base_offset: int | None = None) -> int:
        """Mirrors KafkaRaftClient#scheduleAtomicAppend (#append); returns the offset of the batch's last record.

        1. only an initialized leader appends; 2. the records go into the epoch's accumulator,
        which checks the epoch and the required base offset and gives them their offsets now;
        3. the Raft thread is woken on the first waiting append (so that it arms the linger
        timer) or when a drain is due. The write reaches the log when the accumulator drains
        (maybe_append_batches), ``controller.quorum.append.linger.ms`` later.
        """
        # 1. The leader.
        state = self.quorum.state
        if not self.initialized or not isinstance(state, LeaderState):
            raise NotLeaderException(f"Append at epoch {epoch}, but node {self.node_id} is {self.quorum.state!r}")
        accumulator = state.accumulator
        assert accumulator is not None
        # 2. Into the accumulator.
        is_first_append = accumulator.is_empty()
        offset = accumulator.append(epoch, records, required_base_offset, is_atomic=True)
        # 3. Wake the Raft thread.
        if is_first_append or accumulator.needs_drain(self.time.milliseconds()):
            self._wake()
        return offset

    def _maybe_append_batches(self, state: LeaderState) -> float:
        """Mirrors KafkaRaftClient#maybeAppendBatches: when the linger time is up, write what waited; ms until then.

        1. drain the accumulator's finished batches; 2. append each to the log; 3. flush: the
        leader's end offset moves (and with it maybe the HW), parked fetches see the new data.
        """
        accumulator = state.accumulator
        assert accumulator is not None
        time_until_drain = accumulator.time_until_drain(self.time.milliseconds())
        if time_until_drain <= 0:
            # 1. The batches.
            batches = accumulator.drain()
            # 2. Into the log.
            for batch in batches:
                self._append_batch(state, batch)
            # 3. Flush.
            self._flush_leader_log(state)
            self._complete_parked_fetches()
        return time_until_drain

    def _append_batch(self, state: LeaderState, batch: CompletedBatch) -> None:
        """Mirrors KafkaRaftClient#appendBatch: one finished batch at the log end, in the leader's epoch."""
        if batch.control_records:
            self.log.append_leader_change(batch.control_records[0], state.epoch, batch.append_timestamp)
        else:
            self.log.append_as_leader(batch.records, state.epoch, batch.append_timestamp)

    def _flush_leader_log(self, state: LeaderState) -> None:
        """Mirrors KafkaRaftClient#flushLeaderLog: the leader's flushed end counts towards the majority."""
        if state.update_local_state(self.log.end_offset):
            self._on_update_leader_high_watermark(state)

    def _on_update_leader_high_watermark(self, state: LeaderState) -> None:
        """Mirrors KafkaRaftClient#onUpdateLeaderHighWatermark: the log's HW, listeners, parked fetches."""
        high_watermark = state.high_watermark()
        if high_watermark is None:
            return
        self.log.update_high_watermark(high_watermark)
        self._update_listeners_progress()
        self._complete_parked_fetches()

    def resign(self, epoch: int) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#resign: the leader of ``epoch`` gives it up at the next poll.

        1. a negative epoch, an uninitialized client or an observer is the caller's mistake;
        2. an epoch above ours is a ValueError (IllegalArgumentException), one below it is already
        fulfilled; 3. in our epoch we must be its elected leader (ValueError otherwise); 4. a
        node that already resigned it ignores the call; else the leader resigns at the next poll.
        """
        # 1. Preconditions.
        if epoch < 0:
            raise ValueError(f"Attempt to resign from an invalid negative epoch {epoch}")
        if not self.initialized:
            raise IllegalStateException("Replica needs to be initialized before resigning")
        if not self.quorum.is_voter():
            raise IllegalStateException("Attempt to resign by a non-voter")
        leader_id, current_epoch = self.leader_and_epoch()
        # 2. Other epochs.
        if epoch > current_epoch:
            raise ValueError(f"Attempt to resign from epoch {epoch} which is larger than the current epoch {current_epoch}")
        if epoch < current_epoch:
            return
        # 3. Our own epoch only.
        if leader_id != self.node_id:
            raise ValueError(f"Cannot resign from epoch {epoch} since we are not the leader")
        # 4. Still leading it (a Resigned node has nothing left to do).
        state = self.quorum.state
        if isinstance(state, LeaderState) and state.epoch == epoch:
            self._log.info("raft_resign_requested", epoch=epoch)
            state.request_resign()
            self._wake()

    def shutdown(self, timeout_ms: float) -> "GracefulShutdown":
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#shutdown: begin a graceful shutdown; the next polls finish it.

        A leader resigns first (EndQuorumEpoch to its successors) and a candidate keeps its
        election going; the shutdown completes once another node leads (or we are an observer or
        the only voter), and fails when ``timeout_ms`` passes first.
        """
        self._log.info("raft_graceful_shutdown", timeout_ms=timeout_ms)
        self.graceful_shutdown = GracefulShutdown(self.time, timeout_ms)
        self._wake()
        return self.graceful_shutdown

    def is_running(self) -> bool:
        """Mirrors KafkaRaftClient#isRunning: no shutdown, or one not finished yet."""
        return self.graceful_shutdown is None or not self.graceful_shutdown.is_finished()

    def is_shutting_down(self) -> bool:
        """Mirrors KafkaRaftClient#isShuttingDown."""
        return self.graceful_shutdown is not None and not self.graceful_shutdown.is_finished()

    def _maybe_complete_shutdown(self) -> bool:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#maybeCompleteShutdown: True once the shutdown is over.

        1. the timer ran out: the shutdown fails; 2. an observer, the only voter, or a node that
        follows another leader may go: the shutdown completes.
        """
        shutdown = self.graceful_shutdown
        if shutdown is None:
            return False
        # 1. Out of time.
        if shutdown.has_timed_out():
            shutdown.fail_with_timeout()
            return True
        # 2. Nothing left that needs us.
        if self.quorum.is_observer() or self.quorum.is_only_voter() or self.quorum.has_remote_leader():
            shutdown.complete()
            return True
        return False

    # ------------------------------------------------------------------ poll

    def poll(self) -> float:
        """Mirrors KafkaRaftClient#poll → pollCurrentState: act on the state's timers; ms until the next poll.

        A graceful shutdown that is over (maybeCompleteShutdown) ends the polling.
        """
        if self._maybe_complete_shutdown():
            return NO_TIMEOUT
        state = self.quorum.state
        if isinstance(state, LeaderState):
            timeout = self._poll_leader(state)
        elif isinstance(state, CandidateState):
            timeout = self._poll_candidate(state)
        elif isinstance(state, FollowerState):
            timeout = self._poll_follower(state)
        elif isinstance(state, VotedState):
            timeout = self._poll_voted(state)
        elif isinstance(state, UnattachedState):
            timeout = self._poll_unattached(state)
        elif isinstance(state, ResignedState):
            timeout = self._poll_resigned(state)
        else:  # pragma: no cover - every EpochState is listed above
            raise RuntimeError(f"Unexpected state {state!r}")
        timeout = min(timeout, self._expire_parked_fetches())
        self._poll_listeners()
        return timeout

    def _poll_leader(self, state: LeaderState) -> float:
        """Mirrors KafkaRaftClient#pollLeader: resign on request or lost quorum; else write what lingered, BeginQuorumEpoch to the silent voters."""
        self._poll_listeners()
        check_quorum_ms = state.time_until_check_quorum_expires()
        if self.graceful_shutdown is not None or state.resign_requested or check_quorum_ms == 0:
            self._log.info("raft_leader_resigning", epoch=state.epoch, check_quorum_expired=check_quorum_ms == 0)
            self.transition_to_resigned(state.non_leader_voters_by_descending_fetch_offset())
            return 0
        flush_ms = self._maybe_append_batches(state)
        send_ms = self._maybe_send_requests(state.non_acknowledging_voters(), self._build_begin_quorum_epoch_request)
        return min(flush_ms, send_ms, check_quorum_ms)

    def _poll_candidate(self, state: CandidateState) -> float:
        """Mirrors KafkaRaftClient#pollCandidate: back off after a lost election, else ask for the missing votes.

        While shutting down the election goes on (no backoff, no new epoch) until it is won, another
        leader appears, or the shutdown times out.
        """
        if self.graceful_shutdown is not None:
            send_ms = self._maybe_send_vote_requests(state)
            return min(self.graceful_shutdown.remaining_ms(), send_ms)
        if state.is_backing_off():
            if state.is_backoff_complete():
                self._log.info("raft_election_retry", epoch=state.epoch)
                self.transition_to_candidate()
                return 0
            return state.remaining_backoff_ms()
        if state.has_election_timeout_expired():
            backoff_ms = self._binary_exponential_election_backoff_ms(state.retries)
            self._log.info("raft_election_timed_out", epoch=state.epoch, backoff_ms=backoff_ms)
            state.start_backing_off(backoff_ms)
            return backoff_ms
        send_ms = self._maybe_send_vote_requests(state)
        return min(send_ms, state.remaining_election_ms())

    def _maybe_send_vote_requests(self, state: CandidateState) -> float:
        """Mirrors KafkaRaftClient#maybeSendVoteRequests: ask the voters still silent, while the election can be won."""
        if state.is_vote_rejected():
            return NO_TIMEOUT
        return self._maybe_send_requests(state.unrecorded_voters(), self._build_vote_request)

    def _poll_follower(self, state: FollowerState) -> float:
        """Mirrors KafkaRaftClient#pollFollower (pollFollowerAsVoter, pollFollowerAsObserver)."""
        if self.quorum.is_voter():
            # A shutting-down follower may go at once (maybeCompleteShutdown sees the remote leader).
            if self.graceful_shutdown is not None:
                return 0
            # A voter that lost its leader stands for election.
            if state.has_fetch_timeout_expired():
                self._log.info("raft_fetch_timeout", epoch=state.epoch, leader_id=state.leader_id)
                self.transition_to_candidate()
                return 0
            return min(self._maybe_send_fetch(state.leader_id), state.remaining_fetch_ms())
        return self._poll_follower_as_observer(state)

    def _poll_follower_as_observer(self, state: FollowerState) -> float:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#pollFollowerAsObserver.

        1. no answer from the leader for a fetch timeout: ask any voter who leads now; 2. the
        fetch to the leader timed out (forget it) or the leader's connection is backing off:
        ask any voter; 3. nothing in flight: fetch from the leader; 4. else wait for the
        request in flight.
        """
        # 1. The leader went quiet.
        if state.has_fetch_timeout_expired():
            return self._maybe_send_any_voter_fetch()
        manager = self.request_manager
        leader_id = state.leader_id
        # 2. The leader is not answering.
        if manager.has_request_timed_out(leader_id):
            manager.reset(leader_id)
            backoff_ms = self._maybe_send_any_voter_fetch()
        elif manager.is_backing_off(leader_id):
            backoff_ms = self._maybe_send_any_voter_fetch()
        # 3. Fetch from the leader.
        elif not manager.has_any_inflight_request():
            backoff_ms = self._maybe_send_request(leader_id, lambda _d: self._build_fetch_request())
        # 4. A request is in flight.
        else:
            backoff_ms = manager.backoff_before_available_bootstrap_server()
        return min(backoff_ms, state.remaining_fetch_ms())

    def _poll_voted(self, state: VotedState) -> float:
        """Mirrors KafkaRaftClient#pollVoted: while shutting down, wait for the shutdown or a new epoch."""
        if self.graceful_shutdown is not None:
            return self.graceful_shutdown.remaining_ms()
        if state.has_election_timeout_expired():
            self.transition_to_candidate()
            return 0
        return state.remaining_election_ms()

    def _poll_unattached(self, state: UnattachedState) -> float:
        """Mirrors KafkaRaftClient#pollUnattached (pollUnattachedAsVoter, pollUnattachedAsObserver)."""
        if self.quorum.is_voter():
            if self.graceful_shutdown is not None:
                return self.graceful_shutdown.remaining_ms()
            if state.has_election_timeout_expired():
                self.transition_to_candidate()
                return 0
            return state.remaining_election_ms()
        # pollUnattachedAsObserver.
        return min(self._maybe_send_any_voter_fetch(), state.remaining_election_ms())

    def _poll_resigned(self, state: ResignedState) -> float:
        """Mirrors KafkaRaftClient#pollResigned: EndQuorumEpoch to the voters until acknowledged; then stand again."""
        send_ms = self._maybe_send_requests(state.unacked_voters, self._build_end_quorum_epoch_request)
        # While shutting down, stay Resigned until the shutdown ends or a new epoch moves us on.
        if self.graceful_shutdown is not None:
            return min(send_ms, self.graceful_shutdown.remaining_ms())
        if state.has_election_timeout_expired():
            self.transition_to_candidate()
            return 0
        return min(send_ms, state.remaining_election_ms())

    def _binary_exponential_election_backoff_ms(self, retries: int) -> float:
        """Mirrors KafkaRaftClient#binaryExponentialElectionBackoffMs: random, doubling with each retry, capped."""
        bound = 2 << min(20, retries - 1)
        return min(RETRY_BACKOFF_BASE_MS * self.rng.randrange(bound), self.config.election_backoff_max_ms)

    def _strict_exponential_election_backoff_ms(self, position: int, total: int) -> float:
        """Mirrors KafkaRaftClient#strictExponentialElectionBackoffMs: later preferred successors wait longer."""
        base = self.config.election_backoff_max_ms >> (total - 1)
        return min(self.config.election_backoff_max_ms, base << (position - 1))

    # ------------------------------------------------------------------ transitions

    def transition_to_candidate(self) -> None:
        """Mirrors KafkaRaftClient#transitionToCandidate: next epoch, vote for ourselves."""
        self.quorum.transition_to_candidate()
        self._log.info("raft_candidate", epoch=self.epoch, retries=self.quorum.state.retries,  # type: ignore[union-attr]
                       last_epoch=self.log.last_fetched_epoch, log_end_offset=self.log.end_offset)
        self._on_become_candidate()

    def _on_become_candidate(self) -> None:
        """Mirrors KafkaRaftClient#onBecomeCandidate: a lone voter has its majority already."""
        state: CandidateState = self.quorum.state  # type: ignore[assignment]
        if not self._maybe_transition_to_leader(state):
            self.request_manager.reset_all()

    def _maybe_transition_to_leader(self, state: CandidateState) -> bool:
        """Mirrors KafkaRaftClient#maybeTransitionToLeader."""
        if state.is_vote_granted():
            self._on_become_leader(state)
            return True
        return False

    def _on_become_leader(self, candidate: CandidateState) -> None:
        """Mirrors KafkaRaftClient#onBecomeLeader.

        1. a new accumulator for the epoch, its offsets starting at the log end; 2. Leader;
        3. the LeaderChangeMessage goes into the accumulator and is drained on the next poll
        (without waiting for the linger time), so the epoch can commit at once; 4. connections reset.
        """
        # 1. The epoch's write buffer.
        epoch_start_offset = self.log.end_offset
        accumulator = BatchAccumulator(candidate.epoch, epoch_start_offset, self.config.append_linger_ms, self.time)
        # 2. The transition.
        state = self.quorum.transition_to_leader(epoch_start_offset, accumulator)
        self._log.info("raft_leader_elected", epoch=state.epoch, epoch_start_offset=epoch_start_offset,
                       granting_voters=sorted(state.granting_voters))
        # 3. The epoch's first record.
        state.append_leader_change_message(self.time.milliseconds())
        # 4. Fresh connections.
        self.request_manager.reset_all()

    def transition_to_resigned(self, preferred_successors: list[int]) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#transitionToResigned.

        1. parked fetches are answered NOT_LEADER_OR_FOLLOWER first (still naming us, in our
        epoch); 2. Resigned; 3. connections reset.
        """
        # 1. The fetch purgatory.
        self._fail_parked_fetches()
        # 2. The transition.
        self.quorum.transition_to_resigned(preferred_successors)
        # 3. Fresh connections.
        self.request_manager.reset_all()

    def transition_to_unattached(self, epoch: int) -> None:
        """Mirrors KafkaRaftClient#transitionToUnattached."""
        self.quorum.transition_to_unattached(epoch)
        self._log.info("raft_unattached", epoch=epoch)
        self.request_manager.reset_all()

    def transition_to_voted(self, candidate_id: int, epoch: int) -> None:
        """Mirrors KafkaRaftClient#transitionToVoted."""
        self.quorum.transition_to_voted(epoch, candidate_id)
        self._log.info("raft_voted", epoch=epoch, voted_id=candidate_id)
        self.request_manager.reset_all()

    def transition_to_follower(self, epoch: int, leader_id: int) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#transitionToFollower (and #onBecomeFollower).

        1. Follower; 2. connections reset; 3. parked fetches are answered NOT_LEADER_OR_FOLLOWER
        naming the new leader, so the fetchers go to it without waiting for their max wait.
        """
        # 1. The transition.
        self.quorum.transition_to_follower(epoch, leader_id)
        self._log.info("raft_follower", epoch=epoch, leader_id=leader_id)
        # 2. Fresh connections.
        self.request_manager.reset_all()
        # 3. The fetch purgatory.
        self._fail_parked_fetches()

    def _fail_parked_fetches(self) -> None:
        """Mirrors fetchPurgatory#completeAllExceptionally(NotLeaderOrFollowerException) as handleFetchRequest answers it.

        Only becoming a follower or resigning does this; after a move to Unattached, Voted or
        Candidate parked fetches wait for their max wait (and then get the answer computed when
        they arrived).
        """
        parked, self.fetch_purgatory = self.fetch_purgatory, []
        for fetch in parked:
            fetch.envelope.respond(self._empty_fetch_response(Errors.NOT_LEADER_OR_FOLLOWER))

    def _maybe_transition(self, leader_id: int, epoch: int) -> None:
        """Mirrors KafkaRaftClient#maybeTransition: a higher epoch (with or without its leader), or the leader found."""
        if epoch > self.epoch:
            if leader_id >= 0 and leader_id != self.node_id:
                self.transition_to_follower(epoch, leader_id)
            else:
                self.transition_to_unattached(epoch)
        elif leader_id >= 0 and not self.quorum.has_leader() and leader_id != self.node_id:
            self.transition_to_follower(epoch, leader_id)

    # ------------------------------------------------------------------ listeners

    def _poll_listeners(self) -> None:
        """Mirrors KafkaRaftClient#pollListeners: commits up to the HW, then any leader change.

        A Resigned node (a leader that restarted, or gave up its epoch) is not announced as the
        leader: its listener would claim an epoch in which it can no longer append.
        """
        self._update_listeners_progress()
        state = self.quorum.state
        for context in self.listeners:
            if isinstance(state, LeaderState):
                context.maybe_fire_leader_change(self.leader_and_epoch(), state.epoch_start_offset)
            elif isinstance(state, ResignedState):
                context.maybe_fire_leader_change((-1, state.epoch))
            else:
                context.maybe_fire_leader_change(self.leader_and_epoch())

    def _update_listeners_progress(self) -> None:
        for context in self.listeners:
            context.fire_commits(self.log)

    # ------------------------------------------------------------------ outbound requests

    def _maybe_send_requests(self, destinations: Iterable[int], build: Any) -> float:
        """Mirrors KafkaRaftClient#maybeSendRequests: one request to each ready destination; ms until one is ready."""
        wait = NO_TIMEOUT
        for destination in sorted(destinations):
            if self.request_manager.is_ready(destination):
                self._send(destination, build(destination))
            # Backing off: until the backoff ends; else (just sent, or in flight) a request timeout.
            wait = min(wait, self.request_manager.remaining_backoff_ms(destination) or self.config.request_timeout_ms)
        return wait

    def _send(self, destination: int, request: Any) -> None:
        self._correlation += 1
        self.request_manager.on_request_sent(destination, self._correlation)
        if isinstance(request, MetadataFetchRequest):
            self.fetches_sent += 1
        if self.channel is not None:
            self.channel.send(destination, self._correlation, request)

    def _maybe_send_fetch(self, leader_id: int) -> float:
        return self._maybe_send_requests([leader_id], lambda _d: self._build_fetch_request())

    def _maybe_send_request(self, destination: int, build: Any) -> float:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#maybeSendRequest: send when the connection is ready.

        Returns the backoff left, or the time left for the request in flight.
        """
        manager = self.request_manager
        if manager.is_backing_off(destination):
            return manager.remaining_backoff_ms(destination)
        if manager.is_ready(destination):
            self._send(destination, build(destination))
        return manager.remaining_request_time_ms(destination)

    def _maybe_send_any_voter_fetch(self) -> float:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#maybeSendAnyVoterFetch: a fetch to a ready bootstrap server
        (a voter; its answer names the leader), else the wait until one is ready."""
        node = self.request_manager.find_ready_bootstrap_server()
        if node is not None:
            return self._maybe_send_request(node, lambda _d: self._build_fetch_request())
        return self.request_manager.backoff_before_available_bootstrap_server()

    def _build_fetch_request(self) -> MetadataFetchRequest:
        """Mirrors KafkaRaftClient#buildFetchRequest: our log end and its last epoch."""
        return MetadataFetchRequest(
            cluster_id=self.cluster_id, replica_id=self.node_id, current_leader_epoch=self.epoch,
            fetch_offset=self.log.end_offset, last_fetched_epoch=self.log.last_fetched_epoch, max_wait_ms=FETCH_MAX_WAIT_MS,
        )

    def _build_vote_request(self, _destination: int) -> VoteRequest:
        """Mirrors KafkaRaftClient#buildVoteRequest: our epoch and how far our log goes."""
        end_offset, last_epoch = self.log.end_offset_and_epoch()
        return VoteRequest(cluster_id=self.cluster_id, candidate_epoch=self.epoch, candidate_id=self.node_id,
                           last_offset_epoch=last_epoch, last_offset=end_offset)

    def _build_begin_quorum_epoch_request(self, _destination: int) -> BeginQuorumEpochRequest:
        return BeginQuorumEpochRequest(cluster_id=self.cluster_id, leader_id=self.node_id, leader_epoch=self.epoch)

    def _build_end_quorum_epoch_request(self, _destination: int) -> EndQuorumEpochRequest:
        state: ResignedState = self.quorum.state  # type: ignore[assignment]
        return EndQuorumEpochRequest(cluster_id=self.cluster_id, leader_id=self.node_id, leader_epoch=self.epoch,
                                     preferred_successors=tuple(state.preferred_successors))
