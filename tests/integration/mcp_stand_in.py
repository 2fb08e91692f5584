"""A real MCP server for the tests, written with the official SDK (``MCPServer``), on 127.0.0.1.

Run as a process: ``python mcp_stand_in.py PORT [--token T] [--transport sse] [--revision R]``.

Tools:

* ``lookup(city)``: structured content ``{"city", "temp"}``; annotated read-only, idempotent and
  open-world (MCP's hints);
* ``shout(text)``: plain text (no structured content), upper-cased;
* ``fail(reason)``: raises ``ToolError(reason)``, so the result is flagged ``isError``;
* ``slow(seconds)``: answers after ``seconds`` (a server that is slow to answer);
* ``sessions()``: how many MCP sessions the server has seen (clients that keep one show 1);
* ``grow(name)``: adds a tool ``name`` (it answers ``"<name> ok"``) and tells every
  connected client that the tool list changed;
* ``forget(key)``: answers ``"forgot <key>"``; annotated destructive and not idempotent, with
  no ``readOnlyHint`` (a hint the server does not give).

With ``--token`` every HTTP request needs ``Authorization: Bearer <token>``
(else 401), as a server behind a gateway would.

The SDK serves both eras of MCP at once and cannot be limited to one, so
``--revision`` puts a front before it that answers the other era as a server
of one era answers it: ``2025-11-25`` refuses a 2026-07-28 request (one with
a 2026 ``MCP-Protocol-Version`` header, ``server/discover`` among them) with
the 400 "Bad Request: Missing session ID" the 2025-era SDK (mcp 1.30) sends;
``2026-07-28`` refuses the ``initialize`` handshake with the -32022
UnsupportedProtocolVersion error naming only 2026-07-28, as the SDK's own
2026-only connection does.  ``both`` (the default) is the SDK as it is.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
from typing import TypedDict

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

SESSIONS: dict[str, object] = {}   # Mcp-Session-Id -> its latest session, to notify every client


async def remember_sessions(ctx, call_next):
    sid = ctx.request.headers.get("mcp-session-id") if ctx.request is not None else None
    if sid:
        SESSIONS[sid] = ctx.session
    return await call_next(ctx)


server = MCPServer("stand-in", log_level="WARNING", middleware=[remember_sessions])


class Weather(TypedDict):
    city: str
    temp: int


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True))
def lookup(city: str) -> Weather:
    """The weather in a city (structured)."""
    return {"city": city, "temp": 21 if city != "Oslo" else 4}


# Example questions under mcp-server's _meta key, as a server of someone else's might
# write them: the second is not a string, so tg-import-mcp-tools leaves it out.
@server.tool(structured_output=False, meta={"ai.trustgraph/examples": ["Say hello loudly", 7]})
def shout(text: str) -> str:
    """The text in capitals (plain text)."""
    return text.upper()


@server.tool()
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ToolError(reason)


@server.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Answers after ``seconds``."""
    await asyncio.sleep(seconds)
    return "finally"


@server.tool(structured_output=False)
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool and announces the change."""
    def added(text: str = "") -> str:
        return f"{name} ok"
    server.add_tool(added, name=name, description=f"The {name} tool", structured_output=False)
    for session in list(SESSIONS.values()):
        try:
            await session.send_tool_list_changed()
        except Exception:
            pass
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool(structured_output=False,
             annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False, open_world_hint=False))
def forget(key: str) -> str:
    """Forgets what is kept under ``key``."""
    return f"forgot {key}"


@server.tool(structured_output=False)
def sessions() -> str:
    """How many MCP sessions (``Mcp-Session-Id`` values) this server has seen."""
    return str(len(SESSIONS))


def bearer_only(app, token: str):
    """The app behind a bearer-token check."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)
    return guarded


def one_revision(app, revision: str):
    """The app as a server of ``revision``'s era only (see the module)."""
    async def front(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        version = headers.get(b"mcp-protocol-version", b"").decode()
        modern = version.startswith("2026")
        if revision == "2025-11-25" and modern:
            await reply(send, 400, {"jsonrpc": "2.0", "id": "server-error",
                                    "error": {"code": -32600, "message": "Bad Request: Missing session ID"}})
            return
        if revision == "2026-07-28" and not modern and b"mcp-session-id" not in headers:
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            request = json.loads(body or b"{}")
            asked = (request.get("params") or {}).get("protocolVersion", "")
            await reply(send, 400, {"jsonrpc": "2.0", "id": request.get("id"), "error": {
                "code": -32022, "message": "connection is serving the 2026-07-28 protocol; the initialize "
                "handshake is not accepted", "data": {"supported": ["2026-07-28"], "requested": asked}}})
            return
        await app(scope, receive, send)
    return front


async def reply(send, status: int, body: dict) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("--token", default=None)
    p.add_argument("--transport", default="streamable-http", choices=["streamable-http", "sse"])
    p.add_argument("--revision", default="both", choices=["both", "2025-11-25", "2026-07-28"])
    args = p.parse_args()
    app = server.sse_app() if args.transport == "sse" else server.streamable_http_app()
    if args.revision != "both":
        app = one_revision(app, args.revision)
    if args.token:
        app = bearer_only(app, args.token)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
