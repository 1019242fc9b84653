"""Output laid out for a 100-column terminal: wrapped, never cut (``--wide`` prints lines whole)."""

from __future__ import annotations

import re

import pytest

from kafka_ref.common.layout import WIDTH, wrap
from kafka_ref.demos.demo import run_demo


def test_wrap_breaks_at_spaces_and_keeps_every_word():
    text = "  t=  18.000s  controller 0  partition_state_changed      " + " ".join(f"field{i}=value{i}" for i in range(20))
    lines = wrap(text, 60, indent=15)
    assert all(len(line) <= 60 for line in lines)
    assert all(line.startswith(" " * 15) for line in lines[1:])
    assert " ".join(line.strip() for line in lines).split() == text.split()
    assert wrap(text, None) == [text]
    assert wrap("x" * 120) == ["x" * 120]  # one long word is kept whole, not cut


@pytest.fixture(scope="module")
def failover_demo() -> tuple[list[str], list[str]]:
    narrow: list[str] = []
    wide: list[str] = []
    assert run_demo(out=narrow.append, width=WIDTH) == 0
    assert run_demo(out=wide.append, width=None) == 0
    return narrow, wide


def test_demo_lines_fit_100_columns_and_wide_prints_them_whole(failover_demo):
    narrow, wide = failover_demo
    assert max(len(line) for line in narrow) <= WIDTH
    assert max(len(line) for line in wide) > WIDTH
    # The same words in the same order: wrapping cuts nothing.
    assert " ".join(narrow).split() == " ".join(wide).split()
    assert not any(line.rstrip().endswith("...") for line in wide)


def test_demo_old_leader_really_truncates(failover_demo):
    """The restarted old leader holds two acks=1 writes nobody else got (LEO 5); the new leader's
    epoch started at offset 3, so it truncates to 3 and then copies record-after-failover."""
    _, wide = failover_demo
    text = "\n".join(wide)
    assert "produce unreplicated-3 (acks=1): error=0 offset=3" in text
    assert "produce unreplicated-4 (acks=1): error=0 offset=4" in text
    restarted = re.search(r"broker (\d) +become_follower +topic_partition=t-0 leader=\d leader_epoch=1 log_end_offset=5", text)
    assert restarted is not None
    [truncation] = [line for line in wide if "truncating_log" in line]
    assert "topic_partition=t-0 target_offset=3" in truncation
    assert wide[-2] == "  replicas: b0: LEO=4 HW=4, b1: LEO=4 HW=4, b2: LEO=4 HW=4"


def test_kraft_demo_prints_each_metadata_offset_once_and_sums_up_the_rest():
    lines: list[str] = []
    assert run_demo(mode="kraft", out=lines.append, width=None) == 0
    published = [re.search(r"metadata_publish +offset=(\d+) ", line).group(1) for line in lines
                 if re.search(r"metadata_publish +offset=", line)]
    assert len(published) == len(set(published)) >= 8
    summaries = [line for line in lines if line.startswith("  (the other brokers published the same metadata offsets: ")]
    assert summaries
    summed = [m.groups() for line in summaries for m in re.finditer(r"offset (\d+) by brokers? ([\d, ]+)", line)]
    # Every offset summed up was printed once in full, and the brokers named are the others.
    assert summed and all(offset in published for offset, _ in summed)
    assert any(len(brokers.split(", ")) == 2 for _, brokers in summed)
