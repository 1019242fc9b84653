"""Incremental fetch sessions (KIP-227), the fetching side.

Mirrors org.apache.kafka.clients.FetchSessionHandler (which partitions to list in the next
fetch request, and whether a response fits the session) and
org.apache.kafka.common.requests.FetchMetadata (a request's session id and epoch) of Kafka
3.8. The serving side is kafka_ref.server.fetch_session. A follower's RemoteLeaderEndPoint
holds one handler per leader; kafka_ref's consumer fetches without sessions.
"""

from __future__ import annotations

import logging

import structlog
from collections.abc import Collection, Container, Iterable
from dataclasses import dataclass

from kafka_ref.common.errors import Errors, IllegalStateException
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.uuid import ZERO_UUID, Uuid

log = structlog.get_logger("kafka.clients.FetchSessionHandler")

# structlog's level-filtering logger classes that drop debug events (one class per level).
_DEBUG_FILTERED_OUT = frozenset(structlog.make_filtering_bound_logger(level)
                                for level in (logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL))


def _debug_enabled() -> bool:
    """Kafka's ``log.isDebugEnabled()`` guard, read from structlog's current configuration.

    Why it exists: the module logger is a lazy proxy that builds a bound logger on every call, a
    filtered-out ``debug`` included (about 9 µs); the builder logs once per incremental fetch.
    Any logger class other than a filtering one above debug counts as enabled (logs as before).
    """
    return structlog.get_config()["wrapper_class"] not in _DEBUG_FILTERED_OUT


INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_INT_MAX = 0x7FFFFFFF


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class FetchMetadata:
    """Mirrors org.apache.kafka.common.requests.FetchMetadata: (session id, session epoch).

    Epoch 0 opens a session (a full fetch), -1 closes it (a full fetch without a session),
    any other epoch is the next incremental fetch of session ``session_id``.
    """

    session_id: int
    epoch: int

    @property
    def is_full(self) -> bool:
        """Mirrors FetchMetadata#isFull: initial or final epoch means every partition is listed."""
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)

    @staticmethod
    def next_epoch(prev_epoch: int) -> int:
        """Mirrors FetchMetadata#nextEpoch: +1, wrapping from Integer.MAX_VALUE to 1."""
        if prev_epoch < 0:
            return FINAL_EPOCH
        if prev_epoch == _INT_MAX:
            return 1
        return prev_epoch + 1

    def next_close_existing(self) -> "FetchMetadata":
        """Mirrors FetchMetadata#nextCloseExisting."""
        return FetchMetadata(self.session_id, FINAL_EPOCH)

    def next_close_existing_attempt_new(self) -> "FetchMetadata":
        """Mirrors FetchMetadata#nextCloseExistingAttemptNew."""
        return FetchMetadata(self.session_id, INITIAL_EPOCH)

    @classmethod
    def new_incremental(cls, session_id: int) -> "FetchMetadata":
        """Mirrors FetchMetadata#newIncremental."""
        return cls(session_id, cls.next_epoch(INITIAL_EPOCH))

    def next_incremental(self) -> "FetchMetadata":
        """Mirrors FetchMetadata#nextIncremental."""
        return FetchMetadata(self.session_id, self.next_epoch(self.epoch))

    @classmethod
    def of(cls, request: FetchRequest) -> "FetchMetadata":
        """Mirrors FetchRequest#metadata: the session id and epoch a request carries."""
        return cls(request.session_id, request.session_epoch)


FetchMetadata.INITIAL = FetchMetadata(INVALID_SESSION_ID, INITIAL_EPOCH)  # type: ignore[attr-defined]
FetchMetadata.LEGACY = FetchMetadata(INVALID_SESSION_ID, FINAL_EPOCH)  # type: ignore[attr-defined]


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class FetchRequestPartitionData:
    """Mirrors org.apache.kafka.common.requests.FetchRequest.PartitionData.

    What a fetcher asks for one partition. Equality is what decides whether an incremental
    request must list the partition again. ``None`` epochs are Kafka's empty Optionals.
    """

    topic_id: Uuid
    fetch_offset: int
    log_start_offset: int
    max_bytes: int
    current_leader_epoch: int | None = None
    last_fetched_epoch: int | None = None

    def to_fetch_partition(self, partition: int) -> FetchPartition:
        """Mirrors FetchRequest.Builder#build for one partition: the wire FetchPartition (-1 = empty)."""
        return FetchPartition(
            partition=partition,
            current_leader_epoch=-1 if self.current_leader_epoch is None else self.current_leader_epoch,
            fetch_offset=self.fetch_offset,
            last_fetched_epoch=-1 if self.last_fetched_epoch is None else self.last_fetched_epoch,
            log_start_offset=self.log_start_offset,
            partition_max_bytes=self.max_bytes,
        )


