"""kafka_ref.tune_gc: the collector setting kafka_ref's own processes use (kafka_ref/common/gc_tuning.py)."""

from __future__ import annotations

import gc

import kafka_ref
from kafka_ref.common.gc_tuning import YOUNG_GENERATION_THRESHOLD


def test_tune_gc_raises_only_the_young_generation_threshold(monkeypatch) -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        monkeypatch.delenv("KAFKA_REF_DEFAULT_GC", raising=False)
        assert kafka_ref.tune_gc() is True
        assert gc.get_threshold() == (YOUNG_GENERATION_THRESHOLD, 10, 10) == (20000, 10, 10)
        gc.set_threshold(700, 10, 10)
        monkeypatch.setenv("KAFKA_REF_DEFAULT_GC", "1")
        assert kafka_ref.tune_gc() is False
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
