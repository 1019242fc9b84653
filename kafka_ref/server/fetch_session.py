"""Incremental fetch sessions (KIP-227), the serving side.

Mirrors kafka.server.FetchSession.scala of Kafka 3.8: CachedPartition, FetchSession, the
FetchContext kinds, FetchSessionCache and FetchManager. The fetching side (FetchSessionHandler,
FetchMetadata) is kafka_ref.server.fetch_session_handler; its names are importable from here too.

Why: a follower fetching 10,000 partitions would otherwise list all of them in every request
and get all of them back in every response. With a session the first (full) fetch creates a
session on the leader; later (incremental) fetches list only partitions whose request changed
(usually the fetch offset after an append) and get back only partitions whose answer changed.

Differences from Kafka, all deliberate:

* one cache shard (Kafka 3.8 shards the cache to cut lock contention; one event loop has none);
* eviction keeps Kafka's rule and ordering (stale first, then the least valuable entry by
  (privileged, size, id)) but finds entries by a linear scan instead of three sorted trees;
* session ids come from a ``random.Random`` the broker passes, so a seeded cluster repeats;
* a partition is also re-sent when its last stable offset changed (Kafka's CachedPartition
  does not track the LSO; a read_committed consumer in a session could otherwise miss it);
* the session's partitions are keyed by TopicPartition (the lookup every fetch makes costs no
  Python call), and by (topic id, partition) while the broker cannot name the topic id. Kafka
  tells session partitions apart by topic id and partition (by name only without ids); the
  one case that differs: a partition listed again under the same name and a new topic id
  (the topic was deleted and recreated) replaces the cached one, moving it to the end of the
  session, where Kafka adds the new one at the end and keeps the old one until the request's
  forgotten list drops it (Kafka's fetchers always send that list: ``toReplace``).
"""

from __future__ import annotations

import structlog
import random
from collections.abc import Callable, Iterable, Mapping

from kafka_ref.common.errors import Errors
from kafka_ref.common.requests.fetch import FetchPartition, FetchRequest, FetchResponse, PartitionData
from kafka_ref.common.time import Time
from kafka_ref.common.topic_partition import TopicIdPartition, TopicPartition
from kafka_ref.common.utils import java_int, java_string_hash
from kafka_ref.common.uuid import ZERO_UUID, Uuid
from kafka_ref.server.fetch_session_handler import (  # (the fetching side's names, re-exported)
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchMetadata,
    FetchRequestData,
    FetchRequestPartitionData,
    FetchSessionHandler,
)

log = structlog.get_logger("kafka.server.FetchSession")

__all__ = [
    "FINAL_EPOCH", "INITIAL_EPOCH", "INVALID_SESSION_ID", "MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS",
    "CachedPartition", "FetchContext", "FetchManager", "FetchMetadata", "FetchRequestData", "FetchRequestPartitionData",
    "FetchSession", "FetchSessionCache", "FetchSessionHandler", "FullFetchContext", "IncrementalFetchContext",
    "SessionErrorContext", "SessionlessFetchContext", "session_key_of",
]

_INT_MAX = 0x7FFFFFFF
# Mirrors KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS.
MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000


# The request side of a CachedPartition made from a partition alone (every field -1).
_NO_REQUEST = FetchPartition(partition=-1, current_leader_epoch=-1, fetch_offset=-1, last_fetched_epoch=-1,
                             log_start_offset=-1, partition_max_bytes=-1)


def session_key_of(tip: TopicIdPartition) -> TopicPartition | tuple[Uuid, int]:
    """The key of a partition in a FetchSession's map: its TopicPartition, or (topic id,
    partition) while the broker cannot name the topic id (Kafka's null name; here "").

    Not a Kafka method: Kafka's map finds partitions by CachedPartition#equals.
    """
    return tip.topic_partition if tip.topic else (tip.topic_id, tip.partition)