@dataclass(slots=True, unsafe_hash=True)  # a hot-path value: never mutated, not frozen (docs/DESIGN.md)
class FetchRequestData:
    """Mirrors org.apache.kafka.clients.FetchSessionHandler.FetchRequestData."""

    to_send: dict[TopicPartition, FetchRequestPartitionData]
    to_forget: list[TopicIdPartition]
    to_replace: list[TopicIdPartition]
    session_partitions: dict[TopicPartition, FetchRequestPartitionData]
    metadata: FetchMetadata
    can_use_topic_ids: bool


class FetchSessionHandler:
    """Mirrors org.apache.kafka.clients.FetchSessionHandler: the fetching side of a session.

    Tracks which partitions the leader has in our session and builds each request: a full
    one listing everything when there is no session, else an incremental one listing only
    added or changed partitions and the partitions to forget.
    """

    def __init__(self, node: int, log_prefix: str = "") -> None:
        self.node = node
        self.log_prefix = log_prefix
        self.next_metadata: FetchMetadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
        self.session_partitions: dict[TopicPartition, FetchRequestPartitionData] = {}
        self.session_topic_names: dict[Uuid, str] = {}

    @property
    def session_id(self) -> int:
        """Mirrors FetchSessionHandler#sessionId."""
        return self.next_metadata.session_id

    def new_builder(self, size: int = 0, copy_session_partitions: bool = True) -> "FetchSessionHandler.Builder":
        """Mirrors FetchSessionHandler#newBuilder (the size hint is irrelevant for a dict)."""
        return FetchSessionHandler.Builder(self, copy_session_partitions)

    class Builder:
        """Mirrors org.apache.kafka.clients.FetchSessionHandler.Builder."""

        def __init__(self, handler: "FetchSessionHandler", copy_session_partitions: bool) -> None:
            self.handler = handler
            self.copy_session_partitions = copy_session_partitions
            self.next: dict[TopicPartition, FetchRequestPartitionData] = {}
            self.topic_names: dict[Uuid, str] = {}
            self.partitions_without_topic_ids = 0
            # The topic id last named in ``topic_names`` (see ``add``).
            self._last_topic_id: Uuid | None = None

        def add(self, topic_partition: TopicPartition, data: FetchRequestPartitionData) -> None:
            """Mirrors FetchSessionHandler.Builder#add: we want this partition in the next fetch."""
            self.next[topic_partition] = data
            topic_id = data.topic_id
            # (A fetcher adds a topic's partitions one after another, sharing one Uuid object: the
            #  name is recorded once per run of them, not hashed again per partition per fetch.)
            if topic_id is self._last_topic_id:
                return
            # (ZERO_UUID is Uuid(0, 0): compared by its halves, as dataclass equality would,
            #  without a call per partition per fetch.)
            if topic_id is ZERO_UUID or (topic_id.most_significant_bits == 0 and topic_id.least_significant_bits == 0):
                self.partitions_without_topic_ids += 1
            else:
                self.topic_names.setdefault(topic_id, topic_partition.topic)
                self._last_topic_id = topic_id

        def build(self) -> FetchRequestData:
            """Mirrors FetchSessionHandler.Builder#build (once per builder: Kafka's drops its map)."""
            h = self.handler
            can_use_topic_ids = self.partitions_without_topic_ids == 0
            next_parts = self.next
            if next_parts is None:
                raise IllegalStateException("FetchSessionHandler.Builder#build was already called")
            self.next = None  # type: ignore[assignment]
            # 1. No session yet (or closing one): the request lists every partition.
            if h.next_metadata.is_full:
                h.session_partitions = next_parts
                h.session_topic_names = self.topic_names if can_use_topic_ids else {}
                to_send = dict(next_parts)
                return FetchRequestData(to_send, [], [], to_send, h.next_metadata, can_use_topic_ids)
            # 2. Incremental: walk the session; changed partitions move to the back of `next`,
            #    unchanged ones drop out of it, missing ones are forgotten.
            added: list[TopicIdPartition] = []
            removed: list[TopicIdPartition] = []
            altered: list[TopicIdPartition] = []
            replaced: list[TopicIdPartition] = []
            for tp, prev in list(h.session_partitions.items()):
                nxt = next_parts.pop(tp, None)
                if nxt is not None:
                    # (Identity first: a partition's entries usually share one topic id object.)
                    if (prev.topic_id is not nxt.topic_id and prev.topic_id != nxt.topic_id
                            and prev.topic_id != ZERO_UUID and nxt.topic_id != ZERO_UUID):
                        next_parts[tp] = nxt
                        h.session_partitions[tp] = nxt
                        replaced.append(TopicIdPartition(prev.topic_id, tp))
                    # (PartitionData#equals written out field by field: one dataclass __eq__ call
                    #  per partition per fetch saved; the topic ids were compared just above.)
                    elif (prev.fetch_offset != nxt.fetch_offset or prev.log_start_offset != nxt.log_start_offset
                          or prev.max_bytes != nxt.max_bytes or prev.current_leader_epoch != nxt.current_leader_epoch
                          or prev.last_fetched_epoch != nxt.last_fetched_epoch
                          or (prev.topic_id is not nxt.topic_id and prev.topic_id != nxt.topic_id)):
                        next_parts[tp] = nxt
                        h.session_partitions[tp] = nxt
                        altered.append(TopicIdPartition(nxt.topic_id, tp))
                else:
                    del h.session_partitions[tp]
                    removed.append(TopicIdPartition(prev.topic_id, tp))
                    if can_use_topic_ids and prev.topic_id == ZERO_UUID:
                        can_use_topic_ids = False
            # 3. Partitions never seen before join the session (they sit before the re-added
            #    changed ones, so the first known partition ends the scan).
            for tp, nxt in next_parts.items():
                if tp in h.session_partitions:
                    break
                h.session_partitions[tp] = nxt
                added.append(TopicIdPartition(nxt.topic_id, tp))
            h.session_topic_names = self.topic_names if can_use_topic_ids else {}
            if _debug_enabled():
                log.debug("%sBuilt incremental fetch %s for node %s. Added %d, altered %d, removed %d, replaced %d out of %d",
                          h.log_prefix, h.next_metadata, h.node, len(added), len(altered), len(removed), len(replaced),
                          len(h.session_partitions))
            session = dict(h.session_partitions) if self.copy_session_partitions else h.session_partitions
            return FetchRequestData(next_parts, removed, replaced, session, h.next_metadata, can_use_topic_ids)

    @staticmethod
    def find_missing(to_find: Iterable, to_search: Container) -> list:
        """Mirrors FetchSessionHandler#findMissing: the items of ``to_find`` (in its order) not in ``to_search``."""
        return [item for item in to_find if item not in to_search]

    @staticmethod
    def _join(items: Iterable) -> str:
        return ", ".join(map(str, items))

    def verify_full_fetch_response_partitions(self, topic_partitions: Collection[TopicPartition], ids: Collection[Uuid],
                                              version: int) -> str | None:
        """Mirrors FetchSessionHandler#verifyFullFetchResponsePartitions: None if the response has
        exactly the session's partitions (and, from version 13, only the session's topic ids),
        else what is wrong."""
        extra = self.find_missing(topic_partitions, self.session_partitions)
        omitted = self.find_missing(self.session_partitions, topic_partitions)
        extra_ids = self.find_missing(ids, self.session_topic_names) if version >= FetchRequest.TOPIC_ID_VERSION else []
        if not (omitted or extra or extra_ids):
            return None
        problem = ""
        if omitted:
            problem += f"omittedPartitions=({self._join(omitted)}), "
        if extra:
            problem += f"extraPartitions=({self._join(extra)}), "
        if extra_ids:
            problem += f"extraIds=({self._join(extra_ids)}), "
        return problem + f"response=({self._join(topic_partitions)})"

    def verify_incremental_fetch_response_partitions(self, topic_partitions: Collection[TopicPartition],
                                                     ids: Collection[Uuid], version: int) -> str | None:
        """Mirrors FetchSessionHandler#verifyIncrementalFetchResponsePartitions: None if every
        partition (and, from version 13, every topic id) of the response is in the session.

        (Runs on every incremental response: findMissing is written out as loops, which cost
        no Python call.)
        """
        extra_ids: list[Uuid] = []
        if version >= FetchRequest.TOPIC_ID_VERSION:
            session_topic_names = self.session_topic_names
            for topic_id in ids:
                if topic_id not in session_topic_names:
                    extra_ids.append(topic_id)
        extra: list[TopicPartition] = []
        session = self.session_partitions
        for tp in topic_partitions:
            if tp not in session:
                extra.append(tp)
        if not (extra or extra_ids):
            return None
        problem = ""
        if extra:
            problem += f"extraPartitions=({self._join(extra)}), "
        if extra_ids:
            problem += f"extraIds=({self._join(extra_ids)}), "
        return problem + f"response=({self._join(topic_partitions)})"

    def handle_response(self, response: FetchResponse, version: int = FetchRequest.LATEST_VERSION) -> bool:
        """Mirrors FetchSessionHandler#handleResponse.

        ``version`` is the request's: from 13 a response topic id the session does not have
        makes the response unusable too. Returns False when the response cannot be used (a
        session error, or partitions that do not match the session); the next request is
        then a full fetch.
        """
        # 1. A top-level error: FETCH_SESSION_ID_NOT_FOUND starts over without a session id,
        #    anything else (e.g. INVALID_FETCH_SESSION_EPOCH) closes the session and opens anew.
        error = Errors.for_code(response.error_code)
        if error is not Errors.NONE:
            log.info("%sNode %s was unable to process the fetch request with %s: %s.",
                     self.log_prefix, self.node, self.next_metadata, error.name)
            if error is Errors.FETCH_SESSION_ID_NOT_FOUND:
                self.next_metadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
            else:
                self.next_metadata = self.next_metadata.next_close_existing_attempt_new()
            return False
        topic_partitions = response.response_data(self.session_topic_names).keys()
        # (Kafka's FetchResponse#topicIds; only read from version 13.)
        ids = response.topic_ids() if version >= FetchRequest.TOPIC_ID_VERSION else ()
        if self.next_metadata.is_full:
            # 2. Full fetch: a throttled empty answer or a partition mismatch cannot be used.
            if not topic_partitions and response.throttle_time_ms > 0:
                self.next_metadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
                return False
            problem = self.verify_full_fetch_response_partitions(topic_partitions, ids, version)
            if problem is not None:
                log.info("%sNode %s sent an invalid full fetch response with %s", self.log_prefix, self.node, problem)
                self.next_metadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
                return False
            # 3. No session id: the leader keeps no session (cache full or sessions off).
            if response.session_id == INVALID_SESSION_ID:
                self.next_metadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
            else:
                self.next_metadata = FetchMetadata.new_incremental(response.session_id)
            return True
        # 4. Incremental: only partitions of the session may come back.
        problem = self.verify_incremental_fetch_response_partitions(topic_partitions, ids, version)
        if problem is not None:
            log.info("%sNode %s sent an invalid incremental fetch response with %s", self.log_prefix, self.node, problem)
            self.next_metadata = self.next_metadata.next_close_existing_attempt_new()
            return False
        if response.session_id == INVALID_SESSION_ID:
            self.next_metadata = FetchMetadata.INITIAL  # type: ignore[attr-defined]
        else:
            self.next_metadata = self.next_metadata.next_incremental()
        return True

    def notify_close(self) -> None:
        """Mirrors FetchSessionHandler#notifyClose: close the session on the next request."""
        self.next_metadata = self.next_metadata.next_close_existing()

    def handle_error(self, exc: BaseException) -> None:
        """Mirrors FetchSessionHandler#handleError: after a send failure, start a new session."""
        log.info("%sError sending fetch request %s to node %s: %r", self.log_prefix, self.next_metadata, self.node, exc)
        self.next_metadata = self.next_metadata.next_close_existing_attempt_new()

    def session_topic_partitions(self) -> set[TopicPartition]:
        """Mirrors FetchSessionHandler#sessionTopicPartitions."""
        return set(self.session_partitions)
