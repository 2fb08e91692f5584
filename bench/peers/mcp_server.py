"""The MCP alternative: the official SDK's server over Streamable HTTP, echo tool.

In mcp 2.x ``FastMCP`` is called ``MCPServer`` (same decorator API).  Runs in
the bench's own venv, on 127.0.0.1 only, with the SDK's defaults (stateful
sessions, SSE responses) as a user would start it.

Usage: ``mcp_server.py PORT``.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
