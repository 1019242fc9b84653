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
