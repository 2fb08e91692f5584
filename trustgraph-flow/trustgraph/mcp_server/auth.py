"""Bearer-token auth in front of the MCP endpoint.

The SDK's own auth is OAuth (a token verifier, resource metadata); a
deployment of ours has shared secrets: the gateway's (``GATEWAY_SECRET``)
and mcp-server's own (``MCP_SERVER_TOKEN``), either of which opens the MCP
endpoint when set.  A request without ``Authorization: Bearer <token>`` of
one of them is answered 401 before it reaches the MCP session manager.
Each comparison is exact and takes constant time (``secrets.tokens_match``:
not even the length leaks; every token is compared, so which one matched
does not show either), and neither the expected nor the offered token is
logged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from trustgraph.base.safety.secrets import tokens_match

Asgi = Callable[[dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def bearer_only(app: Asgi, *tokens: str) -> Asgi:
    """``app`` behind a check of the ``Authorization`` header against any of ``tokens``
    (HTTP requests only; lifespan passes)."""
    expected = [t.encode() for t in tokens if t]
    if not expected:
        raise ValueError("bearer_only needs at least one token")

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            offered = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, given = offered.partition(b" ")
            matches = [tokens_match(given, e) for e in expected]   # all compared, in constant time each
            if scheme != b"Bearer" or not any(matches):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="trustgraph-mcp"')]})
                await send({"type": "http.response.body",
                            "body": b'{"error": "unauthorized: send Authorization: Bearer <token>"}'})
                return
        await app(scope, receive, send)

    return guarded
