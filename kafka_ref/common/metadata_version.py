"""Inter-broker protocol versions: which Kafka-era behaviour a broker follows.

Mirrors org.apache.kafka.server.common.MetadataVersion (the IBP part of it): the known version
strings of Kafka 3.8.0, their order, and the era switches the replication code reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, total_ordering

@total_ordering
@dataclass(frozen=True, slots=True)
class MetadataVersion:
    """Mirrors org.apache.kafka.server.common.MetadataVersion (the IBP part of it).

    ``inter.broker.protocol.version`` selects Kafka-era behaviour (docs/DESIGN.md §1.9). Accepts
    ``"0.10.2"``, ``"0.11.0"``, ``"2.0"``, ``"2.7-IV2"``, ``"3.8"``; compares by release.
    """

    release: tuple[int, ...]
    text: str
    # Answers of ``is_at_least`` by version text. Why it exists: era switches are read on every
    # append, fetch and HW check; each version text is compared once per MetadataVersion.
    _at_least: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Era switches used across the replication code (docs/DESIGN.md §1.9), plain attributes set
    # once when the version is made (they are read on every append, fetch and HW check):
    # KIP-101 (0.11): followers ask OffsetsForLeaderEpoch instead of truncating to HW.
    uses_leader_epoch_for_truncation: bool = field(init=False, repr=False, compare=False)
    # KIP-279 (2.0): OffsetsForLeaderEpoch answers carry the epoch; multi-round truncation.
    uses_kip279_truncation: bool = field(init=False, repr=False, compare=False)
    # KIP-320/595 (2.7): the fetch response's diverging epoch drives truncation.
    truncates_on_fetch: bool = field(init=False, repr=False, compare=False)
    # KAFKA-15583 (broker 3.7.0): the leader does not advance HW while the ISR is below the
    # effective min ISR. A rule of the broker's code, not of the IBP: read it from
    # ``KafkaConfig.broker_version``.
    no_hw_advance_below_min_isr: bool = field(init=False, repr=False, compare=False)
    # KAFKA-15583 (broker 3.7.0): Partition#effectiveMinIsr is min.insync.replicas capped at the
    # number of replicas. A rule of the broker's code: read it from ``broker_version``.
    caps_min_isr_at_replica_count: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, since in _ERA_SWITCHES:
            object.__setattr__(self, name, self.release >= since)

    @classmethod
    def parse(cls, text: str) -> "MetadataVersion":
        """Mirrors MetadataVersion#fromVersionString: a known IBP version string, else ValueError.

        1. Keep the first three dot-separated parts of a ``0.`` version and the first two of any
        other (so ``0.8.2.1`` reads as ``0.8.2`` and ``3.8.0`` as ``3.8``); 2. the result must be a
        version Kafka 3.8 knows: a release with its IV (``2.7-IV2``) or a production release
        alone (``2.7``, standing for its last IV); 3. compare by release (the IV steps within a
        release are not told apart).
        """
        # 1. The lookup key.
        segments = str(text).split(".")
        count = 3 if str(text).startswith("0.") else 2
        key = str(text) if count >= len(segments) else ".".join(segments[:count])
        # 2. A known version string.
        release_text, _, iv = key.partition("-")
        ivs = _IBP_RELEASES.get(release_text)
        known = ivs is not None and (iv in ivs if iv else release_text not in _NON_PRODUCTION_RELEASES)
        if not known:
            raise ValueError(f"Version {text} is not a valid version")
        # 3. The release, padded to three parts for 1.x and later.
        nums = tuple(int(p) for p in release_text.split("."))
        release = nums if nums[0] == 0 else (nums[0], nums[1], 0)
        return cls(release, key)

    def is_at_least(self, other: "str | MetadataVersion") -> bool:
        if isinstance(other, MetadataVersion):
            return self.release >= other.release
        answer = self._at_least.get(other)
        if answer is None:
            answer = self._at_least[other] = self.release >= _parse_cached(other).release
        return answer

    def __lt__(self, other: "MetadataVersion") -> bool:
        return self.release < other.release

    def is_topic_ids_supported(self) -> bool:
        """Mirrors MetadataVersion#isTopicIdsSupported: topics carry ids from IBP 2.8 (KIP-516)."""
        return self.is_at_least("2.8")

    def fetch_request_version(self) -> int:
        """Mirrors MetadataVersion#fetchRequestVersion: the Fetch version a follower sends at this
        IBP (by release; the IV steps within 3.5 are not told apart). Topic ids from 13 (3.1)."""
        for release, version in _FETCH_REQUEST_VERSIONS:
            if self.is_at_least(release):
                return version
        return 1

    def __str__(self) -> str:
        return self.text


_parse_cached = lru_cache(maxsize=64)(MetadataVersion.parse)
# Each era switch and the release (as ``parse`` pads it) it starts at.
_ERA_SWITCHES = (
    ("uses_leader_epoch_for_truncation", (0, 11, 0)),
    ("uses_kip279_truncation", (2, 0, 0)),
    ("truncates_on_fetch", (2, 7, 0)),
    ("no_hw_advance_below_min_isr", (3, 7, 0)),
    ("caps_min_isr_at_replica_count", (3, 7, 0)),
)

# MetadataVersion's IBP versions in Kafka 3.8.0: each release and its IV steps ("" for the releases
# before IV steps existed, whose version string is the release alone, e.g. 0.8.0).
_IBP_RELEASES = {
    "0.8.0": ("",), "0.8.1": ("",), "0.8.2": ("",), "0.9.0": ("",),
    "0.10.0": ("IV0", "IV1"), "0.10.1": ("IV0", "IV1", "IV2"), "0.10.2": ("IV0",), "0.11.0": ("IV0", "IV1", "IV2"),
    "1.0": ("IV0",), "1.1": ("IV0",), "2.0": ("IV0", "IV1"), "2.1": ("IV0", "IV1", "IV2"), "2.2": ("IV0", "IV1"),
    "2.3": ("IV0", "IV1"), "2.4": ("IV0", "IV1"), "2.5": ("IV0",), "2.6": ("IV0",), "2.7": ("IV0", "IV1", "IV2"),
    "2.8": ("IV0", "IV1"), "3.0": ("IV0", "IV1"), "3.1": ("IV0",), "3.2": ("IV0",), "3.3": ("IV0", "IV1", "IV2", "IV3"),
    "3.4": ("IV0",), "3.5": ("IV0", "IV1", "IV2"), "3.6": ("IV0", "IV1", "IV2"), "3.7": ("IV0", "IV1", "IV2", "IV3", "IV4"),
    "3.8": ("IV0",), "3.9": ("IV0",),
}
# Releases past MetadataVersion.LATEST_PRODUCTION (3.8-IV0): only their IV strings are known.
_NON_PRODUCTION_RELEASES = frozenset({"3.9"})

# MetadataVersion#fetchRequestVersion's table, newest first.
_FETCH_REQUEST_VERSIONS = (("3.7", 16), ("3.5", 15), ("3.1", 13), ("2.7", 12), ("2.3", 11), ("2.1", 10),
                           ("2.0", 8), ("1.1", 7), ("0.11.0", 5), ("0.10.1", 3), ("0.10.0", 2))

LATEST_IBP = "3.8"
# The Kafka release whose broker code kafka_ref runs unless ``kafka_ref.broker.version`` says otherwise.
LATEST_BROKER_VERSION = "3.8"
