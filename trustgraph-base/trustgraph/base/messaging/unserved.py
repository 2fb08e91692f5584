"""Calls to an interface that nothing serves fail at once, not at their deadline: the gateway's
and every flow processor's (the agent's tools, prompt-template's LLM).

A flow blueprint names interfaces (embeddings, graph-rag, structured-query,
...) whether or not a processor of the stack serves them, and a request on a
non-persistent topic that nobody consumes is dropped without a word: before,
such a call waited for the gateway's 120 s deadline.  Only the broker knows
who consumes what, and the transport asks it (``Transport.consumer_counts``:
Pulsar's reads the ``pulsar_consumers_count`` gauge, ``broker_consumers.py``,
refreshed every 5 s by pulsar-lite and every ``statsUpdateFrequencyInSecs``
by Apache Pulsar).

So, when the process's transport can count consumers (Pulsar's, given
``--pulsar-admin-url``), :class:`UnservedTopics` reads the counts every
:data:`POLL` seconds, and a request topic counts as
unserved once every reading for :data:`GRACE` seconds showed it without a
consumer: a processor that has just started, or is being restarted, is not
refused because of a stale gauge.  The grace of a topic that no reading
showed served starts at the first reading that lists it: the broker lists a
topic as soon as a consumer subscribes, with the count 0 until its next
refresh (up to 5 s later), so a tool service started while the stack runs
was refused as "nothing serves" by a gateway that had been reading for
longer than the grace.  A topic no reading lists (nothing ever opened it:
a route to a service this stack does not run) counts from the first
reading.  Without counts (no URL), or while they cannot be read, nothing is
refused (calls keep their deadlines).

The gauge lags: a processor that subscribes is counted only at the broker's
next refresh.  So a topic that had no consumer for longer than the grace (the
LLM service loading its model while the prompt service's producer already
listed its topic) was refused for a few seconds after its processor had
started serving it: the first question after ``tg-launch`` said "ready".
Processors of ours say when they start serving a topic (``ServingStarted``,
``lost_calls``), and a topic heard so counts as served from then on, for the
grace at least; upstream's processors do not say it, and wait for the gauge.

A call made during a topic's grace (a stack just started, a tool configured a
moment ago, a consumer that left) is neither refused nor sent: sent, it would
be dropped by a topic nobody consumes and wait its whole deadline (measured:
``tg-invoke-tool-service`` past 60 s, the agent 61 s).  :meth:`verdict` holds
it until the topic is judged: when a consumer appears (a reading counts one,
or its processor says it serves it) it goes, and when the grace ends without
one it fails at once, as a call made after the grace does.  One timer per
topic, however many calls wait on it.

While a tg-launch stack is starting (``starting``: a check its owner gives;
under tg-launch, one that reads the file of the stack's component states,
``launching.stack.stack_starting``), no grace runs out: a question asked as
the stack starts waits for a model that takes its time to load, however
long (within its own deadline), instead of being refused 12 s into the wait
(before any holding, it waited 90 s and ended "the model did not decide the
next step").  A topic's grace counts from the last reading taken while a
component was still starting, so a topic nothing serves is refused once the
stack is up.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from .broker_consumers import topic_key
from .transport import Transport, TransportError

logger = logging.getLogger(__name__)

#: Seconds between two readings of the broker's gauge.
POLL = 2.0
#: Seconds a topic must have had no consumer in every reading before calls to it are refused:
#: two of pulsar-lite's 5 s refreshes and a margin.
GRACE = 12.0


class UnservedTopics:
    """Which request topics have had no consumer for a while, as the broker counts them."""

    def __init__(self, transport: Transport | None, starting: Callable[[], bool] | None = None) -> None:
        """``transport``: whose ``consumer_counts`` are read once started (None, or one that cannot
        count: only the readings given to :meth:`take`, and what :meth:`heard` says);
        ``starting``: asked at each reading; while it says the stack is still starting, no
        grace runs out (see the module docstring)."""
        self.transport = transport
        self.starting = starting
        self._starting_at: float | None = None    # the last reading taken while the stack was starting
        self._since: float | None = None          # readings have succeeded without a gap since
        self._read_at = 0.0                        # the last good reading
        self._counts: Mapping[str, int] = {}
        self._served_at: dict[str, float] = {}     # topic key -> last reading that showed a consumer
        self._listed_at: dict[str, float] = {}     # topic key -> first reading that listed it
        self._heard_at: dict[str, float] = {}      # topic key -> when a processor said it serves it
        self._held: dict[str, _Held] = {}          # topic key -> the calls waiting for its verdict
        self._task: asyncio.Task | None = None

    @property
    def counting(self) -> bool:
        """Whether the transport counts consumers: else nothing is ever refused."""
        return self.transport is not None and self.transport.capabilities.consumer_counts

    def start(self, calls: Any = None) -> None:
        """Read the counts; with ``calls`` (a ``PubSub``'s ``CallWatch``), also hear the processors
        of ours that say they now serve a topic (:meth:`heard`)."""
        if self.counting and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._poll())
            if calls is not None:
                calls.on_serving(self.heard)

    def heard(self, topic: str, now: float | None = None) -> None:
        """A processor said it now serves ``topic``: count it served from ``now``, so a call made
        before the gauge's next refresh shows the new consumer is not refused (nor held)."""
        key = topic_key(topic)
        self._served_at[key] = self._heard_at[key] = time.monotonic() if now is None else now
        self._release(key)

    async def stop(self) -> None:
        for key in list(self._held):
            self._release(key)
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _poll(self) -> None:
        assert self.transport is not None
        while True:
            try:
                counts = await self.transport.consumer_counts(timeout=POLL)
            except TransportError as e:
                counts = None
                if self._since is not None:
                    logger.info("Broker metrics unreadable (%s): no interface is refused meanwhile", e)
            if counts is None:
                self._since = None
                for key in list(self._held):   # nothing can be judged: the calls go
                    self._release(key)
            else:
                self.take(counts, time.monotonic())
            await asyncio.sleep(POLL)

    def take(self, counts: Mapping[str, int], now: float) -> None:
        """One reading of the gauge (``{tenant/namespace/name: consumers}``) made at ``now``."""
        if self._since is None:
            self._since = now
        self._read_at = now
        self._counts = counts
        if self.starting is not None and self.starting():
            self._starting_at = now
        for key, n in counts.items():
            self._listed_at.setdefault(key, now)
            if n > 0:
                self._served_at[key] = now
                if key in self._held:
                    self._release(key)

    def _grace_end(self, key: str, now: float) -> float | None:
        """When (monotonic) the grace of topic ``key`` ends, if it has no consumer counted now;
        None when nothing is known (no recent reading) or a consumer is."""
        if self._since is None or now - self._read_at > 3 * POLL:
            return None  # no recent reading: say nothing
        if self._counts.get(key, 0) > 0:
            return None
        since = max(self._served_at.get(key, self._listed_at.get(key, self._since)), self._since)
        if self._starting_at is not None:
            since = max(since, self._starting_at)   # no grace runs out while the stack starts
        return since + GRACE

    def unserved(self, topic: str, now: float | None = None) -> bool:
        """True when ``topic`` has had no consumer in every reading of the last :data:`GRACE` s."""
        now = time.monotonic() if now is None else now
        end = self._grace_end(topic_key(topic), now)
        return end is not None and now >= end

    def in_grace(self, topic: str, now: float | None = None) -> bool:
        """True while ``topic`` is to be judged: no consumer counted, the grace not over, and no
        processor has said it serves the topic within the grace.  A call sent now would be
        dropped if nothing subscribes before it arrives: :meth:`verdict` holds it."""
        now = time.monotonic() if now is None else now
        key = topic_key(topic)
        end = self._grace_end(key, now)
        return end is not None and now < end and now - self._heard_at.get(key, -math.inf) >= GRACE

    async def verdict(self, topic: str, patience: float) -> str | None:
        """Why a call to ``topic`` must fail at once (:meth:`why`), or None: send it.

        A call to a topic :meth:`in_grace` waits (at most ``patience`` seconds)
        until the topic is judged: a consumer counted or heard of lets it go,
        the end of the grace without one refuses it.  The hook a
        :class:`~trustgraph.base.messaging.request_response.RequestResponseClient`
        calls before it sends a request (``unserved=``).
        """
        key = topic_key(topic)
        if patience > 0 and self.in_grace(topic):
            held = self._held.get(key)
            if held is None:
                held = self._held[key] = _Held(asyncio.get_running_loop().create_future())
                self._rejudge(key, first=True)
            try:
                await asyncio.wait_for(asyncio.shield(held.judged), patience)
            except TimeoutError:
                pass  # the caller's deadline: its own timeout says so
        return self.why(topic)

    def _rejudge(self, key: str, first: bool = False) -> None:
        """The timer of held topic ``key``: let its calls go once it is no longer in its grace
        (refused or served: they ask :meth:`why`), else wait for the grace's end, which a
        reading may have moved."""
        held = self._held.get(key)
        if held is None:
            return
        now = time.monotonic()
        end = self._grace_end(key, now)
        if end is None or now >= end or now - self._heard_at.get(key, -math.inf) < GRACE:
            self._release(key)
            return
        if first:
            logger.info("Holding calls to %s: the broker has counted no consumer there yet; they go when one "
                        "appears, or fail when its %.0f s grace ends (in %.1f s)", key, GRACE, end - now)
        held.timer = asyncio.get_running_loop().call_later(end - now, self._rejudge, key)

    def _release(self, key: str) -> None:
        held = self._held.pop(key, None)
        if held is None:
            return
        if held.timer is not None:
            held.timer.cancel()
        if not held.judged.done():
            held.judged.set_result(None)
        logger.debug("Calls held for %s go to their verdict", key)

    def why(self, topic: str, now: float | None = None) -> str | None:
        """What a caller is told when :meth:`unserved` is true for ``topic`` (else None), now: a call
        after the grace, and one held in it (:meth:`verdict`), hear the same words."""
        if not self.unserved(topic, now):
            return None
        return (f"nothing serves {topic}: the broker has counted no consumer there for {GRACE:.0f} s "
                f"(is the processor that serves it running?)")


class _Held:
    """The calls to one topic waiting for its verdict: one future they all wait on, one timer."""

    __slots__ = ("judged", "timer")

    def __init__(self, judged: asyncio.Future) -> None:
        self.judged = judged
        self.timer: asyncio.TimerHandle | None = None
