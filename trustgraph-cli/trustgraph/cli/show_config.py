"""Shows the whole configuration and its version."""

from __future__ import annotations

import json

from trustgraph.base.command_line import api_from_args, main_wrapper, make_parser

PROG = "tg-show-config"


def run(argv: list[str] | None = None) -> None:
    parser = make_parser(PROG, __doc__)
    args = parser.parse_args(argv)

    reply = api_from_args(args).config({"operation": "config"})

    print(f"Version: {reply.get('version', 0)}")
    print(json.dumps(reply.get("config") or {}, indent=4))


def main(argv: list[str] | None = None) -> None:
    main_wrapper(PROG, lambda: run(argv))


if __name__ == "__main__":
    main()
