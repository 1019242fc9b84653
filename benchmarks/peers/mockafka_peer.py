"""mockafka-py as a peer: produce → consume through an in-memory Kafka fake.

mockafka-py (PyPI ``mockafka-py``, import ``mockafka``) fakes confluent-kafka's Producer,
Consumer and AdminClient with a process-wide dict of per-partition message lists: one replica,
no network, no batches, no protocol. ``run_mockafka(config)`` sends ``total_records`` records
of ``record_size`` bytes (keys and values built before timing, partitions chosen as
``run_config`` chooses them), then consumes them all with a subscribed FakeConsumer, and
reports records/s over both phases. ``compare_with_mockafka`` puts it beside kafka_ref at
replication factor 1 and 3 with acks=all.

mockafka-py and kafka_ref do different work: a mockafka record costs a Message object and a
list append; a kafka_ref record travels in a v2 batch through produce validation, the leader
log, fetch sessions and follower fetches. The ratio says what that fidelity costs.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from benchmarks.workload import TOPIC, config_columns, environment, normalize_config, peak_rss_mb


def mockafka_available() -> str | None:
    """None when mockafka-py imports, else the reason it does not."""
    try:
        import mockafka  # noqa: F401
    except Exception as exc:  # ImportError, or its confluent-kafka dependency failing to load
        return f"{type(exc).__name__}: {exc}"
    return None


def run_mockafka(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """Produce then consume ``total_records`` records through mockafka-py; records/s over both."""
    c = normalize_config(config)
    result: dict[str, Any] = {"runner": "mockafka", **config_columns(c), **environment(c)}
    reason = mockafka_available()
    if reason is not None:
        return {**result, "ok": False, "error": f"mockafka-py not importable: {reason}"}
    try:
        from mockafka import FakeAdminClientImpl, FakeConsumer, FakeProducer
        from mockafka.admin_client import NewTopic
        from mockafka.kafka_store import KafkaStore

        # 1. A fresh store with the topic.
        KafkaStore(clean=True)
        FakeAdminClientImpl().create_topics([NewTopic(TOPIC, num_partitions=c["partitions"])])
        producer, consumer = FakeProducer(), FakeConsumer()
        # 2. Everything a record needs, built before timing.
        total, rpb, active, size = c["total_records"], c["records_per_batch"], c["active_partitions"], c["record_size"]
        value = (b"01234567" * (size // 8 + 1))[:size]
        sends = [((b"key-%d" % i) if c["keyed"] else None, (i // rpb) % active) for i in range(total)]
        # 3. Produce, then consume everything.
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for key, partition in sends:
            producer.produce(TOPIC, value=value, key=key, partition=partition)
        producer.flush()
        produced_s = time.perf_counter() - wall0
        consumer.subscribe([TOPIC])
        consumed = 0
        while consumed < total:
            messages = consumer.consume(num_messages=1000)
            if not messages:
                break
            consumed += len(messages)
        wall_s = time.perf_counter() - wall0
        cpu_s = time.process_time() - cpu0
        consumer.close()
        KafkaStore(clean=True)
        if consumed != total:
            raise RuntimeError(f"consumed {consumed} of {total} records")
        result.update({
            "ok": True, "error": None, "records": total, "wall_s": wall_s, "produce_s": produced_s,
            "records_per_s": total / wall_s, "produce_records_per_s": total / max(produced_s, 1e-9),
            "mb_per_s": total * size / wall_s / 1e6, "cpu_s": cpu_s, "peak_rss_mb": peak_rss_mb(),
        })
    except Exception as exc:
        result.update({"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=8)})
    return result


def compare_with_mockafka(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """mockafka-py beside kafka_ref at RF 1 and RF 3 (acks=all), with kafka_ref / mockafka ratios."""
    from benchmarks.fetch_throughput import run_config

    base = dict(config or {})
    peer = run_mockafka(base)
    rows = [peer]
    for rf in (1, 3):
        cfg = {**base, "replication_factor": rf, "brokers": max(3, int(base.get("brokers", 3))), "acks": "all"}
        row = run_config(cfg)
        if row.get("ok") and peer.get("ok"):
            row["mockafka_records_per_s"] = peer["records_per_s"]
            row["ratio_to_mockafka"] = row["records_per_s"] / peer["records_per_s"]
        rows.append(row)
    return rows


def main() -> int:
    import sys

    from benchmarks.fetch_throughput import parse_assignments

    config = parse_assignments(sys.argv[1:])
    for row in compare_with_mockafka(config):
        rf = row.get("cfg_replication_factor") if row["runner"] == "kafka_ref" else 1
        line = f"{row['runner']:9s} rf={rf} ok={row.get('ok')} records/s={row.get('records_per_s', 0):,.0f}"
        if "ratio_to_mockafka" in row:
            line += f" ratio_to_mockafka={row['ratio_to_mockafka']:.3f}"
        if row.get("error"):
            line += f" error={row['error']}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
