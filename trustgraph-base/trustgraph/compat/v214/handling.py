"""How upstream 2.1.4's handlers are called: its message accessors, and its retry of a rate-limited one.

Shared by the processor surface (:mod:`.processor`'s consumers) and the
service bases (:mod:`.stores`, :mod:`.data_services`), which both run
handlers written for upstream on our consumers; it imports nothing of
theirs, so each can import it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ...base.messaging.message import Message
from ...exceptions import TooManyRequests

logger = logging.getLogger(__name__)

__all__ = ["RATE_LIMIT_RETRY", "RATE_LIMIT_TIMEOUT", "UpstreamMessage", "retry_rate_limited"]

T = TypeVar("T")

#: Upstream's consumer tries a rate-limited handler again this often (seconds) ...
RATE_LIMIT_RETRY = 10.0
#: ... for at most this long before it gives the message up.
RATE_LIMIT_TIMEOUT = 7200.0


async def retry_rate_limited(work: Callable[[], Awaitable[T]], *, every: float = RATE_LIMIT_RETRY,
                             give_up_after: float = RATE_LIMIT_TIMEOUT, deadline: float | None = None) -> T:
    """``work()``, run again every ``every`` seconds while it raises TooManyRequests.

    Upstream's processors raise it when their backend (a vector store, an
    embeddings API) says "slow down", and expect the message to be tried
    again later rather than failed.  The last TooManyRequests is re-raised
    once the next try would start after ``give_up_after`` seconds, or after
    ``deadline`` (an absolute UNIX time: the caller's, when someone waits for
    the answer).
    """
    end = time.time() + give_up_after
    if deadline is not None:
        end = min(end, deadline)
    while True:
        try:
            return await work()
        except TooManyRequests:
            if time.time() + every >= end:
                raise
            logger.warning("Rate limited; trying again in %g s", every)
            await asyncio.sleep(every)


class UpstreamMessage:
    """One of our received messages as upstream's handlers read it (pulsar-client's accessors).

    Upstream hands a handler pulsar-client's message: ``msg.value()`` is the
    record and ``msg.properties()`` the properties.  Ours carries them as
    attributes (:class:`~trustgraph.base.messaging.message.Message`).
    """

    __slots__ = ("message",)

    def __init__(self, message: Message) -> None:
        self.message = message

    def value(self) -> Any:
        return self.message.value

    def properties(self) -> dict[str, str]:
        return dict(self.message.properties)

    def topic_name(self) -> str:
        return self.message.topic
