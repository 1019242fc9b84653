"""The state-change log: one structlog event per state change, with bound context.

Mirrors kafka.controller.StateChangeLogger: Kafka writes controller and broker state changes
to a dedicated ``state.change.logger``. Here each change is one structlog event whose bound
context carries broker_id / controller_id / controller_epoch / topic_partition / leader_epoch,
so tests can capture them (``structlog.testing.capture_logs``) and the demo can narrate them.
Keep these calls off per-record paths.
"""

from __future__ import annotations

import logging
from typing import Any

import structlog

_configured = False


def _drop(_logger: Any, _name: str, _event: dict) -> Any:
    raise structlog.DropEvent


def configure_logging(level: int = logging.INFO, output: str | None = None) -> None:
    """Configure structlog: level filter, context vars merged, then ``output``.

    ``output`` is None (events are built but not printed: the default, so tests can capture
    them with ``structlog.testing.capture_logs`` without noise), ``"console"`` or ``"json"``.
    """
    global _configured
    renderer: Any
    if output == "json":
        renderer = structlog.processors.JSONRenderer()
    elif output == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = _drop
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=False,
    )
    _configured = True


def state_change_logger(**context: Any) -> Any:
    """Mirrors kafka.controller.StateChangeLogger: a logger bound to the given context."""
    if not _configured:
        configure_logging()
    return structlog.get_logger("state.change.logger").bind(**context)
