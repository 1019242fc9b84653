"""kafka_ref's setting for CPython's cyclic garbage collector.

A simulated cluster keeps hundreds of thousands of long-lived objects (logs, partitions, replica
states, tasks) and allocates short-lived ones on every fetch (read results, offset metadata, fetch
state snapshots). With CPython's default thresholds (a young-generation collection every 700
container allocations) the collector runs many times per fetch and each older-generation pass
walks the long-lived heap: on an idle 1,000-partition cluster that was a third of the wall time.
kafka_ref's own processes (the ``kafka-ref`` command, the simulator's and the sweep's workers, the
benchmarks) therefore collect the young generation every 20,000 allocations, keeping CPython's
ratios between generations (10 and 10). It is a process-wide setting, so the library never applies
it behind a user's back: a user's test process opts in with ``kafka_ref.tune_gc()``.
``KAFKA_REF_DEFAULT_GC=1`` in the environment keeps CPython's defaults (to measure the difference).
"""

from __future__ import annotations

import gc
import os

YOUNG_GENERATION_THRESHOLD = 20_000


def tune_gc() -> bool:
    """Apply kafka_ref's collector thresholds to this process; False when the environment keeps the defaults."""
    if os.environ.get("KAFKA_REF_DEFAULT_GC") == "1":
        return False
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, older, oldest)
    return True
