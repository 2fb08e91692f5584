"""Topics a process can do without: the announce and probe topics, opened so that failing costs little.

Announcements are our extension: a tool service serves its requests and a
reader uses the configured descriptors whether or not they flow.  Yet on an
Apache Pulsar cluster a topic cannot be opened in a namespace that does not
exist, and upstream 2.11's topology creates only ``flow``, ``request``,
``response`` and ``notify``, not the ``tg/config`` our 2.1 defaults live in.
Opened like every other topic (retried for ever, since a service waits for its
broker), a missing namespace held a tool service's start, and an agent's or a
gateway's, for ever.  So these are opened with a short patience; failing is one
WARNING line saying that announcements are off and what to do, and then a few
quiet retries in the background (:data:`RETRY_DELAYS`, about three quarters of
an hour in all), in case someone creates the namespace meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ...topics import TopicError, parse

logger = logging.getLogger(__name__)

#: Seconds one open keeps retrying errors a later attempt may not get (the broker busy, a topic
#: moving), before announcements count as off.  Read when each open starts.
OPEN_PATIENCE = 5.0
#: Seconds before each background retry after that: bounded, so a deployment without the
#: namespace is not asked again for ever; each failure is logged at DEBUG only.
RETRY_DELAYS: tuple[float, ...] = (30.0, 60.0, 120.0, 300.0, 600.0, 600.0, 600.0)


def namespace_of(topic: str) -> str:
    """``tenant/namespace`` of ``topic`` (any form :func:`~trustgraph.topics.parse` reads)."""
    try:
        return parse(topic).namespace_path
    except TopicError:
        return topic


def what_to_do(topic: str) -> str:
    """The advice in every "announcements are off" line: make the namespace exist, or move off it."""
    return (f"create the namespace {namespace_of(topic)} (tg-init-trustgraph creates tg/config), "
            f"run it with --wire 2.11 in a 2.11 deployment (announcements on tg/notify), or point "
            f"--announce-queue and --announce-probe-queue at a namespace that exists")


def reason(e: BaseException) -> str:
    """An open's failure in a few words (pulsar-client's exceptions often have an empty message)."""
    text = str(e)
    return f"{type(e).__name__}: {text}" if text and text != type(e).__name__ else type(e).__name__


async def open_or_retry(what: str, attempt: Callable[[], Awaitable[None]],
                        off: Callable[[BaseException], None]) -> Reopening | None:
    """Run ``attempt``; when it fails, ``off(error)`` says so (the one WARNING) and a started
    :class:`Reopening` named ``what`` is returned.  None: the topics are open."""
    try:
        await attempt()
    except asyncio.CancelledError:
        raise
    except Exception as e:
        off(e)
        reopening = Reopening(what, attempt)
        reopening.start()
        return reopening
    return None


class Reopening:
    """Retries an open that failed, in the background, after each of :data:`RETRY_DELAYS`.

    ``attempt`` opens everything and raises on failure; once it succeeds ``what`` is logged at
    INFO as back on, and retrying ends.  Failures are DEBUG; giving up is one INFO line.
    """

    def __init__(self, what: str, attempt: Callable[[], Awaitable[None]],
                 delays: tuple[float, ...] | None = None) -> None:
        self.what = what
        self._attempt = attempt
        self._delays = RETRY_DELAYS if delays is None else delays
        self._task: asyncio.Task | None = None
        #: Set once an attempt succeeded (tests wait on it).
        self.reopened = asyncio.Event()
        self._wake = asyncio.Event()

    def retry_now(self) -> None:
        """Cut the current wait short (a test, once it made the namespace exist)."""
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        for n, delay in enumerate(self._delays, 1):
            try:
                await asyncio.wait_for(self._wake.wait(), delay)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._attempt()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                logger.debug("%s: retry %d of %d failed (%s)", self.what, n, len(self._delays), reason(e))
                continue
            logger.info("%s: on again after %d retr%s", self.what, n, "y" if n == 1 else "ies")
            self.reopened.set()
            return
        logger.info("%s: stays off (gave up after %d retries); restart the process once the "
                    "namespace exists", self.what, len(self._delays))

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
