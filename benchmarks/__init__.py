"""Fetch-throughput benchmarks for kafka_ref and the PySpark sweep harness.

- ``run_config(config)`` (fetch_throughput.py): one configuration in an in-process cluster.
- ``run_limit(config)`` (limit.py): the same batches over the same Network with an echo fetch.
- ``peers/``: the same records through mockafka-py, an in-memory Kafka fake.
- ``sweep.py``: a grid of configurations run in Spark executors (``kafka-ref sweep``).

Names are imported lazily so ``python -m benchmarks.<module>`` runs each module cleanly.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "run_config": "benchmarks.fetch_throughput",
    "profile_config": "benchmarks.fetch_throughput",
    "run_limit": "benchmarks.limit",
    "with_limit": "benchmarks.limit",
    "run_sweep": "benchmarks.sweep",
    "DEFAULTS": "benchmarks.workload",
    "BenchmarkConfigError": "benchmarks.workload",
    "normalize_config": "benchmarks.workload",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'benchmarks' has no attribute {name!r}")
