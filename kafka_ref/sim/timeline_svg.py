"""Draw a run as an SVG timeline: ``kafka-ref scenario NAME --svg`` and ``kafka-ref sim --seed S --svg``.

One lane per broker and one for the controller, loop time left to right. In a broker's lane the
background band is coloured by the leader epoch that broker knows for the drawn partition (solid
while it leads, pale while it follows, grey while the broker is down); a solid line is that
replica's log end offset, a dashed line its high watermark. Marks: broker crashes and starts,
elections (a new leader epoch), truncations (a replica's LEO going down), ISR changes, injected
faults, and invariant violations as red lines across every lane. Hover a mark for its details.

The recorder only reads state: it is called at each state-change event (the narration's
processor, the simulator's history listener) and samples every running replica of the drawn
topic then, so recording changes nothing in the run (same history digest with or without it).
The SVG is written by hand (no plotting dependency) and is byte-for-byte reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

# Leader epochs cycle through these fills (colour-blind-safe palette, Okabe–Ito).
EPOCH_COLOURS = ("#56b4e9", "#e69f00", "#009e73", "#cc79a7", "#0072b2", "#d55e00", "#f0e442", "#999999")
DOWN_COLOUR = "#d9d9d9"
FAULT_EVENTS_FROM_LOG = {"broker_crashed": "crash", "broker_started": "start", "controller_elected": "controller",
                         "isr_updated": "isr", "shrinking_isr": "isr", "partition_isr_shrunk_for_offline_replica": "isr",
                         "alter_partition_applied": "isr"}


@dataclass
class Mark:
    time_s: float
    lane: str  # "controller" or "broker N"
    kind: str  # crash, start, leader, truncate, isr, fault, controller, violation
    text: str


@dataclass
class TimelineRecorder:
    """Collects replica samples and marks while a run goes; ``svg()`` draws them."""

    topic: str | None = None  # the topic drawn (None: the first non-internal topic seen)
    title: str = ""
    brokers: set[int] = field(default_factory=set)
    # (broker, partition) -> [(time_s, leo, hw, leader_epoch, is_leader, up)], only when something changed
    samples: dict[tuple[int, str], list[tuple[float, int, int, int, bool, bool]]] = field(default_factory=dict)
    marks: list[Mark] = field(default_factory=list)
    end_s: float = 0.0

    # -- recording ------------------------------------------------------------------------

    def observe(self, time_s: float, name: str, fields: dict[str, Any], source: str = "log", cluster: Any = None) -> None:
        """One state-change (or fault) event at loop time ``time_s``; samples ``cluster`` if given."""
        self.end_s = max(self.end_s, time_s)
        who = f"broker {fields['broker_id']}" if "broker_id" in fields else "controller"
        if source == "fault":
            detail = " ".join(f"{k}={v}" for k, v in fields.items())
            lane = f"broker {fields['broker']}" if isinstance(fields.get("broker"), int) else "controller"
            self.marks.append(Mark(time_s, lane, "fault", f"{name} {detail}".strip()))
        elif name in FAULT_EVENTS_FROM_LOG:
            detail = " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("broker_id", "controller_id"))
            lane = who if FAULT_EVENTS_FROM_LOG[name] in ("crash", "start") else "controller"
            self.marks.append(Mark(time_s, lane, FAULT_EVENTS_FROM_LOG[name], f"{name} {detail}".strip()))
        if cluster is not None:
            self.sample(time_s, cluster)

    def sample(self, time_s: float, cluster: Any) -> None:
        for broker_id, broker in sorted(cluster.brokers.items()):
            self.brokers.add(broker_id)
            partitions = broker.replica_manager.online_partitions() if broker.is_running else []
            seen = set()
            for p in partitions:
                tp = p.topic_partition
                if tp.topic.startswith("__"):
                    continue
                if self.topic is None:
                    self.topic = tp.topic
                if tp.topic != self.topic or p.log is None:
                    continue
                key = (broker_id, f"{tp.topic}-{tp.partition}")
                seen.add(key)
                self._add(key, (time_s, p.log.log_end_offset, p.log.high_watermark, p.leader_epoch, p.is_leader, True))
            for key, series in self.samples.items():
                if key[0] == broker_id and key not in seen and series[-1][5]:
                    self._add(key, (time_s, series[-1][1], series[-1][2], series[-1][3], False, False))

    def _add(self, key: tuple[int, str], point: tuple[float, int, int, int, bool, bool]) -> None:
        series = self.samples.setdefault(key, [])
        if series and series[-1][1:] == point[1:]:
            return
        if series and point[5] and series[-1][5] and point[1] < series[-1][1]:
            self.marks.append(Mark(point[0], f"broker {key[0]}", "truncate",
                                   f"{key[1]} truncated: LEO {series[-1][1]} → {point[1]}"))
        if point[5] and point[4] and (not series or not series[-1][4] or series[-1][3] != point[3]):
            self.marks.append(Mark(point[0], f"broker {key[0]}", "leader", f"{key[1]} leader, epoch {point[3]}"))
        series.append(point)

    def step(self, time_s: float, ref: str, text: str, cluster: Any = None) -> None:
        """A narrated step: a thin grey line across the lanes (its text on hover)."""
        self.end_s = max(self.end_s, time_s)
        self.marks.append(Mark(time_s, "all", "step", f"[{ref}] {text}"))
        if cluster is not None:
            self.sample(time_s, cluster)

    def violation(self, time_s: float, text: str) -> None:
        self.marks.append(Mark(time_s, "all", "violation", text))

    # -- drawing --------------------------------------------------------------------------

    def partition(self) -> str | None:
        """The partition drawn: the one of ``topic`` with the most samples."""
        counts: dict[str, int] = {}
        for (_, tp), series in self.samples.items():
            counts[tp] = counts.get(tp, 0) + len(series)
        return min(counts, key=lambda tp: (-counts[tp], tp)) if counts else None

    def svg(self, width: int = 1000) -> str:
        tp = self.partition()
        brokers = sorted(self.brokers)
        left, right, top, lane_h, gap, ctrl_h = 90, 20, 58, 92, 10, 34
        plot_w = width - left - right
        height = top + ctrl_h + gap + len(brokers) * (lane_h + gap) + 40
        t_end = max(self.end_s, 1e-3)
        max_offset = max([max(s[1], s[2]) for series in self.samples.values() for s in series] + [1])

        def x(t: float) -> float:
            return round(left + plot_w * t / t_end, 1)

        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
               f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="11">',
               f'<rect width="{width}" height="{height}" fill="white"/>',
               f'<text x="{left}" y="18" font-size="14" font-weight="bold">{escape(self.title)}</text>',
               f'<text x="{left}" y="36" fill="#444">partition {escape(tp or "-")}: band = leader epoch known to '
               f'the broker (solid: it leads, pale: it follows, grey: down); solid line LEO, dashed HW '
               f'(0..{max_offset})</text>']
        # The controller lane: controller elections, ISR changes, faults without a broker.
        y0 = top
        out.append(f'<text x="8" y="{y0 + ctrl_h / 2 + 4}" font-weight="bold">controller</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{plot_w}" height="{ctrl_h}" fill="#f7f7f7" stroke="#ccc"/>')
        lanes = {"controller": (y0, ctrl_h)}
        y = top + ctrl_h + gap
        for b in brokers:
            lanes[f"broker {b}"] = (y, lane_h)
            out.append(f'<text x="8" y="{y + lane_h / 2 + 4}" font-weight="bold">broker {b}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{plot_w}" height="{lane_h}" fill="white" stroke="#ccc"/>')
            series = self.samples.get((b, tp), []) if tp else []
            if not series:
                out.append(f'<text x="{left + 6}" y="{y + 14}" fill="#888">no replica of {escape(tp or "the topic")}</text>')
            out.extend(self._bands(series, x, y, lane_h, t_end))
            out.extend(self._lines(series, x, y, lane_h, t_end, max_offset))
            y += lane_h + gap
        out.extend(self._marks(x, lanes, top, y - gap))
        # Time axis.
        out.append(f'<line x1="{left}" y1="{y}" x2="{left + plot_w}" y2="{y}" stroke="#333"/>')
        step = _tick_step(t_end)
        t = 0.0
        while t <= t_end + 1e-9:
            out.append(f'<line x1="{x(t)}" y1="{y}" x2="{x(t)}" y2="{y + 4}" stroke="#333"/>')
            out.append(f'<text x="{x(t)}" y="{y + 16}" text-anchor="middle">{t:g} s</text>')
            t = round(t + step, 6)
        out.append(f'<text x="{left + plot_w}" y="{y + 32}" text-anchor="end" fill="#444">loop time (virtual); '
                   f'▲ start ✕ crash ★ new leader epoch ▼ truncation ◆ ISR change ● fault ┆ step │ violation (red)</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def _bands(self, series: list, x: Any, y: float, h: float, t_end: float) -> list[str]:
        # One band per run of samples with the same epoch, role and liveness.
        runs: list[tuple[float, int, bool, bool]] = []
        for t, _leo, _hw, epoch, leads, up in series:
            if not runs or runs[-1][1:] != (epoch, leads, up):
                runs.append((t, epoch, leads, up))
        out = []
        for i, (t, epoch, leads, up) in enumerate(runs):
            t_next = runs[i + 1][0] if i + 1 < len(runs) else t_end
            if t_next <= t:
                continue
            colour = EPOCH_COLOURS[epoch % len(EPOCH_COLOURS)] if up and epoch >= 0 else DOWN_COLOUR
            opacity = 0.55 if up and leads else (0.18 if up else 1.0)
            label = ("leader" if leads else "follower") + f", epoch {epoch}" if up else "down"
            out.append(f'<rect x="{x(t)}" y="{y}" width="{max(x(t_next) - x(t), 0.5)}" height="{h}" fill="{colour}" '
                       f'fill-opacity="{opacity}"><title>{escape(label)} from {t:.3f} s</title></rect>')
            if x(t_next) - x(t) > 60 and up:
                out.append(f'<text x="{x(t) + 3}" y="{y + 12}" fill="#222">e{epoch}{" L" if leads else ""}</text>')
        return out

    def _lines(self, series: list, x: Any, y: float, h: float, t_end: float, max_offset: int) -> list[str]:
        def yv(v: int) -> float:
            return round(y + h - 6 - (h - 22) * v / max_offset, 1)

        out = []
        for column, dash in ((1, ""), (2, ' stroke-dasharray="5,3"')):
            # Step lines, one polyline per stretch the broker was up; a vertex only where the pixel moves.
            segments: list[list[tuple[float, float]]] = []
            current: list[tuple[float, float]] = []
            for point in series:
                if not point[5]:
                    if current:
                        current.append((x(point[0]), current[-1][1]))
                        segments.append(current)
                    current = []
                    continue
                px, py = x(point[0]), yv(point[column])
                if current and current[-1][1] == py:
                    continue
                if current:
                    current.append((px, current[-1][1]))
                current.append((px, py))
            if current:
                current.append((x(t_end), current[-1][1]))
                segments.append(current)
            for segment in segments:
                points = " ".join(f"{px:g},{py:g}" for px, py in _dedupe(segment))
                out.append(f'<polyline points="{points}" fill="none" stroke="#111"{dash}/>')
        return out

    def _marks(self, x: Any, lanes: dict[str, tuple[float, float]], top: float, bottom: float) -> list[str]:
        glyphs = {"crash": ("✕", "#000"), "start": ("▲", "#1a7f37"), "leader": ("★", "#6a3d9a"),
                  "truncate": ("▼", "#b15928"), "isr": ("◆", "#1f78b4"), "fault": ("●", "#e66101"),
                  "controller": ("★", "#333")}
        out = []
        for mark in sorted(self.marks, key=lambda m: (m.time_s, m.lane, m.kind, m.text)):
            if mark.kind in ("violation", "step"):
                style = 'stroke="red" stroke-width="2"' if mark.kind == "violation" else \
                    'stroke="#777" stroke-width="1" stroke-dasharray="1,3"'
                out.append(f'<line x1="{x(mark.time_s)}" y1="{top}" x2="{x(mark.time_s)}" y2="{bottom}" {style}>'
                           f'<title>{escape(f"{mark.time_s:.3f} s {mark.text}")}</title></line>')
                continue
            lane_y, lane_h = lanes.get(mark.lane, lanes["controller"])
            glyph, colour = glyphs.get(mark.kind, ("•", "#333"))
            row = {"crash": 0, "start": 0, "leader": 1, "controller": 1, "truncate": 2, "isr": 2}.get(mark.kind, 0)
            if mark.lane == "controller":
                ty = lane_y + 14 + (row % 2) * 12
            elif mark.kind == "fault":  # injected faults along the top of the lane
                ty = lane_y + 26
            else:
                ty = lane_y + lane_h - 8 - row * 11
            out.append(f'<text x="{x(mark.time_s)}" y="{ty}" fill="{colour}" text-anchor="middle" font-size="12">'
                       f'{glyph}<title>{escape(f"{mark.time_s:.3f} s {mark.lane}: {mark.text}")}</title></text>')
        return out


def _dedupe(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Drop repeated vertices and the middle of horizontal runs (same pixel row)."""
    kept: list[tuple[float, float]] = []
    for p in points:
        if kept and kept[-1] == p:
            continue
        if len(kept) >= 2 and kept[-1][1] == p[1] == kept[-2][1]:
            kept[-1] = p
            continue
        kept.append(p)
    return kept


def _tick_step(t_end: float) -> float:
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120):
        if t_end / step <= 12:
            return float(step)
    return float(round(t_end / 10))
