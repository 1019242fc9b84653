"""The event history of one simulated run: what the workload did, what the faults did, and
every state change the cluster logged.

The simulator (kafka_ref/sim/simulate.py) hooks a structlog processor (``History.processor``)
into the state-change log, so each ``state_change_logger(...).info("become_leader", ...)`` of a
broker or controller becomes one numbered event here; the workload adds produce / ack / consume
events and the nemeses add fault events. Each event renders to one canonical text line (sorted
keys, sets sorted, no memory addresses), so two runs of the same seed can be compared byte for
byte through ``digest()``, and a failing seed can be replayed as a readable timeline.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio
import structlog

from kafka_ref.common.layout import wrap

# Debug-level state-change events worth keeping (the rest of DEBUG is per-fetch chatter).
KEPT_DEBUG_EVENTS = frozenset({"high_watermark_updated", "partition_state_changed", "replica_state_changed"})
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_CONTEXT_KEYS = ("broker_id", "controller_id")
_DROPPED_KEYS = frozenset({"event", "level", "log_level", "logger", "timestamp"})

SOURCE_LOG = "log"
SOURCE_CLIENT = "client"
SOURCE_FAULT = "fault"
SOURCE_SIM = "sim"


def canonical(value: Any) -> str:
    """One stable text form for an event field: the same on every run and in every process.

    Sets are sorted (their iteration order follows string hashes, which PYTHONHASHSEED varies),
    dicts are sorted by key, and ``<... at 0x...>`` addresses are removed.
    """
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str):
        return _ADDRESS.sub("", value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(canonical(v) for v in value)) + "}"
    if isinstance(value, dict):
        items = sorted((canonical(k), canonical(v)) for k, v in value.items())
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return _ADDRESS.sub("", str(value))


@dataclass(slots=True)
class Event:
    """One numbered event: when (virtual ms), from where, what, and its fields."""

    index: int
    time_ms: float
    source: str
    name: str
    fields: dict[str, Any] = field(default_factory=dict)

    @property
    def who(self) -> str:
        if "broker_id" in self.fields:
            return f"broker {self.fields['broker_id']}"
        if "controller_id" in self.fields:
            return f"controller {self.fields['controller_id']}"
        return self.source

    def line(self) -> str:
        """The canonical line (what the digest hashes)."""
        body = " ".join(f"{k}={canonical(v)}" for k, v in sorted(self.fields.items()))
        return f"{self.index} {self.time_ms:.3f} {self.source} {self.name} {body}".rstrip()

    def readable(self) -> str:
        """A timeline line for people: time, who, what, the interesting fields (never cut)."""
        body = " ".join(f"{k}={canonical(v)}" for k, v in self.fields.items() if k not in _CONTEXT_KEYS)
        return f"#{self.index:<5} t={self.time_ms / 1000:9.3f}s  {self.who:<13} {self.name:<34} {body}".rstrip()


class History:
    """The recorder behind the invariant checker, the digest and the --trace timeline.

    ``listeners`` are called with each new event (the checker marks itself dirty there and
    checks once the current atomic step of the event loop is over).
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self.events: list[Event] = []
        self.listeners: list[Callable[[Event], None]] = []
        self._clock = clock or anyio.current_time
        self._origin = 0.0

    def start_clock(self) -> None:
        """Measure event times from now (the start of the simulated run)."""
        self._origin = self._clock()

    def now_ms(self) -> float:
        return (self._clock() - self._origin) * 1000.0

    def __len__(self) -> int:
        return len(self.events)

    @property
    def last_index(self) -> int:
        return len(self.events) - 1

    def append(self, source: str, name: str, **fields: Any) -> Event:
        event = Event(len(self.events), round(self.now_ms(), 3), source, name, fields)
        self.events.append(event)
        for listener in self.listeners:
            listener(event)
        return event

    # -- structlog hook ---------------------------------------------------------------------

    def processor(self, _logger: Any, method_name: str, event_dict: dict) -> Any:
        """A structlog processor: state-change events become history events, then are dropped."""
        name = str(event_dict.get("event", ""))
        if method_name == "debug" and name not in KEPT_DEBUG_EVENTS:
            raise structlog.DropEvent
        fields = {k: v for k, v in event_dict.items() if k not in _DROPPED_KEYS}
        if fields.get("exc_info"):
            exc = sys.exc_info()[1]
            fields["exc_info"] = f"{type(exc).__name__}: {exc}" if exc is not None else "True"
        if not _IDENTIFIER.match(name):
            # Free-text messages (the fetcher's Kafka-style log lines) keep their level.
            fields = {"message": name, **fields}
            name = f"log_{method_name}"
        try:
            self.append(SOURCE_LOG, name, **fields)
        except RuntimeError:
            # Logged outside the event loop (no clock): nothing to record.
            pass
        raise structlog.DropEvent

    # -- output -----------------------------------------------------------------------------

    def lines(self) -> list[str]:
        return [e.line() for e in self.events]

    def digest(self) -> str:
        """SHA-256 of the canonical lines: equal digests mean byte-identical histories."""
        h = hashlib.sha256()
        for event in self.events:
            h.update(event.line().encode())
            h.update(b"\n")
        return h.hexdigest()

    def timeline(self, names: Callable[[Event], bool] | None = None, width: int | None = None) -> list[str]:
        """The readable lines of the events ``names`` selects, wrapped at ``width`` (None: whole)."""
        return [part for e in self.events if names is None or names(e) for part in wrap(e.readable(), width, indent=24)]

    def count(self, name: str, source: str | None = None) -> int:
        return sum(1 for e in self.events if e.name == name and (source is None or e.source == source))
