"""How upstream 2.1.4's handlers are called: its message accessors, its retry of a rate-limited one,
and the deadline of the request a handler works on.

Shared by the consumer (:mod:`.consumer`), the processor surface
(:mod:`.processor`) and the service bases (:mod:`.stores`,
:mod:`.data_services`), which all run handlers written for upstream on our
consumers; it imports nothing of theirs, so each can import it.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ...base.messaging.message import Message
from ...base.messaging.rate_limits import RateLimitRetry

logger = logging.getLogger(__name__)

__all__ = ["RATE_LIMIT_RETRY", "RATE_LIMIT_TIMEOUT", "UpstreamMessage", "handling_deadline", "retry_rate_limited"]

T = TypeVar("T")

#: Upstream's consumer tries a rate-limited handler again this often (seconds) ...
RATE_LIMIT_RETRY = 10.0
#: ... for at most this long before it gives the message up.
RATE_LIMIT_TIMEOUT = 7200.0

#: What each pause logs (upstream's consumer logs one line per rate limit too).
RATE_LIMIT_LOG = "Rate limited; trying again in %(every)g s"

#: The deadline of the request a handler is working on (None: its caller set none), which the
#: clients it calls inherit (:class:`.processor.RequestResponse`).
handling_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "trustgraph_v214_deadline", default=None)


async def retry_rate_limited(work: Callable[[], Awaitable[T]], *, every: float = RATE_LIMIT_RETRY,
                             give_up_after: float = RATE_LIMIT_TIMEOUT, deadline: float | None = None,
                             on_limited: Callable[[], None] | None = None) -> T:
    """``work()``, run again every ``every`` seconds while it raises TooManyRequests.

    Upstream's processors raise it when their backend (a vector store, an
    embeddings API) says "slow down", and expect the message to be tried
    again later rather than failed.  The last TooManyRequests is re-raised
    once the next try would start after ``give_up_after`` seconds, or after
    ``deadline`` (an absolute UNIX time: the caller's, when someone waits for
    the answer).  ``on_limited()`` is called at each one (upstream's
    ``ConsumerMetrics.rate_limit``).  Our one retry
    (:class:`~trustgraph.base.messaging.rate_limits.RateLimitRetry`) with upstream's defaults.
    """
    end = time.time() + give_up_after
    if deadline is not None:
        end = min(end, deadline)
    retry = RateLimitRetry(every, until=end, on_limited=on_limited, message=RATE_LIMIT_LOG, log=logger)
    return await retry.run(work)


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