class CachedPartition:
    """Mirrors kafka.server.CachedPartition: what the leader remembers of one session partition.

    The request side (fetch offset, max bytes, epochs, the fetcher's log start offset) lets an
    incremental request omit the partition; the response side (HW, LSO, local log start
    offset) lets an incremental response omit it when nothing changed.
    """

    __slots__ = ("topic", "partition", "topic_id", "max_bytes", "fetch_offset", "high_watermark",
                 "last_stable_offset", "leader_epoch", "fetcher_log_start_offset", "local_log_start_offset",
                 "last_fetched_epoch", "_tip", "_req")

    def __init__(self, tip: TopicIdPartition, req: FetchPartition | None = None, resp: PartitionData | None = None) -> None:
        """Mirrors kafka.server.CachedPartition#<init> (its three constructors): the partition alone (request side -1, Kafka's
        lookup key), with the request, or with the request and the response just sent."""
        self.topic = tip.topic
        self.partition = tip.partition
        self.topic_id = tip.topic_id
        # The TopicIdPartition and request data handed out on every fetch of the session, made
        # once (and again after the request side changes) instead of per fetch.
        self._tip: TopicIdPartition | None = None
        self._req: FetchPartition | None = None
        self.high_watermark = resp.high_watermark if resp is not None else -1
        self.last_stable_offset = resp.last_stable_offset if resp is not None else -1
        self.local_log_start_offset = resp.log_start_offset if resp is not None else -1
        self.update_request_params(req if req is not None else _NO_REQUEST)

    @property
    def topic_partition(self) -> TopicPartition:
        """Mirrors CachedPartition#topicPartition."""
        return TopicPartition(self.topic, self.partition)

    def session_key(self) -> TopicPartition | tuple[Uuid, int]:
        """The key of this partition in its session's map (``session_key_of`` of its identity)."""
        return TopicPartition(self.topic, self.partition) if self.topic else (self.topic_id, self.partition)

    def __eq__(self, other: object) -> bool:
        """Mirrors CachedPartition#equals: the same topic id and partition; without topic ids
        (a zero id) the same topic name and partition. A partition whose name is unknown
        equals the named one of the same id."""
        if self is other:
            return True
        if not isinstance(other, CachedPartition):
            return NotImplemented
        if self.topic_id != ZERO_UUID:
            return self.partition == other.partition and self.topic_id == other.topic_id
        return self.partition == other.partition and self.topic == other.topic

    def __hash__(self) -> int:
        """Mirrors CachedPartition#hashCode: by topic id when there is one, else by name."""
        if self.topic_id != ZERO_UUID:
            bits = self.topic_id.most_significant_bits ^ self.topic_id.least_significant_bits
            return java_int(31 * self.partition + java_int((bits >> 32) ^ bits))
        return java_int(31 * self.partition + java_string_hash(self.topic))

    def req_data(self) -> FetchPartition:
        """Mirrors CachedPartition#reqData: the cached request for this partition."""
        if self._req is not None:
            return self._req
        self._req = FetchPartition(partition=self.partition, current_leader_epoch=self.leader_epoch,
                              fetch_offset=self.fetch_offset, last_fetched_epoch=self.last_fetched_epoch,
                              log_start_offset=self.fetcher_log_start_offset, partition_max_bytes=self.max_bytes)
        return self._req

    def topic_id_partition(self) -> TopicIdPartition:
        """The partition with its topic id (what foreachPartition hands out), made once."""
        if self._tip is None:
            self._tip = TopicIdPartition(self.topic_id, TopicPartition(self.topic, self.partition))
        return self._tip

    def maybe_resolve_unknown_name(self, topic_names: Mapping[Uuid, str]) -> bool:
        """Mirrors CachedPartition#maybeResolveUnknownName: a partition added by an id the broker
        could not name then (Fetch v13+) takes the name once the metadata knows it. True if
        the name was found now."""
        if self.topic:
            return False
        name = topic_names.get(self.topic_id)
        if not name:
            return False
        self.topic = name
        self._tip = None
        return True

    def update_request_params(self, req: FetchPartition) -> None:
        """Mirrors CachedPartition#updateRequestParams."""
        self._req = None
        self.max_bytes = req.partition_max_bytes
        self.fetch_offset = req.fetch_offset
        self.fetcher_log_start_offset = req.log_start_offset
        self.leader_epoch = req.current_leader_epoch
        self.last_fetched_epoch = req.last_fetched_epoch

    def maybe_update_response_data(self, resp: PartitionData, update_response_data: bool) -> bool:
        """Mirrors CachedPartition#maybeUpdateResponseData: must this partition be sent back?

        Yes if it has records, its HW / LSO / log start offset changed, it has a preferred
        read replica, an error or a diverging epoch. An error also resets the cached HW to -1
        so the partition is sent again once the error clears.
        """
        must_respond = FetchResponse.records_size(resp) > 0
        if self.high_watermark != resp.high_watermark:
            must_respond = True
            if update_response_data:
                self.high_watermark = resp.high_watermark
        if self.last_stable_offset != resp.last_stable_offset:
            must_respond = True
            if update_response_data:
                self.last_stable_offset = resp.last_stable_offset
        if self.local_log_start_offset != resp.log_start_offset:
            must_respond = True
            if update_response_data:
                self.local_log_start_offset = resp.log_start_offset
        if FetchResponse.is_preferred_replica(resp):
            must_respond = True
        if resp.error_code != Errors.NONE.code:
            if update_response_data:
                self.high_watermark = -1
            must_respond = True
        if FetchResponse.is_diverging_epoch(resp):
            must_respond = True
        return must_respond

    def __repr__(self) -> str:
        return (f"CachedPartition(topicPartition={self.topic}-{self.partition}, maxBytes={self.max_bytes}, "
                f"fetchOffset={self.fetch_offset}, highWatermark={self.high_watermark}, "
                f"fetcherLogStartOffset={self.fetcher_log_start_offset}, localLogStartOffset={self.local_log_start_offset})")


