"""Calls to an interface that nothing serves fail at once, not at their deadline: the gateway's
and every flow processor's (the agent's tools, prompt-template's LLM).

A flow blueprint names interfaces (embeddings, graph-rag, structured-query,
...) whether or not a processor of the stack serves them, and a request on a
non-persistent topic that nobody consumes is dropped without a word: before,
such a call waited for the gateway's 120 s deadline.  Only the broker knows
who consumes what, and it tells through the ``pulsar_consumers_count`` gauge
(``broker_consumers.py``), refreshed every 5 s by pulsar-lite and every
``statsUpdateFrequencyInSecs`` by Apache Pulsar.

So, when the gateway has ``--pulsar-admin-url``, :class:`UnservedTopics`
reads the gauge every :data:`POLL` seconds, and a request topic counts as
unserved once every reading for :data:`GRACE` seconds showed it without a
consumer: a processor that has just started, or is being restarted, is not
refused because of a stale gauge.  The grace of a topic that no reading
showed served starts at the first reading that lists it: the broker lists a
topic as soon as a consumer subscribes, with the count 0 until its next
refresh (up to 5 s later), so a tool service started while the stack runs
was refused as "nothing serves" by a gateway that had been reading for
longer than the grace.  A topic no reading lists (nothing ever opened it:
a route to a service this stack does not run) counts from the first
reading.  Without the URL, or while the metrics cannot be read, nothing is
refused (calls keep their deadlines).

The gauge lags: a processor that subscribes is counted only at the broker's
next refresh.  So a topic that had no consumer for longer than the grace (the
LLM service loading its model while the prompt service's producer already
listed its topic) was refused for a few seconds after its processor had
started serving it: the first question after ``tg-launch`` said "ready".
Processors of ours say when they start serving a topic (``ServingStarted``,
``lost_calls``), and a topic heard so counts as served from then on, for the
grace at least; upstream's processors do not say it, and wait for the gauge.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import aiohttp

from .broker_consumers import BrokerStatsError, fetch_consumer_counts, topic_key

logger = logging.getLogger(__name__)

#: Seconds between two readings of the broker's gauge.
POLL = 2.0
#: Seconds a topic must have had no consumer in every reading before calls to it are refused:
#: two of pulsar-lite's 5 s refreshes and a margin.
GRACE = 12.0


class UnservedTopics:
    """Which request topics have had no consumer for a while, as the broker counts them."""

    def __init__(self, admin_url: str | None) -> None:
        self.admin_url = admin_url
        self._since: float | None = None          # readings have succeeded without a gap since
        self._read_at = 0.0                        # the last good reading
        self._counts: dict[str, int] = {}
        self._served_at: dict[str, float] = {}     # topic key -> last reading that showed a consumer
        self._listed_at: dict[str, float] = {}     # topic key -> first reading that listed it
        self._task: asyncio.Task | None = None

    def start(self, calls: Any = None) -> None:
        """Read the gauge; with ``calls`` (a ``PubSub``'s ``CallWatch``), also hear the processors
        of ours that say they now serve a topic (:meth:`heard`)."""
        if self.admin_url and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._poll())
            if calls is not None:
                calls.on_serving(self.heard)

    def heard(self, topic: str, now: float | None = None) -> None:
        """A processor said it now serves ``topic``: count it served from ``now``, so a call made
        before the gauge's next refresh shows the new consumer is not refused."""
        self._served_at[topic_key(topic)] = time.monotonic() if now is None else now

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _poll(self) -> None:
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    counts = await fetch_consumer_counts(session, self.admin_url, timeout=POLL)
                except BrokerStatsError as e:
                    if self._since is not None:
                        logger.info("Broker metrics unreadable (%s): no interface is refused meanwhile", e)
                    self._since = None
                else:
                    self.take(counts, time.monotonic())
                await asyncio.sleep(POLL)

    def take(self, counts: dict[str, int], now: float) -> None:
        """One reading of the gauge (``{tenant/namespace/name: consumers}``) made at ``now``."""
        if self._since is None:
            self._since = now
        self._read_at = now
        self._counts = counts
        for key, n in counts.items():
            self._listed_at.setdefault(key, now)
            if n > 0:
                self._served_at[key] = now

    def unserved(self, topic: str, now: float | None = None) -> bool:
        """True when ``topic`` has had no consumer in every reading of the last :data:`GRACE` s."""
        now = time.monotonic() if now is None else now
        if self._since is None or now - self._read_at > 3 * POLL:
            return False  # no recent reading: say nothing
        key = topic_key(topic)
        if self._counts.get(key, 0) > 0:
            return False
        seen = max(self._served_at.get(key, self._listed_at.get(key, self._since)), self._since)
        return now - seen >= GRACE

    def why(self, topic: str, now: float | None = None) -> str | None:
        """What a caller is told when :meth:`unserved` is true for ``topic`` (else None):
        the ``unserved`` hook of a :class:`~trustgraph.base.messaging.request_response.RequestResponseClient`."""
        if not self.unserved(topic, now):
            return None
        return (f"nothing serves {topic}: the broker has counted no consumer there for {GRACE:.0f} s "
                f"(is the processor that serves it running?)")
