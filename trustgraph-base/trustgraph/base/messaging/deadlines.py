"""Deadlines that travel with every request.

A caller knows how long it will wait; the service it calls does not, unless
it is told.  Every request our clients send carries the ``deadline`` message
property: the absolute UNIX time (seconds, as decimal text) after which the
caller no longer waits.  A service skips a request whose deadline has passed
before it starts it, bounds its work by what is left, and hands the same
deadline on to the services it calls in turn (the agent to the prompt
service, the prompt service to the LLM), so a dialog's whole chain gives up
together.  Without this, a service under load keeps working for callers
that have left while the callers still waiting time out behind them.

It is a message property, not a record field, so the wire records stay
upstream's: upstream peers ignore it, and a request without one is handled
as before, bounded only by the service's own limits.

Absolute times assume the machines' clocks agree (NTP keeps them within
milliseconds); on one machine they are one clock.  A deadline that cannot be
read is ignored rather than trusted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

#: The message property holding a request's deadline.
DEADLINE = "deadline"


def stamp(seconds: float, cap: float | None = None) -> str:
    """The property value for a deadline ``seconds`` from now, never after ``cap`` (an absolute
    deadline, e.g. the caller's own), rounded down to the millisecond: passed on hop after hop,
    a deadline must not creep later by a rounding or by the time spent between two clocks."""
    at = time.time() + seconds
    if cap is not None and cap < at:
        at = cap
    return f"{math.floor(at * 1000) / 1000:.3f}"


#: The HTTP header a gateway client may send its deadline in (the websocket frame's
#: ``"deadline"`` field does the same for a socket request).
HEADER = "TrustGraph-Deadline"


def parse(raw: object) -> float | None:
    """A deadline given as a number or decimal text, or None when it is not one."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def read(properties: Mapping[str, str]) -> float | None:
    """The deadline a message carries, or None (absent or unreadable)."""
    return parse(properties.get(DEADLINE))


def left(deadline: float | None, cap: float) -> float:
    """Seconds of work allowed: what is left before ``deadline``, at most ``cap``."""
    if deadline is None:
        return cap
    return min(cap, deadline - time.time())


#: Seconds a service keeps back from its caller's deadline when it bounds work whose failure it
#: must report: the error reply of work stopped at the limit still has to be sent, carried and
#: read while the caller waits.  On a loaded machine that took over half a second (mcp-tool's
#: error for a call it gave up arrived 0.57 s after, two cores four times overloaded), so a
#: margin of 0.5 s was not enough.
REPLY_MARGIN = 2.0


def for_work(deadline: float | None, cap: float) -> float:
    """Seconds the work itself may take (``left``) when its outcome, error or not, must reach the
    caller before ``deadline``: :data:`REPLY_MARGIN` less, or a fifth less of a short wait."""
    allowed = left(deadline, cap)
    return allowed if deadline is None else allowed - min(REPLY_MARGIN, max(allowed, 0.0) / 5)


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` is set and over."""
    return deadline is not None and time.time() >= deadline