class FetchSession:
    """Mirrors kafka.server.FetchSession: one session's partitions, epoch and timestamps.

    ``uses_topic_ids``: the session was opened by a request of version 13 or later (topics
    named by id); only requests of the same kind may continue it. ``partition_map`` is keyed
    by ``session_key_of``, in the order Kafka's ImplicitLinkedHashCollection keeps.
    """

    def __init__(self, session_id: int, privileged: bool, partition_map: dict[TopicPartition | tuple[Uuid, int], CachedPartition],
                 uses_topic_ids: bool, creation_ms: int, last_used_ms: int, epoch: int) -> None:
        self.id = session_id
        self.privileged = privileged
        self.partition_map = partition_map
        self.uses_topic_ids = uses_topic_ids
        self.creation_ms = creation_ms
        self.last_used_ms = last_used_ms
        self.epoch = epoch
        # The size last accounted in the cache (-1: not in the cache).
        self.cached_size = -1
        # Whether a partition may still lack its topic's name (not Kafka's: lets an incremental
        # fetch skip looking for names to resolve without visiting every partition). Set when an
        # unnamed partition joins; IncrementalFetchContext#foreachPartition clears it once all
        # are named.
        self.has_unnamed = any(not cached.topic for cached in partition_map.values())

    @property
    def size(self) -> int:
        """Mirrors FetchSession#size."""
        return len(self.partition_map)

    def is_empty(self) -> bool:
        """Mirrors FetchSession#isEmpty."""
        return not self.partition_map

    def evictable_key(self) -> tuple[bool, int, int]:
        """Mirrors FetchSession#evictableKey: (privileged, size, id) orders eviction value."""
        return (self.privileged, self.cached_size, self.id)

    @property
    def metadata(self) -> FetchMetadata:
        """Mirrors FetchSession#metadata."""
        return FetchMetadata(self.id, self.epoch)

    def get_fetch_offset(self, part: TopicIdPartition | TopicPartition) -> int | None:
        """Mirrors FetchSession#getFetchOffset (a TopicPartition: the named partition)."""
        if isinstance(part, TopicPartition):
            cached = self.partition_map.get(part)
        else:
            cached = self.find(part)[1]
        return cached.fetch_offset if cached is not None else None

    def find(self, tip: TopicIdPartition) -> tuple[TopicPartition | tuple[Uuid, int], CachedPartition | None]:
        """The session's partition equal to ``tip`` (CachedPartition#equals) and its key, or
        (tip's key, None): what Kafka's ``partitionMap.find(new CachedPartition(tip))`` finds.

        Usually the key lookup. When it misses and ``tip`` has a topic id, the partition may be
        held under its other key: unnamed while ``tip`` is named (found by id directly), or
        named while ``tip`` is not (found by a scan: only when the broker lost the name).
        """
        partition_map = self.partition_map
        key: TopicPartition | tuple[Uuid, int] = tip.topic_partition if tip.topic else (tip.topic_id, tip.partition)
        cached = partition_map.get(key)
        if cached is not None:
            # Found by name: the same partition unless the name now has another topic id.
            if cached.topic_id is tip.topic_id or tip.topic_id == ZERO_UUID or cached.topic_id == tip.topic_id:
                return key, cached
            return key, None
        if tip.topic_id == ZERO_UUID:
            return key, None
        if tip.topic:
            by_id = (tip.topic_id, tip.partition)
            cached = partition_map.get(by_id)
            return (by_id, cached) if cached is not None else (key, None)
        for other_key, cached in partition_map.items():
            if cached.partition == tip.partition and cached.topic_id == tip.topic_id:
                return other_key, cached
        return key, None

    def update(self, fetch_data: Mapping[TopicIdPartition, FetchPartition], to_forget: Iterable[TopicIdPartition],
               req_metadata: FetchMetadata | None = None) -> tuple[list[TopicIdPartition], list[TopicIdPartition], list[TopicIdPartition]]:
        """Mirrors FetchSession#update: apply an incremental request (returns added, updated, removed)."""
        added, updated, removed = [], [], []
        partition_map = self.partition_map
        # 1. Listed partitions get their request parameters refreshed, or join at the end.
        for tip, req in fetch_data.items():
            key = tip.topic_partition if tip.topic else (tip.topic_id, tip.partition)
            cached = partition_map.get(key)
            # (Identity first: a partition's requests usually carry one topic id object.)
            if cached is None or (cached.topic_id is not tip.topic_id and cached.topic_id != tip.topic_id):
                key, cached = self.find(tip)
            if cached is None:
                # A partition under the same name with another topic id is replaced (see the
                # module docstring): the new one goes to the end, as Kafka adds it.
                partition_map.pop(key, None)
                partition_map[key] = CachedPartition(tip, req)
                if not tip.topic:
                    self.has_unnamed = True
                added.append(tip)
            else:
                cached.update_request_params(req)
                updated.append(tip)
        # 2. Forgotten partitions leave the session (a forget naming an old topic id does not
        #    remove the partition re-added above under its new id).
        for tip in to_forget:
            key, cached = self.find(tip)
            if cached is not None:
                del partition_map[key]
                removed.append(tip)
        return added, updated, removed

    def __repr__(self) -> str:
        return (f"FetchSession(id={self.id}, privileged={self.privileged}, partitionMap.size={self.size}, "
                f"usesTopicIds={self.uses_topic_ids}, creationMs={self.creation_ms}, lastUsedMs={self.last_used_ms}, "
                f"epoch={self.epoch})")


