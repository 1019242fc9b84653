"""Every anyio test runs on both backends in virtual time (trio MockClock, asyncio virtual loop)."""

from __future__ import annotations

import pytest
import trio.testing

from kafka_ref.testing.virtual_time_loop import VirtualTimeEventLoop


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request):
    if request.param == "trio":
        return "trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}
    return "asyncio", {"loop_factory": VirtualTimeEventLoop}


@pytest.fixture(autouse=True)
def _restore_structlog_configuration():
    """A test that reconfigures structlog (a benchmark run quiets it to WARNING) must not hide
    the events a later test captures: each test ends with the configuration it started with."""
    import structlog

    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
