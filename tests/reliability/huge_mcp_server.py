"""A hostile MCP server for the scenarios: it answers ``tools/call`` with as many megabytes as asked.

Run as a process: ``python huge_mcp_server.py PORT [--sse]``.  It speaks just
enough Streamable HTTP (``initialize``, notifications, ``tools/list``,
``tools/call``) for the official SDK's client, and writes the result of its
one tool, ``huge(megabytes)``, as it goes (a JSON body, or one server-sent
event with ``--sse``), never holding it whole: what a client does with 100 MB
is the client's memory, not this server's.
"""

from __future__ import annotations

import argparse
import json

from aiohttp import web

CHUNK = b"x" * 65536
TOOL = {"name": "huge", "description": "Answers with as many megabytes as asked.",
        "inputSchema": {"type": "object", "properties": {"megabytes": {"type": "number"}},
                        "required": ["megabytes"]}}


def _answer(rid: object, result: dict) -> web.Response:
    return web.json_response({"jsonrpc": "2.0", "id": rid, "result": result},
                             headers={"mcp-session-id": "huge-session"})


async def _huge(request: web.Request, rid: object, megabytes: float, sse: bool) -> web.StreamResponse:
    size = int(megabytes * 1024 * 1024)
    head = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "@"}]}})
    before, after = head.split("@")
    response = web.StreamResponse(headers={"content-type": "text/event-stream" if sse else "application/json",
                                           "mcp-session-id": "huge-session"})
    await response.prepare(request)
    try:
        await response.write((b"event: message\ndata: " if sse else b"") + before.encode())
        left = size
        while left > 0:
            await response.write(CHUNK[:min(left, len(CHUNK))])
            left -= len(CHUNK)
        await response.write(after.encode() + (b"\n\n" if sse else b""))
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass   # the client stopped reading: what this server is for
    return response


def app(sse: bool) -> web.Application:
    async def mcp(request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return web.Response(status=405)
        message = await request.json()
        method, rid = message.get("method"), message.get("id")
        if rid is None:
            return web.Response(status=202)
        if method == "initialize":
            version = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
            return _answer(rid, {"protocolVersion": version, "capabilities": {"tools": {}},
                                 "serverInfo": {"name": "huge", "version": "1"}})
        if method == "tools/list":
            return _answer(rid, {"tools": [TOOL]})
        if method == "tools/call":
            megabytes = float(((message.get("params") or {}).get("arguments") or {}).get("megabytes", 1))
            return await _huge(request, rid, megabytes, sse)
        if method == "ping":
            return _answer(rid, {})
        return web.json_response({"jsonrpc": "2.0", "id": rid,
                                  "error": {"code": -32601, "message": f"no method {method}"}})

    application = web.Application(client_max_size=1024 * 1024)
    application.router.add_route("*", "/mcp", mcp)
    return application


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("--sse", action="store_true")
    args = p.parse_args()
    web.run_app(app(args.sse), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