class FetchContext:
    """Mirrors kafka.server.FetchContext: how one fetch request relates to a session."""

    def get_fetch_offset(self, tp: TopicPartition) -> int | None:
        """Mirrors FetchContext#getFetchOffset."""
        return None

    def foreach_partition(self, fun: Callable[[TopicIdPartition, FetchPartition], None]) -> None:
        """Mirrors FetchContext#foreachPartition: every partition this fetch covers."""

    def update_and_generate_response_data(self, updates: Mapping[TopicIdPartition, PartitionData]) -> FetchResponse:
        """Mirrors FetchContext#updateAndGenerateResponseData."""
        return FetchResponse.of(Errors.NONE.code, 0, INVALID_SESSION_ID, updates)


class SessionErrorContext(FetchContext):
    """Mirrors kafka.server.SessionErrorContext: the request named a bad session; answer the error."""

    def __init__(self, error: Errors, req_metadata: FetchMetadata) -> None:
        self.error = error
        self.req_metadata = req_metadata

    def update_and_generate_response_data(self, updates: Mapping[TopicIdPartition, PartitionData]) -> FetchResponse:
        """Mirrors SessionErrorContext#updateAndGenerateResponseData: the error, no partitions."""
        return FetchResponse.of(self.error.code, 0, INVALID_SESSION_ID, {})


