"""Waiting for a broker: how long :class:`~trustgraph.base.messaging.pubsub.PubSub` retries, and how loudly.

A processor often starts before its broker, or outlives a broker restart.
A broker client would retry by itself (pulsar-client in C++ threads that no
Ctrl-C stops, logging each attempt); instead we ask the transport whether the
broker can be reached (``Transport.problem``) first and retry opening
producers and consumers here, on tenacity, with waits that double up to a cap,
while the transport's ``retryable`` errors say the broker is away.
The first failure is one WARNING line and later ones DEBUG, so a service left
waiting for its broker stays quiet (an INFO line says when it got through), and giving up (when the next wait would
pass the connect deadline) is one :class:`~.errors.PubSubError` line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, retry_if_result, wait_exponential

from .broker_url import Hint, unreachable
from .errors import PubSubError
from .transport import BrokerRefused

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Back-off between attempts to reach the broker, and between attempts to open a
# producer or consumer on a reachable one (short: pulsar-lite's consumer-id clash
# of shared subscriptions, see DEVELOPERS.md, is resolved by the next attempt).
FIRST_DELAY = 1.0
MAX_DELAY = 30.0
OPEN_DELAYS = (0.2, 5.0)


def _doubling(first: float, most: float) -> wait_exponential:
    """``first``, then twice the last wait, up to ``most`` seconds."""
    return wait_exponential(multiplier=first, exp_base=2, max=most)


def _past(deadline: float | None) -> Callable[[RetryCallState], bool]:
    """Give up when the next wait would end after ``deadline`` (never when it is None)."""
    def stop(state: RetryCallState) -> bool:
        return deadline is not None and time.monotonic() + state.upcoming_sleep > deadline
    return stop


async def wait_for_broker(problem: Callable[[], Awaitable[str | None]], url: str, deadline: float | None,
                          hint: Hint | None = None) -> None:
    """Ask ``problem()`` (a transport's: why the broker at ``url`` cannot be reached, or None) until it
    says None; :class:`PubSubError` once ``deadline`` would pass, or at once when the broker refused
    this process (:class:`~.transport.BrokerRefused`: wrong credentials).

    ``hint``: where else to look, at the end of the "unreachable" line (:func:`~.broker_url.unreachable`).
    """
    failures = 0

    def failed(state: RetryCallState) -> None:
        nonlocal failures
        failures += 1
        problem = state.outcome.result()
        if failures == 1:
            logger.warning("%s; retrying every %g-%gs", unreachable(url, problem, hint), FIRST_DELAY, MAX_DELAY)
        else:
            logger.debug("Broker %s still unreachable: %s; retrying in %gs", url, problem,
                         state.upcoming_sleep)

    def gave_up(state: RetryCallState) -> None:
        raise PubSubError(unreachable(url, state.outcome.result(), hint))

    async def ask() -> str | None:
        try:
            return await problem()
        except BrokerRefused as e:  # credentials or permissions: no wait makes them right
            raise PubSubError(str(e)) from None

    await AsyncRetrying(wait=_doubling(FIRST_DELAY, MAX_DELAY), stop=_past(deadline),
                        retry=retry_if_result(lambda problem: problem is not None),
                        before_sleep=failed, retry_error_callback=gave_up)(ask)
    if failures:
        logger.info("Broker %s reachable after %d failed attempt%s", url, failures,
                    "" if failures == 1 else "s")


async def retry_open(what: str, fn: Callable[[], T], *, url: str, retryable: tuple[type[BaseException], ...],
                     deadline: float | None, advice: str | None = None, quiet: bool = False) -> T:
    """Run the blocking broker call ``fn`` (opening ``what``) in a thread, retrying ``retryable`` errors
    (the transport's: the broker is away or not ready yet).

    ``advice``: added to each failure's line (the transport's ``open_advice``: e.g. what a
    Pulsar URL usually looks like, when ``url`` is an http:// one).
    ``quiet``: every failed attempt at DEBUG (the caller words what giving up means).
    """
    def why(e: BaseException) -> str:
        line = f"{what} on {url} failed ({type(e).__name__}: {e})"
        return f"{line}; {advice}" if advice else line

    failures = 0

    def failed(state: RetryCallState) -> None:
        nonlocal failures
        failures += 1
        if failures == 1 and not quiet:
            logger.warning("%s; retrying", why(state.outcome.exception()))
        else:
            logger.debug("%s; retrying in %gs (attempt %d)", why(state.outcome.exception()),
                         state.upcoming_sleep, failures + 1)

    def gave_up(state: RetryCallState) -> T:
        e = state.outcome.exception()
        raise PubSubError(why(e)) from e

    first, most = OPEN_DELAYS
    result = await AsyncRetrying(wait=_doubling(first, most), stop=_past(deadline),
                                 retry=retry_if_exception_type(retryable),
                                 before_sleep=failed, retry_error_callback=gave_up)(asyncio.to_thread, fn)
    if failures:
        logger.log(logging.DEBUG if quiet else logging.INFO, "%s on %s succeeded after %d failed attempt%s",
                   what, url, failures, "" if failures == 1 else "s")
    return result
