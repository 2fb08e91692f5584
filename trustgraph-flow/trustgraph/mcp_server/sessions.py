"""MCP sessions: how long an idle one lives, how many there are, and which one goes when there are too many.

Before, mcp-server's sessions never expired and had no cap (6,000 sessions
took 218 MB; a session idle for 24 minutes still worked): the MCP SDK before
2.2 kept a session until its client sent ``DELETE``, which most clients never
do.  The SDK (2.2 on, our floor) now ends a session that has had nothing in
flight (no request being served, no open ``GET`` stream) for
``session_idle_timeout`` and refuses, with a 503, a session beyond
``max_sessions``; mcp-server sets both (``--session-idle-timeout``, 30 minutes
as the SDK's and the Ruby SDK's default; ``--max-sessions``, 1,000, about
36 MB of sessions).

A cap that only refuses lets abandoned sessions lock new clients out until
they expire.  So :class:`SessionKeeper`, in front of the SDK's app, keeps the
sessions in the order they were last used, and when an opening request finds
the cap reached it ends the least recently used idle session (with the
protocol's own ``DELETE``), as the C# SDK does with its idle sessions and
nginx with its idle connections.  That session's client gets a 404 at its
next request and opens a new session, as the MCP spec says it must (our
``McpConnection`` does, and sends the call again).  A session with a request
in flight or an open stream is never ended for room; when every session is
busy, the SDK's 503 ("Too many open sessions") refuses the new one.

A 2026-07-28 request has no session and opens none (``revisions.py``), so it
goes straight to the SDK: it never ends a session to make room.  (Before, every
such request at the cap ended an idle session of the older era's clients.)
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from trustgraph.base.safety.connections import Summarised

from .revisions import header, is_modern

logger = logging.getLogger(__name__)

#: Seconds a session may have nothing in flight before it ends (the SDK's default too).
SESSION_IDLE_TIMEOUT = 30 * 60.0
#: Sessions held at most.
MAX_SESSIONS = 1000

_SESSION_HEADER = b"mcp-session-id"


@dataclass
class _Session:
    in_flight: int = 0
    last_used: float = 0.0  # monotonic, when its last request ended


class SessionKeeper:
    """An ASGI app in front of the SDK's: the sessions it opened, last used last, and room made
    for a new one by ending the least recently used idle session."""

    def __init__(
        self, app: Any, *, max_sessions: int = MAX_SESSIONS, idle_timeout: float = SESSION_IDLE_TIMEOUT
    ) -> None:
        self.app = app
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._said = Summarised(logger)
        #: Sessions ended to make room, since start (for tests and figures).
        self.ended_for_room = 0

    def __len__(self) -> int:
        return len(self._sessions)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or is_modern(scope):
            await self.app(scope, receive, send)
            return
        sid = header(scope, _SESSION_HEADER)
        if sid is None:
            if scope.get("method") == "POST":
                await self._make_room(scope)
            await self._opening(scope, receive, send)
            return
        session = self._sessions.get(sid)
        if session is None:  # not one of ours (any more): the SDK answers it (404)
            await self.app(scope, receive, send)
            return
        session.in_flight += 1
        status = 0

        async def watch(message: dict[str, Any]) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status") or 0)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.last_used = time.monotonic()
            if status == 404 or (scope.get("method") == "DELETE" and status < 400):
                self._sessions.pop(sid, None)  # expired in the SDK, or ended by its client
            elif sid in self._sessions:
                self._sessions.move_to_end(sid)

    async def _opening(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """A request without a session: note the session it opens, if it opens one."""
        opened: list[str] = []

        async def watch(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start" and int(message.get("status") or 0) < 400:
                sid = header(message, _SESSION_HEADER)
                if sid is not None:
                    opened.append(sid)
                    self._sessions[sid] = _Session(in_flight=1)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            for sid in opened:
                session = self._sessions.get(sid)
                if session is not None:
                    session.in_flight -= 1
                    session.last_used = time.monotonic()

    async def _make_room(self, scope: dict[str, Any]) -> None:
        """At the cap, end idle sessions, least recently used first, until one more fits."""
        now = time.monotonic()
        while len(self._sessions) >= self.max_sessions:
            sid = next((s for s, v in self._sessions.items() if v.in_flight == 0), None)
            if sid is None:
                return  # every session busy: the SDK refuses the new one (503)
            session = self._sessions.pop(sid)
            if now - session.last_used >= self.idle_timeout:
                continue  # the SDK has already ended it
            await self._end(scope, sid)
            self.ended_for_room += 1
            self._said(
                f"MCP sessions at their limit of {self.max_sessions:,}: the least recently used idle "
                "one was ended to make room for a new one (its client opens another when it returns)"
            )

    async def _end(self, scope: dict[str, Any], sid: str) -> None:
        """End session ``sid`` as its client would: a ``DELETE`` through the SDK's app."""
        headers = [(k, v) for k, v in scope.get("headers") or [] if k in (b"host", b"origin")]
        headers.append((_SESSION_HEADER, sid.encode("latin-1")))
        request = dict(scope, method="DELETE", headers=headers, query_string=b"")
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}

        status = 0

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status") or 0)

        await self.app(request, receive, send)
        logger.debug("Session %s ended to make room (HTTP %d)", sid[:64], status)