class SessionlessFetchContext(FetchContext):
    """Mirrors kafka.server.SessionlessFetchContext: a full fetch that keeps no session."""

    def __init__(self, fetch_data: Mapping[TopicIdPartition, FetchPartition]) -> None:
        self.fetch_data = dict(fetch_data)

    def get_fetch_offset(self, part: TopicIdPartition | TopicPartition) -> int | None:
        """Mirrors SessionlessFetchContext#getFetchOffset (a TopicPartition: any id of that name)."""
        if isinstance(part, TopicIdPartition):
            req = self.fetch_data.get(part)
            return req.fetch_offset if req is not None else None
        for tip, req in self.fetch_data.items():
            if tip.topic_partition == part:
                return req.fetch_offset
        return None

    def foreach_partition(self, fun: Callable[[TopicIdPartition, FetchPartition], None]) -> None:
        """Mirrors SessionlessFetchContext#foreachPartition: the request's partitions."""
        for tip, req in self.fetch_data.items():
            fun(tip, req)


class FullFetchContext(SessionlessFetchContext):
    """Mirrors kafka.server.FullFetchContext: a full fetch that tries to open a session."""

    def __init__(self, time: Time, cache: "FetchSessionCache", req_metadata: FetchMetadata,
                 fetch_data: Mapping[TopicIdPartition, FetchPartition], is_from_follower: bool,
                 uses_topic_ids: bool = True) -> None:
        """``uses_topic_ids``: the request is of version 13 or later (Kafka's parameter comes
        before ``is_from_follower``; here it is last so that older callers keep working)."""
        super().__init__(fetch_data)
        self.time = time
        self.cache = cache
        self.req_metadata = req_metadata
        self.is_from_follower = is_from_follower
        self.uses_topic_ids = uses_topic_ids

    def update_and_generate_response_data(self, updates: Mapping[TopicIdPartition, PartitionData]) -> FetchResponse:
        """Mirrors FullFetchContext#updateAndGenerateResponseData: all partitions, plus a session id."""
        def create_partitions() -> dict[TopicPartition | tuple[Uuid, int], CachedPartition]:
            # 1. Remember every partition's request and the answer being sent.
            cached: dict[TopicPartition | tuple[Uuid, int], CachedPartition] = {}
            for tip, resp in updates.items():
                req = self.fetch_data.get(tip) or FetchPartition(partition=tip.partition)
                cached[tip.topic_partition if tip.topic else (tip.topic_id, tip.partition)] = CachedPartition(tip, req, resp)
            return cached

        # 2. The cache may refuse (full, or sessions disabled): then the id is 0.
        session_id = self.cache.maybe_create_session(self.time.milliseconds(), self.is_from_follower,
                                                     len(updates), create_partitions, uses_topic_ids=self.uses_topic_ids)
        return FetchResponse.of(Errors.NONE.code, 0, session_id, updates)


