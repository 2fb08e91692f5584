"""Telling every connected MCP client that the tool list changed.

Two eras of the protocol, two paths:

* clients that did the ``initialize`` handshake (every SDK client today,
  IDEs, desktop assistants) get ``notifications/tools/list_changed`` on their
  session's standalone stream.  The SDK gives a handler only the session of
  the current request, so :class:`ChangeNotifier` is also a server
  middleware that remembers the latest session of each HTTP session id
  (``Mcp-Session-Id``) it has seen;
* 2026-07-28 clients open a ``subscriptions/listen`` stream instead; they
  get the event from the SDK's subscription bus (:attr:`bus`, served by the
  SDK's ``ListenHandler``).

Sessions a client ended are forgotten when a notification to them fails, and
at most :data:`MAX_SESSIONS` are kept (the oldest go first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

MAX_SESSIONS = 1000
SEND_TIMEOUT = 5.0


class ChangeNotifier:
    """Remembers the clients' sessions (as a middleware) and notifies them all of a change."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.sessions: OrderedDict[str, Any] = OrderedDict()

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        request = getattr(ctx, "request", None)
        sid = request.headers.get("mcp-session-id") if request is not None else None
        if sid and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.sessions[sid] = ctx.session
            self.sessions.move_to_end(sid)
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return await call_next(ctx)

    async def tools_changed(self) -> None:
        """Notify every known session and every listen stream; never raises."""
        with contextlib.suppress(Exception):
            await self.bus.publish(ToolsListChanged())
        for sid, session in list(self.sessions.items()):
            try:
                await asyncio.wait_for(session.send_tool_list_changed(), SEND_TIMEOUT)
            except Exception as e:   # the client went away: forget it
                logger.debug("Session %s not notified (%s); forgotten", sid, e)
                self.sessions.pop(sid, None)
