"""Deletes an MCP tool entry (config item ``mcp/<id>``); one that is not there is an error.

Agent tools of type ``mcp-tool`` that name it are left in config, and the
agent leaves them out until an entry with that id exists again.
"""

from __future__ import annotations

from trustgraph.base.command_line import CliError, api_from_args, config_values, main_wrapper, make_parser

PROG = "tg-delete-mcp-tool"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    parser.add_argument("--id", required=True, help="MCP tool id to delete")
    args = parser.parse_args(argv)
    api = api_from_args(args)
    if args.id not in config_values(api, "mcp"):
        raise CliError(f"MCP tool '{args.id}' not found; nothing was deleted (tg-show-mcp-tools lists them)")
    api.config({"operation": "delete", "keys": [{"type": "mcp", "key": args.id}]})
    print(f"MCP tool '{args.id}' deleted successfully.")


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