class IncrementalFetchContext(FetchContext):
    """Mirrors kafka.server.IncrementalFetchContext: a fetch within an existing session."""

    def __init__(self, time: Time, req_metadata: FetchMetadata, session: FetchSession,
                 topic_names: Mapping[Uuid, str] | None = None) -> None:
        self.time = time
        self.req_metadata = req_metadata
        self.session = session
        self.topic_names = topic_names

    def get_fetch_offset(self, tp: TopicPartition) -> int | None:
        """Mirrors IncrementalFetchContext#getFetchOffset."""
        return self.session.get_fetch_offset(tp)

    def foreach_partition(self, fun: Callable[[TopicIdPartition, FetchPartition], None]) -> None:
        """Mirrors IncrementalFetchContext#foreachPartition: every session partition, listed or not.

        A partition the broker could not name when it joined the session (an unknown topic id)
        is named now if the metadata has learnt the id (CachedPartition#maybeResolveUnknownName;
        only in a session using topic ids). An unnamed partition is keyed by its topic id here
        (``session_key_of``), so a resolved one is re-keyed in place.
        """
        session = self.session
        partition_map = session.partition_map
        if session.has_unnamed and self.topic_names and session.uses_topic_ids:
            topic_names = self.topic_names
            resolved = []
            unnamed_left = False
            for key, cached in partition_map.items():
                if cached.maybe_resolve_unknown_name(topic_names):
                    key = cached.topic_partition
                elif not cached.topic:
                    unnamed_left = True
                resolved.append((key, cached))
            partition_map.clear()
            partition_map.update(resolved)
            session.has_unnamed = unnamed_left
        # (The handed-out TopicIdPartition and request are made once per partition and kept:
        #  read directly, not through their getters, as this runs per partition per fetch.)
        for cached in list(partition_map.values()):
            part = cached._tip
            req = cached._req
            fun(part if part is not None else cached.topic_id_partition(), req if req is not None else cached.req_data())

    def left_out(self, tp: TopicPartition, high_watermark: int, last_stable_offset: int, log_start_offset: int,
                 records_size: int, error_code: int) -> bool:
        """Would ``update_and_generate_response_data`` leave this partition out, changing nothing?

        Not a Kafka method. Why it exists: in an idle session almost every partition is left out,
        and asking first lets KafkaApis skip building its PartitionData. True exactly when
        ``CachedPartition#maybeUpdateResponseData`` would answer false without updating the cache
        (no records, no error, HW, LSO and log start offset as cached; the caller checks the
        diverging epoch, and a replica fetch has no preferred read replica) or the session does
        not hold the partition.
        """
        cached = self.session.partition_map.get(tp)
        return cached is None or (
            records_size == 0 and error_code == 0 and cached.high_watermark == high_watermark
            and cached.last_stable_offset == last_stable_offset and cached.local_log_start_offset == log_start_offset
        )

    def update_and_generate_response_data(self, updates: Mapping[TopicIdPartition, PartitionData]) -> FetchResponse:
        """Mirrors IncrementalFetchContext#updateAndGenerateResponseData: only what changed."""
        session = self.session
        # 1. A concurrent request on the session moved its epoch: this one is a duplicate.
        expected_epoch = FetchMetadata.next_epoch(self.req_metadata.epoch)
        if session.epoch != expected_epoch:
            log.info("Incremental fetch session %s expected epoch %s, but got %s. Possible duplicate request.",
                     session.id, expected_epoch, session.epoch)
            return FetchResponse.of(Errors.INVALID_FETCH_SESSION_EPOCH.code, 0, session.id, {})
        # 2. Keep partitions whose answer changed; a kept one that returns records moves to the
        #    back of the session (so a size-limited response serves the others first next time).
        partition_map = session.partition_map
        selected: dict[TopicIdPartition, PartitionData] = {}
        for tip, resp in updates.items():
            key = tip.topic_partition if tip.topic else (tip.topic_id, tip.partition)
            cached = partition_map.get(key)
            if cached is None:
                continue
            if cached.maybe_update_response_data(resp, True):
                selected[tip] = resp
                records = resp.records
                if records is not None and records.size_in_bytes > 0:
                    del partition_map[key]
                    partition_map[key] = cached
        return FetchResponse.of(Errors.NONE.code, 0, session.id, selected)


