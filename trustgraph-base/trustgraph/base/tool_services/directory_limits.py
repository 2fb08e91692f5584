"""The service directory's bounds: what one announcement may hold, how much is remembered, how refusals are said.

Anything on the broker can publish on the announce topic, so a stranger's
announcements must not grow a reader's memory or its log without end
(docs/trust-model.md).  :class:`~trustgraph.base.tool_services.service_directory.ServiceDirectory`
refuses an announcement over these limits, clamps what the sender says of
its lease and clock, and says each kind of refusal once per
:data:`WARN_EVERY` seconds (:class:`ThrottledWarnings`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from ..safety import limits

# Leases outside this range are clamped: a replica cannot make itself live
# for an hour, nor flap by announcing a lease shorter than its heartbeat.
MIN_LEASE = 1.0
MAX_LEASE = 300.0
#: How long a service that went down is remembered (for fail-fast), after its last replica.
REMEMBER_DOWN = 24 * 3600.0
#: Characters of one announcement's descriptor and tools together.
MAX_ANNOUNCEMENT = 64 * 1024
#: Characters of one announced tool's description (and of each argument's).
MAX_DESCRIPTION = 2048
#: Tools one service may announce.
MAX_TOOLS = 32
#: Services remembered at once (live or known down).
MAX_SERVICES = 256
#: Replica sets (one per descriptor announced under the id) per service.
MAX_SETS = 4
#: Replicas per service, all its sets together.
MAX_REPLICAS = 64
#: Seconds between two WARNING lines about refused announcements of one kind.
WARN_EVERY = 10.0


def content_problem(tools: str) -> str | None:
    """What makes an announcement's tools too much to take (None: nothing; the catalog checks the rest)."""
    try:
        data = limits.loads(tools or "{}")
    except ValueError:
        return None  # the catalog reports malformed tools, naming the service
    if not isinstance(data, dict):
        return None
    if len(data) > MAX_TOOLS:
        return f"it offers {len(data)} tools, over the limit of {MAX_TOOLS} per service"
    for key, tool in data.items():
        if not isinstance(tool, dict):
            continue
        texts = [("tool", tool.get("description"))]
        args = tool.get("arguments")
        for arg in args if isinstance(args, list) else ():
            if isinstance(arg, dict):
                texts.append((f"argument {arg.get('name')!r} of the tool", arg.get("description")))
        for what, text in texts:
            if isinstance(text, str) and len(text) > MAX_DESCRIPTION:
                return (f"the description of {what} {key!r} is {len(text):,} characters, over the limit "
                        f"of {MAX_DESCRIPTION:,}")
    return None


def clamp_lease(lease: Any) -> float:
    """An announced lease in seconds, within :data:`MIN_LEASE` and :data:`MAX_LEASE` (not a number: the least)."""
    lease = float(lease or 0.0)
    return min(max(lease if math.isfinite(lease) else 0.0, MIN_LEASE), MAX_LEASE)


def finite(value: Any) -> float:
    """A number the sender gave (its clock), or 0.0 when it gave no finite number."""
    try:
        value = float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0
    return value if math.isfinite(value) else 0.0


class ThrottledWarnings:
    """One WARNING line per kind per :data:`WARN_EVERY` seconds on ``logger``, with how many were not said.

    The lines between go at DEBUG, so a flood of refusals costs the log one
    line per kind every few seconds and nothing is lost at DEBUG.
    """

    def __init__(self, clock: Callable[[], float], logger: logging.Logger) -> None:
        self._clock = clock
        self._logger = logger
        self._last: dict[str, tuple[float, int]] = {}

    def say(self, kind: str, message: str, *args: Any) -> None:
        now = self._clock()
        last, unsaid = self._last.get(kind, (None, 0))
        if last is None or now - last >= WARN_EVERY:
            more = f" ({unsaid} more like it since the last such line)" if unsaid else ""
            self._logger.warning(message + more, *args)
            self._last[kind] = (now, 0)
        else:
            self._last[kind] = (last, unsaid + 1)
            self._logger.debug(message, *args)
