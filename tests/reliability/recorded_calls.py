"""What a fault scenario's clients saw: each call's outcome and when, and how soon calls succeeded again.

Shared by the scenarios that kill parts of a running system under load (a stack's components, a
RabbitMQ cluster's nodes): each keeps its own way of making one call and its own outcomes, and
records them here, so "the first fresh success after t" means the same in every report.
"""

from __future__ import annotations

import asyncio
import time


class RecordedCalls:
    """Calls made until :meth:`stop`, each recorded as ``(sent, ended, outcome)`` (monotonic seconds)."""

    def __init__(self) -> None:
        self.results: list[tuple[float, float, str]] = []
        self.success = asyncio.Event()
        self._stop = False

    def record(self, sent: float, ended: float, outcome: str) -> None:
        """One call's outcome (``"ok"`` wakes :meth:`wait_fresh_success`)."""
        self.results.append((sent, ended, outcome))
        if outcome == "ok":
            self.success.set()

    def stop(self) -> None:
        self._stop = True

    def fresh_success_after(self, t: float) -> float | None:
        """Seconds from ``t`` until the first call sent at ``t`` or later succeeded, or None."""
        ends = [ended for sent, ended, outcome in self.results if outcome == "ok" and sent >= t]
        return min(ends) - t if ends else None

    async def wait_fresh_success(self, t: float, limit: float) -> float | None:
        """:meth:`fresh_success_after`, waiting up to ``limit`` seconds for it (woken by each success)."""
        deadline = time.monotonic() + limit
        while self.fresh_success_after(t) is None and time.monotonic() < deadline:
            self.success.clear()
            try:
                await asyncio.wait_for(self.success.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                break
        return self.fresh_success_after(t)
