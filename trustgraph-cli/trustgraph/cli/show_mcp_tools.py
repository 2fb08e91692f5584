"""Shows the MCP server tools in config (type ``mcp``): id, remote name, URL, whether a token is set.

The token itself is never printed.
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.command_line import api_from_args, config_values, main_wrapper, make_parser
from trustgraph.cli.table import render_table

PROG = "tg-show-mcp-tools"


def entry_rows(key: str, raw: str) -> list[tuple[str, str]]:
    try:
        data: Any = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return [("id", key), ("problem", "not a JSON object")]
    rows = [("id", key), ("remote-name", str(data.get("remote-name") or key)), ("url", str(data.get("url", "")))]
    rows.append(("auth", "Yes (configured)" if data.get("auth-token") else "No"))
    if data.get("transport"):
        rows.append(("transport", str(data["transport"])))
    if data.get("imported-from"):
        rows.append(("imported from", str(data["imported-from"])))
    return rows


def run(argv: list[str] | None = None) -> None:
    args = make_parser(PROG, __doc__).parse_args(argv)
    entries = config_values(api_from_args(args), "mcp")
    if not entries:
        print("No MCP tools.")
    for key in sorted(entries):
        print()
        print(render_table(entry_rows(key, entries[key])))
    print()


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
