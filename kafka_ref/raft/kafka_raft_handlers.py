"""KafkaRaftClient's request and response handlers: Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch.

Mirrors the handle* methods of org.apache.kafka.raft.KafkaRaftClient: the answers to requests this
node sent (handleResponse and the per-API response handlers, the follower's high watermark), the
requests it receives (the Vote, BeginQuorumEpoch, EndQuorumEpoch and DescribeQuorum handlers) and
the leader's Fetch path with its fetch purgatory. A mixin of ``KafkaRaftClient``
(kafka_ref/raft/kafka_raft_client.py), kept apart, as UnifiedLog's retention is
(kafka_ref/log/log_retention.py), to keep that module within the project's size rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_ref.common.errors import ClusterAuthorizationException, Errors
from kafka_ref.common.requests.begin_quorum_epoch import BeginQuorumEpochRequest, BeginQuorumEpochResponse
from kafka_ref.common.requests.end_quorum_epoch import EndQuorumEpochRequest, EndQuorumEpochResponse
from kafka_ref.common.requests.metadata_fetch import MetadataFetchRequest, MetadataFetchResponse
from kafka_ref.common.requests.vote import VoteRequest, VoteResponse
from kafka_ref.common.uuid import METADATA_TOPIC_ID
from kafka_ref.raft.epoch_states import NO_TIMEOUT, CandidateState, FollowerState, ResignedState
from kafka_ref.raft.leader_state import DescribeQuorumPartitionData, LeaderState


@dataclass
class _ParkedFetch:
    """A Fetch the leader holds until new data, a new HW, or its max wait (KafkaRaftClient's fetchPurgatory)."""

    envelope: Any
    request: MetadataFetchRequest
    deadline_ms: float
    response: MetadataFetchResponse


class KafkaRaftClientHandlers:
    """KafkaRaftClient's request and response handlers (``self`` is the KafkaRaftClient)."""

    # ------------------------------------------------------------------ responses

    def handle_response(self, source: int, correlation_id: int, request: Any, result: Any) -> None:
        """Mirrors KafkaRaftClient#handleResponse: an answer (or a failure) to a request this node sent."""
        if not self.request_manager.is_response_expected(source, correlation_id):
            return
        if isinstance(result, BaseException):
            self.request_manager.on_response_result(source, correlation_id, False)
            self._wake()
            return
        if result.error_code:
            handled = self._handle_top_level_error(Errors.for_code(result.error_code), result)
        elif isinstance(result, MetadataFetchResponse):
            handled = self._handle_fetch_response(source, result)
        elif isinstance(result, VoteResponse):
            handled = self._handle_vote_response(source, result)
        elif isinstance(result, BeginQuorumEpochResponse):
            handled = self._handle_begin_quorum_epoch_response(source, result)
        elif isinstance(result, EndQuorumEpochResponse):
            handled = self._handle_end_quorum_epoch_response(source, result)
        else:
            handled = False
        self.request_manager.on_response_result(source, correlation_id, handled)
        self._poll_listeners()
        self._wake()

    def _handle_top_level_error(self, error: Errors, response: Any) -> bool:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#handleTopLevelError.

        1. BROKER_NOT_AVAILABLE: back off; 2. CLUSTER_AUTHORIZATION_FAILED is fatal to the Raft
        thread (ClusterAuthorizationException); 3. anything else is logged (handleUnexpectedError)
        and backs off.
        """
        # 1. Not available.
        if error is Errors.BROKER_NOT_AVAILABLE:
            return False
        # 2. Not authorized: fatal.
        if error is Errors.CLUSTER_AUTHORIZATION_FAILED:
            raise ClusterAuthorizationException(f"Received cluster authorization error in response {response!r}")
        # 3. Unexpected.
        self._log.warning("raft_request_failed", error=error.name)
        return False

    def _maybe_handle_common_response(self, error: Errors, leader_id: int, epoch: int) -> bool | None:
        """Mirrors KafkaRaftClient#maybeHandleCommonResponse: epochs and leaders any response can teach.

        1. an older epoch (or UNKNOWN_LEADER_EPOCH): stale, ignore; 2. a newer epoch, or a fenced
        or not-leader answer: move to what the responder knows; 3. the same epoch with a leader
        we did not know: follow it. None: the caller handles the response itself.

        Kafka answers "handled" (no backoff) in cases 1 and 2 even when nothing was learned;
        kafka_ref backs off then: with Kafka's rule a run of the raft/KRaft test files did not
        finish (an immediate resend to a node that keeps answering the same way can spin in
        virtual time).
        """
        if epoch < self.epoch or error is Errors.UNKNOWN_LEADER_EPOCH:
            # A stale answer teaches nothing; on an error, back off before asking that node again.
            return error is Errors.NONE
        if epoch > self.epoch or error in (Errors.FENCED_LEADER_EPOCH, Errors.NOT_LEADER_OR_FOLLOWER):
            before = self.quorum.state
            self._maybe_transition(leader_id, epoch)
            # Nothing learned (the responder knows no newer leader): back off before asking again.
            return self.quorum.state is not before or error is Errors.NONE
        if epoch == self.epoch and leader_id >= 0 and not self.quorum.has_leader() and leader_id != self.node_id:
            self.transition_to_follower(epoch, leader_id)
            return None if error is Errors.NONE else True
        if error is Errors.BROKER_NOT_AVAILABLE:
            return False
        return None

    def _handle_vote_response(self, source: int, response: VoteResponse) -> bool:
        """Mirrors KafkaRaftClient#handleVoteResponse: count the vote; a majority elects, a lost majority backs off."""
        error = Errors.for_code(response.partition_error_code)
        handled = self._maybe_handle_common_response(error, response.leader_id, response.leader_epoch)
        if handled is not None:
            return handled
        if error is not Errors.NONE:
            return False
        state = self.quorum.state
        if isinstance(state, CandidateState):
            if response.vote_granted:
                state.record_granted_vote(source)
                self._maybe_transition_to_leader(state)
            else:
                state.record_rejected_vote(source)
                if state.is_vote_rejected() and not state.is_backing_off():
                    backoff_ms = self._binary_exponential_election_backoff_ms(state.retries)
                    self._log.info("raft_election_lost", epoch=state.epoch, rejecting_voters=sorted(state.rejecting_voters()),
                                   backoff_ms=backoff_ms)
                    state.start_backing_off(backoff_ms)
        return True

    def _handle_begin_quorum_epoch_response(self, source: int, response: BeginQuorumEpochResponse) -> bool:
        """Mirrors KafkaRaftClient#handleBeginQuorumEpochResponse: the voter acknowledged our leadership."""
        error = Errors.for_code(response.partition_error_code)
        handled = self._maybe_handle_common_response(error, response.leader_id, response.leader_epoch)
        if handled is not None:
            return handled
        if error is Errors.NONE:
            if isinstance(self.quorum.state, LeaderState):
                self.quorum.state.add_acknowledgement_from(source)
            return True
        return False

    def _handle_end_quorum_epoch_response(self, source: int, response: EndQuorumEpochResponse) -> bool:
        """Mirrors KafkaRaftClient#handleEndQuorumEpochResponse: the voter heard of our resignation."""
        error = Errors.for_code(response.partition_error_code)
        handled = self._maybe_handle_common_response(error, response.leader_id, response.leader_epoch)
        if handled is not None:
            return handled
        if error is Errors.NONE:
            if isinstance(self.quorum.state, ResignedState):
                self.quorum.state.acknowledge_resignation(source)
            return True
        return False

    def _handle_fetch_response(self, source: int, response: MetadataFetchResponse) -> bool:
        """Mirrors KafkaRaftClient#handleFetchResponse (follower or observer).

        1. errors and epochs first (a new leader is followed); 2. a diverging epoch: truncate to
        where our log agrees with the leader's; 3. else append the batches and take the leader's
        HW (capped at our log end); 4. the fetch timer restarts.
        """
        error = Errors.for_code(response.partition_error_code)
        # 1. What the answer says about leaders and epochs.
        handled = self._maybe_handle_common_response(error, response.leader_id, response.leader_epoch)
        if handled is not None:
            return handled
        state = self.quorum.state
        # Any node may answer for the leader (an observer's fetch to a bootstrap server): the answer names it.
        if error is not Errors.NONE or not isinstance(state, FollowerState):
            return False
        if response.diverging_epoch >= 0:
            # 2. Divergence: never below the HW.
            truncated_to = self.log.truncate_to_end_offset(response.diverging_end_offset, response.diverging_epoch)
            self._log.info("raft_log_truncated", epoch=self.epoch, leader_id=source, truncation_offset=truncated_to,
                           diverging_epoch=response.diverging_epoch)
        else:
            # 3. Append and follow the HW.
            for batch in response.batches:
                if batch.base_offset == self.log.end_offset:
                    self.log.append_as_follower(batch)
            self._update_follower_high_watermark(state, response.high_watermark)
        # 4. The leader is alive.
        state.reset_fetch_timeout()
        return True

    def _update_follower_high_watermark(self, state: FollowerState, high_watermark: int) -> None:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#updateFollowerHighWatermark.

        1. a leader that knows no HW yet (-1) teaches nothing; 2. the leader's HW, capped by our
        log end, becomes the follower state's (a first value counts as a change, even one equal
        to what the log kept); 3. on a change the log and the listeners follow.
        """
        # 1. Unknown at the leader.
        if high_watermark < 0:
            return
        # 2. The state's HW.
        new_high_watermark = min(self.log.end_offset, high_watermark)
        if state.update_high_watermark(new_high_watermark):
            # 3. The log's HW and the listeners.
            self.log.update_high_watermark(new_high_watermark)
            self._update_listeners_progress()

    # ------------------------------------------------------------------ inbound requests

    def handle_request(self, envelope: Any) -> None:
        """Mirrors KafkaRaftClient#handleRequest: dispatch a Raft request; answer now (or park a Fetch)."""
        request = envelope.request
        if request.cluster_id and self.cluster_id and request.cluster_id != self.cluster_id:
            envelope.respond(request.get_error_response(Errors.INCONSISTENT_CLUSTER_ID.code))
            return
        if isinstance(request, MetadataFetchRequest):
            self.handle_fetch_request(envelope)
        elif isinstance(request, VoteRequest):
            envelope.respond(self._handle_vote_request(request))
        elif isinstance(request, BeginQuorumEpochRequest):
            envelope.respond(self._handle_begin_quorum_epoch_request(request))
        elif isinstance(request, EndQuorumEpochRequest):
            envelope.respond(self._handle_end_quorum_epoch_request(request))
        else:
            envelope.respond(request.get_error_response(Errors.INVALID_REQUEST.code))
        self._poll_listeners()
        self._wake()

    def _validate_voter_only_request(self, remote_id: int, request_epoch: int) -> Errors | None:
        """Mirrors KafkaRaftClient#validateVoterOnlyRequest.

        1. an older epoch is FENCED_LEADER_EPOCH; 2. a negative id INVALID_REQUEST; 3. up to Kafka
        3.7 only (``QuorumConfig.inconsistent_voter_set_check``), a request to an observer or from
        a non-voter is INCONSISTENT_VOTER_SET: Kafka 3.8 accepts it.
        """
        # 1. The epoch.
        if request_epoch < self.epoch:
            return Errors.FENCED_LEADER_EPOCH
        # 2. The sender's id.
        if remote_id < 0:
            return Errors.INVALID_REQUEST
        # 3. The voter set (3.7 and earlier).
        if self.config.inconsistent_voter_set_check and (self.quorum.is_observer() or not self.quorum.is_voter(remote_id)):
            return Errors.INCONSISTENT_VOTER_SET
        return None

    def _validate_leader_only_request(self, request_epoch: int) -> Errors | None:
        """Mirrors KafkaRaftClient#validateLeaderOnlyRequest."""
        if request_epoch < self.epoch:
            return Errors.FENCED_LEADER_EPOCH
        if request_epoch > self.epoch:
            return Errors.UNKNOWN_LEADER_EPOCH
        if not self.quorum.is_leader():
            return Errors.NOT_LEADER_OR_FOLLOWER
        return None

    def is_log_up_to_date(self, last_offset_epoch: int, last_offset: int) -> bool:
        """The candidate's (last epoch, end offset) is at least ours: epoch first, then offset (OffsetAndEpoch#compareTo)."""
        end_offset, last_epoch = self.log.end_offset_and_epoch()
        return (last_offset_epoch, last_offset) >= (last_epoch, end_offset)

    def _handle_vote_request(self, request: VoteRequest) -> VoteResponse:
        """Mirrors KafkaRaftClient#handleVoteRequest.

        1. a malformed request is refused; 2. an old epoch, a non-voter: refused with our epoch;
        3. a newer epoch makes us Unattached in it first; 4. grant if our state allows a vote for
        this candidate and its log is at least as up to date as ours; a granted vote is stored
        (Voted) before the answer leaves.
        """
        # 1. Well-formed.
        if request.last_offset < 0 or request.last_offset_epoch < 0 or request.last_offset_epoch >= request.candidate_epoch:
            return self._vote_response(Errors.INVALID_REQUEST, False)
        # 2. Current epoch, voters only.
        error = self._validate_voter_only_request(request.candidate_id, request.candidate_epoch)
        if error is not None:
            return self._vote_response(error, False)
        # 3. A newer epoch.
        if request.candidate_epoch > self.epoch:
            self.transition_to_unattached(request.candidate_epoch)
        # 4. The vote.
        up_to_date = self.is_log_up_to_date(request.last_offset_epoch, request.last_offset)
        granted = self.quorum.can_grant_vote(request.candidate_id, up_to_date)
        if granted and self.quorum.is_unattached():
            self.transition_to_voted(request.candidate_id, request.candidate_epoch)
        self._log.info("raft_vote_request", candidate_id=request.candidate_id, epoch=request.candidate_epoch,
                       granted=granted, log_up_to_date=up_to_date)
        return self._vote_response(Errors.NONE, granted)

    def _vote_response(self, error: Errors, granted: bool) -> VoteResponse:
        leader_id, epoch = self.leader_and_epoch()
        return VoteResponse(partition_error_code=error.code, leader_id=leader_id, leader_epoch=epoch, vote_granted=granted)

    def _handle_begin_quorum_epoch_request(self, request: BeginQuorumEpochRequest) -> BeginQuorumEpochResponse:
        """Mirrors KafkaRaftClient#handleBeginQuorumEpochRequest: follow the announced leader."""
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is None:
            self._maybe_transition(request.leader_id, request.leader_epoch)
        leader_id, epoch = self.leader_and_epoch()
        return BeginQuorumEpochResponse(partition_error_code=(error or Errors.NONE).code, leader_id=leader_id,
                                        leader_epoch=epoch)

    def _handle_end_quorum_epoch_request(self, request: EndQuorumEpochRequest) -> EndQuorumEpochResponse:
        """Mirrors KafkaRaftClient#handleEndQuorumEpochRequest: the leader resigned; its preferred successor stands first."""
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is None:
            self._maybe_transition(request.leader_id, request.leader_epoch)
            state = self.quorum.state
            if isinstance(state, FollowerState) and state.leader_id == request.leader_id:
                successors = list(request.preferred_successors)
                position = successors.index(self.node_id) if self.node_id in successors else -1
                backoff_ms = 0 if position <= 0 else self._strict_exponential_election_backoff_ms(position, len(successors))
                state.override_fetch_timeout(backoff_ms)
        leader_id, epoch = self.leader_and_epoch()
        return EndQuorumEpochResponse(partition_error_code=(error or Errors.NONE).code, leader_id=leader_id,
                                      leader_epoch=epoch)

    def handle_describe_quorum_request(self) -> DescribeQuorumPartitionData:
        """Mirrors org.apache.kafka.raft.KafkaRaftClient#handleDescribeQuorumRequest, for __cluster_metadata-0.

        kafka_ref has no DescribeQuorum wire request: this is the partition's answer. 1. only
        the leader describes the quorum (else NOT_LEADER_OR_FOLLOWER, the other fields at their
        schema defaults); 2. the leader's view (LeaderState#describeQuorum) as of now.
        """
        # 1. Leader only.
        state = self.quorum.state
        if not isinstance(state, LeaderState):
            return DescribeQuorumPartitionData(error_code=Errors.NOT_LEADER_OR_FOLLOWER.code, leader_id=0,
                                               leader_epoch=0, high_watermark=0, current_voters=(), observers=())
        # 2. The leader's view.
        return state.describe_quorum(self.time.milliseconds())

    # ------------------------------------------------------------------ Fetch (leader)

    def handle_fetch_request(self, envelope: Any) -> None:
        """Mirrors KafkaRaftClient#handleFetchRequest: answer now, or park until new data, a new HW or max wait."""
        request: MetadataFetchRequest = envelope.request
        # 1. Only __cluster_metadata-0 (another partition is INVALID_REQUEST until multi-raft); a well-formed fetch.
        if request.topic_id != METADATA_TOPIC_ID:
            envelope.respond(request.get_error_response(Errors.INVALID_REQUEST.code))
            return
        if (request.max_wait_ms < 0 or request.fetch_offset < 0 or request.last_fetched_epoch < 0
                or request.last_fetched_epoch > request.current_leader_epoch):
            envelope.respond(self._empty_fetch_response(Errors.INVALID_REQUEST))
            return
        # 2. Try now.
        response = self._try_complete_fetch_request(request)
        if (response.partition_error_code or response.batches or request.max_wait_ms == 0
                or response.diverging_epoch >= 0 or not self._running):
            envelope.respond(response)
            return
        # 3. Park.
        self.fetch_purgatory.append(_ParkedFetch(envelope, request, self.time.milliseconds() + request.max_wait_ms,
                                                 response))

    def _try_complete_fetch_request(self, request: MetadataFetchRequest) -> MetadataFetchResponse:
        """Mirrors KafkaRaftClient#tryCompleteFetchRequest.

        1. leader of the fetcher's epoch only; 2. the fetcher's log must agree with ours at its
        last epoch, else the diverging epoch is the answer; 3. the fetch offset is the
        replica's end offset: it may move the HW; 4. batches from the fetch offset.
        """
        # 1. Leader checks.
        error = self._validate_leader_only_request(request.current_leader_epoch)
        if error is not None:
            return self._empty_fetch_response(error)
        state: LeaderState = self.quorum.state  # type: ignore[assignment]
        # 2. Divergence.
        valid, (end_offset, end_epoch) = self.log.validate_offset_and_epoch(request.fetch_offset, request.last_fetched_epoch)
        if not valid:
            return self._fetch_response(Errors.NONE, state, diverging=(end_epoch, end_offset))
        # 3. The replica's progress (LeaderState#updateReplicaState ignores a consumer's negative id and
        #    counts the fetch for check quorum; a fetch under the leader's own id would be its IllegalStateException).
        if request.replica_id != self.node_id:
            if state.update_replica_state(request.replica_id, self.time.milliseconds(), request.fetch_offset):
                self._on_update_leader_high_watermark(state)
        # 4. Data.
        return self._fetch_response(Errors.NONE, state, batches=tuple(self.log.read(request.fetch_offset)))

    def _fetch_response(self, error: Errors, state: LeaderState, batches: tuple = (),
                        diverging: tuple[int, int] = (-1, -1)) -> MetadataFetchResponse:
        high_watermark = state.high_watermark()
        return MetadataFetchResponse(
            partition_error_code=error.code, high_watermark=high_watermark if high_watermark is not None else -1,
            leader_id=self.node_id, leader_epoch=self.epoch, batches=batches,
            diverging_epoch=diverging[0], diverging_end_offset=diverging[1],
        )

    def _empty_fetch_response(self, error: Errors) -> MetadataFetchResponse:
        """Mirrors KafkaRaftClient#buildEmptyFetchResponse: the error and what we know of the leader."""
        leader_id, epoch = self.leader_and_epoch()
        return MetadataFetchResponse(partition_error_code=error.code, leader_id=leader_id, leader_epoch=epoch,
                                     high_watermark=-1)

    def _complete_parked_fetches(self) -> None:
        """Answer every parked fetch: new data or a new HW at the leader is news (fetchPurgatory#completeAll)."""
        parked, self.fetch_purgatory = self.fetch_purgatory, []
        for fetch in parked:
            fetch.envelope.respond(self._try_complete_fetch_request(fetch.request))

    def _expire_parked_fetches(self) -> float:
        """Answer parked fetches whose max wait ran out; ms until the next one does."""
        if not self.fetch_purgatory:
            return NO_TIMEOUT
        now = self.time.milliseconds()
        due = [f for f in self.fetch_purgatory if f.deadline_ms <= now]
        self.fetch_purgatory = [f for f in self.fetch_purgatory if f.deadline_ms > now]
        for fetch in due:
            # handleFetchRequest's REQUEST_TIMED_OUT branch: nothing new, the answer computed on arrival.
            fetch.envelope.respond(fetch.response)
        if not self.fetch_purgatory:
            return NO_TIMEOUT
        return max(1.0, min(f.deadline_ms for f in self.fetch_purgatory) - now)
