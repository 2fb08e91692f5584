"""mcp-server's connections under a :class:`~trustgraph.base.safety.connections.ConnectionGuard`.

uvicorn closes a connection idle after a response (``timeout_keep_alive``),
but holds one that never sends a request, or sends its headers a byte at a
time, for ever, and accepts until the process runs out of file descriptors
(``limit_concurrency`` answers 503 to requests, yet keeps every connection).
:func:`guarded_protocol` makes uvicorn's h11 protocol report each connection
to the guard, as the gateway's aiohttp handler does
(``trustgraph.gateway.connections``): the cap with the longest idle connection
closed to make room, the idle and header deadlines, and the body pace, read
through the ASGI ``receive`` of each request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from trustgraph.base.safety.connections import BodyPace, BodyTooSlow, ConnectionGuard, busy_response
from uvicorn.protocols.http.h11_impl import H11Protocol

logger = logging.getLogger(__name__)


def refusal(guard: ConnectionGuard) -> bytes:
    """The whole HTTP response a connection beyond the cap gets before it is closed."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32603,
                "message": f"mcp-server holds its limit of {guard.cap:,} connections, each with a request "
                "in progress: try again shortly",
            },
        }
    ).encode()
    return busy_response(body)


def guarded_protocol(guard: ConnectionGuard, pace: BodyPace = BodyPace()) -> type[H11Protocol]:
    """uvicorn's h11 protocol (its ``http=`` setting) with every connection kept by ``guard``."""

    class Guarded(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.app = _busy(self.app, guard, self, pace)
            self._refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if not guard.opened(self):
                self._refused = True
                transport.write(refusal(guard))
                transport.close()
                return
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            guard.receiving(self)
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            guard.closed(self)
            if not self._refused:
                super().connection_lost(exc)

        def close_now(self) -> None:
            """The guard's way to close this connection (idle, headers or body late)."""
            transport = getattr(self, "transport", None)
            if transport is not None:
                transport.close()

    return Guarded


def _busy(app: Any, guard: ConnectionGuard, conn: Any, pace: BodyPace) -> Any:
    """``app`` for one connection: each HTTP request marks it busy while in progress, and its
    body is read at ``pace`` (a lagging one closes the connection; the app sees a disconnect)."""

    async def call(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        waited = 0.0
        received = 0
        whole = False

        async def paced() -> dict[str, Any]:
            nonlocal waited, received, whole
            if whole:  # the body is read: what follows is the wait for a disconnect
                return await receive()
            began = loop.time()
            try:
                async with asyncio.timeout(max(pace.time_left(waited, received), 0.0)):
                    message = await receive()
            except TimeoutError:
                logger.debug(
                    "%s %s: %s",
                    scope.get("method"),
                    scope.get("path"),
                    BodyTooSlow(received, waited + loop.time() - began, pace),
                )
                conn.close_now()
                return {"type": "http.disconnect"}
            waited += loop.time() - began
            if message.get("type") == "http.request":
                received += len(message.get("body") or b"")
                whole = not message.get("more_body", False)
            return message

        guard.started(conn)
        try:
            await app(scope, paced, send)
        finally:
            guard.finished(conn)

    return call
