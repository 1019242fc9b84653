"""SVG timelines of a run (``kafka-ref scenario NAME --svg``, ``kafka-ref sim --seed S --svg``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from kafka_ref.cli import main
from kafka_ref.sim import SimConfig, simulate
from kafka_ref.sim.timeline_svg import TimelineRecorder

SVG = "{http://www.w3.org/2000/svg}"


class _Log:
    def __init__(self, leo: int, hw: int) -> None:
        self.log_end_offset, self.high_watermark = leo, hw


class _Partition:
    def __init__(self, leo: int, hw: int, epoch: int, leader: bool) -> None:
        from kafka_ref.common.topic_partition import TopicPartition

        self.topic_partition = TopicPartition("t", 0)
        self.log = _Log(leo, hw)
        self.leader_epoch = epoch
        self.is_leader = leader


class _Broker:
    def __init__(self, partition: _Partition | None, running: bool = True) -> None:
        self.is_running = running
        self.replica_manager = type("RM", (), {"online_partitions": lambda _self: [partition] if partition else []})()


class _Cluster:
    def __init__(self, **brokers: _Broker) -> None:
        self.brokers = {int(k[1:]): v for k, v in brokers.items()}


def test_recorder_marks_elections_truncations_crashes_and_violations():
    r = TimelineRecorder(title="t")
    r.sample(0.0, _Cluster(b0=_Broker(_Partition(5, 5, 0, True)), b1=_Broker(_Partition(5, 5, 0, False))))
    r.observe(1.0, "broker_crashed", {"broker_id": 0}, cluster=_Cluster(
        b0=_Broker(None, running=False), b1=_Broker(_Partition(5, 5, 0, False))))
    r.sample(2.0, _Cluster(b0=_Broker(None, running=False), b1=_Broker(_Partition(5, 3, 1, True))))
    r.sample(3.0, _Cluster(b0=_Broker(_Partition(3, 3, 1, False)), b1=_Broker(_Partition(5, 5, 1, True))))
    r.violation(3.5, "[acked_write_durable] lost")
    kinds = [(m.time_s, m.lane, m.kind) for m in r.marks]
    assert kinds == [
        (0.0, "broker 0", "leader"),
        (1.0, "broker 0", "crash"),
        (2.0, "broker 1", "leader"),
        (3.5, "all", "violation"),
    ]
    # broker 0 came back with LEO 3 < 5 but after being down: not a truncation it was seen doing.
    assert r.samples[(0, "t-0")] == [(0.0, 5, 5, 0, True, True), (1.0, 5, 5, 0, False, False), (3.0, 3, 3, 1, False, True)]
    r.sample(4.0, _Cluster(b0=_Broker(_Partition(2, 2, 1, False)), b1=_Broker(_Partition(5, 5, 1, True))))
    assert [(m.time_s, m.lane, m.kind, m.text) for m in r.marks][-1] == (4.0, "broker 0", "truncate", "t-0 truncated: LEO 3 → 2")
    root = ET.fromstring(r.svg())
    titles = [t.text for t in root.iter(SVG + "title")]
    assert "3.500 s [acked_write_durable] lost" in titles
    assert any(line.get("stroke") == "red" for line in root.iter(SVG + "line"))


def test_scenario_svg_draws_every_broker_of_the_walkthrough(tmp_path, capsys):
    path = tmp_path / "fetch-hw.svg"
    assert main(["scenario", "fetch-hw", "--svg", str(path)]) == 0
    assert capsys.readouterr().out.endswith(f"timeline written to {path}\n")
    text = path.read_text()
    root = ET.fromstring(text)
    labels = [t.text for t in root.iter(SVG + "text")]
    assert [label for label in labels if label and label.startswith("broker ")] == ["broker 0", "broker 1", "broker 2"]
    assert "partition t-0" in text
    # The leader's HW reaches 2: the y scale runs 0..2 and the phases appear as step lines.
    assert "(0..2)" in text
    assert sum(1 for t in root.iter(SVG + "title") if t.text and "[seed 004 phase" in t.text) == 7
    # Reproducible: the same walkthrough draws the same bytes.
    again = tmp_path / "again.svg"
    assert main(["scenario", "fetch-hw", "--svg", str(again)]) == 0
    assert again.read_text() == text


def test_recording_a_simulation_changes_nothing_in_it():
    config = SimConfig(duration_s=10)
    plain = simulate(5, "back-to-back-failures", config)
    recorder = TimelineRecorder(topic="sim")
    drawn = simulate(5, "back-to-back-failures", config, recorder=recorder)
    assert drawn.digest == plain.digest
    from kafka_ref.sim.scenarios import get_scenario

    assert recorder.brokers == set(range(get_scenario("back-to-back-failures").brokers))
    assert any(m.kind == "fault" for m in recorder.marks)
    ET.fromstring(recorder.svg())
