"""What a client may hold of a server of ours: connections, idle time, and how fast a request must come.

The api-gateway and mcp-server are public-facing HTTP servers.  Before, the
gateway had no idle, header or body timeouts: about 20,000 idle TCP
connections, no token needed, reached its 20,000-file limit and every
request failed from then on; asyncio logged a traceback for each accept that
failed (145 MB in two minutes); a client sending its headers or its body a
byte at a time was held for as long as it liked.  A server's HTTP side keeps
its connections in one :class:`ConnectionGuard`, fed by a thin adapter for
its HTTP library (``trustgraph.gateway.connections`` for aiohttp,
``trustgraph.mcp_server.connections`` for uvicorn):

* **a cap below the file limit** (:func:`connection_cap`, ``--max-connections``):
  a connection beyond it closes the connection idle for longest (no request
  in progress: before its first request, between two, or still sending its
  headers), as nginx reuses its idle keep-alive connections when it runs
  short, so idle sockets cannot lock a real client out; only when every
  connection has a request in progress is the new one refused, with a 503
  that says so;
* **idle time**: a connection with no request in progress for
  ``idle_timeout`` seconds is closed (``--idle-timeout``);
* **headers**: once a request's first bytes arrive, its headers must be
  complete within ``header_timeout`` seconds (``--header-timeout``);
* **bodies** (:class:`BodyPace`): a body must keep arriving at
  :data:`BODY_MIN_RATE` once :data:`BODY_GRACE` seconds have passed.

A connection with a request in progress (an agent dialog of minutes, a
websocket with its heartbeats) is never closed by any of these: only its
body read is paced.

:func:`quiet_accept_errors`: when accepting fails for want of file
descriptors, asyncio logs a traceback for every attempt, and each tick
retries the listening socket's whole backlog (128 tracebacks a tick); one
line a minute says it instead.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

logger = logging.getLogger(__name__)

#: Connections a server holds at most, unless ``--max-connections`` says otherwise.
MAX_CONNECTIONS = 4096
#: Seconds a connection may go without a request in progress (before its first request too).
IDLE_TIMEOUT = 60.0
#: Seconds a request's headers may take once its first bytes arrived.
HEADER_TIMEOUT = 10.0
#: Seconds a request body may take before it is held to :data:`BODY_MIN_RATE`.
BODY_GRACE = 20.0
#: Bytes per second a request body must average after :data:`BODY_GRACE`.
BODY_MIN_RATE = 32 * 1024
#: File descriptors kept for everything but client connections, at most half the limit: the
#: process's own (the broker's connections, logs, the metrics server, outgoing HTTP: about 40),
#: and a burst of accepts, which holds up to two listen backlogs (128 each) of sockets before the
#: guard has seen, or closed, any of them.
FD_RESERVE = 384
#: The soft file limit a server raises itself to, when its hard limit allows.
FD_CEILING = 65536
#: Seconds between two log lines about the same trouble (a full server, failing accepts).
LOG_EVERY = 60.0
#: Seconds between two sweeps for idle connections and late headers.
SWEEP_EVERY = 1.0

# The errors accept() fails with when the process or the system is out of descriptors or memory:
# asyncio then logs a traceback for each and retries.
_ACCEPT_SHORTAGES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class Summarised:
    """A log line said at most once per ``interval`` seconds; a later one says how many were
    left out meanwhile.  For trouble that can happen thousands of times a second."""

    def __init__(
        self, log: logging.Logger, interval: float = LOG_EVERY, level: int = logging.WARNING
    ) -> None:
        self.log = log
        self.interval = interval
        self.level = level
        self._next = 0.0
        self._held = 0

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now < self._next:
            self._held += 1
            return
        more = f" ({self._held:,} more like it since the last such line)" if self._held else ""
        self.log.log(self.level, "%s%s", text, more)
        self._held = 0
        self._next = now + self.interval


class Guarded(Protocol):
    """A connection a :class:`ConnectionGuard` keeps: it can be closed at once."""

    def close_now(self) -> None: ...


@dataclass(frozen=True)
class ServerLimits:
    """The limits of one server's connections, as its flags give them (:func:`add_limit_arguments`)."""

    max_connections: int = MAX_CONNECTIONS
    idle_timeout: float = IDLE_TIMEOUT
    header_timeout: float = HEADER_TIMEOUT

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ServerLimits:
        """The limits among a processor's parameters (flags not given: the defaults)."""
        return cls(
            max_connections=int(params.get("max_connections") or MAX_CONNECTIONS),
            idle_timeout=float(params.get("idle_timeout") or IDLE_TIMEOUT),
            header_timeout=float(params.get("header_timeout") or HEADER_TIMEOUT),
        )


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of :class:`ServerLimits`, the same on every server of ours."""
    parser.add_argument(
        "--max-connections",
        type=positive_count,
        default=MAX_CONNECTIONS,
        help="client connections held at most (default %(default)s, and always below the "
        "process's open-file limit); beyond it the longest idle one is closed, or the "
        "new one refused with a 503 when every one has a request in progress",
    )
    parser.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        default=IDLE_TIMEOUT,
        help="seconds a connection may stay open without a request in progress (default %(default)s)",
    )
    parser.add_argument(
        "--header-timeout",
        type=positive_seconds,
        default=HEADER_TIMEOUT,
        help="seconds a request's headers may take to arrive (default %(default)s)",
    )


def positive_count(text: str) -> int:
    """An argparse ``type``: a whole number above 0, else a one-line usage error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text}")
    return value


