"""The official MCP SDK of the session era (mcp 1.x, ``.interop/mcp-2025``) as a server or a client.

Run with that venv's python (``interop.venvs.MCP_2025``), never ours: its SDK
speaks MCP 2024-11-05 to 2025-11-25 and nothing of 2026-07-28.

* ``mcp_2025.py server PORT``: FastMCP on 127.0.0.1:PORT/mcp with ``shout(text)`` (plain text,
  upper-cased) and ``lookup(city)`` (structured ``{"city", "temp"}``);
* ``mcp_2025.py client URL TOOL ARGUMENTS_JSON``: initialize, list the tools, call TOOL, and print
  one JSON line: the negotiated revision, the server's name, whether it offers tasks, the tools, and
  the call's text and ``isError``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TypedDict


class Weather(TypedDict):
    city: str
    temp: int


def serve(port: int) -> None:
    import uvicorn
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("session-era", log_level="WARNING")

    @server.tool(structured_output=False)
    def shout(text: str) -> str:
        """The text in capitals."""
        return text.upper()

    @server.tool()
    def lookup(city: str) -> Weather:
        """The weather in a city (structured)."""
        return {"city": city, "temp": 21 if city != "Oslo" else 4}

    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")


async def call(url: str, tool: str, arguments: dict) -> dict:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        result = await session.call_tool(tool, arguments)
        return {"revision": init.protocolVersion, "server": init.serverInfo.name,
                "tasks": init.capabilities.model_dump(exclude_none=True).get("tasks"), "tools": tools,
                "text": "".join(getattr(c, "text", "") for c in result.content), "is_error": result.isError}


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(int(sys.argv[2]))
    else:
        print(json.dumps(asyncio.run(call(sys.argv[2], sys.argv[3], json.loads(sys.argv[4])))))
