"""Asking a rate-limited backend again, the one way every service of ours and upstream's does it.

A backend that says "too many requests" (an LLM API, an embeddings API, a
vector store) raises :class:`~trustgraph.exceptions.TooManyRequests`; the
work is then tried again after a pause rather than failed, because the
limit passes and the caller would only send the same request again.  What
differs between the services is the pause, how long they keep trying, what
they log and what they count, so those are the parameters:

* our LLM services (:mod:`trustgraph.base.processors.llm_service`) try again
  for as long as the caller waits: the ``asyncio.timeout`` of the request's
  deadline around the retrying ends it, mid-pause, and :attr:`RateLimitRetry.count`
  tells them the request ended rate-limited;
* upstream 2.1.4's consumers and service bases (``trustgraph.compat.v214``)
  try every 10 s for at most two hours, or until the request's deadline:
  ``until``, at which the last TooManyRequests is raised instead of waiting
  past it, and they count each rate limit in upstream's ``rate_limit_count``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ...exceptions import TooManyRequests

logger = logging.getLogger(__name__)

__all__ = ["RateLimitRetry"]

T = TypeVar("T")


class RateLimitRetry:
    """One piece of work's tries while its backend is rate-limited.

    ``every``: seconds between a "too many requests" and the next try.
    ``until``: an absolute UNIX time (a deadline's, :mod:`.deadlines`): a try
    that would start at or after it is not made, and the last TooManyRequests
    is raised; None keeps trying, for a caller that bounds the whole with a
    timeout of its own.  ``on_limited()`` is called at each "too many
    requests", the last one included (a metric counts them).  ``message`` is
    the WARNING logged before each pause, with ``%(count)d`` (the rate limits so
    far) and ``%(every)g``, on ``log``.
    """

    def __init__(
        self,
        every: float,
        *,
        until: float | None = None,
        on_limited: Callable[[], None] | None = None,
        message: str = "Rate limited (%(count)d); trying again in %(every)gs",
        log: logging.Logger = logger,
    ) -> None:
        self.every = every
        self.until = until
        self.on_limited = on_limited
        self.message = message
        self.log = log
        #: How many times the backend said "too many requests" so far.
        self.count = 0

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """``await work()``, called again after each TooManyRequests it raises (see :meth:`wait`)."""
        while True:
            try:
                return await work()
            except TooManyRequests as e:
                await self.wait(e)

    async def wait(self, error: TooManyRequests) -> None:
        """Count ``error``, then pause until the next try; ``error`` is raised instead when the next
        try would start at or after ``until``.

        For work that decides itself whether a rate limit may be tried again
        (a stream, only before its first chunk went out), and catches it itself.
        """
        self.count += 1
        if self.on_limited is not None:
            self.on_limited()
        if self.until is not None and time.time() + self.every >= self.until:
            raise error
        self.log.warning(self.message, {"count": self.count, "every": self.every})
        await asyncio.sleep(self.every)