def positive_seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds above 0, else a one-line usage error."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def raise_file_limit(ceiling: int = FD_CEILING) -> int | None:
    """Raise this process's soft limit on open files towards its hard limit (at most
    ``ceiling``), as Go's runtime does at start, and return the soft limit now (None: no limit,
    or no way to read it)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = ceiling if hard == resource.RLIM_INFINITY else min(hard, ceiling)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as e:
            logger.debug("Open-file limit left at %d: %s", soft, e)
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def connection_cap(wanted: int) -> int:
    """How many client connections a server may hold: ``wanted``, but always below the
    process's file limit (raised first, :func:`raise_file_limit`) by a reserve for its other
    descriptors, so that accepting never fails for want of one."""
    limit = raise_file_limit()
    if limit is None:
        return wanted
    reserve = min(FD_RESERVE, limit // 2)
    return max(1, min(wanted, limit - reserve))


class ConnectionGuard:
    """The open connections of one server: their cap, idle time and header deadline.

    The adapter of a server tells it each connection's events: :meth:`opened`
    (False: refuse it), :meth:`receiving` (bytes arrived), :meth:`started` and
    :meth:`finished` (a request in progress, from the headers read to the
    response written), :meth:`closed`.  A connection with no request in
    progress is *idle*; idle ones are kept in the order they became idle, so
    the one to close, for time or for room, is always the first.
    """

    def __init__(self, name: str, limits: ServerLimits, *, cap: int | None = None) -> None:
        """``name``: the server, as log lines say it; ``cap``: the connections held at most
        (default: :func:`connection_cap` of ``limits.max_connections``)."""
        self.name = name
        self.limits = limits
        self.cap = cap if cap is not None else connection_cap(limits.max_connections)
        self._idle: OrderedDict[Guarded, float] = OrderedDict()  # idle since (monotonic)
        self._receiving: OrderedDict[Guarded, float] = OrderedDict()  # idle, headers begun at
        self._busy: dict[Guarded, int] = {}  # requests in progress
        self._task: asyncio.Task | None = None
        self._room_said = Summarised(logger)
        self._refusal_said = Summarised(logger)
        #: Counts since start, for tests and figures.
        self.made_room = 0
        self.refused = 0
        self.timed_out = 0

    def __len__(self) -> int:
        return len(self._idle) + len(self._busy)

    def start(self) -> None:
        """Begin sweeping for idle connections and late headers (in the running loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._sweeping())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    def opened(self, conn: Guarded) -> bool:
        """A connection was accepted; False: it is one too many (every other is busy), refuse it."""
        if len(self) >= self.cap:
            if not self._idle:
                self.refused += 1
                self._refusal_said(
                    f"{self.name}: every one of its {self.cap:,} connections has a request in "
                    "progress; a new connection was refused (503). Raise --max-connections if "
                    "this load is expected"
                )
                return False
            oldest, _ = self._idle.popitem(last=False)
            self._receiving.pop(oldest, None)
            self.made_room += 1
            self._room_said(
                f"{self.name}: at its limit of {self.cap:,} connections; the longest idle one was "
                "closed to make room for a new one"
            )
            oldest.close_now()
        self._idle[conn] = time.monotonic()
        return True

    def receiving(self, conn: Guarded) -> None:
        """Bytes arrived on ``conn``: on an idle one they begin a request, whose headers now have
        ``header_timeout`` seconds."""
        if conn in self._idle and conn not in self._receiving:
            self._receiving[conn] = time.monotonic()

    def started(self, conn: Guarded) -> None:
        """A request on ``conn`` is in progress (its headers were read)."""
        if conn in self._idle:
            del self._idle[conn]
            self._receiving.pop(conn, None)
            self._busy[conn] = 1
        elif conn in self._busy:
            self._busy[conn] += 1

    def finished(self, conn: Guarded) -> None:
        """A request on ``conn`` is over (its response written, or it failed)."""
        n = self._busy.get(conn)
        if n is None:
            return
        if n > 1:
            self._busy[conn] = n - 1
        else:
            del self._busy[conn]
            self._idle[conn] = time.monotonic()

    def closed(self, conn: Guarded) -> None:
        """``conn`` is closed, by either side."""
        self._idle.pop(conn, None)
        self._receiving.pop(conn, None)
        self._busy.pop(conn, None)

    def sweep(self, now: float | None = None) -> int:
        """Close what was idle for ``idle_timeout`` and headers begun ``header_timeout`` ago;
        how many were closed."""
        now = time.monotonic() if now is None else now
        late: list[Guarded] = []
        idle_before = now - self.limits.idle_timeout
        while self._idle:
            conn, since = next(iter(self._idle.items()))
            if since > idle_before:
                break
            del self._idle[conn]
            self._receiving.pop(conn, None)
            late.append(conn)
        headers_before = now - self.limits.header_timeout
        while self._receiving:
            conn, since = next(iter(self._receiving.items()))
            if since > headers_before:
                break
            del self._receiving[conn]
            self._idle.pop(conn, None)
            late.append(conn)
        for conn in late:
            conn.close_now()
        if late:
            self.timed_out += len(late)
            logger.debug("%s: closed %d connection(s) idle or sending headers too long", self.name, len(late))
        return len(late)

    async def _sweeping(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            try:
                self.sweep()
            except Exception:  # a connection's close failing must not end the sweeping
                logger.exception("%s: sweeping idle connections failed", self.name)


@dataclass(frozen=True)
class BodyPace:
    """How fast a request body must arrive: within ``grace`` seconds plus one second per
    ``min_rate`` bytes received (a byte-a-second body is cut; a slow link is not).  Only the
    time spent waiting for the body counts: not the server's own work between two reads."""

    grace: float = BODY_GRACE
    min_rate: float = BODY_MIN_RATE

    def time_left(self, waited: float, received: int) -> float:
        """Seconds the next bytes may take, ``received`` bytes having come in ``waited`` seconds
        of waiting for them."""
        return self.grace + received / self.min_rate - waited

    def describe(self) -> str:
        return f"a body must arrive within {self.grace:g} s plus 1 s per {self.min_rate / 1024:g} KiB"


class BodyTooSlow(Exception):
    """A request body did not keep to its :class:`BodyPace`."""

    def __init__(self, received: int, seconds: float, pace: BodyPace) -> None:
        super().__init__(
            f"Request body too slow: {received:,} byte(s) in {seconds:.1f} s, where {pace.describe()}; "
            "send the whole body at once"
        )
        self.received = received


def quiet_accept_errors(
    loop: asyncio.AbstractEventLoop, what: str, state: Callable[[], str] | None = None
) -> None:
    """Make ``loop`` say a failing accept in one line a minute instead of a traceback each time.

    ``what``: the server, as the line names it; ``state``: more words for the line (e.g. its
    connections and limits).  Every other exception the loop reports goes to the handler it
    had before (the default one: a traceback).
    """
    previous = loop.get_exception_handler()
    said = Summarised(logger)

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if "socket" in context and isinstance(exc, OSError) and exc.errno in _ACCEPT_SHORTAGES:
            extra = f"; {state()}" if state is not None else ""
            said(f"{what} cannot accept connections: {exc.strerror or exc}{extra} (retried every second)")
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def busy_response(body: bytes) -> bytes:
    """The whole HTTP response a connection beyond the cap gets before it is closed: 503, JSON
    ``body``, ``Retry-After``, and the connection closed (written raw: no request was read)."""
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Retry-After: 5\r\nConnection: close\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n" + body)