class FetchSessionCache:
    """Mirrors kafka.server.FetchSessionCache (one shard).

    At most ``max_entries`` sessions (``max.incremental.fetch.session.cache.slots``; 0 turns
    sessions off). A new session may evict an existing one if it is stale (unused for longer
    than ``eviction_ms``), or, failing that, if the least valuable evictable session is worth
    less than the new one by (privileged, size, id): followers beat consumers, bigger beats
    smaller. Sessions younger than ``eviction_ms`` are evictable only by privileged sessions,
    and a privileged session only once it is that old.
    """

    def __init__(self, max_entries: int, eviction_ms: int = MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS,
                 rng: random.Random | None = None) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.rng = rng if rng is not None else random.Random(0)
        self.sessions: dict[int, FetchSession] = {}
        self.num_partitions = 0
        self.evictions = 0
        # Sessions evictable by any new session / by privileged new sessions only.
        self._evictable_by_all: set[int] = set()
        self._evictable_by_privileged: set[int] = set()

    def get(self, session_id: int) -> FetchSession | None:
        """Mirrors FetchSessionCache#get."""
        return self.sessions.get(session_id)

    @property
    def size(self) -> int:
        """Mirrors FetchSessionCache#size (the NumIncrementalFetchSessions gauge)."""
        return len(self.sessions)

    @property
    def total_partitions(self) -> int:
        """Mirrors FetchSessionCache#totalPartitions (NumIncrementalFetchPartitionsCached)."""
        return self.num_partitions

    def new_session_id(self) -> int:
        """Mirrors FetchSessionCache#newSessionId: a positive id not in use."""
        while True:
            session_id = self.rng.randint(1, _INT_MAX - 1)
            if session_id not in self.sessions and session_id != INVALID_SESSION_ID:
                return session_id

    def maybe_create_session(self, now: int, privileged: bool, size: int,
                             create_partitions: Callable[[], dict[TopicPartition | tuple[Uuid, int], CachedPartition]],
                             *, uses_topic_ids: bool = True) -> int:
        """Mirrors FetchSessionCache#maybeCreateSession: the new id, or 0 when there is no room.

        (Kafka passes ``usesTopicIds`` before ``createPartitions``; here it is a keyword.)
        """
        # 1. Room, or room made by evicting someone less valuable.
        if len(self.sessions) < self.max_entries or self.try_evict(privileged, (privileged, size, 0), now):
            session = FetchSession(self.new_session_id(), privileged, create_partitions(), uses_topic_ids, now, now,
                                   FetchMetadata.next_epoch(INITIAL_EPOCH))
            self.sessions[session.id] = session
            self.touch(session, now)
            return session.id
        # 2. No session: the fetcher will keep sending full requests.
        return INVALID_SESSION_ID

    def try_evict(self, privileged: bool, key: tuple[bool, int, int], now: int) -> bool:
        """Mirrors FetchSessionCache#tryEvict."""
        if not self.sessions:
            return False
        # 1. The least recently used session goes if it is stale.
        oldest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - oldest.last_used_ms > self.eviction_ms:
            self.remove(oldest)
            self.evictions += 1
            return True
        # 2. Else the least valuable evictable session goes if it is worth less than the new one.
        candidates = self._evictable_by_privileged if privileged else self._evictable_by_all
        if not candidates:
            return False
        victim = min((self.sessions[i] for i in candidates), key=FetchSession.evictable_key)
        if key < victim.evictable_key():
            return False
        self.remove(victim)
        self.evictions += 1
        return True

    def remove(self, session: FetchSession | int) -> FetchSession | None:
        """Mirrors FetchSessionCache#remove (by session or by id)."""
        if isinstance(session, int):
            found = self.sessions.get(session)
            if found is None:
                return None
            session = found
        self._evictable_by_all.discard(session.id)
        self._evictable_by_privileged.discard(session.id)
        removed = self.sessions.pop(session.id, None)
        if removed is not None:
            self.num_partitions -= session.cached_size
            session.cached_size = -1
        return removed

    def touch(self, session: FetchSession, now: int) -> None:
        """Mirrors FetchSessionCache#touch: update last use, size accounting and evictability."""
        # 1. Last used time.
        session.last_used_ms = now
        # 2. Re-account the session's size.
        if session.cached_size != -1:
            self.num_partitions -= session.cached_size
        session.cached_size = session.size
        self.num_partitions += session.cached_size
        # 3. Old enough sessions (and any consumer session, for followers) become evictable.
        old_enough = now - session.creation_ms > self.eviction_ms
        if not session.privileged or old_enough:
            self._evictable_by_privileged.add(session.id)
        else:
            self._evictable_by_privileged.discard(session.id)
        if old_enough:
            self._evictable_by_all.add(session.id)
        else:
            self._evictable_by_all.discard(session.id)


