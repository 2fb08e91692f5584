"""Stores how to reach an MCP server tool: config item ``mcp/<id>``, which ``mcp-tool`` tools name.

    tg-set-mcp-tool --id weather --tool-url http://127.0.0.1:3000/mcp
    tg-set-mcp-tool -i forecast -r get_forecast --tool-url https://mcp.example.com/mcp --auth-token "$TOKEN"

The entry is ``{"remote-name", "url"}`` plus ``auth-token`` when given (sent by
mcp-tool as ``Authorization: Bearer ...``) and, ours, ``transport`` (``sse`` for
a server that only speaks the older HTTP+SSE transport).  It is checked before
it is written, as the agent would read it.
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.command_line import CliError, api_from_args, main_wrapper, make_parser

PROG = "tg-set-mcp-tool"


def mcp_entry(url: str, remote_name: str, auth_token: str | None = None,
              transport: str | None = None) -> dict[str, Any]:
    """The ``mcp`` config value, as upstream's command writes it (plus ``transport`` when not the default)."""
    entry: dict[str, Any] = {"remote-name": remote_name, "url": url}
    if auth_token:
        entry["auth-token"] = auth_token
    if transport and transport != "streamable-http":
        entry["transport"] = transport
    return entry


def check_entry(key: str, entry: dict[str, Any]) -> None:
    """Refuse an entry the mcp-tool service could not use, in the catalog's words."""
    from trustgraph.catalog import build_catalog
    catalog = build_catalog({"mcp": {key: json.dumps(entry)}})
    if catalog.errors:
        raise CliError(f"{catalog.errors[0]}; nothing was written")


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("-i", "--id", required=True, help="MCP tool id (the key tools name as mcp-tool)")
    parser.add_argument("-r", "--remote-name", help="the tool's name on the server (default: --id)")
    parser.add_argument("--tool-url", required=True, help="the MCP server's endpoint URL")
    parser.add_argument("--auth-token", help="bearer token the server requires (optional)")
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default=None,
                        help="MCP transport (default streamable-http)")
    args = parser.parse_args(argv)
    entry = mcp_entry(args.tool_url, args.remote_name or args.id, args.auth_token, args.transport)
    check_entry(args.id, entry)
    api_from_args(args).config({"operation": "put", "values": [
        {"type": "mcp", "key": args.id, "value": json.dumps(entry)}]})
    print(f"MCP tool set: {args.id}")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
