"""An asyncio event loop whose clock is virtual.

The one module in kafka_ref allowed to import asyncio (docs/DESIGN.md §1.4). Whenever every task
is blocked and the loop would sleep until its next timer, the clock jumps to that timer
instead, so ``await anyio.sleep(30)`` returns at once with 30 s of loop time elapsed. Use it
with anyio: ``anyio.run(main, backend="asyncio", backend_options={"loop_factory":
VirtualTimeEventLoop})``. Only loop time is virtual: real sockets and threads would see time
jump, which is fine for the in-process cluster and wrong for anything else.
"""

from __future__ import annotations

import asyncio
import selectors


class _VirtualSelector:
    """A selector that never sleeps on a timeout: it advances the virtual clock instead."""

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self.now = 0.0

    def register(self, fileobj, events, data=None):  # noqa: ANN001 - selector protocol
        return self._selector.register(fileobj, events, data)

    def unregister(self, fileobj):  # noqa: ANN001
        return self._selector.unregister(fileobj)

    def modify(self, fileobj, events, data=None):  # noqa: ANN001
        return self._selector.modify(fileobj, events, data)

    def get_key(self, fileobj):  # noqa: ANN001
        return self._selector.get_key(fileobj)

    def get_map(self):
        return self._selector.get_map()

    def close(self) -> None:
        self._selector.close()

    def select(self, timeout: float | None = None):
        # 1. Anything ready right now (the loop's self-pipe, a real file) wins.
        events = self._selector.select(0)
        if events or timeout == 0:
            return events
        # 2. No timer at all: block for real (only a thread wake-up can end this).
        if timeout is None:
            return self._selector.select(None)
        # 3. Jump to the next timer.
        self.now += timeout
        return []


class VirtualTimeEventLoop(asyncio.SelectorEventLoop):
    """A SelectorEventLoop whose ``time()`` is the virtual clock of its selector."""

    def __init__(self) -> None:
        self._virtual_selector = _VirtualSelector()
        super().__init__(selector=self._virtual_selector)  # type: ignore[arg-type]

    def time(self) -> float:
        return self._virtual_selector.now


def run_in_virtual_time(main, backend: str = "trio"):  # noqa: ANN001, ANN201 - any async callable
    """Run ``main()`` with anyio on ``backend`` ("trio" or "asyncio") in virtual time; return its result."""
    import anyio

    if backend == "trio":
        import trio.testing

        return anyio.run(main, backend="trio", backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)})
    if backend == "asyncio":
        return anyio.run(main, backend="asyncio", backend_options={"loop_factory": VirtualTimeEventLoop})
    raise ValueError(f"unknown backend {backend!r}; use 'trio' or 'asyncio'")


def running_loop_is_virtual() -> bool:
    """Whether the running asyncio loop is a VirtualTimeEventLoop (real sockets need a real clock)."""
    return isinstance(asyncio.get_running_loop(), VirtualTimeEventLoop)


def default_event_loop() -> asyncio.AbstractEventLoop:
    """A new ordinary event loop from the current event-loop policy (real time), as asyncio.new_event_loop()."""
    return asyncio.new_event_loop()
