"""The kafka_ref pytest plugin (registered as a ``pytest11`` entry point).

Fixtures for a user's own pytest-asyncio / anyio suite:

- ``virtual_clock_backends``: the two virtual-time anyio backends as (name, options) pairs,
  to parametrize your own ``anyio_backend`` fixture with.
- ``kafka_cluster_factory``: an async context manager factory,
  ``async with kafka_cluster_factory(brokers=3, config={...}) as cluster: ...``.
- ``virtual_event_loop_policy``-free use with pytest-asyncio: mark a test
  ``@pytest.mark.asyncio(loop_scope="function")`` and request ``virtual_asyncio_loop``.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import trio.testing

from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop


def virtual_backends() -> list[tuple[str, dict[str, Any]]]:
    """Fresh (name, options) pairs for anyio: trio with MockClock, asyncio with our virtual loop."""
    return [
        ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}),
        ("asyncio", {"loop_factory": VirtualTimeEventLoop}),
    ]


@pytest.fixture
def virtual_clock_backends() -> list[tuple[str, dict[str, Any]]]:
    return virtual_backends()


@pytest.fixture
def kafka_cluster_factory() -> Callable[..., Any]:
    """Return ``Cluster`` itself: ``async with kafka_cluster_factory(brokers=3) as cluster``."""
    from kafka_ref.cluster import Cluster

    return Cluster
