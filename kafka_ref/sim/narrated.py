"""``kafka-ref scenario NAME``: annotated walkthroughs keyed to the seeds' numbered steps.

Each walkthrough runs a small cluster in virtual time (trio, deterministic scheduling) and
prints one line per step it shows, tagged with the seed and step: ``[seed 000 step 5]``,
``[seed 001 §5.3.2.1]``, ``[seed 004 phase 3]``. The lines come from the state-change log
(structlog events, routed here by a processor) and from thin wrappers this module puts on the
objects of the running cluster (instance attributes only: the classes are untouched), so each
line is printed at the moment the code it describes runs. With ``--debug`` every step stops
in ``breakpoint()``: the frames up the stack are Kafka's method at that step (``up`` to see it),
and ``cluster`` in this frame is the whole cluster.

The walkthroughs themselves live in kafka_ref/sim/walkthroughs.py.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import anyio
import structlog
import trio.testing

from kafka_ref.common.layout import wrap as wrap_text
from kafka_ref.common.state_change import configure_logging

EventHandler = Callable[[dict], "tuple[str, str] | None"]


def manager_line(event: dict) -> str:
    """A ``fetcher_added`` event of "ReplicaFetcherManager on broker 1" as "broker 1: added fetcher ..."."""
    who = str(event.get("manager", "")).replace("ReplicaFetcherManager on ", "")
    return f"{who}: added fetcher to broker {event.get('leader')} for partitions {event.get('partitions')}"


class Narration:
    """Prints step lines; routes state-change events to handlers; stops at steps under --debug."""

    def __init__(self, out: Callable[[str], None], debug: bool = False, width: int | None = None) -> None:
        self.out = out
        self.width = width
        self.debug = debug
        self.lines: list[str] = []
        self.handlers: dict[str, EventHandler] = {}
        self.cluster: Any = None
        self.muted = False
        self.recorder: Any = None  # a TimelineRecorder under --svg

    def say(self, text: str) -> None:
        """A heading or an explanation (not a step)."""
        self.lines.append(text)
        for part in wrap_text(text, self.width):
            self.out(part)

    def step(self, ref: str, text: str) -> None:
        """One step: ``[ref] text``; under --debug, stop here."""
        if self.muted:
            return
        line = f"  [{ref}] {text}"
        self.lines.append(line)
        for part in wrap_text(line, self.width, indent=6):
            self.out(part)
        if self.recorder is not None:
            self.recorder.step(anyio.current_time(), ref, text, self.cluster)
        if self.debug:
            self.stop_in_kafka_code(ref)

    def stop_in_kafka_code(self, ref: str) -> None:
        """Open pdb in the frame of the kafka_ref method this step shows (not in the narration).

        The frames between (this module, the walkthrough's hooks, structlog) are skipped: pdb
        starts at the line of the mirrored method that logged the event, or that called the
        wrapped method; ``n`` steps on in that method, ``c`` runs to the next step, ``q`` ends
        the run. ``self.cluster`` is the whole cluster (``p narration.cluster``). A custom
        breakpoint hook (PYTHONBREAKPOINT, a test's) is used as is.
        """
        import bdb
        import os
        import pdb
        import sys

        if sys.breakpointhook is not sys.__breakpointhook__ or os.environ.get("PYTHONBREAKPOINT"):
            narration = self  # noqa: F841 - there to inspect in the debugger
            breakpoint()
            return
        frame = sys._getframe(1)
        target = kafka_frame(frame) or frame
        debugger = pdb.Pdb(skip=list(DEBUG_SKIPPED_MODULES))
        debugger.message(f"--- step [{ref}]: stopped in {target.f_code.co_qualname} "
                         f"({_repo_relative(target.f_code.co_filename)}:{target.f_lineno})")
        # As Pdb.set_trace does, trace every frame up to the bottom, but show ``target`` and
        # stay there instead of stopping at the next line of this method.
        debugger.reset()
        f = frame
        while f is not None:
            f.f_trace = debugger.trace_dispatch
            debugger.botframe = f
            f = f.f_back
        debugger._set_stopinfo(debugger.botframe, None, -1)  # no stop until a command asks for one
        sys.settrace(debugger.trace_dispatch)
        debugger.interaction(target, None)
        if debugger.quitting:  # ``q`` (or end of input): end the run here, as pdb's quit does
            sys.settrace(None)
            raise bdb.BdbQuit

    def on(self, event: str, handler: EventHandler) -> None:
        """Print ``handler(event_dict)`` (a (ref, text) pair, or None to skip) for every ``event``."""
        self.handlers[event] = handler

    def processor(self, _logger: Any, _method: str, event_dict: dict) -> Any:
        name = str(event_dict.get("event", ""))
        if self.recorder is not None:
            try:
                now = anyio.current_time()
            except RuntimeError:  # logged outside the event loop
                now = None
            if now is not None:
                self.recorder.observe(now, name, event_dict, cluster=self.cluster)
        handler = self.handlers.get(name)
        if handler is not None:
            shown = handler(event_dict)
            if shown is not None:
                self.step(*shown)
        raise structlog.DropEvent


#: Modules the debugger passes through: the narration, the walkthroughs and the log plumbing.
DEBUG_SKIPPED_MODULES = ("kafka_ref.sim.narrated", "kafka_ref.sim.walkthroughs", "kafka_ref.sim.walkthroughs_zk",
                         "kafka_ref.sim.timeline_svg", "kafka_ref.common.state_change", "structlog", "structlog.*",
                         "logging", "anyio.*", "trio.*", "outcome")


def kafka_frame(frame: Any) -> Any:
    """The frame a --debug stop shows: the nearest caller running kafka_ref code outside the
    narration (the mirrored method that logged the step's event, or the caller of a wrapped
    method); for a step the walkthrough itself prints, the walkthrough's frame."""
    walkthrough = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("kafka_ref.sim.walkthroughs"):
            walkthrough = walkthrough or frame
        elif module.startswith("kafka_ref.") and not module.startswith(("kafka_ref.sim.", "kafka_ref.common.state_change")):
            return frame
        elif not module.startswith(("kafka_ref.", "structlog", "logging")):
            break  # the event loop: no Kafka method below this step
        frame = frame.f_back
    return walkthrough


def _repo_relative(path: str) -> str:
    marker = "/kafka_ref/"
    return "kafka_ref/" + path.rsplit(marker, 1)[1] if marker in path else path


def wrap(obj: Any, method: str, before: Callable[..., None] | None = None,
         after: Callable[..., None] | None = None) -> None:
    """Replace ``obj.method`` (on this instance only) by one that calls ``before(*args)`` first
    and ``after(result, *args)`` afterwards."""
    original = getattr(obj, method)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            before(*args, **kwargs)
        result = original(*args, **kwargs)
        if after is not None:
            after(result, *args, **kwargs)
        return result

    setattr(obj, method, wrapper)


# name -> (description, function in kafka_ref.sim.walkthroughs)
NARRATED: dict[str, tuple[str, str]] = {
    "leader-and-isr": ("seed 000: ReplicaManager.becomeLeaderOrFollower's nine steps", "leader_and_isr"),
    "controller-failover": ("seed 001 §5.2: onControllerResignation and onControllerFailover", "controller_failover"),
    "partition-states": ("seed 001 §5.3.1-5.3.2: the partition state machine", "partition_states"),
    "replica-states": ("seed 001 §5.3.3: the replica state machine", "replica_states"),
    "replica-lifecycle": ("seed 002: a replica created, made follower, stopped and deleted", "replica_lifecycle"),
    "fetch-hw": ("seed 004 §1: the four phases of HW and LEO movement", "fetch_hw"),
    "consumer-offsets-migration": ("seed 000: __consumer_offsets immigration and emigration",
                                   "consumer_offsets_migration"),
}


def run_narrated(name: str, debug: bool = False, out: Callable[[str], None] = print, seed: int = 7,
                 svg: str | None = None, width: int | None = None) -> int:
    """Run one walkthrough; returns a process exit code. ``seed`` fixes the scheduling; ``svg``
    names a file to draw the run in (kafka_ref/sim/timeline_svg.py)."""
    from kafka_ref.sim import walkthroughs
    from kafka_ref.sim.simulate import deterministic_scheduling

    if name not in NARRATED:
        out(f"unknown scenario {name!r}; available: {', '.join(NARRATED)}")
        return 2
    description, function = NARRATED[name]
    walkthrough = getattr(walkthroughs, function)
    narration = Narration(out, debug, width)
    narration.say(f"kafka-ref scenario {name}: {description}")
    if svg is not None:
        from kafka_ref.sim.timeline_svg import TimelineRecorder

        narration.recorder = TimelineRecorder(title=f"kafka-ref scenario {name}: {description}")
    configure_logging(logging.DEBUG)
    structlog.configure(processors=[structlog.contextvars.merge_contextvars, narration.processor],
                        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
                        cache_logger_on_first_use=False)
    try:
        with deterministic_scheduling(seed):
            anyio.run(walkthrough, narration, backend="trio",
                      backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
    finally:
        configure_logging()
    narration.say(f"== done: {sum(1 for line in narration.lines if line.startswith('  ['))} steps shown")
    if svg is not None:
        with open(svg, "w", encoding="utf-8") as f:
            f.write(narration.recorder.svg())
        narration.say(f"timeline written to {svg}")
    return 0

