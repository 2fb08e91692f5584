"""Bearer-token auth in front of the MCP endpoint.

The SDK's own auth is OAuth (a token verifier, resource metadata); a
deployment of ours has one shared secret, as the gateway does
(``GATEWAY_SECRET``).  A request without ``Authorization: Bearer <token>``
is answered 401 before it reaches the MCP session manager.  The comparison
is exact and takes constant time (``secrets.tokens_match``: not even the
length leaks), and neither the expected nor the offered token is logged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from trustgraph.base.secrets import tokens_match

Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def bearer_only(app: Asgi, token: str) -> Asgi:
    """``app`` behind a check of the ``Authorization`` header (HTTP requests only; lifespan passes)."""
    expected = token.encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            offered = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, given = offered.partition(b" ")
            if scheme != b"Bearer" or not tokens_match(given, expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="trustgraph-mcp"')]})
                await send({"type": "http.response.body",
                            "body": b'{"error": "unauthorized: send Authorization: Bearer <token>"}'})
                return
        await app(scope, receive, send)

    return guarded
