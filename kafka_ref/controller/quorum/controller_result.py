"""The outcome of a controller operation: the records it writes and the answer for its caller.

Mirrors org.apache.kafka.controller.ControllerResult. QuorumController's writes
(kafka_ref/controller/quorum/quorum_controller.py) take one, replay and append its records, and
answer with its response once they are committed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class ControllerResult:
    """Mirrors org.apache.kafka.controller.ControllerResult: records to write and the caller's answer."""

    records: list[Any]
    response: Any
