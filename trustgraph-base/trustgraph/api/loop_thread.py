"""Running the asyncio clients from synchronous code.

A synchronous client owns one event loop on a daemon thread and hands it
coroutines, so it works the same from plain scripts, from threads, and from
inside someone else's running event loop (where ``run_until_complete``
would fail).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A private event loop on a daemon thread, started on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="trustgraph-api-loop", daemon=True).start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the loop and wait for its result (exceptions propagate)."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure()).result()

    def iterate(self, agen: AsyncIterator[T]) -> Iterator[T]:
        """An async iterator as a blocking one; leaving the loop early closes it."""
        try:
            while True:
                try:
                    yield self.run(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            aclose = getattr(agen, "aclose", None)
            if aclose is not None and self._loop is not None and not self._loop.is_closed():
                self.run(aclose())

    def close(self) -> None:
        """Stop the loop (a later call starts a new one)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