class FetchManager:
    """Mirrors kafka.server.FetchManager: picks the FetchContext for each fetch request."""

    def __init__(self, time: Time, cache: FetchSessionCache) -> None:
        self.time = time
        self.cache = cache

    def new_context(self, req_metadata: FetchMetadata, fetch_data: Mapping[TopicIdPartition, FetchPartition],
                    to_forget: Iterable[TopicIdPartition], is_follower: bool,
                    topic_names: Mapping[Uuid, str] | None = None,
                    req_version: int = FetchRequest.LATEST_VERSION) -> FetchContext:
        """Mirrors FetchManager#newContext (Kafka's first parameter, the request version, is last here)."""
        uses_topic_ids = req_version >= FetchRequest.TOPIC_ID_VERSION
        if req_metadata.is_full:
            # 1. A full fetch closes any session it names.
            if req_metadata.session_id != INVALID_SESSION_ID:
                self.cache.remove(req_metadata.session_id)
            # 2. FINAL_EPOCH: the fetcher wants no session.
            if req_metadata.epoch == FINAL_EPOCH:
                return SessionlessFetchContext(fetch_data)
            return FullFetchContext(self.time, self.cache, req_metadata, fetch_data, is_follower, uses_topic_ids)
        # 3. Incremental: the session must exist, be at the request's epoch, and name topics
        #    the way the request does (by id from version 13).
        session = self.cache.get(req_metadata.session_id)
        if session is None:
            return SessionErrorContext(Errors.FETCH_SESSION_ID_NOT_FOUND, req_metadata)
        if session.epoch != req_metadata.epoch:
            return SessionErrorContext(Errors.INVALID_FETCH_SESSION_EPOCH, req_metadata)
        if session.uses_topic_ids is not uses_topic_ids:
            return SessionErrorContext(Errors.FETCH_SESSION_TOPIC_ID_ERROR, req_metadata)
        # 4. Apply the changes; an emptied session is closed.
        session.update(fetch_data, to_forget, req_metadata)
        if session.is_empty():
            self.cache.remove(session)
            return SessionlessFetchContext(fetch_data)
        self.cache.touch(session, self.time.milliseconds())
        session.epoch = FetchMetadata.next_epoch(session.epoch)
        return IncrementalFetchContext(self.time, req_metadata, session, topic_names)

    def new_context_for_request(self, request: FetchRequest, topic_names: Mapping[Uuid, str] | None = None) -> FetchContext:
        """Mirrors KafkaApis#handleFetchRequest's call of newContext, fed from a FetchRequest."""
        version = request.version
        return self.new_context(FetchMetadata.of(request), request.fetch_data(topic_names),
                                request.forgotten_topics(topic_names), request.is_from_follower(), topic_names,
                                version if version is not None else request.request_version())
