"""Talking to MCP servers with the official SDK: connections kept open, results read one way.

* ``connection``: :class:`McpConnection`, one connection per server in the server's revision of MCP
  (2026-07-28 without a session, else a session), re-opened when it breaks;
* ``results``: what a ``CallToolResult`` means for us (text, object or a tool error);
* ``schemas``: an MCP tool's input schema as the arguments of a ``tool`` descriptor;
* ``examples``: a tool's example questions in a tool listing (mcp-server writes them, the import reads them).

Needs the ``mcp`` package (``pip install 'trustgraph-base[mcp]'``; trustgraph-flow has it).
"""
